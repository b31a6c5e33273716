"""Several compiled time steps per call are the step-by-step path (issue 32).

:class:`fem.integrators.planar_run.PlanarRun` advances the energy-conserving time steps of a
planar model between two frames in one compiled call. The reference is the same run with one
time step at a time (``PlanarRun.make`` returning None; :meth:`fem.analysis.dynamic.DynamicStep.
_advance`, itself tested against the general path in ``tests/test_planar_step.py`` and
``tests/test_planar_multibody.py``): every step's iterations and residual norms, the final state,
the frames' times and energy balance, the steps and the halvings, on the flexible pendulum of
``benchmarks/small_models.py`` (with a time-dependent tip load), on a chain of rigid bars on
revolute joints, on the chain with a flexible arm pinned at offsets, on that chain with its
pivot driven (the drive's targets and the driver's work) and on Meijaard's slider-crank (the
consistent beam inertia's director rates carried through a run, a driven pivot, a slide row);
a step that does not converge inside a run is handed back and cut back as before; and the steps
it does not take go one at a time with the reason logged.
"""

import copy
import logging
import tomllib
from pathlib import Path

import numpy as np
import pytest
from conftest import record_made

from benchmarks.small_models import pendulum_deck
from fem.analysis import dynamic
from fem.integrators import planar_run
from fem.io.deck import from_dict
from fem.run import make_step
from fem.system import System

pytest.importorskip("numba")

L, M, G = 0.1, 1.0, 9.81
CRANK = Path(__file__).resolve().parents[1] / "cases" / "slider_crank_meijaard" / "deck.toml"


def chain(n: int = 6, beam: bool = False, drive: bool = False) -> dict:
    """``n`` rigid bars (1 kg, 0.1 m) pinned end to end and to the ground, released horizontal.

    ``beam``: a flexible arm of 4 co-rotational beams pinned to the last bar's end at offsets
    (as ``tests/test_planar_multibody.py``'s); ``drive``: the pivot turned at 2 rad/s.
    """
    X = [[(i + 0.5) * L, 0.0] for i in range(n)]
    joints = [{"name": "pivot", "type": "revolute", "ground": [1], "points": [[0.0, 0.0]]},
              {"name": "pins", "type": "revolute", "pairs": [[i, i + 1] for i in range(1, n)],
               "points": [[i * L, 0.0] for i in range(1, n)]}]
    deck = {"model": {"dim": 2, "title": f"chain of {n} bars"},
            "nodes": {"coordinates": X},
            "bodies": [{"name": "bars", "nodes": list(range(1, n + 1)), "mass": M,
                        "inertia": M * L**2 / 12}],
            "joints": joints,
            "gravity": {"acceleration": [0.0, -G]},
            "steps": [{"name": "fall", "type": "dynamic", "integrator": "energy_conserving",
                       "time_step": 1e-3, "duration": 0.05, "output_interval": 0.007}]}
    if beam:
        X += [[n * L + 0.02, 0.0], [n * L + 0.42, 0.0]]
        deck["materials"] = [{"name": "m", "E": 1.0e5, "nu": 0.3}]
        deck["sections"] = [{"name": "s", "A": 1e-2, "Iz": 1e-6, "mass_per_length": 1.0,
                             "rotary_inertia_per_length": 1e-4}]
        deck["elements"] = [{"name": "arm", "type": "beam", "formulation": "corotational",
                             "material": "m", "section": "s", "connectivity": [[n + 1, n + 2]],
                             "divisions": 4}]
        joints.append({"name": "elbow", "type": "revolute", "pairs": [[n, n + 1]],
                       "points": [[n * L, 0.0]]})
    if drive:
        deck["functions"] = [{"name": "turn", "type": "steady", "rate": -2.0}]
        joints[0]["drive"] = "turn"
    return deck


