"""Consistent (cubic Hermite) inertia of co-rotational beams (issue 10, item 6).

:mod:`fem.inertia.beam`: Meijaard's eq. 17 with ``eps1 = 0`` as an inertia group beside the nodal
one, selected per beam group with ``inertia = "consistent"``.
"""

import functools

import numpy as np
import pytest
import scipy.linalg
from conftest import fd_step_tangent
from helpers import line_beam

from fem import rotations as so3
from fem.elements.beam import mass as beam_mass
from fem.inertia import InertiaSum, inertia_groups
from fem.inertia.nodal import NodalInertia
from fem.integrators import make_integrator
from fem.integrators.base import midpoint_velocities
from fem.integrators.inertia import step_kinematics
from fem.io import deck as deck_io
from fem.run import make_step
from fem.system import System

rng = np.random.default_rng(10)


def beam_deck(dim: int, n: int = 3, inertia: str = "consistent", integrator="energy_conserving",
              h: float = 0.1, steps: int = 1, **extra) -> dict:
    if dim == 3:
        d = line_beam(3, n, E=1e3, G=4e2, A=1e-2, Iy=4e-6, Iz=1e-5, J=8e-6,
                      orientation=[0, 1, 0], inertia=inertia, **extra)
    else:
        d = line_beam(2, n, E=1e3, G=4e2, A=1e-2, Iz=1e-5, inertia=inertia, **extra)
    d["materials"][0]["density"] = 100.0
    d["steps"] = [{"name": "s", "type": "dynamic", "integrator": integrator, "time_step": h,
                   "duration": steps * h, "tolerance": 1e-10,
                   "output_interval": steps * h / 50}]
    return d


# --- (a) the small-rotation limit: the classical Hermite mass ----------------------------------

@pytest.mark.parametrize("dim", [2, 3])
def test_reference_mass_is_the_classical_hermite_mass(dim):
    """At the reference the group's mass is the Hermite mass of rho A (156, 22, 54, 13, 4, 3
    over 420) in both bending planes; axially eq. 17 with eps1 = 0 gives the same 156/54 (not
    the linear 140/70); the rotary inertia stays lumped, rho I l0 / 2 per node, in the nodal
    group (rho J l0 / 2 about the axis)."""
    d = beam_deck(dim, n=2, axis=[1.0, 0.4, -0.3][:dim])
    sysm = System(deck_io.from_dict(d).model)
    g = sysm.model.groups[0]
    inert = inertia_groups(sysm)
    assert isinstance(inert, InertiaSum) and len(inert.extras) == 1
    Me = inert.extras[0].element_mass(sysm.reference_state())
    r = g.inertia_per_length
    L = g.l0
    local = beam_mass.local_mass(dim, L, r["rhoA"], 0 * L, 0 * L, 0 * L)
    ndn = g.ndn
    ax = [0, ndn]
    local[np.ix_(range(len(L)), ax, ax)] = (r["rhoA"] * L / 420)[:, None, None] * np.array(
        [[156, 54], [54, 156]])
    T = beam_mass.rotation_blocks(dim, g._reference_axes())
    expected = np.swapaxes(T, 1, 2) @ local @ T
    assert np.allclose(Me, expected, rtol=1e-13, atol=1e-13 * np.abs(expected).max())
    # the nodal group keeps the rotary inertia only
    nodal = inert.nodal
    assert np.all(nodal.m == 0)
    if dim == 3:
        assert np.allclose(nodal.J[0], g.E0[0] @ np.diag([r["rhoJ"][0], r["rhoIy"][0],
                                                          r["rhoIz"][0]]) @ g.E0[0].T * L[0] / 2)
    else:
        assert np.isclose(nodal.I[0], r["rhoIz"][0] * L[0] / 2)


# --- (b) frequencies converge faster than with lumped inertia ----------------------------------

