"""Meijaard's flexible slider-crank on the compiled energy-conserving step (issue 32).

``cases/slider_crank_meijaard`` (4 co-rotational beams with the consistent inertia, a driven
pivot, a pin and an inline joint for the massless slider) takes the compiled step now: its
beams' consistent inertia (:mod:`fem.integrators.planar_inertia_kernel`) and its slide row
(:func:`fem.integrators.planar_joint_kernel.slides`). Compared here with the numpy path, which
stays the reference: each kernel against :mod:`fem.inertia.beam` and
:func:`fem.constraints.joint_rows.discrete_rows` at perturbed states (a slide row between two
turning nodes, at offsets, along a slanted line, and a prismatic joint's), the whole
evaluation against :class:`fem.integrators.midpoint.MidpointRule`'s, and a short run of the
case iteration by iteration against the general path (MUMPS).
"""

import copy
import tomllib
from pathlib import Path

import numpy as np
import pytest

from fem.integrators import planar
from fem.integrators.midpoint import MidpointRule
from fem.integrators.planar_joints import set_targets
from fem.io.deck import from_dict
from fem.run import make_step
from fem.system import System

pytest.importorskip("numba")

CASE = Path(__file__).resolve().parents[1] / "cases" / "slider_crank_meijaard"


def crank(steps: int) -> dict:
    """The case deck, run for ``steps`` of its time step."""
    with open(CASE / "deck.toml", "rb") as fh:
        deck = tomllib.load(fh)
    spec = deck["steps"][0]
    spec["duration"] = spec["output_interval"] = spec["time_step"] * steps
    return deck


def slanted(steps: int) -> dict:
    """A beam with the consistent inertia held by joints with slide rows, all of them turning.

    Bar 1 turns about the ground (a driven pivot); a 3-element beam is pinned to it at an
    offset from both; the beam's far end slides on a line of bar 2 (an ``inline`` joint at
    offsets from both, the line slanted), and bar 2 slides along a slanted line of the ground
    without turning (a ``prismatic`` joint: a slide row and an angle row).
    """
    return {
        "model": {"dim": 2, "title": "slanted slides"},
        "materials": [{"name": "m", "E": 5.0e6, "nu": 0.3, "density": 1000.0}],
        "sections": [{"name": "s", "shape": "rectangle", "b": 0.02, "h": 0.02}],
        "nodes": {"ids": [1, 2, 3, 4], "coordinates": [[0.1, 0.0], [0.22, 0.01], [0.82, 0.05],
                                                       [0.95, 0.1]]},
        "bodies": [{"name": "bars", "nodes": [1, 4], "mass": 0.5, "inertia": 2e-3}],
        "elements": [{"name": "rod", "type": "beam", "formulation": "corotational",
                      "inertia": "consistent", "material": "m", "section": "s",
                      "connectivity": [[2, 3]], "divisions": 3}],
        "functions": [{"name": "spin", "type": "steady", "rate": 20.0}],
        "joints": [{"name": "pivot", "type": "revolute", "ground": [1],
                    "points": [[0.0, 0.0]], "drive": "spin"},
                   {"name": "pin", "type": "revolute", "pairs": [[1, 2]],
                    "points": [[0.2, 0.0]]},
                   {"name": "line", "type": "inline", "pairs": [[4, 3]],
                    "points": [[0.85, 0.06]], "axis": [0.8, 0.6]},
                   {"name": "guide", "type": "prismatic", "ground": [4],
                    "points": [[0.95, 0.1]], "axis": [0.6, -0.8]}],
        "gravity": {"acceleration": [0.0, -9.81]},
        "steps": [{"name": "run", "type": "dynamic", "integrator": "energy_conserving",
                   "time_step": 1e-4, "duration": 1e-4 * steps,
                   "output_interval": 1e-4 * steps}]}


