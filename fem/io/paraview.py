"""XDMF files that let ParaView read the results file as a time series.

The data stay in the results file, and the XDMF names slices of them: a frame's displacement is
``out.h5:/steps/<step>/displacement|k 0 0:1 1 1:1 n 3:T n 3`` (Xdmf3's hyperslab of frame ``k``:
start, stride, count and the dataset's dimensions), so a frame adds no HDF5 object at all. Arrays
that ParaView needs in another shape are written per step beside the frames, in the same
transaction (:mod:`fem.io.hdf5`): ``/xdmf/<step>/velocity`` and ``reaction`` ``(T, n, 3)`` (the
translational parts, three components also in 2D), ``axis_x``, ``axis_y``, ``axis_z`` ``(T, n, 3)``
(the nodal frames, below) and ``/xdmf/<step>/cells/<q>`` ``(T, E_total)`` (each section force over
all drawn cells in topology order, ``NaN`` where a group lacks it).

* ``<out>.xdmf``: one temporal collection with the frames of every static and dynamic step.
* ``<out>_<step>_modes.xdmf``: the mode shapes of an eigen/buckling step, "time" = mode number.

ParaView opens them with its *Xdmf3ReaderT* reader (the hyperslab syntax is Xdmf3's; the older
*XDMFReader* reads the mesh only).

**Always a valid document, naming only frames that exist.** The XDMF text is rewritten whole under
a temporary name and renamed into place (:func:`fem.io.files.write_text`), after the frames it
names were committed to the results file (:meth:`fem.io.hdf5.ResultsFile.commit`). An interrupted
run, a full disk or an unwritable folder therefore leave either the previous complete document or
the new one. Rewriting costs time proportional to the number of frames, so when a write takes
long the next one waits proportionally longer (at most a few percent of the run's time).

**Every frame is drawable.** Both of ParaView's XDMF readers return an empty grid at a time that
two grids of a temporal collection share, so the series times strictly increase: a frame at the
same time as the one before (a dynamic step starts where the previous step ended, in the same
configuration) takes its place in the series (both stay in the results file), and the steps
choose clocks that only grow (see :class:`fem.io.hdf5.StepWriter`).

**Cells by type.** Every element group is drawn by its declared ``cell_type``
(:class:`fem.elements.base.ElementGroup`): ``vertex`` as ``Polyvertex`` (grounded springs),
``line`` as ``Polyline`` of two nodes (trusses, beams), ``triangle`` as ``Triangle``, ``quad`` as
``Quadrilateral`` (shells), ``tetra`` and ``hexahedron`` as solids; the cells are in group order
(:func:`topology`). A model of one cell type gets that uniform topology; a model of several gets
one ``Mixed`` topology (each cell: its XDMF type number, the node count for polyvertices and
polylines, its nodes) rather than one grid per cell type, because then the mesh stays one grid:
the cell data remain one array per quantity over all cells in topology order, each frame stays
one grid that includes the mesh's topology and geometry by reference, and ParaView gets one
unstructured grid (not a multiblock data set) whose filters see every group at once. The
topology's array is ``/model/cells`` (:mod:`fem.io.hdf5`). Point data: ``displacement``,
``rotation`` (rotation vector), ``velocity``, ``reaction`` (forces) and, in a model with rotation
DOFs, the nodal frames ``axis_x``, ``axis_y``, ``axis_z``. Cell data: the section forces and what
else the groups output.

**Joints as blocks.** In a model with constraint groups (joints, ties) each frame is a spatial
collection (ParaView: a multiblock data set) of the elements' grid, ``elements``, and one grid
per group (:func:`constraint_blocks`), named ``"<type> <group>"``: lines between the group's node
pairs (``/model/constraints/<c>/connectivity``; a joint to the ground pairs its node with the
supported node at the joint point) with the point data ``displacement`` and, as cell data, the
group's outputs: ``(T, E)`` ones as scalars (the joint-frame components, ``angle``, ``slide``,
``effort``), ``(T, E, 3)`` ones as vectors (the global ``force`` and ``moment`` of
:meth:`fem.constraints.joint.Joint.outputs`, which *Glyph* draws as arrows). These are
hyperslabs of ``/steps/<step>/elements/<c>/<q>``, no copies. The collection holds the frame's
time; its grids hold none. Separate grids, not more cells of the mesh, because the joints'
vectors would otherwise be ``NaN`` on every element cell (which *Glyph* cannot draw) and the
elements' section forces ``NaN`` on every joint, and because ParaView can then show, hide or
extract the joints by block. A model without constraint groups keeps one uniform grid per frame.

**Oriented frames.** A node's orientation (a rigid body's, :mod:`fem.elements.rigid_body`, or a
beam node's) is drawn as three vectors, the columns of its rotation matrix ``R`` (the images of
the global axes, which are the material axes at the reference): ``axis_x``, ``axis_y``,
``axis_z`` ``(T, n, 3)`` in ``/xdmf/<step>/``, derived from the step's quaternions
``/steps/<step>/rotation`` when each frame is written (2D: ``(cos, sin, 0)``, ``(-sin, cos, 0)``,
``(0, 0, 1)``). They are written for every node of a model in which some element or constraint
group has a rotation DOF (nodes without rotations keep the identity, the global axes) and not at
all otherwise. In ParaView, a *Glyph* filter per axis (glyph type Arrow, orientation array
``axis_x``, scale by a constant) on the displaced mesh (*Warp By Vector* with ``displacement``)
draws each body as a moving triad.
"""

