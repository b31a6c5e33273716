"""Force elements beside Exudyn: a chain of rigid bars with joint spring-dampers.

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

The steps per second count the time loop alone (from the first step's callback to the end);
each rate is the best of 3 runs, the baseline Exudyn's, measured in the same run.
"""


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


def main():
    _petsc.init()
    try:
        import exudyn as exu
    except ImportError:
        exu = None
        print("Exudyn is missing (the extra 'peers': pip install --no-deps exudyn): fem's rows "
              "only")
    chain(exu)


if __name__ == "__main__":
    main()
