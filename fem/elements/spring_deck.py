"""The deck entry of :class:`~fem.elements.spring.GroundSpring` groups: the ``[[springs]]`` table.

Its keys (:data:`KEYS`, besides the table's ``name``) and its construction (:func:`build`),
registered with the class in :mod:`fem.elements`.
"""

from __future__ import annotations

from fem.elements.spring import GroundSpring
from fem.errors import DeckError
from fem.io.keys import NODES, REQUIRED, Key
from fem.io.keys.entries import Entry
from fem.io.keys.groups import GroupInputs, GroupPiece

TABLE = "springs"
PLURAL = "springs"
KEYS = [NODES,
        Key("dof", "str", REQUIRED, "the DOF tied to the ground: ux, uy, uz (or rz in 2D)"),
        Key("stiffness", "float", REQUIRED, "spring constant", positive=True)]
NOT_USED: dict[str, str] = {}


def build(e: Entry, inputs: GroupInputs) -> GroupPiece:
    """A group of grounded springs, one per node, from its validated deck entry."""
    v = e.values
    nodes = inputs.nodes.indices(v["nodes"], f"{e.where}.nodes")
    allowed = ("ux", "uy", "rz") if inputs.dim == 2 else ("ux", "uy", "uz")
    if v["dof"] not in allowed:
        raise DeckError(f"{e.where}.dof", f"expected one of {', '.join(allowed)} "
                        f"(a grounded spring acts on a displacement), got '{v['dof']}'")
    return GroupPiece(GroundSpring(v["name"], nodes, inputs.nodes.X, inputs.dim, v["dof"],
                                   v["stiffness"]), inputs.nodes)
