"""Several energy-conserving time steps of a planar beam model in one compiled call (issue 32).

Between two output frames a small model's time step was the compiled Newton loop
(:func:`fem.integrators.planar_newton_kernel.step`, about a quarter of the step's time on the
10-element pendulum) and Python around it: the call with some sixty arguments, the predictor
``d_n + h v_n`` (:meth:`fem.analysis.dynamic.DynamicStep._predict`), state copies, the finish
(:meth:`fem.integrators.planar.PlanarStep.finish`), the energy and work bookkeeping and the
finiteness check (:meth:`~fem.analysis.dynamic.DynamicStep._newton`). :func:`run` does all of it
for ``k`` steps of one size, the same operations in the same order: the predictor, the loads'
mid-step average ``(f(t_n) + f(t_n+1)) / 2`` (evaluated beforehand for the call's times), the
step, the accelerations ``(v_n+1 - v_n) / h``, the strain energy and the loads' work summed as
numpy sums (:func:`pairwise_sum`, numpy's pairwise summation, so the energies agree bit for bit),
the reactions' work on the supports. It returns at the first step that does not converge or is
not finite, with the states of the steps before it committed: the general path
(:meth:`fem.analysis.dynamic.DynamicStep._advance`) takes that step, reports and cuts back.
``tests/test_planar_run.py`` compares whole runs with the step-by-step path.
"""

import numpy as np

from fem.kernels import configure_cache

configure_cache()                  # before the njit decorators: the source-keyed cache folder

from numba import njit  # noqa: E402

from fem.integrators.planar_newton_kernel import (  # noqa: E402
    CONVERGED,
    step_with,
    step_work,
)

NOT_FINITE = 7                     # a converged step whose state or energies are not finite
PW_BLOCKSIZE = 128                 # numpy's (numpy/core/src/umath/loops_utils.h.src)


@njit(cache=True, nogil=True)
def _block_sum(a, lo, n):
    """The ``pairwise_sum`` of numpy on at most 128 values: eight running sums (few: one)."""
    if n < 8:
        res = 0.0
        for i in range(lo, lo + n):
            res += a[i]
        return res
    r0, r1, r2, r3 = a[lo], a[lo + 1], a[lo + 2], a[lo + 3]
    r4, r5, r6, r7 = a[lo + 4], a[lo + 5], a[lo + 6], a[lo + 7]
    i = 8
    while i < n - n % 8:
        j = lo + i
        r0 += a[j]
        r1 += a[j + 1]
        r2 += a[j + 2]
        r3 += a[j + 3]
        r4 += a[j + 4]
        r5 += a[j + 5]
        r6 += a[j + 6]
        r7 += a[j + 7]
        i += 8
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < n:
        res += a[lo + i]
        i += 1
    return res


@njit(cache=True, nogil=True)
def pairwise_sum(a, lo, n):
    """``a[lo:lo + n].sum()`` as numpy sums a contiguous float64 array (pairwise summation).

    Blocks of at most 128 in eight running sums, halves (at multiples of 8) above: numpy's
    ``pairwise_sum`` (``numpy/core/src/umath/loops_utils.h.src``), so that the result is
    numpy's bit for bit. Its recursion is written with a stack (numba's cache does not keep
    recursive functions safely).
    """
    if n <= PW_BLOCKSIZE:
        return _block_sum(a, lo, n)
    # tasks: (start, length) to sum, or length -1: add the last two sums
    t_lo, t_n = np.empty(192, np.int64), np.empty(192, np.int64)
    vals = np.empty(96)
    nt, nv = 1, 0
    t_lo[0], t_n[0] = lo, n
    while nt:
        nt -= 1
        s, m = t_lo[nt], t_n[nt]
        if m < 0:
            nv -= 1
            vals[nv - 1] = vals[nv - 1] + vals[nv]
        elif m <= PW_BLOCKSIZE:
            vals[nv] = _block_sum(a, s, m)
            nv += 1
        else:
            m2 = m // 2
            m2 -= m2 % 8
            t_lo[nt], t_n[nt] = s, -1                     # last: left + right
            t_lo[nt + 1], t_n[nt + 1] = s + m2, m - m2    # then the right half
            t_lo[nt + 2], t_n[nt + 2] = s, m2             # first the left half
            nt += 3
    return vals[0]


