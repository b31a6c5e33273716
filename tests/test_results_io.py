"""The results file (HDF5) and its XDMF view round-trip; output survives a failed step.

A co-rotational cantilever (4 beam elements) is bent by a tip load in a nonlinear load-controlled
step of 4 increments ("bend"), then pulled sideways while the tip load is held ("pull", 2
increments). The HDF5 datasets are checked against the deck, against each other, against
equilibrium and against the element outputs recomputed from the stored state; the XDMF file is read
back with meshio (virtual datasets onto the step's own arrays) and compared frame by frame with the
HDF5 arrays.
"""

import math
import re
import shutil
import subprocess
import sys

import h5py
import numpy as np
import pytest
from helpers import line_beam, solve
from results_checks import read_xdmf

import fem

DECK = """\
[model]
dim = 2
title = "co-rotational cantilever"
units = "N, m"

[[materials]]
name = "steel"
E = 1000.0
nu = 0.3

[[sections]]
name = "s"
A = 1.0
Iz = 0.1

[nodes]
coordinates = [[0, 0], [1, 0]]

[sets]
clamp = [1]
tip = [2]

[[elements]]
name = "beam"
type = "beam"
material = "steel"
section = "s"
connectivity = [[1, 2]]
divisions = 4
formulation = "corotational"

[[supports]]
nodes = "clamp"
fixed = ["all"]

[[loads]]
name = "P"
nodes = "tip"
force = [0, -100.0]

[[loads]]
name = "H"
nodes = "tip"
force = [20.0, 0]

[[steps]]
name = "bend"
type = "static"
nonlinear = true
increments = 4
loads = ["P"]

[[steps]]
name = "pull"
type = "static"
nonlinear = true
increments = 2
loads = ["H"]              # P, applied by "bend", stays on
"""

# applied nodal forces at the tip in each step, as a function of the step's load factor
APPLIED = {"bend": lambda lam: np.array([0.0, -100.0 * lam]),
           "pull": lambda lam: np.array([20.0 * lam, -100.0])}
TIMES = {"bend": [0.25, 0.5, 0.75, 1.0], "pull": [0.5, 1.0]}
CLAMP, TIP = 0, 1          # node indices (ids 1 and 2; the subdivision adds ids 3, 4, 5)


def run_cli(folder, text, *extra, name="deck"):
    (folder / f"{name}.toml").write_text(text)
    return subprocess.run([sys.executable, "-m", "fem.cli", "run", f"{name}.toml", "-o",
                           f"{name}.h5", *extra], cwd=folder, capture_output=True, text=True,
                          timeout=300)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("results")
    p = run_cli(folder, DECK)
    assert p.returncode == 0, p.stderr
    return folder


@pytest.fixture(scope="module")
def h5(run):
    with h5py.File(run / "deck.h5", "r") as f:
        yield f


def test_model_group(h5):
    X = h5["model/nodes"][:]
    np.testing.assert_array_equal(h5["model/node_ids"][:], [1, 2, 3, 4, 5])
    np.testing.assert_allclose(X, [[0, 0, 0], [1, 0, 0], [0.25, 0, 0], [0.5, 0, 0],
                                   [0.75, 0, 0]], atol=1e-15)
    sets = h5["model/sets"]
    assert sorted(sets) == ["beam", "clamp", "tip"]
    np.testing.assert_array_equal(sets["clamp"][:], [1])
    np.testing.assert_array_equal(sets["tip"][:], [2])
    np.testing.assert_array_equal(np.sort(sets["beam"][:]), [1, 2, 3, 4, 5])
    g = h5["model/groups/beam"]
    assert g.attrs["type"] == "beam" and g.attrs["formulation"] == "corotational"
    conn = g["connectivity"][:]
    np.testing.assert_array_equal(conn, [[0, 2], [2, 3], [3, 4], [4, 1]])
    np.testing.assert_allclose(g["length"][:], 0.25)
    np.testing.assert_allclose(g["E"][:], 1000.0)
    np.testing.assert_allclose(g["Iz"][:], 0.1)
    np.testing.assert_array_equal(h5["model/cells"][:], conn)
    assert h5["model"].attrs["dim"] == 2
    assert list(h5["model"].attrs["dof_names"]) == ["ux", "uy", "rz"]


