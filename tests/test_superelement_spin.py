"""Superelements in a turning frame (issue 29, item 1): linearize steps and spin sweeps.

A superelement's centrifugal force, gyroscopic matrix and centrifugal softening come from its
component's lumped masses mapped by the reduction's basis (:mod:`fem.inertia.superelement`) or
its recovery (:mod:`fem.inertia.floating`). References are the same models meshed in full with
the same physics (linear beams for linear superelements: neither stiffens under the centrifugal
tension), never the superelement's own numbers; the tolerances are the reductions' errors,
measured at rest and stated in each test.
"""

import numpy as np
import pytest
from helpers import solve

from fem.errors import DeckError
from fem.io.deck import from_dict

N = 8                                   # beam elements per component
CLAMP = [{"nodes": [1], "fixed": ["all"]}]


def beam(name, a, b, orientation, divisions=N):
    return {"name": name, "type": "beam", "material": "m", "section": "s",
            "connectivity": [[a, b]], "divisions": divisions, "orientation": orientation}


def deck(elements, coordinates, rotary, Iz=0.05, **tables):
    """A 3D deck of beams (E = 1000, Iy = 0.08, rho A = 1)."""
    ids = sorted(coordinates)
    return {"model": {"dim": 3},
            "materials": [{"name": "m", "E": 1000.0, "G": 400.0}],
            "sections": [{"name": "s", "A": 1.0, "Iy": 0.08, "Iz": Iz,
                          "J": 0.1, "mass_per_length": 1.0,
                          "rotary_inertia_per_length": rotary}],
            "nodes": {"ids": list(ids), "coordinates": [coordinates[i] for i in ids]},
            "elements": elements, **tables}


def superelement(name, file):
    return {"name": name, "type": "superelement", "file": file}


# --- a blade: the root clamped on a hub of radius 0.5, spinning about z -------------------------
BLADE = {1: [0.5, 0.0, 0.0], 2: [1.5, 0.0, 0.0], 3: [2.5, 0.0, 0.0]}
BLADE_ROT = [0.08, 0.05, 0.13]
ALONG_Y = [0.0, 1.0, 0.0]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """``blade.h5``: the outer half of the blade (Craig-Bampton, 20 modes, lumped mass);
    ``blade_consistent.h5``: the same with the consistent mass (no /component/mass);
    ``shaft.h5``: a whole shaft on the spin axis (12 modes, interface its two ends),
    ``shaft_all.h5``: the same with all 66 fixed-interface modes (an exact reduction)."""
    base = tmp_path_factory.mktemp("spin")
    for name, keys in (("blade", {}), ("blade_consistent", {"mass": "consistent"})):
        d = deck([beam("outer", 2, 3, ALONG_Y)], {i: BLADE[i] for i in (2, 3)}, BLADE_ROT,
                 steps=[{"name": "r", "type": "cms_reduce", "interface": [2, 3], "modes": 20,
                         "file": f"{name}.h5", **keys}])
        solve(d, str(base / f"{name}_reduce.h5"), base_dir=str(base))
    for name, modes in (("shaft", 12), ("shaft_all", 66)):
        d = shaft_deck([beam("shaft", 1, 2, ALONG_X, 12)],
                       steps=[{"name": "r", "type": "cms_reduce", "interface": [1, 2],
                               "modes": modes, "file": f"{name}.h5"}])
        d.pop("supports")
        solve(d, str(base / f"{name}_reduce.h5"), base_dir=str(base))
    return base


def blade(files, outer, step):
    d = deck([beam("inner", 1, 2, ALONG_Y), outer], BLADE, BLADE_ROT, supports=CLAMP,
             steps=[step])
    return solve(d, base_dir=str(files))


def linearize(spin=None):
    return {"name": "lin", "type": "linearize", "modes": 8, "method": "dense",
            **({} if spin is None else {"spin": [0.0, 0.0, spin]})}


