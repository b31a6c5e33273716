"""The Newton iterations of one generalized-alpha time step of a planar beam model, compiled.

What :meth:`fem.solvers.newton.Newton.iterate` does on :class:`fem.analysis.dynamic.TimeStep`
with :meth:`fem.integrators.alpha.GeneralizedAlpha.evaluate` (Chung & Hulbert 1993, eqs. 10-12:
equilibrium at the interpolated times, Newmark's updates) on a model of 2D beams and nodal
inertia, written out in one loop as :mod:`fem.integrators.planar_newton_kernel` does it for the
energy-conserving step: :func:`rates` (Newmark's accelerations and velocities of
:func:`fem.integrators.base.newmark_rates`, 2D, and the nodal inertial forces ``M a`` of
:meth:`fem.inertia.nodal.NodalInertia.newmark_force`), the beams' forces and tangents at the end
of the step (:func:`fem.integrators.planar_kernel.evaluate`, the static increment's), the
residual ``(1 - alpha_m) M a1 + alpha_m M a0 + (1 - alpha_f) (f_int - f_ext)_1 + alpha_f (f_int -
f_ext)_0`` and its tangent ``(1 - alpha_f) K + (1 - alpha_m) M / (beta h^2)``, then the test,
floors, banded factorization, refined solve and correction the compiled steps share
(:mod:`fem.solvers.newton_kernel`). Nothing here is new arithmetic: the rates and the residual
are written in numpy's order of operations; ``tests/test_planar_alpha.py`` compares whole runs
with the general path. Anything but a plain convergence returns :data:`FALLBACK`.
"""

import math

import numpy as np

from fem.kernels import configure_cache

configure_cache()                  # before the njit decorators: the source-keyed cache folder

from numba import njit  # noqa: E402

from fem.integrators.planar_kernel import evaluate  # noqa: E402
from fem.integrators.planar_run_kernel import NOT_FINITE, pairwise_sum, predict  # noqa: E402
from fem.solvers import newton_kernel as nk  # noqa: E402
from fem.solvers.newton_kernel import CONVERGED, FALLBACK, GOING, NBLOCKS  # noqa: E402, F401


@njit(cache=True, nogil=True)
def rates(u0, u1, rot0, rot1, v0, a0, h, beta, gamma, mass, index, inc, v1, a1, f_in):
    """Newmark's rates of ``s1`` and the nodal inertial forces (``n`` nodes, slots ux, uy, rz).

    ``inc (n, 3)``: the increment (``dx, dy``, the angle's); ``a1 = (inc - h v0 - h^2 (1/2 -
    beta) a0) / (beta h^2)``, ``v1 = v0 + h ((1 - gamma) a0 + gamma a1)`` in numpy's order of
    :func:`fem.integrators.base.newmark_rates`; ``f_in (n_active,)``: ``mass * a1`` at the
    active slots (``index (n, 3)``, -1 where inactive), every other entry zero.
    """
    c0 = h * h * (0.5 - beta)
    c1 = beta * h * h
    f_in[:] = 0.0
    for i in range(u0.shape[0]):
        inc[i, 0] = u1[i, 0] - u0[i, 0]
        inc[i, 1] = u1[i, 1] - u0[i, 1]
        inc[i, 2] = rot1[i] - rot0[i]
        for j in range(3):
            a = (inc[i, j] - h * v0[i, j] - c0 * a0[i, j]) / c1
            a1[i, j] = a
            v1[i, j] = v0[i, j] + h * ((1 - gamma) * a0[i, j] + gamma * a)
            k = index[i, j]
            if k >= 0:
                f_in[k] = mass[i, j] * a


@njit(cache=True, nogil=True)
def strain_energy(u, rot, conn, chord0, l0, Sc, Hc):
    """The beams' strain energy ``sum 1/2 eps^T S eps`` at ``u, rot`` (Beam.energy).

    The frame and Meijaard's strains of :func:`fem.elements.beam.beam2d_kernel.chunk`.
    """
    total = 0.0
    for e in range(l0.shape[0]):
        le = l0[e]
        n0, n1 = conn[e, 0], conn[e, 1]
        h11, h12, h22 = Hc[e, 0], Hc[e, 1], Hc[e, 2]
        cx, cy = chord0[e, 0], chord0[e, 1]
        c = math.sqrt(cx * cx + cy * cy)
        cx, cy = cx / c, cy / c
        dx = chord0[e, 0] + (u[n1, 0] - u[n0, 0])
        dy = chord0[e, 1] + (u[n1, 1] - u[n0, 1])
        l = math.sqrt(dx * dx + dy * dy)
        ex, ey = dx / l, dy / l
        psi = math.atan2(cx * ey - cy * ex, cx * ex + cy * ey)
        a = rot[n0] - psi
        p = math.atan2(math.sin(a), math.cos(a))
        a = rot[n1] - psi
        r = math.atan2(math.sin(a), math.cos(a))
        eps0 = (l - le) + 0.5 * (h11 * p * p + 2 * h12 * p * r + h22 * r * r)
        eps1, eps2 = -le * p, le * r
        total += 0.5 * (Sc[e, 0] * eps0 * eps0 + eps1 * (Sc[e, 1] * eps1 + Sc[e, 2] * eps2)
                        + eps2 * (Sc[e, 2] * eps1 + Sc[e, 3] * eps2))
    return total


