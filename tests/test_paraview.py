"""What ParaView shows of the results (issue 26): counts at every time step, plots over time,
labels, and pictures that are not empty.

Runs where ``pvpython`` is installed (Debian: ``apt-get install paraview python3-paraview
xvfb``; ``.ci/run`` installs them), under ``xvfb-run`` when it exists; skipped elsewhere. One
pvpython process (tests/paraview_probe.py) reads every file of the module. The pictures go to
``$FEM_RENDER_DIR`` when it is set (``scripts/render_docs_images.sh`` makes docs/images/ so), else
to a temporary folder; each is checked by counting its pixels that are not the white background:
a mechanism (Bricard's, cases/bricard) against the same picture with only its bodies, only its
joints, only its element cells, a shell roof (cases/scordelis_lo_roof) coloured by a stress, and
a vibrating mode of cases/cantilever_modes with and without its label. A model of every family
(tests/test_readers.py's zoo) with synthetic nodal fields shows them as point data.
"""

import copy
import json
import os
import shutil
import tomllib
import xml.etree.ElementTree as ET
from pathlib import Path

import h5py
import numpy as np
import pytest
from helpers import run_pvpython
from results_checks import read_xdmf
from test_readers import with_nodal_fields, zoo_3d

from fem.io.deck import from_dict
from fem.io.drawing import KINDS
from fem.run import run

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.skipif(shutil.which("pvpython") is None,
                                reason="ParaView (pvpython) not installed: apt-get install "
                                "paraview python3-paraview xvfb")
LABEL = "'mode %d: %.4g Hz' % (mode[0], frequency[0])"


def case(name: str, **step) -> dict:
    with open(ROOT / "cases" / name / "deck.toml", "rb") as fh:
        d = tomllib.load(fh)
    d = copy.deepcopy(d)
    d["steps"][0].update(step)
    return d


@pytest.fixture(scope="module")
def renders(tmp_path_factory) -> Path:
    folder = os.environ.get("FEM_RENDER_DIR")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        return Path(folder)
    return tmp_path_factory.mktemp("renders")


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> dict:
    """The runs ParaView reads: {name: (h5, [xdmf files])}."""
    tmp = tmp_path_factory.mktemp("runs")
    decks = {"bricard": case("bricard", duration=1.0, output_interval=0.25),
             "roof": case("scordelis_lo_roof"),
             "modes": case("cantilever_modes"),
             "arc": case("von_mises_truss", max_steps=12)}
    out = {}
    for name, d in decks.items():
        r = run(from_dict(d), str(tmp / f"{name}.h5"))
        out[name] = (r.h5, r.xdmf)
    with pytest.MonkeyPatch.context() as mp:            # every family, with nodal fields
        with_nodal_fields(mp)
        r = run(from_dict(zoo_3d()), str(tmp / "zoo.h5"))
        out["zoo"] = (r.h5, r.xdmf)
    return out


def attributes(xdmf: str) -> dict:
    """The arrays every frame of a document names: {center: sorted names}."""
    grids = [g for g in ET.parse(xdmf).getroot().iter("Grid") if g.find("Time") is not None]
    seen = []
    for g in grids:
        names = {"Node": set(), "Cell": set(), "Grid": set()}
        for a in g.iter("Attribute"):
            names[a.get("Center")].add(a.get("Name"))
        seen.append({k: sorted(v) for k, v in names.items()})
    assert all(s == seen[0] for s in seen), "arrays change from frame to frame"
    return seen[0]


