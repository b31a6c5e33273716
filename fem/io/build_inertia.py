"""Build the inertia-related deck tables: grounded springs, point masses, velocity fields."""

from __future__ import annotations

import numpy as np

from fem.errors import DeckError
from fem.io.build import Entry, _unique


def springs(b, entries: list[Entry]) -> None:
    """``[[springs]]``: grounded springs, one element group each."""
    from fem.elements.spring import GroundSpring

    taken = {g.name for g in b.groups}
    for name, e in _unique(entries, "spring").items():
        if name in taken:
            raise DeckError(f"{e.where}.name", f"'{name}' is already an element group")
        v = e.values
        nodes = b.node_indices(v["nodes"], f"{e.where}.nodes")
        allowed = ("ux", "uy", "rz") if b.dim == 2 else ("ux", "uy", "uz")
        if v["dof"] not in allowed:
            raise DeckError(f"{e.where}.dof", f"expected one of {', '.join(allowed)} "
                            f"(a grounded spring acts on a displacement), got '{v['dof']}'")
        b.groups.append(GroundSpring(name, nodes, np.array(b.X), b.dim, v["dof"],
                                     v["stiffness"]))


def masses(b, entries: list[Entry]) -> list:
    """``[[masses]]``: point masses and rotary inertias."""
    from fem.model import PointMass

    items = []
    for i, e in enumerate(entries):
        v = e.values
        J = np.zeros((3, 3))
        inertia = v["inertia"]
        if inertia is not None:
            if b.dim == 2:
                if isinstance(inertia, list):
                    raise DeckError(f"{e.where}.inertia", "a 2D rotary inertia is one number")
                J[2, 2] = inertia
            elif isinstance(inertia, list) and len(inertia) == 3:
                J[:] = np.diag(inertia)
            else:
                raise DeckError(f"{e.where}.inertia", "expected [Ixx, Iyy, Izz]")
            if np.any(np.diag(J) < 0):
                raise DeckError(f"{e.where}.inertia", "must not be negative")
        items.append(PointMass(f"masses[{i}]", b.node_indices(
            v["nodes"], f"{e.where}.nodes"), v["mass"], J))
    return items


def velocities(b, entries: list[Entry]) -> dict:
    """``[[velocities]]``: initial velocity fields."""
    from fem.dynamic import VelocityField

    fields = {}
    d = b.dim
    for name, e in _unique(entries, "velocity field").items():
        v = e.values
        nodes = (np.arange(len(b.X)) if v["nodes"] is None or v["nodes"] == "all"
                 else b.node_indices(v["nodes"], f"{e.where}.nodes"))
        vel = np.zeros(3)
        if v["velocity"] is not None:
            if len(v["velocity"]) != d:
                raise DeckError(f"{e.where}.velocity", f"expected {d} components")
            vel[:d] = v["velocity"]
        w = np.zeros(3)
        if v["angular_velocity"] is not None:
            a = v["angular_velocity"]
            if d == 2:
                if isinstance(a, list):
                    raise DeckError(f"{e.where}.angular_velocity", "a 2D angular velocity "
                                    "is one number, wz")
                w[2] = a
            elif isinstance(a, list) and len(a) == 3:
                w[:] = a
            else:
                raise DeckError(f"{e.where}.angular_velocity", "expected [wx, wy, wz]")
        c = np.zeros(3)
        if v["center"] is not None:
            if len(v["center"]) != d:
                raise DeckError(f"{e.where}.center", f"expected {d} coordinates")
            c[:d] = v["center"]
        fields[name] = VelocityField(name, nodes, vel, w, c)
    return fields
