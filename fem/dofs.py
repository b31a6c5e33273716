"""DOF numbering: node slots -> global equation numbers, with the free/fixed split.

Every node has the slots of its model's dimension (:data:`fem.model.DOF_SLOTS`); a slot is *active*
when an element (or, later, a joint) uses it. Active DOFs are numbered node by node, the free ones
first (``0..n_free-1``, the unknowns of every linear system) and the fixed ones after them
(``n_free..n_active-1``, where reactions live). A full vector over the active DOFs therefore splits
as ``r[:n_free]`` (residual) and ``r[n_free:]`` (reactions).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray


@dataclass(frozen=True)
class DofMap:
    """Equation numbers of a model.

    Attributes
    ----------
    slots : names of the per-node DOF slots
    active : (n, nslots) bool, DOFs some element uses
    fixed : (n, nslots) bool, active DOFs held by supports or prescribed values
    index : (n, nslots) int, position in the full active vector, -1 where inactive
    n_free, n_active : numbers of free and of active DOFs
    """

    slots: tuple[str, ...]
    active: NDArray
    fixed: NDArray
    index: NDArray
    n_free: int
    n_active: int

    @classmethod
    def build(cls, model) -> DofMap:
        """Number the DOFs of ``model``: element DOFs are active, supports fix them."""
        n, ns = model.n_nodes, model.nslots
        active = np.zeros((n, ns), dtype=bool)
        for g in model.groups:
            cols = [model.slots.index(d) for d in g.dof_names]
            active[np.ix_(np.unique(g.conn), cols)] = True
        fixed = model.fixed & active
        for p in model.prescribed:
            fixed[p.nodes, p.slot] |= active[p.nodes, p.slot]
        free = active & ~fixed
        index = np.full((n, ns), -1, dtype=np.int64)
        n_free = int(free.sum())
        index[free] = np.arange(n_free)          # C order: node by node, slot by slot
        index[fixed] = n_free + np.arange(int(fixed.sum()))
        for a in (active, fixed, index):
            a.setflags(write=False)
        return cls(slots=model.slots, active=active, fixed=fixed, index=index, n_free=n_free,
                   n_active=int(active.sum()))

    def element_dofs(self, conn: NDArray, dof_names: tuple[str, ...]) -> NDArray:
        """(E, nen * len(dof_names)) full-vector positions of the DOFs of each element."""
        cols = [self.slots.index(d) for d in dof_names]
        return self.index[conn][:, :, cols].reshape(len(conn), -1)

    def to_nodal(self, vec: NDArray, fill: float = 0.0) -> NDArray:
        """Scatter a full active-DOF vector (or its free part) to ``(n, nslots)``."""
        out = np.full(self.index.shape, fill, dtype=float)
        mask = (self.index >= 0) & (self.index < len(vec))
        out[mask] = vec[self.index[mask]]
        return out

    def from_nodal(self, nodal: NDArray) -> NDArray:
        """Gather ``(n, nslots)`` nodal values into a full active-DOF vector."""
        out = np.zeros(self.n_active)
        mask = self.index >= 0
        out[self.index[mask]] = nodal[mask]
        return out

    def describe(self, k: int, node_ids: NDArray, model=None) -> str:
        """``"node 12 uy"`` for position ``k`` of the full vector.

        With the ``model``, a node made by ``divisions`` is also placed between the nodes the user
        knows: ``"node 12 uy (the 3rd of 9 interior nodes between nodes 1 and 2, ...)"``.
        """
        node, slot = (int(x) for x in np.argwhere(self.index == k)[0])
        if model is not None:
            return model.describe_node(node, self.slots[slot])
        return f"node {node_ids[node]} {self.slots[slot]}"
