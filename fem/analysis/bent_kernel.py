"""Compiled right-hand side of the 3D chord fit of bent corrections (numba).

:meth:`fem.analysis.bent.ChordFit.__call__` turns each beam's chord by its correction and sums the
weighted chord changes onto the nodes, ``G^T (w (c - d))``: a dozen numpy passes over ``(E, 3)``
temporaries, 0.2 s a Newton iteration on the 3.9e5 beams of the 1e6-unknown tower
(``python -m benchmarks.newton_share --tower``), as much as the residual evaluation. Here it is
one pass per beam with the same formulas (the rotation of :func:`fem.rotations.rotate`, its
series below :data:`fem.rotations._SMALL`); the numpy code is the reference
(``tests/test_bent.py``) and the path of small models (:data:`fem.kernels.MIN_ELEMENTS`)
and of 2D ones.
"""

from __future__ import annotations

import math

from fem.kernels import configure_cache

configure_cache()

#: :data:`fem.rotations._SMALL`, here as a literal: numba freezes a global into the cached
#: machine code, and the cache is keyed by the kernel modules' sources only (tests/test_bent.py
#: checks that the two agree)
_SMALL = 0.3

from numba import njit  # noqa: E402 - after the cache folder is set


@njit(cache=True)
def chord_rhs(u, dn, conn, chord0, w, rhs):
    """``rhs (n, 3) = G^T (w (c - d))`` of the chord fit (see :class:`~fem.analysis.bent.ChordFit`).

    ``u (n, >=3)`` nodal displacements, ``dn (n, 6)`` the nodal correction (translations, spins),
    ``conn (E, 2)``, ``chord0 (E, 3)`` reference chords, ``w (E,)`` the weights ``1 / l0``.
    """
    rhs[:, :] = 0.0
    for k in range(conn.shape[0]):
        p, q = conn[k, 0], conn[k, 1]
        d0 = chord0[k, 0] + (u[q, 0] - u[p, 0])
        d1 = chord0[k, 1] + (u[q, 1] - u[p, 1])
        d2 = chord0[k, 2] + (u[q, 2] - u[p, 2])
        ln = math.sqrt(d0 * d0 + d1 * d1 + d2 * d2)
        e0, e1, e2 = d0 / ln, d1 / ln, d2 / ln
        D0 = dn[q, 0] - dn[p, 0]
        D1 = dn[q, 1] - dn[p, 1]
        D2 = dn[q, 2] - dn[p, 2]
        a = e0 * D0 + e1 * D1 + e2 * D2
        tw = 0.5 * (e0 * (dn[p, 3] + dn[q, 3]) + e1 * (dn[p, 4] + dn[q, 4])
                    + e2 * (dn[p, 5] + dn[q, 5]))
        o0 = (e1 * D2 - e2 * D1) / ln + tw * e0        # spin of the chord plus the twist
        o1 = (e2 * D0 - e0 * D2) / ln + tw * e1
        o2 = (e0 * D1 - e1 * D0) / ln + tw * e2
        t2 = o0 * o0 + o1 * o1 + o2 * o2
        if math.sqrt(t2) < _SMALL:
            sa = 1.0 + t2 * (-1 / 6 + t2 * (1 / 120 + t2 * (-1 / 5040 + t2 / 362880)))
            sb = 0.5 + t2 * (-1 / 24 + t2 * (1 / 720 + t2 * (-1 / 40320 + t2 / 3628800)))
        else:
            t = math.sqrt(t2)
            sa = math.sin(t) / t
            sb = (1 - math.cos(t)) / t2
        x0 = o1 * e2 - o2 * e1                          # o x e
        x1 = o2 * e0 - o0 * e2
        x2 = o0 * e1 - o1 * e0
        y0 = o1 * x2 - o2 * x1                          # o x (o x e)
        y1 = o2 * x0 - o0 * x2
        y2 = o0 * x1 - o1 * x0
        s = ln + a
        v0 = w[k] * (s * (e0 + sa * x0 + sb * y0) - d0)
        v1 = w[k] * (s * (e1 + sa * x1 + sb * y1) - d1)
        v2 = w[k] * (s * (e2 + sa * x2 + sb * y2) - d2)
        rhs[q, 0] += v0
        rhs[q, 1] += v1
        rhs[q, 2] += v2
        rhs[p, 0] -= v0
        rhs[p, 1] -= v1
        rhs[p, 2] -= v2