def pendulum(**step) -> dict:
    """The 10-element pendulum, 50 steps of 1e-3 s, frames every 7 ms, a pulsed tip load."""
    d = pendulum_deck(10)
    d["steps"][0].update({"duration": 0.05, "output_interval": 0.007, **step})
    d["functions"] = [{"name": "pulse", "type": "table",
                       "points": [[0.0, 0.0], [0.02, 1.0], [0.03, 0.0]]}]
    d["loads"] = [{"name": "push", "nodes": 2, "force": [0.0, 2.0], "function": "pulse"}]
    return d


def crank(steps: int = 40, every: int = 7) -> dict:
    """Meijaard's slider-crank (the case: consistent beam inertia, a driven pivot), ``steps``
    of its time step, frames every ``every`` steps."""
    with open(CRANK, "rb") as fh:
        deck = tomllib.load(fh)
    spec = deck["steps"][0]
    spec["duration"] = spec["time_step"] * steps
    spec["output_interval"] = spec["time_step"] * every
    return deck


def run(deck: dict, monkeypatch, batched: bool):
    """Run the deck's step; (state, step, (iterations, norms) of every step).

    ``batched = False``: one time step at a time (the reference).
    """
    record = []
    make = planar_run.PlanarRun.make.__func__

    def made(cls, step):
        runs = make(cls, step) if batched else None
        if runs is not None:
            runs.record = record
        return runs

    monkeypatch.setattr(planar_run.PlanarRun, "make", classmethod(made))
    dk = from_dict(copy.deepcopy(deck))
    sysm = System(dk.model)
    state = sysm.reference_state()
    step = make_step(dk.steps[0], sysm, dk)
    one = step._advance

    def advance(s0):                       # the steps taken one at a time, recorded too
        out = one(s0)
        record.append((step._stats["iterations"], list(step.test.norms)))
        return out

    step._advance = advance
    step.run(state, None)
    monkeypatch.undo()
    return state, step, record


def assert_same_run(a, b) -> None:
    """Two runs' states, steps, frames and energies, and every step's iterations and norms."""
    (sa, step_a, rec_a), (sb, step_b, rec_b) = a, b
    assert (step_a.steps, step_a.cuts) == (step_b.steps, step_b.cuts)
    assert [i for i, _ in rec_a] == [i for i, _ in rec_b]
    for (_, na), (_, nb) in zip(rec_a, rec_b, strict=True):
        np.testing.assert_allclose(na, nb, rtol=1e-12, atol=0.0)
    for name in ("u", "rot", "v", "a", "multipliers"):
        x, y = getattr(sa, name), getattr(sb, name)
        scale = max(1.0, np.abs(y).max(initial=0.0))
        np.testing.assert_allclose(x, y, rtol=0.0, atol=1e-12 * scale, err_msg=name)
    for name in ("history", "rates"):     # the element history, the director rates
        fa, fb = getattr(sa, name), getattr(sb, name)
        assert fa.keys() == fb.keys()
        for g, fields in fb.items():
            assert fa[g].keys() == fields.keys()
            for key, y in fields.items():
                np.testing.assert_allclose(fa[g][key], y, rtol=1e-12, atol=0.0,
                                           err_msg=f"{name} {g} {key}")
    assert sa.t == sb.t
    assert [r["time"] for r in step_a.history] == [r["time"] for r in step_b.history]
    for ra, rb in zip(step_a.history, step_b.history, strict=True):
        for key in rb:
            np.testing.assert_allclose(ra[key], rb[key], rtol=1e-12, atol=1e-14, err_msg=key)


@pytest.mark.parametrize("deck", [pendulum(), chain(), chain(beam=True)],
                         ids=["pendulum", "chain", "chain+arm"])
def test_runs_of_compiled_steps_are_the_step_by_step_path(deck, monkeypatch):
    batched = run(deck, monkeypatch, batched=True)
    one = run(deck, monkeypatch, batched=False)
    assert_same_run(batched, one)
    # the frames at 7, 14, ... ms and the end: the runs stop at each
    times = [r["time"] for r in batched[1].history]
    np.testing.assert_allclose(times, [0.0, 0.007, 0.014, 0.021, 0.028, 0.035, 0.042, 0.049,
                                       0.05], atol=1e-12)
    assert len(batched[2]) == batched[1].steps == 50


