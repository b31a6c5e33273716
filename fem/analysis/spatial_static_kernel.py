"""The Newton iterations of one load-control increment of a 3D beam model, compiled.

The 3D twin of :mod:`fem.analysis.planar_static_kernel`: what
:meth:`fem.solvers.newton.Newton.iterate` does on :class:`fem.analysis.static.StaticStep` (load
control, no line search) for a model of 3D co-rotational beams, in one loop. Evaluate (the beams'
force and tangent by :func:`fem.elements.beam.beam3d_kernel.chunk`, the element loop of the
compiled pair ``beam3d.evaluate``, scattered into the residual and the CSR values), the
convergence test, factor (banded LU, the determinant's sign for the limit-point watch), solve,
and correct as :meth:`~fem.analysis.static.StaticStep.correct` does: the straight correction
when it lowers the residual, else the bent one (:class:`fem.analysis.bent.ChordFit`: the chords
turned by :func:`fem.analysis.bent_kernel.chord_rhs`, their least-squares fit on the band
Laplacian of each direction), scaled to :data:`~fem.analysis.bent.TRUST` where it turns nodes
further and still raises the residual. Rotations are composed, never added
(:meth:`fem.state.State.increment`: ``q <- normalize(exp(dw) q)`` at the nodes a correction
turns; Simo and Vu-Quoc 1986, spatial spins). The test, references, floors and checked solve are
:mod:`fem.solvers.newton_kernel`'s, shared with the planar loops; the 3D positions (rotation
vectors of the nodal quaternions, :meth:`fem.system.System.positions`) are here. Anything but a
plain convergence returns :data:`FALLBACK`: the step runs the increment again through the
general path, which reports or cuts back (:mod:`fem.analysis.spatial_static`).
"""

import math

import numpy as np

from fem.kernels import configure_cache

configure_cache()                  # before the njit decorators: the source-keyed cache folder

from numba import njit  # noqa: E402

from fem.analysis.bent_kernel import chord_rhs  # noqa: E402
from fem.analysis.planar_static_kernel import _fit_direction, _norm, _pivot_sign  # noqa: E402
from fem.elements.beam.beam3d_kernel import chunk  # noqa: E402
from fem.solvers import newton_kernel as nk  # noqa: E402
from fem.solvers.banded_kernel import factor, fill  # noqa: E402
from fem.solvers.newton_kernel import CONVERGED, FALLBACK, GOING, NBLOCKS  # noqa: E402, F401


@njit(cache=True, nogil=True)
def scatter(f_e, K_e, edofs, slot, tangent, f, K):
    """Add ``f_e (E, nd)`` at ``edofs`` to ``f`` and (``tangent``) ``K_e`` at ``slot`` to ``K``.

    ``slot (E * nd * nd,)``: each entry's CSR position, ``len(K)`` where it couples no unknowns.
    """
    nnz, nd = K.shape[0], f_e.shape[1]
    for e in range(f_e.shape[0]):
        for i in range(nd):
            f[edofs[e, i]] += f_e[e, i]
        if not tangent:
            continue
        base = e * nd * nd
        for i in range(nd):
            for j in range(nd):
                s = slot[base + nd * i + j]
                if s < nnz:
                    K[s] += K_e[e, i, j]


@njit(cache=True, nogil=True)
def evaluate(u, rot, conn, chord0, E0, l0, Sc, coef, ij, edofs, slot, tangent, f_e, K_e, fint,
             K):
    """The beams' internal forces into ``fint (n_active,)`` and, if ``tangent``, ``K``'s values.

    ``u (n, 3)``, ``rot (n, 4)`` (unit quaternions); the beams' prepared data
    (:class:`fem.elements.beam.beam3d_jit.Prepared`, every group's concatenated); ``f_e (E,
    12)``, ``K_e (E, 12, 12)`` scratch.
    """
    # a run-time flag, not the callers' literal True or False: the large beam loop then
    # compiles once, not once for each (20 s a time on a cold cache)
    chunk(np.int64(0), l0.shape[0], rot, u, conn, chord0, True, E0, l0, Sc, coef, ij,
          np.bool_(tangent), f_e, K_e)
    fint[:] = 0.0
    if tangent:
        K[:] = 0.0
    scatter(f_e, K_e, edofs, slot, tangent, fint, K)


