"""Two-sided Krylov eigen-solver for ``(p^2 M + p B + K) x = 0`` (Doan, Geradin & Kill).

The method of Doan, Geradin & Kill for the eigenvalues of linearized flexible mechanisms
(damped, gyroscopic, follower-loaded, constrained by multipliers), as reconstructed in
notes/lanczos_linearization.md, sections A.3-A.6, restarted in bounded memory:

* **First-order form without inverting M** (eqs. 3.2-3.4, "inverse" form): with the shift
  ``p = p_s + p_t`` (eq. 3.15: ``B* = B + 2 p_s M``, ``K* = K + p_s B + p_s^2 M``) the state
  operator ``C = [[-K*^-1 B*, -K*^-1 M], [I, 0]]`` has the eigenvalues ``lam = 1 / (p - p_s)``, so
  those nearest the shift dominate; ``C`` and ``C^T`` are applied with ONE sparse LU of ``K*``
  (a solve and a transposed solve), never with ``M^-1``: a singular ``M`` (multiplier rows) is
  fine. The shift may be complex (complex arithmetic; a real shift of real matrices keeps
  everything real). A singular ``K*`` (a rigid or kinematic mode at the shift) is refused
  (:class:`SingularShift`): shift away from it (section A.6, "positive shifting").
* **Two sides** (eqs. 3.5-3.6): the right problem ``C x = lam x`` and the left problem
  ``C^T z = lam z``, one iterate of each per step as in the paper (eq. 3.8), each in its own
  orthonormal Krylov basis: the biorthogonal recurrence of eqs. 3.9-3.11 loses its
  biorthogonality on strongly gyroscopic problems (near-breakdowns ``g^T d ~ 1e-7`` grew its
  basis vectors to norms of 1e3 and left Ritz residuals of 1e-8 on a square cantilever; A.5,
  "rapidly lost"), two orthonormal bases cannot. The pairs are joined at the end (below).
* **Bounded memory by thick restarts** (Stewart's Krylov-Schur, SIAM J. Matrix Anal. Appl. 23,
  2001; two-sided: Zwaan & Hochstenbach, SIAM J. Matrix Anal. Appl. 38, 2017): each basis has at
  most ``max_dim`` vectors (default :func:`default_dim`, a multiple of ``count`` independent of
  ``n``: the recurrence of the paper kept all its ``2 n`` vectors, 6 GB for 20 pairs of 7200
  DOFs). When it is full the ordered Schur form of the projected matrix ``H`` keeps the
  invariant subspace of the converged and the nearest Ritz values (about half the basis) and
  the recurrence goes on from there; full re-orthogonalization, twice (the paper's Gram-Schmidt).
* **Multiple eigenvalues** (A.5, L14801-14805: one Krylov sequence finds one copy of each):
  once the wanted Ritz values have converged, the converged ones are *locked* (their subspace
  kept, its coupling to the rest dropped) and the sequence starts again from a random vector
  orthogonal to them, inside the same basis: the restart's largest Ritz value converges first,
  and is either a further copy of a wanted eigenvalue (then it is converged too, and another
  restart follows, up to ``passes``) or not (the search ends; no false multiplicities: a start
  that deflation leaves empty ends it too). Ritz values within ``1e-6`` of each other are one
  cluster: its invariant subspace, never its ill-conditioned eigenvectors, is kept, and a
  cluster that ``C`` maps to ``lam I`` is a semisimple multiple eigenvalue whose every vector is
  an eigenvector.
* **Joining the sides, Rayleigh quotients and acceptance**: each right cluster meets the left
  cluster of the same values; the two bases are made biorthonormal (an SVD of ``Z^T X``), the
  vectors of the pair are those of the projection ``Z^T C X`` (the paper's interaction problem,
  eq. 3.12), and each eigenvalue is the two-sided Rayleigh quotient ``lam = z^T C x / z^T x``
  (L14780-14789; its error is the product of the two residuals, so the real parts of a
  conservative gyroscopic model are at its round-off). A pair is **accepted** only after the
  second-order backward error of notes D.4, ``eta = ||(p^2 M + p B + K) x|| / ((|p|^2 ||M|| +
  |p| ||B|| + ||K||) ||x||) < tol`` (``1e-6`` for ``|p|`` below ``1e-4`` of the problem's scale:
  defective rigid modes are only ``sqrt(eps)``-accurate, T4).
* **Parasitic eigenvalues** (A.6, T7): ``lam = 0`` is ``p = inf`` (the zero mass of multiplier
  rows and massless DOFs, Jordan chains up to four long): four power iterations on every start
  (A.4 (a), one in the paper) purify it away, and Ritz values ``|lam| < 1e-6 max |lam|`` are
  discarded (the backward error alone does not reject them).

Fewer pairs than asked come back only when the finite spectrum is exhausted; if approximations
of others remain, :class:`~fem.errors.ConvergenceError` says how many were accepted. Pairs come
back ordered by ``|p - p_s|`` (the order the shift gives them: T5's "jump" over a lower
frequency is the shift's, and the caller sees it). Every Krylov step polls
:func:`fem.interrupt.check`, so SIGINT and SIGTERM stop a long solve at once.

Each side's decomposition is :mod:`.krylov_schur`'s, its search (converge, thick restart, lock,
start again) :mod:`.two_sided_search`'s; joining the sides and accepting the pairs is here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from fem import lazy
from fem.errors import ConvergenceError
from fem.solvers.eigen.krylov_schur import CLUSTER, TAU, KrylovSchur, clusters
from fem.solvers.eigen.two_sided_search import Search

la = lazy.module("scipy.linalg")
sp = lazy.module("scipy.sparse")
spla = lazy.module("scipy.sparse.linalg")
lapack = lazy.module("scipy.linalg.lapack")


class SingularShift(ValueError):
    """``K + p_s B + p_s^2 M`` is singular: an eigenvalue sits at the shift."""


@dataclass
class QuadraticEigenpairs:
    """Eigenpairs of the quadratic problem.

    Eigenvalues ``p (m,)`` (complex), right and left vectors ``(n, m)`` (``x`` and ``y`` with
    ``(p^2 M + p B + K) x = 0``, ``y^T (p^2 M + p B + K) = 0``), their second-order backward
    errors, the values each start of the right side found (the first, then each restart for
    further copies of multiple eigenvalues), the basis size ``dim`` of each side and the Krylov
    steps of both.
    """

    values: NDArray
    right: NDArray
    left: NDArray
    backward_errors: NDArray
    passes: list[NDArray] = field(default_factory=list)
    dim: int = 0
    steps: int = 0


def _norm1(A) -> float:
    return float(abs(A).sum(axis=1).max()) if A.nnz else 0.0


def backward_error(M, B, K, p: complex, x: NDArray) -> float:
    """Second-order backward error of notes D.4 (infinity norms)."""
    r = p * p * (M @ x) + p * (B @ x) + K @ x
    scale = (abs(p) ** 2 * _norm1(M) + abs(p) * _norm1(B) + _norm1(K)) * np.abs(x).max()
    return float(np.abs(r).max() / max(scale, 1e-300))


class ShiftedOperator:
    """``C`` and ``C^T`` of the shifted first-order form, from one LU of ``K*``."""

    def __init__(self, M, B, K, shift: complex):
        dtype = complex if np.iscomplexobj(shift) or isinstance(shift, complex) else float
        self.M = sp.csc_matrix(M, dtype=dtype)
        self.Bs = sp.csc_matrix(B + 2 * shift * M, dtype=dtype)
        Ks = sp.csc_matrix(K + shift * B + shift * shift * M, dtype=dtype)
        self.n = Ks.shape[0]
        try:
            self.lu = spla.splu(Ks)
        except RuntimeError:
            raise SingularShift(f"K + p_s B + p_s^2 M is singular at p_s = {shift}") from None
        # a numerically singular factor: the solution of a random system blows up
        b = np.random.default_rng(1).standard_normal(self.n)
        y = self.lu.solve(b.astype(dtype))
        if not np.all(np.isfinite(y)) or (_norm1(Ks) * np.abs(y).max()
                                          > 1e13 * np.abs(b).max()):
            raise SingularShift(f"K + p_s B + p_s^2 M is singular at p_s = {shift} (an "
                                "eigenvalue at the shift: a rigid or kinematic mode; shift "
                                "away from it)")

    def apply(self, X: NDArray) -> NDArray:
        """``C X`` for state vectors ``X (2n,)`` or ``(2n, k)``."""
        n = self.n
        u, v = X[:n], X[n:]
        return np.concatenate([-self.lu.solve(self.Bs @ u + self.M @ v), u])

    def left_vector(self, z: NDArray) -> NDArray:
        """The quadratic problem's left vector ``K*^-T a`` of a left state vector ``[a; b]``."""
        a = z[:self.n]
        if self.lu.L.dtype == complex:
            return self.lu.solve(a, trans="T")
        return self.lu.solve(a.real, trans="T") + 1j * self.lu.solve(a.imag, trans="T")

    def apply_t(self, Z: NDArray) -> NDArray:
        """``C^T Z``."""
        n = self.n
        a, b = Z[:n], Z[n:]
        w = self.lu.solve(a, trans="T")
        return np.concatenate([-(self.Bs.T @ w) + b, -(self.M.T @ w)])


