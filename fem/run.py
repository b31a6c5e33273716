"""Run a deck: build the system once, run its steps in order on one state, write results."""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field

from fem import interrupt
from fem.analysis import STEP_TYPES
from fem.analysis.base import Resume
from fem.info import versions
from fem.io import files
from fem.io import restart as restart_io
from fem.io import sensors as sensors_io
from fem.io.deck import Deck
from fem.io.files import ResultsFileError
from fem.io.hdf5 import ResultsFile
from fem.system import System

log = logging.getLogger(__name__)


@dataclass
class StepSummary:
    """What a step reports to the user."""

    name: str
    type: str
    lines: list[str] = field(default_factory=list)


@dataclass
class RunResult:
    """Paths written and per-step summaries."""

    h5: str
    xdmf: list[str]
    steps: list[StepSummary]
    matlab: list[str] = field(default_factory=list)
    plots: list[str] = field(default_factory=list)


#: where each kind of file a step writes beside the results file ``h5`` goes (``StepBase.WRITES``):
#: the :class:`RunResult` list that names it, and its paths
BESIDE = {
    "modes": ("xdmf", lambda h5, step: [files.modes_xdmf_path(h5, step)]),
    "vibration": ("xdmf", lambda h5, step: [files.vibration_xdmf_path(h5, step)]),
    "matlab": ("matlab", lambda h5, step: [files.matlab_path(h5, step)]),
    "plots": ("plots", lambda h5, step: [files.sweep_png_path(h5, step, p)
                                         for p in ("campbell", "stability")]),
}


def make_step(spec: dict, system: System, deck: Deck, output_every: int = 1):
    """The step object of a deck step description (its registered type's ``make``)."""
    return STEP_TYPES[spec["type"]].make(spec, system, deck, output_every)


def inputs(deck: Deck) -> list[str]:
    """The files a run of ``deck`` reads: the deck and its mesh file (never to be overwritten)."""
    paths = [os.path.abspath(deck.path)] if deck.path else []
    return paths + list(deck.extra.get("inputs", ()))


def results_path(deck: Deck, output: str, restart: bool = False) -> str:
    """The checked absolute path of the results file ``output`` for a run of ``deck``.

    ``restart``: ``output`` is the file a restart continues (:func:`fem.io.files.results_path`).
    """
    beside = [s["name"] for s in deck.steps if STEP_TYPES[s["type"]].WRITES]
    path = files.results_path(output, inputs(deck), beside, restart=restart)
    _distinct_beside(deck, path)
    return path


def _distinct_beside(deck: Deck, h5: str) -> None:
    """A DeckError when two steps would write the same file beside ``h5``.

    Names are said once (:func:`fem.io.files.modes_xdmf_path`), so steps ``x`` and ``x_modes``
    that both write mode shapes would share ``out_x_modes.xdmf``.
    """
    from fem.errors import DeckError

    seen: dict[str, str] = {}
    for i, spec in enumerate(deck.steps):
        for kind in STEP_TYPES[spec["type"]].WRITES:
            for p in BESIDE[kind][1](h5, spec["name"]):
                if p in seen and seen[p] != spec["name"]:
                    raise DeckError(f"steps[{i}].name", f"step '{spec['name']}' would write "
                                    f"{os.path.basename(p)}, which step '{seen[p]}' writes "
                                    "too: rename one of them")
                seen[p] = spec["name"]


def run(deck: Deck, output: str, progress=None, restart: str | None = None,
        paraview: bool = True) -> RunResult:
    """Run every step of ``deck``, writing ``output`` (HDF5) and XDMF files beside it.

    ``progress`` is an optional :class:`fem.progress.Progress`. Between steps and inside them the
    run stops at a signal (:mod:`fem.interrupt`), keeping every frame written. ``restart``:
    ``out.h5[:STEP[:FRAME]]``, continue the run that wrote ``out.h5`` from its last checkpoint
    (or the named one) into that file (:mod:`fem.io.restart`); ``output`` then names it too.
    ``paraview``: False, no XDMF files nor the views they name (a study's variants;
    :class:`~fem.io.hdf5.ResultsFile`).
    """
    system = System(deck.model)
    if restart is not None:
        return _continue(deck, output, restart, system, progress)
    path = results_path(deck, output)
    with ResultsFile(path, deck.model, deck_text=deck.text, deck_path=os.path.abspath(
            deck.path) if deck.path else "", versions=versions(), progress=progress,
            model_hash=restart_io.deck_hash(deck), paraview=paraview) as results:
        return _steps(deck, system, results, system.reference_state(), 0)


