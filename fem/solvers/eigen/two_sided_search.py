"""The search of one side of the two-sided solver: converge, lock, start again (:mod:`.lanczos2`).

The ``count`` Ritz values of largest ``|theta|`` (nearest the shift) of one
:class:`~.krylov_schur.KrylovSchur` are converged, restarting it thickly (the converged clusters
and the nearest others, about half the basis); then the converged Ritz pairs are locked and the
sequence starts again from a random vector orthogonal to them, until a start finds no further
copy of a multiple eigenvalue (the module docstring of :mod:`.lanczos2`, *Multiple
eigenvalues*).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from fem import interrupt
from fem.solvers.eigen.krylov_schur import (
    CLUSTER,
    PARASITIC,
    TAU,
    Cluster,
    KrylovSchur,
    clusters,
    schur_eigenvalues,
)


def _unmatched(theta: NDArray, old: NDArray) -> NDArray:
    """Indices of ``theta`` left when each ``old`` value takes its nearest (with multiplicity)."""
    left = list(range(len(theta)))
    for t in old:
        if not left:
            break
        j = int(np.argmin(np.abs(theta[left] - t)))
        if abs(theta[left[j]] - t) <= CLUSTER * abs(t):
            left.pop(j)
    return np.array(left, dtype=int)


class Search:
    """The search of one side: converge, lock, start again.

    Converge the ``count`` Ritz values of largest ``|theta|`` (nearest the shift) of one
    :class:`KrylovSchur`, restarting it thickly; then start it again from random vectors, the
    converged Ritz pairs locked, until a start finds no further copy of a multiple eigenvalue
    among them (module doc).
    """

    def __init__(self, ks: KrylovSchur, count: int, budget: int, lam_ref: list[float]):
        self.ks, self.count, self.budget = ks, count, budget
        self.lam_ref = lam_ref                   # largest |theta| seen (shared by both sides)
        self.old = np.zeros(0, dtype=complex)    # Ritz values locked before this start
        self.seen = np.zeros(0, dtype=complex)   # converged wanted values of the starts so far
        self.converged: list[Cluster] = []      # converged clusters among the wanted and next
        self.wanted: list[Cluster] = []
        self.found: list[NDArray] = []           # per start, the wanted values it added
        self.limited = False                     # stopped by the step limit

    def order(self, theta: NDArray) -> NDArray:
        """Non-parasitic Ritz values by decreasing magnitude."""
        self.lam_ref[0] = max(self.lam_ref[0], float(np.abs(theta).max(initial=0.0)))
        order = np.argsort(-np.abs(theta), kind="stable")
        return order[np.abs(theta[order]) >= PARASITIC * self.lam_ref[0]]

    def analyse(self):
        """Schur form, Ritz values, their clusters by magnitude, whether the wanted converged.

        Also keeps the clusters (with their residuals) of the wanted values and of ten more.
        """
        ks = self.ks
        T, Z = ks.schur()
        theta = schur_eigenvalues(T)
        order = self.order(theta)
        groups = clusters(theta, T, order)
        # the wanted clusters, any of the same magnitude as the last (a conjugate pair stays
        # whole), and ten values more
        cl, size, nwanted, edge = [], 0, 0, np.inf
        for g in groups:
            mag = np.abs(theta[g]).max()
            if size >= self.count + 10 and mag < edge:
                break
            cl.append(ks.cluster(T, Z, g))
            if size < self.count or mag >= edge:
                nwanted += 1
                edge = min(edge, np.abs(theta[g]).min() * (1 - CLUSTER))
            size += len(g)
        self.wanted = cl[:nwanted]
        self.converged = [c for c in cl if c.residual <= TAU]
        done = all(c.residual <= TAU for c in self.wanted)
        if done and len(self.old):
            # after a restart its own dominant Ritz value must have converged too: a further
            # copy of a multiple eigenvalue comes in as the largest new one
            new = set(_unmatched(theta, self.old).tolist())
            first = next((i for i in order if i in new), None)
            if first is not None:
                top = next(g for g in groups if first in g)
                done = ks.cluster(T, Z, top).residual <= TAU
        return T, Z, theta, groups, done

    def run(self, rng, passes: int) -> None:
        """Starts and restarts (class doc)."""
        ks = self.ks
        for start in range(passes):
            if start:
                self.lock()
            if ks.k >= ks.N or not ks.start(rng):
                break                                # deflation left nothing to find
            outcome = self.converge()
            wanted = np.concatenate([np.zeros(0, complex)] + [
                c.theta for c in self.wanted if c.residual <= TAU])
            new = wanted[_unmatched(wanted, self.seen)]
            self.seen = np.concatenate([self.seen, new])
            self.found.append(new)
            self.limited = outcome == "limit"
            if outcome == "limit" or (start and not len(new)):
                break             # out of steps, or a restart found no further copy

    def converge(self) -> str:
        """Iterate until the wanted Ritz values converge.

        Returns ``"converged"``, ``"exhausted"`` (an invariant subspace) or ``"limit"`` (out of
        steps).
        """
        ks = self.ks
        while True:
            going = ks.next
            while going and ks.k < ks.dim and ks.steps < self.budget:
                interrupt.check()
                going = ks.step()
            T, Z, theta, groups, done = self.analyse()
            if done:
                return "converged"
            if not ks.next:
                return "exhausted"
            if ks.steps >= self.budget:
                return "limit"
            self.thick_restart(T, Z, theta, groups)

    def thick_restart(self, T, Z, theta, groups) -> None:
        """Keep the converged clusters and the nearest others, about half the basis."""
        ks = self.ks
        nconv = sum(c.size for c in self.converged)
        target = min(ks.dim - 3, max(self.count, nconv + (ks.dim - nconv) // 2))
        rest = np.setdiff1d(np.arange(ks.k), np.concatenate(groups) if groups else [])
        allg = groups + clusters(theta, T, rest[np.argsort(-np.abs(theta[rest]))])
        sizes = np.cumsum([len(g) for g in allg])
        last = min(int(np.searchsorted(sizes, target)), len(allg) - 1)
        while last > 0 and sizes[last] > ks.dim - 3:
            last -= 1
        select = np.zeros(ks.k, dtype=bool)
        select[np.concatenate(allg[:last + 1])] = True
        for c in self.converged:
            select[c.index] = True
        ks.restart(T, Z, select)

    def lock(self) -> None:
        """Keep only the converged clusters, as an invariant subspace, before a new start."""
        ks = self.ks
        T, Z, *_ = self.analyse()
        select = np.zeros(ks.k, dtype=bool)
        for c in self.converged:
            select[c.index] = True
        ks.restart(T, Z, select)
        ks.lock()
        self.old = schur_eigenvalues(ks.H[:ks.k, :ks.k])

    def final(self) -> tuple[NDArray, NDArray, NDArray, list[NDArray]]:
        """Schur form of the last basis, its Ritz values and their clusters by magnitude."""
        ks = self.ks
        if ks.k == 0:
            empty = np.zeros((0, 0), ks.dtype)
            return empty, empty, np.zeros(0, complex), []
        T, Z = ks.schur()
        theta = schur_eigenvalues(T)
        return T, Z, theta, clusters(theta, T, self.order(theta))
