"""The consistent beam inertia of the compiled energy-conserving step, planar (issue 32).

:class:`fem.inertia.beam.ConsistentBeamInertia` in 2D, as its ``midpoint_force`` and
``director_rates`` compute it (Meijaard 1993, eq. 17-19 with ``eps1 = 0``: cubic Hermite
interpolation of positions ``x`` and directors ``d = l0 R a`` on the slots
``y = (x_p, d_p, x_q, d_q)``; the mass ``M = rho A l0 PATTERN``; director velocities ``u_d`` of
their own, Betsch & Steinmann 2001), element by element:

* slot velocities ``u0 = (v0_p, u_d0,p, v0_q, u_d0,q)`` and the trial
  ``u1 = (v1_p, 2 (d1 - d0)/h - u_d0, ...)``; the slot force ``f_y = M (u1 - u0)/h``;
* the nodal forces ``f_x`` and (Cayley nodes: every node of a co-rotational beam) the moments
  ``m = (dbar x f_d)_z`` with ``dbar = (d0 + d1)/2``, added to the inertial forces ``f_in``;
* the tangent along Newton's corrections (``dx``, ``dtheta``): ``du1_x = (2/h) dx``,
  ``du1_d = (2/h) e_z x d1 dtheta``, ``dm = dbar x df_d - (d1 . f_d)/2 dtheta``.

Nothing here is new arithmetic: ``tests/test_planar_crank.py`` compares every output with the
numpy path of :mod:`fem.inertia.beam` (the reference), and whole runs.
"""

import math

import numpy as np

from fem.kernels import configure_cache

configure_cache()                  # before the njit decorators: the source-keyed cache folder

from numba import njit  # noqa: E402

#: the Hermite mass pattern of fem.inertia.beam.PATTERN (times rho A l0)
PATTERN = np.array([[156, 22, 54, -13], [22, 4, 13, -3],
                    [54, 13, 156, -22], [-13, -3, -22, 4]], dtype=float) / 420


@njit(cache=True, nogil=True)
def director_rates(v, rot, conn, axis, stored, nodal_v, nodal_rot, out):
    """``out (E, 2, 2)``: the director slots' velocities of a state (``director_rates``).

    ``stored (E, 2, 3)`` (their in-plane components) where the element's nodes still have the
    velocities ``nodal_v (E, 2, 3)`` and rotations ``nodal_rot (E, 2)`` they were written with
    (exact equality; NaN never equals), else the rigid rates ``w x d`` with ``d = R(theta)
    axis`` (``axis (E, 2)``: the reference axis times ``l0``).
    """
    for e in range(conn.shape[0]):
        same = True
        for k in range(2):
            n = conn[e, k]
            if nodal_rot[e, k] != rot[n]:
                same = False
            for j in range(3):
                if nodal_v[e, k, j] != v[n, j]:
                    same = False
        for k in range(2):
            if same:
                out[e, k, 0], out[e, k, 1] = stored[e, k, 0], stored[e, k, 1]
                continue
            n = conn[e, k]
            c, s = math.cos(rot[n]), math.sin(rot[n])
            dx, dy = c * axis[e, 0] - s * axis[e, 1], s * axis[e, 0] + c * axis[e, 1]
            w = v[n, 2]
            out[e, k, 0], out[e, k, 1] = -w * dy, w * dx


