"""The compiled load-control increment of planar beam models (fem.analysis.planar_static).

Its element kernel is the numpy beam's to round-off; its increments take the general Newton
loop's iterations, residual norms, bent corrections and determinant signs to the same states;
what it cannot finish (a cut back, a mechanism) goes the general way; the models it does not
take keep the general path.
"""

import copy

import numpy as np
import pytest
from conftest import record_made

from benchmarks.small_models import cantilever_deck
from fem import kernels, linalg
from fem.analysis import planar_static
from fem.analysis.static import StaticStep
from fem.elements.beam import beam2d_jit
from fem.errors import ModelError
from fem.io.deck import from_dict
from fem.run import make_step
from fem.system import System

pytest.importorskip("numba")


def elastica(increments: int = 20, load: float = 10.0) -> dict:
    """The benchmark's elastica cantilever (cases/elastica_cantilever, 10 elements), P L^2 / EI
    = ``load`` in ``increments``, tolerance 1e-9 (the paths' decisions clear of round-off)."""
    deck = cantilever_deck()
    deck["steps"][0].update(load_factor=load, increments=increments,
                            max_increment=load / increments, tolerance=1e-9)
    return deck


def frame() -> dict:
    """An L-frame of two groups (Euler-Bernoulli, Timoshenko): gravity, a tabled tip load with
    a moment, the pinned foot dragged sideways."""
    return {
        "model": {"dim": 2, "title": "L-frame"},
        "materials": [{"name": "m", "E": 2.0e4, "nu": 0.3}],
        "sections": [{"name": "eb", "A": 1.0, "Iz": 1.0e-3, "mass_per_length": 0.5},
                     {"name": "tim", "A": 0.8, "Iz": 2.0e-3, "Ay": 0.6}],
        "nodes": {"coordinates": [[0.0, 0.0], [1.0, 0.0], [1.0, -0.7]]},
        "sets": {"foot": [1], "corner": [2], "tip": [3]},
        "elements": [{"name": "arm", "type": "beam", "formulation": "corotational",
                      "material": "m", "section": "eb", "connectivity": [[1, 2]],
                      "divisions": 5},
                     {"name": "leg", "type": "beam", "formulation": "corotational",
                      "theory": "timoshenko", "material": "m", "section": "tim",
                      "connectivity": [[2, 3]], "divisions": 4}],
        "supports": [{"nodes": "foot", "fixed": ["ux", "uy", "rz"]},
                     {"nodes": "tip", "fixed": ["uy"]}],
        "functions": [{"name": "late", "type": "table", "points": [[0.0, 0.0], [1.0, 1.0],
                                                                    [2.0, 3.0]]}],
        "gravity": {"acceleration": [0.0, -9.81]},
        "loads": [{"name": "push", "nodes": "tip", "force": [-30.0, 0.0], "moment": 2.0,
                   "function": "late"}],
        "prescribed": [{"name": "drag", "nodes": "foot", "dof": "ux", "value": 0.05}],
        "steps": [{"name": "load", "type": "static", "nonlinear": True, "load_factor": 2.0,
                   "increments": 8, "tolerance": 1e-11, "prescribed": ["drag"]}]}


def shuffled_chain(n: int = 14) -> dict:
    """A cantilever of ``n`` beams whose nodes are numbered out of order (the tangent's band
    and the chords' Laplacian are renumbered), rolled far by a tip moment and a force."""
    rng = np.random.default_rng(3)
    ids = rng.permutation(n + 1) + 1                   # the id of the k-th node along the chain
    coords = np.zeros((n + 1, 2))
    coords[ids - 1, 0] = np.arange(n + 1) / n
    return {"model": {"dim": 2, "title": "shuffled chain"},
            "materials": [{"name": "m", "E": 1.0, "nu": 0.0}],
            "sections": [{"name": "s", "A": 1.0e4, "Iz": 1.0}],
            "nodes": {"coordinates": coords.tolist()},
            "sets": {"root": [int(ids[0])], "tip": [int(ids[-1])]},
            "elements": [{"name": "beam", "type": "beam", "formulation": "corotational",
                          "material": "m", "section": "s",
                          "connectivity": [[int(a), int(b)] for a, b in zip(ids[:-1], ids[1:])]}],
            "supports": [{"nodes": "root", "fixed": ["all"]}],
            "loads": [{"name": "M", "nodes": "tip", "moment": 4.0, "force": [0.0, 1.5]}],
            "steps": [{"name": "roll", "type": "static", "nonlinear": True, "load_factor": 1.0,
                       "increments": 3, "max_increment": 0.34, "tolerance": 1e-10}]}


