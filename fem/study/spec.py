"""The study deck: parameters by deck key path, their values, the outputs; expansion, checks.

A ``[study]`` table, in its own file (``fem study base.toml study.toml``) or in the base deck::

    [study]
    kind = "sweep"             # or "sensitivity": central differences (relative_step)
    combine = "product"        # or "zip": how parameters without a common zip label combine
    sampling = "none"          # or "lhs", "sobol" (scipy.stats.qmc): samples, seed, lower/upper
    xdmf = false               # true: each variant writes its XDMF files for ParaView too

    [[study.parameters]]
    key = "materials.steel.E"  # entry named steel of [[materials]], its key E
    values = [2.0e11, 2.1e11]  # or linspace = [start, stop, num], logspace = [start, stop, num]
    zip = "speed"              # parameters with one zip label vary together (equal lengths)

    [study.outputs]
    f1 = {path = "modes/modes/frequencies", index = 0}
    peak = {path = "steps/run/displacement", index = [":", 5, 1], reduce = "max_abs"}

A key path is dot-separated; a part names a key of a table, or the entry of an array of tables
whose ``name`` it is; ``[i]`` indexes a list (``nodes.coordinates[1][0]``, ``steps[0].duration``).
The variants are made from the parsed base deck by these paths (never by text); every variant's
deck is built through the normal deck checks (:func:`fem.io.deck.from_dict`) before any runs, and
a failing one is one :class:`~fem.errors.DeckError` naming the study key, the variant and its
values. Variant order: the cartesian product of the parameter groups in the order they first
appear, the last varying fastest; zipped lists in step; samples in the sampler's order.

A ``sensitivity`` study runs the nominal variant (each parameter's ``value``, default the base
deck's) and two per parameter, the parameter times ``1 + h`` and ``1 - h`` (``relative_step``
``h``, default 1e-4): central differences of every output, ``d out / d p = (out(+) - out(-)) /
(2 h p)``, truncation error O(h^2) relative.
"""

from __future__ import annotations

import copy
import itertools
import math
import os
import re
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fem.errors import DeckError, FemError
from fem.io import deck as deck_io
from fem.io.deck_text import parse, strip_bom
from fem.io.keys import NAME_RULE, shown, type_name, valid_name

KINDS = ("sweep", "sensitivity")
SAMPLING = ("none", "lhs", "sobol")
REDUCTIONS = ("max", "min", "max_abs", "final", "spread")
#: the most variants a study may have (a loop bound; a million runs is beyond any one machine)
MAX_VARIANTS = 1_000_000
STUDY_KEYS = ("kind", "combine", "sampling", "samples", "seed", "relative_step", "xdmf",
              "parameters", "outputs")
PARAMETER_KEYS = ("key", "values", "linspace", "logspace", "lower", "upper", "scale", "zip",
                  "value")
OUTPUT_KEYS = ("path", "index", "reduce")


@dataclass(frozen=True)
class Parameter:
    """One study parameter: a deck key path and its values (or sampling bounds)."""

    key: str
    where: str                    # the study key: study.parameters[j]
    location: str                 # the deck key it sets, as deck errors name it: materials[0].E
    base: Any                     # its value in the base deck (None: not there, a default)
    values: tuple = ()
    lower: float | None = None
    upper: float | None = None
    log: bool = False
    zip: str | None = None


@dataclass(frozen=True)
class Output:
    """A named scalar output: a dataset of the results file, an index and/or a reduction."""

    name: str
    path: str
    index: tuple = ()
    reduce: str | None = None


@dataclass
class Study:
    """An expanded, checked study: the base deck's data, its parameters, variants, outputs."""

    kind: str
    parameters: list[Parameter]
    outputs: list[Output]
    variants: list[tuple]                 # one value per parameter
    base: dict                            # the parsed base deck, without [study]
    base_dir: str
    text: str
    path: str
    relative_step: float = 1e-4
    settings: dict = field(default_factory=dict)
    xdmf: bool = False                    # the variants write their XDMF files (and views)

    @property
    def keys(self) -> list[str]:
        """The parameters' key paths, in order."""
        return [p.key for p in self.parameters]

    def data(self, i: int) -> dict:
        """The parsed deck of variant ``i``: the base with the variant's values set."""
        data = copy.deepcopy(self.base)
        for p, v in zip(self.parameters, self.variants[i], strict=True):
            assign(data, parse_path(p.key, p.where), v, p.where)
        return data

    def values(self, i: int) -> dict[str, Any]:
        """``{key path: value}`` of variant ``i``."""
        return dict(zip(self.keys, self.variants[i], strict=True))


