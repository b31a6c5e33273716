"""The numba kernels of :mod:`fem.solvers.banded` (imported only when they are used).

LU with partial pivoting of a band matrix in LAPACK's band storage (``dgbtrf``/``dgbtrs``'s
algorithm, unblocked), held transposed so that a column is contiguous: ``A[i, j]`` at
``ab[j, kl + ku + i - j]``, the first ``kl`` of a column's slots free for the fill of the row
interchanges. LAPACK's own routines call BLAS once a column, which costs more
than a narrow band's arithmetic (175 us for 903 unknowns and ``kl = ku = 5``, about what PETSc's
sparse LU takes); here a column is a few dozen flops.
"""

import numpy as np

from fem.elements.jit import configure_cache

configure_cache()                  # before the njit decorators: the source-keyed cache folder

from numba import njit  # noqa: E402


@njit(cache=True, nogil=True)
def fill(indptr, data, pos, order, ab, scale):
    """``ab`` zeroed, then the CSR values ``data`` put at their band positions ``pos``.

    Returns ``A``'s infinity norm; ``scale[k]`` is the largest ``|entry|`` of the row that
    ``order`` puts at position ``k`` (the null-pivot test's reference).
    """
    flat = ab.reshape(-1)
    flat[:] = 0.0
    norm = 0.0
    n = indptr.shape[0] - 1
    rowmax = np.empty(n)
    for i in range(n):
        total = 0.0
        top = 0.0
        for k in range(indptr[i], indptr[i + 1]):
            v = data[k]
            flat[pos[k]] += v
            a = abs(v)
            total += a
            if a > top:
                top = a
        rowmax[i] = top
        if total > norm:
            norm = total
    for k in range(n):
        scale[k] = rowmax[order[k]]
    return norm


@njit(cache=True, nogil=True)
def factor(ab, kl, ku, ipiv, scale, null):
    """Factor ``ab`` in place; returns the number of null pivots.

    A pivot is null when ``|u_jj| <= null * scale[j]`` (``scale``: the largest entry of each
    row of ``A``, as PETSc's own LU is checked, :func:`fem.linalg._check_pivots`), or not
    finite; elimination stops at the first (its column is left as it is).
    """
    n = ab.shape[0]
    kv = kl + ku
    ju = 0
    for j in range(n):
        km = min(kl, n - 1 - j)
        col = ab[j]
        jp = 0
        big = abs(col[kv])
        for i in range(1, km + 1):
            a = abs(col[kv + i])
            if a > big:
                big, jp = a, i
        ipiv[j] = j + jp
        if not (big > null * scale[j]) or not big < 1e308:
            return n - j                    # this pivot and the columns after it
        ju = max(ju, min(j + ku + jp, n - 1))
        if jp != 0:
            for c in range(j, ju + 1):
                t = ab[c, kv + jp + j - c]
                ab[c, kv + jp + j - c] = ab[c, kv + j - c]
                ab[c, kv + j - c] = t
        piv = col[kv]
        for i in range(1, km + 1):
            col[kv + i] /= piv
        for c in range(j + 1, ju + 1):
            other = ab[c]
            t = other[kv + j - c]
            if t != 0.0:
                for i in range(1, km + 1):
                    other[kv + j + i - c] -= col[kv + i] * t
    return 0


@njit(cache=True, nogil=True)
def solve(ab, kl, ku, ipiv, b):
    """``b`` overwritten by ``A^-1 b`` (``ab``, ``ipiv`` from :func:`factor`)."""
    n = ab.shape[0]
    kv = kl + ku
    for j in range(n - 1):
        km = min(kl, n - 1 - j)
        p = ipiv[j]
        if p != j:
            t = b[p]
            b[p] = b[j]
            b[j] = t
        bj = b[j]
        if bj != 0.0:
            for i in range(1, km + 1):
                b[j + i] -= ab[j, kv + i] * bj
    for j in range(n - 1, -1, -1):
        b[j] /= ab[j, kv]
        bj = b[j]
        if bj != 0.0:
            for i in range(max(0, j - kv), j):
                b[i] -= ab[j, kv + i - j] * bj


@njit(cache=True, nogil=True)
def apply(ab, kl, ku, ipiv, order, b, x, y):
    """``x = A^-1 b`` in the original numbering (``y``: scratch); false if ``x`` is not finite."""
    n = b.shape[0]
    for k in range(n):
        y[k] = b[order[k]]
    solve(ab, kl, ku, ipiv, y)
    finite = True
    for k in range(n):
        x[order[k]] = y[k]
        if not (abs(y[k]) < 1e308):
            finite = False
    return finite


@njit(cache=True, nogil=True)
def residual(indptr, indices, data, x, b, r, norm):
    """``r = b - A x`` for the CSR matrix ``A``; returns the normwise backward error.

    ``|r| / (|A| |x| + |b|)`` in the infinity norm (``norm``: ``|A|``), as
    :func:`fem.linalg._backward_error`; 0 for ``b = 0``.
    """
    rmax, xmax, bmax = 0.0, 0.0, 0.0
    for i in range(indptr.shape[0] - 1):
        s = 0.0
        for k in range(indptr[i], indptr[i + 1]):
            s += data[k] * x[indices[k]]
        r[i] = b[i] - s
        rmax = max(rmax, abs(r[i]))
        xmax = max(xmax, abs(x[i]))
        bmax = max(bmax, abs(b[i]))
    den = norm * xmax + bmax
    return rmax / den if den > 0 else 0.0
