"""Deck entries and values: what every builder reads, one parser and one message for each.

An :class:`Entry` is one table of an array of tables (its deck key, its validated values and the
keys written); :func:`unique` and :func:`lookup` find entries by name, :func:`vector`,
:func:`axial` and :func:`inertia_tensor` read the deck's vectors, moments and rotary inertias,
:func:`slot` a DOF's name.
The builders of :mod:`fem.io` and the element families' deck modules (``fem/elements/*_deck.py``)
and the step types' deck modules (``fem/analysis/*_deck.py``) share them; like the rest of
:mod:`fem.io.keys` this module imports nothing of fem but its errors, the model and the keys (a
deck leaf, in the data layer).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from fem.errors import DeckError, did_you_mean
from fem.io.keys import shown, type_name
from fem.model import DOF_SLOTS


@dataclass(frozen=True)
class Entry:
    """One table of an array of tables: its key, validated values and the keys given."""

    where: str
    values: dict
    given: frozenset


def unique(entries: list[Entry], what: str) -> dict[str, Entry]:
    """``{name: entry}``; a name used twice is a deck error naming both entries."""
    out = {}
    for e in entries:
        name = e.values["name"]
        if name in out:
            raise DeckError(f"{e.where}.name", f"duplicate {what} name '{name}' (first defined "
                            f"at {out[name].where})")
        out[name] = e
    return out


def slot(dim: int, name: str, where: str) -> int:
    """Position of DOF ``name`` among the node's slots (``DOF_SLOTS[dim]``)."""
    slots = DOF_SLOTS[dim]
    if name not in slots:
        raise DeckError(where, f"expected one of {', '.join(slots)} (model.dim = {dim}), got "
                        f"'{name}'" + did_you_mean(name, slots))
    return slots.index(name)


def lookup(table: Mapping, name: str, what: str, where: str, hint: str = ""):
    """``table[name]``, or a deck error at ``where`` listing the names ``table`` has.

    ``hint`` follows the unknown name in the message (``" (add a [gravity] table)"``).
    """
    if name not in table:
        known = ", ".join(sorted(table)) or "none defined"
        raise DeckError(where, f"unknown {what} '{name}'{hint}{did_you_mean(name, table)}; "
                        f"known: {known}")
    return table[name]


# --- vectors of the deck: one parser, one message -----------------------------------------------

def vector(value, dim: int, where: str, what: str = "components") -> NDArray:
    """(3,) a deck vector of ``dim`` components (``[x, y]`` or ``[x, y, z]``), padded with 0.

    ``value`` is a list of numbers (the schema checked that); its length is checked here, with
    one message for every key (``what`` names the components, e.g. ``"coordinates"``):

    >>> vector([1, 2], 2, "loads[0].force")
    array([1., 2., 0.])
    >>> vector([1, 2, 3], 2, "loads[0].force")
    Traceback (most recent call last):
    fem.errors.DeckError: loads[0].force: expected 2 components (model.dim = 2), got 3: [1, 2, 3]
    """
    if len(value) != dim:
        raise DeckError(where, f"expected {dim} {what} (model.dim = {dim}), got {len(value)}: "
                        f"{shown(value)}")
    out = np.zeros(3)
    out[:dim] = value
    return out


