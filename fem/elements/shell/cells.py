"""The triangles of a shell entry: connectivity rows or mesh cells, quadrilaterals split in two.

A shell group is made of triangles. Its ``connectivity`` rows are all triangles (3 node ids) or
all quadrilaterals (4, corners in order around the cell); its ``mesh_group`` takes the group's
``triangle`` and ``quad`` cells (triangles first, then quads, each in file order). A quadrilateral
``(a, b, c, d)`` is split along its shorter diagonal into ``(a, b, c), (a, c, d)`` (diagonal
``a-c``) or ``(a, b, d), (b, c, d)`` (``b-d``; chosen only when shorter by more than 1e-12
relative, so that a square always splits along ``a-c``): both keep the corners' turning sense,
hence the normal. The shorter diagonal gives the better shaped pair (the larger smallest angle
for a parallelogram). The group's elements, results and ParaView cells are these triangles
(``source_cell`` in the results file maps each back to its row or cell).

A warped quadrilateral (corners not in one plane) is split anyway: its two flat facets fold along
the diagonal by the angle between their normals; above :data:`WARP_WARNING` degrees a warning
names the worst cell (the facets then approximate the surface poorly), and a fold beyond 90
degrees (a cell folded over itself, or a non-convex one split along its outer diagonal) is an
error.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from fem.errors import DeckError, did_you_mean
from fem.io.keys import shown
from fem.io.keys.entries import Entry
from fem.io.keys.groups import _distinct, _duplicates, _mesh_cells, node_rows
from fem.io.keys.nodes import Nodes

log = logging.getLogger(__name__)

#: fold angle (degrees) of a split quadrilateral above which a warning says it is warped
WARP_WARNING = 10.0


@dataclass(frozen=True)
class ShellRows:
    """The triangles of a shell entry and where each comes from.

    ``conn (E, 3)`` node indices; ``source (E,)`` the row or cell of its part (``kind``);
    ``kind (E,)`` ``"triangle"`` or ``"quad"``; ``where`` the deck key of the rows.
    """

    conn: NDArray
    source: NDArray
    kind: NDArray
    where: str

    def row(self, k: int) -> tuple[str, str]:
        """The deck key and the words for the row or cell of triangle ``k`` (for messages)."""
        src, kind = int(self.source[k]), str(self.kind[k])
        if self.where.endswith("mesh_group"):
            return self.where, f"{kind} cell {src + 1} of the group"
        return f"{self.where}[{src}]", "the row"


def split_quads(X: NDArray, quads: NDArray) -> tuple[NDArray, NDArray]:
    """(2 Q, 3) triangles of quadrilaterals ``quads (Q, 4)`` (module docstring), fold (Q,) deg.

    ``X (n, 3)`` node coordinates; the triangles of quad ``q`` are rows ``2 q`` and ``2 q + 1``.

    >>> X = np.array([[0.0, 0, 0], [2, 0, 0], [2, 1, 0], [0, 1, 0], [3, 2, 0]])
    >>> tri, fold = split_quads(X, np.array([[0, 1, 2, 3], [0, 1, 4, 3]]))
    >>> tri.tolist(), fold.tolist()
    ([[0, 1, 2], [0, 2, 3], [0, 1, 3], [1, 4, 3]], [0.0, 0.0])
    """
    P = X[quads]                                                    # (Q, 4, 3)
    ac = np.linalg.norm(P[:, 2] - P[:, 0], axis=1)
    bd = np.linalg.norm(P[:, 3] - P[:, 1], axis=1)
    use_bd = bd < ac * (1.0 - 1e-12)
    a, b, c, d = quads.T
    first = np.where(use_bd[:, None], np.column_stack([a, b, d]), np.column_stack([a, b, c]))
    second = np.where(use_bd[:, None], np.column_stack([b, c, d]), np.column_stack([a, c, d]))
    tri = np.stack([first, second], axis=1).reshape(-1, 3)
    T = X[tri]
    n = np.cross(T[:, 1] - T[:, 0], T[:, 2] - T[:, 0]).reshape(-1, 2, 3)
    size = np.linalg.norm(n, axis=2)
    cos = np.einsum("qi,qi->q", n[:, 0], n[:, 1]) / np.maximum(size[:, 0] * size[:, 1], 1e-300)
    return tri, np.degrees(np.arccos(np.clip(cos, -1.0, 1.0)))


def shell_rows(e: Entry, nodes: Nodes) -> ShellRows:
    """The triangles of shell entry ``e`` from ``connectivity`` or ``mesh_group``, checked.

    Every row or cell names known, distinct nodes, none twice; quadrilaterals are split
    (:func:`split_quads`) and a quadrilateral folded over itself is refused.
    """
    v = e.values
    if (v["connectivity"] is None) == (v["mesh_group"] is None):
        got = "both" if v["mesh_group"] is not None else "neither"
        raise DeckError(e.where, f"expected exactly one of connectivity and mesh_group, got {got}")
    parts = []                                       # (cells, kind)
    if v["mesh_group"] is not None:
        where = f"{e.where}.mesh_group"
        for kind, cells in _mesh_group(nodes, v["mesh_group"], where).items():
            parts.append((cells, kind))
    else:
        where = f"{e.where}.connectivity"
        given = v["connectivity"]
        nen = len(given[0]) if given else 3
        if nen not in (3, 4):
            raise DeckError(f"{where}[0]", f"expected 3 node ids (a triangle) or 4 (a "
                            f"quadrilateral, split into two triangles), got {shown(given[0])}")
        bad = next((i for i, row in enumerate(given) if len(row) != nen), None)
        if bad is not None:
            shape = "triangles" if nen == 3 else "quadrilaterals"
            raise DeckError(f"{where}[{bad}]", f"expected {nen} node ids ({shape}, as row 0: the "
                            f"rows of one group are all triangles or all quadrilaterals; put the "
                            f"others in a group of their own), got {shown(given[bad])}")
        what = "row of 3 node ids" if nen == 3 else "row of 4 node ids"
        parts.append((node_rows(nodes, given, where, what, nen),
                      "triangle" if nen == 3 else "quad"))
    conn, source, kind = [], [], []
    for cells, k in parts:
        _distinct(nodes, cells, where, k)
        _duplicates(nodes, cells, where, k)
        if k == "triangle":
            conn.append(cells)
            source.append(np.arange(len(cells)))
        else:
            tri, fold = split_quads(nodes.X, cells)
            _check_folds(nodes, cells, fold, where)
            conn.append(tri)
            source.append(np.repeat(np.arange(len(cells)), 2))
        kind.append(np.full(len(conn[-1]), k))
    out = ShellRows(np.concatenate(conn), np.concatenate(source), np.concatenate(kind), where)
    if len(parts) > 1:
        _overlaps(nodes, out)
    return out


def _mesh_group(nodes: Nodes, name: str, where: str) -> dict[str, NDArray]:
    """``{"triangle": (E, 3), "quad": (Q, 4)}``: the mesh group's cells a shell takes."""
    mesh = nodes.mesh
    if mesh is None:
        _mesh_cells(nodes, name, where, 3, "triangle")       # raises: no mesh file
    cells = {k: mesh.group_cells(name, k) for k in ("triangle", "quad")}
    cells = {k: c for k, c in cells.items() if c is not None}
    if not cells:
        if name in mesh.node_sets:
            what = ("has no 3-node triangle or 4-node quad cells (it has "
                    f"{mesh.describe_groups_of(name)})")
        else:
            what = "does not exist" + did_you_mean(name, mesh.node_sets)
        raise DeckError(where, f"mesh group {shown(name)} {what}; expected a group of 3-node "
                        f"triangle or 4-node quad cells; the mesh's groups are: "
                        f"{mesh.describe_groups()}")
    return cells


