"""Stick-slip friction in joints (issue 30): ``friction_law = "stick_slip"``.

References: the closed form of the stick-slip oscillator on a moving belt (``cases/
stick_slip_belt``: sticking with the belt, slip at the static limit, the slip's harmonic arc about
``F_k / k`` and its duration, the period), the energy balance (``total + damping`` constant:
the stuck joint's energy is strain energy, the slip's and the stuck damping's work is booked),
and the deck errors of the new keys.
"""

import os
import tomllib
from pathlib import Path

import numpy as np
import pytest
from helpers import with_changes

from fem.errors import DeckError
from fem.integrators.midpoint import EnergyConserving
from fem.io import deck as deck_io
from fem.run import run

CASES = Path(__file__).resolve().parents[1] / "cases"
M, K, FS, FK, VB = 1.0, 100.0, 5.0, 3.0, 0.1


def belt():
    return tomllib.loads((CASES / "stick_slip_belt" / "deck.toml").read_text())


def closed_form():
    """Slip duration, period, the slip's extremes (module doc of the case's reference)."""
    w = np.sqrt(K / M)
    A = (FS - FK) / K
    slip = (2 * np.pi - 2 * np.arctan(A * w / VB)) / w
    r = np.hypot(A, VB / w)
    return slip, slip + 2 * A / VB, FK / K - r, FK / K + r


def steps(data, tmp_path, monkeypatch):
    """Run ``data``; every converged step's time, block position, sliding flag, balance."""
    rows = []
    finish = EnergyConserving.finish

    def spy(self, s0, s1):
        out = finish(self, s0, s1)
        rows.append((s1.t, s1.u[0, 0], s1.history["contact_force"]["sliding"][0]))
        return out

    monkeypatch.setattr(EnergyConserving, "finish", spy)
    run(deck_io.from_dict(data, base_dir=str(tmp_path)), str(tmp_path / "out.h5"))
    import h5py

    with h5py.File(tmp_path / "out.h5") as f:
        e = f["steps/ride/energy"]
        balance = e["total"][()] + e["damping"][()]
    return np.array(rows).T, balance


def _check_cycles(t, x, sliding, balance, h, cycles, tol):
    slip, period, lo, hi = closed_form()
    slid = (sliding != 0).astype(int)
    on = np.flatnonzero(np.diff(slid) > 0) + 1
    off = np.flatnonzero(np.diff(slid) < 0) + 1
    assert np.all(sliding[slid > 0] == -1)              # back, against the belt
    assert len(on) == cycles + 1 and len(off) == cycles, (t[on], t[off])
    # stuck before the first slip: with the belt, less the joint's deflection k x / k_b (to the
    # mid-point scheme's offset of the deflection, half a step's change: k v_b h / (2 k_b))
    stuck = t < t[on[0]]
    np.testing.assert_allclose(x[stuck], VB * t[stuck] / (1 + K / 1e6), rtol=0,
                               atol=K * VB * h / 1e6)
    # slip begins at the static limit, within two steps of belt travel (the limit is checked on
    # the step's mean force, half a step behind its end)
    assert np.all(np.abs(K * x[on] - FS) <= 2 * K * VB * h), K * x[on]
    np.testing.assert_allclose(np.diff(t[on]), period, rtol=tol)
    np.testing.assert_allclose(t[off] - t[on[:-1]], slip, rtol=tol)
    # the slip's extremes, within tol of its amplitude (the late onset's larger arc)
    for a, b in zip(on[:-1], off, strict=True):
        np.testing.assert_allclose([x[a:b].min(), x[a:b].max()], [lo, hi], rtol=0,
                                   atol=tol * 0.5 * (hi - lo))
    np.testing.assert_allclose(balance, balance[0], rtol=1e-10)


def test_belt_sticks_slips_and_sticks_again(tmp_path, monkeypatch):
    """``cases/stick_slip_belt`` (h = 4 ms, one period): the closed form within 2 %.

    Stuck, the block moves with the belt (no creep, to the joint's deflection); slip starts
    where the spring reaches F_s (within two steps' belt travel); the period (slip onset to slip
    onset), the slip's duration and its extremes against the closed form; ``total + damping``
    constant to 1e-10 (the constraint's work is the drive's). The errors are O(h): slip begins
    and ends within the step that crosses the limit (the soak test halves h and the tolerance).
    """
    h = 4e-3
    data = belt()
    data["steps"][0].update(duration=1.4)        # the case stops at the first slip
    (t, x, sliding), balance = steps(data, tmp_path, monkeypatch)
    _check_cycles(t, x, sliding, balance, h, cycles=1, tol=2e-2)


@pytest.mark.soak
@pytest.mark.skipif(not os.environ.get("FEM_SOAK"), reason="soak test (FEM_SOAK=1)")
def test_belt_three_periods_at_2ms(tmp_path, monkeypatch):
    """Three periods at h = 2 ms: the same closed form, errors halved (O(h))."""
    data = belt()
    data["steps"][0].update(duration=3.0, time_step=2e-3)
    (t, x, sliding), balance = steps(data, tmp_path, monkeypatch)
    _check_cycles(t, x, sliding, balance, 2e-3, cycles=3, tol=1e-2)


