"""One numbering of every unknown: nodal DOFs, element-internal unknowns, Lagrange multipliers.

The full vector of a model (residuals, reactions) is numbered in blocks::

    [ free nodal | internal | multipliers | fixed nodal ]
      ^0           ^nodal.stop              ^n_free     ^n_active

* **nodal**: the node slots some element uses (``active``) and no support or prescribed value
  holds, node by node, slot by slot (:data:`fem.model.DOF_SLOTS`);
* **internal**: unknowns of elements that no node shares, ``n_internal`` per element of a group
  that declares them: always for groups whose internal unknowns are part of the state
  (``internal_always``: the superelements' modal coordinates), first and in group order, so
  that they keep their positions in every numbering; then, when the step asks for them, the
  others (the beams' interior modes of linear buckling);
* **multipliers**: the Lagrange multipliers of the constraint groups, ``n_multipliers`` per item
  (the force of a tie, ...);
* **fixed**: the supported and prescribed nodal DOFs, where reactions live.

The first three blocks are the unknowns of every linear system (``n_free`` of them); their named
slices (:attr:`DofMap.blocks`) replace ``r[:n_free]`` where a block is meant. ``internal[i]`` and
``multipliers[j]`` give the positions of group ``i``'s and constraint group ``j``'s unknowns,
``(E, k)`` per element or item.

Every position also has a *kind* (:data:`KINDS`, :attr:`DofMap.kind`), the block of the convergence
test it belongs to (:class:`fem.solvers.newton.NormTest`): ``force`` for translational node slots,
``moment`` for rotational ones (fixed slots too: their rows hold the reactions), ``internal`` and
``constraint`` for the other two blocks of unknowns. Residuals of different kinds are in
different units and are never added into one norm.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
from numpy.typing import NDArray

from fem.errors import ModelError

KINDS = ("force", "moment", "internal", "constraint")   # the blocks of the convergence test

def block_norms(kind: NDArray, v: NDArray, nblocks: int = len(KINDS)) -> NDArray:
    """(nblocks,) the 2-norm of ``v`` over the positions of each kind (``kind``: (len(v),))."""
    return np.sqrt(np.bincount(kind, weights=v * v, minlength=nblocks))


@dataclass(frozen=True)
class DofMap:
    """Equation numbers of a model.

    Attributes
    ----------
    slots : names of the per-node DOF slots
    active : (n, nslots) bool, DOFs some element (or constraint) uses
    fixed : (n, nslots) bool, active DOFs held by supports or prescribed values
    index : (n, nslots) int, position in the full vector, -1 where inactive
    n_free, n_active : numbers of unknowns and of all positions
    blocks : ``{"nodal", "internal", "multipliers", "fixed"}`` slices of the full vector
    internal : per element group, (E, n_internal) positions (E, 0 when it has none)
    multipliers : per constraint group, (E, n_multipliers) positions
    kind : (n_active,) int8, the kind of each position, an index into :data:`KINDS`
    """

    slots: tuple[str, ...]
    active: NDArray
    fixed: NDArray
    index: NDArray
    n_free: int
    n_active: int
    blocks: dict
    internal: tuple = ()
    multipliers: tuple = ()
    kind: NDArray | None = None

    @classmethod
    def build(cls, model, internal: bool = False) -> DofMap:
        """Number the unknowns of ``model`` (with every group's internal unknowns if ``internal``).

        The internal unknowns of groups with ``internal_always`` are numbered in any case.
        """
        n, ns = model.n_nodes, model.nslots
        active = np.zeros((n, ns), dtype=bool)
        # an element group acts on its cells' nodes (a sphere set's: all its spheres)
        for g, nodes in [*((g, g.cells) for g in model.groups),
                         *((c, c.conn) for c in getattr(model, "constraints", ()))]:
            cols = [model.slots.index(d) for d in g.dof_names]
            active[np.ix_(np.unique(nodes), cols)] = True
        fixed = model.fixed & active
        for p in model.prescribed:
            fixed[p.nodes, p.slot] |= active[p.nodes, p.slot]
        free = active & ~fixed
        index = np.full((n, ns), -1, dtype=np.int64)
        n_nodal = int(free.sum())
        index[free] = np.arange(n_nodal)          # C order: node by node, slot by slot
        start = n_nodal
        inner: list = [None] * len(model.groups)
        for i, g in enumerate(model.groups):        # the state's own internal unknowns first
            if getattr(g, "internal_always", False):
                if g.internal_start != start - n_nodal:
                    raise ModelError(f"element group '{g.name}': its internal unknowns were "
                                     f"placed at {g.internal_start} when it was built, but the "
                                     f"groups before it have {start - n_nodal}: build groups "
                                     "with internal_start = the internal unknowns before them")
                k = g.n_internal
                inner[i] = start + np.arange(len(g) * k, dtype=np.int64).reshape(len(g), k)
                start += len(g) * k
        for i, g in enumerate(model.groups):
            if inner[i] is None:
                k = g.n_internal if internal else 0
                inner[i] = start + np.arange(len(g) * k, dtype=np.int64).reshape(len(g), k)
                start += len(g) * k
        n_internal = start - n_nodal
        mult = []
        for c in getattr(model, "constraints", ()):
            k = c.n_multipliers
            mult.append(start + np.arange(len(c) * k, dtype=np.int64).reshape(len(c), k))
            start += len(c) * k
        n_free = start
        index[fixed] = n_free + np.arange(int(fixed.sum()))
        # translations are the slots named u*, rotations r* (fem.model.DOF_SLOTS)
        slot_kind = np.array([0 if s.startswith("u") else 1 for s in model.slots], dtype=np.int8)
        kind = np.empty(n_free + int(fixed.sum()), dtype=np.int8)
        kind[index[active]] = np.broadcast_to(slot_kind, (n, ns))[active]
        kind[n_nodal:n_nodal + n_internal] = 2
        kind[n_nodal + n_internal:n_free] = 3
        for a in (active, fixed, index, kind, *inner, *mult):
            a.setflags(write=False)
        blocks = {"nodal": slice(0, n_nodal), "internal": slice(n_nodal, n_nodal + n_internal),
                  "multipliers": slice(n_nodal + n_internal, n_free),
                  "fixed": slice(n_free, n_free + int(fixed.sum()))}
        return cls(slots=model.slots, active=active, fixed=fixed, index=index, n_free=n_free,
                   n_active=n_free + int(fixed.sum()), blocks=blocks, internal=tuple(inner),
                   multipliers=tuple(mult), kind=kind)

    @property
    def n_nodal(self) -> int:
        """Number of free nodal DOFs."""
        return self.blocks["nodal"].stop

    def element_dofs(self, conn: NDArray, dof_names: tuple[str, ...]) -> NDArray:
        """(E, nen * len(dof_names)) full-vector positions of the nodal DOFs of each element."""
        cols = [self.slots.index(d) for d in dof_names]
        # (E, nen * ndn) even for no elements (a sphere set without candidate pairs)
        return self.index[conn][:, :, cols].reshape(len(conn), conn.shape[1] * len(cols))

    # --- scatter and gather, with the index arrays computed once (Newton calls them per
    # iteration, a mask over the node slots each time was most of their cost)
    @cached_property
    def _active_slots(self) -> tuple[NDArray, NDArray]:
        """Flat positions of the active node slots (C order) and their positions in the vector."""
        flat = np.flatnonzero(self.index.reshape(-1) >= 0)
        return flat, self.index.reshape(-1)[flat]

    @cached_property
    def _prefixes(self) -> dict:
        return {}

    def _slots_below(self, n: int) -> tuple[NDArray, NDArray]:
        """:attr:`_active_slots` restricted to vector positions below ``n`` (cached per ``n``)."""
        got = self._prefixes.get(n)
        if got is None:
            flat, pos = self._active_slots
            keep = pos < n
            got = self._prefixes[n] = (flat[keep], pos[keep])
        return got

    def to_nodal(self, vec: NDArray, fill: float = 0.0) -> NDArray:
        """Scatter a full vector (or its unknowns) to ``(n, nslots)`` (nodal blocks only)."""
        out = np.full(self.index.shape, fill, dtype=float)
        flat, pos = self._slots_below(len(vec))
        out.reshape(-1)[flat] = vec[pos]
        return out

    def from_nodal(self, nodal: NDArray) -> NDArray:
        """Gather ``(n, nslots)`` nodal values into a full vector (zero in the other blocks)."""
        nodal = np.asarray(nodal)
        if nodal.shape != self.index.shape:
            raise ValueError(f"nodal values of shape {nodal.shape}, expected "
                             f"{self.index.shape}")
        out = np.zeros(self.n_active)
        flat, pos = self._active_slots
        out[pos] = nodal.reshape(-1)[flat]
        return out

    @cached_property
    def free_nodal_slots(self) -> NDArray:
        """Flat positions (C order) of the free node slots: the vector's nodal block, in order."""
        flat, pos = self._active_slots
        return flat[pos < self.n_nodal]

    @cached_property
    def kind_index(self) -> NDArray:
        """:attr:`kind` as ``intp`` (what ``np.bincount`` takes without converting)."""
        return self.kind.astype(np.intp)

    def describe(self, k: int, node_ids: NDArray, model=None) -> str:
        """``"node 12 uy"`` for position ``k`` of the full vector (or what else it is).

        With the ``model``, a node made by ``divisions`` is also placed between the nodes the user
        knows: ``"node 12 uy (the 3rd of 9 interior nodes between nodes 1 and 2, ...)"``; an
        internal unknown or a multiplier is named by its group and element or item.
        """
        for kind, positions in (("internal", self.internal), ("multipliers", self.multipliers)):
            for i, pos in enumerate(positions):
                where = np.argwhere(pos == k)
                if len(where):
                    e, j = (int(x) for x in where[0])
                    if model is None:
                        return f"{kind} unknown {j + 1} of item {e + 1} of group {i + 1}"
                    owner = (model.groups if kind == "internal" else model.constraints)[i]
                    return owner.describe_unknown(e, j)
        node, slot = (int(x) for x in np.argwhere(self.index == k)[0])
        if model is not None:
            return model.describe_node(node, self.slots[slot])
        return f"node {node_ids[node]} {self.slots[slot]}"
