"""The numba kernel of :func:`fem.elements.beam.beam3d_jit.conserving`; imported when it is used.

The energy-conserving step of 3D co-rotational beams, :meth:`fem.elements.beam.Beam.conserving`
(Crisfield & Shi's algorithmic basic deformations, section 5, eqs. 35(b), 38-43, extended to 3D;
notes/crisfield_shi.md sections 1.4 and 4.2), one pass per element::

    v1 = v0 + B' inc (v1_0 = l_1 - l0),   q = D(v_m)^T S (eps(v0) + eps(v1))/2,   f = B'^T q,
    K  = B'^T kb dv1 + geometric(q') P + B_0^T N dbeta,   energy = eps(v1).S eps(v1)/2,
    kb = (D_m^T S D_1 + sum_k sigma_av,k H_k)/2,   dv1 = [b1; B Q + d(B inc)/dd P],

``B`` the frame's at the mid-point configuration (:class:`fem.elements.beam.frames3d.CorotFrame3D`),
``B'`` it with the elongation row scaled by ``beta = 2 l_m/(l_n + l_n+1)``, ``q' = (beta N, m)``,
``Q``, ``P`` the block-diagonal correction maps (:func:`fem.elements.beam.group._correction_map`:
``jl_inv``, ``half_spin``, ``cay_inv_spin``, ``half_spin(log_cay)`` where ``spins`` and
``cayley`` say so), ``d(B inc)/dd`` :meth:`~fem.elements.beam.frames3d.CorotFrame3D.bw_derivative`
and ``geometric`` :meth:`~fem.elements.beam.frames3d.CorotFrame3D.geometric`, both from the frame's
``dG/dd`` (``_g_parts`` there, formed here as its five ``3 x 12`` blocks). The strains are
Meijaard's second-order ones with the Timoshenko shear-arch terms
(:class:`fem.elements.beam.basic.BasicBeam`).

Symbols follow those methods line by line, in global components and dense ``12 x 12`` scratch
per chunk: the target is the dynamic runs of a few elements and 1e4 steps, where the call's cost
is numpy's ~60 small array operations, not the flops of one element (about 1e4).

The rotation helpers and Meijaard's strains are :mod:`fem.elements.beam.beam3d_kernel`'s (``logm``,
``eta_mu``, ``hat_into``, ``H_TERMS``, ``_strain_into``) and
:mod:`fem.elements.shell.shell_ec_kernel`'s
(``_kh_into``, ``_step_blocks_into``), inlined: the cache folder is keyed by every kernel's source
(:func:`fem.kernels.cache_dir`), so a change to them recompiles this kernel too.
"""

import math

import numpy as np

from fem.kernels import configure_cache

configure_cache()                  # before the njit decorators: the source-keyed cache folder

from numba import njit, prange  # noqa: E402

from fem.elements.beam.beam3d_kernel import (  # noqa: E402
    H_TERMS,
    _strain_into,
    eta_mu,
    hat_into,
    logm,
    quat_matrix_into,
)
from fem.elements.shell.shell_ec_kernel import _kh_into, _step_blocks_into  # noqa: E402

_CHUNK = 64            # elements per chunk: prange runs over chunks, each allocates its scratch
_inline = njit(cache=True, nogil=True, inline="always")


@_inline
def _stress_into(Sc, e, eps, sig):
    """``sig = S eps`` from the nonzeros ``Sc`` of ``S`` (beam3d_jit._S_ENTRIES)."""
    sig[0] = Sc[e, 0] * eps[0]
    sig[1] = Sc[e, 1] * eps[1]
    sig[2] = Sc[e, 2] * eps[2] + Sc[e, 3] * eps[3]
    sig[3] = Sc[e, 3] * eps[2] + Sc[e, 4] * eps[3]
    sig[4] = Sc[e, 5] * eps[4] + Sc[e, 6] * eps[5]
    sig[5] = Sc[e, 6] * eps[4] + Sc[e, 7] * eps[5]


