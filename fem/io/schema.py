"""The deck schema: every table, key, type, default and meaning, in one place.

:func:`take` validates one deck table against its schema (unknown keys with a "did you mean",
types, ranges, choices) and :func:`reference_markdown` renders the schema as the README's deck
reference, so that the two never disagree (a test compares them).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from fem.errors import DeckError, did_you_mean

REQUIRED = object()


@dataclass(frozen=True)
class Key:
    """One deck key.

    ``kind`` is one of ``str``, ``int``, ``float``, ``bool``, ``vector`` (list of numbers),
    ``matrix`` (list of lists of numbers), ``nodes`` (node id, list of ids or set name),
    ``names`` (list of strings), ``table`` (inline table), ``number_or_vector``.
    """

    name: str
    kind: str
    default: Any = None
    doc: str = ""
    choices: tuple[str, ...] = ()
    positive: bool = False
    nonnegative: bool = False

    @property
    def required(self) -> bool:
        """Whether the key must be given."""
        return self.default is REQUIRED


def type_name(v) -> str:
    """``"a string"``, ``"a list"``, ...: the TOML type of ``v``, for messages."""
    return {bool: "a boolean", int: "an integer", float: "a number", str: "a string",
            list: "a list", dict: "a table"}.get(type(v), type(v).__name__)


def _is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


EXPECTED = {
    "str": "a string", "int": "an integer", "float": "a number", "bool": "true or false",
    "vector": "a list of numbers", "matrix": "a list of lists of numbers",
    "nodes": "a node id, a list of node ids or a node-set name",
    "names": "a list of names", "table": "a table", "number_or_vector": "a number or a list",
}


def shown(value, limit: int = 60) -> str:
    """``repr(value)``, shortened to about ``limit`` characters for messages."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 4] + " ..."


def _check(key: Key, value, where: str):
    k = key.kind
    expected = EXPECTED[k]
    hint = ""
    if k == "names" and isinstance(value, str):
        hint = f" (write [{value!r}])"
    bad = DeckError(where, f"expected {expected}, got {type_name(value)} {shown(value)}{hint}")
    if k == "str" and not isinstance(value, str):
        raise bad
    if k == "int" and (not isinstance(value, int) or isinstance(value, bool)):
        raise bad
    if k == "float":
        if not _is_number(value):
            raise bad
        value = float(value)
        if not math.isfinite(value):
            raise DeckError(where, f"expected a finite number, got {value!r}")
    if k == "bool" and not isinstance(value, bool):
        raise bad
    if k == "vector" and not (isinstance(value, list) and all(_is_number(x) for x in value)):
        raise bad
    if k == "matrix" and not (isinstance(value, list) and all(
            isinstance(r, list) and all(_is_number(x) for x in r) for r in value)):
        raise bad
    if k == "nodes" and not (isinstance(value, str) or (isinstance(value, int)
                                                        and not isinstance(value, bool))
                             or (isinstance(value, list) and all(
                                 isinstance(x, int) and not isinstance(x, bool) for x in value))):
        raise bad
    if k == "names" and not (isinstance(value, list) and all(isinstance(x, str) for x in value)):
        raise bad
    if k == "table" and not isinstance(value, dict):
        raise bad
    if k == "number_or_vector" and not (_is_number(value) or (
            isinstance(value, list) and all(_is_number(x) for x in value))):
        raise bad
    if key.choices and value not in key.choices:
        raise DeckError(where, f"expected one of {', '.join(key.choices)}, got {value!r}"
                        + did_you_mean(str(value), key.choices))
    noun = "integer" if k == "int" else "number"
    if key.positive and _is_number(value) and not value > 0:
        raise DeckError(where, f"expected a positive {noun}, got {value!r}")
    if key.nonnegative and _is_number(value) and not value >= 0:
        raise DeckError(where, f"expected a {noun} >= 0, got {value!r}")
    return value


def table_header(name: str) -> str:
    """``[name]`` or ``[[name]]``, as the deck writes the top-level table ``name``."""
    return f"[[{name}]]" if name in ARRAYS else f"[{name}]"


def misplaced_hint(name: str, where: str) -> str:
    """A hint when ``name``, found inside table ``where``, is really a top-level table."""
    if name not in TOP:
        return ""
    return (f"; {table_header(name)} is a table of its own, but here '{name}' follows the "
            f"header of {where} and so belongs to it: write {table_header(name)} on its own "
            "line, or move it above the first table header")


def unknown_key(name: str, known, where: str) -> DeckError:
    """The error for key ``name`` of table ``where`` that is not among ``known``."""
    hint = did_you_mean(name, known) or misplaced_hint(name, where)
    if not hint:
        hint = f"; {where} takes: {', '.join(known)}"
    return DeckError(f"{where}.{name}", "unknown key" + hint)


