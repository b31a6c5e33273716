"""Small systems factor with PETSc's own LU (issue 14): what MUMPS gave must still hold.

Checks: the package choice (small and without multipliers; options that name a package keep
it); null pivots of a free beam (three rigid-body modes) are reported as a singular matrix,
which the steps turn into model errors; the determinant's sign agrees with LAPACK's on an
indefinite matrix; refilling a matrix in place gives the values ``setValuesCSR`` gave.
"""

import numpy as np
import pytest
import scipy.sparse as sp

from fem import _petsc, linalg

_petsc.init()


def beam_stiffness(n: int, supported: bool) -> sp.csr_matrix:
    """2D Euler-Bernoulli beam of ``n`` elements (EA = 1e4, EI = 10, length 1), clamped or free."""
    le, EA, EI = 1.0 / n, 1e4, 10.0
    k = np.zeros((6, 6))
    k[np.ix_([0, 3], [0, 3])] = EA / le * np.array([[1, -1], [-1, 1]])
    c, d, f = 6 * le, 4 * le**2, 2 * le**2
    b = EI / le**3 * np.array([[12, c, -12, c], [c, d, -c, f], [-12, -c, 12, -c], [c, f, -c, d]])
    k[np.ix_([1, 2, 4, 5], [1, 2, 4, 5])] = b
    N = 3 * (n + 1)
    K = np.zeros((N, N))
    for e in range(n):
        K[3 * e:3 * e + 6, 3 * e:3 * e + 6] += k
    if supported:
        K = K[3:, 3:]
    return sp.csr_matrix(K)


def solver(K, prefix: str):
    A = linalg.matrix_from_scipy(K)
    ksp = linalg.direct_solver(A, prefix, package="petsc")
    return A, ksp


def test_package_choice():
    best = linalg.best_lu_package()
    assert linalg.lu_package(33) == "petsc"
    assert linalg.lu_package(linalg.SMALL_LU + 1) == best
    n = linalg.SMALL_CHAIN_LU                                        # a chain: few entries a row
    assert linalg.lu_package(n, nnz=9 * n) == "petsc"
    assert linalg.lu_package(n, nnz=40 * n) == best                   # a 3D lattice: fill
    assert linalg.lu_package(33, zero_diagonal=True) == best          # multipliers: pivoting
    assert linalg.lu_package(33, {"mat_mumps_icntl_14": 50}) == best
    assert linalg.lu_package(33, {"pc_factor_mat_solver_type": "superlu"}) == best


def test_regular_beam_solves_like_lapack():
    K = beam_stiffness(10, supported=True)
    A, ksp = solver(K, "smalllu1_")
    try:
        b = np.linspace(1.0, 2.0, K.shape[0])
        x = linalg.solve(ksp, b)
        ref = np.linalg.solve(K.toarray(), b)
        assert np.allclose(x, ref, rtol=1e-12, atol=0)
    finally:
        ksp.destroy()
        A.destroy()
        linalg.release_options("smalllu1_")


def test_free_beam_is_singular():
    """Three rigid-body modes: three null pivots, not a solution of size 1/eps."""
    K = beam_stiffness(10, supported=False)
    A, ksp = solver(K, "smalllu2_")
    try:
        with pytest.raises(linalg.SingularMatrixError) as err:
            linalg.solve(ksp, np.ones(K.shape[0]))
        assert err.value.null_pivots == 3
        with pytest.raises(linalg.SingularMatrixError):                 # block solves too
            linalg.solve_block(ksp, np.ones((K.shape[0], 2)))
    finally:
        ksp.destroy()
        A.destroy()
        linalg.release_options("smalllu2_")


def test_determinant_sign_of_an_indefinite_matrix():
    K = beam_stiffness(6, supported=True).toarray()
    for shift, count in ((0.0, 0), (None, 1), (None, 2)):
        w = np.linalg.eigvalsh(K)
        if shift is None:         # between the count-th and the next eigenvalue
            shift = 0.5 * (w[count - 1] + w[count])
        S = sp.csr_matrix(K - shift * np.eye(len(K)))
        A, ksp = solver(S, "smalllu3_")
        try:
            linalg.solve(ksp, np.ones(len(K)))
            assert linalg.determinant_sign(ksp) == int(np.sign(np.linalg.det(S.toarray())))
            assert linalg.determinant_sign(ksp) == (-1) ** count
        finally:
            ksp.destroy()
            A.destroy()
            linalg.release_options("smalllu3_")


def test_refill_in_place_equals_set_values():
    K = beam_stiffness(5, supported=True)
    A = linalg.create_matrix(K.indptr, K.indices)
    linalg.fill_matrix(A, K.indptr, K.indices, 3.0 * K.data)
    ai, aj, av = A.getValuesCSR()
    assert np.array_equal(ai, K.indptr) and np.array_equal(aj, K.indices)
    assert np.array_equal(av, 3.0 * K.data)
    A.destroy()
