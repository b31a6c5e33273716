"""Element batches -> global vectors and a CSR matrix with a pattern computed once per model.

When the DOF map is built, each block source (an element group, a constraint group, or the nodal
blocks used by load stiffness, springs and point masses) gets ``edofs (E, nd)`` and ``slot``, the
CSR position of every entry of its element matrices, ``nnz`` (one past the last) for an entry that
does not couple two unknowns. Assembly is then one ``np.bincount`` per source over the element
matrices as they are (the dropped entries land in that one extra bin): no COO triplets, no
sorting, no masking copy, no Python loop over elements (STYLE.md, "Assembly"). The same pattern
serves every matrix of the model (K, M, K_G). Sources of at least :data:`MIN_COMPILED` entries are
summed by compiled gathers instead (:mod:`fem.assembly_kernel`: the same sums to the last bit, in
parallel, no ``nnz``-long temporary per call; 0.15 s instead of 0.31 for the 5.6e7 entries of a
1e6-unknown beam tower), their order made at the first call; ``slot`` is ``int32`` where ``nnz``
allows.

An element group's ``edofs`` are its nodal DOFs followed by its internal unknowns (when the DOF
map numbers them, :mod:`fem.dofs`); a constraint group's are the nodal DOFs it constrains
followed by its multipliers: the group's vectors and matrices come in that order.

The pattern and the slots are made by :func:`csr_pattern` a chunk of entries at a time (issue 31:
every MPI rank builds the whole serial pattern): its peak is about the pattern's keys twice and
the slots, 0.8 KB per unknown of a frame of 3D beams where one ``np.unique(keys,
return_inverse=True)`` of every entry's key took 4.8 KB (``benchmarks/pattern_memory.py``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from fem import kernels
from fem.dofs import DofMap
from fem.kernels import Kernel

#: Sources with fewer element-matrix entries are summed by ``np.bincount`` (loading numba for
#: them costs more than the compiled scatter saves); about 7000 3D beams.
MIN_COMPILED = 1_000_000

#: Entries of element matrices whose keys are made at a time while the CSR pattern is built
#: (:func:`csr_pattern`): 2 MB of keys, in cache (chunks of 4M entries took twice as long at 2e5
#: unknowns, ``benchmarks/pattern_memory.py``).
PATTERN_CHUNK = 1 << 18

#: Up to this many entries in all, the keys are made at once and the pattern and slots come from
#: one ``np.unique(keys, return_inverse=True)``: 1.2x faster there (warm, as the suite builds
#: thousands of small models), its peak ~60 bytes an entry, 60 MB at this bound (~7000 3D beams,
#: 1.4e4 unknowns). Above it, chunks: as fast from 2e4 unknowns in a fresh process, 1/4 the peak.
PATTERN_AT_ONCE = 1 << 20

#: a chunk size that takes any source whole (:func:`_chunks`)
WHOLE = 1 << 62

_compiled = Kernel("fem.assembly_kernel", "gather_add")


@dataclass(frozen=True)
class Scatter:
    """Where one block source puts its entries."""

    edofs: NDArray   # (E, nd) positions in the full active vector
    slot: NDArray    # (E * nd * nd,) CSR position of each entry; nnz where it couples no unknowns
    #: entries of the whole source when this is a part of it (fem.owner_computes): the sum is
    #: compiled or not as the whole's would be (the same sums either way; the compiled one
    #: needs no nnz-long temporary)
    whole: int = 0


class Assembler:
    """Assembles element-batch arrays of a model into full vectors and free-DOF CSR values.

    Parameters
    ----------
    model : the model whose groups define the element sources
    dofmap : its DOF numbering

    Attributes
    ----------
    indptr, indices : CSR pattern of the free-DOF matrix, ``(N + 1,)`` and ``(nnz,)``
    groups : one :class:`Scatter` per element group, in model order
    nodes : the :class:`Scatter` of the per-node ``(nslots, nslots)`` blocks
    """

    def __init__(self, model, dofmap: DofMap):
        self.dofmap = dofmap
        n_free = dofmap.n_free
        #: the element groups' ``conn`` the pattern was made for (a sphere set's changes)
        self.conns = tuple(g.conn for g in model.groups)
        sources = pattern_sources(model, dofmap)
        self.indptr, self.indices, slots = csr_pattern(sources, n_free)
        scatters = [Scatter(ed, slot) for ed, slot in zip(sources, slots, strict=True)]
        self.groups = scatters[:len(model.groups)]
        self.constraints = scatters[len(model.groups):-1]
        self.nodes = scatters[-1]
        self.n_free = n_free
        self._entry_rows = None
        self._abs = None              # |A| as a scipy CSR matrix (abs_times, small models)
        self._diagonal = None
        self._orders: dict[tuple[int, bool], tuple[NDArray, NDArray]] = {}
        self.n_active = dofmap.n_active

    @property
    def nnz(self) -> int:
        """Number of stored entries of the free-DOF matrix."""
        return len(self.indices)

    def vector(self, blocks: list[NDArray | None], nodal: NDArray | None = None,
               constraints: list[NDArray] | None = None) -> NDArray:
        """Sum element vectors ``(E, nd)`` (one per group, ``None`` to skip) into a full vector.

        ``nodal`` is an optional ``(n, nslots)`` array added at the active DOFs; ``constraints``
        the constraint groups' vectors (one per constraint group).
        """
        out = np.zeros(self.n_active)
        pairs = list(zip(self.groups, blocks, strict=True))
        if constraints is not None:
            pairs += list(zip(self.constraints, constraints, strict=True))
        for sc, fe in pairs:
            if fe is None:
                continue
            if not self._gather(sc, out, fe, matrix=False):
                sum_by_target(out, sc.edofs.reshape(-1), fe.reshape(-1))
        if nodal is not None:
            out += self.dofmap.from_nodal(nodal)
        return out

    def matrix(self, blocks: list[NDArray | None], node_blocks: NDArray | None = None,
               constraints: list[NDArray] | None = None) -> NDArray:
        """CSR values (``nnz``,) of the matrix of the unknowns from element matrices.

        ``blocks`` are ``(E, nd, nd)`` per element group (``None`` to skip); ``node_blocks`` an
        optional ``(n, nslots, nslots)`` array of per-node blocks (load stiffness, springs, point
        masses), entries at inactive slots ignored; ``constraints`` the constraint groups'
        matrices.
        """
        data = np.zeros(self.nnz)
        pairs = list(zip(self.groups, blocks, strict=True))
        if constraints is not None:
            pairs += list(zip(self.constraints, constraints, strict=True))
        if node_blocks is not None:
            pairs.append((self.nodes, node_blocks))
        for sc, ke in pairs:
            if ke is None:
                continue
            if not self._gather(sc, data, ke, matrix=True):
                sum_by_target(data, sc.slot, ke.reshape(-1))
        return data

    def _gather(self, sc: Scatter, out: NDArray, values: NDArray, matrix: bool) -> bool:
        """Add ``values`` of source ``sc`` into ``out`` by the compiled gather, if it is used.

        For sources of :data:`MIN_COMPILED` matrix entries where numba is there; the source's
        order by target (CSR position, or vector position) is made at its first call.
        """
        if max(len(sc.slot), sc.whole) < MIN_COMPILED or not _compiled.enabled():
            return False
        from fem import assembly_kernel as kern

        key = (id(sc), matrix)
        if key not in self._orders:
            target = sc.slot if matrix else sc.edofs.reshape(-1)
            self._orders[key] = kern.order_by_target(target, len(out))
        ptr, perm = self._orders[key]
        kern.gather_add(out, ptr, perm, np.ascontiguousarray(values, dtype=float).reshape(-1))
        return True

    def abs_times(self, data: NDArray, q: NDArray) -> NDArray:
        """(N,) ``|A| q`` for the free-DOF matrix ``A`` of CSR values ``data`` (entrywise ``|.|``).

        The round-off floor of a residual (:meth:`fem.analysis.base.StepBase.floors`); compiled
        from :data:`MIN_COMPILED` stored entries, else through scipy.
        """
        q = np.ascontiguousarray(q, dtype=float)
        if self.nnz >= MIN_COMPILED and _compiled.enabled():
            from fem import assembly_kernel as kern

            out = np.empty(self.n_free)
            kern.abs_row_sums(np.ascontiguousarray(data, dtype=float), self.indptr, self.indices,
                              q, out)
            return out
        if self._abs is None or self._abs.shape[1] != len(q):
            import scipy.sparse as sp

            # made once: building a scipy matrix costs more than the product on small models
            self._abs = sp.csr_matrix((np.zeros(self.nnz), self.indices, self.indptr),
                                      shape=(self.n_free, len(q)))
        np.abs(data, out=self._abs.data)
        return self._abs @ q

    @property
    def entry_rows(self) -> NDArray:
        """(nnz,) the row of every stored entry (computed once)."""
        if self._entry_rows is None:
            self._entry_rows = np.repeat(np.arange(self.n_free), np.diff(self.indptr))
        return self._entry_rows

    def diagonal_positions(self) -> NDArray:
        """(N,) positions of the diagonal entries in the CSR values (computed once)."""
        if self._diagonal is None:
            self._diagonal = np.flatnonzero(self.entry_rows == self.indices)
            self._diagonal.setflags(write=False)
        return self._diagonal

    def to_scipy(self, data: NDArray):
        """The free-DOF matrix as a ``scipy.sparse.csr_matrix`` (tests, diagnostics)."""
        import scipy.sparse as sp

        return sp.csr_matrix((data, self.indices, self.indptr), shape=(self.n_free, self.n_free))


def pattern_sources(model, dofmap: DofMap) -> list[NDArray]:
    """The ``edofs (E, nd)`` of every block source, in the assembler's order.

    The element groups (nodal DOFs, then internal unknowns), the constraint groups (nodal DOFs,
    then multipliers), then the per-node blocks (``dofmap.index``, -1 at inactive slots).
    """
    constraints = getattr(model, "constraints", ())
    # a group without internal unknowns takes its current element count (a sphere set's
    # candidate pairs change)
    edofs = [np.hstack([dofmap.element_dofs(g.conn, g.dof_names),
                        inner if inner is not None and inner.shape[1]
                        else np.zeros((len(g), 0), np.int64)])
             for g, inner in zip(model.groups, dofmap.internal or [None] * len(model.groups),
                                 strict=True)]
    edofs += [np.hstack([dofmap.element_dofs(c.conn, c.dof_names), lam])
              for c, lam in zip(constraints, dofmap.multipliers, strict=True)]
    return edofs + [dofmap.index]


def _chunks(ed: NDArray, n_free: int, size: int = 0):
    """``(a, b, key, keep)`` per run of elements ``a:b`` of a source's ``edofs``.

    ``size`` (default :data:`PATTERN_CHUNK`) entries at a time: the entries' keys
    ``row * n_free + column`` (``(b - a, nd, nd)``, int64) and which of them couple two unknowns
    (``0 <= row, column < n_free``).
    """
    nd = ed.shape[1]
    step = max(1, (size or PATTERN_CHUNK) // max(nd * nd, 1))
    for a in range(0, len(ed), step):
        e = ed[a:a + step]
        free = (e >= 0) & (e < n_free)
        key = e[:, :, None].astype(np.int64) * n_free + e[:, None, :]
        yield a, a + len(e), key, free[:, :, None] & free[:, None, :]


def csr_pattern(sources: list[NDArray], n_free: int) -> tuple[NDArray, NDArray, list[NDArray]]:
    """The CSR pattern of the sources' element matrices and each entry's position in it.

    Parameters
    ----------
    sources : ``(E, nd)`` DOF numbers of each source's elements (an entry couples two unknowns
        where both its row and column are in ``0 .. n_free - 1``; others are dropped)
    n_free : number of unknowns

    Returns
    -------
    indptr, indices : ``(n_free + 1,)`` and ``(nnz,)`` int64, the sorted unique ``(row, column)``
        pairs of the coupling entries and the diagonal (always stored: preconditioners, shifts)
    slots : per source ``(E * nd * nd,)``, the CSR position of each entry, ``nnz`` where it is
        dropped; int32 where ``nnz`` allows

    The keys ``row * n_free + column`` are made :data:`PATTERN_CHUNK` entries at a time, twice:
    each chunk's unique keys are gathered and sorted into the pattern (a merge of sorted runs),
    then each chunk's keys are looked up in it (``np.searchsorted``). No array of every entry's
    key, argsort permutation or inverse is ever whole: the peak is the slots (4 bytes an entry)
    and the pattern's keys about twice (8 bytes each), not the ~60 bytes an entry of one
    ``np.unique(keys, return_inverse=True)``; the arrays are that one's, bit for bit
    (``tests/test_assembly_pattern.py``). Up to :data:`PATTERN_AT_ONCE` entries in all, that
    ``np.unique`` makes them (faster on small models).
    """
    diagonal = np.arange(n_free, dtype=np.int64) * (n_free + 1)
    total = sum(ed.size * ed.shape[1] for ed in sources)
    if total <= PATTERN_AT_ONCE:
        # one chunk: one np.unique with its inverse is faster (the suite's thousands of models)
        # one chunk a source, whatever its size (a source of elements without DOFs too)
        keys = [(key[keep], keep.reshape(-1)) for ed in sources for _, _, key, keep in
                _chunks(ed, n_free, WHOLE)]
        unique, inverse = np.unique(np.concatenate([k for k, _ in keys] + [diagonal]),
                                    return_inverse=True)
        index = np.int32 if len(unique) < np.iinfo(np.int32).max else np.int64
        slots, start = [], 0
        for ed in sources:
            slot = np.full(ed.size * ed.shape[1], len(unique), dtype=index)
            if len(ed):
                key, keep = keys.pop(0)
                slot[keep] = inverse[start:start + len(key)]
                start += len(key)
            slots.append(slot)
        indptr = _csr(unique, n_free)
        return indptr, unique, slots
    # an upper bound: only the part written below is ever resident (pages are mapped when touched)
    found = np.empty(total + n_free, dtype=np.int64)
    m = 0
    for ed in sources:
        for _, _, key, keep in _chunks(ed, n_free):
            u = np.unique(key[keep])
            found[m:m + len(u)] = u
            m += len(u)
    found[m:m + n_free] = diagonal
    m += n_free
    found = found[:m]
    found.sort(kind="stable")       # sorted runs: merged (timsort), twice as fast as quicksort
    first = np.empty(m, dtype=bool)
    first[:1] = True
    np.not_equal(found[1:], found[:-1], out=first[1:])
    unique = found[first]
    del found, first
    nnz = len(unique)
    index = np.int32 if nnz < np.iinfo(np.int32).max else np.int64
    slots = []
    for ed in sources:
        nd2 = ed.shape[1] ** 2
        slot = np.full(ed.shape[0] * nd2, nnz, dtype=index)
        for a, b, key, keep in _chunks(ed, n_free):
            part = slot[a * nd2:b * nd2]
            part[keep.reshape(-1)] = np.searchsorted(unique, key[keep])
        slots.append(slot)
    indptr = _csr(unique, n_free)
    return indptr, unique, slots


def _csr(unique: NDArray, n_free: int) -> NDArray:
    """``indptr`` of the sorted unique keys ``unique``, which become the ``indices`` (in place)."""
    ncol = max(n_free, 1)
    # row r starts at the first key >= r * n_free; the column is the key's remainder
    indptr = np.searchsorted(unique, np.arange(n_free + 1, dtype=np.int64) * ncol)
    np.remainder(unique, ncol, out=unique)
    return indptr.astype(np.int64, copy=False)


# --- the compiled pairs (fem.kernels.PAIRS) ------------------------------------------------------
def sum_by_target(out: NDArray, target: NDArray, values: NDArray) -> NDArray:
    """``out[k] += sum(values[target == k])`` in place (a target ``len(out)`` is dropped): numpy.

    One ``np.bincount`` (the extra bin takes the entries that couple no unknowns); the
    reference of the compiled pair ``assembly.gather_add``.
    """
    n = len(out)
    out += np.bincount(target, weights=values, minlength=n + 1)[:n]
    return out


def sum_by_target_compiled(out: NDArray, target: NDArray, values: NDArray) -> NDArray:
    """:func:`sum_by_target` by the compiled gather (:func:`fem.assembly_kernel.gather_add`)."""
    from fem import assembly_kernel as kern

    ptr, perm = kern.order_by_target(target, len(out))
    kern.gather_add(out, ptr, perm, np.ascontiguousarray(values, dtype=float))
    return out


def abs_times_numpy(values: NDArray, indptr: NDArray, indices: NDArray, q: NDArray) -> NDArray:
    """``|A| q`` of the CSR values ``values`` (:meth:`Assembler.abs_times`), through scipy."""
    import scipy.sparse as sp

    n = len(indptr) - 1
    return sp.csr_matrix((np.abs(values), indices, indptr), shape=(n, len(q))) @ q


def abs_times_compiled(values: NDArray, indptr: NDArray, indices: NDArray,
                       q: NDArray) -> NDArray:
    """:func:`abs_times_numpy` by :func:`fem.assembly_kernel.abs_row_sums`."""
    from fem import assembly_kernel as kern

    out = np.empty(len(indptr) - 1)
    kern.abs_row_sums(np.ascontiguousarray(values, dtype=float), indptr, indices,
                      np.ascontiguousarray(q, dtype=float), out)
    return out


def _gather_samples(rng) -> list[tuple]:
    """Entries summed into 5e4 targets, a fifth of them outside (the extra bin)."""
    n, m = 50_000, 400_000
    return [(rng.normal(size=n), rng.integers(0, n + 1 + n // 4, size=m).clip(max=n),
             rng.normal(size=m))]


def _abs_samples(rng) -> list[tuple]:
    """A random CSR matrix of 5e4 rows and 10 entries a row, some rows empty."""
    n = 50_000
    counts = rng.integers(0, 20, size=n)
    indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    indices = rng.integers(0, n, size=indptr[-1]).astype(np.int64)
    return [(rng.normal(size=indptr[-1]), indptr, indices, rng.normal(size=n))]


kernels.register(kernels.Pair("assembly.gather_add", _compiled, sum_by_target,
                              sum_by_target_compiled, _gather_samples))
kernels.register(kernels.Pair("assembly.abs_row_sums", _compiled, abs_times_numpy,
                              abs_times_compiled, _abs_samples))
