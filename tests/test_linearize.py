"""The linearize step: M, D, K about a state or a steady spin; eigenvalues; state space.

Oracles: notes/lanczos_linearization.md T10 (two-link manipulator hanging at rest: 2.679384 and
7.171695 rad/s) and T12 (Kane's spin-up beam linearized about steady spin: chordwise and
flapwise frequencies, and instability without geometric stiffness), the heavy symmetric top
(nutation and precession of a sleeping top, closed form), finite differences of the inertial
forces, and the modal step (the same K and M without velocities).
"""

import h5py
import numpy as np
import pytest
import scipy.io
from helpers import deck_error, line_beam, solve

from fem import rotations as so3
from fem.analysis.linear_model import inertial_forces
from fem.inertia.nodal import NodalInertia
from fem.io.deck import from_dict
from fem.run import make_step, run
from fem.system import System


# --- T12: Kane's beam spinning at constant speed -------------------------------------------------
def spin_beam(dim: int, spin: float, *, geometric: bool = True, n: int = 20) -> dict:
    """L = 10, EI = 1.4e4, rho A = 1.2, EA = 2.8e7, clamped on the spin axis (notes T12)."""
    d = line_beam(dim, n, length=10.0, E=1.4e4, A=2.0e3, Iz=1.0, Iy=1.0, J=1.0,
                  rotary_inertia=False)
    d["sections"][0]["mass_per_length"] = 1.2
    d["supports"] = [{"nodes": [1], "fixed": ["all"]}]
    d["steps"] = [{"name": "lin", "type": "linearize", "modes": 4, "geometric": geometric,
                   "spin": [spin] if dim == 2 else [0.0, 0.0, spin]}]
    return d


# notes T12 (rotating-frame frequencies, rad/s): chordwise (in the plane of the spin) and
# flapwise (out of it); 20 elements with lumped masses give them within 0.2%
T12 = {2.0: (3.8962, 4.3795), 6.0: (4.5139, 7.5084), 10.0: (5.3096, 11.3222)}


@pytest.mark.parametrize("spin", sorted(T12))
def test_spinning_beam_frequencies_in_the_turning_frame(spin):
    chord, flap = T12[spin]
    e2 = solve(spin_beam(2, spin))[3][0].eigen
    assert e2.frequencies[0] == pytest.approx(chord, rel=5e-3)
    e3 = solve(spin_beam(3, spin))[3][0].eigen
    lowest = np.sort(e3.frequencies)[:2]
    assert lowest[0] == pytest.approx(chord, rel=5e-3)          # in-plane
    assert lowest[1] == pytest.approx(flap, rel=5e-3)           # out of plane
    assert e3.stable() and e2.stable()
    # the same beam discretized the same way agrees in 2D and 3D in its plane
    assert lowest[0] == pytest.approx(e2.frequencies[0], rel=1e-10)


def test_without_geometric_stiffness_a_spinning_beam_is_reported_unstable():
    """Omega = 6 > omega_1 = 3.80: K - Omega^2 M is indefinite without the tension's stiffening."""
    step = solve(spin_beam(2, 6.0, geometric=False))[3][0]
    assert not step.eigen.stable()
    p = step.eigen.values[np.argmax(step.eigen.values.real)]
    assert p.real > 1.0 and abs(p.imag) < 1e-8 * abs(p)        # a real, growing exponential
    assert any("unstable" in w for w in step.warnings)


def test_at_rest_the_linearization_is_the_modal_problem():
    """No spin, no velocities: p = +-i omega with the modal step's omega (same K, same M)."""
    d = spin_beam(3, 0.0)
    del d["steps"][0]["spin"]
    d["steps"][0]["modes"] = 6
    d["steps"].append({"name": "modes", "type": "modal", "modes": 6})
    steps = solve(d)[3]
    lin, modal = steps[0].eigen, steps[1]
    assert np.allclose(lin.values.real, 0.0, atol=1e-9 * np.abs(lin.values).max())
    assert np.allclose(np.sort(lin.frequencies), modal.frequencies(), rtol=1e-8)


