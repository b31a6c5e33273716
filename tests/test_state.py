"""A state as plain arrays: copied, committed, and written to and read back from results files."""

import numpy as np
from helpers import case_deck_path

from fem.io import deck as deck_io
from fem.io.results import read_state
from fem.run import run


def assert_same(a, b):
    arrays_a, arrays_b = a.arrays(), b.arrays()
    assert sorted(arrays_a) == sorted(arrays_b)
    for name, value in arrays_a.items():
        np.testing.assert_array_equal(np.asarray(value), np.asarray(arrays_b[name]), name)


def test_the_state_after_each_step_is_in_the_results_file(tmp_path):
    """A static bend then an energy-conserving release: load history, prescribed values and the
    beams' algorithmic deformations all come back from the file, bit for bit."""
    deck = deck_io.load(case_deck_path("released_cantilever_3d"))
    deck.steps[1]["settings"].duration = 0.05
    out = tmp_path / "r.h5"
    run(deck, str(out))
    import h5py

    with h5py.File(out, "r") as h5:
        last = {k: h5[f"steps/release/{k}"][-1] for k in ("displacement", "rotation", "time")}
    state = read_state(str(out), "release")
    np.testing.assert_array_equal(state.u, last["displacement"])
    np.testing.assert_array_equal(state.rot, last["rotation"])
    assert state.load_scales == {"P": 0.0}                  # the release took the load off
    assert set(state.conserving) == {"beam"} and state.conserving["beam"]["v"].shape == (8, 7)
    bent = read_state(str(out), "bend")
    assert bent.load_scales == {"P": 1.0} and not bent.conserving
    assert_same(state, type(state).from_arrays(state.arrays()))
    copy = state.copy()
    copy.conserving["beam"]["v"][0, 1] += 1.0               # a copy never aliases
    assert state.conserving["beam"]["v"][0, 1] != copy.conserving["beam"]["v"][0, 1]
