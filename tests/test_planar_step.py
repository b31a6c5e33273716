"""The compiled evaluation of planar beam models (fem.integrators.planar) is the general path's.

Residual, reference and tangent at perturbed states after some steps (the beams' algorithmic
deformations drifted, time-dependent loads, point masses, Timoshenko and Euler-Bernoulli groups,
pins) to round-off; whole runs to round-off; the models it does not take keep the general path.
"""

import copy

import numpy as np
import pytest

from fem.integrators import planar
from fem.integrators.midpoint import MidpointRule
from fem.io.deck import from_dict
from fem.run import make_step
from fem.system import System

pytest.importorskip("numba")


def frame(h: float = 2e-3, steps: int = 20) -> dict:
    """A pinned L-frame of two beam groups under gravity and a time-varying tip load."""
    return {
        "model": {"dim": 2, "title": "pinned L-frame"},
        "materials": [{"name": "m", "E": 2.0e4, "nu": 0.3}],
        "sections": [{"name": "eb", "A": 1.0, "Iz": 1.0e-3, "mass_per_length": 0.5,
                      "rotary_inertia_per_length": 1e-3},
                     {"name": "tim", "A": 0.8, "Iz": 2.0e-3, "Ay": 0.6, "mass_per_length": 0.3,
                      "rotary_inertia_per_length": 2e-3}],
        "nodes": {"coordinates": [[0.0, 0.0], [1.0, 0.0], [1.0, -0.7]]},
        "sets": {"pin": [1], "corner": [2], "tip": [3]},
        "elements": [{"name": "arm", "type": "beam", "formulation": "corotational",
                      "material": "m", "section": "eb", "connectivity": [[1, 2]],
                      "divisions": 5},
                     {"name": "leg", "type": "beam", "formulation": "corotational",
                      "theory": "timoshenko", "material": "m", "section": "tim",
                      "connectivity": [[2, 3]], "divisions": 4}],
        "masses": [{"nodes": "corner", "mass": 0.2, "inertia": 0.01}],
        "supports": [{"nodes": "pin", "fixed": ["ux", "uy"]}],
        "functions": [{"name": "ramp", "type": "table", "points": [[0.0, 0.0], [1.0, 1.0]]}],
        "gravity": {"acceleration": [0.0, -9.81]},
        "loads": [{"name": "push", "nodes": "tip", "force": [3.0, 1.0], "moment": 0.4,
                   "function": "ramp"}],
        "steps": [{"name": "swing", "type": "dynamic", "integrator": "energy_conserving",
                   "time_step": h, "duration": h * steps, "output_interval": h * steps}]}


def run(deck: dict, general: bool = False, monkeypatch=None):
    """Run the deck's step; returns (state, step). ``general``: without the compiled path."""
    if general:
        monkeypatch.setattr(planar.PlanarStep, "make", classmethod(lambda cls, integ: None))
    dk = from_dict(copy.deepcopy(deck))
    sysm = System(dk.model)
    state = sysm.reference_state()
    step = make_step(dk.steps[0], sysm, dk)
    step.run(state, None)
    if general:
        monkeypatch.undo()
    return state, step


def test_the_compiled_evaluation_is_the_general_one():
    state, step = run(frame())
    integ = step.integrator
    assert isinstance(integ._planar, planar.PlanarStep)
    rng = np.random.default_rng(7)
    active = integ.system.dofmap.index >= 0
    fixed = integ.system.dofmap.fixed
    for trial in range(4):
        s0 = state
        s1 = s0.copy()
        s1.t = s0.t + integ.h
        du = rng.normal(scale=1e-3, size=s1.u.shape) * (active & ~fixed)
        s1.u[:, :2] += du[:, :2]
        s1.rot += rng.normal(scale=2e-2, size=s1.rot.shape)
        integ._planar._last = None
        integ._cache = None
        r, scale, K = integ._planar.evaluate(integ, s0, s1, True)
        v = s1.v.copy()
        s1.v[:] = 0.0
        r_ref, scale_ref, K_ref = MidpointRule.evaluate(integ, s0, s1, True)
        assert np.abs(r - r_ref).max() <= 1e-13 * np.abs(r_ref).max()
        assert np.allclose(scale, scale_ref, rtol=1e-14, atol=0)
        assert np.abs(K - K_ref).max() <= 1e-13 * np.abs(K_ref).max()
        assert np.abs(v - s1.v).max() <= 1e-13 * np.abs(s1.v).max()
        strain, work = integ._planar.finish(integ, s0, s1)
        integ._cache = None
        strain_ref, work_ref = integ._finish(s0, s1)
        assert strain == pytest.approx(strain_ref, rel=1e-13)
        assert work == pytest.approx(work_ref, rel=1e-12, abs=1e-15 * abs(strain_ref))