@pytest.mark.parametrize("changes, where, says", [
    ({"static_friction": 2.0}, "joints[1].static_friction", "not below the kinetic"),
    ({"static_friction": -1.0}, "joints[1].static_friction", "-1"),
    ({"stick_stiffness": None}, "joints[1].stick_stiffness", "required"),
    ({"stick_stiffness": 0.0}, "joints[1].stick_stiffness", "0"),
    ({"stick_damping": -2.0}, "joints[1].stick_damping", "-2"),
    ({"velocity_scale": 1e-3}, "joints[1].velocity_scale", "not used"),
    ({"friction_law": "dahl"}, "joints[1].friction_law", "dahl"),
    ({"friction_law": "coulomb"}, "joints[1].static_friction", "stick_slip"),
    ({"static_coefficient": 0.5}, "joints[1].static_coefficient", "friction_coefficient"),
    ({"friction_coefficient": 0.4, "static_coefficient": 0.3},
     "joints[1].static_coefficient", "mu_s"),
    ({"friction": 0.0, "static_friction": None, "stick_stiffness": 1e6},
     "joints[1].friction_law", "without friction"),
])
def test_deck_errors(changes, where, says):
    """Bad stick-slip input is a deck error naming the key and what was wrong."""
    data = belt()
    with_changes(data["joints"][1], changes)
    with pytest.raises(DeckError) as err:
        deck_io.from_dict(data)
    assert err.value.key == where and says in str(err.value), str(err.value)


def test_regularized_law_creeps_where_stick_slip_holds(tmp_path):
    """The same belt with the coulomb law (5 N, v_s = 1e-3 m/s) creeps: its block lags the belt.

    With the regularized law the held block slides at ``v_s F / T`` relative to the belt: over
    0.2 s it lags by 4e-5 m, beyond 2e-5; the stick-slip law's block is where the belt took it
    less the stuck joint's deflection, 2e-6 m at 0.2 s (the case's quantity at 0.4 s, and
    :func:`test_belt_sticks_slips_and_sticks_again`).
    """
    import h5py

    data = belt()
    data["steps"][0].update(duration=0.2, output_interval=0.1)
    with_changes(data["joints"][1], {"friction_law": "coulomb", "static_friction": None,
                                     "stick_stiffness": None, "stick_damping": None,
                                     "friction": 5.0, "velocity_scale": 1e-3})
    run(deck_io.from_dict(data, base_dir=str(tmp_path)), str(tmp_path / "coulomb.h5"))
    with h5py.File(tmp_path / "coulomb.h5") as f:
        x = f["steps/ride/displacement"][-1, 0, 0]
    assert 0.02 - x > 2e-5


def test_reaction_stick_slip_on_the_incline(tmp_path):
    """``cases/incline_prismatic`` with the stick-slip law and static coefficients.

    Block 1 (mu_k = 0.3, mu_s = 0.6 > tan 30) slides from 0.1 m/s: it keeps sliding with the
    kinetic ``a = g (sin - 0.3 cos)`` (closed form to 1e-9; sliding down, -1); block 2 (mu_s =
    mu_k = 0.8) starts at rest and holds without creep: it stays within 1.1 times the stuck
    joint's deflection ``m g sin 30 / k_b``, and Newton needs no halving (the secant tangent of
    :meth:`CoordinateForce._bristle`); ``total + damping`` constant to 1e-10.
    """
    import h5py

    data = tomllib.loads((CASES / "incline_prismatic" / "deck.toml").read_text())
    data["steps"][0].update(duration=0.2)
    for j, mu_s in zip(data["joints"], (0.6, 0.8), strict=True):
        del j["velocity_scale"]
        j.update(friction_law="stick_slip", static_coefficient=mu_s, stick_stiffness=1e6,
                 stick_damping=2000.0)
    run(deck_io.from_dict(data, base_dir=str(tmp_path)), str(tmp_path / "out.h5"))
    with h5py.File(tmp_path / "out.h5") as f:
        s = f["steps/slide"]
        t, u = s["time"][()], s["displacement"][:, :2, :2]
        sliding = [s[f"elements/{n}_force/sliding"][:, 0] for n in ("sliding", "sticking")]
        balance = s["energy/total"][()] + s["energy/damping"][()]
        cuts = s["increments/cuts"][-1]
    theta = np.radians(30.0)
    slope = np.array([np.cos(theta), np.sin(theta)])
    a = 9.81 * (np.sin(theta) - 0.3 * np.cos(theta))
    np.testing.assert_allclose(-u[:, 0] @ slope, 0.1 * t + 0.5 * a * t**2, rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(sliding[0][1:], -1.0)
    np.testing.assert_array_equal(sliding[1], 0.0)
    assert np.all(np.abs(u[:, 1] @ slope) <= 1.1 * 9.81 * np.sin(theta) / 1e6)
    assert cuts == 0
    np.testing.assert_allclose(balance, balance[0], rtol=1e-10)


@pytest.mark.parametrize("integrator", ["midpoint", "generalized_alpha"])
def test_other_integrators_refuse_stick_slip(tmp_path, integrator):
    """The law is built for the energy-conserving scheme: the others stop with a model error."""
    from fem.errors import ModelError

    data = belt()
    data["steps"][0].update(integrator=integrator, duration=0.02)
    with pytest.raises(ModelError, match="energy_conserving"):
        run(deck_io.from_dict(data, base_dir=str(tmp_path)), str(tmp_path / "out.h5"))
