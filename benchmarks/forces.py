"""Force elements and contact beside Exudyn: a chain with joint spring-dampers, a sphere heap.

**Chain** (issue 30's benchmark point): the chain of :mod:`benchmarks.multibody` (100 rigid bars
of 1 kg and 0.1 m on revolute joints, pinned to the ground at the origin, released at rest from
horizontal under gravity 9.81 along -y, 2D) with a rotational spring of ``K`` and a damper of
``C`` on every joint's relative angle (relaxed at the reference, the straight chain), the same
h = 1e-3 s and 400 steps.

fem
    The energy-conserving scheme (default Newton tolerance, MUMPS LU): the chain deck of
    :func:`benchmarks.multibody.chain_deck` whose two ``[[joints]]`` tables carry ``stiffness``
    and ``damping`` (a ``<joint>_force`` group each: the springs' discrete gradient, the dampers
    on the step's mean rate).
Exudyn (``pip install --no-deps exudyn``)
    The chain of :func:`benchmarks.multibody.run_exudyn` plus a ``CoordinateSpringDamper``
    between the rotation coordinates of each joint's two nodes (the ground's for the pivot), the
    same ``K`` and ``C``; generalized-alpha (its default, spectral radius 0.9) and the sparse LU.

Sameness: the free end's position against a reference run (Exudyn's generalized-alpha with
h / 10) and fem's against Exudyn's, and the largest distance of a bar centre from the reference.

**Heap** (issue 30's benchmark point): 1000 spheres (radius 10 mm, 10 g point masses, no
rotations) in a 10 x 10 x 10 lattice with 1 mm gaps, the lowest layer 1 mm above the ground
plane z = 0, fall under gravity 9.81 and settle: every pair of spheres may touch (a broad phase
each step) and every sphere touches the ground. Frictionless linear spring-dampers, h = 2e-4 s,
0.2 s (1000 steps).

fem
    A ``spheres`` contact entry over the 1000 nodes (the k-d tree broad phase of
    :mod:`fem.elements.contact.sphere_set`) and a ``nodes`` entry against the ground plane, both
    ``law = "kelvin_voigt"`` (``K delta + c delta_dot``, never pulling) with ``K = k / 2`` and
    ``c = 2 d``; the energy-conserving scheme (its dissipation booked exactly), MUMPS or the
    banded LU the step picks.
Exudyn
    ``GeneralContact``: ``AddSphereWithMarker`` on a ``MassPoint`` per sphere (stiffness ``k``,
    damping ``d``) and two static triangles for the ground (``k``, ``d``). Its law is the
    linear spring-damper with the stiffnesses of the two items in series (``k / 2``) and the
    dampers in parallel (``2 d``): the same ``K`` and ``c`` as fem's (the series ``k / 2`` checked
    by a sphere resting on the ground: penetration ``m g / (k / 2)``). What differs: Exudyn's
    damper acts whenever the items overlap, so a parting contact may pull for a moment, where
    fem's force is clipped at zero (no tension); Exudyn's search tree is a box of cells, fem's a
    k-d tree with a padding. Generalized-alpha (spectral radius 0.9, modified Newton) and the
    sparse LU.

Sameness: both heaps end at rest as columns of 10 spheres, whose static heights follow from each
contact carrying the weight above it (``delta_i = (10 - i) m g / K``): the mean sphere height
of each program against that closed form, and the kinetic energy left.

The steps per second count the time loop alone (from the first step's callback to the end);
each rate is the best of 3 runs (the heap in fem: 1 run), the baseline Exudyn's, measured in
the same run. The heap's ``CPU s`` is the process time of the whole solve call (set-up
included): a ratio that a machine shared with other work disturbs less than the wall clock's.
"""


import time

import numpy as np

from benchmarks.multibody import (
    STEPS,
    G,
    H,
    J,
    L,
    M,
    chain_deck,
    fastest,
    run_fem_chain_deck,
    timed_solve,
)
from fem import __version__ as fem_version
from fem import _petsc
from fem.io.deck import from_dict
from fem.run import make_step
from fem.system import System

N_CHAIN = 100
K_JOINT, C_JOINT = 20.0, 0.05          # N m / rad, N m s / rad


def spring_chain_deck(n: int) -> dict:
    """The multibody chain with a spring and a damper on every joint."""
    deck = chain_deck(n)
    for joint in deck["joints"]:
        joint.update(stiffness=K_JOINT, damping=C_JOINT)
    deck["model"]["title"] = f"chain of {n} rigid bars with joint spring-dampers"
    return deck


