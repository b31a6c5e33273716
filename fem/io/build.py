"""The first pieces of a model: the node table and sets, materials, sections, functions.

Every builder of ``fem.io.build_*`` and of the element families' deck modules
(``fem/elements/*_deck.py``) is a function of read-only inputs that returns pieces; only
:func:`fem.io.deck.from_dict` puts them together, in dependency order (materials, sections,
nodes, sets, functions, element groups, springs, masses, supports, prescribed values, ties,
loads, velocity fields, the model, steps). This module is the bottom of that chain: it imports no
other builder. Each builder receives :class:`~fem.io.keys.entries.Entry` objects (the deck key,
the validated values and the keys actually written) and raises :class:`~fem.errors.DeckError` at
the first mistake. What the element families' deck modules share with the builders (entries,
vectors, the node table :class:`~fem.io.keys.nodes.Nodes`, the group inputs) is in the deck
leaves of :mod:`fem.io.keys`, which import nothing of :mod:`fem.io` but the keys.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

import numpy as np
from numpy.typing import NDArray

from fem.errors import DeckError
from fem.io import mesh as meshio_reader
from fem.io.keys import (
    LAYER_KEYS,
    MAX_DERIVED,
    MAX_MAGNITUDE,
    MAX_NODE_ID,
    MIN_MAGNITUDE,
    NAME_RULE,
    check_name,
    misplaced_hint,
    sci,
    shown,
    take,
    type_name,
    valid_name,
)
from fem.io.keys.entries import Entry, axial, lookup, unique, vector
from fem.io.keys.nodes import Nodes
from fem.model import Layer, Material, OrthotropicMaterial, Section, ShellSection
from fem.time_functions import Constant, Ramp, SpinUp, Steady, Table

# --- the node table -----------------------------------------------------------------------------

def nodes(v: dict, dim: int, base_dir: str) -> tuple[Nodes, list[str]]:
    """``[nodes]``: the node table (inline coordinates or a mesh file) and the files it read."""
    if (v["coordinates"] is None) == (v["mesh"] is None):
        got = "both" if v["mesh"] is not None else "neither"
        raise DeckError("nodes", f"expected exactly one of coordinates and mesh, got {got}")
    if v["mesh"] is not None:
        if v["ids"] is not None:
            raise DeckError("nodes.ids", "not used with a mesh (mesh node ids are 1..n in "
                            "file order)")
        path = os.path.join(base_dir, v["mesh"])
        mesh = _mesh(path, v["mesh"], dim)
        X = mesh.points
        table = Nodes(dim, X, np.arange(1, len(X) + 1, dtype=np.int64),
                      np.full((len(X), 4), -1, dtype=np.int64), mesh.node_sets, mesh)
        return table, [os.path.abspath(path)]
    rows = v["coordinates"]
    # the first row of another length gets the message of every deck vector (:func:`vector`);
    # the rows are filled at once (row by row is slow for large decks)
    bad = next((i for i, r in enumerate(rows) if len(r) != dim), None)
    if bad is not None:
        vector(rows[bad], dim, f"nodes.coordinates[{bad}]", "coordinates")
    X = np.zeros((len(rows), 3))
    X[:, :dim] = np.array(rows, dtype=float).reshape(len(rows), dim)
    ids = np.arange(1, len(rows) + 1) if v["ids"] is None else _ids(v["ids"], len(rows))
    if len(X) == 0:
        raise DeckError("nodes", "expected at least one node, got none")
    return Nodes(dim, X, np.asarray(ids, dtype=np.int64),
                 np.full((len(X), 4), -1, dtype=np.int64)), []


def _ids(given: list, rows: int) -> NDArray:
    """``[nodes] ids``: integers, one per coordinate row, each once."""
    ids = np.array(given, dtype=float)
    if len(ids) != rows:
        raise DeckError("nodes.ids", f"expected {rows} integer ids, one per coordinate row, got "
                        f"{len(ids)} values {shown(given)}")
    bad = np.flatnonzero((ids != np.round(ids)) | (np.abs(ids) > MAX_NODE_ID))
    if len(bad):
        raise DeckError(f"nodes.ids[{bad[0]}]", "expected an integer node id of magnitude at "
                        f"most {sci(MAX_NODE_ID)}, got {shown(given[bad[0]])}")
    ids = ids.astype(np.int64)
    uniq, counts = np.unique(ids, return_counts=True)
    if np.any(counts > 1):
        raise DeckError("nodes.ids", f"duplicate node id {uniq[counts > 1][0]}")
    return ids


def _mesh(path: str, name: str, dim: int) -> meshio_reader.MeshData:
    """A mesh file's data, checked: finite coordinates, z = 0 in 2D, usable group names."""
    if not os.path.isfile(path):
        raise DeckError("nodes.mesh", f"expected a mesh file (relative to the deck), got "
                        f"{name!r}: there is no file {path}")
    try:
        mesh = meshio_reader.read(path)
    except ValueError as err:
        raise DeckError("nodes.mesh", f"cannot use the mesh file {name!r}: {err}") from None
    X = mesh.points
    with np.errstate(invalid="ignore"):
        size = np.abs(X)
        bad = ~np.isfinite(X) | (size > MAX_MAGNITUDE) | ((size < MIN_MAGNITUDE) & (X != 0))
    if np.any(bad):
        k, c = (int(x) for x in np.argwhere(bad)[0])
        raise DeckError("nodes.mesh", f"expected finite coordinates, 0 or of magnitude from "
                        f"{sci(MIN_MAGNITUDE)} to {sci(MAX_MAGNITUDE)}, got {'xyz'[c]} = "
                        f"{float(X[k, c])!r} at mesh node {k + 1} of {name!r}")
    off = np.flatnonzero(np.abs(X[:, 2]) > 0)
    if dim == 2 and len(off):
        raise DeckError("nodes.mesh", "expected z = 0 at every node of a 2D model "
                        f"(model.dim = 2), got z = {X[off[0], 2]:g} at mesh node {off[0] + 1}")
    for group in mesh.node_sets:
        if not valid_name(group):
            raise DeckError("nodes.mesh", f"the mesh group {shown(group)} of {name!r} becomes a "
                            f"node set, whose name must be {NAME_RULE}; rename the group in the "
                            "mesh file")
    return mesh


