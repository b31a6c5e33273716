"""Every case's results as a new user reads them: meshio on every XDMF file (issue 26).

Each validation case (``cases/<name>/deck.toml``, dynamic steps shortened to a few time steps
with a frame at each, long static ones to a few increments) runs in a copy of its folder; every
XDMF file it writes (the time series, the modes and vibration files) is read with meshio's
``TimeSeriesReader``, and every array of every frame is compared with the results file's own
datasets by :func:`results_checks.check_with_meshio` (an independent reading of the layout:
node rows and cells exactly, the drawn bodies' and joints' points by their rigid motion).
"""

import copy
import shutil
import tomllib
from pathlib import Path

import h5py
import numpy as np
import pytest
from results_checks import assert_consistent, check_with_meshio, read_xdmf

from fem.io import deck as deck_io
from fem.io.paraview_views import has_rotations
from fem.run import run

ROOT = Path(__file__).resolve().parents[1]
CASES = sorted(p.parent.name for p in (ROOT / "cases").glob("*/deck.toml"))
STEPS = 4                   # time steps kept of a dynamic step
INCREMENTS = 3              # increments kept of a static step


def shortened(deck: dict) -> dict:
    """A few time steps (a frame each) of every dynamic step, a few increments of static ones."""
    d = copy.deepcopy(deck)
    for s in d["steps"]:
        if s.get("type") == "dynamic":
            s["duration"] = min(s["duration"], STEPS * s["time_step"])
            s.pop("output_interval", None)
        elif s.get("increments", 0) > INCREMENTS:
            if "load_factor" in s:
                s["load_factor"] *= INCREMENTS / s["increments"]
            s["increments"] = INCREMENTS
        if "max_steps" in s:                    # arc-length: a few increments, then it warns
            s["max_steps"] = min(s["max_steps"], 2 * INCREMENTS)
    return d


def run_case(name: str, folder: Path):
    """Run case ``name`` (shortened) in ``folder``, a copy of its own; returns the result."""
    work = folder / name
    shutil.copytree(ROOT / "cases" / name, work)
    ref = tomllib.loads((work / "reference.toml").read_text()) \
        if (work / "reference.toml").exists() else {}
    for prep in ref.get("prepare", []):
        r = run(deck_io.load(str(work / prep)), str(work / f"{Path(prep).stem}_prepare.h5"))
        for xdmf in r.xdmf:                         # cms_reduce: the component's modes
            assert check_with_meshio(xdmf, r.h5, True) > 0
    raw = tomllib.loads((work / "deck.toml").read_text())
    dk = deck_io.from_dict(shortened(raw), base_dir=str(work))
    return dk, run(dk, str(work / "out.h5"))


#: cases whose steps write no frames and no modes (linearize: /linear only; a stability sweep:
#: /sweep and its plots)
NO_XDMF = {"spinning_beam_linearized", "two_link_hanging", "jeffcott_rotor",
           "spinning_blade_superelement"}


@pytest.mark.parametrize("name", [c for c in CASES if c not in NO_XDMF])
def test_meshio_reads_every_array_of_every_case(name, tmp_path):
    dk, result = run_case(name, tmp_path)
    assert result.xdmf, result
    for xdmf in result.xdmf:
        frames = check_with_meshio(xdmf, result.h5, has_rotations(dk.model))
        assert frames > 0, xdmf
    assert_consistent(result.h5, result.xdmf[0] if result.xdmf else None)


# --- every family and joint kind in one model ----------------------------------------------------

