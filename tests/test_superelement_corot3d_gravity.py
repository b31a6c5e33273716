"""Gravity on 3D co-rotational superelements (issue 33 item 3) in the energy-conserving step.

The potential ``-g . sum_k m_k y_k`` of the file's lumped masses at the recovered nodes ``y_k =
x_a + R_a c_k`` (:meth:`fem.elements.superelement.corot3d.CorotSuperelement3D.
gravity_conserving`), on the free 3D beam of tests/test_superelement_corot3d.py (six
fixed-interface modes). Checked against: the recovered positions and masses summed here (the
step's work), central differences of the potential (the force at a zero step) and of the force
(its Newton tangent), a rigid free fall (the centre of mass on ``g t^2/2``), and a pendulum
swinging from a pivot (``total`` energy constant).
"""

import numpy as np
import pytest
from test_superelement_corot3d import (
    cayley_increment,
    central,
    component,
    deformed,
    model,
    nudged,
    reduce,
)

from fem.errors import DeckError
from fem.inertia import inertia_groups
from fem.io.deck import from_dict
from fem.run import make_step

GRAVITY = np.array([0.3, -0.2, -1.0])
H = 0.01


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """``bar.h5``: 6 fixed-interface modes."""
    base = tmp_path_factory.mktemp("corot3d_gravity")
    reduce(component("bar.h5"), base)
    return base


def first_moment(g, state) -> np.ndarray:
    """``sum_k m_k y_k`` from the recovered positions and the file's lumped masses."""
    y, _ = g.recovered(g.local_frame(state))
    return g.data.component_mass[g.rows_u[:, 0]] @ y


def test_the_step_force_does_the_exact_work_of_the_recovered_masses(files):
    """Large steps (0.3 rad spins of each node, stretch and bending, Cayley increments): the
    gravity force's work ``-f . inc`` is ``g . (sum m y_1 - sum m y_0)`` summed here from the
    recovered nodes, to round-off (measured 2e-15 relative), and the potential's change; with
    a gravity that changes over the step, the mean of its ends."""
    _, sysm, g = model(files)
    rng = np.random.default_rng(11)
    s0 = deformed(g, sysm.reference_state(), rng)
    for _ in range(3):
        s1 = deformed(g, sysm.reference_state(), rng)
        for k in range(2):
            s1 = nudged(g, s1, k * g.ndn + 3 + rng.integers(3), 0.3)
        f, _, W = g.gravity_conserving(s0, s1, GRAVITY, GRAVITY, tangent=False)
        inc = cayley_increment(g, s0, s1)
        work = GRAVITY @ (first_moment(g, s1) - first_moment(g, s0))
        assert abs(work) > 1e-2
        assert abs(-f @ inc - work) < 1e-13 * np.abs(f).max() * np.abs(inc).max()
        assert W == pytest.approx(work, rel=1e-13, abs=0)
        dV = g.gravity_potential(s1, GRAVITY) - g.gravity_potential(s0, GRAVITY)
        assert dV == pytest.approx(-work, rel=1e-13, abs=0)
        a1 = 2.0 * GRAVITY[::-1]
        f2, _, W2 = g.gravity_conserving(s0, s1, GRAVITY, a1, tangent=False)
        assert -f2 @ inc == pytest.approx(0.5 * (GRAVITY + a1) @ (
            first_moment(g, s1) - first_moment(g, s0)), rel=1e-12)
        assert W2 == pytest.approx(-f2 @ inc, rel=1e-12)
        s0 = s1


def test_force_is_the_potential_gradient_and_the_tangent_its_derivative(files):
    """At a deformed state (rotations of about 0.5 rad) a zero step's force is central
    differences of the potential (measured 8e-11 relative), and over a large step the Newton
    tangent is central differences of the force with respect to ``s1`` to 1e-6 (measured
    3e-10); the total mass in the potential is the rigid-body mass of the file."""
    _, sysm, g = model(files)
    rng = np.random.default_rng(12)
    s = deformed(g, sysm.reference_state(), rng)
    f = g.gravity_conserving(s, s, GRAVITY, GRAVITY, tangent=False)[0]
    fd = central(g, lambda x: np.array([g.gravity_potential(x, GRAVITY)]), s)[0]
    assert np.abs(f - fd).max() < 1e-8 * np.abs(f).max()
    s1 = deformed(g, sysm.reference_state(), rng)
    s1 = nudged(g, s1, 4, 0.3)
    _, K, _ = g.gravity_conserving(s, s1, GRAVITY, GRAVITY)
    fd = central(g, lambda x: g.gravity_conserving(s, x, GRAVITY, GRAVITY, False)[0], s1)
    assert np.abs(K - fd).max() < 1e-6 * np.abs(fd).max()
    assert np.abs(fd).max() > 1e-3
    assert g.gravity_moments()[0] == pytest.approx(float(g.rigid_properties()["mass"]),
                                                   rel=1e-12)


