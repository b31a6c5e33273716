"""Shift-invert block Lanczos for ``K x = omega^2 M x`` (symmetric ``K``, ``M >= 0``).

The spectral transformation of Ericsson & Ruhe (1980, Math. Comp. 35, "The spectral
transformation Lanczos method for the numerical solution of large sparse generalized symmetric
eigenvalue problems", eqs. 2.2-2.4): the eigenvalues of ``K x = lam M x`` nearest a shift
``sigma`` are the largest of ``OP = (K - sigma M)^{-1} M``, ``theta = 1 / (lam - sigma)``, and
``OP`` is symmetric in the ``M`` inner product. ``K - sigma M`` is factored once (the caller's
``solve``: a PETSc KSP with a direct LU, one multi-right-hand-side solve per block) and every
Lanczos block costs one block solve and one product with ``M``.

As in the shifted block Lanczos of Grimes, Lewis & Simon (1994, SIAM J. Matrix Anal. Appl. 15,
"A shifted block Lanczos algorithm for solving sparse symmetric generalized eigenproblems",
sections 2-3):

* the start block is ``OP`` applied to a random block, so it lies in the range of ``OP`` (a
  singular ``M``, the zero mass of multiplier rows or massless DOFs, adds no spurious
  directions: the infinite eigenvalues map to ``theta = 0`` and are never found);
* the block recurrence ``OP Q_j = Q_{j-1} B_j^T + Q_j A_j + Q_{j+1} B_{j+1}`` (their eq. 2.4)
  with full ``M``-reorthogonalization: the new block is ``M``-orthogonalized by two passes of
  block classical Gram-Schmidt (BLAS-3 products ``V^T (M W)``, never a loop over vectors), the
  first against the blocks it couples to (the last two; every kept Ritz vector after a
  restart), the second against all previous ones, then normalized within itself through the
  eigen-decomposition of its ``M``-Gram matrix (twice; it reveals the block's rank);
  the projected matrix ``H = V^T M OP V`` (the block tridiagonal ``T_j``, and the arrowhead of a
  thick restart) is built from the coefficients of both passes, no extra product (reading the
  basis twice a block instead of four times: at 1e5 DOFs and 20 modes the work besides the
  solves fell from 2.3-2.8 s to 2.0 s);
  a rank-deficient block (an invariant subspace) is completed with fresh random directions in
  the range of ``OP``;
* the residual of a Ritz pair ``(theta, V y)`` costs nothing: ``||OP V y - theta V y||_M =
  ||B_{j+1} E_j^T y||`` (their eq. 2.6 and section 3.2), and a pair is accepted when it is at
  most ``tol |theta|``; the accepted vectors are purified (``x = OP V y / theta``, by the
  recurrence, and with massless DOFs, whose components the ``M``-inner product does not see and
  the recurrence lets grow, by one more block solve), then refined by a Rayleigh-Ritz step on the
  ORIGINAL pencil in their span (``(X^T K X, X^T M X)``, :func:`_rayleigh_ritz`: free of the
  round-off that ``OP``'s spread puts on its small eigenvalues, the high frequencies; a free
  beam's whole spectrum came back with backward errors of 1e-16 instead of 1e-10), returned
  with their Rayleigh quotients ``x^T K x / x^T M x`` and verified there, their backward error
  ``||K x - omega^2 M x|| / ((||K|| + |omega^2| ||M||) ||x||)`` at most ``tol`` and the
  quotients within ``sqrt(tol)`` of the Ritz values (else the basis grows further).

When the basis reaches ``max_dim`` vectors it is restarted thickly (Wu & Simon 2000, SIAM J.
Matrix Anal. Appl. 22, "Thick-restart Lanczos method for large symmetric eigenvalue problems";
the symmetric case of Stewart's Krylov-Schur): the Ritz vectors of the wanted half are kept
(``H`` becomes diagonal plus the coupling row to the next block) and the recurrence continues
from the next block. After ``restarts`` restarts, :class:`~fem.errors.ConvergenceError`. Modes
come back ``M``-normalized, ordered by ``omega^2``.

A basis that spans the whole range of ``OP`` before ``count`` pairs converged (fewer finite
eigenvalues than wanted: the unknowns with mass, less the constraints on them) holds every finite
pair: they come back, all of them, marked ``exhausted`` (the caller says why there are fewer).
The iteration polls :func:`fem.interrupt.check` once per block (one block solve).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from fem import interrupt, lazy
from fem.errors import ConvergenceError

sla = lazy.module("scipy.linalg")


@dataclass
class ModalPairs:
    """Eigenpairs of ``K x = omega^2 M x``.

    Eigenvalues ``omega2 (m,)`` ascending, ``M``-normalized ``vectors (n, m)``, their backward
    errors, the method and the size of the space that gave them; ``exhausted``: the basis spans
    the whole range of ``OP``, so these are all the finite pairs (fewer than wanted).
    """

    omega2: NDArray
    vectors: NDArray
    backward_errors: NDArray
    method: str
    dimension: int
    exhausted: bool = False


def backward_errors(K, M, omega2: NDArray, X: NDArray, KX: NDArray | None = None,
                    MX: NDArray | None = None) -> NDArray:
    """(m,) ``||K x - omega^2 M x|| / ((||K|| + |omega^2| ||M||) ||x||)`` (infinity norms).

    ``KX``, ``MX``: the products ``K X`` and ``M X`` if the caller has them.
    """
    nK = abs(K).sum(axis=1).max() if K.nnz else 0.0
    nM = abs(M).sum(axis=1).max() if M.nnz else 0.0
    R = (K @ X if KX is None else KX) - (M @ X if MX is None else MX) * omega2
    scale = (nK + np.abs(omega2) * nM) * np.abs(X).max(axis=0)
    return np.abs(R).max(axis=0) / np.maximum(scale, 1e-300)


def _next_block(W: NDArray, V: NDArray, MV: NDArray, M, first: NDArray | None = None,
                lo: int = 0) -> tuple[NDArray, NDArray, NDArray]:
    """``W`` made ``M``-orthonormal to ``V`` and within itself: ``(W, M W, second)``.

    Two passes of block classical Gram-Schmidt against ``V``: the first against ``V[:, lo:]``
    only, with the coefficients ``first = V[:, lo:]^T M W`` if the caller has them (the
    recurrence's new block couples to the last two blocks alone; what it has along older ones
    is round-off), the second against the whole of ``V`` (its coefficients ``second``, what the
    first pass left along ``V``, are returned); then the block is
    normalized through the eigen-decomposition of its ``M``-Gram matrix, which reveals its rank:
    a direction whose ``M``-norm fell below ``1e-10`` of the largest incoming column carries no
    new direction (an invariant subspace, or ``M W = 0``) and is dropped, and so is one below
    ``1e-7`` of the block's largest (the Gram matrix's eigenvalues carry errors of ``eps`` times
    the largest, so a smaller one is not known; the caller completes the block). Normalizing a
    direction that lost most of its norm magnifies the round-off left along ``V`` (above a
    magnification of ``1e4`` one more pass against ``V`` follows) and leaves errors of ``eps``
    times the Gram matrix's condition number within the block: a second normalization follows.
    """
    C = MV[:, lo:].T @ W if first is None else first
    W = W - V[:, lo:] @ C
    second = MV.T @ W
    W -= V @ second
    MW = M @ W
    scale = float(np.max(np.einsum("ij,ij->j", C, C) + np.einsum("ij,ij->j", W, MW),
                         initial=0.0))
    for k in range(2):
        if W.shape[1] == 0 or scale <= 0.0:
            return W[:, :0], MW[:, :0], second
        gram = W.T @ MW
        w, U = np.linalg.eigh(0.5 * (gram + gram.T))
        keep = (w > 1e-14 * w.max()) & (w > 1e-20 * scale)
        T = U[:, keep] / np.sqrt(w[keep])
        W, MW = W @ T, MW @ T
        if k == 0 and keep.any() and w[keep].min() < 1e-8 * scale:
            C = MV.T @ W                   # the magnified round-off along V: once more
            W -= V @ C
            MW -= MV @ C
        scale = 1.0                        # the second normalization: of errors of eps w / w_min
    return W, MW, second


def lanczos(K, M, count: int, sigma: float, solve: Callable[[NDArray], NDArray], *,
            block: int | None = None, tol: float = 1e-8, max_dim: int | None = None,
            restarts: int = 20, seed: int = 0, inner=None) -> ModalPairs:
    """The ``count`` eigenpairs of ``K x = omega^2 M x`` nearest ``sigma`` (module docstring).

    Parameters
    ----------
    K, M : scipy sparse ``(n, n)``, symmetric (``M`` positive semi-definite)
    count : number of pairs wanted
    sigma : the shift; ``solve(B)`` returns ``(K - sigma M)^{-1} B`` for a block ``B (n, b)``
    block : block size (default :func:`default_block`)
    tol : a Ritz pair ``(theta, x)`` of ``OP`` is accepted when ``||OP x - theta x||_M <= tol
        |theta|`` (``||x||_M = 1``) and the backward error of the original problem is at most
        ``tol``; ``omega^2`` (a Rayleigh quotient) is then accurate to about ``tol^2`` relative
        where the gap to its neighbours is of its own size
    max_dim : largest basis before a thick restart (default ``max(4 count + 2 block, count +
        8 block)``, at least ``count + 3 block``, at most ``n``; the basis and its ``M`` products
        take ``16 n max_dim`` bytes)
    restarts : thick restarts allowed
    inner : the matrix of the inner product (default ``M``). The buckling problem ``K_0 x =
        lam (-K_D) x`` has an indefinite right-hand side; with ``sigma = 0`` its ``OP = K_0^{-1}
        (-K_D)`` is symmetric in the ``K_0`` inner product (Grimes, Lewis & Simon 1994, section
        5.2, the buckling transformation's inner product), ``theta = 1 / lam``: pass ``inner =
        K_0`` (positive definite) and get the factors of smallest magnitude, of either sign
    """
    B = M if inner is None else inner
    n = K.shape[0]
    b = max(1, min(block or default_block(count), n))
    max_dim = min(n, max(max_dim or max(4 * count + 2 * b, count + 8 * b), count + 3 * b))
    rng = np.random.default_rng(seed)
    # the basis and M times it, by columns: V[:, :k] is one contiguous block for the
    # memory-bound products V^T (M W) and V C (1e5 DOFs, 20 modes: the work besides the
    # solves fell from 2.0-2.5 s to 1.6-1.9 s)
    Vbuf, MVbuf = np.empty((n, max_dim), order="F"), np.empty((n, max_dim), order="F")
    k = 0
    H = np.zeros((0, 0))
    W, MW, _ = _next_block(solve(M @ rng.standard_normal((n, b))), Vbuf[:, :0], MVbuf[:, :0], B)
    # the M-inner product does not see a massless DOF's components of the basis vectors
    massless = inner is None and bool(np.any(M.diagonal() == 0.0))
    if W.shape[1] == 0:                    # OP has no range left (a deflated problem): no pairs
        return ModalPairs(np.zeros(0), np.zeros((n, 0)), np.zeros(0), "lanczos", 0, True)
    restarts_done = 0
    worst = np.inf
    lo = 0                                 # where the last block but one starts
    exhausted = False
    while True:
        interrupt.check()
        if k + W.shape[1] > max_dim:
            if restarts_done == restarts:
                break
            restarts_done += 1
            k, H = _thick_restart(Vbuf, MVbuf, k, H, _kept(count, b, k, max_dim))
            lo = 0                         # every kept Ritz vector couples to the next block
        new = W.shape[1]
        Vbuf[:, k:k + new], MVbuf[:, k:k + new] = W, MW
        k += new
        V, MV = Vbuf[:, :k], MVbuf[:, :k]
        W, MW, H, coupling = _recurrence(M, B, solve, inner, rng, b, V, MV, W, MW, H, lo)
        lo = k - new
        if k < count:
            if W.shape[1] > 0:
                continue
            # the whole range of OP, fewer directions than pairs wanted: its every pair is exact
            count, exhausted = k, True
        theta, Y = _nearest_ritz(H, count)
        res = np.linalg.norm(coupling @ Y[-new:], axis=0)
        if np.all(res <= tol * np.abs(theta)):
            omega2, X, berr, worst = _verified(K, M, solve, V, W, coupling, theta, Y, sigma,
                                               tol, inner, massless)
            if worst <= tol:
                order = np.argsort(omega2, kind="stable")
                return ModalPairs(omega2[order], X[:, order], berr[order], "lanczos", k,
                                  exhausted)
        else:
            worst = float(np.max(res / np.abs(theta)))
        if W.shape[1] == 0:
            break                          # the whole (M-)space: nothing more to add
    raise ConvergenceError(f"the Lanczos eigen-solve did not converge {count} pairs within "
                           f"{restarts} restarts of {max_dim} vectors (worst relative residual "
                           f"{worst:.2g}, tolerance {tol:g})")


def _kept(count: int, b: int, k: int, max_dim: int) -> int:
    """How many Ritz vectors a thick restart of the basis of ``k`` vectors keeps.

    The wanted pairs and a block more (their buffer), or half the basis, leaving room for two
    blocks a cycle (``max_dim`` is at least ``count + 3 b``): with one block a cycle the
    iteration stalls (12 pairs, blocks of 2, 17 vectors: residuals stuck at 1e-6 for 60
    restarts), and so it does without the buffer (27 pairs, blocks of 7).
    """
    return max(count, min(max(count + b, k // 2), max_dim - 2 * b))


def _nearest_ritz(H: NDArray, count: int) -> tuple[NDArray, NDArray]:
    """The ``count`` Ritz pairs ``(theta, Y)`` of ``H`` of largest ``|theta|`` (nearest sigma)."""
    theta, Y = np.linalg.eigh(H)
    near = np.argsort(-np.abs(theta), kind="stable")[:count]
    return theta[near], Y[:, near]


def _recurrence(M, B, solve, inner, rng, b: int, V: NDArray, MV: NDArray, W: NDArray,
                MW: NDArray, H: NDArray, lo: int) -> tuple[NDArray, NDArray, NDArray, NDArray]:
    """One step of the block recurrence from ``W``, the newest block (the last of ``V``).

    Returns the next block ``W``, ``M W``, the grown ``H`` and the coupling ``B_{j+1}`` of the
    new block to the next; a rank-deficient next block is completed with ``b`` columns.
    """
    n, k = V.shape
    new = W.shape[1]
    OPW = solve(MW if inner is None else M @ W)
    # OP is M-symmetric, so OP W couples only to the blocks whose images reached W (the last
    # two; every kept Ritz vector after a restart): the first Gram-Schmidt pass reads those,
    # not all of V, and the second's coefficients (round-off along the older blocks, which
    # the spread of a shift-invert spectrum magnifies against its small eigenvalues) complete
    # the new columns of H = V^T M OP V, as the two full passes gave them
    first = MV[:, lo:].T @ OPW
    W, MW, C = _next_block(OPW, V, MV, B, first=first, lo=lo)
    C[lo:] += first
    H = np.block([[H, C[:-new]], [C[:-new].T, 0.5 * (C[-new:] + C[-new:].T)]])
    coupling = MW.T @ OPW              # B_{j+1}: OP Q_j = ... + Q_{j+1} B_{j+1}
    if W.shape[1] < b and k + W.shape[1] < n:
        # an invariant subspace (or M's range exhausted): go on from fresh directions
        fresh = solve(M @ rng.standard_normal((n, b - W.shape[1])))
        Wf, MWf, _ = _next_block(fresh, np.hstack([V, W]), np.hstack([MV, MW]), B)
        W, MW = np.hstack([W, Wf]), np.hstack([MW, MWf])
        coupling = MW.T @ OPW          # what the dropped directions left along the fresh
    return W, MW, H, coupling


def _verified(K, M, solve, V: NDArray, W: NDArray, coupling: NDArray, theta: NDArray,
              Y: NDArray, sigma: float, tol: float, inner, massless: bool):
    """The converged Ritz pairs ``(theta, Y)`` on the original pencil: ``(omega2, X, berr, worst)``.

    ``worst``: the largest backward error, or the Ritz values' distance to the Rayleigh quotients
    where that is above ``sqrt(tol)``.
    """
    new = coupling.shape[1]                # the last block's size
    # purified: OP V y / theta = V y + W B y / theta lies in the range of OP to the
    # solve's round-off, where the basis's Gram-Schmidt round-off, which M (or a massless
    # DOF's zero mass) does not see, is left out (Nour-Omid, Parlett, Ericsson & Jensen
    # 1987, "How to implement the spectral transformation", Math. Comp. 48)
    X = V @ Y + (W @ (coupling @ Y[-new:])) / theta
    if massless:
        # those components grow along the recurrence (as its polynomials at theta = 0;
        # Meerbergen & Spence 1997, Math. Comp. 66, "Implicitly restarted Arnoldi with
        # purification for the shift-invert transformation"), beyond what the formula
        # above removes once the basis nears the whole range of OP: OP applied
        X = solve(M @ X) / theta
    omega2, X, KX, MX = _rayleigh_ritz(K, M, X, inner)
    berr = backward_errors(K, M, omega2, X, KX, MX)
    # and the values must be the Ritz values they refine: a vector off the range of OP
    # has a huge Rayleigh quotient and, scaled by it, a small backward error
    ritz = np.sort(sigma + 1.0 / theta)
    off = float(np.max(np.abs(np.sort(omega2) - ritz) / (np.abs(ritz) + abs(sigma))))
    worst = float(berr.max()) if off <= np.sqrt(tol) else max(off, float(berr.max()))
    return omega2, X, berr, worst


def default_block(count: int) -> int:
    """Block size: ``count`` up to 6, then 6.

    A solve of ``b`` right-hand sides costs ``t_1 + (b - 1) c``: one pass over the factor,
    bound by memory bandwidth (``t_1`` = 0.25 s for the lattice of 1e5 DOFs of
    ``benchmarks/modal.py``, MUMPS ``L D L^T``, one thread), plus ``c`` = 0.027 s of arithmetic
    per column (``0.11 t_1``: the solve runs at the speed of a matrix product). The block solves
    needed for its 20 modes fall slowly with the block (``b`` = 1, 4, 6, 8, 10, 12, 20: 60, 25,
    21, 19, 17, 16, 13; the 20th and 21st eigenvalues are 0.6 % apart), so the solves' cost is
    flat from 4 to 10 columns (8.0 to 8.7 s) and grows past it (12: 9.1 s, 20: 10.3 s); at 1e4
    DOFs 6 was the fastest (8, 10, 12: 3, 18, 24 % slower), and on the slab of 1e6 DOFs (small
    fronts) a block of 6 costs 2.1 single solves. Growing the block with ``count`` did not pay
    for 20 modes. A block also finds multiple eigenvalues (symmetric structures) up to its size
    at once.
    """
    return max(1, min(count, 6))


def _rayleigh_ritz(K, M, X: NDArray, inner) -> tuple[NDArray, NDArray, NDArray, NDArray]:
    """The pairs of ``K x = omega^2 M x`` in the span of the accepted Ritz vectors ``X``.

    ``(omega2, X Z, K X Z, M X Z)``: ``Z`` the eigenvectors of the small pencil ``(X^T K X,
    X^T M X)`` solved with the product's matrix (``M``, or ``inner = K`` for the buckling
    transformation) on the right, where it is positive definite (``X`` is orthonormal in it, so
    ``Z`` keeps it so); ``omega2`` the Rayleigh quotients of the new vectors. On the original
    problem, not ``OP``: the Ritz values of ``H`` carry round-off of ``eps`` times ``OP``'s
    largest eigenvalue, which a shift-invert spectrum's spread (rigid modes at a small shift)
    magnifies against its smallest; the original matrices do not, and near-degenerate pairs come
    out ``K``- and ``M``-orthogonal.
    """
    KX, MX = K @ X, M @ X
    Kr, Mr = X.T @ KX, X.T @ MX
    Kr, Mr = 0.5 * (Kr + Kr.T), 0.5 * (Mr + Mr.T)
    Z = sla.eigh(Kr, Mr)[1] if inner is None else sla.eigh(Mr, Kr)[1]
    X, KX, MX = X @ Z, KX @ Z, MX @ Z
    # each value the Rayleigh quotient of its own vector, not the small solve's eigenvalue: that
    # is accurate to eps times the subspace's largest (the interior modes of a CMS component can
    # span 1e9), the quotient to about eps times its own
    omega2 = np.einsum("ij,ij->j", X, KX) / np.einsum("ij,ij->j", X, MX)
    return omega2, X, KX, MX


def _thick_restart(V: NDArray, MV: NDArray, k: int, H: NDArray, m: int):
    """Keep the ``m`` wanted Ritz vectors of the basis ``V[:, :k]`` (in place).

    ``OP V Y = V Y Theta + W B E^T Y``: the kept vectors' residuals lie along the next block
    ``W``, so its coefficients (the first Gram-Schmidt pass) give the arrowhead of the new ``H``.
    Returns the new size and ``H`` (diagonal).
    """
    theta, Y = np.linalg.eigh(H)
    keep = np.sort(np.argsort(-np.abs(theta), kind="stable")[:m])
    V[:, :m] = V[:, :k] @ Y[:, keep]
    MV[:, :m] = MV[:, :k] @ Y[:, keep]
    return m, np.diag(theta[keep])
