"""``fem plot`` (fem.plot): the plotted numbers, read back from its CSV, equal the results datasets.

Runs the cantilever case (two static steps) and a short swing of the rod pendulum case with
sensors, in-process through :func:`fem.cli.main`; the expected columns are read from the
results file with h5py by the test's own indexing. The figures must be PNG (SVG, PDF) files that
fem marks as its own (:func:`fem.io.files.written_by_fem`).
"""

import csv

import h5py
import numpy as np
import pytest
from helpers import case_deck

from fem.cli import main
from fem.io.deck import from_dict
from fem.io.files import written_by_fem
from fem.run import run


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Results of the cantilever (static) and of 0.05 s of the rod pendulum (dynamic)."""
    tmp = tmp_path_factory.mktemp("plot")
    cant = case_deck("cantilever_2d")
    cant["sensors"] = [{"name": "tip uy", "node": 3, "dof": "uy"},
                       {"name": "M1", "group": "beam", "quantity": "M1"}]
    rod = case_deck("rod_pendulum")
    rod["steps"][0].update(duration=0.05, output_interval=0.01, time_step=0.005)
    rod["sensors"] = [{"name": "angle", "group": "pivot", "quantity": "angle"},
                      {"name": "x", "body": "rod", "dof": "ux", "quantity": "position"}]
    out = {}
    for name, deck in (("cantilever", cant), ("rod", rod)):
        out[name] = str(tmp / f"{name}.h5")
        run(from_dict(deck), out[name])
    return out


def _csv(path):
    with open(path, newline="") as fh:
        rows = list(csv.reader(fh))
    head, body = rows[0], rows[1:]
    cols = {h: [r[i] for r in body] for i, h in enumerate(head)}
    return {h: (v if h == "step" else np.array([float(x) for x in v])) for h, v in cols.items()}


def test_sensor_curves_and_png_over_two_static_steps(runs, tmp_path):
    png, table = str(tmp_path / "c.png"), str(tmp_path / "c.csv")
    assert main(["plot", runs["cantilever"], "tip uy", "M1", "-o", png, "--csv", table]) == 0
    got = _csv(table)
    with h5py.File(runs["cantilever"], "r") as h5:
        want = {k: [] for k in ("load_factor", "tip uy", "M1")}
        steps = []
        for s in ("tip_force", "tip_moment"):         # the order they ran
            g = h5[f"steps/{s}"]
            want["load_factor"].append(g["time"][()])
            want["tip uy"].append(g["displacement"][:, 2, 1])
            want["M1"].append(g["elements/beam/M1"][:, 0])
            steps += [s] * len(g["time"])
    assert list(got) == ["step", "load_factor", "tip uy", "M1"]
    assert got["step"] == steps
    for k, v in want.items():
        np.testing.assert_array_equal(got[k], np.concatenate(v))     # exactly: 17 digits
    with open(png, "rb") as fh:
        assert fh.read(8) == b"\x89PNG\r\n\x1a\n"
    assert written_by_fem(png, "")


def test_node_dof_energy_and_against_a_sensor(runs, tmp_path):
    path = runs["rod"]
    a, b = str(tmp_path / "a.csv"), str(tmp_path / "b.csv")
    svg, pdf = str(tmp_path / "n.svg"), str(tmp_path / "n.pdf")
    assert main(["plot", path, "--node", "1", "--dof", "ux", "--dof", "rz", "--field",
                 "velocity", "--csv", a, "-o", svg, "-o", pdf]) == 0
    assert main(["plot", path, "--energy", "x", "--against", "angle", "--csv", b]) == 0
    ga, gb = _csv(a), _csv(b)
    with h5py.File(path, "r") as h5:
        s = h5["steps/swing"]
        n = int(np.flatnonzero(h5["model/node_ids"][()] == 1)[0])
        np.testing.assert_array_equal(ga["time"], s["time"][()])
        np.testing.assert_array_equal(ga["node 1 ux velocity"], s["velocity"][:, n, 0])
        np.testing.assert_array_equal(ga["node 1 rz velocity"], s["velocity"][:, n, 2])
        np.testing.assert_array_equal(gb["angle"], s["elements/pivot/angle"][:, 0])
        np.testing.assert_array_equal(gb["x"], 0.6 + s["displacement"][:, n, 0])
        energy = [k for k in s["energy"] if s[f"energy/{k}"].ndim == 1]
        assert {"kinetic", "total", "external_work"} <= set(energy)
        for k in energy:
            np.testing.assert_array_equal(gb[k], s[f"energy/{k}"][()])
    assert open(svg, encoding="utf-8").read(4096).count("<svg") == 1
    assert open(pdf, "rb").read(5) == b"%PDF-"


def test_sweep_frequencies_against_the_parameter(tmp_path):
    from test_cli_points import Recorder
    from test_sweep import PI2, column

    h5 = str(tmp_path / "col.h5")
    seen = Recorder()
    run(from_dict(column([0.0, 0.25 * PI2, 0.5 * PI2])), h5, progress=seen)
    # a sweep shows its progress value by value (issue 34: every step type shows progress)
    assert seen.calls == [("begin", "sweep", "stability_sweep", 3.0), ("update", 1.0),
                          ("update", 2.0), ("update", 3.0), ("end",)]
    table = str(tmp_path / "f.csv")
    assert main(["plot", h5, "--sweep", "sweep", "--csv", table]) == 0
    got = _csv(table)
    with h5py.File(h5, "r") as f:
        np.testing.assert_array_equal(got["load"], f["sweep/sweep/parameter"][()])
        F = f["sweep/sweep/frequencies"][()]
    for j in range(F.shape[1]):
        np.testing.assert_array_equal(got[f"mode {j + 1}"], F[:, j])


@pytest.mark.parametrize("argv, words", [
    (["no such"], "no sensor 'no such' in"),
    (["tip uy", "--against", "tip ux"], "no sensor 'tip ux'"),
    (["--node", "99", "--dof", "uy"], "--node 99: no such node in the results file (node ids "
     "1 to 3)"),
    (["--node", "3", "--dof", "uz"], "--dof: expected one of ux, uy, rz"),
    (["--sweep", "tip_force"], "no such stability sweep"),
    (["--modes", "tip_force"], "no such modal step"),
    (["tip uy", "--step", "swing"], "--step swing: no such step with frames; the steps with "
     "frames are: tip_force, tip_moment"),
    (["tip uy", "-o", "x.jpg"], "expected a file ending in .png, .svg, .pdf"),
])
def test_bad_names_exit_2_listing_what_exists(runs, tmp_path, capsys, argv, words):
    assert main(["plot", runs["cantilever"], *argv]) == 2
    err = capsys.readouterr().err
    assert words in err
    if "no sensor" in words:
        assert "the sensors are: M1, tip uy" in err


def test_a_file_that_is_not_fems_results(tmp_path, capsys):
    other = tmp_path / "other.h5"
    with h5py.File(other, "w") as f:
        f["x"] = 1.0
    assert main(["plot", str(other), "a"]) == 2
    assert "not a results file written by fem, nor a study's summary.h5" in \
        capsys.readouterr().err



def test_any_nodal_field_of_a_shell(tmp_path, capsys):
    """A shell's nodal fields (the Scordelis-Lo roof case): a scalar and a vector's component."""
    h5 = str(tmp_path / "roof.h5")
    run(from_dict(case_deck("scordelis_lo_roof")), h5)
    with h5py.File(h5, "r") as f:
        ids = f["model/node_ids"][()]
        a, b = int(ids[3]), int(ids[-1])
        s = f["steps/weight"]
        mises = s["nodal/s_top_mises"][()]
        normal = s["nodal/normal"][()]
    table = str(tmp_path / "n.csv")
    assert main(["plot", h5, "--node", str(a), "--node", str(b), "--field", "s_top_mises",
                 "--csv", table]) == 0
    got = _csv(table)
    np.testing.assert_array_equal(got[f"node {a} s_top_mises"], mises[:, 3])
    np.testing.assert_array_equal(got[f"node {b} s_top_mises"], mises[:, -1])
    assert np.isfinite(mises[:, 3]).all()
    assert main(["plot", h5, "--node", str(a), "--field", "normal", "--component", "2",
                 "--csv", table]) == 0
    np.testing.assert_array_equal(_csv(table)[f"node {a} normal[2]"], normal[:, 3, 2])
    capsys.readouterr()
    assert main(["plot", h5, "--node", str(a), "--field", "s_top_miss"]) == 2
    err = capsys.readouterr().err
    assert "--field s_top_miss: expected one of displacement" in err and "s_top_mises" in err
    assert main(["plot", h5, "--node", str(a), "--field", "normal"]) == 2
    assert "give --component 0, 1 or 2" in capsys.readouterr().err
