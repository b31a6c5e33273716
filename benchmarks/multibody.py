"""A chain of rigid bars on revolute joints, released from horizontal: fem beside Exudyn.

The model of issue 10: ``n`` identical uniform bars (1 kg, 0.1 m, J = m l^2 / 12 about the
centre) lie end to end along x in the x-y plane. The first bar is pinned to the ground at the
origin and each bar is pinned to the next. Gravity is 9.81 along -y, and the chain is released at
rest. Both programs model it in 2D (three coordinates per body), with the same step
h = 1e-3 s and 400 steps. The chains have 100 and 10 bodies.

fem
    The energy-conserving scheme with the default Newton tolerance (1e-9). The bars are one
    ``[[bodies]]`` table of 100 nodes, and the 99 pins between them are one ``[[joints]]`` table
    of 99 pairs, beside the pivot's own table. Such a model takes the compiled time step
    (:mod:`fem.integrators.planar`, issue 32): the joints' discrete gradients, the convergence
    test and a banded LU (multipliers numbered after their nodes) in one compiled loop. The row
    ``FEM_JIT=0`` is the general path (numpy, MUMPS LU), the reference the compiled step equals
    (``tests/test_planar_multibody.py``). A third row writes one table per bar and one per pin
    (100 element groups and 100 constraint groups), which the compiled step takes as one batch.
Exudyn (the optional extra ``peers``; ``pip install --no-deps exudyn``)
    ``NodeRigidBody2D``, ``ObjectRigidBody2D`` and ``ObjectJointRevolute2D``, with gravity as a
    force at each centre. Exudyn's default implicit solver is generalized-alpha with index-3
    constraints, spectral radius 0.9 and modified Newton. The other row is ``TrapezoidalIndex2``.
    Both use the sparse LU (``EigenSparse``) instead of the default dense one, which is about 20
    times slower here with 100 bodies.

The steps per second count the time loop alone: from the first step's end to the last's, taken
by Exudyn's per-step callback and, in fem, by a callback at the first step that then removes
itself (one at every step would make fem's steps go one at a time,
:mod:`fem.integrators.planar_run`) and the step's return (:class:`Clock`). Setup and initial
accelerations fall outside it; fem's frames (energy bookkeeping) fall inside.
Each rate is the best of 3 runs, taken in turns (fem, Exudyn, fem, ...), as the benchmark may
share its machine; the general path runs once, as it is slow.
The baseline in the same run is Exudyn's generalized-alpha. For the sameness check, ``tip`` is
the position of the chain's free end at the final time. ``|tip - ref|`` is its distance from the
same point in a reference run (Exudyn's generalized-alpha with h / 10), and ``max |x - ref|`` is
the largest such distance over the bars' centres; the free end of the long chain falls almost
freely, so the centres near the pivot are the sharper test. ``energy`` is
(T + V)(end) - (T + V)(0) relative to T(end), with V = m g y, computed in the same way from each
program's final state. Without Exudyn, only fem's rows are printed.

A second table: Meijaard's slider-crank with a flexible connecting rod, the case deck
``cases/slider_crank_meijaard`` (notes/meijaard.md section 2.3). A rigid crank of 0.1524 m turns
at a constant 124.8 rad/s; the steel rod (0.3048 m, diameter 0.00635 m) ends in a massless slider
on the x axis. It starts at dead centre with the rigid-body velocities (the rod turning about the
resting slider at -62.4 rad/s) and no deformation, and the rod's inertia bends it. Both programs
use the case's step h = 1e-5 s for 640 steps (0.0064 s, 0.80 rad of crank angle: past the first
maximum at about 0.69 rad, where the case runs 0.0112 s). ``first max`` is the first maximum of
the rod mid-point's offset from the chord (crank pin to slider; left positive) over the rod length,
by the parabola through the three samples around it (``fem.validate``), against 0.00976 (Meijaard,
Table 3, 4 elements); ``at`` is its crank angle. Exudyn samples every step (sensors), fem at its
frames every :data:`CRANK_EVERY` steps (the same maximum to 3e-5 of itself as every step's).

fem
    The case deck as it is (4 co-rotational Timoshenko beams with the consistent inertia, the
    crank driven through its pivot, an inline joint for the slider, the energy-conserving
    scheme), run for the shorter time. It takes the compiled time step
    (:mod:`fem.integrators.planar`: the consistent inertia and the slide row compiled too); the
    row ``FEM_JIT=0`` is the general path. The compiled calls' share of a step is
    printed apart from the Python around it (frames, state copies, bookkeeping); the steps
    between two frames go in compiled runs (:mod:`fem.integrators.planar_run`).
Exudyn
    The crank is a ``ObjectRigidBody2D`` pinned to the ground, its angle's rate held at
    124.8 rad/s by a velocity-level ``CoordinateConstraint``. The rod is
    ``ObjectBeamGeometricallyExact2D`` elements (Simo and Vu-Quoc's beam between two
    ``NodeRigidBody2D``) with the same EA, EI, rho A and rho I, and shear stiffness 0.9 G A, pinned
    to the crank by ``ObjectJointRevolute2D``; the slider is a ``CoordinateConstraint`` holding
    the rod end's y at 0. Generalized-alpha (default settings) with the sparse LU. Its elements
    interpolate linearly, so 4 of them bend too stiffly: they give a first maximum about 14% low.
    Rows with 16, 32 and 64 elements: 64 are needed for fem's accuracy (the like-for-like
    baseline; rows within twice fem's error are marked). With 64, Exudyn's default Newton
    tolerance (relative 1e-8) costs some 56 iterations a step; the row ``rtol 1e-6`` loosens it
    (about 5 iterations, the same first maximum to 2e-8), as a user would.
"""

