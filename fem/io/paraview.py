"""XDMF files that ParaView, meshio and h5py users read alike, and what they name in the results.

* ``<out>.xdmf``: the frames of every static and dynamic step, one time series.
* ``<out>_<step>_modes.xdmf``: the mode shapes of a buckling, modal, cms_reduce or modify step.
* ``<out>_<step>_vibration.xdmf``: each mode of a modal step vibrating through one period.

**One grid, every reader.** Each document is meshio's time-series layout: a top-level uniform
grid ``mesh`` with the topology and geometry, then a temporal collection of uniform grids, one
per frame, that include them (``xi:include`` by an absolute path, which keeps a long series
quick to open: ParaView 5.11 took 20 s to open 3000 frames that found the mesh by
``//Grid[@Name='mesh']``, 0.6 s by ``/Xdmf/Domain/Grid[1]``). The grid is
:mod:`fem.io.drawing`'s: the model's nodes and element cells, then the drawn bodies, joints and
superelement nodes, with the cell arrays ``part`` and ``kind``. One unstructured grid, not a
multiblock data set: ParaView's Xdmf3 readers take their output type from the first grid and
showed a collection of grids beside it as an empty grid (issue 26), and meshio reads only the
attributes of each frame's own grid.

**XDMF, not VTKHDF.** ParaView 5.11's VTKHDF reader reads no time series and meshio 5.3.5 no
VTKHDF, while this XDMF reads in ParaView (both Xdmf3 readers), meshio and PyVista alike, at the
writer's former cost per frame (``python -m benchmarks output``, README "Performance").

**Every attribute a plain dataset.** Each attribute of frame ``k`` of step ``s`` names one
dataset, ``out.h5:/xdmf/steps/<s>/<name>/<k>``, never a hyperslab (meshio reads a whole
dataset, ``file:/path``). Each is an HDF5 *virtual dataset* that maps the frame's slice of the
step's own ``(T, ...)`` datasets (``/steps/<s>/...``, unchanged) into the grid's point or cell
order, with no copy (:func:`virtual`): node rows from the step's nodal datasets, the drawn
points' rows from ``/xdmf/steps/<s>/drawn/<q>`` ``(T, m, 3)`` (their rigid motion) and the nodal
frames from ``/xdmf/steps/<s>/node/axis_<x|y|z>`` ``(T, n, 3)``, both written with each frame
(:func:`frame_arrays`), cell ranges from each group's outputs. Rows that a source does not cover
read the dataset's fill: 0 for point vectors (the z components in 2D; rotations and frames at
the drawn points, velocities at a superelement's recovered nodes), NaN for cell quantities,
nodal fields and frame scalars. Views are made when frames are committed
(:meth:`fem.io.hdf5.ResultsFile.commit`): about 0.2 ms and 0.45 kB each (a copy instead would
cost about as much time and double the data; benchmarks/output.py).

Point data (the grid's ``N`` points): ``displacement``, ``rotation`` (rotation vector) and
``reaction`` (forces), in dynamic steps ``velocity``, in models with rotation DOFs the nodal
frames ``axis_x``, ``axis_y``, ``axis_z`` (the columns of each node's rotation matrix; the drawn
bodies show their own frames); every ``/steps/<s>/nodal/<name>`` as ``<name>``; with joints or
ties ``joint_force`` and ``joint_moment`` (global, on the first node) at each item's joint
point, for *Glyph*. A frame's scalar (``time`` in dynamic steps, ``load_factor`` in static ones,
``/steps/<s>/time``) is point data at the first point, NaN elsewhere: meshio reads it, and the
min and max of ParaView's *Plot Data Over Time* are that value (measured with ParaView 5.11,
which plots no field data over time; its statistics over points with NaN are otherwise
unreliable, so a nodal field with NaN is plotted at chosen points, *Plot Selection Over
Time*). Cell data: each output quantity of the element and constraint groups by name (``(T,
E)`` ones as scalars, ``(T, E, 3)`` ones of elements as vectors; a joint's on its joint-point
cell), NaN on other cells; ``part``, ``kind``. Accelerations and angular velocities stay in
``/steps`` (each attribute costs a view per frame).

**Field data for labels.** ParaView's field data of a frame (``step``, ``frame`` and the frame's
scalars; in mode files ``mode``, ``frequency`` in Hz or the buckling ``load_factor``, and
``phase``) are ``Center="Grid"`` attributes written inline, inside an ``Information`` element of
the frame's grid and included into the grid by ``xi:include``: ParaView expands the include and
reads field data (*Python Annotation* labels a frame with them: ``"mode %d: %.4g Hz" % (mode[0],
frequency[0])``), meshio skips both elements (it raises on a grid-centred attribute).

**Stable arrays.** Every frame of a document names the same arrays in the same order (ParaView's
plots over time take arrays by position): an array a frame lacks (the velocity of a static
frame, the time of a static step) names a shared dataset of NaN,
``/xdmf/missing/<point|cell>_<1|3>``, a virtual dataset without sources; a field datum it lacks
is NaN.

**Always a valid document, naming only frames that exist.** The XDMF text is rewritten whole under
a temporary name and renamed into place (:func:`fem.io.files.write_text`), after the frames it
names and their views were committed to the results file. An interrupted run, a full disk or an
unwritable folder therefore leave either the previous complete document or the new one.
Rewriting costs time proportional to the number of frames, so when a write takes long the next one
waits proportionally longer (at most a few percent of the run's time).

**Every frame is drawable.** ParaView's readers return an empty grid at a time that two grids of
a temporal collection share, so the series times strictly increase: a frame at the same time as
the one before (a dynamic step starts where the previous step ended, in the same configuration)
takes its place in the series (both stay in the results file), and the steps choose clocks that
only grow (see :class:`fem.io.hdf5.StepWriter`).
"""