# --- T10: the two-link manipulator hanging under gravity --------------------------------------
def two_link(method: str = "lanczos") -> dict:
    """m = 60, l = 1, l_c = 0.5, I_c = 5.037 (Li & Gontier, Table II), hanging straight down."""
    return {"model": {"dim": 2},
            "nodes": {"ids": [1, 2], "coordinates": [[0.0, -0.5], [0.0, -1.5]]},
            "bodies": [{"name": "l1", "nodes": [1], "mass": 60.0, "inertia": 5.037},
                       {"name": "l2", "nodes": [2], "mass": 60.0, "inertia": 5.037}],
            "joints": [{"name": "O1", "type": "revolute", "ground": [1],
                        "points": [[0.0, 0.0]]},
                       {"name": "O2", "type": "revolute", "pairs": [[1, 2]],
                        "points": [[0.0, -1.0]]}],
            "gravity": {"acceleration": [0.0, -9.81]},
            "steps": [{"name": "lin", "type": "linearize", "modes": 2, "method": method}]}


@pytest.mark.parametrize("method", ["lanczos", "dense"])
def test_two_link_manipulator_hanging_frequencies(method):
    """notes T10: omega = 2.679384, 7.171695 rad/s; the joints carry the weight (Gauss's
    principle gives the multipliers: no step before solved for them)."""
    e = solve(two_link(method))[3][0].eigen
    assert e.frequencies == pytest.approx([2.679384, 7.171695], abs=1e-6)
    assert np.abs(e.values.real).max() <= 1e-9 * np.abs(e.values).max()
    assert e.backward_errors.max() <= 1e-8


def test_two_link_manipulator_without_gravity_has_no_stiffness():
    """Regression guard of the constraint-geometric term (notes T7): without the weight in the
    joints, d(G^T lambda)/dq vanishes and nothing holds the links: p = 0 only."""
    d = two_link("dense")
    del d["gravity"]
    e = solve(d)[3][0].eigen
    assert np.abs(e.values).max() <= 1e-6


# --- the heavy symmetric top -----------------------------------------------------------------
M_TOP, L_TOP, A_TOP, C_TOP, G_TOP, W_TOP = 1.0, 0.5, 0.1, 0.2, 9.81, 50.0


def top(**step) -> dict:
    """A sleeping top: mass m, inertias (a, a, c) about its centre at height l over its tip."""
    return {"model": {"dim": 3},
            "nodes": {"ids": [1], "coordinates": [[0.0, 0.0, L_TOP]]},
            "bodies": [{"name": "top", "nodes": [1], "mass": M_TOP,
                        "inertia": [A_TOP, A_TOP, C_TOP]}],
            "joints": [{"name": "tip", "type": "spherical", "ground": [1],
                        "points": [[0.0, 0.0, 0.0]]}],
            "gravity": {"acceleration": [0.0, 0.0, -G_TOP]},
            "steps": [{"name": "lin", "type": "linearize", "modes": 4, **step}]}


def top_frequencies() -> np.ndarray:
    """Fast nutation and slow precession: a_O nu^2 - c w nu + m g l = 0, a_O = a + m l^2."""
    aO = A_TOP + M_TOP * L_TOP**2
    cw = C_TOP * W_TOP
    return (cw + np.array([1.0, -1.0]) * np.sqrt(cw**2 - 4 * aO * M_TOP * G_TOP * L_TOP)) / (2 * aO)


@pytest.mark.parametrize("method, shift", [("dense", 0.0), ("lanczos", 1.0)])
def test_spinning_top_in_the_inertial_frame(method, shift):
    """Linearized about its spinning state (gyroscopic D, the tip's reaction in K)."""
    dk = from_dict(top(method=method, shift=shift))
    sysm = System(dk.model)
    state = sysm.reference_state()
    state.v[0, 5] = W_TOP
    step = make_step(dk.steps[0], sysm, dk)
    step.run(state, None)
    p = step.eigen.values
    finite = np.sort(np.abs(p.imag[np.abs(p) > 1e-3]))
    assert finite == pytest.approx(np.sort(top_frequencies()), rel=1e-9)
    assert np.abs(p.real).max() <= 1e-6


