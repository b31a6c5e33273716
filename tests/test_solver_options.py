"""The deck's ``[solver] petsc_options``: solver settings only, checked against PETSc itself.

Each CLI test writes a one-change deck (a clamped 2D beam of 1000 mm with a tip force of 1 N,
the deck of the reliability repros R03, R04, R05, R28 and R29 inline), runs ``python -m fem.cli
run`` on it and checks the exit code and that stderr is one ``fem: error:`` line naming the option
and its line, without "internal error" or a traceback. Decks with valid options must run and give
the same tip deflection as without options (and as P L^3 / 3 E I); the command line stays free.
"""

import subprocess
import sys

import h5py
import numpy as np
import pytest
from repro_base import BASE

from fem import _petsc, linalg
from fem.errors import DeckError
from fem.io import solver_options

_petsc.init()


TIP = 1.0 * 1000.0**3 / (3 * 210000.0 * 1000.0)      # P L^3 / 3 E I


def with_options(options: str) -> str:
    """The base deck with ``[solver] petsc_options = { options }`` at its end."""
    return BASE + f"\n[solver]\npetsc_options = {{ {options} }}\n"


def run_cli(tmp_path, text, *extra, name="deck"):
    path = tmp_path / f"{name}.toml"
    path.write_text(text)
    return subprocess.run([sys.executable, "-m", "fem.cli", "run", str(path), "-o",
                           str(tmp_path / f"{name}.h5"), *extra],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)


def line_of(text, snippet):
    return next(i + 1 for i, line in enumerate(text.splitlines()) if snippet in line)


def deck_error(tmp_path, text, key, *fragments, extra=()):
    """Run ``text``; check exit 2 and one message naming ``key`` and its line; return it."""
    p = run_cli(tmp_path, text, *extra)
    assert p.returncode == 2, p.stdout + p.stderr
    assert "Traceback" not in p.stderr and "internal error" not in p.stderr, p.stderr
    messages = [x for x in p.stderr.splitlines() if x.strip()]
    assert len(messages) == 1, p.stderr
    line = line_of(text, key)
    prefix = f"fem: error: solver.petsc_options.{key} (line {line}): "
    assert messages[0].startswith(prefix), messages[0]
    for f in fragments:
        assert f in messages[0], f"{f!r} not in {messages[0]!r}"
    return messages[0]


def tip_deflection(path, step="load"):
    with h5py.File(path, "r") as f:
        return f[f"steps/{step}/displacement"][-1][1, 1]


def need(*packages):
    missing = set(packages) - set(linalg.external_packages())
    if missing:
        pytest.skip(f"PETSc was built without {', '.join(sorted(missing))}")


# --- the reliability repros -----------------------------------------------------------------

def test_r03_monitor_is_refused_not_an_internal_error(tmp_path):
    deck_error(tmp_path, with_options("ksp_monitor = true"), "ksp_monitor",
               "not viewers, monitors or logs", "fem run deck.toml -o out.h5 -<step>_ksp_monitor")


def test_r04_deck_cannot_call_python(tmp_path):
    # before: PETSc imported os and called os.abort (the process died with SIGABRT)
    deck_error(tmp_path, with_options('pc_type = "python", pc_python_type = "os.abort"'),
               "pc_type", "may not run code", "got pc_type = 'python'")


def test_r05_deck_cannot_write_files(tmp_path):
    msg = deck_error(tmp_path, with_options('ksp_view = "ascii:victim.txt"'), "ksp_view",
                     "may not write files", "-<step>_ksp_view ascii:victim.txt")
    assert not (tmp_path / "victim.txt").exists(), msg
    assert list(tmp_path.iterdir()) == [tmp_path / "deck.toml"]     # no results file either


