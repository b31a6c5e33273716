"""Run a deck: build the system once, run its steps in order on one state, write results."""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field

from fem import interrupt
from fem.analysis import STEP_TYPES
from fem.info import versions
from fem.io import files
from fem.io.deck import Deck
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


def results_path(deck: Deck, output: str) -> str:
    """The checked absolute path of the results file ``output`` for a run of ``deck``."""
    beside = [s["name"] for s in deck.steps if STEP_TYPES[s["type"]].WRITES]
    return files.results_path(output, inputs(deck), beside)


def run(deck: Deck, output: str, progress=None) -> RunResult:
    """Run every step of ``deck``, writing ``output`` (HDF5) and XDMF files beside it.

    ``progress`` is an optional :class:`fem.progress.Progress`. Between steps and inside them the
    run stops at a signal (:mod:`fem.interrupt`), keeping every frame written.
    """
    path = results_path(deck, output)
    system = System(deck.model)
    state = system.reference_state()
    summaries = []
    written = {"xdmf": [], "matlab": [], "plots": []}       # beside the results file
    with ResultsFile(path, deck.model, deck_text=deck.text, deck_path=os.path.abspath(
            deck.path) if deck.path else "", versions=versions(), progress=progress) as results:
        results.checkpoint_interval = deck.output["checkpoint_interval"]
        for i, spec in enumerate(deck.steps):
            interrupt.check()
            results.step_position = i
            step = make_step(spec, system, deck, deck.output["every"])
            log.info("step %s (%s)", spec["name"], spec["type"])
            step.run(state, results)
            results.write_state(spec["name"], state, progress=step.checkpoint_progress())
            if not step.resumable:
                results.end_checkpoint(spec["name"], state, step.checkpoint_progress())
            summaries.append(_summary(spec, step))
            for kind in step.written_beside():
                which, paths = BESIDE[kind]
                written[which].extend(paths(path, step.name))
        if results.frames:
            written["xdmf"].insert(0, results.xdmf_path)
    return RunResult(h5=path, steps=summaries, **written)


def _summary(spec, step) -> StepSummary:
    """The step's summary lines, then its warnings."""
    s = StepSummary(spec["name"], spec["type"], step.summary())
    prefix = f"step '{spec['name']}': "
    s.lines.extend(f"warning: {w.removeprefix(prefix)}" for w in step.warnings)
    return s
