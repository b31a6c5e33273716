"""The Newton iterations of one load-control increment of a planar beam model, compiled.

What :meth:`fem.solvers.newton.Newton.iterate` does on :class:`fem.analysis.static.StaticStep`
(load control, no line search) for a model of 2D co-rotational beams, written out in one loop:
evaluate (:func:`fem.elements.beam.beam2d_kernel.chunk`, scattered into the residual and the CSR
values), the convergence test, factor (banded LU, the determinant's sign for the limit-point
watch), solve, and correct as :meth:`~fem.analysis.static.StaticStep.correct` does: the straight
correction when it lowers the residual, else the bent one (:class:`fem.analysis.bent.ChordFit`:
the chords' least-squares fit, its Laplacian factored as a band), scaled to
:data:`~fem.analysis.bent.TRUST` where it turns nodes further and still raises the residual. The
test, references, floors and checked solve are :mod:`fem.solvers.newton_kernel`'s, shared with
the compiled time step. Anything but a plain convergence returns :data:`FALLBACK`: the step runs
the increment again through the general path, which reports or cuts back
(:mod:`fem.analysis.planar_static`).
"""

import math

import numpy as np

from fem.kernels import configure_cache

configure_cache()                  # before the njit decorators: the source-keyed cache folder

from numba import njit  # noqa: E402

from fem.elements.beam.beam2d_kernel import chunk as static_chunk  # noqa: E402
from fem.integrators.planar_kernel import evaluate, scatter, scatter_tangent  # noqa: E402
from fem.solvers import newton_kernel as nk  # noqa: E402
from fem.solvers.banded_kernel import apply, factor, fill  # noqa: E402
from fem.solvers.newton_kernel import CONVERGED, FALLBACK, GOING, NBLOCKS  # noqa: E402, F401


@njit(cache=True, nogil=True)
def _fit_direction(k, where, ab, kl, order, conn, w, rhs, dn, Y):
    """``Y[:, k]`` at the free nodes: the chords' Laplacian solved, held nodes at ``dn``'s.

    ``where (n,)``: each node's row in the factored band ``ab`` (-1: held); a beam from a free
    to a held node puts the held node's ``w dn`` on the free node's row.
    """
    m = ab.shape[0]
    _fit_direction_into(k, where, ab, kl, order, conn, w, rhs, dn, Y, np.empty(m), np.empty(m),
                        np.empty(m))


@njit(cache=True, nogil=True)
def _fit_direction_into(k, where, ab, kl, order, conn, w, rhs, dn, Y, b, x, y):
    """:func:`_fit_direction` in the work arrays ``b, x, y`` (at least as long as ``ab``)."""
    m = ab.shape[0]
    if m == 0:
        return
    b, x, y = b[:m], x[:m], y[:m]
    for i in range(where.shape[0]):
        if where[i] >= 0:
            b[where[i]] = rhs[i, k]
    for e in range(conn.shape[0]):
        ja, jb = where[conn[e, 0]], where[conn[e, 1]]
        if ja >= 0 and jb < 0:
            b[ja] += w[e] * dn[conn[e, 1], k]
        elif jb >= 0 and ja < 0:
            b[jb] += w[e] * dn[conn[e, 0], k]
    apply(ab, kl, order, b, x, y)
    for i in range(where.shape[0]):
        if where[i] >= 0:
            Y[i, k] = x[where[i]]


@njit(cache=True, nogil=True)
def chord_fit(u, dn, conn, chord0, w, where, fit0, fit1, Y):
    """``Y (n, 2)``: ChordFit's translations of the nodal correction ``dn (n, 3)`` at ``u``.

    ``where (2, n)``: per direction each node's row in the band LU of the free nodes'
    Laplacian, ``fit0``, ``fit1`` (``(ab, kl, order)``), -1 for the held nodes
    (:func:`fem.analysis.bent.held_nodes`), whose translation stays ``dn``'s.
    """
    n = u.shape[0]
    chord_fit_into(u, dn, conn, chord0, w, where, fit0, fit1, Y, np.empty((n, 2)),
                   np.empty(n), np.empty(n), np.empty(n))


