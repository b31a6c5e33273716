"""A million unknowns on 1, 2 (and 3) MPI ranks: time per phase and memory per rank (issue 31).

The model is a flat frame plate (:func:`benchmarks.common.slab`): ``n x n x 3`` nodes joined
along x, y and z by 3D co-rotational beams (about ``9 n^2`` elements), clamped on one edge, its
free edge loaded across the plate. A plate keeps MUMPS's fill 2D-like (fronts of one row of
``3 n`` nodes): a million unknowns (``n = 236``) fit this 24 GB machine on one and on two ranks,
where a cubic lattice of that size would not. One Newton step of a static analysis from the
reference state is run the way ``fem run ... -fem_distributed_assembly`` runs it
(:mod:`fem.owner_computes`, :class:`fem.solvers.linear_system.LinearSystem`), in phases, each
ended by a barrier so that its time is the slowest rank's:

* ``start``: Python's imports (numpy, PETSc, fem) and the compiled kernels loaded from numba's
  cache (compiled, the first time) on a small plate;
* ``setup``: the model and the :class:`~fem.system.System` (DOF map, serial CSR pattern), the
  reference state and the step's linear system, on every rank (replicated);
* ``partition``: the partition of the elements among the ranks and each rank's part of the
  assembly (:class:`fem.owner_computes.OwnerComputes`; on one rank, nothing);
* ``assembly``: internal force and tangent (``System.evaluate``: on N ranks each rank evaluates
  the elements of its rows and the force is gathered to all), and the refill of the matrix;
* ``factor``: MUMPS's analysis and numerical factorization (``PCSetUp``);
* ``solve``: the checked solve of :func:`fem.linalg.solve_checked` (forward/backward
  substitution, iterative refinement, backward error), the solution gathered to every rank;
* ``reassembly``: the next iteration's force and tangent at the updated state, and the refill
  (the first ``assembly`` also makes the PETSc matrix and its communication pattern);
* ``output``: rank 0 writes the nodal displacements and rotations, in the serial numbering, to
  an HDF5 file (the others wait).

Memory per rank: the peak resident set of each phase (``VmHWM`` of ``/proc/self/status``, reset
at each phase's start through ``/proc/self/clear_refs``), the process's peak (``ru_maxrss``), and
MUMPS's own: ``INFO(15)`` (its estimate after the analysis, MB) and ``INFO(16)`` (what the
factorization allocated, MB) on each rank; ``RINFOG(3)`` (the elimination's flops) and
``INFOG(29)`` (entries of the factors) are MUMPS's totals; PETSc's log events split the
``factor`` phase into MUMPS's analysis (``MatLUFactorSym``: ordering and symbolic
factorization, on the host rank) and its numerical factorization (``MatLUFactorNum``). The
phases' times are checked to sum to the measured wall time within 5 % (every second of the run
is in a phase).

``python -m benchmarks.mpi_large`` (a million unknowns, 1 and 2 ranks, about 10 minutes and
12 GB here); ``--size 2e4`` for a small run, ``--ranks 1,2,3`` (3 ranks on 2 cores are
oversubscribed, and flagged so). Each rank count runs in its own child process, one after the
other; the load average is printed beside every row. The scaling model built on these figures
is in ``docs/mpi.md`` ("A million unknowns").
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

LAYERS = 3          # node layers across the plate's thickness


def plate_edge(unknowns: float) -> int:
    """The plate's edge ``n`` (nodes) whose ``6 n (n - 1) LAYERS`` free unknowns are nearest."""
    n = max(8, int(round((unknowns / (6 * LAYERS)) ** 0.5)))
    return n + 1 if abs(6 * n * n * LAYERS - unknowns) > abs(6 * (n + 1) * n * LAYERS - unknowns) \
        else n


def _status(key: str) -> float:
    """A ``/proc/self/status`` figure (``VmHWM``, ``VmRSS``) in MB (0 where there is none)."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def _reset_peak() -> None:
    """Start a new peak resident set (``VmHWM``) from the present one (Linux 4.0 and later)."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
    except OSError:
        pass


