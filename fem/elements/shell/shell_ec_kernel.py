"""The numba kernel of :func:`fem.elements.shell.shell_jit.conserving`; imported when it is used.

The energy-conserving step of co-rotational shell triangles,
:meth:`fem.elements.shell.corot.CorotShell.conserving` (Crisfield & Shi's algorithmic
deformations, notes/crisfield_shi.md sections 4-5), one pass per element::

    p1 = p0 + B_m inc,   q = K_l (p0 + p1)/2,   f = B_m^T q,   energy = p1.K_l p1/2,
    K = B_m^T K_l (B_m Q + d(B_m inc)/dd_m P)/2 + geometric(q) P,

``B_m`` the frame's ``B`` at the mid-point configuration, ``Q``, ``P`` the block-diagonal step
maps (:func:`fem.elements.shell.corot.step_maps`), ``d(B_m inc)/dd_m``
:meth:`~fem.elements.shell.corot.CorotShellFrame.bw_derivative` (with
:meth:`~fem.elements.shell.corot.CorotShellFrame.gw_derivative`) and ``geometric``
:meth:`~fem.elements.shell.corot.CorotShellFrame.geometric` (with ``g_contract``). Symbols follow
those methods line by line, in dense ``18 x 18`` scratch per chunk; the work is kept small by
the sparsity they share: the first three rows of ``B``, ``d(B inc)`` and ``dp1`` vanish
(``u_1 = 0``), their translation rows have only translation columns and their rotation rows
only translation columns and their own corner's rotation columns (``G``, ``R_e G`` and
``d(G inc)`` touch translation columns only), so ``K_l dp1`` and ``B^T (K_l dp1)`` run over
those patterns (about 2.9e3 multiply-adds each instead of 4.9e3).

The element frame, local rotations and spin map are
:func:`fem.elements.shell.shell_kernel.frame_into`,
the rotation helpers :mod:`fem.elements.beam.beam3d_kernel`'s, inlined (the cache folder is keyed by
every kernel's source, :func:`fem.kernels.cache_dir`, so a change to them recompiles this
kernel too).
"""

import math

import numpy as np

from fem.kernels import configure_cache

configure_cache()                  # before the njit decorators: the source-keyed cache folder

from numba import njit, prange  # noqa: E402

from fem.elements.beam.beam3d_kernel import eta_mu, hat_into  # noqa: E402
from fem.elements.shell.shell_kernel import frame_into  # noqa: E402

_CHUNK = 64            # elements per chunk: prange runs over chunks, each allocates its scratch