def sets(table, table_nodes: Nodes) -> Nodes:
    """``[sets]``: ``name = [node ids]``; the node table with these sets added."""
    if not isinstance(table, dict):
        raise DeckError("sets", "expected a table ([sets] followed by name = [node ids] "
                        f"lines), got {type_name(table)} {shown(table)}")
    out = {}
    for name, ids in table.items():
        if not (isinstance(ids, list) and ids and all(
                isinstance(i, int) and not isinstance(i, bool) for i in ids)):
            raise DeckError(f"sets.{name}", "expected a non-empty list of node ids, got "
                            f"{type_name(ids)} {shown(ids)}" + misplaced_hint(name, "[sets]"))
        check_name(name, f"sets.{name}", "a set name")
        out[name] = table_nodes.indices(ids, f"sets.{name}")
    return table_nodes.with_sets(out)


# --- materials, sections, functions -------------------------------------------------------------

ORTHOTROPIC_KEYS = ("E1", "E2", "G12", "nu12")


def materials(entries: list[Entry]) -> dict[str, Material | OrthotropicMaterial]:
    """``[[materials]]``: E and one of nu or G; or ``type = "orthotropic"`` (shell layers)."""
    out = {}
    for name, e in unique(entries, "material").items():
        v = e.values
        if v["type"] == "orthotropic":
            out[name] = _orthotropic(e)
            continue
        for key in ORTHOTROPIC_KEYS:
            if key in e.given:
                raise DeckError(f"{e.where}.{key}", "used only by orthotropic materials: write "
                                "type = \"orthotropic\" with E1, E2, G12 and nu12 (and no E, nu "
                                "or G)")
        if v["E"] is None:
            raise DeckError(f"{e.where}.E", "missing required key 'E': expected a number "
                            "(Young's modulus; or type = \"orthotropic\" with E1, E2, G12, nu12)")
        if (v["nu"] is None) == (v["G"] is None):
            got = "both" if v["nu"] is not None else "neither"
            raise DeckError(e.where, f"expected exactly one of nu and G, got {got}")
        if v["nu"] is not None and not -1 < v["nu"] < 0.5:
            raise DeckError(f"{e.where}.nu", f"expected a Poisson's ratio in (-1, 0.5), got "
                            f"{v['nu']}")
        G = v["G"] if v["G"] is not None else v["E"] / (2 * (1 + v["nu"]))
        out[name] = Material(name, v["E"], G, v["density"])
    return out


