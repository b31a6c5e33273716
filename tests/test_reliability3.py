"""Repro decks D02-D06, D08, D09 of ``shared/repro/reliability3`` (issue 27), run by the CLI.

Each deck is written inline (the tests do not depend on files outside the repository), with the
repro's name. Before issue 27: D02, D03, D09 ended with an internal error (exit 70, a singular
equilibrium solve), D04 called a sweep value without eigenvalues stable, D05 wrote a file
outside the deck's folder, D06 kept velocities the joints forbid (a welded body with kinetic
energy 0.5 "conserved" while nothing moved), D08 called rigid-body zeros an instability.

Oracles: the hanging symmetric top (a spherical pendulum spun about the vertical: in the frame
turning at Omega its whirl frequencies are ``w+ - Omega`` and ``w- + Omega`` with
``A w^2 -+ C Omega w - m g l = 0``, ``A`` the transverse inertia about the pivot, ``C`` the
axial one; the sleeping top's characteristic equation with the weight reversed), the scaling of
a rotating frame (a mechanism whose equilibrium does not move with the spin has ``p`` growing
as ``Omega``), a rigid column rotating under a dead compressive load (``p^2 = P L / I_c``),
minimal kinetic energy of the projected velocities (a welded body: zero).
"""

import contextlib
import io
import os

import h5py
import numpy as np
import pytest

from fem import cli


def fem_run(folder, text: str, name: str = "deck"):
    """``fem run`` in this process: exit code, standard output and error."""
    deck = folder / f"{name}.toml"
    deck.write_text(text)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(["run", str(deck), "-o", str(folder / f"{name}.h5")])
    return code, out.getvalue(), err.getvalue()


# --- D02: a spherical pendulum swept over its spin ---------------------------------------------
PENDULUM = """
[model]
dim = 3
[nodes]
coordinates = [[0.28678821817552297, 0.0, -0.40957602214449595]]
[[bodies]]
name = "cylinder"
nodes = [1]
mass = 2.0
inertia = [[0.11210080992947322, 0.0, 0.07821374913674711], [0.0, 0.1668666666666667, 0.0],
           [0.07821374913674711, 0.0, 0.05516585673719348]]
[[joints]]
name = "pivot"
type = "spherical"
ground = [1]
points = [[0.0, 0.0, 0.0]]
[gravity]
acceleration = [0.0, 0.0, -9.81]
[[steps]]
name = "precess"
type = "stability_sweep"
parameter = "spin"
values = [0.0, 0.5, 1.0]
modes = MODES
method = "dense"
"""


def test_d02_a_spherical_pendulum_spin_sweep_gives_the_hanging_tops_frequencies(tmp_path):
    """The cylinder (m = 2, l = 0.5, inertias 0.1668667 across and 4e-4 along its axis, given
    tilted) hangs straight down at every spin: Newton steps over the free rotation about the
    vertical (a singular tangent the loads do not drive), which stays a neutral pair; the
    whirl frequencies are the hanging top's (1e-8). Before: exit 70, SingularMatrixError."""
    code, out, err = fem_run(tmp_path, PENDULUM.replace("MODES", "4"))
    assert code == 0, err
    assert "stable over the range" in out and "neutral: 1 rigid-body/neutral pairs" in out
    with h5py.File(tmp_path / "deck.h5") as f:
        g = f["sweep/precess"]
        spins, P, B = g["parameter"][()], g["eigenvalues"][()], g["error_bounds"][()]
        assert list(g["stable"][()]) == [1, 1, 1]
    inertia = np.linalg.eigvalsh([[0.11210080992947322, 0.0, 0.07821374913674711],
                                  [0.0, 0.1668666666666667, 0.0],
                                  [0.07821374913674711, 0.0, 0.05516585673719348]])
    m, l, g0, C = 2.0, 0.5, 9.81, inertia[0]
    A = inertia[1] + m * l * l
    for spin, p, b in zip(spins, P, B, strict=True):
        root = np.sqrt((C * spin) ** 2 + 4 * A * m * g0 * l)
        whirl = sorted([(C * spin + root) / (2 * A) - spin, (root - C * spin) / (2 * A) + spin])
        neutral = np.abs(p) <= b
        # the free rotation's double zero: two lines at rest, one under spin (a real pair
        # +-a is one tracked line, fem.analysis.rotordynamics.track)
        assert np.count_nonzero(neutral) == (2 if spin == 0 else 1)
        elastic = ~neutral & np.isfinite(p)
        assert np.sort(p[elastic].imag) == pytest.approx(whirl, rel=1e-8)


