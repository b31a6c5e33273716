"""The numba kernel of :mod:`fem.elements.beam3d_jit` (imported only when it is used).

Module-level functions, so that numba caches the machine code beside this file and later runs
load it instead of compiling (about 17 s).
"""

import math

import numpy as np
from numba import njit, prange

_SMALL = 0.3           # fem.rotations._SMALL: below it the series of eta and mu
_CHUNK = 256           # elements per chunk: prange runs over chunks, each allocates its scratch
_inline = njit(cache=True, nogil=True, inline="always")


@_inline
def series(t2, c0, c1, c2, c3, c4):
    """The polynomial ``c0 + c1 t2 + ... + c4 t2^4`` (Horner)."""
    return (((c4 * t2 + c3) * t2 + c2) * t2 + c1) * t2 + c0


@_inline
def logm(M, out):
    """Rotation vector of the 3x3 rotation ``M`` (fem.rotations.logm)."""
    s0 = 0.5 * (M[2, 1] - M[1, 2])
    s1 = 0.5 * (M[0, 2] - M[2, 0])
    s2 = 0.5 * (M[1, 0] - M[0, 1])
    c = 0.5 * (M[0, 0] + M[1, 1] + M[2, 2] - 1.0)
    if c >= -0.99:
        sn = math.sqrt(s0 * s0 + s1 * s1 + s2 * s2)
        if sn < 1e-8:
            fac = 1.0 + sn * sn / 6
        else:
            fac = math.atan2(sn, c) / sn
        out[0], out[1], out[2] = s0 * fac, s1 * fac, s2 * fac
        return
    # near pi: Shepperd's quaternion, then its rotation vector (fem.rotations)
    tr = M[0, 0] + M[1, 1] + M[2, 2]
    d = (tr, M[0, 0], M[1, 1], M[2, 2])
    k = 0
    for i in range(1, 4):
        if d[i] > d[k]:
            k = i
    if k == 0:
        s = math.sqrt(max(1 + tr, 0.0)) * 2
        w, qx, qy, qz = s / 4, (M[2, 1] - M[1, 2]) / s, (M[0, 2] - M[2, 0]) / s, \
            (M[1, 0] - M[0, 1]) / s
    elif k == 1:
        s = math.sqrt(max(1 + M[0, 0] - M[1, 1] - M[2, 2], 0.0)) * 2
        w, qx, qy, qz = (M[2, 1] - M[1, 2]) / s, s / 4, (M[0, 1] + M[1, 0]) / s, \
            (M[0, 2] + M[2, 0]) / s
    elif k == 2:
        s = math.sqrt(max(1 - M[0, 0] + M[1, 1] - M[2, 2], 0.0)) * 2
        w, qx, qy, qz = (M[0, 2] - M[2, 0]) / s, (M[0, 1] + M[1, 0]) / s, s / 4, \
            (M[1, 2] + M[2, 1]) / s
    else:
        s = math.sqrt(max(1 - M[0, 0] - M[1, 1] + M[2, 2], 0.0)) * 2
        w, qx, qy, qz = (M[1, 0] - M[0, 1]) / s, (M[0, 2] + M[2, 0]) / s, \
            (M[1, 2] + M[2, 1]) / s, s / 4
    if w < 0:
        w, qx, qy, qz = -w, -qx, -qy, -qz
    n = math.sqrt(w * w + qx * qx + qy * qy + qz * qz)
    w, qx, qy, qz = w / n, qx / n, qy / n, qz / n
    sv = math.sqrt(qx * qx + qy * qy + qz * qz)
    if sv < 1e-12:
        scale = 2.0 / (w if w != 0 else 1.0)
    else:
        scale = 2 * math.atan2(sv, w) / sv
    out[0], out[1], out[2] = qx * scale, qy * scale, qz * scale


@_inline
def eta_mu(th):
    """``eta``, ``mu`` of fem.rotations._eta_mu and ``|th|^2`` of a rotation vector ``th``."""
    t2 = th[0] * th[0] + th[1] * th[1] + th[2] * th[2]
    t = math.sqrt(t2)
    if t < _SMALL:
        eta = series(t2, 1 / 12, 1 / 720, 1 / 30240, 1 / 1209600, 1 / 47900160)
        mu = series(t2, 1 / 360, 1 / 7560, 1 / 201600, 1 / 5987520, 691 / 130767436800)
    else:
        tn = math.tan(t / 2)
        eta = 1 / t2 - 1 / (2 * t * tn)
        sh = math.sin(t / 2)
        mu = -2 / t2**2 + 1 / (2 * t2 * t * tn) + 1 / (4 * t2 * sh * sh)
    return eta, mu, t2


