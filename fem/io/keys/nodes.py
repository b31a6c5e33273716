"""The node table of a deck: coordinates, ids, where ``divisions`` made a node, and node sets.

:class:`Nodes` is a value: builders that add nodes or sets return a new one. Built by
:func:`fem.io.build.nodes` (inline coordinates or a mesh file) and read by every builder of
element groups, constraints and loads (a deck leaf of :mod:`fem.io.keys`: it imports nothing of
fem but its errors and the keys).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from types import MappingProxyType

import numpy as np
from numpy.typing import NDArray

from fem.errors import DeckError
from fem.io.keys import MAX_NODE_ID
from fem.io.keys.entries import lookup


@dataclass(frozen=True)
class Nodes:
    """The node table, a value: builders that add nodes or sets return a new one.

    Attributes
    ----------
    dim : 2 or 3 (``model.dim``)
    X : (n, 3) reference coordinates
    ids : (n,) user node ids
    origin : (n, 4) where ``divisions`` made a node (see :attr:`fem.model.Model.node_origin`),
        ``-1`` for a node the deck or the mesh gave
    sets : named node sets, ``{name: node indices}``
    mesh : the mesh file's data (:class:`fem.io.mesh.MeshData`, read by :mod:`fem.io`), or None
        for inline coordinates
    """

    dim: int
    X: NDArray
    ids: NDArray
    origin: NDArray
    sets: Mapping[str, NDArray] = field(default_factory=dict)
    mesh: object | None = None

    def __post_init__(self):
        object.__setattr__(self, "sets", MappingProxyType(dict(self.sets)))

    @cached_property
    def _order(self) -> NDArray:
        return np.argsort(self.ids, kind="stable")

    def lookup(self, ids) -> NDArray:
        """Indices of node ``ids`` (an integer array), ``-1`` where no node has the id."""
        ids = np.asarray(ids, dtype=np.int64)
        sorted_ids = self.ids[self._order]
        pos = np.clip(np.searchsorted(sorted_ids, ids), 0, len(sorted_ids) - 1)
        found = sorted_ids[pos] == ids
        return np.where(found, self._order[pos], -1)

    def known_ids(self) -> str:
        """The node ids of the model, briefly: ``"1 to 12"`` or ``"1, 2, 5, 7, ..."``."""
        ids = np.sort(self.ids)
        if ids[-1] - ids[0] == len(ids) - 1:
            text = f"{ids[0]} to {ids[-1]}" if len(ids) > 1 else f"{ids[0]}"
        else:
            text = ", ".join(str(i) for i in ids[:8]) + (", ..." if len(ids) > 8 else "")
        return text + (" (the mesh file's nodes, numbered in file order)" if self.mesh else "")

    def indices(self, ref, where: str) -> NDArray:
        """Indices of a node reference: an id, a list of ids or a set name."""
        if isinstance(ref, str):
            return lookup(self.sets, ref, "node set", where)
        ids = [ref] if isinstance(ref, int) else ref
        if not ids:
            raise DeckError(where, "expected a node id, a non-empty list of node ids or a node-set "
                            "name, got an empty list")
        arr = np.asarray(ids, dtype=np.int64)
        out = np.where(np.abs(arr) <= MAX_NODE_ID, self.lookup(arr), -1)
        missing = np.flatnonzero(out < 0)
        if len(missing):
            raise DeckError(where, f"unknown node {ids[missing[0]]}: no node has this id; the "
                            f"node ids are {self.known_ids()}")
        return out.astype(np.int64)

    def with_nodes(self, X: NDArray, origin: NDArray) -> tuple[Nodes, NDArray]:
        """The table with nodes ``X (m, 3)`` appended (ids after the largest), and their indices.

        ``origin (m, 4)`` says where each was made: the ids of the two end nodes of the row it
        subdivides, its position ``k`` (1 to ``n - 1``) from the first, and ``n``.
        """
        first, start = len(self.X), int(self.ids.max()) + 1
        ids = np.arange(start, start + len(X), dtype=np.int64)
        table = replace(self, X=np.concatenate([self.X, X]), ids=np.concatenate([self.ids, ids]),
                        origin=np.concatenate([self.origin, origin]))
        return table, np.arange(first, first + len(X))

    def with_sets(self, sets: Mapping[str, NDArray], keep: bool = False) -> Nodes:
        """The table with ``sets`` added; ``keep`` leaves a set of the same name as it is."""
        new = {k: v for k, v in sets.items() if not (keep and k in self.sets)}
        return replace(self, sets={**self.sets, **new})
