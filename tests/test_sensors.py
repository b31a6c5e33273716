"""Sensors (``[[sensors]]``, fem.io.sensors): each equals the field it names at every frame.

The expected values are read from the results datasets by the test's own indexing (node index,
DOF slot, element, component), never through the sensor's recorded source; the cantilever's tip
sensor is also held to its closed-form deflection -P L^3 / (3 EI) (cases/cantilever_2d).
"""

import os
import tomllib

import h5py
import numpy as np
import pytest
from helpers import case_deck, case_deck_path, deck_error, node

from fem.io.deck import from_dict
from fem.run import run

CANTILEVER_SENSORS = [
    {"name": "tip uy", "node": 3, "dof": "uy"},
    {"name": "tip rz", "node": 3, "dof": "rz", "quantity": "rotation"},
    {"name": "root reaction", "node": 1, "dof": "uy", "quantity": "reaction"},
    {"name": "root moment", "node": 1, "dof": "rz", "quantity": "reaction"},
    {"name": "tip x", "node": 3, "dof": "ux", "quantity": "position"},
    {"name": "tip y", "node": 3, "dof": "uy", "quantity": "position"},
    {"name": "M1 of 2", "group": "beam", "element": 2, "quantity": "M1"},
    {"name": "strain", "energy": "strain"},
    {"name": "tip vy", "node": 3, "dof": "uy", "quantity": "velocity"},
]


def _run(deck: dict, tmp_path, sensors: list[dict]):
    deck["sensors"] = sensors
    dk = from_dict(deck)
    out = str(tmp_path / "out.h5")
    run(dk, out)
    return dk, out


def test_nodal_group_and_energy_sensors_equal_their_fields(tmp_path):
    dk, out = _run(case_deck("cantilever_2d"), tmp_path, CANTILEVER_SENSORS)
    tip, root = node(dk, 3), node(dk, 1)
    X = dk.model.X
    with h5py.File(out, "r") as h5:
        for step in ("tip_force", "tip_moment"):
            s = h5[f"steps/{step}"]
            sens = s["sensors"]
            T = len(s["time"])
            assert all(sens[k].shape == (T,) for k in sens)
            np.testing.assert_array_equal(sens["tip uy"], s["displacement"][:, tip, 1])
            np.testing.assert_array_equal(sens["tip rz"], s["rotation_vector"][:, tip, 2])
            np.testing.assert_array_equal(sens["root reaction"], s["reaction"][:, root, 1])
            np.testing.assert_array_equal(sens["root moment"], s["reaction"][:, root, 2])
            np.testing.assert_array_equal(sens["tip x"], X[tip, 0] + s["displacement"][:, tip, 0])
            np.testing.assert_array_equal(sens["tip y"], X[tip, 1] + s["displacement"][:, tip, 1])
            np.testing.assert_array_equal(sens["M1 of 2"], s["elements/beam/M1"][:, 1])
            assert "energy" not in s                        # static steps write no energy,
            assert np.isnan(sens["strain"][()]).all()       # nor velocities: NaN, not zero
            assert np.isnan(sens["tip vy"][()]).all()
            assert sens["tip uy"].attrs["what"] == "displacement uy of node 3"
            assert sens["tip uy"].attrs["units"] == "N, mm"
            assert sens["root moment"].attrs["dimension"] == "moment"
        # the sensor is the tip deflection: -P L^3 / (3 EI), cases/cantilever_2d/reference.toml
        ref = _reference("cantilever_2d", "tip force: tip deflection")
        assert h5["steps/tip_force/sensors/tip uy"][-1] == pytest.approx(ref["value"],
                                                                        rel=ref["tolerance"])


def _reference(case: str, name: str) -> dict:
    """The quantity ``name`` of the case's reference.toml (its value, tolerance and source)."""
    path = os.path.join(os.path.dirname(case_deck_path(case)), "reference.toml")
    with open(path, "rb") as fh:
        return next(q for q in tomllib.load(fh)["quantities"] if q["name"] == name)


def test_dynamic_body_joint_and_momentum_sensors_equal_their_fields(tmp_path):
    deck = case_deck("rod_pendulum")
    deck["steps"][0].update(duration=0.05, output_interval=0.01, time_step=0.005)
    dk, out = _run(deck, tmp_path, [
        {"name": "x", "body": "rod", "dof": "ux", "quantity": "position"},
        {"name": "vy", "body": "rod", "dof": "uy", "quantity": "velocity"},
        {"name": "spin rate", "node": 1, "dof": "rz", "quantity": "acceleration"},
        {"name": "pivot fy", "group": "pivot", "quantity": "fy"},
        {"name": "pivot angle", "group": "pivot", "quantity": "angle"},
        {"name": "pivot Fx", "group": "pivot", "quantity": "force", "component": 0},
        {"name": "Lz", "energy": "angular_momentum", "component": 2},
        {"name": "T", "energy": "kinetic"},
    ])
    n = node(dk, 1)
    with h5py.File(out, "r") as h5:
        s = h5["steps/swing"]
        sens = s["sensors"]
        assert len(s["time"]) == 6
        np.testing.assert_array_equal(sens["x"], 0.6 + s["displacement"][:, n, 0])
        np.testing.assert_array_equal(sens["vy"], s["velocity"][:, n, 1])
        np.testing.assert_array_equal(sens["spin rate"], s["acceleration"][:, n, 2])
        np.testing.assert_array_equal(sens["pivot fy"], s["elements/pivot/fy"][:, 0])
        np.testing.assert_array_equal(sens["pivot angle"], s["elements/pivot/angle"][:, 0])
        np.testing.assert_array_equal(sens["pivot Fx"], s["elements/pivot/force"][:, 0, 0])
        np.testing.assert_array_equal(sens["Lz"], s["energy/angular_momentum"][:, 2])
        np.testing.assert_array_equal(sens["T"], s["energy/kinetic"][()])
        assert np.ptp(sens["pivot angle"][()]) > 0.01   # the rod swings: not all zeros


@pytest.mark.parametrize("sensor, key, words", [
    ({"name": "a", "node": 99, "dof": "uy"}, "sensors[0].node", "no node 99"),
    ({"name": "a", "node": 3, "dof": "uz"}, "sensors[0].dof", "ux, uy, rz"),
    ({"name": "a", "node": 3, "dof": "uy", "quantity": "speed"}, "sensors[0].quantity",
     "displacement, rotation"),
    ({"name": "a", "group": "beams", "quantity": "M1"}, "sensors[0].group", "did you mean"),
    ({"name": "a", "group": "beam", "element": 3, "quantity": "M1"}, "sensors[0].element",
     "has 2 elements"),
    ({"name": "a", "energy": "kinetik"}, "sensors[0].energy", "did you mean"),
    ({"name": "a", "body": "beam", "dof": "ux"}, "sensors[0].body", "no rigid-body group"),
    ({"name": "a", "dof": "ux"}, "sensors[0]", "exactly one of node, body, group or energy"),
])
def test_sensor_deck_errors_name_the_key(sensor, key, words):
    deck = case_deck("cantilever_2d")
    deck["sensors"] = [sensor]
    err = deck_error(deck)
    assert err.key == key
    assert words in str(err)


def test_unknown_group_output_is_a_deck_error_listing_the_outputs(tmp_path):
    from fem.errors import DeckError

    with pytest.raises(DeckError) as err:
        _run(case_deck("cantilever_2d"), tmp_path, [{"name": "a", "group": "beam",
                                                      "quantity": "Mx"}])
    assert err.value.key == "sensors[0].quantity"
    assert "N, V, M1, M2" in str(err.value)