@njit(cache=True, nogil=True)
def predict(u0, rot0, v0, fixed, h, u1, rot1):
    """The predictor ``d_n + h v_n`` into ``u1, rot1``, the supported slots held.

    ``fixed (n, 3)``: the supported slots. As :meth:`fem.analysis.dynamic.DynamicStep._predict`
    makes it; the runs of both families take it.
    """
    for i in range(u0.shape[0]):
        for s in range(2):
            p = h * v0[i, s]
            if fixed[i, s]:
                p = 0.0
            u1[i, s] = u0[i, s] + p
        u1[i, 2] = u0[i, 2]
        p = h * v0[i, 2]
        if fixed[i, 2]:
            p = 0.0
        rot1[i] = rot0[i] + p


@njit(cache=True, nogil=True)
def run(k, h, F, fixed, gstart, u0, rot0, v0, a0, mu0, vh0, u1, rot1, v1, mu1, vh1,
        its, step_norms, strain, work, cwork,
        X, on, mass_h, mass_k, index, conn, chord0, l0, Sc, Hc, edofs, slot, f_e, K_e, energy,
        einc, fe, kind, n_free, lever, free_node, free_slot, diag_rows, indptr, indices, pos,
        order, ab, kl, settings, inc, dpsi, um, r, norms, K, reference_out, tangent_out,
        jconn, joffsets, jmpos, jscale, jedofs, jslot, aconn, ampos, ascale, atarget, aedofs,
        aslot, sconn, soffsets, sframe, smpos, sscale, sedofs, sslot, cconn, caxis, cmu,
        cpattern, ud0, cedofs, cslot, ud1, targets, tmid, dslices):
    """Up to ``k`` time steps of size ``h``; returns ``(steps done, status)``.

    From the committed state ``u0, rot0, v0, a0, mu0, vh0`` and the consistent inertia's
    director rates ``ud0`` (:func:`fem.integrators.planar_inertia.director_rates`), which each
    converged step overwrites (``ud0 <- ud1``).

    ``F (k + 1, n, 3)`` the external forces at the steps' ends (:meth:`fem.integrators.base.
    Integrator.external`), ``fixed (n, 3)`` the supported slots (no predictor there),
    ``gstart (groups + 1,)`` each element group's first element (energies are summed per group,
    then added, as :meth:`fem.integrators.planar.PlanarStep.finish` does). ``u1 .. vh1`` the
    trial state's arrays (scratch). Per converged step ``j``: ``its[j]`` its iterations,
    ``step_norms[j, :its[j] + 1]`` its residual norms, ``strain[j]`` the strain energy,
    ``work[j]`` the loads' work, ``cwork[j]`` the reactions' work on the supports and the
    drivers' work. Driven joints: ``targets (k + 1, A)`` the angle rows' ``atarget`` at the
    steps' ends (the Newton loop's, copied in before each step), ``tmid (k, A)`` the drives'
    values at the steps' middles and ``dslices (G, 2)`` each driven group's rows in them: the
    work ``-lambda ((g_1 - f) - (g_0 - f))`` of :meth:`fem.constraints.joint.Joint.drive_work`,
    summed per group and over groups as :meth:`fem.system.System.drive_work` sums. ``norms``,
    ``r``, ``reference_out``, ``K``, ``tangent_out``: the last step's, as
    :func:`~fem.integrators.planar_newton_kernel.step` leaves them. The status is
    ``CONVERGED`` after ``k`` steps, else the failing step's (its state is not committed):
    :func:`~fem.integrators.planar_newton_kernel.step`'s or :data:`NOT_FINITE`. The other
    arguments are :func:`~fem.integrators.planar_newton_kernel.step`'s.
    """
    n = u0.shape[0]
    n_act = r.shape[0]
    two_over_h = 2 / h
    fnod = np.empty(3 * n)             # the step's mid-step loads, flat (n, 3)
    prod = np.empty(3 * n)             # loads times increments, for the work's sum
    arrays = step_work(n_free, n_act, K.shape[0])     # the step's work arrays, once a run
    for j in range(k):
        # --- the predictor d_n + h v_n, supports held (DynamicStep._predict) ------------------
        predict(u0, rot0, v0, fixed, h, u1, rot1)
        v1[:, :] = v0
        mu1[:] = mu0
        atarget[:] = targets[j + 1]         # the drives at the step's end (set_targets)
        # --- the loads' mid-step average (PlanarStep.iterate), gathered (DofMap.from_nodal) ---
        fe[:] = 0.0
        for i in range(n):
            for s in range(3):
                f = 0.5 * (F[j, i, s] + F[j + 1, i, s])
                fnod[3 * i + s] = f
                m = index[i, s]
                if m >= 0 and m < n_act:
                    fe[m] = f
        status, it = step_with(
            X, u0, u1, rot0, rot1, v0, v1, on, mass_h, mass_k, two_over_h, index, conn,
            chord0, l0, Sc, Hc, vh0, edofs, slot, f_e, K_e, energy, vh1, einc, fe, kind,
            n_free, lever, free_node, free_slot, diag_rows, indptr, indices, pos, order, ab, kl,
            settings, inc, dpsi, um, r, norms, K, reference_out, tangent_out, jconn, joffsets,
            jmpos, jscale, jedofs, jslot, aconn, ampos, ascale, atarget, aedofs, aslot, mu1,
            sconn, soffsets, sframe, smpos, sscale, sedofs, sslot, cconn, caxis, cmu, cpattern,
            ud0, h, cedofs, cslot, ud1, arrays)
        if status != CONVERGED:
            return j, status
        # --- finish: energies, work, reactions' work (PlanarStep.finish, DynamicStep._newton) -
        e = 0.0
        for g in range(gstart.shape[0] - 1):
            e += pairwise_sum(energy, gstart[g], gstart[g + 1] - gstart[g])
        for i in range(n):
            for s in range(3):
                prod[3 * i + s] = fnod[3 * i + s] * inc[i, s]
        w = pairwise_sum(prod, 0, 3 * n)
        c = 0.0
        total = 0.0
        for i in range(n):
            for s in range(3):
                m = index[i, s]
                if m >= n_free and m < n_act:
                    c += r[m] * inc[i, s]
                total += u1[i, s] + v1[i, s] + (v1[i, s] - v0[i, s]) / h
            total += rot1[i]
        for m in range(n_act):
            total += r[m]
        if not np.isfinite(total + e + w + c):
            return j, NOT_FINITE
        # the drivers' work (Joint.drive_work, summed by System.drive_work) after the reactions'
        dw = 0.0
        for g in range(dslices.shape[0]):
            sg = 0.0
            for q in range(dslices[g, 0], dslices[g, 1]):
                a, b = aconn[q, 0], aconn[q, 1]
                f = tmid[j, q]
                sg += (ascale[q] * mu1[ampos[q]]) * (((rot1[b] - rot1[a]) - f)
                                                     - ((rot0[b] - rot0[a]) - f))
            dw += -sg
        c = c + dw
        # --- commit (State.assign) -------------------------------------------------------------
        for i in range(n):
            for s in range(3):
                a0[i, s] = (v1[i, s] - v0[i, s]) / h
        u0[:, :] = u1
        rot0[:] = rot1
        v0[:, :] = v1
        mu0[:] = mu1
        vh0[:, :] = vh1
        ud0[:, :, :] = ud1
        its[j] = it
        step_norms[j, :it + 1] = norms[:it + 1]
        strain[j] = e
        work[j] = w
        cwork[j] = c
    return k, CONVERGED
