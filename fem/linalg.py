"""PETSc layer: Mat/Vec from the assembler's CSR pattern, direct solvers, the options database.

Helpers create petsc4py objects and nothing wraps them (STYLE.md, "PETSc"). A step creates its
matrix and KSP once; Newton iterations only refill values, so PETSc reuses the symbolic
factorization while the pattern holds. Each KSP has an options prefix (``<step>_``); options from
the deck's ``[solver]`` table are pushed under that prefix, never overriding an option already in
the database (the command line wins), and stay there until the step releases them
(:func:`release_options`): some packages, MUMPS among them, read their options only when the first
factorization happens.

The default is a direct LU with the best package PETSc was built with: MUMPS, then SuperLU, then
PETSc's own LU. With MUMPS, null-pivot detection (``ICNTL(24)``) is on, so a singular matrix (a
mechanism) is reported instead of solved into garbage.
"""

from __future__ import annotations

import logging

import numpy as np
from numpy.typing import NDArray

from fem import _petsc
from fem.errors import ConvergenceError

log = logging.getLogger(__name__)

LU_PACKAGES = ("mumps", "superlu", "petsc")


class SingularMatrixError(Exception):
    """The factorization found zero pivots; ``null_pivots`` says how many (-1 if unknown)."""

    def __init__(self, null_pivots: int, detail: str = ""):
        self.null_pivots = null_pivots
        super().__init__(f"singular matrix ({null_pivots} null pivots) {detail}".strip())


def external_packages() -> list[str]:
    """Solver packages PETSc was built with, among those fem knows about."""
    PETSc = _petsc.PETSc()
    names = ("mumps", "superlu", "superlu_dist", "umfpack", "klu", "cholmod", "hypre", "pastix",
             "strumpack", "mkl_pardiso")
    return [n for n in names if PETSc.Sys.hasExternalPackage(n)]


def best_lu_package() -> str:
    """The direct solver fem uses by default: MUMPS, then SuperLU, then PETSc's own LU."""
    have = external_packages()
    for name in LU_PACKAGES[:-1]:
        if name in have:
            return name
    return "petsc"


def create_matrix(indptr: NDArray, indices: NDArray, prefix: str | None = None):
    """A serial AIJ matrix on the CSR pattern (sorted columns); new nonzeros are an error.

    The matrix is made on arrays of its own (``MatCreateSeqAIJWithArrays``): PETSc works on
    them in place, so :func:`fill_matrix` copies a refill straight into the value array instead
    of inserting it row by row (``setValuesCSR`` with its per-row searches and the conversion
    of the index arrays to PETSc's integers at every call).
    """
    PETSc = _petsc.PETSc()
    n = len(indptr) - 1
    csr = (np.array(indptr, dtype=PETSc.IntType), np.array(indices, dtype=PETSc.IntType),
           np.zeros(len(indices)))
    A = PETSc.Mat().createAIJWithArrays((n, n), csr, comm=PETSc.COMM_SELF)
    A.setOption(PETSc.Mat.Option.NEW_NONZERO_ALLOCATION_ERR, True)
    if prefix:
        A.setOptionsPrefix(prefix)
    return A


def matrix_from_scipy(csr):
    """A serial AIJ matrix with the pattern and values of a ``scipy.sparse`` matrix."""
    csr = csr.tocsr()
    if not csr.has_canonical_format:    # sorted columns, one entry each
        csr = csr.copy()
        csr.sum_duplicates()
    A = create_matrix(csr.indptr, csr.indices)
    fill_matrix(A, csr.indptr, csr.indices, csr.data)
    return A


def fill_matrix(A, indptr: NDArray, indices: NDArray, data: NDArray) -> None:
    """Overwrite the values of ``A`` with CSR ``data`` on the pattern it was created with.

    A matrix of :func:`create_matrix` gets the values copied into its own value array (the
    pattern is the one it was made with); ``assemble`` then marks it changed, so the next solve
    factors it again. Other matrices are refilled through ``setValuesCSR``.
    """
    PETSc = _petsc.PETSc()
    csr = A.getAttr("__csr__")
    if csr is not None and len(csr[2]) == len(data) and len(csr[0]) == len(indptr):
        np.copyto(csr[2], data)
    else:
        A.setValuesCSR(indptr.astype(PETSc.IntType, copy=False),
                       indices.astype(PETSc.IntType, copy=False),
                       np.ascontiguousarray(data, dtype=float))
    A.assemble()



#: option families of SLEPc's eigen-solver: a deck writes them with SLEPc's names, and they reach
#: the eigen-solver of the step, whose prefix is ``<step>_eps_`` (:func:`petsc_name`)
EIGEN_FAMILIES = ("eps_", "st_", "bv_", "ds_", "rg_")
_PUSHED: dict[str, list[str]] = {}


