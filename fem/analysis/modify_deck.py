"""The deck of a ``modify`` step: its keys (:class:`ModifySettings`) and their checks.

:class:`fem.analysis.modify.ModifyStep` declares them: :func:`check` runs once the deck builder
(:mod:`fem.io.build_steps`) has checked what every step shares, and checks the components, the
design parameters, alpha and the targets, resolving them (:class:`Part`). The keys of the tables
in ``components``, ``parameters`` and ``targets`` are :data:`COMPONENT`, :data:`PARAMETER` and
:data:`TARGET`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fem.analysis.settings import (
    MAX_ITERATIONS,
    MAX_MODES,
    REQUIRED,
    OneVariant,
    from_values,
    mass_setting,
    setting,
    where_setting,
)
from fem.cms import KINDS
from fem.errors import DeckError
from fem.io import keys
from fem.io.keys import Key, take
from fem.io.keys.entries import lookup

COMPONENT = [
    Key("name", "name", keys.REQUIRED, "the component's name"),
    Key("groups", "groups", keys.REQUIRED, "its element groups"),
    Key("modes", "int", None, "free-free modes kept, rigid-body modes included", positive=True,
        maximum=MAX_MODES),
    Key("cutoff", "float", None, "keep every free-free mode up to this frequency, rad/s",
        positive=True)]
PARAMETER = [
    Key("component", "str", keys.REQUIRED, "a component's name"),
    Key("kind", "str", keys.REQUIRED, "density or modulus", choices=KINDS)]
TARGET = [
    Key("mode", "int", keys.REQUIRED, "1-based mode number, rigid-body modes included",
        positive=True),
    Key("frequency", "float", keys.REQUIRED, "the target frequency, rad/s", positive=True)]


@dataclass(frozen=True)
class Part:
    """A component as the deck builder resolved it.

    Attributes
    ----------
    name : the component's name
    groups : its element groups' names
    modes, cutoff : its mode selection (exactly one given)
    masses : indices into the model's point masses and, per one, the node indices it keeps
    """

    name: str
    groups: tuple[str, ...]
    modes: int | None
    cutoff: float | None
    masses: tuple = ()


@dataclass
class ModifySettings(OneVariant):
    """Settings of a ``modify`` step: the deck keys of ``[[steps]]`` with that type."""

    components: list = setting("tables", REQUIRED, "modify: the components, `[{name = \"c\", "
                               "groups = [\"g\", ...], modes = n or cutoff = w}, ...]`: every "
                               "element group in exactly one; the interface (the nodes of two "
                               "or more components) is found; a component's modes or cutoff "
                               "replaces the step's")
    method: str = setting("str", "free_interface", "modify: how the components are reduced: "
                          "free_interface (Hutton & Smith: free-free modes and residual "
                          "attachment modes; modulus changes approximate) or craig_bampton "
                          "(fixed-interface and constraint modes; density and modulus changes "
                          "exact)", choices=("free_interface", "craig_bampton"))
    modes: int | None = setting("int", None, "modify: component modes kept per component "
                                "(free-free ones, rigid-body modes included; fixed-interface "
                                "ones with craig_bampton) (give modes or cutoff)",
                                positive=True, maximum=MAX_MODES)
    cutoff: float | None = setting("float", None, "modify: keep every component mode (free-"
                                   "free, or fixed-interface with craig_bampton) up to this "
                                   "frequency, rad/s (give modes or cutoff)", positive=True)
    mass: str = mass_setting()
    sensitivity_modes: list | None = setting("vector", None, "modify: the modes whose "
                                             "sensitivities to each component's density and "
                                             "modulus are tabulated (mode numbers: 1-based, "
                                             "rigid-body modes included; default: the first "
                                             "6 elastic modes)")
    parameters: list | None = setting("tables", None, "modify: design parameters, "
                                      "`[{component = \"c\", kind = \"density\" or "
                                      "\"modulus\"}, ...]`, each the component's whole mass "
                                      "or stiffness times 1 + alpha")
    alpha: list | None = setting("vector", None, "modify: forward modification: the "
                                 "parameters' fractional changes, one each, > -1")
    targets: list | None = setting("tables", None, "modify: inverse modification: "
                                   "`[{mode = k, frequency = w}, ...]`, mode k (1-based, "
                                   "rigid-body modes included) to w rad/s; alpha is found")
    max_iterations: int = setting("int", 20, "modify: Newton iterations of the inverse "
                                  "modification", positive=True, maximum=MAX_ITERATIONS)
    tolerance: float = setting("float", 1e-12, "modify: the inverse modification stops when "
                               "every omega^2 is within tolerance x target^2 of its target^2",
                               positive=True)
    output_modes: int = setting("int", 10, "modify: how many (modified) modes, the lowest, are "
                                "written to the results' modes and ParaView", positive=True,
                                maximum=MAX_MODES)
    # resolved by the deck's check (fem.analysis.modify_deck)
    parts: tuple = setting("tables", (), deck=False)          # Part per component
    interface: tuple = setting("nodes", (), deck=False)       # interface node indices
    design: tuple = setting("tables", (), deck=False)         # (component index, kind) pairs
    where: str = where_setting()          # the step entry, for messages


def check(e, inputs, spec: dict) -> ModifySettings:
    """The settings of ``modify`` step ``e``: its parts, interface and design resolved."""
    s = from_values(ModifySettings, e.values)
    model, where = inputs.model, e.where
    tables, names = _components(s, where, model)
    if model.constraints:
        raise DeckError(f"{where}.type", f"constraint group '{model.constraints[0].name}': "
                        "joints and ties are not reduced yet; a modify step takes models of "
                        "element groups only")
    parts, count = _parts(s, where, model, tables)
    s.parts, s.where = tuple(parts), where
    s.interface = tuple(int(k) for k in np.flatnonzero(count > 1))
    if s.sensitivity_modes is not None:
        s.sensitivity_modes = _mode_numbers(s.sensitivity_modes, f"{where}.sensitivity_modes")
    s.design = _design(s, where, names)
    _modification(s, where)
    return s


def _components(s, where: str, model) -> tuple[list, list[str]]:
    """The component tables with their groups' names, and the components' names."""
    by_name = {g.name: g for g in model.groups}
    owner: dict[str, str] = {}
    tables, names = [], []
    for i, table in enumerate(s.components):
        at = f"{where}.components[{i}]"
        c = take(table, COMPONENT, at)
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
    return tables, names


def _parts(s, where: str, model, tables: list) -> tuple[list[Part], np.ndarray]:
    """Each component's :class:`Part` (its point masses), and the components at each node."""
    by_name = {g.name: g for g in model.groups}
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
    return parts, count


def _design(s, where: str, names: list[str]) -> tuple:
    """The design parameters: ``(component index, kind)`` pairs, each once."""
    design = []
    for j, table in enumerate(s.parameters or []):
        at = f"{where}.parameters[{j}]"
        p = take(table, PARAMETER, at)
        if p["component"] not in names:
            lookup(dict.fromkeys(names), p["component"], "component", f"{at}.component")
        pair = (names.index(p["component"]), p["kind"])
        if pair in design:
            raise DeckError(at, f"the {p['kind']} of component '{p['component']}' is already "
                            f"parameter {design.index(pair)}")
        design.append(pair)
    return tuple(design)


def _modification(s, where: str) -> None:
    """A forward (``alpha``) or inverse (``targets``) modification of the design, or neither."""
    design = s.design
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
        targets = [take(t, TARGET, f"{where}.targets[{j}]") for j, t in enumerate(s.targets)]
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
