"""The numba kernel of 2D revolute joints in the compiled energy-conserving step (issue 32).

One group of planar revolute joints (rows ``point``, :mod:`fem.constraints.joint`) as
:meth:`fem.constraints.joint.Joint.step` computes it through
:func:`fem.constraints.joint_rows.discrete_rows` and
:func:`~fem.constraints.joint_rows.static_rows`, then
:meth:`fem.integrators.midpoint.EnergyConserving._cayley_rows` and the assembler, joint by joint:
the scaled vector ``s [G_d^T mu; g(q_1)]``, its tangent
``s [[d(G_d^T mu)/dq_1, G_d^T], [G(q_1), 0]]`` and their scatter. In the plane, with the arms
``a = R(theta) c`` of the offsets ``c`` and the step's angle ``t = theta_1 - theta_0`` of a node,
the discrete gradient's arm is ``j = jl(t e_z) a_0`` (``a_1 - a_0 = t e_z x j`` exactly):

* ``G_d = [-I, (j_a,y, -j_a,x), I, -(j_b,y, -j_b,x)]`` (columns ``ux, uy, rz`` of ``a`` and
  ``b``), ``G(q_1)`` the same with the arms ``a_1``;
* ``d(G_d^T mu)/dq_1`` has two entries, at ``(rz, rz)`` of each node:
  ``+-(mu_x dj_y - mu_y dj_x)`` with ``dj = d(jl(t e_z) a_0)/dt``;
* rows ``rz`` of the nodes that turn by Cayley parameters (``on``) are multiplied by
  ``s = t / psi`` and get ``f_rz ds/dt`` on their diagonal (the work paired with ``psi``).

Nothing here is new arithmetic: ``tests/test_planar_multibody.py`` compares every output with the
general path, and whole runs.
"""

import math

import numpy as np

from fem.kernels import configure_cache

configure_cache()                  # before the njit decorators: the source-keyed cache folder

from numba import njit  # noqa: E402

_SMALL = 0.3                       # fem.rotations._SMALL: jl's series below this angle


@njit(cache=True, nogil=True)
def jl_z(t, vx, vy):
    """``jl(t e_z) v`` for an in-plane ``v`` (:func:`fem.rotations.jl`, same series)."""
    a = abs(t)
    t2 = a * a
    if a < _SMALL:
        b = (((((1 / 3628800) * t2 - 1 / 40320) * t2 + 1 / 720) * t2 - 1 / 24) * t2 + 1 / 2)
        c = (((((1 / 39916800) * t2 - 1 / 362880) * t2 + 1 / 5040) * t2 - 1 / 120) * t2
             + 1 / 6)
    else:
        b = (1 - math.cos(a)) / a**2
        c = (a - math.sin(a)) / a**3
    d = 1.0 + c * (-(t * t))
    bt = b * t
    return d * vx - bt * vy, bt * vx + d * vy


@njit(cache=True, nogil=True)
def jl_z_rate(t, vx, vy):
    """``d(jl(t e_z) v)/dt`` (:func:`fem.constraints.joint_rows._jl_derivative_z`)."""
    t2 = t * t
    if abs(t) < 1e-3:
        ds = -t / 3 + t * t2 / 30
        dc = 0.5 - t2 / 8 + t2 * t2 / 144
    else:
        ds = (t * math.cos(t) - math.sin(t)) / t**2
        dc = (t * math.sin(t) - (1 - math.cos(t))) / t**2
    return ds * vx - dc * vy, ds * vy + dc * vx


@njit(cache=True, nogil=True)
def secant(dtheta):
    """``s = dtheta / psi`` and ``ds/ddtheta`` (:func:`fem.integrators.cayley.cayley_secant`)."""
    u = 0.5 * dtheta
    if u == 0.0:
        s = 1.0
    else:
        s = u / math.tan(u)
    u2 = u * u
    if abs(u) < 0.1:
        ds_du = -u * (2 / 3 + u2 * (4 / 45 + u2 * (12 / 945 + u2 * (8 / 4725 + u2 * 20 / 93555))))
    else:
        ds_du = 1 / math.tan(u) - u / math.sin(u) ** 2
    return s, 0.5 * ds_du


