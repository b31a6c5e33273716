"""Checks that a results file and its XDMF are consistent, whatever happened to the run."""

import contextlib
import io
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


def run_fem_here(*args, cwd=None) -> subprocess.CompletedProcess:
    """``fem *args`` through its command line in this process (``fem.cli.main``), in ``cwd``:
    its exit code and output as :func:`run_fem` gives them, without an interpreter's start-up
    (for the runs a test is not about the process of)."""
    from fem import cli

    out, err = io.StringIO(), io.StringIO()
    with contextlib.chdir(cwd or os.getcwd()), contextlib.redirect_stdout(out), \
            contextlib.redirect_stderr(err):
        code = cli.main([str(a) for a in args])
    return subprocess.CompletedProcess(args, code, out.getvalue(), err.getvalue())


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


def read_xdmf(path):
    """``(points, cells, frames)`` of an XDMF time series written by fem, as meshio reads it:
    ``cells`` the topology's array as written, ``frames`` ``(time, point_data, cell_data)``, the
    cell data joined over meshio's cell blocks (one array over all cells, in topology order)."""
    import meshio

    root = ET.parse(path).getroot()
    mesh = next(g for g in root.iter("Grid") if g.get("Name") == "mesh")
    folder = os.path.dirname(os.path.abspath(path))
    h5name, cells_path = mesh.find("Topology/DataItem").text.strip().split(":", 1)
    with h5py.File(os.path.join(folder, h5name), "r") as h5:
        cells = h5[cells_path][()]
    with meshio.xdmf.TimeSeriesReader(path) as reader:
        points, _ = reader.read_points_cells()
        frames = []
        for k in range(reader.num_steps):
            t, point, cell = reader.read_data(k)
            frames.append((t, point, {q: np.concatenate(v) for q, v in cell.items()}))
    return points, cells, frames


def frame_counts(h5_path: str) -> dict[str, set[int]]:
    """For every step of a results file, the set of first-axis lengths of its datasets."""
    counts = {}
    with h5py.File(h5_path, "r") as h5:
        for name, step in h5.get("steps", {}).items():
            lengths = set()

            def visit(path, obj, lengths=lengths):
                if isinstance(obj, h5py.Dataset) \
                        and not path.startswith(("state/", "checkpoints/")):
                    lengths.add(obj.shape[0])         # the states are not frame series
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
            shapes, sources = {}, {}   # of the datasets named and mapped: each opened once
            for grid in root.iter("Grid"):
                t = grid.find("Time")
                if t is not None:
                    times.append(float(t.get("Value")))
                for item in grid.iter("DataItem"):
                    if item.get("Format") == "XML":        # field data, written inline
                        continue
                    target = item.text.strip().split(":", 1)[1]
                    declared = tuple(int(x) for x in item.get("Dimensions").split())
                    if target not in shapes:
                        ds = h5.get(target)
                        assert isinstance(ds, h5py.Dataset), \
                            f"the XDMF names {target}, which does not exist"
                        shapes[target] = ds.shape
                        if ds.is_virtual:                  # the frames it maps were written
                            for src in ds.virtual_sources():
                                assert src.file_name == ".", (target, src.file_name)
                                if src.dset_name not in sources:
                                    sources[src.dset_name] = h5[src.dset_name].shape
                                shape = sources[src.dset_name]
                                _, end = src.src_space.get_select_bounds()
                                assert all(e < n for e, n in zip(end, shape, strict=True)), \
                                    (target, src.dset_name, end, shape)
                    assert shapes[target] == declared, (target, shapes[target], declared)
            assert all(b > a for a, b in zip(times, times[1:], strict=False)), \
                f"XDMF times do not strictly increase: {times}"
    return total


# --- what every reader sees: meshio against the results file -------------------------------------

def _matrices(q: np.ndarray) -> np.ndarray:
    """(..., 3, 3) rotation matrices of unit quaternions (w, x, y, z), by the textbook formula
    (not fem's), so that the drawn points' rigid motion is checked independently."""
    w, x, y, z = np.moveaxis(q, -1, 0)
    return np.stack([
        np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], -1),
        np.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], -1),
        np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], -1)], -2)


