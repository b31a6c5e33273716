"""A chain of rigid bars on revolute joints, released from horizontal: fem beside Exudyn.

The model of issue 10: ``n`` identical uniform bars (1 kg, 0.1 m, J = m l^2 / 12 about the
centre) lie end to end along x in the x-y plane. The first bar is pinned to the ground at the
origin and each bar is pinned to the next. Gravity is 9.81 along -y, and the chain is released at
rest. Both programs model it in 2D (three coordinates per body), with the same step
h = 1e-3 s and 400 steps. The chains have 100 and 10 bodies.

fem
    The energy-conserving scheme with the default Newton tolerance (1e-9) and MUMPS LU. The bars
    are one ``[[bodies]]`` table of 100 nodes, and the 99 pins between them are one
    ``[[joints]]`` table of 99 pairs, beside the pivot's own table: each is one vectorized
    group. A second row writes one table per bar and one per pin, which gives 100 element
    groups and 100 constraint groups, each evaluated on its own in Python.
Exudyn (the optional extra ``peers``; ``pip install --no-deps exudyn``)
    ``NodeRigidBody2D``, ``ObjectRigidBody2D`` and ``ObjectJointRevolute2D``, with gravity as a
    force at each centre. Exudyn's default implicit solver is generalized-alpha with index-3
    constraints, spectral radius 0.9 and modified Newton. The other row is ``TrapezoidalIndex2``.
    Both use the sparse LU (``EigenSparse``) instead of the default dense one, which is about 20
    times slower here with 100 bodies.

The steps per second count the time loop alone: the time from the first step to the last, taken
by each program's per-step callback. Setup, initial accelerations and output fall outside it.
Each rate is the best of a few runs (fem with grouped tables and Exudyn: 3), as the benchmark
may share its machine; fem with a table per item runs once, as it is slow.
The baseline in the same run is Exudyn's generalized-alpha. For the sameness check, ``tip`` is
the position of the chain's free end at the final time. ``|tip - ref|`` is its distance from the
same point in a reference run (Exudyn's generalized-alpha with h / 10), and ``max |x - ref|`` is
the largest such distance over the bars' centres; the free end of the long chain falls almost
freely, so the centres near the pivot are the sharper test. ``energy`` is
(T + V)(end) - (T + V)(0) relative to T(end), with V = m g y, computed in the same way from each
program's final state. Without Exudyn, only fem's rows are printed.
"""

import time

import numpy as np

from fem import __version__ as fem_version
from fem import _petsc
from fem.io.deck import from_dict
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


def run_fem(n: int, grouped: bool) -> dict:
    """Run the chain in fem and return its rate, Newton iterations, free-end tip and energy."""
    dk = from_dict(chain_deck(n, grouped))
    sysm = System(dk.model)
    state = sysm.reference_state()
    step = make_step(dk.steps[0], sysm, dk, dk.output["every"])
    stamps, its = [], [0]

    def on_step(s):
        stamps.append(time.perf_counter())
        its[0] += step._stats["iterations"]

    step.on_step = on_step
    step.run(state, None)
    k = np.searchsorted(dk.model.node_ids, np.arange(1, n + 1))      # the bars' nodes
    x = dk.model.X[k, :2] + state.u[k, :2]
    phi = state.rot[k[-1]]
    tip = x[-1] + 0.5 * L * np.array([np.cos(phi), np.sin(phi)])
    return {"rate": (len(stamps) - 1) / (stamps[-1] - stamps[0]), "its": its[0] / step.steps,
            "tip": tip, "centres": x,
            "energy": energy_change(x[:, 1], state.v[k, :2], state.v[k, 2])}


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
    mbs.Assemble()
    settings = exu.SimulationSettings()
    steps = round(STEPS * H / h)
    settings.timeIntegration.numberOfSteps = steps
    settings.timeIntegration.endTime = STEPS * H
    settings.timeIntegration.verboseMode = 0
    settings.solution.file.write = False
    settings.linearSolver.solverType = exu.LinearSolverType.EigenSparse
    stamps = []

    def pre_step(mbs, t):
        stamps.append(time.perf_counter())
        return True

    mbs.SetPreStepUserFunction(pre_step)
    if not mbs.SolveDynamic(settings, solverType=getattr(exu.DynamicSolverType, solver)):
        raise RuntimeError(f"Exudyn's {solver} failed on the chain of {n} bars")
    done = time.perf_counter()          # the last step ends here (no pre-step after it)
    var = exu.OutputVariableType
    x = np.array([mbs.GetNodeOutput(i, var.Position)[:2] for i in nodes])
    v = np.array([mbs.GetNodeOutput(i, var.Velocity)[:2] for i in nodes])
    w = np.array([mbs.GetNodeOutput(i, var.AngularVelocity)[2] for i in nodes])
    phi = mbs.GetNodeOutput(nodes[-1], var.Coordinates)[2]
    tip = x[-1] + 0.5 * L * np.array([np.cos(phi), np.sin(phi)])
    it = mbs.sys["dynamicSolver"].it
    return {"rate": steps / (done - stamps[0]), "its": it.newtonStepsCount / steps, "tip": tip,
            "centres": x, "energy": energy_change(x[:, 1], v, w)}


def fastest(run, repeat: int) -> dict:
    """The result of the fastest of ``repeat`` calls of ``run`` (the least disturbed timing)."""
    return max((run() for _ in range(repeat)), key=lambda r: r["rate"])


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
        rows = [("fem, energy-conserving, grouped tables", fastest(lambda: run_fem(n, True), 3)),
                ("fem, energy-conserving, a table per item", run_fem(n, False))]
        ref = None
        if exu:
            rows += [(f"Exudyn, {name}", fastest(lambda: run_exudyn(exu, n, solver), 3))
                     for name, solver in (("generalized-alpha (default)", "GeneralizedAlpha"),
                                          ("trapezoidal index 2", "TrapezoidalIndex2"))]
            ref = run_exudyn(exu, n, "GeneralizedAlpha", H / 10)
        for name, r in rows:
            if ref is None:
                errs = f"{'-':>11} {'-':>13}"
            else:
                worst = np.linalg.norm(r["centres"] - ref["centres"], axis=1).max()
                errs = f"{np.linalg.norm(r['tip'] - ref['tip']):>11.2e} {worst:>13.2e}"
            print(f"{n:>6} {name:<40} {r['rate']:>8.4g} {r['its']:>8.3g} {r['tip'][0]:>9.6f} "
                  f"{r['tip'][1]:>9.6f} {errs} {r['energy']:>+8.1e}")
        if exu:
            fem, base = rows[0][1], rows[2][1]
            ratios.append(f"{n:>6} bodies: fem / Exudyn (generalized-alpha) steps per second "
                          f"{fem['rate'] / base['rate']:.3g} (grouped tables), "
                          f"{rows[1][1]['rate'] / base['rate']:.3g} (a table per item); "
                          f"|fem - Exudyn| {np.linalg.norm(fem['tip'] - base['tip']):.1e} m at the "
                          "free end, "
                          f"{np.linalg.norm(fem['centres'] - base['centres'], axis=1).max():.1e}"
                          " m at most at a centre")
    print(("ref: Exudyn generalized-alpha with h / 10; " if exu else "")
          + "x: the bars' centres; energy: (T + V) change / T")
    for line in ratios:
        print(line)
