"""Joints in the ParaView time series, drawn as a mechanism (fem.io.drawing, fem.io.paraview).

A model with joint groups is one grid per frame: its nodes and element cells, then each body's
shape and axes and each joint's point (as the point of its first node and of its second), axis
and arms. A joint's outputs are the cell data of its joint-point cell (``(T, E)`` ones) and the
point vectors ``joint_force``, ``joint_moment`` at that point; all are virtual datasets onto
``/steps/<s>/elements/<joint>/<q>``. Checked here through meshio and, if installed, ParaView.
"""

import os
import shutil
import textwrap

import h5py
import numpy as np
import pytest
from helpers import case_deck, run_pvpython
from results_checks import assert_consistent, read_xdmf

from fem.io.deck import from_dict
from fem.io.drawing import KINDS
from fem.run import run as run_deck

G, M = 9.81, 3.0             # cases/rod_pendulum: gravity, mass of the rod


def _run(d: dict, tmp_path, name: str):
    result = run_deck(from_dict(d), str(tmp_path / f"{name}.h5"))
    return result.h5, result.xdmf[0]


def joint(h5_path: str, name: str) -> tuple[int, int, int]:
    """``(first point, first cell, items)`` of constraint group ``name`` in the drawn grid."""
    with h5py.File(h5_path, "r") as h5:
        a = h5[f"model/constraints/{name}"].attrs
        return int(a["first_point"]), int(a["first_cell"]), int(a["drawn_count"])


@pytest.fixture(scope="module")
def rod(tmp_path_factory):
    """The rod pendulum case, released from horizontal, over 0.3 s (31 frames)."""
    d = case_deck("rod_pendulum")
    d["steps"][0]["duration"] = 0.3
    return _run(d, tmp_path_factory.mktemp("rod"), "rod")


def test_rod_pendulum_xdmf_names_only_what_exists(rod):
    h5_path, xdmf = rod
    assert assert_consistent(h5_path, xdmf) == 31          # times increase, frames exist
    points, _, frames = read_xdmf(xdmf)
    assert len(frames) == 31
    with h5py.File(h5_path, "r") as h5:
        np.testing.assert_array_equal(points[:2], h5["model/nodes"][()])
        kind = h5["xdmf/kind"][()]
    # the rod's node, its shape (a square in 2D) and axes, the pivot's point, axis and arm
    assert sorted(set(kind)) == sorted(KINDS[k] for k in (
        "element", "body", "body_x", "body_y", "joint", "joint_axis", "joint_arm"))
    assert {"displacement", "joint_force", "joint_moment", "time"} <= set(frames[0][1])
    assert {"fx", "fy", "mz", "angle", "part", "kind"} <= set(frames[0][2])


def test_rod_pendulum_joint_force_through_the_xdmf(rod):
    """The pivot, read with meshio: its cell data equal the HDF5 joint outputs; the force at
    release is (0, m g / 4) (notes D2, as cases/rod_pendulum/reference.toml) [1e-9], and at every
    frame the global force vector is the joint-frame components (fx, fy) turned by the rod's
    rotation [1e-12]. The joint is drawn at the pivot: its point, carried rigidly by the rod,
    stays at the origin while the rod swings [1e-9 of the rod's length, the joint's gap]."""
    h5_path, xdmf = rod
    p0, c0, count = joint(h5_path, "pivot")
    assert count == 1
    points, _, frames = read_xdmf(xdmf)
    with h5py.File(h5_path, "r") as h5:
        conn = h5["model/constraints/pivot/connectivity"][()]
        s = h5["steps/swing"]
        out = {q: s[f"elements/pivot/{q}"][()] for q in s["elements/pivot"]}
        rot = s["rotation_vector"][:, 0, 2]
        nodes = h5["model/nodes"][()]
    assert conn.tolist() == [[0, 1]]
    np.testing.assert_array_equal(nodes[1], [0.0, 0.0, 0.0])          # the supported node
    np.testing.assert_array_equal(points[p0], [0.0, 0.0, 0.0])        # the pivot, drawn
    for k, (_, pd, cd) in enumerate(frames):
        np.testing.assert_allclose(points[p0] + pd["displacement"][p0], 0.0, atol=1.2e-9)
        np.testing.assert_array_equal(pd["joint_force"][p0], out["force"][k, 0])
        np.testing.assert_array_equal(pd["joint_moment"][p0], out["moment"][k, 0])
        others = np.delete(np.arange(len(points)), p0)
        assert np.all(pd["joint_force"][others] == 0.0)
        for q in ("fx", "fy", "mz", "angle"):
            assert cd[q][c0] == out[q][k, 0]
            assert np.all(np.isnan(np.delete(cd[q], c0)))
        c, s_ = np.cos(rot[k]), np.sin(rot[k])
        fx, fy = cd["fx"][c0], cd["fy"][c0]
        np.testing.assert_allclose(pd["joint_force"][p0], [c * fx - s_ * fy, s_ * fx + c * fy,
                                                           0.0], rtol=0, atol=1e-12 * M * G)
        np.testing.assert_allclose(pd["joint_moment"][p0], [0.0, 0.0, cd["mz"][c0]], atol=0)
    np.testing.assert_allclose(frames[0][1]["joint_force"][p0], [0.0, M * G / 4, 0.0], rtol=0,
                               atol=1e-9)
    assert np.ptp(rot) > 0.5                                # the rod turned