def worker(n: int, out: str) -> None:
    """One run in this process on every rank of its launcher (rank 0 prints a JSON line)."""
    t_start = time.perf_counter()
    import numpy as np

    from benchmarks.common import slab
    from fem import _petsc, mpi, owner_computes
    from fem.solvers.linear_system import LinearSystem
    from fem.system import System

    comm = mpi.mpi4py_comm() if mpi.size() > 1 else None
    log = _petsc.PETSc().Log
    log.begin()                   # PETSc's events: MUMPS's analysis apart from its factorization
    times, peaks = {}, {}
    clock = [t_start]

    def phase(name: str) -> None:
        """End the phase ``name`` (after a barrier) and start the next."""
        if comm is not None:
            comm.Barrier()
        now = time.perf_counter()
        times[name] = now - clock[0]
        peaks[name] = _status("VmHWM")
        clock[0] = now
        _reset_peak()

    # the compiled kernels loaded (or compiled, once: numba's cache) on a small plate
    small = System(slab(8, LAYERS))
    small.evaluate(small.reference_state())
    phase("start")

    model = slab(n, LAYERS)
    sysm = System(model)
    state = sysm.reference_state()
    linear = LinearSystem(sysm.assembler, sysm.n_free, False, "bench_",
                          {"pc_factor_mat_solver_type": "mumps"})
    linear.open()
    # the load: a unit force across the plate (z) on every node of the free edge
    free_edge = np.flatnonzero(model.X[:, 0] == model.X[:, 0].max())
    load = np.zeros((len(model.X), 6))
    load[free_edge, 2] = 1.0 / len(free_edge)
    f_ext = sysm.dofmap.from_nodal(load)[:sysm.n_free]
    phase("setup")

    if owner_computes.requested():
        oc = owner_computes.OwnerComputes.of(sysm)
        sysm.owner = oc
        p = oc.partition
        linear.rows = (p.serial, p.new, p.ranges, oc.rank)
        elements = oc.elements
    else:
        elements = sum(len(g) for g in model.groups)
    phase("partition")

    f_int, K = sysm.evaluate(state)
    linear.fill(K)
    phase("assembly")

    pc = linear.ksp.getPC()
    pc.setUp()
    phase("factor")

    x, report = linear.solve(f_ext - f_int[:sysm.n_free])
    phase("solve")

    state.u[:] += sysm.dofmap.to_nodal(x)[:, :3]       # what the next Newton iteration does
    f_int, K = sysm.evaluate(state)
    linear.fill(K)
    phase("reassembly")

    if mpi.rank() == 0:
        import h5py

        with h5py.File(out, "w") as fh:
            fh.create_dataset("u", data=sysm.dofmap.to_nodal(x))
    phase("output")
    wall = time.perf_counter() - t_start

    F = pc.getFactorMatrix()
    row = {"elements": int(elements), "phase_peak_mb": peaks,
           "maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
           "mumps_estimate_mb": int(F.getMumpsInfo(15)), "mumps_mb": int(F.getMumpsInfo(16)),
           "events": {e: log.Event(e).getPerfInfo()["time"] for e in EVENTS}}
    rows = comm.gather(row, root=0) if comm is not None else [row]
    if mpi.rank() == 0:
        # to a file, not stdout: Open MPI forwards the ranks' output in chunks, and another
        # rank's line can land inside this one (a lost 10-minute run did that)
        with open(out + ".json", "w", encoding="utf-8") as fh:
            json.dump({"n": int(sysm.n_free), "edge": n, "ranks": mpi.size(),
                       "owner": owner_computes.requested(), "times": times, "wall": wall,
                       "flops": float(F.getMumpsRinfog(3)), "factor_entries": _entries(F),
                       "backward_error": float(report.backward_error),
                       "tip": float(np.abs(x).max()), "rows": rows}, fh)
    linear.close()


def _entries(F) -> float:
    """Entries of the factors after the factorization (MUMPS's ``INFOG(29)``, negative: x 1e6)."""
    v = F.getMumpsInfog(29)
    return float(-v * 1e6 if v < 0 else v)


