"""The ``modify`` deck step (issue 13, items 4 and 5): Hutton-Smith design modification.

The deck is the free-free beam of tests/test_cms_modify.py (notes/cms_constraints.md C.1 items
5-9): EI = rho A = 1 (EA = 1e4), two element groups "left" (x from 0 to 1) and "right" (1 to 2) of
20 elements each, joined at node 2, consistent mass; each half a component of 7 free-free modes
(3 rigid-body + 4 elastic), 14 coupled modes, modes 1-3 rigid, mode 4 the first elastic one.
References: the Python API (:mod:`fem.cms.modification`) on the two halves built as separate
models (tests/test_cms_modify.py), the notes' prototype numbers, and full modal steps of the
modified decks (the CMS model is a Rayleigh-Ritz model of the full one: its frequencies never
below, within the CMS error of notes A.2.2). Decks go through :func:`fem.io.deck.from_dict` +
:func:`fem.run.run` or ``fem run``.
"""

import copy
import re

import h5py
import numpy as np
import pytest
from test_cms import beam_halves
from test_cms_modify import cms

from fem.cli import main
from fem.cms.modification import sensitivities
from fem.errors import DeckError
from fem.io.deck import from_dict
from fem.run import run
from fem.system import System

COMPONENTS = [{"name": "left", "groups": ["left"]}, {"name": "right", "groups": "right"}]
TARGET = 6                  # the 3rd elastic mode (after the 3 rigid-body modes)


def deck(step=None, rho=1.0, E=1.0, E_left=1.0, modal=False):
    """The beam: the right half's density (mass and rotary inertia) times ``rho``, its modulus
    times ``E``, the left half's modulus times ``E_left``; a modify step and/or a modal step."""
    section = {"A": 1e4, "Iz": 1.0, "mass_per_length": 1.0, "rotary_inertia_per_length": 1e-9}
    steps = [] if step is None else [{"name": "mod", "type": "modify",
                                      "components": copy.deepcopy(COMPONENTS), "modes": 7,
                                      "mass": "consistent", **step}]
    if modal:
        steps.append({"name": "full", "type": "modal", "modes": 9, "mass": "consistent"})
    return {"model": {"dim": 2},
            "materials": [{"name": "m1", "E": E_left, "G": 0.5}, {"name": "m2", "E": E, "G": 0.5}],
            "sections": [{"name": "s1", **section},
                         {"name": "s2", **section, "mass_per_length": rho,
                          "rotary_inertia_per_length": 1e-9 * rho}],
            "nodes": {"coordinates": [[0.0, 0.0], [1.0, 0.0], [2.0, 0.0]]},
            "elements": [{"name": "left", "type": "beam", "material": "m1", "section": "s1",
                          "connectivity": [[1, 2]], "divisions": 20},
                         {"name": "right", "type": "beam", "material": "m2", "section": "s2",
                          "connectivity": [[2, 3]], "divisions": 20}],
            "steps": steps}


def run_deck(d, tmp_path, name="out.h5"):
    """Run a deck dict: (result, h5 path)."""
    path = tmp_path / name
    return run(from_dict(copy.deepcopy(d)), str(path)), path


@pytest.fixture(scope="module")
def halves():
    """The two halves as separate models, as tests/test_cms_modify.py builds them."""
    return beam_halves()


@pytest.fixture(scope="module")
def target(halves):
    """The 3rd elastic frequency lowered by 10 % (lambda* = 0.81 lambda, notes C.1 item 7)."""
    return 0.9 * float(np.sqrt(cms(halves).omega2[TARGET - 1]))


def full_omega(d, tmp_path, name) -> np.ndarray:
    """The frequencies (rad/s) of a modal step of deck ``d`` (its modify step dropped)."""
    d = copy.deepcopy(d)
    d["steps"] = [{"name": "full", "type": "modal", "modes": 9, "mass": "consistent"}]
    _, path = run_deck(d, tmp_path, name)
    with h5py.File(path) as f:
        return f["modes/full/frequencies"][()]