def zoo_3d() -> dict:
    """A 3D model of every family and most joint kinds, hanging under gravity for a few steps.

    A clamped co-rotational beam (nodes 1-2) carries, by a revolute joint at (1.5, 0, 0), a box
    body (node 5); a cylinder body (6) hangs from it by a spherical joint, a sphere body (7)
    slides along x on a prismatic joint to the ground, a body drawn by its inertia box (8) hangs
    from the cylinder by a universal joint; a truss (2-4) from the beam's tip is held at 4 with
    a grounded spring along y; a shell plate of 2 x 2 quadrilaterals is clamped along one edge.
    (Ties are drawn in :func:`zoo_ties`.)
    """
    plate = [[x, y, -1.0] for y in (0.0, 0.5, 1.0) for x in (0.0, 0.5, 1.0)]
    quads = [[9 + i + 3 * j, 10 + i + 3 * j, 13 + i + 3 * j, 12 + i + 3 * j]
             for j in range(2) for i in range(2)]
    return {
        "model": {"dim": 3},
        "materials": [{"name": "m", "E": 2e8, "nu": 0.3, "density": 1000.0}],
        "sections": [{"name": "s", "A": 1e-3, "Iy": 1e-6, "Iz": 1e-6, "J": 2e-6}],
        "nodes": {"coordinates": [[0, 0, 0], [1, 0, 0], [1, 0, 0], [1, 1, 0], [2, 0, 0],
                                  [3, 0, 0], [4, 0, 0], [3, 0, -1]] + plate},
        "elements": [{"name": "beam", "type": "beam", "material": "m", "section": "s",
                      "formulation": "corotational", "connectivity": [[1, 2]], "divisions": 2},
                     {"name": "bar", "type": "truss", "material": "m", "section": "s",
                      "connectivity": [[2, 4]]},
                     {"name": "plate", "type": "shell", "material": "m", "thickness": 0.01,
                      "connectivity": quads}],
        "springs": [{"name": "k", "nodes": [4], "dof": "uy", "stiffness": 1e4}],
        "bodies": [{"name": "box", "nodes": [5], "mass": 2.0, "inertia": [0.1, 0.2, 0.3],
                    "shape": "box", "size": [0.6, 0.2, 0.1], "axis": [1, 1, 0]},
                   {"name": "can", "nodes": [6], "mass": 1.0, "inertia": [0.05, 0.05, 0.02],
                    "shape": "cylinder", "size": [0.2, 0.5], "axis": [0, 1, 0]},
                   {"name": "ball", "nodes": [7], "mass": 1.0, "inertia": [0.01, 0.01, 0.01],
                    "shape": "sphere", "size": [0.3]},
                   {"name": "lump", "nodes": [8], "mass": 1.0, "inertia": [0.02, 0.05, 0.06]}],
        "supports": [{"nodes": [1], "fixed": ["all"]}, {"nodes": [4], "fixed": ["ux", "uz"]},
                     {"nodes": [3], "fixed": ["all"]}, {"nodes": [9, 12, 15], "fixed": ["all"]}],
        "joints": [{"name": "hinge", "type": "revolute", "pairs": [[2, 5]],
                    "points": [[1.5, 0, 0]], "axis": [0, 0, 1]},
                   {"name": "ball joint", "type": "spherical", "pairs": [[5, 6]],
                    "points": [[2.5, 0, 0]]},
                   {"name": "rail", "type": "prismatic", "ground": [7], "axis": [1, 0, 0]},
                   {"name": "cross", "type": "universal", "pairs": [[6, 8]],
                    "points": [[3, 0, -0.5]], "axis": [1, 0, 0], "second_axis": [0, 1, 0]}],
        "gravity": {"acceleration": [0, 0, -9.81]},
        "steps": [{"name": "hang", "type": "dynamic", "integrator": "generalized_alpha",
                   "time_step": 0.002, "duration": 0.006}]}