def measure(n: int, ranks: int, timeout: float = 7200) -> dict:
    """One run on ``ranks`` ranks in a child process (under ``mpiexec`` for more than one)."""
    env = {**os.environ, "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "OMPI_MCA_rmaps_base_oversubscribe": "1", "OMP_NUM_THREADS": "1",
           "OPENBLAS_NUM_THREADS": "1", "NUMBA_NUM_THREADS": "1"}
    with tempfile.TemporaryDirectory(prefix="mpi_large_") as tmp:
        cmd = [sys.executable, "-m", "benchmarks.mpi_large", "--worker", str(n),
               os.path.join(tmp, "out.h5")]
        if ranks > 1:
            cmd = ["mpiexec", "-n", str(ranks), *cmd, "-fem_distributed_assembly"]
        load = os.getloadavg()[0]
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
        try:
            with open(os.path.join(tmp, "out.h5.json"), encoding="utf-8") as fh:
                got = json.load(fh)
        except (OSError, ValueError):
            got = None
    if proc.returncode != 0 or got is None:
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-15:])
        raise RuntimeError(f"{ranks} rank(s) failed (exit {proc.returncode}):\n{tail}")
    got["load"] = (load, os.getloadavg()[0])
    return got


#: PETSc's events timed inside the phases: MUMPS's analysis (ordering, symbolic factorization)
#: and numerical factorization in ``factor``, its triangular solves in ``solve``
EVENTS = ("MatLUFactorSym", "MatLUFactorNum", "MatSolve")

PHASES = ("start", "setup", "partition", "assembly", "factor", "solve", "reassembly", "output")


def report(runs: list[dict]) -> None:
    """Print the table of ``runs`` (the first is the one-rank reference)."""
    base = runs[0]
    print(f"{'ranks':>5} {'unknowns':>9} " + " ".join(f"{p:>9}" for p in PHASES)
          + f" {'wall s':>8} {'speed-up':>8} {'load':>9}")
    for r in runs:
        t = r["times"]
        flag = " (oversubscribed)" if r["ranks"] > (os.cpu_count() or 1) else ""
        print(f"{r['ranks']:>5} {r['n']:>9} " + " ".join(f"{t[p]:>9.3g}" for p in PHASES)
              + f" {r['wall']:>8.3g} {base['wall'] / r['wall']:>8.2f} "
              f"{r['load'][0]:>4.1f}-{r['load'][1]:<4.1f}{flag}")
    print("Memory per rank (MB): peak resident set per phase (VmHWM), the process's peak "
          "(ru_maxrss), MUMPS's estimate INFO(15) and allocation INFO(16)")
    print(f"{'ranks':>5} {'rank':>4} {'elements':>9} " + " ".join(f"{p:>9}" for p in PHASES)
          + f" {'maxrss':>8} {'MUMPS est':>9} {'MUMPS':>8}")
    for r in runs:
        for k, row in enumerate(r["rows"]):
            pk = row["phase_peak_mb"]
            print(f"{r['ranks']:>5} {k:>4} {row['elements']:>9} "
                  + " ".join(f"{pk[p]:>9.0f}" for p in PHASES)
                  + f" {row['maxrss_mb']:>8.0f} {row['mumps_estimate_mb']:>9} "
                  f"{row['mumps_mb']:>8}")
    for r in runs:
        ev = r["rows"][0]["events"]
        print(f"  {r['ranks']} rank(s): rank 0's MUMPS analysis {ev['MatLUFactorSym']:.3g} s, "
              f"numerical factorization {ev['MatLUFactorNum']:.3g} s, triangular solves "
              f"{ev['MatSolve']:.3g} s")
        print(f"  {r['ranks']} rank(s): factorization {r['flops']:.3g} flops "
              f"({r['flops'] / ev['MatLUFactorNum'] / 1e9:.2f} GFlop/s in it), "
              f"{r['factor_entries']:.3g} entries in the factors, "
              f"backward error {r['backward_error']:.1e}")


