"""The numba kernel of :func:`fem.elements.beam.beam2d_jit.evaluate`; imported when it is used.

Internal force and tangent of 2D co-rotational beams at one state, as
:meth:`fem.elements.beam.Beam.evaluate` computes them in numpy (Crisfield, vol. 1, section 7.3;
:class:`fem.elements.beam.frames2d.CorotFrame2D` and :class:`fem.elements.beam.basic.BasicBeam`),
one pass per element::

    v = (l - l0, wrap(theta_a - psi), wrap(theta_b - psi)),   q = D(v)^T S eps(v),   f = B^T q,
    K = B^T (D^T S D + sigma_0 H) B + geometric(q),

``psi`` the chord's turn from its reference direction, ``B`` the frame's matrix, ``geometric``
:meth:`~fem.elements.beam.frames2d.CorotFrame2D.geometric`, and Meijaard's strains ``eps = (u + (h11
p^2 + 2 h12 p q + h22 q^2)/2, -l0 p, l0 q)`` with ``H = [[h11, h12], [h12, h22]]`` (Euler-Bernoulli
and Timoshenko alike, :func:`fem.elements.beam.beam2d_jit.prepare`). The static increment of small
planar models (:mod:`fem.analysis.planar_static_kernel`) calls :func:`chunk` in its Newton
loop; ``tests/test_planar_static.py`` compares it with the numpy code to 1e-13.
"""

import math

import numpy as np

from fem.kernels import configure_cache

configure_cache()                  # before the njit decorators: the source-keyed cache folder

from numba import njit  # noqa: E402


@njit(cache=True, nogil=True)
def kernel(u, rot, conn, chord0, l0, Sc, Hc, f, K):
    """Fill ``f (E, 6)`` and ``K (E, 6, 6)`` (arguments as :func:`chunk`), every element."""
    chunk(np.int64(0), l0.shape[0], u, rot, conn, chord0, l0, Sc, Hc, True, f, K)


@njit(cache=True, fastmath={"contract", "arcp"}, nogil=True)
def chunk(lo, hi, u, rot, conn, chord0, l0, Sc, Hc, tangent, f, K):
    """Elements ``lo`` to ``hi``: force ``f (E, 6)`` and, if ``tangent``, ``K (E, 6, 6)``.

    ``u (n, >=2)`` nodal displacements, ``rot (n,)`` nodal rotations, and the group's prepared
    data (:class:`fem.elements.beam.beam2d_jit.Prepared`).
    """
    B = np.zeros((3, 6))
    W = np.empty((3, 6))
    kb = np.empty((3, 3))
    k2 = np.empty((2, 2))               # the geometric stiffness' block on the chord vector
    B[1, 2] = 1.0
    B[2, 5] = 1.0
    for e in range(lo, hi):
        le = l0[e]
        n0, n1 = conn[e, 0], conn[e, 1]
        s00, s11, s12, s22 = Sc[e, 0], Sc[e, 1], Sc[e, 2], Sc[e, 3]
        h11, h12, h22 = Hc[e, 0], Hc[e, 1], Hc[e, 2]
        # --- frame (CorotFrame2D._geometry) ---------------------------------------------------
        cx, cy = chord0[e, 0], chord0[e, 1]
        c = math.sqrt(cx * cx + cy * cy)
        cx, cy = cx / c, cy / c
        dx = chord0[e, 0] + (u[n1, 0] - u[n0, 0])
        dy = chord0[e, 1] + (u[n1, 1] - u[n0, 1])
        l = math.sqrt(dx * dx + dy * dy)
        ex, ey = dx / l, dy / l
        zx, zy = -ey, ex
        gx, gy = zx / l, zy / l
        psi = math.atan2(cx * ey - cy * ex, cx * ex + cy * ey)
        a = rot[n0] - psi
        p = math.atan2(math.sin(a), math.cos(a))
        a = rot[n1] - psi
        r = math.atan2(math.sin(a), math.cos(a))
        B[0, 0], B[0, 1], B[0, 3], B[0, 4] = -ex, -ey, ex, ey
        for k in (1, 2):
            B[k, 0], B[k, 1], B[k, 3], B[k, 4] = gx, gy, -gx, -gy
        # --- basic response (BasicBeam.response) ----------------------------------------------
        eps0 = (l - le) + 0.5 * (h11 * p * p + 2 * h12 * p * r + h22 * r * r)
        eps1, eps2 = -le * p, le * r
        sig0 = s00 * eps0
        sig1 = s11 * eps1 + s12 * eps2
        sig2 = s12 * eps1 + s22 * eps2
        d1, d2 = h11 * p + h12 * r, h12 * p + h22 * r      # D's first row: (1, d1, d2)
        q0 = sig0
        q1 = d1 * sig0 - le * sig1
        q2 = d2 * sig0 + le * sig2
        for j in range(6):                  # f = B^T q
            f[e, j] = B[0, j] * q0 + B[1, j] * q1 + B[2, j] * q2
        if not tangent:
            continue
        # --- kb = D^T S D + sigma_0 H (BasicBeam.material_stiffness, stress_hessian) ----------
        # D = [[1, d1, d2], [0, -le, 0], [0, 0, le]]; S D's rows: s00 D0, (s11, s12) and
        # (s12, s22) on the bending rows
        kb[0, 0] = s00
        kb[0, 1] = s00 * d1
        kb[0, 2] = s00 * d2
        kb[1, 1] = s00 * d1 * d1 + le * le * s11 + sig0 * h11
        kb[1, 2] = s00 * d1 * d2 - le * le * s12 + sig0 * h12
        kb[2, 2] = s00 * d2 * d2 + le * le * s22 + sig0 * h22
        kb[1, 0], kb[2, 0], kb[2, 1] = kb[0, 1], kb[0, 2], kb[1, 2]
        for a_ in range(3):
            for j in range(6):
                W[a_, j] = kb[a_, 0] * B[0, j] + kb[a_, 1] * B[1, j] + kb[a_, 2] * B[2, j]
        Ke = K[e]
        for i in range(6):
            for j in range(6):
                Ke[i, j] = B[0, i] * W[0, j] + B[1, i] * W[1, j] + B[2, i] * W[2, j]
        # --- geometric(q) (CorotFrame2D.geometric) --------------------------------------------
        cn = q0 / l
        cm = (q1 + q2) / (l * l)
        k2[0, 0] = cn * zx * zx + cm * 2 * ex * zx
        k2[0, 1] = cn * zx * zy + cm * (ex * zy + zx * ey)
        k2[1, 0] = cn * zy * zx + cm * (ey * zx + zy * ex)
        k2[1, 1] = cn * zy * zy + cm * 2 * ey * zy
        for a_ in range(2):                 # node blocks of the chord vector: signs -, +
            for b in range(2):
                sg = 1.0 if a_ == b else -1.0
                for i in range(2):
                    for j in range(2):
                        Ke[3 * a_ + i, 3 * b + j] += sg * k2[i, j]
