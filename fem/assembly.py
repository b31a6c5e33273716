"""Element batches -> global vectors and a CSR matrix with a pattern computed once per model.

When the DOF map is built, each block source (an element group, a constraint group, or the nodal
blocks used by load stiffness, springs and point masses) gets ``edofs (E, nd)`` and ``slot``, the
CSR position of every entry of its element matrices, ``nnz`` (one past the last) for an entry that
does not couple two unknowns. Assembly is then one ``np.bincount`` per source over the element
matrices as they are (the dropped entries land in that one extra bin): no COO triplets, no
sorting, no masking copy, no Python loop over elements (STYLE.md, "Assembly"). The same pattern
serves every matrix of the model (K, M, K_G).

An element group's ``edofs`` are its nodal DOFs followed by its internal unknowns (when the DOF
map numbers them, :mod:`fem.dofs`); a constraint group's are the nodal DOFs it constrains
followed by its multipliers: the group's vectors and matrices come in that order.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from fem.dofs import DofMap


@dataclass(frozen=True)
class Scatter:
    """Where one block source puts its entries."""

    edofs: NDArray   # (E, nd) positions in the full active vector
    slot: NDArray    # (E * nd * nd,) CSR position of each entry; nnz where it couples no unknowns


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
        constraints = getattr(model, "constraints", ())
        edofs = [np.hstack([dofmap.element_dofs(g.conn, g.dof_names), inner])
                 for g, inner in zip(model.groups, dofmap.internal or
                                     [np.zeros((len(g), 0), np.int64) for g in model.groups],
                                     strict=True)]
        edofs += [np.hstack([dofmap.element_dofs(c.conn, c.dof_names), lam])
                  for c, lam in zip(constraints, dofmap.multipliers, strict=True)]
        sources = edofs + [dofmap.index]  # per-node blocks; -1 marks inactive slots
        keys, keeps = [], []
        for ed in sources:
            r = np.broadcast_to(ed[:, :, None], ed.shape + ed.shape[1:]).reshape(-1)
            c = np.broadcast_to(ed[:, None, :], ed.shape + ed.shape[1:]).reshape(-1)
            keep = (r >= 0) & (r < n_free) & (c >= 0) & (c < n_free)
            keys.append(r[keep] * n_free + c[keep])
            keeps.append(keep)
        # The diagonal is always in the pattern (needed by some preconditioners and by shifts).
        diag = np.arange(n_free, dtype=np.int64) * (n_free + 1)
        unique, inverse = np.unique(np.concatenate(keys + [diag]), return_inverse=True)
        rows = unique // max(n_free, 1)
        self.indptr = np.searchsorted(rows, np.arange(n_free + 1)).astype(np.int64)
        self.indices = (unique % max(n_free, 1)).astype(np.int64)
        bounds = np.cumsum([0] + [len(k) for k in keys])
        nnz = len(unique)
        scatters = []
        for i, (ed, keep) in enumerate(zip(sources, keeps, strict=True)):
            slot = np.full(keep.shape, nnz, dtype=np.int64)
            slot[keep] = inverse[bounds[i]:bounds[i + 1]]
            scatters.append(Scatter(ed, slot))
        self.groups = scatters[:len(model.groups)]
        self.constraints = scatters[len(model.groups):-1]
        self.nodes = scatters[-1]
        self.n_free = n_free
        self._entry_rows = None
        self._diagonal = None
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
            if fe is not None:
                out += np.bincount(sc.edofs.reshape(-1), weights=fe.reshape(-1),
                                   minlength=self.n_active)[:self.n_active]
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
            if ke is not None:
                data += np.bincount(sc.slot, weights=ke.reshape(-1),
                                    minlength=self.nnz + 1)[:self.nnz]
        return data

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