def test_r28_unknown_factor_package_is_not_a_mechanism(tmp_path):
    need("mumps")
    msg = deck_error(tmp_path, with_options('pc_factor_mat_solver_type = "mumsp"'),
                     "pc_factor_mat_solver_type", "PETSc has no solver package 'mumsp'",
                     "(did you mean 'mumps'?)", "petsc")
    assert "mechanism" not in msg
    for package in linalg.external_packages():
        if package != "hypre":                 # a preconditioner, not a factorization
            assert package in msg


def test_r29_unknown_ksp_type(tmp_path):
    deck_error(tmp_path, with_options('ksp_type = "gmers"'), "ksp_type",
               "PETSc has no KSP type 'gmers' (did you mean 'gmres'?)")


def test_misspelt_name_is_reported_with_did_you_mean(tmp_path):
    deck_error(tmp_path, with_options('ksp_tpye = "gmres"'), "ksp_tpye", "never read",
               "(did you mean 'ksp_type'?)")


def test_option_of_another_solver_is_reported_as_unused(tmp_path):
    # the default KSP is preonly, which has no tolerance: -options_left would list ksp_rtol
    deck_error(tmp_path, with_options("ksp_rtol = 1e-12"), "ksp_rtol", "KSP preonly",
               "e.g. ksp_type = gmres")


def test_bad_value_is_attributed_to_its_option(tmp_path):
    need("superlu")
    # PETSc reads mat_superlu_equil only once the package option after it is in force
    text = with_options('mat_superlu_equil = "maybe", pc_factor_mat_solver_type = "superlu"')
    deck_error(tmp_path, text, "mat_superlu_equil", "expected true or false, got 'maybe'")


def test_options_in_their_own_table_are_located(tmp_path):
    text = BASE + '\n[solver.petsc_options]\nksp_type = "gmres"\npc_type = "ilu"\nksp_rtol = "x"\n'
    deck_error(tmp_path, text, "ksp_rtol", "expected a number, got 'x'")


# --- valid options ----------------------------------------------------------------------------

@pytest.mark.parametrize("options, packages", [
    ('ksp_type = "gmres", pc_type = "lu"', ()),
    ("mat_mumps_icntl_14 = 50", ("mumps",)),
    ('ksp_type = "gmres", ksp_rtol = 1e-12, ksp_initial_guess_nonzero = true', ()),
], ids=["gmres-lu", "mumps-icntl14", "gmres-rtol-bool"])
def test_valid_options_run_and_give_the_same_numbers(tmp_path, options, packages):
    need(*packages)
    p = run_cli(tmp_path, with_options(options), "-load_ksp_view")
    assert p.returncode == 0, p.stderr
    assert p.stderr == ""
    assert "fem_dry" not in p.stdout            # the check's dry run printed nothing
    ref = run_cli(tmp_path, BASE, name="ref")
    assert ref.returncode == 0, ref.stderr
    u, u_ref = tip_deflection(tmp_path / "deck.h5"), tip_deflection(tmp_path / "ref.h5")
    assert u == pytest.approx(u_ref, rel=1e-9)
    assert u == pytest.approx(-TIP, rel=1e-9)
    if "gmres" in options:                     # the deck's options reached the step's KSP
        assert "type: gmres" in p.stdout


def test_command_line_options_reach_the_step(tmp_path):
    p = run_cli(tmp_path, BASE, "-load_ksp_view")
    assert p.returncode == 0, p.stderr
    assert "KSP Object: (load_)" in p.stdout
    # what a deck may not do, the command line may: write the view to a file
    p = run_cli(tmp_path, BASE, "-load_ksp_view", "ascii:view.txt", name="file")
    assert p.returncode == 0, p.stderr
    assert "KSP Object: (load_)" in (tmp_path / "view.txt").read_text()


def test_command_line_solver_counts_when_checking_deck_names(tmp_path):
    text = with_options("ksp_gmres_restart = 10")
    deck_error(tmp_path, text, "ksp_gmres_restart", "KSP preonly")      # unused with preonly
    p = run_cli(tmp_path, text, "-load_ksp_type", "gmres", "-load_ksp_view")
    assert p.returncode == 0, p.stderr
    assert "restart=10" in p.stdout


