"""Spherical joints with offsets (fem.constraints.spherical): tangents equal finite differences,
the discrete gradient is exact, and zero offsets give the tie."""

import numpy as np
import pytest

from fem import rotations as so3
from fem.constraints.spherical import Spherical
from fem.constraints.tie import Tie
from fem.state import State

rng = np.random.default_rng(7)


def joint(dim, offsets=None):
    offsets = rng.normal(size=(1, 2, 3)) if offsets is None else offsets
    return Spherical("j", [[0, 1]], offsets, dim)


def random_state(dim, rot_scale=1.0):
    st = State.reference(dim, 2)
    st.u[:, :dim] = rng.normal(size=(2, dim))
    if dim == 2:
        st.rot[:] = rng.normal(size=2) * rot_scale
    else:
        st.rot[:] = so3.quat_from_rotvec(rng.normal(size=(2, 3)) * rot_scale)
    return st


def moved(st, dim, k, h):
    """``st`` with DOF ``k`` of the pair corrected by ``h`` (translations add, 3D spins turn)."""
    out = st.copy()
    ndn = 3 if dim == 2 else 6
    node, slot = divmod(k, ndn)
    du = np.zeros((2, ndn))
    du[node, slot] = h
    out.increment(du)
    return out


def fd(fun, st, dim, nd, h=1e-6):
    return np.column_stack([(fun(moved(st, dim, k, h)) - fun(moved(st, dim, k, -h))) / (2 * h)
                            for k in range(nd)])


@pytest.mark.parametrize("dim", [2, 3])
def test_tangent_equals_finite_differences(dim):
    j = joint(dim)
    for _ in range(3):
        st = random_state(dim)
        mu = rng.normal(size=(1, dim))
        K = j.tangent(st, mu, 2.5)[0]
        num = fd(lambda s: j.vector(s, mu, 2.5)[0], st, dim, j.nd)
        assert np.abs(K[:, :j.nd] - num).max() <= 1e-7 * np.abs(num).max()
        # linear in the multipliers
        e = np.eye(dim)
        dmu = np.column_stack([j.vector(st, mu + e[i], 2.5)[0] - j.vector(st, mu, 2.5)[0]
                               for i in range(dim)])
        np.testing.assert_allclose(K[:, j.nd:], dmu, rtol=0, atol=1e-12 * np.abs(dmu).max())


@pytest.mark.parametrize("dim", [2, 3])
@pytest.mark.parametrize("rot_scale", [1e-6, 0.2, 1.5])
def test_the_discrete_gradient_is_exact(dim, rot_scale):
    """``G_d dq = g(q_1) - g(q_0)`` to round-off, for any step (so ``G_d^T lambda`` does no work
    over a step whose ends satisfy the constraint)."""
    j = joint(dim)
    s0 = random_state(dim)
    s1 = s0.copy()
    ndn = 3 if dim == 2 else 6
    dq = np.zeros((2, ndn))
    dq[:, :dim] = rng.normal(size=(2, dim)) * rot_scale
    dq[:, dim:] = rng.normal(size=(2, ndn - dim)) * rot_scale
    s1.increment(dq)
    mu = np.eye(dim)                                   # G_d^T rows, one multiplier at a time
    Gd = np.stack([j.step_vector(s0, s1, mu[[i]], 1.0)[0, :j.nd] for i in range(dim)])
    change = j.gap(s1)[0] - j.gap(s0)[0]
    np.testing.assert_allclose(Gd @ dq.reshape(-1), change, rtol=0,
                               atol=1e-14 * max(1.0, np.abs(change).max()))


@pytest.mark.parametrize("dim", [2, 3])
def test_step_tangent_equals_finite_differences(dim):
    j = joint(dim)
    for scale in (1e-3, 0.7):
        s0 = random_state(dim)
        s1 = s0.copy()
        ndn = 3 if dim == 2 else 6
        s1.increment(rng.normal(size=(2, ndn)) * scale)
        mu = rng.normal(size=(1, dim))
        K = j.step_tangent(s0, s1, mu, 1.5)[0]
        num = fd(lambda s: j.step_vector(s0, s, mu, 1.5)[0], s1, dim, j.nd)
        assert np.abs(K[:, :j.nd] - num).max() <= 1e-7 * np.abs(num).max()


@pytest.mark.parametrize("dim", [2, 3])
def test_without_offsets_it_is_the_tie(dim):
    j = joint(dim, np.zeros((1, 2, 3)))
    tie = Tie("t", [[0, 1]], dim)
    st = random_state(dim)
    mu = rng.normal(size=(1, dim))
    v, vt = j.vector(st, mu)[0], tie.vector(st, mu)[0]
    ndn = 3 if dim == 2 else 6
    trans = np.r_[np.arange(dim), ndn + np.arange(dim)]
    np.testing.assert_allclose(v[trans], vt[:2 * dim], rtol=0, atol=1e-15)
    np.testing.assert_allclose(v[j.nd:], vt[2 * dim:], rtol=0, atol=1e-15)
    assert not np.any(v[np.setdiff1d(np.arange(j.nd), trans)])


def test_rigid_motion_of_the_pair_keeps_the_gap():
    """Turning and moving both nodes together as one rigid body leaves ``g`` unchanged (3D)."""
    X = np.array([[0.0, 0.0, 0.0], [1.0, 0.5, -0.3]])
    P = np.array([0.4, 0.9, 0.2])
    j = Spherical("j", [[0, 1]], (P - X)[None], 3)
    st = State.reference(3, 2)
    w = np.array([0.4, -1.1, 0.7])
    R = so3.expm(w)
    st.u[:] = (X @ R.T - X) + np.array([0.3, -0.2, 1.0])
    st.rot[:] = so3.quat_from_rotvec(np.tile(w, (2, 1)))
    np.testing.assert_allclose(j.gap(st), 0.0, atol=1e-15)
