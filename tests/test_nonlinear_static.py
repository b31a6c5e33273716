"""Geometrically nonlinear statics: elastica, snap-through, Newton's convergence rate, finite
rotations, displacement control, load history across steps.

References are computed here independently of fem: the inextensible elastica by scipy's
``solve_bvp`` (it reproduces Mattiasson 1981, Table 1), the two-bar truss in closed form
(Crisfield vol. 1), finite rotations with ``scipy.spatial.transform.Rotation``.
"""

import math
from pathlib import Path

import h5py
import numpy as np
import pytest
from helpers import line_beam, node, solve
from scipy.integrate import solve_bvp
from scipy.spatial.transform import Rotation

from fem.io import deck as deck_io
from fem.run import run

CASES = Path(__file__).resolve().parents[1] / "cases"


def elastica(ks):
    """Tip (u, w) / L of the inextensible cantilever under a dead end force, k = P L^2 / EI."""
    s = np.linspace(0, 1, 401)
    guess = np.vstack([np.zeros_like(s), np.zeros_like(s), s, np.zeros_like(s)])
    out = {}
    for k in sorted(ks):          # continuation in k
        sol = solve_bvp(lambda s, y, k=k: np.vstack([y[1], k * np.cos(y[0]), np.cos(y[0]),
                                                     np.sin(y[0])]),
                        lambda a, b: np.array([a[0], b[1], a[2], a[3]]), s, guess, tol=1e-10,
                        max_nodes=100000)
        assert sol.success
        guess = sol.sol(s)
        out[k] = (sol.y[2, -1] - 1.0, sol.y[3, -1])
    return out


def test_elastica_2d_every_frame(tmp_path):
    """Issue 3: tip displacements within 0.2% of the elastica for PL^2/EI from 0 to 10."""
    dk = deck_io.load(str(CASES / "elastica_cantilever" / "deck.toml"))
    run(dk, str(tmp_path / "e.h5"))
    with h5py.File(tmp_path / "e.h5") as f:
        t = f["steps/bend/time"][()]
        tip = f["steps/bend/displacement"][:, node(dk, 2), :2]
    assert t[-1] == pytest.approx(10.0) and len(t) == 20
    ref = elastica(t)
    for k, (u, w) in zip(t, tip, strict=True):
        assert abs(u - ref[k][0]) <= 2e-3 * abs(ref[k][0])
        assert abs(w - ref[k][1]) <= 2e-3 * abs(ref[k][1])


def test_elastica_3d_skew():
    """The same in 3D: a beam along (2, -1, 2)/3, force along its local y axis."""
    axis = np.array([2.0, -1.0, 2.0]) / 3
    ref_vec = np.array([0.0, 0.0, 1.0])
    y = ref_vec - (ref_vec @ axis) * axis
    y /= np.linalg.norm(y)
    d = line_beam(3, 10, A=1e5, Iy=3.0, Iz=1.0, J=2.0, axis=axis, orientation=ref_vec)
    d["supports"] = [{"nodes": 1, "fixed": ["all"]}]
    d["loads"] = [{"name": "P", "nodes": 2, "force": (-y).tolist()}]
    d["steps"] = [{"name": "s", "type": "static", "nonlinear": True, "load_factor": 10.0,
                   "increments": 20, "max_increment": 0.5, "tolerance": 1e-10}]
    dk, sysm, st, _ = solve(d)
    tip = st.u[node(dk, 2)]
    u, w = elastica([10.0])[10.0]
    assert tip @ axis == pytest.approx(u, rel=2e-3)
    assert tip @ y == pytest.approx(w, rel=2e-3)
    assert abs(tip @ np.cross(axis, y)) < 1e-10 * abs(w)