def _solve_complex(op: ShiftedOperator) -> tuple[Callable, Callable]:
    """``C`` and ``C^T`` on complex vectors (real factors: both parts in one solve)."""
    if op.lu.L.dtype == complex:
        return op.apply, op.apply_t

    def pair(f):
        def g(x):
            y = f(np.column_stack([x.real, x.imag]))
            return y[:, 0] + 1j * y[:, 1]
        return g
    return pair(op.apply), pair(op.apply_t)


# --- the restarted Krylov-Schur recurrences (krylov_schur.py, two_sided_search.py) -----------
_SEMISIMPLE = 1e-8   # a cluster projected to lam I within this is semisimple: every vector counts


def default_dim(count: int) -> int:
    """Basis size (vectors of each side) for ``count`` eigenvalues: independent of ``n``."""
    return max(2 * count + 20, 40)


def quadratic_eigen(M, B, K, count: int, shift: complex = 0.0, *, tol: float = 1e-8,
                    max_steps: int | None = None, passes: int = 4, seed: int = 0,
                    max_dim: int | None = None) -> QuadraticEigenpairs:
    """The ``count`` eigenpairs of ``(p^2 M + p B + K) x = 0`` nearest ``shift`` (module doc).

    Parameters
    ----------
    M, B, K : scipy sparse ``(n, n)`` real matrices (any symmetry; ``M`` may be singular)
    count : pairs wanted (complex conjugates count separately)
    shift : ``p_s``, real or complex
    tol : second-order backward error at which a pair is accepted
    max_steps : Krylov steps (operator applications) of each side (default ``100 max_dim``)
    passes : starts of each side: the first, then restarts with deflation (each finds one more
        copy of a multiple eigenvalue)
    seed : of the random starts
    max_dim : vectors of each side's basis (default :func:`default_dim`, independent of ``n``;
        at least ``count + 4``, at most ``2 n``)

    Raises :class:`SingularShift` when an eigenvalue sits at the shift, and
    :class:`~fem.errors.ConvergenceError` when fewer than ``count`` pairs are accurate while
    the finite spectrum is not exhausted.
    """
    op = ShiftedOperator(M, B, K, shift)
    C, CT = _solve_complex(op)
    real = op.lu.L.dtype != complex
    n = op.n
    N = 2 * n
    dim = min(N, max(max_dim or default_dim(count), min(count, N) + 4))
    budget = max_steps or 100 * dim
    rng = np.random.default_rng(seed)
    lam_ref = [0.0]
    sides = []
    for A in ((op.apply, op.apply_t) if real else (C, CT)):
        search = Search(KrylovSchur(A, N, dim, float if real else complex), count, budget,
                         lam_ref)
        search.run(rng, passes)
        sides.append(search)
    right, left = sides
    P, X, Z, eta, missed, unpaired = _pairs(right, left, count, op, (M, B, K), shift, tol)
    steps = right.ks.steps + left.ks.steps
    if len(P) < count and (missed or unpaired or right.limited or left.limited):
        # finite values the search could not make accurate, or did not reach: fewer pairs
        # would pass for all there are, so say so
        best = (f"the best of the others has a backward error of {min(missed):.1g}, above "
                f"{tol:g}" if missed else f"{unpaired} right vectors without a left one"
                if unpaired else "the step limit")
        raise ConvergenceError(f"the two-sided eigen-solver accepted {len(P)} of the {count} "
                               f"eigenvalues wanted in {steps} steps ({best}): try another "
                               "shift")
    order = np.argsort(np.abs(P - shift), kind="stable")[:count]
    Zq = np.column_stack([op.left_vector(Z[:, i]) for i in order]) if len(order) else \
        np.zeros((n, 0), complex)
    found = [shift + 1.0 / f for f in right.found]
    return QuadraticEigenpairs(P[order], X[:, order], Zq, eta[order], found, dim=dim,
                               steps=steps)


