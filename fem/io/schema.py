"""The deck schema: every table's keys, their types, defaults and meanings; the deck reference.

The keys of the element families' tables (``[[elements]]``, ``[[springs]]``) are declared by the
families themselves (``fem/elements/<family>_deck.py``) and collected here from the registry
(:func:`table_keys`); the other tables' keys are below, the steps' come from their settings
dataclasses (:mod:`fem.analysis.settings`). :func:`fem.io.keys.take` validates one table against
its keys and :func:`reference_markdown` renders them all as the deck reference (``fem
deck-reference``, and the docs' pages docs/deck/<table>.md, written from it at each build), so
that the two never disagree. The machinery (:class:`~fem.io.keys.Key`,
:func:`~fem.io.keys.take`, the bounds) is in :mod:`fem.io.keys`, below the element registry, and
is re-exported here.
"""

from __future__ import annotations

import dataclasses

from fem.analysis import STEP_SETTINGS
from fem.analysis.settings import MAX_FRAMES, MAX_TIME_STEPS, deck_fields
from fem.elements import families
from fem.elements.force.deck import JOINT_FORCE_KEYS
from fem.errors import DeckError, did_you_mean
from fem.io import sensors as sensors_io
from fem.io.keys import (  # noqa: F401 - the machinery, re-exported for callers and tests
    _NAME,
    ARRAYS,
    BYTES_PER_ELEMENT,
    BYTES_PER_NODE,
    EXPECTED,
    FAMILY_TABLES,
    LOAD_FUNCTION,
    MAX_DEPTH,
    MAX_DERIVED,
    MAX_INT,
    MAX_MAGNITUDE,
    MAX_NODE_ID,
    MIN_MAGNITUDE,
    NAME_MAX,
    NAME_RULE,
    NODES,
    REQUIRED,
    SHELL_SECTION_KEYS,
    TOP,
    Key,
    check_name,
    check_number,
    check_values,
    digits,
    misplaced_hint,
    sci,
    shown,
    table_header,
    take,
    type_name,
    unknown_key,
    valid_name,
)

LOAD_KINDS = ("dead", "follower", "semitangential")

