"""The numba kernel of :mod:`fem.elements.shell.shell_jit` (imported only when it is used).

Module-level functions, so that numba caches the machine code (in the folder keyed by every
kernel's source, :func:`fem.kernels.cache_dir`) and later runs load it instead of compiling.
The rotation helpers (``logm``, ``eta_mu``, ``hat_into``) are the 3D beam kernel's
(:mod:`fem.elements.beam.beam3d_kernel`), inlined; numba checks a cached kernel against its own file
only, so the cache folder is keyed by every kernel's source (:func:`fem.kernels.cache_dir`)
and a change to them recompiles this kernel too.

Symbols follow :class:`fem.elements.shell.corot.CorotShellFrame` line by line; two changes of
basis keep the work per element small:

* ``B = L Bh`` with ``L = diag(I, Lambda_1, I, Lambda_2, I, Lambda_3)``: ``Bh`` holds the
  translation rows of ``B`` and ``Bhat_a`` in the rotation rows, so part (ii) of the geometric
  stiffness, ``Bhat_a^T K_h(theta_a, m_a) Lambda_a Bhat_a``, joins the material part in
  ``Klh = L^T K_l L + diag(0, K_h Lambda)`` and the tangent is one product ``Bh^T Klh Bh``;
  the force is ``Bh^T (L^T q)``.
* ``B``'s first three rows vanish (``u_1 = 0``), its rotation columns hold ``R_e^T`` in their own
  corner's rows only, and ``G``, hence ``R_e G`` and geometric parts (i), (iii), (iv), touch
  only translation columns. Corner 1's translation rows and columns of ``K`` are minus the sum
  of corners 2 and 3's (the forces balance; a common translation changes nothing), so only the
  15 x 15 core is computed (about 3.7e3 multiply-adds instead of 1.2e4 for ``Bh^T Klh Bh``).
"""

import math

import numpy as np

from fem.kernels import configure_cache

configure_cache()                  # before the njit decorators: the source-keyed cache folder

from numba import njit, prange  # noqa: E402

from fem.elements.beam.beam3d_kernel import eta_mu, hat_into, logm  # noqa: E402

_CHUNK = 128           # elements per chunk: prange runs over chunks, each allocates its scratch