def _eigenspaces(search: Search, count: int,
                 extra: int) -> tuple[NDArray, list[tuple[NDArray, NDArray]]]:
    """The Ritz vectors of the ``count`` values of largest ``|theta|`` of one side, by eigenvalue.

    Whole clusters, any further ones of the same magnitude as the last, and the converged ones
    among the next ``extra`` values (an unconverged Ritz vector overlaps every eigenspace of the
    other side). Returns an orthonormal basis ``Y (N, m)`` of their invariant subspace (real if
    the side is) and ``[(Q, theta)]``: each eigenspace ``Y Q`` (``Q (m, s)`` complex
    orthonormal) of one cluster of ``theta`` (a real invariant subspace splits into its two
    complex conjugate halves).
    """
    ks = search.ks
    T, Z, theta, groups = search.final()
    chosen, n, edge = [], 0, np.inf
    for g in groups:
        wanted = n < count or np.abs(theta[g]).max() >= edge
        if not wanted and n >= count + extra:
            break
        n += len(g)
        if wanted:
            edge = min(edge, np.abs(theta[g]).min() * (1 - CLUSTER))
        elif ks.cluster(T, Z, g).residual > TAU:
            continue
        chosen.append(g)
    if not chosen:
        return np.zeros((ks.N, 0)), []
    c = ks.cluster(T, Z, np.concatenate(chosen))
    Tc, Qc = la.schur(c.T.astype(complex), output="complex")
    w = np.diag(Tc)
    out = []
    for h in clusters(w, Tc, np.argsort(-np.abs(w))):
        select = np.zeros(len(w), dtype=bool)
        select[h] = True
        if select.all():
            T1, Q1 = Tc, Qc
        else:
            Ts, Qs, *_ = lapack.ztrsen(select.astype(np.int32), Tc, Qc, job="N")
            T1, Q1 = Ts[:len(h), :len(h)], Qs[:, :len(h)]
        out.append((Q1, np.diag(T1)))
    return ks.vectors(c.Q), out