def test_eigen_solver_options_reach_the_buckling_eigen_solver(tmp_path):
    pytest.importorskip("slepc4py")
    from fem.solvers.eigen import DENSE_LIMIT

    n = DENSE_LIMIT // 3 + 10                  # enough unknowns for SLEPc, not LAPACK
    text = (BASE.replace("connectivity = [[1, 2]]", f"connectivity = [[1, 2]]\ndivisions = {n}")
            .replace("force = [0, -1.0]", "force = [-1.0, 0]")
            .replace('type = "static"', 'type = "buckling"\nmodes = 1\ninterior_modes = false'))
    p = run_cli(tmp_path, text + "\n[solver]\npetsc_options = { eps_tol = 1e-11 }\n",
                "-load_eps_eps_view")
    assert p.returncode == 0, p.stderr
    assert "tolerance: 1e-11" in p.stdout
    euler = np.pi**2 * 210000.0 * 1000.0 / (4 * 1000.0**2)
    with h5py.File(tmp_path / "deck.h5", "r") as f:
        factor = float(f["modes/load/eigenvalues"][0])
    assert factor == pytest.approx(euler, rel=1e-4)


# --- the check itself, in this process ------------------------------------------------------

@pytest.mark.parametrize("key, value", [
    ("ksp_view", True), ("ksp_monitor_short", True), ("ksp_converged_reason", True),
    ("pc_type", "python"), ("ksp_type", "python"), ("pc_python_type", "os.abort"),
    ("st_type", "shell"), ("pc_type", "shell"), ("mat_mumps_icntl_4", 3),
    ("mat_mumps_icntl_1", 7), ("mat_mumps_ooc_tmpdir", "scratch"), ("eps_view_values", True),
    ("eps_error_relative", True), ("log_view", True), ("options_file", "x"), ("help", True),
    ("malloc_dump", True), ("pc_factor_mat_solver_type", "a/b"), ("ksp_type", "ascii:x"),
    ("ksp_type", "..\\x"), ("ksp_type", "two words"), ("ksp_type", ""),
])
def test_refused_without_petsc(key, value):
    assert solver_options.refusal(key, value) is not None


@pytest.mark.parametrize("key, value", [
    ("ksp_type", "gmres"), ("-ksp_rtol", 1e-12), ("ksp_initial_guess_nonzero", True),
    ("mat_mumps_icntl_14", 50), ("mat_mumps_icntl_24", 1), ("eps_tol", 1e-9),
    ("st_pc_factor_mat_solver_type", "superlu"), ("ksp_error_if_not_converged", True),
    ("mat_superlu_equil", False),
])
def test_solver_settings_pass_without_petsc(key, value):
    assert solver_options.refusal(key, value) is None


def test_check_leaves_the_options_database_as_it_was():
    db = _petsc.PETSc().Options()
    before = db.getAll()
    solver_options.check({"ksp_type": "gmres", "ksp_gmres_restart": 20})
    with pytest.raises(DeckError, match="ksp_type"):
        solver_options.check({"ksp_type": "gmers"})
    with pytest.raises(DeckError, match="did you mean 'ksp_gmres_restart'"):
        solver_options.check({"ksp_type": "gmres", "ksp_gmres_restrat": 20})
    assert db.getAll() == before
    assert not any(p.startswith("fem_dry") for p in linalg.objects._PUSHED)


def test_eigen_solver_names_are_checked_by_slepc():
    pytest.importorskip("slepc4py")
    with pytest.raises(DeckError, match="did you mean 'eps_tol'"):
        solver_options.check({"eps_tpl": 1e-9})
    with pytest.raises(DeckError, match="PETSc has no EPS type 'lanczso'"):
        solver_options.check({"eps_type": "lanczso"})
    solver_options.check({"eps_tol": 1e-9, "st_ksp_type": "preonly"})