SCHEMA: dict[str, list[Key]] = {
    "model": [
        Key("dim", "int", REQUIRED, "2 (x-y plane; DOFs ux, uy, rz) or 3", choices=()),
        Key("title", "str", "", "free text"),
        Key("units", "str", "", "the units of the deck, e.g. \"N, mm, s\" (never assumed)"),
    ],
    "materials": [
        Key("name", "name", REQUIRED, "name used by elements"),
        Key("E", "float", None, "Young's modulus (isotropic: required)", positive=True),
        Key("nu", "float", None, "Poisson's ratio (give nu or G)"),
        Key("G", "float", None, "shear modulus (give nu or G)", positive=True),
        Key("density", "float", 0.0, "mass per unit volume", nonnegative=True),
        Key("type", "str", "isotropic", "isotropic (E with nu or G) or orthotropic (E1, E2, "
            "G12, nu12: plane stress, for shell layers only)",
            choices=("isotropic", "orthotropic")),
        Key("E1", "float", None, "orthotropic: Young's modulus along the material axis 1",
            positive=True),
        Key("E2", "float", None, "orthotropic: Young's modulus along axis 2", positive=True),
        Key("G12", "float", None, "orthotropic: in-plane shear modulus", positive=True),
        Key("nu12", "float", None, "orthotropic: Poisson's ratio, strain along 2 under stress "
            "along 1 (nu21 = nu12 E2 / E1); nu12^2 < E1 / E2"),
    ],
    "shell_sections": SHELL_SECTION_KEYS,
    "sections": [
        Key("name", "name", REQUIRED, "name used by elements"),
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
        Key("mass_per_length", "float", None, "beams and trusses: rho A, the mass per length, "
            "instead of the material's density times A", nonnegative=True),
        Key("rotary_inertia_per_length", "number_or_vector", None, "beams: rotary inertia per "
            "length instead of the density times the section's: rho Iz (2D) or [rho Iy, rho Iz, "
            "rho J] (3D; rho J the polar one); not for trusses, nor for beams with "
            "rotary_inertia = false"),
    ],
    "nodes": [
        Key("coordinates", "matrix", None, "`[[x, y], ...]` (2D) or `[[x, y, z], ...]` (3D)"),
        Key("ids", "vector", None, f"node ids (integers, magnitude at most {sci(MAX_NODE_ID)}), "
            "default 1..n"),
        Key("mesh", "str", None, "mesh file read by meshio (Gmsh .msh 2.2 or 4.1, Abaqus .inp, "
            "...), relative to the deck; its node ids are 1..n in file order; its named physical "
            "groups (Gmsh) or sets (Abaqus *NSET/*ELSET) become node sets, and their cells of an "
            "element family's cell type (2-node lines for trusses and beams) can be element "
            "groups (`mesh_group`)"),
    ],
    "masses": [
        NODES,
        Key("mass", "float", 0.0, "translational mass per node", nonnegative=True),
        Key("inertia", "number_vector_or_matrix", None, "rotary inertia per node: a number (2D, "
            "about z), [Ixx, Iyy, Izz] or [[Ixx, Ixy, Ixz], [Ixy, Iyy, Iyz], [Ixz, Iyz, Izz]] (3D, "
            "global axes; symmetric, positive semi-definite)"),
    ],
    "damping": [
        Key("groups", "groups", None, "element groups this entry damps (a name or a list); "
            "default: the whole model, every structural group (beams, trusses, shells, "
            "springs, rigid bodies; not connectors, contacts or superelements) no other entry "
            "names, and the [[masses]]"),
        Key("alpha", "float", 0.0, "mass-proportional factor (1/s): alpha M, M the mass the "
            "dynamic steps integrate", nonnegative=True),
        Key("beta", "float", 0.0, "stiffness-proportional factor (s): beta K; a mode's damping "
            "ratio is alpha / (2 omega) + beta omega / 2", nonnegative=True),
        Key("stiffness", "str", "tangent", "the K of beta K: tangent (the material tangent at "
            "the current configuration: never gives energy, leaves rigid motions undamped) or "
            "initial (the reference stiffness, constant: also damps large rigid rotations)",
            choices=("tangent", "initial")),
    ],
    "supports": [
        NODES,
        Key("fixed", "names", REQUIRED, "DOF names (ux, uy, uz, rx, ry, rz) or [\"all\"]"),
    ],
    "prescribed": [
        Key("name", "name", REQUIRED, "name used by steps"),
        NODES,
        Key("dof", "str", REQUIRED, "ux, uy, uz, rx, ry or rz"),
        Key("value", "float", REQUIRED, "target value"),
        Key("function", "str", None, "time function name; default: ramp from the value at the "
            "step start (static), at once (dynamic)"),
    ],
    "functions": [
        Key("name", "name", REQUIRED, "name used by loads"),
        Key("type", "str", REQUIRED, "constant, ramp, table, steady (a crank at constant "
            "speed: y0 until t0, then growing at rate) or spin_up (Kane, Ryan & Banerjee's "
            "smooth spin-up from rest to rate over t0..t1, then constant speed)",
            choices=("constant", "ramp", "table", "steady", "spin_up")),
        Key("value", "float", 1.0, "constant: the value"),
        Key("rate", "float", None, "steady, spin_up: the final rate (units of the value per "
            "unit time, e.g. rad/s for a driven angle)"),
        Key("t0", "float", 0.0, "ramp, steady, spin_up: start time"),
        Key("t1", "float", 1.0, "ramp, spin_up: end time"),
        Key("y0", "float", 0.0, "ramp, steady: value at t0 (and before)"),
        Key("y1", "float", 1.0, "ramp: value at t1 (and after)"),
        Key("points", "matrix", None, "table: `[[t, value], ...]`, times increasing; constant "
            "beyond the ends"),
    ],
    "loads": [
        Key("name", "name", REQUIRED, "name used by steps"),
        Key("nodes", "nodes", None, "nodal loads: node id, list of ids or node-set name"),
        Key("force", "vector", None, "`[fx, fy]` (2D) or `[fx, fy, fz]` (3D), per node"),
        Key("moment", "number_or_vector", None, "`mz` (2D) or `[mx, my, mz]` (3D), per node"),
        Key("elements", "groups", None, "distributed loads: element-group name or list of names "
            "(beams; trusses take dead loads) carrying `per_length`, or shell groups carrying "
            "`pressure` (instead of nodes)"),
        Key("per_length", "vector", None, "uniform load per reference length `[qx, qy(, qz)]` "
            "(nonzero), global axes (follower: at the reference, turning with the nodes)"),
        Key("pressure", "float", None, "shells: uniform pressure per reference area on the "
            "`elements` (instead of per_length), along each triangle's normal (x2 - x1) x "
            "(x3 - x1); dead"),
        Key("kind", "str", "dead", "dead (fixed direction; for moments Argyris's axial moment), "
            "follower, or semitangential (moments)", choices=LOAD_KINDS),
        LOAD_FUNCTION,
    ],
    "ties": [
        Key("name", "name", REQUIRED, "group name; the tie forces are written as its section "
            "forces fx, fy(, fz): the force each first node receives from its second"),
        Key("pairs", "matrix", REQUIRED, "`[[node_a, node_b], ...]` node ids, two nodes at the "
            "same point each; their translations become equal, their rotations stay free"),
    ],
    "joints": [
        Key("name", "name", REQUIRED, "group name; its joints' reactions (force and moment on "
            "the first node, in the joint frame) and relative coordinates are its outputs"),
        Key("type", "str", REQUIRED, "spherical, revolute, universal, fixed, cylindrical, "
            "prismatic, planar or inline (3D); revolute, fixed, prismatic or inline (2D). An "
            "inline joint keeps the second node's point on a line of the first (for joints to "
            "the ground: the node's point on a line of the ground), rotations free: a massless "
            "slider pinned to a rod",
            choices=("spherical", "revolute", "universal", "fixed", "cylindrical", "prismatic",
                     "planar", "inline")),
        Key("pairs", "matrix", None, "`[[node_a, node_b], ...]`: joints between two nodes (beam "
            "nodes or rigid bodies); or"),
        Key("ground", "nodes", None, "node id, list of ids or node-set name: joints between "
            "each node and the ground"),
        Key("points", "matrix", None, "the joint points `[[x, y(, z)], ...]`, one per joint "
            "(default: each joint's first node); the nodes may be anywhere: rigid arms reach "
            "the point"),
        Key("axis", "vector", None, "revolute, cylindrical, prismatic, inline: the joint axis "
            "(3D; in 2D the sliding direction); planar: the plane's normal; universal: the "
            "cross's axis in the first node; fixed, spherical: the frame's z (optional)"),
        Key("second_axis", "vector", None, "universal: the cross's axis in the second node "
            "(required, perpendicular to axis); the others: the frame's x (optional, "
            "perpendicular to axis)"),
        Key("drive", "str", None, "revolute, prismatic: a [[functions]] name that prescribes "
            "the joint's coordinate (its angle in rad or its slide) in time, from 0 at the "
            "reference; the driving torque or force is its output `effort` and its work is in "
            "the energy balance's constraint work. Coordinates (output `angle`, `slide`) are "
            "the second node's motion relative to the first; for joints to the ground, the "
            "node's relative to the ground"),
        *JOINT_FORCE_KEYS,
    ],
    "gravity": [
        Key("acceleration", "vector", REQUIRED, "`[gx, gy(, gz)]`, e.g. `[0, -9.81]`, nonzero: "
            "the load `M g` with the mass the dynamic step integrates (the groups' lumped "
            "masses, the [[masses]], and the consistent Hermite mass of beams with inertia = "
            "\"consistent\", whose end moments are taken at the reference axis: an "
            "approximation that vanishes as the mesh is refined; on linear superelements "
            "`T^T M g` from their file's reduced/gravity, in static and dynamic steps)"),
        LOAD_FUNCTION,
    ],
    "velocities": [
        Key("name", "name", REQUIRED, "name used by dynamic steps"),
        Key("nodes", "nodes", None, "node id, list of ids or node-set name (default: all)"),
        Key("velocity", "vector", None, "translational velocity [vx, vy(, vz)]"),
        Key("angular_velocity", "number_or_vector", None, "rigid rotation: wz (2D) or [wx, wy, "
            "wz]; adds w x (x - center) and sets the nodal spins"),
        Key("center", "vector", None, "centre of the rigid rotation (default: origin); the "
            "fields a step names add up on a node they share (a spin plus a kick)"),
    ],
    "steps": [],            # generated from the step types' settings: see _step_keys below
    "output": [
        Key("every", "int", 1, "write every n-th converged increment or time step",
            positive=True),
        Key("checkpoint_interval", "int", 100, "write a checkpoint (the state and the step's "
            "progress, what `fem run --restart` continues from) after every n-th output frame "
            "of a static or dynamic step; 0: at the end of every step only (always written "
            "there)", nonnegative=True),
    ],
    "sensors": sensors_io.KEYS,
    "solver": [
        Key("petsc_options", "table", None, "PETSc options without the step prefix, e.g. "
            "`{ ksp_type = \"gmres\", pc_type = \"ilu\" }`; the command line wins"),
    ],
}


