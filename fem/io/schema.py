"""The deck schema: every table, key, type, default and meaning, in one place.

:func:`take` validates one deck table against its schema (unknown keys with a "did you mean",
types, ranges, choices) and :func:`reference_markdown` renders the schema as the README's deck
reference, so that the two never disagree (a test compares them).

Bounds (documented in the reference, section "Names, numbers and sizes"), so that no deck can make
the arithmetic overflow, a loop run without end or a name break a file path:

* every number of a deck or mesh is finite and ``0`` or of magnitude in
  ``[MIN_MAGNITUDE, MAX_MAGNITUDE]``; integers fit in 64 bits; node ids in ``MAX_NODE_ID``;
* every defined name follows :data:`NAME_RULE`;
* values nest at most :data:`MAX_DEPTH` deep;
* every count that drives a loop has a maximum (``Key.maximum``), justified where it is defined.
"""

from __future__ import annotations

import math
import re
from collections import deque
from dataclasses import dataclass
from typing import Any

from fem.analysis.settings import MAX_FRAMES, MAX_TIME_STEPS  # bounds live with the settings
from fem.errors import DeckError, did_you_mean

REQUIRED = object()

# --- bounds -------------------------------------------------------------------------------------
# Every number of a deck or mesh (coordinates, properties, loads, velocities, table points, ids,
# ...) is finite and, unless it is 0, of magnitude between MIN_MAGNITUDE and MAX_MAGNITUDE. No
# physical quantity in any unit system comes near them: from the Planck length (1.6e-35 m) to the
# mass of the observable universe (1e53 kg) physics spans about 90 decades in SI, and a change of
# units moves a quantity by a few decades. Products and quotients of three such numbers (E I / L^3,
# the squares inside a norm) stay within double precision (1e300 < 1.8e308; 1e-300 is above the
# smallest normal double, 2.2e-308), so building a model from a deck never overflows or underflows.
MAX_MAGNITUDE = 1e100
MIN_MAGNITUDE = 1e-100
# Integers are 64-bit (numpy int64 arrays, HDF5 datasets): a longer literal is an error, not an
# OverflowError.
MAX_INT = 2**63 - 1
# Node ids: 64-bit, and exact as floats too (ids may be written 1.0, and pass through float64 in
# numeric lists, which represent every integer only up to 2^53 = 9.007e15); nodes made by
# `divisions` take the ids after the largest, which stay far inside int64.
MAX_NODE_ID = 10**15
# Values nest at most MAX_DEPTH containers deep, counted from the document root: a matrix in an
# array of tables (``[[functions]] points = [[t, y], ...]``) is 4 deep; the TOML parser is
# recursive and would fail near 490 levels.
MAX_DEPTH = 8
# Names become HDF5 group names, file names (``out_<step>_modes.xdmf``), PETSc options prefixes
# (``<step>_``) and XDMF references, which break on "/", ".", "%", quotes, control characters or
# non-ASCII letters: one rule for every name.
NAME_MAX = 64
NAME_RULE = ("letters (A-Z, a-z), digits, _ and -, with spaces inside, starting with a letter, a "
             f"digit or _, at most {NAME_MAX} characters")
_NAME = re.compile(r"[A-Za-z0-9_](?:[A-Za-z0-9_ -]*[A-Za-z0-9_-])?")

# Memory of a model, estimated generously before it is built (``divisions`` can ask for billions of
# elements): the nodes' coordinates, ids, DOF numbering and states (trial, committed, mid-point),
# the elements' matrices (tangent and mass, 2 x 144 doubles for a 3D beam) and assembly index
# arrays, the global matrix with its fill-in in the factorization, and the results buffers.
# Measured with a chain of 3D co-rotational beams (one node per element): 20 kB per element in a
# nonlinear static step (50 000 elements: 1.0 GB above the empty run), 24 kB in a dynamic step;
# the bounds take about 1.5 times that.
BYTES_PER_NODE = 10_000
BYTES_PER_ELEMENT = 25_000
# Quantities derived from deck values (section properties, element stiffnesses E A / L and
# E I / L^3, element masses) are finite and at most MAX_DERIVED, so that their squares (norms,
# energies) stay finite as well.
MAX_DERIVED = 1e150


def sci(x: float) -> str:
    """``1e100``, ``1e-100``, ``1e7``: a power of ten for messages and the reference.

    >>> sci(1e100), sci(1e-100), sci(10**7), sci(2.5e6)
    ('1e100', '1e-100', '1e7', '2.5e6')
    """
    mantissa, exponent = f"{float(x):.1e}".split("e")
    return f"{mantissa.rstrip('0').rstrip('.')}e{int(exponent)}"


