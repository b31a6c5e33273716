"""Replicated runs under ``mpiexec`` (issue 31, stage 2; :mod:`fem.mpi`).

Every rank runs the deck; rank 0's results file must be the serial run's, dataset by dataset,
bit for bit (:func:`scripts.compare_results.compare_files`, which ignores only when and with what
a file was written). Failures end every rank with one message and the serial exit code, never a
hang: every ``mpiexec`` runs with a timeout. The decks run through ``tests/mpi_runs.py``, several
in one ``mpiexec`` call (one MPI start per call). The larger set, ``-n 3`` runs and the slower
failure cases run with ``FEM_SOAK=1``.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fem import mpi
from fem.io import deck as deck_io
from fem.io import files
from fem.run import run

ROOT = Path(__file__).resolve().parents[1]
CASES = ROOT / "cases"
RUNS = Path(__file__).resolve().parent / "mpi_runs.py"

pytestmark = pytest.mark.skipif(
    shutil.which("mpiexec") is None or importlib.util.find_spec("mpi4py") is None,
    reason="replicated runs need an MPI launcher (mpiexec) and mpi4py")

_spec = importlib.util.spec_from_file_location("compare_results",
                                               ROOT / "scripts" / "compare_results.py")
compare_results = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(compare_results)

soak = pytest.mark.skipif(not os.environ.get("FEM_SOAK"), reason="soak test (FEM_SOAK=1)")


def _default_signals() -> None:
    """In the launched mpiexec: SIGINT and SIGTERM as a shell gives them (a study's workers or
    a run in this process may have changed this process's dispositions)."""
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, signal.SIG_DFL)


def _environ(env=None) -> dict:
    """The environment of a launched run: the test process's own MPI, PETSc and thread settings
    left out (this process may be an MPI singleton already, started by an earlier test)."""
    base = {k: v for k, v in os.environ.items()
            if not k.startswith(("OMPI_", "PMIX_", "PMI_", "OPAL_", "PRTE_", "ORTE_", "HWLOC_"))}
    return {**base, "PYTHONPATH": str(ROOT), "OMPI_ALLOW_RUN_AS_ROOT": "1",
            "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1", "OMPI_MCA_rmaps_base_oversubscribe": "1",
            **(env or {})}


def mpiexec(n: int, pairs: list[tuple[Path, Path]], timeout: float = 300, env=None,
            wait=None, options=(), command=None):
    """``mpiexec -n n python tests/mpi_runs.py [options] deck:out ...``; the finished process.

    ``wait(proc)``: called while it runs (e.g. to send a signal), before the output is read.
    ``command``: run this instead of tests/mpi_runs.py.
    """
    cmd = ["mpiexec", "-n", str(n), sys.executable] + (command or [
        str(RUNS), *options, *[f"{d}:{o}" for d, o in pairs]])
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=_environ(env), start_new_session=True,
                            preexec_fn=_default_signals)
    try:
        if wait is not None:
            wait(proc)
        out, err = proc.communicate(timeout=timeout)
    except BaseException:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise
    return proc.returncode, out, err


def fem_lines(text: str) -> list[str]:
    """fem's own lines of an output (not the launcher's notes)."""
    return [line for line in text.splitlines() if line.startswith("fem:")]


def short_pendulum(folder: Path, duration: float = 0.5) -> Path:
    """Bathe's pendulum (a co-rotational truss, energy-conserving dynamics) for ``duration``."""
    text = (CASES / "bathe_pendulum" / "deck.toml").read_text()
    path = folder / "pendulum.toml"
    path.write_text(text.replace("duration = 12.0", f"duration = {duration}"))
    return path


#: the suite's deck: static steps of beams (a short truss pendulum is added)
FAST = ["cantilever_2d"]
#: quick decks covering the static, buckling, modal, linearize and dynamic steps and the beam,
#: shell, truss and rigid-body families (the pendulum is added)
QUICK = FAST + ["euler_buckling_3d", "pinched_cylinder", "cantilever_modes",
                "two_link_hanging"]
#: more: a stability sweep (plots), a CMS reduction and its superelement, contact, spring-dampers
MORE = ["jeffcott_rotor", "slider_crank_superelement", "sphere_impact_elastic",
        "damped_oscillator", "space_truss"]
#: lighter decks of MORE's kinds for the suite: a CMS reduction of shells and its 3D superelement
#: (2 ranks); the sweep, contact, a truss, spring-dampers (3 ranks)
CMS = ["hanging_plate_superelement"]
LIGHT = ["jeffcott_rotor", "sphere_impact_elastic", "space_truss", "bouncing_bar"]


