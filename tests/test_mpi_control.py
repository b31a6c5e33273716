"""Collective control under owner-computes assembly (issue 31, stage 6; fem.solvers.linear_system).

Under ``-fem_distributed_assembly`` a rank's tangent is right on its own rows only; every
decision the step makes from the tangent must still be the serial one, on every rank, with one
message and the serial exit code. Under ``mpiexec -n 3`` on a beam lattice
(:func:`test_mpi_assembly.lattice_deck`), each compared with the same deck run serially
in this process:

* a NaN in the tangent of one element that only rank 2 evaluates (``tests/mpi_runs.py``'s
  ``FEM_TEST_NAN_ELEMENT`` hook, applied to the serial run too): every rank stops with the serial
  message and exit code (3), none "fails on its own";
* a mechanism (the lattice held in ``ux`` only): the serial message, naming the same node and
  DOF (the diagnosis reads the tangent gathered from its owners), and exit code 2;
* (soak) a linear step too ill-conditioned for double precision (``tests/test_accuracy.py``'s
  cantilever of 10^4 elements): the condition estimate is made across the ranks (it was skipped: the
  wrong tip deflection came out with exit 0), within a factor 2 of the serial one, and every
  rank stops with exit code 3;
* (soak) a Newton failure and cut-backs: the same load factors and iterations as the serial run,
  displacements within 1e-10 of their largest value.

Eigen-solves under the distributed solve (stage 7), soak: the modal step of
``cases/cantilever_modes`` with ``method = "slepc"`` under ``mpiexec -n 3`` (in the same call as
the ill-conditioned step: one MPI start) and ``-n 2``, with the project's Lanczos too:
``K - sigma M`` factored across the ranks (the log says so; SLEPc's EPS is on the ranks' MPIAIJ
matrices, its ``-eps_view`` says), eigenvalues within 1e-10 of the serial ones (relative), mode
shapes (sign-normalized, serial numbering) within 1e-8 of their largest entry (the clamped
beam's eigenvalues are well separated: a simple eigenvalue's vector is determined to round-off
over the gap).

Paths that stay serial (stage 9), soak: under ``mpiexec -n 2 ... -fem_distributed_solve`` each
says so in the log and runs to the end.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import time
from pathlib import Path

import numpy as np
import pytest
from test_mpi import (  # noqa: F401 - skipped without MPI
    fem_lines,
    mpiexec,
    pytestmark,
    ranks_of,
    short_pendulum,
    soak,
)
from test_mpi_assembly import lattice_deck

from fem.io import deck as deck_io
from fem.run import run

#: the element made NaN: a girder whose nodes (model indices) rank 2 of 3 owns both of, away
#: from the supports (checked by the test)
POISONED = "poisoned:53,73"


def control_decks(folder: Path) -> dict[str, Path]:
    """The lattice with a poisoned girder group, held in ``ux`` only, and pushed hard."""
    text = lattice_deck(folder).read_text()
    steps = text.index("[[steps]]")
    static = text[steps:text.index("[[steps]]", steps + 1)]
    made = {
        "nan": text.replace('name = "girders"', 'name = "poisoned"'),
        "mechanism": text.replace('fixed = ["all"]', 'fixed = ["ux"]'),
        "cutback": text[:steps].replace("force = [2.0, 1.0, -0.5]", "force = [20.0, 10.0, -5.0]")
        + static.replace("tolerance = 1e-10", "tolerance = 1e-8\nmax_iterations = 6"),
    }
    out = {}
    for name, body in made.items():
        out[name] = folder / f"{name}.toml"
        out[name].write_text(body)
    return out


CASES = Path(__file__).resolve().parents[1] / "cases"


def modal_decks(folder: Path) -> dict[str, Path]:
    """``cases/cantilever_modes`` with ``method = "slepc"`` and with the default Lanczos."""
    text = (CASES / "cantilever_modes" / "deck.toml").read_text()
    out = {"lanczos": folder / "modes_lanczos.toml", "slepc": folder / "modes_slepc.toml"}
    out["lanczos"].write_text(text)
    out["slepc"].write_text(text.replace('mass = "consistent"',
                                         'mass = "consistent"\nmethod = "slepc"'))
    return out


def check_modes(deck: Path, got: Path, serial: Path) -> None:
    """``got``'s modes equal those of ``deck`` run serially into ``serial`` (module docstring)."""
    import h5py

    run(deck_io.load(str(deck)), str(serial))
    with h5py.File(serial, "r") as a, h5py.File(got, "r") as b:
        x, y = a["modes/modes/eigenvalues"][()], b["modes/modes/eigenvalues"][()]
        assert len(x) == len(y) == 4
        assert np.all(np.abs(x - y) <= 1e-10 * np.abs(x)), (deck.name, x, y)
        x, y = a["modes/modes/shapes"][()], b["modes/modes/shapes"][()]
        for i in range(len(x)):
            assert np.abs(x[i] - y[i]).max() <= 1e-8 * np.abs(x[i]).max(), (deck.name, i)


