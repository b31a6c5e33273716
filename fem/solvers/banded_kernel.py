"""The numba kernels of :mod:`fem.solvers.banded` (imported only when they are used).

LU of a band matrix without pivoting, as PETSc's own sparse LU (which fem uses for small
systems) factors: the null-pivot test and the backward error of every solve guard it. The band
is held by columns, ``A[i, j]`` at ``ab[j, k + i - j]`` for ``|i - j| <= k`` (``k`` sub- and
super-diagonals), so that a column is contiguous. LAPACK's ``dgbtrf`` calls BLAS once a column,
which costs more than a narrow band's arithmetic (175 us for 903 unknowns and ``k = 5``, about
what PETSc's sparse LU takes); here a column is a few dozen flops. Partial pivoting was tried
first: on the effective tangents of beam models (forces and moments, rows of very different
sizes) it swapped rows at will and doubled the upper band, and the work with it.
"""

import numpy as np

from fem.kernels import configure_cache

configure_cache()                  # before the njit decorators: the source-keyed cache folder

from numba import njit  # noqa: E402


@njit(cache=True, nogil=True)
def fill(indptr, data, pos, order, ab, scale):
    """``ab`` zeroed, then the CSR values ``data`` put at their band positions ``pos``.

    Returns ``A``'s infinity norm; ``scale[k]`` is the largest ``|entry|`` of the row that
    ``order`` puts at position ``k`` (the null-pivot test's reference).
    """
    return fill_into(indptr, data, pos, order, ab, scale, np.empty(indptr.shape[0] - 1))


@njit(cache=True, nogil=True)
def fill_into(indptr, data, pos, order, ab, scale, rowmax):
    """:func:`fill` with the rows' largest entries in the work array ``rowmax (n,)``."""
    flat = ab.reshape(-1)
    flat[:] = 0.0
    norm = 0.0
    n = indptr.shape[0] - 1
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
def factor(ab, k, scale, null):
    """Factor ``ab`` in place (``L U``, unit ``L``); returns the number of null pivots.

    A column's update stops at its last nonzero (the zeros of a band that its rows' own
    envelopes leave, as a saddle-point system's multipliers do): the same values.

    A pivot is null when ``|u_jj| <= null * scale[j]`` (``scale``: the largest entry of each
    row of ``A``, as PETSc's own LU is checked, :func:`fem.linalg.checked._check_pivots`), or not
    finite; elimination stops at the first.
    """
    n, wd = ab.shape[0], ab.shape[1]
    flat = ab.reshape(-1)                   # one index a reference: 15% faster, same operations
    for j in range(n):
        dj = j * wd + k                     # the pivot's place
        piv = flat[dj]
        if not (abs(piv) > null * scale[j]) or not abs(piv) < 1e308:
            return n - j                    # this pivot and the columns after it
        rp = 1.0 / piv
        km = min(k, n - 1 - j)
        last = 0                            # the column's last nonzero below the diagonal
        for i in range(1, km + 1):
            if flat[dj + i] != 0.0:
                last = i
            flat[dj + i] *= rp
        for c in range(1, km + 1):          # column j + c, its row j at band row k - c
            base = (j + c) * wd + k - c
            t = flat[base]
            if t != 0.0:
                for i in range(1, last + 1):
                    flat[base + i] -= flat[dj + i] * t
    return 0


@njit(cache=True, nogil=True)
def solve(ab, k, b):
    """``b`` overwritten by ``A^-1 b`` (``ab`` from :func:`factor`)."""
    n, wd = ab.shape[0], ab.shape[1]
    flat = ab.reshape(-1)                   # flat, as factor: the same operations, faster
    for j in range(n - 1):
        bj = b[j]
        if bj != 0.0:
            dj = j * wd + k
            for i in range(1, min(k, n - 1 - j) + 1):
                b[j + i] -= flat[dj + i] * bj
    for j in range(n - 1, -1, -1):
        base = j * wd + k - j               # column j's row i at base + i
        b[j] /= flat[base + j]
        bj = b[j]
        if bj != 0.0:
            for i in range(max(0, j - k), j):
                b[i] -= flat[base + i] * bj


