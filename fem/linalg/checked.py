"""Checked solves: a direct solve, its backward error, refinement, and the accuracy of a result.

A direct solve is backward stable: it returns the exact solution of a system within a few eps of
the one asked (its backward error). That is checked after every solve with one product with
``A`` (:func:`solve_checked`, :func:`solve_block`), and refined with the same factorization when
it is not. A singular factorization raises :class:`~fem.linalg.objects.SingularMatrixError`
(MUMPS's null pivots; PETSc's own LU's pivots relative to their rows, :func:`_check_pivots`), a
non-finite right-hand side or solution :class:`NonFiniteError`. Where the solution is the result
(a linear step), :func:`accuracy` estimates the condition number. The solvers themselves are
made by :mod:`fem.linalg.objects`.
"""

from __future__ import annotations

import logging

import numpy as np
from numpy.typing import NDArray

from fem import _petsc
from fem.errors import ConvergenceError
from fem.linalg.objects import _PUSHED, NULL_PIVOT, SMALL_LU_ORDERING, SingularMatrixError

log = logging.getLogger(__name__)

def solve(ksp, b: NDArray, x: NDArray | None = None) -> NDArray:
    """Solve ``A x = b`` with numpy arrays, checked; raises on failure.

    Every solve is checked by its backward error and refined with the same factorization when
    that error is above round-off (:func:`solve_checked`, which also returns the check). Raises
    :class:`SingularMatrixError` for a singular factorization, :class:`NonFiniteError` for a
    right-hand side or a solution that is not finite (an overflow, never a singular matrix), and
    :class:`~fem.errors.ConvergenceError` for an iterative solver that diverged.
    """
    return solve_checked(ksp, b, x)[0]


def solve_block(ksp, B: NDArray) -> NDArray:
    """Solve ``A X = B`` for a block ``B (n, m)`` of right-hand sides, checked like :func:`solve`.

    With a direct solver (``preonly`` and LU or Cholesky) one ``MatMatSolve`` with the factor
    (for MUMPS: one solve phase with ``m`` right-hand sides, BLAS-3 on the factors, several
    times faster than ``m`` single solves); each column's backward error is checked and refined
    with the same factorization as in :func:`solve_checked`, the columns that need it together.
    Other solvers (an iterative KSP from the options) solve column by column with :func:`solve`.
    """
    PETSc = _petsc.PETSc()
    B = np.asarray(B, dtype=float)
    n, m = B.shape
    pc = ksp.getPC()
    if m == 0 or ksp.getType() != "preonly" or pc.getType() not in ("lu", "cholesky") \
            or _distributed(ksp.getOperators()[0]):
        out = np.empty((n, m))
        for j in range(m):
            out[:, j] = solve(ksp, np.ascontiguousarray(B[:, j]))
        return out
    if not np.all(np.isfinite(B)):
        raise NonFiniteError("a right-hand side is not finite (NaN or infinite entries)")
    # columns contiguous (PETSc's dense layout): the right-hand sides are copied at most once,
    # the solutions are written in place, and the residual's arithmetic runs along columns
    B = np.asfortranarray(B)
    try:
        ksp.setUp()
    except PETSc.Error as err:
        raise SingularMatrixError(-1, f"(PETSc error {err.ierr})") from None
    F = pc.getFactorMatrix()
    if pc.getFactorSolverType() == "mumps" and F.getMumpsInfog(28) > 0:
        raise SingularMatrixError(F.getMumpsInfog(28))
    if pc.getFactorSolverType() == "petsc":
        _check_pivots(ksp)
    A = ksp.getOperators()[0]
    norm_A = A.norm(PETSc.NormType.INFINITY)

    def apply(rhs: NDArray) -> NDArray:
        out = np.empty((n, rhs.shape[1]), order="F")
        Bm = PETSc.Mat().createDense((n, rhs.shape[1]), array=np.asfortranarray(rhs),
                                     comm=PETSc.COMM_SELF)
        Xm = PETSc.Mat().createDense((n, rhs.shape[1]), array=out, comm=PETSc.COMM_SELF)
        try:
            F.matSolve(Bm, Xm)
            return out
        except PETSc.Error as err:
            raise SingularMatrixError(-1, f"(PETSc error {err.ierr})") from None
        finally:
            Bm.destroy()
            Xm.destroy()

    def residual(X: NDArray, rhs: NDArray) -> tuple[NDArray, NDArray]:
        Xm = PETSc.Mat().createDense((n, X.shape[1]), array=np.asfortranarray(X),
                                     comm=PETSc.COMM_SELF)
        try:
            AXm = A.matMult(Xm)
            R = rhs - AXm.getDenseArray()
            AXm.destroy()
        finally:
            Xm.destroy()
        den = norm_A * np.abs(X).max(axis=0) + np.abs(rhs).max(axis=0)
        return R, np.abs(R).max(axis=0) / np.where(den > 0, den, 1.0)

    X = apply(B)
    if not np.all(np.isfinite(X)):
        raise NonFiniteError("the solution overflowed (not finite)")
    R, berr = residual(X, B)
    for _ in range(MAX_REFINEMENTS):
        poor = np.flatnonzero(berr > REFINE_ABOVE)
        if len(poor) == 0:
            break
        Xp = X[:, poor] + apply(np.ascontiguousarray(R[:, poor]))
        Rp, bp = residual(Xp, B[:, poor])
        better = bp < berr[poor]
        if not better.any():
            break
        cols = poor[better]
        X[:, cols], R[:, cols], berr[cols] = Xp[:, better], Rp[:, better], bp[better]
    return X