def case_decks(folder: Path, names: list[str]) -> list[Path]:
    """The decks of cases ``names`` (copied into ``folder`` with their files), prepare decks
    first."""
    import tomllib

    out = []
    for name in names:
        copy = folder / name
        shutil.copytree(CASES / name, copy)
        with open(copy / "reference.toml", "rb") as fh:
            prepare = tomllib.load(fh).get("prepare", [])
        out += [copy / p for p in prepare] + [copy / "deck.toml"]
    return out


def check_replicated(tmp_path: Path, n: int, decks: list[Path]) -> None:
    """Run ``decks`` (all in ``tmp_path/decks``) on ``n`` ranks, then serially, each from its
    own copy of the decks (a prepare deck rewrites the superelement file a deck reads, whose
    hash the results file holds); compare every dataset and attribute."""
    serial, parallel = tmp_path / "serial", tmp_path / "mpi"
    parallel.mkdir()
    shutil.copytree(tmp_path / "decks", serial)
    pairs = [(d, parallel / f"{d.parent.name}_{d.stem}.h5") for d in decks]
    code, out, err = mpiexec(n, pairs)
    assert code == 0, f"stdout:\n{out}\nstderr:\n{err}"
    assert fem_lines(err) == []
    assert out.count("wall time") == len(decks)          # rank 0 alone prints
    prepared = {d.parent for d in decks if d.name != "deck.toml" and d.parent.name != "decks"}
    # the serial runs as each rank ran them: one fresh interpreter, the decks in the same order
    # (a run in this process, after the suite's other tests, can differ in the last bits: a
    # buckling step's eigenvalues did under xdist)
    refs = [(serial / d.relative_to(tmp_path / "decks"), serial / h5.name) for d, h5 in pairs]
    proc = subprocess.run([sys.executable, str(RUNS), *[f"{d}:{o}" for d, o in refs]],
                          capture_output=True, text=True, env=_environ(), timeout=300)
    assert proc.returncode == 0, f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    for deck, h5 in pairs:
        ref = serial / h5.name
        roots = (str(serial), str(tmp_path / "decks"))      # paths inside each copy
        differ = compare_results.compare_files(ref, h5, roots)
        if deck.parent in prepared and deck.name == "deck.toml":
            # the model hash covers the bytes of the superelement file the deck reads, whose
            # creation time and folder differ between the two runs: its contents are compared
            # below
            differ = [d for d in differ if d != "/: attribute model_hash differs"]
        assert differ == [], deck
    made = sorted(p.relative_to(serial) for p in serial.glob("*/**/*.h5"))
    for path in made:                              # files a run wrote beside its deck
        assert compare_results.compare_files(serial / path, tmp_path / "decks" / path,
                                             roots) == [], path
    names = {p.name for p in parallel.iterdir()}
    assert {h5.name for _, h5 in pairs} <= names


def test_threads_are_pinned_under_a_launcher_only():
    """One BLAS/OpenMP/numba thread per rank under mpiexec; a value the user set stays."""
    env = {"OMPI_COMM_WORLD_RANK": "1", "OPENBLAS_NUM_THREADS": "4"}
    added = mpi.pin_threads(env)
    assert env["OPENBLAS_NUM_THREADS"] == "4" and "OPENBLAS_NUM_THREADS" not in added
    assert all(env[name] == "1" for name in mpi.THREAD_VARIABLES if name != "OPENBLAS_NUM_THREADS")
    serial = {"OPENBLAS_NUM_THREADS": "4"}
    assert mpi.pin_threads(serial) == {} and serial == {"OPENBLAS_NUM_THREADS": "4"}


def test_ranks_other_than_0_write_nothing(tmp_path, monkeypatch):
    """A rank > 0 of a replicated run writes no file: results, XDMF, modes (in-process: rank
    1 by monkeypatching fem.mpi.rank); its run says where rank 0 writes them."""
    monkeypatch.setattr(mpi, "rank", lambda: 1)
    assert not files.writes()
    out = tmp_path / "out" / "modes.h5"
    result = run(deck_io.load(str(CASES / "cantilever_modes" / "deck.toml")), str(out))
    assert list(tmp_path.iterdir()) == []
    assert result.h5 == str(out) and len(result.xdmf) == 2
    with files.scratch():                # fem validate's files are each rank's own
        assert files.writes()


# issue 31: CI runs every step type and element family under mpiexec, split between 2 ranks
# (QUICK) and 3 (MORE); each set on the other count too with FEM_SOAK=1
def test_replicated_runs_on_2_ranks_write_the_serial_results(tmp_path):
    decks = case_decks(tmp_path / "decks", QUICK + CMS) + [short_pendulum(tmp_path / "decks",
                                                                           0.2)]
    check_replicated(tmp_path, 2, decks)


