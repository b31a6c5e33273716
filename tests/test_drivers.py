"""Drivers: a joint's coordinate prescribed in time (a crank spun up, a slider pushed), its
effort against Newton-Euler closed forms, its work closing the energy balance, and deck errors."""

import h5py
import numpy as np
import pytest
from helpers import deck_error, solve, with_changes

from fem.time_functions import SpinUp

M, L, G = 2.0, 0.6, 9.81          # a uniform bar of mass M and length L, gravity G
RATE, T_UP = 3.0, 1.0             # spun up to 3 rad/s over 1 s (Kane's profile)


def _v(dim, *xy):
    return list(xy) + ([0.0] if dim == 3 else [])


def crank(dim: int, integrator: str = "energy_conserving") -> dict:
    """A bar pinned to the ground at one end, its angle driven by a spin-up, under gravity."""
    J = M * L * L / 12
    joint = {"name": "O", "type": "revolute", "ground": [1], "points": [_v(dim, 0.0, 0.0)],
             "drive": "spin"}
    if dim == 3:
        joint["axis"] = [0.0, 0.0, 1.0]
    return {"model": {"dim": dim},
            "nodes": {"coordinates": [_v(dim, L / 2, 0.0)]},
            "bodies": [{"name": "bar", "nodes": [1], "mass": M,
                        "inertia": J if dim == 2 else [J / 2, J / 2, J]}],
            "functions": [{"name": "spin", "type": "spin_up", "rate": RATE, "t0": 0.0,
                           "t1": T_UP}],
            "joints": [joint],
            "gravity": {"acceleration": _v(dim, 0.0, -G)},
            "steps": [{"name": "run", "type": "dynamic", "integrator": integrator,
                       "duration": 2.0, "time_step": 0.01, "output_interval": 0.1}]}


def results(h5, group):
    with h5py.File(h5) as f:
        s = f[f"steps/run/elements/{group}"]
        e = f["steps/run/energy"]
        return ({k: s[k][:, 0] for k in s}, f["steps/run/time"][:],
                {k: e[k][:] for k in e})


@pytest.mark.parametrize("dim", [2, 3])
def test_a_driven_crank_follows_its_drive_and_reports_the_torque(tmp_path, dim):
    """The coordinate (the bar's angle relative to the ground) is the spin-up f(t) in every
    frame; the effort is the torque Newton-Euler needs about the pivot, J_O f'' + M G L/2 cos f
    with J_O = M L^2 / 3; and the driver's work closes the energy balance of the
    energy-conserving scheme (to the Newton tolerance)."""
    h5 = str(tmp_path / "c.h5")
    solve(crank(dim), h5)
    out, t, energy = results(h5, "O")
    f = SpinUp(RATE, 0.0, T_UP)
    turned = np.angle(np.exp(1j * (out["angle"] - f(t))))        # the 3D angle is wrapped
    assert abs(turned).max() < 1e-10
    phi = f(t)
    torque = M * L * L / 3 * f.second_derivative(t) + M * G * L / 2 * np.cos(phi)
    np.testing.assert_allclose(out["effort"], torque, rtol=0, atol=1e-9 * M * G * L)
    # the work the driver did: the kinetic and potential energy gained (the scheme's velocities
    # 2 dx/h - v0 are second-order accurate: 1e-3 at h = 0.01), and the balance exactly
    kinetic = 0.5 * M * L * L / 3 * f.derivative(t) ** 2
    potential = M * G * L / 2 * np.sin(phi)
    np.testing.assert_allclose(energy["constraint_work"], kinetic + potential, rtol=0,
                               atol=1e-3 * kinetic.max())
    assert abs(energy["total"] - energy["total"][0]).max() < 1e-8 * kinetic.max()


def test_a_standard_scheme_closes_the_balance_to_its_accuracy(tmp_path):
    """The trapezoidal rule's multipliers are end values: the driver's work with their mean is
    second-order accurate: the balance's error falls more than threefold as the step halves."""
    errors = []
    for h in (0.02, 0.01):
        d = crank(2, "trapezoidal")
        d["steps"][0]["time_step"] = h
        h5 = str(tmp_path / f"t{h}.h5")
        solve(d, h5)
        _, _, energy = results(h5, "O")
        errors.append(abs(energy["total"] - energy["total"][0]).max())
    kinetic = 0.5 * M * L * L / 3 * RATE**2
    assert errors[1] < 2e-3 * kinetic
    assert errors[0] / errors[1] > 3.0                # 6.0 measured: at least second order


