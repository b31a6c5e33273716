"""The numba kernel of :func:`fem.elements.beam.beam2d_jit.conserving`; imported when it is used.

The energy-conserving step of 2D co-rotational beams, :meth:`fem.elements.beam.Beam.conserving`
(Crisfield & Shi 1994, section 5, eqs. 20, 35(b), 38-43; notes/crisfield_shi.md sections 1.4
and 4.2), one pass per element::

    v1 = v0 + B' inc (v1_0 = l_1 - l0),   q = D(v_m)^T S (eps(v0) + eps(v1))/2,   f = B'^T q,
    K  = B'^T kb dv1 + geometric(q')/2 + B_0^T N dbeta,   energy = eps(v1).S eps(v1)/2,
    kb = (D_m^T S D_1 + sigma_av,0 H)/2,   dv1 = [b1; B + d(B inc)/dd / 2],

``B`` the frame's at the mid-point chord (:class:`fem.elements.beam.frames2d.CorotFrame2D`: it
depends on the chord only, so the mid-point rotations are not read), ``B'`` it with the
elongation row scaled by ``beta = 2 l_m/(l_n + l_n+1)``, ``q' = (beta N, Mp, Mq)``, ``b1 =
{-e1; e1}`` the end chord's direction, ``d(B inc)/dd``
:meth:`~fem.elements.beam.frames2d.CorotFrame2D.bw_derivative` and ``geometric``
:meth:`~fem.elements.beam.frames2d.CorotFrame2D.geometric`. Planar rotations are additive, so the
correction maps of :func:`fem.elements.beam.group._correction_map` are ``Q = 1`` and ``P = 1/2``
whatever the integrator puts in the rotation slots (angles or Cayley parameters): ``B``'s
rotation columns are constant and neither ``d(B inc)/dd`` nor the geometric stiffness has any.

The strains are Meijaard's second-order ones (:class:`fem.elements.beam.basic.BasicBeam`):
``eps = (u + (h11 p^2 + 2 h12 p q + h22 q^2)/2, -l0 p, l0 q)`` with ``H = [[h11, h12], [h12,
h22]] = l0 H0 + `` the Timoshenko shear-arch terms (:func:`fem.elements.beam.beam2d_jit.prepare`
folds both into ``Hc``), the only second-order strain in the plane.

Scalars and ``3 x 6`` scratch per chunk: the target is the small dynamic models (the flexible
pendulum of ``benchmarks/small_models.py``: 100 beams, 1e3 steps), where numpy's cost is its
~60 small array operations a call, not the flops of one element (a few hundred).
"""

import math

import numpy as np

from fem.kernels import configure_cache

configure_cache()                  # before the njit decorators: the source-keyed cache folder

from numba import njit, prange  # noqa: E402

#: elements per chunk: ``prange`` runs over chunks, each allocates its scratch. An element is a
#: few hundred flops (0.1-0.2 us in one thread), so a chunk must be large to pay for waking
#: threads: on a shared, busy 2-core machine (OpenMP layer) chunks of 256 took 8 ms a call
#: from 300 to 3e4 elements against 0.06-3 ms in one thread (chunks of 4096: 16 ms for 1e5)
_CHUNK = 16384


@njit(cache=True, nogil=True, parallel=True)
def kernel(um, u0, u1, conn, chord0, l0, Sc, Hc, v0, inc, f, K, energy, v1):
    """Fill ``f (E, 6)``, ``K (E, 6, 6)``, ``energy (E,)`` and ``v1 (E, 3)``.

    Arguments as :func:`fem.elements.beam.beam2d_jit.conserving`: the mid-point displacements ``um
    (n, 3)``, the displacements ``u0``, ``u1`` at the step's ends, the group's prepared data
    (``conn`` to ``Hc``, :class:`fem.elements.beam.beam2d_jit.Prepared`), the algorithmic
    deformations ``v0 (E, 3)`` at the step's start and the increments ``inc (E, 6)``.

    ``prange`` runs over chunks of ``_CHUNK`` elements (:func:`chunk`); a group of one chunk
    runs in the calling thread: waking numba's threads costs more than a small group's work.
    """
    E = l0.shape[0]
    nchunks = (E + _CHUNK - 1) // _CHUNK
    if nchunks <= 1:                    # int64, not Literal[int](0): one compiled chunk
        chunk(np.int64(0), E, um, u0, u1, conn, chord0, l0, Sc, Hc, v0, inc, f, K, energy, v1,
              True)
        return
    for c in prange(nchunks):
        chunk(c * _CHUNK, min(E, (c + 1) * _CHUNK), um, u0, u1, conn, chord0, l0, Sc, Hc, v0,
              inc, f, K, energy, v1, True)