# --- D03: a four-bar swept over its spin ----------------------------------------------------
FOUR_BAR = """
[model]
dim = 2
[nodes]
ids = [1, 2, 3]
coordinates = [[0.0, 0.15], [0.43595169175217915, 0.5448389725072643],
               [0.93595169175217915, 0.3948389725072643]]
[[bodies]]
name = "crank"
nodes = [1]
mass = 0.3
inertia = 0.00225
[[bodies]]
name = "coupler"
nodes = [2]
mass = 1.0
inertia = 0.08333333333333333
[[bodies]]
name = "rocker"
nodes = [3]
mass = 0.8
inertia = 0.042666666666666667
[[joints]]
name = "O1"
type = "revolute"
ground = [1]
points = [[0.0, 0.0]]
[[joints]]
name = "O2"
type = "revolute"
pairs = [[1, 2]]
points = [[0.0, 0.3]]
[[joints]]
name = "O3"
type = "revolute"
pairs = [[2, 3]]
points = [[0.8719033835043583, 0.7896779450145286]]
[[joints]]
name = "O4"
type = "revolute"
ground = [3]
points = [[1.0, 0.0]]
"""
DRIVE = """
[[loads]]
name = "drive"
nodes = [1]
moment = -0.5
"""
SPIN_SWEEP = """
[[steps]]
name = "drive"
type = "stability_sweep"
parameter = "spin"
values = [0.0, 0.5, 1.0]
modes = 2
method = "dense"
"""


def test_d03_a_four_bar_under_a_crank_torque_has_no_equilibrium_and_says_which_motion(tmp_path):
    """The torque drives the crank and nothing holds it: no equilibrium; the error names the
    free motion (node 1 rz, the crank) and the key that linearizes about the state as given.
    Before: exit 70, SingularMatrixError."""
    code, out, err = fem_run(tmp_path, FOUR_BAR + DRIVE + SPIN_SWEEP)
    assert code == 3, out + err
    line = err.strip().splitlines()[0]
    assert "no equilibrium" in line and "node 1 rz is unrestrained" in line
    assert "equilibrium = false" in line


def test_d03_with_equilibrium_false_the_state_as_given_is_linearized_with_a_warning(tmp_path):
    code, out, err = fem_run(tmp_path, FOUR_BAR + DRIVE + SPIN_SWEEP.replace(
        'method = "dense"', 'method = "dense"\nequilibrium = false'))
    assert code == 0, err
    assert "not in equilibrium (unbalanced force" in out and "node 1 rz" in out


def test_d03_an_unloaded_four_bar_spin_sweep_is_neutral_at_rest_and_scales_with_the_spin(
        tmp_path):
    """Without the torque: at rest the crank angle is a neutral pair (a singular tangent the
    loads do not drive); spun about O1 the four-bar settles where the centrifugal forces
    balance, the same configuration at every spin, so its eigenvalues scale with the spin:
    p(1) = 2 p(0.5) (1e-8). Before: exit 70 in the boundary's bisection."""
    code, out, err = fem_run(tmp_path, FOUR_BAR + SPIN_SWEEP.replace("modes = 2",
                                                                     "modes = 1"))
    assert code == 0, err
    with h5py.File(tmp_path / "deck.h5") as f:
        g = f["sweep/drive"]
        P, B, stable = g["eigenvalues"][()], g["error_bounds"][()], g["stable"][()]
    assert stable[0] == 1 and np.all(np.abs(P[0]) <= B[0])       # neutral at rest
    half, one = (np.sort_complex(P[i][np.isfinite(P[i])]) for i in (1, 2))
    assert one == pytest.approx(2 * half, rel=1e-8)


