"""Mesh files through meshio: nodes, cells by type, and named sets.

Named groups of the file become sets:

* Gmsh (``.msh`` 2.2 and 4.1): *named* physical groups (``$PhysicalNames``). meshio returns them
  as ``field_data[name] = [tag, dim]`` plus the per-cell tag ``cell_data["gmsh:physical"]``
  (format 2.2) or as ``cell_sets`` (format 4.1); both are read, matching tag *and* dimension (Gmsh
  numbers the physical groups of each dimension separately). Unnamed physical groups are ignored.
* Abaqus (``.inp``) and others: ``cell_sets`` (``*ELSET``, ``*ELEMENT, ELSET=``) and ``point_sets``
  (``*NSET``).

Every group is a node set (the nodes of its cells, or its points). Cells are kept by meshio's cell
type (``vertex``, ``line``, ``triangle``, ``quad``, ...), so a group's cells of one type can be an
element group (``[[elements]] mesh_group``) of a family whose ``cell_type`` it is (lines for trusses
and beams, triangles for a shell, which also takes a group's quads and splits each into two
triangles: :mod:`fem.elements.shell.cells`). Node ids are ``1..n`` in meshio's point order, which is
the order of the file's node section (meshio renumbers points; for Abaqus files the ids written in
the file are not kept). Refer to mesh nodes through named groups where possible.
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
    """What a deck takes from a mesh file.

    Attributes
    ----------
    points : (n, 3) coordinates
    cells : ``{cell type: (E_t, nen_t) point indices}``, every cell of each type, in file order
    cell_sets : ``{group: {cell type: rows of cells[type]}}``
    node_sets : ``{group: point indices}``, every group (its cells' nodes, or its points)
    cell_types : ``{group: its cell types, sorted}``
    """

    points: NDArray
    cells: dict[str, NDArray] = field(default_factory=dict)
    cell_sets: dict[str, dict[str, NDArray]] = field(default_factory=dict)
    node_sets: dict[str, NDArray] = field(default_factory=dict)
    cell_types: dict[str, list[str]] = field(default_factory=dict)

    def group_cells(self, name: str, cell_type: str) -> NDArray | None:
        """(E, nen) point indices of group ``name``'s cells of ``cell_type``, None if none."""
        rows = self.cell_sets.get(name, {}).get(cell_type)
        return None if rows is None else self.cells[cell_type][rows]

    @property
    def lines(self) -> NDArray:
        """(E, 2) point indices of every line cell."""
        return self.cells.get("line", np.zeros((0, 2), dtype=np.int64))

    @property
    def line_sets(self) -> dict[str, NDArray]:
        """``{group: rows of lines}`` of the groups with line cells."""
        return {n: per["line"] for n, per in self.cell_sets.items() if "line" in per}

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
    offsets, blocks = {}, {}                 # block -> first row in its type; type -> blocks
    for i, b in enumerate(mesh.cells):
        data = np.asarray(b.data, dtype=np.int64).reshape(len(b.data), -1)
        offsets[i] = sum(len(d) for d in blocks.get(b.type, []))
        blocks.setdefault(b.type, []).append(data)
    cells = {t: np.concatenate(d) for t, d in blocks.items()}
    for t, c in cells.items():
        outside = np.flatnonzero(np.any((c < 0) | (c >= len(pts)), axis=1))
        if len(outside):
            raise ValueError(f"{t} cell {outside[0] + 1} refers to a node the file does not "
                             f"have (it has {len(pts)} nodes)")
    cell_sets, node_sets, cell_types = {}, {}, {}
    for name, per_block in _cell_groups(mesh).items():
        rows: dict[str, list] = {}
        for i, idx in sorted(per_block.items()):
            rows.setdefault(mesh.cells[i].type, []).append(offsets[i] + idx)
        cell_sets[name] = {t: np.concatenate(r) for t, r in rows.items()}
        node_sets[name] = np.unique(np.concatenate(
            [cells[t][r].ravel() for t, r in cell_sets[name].items()]))
        cell_types[name] = sorted(rows)
    for name, idx in mesh.point_sets.items():
        idx = np.asarray(idx, dtype=np.int64).ravel()
        node_sets[name] = np.union1d(node_sets.get(name, np.zeros(0, np.int64)), idx)
    return MeshData(points=pts, cells=cells, cell_sets=cell_sets, node_sets=node_sets,
                    cell_types=cell_types)