# --- key paths ----------------------------------------------------------------------------------
_PART = re.compile(r"([^.\[\]]+)((?:\[-?\d+\])*)")


def parse_path(path: str, where: str) -> list[str | int]:
    """The parts of key path ``path``: names and list indices.

    >>> parse_path("nodes.coordinates[1][0]", "k")
    ['nodes', 'coordinates', 1, 0]
    """
    if not isinstance(path, str) or not path:
        raise DeckError(f"{where}.key", f"expected a deck key path such as materials.steel.E, "
                        f"got {type_name(path)} {shown(path)}")
    parts: list[str | int] = []
    for part in path.split("."):
        m = _PART.fullmatch(part)
        if m is None:
            raise DeckError(f"{where}.key", f"expected dot-separated names, each with optional "
                            f"[index], such as steps.spin.rate or nodes.coordinates[1][0], got "
                            f"{path!r}")
        parts.append(m.group(1))
        parts.extend(int(i) for i in re.findall(r"\[(-?\d+)\]", m.group(2)))
    return parts


def assign(data: dict, parts: list[str | int], value: Any, where: str) -> tuple[str, Any]:
    """Set the key at ``parts`` of parsed deck ``data`` to ``value`` (``value`` None: only look).

    Returns the deck key it is, as deck errors name it (``materials[0].E``), and its value before
    (None when the table does not give it: the key's default applies). A missing key is allowed
    only as the last part (a key left at its default); the deck checks refuse an unknown one.
    """
    cur: Any = data
    loc = ""
    for k, part in enumerate(parts):
        last = k == len(parts) - 1
        if isinstance(part, int):
            if not isinstance(cur, list) or not -len(cur) <= part < len(cur):
                n = f"a list of {len(cur)}" if isinstance(cur, list) else type_name(cur)
                raise DeckError(f"{where}.key", f"[{part}] after '{loc}': expected an index "
                                f"into a list, the deck has {n} there")
            loc += f"[{part}]"
            old = cur[part]
            if last:
                if value is not None:
                    cur[part] = value
                return loc, old
            cur = old
        elif isinstance(cur, dict):
            if part not in cur and not last:
                there = f"'{loc}'" if loc else "the deck"
                raise DeckError(f"{where}.key", f"'{part}': {there} has no table or key of "
                                f"that name (it has: {', '.join(map(str, cur)) or 'nothing'})")
            loc = f"{loc}.{part}" if loc else part
            old = cur.get(part)
            if last:
                if value is not None:
                    cur[part] = value
                return loc, old
            cur = old
        elif isinstance(cur, list) and all(isinstance(e, dict) for e in cur):
            hits = [i for i, e in enumerate(cur) if e.get("name") == part]
            if not hits:
                names = [str(e.get("name")) for e in cur if "name" in e]
                raise DeckError(f"{where}.key", f"'{part}': no entry of [[{loc}]] is named so "
                                f"(names: {', '.join(names) or 'none'}); an index [i] selects "
                                "an entry by position")
            if last:
                raise DeckError(f"{where}.key", f"'{part}' names an entry of [[{loc}]]: expected "
                                f"a key of it after a dot ({loc}.{part}.<key>)")
            loc += f"[{hits[0]}]"
            cur = cur[hits[0]]
        else:
            raise DeckError(f"{where}.key", f"'{part}' after '{loc}': the deck has "
                            f"{type_name(cur)} there, not a table")
    raise AssertionError("unreachable")  # pragma: no cover