def test_runs_agree_with_the_general_path(monkeypatch):
    deck = frame(steps=60)
    fast, step = run(deck)
    assert isinstance(step.integrator._planar, planar.PlanarStep)
    slow, step_ref = run(deck, general=True, monkeypatch=monkeypatch)
    assert step_ref.integrator._planar is None
    for a, b in ((fast.u, slow.u), (fast.rot, slow.rot), (fast.v, slow.v)):
        assert np.abs(a - b).max() <= 1e-10 * np.abs(b).max()
    for name in ("arm", "leg"):
        assert np.allclose(fast.history[name]["v"], slow.history[name]["v"],
                           rtol=0, atol=1e-12)


def iterations(deck, monkeypatch=None, compiled=True):
    """Final state and Newton iterations of every time step; ``compiled`` false: the planar
    evaluation with the general Newton loop (the compiled time step always falls back)."""
    if not compiled:
        monkeypatch.setattr(planar.PlanarStep, "iterate", lambda self, *a: None)
    dk = from_dict(copy.deepcopy(deck))
    sysm = System(dk.model)
    state = sysm.reference_state()
    step = make_step(dk.steps[0], sysm, dk)
    its = []
    step.on_step = lambda s: its.append((step._stats["iterations"], step._stats["residual"]))
    step.run(state, None)
    if not compiled:
        monkeypatch.undo()
    return state, its, step


def test_the_compiled_time_step_iterates_as_the_general_newton_loop(monkeypatch):
    """The same iterations, residual norms and states: the convergence test, floors and
    corrections of fem.solvers.newton, written out (fem.integrators.planar_newton_kernel)."""
    calls = []
    iterate = planar.PlanarStep.iterate
    monkeypatch.setattr(planar.PlanarStep, "iterate",
                        lambda self, *a: calls.append(1) or iterate(self, *a))
    deck = frame(steps=60)
    deck["steps"][0]["tolerance"] = 1e-11
    fast, its, _ = iterations(deck)
    monkeypatch.undo()
    assert len(calls) == 60
    slow, its_ref, _ = iterations(deck, monkeypatch, compiled=False)
    assert [i for i, _ in its] == [i for i, _ in its_ref] and sum(i for i, _ in its) > 60
    assert np.allclose([r for _, r in its], [r for _, r in its_ref], rtol=1e-6, atol=0)
    for a, b in ((fast.u, slow.u), (fast.rot, slow.rot), (fast.v, slow.v)):
        assert np.abs(a - b).max() <= 1e-12 * np.abs(b).max()


def test_a_prescribed_support_motion_steps_as_in_the_general_loop(monkeypatch):
    """The pin dragged sideways: the prescribed values are set before the compiled loop, the
    reactions (the residual's fixed rows) do the constraint work the energy balance books."""
    deck = frame(steps=40)
    deck["functions"].append({"name": "drag", "type": "table",
                              "points": [[0.0, 0.0], [0.04, 1.0], [0.08, 0.0]]})
    deck["prescribed"] = [{"name": "move", "nodes": "pin", "dof": "ux", "value": 0.05,
                           "function": "drag"}]
    deck["steps"][0].update(prescribed=["move"], tolerance=1e-11, output_interval=8e-3)
    fast, its, step = iterations(deck)
    slow, its_ref, step_ref = iterations(deck, monkeypatch, compiled=False)
    assert [i for i, _ in its] == [i for i, _ in its_ref]
    assert np.abs(fast.u - slow.u).max() <= 1e-12 * np.abs(slow.u).max()
    W = np.array([r["constraint_work"] for r in step.history])
    W_ref = np.array([r["constraint_work"] for r in step_ref.history])
    assert len(W) >= 10 and np.abs(W).max() > 1e-3
    assert np.allclose(W, W_ref, rtol=1e-9, atol=1e-15)
    E = np.array([r["total"] for r in step.history])     # the balance books the drag's work
    assert np.abs(E - E[0]).max() <= 1e-8 * np.abs(W).max()


