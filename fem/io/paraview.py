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
writer's former cost per frame (``python -m benchmarks output``, docs/performance.md).

**Every attribute a plain dataset.** Each attribute of frame ``k`` of step ``s`` names one dataset,
``out.h5:/xdmf/steps/<s>/<name>/<k>``, never a hyperslab (meshio reads a whole dataset,
``file:/path``). Each is an HDF5 *virtual dataset* that maps the frame's slice of the step's own
``(T, ...)`` datasets (``/steps/<s>/...``, unchanged) into the grid's point or cell order, with no
copy (:func:`fem.io.paraview_views.virtual`): node rows from the step's nodal datasets, the drawn
points' rows from ``/xdmf/steps/<s>/drawn/<q>`` ``(T, m, 3)`` (their rigid motion) and the nodal
frames from ``/xdmf/steps/<s>/node/axis_<x|y|z>`` ``(T, n, 3)``, both written with each frame
(:func:`fem.io.paraview_views.frame_arrays`), cell ranges from each group's outputs. Rows that a
source does not cover read the dataset's fill: 0 for point vectors (the z components in 2D;
rotations and frames at the drawn points, velocities at a superelement's recovered nodes), NaN for
cell quantities, nodal fields and frame scalars. Views are made when frames are committed
(:meth:`fem.io.hdf5.ResultsFile.commit`): about 0.2 ms and 0.45 kB each (a copy instead would cost
about as much time and double the data; benchmarks/output.py).

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
only grow (see :class:`fem.io.step_writer.StepWriter`).
"""

from __future__ import annotations

import logging
import time as _time

import numpy as np

from fem.io import files
from fem.io.drawing import Drawing
from fem.io.paraview_views import Attribute, View

log = logging.getLogger(__name__)
WRITE_SHARE = 0.05          # at most this share of the run's time goes to rewriting the XDMF
MESH = "xpointer(/Xdmf/Domain/Grid[1]/*[self::Topology or self::Geometry])"


# --- the document ---------------------------------------------------------------------------------
def _missing(a: Attribute) -> str:
    return f"/xdmf/missing/{'point' if a.center == 'Node' else 'cell'}_{a.components}"


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


