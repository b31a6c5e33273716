"""Contact among a set of spheres (issue 30, benchmark point): the broad phase and its runs.

References: the broad phase against all ``n (n - 1) / 2`` pairs of random heaps (the same set,
and Verlet's bound: no pair outside the list closes while every sphere moves less than half the
padding); a small heap's run against the same heap with every pair listed explicitly (the narrow
phase is the same code, so the same numbers to round-off); the energy balance of the
energy-conserving scheme (elastic: ``total`` constant, damped: ``total + damping`` constant,
the energy of pairs dropped from the list included).
"""

import copy

import h5py
import numpy as np
import pytest
from helpers import with_changes

from fem.elements.contact import NormalLaw
from fem.elements.contact.sphere_set import SphereSetContact, candidate_pairs
from fem.errors import DeckError
from fem.io import deck as deck_io
from fem.run import run
from fem.state import State


def all_pairs_within(x, R, padding):
    """Every pair ``i < j`` whose gap is ``<= padding``, by brute force."""
    i, j = np.triu_indices(len(x), 1)
    gap = np.linalg.norm(x[j] - x[i], axis=1) - R[i] - R[j]
    keep = gap <= padding
    return np.c_[i[keep], j[keep]]


@pytest.mark.parametrize("dim", [2, 3])
@pytest.mark.parametrize("seed", range(4))
def test_broad_phase_is_all_pairs_within_padding(dim, seed):
    """The k-d tree's list is exactly the brute-force list of the pairs within the padding."""
    rng = np.random.default_rng(seed)
    n = 300
    x = rng.uniform(0.0, 1.0, (n, dim)) * (n ** (1 / dim)) * 0.05
    R = rng.uniform(0.01, 0.03, n)
    pad = 0.004
    got = candidate_pairs(x, R, pad)
    want = all_pairs_within(x, R, pad)
    assert len(want) > 50                               # a heap, not a gas
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("seed", range(4))
def test_every_pair_that_closes_is_listed(seed):
    """Moves below half the padding close only listed pairs; one above it can close another."""
    rng = np.random.default_rng(10 + seed)
    n, pad = 400, 0.004
    x = rng.uniform(0.0, 0.4, (n, 3))
    R = rng.uniform(0.01, 0.02, n)
    listed = {tuple(p) for p in candidate_pairs(x, R, pad)}
    step = rng.normal(size=(n, 3))
    step *= (0.5 * pad * (1 - 1e-9) * rng.uniform(0, 1, n)
             / np.linalg.norm(step, axis=1))[:, None]
    closed = all_pairs_within(x + step, R, 0.0)
    assert len(closed) > 10
    assert {tuple(p) for p in closed} <= listed
    # the bound is sharp: two spheres just outside the list, each moving more than pad / 2
    # towards the other, close
    y = np.array([[0.0, 0, 0], [0.02 + 1.01 * pad, 0, 0]])
    r = np.array([0.01, 0.01])
    assert len(candidate_pairs(y, r, pad)) == 0
    y[0, 0] += 0.51 * pad
    y[1, 0] -= 0.51 * pad
    assert len(all_pairs_within(y, r, 0.0)) == 1


def test_refuses_a_step_beyond_half_the_padding():
    """check_step refuses a step that moved a sphere half the padding from the build."""
    X = np.array([[0.0, 0, 0], [0.0205, 0, 0], [1.0, 0, 0]])
    law = NormalLaw("hertz", np.zeros(0), 1.5)
    g = SphereSetContact("heap", [0, 1, 2], X, 3, law, 0.01, lambda a, b: 1e7 + 0 * a,
                         padding=0.002)
    assert g.conn.tolist() == [[0, 1]]
    s0 = State.reference(3, 3)
    s0.history["heap"] = g.conserving_start(s0)
    s1 = s0.copy()
    mass = np.ones(3)
    s1.u[2, 0] = -0.00099
    assert g.check_step(s0, s1, mass) is None
    s1.u[2, 0] = -0.00101
    assert "padding" in g.check_step(s0, s1, mass)
    # the next broad phase builds the list again, at the start of the step
    assert g.broad_phase(s0, 1e-3)
    assert s0.history["heap"]["padding"][0] == 0.002