from __future__ import annotations

import logging
import os
import time as _time
import xml.etree.ElementTree as ET
from dataclasses import dataclass

import h5py
import numpy as np

from fem import rotations as so3
from fem.io import files

log = logging.getLogger(__name__)
WRITE_SHARE = 0.05          # at most this share of the run's time goes to rewriting the XDMF


@dataclass(frozen=True)
class Frame:
    """One output frame: its step, index within the step, and time in the whole analysis."""

    step: str
    index: int
    time: float


# meshio / fem cell type -> XDMF topology type, nodes per cell, number in a Mixed topology
XDMF_CELLS = {"vertex": ("Polyvertex", 1, 0x1), "line": ("Polyline", 2, 0x2),
              "triangle": ("Triangle", 3, 0x4), "quad": ("Quadrilateral", 4, 0x5),
              "tetra": ("Tetrahedron", 4, 0x6), "hexahedron": ("Hexahedron", 8, 0x9)}
POLY = ("vertex", "line")           # XDMF types whose cells say their node count in Mixed
AXES = ("axis_x", "axis_y", "axis_z")   # the nodal frames' vectors (see the docstring)


@dataclass(frozen=True)
class Topology:
    """The drawn cells, as the XDMF topology names them.

    ``kind`` is the XDMF topology type (``"Polyline"``, ..., ``"Mixed"``), ``cells`` the array
    ``/model/cells`` (``(E, nen)`` node indices, or the flat Mixed array), ``count`` the number
    of cells and ``groups`` the groups drawn, in order.
    """

    kind: str
    cells: np.ndarray
    count: int
    groups: tuple

    @property
    def nodes_per_element(self) -> int | None:
        """Nodes of each cell of a uniform topology (None for Mixed)."""
        return None if self.kind == "Mixed" else self.cells.shape[1]


def drawn_groups(model) -> list:
    """The element groups drawn: every group of a cell type XDMF has (see the docstring)."""
    return [g for g in model.groups if g.cell_type in XDMF_CELLS]


def topology(model) -> Topology:
    """The cells of every drawn group, uniform if they are of one type, else Mixed."""
    groups = drawn_groups(model)
    types = {g.cell_type for g in groups}
    count = sum(len(g) for g in groups)
    if len(types) <= 1:
        kind, nen, _ = XDMF_CELLS[types.pop() if types else "line"]
        cells = (np.concatenate([g.conn for g in groups]) if groups
                 else np.zeros((0, nen), dtype=np.int64))
        return Topology(kind, cells, count, tuple(groups))
    parts = []
    for g in groups:                        # per group, vectorized over its cells
        _, nen, code = XDMF_CELLS[g.cell_type]
        head = [np.full(len(g), code)] + ([np.full(len(g), nen)] if g.cell_type in POLY else [])
        parts.append(np.column_stack(head + [g.conn]).ravel())
    return Topology("Mixed", np.concatenate(parts).astype(np.int64), count, tuple(groups))


