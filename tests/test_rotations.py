"""SO(3) maps: exp/log, quaternions, Jacobians and K_h against independent evaluations."""

import numpy as np
import pytest
import scipy.linalg as sla

from fem import rotations as so3

rng = np.random.default_rng(0)
ANGLES = [1e-9, 1e-3, 0.1, 0.29, 0.31, 1.0, 2.5, 3.1]


def vectors():
    for a in ANGLES:
        d = rng.normal(size=3)
        yield a * d / np.linalg.norm(d)


@pytest.mark.parametrize("theta", list(vectors()))
def test_expm_matches_matrix_exponential(theta):
    assert np.allclose(so3.expm(theta), sla.expm(so3.hat(theta)), atol=1e-14)


def test_rotate_turns_vectors_as_the_matrix_exponential_does():
    theta = np.array(list(vectors()))
    v = rng.normal(size=(len(theta), 3))
    want = np.einsum("eij,ej->ei", [sla.expm(so3.hat(t)) for t in theta], v)
    assert np.allclose(so3.rotate(theta, v), want, atol=1e-14)


@pytest.mark.parametrize("theta", list(vectors()))
def test_quaternion_round_trips(theta):
    q = so3.quat_from_rotvec(theta)
    assert np.allclose(so3.quat_to_matrix(q), so3.expm(theta), atol=1e-14)
    assert np.allclose(so3.rotvec_from_quat(q), theta, atol=1e-12)
    assert np.allclose(so3.logm(so3.expm(theta)), theta, atol=1e-9)
    assert np.allclose(np.abs(so3.matrix_to_quat(so3.expm(theta)) @ q), 1.0, atol=1e-12)


@pytest.mark.parametrize("theta", list(vectors()))
def test_left_jacobian_is_the_spatial_derivative_of_exp(theta):
    """dR R^T = hat(jl(theta) dtheta), by central differences."""
    h = 1e-6
    J = np.zeros((3, 3))
    for j in range(3):
        e = np.zeros(3)
        e[j] = h
        dR = (so3.expm(theta + e) - so3.expm(theta - e)) / (2 * h)
        J[:, j] = so3.vee(dR @ so3.expm(theta).T)
    assert np.allclose(so3.jl(theta), J, atol=1e-8)
    assert np.allclose(so3.jl_inv(theta) @ so3.jl(theta), np.eye(3), atol=1e-12)


@pytest.mark.parametrize("theta", list(vectors()))
def test_kh_is_the_derivative_of_jl_inv_transpose(theta):
    m = rng.normal(size=3)
    h = 1e-6
    K = np.column_stack([(so3.jl_inv(theta + h * e).T @ m - so3.jl_inv(theta - h * e).T @ m)
                         / (2 * h) for e in np.eye(3)])
    assert np.allclose(so3.kh(theta, m), K, atol=1e-8)


def test_quaternion_product_composes_rotations():
    a, b = rng.normal(size=3), rng.normal(size=3)
    q = so3.quat_mul(so3.quat_from_rotvec(a), so3.quat_from_rotvec(b))
    assert np.allclose(so3.quat_to_matrix(q), so3.expm(a) @ so3.expm(b), atol=1e-14)


def test_matrix_to_quat_near_half_turn():
    for axis in np.eye(3):
        R = so3.expm(np.pi * axis * (1 - 1e-12))
        assert np.allclose(so3.quat_to_matrix(so3.matrix_to_quat(R)), R, atol=1e-12)


@pytest.mark.parametrize("angle", [1e-4, 0.1, 0.29, 0.31, 1.0, 3.0])
def test_jl_derivative_equals_finite_differences(angle):
    """``d(jl(theta) y)/dtheta`` on both sides of the series threshold."""
    rng = np.random.default_rng(11)
    theta = rng.normal(size=3)
    theta *= angle / np.linalg.norm(theta)
    y = rng.normal(size=3)
    h = 1e-6
    fd = np.column_stack([(so3.jl(theta + h * e) @ y - so3.jl(theta - h * e) @ y) / (2 * h)
                          for e in np.eye(3)])
    np.testing.assert_allclose(so3.jl_derivative(theta, y), fd, rtol=0, atol=1e-9)