@_inline
def hat_into(v, out):
    """Write the skew matrix of ``v`` into ``out``."""
    out[0, 0], out[0, 1], out[0, 2] = 0.0, -v[2], v[1]
    out[1, 0], out[1, 1], out[1, 2] = v[2], 0.0, -v[0]
    out[2, 0], out[2, 1], out[2, 2] = -v[1], v[0], 0.0


@njit(cache=True, fastmath={"contract", "arcp"}, nogil=True, parallel=True)
def kernel(x, R, E0, l0, A, S, hk, hi, hj, hc, coef, ij, na, tangent, f, K):
    """Fill ``f (E, 12)`` and (``tangent``) ``K (E, 12, 12)`` of a batch of 3D beams.

    Arguments as prepared by :func:`fem.elements.beam3d_jit.evaluate` (``H0`` as its nonzeros
    ``hk, hi, hj, hc``).
    """
    nh = len(hk)
    E = x.shape[0]
    nchunks = (E + _CHUNK - 1) // _CHUNK
    for chunk in prange(nchunks):
        T = np.empty((2, 3, 3))
        M = np.empty((3, 3))
        Rr = np.empty((3, 3))
        r1, r2, r3, p = np.empty(3), np.empty(3), np.empty(3), np.empty(3)
        t = np.empty((2, 3))
        theta = np.empty((2, 3))
        Lam = np.empty((2, 3, 3))
        th_hat = np.empty((3, 3))
        G = np.zeros((3, 12))
        Bhat = np.empty((2, 3, 12))
        Bh = np.empty((7, 12))
        qh = np.empty(7)
        kbL = np.empty((7, 7))
        kbh = np.empty((7, 7))
        v = np.empty(7)
        eps = np.empty(6)
        D = np.empty((6, 7))
        sig = np.empty(6)
        q = np.empty(7)
        SD = np.empty((6, 7))
        kb = np.empty((7, 7))
        kbB = np.empty((7, 9))
        etamu = np.empty((2, 3))
        Bhc = np.empty((7, 9))
        Kc = np.empty(9)
        m = np.empty((2, 3))
        mu = np.empty((2, 3))
        Kh = np.empty((3, 3))
        W = np.empty((3, 12))
        hv = np.empty((3, 3))
        Ldl = np.empty(12)
        Ldp = np.zeros((3, 12))
        hat_t = np.empty((2, 3, 3))
        Lr2, Lr3 = np.empty((3, 12)), np.empty((3, 12))
        Lp1, Lp2, Lc = np.empty(12), np.empty(12), np.empty(12)
        Ma, M3, M2 = np.empty((3, 12)), np.empty((3, 12)), np.empty((3, 12))
        Mb = np.empty((2, 3, 12))
        hr3 = np.empty((3, 3))
        tr3 = np.empty(3)
        wv = np.empty(3)
        for e in range(chunk * _CHUNK, min(E, (chunk + 1) * _CHUNK)):
            # --- frame (frames3d.CorotFrame3D._geometry) ------------------------------
            for a in range(2):
                for i in range(3):
                    for j in range(3):
                        s = 0.0
                        for k in range(3):
                            s += R[e, a, i, k] * E0[e, k, j]
                        T[a, i, j] = s
                    t[a, i] = T[a, i, 1]
            l2 = 0.0
            for i in range(3):
                r1[i] = x[e, 1, i] - x[e, 0, i]
                l2 += r1[i] * r1[i]
                p[i] = 0.5 * (t[0, i] + t[1, i])
            l = math.sqrt(l2)
            for i in range(3):
                r1[i] /= l
            r3[0] = r1[1] * p[2] - r1[2] * p[1]
            r3[1] = r1[2] * p[0] - r1[0] * p[2]
            r3[2] = r1[0] * p[1] - r1[1] * p[0]
            n3 = math.sqrt(r3[0] ** 2 + r3[1] ** 2 + r3[2] ** 2)
            for i in range(3):
                r3[i] /= n3
            r2[0] = r3[1] * r1[2] - r3[2] * r1[1]
            r2[1] = r3[2] * r1[0] - r3[0] * r1[2]
            r2[2] = r3[0] * r1[1] - r3[1] * r1[0]
            p1 = p[0] * r1[0] + p[1] * r1[1] + p[2] * r1[2]
            p2 = p[0] * r2[0] + p[1] * r2[1] + p[2] * r2[2]
            for i in range(3):
                Rr[i, 0], Rr[i, 1], Rr[i, 2] = r1[i], r2[i], r3[i]
            for a in range(2):
                for i in range(3):              # M = R_r^T T_a
                    for j in range(3):
                        M[i, j] = (Rr[0, i] * T[a, 0, j] + Rr[1, i] * T[a, 1, j]
                                   + Rr[2, i] * T[a, 2, j])
                logm(M, theta[a])
                eta, muc, t2 = eta_mu(theta[a])
                etamu[a, 0], etamu[a, 1], etamu[a, 2] = eta, muc, t2
                hat_into(theta[a], th_hat)
                for i in range(3):              # jl_inv = I - hat/2 + eta hat^2
                    for j in range(3):
                        s = 0.0
                        for k in range(3):
                            s += th_hat[i, k] * th_hat[k, j]
                        Lam[a, i, j] = (1.0 if i == j else 0.0) - 0.5 * th_hat[i, j] + eta * s
            c = p1 / (l * p2)
            for i in range(3):
                G[0, i], G[0, 6 + i] = c * r3[i], -c * r3[i]
                G[1, i], G[1, 6 + i] = r3[i] / l, -r3[i] / l
                G[2, i], G[2, 6 + i] = -r2[i] / l, r2[i] / l
            for a in range(2):
                ta = t[a]
                G[0, 3 + 6 * a] = (ta[1] * r3[2] - ta[2] * r3[1]) / (2 * p2)
                G[0, 4 + 6 * a] = (ta[2] * r3[0] - ta[0] * r3[2]) / (2 * p2)
                G[0, 5 + 6 * a] = (ta[0] * r3[1] - ta[1] * r3[0]) / (2 * p2)
            for a in range(2):
                for i in range(3):
                    for j in range(12):
                        Bhat[a, i, j] = -G[i, j]
                for i in range(3):                  # + R_r^T in the spin columns of node a
                    Bhat[a, 0, 3 + 6 * a + i] += r1[i]
                    Bhat[a, 1, 3 + 6 * a + i] += r2[i]
                    Bhat[a, 2, 3 + 6 * a + i] += r3[i]
            # B = L Bh with L = diag(1, Lambda_p, Lambda_q): Bh holds the chord row and
            # Bhat_a; the kernel works in this basis and never forms B
            for j in range(12):
                Bh[0, j] = 0.0
            for i in range(3):
                Bh[0, i], Bh[0, 6 + i] = -r1[i], r1[i]
            for a in range(2):
                for i in range(3):
                    for j in range(12):
                        Bh[1 + 3 * a + i, j] = Bhat[a, i, j]
            v[0] = l - l0[e]
            for i in range(3):
                v[1 + i], v[4 + i] = theta[0, i], theta[1, i]

            # --- basic response (beam_basic.BasicBeam) --------------------------------
            le = l0[e]
            for k in range(6):
                s = 0.0
                for b in range(7):
                    s += A[e, k, b] * v[b]
                    D[k, b] = A[e, k, b]
                eps[k] = s
            for r in range(nh):                 # the second-order strains, H0 sparse
                hr, hs, ht, hcr = hk[r], hi[r], hj[r], le * hc[r]
                D[hr, hs] += hcr * v[ht]
                eps[hr] += 0.5 * hcr * v[hs] * v[ht]
            for r in range(na):
                ca, i, j = coef[r, e], ij[r, 0], ij[r, 1]
                sv = v[i] + v[j]
                eps[0] += le * ca * sv * sv
                d = 2 * le * ca * sv
                D[0, i] += d
                D[0, j] += d
            for k in range(6):
                s = 0.0
                for j in range(6):
                    s += S[e, k, j] * eps[j]
                sig[k] = s
            for b in range(7):
                s = 0.0
                for k in range(6):
                    s += D[k, b] * sig[k]
                q[b] = s
            qh[0] = q[0]                        # L^T q: axial force, mu_a = Lambda_a^T m_a
            for a in range(2):
                for i in range(3):
                    m[a, i] = q[1 + 3 * a + i]
                for i in range(3):
                    mu[a, i] = Lam[a, 0, i] * m[a, 0] + Lam[a, 1, i] * m[a, 1] \
                        + Lam[a, 2, i] * m[a, 2]
                    qh[1 + 3 * a + i] = mu[a, i]
            for j in range(12):                 # f = B^T q = Bh^T L^T q
                s = 0.0
                for b in range(7):
                    s += Bh[b, j] * qh[b]
                f[e, j] = s
            if not tangent:
                continue

            # --- material and local geometric: B^T (D^T S D + sum sigma_k H_k) B -------
            for k in range(6):
                for b in range(7):
                    s = 0.0
                    for j in range(6):
                        s += S[e, k, j] * D[j, b]
                    SD[k, b] = s
            for a in range(7):
                for b in range(7):
                    s = 0.0
                    for k in range(6):
                        s += D[k, a] * SD[k, b]
                    kb[a, b] = s
            for r in range(nh):
                kb[hi[r], hj[r]] += le * sig[hk[r]] * hc[r]
            for r in range(na):
                g = 2 * le * coef[r, e] * sig[0]
                i, j = ij[r, 0], ij[r, 1]
                kb[i, i] += g
                kb[i, j] += g
                kb[j, i] += g
                kb[j, j] += g
            # kbh = L^T kb L + diag(0, Kh_p Lambda_p, Kh_q Lambda_q): part 3 of the
            # geometric stiffness, Bhat_a^T Kh(theta_a, m_a) Lambda_a Bhat_a, joins the
            # material part in the hat basis
            for i in range(7):                  # kbL = kb L
                kbL[i, 0] = kb[i, 0]
                for a in range(2):
                    for j in range(3):
                        kbL[i, 1 + 3 * a + j] = (kb[i, 1 + 3 * a] * Lam[a, 0, j]
                                                 + kb[i, 2 + 3 * a] * Lam[a, 1, j]
                                                 + kb[i, 3 + 3 * a] * Lam[a, 2, j])
            for j in range(7):                  # kbh = L^T kbL
                kbh[0, j] = kbL[0, j]
                for a in range(2):
                    for i in range(3):
                        kbh[1 + 3 * a + i, j] = (Lam[a, 0, i] * kbL[1 + 3 * a, j]
                                                 + Lam[a, 1, i] * kbL[2 + 3 * a, j]
                                                 + Lam[a, 2, i] * kbL[3 + 3 * a, j])
            for a in range(2):
                th = theta[a]
                eta, muc, t2 = etamu[a, 0], etamu[a, 1], etamu[a, 2]
                tm = th[0] * m[a, 0] + th[1] * m[a, 1] + th[2] * m[a, 2]
                for i in range(3):
                    wv[i] = th[i] * tm - m[a, i] * t2
                hat_into(m[a], hv)
                for i in range(3):
                    for j in range(3):
                        Kh[i, j] = (-0.5 * hv[i, j]
                                    + eta * ((tm if i == j else 0.0) + th[i] * m[a, j]
                                             - 2 * m[a, i] * th[j])
                                    + muc * wv[i] * th[j])
                for i in range(3):
                    for j in range(3):
                        kbh[1 + 3 * a + i, 1 + 3 * a + j] += (
                            Kh[i, 0] * Lam[a, 0, j] + Kh[i, 1] * Lam[a, 1, j]
                            + Kh[i, 2] * Lam[a, 2, j])
            # Only the 9 x 9 core (x_p, w_p, w_q) is computed: a common translation of
            # both nodes changes nothing, so K's x_q columns are minus its x_p columns, and
            # the forces on the two nodes balance, so its x_q rows are minus its x_p rows
            for b in range(7):                  # Bhc: the core columns of Bh, contiguous
                for jj in range(9):
                    Bhc[b, jj] = Bh[b, jj if jj < 6 else jj + 3]
            for a in range(7):                  # kbB = kbh Bhc (inner loops contiguous)
                for jj in range(9):
                    kbB[a, jj] = 0.0
                for b in range(7):
                    kab = kbh[a, b]
                    for jj in range(9):
                        kbB[a, jj] += kab * Bhc[b, jj]
            Ke = K[e]
            for ii in range(9):                 # Ke core = Bhc^T kbB
                for jj in range(9):
                    Kc[jj] = 0.0
                for b in range(7):
                    bi = Bhc[b, ii]
                    for jj in range(9):
                        Kc[jj] += bi * kbB[b, jj]
                i = ii if ii < 6 else ii + 3
                for jj in range(6):
                    Ke[i, jj] = Kc[jj]
                for jj in range(6, 9):
                    Ke[i, jj + 3] = Kc[jj]

            # --- the rest of the geometric stiffness (CorotFrame3D.geometric) -----------
            # 1. rotating chord under the axial force
            Nl = q[0] / l
            for i in range(3):
                for j in range(3):
                    Ke[i, j] += Nl * ((1.0 if i == j else 0.0) - r1[i] * r1[j])
            # 2. the frame rotation carries the nodal moments: -hat(R_r mu_a) R_r G
            for i in range(3):                  # W = R_r G
                for jj in range(9):
                    j = jj if jj < 6 else jj + 3
                    W[i, j] = r1[i] * G[0, j] + r2[i] * G[1, j] + r3[i] * G[2, j]
            for a in range(2):
                for i in range(3):
                    wv[i] = r1[i] * mu[a, 0] + r2[i] * mu[a, 1] + r3[i] * mu[a, 2]
                hat_into(wv, hv)
                for i in range(3):
                    for jj in range(9):
                        j = jj if jj < 6 else jj + 3
                        Ke[3 + 6 * a + i, j] -= hv[i, 0] * W[0, j] + hv[i, 1] * W[1, j] \
                            + hv[i, 2] * W[2, j]
            # 3. (change of jl_inv^T) is in kbh above
            # 4. change of G: -sum_k c_k dG_k, c = mu_p + mu_q (g_contract, _g_parts)
            c0 = mu[0, 0] + mu[1, 0]
            c1 = mu[0, 1] + mu[1, 1]
            c2 = mu[0, 2] + mu[1, 2]
            il, ilp2, i2p2 = 1.0 / l, 1.0 / (l * p2), 1.0 / (2 * p2)
            for j in range(12):
                Ldl[j] = 0.0
            for i in range(3):
                Ldl[i] = -r1[i]
            for a in range(2):
                hat_into(t[a], hat_t[a])
                for i in range(3):
                    for j in range(3):
                        Ldp[i, 3 + 6 * a + j] = -0.5 * hat_t[a, i, j]
            for jj in range(9):
                j = jj if jj < 6 else jj + 3
                for i in range(3):
                    Lr2[i, j] = -r1[i] * G[2, j] + r3[i] * G[0, j]
                    Lr3[i, j] = r1[i] * G[1, j] - r2[i] * G[0, j]
                Lp1[j] = r1[0] * Ldp[0, j] + r1[1] * Ldp[1, j] + r1[2] * Ldp[2, j] \
                    + p2 * G[2, j]
                Lp2[j] = r2[0] * Ldp[0, j] + r2[1] * Ldp[1, j] + r2[2] * Ldp[2, j] \
                    - p1 * G[2, j]
                Lc[j] = (Lp1[j] - p1 * il * Ldl[j] - p1 / p2 * Lp2[j]) * ilp2
                for i in range(3):
                    M3[i, j] = (Lr3[i, j] - r3[i] * Ldl[j] * il) * il
                    M2[i, j] = (Lr2[i, j] - r2[i] * Ldl[j] * il) * il
                    Ma[i, j] = r3[i] * Lc[j] + c * Lr3[i, j]
                    Ke[i, j] -= c0 * Ma[i, j] + c1 * M3[i, j] - c2 * M2[i, j]
            hat_into(r3, hr3)
            for a in range(2):
                ta = t[a]
                tr3[0] = ta[1] * r3[2] - ta[2] * r3[1]
                tr3[1] = ta[2] * r3[0] - ta[0] * r3[2]
                tr3[2] = ta[0] * r3[1] - ta[1] * r3[0]
                for i in range(3):
                    for jj in range(9):
                        j = jj if jj < 6 else jj + 3
                        Mb[a, i, j] = ((hat_t[a, i, 0] * Lr3[0, j] + hat_t[a, i, 1] * Lr3[1, j]
                                        + hat_t[a, i, 2] * Lr3[2, j])
                                       - tr3[i] * Lp2[j] / p2) * i2p2
                for i in range(3):
                    for j in range(3):
                        Mb[a, i, 3 + 6 * a + j] += (hr3[i, 0] * hat_t[a, 0, j]
                                                    + hr3[i, 1] * hat_t[a, 1, j]
                                                    + hr3[i, 2] * hat_t[a, 2, j]) * i2p2
                for i in range(3):
                    for jj in range(9):
                        j = jj if jj < 6 else jj + 3
                        Ke[3 + 6 * a + i, j] -= c0 * Mb[a, i, j]
            # the x_q columns and rows by sign
            for ii in range(9):
                i = ii if ii < 6 else ii + 3
                for j in range(3):
                    Ke[i, 6 + j] = -Ke[i, j]
            for i in range(3):
                for j in range(12):
                    Ke[6 + i, j] = -Ke[i, j]
