"""The shift of a symmetric eigen-solve, and its factorization (:mod:`.front`).

A shift given is checked: ``K - sigma M`` singular there, or its solves ruled by a null vector,
is an eigenvalue at the shift (:class:`~.common.SingularShift`). Without one, 0, unless ``K`` is
singular (a free structure): then a first shift below the rigid modes' round-off, a pilot block
Krylov space there, and the shift moved near the low spectrum's scale (the front-end's module
docstring, *Free structures*).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

from fem import interrupt, lazy
from fem.errors import ModelError
from fem.solvers.eigen.common import (
    FREE_SHIFT,
    NEAREST,
    PILOT,
    ROUND_OFF,
    SingularShift,
    spectrum_scale,
)

sp = lazy.module("scipy.sparse")


def shifted(K, M, shift: float | None = None, *, factor: Callable,
            what: str = "the eigen-solve"):
    """``(sigma, solver)``: the shift and the factorization ``factor(K - sigma M)``.

    ``shift``, or one chosen as :func:`.front.symmetric` chooses it; the caller closes the solver.

    Raises :class:`SingularShift` for a given shift at an eigenvalue and
    :class:`~fem.errors.ModelError` for a motion with neither stiffness nor mass.
    """
    K, M = sp.csr_matrix(K), sp.csr_matrix(M)
    scale = spectrum_scale(K, M)
    if shift is not None:
        solve = factor((K - float(shift) * M).tocsr())
        if not _at_eigenvalue(K, M, solve, float(shift), scale):
            return float(shift), solve
        solve.close()
        free = " (the rigid-body modes of a free structure have omega^2 = 0)" if shift == 0 \
            else ""
        raise SingularShift(shift, f"{what}: K - sigma M is singular at the shift {shift:g}: "
                            f"an eigenvalue sits there{free}")
    solve = factor(K)
    if not _at_eigenvalue(K, M, solve, 0.0, scale):
        return 0.0, solve
    solve.close()
    return _free_shift(K, M, factor, scale, what)


def _at_eigenvalue(K, M, solve, sigma: float, scale: float) -> bool:
    """Whether ``K - sigma M`` is singular: a null pivot, or solves ruled by a null vector.

    A factorization need not find the null pivot of a singular matrix whose entries span many
    orders (a free chain of springs from 1 to 1e8 factored without one), and its solves are then
    the null vector times round-off's reciprocal: two solves ``x = (K - sigma M)^{-1} M r`` of
    random ``r`` whose Rayleigh quotients lie within the round-off of the spectrum (``1e3 eps
    max K_ii / M_ii``) of ``sigma`` say so (an inverse iteration's step lands on the eigenvalue
    nearest the shift). A regular matrix with an eigenvalue that close to the shift counts as
    singular too: its pairs are not resolved there.
    """
    if not solve.regular():
        return True
    x = solve(M @ np.random.default_rng(11).standard_normal((K.shape[0], 2)))
    if not np.all(np.isfinite(x)):
        return True
    mx = np.einsum("ij,ij->j", x, M @ x)
    if np.any(mx <= 0):
        return False                       # in the null space of M: no finite pair there
    rho = np.einsum("ij,ij->j", x, K @ x) / mx
    return bool(np.any(np.abs(rho - sigma) <= ROUND_OFF * scale))


def _free_shift(K, M, factor, scale: float, what: str):
    """The shift of a free structure and its factorization (module docstring)."""
    sigma = -FREE_SHIFT * scale if scale > 0 else -1.0
    solve = factor((K - sigma * M).tocsr())
    if _at_eigenvalue(K, M, solve, sigma, scale):
        solve.close()
        raise ModelError(f"{what}: K - sigma M is singular at sigma = 0 and at sigma = "
                         f"{sigma:.3g}: a motion without stiffness has no mass either (a free "
                         "beam's twist without rotary inertia, a node with no mass); give it "
                         "inertia or a support")
    rho = _pilot(K, M, solve)
    elastic = rho[rho > ROUND_OFF * scale]
    if len(elastic):
        target = max(float(elastic[0]), NEAREST * scale)
        if target < 0.1 * abs(sigma):
            solve.close()
            solve = factor((K + target * M).tocsr())
            if not _at_eigenvalue(K, M, solve, -target, scale):
                return -target, solve
            solve.close()
            solve = factor((K - sigma * M).tocsr())
    return sigma, solve


def _pilot(K, M, solve) -> NDArray:
    """Rayleigh-Ritz values of ``(K, M)`` on a short block Krylov space of ``OP`` (ascending)."""
    from fem.solvers.eigen.lanczos import _next_block

    n = K.shape[0]
    b, steps = min(PILOT[0], n), PILOT[1]
    rng = np.random.default_rng(7)
    V, MV = np.zeros((n, 0)), np.zeros((n, 0))
    W = solve(M @ rng.standard_normal((n, b)))
    for j in range(steps):
        interrupt.check()
        W, MW, _ = _next_block(W, V, MV, M)
        if W.shape[1] == 0:
            break
        V, MV = np.hstack([V, W]), np.hstack([MV, MW])
        if j < steps - 1:
            W = solve(MW)
    Kr, Mr = V.T @ (K @ V), V.T @ MV
    import scipy.linalg as sla

    return sla.eigh(0.5 * (Kr + Kr.T), 0.5 * (Mr + Mr.T), eigvals_only=True)
