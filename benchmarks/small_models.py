"""Small models, where the interpreter rather than the factorization sets the pace (issue 14).

Two comparisons, each measured in one run:

Static cantilever, fem beside OpenSeesPy: time per Newton iteration
    The elastica of ``cases/elastica_cantilever``: a clamped beam of length 1 (EI = 1,
    EA = 1e5), 10 co-rotational Euler-Bernoulli elements, a dead tip force ``P L^2 / EI = 10``
    applied in 20 equal load increments, full Newton, residual tolerance 1e-10 relative
    (fem's block test; OpenSees: ``NormUnbalance`` 1e-10 times the tip force). The time of the
    whole step (fem: its set-up, the limit-point watch, the loads' work; no results file, as
    OpenSees runs without recorders) divided by its Newton iterations (every iteration one
    tangent, one factorization, one solve), the fastest of all runs of each program in
    :data:`ROUNDS` interleaved rounds (fem's 30 runs, then OpenSees's 30; fem's 30 once more at
    the end; the first of fem's loads its compiled kernels), each round's ratio printed too: a
    run is a few milliseconds, and this machine's speed wanders by up to 2x for a second or so.
    fem's increments between two frames are one compiled call (without a results file, the
    whole step: :meth:`fem.analysis.planar_static.PlanarIncrement.batch`); loading numba's
    compiled kernels costs a process 0.3-0.6 s once. OpenSees (``Corotational`` transformation,
    ``elasticBeamColumn``, ``LoadControl``, ``Newton``, ``BandGeneral``) runs in a child
    process that never starts PETSc (see :mod:`benchmarks.slender_arch`); where openseespy
    does not import, fem's row is printed alone.

Sze 3.1 in 3D, fem beside OpenSeesPy: time per Newton iteration
    Sze, Liu and Lo's cantilever under end shear (K. Y. Sze, X. H. Liu, S. H. Lo, "Popular
    benchmark problems for geometric nonlinear analysis of shells", Finite Elements in Analysis
    and Design 40 (2004) 1551-1569, section 3.1: length 10, width 1, thickness 0.1, E = 1.2e6,
    nu = 0, end shear P_max = 4, so P L^2 / EI = 4) as 10 co-rotational 3D beams (EA = 1.2e5,
    EI = 100 in the loaded plane, 1e4 across it, GJ = 200), the load applied in 20 equal
    increments, full Newton, tolerance 1e-10 as above. fem's increments are one compiled call
    each (:mod:`fem.analysis.spatial_static`); OpenSees: ``elasticBeamColumn`` with the 3D
    ``Corotational`` transformation, otherwise the same settings as the elastica. The tips
    agree with the elastica (Mattiasson 1981, Table 1, P L^2 / EI = 4: 1 - x / L = 0.32894,
    w / L = 0.66996) to the beams' discretization and axial strain.

Flexible pendulum, fem beside Exudyn: time steps per second
    The beam of tests/test_gravity.py's pendulum: length 2, EA = 1e4, EI = 10, rho A = 0.5,
    rho I = 5e-4, pinned at one end (ux, uy held, rz free), released at rest from horizontal
    under gravity 9.81 along -y; 1000 steps of 1e-3 s. fem: co-rotational Euler-Bernoulli
    beams with the lumped inertia, the energy-conserving scheme, tolerance 1e-9, with full
    Newton and with modified Newton (``newton = "modified"``: the time step's first tangent
    reused while it contracts; both compared with Exudyn), and generalized-alpha (``fem, g-a``,
    rho_inf 0.8, full Newton; issue 32 asks it within 1.5x of the energy-conserving step, its
    ratio printed). Exudyn:
    ``ObjectBeamGeometricallyExact2D`` (Simo and Vu-Quoc's beam, shear stiffness EA: the shear
    flexibility changes the bending by EI / (EA L^2) = 2.5e-4; stiffer shear made its Newton
    fail beyond 100 elements) between
    ``NodeRigidBody2D`` nodes, the pin as two ``CoordinateConstraint``s, generalized-alpha
    (its default) with the sparse LU (``EigenSparse``). The rate counts the time loop alone
    (first step to last, by each program's per-step callback), best of 3 runs (1 at 1000
    elements) in each of :data:`PENDULUM_ROUNDS` interleaved rounds below 300 elements (fem's
    rows, then Exudyn's): the fastest of all rounds counts, and each round's ratio is printed
    beside (Exudyn's own rate wandered 17,000-38,000 steps/s between runs on this machine).
    ``tip y`` is the free end's height at the end, for a sameness check (the two beam theories
    and schemes differ, so agree to a few digits, not to round-off).
"""

