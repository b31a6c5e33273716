"""The Newton iterations of one energy-conserving time step of a planar beam model, compiled.

What :meth:`fem.solvers.newton.Newton.iterate` does on :class:`fem.analysis.dynamic.TimeStep`
with the compiled evaluation (:mod:`fem.integrators.planar_kernel`) and the banded LU
(:mod:`fem.solvers.banded_kernel`), written out in one loop: evaluate, the convergence test of
:class:`fem.solvers.newton.NormTest` (block norms against the references of
:meth:`fem.analysis.base.StepBase.block_scale`, the round-off floor of
:meth:`~fem.analysis.base.StepBase.floors`, the stall and stagnation rules), factor, solve with
the backward-error check and refinement of :meth:`fem.solvers.banded.BandedLU.solve`, correct
(the test, references, floors and solve shared with the static increment:
:mod:`fem.solvers.newton_kernel`).
A small model's iteration was some two hundred interpreter calls around a few microseconds of
arithmetic. Anything but a plain convergence (a divergence, a null pivot, a poor or non-finite
solve, the iteration limit, a stagnation) returns :data:`FALLBACK`: the caller runs the step
again from its predictor through the general path, which reports or cuts back as it always does,
so the messages and the step control have one implementation. ``tests/test_planar_step.py``
checks that both paths take the same iterations to the same states.
"""


import numpy as np

from fem.kernels import configure_cache

configure_cache()                  # before the njit decorators: the source-keyed cache folder

from numba import njit  # noqa: E402

from fem.integrators.planar_inertia_kernel import consistent  # noqa: E402
from fem.integrators.planar_joint_kernel import angles, revolute, slides  # noqa: E402
from fem.integrators.planar_kernel import beams, mass_diagonal, nodes  # noqa: E402
from fem.solvers import newton_kernel as nk  # noqa: E402
from fem.solvers.newton_kernel import CONVERGED, FALLBACK, GOING, NBLOCKS  # noqa: E402, F401


@njit(cache=True, nogil=True)
def step(X, u0, u1, rot0, rot1, v0, v1, on, mass_h, mass_k, two_over_h, index,
         conn, chord0, l0, Sc, Hc, vh0, edofs, slot, f_e, K_e, energy, vh1, einc,
         fe, kind, n_free, lever, free_node, free_slot, diag_rows, indptr, indices,
         pos, order, ab, kl, settings, inc, dpsi, um, r, norms, K, reference_out, tangent_out,
         jconn, joffsets, jmpos, jscale, jedofs, jslot, aconn, ampos, ascale, atarget, aedofs,
         aslot, mu1, sconn, soffsets, sframe, smpos, sscale, sedofs, sslot, cconn, caxis, cmu,
         cpattern, ud0, h, cedofs, cslot, ud1):
    """Iterate ``u1, rot1`` (and ``v1``, the multipliers ``mu1``) to the step's equilibrium.

    ``settings``: rtol, atol, max_iterations, round_off, eps, NULL_PIVOT,
    REFINE_ABOVE, MAX_REFINEMENTS, POOR_BACKWARD_ERROR, modified (1: modified Newton, as
    :class:`fem.solvers.newton.Newton` with ``modified``), MODIFIED_CONTRACTION. Returns
    ``(status, iterations)``; ``r`` holds the last residual (every active row: the reactions),
    ``norms`` the residual norm of each iteration, ``reference_out`` the last references of the
    blocks, ``K`` the last tangent computed (``tangent_out[0]``: 1 if at the last evaluation),
    ``energy`` and ``vh1`` the elements' at the last evaluation. As Newton's loop does, an
    evaluation after a correction at round-off (``|du| <= 1e-8 |x|``), or one that will reuse
    the factorization (modified Newton), or one of full Newton after the first (the last,
    converged one needs none), computes no tangent unless the test then asks for one.
    ``jconn, joffsets, jmpos, jscale, jedofs, jslot``: the joints' point rows of
    :func:`fem.integrators.planar_joint_kernel.revolute`, ``aconn, ampos, ascale, atarget,
    aedofs, aslot`` their angle rows (:func:`~fem.integrators.planar_joint_kernel.angles`;
    none: zero rows), ``sconn, ..., sslot`` their slide rows
    (:func:`~fem.integrators.planar_joint_kernel.slides`); rows of
    ``free_slot`` 3 are multipliers, at ``free_node`` in ``mu1``. ``cconn, caxis, cmu,
    cpattern, ud0, h, cedofs, cslot``: the beams' consistent inertia
    (:func:`fem.integrators.planar_inertia_kernel.consistent`; none: zero elements), ``ud1``
    its director rates at the last evaluation.
    """
    return step_with(
        X, u0, u1, rot0, rot1, v0, v1, on, mass_h, mass_k, two_over_h, index,
        conn, chord0, l0, Sc, Hc, vh0, edofs, slot, f_e, K_e, energy, vh1, einc,
        fe, kind, n_free, lever, free_node, free_slot, diag_rows, indptr, indices,
        pos, order, ab, kl, settings, inc, dpsi, um, r, norms, K, reference_out, tangent_out,
        jconn, joffsets, jmpos, jscale, jedofs, jslot, aconn, ampos, ascale, atarget, aedofs,
        aslot, mu1, sconn, soffsets, sframe, smpos, sscale, sedofs, sslot, cconn, caxis, cmu,
        cpattern, ud0, h, cedofs, cslot, ud1,
        step_work(n_free, r.shape[0], K.shape[0]))


