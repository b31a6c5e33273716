"""The numba kernel of :mod:`fem.elements.beam.beam3d_jit` (imported only when it is used).

Module-level functions, so that numba caches the machine code beside this file and later runs
load it instead of compiling (about 17 s).
"""

import math

import numpy as np

from fem.kernels import configure_cache

configure_cache()                  # before the njit decorators: the source-keyed cache folder

from numba import njit, prange  # noqa: E402

_SMALL = 0.3           # fem.rotations._SMALL: below it the series of eta and mu
_CHUNK = 256           # elements per chunk: prange runs over chunks, each allocates its scratch
_inline = njit(cache=True, nogil=True, inline="always")

#: Meijaard's second-order strains ``eps_k += l0 c v_i v_j`` as ``(k, i, j, c)``: a copy of
#: :data:`fem.elements.beam.basic._QUADRATIC_3D` (v = u, px, py, pz, qx, qy, qz), compiled into
#: the kernel as constants; the wrapper checks that a group's ``H0`` is this table's.
H_TERMS = (
    (0, 2, 2, 2 / 30), (0, 2, 5, -1 / 30), (0, 5, 5, 2 / 30),
    (0, 3, 3, 2 / 30), (0, 3, 6, -1 / 30), (0, 6, 6, 2 / 30),
    (1, 2, 6, 1 / 2), (1, 3, 5, -1 / 2),
    (2, 1, 3, -1 / 3), (2, 4, 6, 1 / 6), (2, 4, 3, -1 / 6), (2, 1, 6, -1 / 6),
    (3, 4, 6, 1 / 3), (3, 4, 3, 1 / 6), (3, 1, 6, 1 / 6), (3, 1, 3, -1 / 6),
    (4, 1, 2, 1 / 3), (4, 4, 5, -1 / 6), (4, 4, 2, 1 / 6), (4, 1, 5, 1 / 6),
    (5, 4, 5, -1 / 3), (5, 4, 2, -1 / 6), (5, 1, 5, -1 / 6), (5, 1, 2, 1 / 6),
)


@_inline
def series(t2, c0, c1, c2, c3, c4):
    """The polynomial ``c0 + c1 t2 + ... + c4 t2^4`` (Horner)."""
    return (((c4 * t2 + c3) * t2 + c2) * t2 + c1) * t2 + c0


@_inline
def logm(M, out):
    """Rotation vector of the 3x3 rotation ``M`` (fem.rotations.logm) into ``out``.

    Returns ``sin t``, ``cos t`` of its angle ``t`` from the skew part and the trace, or
    ``-1, -1`` near pi (the quaternion route).
    """
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
        return sn, c
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
    return -1.0, -1.0


@_inline
def eta_mu(th, sn, cs):
    """``eta``, ``mu`` of fem.rotations._eta_mu and ``|th|^2`` of a rotation vector ``th``.

    ``sn, cs``: sine and cosine of its angle from :func:`logm`, which give ``tan(t/2) = sin t
    / (1 + cos t)`` and ``sin(t/2)^2 = (1 - cos t)/2`` without two more transcendental calls
    (``cos t >= -0.99`` there); ``sn < 0``: from the angle.
    """
    t2 = th[0] * th[0] + th[1] * th[1] + th[2] * th[2]
    t = math.sqrt(t2)
    if t < _SMALL:
        eta = series(t2, 1 / 12, 1 / 720, 1 / 30240, 1 / 1209600, 1 / 47900160)
        mu = series(t2, 1 / 360, 1 / 7560, 1 / 201600, 1 / 5987520, 691 / 130767436800)
    else:
        if sn >= 0:
            tn = sn / (1 + cs)
            sh2 = 0.5 * (1 - cs)
        else:
            tn = math.tan(t / 2)
            sh = math.sin(t / 2)
            sh2 = sh * sh
        eta = 1 / t2 - 1 / (2 * t * tn)
        mu = -2 / t2**2 + 1 / (2 * t2 * t * tn) + 1 / (4 * t2 * sh2)
    return eta, mu, t2


@_inline
def hat_into(v, out):
    """Write the skew matrix of ``v`` into ``out``."""
    out[0, 0], out[0, 1], out[0, 2] = 0.0, -v[2], v[1]
    out[1, 0], out[1, 1], out[1, 2] = v[2], 0.0, -v[0]
    out[2, 0], out[2, 1], out[2, 2] = -v[1], v[0], 0.0


