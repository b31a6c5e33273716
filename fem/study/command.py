"""``fem study base.toml [study.toml] [-o DIR] [-j N] [--resume]``: the command (prints).

Part of the command line (:mod:`fem.cli` dispatches here and turns errors into messages and exit
codes): the count of variants first; then the first variant runs alone in this process (rank 0
under MPI; worker processes start meanwhile) and the estimated time of the others is printed
before any of them starts (:func:`_estimate`); a line per variant with ``-v``; then the summary.
Exit code 0 when every variant ran (failed variants are results, in the summary); 130/143 after
Ctrl-C/SIGTERM, with the summary of what finished written; 2 for a bad study or base deck, before
any variant runs.
"""

from __future__ import annotations

import math
import os
import sys
import time

from fem import _petsc
from fem.errors import FemError, Interrupted
from fem.study import runner


def study(args, petsc: list[str]) -> int:
    """Run the study of ``args`` (see the module docstring)."""
    started = time.perf_counter()
    jobs = args.jobs
    if jobs < 1:
        raise FemError("-j: expected a number of worker processes >= 1, got " + str(jobs))
    runner.pin_threads()                    # before numpy loads: one BLAS thread per process
    if jobs > 1 and not runner.launched():
        runner.start_server()               # its imports run beside the checks below
    from fem.study import spec, summary

    plan = spec.load(args.deck, args.study)
    comm = runner.mpi_comm()
    root = comm is None or comm.Get_rank() == 0
    out = os.path.abspath(args.output or os.path.splitext(args.deck)[0] + "_study")
    _prepare(out, args.resume, root)
    if comm is not None:
        comm.Barrier()
    todo = runner.tasks(plan, out)
    n = len(todo)
    if args.resume:
        todo = [t for t in todo if not runner.finished(t)]
    processes = comm.Get_size() if comm is not None else min(jobs, max(len(todo) - 1, 1))
    how = (f"on {comm.Get_size()} MPI ranks" if comm is not None else
           f"in {processes} processes (this one and {processes - 1} "
           f"worker{'s' * (processes > 2)})" if processes > 1 else "in this process")
    verbose = getattr(args, "verbose", False)

    def report(rec: dict) -> None:
        if verbose:
            print(f"variant {rec['index']}: {rec['status']}"
                  + (f" (exit {rec['exit_code']}: {rec['message']})" if rec["exit_code"] else "")
                  + f", {rec['wall_time']:.3g} s", flush=True)

    probe, rest = todo[:1], todo[1:]

    def first() -> None:
        """The first variant, alone in this process; then the estimate, before the rest start."""
        if not probe:                       # --resume with nothing left
            return
        recs = runner.serial(probe)
        if rest:
            _estimate(recs[0], len(rest), processes)
        report(recs[0])

    if root:
        print(f"study: {n} variants ({plan.kind}) of {args.deck}, checked; "
              f"{len(todo)} to run {how}"
              + (f", {n - len(todo)} finished before" if args.resume else "")
              + ("; the first alone, for an estimate of the time" if rest else ""),
              flush=True)
    try:
        # PETSc starts when a variant first needs it (small static models never do), or now
        # when the command line gives it options (a bad one is reported before any variant)
        _petsc.defer(petsc)
        if petsc:
            _petsc.init()
        if comm is not None:
            if root:
                first()
            comm.Barrier()
            runner.ranks(rest, comm, report)
        elif processes > 1:
            runner.pool(rest, processes, report, petsc, before=first,
                        warm=probe[0] if probe else None)
        else:
            first()
            runner.serial(rest, report)
    except Interrupted:
        if root:
            summary.write(plan, out)
            print(f"fem: the summary of the variants that finished is in {out}",
                  file=sys.stderr)
        raise
    if not root:
        return 0
    rows = summary.write(plan, out)
    counts = {s: sum(r["status"] == s for r in rows) for s in ("done", "failed", "missing")}
    print(f"variants: {counts['done']} done, {counts['failed']} failed"
          + (f", {counts['missing']} missing" if counts["missing"] else ""))
    for r in rows:
        if r["status"] == "failed":
            print(f"  variant {r['index']}: exit {r['exit_code']}: {r['message']}")
    print(f"summary: {os.path.join(out, 'summary.csv')}, {os.path.join(out, 'summary.h5')}")
    if plan.kind == "sensitivity":
        print(f"sensitivities: {os.path.join(out, 'sensitivity.csv')}")
    print(f"wall time: {time.perf_counter() - started:.3g} s")
    sys.stdout.flush()
    return 0


def _estimate(rec: dict, rest: int, processes: int) -> None:
    """Print the estimated time of the ``rest`` variants still to run.

    The rule: the first variant's wall time times the rounds of ``processes`` the rest take,
    ``t1 ceil(rest / processes)``. The first pays one-off costs (loading compiled kernels), so
    this errs high.
    """
    t = rec["wall_time"]
    print(f"estimated time: {t * math.ceil(rest / processes):.3g} s for the other {rest} "
          f"variants, {processes} at a time (the first took {t:.3g} s)", flush=True)


def _prepare(out: str, resume: bool, root: bool) -> None:
    """The results folder: made if new; one holding a study is continued only with resume."""
    from fem.study.runner import ResultsFolderError

    if os.path.exists(out) and not os.path.isdir(out):
        raise ResultsFolderError(f"-o {out}: exists and is not a folder")
    held = os.path.isdir(out) and any(
        f.startswith("variant_") or f.startswith("summary.") for f in os.listdir(out))
    if held and not resume:
        raise ResultsFolderError(f"{out} holds a study's results: --resume continues it, or "
                                 "choose another folder with -o")
    if root:
        os.makedirs(out, exist_ok=True)