def cantilever_frequency(inertia: str, n: int) -> float:
    """First (beta L)^2 of a 2D cantilever without rotary inertia (Euler-Bernoulli)."""
    E, I, rho, A, Lt = 1e3, 1e-5, 100.0, 1e-2, 1.0
    d = line_beam(2, n, E=E, G=4e2, A=A, Iz=I, inertia=inertia, rotary_inertia=False)
    d["materials"][0]["density"] = rho
    d["supports"] = [{"nodes": 1, "fixed": ["all"]}]
    d["steps"] = [{"name": "s", "type": "dynamic", "time_step": 0.1, "duration": 0.1}]
    sysm = System(deck_io.from_dict(d).model)
    s = sysm.reference_state()
    K = sysm.assembler.to_scipy(sysm.evaluate(s)[1]).toarray()
    inert = inertia_groups(sysm, s)
    blocks = [None] * len(sysm.model.groups)
    nodal = getattr(inert, "nodal", inert)
    for x in getattr(inert, "extras", []):
        blocks[x.index] = x.element_mass(s)
    M = sysm.assembler.to_scipy(sysm.assembler.matrix(blocks, nodal.mass_blocks())).toarray()
    keep = np.diag(M) > 0                  # lumped: massless rotations condensed out
    Kc = K[np.ix_(keep, keep)] - K[np.ix_(keep, ~keep)] @ np.linalg.solve(
        K[np.ix_(~keep, ~keep)], K[np.ix_(~keep, keep)]) if (~keep).any() else K
    w2 = scipy.linalg.eigh(Kc, M[np.ix_(keep, keep)], eigvals_only=True)
    return float(np.sqrt(w2.min()) * Lt**2 * np.sqrt(rho * A / (E * I)))


def test_cantilever_frequency_converges_faster_with_consistent_inertia():
    """(beta L)^2 = 3.5160 within 0.1% with 4 consistent elements; lumped is worse."""
    exact = 3.51601527
    cons = cantilever_frequency("consistent", 4)
    lump = cantilever_frequency("lumped", 4)
    assert abs(cons - exact) <= 1e-3 * exact
    assert abs(lump - exact) > 2 * abs(cons - exact)


# --- (d) the step's tangent is exact ------------------------------------------------------------

@pytest.mark.parametrize("dim", [2, 3])
@pytest.mark.parametrize("integrator", ["energy_conserving", "midpoint", "trapezoidal",
                                        "generalized_alpha"])
def test_step_tangent_with_consistent_inertia_matches_finite_differences(dim, integrator):
    """The effective tangent equals a central difference of the step residual along Newton's
    corrections (translations, spatial spins) to 1e-6 relative, at a moving, deformed state and
    a large step (0.5 rad rotations)."""
    dk = deck_io.from_dict(beam_deck(dim, integrator=integrator))
    sysm = System(dk.model)
    step = make_step(dk.steps[0], sysm, dk)
    s0 = sysm.reference_state()
    n, ns = s0.n_nodes, sysm.model.nslots
    s0.u[:, :dim] = 0.2 * rng.normal(size=(n, dim))
    s0.rot[:] = (so3.quat_from_rotvec(0.8 * rng.normal(size=(n, 3))) if dim == 3
                 else 0.8 * rng.normal(size=n))
    s0.v[:] = rng.normal(size=(n, ns))
    step.loads.begin(s0)
    integ = make_integrator(integrator, sysm, inertia_groups(sysm, s0), step.loads, 0.1)
    integ.begin(s0)
    s0.a[:] = rng.normal(size=(n, ns))
    integ.start_step(s0)
    s1 = s0.copy()
    s1.t = 0.1
    du = np.zeros((n, ns))
    du[:, :dim], du[:, dim:] = 0.15 * rng.normal(size=(n, dim)), 0.5 * rng.normal(
        size=(n, ns - dim))
    sysm.update(s1, du)
    K, fd = fd_step_tangent(integ, sysm, s0, s1)
    assert np.abs(K - fd).max() <= 1e-6 * np.abs(fd).max()


