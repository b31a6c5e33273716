"""Small systems solved dense, without PETSc (issue 32): what PETSc's own LU gave must still hold.

:class:`fem.solvers.dense.DenseLU` replaces PETSc's own LU for systems of at most
:data:`~fem.solvers.dense.DENSE_MAX` unknowns (no zero diagonal, no PETSc options). Checked
against closed forms, LAPACK and PETSc's own LU on the same matrices: a clamped beam's tip
deflection; a free beam's rigid-body modes are a singular matrix, as PETSc's own LU reports;
the determinant's sign agrees with LAPACK's on indefinite matrices; the condition number is the
1-norm one of the equilibrated matrix, at least PETSc's estimate of it; and the step's choice of
solver (dense when small, PETSc's objects when options are given or when a caller asks for
them, filled with the last values).
"""

import numpy as np
import pytest
from test_small_lu import beam_stiffness

from fem import _petsc, linalg
from fem.solvers import dense
from fem.solvers.dense import DENSE_MAX, DenseLU
from fem.solvers.linear_system import LinearSystem

_petsc.init()


def dense_lu(K) -> DenseLU:
    K = K.tocsr()
    K.sort_indices()
    lu = DenseLU(K.indptr, K.indices)
    lu.fill(K.data)
    return lu


def test_a_clamped_beam_gives_the_closed_form_tip_deflection():
    n = 8                                   # EI = 10, length 1: P L^3 / (3 EI) under P = 1
    K = beam_stiffness(n, supported=True)
    b = np.zeros(K.shape[0])
    b[-2] = 1.0
    x, report = dense_lu(K).solve(b)
    assert x[-2] == pytest.approx(1.0 / 30.0, rel=1e-12)
    assert report.backward_error < 4 * np.finfo(float).eps and report.refinements == 0


def test_solutions_equal_petscs_own_lu_to_round_off():
    K = beam_stiffness(10, supported=True)
    b = np.linspace(1.0, 2.0, K.shape[0])
    A = linalg.matrix_from_scipy(K)
    ksp = linalg.direct_solver(A, "denselu1_", package="petsc")
    try:
        ref = linalg.solve(ksp, b)
    finally:
        ksp.destroy()
        A.destroy()
        linalg.release_options("denselu1_")
    x = dense_lu(K).solve(b)[0]
    cond = np.linalg.cond(K.toarray(), 1)
    assert np.abs(x - ref).max() <= 10 * cond * np.finfo(float).eps * np.abs(ref).max()


def test_a_free_beam_is_a_singular_matrix():
    """Three rigid-body modes: the elimination meets a null pivot (PETSc's own LU: too)."""
    lu = dense_lu(beam_stiffness(4, supported=False))
    with pytest.raises(linalg.SingularMatrixError) as err:
        lu.solve(np.ones(lu.n))
    assert err.value.null_pivots >= 1