def take(table: Any, keys: list[Key], where: str) -> dict[str, Any]:
    """Validate ``table`` (a dict from the deck) against ``keys``; return values with defaults."""
    if not isinstance(table, dict):
        raise DeckError(where, f"expected a table (a {table_header(where)} header followed by "
                        f"its keys), got {type_name(table)} {shown(table)}")
    known = {k.name: k for k in keys}
    for name in table:
        if name not in known:
            raise unknown_key(name, known, where)
    out = {}
    for key in keys:
        if key.name in table:
            out[key.name] = _check(key, table[key.name], f"{where}.{key.name}")
        elif key.required:
            raise DeckError(f"{where}.{key.name}", f"missing required key '{key.name}': expected "
                            f"{EXPECTED[key.kind]}" + (f" ({key.doc})" if key.doc else ""))
        else:
            out[key.name] = key.default
    return out


# --- the schema ---------------------------------------------------------------------------------

TOP = {
    "model": "title, dimension and units",
    "materials": "linear elastic materials (array of tables)",
    "sections": "cross-sections (array of tables)",
    "nodes": "node coordinates, inline or from a mesh file",
    "sets": "named node sets: `name = [ids]`",
    "elements": "element groups (array of tables)",
    "springs": "grounded linear springs on one DOF (array of tables)",
    "masses": "point masses and rotary inertias (array of tables)",
    "supports": "fixed DOFs (array of tables)",
    "prescribed": "prescribed DOF values (array of tables)",
    "functions": "time functions for loads and prescribed values (array of tables)",
    "loads": "nodal forces and moments (array of tables)",
    "velocities": "initial velocity fields for dynamic steps (array of tables)",
    "steps": "the analysis steps, run in order (array of tables)",
    "output": "what is written to the results file",
    "solver": "linear-solver options",
}

LOAD_KINDS = ("dead", "follower", "semitangential")

