"""Joint outputs in the ParaView time series (fem.io.paraview.constraint_blocks).

A model with joint groups writes each frame as a spatial collection: the elements' grid and one
grid per joint group (lines between its node pairs) whose cell data are the joint's outputs,
hyperslabs of ``/steps/<s>/elements/<joint>/<q>``. Checked here by parsing the XDMF with
xml.etree and reading every DataItem it names through h5py (and with ParaView, if installed).
"""

import os
import shutil
import subprocess
import textwrap
import xml.etree.ElementTree as ET

import h5py
import numpy as np
import pytest
from helpers import case_deck
from results_checks import assert_consistent, read_xdmf

from fem.io.deck import from_dict
from fem.run import run as run_deck

G, M = 9.81, 3.0             # cases/rod_pendulum: gravity, mass of the rod


def _run(d: dict, tmp_path, name: str):
    result = run_deck(from_dict(d), str(tmp_path / f"{name}.h5"))
    return result.h5, result.xdmf[0]


def _resolve(h5, text: str) -> tuple[np.ndarray, tuple]:
    """The array an XDMF DataItem names (``file.h5:/path`` or its Xdmf3 hyperslab
    ``|start:stride:count:dims``), and the dataset's current shape."""
    path = text.strip().split(":", 1)[1]
    path, _, slab = path.partition("|")
    assert path in h5, f"the XDMF names {path}, which is not in the results file"
    d = h5[path]
    if not slab:
        return d[()], d.shape
    start, stride, count, dims = ([int(x) for x in p.split()] for p in slab.split(":"))
    assert len(start) == len(stride) == len(count) == len(dims) == d.ndim, (path, slab)
    assert all(a + s * (c - 1) < n for a, s, c, n in zip(start, stride, count, d.shape,
                                                         strict=True)), (path, slab, d.shape)
    index = tuple(slice(a, a + s * c, s) for a, s, c in zip(start, stride, count, strict=True))
    return d[index], d.shape


def check_every_data_item(h5_path: str, xdmf_path: str) -> int:
    """Every DataItem of the XDMF names an existing dataset (or a slab within it) whose data
    have the declared Dimensions; returns how many were checked."""
    root = ET.parse(xdmf_path).getroot()
    n = 0
    with h5py.File(h5_path, "r") as h5:
        for item in root.iter("DataItem"):
            data, _ = _resolve(h5, item.text)
            declared = tuple(int(x) for x in item.get("Dimensions").split())
            assert data.size == int(np.prod(declared)), (item.text, declared, data.shape)
            assert data.squeeze(0).shape == declared if "|" in item.text \
                else data.shape == declared, (item.text, declared, data.shape)
            n += 1
    return n


def joint_frames(xdmf_path: str, h5_path: str, block: str) -> list[dict]:
    """Per frame, the attributes of joint grid ``block`` read through the XDMF, by name."""
    root = ET.parse(xdmf_path).getroot()
    out = []
    with h5py.File(h5_path, "r") as h5:
        for frame in root.iter("Grid"):
            if frame.find("Time") is None:
                continue
            assert frame.get("CollectionType") == "Spatial"
            grid = frame.find(f"Grid[@Name='{block}']")
            assert grid is not None, [g.get("Name") for g in frame.findall("Grid")]
            atts = {}
            for att in grid.findall("Attribute"):
                item = att.find("DataItem")
                shape = tuple(int(x) for x in item.get("Dimensions").split())
                atts[att.get("Name")] = (att.get("Center"), att.get("AttributeType"),
                                         _resolve(h5, item.text)[0].reshape(shape))
            topo = grid.find("Topology")
            atts["_cells"] = (topo.get("TopologyType"), _resolve(h5, topo.find("DataItem").text)[0])
            out.append(atts)
    return out


@pytest.fixture(scope="module")
def rod(tmp_path_factory):
    """The rod pendulum case, released from horizontal, over 0.3 s (31 frames)."""
    d = case_deck("rod_pendulum")
    d["steps"][0]["duration"] = 0.3
    return _run(d, tmp_path_factory.mktemp("rod"), "rod")


def test_rod_pendulum_xdmf_names_only_what_exists(rod):
    h5_path, xdmf = rod
    assert check_every_data_item(h5_path, xdmf) > 31 * 8
    assert assert_consistent(h5_path, xdmf) == 31          # times increase, frames exist
    _, cells, frames = read_xdmf(xdmf)                      # the elements' grid as before
    assert cells.ravel().tolist() == [0] and len(frames) == 31
    assert sorted(frames[0][2]) == [] and "displacement" in frames[0][1]


