"""Newton's convergence test and checked solve, compiled: the pieces the compiled steps share.

The compiled loops of small planar models (a time step,
:mod:`fem.integrators.planar_newton_kernel`; a static increment,
:mod:`fem.analysis.planar_static_kernel`) do what :class:`fem.solvers.newton.Newton` does with
a step's problem, written out. What they share lives here, once:

* :func:`references`: the block references of :meth:`fem.analysis.base.StepBase.block_scale`;
* :func:`test`: :meth:`fem.solvers.newton.NormTest.converged` (the tolerance per block, the
  round-off floor, the stagnation and divergence guards);
* :func:`floors`: :meth:`fem.analysis.base.StepBase.floors` at a tangent;
* :func:`solve`: the banded LU's solve with the backward error and the refinement of
  :meth:`fem.solvers.banded.BandedLU.solve`;
* :func:`correct` and :func:`correction_ratio`: a correction applied to a planar state and its
  size against the positions (:meth:`fem.solvers.newton.NormTest.correction`).

Each says which Python code it writes out: change both (the tests of the compiled steps compare
iterations, residual norms and states with the general path). A compiled loop returns
:data:`FALLBACK` for anything but a plain convergence; its caller then runs the general path,
which reports or cuts back.
"""

import math

import numpy as np

from fem.kernels import configure_cache

configure_cache()                  # before the njit decorators: the source-keyed cache folder

from numba import njit  # noqa: E402

from fem.solvers.banded_kernel import apply, residual  # noqa: E402

CONVERGED, FALLBACK, GOING = 0, 1, 2
NBLOCKS = 4                        # fem.dofs.KINDS


@njit(cache=True, nogil=True)
def positions(X, u, rot, free_node, free_slot, q):
    """(n_free,) the magnitudes the unknowns are known to (fem.system.System.positions, 2D)."""
    for k in range(q.shape[0]):
        i, s = free_node[k], free_slot[k]
        q[k] = abs(X[i, s] + u[i, s]) if s < 2 else max(abs(rot[i]), 1.0)


@njit(cache=True, nogil=True)
def correct(u, rot, x, free_node, free_slot):
    """Add the correction ``x`` of the unknowns to ``u, rot`` (System.update_unknowns, 2D)."""
    for i in range(x.shape[0]):
        node, s = free_node[i], free_slot[i]
        if s < 2:
            u[node, s] += x[i]
        else:
            rot[node] += x[i]


@njit(cache=True, nogil=True)
def correction_ratio(X, u, rot, x, free_node, free_slot, q):
    """``|x| / |q|``, ``q`` the positions at ``u, rot`` (NormTest.correction's ratio)."""
    positions(X, u, rot, free_node, free_slot, q)
    x2, q2 = 0.0, 0.0
    for i in range(x.shape[0]):
        x2 += x[i] * x[i]
        q2 += q[i] * q[i]
    return math.sqrt(x2) / math.sqrt(q2) if q2 > 0 else np.inf


@njit(cache=True, nogil=True)
def references(a, b, c, kind, lever, out):
    """``out (4,)``: StepBase.block_scale of the force vectors ``a, b, c`` (n_active rows).

    Models without constraint groups (the fourth block's reference is the force one).
    """
    own = np.zeros((3, NBLOCKS))
    for i in range(a.shape[0]):
        k = kind[i]
        own[0, k] += a[i] * a[i]
        own[1, k] += b[i] * b[i]
        own[2, k] += c[i] * c[i]
    F = math.sqrt(max(own[0, 0], own[1, 0], own[2, 0]))
    M = math.sqrt(max(own[0, 1], own[1, 1], own[2, 1]))
    internal = math.sqrt(max(own[0, 2], own[1, 2], own[2, 2]))
    if lever > 0:
        F, M = max(F, M / lever), max(M, F * lever)
    out[0], out[1], out[2], out[3] = F, M, max(internal, F), F
    for k in range(NBLOCKS):
        out[k] = max(out[k], 1e-300)


@njit(cache=True, nogil=True)
def test(r, kind, n_free, it, reference, settings, du_ratio, norms, b, prev, floor):
    """NormTest.converged on the free rows of ``r`` at iteration ``it``: a status.

    ``settings``: rtol, atol, max_iterations, round_off, ROUND_OFF_MARGIN (the first five of
    the compiled steps' settings). ``norms[it]`` receives the residual norm, ``b`` the block
    norms; ``prev`` holds the previous iteration's block norms and becomes this one's when the
    iteration goes on (:data:`GOING`); ``floor`` the round-off floor of the last tangent.
    :data:`CONVERGED`; :data:`FALLBACK` where NormTest raises (not finite, stagnation above
    the margin, the iteration limit, divergence).
    """
    rtol, atol, max_it = settings[0], settings[1], int(settings[2])
    round_off, margin = settings[3], settings[4]
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
        return FALLBACK
    tol = np.empty(NBLOCKS)
    ok_all = True
    for k in range(NBLOCKS):
        tol[k] = max(rtol * reference[k], atol)
        ok_all = ok_all and b[k] <= tol[k]
    if ok_all:
        return CONVERGED
    if it >= 1:
        done = True
        for k in range(NBLOCKS):
            stalled = b[k] > 0.5 * prev[k] or prev[k] <= floor[k]
            done = done and (b[k] <= tol[k] or (b[k] <= floor[k] and stalled))
        if done:
            return CONVERGED
    if du_ratio <= round_off and it >= 1 and rnorm > 0.5 * norms[it - 1]:
        near = True
        for k in range(NBLOCKS):
            near = near and b[k] <= max(1e3 * tol[k], margin * floor[k])
        return CONVERGED if near else FALLBACK
    if it >= max_it:
        return FALLBACK
    if it >= 3:
        tnorm = 0.0
        for k in range(NBLOCKS):
            tnorm += tol[k] * tol[k]
        if rnorm > 1e6 * max(norms[0], math.sqrt(tnorm)):
            return FALLBACK
    prev[:] = b
    return GOING


@njit(cache=True, nogil=True)
def floors(indptr, indices, K, q, kind, eps, absKq, floor):
    """``floor (4,)``: StepBase.floors, ``eps |(|K| q)_b|`` per block (``q``: positions)."""
    n = absKq.shape[0]
    for i in range(n):
        s = 0.0
        for p in range(indptr[i], indptr[i + 1]):
            s += abs(K[p]) * q[indices[p]]
        absKq[i] = s
    floor[:] = 0.0
    for i in range(n):
        floor[kind[i]] += absKq[i] * absKq[i]
    for k in range(NBLOCKS):
        f = eps * math.sqrt(floor[k])
        floor[k] = f if f < np.inf else 0.0


@njit(cache=True, nogil=True)
def solve(ab, kl, order, indptr, indices, Kf, norm, r, x, y, res, refine_above, max_refine,
          poor):
    """``x = -K^-1 r`` (free rows) by the factored band ``ab``, refined as BandedLU.solve.

    ``Kf``: the CSR values factored, ``norm`` their infinity norm. False where the solution is
    not finite or its backward error stays above ``poor`` (the general path then keeps the
    record of the poor solve).
    """
    n = x.shape[0]
    rhs = np.empty(n)
    for i in range(n):
        rhs[i] = -r[i]
    if not apply(ab, kl, order, rhs, x, y):
        return False
    berr = residual(indptr, indices, Kf, x, rhs, res, norm)
    refinements = 0
    while berr > refine_above and refinements < max_refine:
        dx = np.empty(n)
        if not apply(ab, kl, order, res, dx, y):
            break
        x_new = x + dx
        res_new = np.empty(n)
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
    return berr <= poor
