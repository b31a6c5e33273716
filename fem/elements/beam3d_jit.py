"""Compiled force and tangent of 3D co-rotational beams: one pass per element, numba.

The same mathematics as the vectorized reference (:class:`fem.elements.frames3d.CorotFrame3D`
with :class:`fem.elements.beam_basic.BasicBeam`; Battini & Pacoste 2002 around Meijaard's 1993
second-order strains), written element by element so that the frame, the basic response, ``B^T q``
and ``B^T kb B + K_geo`` stay in registers and cache instead of passing through a dozen ``(E, 12,
12)`` temporaries: the numpy code is memory-bound at about 1e5 elements per second. The numpy
code stays the reference the tests compare this kernel with (to 1e-13 relative) and the fallback
where numba is missing or a group is small (compilation and numba's import cost more than they
save there).

Why numba: it installs from PyPI as a wheel on every platform CPython does, compiles at first use
and caches the machine code beside the module, needs no C toolchain at install time, and reads
like the numpy it replaces; Cython or a C extension would need a build step in the set-up, and
JAX/PyTorch are far heavier for 12 x 12 matrices.

Layout: elements are split into chunks, ``prange`` runs over chunks (threads, when numba has
more than one), and each chunk allocates its scratch once. Formulas and their symbols follow
:mod:`fem.elements.frames3d` (``G``, ``Bhat``, ``Lambda``, the four parts of the geometric
stiffness, ``_g_parts``) line by line.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from fem.elements.jit import MIN_ELEMENTS, Kernel  # noqa: F401 - MIN_ELEMENTS: the dispatch rule

_kernel = Kernel("fem.elements.beam3d_kernel")


def enabled() -> bool:
    """Whether the compiled kernel can be used (numba importable, ``FEM_JIT`` not ``0``)."""
    return _kernel.enabled()


def evaluate(x: NDArray, R: NDArray, E0: NDArray, l0: NDArray, A: NDArray, S: NDArray,
             H0: NDArray, arch: list, tangent: bool = True) -> tuple[NDArray, NDArray | None]:
    """Internal forces ``(E, 12)`` and tangents ``(E, 12, 12)`` of a batch of 3D beams.

    ``x (E, 2, 3)`` nodal positions, ``R (E, 2, 3, 3)`` nodal rotation matrices, ``E0 (E, 3, 3)``
    reference triads, ``l0 (E,)``; ``A (E, 6, 7)``, ``S (E, 6, 6)``, ``H0 (6, 7, 7)`` and the
    shear-arch terms ``arch`` [(coefficient (E,), i, j)] of :class:`~fem.elements.beam_basic.
    BasicBeam`.
    """
    E = len(l0)
    na = len(arch)
    coef = np.zeros((max(na, 1), E))
    ij = np.zeros((max(na, 1), 2), dtype=np.int64)
    for k, (c, i, j) in enumerate(arch):
        coef[k], ij[k] = c, (i, j)
    f = np.empty((E, 12))
    K = np.empty((E, 12, 12)) if tangent else np.empty((0, 12, 12))
    hk, hi, hj = (idx.astype(np.int64) for idx in np.nonzero(H0))      # H0 is sparse
    _kernel.function(np.ascontiguousarray(x, dtype=float), np.ascontiguousarray(R, dtype=float),
            np.ascontiguousarray(E0), l0, np.ascontiguousarray(A), np.ascontiguousarray(S),
            hk, hi, hj, H0[hk, hi, hj], coef, ij, na, tangent, f, K)
    return f, (K if tangent else None)