# --- checked solves ------------------------------------------------------------------------------
#
# A direct solve is backward stable: it returns the exact solution of a system within a few eps of
# the one asked (its backward error). That is checked after every solve with one product with A,
# and refined with the same factorization when it is not (pivoting trouble, an iterative solver
# from the command line). How far the solution then is from the exact one depends on the condition
# number: with MUMPS's default scaling (ICNTL(8) = 77) still in the data, a chain of many slender
# beam elements reaches 1e16 (it grows with the fourth power of the number of elements along a
# member) and every digit is lost while the backward error stays at eps. Where the solution is
# the result (a linear step), :func:`accuracy` estimates the condition number.

EPS = float(np.finfo(float).eps)
REFINE_ABOVE = 64 * EPS            # above a few eps the solve was not backward stable: refine
MAX_REFINEMENTS = 3
POOR_BACKWARD_ERROR = 1e-10        # still above this after refinement: the solve is reported


class NonFiniteError(ArithmeticError):
    """A right-hand side or a solution that is not finite (a NaN or an overflow).

    Never a singular matrix: a NaN load is not a mechanism.
    """


class SolveReport:
    """The check of one solve.

    Attributes
    ----------
    backward_error : normwise ``|b - A x| / (|A| |x| + |b|)`` (infinity norms) after refinement
    first_backward_error : the same before refinement
    refinements : steps of iterative refinement done with the existing factorization
    """

    def __init__(self, backward_error: float, first_backward_error: float, refinements: int):
        self.backward_error = backward_error
        self.first_backward_error = first_backward_error
        self.refinements = refinements

    def __repr__(self) -> str:
        return (f"SolveReport(backward_error={self.backward_error:.3g}, "
                f"first_backward_error={self.first_backward_error:.3g}, "
                f"refinements={self.refinements})")

    @property
    def poor(self) -> bool:
        """Whether the solve stayed far from backward stable after refinement."""
        return not self.backward_error <= POOR_BACKWARD_ERROR


def solve_checked(ksp, b: NDArray, x: NDArray | None = None) -> tuple[NDArray, SolveReport]:
    """Solve ``A x = b``, compute its backward error and refine it while that is above round-off.

    Refinement (``x += A^-1 (b - A x)`` with the same factorization) runs at most
    :data:`MAX_REFINEMENTS` times and only while the backward error falls, so a well-behaved solve
    costs one extra product with ``A``. Raises as :func:`solve` does.
    """
    PETSc = _petsc.PETSc()
    b = np.ascontiguousarray(b, dtype=float)
    if not np.all(np.isfinite(b)):
        bad = int(np.sum(~np.isfinite(b)))
        raise NonFiniteError(f"the right-hand side is not finite ({bad} of {len(b)} entries are "
                             "NaN or infinite: a load or a state that overflowed)")
    if x is None:
        x = np.zeros_like(b)
    _apply(ksp, b, x)
    if not np.all(np.isfinite(x)):
        raise NonFiniteError(f"the solution overflowed (the right-hand side reaches "
                             f"{np.abs(b).max():.3g}; the solution is not finite)")
    A = ksp.getOperators()[0]
    norm_A = A.norm(PETSc.NormType.INFINITY)

    def correction(r: NDArray) -> NDArray:
        dx = np.zeros_like(b)
        _apply(ksp, r, dx)
        return dx

    def residual(x: NDArray) -> tuple[NDArray, float]:
        r = _residual(A, x, b)
        return r, _backward_error(r, norm_A, x, b)

    refined, report = refine(x, correction, residual)
    x[:] = refined
    return x, report


