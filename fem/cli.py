"""The ``fem`` command: run, study, validate, plot, info, deck-reference, deck-schema.

This is the only module that prints. PETSc options on the command line (anything fem does not know
that starts with ``-``, e.g. ``-static1_ksp_view``) go to PETSc's options database before PETSc is
first used, and win over the deck's ``[solver]`` options. User mistakes end with one message and an
exit code, never a traceback:

====  ==============================================================================
0     done
1     ``fem validate``: some quantity failed
2     bad input: the deck, the mesh, the results path (or it is open elsewhere)
3     no convergence, or a result would not be accurate in double precision
4     the results cannot be written (disk full, I/O error); frames before stay
70    an internal error (a bug: please report it, with ``--debug``)
130   interrupted by Ctrl-C (SIGINT); 143: by SIGTERM. The frames written stay.
====  ==============================================================================

Ctrl-C and SIGTERM stop the run at the next safe point (:mod:`fem.interrupt`): the increment being
computed is dropped, the results and XDMF files are closed with every dataset at the same frame
count, and the message says where they are. A closed pipe (``fem run ... | head``) is not an
error, and numpy's floating-point warnings are not shown (results are checked for finiteness
instead); ``--debug`` shows both.
"""

from __future__ import annotations

import argparse
import gc
import logging
import os
import sys
import time
import warnings

from fem import __version__, _petsc, interrupt, mpi
from fem.errors import ConvergenceError, DeckError, FemError, Interrupted, OutputError


def _completed_note(args) -> None:
    """Say where the frames written before a failure or an interrupt are."""
    path = getattr(args, "results", None)
    if path and os.path.exists(path):
        print(f"fem: the completed steps and increments are in {os.path.abspath(path)}",
              file=sys.stderr)
        from fem.io.files import xdmf_path

        xdmf = xdmf_path(path)
        if os.path.exists(xdmf):
            print(f"fem: ParaView: {xdmf}", file=sys.stderr)


COMMANDS = ("run", "study", "validate", "plot", "info", "deck-reference", "deck-schema")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="fem", description="Finite-element flexible multibody "
                                "solver. PETSc options (-<prefix>ksp_type ...) may follow.")
    p.add_argument("--version", action="version", version=f"fem {__version__}")
    p.add_argument("--debug", action="store_true", help="show tracebacks of internal errors")
    p.add_argument("-v", "--verbose", action="store_true",
                   help="log progress: a line per output frame on stderr")
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="run a deck", description="Run the steps of a deck and write "
                       "the results. PETSc options (-<step>_ksp_type ..., -help) may follow.",
                       epilog=_run_epilog(), formatter_class=argparse.RawDescriptionHelpFormatter)
    r.add_argument("deck", help="TOML deck")
    r.add_argument("-o", "--output", help="results file (default: <deck>.h5 beside the deck)")
    r.add_argument("--restart", metavar="OUT.h5[:STEP[:FRAME]]",
                   help="continue the run that wrote OUT.h5 from its last checkpoint (or the one "
                   "after frame FRAME of step STEP) into that file; the deck's model must be the "
                   "one it ran, its steps may go on")
    s = sub.add_parser("study", help="run a parameter study: many variants of one deck "
                       "(fem.study)")
    s.add_argument("deck", help="base TOML deck (may hold the [study] table)")
    s.add_argument("study", nargs="?", help="TOML file with the [study] table")
    s.add_argument("-o", "--output", help="folder of the results (default: <deck>_study)")
    s.add_argument("-j", "--jobs", type=_jobs, default=1, help="processes running variants: "
                   "this one and N - 1 workers (default 1: in this process); under mpiexec the "
                   "ranks share the variants instead")
    s.add_argument("--resume", action="store_true", help="run only the variants the folder "
                   "does not hold finished")
    v = sub.add_parser("validate", help="run the validation cases and compare with references")
    v.add_argument("cases", nargs="*", help="case names (default: all)")
    v.add_argument("--cases-dir", help="folder of cases (default: ./cases)")
    v.add_argument("--keep", metavar="DIR", help="keep the results files in DIR")
    v.add_argument("--report", metavar="DIR", help="also write an HTML report to DIR/index.html: "
                   "every case's values, errors, tolerances, plots of its curves, and the "
                   "environment; and the docs' table of the cases to DIR/validation.md")
    _plot_parser(sub)
    sub.add_parser("info", help="versions and solver packages")
    d = sub.add_parser("deck-reference", help="print the deck reference (Markdown), or one "
                       "table's")
    d.add_argument("table", nargs="?", help="one table, e.g. joints or steps (default: all)")
    sub.add_parser("deck-schema", help="print a JSON Schema of the deck (for editors: VS Code's "
                   "TOML extensions read it)")
    for sp in sub.choices.values():
        # also after the subcommand (``fem run deck.toml -v``); SUPPRESS keeps ``fem -v run``
        sp.add_argument("-v", "--verbose", action="store_true", default=argparse.SUPPRESS,
                        help="log progress: a line per output frame (fem study: per variant) "
                        "on stderr")
        sp.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                        help="show tracebacks of internal errors")
    return p