@njit(cache=True, nogil=True)
def tangent_of(K, one_minus_af, mass_k, rows):
    """``K <- (1 - alpha_f) K + (1 - alpha_m) M / (beta h^2)``: ``mass_k (n, 3)`` the latter.

    ``rows (n, 3)``: the CSR position of each slot's diagonal entry, -1 where not free.
    """
    for p in range(K.shape[0]):
        K[p] = one_minus_af * K[p]
    for i in range(rows.shape[0]):
        for j in range(3):
            p = rows[i, j]
            if p >= 0:
                K[p] += mass_k[i, j]


@njit(cache=True, nogil=True)
def step(X, u0, u1, rot0, rot1, v0, v1, a0, a1, h, coefficients, mass, mass_k, index,
         conn, chord0, l0, Sc, Hc, edofs, slot, f_e, K_e, f0, fe, kind, n_free, lever,
         free_node, free_slot, diag_rows, indptr, indices, pos, order, ab, kl, settings, inc,
         f_in, f_int, r, norms, K, reference_out, tangent_out, energy_out):
    """Iterate ``u1, rot1`` (and ``v1, a1``) to the time step's equilibrium in place.

    ``coefficients``: alpha_m, alpha_f, beta, gamma; ``f0 (3, n_active)``: the inertial,
    internal and external forces at the step's start; ``fe``: the external forces at its end;
    ``mass_k (n, 3)``: ``(1 - alpha_m) (mass / (beta h^2))``. ``settings`` as in
    :func:`fem.integrators.planar_newton_kernel.step`. Returns ``(status, iterations)``; ``r``
    holds the last residual (every active row: the reactions), ``f_in`` and ``f_int`` the
    inertial and internal forces of the last evaluation, ``norms`` the residual norm of each
    iteration, ``reference_out`` the last references of the blocks, ``K`` the last tangent
    computed (``tangent_out[0]``: 1 if at the last evaluation), ``energy_out[0]`` the strain
    energy of the state converged on (:func:`strain_energy`). As Newton's loop does, an
    evaluation after a correction at round-off (``|du| <= 1e-8 |x|``), or one that will reuse
    the factorization (modified Newton), computes no tangent unless the test then asks for one.
    """
    return step_with(
        X, u0, u1, rot0, rot1, v0, v1, a0, a1, h, coefficients, mass, mass_k, index,
        conn, chord0, l0, Sc, Hc, edofs, slot, f_e, K_e, f0, fe, kind, n_free, lever,
        free_node, free_slot, diag_rows, indptr, indices, pos, order, ab, kl, settings, inc,
        f_in, f_int, r, norms, K, reference_out, tangent_out, energy_out,
        step_work(n_free, r.shape[0], K.shape[0]))


@njit(cache=True, nogil=True)
def step_work(n_free, n_act, nnz):
    """:func:`step_with`'s work arrays (a run of steps makes them once, not once a step).

    ``b, prev, floor (4,)``, ``q, absKq, scale_rows, x, y, res (n_free,)`` of
    :func:`fem.solvers.newton_kernel.scratch`; a second evaluation's forces ``f_K
    (n_active,)``; the factored tangent ``Kf (nnz,)``; the work arrays of
    :func:`fem.solvers.newton_kernel.work` (``rowmax, rhs, dx, x_new, r_new``, ``squares
    (4,)``, ``own (3 * 4,)`` flat).
    """
    b, prev, floor, q, absKq, scale_rows, x, y, res = nk.scratch(n_free)
    rowmax, rhs, dx, x_new, r_new, squares, own = nk.work(n_free)
    return (b, prev, floor, q, absKq, scale_rows, x, y, res, np.empty(n_act), np.empty(nnz),
            rowmax, rhs, dx, x_new, r_new, squares, own.reshape(-1))


