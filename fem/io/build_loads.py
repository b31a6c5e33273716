"""Build what acts on the DOFs: supports, prescribed values, ``[[loads]]`` and ``[gravity]``.

Each builder takes the node table and the time functions and returns its pieces with the deck
entry of each (for messages); :func:`check_model` checks, once the model is built, that every
load and prescribed value acts on DOFs that exist.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from numpy.typing import NDArray

from fem.dofs import DofMap
from fem.errors import DeckError, did_you_mean
from fem.io.build import function
from fem.io.keys.entries import Entry, axial, slot, unique, vector
from fem.io.keys.nodes import Nodes
from fem.loads import PressureLoad, gravity_force
from fem.model import DOF_SLOTS, DistributedLoad, Gravity, Model, NodalLoad, Prescribed


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


def loads(entries: list[Entry], nodes: Nodes, funcs: Mapping,
          groups: tuple = ()) -> tuple[tuple, dict[str, Entry]]:
    """``[[loads]]``: nodal and distributed loads, and the entry of each by name."""
    items, d = [], nodes.dim
    by_name = unique(entries, "load")
    for name, e in by_name.items():
        v = e.values
        if v["pressure"] is not None:
            items.append(_pressure(e, groups, funcs))
            continue
        if v["elements"] is not None or v["per_length"] is not None:
            items.append(_distributed(e, d, groups, funcs))
            continue
        if v["nodes"] is None:
            raise DeckError(e.where, "expected nodes (with a force or a moment) or elements "
                            "(with per_length), got neither")
        force = (np.zeros(3) if v["force"] is None else
                 vector(v["force"], d, f"{e.where}.force"))
        moment = (np.zeros(3) if v["moment"] is None else
                  axial(v["moment"], d, f"{e.where}.moment", ("mx", "my", "mz")))
        if v["force"] is None and v["moment"] is None:
            raise DeckError(e.where, "expected a force, a moment or both, got neither")
        if v["kind"] == "semitangential" and np.any(force):
            raise DeckError(f"{e.where}.kind", "semitangential applies to moments; give the "
                            "force as a separate dead or follower load")
        items.append(NodalLoad(name, nodes.indices(v["nodes"], f"{e.where}.nodes"), force,
                               moment, v["kind"],
                               function(funcs, v["function"], f"{e.where}.function")))
    return tuple(items), by_name


def _distributed(e: Entry, d: int, groups: tuple, funcs: Mapping) -> DistributedLoad:
    """A ``[[loads]]`` entry with ``elements`` and ``per_length``."""
    v = e.values
    for key in ("nodes", "force", "moment"):
        if v[key] is not None:
            raise DeckError(f"{e.where}.{key}", "not used by a distributed load (elements and "
                            "per_length); give nodal loads as a separate entry")
    for key in ("elements", "per_length"):
        if v[key] is None:
            raise DeckError(f"{e.where}.{key}", "missing: a distributed load needs elements "
                            "(element-group names) and per_length ([qx, qy] or [qx, qy, qz])")
    q = vector(v["per_length"], d, f"{e.where}.per_length")
    if not np.any(q):
        raise DeckError(f"{e.where}.per_length", "expected a nonzero load per length, got zero")
    if v["kind"] not in ("dead", "follower"):
        raise DeckError(f"{e.where}.kind", f"expected dead or follower for a distributed load, "
                        f"got {v['kind']!r}")
    parts = []
    for gname, g in _named_groups(e, groups):
        if g.cell_type != "line" or g.nen != 2:
            raise DeckError(f"{e.where}.elements", f"group '{gname}' ({g.type_name}) is not "
                            "made of 2-node line elements: a load per length needs beams or "
                            "trusses")
        off = getattr(g, "offsets", None)
        if off is not None and off.nonzero.any():
            # the load acts on the line between the nodes (loads.DistributedLoad), not on the
            # offset axis: its length and its moment about the nodes would be wrong
            raise DeckError(f"{e.where}.elements", f"group '{gname}' has end offsets "
                            f"({g.offsets_key}): a load per length on offset beams is not "
                            "supported yet; give the equivalent nodal forces and moments")
        turns = {"rx", "ry", "rz"} & set(g.dof_names)
        if v["kind"] == "follower" and not turns:
            raise DeckError(f"{e.where}.kind", f"a follower load turns with the nodes' "
                            f"rotations, but group '{gname}' ({g.type_name}) has none; use "
                            "beams or a dead load")
        parts.append((gname, np.arange(len(g))))
    return DistributedLoad(v["name"], tuple(parts), q, v["kind"],
                           function(funcs, v["function"], f"{e.where}.function"))


def _named_groups(e: Entry, groups: tuple) -> list:
    """``[(name, group)]`` of a load's ``elements`` (a name or a list of them), each once."""
    by_name = {g.name: g for g in groups}
    names = [e.values["elements"]] if isinstance(e.values["elements"], str) \
        else e.values["elements"]
    if len(set(names)) != len(names):
        raise DeckError(f"{e.where}.elements", f"a group is named twice in {names}")
    for gname in names:
        if gname not in by_name:
            raise DeckError(f"{e.where}.elements", f"unknown element group '{gname}'"
                            + did_you_mean(gname, by_name) + "; the groups are: "
                            + ", ".join(by_name))
    return [(gname, by_name[gname]) for gname in names]


