"""The energy-conserving scheme's 2D rotations as Cayley parameters (fem.integrators.midpoint).

Nodes of co-rotational beams turn by ``dtheta = 2 atan(psi / 2)`` with ``psi = h w_m`` (the
mid-point angular velocity), the angle by which the mid-point rule turns a chord under a steady
spin, so a rigid spin leaves the algorithmic local rotations at zero (notes/crisfield_shi.md
section 4.2, option (b): the chord increment is ``2 tan(dalpha/2)``).
"""

import numpy as np
import pytest

from fem.inertia import inertia_groups
from fem.integrators import make_integrator
from fem.integrators.midpoint import cayley_secant
from fem.io import deck as deck_io
from fem.run import make_step
from fem.system import System


def test_cayley_secant_is_the_angle_over_its_cayley_parameter():
    """``s psi = dtheta`` with ``psi = 2 tan(dtheta/2)``; ``ds/ddtheta`` is the central difference
    of ``s``, on both sides of the series' switch at ``|dtheta| = 0.2``."""
    dth = np.array([-2.5, -0.7, -0.2001, -0.1999, -0.05, 1e-9, 0.03, 0.1999, 0.2001, 1.3, 3.0])
    s, ds = cayley_secant(dth)
    assert np.allclose(s * 2 * np.tan(dth / 2), dth, rtol=1e-15, atol=1e-300)
    e = 1e-6
    fd = (cayley_secant(dth + e)[0] - cayley_secant(dth - e)[0]) / (2 * e)
    assert np.allclose(ds, fd, rtol=1e-7, atol=1e-9)     # the differences' round-off: 2e-10


def jointed(h: float = 0.02, steps: int = 1, extras: bool = False) -> dict:
    """Three co-rotational beams in two chains pinned together away from both nodes; with
    ``extras`` also a linear beam sharing a beam node, a rotational spring on a beam node, a
    rigid body pinned to a beam (its node is not a beam node) and a dead moment."""
    d = {"model": {"dim": 2},
         "materials": [{"name": "m", "E": 1e3, "G": 400.0, "density": 5.0}],
         "sections": [{"name": "s", "A": 0.05, "Iz": 5e-4, "Ay": 0.04}],
         "nodes": {"coordinates": [[0, 0], [1, 0.2], [1.8, 0.5], [1.2, 1.0], [2.2, 1.4]]},
         "elements": [{"name": "cr", "type": "beam", "formulation": "corotational",
                       "material": "m", "section": "s", "connectivity": [[1, 2], [2, 3]]},
                      {"name": "cr2", "type": "beam", "formulation": "corotational",
                       "material": "m", "section": "s", "connectivity": [[5, 4]]}],
         "joints": [{"name": "pin", "type": "revolute", "pairs": [[3, 4]],
                     "points": [[1.5, 0.8]]}],
         "steps": [{"name": "go", "type": "dynamic", "time_step": h, "duration": steps * h,
                    "tolerance": 1e-12, "output_interval": h}]}
    if extras:
        d["nodes"]["coordinates"] += [[2.6, 0.1], [0.3, 1.2]]
        d["elements"].append({"name": "lin", "type": "beam", "formulation": "linear",
                              "material": "m", "section": "s", "connectivity": [[3, 6]]})
        d["springs"] = [{"name": "k", "nodes": 2, "dof": "rz", "stiffness": 3.0}]
        d["bodies"] = [{"name": "b", "nodes": [7], "mass": 0.3, "inertia": 0.02}]
        d["joints"].append({"name": "pin2", "type": "revolute", "pairs": [[1, 7]],
                            "points": [[0.1, 0.7]]})
        d["loads"] = [{"name": "m", "nodes": 4, "moment": 0.2}]
        d["steps"][0]["loads"] = ["m"]
    return d


def moving_state(sysm, rate: float = 5.0, seed: int = 3):
    """A spin at ``rate`` about the centroid plus random nodal velocities."""
    X = sysm.model.X
    st = sysm.reference_state()
    n = len(X)
    rng = np.random.default_rng(seed)
    st.v[:, :2] = np.cross([0, 0, rate], X - X.mean(0))[:, :2] + 0.3 * rng.normal(size=(n, 2))
    st.v[:, 2] = rate + rng.normal(size=n)
    return st