def serial_failure(deck: Path, out: Path) -> tuple[str, int]:
    """The message and exit code of ``deck`` run serially (it must fail)."""
    with pytest.raises(Exception) as err:
        run(deck_io.load(str(deck)), str(out))
    return str(err.value), err.value.exit_code


def codes_of(stdout: str) -> dict[str, list[int]]:
    """Every rank's exit code per deck (``FEM_TEST_CODES``, tests/mpi_runs.py)."""
    return {Path(d).stem: [int(c) for c in codes.split(",")]
            for d, codes in re.findall(r"^mpi_runs: (\S+) exit codes \[(.*)\]$", stdout, re.M)}


def test_a_nan_on_one_rank_and_a_mechanism_on_3_ranks_end_as_serial(tmp_path):
    """NaN tangent on rank 2's rows only, and a mechanism, on 3 ranks (module docstring). The
    timeout is a hang's bound (a cold numba cache on a loaded machine takes minutes)."""

    from fem.partition import Partition
    from fem.system import System

    decks = control_decks(tmp_path)
    model = deck_io.load(str(decks["nan"])).model
    sysm = System(model)
    part = Partition.build(model, sysm.dofmap, 3)
    g = [i for i, grp in enumerate(model.groups) if grp.name == "poisoned"][0]
    nodes = sorted(int(a) for a in POISONED.split(":")[1].split(","))
    e = int(np.flatnonzero(np.all(np.sort(model.groups[g].conn, axis=1) == nodes, axis=1))[0])
    edofs = sysm.assembler.groups[g].edofs[e]
    assert np.all((edofs >= 0) & (edofs < sysm.n_free))       # free DOFs only
    assert set(part.owner[edofs].tolist()) == {2}              # rank 2 alone evaluates it

    names = ("nan", "mechanism")
    pairs = [(decks[name], tmp_path / f"{name}.h5") for name in names]
    env = {"FEM_TEST_NAN_ELEMENT": POISONED, "FEM_TEST_CODES": "1", "FEM_MPI_AGREE_SECONDS": "5"}
    # the serial run in a fresh process of its own, as each rank is (a test process that ran
    # other decks before may diagnose the mechanism at another of its many free DOFs)
    _, out1, err1 = mpiexec(1, [(d, tmp_path / f"serial_{o.name}") for d, o in pairs],
                            timeout=600, env=env)
    messages = [line[len("fem: error: "):] for line in fem_lines(err1)
                if line.startswith("fem: error:")]
    expected = {name: (message, codes_of(out1)[name][0])
                for name, message in zip(names, messages, strict=True)}
    assert expected["nan"][1] == 3 and "not finite" in expected["nan"][0]
    assert expected["mechanism"][1] == 2 and "mechanism" in expected["mechanism"][0]

    rc, out, err = mpiexec(3, pairs, timeout=600, options=["-fem_distributed_assembly"], env=env)
    errors = [line for line in fem_lines(err) if line.startswith("fem: error:")]
    assert errors == [f"fem: error: {expected[name][0]}" for name in names], err
    assert not any("on its own" in line for line in fem_lines(err)), err
    assert codes_of(out) == {name: [expected[name][1]] * 3 for name in names}, out
    assert rc == 2                       # the last failure's (tests/mpi_runs.py)