def run_fem_chain(n: int) -> dict:
    """The chain in fem: its rate, Newton iterations, free-end tip and bar centres."""
    got = run_fem_chain_deck(spring_chain_deck(n), n)
    del got["state"], got["nodes"]
    return got


def run_exudyn_chain(exu, n: int, h: float = H, solver: str = "GeneralizedAlpha") -> dict:
    """The same chain in Exudyn, a ``CoordinateSpringDamper`` at every joint."""
    from exudyn.itemInterface import (
        CoordinateSpringDamper,
        LoadForceVector,
        MarkerBodyPosition,
        MarkerNodeCoordinate,
        NodePointGround,
        NodeRigidBody2D,
        ObjectGround,
        ObjectJointRevolute2D,
        ObjectRigidBody2D,
    )

    sc = exu.SystemContainer()
    mbs = sc.AddSystem()
    ground = mbs.AddObject(ObjectGround())
    previous = mbs.AddMarker(MarkerBodyPosition(bodyNumber=ground, localPosition=[0.0, 0, 0]))
    angle = mbs.AddMarker(MarkerNodeCoordinate(nodeNumber=mbs.AddNode(NodePointGround()),
                                               coordinate=0))
    nodes = []
    for i in range(n):
        node = mbs.AddNode(NodeRigidBody2D(referenceCoordinates=[(i + 0.5) * L, 0.0, 0.0]))
        body = mbs.AddObject(ObjectRigidBody2D(nodeNumber=node, mass=M, inertia=J))
        left = mbs.AddMarker(MarkerBodyPosition(bodyNumber=body, localPosition=[-L / 2, 0, 0]))
        mbs.AddObject(ObjectJointRevolute2D(markerNumbers=[previous, left]))
        own = mbs.AddMarker(MarkerNodeCoordinate(nodeNumber=node, coordinate=2))
        mbs.AddObject(CoordinateSpringDamper(markerNumbers=[angle, own], stiffness=K_JOINT,
                                             damping=C_JOINT))
        angle = own
        centre = mbs.AddMarker(MarkerBodyPosition(bodyNumber=body, localPosition=[0.0, 0, 0]))
        mbs.AddLoad(LoadForceVector(markerNumber=centre, loadVector=[0.0, -M * G, 0]))
        previous = mbs.AddMarker(MarkerBodyPosition(bodyNumber=body, localPosition=[L / 2, 0, 0]))
        nodes.append(node)
    steps = round(STEPS * H / h)
    rate = timed_solve(exu, mbs, steps, STEPS * H, solver, f"the spring chain of {n} bars")
    var = exu.OutputVariableType
    x = np.array([mbs.GetNodeOutput(i, var.Position)[:2] for i in nodes])
    phi = mbs.GetNodeOutput(nodes[-1], var.Coordinates)[2]
    tip = x[-1] + 0.5 * L * np.array([np.cos(phi), np.sin(phi)])
    it = mbs.sys["dynamicSolver"].it
    return {"rate": rate, "its": it.newtonStepsCount / steps, "tip": tip, "centres": x}


def chain(exu) -> None:
    """The chain table: fem beside Exudyn, and the sameness of their free ends."""
    print(f"A chain of {N_CHAIN} rigid bars on revolute joints with spring-dampers "
          f"(K = {K_JOINT:g} N m/rad, C = {C_JOINT:g} N m s/rad), h = {H:g} s, {STEPS} steps: "
          f"fem {fem_version}" + (f" beside Exudyn {exu.__version__}" if exu else " alone"))
    print(f"{'program, integrator':<36} {'steps/s':>8} {'its/step':>8} {'tip x':>9} "
          f"{'tip y':>9} {'|tip - ref|':>11} {'max |x - ref|':>13}")
    rows = [("fem, energy-conserving", fastest(lambda: run_fem_chain(N_CHAIN), 3))]
    ref = None
    if exu:
        rows.append(("Exudyn, generalized-alpha", fastest(lambda: run_exudyn_chain(exu, N_CHAIN),
                                                          3)))
        ref = run_exudyn_chain(exu, N_CHAIN, H / 10)
    for name, r in rows:
        errs = f"{'-':>11} {'-':>13}"
        if ref is not None:
            worst = np.linalg.norm(r["centres"] - ref["centres"], axis=1).max()
            errs = f"{np.linalg.norm(r['tip'] - ref['tip']):>11.2e} {worst:>13.2e}"
        print(f"{name:<36} {r['rate']:>8.4g} {r['its']:>8.3g} {r['tip'][0]:>9.5f} "
              f"{r['tip'][1]:>9.5f} {errs}")
    if exu:
        fem, base = rows[0][1], rows[1][1]
        print(f"ref: Exudyn generalized-alpha with h / 10. fem / Exudyn steps per second "
              f"{fem['rate'] / base['rate']:.3g}; |fem - Exudyn| at the free end "
              f"{np.linalg.norm(fem['tip'] - base['tip']):.1e} m")