@njit(cache=True, nogil=True, inline="always")
def _tcol(jj):
    """Column of translation ``jj`` (0-8: corner ``jj // 3``, axis ``jj % 3``)."""
    return 6 * (jj // 3) + jj % 3


@njit(cache=True, nogil=True, inline="always")
def _ncols(k):
    """Nonzero columns of row ``k`` of ``B``: 9 translations, 12 in a rotation row."""
    return 12 if k % 6 >= 3 else 9


@njit(cache=True, nogil=True, inline="always")
def _pcol(k, jj):
    """Column ``jj`` of row ``k``'s pattern: translations, then the row corner's rotations."""
    return 6 * (jj // 3) + jj % 3 if jj < 9 else 6 * (k // 6) + jj - 6


@njit(cache=True, nogil=True, inline="always")
def _kh_into(th, m, eta, mu, t2, sign, out):
    """``kh(th, m) + (1 + sign) hat(m)/2`` (fem.rotations.kh; ``sign = 1``: ``jl_inv_derivative``).

    ``sign hat(m)/2 + eta (th.m I + th m^T - 2 m th^T) + mu (th th.m - m |th|^2) th^T``.
    """
    tm = th[0] * m[0] + th[1] * m[1] + th[2] * m[2]
    hat_into(m, out)
    for i in range(3):
        wi = th[i] * tm - m[i] * t2
        for j in range(3):
            out[i, j] = (sign * 0.5 * out[i, j]
                         + eta * ((tm if i == j else 0.0) + th[i] * m[j] - 2 * m[i] * th[j])
                         + mu * wi * th[j])


@njit(cache=True, nogil=True, inline="always")
def _half_spin_into(th, out):
    """fem.rotations.half_spin: ``(I - tan(t/4)/t hat(th))/2``."""
    t = math.sqrt(th[0] * th[0] + th[1] * th[1] + th[2] * th[2])
    c = 0.25 + t * t / 192 if t < 1e-6 else math.tan(t / 4) / t
    hat_into(th, out)
    for i in range(3):
        for j in range(3):
            out[i, j] = 0.5 * ((1.0 if i == j else 0.0) - c * out[i, j])


@njit(cache=True, nogil=True, inline="always")
def _step_blocks_into(th, cayley, hv, v, Q, P):
    """One node's rotation blocks of the step maps: ``Q = d(inc)/ds``, ``P = d(mid-point)/ds``.

    A Cayley node (``th`` holds ``psi``): ``cay_inv_spin(psi)`` and ``half_spin(log_cay(psi))``;
    else ``jl_inv(theta)`` and ``half_spin(theta)`` (fem.rotations; the step maps of
    :func:`fem.elements.shell.corot.step_maps` and :func:`fem.elements.beam.group._correction_map`).
    ``hv``, ``v`` are scratch.
    """
    hat_into(th, hv)
    if cayley:
        for i in range(3):
            for j in range(3):
                Q[i, j] = (1.0 if i == j else 0.0) - 0.5 * hv[i, j] + 0.25 * th[i] * th[j]
        pn = math.sqrt(th[0] * th[0] + th[1] * th[1] + th[2] * th[2])
        fc = 1 - pn * pn / 12 if pn < 1e-4 else 2 * math.atan(pn / 2) / pn
        for i in range(3):
            v[i] = fc * th[i]
        _half_spin_into(v, P)
    else:
        eta = eta_mu(th, -1.0, -1.0)[0]
        for i in range(3):
            for j in range(3):
                s = hv[i, 0] * hv[0, j] + hv[i, 1] * hv[1, j] + hv[i, 2] * hv[2, j]
                Q[i, j] = (1.0 if i == j else 0.0) - 0.5 * hv[i, j] + eta * s
        _half_spin_into(th, P)


@njit(cache=True, nogil=True, parallel=True)
def kernel(x, R, R0, xl0, Kl, p0, inc, cay, f, K, energy, p1):
    """Fill ``f (E, 18)``, ``K (E, 18, 18)``, ``energy (E,)`` and ``p1 (E, 18)``.

    Arguments as :func:`fem.elements.shell.shell_jit.conserving`: the mid-point corners ``x (E, 3,
    3)`` (relative to corner 1) and rotations ``R (E, 3, 3, 3)``, ``R0``, ``xl0``, ``Kl`` as the
    static kernel's, the algorithmic deformations ``p0 (E, 18)`` at the step's start, the
    increments ``inc (E, 18)`` and the Cayley flags ``cay (E, 3)`` of the corners.

    ``prange`` runs over chunks of ``_CHUNK`` elements (:func:`chunk`); a group of one chunk
    runs in the calling thread: waking numba's threads for it costs more than the chunk
    (on a loaded machine, milliseconds a call against 0.2 ms of work for 32 triangles).
    """
    E = x.shape[0]
    nchunks = (E + _CHUNK - 1) // _CHUNK
    if nchunks <= 1:                 # np.int64: a literal 0 would compile chunk a second time
        chunk(np.int64(0), E, x, R, R0, xl0, Kl, p0, inc, cay, f, K, energy, p1)
        return
    for c in prange(nchunks):
        chunk(c * _CHUNK, min(E, (c + 1) * _CHUNK), x, R, R0, xl0, Kl, p0, inc, cay, f, K,
              energy, p1)


@njit(cache=True, fastmath={"contract", "arcp"}, nogil=True)
def chunk(lo, hi, x, R, R0, xl0, Kl, p0, inc, cay, f, K, energy, p1):
    """Elements ``lo`` to ``hi`` of :func:`kernel` (its scratch allocated once)."""
    Re = np.empty((3, 3))            # columns e1 e2 e3
    xl = np.empty((3, 3))
    M = np.empty((3, 3))
    RR = np.empty((3, 3))
    theta = np.empty((3, 3))
    emu = np.empty((3, 3))           # eta, mu, |theta|^2 of each corner
    Lam = np.empty((3, 3, 3))
    hv = np.empty((3, 3))
    Jd = np.empty((3, 3))
    X3 = np.empty((3, 3))
    Qr = np.empty((3, 3, 3))
    Pr = np.empty((3, 3, 3))
    th = np.empty(3)
    v = np.empty(3)
    y = np.empty(3)
    G = np.zeros((3, 18))            # rotation columns stay zero
    RG = np.zeros((3, 18))
    dGw = np.zeros((3, 18))
    LG = np.zeros((3, 18))
    Y = np.zeros((3, 18))
    Bhat = np.empty((3, 3, 18))
    B = np.zeros((18, 18))           # rows 0-2 and translation rows' rotation columns stay 0
    BW = np.zeros((18, 18))
    D = np.zeros((18, 18))
    T = np.empty((18, 18))
    Km = np.empty((18, 18))
    Kg = np.empty((18, 18))
    pm = np.empty(18)
    q = np.empty(18)
    n = np.empty((3, 3))
    dl = np.zeros(18)
    dx3 = np.zeros(18)
    dy3 = np.zeros(18)
    for e in range(lo, hi):
        w = inc[e]
        frame_into(x, R, R0, e, Re, xl, RR, M, theta, emu, hv, Lam, G, RG)
        l, x3, y3 = xl[1, 0], xl[2, 0], xl[2, 1]
        # --- Bhat_a = R_e^T E_a - G; B: hat(u~_a) G + R_e^T (E_a - E_1), Lambda_a Bhat_a --
        for a in range(3):
            for i in range(3):
                for j in range(18):
                    Bhat[a, i, j] = -G[i, j]
                for k in range(3):
                    Bhat[a, i, 6 * a + 3 + k] += Re[k, i]
        for a in range(1, 3):
            for jj in range(9):
                j = _tcol(jj)
                g0, g1, g2 = G[0, j], G[1, j], G[2, j]
                B[6 * a, j] = xl[a, 1] * g2 - xl[a, 2] * g1
                B[6 * a + 1, j] = xl[a, 2] * g0 - xl[a, 0] * g2
                B[6 * a + 2, j] = xl[a, 0] * g1 - xl[a, 1] * g0
            for i in range(3):
                for k in range(3):
                    B[6 * a + i, 6 * a + k] += Re[k, i]
                    B[6 * a + i, k] -= Re[k, i]
        for a in range(3):
            for i in range(3):
                for j in range(18):
                    B[6 * a + 3 + i, j] = (Lam[a, i, 0] * Bhat[a, 0, j]
                                           + Lam[a, i, 1] * Bhat[a, 1, j]
                                           + Lam[a, i, 2] * Bhat[a, 2, j])
        # --- algorithmic deformations, forces and energy -------------------------------
        for i in range(3):
            p1[e, i] = p0[e, i]
        for k in range(3, 18):
            s = p0[e, k]
            for jj in range(_ncols(k)):
                j = _pcol(k, jj)
                s += B[k, j] * w[j]
            p1[e, k] = s
        for i in range(18):
            pm[i] = 0.5 * (p0[e, i] + p1[e, i])
        en = 0.0
        for i in range(18):
            s = 0.0
            s1 = 0.0
            for j in range(18):
                s += Kl[e, i, j] * pm[j]
                s1 += Kl[e, i, j] * p1[e, j]
            q[i] = s
            en += p1[e, i] * s1
        energy[e] = 0.5 * en
        for j in range(18):
            f[e, j] = 0.0
        for k in range(3, 18):
            for jj in range(_ncols(k)):
                j = _pcol(k, jj)
                f[e, j] += B[k, j] * q[k]

        # --- step maps Q, P (step_maps): rotation blocks of corner b -------------------
        for b in range(3):
            for i in range(3):
                th[i] = w[6 * b + 3 + i]
            _step_blocks_into(th, cay[e, b], hv, v, Qr[b], Pr[b])

        # --- d(G w)/dd (CorotShellFrame.gw_derivative), w = inc: translation columns ---
        g0 = g1 = g2 = 0.0
        for jj in range(9):
            j = _tcol(jj)
            g0 += G[0, j] * w[j]
            g1 += G[1, j] * w[j]
            g2 += G[2, j] * w[j]
        av0, av1, av2 = w[6] - w[0], w[7] - w[1], w[8] - w[2]
        bv0, bv1, bv2 = w[12] - w[0], w[13] - w[1], w[14] - w[2]
        # e2 x a, e3 x a, e3 x b
        t20 = Re[1, 1] * av2 - Re[2, 1] * av1
        t21 = Re[2, 1] * av0 - Re[0, 1] * av2
        t22 = Re[0, 1] * av1 - Re[1, 1] * av0
        t30 = Re[1, 2] * av2 - Re[2, 2] * av1
        t31 = Re[2, 2] * av0 - Re[0, 2] * av2
        t32 = Re[0, 2] * av1 - Re[1, 2] * av0
        u30 = Re[1, 2] * bv2 - Re[2, 2] * bv1
        u31 = Re[2, 2] * bv0 - Re[0, 2] * bv2
        u32 = Re[0, 2] * bv1 - Re[1, 2] * bv0
        for i in range(3):
            dl[6 + i], dl[12 + i], dl[i] = Re[i, 0], 0.0, -Re[i, 0]
            dx3[6 + i], dx3[12 + i], dx3[i] = 0.0, Re[i, 0], -Re[i, 0]
            dy3[6 + i], dy3[12 + i], dy3[i] = 0.0, Re[i, 1], -Re[i, 1]
        for jj in range(9):
            j = _tcol(jj)
            dx3[j] += y3 * G[2, j]
            dy3[j] -= x3 * G[2, j]
            r0, r1, r2 = RG[0, j], RG[1, j], RG[2, j]
            d2 = (t20 * r0 + t21 * r1 + t22 * r2 - g2 * dl[j]) / l
            d1 = (-(t30 * r0 + t31 * r1 + t32 * r2) - g1 * dl[j]) / l
            dGw[2, j], dGw[1, j] = d2, d1
            dGw[0, j] = (g1 * dx3[j] + x3 * d1 + u30 * r0 + u31 * r1 + u32 * r2
                         - g0 * dy3[j]) / y3

        # --- d(B w)/dd (CorotShellFrame.bw_derivative) ---------------------------------
        # translation rows of corner a: hat(R_e^T (w_a - w_1)) G - hat(G w) B_a
        # + hat(u~_a) dGw (translation columns only)
        for a in range(1, 3):
            for i in range(3):
                v[i] = (Re[0, i] * (w[6 * a] - w[0]) + Re[1, i] * (w[6 * a + 1] - w[1])
                        + Re[2, i] * (w[6 * a + 2] - w[2]))
            for jj in range(9):
                j = _tcol(jj)
                c0, c1, c2 = G[0, j], G[1, j], G[2, j]
                h0, h1, h2 = B[6 * a, j], B[6 * a + 1, j], B[6 * a + 2, j]
                z0, z1, z2 = dGw[0, j], dGw[1, j], dGw[2, j]
                BW[6 * a, j] = (v[1] * c2 - v[2] * c1 - (g1 * h2 - g2 * h1)
                                + xl[a, 1] * z2 - xl[a, 2] * z1)
                BW[6 * a + 1, j] = (v[2] * c0 - v[0] * c2 - (g2 * h0 - g0 * h2)
                                    + xl[a, 2] * z0 - xl[a, 0] * z2)
                BW[6 * a + 2, j] = (v[0] * c1 - v[1] * c0 - (g0 * h1 - g1 * h0)
                                    + xl[a, 0] * z1 - xl[a, 1] * z0)
        # rotation rows of corner a: jl_inv_derivative(theta_a, y_a) B_a
        # + Lambda_a (hat(R_e^T w_a) G - dGw), y_a = Bhat_a w
        for a in range(3):
            for i in range(3):
                s = 0.0
                for j in range(18):
                    s += Bhat[a, i, j] * w[j]
                y[i] = s
                v[i] = (Re[0, i] * w[6 * a + 3] + Re[1, i] * w[6 * a + 4]
                        + Re[2, i] * w[6 * a + 5])
            _kh_into(theta[a], y, emu[a, 0], emu[a, 1], emu[a, 2], 1.0, Jd)
            for jj in range(9):
                j = _tcol(jj)
                c0, c1, c2 = G[0, j], G[1, j], G[2, j]
                LG[0, j] = v[1] * c2 - v[2] * c1 - dGw[0, j]
                LG[1, j] = v[2] * c0 - v[0] * c2 - dGw[1, j]
                LG[2, j] = v[0] * c1 - v[1] * c0 - dGw[2, j]
            for i in range(3):
                r = 6 * a + 3 + i
                for jj in range(12):
                    j = _pcol(r, jj)
                    s = (Jd[i, 0] * B[6 * a + 3, j] + Jd[i, 1] * B[6 * a + 4, j]
                         + Jd[i, 2] * B[6 * a + 5, j])
                    if jj < 9:
                        s += Lam[a, i, 0] * LG[0, j] + Lam[a, i, 1] * LG[1, j] \
                            + Lam[a, i, 2] * LG[2, j]
                    BW[r, j] = s

        # --- dp1 = B Q + d(B w) P on the pattern of B ----------------------------------
        for k in range(3, 18):
            for jj in range(9):
                j = _tcol(jj)
                D[k, j] = B[k, j] + 0.5 * BW[k, j]
            if k % 6 >= 3:
                b = k // 6
                c = 6 * b + 3
                for i in range(3):
                    D[k, c + i] = (B[k, c] * Qr[b, 0, i] + B[k, c + 1] * Qr[b, 1, i]
                                   + B[k, c + 2] * Qr[b, 2, i]
                                   + BW[k, c] * Pr[b, 0, i] + BW[k, c + 1] * Pr[b, 1, i]
                                   + BW[k, c + 2] * Pr[b, 2, i])
        # --- material part B^T K_l dp1 / 2 ---------------------------------------------
        for i in range(18):
            for j in range(18):
                T[i, j] = 0.0
            for k in range(3, 18):
                kl = Kl[e, i, k]
                for jj in range(_ncols(k)):
                    j = _pcol(k, jj)
                    T[i, j] += kl * D[k, j]
        for i in range(18):
            for j in range(18):
                Km[i, j] = 0.0
        for k in range(3, 18):
            for jj in range(_ncols(k)):
                j = _pcol(k, jj)
                bk = 0.5 * B[k, j]
                for c in range(18):
                    Km[j, c] += bk * T[k, c]

        # --- geometric stiffness of q (CorotShellFrame.geometric) ----------------------
        for i in range(18):
            for j in range(18):
                Kg[i, j] = 0.0
        for a in range(3):
            for i in range(3):
                n[a, i] = (Lam[a, 0, i] * q[6 * a + 3] + Lam[a, 1, i] * q[6 * a + 4]
                           + Lam[a, 2, i] * q[6 * a + 5])
        # (i) the frame turns the local forces and moments: -hat(R_e v) R_e G
        for a in range(3):
            for rot in range(2):
                if rot == 0 and a == 0:
                    continue
                for i in range(3):
                    if rot == 0:
                        v[i] = Re[i, 0] * q[6 * a] + Re[i, 1] * q[6 * a + 1] \
                            + Re[i, 2] * q[6 * a + 2]
                    else:
                        v[i] = Re[i, 0] * n[a, 0] + Re[i, 1] * n[a, 1] + Re[i, 2] * n[a, 2]
                r0 = 6 * a + 3 * rot
                for jj in range(9):
                    j = _tcol(jj)
                    c0, c1, c2 = RG[0, j], RG[1, j], RG[2, j]
                    F0 = v[1] * c2 - v[2] * c1
                    F1 = v[2] * c0 - v[0] * c2
                    F2 = v[0] * c1 - v[1] * c0
                    Kg[r0, j] -= F0
                    Kg[r0 + 1, j] -= F1
                    Kg[r0 + 2, j] -= F2
                    if rot == 0:
                        Kg[0, j] += F0
                        Kg[1, j] += F1
                        Kg[2, j] += F2
        # (ii) change of Lambda_a^T: Bhat_a^T K_h(theta_a, m_a) Lambda_a Bhat_a
        for a in range(3):
            for i in range(3):
                v[i] = q[6 * a + 3 + i]
            _kh_into(theta[a], v, emu[a, 0], emu[a, 1], emu[a, 2], -1.0, Jd)
            for i in range(3):
                for j in range(3):
                    X3[i, j] = (Jd[i, 0] * Lam[a, 0, j] + Jd[i, 1] * Lam[a, 1, j]
                                + Jd[i, 2] * Lam[a, 2, j])
            r = 6 * a + 3
            for jj in range(12):
                j = _pcol(r, jj)
                for i in range(3):
                    Y[i, j] = (X3[i, 0] * Bhat[a, 0, j] + X3[i, 1] * Bhat[a, 1, j]
                               + X3[i, 2] * Bhat[a, 2, j])
            for ii in range(12):
                i = _pcol(r, ii)
                h0, h1, h2 = Bhat[a, 0, i], Bhat[a, 1, i], Bhat[a, 2, i]
                for jj in range(12):
                    j = _pcol(r, jj)
                    Kg[i, j] += h0 * Y[0, j] + h1 * Y[1, j] + h2 * Y[2, j]
        # (iii) the lever arms: G^T sum_a hat(q_u,a) B_a (B_a: B's translation rows)
        for jj in range(9):
            j = _tcol(jj)
            h0 = h1 = h2 = 0.0
            for a in range(1, 3):
                u0, u1, u2 = q[6 * a], q[6 * a + 1], q[6 * a + 2]
                c0, c1, c2 = B[6 * a, j], B[6 * a + 1, j], B[6 * a + 2, j]
                h0 += u1 * c2 - u2 * c1
                h1 += u2 * c0 - u0 * c2
                h2 += u0 * c1 - u1 * c0
            Y[0, j], Y[1, j], Y[2, j] = h0, h1, h2
        for ii in range(9):
            i = _tcol(ii)
            c0, c1, c2 = G[0, i], G[1, i], G[2, i]
            for jj in range(9):
                j = _tcol(jj)
                Kg[i, j] += c0 * Y[0, j] + c1 * Y[1, j] + c2 * Y[2, j]
        # (iv) the change of G: d(G^T c)/dd, c = sum_a q_u,a x u~_a - n_a (g_contract)
        c0 = c1 = c2 = 0.0
        for a in range(3):
            u0, u1, u2 = q[6 * a], q[6 * a + 1], q[6 * a + 2]
            c0 += u1 * xl[a, 2] - u2 * xl[a, 1] - n[a, 0]
            c1 += u2 * xl[a, 0] - u0 * xl[a, 2] - n[a, 1]
            c2 += u0 * xl[a, 1] - u1 * xl[a, 0] - n[a, 2]
        a01 = -x3 / (y3 * l)
        il, iy3 = 1.0 / l, 1.0 / y3
        for jj in range(9):
            j = _tcol(jj)
            d01 = (-dx3[j] / (y3 * l) + x3 / (y3 * y3 * l) * dy3[j]
                   + x3 / (y3 * l * l) * dl[j])
            d02 = -dy3[j] / (y3 * y3)
            dll = dl[j] * il * il
            r0, r1, r2 = RG[0, j], RG[1, j], RG[2, j]
            for i in range(3):
                e2i, e3i = Re[i, 1], Re[i, 2]
                # -hat(e) R_e G, row i
                if i == 0:
                    de2 = -(Re[1, 1] * r2 - Re[2, 1] * r1)
                    de3 = -(Re[1, 2] * r2 - Re[2, 2] * r1)
                elif i == 1:
                    de2 = -(Re[2, 1] * r0 - Re[0, 1] * r2)
                    de3 = -(Re[2, 2] * r0 - Re[0, 2] * r2)
                else:
                    de2 = -(Re[0, 1] * r1 - Re[1, 1] * r0)
                    de3 = -(Re[0, 2] * r1 - Re[1, 2] * r0)
                m1 = (c0 * (e3i * d01 + a01 * de3) + c1 * (e3i * dll - il * de3)
                      + c2 * (-e2i * dll + il * de2))
                m2 = c0 * (e3i * d02 + iy3 * de3)
                Kg[6 + i, j] += m1
                Kg[12 + i, j] += m2
                Kg[i, j] -= m1 + m2

        # --- K = material + geometric(q) P ---------------------------------------------
        Ke = K[e]
        for i in range(18):
            for b in range(3):
                c = 6 * b
                for k in range(3):
                    Ke[i, c + k] = Km[i, c + k] + 0.5 * Kg[i, c + k]
                c += 3
                for k in range(3):
                    Ke[i, c + k] = (Km[i, c + k] + Kg[i, c] * Pr[b, 0, k]
                                    + Kg[i, c + 1] * Pr[b, 1, k]
                                    + Kg[i, c + 2] * Pr[b, 2, k])
