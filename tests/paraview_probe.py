"""What ParaView shows of fem's XDMF files: run by pvpython for tests/test_paraview.py.

``pvpython paraview_probe.py jobs.json answer.json``: for each job (a dict) opens ``file`` with
ParaView's ``reader`` (Xdmf3ReaderT or Xdmf3ReaderS) and answers, in the same order:

* ``counts``: at every time step, the numbers of points and cells and the names of the point,
  cell and field arrays ParaView reports;
* ``plot``: ``[association, array]``: *Plot Data Over Time*'s ``min`` and ``max`` columns of
  the array (for a vector, of each component and its magnitude) and ``Time``;
* ``select``: ``[point ids, array]``: *Plot Selection Over Time* of those points, the array's
  values at each time step;
* ``label``: a *Python Annotation* expression on the field data, evaluated at ``time``;
* ``renders``: pictures (``png``) at ``time``: the grid warped by ``displacement`` (``warp``),
  coloured by ``color`` (``[association, array]``), only the cells whose ``kind`` is in
  ``kinds`` (a *Threshold*), with the arrows of a point vector (``glyph``: array, scale), the
  annotation ``label`` in the top left corner, seen along ``view`` (``[x, y, z]``, from the
  origin's side, up ``up``).

The pictures are 640 x 480 on a white background.
"""

import json
import sys

from paraview import servermanager as sm
from paraview import simple as pv


def times(reader) -> list[float]:
    tv = reader.TimestepValues
    return list(tv) if hasattr(tv, "__len__") else [tv or 0.0]


def names(data) -> list[str]:
    return sorted(data.GetArrayName(i) for i in range(data.GetNumberOfArrays()))


def counts(reader) -> list[dict]:
    out = []
    for t in times(reader):
        reader.UpdatePipeline(t)
        d = sm.Fetch(reader)
        out.append({"time": t, "class": d.GetClassName(), "points": d.GetNumberOfPoints(),
                    "cells": d.GetNumberOfCells(), "point": names(d.GetPointData()),
                    "cell": names(d.GetCellData()), "field": names(d.GetFieldData())})
    return out


def plot(reader, association: str, array: str) -> dict:
    p = pv.PlotDataOverTime(Input=reader, FieldAssociation=association)
    p.UpdatePipeline()
    table = sm.Fetch(p)
    table = table.GetBlock(0) if table.IsA("vtkMultiBlockDataSet") else table
    rows = table.GetRowData()
    out = {}
    for i in range(rows.GetNumberOfArrays()):
        a = rows.GetArray(i)
        name = a.GetName()
        if name == "Time" or name.startswith((f"min({array}", f"max({array}")):
            out[name] = [a.GetValue(j) for j in range(a.GetNumberOfTuples())]
    return out


def points_over_time(reader, ids: list[int], array: str) -> dict:
    """*Plot Selection Over Time* of points ``ids`` (their own values, no statistics): the
    array's values (a vector's components) per time step, by point id."""
    sel = pv.IDSelectionSource(IDs=[x for i in ids for x in (0, i)], FieldType="POINT")
    p = pv.PlotSelectionOverTime(Input=reader, Selection=sel, OnlyReportSelectionStatistics=0)
    p.UpdatePipeline()
    blocks = sm.Fetch(p)
    out = {}
    for b in range(blocks.GetNumberOfBlocks()):
        rows = blocks.GetBlock(b).GetRowData()
        a = rows.GetArray(array)
        ident = blocks.GetMetaData(b).Get(blocks.NAME()).split("=")[-1]     # "originalId=4"
        out[ident] = [list(a.GetTuple(j)) for j in range(a.GetNumberOfTuples())]
    return out


def annotation(source, expression: str):
    a = pv.PythonAnnotation(Input=source, ArrayAssociation="Field Data", Expression=expression)
    return a


def render(reader, spec: dict) -> None:
    view = pv.CreateRenderView()
    view.ViewSize = [640, 480]
    view.OrientationAxesVisibility = 0
    if hasattr(view, "UseColorPaletteForBackground"):
        view.UseColorPaletteForBackground = 0
    view.Background = [1.0, 1.0, 1.0]
    view.ViewTime = spec["time"]
    source = reader
    if spec.get("warp", True):
        source = pv.WarpByVector(Input=source, Vectors=["POINTS", "displacement"],
                                 ScaleFactor=spec.get("scale", 1.0))
    shown = source
    if spec.get("kinds") is not None:
        lo, hi = spec["kinds"]
        shown = pv.Threshold(Input=source, Scalars=["CELLS", "kind"], LowerThreshold=lo,
                             UpperThreshold=hi)
    d = pv.Show(shown, view)
    d.LineWidth = 3.0
    if spec.get("color"):
        assoc, name = spec["color"]
        pv.ColorBy(d, (assoc, name))
        d.RescaleTransferFunctionToDataRange(True, False)
        if spec.get("bar"):              # a stress picture shows its scale
            d.SetScalarBarVisibility(view, True)
            bar = pv.GetScalarBar(pv.GetColorTransferFunction(name), view)
            bar.Title, bar.ComponentTitle = name, ""
            bar.TitleColor = bar.LabelColor = [0.0, 0.0, 0.0]
    else:
        pv.ColorBy(d, None)
        d.DiffuseColor = [0.2, 0.3, 0.6]
        d.AmbientColor = [0.2, 0.3, 0.6]
    if spec.get("glyph"):
        name, scale = spec["glyph"]
        g = pv.Glyph(Input=source, GlyphType="Arrow", OrientationArray=["POINTS", name],
                     ScaleArray=["POINTS", name], ScaleFactor=scale, GlyphMode="All Points")
        gd = pv.Show(g, view)
        pv.ColorBy(gd, None)
        gd.DiffuseColor = [0.8, 0.1, 0.1]
        gd.AmbientColor = [0.8, 0.1, 0.1]
    if spec.get("label"):
        a = annotation(reader, spec["label"])
        ad = pv.Show(a, view)
        ad.FontSize = 24
        ad.Color = [0.0, 0.0, 0.0]
        ad.WindowLocation = "Upper Left Corner"
    view.CameraPosition = spec.get("view", [0.0, 0.0, 1.0])
    view.CameraFocalPoint = [0.0, 0.0, 0.0]
    view.CameraViewUp = spec.get("up", [0.0, 1.0, 0.0])
    view.ResetCamera()
    pv.Render(view)
    pv.SaveScreenshot(spec["png"], view, ImageResolution=[640, 480])
    pv.Delete(view)


def main() -> None:
    jobs = json.load(open(sys.argv[1]))
    answers = []
    for job in jobs:
        reader = getattr(pv, job.get("reader", "Xdmf3ReaderT"))(FileName=[job["file"]])
        reader.UpdatePipelineInformation()
        out = {"times": times(reader)}
        if job.get("counts"):
            out["counts"] = counts(reader)
        if job.get("plot"):
            out["plot"] = plot(reader, *job["plot"])
        if job.get("select"):
            out["select"] = points_over_time(reader, *job["select"])
        if job.get("label"):
            a = annotation(reader, job["label"])
            a.UpdatePipeline(job["time"])
            out["label"] = sm.Fetch(a).GetValue(0, 0).ToString()
        for spec in job.get("renders", ()):
            render(reader, spec)
        answers.append(out)
        pv.Delete(reader)
    json.dump(answers, open(sys.argv[2], "w"))


if __name__ == "__main__":
    main()