@_inline
def z_transpose(w, out, c, il, g):
    """``out = Z^T w``: a 7-vector of the hat basis to the 9 core DOFs, frame components.

    ``Z`` is ``Bh`` (the chord row and ``Bhat_a = R_r^T E_a - G``) on the core DOFs ``(x_p, w_p,
    w_q)`` in frame components, where ``G`` has few nonzeros: its rows in frame components are
    ``(c e3, g_p, -c e3, g_q)``, ``(e3/l, 0, -e3/l, 0)``, ``(-e2/l, 0, e2/l, 0)`` with
    ``g_a = (t_a . r2, -t_a . r1, 0)/(2 p2)`` (``g[a]`` its two nonzeros), ``c = p1/(l p2)``,
    ``il = 1/l``.
    """
    s = w[1] + w[4]
    out[0] = -w[0]
    out[1] = (w[3] + w[6]) * il
    out[2] = -c * s - (w[2] + w[5]) * il
    out[3] = w[1] - g[0, 0] * s
    out[4] = w[2] - g[0, 1] * s
    out[5] = w[3]
    out[6] = w[4] - g[1, 0] * s
    out[7] = w[5] - g[1, 1] * s
    out[8] = w[6]


@njit(cache=True, nogil=True, inline="always")
def quat_matrix_into(quat, n, out):
    """Rotation matrix of node ``n``'s quaternion (fem.rotations.quat_to_matrix) into ``out``."""
    w, x, y, z = quat[n, 0], quat[n, 1], quat[n, 2], quat[n, 3]
    x2, y2, z2 = 2 * x, 2 * y, 2 * z
    xx, yy, zz = x * x2, y * y2, z * z2
    xy, xz, yz = x * y2, x * z2, y * z2
    wx, wy, wz = w * x2, w * y2, w * z2
    out[0, 0], out[0, 1], out[0, 2] = 1 - yy - zz, xy - wz, xz + wy
    out[1, 0], out[1, 1], out[1, 2] = xy + wz, 1 - xx - zz, yz - wx
    out[2, 0], out[2, 1], out[2, 2] = xz - wy, yz + wx, 1 - xx - yy


@njit(cache=True, nogil=True, inline="always")
def _strain_into(v, le, e, coef, ij, eps, D):
    """Meijaard's strains ``eps (6)`` of ``v (7)`` and their Jacobian ``D (6, 7)``.

    :meth:`~fem.elements.beam.basic.BasicBeam.strain` and ``strain_jacobian`` of the
    co-rotational 3D beam: ``A`` (checked by :func:`fem.elements.beam.beam3d_jit.prepare`), the
    second-order strains ``le c v_i v_j`` of ``H_TERMS`` and the shear-arch terms ``coef``.
    """
    for k in range(6):
        for b in range(7):
            D[k, b] = 0.0
    D[0, 0] = 1.0
    D[1, 1], D[1, 4] = -le, le
    D[2, 2], D[3, 5], D[4, 3], D[5, 6] = -le, le, -le, le
    eps[0] = v[0]
    eps[1] = le * v[4] - le * v[1]
    eps[2] = -le * v[2]
    eps[3] = le * v[5]
    eps[4] = -le * v[3]
    eps[5] = le * v[6]
    for term in H_TERMS:
        k, i, j, hcr = term[0], term[1], term[2], le * term[3]
        D[k, i] += hcr * v[j]
        D[k, j] += hcr * v[i]
        eps[k] += hcr * v[i] * v[j]
    for r in range(coef.shape[0]):
        ca, i, j = coef[r, e], ij[r, 0], ij[r, 1]
        sv = v[i] + v[j]
        eps[0] += le * ca * sv * sv
        d = 2 * le * ca * sv
        D[0, i] += d
        D[0, j] += d