def frame_arrays(model, step: str, values: dict) -> dict:
    """The per-step arrays ParaView needs beside a frame's ``values`` (see the module docstring).

    ``values`` maps the step's dataset names to one frame's arrays; the keys returned are
    absolute paths in the results file.
    """
    n, d = model.n_nodes, model.dim
    out = {}
    for key in ("velocity", "reaction"):
        if key in values:
            v = np.zeros((n, 3))
            v[:, :d] = np.asarray(values[key])[:, :d]
            out[f"/xdmf/{step}/{key}"] = v
    if "rotation" in values and has_rotations(model):
        R = so3.quat_to_matrix(np.asarray(values["rotation"], dtype=float))    # (n, 3, 3)
        for k, key in enumerate(AXES):
            out[f"/xdmf/{step}/{key}"] = R[:, :, k]
    groups = drawn_groups(model)
    drawn = {g.name for g in groups}
    names = sorted({key.split("/")[2] for key in values
                    if key.startswith("elements/") and key.split("/")[1] in drawn})
    total = sum(len(g.conn) for g in groups)
    for q in names:
        arr = np.full(total, np.nan)
        off = 0
        for g in groups:
            src = values.get(f"elements/{g.name}/{q}")
            if src is not None:
                arr[off:off + len(g.conn)] = src
            off += len(g.conn)
        out[f"/xdmf/{step}/cells/{q}"] = arr
    return out


def has_rotations(model) -> bool:
    """Whether some element or constraint group of ``model`` has a rotation DOF."""
    return any({"rx", "ry", "rz"} & set(g.dof_names)
               for g in (*model.groups, *getattr(model, "constraints", ())))


def frame_fields(h5, step: str, k: int) -> list[tuple[str, str, tuple]]:
    """``(attribute, hyperslab reference, frame shape)`` of frame ``k`` of ``step``."""
    s = h5[f"steps/{step}"]
    refs = [("displacement", s.get("displacement")), ("rotation", s.get("rotation_vector"))]
    x = h5.get(f"xdmf/{step}")
    if x is not None:
        refs += [(name, x.get(name)) for name in ("velocity", "reaction", *AXES)]
        cells = x.get("cells")
        if cells is not None:
            refs += [(q, cells[q]) for q in sorted(cells)]
    return [(name, _slab(d, k), d.shape[1:]) for name, d in refs if d is not None]


def _slab(d: h5py.Dataset, k: int) -> str:
    """Xdmf3's ``path|start:stride:count:dims`` for frame ``k`` of dataset ``d``."""
    rank = len(d.shape)
    start = " ".join([str(k)] + ["0"] * (rank - 1))
    stride = " ".join(["1"] * rank)
    count = " ".join(["1"] + [str(x) for x in d.shape[1:]])
    dims = " ".join(str(x) for x in d.shape)
    return f"{d.name}|{start}:{stride}:{count}:{dims}"


@dataclass(frozen=True)
class Block:
    """A constraint group drawn in one frame: a grid of its own beside the elements' mesh.

    ``name`` is the grid's name (``"<type> <group>"``), ``cells`` the path of its connectivity
    ``(E, 2)`` in the results file, ``count`` its ``E``, ``nodes`` the model's node count, and
    ``fields`` ``(attribute, hyperslab reference, frame shape, center)``.
    """

    name: str
    cells: str
    count: int
    nodes: int
    fields: tuple