@pytest.mark.parametrize("dim", [2, 3])
@pytest.mark.parametrize("integrator", ["energy_conserving", "midpoint"])
def test_inertial_work_equals_the_kinetic_energy_change(dim, integrator):
    """f . inc = T1 - T0 of the consistent group to round-off, at a large random step: with
    the moment ``dbar x f_d`` paired with Cayley parameters (energy-conserving scheme) and
    ``d0 x jl(theta)^T f_d`` paired with rotation vectors (mid-point rule)."""
    dk = deck_io.from_dict(beam_deck(dim))
    sysm = System(dk.model)
    step = make_step(dk.steps[0], sysm, dk)
    s0 = sysm.reference_state()
    n, ns = s0.n_nodes, sysm.model.nslots
    s0.rot[:] = (so3.quat_from_rotvec(rng.normal(size=(n, 3))) if dim == 3
                 else rng.normal(size=n))
    s0.v[:] = rng.normal(size=(n, ns))
    step.loads.begin(s0)
    integ = make_integrator(integrator, sysm, inertia_groups(sysm, s0), step.loads, 0.3)
    integ.begin(s0)
    integ.start_step(s0)
    s1 = s0.copy()
    du = rng.normal(size=(n, ns))
    sysm.update(s1, du)
    integ.evaluate(s0, s1, tangent=False)               # the mid-point velocities of s1
    kin = integ.kinematics(s0, s1)
    x = integ.extras[0]
    f, _ = x.midpoint_force(s0, s1, kin, 0.3, False)
    integ.update_rates(s0, s1, kin)                     # the director rates of s1
    work = float(np.sum(f * sysm.model.groups[0].element_vector(kin.increment)))
    dT = x.kinetic_energy(s1) - x.kinetic_energy(s0)
    assert abs(work - dT) <= 1e-13 * (x.kinetic_energy(s0) + x.kinetic_energy(s1))


def test_stored_director_rates_belong_to_the_nodal_velocities_and_rotations_they_came_with():
    """A state's stored director rates are used only by elements whose nodes still have the
    velocities and rotations they were written with; an element whose node was given a new
    velocity (a later step's velocity field) or turned (a static step) takes ``w x d`` again."""
    sysm = System(deck_io.from_dict(beam_deck(3, n=3)).model)
    x = inertia_groups(sysm).extras[0]
    s = sysm.reference_state()
    s.v[:] = rng.normal(size=s.v.shape)
    rigid = x.director_rates(s)
    stored = rigid + rng.normal(size=rigid.shape)
    s.rates[x.name] = {"v": stored, "nodal_v": s.v[x.conn].copy(),
                       "nodal_rot": s.rot[x.conn].copy()}
    assert np.array_equal(x.director_rates(s), stored)
    end, inner = x.conn[0, 0], x.conn[1, 1]                  # in element 0; in 1 and 2
    assert [list(np.any(x.conn == k, axis=1)) for k in (end, inner)] == [
        [True, False, False], [False, True, True]]
    kicked = s.copy()
    kicked.v[end, 1] += 1.0
    got = x.director_rates(kicked)
    assert np.array_equal(got[1:], stored[1:])
    assert np.array_equal(got[0], _rigid_rates(x, kicked)[0])
    turned = s.copy()
    turned.rot[inner] = so3.rotate_spatial(s.rot[inner:inner + 1], np.array([[0, 0.1, 0]]))[0]
    got = x.director_rates(turned)
    assert np.array_equal(got[0], stored[0])
    assert np.array_equal(got[1:], _rigid_rates(x, turned)[1:])