@njit(cache=True, fastmath={"contract", "arcp"}, nogil=True, parallel=True)
def kernel(quat, u, conn, chord0, moving, E0, l0, Sc, coef, ij, tangent, f, K):
    """Fill ``f (E, 12)`` and (``tangent``) ``K (E, 12, 12)`` of a batch of 3D beams.

    Arguments as prepared by :func:`fem.elements.beam.beam3d_jit.evaluate`: nodal quaternions ``quat
    (n, 4)`` and displacements ``u (n, 3)``, ``conn (E, 2)``, the chord ``chord0 (E, 3)``
    (reference; the current one if not ``moving``), ``E0 (E, 3, 3)``, ``l0 (E,)``, the nonzeros
    ``Sc (E, 8)`` of ``S``, the shear-arch terms ``coef (na, E)``, ``ij (na, 2)``; ``H0`` is
    :data:`H_TERMS`.

    Everything past the basic response is computed in the components of the co-rotated frame
    ``R_r``, where the frame's matrices are sparse (``e1, e2, e3`` for ``r1, r2, r3``), as the
    9 x 9 core of the tangent on ``(x_p, w_p, w_q)``; it is turned to global axes block by
    block at the end, ``R_r K_IJ R_r^T``.
    """
    E = l0.shape[0]
    nchunks = (E + _CHUNK - 1) // _CHUNK
    for c in prange(nchunks):
        chunk(c * _CHUNK, min(E, (c + 1) * _CHUNK), quat, u, conn, chord0, moving, E0, l0,
              Sc, coef, ij, tangent, f, K)


