"""The Newton iterations of one energy-conserving time step of a planar beam model, compiled.

What :meth:`fem.solvers.newton.Newton.iterate` does on :class:`fem.analysis.dynamic.TimeStep`
with the compiled evaluation (:mod:`fem.integrators.planar_kernel`) and the banded LU
(:mod:`fem.solvers.banded_kernel`), written out in one loop: evaluate, the convergence test of
:class:`fem.solvers.newton.NormTest` (block norms against the references of
:meth:`fem.analysis.base.StepBase.block_scale`, the round-off floor of
:meth:`~fem.analysis.base.StepBase.floors`, the stall and stagnation rules), factor, solve with
the backward-error check and refinement of :meth:`fem.solvers.banded.BandedLU.solve`, correct.
A small model's iteration was some two hundred interpreter calls around a few microseconds of
arithmetic. Anything but a plain convergence (a divergence, a null pivot, a poor or non-finite
solve, the iteration limit, a stagnation) returns :data:`FALLBACK`: the caller runs the step
again from its predictor through the general path, which reports or cuts back as it always does,
so the messages and the step control have one implementation. ``tests/test_planar_newton.py``
checks that both paths take the same iterations to the same states.
"""

import math

import numpy as np

from fem.elements.jit import configure_cache

configure_cache()                  # before the njit decorators: the source-keyed cache folder

from numba import njit  # noqa: E402

from fem.integrators.planar_kernel import beams, mass_diagonal, nodes  # noqa: E402
from fem.solvers.banded_kernel import apply, factor, fill, residual  # noqa: E402

CONVERGED, FALLBACK = 0, 1
NBLOCKS = 4                        # fem.dofs.KINDS


@njit(cache=True, nogil=True)
def _positions(X, u1, rot1, free_node, free_slot, q):
    """(n_free,) the magnitudes the unknowns are known to (fem.system.System.positions, 2D)."""
    for k in range(q.shape[0]):
        i, s = free_node[k], free_slot[k]
        q[k] = abs(X[i, s] + u1[i, s]) if s < 2 else max(abs(rot1[i]), 1.0)