def run(deck: dict, general: bool = False, monkeypatch=None):
    """Run the deck's step: final state, (iterations, norms) of every step, the step.

    ``general``: without the compiled step (the reference).
    """
    if general:
        monkeypatch.setattr(planar.PlanarStep, "make", classmethod(lambda cls, integ: None))
    dk = from_dict(copy.deepcopy(deck), base_dir=str(CASE))
    sysm = System(dk.model)
    state = sysm.reference_state()
    step = make_step(dk.steps[0], sysm, dk)
    its = []
    step.on_step = lambda s: its.append((step._stats["iterations"], list(step.test.norms)))
    step.run(state, None)
    if general:
        monkeypatch.undo()
    return state, its, step


def perturbed(integ, state, rng, du=1e-4, dth=2e-2):
    """A trial end state of the next step: ``state`` moved at random (multipliers too)."""
    dm = integ.system.dofmap
    free = (dm.index >= 0) & (dm.index < dm.n_free)
    s1 = state.copy()
    s1.t = state.t + integ.h
    s1.u[:, :2] += rng.normal(scale=du, size=s1.u[:, :2].shape) * free[:, :2]
    s1.rot += rng.normal(scale=dth, size=s1.rot.shape) * free[:, 2]
    s1.multipliers += rng.normal(scale=0.1 * np.abs(s1.multipliers).max(),
                                 size=s1.multipliers.shape)
    return s1


@pytest.mark.parametrize("model", ["crank", "slanted"])
def test_the_compiled_evaluation_is_the_general_one(model):
    """Residual, reference, tangent and velocities at perturbed states after some steps."""
    state, _, step = run(crank(20) if model == "crank" else slanted(20))
    integ = step.integrator
    assert isinstance(integ._planar, planar.PlanarStep) and integ.extras
    assert len(integ._planar.joints["sconn"]) == 1 + (model == "slanted")
    rng = np.random.default_rng(7)
    for _ in range(3):
        s1 = perturbed(integ, state, rng)
        integ._planar._last = None
        integ._cache = None
        r, scale, K = integ._planar.evaluate(integ, state, s1, True)
        v = s1.v.copy()
        s1.v[:] = 0.0
        r_ref, scale_ref, K_ref = MidpointRule.evaluate(integ, state, s1, True)
        assert np.abs(r - r_ref).max() <= 1e-13 * np.abs(r_ref).max()
        assert np.allclose(scale, scale_ref, rtol=1e-14, atol=0)
        assert np.abs(K - K_ref).max() <= 1e-13 * np.abs(K_ref).max()
        assert np.abs(v - s1.v).max() <= 1e-13 * np.abs(s1.v).max()


def test_the_consistent_inertia_kernel_is_the_numpy_reference():
    """Element forces, tangents and the trial director rates of
    :func:`~fem.integrators.planar_inertia_kernel.consistent` against
    :meth:`fem.inertia.beam.ConsistentBeamInertia.midpoint_force` and ``_trial``, element by
    element (an identity scatter), and the director rates of a state, stored and stale."""
    from fem.integrators import planar_inertia_kernel as ik
    from fem.integrators.planar_inertia import consistent_data, director_rates

    state, _, step = run(slanted(20))
    integ = step.integrator
    (x,) = integ.extras
    data = consistent_data(integ)
    E = len(x.mu)
    rng = np.random.default_rng(11)
    ud0 = director_rates(ik, data, state)
    assert np.isfinite(state.rates[x.name]["nodal_rot"]).all()      # stored rates, used
    assert np.array_equal(ud0, x.director_rates(state)[:, :, :2])
    assert np.abs(ud0 - np.cross([0, 0, 1.0], x._directors(state.rotation_matrices())[..., :3])
                  [..., :2] * state.v[x.conn, 2, None]).max() > 1e-6   # not the rigid ones
    stale = state.copy()
    stale.v[x.conn[1, 1], 2] += 0.1                   # elements 1 and 2 take the rigid rates
    got, ref = director_rates(ik, data, stale), x.director_rates(stale)[:, :, :2]
    assert np.abs(got - ref).max() <= 1e-14 * np.abs(ref).max()     # w x R a: sums in order
    assert np.array_equal(got[0], ud0[0]) and not np.array_equal(got[1], ud0[1])
    h = integ.h
    for _ in range(3):
        s1 = perturbed(integ, state, rng)
        s1.v[:] = 2 * (s1.u - state.u) / h - state.v          # the mid-point velocities
        f_ref, K_ref = x.midpoint_force(state, s1, integ.kinematics(state, s1), h)
        f, K = np.zeros(E * 6), np.zeros(E * 36 + 1)
        ud1 = np.empty((E, 2, 2))
        ik.consistent(state.rot, s1.rot, state.v, s1.v, data["conn"], data["axis"],
                      data["mu"], data["pattern"], ud0, h, np.arange(E * 6).reshape(E, 6),
                      np.arange(E * 36), True, ud1, f, K)
        assert np.abs(f.reshape(E, 6) - f_ref).max() <= 1e-13 * np.abs(f_ref).max()
        assert np.abs(K[:-1].reshape(E, 6, 6) - K_ref).max() <= 1e-13 * np.abs(K_ref).max()
        u1 = x._trial(state, s1, h)[3][:, 1::2, :2]
        assert np.abs(ud1 - u1).max() <= 1e-13 * np.abs(u1).max()


