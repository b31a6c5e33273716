"""Read a TOML deck: parse, validate against :mod:`fem.io.schema`, build the :class:`Model`.

Every mistake raises one :class:`~fem.errors.DeckError` naming the deck key
(``elements[2].section``) and, where it can be found in the text, its line. The deck format is
documented in the README's deck reference, generated from the schema.
"""

from __future__ import annotations

import os
import re
import tomllib
from dataclasses import dataclass, field

from fem.errors import DeckError, did_you_mean
from fem.io import build
from fem.io.schema import SCHEMA, TOP, shown, table_header, take, type_name
from fem.model import Model


@dataclass
class Deck:
    """A validated deck: the model and what to do with it."""

    model: Model
    steps: list[dict]
    output: dict
    solver_options: dict
    text: str = ""
    path: str = ""
    extra: dict = field(default_factory=dict)


def _key_line(name: str) -> re.Pattern:
    """A line assigning key ``name`` (bare or quoted)."""
    return re.compile(r"""^\s*(?:%s|"%s"|'%s')\s*=""" % ((re.escape(name),) * 3))


def _header(table: str, array: bool | None, sub: str | None = None) -> re.Pattern:
    """A ``[table]`` (``array`` false), ``[[table]]`` (true) or either (None) header line."""
    name = re.escape(table) + (r"\s*\.\s*" + re.escape(sub) if sub else "")
    opening = {True: r"\[\[", False: r"\[(?!\[)", None: r"\[\[?"}[array]
    return re.compile(r"^\s*" + opening + r"\s*" + name + r"\s*\]")


def locate(text: str, key: str) -> int | None:
    r"""1-based line of ``key`` (``"elements[2].section"``) in the deck text, if it can be found.

    >>> locate("[model]\ndim = 2\n\n[[steps]]\nname = 'a'\n[[steps]]\nname = 'b'",
    ...        "steps[1].name")
    7
    """
    parts = re.findall(r"(\w+)(?:\[(\d+)\])?", key)
    if not parts:
        return None
    table, index = parts[0]
    sub = parts[1][0] if len(parts) > 1 else None
    lines = text.splitlines()
    # a header is a whole line (rows of a multi-line array also start with "[")
    any_header = re.compile(r"^\s*\[\[?\s*[A-Za-z_][\w.\s-]*\]\]?\s*(#.*)?$")
    start = None
    if index:
        count = -1
        for i, line in enumerate(lines):
            if _header(table, True).match(line):
                count += 1
                if count == int(index):
                    start = i
                    break
    else:
        for i, line in enumerate(lines):
            if _header(table, None).match(line):
                start = i
                break
        if sub is not None:         # a sub-table written as its own header: [solver.petsc_options]
            for i, line in enumerate(lines):
                if _header(table, None, sub).match(line):
                    return i + 1
        if start is None:           # a top-level table written inline, or a key of the root table
            for i, line in enumerate(lines):
                if any_header.match(line):
                    break
                if _key_line(table).match(line):
                    return i + 1
    if start is None:
        return None
    if sub is None:
        return start + 1
    for i in range(start + 1, len(lines)):
        if any_header.match(lines[i]):
            break
        if _key_line(sub).match(lines[i]):
            return i + 1
    return start + 1


