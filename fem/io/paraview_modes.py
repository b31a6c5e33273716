"""The mode files of a buckling, modal, cms_reduce or modify step (:mod:`fem.io.paraview`).

* ``<out>_<step>_modes.xdmf``: each mode shape a frame (:func:`write_modes`);
* ``<out>_<step>_vibration.xdmf``: each mode of a modal step vibrating through one period
  (:func:`write_vibration`).

The drawn points move with their carrier's small rigid motion (:func:`mode_motion`); the mode
numbers, frequencies or load factors are field data and point data at the first point.
"""

from __future__ import annotations

import os

import numpy as np

from fem.io import files
from fem.io.drawing import Drawing
from fem.io.paraview import document
from fem.io.paraview_views import STATIC, Attribute, View, virtual


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