@pytest.mark.parametrize("spin", [1.0, 2.0, 4.0])
def test_a_spinning_blade_with_a_superelement_has_the_full_blades_frequencies(files, spin):
    """The blade's outer half as a linear superelement, linearized about its steady spin
    (the chordwise bending softened by -Omega^2 m, axial and chordwise motions coupled by
    Coriolis): the 8 lowest frequencies are the full linear blade's within the reduction's
    error, measured at rest as 3.3e-4 at most (the 5th and 6th modes) and under spin as
    3.3e-4 too (the first chordwise one 8e-6 to 1.3e-5); the steady radial stretch of the tip
    (the centrifugal force: interior loads, which Craig-Bampton's modes carry) to 1e-4."""
    ref = blade(files, beam("outer", 2, 3, ALONG_Y), linearize(spin))
    red = blade(files, superelement("outer", "blade.h5"), linearize(spin))
    w_ref, w = ref[3][0].eigen.frequencies, red[3][0].eigen.frequencies
    assert np.abs(w / w_ref - 1).max() < 5e-4
    # the spin matters: chordwise 6.03 rad/s at rest, 4.40 at spin 4
    assert w_ref[0] < 6.03 * (1 - 2e-3 * spin**2)
    tips = [s[3][0].steady.u[2, 0] for s in (ref, red)]
    assert tips[0] > 0 and abs(tips[1] / tips[0] - 1) < 1e-4


def test_at_spin_zero_the_turning_frame_is_the_fixed_frame_bit_for_bit(files):
    """spin = [0, 0, 0] gives the fixed frame's eigenvalues and matrices exactly."""
    a = blade(files, superelement("outer", "blade.h5"), linearize(0.0))[3][0]
    b = blade(files, superelement("outer", "blade.h5"), linearize())[3][0]
    np.testing.assert_array_equal(a.eigen.values, b.eigen.values)
    for X, Y in ((a.model.M, b.model.M), (a.model.D, b.model.D), (a.model.K, b.model.K)):
        assert (X != Y).nnz == 0


def test_a_turning_frame_needs_the_component_mass(files):
    """A file reduced with the consistent mass keeps no /component/mass: a deck error at the
    step's key (before: every superelement under spin was refused)."""
    for step, key in ((linearize(1.0), "steps[0].spin"),
                      ({"name": "sw", "type": "stability_sweep", "parameter": "spin",
                        "values": [0.0, 1.0]}, "steps[0].parameter")):
        d = deck([beam("inner", 1, 2, ALONG_Y), superelement("outer", "blade_consistent.h5")],
                 BLADE, BLADE_ROT, supports=CLAMP, steps=[step])
        with pytest.raises(DeckError) as err:
            from_dict(d, base_dir=str(files))
        assert err.value.key == key and "mass = \"lumped\"" in err.value.message


# --- a shaft on the spin axis: gyroscopic splitting, a Campbell sweep ----------------------------
ALONG_X = [1.0, 0.0, 0.0]
SHAFT_ROT = [0.1, 0.1, 1.0]             # polar 10 x diametral: disc-like (rotating-frame
#                                         Coriolis (2 I_d - I_p) Omega does not vanish)
SPINS = [0.0, 1.5, 3.0, 4.5, 6.0]


def shaft_deck(elements, **tables):
    return deck(elements, {1: [0.0, 0.0, 0.0], 2: [0.0, 0.0, 2.0]}, SHAFT_ROT, Iz=0.08,
                supports=CLAMP, **tables)


def campbell(files, shaft):
    d = shaft_deck([shaft], steps=[{"name": "run_up", "type": "stability_sweep",
                                    "parameter": "spin", "values": SPINS, "modes": 4,
                                    "method": "dense", "frame": "fixed", "orders": [1],
                                    "tolerance": 1e-9}])
    step = solve(d, base_dir=str(files))[3][0]
    whirl = step.lines.take(step.modes, lambda m: m.whirl("fixed"))
    return step, step.tracked[1], whirl


