"""Rayleigh damping ``C = alpha M + beta K`` (issue 30, item 1): matrices, step forms, runs, decks.

References: the assembled ``C`` against ``alpha M + beta K`` from the system's own mass and
stiffness (exact), the step form's tangent against central differences by spins of ``s1``, its
booked work (exact by construction), the closed form of the damped single-DOF oscillator
``x = v0 / wd exp(-zeta w t) sin(wd t)`` in every integrator, the balance ``total + damping``
of the energy-conserving scheme (1e-8), and a free rigid spin that the tangent variant leaves
undamped while the initial-stiffness variant damps it.
"""

import copy
import tomllib
from pathlib import Path

import h5py
import numpy as np
import pytest

from fem import rotations as so3
from fem.elements.force.rayleigh import RayleighDamping
from fem.errors import DeckError
from fem.io import deck as deck_io
from fem.run import run
from fem.system import System

CASES = Path(__file__).resolve().parents[1] / "cases"


def case(name):
    return tomllib.loads((CASES / name / "deck.toml").read_text())


def beam3d(stiffness="tangent"):
    """A 3D co-rotational cantilever of 4 beams, Rayleigh-damped, a point mass at the tip."""
    data = beam3d_dict()
    data["damping"][0]["stiffness"] = stiffness
    data["steps"] = [{"name": "modes", "type": "modal", "modes": 2}]
    return deck_io.from_dict(data)


def test_assembled_damping_is_alpha_m_plus_beta_k():
    """The twins' assembled ``C`` is ``alpha M + beta K`` of the steps' own M (lumped) and K."""
    d = beam3d(stiffness="initial")
    sysm = System(d.model)
    ref = sysm.reference_state()
    asm = sysm.assembler
    C = asm.to_scipy(asm.matrix([g.damping(ref) if isinstance(g, RayleighDamping) else None
                                 for g in d.model.groups])).toarray()
    M = asm.to_scipy(sysm.mass(ref, lumped=True)).toarray()
    K = asm.to_scipy(sysm.tangent(ref)).toarray()
    np.testing.assert_allclose(C, 0.3 * M + 0.02 * K, atol=1e-12 * np.abs(C).max())
    assert {g.name for g in d.model.groups} == {"b", "b_damping", "masses_damping"}


def _states(g, n, rng, h=1e-2, turn=0.3):
    from fem.state import State

    s0 = State.reference(3, n)
    s0.u[:] = 0.05 * rng.normal(size=s0.u.shape)
    s0.rot[:] = so3.quat_from_rotvec(turn * rng.normal(size=(n, 3)))
    s0.t = 0.2
    s1 = s0.copy()
    s1.t = s0.t + h
    d = np.zeros_like(s0.v)
    d[:] = 0.02 * rng.normal(size=d.shape)
    s1.increment(d)
    return s0, s1


def _inc(g, s0, s1):
    theta = so3.rotvec_from_quat(so3.quat_mul(s1.rot, so3.quat_conj(s0.rot)))
    return g.element_vector(np.concatenate([s1.u - s0.u, theta], axis=1))


@pytest.mark.parametrize("stiffness", ["tangent", "initial"])
def test_step_form_books_its_work_and_its_tangent_is_the_derivative(stiffness):
    """``f . dq = D >= 0`` exactly; the tangent against central differences by spins of s1."""
    rng = np.random.default_rng(3)
    d = beam3d(stiffness=stiffness)
    g = d.model.group("b_damping")
    n = d.model.n_nodes
    s0, s1 = _states(g, n, rng)
    hist = g.conserving_start(s0)
    spins = np.ones(g.conn.shape, dtype=bool)
    f, K, U, h1 = g.conserving(s0, s1, None, _inc(g, s0, s1), hist, spins=spins)
    D = h1["dissipated"]
    np.testing.assert_allclose(np.einsum("ei,ei->e", f, _inc(g, s0, s1)), D, rtol=1e-13)
    assert np.all(D > 0) and not np.any(U)
    eps = 1e-7
    fd = np.zeros_like(K[0])          # element 0 (the chain's elements share nodes)
    for a in range(g.nen):
        for i in range(g.ndn):
            fs = []
            for sign in (1, -1):
                t = s1.copy()
                dd = np.zeros_like(t.v)
                dd[g.conn[0, a], i] = sign * eps
                t.increment(dd)
                fs.append(g.conserving(s0, t, None, _inc(g, s0, t), hist, spins=spins)[0][0])
            fd[:, a * g.ndn + i] = (fs[0] - fs[1]) / (2 * eps)
    np.testing.assert_allclose(K[0], fd, atol=1e-6 * np.abs(K[0]).max())
    # the static force's velocity derivative is the damping matrix (linear in v)
    s1.v[:] = rng.normal(size=s1.v.shape)
    f1 = g.evaluate(s1, tangent=False)[0]
    np.testing.assert_allclose(f1, np.einsum("eij,ej->ei", g.damping(s1),
                                             g.element_vector(s1.v)), rtol=1e-13)


