"""Gravity (issue 10, item 5): ``M g`` on every mass, with the mass the dynamic step integrates.

Checks: the loads are the lumped nodal masses (element groups and ``[[masses]]``) times ``g``;
their resultant is the total weight; the static reactions carry it; gravity behaves like a named
load in the step history; and its work closes the energy balance of a flexible pendulum released
from horizontal to 1e-8 (energy-conserving scheme: dead loads' work is exact over a step).
"""

import numpy as np
import pytest
from helpers import line_beam, node, solve

from fem.errors import DeckError
from fem.inertia.nodal import NodalInertia
from fem.io.deck import from_dict
from fem.loads import StepLoads, gravity_force
from fem.system import System

G = 9.81


def beam_deck(dim: int, n: int = 4, **extra) -> dict:
    d = line_beam(dim, n, length=2.0, E=1e4, G=4e3, A=1.0, Iy=1e-3, Iz=1e-3, J=2e-3)
    d["materials"][0]["density"] = 0.5                   # rho A = 0.5: weight 0.5 * 2 * g
    d["gravity"] = {"acceleration": [0.0, -G] if dim == 2 else [0.0, 0.0, -G]}
    d.update(extra)
    return d


@pytest.mark.parametrize("dim", [2, 3])
def test_gravity_is_the_lumped_masses_times_g(dim):
    """m_node g at each node, the same masses NodalInertia integrates, point masses included."""
    d = beam_deck(dim, masses=[{"nodes": 2, "mass": 3.0}],
                  steps=[{"name": "s", "type": "static"}])
    dk = from_dict(d)
    sysm = System(dk.model)
    g = np.zeros(3)
    g[dim - 1] = -G
    f = gravity_force(dk.model, g)
    m = NodalInertia(sysm).m
    assert np.allclose(f[:, dim - 1], -G * m, rtol=1e-14)
    assert np.allclose(np.delete(f, dim - 1, axis=1), 0.0)
    assert f[:, dim - 1].sum() == pytest.approx(-G * (0.5 * 2.0 + 3.0), rel=1e-14)
    # the step's loads see the same (gravity is a load named "gravity")
    grav = next(ld for ld in dk.model.loads if ld.name == "gravity")
    loads = StepLoads(dk.model, (grav,), ramp=False)
    assert np.allclose(loads.force(sysm.reference_state(), 0.0), f)


def test_cantilever_under_self_weight_reactions_carry_the_weight():
    """Static, linear: the support reactions are the total weight and its moment about the root."""
    d = beam_deck(2, n=8, supports=[{"nodes": 1, "fixed": ["all"]}],
                  steps=[{"name": "s", "type": "static"}])
    d["materials"][0]["E"] = 1e9                  # small deflection: the linear step is exact
    dk, sysm, state, _ = solve(d)
    r = sysm.internal_force(state)
    # reaction = internal force - the load applied straight to the support (the root's weight)
    f = gravity_force(dk.model, [0.0, -G, 0.0])
    fixed = sysm.dofmap.to_nodal(r)[node(dk, 1)] - f[node(dk, 1)]
    W = 0.5 * 2.0 * G
    assert fixed[1] == pytest.approx(W, rel=1e-9)
    # lumped weights m_i g at x_i: moment W L / 2 about the root
    assert fixed[2] == pytest.approx(W * 1.0, rel=1e-9)


def test_gravity_applied_by_the_first_step_and_held_by_the_next():
    """A named load: the first step applies it by default, later steps hold it (scale 1)."""
    d = beam_deck(2, supports=[{"nodes": 1, "fixed": ["all"]}],
                  loads=[{"name": "tip", "nodes": 2, "force": [0.0, -1.0]}],
                  steps=[{"name": "a", "type": "static", "loads": ["gravity"]},
                         {"name": "b", "type": "static"}])
    dk, sysm, state, steps = solve(d)
    assert [ld.name for ld in dk.steps[0]["loads"]] == ["gravity"]
    assert [ld.name for ld in dk.steps[1]["loads"]] == ["tip"]
    assert state.load_scales == {"gravity": 1.0, "tip": 1.0}