from __future__ import annotations

import logging
import os
import time as _time
from dataclasses import dataclass, field

import h5py
import numpy as np

from fem import rotations as so3
from fem.io import files
from fem.io.drawing import KINDS, Drawing

log = logging.getLogger(__name__)
WRITE_SHARE = 0.05          # at most this share of the run's time goes to rewriting the XDMF
AXES = ("axis_x", "axis_y", "axis_z")   # the nodal frames' vectors (see the docstring)
MESH = "xpointer(/Xdmf/Domain/Grid[1]/*[self::Topology or self::Geometry])"


@dataclass(frozen=True)
class Frame:
    """One output frame: its step, index within the step and time in the whole analysis.

    ``written``: the names of the step's datasets it wrote (a quantity it lacks is NaN there).
    """

    step: str
    index: int
    time: float
    written: frozenset = frozenset()


@dataclass(frozen=True)
class Attribute:
    """One attribute of a frame.

    ``name``, ``center`` (``Node``, ``Cell``), ``components`` (1 or 3) and the absolute ``path``
    of its dataset in the results file.
    """

    name: str
    center: str
    components: int
    path: str
    integer: bool = False
    precision: int = 8

    @property
    def key(self) -> tuple:
        """What makes two frames' attributes the same array."""
        return (self.name, self.center, self.components, self.integer)


@dataclass
class View:
    """A frame as the XDMF names it: ``attributes`` and the ``field`` data ``{name: value}``."""

    name: str
    time: float
    attributes: list[Attribute]
    field: dict = field(default_factory=dict)


# --- datasets -------------------------------------------------------------------------------------
def virtual(h5: h5py.File, path: str, shape: tuple, fill: float, maps,
            groups: dict | None = None) -> None:
    """A virtual dataset ``path`` of ``shape`` (float64, ``fill`` where unmapped) in ``h5``.

    ``maps`` are ``(start, count, source, source_start, source_count)``: the hyperslab ``start``
    ``count`` of the new dataset reads the hyperslab of ``source`` (an :class:`h5py.Dataset` of
    the same file, or ``(path, dataset)`` to spare the name's look-up) with as many elements.
    ``groups`` caches the parent groups' ids by path. HDF5's low-level calls: about four times
    faster than h5py's ``VirtualLayout``.
    """
    dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
    dcpl.set_layout(h5py.h5d.VIRTUAL)
    dcpl.set_fill_value(np.array(fill, dtype=np.float64))
    space = h5py.h5s.create_simple(tuple(shape))
    for start, count, source, s_start, s_count in maps:
        if not np.prod(count):
            continue
        name, source = source if isinstance(source, tuple) else (source.name, source)
        vsel = h5py.h5s.create_simple(tuple(shape))
        vsel.select_hyperslab(tuple(start), tuple(count))
        ssel = source.id.get_space()
        ssel.select_hyperslab(tuple(s_start), tuple(s_count))
        dcpl.set_virtual(vsel, b".", name.encode(), ssel)
    parent, _, leaf = path.rpartition("/")
    groups = {} if groups is None else groups
    gid = groups.get(parent)
    if gid is None:
        gid = groups[parent] = h5.require_group(parent or "/").id
    h5py.h5d.create(gid, leaf.encode(), h5py.h5t.IEEE_F64LE, space, dcpl=dcpl).close()