@njit(cache=True, nogil=True)
def rotation_vector(rot, i, out):
    """Rotation vector (angle in ``[0, pi]``) of node ``i``'s quaternion (rotvec_from_quat)."""
    w, x, y, z = rot[i, 0], rot[i, 1], rot[i, 2], rot[i, 3]
    if w < 0:
        w, x, y, z = -w, -x, -y, -z
    s = math.sqrt(x * x + y * y + z * z)
    if s < 1e-12:
        scale = 2.0 / (w if w != 0 else 1.0)
    else:
        scale = 2 * math.atan2(s, w) / s
    out[0], out[1], out[2] = x * scale, y * scale, z * scale


@njit(cache=True, nogil=True)
def positions(X, u, rot, free_node, free_slot, psi, q):
    """(n_free,) the magnitudes the unknowns are known to (System.positions, 3D).

    ``|X + u|`` for a translation, ``max(|psi|, 1)`` for a rotation (``psi (n, 3)`` scratch:
    the rotation vectors of the nodal quaternions).
    """
    for i in range(rot.shape[0]):
        rotation_vector(rot, i, psi[i])
    for k in range(q.shape[0]):
        i, s = free_node[k], free_slot[k]
        q[k] = abs(X[i, s] + u[i, s]) if s < 3 else max(abs(psi[i, s - 3]), 1.0)


@njit(cache=True, nogil=True)
def turn(rot, i, w0, w1, w2):
    """``rot[i] <- normalize(exp(w) rot[i])``: a spatial spin ``w`` (rotations.rotate_spatial)."""
    t = math.sqrt(w0 * w0 + w1 * w1 + w2 * w2)
    hs = 0.5 - t * t / 48 if t < 1e-4 else math.sin(t / 2) / t
    aw, ax, ay, az = math.cos(t / 2), hs * w0, hs * w1, hs * w2
    bw, bx, by, bz = rot[i, 0], rot[i, 1], rot[i, 2], rot[i, 3]
    cw = aw * bw - ax * bx - ay * by - az * bz
    cx = aw * bx + ax * bw + ay * bz - az * by
    cy = aw * by - ax * bz + ay * bw + az * bx
    cz = aw * bz + ax * by - ay * bx + az * bw
    n = math.sqrt(cw * cw + cx * cx + cy * cy + cz * cz)
    rot[i, 0], rot[i, 1], rot[i, 2], rot[i, 3] = cw / n, cx / n, cy / n, cz / n


@njit(cache=True, nogil=True)
def increment_nodes(u, rot, dn):
    """Add the nodal increment ``dn (n, 6)`` (State.increment, 3D, no additive nodes).

    Translations added; a node with a nonzero spin turned by it, the others' quaternions kept.
    """
    for i in range(u.shape[0]):
        u[i, 0] += dn[i, 0]
        u[i, 1] += dn[i, 1]
        u[i, 2] += dn[i, 2]
        if dn[i, 3] != 0.0 or dn[i, 4] != 0.0 or dn[i, 5] != 0.0:
            turn(rot, i, dn[i, 3], dn[i, 4], dn[i, 5])


@njit(cache=True, nogil=True)
def nodal(x, free_node, free_slot, dn):
    """``dn (n, 6)``: the correction ``x`` of the unknowns at the nodes (DofMap.to_nodal)."""
    dn[:] = 0.0
    for k in range(x.shape[0]):
        dn[free_node[k], free_slot[k]] = x[k]


@njit(cache=True, nogil=True)
def correction_ratio(X, u, rot, x, free_node, free_slot, psi, q):
    """``|x| / |q|``, ``q`` the positions at ``u, rot`` (NormTest.correction's ratio)."""
    positions(X, u, rot, free_node, free_slot, psi, q)
    x2, q2 = 0.0, 0.0
    for i in range(x.shape[0]):
        x2 += x[i] * x[i]
        q2 += q[i] * q[i]
    return nk.ratio(math.sqrt(x2), math.sqrt(q2))


@njit(cache=True, nogil=True)
def factor_at(X, u, rot, free_node, free_slot, indptr, indices, K, kind, eps, pos, order, ab,
              kl, null, psi, q, absKq, scale_rows, floor):
    """:func:`fem.solvers.newton_kernel.factor_at` with the 3D positions (:func:`positions`).

    The matrix norm :func:`fem.solvers.newton_kernel.solve` takes, or -1.0 at a null pivot.
    """
    positions(X, u, rot, free_node, free_slot, psi, q)
    nk.floors(indptr, indices, K, q, kind, eps, absKq, floor)
    norm = fill(indptr, K, pos, order, ab, scale_rows)
    if factor(ab, kl, scale_rows, null):
        return -1.0
    return norm


