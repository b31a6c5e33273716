"""The dense back-end of the eigen front-end: every pair by LAPACK (small models, cross-checks).

* :func:`symmetric`: all finite pairs of ``K x = omega^2 M x`` with ``K`` symmetric (indefinite
  saddle points of joints' multipliers included) and ``M`` positive semi-definite. The unknowns
  without mass (rows of ``M`` that are zero: multipliers, massless rotations; where the rest of
  ``M`` is only semi-definite, its eigenvectors below ``1e-14`` of its largest eigenvalue) carry
  the infinite eigenvalues: where their stiffness block is regular they are condensed
  statically, exactly (``x_0 = -K_00^{-1} K_0r x_r``; Guyan 1965, AIAA J. 3, "Reduction of
  stiffness and mass matrices", exact for the infinite eigenvalues); where it is singular (the
  multipliers of joints that hold massive unknowns) its null directions are constraints
  ``G x_r = 0`` and the pairs live in their null space (the null-space method of constrained
  eigenproblems; Golub 1973, SIAM Rev. 15, "Some modified matrix eigenvalue problems"). What
  remains goes to standard form with the Cholesky factor of the mass and to ``eigh`` (LAPACK
  ``dsyevd``).
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

    Raises :class:`~fem.errors.ModelError` when ``M`` is not positive semi-definite.
    """
    import scipy.linalg as sla

    Kd, Md = K.toarray(), M.toarray()
    Kd, Md = 0.5 * (Kd + Kd.T), 0.5 * (Md + Md.T)
    n = len(Kd)
    zero = ~np.any(Md != 0.0, axis=1)
    r = np.flatnonzero(~zero)
    Mrr = Md[np.ix_(r, r)]
    T = np.eye(n)[:, np.r_[r, np.flatnonzero(zero)]]     # x = T x': the massive unknowns first
    try:
        L = sla.cholesky(Mrr, lower=True)
        mass = len(r)
    except np.linalg.LinAlgError:                   # semi-definite: rotate to its eigenvectors
        m, U = sla.eigh(Mrr)
        top = max(m.max(initial=0.0), 1e-300)
        if m.min(initial=0.0) < -NULL_MASS * top:
            raise ModelError(f"the mass matrix is not positive semi-definite (an eigenvalue "
                             f"{m.min():.3g}, the largest {top:.3g})") from None
        keep = m > NULL_MASS * top
        T[:, :len(r)] = T[:, :len(r)] @ U
        order = np.r_[np.flatnonzero(keep), np.flatnonzero(~keep), len(r) + np.arange(n - len(r))]
        T = T[:, order]
        L = np.diag(np.sqrt(m[keep]))
        mass = int(keep.sum())
    w, Xt = _condensed(T.T @ Kd @ T, mass, L)
    return w, T @ Xt


def _condensed(Kd: NDArray, mass: int, L: NDArray) -> tuple[NDArray, NDArray]:
    """Pairs of ``K`` with the mass ``L L^T`` on its first ``mass`` unknowns, none on the rest.

    The massless block ``K_cc`` splits by its eigen-decomposition into a regular part, condensed
    statically, and a null part: constraints ``G a = 0`` on the massive unknowns ``a`` (the rows
    of multipliers that hold them), whose null space ``Z`` carries the finite pairs; the
    multipliers then follow from the massive rows by least squares.
    """
    import scipy.linalg as sla

    n = len(Kd)
    a, c = np.arange(mass), np.arange(mass, n)
    S = Kd[np.ix_(a, a)]
    Z = np.eye(mass)
    if len(c):
        Kca = Kd[np.ix_(c, a)]
        w, U = np.linalg.eigh(Kd[np.ix_(c, c)])
        reg = np.abs(w) > 1e-12 * max(np.abs(w).max(initial=0.0), np.abs(Kca).max(initial=0.0),
                                      1e-300)
        Ur, Un = U[:, reg], U[:, ~reg]
        Cr = -(Ur.T @ Kca) / w[reg][:, None]          # the regular part: c_r = Cr a
        S = S + Kca.T @ Ur @ Cr
        G = Un.T @ Kca                                # the null part: G a = 0
        if len(G) and np.linalg.svd(G, compute_uv=False).min() <= 1e-12 * max(
                np.abs(Kd).max(), 1e-300):
            # a direction with neither mass nor stiffness: K - lam M singular for every lam
            raise ModelError("a motion without stiffness has no mass either (a free beam's "
                             "twist without rotary inertia, a node with no mass); give it "
                             "inertia or a support")
        if len(G):
            Z = sla.null_space(G)
    # L^-1 Z^T S Z L^-T in Z's coordinates: Z^T L L^T Z = R R^T
    R = sla.cholesky(Z.T @ L @ L.T @ Z, lower=True) if Z.shape[1] else np.zeros((0, 0))
    Sz = Z.T @ S @ Z
    A = sla.solve_triangular(R, sla.solve_triangular(R, Sz, lower=True).T, lower=True)
    w2, Y = np.linalg.eigh(0.5 * (A + A.T))
    Xa = Z @ sla.solve_triangular(R.T, Y, lower=False)
    X = np.zeros((n, len(w2)))
    X[a] = Xa
    if len(c):
        X[c] = Ur @ (Cr @ Xa)
        if Un.shape[1]:                               # multipliers: the massive rows balance
            Mx = L @ (L.T @ Xa)
            rhs = Mx * w2 - (Kd[np.ix_(a, a)] @ Xa + Kd[np.ix_(a, c)] @ X[c])
            X[c] += Un @ np.linalg.lstsq(Kd[np.ix_(a, c)] @ Un, rhs, rcond=None)[0]
    return w2, X


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