def _jobs(text: str) -> int:
    """``fem study -j``: a count of worker processes, >= 1 (else argparse's exit code 2)."""
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected a number of worker processes >= 1, got "
                                         f"{text!r}")
    return n


#: the exit codes, as ``fem run --help`` lists them (the module docstring's table)
EXIT_CODES = (
    (0, "done"),
    (1, "fem validate: some quantity failed"),
    (2, "bad input: the deck, the mesh, the results path (or it is open elsewhere)"),
    (3, "no convergence, or a result would not be accurate in double precision"),
    (4, "the results cannot be written (disk full, I/O error); the frames before stay"),
    (70, "an internal error (a bug: please report it, with --debug)"),
    (130, "interrupted by Ctrl-C (SIGINT); 143: by SIGTERM; the frames written stay"),
)


def _run_epilog() -> str:
    """``fem run --help``'s end: the files a run writes and the exit codes."""
    from fem.io import files

    h5, step = "out.h5", "<step>"
    written = [
        (h5, "the results (HDF5): model, every step's frames, modes, sensors"),
        (files.xdmf_path(h5), "the static and dynamic frames for ParaView"),
        (files.modes_xdmf_path(h5, step), "buckling, modal, cms_reduce, modify steps: the "
         "mode shapes"),
        (files.vibration_xdmf_path(h5, step), "modal, cms_reduce, modify steps: each mode "
         "vibrating"),
        (files.matlab_path(h5, step), "linearize steps with inputs or outputs: the "
         "state-space model for MATLAB"),
        (files.sweep_png_path(h5, step, "campbell"), "stability sweeps: the Campbell "
         "diagram (and _stability.png)"),
    ]
    width = max(len(f) for f, _ in written)
    lines = ["files written (beside -o out.h5; a step named like the suffix, e.g. modes, "
             "gives out_modes.xdmf):"]
    lines += [f"  {f:<{width}}  {what}" for f, what in written]
    lines += ["", "exit codes:"] + [f"  {code:<4} {what}" for code, what in EXIT_CODES]
    return "\n".join(lines)