def test_file_attributes(h5, run):
    a = h5.attrs
    assert a["fem_version"] == fem.__version__
    assert a["deck"] == (run / "deck.toml").read_text() == DECK
    assert a["deck_path"] == str((run / "deck.toml").resolve())
    assert a["title"] == "co-rotational cantilever" and a["units"] == "N, m"
    for lib in ("fem", "python", "numpy", "petsc", "petsc4py", "h5py", "hdf5", "meshio"):
        assert a[f"version_{lib}"], lib
    assert a["version_fem"] == fem.__version__


@pytest.mark.parametrize("step", ["bend", "pull"])
def test_step_time_and_statistics(h5, step):
    s = h5[f"steps/{step}"]
    assert s.attrs["type"] == "static"
    assert s.attrs["index"] == ["bend", "pull"].index(step)
    assert s.attrs["time_offset"] == (0.0 if step == "bend" else 1.0)
    assert list(s.attrs["dof_names"]) == ["ux", "uy", "rz"]
    np.testing.assert_allclose(s["time"][:], TIMES[step], rtol=1e-14)
    np.testing.assert_allclose(s["increments/load_factor"][:], TIMES[step], rtol=1e-14)
    assert np.all(s["increments/iterations"][:] >= 1)
    assert np.all(s["increments/residual"][:] >= 0)


@pytest.mark.parametrize("step", ["bend", "pull"])
def test_displacements_and_rotations_agree(h5, step):
    s = h5[f"steps/{step}"]
    T, n = len(TIMES[step]), 5
    u, q, rv = s["displacement"][:], s["rotation"][:], s["rotation_vector"][:]
    assert u.shape == (T, n, 3) and q.shape == (T, n, 4) and rv.shape == (T, n, 3)
    assert np.all(u[:, :, 2] == 0) and np.all(rv[:, :, :2] == 0)
    theta = rv[:, :, 2]
    np.testing.assert_allclose(q[:, :, 0], np.cos(theta / 2), atol=1e-15)
    np.testing.assert_allclose(q[:, :, 3], np.sin(theta / 2), atol=1e-15)
    assert np.all(q[:, :, 1:3] == 0)
    np.testing.assert_allclose(np.linalg.norm(q, axis=2), 1.0, atol=1e-15)
    assert np.all(u[:, CLAMP] == 0) and np.all(theta[:, CLAMP] == 0)
    # the tip moves down and turns clockwise; large enough to be nonlinear
    assert np.all(u[:, TIP, 1] < 0) and np.all(theta[:, TIP] < 0)
    if step == "bend":
        assert np.all(np.diff(-u[:, TIP, 1]) > 0)
        assert u[-1, TIP, 0] < -0.02              # the tip shortens: a nonlinear effect


@pytest.mark.parametrize("step", ["bend", "pull"])
def test_reactions_balance_the_applied_loads(h5, step):
    s = h5[f"steps/{step}"]
    X = h5["model/nodes"][:]
    R = s["reaction"][:]
    assert R.shape == (len(TIMES[step]), 5, 3)
    assert np.all(R[:, 1:] == 0)                  # only the clamp is supported
    for k, lam in enumerate(s["time"][:]):
        F = APPLIED[step](lam)
        np.testing.assert_allclose(R[k, CLAMP, :2], -F, rtol=0, atol=1e-6)
        # moments about the clamp, in the deformed configuration
        x_tip = X[TIP, :2] + s["displacement"][k, TIP, :2]
        np.testing.assert_allclose(R[k, CLAMP, 2], -(x_tip[0] * F[1] - x_tip[1] * F[0]),
                                   rtol=0, atol=1e-6)


@pytest.mark.parametrize("step", ["bend", "pull"])
def test_section_forces(h5, run, step):
    from fem.io.deck import load
    from fem.state import State

    s = h5[f"steps/{step}"]
    T = len(TIMES[step])
    forces = s["elements/beam"]
    assert sorted(forces) == ["M1", "M2", "N", "V"]
    for d in forces.values():
        assert d.shape == (T, 4)
    # the stored section forces are the element outputs of the stored state
    model = load(str(run / "deck.toml")).model
    group = model.group("beam")
    for k in range(T):
        state = State.reference(2, 5)
        state.u[:] = s["displacement"][k]
        state.rot[:] = s["rotation_vector"][k, :, 2]
        for q, v in group.outputs(state).items():
            np.testing.assert_allclose(forces[q][k], v, rtol=1e-12, atol=1e-12)
    # and they are in equilibrium with the nodes: the clamp moment is the reaction moment, the
    # free tip carries no moment, and V = (M1 - M2) / l over the current chord
    R = s["reaction"][:]
    np.testing.assert_allclose(-forces["M1"][:, 0], R[:, CLAMP, 2], rtol=1e-9)
    conn = h5["model/groups/beam/connectivity"][:]
    tip_element = int(np.flatnonzero(conn[:, 1] == TIP)[0])
    np.testing.assert_allclose(forces["M2"][:, tip_element], 0.0, atol=1e-9)
    x = h5["model/nodes"][:][None, :, :2] + s["displacement"][:, :, :2]
    length = np.linalg.norm(x[:, conn[:, 1]] - x[:, conn[:, 0]], axis=-1)
    np.testing.assert_allclose(forces["V"][:], (forces["M1"][:] - forces["M2"][:]) / length,
                               rtol=1e-12)


