"""A slender clamped arch in 10 equal load increments (issue "Seams": beat OpenSees).

A quarter circle of radius 10 (E = 1.2e6, A = 0.1, I = 8.333e-5, nu = 0), clamped at (10, 0)
where its tangent is vertical, free at the crown (0, 10), a dead vertical force 4 down at the
crown: the crown falls by 16.3 and turns by 1.73 rad. With 1000 co-rotational elements, plain
Newton diverged in the first of 10 equal increments (residual 1.5e8 by iteration 3; OpenSees
also fails with 10 steps and needs 40); with the bent corrections of fem.analysis.bent each
increment converges in a few iterations. No cut-back is possible (min_increment = the
increment), the iterations per increment are read from the results file, and the answer equals
that of a path in 40 increments to 1e-8.
"""

import h5py
import numpy as np
import pytest
from helpers import solve

R, E, A, I, P = 10.0, 1.2e6, 0.1, 8.333e-5, 4.0


def arch(n: int, theory: str, increments: int) -> dict:
    t = np.linspace(0.0, np.pi / 2, n + 1)
    section = {"name": "s", "A": A, "Iz": I}
    if theory == "timoshenko":
        section.update(Ay=5 / 6 * A, Az=5 / 6 * A)
    return {"model": {"dim": 2},
            "materials": [{"name": "m", "E": E, "nu": 0.0}],
            "sections": [section],
            "nodes": {"coordinates": np.c_[R * np.cos(t), R * np.sin(t)].tolist()},
            "elements": [{"name": "arch", "type": "beam", "formulation": "corotational",
                          "theory": theory, "material": "m", "section": "s",
                          "connectivity": np.c_[np.arange(1, n + 1),
                                                np.arange(2, n + 2)].tolist()}],
            "supports": [{"nodes": 1, "fixed": ["all"]}],
            "loads": [{"name": "P", "nodes": n + 1, "force": [0.0, -P]}],
            "steps": [{"name": "load", "type": "static", "nonlinear": True,
                       "increments": increments, "max_increment": 1.0 / increments,
                       "min_increment": 1.0 / increments}]}


def run(n, theory, increments, h5):
    dk, sysm, state, _ = solve(arch(n, theory, increments), h5)
    with h5py.File(h5, "r") as f:
        iterations = f["steps/load/increments/iterations"][()]
    return state, iterations


@pytest.mark.parametrize("n, theory", [
    (1000, "euler-bernoulli"),
    pytest.param(10_000, "timoshenko", marks=pytest.mark.slow),
], ids=["1000-euler-bernoulli", "10000-timoshenko"])
def test_ten_equal_increments_converge_and_agree_with_a_finer_path(n, theory, tmp_path):
    state, iterations = run(n, theory, 10, str(tmp_path / "ten.h5"))
    assert len(iterations) == 10                          # ten increments, none cut
    assert iterations.max() <= 10, iterations
    fine, _ = run(n, theory, 40, str(tmp_path / "forty.h5"))
    crown = -1
    assert state.u[crown, 1] == pytest.approx(-16.34, abs=0.01)      # it does fall by 16.3
    scale = np.abs(fine.u).max()
    np.testing.assert_allclose(state.u, fine.u, rtol=0, atol=1e-8 * scale)
    np.testing.assert_allclose(state.rot, fine.rot, rtol=0, atol=1e-8 * np.abs(fine.rot).max())