def test_a_frames_kept_director_rates_follow_the_state_changed_in_place():
    """The kinetic energy and momenta of one state share one evaluation of the director rates
    (``_state_slots``); a state whose velocities, rotations, time or rates change in place (the
    compiled runs advance it so) is evaluated again: each value equals a fresh group's."""
    sysm = System(deck_io.from_dict(beam_deck(2, n=3)).model)
    x = inertia_groups(sysm).extras[0]
    s = sysm.reference_state()
    X = sysm.model.X

    def fresh():
        y = inertia_groups(sysm).extras[0]
        return (y.kinetic_energy(s), y.linear_momentum(s), y.angular_momentum(s, X))

    def kept():
        return (x.kinetic_energy(s), x.linear_momentum(s), x.angular_momentum(s, X))

    s.v[:] = rng.normal(size=s.v.shape)
    for change in ("v", "rot", "rates", "t"):
        before = kept()
        if change == "v":
            s.v[1, 2] += 0.5
        elif change == "rot":
            s.rot[2] += 0.3
        elif change == "rates":
            rigid = x.director_rates(s)
            s.rates[x.name] = {"v": rigid + rng.normal(size=rigid.shape),
                               "nodal_v": s.v[x.conn].copy(), "nodal_rot": s.rot[x.conn].copy()}
        else:
            s.t += 1.0
        after, ref = kept(), fresh()
        for a, b in zip(after, ref, strict=True):
            assert np.array_equal(a, b), change
        if change != "t":
            assert not np.array_equal(before[0], after[0]), change


def _bits(*values) -> list[bytes]:
    """The bytes of each value (a float or an array): equal only if equal bit for bit, -0.0
    and 0.0 apart."""
    return [np.asarray(v, dtype=float).tobytes() for v in values]


@pytest.mark.parametrize("dim", [2, 3])
def test_a_frames_balance_is_the_three_numbers_bit_for_bit(dim):
    """``balance`` (one call per group, what a frame writes; the nodal group's and the beams')
    gives the kinetic energy and both momenta of the three calls bit for bit: with every
    element's stored director rates, with one element's stale (its node kicked: the rigid rates
    there) and without stored ones. The director rates handed out are a copy: changing them
    leaves the state's alone."""
    sysm = System(deck_io.from_dict(beam_deck(dim, n=5)).model)
    inert = inertia_groups(sysm)
    x, X = inert.extras[0], sysm.model.X
    for _ in range(10):                    # last-bit differences show in some states only
        s = sysm.reference_state()
        s.u[:] = rng.normal(size=s.u.shape) * 0.1
        s.v[:] = rng.normal(size=s.v.shape)
        if dim == 2:
            s.rot[:] = rng.normal(size=s.rot.shape)
        rigid = x.director_rates(s)
        kicked = s.copy()
        s.rates[x.name] = {"v": rigid + rng.normal(size=rigid.shape),
                           "nodal_v": s.v[x.conn].copy(), "nodal_rot": s.rot[x.conn].copy()}
        stale = s.copy()
        stale.v[x.conn[0, 0], 1] += 1.0
        for state in (s, stale, kicked):
            three = (inert.kinetic_energy(state), inert.linear_momentum(state),
                     inert.angular_momentum(state, X))
            assert _bits(*inert.balance(state, X)) == _bits(*three)
            for g in (x, inert.nodal):
                assert _bits(*g.balance(state, X)) == _bits(
                    g.kinetic_energy(state), g.linear_momentum(state),
                    g.angular_momentum(state, X))
    got = x.director_rates(s)
    assert np.array_equal(got, s.rates[x.name]["v"])
    got += 1.0
    assert not np.array_equal(got, s.rates[x.name]["v"])


def _rigid_rates(x, state):
    """The director rates ``w x d`` of ``state``: those of a copy without stored ones."""
    out = state.copy()
    out.rates.pop(x.name)
    return x.director_rates(out)


# --- (c) free flight: energy and momenta --------------------------------------------------------

