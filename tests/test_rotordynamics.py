"""Rotordynamics of spin sweeps: whirl, the fixed frame, tracked lines, critical speeds.

Oracles: the closed form of an overhung disc on a massless Euler-Bernoulli cantilever (the 4-DOF
tip model of cases/jeffcott_rotor: whirl frequencies and the crossings of the engine orders,
computed here from the formula); the linearization about the spinning state in the inertial
frame (a second path through fem.analysis.linear_model, with a massive shaft where no closed form
exists); the Euler column's frequency and growth rate past buckling (notes T8); and invariants of
the whirl decomposition and the MAC.
"""

import tomllib
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from helpers import deck_error, solve

from fem.analysis import rotordynamics as rd
from fem.io import plots

CASE = Path(__file__).resolve().parents[1] / "cases" / "jeffcott_rotor"
PI2 = np.pi**2


def jeffcott(**step) -> dict:
    """The case's deck with the sweep's keys replaced."""
    with open(CASE / "deck.toml", "rb") as fh:
        d = tomllib.load(fh)
    d["steps"][0].update(step)
    return d


def tip_model(d: dict):
    """``EI, L, m, I_d, I_p, GJ`` and the tip stiffness of the deck's shaft and disc."""
    mat, sec = d["materials"][0], d["sections"][0]
    EI, GJ = mat["E"] * sec["Iy"], mat["G"] * sec["J"]
    L = d["nodes"]["coordinates"][1][2]
    body = d["bodies"][0]
    Id, _, Ip = body["inertia"]
    K = np.array([[12 * EI / L**3, -6 * EI / L**2], [-6 * EI / L**2, 4 * EI / L]])
    return K, body["mass"], Id, Ip, GJ / (L * Ip)


def whirl_frequencies(d: dict, spin: float) -> tuple[np.ndarray, np.ndarray]:
    """Forward and backward whirl frequencies (increasing) of the 4-DOF model at ``spin``:
    the signed roots w of (k11 - m w^2)(k22 - I_d w^2 + I_p Omega w) - k12^2 = 0."""
    K, m, Id, Ip, _ = tip_model(d)
    poly = (np.polynomial.Polynomial([K[0, 0], 0.0, -m])
            * np.polynomial.Polynomial([K[1, 1], Ip * spin, -Id]) - K[0, 1] ** 2)
    w = poly.roots().real
    return np.sort(w[w > 0]), np.sort(-w[w < 0])


def critical_speeds(d: dict, order: float, sense: int) -> np.ndarray:
    """Spins where the whirl of ``sense`` (+1 forward) crosses ``order * spin``: w = s k Omega
    in the determinant, a polynomial in x = Omega^2 (quadratic; linear if s k I_p = I_d k^2)."""
    K, m, Id, Ip, _ = tip_model(d)
    a, c = -m * order**2, sense * order * Ip - Id * order**2
    x = (np.polynomial.Polynomial([K[0, 0], a]) * np.polynomial.Polynomial([K[1, 1], c])
         - K[0, 1] ** 2).roots()
    x = x[(np.abs(x.imag) <= 1e-12 * np.abs(x)) & (x.real > 0)].real
    return np.sort(np.sqrt(x))


# --- the acceptance test: the Jeffcott rotor against its closed form --------------------------

@pytest.fixture(scope="module")
def fixed_sweep():
    """The case swept to 800 rad/s in steps of 40, in the fixed frame, refined crossings."""
    d = jeffcott(values=[40.0 * i for i in range(21)])
    return d, solve(d)[3][0]


def test_forward_and_backward_branches_are_labelled_in_the_fixed_frame(fixed_sweep):
    """At every spin but 0 the lines labelled forward are the positive roots of the 4-DOF
    determinant, those labelled backward the negative ones, the torsional line sqrt(GJ/(L I_p))
    has no whirl (1e-7: the beams' cubics give the massless shaft's tip stiffness exactly);
    at zero spin nothing whirls."""
    d, step = fixed_sweep
    _, W = step.tracked
    whirl = step.lines.take(step.modes, lambda m: m.whirl("fixed"))
    torsion = np.sqrt(tip_model(d)[4])
    assert np.all(whirl[0] == 0)
    for i, p in enumerate(step.points[1:], start=1):
        forward, backward = whirl_frequencies(d, p.value)
        assert np.sort(W[i, whirl[i] == 1]) == pytest.approx(forward, rel=1e-7), p.value
        assert np.sort(W[i, whirl[i] == -1]) == pytest.approx(backward, rel=1e-7), p.value
        assert W[i, whirl[i] == 0] == pytest.approx([torsion], rel=1e-9)
    # each line keeps its whirl from the first spin on (no line jumps between branches)
    assert np.all(whirl[1:] == whirl[1])


