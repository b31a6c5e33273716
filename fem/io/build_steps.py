"""Build the ``[[steps]]``: check the keys each kind uses, resolve loads, make settings.

The keys, their defaults and the keys each variant of a step uses come from the step type's
settings dataclass (:mod:`fem.analysis.settings`), as the deck reference does. Steps are built in
order, each from the model and the loads the steps before it left applied. What every step shares
is checked here (names, keys, choices, loads); the rest by the step type registered in
:data:`fem.analysis.STEP_TYPES` (its ``check``, declared with its deck module, e.g.
:mod:`fem.analysis.static_deck`): this module never names a type.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from fem.analysis import STEP_TYPES
from fem.analysis.base import options_prefix
from fem.analysis.settings import deck_fields, uses
from fem.elements.base import require
from fem.errors import DeckError
from fem.io.build import Entry, Nodes, lookup, unique
from fem.io.schema import STEP_COMMON


@dataclass(frozen=True)
class StepInputs:
    """What a step is built from: the model, its node table, velocity fields, output rate."""

    model: object
    nodes: Nodes
    velocity_fields: Mapping
    every: int = 1            # [output] every, for the number of frames a dynamic step writes
    base_dir: str = "."       # the deck's folder: files a step writes are relative to it
    inputs: tuple = ()        # the files the run reads (never written by a step)


def steps(entries: list[Entry], inputs: StepInputs) -> list[dict]:
    """``[[steps]]``: validated step descriptions with resolved loads, in order."""
    if not entries:
        raise DeckError("steps", "the deck has no [[steps]]: nothing to run")
    unique(entries, "step")
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
    out, applied = [], frozenset()         # the loads applied by the steps built so far
    for e in entries:
        spec, applied = build_step(e, inputs, applied)
        out.append(spec)
    return out


def _with_defaults(e: Entry) -> tuple[type, Entry]:
    """The step type's class, and the entry with that type's defaults for the keys not given."""
    v = dict(e.values)
    step = STEP_TYPES[v["type"]]
    for f in deck_fields(step.Settings):
        if f.name not in e.given:
            v[f.name] = None if f.metadata["setting"]["required"] else f.default
    return step, Entry(e.where, v, e.given)


def build_step(e: Entry, inputs: StepInputs, applied: frozenset) -> tuple[dict, frozenset]:
    """A step description ``{name, type, loads, prescribed, settings}``, and the loads applied.

    ``applied`` names the loads applied before the step; the set returned, those after it. What
    every step shares is checked here; the rest by its type's ``check``
    (:class:`fem.analysis.base.StepBase`).
    """
    step, entry = _with_defaults(e)
    v = entry.values
    _check_keys(step, entry, inputs.model)
    loads, removed, prescribed = _loads(entry, inputs.model, applied)
    supers = [g.name for g in inputs.model.groups if getattr(g, "internal_always", False)]
    if supers and step.NO_SUPERELEMENTS:
        raise DeckError(f"{e.where}.type", f"superelement '{supers[0]}' {step.NO_SUPERELEMENTS}")
    if supers and step.NO_LOADS is None:
        _superelement_gravity(entry, step, inputs.model, loads, removed, applied)
    if step.LOADS_STAY:     # buckling loads are a perturbation, the others look
        applied = (applied | {ld.name for ld in loads}) - {ld.name for ld in removed}
    spec = {"name": v["name"], "type": v["type"], "loads": loads, "prescribed": prescribed,
            "remove": removed, "where": e.where}
    if step.NO_LOADS is not None:
        if v["loads"]:
            raise DeckError(f"{e.where}.loads", f"a {v['type']} step applies no loads "
                            f"({step.NO_LOADS})")
        spec["loads"] = ()
    spec["settings"] = step.check(entry, inputs, spec)
    _required_given(step, entry)
    return spec, applied


def _required_given(step: type, e: Entry) -> None:
    """Every required key of the step's variant is given.

    The types' own checks say most in their own words first; this catches the rest (e.g. a
    stability sweep without ``parameter``).
    """
    cls = step.Settings
    variant = cls.variant(e.values)
    for f in deck_fields(cls):
        meta = f.metadata["setting"]
        if meta["required"] and uses(f, variant) and f.name not in e.given:
            raise DeckError(f"{e.where}.{f.name}", f"required by {step.describe(variant)}: "
                            f"{meta['doc']}")


def _superelement_gravity(e: Entry, step: type, model, loads, removed, applied) -> None:
    """Gravity on superelements: linear ones with load vectors, in steps that take modal loads.

    Refused where the step applies gravity or holds it from an earlier step and a superelement
    cannot take it: a co-rotational one, a file without ``reduced/gravity`` (reduce again), a
    step type whose loads reach the nodes only (:data:`fem.analysis.base.StepBase.MODAL_LOADS`).
    """
    gone = {ld.name for ld in removed}
    acting = any(ld.name == "gravity" for ld in loads) or (
        "gravity" in applied and "gravity" not in gone)
    if not acting:
        return
    key = f"{e.where}.loads"
    for g in model.groups:
        if not getattr(g, "internal_always", False):
            continue
        if g.options().get("formulation") != "linear":
            _corotational_gravity(e, step, g, key)
            continue
        if g.data.gravity is None:
            raise DeckError(key, f"gravity on superelement '{g.name}': its file {g.path!r} "
                            "holds no gravity load vectors (reduced/gravity, written by "
                            "cms_reduce steps since issue 33): reduce the component again")
        if not step.MODAL_LOADS:
            raise DeckError(key, f"gravity on superelement '{g.name}' is applied by static "
                            f"and dynamic steps only so far, not by a {e.values['type']} step; "
                            "name the step's "
                            "loads without \"gravity\" (or remove it before this step)")


def _corotational_gravity(e: Entry, step: type, g, key: str) -> None:
    """Gravity on a co-rotational superelement: 3D ones in energy-conserving dynamic steps.

    Its gravity turns with its frame (:meth:`fem.elements.superelement.corot3d.
    CorotSuperelement3D.gravity_conserving`), which only that scheme's step takes so far.
    """
    if hasattr(g, "gravity_conserving") and step.frame_gravity(e.values):
        return
    what = ("3D co-rotational superelements take it in dynamic steps with integrator = "
            "\"energy_conserving\" only so far" if hasattr(g, "gravity_conserving") else
            "planar co-rotational superelements do not take it yet")
    raise DeckError(key, f"gravity on the co-rotational superelement '{g.name}': {what}; name "
                    "the step's loads without \"gravity\" (or remove it before this step)")


def _check_keys(step: type, e: Entry, model) -> None:
    """What the step type asks of the element groups, the keys its variant uses, their choices."""
    v, cls = e.values, step.Settings
    variant = cls.variant(v)
    for capability, key, asked in step.requires(v):
        require(model.groups, capability, f"{e.where}.{key}", asked)
    allowed = {k.name for k in STEP_COMMON} | {f.name for f in deck_fields(cls)
                                               if uses(f, variant)}
    if variant not in cls.REMOVES:
        allowed.discard("remove")
    for key in sorted(e.given - allowed):
        raise DeckError(f"{e.where}.{key}", f"not used by {step.describe(variant)}")
    for f in deck_fields(cls):           # choices of this type (the flat schema has every type's)
        choices = f.metadata["setting"]["check"].get("choices")
        if f.name in e.given and choices and v[f.name] not in choices:
            raise DeckError(f"{e.where}.{f.name}", f"expected one of {', '.join(choices)} for "
                            f"{step.describe(variant)}, got {v[f.name]!r}")


def _loads(e: Entry, model, applied: frozenset) -> tuple[tuple, tuple, tuple]:
    """The loads a step applies (default: those no earlier step applied), removes, prescribes."""
    v = e.values
    loads_by_name = {ld.name: ld for ld in model.loads}
    pres_by_name = {p.name: p for p in model.prescribed}
    if v["loads"] is None:          # default: the loads no earlier step applied
        loads = tuple(ld for ld in model.loads if ld.name not in applied)
    else:
        loads = _select(v["loads"], loads_by_name, "load", f"{e.where}.loads")
    removed = _select(v["remove"] or [], loads_by_name, "load", f"{e.where}.remove")
    for ld in removed:
        if ld.name not in applied:
            raise DeckError(f"{e.where}.remove", f"load '{ld.name}' is not applied by an earlier "
                            "step, so it cannot be removed")
        if ld in loads:
            raise DeckError(f"{e.where}.remove", f"load '{ld.name}' is both applied and removed")
    prescribed = _select(v["prescribed"], pres_by_name, "prescribed value",
                         f"{e.where}.prescribed")
    return loads, removed, prescribed


def _select(names, table: dict, what: str, where: str) -> tuple:
    if names is None:
        return tuple(table.values())
    # "gravity" names the [gravity] table's load: without the table, say so
    return tuple(lookup(table, n, what, where, " (add a [gravity] table)"
                        if what == "load" and n == "gravity" else "") for n in names)

