"""Element families and their registry; every group follows :mod:`fem.elements.base`.

A family is its group class (the element, its cell type and its capabilities) and its deck
module (the deck table its entries are in, its keys and its construction from deck values),
joined by one :func:`register` line below: one folder for a family of several modules
(``fem/elements/beam/``, ``shell/``, ``superelement/``: ``group.py``, ``deck.py``, its frames,
mass and compiled pairs), or ``fem/elements/<family>.py`` with ``<family>_deck.py`` for a small
one (truss, spring, rigid body). The deck schema, the deck reference, the builders and the
results writers find families here only, so a new family (a shell) needs no edit anywhere else.

A deck module provides ``TABLE`` (``"elements"``, or a table of its own such as ``"springs"`` or
``"bodies"``, declared in :data:`fem.io.keys.FAMILY_TABLES`), ``PLURAL`` (for messages:
``"trusses"``), ``KEYS`` (its :class:`fem.io.keys.Key` list, besides the table's ``name`` and
``type``), ``NOT_USED`` (``{key: message}`` for another family's key whose default message, "not
used by <plural>", would say too little) and ``build(entry, inputs) -> GroupPiece``
(:mod:`fem.io.keys.groups`).
"""

from __future__ import annotations

from dataclasses import dataclass

from fem.elements import rigid_body_deck, spring_deck, truss_deck
from fem.elements.base import ElementGroup
from fem.elements.beam import Beam
from fem.elements.beam import deck as beam_deck
from fem.elements.contact import Contact
from fem.elements.contact import deck as contact_deck
from fem.elements.force import Bushing, CoordinateForce, SpringDamper
from fem.elements.force import deck as force_deck
from fem.elements.rigid_body import RigidBody
from fem.elements.shell import Shell
from fem.elements.shell import deck as shell_deck
from fem.elements.spring import GroundSpring
from fem.elements.superelement import Superelement
from fem.elements.superelement import deck as superelement_deck
from fem.elements.truss import Truss


@dataclass(frozen=True)
class Family:
    """A registered element family: its deck ``type`` name, group class and deck module."""

    name: str
    group: type[ElementGroup]
    deck: object                # a deck module, or any object with the same attributes


FAMILIES: dict[str, Family] = {}


def register(name: str, group: type[ElementGroup], deck) -> Family:
    """Register family ``name`` (the deck's ``type``); a name is registered once."""
    if name in FAMILIES:
        raise ValueError(f"element family '{name}' is already registered")
    FAMILIES[name] = Family(name, group, deck)
    return FAMILIES[name]


def unregister(name: str) -> None:
    """Remove family ``name`` (tests register families of their own)."""
    del FAMILIES[name]


def families(table: str) -> dict[str, Family]:
    """``{name: family}`` of the families whose entries are in deck table ``table``."""
    return {n: f for n, f in FAMILIES.items() if f.deck.TABLE == table}


register("truss", Truss, truss_deck)
register("beam", Beam, beam_deck)
register("spring", GroundSpring, spring_deck)
register("rigid", RigidBody, rigid_body_deck)
register("shell", Shell, shell_deck)
register("superelement", Superelement, superelement_deck)
register("contact", Contact, contact_deck)
register("spring_damper", SpringDamper, force_deck.AXIAL)
register("rotational_spring_damper", CoordinateForce, force_deck.ROTATIONAL)
register("bushing", Bushing, force_deck.BUSHING)

__all__ = ["Beam", "Bushing", "Contact", "CoordinateForce", "FAMILIES", "Family", "GroundSpring",
           "RigidBody", "Shell", "SpringDamper", "Superelement", "Truss", "families", "register",
           "unregister"]