@pytest.mark.parametrize("dim", [2, 3])
def test_a_driven_slider_pushes_with_m_a_plus_its_weight(tmp_path, dim):
    """A body on a prismatic joint to the ground along a 30-degree incline, its slide driven by
    a spin-up profile s(t): the body moves by s along the axis, and the effort is the force
    M s'' + M G sin 30 that pushes it."""
    c, s = np.cos(np.pi / 6), np.sin(np.pi / 6)
    joint = {"name": "rail", "type": "prismatic", "ground": [1], "axis": _v(dim, c, s),
             "drive": "push"}
    J = 0.1
    d = {"model": {"dim": dim},
         "nodes": {"coordinates": [_v(dim, 0.0, 0.0)]},
         "bodies": [{"name": "block", "nodes": [1], "mass": M,
                     "inertia": J if dim == 2 else [J, J, J]}],
         "functions": [{"name": "push", "type": "spin_up", "rate": 0.5, "t0": 0.0, "t1": 1.0}],
         "joints": [joint],
         "gravity": {"acceleration": _v(dim, 0.0, -G)},
         "steps": [{"name": "run", "type": "dynamic", "duration": 1.5, "time_step": 0.01,
                    "output_interval": 0.1}]}
    h5 = str(tmp_path / "s.h5")
    _, _, state, _ = solve(d, h5)
    out, t, energy = results(h5, "rail")
    f = SpinUp(0.5, 0.0, 1.0)
    np.testing.assert_allclose(out["slide"], f(t), rtol=0, atol=1e-10)
    np.testing.assert_allclose(state.u[0, :2], f(1.5) * np.array([c, s]), rtol=1e-10)
    effort = M * f.second_derivative(t) + M * G * s
    np.testing.assert_allclose(out["effort"], effort, rtol=0, atol=1e-9 * M * G)
    assert abs(energy["total"] - energy["total"][0]).max() < 1e-8 * M * G


@pytest.mark.parametrize("dim", [2, 3])
def test_a_driver_at_rest_holds_a_static_cantilever_like_a_clamp(dim):
    """A driver whose function stays 0 holds the revolute joint at the root of a cantilever:
    the tip deflects P L^3 / (3 E I) and the effort is the root moment P L."""
    E, I, length, P = 1000.0, 0.02, 2.0, 3.0
    section = {"name": "s", "A": 1.0, "Iz": I}
    joint = {"name": "root", "type": "revolute", "ground": [1], "drive": "hold"}
    if dim == 3:
        section.update(Iy=I, J=2 * I)
        joint["axis"] = [0.0, 0.0, 1.0]
    d = {"model": {"dim": dim},
         "materials": [{"name": "m", "E": E, "nu": 0.25}],
         "sections": [section],
         "nodes": {"coordinates": [_v(dim, 0.0, 0.0), _v(dim, length, 0.0)]},
         "elements": [{"name": "beam", "type": "beam", "material": "m", "section": "s",
                       "connectivity": [[1, 2]], "formulation": "linear"}],
         "functions": [{"name": "hold", "type": "constant", "value": 0.0}],
         "joints": [joint],
         "loads": [{"name": "P", "nodes": [2], "force": _v(dim, 0.0, -P)}],
         "steps": [{"name": "s", "type": "static"}]}
    if dim == 3:             # the joint leaves the bar's twist and out-of-plane turn to the axis
        d["supports"] = [{"nodes": [2], "fixed": ["uz", "rx", "ry"]}]
    _, sysm, state, _ = solve(d)
    assert state.u[1, 1] == pytest.approx(-P * length**3 / (3 * E * I), rel=1e-10)
    # the load turns the bar clockwise; the driver holds it with P L counter-clockwise
    assert sysm.outputs(state)["root"]["effort"][0] == pytest.approx(P * length, rel=1e-10)


@pytest.mark.parametrize(("change", "key", "words"), [
    ({"type": "spherical", "axis": None}, "joints[0].drive", "revolute or prismatic"),
    ({"drive": "spinn"}, "joints[0].drive", "unknown function 'spinn'"),
])
def test_driver_mistakes_are_deck_errors(change, key, words):
    d = crank(3)
    with_changes(d["joints"][0], change)
    err = deck_error(d)
    assert err.key == key, err
    assert words in str(err)


@pytest.mark.parametrize(("change", "key", "words"), [
    ({"rate": None}, "functions[0].rate", "needs its final rate"),
    ({"t1": 0.0}, "functions[0].t1", "after t0"),
    ({"type": "ramp"}, "functions[0].rate", "not used by ramp"),
])
def test_drive_function_mistakes_are_deck_errors(change, key, words):
    d = crank(2)
    with_changes(d["functions"][0], change)
    err = deck_error(d)
    assert err.key == key, err
    assert words in str(err)


def test_a_second_step_whose_drive_restarts_elsewhere_is_refused_by_name(tmp_path):
    """Drive functions take the step's time: a second dynamic step with the same spin-up would
    pull the crank back to 0 at once. The step is refused with exit code 2 naming the joint, and
    the first step's frames stay in the results file."""
    from fem.errors import ModelError

    d = crank(2)
    d["steps"].append(dict(d["steps"][0], name="again"))
    h5 = str(tmp_path / "two.h5")
    with pytest.raises(ModelError) as err:
        solve(d, h5)
    assert err.value.exit_code == 2
    assert "driven revolute joint 1 of 'O'" in str(err.value)
    assert "step 'again'" in str(err.value)
    with h5py.File(h5) as f:
        assert len(f["steps/run/time"]) == 21          # the first step's frames