@njit(cache=True, nogil=True)
def step_with(X, u0, u1, rot0, rot1, v0, v1, a0, a1, h, coefficients, mass, mass_k, index,
              conn, chord0, l0, Sc, Hc, edofs, slot, f_e, K_e, f0, fe, kind, n_free, lever,
              free_node, free_slot, diag_rows, indptr, indices, pos, order, ab, kl, settings, inc,
              f_in, f_int, r, norms, K, reference_out, tangent_out, energy_out, work):
    """:func:`step` in the work arrays ``work`` of :func:`step_work`, made beforehand."""
    am, af, beta, gamma = coefficients[0], coefficients[1], coefficients[2], coefficients[3]
    max_it, eps, null = int(settings[2]), settings[4], settings[5]
    refine_above, max_refine, poor = settings[6], int(settings[7]), settings[8]
    modified, contraction = settings[9] != 0.0, settings[10]
    n_act = r.shape[0]
    (b, prev, floor, q, absKq, scale_rows, x, y, res, f_K, Kf, rowmax, rhs, dx, x_new, r_new,
     squares, own_flat) = work
    own = own_flat.reshape((3, NBLOCKS))
    b[:] = 0.0                         # as nk.scratch makes them
    prev[:] = 0.0
    floor[:] = 0.0
    norm = 0.0
    stale = True                       # a tangent to factor at the next iteration
    du_ratio = np.inf
    for it in range(max_it + 2):
        # --- evaluate (GeneralizedAlpha.evaluate) ---------------------------------------------
        rates(u0, u1, rot0, rot1, v0, a0, h, beta, gamma, mass, index, inc, v1, a1, f_in)
        tangent = stale and not du_ratio <= 1e-8
        evaluate(u1, rot1, conn, chord0, l0, Sc, Hc, edofs, slot, tangent, f_e, K_e, f_int, K)
        if tangent:
            tangent_of(K, 1 - af, mass_k, diag_rows)
        tangent_out[0] = 1 if tangent else 0
        for i in range(n_act):
            r[i] = ((1 - am) * f_in[i] + am * f0[0, i] + (1 - af) * (f_int[i] - fe[i])
                    + af * (f0[1, i] - f0[2, i]))
        nk.references_into(f_in, f_int, fe, kind, lever, reference_out, own)
        # --- the convergence test (NormTest.converged) --------------------------------------
        status = nk.test(r, kind, n_free, it, reference_out, settings, du_ratio, norms, b, prev,
                         floor)
        if status != GOING:
            if status == CONVERGED:
                energy_out[0] = strain_energy(u1, rot1, conn, chord0, l0, Sc, Hc)
            return status, it
        if modified and not stale and it >= 1 and norms[it] > contraction * norms[it - 1]:
            stale = True                 # the old tangent no longer contracts: a new one
        if stale:
            if not tangent:                  # the tangent after all (Newton's with_tangent)
                evaluate(u1, rot1, conn, chord0, l0, Sc, Hc, edofs, slot, True, f_e, K_e, f_K,
                         K)
                tangent_of(K, 1 - af, mass_k, diag_rows)
                tangent_out[0] = 1
            # --- factor: the round-off floor at this tangent (StepBase.floors), banded LU ----
            norm = nk.factor_at_into(X, u1, rot1, free_node, free_slot, indptr, indices, K, kind,
                                     eps, pos, order, ab, kl, null, q, absKq, scale_rows, floor,
                                     squares, rowmax)
            if norm < 0.0:
                return FALLBACK, it
            Kf[:] = K
            stale = not modified
        # --- solve (BandedLU.solve), correct (System.update_unknowns, 2D) --------------------
        if not nk.solve_into(ab, kl, order, indptr, indices, Kf, norm, r, x, y, res,
                             refine_above, max_refine, poor, rhs, dx, x_new, r_new):
            return FALLBACK, it              # the general path keeps the record of it
        nk.correct(u1, rot1, x, free_node, free_slot)
        du_ratio = nk.correction_ratio(X, u1, rot1, x, free_node, free_slot, q)
    return FALLBACK, max_it + 1