def test_runs_take_the_steps_between_frames(monkeypatch):
    """Nothing but runs between the frames: no step of the pendulum went one at a time."""
    stepped = []
    one = dynamic.DynamicStep._advance
    monkeypatch.setattr(dynamic.DynamicStep, "_advance",
                        lambda self, s0: stepped.append(s0.t) or one(self, s0))
    dk = from_dict(pendulum())
    sysm = System(dk.model)
    state = sysm.reference_state()
    make_step(dk.steps[0], sysm, dk).run(state, None)
    assert stepped == []
    assert state.t == pytest.approx(0.05, abs=1e-15)


@pytest.mark.parametrize("integrator, cuts", [("energy_conserving", 5), ("generalized_alpha", 2)])
def test_a_step_a_run_cannot_finish_is_handed_back_and_cut_back(integrator, cuts, monkeypatch,
                                                                  caplog):
    """Steps of 0.01 s with at most 2 iterations: Newton fails now and then, the general path
    takes that step and halves it, the runs go on; all as step by step, bit for bit."""
    deck = pendulum(integrator=integrator, time_step=0.01, duration=0.5, output_interval=0.04,
                    max_iterations=2)
    with caplog.at_level(logging.DEBUG, logger="fem.integrators.planar_run"):
        batched = run(deck, monkeypatch, batched=True)
    assert "the compiled run hands the step back" in caplog.text
    assert batched[1].cuts > cuts
    assert_same_bits(batched, run(deck, monkeypatch, batched=False))


def test_the_crank_and_a_driven_chain_run_as_step_by_step(monkeypatch):
    """The slider-crank (consistent inertia: director rates carried through the runs) and the
    chain with the driven pivot and a flexible arm (the drive's targets and the driver's work):
    every step, the states with the director rates, the frames and the driver's work."""
    for deck, steps, frames in ((crank(40, 7), 40, [0, 7, 14, 21, 28, 35, 40]),
                                (chain(beam=True, drive=True), 50, None)):
        batched = run(deck, monkeypatch, batched=True)
        assert_same_run(batched, run(deck, monkeypatch, batched=False))
        state, step, record = batched
        assert len(record) == step.steps == steps
        W = np.array([r["constraint_work"] for r in step.history])
        assert np.abs(W).max() > 1e-6          # the driver works (the balance books it)
        if frames is not None:
            h = deck["steps"][0]["time_step"]
            np.testing.assert_allclose([r["time"] for r in step.history],
                                       np.array(frames) * h, rtol=0.0, atol=1e-15)
            assert state.rates["rod"]["v"].shape == (4, 2, 3)


@pytest.mark.parametrize("function", [{"type": "steady", "rate": -2.0},
                                      {"type": "spin_up", "rate": -2.0, "t0": 0.0, "t1": 0.03}],
                         ids=["steady", "spin_up"])
