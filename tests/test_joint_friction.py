"""Friction from a joint's reaction (issue 30): ``friction_coefficient`` on revolute and prismatic.

References: the closed form of a block on an incline (slides with ``g (sin - mu cos)`` above
``tan theta = mu``), the normal reaction ``m g cos theta`` it is built from, the energy balance
(``total + damping`` constant), and a rotor whose pin carries its weight: its friction ``mu r m
g`` is a constant, the run must be the one with that constant friction.
"""

import copy
import tomllib
from pathlib import Path

import h5py
import numpy as np
import pytest
from helpers import with_changes

from fem.errors import DeckError
from fem.io import deck as deck_io
from fem.run import run

CASES = Path(__file__).resolve().parents[1] / "cases"
G, THETA = 9.81, np.radians(30.0)


def case(name):
    return tomllib.loads((CASES / name / "deck.toml").read_text())


def test_block_in_a_prismatic_joint_slides(tmp_path):
    """``cases/incline_prismatic``'s sliding block for 0.2 s: closed form, reaction, balance.

    Its slope distance is ``v0 t + a t^2/2``, ``a = g (sin - 0.3 cos)``, to 1e-9 (the mid-point
    scheme integrates a constant acceleration exactly); the friction limit is ``mu m g
    cos(theta)`` to 1e-9 at every frame (the first: the consistent reaction the step starts
    from); ``total + damping`` stays at the initial 0.005 J to 1e-9. (The sticking block: the
    case, tests/test_cases.py.)
    """
    data = case("incline_prismatic")
    data["steps"][0].update(duration=0.2)
    data["joints"] = data["joints"][:1]            # the sticking block: the case's run
    data["bodies"][0]["nodes"] = [1]
    data["nodes"]["coordinates"] = data["nodes"]["coordinates"][:1]
    run(deck_io.from_dict(data, base_dir=str(tmp_path)), str(tmp_path / "out.h5"))
    with h5py.File(tmp_path / "out.h5") as f:
        s = f["steps/slide"]
        t, u = s["time"][()], s["displacement"][:, 0, :2]
        limit = s["elements/sliding_force/friction_limit"][:, 0]
        total, damping = s["energy/total"][()], s["energy/damping"][()]
    slope = np.array([np.cos(THETA), np.sin(THETA)])
    a = G * (np.sin(THETA) - 0.3 * np.cos(THETA))
    np.testing.assert_allclose(-u @ slope, 0.1 * t + 0.5 * a * t**2, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(limit, 0.3 * G * np.cos(THETA), rtol=1e-9)
    np.testing.assert_allclose(total + damping, 0.005, rtol=1e-9)
    assert damping[-1] > 0.15


def test_rotor_friction_from_its_weight_is_the_constant_friction(tmp_path):
    """``cases/coulomb_rotor`` with gravity: the pin carries the weight, ``mu r m g = T_f``.

    The rotor's centre is on the axis, so its joint force is ``m g`` at every instant and the
    friction from the reaction (mu = 0.5, r = T_f / (mu m g)) is the case's constant 2.5 N m: the
    rotation history and the friction's work equal the constant-friction run's to 1e-9. The
    rotor's spring makes the joint rows' scale differ from 1 (the multipliers are scaled).
    """
    base = case("coulomb_rotor")
    base["steps"][0].update(duration=0.1, time_step=5e-3, output_interval=0.02)
    base["gravity"] = {"acceleration": [0.0, -G]}
    runs = []
    for name, changes in (("constant", {}),
                          ("reaction", {"friction": None, "friction_coefficient": 0.5,
                                        "pin_radius": 2.5 / (0.5 * G)})):
        data = copy.deepcopy(base)
        with_changes(data["joints"][0], changes)
        run(deck_io.from_dict(data, base_dir=str(tmp_path)), str(tmp_path / f"{name}.h5"))
        with h5py.File(tmp_path / f"{name}.h5") as f:
            s = f["steps/swing"]
            runs.append((s["rotation_vector"][:, 0, 2], s["energy/damping"][()]))
            if name == "reaction":
                np.testing.assert_allclose(s["elements/hinge_force/friction_limit"][()], 2.5,
                                           rtol=1e-9)
    np.testing.assert_allclose(runs[1][0], runs[0][0], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(runs[1][1], runs[0][1], rtol=1e-9)
    assert runs[0][1][-1] > 0.1


@pytest.mark.parametrize("changes, where, says", [
    ({"friction_coefficient": -0.1}, "joints[0].friction_coefficient", "-0.1"),
    ({"friction_coefficient": 0.3, "pin_radius": None}, "joints[0].pin_radius", "required"),
    ({"friction_coefficient": 0.3, "pin_radius": -1.0}, "joints[0].pin_radius", "-1"),
    ({"pin_radius": 0.1}, "joints[0].pin_radius", "without friction_coefficient"),
    ({"friction_coefficient": 0.3, "pin_radius": 0.1, "velocity_scale": None},
     "joints[0].velocity_scale", "required"),
    ({"friction_coefficient": 0.3, "pin_radius": 0.1, "type": "fixed"},
     "joints[0].stiffness", "revolute, prismatic or cylindrical"),
])
def test_revolute_deck_errors(changes, where, says):
    """Bad input of friction from the reaction is a deck error naming the key."""
    data = case("coulomb_rotor")
    with_changes(data["joints"][0], changes)
    with pytest.raises(DeckError) as err:
        deck_io.from_dict(data)
    assert err.value.key == where and says in str(err.value), str(err.value)


@pytest.mark.parametrize("changes, where, says", [
    ({"pin_radius": 0.1}, "joints[0].pin_radius", "no pin radius"),
    ({"friction_coefficient": -1.0}, "joints[0].friction_coefficient", "-1"),
    ({"ground": [7]}, "joints[0].ground", "unknown node 7"),
])
def test_prismatic_deck_errors(changes, where, says):
    data = case("incline_prismatic")
    with_changes(data["joints"][0], changes)
    with pytest.raises(DeckError) as err:
        deck_io.from_dict(data)
    assert err.value.key == where and says in str(err.value), str(err.value)


def test_cylindrical_joint_friction_from_the_reaction_is_refused():
    data = case("incline_prismatic")
    data["model"]["dim"] = 3
    data["nodes"]["coordinates"] = [[0.0, 0.0, 0.0], [10.0, 0.0, 0.0]]
    data["bodies"][0]["inertia"] = [0.1, 0.1, 0.1]
    data["gravity"]["acceleration"] = [0.0, -G, 0.0]
    data["velocities"][0]["velocity"] = [-0.0866, -0.05, 0.0]
    for j in data["joints"]:
        j["axis"] = [0.8660254037844387, 0.5, 0.0]
    data["joints"][0].update(type="cylindrical", coordinate="slide")
    with pytest.raises(DeckError) as err:
        deck_io.from_dict(data)
    assert err.value.key == "joints[0].friction_coefficient" and "cylindrical" in str(err.value)
