"""The compiled generalized-alpha step of planar beam models (fem.integrators.planar_alpha) is
the general path's.

Whole runs of the pinned L-frame of ``tests/test_planar_step.py`` (two beam groups, Euler-Bernoulli
and Timoshenko, a point mass, gravity and a time-varying load) with generalized-alpha and the
trapezoidal rule, through the compiled loop and through the general Newton loop: the same
iterations each step, residual norms, states, rates and energy balance to round-off (the element
forces are summed in another order); a step the loop cannot finish goes the general way; the
models it does not take keep the general path, each with its reason.
"""

import copy

import numpy as np
import pytest
from test_planar_step import changed, frame

from fem.integrators import planar_alpha
from fem.io.deck import from_dict
from fem.run import make_step
from fem.system import System

pytest.importorskip("numba")


def alpha_frame(integrator: str = "generalized_alpha", steps: int = 40) -> dict:
    deck = frame(steps=steps)
    deck["steps"][0].update(integrator=integrator, tolerance=1e-11, output_interval=8e-3)
    if integrator == "generalized_alpha":
        deck["steps"][0]["rho_inf"] = 0.7
    return deck


def run(deck, monkeypatch=None, compiled=True):
    """Final state, (iterations, residual norms) of every time step and the step; ``compiled``
    false: the general path (the compiled step not made)."""
    if not compiled:
        monkeypatch.setattr(planar_alpha.PlanarAlphaStep, "make",
                            classmethod(lambda cls, integ: None))
    dk = from_dict(copy.deepcopy(deck))
    sysm = System(dk.model)
    state = sysm.reference_state()
    step = make_step(dk.steps[0], sysm, dk)
    its = []
    step.on_step = lambda s: its.append((step._stats["iterations"], list(step.test.norms)))
    step.run(state, None)
    if not compiled:
        monkeypatch.undo()
    return state, its, step


def same_norms(its, its_ref):
    """The residual norms of every iteration agree, but the last's: at round-off (the test's
    floor) in both, where the sums' order shows."""
    for (_, norms), (_, ref) in zip(its, its_ref, strict=True):
        assert len(norms) == len(ref) >= 2
        assert np.allclose(norms[:-1], ref[:-1], rtol=1e-6, atol=0)
        assert max(norms[-1], ref[-1]) <= 1e-9 * ref[0]


@pytest.mark.parametrize("integrator", ["generalized_alpha", "trapezoidal"])
def test_the_compiled_time_step_iterates_as_the_general_newton_loop(integrator, monkeypatch):
    calls = []
    iterate = planar_alpha.PlanarAlphaStep.iterate
    monkeypatch.setattr(planar_alpha.PlanarAlphaStep, "iterate",
                        lambda self, *a: calls.append(1) or iterate(self, *a))
    deck = alpha_frame(integrator)
    fast, its, step = run(deck)
    monkeypatch.undo()
    assert len(calls) == 40 and isinstance(step.integrator._planar,
                                           planar_alpha.PlanarAlphaStep)
    slow, its_ref, step_ref = run(deck, monkeypatch, compiled=False)
    assert step_ref.integrator._planar is None
    assert [i for i, _ in its] == [i for i, _ in its_ref] and sum(i for i, _ in its) > 40
    same_norms(its, its_ref)
    for a, b in ((fast.u, slow.u), (fast.rot, slow.rot), (fast.v, slow.v)):
        assert np.abs(a - b).max() <= 1e-12 * np.abs(b).max()
    # Newmark's a1 = (du - ...) / (beta h^2): the states' round-off, 1 / (beta h^2) = 1e6 larger
    assert np.abs(fast.a - slow.a).max() <= 1e-10 * np.abs(slow.a).max()
    # the energy balance of every frame: strain, kinetic, external work, and their balance
    # (total, which cancels: held to the energies' size)
    assert len(step.history) == len(step_ref.history) >= 5
    size = max(abs(r[k]) for r in step_ref.history for k in ("strain", "kinetic"))
    for key in ("strain", "kinetic", "external_work", "total"):
        x = np.array([r[key] for r in step.history])
        y = np.array([r[key] for r in step_ref.history])
        assert np.abs(x - y).max() <= 1e-12 * size, key