def constraint_blocks(h5, model, step: str, k: int) -> list[Block]:
    """The constraint groups' grids of frame ``k`` of ``step`` (see the module docstring).

    Each joint (or tie) group is drawn as lines between its node pairs
    (``/model/constraints/<c>/connectivity``; a joint to the ground pairs its node with the
    supported node at the joint point); its frame's data are hyperslabs of the step's own
    datasets: ``displacement`` (point data, for *Warp By Vector*), and every quantity of
    ``/steps/<step>/elements/<c>/``: ``(T, E)`` ones as cell scalars, ``(T, E, 3)`` ones (the
    joints' global ``force`` and ``moment``) as cell vectors.
    """
    s = h5[f"steps/{step}"]
    disp = s.get("displacement")
    out = []
    for c in getattr(model, "constraints", ()):
        conn = h5.get(f"model/constraints/{c.name}/connectivity")
        if conn is None or disp is None:
            continue
        fields = [("displacement", _slab(disp, k), disp.shape[1:], "Node")]
        group = s.get(f"elements/{c.name}")
        for q in (sorted(group) if group is not None else ()):
            d = group[q]
            if d.ndim == 2 or (d.ndim == 3 and d.shape[2] == 3):
                fields.append((q, _slab(d, k), d.shape[1:], "Cell"))
        out.append(Block(f"{c.type_name} {c.name}", conn.name, conn.shape[0],
                         int(h5["model/nodes"].shape[0]), tuple(fields)))
    return out


def _attribute(grid: ET.Element, h5name: str, name: str, ref: str, shape: tuple,
               center: str) -> None:
    att = ET.SubElement(grid, "Attribute", Name=name,
                        AttributeType="Vector" if len(shape) == 2 else "Scalar", Center=center)
    item = ET.SubElement(att, "DataItem", DataType="Float", Precision="8", Format="HDF",
                         Dimensions=" ".join(str(x) for x in shape))
    item.text = f"{h5name}:{ref}"


def _block_grid(parent: ET.Element, h5name: str, block: Block) -> None:
    """A constraint group's grid (:class:`Block`): lines between its node pairs."""
    grid = ET.SubElement(parent, "Grid", Name=block.name, GridType="Uniform")
    topo = ET.SubElement(grid, "Topology", TopologyType="Polyline", NodesPerElement="2",
                         NumberOfElements=str(block.count))
    item = ET.SubElement(topo, "DataItem", DataType="Int", Precision="8", Format="HDF",
                         Dimensions=f"{block.count} 2")
    item.text = f"{h5name}:{block.cells}"
    geo = ET.SubElement(grid, "Geometry", GeometryType="XYZ")
    item = ET.SubElement(geo, "DataItem", DataType="Float", Precision="8", Format="HDF",
                         Dimensions=f"{block.nodes} 3")
    item.text = f"{h5name}:/model/nodes"
    for name, ref, shape, center in block.fields:
        _attribute(grid, h5name, name, ref, shape, center)


def _mesh_grid(domain: ET.Element, h5name: str, model, topo: Topology) -> None:
    grid = ET.SubElement(domain, "Grid", Name="mesh", GridType="Uniform")
    nen = topo.nodes_per_element
    attrs = {"TopologyType": topo.kind, "NumberOfElements": str(topo.count)}
    if topo.kind in ("Polyvertex", "Polyline"):
        attrs["NodesPerElement"] = str(nen)
    element = ET.SubElement(grid, "Topology", **attrs)
    item = ET.SubElement(element, "DataItem", DataType="Int", Precision="8", Format="HDF",
                         Dimensions=" ".join(str(x) for x in topo.cells.shape))
    item.text = f"{h5name}:/model/cells"
    geo = ET.SubElement(grid, "Geometry", GeometryType="XYZ")
    item = ET.SubElement(geo, "DataItem", DataType="Float", Precision="8", Format="HDF",
                         Dimensions=f"{model.n_nodes} 3")
    item.text = f"{h5name}:/model/nodes"


def _frame_grid(parent, name, time, h5name, fields) -> ET.Element:
    grid = ET.SubElement(parent, "Grid", Name=name, GridType="Uniform")
    ET.SubElement(grid, "{http://www.w3.org/2001/XInclude}include",
                  xpointer="xpointer(//Grid[@Name='mesh']/*[self::Topology or self::Geometry])")
    ET.SubElement(grid, "Time", Value=repr(float(time)))
    for field, ref, shape in fields:
        vector = len(shape) == 2
        att = ET.SubElement(grid, "Attribute", Name=field,
                            AttributeType="Vector" if vector else "Scalar",
                            Center="Node" if vector else "Cell")
        item = ET.SubElement(att, "DataItem", DataType="Float", Precision="8", Format="HDF",
                             Dimensions=" ".join(str(x) for x in shape))
        item.text = f"{h5name}:{ref}"
    return grid