# --- steps: every step type's settings dataclass is its schema (fem.analysis.settings) ---------

STEP_COMMON = [
    Key("name", "name", REQUIRED, "step name; also the PETSc options prefix `<name>_`"),
    Key("type", "str", REQUIRED, "the step type, see below"),
    Key("loads", "names", None, "loads the step applies, on top of those applied before "
        "(default: the loads no earlier step applied); see Load history"),
    Key("remove", "names", None, "loads applied by earlier steps that this step takes off "
        "(ramped down over a static step)"),
    Key("prescribed", "names", None, "prescribed values active in the step (default: all)"),
]


def step_settings() -> dict:
    """``{type name: settings dataclass}`` of every registered step type (not its step module)."""
    return dict(STEP_SETTINGS.items())


def setting_key(f, *, with_default: bool) -> Key:
    """The :class:`Key` of settings field ``f`` (its default, or None for the flat schema)."""
    meta = f.metadata["setting"]
    default = (REQUIRED if meta["required"] else f.default) if with_default else None
    if isinstance(default, tuple) and not default:
        default = None
    return Key(f.name, meta["kind"], default, meta["doc"], **meta["check"])


def _step_keys() -> list[Key]:
    """The flat schema of ``[[steps]]``: the common keys and every type's keys, no defaults.

    :func:`take` checks kinds and bounds with it; the defaults of a type's keys come from its
    settings class when the step is built (types may differ in them).
    """
    keys = {k.name: k for k in STEP_COMMON}
    types = step_settings()
    keys["type"] = Key("type", "str", REQUIRED, "the step type, see below", choices=tuple(types))
    for cls in types.values():
        for f in deck_fields(cls):
            key = setting_key(f, with_default=False)
            if f.name in keys:
                assert keys[f.name].kind == key.kind, f"step key {f.name}: two kinds"
                # choices differ by type (a modal and a linearize step's "method"): the flat
                # schema takes all of them, the step's own are checked when it is built
                # (fem.io.build_steps)
                old = keys[f.name]
                if old.choices and key.choices:
                    keys[f.name] = dataclasses.replace(old, choices=tuple(
                        dict.fromkeys(old.choices + key.choices)))
                continue
            keys[f.name] = key
    return list(keys.values())