def _pairs(right: Search, left: Search, count: int, op: ShiftedOperator, matrices, shift,
           tol):
    """Accepted eigenpairs ``(p, x, z, eta)`` (``q`` parts), rejected ones, unpaired ones.

    That is: the backward errors of the rejected approximations, and how many right Ritz vectors
    found no left partner. The right and left eigenspaces of the ``count + 10`` values nearest
    the shift are joined by their overlaps ``Z^T X`` (zero between different eigenvalues), not by
    their values: the two sides' Ritz values of an ill-conditioned eigenvalue differ by far more
    than their residuals (two eigenvalues 3e-6 apart, a double frequency split by a slow spin,
    came out 1e-5 apart on the right side and right on the left). Each connected set is
    projected together: the two bases are made biorthonormal (an SVD of ``Z^T X``: a copy of a
    multiple eigenvalue that one side has and the other not has a singular value at the
    round-off), ``C`` is projected on them and split by its eigenvalues
    (:func:`_biorthogonal`), each eigenvalue is the Rayleigh quotient ``z^T C x / z^T x`` of its
    pair, and each pair is checked by its second-order backward error (module doc).
    """
    M, B, K = matrices
    n = right.ks.N // 2
    scale = max(_norm1(K), 1e-300) / max(_norm1(M), 1e-300)     # |p|^2 of the problem
    P, X, Z, eta, missed = [], [], [], [], []
    Yr, rs = _eigenspaces(right, count, 10)
    Yl, ls = _eigenspaces(left, count, 10)
    if not rs or not ls:
        return (np.zeros(0, complex), np.zeros((n, 0), complex), np.zeros((n, 0), complex),
                np.zeros(0), [], sum(len(t) for _, t in rs))
    C = _solve_complex(op)[0]
    # the overlaps of the eigenspaces: Frobenius norms of the blocks of Z^T X
    W = np.column_stack([Q for Q, _ in ls]).T @ (Yl.T @ Yr) @ np.column_stack([Q for Q, _ in rs])
    at = lambda spaces: np.cumsum([0] + [len(t) for _, t in spaces])[:-1]   # noqa: E731
    O = np.sqrt(np.add.reduceat(np.add.reduceat(np.abs(W) ** 2, at(ls), axis=0), at(rs),
                                axis=1)).T
    link = O >= np.maximum(1e-8, 1e-3 * np.maximum(O.max(axis=1, keepdims=True),
                                                  O.max(axis=0, keepdims=True)))
    done = np.zeros(len(rs), dtype=bool)
    unpaired = 0
    for i0 in range(len(rs)):
        if done[i0]:
            continue
        if len(P) >= count:
            # a value of the magnitude of the count-th (its conjugate) is still wanted
            edge = np.sort(1.0 / np.abs(np.array(P) - shift))[-count] * (1 - CLUSTER)
            if np.abs(rs[i0][1]).max() < edge:
                break
        ir, il = {i0}, set()
        while True:                              # the connected set of i0
            il2 = il | {j for i in ir for j in np.flatnonzero(link[i])}
            ir2 = ir | {i for j in il2 for i in np.flatnonzero(link[:, j])}
            if ir2 == ir and il2 == il:
                break
            ir, il = ir2, il2
        done[list(ir)] = True
        Xc = Yr @ np.column_stack([rs[i][0] for i in sorted(ir)])
        if not il:
            unpaired += Xc.shape[1]              # the left side did not converge these
            continue
        Zc = Yl @ np.column_stack([ls[j][0] for j in sorted(il)])
        U, sig, Wh = np.linalg.svd(Zc.T @ Xc)
        r = int(np.count_nonzero(sig > 1e-8 * sig[0]))
        unpaired += Xc.shape[1] - r
        Xp = Xc @ Wh.conj().T[:, :r]
        Zp = (Zc @ U.conj()[:, :r]) / sig[:r]            # Zp^T Xp = I
        CX = np.column_stack([C(x) for x in Xp.T])
        for R, L in _biorthogonal(Zp.T @ CX):
            for k in range(R.shape[1]):
                x, z, cx = Xp @ R[:, k], Zp @ L[:, k], CX @ R[:, k]
                p = shift + (z @ x) / (z @ cx)
                nx = np.linalg.norm(x)
                e = backward_error(M, B, K, p, x[:n] / nx) if np.isfinite(p) else np.inf
                if e <= (1e-6 if abs(p) < 1e-4 * np.sqrt(scale) else tol):
                    P.append(p)
                    X.append(x[:n] / nx)                # the q parts: all the caller and
                    Z.append(z[:n] / np.linalg.norm(z))  # left_vector use
                    eta.append(e)
                else:
                    missed.append(e)
    X = np.array(X).T if X else np.zeros((n, 0), complex)
    Z = np.array(Z).T if Z else np.zeros((n, 0), complex)
    return (np.array(P, dtype=complex), X, Z, np.array(eta),
            [e for e in missed if e < 1e-2], unpaired)   # near 1: of an exhausted space