@njit(cache=True, nogil=True, parallel=True)
def kernel(quat, um, u0, u1, conn, chord0, E0, l0, Sc, coef, ij, v0, inc, spins, cay,
           f, K, energy, v1):
    """Fill ``f (E, 12)``, ``K (E, 12, 12)``, ``energy (E,)`` and ``v1 (E, 7)``.

    Arguments as :func:`fem.elements.beam.beam3d_jit.conserving`: the mid-point quaternions ``quat
    (n, 4)`` and displacements ``um (n, 3)``, the displacements ``u0``, ``u1`` at the step's
    ends, the group's prepared data (``conn`` to ``ij``, :class:`fem.elements.beam.beam3d_jit.
    Prepared`), the algorithmic deformations ``v0 (E, 7)`` at the step's start, the increments
    ``inc (E, 12)`` and the flags ``spins``, ``cay (E, 2)`` of the nodes.

    ``prange`` runs over chunks of ``_CHUNK`` elements (:func:`chunk`); a group of one chunk
    runs in the calling thread: waking numba's threads costs more than a small group's work.
    """
    E = l0.shape[0]
    nchunks = (E + _CHUNK - 1) // _CHUNK
    if nchunks <= 1:                    # int64, not Literal[int](0): one compiled chunk
        chunk(np.int64(0), E, quat, um, u0, u1, conn, chord0, E0, l0, Sc, coef, ij, v0, inc,
              spins, cay, f, K, energy, v1)
        return
    for c in prange(nchunks):
        chunk(c * _CHUNK, min(E, (c + 1) * _CHUNK), quat, um, u0, u1, conn, chord0, E0, l0, Sc,
              coef, ij, v0, inc, spins, cay, f, K, energy, v1)