@njit(cache=True, nogil=True)
def chord_fit_into(u, dn, conn, chord0, w, where, fit0, fit1, Y, rhs, b, x, y):
    """:func:`chord_fit` in the work arrays ``rhs (n, 2)``, ``b, x, y (n,)`` (a Newton loop's)."""
    n = u.shape[0]
    rhs[:] = 0.0
    for e in range(conn.shape[0]):          # ChordFit.rhs_numpy, 2D
        n0, n1 = conn[e, 0], conn[e, 1]
        dx = chord0[e, 0] + (u[n1, 0] - u[n0, 0])
        dy = chord0[e, 1] + (u[n1, 1] - u[n0, 1])
        l = math.sqrt(dx * dx + dy * dy)
        ex, ey = dx / l, dy / l
        zx, zy = -ey, ex
        Dx, Dy = dn[n1, 0] - dn[n0, 0], dn[n1, 1] - dn[n0, 1]
        a = ex * Dx + ey * Dy
        ang = (zx * Dx + zy * Dy) / l
        ca, sa = math.cos(ang), math.sin(ang)
        cx = (l + a) * (ca * ex + sa * zx) - dx
        cy = (l + a) * (ca * ey + sa * zy) - dy
        rhs[n1, 0] += w[e] * cx
        rhs[n1, 1] += w[e] * cy
        rhs[n0, 0] -= w[e] * cx
        rhs[n0, 1] -= w[e] * cy
    for i in range(n):
        Y[i, 0], Y[i, 1] = dn[i, 0], dn[i, 1]
    _fit_direction_into(0, where[0], fit0[0], fit0[1], fit0[2], conn, w, rhs, dn, Y, b, x, y)
    _fit_direction_into(1, where[1], fit1[0], fit1[1], fit1[2], conn, w, rhs, dn, Y, b, x, y)


@njit(cache=True, nogil=True)
def _pivot_sign(ab, kl):
    """The sign of the determinant of the factored band (unit ``L``; one ordering for both)."""
    sign = 1
    for j in range(ab.shape[0]):
        if ab[j, kl] < 0.0:
            sign = -sign
    return sign


@njit(cache=True, nogil=True)
def _norm(r, n):
    s = 0.0
    for i in range(n):
        s += r[i] * r[i]
    return math.sqrt(s)


@njit(cache=True, nogil=True)
def _taken(ut, rt, u, rot, conn, chord0, l0, Sc, Hc, edofs, slot, f_e, K_e, fe, fint, fint_t,
           r_t, K, n_free, r_norm):
    """Whether the trial ``ut, rt`` lowers the residual norm to ``r_norm``; then it is taken.

    Its residual goes to ``r_t``; taken, it is copied into ``u, rot``, its forces into ``fint``
    and its tangent into ``K`` (the elements' forces are the same numbers with or without it,
    and the next iteration needs it where the trial is taken: one pass over the elements
    instead of two). The elements' tangents are scattered only then: a trial turned down
    leaves ``K`` the tangent at ``u, rot`` (:func:`fem.integrators.planar_kernel.evaluate`'s
    additions, in its order, either way).
    """
    static_chunk(np.int64(0), l0.shape[0], ut, rt, conn, chord0, l0, Sc, Hc, True, f_e, K_e)
    fint_t[:] = 0.0
    scatter(f_e, K_e, edofs, slot, False, fint_t, K)
    for i in range(r_t.shape[0]):
        r_t[i] = fint_t[i] - fe[i]
    if _norm(r_t, n_free) > r_norm:
        return False
    u[:] = ut
    rot[:] = rt
    fint[:] = fint_t
    K[:] = 0.0
    scatter_tangent(K_e, slot, K)
    return True