@njit(cache=True, nogil=True)
def step_work(n_free, n_act, nnz):
    """:func:`step_with`'s work arrays (a run of steps makes them once, not once a step).

    ``b, prev, floor (4,)``, ``q, absKq, scale_rows, x, y, res (n_free,)`` of
    :func:`fem.solvers.newton_kernel.scratch`; the evaluation's forces ``fin, fel`` and a
    second evaluation's ``res_K (n_active,)``; the factored tangent ``Kf (nnz,)``; the work
    arrays of :func:`fem.solvers.newton_kernel.work` (``rowmax, rhs, dx, x_new, r_new``,
    ``squares (4,)``, ``own (3 * 4,)`` flat).
    """
    b, prev, floor, q, absKq, scale_rows, x, y, res = nk.scratch(n_free)
    rowmax, rhs, dx, x_new, r_new, squares, own = nk.work(n_free)
    return (b, prev, floor, q, absKq, scale_rows, x, y, res, np.empty(n_act), np.empty(n_act),
            np.empty(n_act), np.empty(nnz), rowmax, rhs, dx, x_new, r_new, squares,
            own.reshape(-1))


@njit(cache=True, nogil=True)
def step_with(X, u0, u1, rot0, rot1, v0, v1, on, mass_h, mass_k, two_over_h, index,
              conn, chord0, l0, Sc, Hc, vh0, edofs, slot, f_e, K_e, energy, vh1, einc,
              fe, kind, n_free, lever, free_node, free_slot, diag_rows, indptr, indices,
              pos, order, ab, kl, settings, inc, dpsi, um, r, norms, K, reference_out,
              tangent_out, jconn, joffsets, jmpos, jscale, jedofs, jslot, aconn, ampos, ascale,
              atarget, aedofs, aslot, mu1, sconn, soffsets, sframe, smpos, sscale, sedofs,
              sslot, cconn, caxis, cmu, cpattern, ud0, h, cedofs, cslot, ud1, work):
    """:func:`step` in the work arrays ``work`` of :func:`step_work`, made beforehand."""
    max_it, eps, null = int(settings[2]), settings[4], settings[5]
    refine_above, max_refine, poor = settings[6], int(settings[7]), settings[8]
    modified, contraction = settings[9] != 0.0, settings[10]
    n_act = r.shape[0]
    (b, prev, floor, q, absKq, scale_rows, x, y, res, fin, fel, res_K, Kf, rowmax, rhs, dx,
     x_new, r_new, squares, own_flat) = work
    own = own_flat.reshape((3, NBLOCKS))
    b[:] = 0.0                         # as nk.scratch makes them
    prev[:] = 0.0
    floor[:] = 0.0
    norm = 0.0
    stale = True                       # a tangent to factor at the next iteration
    du_ratio = np.inf
    for it in range(max_it + 2):
        # --- evaluate (EnergyConserving.evaluate through fem.integrators.planar) ---------------
        nodes(u0, u1, rot0, rot1, v0, on, mass_h, two_over_h, index, inc, dpsi, um, v1, fin)
        fel[:] = 0.0
        # full Newton's later evaluations leave the tangent until the test asks for it: the
        # last one converges and needs none (a fifth of the 10-element pendulum's step)
        tangent = stale and not du_ratio <= 1e-8 and (it == 0 or modified)
        if tangent:
            K[:] = 0.0
            mass_diagonal(mass_k, dpsi, diag_rows, K)
        # (a group of none is not called: a call of some twenty arrays costs 0.1-0.2 us)
        if cconn.shape[0]:
            consistent(rot0, rot1, v0, v1, cconn, caxis, cmu, cpattern, ud0, h, cedofs, cslot,
                       tangent, ud1, fin, K)
        if l0.shape[0]:
            beams(um, u0, u1, conn, chord0, l0, Sc, Hc, vh0, inc, dpsi, edofs, slot, tangent,
                  f_e, K_e, energy, vh1, einc, fel, K)
        if jconn.shape[0]:
            revolute(u0, u1, rot0, rot1, jconn, joffsets, jmpos, mu1, jscale, on, jedofs, jslot,
                     tangent, fel, K)
        if aconn.shape[0]:
            angles(rot0, rot1, aconn, ampos, mu1, ascale, atarget, on, aedofs, aslot, tangent,
                   fel, K)
        if sconn.shape[0]:
            slides(u0, u1, rot0, rot1, sconn, soffsets, sframe, smpos, mu1, sscale, on, sedofs,
                   sslot, tangent, fel, K)
        tangent_out[0] = 1 if tangent else 0
        for i in range(n_act):
            r[i] = fin[i] + fel[i] - fe[i]
        nk.references_into(fin, fel, fe, kind, lever, reference_out, own)
        # --- the convergence test (NormTest.converged) --------------------------------------
        status = nk.test(r, kind, n_free, it, reference_out, settings, du_ratio, norms, b, prev,
                      floor)
        if status != GOING:
            return status, it
        if modified and not stale and it >= 1 and norms[it] > contraction * norms[it - 1]:
            stale = True                 # the old tangent no longer contracts: a new one
        if stale:
            if not tangent:                  # the tangent after all (Newton's with_tangent)
                res_K[:] = 0.0                   # (its forces are not used)
                K[:] = 0.0
                mass_diagonal(mass_k, dpsi, diag_rows, K)
                if cconn.shape[0]:
                    consistent(rot0, rot1, v0, v1, cconn, caxis, cmu, cpattern, ud0, h, cedofs,
                               cslot, True, ud1, res_K, K)
                if l0.shape[0]:
                    beams(um, u0, u1, conn, chord0, l0, Sc, Hc, vh0, inc, dpsi, edofs, slot,
                          True, f_e, K_e, energy, vh1, einc, res_K, K)
                if jconn.shape[0]:
                    revolute(u0, u1, rot0, rot1, jconn, joffsets, jmpos, mu1, jscale, on,
                             jedofs, jslot, True, res_K, K)
                if aconn.shape[0]:
                    angles(rot0, rot1, aconn, ampos, mu1, ascale, atarget, on, aedofs, aslot,
                           True, res_K, K)
                if sconn.shape[0]:
                    slides(u0, u1, rot0, rot1, sconn, soffsets, sframe, smpos, mu1, sscale, on,
                           sedofs, sslot, True, res_K, K)
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
        for i in range(n_free):
            if free_slot[i] == 3:
                mu1[free_node[i]] += x[i]
        du_ratio = nk.correction_ratio(X, u1, rot1, x, free_node, free_slot, q)
    return FALLBACK, max_it + 1