# --- D04: a column swept far past its buckling load ----------------------------------------
COLUMN = """
[model]
dim = 2
[[materials]]
name = "m"
E = 1.0
G = 0.5
[[sections]]
name = "s"
A = 1.0e8
Iz = 1.0
mass_per_length = 1.0
[nodes]
coordinates = [[0.0, 0.0], [1.0, 0.0]]
[[elements]]
name = "beam"
type = "beam"
formulation = "corotational"
material = "m"
section = "s"
connectivity = [[1, 2]]
divisions = 10
rotary_inertia = false
SUPPORTS
[[loads]]
name = "P"
nodes = [2]
force = [-1.0, 0.0]
[[steps]]
name = "sweep"
type = "stability_sweep"
parameter = "load"
values = VALUES
modes = 2
method = "dense"
"""
PINNED = """
[[supports]]
nodes = [1]
fixed = ["ux", "uy"]
[[supports]]
nodes = [2]
fixed = ["uy"]
"""


def test_d04_a_value_without_eigenvalues_is_unknown_never_stable(tmp_path):
    """At a load of 1e100 the solve finds no eigenvalue: that value is unknown (-1 in
    /sweep/<s>/stable), the summary lists it and does not say "stable over the range".
    Before: "stable over the range"."""
    code, out, err = fem_run(tmp_path, COLUMN.replace("SUPPORTS", PINNED)
                             .replace("VALUES", "[0.0, 1.0e100]"))
    assert code == 0, err
    assert "stable over the range" not in out
    assert "unknown at 1 value(s) (no eigenvalue found): 1e+100" in out
    assert "no eigenvalue found at load = 1e+100" in err
    with h5py.File(tmp_path / "deck.h5") as f:
        assert list(f["sweep/sweep/stable"][()]) == [1, -1]
        assert np.isnan(f["sweep/sweep/max_real"][-1])


def test_d04_an_unknown_value_between_stable_and_unstable_ones_is_not_bisected_as_stable(
        tmp_path, monkeypatch):
    """A value whose solve finds nothing (made to, here) just before the buckling load: the
    boundary is not bisected from the stable value across it; it is reported at the first
    unstable value."""
    from fem.analysis import sweep
    from fem.analysis.linear_model import Eigenvalues

    checked = sweep.SweepStep.checked
    values = {}

    def nothing_at_9(self, lm):
        e = checked(self, lm)
        if abs(values["v"] - 9.0) < 1e-12:
            return Eigenvalues(e.values[:0], e.vectors[:, :0], e.backward_errors[:0],
                               e.bounds[:0], e.condition[:0])
        return e

    point = sweep.SweepStep.point

    def remember(self, value, start):
        values["v"] = value
        return point(self, value, start)

    monkeypatch.setattr(sweep.SweepStep, "checked", nothing_at_9)
    monkeypatch.setattr(sweep.SweepStep, "point", remember)
    code, out, err = fem_run(tmp_path, COLUMN.replace("SUPPORTS", PINNED)
                             .replace("VALUES", "[0.0, 9.0, 12.0]"))
    assert code == 0, err
    assert "UNSTABLE from load = 12" in out


def test_d04_the_buckling_load_is_still_found(tmp_path):
    code, out, err = fem_run(tmp_path, COLUMN.replace("SUPPORTS", PINNED)
                             .replace("VALUES", "[0.0, 12.0]"))
    assert code == 0, err
    with h5py.File(tmp_path / "deck.h5") as f:
        assert f["sweep/sweep"].attrs["boundary"] == pytest.approx(9.8697, rel=1e-4)


# --- D09: the column held only along x --------------------------------------------------------
def test_d09_a_column_free_across_its_load_is_neutral_unloaded_and_unstable_compressed(
        tmp_path):
    """Held in x at node 1 only: its rigid translation and rotation are neutral pairs at load
    0 (Newton steps over the free motions, which the axial load does not drive), and under the
    compressive dead load the rigid rotation diverges, p^2 = P L / I_c (I_c = 0.085, the lumped
    masses' moment of inertia about the middle; the bending modes' coupling moves it by
    7e-4). Before: exit 70, SingularMatrixError."""
    code, out, err = fem_run(tmp_path, COLUMN.replace("SUPPORTS", """
[[supports]]
nodes = [1]
fixed = ["ux"]
""").replace("VALUES", "[0.0, 1.0]"))
    assert code == 0, err
    assert "neutral: 2 rigid-body/neutral pairs" in out and "UNSTABLE from load" in out
    with h5py.File(tmp_path / "deck.h5") as f:
        g = f["sweep/sweep"]
        P, B, stable = g["eigenvalues"][()], g["error_bounds"][()], g["stable"][()]
    assert list(stable) == [1, 0]
    # NaN: a tracked line without an eigenvalue at that load (the double zeros come as a real
    # pair +-a, one line, or a conjugate pair, as the LAPACK build rounds them)
    found = np.isfinite(P[0])
    assert np.count_nonzero(found) >= 2 and np.all(np.abs(P[0][found]) <= B[0][found])
    assert np.nanmax(P[1].real) == pytest.approx(np.sqrt(1.0 / 0.085), rel=1e-3)


