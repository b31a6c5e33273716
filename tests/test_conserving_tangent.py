"""The energy-conserving step is linearized exactly (issue "Seams", item 2).

Newton corrects the end state ``s1`` of a time step: translations are added, 3D rotations are
turned by spatial spins (``State.increment``, ``System.update``); the step's increment, its
mid-point configuration and the algorithmic forces all move with ``s1``. The tangents the elements
and the integrators return must be the derivatives of their residuals along those corrections,
else Newton converges only linearly (about 12 iterations per step at 0.2 rad per step).
"""

import numpy as np
import pytest
from conftest import fd_step_tangent, random_state, slot_columns

from fem import rotations as so3
from fem.inertia.nodal import NodalInertia
from fem.integrators import make_integrator
from fem.integrators.inertia import midpoint_state, step_kinematics
from fem.io import deck as deck_io
from fem.run import make_step
from fem.system import System

rng = np.random.default_rng(2024)


# --- every element family ----------------------------------------------------------------------

def step_force(g, s0, s1, hist, spins):
    """The group's algorithmic force and tangent for the step ``s0 -> s1``."""
    additive = None if g.dim == 2 else ~spins[0]
    kin = step_kinematics(s0, s1, additive)
    sm = midpoint_state(s0, s1, additive, kin)
    inc = g.element_vector(kin.increment)
    extra = {"spins": spins} if "rx" in g.dof_names else {}
    f, K, _, _ = g.conserving(s0, s1, sm, inc, hist, **extra)
    return f[0], K[0]


def corrected(g, s1, j, h, spins):
    """``s1`` corrected by ``h`` along element DOF ``j``, as Newton does (spin or additive)."""
    s = s1.copy()
    du = np.zeros((2, 3 if g.dim == 2 else 6))
    node, k = divmod(j, g.ndn)
    du[node, slot_columns(g)[k]] = h
    s.increment(du, None if g.dim == 2 else ~spins[0])
    return s


def spin_cases(g):
    """Which nodes Newton turns by spins: co-rotational elements always; a 3D linear beam both
    ways (its own nodes are additive; a node it shares with a co-rotational element is not)."""
    if g.dim == 2 or g.formulation != "linear":
        return [np.full((1, 2), g.dim == 3)]
    if "rx" not in g.dof_names:
        return [np.zeros((1, 2), dtype=bool)]
    return [np.zeros((1, 2), dtype=bool), np.ones((1, 2), dtype=bool),
            np.array([[True, False]])]


def test_conserving_tangent_matches_finite_differences(group):
    """d f_alg / d s1 equals a central difference along Newton's corrections, to 1e-6 relative,
    at random large states and steps (translations of 0.3 on a bar of 1.3, nodal rotations of
    about 1 rad, steps of up to 2 rad) and with algorithmic deformations that drifted from the
    geometric ones."""
    h = 1e-6
    for spins in spin_cases(group):
        for _ in range(3):
            s0 = random_state(group, rng, scale=0.3, rot_scale=0.6)
            s1 = random_state(group, rng, scale=0.3, rot_scale=0.6)
            hist = group.conserving_start(s0)
            if "v" in hist:                       # beams: drifted local rotations
                drift = 0.05 * rng.normal(size=hist["v"].shape)
                drift[:, 0] = 0.0                 # the elongation stays the geometric one
                hist = {"v": hist["v"] + drift}
            _, K = step_force(group, s0, s1, hist, spins)
            fd = np.column_stack([
                (step_force(group, s0, corrected(group, s1, j, h, spins), hist, spins)[0]
                 - step_force(group, s0, corrected(group, s1, j, -h, spins), hist, spins)[0])
                / (2 * h) for j in range(group.nd)])
            assert np.abs(K - fd).max() <= 1e-6 * np.abs(fd).max(), spins


def test_half_spin_is_the_motion_of_the_mid_point_rotation():
    """exp(theta/2) R0 turns by half_spin(theta) dw when exp(theta) R0 turns by dw."""
    R0 = so3.expm(np.array([0.4, -1.1, 0.3]))
    for theta in (np.array([0.3, -0.2, 0.5]), np.array([1.5, 1.0, -2.0]), np.zeros(3)):
        C = so3.half_spin(theta)
        h = 1e-6
        cols = []
        for dw in np.eye(3):
            ends = []
            for s in (h, -h):
                th = so3.logm(so3.expm(s * dw) @ so3.expm(theta))
                ends.append(so3.expm(th / 2) @ R0)
            cols.append(so3.vee((ends[0] - ends[1]) @ (so3.expm(theta / 2) @ R0).T) / (2 * h))
        assert np.allclose(np.column_stack(cols), C, atol=1e-8)