def pendulum(integrator: str = "energy_conserving", steps: int = 200, h: float = 0.005):
    """A flexible pendulum of co-rotational beams pinned at node 1, released from horizontal."""
    d = beam_deck(2, n=4, supports=[{"nodes": 1, "fixed": ["ux", "uy"]}])
    d["steps"] = [{"name": "swing", "type": "dynamic", "integrator": integrator, "time_step": h,
                   "duration": steps * h, "tolerance": 1e-11}]
    return solve(d)


def test_pendulum_work_of_gravity_closes_the_energy_balance():
    """kinetic + strain - work of gravity stays zero to 1e-8 of the work (exact per step)."""
    dk, sysm, state, (step,) = pendulum()
    hist = step.history
    work = np.array([row["external_work"] for row in hist])
    total = np.array([row["total"] for row in hist])
    kinetic = np.array([row["kinetic"] for row in hist])
    assert work[-1] > 1.0                                 # it has fallen a good way
    assert np.abs(total).max() <= 1e-8 * np.abs(work).max()
    # the work is the weights' potential drop: sum m_i g (-u_y,i)
    m = NodalInertia(sysm).m
    assert work[-1] == pytest.approx(float(np.sum(m * G * -state.u[:, 1])), rel=1e-9)
    assert kinetic[-1] > 0.9 * work[-1]                   # stiff: little strain energy


@pytest.mark.parametrize(("change", "key", "match"), [
    ({"gravity": {"acceleration": [0, 0, -9.81]}}, "gravity.acceleration", "expected 2"),
    ({"gravity": {"acceleration": [0, 0]}}, "gravity.acceleration", "nonzero"),
    ({"gravity": {"acceleration": [0, -9.81], "function": "nope"}}, "gravity.function", None),
    ({"gravity": [{"acceleration": [0, -9.81]}]}, "gravity", "single table"),
    ({"gravity": {"acceleration": [0, -9.81], "g": 1}}, "gravity.g", None),
    ({"loads": [{"name": "gravity", "nodes": 2, "force": [0, 1]}]}, "loads[0].name",
     "another name"),
])
def test_gravity_deck_errors_name_the_key(change, key, match):
    d = beam_deck(2, supports=[{"nodes": 1, "fixed": ["all"]}],
                  steps=[{"name": "s", "type": "static"}])
    d.update(change)
    with pytest.raises(DeckError, match=match) as err:
        from_dict(d)
    assert err.value.key == key


def test_gravity_without_mass_is_an_error():
    d = beam_deck(2, supports=[{"nodes": 1, "fixed": ["all"]}],
                  steps=[{"name": "s", "type": "static"}])
    d["materials"][0]["density"] = 0.0
    with pytest.raises(DeckError, match="no mass") as err:
        from_dict(d)
    assert err.value.key == "gravity.acceleration"


@pytest.mark.parametrize("dim", [2, 3])
def test_gravity_on_consistent_beam_inertia_is_its_consistent_mass_times_g(dim):
    """Beams with inertia = "consistent": M g of the Hermite mass, rho A g L / 2 and the
    moments -+ rho A g L^2 / 12 at the ends; the total is still the weight."""
    d = beam_deck(dim, n=4, steps=[{"name": "s", "type": "static"}])
    d["elements"][0]["inertia"] = "consistent"
    dk = from_dict(d)
    g = np.zeros(3)
    g[dim - 1] = -G
    f = gravity_force(dk.model, g)
    beam = dk.model.groups[0]
    M = beam.mass(lumped=False)                           # (E, nd, nd) global, reference
    ge = np.zeros((len(beam), beam.nd))
    ndn = beam.ndn
    for a in range(2):
        ge[:, a * ndn + dim - 1] = -G
    Mg = np.einsum("eij,ej->ei", M, ge)
    expect = np.zeros_like(f)
    slots = dk.model.slots
    cols = [slots.index(n) for n in beam.dof_names]
    for a in range(2):
        np.add.at(expect, (beam.conn[:, a][:, None], np.array(cols)[None, :]),
                  Mg[:, a * ndn:(a + 1) * ndn])
    assert np.allclose(f, expect, rtol=1e-12, atol=1e-12 * G)
    assert f[:, dim - 1].sum() == pytest.approx(-G * 0.5 * 2.0, rel=1e-13)
