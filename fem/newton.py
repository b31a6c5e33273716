"""Convergence tests for Newton iterations, shared by static steps and time integrators.

After OpenSees's ``ConvergenceTest``: an object with ``start``/``converged`` and a history of norms
(written to the results file as Newton statistics). The iteration loops themselves live with their
steps (:mod:`fem.static`, :mod:`fem.integrators`), which see only residuals, tangents, updates and a
linear solver.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


class NewtonFailure(Exception):
    """Raised inside a step when an increment fails; the step cuts it or reports the error."""

    def __init__(self, reason: str, iteration: int, norms: list[float]):
        self.reason = reason
        self.iteration = iteration
        self.norms = list(norms)
        super().__init__(reason)


@dataclass
class NormTest:
    """Residual test ``|r| <= max(rtol * scale, atol)`` with a divergence guard.

    ``scale`` is supplied per iteration by the caller (typically the larger of the external-force
    and internal-force norms over all active DOFs), so the test is unit-free.

    The residual has a round-off floor: nodal coordinates are known to ``eps |x|``, so a member of
    axial stiffness ``EA`` cannot balance better than about ``EA eps``. Once the last Newton
    correction is at round-off, ``|du| <= round_off * |u|`` (see :meth:`correction`), and the
    residual no longer falls, the increment is accepted if the residual is within ``1000 rtol``
    and otherwise fails with a message that says so (the tolerance is below what the model's
    arithmetic can resolve).
    """

    rtol: float = 1e-9
    atol: float = 0.0
    max_iterations: int = 25
    round_off: float = 1e-13
    norms: list[float] = field(default_factory=list)

    def start(self) -> None:
        """Begin a new increment."""
        self.norms = []
        self._du_ratio = np.inf

    def correction(self, du_norm: float, u_norm: float) -> None:
        """Record the size of the Newton correction just applied, relative to the solution."""
        self._du_ratio = du_norm / u_norm if u_norm > 0 else np.inf

    def converged(self, rnorm: float, scale: float) -> bool:
        """Record ``rnorm``; true when converged; :class:`NewtonFailure` when diverging."""
        self.norms.append(float(rnorm))
        if not np.isfinite(rnorm):
            raise NewtonFailure("residual is not finite", len(self.norms) - 1, self.norms)
        if rnorm <= max(self.rtol * scale, self.atol):
            return True
        if self._du_ratio <= self.round_off and len(self.norms) > 1 \
                and rnorm > 0.5 * self.norms[-2]:
            if rnorm <= 1e3 * self.rtol * scale:
                return True
            raise NewtonFailure(f"the residual stagnates at {rnorm:.3e} ({rnorm / scale:.1e} "
                                f"relative) while the corrections are at round-off: the tolerance "
                                f"{self.rtol:g} is below what this model resolves; raise the "
                                "step's tolerance", len(self.norms) - 1, self.norms)
        it = len(self.norms) - 1
        if it >= self.max_iterations:
            raise NewtonFailure(f"no convergence in {self.max_iterations} iterations", it,
                                self.norms)
        if it >= 3 and rnorm > 1e6 * max(self.norms[0], self.rtol * scale):
            raise NewtonFailure("residual diverging", it, self.norms)
        return False
