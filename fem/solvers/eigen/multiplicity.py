"""The iterative symmetric solve with its check of multiplicities (:mod:`.front`).

A Krylov method finds at most as many copies of a multiple eigenvalue as its block has vectors.
When a returned cluster is as large as the block, the ``M``-orthogonal complement of the vectors
found is searched for its nearest pair (a restart with deflation: Saad 2011, "Numerical methods
for large eigenvalue problems", 2nd ed., section 4.2; Wilkinson's deflation for symmetric
matrices); one nearer the shift than the farthest returned takes that one's place, and the
search repeats (the front-end's module docstring, *Multiplicities*).
"""

from __future__ import annotations

import itertools

import numpy as np
from numpy.typing import NDArray

from fem.errors import ConvergenceError
from fem.solvers.eigen.common import ACCEPT, CLUSTER, ROUND_OFF, massive


def iterate(method, K, M, want, sigma, solve, tol, block, prefix, scale, what):
    """``(X, exhausted, dimension)``: the iterative method's vectors, multiplicities checked.

    The check (module docstring) searches the ``M``-orthogonal complement of the vectors found:
    the Lanczos for one pair with single vectors (a basis as large as the first search's, so
    that it resolves what that one did), SLEPc for one too, each from random vectors of its
    own (the first search's start has no component along the copies it missed: its Krylov space
    holds one direction of each eigenspace); every value found nearer the shift than the
    farthest kept replaces it, and the check repeats.
    """
    from fem.solvers.eigen import lanczos as lz

    n, n_mass = K.shape[0], massive(M)
    seeds = itertools.count(1)            # each search of a deflated problem: a start of its own
    if method == "lanczos":
        b = max(1, min(block or lz.default_block(want), want))
        basis = min(n, max(4 * want + 2 * b, want + 8 * b))

        def run(k, D):
            go = solve if D is None else _deflated(solve, D, M)
            limit = n_mass - (0 if D is None else D.shape[1])
            asked = k
            while True:
                try:
                    # a deflated search starts from random vectors of its own: from an earlier
                    # search's, it has no component along the copies that one missed
                    p = lz.lanczos(K, M, asked, sigma, go, tol=tol,
                                   block=b if D is None else 1,
                                   max_dim=None if D is None else max(basis, 4 * asked + 2),
                                   seed=0 if D is None else next(seeds))
                    break
                except ConvergenceError as err:
                    # pairs inside a cluster wider than those asked (the rigid modes of
                    # several free bodies, at the round-off of the spectrum: 12 of them, 3
                    # asked) are not resolved one by one; the whole cluster is
                    if asked >= limit:
                        raise ConvergenceError(f"{what}: {err}") from None
                    asked = min(2 * asked + 4, limit)
            near = np.sort(np.argsort(np.abs(p.omega2 - sigma), kind="stable")[:k])
            return p.vectors[:, near], p.exhausted and len(near) < k, p.dimension
        check = 1
    else:
        from fem.solvers.eigen import slepc

        b = 1

        def run(k, D):
            # the check of a deflated problem at the Lanczos's tolerance: a fifth fewer solves
            vals, X, _ = slepc.symmetric(K, M, k, sigma, solve, prefix, deflate=D, what=what,
                                         seed=None if D is None else next(seeds),
                                         tol=1e-12 if D is None else tol)
            return _genuine(K, M, X, scale), False, X.shape[1]
        check = 1
    X, exhausted, dim = run(want, None)
    dim = dim if method == "lanczos" else 0
    if X.shape[1] < want and not exhausted:
        # (SLEPc) the finite spectrum exhausted? Only if a search of the rest converges, and
        # to infinite (spurious) values alone
        Y, _, converged = run(check, X)
        if Y.shape[1] or not converged:
            raise ConvergenceError(f"{what}: SLEPc converged {X.shape[1]} of the {want} pairs "
                                   "wanted" + (", and more exist" if Y.shape[1] else ""))
        exhausted = True
    for _ in range(want):
        if exhausted or X.shape[1] >= n_mass:
            break                               # every finite pair is there
        w = _rayleigh_quotients(K, M, X)
        if _largest_cluster(w, sigma, scale) < b:
            break
        Y, _, _ = run(check, X)
        if Y.shape[1] == 0:
            break
        v = _rayleigh_quotients(K, M, Y)
        far = np.sort(np.abs(w - sigma))
        nearer = np.abs(v - sigma) < far[-1] - (CLUSTER * np.abs(v) + ROUND_OFF * scale)
        if not nearer.any():
            break                               # nothing nearer was missed
        keep = np.argsort(np.abs(w - sigma), kind="stable")[:want - int(nearer.sum())]
        X = np.hstack([X[:, keep], Y[:, nearer]])
    return X, exhausted, dim


def _genuine(K, M, X: NDArray, scale: float) -> NDArray:
    """The pairs a Krylov-Schur search returned that are eigenpairs of the pencil.

    ``X`` made ``M``-orthonormal (a copy of a vector already there, or a vector of the massless
    unknowns, has no ``M``-norm of its own: left out), refined by Rayleigh-Ritz, and only the
    pairs with a finite value (below ``1e6`` times the spectrum's scale: ``theta = 0`` of the
    infinite ones is not resolved) and a backward error below ``ACCEPT`` kept.
    """
    from fem.solvers.eigen.lanczos import _rayleigh_ritz, backward_errors

    if X.shape[1] == 0:
        return X
    w = _rayleigh_quotients(K, M, X)
    finite = np.isfinite(w) & (np.abs(w) <= 1e6 * max(scale, 1e-300))
    X, w = X[:, finite], w[finite]
    X = X[:, backward_errors(K, M, w, X) <= ACCEPT]
    G = X.T @ (M @ X)
    g, V = np.linalg.eigh(0.5 * (G + G.T))
    keep = g > 1e-10 * max(g.max(initial=0.0), 1e-300)
    if not keep.any():
        return X[:, :0]
    X = X @ (V[:, keep] / np.sqrt(g[keep]))
    w, X, KX, MX = _rayleigh_ritz(K, M, X, None)
    return X[:, backward_errors(K, M, w, X, KX, MX) <= ACCEPT]


def _deflated(solve, D: NDArray, M):
    """``solve`` followed by the ``M``-orthogonal projection off the span of ``D``."""
    MD = M @ D
    G = np.linalg.cholesky(D.T @ MD)          # D is M-orthonormal up to round-off

    def go(B):
        Y = solve(B)
        C = np.linalg.solve(G.T, np.linalg.solve(G, MD.T @ Y))
        return Y - D @ C
    return go


def _rayleigh_quotients(K, M, X: NDArray) -> NDArray:
    return np.einsum("ij,ij->j", X, K @ X) / np.einsum("ij,ij->j", X, M @ X)


def _largest_cluster(w: NDArray, sigma: float, scale: float) -> int:
    """The most copies of one eigenvalue among ``w``, the farthest from ``sigma``'s left out.

    Copies: values within ``CLUSTER`` (relative) or the round-off of the spectrum of their
    neighbours. The farthest value's own copies do not count: a copy missed there would tie
    with it, and the values returned would be the same.
    """
    if len(w) == 0:
        return 0
    order = np.argsort(w, kind="stable")
    v = w[order]
    gap = np.diff(v) > CLUSTER * np.maximum(np.abs(v[1:]), np.abs(v[:-1])) + ROUND_OFF * scale
    label = np.r_[0, np.cumsum(gap)]
    far = label[int(np.argmax(np.abs(v - sigma)))]
    sizes = np.bincount(label)
    sizes[far] = 0
    return int(sizes.max())
