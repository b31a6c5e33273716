"""Shift-invert block Lanczos for ``K x = omega^2 M x`` (symmetric ``K``, ``M >= 0``).

The spectral transformation of Ericsson & Ruhe (1980): the eigenvalues of ``K x = lam M x`` nearest
a shift ``sigma`` are the largest of ``OP = (K - sigma M)^{-1} M``, ``theta = 1 / (lam - sigma)``,
and ``OP`` is symmetric in the ``M`` inner product. ``K - sigma M`` is factored once (the caller's
``solve``: a PETSc KSP with a direct LU) and every Lanczos block costs one block solve.

As in the shifted block Lanczos of Grimes, Lewis & Simon (1994):

* the start block is ``OP`` applied to a random block, so it lies in the range of ``OP`` (a
  singular ``M``, the zero mass of multiplier rows or massless DOFs, adds no spurious
  directions: the infinite eigenvalues map to ``theta = 0`` and are never found);
* every new block is ``M``-orthogonalized against all previous ones by two passes of block
  classical Gram-Schmidt (BLAS-3 products ``V^T (M W)``, never a loop over vectors: full
  reorthogonalization, the robust choice for the few hundred vectors a modal analysis needs) and
  then within itself by a Cholesky factorization of its ``M``-Gram matrix; a rank-deficient block
  (an invariant subspace) is completed with fresh random directions;
* Ritz pairs come from the projection ``H = V^T M OP V`` (symmetric; ``V^T M V = I``), the
  block tridiagonal matrix of the Lanczos recurrence computed from the blocks themselves (with
  full reorthogonalization the two agree to round-off), and a pair is accepted by its true
  residual in the transformed problem, ``||OP x - theta x||_M <= tol |theta|``, computed from
  the stored ``OP V`` (no extra solve), which bounds the relative error of ``omega^2`` of the
  lowest modes of stiff models as well as of the others. The backward error of the original
  problem, ``||K x - omega^2 M x|| / ((||K|| + |omega^2| ||M||) ||x||)``, is reported with
  every pair.

The basis grows until the ``count`` eigenvalues nearest the shift are accepted (at most
``max_dim`` vectors; then :class:`~fem.errors.ConvergenceError`). Modes come back
``M``-normalized, ordered by ``omega^2``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla
from numpy.typing import NDArray

from fem import interrupt
from fem.errors import ConvergenceError


@dataclass
class ModalPairs:
    """Eigenpairs of ``K x = omega^2 M x``.

    Eigenvalues ``omega2 (m,)`` ascending, ``M``-normalized ``vectors (n, m)``, their backward
    errors, the method and the size of the space that gave them.
    """

    omega2: NDArray
    vectors: NDArray
    backward_errors: NDArray
    method: str
    dimension: int


def backward_errors(K, M, omega2: NDArray, X: NDArray) -> NDArray:
    """(m,) ``||K x - omega^2 M x|| / ((||K|| + |omega^2| ||M||) ||x||)`` (infinity norms)."""
    nK = abs(K).sum(axis=1).max() if K.nnz else 0.0
    nM = abs(M).sum(axis=1).max() if M.nnz else 0.0
    R = K @ X - (M @ X) * omega2
    scale = (nK + np.abs(omega2) * nM) * np.abs(X).max(axis=0)
    return np.abs(R).max(axis=0) / np.maximum(scale, 1e-300)


def _m_orthonormal(W: NDArray, MW: NDArray, before: NDArray) -> tuple[NDArray, NDArray, int]:
    """``W`` made ``M``-orthonormal within itself; returns ``(W, M W, columns lost)``.

    Two Cholesky QR passes on the ``M``-Gram matrix (one leaves errors of ``eps`` times its
    condition number). A column whose ``M``-norm fell below ``1e-12`` of what it had before the
    orthogonalization (``before``: its squared norms) carries no new direction (an invariant
    subspace, or ``M W = 0``): the block is rebuilt from the eigenvectors of the Gram matrix
    without it, and the count goes back to the caller, which adds fresh directions.
    """
    lost = 0
    norms = np.einsum("ij,ij->j", W, MW)
    weak = norms <= 1e-24 * np.maximum(before, 1e-300)
    if weak.any():
        lost = int(weak.sum())
        W, MW = W[:, ~weak], MW[:, ~weak]
    for _ in range(2):
        gram = W.T @ MW
        gram = 0.5 * (gram + gram.T)
        try:
            L = np.linalg.cholesky(gram)
        except np.linalg.LinAlgError:
            w, U = np.linalg.eigh(gram)
            keep = w > 1e-24 * max(w.max(), 1e-300)
            lost += int((~keep).sum())
            T = U[:, keep] / np.sqrt(w[keep])
            W, MW = W @ T, MW @ T
            continue
        Li = sla.solve_triangular(L, np.eye(len(L)), lower=True)
        W, MW = W @ Li.T, MW @ Li.T
    return W, MW, lost


def _orthogonalize(W: NDArray, M, V: NDArray, MV: NDArray) -> tuple[NDArray, NDArray, int]:
    """``W`` made ``M``-orthogonal to ``V`` and ``M``-orthonormal within itself.

    Two passes of block classical Gram-Schmidt, then :func:`_m_orthonormal`.
    """
    MW = M @ W
    before = np.einsum("ij,ij->j", W, MW)
    for _ in range(2):
        C = MV.T @ W
        W = W - V @ C
        MW = MW - MV @ C
    return _m_orthonormal(W, MW, before)


def lanczos(K, M, count: int, sigma: float, solve: Callable[[NDArray], NDArray], *,
            block: int | None = None, tol: float = 1e-8, max_dim: int | None = None,
            restarts: int = 20, seed: int = 0) -> ModalPairs:
    """The ``count`` eigenpairs of ``K x = omega^2 M x`` nearest ``sigma`` (module docstring).

    Parameters
    ----------
    K, M : scipy sparse ``(n, n)``, symmetric (``M`` positive semi-definite)
    count : number of pairs wanted
    sigma : the shift; ``solve(B)`` returns ``(K - sigma M)^{-1} B`` for a block ``B (n, b)``
    block : block size (default: up to 6, never more than ``count``)
    tol : a Ritz pair ``(theta, x)`` of ``OP`` is accepted when ``||OP x - theta x||_M <= tol
        |theta|`` (``||x||_M = 1``); ``omega^2`` is then accurate to about ``tol^2``
        relative where the gap to its neighbours is of its own size (Rayleigh quotient), and
        the residuals of ``OP`` cannot fall much below ``1e-9`` where ``K - sigma M`` is
        ill-conditioned (the shifted factorization of a free structure)
    max_dim : largest basis (default ``min(n, max(3 count + 4 block, count + 60))``)
    restarts : times the basis may be restarted from the wanted Ritz vectors when ``max_dim``
        is reached (thick restart, as Krylov-Schur does)
    """
    n = K.shape[0]
    b = max(1, min(block or 6, count, n))
    max_dim = min(n, max_dim or max(3 * count + 4 * b, count + 60))
    rng = np.random.default_rng(seed)
    V, MV, OPV = (np.zeros((n, 0)) for _ in range(3))
    W = solve(M @ rng.standard_normal((n, b)))
    best = None
    for _ in range(restarts + 1):
        V, MV, OPV, W, best = _extend(V, MV, OPV, W, M, count, n, max_dim, solve, rng, tol)
        if best is not None and np.all(best[2] <= tol * np.abs(best[0])):
            break
        if best is None or V.shape[1] >= n:
            break
        # thick restart (as Krylov-Schur): keep the Ritz vectors of about half the basis,
        # the wanted pairs first, and continue from the next block of the old basis
        H = MV.T @ OPV
        theta, Y = np.linalg.eigh(0.5 * (H + H.T))
        keep = np.argsort(-np.abs(theta), kind="stable")[:max(count, V.shape[1] // 2)]
        W = OPV[:, -b:] - V @ (MV.T @ OPV[:, -b:])
        V, MV, OPV = V @ Y[:, keep], MV @ Y[:, keep], OPV @ Y[:, keep]
    if best is None or not np.all(best[2] <= tol * np.abs(best[0])):
        worst = float(np.max(best[2] / np.abs(best[0]))) if best is not None else np.inf
        raise ConvergenceError(f"the Lanczos eigen-solve did not converge {count} pairs within "
                               f"{restarts} restarts of {max_dim} vectors (worst relative "
                               f"residual {worst:.2g}, tolerance {tol:g})")
    theta, Y, _ = best
    X = V @ Y
    # Rayleigh quotients of the original pencil: errors of the square of the vectors' (sigma +
    # 1 / theta carries the solves' errors, up to 1e-8 for the lowest mode of a stiff model)
    omega2 = np.einsum("ij,ij->j", X, K @ X) / np.einsum("ij,ij->j", X, M @ X)
    order = np.argsort(omega2, kind="stable")
    omega2, X = omega2[order], X[:, order]
    return ModalPairs(omega2, X, backward_errors(K, M, omega2, X), "lanczos", V.shape[1])


def _extend(V, MV, OPV, W, M, count, n, max_dim, solve, rng, tol):
    """Grow the basis ``V`` (with ``M V``, ``OP V``) by blocks from ``W``.

    Until the ``count`` Ritz pairs nearest the shift converge or ``max_dim`` is reached; returns
    the basis and the best pairs so far as ``(theta, Y, residuals)`` (``X = V Y``).
    """
    best = None
    while V.shape[1] < max_dim:
        interrupt.check()
        W, MW, lost = _orthogonalize(W, M, V, MV)
        if lost:                            # an invariant subspace: carry on with fresh vectors
            fresh, MF, _ = _orthogonalize(solve(M @ rng.standard_normal((n, lost))), M,
                                          np.hstack([V, W]), np.hstack([MV, MW]))
            W, MW = np.hstack([W, fresh]), np.hstack([MW, MF])
        room = max_dim - V.shape[1]
        W, MW = W[:, :room], MW[:, :room]
        if W.shape[1] == 0:
            break
        OPW = solve(MW)
        V, MV, OPV = np.hstack([V, W]), np.hstack([MV, MW]), np.hstack([OPV, OPW])
        if V.shape[1] >= count:
            H = MV.T @ OPV                  # V^T M OP V: symmetric (OP is, in the M product)
            theta, Y = np.linalg.eigh(0.5 * (H + H.T))
            near = np.argsort(-np.abs(theta), kind="stable")[:count]
            theta, Y = theta[near], Y[:, near]
            R = OPV @ Y - V @ (Y * theta)
            res = np.sqrt(np.abs(np.einsum("ij,ij->j", R, M @ R)))
            if V.shape[1] == n:             # the whole space: Rayleigh-Ritz is exact
                res = np.zeros_like(res)
            best = (theta, Y, res)
            if np.all(res <= tol * np.abs(theta)):
                break
        W = OPW
    return V, MV, OPV, W, best