import os
import time
import tomllib
from pathlib import Path

import numpy as np

from fem import __version__ as fem_version
from fem import _petsc
from fem.io.deck import from_dict
from fem.io.results import _statistic
from fem.run import make_step
from fem.system import System

L, M, G = 0.1, 1.0, 9.81
J = M * L**2 / 12
H, STEPS = 1e-3, 400
SIZES = (100, 10)


def chain_deck(n: int, grouped: bool = True) -> dict:
    """The chain of ``n`` bars as a 2D deck (a dict); nodes 1..n are the bars' centres."""
    X = [[(i + 0.5) * L, 0.0] for i in range(n)]
    joints = [{"name": "pivot", "type": "revolute", "ground": [1], "points": [[0.0, 0.0]]}]
    pins = [([i, i + 1], [i * L, 0.0]) for i in range(1, n)]
    if grouped:
        bodies = [{"name": "bars", "nodes": list(range(1, n + 1)), "mass": M, "inertia": J}]
        joints.append({"name": "pins", "type": "revolute", "pairs": [p for p, _ in pins],
                       "points": [x for _, x in pins]})
    else:
        bodies = [{"name": f"bar{i + 1}", "nodes": [i + 1], "mass": M, "inertia": J}
                  for i in range(n)]
        joints += [{"name": f"pin{p[0]}", "type": "revolute", "pairs": [p], "points": [x]}
                   for p, x in pins]
    return {"model": {"dim": 2, "title": f"chain of {n} rigid bars"},
            "nodes": {"coordinates": X}, "bodies": bodies, "joints": joints,
            "gravity": {"acceleration": [0.0, -G]},
            "steps": [{"name": "fall", "type": "dynamic", "integrator": "energy_conserving",
                       "time_step": H, "duration": H * STEPS, "output_interval": H * STEPS}]}


def energy_change(y, v, w) -> float:
    """(T + V) relative to T for the bars' centre heights ``y``, velocities ``v`` (n, 2) and
    angular velocities ``w`` (n,); the chain started at rest at y = 0."""
    T = 0.5 * M * float(np.sum(v**2)) + 0.5 * J * float(np.sum(w**2))
    return (T + M * G * float(np.sum(y))) / T


def run_fem(n: int, grouped: bool, jit: bool = True) -> dict:
    """Run the chain in fem and return its rate, Newton iterations, free-end tip and energy.

    ``jit`` false: with ``FEM_JIT=0``, the general path.
    """
    before = os.environ.get("FEM_JIT")
    if not jit:
        os.environ["FEM_JIT"] = "0"
    try:
        got = run_fem_chain_deck(chain_deck(n, grouped), n)
    finally:
        if before is None:
            os.environ.pop("FEM_JIT", None)
        else:
            os.environ["FEM_JIT"] = before
    state, k, x = got.pop("state"), got.pop("nodes"), got["centres"]
    return dict(got, energy=energy_change(x[:, 1], state.v[k, :2], state.v[k, 2]))