def check(runs: list[dict]) -> None:
    """The runs' own accounting: phases sum to the wall time, same solution on every count."""
    for r in runs:
        total = sum(r["times"].values())
        assert abs(total - r["wall"]) <= 0.05 * r["wall"], (
            f"{r['ranks']} rank(s): the phases sum to {total:.3g} s of {r['wall']:.3g} s")
        assert abs(r["tip"] - runs[0]["tip"]) <= 1e-8 * runs[0]["tip"], "the solutions differ"


#: assumptions of the scaling model (:func:`scaling_model`), not measurements: MUMPS's numerical
#: factorization speeds up as ``P ** FACTOR_EXPONENT`` on P ranks (22.6x on 64) and its
#: triangular solves as ``P ** SOLVE_EXPONENT`` (8x on 64); its memory efficiency (one rank's
#: memory over P times the largest rank's) goes from the 2-rank run's to MEMORY_EFFICIENCY at 64
#: ranks (log-linear); nested dissection of a plate (a 2D mesh)
#: costs ``N ** 1.5`` flops and ``N log N`` entries of the factors (George 1973)
FACTOR_EXPONENT = 0.75
#: bytes per second a rank receives in an ``Allgatherv`` (a cluster's network, assumed)
GATHER_BYTES_PER_S = 1e9
SOLVE_EXPONENT = 0.5
MEMORY_EFFICIENCY = 0.5


def scaling_model(runs: list[dict], ranks=(1, 2, 4, 8, 16, 32, 64)) -> list[dict]:
    """Strong (the measured N) and weak (N per rank) scaling predicted from the measured runs.

    The 1-rank run's phases are split into what a run does once and stays whole on every rank
    (Python's start, the model and its serial pattern, the partition, the first assembly with
    the matrix's creation, MUMPS's sequential analysis, output by rank 0) and what each Newton
    iteration does, divided among the ranks (element evaluation and fill: ``reassembly``,
    MUMPS's numerical factorization and its solves), scaled as the
    constants above say. The ghost layer each rank evaluates besides its elements is the 2-rank
    run's (elements of the larger part over half of them), growing as ``sqrt(P)`` (the perimeter
    of a plate's part); each iteration gathers the force and the solution (``8 N`` bytes each)
    to every rank at :data:`GATHER_BYTES_PER_S`. Memory per rank is the larger of the set-up's
    peak (the serial pattern's construction, replicated) and what a rank holds besides MUMPS
    while it factors (the 2-rank run's) plus MUMPS's allocation divided among the ranks. Weak
    scaling grows the replicated parts as N (the analysis as N log N), the factorization's
    flops as ``N ** 1.5`` and its memory as ``N log N``.
    Returns one row per rank count (keys ``ranks``, ``once``, ``iteration``, ``mb`` and the same
    with ``weak_``).
    """
    import math

    one = runs[0]
    t, ev, row = dict(one["times"]), one["rows"][0]["events"], one["rows"][0]
    two = [r for r in runs if r["ranks"] == 2]
    ghosts = 0.0
    if two:                         # the partition is made on several ranks only
        t["partition"] = two[0]["times"]["partition"]
        elements = [x["elements"] for x in two[0]["rows"]]
        ghosts = max(elements) / (row["elements"] / 2) - 1
    analysis = ev["MatLUFactorSym"]
    numeric = t["factor"] - analysis
    start_mb = row["phase_peak_mb"]["start"]
    setup_mb = max(row["phase_peak_mb"][p] for p in ("setup", "partition", "assembly"))
    mumps_mb = row["mumps_mb"]
    # what a rank holds beside MUMPS's factors while it factors (the rank of the largest peak)
    top = max(two[0]["rows"] if two else [row], key=lambda x: x["phase_peak_mb"]["factor"])
    held_mb = top["phase_peak_mb"]["factor"] - top["mumps_mb"]
    n, out = one["n"], []
    # MUMPS's memory efficiency: measured on 2 ranks (M1 / (2 max M2)), MEMORY_EFFICIENCY at 64
    e2 = (mumps_mb / (2 * max(x["mumps_mb"] for x in two[0]["rows"]))) if two else 1.0

    def efficiency(p: int) -> float:
        if p == 1:
            return 1.0
        return e2 + (MEMORY_EFFICIENCY - e2) * math.log2(p / 2) / math.log2(32)

    def model(p: int, scale: float) -> tuple[float, float, float]:
        log = math.log(scale * n) / math.log(n)
        once = t["start"] + scale * (t["setup"] + t["assembly"] + t["output"] + log * analysis)
        if p > 1:
            once += scale * t["partition"]
        # a rank evaluates its elements and a ghost layer (a part's perimeter: ~ sqrt(P))
        assembly = scale * t["reassembly"] / p * (1 + ghosts * math.sqrt(p / 2) if p > 1 else 1)
        gathers = 2 * 8 * scale * n / GATHER_BYTES_PER_S if p > 1 else 0.0
        iteration = assembly + scale ** 1.5 * numeric / p ** FACTOR_EXPONENT \
            + scale * log * t["solve"] / p ** SOLVE_EXPONENT + gathers
        mb = max(start_mb + scale * (setup_mb - start_mb),
                 start_mb + scale * ((held_mb if p > 1 else row["phase_peak_mb"]["factor"]
                                      - mumps_mb) - start_mb)
                 + mumps_mb * scale * log / (p * efficiency(p)))
        return once, iteration, mb

    for p in ranks:
        once, iteration, mb = model(p, 1.0)
        w_once, w_iteration, w_mb = model(p, float(p))
        out.append({"ranks": p, "once": once, "iteration": iteration, "mb": mb,
                    "weak_once": w_once, "weak_iteration": w_iteration, "weak_mb": w_mb})
    return out


