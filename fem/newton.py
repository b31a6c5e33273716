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
    """Residual test with a round-off floor, a stagnation guard and a divergence guard.

    An increment has converged when, after ``k`` Newton corrections,

    * ``|r| <= max(rtol * scale, atol)``, with ``scale`` supplied per iteration by the caller
      (the larger of the external-, internal- and inertial-force norms over the active DOFs,
      reactions included), so the test is unit-free; or
    * ``|r| <= floor``, the residual's round-off floor (:meth:`set_floor`), and the last
      correction no longer halved it: the residual is round-off, no iteration can lower it.

    **Why a floor.** Nodal coordinates are stored as positions ``x = X + u``, known only to
    ``eps |x|`` however small the displacement ``u`` is; internal forces computed from them carry
    errors of about ``eps |K| |x|`` (``|K|`` the entrywise absolute tangent, rotations counted
    with magnitude 1, :meth:`fem.system.System.round_off_floor`). No iteration can reduce the
    residual below that. When the load is small compared with the stiffness of the members
    (0.01 N on a steel rod, a stiff pendulum hanging at rest), ``rtol * scale`` falls below it
    and a plain relative test never passes. Since the floor is an upper estimate of the
    round-off (sums of absolute values), a residual below it may still be falling: the increment
    is accepted there only once a correction has stopped halving it (so at least one correction
    is always made, and a load whose residual is already below the floor still moves the
    structure, by the solution of the linearized problem; where the relative test can be met,
    the iterations are those it needs).

    **Stagnation guard.** When the last correction is at round-off *relative to the positions*,
    ``|du| <= round_off * |x|`` (:meth:`correction`; comparing with the displacements instead
    would never fire for small motions), and the residual no longer halves, the increment is
    accepted if ``|r| <= 1000 rtol scale`` and otherwise fails with a message that says so (the
    tolerance is below what the model's arithmetic resolves).

    **Divergence.** A non-finite residual, ``max_iterations`` exceeded, or a residual a million
    times its first value after three iterations fail the increment (:class:`NewtonFailure`).
    """

    rtol: float = 1e-9
    atol: float = 0.0
    max_iterations: int = 25
    round_off: float = 1e-13
    norms: list[float] = field(default_factory=list)
    floor: float = 0.0
    at_floor: bool = False

    def start(self) -> None:
        """Begin a new increment."""
        self.norms = []
        self._du_ratio = np.inf
        self.floor = 0.0
        self.at_floor = False

    def set_floor(self, floor: float) -> None:
        """The residual's round-off floor ``eps |K| |x|`` at the latest tangent."""
        self.floor = float(floor) if np.isfinite(floor) else 0.0

    def correction(self, du_norm: float, x_norm: float) -> None:
        """Record the size of the Newton correction just applied and of the positions it moved."""
        self._du_ratio = du_norm / x_norm if x_norm > 0 else np.inf

    def converged(self, rnorm: float, scale: float) -> bool:
        """Record ``rnorm``; true when converged; :class:`NewtonFailure` when diverging."""
        self.norms.append(float(rnorm))
        it = len(self.norms) - 1
        if not np.isfinite(rnorm):
            raise NewtonFailure("residual is not finite", it, self.norms)
        if rnorm <= max(self.rtol * scale, self.atol):
            return True
        if it >= 1 and rnorm <= self.floor and rnorm > 0.5 * self.norms[-2]:
            self.at_floor = True
            return True
        if self._du_ratio <= self.round_off and it >= 1 and rnorm > 0.5 * self.norms[-2]:
            if rnorm <= 1e3 * self.rtol * scale:
                return True
            raise NewtonFailure(f"the residual stagnates at {rnorm:.3e} ({rnorm / scale:.1e} "
                                f"relative) while the corrections are at round-off: the tolerance "
                                f"{self.rtol:g} is below what this model resolves; raise the "
                                "step's tolerance", it, self.norms)
        if it >= self.max_iterations:
            raise NewtonFailure(f"no convergence in {self.max_iterations} iterations", it,
                                self.norms)
        if it >= 3 and rnorm > 1e6 * max(self.norms[0], self.rtol * scale):
            raise NewtonFailure("residual diverging", it, self.norms)
        return False