@njit(cache=True, nogil=True, inline="always")
def frame_into(x, R, R0, e, Re, xl, RR, M, theta, emu, hv, Lam, G, RG):
    """Element ``e``'s frame and local rotations (also the energy-conserving kernel's).

    Fills the frame ``Re`` (columns e1 e2 e3, :func:`fem.elements.shell.group.element_frames`), the
    local corners ``xl``, the local rotations ``theta_a = log(R_e^T R_a R_0)`` with ``eta``,
    ``mu``, ``|theta_a|^2`` in ``emu[a]`` and ``Lambda_a = jl_inv(theta_a)`` in ``Lam[a]``, the
    spin map ``G`` (:meth:`fem.elements.shell.corot.CorotShellFrame.spin_map`, translation
    columns) and ``R_e G``; ``RR``, ``M``, ``hv`` are scratch.
    """
    a0, a1, a2 = x[e, 1, 0] - x[e, 0, 0], x[e, 1, 1] - x[e, 0, 1], x[e, 1, 2] - x[e, 0, 2]
    b0, b1, b2 = x[e, 2, 0] - x[e, 0, 0], x[e, 2, 1] - x[e, 0, 1], x[e, 2, 2] - x[e, 0, 2]
    na = math.sqrt(a0 * a0 + a1 * a1 + a2 * a2)
    Re[0, 0], Re[1, 0], Re[2, 0] = a0 / na, a1 / na, a2 / na
    n0, n1, n2 = a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0
    nn = math.sqrt(n0 * n0 + n1 * n1 + n2 * n2)
    Re[0, 2], Re[1, 2], Re[2, 2] = n0 / nn, n1 / nn, n2 / nn
    Re[0, 1] = Re[1, 2] * Re[2, 0] - Re[2, 2] * Re[1, 0]
    Re[1, 1] = Re[2, 2] * Re[0, 0] - Re[0, 2] * Re[2, 0]
    Re[2, 1] = Re[0, 2] * Re[1, 0] - Re[1, 2] * Re[0, 0]
    for a in range(3):
        for i in range(3):
            xl[a, i] = Re[0, i] * x[e, a, 0] + Re[1, i] * x[e, a, 1] + Re[2, i] * x[e, a, 2]
    for a in range(3):
        for i in range(3):
            for k in range(3):
                RR[i, k] = (Re[0, i] * R[e, a, 0, k] + Re[1, i] * R[e, a, 1, k]
                            + Re[2, i] * R[e, a, 2, k])
        for i in range(3):
            for j in range(3):
                M[i, j] = RR[i, 0] * R0[e, 0, j] + RR[i, 1] * R0[e, 1, j] \
                    + RR[i, 2] * R0[e, 2, j]
        sn, cs = logm(M, theta[a])
        eta, mu, t2 = eta_mu(theta[a], sn, cs)
        emu[a, 0], emu[a, 1], emu[a, 2] = eta, mu, t2
        hat_into(theta[a], hv)
        for i in range(3):
            for j in range(3):
                s = hv[i, 0] * hv[0, j] + hv[i, 1] * hv[1, j] + hv[i, 2] * hv[2, j]
                Lam[a, i, j] = (1.0 if i == j else 0.0) - 0.5 * hv[i, j] + eta * s
    l, x3, y3 = xl[1, 0], xl[2, 0], xl[2, 1]
    for i in range(3):
        e2i, e3i = Re[i, 1], Re[i, 2]
        G[0, 6 + i] = -(x3 / (y3 * l)) * e3i
        G[0, 12 + i] = (1.0 / y3) * e3i
        G[1, 6 + i] = -(1.0 / l) * e3i
        G[1, 12 + i] = 0.0
        G[2, 6 + i] = (1.0 / l) * e2i
        G[2, 12 + i] = 0.0
        for k in range(3):
            G[k, i] = -(G[k, 6 + i] + G[k, 12 + i])
    for jj in range(9):
        j = 6 * (jj // 3) + jj % 3
        for i in range(3):
            RG[i, j] = Re[i, 0] * G[0, j] + Re[i, 1] * G[1, j] + Re[i, 2] * G[2, j]


@njit(cache=True, fastmath={"contract", "arcp"}, nogil=True, parallel=True)
def kernel(x, R, R0, xl0, Kl, tangent, f, K):
    """Fill ``f (E, 18)`` and (``tangent``) ``K (E, 18, 18)`` of co-rotational shell triangles.

    ``x (E, 3, 3)`` corners relative to corner 1, ``R (E, 3, 3, 3)`` their rotation matrices,
    ``R0 (E, 3, 3)`` reference frames, ``xl0 (E, 3, 3)`` reference local corners, ``Kl (E, 18,
    18)`` local stiffness (:func:`fem.elements.shell.shell_jit.evaluate`).
    """
    E = x.shape[0]
    nchunks = (E + _CHUNK - 1) // _CHUNK
    for chunk in prange(nchunks):
        Re = np.empty((3, 3))            # columns e1 e2 e3
        xl = np.empty((3, 3))
        M = np.empty((3, 3))
        RR = np.empty((3, 3))
        theta = np.empty((3, 3))
        Lam = np.empty((3, 3, 3))
        etamu = np.empty((3, 3))
        th_hat = np.empty((3, 3))
        G = np.zeros((3, 18))            # rotation columns stay zero
        RG = np.zeros((3, 18))
        Bh = np.zeros((18, 18))          # rows 0-2 stay zero; translation rows: zero w-columns
        p = np.empty(18)
        q = np.empty(18)
        qh = np.empty(18)
        n = np.empty((3, 3))
        KlL = np.empty((18, 18))
        Klh = np.empty((18, 18))
        C = np.empty((15, 6))            # Bh's core: rows 3-17, translations of corners 2, 3
        KC = np.empty((15, 6))
        KW = np.empty((15, 9))
        Kh = np.empty((3, 3))
        hv = np.empty((3, 3))
        wv = np.empty(3)
        v = np.empty(3)
        H = np.zeros((3, 18))
        c = np.empty(3)
        dl = np.zeros(18)
        dx3 = np.zeros(18)
        dy3 = np.zeros(18)
        de2 = np.zeros((3, 18))
        de3 = np.zeros((3, 18))
        d01 = np.zeros(18)
        d02 = np.zeros(18)
        for e in range(chunk * _CHUNK, min(E, (chunk + 1) * _CHUNK)):
            frame_into(x, R, R0, e, Re, xl, RR, M, theta, etamu, th_hat, Lam, G, RG)
            l, x3, y3 = xl[1, 0], xl[2, 0], xl[2, 1]
            # --- Bh: translation rows of B, Bhat_a = R_e^T E_a - G in the rotation rows ----
            for a in range(1, 3):
                for jj in range(9):
                    j = 6 * (jj // 3) + jj % 3
                    g0, g1, g2 = G[0, j], G[1, j], G[2, j]
                    Bh[6 * a, j] = xl[a, 1] * g2 - xl[a, 2] * g1
                    Bh[6 * a + 1, j] = xl[a, 2] * g0 - xl[a, 0] * g2
                    Bh[6 * a + 2, j] = xl[a, 0] * g1 - xl[a, 1] * g0
                for i in range(3):
                    for k in range(3):
                        Bh[6 * a + i, 6 * a + k] += Re[k, i]
                        Bh[6 * a + i, k] -= Re[k, i]
            for a in range(3):
                for i in range(3):
                    r = 6 * a + 3 + i
                    for j in range(18):
                        Bh[r, j] = -G[i, j]
                    for k in range(3):
                        Bh[r, 6 * a + 3 + k] += Re[k, i]
            # --- local deformations, forces q = K_l p, f = Bh^T L^T q ----------------------
            for a in range(3):
                for i in range(3):
                    p[6 * a + i] = xl[a, i] - xl0[e, a, i]
                    p[6 * a + 3 + i] = theta[a, i]
            for i in range(18):
                s = 0.0
                for j in range(18):
                    s += Kl[e, i, j] * p[j]
                q[i] = s
            for a in range(3):
                for i in range(3):
                    qh[6 * a + i] = q[6 * a + i]
                    n[a, i] = (Lam[a, 0, i] * q[6 * a + 3] + Lam[a, 1, i] * q[6 * a + 4]
                               + Lam[a, 2, i] * q[6 * a + 5])
                    qh[6 * a + 3 + i] = n[a, i]
            for j in range(18):
                s = 0.0
                for k in range(3, 18):
                    s += Bh[k, j] * qh[k]
                f[e, j] = s
            if not tangent:
                continue

            # --- Klh = L^T K_l L + diag(0, K_h Lambda): material and part (ii) -------------
            for i in range(18):
                for j in range(18):
                    KlL[i, j] = Kl[e, i, j]
                for a in range(3):
                    c0 = 6 * a + 3
                    for j in range(3):
                        KlL[i, c0 + j] = (Kl[e, i, c0] * Lam[a, 0, j]
                                          + Kl[e, i, c0 + 1] * Lam[a, 1, j]
                                          + Kl[e, i, c0 + 2] * Lam[a, 2, j])
            for a in range(3):
                r0 = 6 * a
                for i in range(3):
                    for j in range(18):
                        Klh[r0 + i, j] = KlL[r0 + i, j]
                        Klh[r0 + 3 + i, j] = (Lam[a, 0, i] * KlL[r0 + 3, j]
                                              + Lam[a, 1, i] * KlL[r0 + 4, j]
                                              + Lam[a, 2, i] * KlL[r0 + 5, j])
                th = theta[a]
                eta, muc, t2 = etamu[a, 0], etamu[a, 1], etamu[a, 2]
                m0, m1, m2 = q[r0 + 3], q[r0 + 4], q[r0 + 5]
                tm = th[0] * m0 + th[1] * m1 + th[2] * m2
                v[0], v[1], v[2] = m0, m1, m2
                for i in range(3):
                    wv[i] = th[i] * tm - v[i] * t2
                hat_into(v, hv)
                for i in range(3):
                    for j in range(3):
                        Kh[i, j] = (-0.5 * hv[i, j]
                                    + eta * ((tm if i == j else 0.0) + th[i] * v[j]
                                             - 2 * v[i] * th[j])
                                    + muc * wv[i] * th[j])
                for i in range(3):
                    for j in range(3):
                        Klh[r0 + 3 + i, r0 + 3 + j] += (Kh[i, 0] * Lam[a, 0, j]
                                                        + Kh[i, 1] * Lam[a, 1, j]
                                                        + Kh[i, 2] * Lam[a, 2, j])
            # --- core of K = Bh^T Klh Bh: rows and columns of corners 2, 3 (15 x 15) -------
            # Bh's first three rows vanish; its rotation columns hold R_e^T in the rows of
            # their own corner only; the translation columns of corner 1 are minus the sum of
            # the others' (a common translation changes nothing), as are K's, and corner 1's
            # rows of K are minus the sum of the others' (the forces balance): only the core
            # (translations of corners 2, 3 and all rotations) is computed, the rest by sign.
            for k in range(15):
                for jj in range(6):
                    C[k, jj] = Bh[3 + k, 6 + 6 * (jj // 3) + jj % 3]
            for k in range(15):
                for jj in range(6):
                    KC[k, jj] = 0.0
                for m in range(15):
                    km = Klh[3 + k, 3 + m]
                    for jj in range(6):
                        KC[k, jj] += km * C[m, jj]
                for b in range(3):
                    for j in range(3):
                        KW[k, 3 * b + j] = (Klh[3 + k, 6 * b + 3] * Re[j, 0]
                                            + Klh[3 + k, 6 * b + 4] * Re[j, 1]
                                            + Klh[3 + k, 6 * b + 5] * Re[j, 2])
            Ke = K[e]
            for ii in range(6):
                i = 6 + 6 * (ii // 3) + ii % 3
                for jj in range(6):
                    s = 0.0
                    for k in range(15):
                        s += C[k, ii] * KC[k, jj]
                    Ke[i, 6 + 6 * (jj // 3) + jj % 3] = s
                for jj in range(9):
                    s = 0.0
                    for k in range(15):
                        s += C[k, ii] * KW[k, jj]
                    Ke[i, 3 + 6 * (jj // 3) + jj % 3] = s
            for a in range(3):
                k0 = 6 * a                        # row 6a + 3 of Bh is row 6a of C, KC, KW
                for i in range(3):
                    r = 6 * a + 3 + i
                    for jj in range(6):
                        Ke[r, 6 + 6 * (jj // 3) + jj % 3] = (
                            Re[i, 0] * KC[k0, jj] + Re[i, 1] * KC[k0 + 1, jj]
                            + Re[i, 2] * KC[k0 + 2, jj])
                    for jj in range(9):
                        Ke[r, 3 + 6 * (jj // 3) + jj % 3] = (
                            Re[i, 0] * KW[k0, jj] + Re[i, 1] * KW[k0 + 1, jj]
                            + Re[i, 2] * KW[k0 + 2, jj])

            # --- geometric stiffness (CorotShellFrame.geometric): translation columns ------
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
                    for jj in range(6):
                        j = 6 + 6 * (jj // 3) + jj % 3
                        g0, g1, g2 = RG[0, j], RG[1, j], RG[2, j]
                        Ke[r0, j] -= v[1] * g2 - v[2] * g1
                        Ke[r0 + 1, j] -= v[2] * g0 - v[0] * g2
                        Ke[r0 + 2, j] -= v[0] * g1 - v[1] * g0
            # (iii) the lever arms: G^T sum_a hat(q_u,a) B_a (B_a = Bh's translation rows)
            for jj in range(6):
                j = 6 + 6 * (jj // 3) + jj % 3
                h0 = h1 = h2 = 0.0
                for a in range(1, 3):
                    u0, u1, u2 = q[6 * a], q[6 * a + 1], q[6 * a + 2]
                    b0, b1, b2 = Bh[6 * a, j], Bh[6 * a + 1, j], Bh[6 * a + 2, j]
                    h0 += u1 * b2 - u2 * b1
                    h1 += u2 * b0 - u0 * b2
                    h2 += u0 * b1 - u1 * b0
                H[0, j], H[1, j], H[2, j] = h0, h1, h2
            for ii in range(6):
                i = 6 + 6 * (ii // 3) + ii % 3
                g0, g1, g2 = G[0, i], G[1, i], G[2, i]
                for jj in range(6):
                    j = 6 + 6 * (jj // 3) + jj % 3
                    Ke[i, j] += g0 * H[0, j] + g1 * H[1, j] + g2 * H[2, j]
            # (iv) the change of G: d(G^T c)/dd, c = sum_a q_u,a x u~_a - n_a (g_contract)
            c[0] = c[1] = c[2] = 0.0
            for a in range(3):
                u0, u1, u2 = q[6 * a], q[6 * a + 1], q[6 * a + 2]
                c[0] += u1 * xl[a, 2] - u2 * xl[a, 1] - n[a, 0]
                c[1] += u2 * xl[a, 0] - u0 * xl[a, 2] - n[a, 1]
                c[2] += u0 * xl[a, 1] - u1 * xl[a, 0] - n[a, 2]
            for i in range(3):
                dl[6 + i], dl[12 + i] = Re[i, 0], 0.0
                dx3[6 + i], dx3[12 + i] = 0.0, Re[i, 0]
                dy3[6 + i], dy3[12 + i] = 0.0, Re[i, 1]
            a01 = -x3 / (y3 * l)
            il, iy3 = 1.0 / l, 1.0 / y3
            for jj in range(6):
                j = 6 + 6 * (jj // 3) + jj % 3
                dx3[j] += y3 * G[2, j]
                dy3[j] -= x3 * G[2, j]
                d01[j] = (-dx3[j] / (y3 * l) + x3 / (y3 * y3 * l) * dy3[j]
                          + x3 / (y3 * l * l) * dl[j])
                d02[j] = -dy3[j] / (y3 * y3)
                g0, g1, g2 = RG[0, j], RG[1, j], RG[2, j]
                de2[0, j] = -(Re[1, 1] * g2 - Re[2, 1] * g1)
                de2[1, j] = -(Re[2, 1] * g0 - Re[0, 1] * g2)
                de2[2, j] = -(Re[0, 1] * g1 - Re[1, 1] * g0)
                de3[0, j] = -(Re[1, 2] * g2 - Re[2, 2] * g1)
                de3[1, j] = -(Re[2, 2] * g0 - Re[0, 2] * g2)
                de3[2, j] = -(Re[0, 2] * g1 - Re[1, 2] * g0)
            for i in range(3):
                e2i, e3i = Re[i, 1], Re[i, 2]
                for jj in range(6):
                    j = 6 + 6 * (jj // 3) + jj % 3
                    dll = dl[j] * il * il
                    Ke[6 + i, j] += (c[0] * (e3i * d01[j] + a01 * de3[i, j])
                                     + c[1] * (e3i * dll - il * de3[i, j])
                                     + c[2] * (-e2i * dll + il * de2[i, j]))
                    Ke[12 + i, j] += c[0] * (e3i * d02[j] + iy3 * de3[i, j])

            # --- corner 1's translation columns, then its rows, by sign ----------------------
            for i in range(3, 18):
                for j in range(3):
                    Ke[i, j] = -(Ke[i, 6 + j] + Ke[i, 12 + j])
            for i in range(3):
                for j in range(18):
                    Ke[i, j] = -(Ke[6 + i, j] + Ke[12 + i, j])