def _orthotropic(e: Entry) -> OrthotropicMaterial:
    """An orthotropic material: E1, E2, G12, nu12, positive definite in plane stress."""
    v = e.values
    for key in ("E", "nu", "G"):
        if key in e.given:
            raise DeckError(f"{e.where}.{key}", "not used by type = \"orthotropic\", which "
                            "takes E1, E2, G12 and nu12")
    for key in ORTHOTROPIC_KEYS:
        if v[key] is None:
            raise DeckError(f"{e.where}.{key}", f"missing required key '{key}': type = "
                            "\"orthotropic\" needs E1, E2, G12 and nu12")
    if not v["nu12"] ** 2 < v["E1"] / v["E2"]:
        raise DeckError(f"{e.where}.nu12", f"expected nu12^2 < E1 / E2 = {v['E1'] / v['E2']:.6g} "
                        f"(a positive definite material), got nu12 = {v['nu12']}")
    return OrthotropicMaterial(v["name"], v["E1"], v["E2"], v["G12"], v["nu12"], v["density"])


def shell_sections(entries: list[Entry], mats: Mapping) -> dict[str, ShellSection]:
    """``[[shell_sections]]``: layers (material, thickness, angle) from the bottom to the top."""
    out = {}
    for name, e in unique(entries, "shell section").items():
        layers = []
        for j, raw in enumerate(e.values["layers"]):
            where = f"{e.where}.layers[{j}]"
            ly = take(raw, LAYER_KEYS, where)
            mat = lookup(mats, ly["material"], "material", f"{where}.material")
            if isinstance(mat, Material) and not -1.0 < mat.nu < 0.5:
                raise DeckError(f"{where}.material", f"a shell layer needs a Poisson's ratio in "
                                f"(-1, 0.5), got material '{mat.name}' with nu = E/(2G) - 1 = "
                                f"{mat.nu:.6g}")
            layers.append(Layer(mat, ly["thickness"], ly["angle"]))
        out[name] = ShellSection(name, tuple(layers))
    return out


SECTION_KEYS = {"general": {"A", "Iy", "Iz", "J", "Ay", "Az"}, "rectangle": {"b", "h"},
                "circle": {"d"}, "tube": {"d", "t"}}
SECTION_PROPERTIES = ("A", "Iy", "Iz", "J", "Ay", "Az")


INERTIA_KEYS = {"mass_per_length", "rotary_inertia_per_length"}


