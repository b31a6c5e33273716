"""Compiled force and tangent of co-rotational shell triangles: one pass per element, numba.

The same mathematics as the vectorized reference (:class:`fem.elements.shell_corot.
CorotShellFrame` with the linear element's ``K_local``, of any section: a laminate's
membrane-bending coupling is in it), written element by element so that the
frame, the local deformations, ``B^T K_l p`` and ``B^T K_l B`` plus the geometric stiffness stay
in registers and cache instead of passing through a dozen ``(E, 18, 18)`` temporaries: the numpy
code is memory-bound at about 4e4 elements per second, a third of a Newton iteration at 1e5
elements (issue 12 asks for at most a fifth). The numpy code stays the reference the tests
compare this kernel with (to 1e-13 relative) and the fallback where numba is missing, ``FEM_JIT``
is ``0`` or a group is small (compiling or loading the kernel costs more than it saves there).
Why numba, and the layout (``prange`` over chunks, per-chunk scratch): as the 3D beams',
:mod:`fem.elements.beam3d_jit`.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from fem.elements.jit import MIN_ELEMENTS, Kernel  # noqa: F401 - MIN_ELEMENTS: the dispatch rule

_kernel = Kernel("fem.elements.shell_kernel")


def enabled() -> bool:
    """Whether the compiled kernel can be used (numba importable, ``FEM_JIT`` not ``0``)."""
    return _kernel.enabled()


def evaluate(x: NDArray, R: NDArray, R0: NDArray, xl0: NDArray, Kl: NDArray,
             tangent: bool = True) -> tuple[NDArray, NDArray | None]:
    """Internal forces ``(E, 18)`` and tangents ``(E, 18, 18)`` of co-rotational triangles.

    ``x (E, 3, 3)`` corners relative to corner 1, ``R (E, 3, 3, 3)`` their rotation matrices,
    ``R0 (E, 3, 3)`` reference element frames (columns ``e1 e2 e3``), ``xl0 (E, 3, 3)``
    reference corners in them, ``Kl (E, 18, 18)`` the constant local stiffness.
    """
    E = len(x)
    f = np.empty((E, 18))
    K = np.empty((E, 18, 18)) if tangent else np.empty((0, 18, 18))
    _kernel.function(np.ascontiguousarray(x, dtype=float), np.ascontiguousarray(R, dtype=float),
            np.ascontiguousarray(R0, dtype=float), np.ascontiguousarray(xl0, dtype=float),
            np.ascontiguousarray(Kl, dtype=float), tangent, f, K)
    return f, (K if tangent else None)