@njit(cache=True, nogil=True)
def increment(X, u, rot, conn, chord0, l0, Sc, Hc, edofs, slot, fe, kind, n_free, lever,
              free_node, free_slot, indptr, indices, pos, order, ab, kl, w, where, fit0, fit1,
              settings, r, norms, signs, counts):
    """Iterate ``u, rot`` to equilibrium with the external forces ``fe`` in place.

    ``settings``: rtol, atol, max_iterations, round_off, eps, NULL_PIVOT,
    REFINE_ABOVE, MAX_REFINEMENTS, POOR_BACKWARD_ERROR, TRUST. Returns ``(status,
    iterations)``; ``r`` holds the last residual (every active row: the reactions), ``norms``
    the residual norm of each iteration, ``signs[k]`` the determinant's sign of the ``k``-th
    factorization (taken at iteration ``k``: every iteration factors), ``counts``: the
    factorizations and the bent corrections.
    """
    work = scratch(u.shape[0], r.shape[0], l0.shape[0], indices.shape[0], n_free)
    return _newton(X, u, rot, conn, chord0, l0, Sc, Hc, edofs, slot, fe, kind, n_free, lever,
                   free_node, free_slot, indptr, indices, pos, order, ab, kl, w, where, fit0,
                   fit1, settings, r, norms, signs, counts, work, True)


@njit(cache=True, nogil=True)
def scratch(n, n_act, E, nnz, n_free):
    """The work arrays of :func:`increment`, made once for all of :func:`increments`.

    ``n`` nodes, ``n_act`` active rows, ``E`` beams, ``nnz`` tangent entries.
    """
    return ((np.empty((E, 6)), np.empty((E, 6, 6)), np.empty(n_act), np.empty(n_act),
             np.empty(n_act), np.empty(nnz), np.empty((n, 3)), np.empty(n), np.zeros((n, 3)),
             np.empty((n, 2)), np.zeros(NBLOCKS), np.empty((n, 2)), np.empty((3, n))),
            nk.scratch(n_free), nk.work(n_free))


