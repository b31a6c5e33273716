"""Modal damping of superelements (issue 30, item 1): ``damping_ratios`` of the component modes.

A planar beam segment (nodes 1 and 2 at x = 0 and 1, 8 linear beams) reduced by Craig-Bampton
with both ends as its interface keeps 6 fixed-interface modes; the superelement carries the
damping matrix ``diag(2 zeta_i omega_i)`` on them (module doc of
:mod:`fem.elements.superelement.group`). References:

* interface clamped: the system's modes are the fixed-interface modes, so the linearized
  eigenvalues are ``p = -zeta omega +- i omega sqrt(1 - zeta^2)`` exactly (closed form of a
  damped single-DOF oscillator per mode): ratios and ``|p| = omega`` to 1e-9; the modal step's
  ratios ``phi^T C phi / (2 omega)`` the same;
* free decay of the first mode (interface clamped, ``eta_1(0) = 1``): the closed form
  ``exp(-zeta omega t) (cos(omega_d t) + zeta omega / omega_d sin(omega_d t))``,
  ``omega_d = omega sqrt(1 - zeta^2)``, to 1e-4 of the amplitude;
* the full beam model of the clamped segment with Rayleigh damping (``beta`` on the initial
  stiffness): the superelement with the Rayleigh ratios ``beta omega_i / 2`` of its modes has the
  same complex eigenvalues (the fixed-interface modes are exactly the full model's lowest modes,
  and proportional damping keeps them);
* a cantilever (inner half linear beams, outer half the damped superelement) released from a
  static deflection: the energy-conserving scheme's ``total + damping`` constant to 1e-8,
  Newmark's trapezoidal rule (the same scheme for this linear model) along the same path.
"""

import copy

import numpy as np
import pytest
from helpers import solve

from fem.errors import DeckError

MODES = 6
ZETA = [0.02, 0.05, 0.01, 0.1, 0.2, 0.03]


def planar(elements, ids, **tables):
    """A 2D deck of nodes ``ids`` at x = id - 1."""
    return {"model": {"dim": 2},
            "materials": [{"name": "m", "E": 1000.0, "G": 400.0}],
            "sections": [{"name": "s", "A": 1.0, "Iz": 0.05, "mass_per_length": 1.0,
                          "rotary_inertia_per_length": 0.05}],
            "nodes": {"ids": list(ids), "coordinates": [[i - 1.0, 0.0] for i in ids]},
            "elements": elements, **tables}


def beam(name, a, b):
    return {"name": name, "type": "beam", "material": "m", "section": "s",
            "connectivity": [[a, b]], "divisions": 8, "formulation": "linear"}


def superelement(ratios=ZETA, name="se", nodes=None):
    out = {"name": name, "type": "superelement", "file": "seg.h5", "damping_ratios": ratios}
    if nodes is not None:
        out["nodes"] = nodes
    return out


def run(d, base, hook=None, h5=None):
    return solve(copy.deepcopy(d), h5, base_dir=str(base), hook=hook)


@pytest.fixture(scope="module")
def seg(tmp_path_factory):
    """The segment's file ``seg.h5`` (interface: both ends) and its 6 frequencies."""
    base = tmp_path_factory.mktemp("se_damping")
    d = planar([beam("b", 1, 2)], [1, 2], steps=[
        {"name": "reduce", "type": "cms_reduce", "interface": [1, 2], "modes": MODES,
         "file": "seg.h5"}])
    step = run(d, base, h5=base / "reduce.h5")[3][0]
    return base, np.asarray(step.data.frequencies[:MODES], dtype=float)


CLAMPED = [{"nodes": [1, 2], "fixed": ["all"]}]


