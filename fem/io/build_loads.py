"""Build what acts on the DOFs: ``[[supports]]``, ``[[prescribed]]`` values and ``[[loads]]``.

Each builder takes the node table and the time functions and returns its pieces with the deck
entry of each (for messages); :func:`check_model` checks, once the model is built, that every
load and prescribed value acts on DOFs that exist.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from numpy.typing import NDArray

from fem.dofs import DofMap
from fem.errors import DeckError
from fem.io.build import Entry, Nodes, function, slot, unique
from fem.model import DOF_SLOTS, Model, NodalLoad, Prescribed


def supports(entries: list[Entry], nodes: Nodes) -> NDArray:
    """``[[supports]]``: ``(n, nslots)`` the fixed DOFs of the nodes."""
    slots = DOF_SLOTS[nodes.dim]
    fixed = np.zeros((len(nodes.X), len(slots)), dtype=bool)
    for e in entries:
        rows = nodes.indices(e.values["nodes"], f"{e.where}.nodes")
        names = e.values["fixed"]
        cols = (list(range(len(slots))) if names == ["all"] else
                [slot(nodes.dim, n, f"{e.where}.fixed") for n in names])
        fixed[np.ix_(rows, cols)] = True
    return fixed


def prescribed(entries: list[Entry], nodes: Nodes,
               funcs: Mapping) -> tuple[tuple[Prescribed, ...], dict[str, Entry]]:
    """``[[prescribed]]``: prescribed DOF values, and the entry of each by name."""
    items, by_name = [], unique(entries, "prescribed value")
    for name, e in by_name.items():
        v = e.values
        items.append(Prescribed(name, nodes.indices(v["nodes"], f"{e.where}.nodes"),
                                slot(nodes.dim, v["dof"], f"{e.where}.dof"), v["value"],
                                function(funcs, v["function"], f"{e.where}.function")))
    return tuple(items), by_name


def loads(entries: list[Entry], nodes: Nodes,
          funcs: Mapping) -> tuple[tuple[NodalLoad, ...], dict[str, Entry]]:
    """``[[loads]]``: nodal forces and moments, and the entry of each by name."""
    items, d = [], nodes.dim
    by_name = unique(entries, "load")
    for name, e in by_name.items():
        v = e.values
        force = np.zeros(3)
        moment = np.zeros(3)
        if v["force"] is not None:
            if len(v["force"]) != d:
                raise DeckError(f"{e.where}.force", f"expected {d} components (model.dim = "
                                f"{d}), got {len(v['force'])}")
            force[:d] = v["force"]
        if v["moment"] is not None:
            m = v["moment"]
            if d == 2:
                if isinstance(m, list):
                    raise DeckError(f"{e.where}.moment", "expected one number, mz, in a 2D "
                                    f"model, got a list {m}")
                moment[2] = m
            else:
                if not isinstance(m, list) or len(m) != 3:
                    raise DeckError(f"{e.where}.moment", f"expected [mx, my, mz], got {m!r}")
                moment[:] = m
        if v["force"] is None and v["moment"] is None:
            raise DeckError(e.where, "expected a force, a moment or both, got neither")
        if v["kind"] == "semitangential" and np.any(force):
            raise DeckError(f"{e.where}.kind", "semitangential applies to moments; give the "
                            "force as a separate dead or follower load")
        items.append(NodalLoad(name, nodes.indices(v["nodes"], f"{e.where}.nodes"), force,
                               moment, v["kind"],
                               function(funcs, v["function"], f"{e.where}.function")))
    return tuple(items), by_name


def check_model(model: Model, load_entries: dict[str, Entry],
                prescribed_entries: dict[str, Entry]) -> None:
    """Loads and prescribed values act on DOFs that the elements give the model."""
    active = DofMap.build(model).active
    ids, slots = model.node_ids, model.slots
    rot = slice(2, 3) if model.dim == 2 else slice(3, 6)
    for ld in model.loads:
        e = load_entries[ld.name]
        loose = ~np.any(active[ld.nodes], axis=1)
        if np.any(loose):
            raise DeckError(f"{e.where}.nodes", f"expected nodes of elements, got node "
                            f"{ids[ld.nodes[loose][0]]}, which no element connects to")
        needs_rot = np.any(ld.moment) or ld.kind == "follower"
        if needs_rot and not np.all(active[ld.nodes, rot]):
            bad = ld.nodes[~np.all(active[ld.nodes, rot], axis=1)][0]
            key = "moment" if np.any(ld.moment) else "kind"
            what = "a moment" if np.any(ld.moment) else "a follower force"
            raise DeckError(f"{e.where}.{key}", f"{what} needs rotational DOFs at its "
                            f"nodes, but node {ids[bad]} has none: only trusses "
                            "connect to it; connect a beam there or apply forces instead")
    for p in model.prescribed:
        e = prescribed_entries[p.name]
        off = ~active[p.nodes, p.slot]
        if np.any(off):
            raise DeckError(f"{e.where}.dof", f"node {ids[p.nodes[off][0]]} has no DOF "
                            f"{slots[p.slot]}: no element using it connects to the node"
                            + (" (trusses have no rotations)" if p.slot >= model.dim else ""))