# --- sensitivities --------------------------------------------------------------------------------
def test_baseline_and_sensitivities_equal_the_api(halves, tmp_path):
    """Notes C.1 item 5 through a deck: the components, interface and coupling the step finds
    give the API's coupled model (two separately built halves): baseline frequencies equal to
    the round-off of matrices built two ways, a few eps lambda_max / lambda relative (bound 5
    eps lambda_max / lambda on omega, at least 1e-12: 5.7e-12 on the lowest elastic one;
    rigid-body ones below 1e-12 of the largest eigenvalue; measured 0 on this beam: the same
    matrices), the global free-free omega_1 = 5.593322 (22.3733 / 4, Blevins) to 1e-5, the
    sensitivity table (the default modes: the first 6 elastic ones, 4-9) equal to the API's to
    1e-10 (measured: 0 on the symmetric beam, 1.7e-12 on the skewed one, the eigenvectors' share
    of the round-off below), the density shares summing to -1 and the modulus shares to +1 over
    the components (1e-10). Skewed halves (right: rho x 2.9, E x 0.5) so that
    the shares are not the symmetric beam's halves (those are -1/2 and +1/2); there the deck's
    E = 0.5 elements round differently from the API's 0.5 K (measured: 1.5e-12 relative on the
    lowest elastic frequency, 2e-14 on the highest; 7.7e-13 when the reduced model's values were
    the dense solve's eigenvalues instead of its vectors' Rayleigh quotients)."""
    for rho, E in ((1.0, 1.0), (2.9, 0.5)):
        _, path = run_deck(deck({}, rho=rho, E=E), tmp_path, f"s{rho}.h5")
        dm = cms(halves, E=(1.0, E), rho=(1.0, rho))
        api = sensitivities(dm, [(0, "density"), (1, "density"), (0, "modulus"),
                                 (1, "modulus")], np.arange(3, 9))
        with h5py.File(path) as f:
            g = f["cms/mod"]
            w2 = g["baseline_eigenvalues"][()]
            assert len(w2) == 14 and g.attrs["n_rigid"] == 3 and g.attrs["n_modes"] == 14
            omega = g["baseline_frequencies"][()]
            np.testing.assert_array_equal(omega, np.sign(w2) * np.sqrt(np.abs(w2)))
            bound = np.maximum(1e-12, 5 * np.finfo(float).eps * w2.max() / w2[3:])
            assert np.all(np.abs(omega[3:] / np.sqrt(dm.omega2[3:]) - 1) < bound)
            assert np.abs(np.r_[w2[:3], dm.omega2[:3]]).max() < 1e-12 * w2.max()   # rigid
            assert g["sensitivity_modes"][()].tolist() == [4, 5, 6, 7, 8, 9]
            assert [x.decode() for x in g["components"][()]] == ["left", "right"]
            assert [x.decode() for x in g["sensitivity_kinds"][()]] == ["density", "modulus"]
            assert g["interface_node_ids"][()].tolist() == [2]
            assert g["component_modes"][()].tolist() == [7, 7]
            assert g["component_rigid"][()].tolist() == [3, 3]
            share, deriv = g["sensitivities"][()], g["derivatives"][()]     # (mode, comp, kind)
            assert share.shape == (6, 2, 2)
            assert np.abs(share[:, :, 0] - api.share[:, :2]).max() < 1e-10
            assert np.abs(share[:, :, 1] - api.share[:, 2:]).max() < 1e-10
            assert np.abs(deriv / np.moveaxis(api.derivative.reshape(6, 2, 2), 1, 2) - 1
                          ).max() < 1e-10
            assert np.abs(share[:, :, 0].sum(axis=1) + 1).max() < 1e-10
            assert np.abs(share[:, :, 1].sum(axis=1) - 1).max() < 1e-10
            assert g.attrs["analysis"] == "sensitivity" and "modified_frequencies" not in g
            if rho == 1.0:
                assert abs(omega[3] - 5.593322) < 1e-5
                assert np.abs(share - [-0.5, 0.5]).max() < 1e-10
            else:
                assert np.abs(share[:, 1, 0] + 0.5).max() > 0.2