@soak
def test_a_condition_estimate_and_modes_on_3_ranks_are_serial(tmp_path):
    """The ill-conditioned linear step and SLEPc's modes under owner-computes assembly on 3
    ranks (module docstring)."""
    from test_accuracy import CANTILEVER

    deck = tmp_path / "illconditioned.toml"
    deck.write_text(CANTILEVER.format(n=10000))
    message, code = serial_failure(deck, tmp_path / "serial_illconditioned.h5")
    assert code == 3 and "too ill-conditioned" in message
    modal = modal_decks(tmp_path)["slepc"]
    pairs = [(deck, tmp_path / "illconditioned.h5"), (modal, tmp_path / "modes.h5")]
    rc, out, err = mpiexec(3, pairs, timeout=600, options=["-fem_distributed_assembly", "-v"],
                           env={"FEM_TEST_CODES": "1"})
    errors = [line for line in fem_lines(err) if line.startswith("fem: error:")]
    assert len(errors) == 1 and "too ill-conditioned" in errors[0], err
    cond = [float(text.split("condition number about ")[1].split()[0])
            for text in (message, errors[0])]
    assert 0.5 < cond[1] / cond[0] < 2, cond
    assert codes_of(out) == {"illconditioned": [3, 3, 3], "modes_slepc": [0, 0, 0]}, out
    assert rc == 3
    assert any("across 3 ranks (MUMPS)" in line for line in fem_lines(err)), err
    check_modes(modal, tmp_path / "modes.h5", tmp_path / "serial_modes.h5")


@soak
def test_modes_on_2_ranks_equal_the_serial_ones(tmp_path):
    """``-fem_distributed_solve`` on 2 ranks: SLEPc and the project's Lanczos (module docstring).
    """
    decks = modal_decks(tmp_path)
    pairs = [(deck, tmp_path / f"{name}.h5") for name, deck in decks.items()]
    rc, out, err = mpiexec(2, pairs, timeout=600,
                           options=["-fem_distributed_solve", "-v", "-modes_eps_eps_view"])
    assert rc == 0, err
    assert "EPS Object: (modes_eps_) 2 MPI processes" in out + err     # SLEPc's, on MPIAIJ
    assert "type: mpiaij" in out + err
    lines = fem_lines(err)
    for method in ("SLEPc's Krylov-Schur on the distributed K and M",
                   "the Lanczos vectors whole on every rank"):
        assert any(f"across 2 ranks (MUMPS); {method}" in line for line in lines), err
    for deck, h5 in pairs:
        check_modes(deck, h5, tmp_path / f"serial_{h5.name}")


@soak
def test_cutbacks_on_3_ranks_follow_the_serial_run(tmp_path):
    """Newton failures and cut-backs (module docstring)."""
    import h5py

    deck = control_decks(tmp_path)["cutback"]
    ref, got = tmp_path / "serial.h5", tmp_path / "mpi.h5"
    run(deck_io.load(str(deck)), str(ref))
    rc, out, err = mpiexec(3, [(deck, got)], timeout=600,
                           options=["-fem_distributed_assembly", "-v"])
    assert rc == 0, err
    assert sum("cutting the increment" in line for line in fem_lines(err)) >= 3, err
    with h5py.File(ref, "r") as a, h5py.File(got, "r") as b:
        inc_a, inc_b = a["steps/push/increments"], b["steps/push/increments"]
        assert np.array_equal(inc_a["load_factor"][()], inc_b["load_factor"][()])
        assert np.array_equal(inc_a["iterations"][()], inc_b["iterations"][()])
        x, y = a["steps/push/displacement"][()], b["steps/push/displacement"][()]
        assert np.abs(x - y).max() <= 1e-10 * np.abs(x).max()


