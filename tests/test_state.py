"""A state as plain arrays: copied, committed, and written to and read back from results files.

Every unknown of an analysis is a typed field of :class:`fem.state.State` (issue 29): nodal
values and rates, the internal unknowns with their rates ``internal_v``, ``internal_a``,
multipliers, the load history, the rates inertia groups declare (``rates``) and the history
element groups declare (``history``). ``arrays()`` / ``from_arrays()``, ``copy()`` and
``assign()`` keep every one of them, bit for bit.
"""

import h5py
import numpy as np
from helpers import case_deck_path

from fem.io import deck as deck_io
from fem.io.results import read_state
from fem.run import run
from fem.state import State
from fem.system import System


def assert_same(a, b):
    """Every field of ``a`` and ``b``, bit for bit (NaN stamps included)."""
    arrays_a, arrays_b = a.arrays(), b.arrays()
    assert sorted(arrays_a) == sorted(arrays_b)
    for name, value in arrays_a.items():
        x, y = np.asarray(value), np.asarray(arrays_b[name])
        assert x.dtype == y.dtype and x.shape == y.shape, name
        assert x.tobytes() == y.tobytes(), name


def every_field(rng) -> State:
    """A 3D state with a value in every kind of field."""
    nan = float("nan")
    s = State.reference(3, 4, n_internal=3, n_multipliers=2,
                        rates={"rod": {"v": ((5,), 0.0), "a": ((5,), 0.0),
                                       "stamp": ((6,), nan)},
                               "beam": {"v": ((2, 2, 3), 0.0), "nodal_v": ((2, 2, 6), nan)}},
                        history={"beam": {"v": ((2, 7), 0.0)}, "plate": {"p": ((3, 9), 0.0)}})
    s.t = 0.37
    for name in ("u", "v", "a", "internal", "internal_v", "internal_a", "multipliers"):
        arr = getattr(s, name)
        arr[...] = rng.normal(size=arr.shape)
    s.rot[:] = rng.normal(size=(4, 4))
    s.rot /= np.linalg.norm(s.rot, axis=1)[:, None]
    s.prescribed = rng.normal(size=(4, 6))
    s.load_scales = {"P": 0.25, "gravity": 1.0}
    s.rates["rod"]["v"][:] = rng.normal(size=5)
    s.rates["rod"]["stamp"][:3] = rng.normal(size=3)          # half written: NaN stays NaN
    s.history["beam"]["v"][:] = rng.normal(size=(2, 7))
    return s


def test_every_kind_of_field_round_trips_bit_for_bit(tmp_path):
    """``arrays`` names every field (``internal_v``, ``rates/<g>/<name>``,
    ``history/<g>/<name>``, ...), and ``from_arrays`` of them, of an HDF5 file holding them (as
    the results writer stores a state), ``copy`` and ``assign`` give the same state bit for
    bit; a copy and an assigned state never alias the original."""
    s = every_field(np.random.default_rng(3))
    arrays = s.arrays()
    assert {"internal_v", "internal_a", "rates/rod/v", "rates/rod/stamp", "rates/beam/nodal_v",
            "history/beam/v", "history/plate/p", "load_scales/P", "prescribed"} <= set(arrays)
    assert_same(s, State.from_arrays(arrays))
    path = tmp_path / "state.h5"
    with h5py.File(path, "w") as h5:
        g = h5.create_group("steps/s/state")
        for name, value in arrays.items():
            g.create_dataset(name, data=value)
    back = read_state(str(path), "s")
    assert_same(s, back)
    assert np.isnan(back.rates["rod"]["stamp"][3:]).all()
    c = s.copy()
    assert_same(s, c)
    target = State.reference(3, 4, n_internal=3, n_multipliers=2)
    target.assign(s)
    assert_same(s, target)
    for other in (c, target):                           # neither aliases s
        other.rates["rod"]["v"][0] += 1.0
        other.history["beam"]["v"][0, 0] += 1.0
        other.internal_v[0] += 1.0
        other.internal_a[0] += 1.0
    assert_same(s, State.from_arrays(arrays))


