"""The deck entry of :class:`~fem.elements.rigid_body.RigidBody` groups: the ``[[bodies]]`` table.

Its keys (:data:`KEYS`, besides the table's ``name``) and its construction (:func:`build`),
registered with the class in :mod:`fem.elements`. Each node of an entry is one body's centre of
mass; every body of an entry has the entry's ``mass`` and ``inertia`` (parsed and checked like the
``inertia`` of ``[[masses]]``, :func:`fem.io.build_inertia.inertia_tensor`).
"""

from __future__ import annotations

import numpy as np

from fem.elements.rigid_body import RigidBody
from fem.errors import DeckError
from fem.io.build import Entry
from fem.io.build_elements import GroupInputs, GroupPiece
from fem.io.build_inertia import inertia_tensor
from fem.io.keys import REQUIRED, Key

TABLE = "bodies"
PLURAL = "rigid bodies"
KEYS = [Key("nodes", "nodes", REQUIRED, "node id, list of ids or node-set name: each node is "
            "one body's centre of mass"),
        Key("mass", "float", REQUIRED, "mass of each body", positive=True),
        Key("inertia", "number_vector_or_matrix", REQUIRED, "inertia tensor of each body about "
            "its centre of mass: a number (2D, Izz), [Ixx, Iyy, Izz] or [[Ixx, Ixy, Ixz], "
            "[Ixy, Iyy, Iyz], [Ixz, Iyz, Izz]] (3D, global axes at the reference orientation; "
            "symmetric, positive semi-definite)")]
NOT_USED: dict[str, str] = {}


def build(e: Entry, inputs: GroupInputs) -> GroupPiece:
    """A group of rigid bodies, one per node, from its validated deck entry."""
    v = e.values
    where = f"{e.where}.nodes"
    nodes = inputs.nodes.indices(v["nodes"], where)
    uniq, counts = np.unique(nodes, return_counts=True)
    if np.any(counts > 1):
        twice = int(inputs.nodes.ids[uniq[counts > 1][0]])
        raise DeckError(where, f"expected each node once (one body per node), got node {twice} "
                        "more than once")
    J = inertia_tensor(inputs.dim, v["inertia"], f"{e.where}.inertia")
    return GroupPiece(RigidBody(v["name"], nodes, inputs.nodes.X, inputs.dim, v["mass"], J),
                      inputs.nodes)