def _text(element: ET.Element, level: int) -> str:
    ET.indent(element, space="  ", level=level)
    text = ET.tostring(element, encoding="unicode")
    return "  " * level + text.replace("ns0:", "xi:").replace(' xmlns:ns0="http://www.w3.org/'
                                                             '2001/XInclude"', "") + "\n"


class SeriesFile:
    """``<out>.xdmf``: the frames so far, rewritten whole (see the module docstring)."""

    FOOTER = "    </Grid>\n  </Domain>\n</Xdmf>\n"

    def __init__(self, path: str, h5name: str, model, topo: Topology):
        self.path, self.h5name, self.model, self.topology = path, h5name, model, topo
        self.grids: list[tuple[float, str]] = []
        self._dirty = False
        self._written_at = -np.inf
        self._cost = 0.0

    def _head(self) -> str:
        holder = ET.Element("Domain")
        _mesh_grid(holder, self.h5name, self.model, self.topology)
        return ('<?xml version="1.0" encoding="utf-8"?>\n'
                '<Xdmf xmlns:xi="http://www.w3.org/2001/XInclude" Version="3.0">\n'
                "  <Domain>\n" + _text(holder[0], 2)
                + '    <Grid Name="history" GridType="Collection" CollectionType="Temporal">\n')

    def add(self, name: str, time: float, fields, blocks=()) -> None:
        """Add one frame (already committed to the results file); :meth:`write` shows it.

        With constraint ``blocks`` (:func:`constraint_blocks`) the frame is a spatial
        collection named ``name`` (holding the time) of the elements' grid, ``"elements"``, and
        one grid per block.
        """
        time = float(time)
        if self.grids and time <= self.grids[-1][0]:
            if time == self.grids[-1][0]:
                self.grids.pop()                 # same time, same configuration: the newer wins
            else:                                # the steps' clocks only grow; keep it drawable
                log.debug("frame %s at time %r before %r", name, time, self.grids[-1][0])
                time = float(np.nextafter(self.grids[-1][0], np.inf))
        holder = ET.Element("Grid")
        if blocks:
            frame = ET.SubElement(holder, "Grid", Name=name, GridType="Collection",
                                  CollectionType="Spatial")
            ET.SubElement(frame, "Time", Value=repr(time))
            mesh = _frame_grid(frame, "elements", time, self.h5name, fields)
            mesh.remove(mesh.find("Time"))           # the collection's time is the frame's
            for block in blocks:
                _block_grid(frame, self.h5name, block)
        else:
            frame = _frame_grid(holder, name, time, self.h5name, fields)
        self.grids.append((time, _text(frame, 3)))
        self._dirty = True

    def write(self, force: bool = True) -> None:
        """Write the document if frames were added (unless ``force``, only when it is cheap)."""
        if not self._dirty:
            return
        if not force and _time.monotonic() - self._written_at < self._cost / WRITE_SHARE:
            return
        start = _time.monotonic()
        files.write_text(self.path, self._head() + "".join(g for _, g in self.grids)
                         + self.FOOTER)
        self._written_at = _time.monotonic()
        self._cost = self._written_at - start
        self._dirty = False


def _write(path: str, root: ET.Element) -> None:
    ET.register_namespace("xi", "http://www.w3.org/2001/XInclude")
    ET.indent(root)
    text = ET.tostring(root, encoding="unicode")
    files.write_text(path, '<?xml version="1.0" encoding="utf-8"?>\n' + text + "\n")


def _root() -> tuple[ET.Element, ET.Element]:
    root = ET.Element("Xdmf", Version="3.0")
    return root, ET.SubElement(root, "Domain")