# --- the whole integrator ----------------------------------------------------------------------

def small_model(loads: bool) -> dict:
    """Five nodes in 3D: two co-rotational beams, a linear Timoshenko beam sharing a node with
    them (so that node turns by spins) and ending at a node of its own (additive rotations),
    two co-rotational bars, a point mass with a full rotary-inertia tensor; a dead force and a
    follower force and moment."""
    d = {"model": {"dim": 3},
         "materials": [{"name": "m", "E": 1e3, "G": 400.0, "density": 5.0}],
         "sections": [{"name": "s", "A": 0.05, "Iy": 2e-4, "Iz": 5e-4, "J": 3e-4, "Ay": 0.04,
                       "Az": 0.04},
                      {"name": "bar", "A": 0.02}],
         "nodes": {"coordinates": [[0, 0, 0], [1, 0.2, 0.1], [1.5, 0.8, -0.2], [2.0, 1.0, 0.3],
                                   [0.5, 1.0, 0.0]]},
         "elements": [{"name": "cr", "type": "beam", "formulation": "corotational",
                       "material": "m", "section": "s", "connectivity": [[1, 2], [2, 3]],
                       "orientation": [0, 0, 1]},
                      {"name": "lin", "type": "beam", "formulation": "linear", "material": "m",
                       "section": "s", "connectivity": [[3, 4]], "orientation": [0, 0, 1],
                       "theory": "timoshenko"},
                      {"name": "bars", "type": "truss", "formulation": "corotational",
                       "material": "m", "section": "bar", "connectivity": [[5, 2], [5, 1]]}],
         "masses": [{"nodes": 4, "mass": 0.3,
                     "inertia": [[0.02, 0.003, -0.001], [0.003, 0.01, 0.002],
                                 [-0.001, 0.002, 0.015]]},
                    {"nodes": 5, "mass": 0.2}],
         "steps": [{"name": "go", "type": "dynamic", "time_step": 0.1, "duration": 0.1}]}
    if loads:
        d["loads"] = [{"name": "dead", "nodes": 5, "force": [0.1, -0.2, 0.3]},
                      {"name": "fol", "nodes": 3, "force": [0.2, 0.1, -0.1],
                       "moment": [0.05, 0.02, 0.0], "kind": "follower"}]
    return d


@pytest.mark.parametrize("integrator", ["energy_conserving", "midpoint"])
@pytest.mark.parametrize("loads", [False, True])
def test_step_residual_tangent_matches_finite_differences(integrator, loads):
    """The integrator's effective tangent (elements, Simo-Wong rotary inertia, loads) equals a
    central difference of its residual along Newton's corrections of s1, to 1e-6 relative, at a
    moving, deformed state and a large step (0.5 rad rotations, h = 0.1)."""
    r_ = np.random.default_rng(7)
    dk = deck_io.from_dict(small_model(loads))
    sysm = System(dk.model)
    step = make_step(dk.steps[0], sysm, dk)
    s0 = sysm.reference_state()
    n = s0.n_nodes
    s0.u[:] = 0.2 * r_.normal(size=(n, 3))
    s0.rot[:] = so3.quat_from_rotvec(0.8 * r_.normal(size=(n, 3)))
    s0.v[:] = r_.normal(size=(n, 6))
    step.loads.begin(s0)
    integ = make_integrator(integrator, sysm, NodalInertia(sysm, s0), step.loads, 0.1)
    assert integ.inertia.lie.sum() == 4 and np.abs(integ.inertia.J).max() > 0
    integ.begin(s0)
    integ.start_step(s0)
    s1 = s0.copy()
    s1.t = 0.1
    du = np.zeros((n, 6))
    du[:, :3], du[:, 3:] = 0.15 * r_.normal(size=(n, 3)), 0.5 * r_.normal(size=(n, 3))
    sysm.update(s1, du)
    K, fd = fd_step_tangent(integ, sysm, s0, s1)
    assert np.abs(K - fd).max() <= 1e-6 * np.abs(fd).max()