def run(files, steps, pivot=False, velocity=None):
    """``steps`` energy-conserving steps of H under GRAVITY; the energy rows and the first
    moments ``sum m y`` after each step (``pivot``: node a's translations held)."""
    dyn = {"name": "fall", "type": "dynamic", "integrator": "energy_conserving",
           "time_step": H, "duration": H * steps, "tolerance": 1e-12}
    d = component("bar.h5", shift=[0.3, 0.2, 0.1])
    d["elements"] = [{"name": "se", "type": "superelement", "file": "bar.h5",
                      "formulation": "corotational"}]
    d["gravity"] = {"acceleration": GRAVITY.tolist()}
    d["steps"] = [dyn]
    if pivot:
        d["supports"] = [{"nodes": [1], "fixed": ["ux", "uy", "uz"]}]
    dk = from_dict(d, base_dir=str(files))
    from fem.system import System

    sysm, g = System(dk.model), dk.model.group("se")
    s = sysm.reference_state()
    if velocity is not None:
        s.v[g.conn[0]] = velocity
    step = make_step(dk.steps[0], sysm, dk, dk.output["every"])
    path = [first_moment(g, s)]
    step.on_step = lambda st: path.append(first_moment(g, st))
    step.run(s, None)
    mass = g.gravity_moments()[0]
    return step.history, np.array(path) / mass, inertia_groups(sysm, s)


def test_free_fall_is_rigid_and_follows_g_t2_over_2(files):
    """Released at rest, the free superelement falls without turning or deforming: its centre
    of mass (from the recovered nodes) is at ``c_0 + g t^2/2`` at each of 8 steps to
    round-off (measured 1e-13 of the fall), the kinetic energy ``M |g|^2 t^2 / 2``, no strain
    energy, ``total`` constant (measured 6e-14 of the kinetic energy)."""
    rows, c, _ = run(files, 8)
    t = H * np.arange(len(c))
    expect = c[0] + 0.5 * np.outer(t**2, GRAVITY)
    fall = np.abs(expect[-1] - c[0]).max()
    assert np.abs(c - expect).max() < 1e-12 * fall
    kinetic = max(r["kinetic"] for r in rows)
    assert kinetic == pytest.approx(0.5 * 1.0 * (GRAVITY @ GRAVITY) * t[-1] ** 2, rel=1e-10)
    assert max(abs(r["strain"]) for r in rows) < 1e-20
    total = np.array([r["total"] for r in rows])
    assert np.abs(total - total[0]).max() < 1e-10 * kinetic


def test_pendulum_from_a_pivot_conserves_total_energy(files):
    """Node a held (a spherical pivot) and started with a spin: the beam swings and bends
    under gravity for 20 steps; ``total`` (kinetic + strain - gravity's work) is constant to
    1e-10 of the kinetic energy (measured 4e-14) while gravity's work is 0.37 of it and the
    strain energy 0.008."""
    v = np.zeros((2, 6))
    v[:, 3:] = [0.5, 1.0, 0.3]
    v[1, :3] = np.cross([0.5, 1.0, 0.3], [1.0, 0.0, 0.0])
    rows, _, _ = run(files, 20, pivot=True, velocity=v)
    total = np.array([r["total"] for r in rows])
    kinetic = max(r["kinetic"] for r in rows)
    work = max(abs(r["external_work"]) for r in rows)
    assert work > 0.2 * kinetic
    assert max(r["strain"] for r in rows) > 1e-3 * kinetic
    assert np.abs(total - total[0]).max() < 1e-10 * kinetic


def test_gravity_is_refused_where_it_is_not_built(files):
    """Static steps do not take gravity on 3D co-rotational superelements yet: a deck error
    at the step's loads naming the integrator that does."""
    d = component("bar.h5", shift=[0.3, 0.2, 0.1])
    d["elements"] = [{"name": "se", "type": "superelement", "file": "bar.h5",
                      "formulation": "corotational"}]
    d["gravity"] = {"acceleration": GRAVITY.tolist()}
    d["steps"] = [{"name": "s", "type": "static"}]
    with pytest.raises(DeckError) as err:
        from_dict(d, base_dir=str(files))
    assert err.value.key == "steps[0].loads"
    assert "energy_conserving" in err.value.message
