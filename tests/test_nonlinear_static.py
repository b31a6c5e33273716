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