def refine(x: NDArray, correction, residual) -> tuple[NDArray, SolveReport]:
    """Iterative refinement of a solve ``x`` while its backward error is above round-off.

    ``residual(x) -> (b - A x, backward error)``; ``correction(r) -> A^-1 r`` with the same
    factorization. At most :data:`MAX_REFINEMENTS` steps, each kept only if it lowers the
    backward error, and no more once one no longer halves it. Returns the solution and its
    :class:`SolveReport` (:func:`solve_checked`, :class:`fem.solvers.banded.BandedLU`).
    """
    r, berr = residual(x)
    first, k = berr, 0
    while berr > REFINE_ABOVE and k < MAX_REFINEMENTS:
        x_new = x + correction(r)
        if not np.all(np.isfinite(x_new)):
            break
        r_new, berr_new = residual(x_new)
        k += 1
        if not berr_new < berr:
            break                      # no better: keep what we have
        x, r, falling = x_new, r_new, berr_new < 0.5 * berr
        berr = berr_new
        if not falling:
            break
    return x, SolveReport(berr, first, k)


#: MUMPS's INFOG(1) of a factorization that ran out of its estimated workspace (integer or real
#: work arrays, -8/-9/-11/-12/-14/-15; send buffers -17/-20): not a singular matrix. Its
#: estimate is an analysis of the pattern, which pivoting can overrun (a saddle-point matrix of
#: a plate welded to the ground by fixed joints: -9 with the default ICNTL(14) = 20%).
MUMPS_WORKSPACE = (-8, -9, -11, -12, -14, -15, -17, -20)
MUMPS_MAX_RELAXATION = 1000      # ICNTL(14), percent: the workspace retries stop there


def _more_workspace(ksp) -> bool:
    """Raise MUMPS's ``ICNTL(14)`` after a factorization that ran out of workspace.

    ``ICNTL(14)`` is the percentage added to the analysis's estimate of the workspace; it is
    raised four-fold (at least to 100) in the options under the KSP's prefix and the PC is
    rebuilt, so that the next solve analyses and factors again. False when the failure is
    something else or the relaxation is at its bound.
    """
    pc = ksp.getPC()
    F = pc.getFactorMatrix()
    info = F.getMumpsInfog(1)
    current = F.getMumpsIcntl(14)
    if info not in MUMPS_WORKSPACE or current >= MUMPS_MAX_RELAXATION:
        return False
    relaxation = min(max(4 * current, 100), MUMPS_MAX_RELAXATION)
    prefix = ksp.getOptionsPrefix() or ""
    opts = _petsc.PETSc().Options()
    name = prefix + "mat_mumps_icntl_14"
    if not opts.hasName(name):
        _PUSHED.setdefault(prefix, []).append(name)
    opts.setValue(name, str(relaxation))
    log.info("MUMPS ran out of workspace (INFOG(1) = %d); factoring again with ICNTL(14) = "
             "%d%%", info, relaxation)
    A, P = ksp.getOperators()
    pc.reset()                     # drops the factor and the operators: set them again
    pc.setType("lu")
    pc.setFactorSolverType("mumps")
    pc.setFromOptions()
    ksp.setOperators(A, P)
    return True


def _distributed(A) -> bool:
    """Whether ``A`` is a matrix on several processes (a distributed solve)."""
    return A.getComm().getSize() > 1


def _world_vector(A, v: NDArray):
    """The rank's rows of the (replicated) vector ``v`` as a vector of the MPI matrix ``A``."""
    PETSc = _petsc.PETSc()
    r0, r1 = A.getOwnershipRange()
    rows = A.getAttr("__fem_rows__")          # a partition's numbering (fem.linalg.RowMap)
    mine = v[r0:r1] if rows is None else v[rows.rows]
    return PETSc.Vec().createWithArray(np.ascontiguousarray(mine), size=(r1 - r0, len(v)),
                                       comm=A.getComm())