class Record:
    """A recorder keeping each increment's load factor and Newton iterations."""

    def __init__(self):
        self.increments = []
        self.frames = []

    def begin_step(self, *args, **kwargs):
        return self

    def advance(self, value, iterations=None):
        self.increments.append((value, iterations))

    def frame(self, state, time=None, reactions=None, stats=None, last=False, **kwargs):
        self.frames.append((time, state.u.copy(), state.rot.copy(), reactions.copy(),
                            dict(stats), last))

    def keep_checkpoints(self, progress):
        pass

    def close(self):
        pass


def run(deck: dict, monkeypatch, compiled: bool = True, batch: bool = True,
        every: int | None = 1):
    """Run the deck's step: (state, step, per-increment records). ``compiled`` false: without
    the compiled increment; ``batch`` false: its increments one call each (never several in a
    call, PlanarIncrement.batch). The records hold each increment's load factor, iterations,
    residual norms and the determinant signs of its factorizations (the limit-point watch's).
    ``every``: a frame every so many increments (a :class:`Record` as the recorder, kept as
    ``step.record``), or None: no recorder (as the benchmark runs)."""
    if not compiled:
        monkeypatch.setattr(planar_static.PlanarIncrement, "make",
                            classmethod(lambda cls, step: None))
    if not batch:
        monkeypatch.setattr(planar_static.PlanarIncrement, "batch", lambda self, *a: None)
    made = record_made(monkeypatch, planar_static.PlanarIncrement)
    watched = []
    checks = StaticStep._increment_checks            # every converged increment, first thing

    def watch(self, state, r, lam):
        watched.append((lam, len(self.test.norms) - 1, list(self.test.norms),
                        [g for g, _ in self._signs]))
        return checks(self, state, r, lam)

    monkeypatch.setattr(StaticStep, "_increment_checks", watch)
    together = StaticStep._batch                      # several increments' book-keeping

    def watch_batch(self, b, *args):
        watched.extend((float(b.lam[j]), int(b.its[j]), b.norms[j, :b.its[j] + 1].tolist(),
                        b.signs[j, :b.nsigns[j]].tolist()) for j in range(len(b)))
        return together(self, b, *args)

    monkeypatch.setattr(StaticStep, "_batch", watch_batch)
    dk = from_dict(copy.deepcopy(deck))
    sysm = System(dk.model)
    state = sysm.reference_state()
    step = make_step(dk.steps[0], sysm, dk, every or 1)
    step.record = Record() if every else None
    step.run(state, step.record)
    monkeypatch.undo()
    assert (made[0] is not None) == compiled
    if every:                                   # the writer saw each increment
        assert step.record.increments == [(lam, its) for lam, its, _, _ in watched]
    return state, step, watched


def assert_same_run(fast, slow, rtol=1e-6, states=1e-12):
    """Two runs: the same increments and iterations, residual norms to ``rtol`` (above the
    round-off of the element forces: ``eps |K| |x|`` is about 1e-10 of the first residual on a
    beam with EA / EI = 1e5, and the two paths sum in other orders), the same determinant
    signs, final states to ``states`` relative."""
    (a, step, inc), (b, step_ref, inc_ref) = fast, slow
    assert [(lam, its) for lam, its, _, _ in inc] == [(lam, its) for lam, its, _, _ in inc_ref]
    for (_, _, norms, signs), (_, _, norms_ref, signs_ref) in zip(inc, inc_ref):
        assert np.allclose(norms, norms_ref, rtol=rtol, atol=1e-8 * max(norms_ref))
        assert signs == signs_ref
    assert np.abs(a.u - b.u).max() <= states * np.abs(b.u).max()
    assert np.abs(a.rot - b.rot).max() <= states * max(np.abs(b.rot).max(), 1.0)
    assert step.bent == step_ref.bent
    p, q = step.progress, step_ref.progress
    assert p.external_work == pytest.approx(q.external_work, rel=1e-10)
    assert p.constraint_work == pytest.approx(q.constraint_work, rel=1e-9, abs=1e-14)