# --- the heap ----------------------------------------------------------------------------------
SIDE = 10                                    # spheres per side: SIDE^3 in all
R_S, M_S, G_S = 0.01, 0.01, 9.81             # radius (m), mass (kg), gravity (m/s^2)
K_ITEM, D_ITEM = 2e4, 10.0                   # Exudyn's per-item stiffness (N/m), damping (N s/m)
K_PAIR, C_PAIR = K_ITEM / 2, 2 * D_ITEM      # a contact's: in series, in parallel
H_HEAP, T_HEAP = 2e-4, 0.2


def heap_positions(side: int = SIDE) -> np.ndarray:
    """(side^3, 3) the sphere centres: a lattice with gaps of R/10, the lowest R/10 up."""
    gap = 0.1 * R_S
    s = 2 * R_S + gap
    i, j, k = np.meshgrid(np.arange(side), np.arange(side), np.arange(side), indexing="ij")
    return np.column_stack([i.ravel() * s, j.ravel() * s, R_S + gap + k.ravel() * s])


def heap_deck(side: int = SIDE, duration: float = T_HEAP) -> dict:
    """The heap as a fem deck (module doc)."""
    X = heap_positions(side)
    ids = list(range(1, len(X) + 1))
    law = {"radius": R_S, "law": "kelvin_voigt", "stiffness": K_PAIR, "damping": C_PAIR,
           "steps_per_contact": 10}
    return {"model": {"dim": 3, "title": f"a heap of {len(X)} spheres falling on the ground"},
            "nodes": {"coordinates": X.tolist()},
            "masses": [{"nodes": ids, "mass": M_S}],
            "contacts": [{"name": "heap", "spheres": ids, **law},
                         {"name": "ground", "nodes": ids, **law, "plane_point": [0, 0, 0],
                          "plane_normal": [0, 0, 1]}],
            "gravity": {"acceleration": [0, 0, -G_S]},
            "steps": [{"name": "fall", "type": "dynamic", "integrator": "energy_conserving",
                       "time_step": H_HEAP, "duration": duration}]}


def settled_height(side: int = SIDE) -> float:
    """The mean sphere height of columns of ``side`` spheres at rest (module doc)."""
    load = (side - np.arange(side)) * M_S * G_S          # the contact under sphere i carries
    z = R_S - load[0] / K_PAIR + np.concatenate([[0.0], np.cumsum(2 * R_S - load[1:] / K_PAIR)])
    return float(z.mean())


def run_fem_heap(side: int = SIDE, duration: float = T_HEAP) -> dict:
    """The heap in fem: rate, steps, mean height and kinetic energy at the end."""
    dk = from_dict(heap_deck(side, duration))
    sysm = System(dk.model)
    state = sysm.reference_state()
    step = make_step(dk.steps[0], sysm, dk, dk.output["every"])
    stamps, its = [], [0]

    def on_step(s):
        stamps.append(time.perf_counter())
        its[0] += step._stats["iterations"]

    step.on_step = on_step
    cpu = time.process_time()
    step.run(state, None)
    cpu = time.process_time() - cpu
    z = dk.model.X[:, 2] + state.u[:, 2]
    return {"rate": (len(stamps) - 1) / (stamps[-1] - stamps[0]), "its": its[0] / step.steps,
            "steps": step.steps, "cpu": cpu, "z": float(z.mean()),
            "kinetic": 0.5 * M_S * float(np.sum(state.v[:, :3] ** 2))}