def test_critical_speeds_match_the_closed_form(fixed_sweep, tmp_path):
    """Every crossing of 1x and 2x with a whirl line in the range is found, with its whirl, at
    the closed-form speed (refined: 1e-6, the acceptance asks 0.5%); the torsional mode crosses
    1x and 2x at sqrt(GJ/(L I_p)) / k with no whirl; nothing else is listed."""
    d, step = fixed_sweep
    top = step.points[-1].value
    expected = []
    for k in (1.0, 2.0):
        for sense in (1, -1):
            expected += [(w, k, sense) for w in critical_speeds(d, k, sense) if w < top]
        expected.append((np.sqrt(tip_model(d)[4]) / k, k, 0))
    expected.sort()
    found = sorted((c.speed, c.order, c.whirl) for c in step.criticals)
    assert [(k, s) for _, k, s in found] == [(k, s) for _, k, s in expected]
    assert [w for w, _, _ in found] == pytest.approx([w for w, _, _ in expected], rel=1e-6)
    assert all(c.refined for c in step.criticals)
    assert len(expected) == 8          # per order: 1 forward (2x: 1641 is beyond), 2 backward,
    #                                    the torsion


def test_interpolated_critical_speeds_are_within_the_acceptance():
    """Without refine, linear interpolation between values 40 rad/s apart: within 0.5%."""
    d = jeffcott(values=[40.0 * i for i in range(21)], refine=False, orders=[1])
    step = solve(d)[3][0]
    for c in step.criticals:
        if c.whirl:
            exact = critical_speeds(d, 1.0, c.whirl)
            assert np.min(np.abs(exact - c.speed) / exact) < 5e-3, c
        assert not c.refined
    assert sorted(c.whirl for c in step.criticals) == [-1, -1, 0, 1]


def test_the_case_reference_is_the_closed_form():
    """reference.toml's numbers are the formula's (so the case cannot drift from it)."""
    d = jeffcott()
    with open(CASE / "reference.toml", "rb") as fh:
        quantities = tomllib.load(fh)["quantities"]
    sense = {"forward": 1, "backward": -1}
    for q in quantities:
        if q["whirl"] == "none":
            exact = np.sqrt(tip_model(d)[4]) / q["order"]
        else:
            exact = critical_speeds(d, q["order"], sense[q["whirl"]])[q.get("number", 1) - 1]
        assert q["value"] == pytest.approx(exact, rel=1e-9), q["name"]


def test_results_plots_and_summary_say_the_frame(tmp_path):
    """/sweep/<s>/ has the whirl and the crossings (rad/s, whatever plot_units), attributes
    frame and orders; the summary lists the critical speeds in rad/s and rpm; two PNGs."""
    import h5py

    from fem.io.deck import from_dict
    from fem.run import run

    d = jeffcott(values=[0.0, 100.0, 200.0, 300.0], orders=[1], refine=False)
    result = run(from_dict(d), str(tmp_path / "r.h5"))
    with h5py.File(result.h5, "r") as f:
        g = f["sweep/run_up"]
        assert g.attrs["frame"] == "fixed" and list(g.attrs["orders"]) == [1.0]
        assert g["whirl"].shape == g["frequencies"].shape
        speeds = g["critical_speeds"][()]
        assert set(g["critical_whirl"][()]) == {-1, 0, 1}     # 0: the torsion at 276
        assert speeds == pytest.approx(g["critical_frequencies"][()])          # order 1
    lines = result.steps[0].lines
    assert any(line.startswith("fixed frame; engine orders 1x") for line in lines)
    assert any("rpm): order 1, line" in line and "forward whirl" in line for line in lines)
    for png in result.plots:
        with open(png, "rb") as fh:
            assert fh.read(8) == b"\x89PNG\r\n\x1a\n"


# --- the conversion against a second path: the inertial-frame linearization --------------------

