"""Newton's convergence test and checked solve, compiled: the pieces the compiled steps share.

The compiled loops of small planar models (a time step,
:mod:`fem.integrators.planar_newton_kernel` and :mod:`fem.integrators.planar_alpha_kernel`; a
static increment,
:mod:`fem.analysis.planar_static_kernel`) do what :class:`fem.solvers.newton.Newton` does with
a step's problem, in one loop. The rules they share with the general path are
:mod:`fem.solvers.newton_scalar`'s, compiled here as they stand (the Python path calls the same
functions); what is left here reduces the planar vectors to the block norms those rules take:

* :func:`references`: :meth:`fem.analysis.base.StepBase.block_scale` of the force vectors;
* :func:`test`: :meth:`fem.solvers.newton.NormTest.converged` on the free rows;
* :func:`floors`: :meth:`fem.analysis.base.StepBase.floors` at a tangent;
* :func:`solve`: :meth:`fem.solvers.banded.BandedLU.solve`, by the same compiled
  :func:`fem.solvers.banded_kernel.refined`;
* :func:`correct` and :func:`correction_ratio`: a correction applied to a planar state and its
  size against the positions (:meth:`fem.solvers.newton.NormTest.correction`);
* :func:`scratch` and :func:`factor_at`: the work arrays of a loop and its factorization of a
  tangent (the round-off floor at it, the banded LU).

A compiled loop returns :data:`FALLBACK` for anything but a plain convergence; its caller then
runs the general path, which reports or cuts back.
"""

import math

import numpy as np

from fem.kernels import configure_cache

configure_cache()                  # before the njit decorators: the source-keyed cache folder

from numba import njit  # noqa: E402

from fem.solvers import newton_scalar as scalar  # noqa: E402
from fem.solvers.banded_kernel import factor, fill, fill_into, refined_into  # noqa: E402

CONVERGED, FALLBACK, GOING = 0, 1, 2
NBLOCKS = 4                        # fem.dofs.KINDS

#: the scalar rules of fem.solvers.newton_scalar, compiled
verdict = njit(cache=True, nogil=True)(scalar.verdict)
block_references = njit(cache=True, nogil=True)(scalar.references)
block_floors = njit(cache=True, nogil=True)(scalar.floors)
ratio = njit(cache=True, nogil=True)(scalar.correction_ratio)


@njit(cache=True, nogil=True)
def positions(X, u, rot, free_node, free_slot, q):
    """(n_free,) the magnitudes the unknowns are known to (fem.system.System.positions, 2D).

    Slot 3 marks a multiplier (no coordinate: 0, as System.positions).
    """
    for k in range(q.shape[0]):
        i, s = free_node[k], free_slot[k]
        q[k] = (abs(X[i, s] + u[i, s]) if s < 2 else max(abs(rot[i]), 1.0) if s == 2
                else 0.0)


@njit(cache=True, nogil=True)
def correct(u, rot, x, free_node, free_slot):
    """Add the correction ``x`` of the unknowns to ``u, rot`` (System.update_unknowns, 2D).

    Rows of slot 3 (multipliers, ``free_node`` their position in ``State.multipliers``) are
    left to the caller.
    """
    for i in range(x.shape[0]):
        node, s = free_node[i], free_slot[i]
        if s < 2:
            u[node, s] += x[i]
        elif s == 2:
            rot[node] += x[i]


@njit(cache=True, nogil=True)
def correction_ratio(X, u, rot, x, free_node, free_slot, q):
    """``|x| / |q|``, ``q`` the positions at ``u, rot`` (NormTest.correction's ratio)."""
    positions(X, u, rot, free_node, free_slot, q)
    x2, q2 = 0.0, 0.0
    for i in range(x.shape[0]):
        x2 += x[i] * x[i]
        q2 += q[i] * q[i]
    return ratio(math.sqrt(x2), math.sqrt(q2))


@njit(cache=True, nogil=True)
def references(a, b, c, kind, lever, out):
    """``out (4,)``: StepBase.block_scale of the force vectors ``a, b, c`` (n_active rows).

    Models without constraint groups (the fourth block's reference is the force one).
    """
    references_into(a, b, c, kind, lever, out, np.empty((3, NBLOCKS)))


@njit(cache=True, nogil=True)
def references_into(a, b, c, kind, lever, out, own):
    """:func:`references` with the blocks' sums of squares in the work array ``own (3, 4)``."""
    own[:] = 0.0
    for i in range(a.shape[0]):
        k = kind[i]
        own[0, k] += a[i] * a[i]
        own[1, k] += b[i] * b[i]
        own[2, k] += c[i] * c[i]
    block_references(math.sqrt(max(own[0, 0], own[1, 0], own[2, 0])),
                     math.sqrt(max(own[0, 1], own[1, 1], own[2, 1])),
                     math.sqrt(max(own[0, 2], own[1, 2], own[2, 2])), lever, False, out)


@njit(cache=True, nogil=True)
def test(r, kind, n_free, it, reference, settings, du_ratio, norms, b, prev, floor):
    """NormTest.converged on the free rows of ``r`` at iteration ``it``: a status.

    ``settings``: rtol, atol, max_iterations, round_off (the first four of the compiled steps'
    settings). ``norms[it]`` receives the residual norm, ``b`` the block
    norms; ``prev`` holds the previous iteration's block norms and becomes this one's when the
    iteration goes on (:data:`GOING`); ``floor`` the round-off floor of the last tangent.
    :data:`CONVERGED`; :data:`FALLBACK` where NormTest raises (not finite, stagnation above
    the margin, the iteration limit, divergence): :func:`fem.solvers.newton_scalar.verdict`.
    """
    b[:] = 0.0
    for i in range(n_free):
        b[kind[i]] += r[i] * r[i]
    total = 0.0
    for k in range(NBLOCKS):
        total += b[k]
        b[k] = math.sqrt(b[k])
    rnorm = math.sqrt(total)
    norms[it] = rnorm
    v = verdict(b, reference, settings[0], settings[1], prev, floor, rnorm,
                norms[it - 1] if it >= 1 else 0.0, norms[0], du_ratio, it, settings[3],
                int(settings[2]))
    if v == scalar.GOING:
        prev[:] = b
        return GOING
    if v == scalar.CONVERGED or v == scalar.AT_FLOOR or v == scalar.ROUND_OFF:
        return CONVERGED
    return FALLBACK