def test_spinning_top_in_the_turning_frame():
    """Seen from the frame turning with the spin, each frequency nu is nu - w (the frame's
    rotation held: rz fixed, the free spin about the axis decouples)."""
    d = top(method="dense", spin=[0.0, 0.0, W_TOP])
    d["supports"] = [{"nodes": [1], "fixed": ["rz"]}]
    e = solve(d)[3][0].eigen
    assert np.sort(e.frequencies) == pytest.approx(np.sort(np.abs(top_frequencies() - W_TOP)),
                                                   rel=1e-9)


# --- the inertial forces' derivatives -----------------------------------------------------------
def test_inertial_force_derivatives_match_finite_differences():
    """F_R (spin of R at fixed spatial omega, alpha) and the velocity and acceleration
    derivatives of the turning-frame inertial force, against central differences; then the
    linearized K, D, M equal the chain rule of the module docstring along a trajectory."""
    rng = np.random.default_rng(3)
    dk = from_dict(top())
    sysm = System(dk.model)
    inertia = NodalInertia(sysm)
    inertia.J[0] = np.array([[0.3, 0.02, -0.01], [0.02, 0.2, 0.03], [-0.01, 0.03, 0.25]])
    X = dk.model.X
    s = sysm.reference_state()
    s.rot[:] = so3.quat_from_rotvec(rng.normal(size=(1, 3)))
    s.u[:] = 0.1 * rng.normal(size=(1, 3))
    s.v[:] = rng.normal(size=(1, 6))
    s.a[:] = rng.normal(size=(1, 6))
    spin, center = rng.normal(size=3), rng.normal(size=3)
    f0, M, D, K = inertial_forces(inertia, s, X, spin, center)

    def force(state):
        return inertial_forces(inertia, state, X, spin, center, matrices=False)

    # a perturbation eps (dq, dq', dq'') of the state: rotations exp(hat(eps phi)) R_bar, whose
    # spatial rates are omega_bar + eps (phi' + phi x omega_bar) and alpha_bar + eps (phi'' +
    # phi x alpha_bar - omega_bar x phi') to first order (hat(omega) = R' R^T, alpha = omega');
    # d f / d eps = K dq + D dq' + M dq''
    dq, ddq, dddq = (rng.normal(size=6) for _ in range(3))
    w, al = s.v[0, 3:].copy(), s.a[0, 3:].copy()

    def at(eps):
        st = s.copy()
        phi, dphi, ddphi = eps * dq[3:], eps * ddq[3:], eps * dddq[3:]
        st.u[0] = s.u[0] + eps * dq[:3]
        st.v[0, :3] = s.v[0, :3] + eps * ddq[:3]
        st.a[0, :3] = s.a[0, :3] + eps * dddq[:3]
        st.rot[0] = so3.rotate_spatial(s.rot, phi[None])[0]
        st.v[0, 3:] = w + dphi + np.cross(phi, w)
        st.a[0, 3:] = al + ddphi + np.cross(phi, al) - np.cross(w, dphi)
        return st

    h = 1e-5
    fd = (force(at(h)) - force(at(-h)))[0] / (2 * h)
    lin = K[0] @ dq + D[0] @ ddq + M[0] @ dddq
    assert np.abs(fd - lin).max() <= 1e-6 * np.abs(lin).max()
    assert np.abs(f0[0] - force(s)[0]).max() == 0.0


# --- deck, results file and state space ----------------------------------------------------------
def cantilever_deck(n: int = 10) -> dict:
    d = line_beam(2, n, E=1.0, A=1e4, Iz=1.0)
    d["sections"][0]["mass_per_length"] = 1.0
    d["supports"] = [{"nodes": [1], "fixed": ["all"]}]
    d["steps"] = [{"name": "lin", "type": "linearize", "modes": 3, "inputs": ["2 uy"],
                   "outputs": ["2 uy", "2 uy velocity"]}]
    return d