def flying(dim: int, inertia: str, integrator="energy_conserving", steps=1000, h=0.01,
           stiffness: float = 1.0):
    """A free beam of 6 elements spinning at 0.1 rad per step, drifting and flexing.

    Newton's tolerance is 1e-12: the balances below are exact up to the residual left, whose
    sum over 1000 steps must stay under their 1e-10 (at 1e-10, P drifts by 3e-10).
    ``stiffness`` scales E and G (the default beam is soft: its strain energy reaches 60% of
    the initial kinetic energy, and in 3D its local rotations 2 to 3 rad).
    """
    d = beam_deck(dim, n=6, inertia=inertia, integrator=integrator, h=h, steps=steps)
    d["materials"][0]["E"] *= stiffness
    d["materials"][0]["G"] *= stiffness
    d["steps"][0]["tolerance"] = 1e-12
    dk = deck_io.from_dict(d)
    sysm = System(dk.model)
    state = sysm.reference_state()
    X = dk.model.X
    axis = np.array([1.0, 0.5, 2.0]) if dim == 3 else np.array([0, 0, 1.0])
    omega = 0.1 / h * axis / np.linalg.norm(axis)
    state.v[:, :dim] = (np.array([0.3, -0.2, 0.1]) + np.cross(omega, X - [0.5, 0, 0]))[:, :dim]
    state.v[:, 1] += 0.5 * np.cos(2 * np.pi * X[:, 0])
    if dim == 3:
        state.v[:, 2] += np.cos(np.pi * X[:, 0])
        state.v[:, 3:6] = omega
    else:
        state.v[:, 2] = omega[2]
    step = make_step(dk.steps[0], sysm, dk)
    its = []
    step.on_step = lambda s: its.append(step._stats["iterations"])
    step.run(state, None)
    return step, np.array(its)


def series(step, key):
    return np.array([row[key] for row in step.history])


@functools.cache
def soft_flight(dim: int):
    """The soft flight with consistent inertia (1000 steps), run once for the energy and the
    angular-momentum checks below."""
    return flying(dim, "consistent")[0]


@pytest.mark.slow
@pytest.mark.parametrize("dim", [2, 3])
def test_free_flight_conserves_energy_and_linear_momentum(dim):
    """1000 steps of the soft flight: energy and linear momentum exact to 1e-10 relative (also
    across the steps Newton halves in 3D, see the next test; angular momentum: the one after).
    """
    step = soft_flight(dim)
    assert series(step, "time")[-1] == pytest.approx(10.0)
    E, P = (series(step, k) for k in ("total", "linear_momentum"))
    assert np.max(np.abs(E - E[0])) <= 1e-10 * abs(E[0])
    assert np.max(np.linalg.norm(P - P[0], axis=1)) <= 1e-10 * np.linalg.norm(P[0])
    assert series(step, "strain").max() > 1e-3 * series(step, "kinetic")[0]


@pytest.mark.slow
@pytest.mark.parametrize("dim", [2, 3])
def test_free_flight_newton_needs_few_more_iterations_than_lumped(dim):
    """Newton needs at most 2 iterations per step more than with lumped inertia and halves no
    step (observed: mean 3.0 (2D) and 3.2 (3D), at most 4, against 3.0 and 3 lumped), on the
    flight made 10 times stiffer (local rotations below 0.4 rad, strain energy still 25% of
    the initial kinetic energy).

    Not on the soft flight: in 3D its local rotations near pi (3.2 rad), where Newton halves
    steps with any consistent inertia, as chance has it: with the initial velocity times 0.97
    and 1.03 the rigid director rates of before halved 80 and 27 steps, the director
    velocities of today 12 and 6 (about 20 at 1.00, where the rigid rates happened to pass).
    """
    step, its = flying(dim, "consistent", stiffness=10.0)
    _, its_l = flying(dim, "lumped", stiffness=10.0)
    assert step.steps == 1000 and step.cuts == 0
    assert its.mean() <= its_l.mean() + 2 and its.max() <= its_l.max() + 2
    assert series(step, "strain").max() > 0.1 * series(step, "kinetic")[0]


@pytest.mark.slow
@pytest.mark.parametrize("dim", [2, 3])
def test_free_flight_conserves_angular_momentum(dim):
    """Issue 10, item 6: angular momentum exact to 1e-10 in free flight, with the director
    velocities as state (fem.inertia.beam module doc; observed 6e-12 (2D), 3e-12 (3D); with
    rigid director rates it was 6e-3 and 4e-3)."""
    step = soft_flight(dim)
    assert series(step, "time")[-1] == pytest.approx(10.0)
    L = series(step, "angular_momentum")
    assert np.max(np.linalg.norm(L - L[0], axis=1)) <= 1e-10 * np.linalg.norm(L[0])