@njit(cache=True, nogil=True)
def step(X, u0, u1, rot0, rot1, v0, v1, on, mass_h, mass_k, two_over_h, index,
         conn, chord0, l0, Sc, Hc, vh0, edofs, slot, f_e, K_e, energy, vh1, einc,
         fe, kind, n_free, lever, free_node, free_slot, diag_rows, indptr, indices,
         pos, order, ab, kl, settings, inc, dpsi, um, r, norms, K, reference_out, tangent_out):
    """Iterate ``u1, rot1`` (and ``v1``) to the time step's equilibrium in place.

    ``settings``: rtol, atol, max_iterations, round_off, ROUND_OFF_MARGIN, eps, NULL_PIVOT,
    REFINE_ABOVE, MAX_REFINEMENTS, POOR_BACKWARD_ERROR, modified (1: modified Newton, as
    :class:`fem.solvers.newton.Newton` with ``modified``), MODIFIED_CONTRACTION. Returns
    ``(status, iterations)``; ``r`` holds the last residual (every active row: the reactions),
    ``norms`` the residual norm of each iteration, ``reference_out`` the last references of the
    blocks, ``K`` the last tangent computed (``tangent_out[0]``: 1 if at the last evaluation),
    ``energy`` and ``vh1`` the elements' at the last evaluation. As Newton's loop does, an
    evaluation after a correction at round-off (``|du| <= 1e-8 |x|``), or one that will reuse
    the factorization (modified Newton), computes no tangent unless the test then asks for one.
    """
    rtol, atol, max_it = settings[0], settings[1], int(settings[2])
    round_off, margin, eps, null = settings[3], settings[4], settings[5], settings[6]
    refine_above, max_refine, poor = settings[7], int(settings[8]), settings[9]
    modified, contraction = settings[10] != 0.0, settings[11]
    n_act = r.shape[0]
    fin = np.empty(n_act)
    fel = np.empty(n_act)
    b = np.zeros(NBLOCKS)
    prev = np.zeros(NBLOCKS)
    floor = np.zeros(NBLOCKS)
    tol = np.zeros(NBLOCKS)
    q = np.empty(n_free)
    absKq = np.empty(n_free)
    scale_rows = np.empty(n_free)
    rhs = np.empty(n_free)
    x = np.empty(n_free)
    y = np.empty(n_free)
    res = np.empty(n_free)
    Kf = np.empty_like(K)              # the factored tangent (modified Newton keeps it)
    res_K = np.empty(n_act)            # the forces of a second evaluation for the tangent
    norm = 0.0
    stale = True                       # a tangent to factor at the next iteration
    du_ratio = np.inf
    for it in range(max_it + 2):
        # --- evaluate (EnergyConserving.evaluate through fem.integrators.planar) ---------------
        nodes(u0, u1, rot0, rot1, v0, on, mass_h, two_over_h, index, inc, dpsi, um, v1, fin)
        fel[:] = 0.0
        tangent = stale and not du_ratio <= 1e-8
        if tangent:
            K[:] = 0.0
            mass_diagonal(mass_k, dpsi, diag_rows, K)
        beams(um, u0, u1, conn, chord0, l0, Sc, Hc, vh0, inc, dpsi, edofs, slot, tangent, f_e,
              K_e, energy, vh1, einc, fel, K)
        tangent_out[0] = 1 if tangent else 0
        own = np.zeros((3, NBLOCKS))
        for i in range(n_act):
            r[i] = fin[i] + fel[i] - fe[i]
            k = kind[i]
            own[0, k] += fin[i] * fin[i]
            own[1, k] += fel[i] * fel[i]
            own[2, k] += fe[i] * fe[i]
        F = math.sqrt(max(own[0, 0], own[1, 0], own[2, 0]))
        M = math.sqrt(max(own[0, 1], own[1, 1], own[2, 1]))
        internal = math.sqrt(max(own[0, 2], own[1, 2], own[2, 2]))
        if lever > 0:
            F, M = max(F, M / lever), max(M, F * lever)
        reference = (F, M, max(internal, F), F)
        for k in range(NBLOCKS):
            reference_out[k] = max(reference[k], 1e-300)
        # --- the convergence test (NormTest.converged) --------------------------------------
        b[:] = 0.0
        for i in range(n_free):
            b[kind[i]] += r[i] * r[i]
        total = 0.0
        for k in range(NBLOCKS):
            total += b[k]
            b[k] = math.sqrt(b[k])
        rnorm = math.sqrt(total)
        norms[it] = rnorm
        if not rnorm < np.inf:
            return FALLBACK, it
        ok_all = True
        for k in range(NBLOCKS):
            tol[k] = max(rtol * max(reference[k], 1e-300), atol)
            ok_all = ok_all and b[k] <= tol[k]
        if ok_all:
            return CONVERGED, it
        if it >= 1:
            done = True
            for k in range(NBLOCKS):
                stalled = b[k] > 0.5 * prev[k] or prev[k] <= floor[k]
                done = done and (b[k] <= tol[k] or (b[k] <= floor[k] and stalled))
            if done:
                return CONVERGED, it
        if du_ratio <= round_off and it >= 1 and rnorm > 0.5 * norms[it - 1]:
            near = True
            for k in range(NBLOCKS):
                near = near and b[k] <= max(1e3 * tol[k], margin * floor[k])
            return (CONVERGED if near else FALLBACK), it
        if it >= max_it:
            return FALLBACK, it
        if it >= 3:
            tnorm = 0.0
            for k in range(NBLOCKS):
                tnorm += tol[k] * tol[k]
            if rnorm > 1e6 * max(norms[0], math.sqrt(tnorm)):
                return FALLBACK, it
        prev[:] = b
        if modified and not stale and it >= 1 and rnorm > contraction * norms[it - 1]:
            stale = True                 # the old tangent no longer contracts: a new one
        if stale:
            if not tangent:                  # the tangent after all (Newton's with_tangent)
                K[:] = 0.0
                mass_diagonal(mass_k, dpsi, diag_rows, K)
                beams(um, u0, u1, conn, chord0, l0, Sc, Hc, vh0, inc, dpsi, edofs, slot, True,
                      f_e, K_e, energy, vh1, einc, res_K, K)
                tangent_out[0] = 1
            # --- factor: the round-off floor at this tangent (StepBase.floors), banded LU ----
            _positions(X, u1, rot1, free_node, free_slot, q)
            for i in range(n_free):
                s = 0.0
                for p in range(indptr[i], indptr[i + 1]):
                    s += abs(K[p]) * q[indices[p]]
                absKq[i] = s
            floor[:] = 0.0
            for i in range(n_free):
                floor[kind[i]] += absKq[i] * absKq[i]
            for k in range(NBLOCKS):
                f = eps * math.sqrt(floor[k])
                floor[k] = f if f < np.inf else 0.0
            norm = fill(indptr, K, pos, order, ab, scale_rows)
            if factor(ab, kl, scale_rows, null):
                return FALLBACK, it
            Kf[:] = K
            stale = not modified
        # --- solve (BandedLU.solve), correct (System.update_unknowns, 2D) --------------------
        for i in range(n_free):
            rhs[i] = -r[i]
        if not apply(ab, kl, order, rhs, x, y):
            return FALLBACK, it
        berr = residual(indptr, indices, Kf, x, rhs, res, norm)
        refinements = 0
        while berr > refine_above and refinements < max_refine:
            dx = np.empty(n_free)
            if not apply(ab, kl, order, res, dx, y):
                break
            x_new = x + dx
            res_new = np.empty(n_free)
            berr_new = residual(indptr, indices, Kf, x_new, rhs, res_new, norm)
            refinements += 1
            if not berr_new < berr:
                break
            falling = berr_new < 0.5 * berr
            x[:] = x_new
            res[:] = res_new
            berr = berr_new
            if not falling:
                break
        if not berr <= poor:
            return FALLBACK, it              # the general path keeps the record of it
        du2 = 0.0
        for i in range(n_free):
            node, s = free_node[i], free_slot[i]
            if s < 2:
                u1[node, s] += x[i]
            else:
                rot1[node] += x[i]
            du2 += x[i] * x[i]
        _positions(X, u1, rot1, free_node, free_slot, q)
        x2 = 0.0
        for i in range(n_free):
            x2 += q[i] * q[i]
        du_ratio = math.sqrt(du2) / math.sqrt(x2) if x2 > 0 else np.inf
    return FALLBACK, max_it + 1
