"""Narrow band matrices factored by a compiled banded LU: the Newton solves of small models.

A chain of beams numbers its unknowns along the chain, so its tangent is a band matrix of width
a few unknowns; so are trusses, frames and small meshes once reverse Cuthill-McKee has renumbered
them. Factoring such a matrix is a few dozen flops a column, and the cost of a solve lies in the
calls around it: PETSc's own sparse LU took 50 us (303 unknowns) and 155 us (903) a
factorization on the flexible pendulum of ``benchmarks/small_models.py``, LAPACK's ``dgbtrf``
(one BLAS call a column) about as long. :class:`BandedLU` factors without pivoting, as PETSc's
own LU does for these systems, in a compiled loop (:mod:`fem.solvers.banded_kernel`), with the
checks a Newton solve of :func:`fem.linalg.solve_checked` has: null pivots relative to their row
(:data:`fem.linalg.NULL_PIVOT`, PETSc's own LU's test), a non-finite right-hand side or
solution, and the backward error of every solve, refined while it is above round-off
(:class:`fem.linalg.SolveReport`). It is serial: dynamic steps of small models without
multipliers use it (:meth:`fem.analysis.base.StepBase.open_solver`, ``banded``), and the
compiled loops of small planar models factor with its kernels (their time steps and
load-control increments, :mod:`fem.analysis.planar_static`); the tests compare it with dense
LU.
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
from numpy.typing import NDArray

from fem import linalg
from fem.kernels import Kernel

#: the widest band (sub- or super-diagonals) factored this way; a wider one keeps the sparse LU
MAX_BAND = 48
#: a band wider than this is renumbered by reverse Cuthill-McKee where that narrows it
RCM_ABOVE = 11

#: the patterns :meth:`BandedLU.make` met last, their ``(order, kl, pos)`` by their bytes: a
#: small model's steps (a parameter study's runs) renumber the same pattern once, not each time
#: (50 us, a twentieth of the elastica benchmark's static step); patterns up to MEMO_NNZ entries
MEMO_SIZE, MEMO_NNZ = 16, 1 << 16
_memo: OrderedDict = OrderedDict()

_kernel = Kernel("fem.solvers.banded_kernel", "factor")


class BandedLU:
    """The free-DOF matrix of CSR pattern ``indptr, indices`` as a band matrix, factored.

    ``order`` renumbers the unknowns (new position ``k`` holds old unknown ``order[k]``) so that
    the band is ``kl`` wide on both sides (the pattern is symmetric).
    """

    def __init__(self, indptr: NDArray, indices: NDArray, order: NDArray, kl: int,
                 pos: NDArray | None = None):
        from fem.solvers import banded_kernel

        self.kern = banded_kernel
        n = len(indptr) - 1
        self.n, self.kl = n, kl
        self.indptr = np.ascontiguousarray(indptr, dtype=np.int64)
        self.indices = np.ascontiguousarray(indices, dtype=np.int64)
        self.order = order
        self.ab = np.zeros((n, 2 * kl + 1))       # by columns: A[i, j] at ab[j, kl + i - j]
        if pos is None:                           # each entry's place in the band (``ab``)
            where = np.empty(n, dtype=np.int64)
            where[order] = np.arange(n)
            pos = banded_kernel.band_positions(self.indptr, self.indices, where, kl)
        self.pos = pos
        self.data = None
        self.factored = False

    @classmethod
    def make(cls, indptr: NDArray, indices: NDArray) -> BandedLU | None:
        """The banded LU of this pattern, or None (wider than :data:`MAX_BAND`, no numba).

        The renumbering and the band positions of a pattern met lately are taken from
        :data:`_memo` (the same arrays: nothing writes them).
        """
        n = len(indptr) - 1
        if n == 0 or not _kernel.enabled():
            return None
        indptr = np.ascontiguousarray(indptr, dtype=np.int64)
        indices = np.ascontiguousarray(indices, dtype=np.int64)
        key = (indptr.tobytes(), indices.tobytes()) if len(indices) <= MEMO_NNZ else None
        if key is not None and key in _memo:
            _memo.move_to_end(key)
            known = _memo[key]
            return None if known is None else cls(indptr, indices, *known)
        made = cls._make(indptr, indices, n)
        if key is not None:
            _memo[key] = None if made is None else (made.order, made.kl, made.pos)
            if len(_memo) > MEMO_SIZE:
                _memo.popitem(last=False)
        return made

    @classmethod
    def _make(cls, indptr: NDArray, indices: NDArray, n: int) -> BandedLU | None:
        """:meth:`make` of a pattern not in the memo (``int64`` arrays)."""
        from fem.solvers.banded_kernel import width

        order = np.arange(n)
        kl = int(width(indptr, indices, order))
        # a chain numbered along itself (5 and 11 for planar and spatial beams) is as narrow as
        # reverse Cuthill-McKee makes it, which costs more than a short run's factorizations
        if kl > RCM_ABOVE:
            rcm = _rcm(indptr, indices, n)
            where = np.empty(n, dtype=np.int64)
            where[rcm] = np.arange(n)
            narrow = int(width(indptr, indices, where))
            if narrow < kl:
                order, kl = rcm, narrow
        return cls(indptr, indices, order, kl) if kl <= MAX_BAND else None

    def fill(self, data: NDArray) -> None:
        """New CSR values: factored at the next solve."""
        self.data = np.ascontiguousarray(data, dtype=float)
        self.factored = False

    def factor(self) -> None:
        """Factor the values of the last :meth:`fill` now (:meth:`solve` does it when due)."""
        self._factor()

    def _factor(self) -> None:
        scale = np.empty(self.n)
        self.norm = self.kern.fill(self.indptr, self.data, self.pos, self.order, self.ab, scale)
        null = self.kern.factor(self.ab, self.kl, scale, linalg.NULL_PIVOT)
        if null:
            raise linalg.SingularMatrixError(null)
        self.factored = True

    def solve(self, b: NDArray) -> tuple[NDArray, linalg.SolveReport]:
        """``A^-1 b`` and its accuracy, as :func:`fem.linalg.solve_checked` gives them."""
        b = np.ascontiguousarray(b, dtype=float)
        if not np.isfinite(b).all():
            bad = int(np.sum(~np.isfinite(b)))
            raise linalg.NonFiniteError(f"the right-hand side is not finite ({bad} of {len(b)} "
                                        "entries are NaN or infinite: a load or a state that "
                                        "overflowed)")
        if not self.factored:
            self._factor()
        x, r = np.empty_like(b), np.empty_like(b)
        finite, berr, first, k = self.kern.refined(
            self.ab, self.kl, self.order, self.indptr, self.indices, self.data, self.norm, b, x,
            np.empty_like(b), r, linalg.REFINE_ABOVE, linalg.MAX_REFINEMENTS)
        if not finite:
            raise linalg.NonFiniteError(f"the solution overflowed (the right-hand side reaches "
                                        f"{np.abs(b).max():.3g}; the solution is not finite)")
        return x, linalg.SolveReport(berr, first, k)


def _rcm(indptr: NDArray, indices: NDArray, n: int) -> NDArray:
    """The reverse Cuthill-McKee order (scipy's) of the symmetric pattern ``indptr, indices``.

    scipy's own loop (``scipy.sparse.csgraph._reordering``), called on the arrays as the public
    ``reverse_cuthill_mckee`` calls it: the same order, without the sparse matrix the public
    function wants (its construction took 4/5 of the 60 us, a fifth of a small static step's
    set-up). The public function where the private one is gone.
    """
    try:
        from scipy.sparse.csgraph._reordering import _reverse_cuthill_mckee
    except ImportError:
        _reverse_cuthill_mckee = None
    if _reverse_cuthill_mckee is not None:
        try:
            return _reverse_cuthill_mckee(np.ascontiguousarray(indices),
                                          np.ascontiguousarray(indptr), n).astype(np.int64)
        except (TypeError, ValueError):
            pass
    import scipy.sparse as sp
    from scipy.sparse.csgraph import reverse_cuthill_mckee

    pattern = sp.csr_matrix((np.ones(len(indices)), indices, indptr), shape=(n, n))
    return reverse_cuthill_mckee(pattern, symmetric_mode=True).astype(np.int64)