def test_replicated_runs_on_3_ranks_write_the_serial_results(tmp_path):
    check_replicated(tmp_path, 3, case_decks(tmp_path / "decks", QUICK + LIGHT))


@soak
def test_more_replicated_runs_on_2_ranks_write_the_serial_results(tmp_path):
    decks = case_decks(tmp_path / "decks", MORE) + [short_pendulum(tmp_path / "decks", 2.0)]
    check_replicated(tmp_path, 2, decks)


@soak
def test_more_replicated_runs_on_3_ranks_write_the_serial_results(tmp_path):
    decks = case_decks(tmp_path / "decks", QUICK) + [short_pendulum(tmp_path / "decks", 2.0)]
    check_replicated(tmp_path, 3, decks)


def failing_decks(folder: Path) -> list[tuple[Path, int, str]]:
    """(deck, serial exit code, words of its message): a deck error, a mechanism, no
    convergence."""
    folder.mkdir(exist_ok=True)
    cantilever = (CASES / "cantilever_2d" / "deck.toml").read_text()
    roll = (CASES / "rolled_up_cantilever_2d" / "deck.toml").read_text()
    made = [("deck.toml", cantilever.replace("dim = 2", "dim = 5"), 2, "model.dim"),
            ("mechanism.toml", cantilever.replace('fixed = ["all"]', 'fixed = ["ux"]'), 2,
             "mechanism"),
            ("newton.toml", roll.replace("increments = 2", "increments = 1\nmax_iterations = 2\n"
                                         "min_increment = 1.0"), 3, "Newton failed")]
    out = []
    for name, text, code, words in made:
        (folder / name).write_text(text)
        out.append((folder / name, code, words))
    return out


@pytest.mark.parametrize("which", [slice(0, 1), pytest.param(slice(None), marks=soak)],
                         ids=["deck error", "all"])
def test_failures_on_3_ranks_end_with_one_message_and_the_serial_code(tmp_path, which):
    cases = failing_decks(tmp_path / "decks")[which]
    for deck, code, words in cases:            # the serial runs, in-process
        with pytest.raises(Exception) as err:
            run(deck_io.load(str(deck)), str(tmp_path / "serial.h5"))
        assert words in str(err.value) and err.value.exit_code == code
    pairs = [(deck, tmp_path / f"{deck.stem}.h5") for deck, _, _ in cases]
    rc, out, err = mpiexec(3, pairs, timeout=240)
    errors = [line for line in fem_lines(err) if line.startswith("fem: error:")]
    assert len(errors) == len(cases), err                  # one message per run, rank 0's
    for line, (_, _, words) in zip(errors, cases):
        assert words in line
    assert rc == cases[-1][1]
    assert "wall time" not in out