@njit(cache=True, nogil=True)
def apply(ab, k, order, b, x, y):
    """``x = A^-1 b`` in the original numbering (``y``: scratch); false if ``x`` is not finite."""
    n = b.shape[0]
    for i in range(n):
        y[i] = b[order[i]]
    solve(ab, k, y)
    finite = True
    for i in range(n):
        x[order[i]] = y[i]
        if not (abs(y[i]) < 1e308):
            finite = False
    return finite


@njit(cache=True, nogil=True)
def residual(indptr, indices, data, x, b, r, norm):
    """``r = b - A x`` for the CSR matrix ``A``; returns the normwise backward error.

    ``|r| / (|A| |x| + |b|)`` in the infinity norm (``norm``: ``|A|``), as
    :func:`fem.linalg.checked._backward_error`; 0 for ``b = 0``.
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


@njit(cache=True, nogil=True)
def refined(ab, k, order, indptr, indices, data, norm, b, x, y, r, refine_above, max_refine):
    """``x = A^-1 b`` refined while its backward error is above ``refine_above``.

    :func:`fem.linalg.refine` on the band: at most ``max_refine`` steps, each kept only if it
    lowers the backward error, and no more once one no longer halves it (or its correction is
    not finite). ``r`` receives ``b - A x``; ``data``: ``A``'s CSR values, ``norm`` its
    infinity norm. Returns ``(finite, backward error, first backward error, refinements)``;
    ``finite`` false (and nothing refined) where the first solution is not. The banded LU's
    solve (:meth:`fem.solvers.banded.BandedLU.solve`) and the compiled steps' call it.
    """
    n = b.shape[0]
    return refined_into(ab, k, order, indptr, indices, data, norm, b, x, y, r, refine_above,
                        max_refine, np.empty(n), np.empty(n), np.empty(n))


@njit(cache=True, nogil=True)
def refined_into(ab, k, order, indptr, indices, data, norm, b, x, y, r, refine_above,
                 max_refine, dx, x_new, r_new):
    """:func:`refined` in the work arrays ``dx, x_new, r_new (n,)`` (a Newton loop's)."""
    n = b.shape[0]
    if not apply(ab, k, order, b, x, y):
        return False, np.inf, np.inf, 0
    berr = residual(indptr, indices, data, x, b, r, norm)
    first, refinements = berr, 0
    while berr > refine_above and refinements < max_refine:
        finite = apply(ab, k, order, r, dx, y)
        for i in range(n):
            x_new[i] = x[i] + dx[i]
            finite = finite and abs(x_new[i]) < np.inf
        if not finite:
            break
        berr_new = residual(indptr, indices, data, x_new, b, r_new, norm)
        refinements += 1
        if not berr_new < berr:
            break                      # no better: keep what we have
        falling = berr_new < 0.5 * berr
        x[:] = x_new
        r[:] = r_new
        berr = berr_new
        if not falling:
            break
    return True, berr, first, refinements


@njit(cache=True, nogil=True)
def width(indptr, indices, where):
    """The half width of the pattern ``indptr, indices`` renumbered by ``where``.

    The largest ``|where[i] - where[j]|`` over its entries (``where[i]``: unknown ``i``'s
    position), what :meth:`fem.solvers.banded.BandedLU.make` compares.
    """
    kl = 0
    for i in range(indptr.shape[0] - 1):
        for p in range(indptr[i], indptr[i + 1]):
            d = abs(where[i] - where[indices[p]])
            if d > kl:
                kl = d
    return kl


@njit(cache=True, nogil=True)
def band_positions(indptr, indices, where, kl):
    """Each CSR entry's position in the flattened band of half width ``kl`` (:func:`fill`)."""
    pos = np.empty(indices.shape[0], dtype=np.int64)
    for i in range(indptr.shape[0] - 1):
        r = where[i]
        for p in range(indptr[i], indptr[i + 1]):
            c = where[indices[p]]
            pos[p] = c * (2 * kl + 1) + kl + r - c
    return pos