# --- reading the study table --------------------------------------------------------------------
def load(base_path: str, study_path: str | None = None) -> Study:
    """Read the base deck and its study, expand the variants and check every one.

    The study is the ``[study]`` table of ``study_path`` or of the base deck; errors are
    :class:`~fem.errors.DeckError`.
    """
    text = _read(base_path)
    base = parse(text, base_path)
    table = base.pop("study", None)
    if study_path is not None:
        other = parse(_read(study_path), study_path)
        for key in other:
            if key != "study":
                raise DeckError(key, f"{study_path}: a study file holds only a [study] table "
                                "(and its [[study.parameters]], [study.outputs]); the model goes "
                                "in the base deck")
        if table is not None:
            raise DeckError("study", f"both {base_path} and {study_path} have a [study] table: "
                            "keep one")
        table = other.get("study")
    if table is None:
        raise DeckError("study", "missing the [study] table: give it in the study file (fem "
                        "study base.toml study.toml) or in the deck")
    study = expand(table, base, os.path.dirname(os.path.abspath(base_path)), text, base_path)
    check(study)
    return study


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as fh:
            return strip_bom(fh.read())
    except OSError as err:
        raise DeckError(os.path.basename(path) or path,
                        f"cannot read {path!r}: {err.strerror}") from None
    except UnicodeDecodeError:
        raise DeckError(os.path.basename(path), "expected UTF-8 text") from None


def _number(v, where: str, positive: bool = False) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) \
            or (positive and v <= 0):
        raise DeckError(where, f"expected a {'positive ' if positive else ''}finite number, got "
                        f"{type_name(v)} {shown(v)}")
    return v


def _count(v, where: str, maximum: int = MAX_VARIANTS) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= maximum:
        raise DeckError(where, f"expected an integer from 1 to {maximum}, got {type_name(v)} "
                        f"{shown(v)}")
    return v


def _choice(table: dict, key: str, choices: tuple, default: str) -> str:
    v = table.get(key, default)
    if v not in choices:
        raise DeckError(f"study.{key}", f"expected one of {', '.join(choices)}, got {shown(v)}")
    return v


def _known(table: dict, keys: tuple, where: str) -> None:
    if not isinstance(table, dict):
        raise DeckError(where, f"expected a table, got {type_name(table)} {shown(table)}")
    for k in table:
        if k not in keys:
            raise DeckError(f"{where}.{k}", f"unknown key; the keys are: {', '.join(keys)}")


def expand(table: dict, base: dict, base_dir: str = ".", text: str = "",
           path: str = "") -> Study:
    """The :class:`Study` of ``[study]`` table ``table`` over parsed base deck ``base``."""
    _known(table, STUDY_KEYS, "study")
    kind = _choice(table, "kind", KINDS, "sweep")
    combine = _choice(table, "combine", ("product", "zip"), "product")
    sampling = _choice(table, "sampling", SAMPLING, "none")
    h = _number(table.get("relative_step", 1e-4), "study.relative_step", positive=True)
    if h >= 0.5:
        raise DeckError("study.relative_step", f"expected a small relative step (below 0.5), "
                        f"got {h}")
    xdmf = table.get("xdmf", False)
    if not isinstance(xdmf, bool):
        raise DeckError("study.xdmf", f"expected true or false, got {type_name(xdmf)} "
                        f"{shown(xdmf)}")
    raw = table.get("parameters")
    if not isinstance(raw, list) or not raw or not all(isinstance(r, dict) for r in raw):
        raise DeckError("study.parameters", "expected one or more [[study.parameters]] tables, "
                        f"got {type_name(raw)} {shown(raw)}")
    params = [_parameter(r, f"study.parameters[{j}]", base, kind, sampling)
              for j, r in enumerate(raw)]
    seen: dict[str, str] = {}
    for p in params:
        if p.location in seen:
            raise DeckError(f"{p.where}.key", f"sets {p.location} as {seen[p.location]} does")
        seen[p.location] = p.where
    outputs = _outputs(table.get("outputs", {}))
    if kind == "sensitivity":
        variants = _sensitivity_variants(params, h)
    elif sampling != "none":
        variants = _samples(params, sampling, table)
    else:
        variants = _grid(params, combine)
    settings = {"combine": combine, "sampling": sampling, "samples": table.get("samples"),
                "seed": table.get("seed")}
    return Study(kind, params, outputs, variants, base, base_dir, text, path, h, settings, xdmf)


