"""What every constraint group between node pairs shares: its pairs, sizes, outputs, messages.

A group of ``E`` items, each joining nodes ``(a, b)`` (``conn (E, 2)``) on the DOFs
``dof_names`` of both, with ``dim`` multipliers each: the force node ``a`` receives from node
``b`` (global axes). Subclasses give ``vector``/``tangent`` (statics) and ``step_vector``/
``step_tangent`` (the energy-conserving step), see :mod:`fem.constraints`.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from numpy.typing import NDArray


class PairGroup:
    """Base class of constraint groups whose items join two nodes."""

    type_name: ClassVar[str] = ""
    nen: ClassVar[int] = 2
    #: how messages name one item, and the group ("tie", "ties")
    item: ClassVar[str] = ""
    items: ClassVar[str] = ""

    def __init__(self, name: str, pairs: NDArray, dim: int, dof_names: tuple[str, ...],
                 node_ids: NDArray | None = None):
        self.name = name
        self.conn = np.asarray(pairs, dtype=np.int64)
        self.conn.setflags(write=False)
        self.dim = dim
        self.dof_names = dof_names
        self.n_multipliers = dim
        self.node_ids = node_ids

    def __len__(self) -> int:
        return len(self.conn)

    @property
    def nd(self) -> int:
        """Nodal DOFs per item."""
        return 2 * len(self.dof_names)

    def time_rate(self, state) -> NDArray:
        """(E, r) ``dg/dt`` at fixed positions: zero (the constraints do not move in time)."""
        return np.zeros((len(self), self.n_multipliers))

    def drive_work(self, s0, s1, mu: NDArray, scale: float = 1.0) -> float:
        """The work of driven rows over a step: none."""
        return 0.0

    def outputs(self, state, mu: NDArray, scale: float = 1.0) -> dict[str, NDArray]:
        """The force each item transmits to its first node, ``{"fx", "fy"(, "fz"): (E,)}``."""
        return {f"f{'xyz'[k]}": scale * mu[:, k] for k in range(self.dim)}

    def describe_unknown(self, e: int, j: int) -> str:
        """Names multiplier ``j`` of item ``e`` for messages."""
        a, b = self.conn[e]
        ids = self.node_ids if self.node_ids is not None else np.arange(1, max(a, b) + 2)
        return (f"the force {'xyz'[j]} of the {self.item} between nodes {ids[a]} and {ids[b]} "
                f"({self.items} '{self.name}')")