def test_fixed_frame_equals_the_linearization_in_the_inertial_frame():
    """A massive shaft (no closed form): the sweep's fixed-frame frequencies and whirl equal
    the eigenvalues of the model linearized in the inertial frame about the rotor spinning at
    Omega (every node's angular velocity Omega e_z, no turning frame; fem.analysis.linear_model's
    gyroscopic terms), and the whirl the decomposition finds in those eigenvectors (1e-7)."""
    from fem.analysis.linear_model import dense_eigenvalues, linear_model

    d = jeffcott(values=[0.0, 150.0, 400.0], modes=8)
    d["materials"][0]["density"] = 7800.0
    _, sysm, state, steps = solve(d)
    step = steps[0]
    _, W = step.tracked
    whirl = step.lines.take(step.modes, lambda m: m.whirl("fixed"))
    axis = step._axis()
    for i, p in enumerate(step.points[1:], start=1):
        s = state.copy()
        s.v[:, 3:6] = [0.0, 0.0, p.value]
        lm, r = linear_model(sysm, s, step.loads, spin=None)
        assert np.abs(r).max() == 0.0              # a steady motion: no residual
        e = dense_eigenvalues(lm, 8, 0.0)
        F, B, T = rd.whirl_parts(e.vectors, lm.M, axis)
        sense = np.where(F + B > rd.NO_WHIRL * T, np.where(F >= B, 1, -1), 0)
        order = np.argsort(W[i])
        assert W[i, order] == pytest.approx(e.frequencies, rel=1e-7)
        assert list(whirl[i, order]) == list(sense * np.sign(e.values.imag))


# --- the rotating frame: a line through its fold ------------------------------------------------

def test_a_forward_whirl_folding_through_zero_stays_one_line():
    """In the rotating frame the forward whirl w_F(Omega) is seen at |w_F - Omega|, zero at the
    forward critical speed: one tracked line follows it through the fold (1e-7), its whirl
    relative to the rotating frame turning from forward to backward there. (Beyond the fold
    the solver returns the conjugate vector, uncorrelated with the line's: the MAC takes
    the conjugate as the same motion.)"""
    d = jeffcott(values=[40.0 * i for i in range(11)], orders=[1])
    del d["steps"][0]["frame"]                    # the default: rotating
    step = solve(d)[3][0]
    assert step.frame == "rotating"
    _, W = step.tracked
    spins = np.array([p.value for p in step.points])
    forward = np.array([whirl_frequencies(d, w)[0][0] for w in spins])
    seen = np.abs(forward - spins)
    column = [j for j in range(W.shape[1]) if np.allclose(W[:, j], seen, rtol=1e-7)]
    assert len(column) == 1, W
    whirl = step.lines.take(step.modes, lambda m: m.whirl("rotating"))[:, column[0]]
    assert list(whirl[1:]) == list(np.where(forward > spins, 1, -1)[1:])


# --- divergence: a load sweep past buckling -------------------------------------------------------

def test_a_diverged_mode_keeps_its_line():
    """A pinned column (tests/test_sweep.py) past its Euler load: the first line goes on with
    frequency 0 and growth rate a = omega_1(0) sqrt(P / P_cr - 1) (T8: omega_1^2 falls linearly
    to -a^2), the second follows omega_2(0) sqrt(1 - P / (4 P_cr)) and the third
    omega_3(0) sqrt(1 - P / (9 P_cr)) (the real pair +-a counts as one pair among the modes
    nearest the shift, so the third stays); no line takes the diverged pair's -a, or jumps to
    another mode ('plunging' to a real eigenvalue)."""
    from test_sweep import column

    ratios = np.array([0.0, 0.5, 0.9, 1.1, 1.3, 1.6, 2.0])
    step = solve(column(ratios * PI2, modes=3, refine=False))[3][0]
    P, W = step.tracked
    assert P.shape[1] == 3
    w1, w2 = W[0, 0], W[0, 1]
    after = ratios > 1
    assert W[after, 0] == pytest.approx(0.0, abs=1e-9)
    assert P[after, 0].real == pytest.approx(w1 * np.sqrt(ratios[after] - 1), rel=2e-4)
    assert W[:, 1] == pytest.approx(w2 * np.sqrt(1 - ratios / 4), rel=2e-4)
    assert W[:, 2] == pytest.approx(W[0, 2] * np.sqrt(1 - ratios / 9), rel=2e-4)


# --- pieces -------------------------------------------------------------------------------------

def _axis_model(e):
    """Two nodes, all six DOFs unknowns 0..11; identity mass."""
    index = np.arange(12).reshape(2, 2, 3)
    return rd.Axis(np.asarray(e, float) / np.linalg.norm(e), index), sp.identity(12)


