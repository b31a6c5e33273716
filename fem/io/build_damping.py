"""Structural (Rayleigh) damping: the ``[[damping]]`` entries, ``C = alpha M + beta K``.

An entry without ``groups`` damps the whole model: every structural element group that no other
entry names (beams, trusses, shells, springs, rigid bodies; not the force elements, contacts and
superelements, which damp by their own laws) and the ``[[masses]]``; an entry with ``groups``
damps those groups with its own factors. Each damped group gets a
:class:`fem.elements.force.rayleigh.RayleighDamping` group named ``<group>_damping`` on its
nodes (the point masses' is ``masses_damping``), which every integrator and the linearize step
take as a force element (its energy in ``energy/damping``).
"""

from __future__ import annotations

import numpy as np

from fem.elements.contact.group import Contact
from fem.elements.force.base import ForceElement
from fem.elements.force.rayleigh import RayleighDamping
from fem.errors import DeckError, did_you_mean
from fem.io.keys.entries import Entry
from fem.model import DOF_SLOTS


def _structural(g) -> str | None:
    """Why group ``g`` takes no Rayleigh damping, or None."""
    if isinstance(g, ForceElement):
        return "a force element (give it a damping of its own)"
    if isinstance(g, Contact):
        return "a contact group (its law has its damping)"
    if g.inertia in ("superelement", "floating"):
        return "a superelement (give it modal damping: its damping_ratios)"
    return None


def damping(entries: list[Entry], groups: tuple, masses: tuple, dim: int, n_nodes: int) -> tuple:
    """The Rayleigh damping groups of the ``[[damping]]`` entries (module doc)."""
    by_name = {g.name: g for g in groups}
    named: dict[str, str] = {}
    whole = None
    for e in entries:
        v, w = e.values, e.where
        if v["alpha"] == 0 and v["beta"] == 0:
            raise DeckError(f"{w}.alpha", "no damping: give alpha (mass-proportional) or beta "
                            "(stiffness-proportional), or both, positive")
        if v["groups"] is None:
            if whole is not None:
                raise DeckError(f"{w}.groups", f"a second model-wide entry ({whole.where} "
                                "has no groups either): name the groups of all but one")
            whole = e
            continue
        names = [v["groups"]] if isinstance(v["groups"], str) else list(v["groups"])
        for gname in names:
            if gname not in by_name:
                raise DeckError(f"{w}.groups", f"unknown element group '{gname}'"
                                + did_you_mean(gname, by_name) + "; the groups are: "
                                + ", ".join(by_name))
            if gname in named:
                raise DeckError(f"{w}.groups", f"group '{gname}' is damped twice (also by "
                                f"{named[gname]})")
            why = _structural(by_name[gname])
            if why is not None:
                raise DeckError(f"{w}.groups", f"group '{gname}' takes no Rayleigh damping: "
                                f"it is {why}")
            named[gname] = w
    out = []
    taken = set(by_name)

    def add(host, v):
        name = f"{host.name}_damping"
        if name in taken:
            raise DeckError("damping", f"the damping group's name '{name}' is already an "
                            "element group's: rename that group")
        taken.add(name)
        out.append(RayleighDamping(name, host, v["alpha"], v["beta"], v["stiffness"]))

    for e in entries:
        if e.values["groups"] is not None:
            names = [e.values["groups"]] if isinstance(e.values["groups"], str) \
                else e.values["groups"]
            for gname in names:
                add(by_name[gname], e.values)
    if whole is not None:
        for g in groups:
            if g.name not in named and _structural(g) is None:
                add(g, whole.values)
        pm = _point_masses(whole, masses, groups, dim, n_nodes)
        if pm is not None:
            out.append(pm)
    return tuple(out)


def _point_masses(e: Entry, masses: tuple, groups: tuple, dim: int, n_nodes: int):
    """The damping group of the point masses, on the DOFs the elements give all of their nodes."""
    if not masses or e.values["alpha"] == 0:
        return None
    slots = DOF_SLOTS[dim]
    ns = len(slots)
    blocks = np.zeros((n_nodes, ns, ns))
    for pm in masses:
        for k in range(dim):
            np.add.at(blocks[:, k, k], pm.nodes, pm.mass)
        if dim == 2:
            np.add.at(blocks[:, 2, 2], pm.nodes, pm.inertia[2, 2])
        else:
            np.add.at(blocks[:, 3:6, 3:6], pm.nodes, pm.inertia)
    nodes = np.unique(np.concatenate([pm.nodes for pm in masses]))
    active = np.zeros((n_nodes, ns), dtype=bool)
    for g in groups:
        cols = [slots.index(d) for d in g.dof_names]
        active[np.ix_(g.conn.ravel(), cols)] = True
    cols = [k for k in range(ns) if active[nodes, k].all()]
    if not cols:
        return None
    names = tuple(slots[k] for k in cols)
    M = blocks[nodes][:, cols][:, :, cols]
    X = np.zeros((n_nodes, 3))
    return RayleighDamping("masses_damping", None, e.values["alpha"], 0.0, "initial",
                           conn=nodes[:, None], X=X, dim=dim, dof_names=names, masses=M)
