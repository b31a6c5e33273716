"""Checks that a results file and its XDMF are consistent, whatever happened to the run."""

import os
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import h5py
import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def fem_command(*args: str) -> list[str]:
    """The ``fem`` command line, through this interpreter (works without the console script)."""
    return [sys.executable, "-m", "fem.cli", *args]


def env() -> dict:
    """Environment for fem subprocesses: this checkout first on the path."""
    e = dict(os.environ)
    e["PYTHONPATH"] = str(ROOT) + os.pathsep + e.get("PYTHONPATH", "")
    return e


def run_fem(*args: str, cwd=None, timeout: float = 300, **kw) -> subprocess.CompletedProcess:
    """Run ``fem`` to completion, capturing its output."""
    return subprocess.run(fem_command(*args), cwd=cwd, env=env(), capture_output=True,
                          text=True, timeout=timeout, **kw)


def start_run(deck, out, log):
    """Start ``fem -v run`` in the background, its progress lines going to the file ``log``."""
    return subprocess.Popen(fem_command("-v", "run", str(deck), "-o", str(out)), env=env(),
                            stdout=subprocess.DEVNULL, stderr=open(log, "w"), text=True)


def wait_for_frames(log, count: int, timeout: float = 120) -> None:
    """Wait until the run logging to ``log`` reports ``count`` frames."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if open(log).read().count(" frame ") >= count:
            return
        time.sleep(0.05)
    raise AssertionError(f"no {count} frames in {timeout} s:\n{open(log).read()}")


def _resolve(h5, ref: str) -> np.ndarray:
    """The array an XDMF data reference names: ``file.h5:/path`` or Xdmf3's
    ``file.h5:/path|start:stride:count:dims`` hyperslab."""
    path = ref.split(":", 1)[1]
    if "|" not in path:
        return h5[path][()]
    path, slab = path.split("|")
    start, stride, count, _ = ([int(x) for x in part.split()] for part in slab.split(":"))
    index = tuple(slice(a, a + s * c, s) for a, s, c in zip(start, stride, count, strict=True))
    return h5[path][index]


def read_xdmf(path):
    """``(points, cells, frames)`` of an XDMF time series written by fem, read with h5py;
    ``frames`` are ``(time, point_data, cell_data)``, the arrays shaped as ParaView sees them."""
    root = ET.parse(path).getroot()
    mesh = next(g for g in root.iter("Grid") if g.get("Name") == "mesh")
    folder = os.path.dirname(os.path.abspath(path))
    h5name = mesh.find("Geometry/DataItem").text.strip().split(":", 1)[0]
    with h5py.File(os.path.join(folder, h5name), "r") as h5:
        points = _resolve(h5, mesh.find("Geometry/DataItem").text.strip())
        cells = _resolve(h5, mesh.find("Topology/DataItem").text.strip())
        frames = []
        for grid in root.iter("Grid"):
            t = grid.find("Time")
            if t is None:
                continue
            point, cell = {}, {}
            # a frame with constraint groups is a spatial collection: the elements' grid, and a
            # grid per joint or tie group (beside it, not read here)
            elements = grid.find("Grid[@Name='elements']")
            for att in (grid if elements is None else elements).iter("Attribute"):
                item = att.find("DataItem")
                shape = tuple(int(x) for x in item.get("Dimensions").split())
                data = _resolve(h5, item.text.strip()).reshape(shape)
                (point if att.get("Center") == "Node" else cell)[att.get("Name")] = data
            frames.append((float(t.get("Value")), point, cell))
    return points, cells, frames


def frame_counts(h5_path: str) -> dict[str, set[int]]:
    """For every step of a results file, the set of first-axis lengths of its datasets."""
    counts = {}
    with h5py.File(h5_path, "r") as h5:
        for name, step in h5.get("steps", {}).items():
            lengths = set()

            def visit(path, obj, lengths=lengths):
                if isinstance(obj, h5py.Dataset) and not path.startswith("state/"):
                    lengths.add(obj.shape[0])         # the end state is not a frame series
            step.visititems(visit)
            counts[name] = lengths
    return counts


def assert_consistent(h5_path: str, xdmf_path: str | None = None) -> int:
    """Every dataset of a step has the same frame count, values are finite where written, and
    the XDMF is valid XML naming only frames that exist; returns the total frame count."""
    total = 0
    with h5py.File(h5_path, "r") as h5:
        for name, lengths in frame_counts(h5_path).items():
            assert len(lengths) <= 1, f"step {name}: datasets of unequal length {lengths}"
            T = lengths.pop() if lengths else 0
            total += T
            if T:
                for key in ("displacement", "time"):
                    assert np.all(np.isfinite(h5[f"steps/{name}/{key}"][()])), (name, key)
        if xdmf_path and os.path.exists(xdmf_path):
            root = ET.parse(xdmf_path).getroot()          # raises on a broken document
            times = []
            for grid in root.iter("Grid"):
                t = grid.find("Time")
                if t is not None:
                    times.append(float(t.get("Value")))
                for item in grid.iter("DataItem"):
                    target, _, slab = item.text.strip().split(":", 1)[1].partition("|")
                    assert target in h5, f"the XDMF names {target}, which does not exist"
                    if slab:                               # the frame it names was written
                        frame = int(slab.split(":")[0].split()[0])
                        assert frame < h5[target].shape[0], (target, frame)
            assert all(b > a for a, b in zip(times, times[1:], strict=False)), \
                f"XDMF times do not strictly increase: {times}"
    return total
