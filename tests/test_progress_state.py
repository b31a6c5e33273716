"""Each step keeps its resumable progress in a dataclass, written with its final state.

The controls and the time loop keep their own variables in the progress (not a copy), and
``/steps/<s>/state/progress`` of the results file holds it beside the state, so a restart can
continue from the two.
"""

import dataclasses

import numpy as np
import pytest

from fem.io.deck import from_dict
from fem.io.hdf5 import ResultsFile
from fem.io.results import read_state
from fem.run import make_step, run
from fem.solvers.controls import DynamicProgress, StaticProgress
from fem.system import System


def deck(control: str = "load") -> dict:
    """A cantilever bent statically (under ``control``), then released to swing."""
    bend = {"name": "bend", "type": "static", "nonlinear": True, "control": control}
    if control == "load":
        bend.update(increments=4)
    else:
        bend.update(arc_length=0.2, max_steps=6)
    return {"model": {"dim": 2},
            "materials": [{"name": "m", "E": 1.0e4, "nu": 0.0, "density": 1.0}],
            "sections": [{"name": "s", "A": 1e-2, "Iz": 1e-4}],
            "nodes": {"coordinates": [[0, 0], [2.0, 0]]},
            "elements": [{"name": "b", "type": "beam", "formulation": "corotational",
                          "material": "m", "section": "s", "connectivity": [[1, 2]],
                          "divisions": 4}],
            "supports": [{"nodes": 1, "fixed": ["all"]}],
            "loads": [{"name": "P", "nodes": 2, "force": [0.0, -0.5]}],
            "steps": [bend, {"name": "swing", "type": "dynamic", "time_step": 0.05,
                             "duration": 0.3, "output_interval": 0.1}]}


def run_steps(d: dict, h5: str):
    """Run the steps as :func:`fem.run.run` does, writing each state with its progress."""
    dk = from_dict(d)
    sysm = System(dk.model)
    state = sysm.reference_state()
    steps, states = [], []
    with ResultsFile(h5, dk.model) as results:
        for spec in dk.steps:
            step = make_step(spec, sysm, dk, dk.output["every"])
            step.run(state, results)
            results.write_state(spec["name"], state, progress=step.progress)
            steps.append(step)
            states.append(state.copy())
    return steps, states


def same(a, b) -> None:
    for f in dataclasses.fields(a):
        x, y = getattr(a, f.name), getattr(b, f.name)
        if isinstance(x, np.ndarray) or isinstance(y, np.ndarray):
            np.testing.assert_array_equal(x, y, f.name)
        else:
            assert x == y and type(x) is type(y), (f.name, x, y)


@pytest.mark.parametrize("control", ["load", "arclength"])
def test_progress_and_state_come_back_from_the_results_file(control, tmp_path):
    h5 = str(tmp_path / "r.h5")
    (static, dynamic), (bent, swung) = run_steps(deck(control), h5)
    p = static.progress
    assert isinstance(p, StaticProgress) and p.control == control
    if control == "load":
        assert (p.increments, p.load_factor, p.done) == (4, 1.0, 1.0)
        assert p.previous is None
    else:
        assert p.increments == 6 and p.previous.shape == (static.n,) and p.size > 0
    # the loads' work along the path is the strain energy stored (an elastic, conservative path;
    # the trapezoidal rule over 4 or 6 increments is within a few percent)
    assert p.external_work == pytest.approx(static.system.strain_energy(bent), rel=5e-2)
    q = dynamic.progress
    assert isinstance(q, DynamicProgress)
    assert q.steps == dynamic.steps == 6 and q.time == pytest.approx(0.3)
    assert q.next_output == pytest.approx(0.4) and q.size == pytest.approx(0.05)
    assert q.initial_energy == pytest.approx(dynamic.history[0]["kinetic"]
                                             + dynamic.history[0]["strain"])
    assert q.external_work == dynamic.history[-1]["external_work"]
    for name, state, progress, cls in (("bend", bent, p, StaticProgress),
                                       ("swing", swung, q, DynamicProgress)):
        back, back_progress = read_state(h5, name, progress=cls)
        same(back_progress, progress)
        for key, value in state.arrays().items():
            np.testing.assert_array_equal(np.asarray(back.arrays()[key]), np.asarray(value))
        assert sorted(back.arrays()) == sorted(state.arrays())
    assert read_state(h5, "bend", progress=DynamicProgress)[1] is None   # another type


def test_the_loops_keep_their_variables_in_the_progress(tmp_path):
    """The control's increment count and load factor, the time loop's time and step count: the
    same objects the steps ran on (a cut-back shows in the size and the halvings)."""
    (static, dynamic), _ = run_steps(deck(), str(tmp_path / "r.h5"))
    assert static.progress is static.progress and static.progress.next_output == 5
    assert dynamic.policy.progress is dynamic.progress
    dynamic.progress.halvings = 3
    assert dynamic.policy.cuts == 3


def test_a_run_writes_the_progress_of_each_step(tmp_path):
    from toml_writer import dumps

    from fem.io import deck as deck_io

    path = tmp_path / "deck.toml"
    path.write_text(dumps(deck()))
    out = tmp_path / "r.h5"
    run(deck_io.load(str(path)), str(out))
    _, p = read_state(str(out), "bend", progress=StaticProgress)
    assert p is not None and p.increments == 4