@pytest.mark.parametrize("theory", ["euler-bernoulli", "timoshenko"])
def test_the_beam_kernel_is_the_numpy_beam(theory):
    """Force and tangent at states far from the reference (nodal rotations of several turns,
    wrapped as the numpy frame wraps them) to round-off."""
    deck = frame()
    deck["elements"][0]["theory"] = theory
    deck["sections"][0]["Ay"] = 0.7
    dk = from_dict(deck)
    sysm = System(dk.model)
    state = sysm.reference_state()
    rng = np.random.default_rng(11)
    for _ in range(3):
        state.u[:, :2] = rng.normal(scale=0.3, size=(len(state.u), 2))
        state.rot[:] = rng.normal(scale=8.0, size=len(state.rot))
        for g in dk.model.groups:
            f_ref, K_ref = g.evaluate(state)
            f, K = beam2d_jit.evaluate(g._kernel_data(), state.rot, state.u)
            assert np.abs(f - f_ref).max() <= 1e-13 * np.abs(f_ref).max()
            assert np.abs(K - K_ref).max() <= 1e-13 * np.abs(K_ref).max()


def test_the_elastica_increments_as_the_general_loop(monkeypatch):
    """Bent corrections in a third of the iterations; the tip of Mattiasson's table."""
    fast = run(elastica(), monkeypatch)
    slow = run(elastica(), monkeypatch, compiled=False)
    assert_same_run(fast, slow)
    state, step, inc = fast
    assert step.bent >= 20 and sum(its for _, its, _, _ in inc) >= 60
    tip = state.u[1, :2]                           # divisions number the tip node 2
    assert tip == pytest.approx([-0.55500, -0.81061], abs=3e-4)     # PL^2/EI = 10: 1 - x, y


def test_a_frame_with_prescribed_motion_and_a_table_increments_as_the_general_loop(monkeypatch):
    """Two groups and theories, gravity, a load function, a prescribed support: the same
    increments to the same states, and the same work of the loads and the reactions."""
    fast = run(frame(), monkeypatch)
    slow = run(frame(), monkeypatch, compiled=False)
    assert_same_run(fast, slow)
    assert abs(fast[1].progress.constraint_work) > 1e-6


def test_nodes_numbered_across_the_chain(monkeypatch):
    """The tangent's band and the chords' Laplacian renumbered (reverse Cuthill-McKee)."""
    fast = run(shuffled_chain(), monkeypatch)
    slow = run(shuffled_chain(), monkeypatch, compiled=False)
    assert_same_run(fast, slow)
    assert fast[1].bent > 0