def test_von_mises_truss_every_point_on_the_closed_form(tmp_path):
    """Issue 3: arc-length passes both limit points; every converged point is on P(y) to 1e-8."""
    dk = deck_io.load(str(CASES / "von_mises_truss" / "deck.toml"))
    run(dk, str(tmp_path / "v.h5"))
    with h5py.File(tmp_path / "v.h5") as f:
        lam = f["steps/snap/time"][()]
        uy = f["steps/snap/displacement"][:, node(dk, 2), 1]
    a, h = 1.0, 0.1
    L0 = math.hypot(a, h)
    y = h + uy
    P = 2 * y * (1 / np.hypot(a, y) - 1 / L0)
    Ls = (a * a * L0) ** (1 / 3)
    Pmax = 2 * math.sqrt(Ls**2 - a * a) * (1 / Ls - 1 / L0)
    assert np.max(np.abs(lam - P)) <= 1e-8 * Pmax
    assert lam.max() > 0.999 * Pmax or lam[-1] > Pmax       # climbed to the first limit point
    assert lam.min() < -0.99 * Pmax                          # and through the unstable branch
    assert y[-1] <= -0.15                                    # to the inverted configuration


def test_displacement_control_snaps_through():
    """Displacement control on the apex passes the limit points of the same truss."""
    d = deck_io.parse((CASES / "von_mises_truss" / "deck.toml").read_text())
    step = d["steps"][0]
    for k in ("arc_length", "max_arc_length", "max_steps", "psi", "target_iterations"):
        step.pop(k)
    step.update(control="displacement", node=2, dof="uy", target=-0.2, increments=40)
    dk, sysm, st, _ = solve(d)
    y = 0.1 + st.u[node(dk, 2), 1]
    L0 = math.hypot(1.0, 0.1)
    assert y == pytest.approx(-0.1, abs=1e-14)
    assert st.t == pytest.approx(2 * y * (1 / math.hypot(1.0, y) - 1 / L0), rel=1e-10)


def test_displacement_control_of_a_dof_the_load_does_not_move_stops_with_a_reason():
    """An axial tip load does not move the tip sideways: no load factor reaches a lateral
    target, and the step says so at once (it used to divide by zero and halve 20 times)."""
    from fem.errors import ConvergenceError

    d = line_beam(2, 4, A=1e3)
    d["supports"] = [{"nodes": 1, "fixed": ["all"]}]
    d["loads"] = [{"name": "P", "nodes": 2, "force": [1.0, 0.0]}]
    d["steps"] = [{"name": "s", "type": "static", "nonlinear": True, "control": "displacement",
                   "node": 2, "dof": "uy", "target": 0.1}]
    with pytest.raises(ConvergenceError, match="does not move the controlled DOF"):
        solve(d)


def test_arclength_with_a_zero_reference_load_is_a_model_error():
    from fem.errors import ModelError

    d = line_beam(2, 4, A=1e3)
    d["supports"] = [{"nodes": 1, "fixed": ["all"]}]
    d["loads"] = [{"name": "P", "nodes": 2, "force": [0.0, 0.0]}]
    d["steps"] = [{"name": "s", "type": "static", "nonlinear": True, "control": "arclength",
                   "arc_length": 0.1}]
    with pytest.raises(ModelError, match="reference load is zero"):
        solve(d)


def norms_of_one_increment(dim, follower):
    d = line_beam(dim, 8, A=1e3, Iy=1.0, Iz=1.0)
    d["supports"] = [{"nodes": 1, "fixed": ["all"]}]
    kind = "follower" if follower else "dead"
    d["loads"] = [{"name": "P", "nodes": 2, "force": [0, -1.0] + [0.0] * (dim - 2), "kind": kind},
                  {"name": "M", "nodes": 2, "moment": 0.5 if dim == 2 else [0.3, 0.2, 0.5],
                   "kind": kind}]
    d["steps"] = [{"name": "a", "type": "static", "nonlinear": True, "load_factor": 1.0,
                   "increments": 4, "tolerance": 1e-12},
                  {"name": "b", "type": "static", "nonlinear": True, "loads": ["P", "M"],
                   "load_factor": 0.3, "increments": 1, "max_increment": 0.3,
                   "tolerance": 1e-12}]
    return np.array(solve(d)[3][-1].test.norms)