def test_clamped_interface_linearize_gives_the_stated_ratios(seg):
    """Linearize (dense) and modal steps of the superelement with its interface clamped: each
    eigenvalue's ``-Re p / |p|`` is the mode's ratio and ``|p|`` its frequency to 1e-9; the
    modal step's ratios the same (measured 8e-15, 5e-14, 1e-16)."""
    base, omega = seg
    d = planar([superelement()], [1, 2], supports=CLAMPED, steps=[
        {"name": "lin", "type": "linearize", "modes": MODES, "method": "dense"},
        {"name": "modes", "type": "modal", "modes": MODES}])
    _, _, _, (lin, modal) = run(d, base)
    p = lin.eigen.values
    order = np.argsort(np.abs(p))
    p = p[order]
    np.testing.assert_allclose(np.abs(p), omega, rtol=1e-9)
    np.testing.assert_allclose(lin.eigen.damping_ratios[order], ZETA, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(np.abs(p.imag), omega * np.sqrt(1 - np.square(ZETA)), rtol=1e-9)
    np.testing.assert_allclose(modal.frequencies(), omega, rtol=1e-9)
    np.testing.assert_allclose(modal.zeta, ZETA, rtol=1e-9, atol=1e-12)


def test_free_decay_of_the_first_mode_follows_the_closed_form(seg):
    """Interface clamped, ``eta_1(0) = 1`` at rest, zeta_1 = 0.02, the energy-conserving scheme:
    half a period in 200 steps against the damped oscillator's closed form, to 1e-4 of the
    amplitude (the mid-point rule's phase error is ``(omega h)^2 / 12`` per radian, 2e-5 x pi);
    the energy taken (``energy/damping``: ``1 - exp(-2 pi zeta)`` = 0.118 of E0 at the turning
    point) closes the balance ``total + damping = E0`` to 1e-8."""
    from fem.io.deck import from_dict
    from fem.run import make_step
    from fem.system import System

    base, omega = seg
    w, z = omega[0], ZETA[0]
    T = 2 * np.pi / w
    d = planar([superelement()], [1, 2], supports=CLAMPED, steps=[
        {"name": "free", "type": "dynamic", "time_step": T / 400, "duration": T / 2,
         "integrator": "energy_conserving"}])
    dk = from_dict(d, base_dir=str(base))
    sysm = System(dk.model)
    state = sysm.reference_state()
    state.internal[0] = 1.0
    step = make_step(dk.steps[0], sysm, dk, dk.output["every"])
    frames = []
    step.on_step = lambda s: frames.append((s.t, s.internal[0]))
    step.run(state, None)
    t, eta = np.array(frames).T
    wd = w * np.sqrt(1 - z * z)
    exact = np.exp(-z * w * t) * (np.cos(wd * t) + z * w / wd * np.sin(wd * t))
    assert len(t) == 200 and t[-1] == pytest.approx(T / 2)
    assert np.abs(eta - exact).max() < 1e-4
    rows = step.history
    total = np.array([r["total"] for r in rows])
    damping = np.array([r["damping"] for r in rows])
    assert damping[-1] / total[0] == pytest.approx(1 - np.exp(-2 * np.pi * z), rel=0.02)
    assert np.abs(total + damping - total[0]).max() < 1e-8 * total[0]


def test_against_the_full_segment_with_rayleigh_damping(seg):
    """The clamped segment meshed in beams with Rayleigh damping ``beta K`` (initial stiffness)
    against the superelement with the ratios ``beta omega_i / 2`` of its modes: the lowest 6
    complex eigenvalues agree to 1e-9 (the fixed-interface modes are the full model's; measured
    9e-13 of |p|)."""
    base, omega = seg
    beta = 2e-3
    full = planar([beam("b", 1, 2)], [1, 2], supports=CLAMPED,
                  damping=[{"beta": beta, "stiffness": "initial"}],
                  steps=[{"name": "lin", "type": "linearize", "modes": MODES,
                          "method": "dense"}])
    p_full = run(full, base)[3][0].eigen.values
    d = planar([superelement(list(beta * omega / 2))], [1, 2], supports=CLAMPED,
               steps=full["steps"])
    p_se = run(d, base)[3][0].eigen.values
    p_full, p_se = (np.sort_complex(p) for p in (p_full, p_se))
    assert np.abs(p_se - p_full).max() < 1e-9 * np.abs(p_full).max()
    assert np.all(-p_se.real > 0)


def cantilever(integrator):
    """Inner half linear beams clamped at node 1, outer half the superelement (ratios 0.05),
    100 steps of 1e-3 s."""
    return planar([beam("inner", 1, 2), superelement(0.05, nodes=[2, 3])], [1, 2, 3],
                  supports=[{"nodes": [1], "fixed": ["all"]}],
                  steps=[{"name": "free", "type": "dynamic", "time_step": 1e-3,
                          "duration": 0.1, "integrator": integrator}])


ETA0 = 0.01 * np.arange(MODES, 0, -1) / MODES


def released(d, base, eta0=ETA0):
    """Run the dynamic step of ``d`` from rest with the modal coordinates ``eta0``: the step's
    energy rows and the tip's (node 3) displacement per frame."""
    from fem.io.deck import from_dict
    from fem.run import make_step
    from fem.system import System

    dk = from_dict(copy.deepcopy(d), base_dir=str(base))
    sysm = System(dk.model)
    state = sysm.reference_state()
    state.internal[:] = eta0
    k = int(np.flatnonzero(dk.model.node_ids == 3)[0])
    step = make_step(dk.steps[0], sysm, dk, dk.output["every"])
    tips = []
    step.on_step = lambda s: tips.append(s.dof_values()[k].copy())
    step.run(state, None)
    return step.history, np.array(tips)


@pytest.fixture(scope="module")
def conserving(seg):
    """The cantilever released, the energy-conserving scheme: rows and tips."""
    return released(cantilever("energy_conserving"), seg[0])


@pytest.mark.parametrize("integrator", ["energy_conserving", "midpoint", "trapezoidal",
                                        "generalized_alpha"])
def test_cantilever_released_balance_closed(seg, conserving, integrator):
    """The cantilever released from rest with its modal coordinates displaced (the interface
    then moves too). The energy-conserving scheme's ``total + damping`` is constant to 1e-8
    of E0 (the booked work is the damping force's, exactly); the damping takes a good part of
    E0 (more than 10 %; measured 58 %); the plain mid-point rule (damping at the mid-point
    rates) and Newmark's trapezoidal rule (both the same scheme on this linear model) follow
    the energy-conserving path to 1e-8 of the amplitude (measured 1e-14), their trapezoidal
    booking of the power within 3 % of the energy taken (measured 1.9 %: the rule's error,
    ``(omega h)^2`` up to 0.36 here); generalized-alpha's ``total + dissipated`` is E0 by
    definition and its damping booking within 5 % of the energy-conserving scheme's (its own
    numerical dissipation changes the path a little; measured
    1.9 %)."""
    rows, tips = conserving if integrator == "energy_conserving" else released(
        cantilever(integrator), seg[0])
    total = np.array([r["total"] for r in rows])
    damping = np.array([r["damping"] for r in rows])
    E0 = total[0]
    assert damping[-1] > 0.1 * E0
    ref_rows, ref = conserving
    if integrator == "energy_conserving":
        assert np.abs(total + damping - E0).max() < 1e-8 * E0
    elif integrator in ("midpoint", "trapezoidal"):
        assert np.abs(tips - ref).max() < 1e-8 * np.abs(ref).max()
        # the same path, so E0 - total is the exact dissipation: the trapezoidal rule of the
        # power books it to O((omega h)^2) (omega h up to 0.6 for the highest mode kept)
        assert np.abs(total + damping - E0).max() < 0.03 * damping[-1]
    else:
        dissipated = np.array([r["dissipated"] for r in rows])
        assert np.abs(total + dissipated - E0).max() < 1e-10 * E0
        assert damping[-1] == pytest.approx(ref_rows[-1]["damping"], rel=0.05)


@pytest.mark.parametrize("ratios, key, says", [
    ([0.1, 0.2], "elements[0].damping_ratios", "expected one ratio or 6"),
    (1.0, "elements[0].damping_ratios", "in [0, 1)"),
    ([0.1, 0.1, -0.1, 0.1, 0.1, 0.1], "elements[0].damping_ratios[2]", "in [0, 1)"),
])
def test_bad_damping_ratios_are_deck_errors(seg, ratios, key, says):
    """Wrong count or a ratio outside [0, 1): a deck error naming the key."""
    base, _ = seg
    d = planar([superelement(ratios)], [1, 2], supports=CLAMPED,
               steps=[{"name": "modes", "type": "modal", "modes": 2}])
    with pytest.raises(DeckError) as err:
        run(d, base)
    assert key in str(err.value) and says in str(err.value)


def test_rayleigh_damping_of_a_superelement_points_to_its_ratios(seg):
    """``[[damping]]`` naming a superelement: a deck error that names its ``damping_ratios``."""
    base, _ = seg
    d = planar([superelement(None)], [1, 2], supports=CLAMPED,
               damping=[{"groups": ["se"], "beta": 1e-3}],
               steps=[{"name": "modes", "type": "modal", "modes": 2}])
    del d["elements"][0]["damping_ratios"]
    with pytest.raises(DeckError) as err:
        run(d, base)
    assert "damping[0].groups" in str(err.value) and "damping_ratios" in str(err.value)