class Layout:
    """The drawn grid of a results file as its ``/xdmf`` and ``/model`` say (fem.io.drawing)."""

    def __init__(self, h5):
        self.X = h5["model/nodes"][()]
        self.dim = int(h5["model"].attrs["dim"])
        self.points = h5["xdmf/points"][()]
        self.n, self.N = len(self.X), len(self.points)
        self.carrier = h5["xdmf/carrier"][()]
        self.m = len(self.carrier)
        self.carried = slice(self.n, self.n + self.m)
        self.offset = self.points[self.carried] - self.X[self.carrier]
        self.part, self.kind = h5["xdmf/part"][()], h5["xdmf/kind"][()]
        self.C = len(self.part)
        self.groups = {g: a.attrs["first_cell"] for g, a in h5["model/groups"].items()
                       if "first_cell" in a.attrs}
        self.recovered = {g: (a.attrs["first_point"], a.attrs["drawn_count"])
                          for g, a in h5["model/groups"].items() if "first_point" in a.attrs}
        self.constraints = {c: (a.attrs["first_point"], a.attrs["first_cell"],
                                a.attrs["drawn_count"])
                            for c, a in h5["model/constraints"].items()}

    def pad(self, nodal: np.ndarray, cols: slice | None = None, to: slice = slice(0, 3)):
        """(N, 3) with the node rows ``nodal[:, cols]`` at columns ``to``, zeros elsewhere."""
        out = np.zeros((self.N, 3))
        out[:self.n, to] = nodal if cols is None else nodal[:, cols]
        return out


class _Frame:
    """A step's group without the datasets that frame ``k`` did not write (all NaN there)."""

    def __init__(self, group, k: int):
        self.group, self.k, self.attrs = group, k, group.attrs

    def __contains__(self, key) -> bool:
        return self.get(key) is not None

    def __getitem__(self, key):
        return self.group[key]

    def get(self, key, default=None):
        obj = self.group.get(key)
        if isinstance(obj, h5py.Group):
            return _Frame(obj, self.k)
        if obj is None or np.all(np.isnan(obj[self.k])):
            return default
        return obj

    def items(self):
        return [(q, self.get(q)) for q in self.group if self.get(q) is not None]


def expected_step_frame(h5, lay: Layout, step: str, k: int, rotations: bool) -> tuple:
    """``(point data, cell data)`` frame ``k`` of ``step`` must show, from ``/steps`` alone.

    A dataset all NaN at frame ``k`` is one the frame did not write: the array is all NaN.
    """
    s = _Frame(h5[f"steps/{step}"], k)
    d, n = lay.dim, lay.n
    lin = slice(0, d)
    R = _matrices(s["rotation"][k])
    Rc = R[lay.carrier]
    arm = np.einsum("pij,pj->pi", Rc, lay.offset)
    point = {}
    u = lay.pad(s["displacement"][k])
    u[lay.carried] = u[lay.carrier] + arm - lay.offset
    theta = lay.pad(s["rotation_vector"][k])                 # nodes only
    for g, (p0, count) in lay.recovered.items():
        rec = s[f"elements/{g}/recovered_displacement"][k, 0]
        if d == 2:                                  # ux, uy, rz
            u[p0:p0 + count, :2] = rec[:, :2]
            theta[p0:p0 + count, 2] = rec[:, 2]
        else:                                       # 3D: translations
            u[p0:p0 + count] = rec
    point["displacement"], point["rotation"] = u, theta
    if "velocity" in s:
        v = lay.pad(s["velocity"][k], lin, lin)
        w = np.zeros((lay.m, 3))
        if d == 2:
            w[:, 2] = s["velocity"][k][lay.carrier, 2]
        else:
            w[:] = s["velocity"][k][lay.carrier, 3:6]
        v[lay.carried] = v[lay.carrier] + np.cross(w, arm)
        point["velocity"] = v
    if "reaction" in s:
        point["reaction"] = lay.pad(s["reaction"][k], lin, lin)
    scalar = np.full(lay.N, np.nan)
    scalar[0] = s["time"][k]
    point["time" if s.attrs["type"] == "dynamic" else "load_factor"] = scalar
    if rotations:
        for j, name in enumerate(("axis_x", "axis_y", "axis_z")):
            point[name] = lay.pad(R[:, :, j])                    # nodes only
    for name, ds in (s.get("nodal") or {}).items():
        v = np.full((lay.N,) + ds.shape[2:], np.nan)
        v[:n] = ds[k]
        point[name if name not in point else f"nodal_{name}"] = v
    cell = {"part": lay.part, "kind": lay.kind}
    outputs = s.get("elements") or {}
    spans = [(g, first, None) for g, first in lay.groups.items()] + \
        [(c, first, p0) for c, (p0, first, _) in lay.constraints.items()]
    for g, first, p0 in spans:
        for qname, ds in (outputs[g].items() if g in outputs else ()):
            E = ds.shape[1]
            if ds.ndim == 2:
                cell.setdefault(qname, np.full(lay.C, np.nan))[first:first + E] = ds[k]
                if p0 is not None and qname in ("fx", "fy", "fz") and "force" not in outputs[g]:
                    f = point.setdefault("joint_force", np.zeros((lay.N, 3)))
                    f[p0:p0 + E, "xyz".index(qname[1])] = ds[k]
            elif ds.ndim == 3 and ds.shape[2] == 3:
                if p0 is not None:
                    point.setdefault(f"joint_{qname}", np.zeros((lay.N, 3)))[p0:p0 + E] = ds[k]
                else:
                    cell.setdefault(qname, np.full((lay.C, 3), np.nan))[first:first + E] = ds[k]
            elif ds.ndim == 3 and ds.shape[2] == 6 and p0 is None:
                # ux, uy, uz, rx, ry, rz outputs (3D bushings): cell vectors <q>_u and <q>_r
                for half, cols in (("u", slice(0, 3)), ("r", slice(3, 6))):
                    cell.setdefault(f"{qname}_{half}", np.full((lay.C, 3), np.nan))[
                        first:first + E] = ds[k][:, cols]
    return point, cell