@pytest.mark.parametrize("dim", [2, 3])
def test_director_rates_make_the_step_exact_for_energy_and_angular_momentum(dim):
    """One large step (0.3 s, random rotations of about 1 rad) of the energy-conserving scheme
    from a random moving state whose director rates are *not* the rigid ones: the consistent
    group's inertial work equals T1 - T0, its resultant is (P1 - P0)/h and its moment about
    the mid-point positions ``sum x_m x f_x + m`` equals (L1 - L0)/h, all to round-off
    (fem.inertia.beam module doc: ``sum ybar x f_y``, ``m = dbar x f_d``). The state's new
    rates follow the mid-point rule ``u_d1 = 2 (d1 - d0)/h - u_d0``."""
    h = 0.3
    dk = deck_io.from_dict(beam_deck(dim))
    sysm = System(dk.model)
    step = make_step(dk.steps[0], sysm, dk)
    X = dk.model.X
    s0 = sysm.reference_state()
    n, ns = s0.n_nodes, sysm.model.nslots
    s0.u[:, :dim] = 0.2 * rng.normal(size=(n, dim))
    s0.rot[:] = (so3.quat_from_rotvec(rng.normal(size=(n, 3))) if dim == 3
                 else rng.normal(size=n))
    s0.v[:] = rng.normal(size=(n, ns))
    inert = inertia_groups(sysm, s0)
    x = inert.extras[0]
    rigid = x.director_rates(s0)
    kick = rng.normal(size=rigid.shape)
    if dim == 2:
        kick[..., 2] = 0.0
    s0.rates[x.name] = {"v": rigid + kick, "nodal_v": s0.v[x.conn].copy(),
                        "nodal_rot": s0.rot[x.conn].copy()}
    assert np.allclose(x.director_rates(s0), rigid + kick)        # the stored rates are used
    step.loads.begin(s0)
    integ = make_integrator("energy_conserving", sysm, inert, step.loads, h)
    integ.begin(s0)
    integ.start_step(s0)
    s1 = s0.copy()
    sysm.update(s1, rng.normal(size=(n, ns)))
    integ.evaluate(s0, s1, tangent=False)               # mid-point velocities of s1
    kin = integ.kinematics(s0, s1)
    integ.update_rates(s0, s1, kin)                     # and the rates of the step's end
    f, _ = x.midpoint_force(s0, s1, kin, h, False)
    g = sysm.model.groups[0]
    T0, T1 = x.kinetic_energy(s0), x.kinetic_energy(s1)
    work = float(np.sum(f * g.element_vector(kin.increment)))
    assert abs(work - (T1 - T0)) <= 1e-13 * (T0 + T1)
    d0, d1 = (x._directors(s.rotation_matrices()) for s in (s0, s1))
    assert np.allclose(x.director_rates(s1), 2 * (d1 - d0) / h - (rigid + kick), atol=1e-12)
    # nodal forces and moments (E, 2, 3) in the 3D embedding
    fe = np.zeros((len(g), 12))
    fe[:, x.cols] = f
    fe = fe.reshape(len(g), 2, 6)
    xm = (X + 0.5 * (s0.u + s1.u))[g.conn]
    P0, P1 = x.linear_momentum(s0), x.linear_momentum(s1)
    L0, L1 = x.angular_momentum(s0, X), x.angular_momentum(s1, X)
    resultant = fe[:, :, :3].sum(axis=(0, 1))
    moment = (so3.cross(xm, fe[:, :, :3]) + fe[:, :, 3:]).sum(axis=(0, 1))
    assert np.allclose(resultant, (P1 - P0) / h, rtol=0, atol=1e-13 * np.abs(P0).max() / h)
    scale = (np.linalg.norm(L0) + np.linalg.norm(L1)) / h
    assert np.linalg.norm(moment - (L1 - L0) / h) <= 1e-13 * scale