# --- D05: a superelement file outside the deck's folder -----------------------------------------
REDUCE = """
[model]
dim = 2
[[materials]]
name = "steel"
E = 210000.0
nu = 0.3
[[sections]]
name = "s"
A = 100.0
Iz = 1000.0
mass_per_length = 1.0e-6
[nodes]
coordinates = [[0, 0], [1000, 0]]
[[elements]]
name = "beam"
type = "beam"
material = "steel"
section = "s"
connectivity = [[1, 2]]
divisions = 4
[[supports]]
nodes = 1
fixed = ["all"]
[[steps]]
name = "red"
type = "cms_reduce"
interface = [1, 2]
modes = 2
file = "FILE"
"""


@pytest.mark.parametrize("where", ["parent", "absolute", "symlink"])
def test_d05_a_deck_writes_no_file_outside_its_folder(tmp_path, where):
    """``../x.h5``, an absolute path and a symbolic link inside the folder leading out of it
    are deck errors naming steps[0].file, and nothing is written. Before: exit 0, written."""
    folder = tmp_path / "deck"
    folder.mkdir()
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    name = {"parent": "../x.h5", "absolute": str(outside / "x.h5"), "symlink": "link/x.h5"}
    if where == "symlink":
        os.symlink(outside, folder / "link")
    code, out, err = fem_run(folder, REDUCE.replace("FILE", name[where]))
    assert code == 2, out + err
    assert "steps[0].file" in err and "outside the deck's folder" in err
    assert not (tmp_path / "x.h5").exists() and not (outside / "x.h5").exists()


def test_d05_a_file_in_a_subfolder_of_the_deck_is_written(tmp_path):
    (tmp_path / "parts").mkdir()
    code, out, err = fem_run(tmp_path, REDUCE.replace("FILE", "parts/x.h5"))
    assert code == 0, err
    assert (tmp_path / "parts" / "x.h5").exists()


# --- D06: initial velocities that violate the joints ---------------------------------------------
WELDED = """
[model]
dim = 2
[nodes]
coordinates = [[0.0, 0.0]]
[[bodies]]
name = "block"
nodes = [1]
mass = 1.0
inertia = 0.1
[[joints]]
name = "weld"
type = "fixed"
ground = [1]
[[velocities]]
name = "kick"
nodes = [1]
velocity = [1.0, 0.0]
[[steps]]
name = "go"
type = "dynamic"
duration = 0.1
time_step = 0.01
velocities = ["kick"]
"""


@pytest.mark.parametrize("formulation", ["multipliers", "nullspace"])
def test_d06_a_welded_body_given_a_velocity_stays_at_rest(tmp_path, formulation):
    """Projected onto the weld (the nearest admissible velocities in kinetic energy: zero),
    with a warning. Before: v = 1 and kinetic energy 0.5 in every frame, nothing moving."""
    text = WELDED.replace('type = "dynamic"', f'type = "dynamic"\nformulation = "{formulation}"')
    code, out, err = fem_run(tmp_path, text)
    assert code == 0, err
    assert "initial velocities violate joints 'weld': projected" in err
    assert "kinetic energy 0.5 -> 0" in err
    with h5py.File(tmp_path / "deck.h5") as f:
        g = f["steps/go"]
        assert np.abs(g["velocity"][()]).max() == 0.0
        assert np.abs(g["energy/kinetic"][()]).max() == 0.0


