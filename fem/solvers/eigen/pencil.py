"""Eigen-solvers behind one call: the eigenpairs of largest real part of ``a x = nu b x``.

:func:`largest_real` takes scipy sparse matrices and chooses the method by size:

* up to :data:`DENSE_LIMIT` unknowns, LAPACK through scipy (all pairs; ``eigh`` for a symmetric
  pencil with ``b`` positive definite, else ``eig``): faster and more robust there, and SLEPc
  3.18's dense GNHEP sort fails on close complex pairs (``tgexc``);
* above it, SLEPc's Krylov-Schur with ``b`` factored by a direct LU
  (:func:`fem.linalg.eigen_solver`), its options under the caller's prefix.

Besides the pairs it returns the largest eigenvalue magnitude of the pencil, the scale against
which a caller tells round-off from a genuine eigenvalue (an exact zero comes out as about
``eps`` times it). The buckling step is the first caller; the modal and linearized steps (own
shift-invert and two-sided Lanczos) are to join here.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from fem import _petsc, interrupt, linalg
from fem.errors import ConvergenceError

DENSE_LIMIT = 400   # below this many unknowns, a dense LAPACK solve is faster and more robust


@dataclass
class Eigenpairs:
    """Eigenvalues ``(m,)`` (complex), their vectors, and the pencil's largest magnitude."""

    values: NDArray
    vectors: list[NDArray]
    scale: float
    symmetric: bool
    method: str


def is_symmetric(csr, rtol: float = 1e-10) -> bool:
    """Whether a sparse matrix is symmetric to ``rtol`` of its largest entry."""
    diff = abs(csr - csr.T).max() if csr.nnz else 0.0
    return diff <= rtol * max(abs(csr).max(), 1e-300)


def largest_real(a, b, count: int, prefix: str, what: str = "eigen-solve") -> Eigenpairs:
    """At least ``count`` eigenpairs of largest real part of ``a x = nu b x`` (module docstring).

    ``a``, ``b`` are scipy sparse matrices; ``prefix`` the options prefix of the SLEPc solver;
    ``what`` names the solve in errors. Raises :class:`~fem.errors.ConvergenceError` when SLEPc
    fails.
    """
    symmetric = is_symmetric(a) and is_symmetric(b)
    if a.shape[0] <= DENSE_LIMIT:
        nu, vecs = _dense(a.toarray(), b.toarray(), symmetric)
        finite = nu[np.isfinite(nu)]
        scale = float(np.abs(finite).max()) if len(finite) else 0.0
        return Eigenpairs(nu, vecs, scale, symmetric, "lapack")
    nu, vecs, scale = _slepc(a, b, count, prefix, symmetric, what)
    return Eigenpairs(nu, vecs, scale, symmetric, "slepc")


def _dense(a, b, symmetric):
    """All eigenpairs of ``a x = nu b x`` (LAPACK through scipy)."""
    import scipy.linalg as sla

    if symmetric:
        try:
            nu, v = sla.eigh(a, b)
            return nu.astype(complex), list(v.T)
        except np.linalg.LinAlgError:      # b not positive definite: fall through
            pass
    nu, v = sla.eig(a, b)
    return nu, list(v.T)


def _slepc(a, b, count, prefix, symmetric, what):
    """Largest real ``nu``: SLEPc Krylov-Schur, ``b`` factored by LU; and the largest ``|nu|``."""
    SLEPc = _petsc.SLEPc()
    A, B = (linalg.matrix_from_scipy(m) for m in (a, b))
    eps = linalg.eigen_solver(A, B, prefix, symmetric=symmetric,
                              nev=count if symmetric else 2 * count + 4)
    try:
        eps.solve()
    except _petsc.PETSc().Error as err:
        for obj in (eps, A, B):
            obj.destroy()
        raise ConvergenceError(f"{what} failed (PETSc error {err.ierr})") from None
    vr = A.createVecRight()
    vals, vecs = [], []
    for i in range(eps.getConverged()):
        vals.append(eps.getEigenpair(i, vr))
        vecs.append(vr.getArray().copy())
    scale = max((abs(v) for v in vals), default=0.0)
    if not vals or any(v.real > 0 for v in vals):
        # Are they all round-off? Only the largest magnitude of the pencil (a tension mode, say)
        # tells; the factorization of b is reused. A negative one is kept for the caller's report.
        interrupt.check()
        eps.setWhichEigenpairs(SLEPc.EPS.Which.LARGEST_MAGNITUDE)
        eps.setDimensions(nev=1)
        try:
            eps.solve()
            if eps.getConverged():
                top = eps.getEigenpair(0, vr)
                scale = max(scale, abs(top))
                if top.real < 0:
                    vals.append(top)
                    vecs.append(vr.getArray().copy())
        except _petsc.PETSc().Error:
            pass                    # keep the scale of the values found
    for obj in (eps, A, B, vr):
        obj.destroy()
    return np.array(vals, dtype=complex), vecs, scale
