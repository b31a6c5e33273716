"""Inertia input matching the literature (issue 10, item 7).

* Beam sections may give the mass per length ``rho A`` and the rotary inertia per length
  (``rho I``; 3D ``rho Iy, rho Iz, rho J``) directly, apart from the stiffness section, as papers
  do. Kane's beam (Meijaard's notes, section 2.4 case 2: L = 10, EI = 14000, EA = 2.8e7,
  rho A = 1.2, rho I = 6e-4) in four elements: the lumped (HRZ) nodal masses and rotary inertias
  by hand, ``rho A L_e / 2`` and ``rho A L_e^3 / 78 + rho I L_e / 2`` per element end.
* Initial velocity fields add up on a node they share (a spin plus a kick).
"""

import numpy as np
import pytest
from helpers import node

from fem.errors import DeckError
from fem.inertia.nodal import NodalInertia
from fem.io.deck import from_dict
from fem.model import apply_velocities
from fem.system import System


def kane(dim=2, **section) -> dict:
    sec = {"name": "kane", "A": 1.0, "Iz": 14000 / 2.8e7, "mass_per_length": 1.2,
           "rotary_inertia_per_length": 6e-4 if dim == 2 else [6e-4, 6e-4, 1.2e-3]}
    if dim == 3:
        sec.update(Iy=14000 / 2.8e7, J=1e-3)
    sec.update(section)
    return {"model": {"dim": dim},
            # the density would give rho A = 7850: the section's values override it
            "materials": [{"name": "m", "E": 2.8e7, "nu": 0.3, "density": 7850.0}],
            "sections": [sec],
            "nodes": {"coordinates": [[0.0] * dim, [10.0] + [0.0] * (dim - 1)]},
            "elements": [{"name": "beam", "type": "beam", "material": "m", "section": "kane",
                          "connectivity": [[1, 2]], "divisions": 4}],
            "supports": [{"nodes": 1, "fixed": ["all"]}],
            "steps": [{"name": "s", "type": "static"}]}


def test_kane_beam_lumped_masses_by_hand():
    dk = from_dict(kane())
    inert = NodalInertia(System(dk.model))
    Le, rA, rI = 2.5, 1.2, 6e-4
    end_m, end_I = rA * Le / 2, rA * Le**3 / 78 + rI * Le / 2
    x = dk.model.X[:, 0]
    ends = np.isclose(x, 0.0) | np.isclose(x, 10.0)
    assert np.allclose(inert.m[ends], end_m, rtol=1e-14)
    assert np.allclose(inert.m[~ends], 2 * end_m, rtol=1e-14)
    assert np.allclose(inert.I[ends], end_I, rtol=1e-14)
    assert np.allclose(inert.I[~ends], 2 * end_I, rtol=1e-14)
    assert inert.m.sum() == pytest.approx(12.0, rel=1e-14)
    # the consistent mass: total rho A L, and rho I enters its rotary part
    g = dk.model.groups[0]
    M = g.mass(lumped=False)
    assert M[:, 0, 0].sum() + M[:, 0, 3].sum() * 2 + M[:, 3, 3].sum() == pytest.approx(12.0)
    without = from_dict(kane(rotary_inertia_per_length=0.0)).model.groups[0].mass()
    assert np.allclose((M - without)[:, 2, 2], rI * Le * 4 / 30, rtol=1e-12)


def test_kane_beam_3d_rotary_inertias_by_hand():
    rIy, rIz, rJ = 2e-4, 6e-4, 8e-4
    dk = from_dict(kane(3, rotary_inertia_per_length=[rIy, rIz, rJ]))
    inert = NodalInertia(System(dk.model))
    Le, rA = 2.5, 1.2
    tip = node(dk, 2)                      # one element end; the beam lies along global x
    J = inert.J[tip]
    assert J[0, 0] == pytest.approx(rJ * Le / 2, rel=1e-14)
    assert J[1, 1] == pytest.approx(rA * Le**3 / 78 + rIy * Le / 2, rel=1e-14)
    assert J[2, 2] == pytest.approx(rA * Le**3 / 78 + rIz * Le / 2, rel=1e-14)
    assert inert.m[tip] == pytest.approx(rA * Le / 2, rel=1e-14)


