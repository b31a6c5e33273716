"""The deck entry of :class:`~fem.elements.truss.Truss` groups: ``[[elements]] type = "truss"``.

Its keys (:data:`KEYS`) and its construction (:func:`build`: deck values -> group), registered
with the class in :mod:`fem.elements`.
"""

from __future__ import annotations

import numpy as np

from fem.elements.truss import Truss
from fem.errors import DeckError
from fem.io.keys import Key
from fem.io.keys.entries import Entry
from fem.io.keys.groups import LINE_KEYS, GroupInputs, GroupPiece, line_group

TABLE = "elements"
PLURAL = "trusses"
KEYS = [*LINE_KEYS,
        Key("strain", "str", "engineering", "co-rotational trusses: engineering or green",
            choices=("engineering", "green"))]
NOT_USED: dict[str, str] = {}          # the default message, "not used by trusses", says it all


def derived(mat, sec, L: np.ndarray) -> dict[str, np.ndarray]:
    """The stiffness and mass of each element, by formula (bounded in the deck reference)."""
    return {"E A / L": mat.E * sec.A / L, "density A L": mat.rho * sec.A * L}


def build(e: Entry, inputs: GroupInputs) -> GroupPiece:
    """A truss group from its validated deck entry."""
    v = e.values

    def check(mat, sec) -> None:
        if sec.rhoI is not None:
            raise DeckError(f"{e.where}.section", f"section '{sec.name}' gives "
                            "rotary_inertia_per_length, but trusses carry no rotary inertia; "
                            "give the trusses a section without it")

    g = line_group(e, inputs, Truss.nen, Truss.cell_type, derived, check)
    return GroupPiece(Truss(v["name"], g.conn, g.nodes.X, inputs.dim, EA=g.material.E * g.section.A,
                            rhoA=g.section.mass_per_length(g.material.rho),
                            formulation=v["formulation"], strain=v["strain"]), g.nodes)