def zoo_2d() -> dict:
    """A 2D model: a cantilever of beams, a body on a revolute joint at its tip, a slider body
    on a prismatic joint to the ground along a tilted line, a truss from the beam's tip, a
    grounded spring; a static step (no velocities: those arrays are NaN there), a dynamic one,
    and a modal step (its modes and vibration files move the drawn points with the modes)."""
    return {
        "model": {"dim": 2},
        "materials": [{"name": "m", "E": 2e8, "nu": 0.3, "density": 1000.0}],
        "sections": [{"name": "s", "A": 1e-3, "Iz": 1e-6}],
        "nodes": {"coordinates": [[0, 0], [1, 0], [1, 0], [1, 1], [1.5, 0], [3, 1]]},
        "elements": [{"name": "beam", "type": "beam", "material": "m", "section": "s",
                      "formulation": "corotational", "connectivity": [[1, 2]], "divisions": 2},
                     {"name": "bar", "type": "truss", "material": "m", "section": "s",
                      "connectivity": [[2, 4]]}],
        "springs": [{"name": "k", "nodes": [4], "dof": "uy", "stiffness": 1e4},
                    {"name": "stop", "nodes": [6], "dof": "ux", "stiffness": 1e3}],
        "bodies": [{"name": "arm", "nodes": [5], "mass": 2.0, "inertia": 0.1, "shape": "box",
                    "size": [1.0, 0.1]},
                   {"name": "slider", "nodes": [6], "mass": 1.0, "inertia": 0.01}],
        "supports": [{"nodes": [1], "fixed": ["all"]}, {"nodes": [4], "fixed": ["ux"]},
                     {"nodes": [3], "fixed": ["all"]}, {"nodes": [5], "fixed": ["rz"]}],
        "joints": [{"name": "hinge", "type": "revolute", "pairs": [[2, 5]], "points": [[1, 0]]},
                   {"name": "rail", "type": "prismatic", "ground": [6], "axis": [1, 1]}],
        "loads": [{"name": "P", "nodes": [4], "force": [0, -10.0]}],
        "gravity": {"acceleration": [0, -9.81]},
        "steps": [{"name": "load", "type": "static", "loads": ["P", "gravity"],
                   "nonlinear": True, "increments": 2},
                  {"name": "swing", "type": "dynamic", "time_step": 0.002, "duration": 0.006,
                   "remove": ["P"]},
                  {"name": "modes", "type": "modal", "modes": 3}]}


def zoo_ties() -> dict:
    """Two 2D cantilevers of beams whose tips meet at a pin (a tie), loaded there, statically;
    then released."""
    return {
        "model": {"dim": 2},
        "materials": [{"name": "m", "E": 2e8, "nu": 0.3, "density": 1000.0}],
        "sections": [{"name": "s", "A": 1e-3, "Iz": 1e-6}],
        "nodes": {"coordinates": [[0, 0], [1, 0], [2, 0], [1, 0]]},
        "elements": [{"name": "left", "type": "beam", "material": "m", "section": "s",
                      "connectivity": [[1, 2]], "divisions": 2},
                     {"name": "right", "type": "beam", "material": "m", "section": "s",
                      "connectivity": [[3, 4]], "divisions": 2}],
        "ties": [{"name": "pin", "pairs": [[2, 4]]}],
        "supports": [{"nodes": [1, 3], "fixed": ["all"]}],
        "loads": [{"name": "P", "nodes": [2], "force": [0, -10.0]}],
        "steps": [{"name": "load", "type": "static"},
                  {"name": "swing", "type": "dynamic", "time_step": 0.002, "duration": 0.006,
                   "remove": ["P"]}]}


def zoo_modes_3d() -> dict:
    """A 3D cantilever of beams carrying, by a fixed joint at an offset point, a cylinder body:
    its modes move the drawn body and joint with the tip (modes and vibration files)."""
    return {
        "model": {"dim": 3},
        "materials": [{"name": "m", "E": 2e8, "nu": 0.3, "density": 1000.0}],
        "sections": [{"name": "s", "A": 1e-3, "Iy": 1e-6, "Iz": 2e-6, "J": 2e-6}],
        "nodes": {"coordinates": [[0, 0, 0], [1, 0, 0], [1.5, 0.2, 0]]},
        "elements": [{"name": "beam", "type": "beam", "material": "m", "section": "s",
                      "connectivity": [[1, 2]], "divisions": 3}],
        "bodies": [{"name": "can", "nodes": [3], "mass": 1.0, "inertia": [0.05, 0.05, 0.02],
                    "shape": "cylinder", "size": [0.2, 0.5], "axis": [1, 0, 1]}],
        "supports": [{"nodes": [1], "fixed": ["all"]}],
        "joints": [{"name": "weld", "type": "fixed", "pairs": [[2, 3]], "points": [[1.2, 0, 0]]}],
        "steps": [{"name": "modes", "type": "modal", "modes": 3}]}