def test_the_slide_kernel_is_the_general_paths_rows():
    """The slide rows of the inline and prismatic joints (both nodes turning, at offsets,
    slanted lines) against the general path's constraint groups paired with ``psi``."""
    state, _, step = run(slanted(20))
    integ = step.integrator
    dm = integ.system.dofmap
    rng = np.random.default_rng(5)
    jt, jk, on = integ._planar.joints, integ._planar.joint_kernel, integ.chord_nodes()
    assert on[jt["sconn"][0, 1]] and not on[jt["sconn"][0, 0]]    # the line's node a body's
    for _ in range(3):
        s1 = perturbed(integ, state, rng, dth=5e-2)
        f_c, K_c = integ._cayley_rows(integ.kinematics(state, s1),
                                      *integ.system.constraint_step(state, s1))
        f, K = np.zeros(dm.n_active), np.zeros(len(K_c))
        set_targets(jt, s1.t)                       # the driven pivot's angle at s1
        jk.revolute(state.u, s1.u, state.rot, s1.rot, jt["conn"], jt["offsets"], jt["mpos"],
                    s1.multipliers, jt["scale"], on, jt["edofs"], jt["slot"], True, f, K)
        jk.angles(state.rot, s1.rot, jt["aconn"], jt["ampos"], s1.multipliers, jt["ascale"],
                  jt["atarget"], on, jt["aedofs"], jt["aslot"], True, f, K)
        f_s = f.copy()
        jk.slides(state.u, s1.u, state.rot, s1.rot, jt["sconn"], jt["soffsets"], jt["sframe"],
                  jt["smpos"], s1.multipliers, jt["sscale"], on, jt["sedofs"], jt["sslot"],
                  True, f, K)
        assert np.abs(f - f_s).max() > 1e-3 * np.abs(f_c).max()       # the slides act
        assert np.abs(f - f_c).max() <= 1e-14 * np.abs(f_c).max()
        # 1e-12: the rates of jl(t) v cancel as in the revolute rows (test_planar_multibody)
        assert np.abs(K - K_c).max() <= 1e-12 * np.abs(K_c).max()