@njit(cache=True, nogil=True)
def consistent(rot0, rot1, v0, v1, conn, axis, mu, pattern, ud0, h, edofs, slot, tangent,
               ud1, f_in, K):
    """The consistent inertia of 2D co-rotational beams: forces into ``f_in``, tangent into ``K``.

    ``v1`` holds the step's mid-point velocities; ``axis (E, 2)`` the reference axes times
    ``l0``; ``mu (E,)`` ``rho A l0``; ``pattern (4, 4)``; ``ud0 (E, 2, 2)`` the director rates
    of ``s0`` (:func:`director_rates`); ``ud1 (E, 2, 2)`` receives the trial ones of ``s1``.
    ``edofs (E, 6)`` and ``slot (E * 36,)``: the beam group's scatter (``len(K)`` where an
    entry couples no unknowns). ``tangent`` false: ``K`` is not touched. Every node a Cayley
    node (the moment ``dbar x f_d``).
    """
    nnz = K.shape[0]
    du = np.empty((4, 2))
    d0 = np.empty((2, 2))
    d1 = np.empty((2, 2))
    fy = np.empty((4, 2))
    fe = np.empty(6)
    Lu = np.zeros((4, 2, 6))           # d u1 (slot, component) / d (element corrections)
    Ke = np.empty((6, 6))
    dfx, dfy = np.empty(4), np.empty(4)
    two_h = 2.0 / h
    for e in range(conn.shape[0]):
        for k in range(2):
            n = conn[e, k]
            c0, s0 = math.cos(rot0[n]), math.sin(rot0[n])
            c1, s1 = math.cos(rot1[n]), math.sin(rot1[n])
            ax, ay = axis[e, 0], axis[e, 1]
            d0[k, 0], d0[k, 1] = c0 * ax - s0 * ay, s0 * ax + c0 * ay
            d1[k, 0], d1[k, 1] = c1 * ax - s1 * ay, s1 * ax + c1 * ay
            for j in range(2):
                u1d = 2 * (d1[k, j] - d0[k, j]) / h - ud0[e, k, j]
                ud1[e, k, j] = u1d
                du[2 * k, j] = v1[n, j] - v0[n, j]
                du[2 * k + 1, j] = u1d - ud0[e, k, j]
        m = mu[e]
        for i in range(4):
            for j in range(2):
                acc = 0.0
                for q in range(4):
                    acc += (m * pattern[i, q]) * du[q, j]
                fy[i, j] = acc / h
        for k in range(2):
            fdx, fdy = fy[2 * k + 1, 0], fy[2 * k + 1, 1]
            bx, by = 0.5 * (d0[k, 0] + d1[k, 0]), 0.5 * (d0[k, 1] + d1[k, 1])
            fe[3 * k], fe[3 * k + 1] = fy[2 * k, 0], fy[2 * k, 1]
            fe[3 * k + 2] = bx * fdy - by * fdx
        for i in range(6):
            f_in[edofs[e, i]] += fe[i]
        if not tangent:
            continue
        for k in range(2):
            Lu[2 * k, 0, 3 * k] = two_h
            Lu[2 * k, 1, 3 * k + 1] = two_h
            Lu[2 * k + 1, 0, 3 * k + 2] = -two_h * d1[k, 1]
            Lu[2 * k + 1, 1, 3 * k + 2] = two_h * d1[k, 0]
        for k in range(2):
            bx, by = 0.5 * (d0[k, 0] + d1[k, 0]), 0.5 * (d0[k, 1] + d1[k, 1])
            for c in range(6):
                for i in (2 * k, 2 * k + 1):
                    ax_ = 0.0
                    ay_ = 0.0
                    for q in range(4):
                        mq = m * pattern[i, q]
                        ax_ += mq * Lu[q, 0, c]
                        ay_ += mq * Lu[q, 1, c]
                    dfx[i] = ax_ / h
                    dfy[i] = ay_ / h
                Ke[3 * k, c] = dfx[2 * k]
                Ke[3 * k + 1, c] = dfy[2 * k]
                Ke[3 * k + 2, c] = bx * dfy[2 * k + 1] - by * dfx[2 * k + 1]
            fdx, fdy = fy[2 * k + 1, 0], fy[2 * k + 1, 1]
            Ke[3 * k + 2, 3 * k + 2] -= 0.5 * (d1[k, 0] * fdx + d1[k, 1] * fdy)
        base = e * 36
        for i in range(6):
            for c in range(6):
                p = slot[base + 6 * i + c]
                if p < nnz:
                    K[p] += Ke[i, c]