def rigid_step_defect(dim: int, inertia: str, seed: int, h: float = 0.1) -> float:
    """``(T1 - T0 - c . dP / h - psi . dL / h) / (T0 + T1)`` over a rigid step of the mid-point
    family (``dx_a = c + psi x x_m,a``, every node turned by ``psi``) from a random moving state.

    If any inertial force ``f`` had both ``f . inc = T1 - T0`` and the resultant ``dP / h`` and
    moment ``dL / h`` about the mid-point positions, its work on this rigid increment would be
    ``c . dP / h + psi . dL / h``: the defect would vanish. It depends on the velocity update and
    the kinetic energy only, not on the force.
    """
    rng = np.random.default_rng(seed)
    sysm = System(deck_io.from_dict(beam_deck(dim, inertia=inertia)).model)
    X = sysm.model.X
    s0 = sysm.reference_state()
    n = s0.n_nodes
    s0.u[:, :dim] = 0.2 * rng.normal(size=(n, dim))
    s0.rot[:] = so3.quat_from_rotvec(rng.normal(size=(n, 3))) if dim == 3 else rng.normal(size=n)
    s0.v[:] = rng.normal(size=s0.v.shape)
    inert = inertia_groups(sysm, s0)
    c, psi = h * rng.normal(size=3), h * rng.normal(size=3)
    if dim == 2:
        c[2], psi[:2] = 0.0, 0.0
    x0 = X + s0.u
    dx = np.linalg.solve(np.eye(3) - 0.5 * so3.hat(psi), (c + np.cross(psi, x0)).T).T
    s1 = s0.copy()
    s1.u += dx
    if dim == 3:
        s1.rot[:] = so3.rotate_spatial(s0.rot, np.broadcast_to(psi, (n, 3)))
    else:
        s1.rot += psi[2]
    midpoint_velocities(inert, s0, s1, step_kinematics(s0, s1, sysm.additive), h)
    T0, T1 = inert.kinetic_energy(s0), inert.kinetic_energy(s1)
    dP = inert.linear_momentum(s1) - inert.linear_momentum(s0)
    dL = inert.angular_momentum(s1, X) - inert.angular_momentum(s0, X)
    return (T1 - T0 - c[:len(dP)] @ dP / h - psi @ dL / h) / (T0 + T1)


@pytest.mark.parametrize("dim", [2, 3])
def test_no_inertial_force_closes_energy_and_angular_momentum_with_rigid_director_rates(dim):
    """Why the mid-point family keeps director rates of its own (fem.inertia.beam module doc):
    with the rigid rates ``w x d`` (a state without stored rates) the necessary condition of
    :func:`rigid_step_defect` holds to round-off for the lumped (Simo-Wong) inertia but not for
    the consistent one, whose director rates couple to the translations (largest of three
    random steps of 0.1 rad: 1e-3 (2D) and 4e-4 (3D) relative), so no moment could close
    energy and angular momentum with them."""
    seeds = range(3)
    assert max(abs(rigid_step_defect(dim, "lumped", k)) for k in seeds) <= 1e-14
    assert max(abs(rigid_step_defect(dim, "consistent", k)) for k in seeds) >= 1e-4


@pytest.mark.parametrize("integrator", ["trapezoidal", "generalized_alpha"])
def test_newmark_family_runs_with_consistent_inertia(integrator):
    """The Newmark family integrates the consistent group (exact tangent: few iterations);
    at a small step its energy stays close."""
    step, its = flying(3, "consistent", integrator=integrator, steps=100, h=0.002)
    assert step.steps == 100 and step.cuts == 0 and its.max() <= 6
    E = series(step, "total")
    assert np.max(np.abs(E - E[0])) <= 1e-2 * abs(E[0])


def test_lumped_default_is_the_nodal_group_alone():
    """Without a group asking for consistent inertia the dynamic step uses NodalInertia alone,
    so today's numbers are unchanged bit for bit."""
    sysm = System(deck_io.from_dict(beam_deck(3, inertia="lumped")).model)
    assert type(inertia_groups(sysm)) is NodalInertia
    d = beam_deck(3)
    del d["elements"][0]["inertia"]
    assert type(inertia_groups(System(deck_io.from_dict(d).model))) is NodalInertia
