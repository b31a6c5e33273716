"""Joint groups (fem.constraints.joint): every kind in 2D and 3D, and every driven kind, has
tangents equal to finite differences, an exact discrete gradient, velocity terms equal to the
second derivative of its constraint along a motion, and the reactions of its multipliers."""

import numpy as np
import pytest

from fem import rotations as so3
from fem.constraints.joint import DRIVEN, ROWS, Joint
from fem.constraints.spherical import Spherical
from fem.state import State
from fem.time_functions import SpinUp

rng = np.random.default_rng(11)

#: a drive with a value, rate and acceleration at once (t = 0.7 in random_state)
DRIVE = SpinUp(rate=1.3, t0=0.0, t1=2.0)
KINDS = [(d, k) for d in (2, 3) for k in ROWS[d]] + [
    (d, f"driven {k}") for d in (2, 3) for k in DRIVEN[d]]


def frame():
    Q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    return Q * np.sign(np.linalg.det(Q))


def make(dim, kind):
    F = frame() if dim == 3 else so3.expm(np.array([0, 0, rng.normal()]))
    drive = DRIVE if kind.startswith("driven ") else None
    return Joint("j", kind.removeprefix("driven "), [[0, 1]], rng.normal(size=(1, 2, 3)),
                 F[None], dim, drive=drive)


def random_state(dim, scale=1.0):
    st = State.reference(dim, 2)
    st.t = 0.7
    st.u[:, :dim] = rng.normal(size=(2, dim)) * scale
    if dim == 2:
        st.rot[:] = rng.normal(size=2) * scale
    else:
        st.rot[:] = so3.quat_from_rotvec(rng.normal(size=(2, 3)) * scale)
    return st


def moved(st, dim, k, h):
    out = st.copy()
    ndn = 3 if dim == 2 else 6
    du = np.zeros((2, ndn))
    du[divmod(k, ndn)] = h
    out.increment(du)
    return out


def fd(fun, st, dim, nd, h=1e-6):
    return np.column_stack([(fun(moved(st, dim, k, h)) - fun(moved(st, dim, k, -h))) / (2 * h)
                            for k in range(nd)])


@pytest.mark.parametrize(("dim", "kind"), KINDS)
def test_tangent_equals_finite_differences(dim, kind):
    j = make(dim, kind)
    for _ in range(2):
        st = random_state(dim)
        mu = rng.normal(size=(1, j.n_multipliers))
        K = j.tangent(st, mu, 2.5)[0]
        num = fd(lambda s: j.vector(s, mu, 2.5)[0], st, dim, j.nd)
        assert np.abs(K[:, :j.nd] - num).max() <= 1e-7 * np.abs(num).max()
        # the multiplier columns are G^T and the rows G
        e = np.eye(j.n_multipliers)
        dmu = np.column_stack([j.vector(st, mu + e[[i]], 2.5)[0] - j.vector(st, mu, 2.5)[0]
                               for i in range(j.n_multipliers)])
        np.testing.assert_allclose(K[:, j.nd:], dmu, atol=1e-12 * np.abs(dmu).max())


@pytest.mark.parametrize(("dim", "kind"), KINDS)
@pytest.mark.parametrize("size", [1e-5, 0.3, 1.5])
def test_the_discrete_gradient_is_exact(dim, kind, size):
    """``G_d dq = g(q_1) - g(q_0)`` to round-off for any step: ``G_d^T lambda`` does no work
    over a step whose ends satisfy the joint."""
    j = make(dim, kind)
    s0 = random_state(dim)
    s1 = s0.copy()
    ndn = 3 if dim == 2 else 6
    dq = rng.normal(size=(2, ndn)) * size
    if dim == 3:          # the step's rotation vectors are those of angles below pi
        norm = np.linalg.norm(dq[:, 3:], axis=1, keepdims=True)
        dq[:, 3:] *= np.minimum(1.0, 2.5 / norm)
    s1.increment(dq)
    r = j.n_multipliers
    Gd = np.stack([j.step_vector(s0, s1, np.eye(r)[[i]], 1.0)[0, :j.nd] for i in range(r)])
    change = j.gap(s1)[0] - j.gap(s0)[0]
    np.testing.assert_allclose(Gd @ dq.reshape(-1), change, rtol=0,
                               atol=1e-13 * max(1.0, np.abs(change).max()))


@pytest.mark.parametrize(("dim", "kind"), KINDS)
def test_step_tangent_equals_finite_differences(dim, kind):
    j = make(dim, kind)
    for size in (1e-3, 0.7):
        s0 = random_state(dim)
        s1 = s0.copy()
        ndn = 3 if dim == 2 else 6
        s1.increment(rng.normal(size=(2, ndn)) * size)
        mu = rng.normal(size=(1, j.n_multipliers))
        K = j.step_tangent(s0, s1, mu, 1.5)[0]
        num = fd(lambda s: j.step_vector(s0, s, mu, 1.5)[0], s1, dim, j.nd)
        assert np.abs(K[:, :j.nd] - num).max() <= 1e-7 * np.abs(num).max()


