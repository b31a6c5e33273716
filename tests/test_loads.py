"""Nodal loads: dead, follower and semitangential forces/moments and their load stiffness."""

import numpy as np
import pytest

from fem import rotations as so3
from fem.loads import StepLoads
from fem.model import Model, NodalLoad
from fem.state import State


def model(dim):
    return Model(dim=dim, X=np.zeros((2, 3)), node_ids=np.array([1, 2]))


def state(dim, rng):
    st = State.reference(dim, 2)
    if dim == 2:
        st.rot[:] = rng.normal(size=2)
    else:
        st.rot[:] = so3.quat_from_rotvec(rng.normal(size=(2, 3)) * 1.2)
    return st


CASES = [(2, "follower"), (3, "follower"), (3, "semitangential"), (3, "dead"), (2, "dead")]


@pytest.mark.parametrize("dim,kind", CASES)
def test_load_stiffness_is_minus_the_derivative_of_the_load(dim, kind):
    rng = np.random.default_rng(5)
    f0 = rng.normal(size=3) * (kind != "semitangential")
    m0 = rng.normal(size=3)
    if dim == 2:
        f0[2] = 0.0
        m0[:2] = 0.0
    ld = NodalLoad("L", np.array([1]), f0, m0, kind)
    loads = StepLoads(model(dim), (ld,), ramp=True)
    st = state(dim, rng)
    K = loads.stiffness(st, 0.7)
    ns = 3 if dim == 2 else 6
    K = np.zeros((2, ns, ns)) if K is None else K
    h = 1e-6
    for j in range(ns):
        du = np.zeros((2, ns))
        du[1, j] = h
        plus, minus = st.copy(), st.copy()
        plus.increment(du)
        minus.increment(-du)
        fd = -(loads.force(plus, 0.7) - loads.force(minus, 0.7))[1] / (2 * h)
        assert np.allclose(K[1][:, j], fd, atol=1e-7 * max(1.0, np.abs(fd).max()))
    assert np.all(K[0] == 0)


def test_follower_moment_turns_with_the_node_and_semitangential_follows_jl_inv():
    rng = np.random.default_rng(6)
    st = state(3, rng)
    m0 = np.array([0.0, 0.0, 2.0])
    R = so3.quat_to_matrix(st.rot[1])
    psi = so3.rotvec_from_quat(st.rot[1])
    for kind, expected in (("dead", m0), ("follower", R @ m0),
                           ("semitangential", so3.jl_inv(psi).T @ m0)):
        loads = StepLoads(model(3), (NodalLoad("L", np.array([1]), np.zeros(3), m0, kind),),
                          ramp=True)
        assert np.allclose(loads.force(st, 1.0)[1, 3:], expected, atol=1e-14)


def test_semitangential_moment_is_conservative():
    """Its work along a closed path of nodal rotations is zero (potential -m0 . psi)."""
    m0 = np.array([0.4, -1.0, 0.7])
    loads = StepLoads(model(3), (NodalLoad("L", np.array([1]), np.zeros(3), m0,
                                           "semitangential"),), ramp=True)
    for kind_check in ("semitangential", "follower"):
        if kind_check == "follower":
            loads = StepLoads(model(3), (NodalLoad("L", np.array([1]), np.zeros(3), m0,
                                                   "follower"),), ramp=True)
        st = State.reference(3, 2)
        work = 0.0
        n = 1000
        path = [np.array([np.cos(a), np.sin(a), 0.5 * np.sin(2 * a)]) * 0.8
                for a in np.linspace(0, 2 * np.pi, n + 1)]
        st.rot[1] = so3.quat_from_rotvec(path[0])
        for k in range(n):
            q_next = so3.quat_from_rotvec(path[k + 1])
            R_now, R_next = so3.quat_to_matrix(st.rot[1]), so3.quat_to_matrix(q_next)
            dw = so3.logm(R_next @ R_now.T)                      # spatial spin of the step
            mid = st.copy()
            mid.rot[1] = so3.rotate_spatial(st.rot[1:2], 0.5 * dw[None])[0]
            work += loads.force(mid, 1.0)[1, 3:] @ dw
            st.rot[1] = q_next
        if kind_check == "semitangential":
            assert abs(work) < 5e-5          # midpoint rule error, O(1/n^2)
        else:
            assert abs(work) > 1e-2      # the follower moment does work around a loop


def test_state_dependence_is_read_again_when_the_held_loads_change():
    """StepLoads.state_dependent is kept between forces but follows ``begin``: a follower
    load held from an earlier step makes the forces turn with the node (the kept answer of
    the step's own dead load alone would leave it unturned)."""
    follower = NodalLoad("F", np.array([1]), np.array([0.0, 1.0, 0.0]), np.zeros(3), "follower")
    dead = NodalLoad("D", np.array([0]), np.array([1.0, 0.0, 0.0]), np.zeros(3))
    m = Model(dim=2, X=np.zeros((2, 3)), node_ids=np.array([1, 2]), loads=(follower, dead))
    loads = StepLoads(m, (dead,), ramp=True)
    st = State.reference(2, 2)
    st.rot[:] = [0.0, 0.5]
    loads.begin(st)
    assert not loads.state_dependent
    assert np.array_equal(loads.force(st, 1.0)[1], [0.0, 0.0, 0.0])
    st.load_scales = {"F": 2.0}
    loads.begin(st)
    assert loads.state_dependent
    f = loads.force(st, 1.0)[1]
    assert f[:2] == pytest.approx(2.0 * np.array([-np.sin(0.5), np.cos(0.5)]), abs=1e-15)