def test_point_masses_count_once_and_a_supported_model_has_no_rigid_modes(tmp_path):
    """A point mass at the interface node belongs to one component (the first that holds it):
    with 0.3 at node 2 and 0.2 at node 3 (components cut off at 250 rad/s) the step's
    frequencies stay above a modal step's of the same deck and within the CMS error (1e-4;
    the joint's mass given to both halves moved them by 4 % to 40 %, both ways). Clamped at
    node 1 (the left component keeping its own 5 modes), the left component has no rigid-body
    modes, the coupled model none, and mode 1 is elastic (the default sensitivity modes 1-6);
    the first frequency is the cantilever's 3.5160 / L^2, and the Ritz bound holds to the
    round-off of the spectrum (omega_1^2 = 0.77 came out 9e-11 below the modal step's, 1.4e-15
    of the largest eigenvalue, 6.4e4)."""
    d = deck({"sensitivity_modes": [4, 5], "modes": None, "cutoff": 250.0})
    del d["steps"][0]["modes"]
    d["masses"] = [{"nodes": [2, 3], "mass": 0.3, "inertia": 0.01},
                   {"nodes": [3], "mass": 0.2}]
    _, path = run_deck(d, tmp_path)
    with h5py.File(path) as f:
        g = f["cms/mod"]
        omega = g["baseline_frequencies"][()][3:8]
        assert g["sensitivity_modes"][()].tolist() == [4, 5]
        assert g["component_modes"][()].sum() == g.attrs["n_modes"] >= 12
    fe = full_omega(d, tmp_path, "full.h5")[3:8]
    assert (omega >= fe * (1 - 1e-12)).all() and (omega / fe - 1 < 1e-4).all()
    d = deck({})
    d["steps"][0]["components"][0]["modes"] = 5           # the component's own, not the step's
    d["supports"] = [{"nodes": [1], "fixed": ["all"]}]
    _, path = run_deck(d, tmp_path, "clamped.h5")
    with h5py.File(path) as f:
        g = f["cms/mod"]
        assert g.attrs["n_rigid"] == 0 and g["component_rigid"][()].tolist() == [0, 3]
        assert g["component_modes"][()].tolist() == [5, 7]
        assert g["sensitivity_modes"][()].tolist() == [1, 2, 3, 4, 5, 6]
        w2 = g["baseline_eigenvalues"][()]
    fe = full_omega(d, tmp_path, "clamped_full.h5")[:4]
    assert (w2[:4] >= fe**2 - 1e-13 * w2.max()).all() and (np.sqrt(w2[:4]) / fe - 1 < 1e-4).all()
    assert abs(fe[0] - 3.5160 / 4) < 1e-3           # a cantilever of length 2: 3.5160 / L^2


# --- forward modification -------------------------------------------------------------------------
def test_forward_density_reproduces_the_notes_and_the_full_model(tmp_path):
    """Notes C.1 item 6: the right half's density x 2.9 (alpha = 1.9) gives omega = 4.111031,
    11.997964, 22.19594, 38.210017, 55.713745 (1e-7); a modal step of the deck whose right
    section really has 2.9 times the mass gives frequencies at most these (Ritz) and within the
    CMS error (< 1e-4 relative; notes: 4.111031, 11.997964, 22.195912, 38.209839, 55.711242).
    The modes written to /modes/<step>/ are modes of the modified model: on the modified deck's
    own K and M their Rayleigh quotients are the modified eigenvalues (1e-10) and their modal
    masses 1 (density changes keep T's span: exact)."""
    d = deck({"parameters": [{"component": "right", "kind": "density"}], "alpha": [1.9]})
    _, path = run_deck(d, tmp_path)
    with h5py.File(path) as f:
        g = f["cms/mod"]
        w2 = g["modified_eigenvalues"][()]
        omega = g["modified_frequencies"][()][3:8]
        assert g.attrs["analysis"] == "forward" and g.attrs["exact"] == 1
        assert g["alpha"][()].tolist() == [1.9] and g["scale"][()].tolist() == [2.9]
        assert [x.decode() for x in g["parameter_components"][()]] == ["right"]
        w0 = g["baseline_frequencies"][()]
        np.testing.assert_allclose(g["change_percent"][()][3:],
                                   100 * (np.sqrt(w2[3:]) / w0[3:] - 1), rtol=1e-12)
        assert np.isnan(g["change_percent"][()][:3]).all()
        m = f["modes/mod"]
        shapes, written = m["shapes"][()], m["eigenvalues"][()]
        assert m.attrs["modified"] == 1
    np.testing.assert_allclose(omega, [4.111031, 11.997964, 22.19594, 38.210017, 55.713745],
                               rtol=1e-7)
    fe = full_omega(deck(rho=2.9), tmp_path, "full.h5")[3:8]
    np.testing.assert_allclose(fe, [4.111031, 11.997964, 22.195912, 38.209839, 55.711242],
                               rtol=1e-7)
    assert (omega >= fe * (1 - 1e-12)).all() and (omega / fe - 1 < 1e-4).all()
    # the recovered modes on the modified model's own matrices
    assert shapes.shape == (10, 41, 3) and np.array_equal(written, w2[:10])
    sysm = System(from_dict(deck(rho=2.9, modal=True)).model)
    ref = sysm.reference_state()
    K = sysm.assembler.to_scipy(sysm.tangent(ref)).tocsr()
    M = sysm.assembler.to_scipy(sysm.mass(ref, lumped=False)).tocsr()
    index = sysm.dofmap.index
    free = (index >= 0) & (index < sysm.n_free)
    U = np.zeros((sysm.n_free, 10))
    U[index[free]] = shapes[:, free].T
    mu = np.einsum("ik,ik->k", U, M @ U)
    ku = np.einsum("ik,ik->k", U, K @ U)
    assert np.abs(mu - 1).max() < 1e-10
    assert np.abs(ku[3:] / written[3:] - 1).max() < 1e-10


