"""Two-sided (non-symmetric) Lanczos for ``(p^2 M + p B + K) x = 0`` (Doan, Geradin & Kill).

The method of Doan, Geradin & Kill for the eigenvalues of linearized flexible mechanisms
(damped, gyroscopic, follower-loaded, constrained by multipliers), as reconstructed in
notes/lanczos_linearization.md, sections A.3-A.6:

* **First-order form without inverting M** (eqs. 3.2-3.4, "inverse" form): with the shift
  ``p = p_s + p_t`` (eq. 3.15: ``B* = B + 2 p_s M``, ``K* = K + p_s B + p_s^2 M``) the state
  operator ``C = [[-K*^-1 B*, -K*^-1 M], [I, 0]]`` has the eigenvalues ``lam = 1 / (p - p_s)``, so
  those nearest the shift dominate; ``C`` and ``C^T`` are applied with ONE sparse LU of ``K*``
  (a solve and a transposed solve), never with ``M^-1``: a singular ``M`` (multiplier rows) is
  fine. The shift may be complex. A singular ``K*`` (a rigid or kinematic mode at the shift)
  is refused (:class:`SingularShift`): shift away from it (section A.6, "positive shifting").
* **Biorthogonal recurrence** (eqs. 3.8-3.11), one right and one left iterate per step, in
  complex arithmetic with the normalization ``g^T d = 1`` (``T_k`` complex symmetric, which is
  the paper's ``J T`` symmetry with the signs ``eps_k`` absorbed into complex scalings); full
  two-sided re-biorthogonalization, twice, as blocked products ``D (G^T r)``, ``G (D^T s)``.
* **Breakdown as termination** (A.5): ``||r|| <= 1e-6 ||C d||`` (or the left one) is an invariant
  subspace (the Ritz values are exact); ``|s^T r| <= 1e-10 ||r|| ||s||`` a serious breakdown
  (in multiplier models it comes once the finite spectrum is exhausted). Both end the pass.
* **Restarts with biorthogonal deflation** (A.5): each further pass starts from random vectors
  deflated against the accepted pairs, ``d -= x (z^T d) / (z^T x)``, ``g -= z (x^T g) / (z^T x)``,
  so that a multiple eigenvalue, which one pass finds once, is found with its multiplicity; a start
  that deflation leaves empty ends the search (no false multiplicities). A pass whose Ritz pairs
  approximate eigenpairs but none to tolerance (a recurrence that lost its biorthogonality on a
  strongly non-normal problem) is followed by another from a fresh start; if the passes end with
  fewer pairs than wanted while such approximations remain, :class:`~fem.errors.ConvergenceError`
  says how many were accepted (fewer pairs are returned only when the finite spectrum is
  exhausted).
* **Rayleigh-quotient refinement** ``lam = z^T C x / z^T x`` of every Ritz pair (L14780-14789),
  and **acceptance** only after the second-order backward error of notes D.4,
  ``eta = ||(p^2 M + p B + K) x|| / ((|p|^2 ||M|| + |p| ||B|| + ||K||) ||x||) < 1e-8`` (``1e-6``
  for ``|p|`` below ``1e-4`` of the problem's scale: defective rigid modes are only
  ``sqrt(eps)``-accurate, T4).
* **Parasitic eigenvalues** (A.6, T7): Ritz values ``|lam| < 1e-6 max |lam|`` (the largest over
  every pass so far) are ``p = inf`` (the zero mass of multiplier rows) and are discarded: the
  backward error alone does not reject them (their vectors lie in the null space of ``M``, and
  the scale ``|p|^2 ||M||`` of a huge ``p`` hides the residual).

Pairs come back ordered by ``|p - p_s|`` (the order the shift gives them: T5's "jump" over a
lower frequency is the shift's, and the caller sees it); a pass is not ended early while some Ritz
value nearer the shift than an accepted one is still unconverged.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from numpy.typing import NDArray

from fem.errors import ConvergenceError


class SingularShift(ValueError):
    """``K + p_s B + p_s^2 M`` is singular: an eigenvalue sits at the shift."""


@dataclass
class QuadraticEigenpairs:
    """Eigenpairs of the quadratic problem.

    Eigenvalues ``p (m,)`` (complex), right and left vectors ``(n, m)`` (``x`` and ``y`` with
    ``(p^2 M + p B + K) x = 0``, ``y^T (p^2 M + p B + K) = 0``), their second-order backward
    errors, and the values each pass found.
    """

    values: NDArray
    right: NDArray
    left: NDArray
    backward_errors: NDArray
    passes: list[NDArray] = field(default_factory=list)


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


def _solve_complex(op: ShiftedOperator) -> Callable:
    """``C`` and ``C^T`` on complex vectors (real factors applied to both parts)."""
    def c(x):
        if op.lu.L.dtype == complex:
            return op.apply(x)
        return op.apply(x.real) + 1j * op.apply(x.imag)

    def ct(z):
        if op.lu.L.dtype == complex:
            return op.apply_t(z)
        return op.apply_t(z.real) + 1j * op.apply_t(z.imag)
    return c, ct


def quadratic_eigen(M, B, K, count: int, shift: complex = 0.0, *, tol: float = 1e-8,
                    max_steps: int | None = None, passes: int = 4,
                    seed: int = 0) -> QuadraticEigenpairs:
    """The ``count`` eigenpairs of ``(p^2 M + p B + K) x = 0`` nearest ``shift`` (module doc).

    Parameters
    ----------
    M, B, K : scipy sparse ``(n, n)`` real matrices (any symmetry; ``M`` may be singular)
    count : pairs wanted (complex conjugates count separately)
    shift : ``p_s``, real or complex
    tol : second-order backward error at which a pair is accepted
    max_steps : Lanczos steps per pass (default ``2 n``, the size of the state space)
    passes : restarts with deflation (multiple eigenvalues need one pass per copy)

    Raises :class:`SingularShift` when an eigenvalue sits at the shift.
    """
    op = ShiftedOperator(M, B, K, shift)
    C, CT = _solve_complex(op)
    n = op.n
    N = 2 * n
    max_steps = min(max_steps or N, N)
    rng = np.random.default_rng(seed)
    scale = max(_norm1(K), 1e-300) / max(_norm1(M), 1e-300)     # |p|^2 of the problem
    X, Z, P, eta = [], [], [], []                                 # accepted pairs
    found = []
    lam_ref = 0.0
    missed = []                # backward errors of the approximate pairs the last pass rejected
    for _ in range(passes):
        got = _pass(C, CT, N, max_steps, rng, X, Z, count - len(P))
        if got is None:
            missed = []
            break                                    # deflation left nothing to find
        new, missed = [], []
        # parasitic (p = infinity) against the largest |lam| of every pass so far: a pass after
        # the finite spectrum is exhausted finds parasitic values only
        lam_ref = max([lam_ref] + [abs(lam) for lam, _, _ in got])
        for lam, x, z in got:
            if abs(lam) < 1e-6 * lam_ref:
                continue
            p = shift + 1.0 / lam
            e = backward_error(M, B, K, p, x[:n])
            limit = 1e-6 if abs(p) < 1e-4 * np.sqrt(scale) else tol
            if e <= limit:
                X.append(x)
                Z.append(z)
                P.append(p)
                eta.append(e)
                new.append(p)
            elif e < 1e-2:
                # an eigenpair approximated, not to tolerance (a Ritz pair of an exhausted
                # space approximates nothing: its backward error is near 1)
                missed.append(e)
        found.append(np.array(new))
        if len(P) >= count or not (new or missed):
            break                    # enough, or only parasitic values left: the finite spectrum
    if len(P) < count and missed:
        # finite values the passes could not make accurate: fewer pairs would pass for all there
        # are (a two-sided recurrence can lose its biorthogonality on strongly non-normal
        # problems), so say so
        raise ConvergenceError(f"the two-sided Lanczos accepted {len(P)} of the {count} "
                               f"eigenvalues wanted within {passes} passes (the best of the "
                               f"others has a backward error of {min(missed):.1g}, above "
                               f"{tol:g}): try another shift")
    P = np.array(P, dtype=complex)
    order = np.argsort(np.abs(P - shift), kind="stable")[:count]
    Xq = np.array([X[i][:n] for i in order]).T if len(order) else np.zeros((n, 0), complex)
    Zq = np.array([op.left_vector(Z[i]) for i in order]).T if len(order) else \
        np.zeros((n, 0), complex)
    return QuadraticEigenpairs(P[order], Xq, Zq, np.array(eta)[order] if len(order) else
                               np.zeros(0), found)


def _deflate(d, g, X, Z):
    """Biorthogonal deflation of ``d``, ``g`` against accepted pairs ``(x, z)``."""
    for x, z in zip(X, Z, strict=True):
        zx = z @ x
        d = d - x * ((z @ d) / zx)
        g = g - z * ((x @ g) / zx)
    return d, g


def _pass(C, CT, N, max_steps, rng, X, Z, wanted):
    """One Lanczos run.

    Returns the refined, non-parasitic Ritz triples ``(lam, x, z)``, or None when deflation
    leaves no start.
    """
    start_d = C(rng.standard_normal(N) + 0j)            # one power iteration (A.4 (a))
    start_g = CT(rng.standard_normal(N) + 0j)
    d, g = _deflate(start_d, start_g, X, Z)
    if np.linalg.norm(d) <= 1e-8 * np.linalg.norm(start_d) or \
            np.linalg.norm(g) <= 1e-8 * np.linalg.norm(start_g):
        return None
    w = g @ d
    if abs(w) <= 1e-14 * np.linalg.norm(d) * np.linalg.norm(g):
        return None
    delta = np.sqrt(w + 0j)
    D = np.zeros((N, max_steps + 1), dtype=complex)
    G = np.zeros((N, max_steps + 1), dtype=complex)
    D[:, 0], G[:, 0] = d / delta, g / delta
    alpha, beta = [], []                       # T: diagonal, and the symmetric off-diagonal
    k = 0
    while True:
        Cd, CTg = C(D[:, k]), CT(G[:, k])
        a = G[:, k] @ Cd
        alpha.append(a)
        r = Cd - a * D[:, k] - (beta[-1] * D[:, k - 1] if k else 0)
        s = CTg - a * G[:, k] - (beta[-1] * G[:, k - 1] if k else 0)
        for _ in range(2):                     # full two-sided re-biorthogonalization
            r = r - D[:, :k + 1] @ (G[:, :k + 1].T @ r)
            s = s - G[:, :k + 1] @ (D[:, :k + 1].T @ s)
            r, s = _deflate(r, s, X, Z)
        k += 1
        if k >= max_steps:
            break
        nr, ns = np.linalg.norm(r), np.linalg.norm(s)
        if nr <= 1e-6 * np.linalg.norm(Cd) or ns <= 1e-6 * np.linalg.norm(CTg):
            break                              # invariant subspace: the Ritz values are exact
        w = s @ r
        if abs(w) <= 1e-10 * nr * ns:
            break                              # serious breakdown: end of this pass
        delta = np.sqrt(w)
        beta.append(delta)
        D[:, k], G[:, k] = r / delta, s / delta
        if k >= wanted and k % 5 == 0 and _converged(alpha, beta, delta, wanted):
            break
    T = np.diag(np.array(alpha, dtype=complex))
    for i, b in enumerate(beta[:k - 1]):
        T[i + 1, i] = T[i, i + 1] = b
    theta, R = np.linalg.eig(T)
    out = []
    for lam0, rv in zip(theta, R.T, strict=True):
        x, z = D[:, :k] @ rv, G[:, :k] @ rv
        zx = z @ x
        if abs(zx) <= 1e-12 * np.linalg.norm(x) * np.linalg.norm(z):
            continue
        lam = (z @ C(x)) / zx                  # Rayleigh quotient
        out.append((lam if np.isfinite(lam) else lam0, x / np.linalg.norm(x),
                    z / np.linalg.norm(z)))
    return out


def _converged(alpha, beta, delta, wanted) -> bool:
    """Whether the ``wanted`` largest Ritz values of ``T`` have converged.

    Their residual estimates ``|delta e_k^T r| / |theta|`` (A.5) are small, and none nearer
    the shift is still moving.
    """
    k = len(alpha)
    T = np.diag(np.array(alpha, dtype=complex))
    for i, b in enumerate(beta[:k - 1]):
        T[i + 1, i] = T[i, i + 1] = b
    theta, R = np.linalg.eig(T)
    top = np.argsort(-np.abs(theta))[:wanted]
    est = np.abs(delta * R[-1, top]) / np.maximum(np.abs(theta[top]), 1e-300)
    return bool(np.all(est < 1e-10))


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