@njit(cache=True, nogil=True)
def chord_fit(u, dn, conn, chord0, w, where, fit0, fit1, fit2, rhs, Y):
    """``Y (n, 3)``: ChordFit's translations of the nodal correction ``dn (n, 6)`` at ``u``.

    ``where (3, n)``: per direction each node's row in the band LU of the free nodes'
    Laplacian ``fit0``, ``fit1``, ``fit2`` (``(ab, kl, order)``), -1 for the held nodes
    (:func:`fem.analysis.bent.held_nodes`), whose translation stays ``dn``'s.
    """
    chord_rhs(u, dn, conn, chord0, w, rhs)
    for i in range(dn.shape[0]):
        Y[i, 0], Y[i, 1], Y[i, 2] = dn[i, 0], dn[i, 1], dn[i, 2]
    _fit_direction(0, where[0], fit0[0], fit0[1], fit0[2], conn, w, rhs, dn, Y)
    _fit_direction(1, where[1], fit1[0], fit1[1], fit1[2], conn, w, rhs, dn, Y)
    _fit_direction(2, where[2], fit2[0], fit2[1], fit2[2], conn, w, rhs, dn, Y)


@njit(cache=True, nogil=True)
def _bent_nodes(u, rot, Y, dn, ut, rt):
    """``ut, rt``: ``u, rot`` moved by the bent translations ``Y`` and the spins of ``dn``."""
    ut[:] = u
    rt[:] = rot
    for i in range(u.shape[0]):
        ut[i, 0] += Y[i, 0]
        ut[i, 1] += Y[i, 1]
        ut[i, 2] += Y[i, 2]
        if dn[i, 3] != 0.0 or dn[i, 4] != 0.0 or dn[i, 5] != 0.0:
            turn(rt, i, dn[i, 3], dn[i, 4], dn[i, 5])


@njit(cache=True, nogil=True)
def _taken(ut, rt, u, rot, beams, edofs, slot, f_e, K_e, fe, fint, fint_t, r_t, K, n_free,
           r_norm):
    """Whether the trial ``ut, rt`` lowers the residual norm to ``r_norm``; then it is taken.

    Its residual goes to ``r_t``; taken, it is copied into ``u, rot`` and its forces into
    ``fint``. ``beams``: ``(conn, chord0, E0, l0, Sc, coef, ij)``.
    """
    conn, chord0, E0, l0, Sc, coef, ij = beams
    evaluate(ut, rt, conn, chord0, E0, l0, Sc, coef, ij, edofs, slot, False, f_e, K_e, fint_t,
             K)
    for i in range(r_t.shape[0]):
        r_t[i] = fint_t[i] - fe[i]
    if _norm(r_t, n_free) > r_norm:
        return False
    u[:] = ut
    rot[:] = rt
    fint[:] = fint_t
    return True