def test_forward_modulus_change_is_flagged_approximate(tmp_path, capsys):
    """Notes C.1 item 6: E and rho of the right half / 2.9 (steel to aluminium): the linear
    equivalent analysis (T fixed) gives the proto's 5.339088, 15.958617, 29.66373, 50.949203,
    73.928587; a full modal step of that deck is below it (Ritz) by less than 1 % (proto CMS
    re-analysis: 0.79 % on omega_1); the summary and the results say it is an approximation."""
    from toml_writer import dumps

    a = 1 / 2.9 - 1
    d = deck({"parameters": [{"component": "right", "kind": "density"},
                             {"component": "right", "kind": "modulus"}], "alpha": [a, a]})
    (tmp_path / "deck.toml").write_text(dumps(d))
    assert main(["run", str(tmp_path / "deck.toml"), "-o", str(tmp_path / "out.h5")]) == 0
    out = capsys.readouterr().out
    assert "modulus changes are approximate" in out
    with h5py.File(tmp_path / "out.h5") as f:
        g = f["cms/mod"]
        omega = g["modified_frequencies"][()][3:8]
        assert g.attrs["exact"] == 0 and "approximate" in g.attrs["approximation"]
    np.testing.assert_allclose(omega, [5.339088, 15.958617, 29.66373, 50.949203, 73.928587],
                               rtol=1e-7)
    fe = full_omega(deck(rho=1 / 2.9, E=1 / 2.9), tmp_path, "full.h5")[3:8]
    assert (omega > fe).all() and (omega / fe - 1 < 0.01).all()
    assert omega[0] / fe[0] - 1 > 0.005                     # not within the CMS error


def test_craig_bampton_modulus_modification_is_the_re_analysis(tmp_path, capsys):
    """``method = "craig_bampton"``: the right half's modulus / 2.9 by the linear equivalent
    analysis (T fixed) equals the Craig-Bampton re-analysis of the modified deck (its baseline) to
    1e-10 (fem.cms.modification: exact for the modulus too), and the modulus sensitivity equals
    the central difference of two re-analyses (alpha = +-1e-4) to 1e-6; the results and the
    summary say it is exact. The free-interface step's modification of the same change differs
    from its own re-analysis (an approximation there: test_forward_modulus_change_is_flagged_
    approximate)."""
    from toml_writer import dumps

    a, h = 1 / 2.9 - 1, 1e-4
    cb = {"method": "craig_bampton", "modes": 5, "sensitivity_modes": [4, 5, 6]}
    d = deck({**cb, "parameters": [{"component": "right", "kind": "modulus"}], "alpha": [a]})
    (tmp_path / "deck.toml").write_text(dumps(d))
    assert main(["run", str(tmp_path / "deck.toml"), "-o", str(tmp_path / "out.h5")]) == 0
    assert "exact for density and modulus changes" in capsys.readouterr().out
    with h5py.File(tmp_path / "out.h5") as f:
        g = f["cms/mod"]
        modified, exact = g["modified_eigenvalues"][()], g.attrs["exact"]
        derivative = g["derivatives"][()][:, 1, 1]          # (mode, right, modulus)

    def baseline(E, name):
        _, path = run_deck(deck(cb, E=E), tmp_path, name)
        with h5py.File(path) as f:
            return f["cms/mod/baseline_eigenvalues"][()]

    again = baseline(1 / 2.9, "again.h5")
    assert exact == 1 and len(again) == len(modified)
    assert np.abs(modified[3:] / again[3:] - 1).max() < 1e-10
    fd = (baseline(1 + h, "up.h5") - baseline(1 - h, "down.h5"))[3:6] / (2 * h)
    assert np.abs(derivative / fd - 1).max() < 1e-6
    # the free interface's modification of the same change is not its re-analysis
    fi = {"parameters": [{"component": "right", "kind": "modulus"}], "alpha": [a]}
    _, path = run_deck(deck(fi), tmp_path, "fi.h5")
    _, path_again = run_deck(deck({}, E=1 / 2.9), tmp_path, "fi_again.h5")
    with h5py.File(path) as f, h5py.File(path_again) as g:
        fi_mod = f["cms/mod/modified_eigenvalues"][()][3:8]
        fi_again = g["cms/mod/baseline_eigenvalues"][()][3:8]
    assert np.abs(fi_mod / fi_again - 1).max() > 1e-5