@njit(cache=True, nogil=True)
def _newton(X, u, rot, conn, chord0, l0, Sc, Hc, edofs, slot, fe, kind, n_free, lever,
            free_node, free_slot, indptr, indices, pos, order, ab, kl, w, where, fit0, fit1,
            settings, r, norms, signs, counts, work, fresh):
    """:func:`increment` in the work arrays ``work`` (:func:`scratch`).

    Every array is written before it is read, but the test's (``b``, ``prev``, ``floor``) and
    the references, which start at zero as freshly made ones do, and, with ``fresh`` false,
    the internal forces and tangent at ``u, rot`` (``work``'s ``fint`` and ``K``): a converged
    :func:`_newton` leaves them there, and the next increment starts where it ended
    (:func:`increments`), so they are not evaluated again.
    """
    max_it, eps, null = int(settings[2]), settings[4], settings[5]
    refine_above, max_refine, poor = settings[6], int(settings[7]), settings[8]
    trust = settings[9]
    n, n_act = u.shape[0], r.shape[0]
    f_e, K_e, fint, fint_t, r_t, K, ut, rt, dn, Y, reference, rhs_fit, bxy = work[0]
    shared, more = work[1], work[2]
    b, prev, floor, q, absKq, scale_rows, x, y, res = shared
    rowmax, rhs, dx, x_new, r_new, squares, own = more
    b[:] = 0.0
    prev[:] = 0.0
    floor[:] = 0.0
    reference[:] = 0.0
    counts[0] = counts[1] = 0
    # forces and tangent in one pass: the forces are the same numbers, and the first iteration
    # factors this tangent (Newton's with_tangent) unless the start has converged already
    if fresh:
        evaluate(u, rot, conn, chord0, l0, Sc, Hc, edofs, slot, True, f_e, K_e, fint, K)
    have_tangent = True
    du_ratio = np.inf
    for it in range(max_it + 2):
        for i in range(n_act):
            r[i] = fint[i] - fe[i]
        nk.references_into(fe, fint, fint, kind, lever, reference, own)
        status = nk.test(r, kind, n_free, it, reference, settings, du_ratio, norms, b, prev,
                      floor)
        if status != GOING:
            return status, it
        if not have_tangent:                # Newton's with_tangent: the elements again
            evaluate(u, rot, conn, chord0, l0, Sc, Hc, edofs, slot, True, f_e, K_e, fint_t, K)
        # --- factor: the round-off floor at this tangent, the band LU, its sign ------------
        norm = nk.factor_at_into(X, u, rot, free_node, free_slot, indptr, indices, K, kind, eps,
                                 pos, order, ab, kl, null, q, absKq, scale_rows, floor, squares,
                                 rowmax)
        if norm < 0.0:
            return FALLBACK, it
        if not nk.solve_into(ab, kl, order, indptr, indices, K, norm, r, x, y, res, refine_above,
                             max_refine, poor, rhs, dx, x_new, r_new):
            return FALLBACK, it
        signs[counts[0]] = _pivot_sign(ab, kl)
        counts[0] += 1
        r_norm = norms[it]
        # --- correct (StaticStep.correct): straight if it lowers the residual, else bent ----
        ut[:] = u
        rt[:] = rot
        nk.correct(ut, rt, x, free_node, free_slot)
        if _taken(ut, rt, u, rot, conn, chord0, l0, Sc, Hc, edofs, slot, f_e, K_e, fe, fint,
                  fint_t, r_t, K, n_free, r_norm):
            have_tangent = True             # _taken evaluated the tangent there
        else:
            counts[1] += 1
            dn[:] = 0.0
            big = 0.0
            for i in range(n_free):
                dn[free_node[i], free_slot[i]] = x[i]
                if free_slot[i] == 2:
                    big = max(big, abs(x[i]))
            chord_fit_into(u, dn, conn, chord0, w, where, fit0, fit1, Y, rhs_fit, bxy[0],
                           bxy[1], bxy[2])
            accepted = False
            if big > trust:                  # a large turn: kept only if it lowers the residual
                for i in range(n):
                    ut[i, 0] = u[i, 0] + Y[i, 0]
                    ut[i, 1] = u[i, 1] + Y[i, 1]
                    rt[i] = rot[i] + dn[i, 2]
                if _taken(ut, rt, u, rot, conn, chord0, l0, Sc, Hc, edofs, slot, f_e, K_e, fe,
                          fint, fint_t, r_t, K, n_free, r_norm):
                    have_tangent = True
                    accepted = True
                else:
                    for i in range(n):
                        for j in range(3):
                            dn[i, j] *= trust / big
                    chord_fit_into(u, dn, conn, chord0, w, where, fit0, fit1, Y, rhs_fit, bxy[0],
                                   bxy[1], bxy[2])
            if not accepted:
                for i in range(n):
                    u[i, 0] += Y[i, 0]
                    u[i, 1] += Y[i, 1]
                    rot[i] += dn[i, 2]
                evaluate(u, rot, conn, chord0, l0, Sc, Hc, edofs, slot, True, f_e, K_e, fint, K)
                have_tangent = True
        # --- the correction's size against the positions (NormTest.correction) -------------
        du_ratio = nk.correction_ratio(X, u, rot, x, free_node, free_slot, q)
    return FALLBACK, max_it + 1


@njit(cache=True, nogil=True)
def start(u, rot, conn, chord0, l0, Sc, Hc, edofs, slot, n_active, indptr, pos, order, ab,
          kl, null):
    """The sign of the determinant of the tangent at the step's start, or 0 for the general path.

    StaticStep._check_start: 0 where the tangent is not finite or has a null pivot (the general
    path then says why).
    """
    E = l0.shape[0]
    K = np.empty(pos.shape[0])
    evaluate(u, rot, conn, chord0, l0, Sc, Hc, edofs, slot, True, np.empty((E, 6)),
             np.empty((E, 6, 6)), np.empty(n_active), K)
    for p in range(K.shape[0]):
        if not abs(K[p]) < np.inf:
            return 0
    scale = np.empty(ab.shape[0])
    fill(indptr, K, pos, order, ab, scale)
    if factor(ab, kl, scale, null):
        return 0
    return _pivot_sign(ab, kl)


