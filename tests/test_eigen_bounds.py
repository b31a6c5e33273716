"""Error bounds of quadratic eigenvalues and the stability verdicts built on them (issue 27).

Oracles: the spectrum of the companion pencil (a bound must cover the distance of an approximate
eigenvalue to it; by LAPACK, or in 30-digit arithmetic where LAPACK's is not exact enough),
closed forms of one-DOF problems (a simple root, a critically damped double root), and Kane's
spinning beam, a conservative gyroscopic model whose exact eigenvalues lie on the imaginary axis
(its computed real parts are round-off and must stay within their bounds; the old rule,
``Re p > 1e-9 max |p|``, called 150 beams by the two-sided Lanczos unstable).
"""

import mpmath
import numpy as np
import pytest
import scipy.linalg as la
import scipy.sparse as sp
from helpers import line_beam, solve
from numpy.typing import NDArray

from fem.solvers.eigen.bounds import conservative_gyroscopic, error_bounds, verdict


def companion(M, D, K):
    """All eigenvalues and right vectors of ``p^2 M + p D + K`` (LAPACK, dense)."""
    n = len(M)
    I, Z = np.eye(n), np.zeros((n, n))
    w, V = la.eig(np.block([[Z, I], [-K, -D]]), np.block([[I, Z], [Z, M]]))
    return w, V[:n]


def exact_spectrum(M, D, K, digits: int = 30) -> NDArray:
    """All eigenvalues of ``p^2 M + p D + K`` for the stored (binary) matrices, to ``digits``.

    LAPACK's are not a reference at the 1e-10 level: a near-defective pair (split by 2e-6 |p|)
    is computed with an error of ``eps`` over its separation, 1e-10 |p|, and the stored
    matrices of an exactly defective or singular model are not exactly so (their eigenvalues
    differ from the model's by ``sqrt(eps)``).
    """
    n = len(M)
    with mpmath.workdps(digits):
        Minv = mpmath.inverse(mpmath.matrix(M.tolist()))
        A = mpmath.zeros(2 * n)
        lower_left = -Minv * mpmath.matrix(K.tolist())
        lower_right = -Minv * mpmath.matrix(D.tolist())
        for i in range(n):
            A[i, n + i] = 1
            for j in range(n):
                A[n + i, j], A[n + i, n + j] = lower_left[i, j], lower_right[i, j]
        return np.array([complex(e) for e in mpmath.eig(A, left=False, right=False)])


def random_problem(rng, kind: str, n: int):
    """``M, D, K`` of one kind: damped, gyroscopic, circulatory, undamped, near-critically
    damped (double roots split by 0 to 1e-4), or free (a singular ``K``)."""
    A = rng.standard_normal((n, n))
    M = A @ A.T + n * np.eye(n)
    B = rng.standard_normal((n, n))
    K = B @ B.T + 0.1 * np.eye(n)
    C = rng.standard_normal((n, n))
    D = np.zeros((n, n))
    if kind == "damped":
        D = 0.1 * (C + C.T)
    elif kind == "gyroscopic":
        D = C - C.T
    elif kind == "circulatory":
        D, K = C, K + 0.5 * rng.standard_normal((n, n))
    elif kind == "critical":
        m, k = rng.uniform(0.5, 2.0, n), rng.uniform(0.5, 2.0, n)
        d = 2 * np.sqrt(m * k * (1 + rng.choice([0.0, 1e-12, 1e-8, 1e-4])))
        T = np.linalg.qr(rng.standard_normal((n, n)))[0]
        M, D, K = (T @ np.diag(v) @ T.T for v in (m, d, k))
    elif kind == "free":
        B = rng.standard_normal((n, n - 1))
        K = B @ B.T
    return M, D, K


KINDS = ("damped", "gyroscopic", "circulatory", "undamped", "critical", "free")


@pytest.mark.parametrize("kind", KINDS)
def test_a_bound_covers_the_distance_to_the_spectrum(kind):
    """An exact eigenvector with its eigenvalue moved by 1e-10 to 1e-3 of |p| in a random
    direction: the bound is at least the distance to the nearest eigenvalue of the problem, on
    40 random problems of 2 to 5 DOFs (simple, double, defective and rigid-body eigenvalues).
    The nearly defective and the singular problems take their spectrum from
    :func:`exact_spectrum` (LAPACK's missed the true distance by 3e-10 on one build); the others
    are separated well enough for LAPACK's (errors of 1e-15 |p| against moves of 1e-10 |p|)."""
    rng = np.random.default_rng(KINDS.index(kind))
    for _ in range(40):
        n = int(rng.integers(2, 6))
        M, D, K = random_problem(rng, kind, n)
        w, X = companion(M, D, K)
        exact = exact_spectrum(M, D, K) if kind in ("critical", "free") else w
        i = int(rng.integers(len(w)))
        for delta in (1e-10, 1e-6, 1e-3):
            p = w[i] + delta * abs(w[i]) * np.exp(2j * np.pi * rng.random())
            b = error_bounds(*(sp.csr_matrix(A) for A in (M, D, K)), np.array([p]), X[:, [i]])
            assert b.bounds[0] >= np.abs(exact - p).min(), (kind, n, delta)