def _plot_parser(sub) -> None:
    """``fem plot``'s arguments (:mod:`fem.plot`)."""
    from fem.io.quantities import NODE_QUANTITIES as FIELDS

    pl = sub.add_parser("plot", help="plot sensors, nodal fields, the energy balance or a "
                        "sweep's frequencies from a results file (PNG, SVG, PDF, CSV)",
                        description="Plot curves from a results file: sensors by name, a "
                        "node's DOF, the energy balance, a stability sweep's frequencies. "
                        "Several curves go in one figure; -o and --csv may be repeated.")
    pl.add_argument("results", help="results file (out.h5), or a study's DIR/summary.h5")
    pl.add_argument("sensors", nargs="*", metavar="SENSOR", help="sensor names ([[sensors]]); "
                    "of a study summary: output names ([study.outputs], wall_time)")
    pl.add_argument("--against", metavar="time|load_factor|SENSOR|PARAM",
                    help="the x axis: the step's time (load factor in static steps), the "
                    "load factor, or a sensor (default: time); of a study summary: a "
                    "parameter's key path (or its unique last part)")
    pl.add_argument("--by", metavar="PARAM", help="of a study summary: one curve per value of "
                    "this second parameter")
    pl.add_argument("--node", type=int, action="append", default=[], help="node id (repeat "
                    "for several)")
    pl.add_argument("--dof", action="append", default=[], help="DOF of --node: ux, uy, uz, "
                    "rx, ry, rz (repeat for several)")
    pl.add_argument("--field", default="displacement", metavar="|".join(FIELDS) + "|NODAL",
                    help="what of --node (default: displacement), or a nodal field of the "
                    "results (/steps/<s>/nodal/<name>, e.g. a shell stress)")
    pl.add_argument("--component", type=int, help="of a vector nodal field: 0, 1 or 2")
    pl.add_argument("--energy", action="store_true", help="the energy balance (dynamic steps)")
    pl.add_argument("--sweep", metavar="STEP", help="a stability sweep's frequencies against "
                    "its parameter")
    pl.add_argument("--modes", metavar="STEP", help="a modal step's natural frequencies "
                    "against the mode number")
    pl.add_argument("--step", action="append", help="only these steps (repeat for several)")
    pl.add_argument("-o", "--output", action="append", default=[], metavar="FILE",
                    help="figure file: .png, .svg or .pdf (default: <results>_plot.png)")
    pl.add_argument("--csv", action="append", default=[], metavar="FILE",
                    help="the plotted numbers as CSV")


def _cmd_plot(args) -> int:
    import h5py

    from fem import plot

    path = args.results
    if not os.path.isfile(path):
        raise plot.PlotError(f"{path}: no such results file")
    try:
        with h5py.File(path, "r", locking=False) as h5:
            fem_file = "fem_version" in h5.attrs and "model" in h5
            summary = not fem_file and plot.is_summary(h5)
    except OSError:
        fem_file = summary = False
    if not fem_file and not summary:
        raise plot.PlotError(f"{path}: not a results file written by fem, nor a study's "
                             "summary.h5")
    if summary:
        return _plot_study(args, path)
    if args.by:
        raise plot.PlotError("--by: only for a study's summary.h5")
    if args.sweep:
        if args.sensors or args.node or args.energy:
            raise plot.PlotError("--sweep plots a sweep's frequencies alone")
        table = plot.sweep(path, args.sweep)
    elif args.modes:
        if args.sensors or args.node or args.energy:
            raise plot.PlotError("--modes plots a modal step's frequencies alone")
        table = plot.modes(path, args.modes)
    else:
        table = plot.history(path, args.sensors, nodes=args.node, dofs=args.dof,
                             quantity=args.field, energy=args.energy,
                             against=args.against or "time",
                             steps=args.step, component=args.component)
    _plot_files(args, path, table, plot.write_csv)
    return 0


def _plot_study(args, path: str) -> int:
    """``fem plot DIR/summary.h5 OUTPUT ... --against PARAM [--by PARAM]`` (fem.plot.study)."""
    from fem import plot

    for option, given in (("--node", args.node), ("--dof", args.dof), ("--energy", args.energy),
                          ("--sweep", args.sweep), ("--modes", args.modes),
                          ("--step", args.step), ("--component", args.component is not None),
                          ("--field", args.field != "displacement")):
        if given:
            raise plot.PlotError(f"{option}: not for a study's summary.h5, which plots outputs "
                                 "against parameters: OUTPUT ... --against PARAM [--by PARAM]")
    table = plot.study(path, args.sensors, args.against, args.by)
    _plot_files(args, path, table.figure(), lambda _, out: plot.write_study_csv(table, out))
    return 0