def write_modes(path: str, results, name: str, count: int, topo: Topology,
                labels: list[str] | None = None, times=None) -> None:
    """``<out>_<step>_modes.xdmf``: mode ``i`` named ``labels[i]`` at "time" ``times[i]``.

    By default ``mode i + 1`` at time ``i + 1``. Times must increase strictly (ParaView orders
    the grids by them); a repeated frequency (a double mode) falls back to mode numbers.
    """
    times = list(range(1, count + 1)) if times is None else [float(t) for t in times]
    if any(b <= a for a, b in zip(times, times[1:], strict=False)):
        times = list(range(1, count + 1))
    labels = labels or [f"mode {i + 1}" for i in range(count)]
    h5, model = results.h5, results.model
    shapes = h5[f"modes/{name}/shapes"][()]
    d, n = model.dim, model.n_nodes
    disp = np.zeros((count, n, 3))
    disp[:, :, :d] = shapes[:, :, :d]
    rot = np.zeros((count, n, 3))
    if d == 2:
        rot[:, :, 2] = shapes[:, :, 2]
    else:
        rot[:] = shapes[:, :, 3:6]
    g = h5.require_group(f"xdmf/modes/{name}")
    fields = []
    for field, data in (("displacement", disp), ("rotation", rot)):
        ds = g.create_dataset(field, data=data)
        fields.append((field, ds))
    h5.flush()
    root, domain = _root()
    h5name = os.path.basename(results.path)
    _mesh_grid(domain, h5name, model, topo)
    series = ET.SubElement(domain, "Grid", Name="modes", GridType="Collection",
                           CollectionType="Temporal")
    for i in range(count):
        _frame_grid(series, labels[i], times[i], h5name,
                    [(f, _slab(ds, i), ds.shape[1:]) for f, ds in fields])
    _write(path, root)


VIBRATION_FRAMES = 20      # frames per period of a mode's vibration


def write_vibration(path: str, results, name: str, count: int, topo: Topology,
                    labels: list[str], frames: int = VIBRATION_FRAMES) -> None:
    """``<out>_<step>_vibration.xdmf``: each mode of a modal step vibrating through one period.

    Mode ``i`` (0-based) is ``frames`` frames at "times" ``i + j / frames``, ``j = 0 ..
    frames - 1``, whose ``displacement`` is ``sin(2 pi j / frames)`` times its shape scaled to a
    largest nodal translation of 1 (one *Warp By Vector* scale factor suits every mode); playing
    the time series in a loop shows the modes one after the other, each for one period, and
    ParaView's time range set to ``[i, i + 1)`` loops one mode. Each frame is named
    ``"<labels[i]>, phase j/frames"`` (the label carries the frequency). The frames are
    ``/xdmf/modes/<step>/vibration`` ``(count * frames, n, 3)``, single precision (a picture:
    half the bytes).
    """
    h5, model = results.h5, results.model
    shapes = h5[f"modes/{name}/shapes"][()]
    d, n = model.dim, model.n_nodes
    disp = np.zeros((count, n, 3))
    disp[:, :, :d] = shapes[:, :, :d]
    peak = np.abs(disp).max(axis=(1, 2))
    disp /= np.where(peak > 0, peak, 1.0)[:, None, None]
    phase = np.sin(2 * np.pi * np.arange(frames) / frames)
    data = (phase[None, :, None, None] * disp[:, None]).reshape(count * frames, n, 3)
    g = h5.require_group(f"xdmf/modes/{name}")
    ds = g.create_dataset("vibration", data=data.astype(np.float32))
    h5.flush()
    root, domain = _root()
    h5name = os.path.basename(results.path)
    _mesh_grid(domain, h5name, model, topo)
    series = ET.SubElement(domain, "Grid", Name="vibration", GridType="Collection",
                           CollectionType="Temporal")
    for i in range(count):
        for j in range(frames):
            k = i * frames + j
            grid = _frame_grid(series, f"{labels[i]}, phase {j}/{frames}", i + j / frames,
                               h5name, [("displacement", _slab(ds, k), ds.shape[1:])])
            grid.find("Attribute/DataItem").set("Precision", "4")
    _write(path, root)