# --- inverse modification -------------------------------------------------------------------------
def summary_of(out: str, step: str = "mod") -> list[str]:
    """The summary lines of step ``step`` in ``fem run``'s output."""
    block = out.split(f"step {step} (")[1].split("\nresults:")[0].split("\nstep ")[0]
    return [line.strip() for line in block.splitlines()[1:]]


def test_inverse_one_parameter_reaches_the_target(target, tmp_path, capsys):
    """Notes C.1 item 7: the 3rd elastic frequency (mode 6) lowered by 10 % through the right
    half's density: alpha = 0.477674 (1e-6); the root alpha = -0.9304 of eq. (14) is reported and
    rejected (it puts the target at mode 5). A modal step of the deck with the right density
    times 1 + alpha hits the target within the CMS error, from below (Ritz: 0 <= 1 -
    omega / target < 1e-5; the 3rd elastic mode's CMS error is 1.1e-6, notes A.2.2). ``fem
    run``'s summary says what the HDF5 holds: alpha, the frequency reached, the roots."""
    from toml_writer import dumps

    d = deck({"parameters": [{"component": "right", "kind": "density"}],
              "targets": [{"mode": TARGET, "frequency": target}]})
    (tmp_path / "deck.toml").write_text(dumps(d))
    assert main(["run", str(tmp_path / "deck.toml"), "-o", str(tmp_path / "out.h5")]) == 0
    lines = summary_of(capsys.readouterr().out)
    with h5py.File(tmp_path / "out.h5") as f:
        g = f["cms/mod"]
        alpha = g["alpha"][()]
        reached = g["achieved_frequencies"][()]
        assert g.attrs["analysis"] == "inverse" and g.attrs["residual"] <= 1e-12
        assert g["target_modes"][()].tolist() == [TARGET]
        assert g["tracked_modes"][()].tolist() == [TARGET]
        assert g["target_frequencies"][()].tolist() == [target]
        candidates, where = g["candidates"][()], g["candidate_modes"][()]
        w = g["modified_frequencies"][()]
        iterations = g.attrs["iterations"]
    assert abs(alpha[0] - 0.477674) < 1e-6
    assert abs(reached[0] / target - 1) < 1e-12 and reached[0] == w[TARGET - 1]
    rejected = np.flatnonzero(np.abs(candidates + 0.9304) < 1e-4)
    assert len(rejected) == 1 and where[rejected[0]] == TARGET - 1
    assert where[candidates == alpha[0]].tolist() == [TARGET]
    # the summary: the same numbers
    line = next(x for x in lines if x.startswith("alpha right density"))
    assert float(line.split(":")[1].split()[0]) == pytest.approx(alpha[0], rel=1e-6)
    line = next(x for x in lines if x.startswith("target: mode 6"))
    assert float(re.search(r"reached (\S+) rad/s at mode 6", line)[1]) == \
        pytest.approx(reached[0], rel=1e-10)
    assert f"Newton: {iterations} iterations" in "\n".join(lines)
    roots = next(x for x in lines if x.startswith("physical roots"))
    assert "alpha = -0.9304" in roots and "target at mode 5" in roots
    assert f"alpha = {alpha[0]:.6g} (target at mode 6)" in roots
    line = next(x for x in lines if x.startswith("mode 6:"))
    assert line.startswith(f"mode 6: {np.sqrt(0.81) ** -1 * target:.6g} -> {target:.6g} (-10 %)")
    # the full model with that density
    fe = full_omega(deck(rho=1 + alpha[0]), tmp_path, "full.h5")[TARGET - 1]
    assert 0 <= 1 - fe / target < 1e-5