def parse(text: str, path: str = "<deck>") -> dict:
    """TOML text -> dict; syntax errors become a DeckError with their line."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        msg = str(err)
        m = re.search(r"\(at line (\d+), column (\d+)\)", msg)
        line = int(m.group(1)) if m else None
        column = f" at column {m.group(2)}" if m else ""
        if re.search(r"\(at end of document\)", msg):
            line = max(1, len(text.splitlines()))
            column = " at the end of the file"
        reason = re.sub(r"\s*\(at (line|end of document).*\)", "", msg)
        raise DeckError(os.path.basename(path), f"TOML syntax error{column}: {reason}",
                        line) from None


def from_dict(data: dict, base_dir: str = ".", text: str = "", path: str = "") -> Deck:
    """Validate a parsed deck and build it (tests use this with plain dicts)."""
    for name in data:
        if name not in TOP:
            raise _unknown_table(name)
    if "model" not in data:
        raise DeckError("model", "missing required table [model]: expected a [model] header "
                        "followed by dim = 2 or 3")
    model_t = take(data["model"], SCHEMA["model"], "model")
    if model_t["dim"] not in (2, 3):
        raise DeckError("model.dim", f"expected 2 or 3, got {model_t['dim']}")
    builder = build.ModelBuilder(model_t, base_dir)
    builder.materials(_array(data, "materials"))
    builder.sections(_array(data, "sections"))
    if "nodes" not in data:
        raise DeckError("nodes", "missing required table [nodes]: expected a [nodes] header "
                        "followed by coordinates = [[x, y], ...] or mesh = \"file\"")
    builder.nodes(take(data["nodes"], SCHEMA["nodes"], "nodes"))
    builder.sets(data.get("sets", {}))
    builder.functions(_array(data, "functions"))
    builder.elements(_array(data, "elements"))
    builder.springs(_array(data, "springs"))
    builder.masses(_array(data, "masses"))
    builder.supports(_array(data, "supports"))
    builder.prescribed(_array(data, "prescribed"))
    builder.loads(_array(data, "loads"))
    builder.velocities(_array(data, "velocities"))
    model = builder.model()
    steps = builder.steps(_array(data, "steps"), model)
    output = take(data.get("output", {}), SCHEMA["output"], "output")
    solver = take(data.get("solver", {}), SCHEMA["solver"], "solver")
    return Deck(model=model, steps=steps, output=output,
                solver_options=_petsc_options(solver["petsc_options"]), text=text, path=path)


def _unknown_table(name: str) -> DeckError:
    hint = did_you_mean(name, TOP)
    if not hint:
        owners = [t for t, keys in SCHEMA.items() if any(k.name == name for k in keys)]
        if owners:
            hint = (f"; '{name}' is a key of {table_header(owners[0])}: keys above the first "
                    "table header belong to no table, so write it below that header")
    return DeckError(name, "unknown table" + hint + f"; the deck's tables are: {', '.join(TOP)}")


def _petsc_options(options: dict | None) -> dict:
    """``[solver] petsc_options``: option names without ``-``, values strings/numbers/booleans."""
    for key, value in (options or {}).items():
        where = f"solver.petsc_options.{key}"
        if not re.fullmatch(r"-?\w+", key):
            raise DeckError(where, "expected a PETSc option name such as ksp_type (letters, "
                            f"digits and _), got {key!r}")
        if isinstance(value, (dict, list)):
            raise DeckError(where, "expected a string, a number or true/false, got "
                            f"{type_name(value)} {shown(value)}")
    return dict(options or {})


def _array(data: dict, name: str) -> list[build.Entry]:
    value = data.get(name, [])
    if isinstance(value, dict):
        raise DeckError(name, f"expected an array of tables: write [[{name}]] (double brackets) "
                        f"for each entry, got a single table [{name}]")
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise DeckError(name, f"expected an array of tables (one [[{name}]] header per entry), "
                        f"got {type_name(value)} {shown(value)}")
    return [build.Entry(f"{name}[{i}]", take(v, SCHEMA[name], f"{name}[{i}]"), frozenset(v))
            for i, v in enumerate(value)]


def load(path: str) -> Deck:
    """Read, validate and build the deck at ``path``."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except OSError as err:
        raise DeckError(os.path.basename(path) or path, f"cannot read the deck {path!r}: "
                        f"{err.strerror}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        line = raw.count(b"\n", 0, err.start) + 1
        raise DeckError(os.path.basename(path), f"cannot read the deck: expected UTF-8 text, got "
                        f"the byte 0x{raw[err.start]:02x}", line) from None
    return loads(text, path)


def loads(text: str, path: str = "<deck>") -> Deck:
    """Validate and build a deck from its text; errors carry the line where it can be found."""
    data = parse(text, path)
    try:
        return from_dict(data, os.path.dirname(os.path.abspath(path)), text, path)
    except DeckError as err:
        if err.line is None:
            line = locate(text, err.key)
            if line is not None:
                raise DeckError(err.key, err.message, line) from None
        raise
