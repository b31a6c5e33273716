"""A dynamic step's initial static settle (``settle = true``): bodies start at rest on contacts.

A body placed just touching a plane or another sphere under gravity carries no contact force at
the start, so a dynamic step begins with it falling: it jumps into the contact and bounces about
the static penetration for ever with an elastic law (issue 30, item 5). With ``settle = true`` the
step first moves the free positions to the static equilibrium under its loads at its start
(``f_int(q) = f_ext(0)``: the contact penetrations, a spring's deflection, the joints' reactions),
then integrates from there with the velocities it was given.

A static step before the dynamic one cannot do this: a Hertz law's stiffness ``1.5 K delta^0.5``
vanishes at zero penetration, so its first tangent is singular, and a body resting on contacts
alone is a mechanism for it. The settle solves the equilibrium by pseudo-transient continuation
(Kelley & Keyes, *Convergence analysis of pseudo-transient continuation*, SIAM J. Numer. Anal.
35 (1998) 508, eq. 1.3; the shift proportional to the residual, Levenberg-Marquardt's rule of
Fan & Yuan, Computing 74 (2005) 23): each iteration solves

    (K + c_k M) dq = -r(q),   c_k = max(c_0 |r_k|_w / |r_0|_w, 1e-8 c_0),   c_0 = 1 / T^2

with ``M`` the step's lumped inertia, ``T`` the step's duration and ``|.|_w`` the block-weighted
norm of the convergence test. The shift keeps the matrix regular where the tangent is not (a
contact at zero penetration, a free body's in-plane motion) and vanishes with the residual, so
the last iterations are Newton's: a Hertz sphere from zero penetration settles in about ten. The
settle has converged when every block of the residual meets the step's ``tolerance`` (or its
round-off floor); it fails after :data:`MAX_ITERATIONS` with a ConvergenceError that names the
key (a model that has no static equilibrium: a heap that would spread, a load no contact holds).
"""

from __future__ import annotations

import logging

import numpy as np

from fem import linalg
from fem.errors import ConvergenceError

log = logging.getLogger(__name__)

#: pseudo-transient iterations at most
MAX_ITERATIONS = 200
#: the smallest shift, relative to the first
SMALLEST_SHIFT = 1e-8


def settle(step, state, inertia) -> int:
    """Move the free positions of ``state`` to the static equilibrium at the step's start.

    ``step`` is a dynamic step whose loads have begun and whose linear solver is open; returns
    the iterations taken. Velocities, time and history are left as they are.
    """
    sysm = step.system
    n = sysm.n_free
    s = step.settings
    m = inertia.diagonal()
    ns = m.shape[1]
    blocks = np.zeros((len(m), ns, ns))
    blocks[:, range(ns), range(ns)] = m
    M = sysm.assembler.matrix([None] * len(sysm.model.groups), blocks,
                              constraints=[None] * len(getattr(sysm.model, "constraints", ())))
    c0 = 1.0 / s.duration**2
    test = step.test
    r0 = None
    for k in range(MAX_ITERATIONS + 1):
        fint, K = sysm.evaluate(state, step.loads.stiffness(state, 0.0), tangent=True)
        fext = step.external(state, 0.0)
        r = fint - fext
        scale = step.block_scale(fext, fint)
        b = test.blocks(r[:n])
        tol = np.maximum(s.tolerance * scale, step.floors(K, state))
        if not np.all(np.isfinite(r)):
            break
        if np.all(b <= tol):
            log.info("step %s: settled in %d iterations", step.name, k)
            return k
        w = test.weighted(r[:n], scale)
        r0 = w if r0 is None else r0
        c = c0 * max(w / r0, SMALLEST_SHIFT)
        step.linear.fill(K + c * M)
        try:
            du, _ = step.linear.solve(-r[:n])
        except (linalg.SingularMatrixError, linalg.NonFiniteError) as err:
            raise ConvergenceError(f"settle = true: the settling iteration's matrix: {err}",
                                   step=step.name, iteration=k,
                                   norms=[float(np.linalg.norm(r))]) from None
        sysm.update_unknowns(state, du)
    worst = float(np.max(b / np.maximum(scale, 1e-300)))
    raise ConvergenceError(f"settle = true: no static equilibrium found in {MAX_ITERATIONS} "
                           f"iterations (residual {worst:.2e} relative): the "
                           "loads at the step's start must be held by the contacts, supports and "
                           "elements (a heap that would spread has no equilibrium to settle to)",
                           step=step.name, iteration=k, norms=[float(np.linalg.norm(r))])