def oscillator(integrator, alpha=0.4, beta=0.01, h=2e-3, duration=0.3):
    """A 1 kg mass on a grounded spring (1 Hz), Rayleigh-damped, kicked at 1 m/s."""
    return {
        "model": {"dim": 2},
        "nodes": {"coordinates": [[0.0, 0.0]]},
        "masses": [{"nodes": [1], "mass": 1.0}],
        "springs": [{"name": "k", "nodes": [1], "dof": "ux",
                     "stiffness": 4 * np.pi ** 2}],
        "supports": [{"nodes": [1], "fixed": ["uy"]}],
        "damping": [{"alpha": alpha, "beta": beta}],
        "velocities": [{"name": "kick", "nodes": [1], "velocity": [1.0, 0.0]}],
        "steps": [{"name": "free", "type": "dynamic", "integrator": integrator,
                   "duration": duration, "time_step": h, "velocities": ["kick"],
                   "tolerance": 1e-12},
                  {"name": "modes", "type": "modal", "modes": 1, "method": "dense"},
                  {"name": "lin", "type": "linearize", "modes": 1, "method": "dense"}],
    }


@pytest.mark.parametrize("integrator, tol", [("energy_conserving", 3e-5), ("midpoint", 3e-5),
                                             ("trapezoidal", 3e-5),
                                             ("generalized_alpha", 2e-3)])
def test_single_dof_oscillator_decays_as_the_closed_form(tmp_path, integrator, tol):
    """``x = v0/wd exp(-zeta w t) sin(wd t)``, ``zeta = alpha/(2w) + beta w/2``, every integrator.

    The second-order schemes at ``w h = 1.3e-2`` are within their O(h^2) phase error
    (``(w h)^2 w t / 12 = 2.5e-5`` rad at 0.3 s, of the amplitude 1/wd); generalized-alpha
    (rho_inf = 0.8) adds its numerical damping. The mid-point rule's dampers see the mean rate
    (before: the step's start rate, 60 times the error). The modal and linearize steps give
    ``zeta`` to round-off; the energy-conserving scheme keeps ``total + damping`` at 0.5 J to
    1e-8 and books the energy the closed form loses.
    """
    alpha, beta = 0.4, 0.01
    d = deck_io.from_dict(oscillator(integrator, alpha, beta), base_dir=str(tmp_path))
    run(d, str(tmp_path / "out.h5"))
    w = 2 * np.pi
    zeta = alpha / (2 * w) + beta * w / 2
    wd = w * np.sqrt(1 - zeta ** 2)
    with h5py.File(tmp_path / "out.h5") as f:
        s = f["steps/free"]
        t = s["time"][()]
        x = s["displacement"][:, 0, 0]
        total, damping = s["energy/total"][()], s["energy/damping"][()]
        z_modal = f["modes/modes/damping_ratios"][0]
        z_lin = f["linear/lin/damping_ratios"][0]
    exact = np.exp(-zeta * w * t) * np.sin(wd * t) / wd
    np.testing.assert_allclose(x, exact, atol=tol / wd)
    np.testing.assert_allclose([z_modal, z_lin], zeta, rtol=1e-12)
    xdot = np.exp(-zeta * w * t) * (wd * np.cos(wd * t) - zeta * w * np.sin(wd * t)) / wd
    lost = 0.5 - 0.5 * xdot[-1] ** 2 - 0.5 * w ** 2 * exact[-1] ** 2
    assert damping[-1] == pytest.approx(lost, rel=1e-3 if integrator != "generalized_alpha"
                                        else 2e-2)
    if integrator == "energy_conserving":
        np.testing.assert_allclose(total + damping, 0.5, rtol=1e-8)