def _gather(A, local: NDArray, out: NDArray) -> None:
    """Every rank's rows of a vector of the MPI matrix ``A``, into ``out`` on every rank."""
    counts = np.diff(A.getOwnershipRanges())
    rows = A.getAttr("__fem_rows__")
    if rows is None:
        A.getComm().tompi4py().Allgatherv(np.ascontiguousarray(local), [out, counts])
        return
    buf = np.empty_like(out)
    A.getComm().tompi4py().Allgatherv(np.ascontiguousarray(local), [buf, counts])
    out[rows.serial] = buf


def _apply(ksp, b: NDArray, x: NDArray) -> None:
    """One ``ksp.solve`` into ``x``; raises on a singular factorization or a divergence.

    A MUMPS factorization that runs out of workspace is repeated with more
    (:func:`_more_workspace`), not reported as a singular matrix.
    """
    PETSc = _petsc.PETSc()
    A = ksp.getOperators()[0]
    world = _distributed(A)        # replicated b and x, the rank's rows solved with the others'
    if world:
        bv, xv = _world_vector(A, b), _world_vector(A, x)
    else:
        bv = PETSc.Vec().createWithArray(b, comm=PETSc.COMM_SELF)
        xv = PETSc.Vec().createWithArray(x, comm=PETSc.COMM_SELF)
    try:
        ksp.solve(bv, xv)
        if world:
            _gather(A, xv.getArray(readonly=True), x)
    except PETSc.Error as err:  # zero pivot in PETSc's or SuperLU's LU
        raise SingularMatrixError(-1, f"(PETSc error {err.ierr})") from None
    finally:
        bv.destroy()
        xv.destroy()
    reason = ksp.getConvergedReason()
    pc = ksp.getPC()
    package = pc.getFactorSolverType() if pc.getType() in ("lu", "cholesky") else None
    if package == "mumps":
        F = pc.getFactorMatrix()
        if F.getMumpsInfog(28) > 0:
            raise SingularMatrixError(F.getMumpsInfog(28))
    elif package == "petsc" and reason >= 0:
        _check_pivots(ksp)
    if reason < 0:
        pc_failed = getattr(PETSc.KSP.ConvergedReason, "DIVERGED_PC_FAILED", None)
        if pc_failed is None:      # petsc4py < 3.19 spells it this way
            pc_failed = PETSc.KSP.ConvergedReason.DIVERGED_PCSETUP_FAILED
        if reason == pc_failed:
            if package == "mumps" and _more_workspace(ksp):
                _apply(ksp, b, x)
                return
            raise SingularMatrixError(-1, "(factorization failed)")
        raise ConvergenceError(f"linear solver {ksp.getOptionsPrefix()} diverged (reason {reason})")


def _pivots(ksp) -> tuple[NDArray, NDArray]:
    """PETSc's own LU of the KSP's matrix: its pivots, and the rows they belong to.

    The factor stores ``1 / u_kk`` of the permuted matrix (``MatGetDiagonal`` of a factored
    ``SeqAIJ`` inverts them back); the permutation is the ordering the factorization used,
    recomputed (``MatGetOrdering`` is deterministic). Kept on the KSP per matrix state.
    """
    A = ksp.getOperators()[0]
    state = A.stateGet()
    cached = ksp.getAttr("__fem_pivots__")
    if cached is not None and cached[0] == state:
        return cached[1], cached[2]
    pc = ksp.getPC()
    pivots = pc.getFactorMatrix().getDiagonal().getArray().copy()
    order = ksp.getAttr("__fem_order__")
    if order is None:
        kind = _petsc.PETSc().Options().getString(
            (ksp.getOptionsPrefix() or "") + "pc_factor_mat_ordering_type", SMALL_LU_ORDERING)
        rows, cols = A.getOrdering(kind)
        order = rows.getIndices().copy()
        rows.destroy()
        cols.destroy()
        ksp.setAttr("__fem_order__", order)
    ksp.setAttr("__fem_pivots__", (state, pivots, order))
    return pivots, order