def _plot_files(args, path: str, table, write_csv) -> None:
    """Draw ``table`` to ``-o`` (default ``<results>_plot.png``) and ``write_csv`` to ``--csv``."""
    from fem import plot

    outputs = args.output
    if not outputs and not args.csv:
        from fem.io.files import written_by_fem

        default = os.path.splitext(path)[0] + "_plot.png"
        if os.path.exists(default) and not written_by_fem(default, ""):
            raise plot.PlotError(f"{default} exists and was not written by fem; name the "
                                 "figure with -o")
        outputs = [default]
    for out in outputs:
        plot.draw(table, out)
        print(f"plot: {out}")
    for out in args.csv:
        write_csv(table, out)
        if out != "-":
            print(f"csv: {out}")


def _split_petsc(argv: list[str]) -> tuple[list[str], list[str]]:
    """Separate PETSc options (single dash, not fem's own) from fem's arguments."""
    ours, petsc = [], []
    i = 0
    own = {"-o", "-v", "-h", "-j"}
    while i < len(argv):
        a = argv[i]
        if a.startswith("-") and not a.startswith("--") and a not in own and len(a) > 2 \
                and not (a.startswith("-j") and a[2:].isdigit()):        # fem study -j2
            petsc.append(a)
            nxt = argv[i + 1] if i + 1 < len(argv) else None
            # a value follows unless it is an option, a deck (``fem run -x_ksp_view deck.toml``)
            # or a subcommand
            if (nxt is not None and not nxt.startswith("-") and not nxt.endswith(".toml")
                    and nxt not in COMMANDS):
                petsc.append(nxt)
                i += 1
        else:
            ours.append(a)
        i += 1
    return ours, petsc


def _cmd_run(args, petsc: list[str]) -> int:
    from fem import console
    from fem.io import deck as deck_io
    from fem.io import solver_options
    from fem.run import results_path, run

    started = time.perf_counter()
    deck = deck_io.load(args.deck)     # reading a deck never touches PETSc: mistakes show at once
    # PETSc starts when a step first needs it (small static models never do, fem.solvers.dense),
    # or now when the command line gives it options (a bad one is reported before the run)
    _petsc.defer(petsc)
    if petsc:
        _petsc.init()
    solver_options.check(deck.solver_options, deck.text, [s["name"] for s in deck.steps])
    if args.restart and mpi.size() > 1:
        raise DeckError("--restart", f"a restart runs on one process; started on {mpi.size()} "
                        "MPI ranks: continue the run without mpiexec (or with -n 1)")
    if args.restart:
        from fem.io.restart import parse_target

        out = results_path(deck, parse_target(args.restart).path, restart=True)
    else:
        # rank 0 checks the path (the files there) for every rank of a replicated run (fem.mpi)
        out = mpi.on_root(lambda: results_path(
            deck, args.output or os.path.splitext(args.deck)[0] + ".h5"))
    interrupt.check()
    args.results = out
    result = run(deck, args.output if args.restart else out,
                 progress=console.choose(args.verbose), restart=args.restart)
    interrupt.check()           # a signal during the last frame: the run is complete, say so
    for s in result.steps:
        print(f"step {s.name} ({s.type})")
        for line in s.lines:
            print(f"  {line}")
    print(f"results: {result.h5}")
    for x in result.xdmf:
        print(f"ParaView: {x}")
    for x in result.matlab:
        print(f"MATLAB: {x}")
    for x in result.plots:
        print(f"plot: {x}")
    print(f"wall time: {time.perf_counter() - started:.3g} s")
    sys.stdout.flush()
    return 0