def test_null_pivots_are_relative_to_their_row():
    """Units do not matter: a regular matrix scaled by 1e-30 is regular, a rank-deficient one
    stays singular whatever its scale."""
    a = np.array([[2.0, -1.0, 0.0], [-1.0, 2.0, -1.0], [0.0, -1.0, 2.0]])
    for scale in (1e-30, 1.0, 1e30):
        pivots, null = dense.factor(scale * a)
        assert null == 0
        assert np.prod(pivots) == pytest.approx(np.linalg.det(scale * a), rel=1e-12)
    b = np.array([[1.0, -1.0, 0.0], [-1.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    for scale in (1e-30, 1.0, 1e30):
        assert dense.factor(scale * b)[1] == 2       # the second pivot and the column after it
    # rank 2 in a rotated basis: the last pivot is round-off, not an exact zero
    q, _ = np.linalg.qr(np.random.default_rng(3).normal(size=(3, 3)))
    c = q @ np.diag([1.0, 2.0, 0.0]) @ q.T
    for scale in (1e-30, 1.0, 1e30):
        pivots, null = dense.factor(scale * c)
        assert null == 1 and pivots[-1] != 0.0
        assert dense.positive_pivots(scale * c) is None
        lu = DenseLU(np.array([0, 3, 6, 9]), np.tile(np.arange(3), 3))
        lu.fill((scale * c).ravel())
        with pytest.raises(linalg.SingularMatrixError):
            lu.solve(np.ones(3))


@pytest.mark.parametrize("shift", [0.0, 5.0, 50.0, 5e3])
def test_the_determinant_sign_agrees_with_lapack(shift):
    """Indefinite ``K - shift I`` of a clamped beam: the sign of LAPACK's determinant."""
    K = beam_stiffness(6, supported=True).toarray() - shift * np.eye(18)
    import scipy.sparse as sp

    lu = dense_lu(sp.csr_matrix(K))
    assert lu.determinant_sign() == int(np.linalg.slogdet(K)[0])


def test_the_condition_number_is_the_equilibrated_one_and_bounds_petscs_estimate():
    K = beam_stiffness(12, supported=True)
    b = np.linspace(1.0, 2.0, K.shape[0])
    lu = dense_lu(K)
    x = lu.solve(b)[0]
    cond, bound = lu.accuracy(b, x)
    d = np.sqrt(np.abs(K.diagonal()))
    S = K.toarray() / np.outer(d, d)
    assert cond == pytest.approx(np.linalg.cond(S, 1), rel=1e-10)
    assert bound >= cond * np.finfo(float).eps
    A = linalg.matrix_from_scipy(K)
    ksp = linalg.direct_solver(A, "denselu2_", package="petsc")
    try:
        xp = linalg.solve(ksp, b)
        estimate, _ = linalg.accuracy(ksp, b, xp)
    finally:
        ksp.destroy()
        A.destroy()
        linalg.release_options("denselu2_")
    assert estimate <= cond * (1 + 1e-10)           # Hager's estimate is a lower bound
    assert estimate >= 0.1 * cond


class Pattern:
    """An assembler's CSR pattern."""

    def __init__(self, K):
        K = K.tocsr()
        K.sort_indices()
        self.indptr, self.indices, self.nnz, self.data = K.indptr, K.indices, K.nnz, K.data


def test_a_small_system_is_solved_dense_and_options_keep_petsc():
    K = beam_stiffness(4, supported=True)
    asm = Pattern(K)
    lin = LinearSystem(asm, K.shape[0], False, "denselu3_")
    lin.open()
    assert lin.dense is not None and lin._A is None
    deck = LinearSystem(asm, K.shape[0], False, "denselu4_", {"ksp_type": "preonly"})
    deck.open()
    assert deck.dense is None
    opts = _petsc.PETSc().Options()
    opts.setValue("denselu5_pc_factor_mat_ordering_type", "nd")
    try:
        line = LinearSystem(asm, K.shape[0], False, "denselu5_")
        line.open()
        assert line.dense is None, "a command-line option for the step keeps PETSc"
    finally:
        opts.delValue("denselu5_pc_factor_mat_ordering_type")
    big = beam_stiffness(DENSE_MAX // 3 + 1, supported=True)
    wide = LinearSystem(Pattern(big), big.shape[0], False, "denselu6_")
    wide.open()
    assert wide.dense is None
    multipliers = LinearSystem(asm, K.shape[0], True, "denselu7_")
    multipliers.open()
    assert multipliers.dense is None
    for s in (lin, deck, line, wide, multipliers):
        s.close()


def test_asking_for_the_petsc_objects_hands_them_the_last_values():
    """A caller that uses the KSP itself (buckling, the consistent start of dynamics) gets
    PETSc's LU on the values filled so far; solves go there from then on."""
    K = beam_stiffness(5, supported=True)
    asm = Pattern(K)
    lin = LinearSystem(asm, K.shape[0], False, "denselu8_")
    lin.open()
    lin.fill(asm.data)
    b = np.linspace(1.0, 2.0, K.shape[0])
    x_dense = lin.solve(b)[0]
    x_petsc = linalg.solve(lin.ksp, b)
    assert lin.dense is None
    assert np.array_equal(lin.solve(b)[0], x_petsc)
    cond = np.linalg.cond(K.toarray(), 1)
    assert np.abs(x_dense - x_petsc).max() <= 10 * cond * np.finfo(float).eps * \
        np.abs(x_petsc).max()
    lin.close()


def test_cholesky_pivots_are_the_eliminations_on_positive_definite_matrices():
    """A clamped beam (SPD): LAPACK's Cholesky gives the pivots of the column loop; a shifted,
    indefinite one and a non-symmetric one are left to the loop (None)."""
    K = beam_stiffness(10, supported=True).toarray()
    fast = dense.positive_pivots(K)
    loop, null = dense.factor(K.copy())
    assert null == 0 and fast is not None
    np.testing.assert_allclose(fast, loop, rtol=1e-9)
    middle = np.median(np.linalg.eigvalsh(K))               # half the eigenvalues below it
    assert dense.positive_pivots(K - middle * np.eye(len(K))) is None
    skew = K.copy()
    skew[0, 3] = np.nextafter(skew[0, 3], 0.0)             # one unit in the last place
    assert dense.positive_pivots(skew) is None


def test_a_step_that_asked_for_the_banded_lu_keeps_petsc_without_it(monkeypatch):
    """Time steps ask for the banded LU (many solves); without numba (FEM_JIT = 0) they keep
    PETSc's LU as before, not the dense one, whose column loop on a tangent that is not
    symmetric positive definite costs more a solve."""
    K = beam_stiffness(4, supported=True)
    asm = Pattern(K)
    monkeypatch.setenv("FEM_JIT", "0")
    lin = LinearSystem(asm, K.shape[0], False, "denselu9_")
    lin.open(banded=True)
    assert lin.banded is None and lin.dense is None
    lin.close()
    monkeypatch.delenv("FEM_JIT")
    lin = LinearSystem(asm, K.shape[0], False, "denselu10_")
    lin.open(banded=True)
    assert lin.dense is None and (lin.banded is not None or not dense_lu_kernel_available())
    lin.close()


def dense_lu_kernel_available() -> bool:
    from fem.solvers.banded import _kernel

    return _kernel.enabled()