@pytest.mark.parametrize("dim", [2, 3])
@pytest.mark.parametrize("follower", [False, True])
def test_newton_converges_quadratically(dim, follower):
    """Issue 3: with the consistent tangent (and load stiffness) r_k+1 <= C r_k^2 near the
    solution."""
    r = norms_of_one_increment(dim, follower)
    assert len(r) <= 7, r
    # near the solution (r_k < r_0 / 10) every residual is bounded by C r_k^2, with C in units
    # of the first residual; linear convergence (r_k+1 = c r_k) would break this bound at once
    floor = 3e-12 * r[0]                             # round-off: nothing to learn below it
    near = [k for k in range(len(r) - 1) if r[k] < 0.1 * r[0] and r[k + 1] > floor]
    assert near, r
    for k in near:
        assert r[k + 1] <= 1e3 / r[0] * r[k] ** 2, r


def swapped(text: str) -> str:
    """The non-commuting case with the two turns in the other order."""
    return (text.replace('prescribed = ["turn_z"]', 'prescribed = ["turn_x"]')
            .replace('prescribed = ["turn_z", "turn_x"]', 'prescribed = ["turn_x", "turn_z"]'))


@pytest.mark.parametrize("first", ["z", "x"])
def test_finite_rotations_do_not_commute(first, tmp_path):
    text = (CASES / "noncommuting_rotations" / "deck.toml").read_text()
    if first == "x":
        text = swapped(text)
    dk = deck_io.loads(text)
    sysm_run = run(dk, str(tmp_path / "n.h5"))
    assert sysm_run.steps
    with h5py.File(tmp_path / "n.h5") as f:
        x_tip = f["model/nodes"][node(dk, 2)] + f["steps/turn_x/displacement"][-1, node(dk, 2)]
        q_tip = f["steps/turn_x/rotation"][-1, node(dk, 2)]
    phi, R = math.pi / 3, 3 / math.pi
    rz, rx = Rotation.from_rotvec([0, 0, math.pi / 2]), Rotation.from_rotvec([math.pi / 2, 0, 0])
    base = rx * rz if first == "z" else rz * rx
    arc = np.array([R * math.sin(phi), R * (1 - math.cos(phi)), 0.0])
    assert np.allclose(x_tip, base.apply(arc), atol=1e-6)
    expected = (base * Rotation.from_rotvec([0, 0, phi])).as_matrix()
    got = Rotation.from_quat(np.roll(q_tip, -1)).as_matrix()         # (w,x,y,z) -> (x,y,z,w)
    assert np.allclose(got, expected, atol=1e-10)
    additive = Rotation.from_rotvec([math.pi / 2, 0, math.pi / 2])
    assert not np.allclose(x_tip, additive.apply(arc), atol=1e-2)


def cantilever_steps(steps):
    d = line_beam(2, 8, A=1e3, Iz=1.0)
    d["supports"] = [{"nodes": 1, "fixed": ["all"]}]
    d["loads"] = [{"name": "P", "nodes": 2, "force": [0, -2.0]},
                  {"name": "H", "nodes": 2, "force": [1.0, 0.0]}]
    d["steps"] = steps
    dk, sysm, st, _ = solve(d)
    return st.u[node(dk, 2)].copy()


def test_load_history_is_continuous_across_steps():
    """Loads applied by a step stay on; a later step adds its own; `remove` takes them off."""
    nl = {"type": "static", "nonlinear": True, "tolerance": 1e-11}
    both = cantilever_steps([{"name": "both", **nl}])
    seq = cantilever_steps([{"name": "p", "loads": ["P"], **nl}, {"name": "h", **nl}])
    assert np.allclose(seq, both, atol=1e-10)            # elastic and conservative: same end
    only_h = cantilever_steps([{"name": "h", "loads": ["H"], **nl}])
    removed = cantilever_steps([{"name": "p", "loads": ["P"], **nl}, {"name": "h", **nl},
                                {"name": "off", "loads": [], "remove": ["P"], **nl}])
    assert np.allclose(removed, only_h, atol=1e-10)
    twice = cantilever_steps([{"name": "a", "loads": ["P"], **nl},
                              {"name": "b", "loads": ["P"], "load_factor": 0.5, **nl}])
    once = cantilever_steps([{"name": "a", "loads": ["P"], "load_factor": 1.5, **nl}])
    assert np.allclose(twice, once, atol=1e-10)           # re-applied loads add up


