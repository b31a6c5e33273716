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

# Step keys that each kind of step uses (others given in the deck are errors).
_COMMON = {"name", "type", "loads", "prescribed"}
_STATIC = _COMMON | {"nonlinear"}
_NEWTON = {"control", "max_iterations", "tolerance"}
STEP_KEYS = {
    ("static", "linear"): _STATIC | {"remove"},
    ("static", "load"): _STATIC | _NEWTON | {"load_factor", "increments", "min_increment",
                                             "max_increment", "remove"},
    ("static", "displacement"): _STATIC | _NEWTON | {"increments", "node", "dof", "target"},
    ("static", "arclength"): _STATIC | _NEWTON | {"arc_length", "max_arc_length", "max_steps",
                                                  "psi", "target_iterations", "stop_load_factor",
                                                  "node", "dof", "target"},
    ("buckling", ""): _COMMON | {"modes", "interior_modes"},
    ("dynamic", ""): _COMMON | {"remove", "integrator", "rho_inf", "time_step", "duration",
                                "output_interval", "velocities", "max_cuts", "max_iterations",
                                "tolerance"},
}


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
            elif shape == "rectangle":
                sec = Section.rectangle(name, v["b"], v["h"])
            elif shape == "circle":
                sec = Section.circle(name, v["d"])
            else:
                if not 2 * v["t"] < v["d"]:
                    raise DeckError(f"{e.where}.t", "expected a wall thickness less than half "
                                    f"the diameter d = {v['d']}, got {v['t']} (too thick: the "
                                    "wall would pass the centre)")
                sec = Section.tube(name, v["d"], v["t"])
            self.secs[name] = sec

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
            path = os.path.join(self.base_dir, v["mesh"])
            if not os.path.isfile(path):
                raise DeckError("nodes.mesh", f"expected a mesh file (relative to the deck), got "
                                f"{v['mesh']!r}: there is no file {path}")
            try:
                self.mesh = meshio_reader.read(path)
            except ValueError as err:
                raise DeckError("nodes.mesh", f"cannot use the mesh file {v['mesh']!r}: "
                                f"{err}") from None
            X = self.mesh.points
            off = np.flatnonzero(np.abs(X[:, 2]) > 0)
            if self.dim == 2 and len(off):
                raise DeckError("nodes.mesh", "expected z = 0 at every node of a 2D model "
                                f"(model.dim = 2), got z = {X[off[0], 2]:g} at mesh node "
                                f"{off[0] + 1}")
            ids = np.arange(1, len(X) + 1)
            self.node_sets.update(self.mesh.node_sets)
        else:
            rows = v["coordinates"]
            for i, r in enumerate(rows):
                if len(r) != self.dim:
                    raise DeckError(f"nodes.coordinates[{i}]", f"expected {self.dim} coordinates "
                                    f"(model.dim = {self.dim}), got {len(r)}: {r}")
            X = np.zeros((len(rows), 3))
            X[:, :self.dim] = np.array(rows, dtype=float).reshape(len(rows), self.dim)
            if v["ids"] is None:
                ids = np.arange(1, len(rows) + 1)
            else:
                ids = np.array(v["ids"])
                if len(ids) != len(rows) or np.any(ids != np.round(ids)):
                    raise DeckError("nodes.ids", f"expected {len(rows)} integer ids, one per "
                                    f"coordinate row, got {len(ids)} values {v['ids']}")
                ids = ids.astype(np.int64)
                uniq, counts = np.unique(ids, return_counts=True)
                if np.any(counts > 1):
                    raise DeckError("nodes.ids", f"duplicate node id {uniq[counts > 1][0]}")
        if len(X) == 0:
            raise DeckError("nodes", "expected at least one node, got none")
        self.X = [row for row in X]
        self.ids = list(int(i) for i in ids)
        self.index = {nid: k for k, nid in enumerate(self.ids)}

    def known_ids(self) -> str:
        """The node ids of the model, briefly: ``"1 to 12"`` or ``"1, 2, 5, 7, ..."``."""
        ids = sorted(self.ids)
        if ids == list(range(ids[0], ids[0] + len(ids))):
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
        out = []
        for nid in ids:
            if nid not in self.index:
                raise DeckError(where, f"unknown node {nid}: no node has this id; the node ids "
                                f"are {self.known_ids()}")
            out.append(self.index[nid])
        return np.array(out, dtype=np.int64)

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
    def model(self) -> Model:
        """The immutable model; checks that loads act on DOFs that exist."""
        X = np.array(self.X)
        m = Model(dim=self.dim, X=X, node_ids=np.array(self.ids), groups=tuple(self.groups),
                  node_sets=self.node_sets, materials=self.mats, sections=self.secs,
                  fixed=self.fixed if self.fixed.shape[0] == len(X) else
                  np.vstack([self.fixed, np.zeros((len(X) - len(self.fixed), len(self.slots)),
                                                  dtype=bool)]),
                  prescribed=tuple(self.prescribed_items), loads=tuple(self.load_items),
                  masses=tuple(getattr(self, "mass_items", ())),
                  functions=self.funcs, title=self.title, units=self.units)
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

    def steps(self, entries: list[Entry], model: Model) -> list[dict]:
        """``[[steps]]``: validated step descriptions with resolved loads."""
        from fem.io.build_steps import build_step

        if not entries:
            raise DeckError("steps", "the deck has no [[steps]]: nothing to run")
        _unique(entries, "step")
        self.applied: set[str] = set()       # loads applied by the steps built so far
        return [build_step(self, e, model) for e in entries]