def test_meshio_reads_a_linear_superelement(tmp_path):
    """A superelement (the reduced rod of cases/slider_crank_superelement, linear) clamped at one
    interface node and loaded at the other: drawn by its interface nodes, read through meshio."""
    shutil.copy(ROOT / "cases" / "slider_crank_superelement" / "rod.toml", tmp_path)
    run(deck_io.load(str(tmp_path / "rod.toml")), str(tmp_path / "rod.h5"))
    d = {"model": {"dim": 2},
         "nodes": {"ids": [2, 6], "coordinates": [[0.1524, 0.0], [0.4572, 0.0]]},
         "elements": [{"name": "rod", "type": "superelement", "file": "rod_superelement.h5"}],
         "supports": [{"nodes": [2], "fixed": ["all"]}],
         "loads": [{"name": "P", "nodes": [6], "force": [0.0, -1.0]}],
         "steps": [{"name": "load", "type": "static"},
                   {"name": "swing", "type": "dynamic", "remove": ["P"], "time_step": 1e-4,
                    "duration": 3e-4}]}
    dk = deck_io.from_dict(d, base_dir=str(tmp_path))
    result = run(dk, str(tmp_path / "se.h5"))
    assert check_with_meshio(result.xdmf[0], result.h5, True) == 4
    with h5py.File(result.h5, "r") as h5:
        assert h5["xdmf/kind"][()].tolist() == [8, 8]         # one cell per interface node


@pytest.mark.parametrize("deck", [zoo_2d, zoo_3d, zoo_ties, zoo_modes_3d])
def test_meshio_reads_every_family_and_joint(deck, tmp_path):
    raw = deck()
    dk = deck_io.from_dict(raw)
    result = run(dk, str(tmp_path / "zoo.h5"))
    series = [s for s in raw["steps"] if s["type"] in ("static", "dynamic")]
    modes = result.xdmf[1:] if series else result.xdmf
    if series:
        frames = check_with_meshio(result.xdmf[0], result.h5, has_rotations(dk.model))
        written = assert_consistent(result.h5, result.xdmf[0])
        # a dynamic step's first frame takes the place of the step before's last in the series
        assert frames == written - (len(series) - 1) > 3
    for xdmf in modes:                                  # modes and vibration
        assert check_with_meshio(xdmf, result.h5, True) >= 3
    assert len(modes) == 2 * (len(raw["steps"]) > len(series))


def with_nodal_fields(monkeypatch):
    """Make every frame also write two nodal fields, as the shell stresses will be written:
    ``/steps/<s>/nodal/s_top`` ``(T, n)`` (NaN at the nodes it does not cover: every third) and
    ``/steps/<s>/nodal/direction`` ``(T, n, 3)``, both functions of the displacement."""
    from fem.io import paraview_views

    frame_arrays = paraview_views.frame_arrays

    def more(drawing, model, step, values):
        u = np.asarray(values["displacement"])
        s_top = 1e3 * u[:, 2] + np.arange(len(u))
        s_top[::3] = np.nan
        return {**frame_arrays(drawing, model, step, values), "nodal/s_top": s_top,
                "nodal/direction": u[:, ::-1] + 1.0}

    monkeypatch.setattr(paraview_views, "frame_arrays", more)


def test_meshio_reads_the_nodal_fields(tmp_path, monkeypatch):
    """Every ``/steps/<s>/nodal/<name>`` is point data of every frame (NaN where it is NaN and at
    the drawn points), whatever else the model draws."""
    with_nodal_fields(monkeypatch)
    dk = deck_io.from_dict(zoo_3d())
    result = run(dk, str(tmp_path / "nodal.h5"))
    check_with_meshio(result.xdmf[0], result.h5, True)
    _, _, frames = read_xdmf(result.xdmf[0])
    with h5py.File(result.h5, "r") as h5:
        s_top = h5["steps/hang/nodal/s_top"][()]
        n = len(h5["model/nodes"])
    assert len(frames) == len(s_top) > 1
    for k, (_, pd, _) in enumerate(frames):
        np.testing.assert_array_equal(pd["s_top"][:n], s_top[k])
        assert np.all(np.isnan(pd["s_top"][n:])) and np.isnan(pd["s_top"][0])
        assert pd["direction"].shape == (len(pd["displacement"]), 3)