def heap(n=4, explicit=False, damping=None, padding=None, duration=0.03, seed=1):
    """``n`` spheres of 10 mm (3D, 10 g each, Hertz K = 1e7) dropped 2 mm onto the ground."""
    rng = np.random.default_rng(seed)
    R = 0.01
    # three on the ground, one on them, a fifth above it, a sixth beside: 0.1-1.2 mm apart
    X = np.array([[0, 0, 0], [2.05, 0, 0], [1.02, 1.8, 0], [1.0, 0.6, 1.7], [1.0, 0.6, 3.8],
                  [3.8, 1.2, 0]])[:n] * R
    X = X + rng.uniform(-0.02, 0.02, X.shape) * R + [0, 0, R + 0.002]
    ids = list(range(1, n + 1))
    law = {"law": "hunt_crossley", "damping": damping} if damping else {"law": "hertz"}
    c = {"name": "heap", "radius": R, "stiffness": 1e7, **law}
    if explicit:
        c["pairs"] = [[i, j] for i in ids for j in ids if i < j]
    else:
        c["spheres"] = ids
        if padding is not None:
            c["padding"] = padding
    ground = {"name": "ground", "nodes": ids, "radius": R, "stiffness": 1e7, **law,
              "plane_point": [0, 0, 0], "plane_normal": [0, 0, 1]}
    return {"model": {"dim": 3}, "nodes": {"coordinates": X.tolist()},
            "masses": [{"nodes": ids, "mass": 0.01}], "contacts": [c, ground],
            "gravity": {"acceleration": [0, 0, -9.81]},
            "steps": [{"name": "fall", "type": "dynamic", "integrator": "energy_conserving",
                       "time_step": 1e-3, "duration": duration, "output_interval": 0.01,
                       "tolerance": 1e-11}]}


def run_heap(tmp_path, data, name):
    d = deck_io.from_dict(copy.deepcopy(data), base_dir=str(tmp_path))
    run(d, str(tmp_path / f"{name}.h5"))
    with h5py.File(tmp_path / f"{name}.h5") as f:
        s = f["steps/fall"]
        return ({k: s["energy"][k][()] for k in s["energy"]}, s["displacement"][-1],
                int(s["increments/cuts"][-1]), d)


def test_small_heap_equals_explicit_pairs(tmp_path):
    """A heap of 4 spheres: the set's run is the run with all 6 pairs listed, to round-off.

    A small padding makes the list change during the run (pairs enter and leave it, the pattern
    is made again); the spheres touch each other and the ground.
    """
    e_set, u_set, _, d = run_heap(tmp_path, heap(padding=2e-4), "set")
    e_all, u_all, _, _ = run_heap(tmp_path, heap(explicit=True), "all")
    assert np.abs(u_all).max() > 1e-3                   # they fell and touched
    assert e_all["strain"].max() > 0
    np.testing.assert_allclose(u_set, u_all, rtol=0, atol=1e-12)
    np.testing.assert_allclose(e_set["kinetic"], e_all["kinetic"], rtol=1e-9)
    with h5py.File(tmp_path / "set.h5") as f:
        g = f["model/groups/heap"]
        assert g["connectivity"].shape == (4, 1)        # the spheres, as vertices
        forces = f["steps/fall/elements/heap/normal_force"][()]
        assert forces.shape[1] == 4


@pytest.mark.parametrize("integrator", ["energy_conserving", "trapezoidal"])
def test_second_dynamic_step_equals_explicit_pairs(tmp_path, integrator):
    """A second dynamic step with a shorter time step, against the run with every pair listed.

    Its start lists the pairs within the deck's padding, fewer than the first step's last list
    (padded by 4 tau), and its first broad phase builds nothing: the matrix pattern must follow
    the list made at the start (it stayed the first step's, a traceback).
    """
    runs = {}
    for explicit in (False, True):
        data = heap(explicit=explicit, padding=None if explicit else 2e-4)
        data["steps"][0]["integrator"] = integrator
        second = dict(data["steps"][0], name="fall2", time_step=1e-5, duration=1e-4,
                      output_interval=1e-4)
        data["steps"].append(second)
        d = deck_io.from_dict(data, base_dir=str(tmp_path))
        run(d, str(tmp_path / f"{explicit}.h5"))
        with h5py.File(tmp_path / f"{explicit}.h5") as f:
            runs[explicit] = f["steps/fall2/displacement"][-1]
    np.testing.assert_allclose(runs[False], runs[True], rtol=0, atol=1e-12)


def test_elastic_heap_conserves_energy(tmp_path):
    """Elastic Hertz contacts: total energy (kinetic + contact - gravity's work) constant."""
    e, _, _, _ = run_heap(tmp_path, heap(n=6, padding=5e-4), "elastic")
    assert e["kinetic"].max() > 1e-4 and e["strain"].max() > 0
    drift = np.abs(e["total"] - e["total"][0]).max()
    assert drift < 1e-10 * e["kinetic"].max()


