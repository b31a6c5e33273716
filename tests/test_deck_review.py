"""Deck review: one parser of deck vectors, contradictory inertia input, the results' properties.

* Every "vector of dim components" key has one message, "expected N components (model.dim = N),
  got M: <value>", and every "one number in 2D, three in 3D" key another.
* ``rotary_inertia_per_length`` contradicts ``rotary_inertia = false`` and means nothing to
  trusses; a step naming "gravity" without a ``[gravity]`` table is told to add one; a load per
  length of zero is refused like a zero gravity.
* The results file holds the inertia per length the mass actually uses (``rhoA``, ``rhoIy``,
  ``rhoIz``, ``rhoJ``; trusses ``rhoA``) and the beams' ``inertia`` and ``rotary_inertia``.
"""

import h5py
import numpy as np
import pytest
from helpers import line_beam, solve

from fem.errors import DeckError
from fem.io.deck import from_dict


def beam(dim=2, section=None, element=None, **extra) -> dict:
    """A two-element cantilever of density 2 (``line_beam``), with ``extra`` tables."""
    d = line_beam(dim, 2, length=2.0, E=1e4, G=4e3, A=0.5, Iy=1e-3, Iz=2e-3, J=3e-3,
                  **(element or {}))
    d["materials"][0]["density"] = 2.0
    d["sections"][0].update(section or {})
    d["supports"] = [{"nodes": 1, "fixed": ["all"]}]
    d["steps"] = [{"name": "s", "type": "static"}]
    d.update(extra)
    return d


def truss(**section) -> dict:
    return {"model": {"dim": 2},
            "materials": [{"name": "m", "E": 1e4, "nu": 0.3, "density": 2.0}],
            "sections": [{"name": "s", "A": 0.5, **section}],
            "nodes": {"coordinates": [[0.0, 0.0], [1.0, 0.0]]},
            "elements": [{"name": "bar", "type": "truss", "material": "m", "section": "s",
                          "connectivity": [[1, 2]]}],
            "supports": [{"nodes": 1, "fixed": ["ux", "uy"]}, {"nodes": 2, "fixed": ["uy"]}],
            "steps": [{"name": "s", "type": "static"}]}


def error(d: dict, key: str, *words: str) -> str:
    with pytest.raises(DeckError) as err:
        from_dict(d)
    assert err.value.key == key, err.value
    for w in words:
        assert w in err.value.message, err.value.message
    return err.value.message


# --- one parser of deck vectors ---------------------------------------------------------------

@pytest.mark.parametrize(("dim", "change", "key"), [
    (2, {"loads": [{"name": "P", "nodes": 2, "force": [0, 1, 0]}]}, "loads[0].force"),
    (2, {"loads": [{"name": "q", "elements": "beam", "per_length": [0, 1, 0]}]},
     "loads[0].per_length"),
    (2, {"gravity": {"acceleration": [0, -9.81, 0]}}, "gravity.acceleration"),
    (2, {"velocities": [{"name": "v", "velocity": [0, 1, 0]}]}, "velocities[0].velocity"),
    (3, {"loads": [{"name": "P", "nodes": 2, "force": [0, 1]}]}, "loads[0].force"),
])
def test_vectors_of_the_wrong_length_have_one_message(dim, change, key):
    given = next(iter(change.values()))
    value = given["acceleration"] if isinstance(given, dict) else next(
        v for k, v in given[0].items() if isinstance(v, list))
    error(beam(dim, **change), key, f"expected {dim} components (model.dim = {dim}), got "
          f"{len(value)}: {value!r}")


def test_coordinates_and_centers_say_coordinates():
    d = beam(2)
    d["nodes"]["coordinates"][1] = [2.0, 0.0, 0.0]
    error(d, "nodes.coordinates[1]", "expected 2 coordinates (model.dim = 2), got 3: "
          "[2.0, 0.0, 0.0]")
    d = beam(3, velocities=[{"name": "v", "angular_velocity": [0, 0, 1], "center": [0, 0]}])
    error(d, "velocities[0].center", "expected 3 coordinates (model.dim = 3), got 2: [0, 0]")


def test_orientation_of_the_wrong_length_says_what_it_got():
    error(beam(3, element={"orientation": [0.0, 1.0]}), "elements[0].orientation",
          "expected 3 components (model.dim = 3), got 2: [0.0, 1.0]")


@pytest.mark.parametrize(("dim", "change", "key", "words"), [
    (2, {"loads": [{"name": "P", "nodes": 2, "moment": [0, 0, 1]}]}, "loads[0].moment",
     "expected one number, mz, in a 2D model (model.dim = 2), got a list [0, 0, 1]"),
    (3, {"loads": [{"name": "P", "nodes": 2, "moment": 1.0}]}, "loads[0].moment",
     "expected [mx, my, mz] in a 3D model (model.dim = 3), got a number 1.0"),
    (3, {"loads": [{"name": "P", "nodes": 2, "moment": [1.0, 2.0]}]}, "loads[0].moment",
     "expected [mx, my, mz] in a 3D model (model.dim = 3), got 2 components: [1.0, 2.0]"),
    (2, {"velocities": [{"name": "v", "angular_velocity": [0, 0, 1]}]},
     "velocities[0].angular_velocity", "expected one number, wz, in a 2D model"),
    (3, {"velocities": [{"name": "v", "angular_velocity": [0, 1]}]},
     "velocities[0].angular_velocity", "expected [wx, wy, wz] in a 3D model"),
    (2, {"masses": [{"nodes": 2, "mass": 1.0, "inertia": [1.0]}]}, "masses[0].inertia",
     "expected one number, Izz, in a 2D model"),
])
def test_axial_vectors_one_number_in_2d_three_in_3d(dim, change, key, words):
    error(beam(dim, **change), key, words)


