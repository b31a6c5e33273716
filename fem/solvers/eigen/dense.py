"""The dense back-end of the eigen front-end: every pair by LAPACK (small models, cross-checks).

* :func:`symmetric`: all finite pairs of ``K x = omega^2 M x`` with ``K`` symmetric (indefinite
  saddle points of joints' multipliers included) and ``M`` positive semi-definite. The unknowns
  without mass (rows of ``M`` that are zero: multipliers, massless rotations) carry the infinite
  eigenvalues and are condensed statically, exactly (``x_0 = -K_00^{-1} K_0r x_r``; Guyan 1965,
  AIAA J. 3, "Reduction of stiffness and mass matrices", exact for the infinite eigenvalues),
  the rest ``S = K_rr - K_r0 K_00^{-1} K_0r`` goes to standard form with the Cholesky factor of
  ``M_rr`` (where that is only semi-definite, with its eigen-decomposition, directions below
  ``1e-14`` of its largest eigenvalue condensed like the massless ones) and to ``eigh``
  (LAPACK ``dsyevd``).
* :func:`general`: all pairs of ``a x = nu b x`` (``eigh`` for a symmetric pencil with ``b``
  positive definite, else the QZ algorithm, ``eig``).
* :func:`quadratic`: all finite pairs of ``(p^2 M + p D + K) x = 0`` from the first-order pencil
  ``[[0, I], [-K, -D]] - p [[I, 0], [0, M]]`` (QZ, homogeneous eigenvalues: ``beta = 0`` for the
  infinite ones of a singular ``M``), with the left vectors (Tisseur & Meerbergen 2001, SIAM Rev.
  43, "The quadratic eigenvalue problem", section 3.4: the second block of the pencil's left
  vector is the quadratic's, conjugated).

Matrices come in scipy sparse and are made dense here; the front-end (:mod:`fem.solvers.eigen`)
refines, orders, checks and normalizes what these return.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from fem.errors import ModelError

NULL_MASS = 1e-14      # an eigenvalue of M_rr below this times its largest: no mass (condensed)


def symmetric(K, M) -> tuple[NDArray, NDArray]:
    """All finite pairs ``(omega2 (m,), X (n, m))`` of ``K x = omega^2 M x`` (module docstring).

    Raises :class:`~fem.errors.ModelError` when the unknowns without mass have no stiffness
    either (``K_00`` singular: a motion with neither).
    """
    import scipy.linalg as sla

    Kd, Md = K.toarray(), M.toarray()
    Kd, Md = 0.5 * (Kd + Kd.T), 0.5 * (Md + Md.T)
    n = len(Kd)
    zero = ~np.any(Md != 0.0, axis=1)
    r, z = np.flatnonzero(~zero), np.flatnonzero(zero)
    Mrr = Md[np.ix_(r, r)]
    try:
        return _condensed(Kd, r, z, sla.cholesky(Mrr, lower=True))
    except np.linalg.LinAlgError:                 # semi-definite: split off its null space
        pass
    m, U = sla.eigh(Mrr)
    if m.min(initial=0.0) < -NULL_MASS * max(m.max(initial=0.0), 1e-300):
        raise ModelError(f"the mass matrix is not positive semi-definite (an eigenvalue "
                         f"{m.min():.3g}, the largest {m.max():.3g})")
    keep = m > NULL_MASS * max(m.max(initial=0.0), 1e-300)
    T = np.zeros((n, n))                          # x = T x': M's eigenvectors, then the rest
    T[np.ix_(r, np.arange(len(r)))] = U
    T[z, len(r) + np.arange(len(z))] = 1.0
    rr = np.flatnonzero(keep)
    zz = np.r_[np.flatnonzero(~keep), len(r) + np.arange(len(z))]
    w, Xt = _condensed(T.T @ Kd @ T, rr, zz, np.diag(np.sqrt(m[keep])))
    return w, T @ Xt


def _condensed(Kd: NDArray, r: NDArray, z: NDArray, L: NDArray) -> tuple[NDArray, NDArray]:
    """Pairs of ``K`` with the mass ``L L^T`` (``L`` lower triangular) on ``r``, none on ``z``."""
    import scipy.linalg as sla

    n = len(Kd)
    S = Kd[np.ix_(r, r)]
    if len(z):
        Kzz, Kzr = Kd[np.ix_(z, z)], Kd[np.ix_(z, r)]
        lu = sla.lu_factor(Kzz, check_finite=False)
        if np.any(np.abs(np.diag(lu[0])) <= 1e-13 * max(np.abs(Kzz).max(), 1e-300)):
            raise ModelError("the unknowns without mass have no stiffness either (a motion "
                             "without stiffness or mass: a free beam's twist without rotary "
                             "inertia, a node with no mass); give it inertia or a support")
        G = -sla.lu_solve(lu, Kzr)                # x_z = G x_r
        S = S + Kd[np.ix_(r, z)] @ G
    # L^-1 S L^-T: the standard form, symmetric
    A = sla.solve_triangular(L, sla.solve_triangular(L, S, lower=True).T, lower=True)
    w, Y = np.linalg.eigh(0.5 * (A + A.T))
    Xr = sla.solve_triangular(L.T, Y, lower=False)
    X = np.zeros((n, len(w)))
    X[r] = Xr
    if len(z):
        X[z] = G @ Xr
    return w, X


def general(a, b, symmetric: bool) -> tuple[NDArray, NDArray]:
    """All pairs ``(nu (m,) complex, X (n, m))`` of ``a x = nu b x`` (LAPACK)."""
    import scipy.linalg as sla

    A, B = a.toarray(), b.toarray()
    if symmetric:
        try:
            nu, v = sla.eigh(A, B)
            return nu.astype(complex), v.astype(complex)
        except np.linalg.LinAlgError:      # b not positive definite: QZ
            pass
    nu, v = sla.eig(A, B)
    return nu, v


def quadratic(M, D, K) -> tuple[NDArray, NDArray, NDArray]:
    """Finite pairs ``(p, X, Y)`` of ``(p^2 M + p D + K) x = 0``, with the left vectors ``Y``.

    ``y^T (p^2 M + p D + K) = 0``. Eigenvalues with ``|beta| <= 1e-12 max |alpha|`` (infinite:
    the zero mass of multiplier rows) and beyond ``1e8`` times the problem's frequency scale
    ``sqrt(max |K| / max |M|)`` (round-off of the infinite ones) are left out.
    """
    import scipy.linalg as sla

    Kd, Dd, Md = (X.toarray() for X in (K, D, M))
    n = len(Kd)
    Id, Z = np.eye(n), np.zeros((n, n))
    (alpha, beta), vl, vr = sla.eig(np.block([[Z, Id], [-Kd, -Dd]]), np.block([[Id, Z], [Z, Md]]),
                                   left=True, right=True, homogeneous_eigvals=True)
    scale = np.abs(alpha).max(initial=1.0)
    finite = np.abs(beta) > 1e-12 * scale
    p = alpha[finite] / beta[finite]
    X, Y = vr[:n, finite], np.conj(vl[n:, finite])
    big = np.abs(p) < 1e8 * np.sqrt(max(np.abs(Kd).max(initial=0.0), 1e-300)
                                    / max(np.abs(Md).max(initial=0.0), 1e-300))
    return p[big], X[:, big], Y[:, big]
