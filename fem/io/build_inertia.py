"""Build the inertia-related deck tables: point masses and initial velocity fields.

(Grounded springs are an element family: :mod:`fem.elements.spring_deck`.)
"""

from __future__ import annotations

import numpy as np

from fem.errors import DeckError
from fem.io.build import Entry, Nodes, axial, unique, vector
from fem.io.keys import shown
from fem.model import PointMass, VelocityField


def masses(entries: list[Entry], nodes: Nodes) -> tuple[PointMass, ...]:
    """``[[masses]]``: point masses and rotary inertias."""
    items = []
    for i, e in enumerate(entries):
        v = e.values
        J = inertia_tensor(nodes.dim, v["inertia"], f"{e.where}.inertia")
        items.append(PointMass(f"masses[{i}]", nodes.indices(v["nodes"], f"{e.where}.nodes"),
                               v["mass"], J))
    return tuple(items)


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
        lowest = np.linalg.eigvalsh(J)[0]
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


def velocities(entries: list[Entry], table: Nodes) -> dict[str, VelocityField]:
    """``[[velocities]]``: initial velocity fields by name (a step's fields add up on a node)."""
    fields = {}
    d = table.dim
    for name, e in unique(entries, "velocity field").items():
        v = e.values
        nodes = (np.arange(len(table.X)) if v["nodes"] is None or v["nodes"] == "all"
                 else table.indices(v["nodes"], f"{e.where}.nodes"))
        vel = (np.zeros(3) if v["velocity"] is None else
               vector(v["velocity"], d, f"{e.where}.velocity"))
        w = (np.zeros(3) if v["angular_velocity"] is None else
             axial(v["angular_velocity"], d, f"{e.where}.angular_velocity", ("wx", "wy", "wz")))
        c = (np.zeros(3) if v["center"] is None else
             vector(v["center"], d, f"{e.where}.center", "coordinates"))
        # each node once: the fields a step names add up node by node (a spin plus a kick)
        fields[name] = VelocityField(name, np.unique(nodes), vel, w, c)
    return fields
