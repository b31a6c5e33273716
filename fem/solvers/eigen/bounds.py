"""Error bounds of computed eigenvalues of ``(p^2 M + p D + K) x = 0``, and stability verdicts.

An eigen-solver returns eigenvalues ``p`` correct to some accuracy, and a real part of ``1e-2``
on ``|p| = 770`` (a conservative spinning beam, Lanczos) or ``+5e-6`` on a rigid-body zero
(LAPACK) is round-off, not growth. This module states that accuracy for each eigenvalue and
decides a verdict against it.

**Backward error and condition** (Tisseur 2000, "Backward error and condition of polynomial
eigenvalue problems", Linear Algebra Appl. 309, 339-361, Thm 1 and 5). For an approximate pair
``(p, x)`` with residual ``r = Q(p) x``, ``Q(p) = p^2 M + p D + K``, the backward error is

    eta = ||r|| / ((|p|^2 ||M|| + |p| ||D|| + ||K||) ||x||),

and the relative condition number of a simple eigenvalue with left vector ``y`` is

    kappa = (|p|^2 ||M|| + |p| ||D|| + ||K||) ||x|| ||y|| / (|p| |y^H Q'(p) x|),
    Q'(p) = 2 p M + D,

so that ``|dp| <= |p| kappa eta`` to first order. The weights cancel in the product:
``|p| kappa eta = ||r|| ||y|| / |y^H Q'(p) x|`` (2-norms; matrix norms here are infinity norms,
used only for the reported ``eta`` and ``kappa``). Vectors are in the transposed convention of
:mod:`fem.solvers.eigen.lanczos2`: ``z^T Q(p) = 0``, ``y = conj(z)``.

**What is bounded.** ``(p, x)`` is an exact eigenpair of ``Q + E``, ``E = -r x^H / ||x||^2``
(``||E||_2 = ||r|| / ||x||``). The bound is that of the scalar quadratic ``z^T Q(p + d) x = 0``,
``a d^2 + b d + c = 0`` with ``a = z^T M x``, ``b = z^T Q'(p) x`` and ``c = z^T r``
(``||x|| = ||z|| = 1``). Taken as ``|c| <= |z^T r| + |z|^T rho + ||r|| ||s|| |a| / |b|^2``
(``rho`` the residual's rounding, below; the last term what the error of ``z`` hides: its left
residual ``s = Q(p)^T z`` over the smallest singular value of ``Q(p)`` near the eigenvalue,
about ``|b|`` times the separation ``|b / a|`` from its partner; used only where that separation
is at least :data:`SEPARATED` ``|p|``: near a double eigenvalue ``x`` and ``z`` are not
determined well enough for it), and never above ``||r||``, the
Cauchy-Schwarz bound: a double-precision vector of a stiff model has ``||r|| ~ eps |K| |x|``
from its representation alone, which ``z^T r`` does not see (``z^T K dx = -z^T (p^2 M + p D)
dx``): the low modes of 1200 beams get bounds of ``1e-9 |p|``, not ``1e-2 |p|``.

Given only ``|a|``, ``|b|``, ``|c|``, the smaller root ``d_1`` of the quadratic satisfies
``|d_1| <= r``, the sharp bound over the unknown phases: ``|b / a| = |d_1 + d_2| <= |d_1| +
|c / a| / |d_1|`` leaves ``|d_1| <= r_- = 2 |c| / (|b| + sqrt(|b|^2 - 4 |a| |c|))`` where
``|b|^2 >= 4 |a| |c|``, and ``|d_1|^2 <= |d_1 d_2| = |c / a|`` gives ``r = sqrt(|c| / |a|)``
otherwise. A simple, well separated eigenvalue gets ``r ~ |c| / |b|``, first order
(``|p| kappa eta``); as it nears a double one ``kappa`` grows and ``r`` tends to ``sqrt(|c| /
|a|)``, ``O(sqrt(eta))``, the bound of a double eigenvalue where ``b`` vanishes (a rigid-body
mode's double zero with ``D = 0``, divergence and flutter onsets, near-defective pairs), so a
near-multiple or defective eigenvalue gets a large bound, never a small one.

The bound is ``2 r``. The scalar quadratic is exact only to first order in the errors of ``x``
and ``z``, and at a double root ``r`` is the distance itself, with no margin: a rigid-body
double zero computed as ``+-delta`` gets ``r = delta`` to the last digits, so that whether it
is neutral was decided by round-off (a column's free translation, ``p = 2.354e-5`` with ``r =
2.344e-5`` from Debian's LAPACK, ``6.520e-5`` with ``6.524e-5`` from another). The factor 2
also keeps Tisseur's first-order bound, ``2 |p| kappa eta``, for a well separated eigenvalue.
(A triple or higher defective eigenvalue moves as ``eta^(1/3)``; the bound is then optimistic.
They do not occur in the models of this project's steps: a rigid-body mode gives a Jordan block
of size 2.)

**Which x and z.** The solver's vector carries the round-off of its stiff components (a
LAPACK vector of a model with ``EA / l = 1e12`` has ``||r|| ~ eps ||K||``, which is the vector's
error, not the eigenvalue's). So ``x`` is first refined by two steps of inverse iteration with
``Q(p)`` (one sparse LU per eigenvalue; ``Q(p)`` is singular to the accuracy of ``p``, which is
what makes the step converge), and the left vector ``z`` is computed the same way with
``Q(p)^T`` from two starts, ``x`` and ``conj(x)``, keeping the one with the larger
``|z^T Q' x| / ||z||`` (inside a multiple eigenvalue the left vector matching ``x`` is not
unique; the other start finds it). Where ``Q(p)`` is real (``p`` real, or ``D = 0`` and ``p``
imaginary) the real or imaginary part of ``x`` is kept, so that a vector of a double frequency
is not an isotropic complex combination (``x^T M x = 0``). The residual is evaluated in floating
point, so it is taken as ``||r|| + ||k u (|p|^2 |M| + |p| |D| + |K|) |x| ||``, ``k`` the
longest row of the matrices: the rounding of the evaluation itself (Higham, *Accuracy and
Stability of Numerical Algorithms*, 2nd ed., eq. 3.5). It is evaluated in extended precision
(``numpy.longdouble``, ``u = 2^-64`` on x86): in double (``u = eps``) the rounding of ``K x``,
``eps |K| |x|``, dwarfs ``p^2 M x`` for the low modes of a fine or stiff model (``eps N^4``
of the lowest bending eigenvalue of ``N`` beams: 0.5% at 1200), and the bound would be the
evaluation's, not the eigenvalue's.

**Verdicts** (:func:`verdict`). An eigenvalue is

* *neutral* when ``|p| <= bound``: it cannot be told from zero (rigid-body motions, the free
  rotation of a mechanism, a pair at a stability boundary); never counted as growth;
* *growing* when ``Re p > bound``: the exact eigenvalue within the bound has a positive real
  part;
* otherwise stable (its exact real part is at most ``bound``).

The state is unstable if an eigenvalue grows, stable if none does, and *unknown* if the solve
returned no eigenvalue. Every message prints the bound it used.

**Conservative gyroscopic models** (``M``, ``K`` symmetric, ``D`` skew: spin without damping or
circulatory forces; :func:`conservative_gyroscopic`). Then ``Q(p)^T = Q(-p)``, so the spectrum
is Hamiltonian, symmetric about the imaginary axis (``p`` and ``-conj(p)``), and the left vector
of ``p`` is the right vector of ``-p``: ``conj(x)`` for ``p`` on the axis, the first start tried
above. The structure is used for the verdict as follows: a simple eigenvalue of such a model
can leave the imaginary axis only by colliding with another (Krein), so a simple eigenvalue
with ``|Re p| <= bound`` whose bound disc holds no other computed eigenvalue lies exactly on the
axis; its computed real part is round-off. The verdict is the same rule, and the summary says
which of the non-growing eigenvalues it proves to be on the axis (:attr:`Verdict.on_axis`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from fem import lazy

sp = lazy.module("scipy.sparse")

EPS = float(np.finfo(float).eps)
#: unit round-off of the residual's evaluation (x86: 80-bit extended, 2^-64; where long double
#: is double, eps)
EPS_RESIDUAL = float(np.finfo(np.longdouble).eps)
#: steps of inverse iteration refining the right and the left vector
STEPS = 2
#: ``|c|`` from ``z^T r`` only for an eigenvalue this far (relative) from its partner, ``|b / a|``
SEPARATED = 1e-2


@dataclass
class ErrorBounds:
    """Absolute error bounds ``(m,)`` of eigenvalues and what they are made of.

    ``bounds``: the bound on ``|p - p_exact|`` (module docstring); ``backward_errors``: ``eta``
    of the refined pairs; ``condition``: ``kappa`` (relative; ``inf`` at ``p = 0`` or where
    ``z^T Q' x`` vanishes); ``conservative``: whether the model is conservative gyroscopic.
    """

    bounds: NDArray
    backward_errors: NDArray
    condition: NDArray
    conservative: bool


def _norm_inf(A) -> float:
    return float(abs(A).sum(axis=1).max()) if A.nnz else 0.0


def conservative_gyroscopic(M, D, K, rtol: float = 1e-12) -> bool:
    """Whether ``M``, ``K`` are symmetric and ``D`` skew-symmetric (to ``rtol`` of each norm).

    ``D = 0`` counts (an undamped symmetric model): its spectrum is Hamiltonian too.
    """
    def small(A, ref):
        return (abs(A).max() if A.nnz else 0.0) <= rtol * max(ref, 1e-300)

    M, D, K = (sp.csr_matrix(X) for X in (M, D, K))
    return (small(M - M.T, abs(M).max() if M.nnz else 0.0)
            and small(K - K.T, abs(K).max() if K.nnz else 0.0)
            and small(D + D.T, abs(D).max() if D.nnz else 0.0))


def _factor(M, D, K, p: complex, scale: float):
    """A sparse LU of ``Q(q)`` at ``q = p`` or, if exactly singular there, just beside it."""
    import scipy.sparse.linalg as spla  # (0.1 s; only steps with eigenvalues need it)

    for step in (0.0, 1e-8, 1e-6, 1e-4):
        q = p + step * max(abs(p), scale) * (1.0 + 1.0j) / np.sqrt(2.0)
        try:
            return spla.splu(sp.csc_matrix(q * q * M + q * D + K, dtype=complex))
        except RuntimeError:            # an exact zero pivot: an eigenvalue exactly at q
            continue
    return None


def _iterate(lu, v: NDArray, trans: str) -> NDArray | None:
    """``STEPS`` steps of inverse iteration from ``v``, or None if they overflow."""
    v = v / np.linalg.norm(v)
    for _ in range(STEPS):
        v = lu.solve(v, trans=trans)
        norm = np.linalg.norm(v)
        if not np.isfinite(norm) or norm == 0.0:
            return None
        v = v / norm
    return v


def smaller_root(a: float, b: float, c: float) -> float:
    """The largest ``|d|`` of the smaller root of ``a d^2 + b d + c = 0`` given ``|a|, |b|, |c|``.

    ``r_-`` where ``b^2 >= 4 a c``, else ``sqrt(c / a)`` (module docstring).

    >>> smaller_root(1.0, 2.0, 1.0), smaller_root(0.0, 4.0, 2.0), smaller_root(1.0, 0.0, 4.0)
    (1.0, 0.5, 2.0)
    """
    disc = b * b - 4 * a * c
    if b > 0 and disc >= 0:
        return 2 * c / (b + np.sqrt(disc))
    return float(np.sqrt(c / a)) if a > 0 else np.inf


def error_bounds(M, D, K, values: NDArray, vectors: NDArray, left: NDArray | None = None
                 ) -> ErrorBounds:
    """Error bounds of eigenvalues ``values (m,)`` with right vectors ``vectors (n, m)``.

    ``M``, ``D``, ``K``: scipy sparse ``(n, n)`` real matrices (``M`` may be singular: joints'
    multiplier rows). ``left (n, m)``: the solver's left vectors (``z^T Q(p) = 0``), tried as a
    further start of the left inverse iteration. One sparse LU per eigenvalue (module docstring).
    """
    M, D, K = (sp.csr_matrix(X, dtype=float) for X in (M, D, K))
    m = len(values)
    undamped = D.nnz == 0 or abs(D).max() == 0.0
    out = ErrorBounds(np.full(m, np.inf), np.full(m, np.inf), np.full(m, np.inf),
                      not undamped and conservative_gyroscopic(M, D, K))
    if m == 0:
        return out
    aM, aD, aK = abs(M), abs(D), abs(K)
    Ml, Dl, Kl = (X.astype(np.longdouble) for X in (M, D, K))
    k = int(np.diff((aM + aD + aK).tocsr().indptr).max(initial=1))
    nM, nD, nK = _norm_inf(M), _norm_inf(D), _norm_inf(K)
    scale = np.sqrt(max(nK, 1e-300) / max(nM, 1e-300))         # |p| of the problem
    for i, p in enumerate(np.asarray(values, dtype=complex)):
        lu = _factor(M, D, K, p, scale)
        if lu is None:
            continue
        x = _iterate(lu, np.asarray(vectors[:, i], dtype=complex), "N")
        if x is None:
            continue
        real_q = abs(p.imag) <= EPS * abs(p) or (undamped and abs(p.real) <= EPS * abs(p))
        if real_q:                      # Q(p) real: its null space has a real basis
            part = x.real if np.linalg.norm(x.real) >= np.linalg.norm(x.imag) else x.imag
            x = (part / np.linalg.norm(part)).astype(complex)
        Mx, Dx = M @ x, D @ x
        # the residual in extended precision: its rounding, not the eigenvalue's error, is what
        # bounds a stiff model's low eigenvalues in double (eps |K| |x| against p^2 M x)
        xl = x.astype(np.clongdouble)
        pl = np.clongdouble(p)
        r = (pl * pl * (Ml @ xl) + pl * (Dl @ xl) + Kl @ xl).astype(complex)
        rounding = k * EPS_RESIDUAL * (abs(p) ** 2 * (aM @ np.abs(x))
                                       + abs(p) * (aD @ np.abs(x)) + aK @ np.abs(x))
        res = float(np.linalg.norm(r) + np.linalg.norm(rounding))
        dQx = 2 * p * Mx + Dx
        starts = [x.conj(), x] if out.conservative else [x, x.conj()]
        if left is not None:
            starts.append(np.asarray(left[:, i], dtype=complex))
        weight = abs(p) ** 2 * nM + abs(p) * nD + nK
        best_b, best_a, best_c = 0.0, 0.0, np.inf
        for s in starts:
            z = _iterate(lu, s, "T")
            if z is None:
                continue
            b, a = abs(z @ dQx), abs(z @ Mx)
            if b > best_b or (best_b == 0.0 and a > best_a):
                # |c| of the module docstring: z^T r, the rounding of r, and what the left
                # vector's error leaves unseen, ||r|| ||dz||, ||dz|| <~ ||s|| |a| / |b|^2 (its
                # residual s over the separation |b / a| times |b|)
                zl = z.astype(np.clongdouble)
                s_left = (pl * pl * (zl @ Ml) + pl * (zl @ Dl) + zl @ Kl).astype(complex)
                unseen = (float(np.linalg.norm(r)) * float(np.linalg.norm(s_left)) * a / b ** 2
                          if b > 0 else np.inf)
                c = abs(z @ r) + float(np.abs(z) @ rounding) + unseen
                if b < SEPARATED * abs(p) * a:  # near a double eigenvalue x and z are not
                    c = res                     # determined well enough: Cauchy-Schwarz
                best_b, best_a, best_c = b, a, min(c, res)
        out.bounds[i] = 2 * smaller_root(best_a, best_b, best_c)
        out.backward_errors[i] = res / max(weight, 1e-300)
        out.condition[i] = (weight / (abs(p) * best_b) if abs(p) > 0 and best_b > 0
                            else np.inf)
    return out


@dataclass
class Verdict:
    """A stability verdict: ``"stable"``, ``"unstable"`` or ``"unknown"`` (no eigenvalue).

    ``growing``, ``neutral``, ``on_axis``: ``(m,)`` masks of the eigenvalues (module docstring);
    ``max_real`` and ``max_real_bound``: the largest real part among the eigenvalues that are not
    neutral (among the neutral ones if all are; NaN without eigenvalues) and its bound.
    """

    state: str
    values: NDArray
    bounds: NDArray
    growing: NDArray
    neutral: NDArray
    on_axis: NDArray
    max_real: float
    max_real_bound: float

    @property
    def neutral_pairs(self) -> int:
        """Neutral motions: neutral eigenvalues, a conjugate absent from the list counted, halved.

        (A real pair ``+-d`` is one motion, a complex ``p`` with its conjugate another.)
        """
        nz = self.values[self.neutral]
        count = 0
        for p in nz:
            alone = p.imag > 0 and not np.any(np.isclose(nz, p.conjugate(), rtol=0,
                                                        atol=1e-12 * abs(p)))
            count += 2 if alone else 1
        return (count + 1) // 2

    def describe(self) -> str:
        """One line: the verdict, the largest real part with its bound, the neutral pairs."""
        if self.state == "unknown":
            return "unknown: no eigenvalue found"
        parts = []
        if np.any(~self.neutral):
            parts.append(f"max Re p = {self.max_real:.3g} (error bound {self.max_real_bound:.2g})")
        else:
            parts.append("no eigenvalue but neutral ones")
        if np.any(self.neutral):
            parts.append(f"neutral: {self.neutral_pairs} rigid-body/neutral pairs (|p| within "
                         f"its error bound of 0, bound at most "
                         f"{float(self.bounds[self.neutral].max()):.2g})")
        if np.any(self.on_axis):
            parts.append(f"{int(np.count_nonzero(self.on_axis))} of "
                         f"{int(np.count_nonzero(~self.neutral))} on the imaginary axis "
                         "(simple eigenvalues of a conservative gyroscopic model)")
        head = "stable" if self.state == "stable" else "UNSTABLE"
        return head + (": " + "; ".join(parts) if parts else "")


def verdict(values: NDArray, bounds: NDArray, conservative: bool = False) -> Verdict:
    """The stability verdict of eigenvalues ``(m,)`` with error bounds ``(m,)`` (module doc).

    One of each conjugate pair is enough (the verdict reads real parts and moduli).
    """
    values = np.asarray(values, dtype=complex)
    bounds = np.asarray(bounds, dtype=float)
    if len(values) == 0:
        empty = np.zeros(0, dtype=bool)
        return Verdict("unknown", values, bounds, empty, empty, empty, np.nan, np.nan)
    neutral = np.abs(values) <= bounds
    growing = (values.real > bounds) & ~neutral
    on_axis = np.zeros(len(values), dtype=bool)
    if conservative:
        for i in np.flatnonzero(~neutral & (np.abs(values.real) <= bounds)):
            others = np.abs(values - values[i]) <= 2 * bounds[i] + bounds
            others[i] = False
            on_axis[i] = not np.any(others)
    rest = ~neutral if np.any(~neutral) else np.ones(len(values), dtype=bool)
    k = np.flatnonzero(rest)[np.argmax(values.real[rest])]
    top, top_bound = float(values.real[k]), float(bounds[k])
    state = "unstable" if np.any(growing) else "stable"
    return Verdict(state, values, bounds, growing, neutral, on_axis, top, top_bound)