@njit(cache=True, nogil=True)
def to_psi(fe, Ke, a, b, on, rot0, rot1, tangent):
    """The rows paired with the angles of nodes ``a``, ``b`` (entries 2, 5) carried over to psi.

    Where they are Cayley nodes: times the secant of the step's turn (:func:`secant`), the
    tangent's row too, plus the secant's rate times the row's force.
    """
    width = fe.shape[0]
    for k in range(2):
        n = a if k == 0 else b
        if on[n]:
            s, ds = secant(rot1[n] - rot0[n])
            r = 3 * k + 2
            f_theta = fe[r]
            fe[r] *= s
            if tangent:
                for c in range(width):
                    Ke[r, c] *= s
                Ke[r, r] += f_theta * ds


@njit(cache=True, nogil=True)
def scatter(fe, Ke, edofs, slot, base, tangent, f, K):
    """``fe`` into ``f`` at ``edofs``; with ``tangent``, ``Ke`` into ``K`` at ``slot[base:]``.

    Row by row; a slot ``len(K)`` marks an entry that couples no unknowns.
    """
    width = fe.shape[0]
    for i in range(width):
        f[edofs[i]] += fe[i]
    if tangent:
        nnz = K.shape[0]
        for i in range(width):
            for c in range(width):
                p = slot[base + width * i + c]
                if p < nnz:
                    K[p] += Ke[i, c]


@njit(cache=True, nogil=True)
def revolute(u0, u1, rot0, rot1, conn, offsets, mpos, mu, scale, on, edofs, slot, tangent, f,
             K):
    """2D revolute joints: ``s [G_d^T mu; g(q_1)]`` into ``f``, the tangent into ``K``.

    ``conn (E, 2)`` the nodes, ``offsets (E, 2, 3)`` the joint point from each, ``mpos (E, 2)``
    the multipliers' positions in ``mu`` (``State.multipliers``), ``scale (E,)`` each joint's
    group scale, ``on (n,)`` the Cayley nodes, ``edofs (E, 8)`` and ``slot (E * 64,)`` the
    constraint scatter (``len(K)`` where an entry couples no unknowns). ``tangent`` false:
    ``K`` is not touched.
    """
    fe = np.empty(8)
    Ke = np.zeros((8, 8))
    j = np.empty((2, 2))
    dj = np.empty((2, 2))
    arm1 = np.empty((2, 2))
    for e in range(conn.shape[0]):
        sg = scale[e]
        mx, my = mu[mpos[e, 0]], mu[mpos[e, 1]]
        gx = u1[conn[e, 1], 0] - u1[conn[e, 0], 0]
        gy = u1[conn[e, 1], 1] - u1[conn[e, 0], 1]
        for k in range(2):
            n = conn[e, k]
            cx, cy = offsets[e, k, 0], offsets[e, k, 1]
            c0, s0 = math.cos(rot0[n]), math.sin(rot0[n])
            c1, s1 = math.cos(rot1[n]), math.sin(rot1[n])
            ax, ay = c0 * cx - s0 * cy, s0 * cx + c0 * cy
            arm1[k, 0], arm1[k, 1] = c1 * cx - s1 * cy, s1 * cx + c1 * cy
            t = rot1[n] - rot0[n]
            j[k, 0], j[k, 1] = jl_z(t, ax, ay)
            if tangent:
                dj[k, 0], dj[k, 1] = jl_z_rate(t, ax, ay)
            sign = 1.0 if k == 1 else -1.0
            gx += sign * (arm1[k, 0] - cx)
            gy += sign * (arm1[k, 1] - cy)
        fe[0], fe[1] = -sg * mx, -sg * my
        fe[2] = sg * (j[0, 1] * mx - j[0, 0] * my)
        fe[3], fe[4] = sg * mx, sg * my
        fe[5] = -sg * (j[1, 1] * mx - j[1, 0] * my)
        fe[6], fe[7] = sg * gx, sg * gy
        if tangent:
            Ke[:] = 0.0
            Ke[2, 2] = sg * (mx * dj[0, 1] - my * dj[0, 0])
            Ke[5, 5] = -sg * (mx * dj[1, 1] - my * dj[1, 0])
            # G_d^T (the multipliers' columns) and G(q_1) (their rows)
            Ke[0, 6], Ke[1, 7], Ke[3, 6], Ke[4, 7] = -sg, -sg, sg, sg
            Ke[6, 0], Ke[7, 1], Ke[6, 3], Ke[7, 4] = -sg, -sg, sg, sg
            Ke[2, 6], Ke[2, 7] = sg * j[0, 1], -sg * j[0, 0]
            Ke[5, 6], Ke[5, 7] = -sg * j[1, 1], sg * j[1, 0]
            Ke[6, 2], Ke[7, 2] = sg * arm1[0, 1], -sg * arm1[0, 0]
            Ke[6, 5], Ke[7, 5] = -sg * arm1[1, 1], sg * arm1[1, 0]
        to_psi(fe, Ke, conn[e, 0], conn[e, 1], on, rot0, rot1, tangent)
        scatter(fe, Ke, edofs[e], slot, e * 64, tangent, f, K)