@njit(cache=True, nogil=True)
def increments(X, u, rot, conn, chord0, l0, Sc, Hc, edofs, slot, held, pattern, kind, n_free,
               lever, free_node, free_slot, indptr, indices, pos, order, ab, kl, w, where, fit0,
               fit1, settings, control, sign0, act_flat, act_pos, U, ROT, R, LAM, ITS, NORMS,
               SIGNS, NSIGNS, BENT, NEAR, INC, FE):
    """Up to ``len(LAM)`` load-control increments from ``u, rot``, each by :func:`increment`.

    What :meth:`fem.analysis.static.StaticStep._increments` does around a load-control
    increment when nothing between two of them needs Python (no frame due, dead loads
    ``held + lam pattern``, no prescribed motions): :class:`fem.solvers.controls.LoadControl`'s
    ``finished``, ``start`` and ``accept`` (with :class:`~fem.solvers.controls.CutBack`'s
    ``success``) in the same floating-point operations. ``control``: sign, end, done, size,
    nominal, grow, fast (negative: every success is fast), failed; ``done`` and ``size`` are
    written back, ``failed`` set to 1 where an increment did not finish. The ``k``-th
    converged increment leaves its state in ``U[k], ROT[k]``, its residual in ``R[k]``, its
    load factor, iterations, norms, factorizations' signs (``NSIGNS[k]`` of them) and bent
    corrections in ``LAM[k]``, ``ITS[k]``, ``NORMS[k]``, ``SIGNS[k]``, ``BENT[k]``, and
    ``NEAR[k]`` whether a sign differs from ``sign0`` at an iterate as close
    to equilibrium as the increment's start (the limit-point watch's test,
    :meth:`~fem.analysis.static.StaticStep._limit_point`); ``INC[k]``, ``FE[k] (n_active,)``:
    its increment from the state before (:func:`fem.integrators.inertia.nodal_increment`
    gathered as :meth:`fem.dofs.DofMap.from_nodal` does, ``act_flat, act_pos`` its active
    slots) and
    its external forces (the work's, :meth:`~fem.analysis.static.StaticStep._work`). Stops at
    the path's end, at an increment too small to change the load factor and at one
    :func:`increment` does not finish (all three the step's to handle); returns the increments
    converged. ``u, rot`` are left as they were.
    """
    sign, end, done, size = control[0], control[1], control[2], control[3]
    nominal, grow, fast = control[4], control[5], control[6]
    fe = np.empty(held.shape[0])
    ut, rt = u.copy(), rot.copy()
    counts = np.zeros(2, dtype=np.int64)
    work = scratch(u.shape[0], R.shape[1], l0.shape[0], indices.shape[0], n_free)
    k = 0
    while k < LAM.shape[0]:
        if done >= end - 1e-14 * end:                  # LoadControl.finished
            break
        size = min(size, end - done)                   # LoadControl.start
        lam = sign * (done + size)
        if lam == sign * done:
            break
        for i in range(fe.shape[0]):                   # StepLoads.force, affine in lam
            fe[i] = held[i] + lam * pattern[i]
        if k > 0:
            ut[:] = U[k - 1]
            rt[:] = ROT[k - 1]
        status, it = _newton(X, ut, rt, conn, chord0, l0, Sc, Hc, edofs, slot, fe, kind,
                             n_free, lever, free_node, free_slot, indptr, indices, pos, order,
                             ab, kl, w, where, fit0, fit1, settings, R[k], NORMS[k], SIGNS[k],
                             counts, work, k == 0)
        if status != CONVERGED:
            control[7] = 1.0
            break
        FE[k] = fe
        INC[k] = 0.0
        for i in range(act_flat.shape[0]):             # from_nodal(nodal_increment(...))
            node, s = act_flat[i] // 3, act_flat[i] % 3
            if s < 2:
                INC[k, act_pos[i]] = ut[node, s] - (U[k - 1, node, s] if k > 0 else u[node, s])
            else:
                INC[k, act_pos[i]] = rt[node] - (ROT[k - 1, node] if k > 0 else rot[node])
        U[k] = ut
        ROT[k] = rt
        LAM[k], ITS[k], NSIGNS[k], BENT[k] = lam, it, counts[0], counts[1]
        near = False
        for j in range(counts[0]):
            if SIGNS[k, j] != sign0 and NORMS[k, j] <= NORMS[k, 0]:
                near = True
        NEAR[k] = near
        done += size                                   # LoadControl.accept, CutBack.success
        if fast < 0 or it <= fast:
            size = min(grow * size, nominal)
        k += 1
    control[2], control[3] = done, size
    return k


