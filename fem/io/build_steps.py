"""Build the ``[[steps]]``: check the keys each kind uses, resolve loads, make settings.

The keys, their defaults and the keys each variant of a step uses come from the step type's
settings dataclass (:mod:`fem.analysis.settings`), as the deck reference does. Steps are built in
order, each from the model and the loads the steps before it left applied.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from fem.analysis import STEP_TYPES
from fem.analysis.base import options_prefix
from fem.analysis.eliminated import unsupported
from fem.analysis.settings import (
    MAX_FRAMES,
    MAX_INCREMENTS,
    MAX_MODES,
    MAX_TIME_STEPS,
    deck_fields,
    uses,
)
from fem.cms.modification import KINDS
from fem.dofs import DofMap
from fem.elements.base import require
from fem.errors import DeckError
from fem.io.build import Entry, Nodes, lookup, slot, unique
from fem.io.keys import REQUIRED, Key, take
from fem.io.schema import STEP_COMMON, sci, step_settings


@dataclass(frozen=True)
class StepInputs:
    """What a step is built from: the model, its node table, velocity fields, output rate."""

    model: object
    nodes: Nodes
    velocity_fields: Mapping
    every: int = 1            # [output] every, for the number of frames a dynamic step writes
    base_dir: str = "."       # the deck's folder: files a step writes are relative to it
    inputs: tuple = ()        # the files the run reads (never written by a step)


#: Step types that apply no loads, and why (the message of a step that lists some)
NO_LOADS = {
    "modal": "it linearizes about the state the steps before it left, with their loads on",
    "cms_reduce": "it reduces the component about its reference configuration",
    "modify": "it analyses the model about its reference configuration",
}


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


def _with_defaults(e) -> tuple[type, dict]:
    """The step type's settings class, and the deck values with that type's defaults."""
    v = dict(e.values)
    cls = step_settings()[v["type"]]
    for f in deck_fields(cls):
        if f.name not in e.given:
            v[f.name] = None if f.metadata["setting"]["required"] else f.default
    return cls, v


def _settings(cls, v: dict):
    """An instance of settings class ``cls`` from the deck values ``v``."""
    return cls(**{f.name: v[f.name] for f in deck_fields(cls)})


def _kind(v: dict, cls) -> tuple[str, str]:
    return (v["type"], cls.variant(v))


def _describe(kind: tuple[str, str]) -> str:
    if kind[0] != "static":
        return f"a {kind[0]} step"
    if kind[1] == "linear":
        return "a linear static step (set nonlinear = true for path following)"
    return f"a static step with control = \"{kind[1]}\""


def build_step(e: Entry, inputs: StepInputs, applied: frozenset) -> tuple[dict, frozenset]:
    """A step description ``{name, type, loads, prescribed, settings}``, and the loads applied.

    ``applied`` names the loads applied before the step; the set returned, those after it.
    """
    model = inputs.model
    cls, v = _with_defaults(e)
    kind = _kind(v, cls)
    for capability, key, asked in STEP_TYPES[v["type"]].requires(v):
        require(model.groups, capability, f"{e.where}.{key}", asked)
    allowed = {k.name for k in STEP_COMMON} | {f.name for f in deck_fields(cls)
                                               if uses(f, kind[1])}
    if kind[1] not in cls.REMOVES:
        allowed.discard("remove")
    for key in sorted(e.given - allowed):
        raise DeckError(f"{e.where}.{key}", f"not used by {_describe(kind)}")
    for f in deck_fields(cls):           # choices of this type (the flat schema has every type's)
        choices = f.metadata["setting"]["check"].get("choices")
        if f.name in e.given and choices and v[f.name] not in choices:
            raise DeckError(f"{e.where}.{f.name}", f"expected one of {', '.join(choices)} for "
                            f"{_describe(kind)}, got {v[f.name]!r}")
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
    supers = [g.name for g in model.groups if getattr(g, "internal_always", False)]
    if supers and kind[0] in ("linearize", "stability_sweep"):
        raise DeckError(f"{e.where}.type", f"superelement '{supers[0]}' is not linearized yet "
                        "(its modal coordinates have no rates in the linearized model); static, "
                        "modal and dynamic steps take superelements")
    if supers and kind[0] not in ("modal", "cms_reduce", "modify") and any(
            ld.name == "gravity" for ld in loads):
        raise DeckError(f"{e.where}.loads", f"gravity on superelement '{supers[0]}' is not "
                        "supported yet (its mass acts on modal coordinates, which take no "
                        "loads); name the step's loads without \"gravity\"")
    if kind[0] in ("static", "dynamic"):  # buckling loads are a perturbation, the others look
        applied = (applied | {ld.name for ld in loads}) - {ld.name for ld in removed}
    spec = {"name": v["name"], "type": v["type"], "loads": loads, "prescribed": prescribed,
            "remove": removed, "where": e.where}
    if kind[0] == "stability_sweep":
        spec["settings"] = _settings(cls, v)
        _sweep(e, inputs, spec["settings"], loads)
        return spec, applied
    if kind[0] == "linearize":         # its loads act at their start value and stay off after
        spec["settings"] = _settings(cls, v)
        _linearize(e, inputs, spec["settings"])
        return spec, applied
    if kind[0] in NO_LOADS:
        why = NO_LOADS[kind[0]]
        if v["loads"]:
            raise DeckError(f"{e.where}.loads", f"a {kind[0]} step applies no loads ({why})")
        spec["loads"] = ()
        spec["settings"] = _settings(cls, v)
        if kind[0] == "modal":
            spec["settings"].where = e.where
        check = {"cms_reduce": _cms_reduce, "modify": _modify}.get(kind[0])
        if check is not None:
            check(e, inputs, spec["settings"])
        return spec, applied
    if kind[0] == "buckling":
        if not loads:
            raise DeckError(f"{e.where}.loads", "a buckling step needs a reference load")
        spec["settings"] = _settings(cls, v)
        return spec, applied
    if kind[0] == "dynamic":
        return _dynamic(e, inputs, v, cls, spec), applied
    if kind[1] == "load":
        _load_control_counts(e, v)
    s = _settings(cls, {**v, "control": v["control"] if v["nonlinear"] else "load"})
    if kind[1] == "displacement":
        for key in ("node", "dof", "target"):
            if v[key] is None:
                raise DeckError(f"{e.where}.{key}", "missing; displacement control needs node, "
                                "dof and target")
        s.node, s.dof = _free_dof(e, inputs, "displacement control needs")
        s.target = v["target"]
        if s.target == 0:
            raise DeckError(f"{e.where}.target", "must be nonzero")
    elif kind[1] == "arclength":
        if v["arc_length"] is None:
            raise DeckError(f"{e.where}.arc_length", "missing; arclength control needs it")
        s.arc_length, s.max_steps, s.psi = v["arc_length"], v["max_steps"], v["psi"]
        s.target_iterations, s.stop_load_factor = v["target_iterations"], v["stop_load_factor"]
        s.max_arc_length = v["max_arc_length"] or 10 * v["arc_length"]
        if v["max_arc_length"] is not None and v["max_arc_length"] < v["arc_length"]:
            raise DeckError(f"{e.where}.max_arc_length", "must be at least arc_length")
        watched = [k for k in ("node", "dof", "target") if v[k] is not None]
        if watched and len(watched) < 3:
            raise DeckError(f"{e.where}.{watched[0]}", "stopping on a displacement needs node, "
                            "dof and target together")
        if watched:
            s.node, s.dof = _free_dof(e, inputs, "arc-length control watches")
            s.target = v["target"]
    if kind[1] in ("displacement", "arclength"):
        for ld in loads:
            if ld.function is not None:
                raise DeckError(f"{e.where}.loads", f"load '{ld.name}' has a function; "
                                f"{kind[1]} control scales proportional loads")
        if not loads:
            raise DeckError(f"{e.where}.loads", f"{kind[1]} control needs a reference load")
    spec["settings"] = s
    return spec, applied


def _cms_reduce(e: Entry, inputs: StepInputs, s) -> None:
    """Check a cms_reduce step's component, interface, mode selection and file; resolve them."""
    from fem.elements.superelement.group import is_superelement_file

    model, where = inputs.model, e.where
    by_name = {g.name: g for g in model.groups}
    if s.groups is not None:
        if not s.groups:
            raise DeckError(f"{where}.groups", "expected the names of the component's element "
                            "groups, got an empty list")
        chosen = {lookup(by_name, n, "element group", f"{where}.groups").name for n in s.groups}
        groups = [g for g in model.groups if g.name in chosen]
    else:
        groups = list(model.groups)
    for g in groups:
        if getattr(g, "internal_always", False):
            raise DeckError(f"{where}.groups", f"element group '{g.name}' is a superelement: a "
                            "superelement is not reduced again; name the groups of the "
                            "component with groups = [...]")
    require(groups, "mass", f"{where}.groups", 'type = "cms_reduce"')
    comp = np.unique(np.concatenate([g.conn.ravel() for g in groups]))
    for c in model.constraints:
        if np.isin(c.conn, comp).any():
            raise DeckError(f"{where}.groups", f"constraint group '{c.name}' acts on nodes of "
                            "the component: joints and ties inside a component are not reduced "
                            "yet; make their nodes interface nodes of a smaller component")
    key = f"{where}.interface"
    nodes = inputs.nodes.indices(s.interface, key)
    uniq, counts = np.unique(nodes, return_counts=True)
    if np.any(counts > 1):
        raise DeckError(key, f"expected each node once, got node "
                        f"{int(inputs.nodes.ids[uniq[counts > 1][0]])} more than once")
    outside = nodes[~np.isin(nodes, comp)]
    if len(outside):
        names = ", ".join(f"'{g.name}'" for g in groups)
        raise DeckError(key, f"node {int(inputs.nodes.ids[outside[0]])} is not a node of the "
                        f"component (the element groups {names}); the interface is nodes of "
                        "the component that other parts of a model connect to")
    if (s.modes is None) == (s.cutoff is None):
        raise DeckError(f"{where}.modes" if s.modes is None else f"{where}.cutoff",
                        "expected either modes (the number of component modes kept) or cutoff "
                        "(every component mode up to this frequency, rad/s), got "
                        + ("neither" if s.modes is None else "both"))
    s.nodes, s.where = tuple(int(i) for i in nodes), where
    if s.file is None:
        return
    key = f"{where}.file"
    path = os.path.abspath(os.path.join(inputs.base_dir, s.file))
    if os.path.splitext(path)[1].lower() not in (".h5", ".hdf5"):
        raise DeckError(key, f"expected a superelement file ending in .h5, got {s.file!r}")
    # a deck writes only inside its own folder: "../x.h5", an absolute path or a symbolic link
    # leading out of it would let a deck someone else wrote create or replace any .h5 file
    folder = os.path.realpath(inputs.base_dir)
    if os.path.commonpath([folder, os.path.realpath(path)]) != folder:
        raise DeckError(key, f"{s.file!r} is outside the deck's folder ({folder}): a deck "
                        "writes its files only there; give a name relative to it, e.g. "
                        f"{os.path.basename(path)!r}")
    for src in inputs.inputs:
        if os.path.exists(path) and os.path.exists(src) and os.path.samefile(path, src):
            raise DeckError(key, f"{s.file!r} is an input of this run ({src}); a step never "
                            "overwrites its inputs: choose another file")
    if os.path.lexists(path) and not is_superelement_file(path):
        raise DeckError(key, f"{s.file!r} exists and is not a superelement file; fem does not "
                        "overwrite files it did not write: remove it or choose another")
    s.path = path