def _parameter(r: dict, where: str, base: dict, kind: str, sampling: str) -> Parameter:
    _known(r, PARAMETER_KEYS, where)
    if "key" not in r:
        raise DeckError(f"{where}.key", "missing: the deck key path to vary, such as "
                        "materials.steel.E")
    location, old = assign(base, parse_path(r["key"], where), None, where)
    if isinstance(old, (dict, list)) and not (isinstance(old, list) and _flat(old)):
        raise DeckError(f"{where}.key", f"{r['key']} is {type_name(old)} of tables: expected "
                        "a key with a value")
    given = [k for k in ("values", "linspace", "logspace") if k in r]
    bounds = [k for k in ("lower", "upper") if k in r]
    zip_label = r.get("zip")
    if zip_label is not None and not isinstance(zip_label, str):
        raise DeckError(f"{where}.zip", f"expected a label (a string), got {shown(zip_label)}")
    common = dict(key=r["key"], where=where, location=location, base=old, zip=zip_label)
    if kind == "sensitivity":
        if given or bounds:
            raise DeckError(f"{where}.{(given + bounds)[0]}", "a sensitivity study varies each "
                            "parameter about its value (value, default the deck's): leave out "
                            "values, ranges and bounds")
        v = r.get("value", old)
        if v is None:
            raise DeckError(f"{where}.value", f"the deck does not give {r['key']}: state the "
                            "nominal value (value = ...)")
        if _number(v, f"{where}.value") == 0:
            raise DeckError(f"{where}.value", "a relative step needs a nonzero nominal value")
        return Parameter(values=(v,), **common)
    if "value" in r:
        raise DeckError(f"{where}.value", "only a sensitivity study takes a nominal value: give "
                        "values, linspace or logspace")
    if sampling != "none":
        if given or len(bounds) < 2:
            raise DeckError(f"{where}.{given[0] if given else 'lower'}", f"sampling = "
                            f"\"{sampling}\" draws each parameter between lower and upper: give "
                            "both, and no values or ranges")
        lo = _number(r["lower"], f"{where}.lower")
        hi = _number(r["upper"], f"{where}.upper")
        if not lo < hi:
            raise DeckError(f"{where}.upper", f"expected upper > lower = {lo}, got {hi}")
        scale = r.get("scale", "linear")
        if scale not in ("linear", "log"):
            raise DeckError(f"{where}.scale", f"expected linear or log, got {shown(scale)}")
        if scale == "log" and lo <= 0:
            raise DeckError(f"{where}.lower", f"scale = \"log\" needs lower > 0, got {lo}")
        return Parameter(lower=lo, upper=hi, log=scale == "log", **common)
    if len(given) != 1 or bounds or "scale" in r:
        raise DeckError(where, "expected exactly one of values = [...], linspace = [start, stop, "
                        "num] or logspace = [start, stop, num] (lower/upper/scale: with "
                        f"sampling), got {', '.join(given + bounds) or 'none'}")
    how = given[0]
    if how == "values":
        vals = r["values"]
        if not isinstance(vals, list) or not vals:
            raise DeckError(f"{where}.values", f"expected a non-empty list, got {shown(vals)}")
    else:
        spec = r[how]
        if not isinstance(spec, list) or len(spec) != 3:
            raise DeckError(f"{where}.{how}", f"expected [start, stop, num], got {shown(spec)}")
        a = _number(spec[0], f"{where}.{how}[0]", positive=how == "logspace")
        b = _number(spec[1], f"{where}.{how}[1]", positive=how == "logspace")
        n = _count(spec[2], f"{where}.{how}[2]")
        vals = (np.linspace(a, b, n) if how == "linspace" else
                np.geomspace(a, b, n)).tolist()
    return Parameter(values=tuple(_like(v, old) for v in vals), **common)


def _flat(v: list) -> bool:
    """A list of numbers or of lists of numbers (a vector or matrix value), not of tables."""
    return not any(isinstance(e, dict) for e in v)


def _like(v, old):
    """``v`` as an integer where the deck's value is one and ``v`` is integral (a count)."""
    if isinstance(old, int) and not isinstance(old, bool) and isinstance(v, float) \
            and v.is_integer():
        return int(v)
    return v


def _grid(params: list[Parameter], combine: str) -> list[tuple]:
    groups: dict[object, list[int]] = {}
    for j, p in enumerate(params):
        label = "all" if combine == "zip" else (p.zip if p.zip is not None else ("own", j))
        groups.setdefault(label, []).append(j)
    axes = []
    for members in groups.values():
        n = {len(params[j].values) for j in members}
        if len(n) > 1:
            lens = ", ".join(f"{params[j].key}: {len(params[j].values)}" for j in members)
            raise DeckError(f"{params[members[-1]].where}.values", "zipped parameters need "
                            f"lists of one length, got {lens}")
        axes.append([tuple((j, params[j].values[i]) for j in members) for i in range(n.pop())])
    total = math.prod(len(a) for a in axes)
    if total > MAX_VARIANTS:
        raise DeckError("study.parameters", f"{total} variants: at most {MAX_VARIANTS}")
    variants = []
    for combo in itertools.product(*axes):
        row = [None] * len(params)
        for group in combo:
            for j, v in group:
                row[j] = v
        variants.append(tuple(row))
    return variants


