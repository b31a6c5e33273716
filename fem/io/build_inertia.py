"""Build the inertia-related deck tables: point masses and initial velocity fields.

(Grounded springs are an element family: :mod:`fem.elements.spring_deck`.)
"""

from __future__ import annotations

import numpy as np

from fem.io.keys.entries import Entry, axial, inertia_tensor, unique, vector
from fem.io.keys.nodes import Nodes
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