MODIFY_COMPONENT = [
    Key("name", "name", REQUIRED, "the component's name"),
    Key("groups", "groups", REQUIRED, "its element groups"),
    Key("modes", "int", None, "free-free modes kept, rigid-body modes included", positive=True,
        maximum=MAX_MODES),
    Key("cutoff", "float", None, "keep every free-free mode up to this frequency, rad/s",
        positive=True)]
MODIFY_PARAMETER = [
    Key("component", "str", REQUIRED, "a component's name"),
    Key("kind", "str", REQUIRED, "density or modulus", choices=KINDS)]
MODIFY_TARGET = [
    Key("mode", "int", REQUIRED, "1-based mode number, rigid-body modes included", positive=True),
    Key("frequency", "float", REQUIRED, "the target frequency, rad/s", positive=True)]


def _modify(e: Entry, inputs: StepInputs, s) -> None:
    """Check a modify step's components, parameters, alpha and targets; resolve them."""
    from fem.analysis.modify import Part

    model, where = inputs.model, e.where
    by_name = {g.name: g for g in model.groups}
    owner: dict[str, str] = {}
    tables, names = [], []
    for i, table in enumerate(s.components):
        at = f"{where}.components[{i}]"
        c = take(table, MODIFY_COMPONENT, at)
        if c["name"] in names:
            raise DeckError(f"{at}.name", f"duplicate component name '{c['name']}' (first at "
                            f"{where}.components[{names.index(c['name'])}])")
        groups = [c["groups"]] if isinstance(c["groups"], str) else c["groups"]
        for n in groups:
            g = lookup(by_name, n, "element group", f"{at}.groups")
            if n in owner:
                raise DeckError(f"{at}.groups", f"element group '{n}' is named twice (already "
                                f"in component '{owner[n]}'): every group belongs to exactly "
                                "one component")
            if getattr(g, "internal_always", False):
                raise DeckError(f"{at}.groups", f"element group '{n}' is a superelement: a "
                                "superelement is not reduced again")
            owner[n] = c["name"]
        if c["modes"] is not None and c["cutoff"] is not None:
            raise DeckError(f"{at}.cutoff", "expected either modes or cutoff, got both")
        if c["modes"] is None and c["cutoff"] is None and (s.modes is None) == (s.cutoff is None):
            raise DeckError(f"{where}.modes" if s.modes is None else f"{where}.cutoff",
                            f"component '{c['name']}': expected either modes (the free-free "
                            "modes kept per component, rigid-body modes included) or cutoff "
                            "(every one up to this frequency, rad/s), in the step or in the "
                            "component, got " + ("neither" if s.modes is None else "both"))
        names.append(c["name"])
        tables.append((c, groups))
    missing = [g.name for g in model.groups if g.name not in owner]
    if missing:
        raise DeckError(f"{where}.components", f"element group '{missing[0]}' is in no "
                        "component: every element group belongs to exactly one")
    if model.constraints:
        raise DeckError(f"{where}.type", f"constraint group '{model.constraints[0].name}': "
                        "joints and ties are not reduced yet; a modify step takes models of "
                        "element groups only")
    nodes = [np.unique(np.concatenate([by_name[n].conn.ravel() for n in groups]))
             for _, groups in tables]
    count = np.bincount(np.concatenate(nodes), minlength=model.n_nodes)
    for i, ((c, _), own) in enumerate(zip(tables, nodes, strict=True)):
        if not (count[own] > 1).any():
            raise DeckError(f"{where}.components[{i}]", f"component '{c['name']}' shares no "
                            "node with another component: the interface is the nodes of two "
                            "or more components, and a model of one piece needs at least two")
    parts, taken = [], np.zeros(model.n_nodes, dtype=bool)
    for (c, groups), own in zip(tables, nodes, strict=True):
        masses = []                  # point masses at its nodes that no component before took
        for j, pm in enumerate(model.masses):
            keep = np.isin(pm.nodes, own) & ~taken[pm.nodes]
            if keep.any():
                masses.append((j, tuple(int(k) for k in np.asarray(pm.nodes)[keep])))
        taken[own] = True
        modes, cutoff = c["modes"], c["cutoff"]
        if modes is None and cutoff is None:
            modes, cutoff = s.modes, s.cutoff
        parts.append(Part(c["name"], tuple(groups), modes, cutoff, tuple(masses)))
    for j, pm in enumerate(model.masses):
        if not taken[pm.nodes].all():
            raise DeckError(f"masses[{j}]", f"a point mass of '{pm.name}' is at a node of no "
                            f"component (no element of {where}'s components holds it)")
    s.parts, s.where = tuple(parts), where
    s.interface = tuple(int(k) for k in np.flatnonzero(count > 1))
    if s.sensitivity_modes is not None:
        s.sensitivity_modes = _mode_numbers(s.sensitivity_modes, f"{where}.sensitivity_modes")
    design = []
    for j, table in enumerate(s.parameters or []):
        at = f"{where}.parameters[{j}]"
        p = take(table, MODIFY_PARAMETER, at)
        if p["component"] not in names:
            lookup(dict.fromkeys(names), p["component"], "component", f"{at}.component")
        pair = (names.index(p["component"]), p["kind"])
        if pair in design:
            raise DeckError(at, f"the {p['kind']} of component '{p['component']}' is already "
                            f"parameter {design.index(pair)}")
        design.append(pair)
    s.design = tuple(design)
    if s.alpha is not None and s.targets is not None:
        raise DeckError(f"{where}.alpha", "expected alpha (forward modification) or targets "
                        "(inverse modification: alpha is found), got both")
    if design and s.alpha is None and s.targets is None:
        raise DeckError(f"{where}.parameters", "expected alpha (forward modification) or "
                        "targets (inverse modification) with the parameters, got neither")
    if not design and (s.alpha is not None or s.targets is not None):
        key = "alpha" if s.alpha is not None else "targets"
        raise DeckError(f"{where}.{key}", "expected parameters = [{component = \"c\", kind = "
                        "\"density\" or \"modulus\"}, ...] to go with it, got none")
    if s.alpha is not None:
        a = [float(x) for x in s.alpha]
        if len(a) != len(design) or any(x <= -1 for x in a):
            raise DeckError(f"{where}.alpha", f"expected {len(design)} fractional changes, one "
                            "per parameter, each > -1 (the property times 1 + alpha stays "
                            f"positive), got {list(s.alpha)}")
        s.alpha = a
    if s.targets is not None:
        targets = [take(t, MODIFY_TARGET, f"{where}.targets[{j}]")
                   for j, t in enumerate(s.targets)]
        seen = [t["mode"] for t in targets]
        for j, m in enumerate(seen):
            if m in seen[:j]:
                raise DeckError(f"{where}.targets[{j}].mode", f"mode {m} has a target already "
                                f"({where}.targets[{seen.index(m)}])")
        s.targets = targets