VELOCITIES = """
[[velocities]]
name = "crank"
nodes = [1]
angular_velocity = -6.0
center = [0.0, 0.0]
[[velocities]]
name = "coupler"
nodes = [2]
velocity = [1.8, 0.0]
angular_velocity = 0.3069207705418311
center = [0.0, 0.3]
[[velocities]]
name = "rocker"
nodes = [3]
angular_velocity = -2.089089201761167
center = [1.0, 0.0]
[[steps]]
name = "swing"
type = "dynamic"
duration = 0.01
time_step = 0.001
velocities = ["crank", "coupler", "rocker"]
"""
PIN2 = """
[[joints]]
name = "pin2"
type = "revolute"
ground = [2]
points = [[0.43595169175217915, 0.5448389725072643]]
"""


def test_d06_consistent_four_bar_velocities_are_kept_unchanged(tmp_path):
    """cases/four_bar_fbs1's rates (notes D1): admissible, so the projection leaves them as
    given, bit for bit, and says nothing."""
    code, out, err = fem_run(tmp_path, FOUR_BAR + VELOCITIES)
    assert code == 0, err
    assert "violate" not in out + err
    with h5py.File(tmp_path / "deck.h5") as f:
        v0 = f["steps/swing/velocity"][0]
    assert v0[0].tolist() == [6.0 * 0.15, 0.0, -6.0]      # the crank's field, -6 ez x (0, .15)


def test_d06_a_four_bar_locked_by_a_second_pin_loses_its_velocities(tmp_path):
    """The coupler pinned to the ground too: nothing can move, so the projected velocities and
    the kinetic energy are zero (round-off). Before: 2.03486 "conserved", crank at -6 rad/s."""
    code, out, err = fem_run(tmp_path, FOUR_BAR + PIN2 + VELOCITIES)
    assert code == 0, err
    assert "violate joints 'pin2': projected onto them" in err
    with h5py.File(tmp_path / "deck.h5") as f:
        assert np.abs(f["steps/swing/velocity"][()]).max() < 1e-12
        assert f["steps/swing/energy/kinetic"][()].max() < 1e-20


# --- D08: a free-free beam linearized ---------------------------------------------------------
FREE_BEAM = """
[model]
dim = 2
[[materials]]
name = "m"
E = 1.0
G = 0.5
[[sections]]
name = "s"
A = 1.0e4
Iz = 1.0
mass_per_length = 1.0
[nodes]
coordinates = [[0.0, 0.0], [1.0, 0.0]]
[[elements]]
name = "beam"
type = "beam"
formulation = "corotational"
material = "m"
section = "s"
connectivity = [[1, 2]]
divisions = 10
rotary_inertia = false
[[steps]]
name = "lin"
type = "linearize"
modes = 5
method = "dense"
"""


def test_d08_rigid_body_zeros_are_neutral_not_unstable(tmp_path):
    """The three rigid-body modes' double zeros come out of LAPACK as +-5e-6 (or i 3e-6): each
    is within its error bound of 0 (neutral); the two elastic pairs are the modal step's (1e-8).
    Before: "UNSTABLE: ... p = 5.3e-06"."""
    code, out, err = fem_run(tmp_path, FREE_BEAM + """
[[steps]]
name = "modes"
type = "modal"
modes = 5
""")
    assert code == 0, err
    assert "UNSTABLE" not in out and "unstable" not in err
    assert "neutral: 3 rigid-body/neutral pairs" in out
    with h5py.File(tmp_path / "deck.h5") as f:
        g = f["linear/lin"]
        p, b = g["eigenvalues"][()], g["error_bounds"][()]
        assert g.attrs["verdict"] == "stable" and g.attrs["neutral_pairs"] == 3
        omega = np.sqrt(np.abs(f["modes/modes/eigenvalues"][()]))
    neutral = np.abs(p) <= b
    # each double zero comes out as a real +-eps pair or as a complex pair i eps (one of it
    # kept): three pairs either way, each eigenvalue at round-off
    pairs = np.where(np.abs(p[neutral].imag) > 0, 1.0, 0.5).sum()
    assert pairs == 3 and np.abs(p[neutral]).max() < 1e-5
    assert np.sort(p[~neutral].imag) == pytest.approx(omega[3:], rel=1e-8)