def ranks_of(proc, count: int, timeout: float = 60) -> list[int]:
    """The pids of the ranks ``mpiexec`` started (its children)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        kids = []
        for d in os.listdir("/proc"):
            if d.isdigit():
                try:
                    with open(f"/proc/{d}/stat") as fh:
                        fields = fh.read().rsplit(")", 1)[1].split()
                except OSError:
                    continue
                if int(fields[1]) == proc.pid:
                    kids.append(int(d))
        if len(kids) >= count:
            return kids
        time.sleep(0.05)
    raise AssertionError("the ranks did not start")


def interrupt_when_running(out: Path, pids=None, sig=signal.SIGINT, count: int = 3):
    """A ``wait`` for :func:`mpiexec`: once rank 0 has made ``out``, signal every rank."""
    def wait(proc):
        ranks = ranks_of(proc, count)
        end = time.monotonic() + 120
        while not out.exists() and time.monotonic() < end:
            time.sleep(0.05)
        time.sleep(0.5)
        for pid in ranks:
            os.kill(pid, sig)
    return wait


def test_sigint_on_3_ranks_ends_with_one_message_and_code_130(tmp_path):
    """Ctrl-C as a scheduler delivers it (``scancel --signal=INT``, ``kill -INT``): to every
    rank; each stops at its next safe point, rank 0 closes its file and says so once."""
    deck = short_pendulum(tmp_path, duration=1e4)
    out = tmp_path / "out.h5"
    rc, stdout, err = mpiexec(3, [(deck, out)], timeout=120,
                              wait=interrupt_when_running(out))
    lines = fem_lines(err)
    assert rc == 130, err
    assert [line for line in lines if "interrupted" in line] == \
        ["fem: interrupted by SIGINT: the run stopped"], err
    assert compare_results.compare_files(out, out) == []      # a whole, readable file


@soak
def test_sigint_to_mpiexec_stops_every_rank_cleanly(tmp_path):
    """Ctrl-C at a terminal reaches mpiexec, which ends the ranks with SIGTERM (Open MPI): one
    message, a whole results file, and mpiexec's own exit code (Open MPI's is 1)."""
    deck = short_pendulum(tmp_path, duration=1e4)
    out = tmp_path / "out.h5"

    def wait(proc):
        ranks_of(proc, 3)
        end = time.monotonic() + 120
        while not out.exists() and time.monotonic() < end:
            time.sleep(0.05)
        time.sleep(0.5)
        os.killpg(proc.pid, signal.SIGINT)

    rc, _, err = mpiexec(3, [(deck, out)], timeout=120, wait=wait)
    assert rc != 0
    assert len([line for line in fem_lines(err) if "interrupted" in line]) == 1, err
    assert compare_results.compare_files(out, out) == []


@soak
@pytest.mark.parametrize("rank", [0, 1])
def test_a_failure_on_one_rank_ends_every_rank_with_its_code(tmp_path, rank):
    """Rank ``rank`` alone cannot write (tests/mpi_runs.py injects it): after waiting
    FEM_MPI_AGREE_SECONDS for the others, it says why and aborts them all with exit code 4."""
    deck = CASES / "space_truss" / "deck.toml"
    rc, _, err = mpiexec(2, [(deck, tmp_path / "out.h5")], timeout=120,
                         env={"FEM_TEST_FAIL_RANK": str(rank), "FEM_MPI_AGREE_SECONDS": "1"})
    assert rc == 4, err
    lines = fem_lines(err)
    assert sum("injected failure" in line for line in lines) == 1, err
    assert any(f"rank {rank} of 2 failed on its own" in line for line in lines), err


def test_distributed_solve_on_2_ranks_equals_serial_within_1e_12(tmp_path):
    """``-fem_distributed_solve``: one MPIAIJ matrix across the ranks, factored by MUMPS on
    both. A linear 3D cantilever and (soak) a nonlinear one (rolled up, tolerance 1e-12): well
    conditioned, so displacements, rotations and reactions equal the serial run's within 1e-12
    of their largest value (not bit for bit: MUMPS orders its sums by the distribution)."""
    import h5py
    import numpy as np

    decks = [CASES / "cantilever_3d" / "deck.toml"] + (
        [CASES / "rolled_up_cantilever_3d" / "deck.toml"] if os.environ.get("FEM_SOAK") else [])
    pairs = [(d, tmp_path / f"{d.parent.name}.h5") for d in decks]
    code, _, err = mpiexec(2, pairs, options=["-fem_distributed_solve", "-v"])
    assert code == 0, err
    assert sum("distributed solve" in line and "on 2 ranks" in line
               for line in fem_lines(err)) == len(decks), err
    for deck, h5 in pairs:
        ref = tmp_path / f"serial_{h5.name}"
        run(deck_io.load(str(deck)), str(ref))
        with h5py.File(ref, "r") as a, h5py.File(h5, "r") as b:
            for step in a["steps"]:
                for q in ("displacement", "rotation", "reaction"):
                    x, y = a["steps"][step][q][()], b["steps"][step][q][()]
                    assert np.abs(x - y).max() <= 1e-12 * np.abs(x).max(), (deck, step, q)


def test_validate_on_2_ranks_prints_one_table(tmp_path):
    """``fem validate`` under mpiexec: every rank runs the cases on files of its own (rank 0's
    in --keep), rank 0 alone prints the table; every quantity passes as in serial."""
    code, out, err = mpiexec(2, [], command=["-m", "fem.cli", "validate", "space_truss",
                                             "--cases-dir", str(CASES), "--keep",
                                             str(tmp_path)])
    assert code == 0, err
    assert out.count("quantities PASS") == 1 and "FAIL" not in out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["space_truss.h5", "space_truss.xdmf"]


def test_a_restart_under_several_ranks_is_refused_as_bad_input(tmp_path):
    """``--restart`` runs on one process: under ``mpiexec -n 2`` it is a usage mistake (exit
    code 2, one message naming the option), not an internal error."""
    deck = CASES / "cantilever_2d" / "deck.toml"
    rc, out, err = mpiexec(2, [], timeout=120, command=[
        "-c", "import sys; from fem.cli import main; sys.exit(main())", "run", str(deck),
        "--restart", str(tmp_path / "out.h5")])
    errors = [line for line in fem_lines(err) if line.startswith("fem: error:")]
    assert rc == 2, err
    assert len(errors) == 1 and "--restart" in errors[0] and "one process" in errors[0], err