SCHEMA["steps"] = _step_keys()


# --- tables of element families: their keys are the registered families' (fem.elements) -------

def table_keys(table: str) -> list[Key]:
    """The keys of deck table ``table``; a family table's from the families registered now."""
    if table not in FAMILY_TABLES:
        return SCHEMA[table]
    return [k for k, _ in _family_keys(table)]


def _family_keys(table: str) -> list[tuple[Key, list[str]]]:
    """Every key of family table ``table`` and the families that take it (all: ``[]``).

    The table's own keys first (``name``, and ``type`` when a type picks the family), then each
    family's in the order of registration; a key two families take is one key (of one kind).
    """
    spec, names = FAMILY_TABLES[table], list(families(table))
    keys = [(k, []) for k in spec.keys]
    if spec.typed:
        keys.append((Key("type", "str", REQUIRED, " or ".join(names), choices=tuple(names)), []))
    seen = {k.name: users for k, users in keys}
    for name, family in families(table).items():
        for k in family.deck.KEYS:
            if k.name in seen:
                first = next(key for key, _ in keys if key.name == k.name)
                assert first.kind == k.kind, f"{table} key {k.name}: two kinds"
                seen[k.name].append(name)
                continue
            seen[k.name] = [name]
            keys.append((k, seen[k.name]))
    return [(k, [] if len(users) == len(names) else users) for k, users in keys]