import json
import os
import time

import numpy as np

from benchmarks.common import peer_process
from fem import _petsc
from fem.io.deck import from_dict
from fem.run import make_step
from fem.system import System

MARK = "small_models:"                 # the line of the OpenSees child that carries its results

# --- the static cantilever ------------------------------------------------------------------
N_CANT, LOAD, INCREMENTS, TOL = 10, 10.0, 20, 1e-10
REPEAT = 30                             # runs of each program; the fastest counts (a few ms each)
SYSTEM = "BandGeneral"                  # OpenSees's linear system (LAPACK banded LU)


def cantilever_deck() -> dict:
    """The elastica cantilever (cases/elastica_cantilever) as a deck dict."""
    return {"model": {"dim": 2, "title": "elastica cantilever"},
            "materials": [{"name": "unit", "E": 1.0, "nu": 0.0}],
            "sections": [{"name": "s", "A": 1.0e5, "Iz": 1.0}],
            "nodes": {"coordinates": [[0.0, 0.0], [1.0, 0.0]]},
            "sets": {"root": [1], "tip": [2]},
            "elements": [{"name": "beam", "type": "beam", "formulation": "corotational",
                          "material": "unit", "section": "s", "connectivity": [[1, 2]],
                          "divisions": N_CANT}],
            "supports": [{"nodes": "root", "fixed": ["all"]}],
            "loads": [{"name": "P", "nodes": "tip", "force": [0.0, -1.0]}],
            "steps": [{"name": "bend", "type": "static", "nonlinear": True,
                       "load_factor": LOAD, "increments": INCREMENTS,
                       "max_increment": LOAD / INCREMENTS, "tolerance": TOL}]}


# --- Sze 3.1: the cantilever under end shear, 3D beams ------------------------------------------
SZE_L, SZE_E, SZE_B, SZE_H, SZE_P = 10.0, 1.2e6, 1.0, 0.1, 4.0


def sze_deck() -> dict:
    """Sze et al.'s cantilever under end shear (section 3.1) as 10 3D beams, a deck dict."""
    b, h = SZE_B, SZE_H
    return {"model": {"dim": 3, "title": "Sze 3.1: cantilever under end shear"},
            "materials": [{"name": "m", "E": SZE_E, "nu": 0.0}],
            "sections": [{"name": "strip", "A": b * h, "Iy": b * h**3 / 12, "Iz": h * b**3 / 12,
                          "J": b * h**3 / 3}],
            "nodes": {"coordinates": [[0.0, 0.0, 0.0], [SZE_L, 0.0, 0.0]]},
            "sets": {"root": [1], "tip": [2]},
            "elements": [{"name": "strip", "type": "beam", "formulation": "corotational",
                          "material": "m", "section": "strip", "connectivity": [[1, 2]],
                          "divisions": N_CANT, "orientation": [0.0, 1.0, 0.0]}],
            "supports": [{"nodes": "root", "fixed": ["all"]}],
            "loads": [{"name": "P", "nodes": "tip", "force": [0.0, 0.0, 1.0]}],
            "steps": [{"name": "shear", "type": "static", "nonlinear": True,
                       "load_factor": SZE_P, "increments": INCREMENTS,
                       "max_increment": SZE_P / INCREMENTS, "tolerance": TOL}]}