@njit(cache=True, nogil=True)
def angles(rot0, rot1, conn, mpos, mu, scale, target, on, edofs, slot, tangent, f, K):
    """The ``angle`` rows of 2D joints (fixed, driven revolute): ``theta_b - theta_a = target``.

    The row's gradient ``[-1, 1]`` (columns ``rz`` of ``a`` and ``b``) is its own discrete
    gradient. ``target (E,)``: the drive's value at the step's end (0 undriven);
    ``edofs (E, 3)``: ``rz`` of ``a``, of ``b`` and the multiplier; ``slot (E * 9,)``. Rows
    ``rz`` of Cayley nodes as in :func:`revolute`.
    """
    nnz = K.shape[0]
    fe = np.empty(3)
    Ke = np.zeros((3, 3))
    for e in range(conn.shape[0]):
        sg = scale[e]
        m = mu[mpos[e]]
        a, b = conn[e, 0], conn[e, 1]
        fe[0], fe[1] = -sg * m, sg * m
        fe[2] = sg * ((rot1[b] - rot1[a]) - target[e])
        if tangent:
            Ke[:] = 0.0
            Ke[0, 2], Ke[1, 2], Ke[2, 0], Ke[2, 1] = -sg, sg, -sg, sg
        for k in range(2):
            n = conn[e, k]
            if on[n]:
                s, ds = secant(rot1[n] - rot0[n])
                f_theta = fe[k]
                fe[k] *= s
                if tangent:
                    for c in range(3):
                        Ke[k, c] *= s
                    Ke[k, k] += f_theta * ds
        for i in range(3):
            f[edofs[e, i]] += fe[i]
        if not tangent:
            continue
        base = e * 9
        for i in range(3):
            for c in range(3):
                p = slot[base + 3 * i + c]
                if p < nnz:
                    K[p] += Ke[i, c]