def test_state_space_model_in_hdf5_and_matlab(tmp_path):
    """The state-space model's static gain is the tip compliance L^3 / (3 EI) (exact for cubic
    elements), its eigenvalues contain the step's, and the .mat file holds the same A, B, C, D."""
    dk = from_dict(cantilever_deck())
    h5 = str(tmp_path / "out.h5")
    result = run(dk, h5)
    assert result.matlab == [str(tmp_path / "out_lin.mat")]
    with h5py.File(h5, "r") as f:
        g = f["linear/lin"]
        A, B, C, D = (g[k][()] for k in "ABCD")
        p = g["eigenvalues"][()]
        assert bool(g.attrs["stable"])
        n = g["stiffness"].attrs["shape"][0]
        assert g["unknowns"].shape == (n, 2)
    gain = C @ np.linalg.solve(-A, B) + D
    assert gain[0, 0] == pytest.approx(1.0 / 3.0, rel=1e-9)      # L^3 / (3 EI), L = EI = 1
    assert abs(gain[1, 0]) <= 1e-9                                # no velocity at rest
    lam = np.linalg.eigvals(A)
    for pi in p:
        assert np.abs(lam - pi).min() <= 1e-8 * abs(pi)
    mat = scipy.io.loadmat(str(tmp_path / "out_lin.mat"))
    assert np.array_equal(mat["A"], A) and np.array_equal(mat["C"], C)
    assert mat["Mass"].shape == (n, n)
    # the frequencies of a cantilever (lumped masses, 10 elements: within 1% of 3.5160)
    assert np.abs(p[0]) == pytest.approx(3.5160152685, rel=1e-2)


@pytest.mark.parametrize("change, key, words", [
    ({"spin": [1.0, 2.0]}, "steps[0].spin", "expected [wz]"),
    ({"center": [0.0, 0.0]}, "steps[0].center", "give spin too"),
    ({"inputs": ["2"]}, "steps[0].inputs[0]", "expected \"<node> <dof>\""),
    ({"inputs": ["x uy"]}, "steps[0].inputs[0]", "is not a node id"),
    ({"inputs": ["999 uy"]}, "steps[0].inputs[0]", "999"),
    ({"inputs": ["2 uz"]}, "steps[0].inputs[0]", "expected one of"),
    ({"inputs": ["1 uy"]}, "steps[0].inputs[0]", "not a free DOF"),
    ({"outputs": ["2 uy speed"]}, "steps[0].outputs[0]", "velocity"),
    ({"method": "slepc"}, "steps[0].method", "lanczos, dense"),
], ids=["spin", "center", "short", "id", "unknown", "dof", "fixed", "quantity", "method"])
def test_linearize_deck_mistakes(change, key, words):
    d = cantilever_deck()
    d["steps"][0].update(change)
    err = deck_error(d)
    assert err.key == key and words in err.message, str(err)


def test_a_lanczos_that_falls_short_names_the_step_and_offers_the_dense_method(monkeypatch):
    """The two-sided Lanczos's ConvergenceError (fewer pairs than wanted while approximations
    remain) reaches the user with the step's name and, for a model small enough, the dense
    method that cannot fall short."""
    import fem.solvers.eigen.lanczos2 as lanczos2
    from fem.errors import ConvergenceError

    def short(*args, **kwargs):
        raise ConvergenceError("the two-sided Lanczos accepted 2 of the 6 eigenvalues wanted")

    monkeypatch.setattr(lanczos2, "quadratic_eigen", short)
    with pytest.raises(ConvergenceError) as err:
        solve(two_link())
    assert str(err.value).startswith("step '") and "accepted 2 of the 6" in str(err.value)
    assert 'method = "dense" (exact,' in str(err.value)


def test_modal_step_refuses_the_two_sided_lanczos():
    d = cantilever_deck()
    d["steps"] = [{"name": "m", "type": "modal", "method": "lanczos2"}]
    err = deck_error(d)
    assert err.key == "steps[0].method" and "lanczos, slepc, dense" in err.message


def test_consistent_inertia_is_refused_by_name():
    d = spin_beam(2, 6.0)
    d["elements"][0]["inertia"] = "consistent"
    from fem.errors import ModelError

    with pytest.raises(ModelError, match="beam: inertia = \"consistent\" is not linearized"):
        solve(d)


