"""Deck keys: the generic schema machinery, the deck's tables and the bounds on every value.

:class:`Key` declares one deck key; :func:`take` validates one deck table against its keys (unknown
keys with a "did you mean", types, ranges, choices). The keys of each table are declared where
they are used: the element families' in their deck modules (:mod:`fem.elements`), the others in
:mod:`fem.io.schema`, which also renders them as the deck reference (docs/deck/). This module
imports nothing of fem but its errors, so that element deck modules can declare keys with it while
:mod:`fem.io.schema` collects them from the element registry (no import cycle).

Its modules are the rest of the deck leaves, what a family's deck module builds its group with
(nothing below :mod:`fem.io` imports the rest of it, tests/test_layers.py): :mod:`.entries`
(``Entry``, ``lookup``, ``vector``, ``axial``, ``inertia_tensor``), :mod:`.nodes` (the node table
``Nodes``) and :mod:`.groups` (``GroupInputs``, ``GroupPiece``, the keys several families
take, element rows, ``line_group``); they import nothing of fem but its errors, the model and
these keys.

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
    ``nodes`` (node id, list of ids or set name), ``names`` (list of strings), ``groups`` (a group
    name or a list of them), ``table`` (inline
    table), ``tables`` (list of inline tables), ``number_or_vector``, ``number_vector_or_matrix``.
    ``maximum`` bounds an ``int`` key (a count that drives a loop) or the length of a ``tables``
    list.
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
    "names": "a list of names", "groups": "an element-group name or a list of them",
    "table": "a table", "tables": "a list of tables", "number_or_vector": "a number or a list",
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
    if k == "groups" and not (isinstance(value, str) or (
            isinstance(value, list) and value and all(isinstance(x, str) for x in value))):
        raise bad
    if k == "table" and not isinstance(value, dict):
        raise bad
    if k == "tables":
        if not (isinstance(value, list) and value and all(isinstance(x, dict) for x in value)):
            raise bad
        if key.maximum is not None and len(value) > key.maximum:
            raise DeckError(where, f"expected at most {key.maximum} tables (a bound on "
                            f"{key.name}, see the deck reference), got {len(value)}")
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
    noun, an = ("integer", "an") if k == "int" else ("number", "a")
    if key.positive and _is_number(value) and not value > 0:
        raise DeckError(where, f"expected a positive {noun}, got {value!r}")
    if key.nonnegative and _is_number(value) and not value >= 0:
        raise DeckError(where, f"expected {an} {noun} >= 0, got {value!r}")
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


def take(table: Any, keys: list[Key], where: str, *, required: bool = True) -> dict[str, Any]:
    """Validate ``table`` (a dict from the deck) against ``keys``; return values with defaults.

    ``required`` false leaves required keys that are missing out of the values (a table whose
    entries take different keys checks them per entry afterwards).
    """
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
            try:
                out[key.name] = _check(key, table[key.name], f"{where}.{key.name}")
            except DeckError as err:
                plural = known.get(key.name + "s")
                if plural is None or not isinstance(table[key.name], dict | list):
                    raise
                # a table where another key's plural takes tables (a modify step's target
                # vs targets = [{mode, frequency}]): say so
                raise DeckError(err.key, f"{err.message}; did you mean {plural.name} "
                                f"({EXPECTED[plural.kind]}: {plural.doc})?", err.line) from None
        elif key.required and required:
            raise DeckError(f"{where}.{key.name}", f"missing required key '{key.name}': expected "
                            f"{EXPECTED[key.kind]}" + (f" ({key.doc})" if key.doc else ""))
        elif not key.required:
            out[key.name] = key.default
    return out


# --- keys that several tables take (declared once) ----------------------------------------------
NODES = Key("nodes", "nodes", REQUIRED, "node id, list of ids or node-set name")
LOAD_FUNCTION = Key("function", "str", None, "time function name; default: ramp with the load "
                    "factor (static), constant (dynamic)")


# Layers of a shell section: laminates have tens to a few hundred plies, each adds six output
# datasets per frame (its stresses) and one pass of the section's loop over layers.
MAX_LAYERS = 256
SHELL_SECTION_KEYS = [
    Key("name", "name", REQUIRED, "name used by shell elements (`section`)"),
    Key("layers", "tables", REQUIRED, "`[{material = \"m\", thickness = t, angle = 0.0}, "
        "...]` from the bottom (-normal) to the top: each layer's material (isotropic or "
        "orthotropic), thickness (positive) and angle (degrees, default 0) of its material axis "
        "1 about the facet normal (x2 - x1) x (x3 - x1), from the element's `direction`; the "
        "reference surface is the mid-surface", maximum=MAX_LAYERS),
]
LAYER_KEYS = [
    Key("material", "str", REQUIRED, "material name"),
    Key("thickness", "float", REQUIRED, "layer thickness", positive=True),
    Key("angle", "float", 0.0, "angle of the material axis 1, degrees"),
]


# --- the deck's tables ---------------------------------------------------------------------------

TOP = {
    "model": "title, dimension and units",
    "materials": "linear elastic materials (array of tables)",
    "sections": "cross-sections (array of tables)",
    "shell_sections": "layered (laminate) shell sections (array of tables)",
    "nodes": "node coordinates, inline or from a mesh file",
    "sets": "named node sets: `name = [ids]`",
    "elements": "element groups (array of tables)",
    "springs": "grounded linear springs on one DOF (array of tables)",
    "masses": "point masses and rotary inertias (array of tables)",
    "bodies": "rigid bodies: a node at each body's centre of mass with its mass and inertia "
              "(array of tables)",
    "contacts": "penalty contact: spheres on nodes against each other or nodes against a plane, "
                "with impact laws and friction (array of tables)",
    "connectors": "force elements between two nodes or a node and the ground: axial and "
                  "rotational spring-dampers, bushings (array of tables)",
    "damping": "structural (Rayleigh) damping C = alpha M + beta K of the whole model or of "
               "named element groups (array of tables)",
    "supports": "fixed DOFs (array of tables)",
    "prescribed": "prescribed DOF values (array of tables)",
    "ties": "pins between members: coincident nodes whose translations are equal (array of "
            "tables)",
    "joints": "joints between nodes and to the ground: spherical, revolute, universal, fixed, "
              "cylindrical, prismatic, planar (array of tables)",
    "functions": "time functions for loads and prescribed values (array of tables)",
    "loads": "nodal forces and moments, and uniform loads per length on beams (array of "
             "tables)",
    "gravity": "gravity on every mass: a load named \"gravity\"",
    "velocities": "initial velocity fields for dynamic steps (array of tables)",
    "steps": "the analysis steps, run in order (array of tables)",
    "output": "what is written to the results file",
    "sensors": "named time series written at every output frame: a node's or body's motion, "
               "an element's or joint's output, an energy term (array of tables)",
    "solver": "linear-solver options",
}


ARRAYS = ("materials", "sections", "shell_sections", "elements", "springs", "bodies", "masses",
          "contacts", "connectors", "damping", "supports", "prescribed", "ties", "joints",
          "functions", "loads", "velocities", "steps", "sensors")


@dataclass(frozen=True)
class FamilyTable:
    """A table whose entries are element groups of registered families (:mod:`fem.elements`).

    ``item`` names an entry in messages, ``keys`` are those every entry takes (the families add
    theirs), ``typed`` says whether a ``type`` key picks the family (else the table has one) and
    ``node_set`` whether each group's nodes become a node set of its name.
    """

    item: str
    keys: tuple[Key, ...]
    typed: bool
    node_set: bool


FAMILY_TABLES = {
    "elements": FamilyTable("element group", (Key("name", "name", REQUIRED, "group name (also an "
                                                  "element set)"),), typed=True, node_set=True),
    "springs": FamilyTable("spring", (Key("name", "name", REQUIRED, "group name"),), typed=False,
                           node_set=False),
    "bodies": FamilyTable("rigid body group", (Key("name", "name", REQUIRED, "group name (also "
                                                   "a node set)"),), typed=False, node_set=True),
    "contacts": FamilyTable("contact", (Key("name", "name", REQUIRED, "group name"),),
                            typed=False, node_set=False),
    "connectors": FamilyTable("connector", (Key("name", "name", REQUIRED, "group name"),),
                              typed=True, node_set=False),
}
