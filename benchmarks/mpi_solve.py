"""The distributed solve (issue 31, stage 3): MUMPS factorization on 1 vs 2 MPI ranks.

The issue's go/no-go figure: does MUMPS itself speed up when the ranks of a replicated run
factor one MPI matrix (``-fem_distributed_solve``, :mod:`fem.solvers.linear_system`)? The
cubic lattice of 3D co-rotational beams of ``newton_share`` (``common.space_frame``) is
assembled at its reference state, and a step's :class:`~fem.solvers.linear_system.LinearSystem`
is filled with its tangent and solved, as Newton does (``fill``, then ``solve``: the checked
solve with its refinement). Timed, best of ``REPEATS`` refills: the numerical factorization
(``KSPSetUp`` after a refill) and the solve with refinement. One rank is the serial path (a
COMM_SELF matrix); two ranks run under ``mpiexec -n 2`` with ``-fem_distributed_solve``, each
rank assembling the whole model (replicated) and setting its block of rows. Both are measured
in the same run, in child processes; the ratio is 1 rank's time over 2 ranks'. MUMPS's memory
(``INFO(16)``, MB, during the factorization) is given per rank.

**Owner-computes assembly** (issue 31, stage 5; ``-fem_distributed_assembly``,
:mod:`fem.owner_computes`): the same lattice's tangent and internal force at a perturbed state
(``System.evaluate``, what each Newton iteration costs besides the solve) and the refill of the
step's matrix, best of ``REPEATS``, on 1 rank, on 2 ranks each assembling the whole model
(``-fem_distributed_solve``) and on 2 ranks by owners: the time per rank, the elements each rank
evaluates, the bytes of its element matrices and its peak resident memory (``ru_maxrss``: the
model, state and serial pattern are still whole on every rank). On a shared machine the ranks'
timings depend on the load more than on the work, so the work of each rank's part is also timed
in one process, one part after the other (:func:`split_work`, no MPI).

``python -m benchmarks.mpi_solve [n ...]`` (lattice edges, default 15 and 20);
``python -m benchmarks.mpi_solve --assembly [n ...]``: the assembly rows alone.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time

SIZES = (15, 20)       # lattice edges: 18 900 and 45 600 unknowns
REPEATS = 3


def worker(n: int) -> None:
    """One measurement in this process (rank 0 prints a JSON line)."""
    import numpy as np

    from benchmarks.common import space_frame
    from fem import _petsc, mpi
    from fem.solvers.linear_system import LinearSystem
    from fem.system import System

    model, _ = space_frame(n)
    sysm = System(model)
    state = sysm.reference_state()
    K = sysm.tangent(state)
    linear = LinearSystem(sysm.assembler, sysm.n_free, False, "bench_")
    linear.open()
    rhs = np.random.default_rng(1).standard_normal(sysm.n_free)
    factor, solve = [], []
    for _ in range(REPEATS):
        linear.fill(K)
        t = time.perf_counter()
        linear.ksp.getPC().setUp()
        factor.append(time.perf_counter() - t)
        t = time.perf_counter()
        x, report = linear.solve(rhs)
        solve.append(time.perf_counter() - t)
    F = linear.ksp.getPC().getFactorMatrix()
    memory = _petsc.PETSc().COMM_WORLD.tompi4py().gather(F.getMumpsInfo(16), root=0)
    if mpi.rank() == 0:
        print(json.dumps({"n": sysm.n_free, "ranks": mpi.size(),
                          "distributed": linear.distributed, "factor": min(factor),
                          "solve": min(solve), "backward_error": report.backward_error,
                          "memory": memory, "x": float(np.abs(x).max())}))
    linear.close()


def assembly_worker(n: int) -> None:
    """One assembly measurement in this process (module docstring; rank 0 prints JSON)."""
    import resource

    import numpy as np

    from benchmarks.common import space_frame
    from fem import mpi, owner_computes
    from fem.solvers.linear_system import LinearSystem
    from fem.system import System

    model, _ = space_frame(n)
    sysm = System(model)
    state = sysm.reference_state()
    state.u[:] += 1e-3 * np.random.default_rng(1).standard_normal(state.u.shape)
    linear = LinearSystem(sysm.assembler, sysm.n_free, False, "bench_")
    linear.open()
    owner = owner_computes.requested()
    if owner:
        oc = owner_computes.OwnerComputes.of(sysm)
        sysm.owner = oc
        p = oc.partition
        linear.rows = (p.serial, p.new, p.ranges, oc.rank)
    groups = sysm.owner.groups if owner else model.groups
    elements = sum(len(g) for g in groups)
    matrices = sum(len(g) * g.nd ** 2 * 8 for g in groups)
    evaluate, fill = [], []
    for _ in range(REPEATS):
        t = time.perf_counter()
        _, K = sysm.evaluate(state)
        evaluate.append(time.perf_counter() - t)
        t = time.perf_counter()
        linear.fill(K)
        fill.append(time.perf_counter() - t)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    row = (min(evaluate), min(fill), elements, matrices / 2**20, rss)
    rows = mpi.mpi4py_comm().gather(row, root=0) if mpi.size() > 1 else [row]
    if mpi.rank() == 0:
        print(json.dumps({"n": sysm.n_free, "ranks": mpi.size(), "owner": owner,
                          "rows": rows}))
    linear.close()


def _measure(n: int, ranks: int, option: str = "-fem_distributed_solve",
             assembly: bool = False) -> dict:
    env = {**os.environ, "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "OMPI_MCA_rmaps_base_oversubscribe": "1", "OMP_NUM_THREADS": "1",
           "OPENBLAS_NUM_THREADS": "1", "NUMBA_NUM_THREADS": "1"}
    cmd = [sys.executable, "-m", "benchmarks.mpi_solve",
           "--assembly-worker" if assembly else "--worker", str(n)]
    if ranks > 1:
        cmd = ["mpiexec", "-n", str(ranks), *cmd, option]
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True)
    return json.loads(re.search(r"\{.*\}", out.stdout).group(0))


def assembly(sizes: list[int]) -> None:
    """The owner-computes rows (module docstring): 1 rank, 2 replicated, 2 by owners."""
    print("Owner-computes assembly: tangent + force (System.evaluate) and matrix refill per "
          "rank, best of 3")
    print(f"  load average at start: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    print(f"{'unknowns':>9} {'ranks':>5} {'assembly':>13} {'evaluate s':>13} {'fill s':>13} "
          f"{'elements':>13} {'Ke MB':>11} {'peak RSS MB':>11} {'evaluate 1/N':>12}")
    for n in sizes:
        runs = [(_measure(n, 1, assembly=True), "serial"),
                (_measure(n, 2, "-fem_distributed_solve", assembly=True), "replicated"),
                (_measure(n, 2, "-fem_distributed_assembly", assembly=True), "owners")]
        base = runs[0][0]["rows"][0][0]
        for r, label in runs:
            rows = r["rows"]

            def col(k, fmt, rows=rows):
                return "/".join(format(x[k], fmt) for x in rows)
            worst = max(x[0] for x in rows)
            print(f"{r['n']:>9} {r['ranks']:>5} {label:>13} {col(0, '.3g'):>13} "
                  f"{col(1, '.2g'):>13} {col(2, 'd'):>13} {col(3, '.0f'):>11} "
                  f"{col(4, '.0f'):>11} {base / worst:>12.2f}")
        whole, each = split_work(n)
        print(f"{'':>9} {'':>5} {'in 1 process':>13} {whole:.3g} s whole, the 2 ranks' parts "
              + " / ".join(f"{t:.3g}" for t in each) + f" s: {whole / max(each):.2f}x")


def split_work(n: int, parts: int = 2, repeats: int = 5) -> tuple[float, list[float]]:
    """In this process: the whole ``System.evaluate`` and each rank's part of it (no MPI).

    The work each of ``parts`` ranks would do, timed one after the other, interleaved, best of
    ``repeats``: a figure the machine's load touches less than the ranks' own timings.
    """
    import numpy as np

    from benchmarks.common import space_frame
    from fem.owner_computes import OwnerComputes
    from fem.partition import Partition
    from fem.system import System

    model, _ = space_frame(n)
    sysm = System(model)
    state = sysm.reference_state()
    state.u[:] += 1e-3 * np.random.default_rng(1).standard_normal(state.u.shape)
    partition = Partition.build(model, sysm.dofmap, parts)
    owners = [OwnerComputes(sysm, partition, r) for r in range(parts)]
    whole, each = [], [[] for _ in owners]
    for _ in range(repeats):
        t = time.perf_counter()
        sysm.evaluate(state)
        whole.append(time.perf_counter() - t)
        for times, oc in zip(each, owners, strict=True):
            t = time.perf_counter()
            oc.evaluate(state)
            times.append(time.perf_counter() - t)
    return min(whole), [min(t) for t in each]


def main(argv=()) -> None:
    if argv and argv[0] == "--assembly":
        if shutil.which("mpiexec") is not None:
            assembly([int(a) for a in argv[1:]] or list(SIZES))
        return
    sizes = [int(a) for a in argv] or list(SIZES)
    print("Distributed solve: MUMPS numerical factorization and solve, 1 rank vs 2 ranks "
          "(-fem_distributed_solve)")
    if shutil.which("mpiexec") is None:
        print("  (no mpiexec: skipped)")
        return
    print(f"  load average at start: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    print(f"{'unknowns':>9} {'ranks':>5} {'factor s':>9} {'solve s':>8} {'MB/rank':>14} "
          f"{'berr':>8} {'factor 1/N':>10}")
    for n in sizes:
        one = _measure(n, 1)
        two = _measure(n, 2)
        for r in (one, two):
            mem = "/".join(str(m) for m in r["memory"])
            ratio = one["factor"] / r["factor"]
            print(f"{r['n']:>9} {r['ranks']:>5} {r['factor']:>9.3g} {r['solve']:>8.3g} "
                  f"{mem:>14} {r['backward_error']:>8.1e} {ratio:>10.2f}")
        assert abs(one["x"] - two["x"]) <= 1e-8 * one["x"], "the solutions differ"
    assembly(sizes)


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] in ("--worker", "--assembly-worker"):
        from fem import _petsc

        _petsc.init([a for a in sys.argv[3:] if a.startswith("-")])
        (worker if sys.argv[1] == "--worker" else assembly_worker)(int(sys.argv[2]))
    else:
        main(sys.argv[1:])
