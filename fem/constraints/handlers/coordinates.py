"""Generalized coordinates of a mechanism for coordinate partitioning (:mod:`.partitioning`).

A mechanism's configuration is described by ``p`` coordinates ``s = S q + offset``, linear in
the free DOFs' values ``q`` (:class:`Coordinates`): the model's own DOFs (``S = I``,
:func:`model_coordinates`) or the relative angles of 2D revolute joints (:func:`joint_angles`).
Such a set absorbs some constraint rows and keeps the others as its closure constraints ``C``;
:func:`generalized` gives the coordinates' mass matrix ``M_s = J^T M J`` and ``C = G_closure J``
(Blajer, Schiehlen & Schirm, B(1)-(4); the module docstring of :mod:`.partitioning`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from fem import lazy
from fem.constraints.handlers.nullspace import Mechanism, lu_columns
from fem.constraints.joint import Joint
from fem.errors import ModelError
from fem.state import State

sla = lazy.module("scipy.linalg")


# --- coordinates -----------------------------------------------------------------------------
@dataclass(frozen=True)
class Coordinates:
    """Generalized coordinates ``s = S q + offset`` of a mechanism.

    Attributes
    ----------
    S : (p, n) the coordinates' Jacobian on the free DOFs (their rates: ``s' = S q'``)
    names : (p,) names for messages
    closure : (m,) bool, the mechanism's rows that stay constraints in these coordinates; the
        others are absorbed by the parametrization (``p + absorbed = n``)
    offset : (p,) the coordinates' values at the reference (``q = 0``)
    """

    S: NDArray
    names: tuple[str, ...]
    closure: NDArray
    offset: NDArray = field(default=None)

    def __post_init__(self):
        if self.offset is None:
            object.__setattr__(self, "offset", np.zeros(len(self.S)))

    def values(self, mech: Mechanism, state: State) -> NDArray:
        """(p,) the coordinates of ``state`` (2D)."""
        return self.S @ mech.coordinates(state) + self.offset

    def index(self, name: str) -> int:
        """Position of coordinate ``name``."""
        if name not in self.names:
            raise ModelError(f"no coordinate '{name}' (there are: "
                             + ", ".join(f"'{x}'" for x in self.names) + ")")
        return self.names.index(name)


def model_coordinates(mech: Mechanism) -> Coordinates:
    """The model's free DOFs themselves (``S = I``; every row a closure constraint)."""
    return Coordinates(np.eye(mech.n), tuple(mech.describe(k) for k in range(mech.n)),
                       np.ones(mech.m, dtype=bool))


def joint_angles(mech: Mechanism, joints: list[str], closure: list[str],
                 signs: list[float] | None = None, names: list[str] | None = None,
                 offset: list[float] | None = None) -> Coordinates:
    """Relative angles of 2D revolute joints as coordinates, as the joints report them.

    ``joints``: the joint groups whose angles are the coordinates (one per item, in order);
    ``closure``: the joint groups whose rows remain constraints (the cut joints), every other
    row being absorbed; ``signs``: +1 or -1 per coordinate (e.g. clockwise angles); ``names``
    (default: the group names, ``name[e]`` for groups of several joints); ``offset``: the
    coordinates at the reference.
    """
    if mech.dim != 2:
        raise ModelError("joint angles as coordinates are 2D only")
    # the angles as the joints report them (Joint.coordinates): sign (theta_b - theta_a)
    model, dm = mech.system.model, mech.system.dofmap
    groups = {c.name: c for c in model.constraints}
    rows, labels = [], []
    for name in joints:
        mech.group_rows(name)                                  # an unknown name is an error
        c = groups[name]
        if not isinstance(c, Joint) or c.kind != "revolute":
            raise ModelError(f"joints '{name}' is not a revolute joint: only their relative "
                             "angles are coordinates")
        for e, (a, b) in enumerate(c.conn):
            row = np.zeros(mech.n)
            for node, sign in ((b, c.sign[e]), (a, -c.sign[e])):
                k = dm.index[node, 2]
                if 0 <= k < mech.n:
                    row[k] += sign
            rows.append(row)
            labels.append(name if len(c) == 1 else f"{name}[{e}]")
    S = np.array(rows)
    if signs is not None:
        S = np.asarray(signs, dtype=float)[:, None] * S
    keep = np.zeros(mech.m, dtype=bool)
    for name in closure:
        keep[mech.group_rows(name)] = True
    return Coordinates(S, tuple(names) if names is not None else tuple(labels), keep,
                       None if offset is None else np.asarray(offset, dtype=float))


def generalized(coords: Coordinates, M: NDArray, G: NDArray) -> tuple[NDArray, NDArray, NDArray]:
    """``M_s (p, p)``, ``C (m_c, p)`` and ``J (n, p)`` of the coordinates (module docstring)."""
    p, n = coords.S.shape
    absorbed = G[~coords.closure]
    if p + len(absorbed) != n:
        raise ModelError(f"{p} coordinates and {len(absorbed)} absorbed constraint rows do not "
                         f"parametrize the {n} free DOFs: absorbed rows and coordinates must "
                         f"number {n}")
    if len(absorbed) == 0 and np.array_equal(coords.S, np.eye(n)):
        J = np.eye(n)
    else:
        T = np.vstack([coords.S, absorbed])
        s = sla.svdvals(T, check_finite=False)
        if s[-1] <= 1e-10 * s[0]:
            raise ModelError("the coordinates do not determine the configuration together with "
                             "the absorbed constraint rows (dependent): choose other closure "
                             "joints")
        J = lu_columns(sla.lu_factor(T, check_finite=False), np.eye(n)[:, :p])
    return J.T @ M @ J, G[coords.closure] @ J, J