# --- no silent wrong answers ------------------------------------------------------------------

def von_mises_load_control(load_factor, solver=None):
    """R21: the shallow two-bar truss of the von Mises case under load control."""
    d = deck_io.parse((CASES / "von_mises_truss" / "deck.toml").read_text())
    d["steps"] = [{"name": "snap", "type": "static", "nonlinear": True,
                   "load_factor": load_factor, "increments": 10}]
    if solver:
        d["solver"] = {"petsc_options": {"pc_factor_mat_solver_type": solver}}
    return solve(d)


@pytest.mark.parametrize("solver", [None, "superlu"])
def test_load_control_past_a_limit_point_warns(solver):
    """Loaded to 2.6 times its limit load, the apex jumps to the inverted branch within one
    increment and the step used to say nothing. Now it warns, naming the increment that contains
    the closed-form limit load, by MUMPS's determinant or (SuperLU) by F . K^-1 F."""
    a, h = 1.0, 0.1
    L0 = math.hypot(a, h)
    Ls = (a * a * L0) ** (1 / 3)
    Pmax = 2 * math.sqrt(Ls**2 - a * a) * (1 / Ls - 1 / L0)              # 3.85e-4
    dk, _, st, steps = von_mises_load_control(1e-3, solver)
    y = h + st.u[node(dk, 2), 1]
    assert y < -0.1                                          # it did jump to the far branch
    warnings = steps[0].warnings
    assert len(warnings) == 1 and 'control = "arclength"' in warnings[0], warnings
    lo, hi = (float(v) for v in warnings[0].split("near load factor ")[1].split(":")[0]
              .split(" to "))
    assert lo < Pmax < hi
    below = von_mises_load_control(0.9 * Pmax, solver)[3][0]      # short of the limit: silent
    assert below.warnings == []


@pytest.mark.parametrize("solver", [None, "superlu"])
def test_no_limit_point_warning_on_stable_paths(solver, tmp_path):
    """The elastica case and a 300-element cantilever bent far: Newton's first iterates of a
    slender co-rotational beam have tangents of either sign, which are no limit point."""
    dk = deck_io.load(str(CASES / "elastica_cantilever" / "deck.toml"))
    if solver:
        dk.solver_options["pc_factor_mat_solver_type"] = solver
    result = run(dk, str(tmp_path / "e.h5"))
    assert not [line for s in result.steps for line in s.lines if "warning" in line]
    d = line_beam(2, 300, A=1e3, Iz=1.0)
    d["supports"] = [{"nodes": 1, "fixed": ["all"]}]
    d["loads"] = [{"name": "P", "nodes": 2, "force": [0, -3.0]}]
    d["steps"] = [{"name": "s", "type": "static", "nonlinear": True, "increments": 5}]
    if solver:
        d["solver"] = {"petsc_options": {"pc_factor_mat_solver_type": solver}}
    step = solve(d)[3][0]
    assert step.warnings == []


def test_negative_load_factor_loads_the_other_way():
    """R06: load_factor = -1 is -1 times the loads (it used to do nothing and exit 0)."""
    def tip(load_factor):
        d = line_beam(2, 8, A=1e3, Iz=1.0)
        d["supports"] = [{"nodes": 1, "fixed": ["all"]}]
        d["loads"] = [{"name": "P", "nodes": 2, "force": [0, -2.0]}]
        d["steps"] = [{"name": "s", "type": "static", "nonlinear": True,
                       "load_factor": load_factor, "tolerance": 1e-11}]
        dk, _, st, _ = solve(d)
        return st.t, st.u[node(dk, 2)].copy()

    t_down, down = tip(1.0)
    t_up, up = tip(-1.0)
    assert t_up == pytest.approx(-1.0) and t_down == pytest.approx(1.0)
    assert down[1] < -0.1                                      # a large deflection ...
    assert up[1] == pytest.approx(-down[1], rel=1e-9)          # ... mirrored
    assert up[0] == pytest.approx(down[0], rel=1e-9)           # the same shortening