def run_exudyn_heap(exu, side: int = SIDE, duration: float = T_HEAP) -> dict:
    """The same heap in Exudyn's GeneralContact (module doc)."""
    from exudyn.itemInterface import (
        LoadForceVector,
        MarkerBodyRigid,
        MarkerNodePosition,
        NodePoint,
        ObjectGround,
        ObjectMassPoint,
    )

    sc = exu.SystemContainer()
    mbs = sc.AddSystem()
    X = heap_positions(side)
    gc = mbs.AddGeneralContact()
    gc.verboseMode = 0
    gc.SetFrictionPairings(np.zeros((1, 1)))
    nodes = []
    for x in X:
        node = mbs.AddNode(NodePoint(referenceCoordinates=list(x)))
        mbs.AddObject(ObjectMassPoint(physicsMass=M_S, nodeNumber=node))
        marker = mbs.AddMarker(MarkerNodePosition(nodeNumber=node))
        mbs.AddLoad(LoadForceVector(markerNumber=marker, loadVector=[0, 0, -M_S * G_S]))
        gc.AddSphereWithMarker(marker, radius=R_S, contactStiffness=K_ITEM,
                               contactDamping=D_ITEM, frictionMaterialIndex=0)
        nodes.append(node)
    ground = mbs.AddMarker(MarkerBodyRigid(bodyNumber=mbs.AddObject(ObjectGround()),
                                           localPosition=[0, 0, 0]))
    a = 10.0
    gc.AddTrianglesRigidBodyBased(rigidBodyMarkerIndex=ground, contactStiffness=K_ITEM,
                                  contactDamping=D_ITEM, frictionMaterialIndex=0,
                                  pointList=[[-a, -a, 0], [a, -a, 0], [a, a, 0], [-a, a, 0]],
                                  triangleList=[[0, 1, 2], [0, 2, 3]], staticTriangles=True)
    low, high = X.min(axis=0) - 4 * R_S, X.max(axis=0) + 4 * R_S
    low[2] = -R_S
    gc.SetSearchTreeBox(low, high)
    gc.SetSearchTreeCellSize([side, side, side])
    steps = round(duration / H_HEAP)
    cpu = time.process_time()
    rate = timed_solve(exu, mbs, steps, duration, "GeneralizedAlpha",
                       f"the heap of {len(X)} spheres")
    cpu = time.process_time() - cpu
    var = exu.OutputVariableType
    z = np.array([mbs.GetNodeOutput(n, var.Position)[2] for n in nodes])
    v = np.array([mbs.GetNodeOutput(n, var.Velocity) for n in nodes])
    it = mbs.sys["dynamicSolver"].it
    return {"rate": rate, "its": it.newtonStepsCount / steps, "steps": steps, "cpu": cpu,
            "z": float(z.mean()), "kinetic": 0.5 * M_S * float(np.sum(v**2))}


def heap(exu) -> None:
    """The heap table: fem beside Exudyn, and how close both settle to the static columns."""
    n = SIDE**3
    print(f"\nA heap of {n} spheres falling on the ground (frictionless linear contacts, K = "
          f"{K_PAIR:g} N/m, c = {C_PAIR:g} N s/m), h = {H_HEAP:g} s, {T_HEAP:g} s: fem "
          f"{fem_version}" + (f" beside Exudyn {exu.__version__}" if exu else " alone"))
    print(f"{'program, integrator':<36} {'steps/s':>8} {'CPU s':>7} {'its/step':>8} "
          f"{'steps':>6} {'mean z (m)':>11} {'- static':>10} {'kinetic (J)':>11}")
    z_ref = settled_height()
    rows = [("fem, energy-conserving", run_fem_heap())]
    if exu:
        rows.append(("Exudyn, generalized-alpha", fastest(lambda: run_exudyn_heap(exu), 3)))
    for name, r in rows:
        print(f"{name:<36} {r['rate']:>8.4g} {r['cpu']:>7.3g} {r['its']:>8.3g} {r['steps']:>6d} "
              f"{r['z']:>11.7f} {r['z'] - z_ref:>10.2e} {r['kinetic']:>11.2e}")
    print(f"static columns: mean z {z_ref:.7f} m")
    if exu:
        fem, base = rows[0][1], rows[1][1]
        print(f"fem / Exudyn steps per second {fem['rate'] / base['rate']:.3g} (per CPU second "
              f"of the whole solve {base['cpu'] / fem['cpu']:.3g})")


def main():
    _petsc.init()
    try:
        import exudyn as exu
    except ImportError:
        exu = None
        print("Exudyn is missing (the extra 'peers': pip install --no-deps exudyn): fem's rows "
              "only")
    chain(exu)
    heap(exu)


if __name__ == "__main__":
    main()