def test_time_datasets_are_chunked_and_extendable(h5, run, tmp_path):
    names = []
    h5["steps"].visititems(lambda name, obj: names.append(name)     # the states are not
                           if isinstance(obj, h5py.Dataset) and "/state/" not in name
                           and "/checkpoints/" not in name else None)
    assert "bend/displacement" in names and "pull/elements/beam/N" in names
    for name in names:
        d = h5["steps"][name]
        assert d.chunks is not None, name
        assert d.maxshape[0] is None and d.maxshape[1:] == d.shape[1:], name
    copy = tmp_path / "copy.h5"
    shutil.copy(run / "deck.h5", copy)
    with h5py.File(copy, "a") as f:
        d = f["steps/bend/displacement"]
        d.resize(d.shape[0] + 1, axis=0)
        d[-1] = 1.0
    with h5py.File(copy, "r") as f:
        assert f["steps/bend/displacement"].shape[0] == 5
        np.testing.assert_array_equal(f["steps/bend/displacement"][:4],
                                      h5["steps/bend/displacement"][:])


def check_xdmf_against_h5(xdmf, h5path, steps):
    """Points, line cells, and every frame's point and cell data equal the HDF5 arrays."""
    points, cells, frames = read_xdmf(xdmf)
    with h5py.File(h5path, "r") as f:
        np.testing.assert_array_equal(points, f["model/nodes"][:])
        np.testing.assert_array_equal(cells, f["model/cells"][:])
        expected = [(s, k) for s in steps for k in range(len(f[f"steps/{s}/time"]))]
        assert len(frames) == len(expected)
        times = []
        for (t, pd, cd), (s, k) in zip(frames, expected, strict=True):
            g = f[f"steps/{s}"]
            assert t == pytest.approx(g.attrs["time_offset"] + g["time"][k], rel=1e-14)
            times.append(t)
            np.testing.assert_array_equal(pd["displacement"], g["displacement"][k])
            np.testing.assert_array_equal(pd["rotation"], g["rotation_vector"][k])
            reaction = np.zeros((len(points), 3))
            reaction[:, :2] = g["reaction"][k, :, :2]
            np.testing.assert_array_equal(pd["reaction"], reaction)
            assert sorted(cd) == sorted([*g["elements/beam"], "part", "kind"])
            np.testing.assert_array_equal(cd.pop("kind"), 0)        # element cells
            np.testing.assert_array_equal(cd.pop("part"), 0)        # of group 0
            for q, values in cd.items():
                np.testing.assert_array_equal(values, g[f"elements/beam/{q}"][k])
        assert np.all(np.diff(times) > 0)
    return times


def test_xdmf_time_series(run, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)                    # the XDMF names the HDF5 file relative to itself
    times = check_xdmf_against_h5(run / "deck.xdmf", run / "deck.h5", ["bend", "pull"])
    np.testing.assert_allclose(times, [0.25, 0.5, 0.75, 1.0, 1.5, 2.0], rtol=1e-14)


def test_output_of_completed_steps_survives_a_failed_step(tmp_path):
    # the second step cannot converge: one Newton iteration allowed for a huge load
    text = DECK.replace("increments = 2\n", "increments = 2\nmax_iterations = 1\n").replace(
        "force = [20.0, 0]", "force = [0, -1.0e6]")
    assert text.count("max_iterations = 1") == 1 and "-1.0e6" in text
    p = run_cli(tmp_path, text, name="fail")
    assert p.returncode == 3, p.stdout + p.stderr
    assert "Traceback" not in p.stderr
    first = p.stderr.splitlines()[0]
    assert first.startswith("fem: error: ")
    assert "step 'pull'" in first
    m = re.search(r"load factor (\S+?)[,)]", first)
    assert m and 0 < float(m.group(1)) <= 0.5, first
    assert str((tmp_path / "fail.h5").resolve()) in p.stderr
    with h5py.File(tmp_path / "fail.h5", "r") as f:
        np.testing.assert_allclose(f["steps/bend/time"][:], TIMES["bend"], rtol=1e-14)
        assert f["steps/bend/displacement"].shape == (4, 5, 3)
        assert "pull" not in f["steps"] or "time" not in f["steps/pull"]
        assert f.attrs["deck"] == text
    times = check_xdmf_against_h5(tmp_path / "fail.xdmf", tmp_path / "fail.h5", ["bend"])
    np.testing.assert_allclose(times, TIMES["bend"], rtol=1e-14)