@njit(cache=True, nogil=True)
def scratch(n_free):
    """The work arrays of a compiled loop (one allocation per step, not per iteration).

    ``b, prev, floor (4,)`` of :func:`test` (zeros); ``q, absKq, scale_rows, x, y, res
    (n_free,)`` of :func:`factor_at` and :func:`solve`.
    """
    return (np.zeros(NBLOCKS), np.zeros(NBLOCKS), np.zeros(NBLOCKS), np.empty(n_free),
            np.empty(n_free), np.empty(n_free), np.empty(n_free), np.empty(n_free),
            np.empty(n_free))


@njit(cache=True, nogil=True)
def work(n_free):
    """The work arrays of :func:`factor_at_into`, :func:`solve_into`, :func:`references_into`.

    Made once a loop: ``rowmax, rhs, dx, x_new, r_new (n_free,)``, ``squares (4,)``, ``own (3,
    4)``.
    """
    return (np.empty(n_free), np.empty(n_free), np.empty(n_free), np.empty(n_free),
            np.empty(n_free), np.empty(NBLOCKS), np.empty((3, NBLOCKS)))


@njit(cache=True, nogil=True)
def factor_at_into(X, u, rot, free_node, free_slot, indptr, indices, K, kind, eps, pos, order,
                   ab, kl, null, q, absKq, scale_rows, floor, squares, rowmax):
    """:func:`factor_at` in the work arrays ``squares (4,)``, ``rowmax (n_free,)``."""
    positions(X, u, rot, free_node, free_slot, q)
    floors_into(indptr, indices, K, q, kind, eps, absKq, floor, squares)
    norm = fill_into(indptr, K, pos, order, ab, scale_rows, rowmax)
    if factor(ab, kl, scale_rows, null):
        return -1.0
    return norm


@njit(cache=True, nogil=True)
def factor_at(X, u, rot, free_node, free_slot, indptr, indices, K, kind, eps, pos, order, ab,
              kl, null, q, absKq, scale_rows, floor):
    """Factor the tangent ``K`` at ``u, rot`` into ``ab``: the round-off ``floor`` there first.

    :func:`positions`, :func:`floors` (StepBase.floors), then the banded LU of
    :func:`fem.solvers.banded_kernel.fill` and :func:`~fem.solvers.banded_kernel.factor`.
    Returns the matrix norm :func:`solve` takes, or -1.0 at a null pivot.
    """
    positions(X, u, rot, free_node, free_slot, q)
    floors(indptr, indices, K, q, kind, eps, absKq, floor)
    norm = fill(indptr, K, pos, order, ab, scale_rows)
    if factor(ab, kl, scale_rows, null):
        return -1.0
    return norm


@njit(cache=True, nogil=True)
def floors(indptr, indices, K, q, kind, eps, absKq, floor):
    """``floor (4,)``: StepBase.floors, ``eps |(|K| q)_b|`` per block (``q``: positions)."""
    floors_into(indptr, indices, K, q, kind, eps, absKq, floor, np.empty(NBLOCKS))


@njit(cache=True, nogil=True)
def floors_into(indptr, indices, K, q, kind, eps, absKq, floor, squares):
    """:func:`floors` with the blocks' sums in the work array ``squares (4,)``."""
    n = absKq.shape[0]
    for i in range(n):
        s = 0.0
        for p in range(indptr[i], indptr[i + 1]):
            s += abs(K[p]) * q[indices[p]]
        absKq[i] = s
    squares[:] = 0.0
    for i in range(n):
        squares[kind[i]] += absKq[i] * absKq[i]
    block_floors(squares, eps, floor)


@njit(cache=True, nogil=True)
def solve(ab, kl, order, indptr, indices, Kf, norm, r, x, y, res, refine_above, max_refine,
          poor):
    """``x = -K^-1 r`` (free rows) by the factored band ``ab``, refined as BandedLU.solve.

    ``Kf``: the CSR values factored, ``norm`` their infinity norm. False where the solution is
    not finite or its backward error stays above ``poor`` (the general path then keeps the
    record of the poor solve).
    """
    n = x.shape[0]
    return solve_into(ab, kl, order, indptr, indices, Kf, norm, r, x, y, res, refine_above,
                      max_refine, poor, np.empty(n), np.empty(n), np.empty(n), np.empty(n))


@njit(cache=True, nogil=True)
def solve_into(ab, kl, order, indptr, indices, Kf, norm, r, x, y, res, refine_above,
               max_refine, poor, rhs, dx, x_new, r_new):
    """:func:`solve` in the work arrays ``rhs, dx, x_new, r_new (n_free,)``."""
    n = x.shape[0]
    for i in range(n):
        rhs[i] = -r[i]
    finite, berr, _, _ = refined_into(ab, kl, order, indptr, indices, Kf, norm, rhs, x, y, res,
                                      refine_above, max_refine, dx, x_new, r_new)
    return finite and berr <= poor
