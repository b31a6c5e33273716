"""The model cut into ranks: an element partition and the unknowns' numbering by owner.

Issue 31, stage 4 (the seam of DESIGN.md, "Distributed assembly": the DOF map's index map of
owned unknowns). The vertices are the elements of every element group, in model order, then the
items of every constraint group (a joint's rows go with its elements), each weighted by the
entries of its element matrix (``nd^2``, what its evaluation and assembly cost). They are cut
into as many parts as there are ranks on rank 0, and the parts are broadcast, so every rank has
the same partition:

* ``rcb`` (the default): recursive coordinate bisection of the vertices' centroids (Berger &
  Bokhari 1987): the vertices are sorted along the longest extent of their box and cut where the
  weights split in the ratio of the ranks on each side, recursively. Deterministic (a stable
  sort): a model is cut the same way in every run, so a distributed run's results repeat to the
  last bit.
* ``ptscotch`` (``-fem_partition_type ptscotch``): the graph of vertices sharing a node, cut by
  PT-Scotch (Pellegrini & Roman 1996) through PETSc's ``MatPartitioning`` on ``COMM_SELF``;
  smaller interfaces on irregular meshes, but Debian's Scotch 7 gives another partition at every
  call, whatever its seed (checked), so results then differ from run to run by the solve's
  rounding; and petsc4py 3.18 takes no vertex weights (every vertex counts one). A type PETSc
  does not have, or a graph without edges, falls back to ``rcb``.

Owners. A node (all its slots, free and fixed) belongs to the part of the first vertex, in
graph order, that uses it; an element's internal unknowns and a joint's multipliers to its part.
The unknowns are then numbered rank by rank (rank 0's first), in the serial order within a rank:
rank ``r`` owns the rows ``ranges[r]:ranges[r + 1]`` of a distributed matrix, and :attr:`serial`
and :attr:`new` map the two numberings into each other (results, tests and start vectors keep
the serial one).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from fem import _petsc, lazy

sp = lazy.module("scipy.sparse")


@dataclass(frozen=True)
class Partition:
    """Which rank owns what (module docstring).

    Attributes
    ----------
    size : number of parts (ranks)
    groups : per element group, ``(E,)`` the part of each element
    constraints : per constraint group, ``(E,)`` the part of each item
    owner : ``(n_active,)`` the rank owning each position of the full vector (serial numbering)
    serial : ``(n_free,)`` the serial number of the unknown numbered ``p`` in the partition
    new : ``(n_free,)`` the partition's number of the serial unknown ``k`` (``serial[new] = k``)
    ranges : ``(size + 1,)`` rank ``r`` owns the partition's unknowns ``ranges[r]:ranges[r+1]``
    """

    size: int
    groups: tuple
    constraints: tuple
    owner: NDArray
    serial: NDArray
    new: NDArray
    ranges: NDArray

    @classmethod
    def build(cls, model, dofmap, size: int, comm=None) -> Partition:
        """Partition ``model`` (numbered by ``dofmap``) into ``size`` parts.

        ``comm`` (mpi4py): the parts are computed on its rank 0 and broadcast; none: here.
        """
        vertices = [g.conn for g in model.groups] + [c.conn for c in model.constraints]
        weights = [np.full(len(g), float(g.nd + g.n_internal) ** 2) for g in model.groups]
        weights += [np.full(len(c), float(c.nd + c.n_multipliers) ** 2)
                    for c in model.constraints]
        counts = [len(v) for v in vertices]
        parts = None
        if comm is None or comm.Get_rank() == 0:
            method = _petsc.PETSc().Options().getString("fem_partition_type", "rcb")
            if method != "rcb":
                parts = element_parts(vertices, model.n_nodes, size, method)
            if parts is None:
                parts = bisection(vertices, np.concatenate([np.zeros(0), *weights]), model.X,
                                  size)
        if comm is not None:
            parts = comm.bcast(parts, root=0)
        bounds = np.cumsum([0] + counts)
        per = [parts[a:b] for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
        ng = len(model.groups)
        return cls.from_parts(model, dofmap, size, per[:ng], per[ng:])

    @classmethod
    def from_parts(cls, model, dofmap, size: int, groups: list[NDArray],
                   constraints: list[NDArray]) -> Partition:
        """The owners and numbering of given element and item parts (module docstring)."""
        vertices = [g.conn for g in model.groups] + [c.conn for c in model.constraints]
        parts = np.concatenate([np.zeros(0, np.int64), *groups, *constraints]).astype(np.int64)
        B = _incidence(vertices, model.n_nodes).tocsc()
        # the first vertex using each node (columns of the CSC incidence: rows in order)
        used = np.diff(B.indptr) > 0
        node_part = np.zeros(model.n_nodes, np.int64)
        node_part[used] = parts[B.indices[B.indptr[:-1][used]]]
        owner = np.zeros(dofmap.n_active, np.int64)
        active = dofmap.index >= 0
        owner[dofmap.index[active]] = np.broadcast_to(node_part[:, None],
                                                      dofmap.index.shape)[active]
        for pos, part in zip(dofmap.internal, groups, strict=True):
            owner[pos] = part[:, None]
        for pos, part in zip(dofmap.multipliers, constraints, strict=True):
            owner[pos] = part[:, None]
        n = dofmap.n_free
        serial = np.argsort(owner[:n], kind="stable")
        new = np.empty(n, np.int64)
        new[serial] = np.arange(n)
        ranges = np.concatenate([[0], np.cumsum(np.bincount(owner[:n], minlength=size))])
        for a in (owner, serial, new, ranges):
            a.setflags(write=False)
        return cls(size=size, groups=tuple(groups), constraints=tuple(constraints), owner=owner,
                   serial=serial, new=new, ranges=ranges)

    def owned(self, rank: int) -> NDArray:
        """Positions of the full vector (serial numbering, increasing) that ``rank`` owns."""
        return np.flatnonzero(self.owner == rank)

    def to_partition(self, v: NDArray) -> NDArray:
        """The unknowns ``v (n_free,)`` in the partition's numbering."""
        return v[self.serial]

    def to_serial(self, v: NDArray) -> NDArray:
        """The unknowns ``v (n_free,)`` of the partition's numbering in the serial one."""
        return v[self.new]


