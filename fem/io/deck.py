"""Read a TOML deck: parse, validate against :mod:`fem.io.schema`, build the :class:`Model`.

Every mistake raises one :class:`~fem.errors.DeckError` naming the deck key (``elements[2].section``)
and, where it can be found in the text, its line. The deck format is documented in the README's
deck reference, generated from the schema.
"""

from __future__ import annotations

import os
import re
import tomllib
from dataclasses import dataclass, field

from fem.errors import DeckError
from fem.io import build
from fem.io.schema import SCHEMA, TOP, take
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


def locate(text: str, key: str) -> int | None:
    """1-based line of ``key`` (``"elements[2].section"``) in the deck text, if it can be found."""
    parts = re.findall(r"(\w+)(?:\[(\d+)\])?", key)
    if not parts:
        return None
    table, index = parts[0][0], parts[0][1]
    lines = text.splitlines()
    header = re.compile(r"^\s*\[\[\s*" + re.escape(table) + r"\s*\]\]" if index else
                        r"^\s*\[\s*" + re.escape(table) + r"\s*\]")
    any_header = re.compile(r"^\s*\[")
    count, start = -1, None
    for i, line in enumerate(lines):
        if header.match(line):
            count += 1
            if not index or count == int(index):
                start = i
                break
    if start is None:
        if len(parts) == 1 or index:
            return None
        # a top-level table written inline or a key of the root table
        for i, line in enumerate(lines):
            if re.match(r"^\s*" + re.escape(table) + r"\s*=", line):
                return i + 1
        return None
    if len(parts) < 2:
        return start + 1
    name = parts[1][0]
    for i in range(start + 1, len(lines)):
        if any_header.match(lines[i]):
            break
        if re.match(r"^\s*" + re.escape(name) + r"\s*=", lines[i]):
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
        raise DeckError(os.path.basename(path), "TOML syntax error: "
                        + re.sub(r"\s*\(at line.*\)", "", msg), line) from None


def from_dict(data: dict, base_dir: str = ".", text: str = "", path: str = "") -> Deck:
    """Validate a parsed deck and build it (tests use this with plain dicts)."""
    for name in data:
        if name not in TOP:
            from fem.errors import did_you_mean

            raise DeckError(name, "unknown table" + did_you_mean(name, TOP))
    if "model" not in data:
        raise DeckError("model", "missing; expected a [model] table with dim = 2 or 3")
    model_t = take(data["model"], SCHEMA["model"], "model")
    if model_t["dim"] not in (2, 3):
        raise DeckError("model.dim", f"expected 2 or 3, got {model_t['dim']}")
    builder = build.ModelBuilder(model_t, base_dir)
    builder.materials(_array(data, "materials"))
    builder.sections(_array(data, "sections"))
    if "nodes" not in data:
        raise DeckError("nodes", "missing; expected a [nodes] table with coordinates or mesh")
    builder.nodes(take(data["nodes"], SCHEMA["nodes"], "nodes"))
    builder.sets(data.get("sets", {}))
    builder.functions(_array(data, "functions"))
    builder.elements(_array(data, "elements"))
    builder.supports(_array(data, "supports"))
    builder.prescribed(_array(data, "prescribed"))
    builder.loads(_array(data, "loads"))
    model = builder.model()
    steps = builder.steps(_array(data, "steps"), model)
    output = take(data.get("output", {}), SCHEMA["output"], "output")
    solver = take(data.get("solver", {}), SCHEMA["solver"], "solver")
    return Deck(model=model, steps=steps, output=output,
                solver_options=solver["petsc_options"] or {}, text=text, path=path)


def _array(data: dict, name: str) -> list[build.Entry]:
    value = data.get(name, [])
    if isinstance(value, dict):
        raise DeckError(name, f"expected an array of tables: write [[{name}]], not [{name}]")
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise DeckError(name, f"expected an array of tables ([[{name}]])")
    return [build.Entry(f"{name}[{i}]", take(v, SCHEMA[name], f"{name}[{i}]"), frozenset(v))
            for i, v in enumerate(value)]


def load(path: str) -> Deck:
    """Read, validate and build the deck at ``path``."""
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except OSError as err:
        raise DeckError(os.path.basename(path), f"cannot read the deck: {err.strerror}") from None
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