@pytest.mark.parametrize("file, tol", [("shaft_all.h5", 1e-9), ("shaft.h5", 1.5e-3)])
def test_a_shaft_superelement_whirls_and_crosses_as_the_full_shaft(files, file, tol):
    """The whole shaft as one superelement (its rotary inertia carried by the basis) against
    12 linear beams, swept in spin in the fixed frame: the same lines with the same whirl
    (forward, backward, the torsion none), the bending pair split by the gyroscopic terms
    (7.41 rad/s at rest; 8.55 and 5.37 at spin 3), the frequencies and the critical speeds of
    order 1 (backward 4.23, torsion 4.96 rad/s; measured 5.3e-4 with 12 modes) within ``tol``
    (frequencies: of the bending
    frequency at rest). An exact reduction (all 66 fixed-interface modes) gives the full
    shaft's to round-off (measured 1.2e-10). With 12 modes the error is the reduction's: 3.7e-4
    at rest, but the gyroscopic coupling is carried less well by fixed-interface modes than
    the frequencies at rest (the backward line near zero, 2.16 rad/s at spin 6, is 7.3e-3
    off; 5.8e-3 with 30 modes): measured 9.8e-4 of 7.41 rad/s. Without the component's
    rotational spin terms the split at spin 6 is 7.82 / 6.54 instead of 8.67 / 2.16."""
    ref, W_ref, whirl_ref = campbell(files, beam("shaft", 1, 2, ALONG_X, 12))
    red, W, whirl = campbell(files, superelement("shaft", file))
    scale = W_ref[0][whirl_ref[1] == 1][0]          # the bending pair at rest
    # lines by whirl (a degenerate pair at rest may start its two lines in either order)
    worst = 0.0
    for i in range(len(SPINS)):
        for sense in (1, -1, 0):
            a = np.sort(W[i][(whirl[i] == sense) & np.isfinite(W[i])])
            b = np.sort(W_ref[i][(whirl_ref[i] == sense) & np.isfinite(W_ref[i])])
            assert len(a) == len(b)
            worst = max(worst, np.abs(a - b).max(initial=0.0) / scale)
    assert worst < tol, worst
    assert set(whirl_ref[1]) == {1, -1, 0}
    forward, backward = W_ref[2][whirl_ref[2] == 1][0], W_ref[2][whirl_ref[2] == -1][0]
    assert forward > 8.5 and backward < 5.4
    c_ref = sorted((c.speed, c.whirl) for c in ref.criticals)
    c = sorted((c.speed, c.whirl) for c in red.criticals)
    assert [s for _, s in c] == [s for _, s in c_ref] and len(c) >= 2
    assert np.allclose([v for v, _ in c], [v for v, _ in c_ref], rtol=tol, atol=0.0)


# --- a planar co-rotational blade: the root clamped on a hub of radius 0.5, spinning about z -----
def planar(elements, steps, supports=CLAMP):
    """A 2D blade of length 1 (EA = 1e5, EI = 1, rho A = 1): chordwise 3.48 rad/s at rest."""
    return {"model": {"dim": 2},
            "materials": [{"name": "m", "E": 1e5, "G": 4e4}],
            "sections": [{"name": "s", "A": 1.0, "Iz": 1e-5, "mass_per_length": 1.0,
                          "rotary_inertia_per_length": 1e-3}],
            "nodes": {"ids": [1, 2], "coordinates": [[0.5, 0.0], [1.5, 0.0]]},
            "elements": elements, "supports": list(supports), "steps": steps}


def rod(name="blade"):
    return {"name": name, "type": "beam", "material": "m", "section": "s",
            "formulation": "corotational", "connectivity": [[1, 2]], "divisions": N}


@pytest.fixture(scope="module")
def planar_files(tmp_path_factory):
    """``b4.h5`` (4 modes) and ``ball.h5`` (all 21: exact) of the free blade, interface its
    two ends (with the chord stiffening of two interface nodes)."""
    base = tmp_path_factory.mktemp("corot_spin")
    for name, modes in (("b4", 4), ("ball", 21)):
        solve(planar([rod()], [{"name": "r", "type": "cms_reduce", "interface": [1, 2],
                                "modes": modes, "file": f"{name}.h5"}], supports=()),
              str(base / f"{name}_reduce.h5"), base_dir=str(base))
    return base