def test_a_simple_root_gets_a_first_order_bound():
    """m p^2 + d p + k with d^2 < 4 m k: p moved by delta gets a bound between delta and
    3 delta (the first-order bound is 2 |p| kappa eta, kappa and eta as Tisseur defines them,
    times 2 / (1 + sqrt(1 - 4 m |Q(p)| / |Q'(p)|^2)), the sharp bound on the smaller root)."""
    m, d, k = 2.0, 0.3, 50.0
    p0 = (-d + np.sqrt(complex(d * d - 4 * m * k))) / (2 * m)
    for delta in (1e-9, 1e-5):
        p = p0 + delta
        b = error_bounds(sp.csr_matrix([[m]]), sp.csr_matrix([[d]]), sp.csr_matrix([[k]]),
                         np.array([p]), np.ones((1, 1)))
        assert delta <= b.bounds[0] <= 3 * delta
        eta = abs(m * p * p + d * p + k) / (abs(p) ** 2 * m + abs(p) * d + k)
        kappa = (abs(p) ** 2 * m + abs(p) * d + k) / (abs(p) * abs(2 * m * p + d))
        assert b.backward_errors[0] == pytest.approx(eta, rel=1e-6)
        assert b.condition[0] == pytest.approx(kappa, rel=1e-6)
        quadratic = 2 / (1 + np.sqrt(1 - 4 * m * abs(m * p * p + d * p + k)
                                     / abs(2 * m * p + d) ** 2))
        assert b.bounds[0] == pytest.approx(2 * abs(p) * kappa * eta * quadratic, rel=1e-6)


def test_a_defective_root_gets_the_square_root_bound_not_an_infinite_one():
    """Critical damping: p = -d / 2m is a double, defective root; Q'(p) vanishes there, so the
    first-order bound is about 2 delta / (2 m delta) |Q(p)| -> the sqrt bound is the one used,
    which is the error exactly (|Q(p0 + delta)| = m delta^2), plus, at delta = 1e-7, the square
    root of the rounding of the residual's evaluation (3 eps (|p|^2 m + |p| d + k) / m,
    (8e-8)^2), and the bound is twice it (its margin for the scalar reduction)."""
    m, k = 1.5, 6.0
    d = 2 * np.sqrt(m * k)
    p0 = -d / (2 * m)
    for delta in (1e-7, 1e-3):
        p = p0 + delta
        b = error_bounds(sp.csr_matrix([[m]]), sp.csr_matrix([[d]]), sp.csr_matrix([[k]]),
                         np.array([p]), np.ones((1, 1)))
        rounding = 3 * np.finfo(float).eps * (p * p * m + abs(p) * d + k) / m
        assert 2 * delta * (1 - 1e-6) <= b.bounds[0] <= 2.02 * np.sqrt(delta**2 + rounding)


def test_verdict_rules():
    """Growth only beyond the bound; |p| within the bound of 0 is neutral (never growth);
    no eigenvalue is unknown; the messages print the largest real part with its bound."""
    v = verdict(np.array([1e-6 + 5j, 3e-7 + 0j, -3e-7 + 0j]), np.array([1e-5, 1e-6, 1e-6]))
    assert v.state == "stable" and list(v.neutral) == [False, True, True]
    assert v.neutral_pairs == 1 and v.max_real == pytest.approx(1e-6)
    text = v.describe()
    assert "max Re p = 1e-06 (error bound 1e-05)" in text
    assert "neutral: 1 rigid-body/neutral pairs" in text
    v = verdict(np.array([2e-5 + 5j, -1 + 2j]), np.array([1e-5, 1e-5]))
    assert v.state == "unstable" and list(v.growing) == [True, False]
    assert v.describe().startswith("UNSTABLE: max Re p = 2e-05 (error bound 1e-05)")
    v = verdict(np.zeros(0, complex), np.zeros(0))
    assert v.state == "unknown" and "no eigenvalue" in v.describe()