def fem_cantilever(make_deck=None) -> dict:
    """fem on a cantilever: seconds per Newton iteration, iterations, tip displacement.

    ``make_deck``: the deck's function (:func:`cantilever_deck`, the default, or
    :func:`sze_deck`). Without a results file, as OpenSees runs without recorders; the
    iterations are the step's count (``progress.iterations``); the tip's ``ux`` and its
    deflection (``uy`` in 2D, ``uz`` in 3D).
    """
    _petsc.init()
    deck = from_dict((make_deck or cantilever_deck)())
    best = None
    for _ in range(REPEAT):
        system = System(deck.model)
        state = system.reference_state()
        step = make_step(deck.steps[0], system, deck)
        t = time.perf_counter()
        step.run(state, None)
        elapsed = time.perf_counter() - t
        its = step.progress.iterations
        tip = int(np.argmax(deck.model.X[:, 0]))        # divisions number the tip node 2
        res = {"per_iteration": elapsed / its, "iterations": its,
               "tip": state.u[tip, [0, deck.model.dim - 1]].tolist()}
        if best is None or res["per_iteration"] < best["per_iteration"]:
            best = res
    return best


def opensees_cantilever(ops) -> dict:
    """The same cantilever in OpenSees (``ops``: ``openseespy.opensees``), fastest of REPEAT."""
    best = None
    for _ in range(REPEAT):
        ops.wipe()
        ops.model("basic", "-ndm", 2, "-ndf", 3)
        for i in range(N_CANT + 1):
            ops.node(i + 1, i / N_CANT, 0.0)
        ops.fix(1, 1, 1, 1)
        ops.geomTransf("Corotational", 1)
        for i in range(N_CANT):
            ops.element("elasticBeamColumn", i + 1, i + 1, i + 2, 1.0e5, 1.0, 1.0, 1)
        ops.timeSeries("Linear", 1)
        ops.pattern("Plain", 1, 1)
        ops.load(N_CANT + 1, 0.0, -LOAD, 0.0)
        ops.system(SYSTEM)
        ops.numberer("RCM")
        ops.constraints("Plain")
        ops.test("NormUnbalance", TOL * LOAD, 25, 0)
        ops.algorithm("Newton")
        ops.integrator("LoadControl", 1.0 / INCREMENTS)
        ops.analysis("Static")
        iterations = 0
        t = time.perf_counter()
        for _ in range(INCREMENTS):
            if ops.analyze(1) != 0:
                raise RuntimeError("OpenSees did not converge on the cantilever")
            iterations += ops.testIter()
        elapsed = time.perf_counter() - t
        res = {"per_iteration": elapsed / iterations, "iterations": iterations,
               "tip": [ops.nodeDisp(N_CANT + 1, 1), ops.nodeDisp(N_CANT + 1, 2)]}
        if best is None or res["per_iteration"] < best["per_iteration"]:
            best = res
    ops.wipe()
    return best


def opensees_sze(ops) -> dict:
    """Sze 3.1 in OpenSees (3D ``Corotational``), fastest of REPEAT."""
    b, h = SZE_B, SZE_H
    best = None
    for _ in range(REPEAT):
        ops.wipe()
        ops.model("basic", "-ndm", 3, "-ndf", 6)
        for i in range(N_CANT + 1):
            ops.node(i + 1, SZE_L * i / N_CANT, 0.0, 0.0)
        ops.fix(1, 1, 1, 1, 1, 1, 1)
        ops.geomTransf("Corotational", 1, 0.0, 0.0, 1.0)      # local z along global z
        for i in range(N_CANT):
            ops.element("elasticBeamColumn", i + 1, i + 1, i + 2, b * h, SZE_E, SZE_E / 2,
                        b * h**3 / 3, b * h**3 / 12, h * b**3 / 12, 1)
        ops.timeSeries("Linear", 1)
        ops.pattern("Plain", 1, 1)
        ops.load(N_CANT + 1, 0.0, 0.0, SZE_P, 0.0, 0.0, 0.0)
        ops.system(SYSTEM)
        ops.numberer("RCM")
        ops.constraints("Plain")
        ops.test("NormUnbalance", TOL * SZE_P, 25, 0)
        ops.algorithm("Newton")
        ops.integrator("LoadControl", 1.0 / INCREMENTS)
        ops.analysis("Static")
        iterations = 0
        t = time.perf_counter()
        for _ in range(INCREMENTS):
            if ops.analyze(1) != 0:
                raise RuntimeError("OpenSees did not converge on Sze's cantilever")
            iterations += ops.testIter()
        elapsed = time.perf_counter() - t
        res = {"per_iteration": elapsed / iterations, "iterations": iterations,
               "tip": [ops.nodeDisp(N_CANT + 1, 1), ops.nodeDisp(N_CANT + 1, 3)]}
        if best is None or res["per_iteration"] < best["per_iteration"]:
            best = res
    ops.wipe()
    return best


