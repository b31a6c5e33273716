"""The deck entry of :class:`~fem.elements.rigid_body.RigidBody` groups: the ``[[bodies]]`` table.

Its keys (:data:`KEYS`, besides the table's ``name``) and its construction (:func:`build`),
registered with the class in :mod:`fem.elements`. Each node of an entry is one body's centre of
mass; every body of an entry has the entry's ``mass`` and ``inertia`` (parsed and checked like the
``inertia`` of ``[[masses]]``, :func:`fem.io.keys.entries.inertia_tensor`) and is drawn in the
ParaView files by ``shape`` and ``size`` (:mod:`fem.io.drawing`): by default the box of its
equivalent inertia, or a box, cylinder or sphere of the given size.
"""

from __future__ import annotations

import numpy as np

from fem.elements.rigid_body import RigidBody
from fem.errors import DeckError
from fem.io.keys import REQUIRED, Key
from fem.io.keys.entries import Entry, inertia_tensor
from fem.io.keys.groups import GroupInputs, GroupPiece

TABLE = "bodies"
PLURAL = "rigid bodies"
KEYS = [Key("nodes", "nodes", REQUIRED, "node id, list of ids or node-set name: each node is "
            "one body's centre of mass"),
        Key("mass", "float", REQUIRED, "mass of each body", positive=True),
        Key("inertia", "number_vector_or_matrix", REQUIRED, "inertia tensor of each body about "
            "its centre of mass: a number (2D, Izz), [Ixx, Iyy, Izz] or [[Ixx, Ixy, Ixz], "
            "[Ixy, Iyy, Iyz], [Ixz, Iyz, Izz]] (3D, global axes at the reference orientation; "
            "symmetric, positive semi-definite)"),
        Key("shape", "str", "inertia", "how the ParaView files draw each body, centred at its "
            "node: \"inertia\" (the box of equal mass and inertia, along the principal axes), "
            "\"box\", \"cylinder\" or \"sphere\" of the given size (a disc in 2D); it moves "
            "and turns with the body", choices=("inertia", "box", "cylinder", "sphere")),
        Key("size", "vector", None, "the drawn shape's size: a box's sides [a, b, c] (2D: [a, "
            "b]), a cylinder's [diameter, length] (2D: [diameter]), a sphere's [diameter]; "
            "required with shape box, cylinder or sphere"),
        Key("axis", "vector", None, "the direction of a box's side a (default: global x; "
            "side b is normal to it and to global z, or to global y when a is along z) or of a "
            "cylinder's length (3D, default: global z), at the reference")]
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
    body = RigidBody(v["name"], nodes, inputs.nodes.X, inputs.dim, v["mass"], J,
                     drawing=drawing(e, inputs.dim))
    return GroupPiece(body, inputs.nodes)


SIZES = {("box", 2): (2, "[a, b]"), ("box", 3): (3, "[a, b, c]"),
         ("cylinder", 2): (1, "[diameter]"), ("cylinder", 3): (2, "[diameter, length]"),
         ("sphere", 2): (1, "[diameter]"), ("sphere", 3): (1, "[diameter]")}


def drawing(e: Entry, dim: int) -> tuple[str, tuple, tuple]:
    """The checked ``(shape, size, axis)`` of an entry (:attr:`RigidBody.drawing`)."""
    v = e.values
    shape, size, axis = v["shape"], v["size"], v["axis"]
    if shape == "inertia":
        if size is not None:
            raise DeckError(f"{e.where}.size", "applies to shape = \"box\", \"cylinder\" or "
                            "\"sphere\"; the default shape (\"inertia\") takes its size from the "
                            "body's inertia: give a shape, or remove size")
    else:
        count, form = SIZES[(shape, dim)]
        if size is None:
            raise DeckError(f"{e.where}.size", f"required with shape = \"{shape}\": {form}")
        if len(size) != count or not all(x > 0 for x in size):
            raise DeckError(f"{e.where}.size", f"expected {form} for a {dim}D {shape}, "
                            f"{count} positive number{'s' if count > 1 else ''}, got {size!r}")
    if axis is not None:
        if shape not in ("box", "cylinder") or (shape == "cylinder" and dim == 2):
            raise DeckError(f"{e.where}.axis", "applies to shape = \"box\" (and \"cylinder\" "
                            f"in 3D), got shape = \"{shape}\" in {dim}D")
        form = "[x, y]" if dim == 2 else "[x, y, z]"
        if len(axis) != dim or not np.linalg.norm(axis) > 0:
            raise DeckError(f"{e.where}.axis", f"expected a nonzero {form}, got {axis!r}")
        axis = list(axis) + [0.0] * (3 - dim)
    default = (0.0, 0.0, 1.0) if shape == "cylinder" else (1.0, 0.0, 0.0)
    return shape, tuple(float(x) for x in size or ()), tuple(
        float(x) for x in (axis if axis is not None else default))