@njit(cache=True, fastmath={"contract", "arcp"}, nogil=True)
def chunk(lo, hi, quat, u, conn, chord0, moving, E0, l0, Sc, coef, ij, tangent, f, K):
    """Elements ``lo`` to ``hi`` of :func:`kernel` (same arguments), one thread.

    :func:`kernel` runs it on chunks of :data:`_CHUNK` elements in parallel; the compiled
    static increment (:mod:`fem.analysis.spatial_static_kernel`) on every element at once.
    """
    na = coef.shape[0]
    Rn = np.empty((3, 3))
    T = np.empty((2, 3, 3))
    Rr = np.empty((3, 3))
    M = np.empty((3, 3))
    theta = np.empty((2, 3))
    tau = np.empty((2, 3))                   # t_a in frame components
    Lam = np.empty((2, 3, 3))
    etamu = np.empty((2, 3))
    g = np.empty((2, 2))
    v = np.empty(7)
    eps = np.empty(6)
    D = np.empty((6, 7))
    sig = np.empty(6)
    q = np.empty(7)
    qh = np.empty(7)
    m = np.empty((2, 3))
    mu = np.empty((2, 3))
    fl = np.empty(9)
    SD = np.empty((6, 7))
    kb = np.empty((7, 7))
    kbL = np.empty((7, 7))
    kbh = np.empty((7, 7))
    Kh = np.empty((3, 3))
    U = np.empty((9, 7))
    Kl = np.empty((9, 9))
    F = np.zeros((7, 9))                     # linear forms of the core DOFs (geometric)
    tmp = np.empty((3, 3))
    for e in range(lo, hi):
        # --- frame (frames3d.CorotFrame3D._geometry) ------------------------------
        n0, n1 = conn[e, 0], conn[e, 1]
        for a in range(2):                  # T_a = R_a E0, R_a = quat_to_matrix
            quat_matrix_into(quat, n0 if a == 0 else n1, Rn)
            for i in range(3):
                for j in range(3):
                    T[a, i, j] = (Rn[i, 0] * E0[e, 0, j] + Rn[i, 1] * E0[e, 1, j]
                                  + Rn[i, 2] * E0[e, 2, j])
        if moving:
            d0 = chord0[e, 0] + (u[n1, 0] - u[n0, 0])
            d1 = chord0[e, 1] + (u[n1, 1] - u[n0, 1])
            d2 = chord0[e, 2] + (u[n1, 2] - u[n0, 2])
        else:
            d0, d1, d2 = chord0[e, 0], chord0[e, 1], chord0[e, 2]
        l = math.sqrt(d0 * d0 + d1 * d1 + d2 * d2)
        r10, r11, r12 = d0 / l, d1 / l, d2 / l
        pv0 = 0.5 * (T[0, 0, 1] + T[1, 0, 1])
        pv1 = 0.5 * (T[0, 1, 1] + T[1, 1, 1])
        pv2 = 0.5 * (T[0, 2, 1] + T[1, 2, 1])
        r30 = r11 * pv2 - r12 * pv1
        r31 = r12 * pv0 - r10 * pv2
        r32 = r10 * pv1 - r11 * pv0
        n3 = math.sqrt(r30 * r30 + r31 * r31 + r32 * r32)
        r30, r31, r32 = r30 / n3, r31 / n3, r32 / n3
        r20 = r31 * r12 - r32 * r11
        r21 = r32 * r10 - r30 * r12
        r22 = r30 * r11 - r31 * r10
        p1 = pv0 * r10 + pv1 * r11 + pv2 * r12
        p2 = pv0 * r20 + pv1 * r21 + pv2 * r22
        Rr[0, 0], Rr[0, 1], Rr[0, 2] = r10, r20, r30
        Rr[1, 0], Rr[1, 1], Rr[1, 2] = r11, r21, r31
        Rr[2, 0], Rr[2, 1], Rr[2, 2] = r12, r22, r32
        for a in range(2):
            for i in range(3):              # M = R_r^T T_a
                for j in range(3):
                    M[i, j] = (Rr[0, i] * T[a, 0, j] + Rr[1, i] * T[a, 1, j]
                               + Rr[2, i] * T[a, 2, j])
                tau[a, i] = M[i, 1]
            th = theta[a]
            sn, cs = logm(M, th)
            eta, muc, t2 = eta_mu(th, sn, cs)
            etamu[a, 0], etamu[a, 1], etamu[a, 2] = eta, muc, t2
            # jl_inv = I - hat/2 + eta hat^2, hat^2 = theta theta^T - |theta|^2 I
            dg = 1.0 - eta * t2
            for i in range(3):
                for j in range(3):
                    Lam[a, i, j] = eta * th[i] * th[j]
                Lam[a, i, i] += dg
            Lam[a, 0, 1] += 0.5 * th[2]
            Lam[a, 0, 2] -= 0.5 * th[1]
            Lam[a, 1, 0] -= 0.5 * th[2]
            Lam[a, 1, 2] += 0.5 * th[0]
            Lam[a, 2, 0] += 0.5 * th[1]
            Lam[a, 2, 1] -= 0.5 * th[0]
        il = 1.0 / l
        c = p1 / (l * p2)
        h2 = 0.5 / p2
        for a in range(2):                  # G's spin columns: (t_a x r3)/(2 p2), frame
            g[a, 0] = tau[a, 1] * h2
            g[a, 1] = -tau[a, 0] * h2
        le = l0[e]
        v[0] = l - le
        for i in range(3):
            v[1 + i], v[4 + i] = theta[0, i], theta[1, i]

        # --- basic response (beam_basic.BasicBeam) --------------------------------
        _strain_into(v, le, e, coef, ij, eps, D)   # Meijaard's strains and Jacobian
        # S: diagonal axial and torsion, two symmetric 2 x 2 bending blocks
        s00, s11 = Sc[e, 0], Sc[e, 1]
        s22, s23, s33 = Sc[e, 2], Sc[e, 3], Sc[e, 4]
        s44, s45, s55 = Sc[e, 5], Sc[e, 6], Sc[e, 7]
        sig[0] = s00 * eps[0]
        sig[1] = s11 * eps[1]
        sig[2] = s22 * eps[2] + s23 * eps[3]
        sig[3] = s23 * eps[2] + s33 * eps[3]
        sig[4] = s44 * eps[4] + s45 * eps[5]
        sig[5] = s45 * eps[4] + s55 * eps[5]
        for b in range(7):
            q[b] = (D[0, b] * sig[0] + D[1, b] * sig[1] + D[2, b] * sig[2]
                    + D[3, b] * sig[3] + D[4, b] * sig[4] + D[5, b] * sig[5])
        qh[0] = q[0]                        # L^T q: axial force, mu_a = Lambda_a^T m_a
        for a in range(2):
            for i in range(3):
                m[a, i] = q[1 + 3 * a + i]
            for i in range(3):
                mu[a, i] = Lam[a, 0, i] * m[a, 0] + Lam[a, 1, i] * m[a, 1] \
                    + Lam[a, 2, i] * m[a, 2]
                qh[1 + 3 * a + i] = mu[a, i]
        # f = B^T q = Bh^T L^T q: Z^T qh in frame components, turned to global axes
        z_transpose(qh, fl, c, il, g)
        for i in range(3):
            fx = Rr[i, 0] * fl[0] + Rr[i, 1] * fl[1] + Rr[i, 2] * fl[2]
            f[e, i] = fx
            f[e, 6 + i] = -fx
            f[e, 3 + i] = Rr[i, 0] * fl[3] + Rr[i, 1] * fl[4] + Rr[i, 2] * fl[5]
            f[e, 9 + i] = Rr[i, 0] * fl[6] + Rr[i, 1] * fl[7] + Rr[i, 2] * fl[8]
        if not tangent:
            continue

        # --- material and local geometric: kb = D^T S D + sum sigma_k H_k ----------
        for b in range(7):
            SD[0, b] = s00 * D[0, b]
            SD[1, b] = s11 * D[1, b]
            SD[2, b] = s22 * D[2, b] + s23 * D[3, b]
            SD[3, b] = s23 * D[2, b] + s33 * D[3, b]
            SD[4, b] = s44 * D[4, b] + s45 * D[5, b]
            SD[5, b] = s45 * D[4, b] + s55 * D[5, b]
        for a in range(7):                  # symmetric: the upper triangle, mirrored
            for b in range(a, 7):
                s = (D[0, a] * SD[0, b] + D[1, a] * SD[1, b] + D[2, a] * SD[2, b]
                     + D[3, a] * SD[3, b] + D[4, a] * SD[4, b] + D[5, a] * SD[5, b])
                kb[a, b] = s
                kb[b, a] = s
        for term in H_TERMS:
            k, i, j = term[0], term[1], term[2]
            hs = le * term[3] * sig[k]
            kb[i, j] += hs
            kb[j, i] += hs
        for r in range(na):
            gg = 2 * le * coef[r, e] * sig[0]
            i, j = ij[r, 0], ij[r, 1]
            kb[i, i] += gg
            kb[i, j] += gg
            kb[j, i] += gg
            kb[j, j] += gg
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
        for j in range(7):                  # kbh = L^T kbL, symmetric (kb is): the
            kbh[0, j] = kbL[0, j]           # upper triangle, mirrored
            kbh[j, 0] = kbL[0, j]
        for a in range(2):
            for i in range(3):
                r = 1 + 3 * a + i
                for j in range(r, 7):
                    s = (Lam[a, 0, i] * kbL[1 + 3 * a, j] + Lam[a, 1, i] * kbL[2 + 3 * a, j]
                         + Lam[a, 2, i] * kbL[3 + 3 * a, j])
                    kbh[r, j] = s
                    kbh[j, r] = s
        for a in range(2):
            th = theta[a]
            eta, muc, t2 = etamu[a, 0], etamu[a, 1], etamu[a, 2]
            m0, m1, m2 = m[a, 0], m[a, 1], m[a, 2]
            tm = th[0] * m0 + th[1] * m1 + th[2] * m2
            w0 = (th[0] * tm - m0 * t2) * muc
            w1 = (th[1] * tm - m1 * t2) * muc
            w2 = (th[2] * tm - m2 * t2) * muc
            for i in range(3):              # Kh = eta (tm I + theta m^T - 2 m theta^T)
                for j in range(3):          # + mu w theta^T - hat(m)/2
                    Kh[i, j] = eta * (th[i] * m[a, j] - 2 * m[a, i] * th[j])
                Kh[i, i] += eta * tm
            for j in range(3):
                Kh[0, j] += w0 * th[j]
                Kh[1, j] += w1 * th[j]
                Kh[2, j] += w2 * th[j]
            Kh[0, 1] += 0.5 * m2
            Kh[0, 2] -= 0.5 * m1
            Kh[1, 0] -= 0.5 * m2
            Kh[1, 2] += 0.5 * m0
            Kh[2, 0] += 0.5 * m1
            Kh[2, 1] -= 0.5 * m0
            for i in range(3):
                for j in range(3):
                    kbh[1 + 3 * a + i, 1 + 3 * a + j] += (
                        Kh[i, 0] * Lam[a, 0, j] + Kh[i, 1] * Lam[a, 1, j]
                        + Kh[i, 2] * Lam[a, 2, j])
        # the core of Bh^T kbh Bh, frame components: Z^T kbh Z
        for j in range(7):
            z_transpose(kbh[:, j], U[:, j], c, il, g)
        for i in range(9):
            z_transpose(U[i], Kl[i], c, il, g)

        # --- the rest of the geometric stiffness (CorotFrame3D.geometric) -----------
        # In frame components the frame spin is w = G dd = (wx, wy, wz) and d r_i = w x e_i;
        # the rows of F are linear forms of the core DOFs y = (x_p, w_p, w_q) (x_q = 0):
        # dl, wx, wy, wz, dp1, dp2, dc (d of l, p1, p2, c = p1/(l p2))
        # (only the entries set below are nonzero, the same ones for every element)
        F[0, 0] = -1.0                      # dl = r1 . (dx_q - dx_p)
        F[1, 2], F[1, 3], F[1, 4], F[1, 6], F[1, 7] = c, g[0, 0], g[0, 1], g[1, 0], g[1, 1]
        F[2, 2] = il                        # wy
        F[3, 1] = -il                       # wz
        for a in range(2):                  # dp = (dw_p x t_p + dw_q x t_q)/2
            o = 3 + 3 * a
            F[4, o + 1] = 0.5 * tau[a, 2]
            F[4, o + 2] = -0.5 * tau[a, 1]
            F[5, o] = -0.5 * tau[a, 2]
            F[5, o + 2] = 0.5 * tau[a, 0]
        F[4, 1] = -p2 * il                  # dp1 = r1 . dp + p2 wz
        F[5, 1] = p1 * il                   # dp2 = r2 . dp - p1 wz
        ilp2, cl, cp2 = il / p2, c * il, c / p2
        for j in range(9):                  # dc = dp1/(l p2) - c dl/l - c dp2/p2
            F[6, j] = F[4, j] * ilp2 - F[0, j] * cl - F[5, j] * cp2
        N = q[0]
        c0 = mu[0, 0] + mu[1, 0]
        c1 = mu[0, 1] + mu[1, 1]
        c2 = mu[0, 2] + mu[1, 2]
        # 1. rotating chord under the axial force: N/l (I - e1 e1^T)
        Kl[1, 1] += N * il
        Kl[2, 2] += N * il
        # 4. change of G, rows x_p: -(c0 d(c r3) + c1 d(r3/l) - c2 d(r2/l))
        a1, a2, a3 = c0 * c + c1 * il, c2 * il, c2 * il * il
        a4 = c1 * il * il
        for j in range(9):
            Kl[0, j] -= a1 * F[2, j] + a2 * F[3, j]
            Kl[1, j] -= a3 * F[0, j] - a1 * F[1, j]
            Kl[2, j] -= c0 * F[6, j] - a4 * F[0, j] - a2 * F[1, j]
        for a in range(2):
            o = 3 + 3 * a
            ta0, ta1, ta2 = tau[a, 0], tau[a, 1], tau[a, 2]
            # 2. the frame rotation carries the nodal moments: -mu_a x w
            ma0, ma1, ma2 = mu[a, 0], mu[a, 1], mu[a, 2]
            for j in range(9):
                Kl[o, j] -= ma1 * F[3, j] - ma2 * F[2, j]
                Kl[o + 1, j] -= ma2 * F[1, j] - ma0 * F[3, j]
                Kl[o + 2, j] -= ma0 * F[2, j] - ma1 * F[1, j]
            # 4. change of G, rows w_a: -c0 d((t_a x r3)/(2 p2)); dt_a = dw_a x t_a
            b0 = c0 * h2
            b1 = b0 / p2
            for j in range(9):
                Kl[o, j] -= b0 * ta2 * F[1, j] - b1 * ta1 * F[5, j]
                Kl[o + 1, j] -= b0 * ta2 * F[2, j] + b1 * ta0 * F[5, j]
                Kl[o + 2, j] += b0 * (ta0 * F[1, j] + ta1 * F[2, j])
            # (dw_a x t_a) x e3 = (xi_y, -xi_x, 0), xi = dw_a x t_a
            Kl[o, o] += b0 * ta2            # xi_y = dw_z t_x - dw_x t_z
            Kl[o, o + 2] -= b0 * ta0
            Kl[o + 1, o + 1] += b0 * ta2    # -xi_x = -(dw_y t_z - dw_z t_y)
            Kl[o + 1, o + 2] -= b0 * ta1
        # 3. (change of jl_inv^T) is in kbh above

        # --- to global axes: K_IJ = R_r Kl_IJ R_r^T; the x_q rows and columns by sign --
        Ke = K[e]
        for bi in range(3):
            gi = 3 * bi if bi < 2 else 9
            for bj in range(3):
                gj = 3 * bj if bj < 2 else 9
                for i in range(3):
                    for j in range(3):
                        tmp[i, j] = (Kl[3 * bi + i, 3 * bj] * Rr[j, 0]
                                     + Kl[3 * bi + i, 3 * bj + 1] * Rr[j, 1]
                                     + Kl[3 * bi + i, 3 * bj + 2] * Rr[j, 2])
                for i in range(3):
                    for j in range(3):
                        s = Rr[i, 0] * tmp[0, j] + Rr[i, 1] * tmp[1, j] + Rr[i, 2] * tmp[2, j]
                        Ke[gi + i, gj + j] = s
                        if bj == 0:
                            Ke[gi + i, 6 + j] = -s
                        if bi == 0:
                            Ke[6 + i, gj + j] = -s
                            if bj == 0:
                                Ke[6 + i, 6 + j] = s