@pytest.mark.parametrize("model", ["crank", "slanted"])
def test_the_crank_steps_as_the_general_path(model, monkeypatch):
    """The same iterations, norms and states (to 1e-12) as the general path with MUMPS, every
    step compiled; the director rates, the driver's work and the energy balance too.

    Norms to 1e-8 of each step's first: the residual resolves no better, its inertial part
    ``2 m (x_1 - x_0) / h^2`` carrying ``4 eps |x| m / h^2`` with h = 1e-5 (1e-10 N at the rod's
    nodes, first norms about 0.1 N). Velocities ``2 (x_1 - x_0) / h - v_0`` carry the positions'
    round-off times ``2 / h``; the multipliers of the stiff joint rows (scales about 3e7) that
    round-off times the rows' condition.
    """
    calls = []
    iterate = planar.PlanarStep.iterate
    monkeypatch.setattr(planar.PlanarStep, "iterate",
                        lambda self, *a: calls.append(got := iterate(self, *a)) or got)
    deck = crank(40) if model == "crank" else slanted(40)
    h = deck["steps"][0]["time_step"]
    fast, its, step = run(deck)
    monkeypatch.undo()
    assert len(calls) == 40 and all(c is not None for c in calls)
    slow, its_ref, step_ref = run(deck, general=True, monkeypatch=monkeypatch)
    assert step_ref.integrator._planar is None
    assert [i for i, _ in its] == [i for i, _ in its_ref] and sum(i for i, _ in its) >= 40
    for (_, n), (_, n_ref) in zip(its, its_ref, strict=True):
        assert np.abs(np.subtract(n, n_ref)).max() <= 1e-8 * n_ref[0]
    for a, b in ((fast.u, slow.u), (fast.rot, slow.rot)):
        assert np.abs(a - b).max() <= 1e-12 * np.abs(b).max()
    x = np.abs(slow.u).max()
    dv = 1e-12 * x * 2 / h
    assert np.abs(fast.v - slow.v).max() <= dv
    a, b = fast.rates["rod"], slow.rates["rod"]
    assert np.array_equal(a["nodal_v"], fast.v[step.integrator.extras[0].conn])
    assert np.abs(a["v"] - b["v"]).max() <= dv
    lam, lam_ref = fast.multipliers, slow.multipliers
    assert np.abs(lam - lam_ref).max() <= 1e-9 * np.abs(lam_ref).max()
    # the strain energy to 1e-12, the kinetic as accurately as the velocities (dT/T = 2 dv/v);
    # the driver's work -lambda dtheta (and the balance that books it) as the multipliers
    T = max(r["kinetic"] for r in step_ref.history)
    W = abs(step_ref.history[-1]["constraint_work"])
    assert W > 1e-3 * T                                               # the driver works
    for key, tol in (("kinetic", 2 * T * dv / np.abs(slow.v).max()), ("strain", 1e-12 * T),
                     ("constraint_work", 1e-9 * W), ("total", 1e-9 * W)):
        E = np.array([r[key] for r in step.history])
        E_ref = np.array([r[key] for r in step_ref.history])
        assert np.abs(E - E_ref).max() <= tol, key


def test_what_the_compiled_step_does_not_take_is_named(caplog):
    """Element inertia groups other than the consistent beams', and consistent inertia on nodes
    that do not turn by Cayley parameters, keep the general path with the reason logged (driven
    prismatic joints: ``tests/test_planar_multibody.py``)."""
    import logging

    from fem.inertia.beam import ConsistentBeamInertia

    _, _, step = run(crank(1))
    integ = step.integrator
    assert planar.PlanarStep.eligible(integ) is None

    class Other(ConsistentBeamInertia):         # any other kind of element inertia group
        pass

    (x,) = integ.extras
    other = copy.copy(x)
    other.__class__ = Other
    integ.extras = [other]
    with caplog.at_level(logging.INFO, logger="fem.integrators.planar"):
        assert planar.PlanarStep.make(integ) is None
    assert any("element inertia group 'rod' (Other): only the consistent inertia of "
               "co-rotational beams is compiled" in m for m in caplog.messages)
    integ.extras = [x]
    integ._chord_nodes = np.zeros_like(integ.chord_nodes())
    assert planar.PlanarStep.eligible(integ) == (
        "element inertia group 'rod': consistent inertia on nodes that do not turn by Cayley "
        "parameters")
