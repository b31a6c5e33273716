"""Compiled loops of the assembly (numba): element arrays into CSR values and vectors, ``|K| q``.

numpy can do these only through temporaries or in one thread: ``np.bincount`` with weights
allocates and then adds an ``nnz``-long array per call, and the round-off floor's ``|K| q`` built a
scipy matrix of ``|K|`` first. Here a source's entries are first ordered by their target once
(:func:`order_by_target`, a counting sort: stable, so every target sums its entries in the order
``np.bincount`` does and the results are the same to the last bit), and each call is then a
gather that runs in parallel over the targets without two threads writing one value
(:func:`gather_add`). On the 1e6-unknown tower of ``python -m benchmarks.newton_share --tower``
(5.6e7 element-matrix entries into 3.4e7 stored ones) that is 0.15 s against bincount's 0.31, every
Newton iteration. :mod:`fem.assembly` loads this module only for sources large enough to gain
(:data:`fem.assembly.MIN_COMPILED`): importing numba costs more than small models save. The numpy
code is the reference (``tests/test_assembly.py``).
"""

from __future__ import annotations

import numpy as np

from fem.kernels import configure_cache

configure_cache()

from numba import njit, prange  # noqa: E402 - after the cache folder is set

_CHUNK = 4096           # targets (rows) per parallel chunk


def order_by_target(target, n):
    """``(ptr (n + 1,), perm)``: entry ``i`` of target ``k`` in ``perm[ptr[k]:ptr[k + 1]]``.

    The entries of a target are in increasing ``i`` (a stable counting sort); entries with a
    target outside ``0 .. n - 1`` are left out (they couple no unknowns). ``perm`` is ``int32``
    where the entries allow (half the memory of the gathers' reads).
    """
    ptr = _count_targets(target, n)
    small = len(target) < np.iinfo(np.int32).max
    perm = np.empty(ptr[n], np.int32 if small else np.int64)
    _fill_order(target, ptr, perm)
    return ptr, perm


@njit(cache=True)
def _count_targets(target, n):
    ptr = np.zeros(n + 1, np.int64)
    for i in range(target.shape[0]):
        k = target[i]
        if 0 <= k < n:
            ptr[k + 1] += 1
    for k in range(n):
        ptr[k + 1] += ptr[k]
    return ptr


@njit(cache=True)
def _fill_order(target, ptr, perm):
    n = ptr.shape[0] - 1
    fill = ptr[:n].copy()
    for i in range(target.shape[0]):
        k = target[i]
        if 0 <= k < n:
            perm[fill[k]] = i
            fill[k] += 1


@njit(cache=True, nogil=True, parallel=True)
def gather_add(data, ptr, perm, values):
    """``data[k] += sum(values[perm[ptr[k]:ptr[k + 1]]])`` for every target ``k``."""
    n = data.shape[0]
    for c in prange((n + _CHUNK - 1) // _CHUNK):
        for k in range(c * _CHUNK, min(n, (c + 1) * _CHUNK)):
            acc = 0.0
            for j in range(ptr[k], ptr[k + 1]):
                acc += values[perm[j]]
            data[k] += acc


@njit(cache=True, nogil=True, parallel=True)
def abs_row_sums(values, indptr, indices, q, out):
    """``out[r] = sum_k |values[k]| q[indices[k]]`` over the entries of CSR row ``r``."""
    n = indptr.shape[0] - 1
    for c in prange((n + _CHUNK - 1) // _CHUNK):
        for r in range(c * _CHUNK, min(n, (c + 1) * _CHUNK)):
            acc = 0.0
            for k in range(indptr[r], indptr[r + 1]):
                acc += abs(values[k]) * q[indices[k]]
            out[r] = acc
