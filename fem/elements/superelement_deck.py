"""The deck entry of :class:`~fem.elements.superelement.Superelement` groups.

``[[elements]] type = "superelement"``: its keys (:data:`KEYS`) and its construction
(:func:`build`), registered with the class in :mod:`fem.elements`. One superelement per entry,
read from ``file`` (relative to the deck; a ``cms_reduce`` step writes it), its interface nodes
mapped in order onto the model's ``nodes`` (default: the nodes of the same ids).
"""

from __future__ import annotations

import os

import numpy as np

from fem.elements.superelement import Superelement, read
from fem.errors import DeckError
from fem.io.build import Entry
from fem.io.build_elements import GroupInputs, GroupPiece
from fem.io.keys import REQUIRED, Key

TABLE = "elements"
PLURAL = "superelements"
KEYS = [Key("file", "str", REQUIRED, "superelements: the superelement file (HDF5, relative to "
            "the deck) a cms_reduce step wrote with its key file"),
        Key("nodes", "nodes", None, "superelements: the model's node ids onto which the file's "
            "interface nodes map, in the file's order (default: the nodes of the same ids); "
            "they must lie where the file's do, up to one translation")]
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
    group = Superelement(v["name"], nodes, inputs.nodes.X, inputs.dim, data,
                         internal_start=inputs.n_internal, path=os.path.abspath(path))
    return GroupPiece(group, inputs.nodes)


def _ids(ids) -> str:
    """``[2, 3]`` or ``[2, 3, 5, ...]`` for messages."""
    ids = [int(i) for i in ids]
    return str(ids) if len(ids) <= 8 else str(ids[:8])[:-1] + ", ...]"
