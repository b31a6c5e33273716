"""Bodies starting at rest on contacts (issue 30, item 5): a dynamic step's ``settle = true``.

References: the static Hertz penetration ``(W / K)^(2/3)`` of a sphere of weight ``W`` on a plane,
and in a stack each contact's force equal to the weight above it (statics); without the settle the
sphere falls into the contact from zero penetration and swings between zero and the energy
balance's ``(5 W / (2 K))^(2/3)`` (``W d = K d^2.5 / 2.5``).
"""

import h5py
import numpy as np
import pytest

from fem.errors import ConvergenceError
from fem.io import deck as deck_io
from fem.run import run

R, K, G = 0.01, 1e7, 9.81


def resting(masses, settle=True, duration=0.02, time_step=2e-4, law="hertz"):
    """A vertical stack of spheres of radius R (masses bottom to top) just touching, on y = 0."""
    k = len(masses)
    ids = list(range(1, k + 1))
    data = {
        "model": {"dim": 2},
        "nodes": {"coordinates": [[0.0, R + 2 * R * i] for i in range(k)]},
        "masses": [{"nodes": [i], "mass": m} for i, m in zip(ids, masses, strict=True)],
        "contacts": [{"name": "ground", "nodes": [1], "radius": R, "law": law, "stiffness": K,
                      "plane_point": [0.0, 0.0], "plane_normal": [0.0, 1.0]}],
        "supports": [{"nodes": ids, "fixed": ["ux"]}],
        "gravity": {"acceleration": [0.0, -G]},
        "steps": [{"name": "rest", "type": "dynamic", "integrator": "energy_conserving",
                   "duration": duration, "time_step": time_step, "tolerance": 1e-12}],
    }
    if settle:
        data["steps"][0]["settle"] = True
    if k > 1:
        data["contacts"].append({"name": "stack", "pairs": [[i, i + 1] for i in ids[:-1]],
                                 "radius": R, "law": law, "stiffness": K})
    return data


def run_deck(tmp_path, data, name="out"):
    run(deck_io.from_dict(data, base_dir=str(tmp_path)), str(tmp_path / f"{name}.h5"))
    return h5py.File(tmp_path / f"{name}.h5")


def test_sphere_settles_to_the_hertz_penetration(tmp_path):
    """With settle: the static penetration to 1e-10 from the first frame, and no motion."""
    m = 0.1
    delta = (m * G / K) ** (2 / 3)
    with run_deck(tmp_path, resting([m], duration=0.005)) as f:
        s = f["steps/rest"]
        pen = -s["elements/ground/gap"][:, 0]
        y = s["displacement"][:, 0, 1]
        kinetic = s["energy/kinetic"][()]
    assert len(pen) > 20
    assert pen[0] == pytest.approx(delta, rel=1e-10)
    assert np.abs(y - y[0]).max() < 1e-9 * delta
    assert kinetic.max() < 1e-18 * m * G * delta


def test_without_settle_the_sphere_jumps(tmp_path):
    """Without settle (the old behaviour): it falls in and swings between 0 and 1.84 delta."""
    m = 0.1
    delta = (m * G / K) ** (2 / 3)
    with run_deck(tmp_path, resting([m], settle=False, time_step=1e-4, duration=5e-3)) as f:
        pen = -f["steps/rest/elements/ground/gap"][:, 0]
    assert pen[0] == 0.0
    assert pen.max() == pytest.approx((2.5 * m * G / K) ** (2 / 3), rel=2e-2)
    assert pen.max() > 1.8 * delta and pen.min() < 0.05 * delta


def test_stack_of_three_carries_the_weight_above(tmp_path):
    """Three spheres of 0.1, 0.2, 0.3 kg (bottom to top): contact forces 0.5, 0.3 g and 0.6 g."""
    masses = [0.1, 0.2, 0.3]
    with run_deck(tmp_path, resting(masses, duration=0.004)) as f:
        s = f["steps/rest"]
        ground = s["elements/ground/normal_force"][()]
        stack = s["elements/stack/normal_force"][()]
        y = s["displacement"][:, :, 1]
    above = np.cumsum(masses[::-1])[::-1] * G           # the weight above each contact
    np.testing.assert_allclose(ground[0, 0], above[0], rtol=1e-10)
    np.testing.assert_allclose(stack[0], above[1:], rtol=1e-10)
    np.testing.assert_allclose(ground[-1, 0], above[0], rtol=1e-9)
    np.testing.assert_allclose(stack[-1], above[1:], rtol=1e-9)
    # each contact's penetration is its force's: (F / K)^(2/3), summed up the stack
    pen = (above / K) ** (2 / 3)
    np.testing.assert_allclose(y[0], -np.cumsum(pen), rtol=1e-10)
    assert np.abs(y - y[0]).max() < 1e-9 * pen.min()


def test_settle_without_equilibrium_is_an_error(tmp_path):
    """Gravity pulling the sphere off the plane: no equilibrium, an error naming settle."""
    data = resting([0.1])
    data["gravity"]["acceleration"] = [0.0, G]
    with pytest.raises(ConvergenceError, match="settle = true"):
        run_deck(tmp_path, data)


def test_settle_only_with_multipliers():
    """The eliminating formulations integrate by RK4 from the given state: settle is refused."""
    from fem.errors import DeckError

    data = resting([0.1])
    data["steps"][0] = {"name": "rest", "type": "dynamic", "formulation": "partitioning",
                        "duration": 0.01, "time_step": 1e-3, "settle": True}
    with pytest.raises(DeckError) as err:
        deck_io.from_dict(data)
    assert err.value.key == "steps[0].settle", str(err.value)