def _samples(params: list[Parameter], sampling: str, table: dict) -> list[tuple]:
    from scipy.stats import qmc

    n = _count(table.get("samples"), "study.samples")
    seed = table.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise DeckError("study.seed", f"expected an integer >= 0, got {shown(seed)}")
    d = len(params)
    if sampling == "lhs":
        u = qmc.LatinHypercube(d=d, seed=seed).random(n)
    else:
        with warnings.catch_warnings():      # n not a power of 2: balance is lost, says scipy
            warnings.simplefilter("ignore", UserWarning)
            u = qmc.Sobol(d=d, scramble=True, seed=seed).random(n)
    cols = []
    for j, p in enumerate(params):
        if p.log:
            cols.append(np.exp(np.log(p.lower) + u[:, j] * (np.log(p.upper) - np.log(p.lower))))
        else:
            cols.append(p.lower + u[:, j] * (p.upper - p.lower))
    return [tuple(float(c[i]) for c in cols) for i in range(n)]


def _sensitivity_variants(params: list[Parameter], h: float) -> list[tuple]:
    nominal = tuple(float(p.values[0]) for p in params)
    variants = [nominal]
    for j in range(len(params)):
        for sign in (1.0, -1.0):
            row = list(nominal)
            row[j] = nominal[j] * (1.0 + sign * h)
            variants.append(tuple(row))
    return variants


def _outputs(table) -> list[Output]:
    if not isinstance(table, dict):
        raise DeckError("study.outputs", f"expected a table of named outputs, got "
                        f"{type_name(table)} {shown(table)}")
    out = []
    for name, spec in table.items():
        where = f"study.outputs.{name}"
        if not valid_name(name):
            raise DeckError(where, f"an output name is {NAME_RULE}")
        if isinstance(spec, str):
            spec = {"path": spec}
        _known(spec, OUTPUT_KEYS, where)
        path = spec.get("path")
        if not isinstance(path, str) or not path.strip("/"):
            raise DeckError(f"{where}.path", "expected the path of a dataset of the results "
                            f"file, such as modes/modes/frequencies, got {shown(path)}")
        index = spec.get("index", [])
        index = tuple(index) if isinstance(index, list) else (index,)
        for i in index:
            if not (i == ":" or (isinstance(i, int) and not isinstance(i, bool))):
                raise DeckError(f"{where}.index", f"expected integers or \":\" (all), got "
                                f"{shown(i)}")
        reduce = spec.get("reduce")
        if reduce is not None and reduce not in REDUCTIONS:
            raise DeckError(f"{where}.reduce", f"expected one of {', '.join(REDUCTIONS)}, got "
                            f"{shown(reduce)}")
        out.append(Output(name, path.strip("/"), index, reduce))
    return out


def check(study: Study) -> None:
    """Build every variant's deck through the normal deck checks, before any runs."""
    for i in range(len(study.variants)):
        try:
            deck_io.from_dict(study.data(i), study.base_dir, study.text, study.path)
        except FemError as err:
            raise variant_error(study, i, err) from None


def variant_error(study: Study, i: int, err: FemError) -> DeckError:
    """One error naming the study key, the variant ``i`` and its values.

    The key is the parameter's the deck error is about, if it is about one.
    """
    key = "study.parameters"
    deck_key = getattr(err, "key", "")
    for p in study.parameters:
        if deck_key == p.location or deck_key.startswith((p.location + ".",
                                                          p.location + "[")):
            key = f"{p.where}.key"
    values = ", ".join(f"{k} = {v!r}" for k, v in study.values(i).items())
    return DeckError(key, f"variant {i} ({values}): {err}")


def scalar(h5, out: Output) -> float:
    """The value of output ``out`` in open results file ``h5`` (KeyError, ValueError: why not)."""
    from fem.io.results import dataset_scalar

    return dataset_scalar(h5, out.path, out.index, out.reduce)