def test_without_the_keys_the_density_and_section_give_the_inertia():
    d = kane()
    del d["sections"][0]["mass_per_length"], d["sections"][0]["rotary_inertia_per_length"]
    inert = NodalInertia(System(from_dict(d).model))
    assert inert.m.sum() == pytest.approx(7850.0 * 10.0, rel=1e-14)


@pytest.mark.parametrize(("dim", "value", "match"), [
    (2, [1e-4, 2e-4, 3e-4], "one number"),
    (3, 1e-4, r"\[rho Iy, rho Iz, rho J\]"),
    (3, [1e-4, 2e-4], r"\[rho Iy, rho Iz, rho J\]"),
    (2, -1e-4, ">= 0"),
])
def test_rotary_inertia_per_length_errors_name_the_key(dim, value, match):
    with pytest.raises(DeckError, match=match) as err:
        from_dict(kane(dim, rotary_inertia_per_length=value))
    assert err.value.key == "sections[0].rotary_inertia_per_length"


def test_negative_mass_per_length_is_an_error():
    with pytest.raises(DeckError) as err:
        from_dict(kane(mass_per_length=-1.0))
    assert err.value.key == "sections[0].mass_per_length"


@pytest.mark.parametrize("dim", [2, 3])
def test_velocity_fields_on_one_node_add_up(dim):
    """A spin about the root plus a kick of the tip: the tip gets their sum, the rest the spin."""
    d = kane(dim)
    w = 0.7 if dim == 2 else [0.0, 0.0, 0.7]
    kick = [0.0, 2.0] if dim == 2 else [0.0, 2.0, 1.0]
    d["velocities"] = [{"name": "spin", "angular_velocity": w},
                       {"name": "kick", "nodes": 2, "velocity": kick}]
    d["steps"] = [{"name": "go", "type": "dynamic", "time_step": 0.01, "duration": 0.01,
                   "velocities": ["spin", "kick"]}]
    dk = from_dict(d)
    sysm = System(dk.model)
    state = sysm.reference_state()
    apply_velocities(dk.steps[0]["settings"].velocities, state, dk.model.X)
    tip = node(dk, 2)
    spin = np.zeros(3)
    spin[1] = 0.7 * 10.0                    # omega x r at the tip, r = (10, 0, 0)
    expect = spin.copy()
    expect[:dim] += kick
    assert np.allclose(state.v[tip, :dim], expect[:dim])
    assert state.v[tip, 2 if dim == 2 else 5] == pytest.approx(0.7)      # the spin stays
    mid = int(np.flatnonzero(np.isclose(dk.model.X[:, 0], 5.0))[0])
    assert np.allclose(state.v[mid, :2], [0.0, 3.5])
    # the order the step names them in does not matter
    other = sysm.reference_state()
    apply_velocities(dk.steps[0]["settings"].velocities[::-1], other, dk.model.X)
    assert np.array_equal(other.v, state.v)


def test_a_truss_takes_the_sections_mass_per_length():
    """A section's mass_per_length is the truss's rho A too (not density x A, silently)."""
    from helpers import line_beam

    from fem.io.deck import from_dict

    d = line_beam(2, 2, A=0.5)
    d["materials"][0]["density"] = 2.0
    d["sections"][0]["mass_per_length"] = 3.0
    d["elements"][0]["type"] = "truss"
    for key in [k for k in d["elements"][0] if k in ("theory", "orientation")]:
        del d["elements"][0][key]
    d["supports"] = [{"nodes": 1, "fixed": ["all"]}]
    d["steps"] = [{"name": "s", "type": "static"}]
    truss = from_dict(d).model.groups[0]
    assert truss.type_name == "truss"
    np.testing.assert_allclose(truss.rhoA, 3.0, rtol=0)