def expected_mode(h5, lay: Layout, step: str, i: int) -> dict:
    """The point data of mode ``i`` of a modes file, from ``/modes`` alone."""
    g = h5[f"modes/{step}"]
    shape = g["shapes"][i]
    d = lay.dim
    u = lay.pad(shape, slice(0, d), slice(0, d))
    theta = lay.pad(shape, slice(2, 3), slice(2, 3)) if d == 2 else lay.pad(shape, slice(3, 6))
    u[lay.carried] = u[lay.carrier] + np.cross(theta[lay.carrier], lay.offset)
    theta[lay.carried] = theta[lay.carrier]
    out = {"displacement": u, "rotation": theta}
    for name, value in [("mode", i + 1.0)] + (
            [("frequency", g["hertz"][i])] if "hertz" in g else
            [("load_factor", g["eigenvalues"][i])] if g.attrs["type"] == "buckling" else []):
        v = np.full(lay.N, np.nan)
        v[0] = value
        out[name] = v
    return out


def _xdmf_step(h5, xdmf: str, h5_path: str, kind: str) -> str | None:
    """The step whose modes or vibration file ``xdmf`` is (None: the time series).

    By the file names the run gives them (fem.io.files: a step named ``modes`` writes
    ``out_modes.xdmf``, its suffix said once).
    """
    from fem.io import files

    if kind == "series":
        return None
    path = files.modes_xdmf_path if kind == "modes" else files.vibration_xdmf_path
    found = [s for s in h5.get("modes", {})
             if os.path.basename(path(h5_path, s)) == os.path.basename(xdmf)]
    assert len(found) == 1, (xdmf, found)
    return found[0]