def family_keys(table: str, family) -> list[Key]:
    """The keys an entry of ``family`` in ``table`` takes: the table's own, then its own."""
    spec = FAMILY_TABLES[table]
    own = [k for k, _ in _family_keys(table)][:len(spec.keys) + spec.typed]
    return own + list(family.deck.KEYS)


def reference_markdown(only: str | None = None) -> str:
    """The deck reference, as Markdown tables (cut into the docs' deck pages by docs/_ext).

    ``only``: one table's (``joints``, ``steps``; the header's brackets may be given), a
    DeckError listing the tables for another name.
    """
    lines = []
    tables = TOP
    if only is not None:
        name = only.strip("[]")
        if name not in TOP:
            raise DeckError(only, "no such deck table" + did_you_mean(name, TOP)
                            + f"; the tables are: {', '.join(TOP)}")
        tables = {name: TOP[name]}
    for table, doc in tables.items():
        header = f"[[{table}]]" if table in ARRAYS else f"[{table}]"
        lines.append(f"#### `{header}`: {doc}")
        lines.append("")
        if table == "sets":
            lines.append("Each key is a set name (a name, see below), each value a list of node "
                         "ids.")
            lines.append("")
            continue
        if table == "steps":
            lines += _steps_markdown()
            continue
        if table in FAMILY_TABLES and len(families(table)) > 1:
            pairs = _family_keys(table)
            lines += _table_markdown([k for k, _ in pairs],
                                     {k.name: ", ".join(u) or "all" for k, u in pairs})
            continue
        lines += _table_markdown(table_keys(table))
    if only is None:
        lines += LIMITS
    return "\n".join(lines).rstrip() + "\n"


# --- a JSON Schema of the deck, for editors (fem deck-schema) -----------------------------------

_NUMBER = {"type": "number"}
_VECTOR = {"type": "array", "items": _NUMBER}
_MATRIX = {"type": "array", "items": _VECTOR}
JSON_KINDS = {
    "str": {"type": "string"},
    "name": {"type": "string", "pattern": f"^{_NAME.pattern}$", "maxLength": NAME_MAX},
    "int": {"type": "integer"},
    "float": _NUMBER,
    "bool": {"type": "boolean"},
    "vector": _VECTOR,
    "matrix": _MATRIX,
    "nodes": {"anyOf": [{"type": "integer"}, {"type": "string"},
                        {"type": "array", "items": {"type": "integer"}}]},
    "names": {"type": "array", "items": {"type": "string"}},
    "groups": {"anyOf": [{"type": "string"},
                         {"type": "array", "items": {"type": "string"}, "minItems": 1}]},
    "table": {"type": "object"},
    "tables": {"type": "array", "items": {"type": "object"}, "minItems": 1},
    "number_or_vector": {"anyOf": [_NUMBER, _VECTOR]},
    "number_vector_or_matrix": {"anyOf": [_NUMBER, _VECTOR, _MATRIX]},
}


def _json_key(k: Key) -> dict:
    """The JSON Schema of one key: its kind's type, its choices and bounds, its doc."""
    out = dict(JSON_KINDS[k.kind])
    if k.doc:
        out["description"] = k.doc
    if k.choices:
        out["enum"] = list(k.choices)
    if k.kind in ("int", "float"):
        if k.positive:
            out["exclusiveMinimum"] = 0
        elif k.nonnegative:
            out["minimum"] = 0
        if k.maximum is not None:
            out["maximum"] = k.maximum
    if k.kind == "tables" and k.maximum is not None:
        out["maxItems"] = k.maximum
    if not k.required and isinstance(k.default, (bool, int, float, str)):
        out["default"] = k.default
    return out


def _json_table(keys: list[Key], doc: str) -> dict:
    return {"type": "object", "description": doc,
            "properties": {k.name: _json_key(k) for k in keys},
            "required": [k.name for k in keys if k.required], "additionalProperties": False}