def _mode_numbers(values, where: str) -> list[int]:
    """Distinct 1-based mode numbers (integers, written as 2 or 2.0)."""
    if not values or any(x != int(x) or x < 1 for x in values):
        raise DeckError(where, f"expected a list of mode numbers (integers from 1), got "
                        f"{list(values)}")
    out = [int(x) for x in values]
    if len(set(out)) != len(out):
        raise DeckError(where, f"expected each mode once, got {out}")
    return out


def _sweep(e: Entry, inputs: StepInputs, s, loads) -> None:
    """Check a stability sweep's values, axis and center, and that a load sweep has loads."""
    from fem.analysis.sweep import check_values

    check_values(s.values, f"{e.where}.values")
    dim = inputs.model.dim
    if s.parameter == "load":
        if not loads:
            raise DeckError(f"{e.where}.loads", "a load sweep scales the step's loads: name "
                            "them (or leave loads out to take those no earlier step applied)")
        for key in ("axis", "center", "frame", "orders"):
            if getattr(s, key) is not None:
                raise DeckError(f"{e.where}.{key}", "used by parameter = \"spin\" only")
        return
    if s.orders is not None:
        from fem.analysis.sweep import MAX_ORDERS

        k = np.asarray(s.orders, dtype=float)
        if len(k) > MAX_ORDERS or not np.all(np.isfinite(k) & (k > 0)):
            raise DeckError(f"{e.where}.orders", f"expected at most {MAX_ORDERS} positive engine "
                            f"orders, e.g. [1, 2], got {list(s.orders)}")
    if s.axis is not None:
        if dim == 2:
            raise DeckError(f"{e.where}.axis", "a 2D model spins about z: leave axis out")
        if len(s.axis) != 3 or not np.any(np.asarray(s.axis, dtype=float)):
            raise DeckError(f"{e.where}.axis", f"expected a nonzero [ax, ay, az], got "
                            f"{list(s.axis)}")
    if s.center is not None and len(s.center) != dim:
        raise DeckError(f"{e.where}.center", f"expected {dim} coordinates, got "
                        f"{list(s.center)}")


