"""The restarted two-sided solver: multiplicities, accuracy, bounded memory, interrupts.

Oracles: LAPACK on the first-order pencil of the same matrices, scaled as Fan, Lin & Van Dooren
(SIAM J. Matrix Anal. Appl. 26, 2004: ``p = gamma mu``, ``gamma = sqrt(||K|| / ||M||)``; the
unscaled pencil of a steel beam, ``||K|| / ||M|| ~ 1e12``, loses 1e-7 of its eigenvalues), and
the structure of the problems: a square-section cantilever has every bending frequency twice
(flap = lag), a conservative gyroscopic model has every eigenvalue on the imaginary axis.
"""

import signal
import tracemalloc

import numpy as np
import pytest
import scipy.linalg as la
import scipy.sparse as sp
from helpers import line_beam, solve
from test_lanczos2 import assert_same_set, companion_eigenvalues

from fem import interrupt
from fem.errors import Interrupted
from fem.solvers.eigen import lanczos2
from fem.solvers.eigen.lanczos2 import quadratic_eigen


def pencil_eigenvalues(M, B, K):
    """The finite eigenvalues of ``p^2 M + p B + K`` by LAPACK (QZ) on the scaled first-order
    pencil ``[[0, I], [-d K, -d g B]] - mu [[I, 0], [0, d g^2 M]]``, ``p = g mu`` (module doc;
    ``M`` may be singular: its infinite eigenvalues are dropped)."""
    M, B, K = (np.asarray(X.toarray() if sp.issparse(X) else X, float) for X in (M, B, K))
    n = len(K)
    nM, nB, nK = (np.linalg.norm(X, 2) for X in (M, B, K))
    g = np.sqrt(nK / nM)
    d = 2.0 / (nK + nB * g + nM * g * g)
    Id, Z = np.eye(n), np.zeros((n, n))
    a, b = la.eig(np.block([[Z, Id], [-d * K, -d * g * B]]),
                  np.block([[Id, Z], [Z, d * g * g * M]]), right=False,
                  homogeneous_eigvals=True)
    finite = np.abs(b) > 1e-12 * np.abs(a)
    p = g * a[finite] / b[finite]
    return p[np.abs(p) < 1e8 * g]


def nearest(p, count, shift=0.0):
    return p[np.argsort(np.abs(p - shift), kind="stable")[:count]]


def multiplicities(values, rel=1e-9):
    """How many of ``values`` lie within ``rel`` of each: 1e-9, between the round-off of the
    values (1e-11) and the splitting of a double frequency by a slow spin (2e-7 and more)."""
    v = np.asarray(values)
    return np.array([np.count_nonzero(np.abs(v - x) <= rel * abs(x)) for x in v])


# --- a square-section cantilever: flap = lag ------------------------------------------------------
def square_cantilever(spin: float, modes: int = 8, n: int = 20) -> dict:
    """A steel cantilever of 1 m, 50 x 50 mm (Iy = Iz: every bending frequency twice at rest),
    linearized about a spin about z through its root."""
    a = 0.05
    d = line_beam(3, n, length=1.0, E=2.1e11, G=8.1e10, A=a * a, Iz=a ** 4 / 12,
                  Iy=a ** 4 / 12, J=0.141 * a ** 4)
    d["materials"][0]["density"] = 7850.0
    d["supports"] = [{"nodes": [1], "fixed": ["all"]}]
    d["steps"] = [{"name": "lin", "type": "linearize", "modes": modes,
                   "spin": [0.0, 0.0, spin]}]
    return d