def test_drives_evaluated_ahead_are_the_drives_one_at_a_time(function, monkeypatch):
    """The drives a run hands the kernel (targets at the steps' ends, drives at their middles),
    evaluated for many steps ahead (all at once where the function is exact over arrays, one
    time at a time for the spin-up) equal the joint's drive at each time alone, bit for bit:
    for runs one after the other, for a run after a gap (a step taken one at a time), after a
    change of step size and for a shortened last step (times not ahead: evaluated alone)."""
    deck = chain(beam=True, drive=True)
    deck["functions"][0].update(function)
    made = record_made(monkeypatch, planar_run.PlanarRun)
    dk = from_dict(deck)
    sysm = System(dk.model)
    make_step(dk.steps[0], sysm, dk).run(sysm.reference_state(), None)
    runs = made[0]
    jt = runs.planar.joints
    (where, joint), = jt["driven"]

    def alone(times):
        at = np.array([joint._drive_at(t) for t in times])
        mid = np.array([joint._drive_at(0.5 * (a + b)) for a, b in zip(times, times[1:])])
        return at, mid

    def steps(t, h, k):
        out = [t]
        for _ in range(k):
            out.append(out[-1] + h)
        return out

    h, first = 1e-3, steps(0.0, 1e-3, 4)
    short = 0.05 - 0.0495
    runs_of = [(first, h), (steps(first[-1], h, 7), h), (steps(0.0125, h, 3), h),
               (steps(0.02, h / 2, 5), h / 2), ([0.0495, 0.0495 + short], short),
               (steps(0.3, h, 300), h)]
    for times, size in runs_of:
        targets, tmid, _ = runs._drives(jt, times, size)
        at, mid = alone(times)
        assert targets[:, where].tobytes() == at.tobytes()
        assert tmid[:, where].tobytes() == mid.tobytes()
        assert targets.flags.c_contiguous and tmid.flags.c_contiguous
        assert jt["atarget"][where].tobytes() == at[-1].tobytes()


def test_runs_count_their_iterations(monkeypatch):
    """``PlanarRun.iterations`` (what the benchmark counts) is the sum of the iterations of the
    steps the runs took (their record)."""
    deck = crank(40, 7)
    record = []
    made = []
    make = planar_run.PlanarRun.make.__func__

    def made_with_record(cls, step):
        runs = make(cls, step)
        runs.record = record
        made.append(runs)
        return runs

    monkeypatch.setattr(planar_run.PlanarRun, "make", classmethod(made_with_record))
    dk = from_dict(deck)
    sysm = System(dk.model)
    make_step(dk.steps[0], sysm, dk).run(sysm.reference_state(), None)
    assert len(record) == 40
    assert made[0].iterations == sum(i for i, _ in record) > 40


def test_the_crank_goes_in_runs(monkeypatch):
    """No step of the crank went one at a time (driven joints, consistent inertia taken)."""
    stepped = []
    one = dynamic.DynamicStep._advance
    monkeypatch.setattr(dynamic.DynamicStep, "_advance",
                        lambda self, s0: stepped.append(s0.t) or one(self, s0))
    deck = crank(20, 7)
    dk = from_dict(deck)
    sysm = System(dk.model)
    state = sysm.reference_state()
    make_step(dk.steps[0], sysm, dk).run(state, None)
    assert stepped == []
    assert state.t == pytest.approx(20 * deck["steps"][0]["time_step"], rel=1e-12)


@pytest.mark.parametrize("case, reason", [
    ("callback", "one at a time while it has an on_step callback"),
    ("prescribed", "prescribed motion"),
])
def test_what_it_does_not_take_goes_step_by_step_with_the_reason_logged(case, reason,
                                                                        monkeypatch, caplog):
    deck = chain()
    deck["steps"][0]["duration"] = 0.005
    calls = []
    if case == "prescribed":               # the pivot's bar turned as a drive would turn it
        deck["functions"] = [{"name": "turn", "type": "steady", "rate": -2.0}]
        deck["prescribed"] = [{"name": "turn", "nodes": [1], "dof": "rz", "value": 1.0,
                               "function": "turn"}]
        deck["steps"][0]["prescribed"] = ["turn"]
        monkeypatch.setattr(planar_run.PlanarRun, "advance",
                            lambda self, *a: calls.append(1) or None)
    dk = from_dict(deck)
    sysm = System(dk.model)
    state = sysm.reference_state()
    step = make_step(dk.steps[0], sysm, dk)
    if case == "callback":
        step.on_step = lambda s: None
    with caplog.at_level(logging.INFO, logger="fem.integrators.planar_run"):
        step.run(state, None)
    assert reason in caplog.text
    assert step.steps == 5
    if case == "prescribed":
        assert calls == []                 # no runs were even asked for