def test_a_step_the_compiled_loop_cannot_finish_goes_the_general_way(monkeypatch):
    """Two iterations allowed: the compiled loop gives up, the general path halves the step as
    it always does, and the run ends where the general path alone ends."""
    deck = frame(steps=5)
    deck["steps"][0]["max_iterations"] = 2
    deck["steps"][0]["tolerance"] = 1e-12
    fast, its, step = iterations(deck)
    slow, its_ref, step_ref = iterations(deck, monkeypatch, compiled=False)
    assert step.cuts == step_ref.cuts > 0
    assert [i for i, _ in its] == [i for i, _ in its_ref]
    assert np.allclose([r for _, r in its], [r for _, r in its_ref], rtol=1e-6, atol=0)
    assert np.abs(fast.u - slow.u).max() <= 1e-12 * np.abs(slow.u).max()


def test_free_flight_conserves_energy_and_momenta_exactly():
    """The energy-conserving scheme's invariants (Crisfield & Shi), through the compiled path."""
    deck = frame(h=5e-3, steps=400)
    deck["supports"], deck["loads"] = [], []
    del deck["gravity"]
    deck["velocities"] = [{"name": "spin", "angular_velocity": 3.0},
                          {"name": "kick", "nodes": "tip", "velocity": [0.0, 2.0]}]
    deck["steps"][0]["velocities"] = ["spin", "kick"]
    deck["steps"][0]["output_interval"] = 5e-3 * 20
    deck["steps"][0]["tolerance"] = 1e-11
    _, step = run(deck)
    assert isinstance(step.integrator._planar, planar.PlanarStep)
    E = np.array([r["total"] for r in step.history])
    P = np.array([r["linear_momentum"] for r in step.history])
    L = np.array([r["angular_momentum"] for r in step.history])
    assert len(E) >= 20 and np.ptp([r["strain"] for r in step.history]) > 1e-3 * E[0]
    assert np.max(np.abs(E - E[0])) <= 1e-10 * E[0]
    assert np.max(np.linalg.norm(P - P[0], axis=1)) <= 1e-10 * np.linalg.norm(P[0])
    assert np.max(np.linalg.norm(L - L[0], axis=1)) <= 1e-10 * np.linalg.norm(L[0])


def changed(change: str | None, monkeypatch, steps: int) -> dict:
    """The L-frame with one thing the compiled step does not take."""
    deck = frame(steps=steps)
    if change == "linear":
        deck["elements"][1]["formulation"] = "linear"
    elif change == "joint":               # undriven prismatic joints are taken, driven not
        deck["joints"] = [{"name": "hinge", "type": "prismatic", "ground": [3],
                           "axis": [1.0, 0.0], "drive": "ramp"}]
    elif change == "follower":
        deck["loads"][0]["kind"] = "follower"
    elif change == "consistent":                  # taken: the compiled consistent inertia
        deck["elements"][0]["inertia"] = "consistent"
    elif change == "fem_jit_0":
        monkeypatch.setenv("FEM_JIT", "0")
    return deck


@pytest.mark.parametrize("change", ["linear", "joint", "follower", "fem_jit_0"])
def test_other_models_keep_the_general_path(change, monkeypatch):
    deck = changed(change, monkeypatch, steps=2)
    try:
        _, step = run(deck)
    except Exception as err:        # a deck this test spells wrong is not the point
        pytest.fail(f"{change}: {err}")
    assert step.integrator._planar is None


@pytest.mark.parametrize(("change", "reason"), [
    (None, None),
    ("joint", "constraint group 'hinge': driven prismatic joints are not compiled"),
    ("follower", "loads that turn with the structure"),
    ("consistent", None),
    ("linear", "element group 'leg' (beam) has no compiled 2D beam energy-conserving kernel"),
    ("fem_jit_0", "numba is not installed, or FEM_JIT = 0")])
def test_eligible_says_why_a_model_keeps_the_general_path(change, reason, monkeypatch):
    """From what the model and its groups declare (their compiled pairs): the L-frame is
    taken; each change names what the compiled step does not take."""
    deck = changed(change, monkeypatch, steps=1)
    reasons = []
    eligible = planar.PlanarStep.eligible
    monkeypatch.setattr(planar.PlanarStep, "eligible",
                        staticmethod(lambda integ: reasons.append(eligible(integ)) or reasons[-1]))
    _, step = run(deck)
    assert reasons and reasons[0] == reason
    assert (step.integrator._planar is None) == (reason is not None)