def write_drawing(h5: h5py.File, drawing: Drawing) -> None:
    """``/xdmf/``: the drawn grid (points, cells, carrier, part, kind, missing) and its spans.

    Attributes say where each group is in the grid (:class:`fem.io.drawing.Span`):
    ``first_cell`` of ``/model/groups/<g>`` (its cells), ``first_point`` and ``drawn_count`` of
    a co-rotational superelement (its recovered nodes), ``first_point``, ``first_cell`` and
    ``drawn_count`` of ``/model/constraints/<c>`` (the joint points of its items' first nodes
    and their cells).
    """
    g = h5.require_group("xdmf")
    topo = drawing.topology
    g.create_dataset("points", data=drawing.points)
    cells = g.create_dataset("cells", data=topo.cells)
    cells.attrs["topology"] = topo.kind
    g.create_dataset("carrier", data=drawing.carrier)
    g.create_dataset("part", data=drawing.part.astype(np.int32))
    g.create_dataset("kind", data=drawing.kind.astype(np.int32))
    g.attrs["parts"] = list(drawing.parts) or [""]
    g.attrs["kinds"] = [k for k, _ in sorted(KINDS.items(), key=lambda kv: kv[1])]
    for name, span in drawing.elements.items():
        h5[f"model/groups/{name}"].attrs["first_cell"] = span.first_cell
    for name, span in drawing.recovered.items():
        a = h5[f"model/groups/{name}"].attrs
        a["first_point"], a["drawn_count"] = span.first, span.count
    for name, span in drawing.constraints.items():
        a = h5[f"model/constraints/{name}"].attrs
        a["first_point"], a["first_cell"], a["drawn_count"] = (span.first, span.first_cell,
                                                                span.count)
    for center, size in (("point", drawing.n_points), ("cell", topo.count)):
        for c in (1, 3):
            virtual(h5, f"/xdmf/missing/{center}_{c}", (size,) if c == 1 else (size, c),
                    np.nan, ())


def _missing(a: Attribute) -> str:
    return f"/xdmf/missing/{'point' if a.center == 'Node' else 'cell'}_{a.components}"


STATIC = [Attribute("part", "Cell", 1, "/xdmf/part", integer=True, precision=4),
          Attribute("kind", "Cell", 1, "/xdmf/kind", integer=True, precision=4)]


# --- a step's frames ------------------------------------------------------------------------------
def has_rotations(model) -> bool:
    """Whether some element or constraint group of ``model`` has a rotation DOF."""
    return any({"rx", "ry", "rz"} & set(g.dof_names)
               for g in (*model.groups, *getattr(model, "constraints", ())))


def frame_arrays(drawing: Drawing, model, step: str, values: dict) -> dict:
    """What a frame's views need beside its ``values`` (the step's datasets by name).

    ``/xdmf/steps/<step>/drawn/<q>`` ``(m, 3)``: the drawn points' displacement and velocity
    (:meth:`fem.io.drawing.Drawing.carried`); ``/xdmf/steps/<step>/node/axis_x`` (``_y``,
    ``_z``) ``(n, 3)``: the nodal frames, in models with rotation DOFs. Written with the frame.
    """
    out = {}
    if "rotation" not in values:
        return out
    if drawing.n_carried:
        out.update({f"/xdmf/steps/{step}/drawn/{q}": v
                    for q, v in drawing.carried(values, model.dim).items()})
    if has_rotations(model):
        R = so3.quat_to_matrix(np.asarray(values["rotation"], dtype=float))    # (n, 3, 3)
        out.update({f"/xdmf/steps/{step}/node/{name}": R[:, :, j]
                    for j, name in enumerate(AXES)})
    return out


#: point vectors: (attribute, the step's dataset, its columns: "all", "linear")
POINT_VECTORS = (("displacement", "displacement", "all"), ("rotation", "rotation_vector", "all"),
                 ("velocity", "velocity", "linear"), ("reaction", "reaction", "linear"))