def sections(entries: list[Entry], dim: int = 3) -> dict[str, Section]:
    """``[[sections]]``: general properties or a shape helper, and beam inertia if given."""
    out = {}
    for name, e in unique(entries, "section").items():
        v, shape = e.values, e.values["shape"]
        used = SECTION_KEYS[shape]
        for key in e.given - {"name", "shape"} - used - INERTIA_KEYS:
            raise DeckError(f"{e.where}.{key}", f"not used by shape = \"{shape}\", which "
                            f"takes {', '.join(sorted(used))}")
        for key in used - e.given:
            if shape != "general" or key == "A":
                raise DeckError(f"{e.where}.{key}", f"missing required key '{key}': shape = "
                                f"\"{shape}\" needs {', '.join(sorted(used))}")
        if shape == "general":
            out[name] = Section(name, A=v["A"], Iy=v["Iy"], Iz=v["Iz"], J=v["J"],
                                Ay=v["Ay"] if v["Ay"] is not None else np.inf,
                                Az=v["Az"] if v["Az"] is not None else np.inf,
                                **_section_inertia(e, dim))
            continue
        if shape == "tube" and not 2 * v["t"] < v["d"]:
            raise DeckError(f"{e.where}.t", "expected a wall thickness less than half "
                            f"the diameter d = {v['d']}, got {v['t']} (too thick: the "
                            "wall would pass the centre)")
        f = {k: np.float64(v[k]) for k in used}      # numpy: overflow gives inf, not an error
        with np.errstate(all="ignore"):
            sec = (Section.rectangle(name, f["b"], f["h"]) if shape == "rectangle" else
                   Section.circle(name, f["d"]) if shape == "circle" else
                   Section.tube(name, f["d"], f["t"]))
        for p in SECTION_PROPERTIES:
            val = float(getattr(sec, p))
            if not 0 < val <= MAX_DERIVED:
                given = ", ".join(f"{k} = {v[k]:g}" for k in sorted(used))
                raise DeckError(e.where, f"expected a {shape} whose properties are positive "
                                f"and at most {sci(MAX_DERIVED)} in double precision, got "
                                f"{p} = {val:g} from {given}")
        out[name] = Section(name, **{p: float(getattr(sec, p)) for p in SECTION_PROPERTIES},
                            **_section_inertia(e, dim))
    return out


def _section_inertia(e: Entry, dim: int) -> dict:
    """``rhoA`` and ``rhoI`` of a section that gives its beam inertia directly.

    Papers give rho A and rho I apart from EA and EI (Kane's beam: rho A = 1.2, rho I = 6e-4).
    """
    v = e.values
    out = {"rhoA": v["mass_per_length"]}
    r = v["rotary_inertia_per_length"]
    key = f"{e.where}.rotary_inertia_per_length"
    if r is None:
        return out
    # 3D: rho J the polar rotary inertia per length; 2D beams turn about z only: rho Iz (and
    # the polar one)
    a = axial(r, dim, key, ("rho Iy", "rho Iz", "rho J"), planar="rho Iz")
    rI = (0.0, float(a[2]), float(a[2])) if dim == 2 else tuple(float(x) for x in a)
    if any(x < 0 for x in rI):
        raise DeckError(key, f"expected rotary inertias >= 0, got {shown(r)}")
    out["rhoI"] = rI
    return out


def functions(entries: list[Entry]) -> dict:
    """``[[functions]]``: constant, ramp, table, steady, spin_up."""
    out = {}
    for name, e in unique(entries, "function").items():
        v, kind = e.values, e.values["type"]
        if kind in ("steady", "spin_up") and v["rate"] is None:
            raise DeckError(f"{e.where}.rate", f"missing: a {kind} function needs its final "
                            "rate (e.g. rad/s)")
        if kind not in ("steady", "spin_up") and v["rate"] is not None:
            raise DeckError(f"{e.where}.rate", f"not used by {kind} functions (only steady and "
                            "spin_up)")
        if kind in ("ramp", "spin_up") and not v["t1"] > v["t0"]:
            raise DeckError(f"{e.where}.t1", f"expected a time after t0 = {v['t0']}, got "
                            f"{v['t1']}")
        if kind == "constant":
            out[name] = Constant(v["value"])
        elif kind == "ramp":
            out[name] = Ramp(v["t0"], v["t1"], v["y0"], v["y1"])
        elif kind == "steady":
            out[name] = Steady(v["rate"], v["t0"], v["y0"])
        elif kind == "spin_up":
            out[name] = SpinUp(v["rate"], v["t0"], v["t1"])
        else:
            pts = v["points"]
            if pts is None or len(pts) < 2 or any(len(p) != 2 for p in pts):
                raise DeckError(f"{e.where}.points", "expected at least two [t, value] pairs, "
                                f"got {pts}")
            t = [p[0] for p in pts]
            if any(b <= a for a, b in zip(t, t[1:], strict=False)):
                raise DeckError(f"{e.where}.points", f"expected increasing times, got {t}")
            out[name] = Table(tuple(t), tuple(float(p[1]) for p in pts))
    return out


def function(funcs: Mapping, name, where: str):
    """A time function by name (``None`` stays ``None``)."""
    return None if name is None else lookup(funcs, name, "function", where)
