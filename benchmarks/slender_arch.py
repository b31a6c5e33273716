"""A slender clamped arch in 10 equal load increments: fem's Newton beside OpenSees's.

A quarter circle of radius 10 (E = 1.2e6, A = 0.1, I = 8.333e-5, nu = 0), 1000 co-rotational
Euler-Bernoulli elements, clamped at (10, 0) where its tangent is vertical, free at the crown
(0, 10) under a dead vertical force of 4 (P R^2 / EI = 4): the crown falls by 16.34 and turns by
99 degrees. Each program applies the force in 10 equal increments with full Newton and may not cut
them back; fem also runs with its cut-backs (the default), OpenSees also with 40 increments.
fem's load-control increments of planar beams are one compiled call each
(:mod:`fem.analysis.planar_static`); loading the compiled kernels (numba, once a process) is
timed apart, on a 10-element warm-up.

OpenSees runs where ``openseespy`` imports (an optional extra: ``pip install --no-deps openseespy
openseespylinux``, keeping the installed numpy): Corotational transformation, elasticBeamColumn,
LoadControl, Newton, and a NormDispIncr or NormUnbalance test (25 iterations each, as fem). Its
beam has no second-order strains, so its crown differs from fem's in the 6th digit. It runs in a
child process that never starts PETSc: OpenSeesPy's library crashes on import (in MPI_Comm_rank)
once petsc4py has initialized MPI in the same process.
"""

import json
import math
import os
import sys
import tempfile
import time

import numpy as np

from benchmarks.common import peer_process
from fem import _petsc
from fem.errors import ConvergenceError
from fem.io.deck import from_dict
from fem.run import make_step
from fem.system import System

R, E, A, I, P = 10.0, 1.2e6, 0.1, 8.333e-5, 4.0
MAX_ITERATIONS = 25
MARK = "slender_arch:"         # the line of the OpenSees child process that carries its results


def arch_nodes(n: int) -> np.ndarray:
    """(n + 1, 2) nodes from the clamped end (10, 0) to the crown (0, 10)."""
    t = np.linspace(0.0, math.pi / 2, n + 1)
    return np.c_[R * np.cos(t), R * np.sin(t)]


def arch_deck(n: int, increments: int, cutbacks: bool) -> dict:
    """The deck (as a dict) of the arch with ``n`` elements, loaded in ``increments`` steps."""
    step = {"name": "load", "type": "static", "nonlinear": True, "increments": increments,
            "max_increment": 1.0 / increments, "max_iterations": MAX_ITERATIONS}
    if not cutbacks:
        step["min_increment"] = 1.0 / increments         # no halving below the increment
    return {"model": {"dim": 2, "title": "slender clamped quarter-circle arch"},
            "materials": [{"name": "m", "E": E, "nu": 0.0}],
            "sections": [{"name": "s", "A": A, "Iz": I}],
            "nodes": {"coordinates": arch_nodes(n).tolist()},
            "sets": {"clamp": [1], "crown": [n + 1]},
            "elements": [{"name": "arch", "type": "beam", "formulation": "corotational",
                          "material": "m", "section": "s",
                          "connectivity": [[i, i + 1] for i in range(1, n + 1)]}],
            "supports": [{"nodes": "clamp", "fixed": ["all"]}],
            "loads": [{"name": "P", "nodes": "crown", "force": [0.0, -P]}],
            "steps": [step]}


class _Increments:
    """A results recorder that keeps only (load factor, Newton iterations) of each increment."""

    def __init__(self):
        self.done: list[tuple[float, int]] = []

    def begin_step(self, *args, **kwargs):
        return self

    def advance(self, value, iterations=None):
        self.done.append((float(value), int(iterations or 0)))

    def frame(self, *args, **kwargs):
        pass

    def close(self):
        pass


def run_fem(n: int, increments: int, cutbacks: bool) -> dict:
    """fem on the arch: converged?, iterations of each converged increment, time, crown."""
    _petsc.init()
    deck = from_dict(arch_deck(n, increments, cutbacks))
    system = System(deck.model)
    state = system.reference_state()
    step = make_step(deck.steps[0], system, deck)
    record = _Increments()
    t = time.perf_counter()
    failure, at = "", 0.0
    try:
        step.run(state, record)
    except ConvergenceError as err:
        failure, at = str(err).split(";")[0].split(" (")[0], err.time or 0.0
        if err.iteration is not None and err.norms:
            failure += f" at iteration {err.iteration}, residual {err.norms[-1]:.1e}"
    return {"ok": not failure, "iterations": [k for _, k in record.done], "failure": failure,
            "time": time.perf_counter() - t, "crown": state.u[-1, :2].tolist(), "at": at}