def corot(file, stiffening=True):
    return {"name": "blade", "type": "superelement", "file": file,
            "formulation": "corotational", "geometric_stiffening": stiffening}


def planar_linearize(files, element, spin):
    step = {"name": "lin", "type": "linearize", "modes": 3, "method": "dense",
            **({} if spin is None else {"spin": [spin]})}
    return solve(planar([element], [step]), base_dir=str(files))[3][0]


@pytest.mark.parametrize("spin", [1.0, 2.0])
@pytest.mark.parametrize("file", ["ball.h5", "b4.h5"])
def test_a_spinning_corotational_superelement_blade_against_the_full_corotational_beams(
        planar_files, file, spin):
    """The blade as a co-rotational superelement linearized about its steady spin (the inertia
    of the recovered nodes in the turning frame, exact; the stiffening by the mean axial
    strain of its file) against 8 co-rotational beams (the full geometric stiffness of the
    centrifugal tension): the three lowest frequencies within 1.5 % (measured 0.34 % at spin 1,
    1.1 % at spin 2 on the first chordwise mode, the same with all 21 modes or with 4: the
    error is the mean-strain stiffening's, whose uniform tension is not the blade's, largest at
    the root and zero at the tip; the reduction's own is 2.5e-4 at rest). Without the
    stiffening the superelement misses most of it: the first two frequencies 3 to 6 times
    further off (measured 1.8 % and 6.0 % on the first). The steady stretch of the tip
    (the centrifugal force on the recovered nodes) to 1e-3 (4 modes), 1e-6 (all)."""
    full = planar_linearize(planar_files, rod(), spin)
    with_g = planar_linearize(planar_files, corot(file), spin)
    without = planar_linearize(planar_files, corot(file, False), spin)
    w_full = full.eigen.frequencies
    err = np.abs(with_g.eigen.frequencies / w_full - 1)
    err_without = np.abs(without.eigen.frequencies / w_full - 1)
    assert err.max() < 1.5e-2
    assert np.all(err_without[:2] > 3 * err[:2])
    assert w_full[0] > 3.48 * (1 + 0.03 * spin**2)         # the spin stiffens the blade
    tips = [s.steady.u[1, 0] for s in (full, with_g)]
    assert tips[0] > 0 and abs(tips[1] / tips[0] - 1) < (1e-6 if file == "ball.h5" else 1e-3)


def test_a_corotational_superelement_at_spin_zero_is_the_fixed_frame_bit_for_bit(planar_files):
    """spin = [0]: the fixed frame's eigenvalues and matrices exactly."""
    a = planar_linearize(planar_files, corot("b4.h5"), 0.0)
    b = planar_linearize(planar_files, corot("b4.h5"), None)
    np.testing.assert_array_equal(a.eigen.values, b.eigen.values)
    for X, Y in ((a.model.M, b.model.M), (a.model.D, b.model.D), (a.model.K, b.model.K)):
        assert (X != Y).nnz == 0


def test_a_campbell_sweep_of_the_corotational_blade_follows_the_full_beams(planar_files):
    """A spin sweep 0 to 2 rad/s (rotating frame) with the 4-mode superelement: each of the
    three lines within 1.5 % of the full beams' (the mean-strain stiffening's error, above),
    at rest within the reduction's 2.5e-4."""
    def sweep(element):
        step = {"name": "sw", "type": "stability_sweep", "parameter": "spin",
                "values": [0.0, 0.5, 1.0, 1.5, 2.0], "modes": 3, "method": "dense"}
        return solve(planar([element], [step]), base_dir=str(planar_files))[3][0].tracked[1]

    W_full, W = sweep(rod()), sweep(corot("b4.h5"))
    assert np.abs(W[0] / W_full[0] - 1).max() < 3e-4
    assert np.abs(W / W_full - 1).max() < 1.5e-2