@pytest.fixture(scope="module")
def shown(results, renders, tmp_path_factory) -> dict:
    """Run pvpython once on every job; returns its answers by job name."""
    tmp = tmp_path_factory.mktemp("probe")
    bricard, roof = results["bricard"][1][0], results["roof"][1][0]
    modes, vibration = results["modes"][1]
    arc = results["arc"][1][0]
    iso = {"view": [1.0, 0.8, 1.3], "up": [0.0, 0.0, 1.0]}
    jobs = {
        "bricard": {"file": bricard, "counts": True, "plot": ["Points", "velocity"],
                    "renders": [
                        {"png": str(renders / "mechanism.png"), "time": 1.0, "glyph":
                         ["joint_force", 0.03], "color": ["CELLS", "part"], **iso},
                        {"png": str(tmp / "bodies.png"), "time": 1.0, "kinds": [1, 4], **iso},
                        {"png": str(tmp / "joints.png"), "time": 1.0, "kinds": [5, 7], **iso},
                        {"png": str(tmp / "elements.png"), "time": 1.0, "kinds": [0, 0],
                         **iso}]},
        "bricard S": {"file": bricard, "reader": "Xdmf3ReaderS", "counts": True},
        "roof": {"file": roof, "counts": True, "renders": [
            {"png": str(renders / "shell.png"), "time": 1.0, "color": ["POINTS", "s_top_mises"],
             "bar": True, "view": [1.0, 1.2, 0.8], "up": [0.0, 0.0, 1.0], "scale": 0.0}]},
        "modes": {"file": modes, "counts": True},
        "vibration": {"file": vibration, "counts": True, "label": LABEL, "time": 2.25,
                      "renders": [
                          {"png": str(renders / "mode.png"), "time": 2.25, "label": LABEL,
                           "scale": 0.2},
                          {"png": str(tmp / "mode_unlabelled.png"), "time": 2.25,
                           "scale": 0.2}]},
        "arc": {"file": arc, "counts": True, "plot": ["Points", "load_factor"]},
        "zoo": {"file": results["zoo"][1][0], "counts": True,
                "select": [[1, 4, 7], "s_top"]},
    }
    (tmp / "jobs.json").write_text(json.dumps(list(jobs.values())))
    p = run_pvpython([ROOT / "tests" / "paraview_probe.py", tmp / "jobs.json",
                      tmp / "answers.json"], capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    answers = json.loads((tmp / "answers.json").read_text())
    return {"tmp": tmp, **dict(zip(jobs, answers, strict=True))}


def ink(png) -> np.ndarray:
    """(H, W) bool: the pixels of a picture that are not its white background."""
    import matplotlib.image

    rgb = matplotlib.image.imread(str(png))[..., :3]
    return np.any(rgb < 0.98, axis=-1)


@pytest.mark.parametrize("name", ["bricard", "bricard S", "roof", "modes", "vibration", "arc",
                                  "zoo"])
def test_paraview_reads_every_point_cell_and_array_at_every_time(shown, results, name):
    """One unstructured grid with the drawn grid's points and cells at every time step, and
    every array the XDMF names (the same at every frame) in ParaView's point, cell and field
    data; the time steps are the frames'."""
    key = {"vibration": "modes"}.get(name, name.split()[0])
    h5_path, files = results[key]
    xdmf = files[1] if name == "vibration" else files[0]
    with h5py.File(h5_path, "r") as h5:
        N, C = len(h5["xdmf/points"]), len(h5["xdmf/part"])
    names = attributes(xdmf)
    _, _, frames = read_xdmf(xdmf)
    answer = shown[name]
    assert answer["times"] == pytest.approx([t for t, _, _ in frames], rel=1e-12)
    assert len(answer["counts"]) == len(frames)
    for c in answer["counts"]:
        assert (c["class"], c["points"], c["cells"]) == ("vtkUnstructuredGrid", N, C), c
        assert c["point"] == names["Node"] and c["cell"] == names["Cell"], c
        assert c["field"] == names["Grid"], c


def test_plot_data_over_time_shows_the_load_factor_and_the_velocity(shown, results):
    """*Plot Data Over Time*: the arc-length step's load factor (a frame scalar at the first
    point) is its min and max at every time step, equal to ``/steps/<s>/time``; the bodies'
    largest speed is the largest velocity magnitude meshio reads at each frame."""
    plot = shown["arc"]["plot"]
    with h5py.File(results["arc"][0], "r") as h5:
        factor = h5["steps/snap/time"][()]
    np.testing.assert_array_equal(plot["max(load_factor)"], factor)
    np.testing.assert_array_equal(plot["min(load_factor)"], factor)
    assert np.ptp(factor) > 0
    plot = shown["bricard"]["plot"]
    _, _, frames = read_xdmf(results["bricard"][1][0])
    speed = [np.linalg.norm(pd["velocity"], axis=1).max() for _, pd, _ in frames]
    assert max(speed) > 0.1
    np.testing.assert_allclose(plot["max(velocity (Magnitude))"], speed, rtol=1e-12)


def test_plot_selection_over_time_shows_a_nodal_field(shown, results):
    """A nodal field (``/steps/<s>/nodal/s_top``, NaN at the nodes it does not cover) plotted
    over time at chosen points equals the HDF5 dataset there (ParaView's statistics over all
    points mishandle NaN, so a field is plotted at points)."""
    picked = shown["zoo"]["select"]
    with h5py.File(results["zoo"][0], "r") as h5:
        s_top = h5["steps/hang/nodal/s_top"][()]
    assert sorted(picked) == ["1", "4", "7"]
    for node, values in picked.items():
        np.testing.assert_array_equal(np.ravel(values), s_top[:, int(node)])
    assert np.ptp(s_top[:, 4]) > 0


def test_the_mechanism_is_drawn_as_bodies_and_joints(shown, renders):
    """Bricard's rods are drawn as the boxes of their inertia (1 m x 0.1 m x 0.1 m), its hinges
    by their points, axes and arms: each part alone covers part of the picture, the element
    cells alone (the bodies' nodes) next to nothing; the joint forces are red arrows."""
    tmp = shown["tmp"]
    full, bodies = ink(renders / "mechanism.png"), ink(tmp / "bodies.png")
    joints, elements = ink(tmp / "joints.png"), ink(tmp / "elements.png")
    area = full.size
    assert full.sum() > 0.03 * area, full.sum()
    assert bodies.sum() > 0.03 * area, bodies.sum()
    assert joints.sum() > 0.002 * area, joints.sum()
    assert elements.sum() < 0.1 * joints.sum(), (elements.sum(), joints.sum())
    import matplotlib.image

    rgb = matplotlib.image.imread(str(renders / "mechanism.png"))[..., :3]
    red = (rgb[..., 0] > 0.6) & (rgb[..., 1] < 0.3) & (rgb[..., 2] < 0.3)
    assert red.sum() > 0.001 * area, red.sum()               # the joint-force arrows


def test_the_shell_is_coloured_by_its_stress(shown, renders):
    """The roof fills a good part of the picture in many colours (a smooth stress field on a
    colour map, not one flat colour)."""
    import matplotlib.image

    picture = ink(renders / "shell.png")
    assert picture.sum() > 0.1 * picture.size, picture.sum()
    rgb = matplotlib.image.imread(str(renders / "shell.png"))[..., :3][picture]
    assert len(np.unique((rgb * 32).astype(int), axis=0)) > 30


def test_a_vibrating_mode_is_labelled_with_its_number_and_frequency(shown, results, renders):
    """At "time" 2.25 the vibration file shows mode 2 a quarter period in; the Python Annotation
    of its field data reads "mode 2: <f> Hz" with the step's frequency, and the label is drawn
    (the picture without it lacks pixels in the upper left corner)."""
    with h5py.File(results["modes"][0], "r") as h5:
        hz = h5["modes/modes/hertz"][()]
    assert shown["vibration"]["label"] == f"mode 2: {hz[1]:.4g} Hz"
    labelled, plain = ink(renders / "mode.png"), ink(shown["tmp"] / "mode_unlabelled.png")
    corner = (slice(0, 80), slice(0, 320))
    assert labelled[corner].sum() > 200 + plain[corner].sum(), (labelled[corner].sum(),
                                                                plain[corner].sum())
    assert plain.sum() > 500                                  # the beam itself


def test_kinds_are_what_the_probe_thresholds(results):
    """The kinds the pictures pick (bodies 1-4, joints 5-7) are fem.io.drawing's."""
    assert [KINDS[k] for k in ("body", "body_x", "body_y", "body_z")] == [1, 2, 3, 4]
    assert [KINDS[k] for k in ("joint", "joint_axis", "joint_arm")] == [5, 6, 7]