def run_opensees(ops, n: int, increments: int, test: str, tol: float) -> dict:
    """The same arch in OpenSees (``ops``: ``openseespy.opensees``)."""
    ops.wipe()
    ops.model("basic", "-ndm", 2, "-ndf", 3)
    for i, (x, y) in enumerate(arch_nodes(n)):
        ops.node(i + 1, float(x), float(y))
    ops.fix(1, 1, 1, 1)
    ops.geomTransf("Corotational", 1)
    for i in range(n):
        ops.element("elasticBeamColumn", i + 1, i + 1, i + 2, A, E, I, 1)
    ops.timeSeries("Linear", 1)
    ops.pattern("Plain", 1, 1)
    ops.load(n + 1, 0.0, -P, 0.0)
    ops.system("UmfPack")
    ops.numberer("RCM")
    ops.constraints("Plain")
    ops.test(test, tol, MAX_ITERATIONS, 0)
    ops.algorithm("Newton")
    ops.integrator("LoadControl", 1.0 / increments)
    ops.analysis("Static")
    iterations, failure, k = [], "", 0
    t = time.perf_counter()
    for k in range(increments):
        if ops.analyze(1) != 0:
            failure = f"no convergence in {MAX_ITERATIONS} iterations"
            break
        iterations.append(ops.testIter())
    elapsed = time.perf_counter() - t
    crown = [ops.nodeDisp(n + 1, 1), ops.nodeDisp(n + 1, 2)]
    ops.wipe()
    return {"ok": not failure, "iterations": iterations, "time": elapsed, "crown": crown,
            "failure": failure, "at": (k + 1) / increments}


def opensees_child():
    """Child process: read ``{"n", "runs"}`` (JSON) on stdin, print the OpenSees results."""
    job = json.load(sys.stdin)
    try:
        import openseespy.opensees as ops
    except Exception as err:  # noqa: BLE001 (ImportError, or a binary that does not load)
        print(MARK + json.dumps({"error": f"{type(err).__name__}: {err}"}), flush=True)
        return
    ops.logFile(os.path.join(tempfile.gettempdir(), "fem_slender_arch_opensees.log"), "-noEcho")
    out = [run_opensees(ops, job["n"], *run) for run in job["runs"]]
    print(MARK + json.dumps({"results": out}), flush=True)


def opensees(n: int, runs: list) -> tuple[list | None, str]:
    """OpenSees results of ``runs`` ((increments, test, tol) each), or why there are none."""
    return peer_process("slender_arch", MARK, "results", json.dumps({"n": n, "runs": runs}),
                        timeout=1800)


def _row(name: str, increments: int, res: dict) -> str:
    its = res["iterations"]
    if res["ok"]:
        outcome = f"{len(its):>3} increments, iterations {max(its):>2} max {sum(its):>4} total"
        crown = f"{res['crown'][0]:9.5f} {res['crown'][1]:10.5f}"
    else:
        outcome = f"fails at load factor {res['at']:.3g}: {res['failure']}"
        crown = ""
    return f"{name:<34} {increments:>5}  {outcome:<72} {res['time']:6.2f} {crown}"


def main(n: int = 1000):
    print(f"Slender clamped arch, {n} co-rotational beams, dead crown force P R^2/EI = 4, full "
          "Newton in equal increments")
    t = time.perf_counter()
    run_fem(10, 1, True)                    # loads fem's compiled kernels: once a process
    print(f"(fem: loading the compiled kernels and a 10-element warm-up "
          f"{time.perf_counter() - t:.2f} s)")
    print(f"{'program':<34} {'asked':>5}  {'outcome':<72} {'s':>6} {'crown ux, uy':>20}")
    for cutbacks in (False, True):
        res = run_fem(n, 10, cutbacks)
        print(_row("fem, cut-backs allowed" if cutbacks else "fem, no cut-back", 10, res))
        if cutbacks and res["ok"]:
            print(f"{'':<42}iterations per increment {res['iterations']}")
    runs = [(k, test, tol) for k in (10, 40)
            for test, tol in (("NormDispIncr", 1e-8), ("NormUnbalance", 1e-5))]
    results, why = opensees(n, runs)
    if results is None:
        print(f"OpenSees: not run, {why}")
        return
    for (k, test, tol), res in zip(runs, results, strict=True):
        print(_row(f"OpenSees, {test} {tol:g}", k, res))