def _check_pivots(ksp) -> None:
    """Raise :class:`SingularMatrixError` for null pivots of PETSc's own LU (see NULL_PIVOT).

    A pivot is null when it is at most :data:`NULL_PIVOT` times the diagonal entry of its row
    (of the row's largest entry, where the diagonal is zero): relative to its own row, so that
    the test does not depend on units or on rows of different kinds (forces and moments).
    """
    A = ksp.getOperators()[0]
    state = A.stateGet()
    if ksp.getAttr("__fem_checked__") == state:
        return
    pivots, order = _pivots(ksp)
    diag = np.abs(A.getDiagonal().getArray())[order]
    if not np.all(diag > 0):
        ai, _, av = A.getValuesCSR()
        top = np.zeros(len(ai) - 1)
        rows = np.repeat(np.arange(len(top)), np.diff(ai))
        np.maximum.at(top, rows, np.abs(av))
        diag = np.where(diag > 0, diag, top[order])
    # an exact zero stops the factorization: its inverse, and the rows after it, are not finite
    null = int(np.sum(~(np.abs(pivots) > NULL_PIVOT * diag) | ~np.isfinite(pivots)))
    if null:
        raise SingularMatrixError(null)
    ksp.setAttr("__fem_checked__", state)


def _residual(A, x: NDArray, b: NDArray) -> NDArray:
    """``b - A x`` (one product with the PETSc matrix ``A``)."""
    PETSc = _petsc.PETSc()
    y = np.empty_like(b)
    world = _distributed(A)
    if world:
        xv, yv = _world_vector(A, x), _world_vector(A, y)
    else:
        xv = PETSc.Vec().createWithArray(x, comm=PETSc.COMM_SELF)
        yv = PETSc.Vec().createWithArray(y, comm=PETSc.COMM_SELF)
    try:
        A.mult(xv, yv)
        if world:
            _gather(A, yv.getArray(readonly=True), y)
    finally:
        xv.destroy()
        yv.destroy()
    return b - y


def _backward_error(r: NDArray, norm_A: float, x: NDArray, b: NDArray) -> float:
    """Normwise backward error ``|r| / (|A| |x| + |b|)`` in the infinity norm (0 for ``b = 0``)."""
    if len(r) == 0:
        return 0.0
    den = norm_A * float(np.abs(x).max()) + float(np.abs(b).max())
    return float(np.abs(r).max()) / den if den > 0 else 0.0


def equilibrated(rows: NDArray, aj: NDArray, av: NDArray, n: int, b: NDArray,
                 x: NDArray) -> tuple[NDArray, float, float]:
    """The equilibration of :func:`accuracy` of the CSR matrix ``(rows, aj, av)`` of order ``n``.

    Returns ``s`` (``S = A / (s s^T)``), the backward error of ``x`` in the equilibrated system
    and ``|S|_1``.
    """
    d = np.abs(np.where(rows == aj, av, 0.0))
    d = np.bincount(rows, weights=d, minlength=n)
    zero = d == 0
    if zero.all():
        d[:] = 1.0
    elif zero.any():                     # saddle point: a multiplier row, by its largest entry
        d[zero] = d[~zero].max()
        entry = np.abs(av) / np.sqrt(d[aj])
        top = np.zeros(n)
        np.maximum.at(top, rows, np.where(zero[rows] & ~zero[aj], entry, 0.0))
        d[zero] = np.where(top[zero] > 0, top[zero] ** 2, d[zero])
    s = np.sqrt(d)
    w = np.abs(av) / (s[rows] * s[aj])
    norm1 = float(np.bincount(aj, weights=w, minlength=n).max())
    norm_inf = float(np.bincount(rows, weights=w, minlength=n).max())
    r = b - np.bincount(rows, weights=av * x[aj], minlength=n)
    xs, rs, bs = x * s, r / s, b / s
    den = norm_inf * np.abs(xs).max() + np.abs(bs).max()
    berr = float(np.abs(rs).max() / den) if den > 0 else 0.0
    return s, berr, norm1