def _incidence(vertices: list[NDArray], n_nodes: int):
    """(V, n_nodes) scipy CSR, 1 where a vertex (element or item) uses a node."""
    rows = [np.repeat(np.arange(len(c)), c.shape[1]) for c in vertices]
    offsets = np.cumsum([0] + [len(c) for c in vertices])
    r = np.concatenate([np.zeros(0, np.int64)] + [x + o for x, o in zip(rows, offsets,
                                                                       strict=False)])
    c = np.concatenate([np.zeros(0, np.int64)] + [v.reshape(-1) for v in vertices])
    B = sp.csr_matrix((np.ones(len(r)), (r, c)), shape=(int(offsets[-1]), n_nodes))
    B.sum_duplicates()
    return B


def bisection(vertices: list[NDArray], weights: NDArray, X: NDArray, size: int) -> NDArray:
    """(V,) the part of each vertex by recursive coordinate bisection (module docstring).

    ``vertices``: each group's ``(E, k)`` nodes, in order; ``weights (V,)``; ``X (n, 3)`` the
    nodes' coordinates. A loop over the parts' bisections (``size - 1`` of them), none over
    vertices.
    """
    centroids = np.concatenate([np.zeros((0, X.shape[1]))]
                               + [X[c].mean(axis=1) for c in vertices if len(c)])
    out = np.zeros(len(centroids), np.int64)
    stack = [(np.arange(len(centroids)), size, 0)]
    while stack:
        idx, parts, first = stack.pop()
        if parts == 1 or len(idx) == 0:
            out[idx] = first
            continue
        left = parts // 2
        pts = centroids[idx]
        axis = int(np.argmax(pts.max(axis=0) - pts.min(axis=0)))
        order = idx[np.argsort(pts[:, axis], kind="stable")]
        total = np.cumsum(weights[order])
        cut = int(np.searchsorted(total, total[-1] * left / parts))
        stack += [(order[:cut], left, first), (order[cut:], parts - left, first + left)]
    return out


def element_parts(vertices: list[NDArray], n_nodes: int, size: int,
                  method: str = "ptscotch") -> NDArray | None:
    """(V,) the part of each vertex (element or item; ``vertices`` their nodes, in order).

    The graph of vertices sharing a node, cut by PETSc's ``MatPartitioning`` of type ``method``
    on ``COMM_SELF``; None where PETSc has no such type or no vertex shares a node.
    """
    B = _incidence(vertices, n_nodes)
    V = B.shape[0]
    if size == 1 or V == 0:
        return np.zeros(V, np.int64)
    PETSc = _petsc.PETSc()
    A = (B @ B.T).tocsr()
    A.setdiag(0)
    A.eliminate_zeros()
    A.sort_indices()
    if A.nnz == 0:
        return None
    adj = PETSc.Mat().createAIJ((V, V), csr=(A.indptr.astype(PETSc.IntType),
                                             A.indices.astype(PETSc.IntType),
                                             np.ones(A.nnz)), comm=PETSc.COMM_SELF)
    prefix = "fem_partition_"
    options = PETSc.Options()
    options[prefix + "mat_partitioning_nparts"] = size
    part = PETSc.MatPartitioning().create(comm=PETSc.COMM_SELF)
    try:
        part.setOptionsPrefix(prefix)
        part.setAdjacency(adj)
        try:
            part.setType(method)
        except PETSc.Error:
            return None
        part.setFromOptions()
        result = PETSc.IS()
        part.apply(result)
        out = np.array(result.getIndices(), dtype=np.int64)
        result.destroy()
    finally:
        part.destroy()
        adj.destroy()
        options.delValue(prefix + "mat_partitioning_nparts")
    return out