def _steps(deck: Deck, system: System, results: ResultsFile, state, first: int,
           checkpoint: restart_io.Checkpoint | None = None) -> RunResult:
    """Run the steps of ``deck`` from the ``first`` on ``state``, into ``results``.

    ``checkpoint``: where the step ``first`` continues (a restart): resumed from it, or, for a
    step that runs in one piece, run again from its start (``checkpoint.start``), or skipped
    when the checkpoint is after it (``complete``).
    """
    path = results.path
    summaries = []
    written = {"xdmf": [], "matlab": [], "plots": []}       # beside the results file
    results.checkpoint_interval = deck.output["checkpoint_interval"]
    results.sensors = deck.extra.get("sensors", ())
    if any(s.source.startswith("elements/") for s in results.sensors):
        sensors_io.check_outputs(results.sensors, system.outputs(system.reference_state()))
    for i, spec in enumerate(deck.steps[first:], first):
        interrupt.check()
        results.step_position = i
        resume = None
        if checkpoint is not None and i == first:
            if checkpoint.complete:
                continue
            resume = Resume(checkpoint.start or system.reference_state(), checkpoint.progress)
        step = make_step(spec, system, deck, deck.output["every"])
        log.info("step %s (%s)", spec["name"], spec["type"])
        # steps without frames show their progress as one piece (a sweep: value by value)
        shown = results.progress if not step.FRAMES else None
        if shown is not None:
            shown.begin(spec["name"], spec["type"], step.progress_span(), step.CLOCK)
        try:
            if resume is not None:
                step.run(state, results, resume=resume)
            else:
                step.run(state, results)
        finally:
            if shown is not None:
                shown.end()
        results.write_state(spec["name"], state, progress=step.checkpoint_progress())
        if not step.resumable:
            results.end_checkpoint(spec["name"], state, step.checkpoint_progress())
        summaries.append(_summary(spec, step))
        for kind in step.written_beside():
            if kind in ("modes", "vibration") and not results.paraview:
                continue
            which, paths = BESIDE[kind]
            written[which].extend(paths(path, step.name))
    if results.frames and results.paraview:
        written["xdmf"].insert(0, results.xdmf_path)
    return RunResult(h5=path, steps=summaries, **written)


def _continue(deck: Deck, output: str | None, restart: str, system: System,
              progress=None) -> RunResult:
    """Continue the run that wrote a results file from a checkpoint (:mod:`fem.io.restart`)."""
    target = restart_io.parse_target(restart)
    path = results_path(deck, target.path, restart=True)
    if output is not None and os.path.abspath(results_path(deck, output, restart=True)) != path:
        raise ResultsFileError(f"-o {output}: a restart continues the results file it starts "
                               f"from, {path}; leave -o out or give that file")
    ck = restart_io.prepare(path, deck, target)
    later = ck.steps[ck.position + 1:]
    restart_io.truncate(path, ck, [f(path, s) for s in later
                                   for f in (files.modes_xdmf_path, files.vibration_xdmf_path)])
    log.info("continuing step %s from its checkpoint after frame %d", ck.step, ck.frame)
    with ResultsFile.reopen(path, deck.model, progress=progress) as results:
        return _steps(deck, system, results, ck.state, ck.position, ck)


def _summary(spec, step) -> StepSummary:
    """The step's summary lines, then its warnings."""
    s = StepSummary(spec["name"], spec["type"], step.summary())
    prefix = f"step '{spec['name']}': "
    s.lines.extend(f"warning: {w.removeprefix(prefix)}" for w in step.warnings)
    return s