def axial(value, dim: int, where: str, names: tuple[str, str, str],
          planar: str | None = None) -> NDArray:
    """(3,) a deck axial vector (a moment, a spin, an inertia): one number in 2D, three in 3D.

    In 2D the number acts about z (``out[2]``); ``names`` are the three components' names for
    messages (``("mx", "my", "mz")``), ``planar`` the 2D number's name (default ``names[2]``):

    >>> axial(5.0, 2, "loads[0].moment", ("mx", "my", "mz"))
    array([0., 0., 5.])
    >>> axial([1.0, 2.0], 3, "loads[0].moment", ("mx", "my", "mz"))
    Traceback (most recent call last):
    fem.errors.DeckError: loads[0].moment: expected [mx, my, mz] in a 3D model (model.dim = 3),
    got 2 components: [1.0, 2.0]
    """
    out = np.zeros(3)
    if dim == 2:
        if isinstance(value, list):
            raise DeckError(where, f"expected one number, {planar or names[2]}, in a 2D model "
                            f"(model.dim = 2), got a list {shown(value)}")
        out[2] = value
        return out
    if not isinstance(value, list) or len(value) != 3:
        got = (f"{len(value)} components: {shown(value)}" if isinstance(value, list) else
               f"{type_name(value)} {shown(value)}")
        raise DeckError(where, f"expected [{', '.join(names)}] in a 3D model (model.dim = 3), "
                        f"got {got}")
    out[:] = value
    return out


def inertia_tensor(dim: int, inertia, where: str) -> np.ndarray:
    """(3, 3) rotary inertia (global axes) of a deck ``inertia``: number, diagonal or matrix.

    The ``inertia`` of ``[[masses]]`` and ``[[bodies]]`` (:mod:`fem.elements.rigid_body_deck`):
    2D one number, Izz; 3D ``[Ixx, Iyy, Izz]`` or a 3 x 3 matrix; ``None`` gives zeros.

    A matrix must be symmetric and positive semi-definite, to a relative tolerance of 1e-12 of its
    largest entry (the digits a deck writes).
    """
    J = np.zeros((3, 3))
    if inertia is None:
        return J
    if dim == 2:
        J[2, 2] = axial(inertia, dim, where, ("Ixx", "Iyy", "Izz"))[2]
    elif not isinstance(inertia, list):
        raise DeckError(where, f"expected [Ixx, Iyy, Izz] or a 3 x 3 matrix [[Ixx, Ixy, Ixz], "
                        f"[Ixy, Iyy, Iyz], [Ixz, Iyz, Izz]] in a 3D model, got {inertia!r}")
    elif all(isinstance(x, list) for x in inertia):
        if len(inertia) != 3 or any(len(r) != 3 for r in inertia):
            raise DeckError(where, "expected a 3 x 3 matrix [[Ixx, Ixy, Ixz], [Ixy, Iyy, Iyz], "
                            f"[Ixz, Iyz, Izz]], got {shown(inertia)}")
        J[:] = np.array(inertia, dtype=float)
        scale = np.abs(J).max()
        asym = np.abs(J - J.T)
        if np.any(asym > 1e-12 * scale):
            i, j = (int(x) for x in np.argwhere(asym == asym.max())[0])
            axes = "xyz"
            raise DeckError(where, f"expected a symmetric matrix, got I{axes[i]}{axes[j]} = "
                            f"{float(J[i, j])!r} and I{axes[j]}{axes[i]} = {float(J[j, i])!r}")
        J = 0.5 * (J + J.T)
        lowest = lowest_eigenvalue(J)
        if lowest < -1e-12 * scale:
            raise DeckError(where, "expected a positive semi-definite matrix (a rotary inertia), "
                            f"got one with the principal value {lowest:.6g}")
        return J
    elif len(inertia) == 3:
        J[:] = np.diag(inertia)
    else:
        raise DeckError(where, f"expected [Ixx, Iyy, Izz] or a 3 x 3 matrix, got "
                        f"{shown(inertia)}")
    if np.any(np.diag(J) < 0):
        raise DeckError(where, f"expected rotary inertias >= 0, got {shown(inertia)}")
    return J


def lowest_eigenvalue(a: np.ndarray) -> float:
    """The lowest eigenvalue of a small symmetric matrix the deck gives.

    A rotary inertia, a bushing's stiffness: for the check that it is positive semi-definite,
    not a model's eigen-solve (those go through fem.solvers.eigen).
    """
    return float(np.linalg.eigvalsh(0.5 * (a + a.T))[0])
