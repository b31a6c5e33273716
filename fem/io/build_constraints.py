"""Build the constraint tables of a deck: ``[[ties]]`` (pins between coincident nodes).

Every tie must add an independent constraint: a node tied to itself, nodes that are not at one
point, a tie between nodes that other ties already join (a closed loop of ties), or a tie along
a direction that supports hold at both of its ends would make the constraints redundant (a
singular system), and each is a deck error naming the tie.
"""

from __future__ import annotations

import numpy as np

from fem.constraints import Tie
from fem.errors import DeckError
from fem.io.build import Entry, Nodes, unique
from fem.io.build_elements import node_pairs
from fem.model import DOF_SLOTS


def _find(parent: dict, a: int) -> int:
    while parent.setdefault(a, a) != a:
        parent[a] = parent[parent[a]]
        a = parent[a]
    return a


def ties(entries: list[Entry], nodes: Nodes, groups: tuple, fixed: np.ndarray,
         prescribed: tuple) -> tuple[Tie, ...]:
    """``[[ties]]``: one :class:`fem.constraints.Tie` group per entry (see the module docstring).

    ``groups`` are the element groups, ``fixed (n, nslots)`` the supported DOFs and
    ``prescribed`` the prescribed values (a tie must not repeat what they hold).
    """
    taken = {g.name for g in groups}
    X, dim = np.asarray(nodes.X), nodes.dim
    scale = max(float(np.abs(X).max()), 1.0) if len(X) else 1.0
    connected = np.zeros(len(X), dtype=bool)
    for g in groups:
        connected[g.conn] = True
    fixed = fixed.copy()
    for p in prescribed:
        fixed[p.nodes, p.slot] = True
    parent: dict[int, int] = {}
    joined: dict[tuple[int, int], str] = {}              # (root, slot) -> the node that holds it
    made = []
    for name, e in unique(entries, "tie group").items():
        if name in taken:
            raise DeckError(f"{e.where}.name", f"'{name}' is already an element group")
        pairs = node_pairs(nodes, e.values["pairs"], f"{e.where}.pairs", "[node_a, node_b] pair")
        ids = nodes.ids
        for k, (a, c) in enumerate(pairs):
            where = f"{e.where}.pairs[{k}]"
            if a == c:
                raise DeckError(where, f"expected two different nodes, got node {ids[a]} tied to "
                                "itself")
            gap = float(np.linalg.norm(X[a] - X[c]))
            if gap > 1e-9 * scale:
                raise DeckError(where, f"expected two nodes at the same point (a tie pins "
                                f"coincident nodes), got nodes {ids[a]} and {ids[c]}, "
                                f"{gap:.6g} apart")
            loose = [n for n in (a, c) if not connected[n]]
            if loose:
                raise DeckError(where, f"expected nodes of elements, got node {ids[loose[0]]}, "
                                "which no element connects to")
            ra, rc = _find(parent, int(a)), _find(parent, int(c))
            if ra == rc:
                raise DeckError(where, f"redundant tie: nodes {ids[a]} and {ids[c]} are already "
                                "tied (directly or through other ties); remove this pair")
            for slot in range(dim):
                holders = [joined.get((r, slot)) for r in (ra, rc)]
                own = [n for n in (a, c) if fixed[n, slot]]
                held = [h for h in holders if h is not None] + [int(n) for n in own]
                if len(set(held)) > 1:
                    first, second = sorted(set(held))[:2]
                    raise DeckError(where, f"redundant tie: {DOF_SLOTS[dim][slot]} is held at node "
                                    f"{ids[first]} and at node {ids[second]}, which the ties "
                                    "join, so the tie along it repeats a support; support one "
                                    "of them only")
            parent[ra] = rc
            for slot in range(dim):
                for r in (ra, rc):
                    h = joined.pop((r, slot), None)
                    if h is not None:
                        joined[(rc, slot)] = h
                for n in (a, c):
                    if fixed[n, slot]:
                        joined[(rc, slot)] = int(n)
        made.append(Tie(name, pairs, dim, np.asarray(ids)))
        taken.add(name)
    return tuple(made)