def _pressure(e: Entry, groups: tuple, funcs: Mapping) -> PressureLoad:
    """A ``[[loads]]`` entry with ``elements`` (triangle groups: shells) and ``pressure``."""
    v = e.values
    for key in ("nodes", "force", "moment", "per_length"):
        if v[key] is not None:
            raise DeckError(f"{e.where}.{key}", "not used by a pressure load (elements and "
                            "pressure); give other loads as separate entries")
    if v["elements"] is None:
        raise DeckError(f"{e.where}.elements", "missing: a pressure load needs elements "
                        "(names of shell groups)")
    if v["pressure"] == 0.0:
        raise DeckError(f"{e.where}.pressure", "expected a nonzero pressure, got zero")
    if v["kind"] != "dead":
        raise DeckError(f"{e.where}.kind", f"expected dead for a pressure load (follower "
                        f"pressure is not implemented), got {v['kind']!r}")
    parts = []
    for gname, g in _named_groups(e, groups):
        if g.cell_type != "triangle":
            raise DeckError(f"{e.where}.elements", f"group '{gname}' ({g.type_name}) is not "
                            "made of triangles: a pressure needs shells")
        parts.append((gname, np.arange(len(g))))
    return PressureLoad(v["name"], tuple(parts), float(v["pressure"]), "dead",
                        function(funcs, v["function"], f"{e.where}.function"))


def gravity(table: dict | None, dim: int, funcs: Mapping, names: Mapping) -> Gravity | None:
    """``[gravity]``: the load ``M g`` named ``"gravity"`` (``names``: the ``[[loads]]``)."""
    if table is None:
        return None
    if "gravity" in names:
        raise DeckError(f"{names['gravity'].where}.name", "'gravity' is the name of the "
                        "[gravity] load; give this load another name")
    a = vector(table["acceleration"], dim, "gravity.acceleration")
    return Gravity(a, function(funcs, table["function"], "gravity.function"))


def check_model(model: Model, load_entries: dict[str, Entry],
                prescribed_entries: dict[str, Entry]) -> None:
    """Loads and prescribed values act on DOFs that the elements give the model."""
    active = DofMap.build(model).active
    ids, slots = model.node_ids, model.slots
    rot = slice(2, 3) if model.dim == 2 else slice(3, 6)
    for ld in model.loads:
        if isinstance(ld, Gravity):
            _check_gravity(model, ld)
            continue
        if isinstance(ld, (DistributedLoad, PressureLoad)):
            continue            # on elements: their nodes are active, checked when built
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


def _check_gravity(model: Model, ld: Gravity) -> None:
    """Gravity needs a mass to act on (a model without density or point masses weighs nothing)."""
    if not np.any(ld.acceleration):
        raise DeckError("gravity.acceleration", "expected a nonzero acceleration, got zero")
    supers = any(hasattr(g, "gravity_parts") for g in model.groups)   # checked by the steps
    if not supers and not np.any(gravity_force(model, ld.acceleration)):
        raise DeckError("gravity.acceleration", "the model has no mass for gravity to act on: "
                        "give the materials a density, the beam sections a mass_per_length, "
                        "or add [[masses]]")