SCHEMA: dict[str, list[Key]] = {
    "model": [
        Key("dim", "int", REQUIRED, "2 (x-y plane; DOFs ux, uy, rz) or 3", choices=()),
        Key("title", "str", "", "free text"),
        Key("units", "str", "", "the units of the deck, e.g. \"N, mm, s\" (never assumed)"),
    ],
    "materials": [
        Key("name", "str", REQUIRED, "name used by elements"),
        Key("E", "float", REQUIRED, "Young's modulus", positive=True),
        Key("nu", "float", None, "Poisson's ratio (give nu or G)"),
        Key("G", "float", None, "shear modulus (give nu or G)", positive=True),
        Key("density", "float", 0.0, "mass per unit volume", nonnegative=True),
    ],
    "sections": [
        Key("name", "str", REQUIRED, "name used by elements"),
        Key("shape", "str", "general", "general, rectangle, circle or tube",
            choices=("general", "rectangle", "circle", "tube")),
        Key("A", "float", None, "area (general)", positive=True),
        Key("Iy", "float", 0.0, "second moment about local y, bending in x-z (general)",
            nonnegative=True),
        Key("Iz", "float", 0.0, "second moment about local z, bending in x-y (general)",
            nonnegative=True),
        Key("J", "float", 0.0, "torsion constant (general)", nonnegative=True),
        Key("Ay", "float", None, "shear area along local y (Timoshenko)", positive=True),
        Key("Az", "float", None, "shear area along local z (Timoshenko)", positive=True),
        Key("b", "float", None, "rectangle width, along local z", positive=True),
        Key("h", "float", None, "rectangle depth, along local y", positive=True),
        Key("d", "float", None, "circle or tube outer diameter", positive=True),
        Key("t", "float", None, "tube wall thickness", positive=True),
    ],
    "nodes": [
        Key("coordinates", "matrix", None, "`[[x, y], ...]` (2D) or `[[x, y, z], ...]` (3D)"),
        Key("ids", "vector", None, "node ids, default 1..n"),
        Key("mesh", "str", None, "mesh file read by meshio (Gmsh .msh 2.2 or 4.1, Abaqus .inp, "
            "...), relative to the deck; its node ids are 1..n in file order; its named physical "
            "groups (Gmsh) or sets (Abaqus *NSET/*ELSET) become node sets, and those with 2-node "
            "line cells can be element groups (`mesh_group`)"),
    ],
    "elements": [
        Key("name", "str", REQUIRED, "group name (also an element set)"),
        Key("type", "str", REQUIRED, "truss or beam", choices=("truss", "beam")),
        Key("material", "str", REQUIRED, "material name"),
        Key("section", "str", REQUIRED, "section name"),
        Key("connectivity", "matrix", None, "`[[node_id, node_id], ...]`"),
        Key("mesh_group", "str", None, "line cells of this mesh physical group / element set"),
        Key("divisions", "int", 1, "split each connectivity row into this many equal elements",
            positive=True),
        Key("formulation", "str", "linear", "linear or corotational",
            choices=("linear", "corotational")),
        Key("theory", "str", "euler-bernoulli", "beams: euler-bernoulli or timoshenko",
            choices=("euler-bernoulli", "timoshenko")),
        Key("strain", "str", "engineering", "co-rotational trusses: engineering or green",
            choices=("engineering", "green")),
        Key("orientation", "vector", None, "3D beams: approximate local y axis (made normal to "
            "the member); default: global Z x member axis, or global Y for members along Z"),
        Key("orientation_node", "int", None, "3D beams: a node lying in each element's local x-y "
            "plane, on the side of local +y (instead of orientation)"),
        Key("rotary_inertia", "bool", True, "beams: include the rotary inertia in the mass"),
    ],
    "springs": [
        Key("name", "str", REQUIRED, "group name"),
        Key("nodes", "nodes", REQUIRED, "node id, list of ids or node-set name"),
        Key("dof", "str", REQUIRED, "the DOF tied to the ground: ux, uy, uz (or rz in 2D)"),
        Key("stiffness", "float", REQUIRED, "spring constant", positive=True),
    ],
    "masses": [
        Key("nodes", "nodes", REQUIRED, "node id, list of ids or node-set name"),
        Key("mass", "float", 0.0, "translational mass per node", nonnegative=True),
        Key("inertia", "number_or_vector", None, "rotary inertia per node: a number (2D, about "
            "z), [Ixx, Iyy, Izz] or [[...], [...], [...]] (3D, global axes)"),
    ],
    "supports": [
        Key("nodes", "nodes", REQUIRED, "node id, list of ids or node-set name"),
        Key("fixed", "names", REQUIRED, "DOF names (ux, uy, uz, rx, ry, rz) or [\"all\"]"),
    ],
    "prescribed": [
        Key("name", "str", REQUIRED, "name used by steps"),
        Key("nodes", "nodes", REQUIRED, "node id, list of ids or node-set name"),
        Key("dof", "str", REQUIRED, "ux, uy, uz, rx, ry or rz"),
        Key("value", "float", REQUIRED, "target value"),
        Key("function", "str", None, "time function name; default: ramp from the value at the "
            "step start (static), at once (dynamic)"),
    ],
    "functions": [
        Key("name", "str", REQUIRED, "name used by loads"),
        Key("type", "str", REQUIRED, "constant, ramp or table", choices=("constant", "ramp",
                                                                         "table")),
        Key("value", "float", 1.0, "constant: the value"),
        Key("t0", "float", 0.0, "ramp: start time"),
        Key("t1", "float", 1.0, "ramp: end time"),
        Key("y0", "float", 0.0, "ramp: value at t0 (and before)"),
        Key("y1", "float", 1.0, "ramp: value at t1 (and after)"),
        Key("points", "matrix", None, "table: `[[t, value], ...]`, times increasing; constant "
            "beyond the ends"),
    ],
    "loads": [
        Key("name", "str", REQUIRED, "name used by steps"),
        Key("nodes", "nodes", REQUIRED, "node id, list of ids or node-set name"),
        Key("force", "vector", None, "`[fx, fy]` (2D) or `[fx, fy, fz]` (3D), per node"),
        Key("moment", "number_or_vector", None, "`mz` (2D) or `[mx, my, mz]` (3D), per node"),
        Key("kind", "str", "dead", "dead (fixed direction; for moments Argyris's axial moment), "
            "follower, or semitangential (moments)", choices=LOAD_KINDS),
        Key("function", "str", None, "time function name; default: ramp with the load factor "
            "(static), constant (dynamic)"),
    ],
    "velocities": [
        Key("name", "str", REQUIRED, "name used by dynamic steps"),
        Key("nodes", "nodes", None, "node id, list of ids or node-set name (default: all)"),
        Key("velocity", "vector", None, "translational velocity [vx, vy(, vz)]"),
        Key("angular_velocity", "number_or_vector", None, "rigid rotation: wz (2D) or [wx, wy, "
            "wz]; adds w x (x - center) and sets the nodal spins"),
        Key("center", "vector", None, "centre of the rigid rotation (default: origin)"),
    ],
    "steps": [
        Key("name", "str", REQUIRED, "step name; also the PETSc options prefix `<name>_`"),
        Key("type", "str", REQUIRED, "static, buckling or dynamic",
            choices=("static", "buckling", "dynamic")),
        Key("loads", "names", None, "loads the step applies, on top of those applied before "
            "(default: the loads no earlier step applied); see Load history"),
        Key("remove", "names", None, "loads applied by earlier steps that this step takes off "
            "(ramped down over a static step)"),
        Key("prescribed", "names", None, "prescribed values active in the step (default: all)"),
        Key("nonlinear", "bool", False, "static: geometrically nonlinear path following"),
        Key("control", "str", "load", "static nonlinear: load, displacement or arclength",
            choices=("load", "displacement", "arclength")),
        Key("load_factor", "float", 1.0, "load control: final load factor"),
        Key("increments", "int", 10, "load/displacement control: initial number of increments",
            positive=True),
        Key("min_increment", "float", None, "load control: smallest increment before giving up",
            positive=True),
        Key("max_increment", "float", None, "load control: largest increment", positive=True),
        Key("max_iterations", "int", 25, "Newton iterations per increment", positive=True),
        Key("tolerance", "float", 1e-9, "relative residual tolerance", positive=True),
        Key("node", "int", None, "displacement control: the controlled node; arclength: the "
            "node watched by target"),
        Key("dof", "str", None, "displacement control / arclength: DOF name of node"),
        Key("target", "float", None, "displacement control: final value of the DOF; arclength: "
            "stop once the DOF passes it"),
        Key("arc_length", "float", None, "arclength: initial arc length", positive=True),
        Key("max_arc_length", "float", None, "arclength: largest arc length (default 10 x the "
            "initial)", positive=True),
        Key("max_steps", "int", 100, "arclength: number of increments", positive=True),
        Key("psi", "float", 0.0, "arclength: load weight, 0 cylindrical, 1 spherical",
            nonnegative=True),
        Key("target_iterations", "int", 5, "arclength: iterations the arc length adapts to",
            positive=True),
        Key("stop_load_factor", "float", None, "arclength: stop when |load factor| reaches it"),
        Key("modes", "int", 4, "buckling: number of buckling modes", positive=True),
        Key("interior_modes", "bool", True, "buckling: add interior (bubble) modes to each beam "
            "for the buckling mode, so that loads converge faster with the mesh; false gives the "
            "eigenvalues of the nodal discretization (see Linear buckling)"),
        Key("integrator", "str", "energy_conserving", "dynamic: energy_conserving, midpoint, "
            "trapezoidal or generalized_alpha", choices=("energy_conserving", "midpoint",
                                                          "trapezoidal", "generalized_alpha")),
        Key("rho_inf", "float", 0.8, "dynamic, generalized_alpha: spectral radius at infinite "
            "frequency, 0 to 1", nonnegative=True),
        Key("time_step", "float", None, "dynamic: time step", positive=True),
        Key("duration", "float", None, "dynamic: length of the step in time", positive=True),
        Key("output_interval", "float", None, "dynamic: time between output frames (default: "
            "every [output] every-th step)", positive=True),
        Key("velocities", "names", None, "dynamic: velocity fields set at the start"),
        Key("max_cuts", "int", 8, "dynamic: halvings of the time step allowed in a row when "
            "Newton fails", nonnegative=True),
    ],
    "output": [
        Key("every", "int", 1, "write every n-th converged increment or time step",
            positive=True),
    ],
    "solver": [
        Key("petsc_options", "table", None, "PETSc options without the step prefix, e.g. "
            "`{ ksp_type = \"gmres\", pc_type = \"ilu\" }`; the command line wins"),
    ],
}