@pytest.mark.parametrize("spin", [0.0, 3.0])
def test_a_square_cantilever_has_every_pair_with_its_multiplicity(spin):
    """At rest each bending frequency is double (the linearize step stopped with "accepted 8 of
    the 18 eigenvalues", backward error 3e-5, for any number of modes); spinning at 3 rad/s the
    gyroscopic coupling splits each pair (by 1e-5 to 1e-3 of it). Through the step (8 modes, one
    of each conjugate pair) and through the solver (16 values with their conjugates): the
    eigenvalues nearest zero of LAPACK, one to one, each as often as LAPACK has it."""
    step = solve(square_cantilever(spin))[3][0]
    lm = step.model
    exact = pencil_eigenvalues(lm.M, lm.D, lm.K)
    upper = nearest(exact[exact.imag > 0], 8)
    got = step.eigen.values
    assert len(got) == 8
    assert_same_set(got, upper, 1e-8 * np.abs(upper).max())
    assert np.array_equal(np.sort(multiplicities(got)), np.sort(multiplicities(upper)))
    if spin == 0.0:
        assert sorted(multiplicities(upper))[-6:] == [2] * 6      # three double frequencies
    else:
        assert multiplicities(upper).max() == 1
    pairs = quadratic_eigen(lm.M, lm.D, lm.K, 16)      # whole clusters: 18 cuts a double
    both = nearest(exact, 16)
    assert_same_set(pairs.values, both, 1e-8 * np.abs(both).max())
    assert np.array_equal(np.sort(multiplicities(pairs.values)), np.sort(multiplicities(both)))
    assert pairs.backward_errors.max() < 1e-8


# --- a conservative gyroscopic beam: D07 --------------------------------------------------------
def kane_beam(n: int, spin: float, modes: int) -> dict:
    """Kane's beam (notes T12; cases/spinning_beam_linearized) of ``n`` beams, no rotary
    inertia, linearized about a steady spin: conservative, gyroscopic."""
    d = line_beam(3, n, length=10.0, E=1.4e4, G=7.0e3, A=2.0e3, Iz=1.0, Iy=1.0, J=1.0,
                  rotary_inertia=False)
    d["sections"][0]["mass_per_length"] = 1.2
    d["supports"] = [{"nodes": [1], "fixed": ["all"]}]
    d["steps"] = [{"name": "lin", "type": "linearize", "modes": modes,
                   "spin": [0.0, 0.0, spin]}]
    return d


def test_a_spinning_beam_has_its_eigenvalues_on_the_imaginary_axis():
    """Kane's beam at 2 rad/s as D07 (reliability3), 40 beams, 20 modes: the linearize step
    stopped with "accepted 26 of the 42 eigenvalues" (with 1200 beams it passed and called real
    parts of 1e-5 |p| an instability). LAPACK puts all of them on the imaginary axis to 6e-13
    |p|; the two-sided Rayleigh quotients put them there to 1e-12 |p| (their error is the
    product of the two sides' residuals), with backward errors below 1e-10, and equal LAPACK's
    to 2e-8 (the eigenvalues' condition numbers reach 1e6: the two differ by 3e-9)."""
    step = solve(kane_beam(40, 2.0, 20))[3][0]
    lm = step.model
    got = step.eigen.values
    exact = pencil_eigenvalues(lm.M, lm.D, lm.K)
    upper = nearest(exact[exact.imag > 0], 20)
    assert np.all(np.abs(exact.real) <= 1e-12 * np.abs(exact))
    assert_same_set(got, upper, 2e-8 * np.abs(upper).max())
    assert np.all(np.abs(got.real) <= 1e-12 * np.abs(got))
    assert step.eigen.backward_errors.max() < 1e-10
    assert step.eigen.stable()


# --- bounded memory ------------------------------------------------------------------------------
def gyroscopic_chain(n: int):
    """``n`` unit masses in a line between springs, clamped at one end, with a light
    gyroscopic coupling of neighbours (conservative)."""
    K = sp.diags([-np.ones(n - 1), 2 * np.ones(n), -np.ones(n - 1)], [-1, 0, 1]).tocsr()
    G = sp.diags([-0.01 * np.ones(n - 1), 0.01 * np.ones(n - 1)], [-1, 1]).tocsr()
    return sp.identity(n, format="csr"), G, K


def peak_memory(n: int, count: int):
    """The largest memory traced while solving ``n`` masses, and the pairs."""
    tracemalloc.start()
    try:
        pairs = quadratic_eigen(*gyroscopic_chain(n), count)
        return tracemalloc.get_traced_memory()[1], pairs
    finally:
        tracemalloc.stop()