def shallow_arch(load: float) -> dict:
    """A pinned shallow arch of 16 beams (span 2, rise 0.08) pushed down at its crown."""
    n = 16
    x = np.linspace(-1.0, 1.0, n + 1)
    y = 0.08 * (1 - x**2)
    return {"model": {"dim": 2, "title": "shallow arch"},
            "materials": [{"name": "m", "E": 1.0, "nu": 0.0}],
            "sections": [{"name": "s", "A": 1.0e4, "Iz": 1.0}],
            "nodes": {"coordinates": np.c_[x, y].tolist()},
            "sets": {"ends": [1, n + 1], "crown": [n // 2 + 1]},
            "elements": [{"name": "arch", "type": "beam", "formulation": "corotational",
                          "material": "m", "section": "s",
                          "connectivity": [[i + 1, i + 2] for i in range(n)]}],
            "supports": [{"nodes": "ends", "fixed": ["ux", "uy"]}],
            "loads": [{"name": "P", "nodes": "crown", "force": [0.0, -1.0]}],
            "steps": [{"name": "push", "type": "static", "nonlinear": True,
                       "load_factor": load, "increments": 10, "tolerance": 1e-10}]}


def test_a_limit_point_passed_under_load_control_warns_on_both_paths(monkeypatch):
    """The band LU's determinant signs are the general path's (PETSc's LU pivots), factorization
    by factorization, and the step warns where it did."""
    fast = run(shallow_arch(4.0), monkeypatch)             # limit load 1.79 (arc-length)
    slow = run(shallow_arch(4.0), monkeypatch, compiled=False)
    assert_same_run(fast, slow, states=1e-10)
    for _, step, inc in (fast, slow):
        assert any("passed a limit" in w for w in step.warnings)
        assert any(-1 in signs for _, _, _, signs in inc)
    quiet = run(shallow_arch(1.5), monkeypatch)
    assert not any("limit" in w for w in quiet[1].warnings)
    assert all(set(signs) == {1} for _, _, _, signs in quiet[2])


@pytest.mark.parametrize("batch", [True, False])
def test_an_increment_the_compiled_loop_cannot_finish_goes_the_general_way(batch, monkeypatch):
    """Five iterations allowed on the whole elastica at once: the compiled loop gives up (one
    increment a call, or several), the general path cuts the increment back as it always
    does, and both runs end alike."""
    deck = elastica(increments=1)
    deck["steps"][0].update(max_iterations=5, max_increment=10.0)
    calls = []
    if batch:                       # (increments converged, stopped at a failure) per call
        several = planar_static.PlanarIncrement.batch
        monkeypatch.setattr(planar_static.PlanarIncrement, "batch", lambda self, *a: (
            calls.append(b := several(self, *a)) or b))
        ran = lambda: [(len(b), b.failed) for b in calls]            # noqa: E731
    else:
        iterate = planar_static.PlanarIncrement.iterate
        monkeypatch.setattr(planar_static.PlanarIncrement, "iterate",
                            lambda self, *a: calls.append(iterate(self, *a)) or calls[-1])
        ran = lambda: [(int(c is not None), c is None) for c in calls]  # noqa: E731
    fast = run(deck, monkeypatch, batch=batch)
    done = ran()
    slow = run(deck, monkeypatch, compiled=False)
    assert any(failed for _, failed in done) and sum(k for k, _ in done) > 0
    assert len(fast[2]) > 1                        # cut back into several increments
    assert_same_run(fast, slow)


def cut_back() -> dict:
    """The elastica at once in at most five iterations: cut back, then grown again."""
    deck = elastica(increments=1)
    deck["steps"][0].update(max_iterations=5, max_increment=10.0)
    return deck


SEVERAL = {"elastica": elastica, "chain": shuffled_chain, "arch": lambda: shallow_arch(4.0),
           "cut back": cut_back, "frame": frame}


@pytest.mark.parametrize("every", [None, 3])
@pytest.mark.parametrize("model", list(SEVERAL))
def test_several_increments_in_one_call_are_the_increments_one_by_one(model, every, monkeypatch,
                                                                      caplog):
    """PlanarIncrement.batch (up to the next frame, or the whole step without a recorder)
    against one compiled call an increment: the same load factors, iterations, norms and signs
    and the same states, frames, work, control and warnings, bit for bit (the same arithmetic
    in the same order). The frame (prescribed motion, a load function) is not taken."""
    calls = []
    several = planar_static.PlanarIncrement.batch
    monkeypatch.setattr(planar_static.PlanarIncrement, "batch", lambda self, *a: (
        calls.append(b := several(self, *a)) or b))
    with caplog.at_level("INFO", logger="fem.analysis.static"):
        fast = run(SEVERAL[model](), monkeypatch, every=every)
    logged = caplog.text
    slow = run(SEVERAL[model](), monkeypatch, batch=False, every=every)
    taken = [len(b) for b in calls if b is not None]
    if model == "frame":            # the fallbacks say why
        assert not taken and "one compiled call an increment (prescribed motions" in logged
    else:                           # several a call, at most up to the next frame
        assert 1 < max(taken) <= (every or planar_static.BATCH)
    # beyond the arch's limit point and at the whole elastica at once Newton takes over
    assert ("by the general Newton loop (the compiled one did not finish it)" in logged) == (
        model in ("cut back", "arch"))
    if model == "arch":
        assert any("passed a limit" in w for w in fast[1].warnings)
    (a, step, inc), (b, step_ref, inc_ref) = fast, slow
    assert inc == inc_ref
    assert np.array_equal(a.u, b.u) and np.array_equal(a.rot, b.rot) and a.t == b.t
    assert step.bent == step_ref.bent and step.warnings == step_ref.warnings
    assert vars(step.progress) == vars(step_ref.progress)
    if every:
        for f, g in zip(step.record.frames, step_ref.record.frames, strict=True):
            assert f[0] == g[0] and f[4:] == g[4:]
            assert all(np.array_equal(x, y) for x, y in zip(f[1:4], g[1:4], strict=True))


def test_a_mechanism_is_reported_by_the_general_check(monkeypatch):
    deck = elastica()
    deck["supports"][0]["fixed"] = ["ux", "uy"]           # the root turns freely
    with pytest.raises(ModelError, match="mechanism"):
        run(deck, monkeypatch)


def changed(change: str | None, monkeypatch) -> dict:
    """The elastica of two increments with one thing the compiled increment does not take."""
    deck = elastica(increments=2)
    step = deck["steps"][0]
    if change == "follower":
        deck["loads"][0]["kind"] = "follower"
    elif change == "line_search":
        step["line_search"] = "energy"
    elif change == "modified":
        step["newton"] = "modified"
    elif change == "truss":
        deck["elements"].append({"name": "rod", "type": "truss", "material": "unit",
                                 "section": "s", "connectivity": [[1, 2]]})
    elif change == "linear":
        deck["elements"][0]["formulation"] = "linear"
    elif change == "offsets":
        deck["elements"][0]["offsets"] = [0.0, 0.0]
    elif change == "arclength":
        step.update(control="arclength", arc_length=0.1, max_steps=3)
        for key in ("load_factor", "increments", "max_increment"):
            del step[key]
    elif change == "fem_jit_0":
        monkeypatch.setenv("FEM_JIT", "0")
    return deck


@pytest.mark.parametrize("change", ["follower", "line_search", "truss", "linear", "arclength",
                                    "fem_jit_0"])
def test_other_models_keep_the_general_path(change, monkeypatch):
    deck = changed(change, monkeypatch)
    made = record_made(monkeypatch, planar_static.PlanarIncrement)
    dk = from_dict(deck)
    sysm = System(dk.model)
    make_step(dk.steps[0], sysm, dk).run(sysm.reference_state(), None)
    assert made and made[0] is None


@pytest.mark.parametrize(("change", "reason"), [
    (None, None), ("follower", "loads that turn with the structure"),
    ("line_search", "line_search = 'energy'"), ("modified", "newton = 'modified'"),
    ("truss", "element group 'rod' (truss) has no compiled 2D beam kernel"),
    ("linear", "element group 'beam' (beam) has no compiled 2D beam kernel"),
    ("offsets", "element group 'beam' (beam) has no compiled 2D beam kernel"),
    ("arclength", "control = 'arclength'"),
    ("fem_jit_0", "numba is not installed, or FEM_JIT = 0")])
def test_eligible_says_why_a_step_keeps_the_general_path(change, reason, monkeypatch):
    """From the step's settings and what the groups declare (their compiled pairs): the
    elastica is taken; each change names what the compiled increment does not take."""
    dk = from_dict(changed(change, monkeypatch))
    sysm = System(dk.model)
    assert planar_static.PlanarIncrement.eligible(make_step(dk.steps[0], sysm, dk)) == reason


def test_large_planar_groups_evaluate_compiled_in_the_general_path(monkeypatch):
    """From MIN_ELEMENTS beams, Beam.evaluate itself runs the kernel (arc-length, line
    searches, joints: whatever the compiled increment does not take): the numpy beam's numbers."""
    deck = elastica()
    deck["elements"][0]["divisions"] = kernels.MIN_ELEMENTS
    deck["elements"][0]["theory"] = "timoshenko"
    deck["sections"][0]["Ay"] = 0.8e5
    dk = from_dict(deck)
    state = System(dk.model).reference_state()
    rng = np.random.default_rng(5)
    state.u[:, :2] = rng.normal(scale=0.05, size=(len(state.u), 2))
    state.rot[:] = rng.normal(scale=3.0, size=len(state.rot))
    g = dk.model.groups[0]
    assert g._compiled()
    f, K = g.evaluate(state)
    f_only, none = g.evaluate(state, tangent=False)
    monkeypatch.setenv("FEM_JIT", "0")
    assert not g._compiled()
    f_ref, K_ref = g.evaluate(state)
    assert none is None and np.array_equal(f_only, f)
    assert np.abs(f - f_ref).max() <= 1e-13 * np.abs(f_ref).max()
    assert np.abs(K - K_ref).max() <= 1e-13 * np.abs(K_ref).max()
    small = from_dict(elastica()).model.groups[0]            # 10 beams: numpy
    assert not small._compiled()


def test_the_chords_laplacian_is_scipys_bit_for_bit():
    """planar_static_kernel.laplacian against scipy's CSR of the same entries (the sums of
    duplicates in scipy's order) on random graphs with junctions, parallel beams and held
    nodes; banded._rcm against scipy's reverse_cuthill_mckee on the same patterns."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import reverse_cuthill_mckee

    from fem.analysis.planar_static_kernel import laplacian
    from fem.solvers.banded import _rcm

    rng = np.random.default_rng(0)
    checked = 0
    for _ in range(200):
        n = int(rng.integers(3, 30))
        conn = rng.integers(0, n, size=(int(rng.integers(2, 3 * n)), 2))
        conn = conn[conn[:, 0] != conn[:, 1]]
        w = rng.uniform(0.1, 3.0, size=len(conn))
        free = np.flatnonzero(rng.random(n) > 0.2)
        where = np.full(n, -1, dtype=np.int64)
        where[free] = np.arange(len(free))
        m = len(free)
        got = laplacian(conn, w, where, m)
        ref = planar_static._laplacian_scipy(conn, w, where, m)
        if not len(got[0]):                  # a row of more than 16 entries: scipy's
            continue
        checked += 1
        for a, b in zip(got, ref, strict=True):
            assert np.array_equal(a, b)
        pattern = csr_matrix((np.ones(len(ref[1])), ref[1], ref[0]), shape=(m, m))
        assert np.array_equal(_rcm(got[0], got[1], m),
                              reverse_cuthill_mckee(pattern, symmetric_mode=True))
    assert checked > 150


def test_the_chord_fits_of_a_model_met_again_are_made_once(monkeypatch):
    """The memo of CompiledIncrement._chord_fits: the same model's second step takes the free
    map and factored Laplacians made by the first (the same arrays, equal to fresh ones); a
    model with the same beams but another support gets its own entry."""
    monkeypatch.setattr(planar_static, "_fits", planar_static.OrderedDict())
    fits = []
    for supports in (["all"], ["all"], ["ux", "uy"]):      # clamped twice, then pinned
        deck = elastica()
        deck["supports"][0]["fixed"] = supports
        d = from_dict(deck)
        system = System(d.model)
        conn, _, w = planar_static._beams([(g._kernel_data(), None) for g in d.model.groups])
        made = planar_static.PlanarIncrement._chord_fits(system, conn, w, 2)
        fresh = planar_static.PlanarIncrement._factor_fits(system, conn, w, 2)
        np.testing.assert_array_equal(made[0], fresh[0])
        for a, b in zip(made[1], fresh[1], strict=True):
            for x, y in zip(a, b, strict=True):
                np.testing.assert_array_equal(x, y)
        fits.append(made)
    assert fits[1] is fits[0]
    assert fits[2] is not fits[0]                        # its own key (the same rows here)


def model_parts(inc) -> dict:
    """What a PlanarIncrement took of its model: the kernel's arrays (its settings are the
    step's), the band LU's structure, the free map and the active slots."""
    lu = inc.lu
    return {**{k: v for k, v in inc.data.items() if k != "settings"},
            "indptr": lu.indptr, "indices": lu.indices, "order": lu.order, "kl": lu.kl,
            "pos": lu.pos, "free_node": inc.free_node, "free_slot": inc.free_slot,
            "n_active": inc.n_active, "act_flat": inc._flat, "act_pos": inc._pos}


def assert_same_parts(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for key in a:
        x, y = a[key], b[key]
        pairs = zip(x, y, strict=True) if isinstance(x, tuple) else [(x, y)]
        for p, q in pairs:                      # the chords' fits are (ab, kl, order)
            assert type(p) is type(q) and np.array_equal(p, q), key
            if isinstance(p, np.ndarray):
                assert p.dtype == q.dtype and p.shape == q.shape, key


def made_and_fresh(deck, system):
    """The step's PlanarIncrement.make (through the memo) and one made without it."""
    step = make_step(deck.steps[0], system, deck)
    inc = planar_static.PlanarIncrement.make(step)
    preps = [(g._kernel_data(), system.assembler.groups[i])
             for i, g in enumerate(system.model.groups)]
    fresh = planar_static.PlanarIncrement(step, planar_static._Model.make(step, preps))
    return inc, fresh


def test_the_model_part_of_a_model_met_again_is_made_once_and_never_stale(monkeypatch):
    """The memo of PlanarIncrement.make (``_models``): a second System of the same model takes
    the first's arrays; models that differ in one array only (the coordinates, a support, a
    section, the numbering) each get their own, equal to one made without the memo, and the
    first entry keeps copies, not the model's arrays."""
    monkeypatch.setattr(planar_static, "_models", planar_static.OrderedDict())
    base = elastica()
    d = from_dict(copy.deepcopy(base))
    first, fresh = made_and_fresh(d, System(d.model))
    assert_same_parts(model_parts(first), model_parts(fresh))
    again, _ = made_and_fresh(d, System(d.model))
    assert again.data["X"] is first.data["X"] and again.lu.pos is first.lu.pos    # met again
    assert not np.shares_memory(first.data["X"], d.model.X)
    assert not np.shares_memory(first.data["Sc"], d.model.groups[0]._kernel_data().Sc)
    longer, pinned, stiffer = (copy.deepcopy(base) for _ in range(3))
    longer["nodes"]["coordinates"][1][0] *= 1.5        # the coordinates and the lever
    pinned["supports"][0]["fixed"] = ["ux", "uy"]      # the free map and the pattern
    stiffer["sections"][0]["Iz"] *= 2.0                # the section's stiffness
    variants = [longer, pinned, stiffer, shuffled_chain(10)]
    for deck in variants:
        dk = from_dict(deck)
        inc, fresh = made_and_fresh(dk, System(dk.model))
        assert_same_parts(model_parts(inc), model_parts(fresh))
        assert inc.data["X"] is not first.data["X"]
    assert len(planar_static._models) == 1 + len(variants)
    assert_same_parts(model_parts(first), model_parts(made_and_fresh(d, System(d.model))[1]))


def test_a_model_after_another_runs_as_alone():
    """The stiffer elastica after the plain one (the memo holding the latter's part) runs to
    the states, work and iterations it reaches with the memo empty, bit for bit."""
    stiffer = elastica()
    stiffer["sections"][0]["Iz"] *= 2.0
    kept = planar_static._models.copy()
    try:
        with pytest.MonkeyPatch.context() as mp:
            planar_static._models.clear()
            alone = run(stiffer, mp, every=None)
            planar_static._models.clear()
            run(elastica(), mp, every=None)
            assert len(planar_static._models) == 1
            after = run(stiffer, mp, every=None)
    finally:
        planar_static._models.clear()
        planar_static._models.update(kept)
    (a, step, inc), (b, step_ref, inc_ref) = after, alone
    assert inc == inc_ref and step.bent == step_ref.bent
    assert np.array_equal(a.u, b.u) and np.array_equal(a.rot, b.rot)
    assert vars(step.progress) == vars(step_ref.progress)


def test_the_start_sign_of_a_state_met_again_is_the_kernels():
    """PlanarIncrement.start's signs (kept with the model's part, by the state's bytes): at
    uniformly shortened states of the elastica, some past buckling (each compression's own
    sign: both signs occur), each sign asked twice equals the kernel's own, and a state
    changed in place (the same arrays) gets its own."""
    d = from_dict(elastica())
    system = System(d.model)
    step = make_step(d.steps[0], system, d)
    inc = planar_static.PlanarIncrement.make(step)
    state = system.reference_state()
    seen = set()
    for strain in (0.0, -1e-5, -2e-4, -5e-4, -1e-3, -2e-3, -4e-3, 0.0, -5e-4, -2e-3):
        state.u[:, 0] = strain * d.model.X[:, 0]          # the same arrays, moved in place
        d0, lu = inc.data, inc.lu
        own = int(inc.kern.start(state.u, state.rot, d0["conn"], d0["chord0"], d0["l0"],
                                 d0["Sc"], d0["Hc"], d0["edofs"], d0["slot"], inc.n_active,
                                 lu.indptr, lu.pos, lu.order, lu.ab, lu.kl, linalg.NULL_PIVOT))
        for _ in range(2):
            step._sign0 = None
            assert inc.start(step, state) == (own != 0)
            assert step._sign0 == (own or None)
        seen.add(own)
    assert {1, -1} <= seen


def test_the_loads_of_a_model_met_again_are_kept_and_never_stale(monkeypatch):
    """PlanarIncrement._loads (kept with the model's part by the terms' scales and bytes):
    the same loads again are the kept arrays; another force, a moment added, the load held
    from before at another scale, each its own, equal to DofMap.from_nodal of the step's
    forces; gravity (not a nodal load) is not kept."""
    monkeypatch.setattr(planar_static, "_models", planar_static.OrderedDict())

    def loads_of(deck, scales=None):
        d = from_dict(copy.deepcopy(deck))
        system = System(d.model)
        step = make_step(d.steps[0], system, d)
        inc = planar_static.PlanarIncrement.make(step)
        state = system.reference_state()
        state.load_scales = dict(scales or {})
        step.loads.begin(state)
        got = inc._loads(step.loads, state)
        for a, which in zip(got, ("held", "pattern"), strict=True):
            np.testing.assert_array_equal(
                a, system.dofmap.from_nodal(step.loads.force(state, 0.0, which)))
        return got, inc

    base = elastica()
    (held, pattern), inc = loads_of(base)
    again, _ = loads_of(base)
    assert again[1] is pattern and not held.any()                 # met again: kept
    pushed, turned = copy.deepcopy(base), copy.deepcopy(base)
    pushed["loads"][0]["force"] = [0.3, -1.0]
    turned["loads"][0]["moment"] = 0.25
    for deck in (pushed, turned):
        got, _ = loads_of(deck)
        assert not np.array_equal(got[1], pattern)
    for scale in (2.0, 3.0):                                     # P held from an earlier step
        got, _ = loads_of(base, {"P": scale})
        np.testing.assert_array_equal(got[0], scale * pattern)
    kept = len(inc._kept_loads)
    heavy = copy.deepcopy(base)
    heavy["gravity"] = {"acceleration": [0.0, -9.81]}
    heavy["sections"][0]["mass_per_length"] = 0.5
    heavy["steps"][0]["loads"] = ["P", "gravity"]
    assert planar_static._loads_key(make_step(
        (d := from_dict(heavy)).steps[0], System(d.model), d).loads) is None
    assert kept == 1 + 2 + 2
