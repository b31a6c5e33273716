"""Small systems solved with LAPACK through numpy: the linear solves of small models, no PETSc.

A model of a few elements (a one-element cantilever, a small truss) solves systems of a few
dozen unknowns, and starting PETSc and MPI for them took longer than everything else of such a
run (0.26 s of 0.8 s, issue 32). :class:`DenseLU` holds the free-DOF matrix as a dense array
and gives what :class:`fem.solvers.linear_system.LinearSystem` gives with PETSc's own LU, the
solver these systems had:

* the null-pivot test of PETSc's own LU and of the banded LU (:mod:`fem.solvers.banded`): LU
  without pivoting (:func:`factor`, elimination column by column), a pivot at most
  :data:`fem.linalg.NULL_PIVOT` times the largest entry of its row is null, and elimination
  stops there (:class:`fem.linalg.SingularMatrixError`); the sign of the determinant is the
  product of the pivots' signs. A symmetric positive definite matrix gets the same pivots from
  LAPACK's Cholesky factor (:func:`positive_pivots`), one call instead of the column loop;
* solves by LAPACK's ``dgesv`` (``numpy.linalg.solve``: LU with partial pivoting, backward
  stable), checked by their backward error and refined (:func:`fem.linalg.refine`), non-finite
  right-hand sides and solutions refused (:class:`fem.linalg.NonFiniteError`);
* the accuracy of a linear step's solution (:func:`fem.linalg.checked.equilibrated` as
  :func:`fem.linalg.accuracy` equilibrates): the condition number of the equilibrated matrix
  from its inverse (``numpy.linalg.inv``), exact where PETSc's path estimates it (Hager and
  Higham's 1-norm estimate is a lower bound of it, usually equal).

It is chosen where PETSc's own LU would be (small, no zero diagonal, no PETSc options for the
step) up to :data:`DENSE_MAX` unknowns. A refill and a checked solve of a clamped 2D beam chain
(symmetric positive definite) took, dense and with PETSc's own LU through petsc4py, 45 / 75 us
at 3 unknowns, 40 / 60 at 12, 44 / 55 at 30, 83 / 62 at 60, 690 / 67 at 120 (``dgesv`` grows
with ``n^3``; 2-core machine at a load of 7). Matrices that are not (a non-symmetric or
indefinite tangent) take the column loop: 0.6 ms at 30 unknowns, 1.7 ms at 60. At 60 unknowns
the 0.26 s that starting PETSc and MPI takes pays for a few hundred such solves. Serial only.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from fem.linalg.checked import NonFiniteError, SolveReport, equilibrated, refine
from fem.linalg.objects import NULL_PIVOT, SingularMatrixError

#: the most unknowns solved this way (module docstring); larger systems keep PETSc's LU
DENSE_MAX = 60
ROUND_OFF = float(np.finfo(float).eps)     # fem.linalg.checked's EPS (a name eigen scans flag)


def factor(a: NDArray, null: float = NULL_PIVOT) -> tuple[NDArray, int]:
    """LU of ``a`` without pivoting, in place; ``(pivots, null pivots)``.

    A pivot is null when ``|u_kk| <= null * max_j |a_kj|`` (the row's largest entry of the
    matrix given) or is not finite; elimination stops at the first, and it and the columns after
    it are counted, as :func:`fem.solvers.banded_kernel.factor` does.
    """
    n = a.shape[0]
    scale = np.abs(a).max(axis=1) if n else np.zeros(0)
    pivots = np.zeros(n)
    for k in range(n):
        p = a[k, k]
        pivots[k] = p
        if not (abs(p) > null * scale[k]) or not abs(p) < 1e308:
            return pivots, n - k
        a[k + 1:, k] /= p
        a[k + 1:, k + 1:] -= np.multiply.outer(a[k + 1:, k], a[k, k + 1:])
    return pivots, 0


def positive_pivots(a: NDArray, null: float = NULL_PIVOT) -> NDArray | None:
    """The pivots :func:`factor` finds, from LAPACK's Cholesky factor, or None.

    For a symmetric positive definite ``a`` (most stiffness matrices of supported structures)
    LU without pivoting is ``L D L^T`` with ``D`` the squares of the Cholesky factor's diagonal:
    one LAPACK call (``dpotrf``) instead of a column loop. None when ``a`` is not exactly
    symmetric, Cholesky fails (indefinite, or singular to round-off) or a pivot is null by
    :func:`factor`'s test: :func:`factor` then decides.
    """
    if a.shape[0] == 0 or not np.array_equal(a, a.T):
        return None
    try:
        pivots = np.square(np.diagonal(np.linalg.cholesky(a)))
    except np.linalg.LinAlgError:
        return None
    if not np.all(pivots > null * np.abs(a).max(axis=1)):
        return None
    return pivots


class DenseLU:
    """The free-DOF matrix of CSR pattern ``indptr, indices``, dense (module docstring)."""

    def __init__(self, indptr: NDArray, indices: NDArray):
        n = len(indptr) - 1
        self.n = n
        self._pattern = (indptr, indices)
        self.rows = self.cols = self.flat = None      # the entries' places, at the first fill
        self.A = np.zeros((n, n))
        self.data = None
        self.pivots = None
        self.norm = 0.0

    def fill(self, data: NDArray) -> None:
        """New CSR values: checked at the next solve.

        The entries' rows and flat positions are made here the first time: a step whose
        solves a compiled loop takes (:mod:`fem.analysis.planar_static`) never fills.
        """
        if self.flat is None:
            indptr, indices = self._pattern
            self.rows = np.repeat(np.arange(self.n), np.diff(indptr))
            self.cols = np.asarray(indices, dtype=np.int64)
            self.flat = self.rows * self.n + self.cols
        self.data = np.ascontiguousarray(data, dtype=float)
        self.A = np.zeros((self.n, self.n))
        self.A.reshape(-1)[self.flat] = self.data
        self.pivots = None

    def factor(self) -> None:
        """Factor the values of the last :meth:`fill` now (:meth:`solve` does it when due)."""
        pivots = positive_pivots(self.A)
        if pivots is None:
            pivots, null = factor(self.A.copy())
            if null:
                raise SingularMatrixError(null)
        self.pivots = pivots
        self.norm = float(np.abs(self.A).sum(axis=1).max()) if self.n else 0.0

    def solve(self, b: NDArray) -> tuple[NDArray, SolveReport]:
        """``A^-1 b`` and its accuracy, as :func:`fem.linalg.solve_checked` gives them."""
        b = np.ascontiguousarray(b, dtype=float)
        if not np.isfinite(b).all():
            bad = int(np.sum(~np.isfinite(b)))
            raise NonFiniteError(f"the right-hand side is not finite ({bad} of {len(b)} entries "
                                 "are NaN or infinite: a load or a state that overflowed)")
        if self.pivots is None:
            self.factor()
        if self.n == 0:
            return b.copy(), SolveReport(0.0, 0.0, 0)
        A = self.A
        x = np.linalg.solve(A, b)
        if not np.isfinite(x).all():
            raise NonFiniteError(f"the solution overflowed (the right-hand side reaches "
                                 f"{np.abs(b).max():.3g}; the solution is not finite)")

        def residual(x: NDArray) -> tuple[NDArray, float]:
            r = b - A @ x
            den = self.norm * float(np.abs(x).max()) + float(np.abs(b).max())
            return r, float(np.abs(r).max()) / den if den > 0 else 0.0

        x, report = refine(x, lambda r: np.linalg.solve(A, r), residual)
        return x, report

    def determinant_sign(self) -> int:
        """Sign of the determinant: the product of the pivots' signs (LU without pivoting)."""
        if self.pivots is None:
            self.factor()
        return -1 if np.count_nonzero(self.pivots < 0) % 2 else 1

    def accuracy(self, b: NDArray, x: NDArray) -> tuple[float, float]:
        """Condition number and error bound of ``x`` (as :func:`fem.linalg.accuracy`)."""
        n = self.n
        if n == 0:
            return 1.0, 0.0
        s, berr, norm1 = equilibrated(self.rows, self.cols, self.data, n, b, x)
        S = self.A / np.multiply.outer(s, s)
        try:
            inv_norm = float(np.abs(np.linalg.inv(S)).sum(axis=0).max())
        except np.linalg.LinAlgError:
            return float("inf"), float("inf")
        cond = norm1 * inv_norm
        return cond, cond * max(berr, ROUND_OFF)