def test_the_bases_do_not_grow_with_the_square_of_the_model():
    """Each side keeps at most default_dim(count) vectors (40 for 6 values) whatever the size:
    the memory traced while solving 1000 and 4000 masses grows as the model, four times (the
    solver preallocated two complex bases of 2 n x (2 n + 1): 2 GB at 4000 masses)."""
    small, few = peak_memory(1000, 6)
    large, many = peak_memory(4000, 6)
    assert large < 6 * small
    assert large < 2 * 41 * 8 * (2 * 4000) * 3           # bases of 41 real vectors, and room
    assert few.dim == many.dim == lanczos2.default_dim(6) == 40


# --- interrupts ----------------------------------------------------------------------------------
def test_a_signal_stops_the_solve_at_its_next_step(monkeypatch):
    """A stop request (SIGTERM) at the 30th application of the operator ends the solve with
    Interrupted at the next Krylov step (it went on to the end of the solve, 5-10 s on 1200
    beams)."""
    calls = []
    original = lanczos2.ShiftedOperator.apply

    def apply(self, X):
        calls.append(interrupt.pending())
        if len(calls) == 30:
            interrupt.request(signal.SIGTERM)
        return original(self, X)

    monkeypatch.setattr(lanczos2.ShiftedOperator, "apply", apply)
    try:
        with pytest.raises(Interrupted):
            quadratic_eigen(*gyroscopic_chain(400), 20)
    finally:
        interrupt._pending = None
    assert len(calls) == 30


# --- random conservative gyroscopic problems with exact multiplicities -------------------------
def conservative_gyroscopic(rng, n: int, copies: int):
    """Random SPD ``M``, ``K`` and skew ``G`` of ``n`` DOFs, repeated ``copies`` times on the
    diagonal and turned by a random orthogonal ``Q`` (``Q^T X Q``: the same eigenvalues, each
    ``copies`` times, with no visible blocks)."""
    A = rng.standard_normal((n, n))
    M = A @ A.T + n * np.eye(n)
    A = rng.standard_normal((n, n))
    K = A @ A.T + rng.uniform(0.1, n) * np.eye(n)
    S = rng.standard_normal((n, n))
    G = rng.uniform(0, 2) * (S - S.T)
    Q, _ = np.linalg.qr(rng.standard_normal((n * copies, n * copies)))
    return [Q.T @ la.block_diag(*[X] * copies) @ Q for X in (M, G, K)]


@pytest.mark.parametrize("seed", range(3))
def test_random_conservative_gyroscopic_problems_with_multiple_eigenvalues(seed):
    """12 problems a seed: 2-15 DOFs repeated 1-3 times, SPD M and K, skew gyroscopic G of up
    to twice their size, 2-24 values asked (whole clusters), real or imaginary shifts. Every
    eigenvalue nearest the shift of LAPACK, one to one (so each with its multiplicity), and
    every real part below 1e-11 |p| (they are all imaginary)."""
    rng = np.random.default_rng(300 + seed)
    for trial in range(12):
        n, copies = int(rng.integers(2, 16)), int(rng.integers(1, 4))
        M, G, K = conservative_gyroscopic(rng, n, copies)
        shift = 0.0 if rng.random() < 0.5 else 1j * rng.uniform(0.0, 1.0)
        exact = pencil_eigenvalues(M, G, K)
        exact = exact[np.argsort(np.abs(exact - shift), kind="stable")]
        clusters = int(rng.integers(1, min(2 * n, 8) + 1))
        count = min(clusters * copies, len(exact))
        # whole clusters: a count that cut one would make either copy a fair answer
        while count < len(exact) and abs(abs(exact[count] - shift)
                                         - abs(exact[count - 1] - shift)) < 1e-6:
            count += 1
        where = f"trial {trial}: n {n} x {copies}, count {count}, shift {shift}"
        pairs = quadratic_eigen(*(sp.csr_matrix(X) for X in (M, G, K)), count, shift)
        scale = np.abs(exact).max()
        assert len(pairs.values) == count, where
        assert_same_set(pairs.values, exact[:count], 1e-8 * scale)
        assert np.all(np.abs(pairs.values.real) <= 1e-11 * np.abs(pairs.values)), where