def test_inverse_two_parameters_minimum_norm_newton(target, tmp_path):
    """Notes C.1 item 8: the same target through the right half's density and the left half's
    modulus: minimum-norm Newton converges in < 10 iterations to alpha = (0.2024, -0.2085)
    (1e-4), the target holds to 1e-12 in the CMS model, ||alpha|| below the single parameter's
    0.4777; a modulus is among the parameters, so the results say the answer is approximate."""
    d = deck({"parameters": [{"component": "right", "kind": "density"},
                             {"component": "left", "kind": "modulus"}],
              "targets": [{"mode": TARGET, "frequency": target}]})
    result, path = run_deck(d, tmp_path)
    with h5py.File(path) as f:
        g = f["cms/mod"]
        alpha = g["alpha"][()]
        assert g.attrs["iterations"] < 10 and g.attrs["residual"] <= 1e-12
        assert abs(g["achieved_frequencies"][()][0] / target - 1) < 1e-12
        assert g.attrs["exact"] == 0 and "candidates" not in g
        assert [x.decode() for x in g["parameter_kinds"][()]] == ["density", "modulus"]
    np.testing.assert_allclose(alpha, [0.2024, -0.2085], atol=1e-4)
    assert np.linalg.norm(alpha) < 0.4777
    lines = result.steps[0].lines
    assert any(x.startswith("alpha left modulus: -0.208") for x in lines)
    assert "modulus changes are approximate" in lines[-1]


# --- bad input ------------------------------------------------------------------------------------
BAD = [
    ({"components": [{"name": "left", "groups": ["left"]},
                     {"name": "right", "groups": ["right", "left"]}]},
     "steps[0].components[1].groups", "'left' is named twice"),
    ({"components": [{"name": "left", "groups": ["left"]}]},
     "steps[0].components", "'right' is in no component"),
    ({"components": [{"name": "all", "groups": ["left", "right"]}]},
     "steps[0].components[0]", "shares no node"),
    ({"components": [{"name": "left", "groups": ["lfet"]}, COMPONENTS[1]]},
     "steps[0].components[0].groups", "unknown element group 'lfet'"),
    ({"components": [{"name": "left", "groups": ["left"], "mode": 5}, COMPONENTS[1]]},
     "steps[0].components[0].mode", "modes"),
    ({"components": [COMPONENTS[0], {"name": "left", "groups": ["right"]}]},
     "steps[0].components[1].name", "duplicate component name 'left'"),
    ({"modes": None}, "steps[0].modes", "got neither"),
    ({"cutoff": 100.0}, "steps[0].cutoff", "got both"),
    ({"parameters": [{"component": "middle", "kind": "density"}], "alpha": [0.1]},
     "steps[0].parameters[0].component", "unknown component 'middle'"),
    ({"parameters": [{"component": "right", "kind": "thickness"}], "alpha": [0.1]},
     "steps[0].parameters[0].kind", "density, modulus"),
    ({"parameters": [{"component": "right", "kind": "density"}] * 2, "alpha": [0.1, 0.1]},
     "steps[0].parameters[1]", "already parameter 0"),
    ({"parameters": [{"component": "right", "kind": "density"}], "alpha": [0.1],
      "targets": [{"mode": 6, "frequency": 20.0}]}, "steps[0].alpha", "got both"),
    ({"parameters": [{"component": "right", "kind": "density"}]},
     "steps[0].parameters", "got neither"),
    ({"alpha": [0.5]}, "steps[0].alpha", "expected parameters"),
    ({"parameters": [{"component": "right", "kind": "density"}], "alpha": [-1.0]},
     "steps[0].alpha", "each > -1"),
    ({"parameters": [{"component": "right", "kind": "density"}], "alpha": [0.1, 0.2]},
     "steps[0].alpha", "expected 1 fractional changes"),
    ({"parameters": [{"component": "right", "kind": "density"}],
      "targets": [{"mode": 6, "frequency": -20.0}]},
     "steps[0].targets[0].frequency", "positive"),
    ({"parameters": [{"component": "right", "kind": "density"}],
      "targets": [{"mode": 6, "frequency": 20.0}, {"mode": 6, "frequency": 25.0}]},
     "steps[0].targets[1].mode", "mode 6 has a target already"),
    ({"sensitivity_modes": [4, 0]}, "steps[0].sensitivity_modes", "integers from 1"),
    ({"parameters": [{"component": "right", "kind": "density"}],
      "target": {"mode": 6, "frequency": 20.0}}, "steps[0].target", "did you mean targets"),
    ({"loads": ["P"]}, "steps[0].loads", "applies no loads"),
]


