"""Build the constraint tables of a deck: ``[[ties]]``, ``[[joints]]`` (with their drivers).

Every tie must add an independent constraint: a node tied to itself, nodes that are not at one
point, a tie between nodes that other ties already join (a closed loop of ties), or a tie along
a direction that supports hold at both of its ends would make the constraints redundant (a
singular system), and each is a deck error naming the tie.
"""

from __future__ import annotations

import numpy as np

from fem.constraints import Tie
from fem.constraints.joint import DRIVEN, ROWS, Joint
from fem.errors import DeckError
from fem.io.build import function
from fem.io.keys import shown
from fem.io.keys.entries import Entry, unique, vector
from fem.io.keys.groups import node_pairs
from fem.io.keys.nodes import Nodes
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
        connected[g.cells] = True
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


# --- [[joints]] ----------------------------------------------------------------------------------
#: the joints whose frame needs an axis (3D), and those that take one (2D)
_AXIS_3D = ("revolute", "cylindrical", "prismatic", "planar", "universal", "inline")
_AXIS_2D = ("prismatic", "inline")


def _unit(v: np.ndarray, where: str, what: str) -> np.ndarray:
    n = float(np.linalg.norm(v))
    if n == 0.0:
        raise DeckError(where, f"expected a nonzero {what}, got {shown(list(v))}")
    return v / n


def _frame(kind: str, dim: int, v: dict, where: str) -> np.ndarray:
    """(3, 3) the joint frame ``[e1, e2, e3]`` of a deck entry (see the ``axis`` key)."""
    axis, second = v["axis"], v["second_axis"]
    if dim == 2:
        if second is not None:
            raise DeckError(f"{where}.second_axis", "not used by joints of a 2D model")
        if kind not in _AXIS_2D:
            if axis is not None:
                raise DeckError(f"{where}.axis", f"not used by {kind} joints of a 2D model "
                                "(their axis is z)")
            return np.eye(3)
        if axis is None:
            raise DeckError(f"{where}.axis", f"missing: a {kind} joint needs its sliding "
                            "direction [ax, ay]")
        e1 = _unit(vector(axis, 2, f"{where}.axis"), f"{where}.axis", "sliding direction")
        return np.column_stack([e1, [-e1[1], e1[0], 0.0], [0.0, 0.0, 1.0]])
    if axis is None:
        if kind in _AXIS_3D:
            raise DeckError(f"{where}.axis", f"missing: a {kind} joint needs its axis "
                            "[ax, ay, az]")
        if second is not None:
            raise DeckError(f"{where}.second_axis", "given without axis: give both or neither")
        return np.eye(3)
    a = _unit(vector(axis, 3, f"{where}.axis"), f"{where}.axis", "axis")
    if second is None:
        if kind == "universal":
            raise DeckError(f"{where}.second_axis", "missing: a universal joint needs the "
                            "cross's axis in its second node, perpendicular to axis")
        # the global axis least along the joint axis, made perpendicular to it
        t = np.eye(3)[int(np.argmin(np.abs(a)))]
        b = _unit(t - (t @ a) * a, f"{where}.axis", "axis")
    else:
        b = _unit(vector(second, 3, f"{where}.second_axis"), f"{where}.second_axis",
                  "second axis")
        if abs(float(a @ b)) > 1e-9:
            raise DeckError(f"{where}.second_axis", "expected a direction perpendicular to "
                            f"axis, got one at {np.degrees(np.arccos(np.clip(a @ b, -1, 1))):.6g}"
                            " degrees to it")
    if kind == "universal":
        return np.column_stack([a, b, np.cross(a, b)])
    return np.column_stack([b, np.cross(a, b), a])


