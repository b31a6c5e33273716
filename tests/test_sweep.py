"""Stability sweeps: a load factor or a spin stepped through a range, the boundary located.

Oracles: notes/lanczos_linearization.md T8 (a compressed pinned beam: omega_1^2 falls linearly
with the load and vanishes at the Euler load pi^2 EI / L^2, where the sweep must find the
boundary within 0.5%) and T12 (Kane's beam spinning: rotating-frame chordwise frequencies; without
geometric stiffness it diverges where the spin reaches its non-rotating first frequency, the
zero of K - Omega^2 M).
"""

import h5py
import numpy as np
import pytest
import scipy.linalg
from helpers import deck_error, line_beam, solve

from fem.inertia.nodal import NodalInertia
from fem.io.deck import from_dict
from fem.run import run

PI2 = np.pi**2


def column(values, **step) -> dict:
    """Pinned-pinned, EI = rho A = L = 1, 20 co-rotational beams, unit compression at node 2.

    EA = 1e8: T8's beam is inextensible (with EA = 1e4 the shortening P / EA = 1e-3 moves the
    boundary by 0.1%).
    """
    d = line_beam(2, 20, E=1.0, A=1e8, Iz=1.0, rotary_inertia=False)
    d["sections"][0]["mass_per_length"] = 1.0
    d["supports"] = [{"nodes": [1], "fixed": ["ux", "uy"]}, {"nodes": [2], "fixed": ["uy"]}]
    d["loads"] = [{"name": "P", "nodes": [2], "force": [-1.0, 0.0]}]
    d["steps"] = [{"name": "sweep", "type": "stability_sweep", "parameter": "load",
                   "values": list(values), "modes": 2, "method": "dense",
                   "tolerance": 1e-6, **step}]
    return d


def test_compressed_column_turns_unstable_at_the_euler_load(tmp_path):
    """T8: buckling detected where omega_1^2 changes sign, within 0.5% of pi^2 (20 elements:
    1e-6); omega_1 = pi^2 sqrt(1 - P / P_cr) at P / P_cr = 0, 0.25, 0.5, 0.9 (T8 values; the
    lumped mass is 3e-4 low, and cancels in the ratio to omega_1(0)); data and plots written."""
    ratios = [0.0, 0.25, 0.5, 0.9, 1.1]
    h5 = str(tmp_path / "col.h5")
    result = run(from_dict(column([r * PI2 for r in ratios])), h5)
    step = result.steps[0]
    assert any("UNSTABLE from load" in line for line in step.lines)
    with h5py.File(h5, "r") as f:
        g = f["sweep/sweep"]
        boundary = float(g.attrs["boundary"])
        w = g["frequencies"][()]
        stable = g["stable"][()]
    assert boundary == pytest.approx(PI2, rel=5e-3)
    assert list(stable) == [True, True, True, True, False]
    w1 = np.nanmin(w[:4], axis=1)       # a value with fewer pairs has NaN columns
    assert w1 == pytest.approx([9.869604, 8.547328, 6.978864, 3.121043], rel=5e-4)   # T8
    assert w1 / w1[0] == pytest.approx(np.sqrt(1 - np.array(ratios[:4])), rel=1e-5)
    assert sorted(result.plots) == sorted(str(tmp_path / f"col_sweep_{k}.png")
                                          for k in ("campbell", "stability"))
    for png in result.plots:
        with open(png, "rb") as fh:
            assert fh.read(8) == b"\x89PNG\r\n\x1a\n"


def test_the_boundary_is_bisected_to_the_tolerance():
    """Two sweeps with the same boundary bracketed differently agree to the round-off of the
    axial force that sets it: equilibrium is reached to 10 eps (|K| |q|), about 4e-6 N with
    EA / l = 2e9 here, 5e-7 of the Euler load."""
    a = solve(column([0.0, 0.9 * PI2, 1.2 * PI2], tolerance=1e-8))[3][0].boundary
    b = solve(column([0.5 * PI2, 1.05 * PI2], tolerance=1e-8))[3][0].boundary
    assert a == pytest.approx(b, rel=1e-6)
    assert a == pytest.approx(PI2, rel=1e-5)      # and 20 elements are that close to pi^2


