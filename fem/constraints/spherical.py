"""Spherical joints: a point of one node's rigid neighbourhood stays on a point of another's.

The point rows of :class:`fem.constraints.joint.Joint` (a revolute joint of the plane in 2D):
``g = (x_b + R_b c_b) - (x_a + R_a c_a) = 0`` with the offsets ``c = P - X`` of the joint point
``P``; with ``c = 0`` it is a tie (:mod:`fem.constraints.tie`). The discrete gradient of the
energy-conserving step and what it conserves are in :mod:`fem.constraints.joint`.
"""

from __future__ import annotations

from numpy.typing import NDArray

from fem.constraints.joint import Joint


class Spherical(Joint):
    """A group of spherical joints between node pairs at given points (global-axes frames).

    Parameters
    ----------
    name : group name
    pairs : (E, 2) node indices ``(a, b)``
    offsets : (E, 2, 3) reference offsets ``P - X_a``, ``P - X_b`` of the joint point
    dim : 2 (a revolute joint of the plane) or 3
    node_ids : (n,) the model's node ids (for messages)
    """

    def __init__(self, name: str, pairs: NDArray, offsets: NDArray, dim: int,
                 node_ids: NDArray | None = None):
        super().__init__(name, "spherical" if dim == 3 else "revolute", pairs, offsets, None,
                         dim, node_ids)