@pytest.mark.parametrize("integrator", ["energy_conserving", "midpoint", "trapezoidal",
                                        "generalized_alpha"])
@pytest.mark.parametrize("law", ["rayleigh", "connector"])
def test_linear_damped_step_takes_one_newton_iteration(tmp_path, integrator, law):
    """Every integrator's Newton matrix holds the exact damping tangent: one iteration a step.

    The heavily damped oscillator (Rayleigh ``alpha = 200`` 1/s, or the same ``c = 200`` N s/m
    as an axial connector's damper) is linear, so an exact Newton matrix converges in one
    correction; without the damping's share (``gamma / (beta h) C``, the mid-point's ``C / h``,
    the step form's ``C / h``: as large as ``4 M / h^2`` here) it takes many or diverges.
    """
    data = oscillator(integrator, alpha=200.0, beta=0.0, h=1e-2, duration=0.1)
    data["steps"] = data["steps"][:1]
    data["steps"][0]["tolerance"] = 1e-9
    if law == "connector":
        del data["damping"]
        data["connectors"] = [{"name": "c", "type": "spring_damper", "ground": [1],
                               "points": [[-1.0, 0.0]], "damping": 200.0}]
    run(deck_io.from_dict(data, base_dir=str(tmp_path)), str(tmp_path / "out.h5"))
    with h5py.File(tmp_path / "out.h5") as f:
        iterations = f["steps/free/increments/iterations"][1:]
    assert len(iterations) == 10 and np.all(iterations == 1), iterations

def test_cantilever_case_balance_closes(tmp_path):
    """The case's energy-conserving run: ``total + damping`` constant to 1e-8, damping > 0."""
    data = case("rayleigh_cantilever")
    data["steps"] = [s for s in data["steps"] if s["name"] == "free"]
    data["steps"][0].update(duration=0.3)
    d = deck_io.from_dict(data, base_dir=str(tmp_path))
    run(d, str(tmp_path / "out.h5"))
    with h5py.File(tmp_path / "out.h5") as f:
        e = f["steps/free/energy"]
        total, damping = e["total"][()], e["damping"][()]
        per = f["steps/free/elements/beam_damping/dissipated"][-1]
    np.testing.assert_allclose(total + damping, total[0], rtol=1e-8)
    assert damping[-1] > 1e-3 * total[0]
    assert per.sum() == pytest.approx(damping[-1], rel=1e-12)


def test_3d_corotational_balance_closes(tmp_path):
    """A 3D co-rotational cantilever with a tip mass, swung: ``total + damping`` to 1e-8."""
    run_data = _with_steps(beam3d_dict(), [{"name": "free", "type": "dynamic",
                                            "integrator": "energy_conserving", "duration": 0.2,
                                            "time_step": 0.01, "velocities": ["swing"],
                                            "tolerance": 1e-12}])
    d = deck_io.from_dict(run_data, base_dir=str(tmp_path))
    run(d, str(tmp_path / "out.h5"))
    with h5py.File(tmp_path / "out.h5") as f:
        e = f["steps/free/energy"]
        total, damping = e["total"][()], e["damping"][()]
    np.testing.assert_allclose(total + damping, total[0], rtol=1e-8)
    assert damping[-1] > 1e-3 * total[0]


def beam3d_dict():
    return {
        "model": {"dim": 3},
        "materials": [{"name": "m", "E": 2e3, "nu": 0.3, "density": 1.0}],
        "sections": [{"name": "s", "A": 0.1, "Iy": 2e-3, "Iz": 1e-3, "J": 3e-3}],
        "nodes": {"coordinates": [[0, 0, 0], [1.0, 0.3, 0.2]]},
        "elements": [{"name": "b", "type": "beam", "formulation": "corotational",
                      "material": "m", "section": "s", "connectivity": [[1, 2]],
                      "divisions": 4}],
        "masses": [{"nodes": [2], "mass": 0.5, "inertia": [0.01, 0.02, 0.03]}],
        "damping": [{"alpha": 0.3, "beta": 0.02}],
        "supports": [{"nodes": [1], "fixed": ["all"]}],
        "velocities": [{"name": "swing", "angular_velocity": [0.0, 2.0, 3.0]}],
    }