def joints(entries: list[Entry], nodes: Nodes, groups: tuple, fixed: np.ndarray,
           taken: set, funcs: dict | None = None) -> tuple[tuple[Joint, ...], Nodes, np.ndarray]:
    """``[[joints]]``: one :class:`fem.constraints.Joint` group per entry.

    Joints to the ground get a node each at the joint point, with every DOF supported (ids
    after the largest); returns the groups, the node table and the supports with those nodes.
    ``taken`` are the names of the element and tie groups, ``funcs`` the time functions
    (drivers name them).
    """
    dim = nodes.dim
    rotations = np.zeros(len(nodes.X), dtype=bool)
    for g in groups:
        if {"rz"} & set(g.dof_names):
            rotations[g.conn] = True
    made = []
    for name, e in unique(entries, "joint group").items():
        v, where = e.values, e.where
        if name in taken:
            raise DeckError(f"{where}.name", f"'{name}' is already the name of a group")
        kind = v["type"]
        if kind not in ROWS[dim]:
            if kind == "spherical":
                raise DeckError(f"{where}.type", "expected revolute, fixed, prismatic or inline "
                                "in a 2D model, got 'spherical' (in the plane it is the "
                                "revolute joint)")
            raise DeckError(f"{where}.type", f"expected revolute, fixed, prismatic or inline "
                            f"in a 2D model, got '{kind}'")
        if (v["pairs"] is None) == (v["ground"] is None):
            raise DeckError(where, "expected either pairs = [[node_a, node_b], ...] (joints "
                            "between nodes) or ground = [nodes] (joints to the ground)")
        if v["pairs"] is not None:
            pairs = node_pairs(nodes, v["pairs"], f"{where}.pairs", "[node_a, node_b] pair")
            same = np.flatnonzero(pairs[:, 0] == pairs[:, 1])
            if len(same):
                k = int(same[0])
                raise DeckError(f"{where}.pairs[{k}]", f"expected two different nodes, got "
                                f"node {nodes.ids[pairs[k, 0]]} twice")
            first, grounded, key = pairs[:, 0], False, "pairs"
        else:
            first = np.atleast_1d(nodes.indices(v["ground"], f"{where}.ground"))
            grounded, key = True, "ground"
        used = np.concatenate([first, pairs[:, 1]]) if v["pairs"] is not None else first
        made_here = used[used >= len(rotations)]
        if len(made_here):
            # the nodes earlier joints to the ground made (ids after the deck's largest)
            raise DeckError(f"{where}.{key}", f"no such node in [nodes]: "
                            f"{nodes.ids[made_here[0]]} (the deck's nodes are "
                            f"{nodes.ids[0]} to {nodes.ids[len(rotations) - 1]}; the ids after "
                            "them are the ground points of joints to the ground)")
        loose = [int(n) for n in first if not rotations[n]]
        if v["pairs"] is not None:
            loose += [int(n) for n in pairs[:, 1] if not rotations[n]]
        if loose:
            raise DeckError(f"{where}.{key}", f"expected nodes of beams or rigid bodies, got "
                            f"node {nodes.ids[loose[0]]}, which has no rotations (no beam or "
                            "body uses it); pin truss nodes with [[ties]]")
        E = len(first)
        if v["points"] is None:
            P = nodes.X[first].copy()
        else:
            rows = v["points"]
            if len(rows) != E:
                raise DeckError(f"{where}.points", f"expected one point per joint ({E}), got "
                                f"{len(rows)}")
            P = np.array([vector(p, dim, f"{where}.points[{k}]", "coordinates")
                          for k, p in enumerate(rows)])
        if grounded:
            nodes, second = nodes.with_nodes(P, -np.ones((E, 4), dtype=np.int64))
            fixed = np.vstack([fixed, np.ones((E, fixed.shape[1]), dtype=bool)])
            # the ground carries an inline joint's line: it goes first
            pairs = np.column_stack([second, first] if kind == "inline" else [first, second])
        F = _frame(kind, dim, v, where)
        drive = None
        if v["drive"] is not None:
            if kind not in DRIVEN[dim]:
                raise DeckError(f"{where}.drive", f"expected a revolute or prismatic joint for a "
                                f"driver, got a {kind} joint")
            drive = function(funcs or {}, v["drive"], f"{where}.drive")
        X = nodes.X
        offsets = np.stack([P - X[pairs[:, 0]], P - X[pairs[:, 1]]], axis=1)
        made.append(Joint(name, kind, pairs, offsets, np.broadcast_to(F, (E, 3, 3)), dim,
                          np.asarray(nodes.ids), np.full(E, grounded), drive,
                          ground_first=kind == "inline"))
        taken.add(name)
    return tuple(made), nodes, fixed