def json_schema() -> dict:
    """A JSON Schema (draft 2020-12) of the deck, from the same keys :func:`take` checks.

    What a schema can say: the tables, their keys, types, choices, bounds and required keys.
    The checks across keys and against the model (a node that exists, a key only one step
    type takes) are the deck reader's; a deck the schema accepts may still be refused there.
    """
    props = {}
    for table, doc in TOP.items():
        if table == "sets":
            props[table] = {"type": "object", "description": doc,
                            "additionalProperties": {"type": "array", "items": _NUMBER}}
            continue
        t = _json_table(table_keys(table), doc)
        if table in FAMILY_TABLES:      # what each family requires differs: the table's own
            spec = FAMILY_TABLES[table]
            t["required"] = [k.name for k in spec.keys if k.required] + (
                ["type"] if spec.typed else [])
        props[table] = {"type": "array", "description": doc, "items": t} if table in ARRAYS \
            else t
    return {"$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "fem deck", "description": "A deck of fem (TOML): the model and its steps",
            "type": "object", "properties": props, "required": ["model", "nodes"],
            "additionalProperties": False}


def _table_markdown(keys: list[Key], used=None) -> list[str]:
    """A Markdown table of ``keys`` (with a "used by" column when ``used`` maps them)."""
    extra = used is not None
    lines = ["| key | type | default | meaning |" + (" used by |" if extra else ""),
             "|---|---|---|---|" + ("---|" if extra else "")]
    for k in keys:
        shown_default = (str(k.default).lower() if isinstance(k.default, bool)
                         else '""' if k.default == "" else k.default)
        default = "required" if k.required else ("" if k.default is None else
                                                 f"`{shown_default}`")
        doc = k.doc + (f" (at most {k.maximum})" if k.maximum is not None else "")
        lines.append(f"| `{k.name}` | {k.kind} | {default} | {doc} |"
                     + (f" {used[k.name]} |" if extra else ""))
    return lines + [""]


def _steps_markdown() -> list[str]:
    """``[[steps]]``: the keys every step takes, then each type's own (from its settings)."""
    lines = ["Every step:", ""] + _table_markdown(
        [k if k.name != "type" else Key("type", "str", REQUIRED, " or ".join(
            f'`"{t}"`' for t in step_settings())) for k in STEP_COMMON])
    for name, cls in step_settings().items():
        fields = deck_fields(cls)
        if len(cls.VARIANTS) > 1:
            used = {f.name: ", ".join(f.metadata["setting"]["used_by"] or ["all"])
                    for f in fields}
            lines += [f'With `type = "{name}"`: its variant is ' + ", ".join(
                f"`{v}`" for v in cls.VARIANTS) + " (see `nonlinear` and `control`); `remove` "
                "is taken by " + ", ".join(f"`{v}`" for v in cls.REMOVES) + ".", ""]
        else:
            used = None
            lines += [f'With `type = "{name}"`' + (" (and `remove`):" if cls.REMOVES else ":"),
                      ""]
        lines += _table_markdown([setting_key(f, with_default=True) for f in fields], used)
    return lines


LIMITS = [
    "#### Names, numbers and sizes",
    "",
    f"* **Names** (of materials, sections, element groups, springs, sets, loads, prescribed "
    f"values, functions, velocity fields, steps, and the named groups of a mesh file) are "
    f"{NAME_RULE}: they become HDF5 groups, file names and PETSc options prefixes. Two step "
    "names that differ only in `-` and `_` or spaces share a PETSc prefix and are refused.",
    "* **Numbers** are finite and 0 or of magnitude from "
    f"{sci(MIN_MAGNITUDE)} to {sci(MAX_MAGNITUDE)} in every key and mesh file; no physical "
    "quantity in any units comes near these bounds, and "
    "products of three such numbers stay finite in double precision. Integers fit in 64 bits; "
    f"node ids have magnitude at most {sci(MAX_NODE_ID)}; a list of numbers that must be integers "
    "(connectivity, ids) may write them as 2.0, not 2.5. Derived quantities (section properties, "
    f"element stiffnesses and masses) must be finite and at most {sci(MAX_DERIVED)}.",
    f"* **Nesting**: values nest at most {MAX_DEPTH} levels deep, counted from the top of the "
    "deck (a matrix in an array of tables is 4).",
    "* **Sizes**: the nodes and elements a deck makes (with `divisions`) must fit in this "
    f"machine's memory, estimated at {BYTES_PER_NODE} bytes per node and {BYTES_PER_ELEMENT} "
    "bytes per element; a dynamic step "
    f"takes at most {sci(MAX_TIME_STEPS)} time steps (duration / time_step) and writes at most "
    f"{sci(MAX_FRAMES)} frames; the other counts have the maxima in the tables above.",
]


if __name__ == "__main__":
    print(reference_markdown(), end="")