def test_the_eigenvalues_near_a_complex_shift_are_those_found_from_zero():
    """Kane's beam of 600 beams at 2 rad/s: its flapwise and chordwise frequencies near 216.4
    rad/s are 4.3e-5 apart, ill-conditioned enough that each side's own Ritz values of them
    differed by more than the 1e-6 their clusters were matched by (so the solver, at the shift
    216.37i, kept 4 of its 6 values and raised ConvergenceError). Joined by their overlaps, the
    six nearest 216.37i hold the two found from the shift 0 (other operator, other Krylov
    spaces) to 1e-8 (they differ by 2e-9: condition numbers near 1e6 times backward errors of
    1e-13 and less), on the imaginary axis to 1e-12 (the four farther from the shift, to 1e-9:
    in complex arithmetic their real parts are at eps times their condition numbers, up to
    5e6)."""
    step = solve(kane_beam(600, 2.0, 10))[3][0]
    lm = step.model
    v = step.eigen.values
    from_zero = v[np.argsort(v.imag)][-2:]                         # 216.42i and 216.43i
    assert abs(from_zero[1] - from_zero[0]) < 1e-3 * abs(from_zero[0])
    pairs = quadratic_eigen(lm.M, lm.D, lm.K, 6, 216.37j)
    near = pairs.values[np.abs(pairs.values - 216.4j) < 0.5]
    assert len(near) == 2
    assert_same_set(near, from_zero, 1e-8 * 216.4)
    assert np.all(np.abs(near.real) <= 1e-12 * np.abs(near))
    assert np.all(np.abs(pairs.values.real) <= 1e-9 * np.abs(pairs.values))


@pytest.mark.parametrize("seed", [1024, 1025, 1026])
def test_random_damped_problems_some_doubled(seed):
    """8 problems a seed as tests/test_eigen_random.py draws them (2-40 DOFs, SPD M and K, a
    third circulatory, damping and gyroscopic terms, real or complex shifts), and a third of them
    doubled (``I2 kron``: every eigenvalue twice): every value nearest the shift of the companion
    matrix, one to one. (Seed 1024's second problem, 72 DOFs and 10 values, came back with 1 of
    them when the two sides' unconverged extra Ritz vectors joined all eigenspaces into one
    projection.)"""
    rng = np.random.default_rng(seed)
    for trial in range(8):
        n = int(rng.integers(2, 40))
        A = rng.standard_normal((n, n))
        M = A @ A.T + n * np.eye(n)
        A = rng.standard_normal((n, n))
        K = A @ A.T + rng.uniform(0.1, n) * np.eye(n)
        if rng.random() < 0.3:
            S = rng.standard_normal((n, n))
            K = K + rng.uniform(0, 0.5) * (S - S.T)
        G = rng.standard_normal((n, n))
        B = rng.uniform(0, 0.2) * np.eye(n) + rng.uniform(0, 2) * (G - G.T)
        if rng.random() < 0.3:
            M, B, K = (np.kron(np.eye(2), X) for X in (M, B, K))
        count = int(rng.integers(1, min(2 * len(M), 16) + 1))
        shift = 0.0 if rng.random() < 0.5 else complex(rng.uniform(-0.5, 0.5),
                                                         rng.uniform(-2, 2))
        exact = companion_eigenvalues(M, B, K)
        kth = np.sort(np.abs(exact - shift))[count - 1]
        pairs = quadratic_eigen(*(sp.csr_matrix(X) for X in (M, B, K)), count, shift)
        where = f"trial {trial}: n {len(M)}, count {count}, shift {shift}"
        scale = np.abs(exact).max()
        assert len(pairs.values) == count, where
        assert_same_set(pairs.values, exact, 1e-7 * scale)
        assert np.all(np.abs(pairs.values - shift) <= kth * (1 + 1e-6) + 1e-9 * scale), where
