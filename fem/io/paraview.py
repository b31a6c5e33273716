"""XDMF files that let ParaView (and meshio) read the results file as a time series.

The data stay in the results file: for every output frame, ``/xdmf/<step>/<k>/<field>`` is an HDF5
*virtual dataset* (a view, no copy) of one frame of ``/steps/<step>/<field>``, in the shape XDMF
wants (``(n, 3)`` point vectors, ``(E_total,)`` cell scalars over all line elements, ``NaN`` where a
group lacks a quantity). Each frame's grid is appended to the XDMF text in place (the closing tags
are written again after it), so the file is valid after every frame and writing it costs the same
for the ten-thousandth frame as for the first.

* ``<out>.xdmf``: one temporal collection with the frames of every static and dynamic step; times
  continue from step to step (a static step's pseudo-time is its load factor).
* ``<out>_<step>_modes.xdmf``: the mode shapes of an eigen/buckling step, "time" = mode number.

Beams and trusses are ``Polyline`` cells of two nodes. Point data: ``displacement``, ``rotation``
(rotation vector), ``velocity``, ``reaction`` (forces). Cell data: the section forces. One-node
elements (grounded springs) are not drawn.
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from dataclasses import dataclass

import h5py
import numpy as np


@dataclass(frozen=True)
class Frame:
    """One output frame: its step, index within the step, and time in the whole analysis."""

    step: str
    index: int
    time: float


def line_groups(model) -> list:
    """The element groups drawn as line cells (two-node elements; springs are not drawn)."""
    return [g for g in model.groups if g.nen == 2]


def _virtual(group: h5py.Group, name: str, shape, pieces, fill=np.nan) -> None:
    """Create ``group[name]`` from ``pieces = [(dest_slices, source_dataset, source_slices)]``."""
    layout = h5py.VirtualLayout(shape=shape, dtype="f8")
    for dest, src, sel in pieces:
        layout[dest] = h5py.VirtualSource(".", src.name, shape=src.shape)[sel]
    group.create_virtual_dataset(name, layout, fillvalue=fill)


def add_frame_views(results, step: str, k: int) -> list[tuple[str, tuple, str]]:
    """Virtual datasets of frame ``k`` of ``step``; returns ``(name, shape, h5 path)`` of each."""
    h5, model = results.h5, results.model
    s = h5["steps"][step]
    g = h5.require_group(f"xdmf/{step}/{k}")
    n = model.n_nodes
    d = model.dim
    made = []
    for name, src in (("displacement", "displacement"), ("rotation", "rotation_vector")):
        _virtual(g, name, (n, 3), [(slice(None), s[src], (k, slice(None), slice(None)))])
        made.append((name, (n, 3)))
    for name, src in (("velocity", "velocity"), ("reaction", "reaction")):
        if src in s:
            _virtual(g, name, (n, 3), [((slice(None), slice(0, d)), s[src],
                                        (k, slice(None), slice(0, d)))], fill=0.0)
            made.append((name, (n, 3)))
    if "elements" in s:
        names = sorted({q for grp in s["elements"].values() for q in grp})
        total = sum(len(grp.conn) for grp in line_groups(model))
        for q in names:
            pieces, off = [], 0
            for grp in line_groups(model):
                E = len(grp.conn)
                src = s["elements"].get(grp.name)
                if src is not None and q in src:
                    pieces.append((slice(off, off + E), src[q], (k, slice(None))))
                off += E
            _virtual(g, q, (total,), pieces)
            made.append((q, (total,)))
    return [(name, shape, f"{g.name}/{name}") for name, shape in made]


def _mesh_grid(domain: ET.Element, h5name: str, model) -> None:
    grid = ET.SubElement(domain, "Grid", Name="mesh", GridType="Uniform")
    E = sum(len(grp.conn) for grp in line_groups(model))
    topo = ET.SubElement(grid, "Topology", TopologyType="Polyline", NumberOfElements=str(E),
                         NodesPerElement="2")
    item = ET.SubElement(topo, "DataItem", DataType="Int", Precision="8", Format="HDF",
                         Dimensions=f"{E} 2")
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
    for field, shape, path in fields:
        vector = len(shape) == 2
        att = ET.SubElement(grid, "Attribute", Name=field,
                            AttributeType="Vector" if vector else "Scalar",
                            Center="Node" if vector else "Cell")
        item = ET.SubElement(att, "DataItem", DataType="Float", Precision="8", Format="HDF",
                             Dimensions=" ".join(str(x) for x in shape))
        item.text = f"{h5name}:{path}"
    return grid


def _text(element: ET.Element, level: int) -> str:
    ET.indent(element, space="  ", level=level)
    text = ET.tostring(element, encoding="unicode")
    return "  " * level + text.replace("ns0:", "xi:").replace(' xmlns:ns0="http://www.w3.org/'
                                                             '2001/XInclude"', "") + "\n"


class SeriesFile:
    """``<out>.xdmf``, appended frame by frame."""

    FOOTER = "    </Grid>\n  </Domain>\n</Xdmf>\n"

    def __init__(self, path: str, h5name: str, model):
        self.path, self.h5name, self.model = path, h5name, model
        self._end = None

    def _start(self) -> None:
        holder = ET.Element("Domain")
        _mesh_grid(holder, self.h5name, self.model)
        head = ('<?xml version="1.0" encoding="utf-8"?>\n'
                '<Xdmf xmlns:xi="http://www.w3.org/2001/XInclude" Version="3.0">\n'
                "  <Domain>\n" + _text(holder[0], 2)
                + '    <Grid Name="history" GridType="Collection" CollectionType="Temporal">\n')
        with open(self.path, "w", encoding="utf-8") as fh:
            fh.write(head)
            self._end = fh.tell()
            fh.write(self.FOOTER)

    def add(self, name: str, time: float, fields) -> None:
        """Append one frame and close the document again."""
        if self._end is None:
            self._start()
        holder = ET.Element("Grid")
        grid = _frame_grid(holder, name, time, self.h5name, fields)
        text = _text(grid, 3)
        with open(self.path, "r+", encoding="utf-8") as fh:
            fh.seek(self._end)
            fh.write(text)
            self._end = fh.tell()
            fh.write(self.FOOTER)
            fh.truncate()


def _write(path: str, root: ET.Element) -> None:
    ET.register_namespace("xi", "http://www.w3.org/2001/XInclude")
    tree = ET.ElementTree(root)
    ET.indent(tree)
    tmp = path + ".tmp"
    tree.write(tmp, xml_declaration=True, encoding="utf-8")
    os.replace(tmp, path)


def _root() -> tuple[ET.Element, ET.Element]:
    root = ET.Element("Xdmf", Version="3.0")
    return root, ET.SubElement(root, "Domain")


def write_modes(path: str, results, name: str, count: int) -> None:
    """``<out>_<step>_modes.xdmf``: mode ``i`` at "time" ``i + 1``."""
    h5, model = results.h5, results.model
    shapes = h5[f"modes/{name}/shapes"]
    d, n = model.dim, model.n_nodes
    root, domain = _root()
    h5name = os.path.basename(results.path)
    _mesh_grid(domain, h5name, model)
    series = ET.SubElement(domain, "Grid", Name="modes", GridType="Collection",
                           CollectionType="Temporal")
    for i in range(count):
        g = h5.require_group(f"xdmf/modes/{name}/{i}")
        _virtual(g, "displacement", (n, 3),
                 [((slice(None), slice(0, d)), shapes, (i, slice(None), slice(0, d)))], fill=0.0)
        rot = slice(2, 3) if d == 2 else slice(3, 6)
        dest = slice(2, 3) if d == 2 else slice(0, 3)
        _virtual(g, "rotation", (n, 3), [((slice(None), dest), shapes, (i, slice(None), rot))],
                 fill=0.0)
        _frame_grid(series, f"mode {i + 1}", i + 1, h5name,
                    [(f, g[f].shape, g[f].name) for f in g])
    h5.flush()
    _write(path, root)