@pytest.mark.parametrize(("dim", "kind"), KINDS)
def test_velocity_terms_are_the_second_derivative_of_the_constraint(dim, kind):
    """Along a motion with constant spatial angular velocities and accelerations ``a``,
    ``d2g/dt2 = G a + gamma`` (central differences in time)."""
    j = make(dim, kind)
    st = random_state(dim)
    ndn = 3 if dim == 2 else 6
    v, a = rng.normal(size=(2, ndn)), rng.normal(size=(2, ndn))

    def at(t):
        # translations x = x0 + v t + a t^2/2; rotations exp(hat(w t + al t^2/2)) R0 (spatial):
        # the spatial angular velocity is w + al t only to first order, so take al = 0 for the
        # rotations and test their acceleration through G separately below
        s = st.copy()
        s.t = st.t + t                    # a driver moves in time too
        inc = np.zeros((2, ndn))
        d = dim
        inc[:, :d] = v[:, :d] * t + 0.5 * a[:, :d] * t * t
        inc[:, d:] = v[:, d:] * t
        s.increment(inc)
        return s

    h = 1e-4
    g = [j.gap(at(t))[0] for t in (-h, 0.0, h)]
    num = (g[2] - 2 * g[1] + g[0]) / h**2
    s = st.copy()
    s.v[:] = v
    acc = np.zeros((2, ndn))
    acc[:, :dim] = a[:, :dim]
    G = j.jacobian(s)[0]
    exact = G @ acc.reshape(-1) + j.bias(s)[0]
    np.testing.assert_allclose(exact, num, atol=1e-5 * max(1.0, np.abs(num).max()))
    # and the first derivative: dg/dt = G v + (the drive's) dg/dt at fixed positions
    rate = (g[2] - g[0]) / (2 * h)
    np.testing.assert_allclose(G @ v.reshape(-1) + j.time_rate(s)[0], rate,
                               atol=1e-7 * max(1.0, np.abs(rate).max()))


def test_spherical_is_the_point_rows():
    off = rng.normal(size=(1, 2, 3))
    j, sph = Joint("j", "spherical", [[0, 1]], off, None, 3), Spherical("s", [[0, 1]], off, 3)
    st = random_state(3)
    mu = rng.normal(size=(1, 3))
    np.testing.assert_allclose(j.vector(st, mu), sph.vector(st, mu), atol=1e-14)
    np.testing.assert_allclose(j.tangent(st, mu), sph.tangent(st, mu), atol=1e-13)


@pytest.mark.parametrize("kind", ["revolute", "universal", "cylindrical", "prismatic", "planar"])
def test_free_relative_motions_keep_the_joint(kind):
    """A relative rotation about a joint's free axes and a slide along its free directions
    leave ``g = 0``, and a blocked one does not (3D)."""
    F = frame()
    X = np.array([[0.0, 0.0, 0.0], [1.0, 0.5, -0.3]])
    P = np.array([0.4, 0.9, 0.2])
    j = Joint("j", kind, [[0, 1]], (P - X)[None], F[None], 3)
    free_rot = {"revolute": [2], "universal": [0, 1], "cylindrical": [2], "prismatic": [],
                "planar": [2]}[kind]
    free_slide = {"revolute": [], "universal": [], "cylindrical": [2], "prismatic": [2],
                  "planar": [0, 1]}[kind]
    for axis in range(3):
        st = State.reference(3, 2)
        if kind == "universal" and axis < 2:
            # the cross: node a turns about e1, node b about e2
            w = F[:, axis] * 0.7
            node = 0 if axis == 0 else 1
        else:
            w, node = F[:, axis] * 0.7, 1
        R = so3.expm(w)
        st.rot[node] = so3.quat_from_rotvec(w)
        st.u[node] = (P + R @ (X[node] - P)) - X[node]          # turn about the joint point
        slide = np.zeros(3) if axis not in free_slide else 0.4 * F[:, axis]
        st.u[1] += slide
        closed = np.abs(j.gap(st)).max() < 1e-14
        assert closed == (axis in free_rot), (kind, axis)
        if axis in free_slide:
            st2 = State.reference(3, 2)
            st2.u[1] = 0.4 * F[:, axis]
            assert np.abs(j.gap(st2)).max() < 1e-14


def test_reactions_of_a_revolute_joint_are_force_and_moment_in_its_frame():
    """Multipliers chosen as a known force and moment on node ``a`` come back in the frame."""
    F = frame()
    j = Joint("j", "fixed", [[0, 1]], rng.normal(size=(1, 2, 3)), F[None], 3)
    st = State.reference(3, 2)
    force = np.array([1.0, -2.0, 0.5])
    # g rows: point (force on a = lambda), perp rows with moments about e1, e2, e3 of F
    lam = np.zeros((1, 6))
    lam[0, :3] = force
    lam[0, 3:] = [0.3, -0.4, 0.9]
    out = j.reactions(st, lam)
    np.testing.assert_allclose([out["fx"][0], out["fy"][0], out["fz"][0]], F.T @ force,
                               atol=1e-14)
    # perp i j gives G_w_a = e_i x e_j = e_k: the moment on a is -lambda e_k
    np.testing.assert_allclose([out["mx"][0], out["my"][0], out["mz"][0]], [-0.3, 0.4, -0.9],
                               atol=1e-14)


@pytest.mark.parametrize("dim", [2, 3])
def test_a_drivers_work_is_that_of_its_step_force(dim):
    """Over a step in which the drive moves, ``drive_work`` is the work ``-lambda . G_d dq`` of
    the step force on the driven row: what the energy balance adds up."""
    j = make(dim, "driven revolute")
    s0 = random_state(dim)
    s1 = s0.copy()
    s1.t = s0.t + 0.3
    ndn = 3 if dim == 2 else 6
    dq = rng.normal(size=(2, ndn)) * 0.4
    s1.increment(dq)
    r = j.n_multipliers
    mu = np.zeros((1, r))
    mu[0, -1] = 1.7
    force = j.step_vector(s0, s1, mu, 2.0)[0, :j.nd]
    np.testing.assert_allclose(j.drive_work(s0, s1, mu, 2.0), -force @ dq.reshape(-1),
                               rtol=1e-12)