class Clock:
    """The time loop of a fem step, clocked without making its steps go one at a time.

    The clock starts at the first step's end (an ``on_step`` callback that then removes itself:
    a callback at every step would make the steps go one at a time,
    :mod:`fem.integrators.planar_run`) and stops when the step returns (:meth:`run`). The
    Newton iterations are counted by the compiled runs (``PlanarRun.iterations``) and at the
    steps taken one at a time.
    """

    def __init__(self, step):
        self.step, self.stamps, self.its = step, [], 0
        one = step._advance

        def advance(s0):                   # a step taken one at a time
            out = one(s0)
            self.its += step._stats["iterations"]
            return out

        def on_step(s):                    # the first step's end starts the clock
            self.stamps.append(time.perf_counter())
            step.on_step = None

        step._advance, step.on_step = advance, on_step

    def run(self, state) -> float:
        """Run the step from ``state``; its steps per second after the first."""
        from fem.integrators import planar_run

        make = planar_run.PlanarRun.make

        made_runs = []

        def made(step):
            runs = make(step)
            made_runs.append(runs)
            return runs

        planar_run.PlanarRun.make = made
        try:
            self.step.run(state, None)
            self.stamps.append(time.perf_counter())
        finally:
            planar_run.PlanarRun.make = make
        self.its += sum(runs.iterations for runs in made_runs if runs is not None)
        return (self.step.steps - 1) / (self.stamps[-1] - self.stamps[0])


def run_fem_chain_deck(deck: dict, n: int) -> dict:
    """Run a chain deck of ``n`` bars (nodes 1..n their centres) in fem, timing the time loop.

    Its rate (steps per second of the loop alone, :class:`Clock`), Newton iterations a step,
    the free end's tip, the bars' centres, and the final ``state`` with the bars' node indices
    ``nodes``.
    """
    dk = from_dict(deck)
    sysm = System(dk.model)
    state = sysm.reference_state()
    step = make_step(dk.steps[0], sysm, dk, dk.output["every"])
    clock = Clock(step)
    rate = clock.run(state)
    k = np.searchsorted(dk.model.node_ids, np.arange(1, n + 1))      # the bars' nodes
    x = dk.model.X[k, :2] + state.u[k, :2]
    phi = state.rot[k[-1]]
    tip = x[-1] + 0.5 * L * np.array([np.cos(phi), np.sin(phi)])
    return {"rate": rate, "its": clock.its / step.steps,
            "tip": tip, "centres": x, "state": state, "nodes": k}


def timed_solve(exu, mbs, steps: int, end: float, solver: str, what: str,
                newton: dict | None = None) -> float:
    """Assemble and solve an Exudyn system; its steps per second over the time loop alone.

    Sensors store every step; the sparse LU replaces the default dense one (see the module
    docstring). The first pre-step callback starts the clock; the last step ends when
    ``SolveDynamic`` returns (no pre-step after it).
    """
    mbs.Assemble()
    settings = exu.SimulationSettings()
    settings.timeIntegration.numberOfSteps = steps
    settings.timeIntegration.endTime = end
    settings.timeIntegration.verboseMode = 0
    settings.solution.file.write = False
    settings.solution.sensors.writePeriod = end / steps
    settings.linearSolver.solverType = exu.LinearSolverType.EigenSparse
    for key, value in (newton or {}).items():        # Newton settings other than the defaults
        setattr(settings.timeIntegration.newton, key, value)
    stamps = []

    def pre_step(mbs, t):
        stamps.append(time.perf_counter())
        return True

    mbs.SetPreStepUserFunction(pre_step)
    if not mbs.SolveDynamic(settings, solverType=getattr(exu.DynamicSolverType, solver)):
        raise RuntimeError(f"Exudyn's {solver} failed on {what}")
    return steps / (time.perf_counter() - stamps[0])


