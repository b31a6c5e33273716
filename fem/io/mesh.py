"""Mesh files through meshio: nodes, line cells, and named sets.

Named groups of the file become sets:

* Gmsh (``.msh`` 2.2 and 4.1): *named* physical groups (``$PhysicalNames``). meshio returns them
  as ``field_data[name] = [tag, dim]`` plus the per-cell tag ``cell_data["gmsh:physical"]``
  (format 2.2) or as ``cell_sets`` (format 4.1); both are read, matching tag *and* dimension (Gmsh
  numbers the physical groups of each dimension separately). Unnamed physical groups are ignored.
* Abaqus (``.inp``) and others: ``cell_sets`` (``*ELSET``, ``*ELEMENT, ELSET=``) and ``point_sets``
  (``*NSET``).

Every group is a node set (the nodes of its cells, or its points). A group with 2-node line cells is
also an element group (``[[elements]] mesh_group``). Node ids are ``1..n`` in meshio's point order,
which is the order of the file's node section (meshio renumbers points; for Abaqus files the ids
written in the file are not kept). Refer to mesh nodes through named groups where possible.
Only 2-node line cells are used (trusses and beams); other cell types are kept for later element
families and otherwise ignored.
"""

from __future__ import annotations

import contextlib
import io
import logging
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

log = logging.getLogger(__name__)


@dataclass
class MeshData:
    """What a deck takes from a mesh file."""

    points: NDArray                                   # (n, 3)
    lines: NDArray                                    # (E, 2) point indices of all line cells
    line_sets: dict[str, NDArray] = field(default_factory=dict)   # name -> rows of ``lines``
    node_sets: dict[str, NDArray] = field(default_factory=dict)   # name -> point indices
    cell_types: dict[str, list[str]] = field(default_factory=dict)  # name -> its cell types

    def describe_groups_of(self, name: str) -> str:
        """``"vertex cells"``: the cell types of group ``name`` (``"points"`` for a point set)."""
        types = self.cell_types.get(name)
        return f"{', '.join(types)} cells" if types else "points only"

    def describe_groups(self) -> str:
        """``"frame (line), support (vertex)"``: every named group and its cell types."""
        names = sorted(self.node_sets)
        if not names:
            return "none (the file has no named groups or sets)"
        return ", ".join(f"{n} ({', '.join(self.cell_types.get(n, ['points']))})"
                         for n in names)


def _union(groups: dict[str, list], name: str, block: int, idx) -> None:
    idx = np.asarray(idx, dtype=np.int64).ravel()
    if len(idx) == 0:
        return
    per_block = groups.setdefault(name, {})
    per_block[block] = np.union1d(per_block.get(block, np.zeros(0, np.int64)), idx)


def _cell_groups(mesh) -> dict[str, dict[int, NDArray]]:
    """Name -> {cell block: cell indices} from cell sets and Gmsh physical tags."""
    groups: dict[str, dict[int, NDArray]] = {}
    for name, per_block in mesh.cell_sets.items():
        if name.startswith("gmsh:"):
            continue
        for i, idx in enumerate(per_block[:len(mesh.cells)]):
            if idx is not None:
                _union(groups, name, i, idx)
    physical = mesh.cell_data.get("gmsh:physical")
    if physical is not None and len(physical) == len(mesh.cells):
        for name, value in mesh.field_data.items():
            value = np.asarray(value).ravel()
            if len(value) != 2:
                continue
            tag, dim = int(value[0]), int(value[1])
            for i, block in enumerate(mesh.cells):
                if block.dim == dim:
                    _union(groups, name, i, np.flatnonzero(np.asarray(physical[i]) == tag))
    return groups


def _meshio_read(path: str):
    """``meshio.read(path)`` without meshio's prints and ``sys.exit``; failures -> ValueError.

    meshio prints reader errors to stdout, warnings and errors to stderr, and calls ``sys.exit``
    when no reader accepts the file. Here its output is captured (and logged) instead, so that the
    CLI can print one message.
    """
    import meshio

    out, err = io.StringIO(), io.StringIO()
    failure = None
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            mesh = meshio.read(path)
    except SystemExit:            # no reader accepted the file; meshio explained why on stderr
        failure = ""
    except Exception as exc:      # meshio raises many types; report its message
        failure = str(exc).strip() or type(exc).__name__
    said = " ".join(" ".join(x.split()) for x in (out.getvalue(), err.getvalue()) if x.strip())
    if failure is not None:
        reason = "; ".join(x for x in (failure, said.replace("Error: ", "")) if x)
        raise ValueError(f"meshio could not read it: {reason or 'unknown reason'}")
    if said:
        log.warning("meshio, reading %s: %s", path, said)
    return mesh


def read(path: str) -> MeshData:
    """Read ``path`` with meshio; raises ``ValueError`` with meshio's reason on failure."""
    mesh = _meshio_read(path)
    if len(mesh.points) == 0:
        raise ValueError("meshio read no nodes from it")
    pts = np.zeros((len(mesh.points), 3))
    pts[:, :mesh.points.shape[1]] = mesh.points
    offsets, rows, lines = {}, 0, []
    for i, b in enumerate(mesh.cells):
        if b.type == "line":
            offsets[i] = rows
            rows += len(b.data)
            lines.append(np.asarray(b.data, dtype=np.int64))
    lines_arr = np.concatenate(lines) if lines else np.zeros((0, 2), dtype=np.int64)
    outside = np.flatnonzero(np.any((lines_arr < 0) | (lines_arr >= len(pts)), axis=1))
    if len(outside):
        raise ValueError(f"line cell {outside[0] + 1} refers to a node the file does not have "
                         f"(it has {len(pts)} nodes)")
    line_sets, node_sets, cell_types = {}, {}, {}
    for name, per_block in _cell_groups(mesh).items():
        sel, nodes, types = [], [], set()
        for i, idx in sorted(per_block.items()):
            nodes.append(np.asarray(mesh.cells[i].data, dtype=np.int64)[idx].ravel())
            types.add(mesh.cells[i].type)
            if i in offsets:
                sel.append(offsets[i] + idx)
        if sel:
            line_sets[name] = np.concatenate(sel)
        node_sets[name] = np.unique(np.concatenate(nodes))
        cell_types[name] = sorted(types)
    for name, idx in mesh.point_sets.items():
        idx = np.asarray(idx, dtype=np.int64).ravel()
        node_sets[name] = np.union1d(node_sets.get(name, np.zeros(0, np.int64)), idx)
    return MeshData(points=pts, lines=lines_arr, line_sets=line_sets, node_sets=node_sets,
                    cell_types=cell_types)