def frame_views(h5: h5py.File, drawing: Drawing, model, frame: Frame, datasets: dict,
                attrs: dict, groups: dict) -> View:
    """Make the datasets of ``frame`` and return its :class:`View` (unnamed).

    ``datasets`` are the step's datasets by the names its frames write (its writer's), ``attrs``
    the step group's attributes and ``groups`` a cache of group ids (:func:`virtual`). Only the
    datasets the frame wrote (:attr:`Frame.written`) are mapped: a quantity that a step has only
    from a later frame on (the reactions of a dynamic step) is missing, not NaN padded with
    zeros, whenever the frames are committed.
    """
    step, k = frame.step, frame.index
    written = frame.written

    def source(name):
        return (name if name.startswith("/") else f"/steps/{step}/{name}", datasets[name])

    base = f"/xdmf/steps/{step}"
    N, n, m = drawing.n_points, drawing.n_nodes, drawing.n_carried
    d = model.dim
    out = list(STATIC)

    def add(name, center, components, maps, fill, shape):
        # cell arrays apart: a point and a cell array may share a name (a shell's thickness)
        path = f"{base}/{name}/{k}" if center == "Node" else f"{base}/cells/{name}/{k}"
        virtual(h5, path, shape, fill, maps, groups)
        out.append(Attribute(name, center, components, path))

    for name, src, kind in POINT_VECTORS:
        if src not in written:
            continue
        c = 3 if kind == "all" else d
        maps = [((0, 0), (n, c), source(src), (k, 0, 0), (1, n, c))]
        if f"{base}/drawn/{name}" in written:
            maps.append(((n, 0), (m, 3), source(f"{base}/drawn/{name}"), (k, 0, 0), (1, m, 3)))
        if name in ("displacement", "rotation"):
            for g, span in drawing.recovered.items():
                q = f"elements/{g}/recovered_displacement"
                if q in written:                 # ux, uy, rz of the component's nodes
                    cols = (0, 0, 2) if name == "displacement" else (2, 2, 1)
                    maps.append(((span.first, cols[1]), (span.count, cols[2]), source(q),
                                 (k, 0, 0, cols[0]), (1, 1, span.count, cols[2])))
        add(name, "Node", 3, maps, 0.0, (N, 3))
    scalar = "time" if attrs.get("type") == "dynamic" else "load_factor"
    add(scalar, "Node", 1, [((0,), (1,), source("time"), (k,), (1,))], np.nan, (N,))
    taken = {a.name for a in out}
    for key in sorted(w for w in written if w.startswith("nodal/")):
        ds = datasets[key]
        name = key[len("nodal/"):]
        rest = ds.shape[2:]
        add(name if name not in taken else f"nodal_{name}", "Node", 3 if rest else 1,
            [((0,) * (ds.ndim - 1), (n,) + rest, source(key), (k,) + (0,) * (ds.ndim - 1),
              (1, n) + rest)], np.nan, (N,) + rest)
    outputs = {}
    for key in written:
        if key.startswith("elements/"):
            _, g, q = key.split("/", 2)
            outputs.setdefault(g, {})[q] = key
    cells, points = {}, {}
    spans = [(g, span, False) for g, span in drawing.elements.items()] \
        + [(c, span, True) for c, span in drawing.constraints.items()]
    for g, span, joint in spans:
        group = outputs.get(g)
        if not group or not span.count:
            continue
        for q, key in sorted(group.items()):
            ds = datasets[key]
            if ds.ndim == 2:
                cells.setdefault((q, 1), []).append(
                    ((span.first_cell,), (span.count,), source(key), (k, 0), (1, span.count)))
                if joint and q in ("fx", "fy", "fz") and "force" not in group:     # ties
                    j = "xyz".index(q[1])
                    points.setdefault("joint_force", []).append(
                        ((span.first, j), (span.count, 1), source(key), (k, 0),
                         (1, span.count)))
            elif ds.ndim == 3 and ds.shape[2] == 3:
                if joint:
                    points.setdefault(f"joint_{q}", []).append(
                        ((span.first, 0), (span.count, 3), source(key), (k, 0, 0),
                         (1, span.count, 3)))
                else:
                    cells.setdefault((q, 3), []).append(
                        ((span.first_cell, 0), (span.count, 3), source(key), (k, 0, 0),
                         (1, span.count, 3)))
    for name, maps in sorted(points.items()):
        add(name, "Node", 3, maps, 0.0, (N, 3))
    C = drawing.topology.count
    for (name, c), maps in sorted(cells.items()):
        add(name, "Cell", c, maps, np.nan, (C,) if c == 1 else (C, 3))
    for name in AXES:
        key = f"{base}/node/{name}"
        if key in written:
            add(name, "Node", 3, [((0, 0), (n, 3), source(key), (k, 0, 0), (1, n, 3))], 0.0,
                (N, 3))
    value = float(datasets["time"][k])
    return View("", 0.0, out, {"step": float(attrs.get("index", 0)), "frame": float(k),
                               scalar: value})


