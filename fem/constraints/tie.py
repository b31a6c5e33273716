"""Ties: the translations of two coincident nodes are equal (a pin, in 2D and 3D).

For a pair ``(a, b)`` the constraint is ``g = u_b - u_a = 0`` on the translations, ``G = [-I, I]``:
linear in the displacements, hence exact under any rotation of the members, and with no
``d(G^T lambda)/dq`` term. The rotations of the two nodes stay independent: members tied at a
point are pinned to each other. The multiplier ``lambda`` (``dim`` components, global axes) is the
force node ``a`` receives from node ``b`` through the pin; node ``b`` receives ``-lambda``.

The rows are scaled for conditioning (:class:`fem.system.System` picks ``scale``, the stiffness of
the DOFs they constrain): the unknown is ``mu = lambda / scale``, the vector
``[scale G^T mu; scale g]``, so that constraint and stiffness rows have entries of one size.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from numpy.typing import NDArray

from fem.constraints.base import PairGroup


class Tie(PairGroup):
    """A group of ties between node pairs.

    Parameters
    ----------
    name : group name
    pairs : (E, 2) node indices ``(a, b)`` of each tie
    dim : 2 or 3
    node_ids : (n,) the model's node ids (for messages)
    """

    type_name: ClassVar[str] = "tie"
    item, items = "tie", "ties"

    def __init__(self, name: str, pairs: NDArray, dim: int, node_ids: NDArray | None = None):
        super().__init__(name, pairs, dim, ("ux", "uy") if dim == 2 else ("ux", "uy", "uz"),
                         node_ids)

    def element_vector(self, nodal: NDArray) -> NDArray:
        """(E, 2 dim) the translations of each pair in an ``(n, nslots)`` nodal array."""
        return nodal[self.conn][:, :, :self.dim].reshape(len(self), -1)

    def _gap(self, state) -> NDArray:
        """(E, dim) ``u_b - u_a``."""
        d = self.dim
        return state.u[self.conn[:, 1], :d] - state.u[self.conn[:, 0], :d]

    def jacobian(self, state) -> NDArray:
        """(E, dim, 2 dim) ``G = [-I, I]``."""
        d = self.dim
        return np.broadcast_to(np.hstack([-np.eye(d), np.eye(d)]), (len(self), d, 2 * d)).copy()

    def multiplier_block(self) -> NDArray:
        """(E, dim, dim) zeros: no released rows."""
        return np.zeros((len(self), self.dim, self.dim))

    def bias(self, state) -> NDArray:
        """(E, dim) zeros: ``g`` is linear, ``d2g/dt2 = G a``."""
        return np.zeros((len(self), self.dim))

    def vector(self, state, mu: NDArray, scale: float = 1.0) -> NDArray:
        """(E, 3 dim) ``scale [G^T mu; g]``: ``-lambda`` at ``a``, ``+lambda`` at ``b``, the gap."""
        return scale * np.hstack([-mu, mu, self._gap(state)])

    def tangent(self, state, mu: NDArray, scale: float = 1.0) -> NDArray:
        """(E, 3 dim, 3 dim) ``scale [[0, G^T], [G, 0]]`` (the same in every state)."""
        d = self.dim
        eye = np.eye(d)
        G = np.hstack([-eye, eye])                         # (d, 2d)
        K = np.zeros((3 * d, 3 * d))
        K[:2 * d, 2 * d:] = G.T
        K[2 * d:, :2 * d] = G
        return np.broadcast_to(scale * K, (len(self), 3 * d, 3 * d)).copy()

    # --- the energy-conserving step: g is linear, so G is its own discrete gradient ----------
    def step(self, s0, s1, mu: NDArray, scale: float = 1.0, tangent: bool = True):
        """:meth:`step_vector` and (``tangent``) :meth:`step_tangent`."""
        return (self.vector(s1, mu, scale),
                self.tangent(s1, mu, scale) if tangent else None)

    def step_vector(self, s0, s1, mu: NDArray, scale: float = 1.0) -> NDArray:
        """``scale [G^T mu; g(q_1)]``: ``G`` is constant, its work is ``lambda . (g_1 - g_0)``."""
        return self.vector(s1, mu, scale)

    def step_tangent(self, s0, s1, mu: NDArray, scale: float = 1.0) -> NDArray:
        """Derivative of :meth:`step_vector` by the corrections of ``s1``."""
        return self.tangent(s1, mu, scale)