def test_damped_heap_books_its_dissipation(tmp_path):
    """Hunt-Crossley damping: total + damping constant, pairs dropped from the list included."""
    e, _, _, _ = run_heap(tmp_path, heap(n=6, damping=1e7, padding=5e-4, duration=0.05),
                          "damped")
    assert e["damping"][-1] > 1e-2 * e["kinetic"].max()
    with h5py.File(tmp_path / "damped.h5") as f:         # pairs that took energy left the list
        assert f["steps/fall/state/history/heap/dissipated_dropped"][0] > 1e-2 * e["damping"][-1]
    balance = e["total"] + e["damping"]
    assert np.abs(balance - balance[0]).max() < 1e-9 * e["kinetic"].max()


@pytest.mark.parametrize("changes, where, says", [
    ({"pairs": [[1, 2]]}, "contacts[0]", "both pairs and spheres"),
    ({"radius": None, "radii": [0.01, 0.01]}, "contacts[0].radii", "one radius per sphere"),
    ({"radii": [0.01] * 4}, "contacts[0].radii", "both"),
    ({"radius": 0.0}, "contacts[0].radius", "positive"),
    ({"spheres": [1, 1, 2]}, "contacts[0].spheres", "twice"),
    ({"spheres": [1, 9]}, "contacts[0].spheres", "unknown node 9"),
    ({"plane_normal": [0, 0, 1]}, "contacts[0].plane_normal", "second entry"),
    ({"padding": -1.0}, "contacts[0].padding", "positive"),
])
def test_deck_errors(changes, where, says):
    """Bad input of a sphere set is a deck error naming the key."""
    data = heap()
    with_changes(data["contacts"][0], changes)
    with pytest.raises(DeckError) as err:
        deck_io.from_dict(data)
    assert err.value.key == where and says in str(err.value), str(err.value)


def test_padding_only_with_spheres():
    data = heap(explicit=True)
    data["contacts"][0]["padding"] = 1e-3
    with pytest.raises(DeckError) as err:
        deck_io.from_dict(data)
    assert err.value.key == "contacts[0].padding"


@pytest.mark.parametrize("kind", ["hertz", "kelvin_voigt", "hertz_plastic"])
def test_step_form_skips_open_pairs_exactly(kind):
    """The set's step form (on the touching pairs alone) equals the pair group's on all pairs."""
    from fem.elements.contact import SphereContact

    rng = np.random.default_rng(7)
    n, R = 40, 0.01
    X = np.zeros((n, 3))
    X[:, :3] = rng.uniform(0.0, 0.08, (n, 3))
    args = {"hertz": {}, "kelvin_voigt": {"damping": 20.0}, "hertz_plastic": {"restitution": 0.6}}
    nexp = 1.0 if kind == "kelvin_voigt" else 1.5
    law = NormalLaw(kind, np.zeros(0), nexp, **args[kind])
    g = SphereSetContact("heap", np.arange(n), X, 3, law, R, lambda a, b: 1e7 + 0 * a,
                         padding=0.01)
    s0 = State.reference(3, n)
    s0.u[:] = 2e-3 * rng.normal(size=(n, 3))
    s0.v[:, :3] = 0.3 * rng.normal(size=(n, 3))
    s1 = s0.copy()
    s1.t = 1e-3
    s1.u[:] += 2e-3 * rng.normal(size=(n, 3))
    hist = g.conserving_start(s0)                       # the list at s0
    ref = SphereContact("ref", g.conn, X, 3, NormalLaw(kind, g.law.K.copy(), nexp,
                                                       **args[kind]), radii=[R, R])
    d0, d1 = -g._gap(s0)[0], -g._gap(s1)[0]
    assert np.any((d0 <= 0) & (d1 <= 0)) and np.any((d0 > 0) | (d1 > 0))   # both kinds
    inc = g.element_vector(s1.u - s0.u)
    got = g.conserving(s0, s1, None, inc, hist)
    want = ref.conserving(s0, s1, None, inc, {k: hist[k] for k in ref.conserving_start(s0)})
    for a, b in zip(got[:3], want[:3], strict=True):
        np.testing.assert_array_equal(a, b)
    for key, value in want[3].items():
        np.testing.assert_array_equal(got[3][key], value)