# --- the document ---------------------------------------------------------------------------------
def _item(h5name: str, path: str, dims, integer: bool = False, precision: int = 8) -> str:
    kind = "Int" if integer else "Float"
    return (f'<DataItem DataType="{kind}" Precision="{precision}" Format="HDF" '
            f'Dimensions="{" ".join(str(x) for x in dims)}">{h5name}:{path}</DataItem>')


def head(h5name: str, drawing: Drawing, series: str) -> str:
    """The document up to the first frame: the mesh grid and the temporal collection's start."""
    topo = drawing.topology
    attrs = f'TopologyType="{topo.kind}" NumberOfElements="{topo.count}"'
    if topo.kind in ("Polyvertex", "Polyline"):
        attrs += f' NodesPerElement="{topo.nodes_per_element}"'
    return ('<?xml version="1.0" encoding="utf-8"?>\n'
            '<Xdmf xmlns:xi="http://www.w3.org/2001/XInclude" Version="3.0">\n'
            '  <Domain>\n'
            '    <Grid Name="mesh" GridType="Uniform">\n'
            f'      <Topology {attrs}>\n'
            f'        {_item(h5name, "/xdmf/cells", topo.cells.shape, True)}\n'
            '      </Topology>\n'
            '      <Geometry GeometryType="XYZ">\n'
            f'        {_item(h5name, "/xdmf/points", (drawing.n_points, 3))}\n'
            '      </Geometry>\n'
            '    </Grid>\n'
            f'    <Grid Name="{series}" GridType="Collection" CollectionType="Temporal">\n')


FOOT = "    </Grid>\n  </Domain>\n</Xdmf>\n"


def _attribute(h5name: str, a: Attribute, size: int, path: str | None = None) -> str:
    dims = (size,) if a.components == 1 else (size, a.components)
    kind = "Scalar" if a.components == 1 else "Vector"
    return (f'        <Attribute Name="{a.name}" AttributeType="{kind}" Center="{a.center}">\n'
            f'          {_item(h5name, path or a.path, dims, a.integer, a.precision)}\n'
            '        </Attribute>\n')


def _number(x: float) -> str:
    return repr(float(x)) if np.isfinite(x) else "NaN"


def frame_text(h5name: str, view: View, position: int, sizes: dict, arrays: dict,
               fields: list[str]) -> str:
    """One frame's grid: the mesh, its time, field data and attributes.

    ``arrays`` ``{key: Attribute}`` and ``fields`` are every array of the document, in order:
    each frame names them all, in the same order (ParaView's plots over time take arrays by
    position), an array the frame lacks by its shared NaN dataset, a field datum it lacks as NaN.
    ``position`` is the frame's place in the collection (from 1), which the field data's include
    names.
    """
    out = [f'      <Grid Name="{view.name}" GridType="Uniform">\n'
           f'        <xi:include xpointer="{MESH}"/>\n'
           f'        <Time Value="{_number(view.time)}"/>\n']
    if fields:
        out.append('        <Information Name="field data" Value="included below, for '
                   'ParaView">\n')
        for name in fields:
            out.append(f'          <Attribute Name="{name}" AttributeType="Scalar" '
                       'Center="Grid"><DataItem DataType="Float" Precision="8" Format="XML" '
                       f'Dimensions="1">{_number(view.field.get(name, np.nan))}</DataItem>'
                       '</Attribute>\n')
        out.append('        </Information>\n'
                   '        <xi:include xpointer="xpointer(/Xdmf/Domain/Grid[2]/'
                   f'Grid[{position}]/Information/*)"/>\n')
    own = {a.key: a for a in view.attributes}
    for key, a in arrays.items():
        mine = own.get(key)
        out.append(_attribute(h5name, mine or a, sizes[a.center], None if mine else _missing(a)))
    out.append("      </Grid>\n")
    return "".join(out)


