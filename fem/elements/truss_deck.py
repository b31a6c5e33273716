"""The deck entry of :class:`~fem.elements.truss.Truss` groups: ``[[elements]] type = "truss"``.

Its keys (:data:`KEYS`) and its construction (:func:`build`: deck values -> group), registered
with the class in :mod:`fem.elements`.
"""

from __future__ import annotations

import numpy as np

from fem.elements.truss import Truss
from fem.io.build import Entry
from fem.io.build_elements import (
    CONNECTIVITY,
    DIVISIONS,
    FORMULATION,
    MATERIAL,
    MESH_GROUP,
    SECTION,
    GroupInputs,
    GroupPiece,
    check_derived,
    line_lengths,
    material,
    rows,
    section,
    subdivided,
)
from fem.io.keys import Key

TABLE = "elements"
PLURAL = "trusses"
KEYS = [MATERIAL, SECTION, CONNECTIVITY, MESH_GROUP, DIVISIONS, FORMULATION,
        Key("strain", "str", "engineering", "co-rotational trusses: engineering or green",
            choices=("engineering", "green"))]
NOT_USED: dict[str, str] = {}          # the default message, "not used by trusses", says it all


def derived(mat, sec, L: np.ndarray) -> dict[str, np.ndarray]:
    """The stiffness and mass of each element, by formula (bounded in the deck reference)."""
    return {"E A / L": mat.E * sec.A / L, "density A L": mat.rho * sec.A * L}


def build(e: Entry, inputs: GroupInputs) -> GroupPiece:
    """A truss group from its validated deck entry."""
    v = e.values
    mat, sec = material(e, inputs), section(e, inputs)
    conn, where = rows(e, inputs.nodes, Truss.nen, Truss.cell_type)
    lengths = line_lengths(inputs.nodes, conn, where)
    with np.errstate(all="ignore"):              # an overflow is the error reported here
        L = lengths / v["divisions"]
        check_derived(e, inputs.nodes, conn, L, mat, sec, derived(mat, sec, L))
    conn, nodes = subdivided(e, inputs, conn)
    return GroupPiece(Truss(v["name"], conn, nodes.X, inputs.dim, EA=mat.E * sec.A,
                            rhoA=mat.rho * sec.A if sec.rhoA is None else sec.rhoA,
                            formulation=v["formulation"],
                            strain=v["strain"]), nodes)