def opensees_child():
    """Child process: print OpenSees's cantilever results (never imports PETSc)."""
    try:
        import openseespy.opensees as ops
    except Exception as err:  # noqa: BLE001 (ImportError, or a binary that does not load)
        print(MARK + json.dumps({"error": f"{type(err).__name__}: {err}"}), flush=True)
        return
    import tempfile

    ops.logFile(os.path.join(tempfile.gettempdir(), "fem_small_models_opensees.log"), "-noEcho")
    print(MARK + json.dumps({"result": {"elastica": opensees_cantilever(ops),
                                        "sze": opensees_sze(ops)}}), flush=True)


def opensees() -> tuple[dict | None, str]:
    """OpenSees's cantilever results (``elastica``, ``sze``), or why there are none."""
    return peer_process("small_models", MARK, "result")


# --- the flexible pendulum ------------------------------------------------------------------
SIZES = (10, 100, 300, 1000)
L, EA, EI, RHOA, RHOI, G = 2.0, 1.0e4, 10.0, 0.5, 5.0e-4, 9.81
SHEAR = EA                              # Exudyn's shear stiffness: EI / (SHEAR L^2) = 2.5e-4
H, STEPS = 1e-3, 1000


def pendulum_deck(n: int, newton: str = "full", integrator: str = "energy_conserving") -> dict:
    """The flexible pendulum with ``n`` elements as a deck dict (area 1: E = EA, Iz = EI / EA).

    ``newton``: the dynamic step's ``newton`` key (full, or modified Newton); ``integrator``
    its integrator.
    """
    return {"model": {"dim": 2, "title": f"flexible pendulum, {n} beams"},
            "materials": [{"name": "m", "E": EA, "nu": 0.0}],
            "sections": [{"name": "s", "A": 1.0, "Iz": EI / EA, "mass_per_length": RHOA,
                          "rotary_inertia_per_length": RHOI}],
            "nodes": {"coordinates": [[0.0, 0.0], [L, 0.0]]},
            "sets": {"pin": [1]},
            "elements": [{"name": "beam", "type": "beam", "formulation": "corotational",
                          "material": "m", "section": "s", "connectivity": [[1, 2]],
                          "divisions": n}],
            "supports": [{"nodes": "pin", "fixed": ["ux", "uy"]}],
            "gravity": {"acceleration": [0.0, -G]},
            "steps": [{"name": "swing", "type": "dynamic", "integrator": integrator,
                       "time_step": H, "duration": H * STEPS, "output_interval": H * STEPS,
                       "newton": newton}]}


BUDGET = 300.0          # seconds of fem's time loop before a run is called unfinished


class _OutOfTime(Exception):
    pass