def _biorthogonal(A: NDArray) -> list[tuple[NDArray, NDArray]]:
    """Right and left eigenvector bases ``(R, L)``, ``L^T R = I``, of ``A``.

    One per cluster of its eigenvalues: the cluster's invariant subspaces (ordered Schur form, a
    Sylvester equation for the left one) if ``A`` is ``lam I`` on it (a semisimple multiple
    eigenvalue: every vector is an eigenvector), else its eigenvectors.
    """
    T, Z = la.schur(A.astype(complex), output="complex")
    theta = np.diag(T)
    out = []
    for g in clusters(theta, T, np.argsort(-np.abs(theta))):
        select = np.zeros(len(T), dtype=bool)
        select[g] = True
        s = len(g)
        if s == len(T):
            T11, Q1, P1 = T, Z, Z.conj()
        else:
            Ts, Qs, *_, info = lapack.ztrsen(select.astype(np.int32), T, Z, job="N")
            T11, T12, T22 = Ts[:s, :s], Ts[:s, s:], Ts[s:, s:]
            Y, scale, info = lapack.ztrsyl(T11, T22, -T12, isgn=-1)     # T11 Y - Y T22 = -T12
            Q1 = Qs[:, :s]
            P1 = Q1.conj() - Qs[:, s:].conj() @ (Y / scale).T              # H^T P1 = P1 T11^T
        mean = np.trace(T11) / s
        if np.abs(T11 - mean * np.eye(s)).max() <= _SEMISIMPLE * abs(mean):
            out.append((Q1, P1))
        else:
            _, R = np.linalg.eig(T11)
            out.append((Q1 @ R, P1 @ np.linalg.inv(R).T))
    return out


def flutter_boundary(matrices: Callable[[float], tuple], lo: float, hi: float, *,
                     tol: float = 1e-8, shift: complex = 0.0) -> float:
    """The parameter in ``[lo, hi]`` where the largest real part of ``p`` crosses zero.

    ``matrices(P) -> (M, B, K)``; stable at ``lo``, unstable at ``hi`` (an eigenvalue whose
    real part exceeds its error bound, :mod:`fem.solvers.eigen.bounds`); bisection to ``tol``
    on the parameter, with all eigenvalues of each model (small models: the stability sweeps
    call it per crossing).
    """
    from fem.solvers.eigen.bounds import error_bounds, verdict

    def unstable(P):
        M, B, K = matrices(P)
        pairs = quadratic_eigen(M, B, K, 2 * M.shape[0], shift)
        b = error_bounds(M, B, K, pairs.values, pairs.right, pairs.left)
        return verdict(pairs.values, b.bounds, b.conservative).state == "unstable"

    if unstable(lo) or not unstable(hi):
        raise ValueError(f"no stability boundary bracketed by [{lo}, {hi}]")
    while hi - lo > tol * max(abs(lo), abs(hi), 1.0):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if unstable(mid) else (mid, hi)
    return 0.5 * (lo + hi)