def test_the_owned_rows_of_every_rank_make_the_whole_tangent():
    """In-process, for 3 parts: the entries :meth:`LinearSystem.owned` gives each rank are the
    CSR values of the rows that rank owns (compared with scipy's rows), and put back where
    :meth:`LinearSystem.whole` puts the gathered ones they give the whole tangent bit for bit
    (what a mechanism's diagnosis reads under owner-computes assembly)."""
    from test_mpi_assembly import _models, _perturbed

    from fem.partition import Partition
    from fem.solvers.linear_system import LinearSystem
    from fem.system import System

    model = _models()["lattice"]
    sysm = System(model)
    K = sysm.tangent(_perturbed(sysm))
    p = Partition.build(model, sysm.dofmap, 3)
    S = sysm.assembler.to_scipy(K).tocsr()
    pieces = []
    for rank in range(3):
        linear = LinearSystem(sysm.assembler, sysm.n_free, False, "ownedtest_")
        linear.distributed, linear.rows = True, (p.serial, p.new, p.ranges, rank)
        mine = linear.owned(K)
        rows = p.serial[p.ranges[rank]:p.ranges[rank + 1]]
        assert np.array_equal(mine, S[rows].data)
        pieces.append(mine)
    take, counts = linear._owned_entries()
    assert np.array_equal(counts, [len(x) for x in pieces])
    whole = np.full_like(K, np.nan)
    whole[take] = np.concatenate(pieces)
    assert np.array_equal(whole, K)


@soak
def test_serial_paths_say_so_and_run_under_a_distributed_solve(tmp_path):
    """Stage 9, ``mpiexec -n 2 ... -fem_distributed_solve -v``: a nonlinear planar static step
    (the compiled increments step aside for the general, distributed Newton loop), a dynamic
    step (the banded LU steps aside for the distributed solve), a buckling
    step's eigen-solve, a CMS reduction and a linearize step run to the end (exit 0) and each
    says in the log that it runs serially on every rank; the buckling factors equal the serial
    ones within 1e-10 (relative)."""
    import h5py

    text = (CASES / "cantilever_2d" / "deck.toml").read_text()
    planar = tmp_path / "planar.toml"
    planar.write_text(text.replace('type = "static"\nloads = ["P"]',
                                   'type = "static"\nloads = ["P"]\nnonlinear = true'))
    for name in ("euler_buckling_3d", "slider_crank_superelement", "bushing_3d_body"):
        shutil.copytree(CASES / name, tmp_path / name)
    buckling = tmp_path / "euler_buckling_3d" / "deck.toml"
    decks = [planar, buckling, tmp_path / "slider_crank_superelement" / "rod.toml",
             tmp_path / "bushing_3d_body" / "deck.toml", short_pendulum(tmp_path, 0.2)]
    pairs = [(d, tmp_path / f"{d.parent.name}_{d.stem}.h5") for d in decks]
    rc, out, err = mpiexec(2, pairs, timeout=600, options=["-fem_distributed_solve", "-v"],
                           env={"FEM_TEST_CODES": "1"})
    assert rc == 0, err
    lines = fem_lines(err)
    said = [line for line in lines if "runs on every rank, serially" in line]
    for what in ("the buckling eigen-solve", "the CMS reduction",
                 "the linearized model and its eigen-solve"):
        assert sum(what in line for line in said) == 1, err
    assert any("increments by the general Newton loop (the distributed solve: the compiled "
               "increments are serial)" in line for line in lines), err
    assert any("the banded LU is serial; the distributed solve (MUMPS) takes the step's "
               "systems" in line for line in lines), err
    ref = tmp_path / "serial_buckling.h5"
    run(deck_io.load(str(buckling)), str(ref))
    with h5py.File(ref, "r") as a, h5py.File(pairs[1][1], "r") as b:
        step = next(iter(a["modes"]))
        x, y = a["modes"][step]["eigenvalues"][()], b["modes"][step]["eigenvalues"][()]
        assert len(x) and np.all(np.abs(x - y) <= 1e-10 * np.abs(x)), (x, y)