def fem_pendulum(n: int, newton: str = "full", integrator: str = "energy_conserving") -> dict:
    """fem on the pendulum: steps per second over the time loop, iterations/step, tip y.

    The clock starts at the first step's end (the ``on_step`` callback, which then removes
    itself: a callback at every step would make the steps go one at a time,
    :mod:`fem.integrators.planar_run`) and stops when the step returns. The iterations are
    counted from the runs' record and the steps taken one at a time. A run still going after
    :data:`BUDGET` seconds is stopped at its next single step and reported unfinished, with the
    time it reached and its step-size halvings.
    """
    from fem.integrators import planar_run

    _petsc.init()
    deck = from_dict(pendulum_deck(n, newton, integrator))
    system = System(deck.model)
    state = system.reference_state()
    step = make_step(deck.steps[0], system, deck, deck.output["every"])
    stamps, its, record = [], [0], []
    one = step._advance

    def advance(s0):                   # a step taken one at a time
        if stamps and time.perf_counter() - stamps[0] > BUDGET:
            raise _OutOfTime
        out = one(s0)
        its[0] += step._stats["iterations"]
        return out

    def on_step(s):                    # the first step's end starts the clock
        stamps.append(time.perf_counter())
        step.on_step = None

    make = planar_run.PlanarRun.make

    def made(step):
        runs = make(step)
        if runs is not None:
            runs.record = record
        return runs

    step._advance, step.on_step = advance, on_step
    planar_run.PlanarRun.make = made
    try:
        step.run(state, None)
        stamps.append(time.perf_counter())
    except _OutOfTime:
        return {"rate": float("nan"), "its": its[0] / step.steps, "tip": float("nan"),
                "unfinished": f"unfinished after {BUDGET:g} s: t = {state.t:.4g} s, "
                              f"{step.cuts} step halvings"}
    finally:
        planar_run.PlanarRun.make = make
    its[0] += sum(i for i, _ in record)
    tip = deck.model.X[:, :2] + state.u[:, :2]
    k = int(np.argmax(np.linalg.norm(deck.model.X[:, :2], axis=1)))
    return {"rate": (step.steps - 1) / (stamps[-1] - stamps[0]), "its": its[0] / step.steps,
            "tip": float(tip[k, 1])}


def exudyn_pendulum(exu, n: int) -> dict:
    """The pendulum in Exudyn (see the module docstring)."""
    from exudyn.itemInterface import (
        CoordinateConstraint,
        LoadForceVector,
        MarkerNodeCoordinate,
        MarkerNodePosition,
        NodePointGround,
        NodeRigidBody2D,
        ObjectBeamGeometricallyExact2D,
    )

    sc = exu.SystemContainer()
    mbs = sc.AddSystem()
    ground = mbs.AddNode(NodePointGround())
    le = L / n
    nodes = [mbs.AddNode(NodeRigidBody2D(referenceCoordinates=[i * le, 0.0, 0.0]))
             for i in range(n + 1)]
    for a, b in zip(nodes[:-1], nodes[1:], strict=True):
        mbs.AddObject(ObjectBeamGeometricallyExact2D(
            nodeNumbers=[a, b], length=le, massPerLength=RHOA, crossSectionInertia=RHOI,
            bendingStiffness=EI, axialStiffness=EA, shearStiffness=SHEAR))
    for c in (0, 1):
        mbs.AddObject(CoordinateConstraint(markerNumbers=[
            mbs.AddMarker(MarkerNodeCoordinate(nodeNumber=ground, coordinate=c)),
            mbs.AddMarker(MarkerNodeCoordinate(nodeNumber=nodes[0], coordinate=c))]))
    # gravity: the lumped weight of each node (half an element at the ends)
    w = np.full(n + 1, RHOA * le * G)
    w[[0, -1]] *= 0.5
    for node, wk in zip(nodes, w, strict=True):
        mbs.AddLoad(LoadForceVector(markerNumber=mbs.AddMarker(MarkerNodePosition(
            nodeNumber=node)), loadVector=[0.0, -float(wk), 0.0]))
    from benchmarks.multibody import timed_solve

    rate = timed_solve(exu, mbs, STEPS, STEPS * H, "GeneralizedAlpha",
                       f"the pendulum of {n} beams")
    tip = mbs.GetNodeOutput(nodes[-1], exu.OutputVariableType.Position)
    it = mbs.sys["dynamicSolver"].it
    return {"rate": rate, "its": it.newtonStepsCount / STEPS, "tip": float(tip[1])}