@njit(cache=True, fastmath={"contract", "arcp"}, nogil=True)
def chunk(lo, hi, um, u0, u1, conn, chord0, l0, Sc, Hc, v0, inc, f, K, energy, v1, tangent):
    """Elements ``lo`` to ``hi`` of :func:`kernel` (its scratch allocated once).

    ``tangent`` false: ``K`` is left as it is (a residual-only evaluation).
    """
    Bs = np.zeros((3, 6))               # B' (rotation columns: constant)
    dv = np.zeros((3, 6))               # dv1
    W = np.empty((3, 6))                # kb dv1
    Dm = np.zeros((3, 3))
    D1 = np.zeros((3, 3))
    SD = np.empty((3, 3))
    kb = np.empty((3, 3))
    k2 = np.empty((2, 2))               # the geometric stiffness' block on the chord vector
    Bs[1, 2] = 1.0
    Bs[2, 5] = 1.0
    dv[1, 2] = 1.0
    dv[2, 5] = 1.0
    for e in range(lo, hi):
        w = inc[e]
        le = l0[e]
        n0, n1 = conn[e, 0], conn[e, 1]
        s00, s11, s12, s22 = Sc[e, 0], Sc[e, 1], Sc[e, 2], Sc[e, 3]
        h11, h12, h22 = Hc[e, 0], Hc[e, 1], Hc[e, 2]
        # --- frame at the mid-point chord (CorotFrame2D._geometry) ----------------------
        dx = chord0[e, 0] + (um[n1, 0] - um[n0, 0])
        dy = chord0[e, 1] + (um[n1, 1] - um[n0, 1])
        l = math.sqrt(dx * dx + dy * dy)
        ex, ey = dx / l, dy / l
        zx, zy = -ey, ex
        gx, gy = zx / l, zy / l
        # --- the step's chords: beta ---------------------------------------------------
        ax = chord0[e, 0] + (u0[n1, 0] - u0[n0, 0])
        ay = chord0[e, 1] + (u0[n1, 1] - u0[n0, 1])
        l_n = math.sqrt(ax * ax + ay * ay)
        bx = chord0[e, 0] + (u1[n1, 0] - u1[n0, 0])
        by = chord0[e, 1] + (u1[n1, 1] - u1[n0, 1])
        l_1 = math.sqrt(bx * bx + by * by)
        e1x, e1y = bx / l_1, by / l_1
        lsum = l_n + l_1
        beta = 2 * l / lsum
        Bs[0, 0], Bs[0, 1], Bs[0, 3], Bs[0, 4] = -beta * ex, -beta * ey, beta * ex, beta * ey
        for k in (1, 2):
            Bs[k, 0], Bs[k, 1], Bs[k, 3], Bs[k, 4] = gx, gy, -gx, -gy
        # --- v1 = v0 + B' inc, the elongation l_1 - l0 ----------------------------------
        vs = v0[e]
        ve = v1[e]
        ve[0] = l_1 - le                    # the same, without round-off drift
        for k in (1, 2):
            s = 0.0
            for j in range(6):
                s += Bs[k, j] * w[j]
            ve[k] = vs[k] + s
        # --- basic response: q = D_m^T sigma_av, energy, kb ----------------------------
        p, r = vs[1], vs[2]
        eps00 = vs[0] + 0.5 * (h11 * p * p + 2 * h12 * p * r + h22 * r * r)
        eps01, eps02 = -le * p, le * r
        p, r = ve[1], ve[2]
        eps10 = ve[0] + 0.5 * (h11 * p * p + 2 * h12 * p * r + h22 * r * r)
        eps11, eps12 = -le * p, le * r
        D1[0, 0], D1[0, 1], D1[0, 2] = 1.0, h11 * p + h12 * r, h12 * p + h22 * r
        D1[1, 1], D1[2, 2] = -le, le
        p, r = 0.5 * (vs[1] + ve[1]), 0.5 * (vs[2] + ve[2])
        Dm[0, 0], Dm[0, 1], Dm[0, 2] = 1.0, h11 * p + h12 * r, h12 * p + h22 * r
        Dm[1, 1], Dm[2, 2] = -le, le
        sig10 = s00 * eps10
        sig11 = s11 * eps11 + s12 * eps12
        sig12 = s12 * eps11 + s22 * eps12
        sav0 = 0.5 * (s00 * eps00 + sig10)
        sav1 = 0.5 * (s11 * eps01 + s12 * eps02 + sig11)
        sav2 = 0.5 * (s12 * eps01 + s22 * eps02 + sig12)
        energy[e] = 0.5 * (eps10 * sig10 + eps11 * sig11 + eps12 * sig12)
        q0 = sav0
        q1 = Dm[0, 1] * sav0 - le * sav1
        q2 = Dm[0, 2] * sav0 + le * sav2
        for j in range(6):                  # f = B'^T q
            f[e, j] = Bs[0, j] * q0 + Bs[1, j] * q1 + Bs[2, j] * q2
        if not tangent:
            continue
        for b in range(3):                  # S D_1
            SD[0, b] = s00 * D1[0, b]
            SD[1, b] = s11 * D1[1, b] + s12 * D1[2, b]
            SD[2, b] = s12 * D1[1, b] + s22 * D1[2, b]
        for a in range(3):
            for b in range(3):
                kb[a, b] = 0.5 * (Dm[0, a] * SD[0, b] + Dm[1, a] * SD[1, b]
                                  + Dm[2, a] * SD[2, b])
        hs = 0.5 * sav0                     # + sigma_av,0 H / 2
        kb[1, 1] += hs * h11
        kb[1, 2] += hs * h12
        kb[2, 1] += hs * h12
        kb[2, 2] += hs * h22
        # --- dv1 = [b1; B + d(B inc)/dd / 2] (CorotFrame2D.bw_derivative) ----------------
        wx, wy = w[3] - w[0], w[4] - w[1]
        ew, zw = ex * wx + ey * wy, zx * wx + zy * wy
        il2 = 1.0 / (l * l)
        rx = 0.5 * (ew * il2 * zx + zw * il2 * ex)
        ry = 0.5 * (ew * il2 * zy + zw * il2 * ey)
        dv[0, 0], dv[0, 1], dv[0, 3], dv[0, 4] = -e1x, -e1y, e1x, e1y
        for k in (1, 2):
            dv[k, 0], dv[k, 1], dv[k, 3], dv[k, 4] = gx - rx, gy - ry, -gx + rx, -gy + ry
        for a in range(3):
            for j in range(6):
                W[a, j] = kb[a, 0] * dv[0, j] + kb[a, 1] * dv[1, j] + kb[a, 2] * dv[2, j]
        # --- geometric(q') / 2 (CorotFrame2D.geometric), q' = (beta N, Mp, Mq) ----------
        cn = 0.5 * beta * q0 / l
        cm = 0.5 * (q1 + q2) * il2
        k2[0, 0] = cn * zx * zx + cm * 2 * ex * zx
        k2[0, 1] = cn * zx * zy + cm * (ex * zy + zx * ey)
        k2[1, 0] = cn * zy * zx + cm * (ey * zx + zy * ex)
        k2[1, 1] = cn * zy * zy + cm * 2 * ey * zy
        # --- K = B'^T W + geometric P + B_0^T N dbeta ------------------------------------
        gf = q0 / lsum                      # dbeta N = gf (e - beta e1) . (dx_q - dx_p)
        gbx, gby = gf * (ex - beta * e1x), gf * (ey - beta * e1y)
        Ke = K[e]
        for i in range(6):
            for j in range(6):
                Ke[i, j] = Bs[0, i] * W[0, j] + Bs[1, i] * W[1, j] + Bs[2, i] * W[2, j]
        for a in range(2):                  # node blocks of the chord vector: signs -, +
            for b in range(2):
                sg = 1.0 if a == b else -1.0
                for i in range(2):
                    for j in range(2):
                        Ke[3 * a + i, 3 * b + j] += sg * k2[i, j]
        for a in range(2):                  # B_0 = {-e; 0; e; 0} (unscaled)
            b0 = -ex if a == 0 else ex
            b1 = -ey if a == 0 else ey
            o = 3 * a
            Ke[o, 0] -= b0 * gbx
            Ke[o, 1] -= b0 * gby
            Ke[o, 3] += b0 * gbx
            Ke[o, 4] += b0 * gby
            Ke[o + 1, 0] -= b1 * gbx
            Ke[o + 1, 1] -= b1 * gby
            Ke[o + 1, 3] += b1 * gbx
            Ke[o + 1, 4] += b1 * gby
