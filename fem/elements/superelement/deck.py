"""The deck entry of :class:`~fem.elements.superelement.Superelement` groups.

``[[elements]] type = "superelement"``: its keys (:data:`KEYS`) and its construction
(:func:`build`), registered with the class in :mod:`fem.elements`. One superelement per entry,
read from ``file`` (relative to the deck; a ``cms_reduce`` step writes it), its interface nodes
mapped in order onto the model's ``nodes`` (default: the nodes of the same ids). ``formulation``:
``"linear"`` (small displacements, :class:`~fem.elements.superelement.Superelement`) or
``"corotational"`` (large motion on a floating frame: in 2D
:class:`~fem.elements.superelement.corot.CorotSuperelement`, in 3D
:class:`~fem.elements.superelement.corot3d.CorotSuperelement3D`, the frame of the first
interface node, which needs rotations; files reduced with ``mass = "lumped"``, components
without supports). ``damping_ratios``: modal damping of the
component modes (linear superelements, :mod:`fem.elements.superelement.group`).
"""

from __future__ import annotations

import os

import numpy as np

from fem.elements.superelement.corot import RIGID, CorotSuperelement
from fem.elements.superelement.corot3d import CorotSuperelement3D
from fem.elements.superelement.group import Superelement, read
from fem.errors import DeckError
from fem.io.keys import REQUIRED, Key
from fem.io.keys.entries import Entry
from fem.io.keys.groups import FORMULATION, GroupInputs, GroupPiece

TABLE = "elements"
PLURAL = "superelements"
KEYS = [Key("file", "str", REQUIRED, "superelements: the superelement file (HDF5, relative to "
            "the deck) a cms_reduce step wrote with its key file"),
        Key("nodes", "nodes", None, "superelements: the model's node ids onto which the file's "
            "interface nodes map, in the file's order (default: the nodes of the same ids); "
            "they must lie where the file's do, up to one translation"),
        FORMULATION,
        Key("geometric_stiffening", "bool", None, "co-rotational superelements: stiffening "
            "by the mean axial strain (the chord elongation plus the bending's second-order "
            "elongation, with the file's chord stiffening: 2D components with two interface "
            "nodes; in 3D the component's own polynomial strain energy, files reduced with "
            "modal_derivatives = true); default true when the file has it, false turns it "
            "off"),
        Key("damping_ratios", "number_or_vector", None, "superelements: modal damping, the "
            "damping ratio of each component mode (a list, one per generalized coordinate, "
            "in the order of their frequencies) or one ratio for all; the interface unknowns "
            "are not damped (linear formulation)")]
NOT_USED: dict[str, str] = {}

PLACEMENT = 1e-6        # interface positions agree to this share of the interface's size


