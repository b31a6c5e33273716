"""The datasets a ParaView frame names: virtual views of a step's own datasets, in grid order.

Each attribute of frame ``k`` of step ``s`` names one plain dataset,
``out.h5:/xdmf/steps/<s>/<name>/<k>``: an HDF5 *virtual dataset* that maps the frame's slice of
the step's ``(T, ...)`` datasets into the point or cell order of :mod:`fem.io.drawing`'s grid,
with no copy (:func:`virtual`); what the frame needs beside the step's datasets (the drawn
points' motion, the nodal frames) is written with it (:func:`frame_arrays`). The documents that
name these views, and why they are laid out so, are :mod:`fem.io.paraview`'s.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import h5py
import numpy as np

from fem import rotations as so3
from fem.io.drawing import KINDS, Drawing

AXES = ("axis_x", "axis_y", "axis_z")   # the nodal frames' vectors (see fem.io.paraview)


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
                if q not in written or (d == 3 and name == "rotation"):
                    continue
                if d == 2:                       # ux, uy, rz of the component's nodes
                    cols = (0, 0, 2) if name == "displacement" else (2, 2, 1)
                else:                            # 3D: the recovered nodes' translations
                    cols = (0, 0, 3)
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
    cells, points = _group_maps(drawing, datasets, written, source, k)
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


def _group_maps(drawing: Drawing, datasets: dict, written, source, k: int) -> tuple[dict, dict]:
    """The maps of frame ``k``'s group outputs: ``(cells, points)``.

    Cell arrays ``{(name, components): maps}``; point arrays ``{name: maps}`` at the joint points
    (a joint's vectors, a tie's forces).
    """
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
            elif ds.ndim == 3 and ds.shape[2] == 6 and not joint:
                # six components in the order ux, uy, uz, rx, ry, rz (a 3D bushing's force and
                # moment, deflection and rotation): two cell vectors, <q>_u and <q>_r
                for half, start in (("u", 0), ("r", 3)):
                    cells.setdefault((f"{q}_{half}", 3), []).append(
                        ((span.first_cell, 0), (span.count, 3), source(key), (k, 0, start),
                         (1, span.count, 3)))
    return cells, points


def stored_view(h5: h5py.File, step: str, k: int, attrs: dict) -> View:
    """The :class:`View` of frame ``k`` of step ``step`` as :func:`frame_views` made it.

    Read back from the views in the file (a restart rewrites the XDMF from them): the same
    attributes in the same order. ``attrs`` are the step group's attributes.
    """
    base = f"/xdmf/steps/{step}"
    g = h5[base]
    key = str(k)
    node = {n: obj[key] for n, obj in g.items()
            if n not in ("cells", "drawn", "node") and isinstance(obj, h5py.Group) and key in obj}
    cells = {n: obj[key] for n, obj in g.get("cells", {}).items() if key in obj}
    scalar = "time" if attrs.get("type") == "dynamic" else "load_factor"
    out = list(STATIC)

    def add(name, center, ds):
        components = 1 if ds.ndim == 1 else ds.shape[1]
        path = f"{base}/{name}/{k}" if center == "Node" else f"{base}/cells/{name}/{k}"
        out.append(Attribute(name, center, components, path))

    firsts = [name for name, _, _ in POINT_VECTORS] + [scalar]
    for name in firsts:
        if name in node:
            add(name, "Node", node[name])
    taken = {a.name for a in STATIC} | set(firsts)

    def source(name):              # frame_views names a nodal field like these "nodal_<name>"
        return name[len("nodal_"):] if name.startswith("nodal_") \
            and name[len("nodal_"):] in taken else name
    rest = [n for n in node if n not in firsts and n not in AXES]
    points = sorted(n for n in rest if n.startswith("joint_"))
    for name in sorted((n for n in rest if n not in points), key=source):
        add(name, "Node", node[name])
    for name in points:
        add(name, "Node", node[name])
    for name, ds in sorted(cells.items(), key=lambda c: (c[0], 1 if c[1].ndim == 1 else 3)):
        add(name, "Cell", ds)
    for name in AXES:
        if name in node:
            add(name, "Node", node[name])
    value = float(h5[f"steps/{step}/time"][k])
    return View("", 0.0, out, {"step": float(attrs.get("index", 0)), "frame": float(k),
                               scalar: value})
