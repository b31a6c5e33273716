"""The ``fem`` command: ``run``, ``validate``, ``info``, ``deck-reference``.

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
import logging
import os
import sys
import time
import warnings

from fem import __version__, _petsc, interrupt, mpi
from fem.errors import ConvergenceError, FemError, Interrupted, OutputError


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


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="fem", description="Finite-element flexible multibody "
                                "solver. PETSc options (-<prefix>ksp_type ...) may follow.")
    p.add_argument("--version", action="version", version=f"fem {__version__}")
    p.add_argument("--debug", action="store_true", help="show tracebacks of internal errors")
    p.add_argument("-v", "--verbose", action="store_true",
                   help="log progress: a line per output frame on stderr")
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="run a deck")
    r.add_argument("deck", help="TOML deck")
    r.add_argument("-o", "--output", help="results file (default: <deck>.h5 beside the deck)")
    # also after the subcommand (``fem run deck.toml -v``); SUPPRESS keeps ``fem -v run ...``
    r.add_argument("-v", "--verbose", action="store_true", default=argparse.SUPPRESS,
                   help="log progress: a line per output frame on stderr")
    r.add_argument("--restart", metavar="OUT.h5[:STEP[:FRAME]]",
                   help="continue the run that wrote OUT.h5 from its last checkpoint (or the one "
                   "after frame FRAME of step STEP) into that file; the deck's model must be the "
                   "one it ran, its steps may go on")
    v = sub.add_parser("validate", help="run the validation cases and compare with references")
    v.add_argument("cases", nargs="*", help="case names (default: all)")
    v.add_argument("--cases-dir", help="folder of cases (default: ./cases)")
    v.add_argument("--keep", metavar="DIR", help="keep the results files in DIR")
    sub.add_parser("info", help="versions and solver packages")
    sub.add_parser("deck-reference", help="print the deck reference (Markdown)")
    return p


def _split_petsc(argv: list[str]) -> tuple[list[str], list[str]]:
    """Separate PETSc options (single dash, not fem's own) from fem's arguments."""
    ours, petsc = [], []
    i = 0
    own = {"-o", "-v", "-h"}
    while i < len(argv):
        a = argv[i]
        if a.startswith("-") and not a.startswith("--") and a not in own and len(a) > 2:
            petsc.append(a)
            nxt = argv[i + 1] if i + 1 < len(argv) else None
            # a value follows unless it is an option, a deck (``fem run -x_ksp_view deck.toml``)
            # or a subcommand
            if (nxt is not None and not nxt.startswith("-") and not nxt.endswith(".toml")
                    and nxt not in ("run", "validate", "info", "deck-reference")):
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
    _petsc.init(petsc)
    solver_options.check(deck.solver_options, deck.text, [s["name"] for s in deck.steps])
    if args.restart and mpi.size() > 1:
        raise FemError(f"--restart runs on one process; started on {mpi.size()} MPI ranks: "
                       "continue the run without mpiexec (or with -n 1)")
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
    rows = []
    for case in validate.case_dirs(root, args.cases):
        rows.extend(validate.check_case(case, args.keep))
    print(validate.table(rows))
    failed = [r for r in rows if not r.passed]
    print(f"\n{len(rows) - len(failed)} of {len(rows)} quantities PASS"
          + (f", {len(failed)} FAIL" if failed else ""))
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``fem`` console script."""
    argv = list(sys.argv[1:] if argv is None else argv)
    ours, petsc = _split_petsc(argv)
    if mpi.launched():
        # under mpiexec: MPI starts first, so that only rank 0 speaks (fem.mpi)
        _petsc.init(petsc)
        mpi.quiet()
    args = _parser().parse_args(ours)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="fem: %(levelname)s: %(message)s" if not args.debug else
                        "%(levelname)s %(name)s: %(message)s", force=True)
    logging.addLevelName(logging.WARNING, "warning")
    logging.addLevelName(logging.INFO, "info")
    with warnings.catch_warnings():
        if not args.debug:
            # overflow and invalid values are caught by the finiteness checks of the analysis
            warnings.simplefilter("ignore", RuntimeWarning)
        with interrupt.installed():
            code = _dispatch(args, petsc)
    return mpi.finish(code)


def _dispatch(args, petsc: list[str]) -> int:
    try:
        if args.command != "run":
            _petsc.init(petsc)
        if args.command == "run":
            return _cmd_run(args, petsc)
        if args.command == "validate":
            return _cmd_validate(args)
        if args.command == "info":
            from fem.info import report

            print(report())
            return 0
        from fem.io.schema import reference_markdown

        print(reference_markdown(), end="")
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
