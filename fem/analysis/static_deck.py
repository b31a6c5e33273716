"""The deck of a static step: its controls' keys checked against the model and the loads.

:meth:`fem.analysis.static.StaticStep.check` calls :func:`check` once the deck builder
(:mod:`fem.io.build_steps`) has checked what every step shares; the keys themselves are the fields
of :class:`fem.analysis.static.StaticSettings`.
"""

from __future__ import annotations

from fem.analysis.settings import MAX_INCREMENTS, from_values
from fem.dofs import DofMap
from fem.errors import DeckError
from fem.io.build import slot


def describe(variant: str) -> str:
    """How deck messages name a static step of ``variant`` (``"linear"`` or its control)."""
    if variant == "linear":
        return "a linear static step (set nonlinear = true for path following)"
    return f"a static step with control = \"{variant}\""


def check(cls, e, inputs, spec: dict):
    """The settings (class ``cls``) of static step ``e``: its control's node, DOF and target."""
    v, loads = e.values, spec["loads"]
    variant = cls.variant(v)
    if variant == "load":
        _load_control_counts(e, v)
    s = from_values(cls, {**v, "control": v["control"] if v["nonlinear"] else "load"})
    if variant == "displacement":
        for key in ("node", "dof", "target"):
            if v[key] is None:
                raise DeckError(f"{e.where}.{key}", "missing; displacement control needs node, "
                                "dof and target")
        s.node, s.dof = _free_dof(e, inputs, "displacement control needs")
        s.target = v["target"]
        if s.target == 0:
            raise DeckError(f"{e.where}.target", "must be nonzero")
    elif variant == "arclength":
        _arclength(e, inputs, s)
    if variant in ("displacement", "arclength"):
        for ld in loads:
            if ld.function is not None:
                raise DeckError(f"{e.where}.loads", f"load '{ld.name}' has a function; "
                                f"{variant} control scales proportional loads")
        if not loads:
            raise DeckError(f"{e.where}.loads", f"{variant} control needs a reference load")
    return s


def _arclength(e, inputs, s) -> None:
    """The arc lengths of an arclength step, and the DOF it watches if it names one."""
    v = e.values
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


def _free_dof(e, inputs, needs: str) -> tuple[int, int]:
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