@njit(cache=True, fastmath={"contract", "arcp"}, nogil=True)
def chunk(lo, hi, quat, um, u0, u1, conn, chord0, E0, l0, Sc, coef, ij, v0, inc, spins, cay,
          f, K, energy, v1):
    """Elements ``lo`` to ``hi`` of :func:`kernel` (its scratch allocated once)."""
    na = coef.shape[0]
    Rn = np.empty((3, 3))
    T = np.empty((2, 3, 3))
    t = np.empty((2, 3))                # nodal local y axes, global
    Rr = np.empty((3, 3))               # columns r1 r2 r3
    M = np.empty((3, 3))
    theta = np.empty((2, 3))
    emu = np.empty((2, 3))              # eta, mu, |theta|^2 of each node
    Lam = np.empty((2, 3, 3))
    G = np.zeros((3, 12))
    Bhat = np.empty((2, 3, 12))
    B = np.zeros((7, 12))
    RG = np.empty((3, 12))
    r1 = np.empty(3)
    r2 = np.empty(3)
    r3 = np.empty(3)
    e1 = np.empty(3)
    # dG/dd (CorotFrame3D._g_parts)
    Ldl = np.zeros(12)
    Ldp = np.zeros((3, 12))             # translation columns stay zero
    Lr2 = np.empty((3, 12))
    Lr3 = np.empty((3, 12))
    Lp1 = np.empty(12)
    Lp2 = np.empty(12)
    Lc = np.empty(12)
    Ma = np.empty((3, 12))
    M3 = np.empty((3, 12))
    M2 = np.empty((3, 12))
    Mb = np.empty((2, 3, 12))
    ht = np.empty((2, 3, 3))
    hr3 = np.empty((3, 3))
    tr3 = np.empty(3)
    # basic response
    vm = np.empty(7)
    eps0 = np.empty(6)
    eps1 = np.empty(6)
    epsm = np.empty(6)
    D0 = np.empty((6, 7))
    D1 = np.empty((6, 7))
    Dm = np.empty((6, 7))
    sig0 = np.empty(6)
    sig1 = np.empty(6)
    sav = np.empty(6)
    SD = np.empty((6, 7))
    q = np.empty(7)
    kb = np.empty((7, 7))
    # correction maps, d(B inc)/dd, the tangent
    Qb = np.empty((2, 3, 3))
    Pb = np.empty((2, 3, 3))
    th = np.empty(3)
    hv = np.empty((3, 3))
    ps = np.empty(3)
    dGw = np.empty((3, 12))
    y = np.empty(3)
    wa = np.empty(3)
    Jd = np.empty((3, 3))
    LG = np.empty((3, 12))
    BW = np.zeros((7, 12))              # row 0's spin columns stay zero
    dv = np.empty((7, 12))
    W = np.empty((7, 12))
    Kg = np.empty((12, 12))
    X3 = np.empty((3, 3))
    Y = np.empty((3, 12))
    mu = np.empty((2, 3))
    ma = np.empty(3)
    sv = np.empty(3)
    for e in range(lo, hi):
        w = inc[e]
        le = l0[e]
        n0, n1 = conn[e, 0], conn[e, 1]
        # --- frame at the mid-point (CorotFrame3D._geometry) ---------------------------
        for a in range(2):                  # T_a = R_a E0
            quat_matrix_into(quat, n0 if a == 0 else n1, Rn)
            for i in range(3):
                for j in range(3):
                    T[a, i, j] = (Rn[i, 0] * E0[e, 0, j] + Rn[i, 1] * E0[e, 1, j]
                                  + Rn[i, 2] * E0[e, 2, j])
            for i in range(3):
                t[a, i] = T[a, i, 1]
        d0 = chord0[e, 0] + (um[n1, 0] - um[n0, 0])
        d1 = chord0[e, 1] + (um[n1, 1] - um[n0, 1])
        d2 = chord0[e, 2] + (um[n1, 2] - um[n0, 2])
        l = math.sqrt(d0 * d0 + d1 * d1 + d2 * d2)
        r1[0], r1[1], r1[2] = d0 / l, d1 / l, d2 / l
        pv0 = 0.5 * (t[0, 0] + t[1, 0])
        pv1 = 0.5 * (t[0, 1] + t[1, 1])
        pv2 = 0.5 * (t[0, 2] + t[1, 2])
        x0 = r1[1] * pv2 - r1[2] * pv1
        x1 = r1[2] * pv0 - r1[0] * pv2
        x2 = r1[0] * pv1 - r1[1] * pv0
        n3 = math.sqrt(x0 * x0 + x1 * x1 + x2 * x2)
        r3[0], r3[1], r3[2] = x0 / n3, x1 / n3, x2 / n3
        r2[0] = r3[1] * r1[2] - r3[2] * r1[1]
        r2[1] = r3[2] * r1[0] - r3[0] * r1[2]
        r2[2] = r3[0] * r1[1] - r3[1] * r1[0]
        p1 = pv0 * r1[0] + pv1 * r1[1] + pv2 * r1[2]
        p2 = pv0 * r2[0] + pv1 * r2[1] + pv2 * r2[2]
        for i in range(3):
            Rr[i, 0], Rr[i, 1], Rr[i, 2] = r1[i], r2[i], r3[i]
        for a in range(2):
            for i in range(3):              # M = R_r^T T_a
                for j in range(3):
                    M[i, j] = (Rr[0, i] * T[a, 0, j] + Rr[1, i] * T[a, 1, j]
                               + Rr[2, i] * T[a, 2, j])
            tha = theta[a]
            sn, cs = logm(M, tha)
            eta, muc, t2 = eta_mu(tha, sn, cs)
            emu[a, 0], emu[a, 1], emu[a, 2] = eta, muc, t2
            hat_into(tha, hv)               # jl_inv = I - hat/2 + eta hat^2
            for i in range(3):
                for j in range(3):
                    Lam[a, i, j] = (-0.5 * hv[i, j] + eta * (hv[i, 0] * hv[0, j]
                                    + hv[i, 1] * hv[1, j] + hv[i, 2] * hv[2, j]))
                Lam[a, i, i] += 1.0
        il = 1.0 / l
        c = p1 / (l * p2)
        h2 = 0.5 / p2
        for i in range(3):                  # G: rows of the frame spin, frame components
            G[0, i], G[0, 6 + i] = c * r3[i], -c * r3[i]
            G[1, i], G[1, 6 + i] = r3[i] * il, -r3[i] * il
            G[2, i], G[2, 6 + i] = -r2[i] * il, r2[i] * il
        for a in range(2):                  # (t_a x r3)/(2 p2)
            o = 3 + 6 * a
            tr3[0] = t[a, 1] * r3[2] - t[a, 2] * r3[1]
            tr3[1] = t[a, 2] * r3[0] - t[a, 0] * r3[2]
            tr3[2] = t[a, 0] * r3[1] - t[a, 1] * r3[0]
            for i in range(3):
                G[0, o + i] = tr3[i] * h2
        for a in range(2):                  # Bhat_a = R_r^T E_a - G, B = (b1; Lambda_a Bhat_a)
            for i in range(3):
                for j in range(12):
                    Bhat[a, i, j] = -G[i, j]
                for k in range(3):
                    Bhat[a, i, 3 + 6 * a + k] += Rr[k, i]
            for i in range(3):
                for j in range(12):
                    B[1 + 3 * a + i, j] = (Lam[a, i, 0] * Bhat[a, 0, j]
                                           + Lam[a, i, 1] * Bhat[a, 1, j]
                                           + Lam[a, i, 2] * Bhat[a, 2, j])
        for i in range(3):
            B[0, i], B[0, 6 + i] = -r1[i], r1[i]

        # --- the step's chords: beta, v1 -----------------------------------------------
        a0 = chord0[e, 0] + (u0[n1, 0] - u0[n0, 0])
        a1 = chord0[e, 1] + (u0[n1, 1] - u0[n0, 1])
        a2 = chord0[e, 2] + (u0[n1, 2] - u0[n0, 2])
        l_n = math.sqrt(a0 * a0 + a1 * a1 + a2 * a2)
        b0 = chord0[e, 0] + (u1[n1, 0] - u1[n0, 0])
        b1 = chord0[e, 1] + (u1[n1, 1] - u1[n0, 1])
        b2 = chord0[e, 2] + (u1[n1, 2] - u1[n0, 2])
        l_1 = math.sqrt(b0 * b0 + b1 * b1 + b2 * b2)
        e1[0], e1[1], e1[2] = b0 / l_1, b1 / l_1, b2 / l_1
        lsum = l_n + l_1
        beta = 2 * l / lsum
        ve = v1[e]
        vs = v0[e]
        for k in range(1, 7):
            s = vs[k]
            for j in range(12):
                s += B[k, j] * w[j]
            ve[k] = s
        ve[0] = l_1 - le                    # the elongation, without round-off drift

        # --- basic response: q = D_m^T sigma_av, energy, kb ----------------------------
        for k in range(7):
            vm[k] = 0.5 * (vs[k] + ve[k])
        _strain_into(vs, le, e, coef, ij, eps0, D0)
        _strain_into(ve, le, e, coef, ij, eps1, D1)
        _strain_into(vm, le, e, coef, ij, epsm, Dm)
        _stress_into(Sc, e, eps0, sig0)
        _stress_into(Sc, e, eps1, sig1)
        en = 0.0
        for k in range(6):
            sav[k] = 0.5 * (sig0[k] + sig1[k])
            en += eps1[k] * sig1[k]
        energy[e] = 0.5 * en
        for b in range(7):
            q[b] = (Dm[0, b] * sav[0] + Dm[1, b] * sav[1] + Dm[2, b] * sav[2]
                    + Dm[3, b] * sav[3] + Dm[4, b] * sav[4] + Dm[5, b] * sav[5])
        for j in range(12):                 # f = B'^T q
            s = beta * B[0, j] * q[0]
            for k in range(1, 7):
                s += B[k, j] * q[k]
            f[e, j] = s
        for b in range(7):                  # S D_1
            SD[0, b] = Sc[e, 0] * D1[0, b]
            SD[1, b] = Sc[e, 1] * D1[1, b]
            SD[2, b] = Sc[e, 2] * D1[2, b] + Sc[e, 3] * D1[3, b]
            SD[3, b] = Sc[e, 3] * D1[2, b] + Sc[e, 4] * D1[3, b]
            SD[4, b] = Sc[e, 5] * D1[4, b] + Sc[e, 6] * D1[5, b]
            SD[5, b] = Sc[e, 6] * D1[4, b] + Sc[e, 7] * D1[5, b]
        for a in range(7):
            for b in range(7):
                kb[a, b] = 0.5 * (Dm[0, a] * SD[0, b] + Dm[1, a] * SD[1, b]
                                  + Dm[2, a] * SD[2, b] + Dm[3, a] * SD[3, b]
                                  + Dm[4, a] * SD[4, b] + Dm[5, a] * SD[5, b])
        for term in H_TERMS:                # + sum_k sigma_av,k H_k / 2
            k, i, j = term[0], term[1], term[2]
            hs = 0.5 * le * term[3] * sav[k]
            kb[i, j] += hs
            kb[j, i] += hs
        for r in range(na):
            gg = le * coef[r, e] * sav[0]
            i, j = ij[r, 0], ij[r, 1]
            kb[i, i] += gg
            kb[i, j] += gg
            kb[j, i] += gg
            kb[j, j] += gg

        # --- correction maps Q, P (beam._correction_map): rotation blocks --------------
        for a in range(2):
            for i in range(3):
                th[i] = w[3 + 6 * a + i]
            if not spins[e, a]:
                for i in range(3):
                    for j in range(3):
                        Qb[a, i, j] = 1.0 if i == j else 0.0
                        Pb[a, i, j] = 0.5 if i == j else 0.0
                continue
            _step_blocks_into(th, cay[e, a], hv, ps, Qb[a], Pb[a])

        # --- dG/dd in five 3 x 12 blocks (CorotFrame3D._g_parts) -----------------------
        for i in range(3):
            Ldl[i], Ldl[6 + i] = -r1[i], r1[i]
        for a in range(2):
            hat_into(t[a], ht[a])
            for i in range(3):
                for k in range(3):
                    Ldp[i, 3 + 6 * a + k] = -0.5 * ht[a, i, k]
        hat_into(r3, hr3)
        for j in range(12):
            g1, g2, g3 = G[0, j], G[1, j], G[2, j]
            for i in range(3):
                Lr2[i, j] = -r1[i] * g3 + r3[i] * g1
                Lr3[i, j] = r1[i] * g2 - r2[i] * g1
            Lp1[j] = r1[0] * Ldp[0, j] + r1[1] * Ldp[1, j] + r1[2] * Ldp[2, j] + p2 * g3
            Lp2[j] = r2[0] * Ldp[0, j] + r2[1] * Ldp[1, j] + r2[2] * Ldp[2, j] - p1 * g3
        il2 = il * il
        ca, cb, cc = 1.0 / (l * p2), p1 / (l * l * p2), p1 / (l * p2 * p2)
        for j in range(12):
            Lc[j] = Lp1[j] * ca - cb * Ldl[j] - cc * Lp2[j]
            for i in range(3):
                M3[i, j] = Lr3[i, j] * il - r3[i] * Ldl[j] * il2
                M2[i, j] = Lr2[i, j] * il - r2[i] * Ldl[j] * il2
                Ma[i, j] = r3[i] * Lc[j] + c * Lr3[i, j]
        for a in range(2):
            tr3[0] = t[a, 1] * r3[2] - t[a, 2] * r3[1]
            tr3[1] = t[a, 2] * r3[0] - t[a, 0] * r3[2]
            tr3[2] = t[a, 0] * r3[1] - t[a, 1] * r3[0]
            for i in range(3):
                for j in range(12):
                    Mb[a, i, j] = (ht[a, i, 0] * Lr3[0, j] + ht[a, i, 1] * Lr3[1, j]
                                   + ht[a, i, 2] * Lr3[2, j] - tr3[i] * Lp2[j] / p2) * h2
                for k in range(3):          # -hat(r3) dt_a
                    Mb[a, i, 3 + 6 * a + k] += (hr3[i, 0] * ht[a, 0, k] + hr3[i, 1] * ht[a, 1, k]
                                                + hr3[i, 2] * ht[a, 2, k]) * h2

        # --- d(B inc)/dd (CorotFrame3D.bw_derivative) -----------------------------------
        for i in range(3):
            sv[i] = w[6 + i] - w[i]
        dr = sv[0] * r1[0] + sv[1] * r1[1] + sv[2] * r1[2]
        for i in range(3):
            rw = (sv[i] - dr * r1[i]) * il
            BW[0, i], BW[0, 6 + i] = -rw, rw
        dx0, dx1, dx2 = -sv[0], -sv[1], -sv[2]      # w_p - w_q
        for j in range(12):
            dGw[0, j] = (dx0 * Ma[0, j] + dx1 * Ma[1, j] + dx2 * Ma[2, j]
                         + w[3] * Mb[0, 0, j] + w[4] * Mb[0, 1, j] + w[5] * Mb[0, 2, j]
                         + w[9] * Mb[1, 0, j] + w[10] * Mb[1, 1, j] + w[11] * Mb[1, 2, j])
            dGw[1, j] = dx0 * M3[0, j] + dx1 * M3[1, j] + dx2 * M3[2, j]
            dGw[2, j] = -(dx0 * M2[0, j] + dx1 * M2[1, j] + dx2 * M2[2, j])
        for a in range(2):
            for i in range(3):
                s = 0.0
                for j in range(12):
                    s += Bhat[a, i, j] * w[j]
                y[i] = s
                wa[i] = (Rr[0, i] * w[3 + 6 * a] + Rr[1, i] * w[4 + 6 * a]
                         + Rr[2, i] * w[5 + 6 * a])
            _kh_into(theta[a], y, emu[a, 0], emu[a, 1], emu[a, 2], 1.0, Jd)
            for j in range(12):             # hat(R_r^T w_a) G - d(G w)
                g0, g1, g2 = G[0, j], G[1, j], G[2, j]
                LG[0, j] = wa[1] * g2 - wa[2] * g1 - dGw[0, j]
                LG[1, j] = wa[2] * g0 - wa[0] * g2 - dGw[1, j]
                LG[2, j] = wa[0] * g1 - wa[1] * g0 - dGw[2, j]
            o = 1 + 3 * a
            for i in range(3):
                for j in range(12):
                    BW[o + i, j] = (Jd[i, 0] * B[o, j] + Jd[i, 1] * B[o + 1, j]
                                    + Jd[i, 2] * B[o + 2, j]
                                    + Lam[a, i, 0] * LG[0, j] + Lam[a, i, 1] * LG[1, j]
                                    + Lam[a, i, 2] * LG[2, j])

        # --- dv1 = [b1; B Q + d(B inc)/dd P], W = kb dv1 --------------------------------
        for j in range(12):
            dv[0, j] = 0.0
        for i in range(3):
            dv[0, i], dv[0, 6 + i] = -e1[i], e1[i]
        for k in range(1, 7):
            for i in range(3):
                dv[k, i] = B[k, i] + 0.5 * BW[k, i]
                dv[k, 6 + i] = B[k, 6 + i] + 0.5 * BW[k, 6 + i]
            for a in range(2):
                o = 3 + 6 * a
                for i in range(3):
                    dv[k, o + i] = (B[k, o] * Qb[a, 0, i] + B[k, o + 1] * Qb[a, 1, i]
                                    + B[k, o + 2] * Qb[a, 2, i]
                                    + BW[k, o] * Pb[a, 0, i] + BW[k, o + 1] * Pb[a, 1, i]
                                    + BW[k, o + 2] * Pb[a, 2, i])
        for a in range(7):
            for j in range(12):
                s = 0.0
                for k in range(7):
                    s += kb[a, k] * dv[k, j]
                W[a, j] = s

        # --- geometric(q') with q' = (beta N, m) (CorotFrame3D.geometric) ---------------
        for i in range(12):
            for j in range(12):
                Kg[i, j] = 0.0
        Nl = beta * q[0] * il               # 1. rotating chord: N/l (I - r1 r1^T)
        for i in range(3):
            for j in range(3):
                pc = Nl * ((1.0 if i == j else 0.0) - r1[i] * r1[j])
                Kg[i, j] += pc
                Kg[i, 6 + j] -= pc
                Kg[6 + i, j] -= pc
                Kg[6 + i, 6 + j] += pc
        for i in range(3):
            for j in range(12):
                RG[i, j] = Rr[i, 0] * G[0, j] + Rr[i, 1] * G[1, j] + Rr[i, 2] * G[2, j]
        for a in range(2):
            for i in range(3):
                ma[i] = q[1 + 3 * a + i]
            for i in range(3):
                mu[a, i] = Lam[a, 0, i] * ma[0] + Lam[a, 1, i] * ma[1] + Lam[a, 2, i] * ma[2]
            for i in range(3):              # R_r mu_a
                sv[i] = Rr[i, 0] * mu[a, 0] + Rr[i, 1] * mu[a, 1] + Rr[i, 2] * mu[a, 2]
            o = 3 + 6 * a
            for j in range(12):             # 2. -hat(R_r mu_a) R_r G
                g0, g1, g2 = RG[0, j], RG[1, j], RG[2, j]
                Kg[o, j] -= sv[1] * g2 - sv[2] * g1
                Kg[o + 1, j] -= sv[2] * g0 - sv[0] * g2
                Kg[o + 2, j] -= sv[0] * g1 - sv[1] * g0
            # 3. Bhat_a^T K_h(theta_a, m_a) Lambda_a Bhat_a
            _kh_into(theta[a], ma, emu[a, 0], emu[a, 1], emu[a, 2], -1.0, Jd)
            for i in range(3):
                for j in range(3):
                    X3[i, j] = (Jd[i, 0] * Lam[a, 0, j] + Jd[i, 1] * Lam[a, 1, j]
                                + Jd[i, 2] * Lam[a, 2, j])
            for i in range(3):
                for j in range(12):
                    Y[i, j] = (X3[i, 0] * Bhat[a, 0, j] + X3[i, 1] * Bhat[a, 1, j]
                               + X3[i, 2] * Bhat[a, 2, j])
            for i in range(12):
                h0, h1, hh = Bhat[a, 0, i], Bhat[a, 1, i], Bhat[a, 2, i]
                for j in range(12):
                    Kg[i, j] += h0 * Y[0, j] + h1 * Y[1, j] + hh * Y[2, j]
        # 4. -sum_k c_k dG_k, c = mu_p + mu_q (g_contract)
        c0, c1, c2 = mu[0, 0] + mu[1, 0], mu[0, 1] + mu[1, 1], mu[0, 2] + mu[1, 2]
        for i in range(3):
            for j in range(12):
                rw = c0 * Ma[i, j] + c1 * M3[i, j] - c2 * M2[i, j]
                Kg[i, j] -= rw
                Kg[6 + i, j] += rw
                Kg[3 + i, j] -= c0 * Mb[0, i, j]
                Kg[9 + i, j] -= c0 * Mb[1, i, j]

        # --- K = B'^T W + geometric P + B_0^T N dbeta ------------------------------------
        gf = q[0] / lsum                    # dbeta N = gf (r1 - beta e1) . (dx_q - dx_p)
        Ke = K[e]
        for i in range(12):
            bi = beta * B[0, i]
            for j in range(12):
                s = bi * W[0, j]
                for k in range(1, 7):
                    s += B[k, i] * W[k, j]
                Ke[i, j] = s
            for j in range(3):
                Ke[i, j] += 0.5 * Kg[i, j]
                Ke[i, 6 + j] += 0.5 * Kg[i, 6 + j]
            for a in range(2):
                o = 3 + 6 * a
                for j in range(3):
                    Ke[i, o + j] += (Kg[i, o] * Pb[a, 0, j] + Kg[i, o + 1] * Pb[a, 1, j]
                                     + Kg[i, o + 2] * Pb[a, 2, j])
            for j in range(3):
                gb = gf * B[0, i] * (r1[j] - beta * e1[j])
                Ke[i, j] -= gb
                Ke[i, 6 + j] += gb