# --- T10's matrices in joint coordinates ---------------------------------------------------------
def two_link_kinematics(th, u, a):
    """Nodes (centres of mass) of the two links: positions, velocities and accelerations
    ``(6,)`` each (x, y, angle per node) for the absolute angle ``th[0]`` of link 1 and the
    relative angle ``th[1]``, their rates ``u`` and accelerations ``a`` (complex-step safe)."""
    t1, t12 = th[0], th[0] + th[1]
    w1, w12 = u[0], u[0] + u[1]
    a1, a12 = a[0], a[0] + a[1]

    def e(t):
        return np.array([np.cos(t), np.sin(t)])

    def n(t):
        return np.array([-np.sin(t), np.cos(t)])

    x1, x2 = 0.5 * e(t1), e(t1) + 0.5 * e(t12)
    v1, v2 = 0.5 * w1 * n(t1), w1 * n(t1) + 0.5 * w12 * n(t12)
    acc1 = 0.5 * (a1 * n(t1) - w1**2 * e(t1))
    acc2 = a1 * n(t1) - w1**2 * e(t1) + 0.5 * (a12 * n(t12) - w12**2 * e(t12))
    return (np.array([*x1, t1, *x2, t12]), np.array([*v1, w1, *v2, w12]),
            np.array([*acc1, a1, *acc2, a12]))


def complex_step(f, x):
    """Jacobian of ``f`` at ``x`` by the complex step (exact to round-off)."""
    h = 1e-30
    return np.column_stack([f(x + 1j * h * e).imag / h for e in np.eye(len(x))])


def joint_coordinate_matrices(th, u, a, gravity: bool):
    """fem's absolute-coordinate linearization of the two links driven by the joint torques
    that give them the accelerations ``a`` (notes T10: tau = M a + B + g), projected on the
    joint coordinates: ``M_th = T^T M T``, ``D_th = T^T (M da/du + D dv/du)``, ``K_th = T^T (M
    da/dth + D dv/dth + K dq/dth)`` with ``T = dq/dth`` (the constraint forces drop out:
    ``G T = 0``, and the full residual vanishes at the state)."""
    th, u, a = (np.asarray(x, dtype=float) for x in (th, u, a))
    q0, v0, a0 = two_link_kinematics(th, u, a)
    c2, s2 = np.cos(th[1]), np.sin(th[1])
    M = np.array([[100.074 + 60 * c2, 20.037 + 30 * c2], [20.037 + 30 * c2, 20.037]])
    B = np.array([-30 * s2 * (2 * u[0] * u[1] + u[1] ** 2), 30 * s2 * u[0] ** 2])
    g = (np.array([882.9 * np.cos(th[0]) + 294.3 * np.cos(th[0] + th[1]),
                   294.3 * np.cos(th[0] + th[1])]) if gravity else np.zeros(2))
    tau = M @ a + B + g
    d = two_link("dense")
    d["nodes"]["coordinates"] = [list(q0[:2]), list(q0[3:5])]
    d["joints"][1]["points"] = [[np.cos(th[0]), np.sin(th[0])]]
    d["loads"] = [{"name": "t1", "nodes": [1], "moment": float(tau[0] - tau[1])},
                  {"name": "t2", "nodes": [2], "moment": float(tau[1])}]
    if not gravity:
        del d["gravity"]
    dk = from_dict(d)
    sysm = System(dk.model)
    state = sysm.reference_state()
    nodes = [int(np.flatnonzero(dk.model.node_ids == k)[0]) for k in (1, 2)]
    state.v[nodes] = v0.reshape(2, 3)
    step = make_step(dk.steps[0], sysm, dk)
    step.run(state, None)
    # the joint reactions and accelerations fem took from the state (Gauss) are the motion's
    assert np.abs(step.steady.a[nodes].ravel() - a0).max() <= 1e-12
    idx = sysm.dofmap.index[nodes, :3].ravel()
    K, D, Mq = (X.toarray()[np.ix_(idx, idx)] for X in (step.model.K, step.model.D, step.model.M))
    T = complex_step(lambda t: two_link_kinematics(t, u, a)[0], th)
    v_th = complex_step(lambda t: two_link_kinematics(t, u, a)[1], th)
    v_u = complex_step(lambda w: two_link_kinematics(th, w, a)[1], u)
    a_th = complex_step(lambda t: two_link_kinematics(t, u, a)[2], th)
    a_u = complex_step(lambda w: two_link_kinematics(th, w, a)[2], u)
    a_a = complex_step(lambda z: two_link_kinematics(th, u, z)[2], a)
    return (T.T @ Mq @ a_a, T.T @ (Mq @ a_u + D @ v_u),
            T.T @ (Mq @ a_th + D @ v_th + K @ T), tau)


