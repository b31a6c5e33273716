"""The Krylov-Schur decomposition of one side of the two-sided solver (:mod:`.lanczos2`).

``A V = V H + v b^T`` in bounded memory (Stewart, SIAM J. Matrix Anal. Appl. 23, 2001): Arnoldi
steps with full re-orthogonalization (classical Gram-Schmidt, twice) extend it; the ordered
Schur form of ``H`` gives the invariant subspace of chosen Ritz values, which a thick restart
keeps; a lock drops the spike ``b`` so a new start can follow. Ritz values within ``CLUSTER`` of
each other are one cluster (:func:`clusters`), whose invariant subspace, never its
ill-conditioned eigenvectors, is kept (:class:`Cluster`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from fem import lazy

la = lazy.module("scipy.linalg")
lapack = lazy.module("scipy.linalg.lapack")

INVARIANT = 1e-10    # ||r|| below this times ||C v||: an invariant subspace
PARASITIC = 1e-6     # |lam| below this times the largest: p = infinity (multiplier rows)
CLUSTER = 1e-6       # Ritz values this close (relative) are one cluster (a multiple eigenvalue)
TAU = 1e-10          # relative residual at which a cluster of Ritz pairs has converged
CHUNK = 8192         # rows of a basis transformed at a time (a restart's only temporaries)


def schur_eigenvalues(T: NDArray) -> NDArray:
    """The eigenvalues of a (quasi-)triangular Schur factor, by position (complex)."""
    theta = np.diag(T).astype(complex)
    if np.iscomplexobj(T):
        return theta
    j = np.flatnonzero(np.diag(T, -1) != 0.0)      # 2 x 2 blocks: complex conjugate pairs
    a, b, c, d = T[j, j], T[j, j + 1], T[j + 1, j], T[j + 1, j + 1]
    root = np.sqrt((0.25 * (a - d) ** 2 + b * c).astype(complex))
    theta[j], theta[j + 1] = 0.5 * (a + d) + root, 0.5 * (a + d) - root
    return theta


def clusters(theta: NDArray, T: NDArray, chosen: NDArray) -> list[NDArray]:
    """Clusters (index arrays) of the Ritz values ``theta`` with the ``chosen`` ones, in order.

    Every value within ``CLUSTER`` (relative) of a member is a member, and so is the other half
    of a 2 x 2 block of a real Schur factor ``T`` (a real invariant subspace).
    """
    k = len(theta)
    root = np.arange(k)

    def find(i):
        while root[i] != i:
            root[i] = root[root[i]]
            i = root[i]
        return i

    near = np.abs(theta[:, None] - theta[None, :]) <= CLUSTER * np.abs(theta)[:, None]
    if not np.iscomplexobj(T):
        sub = np.flatnonzero(np.diag(T, -1) != 0.0)
        near[sub, sub + 1] = near[sub + 1, sub] = True
    for i, j in zip(*np.nonzero(np.triu(near, 1)), strict=True):
        root[find(i)] = find(j)
    labels = np.array([find(i) for i in range(k)])
    out, seen = [], set()
    for i in chosen:
        if labels[i] not in seen:
            seen.add(labels[i])
            out.append(np.flatnonzero(labels == labels[i]))
    return out


@dataclass
class Cluster:
    """Ritz values of ``H`` and their invariant subspace.

    ``H Q = Q T`` (``Q`` orthonormal, ``T`` (quasi-)triangular), and the spike ``b^T Q`` of
    ``C V Q = V Q T + v b^T Q``.
    """

    index: NDArray
    T: NDArray
    Q: NDArray
    spike: NDArray
    theta: NDArray = field(init=False)           # the Ritz values
    residual: float = field(init=False)          # ||C X - X T|| / min |theta|, X = V Q

    def __post_init__(self):
        self.theta = schur_eigenvalues(self.T)
        self.residual = float(np.linalg.norm(self.spike)
                              / max(np.abs(self.theta).min(), 1e-300))

    @property
    def size(self) -> int:
        """How many."""
        return len(self.index)


class KrylovSchur:
    """A Krylov-Schur decomposition ``A V = V H + v b^T`` in bounded memory (Stewart 2001).

    ``V`` orthonormal of ``k <= dim`` columns, stored with the next vector ``v = V[:, k]``, and
    ``b^T = H[k, :k]``: Arnoldi steps extend it, a thick restart keeps the invariant subspace of
    ``H`` of some Ritz values (ordered Schur form), a lock drops ``b`` (the Ritz pairs of the
    basis have converged) so that a new start can follow. Real when ``A`` is.
    """

    def __init__(self, op: Callable, N: int, dim: int, dtype):
        self.op, self.N, self.dim, self.dtype = op, N, dim, dtype
        self.V = np.zeros((N, dim + 1), dtype=dtype, order="F")
        self.H = np.zeros((dim + 1, dim + 1), dtype=dtype)
        self.k = 0
        self.next = False
        self.steps = 0

    def orthogonalize(self, w: NDArray, k: int) -> tuple[NDArray, NDArray]:
        """``w`` less its components along the first ``k`` basis vectors, and those.

        Classical Gram-Schmidt, twice.
        """
        Vk = self.V[:, :k]
        h = np.zeros(k, dtype=self.dtype)
        for _ in range(2):
            c = (w.conj() @ Vk).conj()           # V^H w without a conjugated copy of V
            w = w - Vk @ c
            h += c
        return w, h

    def start(self, rng) -> bool:
        """Begin a new Krylov sequence at a random vector orthogonal to the (locked) basis.

        After four power iterations (module doc). False if nothing is left.
        """
        v = rng.standard_normal(self.N).astype(self.dtype)
        for _ in range(4):
            w = self.op(v / np.linalg.norm(v))
            v, _ = self.orthogonalize(w, self.k)
            if np.linalg.norm(v) <= 1e-8 * np.linalg.norm(w):
                return False
        self.V[:, self.k] = v / np.linalg.norm(v)
        self.H[self.k, :] = 0.0
        self.H[:, self.k] = 0.0
        self.next = True
        return True

    def step(self) -> bool:
        """One Arnoldi step; False when it closes an invariant subspace (no next vector)."""
        k = self.k
        w = self.op(self.V[:, k])
        nw = np.linalg.norm(w)
        w, self.H[:k + 1, k] = self.orthogonalize(w, k + 1)
        self.k = k = k + 1
        self.steps += 1
        beta = np.linalg.norm(w)
        self.H[k, :] = 0.0
        self.next = k < self.N and beta > INVARIANT * nw
        if self.next:
            self.V[:, k] = w / beta
            self.H[k, k - 1] = beta
        return self.next

    def schur(self) -> tuple[NDArray, NDArray]:
        """Schur form ``H = Z T Z^H`` of the projected matrix (real if ``H`` is)."""
        real = not np.iscomplexobj(self.H)
        return la.schur(self.H[:self.k, :self.k], output="real" if real else "complex")

    def invariant(self, T: NDArray, Z: NDArray, select: NDArray) -> tuple[NDArray, NDArray]:
        """``(T11, Q1)``: ``H Q1 = Q1 T11`` for the selected Ritz values (whole 2 x 2 blocks)."""
        k = self.k
        if not select.any():
            return np.zeros((0, 0), T.dtype), np.zeros((k, 0), T.dtype)
        if select.all():
            return T, Z
        if np.iscomplexobj(T):
            Ts, Qs, _, s, *_, info = lapack.ztrsen(select.astype(np.int32), T, Z, job="N")
        else:
            Ts, Qs, _, _, s, *_, info = lapack.dtrsen(select.astype(np.int32), T, Z, job="N")
        if info != 0:
            raise np.linalg.LinAlgError(f"reordering the Schur form failed ({info})")
        return Ts[:s, :s], Qs[:, :s]

    def cluster(self, T: NDArray, Z: NDArray, index: NDArray) -> Cluster:
        """The cluster of the Ritz values at ``index`` of ``T``."""
        select = np.zeros(self.k, dtype=bool)
        select[index] = True
        T11, Q1 = self.invariant(T, Z, select)
        return Cluster(index, T11, Q1, self.H[self.k, :self.k] @ Q1)

    def restart(self, T: NDArray, Z: NDArray, select: NDArray) -> None:
        """Keep the invariant subspace of the selected Ritz values (thick restart)."""
        k = self.k
        T11, Q1 = self.invariant(T, Z, select)
        s = len(T11)
        V = self.V
        for i in range(0, self.N, CHUNK):
            V[i:i + CHUNK, :s] = V[i:i + CHUNK, :k] @ Q1
        V[:, s] = V[:, k]
        b = self.H[k, :k] @ Q1
        self.H[:] = 0.0
        self.H[:s, :s] = T11
        self.H[s, :s] = b
        self.k = s

    def lock(self) -> None:
        """Drop the spike: the basis is taken as invariant (its Ritz pairs have converged)."""
        self.H[self.k, :] = 0.0
        self.next = False

    def vectors(self, Q: NDArray) -> NDArray:
        """``V Q``."""
        return self.V[:, :self.k] @ Q