def test_four_bar_is_drawn_as_a_closed_chain(tmp_path):
    """FB-S1 (cases/four_bar_fbs1): each joint drawn at its joint point, once as the point of its
    first body and once as that of its second; the two stay together while the bars turn
    [1e-8 m, the case's tolerance], so the drawn links close the chain. The force vectors at
    the joint points at t = 0 are the notes' D1 pin forces on the crank at O1 and on the rocker
    at O4 [1e-8]."""
    d = case_deck("four_bar_fbs1")
    d["steps"][0].update(duration=0.2, time_step=0.005, output_interval=0.05)
    h5_path, xdmf = _run(d, tmp_path, "fbs1")
    assert assert_consistent(h5_path, xdmf) == 5
    points, _, frames = read_xdmf(xdmf)
    with h5py.File(h5_path, "r") as h5:
        parts = list(h5["xdmf"].attrs["parts"])
        part, kind = h5["xdmf/part"][()], h5["xdmf/kind"][()]
    assert parts == ["rigid crank", "rigid coupler", "rigid rocker", "revolute O1",
                     "revolute O2", "revolute O3", "revolute O4"]
    for j in range(4):                       # each joint: a point cell, an axis, its arms
        kinds = sorted(kind[part == 3 + j])
        assert kinds[:2] == [KINDS["joint"], KINDS["joint_axis"]], kinds
    turned = 0.0
    for name in ("O1", "O2", "O3", "O4"):
        p0, _, count = joint(h5_path, name)
        assert count == 1
        pb = p0 + 1                          # the second node's point follows the first's
        np.testing.assert_array_equal(points[p0], points[pb])
        for _, pd, _ in frames:
            u = pd["displacement"]
            np.testing.assert_allclose(points[p0] + u[p0], points[pb] + u[pb], atol=1e-8)
            turned = max(turned, float(np.linalg.norm(u[p0])))
    assert turned > 0.1                      # the chain moved
    o1, o4 = joint(h5_path, "O1")[0], joint(h5_path, "O4")[0]
    np.testing.assert_allclose(frames[0][1]["joint_force"][o1], [0.0826311484, 1.7909153192, 0.0],
                               atol=1e-8)
    np.testing.assert_allclose(frames[0][1]["joint_force"][o4], [-1.0989512818, 8.2676077370,
                                                                 0.0], atol=1e-8)
    np.testing.assert_array_equal(points[o1], [0.0, 0.0, 0.0])       # O1


@pytest.mark.skipif(shutil.which("pvpython") is None, reason="ParaView (pvpython) not installed")
def test_paraview_reads_the_joints(rod, tmp_path):
    """ParaView's Xdmf3ReaderT: one unstructured grid with every point and cell at every time,
    and the pivot's force at its joint point (issue 26: it showed an empty grid)."""
    h5_path, xdmf = rod
    p0, c0, _ = joint(h5_path, "pivot")
    with h5py.File(h5_path, "r") as h5:
        N, C = len(h5["xdmf/points"]), len(h5["xdmf/part"])
    probe = tmp_path / "probe.py"
    probe.write_text(textwrap.dedent("""
        import sys
        from paraview import simple as pv
        from paraview import servermanager as sm
        r = pv.Xdmf3ReaderT(FileName=[sys.argv[1]])
        r.UpdatePipelineInformation()
        for t in r.TimestepValues:
            r.UpdatePipeline(t)
            data = sm.Fetch(r)
            print("grid", data.GetClassName(), data.GetNumberOfPoints(),
                  data.GetNumberOfCells())
        r.UpdatePipeline(r.TimestepValues[0])
        data = sm.Fetch(r)
        print("force", *data.GetPointData().GetArray("joint_force").GetTuple3(int(sys.argv[2])))
        print("fy", data.GetCellData().GetArray("fy").GetValue(int(sys.argv[3])))
    """))
    p = run_pvpython([probe, xdmf, p0, c0], capture_output=True, text=True, timeout=300,
                     cwd=os.path.dirname(xdmf))
    assert p.returncode == 0, p.stdout + p.stderr
    grids = [x.split()[1:] for x in p.stdout.splitlines() if x.startswith("grid")]
    assert grids == [["vtkUnstructuredGrid", str(N), str(C)]] * 31, p.stdout
    line = next(x for x in p.stdout.splitlines() if x.startswith("force"))
    np.testing.assert_allclose([float(x) for x in line.split()[1:]], [0.0, M * G / 4, 0.0],
                               atol=1e-9)
    line = next(x for x in p.stdout.splitlines() if x.startswith("fy"))
    assert float(line.split()[1]) == pytest.approx(M * G / 4, abs=1e-9)