def test_arc_length_that_stops_short_of_its_target_warns():
    """R22: max_steps reached before the watched DOF's target: a warning says what was reached;
    the case itself, which reaches its target, says nothing."""
    d = deck_io.parse((CASES / "von_mises_truss" / "deck.toml").read_text())
    full = solve(d)[3][0]
    assert full.warnings == []
    d["steps"][0]["max_steps"] = 20
    dk, _, st, steps = solve(d)
    (w,) = steps[0].warnings
    uy = st.u[node(dk, 2), 1]
    assert uy > -0.15
    assert "max_steps = 20" in w and "target uy = -0.25 of node 2" in w
    assert f"reached {uy:.6g}" in w


def test_small_load_on_a_slender_rod_converges(tmp_path):
    """R19: 0.01 N on a 2 m steel rod (d = 10 mm): internal forces of the stiff axial mode carry
    round-off above 1e-9 of the first increments' loads (it failed after 25 iterations). Newton
    stops at the residual's round-off floor, within three iterations per increment, at the linear
    deflection P L^3 / 3 EI (0.26 mm, small)."""
    E, d_, L, P = 210000.0, 10.0, 2000.0, 0.01
    d = {"model": {"dim": 2}, "materials": [{"name": "steel", "E": E, "nu": 0.3}],
         "sections": [{"name": "rod", "shape": "circle", "d": d_}],
         "nodes": {"coordinates": [[0, 0], [L, 0]]},
         "elements": [{"name": "rod", "type": "beam", "formulation": "corotational",
                       "material": "steel", "section": "rod", "connectivity": [[1, 2]],
                       "divisions": 10}],
         "supports": [{"nodes": 1, "fixed": ["all"]}],
         "loads": [{"name": "P", "nodes": 2, "force": [0, -P]}],
         "steps": [{"name": "bend", "type": "static", "nonlinear": True}]}
    dk, _, st, _ = solve(d, h5=str(tmp_path / "r.h5"))
    I = math.pi * d_**4 / 64
    assert st.u[node(dk, 2), 1] == pytest.approx(-P * L**3 / (3 * E * I), rel=1e-6)
    with h5py.File(tmp_path / "r.h5") as f:
        iterations = f["steps/bend/increments/iterations"][()]
    assert len(iterations) == 10 and iterations.max() <= 3


def test_load_control_cut_backs_are_bounded(monkeypatch):
    """With min_increment = 0 a failing increment is still halved a bounded number of times."""
    from fem.analysis.planar_static import PlanarIncrement
    from fem.analysis.static import StaticStep
    from fem.errors import ConvergenceError
    from fem.solvers.controls import MAX_HALVINGS
    from fem.solvers.newton import NewtonFailure

    calls = []

    def never(self, newton, trial, lam, compiled=True):
        calls.append(lam)
        raise NewtonFailure("made to fail", 0, [1.0])

    monkeypatch.setattr(StaticStep, "_iterate", never)      # compiled or not: every increment
    # the compiled batch of increments takes none (it would converge them without _iterate)
    monkeypatch.setattr(PlanarIncrement, "batch", lambda *args: None)
    d = line_beam(2, 2)
    d["supports"] = [{"nodes": 1, "fixed": ["all"]}]
    d["loads"] = [{"name": "P", "nodes": 2, "force": [0, -1.0]}]
    d["steps"] = [{"name": "s", "type": "static", "nonlinear": True}]
    from fem.run import make_step
    from fem.system import System

    dk = deck_io.from_dict(d)
    sysm = System(dk.model)
    step = make_step(dk.steps[0], sysm, dk)
    step.settings.min_increment = 0.0                # the deck refuses it; the loop must not care
    with pytest.raises(ConvergenceError, match="halvings of the increment in a row"):
        step.run(sysm.reference_state(), None)
    assert len(calls) == MAX_HALVINGS + 1
