"""Build one ``[[steps]]`` entry: check the keys its kind uses, resolve loads, make settings."""

from __future__ import annotations

from fem.errors import DeckError
from fem.io.build import STEP_KEYS
from fem.static import StaticSettings


def _kind(v: dict) -> tuple[str, str]:
    if v["type"] == "buckling":
        return ("buckling", "")
    if not v["nonlinear"]:
        return ("static", "linear")
    return ("static", v["control"])


def _describe(kind: tuple[str, str]) -> str:
    if kind[0] == "buckling":
        return "a buckling step"
    if kind[1] == "linear":
        return "a linear static step (set nonlinear = true for path following)"
    return f"a static step with control = \"{kind[1]}\""


def build_step(b, e, model) -> dict:
    """A step description ``{name, type, loads, prescribed, settings}``."""
    v = e.values
    kind = _kind(v)
    allowed = STEP_KEYS[kind]
    for key in sorted(e.given - allowed):
        raise DeckError(f"{e.where}.{key}", f"not used by {_describe(kind)}")
    loads_by_name = {ld.name: ld for ld in model.loads}
    pres_by_name = {p.name: p for p in model.prescribed}
    loads = _select(v["loads"], loads_by_name, "load", f"{e.where}.loads")
    prescribed = _select(v["prescribed"], pres_by_name, "prescribed value",
                         f"{e.where}.prescribed")
    spec = {"name": v["name"], "type": v["type"], "loads": loads, "prescribed": prescribed,
            "where": e.where}
    if kind[0] == "buckling":
        if not loads:
            raise DeckError(f"{e.where}.loads", "a buckling step needs a reference load")
        spec["modes"] = v["modes"]
        return spec
    s = StaticSettings(nonlinear=v["nonlinear"], control=v["control"] if v["nonlinear"] else
                       "load", load_factor=v["load_factor"], increments=v["increments"],
                       min_increment=v["min_increment"], max_increment=v["max_increment"],
                       max_iterations=v["max_iterations"], tolerance=v["tolerance"])
    if kind[1] == "displacement":
        for key in ("node", "dof", "target"):
            if v[key] is None:
                raise DeckError(f"{e.where}.{key}", "missing; displacement control needs node, "
                                "dof and target")
        s.node = int(b.node_indices(v["node"], f"{e.where}.node")[0])
        s.dof = b._slot(v["dof"], f"{e.where}.dof")
        if model.fixed[s.node, s.dof]:
            raise DeckError(f"{e.where}.dof", f"node {v['node']} {v['dof']} is supported; "
                            "displacement control needs a free DOF")
        s.target = v["target"]
        if s.target == 0:
            raise DeckError(f"{e.where}.target", "must be nonzero")
    elif kind[1] == "arclength":
        if v["arc_length"] is None:
            raise DeckError(f"{e.where}.arc_length", "missing; arclength control needs it")
        s.arc_length, s.max_steps, s.psi = v["arc_length"], v["max_steps"], v["psi"]
        s.target_iterations, s.stop_load_factor = v["target_iterations"], v["stop_load_factor"]
    if kind[1] in ("displacement", "arclength"):
        for ld in loads:
            if ld.function is not None:
                raise DeckError(f"{e.where}.loads", f"load '{ld.name}' has a function; "
                                f"{kind[1]} control scales proportional loads")
        if not loads:
            raise DeckError(f"{e.where}.loads", f"{kind[1]} control needs a reference load")
    spec["settings"] = s
    return spec


def _select(names, table: dict, what: str, where: str) -> tuple:
    if names is None:
        return tuple(table.values())
    out = []
    for n in names:
        if n not in table:
            from fem.errors import did_you_mean

            raise DeckError(where, f"unknown {what} '{n}'" + did_you_mean(n, table))
        out.append(table[n])
    return tuple(out)