def run_exudyn(exu, n: int, solver: str, h: float = H) -> dict:
    """The same chain in Exudyn with dynamic solver ``solver`` and step ``h``."""
    from exudyn.itemInterface import (
        LoadForceVector,
        MarkerBodyPosition,
        NodeRigidBody2D,
        ObjectGround,
        ObjectJointRevolute2D,
        ObjectRigidBody2D,
    )

    sc = exu.SystemContainer()
    mbs = sc.AddSystem()
    ground = mbs.AddObject(ObjectGround())
    previous = mbs.AddMarker(MarkerBodyPosition(bodyNumber=ground, localPosition=[0.0, 0, 0]))
    nodes = []
    for i in range(n):
        node = mbs.AddNode(NodeRigidBody2D(referenceCoordinates=[(i + 0.5) * L, 0.0, 0.0]))
        body = mbs.AddObject(ObjectRigidBody2D(nodeNumber=node, mass=M, inertia=J))
        left = mbs.AddMarker(MarkerBodyPosition(bodyNumber=body, localPosition=[-L / 2, 0, 0]))
        mbs.AddObject(ObjectJointRevolute2D(markerNumbers=[previous, left]))
        centre = mbs.AddMarker(MarkerBodyPosition(bodyNumber=body, localPosition=[0.0, 0, 0]))
        mbs.AddLoad(LoadForceVector(markerNumber=centre, loadVector=[0.0, -M * G, 0]))
        previous = mbs.AddMarker(MarkerBodyPosition(bodyNumber=body, localPosition=[L / 2, 0, 0]))
        nodes.append(node)
    steps = round(STEPS * H / h)
    rate = timed_solve(exu, mbs, steps, STEPS * H, solver, f"the chain of {n} bars")
    var = exu.OutputVariableType
    x = np.array([mbs.GetNodeOutput(i, var.Position)[:2] for i in nodes])
    v = np.array([mbs.GetNodeOutput(i, var.Velocity)[:2] for i in nodes])
    w = np.array([mbs.GetNodeOutput(i, var.AngularVelocity)[2] for i in nodes])
    phi = mbs.GetNodeOutput(nodes[-1], var.Coordinates)[2]
    tip = x[-1] + 0.5 * L * np.array([np.cos(phi), np.sin(phi)])
    it = mbs.sys["dynamicSolver"].it
    return {"rate": rate, "its": it.newtonStepsCount / steps, "tip": tip,
            "centres": x, "energy": energy_change(x[:, 1], v, w)}


CRANK_CASE = Path(__file__).resolve().parents[1] / "cases" / "slider_crank_meijaard"
CRANK, ROD, OMEGA = 0.1524, 0.3048, 124.8        # crank and rod lengths (m), crank speed (rad/s)
CRANK_H, CRANK_STEPS = 1e-5, 640
CRANK_EVERY = 4                                   # steps between the frames fem samples
FIRST_MAX = 0.00976                               # Meijaard, Table 3, 4 elements


def first_maximum(t, ends, mid) -> tuple[float, float]:
    """The first maximum of the mid-point's offset from the chord over the rod length, and the
    crank angle where it occurs; ``ends`` (2, frames, 2) and ``mid`` (frames, 2) are positions."""
    e = ends[1] - ends[0]
    r = mid - ends[0]
    y = (e[:, 0] * r[:, 1] - e[:, 1] * r[:, 0]) / np.linalg.norm(e, axis=1) / ROD
    q = {"statistic": "first_maximum"}
    return (_statistic(t, y, q), OMEGA * _statistic(t, y, {**q, "report": "time"}))


def run_fem_crank(jit: bool = True) -> dict:
    """Run the slider-crank case in fem for CRANK_STEPS steps; its rate and first maximum.

    ``kernel``: the seconds a step spends in compiled calls (the runs of
    :func:`fem.integrators.planar_run_kernel.run`, the Newton loop of a step taken alone,
    :func:`fem.integrators.planar_newton_kernel.step`), ``python`` the rest of the step.
    ``jit`` false: with ``FEM_JIT=0``, the general path.
    """
    from fem.integrators import planar_newton_kernel, planar_run_kernel

    before = os.environ.get("FEM_JIT")
    if not jit:
        os.environ["FEM_JIT"] = "0"
    kernels, spent = (planar_newton_kernel.step, planar_run_kernel.run), [0.0]

    def timed(kernel):
        def call(*args):
            start = time.perf_counter()
            try:
                return kernel(*args)
            finally:
                spent[0] += time.perf_counter() - start
        return call

    planar_newton_kernel.step, planar_run_kernel.run = map(timed, kernels)
    try:
        got = _fem_crank()
    finally:
        planar_newton_kernel.step, planar_run_kernel.run = kernels
        if before is None:
            os.environ.pop("FEM_JIT", None)
        else:
            os.environ["FEM_JIT"] = before
    per_step = 1 / got["rate"]
    got["kernel"] = spent[0] / CRANK_STEPS
    got["python"] = per_step - got["kernel"]
    return got


