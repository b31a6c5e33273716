"""Read a TOML deck: parse, validate against :mod:`fem.io.schema`, build the :class:`Model`.

:func:`from_dict` is the one place that composes a model: it calls the builders in dependency order,
each a function of what was built before that returns its pieces (:mod:`fem.io.build` and the
``fem.io.build_*`` modules; the element families' deck modules through the registry of
:mod:`fem.elements`), and puts the pieces together. Every mistake raises one
:class:`~fem.errors.DeckError` naming the deck key (``elements[2].section``) and, where it can be
found in the text, its line (:mod:`fem.io.deck_text` parses the text and finds the lines). The
deck format is documented in the deck reference (docs/deck/), generated from the schema.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, replace

import numpy as np

from fem.constraints.redundancy import release_redundant
from fem.elements import families
from fem.errors import DeckError, did_you_mean
from fem.io import (
    build,
    build_constraints,
    build_damping,
    build_inertia,
    build_joint_forces,
    build_loads,
    build_steps,
)
from fem.io import sensors as sensors_io
from fem.io.deck_text import locate, parse, strip_bom
from fem.io.keys import FAMILY_TABLES, unknown_key
from fem.io.keys.entries import Entry
from fem.io.keys.groups import GroupInputs
from fem.io.keys.nodes import Nodes
from fem.io.schema import (
    SCHEMA,
    TOP,
    check_values,
    family_keys,
    shown,
    table_header,
    table_keys,
    take,
    type_name,
)
from fem.io.solver_options import check_allowed
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


def from_dict(data: dict, base_dir: str = ".", text: str = "", path: str = "") -> Deck:
    """Validate a parsed deck and build it (tests use this with plain dicts)."""
    for name in data:
        if name not in TOP:
            raise _unknown_table(name)
    if "model" not in data:
        raise DeckError("model", "missing required table [model]: expected a [model] header "
                        "followed by dim = 2 or 3")
    check_values(data)
    model_t = take(data["model"], SCHEMA["model"], "model")
    dim = model_t["dim"]
    if dim not in (2, 3):
        raise DeckError("model.dim", f"expected 2 or 3, got {dim}")
    materials = build.materials(_array(data, "materials"))
    shell_sections = build.shell_sections(_array(data, "shell_sections"), materials)
    sections = build.sections(_array(data, "sections"), dim)
    if "nodes" not in data:
        raise DeckError("nodes", "missing required table [nodes]: expected a [nodes] header "
                        "followed by coordinates = [[x, y], ...] or mesh = \"file\"")
    nodes, inputs = build.nodes(take(data["nodes"], SCHEMA["nodes"], "nodes"), dim, base_dir)
    nodes = build.sets(data.get("sets", {}), nodes)
    funcs = build.functions(_array(data, "functions"))
    group_inputs = GroupInputs(dim, materials, sections, nodes, base_dir=base_dir,
                               shell_sections=shell_sections)
    groups, nodes = _groups("elements", _family_entries(data, "elements"), group_inputs, ())
    # the other group tables, in this order (their groups' order in the model), each seeing the
    # nodes the tables before it added (ground points) and their groups' names
    for table in ("springs", "bodies", "contacts", "connectors"):
        more, nodes = _groups(table, _family_entries(data, table),
                              replace(group_inputs, nodes=nodes), groups)
        groups += more
    masses = build_inertia.masses(_array(data, "masses"), nodes)
    fixed = build_loads.supports(_array(data, "supports"), nodes)
    prescribed, prescribed_entries = build_loads.prescribed(_array(data, "prescribed"), nodes,
                                                            funcs)
    ties = build_constraints.ties(_array(data, "ties"), nodes, groups, fixed, prescribed)
    velocities = build_inertia.velocities(_array(data, "velocities"), nodes)
    joints, nodes, fixed = build_constraints.joints(
        _array(data, "joints"), nodes, groups, fixed,
        {g.name for g in groups} | {t.name for t in ties}, funcs)
    groups += build_joint_forces.forces(
        _array(data, "joints"), joints, nodes.X, funcs,
        {g.name for g in groups} | {t.name for t in ties} | {j.name for j in joints})
    groups += build_damping.damping(_array(data, "damping"), groups, masses, dim,
                                    len(nodes.X))
    loads, load_entries = build_loads.loads(_array(data, "loads"), nodes, funcs, groups)
    # gravity is one more named load (steps apply, hold and remove it like the [[loads]])
    weight = build_loads.gravity(_table(data, "gravity"), dim, funcs, load_entries)
    loads += (weight,) if weight is not None else ()
    model = Model(dim=dim, X=nodes.X, node_ids=nodes.ids.copy(), groups=groups,
                  node_sets=nodes.sets, materials=materials, sections=sections, fixed=fixed,
                  prescribed=prescribed, loads=loads, masses=masses, constraints=ties + joints,
                  functions=funcs, title=model_t["title"], units=model_t["units"],
                  node_origin=nodes.origin if np.any(nodes.origin >= 0) else None)
    build_loads.check_model(model, load_entries, prescribed_entries)
    model, _ = release_redundant(model)
    output = take(data.get("output", {}), SCHEMA["output"], "output")
    # files element groups read (superelements): inputs of the run, never to be overwritten
    inputs = inputs + [p for g in groups for p in getattr(g, "input_files", ())]
    steps = build_steps.steps(_array(data, "steps"), build_steps.StepInputs(
        model, nodes, velocities, output["every"], base_dir=base_dir, inputs=tuple(inputs)))
    solver = take(data.get("solver", {}), SCHEMA["solver"], "solver")
    sensors = sensors_io.build(_array(data, "sensors"), model)
    return Deck(model=model, steps=steps, output=output,
                solver_options=_petsc_options(solver["petsc_options"]), text=text, path=path,
                extra={"inputs": inputs, "data": data, "sensors": sensors})


def _groups(table: str, entries: list[tuple[object, Entry]], inputs: GroupInputs,
            before: tuple) -> tuple[tuple, Nodes]:
    """The element groups of a family table, each built by its family, and the node table.

    Groups are built in deck order, each from the node table the groups before it left (their
    ``divisions`` add nodes); ``before`` are groups built from other tables (names are unique
    across them).
    """
    spec = FAMILY_TABLES[table]
    taken = {g.name for g in before}
    inputs = replace(inputs, before=tuple(before))
    build.unique([e for _, e in entries], spec.item)
    groups = []
    for family, e in entries:
        name = e.values["name"]
        if name in taken:
            raise DeckError(f"{e.where}.name", f"'{name}' is already an element group")
        piece = family.deck.build(e, inputs)
        nodes = piece.nodes
        if spec.node_set:
            nodes = nodes.with_sets({name: np.unique(piece.group.cells)}, keep=True)
        own = piece.group.n_internal if getattr(piece.group, "internal_always", False) else 0
        inputs = replace(inputs, nodes=nodes, n_elements=inputs.n_elements + len(piece.group),
                         n_internal=inputs.n_internal + len(piece.group) * own)
        groups.append(piece.group)
    return tuple(groups), inputs.nodes


def _family_entries(data: dict, table: str) -> list[tuple[object, Entry]]:
    """Each entry of family table ``table`` with its family, validated against its keys.

    Unknown keys are found among the keys of every family of the table (a key of another family
    is "not used by" this one, not unknown); values and required keys are then checked against
    the table's and the entry's family's own keys, with that family's defaults.
    """
    spec, known = FAMILY_TABLES[table], table_keys(table)
    names = {k.name: k for k in known}
    by_type = families(table)
    out = []
    for i, raw in enumerate(_tables(data, table)):
        where = f"{table}[{i}]"
        for key in raw:
            if key not in names:
                raise unknown_key(key, names, where)
        own = list(spec.keys) + ([names["type"]] if spec.typed else [])
        first = take({k: raw[k] for k in raw if k in {o.name for o in own}}, own, where)
        family = by_type[first["type"]] if spec.typed else next(iter(by_type.values()))
        keys = family_keys(table, family)
        for key in sorted(set(raw) - {k.name for k in keys}):
            raise DeckError(f"{where}.{key}", family.deck.NOT_USED.get(
                key, f"not used by {family.deck.PLURAL}"))
        out.append((family, Entry(where, take(raw, keys, where), frozenset(raw))))
    return out


def _unknown_table(name: str) -> DeckError:
    hint = did_you_mean(name, TOP)
    if not hint:
        owners = [t for t in TOP if t != "sets" and any(k.name == name for k in table_keys(t))]
        if owners:
            hint = (f"; '{name}' is a key of {table_header(owners[0])}: keys above the first "
                    "table header belong to no table, so write it below that header")
    return DeckError(name, "unknown table" + hint + f"; the deck's tables are: {', '.join(TOP)}")


def _petsc_options(options: dict | None) -> dict:
    """``[solver] petsc_options``: option names without ``-``, values strings/numbers/booleans.

    Solver settings only (:func:`fem.io.solver_options.check_allowed`, which needs no PETSc); that
    PETSc uses them and accepts their values is checked once PETSc has started
    (:func:`fem.io.solver_options.check`).
    """
    for key, value in (options or {}).items():
        where = f"solver.petsc_options.{key}"
        if not re.fullmatch(r"-?\w+", key):
            raise DeckError(where, "expected a PETSc option name such as ksp_type (letters, "
                            f"digits and _), got {key!r}")
        if isinstance(value, (dict, list)):
            raise DeckError(where, "expected a string, a number or true/false, got "
                            f"{type_name(value)} {shown(value)}")
    check_allowed(options)
    return dict(options or {})


def _tables(data: dict, name: str) -> list[dict]:
    """The entries of array of tables ``name`` (none if the deck has no such table)."""
    value = data.get(name, [])
    if isinstance(value, dict):
        raise DeckError(name, f"expected an array of tables: write [[{name}]] (double brackets) "
                        f"for each entry, got a single table [{name}]")
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise DeckError(name, f"expected an array of tables (one [[{name}]] header per entry), "
                        f"got {type_name(value)} {shown(value)}")
    return value


def _table(data: dict, name: str) -> dict | None:
    """The validated single table ``name`` (``[name]``), or None when the deck has none."""
    if name not in data:
        return None
    if not isinstance(data[name], dict):
        raise DeckError(name, f"expected a single table [{name}], got {type_name(data[name])} "
                        f"{shown(data[name])}")
    return take(data[name], SCHEMA[name], name)


def _array(data: dict, name: str) -> list[Entry]:
    """The validated entries of array of tables ``name``."""
    return [Entry(f"{name}[{i}]", take(v, SCHEMA[name], f"{name}[{i}]"), frozenset(v))
            for i, v in enumerate(_tables(data, name))]


def load(path: str) -> Deck:
    """Read, validate and build the deck at ``path``."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except OSError as err:
        raise DeckError(one_line(os.path.basename(path) or path), f"cannot read the deck "
                        f"{path!r}: {err.strerror}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        line = raw.count(b"\n", 0, err.start) + 1
        raise DeckError(one_line(os.path.basename(path)), f"cannot read the deck: expected UTF-8 "
                        f"text, got the byte 0x{raw[err.start]:02x}", line) from None
    return loads(text, path)


def loads(text: str, path: str = "<deck>") -> Deck:
    """Validate and build a deck from its text; errors carry the line where it can be found.

    Every error is one line: characters that would break it (newlines and other control characters
    in names or keys the deck wrote) are shown escaped.
    """
    text = strip_bom(text)
    try:
        data = parse(text, path)
        return from_dict(data, os.path.dirname(os.path.abspath(path)), text, path)
    except DeckError as err:
        line = err.line if err.line is not None else locate(text, err.key)
        key, message = one_line(err.key), one_line(err.message)
        if (line, key, message) != (err.line, err.key, err.message):
            raise DeckError(key, message, line) from None
        raise


def one_line(text: str) -> str:
    r"""``text`` with control characters and line separators escaped.

    >>> one_line("a\nb\u2028c d")
    'a\\nb\\u2028c d'
    """
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii")
                   for c in text)
