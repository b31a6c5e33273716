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
    and internal-force norms over all active DOFs), so the test is unit-free. The residual of a
    very stiff member cannot fall below ``EA * eps`` (its length is known to ``eps`` relative), so
    an increment is also accepted once the last Newton correction is at round-off,
    ``|du| <= round_off * |u|`` (see :meth:`correction`).
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
        """Record ``rnorm``; true when below tolerance. Raises :class:`NewtonFailure` on divergence."""
        self.norms.append(float(rnorm))
        if not np.isfinite(rnorm):
            raise NewtonFailure("residual is not finite", len(self.norms) - 1, self.norms)
        if rnorm <= max(self.rtol * scale, self.atol):
            return True
        if self._du_ratio <= self.round_off and rnorm <= 1e3 * self.rtol * scale:
            return True
        it = len(self.norms) - 1
        if it >= self.max_iterations:
            raise NewtonFailure(f"no convergence in {self.max_iterations} iterations", it,
                                self.norms)
        if it >= 3 and rnorm > 1e6 * max(self.norms[0], self.rtol * scale):
            raise NewtonFailure("residual diverging", it, self.norms)
        return False