def test_states_of_older_files_are_read_into_the_typed_fields():
    """Files written before the typed state kept rates and history in ``conserving/...``:
    element groups' history, consistent beams' ``<g>.director_rates``, a superelement's
    ``<g>.rates`` (linear: the rates of ``eta``; co-rotational: ``y_dot``, ``y_ddot`` and the
    rates of ``eta``). They are read into ``history``, ``rates`` and ``internal_v``."""
    rng = np.random.default_rng(4)
    s = State.reference(2, 3, n_internal=2)
    old = {k: v for k, v in s.arrays().items() if not k.startswith("internal_")}
    old["conserving/beam/v"] = rng.normal(size=(2, 3))
    old["conserving/beam.director_rates/v"] = rng.normal(size=(2, 2, 3))
    old["conserving/beam.director_rates/nodal_v"] = rng.normal(size=(2, 2, 3))
    old["conserving/rod.rates/v"] = rng.normal(size=(1, 2))
    old["conserving/rod.rates/a"] = rng.normal(size=(1, 2))
    got = State.from_arrays(old)
    assert got.history["beam"]["v"].tobytes() == old["conserving/beam/v"].tobytes()
    assert set(got.rates) == {"beam"} and set(got.rates["beam"]) == {"v", "nodal_v"}
    assert np.array_equal(got.internal_v, old["conserving/rod.rates/v"][0])
    assert np.array_equal(got.internal_a, old["conserving/rod.rates/a"][0])
    floating = {k: v for k, v in s.arrays().items() if not k.startswith("internal_")}
    floating.update({"conserving/rod.rates/v": rng.normal(size=7),
                     "conserving/rod.rates/a": rng.normal(size=7),
                     "conserving/rod.rates/eta": rng.normal(size=2)})
    got = State.from_arrays(floating)
    assert np.array_equal(got.rates["rod"]["v"], floating["conserving/rod.rates/v"])
    assert np.array_equal(got.internal_v, floating["conserving/rod.rates/eta"])


def test_older_files_with_two_superelements_read_their_modal_rates_as_at_rest(caplog):
    """Two superelements' ``<g>.rates`` in an older file do not say where each one's ``eta``
    lie among the internal unknowns: ``internal_v``, ``internal_a`` stay at rest (never one
    group's rates in the other's places) and a warning says so."""
    rng = np.random.default_rng(5)
    old = {k: v for k, v in State.reference(2, 3, n_internal=4).arrays().items()
           if not k.startswith("internal_")}
    for g in ("a", "b"):
        old[f"conserving/{g}.rates/v"] = rng.normal(size=(1, 2))
        old[f"conserving/{g}.rates/a"] = rng.normal(size=(1, 2))
    with caplog.at_level("WARNING", logger="fem.state"):
        got = State.from_arrays(old)
    assert not got.internal_v.any() and not got.internal_a.any()
    assert "modal rates of 2 superelements" in caplog.text


def test_the_reference_state_holds_every_declared_field():
    """``System.reference_state`` creates the rates the inertia groups declare (a consistent
    beam's director rates and their NaN stamps) and the history the element groups declare,
    shaped as the energy-conserving scheme's start gives it."""
    d = deck_io.load(case_deck_path("released_cantilever_3d"))
    sysm = System(d.model)
    s = sysm.reference_state()
    g = sysm.model.groups[0]
    assert set(s.history) == {g.name}
    assert {k: v.shape for k, v in s.history[g.name].items()} == {
        k: v.shape for k, v in g.conserving_start(s).items()}
    from test_consistent_inertia import beam_deck

    sysm = System(deck_io.from_dict(beam_deck(3, n=3)).model)
    s = sysm.reference_state()
    (name, rates), = s.rates.items()
    assert {k: v.shape for k, v in rates.items()} == {
        "v": (3, 2, 3), "nodal_v": (3, 2, 6), "nodal_rot": (3, 2, 4)}
    assert np.isnan(rates["nodal_v"]).all() and not rates["v"].any()


def test_the_state_after_each_step_is_in_the_results_file(tmp_path):
    """A static bend then an energy-conserving release: load history, prescribed values and the
    beams' algorithmic deformations all come back from the file, bit for bit."""
    deck = deck_io.load(case_deck_path("released_cantilever_3d"))
    deck.steps[1]["settings"].duration = 0.05
    out = tmp_path / "r.h5"
    run(deck, str(out))
    with h5py.File(out, "r") as h5:
        last = {k: h5[f"steps/release/{k}"][-1] for k in ("displacement", "rotation", "time")}
    state = read_state(str(out), "release")
    np.testing.assert_array_equal(state.u, last["displacement"])
    np.testing.assert_array_equal(state.rot, last["rotation"])
    assert state.load_scales == {"P": 0.0}                  # the release took the load off
    assert set(state.history) == {"beam"} and state.history["beam"]["v"].shape == (8, 7)
    assert np.abs(state.history["beam"]["v"]).max() > 0
    bent = read_state(str(out), "bend")
    assert bent.load_scales == {"P": 1.0}
    assert not bent.history["beam"]["v"].any()              # declared, not started
    assert_same(state, type(state).from_arrays(state.arrays()))
    copy = state.copy()
    copy.history["beam"]["v"][0, 1] += 1.0                  # a copy never aliases
    assert state.history["beam"]["v"][0, 1] != copy.history["beam"]["v"][0, 1]