@njit(cache=True, nogil=True)
def laplacian(conn, w, where, m):
    """The chords' Laplacian on ``m`` free nodes as CSR ``(indptr, indices, data)``, or ``m < 0``.

    What :func:`fem.analysis.planar_static._laplacian_band` built with scipy, in the same
    additions: the entries in the order ``scipy.sparse.csr_matrix((data, (i, j)))`` takes them
    (``w`` at each free end's diagonal, end ``a`` of every beam first; ``-w`` at both
    off-diagonals of each beam of two free ends), kept in that order within a row (COO to CSR),
    sorted stably by column (``csr_sort_indices``: insertion sort up to 16 entries a row) and
    the duplicates summed left to right (``csr_sum_duplicates``). A row of more than 16 entries
    (a node on more than 8 beams) returns ``indptr`` of length 0: scipy's sort may reorder its
    duplicates, so the caller builds it with scipy.
    """
    E = conn.shape[0]
    rows = np.empty(4 * E, dtype=np.int64)
    cols = np.empty(4 * E, dtype=np.int64)
    vals = np.empty(4 * E)
    k = 0
    for side in range(2):                       # w[on_a] at (ja, ja), then w[on_b] at (jb, jb)
        for e in range(E):
            j = where[conn[e, side]]
            if j >= 0:
                rows[k], cols[k], vals[k] = j, j, w[e]
                k += 1
    for side in range(2):                       # -w at (ja, jb), then at (jb, ja)
        for e in range(E):
            ja, jb = where[conn[e, side]], where[conn[e, 1 - side]]
            if ja >= 0 and jb >= 0:
                rows[k], cols[k], vals[k] = ja, jb, -w[e]
                k += 1
    indptr = np.zeros(m + 1, dtype=np.int64)
    for n in range(k):
        indptr[rows[n] + 1] += 1
    for i in range(m):
        if indptr[i + 1] > 16:
            return np.zeros(0, dtype=np.int64), cols[:0], vals[:0]
        indptr[i + 1] += indptr[i]
    indices = np.empty(k, dtype=np.int64)
    data = np.empty(k)
    nxt = indptr[:-1].copy()
    for n in range(k):                          # coo_tocsr: each row in the input order
        d = nxt[rows[n]]
        indices[d], data[d] = cols[n], vals[n]
        nxt[rows[n]] += 1
    for i in range(m):                          # a stable insertion sort of each row
        for a in range(indptr[i] + 1, indptr[i + 1]):
            c, v = indices[a], data[a]
            b = a - 1
            while b >= indptr[i] and indices[b] > c:
                indices[b + 1], data[b + 1] = indices[b], data[b]
                b -= 1
            indices[b + 1], data[b + 1] = c, v
    nnz, end = 0, 0
    for i in range(m):                          # csr_sum_duplicates
        jj = end
        end = indptr[i + 1]
        while jj < end:
            c, x = indices[jj], data[jj]
            jj += 1
            while jj < end and indices[jj] == c:
                x += data[jj]
                jj += 1
            indices[nnz], data[nnz] = c, x
            nnz += 1
        indptr[i + 1] = nnz
    return indptr, indices[:nnz].copy(), data[:nnz].copy()