def spinning(values, *, geometric=True, A=2.0e3) -> dict:
    """Kane's beam (EA = 2.8e7 with A = 2e3) clamped on the spin axis, 20 beams."""
    d = line_beam(2, 20, length=10.0, E=1.4e4, A=A, Iz=1.0, rotary_inertia=False)
    d["sections"][0]["mass_per_length"] = 1.2
    d["supports"] = [{"nodes": [1], "fixed": ["all"]}]
    d["steps"] = [{"name": "campbell", "type": "stability_sweep", "parameter": "spin",
                   "values": list(values), "modes": 3, "geometric": geometric}]
    return d


def test_spin_sweep_follows_the_chordwise_frequency():
    """T12 chordwise at 2, 6, 10 rad/s (0.5%); stable throughout with geometric stiffness."""
    step = solve(spinning([0.0, 2.0, 6.0, 10.0]))[3][0]
    assert step.boundary is None
    _, W = step.tracked
    assert W[1:, 0] == pytest.approx([3.8962, 4.5139, 5.3096], rel=5e-3)
    assert np.all(np.diff(W[:, 0]) > 0)             # one tracked line, stiffening


def test_without_geometric_stiffness_the_spin_diverges_at_the_first_frequency():
    """K - Omega^2 M_t (the centrifugal softening acts on the translational masses M_t) turns
    singular at the lowest omega of K phi = omega^2 M_t phi: the sweep's boundary is that
    omega, computed here from the same mesh's tangent and masses at rest. The centrifugal
    stretch moves it by 1.5e-4 with EA = 2.8e7 and, falling as 1 / EA, by 4e-8 with the
    EA = 2.8e11 used here."""
    d = spinning([0.0, 3.0, 4.0], geometric=False, A=2.0e7)
    d["steps"][0]["tolerance"] = 1e-9
    dk, sysm, state, steps = solve(d)
    K = sysm.assembler.to_scipy(sysm.tangent(sysm.reference_state())).toarray()
    m = NodalInertia(sysm).mass_blocks()
    m[:, 2, 2] = 0.0                                 # no centrifugal moment on rotations
    Mt = sysm.assembler.to_scipy(sysm.assembler.matrix([None], m)).toarray()
    w2 = scipy.linalg.eigvals(K, Mt)
    w2 = np.sort(w2[np.isfinite(w2)].real)
    assert steps[0].boundary == pytest.approx(np.sqrt(w2[w2 > 0][0]), rel=1e-7)


@pytest.mark.parametrize("change, key, words", [
    ({"values": [1.0, 0.5]}, "steps[0].values", "increasing"),
    ({"values": []}, "steps[0].values", "at least one"),
    ({"axis": [0.0, 0.0, 1.0]}, "steps[0].axis", "spin\" only"),
    ({"parameter": "spin", "axis": [0.0, 0.0, 1.0]}, "steps[0].axis", "about z"),
    ({"parameter": "speed"}, "steps[0].parameter", "spin, load"),
    ({"loads": []}, "steps[0].loads", "scales the step's loads"),
], ids=["order", "empty", "axis-load", "axis-2d", "parameter", "no-loads"])
def test_sweep_deck_mistakes(change, key, words):
    d = column([0.0, 1.0])
    d["steps"][0].update(change)
    err = deck_error(d)
    assert err.key == key and words in err.message, str(err)


def test_a_value_without_equilibrium_ends_the_sweep_keeping_what_it_found(tmp_path,
                                                                          monkeypatch):
    """Where Newton finds no equilibrium (past a limit load, a critical spin) the sweep warns
    and writes the values before it instead of losing them (Newton made to fail at the third
    value here)."""
    from fem.analysis.sweep import SweepStep
    from fem.errors import ConvergenceError

    point = SweepStep.point

    def failing(self, value, start):
        if value > 0.6 * PI2:
            raise ConvergenceError("no equilibrium (made to fail)")
        return point(self, value, start)

    monkeypatch.setattr(SweepStep, "point", failing)
    result = run(from_dict(column([0.0, 0.25 * PI2, 0.75 * PI2, PI2])), str(tmp_path / "c.h5"))
    assert any("stopped at load = 7.4" in line for line in result.steps[0].lines)
    with h5py.File(result.h5, "r") as f:
        assert f["sweep/sweep/parameter"][()] == pytest.approx([0.0, 0.25 * PI2])
        w = f["sweep/sweep/frequencies"][()].min(axis=1)
    assert w[1] / w[0] == pytest.approx(np.sqrt(0.75), rel=1e-5)        # T8, as above