@pytest.mark.parametrize("change, key, words", BAD, ids=[b[1] + ":" + b[2] for b in BAD])
def test_bad_modify_keys_are_deck_errors(change, key, words):
    d = deck({k: v for k, v in change.items() if v is not None})
    d["loads"] = [{"name": "P", "nodes": [3], "force": [0.0, 1.0]}]
    if change.get("modes", 0) is None:
        del d["steps"][0]["modes"]
    with pytest.raises(DeckError) as err:
        from_dict(d)
    assert err.value.key == key and words in err.value.message


@pytest.mark.parametrize("change, key, words", [
    ({"parameters": [{"component": "right", "kind": "density"}],
      "targets": [{"mode": 2, "frequency": 1.0}]}, "steps[0].targets[0].mode",
     "mode 2 is a rigid-body mode"),
    ({"sensitivity_modes": [4, 15]}, "steps[0].sensitivity_modes",
     "the coupled model has 14 modes"),
    ({"sensitivity_modes": [3]}, "steps[0].sensitivity_modes", "rigid-body mode"),
])
def test_mode_numbers_checked_against_the_coupled_model(tmp_path, change, key, words):
    with pytest.raises(DeckError) as err:
        run_deck(deck(change), tmp_path)
    assert err.value.key == key and words in err.value.message


@pytest.mark.parametrize("change, code, words", [
    # a target equal to a baseline frequency (mode 7's, asked of mode 6): D singular
    ({"targets": [{"mode": 6, "frequency": "baseline 7"}]}, 2,
     "step 'mod': inverse modification: the target omega\\^2 = .* equals the baseline "
     "eigenvalue of mode 7"),
    # Newton stopped after 2 iterations (it needs 4)
    ({"targets": [{"mode": 6, "frequency": "target"}], "max_iterations": 2,
      "parameters": [{"component": "right", "kind": "density"},
                     {"component": "left", "kind": "modulus"}]}, 3,
     r"step 'mod': inverse modification: Newton did not converge in 2 iterations"),
])
def test_a_failed_inverse_is_one_message_without_traceback(halves, target, tmp_path, capsys,
                                                           change, code, words):
    from toml_writer import dumps

    change = copy.deepcopy(change)
    t = change["targets"][0]
    t["frequency"] = target if t["frequency"] == "target" else \
        float(np.sqrt(cms(halves).omega2[6]))
    d = deck({"parameters": [{"component": "right", "kind": "density"}], **change})
    (tmp_path / "deck.toml").write_text(dumps(d))
    assert main(["run", str(tmp_path / "deck.toml"), "-o", str(tmp_path / "out.h5")]) == code
    err = capsys.readouterr().err
    assert re.search(words, err), err
    assert "Traceback" not in err and "internal error" not in err


def test_bad_input_through_fem_run_names_the_key(tmp_path, capsys):
    from toml_writer import dumps

    d = deck({"parameters": [{"component": "right", "kind": "density"}],
              "targets": [{"mode": 1, "frequency": 3.0}]})
    (tmp_path / "deck.toml").write_text(dumps(d))
    assert main(["run", str(tmp_path / "deck.toml"), "-o", str(tmp_path / "out.h5")]) == 2
    err = capsys.readouterr().err
    assert "steps[0].targets[0].mode" in err and "rigid-body mode" in err
    assert "Traceback" not in err and "internal error" not in err
