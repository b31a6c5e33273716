"""Run a deck: build the system once, run its steps in order on one state, write results."""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field

import numpy as np

from fem import interrupt
from fem.analysis.buckling import BucklingStep
from fem.analysis.cms import CmsReduceStep
from fem.analysis.dynamic import DynamicStep
from fem.analysis.eliminated import EliminatedStep
from fem.analysis.linearize import LinearizeStep
from fem.analysis.modal import ModalStep
from fem.analysis.modify import ModifyStep
from fem.analysis.static import StaticStep
from fem.analysis.sweep import SweepStep
from fem.info import versions
from fem.io import files
from fem.io.deck import Deck
from fem.io.hdf5 import ResultsFile
from fem.loads import StepLoads
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


def make_step(spec: dict, system: System, deck: Deck, output_every: int = 1):
    """The step object of a deck step description."""
    settings = spec.get("settings")
    t_end = getattr(settings, "load_factor", None) or getattr(settings, "duration", 1.0)
    loads = StepLoads(system.model, spec["loads"], spec["type"], spec["prescribed"],
                      spec.get("remove", ()), t_end=t_end)
    if spec["type"] == "dynamic":
        if settings.formulation != "multipliers":
            return EliminatedStep(spec["name"], system, loads, settings,
                                  solver_options=deck.solver_options, output_every=output_every)
        return DynamicStep(spec["name"], system, loads, settings,
                           solver_options=deck.solver_options, output_every=output_every)
    if spec["type"] == "buckling":
        return BucklingStep(spec["name"], system, loads, spec["settings"],
                            solver_options=deck.solver_options)
    if spec["type"] == "stability_sweep":
        return SweepStep(spec["name"], system, loads, spec["settings"],
                         solver_options=deck.solver_options)
    if spec["type"] == "linearize":
        return LinearizeStep(spec["name"], system, loads, spec["settings"],
                             solver_options=deck.solver_options)
    if spec["type"] == "modal":
        return ModalStep(spec["name"], system, loads, spec["settings"],
                         solver_options=deck.solver_options)
    if spec["type"] == "modify":
        return ModifyStep(spec["name"], system, loads, spec["settings"],
                          solver_options=deck.solver_options)
    if spec["type"] == "cms_reduce":
        return CmsReduceStep(spec["name"], system, loads, spec["settings"],
                             solver_options=deck.solver_options,
                             source=os.path.abspath(deck.path) if deck.path else "")
    return StaticStep(spec["name"], system, loads, spec["settings"],
                      solver_options=deck.solver_options, output_every=output_every)


def inputs(deck: Deck) -> list[str]:
    """The files a run of ``deck`` reads: the deck and its mesh file (never to be overwritten)."""
    paths = [os.path.abspath(deck.path)] if deck.path else []
    return paths + list(deck.extra.get("inputs", ()))


def results_path(deck: Deck, output: str) -> str:
    """The checked absolute path of the results file ``output`` for a run of ``deck``."""
    modes = [s["name"] for s in deck.steps
             if s["type"] in ("buckling", "modal", "linearize", "stability_sweep", "cms_reduce",
                               "modify")]
    return files.results_path(output, inputs(deck), modes)


def run(deck: Deck, output: str, progress=None) -> RunResult:
    """Run every step of ``deck``, writing ``output`` (HDF5) and XDMF files beside it.

    ``progress`` is an optional :class:`fem.progress.Progress`. Between steps and inside them the
    run stops at a signal (:mod:`fem.interrupt`), keeping every frame written.
    """
    path = results_path(deck, output)
    system = System(deck.model)
    state = system.reference_state()
    summaries = []
    xdmf = []
    matlab = []
    plots = []
    with ResultsFile(path, deck.model, deck_text=deck.text, deck_path=os.path.abspath(
            deck.path) if deck.path else "", versions=versions(), progress=progress) as results:
        for spec in deck.steps:
            interrupt.check()
            step = make_step(spec, system, deck, deck.output["every"])
            log.info("step %s (%s)", spec["name"], spec["type"])
            step.run(state, results)
            results.write_state(spec["name"], state, progress=step.progress)
            summaries.append(_summary(spec, step, state, system))
            if isinstance(step, BucklingStep | ModalStep | CmsReduceStep | ModifyStep) \
                    and getattr(step, "xdmf", None):
                xdmf.append(step.xdmf)
                if not isinstance(step, BucklingStep):      # its modes vibrating, beside them
                    xdmf.append(files.vibration_xdmf_path(path, step.name))
            if isinstance(step, SweepStep):
                plots.extend(files.sweep_png_path(path, step.name, p)
                             for p in ("campbell", "stability"))
            elif isinstance(step, LinearizeStep) and step.state_space is not None:
                matlab.append(files.matlab_path(path, step.name))
        if results.frames:
            xdmf.insert(0, results.xdmf_path)
    return RunResult(h5=path, xdmf=xdmf, steps=summaries, matlab=matlab, plots=plots)


def _summary(spec, step, state, system) -> StepSummary:
    s = _outcome(spec, step, state, system)
    prefix = f"step '{spec['name']}': "
    s.lines.extend(f"warning: {w.removeprefix(prefix)}" for w in getattr(step, "warnings", ()))
    return s


def _outcome(spec, step, state, system) -> StepSummary:
    s = StepSummary(spec["name"], spec["type"])
    if isinstance(step, DynamicStep):
        s.lines.extend(step.summary())
        return s
    if isinstance(step, SweepStep | CmsReduceStep | ModifyStep):
        s.lines.extend(step.summary())
        return s
    if isinstance(step, LinearizeStep):
        e = step.eigen
        scale = float(np.abs(e.values).max(initial=0.0))
        for i, p in enumerate(e.values):
            # round-off below 1e-12 of the largest |p| shows as 0
            re = p.real if abs(p.real) > 1e-12 * scale else 0.0
            zeta = e.damping_ratios[i] if re else 0.0
            s.lines.append(f"p {i + 1}: {re:.6g} {p.imag:+.6g}i ({e.frequencies[i]:.6g} "
                           f"rad/s, damping ratio {zeta:.3g}, error bound {e.bounds[i]:.2g})")
        s.lines.append(e.verdict().describe())
        return s
    if isinstance(step, ModalStep):
        for i, (w, hz) in enumerate(zip(step.frequencies(), step.frequencies() / (2 * np.pi),
                                        strict=True)):
            s.lines.append(f"mode {i + 1}: {w:.6g} rad/s ({hz:.6g} Hz)")
        return s
    if isinstance(step, BucklingStep):
        for i, lam in enumerate(step.factors):
            s.lines.append(f"mode {i + 1}: load factor {lam:.6g}")
        if len(step.factors) == 0 and not step.warnings:
            s.lines.append("no real positive buckling factor")
        if step.interior_modes:
            s.lines.append(f"with the beams' interior modes: {step.n_interior} "
                           f"unknowns besides the {system.n_free} nodal ones")
        return s
    u = state.u
    k = int(np.argmax(np.linalg.norm(u, axis=1)))
    s.lines.append(f"load factor {state.t:.6g}; largest displacement {np.linalg.norm(u[k]):.6g} "
                   f"at node {system.model.node_ids[k]}")
    s.lines.append(f"strain energy {system.strain_energy(state):.6g}")
    return s