def petsc_name(key: str) -> str:
    """The PETSc option name a deck key stands for, after the step's prefix ``<step>_``.

    Linear-solver options keep their name; SLEPc options get the eigen-solver's ``eps_``.

    >>> petsc_name("-ksp_type"), petsc_name("eps_tol"), petsc_name("st_ksp_type")
    ('ksp_type', 'eps_eps_tol', 'eps_st_ksp_type')
    """
    name = key.lstrip("-")
    return "eps_" + name if name.lower().startswith(EIGEN_FAMILIES) else name


def push_options(prefix: str, options: dict | None) -> None:
    """Put ``options`` into the database under ``prefix`` unless already set (command line wins).

    Deck names become PETSc names as :func:`petsc_name` says: SLEPc options (``eps_tol``) go to
    the eigen-solver of the step (``<prefix>eps_eps_tol``). The deck's options were checked when
    the deck was read and PETSc started (:mod:`fem.io.solver_options`).
    """
    opts = _petsc.PETSc().Options()
    pushed = _PUSHED.setdefault(prefix, [])
    for key, value in (options or {}).items():
        name = prefix + petsc_name(key)
        if opts.hasName(name):
            continue
        if isinstance(value, bool):
            value = "true" if value else "false"
        opts.setValue(name, "" if value is None else str(value))
        pushed.append(name)


def release_options(prefix: str) -> None:
    """Remove the options :func:`push_options` put under ``prefix``."""
    opts = _petsc.PETSc().Options()
    for name in _PUSHED.pop(prefix, []):
        opts.delValue(name)


#: Unknowns up to which a step factors with PETSc's own LU instead of MUMPS (:func:`lu_package`),
#: and up to which it does so for chain-like matrices (at most :data:`CHAIN_ENTRIES` stored
#: entries per row). Measured (refill, factorization and solve, ms, on a shared 2-core machine):
#: 2D beam chains of 30 / 300 / 900 / 1500 / 3000 / 6000 / 12000 unknowns, MUMPS 0.18 / 0.68 /
#: 2.1 / 3.1 / 11 / 27 / 53, PETSc's LU (nested dissection) 0.008 / 0.037 / 0.10 / 0.18 / 0.39 /
#: 0.83 / 1.9; 3D lattices of beams (``benchmarks.common.space_frame``) of 288 / 600 / 1080 /
#: 1764 unknowns, MUMPS 0.70 / 2.0 / 7.2 / 37, PETSc's LU 0.32 / 2.1 / 10 / 57: their fill
#: grows faster, they meet near 600. Chains stop at 6000 unknowns, where their smallest
#: pivots stay well above :data:`NULL_PIVOT` of their diagonal.
SMALL_LU = 600
SMALL_CHAIN_LU = 6000
CHAIN_ENTRIES = 12

#: A pivot of PETSc's own LU at most this times the diagonal entry it came from is a null pivot
#: (:func:`_check_pivots`): a mechanism leaves round-off there (9e-17 in the mechanism tests of
#: tests/test_deck_errors.py), while regular tangents keep their smallest pivot far above it
#: (measured: clamped 2D cantilever chains of 300 / 1000 / 2000 beams 1.5e-7 / 4e-9 / 5e-10,
#: the smallest of tests/test_nonlinear_static.py's 1.5e-7).
NULL_PIVOT = 1e-12

#: The fill-reducing ordering of PETSc's own LU (options may choose another).
SMALL_LU_ORDERING = "nd"


def lu_package(n: int, options: dict | None = None, prefix: str = "",
               zero_diagonal: bool = False, nnz: int | None = None) -> str:
    """The LU package of a step's ``n`` unknowns: PETSc's own for small systems, else the best.

    MUMPS's fixed cost per factorization (0.4 ms) is most of a Newton iteration of a small
    model; PETSc's own sparse LU has almost none. It does not pivot, so a matrix with zero
    diagonal entries (Lagrange multipliers: ``zero_diagonal``) keeps the best package, and so
    does a step whose deck or command-line options speak to MUMPS or SuperLU (``mat_mumps_*``,
    ``mat_superlu_*``) or choose the package: they meant a particular one. Null pivots are
    detected after the factorization (:func:`_check_pivots`), as MUMPS's ``ICNTL(24)`` does.
    ``nnz``, the stored entries, admits chain-like matrices up to :data:`SMALL_CHAIN_LU`.
    """
    chain = nnz is not None and n <= SMALL_CHAIN_LU and nnz <= CHAIN_ENTRIES * n
    if (n > SMALL_LU and not chain) or zero_diagonal:
        return best_lu_package()
    given = list(options or ())
    if prefix:
        given += [k[len(prefix):] for k in _petsc.PETSc().Options().getAll()
                  if k.startswith(prefix)]
    if any(k.startswith(("mat_mumps_", "mat_superlu_", "pc_factor_mat_solver_type"))
           for k in given):
        return best_lu_package()
    return "petsc"