def _linearize(e: Entry, inputs: StepInputs, s) -> None:
    """Check a linearize step's spin, center, inputs and outputs; resolve the DOFs named."""
    dim = inputs.model.dim
    if s.spin is not None:
        if len(s.spin) != (1 if dim == 2 else 3):
            raise DeckError(f"{e.where}.spin", "expected " + ("[wz] (2D: a spin about z)"
                            if dim == 2 else "[wx, wy, wz]") + f", got {list(s.spin)}")
        s.spin = [float(w) for w in s.spin]
    if s.center is not None:
        if s.spin is None:
            raise DeckError(f"{e.where}.center", "a point of the spin axis: give spin too")
        if len(s.center) != dim:
            raise DeckError(f"{e.where}.center", f"expected {dim} coordinates, got "
                            f"{list(s.center)}")
    for key in ("inputs", "outputs"):
        if getattr(s, key) is None:
            continue
        entries = []
        for i, text in enumerate(getattr(s, key) or []):
            where = f"{e.where}.{key}[{i}]"
            words = text.split()
            quantity = "displacement"
            if key == "outputs" and len(words) == 3 and words[2] in ("displacement", "velocity"):
                quantity = words.pop()
            if len(words) != 2:
                raise DeckError(where, "expected \"<node> <dof>\"" + (
                    " or \"<node> <dof> velocity\"" if key == "outputs" else "")
                    + f", e.g. \"11 uy\", got {text!r}")
            try:
                node_id = int(words[0])
            except ValueError:
                raise DeckError(where, f"{words[0]!r} is not a node id") from None
            node = int(inputs.nodes.indices([node_id], where)[0])
            dof = slot(dim, words[1], where)
            model = inputs.model
            if not DofMap.build(model).active[node, dof] or model.fixed[node, dof]:
                raise DeckError(where, f"node {node_id} {words[1]} is not a free DOF (supported, "
                                "or no element uses it)")
            entries.append((node, dof, quantity))
        setattr(s, key, entries)