def assert_same_bits(a, b) -> None:
    """Two runs' states, steps, every step's iterations and norms, and frames, bit for bit."""
    (sa, step_a, rec_a), (sb, step_b, rec_b) = a, b
    assert (step_a.steps, step_a.cuts, sa.t) == (step_b.steps, step_b.cuts, sb.t)
    assert rec_a == rec_b
    for name in ("u", "rot", "v", "a"):
        assert getattr(sa, name).tobytes() == getattr(sb, name).tobytes(), name
    assert len(step_a.history) == len(step_b.history)
    for ra, rb in zip(step_a.history, step_b.history, strict=True):
        assert ra.keys() == rb.keys()
        for key in rb:
            assert np.asarray(ra[key]).tobytes() == np.asarray(rb[key]).tobytes(), key


@pytest.mark.parametrize("integrator", ["generalized_alpha", "trapezoidal"])
def test_runs_of_generalized_alpha_steps_are_the_step_by_step_path(integrator, monkeypatch):
    """Generalized-alpha and the trapezoidal rule in runs (PlanarAlphaRun): on the pendulum with
    its pulsed tip load and on the L-frame of ``tests/test_planar_alpha.py`` (two beam groups, a
    point mass, a time-varying load), and on the pendulum with a shortened last step, every
    step's iterations and norms, the states, frames and energies are the step-by-step path's bit
    for bit, and no step went one at a time."""
    from test_planar_alpha import alpha_frame

    stepped = []
    one = dynamic.DynamicStep._advance
    short = pendulum(integrator=integrator, duration=0.0505, output_interval=0.02)
    for deck in (pendulum(integrator=integrator), alpha_frame(integrator), short):
        monkeypatch.setattr(dynamic.DynamicStep, "_advance",
                            lambda self, s0: stepped.append(s0.t) or one(self, s0))
        batched = run(deck, monkeypatch, batched=True)
        assert stepped == []
        assert type(batched[1].integrator).__name__ == {
            "generalized_alpha": "GeneralizedAlpha", "trapezoidal": "Trapezoidal"}[integrator]
        assert_same_bits(batched, run(deck, monkeypatch, batched=False))
        assert len(batched[2]) == batched[1].steps >= 40
        assert len(batched[1].history) >= 4 and sum(i for i, _ in batched[2]) > batched[1].steps


def test_generalized_alpha_with_a_callback_goes_step_by_step_with_the_reason_logged(caplog):
    deck = pendulum(integrator="generalized_alpha", duration=0.005)
    dk = from_dict(deck)
    sysm = System(dk.model)
    step = make_step(dk.steps[0], sysm, dk)
    seen = []
    step.on_step = lambda s: seen.append(s.t)
    with caplog.at_level(logging.INFO, logger="fem.integrators"):    # planar_run's, shared
        step.run(sysm.reference_state(), None)
    assert "one at a time while it has an on_step callback" in caplog.text
    assert step.steps == len(seen) == 5


def test_generalized_alpha_runs_cut_at_max_steps_are_the_step_by_step_path(monkeypatch):
    """Runs of at most 3 steps (``MAX_STEPS``): 50 steps in at least 17 runs, the frames every
    7 steps between them; bit for bit as one step at a time."""
    from fem.integrators import planar_alpha

    calls = []
    advance = planar_alpha.PlanarAlphaRun.advance

    def counted(self, *a):
        out = advance(self, *a)
        calls.append(out is not None)
        return out

    deck = pendulum(integrator="generalized_alpha")
    with monkeypatch.context() as m:
        m.setattr(planar_run, "MAX_STEPS", 3)
        m.setattr(planar_alpha.PlanarAlphaRun, "advance", counted)
        batched = run(deck, m, batched=True)
    assert sum(calls) >= 17 and batched[1].steps == 50
    assert_same_bits(batched, run(deck, monkeypatch, batched=False))