def accuracy(ksp, b: NDArray, x: NDArray, csr=None) -> tuple[float, float]:
    """Condition number and error bound of a solution ``x`` of ``A x = b`` (``A`` factored).

    The matrix is equilibrated, ``S = D^-1/2 A D^-1/2`` with ``D = |diag A|``, so that the estimate
    does not depend on the units of the DOFs (rotations beside translations); a row with a zero
    diagonal (a Lagrange multiplier's) is scaled so that its largest equilibrated entry is 1.
    ``|S|_1`` is exact; ``|S^-1|_1`` is Hager and Higham's estimate
    (``scipy.sparse.linalg.onenormest``) from solves with the existing factorization and its
    transpose (typically 8 to 20 solves, no new factorization). The bound
    ``cond * max(backward error of the equilibrated system, eps)`` on the relative error of ``x``
    (equilibrated norm) includes the rounding of the matrix entries themselves.

    A matrix on several ranks (the distributed solve, :mod:`fem.solvers.linear_system`) needs
    ``csr``, its whole CSR ``(indptr, indices, data)`` in the serial numbering of ``b`` and
    ``x`` (every rank has it): the solves are the distributed factorization's, gathered, the
    random start of the estimate is seeded, so that every rank makes the same estimate, and
    rank 0's is taken by all (one broadcast: the step's verdict on it is then one).

    Returns
    -------
    condition, bound : both NaN when the solver cannot solve with the transpose (or a
    distributed matrix comes without ``csr``)
    """
    import scipy.sparse.linalg as spla

    PETSc = _petsc.PETSc()
    A = ksp.getOperators()[0]
    world = _distributed(A)
    if world and csr is None:      # not estimated across ranks: the backward error alone
        return float("nan"), float("nan")
    if world:
        ai, aj, av = csr
        state = np.random.get_state()  # noqa: NPY002 - onenormest draws from the global one
        np.random.seed(12345)  # noqa: NPY002 - onenormest's columns: the same on every rank
        try:
            cond, bound = _accuracy(ksp, A, np.asarray(ai), np.asarray(aj), np.asarray(av), b,
                                    x, True, spla, PETSc)
        finally:
            np.random.set_state(state)  # noqa: NPY002
        return A.getComm().tompi4py().bcast((cond, bound), root=0)
    ai, aj, av = A.getValuesCSR()
    return _accuracy(ksp, A, ai, aj, av, b, x, False, spla, PETSc)


def _accuracy(ksp, A, ai, aj, av, b, x, world, spla, PETSc) -> tuple[float, float]:
    """:func:`accuracy` of the CSR ``(ai, aj, av)`` of ``A`` (``world``: on several ranks)."""
    n = len(ai) - 1
    if n == 0:
        return 1.0, 0.0
    rows = np.repeat(np.arange(n), np.diff(ai))
    s, berr, norm1 = equilibrated(rows, aj, av, n, b, x)

    def inverse(y, transpose=False):
        out = np.zeros(n)
        rhs = np.ascontiguousarray(s * np.ravel(y))
        if world:                  # the rank's rows in, the solution gathered to all
            yv, ov = _world_vector(A, rhs), _world_vector(A, out)
        else:
            yv = PETSc.Vec().createWithArray(rhs, comm=PETSc.COMM_SELF)
            ov = PETSc.Vec().createWithArray(out, comm=PETSc.COMM_SELF)
        try:
            (ksp.solveTranspose if transpose else ksp.solve)(yv, ov)
            if world:
                _gather(A, ov.getArray(readonly=True), out)
        finally:
            yv.destroy()
            ov.destroy()
        return s * out

    op = spla.LinearOperator((n, n), matvec=inverse, rmatvec=lambda y: inverse(y, True),
                             dtype=float)
    try:
        inv_norm = float(spla.onenormest(op)) if n > 1 else float(np.abs(inverse(np.ones(1))[0]))
    except PETSc.Error:            # no transposed solve with this solver
        return float("nan"), float("nan")
    cond = norm1 * inv_norm
    return cond, cond * max(berr, EPS)


def determinant_sign(ksp) -> int | None:
    """Sign of the determinant of the last factorization, if the solver computed it.

    PETSc's own LU: the product of its pivots' signs (:func:`_pivots`). MUMPS computes the
    determinant when ``ICNTL(33) = 1`` (``RINFOG(12) * 2^INFOG(34)``; the mantissa has its sign,
    and row and column permutations are accounted for). None otherwise.
    """
    pc = ksp.getPC()
    if pc.getType() == "lu" and pc.getFactorSolverType() == "petsc":
        # one ordering for rows and columns: the sign is that of the product of the pivots
        return -1 if np.count_nonzero(_pivots(ksp)[0] < 0) % 2 else 1
    if pc.getType() not in ("lu", "cholesky") or pc.getFactorSolverType() != "mumps":
        return None
    F = pc.getFactorMatrix()
    if F.getMumpsIcntl(33) != 1:
        return None
    return int(np.sign(F.getMumpsRinfog(12)))