def test_step_tangent_with_cayley_rotations_matches_finite_differences():
    """The effective tangent (beams paired with psi, a linear beam, a spring and the joints
    paired with the angle and carried over to psi, rotary inertia, a rigid body) equals a central
    difference of the residual along Newton's corrections, to 1e-6 relative, at a moving,
    deformed state and a large step (0.5 rad rotations)."""
    rng = np.random.default_rng(11)
    dk = deck_io.from_dict(jointed(h=0.1, extras=True))
    sysm = System(dk.model)
    step = make_step(dk.steps[0], sysm, dk)
    s0 = moving_state(sysm)
    n = s0.n_nodes
    s0.u[:, :2] = 0.1 * rng.normal(size=(n, 2))
    s0.rot[:] = 0.8 * rng.normal(size=n)
    step.loads.begin(s0)
    integ = make_integrator("energy_conserving", sysm, inertia_groups(sysm, s0), step.loads, 0.1)
    integ.begin(s0)
    integ.start_step(s0)
    s1 = s0.copy()
    s1.t = 0.1
    du = np.zeros((n, 3))
    du[:, :2], du[:, 2] = 0.15 * rng.normal(size=(n, 2)), 0.5 * rng.normal(size=n)
    sysm.update(s1, du)
    s1.multipliers[:] = rng.normal(size=s1.multipliers.shape)     # joint forces at work
    kin = integ.kinematics(s0, s1)
    assert np.abs(kin.theta[:, 2] - kin.dtheta).max() > 1e-3     # psi differs from the angle
    K = sysm.assembler.to_scipy(integ.evaluate(s0, s1, tangent=True)[2]).toarray()
    nf, e = sysm.n_free, 1e-6
    cols = []
    for j in range(nf):                  # every unknown, the multipliers too
        ends = []
        for sign in (e, -e):
            trial = s1.copy()
            step_j = np.zeros(nf)
            step_j[j] = sign
            sysm.update_unknowns(trial, step_j)
            ends.append(integ.evaluate(s0, trial, tangent=False)[0][:nf])
        cols.append((ends[0] - ends[1]) / (2 * e))
    fd = np.column_stack(cols)
    assert np.abs(K - fd).max() <= 1e-6 * np.abs(fd).max()


def history(step, key):
    return np.array([row[key] for row in step.history])


def test_pinned_beams_conserve_energy_and_both_momenta_exactly():
    """Free flight of beams pinned away from their nodes, 200 steps of 0.1 rad: energy, linear
    and angular momentum to 1e-10 relative. The pin's forces are paired with psi, whose moment
    arms are the offsets at the mid-point, ``(R0 + R1) s / 2``, so they have no resultant moment
    (with the angle increments they had: angular momentum drifted by 4e-3)."""
    dk = deck_io.from_dict(jointed(steps=200))
    sysm = System(dk.model)
    step = make_step(dk.steps[0], sysm, dk)
    step.run(moving_state(sysm), None)
    assert step.steps == 200 and step.cuts == 0
    E, P, L = (history(step, k) for k in ("total", "linear_momentum", "angular_momentum"))
    assert np.max(np.abs(E - E[0])) <= 1e-10 * abs(E[0])
    assert np.max(np.abs(P - P[0])) <= 1e-10 * np.abs(P[0]).max()
    assert np.max(np.abs(L - L[0])) <= 1e-10 * np.abs(L[0]).max()
    assert history(step, "strain").max() > 0.1 * history(step, "kinetic")[0]    # it flexes


@pytest.mark.parametrize("phi", [0.12, 0.5, -1.2])
def test_a_rigid_step_leaves_the_algorithmic_local_rotations_unchanged(phi):
    """A step that turns the beams rigidly by ``phi`` about a point, nodes and chords alike,
    changes the algorithmic basic deformations by nothing (1e-14 rad): the beams see psi =
    2 tan(phi/2) at the nodes and the mid-point chord increment 2 tan(phi/2) (notes/
    crisfield_shi.md section 4.2, option (b)). With the angle increments they changed by
    ``phi - 2 tan(phi/2)`` (-(phi^3)/12 at small phi: the spin drift)."""
    dk = deck_io.from_dict(jointed(h=0.1))
    sysm = System(dk.model)
    step = make_step(dk.steps[0], sysm, dk)
    s0 = moving_state(sysm)
    step.loads.begin(s0)
    integ = make_integrator("energy_conserving", sysm, inertia_groups(sysm, s0), step.loads, 0.1)
    integ.begin(s0)
    integ.start_step(s0)
    X = sysm.model.X[:, :2]
    c = np.array([0.7, -0.3])
    Q = np.array([[np.cos(phi), -np.sin(phi)], [np.sin(phi), np.cos(phi)]])
    s1 = s0.copy()
    s1.u[:, :2] = (X - c) @ Q.T + c - X
    s1.rot += phi
    integ.evaluate(s0, s1, tangent=False)
    hist = integ._parts(s0, s1)[6][1]
    for g in sysm.model.groups:
        dv = hist[g.name]["v"] - s0.conserving[g.name]["v"]
        assert np.abs(dv).max() <= 1e-14
        assert np.abs(g.conserving_start(s1)["v"] - g.conserving_start(s0)["v"]).max() <= 1e-14