def test_a_prescribed_support_motion_steps_as_in_the_general_loop(monkeypatch):
    """The pin dragged sideways: the reactions (the residual's fixed rows) do the constraint
    work the energy balance books, as in the general path."""
    deck = alpha_frame(steps=30)
    deck["functions"].append({"name": "drag", "type": "table",
                              "points": [[0.0, 0.0], [0.03, 1.0], [0.06, 0.0]]})
    deck["prescribed"] = [{"name": "move", "nodes": "pin", "dof": "ux", "value": 0.05,
                           "function": "drag"}]
    deck["steps"][0]["prescribed"] = ["move"]
    fast, its, step = run(deck)
    assert isinstance(step.integrator._planar, planar_alpha.PlanarAlphaStep)
    slow, its_ref, step_ref = run(deck, monkeypatch, compiled=False)
    assert [i for i, _ in its] == [i for i, _ in its_ref]
    assert np.abs(fast.u - slow.u).max() <= 1e-12 * np.abs(slow.u).max()
    W = np.array([r["constraint_work"] for r in step.history])
    W_ref = np.array([r["constraint_work"] for r in step_ref.history])
    assert np.abs(W).max() > 1e-3
    assert np.allclose(W, W_ref, rtol=1e-9, atol=1e-15)


def test_a_step_the_compiled_loop_cannot_finish_goes_the_general_way(monkeypatch):
    """One iteration allowed: the compiled loop gives up where the first correction leaves a
    residual above the tolerance (5e-10 to 3.5e-9 of the first, far above the paths' round-off), the
    general path halves the step as it always does, and the run ends where the general path
    alone ends."""
    deck = alpha_frame(steps=5)
    deck["steps"][0].update(max_iterations=1, tolerance=1e-9)
    fast, its, step = run(deck)
    assert isinstance(step.integrator._planar, planar_alpha.PlanarAlphaStep)
    slow, its_ref, step_ref = run(deck, monkeypatch, compiled=False)
    assert step.cuts == step_ref.cuts > 10
    assert [i for i, _ in its] == [i for i, _ in its_ref]
    for (_, norms), (_, ref) in zip(its, its_ref, strict=True):
        # the inertial forces M du / (beta h^2) carry the states' round-off 1e6-fold
        assert np.allclose(norms, ref, rtol=1e-6, atol=1e-11 * ref[0])
    assert np.abs(fast.u - slow.u).max() <= 1e-12 * np.abs(slow.u).max()


@pytest.mark.parametrize(("change", "reason"), [
    (None, None), ("joint", "joints or ties"), ("follower", "loads that turn with the structure"),
    ("consistent", "element inertia groups"),
    ("fem_jit_0", "numba is not installed, or FEM_JIT = 0")])
def test_eligible_says_why_a_model_keeps_the_general_path(change, reason, monkeypatch):
    deck = changed(change, monkeypatch, steps=1)
    deck["steps"][0]["integrator"] = "generalized_alpha"
    reasons = []
    eligible = planar_alpha.PlanarAlphaStep.eligible
    monkeypatch.setattr(planar_alpha.PlanarAlphaStep, "eligible",
                        staticmethod(lambda integ: reasons.append(eligible(integ)) or reasons[-1]))
    dk = from_dict(copy.deepcopy(deck))
    sysm = System(dk.model)
    step = make_step(dk.steps[0], sysm, dk)
    step.run(sysm.reference_state(), None)
    assert reasons and reasons[0] == reason
    assert (step.integrator._planar is None) == (reason is not None)


PENDULUM = """
[model]
dim = 2
[[materials]]
name = "m"
E = 1.0e4
nu = 0.0
[[sections]]
name = "s"
A = 1.0
Iz = 1e-3
mass_per_length = 0.5
rotary_inertia_per_length = 5e-4
[nodes]
coordinates = [[0.0, 0.0], [2.0, 0.0]]
[sets]
pin = [1]
[[elements]]
name = "beam"
type = "beam"
formulation = "corotational"
material = "m"
section = "s"
connectivity = [[1, 2]]
divisions = 6
[[supports]]
nodes = "pin"
fixed = ["ux", "uy"]
[gravity]
acceleration = [0.0, -9.81]
[[steps]]
name = "swing"
type = "dynamic"
integrator = "generalized_alpha"
time_step = 0.00390625
duration = 0.125
output_interval = 0.0078125
[output]
checkpoint_interval = 4
"""


def test_a_restart_continues_to_the_same_bits(tmp_path):
    """A step's result depends on its start state alone (the start forces are the kernel's,
    not kept from the step before): continued from a checkpoint in the middle, the pendulum
    writes the file of the run that was not stopped, bit for bit (as tests/test_restart.py
    asks of every step type)."""
    import shutil

    import h5py
    from test_restart import differences

    from fem.io import deck as deck_io
    from fem.run import run as run_deck

    path = tmp_path / "pendulum.toml"
    path.write_text(PENDULUM)
    full = tmp_path / "full.h5"
    run_deck(deck_io.load(str(path)), str(full))
    with h5py.File(full, "r") as h5:
        marks = sorted(int(k) for k in h5["steps/swing/checkpoints"])
    assert len(marks) >= 3
    out = tmp_path / "part.h5"
    shutil.copy(full, out)
    run_deck(deck_io.load(str(path)), str(out), restart=f"{out}:swing:{marks[1]}")
    assert differences(full, out) == []
