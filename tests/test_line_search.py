"""The line search of load-control corrections (``line_search``), and why it is not the default.

Measured in fem/analysis/static_deck.py (LINE_SEARCH_DEFAULT): on trusses the energy search saves
iterations (a sagging string loaded at its middle: 13 iterations without, 5 with), on slender
co-rotational beams both searches fail where the bent corrections converge, and on a truss taken
past its limit point under load control the damped steps hide the limit point from the step's
warning. The default is ``"none"``; these tests fail when one of those findings changes.
"""

import copy
import math
from pathlib import Path

import h5py
import numpy as np
import pytest
from helpers import node, solve

from fem.analysis.static import StaticSettings
from fem.errors import ConvergenceError
from fem.io import deck as deck_io

CASES = Path(__file__).resolve().parents[1] / "cases"


def string(P: float, increments: int = 1, **step) -> dict:
    """Two truss bars between pins, sagging by 1e-3 of their span, pulled down at the middle:
    the tangent is nearly singular at the start (stiffening like ``u^3``), so Newton's first
    correction overshoots by orders of magnitude and then shrinks by 2/3 per iteration."""
    return {"model": {"dim": 2}, "materials": [{"name": "m", "E": 1.0, "nu": 0.3}],
            "sections": [{"name": "s", "A": 1.0}],
            "nodes": {"coordinates": [[-1.0, 0.0], [0.0, -1e-3], [1.0, 0.0]]},
            "elements": [{"name": "bars", "type": "truss", "formulation": "corotational",
                          "material": "m", "section": "s", "connectivity": [[1, 2], [2, 3]]}],
            "supports": [{"nodes": [1, 3], "fixed": ["ux", "uy"]}],
            "loads": [{"name": "P", "nodes": 2, "force": [0.0, -P]}],
            "steps": [{"name": "pull", "type": "static", "nonlinear": True,
                       "increments": increments, **step}]}


def iterations(d, h5):
    dk, _, state, steps = solve(d, h5=h5)
    with h5py.File(h5) as f:
        its = f[f"steps/{d['steps'][0]['name']}/increments/iterations"][()]
    return state, its, steps[0]


def test_the_default_is_no_line_search():
    assert StaticSettings().line_search == "none"


@pytest.mark.parametrize("search", ["energy", "residual"])
def test_a_line_search_saves_the_iterations_of_an_overshooting_string(search, tmp_path):
    """In one increment of P = 1e-4: 13 iterations without a line search, 5 (energy) or 4
    (residual) with one; with 8 iterations allowed and no cut-back only the line search
    converges. The answers agree to the tolerance."""
    fixed = {"min_increment": 1.0, "max_increment": 1.0}
    plain, its, _ = iterations(string(1e-4), str(tmp_path / "a.h5"))
    searched, its_ls, step = iterations(string(1e-4, line_search=search), str(tmp_path / "b.h5"))
    assert its.sum() == 13 and its_ls.sum() <= 5
    assert min(step.line_search.steps) < 1                # it did shorten corrections
    np.testing.assert_allclose(searched.u, plain.u, rtol=0, atol=1e-7 * np.abs(plain.u).max())
    with pytest.raises(ConvergenceError, match="no convergence in 8 iterations"):
        solve(string(1e-4, max_iterations=8, **fixed))
    solve(string(1e-4, max_iterations=8, line_search=search, **fixed))


def test_a_line_search_keeps_full_steps_where_newton_converges(tmp_path):
    """Ten increments to P = 1e-2: every increment converges with full steps as well or better
    (41 iterations without, 33 with the energy search), to the same answer."""
    plain, its, _ = iterations(string(1e-2, 10), str(tmp_path / "a.h5"))
    searched, its_ls, _ = iterations(string(1e-2, 10, line_search="energy"),
                                     str(tmp_path / "b.h5"))
    assert its_ls.sum() < its.sum()
    np.testing.assert_allclose(searched.u, plain.u, rtol=0, atol=1e-7 * np.abs(plain.u).max())


def test_line_searches_fail_on_the_slender_arch_where_bent_corrections_converge(tmp_path):
    """The arch of tests/test_slender_arch.py in 10 equal increments: converged with the default
    (bent corrections), not with either line search (the potential along the straight correction
    is least at a few percent of it)."""
    from test_slender_arch import arch

    d = arch(1000, "euler-bernoulli", 10)
    state, its, _ = iterations(d, str(tmp_path / "a.h5"))
    assert len(its) == 10 and its.max() <= 10
    for search in ("energy", "residual"):
        dd = copy.deepcopy(d)
        dd["steps"][0]["line_search"] = search
        with pytest.raises(ConvergenceError, match="no convergence"):
            solve(dd)


def test_an_energy_line_search_hides_a_limit_point_from_load_control():
    """The von Mises truss loaded to 2.6 times its limit load (as in
    tests/test_nonlinear_static.py): without a line search the step warns that it passed a limit
    point; with the energy search a damped step carries the apex across the unstable branch with
    no factored tangent of the other sign there, and the warning is lost. This is why the
    energy search is not the default on trusses."""
    d = deck_io.parse((CASES / "von_mises_truss" / "deck.toml").read_text())
    for search, warned in (("none", True), ("energy", False)):
        dd = copy.deepcopy(d)
        dd["steps"] = [{"name": "snap", "type": "static", "nonlinear": True, "load_factor": 1e-3,
                        "increments": 10, "line_search": search}]
        dk, _, st, steps = solve(dd)
        assert 0.1 + st.u[node(dk, 2), 1] < -0.1                 # it snapped through
        assert bool(steps[0].warnings) == warned
    assert math.isfinite(st.u[node(dk, 2), 1])


def test_the_default_changes_nothing_on_the_cases(tmp_path):
    """With the default, the elastica case runs as with line_search = "none", bit for bit."""
    d = deck_io.parse((CASES / "elastica_cantilever" / "deck.toml").read_text())
    default = solve(copy.deepcopy(d))[2]
    d["steps"][0]["line_search"] = "none"
    explicit = solve(d)[2]
    np.testing.assert_array_equal(default.u, explicit.u)
    np.testing.assert_array_equal(default.rot, explicit.rot)
