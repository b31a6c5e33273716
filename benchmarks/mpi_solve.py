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

``python -m benchmarks.mpi_solve [n ...]`` (lattice edges, default 15 and 20).
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


def _measure(n: int, ranks: int) -> dict:
    env = {**os.environ, "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "OMPI_MCA_rmaps_base_oversubscribe": "1", "OMP_NUM_THREADS": "1",
           "OPENBLAS_NUM_THREADS": "1"}
    cmd = [sys.executable, "-m", "benchmarks.mpi_solve", "--worker", str(n)]
    if ranks > 1:
        cmd = ["mpiexec", "-n", str(ranks), *cmd, "-fem_distributed_solve"]
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True)
    return json.loads(re.search(r"\{.*\}", out.stdout).group(0))


def main(argv=()) -> None:
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


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--worker":
        from fem import _petsc

        _petsc.init([a for a in sys.argv[3:] if a.startswith("-")])
        worker(int(sys.argv[2]))
    else:
        main(sys.argv[1:])