def ksp_views(stdout):
    """prefix -> list of factorization packages, one per ``-<prefix>ksp_view`` print."""
    out, prefix = {}, None
    for line in stdout.splitlines():
        m = re.match(r"KSP Object: \((\w+)\)", line)
        if m:
            prefix = m.group(1)
        m = re.search(r"package used to perform factorization: (\w+)", line)
        if m and prefix:
            out.setdefault(prefix, []).append(m.group(1))
            prefix = None
    return out


def need(*packages):
    from fem import linalg

    missing = set(packages) - set(linalg.external_packages())
    if missing:
        pytest.skip(f"PETSc was built without {', '.join(sorted(missing))}")


def test_command_line_petsc_options_reach_the_step_ksp(tmp_path):
    need("mumps")
    p = run_cli(tmp_path, DECK, "-bend_ksp_view")
    assert p.returncode == 0, p.stderr
    views = ksp_views(p.stdout)
    assert set(views) == {"bend_"}                 # the option has the step's prefix only
    assert set(views["bend_"]) == {"petsc"}        # a small model: PETSc's LU (lu_package)


def test_command_line_petsc_options_win_over_the_deck(tmp_path):
    need("mumps", "superlu")
    text = DECK.replace("[[steps]]", "[solver]\npetsc_options = { pc_factor_mat_solver_type = "
                        "\"superlu\" }\n\n[[steps]]", 1)
    p = run_cli(tmp_path, text, "-bend_ksp_view", "-pull_ksp_view",
                "-bend_pc_factor_mat_solver_type", "mumps")
    assert p.returncode == 0, p.stderr
    views = ksp_views(p.stdout)
    assert set(views["bend_"]) == {"mumps"}        # the command line wins ...
    assert set(views["pull_"]) == {"superlu"}      # ... where it says something
    with h5py.File(tmp_path / "deck.h5", "r") as f:
        u = f["steps/pull/displacement"][-1]
    ref = run_cli(tmp_path, DECK, name="ref")
    assert ref.returncode == 0
    with h5py.File(tmp_path / "ref.h5", "r") as f:
        np.testing.assert_allclose(u, f["steps/pull/displacement"][-1], rtol=1e-9, atol=1e-12)


def test_buckling_modes_in_hdf5_and_xdmf(tmp_path):
    """Factors, unit-peak nodal shapes and the interior-modes flag; ParaView's file reads back."""
    d = line_beam(3, 4, Iy=2.0, Iz=1.0)
    d["supports"] = [{"nodes": 1, "fixed": ["all"]}]
    d["loads"] = [{"name": "P", "nodes": 2, "force": [-1.0, 0, 0]}]
    d["steps"] = [{"name": "b", "type": "buckling", "modes": 2}]
    h5path = tmp_path / "out.h5"
    step = solve(d, str(h5path))[3][-1]
    with h5py.File(h5path, "r") as f:
        g = f["modes/b"]
        assert g.attrs["interior_modes"] == 1 and g.attrs["type"] == "buckling"
        np.testing.assert_array_equal(g["eigenvalues"][:], step.factors)
        assert g["eigenvalues"][0] == pytest.approx(math.pi**2 / 4, rel=1e-6)   # EI_min = 1
        shapes = g["shapes"][:]
    assert shapes.shape == (2, 5, 6)
    np.testing.assert_allclose(np.abs(shapes).max(axis=(1, 2)), 1.0, rtol=1e-14)
    assert np.all(shapes[:, 0] == 0.0)                      # the clamp
    _, _, frames = read_xdmf(step.xdmf)
    assert [t for t, _, _ in frames] == [1.0, 2.0]
    for (_, pd, _), shape in zip(frames, shapes, strict=True):
        np.testing.assert_array_equal(pd["displacement"], shape[:, :3])
        np.testing.assert_array_equal(pd["rotation"], shape[:, 3:])
