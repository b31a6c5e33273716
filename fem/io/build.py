"""Build a :class:`~fem.model.Model` from validated deck tables, checking every reference.

Called by :mod:`fem.io.deck` in dependency order (materials, sections, nodes, sets, functions,
elements, supports, prescribed values, loads, steps). Each method receives :class:`Entry` objects
(the deck key, the validated values and the keys actually written) and raises
:class:`~fem.errors.DeckError` at the first mistake.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from fem.errors import DeckError, did_you_mean
from fem.functions import Constant, Ramp, Table
from fem.io import mesh as meshio_reader
from fem.io.schema import (
    MAX_DERIVED,
    MAX_MAGNITUDE,
    MAX_NODE_ID,
    MIN_MAGNITUDE,
    NAME_RULE,
    check_name,
    sci,
    shown,
    valid_name,
)
from fem.model import DOF_SLOTS, Material, Model, NodalLoad, Prescribed, Section


@dataclass(frozen=True)
class Entry:
    """One table of an array of tables: its key, validated values and the keys given."""

    where: str
    values: dict
    given: frozenset


def _unique(entries: list[Entry], what: str) -> dict[str, Entry]:
    out = {}
    for e in entries:
        name = e.values["name"]
        if name in out:
            raise DeckError(f"{e.where}.name", f"duplicate {what} name '{name}' (first defined "
                            f"at {out[name].where})")
        out[name] = e
    return out


def _lookup(table: dict, name: str, what: str, where: str):
    if name not in table:
        known = ", ".join(sorted(table)) or "none defined"
        raise DeckError(where, f"unknown {what} '{name}'{did_you_mean(name, table)}; "
                        f"known: {known}")
    return table[name]


SECTION_KEYS = {"general": {"A", "Iy", "Iz", "J", "Ay", "Az"}, "rectangle": {"b", "h"},
                "circle": {"d"}, "tube": {"d", "t"}}

class ModelBuilder:
    """Accumulates the parts of a model while validating them."""

    def __init__(self, model_t: dict, base_dir: str):
        self.dim = model_t["dim"]
        self.title, self.units = model_t["title"], model_t["units"]
        self.base_dir = base_dir
        self.slots = DOF_SLOTS[self.dim]
        self.mats: dict[str, Material] = {}
        self.secs: dict[str, Section] = {}
        self.funcs: dict = {}
        self.groups: list = []
        self.mesh = None
        self.inputs: list[str] = []          # files the deck reads (a run must not write them)

    # --- materials and sections ---------------------------------------------------------------
    def materials(self, entries: list[Entry]) -> None:
        """``[[materials]]``: E and one of nu or G."""
        for name, e in _unique(entries, "material").items():
            v = e.values
            if (v["nu"] is None) == (v["G"] is None):
                got = "both" if v["nu"] is not None else "neither"
                raise DeckError(e.where, f"expected exactly one of nu and G, got {got}")
            if v["nu"] is not None and not -1 < v["nu"] < 0.5:
                raise DeckError(f"{e.where}.nu", f"expected a Poisson's ratio in (-1, 0.5), got "
                                f"{v['nu']}")
            G = v["G"] if v["G"] is not None else v["E"] / (2 * (1 + v["nu"]))
            self.mats[name] = Material(name, v["E"], G, v["density"])

    def sections(self, entries: list[Entry]) -> None:
        """``[[sections]]``: general properties or a shape helper."""
        for name, e in _unique(entries, "section").items():
            v, shape = e.values, e.values["shape"]
            used = SECTION_KEYS[shape]
            for key in e.given - {"name", "shape"} - used:
                raise DeckError(f"{e.where}.{key}", f"not used by shape = \"{shape}\", which "
                                f"takes {', '.join(sorted(used))}")
            for key in used - e.given:
                if shape != "general" or key == "A":
                    raise DeckError(f"{e.where}.{key}", f"missing required key '{key}': shape = "
                                    f"\"{shape}\" needs {', '.join(sorted(used))}")
            if shape == "general":
                inf = np.inf
                sec = Section(name, A=v["A"], Iy=v["Iy"], Iz=v["Iz"], J=v["J"],
                              Ay=v["Ay"] if v["Ay"] is not None else inf,
                              Az=v["Az"] if v["Az"] is not None else inf)
                self.secs[name] = sec
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
            for p in ("A", "Iy", "Iz", "J", "Ay", "Az"):
                val = float(getattr(sec, p))
                if not 0 < val <= MAX_DERIVED:
                    given = ", ".join(f"{k} = {v[k]:g}" for k in sorted(used))
                    raise DeckError(e.where, f"expected a {shape} whose properties are positive "
                                    f"and at most {sci(MAX_DERIVED)} in double precision, got "
                                    f"{p} = {val:g} from {given}")
            self.secs[name] = Section(name, **{p: float(getattr(sec, p)) for p in
                                               ("A", "Iy", "Iz", "J", "Ay", "Az")})

    # --- nodes and sets -----------------------------------------------------------------------
    def nodes(self, v: dict) -> None:
        """``[nodes]``: inline coordinates or a mesh file."""
        if (v["coordinates"] is None) == (v["mesh"] is None):
            got = "both" if v["mesh"] is not None else "neither"
            raise DeckError("nodes", f"expected exactly one of coordinates and mesh, got {got}")
        self.node_sets: dict[str, np.ndarray] = {}
        if v["mesh"] is not None:
            if v["ids"] is not None:
                raise DeckError("nodes.ids", "not used with a mesh (mesh node ids are 1..n in "
                                "file order)")
            X, ids = self._mesh_nodes(v["mesh"])
        else:
            rows = v["coordinates"]
            for i, r in enumerate(rows):
                if len(r) != self.dim:
                    raise DeckError(f"nodes.coordinates[{i}]", f"expected {self.dim} coordinates "
                                    f"(model.dim = {self.dim}), got {len(r)}: {shown(r)}")
            X = np.zeros((len(rows), 3))
            X[:, :self.dim] = np.array(rows, dtype=float).reshape(len(rows), self.dim)
            if v["ids"] is None:
                ids = np.arange(1, len(rows) + 1)
            else:
                ids = np.array(v["ids"], dtype=float)
                if len(ids) != len(rows):
                    raise DeckError("nodes.ids", f"expected {len(rows)} integer ids, one per "
                                    f"coordinate row, got {len(ids)} values {shown(v['ids'])}")
                bad = np.flatnonzero((ids != np.round(ids)) | (np.abs(ids) > MAX_NODE_ID))
                if len(bad):
                    raise DeckError(f"nodes.ids[{bad[0]}]", "expected an integer node id of "
                                    f"magnitude at most {sci(MAX_NODE_ID)}, got "
                                    f"{shown(v['ids'][bad[0]])}")
                ids = ids.astype(np.int64)
                uniq, counts = np.unique(ids, return_counts=True)
                if np.any(counts > 1):
                    raise DeckError("nodes.ids", f"duplicate node id {uniq[counts > 1][0]}")
        if len(X) == 0:
            raise DeckError("nodes", "expected at least one node, got none")
        self.X = X
        self.ids = np.asarray(ids, dtype=np.int64)
        self.origin = np.full((len(X), 4), -1, dtype=np.int64)
        self._order = None

    def _mesh_nodes(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """Coordinates and ids of a mesh file's nodes; its named groups become node sets."""
        path = os.path.join(self.base_dir, name)
        if not os.path.isfile(path):
            raise DeckError("nodes.mesh", f"expected a mesh file (relative to the deck), got "
                            f"{name!r}: there is no file {path}")
        self.inputs.append(os.path.abspath(path))
        try:
            self.mesh = meshio_reader.read(path)
        except ValueError as err:
            raise DeckError("nodes.mesh", f"cannot use the mesh file {name!r}: {err}") from None
        X = self.mesh.points
        with np.errstate(invalid="ignore"):
            size = np.abs(X)
            bad = ~np.isfinite(X) | (size > MAX_MAGNITUDE) | ((size < MIN_MAGNITUDE) & (X != 0))
        if np.any(bad):
            k, c = (int(x) for x in np.argwhere(bad)[0])
            raise DeckError("nodes.mesh", f"expected finite coordinates, 0 or of magnitude from "
                            f"{sci(MIN_MAGNITUDE)} to {sci(MAX_MAGNITUDE)}, got {'xyz'[c]} = "
                            f"{float(X[k, c])!r} at mesh node {k + 1} of {name!r}")
        off = np.flatnonzero(np.abs(X[:, 2]) > 0)
        if self.dim == 2 and len(off):
            raise DeckError("nodes.mesh", "expected z = 0 at every node of a 2D model "
                            f"(model.dim = 2), got z = {X[off[0], 2]:g} at mesh node "
                            f"{off[0] + 1}")
        for group in self.mesh.node_sets:
            if not valid_name(group):
                raise DeckError("nodes.mesh", f"the mesh group {shown(group)} of {name!r} "
                                f"becomes a node set, whose name must be {NAME_RULE}; rename "
                                "the group in the mesh file")
        self.node_sets.update(self.mesh.node_sets)
        return X, np.arange(1, len(X) + 1)

    def add_nodes(self, X: np.ndarray, origin: np.ndarray) -> np.ndarray:
        """Append nodes ``X (m, 3)`` with ids after the largest; returns their indices.

        ``origin (m, 4)`` says where each was made: the ids of the two end nodes of the row it
        subdivides, its position ``k`` (1 to ``n - 1``) from the first, and ``n``.
        """
        first = len(self.X)
        start = int(self.ids.max()) + 1
        self.X = np.concatenate([self.X, X])
        self.ids = np.concatenate([self.ids, np.arange(start, start + len(X), dtype=np.int64)])
        self.origin = np.concatenate([self.origin, origin])
        self._order = None
        return np.arange(first, first + len(X))

    def lookup(self, ids) -> np.ndarray:
        """Indices of node ``ids`` (an integer array), ``-1`` where no node has the id."""
        if self._order is None:
            self._order = np.argsort(self.ids, kind="stable")
        ids = np.asarray(ids, dtype=np.int64)
        sorted_ids = self.ids[self._order]
        pos = np.clip(np.searchsorted(sorted_ids, ids), 0, len(sorted_ids) - 1)
        found = sorted_ids[pos] == ids
        return np.where(found, self._order[pos], -1)

    def known_ids(self) -> str:
        """The node ids of the model, briefly: ``"1 to 12"`` or ``"1, 2, 5, 7, ..."``."""
        ids = np.sort(self.ids)
        if ids[-1] - ids[0] == len(ids) - 1:
            text = f"{ids[0]} to {ids[-1]}" if len(ids) > 1 else f"{ids[0]}"
        else:
            text = ", ".join(str(i) for i in ids[:8]) + (", ..." if len(ids) > 8 else "")
        return text + (" (the mesh file's nodes, numbered in file order)" if self.mesh else "")

    def node_indices(self, ref, where: str) -> np.ndarray:
        """Indices of a node reference: an id, a list of ids or a set name."""
        if isinstance(ref, str):
            return _lookup(self.node_sets, ref, "node set", where)
        ids = [ref] if isinstance(ref, int) else ref
        if not ids:
            raise DeckError(where, "expected a node id, a non-empty list of node ids or a node-set "
                            "name, got an empty list")
        arr = np.asarray(ids, dtype=np.int64)
        out = np.where(np.abs(arr) <= MAX_NODE_ID, self.lookup(arr), -1)
        missing = np.flatnonzero(out < 0)
        if len(missing):
            raise DeckError(where, f"unknown node {ids[missing[0]]}: no node has this id; the "
                            f"node ids are {self.known_ids()}")
        return out.astype(np.int64)

    def sets(self, table) -> None:
        """``[sets]``: ``name = [node ids]``."""
        from fem.io.schema import misplaced_hint, shown, type_name

        if not isinstance(table, dict):
            raise DeckError("sets", "expected a table ([sets] followed by name = [node ids] "
                            f"lines), got {type_name(table)} {shown(table)}")
        for name, ids in table.items():
            if not (isinstance(ids, list) and ids and all(
                    isinstance(i, int) and not isinstance(i, bool) for i in ids)):
                raise DeckError(f"sets.{name}", "expected a non-empty list of node ids, got "
                                f"{type_name(ids)} {shown(ids)}" + misplaced_hint(name, "[sets]"))
            check_name(name, f"sets.{name}", "a set name")
            self.node_sets[name] = self.node_indices(ids, f"sets.{name}")

    # --- functions ----------------------------------------------------------------------------
    def functions(self, entries: list[Entry]) -> None:
        """``[[functions]]``: constant, ramp, table."""
        for name, e in _unique(entries, "function").items():
            v = e.values
            if v["type"] == "constant":
                self.funcs[name] = Constant(v["value"])
            elif v["type"] == "ramp":
                if not v["t1"] > v["t0"]:
                    raise DeckError(f"{e.where}.t1", f"expected a time after t0 = {v['t0']}, got "
                                    f"{v['t1']}")
                self.funcs[name] = Ramp(v["t0"], v["t1"], v["y0"], v["y1"])
            else:
                pts = v["points"]
                if pts is None or len(pts) < 2 or any(len(p) != 2 for p in pts):
                    raise DeckError(f"{e.where}.points", "expected at least two [t, value] pairs, "
                                    f"got {pts}")
                t = [p[0] for p in pts]
                if any(b <= a for a, b in zip(t, t[1:])):
                    raise DeckError(f"{e.where}.points", f"expected increasing times, got {t}")
                self.funcs[name] = Table(tuple(t), tuple(float(p[1]) for p in pts))

    def function(self, name, where):
        """A time function by name (``None`` stays ``None``)."""
        return None if name is None else _lookup(self.funcs, name, "function", where)

    # --- elements -----------------------------------------------------------------------------
    def elements(self, entries: list[Entry]) -> None:
        """``[[elements]]``: groups of trusses and beams."""
        from fem.io.build_elements import build_group

        for _, e in _unique(entries, "element group").items():
            self.groups.append(build_group(self, e))

    # --- springs, point masses, velocity fields (fem/io/build_inertia.py) ----------------------
    def springs(self, entries: list[Entry]) -> None:
        """``[[springs]]``: grounded springs, one element group each."""
        from fem.io.build_inertia import springs

        springs(self, entries)

    def masses(self, entries: list[Entry]) -> None:
        """``[[masses]]``: point masses and rotary inertias."""
        from fem.io.build_inertia import masses

        self.mass_items = masses(self, entries)

    def velocities(self, entries: list[Entry]) -> None:
        """``[[velocities]]``: initial velocity fields."""
        from fem.io.build_inertia import velocities

        self.velocity_fields = velocities(self, entries)

    # --- supports, prescribed values and loads ------------------------------------------------
    def _slot(self, name: str, where: str) -> int:
        if name not in self.slots:
            raise DeckError(where, f"expected one of {', '.join(self.slots)} "
                            f"(model.dim = {self.dim}), got '{name}'"
                            + did_you_mean(name, self.slots))
        return self.slots.index(name)

    def supports(self, entries: list[Entry]) -> None:
        """``[[supports]]``: fixed DOFs of nodes."""
        fixed = np.zeros((len(self.X), len(self.slots)), dtype=bool)
        for e in entries:
            nodes = self.node_indices(e.values["nodes"], f"{e.where}.nodes")
            names = e.values["fixed"]
            cols = (list(range(len(self.slots))) if names == ["all"] else
                    [self._slot(n, f"{e.where}.fixed") for n in names])
            fixed[np.ix_(nodes, cols)] = True
        self.fixed = fixed

    def prescribed(self, entries: list[Entry]) -> None:
        """``[[prescribed]]``: prescribed DOF values."""
        self.prescribed_items = []
        self.prescribed_entries = {}
        for name, e in _unique(entries, "prescribed value").items():
            self.prescribed_entries[name] = e
            v = e.values
            self.prescribed_items.append(Prescribed(
                name, self.node_indices(v["nodes"], f"{e.where}.nodes"),
                self._slot(v["dof"], f"{e.where}.dof"), v["value"],
                self.function(v["function"], f"{e.where}.function")))

    def loads(self, entries: list[Entry]) -> None:
        """``[[loads]]``: nodal forces and moments."""
        self.load_items = []
        d = self.dim
        for name, e in _unique(entries, "load").items():
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
            self.load_items.append(NodalLoad(
                name, self.node_indices(v["nodes"], f"{e.where}.nodes"), force, moment, v["kind"],
                self.function(v["function"], f"{e.where}.function")))
        self.load_entries = {ld.name: e for ld, e in zip(self.load_items, entries, strict=True)}

    # --- the model ----------------------------------------------------------------------------
    def ties(self, entries: list[Entry]) -> None:
        """``[[ties]]``: pins between coincident nodes (fem/io/build_constraints.py)."""
        from fem.io.build_constraints import ties

        self.constraints = ties(self, entries)

    def model(self) -> Model:
        """The immutable model; checks that loads act on DOFs that exist."""
        X = self.X
        m = Model(dim=self.dim, X=X, node_ids=self.ids.copy(), groups=tuple(self.groups),
                  node_sets=self.node_sets, materials=self.mats, sections=self.secs,
                  fixed=self.fixed if self.fixed.shape[0] == len(X) else
                  np.vstack([self.fixed, np.zeros((len(X) - len(self.fixed), len(self.slots)),
                                                  dtype=bool)]),
                  prescribed=tuple(self.prescribed_items), loads=tuple(self.load_items),
                  masses=tuple(getattr(self, "mass_items", ())),
                  constraints=tuple(getattr(self, "constraints", ())),
                  functions=self.funcs, title=self.title, units=self.units,
                  node_origin=self.origin if np.any(self.origin >= 0) else None)
        from fem.dofs import DofMap

        active = DofMap.build(m).active
        rot = slice(2, 3) if self.dim == 2 else slice(3, 6)
        for ld in m.loads:
            e = self.load_entries[ld.name]
            loose = ~np.any(active[ld.nodes], axis=1)
            if np.any(loose):
                raise DeckError(f"{e.where}.nodes", f"expected nodes of elements, got node "
                                f"{self.ids[ld.nodes[loose][0]]}, which no element connects to")
            needs_rot = np.any(ld.moment) or ld.kind == "follower"
            if needs_rot and not np.all(active[ld.nodes, rot]):
                bad = ld.nodes[~np.all(active[ld.nodes, rot], axis=1)][0]
                key = "moment" if np.any(ld.moment) else "kind"
                what = "a moment" if np.any(ld.moment) else "a follower force"
                raise DeckError(f"{e.where}.{key}", f"{what} needs rotational DOFs at its "
                                f"nodes, but node {self.ids[bad]} has none: only trusses "
                                "connect to it; connect a beam there or apply forces instead")
        for p in m.prescribed:
            e = self.prescribed_entries[p.name]
            off = ~active[p.nodes, p.slot]
            if np.any(off):
                raise DeckError(f"{e.where}.dof", f"node {self.ids[p.nodes[off][0]]} has no DOF "
                                f"{self.slots[p.slot]}: no element using it connects to the node"
                                + (" (trusses have no rotations)" if p.slot >= self.dim else ""))
        return m

    def steps(self, entries: list[Entry], model: Model, every: int = 1) -> list[dict]:
        """``[[steps]]``: validated step descriptions with resolved loads.

        ``every`` is ``[output] every``, for the number of frames a dynamic step writes.
        """
        from fem.analysis.base import options_prefix
        from fem.io.build_steps import build_step

        if not entries:
            raise DeckError("steps", "the deck has no [[steps]]: nothing to run")
        _unique(entries, "step")
        prefixes: dict[str, Entry] = {}
        for e in entries:
            prefix = options_prefix(e.values["name"])
            if prefix.lower() in prefixes:
                first = prefixes[prefix.lower()]
                raise DeckError(f"{e.where}.name", f"step name '{e.values['name']}' gives the "
                                f"same PETSc options prefix, {prefix}, as '{first.values['name']}' "
                                f"({first.where}): PETSc options and result files would mix; "
                                "rename one")
            prefixes[prefix.lower()] = e
        self.applied: set[str] = set()       # loads applied by the steps built so far
        self.output_every = every
        return [build_step(self, e, model) for e in entries]