def _free_dof(e: Entry, inputs: StepInputs, needs: str) -> tuple[int, int]:
    """Node index and DOF slot of a step's ``node`` and ``dof``, which must be a free DOF."""
    v, model = e.values, inputs.model
    node = int(inputs.nodes.indices(v["node"], f"{e.where}.node")[0])
    dof = slot(model.dim, v["dof"], f"{e.where}.dof")
    if not DofMap.build(model).active[node, dof]:
        raise DeckError(f"{e.where}.dof", f"node {v['node']} has no DOF {v['dof']}: no "
                        f"element using it connects to the node; {needs} a free DOF")
    if model.fixed[node, dof] or any(p.slot == dof and node in p.nodes
                                     for p in model.prescribed):
        raise DeckError(f"{e.where}.dof", f"node {v['node']} {v['dof']} is supported or "
                        f"prescribed; {needs} a free DOF")
    return node, dof


def _load_control_counts(e, v: dict) -> None:
    """``load_factor`` applies a load, in at most ``MAX_INCREMENTS`` increments."""
    if v["load_factor"] == 0:
        raise DeckError(f"{e.where}.load_factor", "expected a nonzero load factor, got 0: the "
                        "step applies no load (a negative one reverses the loads)")
    count = v["increments"]
    if v["max_increment"] is not None:
        count = max(count, abs(v["load_factor"]) / v["max_increment"])
    if count > MAX_INCREMENTS:
        raise DeckError(f"{e.where}.max_increment", f"expected at most {MAX_INCREMENTS} "
                        f"increments, got |load_factor| / max_increment = {count:.3g}; raise "
                        "max_increment")