def test_conservative_gyroscopic_models_are_recognized():
    rng = np.random.default_rng(3)
    M, D, K = random_problem(rng, "gyroscopic", 4)
    assert conservative_gyroscopic(*(sp.csr_matrix(A) for A in (M, D, K)))
    assert not conservative_gyroscopic(*(sp.csr_matrix(A) for A in (M, D + 0.1 * np.eye(4), K)))


def kane(n: int, method: str) -> dict:
    """Kane's beam (L = 10, EI = 1.4e4, rho A = 1.2, EA = 2.8e7) clamped on the spin axis,
    spun at 2 rad/s, 3D, 20 pairs (repro D07 with ``n`` beams instead of 1200)."""
    d = line_beam(3, n, length=10.0, E=1.4e4, G=7.0e3, A=2.0e3, Iz=1.0, Iy=1.0, J=1.0,
                  rotary_inertia=False)
    d["sections"][0]["mass_per_length"] = 1.2
    d["supports"] = [{"nodes": [1], "fixed": ["all"]}]
    d["steps"] = [{"name": "spin", "type": "linearize", "spin": [0.0, 0.0, 2.0], "modes": 20,
                   "method": method}]
    return d


def test_a_conservative_spinning_beam_is_not_called_unstable_by_round_off():
    """Repro D07 at 150 beams: the two-sided Lanczos gives real parts up to 1e-5 at 770 rad/s
    (the exact ones are 0: the model is conservative gyroscopic), which the old rule called
    growth; every one is within its error bound, and the verdict is stable, without warning."""
    step = solve(kane(150, "lanczos"))[3][0]
    e = step.eigen
    assert e.conservative
    assert np.all(np.abs(e.values.real) <= e.bounds)
    assert e.stable() and not step.warnings


def test_lanczos_eigenvalues_are_within_their_bounds_of_lapack():
    """Kane's beam at 30 beams: each Lanczos eigenvalue is within its bound (plus LAPACK's) of
    one of LAPACK's, and both verdicts are stable."""
    lanczos = solve(kane(30, "lanczos"))[3][0].eigen
    dense = solve(kane(30, "dense"))[3][0].eigen
    for p, b in zip(lanczos.values, lanczos.bounds, strict=True):
        near = np.argmin(np.abs(dense.values - p))
        assert abs(dense.values[near] - p) <= b + dense.bounds[near]
    assert lanczos.stable() and dense.stable()


def test_an_eigenvalue_known_to_fewer_than_three_digits_is_a_warning():
    """A bound above 1e-3 |p| (Lanczos on repro D07's 1200 beams accepts p = 576.6 rad/s,
    23 rad/s from the nearest eigenvalue, with a bound of 48) makes the step warn, once; a
    neutral eigenvalue (|p| within its bound) does not count."""
    from fem.analysis.linear_model import Eigenvalues

    step = solve(kane(20, "dense"))[3][0]
    assert not step.warnings
    e = Eigenvalues(np.array([100j, 1e-6 + 0j, 50j]), np.zeros((3, 3)), np.zeros(3),
                    np.array([0.5, 1e-5, 1e-3]))
    assert step.warn_inaccurate(e)
    assert len(step.warnings) == 1
    assert "1 eigenvalue(s) are known to fewer than three digits: p = 0+100j has an error " \
           "bound of 0.5" in step.warnings[0]
    assert not step.warn_inaccurate(e)          # once per step


def test_the_low_modes_of_a_fine_stiff_beam_get_tight_bounds():
    """Kane's beam at 600 beams (EA / l = 1.7e9 against rho A omega^2 = 18 of its lowest mode):
    the Cauchy-Schwarz bound ``||r|| / |z^T Q' x|`` of a double-precision vector is ``eps |K| |x|``
    over that, 8e-4 of the lowest |p| (1.3e-2 at 1200 beams, repro D07: a warning that it is
    known to fewer than three digits);
    ``z^T r`` in extended precision sees what the eigenvalue carries. Every bound of the 20
    pairs is below 1e-5 |p|, and the pairs from a second solve at another shift (other
    vectors, other round-off) agree with them within the sum of their bounds."""
    d = kane(600, "lanczos")
    first = solve(d)[3][0]
    d["steps"][0]["shift"] = 40.0
    second = solve(d)[3][0]
    assert not first.warnings
    e = first.eigen
    assert np.all(e.bounds <= 1e-5 * np.abs(e.values))
    for p, b in zip(e.values, e.bounds, strict=True):
        near = np.argmin(np.abs(second.eigen.values - p))
        if abs(second.eigen.values[near] - p) < 1e-3 * abs(p):      # both solves have it
            assert abs(second.eigen.values[near] - p) <= b + second.eigen.bounds[near]