@njit(cache=True, nogil=True)
def increment(X, u, rot, beams, edofs, slot, fe, kind, n_free, lever, free_node, free_slot,
              indptr, indices, pos, order, ab, kl, w, where, fits, settings, r, norms, signs,
              counts):
    """Iterate ``u (n, 3)``, ``rot (n, 4)`` to equilibrium with the external forces ``fe``.

    ``beams``: ``(conn, chord0, E0, l0, Sc, coef, ij)``; ``fits``: the three directions' chord
    Laplacians (:func:`chord_fit`). ``settings``: rtol, atol, max_iterations, round_off, eps,
    NULL_PIVOT, REFINE_ABOVE, MAX_REFINEMENTS, POOR_BACKWARD_ERROR, TRUST. Returns ``(status,
    iterations)``; ``r`` holds the last residual (every active row: the reactions), ``norms``
    the residual norm of each iteration, ``signs[k]`` the determinant's sign of the ``k``-th
    factorization (every iteration factors), ``counts``: the factorizations and the bent
    corrections.
    """
    conn, chord0, E0, l0, Sc, coef, ij = beams
    max_it, eps, null = int(settings[2]), settings[4], settings[5]
    refine_above, max_refine, poor = settings[6], int(settings[7]), settings[8]
    trust = settings[9]
    n, n_act, E, nnz = u.shape[0], r.shape[0], l0.shape[0], indices.shape[0]
    f_e, K_e = np.empty((E, 12)), np.empty((E, 12, 12))
    fint, fint_t, r_t = np.empty(n_act), np.empty(n_act), np.empty(n_act)
    K = np.empty(nnz)
    ut, rt = np.empty_like(u), np.empty_like(rot)
    dn, Y, rhs, psi = np.zeros((n, 6)), np.empty((n, 3)), np.empty((n, 3)), np.empty((n, 3))
    b, prev, floor, q, absKq, scale_rows, x, y, res = nk.scratch(n_free)
    reference = np.zeros(NBLOCKS)
    counts[0] = counts[1] = 0
    evaluate(u, rot, conn, chord0, E0, l0, Sc, coef, ij, edofs, slot, False, f_e, K_e, fint, K)
    have_tangent = False
    du_ratio = np.inf
    for it in range(max_it + 2):
        for i in range(n_act):
            r[i] = fint[i] - fe[i]
        nk.references(fe, fint, fint, kind, lever, reference)
        status = nk.test(r, kind, n_free, it, reference, settings, du_ratio, norms, b, prev,
                         floor)
        if status != GOING:
            return status, it
        if not have_tangent:                # Newton's with_tangent: the elements again
            evaluate(u, rot, conn, chord0, E0, l0, Sc, coef, ij, edofs, slot, True, f_e, K_e,
                     fint_t, K)
        # --- factor: the round-off floor at this tangent, the band LU, its sign ------------
        norm = factor_at(X, u, rot, free_node, free_slot, indptr, indices, K, kind, eps, pos,
                         order, ab, kl, null, psi, q, absKq, scale_rows, floor)
        if norm < 0.0:
            return FALLBACK, it
        if not nk.solve(ab, kl, order, indptr, indices, K, norm, r, x, y, res, refine_above,
                        max_refine, poor):
            return FALLBACK, it
        signs[counts[0]] = _pivot_sign(ab, kl)
        counts[0] += 1
        r_norm = norms[it]
        # --- correct (StaticStep.correct): straight if it lowers the residual, else bent ----
        nodal(x, free_node, free_slot, dn)
        ut[:] = u
        rt[:] = rot
        increment_nodes(ut, rt, dn)
        if _taken(ut, rt, u, rot, beams, edofs, slot, f_e, K_e, fe, fint, fint_t, r_t, K,
                  n_free, r_norm):
            have_tangent = False
        else:
            counts[1] += 1
            big = 0.0
            for i in range(n_free):
                if free_slot[i] >= 3:
                    big = max(big, abs(x[i]))
            chord_fit(u, dn, conn, chord0, w, where, fits[0], fits[1], fits[2], rhs, Y)
            accepted = False
            if big > trust:                  # a large turn: kept only if it lowers the residual
                _bent_nodes(u, rot, Y, dn, ut, rt)
                if _taken(ut, rt, u, rot, beams, edofs, slot, f_e, K_e, fe, fint, fint_t, r_t,
                          K, n_free, r_norm):
                    have_tangent = False
                    accepted = True
                else:
                    for i in range(n):
                        for j in range(6):
                            dn[i, j] *= trust / big
                    chord_fit(u, dn, conn, chord0, w, where, fits[0], fits[1], fits[2], rhs,
                              Y)
            if not accepted:
                _bent_nodes(u, rot, Y, dn, ut, rt)
                u[:] = ut
                rot[:] = rt
                evaluate(u, rot, conn, chord0, E0, l0, Sc, coef, ij, edofs, slot, True, f_e,
                         K_e, fint, K)
                have_tangent = True
        # --- the correction's size against the positions (NormTest.correction) -------------
        du_ratio = correction_ratio(X, u, rot, x, free_node, free_slot, psi, q)
    return FALLBACK, max_it + 1


@njit(cache=True, nogil=True)
def start(u, rot, beams, edofs, slot, n_active, indptr, pos, order, ab, kl, null):
    """The sign of the determinant of the tangent at the step's start, or 0 for the general path.

    StaticStep._check_start: 0 where the tangent is not finite or has a null pivot (the general
    path then says why).
    """
    conn, chord0, E0, l0, Sc, coef, ij = beams
    E = l0.shape[0]
    K = np.empty(pos.shape[0])
    evaluate(u, rot, conn, chord0, E0, l0, Sc, coef, ij, edofs, slot, True, np.empty((E, 12)),
             np.empty((E, 12, 12)), np.empty(n_active), K)
    for p in range(K.shape[0]):
        if not abs(K[p]) < np.inf:
            return 0
    scale = np.empty(ab.shape[0])
    fill(indptr, K, pos, order, ab, scale)
    if factor(ab, kl, scale, null):
        return 0
    return _pivot_sign(ab, kl)