def direct_solver(A, prefix: str, options: dict | None = None, package: str | None = None,
                  symmetric: bool = False):
    """A KSP on ``A``: ``preonly`` + LU with the best package, then deck/command-line options.

    Parameters
    ----------
    A : petsc4py Mat, the operator (its values may be refilled later)
    prefix : options prefix, e.g. ``"static1_"``
    options : deck options (``{"ksp_type": "gmres", "pc_type": "ilu"}``), pushed under ``prefix``
    package : the default LU package (default: the best, :func:`best_lu_package`); the options
        may choose another
    symmetric : ``A`` is symmetric (the caller checked): with MUMPS the default is then its
        symmetric indefinite ``L D L^T`` (``pc_type cholesky`` on an AIJ matrix: MUMPS ``SYM =
        2``, from the upper triangle, pivoting for an indefinite or saddle-point ``A``), which
        stores about half the factor entries and takes half the factorization's work (a lattice
        of 1e5 DOFs: 7.7e7 entries instead of 1.75e8, 23 s instead of 44); other packages keep LU
    """
    PETSc = _petsc.PETSc()
    ksp = PETSc.KSP().create(comm=A.getComm())
    ksp.setOptionsPrefix(prefix)
    ksp.setOperators(A)
    ksp.setType("preonly")
    pc = ksp.getPC()
    pc.setType("lu")
    package = package or best_lu_package()
    pc.setFactorSolverType(package)
    if package == "petsc":
        # only an exact zero stops the factorization (the default, 2.2e-14, is absolute and
        # unit-dependent); null pivots are judged relative to the matrix (_check_pivots)
        pc.setFactorPivot(zeropivot=0.0)
        pc.setFactorOrdering(SMALL_LU_ORDERING)
    name, opts = prefix + "pc_factor_mat_solver_type", PETSc.Options()
    chosen = (opts.getString(name) if opts.hasName(name) else None) \
        or (options or {}).get("pc_factor_mat_solver_type") or package
    defaults = {}
    if chosen == "mumps":
        defaults["mat_mumps_icntl_24"] = 1          # detect null pivots instead of dividing by them
        if symmetric:
            pc.setType("cholesky")                  # a deck's or the command line's pc_type wins
            pc.setFactorSolverType("mumps")
    push_options(prefix, {**defaults, **(options or {})})
    try:
        ksp.setFromOptions()
    except Exception:
        ksp.destroy()          # a bad option: nothing half-built stays behind
        raise
    return ksp


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
    if m == 0 or ksp.getType() != "preonly" or pc.getType() not in ("lu", "cholesky"):
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


def _apply(ksp, b: NDArray, x: NDArray) -> None:
    """One ``ksp.solve`` into ``x``; raises on a singular factorization or a divergence.

    A MUMPS factorization that runs out of workspace is repeated with more
    (:func:`_more_workspace`), not reported as a singular matrix.
    """
    PETSc = _petsc.PETSc()
    bv = PETSc.Vec().createWithArray(b, comm=PETSc.COMM_SELF)
    xv = PETSc.Vec().createWithArray(x, comm=PETSc.COMM_SELF)
    try:
        ksp.solve(bv, xv)
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
    xv = PETSc.Vec().createWithArray(x, comm=PETSc.COMM_SELF)
    yv = PETSc.Vec().createWithArray(y, comm=PETSc.COMM_SELF)
    try:
        A.mult(xv, yv)
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


def accuracy(ksp, b: NDArray, x: NDArray) -> tuple[float, float]:
    """Condition number and error bound of a solution ``x`` of ``A x = b`` (``A`` factored).

    The matrix is equilibrated, ``S = D^-1/2 A D^-1/2`` with ``D = |diag A|``, so that the estimate
    does not depend on the units of the DOFs (rotations beside translations); a row with a zero
    diagonal (a Lagrange multiplier's) is scaled so that its largest equilibrated entry is 1.
    ``|S|_1`` is exact; ``|S^-1|_1`` is Hager and Higham's estimate
    (``scipy.sparse.linalg.onenormest``) from solves with the existing factorization and its
    transpose (typically 8 to 20 solves, no new factorization). The bound
    ``cond * max(backward error of the equilibrated system, eps)`` on the relative error of ``x``
    (equilibrated norm) includes the rounding of the matrix entries themselves.

    Returns
    -------
    condition, bound : both NaN when the solver cannot solve with the transpose
    """
    import scipy.sparse.linalg as spla

    PETSc = _petsc.PETSc()
    A = ksp.getOperators()[0]
    ai, aj, av = A.getValuesCSR()
    n = len(ai) - 1
    if n == 0:
        return 1.0, 0.0
    rows = np.repeat(np.arange(n), np.diff(ai))
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

    def inverse(y, transpose=False):
        out = np.zeros(n)
        yv = PETSc.Vec().createWithArray(np.ascontiguousarray(s * np.ravel(y)),
                                         comm=PETSc.COMM_SELF)
        ov = PETSc.Vec().createWithArray(out, comm=PETSc.COMM_SELF)
        try:
            (ksp.solveTranspose if transpose else ksp.solve)(yv, ov)
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
