"""The numba kernels of :mod:`fem.solvers.banded` (imported only when they are used).

LU with partial pivoting of a band matrix in LAPACK's band storage (``dgbtrf``/``dgbtrs``'s
algorithm, unblocked), held transposed so that a column is contiguous: ``A[i, j]`` at
``ab[j, kl + ku + i - j]``, the first ``kl`` of a column's slots free for the fill of the row
interchanges. LAPACK's own routines call BLAS once a column, which costs more
than a narrow band's arithmetic (175 us for 903 unknowns and ``kl = ku = 5``, about what PETSc's
sparse LU takes); here a column is a few dozen flops.
"""

from fem.elements.jit import configure_cache

configure_cache()                  # before the njit decorators: the source-keyed cache folder

from numba import njit  # noqa: E402


@njit(cache=True, nogil=True)
def fill(data, pos, ab):
    """``ab`` zeroed, then the CSR values ``data`` put at their band positions ``pos``."""
    flat = ab.reshape(-1)
    flat[:] = 0.0
    for k in range(data.shape[0]):
        flat[pos[k]] += data[k]


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
def residual(indptr, indices, data, x, b, r):
    """``r = b - A x`` for the CSR matrix ``A``."""
    for i in range(indptr.shape[0] - 1):
        s = 0.0
        for k in range(indptr[i], indptr[i + 1]):
            s += data[k] * x[indices[k]]
        r[i] = b[i] - s