def _fem_crank() -> dict:
    """The crank's deck for CRANK_STEPS steps, frames every CRANK_EVERY: the rod's positions."""
    with open(CRANK_CASE / "deck.toml", "rb") as fh:
        data = tomllib.load(fh)
    spec = data["steps"][0]
    assert spec["time_step"] == CRANK_H
    spec["duration"] = CRANK_H * CRANK_STEPS
    spec["output_interval"] = CRANK_H * CRANK_EVERY
    dk = from_dict(data, base_dir=str(CRANK_CASE))
    sysm = System(dk.model)
    state = sysm.reference_state()
    step = make_step(dk.steps[0], sysm, dk, dk.output["every"])
    k = np.searchsorted(dk.model.node_ids, [2, 4, 6])     # the rod's ends and middle
    X = dk.model.X[k, :2]
    t, x = [], []
    frame = step._frame

    def framed(writer, s, *args, **kw):                     # the rod at every frame
        t.append(s.t)
        x.append(X + s.u[k, :2])
        return frame(writer, s, *args, **kw)

    step._frame = framed
    clock = Clock(step)
    rate = clock.run(state)
    x = np.array(x)
    peak, angle = first_maximum(np.array(t), x[:, [0, 2]].transpose(1, 0, 2), x[:, 1])
    return {"rate": rate, "its": clock.its / step.steps, "peak": peak, "angle": angle}