def _cmd_validate(args) -> int:
    from pathlib import Path

    from fem import validate

    root = Path(args.cases_dir) if args.cases_dir else validate.default_cases_dir()
    cases = validate.case_dirs(root, args.cases)
    rows, page = [], None
    if args.report:
        from fem import report

        reports = report.run_cases(cases, args.report, args.keep)
        rows = [r for c in reports for r in c.rows]
        page = report.write(args.report, reports)
    else:
        for case in cases:
            rows.extend(validate.check_case(case, args.keep))
    print(validate.table(rows))
    failed = [r for r in rows if not r.passed]
    print(f"\n{len(rows) - len(failed)} of {len(rows)} quantities PASS"
          + (f", {len(failed)} FAIL" if failed else ""))
    if page:
        print(f"report: {page}")
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``fem`` console script.

    Called without ``argv`` (the console script, ``python -m fem.cli``), the process ends when
    it returns: everything it made is then frozen out of the garbage collector's sight
    (:func:`gc.freeze`), so that the interpreter's exit does not search every module's objects
    for cycles, 25 of the 35 ms it took after a one-element run (issue 32). The files are closed
    by then and the exit handlers still run; the collections of a caller that passes ``argv``
    (tests, scripts) are left alone.
    """
    ending = argv is None
    argv = list(sys.argv[1:] if argv is None else argv)
    ours, petsc = _split_petsc(argv)
    if mpi.launched():
        # under mpiexec: MPI starts first, so that only rank 0 speaks (fem.mpi)
        _petsc.init(petsc)
        mpi.quiet()
    parser = _parser()
    args, extra = parser.parse_known_args(ours)
    if extra and args.command == "plot" and not any(x.startswith("-") for x in extra):
        args.sensors += extra           # sensor names after options: fem plot out.h5 -o a.png b
    elif extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="fem: %(levelname)s: %(message)s" if not args.debug else
                        "%(levelname)s %(name)s: %(message)s", force=True)
    logging.addLevelName(logging.WARNING, "warning")
    logging.addLevelName(logging.INFO, "info")
    with warnings.catch_warnings():
        if not args.debug:
            # overflow and invalid values are caught by the finiteness checks of the analysis
            warnings.simplefilter("ignore", RuntimeWarning)
        with interrupt.installed(), interrupt.together(_checks_together(args)):
            code = _dispatch(args, petsc)
    code = mpi.finish(code)
    if ending:
        gc.freeze()
    return code


def _checks_together(args):
    """The communicator of a run's ranks, or None (one process, other commands).

    The ranks of a run pass the same check points and check for signals there together
    (:func:`fem.interrupt.together`).
    """
    if args.command != "run" or mpi.size() == 1:
        return None
    return mpi.mpi4py_comm()


def _dispatch(args, petsc: list[str]) -> int:
    try:
        if args.command not in ("run", "study"):
            _petsc.init(petsc)
        if args.command == "run":
            return _cmd_run(args, petsc)
        if args.command == "study":
            from fem.study.command import study

            return study(args, petsc)
        if args.command == "validate":
            return _cmd_validate(args)
        if args.command == "plot":
            return _cmd_plot(args)
        if args.command == "info":
            from fem.info import report

            print(report())
            return 0
        if args.command == "deck-schema":
            import json

            from fem.io.schema import json_schema

            print(json.dumps(json_schema(), indent=1))
            return 0
        from fem.io.schema import reference_markdown

        print(reference_markdown(args.table), end="")
        return 0
    except BrokenPipeError:
        # the reader of our output went away (``fem run ... | head``): not an error of the run;
        # point stdout at /dev/null so that the interpreter's final flush does not fail again
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except FemError as err:
        if isinstance(err, Interrupted):
            print(f"fem: {err}: the run stopped", file=sys.stderr)
        else:
            print(f"fem: error: {err}", file=sys.stderr)
        if isinstance(err, (ConvergenceError, Interrupted, OutputError)) or err.exit_code == 3:
            _completed_note(args)
        return err.exit_code
    except KeyboardInterrupt:            # before the handlers were installed
        print("fem: interrupted", file=sys.stderr)
        _completed_note(args)
        return 130
    except Exception as err:  # an internal error: say so plainly
        if args.debug:
            raise
        print(f"fem: internal error: {type(err).__name__}: {err} (rerun with --debug for the "
              "traceback and please report it)", file=sys.stderr)
        return 70


if __name__ == "__main__":
    sys.exit(main())