def _select(names, table: dict, what: str, where: str) -> tuple:
    if names is None:
        return tuple(table.values())
    # "gravity" names the [gravity] table's load: without the table, say so
    return tuple(lookup(table, n, what, where, " (add a [gravity] table)"
                        if what == "load" and n == "gravity" else "") for n in names)


def _dynamic(e: Entry, inputs: StepInputs, v: dict, cls, spec: dict) -> dict:
    for key in ("time_step", "duration"):
        if v[key] is None:
            raise DeckError(f"{e.where}.{key}", "missing; a dynamic step needs time_step and "
                            "duration")
    if v["time_step"] > v["duration"]:
        raise DeckError(f"{e.where}.time_step", f"{v['time_step']} exceeds the duration "
                        f"{v['duration']}")
    steps = v["duration"] / v["time_step"]
    if steps > MAX_TIME_STEPS:
        raise DeckError(f"{e.where}.time_step", f"expected at most {sci(MAX_TIME_STEPS)} time "
                        f"steps, got duration / time_step = {steps:.3g} (time_step = "
                        f"{v['time_step']!r}, duration = {v['duration']!r})")
    if v["output_interval"] is not None:
        frames = v["duration"] / max(v["output_interval"], v["time_step"])
        key, what = "output_interval", "duration / output_interval"
    else:
        frames = steps / inputs.every
        key, what = "time_step", "duration / time_step / [output] every"
    if frames > MAX_FRAMES:
        raise DeckError(f"{e.where}.{key}", f"expected at most {sci(MAX_FRAMES)} output frames, "
                        f"got {what} = {frames:.3g}; write fewer frames (a longer "
                        "output_interval, or [output] every)")
    refused = unsupported(inputs.model, v, e.given, spec["loads"], spec["prescribed"])
    if refused is not None:
        raise DeckError(f"{e.where}.{refused[0]}", refused[1])
    supers = [g.name for g in inputs.model.groups if getattr(g, "internal_always", False)]
    if supers and v["integrator"] in ("trapezoidal", "generalized_alpha"):
        raise DeckError(f"{e.where}.integrator", f"superelement '{supers[0]}': its modal "
                        "coordinates are integrated by the mid-point family only; use "
                        "integrator = \"energy_conserving\" or \"midpoint\"")
    if v["rho_inf"] > 1:
        raise DeckError(f"{e.where}.rho_inf", f"must lie in [0, 1], got {v['rho_inf']}")
    if "rho_inf" in e.given and v["integrator"] != "generalized_alpha":
        raise DeckError(f"{e.where}.rho_inf", "used by integrator = \"generalized_alpha\" only")
    fields = []
    for name in v["velocities"] or []:
        fields.append(lookup(inputs.velocity_fields, name, "velocity field",
                             f"{e.where}.velocities"))
    spec["settings"] = _settings(cls, {**v, "velocities": tuple(fields)})
    return spec
