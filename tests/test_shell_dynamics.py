"""Energy-conserving dynamics of co-rotational shells (issue 12, item 3).

The shell's algorithmic force (:meth:`fem.elements.shell.corot.CorotShell.conserving`, Crisfield
& Shi's construction as for the beams) does the exact work ``Phi(p1) - Phi(p0)`` over a step and
has neither resultant force nor moment about the mid-point configuration; its tangent is the
exact derivative along Newton's corrections. A free-flying plate then keeps its energy and both
momenta (computed by the integrator from the nodal masses) to the Newton tolerance.
"""

import os

import numpy as np
import pytest
from conftest import fd_step_tangent, moving_ec_start
from helpers import square_plate_mesh

from fem import rotations as so3
from fem.elements.shell.corot import CorotShell
from fem.integrators.cayley import chord_nodes
from fem.integrators.inertia import midpoint_state, step_kinematics
from fem.io import deck as deck_io
from fem.run import make_step
from fem.state import State
from fem.system import System

rng = np.random.default_rng(1212)
E, NU, H, RHO = 1.0e4, 0.3, 0.05, 2.0


def triangle() -> CorotShell:
    """One co-rotational triangle, oblique in space."""
    X = np.array([[0.1, -0.2, 0.3], [1.2, 0.1, -0.1], [0.4, 0.9, 0.5]])
    return CorotShell("s", np.array([[0, 1, 2]]), X, 3, E=E, nu=NU, h=H, rho=RHO)


def random_state(g: CorotShell, angle: float) -> State:
    """The triangle deformed (translations of 0.05), carried by a rotation of ``angle`` rad and
    a translation, its nodes turned by a further 0.3 rad each."""
    X = g.X[0]
    axis = rng.normal(size=3)
    Q = so3.expm(angle * axis / np.linalg.norm(axis))
    st = State.reference(3, 3)
    st.u[:] = (X + 0.05 * rng.normal(size=(3, 3))) @ Q.T + rng.normal(size=3) - X
    st.rot[:] = so3.matrix_to_quat(Q @ so3.expm(0.3 * rng.normal(size=(3, 3))))
    return st


def step_force(g, s0, s1, hist, cayley: bool):
    """The algorithmic force, tangent, energy and history of the step ``s0 -> s1``.

    With ``cayley`` the rotation slots of the increment hold the Cayley parameters of
    ``R1 R0^T``, as the energy-conserving scheme passes them; else the rotation vectors.
    """
    kin = step_kinematics(s0, s1, None)
    sm = midpoint_state(s0, s1, None, kin)
    inc = kin.increment.copy()
    if cayley:
        inc[:, 3:] = so3.cay_from_quat(so3.quat_mul(s1.rot, so3.quat_conj(s0.rot)))
    f, K, energy, h1 = g.conserving(s0, s1, sm, g.element_vector(inc), hist,
                                    spins=np.ones((1, 3), dtype=bool),
                                    cayley=np.full((1, 3), cayley))
    return f[0], K[0], energy[0], h1, g.element_vector(inc)[0], sm


def corrected(s1: State, j: int, h: float) -> State:
    """``s1`` corrected by ``h`` along element DOF ``j`` as Newton does (rotations: spins)."""
    s = s1.copy()
    du = np.zeros((3, 6))
    du[divmod(j, 6)] = h
    s.increment(du, np.zeros(3, dtype=bool))
    return s


def drifted(g, s0):
    """``s0``'s local deformations with an algorithmic drift (as after many steps)."""
    p = g.conserving_start(s0)["p"]
    return {"p": p + 0.01 * rng.normal(size=p.shape)}


@pytest.mark.parametrize("cayley", [False, True])
def test_conserving_tangent_matches_finite_differences(cayley):
    """d f_alg / d s1 equals a central difference along Newton's corrections (translations
    added, rotations turned by spins) to 1e-6 relative, at random large states and steps
    (element rotations of 1 rad between the ends, nodal rotations of 0.3 rad on top) and with
    drifted algorithmic deformations; the increments as rotation vectors and as Cayley
    parameters."""
    g = triangle()
    h = 1e-6
    for _ in range(3):
        s0, s1 = random_state(g, 1.0), random_state(g, 1.0)
        hist = drifted(g, s0)
        K = step_force(g, s0, s1, hist, cayley)[1]
        fd = np.column_stack([
            (step_force(g, s0, corrected(s1, j, h), hist, cayley)[0]
             - step_force(g, s0, corrected(s1, j, -h), hist, cayley)[0]) / (2 * h)
            for j in range(18)])
        assert np.abs(fd).max() > 1.0
        assert np.abs(K - fd).max() <= 1e-6 * np.abs(fd).max()