@njit(cache=True, nogil=True)
def run(k, F, fixed, u0, rot0, v0, a0, u1, rot1, v1, a1, its, step_norms, strain, work, cwork,
        f0, fe, fnod, prod, X, h, coefficients, mass, mass_k, index, conn, chord0, l0, Sc, Hc,
        edofs, slot, f_e, K_e, kind, n_free, lever, free_node, free_slot, diag_rows, indptr,
        indices, pos, order, ab, kl, settings, inc, f_in, f_int, r, norms, K, reference_out,
        tangent_out, energy_out):
    """Up to ``k`` generalized-alpha time steps of size ``h``; returns ``(steps done, status)``.

    Several time steps in one call (issue 32), as :func:`fem.integrators.planar_run_kernel.run`
    takes them for the energy-conserving step, each the step-by-step path's operations in its
    order: the start forces of :meth:`fem.integrators.alpha.GeneralizedAlpha.start_step`
    (``f0 (3, n_active)``: ``M a0`` gathered, the beams' internal forces by
    :func:`~fem.integrators.planar_kernel.evaluate`, the loads at the start), the predictor
    ``d_n + h v_n`` with the supports held (:meth:`fem.analysis.dynamic.DynamicStep._predict`),
    :func:`step`, the loads' work ``sum((f(t_n) + f(t_n+1)) / 2 * inc)`` as numpy sums it
    (:func:`~fem.integrators.planar_run_kernel.pairwise_sum`,
    :meth:`~fem.integrators.alpha.GeneralizedAlpha.finish`), the reactions' work on the supports
    and the finiteness check of :meth:`~fem.analysis.dynamic.DynamicStep._newton`, and the commit.

    ``F (k + 1, n, 3)`` the external forces at the steps' ends, ``fixed (n, 3)`` the supported
    slots; ``u1, rot1, v1, a1`` the trial state (scratch); ``fe, fnod, prod`` scratch. Per
    converged step ``j``: ``its[j]``, ``step_norms[j, :its[j] + 1]``, ``strain[j]``,
    ``work[j]``, ``cwork[j]``. ``r``, ``norms``, ``K``, ``reference_out``, ``tangent_out``: the
    last step's, as :func:`step` leaves them. The status is ``CONVERGED`` after ``k`` steps,
    else the failing step's (not committed): :func:`step`'s or
    :data:`fem.integrators.planar_run_kernel.NOT_FINITE`; the other arguments are
    :func:`step`'s.
    """
    n = u0.shape[0]
    n_act = r.shape[0]
    incs = np.zeros(n_act)             # the increment gathered (DofMap.from_nodal)
    arrays = step_work(n_free, n_act, K.shape[0])     # the step's work arrays, once a run
    for j in range(k):
        # --- the start forces (GeneralizedAlpha.start_step) -------------------------------------
        for m in range(n_act):
            f0[0, m] = 0.0
            f0[2, m] = 0.0
            fe[m] = 0.0
        for i in range(n):
            for s in range(3):
                m = index[i, s]
                if m >= 0 and m < n_act:
                    f0[0, m] = mass[i, s] * a0[i, s]
                    f0[2, m] = F[j, i, s]
                    fe[m] = F[j + 1, i, s]
        evaluate(u0, rot0, conn, chord0, l0, Sc, Hc, edofs, slot, False, f_e, K_e, f0[1], K)
        # --- the predictor d_n + h v_n, supports held (DynamicStep._predict) ------------------
        predict(u0, rot0, v0, fixed, h, u1, rot1)
        v1[:, :] = v0
        a1[:, :] = a0
        status, it = step_with(
            X, u0, u1, rot0, rot1, v0, v1, a0, a1, h, coefficients, mass, mass_k, index, conn,
            chord0, l0, Sc, Hc, edofs, slot, f_e, K_e, f0, fe, kind, n_free, lever, free_node,
            free_slot, diag_rows, indptr, indices, pos, order, ab, kl, settings, inc, f_in,
            f_int, r, norms, K, reference_out, tangent_out, energy_out, arrays)
        if status != CONVERGED:
            return j, status
        # --- finish: the loads' work, the reactions' (GeneralizedAlpha.finish, _newton) -------
        for i in range(n):
            for s in range(3):
                fnod[3 * i + s] = 0.5 * (F[j, i, s] + F[j + 1, i, s])
                prod[3 * i + s] = fnod[3 * i + s] * inc[i, s]
        w = pairwise_sum(prod, 0, 3 * n)
        e = energy_out[0]
        for i in range(n):
            for s in range(3):
                m = index[i, s]
                if m >= 0 and m < n_act:
                    incs[m] = inc[i, s]
        c = 0.0
        for m in range(n_free, n_act):
            c += r[m] * incs[m]
        total = 0.0
        for i in range(n):
            for s in range(3):
                total += u1[i, s] + v1[i, s] + a1[i, s]
            total += rot1[i]
        for m in range(n_act):
            total += r[m]
        if not np.isfinite(total + e + w + c):
            return j, NOT_FINITE
        # --- commit (State.assign) -------------------------------------------------------------
        u0[:, :] = u1
        rot0[:] = rot1
        v0[:, :] = v1
        a0[:, :] = a1
        its[j] = it
        step_norms[j, :it + 1] = norms[:it + 1]
        strain[j] = e
        work[j] = w
        cwork[j] = c
    return k, CONVERGED