def document(h5name: str, drawing: Drawing, series: str, views: list[View]) -> str:
    """A whole document of ``views`` (every frame naming every array, see the docstring)."""
    sizes = {"Node": drawing.n_points, "Cell": drawing.topology.count}
    arrays, fields = {}, {}
    for v in views:
        for a in v.attributes:
            arrays.setdefault(a.key, a)
        for name in v.field:
            fields.setdefault(name, None)
    text = [head(h5name, drawing, series)]
    for i, v in enumerate(views):
        text.append(frame_text(h5name, v, i + 1, sizes, arrays, list(fields)))
    return "".join(text) + FOOT


class SeriesFile:
    """``<out>.xdmf``: the frames so far, rewritten whole (see the module docstring)."""

    def __init__(self, path: str, h5name: str, drawing: Drawing):
        self.path, self.h5name, self.drawing = path, h5name, drawing
        self.views: list[View] = []
        self._dirty = False
        self._written_at = -np.inf
        self._cost = 0.0

    def add(self, name: str, time: float, view: View) -> None:
        """Add one frame (already committed to the results file); :meth:`write` shows it."""
        time = float(time)
        if self.views and time <= self.views[-1].time:
            if time == self.views[-1].time:
                self.views.pop()                 # same time, same configuration: the newer wins
            else:                                # the steps' clocks only grow; keep it drawable
                log.debug("frame %s at time %r before %r", name, time, self.views[-1].time)
                time = float(np.nextafter(self.views[-1].time, np.inf))
        view.name, view.time = name, time
        self.views.append(view)
        self._dirty = True

    def write(self, force: bool = True) -> None:
        """Write the document if frames were added (unless ``force``, only when it is cheap)."""
        if not self._dirty:
            return
        if not force and _time.monotonic() - self._written_at < self._cost / WRITE_SHARE:
            return
        start = _time.monotonic()
        files.write_text(self.path, document(self.h5name, self.drawing, "history", self.views))
        self._written_at = _time.monotonic()
        self._cost = self._written_at - start
        self._dirty = False