def print_model(runs: list[dict]) -> None:
    """Print :func:`scaling_model` of ``runs``."""
    rows = scaling_model(runs)
    base = rows[0]
    print(f"Scaling model from the measured runs ({runs[0]['n']} unknowns; docs/mpi.md): s once "
          "per run (replicated), s per Newton iteration, peak MB per rank")
    print(f"{'ranks':>5} {'once s':>8} {'iter s':>8} {'iter x':>7} {'10-iter run x':>13} "
          f"{'MB/rank':>8} | {'weak: once':>10} {'iter s':>8} {'MB/rank':>8}")
    for r in rows:
        run10 = (base["once"] + 10 * base["iteration"]) / (r["once"] + 10 * r["iteration"])
        print(f"{r['ranks']:>5} {r['once']:>8.3g} {r['iteration']:>8.3g} "
              f"{base['iteration'] / r['iteration']:>7.2f} {run10:>13.2f} {r['mb']:>8.0f} | "
              f"{r['weak_once']:>10.3g} {r['weak_iteration']:>8.3g} {r['weak_mb']:>8.0f}")


def main(argv=()) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.mpi_large")
    parser.add_argument("--size", type=float, default=1e6, help="unknowns (default 1e6)")
    parser.add_argument("--ranks", default="1,2", help="rank counts, e.g. 1,2,3 (default 1,2)")
    parser.add_argument("--json", help="also write the runs' figures to this file")
    parser.add_argument("--model", metavar="JSON", help="print the scaling model of the runs "
                        "written by --json (no run)")
    args = parser.parse_args(list(argv))
    if args.model:
        with open(args.model) as fh:
            print_model(json.load(fh))
        return
    n = plate_edge(args.size)
    counts = [int(c) for c in args.ranks.split(",")]
    print(f"A frame plate of {n} x {n} x {LAYERS} nodes (3D co-rotational beams): one static "
          "Newton step with -fem_distributed_assembly")
    print(f"  {os.cpu_count()} cores; load average at start {os.getloadavg()[0]:.2f}")
    if any(c > 1 for c in counts) and shutil.which("mpiexec") is None:
        print("  (no mpiexec: only 1 rank)")
        counts = [c for c in counts if c == 1] or [1]
    runs = [measure(n, c) for c in counts]
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(runs, fh, indent=1)
    report(runs)
    check(runs)
    print_model(runs)


if __name__ == "__main__":
    if len(sys.argv) > 3 and sys.argv[1] == "--worker":
        from fem import _petsc

        _petsc.init([a for a in sys.argv[4:] if a.startswith("-")])
        worker(int(sys.argv[2]), sys.argv[3])
    else:
        main(sys.argv[1:])