@pytest.mark.parametrize("cayley", [False, True])
def test_algorithmic_force_does_the_exact_work_and_has_no_resultant(cayley):
    """f . inc = Phi(p1) - Phi(p0) to round-off for random large steps, and f has no
    resultant force and no resultant moment about the mid-point positions."""
    g = triangle()
    for _ in range(5):
        s0, s1 = random_state(g, 1.0), random_state(g, 1.0)
        hist = drifted(g, s0)
        f, _, energy, h1, inc, sm = step_force(g, s0, s1, hist, cayley)
        phi0 = 0.5 * hist["p"][0] @ g.K_local[0] @ hist["p"][0]
        work = f @ inc
        assert abs(work) > 1e-3 * max(energy, phi0)            # a step that does work
        assert abs((energy - phi0) - work) <= 1e-12 * max(energy, phi0)
        fn = f.reshape(3, 6)
        x_m = g.positions(sm)[0]
        scale = np.abs(f).max()
        assert np.abs(fn[:, :3].sum(axis=0)).max() <= 1e-12 * scale
        moment = np.cross(x_m, fn[:, :3]).sum(axis=0) + fn[:, 3:].sum(axis=0)
        assert np.abs(moment).max() <= 1e-12 * scale


def test_rigid_cayley_step_leaves_the_local_deformations_unchanged():
    """A rigid step (translation plus a turn of 0.8 rad) whose nodes turn by cay(psi) like the
    corners' mid-point chords changes the algorithmic deformations by round-off only (with the
    rotation vector instead, the local rotations would change by O(angle^3))."""
    g = triangle()
    s0 = random_state(g, 1.0)
    psi = 2 * np.tan(0.4) * np.array([0.6, -0.48, 0.64])
    C = so3.cay(psi)
    x0 = g.X[0] + s0.u
    xc = x0.mean(axis=0)
    s1 = s0.copy()
    s1.u[:] = (x0 - xc) @ C.T + xc + np.array([0.2, -0.1, 0.3]) - g.X[0]
    s1.rot[:] = so3.matrix_to_quat(C @ s0.rotation_matrices())
    hist = g.conserving_start(s0)
    for cayley, small in ((True, True), (False, False)):
        _, _, _, h1, _, _ = step_force(g, s0, s1, hist, cayley)
        change = np.abs(h1["p"] - hist["p"]).max()
        assert (change <= 1e-13) == small, change


# --- the whole integrator ----------------------------------------------------------------------

def plate_deck(n: int, integrator: str, steps: int, h: float, stiffener: bool = False) -> dict:
    """A free unit square plate of n x n squares (two co-rotational triangles each), E = 1e6,
    nu = 0.3, thickness 0.02, density 100 (lumped nodal inertia); ``stiffener``: a
    co-rotational beam along the edge y = 0 sharing the plate's nodes."""
    coords, tri, ids = square_plate_mesh(n)
    d = {"model": {"dim": 3},
         "materials": [{"name": "m", "E": 1.0e6, "nu": 0.3, "density": 100.0}],
         "nodes": {"coordinates": coords.tolist()},
         "elements": [{"name": "plate", "type": "shell", "formulation": "corotational",
                       "material": "m", "thickness": 0.02, "connectivity": tri.tolist()}],
         "steps": [{"name": "fly", "type": "dynamic", "integrator": integrator,
                    "time_step": h, "duration": steps * h, "tolerance": 1e-10,
                    "output_interval": steps * h / 50}]}
    if stiffener:
        edge = ids[np.isclose(coords[:, 1], 0.0)]
        d["sections"] = [{"name": "s", "A": 1e-3, "Iy": 2e-7, "Iz": 3e-7, "J": 1e-7}]
        d["elements"].append({"name": "rib", "type": "beam", "formulation": "corotational",
                              "material": "m", "section": "s", "orientation": [0, 0, 1],
                              "connectivity": np.column_stack([edge[:-1], edge[1:]]).tolist()})
    return d


def test_step_residual_tangent_matches_finite_differences():
    """The energy-conserving step's effective tangent (shells with Cayley nodes, a beam
    stiffener sharing them, Simo-Wong rotary inertia) equals a central difference of its
    residual along Newton's corrections of s1 to 1e-6 relative, at a moving, deformed state
    with drifted algorithmic deformations and a large step (0.4 rad rotations)."""
    r_ = np.random.default_rng(5)
    dk = deck_io.from_dict(plate_deck(2, "energy_conserving", 1, 0.01, stiffener=True))
    sysm = System(dk.model)
    assert chord_nodes(dk.model).all()
    step = make_step(dk.steps[0], sysm, dk)
    integ, s0 = moving_ec_start(sysm, step, r_, 0.01)
    n = s0.n_nodes
    s0.history["plate"]["p"] += 1e-3 * r_.normal(size=s0.history["plate"]["p"].shape)
    integ.start_step(s0)
    s1 = s0.copy()
    s1.t = 0.01
    du = np.zeros((n, 6))
    du[:, :3], du[:, 3:] = 0.02 * r_.normal(size=(n, 3)), 0.4 * r_.normal(size=(n, 3))
    sysm.update(s1, du)
    K, fd = fd_step_tangent(integ, sysm, s0, s1)
    assert np.abs(K - fd).max() <= 1e-6 * np.abs(fd).max()


