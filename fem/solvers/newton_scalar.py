"""Newton's scalar rules, written once: the Python path calls them, the compiled steps too.

A Newton iteration of the general path (:class:`fem.solvers.newton.NormTest`,
:meth:`fem.analysis.base.StepBase.block_scale` and :meth:`~fem.analysis.base.StepBase.floors`)
and of the compiled steps of small planar models (:mod:`fem.solvers.newton_kernel`, which
compiles these functions with ``njit`` and calls them from its loops) reduce a residual to one
norm per block (:data:`fem.dofs.KINDS`) each its own way: numpy over every row, or a loop. What
follows from the block norms is decided here, for both:

* :func:`verdict`: the convergence test of :class:`~fem.solvers.newton.NormTest` (the tolerance
  per block, the round-off floor, the stagnation and divergence guards);
* :func:`references`: the references of the blocks from their own parts and the model's size;
* :func:`floors`: the round-off floor of each block from its sum of squares;
* :func:`correction_ratio`: the size of a correction against the positions it moved.

Plain Python on float arrays of a few entries (no numpy call numba does not compile, no
allocation in the loops): numba compiles it as it stands, and the interpreter runs it in the
time of one numpy call. Every numeric choice lives in this module once; the tests of the
compiled steps (``tests/test_planar_step.py``, ``tests/test_planar_static.py``) compare their
iterations, norms and states with the general path. numba's cache is keyed by this module's
source too (:func:`fem.kernels.cache_dir`).
"""

import math

#: a stagnated residual within this many round-off floors is round-off (NormTest)
ROUND_OFF_MARGIN = 10.0

# verdicts of the convergence test: converged ...
CONVERGED, AT_FLOOR, ROUND_OFF = 0, 1, 2
#: ... not yet ...
GOING = 3
# ... or failed (NewtonFailure in the general path; the general path in the compiled steps)
NOT_FINITE, STAGNATED, ITERATIONS, DIVERGING = 4, 5, 6, 7


def verdict(b, reference, rtol, atol, prev, floor, rnorm, rnorm_prev, rnorm0, du_ratio, it,
            round_off, max_iterations):
    """The convergence test of iteration ``it`` from its block norms ``b``: a verdict.

    Parameters
    ----------
    b : (nb,) the norm of each block of the residual; ``rnorm`` the norm of the whole
    reference : (nb,) the reference of each block; the tolerance is ``max(rtol reference, atol)``
    prev : (nb,) the previous iteration's block norms (read from ``it >= 1``)
    floor : (nb,) the round-off floor of each block at the latest tangent
    rnorm_prev, rnorm0 : the whole residual's norm at the previous and the first iteration
    du_ratio : the last correction against the positions (:func:`correction_ratio`)
    round_off : a correction this small (relative) is at round-off
    max_iterations : the iterations allowed

    Returns
    -------
    :data:`CONVERGED` (every block within its tolerance), :data:`AT_FLOOR` (within the
    tolerance or at a stalled round-off floor), :data:`ROUND_OFF` (corrections at round-off,
    every block within ``max(1000 tol, ROUND_OFF_MARGIN floor)``), :data:`GOING`, or a
    failure: :data:`NOT_FINITE`, :data:`STAGNATED` (corrections at round-off, a block above
    that), :data:`ITERATIONS`, :data:`DIVERGING` (a million times the first residual, or the
    tolerance, after three iterations). See :class:`fem.solvers.newton.NormTest`.
    """
    if not rnorm < math.inf:
        return NOT_FINITE
    nb = b.shape[0]
    done = True
    for k in range(nb):
        done = done and b[k] <= max(rtol * reference[k], atol)
    if done:
        return CONVERGED
    if it >= 1:
        done = True
        for k in range(nb):
            stalled = b[k] > 0.5 * prev[k] or prev[k] <= floor[k]
            done = done and (b[k] <= max(rtol * reference[k], atol)
                             or (b[k] <= floor[k] and stalled))
        if done:
            return AT_FLOOR
    if du_ratio <= round_off and it >= 1 and rnorm > 0.5 * rnorm_prev:
        for k in range(nb):
            if not b[k] <= max(1e3 * max(rtol * reference[k], atol), ROUND_OFF_MARGIN * floor[k]):
                return STAGNATED
        return ROUND_OFF
    if it >= max_iterations:
        return ITERATIONS
    if it >= 3:
        tnorm = 0.0
        for k in range(nb):
            tol = max(rtol * reference[k], atol)
            tnorm += tol * tol
        if rnorm > 1e6 * max(rnorm0, math.sqrt(tnorm)):
            return DIVERGING
    return GOING


def references(force, moment, internal, lever, rotation_rows, out):
    """``out (4,)``: the references of the blocks forces, moments, internal, constraints.

    ``force``, ``moment``, ``internal``: each block's own part (the largest norm over its rows
    of the vectors the residual is made of); ``lever`` the model's size ``L``: forces
    ``max(F, M / L)``, moments ``max(M, F L)``; internal unknowns at least the force reference;
    constraint rows moments where ``rotation_rows`` (groups holding rotations only), else
    forces. At least 1e-300. (:meth:`fem.analysis.base.StepBase.block_scale`.)
    """
    F, M = force, moment
    if lever > 0:
        F, M = max(F, M / lever), max(M, F * lever)
    out[0], out[1], out[2] = F, M, max(internal, F)
    out[3] = M if rotation_rows else F
    for k in range(4):
        out[k] = max(out[k], 1e-300)


def floors(squares, eps, out):
    """``out (nb,)``: ``eps sqrt(squares)`` per block, 0 where that is not finite.

    ``squares``: each block's sum of ``(|K| q)_i^2`` (:meth:`fem.analysis.base.StepBase.floors`).
    """
    for k in range(squares.shape[0]):
        f = eps * math.sqrt(squares[k])
        out[k] = f if f < math.inf else 0.0


def correction_ratio(du_norm, x_norm):
    """``|du| / |x|``, infinite where ``|x| = 0`` (NormTest.correction)."""
    return du_norm / x_norm if x_norm > 0 else math.inf