@soak
def test_buckling_on_2_ranks_equals_serial(tmp_path):
    """``-fem_distributed_solve`` on 2 ranks, ``cases/euler_buckling_3d`` (factors 1, 2, 3):
    with 250 elements a member (3000+ unknowns: SLEPc's EPS on the ranks' MPIAIJ matrices, its
    ``-eps_view`` says) the factors equal the serial ones within 1e-7 (relative: SLEPc's own
    values, converged to its default tolerance 1e-8, measured 3e-9 apart); with 20 and
    ``method = "lanczos"`` (``K_0`` factored across the ranks, Rayleigh quotients) within 1e-10.
    Shapes within 1e-6 and 1e-9 of their largest entry."""
    import h5py

    text = (CASES / "euler_buckling_3d" / "deck.toml").read_text()
    decks = {"slepc": tmp_path / "big.toml", "lanczos": tmp_path / "lanczos.toml"}
    decks["slepc"].write_text(text.replace("divisions = 4", "divisions = 250"))
    decks["lanczos"].write_text(text.replace("divisions = 4", "divisions = 20").replace(
        'type = "buckling"', 'type = "buckling"\nmethod = "lanczos"'))
    pairs = [(deck, tmp_path / f"{name}.h5") for name, deck in decks.items()]
    rc, out, err = mpiexec(2, pairs, timeout=600, options=[
        "-fem_distributed_solve", "-v", "-buckling_eps_eps_view"])
    assert rc == 0, err
    assert "EPS Object: (buckling_eps_) 2 MPI processes" in out + err
    for method in decks:
        assert any(f"the buckling eigen-solve ({method}) on 2 ranks" in line
                   for line in fem_lines(err)), err
    for (name, deck), (_, h5), tol, shape_tol in zip(decks.items(), pairs, (1e-7, 1e-10),
                                                     (1e-6, 1e-9), strict=True):
        ref = tmp_path / f"serial_{name}.h5"
        run(deck_io.load(str(deck)), str(ref))
        with h5py.File(ref, "r") as a, h5py.File(h5, "r") as b:
            step = next(iter(a["modes"]))
            x, y = a["modes"][step]["eigenvalues"][()], b["modes"][step]["eigenvalues"][()]
            assert np.allclose(x, [1, 2, 3], rtol=1e-6), x
            assert np.all(np.abs(x - y) <= tol * np.abs(x)), (name, x, y)
            x, y = a["modes"][step]["shapes"][()], b["modes"][step]["shapes"][()]
            for i in range(len(x)):
                assert np.abs(x[i] - y[i]).max() <= shape_tol * np.abs(x[i]).max(), (name, i)


def _rank_pid(pids: list[int], rank: int) -> int:
    """The pid among ``pids`` of MPI rank ``rank`` (Open MPI's ``OMPI_COMM_WORLD_RANK``)."""
    for pid in pids:
        with open(f"/proc/{pid}/environ", "rb") as fh:
            if f"OMPI_COMM_WORLD_RANK={rank}".encode() in fh.read().split(b"\0"):
                return pid
    raise AssertionError(f"no rank {rank} among {pids}")


@pytest.mark.parametrize("options", [["-fem_distributed_solve"],
                                     pytest.param([], marks=soak)],
                         ids=["distributed", "replicated"])
def test_sigint_to_one_rank_ends_every_rank_at_once_with_130(tmp_path, options):
    """SIGINT sent to rank 1 alone (its pid, not mpiexec's group) while the ranks run Newton
    iterations of a long dynamic step: the ranks find it at a check point they reach together
    (fem.interrupt.together), rank 0 says so once, and every rank exits with 130 at once.
    Before, rank 1 stopped alone while the others waited in a collective (distributed) or ran
    on (replicated), and FEM_MPI_AGREE_SECONDS (here 30 s) later it aborted them all with a
    second message, "failed on its own"; mpiexec's SIGTERM then made rank 0 report a SIGTERM."""
    deck = short_pendulum(tmp_path, duration=1e4)
    out = tmp_path / "out.h5"
    sent = []

    def wait(proc):
        pids = ranks_of(proc, 3)
        end = time.monotonic() + 120
        while not out.exists() and time.monotonic() < end:
            time.sleep(0.05)
        time.sleep(0.5)                  # in the time steps' Newton iterations
        os.kill(_rank_pid(pids, 1), signal.SIGINT)
        sent.append(time.monotonic())

    rc, _, err = mpiexec(3, [(deck, out)], timeout=120, wait=wait, options=options,
                         env={"FEM_MPI_AGREE_SECONDS": "30"})
    took = time.monotonic() - sent[0]
    lines = fem_lines(err)
    assert rc == 130, err
    assert [line for line in lines if "interrupted" in line] == \
        ["fem: interrupted by SIGINT: the run stopped"], err
    assert not any("on its own" in line for line in lines), err
    assert took < 20, took                      # not the 30 s of a rank failing alone