def test_whirl_parts_of_circular_planar_and_axial_motions():
    """About a tilted axis e: u = a - i b (a, b, e right-handed) whirls forward only, its
    conjugate backward only, a motion along a alone equally both ways (ratio 1), one along e
    not at all; F + B + axial = x^H M x."""
    e = np.array([1.0, 2.0, 2.0]) / 3.0
    a = np.cross(e, [0.0, 0.0, 1.0])
    a /= np.linalg.norm(a)
    b = np.cross(e, a)
    axis, M = _axis_model(e)
    X = np.zeros((12, 4), dtype=complex)
    X[0:3, 0] = a - 1j * b                       # node 1 translation, forward
    X[9:12, 0] = 0.3 * (a - 1j * b)              # node 2 rotation, forward too
    X[0:3, 1] = a + 1j * b
    X[3:6, 2] = a
    X[6:9, 3] = e * (1 + 2j)
    F, B, T = rd.whirl_parts(X, M, axis)
    assert F[:3] + B[:3] == pytest.approx(T[:3], rel=1e-14)
    assert B[0] == pytest.approx(0.0, abs=1e-15) and F[1] == pytest.approx(0.0, abs=1e-15)
    assert F[2] == pytest.approx(B[2], rel=1e-14)
    assert F[3] + B[3] == pytest.approx(0.0, abs=1e-15) and T[3] > 0
    m = rd.Modes.of(10.0, np.array([5j, 5j, 5j, 7j]), X, M, axis, spin=10.0)
    assert list(m.whirl("rotating")) == [1, -1, 1, 0]
    assert list(m.frequencies("fixed")) == pytest.approx([15.0, 5.0, 15.0, 7.0])
    assert list(m.whirl("fixed")) == [1, 1, 1, 0]           # -5 + 10 > 0: forward
    assert m.ratio[:3] == pytest.approx([0.0, 0.0, 1.0], abs=1e-7)
    assert np.isnan(m.ratio[3])


def test_distinct_drops_the_negative_root_of_real_pairs_only():
    p = np.array([-3.12, 3.12 * (1 + 2e-6), 5j, -2.0, -7.0])
    assert list(rd.distinct(p)) == [False, True, True, True, True]
    assert list(rd.distinct(np.array([-1.0, -2.0, 1j]))) == [True, True, True]


def test_mac_takes_the_conjugate_as_the_same_motion():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(6, 2)) + 1j * rng.normal(size=(6, 2))
    M = sp.diags(rng.uniform(1, 2, 6))
    C = rd.mac(X, np.column_stack([X[:, 0].conj() * (2 - 1j), X[:, 1]]), M)
    assert np.diag(C) == pytest.approx([1.0, 1.0], rel=1e-12)
    assert np.all(C <= 1 + 1e-12)


def test_round_off_is_drawn_as_zero():
    """The stability plot's rule: the issue's 3e-14 and 4.6e-12 on stable models (|p| ~ 1e2)
    are zero, not growth; without bounds the band is 1e-9 max |p|; with bounds, the bound."""
    shown, zero, band = plots.round_off(np.array([3e-14, 4.6e-12, -2.0, 1e-3]),
                                        scale=np.full(4, 200.0))
    assert list(zero) == [True, True, False, False]
    assert list(shown) == [0.0, 0.0, -2.0, 1e-3]
    shown, zero, _ = plots.round_off(np.array([5e-6, 2e-5]), bound=np.array([1e-5, 1e-5]))
    assert list(zero) == [True, False]


def test_the_fixed_frame_of_a_rotor_not_symmetric_about_its_axis_is_warned_about():
    """Kane's beam (2D, radial to the spin axis: tests/test_sweep.py) vibrates in a plane of
    the turning frame (weaker/stronger sense ~1): frame = "fixed" says its conversion holds only
    for the dominant harmonic; the rotating frame (the default) says nothing."""
    from test_sweep import spinning

    d = spinning([0.0, 2.0, 6.0])
    quiet = solve(d)[3][0]
    d["steps"][0]["frame"] = "fixed"
    step = solve(d)[3][0]
    ratio = step.lines.take(step.modes, lambda m: m.ratio)
    assert np.all(ratio[1:] > 0.99)
    assert any("symmetric about the axis" in w for w in step.warnings)
    assert not quiet.warnings


@pytest.mark.parametrize("change, key, words", [
    ({"frame": "inertial"}, "steps[0].frame", "rotating, fixed"),
    ({"orders": [1.0, -2.0]}, "steps[0].orders", "positive engine orders"),
    ({"plot_units": "rps"}, "steps[0].plot_units", "rad/s, Hz, rpm"),
], ids=["frame", "orders", "units"])
def test_rotor_deck_mistakes(change, key, words):
    d = jeffcott(**change)
    err = deck_error(d)
    assert err.key == key and words in err.message, str(err)


@pytest.mark.parametrize("key, value", [("frame", "fixed"), ("orders", [1.0])])
def test_a_load_sweep_refuses_the_spin_keys(key, value):
    from test_sweep import column

    d = column([0.0, 1.0])
    d["steps"][0][key] = value
    err = deck_error(d)
    assert err.key == f"steps[0].{key}" and "spin\" only" in err.message, str(err)