ARRAYS = ("materials", "sections", "elements", "springs", "masses", "supports", "prescribed",
          "functions", "loads", "velocities", "steps")


def reference_markdown() -> str:
    """The deck reference, as Markdown tables (copied verbatim into the README)."""
    lines = []
    for table, doc in TOP.items():
        header = f"[[{table}]]" if table in ARRAYS else f"[{table}]"
        lines.append(f"#### `{header}`: {doc}")
        lines.append("")
        if table == "sets":
            lines.append("Each key is a set name, each value a list of node ids.")
            lines.append("")
            continue
        lines.append("| key | type | default | meaning |")
        lines.append("|---|---|---|---|")
        for k in SCHEMA[table]:
            shown_default = (str(k.default).lower() if isinstance(k.default, bool)
                             else '""' if k.default == "" else k.default)
            default = "required" if k.required else ("" if k.default is None else
                                                     f"`{shown_default}`")
            lines.append(f"| `{k.name}` | {k.kind} | {default} | {k.doc} |")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def update_readme(path: str = "README.md") -> None:
    """Write the deck reference between the README's ``deck-reference`` markers."""
    text = open(path, encoding="utf-8").read()
    start, end = "<!-- deck-reference:start -->", "<!-- deck-reference:end -->"
    head, rest = text.split(start, 1)
    _, tail = rest.split(end, 1)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(f"{head}{start}\n{reference_markdown()}{end}{tail}")


if __name__ == "__main__":
    import sys

    if "--update-readme" in sys.argv:
        update_readme()
    else:
        print(reference_markdown(), end="")