def _check_folds(nodes: Nodes, quads: NDArray, fold: NDArray, where: str) -> None:
    """Refuse a quadrilateral folded over itself; warn of a warped one (module docstring)."""
    def words(q: int) -> tuple[str, str]:
        ids = ", ".join(str(int(nodes.ids[i])) for i in quads[q])
        if where.endswith("mesh_group"):
            return where, f"quad cell {q + 1} of the group (nodes {ids})"
        return f"{where}[{q}]", f"the row (nodes {ids})"

    worst = int(np.argmax(fold))
    if fold[worst] > 90.0:
        key, row = words(worst)
        raise DeckError(key, f"expected a convex quadrilateral with its corners in order around "
                        f"it, got {row}, whose two triangles (split along the shorter diagonal) "
                        f"face opposite ways (folded by {fold[worst]:.1f} degrees)")
    if fold[worst] > WARP_WARNING:
        key, row = words(worst)
        count = int(np.sum(fold > WARP_WARNING))
        log.warning("%s: %d warped quadrilateral%s split into triangles folded by more than "
                    "%g degrees; the worst, %s, by %.1f degrees", key, count,
                    "s" if count > 1 else "", WARP_WARNING, row, fold[worst])


def _overlaps(nodes: Nodes, rows: ShellRows) -> None:
    """Refuse a triangle cell that is also half of a quad cell of the group."""
    ordered = np.sort(rows.conn, axis=1)
    _, first, inverse = np.unique(ordered, axis=0, return_index=True, return_inverse=True)
    again = np.flatnonzero(first[inverse.ravel()] != np.arange(len(ordered)))
    if len(again):
        k = int(again[0])
        j = int(first[inverse.ravel()[k]])
        ids = ", ".join(str(int(nodes.ids[i])) for i in rows.conn[k])
        raise DeckError(rows.where, f"expected each element once, got {rows.row(j)[1]} and "
                        f"{rows.row(k)[1]} both covering the triangle of nodes {ids}: a "
                        "repeated element doubles the stiffness; remove one")