def test_rod_pendulum_joint_force_through_the_xdmf(rod):
    """The pivot's grid: one line from the rod's node to the supported node at the pivot; its
    cell data equal the HDF5 joint outputs; the force at release is (0, m g / 4) (notes D2, as
    cases/rod_pendulum/reference.toml) [1e-9], and at every frame the global force vector is the
    joint-frame components (fx, fy) turned by the rod's rotation [1e-12]."""
    h5_path, xdmf = rod
    frames = joint_frames(xdmf, h5_path, "revolute pivot")
    with h5py.File(h5_path, "r") as h5:
        conn = h5["model/constraints/pivot/connectivity"][()]
        s = h5["steps/swing"]
        out = {q: s[f"elements/pivot/{q}"][()] for q in s["elements/pivot"]}
        rot = s["rotation_vector"][:, 0, 2]
        disp = s["displacement"][()]
        nodes = h5["model/nodes"][()]
    assert conn.tolist() == [[0, 1]]
    np.testing.assert_array_equal(nodes[1], [0.0, 0.0, 0.0])          # the pivot point
    assert sorted(k for k in frames[0] if k != "_cells") == sorted(
        ["displacement", "angle", "fx", "fy", "mz", "force", "moment"])
    for k, f in enumerate(frames):
        assert f["_cells"][0] == "Polyline" and f["_cells"][1].tolist() == conn.tolist()
        assert f["force"][:2] == ("Cell", "Vector") and f["force"][2].shape == (1, 3)
        assert f["moment"][:2] == ("Cell", "Vector")
        assert f["fy"][:2] == ("Cell", "Scalar") and f["fy"][2].shape == (1,)
        assert f["displacement"][:2] == ("Node", "Vector")
        np.testing.assert_array_equal(f["displacement"][2], disp[k])
        for q, value in out.items():
            np.testing.assert_array_equal(f[q][2], value[k])
        c, s_ = np.cos(rot[k]), np.sin(rot[k])
        fx, fy = f["fx"][2][0], f["fy"][2][0]
        np.testing.assert_allclose(f["force"][2][0], [c * fx - s_ * fy, s_ * fx + c * fy, 0.0],
                                   rtol=0, atol=1e-12 * M * G)
        np.testing.assert_allclose(f["moment"][2][0], [0.0, 0.0, f["mz"][2][0]], atol=0)
    np.testing.assert_allclose(frames[0]["force"][2][0], [0.0, M * G / 4, 0.0], rtol=0,
                               atol=1e-9)
    assert np.ptp(rot) > 0.5                                # the rod turned


def test_four_bar_every_joint_is_a_grid(tmp_path):
    """FB-S1 (cases/four_bar_fbs1): one grid per joint group, the grounded ones drawn to their
    supported node; the force vectors through the XDMF at t = 0 are the notes' D1 pin forces on
    the crank at O1 and on the rocker at O4 [1e-8, the case's tolerance]; a model without joints
    keeps its plain frames (tests/test_results_io.py)."""
    d = case_deck("four_bar_fbs1")
    d["steps"][0].update(duration=0.01, time_step=0.005, output_interval=0.005)
    h5_path, xdmf = _run(d, tmp_path, "fbs1")
    assert check_every_data_item(h5_path, xdmf) > 0
    assert assert_consistent(h5_path, xdmf) == 3
    root = ET.parse(xdmf).getroot()
    frame = next(g for g in root.iter("Grid") if g.find("Time") is not None)
    assert [g.get("Name") for g in frame.findall("Grid")] == [
        "elements", "revolute O1", "revolute O2", "revolute O3", "revolute O4"]
    o1 = joint_frames(xdmf, h5_path, "revolute O1")[0]
    o4 = joint_frames(xdmf, h5_path, "revolute O4")[0]
    np.testing.assert_allclose(o1["force"][2][0], [0.0826311484, 1.7909153192, 0.0], atol=1e-8)
    np.testing.assert_allclose(o4["force"][2][0], [-1.0989512818, 8.2676077370, 0.0], atol=1e-8)
    with h5py.File(h5_path, "r") as h5:
        ground = h5["model/nodes"][o1["_cells"][1][0, 1]]
    np.testing.assert_array_equal(ground, [0.0, 0.0, 0.0])             # O1


@pytest.mark.skipif(shutil.which("pvpython") is None, reason="ParaView (pvpython) not installed")
def test_paraview_reads_the_joint_blocks(rod, tmp_path):
    h5_path, xdmf = rod
    probe = tmp_path / "probe.py"
    probe.write_text(textwrap.dedent("""
        import sys
        from paraview import simple as pv
        from paraview import servermanager as sm
        r = pv.Xdmf3ReaderT(FileName=[sys.argv[1]])
        r.UpdatePipeline(0.0)
        data = sm.Fetch(r)
        names = []
        it = data.NewIterator()
        it.InitTraversal()
        while not it.IsDoneWithTraversal():
            block = it.GetCurrentDataObject()
            force = block.GetCellData().GetArray("force")
            if force is not None:
                print("force", *force.GetTuple3(0))
            it.GoToNextItem()
    """))
    p = subprocess.run(["pvpython", str(probe), xdmf], capture_output=True, text=True,
                       timeout=300, cwd=os.path.dirname(xdmf))
    assert p.returncode == 0, p.stdout + p.stderr
    line = next(x for x in p.stdout.splitlines() if x.startswith("force"))
    np.testing.assert_allclose([float(x) for x in line.split()[1:]], [0.0, M * G / 4, 0.0],
                               atol=1e-9)