def cantilever_rows(fem: dict, title: str, peer: dict | None, why: str,
                    rounds: list[float]) -> None:
    """Print one cantilever's rows: fem, OpenSees (``peer``), the ratio per iteration.

    ``fem``, ``peer``: the fastest of all rounds; ``rounds``: each round's ratio (fem's best
    over OpenSees's best in that round), which shows how far the machine's load moved it.
    """
    print(f"{title} in {INCREMENTS} increments: time per Newton iteration")
    print(f"{'program':<12} {'ms/iteration':>12} {'iterations':>10} {'tip ux':>10} "
          f"{'tip defl.':>10}")
    rows = [("fem", fem)] + ([("OpenSees", peer)] if peer else [])
    for name, r in rows:
        print(f"{name:<12} {1e3 * r['per_iteration']:>12.4f} {r['iterations']:>10} "
              f"{r['tip'][0]:>10.6f} {r['tip'][1]:>10.6f}")
    if peer:
        ratio = fem["per_iteration"] / peer["per_iteration"]
        print(f"fem / OpenSees time per iteration: {ratio:.3g} (best against best; each "
              f"round: {', '.join(f'{x:.3g}' for x in rounds)})")
    else:
        print(f"OpenSees: not run, {why}")


def _fastest(run, repeat: int) -> dict:
    runs = [run() for _ in range(repeat)]
    return max(runs, key=lambda r: -1.0 if np.isnan(r["rate"]) else r["rate"])


#: rounds of the cantilevers, each fem's REPEAT runs then OpenSees's (interleaved)
ROUNDS = 3


def cantilevers(rounds: int = ROUNDS):
    """The two static cantilevers beside OpenSees (``python -c "from benchmarks.small_models
    import cantilevers; cantilevers()"`` runs them alone).

    ``rounds`` times fem's :data:`REPEAT` runs of each model, then OpenSees's in its child
    process, then fem's once more at the end: the fastest of each program counts, and each
    round's ratio is printed beside (the machine's speed wanders between rounds).
    """
    models = (
        ("elastica", cantilever_deck,
         f"Static cantilever, {N_CANT} co-rotational beams, P L^2/EI = {LOAD:g}"),
        ("sze", sze_deck, f"Sze 3.1, {N_CANT} co-rotational 3D beams, P L^2/EI = "
                          f"{SZE_P * SZE_L**2 / (SZE_E * SZE_B * SZE_H**3 / 12):g}"))
    print(f"load average {os.getloadavg()[0]:.2f} (1 min) at the start")
    fast = lambda a, b: a if b is None or a["per_iteration"] <= b["per_iteration"] else b  # noqa
    best = {key: None for key, _, _ in models}
    peer = {key: None for key, _, _ in models}
    ratios = {key: [] for key, _, _ in models}
    why = ""
    for _ in range(rounds):
        mine = {key: fem_cantilever(make_deck) for key, make_deck, _ in models}
        ops, why = opensees()
        for key, _, _ in models:
            best[key] = fast(mine[key], best[key])
            if ops:
                peer[key] = fast(ops[key], peer[key])
                ratios[key].append(mine[key]["per_iteration"] / ops[key]["per_iteration"])
    for key, make_deck, title in models:
        best[key] = fast(fem_cantilever(make_deck), best[key])
        cantilever_rows(best[key], title, peer[key], why, ratios[key])
        print()
    print(f"load average {os.getloadavg()[0]:.2f} (1 min) at the end")


#: rounds of the pendulum below :data:`ONE_ROUND` elements: fem's three rows, then Exudyn's
PENDULUM_ROUNDS = 5
ONE_ROUND = 300                         # from this size one round (a run takes seconds)
FEM_ROWS = (("full", "energy_conserving", "fem"), ("modified", "energy_conserving", "fem, mod."),
            ("full", "generalized_alpha", "fem, g-a"))