def test_rotary_inertia_per_length_of_the_wrong_form():
    error(beam(2, section={"rotary_inertia_per_length": [1e-3, 1e-3]}),
          "sections[0].rotary_inertia_per_length", "expected one number, rho Iz, in a 2D model")
    error(beam(3, section={"rotary_inertia_per_length": [1e-3, 1e-3]}),
          "sections[0].rotary_inertia_per_length",
          "expected [rho Iy, rho Iz, rho J] in a 3D model", "got 2 components")


# --- bad input ----------------------------------------------------------------------------------

@pytest.mark.parametrize("dim", [2, 3])
def test_rotary_inertia_false_contradicts_a_rotary_inertia_per_length(dim):
    r = 1e-3 if dim == 2 else [1e-3, 2e-3, 3e-3]
    d = beam(dim, section={"rotary_inertia_per_length": r},
             element={"rotary_inertia": False})
    error(d, "elements[0].rotary_inertia", "rotary_inertia_per_length", "section 's'")
    d["elements"][0]["rotary_inertia"] = True
    from_dict(d)
    del d["sections"][0]["rotary_inertia_per_length"]
    d["elements"][0]["rotary_inertia"] = False
    from_dict(d)


def test_a_truss_refuses_a_rotary_inertia_per_length():
    error(truss(rotary_inertia_per_length=1e-3), "elements[0].section",
          "trusses carry no rotary inertia")
    from_dict(truss(mass_per_length=1.5))


def test_a_step_naming_gravity_without_the_table_is_told_to_add_it():
    d = beam(2)
    d["steps"][0]["loads"] = ["gravity"]
    error(d, "steps[0].loads", "unknown load 'gravity' (add a [gravity] table)")
    d["loads"] = [{"name": "P", "nodes": 2, "force": [0.0, -1.0]}]
    d["steps"][0]["loads"] = ["Q"]
    assert "[gravity]" not in error(d, "steps[0].loads", "unknown load 'Q'")


@pytest.mark.parametrize("dim", [2, 3])
def test_a_zero_load_per_length_is_refused_like_a_zero_gravity(dim):
    d = beam(dim, loads=[{"name": "q", "elements": "beam", "per_length": [0.0] * dim}])
    error(d, "loads[0].per_length", "expected a nonzero load per length, got zero")


# --- the results file -------------------------------------------------------------------------

def test_beam_properties_are_the_inertia_used(tmp_path):
    """mass_per_length wins over the density (2 x 0.5 = 1); rho I from the density here."""
    d = beam(3, section={"mass_per_length": 0.25},
             element={"inertia": "consistent", "formulation": "corotational"})
    h5 = str(tmp_path / "beam.h5")
    solve(d, h5)
    with h5py.File(h5, "r") as f:
        g = f["model/groups/beam"]
        assert "rho" not in g
        np.testing.assert_array_equal(g["rhoA"][()], [0.25, 0.25])
        np.testing.assert_allclose(g["rhoIy"][()], 2.0 * 1e-3, rtol=1e-15)
        np.testing.assert_allclose(g["rhoIz"][()], 2.0 * 2e-3, rtol=1e-15)
        np.testing.assert_allclose(g["rhoJ"][()], 2.0 * 3e-3, rtol=1e-15)
        assert g.attrs["inertia"] == "consistent"
        assert g.attrs["rotary_inertia"] == "true"


def test_beam_properties_without_rotary_inertia(tmp_path):
    d = beam(2, element={"rotary_inertia": False})
    h5 = str(tmp_path / "beam.h5")
    solve(d, h5)
    with h5py.File(h5, "r") as f:
        g = f["model/groups/beam"]
        np.testing.assert_allclose(g["rhoA"][()], 1.0, rtol=1e-15)
        np.testing.assert_array_equal(g["rhoIz"][()], 0.0)
        assert g.attrs["inertia"] == "lumped"
        assert g.attrs["rotary_inertia"] == "false"


def test_truss_properties_hold_its_mass_per_length(tmp_path):
    h5 = str(tmp_path / "truss.h5")
    solve(truss(mass_per_length=1.5), h5)
    with h5py.File(h5, "r") as f:
        np.testing.assert_array_equal(f["model/groups/bar/rhoA"][()], [1.5])
    solve(truss(), h5)
    with h5py.File(h5, "r") as f:
        np.testing.assert_array_equal(f["model/groups/bar/rhoA"][()], [1.0])