def build(e: Entry, inputs: GroupInputs) -> GroupPiece:
    """A superelement group from its validated deck entry."""
    v = e.values
    path = os.path.join(inputs.base_dir, v["file"])
    data = read(path, f"{e.where}.file")
    if data.dim != inputs.dim:
        raise DeckError(f"{e.where}.file", f"the superelement of {v['file']!r} is a {data.dim}D "
                        f"component, but this model has dim = {inputs.dim}")
    where = f"{e.where}.nodes"
    k = len(data.node_ids)
    if v["nodes"] is None:
        nodes = inputs.nodes.lookup(data.node_ids)
        if np.any(nodes < 0):
            missing = int(data.node_ids[np.flatnonzero(nodes < 0)[0]])
            raise DeckError(where, f"the file's interface node {missing} is not a node of this "
                            f"model; give nodes = [...] ({k} ids, in the order of the file's "
                            f"interface nodes {_ids(data.node_ids)})")
    else:
        if isinstance(v["nodes"], str):
            raise DeckError(where, f"expected a list of {k} node ids in the order of the file's "
                            f"interface nodes {_ids(data.node_ids)}, got the node set "
                            f"'{v['nodes']}' (a set has no order)")
        ids = [v["nodes"]] if isinstance(v["nodes"], int) else list(v["nodes"])
        if len(ids) != k:
            raise DeckError(where, f"expected {k} node ids (one per interface node of "
                            f"{v['file']!r}: {_ids(data.node_ids)}), got {len(ids)}")
        nodes = inputs.nodes.indices(ids, where)
    uniq, counts = np.unique(nodes, return_counts=True)
    if np.any(counts > 1):
        twice = int(inputs.nodes.ids[uniq[counts > 1][0]])
        raise DeckError(where, f"expected each node once, got node {twice} more than once")
    shift = inputs.nodes.X[nodes] - data.coordinates
    size = max(float(np.ptp(data.component_coordinates, axis=0).max(initial=0.0)), 1e-300)
    off = np.abs(shift - shift.mean(axis=0)).max(axis=1)
    if np.any(off > PLACEMENT * size):
        a = int(np.argmax(off))
        raise DeckError(where, f"node {int(inputs.nodes.ids[nodes[a]])} is not where the file's "
                        f"interface node {int(data.node_ids[a])} is, after the translation the "
                        f"other nodes give ({off[a]:.3g} away, the component's size is "
                        f"{size:.3g}): a superelement is placed by a translation only")
    cls = Superelement
    if v["formulation"] == "corotational":
        _corotational(e, data)
        cls = CorotSuperelement if data.dim == 2 else CorotSuperelement3D
    extra = {}
    if cls is CorotSuperelement3D:
        stiffening = v["geometric_stiffening"]
        extra["stiffening"] = data.cubic is not None if stiffening is None else stiffening
        if stiffening and data.cubic is None:
            raise DeckError(f"{e.where}.geometric_stiffening", f"{v['file']!r} holds no "
                            "polynomial strain energy (reduced/cubic, reduced/quartic), which "
                            "a cms_reduce step writes with modal_derivatives = true; reduce "
                            "the component so, or set false or leave it out")
    elif cls is CorotSuperelement:
        stiffening = v["geometric_stiffening"]
        extra["stiffening"] = data.stiffening is not None if stiffening is None else stiffening
        if stiffening and data.stiffening is None:
            raise DeckError(f"{e.where}.geometric_stiffening", f"{v['file']!r} holds no chord "
                            "stiffening (reduced/stiffening), which a cms_reduce step writes "
                            "for planar components with exactly two interface nodes whose "
                            "element groups all have a geometric stiffness (or an older fem "
                            "wrote it: reduce the component again); set false or leave it out")
    elif v["geometric_stiffening"]:
        raise DeckError(f"{e.where}.geometric_stiffening", "used by formulation = "
                        "\"corotational\" only")
    if v["damping_ratios"] is not None:
        if cls is not Superelement:
            raise DeckError(f"{e.where}.damping_ratios", "modal damping is built for "
                            "formulation = \"linear\" superelements only so far")
        extra["damping_ratios"] = damping_ratios(v["damping_ratios"], data.n_modal,
                                                 f"{e.where}.damping_ratios")
    group = cls(v["name"], nodes, inputs.nodes.X, inputs.dim, data,
                internal_start=inputs.n_internal, path=os.path.abspath(path), **extra)
    if cls is not Superelement:
        where = f"{e.where}.formulation"
        if not group.translation_complete():
            what = "ux and uy" if data.dim == 2 else "ux, uy, uz (and rx, ry, rz if any)"
            raise DeckError(where, f"a co-rotational superelement recovers every node of its "
                            f"component with {what}; {v['file']!r} has a node with some of "
                            "them only (a support inside the component): reduce it unsupported")
        defect = group.rigid_defect()
        if defect > RIGID:
            raise DeckError(where, f"a co-rotational superelement needs the rigid motions in "
                            f"the null space of its K; that of {v['file']!r} resists them "
                            f"(|K r| = {defect:.3g} of |K| |r|): reduce the component without "
                            "supports, with method = \"craig_bampton\"")
    return GroupPiece(group, inputs.nodes)


def damping_ratios(value, m: int, where: str) -> np.ndarray:
    """(m,) modal damping ratios from one number or a list of ``m``, each in ``[0, 1)``."""
    a = np.atleast_1d(np.asarray(value, dtype=float))
    if a.ndim != 1 or len(a) not in (1, m):
        raise DeckError(where, f"expected one ratio or {m} (one per generalized coordinate of "
                        f"the superelement), got {len(a)}")
    bad = np.flatnonzero(~((a >= 0) & (a < 1)))
    if len(bad):
        k = int(bad[0])
        key = where if np.ndim(value) == 0 else f"{where}[{k}]"
        raise DeckError(key, f"expected a damping ratio in [0, 1) (1 is critical damping), got "
                        f"{a[k]!r}")
    return np.broadcast_to(a, (m,)).copy()


def _corotational(e: Entry, data) -> None:
    """What ``formulation = "corotational"`` needs of the model and the file."""
    where = f"{e.where}.formulation"
    if data.component_mass is None:
        raise DeckError(where, f"a co-rotational superelement integrates its component's lumped "
                        f"(diagonal) mass, which {e.values['file']!r} does not hold (reduced "
                        f"with mass = \"{data.mass}\", by an older fem, or with consistent "
                        "beam inertia): reduce it with the cms_reduce key mass = \"lumped\" "
                        "and lumped element inertia")
    if data.dim == 3:
        need = {0, 1, 2}
        for i in range(len(data.node_ids)):
            have = set(int(s) for s in data.boundary_slot[data.boundary_node == i])
            if not need <= have or (i == 0 and not {3, 4, 5} <= have):
                raise DeckError(where, "a 3D co-rotational superelement needs ux, uy, uz at "
                                "every interface node and rx, ry, rz at the first (its floating "
                                f"frame is that node's triad); {e.values['file']!r} lacks "
                                f"{'them' if need <= have else 'translations'} at interface "
                                f"node {int(data.node_ids[i])}")
        return
    slots = set(int(s) for s in data.boundary_slot)
    if not {0, 1} <= slots or any(
            not {0, 1} <= set(int(s) for s in data.boundary_slot[data.boundary_node == i])
            for i in range(len(data.node_ids))):
        raise DeckError(where, "a co-rotational superelement needs ux and uy at every "
                        f"interface node; {e.values['file']!r} lacks them at some")


def _ids(ids) -> str:
    """``[2, 3]`` or ``[2, 3, 5, ...]`` for messages."""
    ids = [int(i) for i in ids]
    return str(ids) if len(ids) <= 8 else str(ids[:8])[:-1] + ", ...]"