def check_with_meshio(xdmf: str, h5_path: str, rotations: bool) -> int:
    """Read ``xdmf`` with meshio's time-series reader and check every array of every frame
    against the results file's own datasets (``/steps``, ``/modes``); returns the frames read.

    Node rows and cells exactly; the drawn points' rigid motion (computed here with another
    formula) to 1e-12 of the model's size; the vibration file's single-precision frames to
    float32 rounding. Arrays a frame's step does not have must be all NaN, and no array may be
    unaccounted for.
    """
    import meshio

    root = ET.parse(xdmf).getroot()
    grids = [g for g in root.iter("Grid") if g.find("Time") is not None]
    names = [g.get("Name") for g in grids]
    kind = "vibration" if xdmf.endswith("_vibration.xdmf") else \
        "modes" if xdmf.endswith("_modes.xdmf") else "series"
    with h5py.File(h5_path, "r") as h5, meshio.xdmf.TimeSeriesReader(xdmf) as reader:
        lay = Layout(h5)
        points, cells = reader.read_points_cells()
        np.testing.assert_array_equal(points, lay.points)
        np.testing.assert_array_equal(points[:lay.n], lay.X)
        assert sum(len(c.data) for c in cells) == lay.C
        scale = 1e-12 * max(1.0, float(np.ptp(lay.points, axis=0).max()))
        assert reader.num_steps == len(names)
        times = []
        step = _xdmf_step(h5, xdmf, h5_path, kind)
        for k, name in enumerate(names):
            t, pd, cd = reader.read_data(k)
            times.append(t)
            cd = {q: np.concatenate(v) for q, v in cd.items()}
            if kind == "series":
                sname, idx = name.rsplit(" ", 1)
                s = h5[f"steps/{sname}"]
                point, cell = expected_step_frame(h5, lay, sname, int(idx), rotations)
                clock = s.attrs["clock"]
                value = s["time"][int(idx)]
                at = (value if clock == "time" else abs(value) if clock == "abs"
                      else int(idx) + 1) + s.attrs["time_offset"]
                assert t == at or (k and t > times[-2]), (name, t, at)
            else:
                i = k if kind == "modes" else k // 20
                point = expected_mode(h5, lay, step, i)
                cell = {"part": lay.part, "kind": lay.kind}
                if kind == "vibration":
                    j = k % 20
                    peak = np.abs(point["displacement"][:lay.n, :lay.dim]).max()
                    point = {"displacement": point["displacement"] / (peak if peak > 0 else 1.0)
                             * np.sin(2 * np.pi * j / 20), **{
                                 q: v for q, v in point.items() if q != "rotation"
                                 and q != "displacement"}}
                    ph = np.full(lay.N, np.nan)
                    ph[0] = j / 20
                    point["phase"] = ph
                    assert t == pytest_approx(i + 1 + j / 20), (name, t)
                else:
                    g = h5[f"modes/{step}"]
                    hz = g["hertz"][()] if g.attrs["type"] == "modal" else None
                    by_hz = hz is not None and bool(np.all(np.diff(hz) > 0))
                    assert t == (hz[i] if by_hz else i + 1), (name, t)
            for data, want, what in ((pd, point, "point"), (cd, cell, "cell")):
                extra = set(data) - set(want)
                for q in extra:                 # arrays of other steps: NaN in this frame
                    assert np.all(np.isnan(data[q])), (name, what, q)
                assert set(want) <= set(data), (name, what, sorted(set(want) - set(data)))
                for q, v in want.items():
                    got = data[q]
                    assert got.shape == v.shape, (name, q, got.shape, v.shape)
                    if kind == "vibration" and q == "displacement":
                        np.testing.assert_allclose(got, v, rtol=2**-24, atol=2**-25,
                                                   err_msg=name)      # float32 rounding
                    elif q.startswith("axis_"):         # unit vectors, another formula here
                        np.testing.assert_allclose(got, v, rtol=0, atol=4e-16, err_msg=name)
                    elif what == "point" and lay.m:
                        node = np.r_[0:lay.n, lay.n + lay.m:lay.N]
                        np.testing.assert_array_equal(got[node], v[node], err_msg=f"{name} {q}")
                        np.testing.assert_allclose(got[lay.carried], v[lay.carried], rtol=0,
                                                   atol=scale * max(1.0, np.nanmax(np.abs(
                                                       v[lay.carried]), initial=0)),
                                                   err_msg=f"{name} {q} (drawn points)")
                    else:
                        np.testing.assert_array_equal(got, v, err_msg=f"{name} {q}")
        assert all(b > a for a, b in zip(times, times[1:], strict=False)), times
    return len(names)


def pytest_approx(x):
    import pytest

    return pytest.approx(x, rel=1e-14, abs=1e-14)