# --- modes ----------------------------------------------------------------------------------------
def mode_motion(drawing: Drawing, model, shapes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(count, N, 3)`` displacements and rotation vectors of every drawn point in each mode.

    ``shapes (count, n, nslots)``: the carried points move with their carrier's small rigid
    motion ``u_c + theta_c x r``; a superelement's recovered nodes stay (0).
    """
    d, n, N = model.dim, model.n_nodes, drawing.n_points
    count = len(shapes)
    disp, rot = np.zeros((count, N, 3)), np.zeros((count, N, 3))
    disp[:, :n, :d] = shapes[:, :, :d]
    if d == 2:
        rot[:, :n, 2] = shapes[:, :, 2]
    else:
        rot[:, :n] = shapes[:, :, 3:6]
    c, r = drawing.carrier, drawing.offset
    sl = slice(n, n + drawing.n_carried)
    disp[:, sl] = disp[:, c] + np.cross(rot[:, c], r[None])
    rot[:, sl] = rot[:, c]
    return disp, rot


def _labels(results, name: str, step_type: str, count: int) -> dict[str, np.ndarray]:
    g = results.h5[f"modes/{name}"]
    out = {"mode": np.arange(1, count + 1, dtype=float)}
    if "hertz" in g:
        out["frequency"] = g["hertz"][()]
    elif step_type == "buckling":
        out["load_factor"] = g["eigenvalues"][()]
    return out


def write_modes(path: str, results, name: str, step_type: str, count: int,
                times=None, labels: list[str] | None = None) -> None:
    """``<out>_<step>_modes.xdmf``: mode ``i`` named ``labels[i]`` at "time" ``times[i]``.

    By default ``mode i + 1`` at time ``i + 1``. Times must increase strictly (ParaView orders
    the grids by them); a repeated frequency (a double mode) falls back to mode numbers. Each
    mode's ``displacement`` and ``rotation`` are real datasets
    ``/xdmf/modes/<step>/<name>/<i>`` over the drawn points (:func:`mode_motion`); its
    ``mode`` and ``frequency`` (Hz) or buckling ``load_factor`` are field data and point data
    at the first point.
    """
    times = list(range(1, count + 1)) if times is None else [float(t) for t in times]
    if any(b <= a for a, b in zip(times, times[1:], strict=False)):
        times = list(range(1, count + 1))
    h5, model, drawing = results.h5, results.model, results.drawing
    shapes = h5[f"modes/{name}/shapes"][()]
    disp, rot = mode_motion(drawing, model, shapes)
    values = _labels(results, name, step_type, count)
    base = f"/xdmf/modes/{name}"
    scalars = {q: h5.create_dataset(f"{base}/{q}_values", data=v) for q, v in values.items()}
    views = []
    for i in range(count):
        attrs = list(STATIC)
        for field_name, data in (("displacement", disp), ("rotation", rot)):
            p = f"{base}/{field_name}/{i}"
            h5.create_dataset(p, data=data[i])
            attrs.append(Attribute(field_name, "Node", 3, p))
        for q, ds in scalars.items():
            p = f"{base}/{q}/{i}"
            virtual(h5, p, (drawing.n_points,), np.nan, [((0,), (1,), ds, (i,), (1,))])
            attrs.append(Attribute(q, "Node", 1, p))
        views.append(View(labels[i] if labels else f"mode {i + 1}", times[i], attrs,
                          {q: float(v[i]) for q, v in values.items()}))
    h5.flush()
    files.write_text(path, document(os.path.basename(results.path), drawing, "modes", views))


VIBRATION_FRAMES = 20      # frames per period of a mode's vibration


def write_vibration(path: str, results, name: str, step_type: str, count: int,
                    frames: int = VIBRATION_FRAMES, labels: list[str] | None = None) -> None:
    """``<out>_<step>_vibration.xdmf``: each mode of a modal step vibrating through one period.

    Mode ``i`` (from 1) is ``frames`` frames at "times" ``i + j / frames``, ``j = 0 ..
    frames - 1``, whose ``displacement`` is ``sin(2 pi j / frames)`` times its shape scaled to a
    largest nodal translation of 1 (one *Warp By Vector* scale factor suits every mode); playing
    the time series in a loop shows the modes one after the other, each for one period, and
    ParaView's time range set to ``[i, i + 1)`` loops mode ``i``. Each frame is named
    ``"<labels[i]>, phase j/frames"`` and carries ``mode``, ``frequency`` (Hz) and ``phase`` (``j /
    frames``) as field data and as point data at the first point. The frames are
    ``/xdmf/modes/<step>/vibration/<k>`` ``(N, 3)``, single precision (a picture: half the
    bytes).
    """
    h5, model, drawing = results.h5, results.model, results.drawing
    shapes = h5[f"modes/{name}/shapes"][()]
    disp, _ = mode_motion(drawing, model, shapes)
    d = model.dim
    peak = np.abs(disp[:, :model.n_nodes, :d]).max(axis=(1, 2)) if model.n_nodes else \
        np.zeros(count)
    disp /= np.where(peak > 0, peak, 1.0)[:, None, None]
    phase = np.sin(2 * np.pi * np.arange(frames) / frames)
    values = _labels(results, name, step_type, count)
    base = f"/xdmf/modes/{name}"
    labels_ds = {q: h5[f"{base}/{q}_values"] for q in values}
    phases = h5.create_dataset(f"{base}/phase_values", data=np.arange(frames) / frames)
    views = []
    for i in range(count):
        for j in range(frames):
            k = i * frames + j
            p = f"{base}/vibration/{k}"
            h5.create_dataset(p, data=(phase[j] * disp[i]).astype(np.float32))
            attrs = list(STATIC) + [Attribute("displacement", "Node", 3, p, precision=4)]
            for q, ds, at in [(q, ds, i) for q, ds in labels_ds.items()] + [("phase", phases, j)]:
                pq = f"{base}/vibration_{q}/{k}"
                virtual(h5, pq, (drawing.n_points,), np.nan, [((0,), (1,), ds, (at,), (1,))])
                attrs.append(Attribute(q, "Node", 1, pq))
            field_data = {q: float(v[i]) for q, v in values.items()}
            field_data["phase"] = j / frames
            label = labels[i] if labels else f"mode {i + 1}"
            views.append(View(f"{label}, phase {j}/{frames}", i + 1 + j / frames, attrs,
                              field_data))
    h5.flush()
    files.write_text(path, document(os.path.basename(results.path), drawing, "vibration",
                                    views))