@dataclass(frozen=True)
class Key:
    """One deck key.

    ``kind`` is one of ``str``, ``name`` (a string following :data:`NAME_RULE`), ``int``,
    ``float``, ``bool``, ``vector`` (list of numbers), ``matrix`` (list of lists of numbers),
    ``nodes`` (node id, list of ids or set name), ``names`` (list of strings), ``table`` (inline
    table), ``number_or_vector``, ``number_vector_or_matrix``. ``maximum`` bounds an ``int`` key
    (a count that drives a loop).
    """

    name: str
    kind: str
    default: Any = None
    doc: str = ""
    choices: tuple[str, ...] = ()
    positive: bool = False
    nonnegative: bool = False
    maximum: int | None = None

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
    "str": "a string", "name": f"a name ({NAME_RULE})", "int": "an integer",
    "float": "a number", "bool": "true or false",
    "vector": "a list of numbers", "matrix": "a list of lists of numbers",
    "nodes": "a node id, a list of node ids or a node-set name",
    "names": "a list of names", "table": "a table", "number_or_vector": "a number or a list",
    "number_vector_or_matrix": "a number, a list of numbers or a list of lists of numbers",
}


def shown(value, limit: int = 60) -> str:
    """``repr(value)``, shortened to about ``limit`` characters for messages."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 4] + " ..."


def digits(n: int) -> int:
    """Number of decimal digits of ``n`` (without converting it to text, which Python limits)."""
    n = abs(n)
    if n < 10**18:
        return len(str(n))
    d = int(n.bit_length() * 0.30102999566398120)
    return d + (n >= 10**d)


def check_number(x, where: str, bounded: bool = True) -> None:
    """A ``DeckError`` unless ``x`` is finite and in bounds (see the module docstring).

    ``bounded`` false checks only that ``x`` is finite and a 64-bit integer where it is one.

    >>> check_number(float("nan"), "loads[0].force[0]")
    Traceback (most recent call last):
    fem.errors.DeckError: loads[0].force[0]: expected a finite number, got nan
    """
    if isinstance(x, bool):
        return
    if isinstance(x, int):
        if not -MAX_INT - 1 <= x <= MAX_INT:
            raise DeckError(where, "expected an integer of magnitude below 2^63 (64 bits), got an "
                            f"integer of {digits(x)} digits; write a large number as a float "
                            "(e.g. 1e20)")
        return
    if isinstance(x, float):
        if not math.isfinite(x):
            raise DeckError(where, f"expected a finite number, got {x!r}")
        if bounded and abs(x) > MAX_MAGNITUDE:
            raise DeckError(where, f"expected a number of magnitude at most {sci(MAX_MAGNITUDE)} "
                            f"(fem's bound on every deck value), got {x!r}")
        if bounded and 0 < abs(x) < MIN_MAGNITUDE:
            raise DeckError(where, f"expected 0 or a number of magnitude at least "
                            f"{sci(MIN_MAGNITUDE)} (fem's bound on every deck value), got {x!r}")


def _check_text(text: str, where: str) -> None:
    """No NUL character in a deck string or key: HDF5 attributes and C strings end at one."""
    if "\x00" in text:
        raise DeckError(where, f"expected text without NUL characters (\\u0000), got "
                        f"{shown(text)}")


def check_values(data: dict) -> None:
    """Check every number, string and key and the nesting depth of a parsed deck, first.

    Numbers of the ``[solver]`` table (PETSc options) are only checked to be finite and 64-bit;
    strings and keys anywhere must not hold a NUL character. The walk is iterative (decks may
    nest deeper than Python recurses) and in document order.
    """
    todo = deque([(data, "", 0)])
    while todo:
        value, where, depth = todo.popleft()
        if isinstance(value, (dict, list)) and depth >= MAX_DEPTH:
            where = re.sub(r"(\[\d+\])+$", "", where)        # the key whose value it is
            raise DeckError(where, f"expected a value nested at most {MAX_DEPTH} levels deep "
                            "(a matrix is 2 levels), got deeper nesting")
        bounded = not where.startswith("solver")
        if isinstance(value, dict):
            for k in value:
                _check_text(str(k), f"{where}.{shown(k)}" if where else shown(k))
            todo.extendleft(reversed([(v, f"{where}.{k}" if where else str(k), depth + 1)
                                      for k, v in value.items()]))
        elif isinstance(value, list):
            inner = []
            for i, x in enumerate(value):
                if isinstance(x, (dict, list)):
                    inner.append((x, f"{where}[{i}]", depth + 1))
                elif isinstance(x, str):
                    _check_text(x, f"{where}[{i}]")
                elif isinstance(x, (int, float)):
                    check_number(x, f"{where}[{i}]", bounded)
            todo.extendleft(reversed(inner))
        elif isinstance(value, str):
            _check_text(value, where)
        else:
            check_number(value, where, bounded)


def valid_name(name) -> bool:
    """Whether ``name`` follows :data:`NAME_RULE`.

    >>> valid_name("load 50"), valid_name("load 50%"), valid_name("."), valid_name("-a")
    (True, False, False, False)
    """
    return isinstance(name, str) and len(name) <= NAME_MAX and bool(_NAME.fullmatch(name))


def check_name(name, where: str, what: str = "a name") -> str:
    """``name`` if it follows :data:`NAME_RULE`, else a ``DeckError`` at ``where`` saying why."""
    if not valid_name(name):
        got = (f"{len(name)} characters" if isinstance(name, str) and len(name) > NAME_MAX
               else f"{type_name(name)} {shown(name)}")
        raise DeckError(where, f"expected {what} of {NAME_RULE}, got {got}")
    return name


def _check(key: Key, value, where: str):
    k = key.kind
    expected = EXPECTED[k]
    hint = ""
    if k == "names" and isinstance(value, str):
        hint = f" (write [{value!r}])"
    bad = DeckError(where, f"expected {expected}, got {type_name(value)} {shown(value)}{hint}")
    if k == "str" and not isinstance(value, str):
        raise bad
    if k == "name":
        if not isinstance(value, str):
            raise bad
        check_name(value, where)
    if k == "int" and (not isinstance(value, int) or isinstance(value, bool)):
        raise bad
    if k == "float":
        if not _is_number(value):
            raise bad
        check_number(value, where)
        value = float(value)
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
    if k == "number_vector_or_matrix" and not (_is_number(value) or (isinstance(value, list) and (
            all(_is_number(x) for x in value) or all(
                isinstance(r, list) and all(_is_number(x) for x in r) for r in value)))):
        raise bad
    if key.choices and value not in key.choices:
        raise DeckError(where, f"expected one of {', '.join(key.choices)}, got {shown(value)}"
                        + did_you_mean(str(value), key.choices))
    noun = "integer" if k == "int" else "number"
    if key.positive and _is_number(value) and not value > 0:
        raise DeckError(where, f"expected a positive {noun}, got {value!r}")
    if key.nonnegative and _is_number(value) and not value >= 0:
        raise DeckError(where, f"expected a {noun} >= 0, got {value!r}")
    if key.maximum is not None and _is_number(value) and value > key.maximum:
        low = 1 if key.positive else 0
        raise DeckError(where, f"expected an integer from {low} to {key.maximum} (a bound on "
                        f"{key.name}, see the deck reference), got {value!r}")
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
    "ties": "pins between members: coincident nodes whose translations are equal (array of "
            "tables)",
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
        Key("name", "name", REQUIRED, "name used by elements"),
        Key("E", "float", REQUIRED, "Young's modulus", positive=True),
        Key("nu", "float", None, "Poisson's ratio (give nu or G)"),
        Key("G", "float", None, "shear modulus (give nu or G)", positive=True),
        Key("density", "float", 0.0, "mass per unit volume", nonnegative=True),
    ],
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
    ],
    "nodes": [
        Key("coordinates", "matrix", None, "`[[x, y], ...]` (2D) or `[[x, y, z], ...]` (3D)"),
        Key("ids", "vector", None, f"node ids (integers, magnitude at most {sci(MAX_NODE_ID)}), "
            "default 1..n"),
        Key("mesh", "str", None, "mesh file read by meshio (Gmsh .msh 2.2 or 4.1, Abaqus .inp, "
            "...), relative to the deck; its node ids are 1..n in file order; its named physical "
            "groups (Gmsh) or sets (Abaqus *NSET/*ELSET) become node sets, and those with 2-node "
            "line cells can be element groups (`mesh_group`)"),
    ],
    "elements": [
        Key("name", "name", REQUIRED, "group name (also an element set)"),
        Key("type", "str", REQUIRED, "truss or beam", choices=("truss", "beam")),
        Key("material", "str", REQUIRED, "material name"),
        Key("section", "str", REQUIRED, "section name"),
        Key("connectivity", "matrix", None, "`[[node_id, node_id], ...]`"),
        Key("mesh_group", "str", None, "line cells of this mesh physical group / element set"),
        Key("divisions", "int", 1, "split each connectivity row into this many equal elements "
            "(the model must fit in memory, see Names, numbers and sizes)", positive=True),
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
        Key("name", "name", REQUIRED, "group name"),
        Key("nodes", "nodes", REQUIRED, "node id, list of ids or node-set name"),
        Key("dof", "str", REQUIRED, "the DOF tied to the ground: ux, uy, uz (or rz in 2D)"),
        Key("stiffness", "float", REQUIRED, "spring constant", positive=True),
    ],
    "masses": [
        Key("nodes", "nodes", REQUIRED, "node id, list of ids or node-set name"),
        Key("mass", "float", 0.0, "translational mass per node", nonnegative=True),
        Key("inertia", "number_vector_or_matrix", None, "rotary inertia per node: a number (2D, "
            "about z), [Ixx, Iyy, Izz] or [[Ixx, Ixy, Ixz], [Ixy, Iyy, Iyz], [Ixz, Iyz, Izz]] (3D, "
            "global axes; symmetric, positive semi-definite)"),
    ],
    "supports": [
        Key("nodes", "nodes", REQUIRED, "node id, list of ids or node-set name"),
        Key("fixed", "names", REQUIRED, "DOF names (ux, uy, uz, rx, ry, rz) or [\"all\"]"),
    ],
    "prescribed": [
        Key("name", "name", REQUIRED, "name used by steps"),
        Key("nodes", "nodes", REQUIRED, "node id, list of ids or node-set name"),
        Key("dof", "str", REQUIRED, "ux, uy, uz, rx, ry or rz"),
        Key("value", "float", REQUIRED, "target value"),
        Key("function", "str", None, "time function name; default: ramp from the value at the "
            "step start (static), at once (dynamic)"),
    ],
    "functions": [
        Key("name", "name", REQUIRED, "name used by loads"),
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
        Key("name", "name", REQUIRED, "name used by steps"),
        Key("nodes", "nodes", REQUIRED, "node id, list of ids or node-set name"),
        Key("force", "vector", None, "`[fx, fy]` (2D) or `[fx, fy, fz]` (3D), per node"),
        Key("moment", "number_or_vector", None, "`mz` (2D) or `[mx, my, mz]` (3D), per node"),
        Key("kind", "str", "dead", "dead (fixed direction; for moments Argyris's axial moment), "
            "follower, or semitangential (moments)", choices=LOAD_KINDS),
        Key("function", "str", None, "time function name; default: ramp with the load factor "
            "(static), constant (dynamic)"),
    ],
    "ties": [
        Key("name", "name", REQUIRED, "group name; the tie forces are written as its section "
            "forces fx, fy(, fz): the force each first node receives from its second"),
        Key("pairs", "matrix", REQUIRED, "`[[node_a, node_b], ...]` node ids, two nodes at the "
            "same point each; their translations become equal, their rotations stay free"),
    ],
    "velocities": [
        Key("name", "name", REQUIRED, "name used by dynamic steps"),
        Key("nodes", "nodes", None, "node id, list of ids or node-set name (default: all)"),
        Key("velocity", "vector", None, "translational velocity [vx, vy(, vz)]"),
        Key("angular_velocity", "number_or_vector", None, "rigid rotation: wz (2D) or [wx, wy, "
            "wz]; adds w x (x - center) and sets the nodal spins"),
        Key("center", "vector", None, "centre of the rigid rotation (default: origin)"),
    ],
    "steps": [],            # generated from the step types' settings: see _step_keys below
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
          "ties", "functions", "loads", "velocities", "steps")

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
    """``{type name: settings dataclass}`` of every registered step type."""
    from fem.analysis import STEP_TYPES

    return {name: step.Settings for name, step in STEP_TYPES.items()}


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
    from fem.analysis.settings import deck_fields

    keys = {k.name: k for k in STEP_COMMON}
    types = step_settings()
    keys["type"] = Key("type", "str", REQUIRED, "the step type, see below", choices=tuple(types))
    for cls in types.values():
        for f in deck_fields(cls):
            key = setting_key(f, with_default=False)
            if f.name in keys:
                assert keys[f.name].kind == key.kind, f"step key {f.name}: two kinds"
                continue
            keys[f.name] = key
    return list(keys.values())


SCHEMA["steps"] = _step_keys()


def reference_markdown() -> str:
    """The deck reference, as Markdown tables (copied verbatim into the README)."""
    lines = []
    for table, doc in TOP.items():
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
        lines += _table_markdown(SCHEMA[table])
    lines += LIMITS
    return "\n".join(lines).rstrip() + "\n"


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
    from fem.analysis.settings import deck_fields

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
