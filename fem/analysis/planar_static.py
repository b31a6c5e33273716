"""Load-control increments of planar beam models in one compiled call (issue 14).

A small static model's Newton iteration is interpreter work: the 10-element cantilever of
``benchmarks/small_models.py`` took 0.7-1.3 ms an iteration in some hundred numpy calls (the
elements, the assembly, the test, the bent corrections), against OpenSees's 0.02 ms. For the
models where the static step reduces to nodes and beams, :class:`PlanarIncrement` iterates an
increment's Newton loop in :func:`fem.analysis.planar_static_kernel.increment`:

* 2D, a nonlinear static step under load control with full Newton and without a line search
  (``newton = "full"``, ``line_search = "none"``, the defaults: the corrections are the bent
  ones of :mod:`fem.analysis.bent`);
* every element group co-rotational 2D beams (no offsets, no interior modes) in the form the
  compiled kernel knows (:func:`fem.elements.beam.beam2d_jit.prepare`);
* no joints or ties, loads that do not turn with the structure;
* the tangent and the chords' Laplacian narrow enough for the banded LU
  (:mod:`fem.solvers.banded`), no PETSc options for the step's solver (deck or command line:
  they ask for PETSc's solves), and numba there with ``FEM_JIT`` not ``0`` (importing it costs
  0.3-0.6 s once per process; the dynamic steps of planar beams take it in any case).

:meth:`PlanarIncrement.eligible` says which of these a step misses, from its settings and what
the model declares (the groups' compiled pairs,
:attr:`~fem.elements.base.ElementGroup.compiled_pairs`). The increment takes the iterations the
general path takes, to the same states (``tests/test_planar_static.py``); anything but a plain
convergence (a failure to report, a cut back) runs the increment again through the general path
from its predictor, so the messages and the step control have one implementation. The
limit-point watch gets the determinant's sign of every factorization, from the band LU's pivots
(PETSc's own LU, the general path's, takes it from its pivots the same way).

Where nothing between two increments needs Python (no frame due, dead loads ``held + lam
pattern``, no prescribed motions), :meth:`PlanarIncrement.batch` takes them all in one call
(:func:`fem.analysis.planar_static_kernel.increments`: the load control's sizes in the same
arithmetic) and the step books each one's work and watch from the rows handed back
(:meth:`fem.analysis.static.StaticStep._batch`), bit for bit as one call an increment
(issue 32: the step's Python around 20 compiled calls was half the elastica benchmark's time).
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from fem import lazy, linalg
from fem.analysis.bent import TRUST, held_nodes
from fem.kernels import Kernel
from fem.model import NodalLoad
from fem.solvers.banded import BandedLU

sp = lazy.module("scipy.sparse")

#: The most increments :meth:`PlanarIncrement.batch` takes in one call
BATCH = 64
#: and the most nodes times increments: the step's loop checks for a stop request (SIGINT,
#: SIGTERM) between calls, so that one is seen within a few milliseconds on any model size
MAX_NODE_INCREMENTS = 4096
#: the chords' factored Laplacians :meth:`CompiledIncrement._chord_fits` made last, by the
#: bytes of what they are made of (the runs of one small model make the same ones: 40-100 us of
#: a 1.3 ms static step); models up to MEMO_BEAMS beams
MEMO_SIZE, MEMO_BEAMS = 8, 4096
_fits: OrderedDict = OrderedDict()
#: the model's part of :meth:`PlanarIncrement.make` (the kernel's arrays, the band LU's
#: renumbering and positions, the chords' factored Laplacians, the free map, the lever) by the
#: bytes of every array it is made of (:func:`_model_key`): the runs of one small model, each
#: on a new System, make it once (60-80 us of the elastica benchmark's 1.25 ms step). The
#: entries hold copies, so an array changed in place after its entry was made never reaches
#: it; models up to MEMO_BEAMS beams
_models: OrderedDict = OrderedDict()


@dataclass
class Batch:
    """The increments of one :meth:`PlanarIncrement.batch` call, the ``k``-th in row ``k``.

    ``U (k, n, 3)``, ``ROT (k, n)``: the converged states; ``R (k, n_active)``: their
    residuals (the reactions); ``lam``, ``its``, ``bent (k,)``: load factors, iterations, bent
    corrections; ``norms (k, m)``: each iteration's residual norm (``its[k] + 1`` of them);
    ``signs (k, m)``, ``nsigns (k,)``: the factorizations' determinant signs; ``near (k,)``:
    a sign change near the path (the limit-point watch); ``inc``, ``fe (k, n_active)``: the
    increments from the state before and the external forces. ``held``, ``pattern (n_active,)``:
    the loads ``held + lam pattern``; ``failed``: the call stopped at an increment it could
    not finish (the step's Newton takes that one).
    """

    U: NDArray
    ROT: NDArray
    R: NDArray
    lam: NDArray
    its: NDArray
    norms: NDArray
    signs: NDArray
    nsigns: NDArray
    bent: NDArray
    near: NDArray
    inc: NDArray
    fe: NDArray
    held: NDArray | None = None
    pattern: NDArray | None = None
    failed: bool = False

    def view(self, k: int, held: NDArray | None = None, pattern: NDArray | None = None,
             failed: bool = False) -> Batch:
        """The first ``k`` rows (views), with the loads and whether the next one failed."""
        return Batch(self.U[:k], self.ROT[:k], self.R[:k], self.lam[:k], self.its[:k],
                     self.norms[:k], self.signs[:k], self.nsigns[:k], self.bent[:k],
                     self.near[:k], self.inc[:k], self.fe[:k], held, pattern, failed)

    def __len__(self) -> int:
        return len(self.lam)

_kernel = Kernel("fem.analysis.planar_static_kernel", "increment")


class CompiledIncrement:
    """What the compiled load-control increments share (planar here, 3D in spatial_static).

    The free unknowns' nodes and slots, the test's and the solves' settings, the chords'
    Laplacians of the bent corrections, the scratch, and how a converged increment is handed
    back to the step.
    """

    @staticmethod
    def step_reasons(step) -> list[tuple[str, bool]]:
        """``(why, whether)`` of what neither compiled increment takes, from the step alone."""
        system, s = step.system, step.settings
        model, dm = system.model, system.dofmap
        return [("a linear step", not s.nonlinear),
                (f"control = {s.control!r}", s.control != "load"),
                (f"line_search = {s.line_search!r}", s.line_search != "none"),
                (f"newton = {s.newton!r}", s.newton != "full"),
                ("the distributed solve: the compiled increments are serial",
                 step.linear.distributed),
                ("PETSc options for the step's solver", step.linear.petsc_options_given),
                ("joints or ties", bool(getattr(model, "constraints", ()))),
                ("loads that turn with the structure", step.loads.state_dependent),
                ("no free unknowns", dm.n_free == 0),
                ("unknowns besides the nodes'", dm.n_free != dm.n_nodal),
                ("no element groups", not model.groups)]

    def _common(self, step) -> None:
        """The free map, settings and scratch of ``step``'s increments."""
        dm = step.system.dofmap
        self.free_node, self.free_slot = _free_map(dm)
        self.n_active = dm.n_active
        self._scratch(step)

    def _scratch(self, step) -> None:
        """The test's and the solves' settings and the increments' scratch (the step's own)."""
        test = step.test
        self.settings = np.array([
            test.rtol, test.atol, test.max_iterations, test.round_off, EPS,
            linalg.NULL_PIVOT, linalg.REFINE_ABOVE, linalg.MAX_REFINEMENTS,
            linalg.POOR_BACKWARD_ERROR, TRUST])
        self._norms = np.empty(test.max_iterations + 3)     # the increments' scratch
        self._signs = np.empty(test.max_iterations + 3, dtype=np.int64)
        self._counts = np.zeros(2, dtype=np.int64)

    @staticmethod
    def _chord_fits(system, conn: NDArray, w: NDArray, sets: int) -> tuple | None:
        """``(where (sets, n), fits)``: each set of free nodes' rows, its chords' Laplacian.

        Factored by :func:`_laplacian_band`; None where one is too wide or singular. Taken from
        :data:`_fits` where the same free map and beams made them lately (the same arrays:
        the kernels only read them).
        """
        dm = system.dofmap
        key = (sets, system.model.dim, system.model.n_nodes, dm.n_nodal, dm.index.shape,
               dm.index.tobytes(), conn.tobytes(), w.tobytes()) if len(conn) <= MEMO_BEAMS \
            else None
        if key is not None and key in _fits:
            _fits.move_to_end(key)
            return _fits[key]
        found = CompiledIncrement._factor_fits(system, conn, w, sets)
        if key is not None:
            _fits[key] = found
            if len(_fits) > MEMO_SIZE:
                _fits.popitem(last=False)
        return found

    @staticmethod
    def _factor_fits(system, conn: NDArray, w: NDArray, sets: int) -> tuple | None:
        """:meth:`_chord_fits` made anew."""
        where = np.full((sets, system.model.n_nodes), -1, dtype=np.int64)
        fits = []
        # supported: the increments run only after the start's tangent factored (start)
        for k, held in enumerate(held_nodes(system, conn, supported=True)):
            f = np.flatnonzero(~held)
            where[k, f] = np.arange(len(f))
            same = [j for j in range(k) if np.array_equal(where[j], where[k])]
            if same:
                fits.append(fits[same[0]])      # the same free nodes: one factorization
                continue
            fit = _laplacian_band(conn, w, where[k], len(f))
            if fit is None:
                return None
            fits.append(fit)
        return where, fits

    def _converged(self, step, trial, u, rot, it: int) -> None:
        """``trial`` moved to the converged ``u, rot``; norms, signs and bent count to the step."""
        trial.u[:] = u
        trial.rot[:] = rot
        step.test.start()
        step.test.norms = self._norms[:it + 1].tolist()
        # every iteration factors: the k-th sign goes with the k-th residual (Newton's factored)
        step._signs = [(int(g), step.test.norms[k])
                       for k, g in enumerate(self._signs[:self._counts[0]])]
        step.bent += int(self._counts[1])


class PlanarIncrement(CompiledIncrement):
    """The compiled load-control increment of one static step's planar beam model."""

    def __init__(self, step, model: _Model):
        from fem.analysis import planar_static_kernel

        self.kern = planar_static_kernel
        # the band's structure is the model's; its values (``ab``) the increment's scratch
        self.lu = BandedLU(model.indptr, model.indices, model.order, model.kl, model.pos)
        self.free_node, self.free_slot = model.free_node, model.free_slot
        self._flat, self._pos = model.act_flat, model.act_pos   # the active slots
        self._starts, self._kept_loads = model.starts, model.loads
        self.n_active = model.n_active
        self._scratch(step)
        self.data = {**model.data, "settings": self.settings}
        self._held = None                   # the loads held + lam pattern (batch)
        self._arrays = None                 # the batch's arrays

    @staticmethod
    def eligible(step) -> str | None:
        """Why the compiled increment cannot take ``step`` (its settings, its model), or None.

        From what the step and the groups declare (the module docstring's list): every
        element group's evaluation the compiled pair ``beam2d.evaluate``
        (:attr:`~fem.elements.base.ElementGroup.compiled_pairs`), whose kernel the increment
        inlines; numba is imported last, for a model it takes.
        """
        system = step.system
        model, dm = system.model, system.dofmap
        for why, when in (
                ("not a planar model", model.dim != 2), *CompiledIncrement.step_reasons(step)):
            if when:
                return why
        for i, g in enumerate(model.groups):
            if "beam2d.evaluate" not in g.compiled_pairs:
                return f"element group '{g.name}' ({g.type_name}) has no compiled 2D beam kernel"
            if dm.internal and dm.internal[i].shape[1]:
                return f"element group '{g.name}' has element-internal unknowns"
        if not _kernel.enabled():
            return "numba is not installed, or FEM_JIT = 0"
        return None

    @classmethod
    def make(cls, step) -> PlanarIncrement | None:
        """The compiled increment of ``step``'s model, or None where the general path is needed.

        None where :meth:`eligible` gives a reason, where the kernel does not know a group's
        basic beam, or where the tangent or the chords' Laplacian is too wide for the band.
        """
        if cls.eligible(step) is not None:
            return None
        system = step.system
        preps = []
        for i, g in enumerate(system.model.groups):
            try:
                prep = g._kernel_data()
            except RuntimeError:                # a basic beam the kernel does not know
                return None
            preps.append((prep, system.assembler.groups[i]))
        key = _model_key(system, preps)
        if key is not None and key in _models:
            _models.move_to_end(key)
            model = _models[key]
        else:
            model = _Model.make(step, preps)
            if key is not None:
                _models[key] = model
                if len(_models) > MEMO_SIZE:
                    _models.popitem(last=False)
        return None if model is None else cls(step, model)

    def start(self, step, state) -> bool:
        """The start of the step (StaticStep._check_start) on the band LU: false if it failed.

        The tangent at ``state`` factored and its determinant's sign the limit-point watch's
        reference; false where it is not finite or singular (the general check then says why).
        The sign at a state met lately on this model (the runs of one model start from its
        reference state) is its part's (:attr:`_Model.starts`, by the state's bytes and the
        null-pivot threshold): the band's values are scratch that every factorization fills.
        """
        key = (state.u.tobytes(), state.rot.tobytes(), linalg.NULL_PIVOT)
        starts = self._starts
        sign = starts.get(key)
        if sign is None:
            d, lu = self.data, self.lu
            sign = int(self.kern.start(
                state.u, state.rot, d["conn"], d["chord0"], d["l0"], d["Sc"], d["Hc"],
                d["edofs"], d["slot"], self.n_active, lu.indptr, lu.pos, lu.order, lu.ab, lu.kl,
                linalg.NULL_PIVOT))
            if len(starts) >= MEMO_SIZE:
                del starts[next(iter(starts))]          # the oldest
            starts[key] = sign
        if sign == 0:
            return False
        step._sign0 = int(sign)
        return True

    def iterate(self, step, trial, lam: float) -> tuple[int, NDArray] | None:
        """Newton on the increment to load factor ``lam`` from ``trial`` (its predictor).

        Returns the iterations and the residual (the reactions), with ``trial`` moved to the
        converged state, the norms in ``step.test`` and the factorizations' signs in
        ``step._signs``; None where the general path is needed (``trial`` is left as it was).
        """
        d, lu = self.data, self.lu
        fe = step.external(trial, lam)
        u, rot = trial.u.copy(), trial.rot.copy()
        r = np.empty(self.n_active)                         # kept by the step: the reactions
        norms, signs, counts = self._norms, self._signs, self._counts
        status, it = self.kern.increment(
            d["X"], u, rot, d["conn"], d["chord0"], d["l0"], d["Sc"], d["Hc"], d["edofs"],
            d["slot"], fe, d["kind"], d["n_free"], d["lever"], d["free_node"], d["free_slot"],
            lu.indptr, lu.indices, lu.pos, lu.order, lu.ab, lu.kl, d["w"], d["where"],
            d["fit0"], d["fit1"], d["settings"], r, norms, signs, counts)
        if status != self.kern.CONVERGED:
            return None
        self._converged(step, trial, u, rot, it)
        return it, r

    def batch(self, step, state, control, count: int) -> Batch | None:
        """Up to ``count`` increments of ``control`` from ``state`` in one compiled call.

        :func:`fem.analysis.planar_static_kernel.increments`: the increments the step's loop
        would take one by one (:meth:`iterate` each) while nothing between them needs Python;
        the control's size and the path done are advanced in place (``control.progress``), the
        rest of each increment's book-keeping is the step's (:class:`Batch`). None where the
        loads are not ``held + lam pattern`` or motions are prescribed (the step's loop then
        takes the increments one by one).
        """
        loads = step.loads
        if loads.prescribed or not loads._linear_in_t():
            return None
        if self._held is None:
            self._held = self._loads(loads, state)
        held, pattern = self._held
        count = min(count, BATCH, max(1, MAX_NODE_INCREMENTS // max(1, len(state.rot))))
        b = self._batch_arrays(state, count)
        p, policy = control.progress, control.policy
        settings = np.array([control.sign, control.end, p.done, policy.size, policy.nominal,
                             policy.grow, -1.0 if policy.fast is None else policy.fast, 0.0])
        d, lu = self.data, self.lu
        k = self.kern.increments(
            d["X"], state.u, state.rot, d["conn"], d["chord0"], d["l0"], d["Sc"], d["Hc"],
            d["edofs"], d["slot"], held, pattern, d["kind"], d["n_free"], d["lever"],
            d["free_node"], d["free_slot"], lu.indptr, lu.indices, lu.pos, lu.order, lu.ab,
            lu.kl, d["w"], d["where"], d["fit0"], d["fit1"], d["settings"], settings,
            0 if step._sign0 is None else int(step._sign0), self._flat, self._pos, b.U, b.ROT,
            b.R, b.lam, b.its, b.norms, b.signs, b.nsigns, b.bent, b.near, b.inc, b.fe)
        if k:                                       # LoadControl.accept, k times
            p.done, policy.size = float(settings[2]), float(settings[3])
            p.increments += k
            p.load_factor = float(control.lam)
            policy.cuts = 0
        return b.view(k, held, pattern, bool(settings[7]))

    def _loads(self, loads, state) -> tuple[NDArray, NDArray]:
        """``(held, pattern)``: the loads ``held + lam pattern`` on the active unknowns.

        DofMap.from_nodal's gathers of the step's forces on the model's slots; where every
        term is a dead nodal load, kept with the model's part (:attr:`_Model.loads`) by the
        terms' scales and bytes (:func:`_loads_key`: the runs of one model load it alike).
        """
        key = _loads_key(loads)
        kept = self._kept_loads.get(key) if key is not None else None
        if kept is None:
            kept = tuple(_gather(loads.force(state, 0.0, which), self._flat, self._pos,
                                 self.n_active) for which in ("held", "pattern"))
            if key is not None:
                if len(self._kept_loads) >= MEMO_SIZE:
                    del self._kept_loads[next(iter(self._kept_loads))]     # the oldest
                self._kept_loads[key] = kept
        return kept

    def _batch_arrays(self, state, count: int) -> Batch:
        """The arrays of :meth:`batch`, made at the step's first batch (then the same)."""
        if self._arrays is None or self._arrays.lam.shape[0] < count:
            n, m, rows = len(state.rot), self._norms.shape[0], self.n_active
            self._arrays = Batch(np.empty((BATCH, n, state.u.shape[1])), np.empty((BATCH, n)),
                                 np.empty((BATCH, rows)), np.empty(BATCH),
                                 np.empty(BATCH, np.int64), np.empty((BATCH, m)),
                                 np.empty((BATCH, m), np.int64), np.empty(BATCH, np.int64),
                                 np.empty(BATCH, np.int64), np.empty(BATCH, np.bool_),
                                 np.empty((BATCH, rows)), np.empty((BATCH, rows)))
        a = self._arrays
        return a if a.lam.shape[0] == count else a.view(count)


#: the unit round-off of the settings (``np.finfo`` costs microseconds a call)
EPS = float(np.finfo(float).eps)


def _free_map(dm) -> tuple[NDArray, NDArray]:
    """``(node, slot)`` of each free unknown of the DOF map ``dm`` (its row)."""
    free = (dm.index >= 0) & (dm.index < dm.n_free)
    nodes_, slots = np.nonzero(free)
    rows = dm.index[free]
    free_node = np.empty(dm.n_free, np.int64)
    free_slot = np.empty(dm.n_free, np.int64)
    free_node[rows], free_slot[rows] = nodes_, slots
    return free_node, free_slot


def _gather(nodal: NDArray, flat: NDArray, pos: NDArray, n: int) -> NDArray:
    """:meth:`fem.dofs.DofMap.from_nodal` of ``nodal`` with its active slots ``flat, pos``."""
    out = np.zeros(n)
    out[pos] = nodal.reshape(-1)[flat]
    return out


def _loads_key(loads) -> tuple | None:
    """The key of :attr:`_Model.loads`: each held and pattern term's scale and load, as bytes.

    The terms :meth:`fem.loads.StepLoads.force` sums at ``t = 0`` for ``"held"`` and
    ``"pattern"``; None where one is not a dead :class:`~fem.model.NodalLoad` (its forces
    may depend on more than its own arrays: masses, element lengths).
    """
    key = []
    for which in ("held", "pattern"):
        key.append(which)
        for ld, scale in loads._terms(0.0, which):
            if type(ld) is not NodalLoad or ld.kind != "dead":
                return None
            key.append(float(scale))
            for a in (ld.nodes, ld.force, ld.moment):
                a = np.asarray(a)
                key += (a.shape, a.dtype.char, a.tobytes())
    return tuple(key)


def _model_key(system, preps: list) -> tuple | None:
    """The key of :data:`_models`: every array :meth:`_Model.make` reads, as bytes.

    The coordinates, the DOF map (its numbering and kinds), the tangent's CSR pattern and
    each group's kernel data and scatter positions, with the shapes and types that tell equal
    bytes of different arrays apart; None for a model over :data:`MEMO_BEAMS` beams.
    """
    if sum(len(p.l0) for p, _ in preps) > MEMO_BEAMS:
        return None
    model, dm, asm = system.model, system.dofmap, system.assembler
    key = [model.dim, dm.n_free, dm.n_nodal, dm.n_active]
    for a in (model.X, dm.index, dm.kind_index, asm.indptr, asm.indices):
        key += (a.shape, a.dtype.char, a.tobytes())
    for p, sc in preps:
        for a in (p.conn, p.chord0, p.l0, p.Sc, p.Hc, sc.edofs, sc.slot):
            key += (a.shape, a.dtype.char, a.tobytes())
    return tuple(key)


@dataclass
class _Model:
    """The model's part of a :class:`PlanarIncrement` (:data:`_models`): copies of its arrays.

    ``data``: the kernel's arrays but the step's settings; ``indptr, indices, order, kl,
    pos``: the band LU's structure (:class:`~fem.solvers.banded.BandedLU`); the free map, the
    number of active unknowns and the active slots (``act_flat, act_pos``:
    :attr:`fem.dofs.DofMap._active_slots`).
    """

    data: dict
    indptr: NDArray
    indices: NDArray
    order: NDArray
    kl: int
    pos: NDArray
    free_node: NDArray
    free_slot: NDArray
    n_active: int
    act_flat: NDArray
    act_pos: NDArray
    #: the determinant's signs of the tangent at the states steps started from (start)
    starts: dict = field(default_factory=dict)
    #: the loads ``(held, pattern)`` of the steps' dead nodal loads (PlanarIncrement._loads)
    loads: dict = field(default_factory=dict)

    @classmethod
    def make(cls, step, preps: list) -> _Model | None:
        """Made from ``step``'s system and the groups' ``preps``.

        None where the tangent or the chords' Laplacian is too wide for the band.
        """
        system = step.system
        dm = system.dofmap
        lu = BandedLU.make(system.assembler.indptr, system.assembler.indices)
        if lu is None:
            return None
        conn, l0, w = _beams(preps)
        found = CompiledIncrement._chord_fits(system, conn, w, 2)
        if found is None:
            return None
        where, fits = found
        free_node, free_slot = _free_map(dm)
        copy = lambda a: np.array(a, copy=True)  # noqa: E731
        data = {
            "X": np.array(system.model.X, dtype=float, order="C", copy=True),
            "conn": copy(conn),
            "chord0": copy(_join([p.chord0 for p, _ in preps])),
            "l0": copy(l0),
            "Sc": copy(_join([p.Sc for p, _ in preps])),
            "Hc": copy(_join([p.Hc for p, _ in preps])),
            "edofs": copy(_join([sc.edofs for _, sc in preps], np.int64)),
            "slot": copy(_join([sc.slot for _, sc in preps], np.int64)),
            "kind": np.array(dm.kind_index, dtype=np.int64, order="C", copy=True),
            "n_free": dm.n_free, "lever": float(step._model_size()),
            "free_node": free_node, "free_slot": free_slot,
            "w": copy(w), "where": where, "fit0": fits[0], "fit1": fits[1]}
        flat, pos = dm._active_slots
        return cls(data, copy(lu.indptr), copy(lu.indices), copy(lu.order), lu.kl, copy(lu.pos),
                   free_node, free_slot, dm.n_active, np.array(flat, dtype=np.int64),
                   np.array(pos, dtype=np.int64))


def _join(arrays: list, dtype=float) -> NDArray:
    """The groups' arrays one after the other (contiguous; the array itself for one group)."""
    if len(arrays) == 1:
        return np.ascontiguousarray(arrays[0], dtype=dtype)
    return np.concatenate([np.asarray(a, dtype=dtype) for a in arrays])


def _beams(preps: list) -> tuple:
    """``(conn, l0, w)`` of all the groups' beams, ``w = 1 / l0`` (the chords' weights)."""
    l0 = _join([p.l0 for p, _ in preps])
    return _join([p.conn for p, _ in preps], np.int64), l0, 1.0 / l0


def _laplacian_band(conn: NDArray, w: NDArray, where: NDArray, m: int) -> tuple | None:
    """The chords' Laplacian on ``m`` free nodes (rows ``where``), factored as a band.

    ``sum_e w_e (Y_b - Y_a)^2`` over the beams ``conn``, a term on the diagonal for each free
    end, factored by :class:`fem.solvers.banded.BandedLU` (renumbered as the tangent is where
    that narrows it); None wider than :data:`~fem.solvers.banded.MAX_BAND` or singular.
    ``(ab, kl, order)`` for :func:`fem.solvers.banded_kernel.apply`.
    """
    if m == 0:
        return np.zeros((0, 1)), 0, np.zeros(0, dtype=np.int64)
    from fem.analysis.planar_static_kernel import laplacian

    indptr, indices, data = laplacian(conn, w, where, m)     # scipy's sums, without scipy
    if not len(indptr):
        indptr, indices, data = _laplacian_scipy(conn, w, where, m)
    lu = BandedLU.make(indptr, indices)
    if lu is None:
        return None
    lu.fill(data)
    try:
        lu.factor()
    except linalg.SingularMatrixError:
        return None
    return lu.ab, lu.kl, lu.order


def _laplacian_scipy(conn: NDArray, w: NDArray, where: NDArray, m: int) -> tuple:
    """:func:`fem.analysis.planar_static_kernel.laplacian` by scipy (rows of any length)."""
    ja, jb = where[conn[:, 0]], where[conn[:, 1]]
    on = [j >= 0 for j in (ja, jb)]
    both = on[0] & on[1]
    L = sp.csr_matrix((np.r_[w[on[0]], w[on[1]], -w[both], -w[both]],
                       (np.r_[ja[on[0]], jb[on[1]], ja[both], jb[both]],
                        np.r_[ja[on[0]], jb[on[1]], jb[both], ja[both]])), shape=(m, m))
    L.sum_duplicates()
    return L.indptr, L.indices, L.data
