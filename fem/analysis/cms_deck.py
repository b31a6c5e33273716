"""The deck of a ``cms_reduce`` step: its keys (:class:`CmsReduceSettings`) and their checks.

:class:`fem.analysis.cms.CmsReduceStep` declares them: :func:`check` runs once the deck builder
(:mod:`fem.io.build_steps`) has checked what every step shares, and checks the component, its
interface, the mode selection and the superelement file.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from fem.analysis.settings import (
    MAX_MODES,
    REQUIRED,
    OneVariant,
    from_values,
    mass_setting,
    setting,
    where_setting,
)
from fem.elements.base import require
from fem.elements.superelement.group import is_superelement_file
from fem.errors import DeckError
from fem.io.keys.entries import lookup

METHODS = ("craig_bampton", "free_interface")


@dataclass
class CmsReduceSettings(OneVariant):
    """Settings of a ``cms_reduce`` step: the deck keys of ``[[steps]]`` with that type."""

    interface: object = setting("nodes", REQUIRED, "cms_reduce: the component's interface "
                                "nodes (node id, list of ids or node-set name); every free DOF "
                                "of them is a boundary unknown of the superelement")
    method: str = setting("str", "craig_bampton", "cms_reduce: craig_bampton (fixed-interface "
                          "modes and static constraint modes) or free_interface (free-free "
                          "modes and residual attachment modes, boundary form)",
                          choices=METHODS)
    groups: tuple | None = setting("names", None, "cms_reduce: the element groups of the "
                                   "component (default: all)")
    modes: int | None = setting("int", None, "cms_reduce: number of component modes kept "
                                "(give modes or cutoff)", positive=True, maximum=MAX_MODES)
    cutoff: float | None = setting("float", None, "cms_reduce: keep every component mode up to "
                                   "this frequency, rad/s (give modes or cutoff)", positive=True)
    mass: str = mass_setting()
    file: str | None = setting("str", None, "cms_reduce: write the superelement file here "
                               "(HDF5, relative to the deck, inside its folder), for "
                               "[[elements]] type = \"superelement\"")
    modal_derivatives: bool = setting("bool", False, "cms_reduce: add the kept modes' static "
                                      "modal derivatives to the basis and write the "
                                      "component's own strain energy as a quartic polynomial "
                                      "of the reduced coordinates (geometric stiffening of 3D "
                                      "co-rotational superelements; 3D, craig_bampton)")
    # resolved by the deck's check (fem.analysis.cms_deck)
    nodes: tuple = setting("nodes", (), deck=False)          # interface node indices
    path: str | None = setting("str", None, deck=False)      # file, absolute
    where: str = where_setting()         # the step entry, for messages


def check(e, inputs, spec: dict) -> CmsReduceSettings:
    """The settings of ``cms_reduce`` step ``e``, its nodes and file resolved."""
    s = from_values(CmsReduceSettings, e.values)
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
    nodes = _interface(s, where, inputs, groups, comp)
    if (s.modes is None) == (s.cutoff is None):
        raise DeckError(f"{where}.modes" if s.modes is None else f"{where}.cutoff",
                        "expected either modes (the number of component modes kept) or cutoff "
                        "(every component mode up to this frequency, rad/s), got "
                        + ("neither" if s.modes is None else "both"))
    if s.modal_derivatives and (model.dim != 3 or s.method != "craig_bampton"):
        raise DeckError(f"{where}.modal_derivatives", "built for 3D components reduced by "
                        "method = \"craig_bampton\" only so far; leave it out")
    s.nodes, s.where = tuple(int(i) for i in nodes), where
    if s.file is not None:
        s.path = _file(s.file, f"{where}.file", inputs)
    return s


def _interface(s, where: str, inputs, groups: list, comp):
    """The interface's node indices: each once, each a node of the component ``comp``."""
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
    return nodes


def _file(file: str, key: str, inputs) -> str:
    """The absolute path of the superelement file ``file``, which the step may write."""
    path = os.path.abspath(os.path.join(inputs.base_dir, file))
    if os.path.splitext(path)[1].lower() not in (".h5", ".hdf5"):
        raise DeckError(key, f"expected a superelement file ending in .h5, got {file!r}")
    # a deck writes only inside its own folder: "../x.h5", an absolute path or a symbolic link
    # leading out of it would let a deck someone else wrote create or replace any .h5 file
    folder = os.path.realpath(inputs.base_dir)
    if os.path.commonpath([folder, os.path.realpath(path)]) != folder:
        raise DeckError(key, f"{file!r} is outside the deck's folder ({folder}): a deck "
                        "writes its files only there; give a name relative to it, e.g. "
                        f"{os.path.basename(path)!r}")
    for src in inputs.inputs:
        if os.path.exists(path) and os.path.exists(src) and os.path.samefile(path, src):
            raise DeckError(key, f"{file!r} is an input of this run ({src}); a step never "
                            "overwrites its inputs: choose another file")
    try:
        ours = not os.path.lexists(path) or is_superelement_file(path)
    except BlockingIOError:
        raise DeckError(key, f"{file!r} is open in another program that writes it (HDF5's file "
                        "lock): close it there, or choose another file") from None
    if not ours:
        raise DeckError(key, f"{file!r} exists and is not a superelement file; fem does not "
                        "overwrite files it did not write: remove it or choose another")
    return path
