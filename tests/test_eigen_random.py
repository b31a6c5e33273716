"""Both Lanczos solvers against LAPACK on many random problems (a property test).

The targeted tests of ``test_modal.py`` and ``test_lanczos2.py`` check the cases a reader can
name; these draw sizes, counts, blocks, bases, massless DOFs, double eigenvalues, damping,
gyroscopic and circulatory terms and shifts at random (fixed seeds) and ask of every answer what
is always true: the values are the eigenvalues nearest the shift, all of them, or an error says
why not. Randomized runs of this kind found the massless-DOF pollution of the symmetric Lanczos
and the silently short answers of the two-sided one.
"""

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from test_lanczos2 import companion_eigenvalues
from test_modal import pencil

from fem.solvers.eigen.lanczos import lanczos
from fem.solvers.eigen.lanczos2 import quadratic_eigen


@pytest.mark.parametrize("seed", range(4))
def test_symmetric_lanczos_returns_the_lowest_eigenvalues_of_random_pencils(seed):
    """20 pencils a seed: 20-200 DOFs, up to a quarter massless, a third doubled (every
    eigenvalue twice, blocks of 2 or more), 1-30 pairs, blocks 1-8, the default basis or one of
    at least count + 3 blocks; values to 1e-12 of the largest, M-orthonormal vectors."""
    rng = np.random.default_rng(seed)
    for trial in range(20):
        n = int(rng.integers(20, 200))
        massless = int(rng.integers(0, n // 4)) if rng.random() < 0.4 else 0
        K, M, w = pencil(n, massless=massless, seed=1000 * seed + trial)
        double = rng.random() < 0.3
        if double:
            K, M = sp.block_diag([K, K]).tocsr(), sp.block_diag([M, M]).tocsr()
            w = np.sort(np.r_[w, w])
        count = int(rng.integers(1, min(30, len(w)) + 1))
        block = int(rng.integers(2 if double else 1, 9))
        max_dim = None if rng.random() < 0.5 else count + 3 * block + int(rng.integers(0, 20))
        lu = spla.splu(K.tocsc())
        pairs = lanczos(K, M, count, 0.0, lambda B, lu=lu: lu.solve(np.asarray(B)),
                        block=block, max_dim=max_dim, tol=1e-10, restarts=60)
        where = f"trial {trial}: n {K.shape[0]}, massless {massless}, count {count}, " \
                f"block {block}, max_dim {max_dim}"
        assert np.abs(pairs.omega2 - w[:count]).max() <= 1e-12 * w.max(), where
        X = pairs.vectors
        assert np.abs(X.T @ (M @ X) - np.eye(count)).max() < 1e-10, where
        assert pairs.backward_errors.max() <= 1e-10, where


@pytest.mark.parametrize("seed", range(4))
def test_two_sided_lanczos_returns_the_nearest_eigenvalues_of_random_quadratic_problems(seed):
    """25 problems a seed: 2-40 DOFs, SPD M and K, a third with circulatory K, light damping and
    gyroscopic B up to strong, 1-16 values, real or complex shifts; every value returned an
    eigenvalue (companion matrix, 1e-7 of the largest) and the count nearest the shift (the
    solver may raise ConvergenceError instead; on these problems it does not)."""
    from fem.errors import ConvergenceError

    rng = np.random.default_rng(100 + seed)
    errors = 0
    for trial in range(25):
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
        count = int(rng.integers(1, min(2 * n, 16) + 1))
        shift = 0.0 if rng.random() < 0.5 else complex(rng.uniform(-0.5, 0.5),
                                                         rng.uniform(-2, 2))
        exact = companion_eigenvalues(M, B, K)
        scale = np.abs(exact).max()
        kth = np.sort(np.abs(exact - shift))[count - 1]
        try:
            pairs = quadratic_eigen(sp.csr_matrix(M), sp.csr_matrix(B), sp.csr_matrix(K),
                                    count, shift)
        except ConvergenceError:
            errors += 1
            continue
        where = f"trial {trial}: n {n}, count {count}, shift {shift}"
        assert len(pairs.values) == count, where
        for p in pairs.values:
            assert np.min(np.abs(exact - p)) <= 1e-7 * scale, where
            assert abs(p - shift) <= kth * (1 + 1e-6) + 1e-9 * scale, where
    assert errors == 0                  # an error is a fair answer, but none is measured here


def free_pencil(sizes, rng, massless: int = 0):
    """Uncoupled free chains of springs (random stiffnesses, random couplings within a chain)
    with a random diagonal mass: one rigid motion per chain, the chain's translation, a known
    null space ``R``; ``massless`` DOFs (mass zero) at random, never a whole chain. Returns
    ``K, M, R, w`` (``w`` all finite eigenvalues by LAPACK, the massless DOFs condensed)."""
    import scipy.linalg as sla

    n = int(sum(sizes))
    K = sp.lil_matrix((n, n))
    R = np.zeros((n, len(sizes)))
    start = 0
    for c, size in enumerate(sizes):
        idx = np.arange(start, start + size)
        R[idx, c] = 1.0
        pairs = [(idx[i], idx[i + 1]) for i in range(size - 1)]
        pairs += [tuple(rng.choice(idx, 2, replace=False)) for _ in range(size // 2)] \
            if size > 1 else []
        for i, j in pairs:
            k = 10.0 ** rng.uniform(0.0, 8.0)          # stiff and soft springs
            K[i, i] += k
            K[j, j] += k
            K[i, j] -= k
            K[j, i] -= k
        start += size
    K = K.tocsr()
    m = rng.uniform(0.5, 2.0, n)
    if massless:
        candidates = np.concatenate([np.arange(s0 + 1, s0 + size) for s0, size in
                                     zip(np.cumsum([0, *sizes[:-1]]), sizes, strict=True)])
        m[rng.choice(candidates, min(massless, len(candidates)), replace=False)] = 0.0
    M = sp.diags(m).tocsr()
    a, b = m > 0, m == 0
    Kd = K.toarray()
    if b.any():
        Kd = Kd[np.ix_(a, a)] - Kd[np.ix_(a, b)] @ np.linalg.solve(Kd[np.ix_(b, b)],
                                                                   Kd[np.ix_(b, a)])
    w = sla.eigh(Kd, np.diag(m[a]), eigvals_only=True)
    return K, M, R, w


@pytest.mark.parametrize("seed", range(3))
def test_free_structures_lose_no_rigid_mode_with_any_back_end(seed):
    """10 free pencils a seed, 1 to 6 free chains (as many rigid modes) of 3 to 40 DOFs with
    springs from 1 to 1e8, a fifth with massless DOFs, a third doubled (two identical uncoupled
    copies: every eigenvalue twice), 1 to 24 pairs asked with the automatic shift, Lanczos
    blocks of 1 to 3: dense, lanczos and slepc return the lowest eigenvalues of LAPACK (to 1e-10
    of the largest: the rigid ones at round-off), exactly min(count, rigid) of them at
    round-off, those spanning the chains' translations, every vector M-orthonormal."""
    from fem.solvers import eigen

    rng = np.random.default_rng(300 + seed)
    for trial in range(10):
        sizes = [int(s) for s in rng.integers(3, 41, size=int(rng.integers(1, 7)))]
        massless = int(rng.integers(1, 4)) if rng.random() < 0.2 else 0
        K, M, R, w = free_pencil(sizes, rng, massless)
        double = rng.random() < 0.3
        if double:                          # every eigenvalue, the rigid ones too, twice
            K, M = sp.block_diag([K, K]).tocsr(), sp.block_diag([M, M]).tocsr()
            R, w = sp.block_diag([R, R]).toarray(), np.sort(np.r_[w, w])
        r = R.shape[1]
        count = int(rng.integers(1, min(24, len(w)) + 1))
        block = int(rng.integers(1, 4))
        scale = eigen.spectrum_scale(K, M)
        for method in ("dense", "lanczos", "slepc"):
            where = (f"trial {trial}: chains {sizes}, massless {massless}, double {double}, "
                     f"count {count}, block {block}, {method}")
            pairs = eigen.symmetric(K, M, count, method=method, block=block,
                                    prefix=f"random{seed}_")
            assert pairs.found == count, where
            np.testing.assert_allclose(pairs.values, w[:count], rtol=0, atol=1e-10 * w.max(),
                                       err_msg=where)
            rigid = np.abs(pairs.values) <= 1e3 * np.finfo(float).eps * scale
            assert rigid.sum() == min(count, r) and rigid[:min(count, r)].all(), where
            X = pairs.vectors
            assert np.abs(X.T @ (M @ X) - np.eye(count)).max() < 1e-10, where
            if count >= r:                      # the rigid modes span the translations
                Xr = X[:, :r]
                assert np.abs(Xr @ (Xr.T @ (M @ R)) - R).max() < 1e-8, where