def run_exudyn_crank(exu, elements: int, newton: dict | None = None) -> dict:
    """The slider-crank in Exudyn with a rod of ``elements`` geometrically exact 2D beams.

    ``newton``: Exudyn's Newton settings other than its defaults (``timeIntegration.newton``).
    """
    from exudyn.itemInterface import (
        CoordinateConstraint,
        MarkerBodyPosition,
        MarkerNodeCoordinate,
        MarkerNodePosition,
        NodePointGround,
        NodeRigidBody2D,
        ObjectBeamGeometricallyExact2D,
        ObjectGround,
        ObjectJointRevolute2D,
        ObjectRigidBody2D,
        SensorNode,
    )

    with open(CRANK_CASE / "deck.toml", "rb") as fh:
        data = tomllib.load(fh)
    mat, body = data["materials"][0], data["bodies"][0]
    E, rho, d = mat["E"], mat["density"], data["sections"][0]["d"]
    A, I = np.pi * d**2 / 4, np.pi * d**4 / 64
    G = E / (2 * (1 + mat["nu"]))
    w_rod = -OMEGA * CRANK / ROD                  # the rod turns about the resting slider
    sc = exu.SystemContainer()
    mbs = sc.AddSystem()
    ground = mbs.AddObject(ObjectGround())
    fixed = mbs.AddMarker(MarkerNodeCoordinate(nodeNumber=mbs.AddNode(NodePointGround()),
                                               coordinate=0))
    crank_node = mbs.AddNode(NodeRigidBody2D(referenceCoordinates=[CRANK / 2, 0.0, 0.0],
                                             initialVelocities=[0.0, OMEGA * CRANK / 2, OMEGA]))
    crank = mbs.AddObject(ObjectRigidBody2D(nodeNumber=crank_node, mass=body["mass"],
                                            inertia=body["inertia"]))
    mbs.AddObject(ObjectJointRevolute2D(markerNumbers=[
        mbs.AddMarker(MarkerBodyPosition(bodyNumber=ground, localPosition=[0.0, 0, 0])),
        mbs.AddMarker(MarkerBodyPosition(bodyNumber=crank, localPosition=[-CRANK / 2, 0, 0]))]))
    mbs.AddObject(CoordinateConstraint(markerNumbers=[fixed, mbs.AddMarker(
        MarkerNodeCoordinate(nodeNumber=crank_node, coordinate=2))],
        velocityLevel=True, offset=OMEGA))
    le = ROD / elements
    nodes = [mbs.AddNode(NodeRigidBody2D(
        referenceCoordinates=[CRANK + i * le, 0.0, 0.0],
        initialVelocities=[0.0, w_rod * (i * le - ROD), w_rod])) for i in range(elements + 1)]
    for a, b in zip(nodes[:-1], nodes[1:]):
        mbs.AddObject(ObjectBeamGeometricallyExact2D(
            nodeNumbers=[a, b], length=le, massPerLength=rho * A, crossSectionInertia=rho * I,
            bendingStiffness=E * I, axialStiffness=E * A, shearStiffness=0.9 * G * A))
    mbs.AddObject(ObjectJointRevolute2D(markerNumbers=[
        mbs.AddMarker(MarkerBodyPosition(bodyNumber=crank, localPosition=[CRANK / 2, 0, 0])),
        mbs.AddMarker(MarkerNodePosition(nodeNumber=nodes[0]))]))
    mbs.AddObject(CoordinateConstraint(markerNumbers=[fixed, mbs.AddMarker(
        MarkerNodeCoordinate(nodeNumber=nodes[-1], coordinate=1))]))
    sensors = [mbs.AddSensor(SensorNode(nodeNumber=nodes[i], storeInternal=True, writeToFile=False,
                                        outputVariableType=exu.OutputVariableType.Position))
               for i in (0, elements // 2, elements)]
    rate = timed_solve(exu, mbs, CRANK_STEPS, CRANK_STEPS * CRANK_H, "GeneralizedAlpha",
                       f"the slider-crank with {elements} elements", newton)
    a, m, b = (mbs.GetSensorStoredData(i) for i in sensors)    # rows: t, x, y, z
    peak, angle = first_maximum(a[:, 0], np.array([a[:, 1:3], b[:, 1:3]]), m[:, 1:3])
    it = mbs.sys["dynamicSolver"].it
    return {"rate": rate, "its": it.newtonStepsCount / CRANK_STEPS,
            "peak": peak, "angle": angle}


#: Exudyn's rods (its linear beams need 64 for fem's accuracy) and Newton settings: with 64 its
#: default relative tolerance 1e-8 takes some 56 iterations a step (modified or full Newton),
#: 1e-6 about 5, with the same first maximum to 2e-8
CRANK_EXUDYN = ((4, None), (16, None), (32, None), (64, None), (64, {"relativeTolerance": 1e-6}))


def _exudyn_name(n: int, newton: dict | None) -> str:
    return f"Exudyn, generalized-alpha, {n} beams" + ("" if newton is None else ", rtol 1e-6")


def slider_crank(exu):
    """The slider-crank table: fem's case deck (compiled and general) beside Exudyn's rods.

    fem and Exudyn's rods run in turns, best of three; the general path (``FEM_JIT=0``) once.
    """
    print(f"Meijaard's slider-crank with a flexible rod (cases/slider_crank_meijaard), "
          f"h = {CRANK_H:g} s, {CRANK_STEPS} steps: fem {fem_version}"
          + (f" beside Exudyn {exu.__version__}" if exu else " alone"))
    if exu is None:
        print("Exudyn is missing (the extra 'peers'): fem's row only")
    print(f"{'program, integrator, rod':<48} {'steps/s':>8} {'its/step':>8} {'first max':>9} "
          f"{'vs ' + str(FIRST_MAX):>10} {'at (rad)':>8}")
    fem_name = "fem, energy-conserving, 4 beams (the case)"
    runs = {fem_name: run_fem_crank}
    if exu:
        runs.update({_exudyn_name(n, newton): lambda n=n, newton=newton:
                     run_exudyn_crank(exu, n, newton) for n, newton in CRANK_EXUDYN})
    best = in_turns(runs, 3)
    rows = list(best.items())
    rows.insert(1, ("fem, the same, FEM_JIT=0 (general path)", run_fem_crank(jit=False)))
    for name, r in rows:
        print(f"{name:<48} {r['rate']:>8.4g} {r['its']:>8.3g} {r['peak']:>9.6f} "
              f"{r['peak'] / FIRST_MAX - 1:>+10.2%} {r['angle']:>8.3f}")
    fem = best[fem_name]
    print(f"fem's compiled step: {fem['kernel'] * 1e6:.0f} us a step in compiled calls, "
          f"{fem['python'] * 1e6:.0f} us of Python around it")
    if exu is None:
        return
    err = abs(fem["peak"] / FIRST_MAX - 1)
    for n, newton in CRANK_EXUDYN:
        name = _exudyn_name(n, newton)
        r = best[name]
        e = abs(r["peak"] / FIRST_MAX - 1)
        print(f"fem / {name[:6] + name[26:]:<22}: steps per second {fem['rate'] / r['rate']:.3g}; "
              f"first maximum off by {err:.2%} (fem), {e:.2%} (Exudyn)"
              + (" (within twice fem's error)" if e <= 2 * err else ""))


def fastest(run, repeat: int) -> dict:
    """The result of the fastest of ``repeat`` calls of ``run`` (the least disturbed timing)."""
    return max((run() for _ in range(repeat)), key=lambda r: r["rate"])


def in_turns(runs: dict, repeat: int) -> dict:
    """``{name: fastest result}`` of ``repeat`` rounds calling every run once in turn."""
    best = {}
    for _ in range(repeat):
        for name, run in runs.items():
            r = run()
            if name not in best or r["rate"] > best[name]["rate"]:
                best[name] = r
    return best


def main():
    _petsc.init()
    try:
        import exudyn as exu
    except ImportError:
        exu = None
    peer = f" beside Exudyn {exu.__version__}" if exu else " alone"
    print(f"A chain of rigid bars on revolute joints falling from horizontal, h = {H:g} s, "
          f"{STEPS} steps: fem {fem_version}{peer}")
    if exu is None:
        print("Exudyn is missing (the extra 'peers': pip install --no-deps exudyn): "
              "fem's rows only")
    print(f"{'bodies':>6} {'program, integrator, deck':<40} {'steps/s':>8} {'its/step':>8} "
          f"{'tip x':>9} {'tip y':>9} {'|tip - ref|':>11} {'max |x - ref|':>13} {'energy':>8}")
    ratios = []
    for n in SIZES:
        runs = {"fem, energy-conserving, grouped tables": lambda: run_fem(n, True),
                "fem, energy-conserving, a table per item": lambda: run_fem(n, False)}
        if exu:
            runs.update({f"Exudyn, {name}": lambda solver=solver: run_exudyn(exu, n, solver)
                         for name, solver in (("generalized-alpha (default)", "GeneralizedAlpha"),
                                              ("trapezoidal index 2", "TrapezoidalIndex2"))})
        best = in_turns(runs, 3)
        rows = list(best.items())
        rows.insert(2, ("fem, energy-conserving, FEM_JIT=0 (general)", run_fem(n, True, False)))
        ref = run_exudyn(exu, n, "GeneralizedAlpha", H / 10) if exu else None
        for name, r in rows:
            if ref is None:
                errs = f"{'-':>11} {'-':>13}"
            else:
                worst = np.linalg.norm(r["centres"] - ref["centres"], axis=1).max()
                errs = f"{np.linalg.norm(r['tip'] - ref['tip']):>11.2e} {worst:>13.2e}"
            print(f"{n:>6} {name:<40} {r['rate']:>8.4g} {r['its']:>8.3g} {r['tip'][0]:>9.6f} "
                  f"{r['tip'][1]:>9.6f} {errs} {r['energy']:>+8.1e}")
        if exu:
            fem, base = rows[0][1], rows[3][1]
            ratios.append(f"{n:>6} bodies: fem / Exudyn (generalized-alpha) steps per second "
                          f"{fem['rate'] / base['rate']:.3g} (grouped tables), "
                          f"{rows[1][1]['rate'] / base['rate']:.3g} (a table per item), "
                          f"{rows[2][1]['rate'] / base['rate']:.3g} (FEM_JIT=0); "
                          f"|fem - Exudyn| {np.linalg.norm(fem['tip'] - base['tip']):.1e} m at the "
                          "free end, "
                          f"{np.linalg.norm(fem['centres'] - base['centres'], axis=1).max():.1e}"
                          " m at most at a centre")
    print(("ref: Exudyn generalized-alpha with h / 10; " if exu else "")
          + "x: the bars' centres; energy: (T + V) change / T")
    for line in ratios:
        print(line)
    print()
    slider_crank(exu)