@njit(cache=True, nogil=True)
def slides(u0, u1, rot0, rot1, conn, offsets, frame, mpos, mu, scale, on, edofs, slot, tangent,
           f, K):
    """2D slide rows (inline, prismatic joints): ``(R_a e) . s = 0``, discrete gradient.

    :func:`fem.constraints.joint_rows._discrete_slide` and the slide row of
    :func:`~fem.constraints.joint_rows.static_rows` in the plane: with ``d = R_a e`` (``frame
    (E, 2)``: ``e``, the joint frame's column), the arms ``a`` of the offsets, the gap ``s`` and
    ``j = jl(t e_z) v_0`` of a node's vectors, ``G_d = [-dbar, (jd x sbar + dbar x ja_a)_z,
    dbar, (ja_b x dbar)_z]`` (columns ``ux, uy, rz`` of ``a`` and ``b``) and ``g(q_1) = d_1 .
    s_1``. ``mpos (E,)`` the multiplier's position in ``mu``; ``edofs (E, 7)``, ``slot
    (E * 49,)``. Rows ``rz`` of Cayley nodes as in :func:`revolute`.
    """
    fe = np.empty(7)
    Ke = np.zeros((7, 7))
    arm0 = np.empty((2, 2))
    arm1 = np.empty((2, 2))
    for e in range(conn.shape[0]):
        sg = scale[e]
        m = mu[mpos[e]]
        a, b = conn[e, 0], conn[e, 1]
        for k in range(2):
            n = conn[e, k]
            cx, cy = offsets[e, k, 0], offsets[e, k, 1]
            c0, s0 = math.cos(rot0[n]), math.sin(rot0[n])
            c1, s1 = math.cos(rot1[n]), math.sin(rot1[n])
            arm0[k, 0], arm0[k, 1] = c0 * cx - s0 * cy, s0 * cx + c0 * cy
            arm1[k, 0], arm1[k, 1] = c1 * cx - s1 * cy, s1 * cx + c1 * cy
        s0x = ((u0[b, 0] - u0[a, 0]) + (arm0[1, 0] - offsets[e, 1, 0])
               - (arm0[0, 0] - offsets[e, 0, 0]))
        s0y = ((u0[b, 1] - u0[a, 1]) + (arm0[1, 1] - offsets[e, 1, 1])
               - (arm0[0, 1] - offsets[e, 0, 1]))
        s1x = ((u1[b, 0] - u1[a, 0]) + (arm1[1, 0] - offsets[e, 1, 0])
               - (arm1[0, 0] - offsets[e, 0, 0]))
        s1y = ((u1[b, 1] - u1[a, 1]) + (arm1[1, 1] - offsets[e, 1, 1])
               - (arm1[0, 1] - offsets[e, 0, 1]))
        ex, ey = frame[e, 0], frame[e, 1]
        ca0, sa0 = math.cos(rot0[a]), math.sin(rot0[a])
        ca1, sa1 = math.cos(rot1[a]), math.sin(rot1[a])
        d0x, d0y = ca0 * ex - sa0 * ey, sa0 * ex + ca0 * ey
        d1x, d1y = ca1 * ex - sa1 * ey, sa1 * ex + ca1 * ey
        ta, tb = rot1[a] - rot0[a], rot1[b] - rot0[b]
        jdx, jdy = jl_z(ta, d0x, d0y)
        jax, jay = jl_z(ta, arm0[0, 0], arm0[0, 1])
        jbx, jby = jl_z(tb, arm0[1, 0], arm0[1, 1])
        dmx, dmy = 0.5 * (d0x + d1x), 0.5 * (d0y + d1y)
        smx, smy = 0.5 * (s0x + s1x), 0.5 * (s0y + s1y)
        g_wa = (jdx * smy - jdy * smx) + (dmx * jay - dmy * jax)
        g_wb = jbx * dmy - jby * dmx
        fe[0], fe[1], fe[2] = -sg * m * dmx, -sg * m * dmy, sg * m * g_wa
        fe[3], fe[4], fe[5] = sg * m * dmx, sg * m * dmy, sg * m * g_wb
        fe[6] = sg * (d1x * s1x + d1y * s1y)
        if tangent:
            Ke[:] = 0.0
            # d(G_d^T m)/dq_1: dbar along a's spin, sbar along every correction, j's rates
            Ke[0, 2], Ke[1, 2] = 0.5 * m * d1y, -0.5 * m * d1x
            Ke[3, 2], Ke[4, 2] = -0.5 * m * d1y, 0.5 * m * d1x
            hm = 0.5 * m
            Ke[2, 0] += hm * jdy
            Ke[2, 1] += -hm * jdx
            Ke[2, 2] += -hm * (jdx * arm1[0, 0] + jdy * arm1[0, 1])
            Ke[2, 3] += -hm * jdy
            Ke[2, 4] += hm * jdx
            Ke[2, 5] += hm * (jdx * arm1[1, 0] + jdy * arm1[1, 1])
            djdx, djdy = jl_z_rate(ta, d0x, d0y)
            djax, djay = jl_z_rate(ta, arm0[0, 0], arm0[0, 1])
            djbx, djby = jl_z_rate(tb, arm0[1, 0], arm0[1, 1])
            Ke[2, 2] += m * (-(smx * djdy - smy * djdx) - 0.5 * (jax * d1x + jay * d1y)
                             + (dmx * djay - dmy * djax))
            Ke[5, 5] -= m * (dmx * djby - dmy * djbx)
            Ke[5, 2] += 0.5 * m * (jbx * d1x + jby * d1y)
            for i in range(6):
                for c in range(6):
                    Ke[i, c] *= sg
            # G_d^T (the multiplier's column) and G(q_1) (its row)
            Ke[0, 6], Ke[1, 6], Ke[2, 6] = -sg * dmx, -sg * dmy, sg * g_wa
            Ke[3, 6], Ke[4, 6], Ke[5, 6] = sg * dmx, sg * dmy, sg * g_wb
            e1x, e1y = s1x + arm1[0, 0], s1y + arm1[0, 1]
            Ke[6, 0], Ke[6, 1], Ke[6, 2] = -sg * d1x, -sg * d1y, sg * (d1x * e1y - d1y * e1x)
            Ke[6, 3], Ke[6, 4] = sg * d1x, sg * d1y
            Ke[6, 5] = sg * (arm1[1, 0] * d1y - arm1[1, 1] * d1x)
        to_psi(fe, Ke, conn[e, 0], conn[e, 1], on, rot0, rot1, tangent)
        scatter(fe, Ke, edofs[e], slot, e * 49, tangent, f, K)