def pendulum(exu, n: int, rounds: int) -> tuple[dict, dict | None, list[dict], str]:
    """The pendulum of ``n`` elements, fem's rows and Exudyn's in ``rounds`` interleaved rounds.

    Each round takes the fastest of 3 runs of each program (1 from 1000 elements). Returns the
    fastest of all rounds per fem row, Exudyn's (None: not run or failed), each round's rates
    (``{row: steps/s}``, Exudyn's under ``"Exudyn"``) and why Exudyn has no row.
    """
    repeat = 1 if n >= 1000 else 3
    best, peer, per_round, why = {}, None, [], ""
    faster = lambda a, b: a if b is None or a["rate"] >= b["rate"] else b  # noqa: E731
    for _ in range(rounds):
        rates = {}
        for newton, integrator, name in FEM_ROWS:
            f = _fastest(lambda n=n, nw=newton, i=integrator: fem_pendulum(n, nw, i), repeat)
            best[name] = f if np.isnan(f["rate"]) else faster(f, best.get(name))
            rates[name] = f["rate"]
        if exu and not why:
            try:
                x = _fastest(lambda n=n: exudyn_pendulum(exu, n), repeat)
            except (RuntimeError, exu.SolverError) as err:   # its Newton gave up
                why = f"failed: {str(err).splitlines()[0][:60]}"
            else:
                peer = faster(x, peer)
                rates["Exudyn"] = x["rate"]
        per_round.append(rates)
    return best, (None if why else peer), per_round, why


def main(sizes=SIZES, rounds: int = PENDULUM_ROUNDS):
    cantilevers()
    try:
        import exudyn as exu
    except ImportError:
        exu = None
    print(f"Flexible pendulum (pinned beam under gravity), {STEPS} steps of {H:g} s: steps per "
          "second; fem energy-conserving and generalized-alpha (g-a)"
          + (", Exudyn generalized-alpha" if exu else "")
          + f"; the fastest of {rounds} interleaved rounds below {ONE_ROUND} elements")
    if exu is None:
        print("Exudyn is missing (the extra 'peers'): fem's rows only")
    print(f"load average {os.getloadavg()[0]:.2f} (1 min) at the start")
    print(f"{'elements':>8} {'program':<10} {'steps/s':>9} {'its/step':>8} {'tip y':>10}")
    ratios, alpha = [], []
    for n in sizes:
        fems, x, per_round, why = pendulum(exu, n, rounds if n < ONE_ROUND else 1)
        for _, _, name in FEM_ROWS:
            f = fems[name]
            print(f"{n:>8} {name:<10} {f['rate']:>9.4g} {f['its']:>8.3g} {f['tip']:>10.6f}"
                  + (f"  {f['unfinished']}" if "unfinished" in f else ""))
        each = lambda a, b: ", ".join(f"{r[a] / r[b]:.3g}" for r in per_round)  # noqa: E731
        alpha.append(f"{n:>8} elements: fem generalized-alpha / energy-conserving steps per "
                     f"second {fems['fem, g-a']['rate'] / fems['fem']['rate']:.3g} (best "
                     f"against best; each round: {each('fem, g-a', 'fem')})")
        if why:
            print(f"{n:>8} {'Exudyn':<10} {why}")
        if x is None:
            continue
        print(f"{n:>8} {'Exudyn':<10} {x['rate']:>9.4g} {x['its']:>8.3g} {x['tip']:>10.6f}")
        ratios.append(f"{n:>8} elements: fem / Exudyn steps per second "
                      f"{fems['fem']['rate'] / x['rate']:.3g} (full Newton; each round: "
                      f"{each('fem', 'Exudyn')}), "
                      f"{fems['fem, mod.']['rate'] / x['rate']:.3g} (modified; "
                      f"{each('fem, mod.', 'Exudyn')}), "
                      f"{fems['fem, g-a']['rate'] / x['rate']:.3g} (generalized-alpha; "
                      f"{each('fem, g-a', 'Exudyn')})")
    for line in alpha + ratios:
        print(line)
    print(f"load average {os.getloadavg()[0]:.2f} (1 min) at the end")