def free_plate(integrator: str, steps: int, h: float):
    """The 4 x 4 x 2 plate flying free after an impulse: an initial velocity field of a
    translation, a spin of 2.3 rad/s about an oblique axis (0.01 rad per step at h = 0.005)
    and a bending velocity (the twisting mode ``x y`` and a cylindrical ``cos(pi x)``, with the
    matching rotation rates). Returns the step, its Newton iterations, the final state and the
    system."""
    dk = deck_io.from_dict(plate_deck(4, integrator, steps, h))
    sysm = System(dk.model)
    state = sysm.reference_state()
    X = dk.model.X
    omega = np.array([0.5, -1.0, 2.0])
    x, y = X[:, 0] - 0.5, X[:, 1] - 0.5
    state.v[:, :3] = np.array([0.3, -0.2, 0.1]) + np.cross(omega, X - [0.5, 0.5, 0.0])
    state.v[:, 2] += 2.0 * x * y + 0.3 * np.cos(np.pi * X[:, 0])
    state.v[:, 3:6] = omega
    state.v[:, 3] += 2.0 * x                               # d(vz)/dy
    state.v[:, 4] -= 2.0 * y + 0.3 * np.pi * np.sin(np.pi * X[:, 0])    # -d(vz)/dx
    step = make_step(dk.steps[0], sysm, dk)
    iterations = []
    step.on_step = lambda s: iterations.append(step._stats["iterations"])
    step.run(state, None)
    return step, np.array(iterations), state, sysm


def history(step, key):
    return np.array([row[key] for row in step.history])


#: the plate's flight: 5000 steps with FEM_SOAK=1, 1500 in make test (5000 took 54 s on CI)
PLATE_STEPS = 5000 if os.environ.get("FEM_SOAK") else 1500


@pytest.mark.slow
def test_free_flying_plate_conserves_energy_and_momenta():
    """Issue 12: after the impulse, total energy, linear and angular momentum constant to 1e-8
    relative over 5000 steps of h = 0.005 with FEM_SOAK=1 (25 s, about 35 periods of the plate's
    lowest free modes, 50 rad of spin; 1500 steps otherwise); the plate flexes (strain energy
    up to 3 % of the kinetic). Its 32 triangles take the compiled energy-conserving force
    (fem.elements.shell.shell_jit MIN_CONSERVING): a step costs 5-9 ms (13-21 ms with
    numpy)."""
    step, its, _, _ = free_plate("energy_conserving", PLATE_STEPS, 0.005)
    assert step.steps == PLATE_STEPS and step.cuts == 0
    assert its.mean() <= 4
    E, K = history(step, "total"), history(step, "kinetic")
    P, L = history(step, "linear_momentum"), history(step, "angular_momentum")
    assert np.max(np.abs(E - E[0])) <= 1e-8 * abs(E[0])
    assert np.max(np.linalg.norm(P - P[0], axis=1)) <= 1e-8 * np.linalg.norm(P[0])
    assert np.max(np.linalg.norm(L - L[0], axis=1)) <= 1e-8 * np.linalg.norm(L[0])
    assert history(step, "strain").max() > 1e-3 * K[0]                   # it does flex


def test_generalized_alpha_runs_with_corotational_shells():
    """A short free flight (0.1 s) with generalized-alpha converges (no halving, at most 3
    Newton iterations a step), does not gain energy, and its end state agrees with the
    energy-conserving scheme's to 1e-3 of the motion, closer at the smaller time step (by 2.4:
    the membrane and drilling modes, omega h up to about 8, are not in the asymptotic range)."""
    diffs, motion = [], []
    for h in (0.005, 0.0025):
        n = round(0.1 / h)
        ga, its, s_ga, sysm = free_plate("generalized_alpha", n, h)
        assert ga.steps == n and ga.cuts == 0 and its.max() <= 3
        E = history(ga, "total")
        assert E[-1] <= E[0] * (1 + 1e-12)
        _, _, s_ec, _ = free_plate("energy_conserving", n, h)
        diffs.append(np.abs(s_ga.u - s_ec.u).max())
        motion.append(np.abs(s_ec.u).max())
    assert max(diffs) <= 1e-3 * min(motion), (diffs, motion)
    assert diffs[0] / diffs[1] >= 2, diffs