def _with_steps(data, steps):
    data = copy.deepcopy(data)
    data["steps"] = steps
    return data


def test_tangent_variant_leaves_a_rigid_spin_undamped(tmp_path):
    """A free 2D co-rotational beam spinning: beta K_t takes 1e-5 of what beta K_0 takes.

    The material tangent at the mid-point configuration vanishes on a rigid step's increment
    (Cayley rotations), so it damps only the small centrifugal stretch; the reference
    stiffness damps the spin itself once the beam has turned. Both close the balance.
    """
    took = {}
    for stiffness in ("tangent", "initial"):
        data = {
            "model": {"dim": 2},
            "materials": [{"name": "m", "E": 1e6, "nu": 0.3, "density": 1.0}],
            "sections": [{"name": "s", "A": 0.01, "Iz": 1e-5}],
            "nodes": {"coordinates": [[-0.5, 0.0], [0.5, 0.0]]},
            "elements": [{"name": "b", "type": "beam", "formulation": "corotational",
                          "material": "m", "section": "s", "connectivity": [[1, 2]],
                          "divisions": 4}],
            "damping": [{"beta": 0.05, "stiffness": stiffness}],
            "velocities": [{"name": "spin", "angular_velocity": 2.0}],
            "steps": [{"name": "free", "type": "dynamic", "integrator": "energy_conserving",
                       "duration": 0.5, "time_step": 0.01, "velocities": ["spin"],
                       "tolerance": 1e-12}],
        }
        d = deck_io.from_dict(data, base_dir=str(tmp_path))
        run(d, str(tmp_path / f"{stiffness}.h5"))
        with h5py.File(tmp_path / f"{stiffness}.h5") as f:
            e = f["steps/free/energy"]
            total, damping = e["total"][()], e["damping"][()]
        np.testing.assert_allclose(total + damping, total[0], rtol=1e-8)
        took[stiffness] = damping[-1]
    assert took["initial"] > 1e-2 * total[0]
    assert 0 <= took["tangent"] < 1e-5 * took["initial"]


def _deck(**changes):
    data = case("rayleigh_cantilever")
    data["damping"] = [dict(data["damping"][0], **changes)]
    data["damping"] = [{k: v for k, v in e.items() if v is not None} for e in data["damping"]]
    return data


@pytest.mark.parametrize("changes, where, says", [
    ({"alpha": -0.1}, "damping[0].alpha", "-0.1"),
    ({"beta": -1e-3}, "damping[0].beta", "-0.001"),
    ({"alpha": 0.0, "beta": 0.0}, "damping[0].alpha", "no damping"),
    ({"groups": ["beem"]}, "damping[0].groups", "unknown element group 'beem'"),
    ({"groups": ["beam", "beam"]}, "damping[0].groups", "damped twice"),
    ({"stiffness": "secant"}, "damping[0].stiffness", "secant"),
    ({"ratio": 0.1}, "damping[0].ratio", "ratio"),
])
def test_deck_errors(changes, where, says):
    """Bad ``[[damping]]`` input is a deck error naming the key."""
    with pytest.raises(DeckError) as err:
        deck_io.from_dict(_deck(**changes))
    assert err.value.key == where and says in str(err.value), str(err.value)


def test_deck_errors_between_entries():
    """Two model-wide entries; a connector named (it damps by its own law)."""
    data = case("rayleigh_cantilever")
    data["damping"] = [{"alpha": 0.1}, {"beta": 0.1}]
    with pytest.raises(DeckError) as err:
        deck_io.from_dict(data)
    assert err.value.key == "damping[1].groups" and "second model-wide" in str(err.value)
    data = case("damped_oscillator")
    data["damping"] = [{"groups": "suspension", "alpha": 0.1}]
    with pytest.raises(DeckError) as err:
        deck_io.from_dict(data)
    assert err.value.key == "damping[0].groups" and "force element" in str(err.value)
