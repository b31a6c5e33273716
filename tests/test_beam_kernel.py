"""The compiled 3D beam kernel against the vectorized numpy reference (issue 14, item 1).

Same numbers to 1e-13 relative (of each array's largest entry) on states with large nodal
rotations, for Euler-Bernoulli and Timoshenko beams of mixed sections and orientations, with
local rotations near pi (the quaternion branch of the logarithm) among them; and the group takes
the kernel only where it is meant to.
"""

import numpy as np
import pytest

from fem import kernels
from fem import rotations as so3
from fem.elements import Beam
from fem.elements.beam import beam3d_jit
from fem.state import State

pytestmark = pytest.mark.skipif(not beam3d_jit.enabled(), reason="numba is not installed")


def random_group(theory: str, E: int, rng) -> Beam:
    """A cloud of E independent 3D co-rotational beams with random sections and triads."""
    X = rng.normal(size=(2 * E, 3)) * 2.0
    conn = np.arange(2 * E).reshape(E, 2)
    return Beam("b", conn, X, 3, formulation="corotational", theory=theory,
                E=rng.uniform(1, 3, E) * 210.0, G=80.0, A=rng.uniform(1, 2, E),
                Iy=rng.uniform(0.02, 0.08, E), Iz=rng.uniform(0.02, 0.08, E), J=0.06,
                Ay=1.5, Az=1.6, ref=rng.normal(size=(E, 3)))


def random_state(g: Beam, rng, angle: float) -> State:
    st = State.reference(3, 2 * len(g))
    st.u[:] = rng.normal(size=st.u.shape) * 0.2
    st.rot[:] = so3.quat_from_rotvec(rng.normal(size=(len(st.rot), 3)) * angle)
    return st


def reference(g: Beam, state: State):
    """The numpy path of the same group."""
    kin = g._kinematics(state)
    sigma, D, q = g.basic.response(kin.v)
    f = np.einsum("ebd,eb->ed", kin.B, q)
    kb = g.basic.material_stiffness(D) + g.basic.stress_hessian(sigma)
    BT = np.swapaxes(kin.B, 1, 2)
    return f, BT @ kb @ kin.B + g.frame.geometric(kin, q)


@pytest.mark.parametrize("theory", ["euler-bernoulli", "timoshenko"])
@pytest.mark.parametrize("angle", [0.05, 0.8])
def test_kernel_gives_the_numpy_numbers(theory, angle):
    rng = np.random.default_rng(7)
    g = random_group(theory, 300, rng)
    state = random_state(g, rng, angle)
    assert g._compiled()
    f, K = g.evaluate(state)
    f_ref, K_ref = reference(g, state)
    assert np.abs(f - f_ref).max() <= 1e-13 * np.abs(f_ref).max()
    assert np.abs(K - K_ref).max() <= 1e-13 * np.abs(K_ref).max()
    f_only, none = g.evaluate(state, tangent=False)
    assert none is None and np.array_equal(f_only, f)


def test_local_rotations_near_pi_take_the_quaternion_branch():
    """Turn the second node of every beam by nearly pi about its local y axis (which keeps the
    frame's mean y axis): the local rotations' trace test (c < -0.99) sends them through
    Shepperd's quaternion in both codes."""
    rng = np.random.default_rng(3)
    g = random_group("euler-bernoulli", 100, rng)
    state = State.reference(3, 200)
    axis = g.E0[:, :, 1]
    state.rot[1::2] = so3.quat_from_rotvec(axis * (np.pi - 0.05))
    kin = g._kinematics(state)
    assert np.all(np.linalg.norm(kin.theta[:, 1], axis=-1) > 3.0)
    f, K = g.evaluate(state)
    f_ref, K_ref = reference(g, state)
    assert np.abs(f - f_ref).max() <= 1e-13 * np.abs(f_ref).max()
    assert np.abs(K - K_ref).max() <= 1e-13 * np.abs(K_ref).max()


def test_small_and_linear_groups_keep_the_numpy_path(monkeypatch):
    """(2D co-rotational groups from MIN_ELEMENTS take their own kernel: test_planar_static.)"""
    rng = np.random.default_rng(1)
    assert not random_group("euler-bernoulli", kernels.MIN_ELEMENTS - 1, rng)._compiled()
    X = rng.normal(size=(200, 3))
    conn = np.arange(200).reshape(100, 2)
    assert not Beam("l", conn, X, 3, formulation="linear", E=1.0, G=1.0, A=1.0, Iy=1.0, Iz=1.0,
                    J=1.0, ref=[0.3, 0.1, 1.0])._compiled()
    small = kernels.MIN_ELEMENTS - 1
    assert not Beam("p", conn[:small], X, 2, E=1.0, G=1.0, A=1.0, Iz=1.0)._compiled()
    assert not Beam("p", conn, X, 2, formulation="linear", E=1.0, G=1.0, A=1.0,
                    Iz=1.0)._compiled()
    monkeypatch.setenv("FEM_JIT", "0")
    assert not random_group("euler-bernoulli", 100, rng)._compiled()


def test_shared_nodes_numbered_in_any_order():
    """Elements sharing nodes, numbered in no order, connectivity running either way: the kernel
    gathers the nodal quaternions and displacements itself (through ``conn``)."""
    rng = np.random.default_rng(5)
    n = 120
    X = rng.normal(size=(n, 3)) * 2.0
    pairs = rng.integers(0, n, size=(2000, 2))
    pairs = pairs[np.linalg.norm(X[pairs[:, 1]] - X[pairs[:, 0]], axis=1) > 0.5][:300]
    g = Beam("b", pairs, X, 3, formulation="corotational", theory="timoshenko",
             E=rng.uniform(1, 3, 300) * 210.0, G=80.0, A=1.5, Iy=0.05, Iz=0.03, J=0.06,
             Ay=1.5, Az=1.6, ref=rng.normal(size=(300, 3)))
    assert g._compiled() and len(np.unique(pairs)) < 2 * len(pairs)
    state = State.reference(3, n)
    state.u[:] = rng.normal(size=(n, 3)) * 0.2
    state.rot[:] = so3.quat_from_rotvec(rng.normal(size=(n, 3)) * 0.8)
    f, K = g.evaluate(state)
    f_ref, K_ref = reference(g, state)
    assert np.abs(f - f_ref).max() <= 1e-13 * np.abs(f_ref).max()
    assert np.abs(K - K_ref).max() <= 1e-13 * np.abs(K_ref).max()


@pytest.mark.parametrize("change", ["A", "S", "H0"])
def test_a_basic_beam_of_another_form_is_refused(change):
    """The kernel has the basic beam's A, the blocks of S and the second-order strains written
    in: a group whose basic beam differs is refused, not evaluated wrongly."""
    rng = np.random.default_rng(2)
    g = random_group("euler-bernoulli", 100, rng)
    b = g.basic
    if change == "A":
        b.A = b.A.copy()
        b.A[:, 2, 2] *= 1.01
    elif change == "S":
        b.S = b.S.copy()
        b.S[:, 0, 2] = b.S[:, 2, 0] = 1e-3             # couples axial force and bending
    else:
        b.H0 = b.H0 * 1.01
    with pytest.raises(RuntimeError, match="H_TERMS"):
        g.evaluate(random_state(g, rng, 0.1))


def test_a_state_with_too_few_nodes_is_refused():
    """The kernel does not check its indices: the wrapper does, as numpy's gather would."""
    rng = np.random.default_rng(4)
    g = random_group("euler-bernoulli", 100, rng)
    with pytest.raises(IndexError, match="200"):
        g.evaluate(State.reference(3, 150))
