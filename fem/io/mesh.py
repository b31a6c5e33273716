"""Mesh files through meshio: nodes, line cells, and named sets.

Gmsh physical groups and Abaqus ``*NSET``/``*ELSET`` become sets. Node ids are ``1..n`` in the
file's order (meshio renumbers points). Only 2-node line cells are used (trusses and beams); other
cell types are kept for later element families and ignored here.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray


@dataclass
class MeshData:
    """What a deck takes from a mesh file."""

    points: NDArray                                   # (n, 3)
    lines: NDArray                                    # (E, 2) point indices of all line cells
    line_sets: dict[str, NDArray] = field(default_factory=dict)   # name -> rows of ``lines``
    node_sets: dict[str, NDArray] = field(default_factory=dict)   # name -> point indices


def read(path: str) -> MeshData:
    """Read ``path`` with meshio; raises ``ValueError`` with meshio's reason on failure."""
    import meshio

    try:
        mesh = meshio.read(path)
    except Exception as err:  # meshio raises many types; report its message
        raise ValueError(f"meshio could not read it: {err}") from None
    pts = np.zeros((len(mesh.points), 3))
    pts[:, :mesh.points.shape[1]] = mesh.points
    blocks = [(i, b) for i, b in enumerate(mesh.cells) if b.type == "line"]
    offsets, rows, lines = {}, 0, []
    for i, b in blocks:
        offsets[i] = rows
        rows += len(b.data)
        lines.append(np.asarray(b.data, dtype=np.int64))
    lines_arr = np.concatenate(lines) if lines else np.zeros((0, 2), dtype=np.int64)
    line_sets, node_sets = {}, {}
    for name, per_block in mesh.cell_sets.items():
        if name.startswith("gmsh:"):
            continue
        sel, nodes = [], []
        for i, idx in enumerate(per_block):
            if idx is None or len(idx) == 0:
                continue
            idx = np.asarray(idx, dtype=np.int64)
            nodes.append(np.asarray(mesh.cells[i].data, dtype=np.int64)[idx].ravel())
            if i in offsets:
                sel.append(offsets[i] + idx)
        if sel:
            line_sets[name] = np.concatenate(sel)
        if nodes:
            node_sets[name] = np.unique(np.concatenate(nodes))
    for name, idx in mesh.point_sets.items():
        node_sets[name] = np.unique(np.asarray(idx, dtype=np.int64))
    return MeshData(points=pts, lines=lines_arr, line_sets=line_sets, node_sets=node_sets)