@pytest.mark.parametrize("a, gravity, K_ref, T0", [
    ((0.0, 0.0), False, [[0, 0], [0, 16.209069]], [0, 25.244130]),
    ((0.3, -0.7), False, [[0, 2.524413], [0, 8.635830]], None),
    ((0.0, 0.0), True, [[-716.847583, -293.562775], [-293.562775, -277.353705]],
     [795.635602, 46.062088]),
], ids=["still", "accelerating", "gravity"])
def test_two_link_matrices_in_joint_coordinates(a, gravity, K_ref, T0):
    """notes T10 at q = (0.5, 1.0), u = (1, -2): M, D and K (with the d(M a)/dq term the paper
    omits) from fem's rigid bodies and revolute joints, projected on the joint angles, equal the
    closed form (given to 6 decimals: 1e-9 relative to 1e-6 absolute, what the table holds)."""
    M, D, K, tau = joint_coordinate_matrices((0.5, 1.0), (1.0, -2.0), a, gravity)
    assert M == pytest.approx(np.array([[132.492138, 36.246069], [36.246069, 20.037]]),
                              abs=1e-6)
    assert D == pytest.approx(np.array([[100.976518, 50.488259], [50.488259, 0.0]]), abs=1e-6)
    assert K == pytest.approx(np.array(K_ref), abs=1e-6)
    if T0 is not None:
        assert tau == pytest.approx(T0, abs=1e-6)
    # and exactly (1e-9) the closed form itself, not its 6 printed decimals
    c2, s2 = np.cos(1.0), np.sin(1.0)
    assert M == pytest.approx(np.array([[100.074 + 60 * c2, 20.037 + 30 * c2],
                                        [20.037 + 30 * c2, 20.037]]), rel=1e-9)
    u1, u2 = 1.0, -2.0
    assert D == pytest.approx(np.array([[-60 * u2 * s2, -60 * (u1 + u2) * s2],
                                        [60 * u1 * s2, 0.0]]), rel=1e-9, abs=1e-12)
    q1, q2 = 0.5, 1.0
    dM = np.array([[-60 * s2, -30 * s2], [-30 * s2, 0.0]])            # dM/dq2
    dB = np.array([-30 * c2 * (2 * u1 * u2 + u2**2), 30 * c2 * u1**2])  # dB/dq2
    K_exact = np.zeros((2, 2))
    K_exact[:, 1] = dM @ np.asarray(a) + dB
    if gravity:
        s1, s12 = np.sin(q1), np.sin(q1 + q2)
        K_exact += np.array([[-882.9 * s1 - 294.3 * s12, -294.3 * s12],
                             [-294.3 * s12, -294.3 * s12]])
    assert K == pytest.approx(K_exact, rel=1e-9, abs=1e-9 * np.abs(K_exact).max())


def test_dropping_the_joints_geometric_term_leaves_the_hanging_links_without_stiffness():
    """notes T7's regression guard on the real pipeline: the hanging links' stiffness is all
    d(G^T lambda)/dq of the weight their joints carry; linearized with the multipliers zeroed
    (that term dropped), every eigenvalue is zero."""
    from fem.analysis.linear_model import linear_model

    dk = from_dict(two_link("dense"))
    sysm = System(dk.model)
    step = make_step(dk.steps[0], sysm, dk)
    step.run(sysm.reference_state(), None)
    assert np.abs(step.eigen.values).min() > 2.0                  # with the term: 2.68, 7.17
    dropped = step.steady.copy()
    dropped.multipliers[:] = 0.0
    lm, _ = linear_model(sysm, dropped, step.loads)
    from fem.analysis.linear_model import dense_eigenvalues

    assert np.abs(dense_eigenvalues(lm, 2, 0.0).values).max() <= 1e-6
