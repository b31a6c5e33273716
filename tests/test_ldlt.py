"""The symmetric factorization of the modal step (issue 11, benchmark point): ``K - sigma M``
factored by MUMPS as ``L D L^T`` when it is symmetric, by LU when it is not.

Checks: the symmetry test tells round-off from a real asymmetry; an ``L D L^T`` solve of a
symmetric indefinite saddle point (a beam with a joint's multipliers) satisfies the equations
to round-off and equals the LU solve; a singular symmetric matrix is reported (the modal step's
automatic shift depends on it); the modal step factors a cantilever's ``K`` with ``L D L^T`` and
stores fewer factor entries than LU.
"""

import numpy as np
import pytest
import scipy.sparse as sp
from helpers import line_beam, solve

from fem import _petsc, linalg
from fem.solvers.eigen import is_symmetric

_petsc.init()
needs_mumps = pytest.mark.skipif(linalg.best_lu_package() != "mumps", reason="MUMPS only")


def spd(n: int, seed: int = 0):
    """A sparse symmetric positive definite ``(n, n)`` matrix (a chain of springs, grounded)."""
    rng = np.random.default_rng(seed)
    k = rng.uniform(1.0, 2.0, n - 1)
    return sp.diags([np.r_[k, 0] + np.r_[0, k] + 0.1, -k, -k], [0, 1, -1], format="csr")


def factor(A, symmetric):
    """A direct solver on ``A`` (scipy), ``L D L^T`` or LU."""
    return linalg.direct_solver(linalg.matrix_from_scipy(A.tocsr()), "ldlt_test_",
                                symmetric=symmetric)


def test_the_symmetry_test_accepts_round_off_and_rejects_a_follower_term():
    A = spd(50)
    assert is_symmetric(A)
    noisy = A.tolil()
    noisy[3, 4] *= 1 + 1e-15                    # assembly round-off
    assert is_symmetric(noisy.tocsr())
    skew = A.tolil()
    skew[3, 4] += 1e-6 * abs(A).max()           # a non-conservative (follower) stiffness term
    assert not is_symmetric(skew.tocsr())


@needs_mumps
def test_ldlt_solves_a_symmetric_saddle_point_like_lu():
    """``[[K, G^T], [G, 0]]``: indefinite, zero diagonal on the multiplier rows."""
    n, m = 40, 3
    K = spd(n)
    G = sp.csr_matrix((np.ones(m), (np.arange(m), [0, 7, 19])), shape=(m, n))
    A = sp.bmat([[K, G.T], [G, None]], format="csr")
    B = np.random.default_rng(1).standard_normal((n + m, 5))
    sym, lu = factor(A, True), factor(A, False)
    try:
        assert sym.getPC().getType() == "cholesky" and lu.getPC().getType() == "lu"
        X = linalg.solve_block(sym, B)
        X_lu = linalg.solve_block(lu, B)
    finally:
        sym.destroy()
        lu.destroy()
    scale = abs(A).max() * np.abs(X).max() + np.abs(B).max()
    assert np.abs(A @ X - B).max() < 1e-13 * scale
    assert np.abs(X - X_lu).max() < 1e-12 * np.abs(X_lu).max()


@needs_mumps
def test_ldlt_reports_a_singular_matrix():
    """A free chain of springs (no ground): one rigid motion, one null pivot."""
    A = (spd(30) - 0.1 * sp.eye(30)).tocsr()
    assert np.abs(A @ np.ones(30)).max() < 1e-12           # the rigid motion
    ksp = factor(A, True)
    try:
        with pytest.raises(linalg.SingularMatrixError):
            linalg.solve_block(ksp, np.ones((30, 1)))
    finally:
        ksp.destroy()


@needs_mumps
def test_the_modal_step_factors_a_symmetric_k_with_ldlt():
    d = line_beam(3, 20, Iy=1.0, Iz=1.0, orientation=[0, 0, 1])
    d["sections"][0]["mass_per_length"] = 1.0
    d["sections"][0]["rotary_inertia_per_length"] = [1e-9, 1e-9, 1e-6]
    d["supports"] = [{"nodes": [1], "fixed": ["all"]}]
    d["steps"] = [{"name": "modes", "type": "modal", "mass": "consistent", "modes": 4}]
    _, _, state, steps = solve(d)
    step = steps[0]
    K, M = step.matrices(state)
    from fem.solvers import eigen

    solve_sym = eigen.Factorization(K, step.prefix, step.solver_options)   # the step's default
    try:
        pc = solve_sym.ksp.getPC()
        B = M @ np.ones((K.shape[0], 2))
        X = solve_sym(B)
        assert pc.getType() == "cholesky"
        entries = pc.getFactorMatrix().getMumpsInfog(29)
    finally:
        solve_sym.close()
    assert np.abs(K @ X - B).max() < 1e-12 * abs(K).max() * np.abs(X).max()
    lu = factor(K, False)
    try:
        linalg.solve_block(lu, B)
        assert entries < 0.75 * lu.getPC().getFactorMatrix().getMumpsInfog(29)
    finally:
        lu.destroy()
