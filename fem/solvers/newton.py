"""Newton's method, one loop for every step, and its convergence test.

After OpenSees's ``NewtonRaphson`` and ``ConvergenceTest``: :class:`Newton` knows only

* a *problem* (:class:`Problem`): the residual of one increment or time step, its tangent, and
  how a correction updates the trial state: a static increment at a load factor, a time step of
  an integrator (:mod:`fem.analysis.static`, :mod:`fem.analysis.dynamic`);
* a *linear solver* with ``fill(K)`` and ``solve(rhs)`` (the step's PETSc objects, checked
  solves, :class:`fem.analysis.base.StepBase`);
* a *control* when the load factor is an unknown of the increment (displacement control,
  arc-length; :mod:`fem.solvers.controls`): each iteration then also solves ``K du_f = F`` with
  the same factorization, and the control picks the load-factor correction;
* the convergence test :class:`NormTest`, whose history of norms goes to the results file.

It knows nothing about loads, time or the model.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from fem import interrupt


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


@dataclass
class Evaluation:
    """One evaluation of a problem at a trial state (full active-DOF vectors, free DOFs first)."""

    r: NDArray                   # (n_active,) residual
    scale: float                 # norm scale of the residual (see NormTest)
    K: NDArray | None = None     # CSR values of the tangent, when asked
    F: NDArray | None = None     # (n_active,) load pattern, for bordered controls


class Problem(Protocol):
    """What :class:`Newton` iterates on (one increment or one time step).

    ``fused`` says whether ``evaluate`` computes the residual and the tangent in one pass (then
    Newton asks for both unless the last correction was at round-off); otherwise Newton asks for
    the residual first and for the tangent only when the residual has not converged.
    """

    fused: bool

    def evaluate(self, trial, lam: float, tangent: bool) -> Evaluation:
        """Residual (and tangent) at ``trial`` and load factor ``lam``."""

    def update(self, trial, du: NDArray) -> None:
        """Apply the free-DOF correction ``du`` to ``trial``."""

    def floor(self, K: NDArray, trial) -> float:
        """The residual's round-off floor at this tangent (see :class:`NormTest`)."""

    def positions(self, trial) -> float:
        """The norm of the positions the corrections move (see :meth:`NormTest.correction`)."""

    # optional: ``correct(trial, du, lam, r_norm) -> Evaluation | None`` applies a correction of
    # an unbordered iteration its own way (e.g. fem.analysis.bent) and may return the evaluation
    # (residual only) at the corrected trial, which then is not computed again


class Newton:
    """Full Newton iterations of one increment; see the module docstring.

    Parameters
    ----------
    linear : ``fill(K)`` the matrix, ``solve(rhs) -> x`` (raises :class:`NewtonFailure` when the
        factorization is singular), ``n`` the number of unknowns
    test : the convergence test (its ``max_iterations`` bounds the loop)
    factored : optional ``callable(r_norm)``, called after the first solve with each new
        factorization (the static step watches the tangent's determinant there)
    """

    def __init__(self, linear, test: NormTest, factored=None):
        self.linear = linear
        self.test = test
        self.factored = factored
        self.last: Evaluation | None = None
        self.increment: NDArray | None = None

    def _factor(self, problem, trial, ev: Evaluation) -> None:
        self.linear.fill(ev.K)
        self.test.set_floor(problem.floor(ev.K, trial))

    def _solve(self, rhs: NDArray, fresh: bool) -> NDArray:
        x = self.linear.solve(rhs)
        if fresh and self.factored is not None:
            self.factored(self.test.norms[-1])
        return x

    def iterate(self, problem, trial, lam: float, control=None) -> tuple[int, float]:
        """Iterate ``trial`` to equilibrium at ``lam`` (or on the control's constraint).

        Returns the number of iterations and the load factor reached (``lam`` unless a bordered
        control moved it). Raises :class:`NewtonFailure`. The last evaluation, at the converged
        state, stays in :attr:`last` (its residual holds the reactions), and for a bordered
        control the increment's displacement ``Du`` in :attr:`increment`.
        """
        test, n = self.test, self.linear.n
        test.start()
        lam0 = lam
        Du = None
        if control is not None:                    # predictor along the tangent
            ev = problem.evaluate(trial, lam, tangent=True)
            self._factor(problem, trial, ev)
            du_f = self._solve(ev.F[:n], fresh=False)
            dlam = control.predictor(du_f, ev.F[:n])
            Du = dlam * du_f
            problem.update(trial, Du)
            lam += dlam
        small = False
        correct = getattr(problem, "correct", None) if control is None else None
        pending = None
        for _ in range(test.max_iterations + 2):
            interrupt.check()
            ev = pending or problem.evaluate(trial, lam, tangent=problem.fused and not small)
            pending = None
            if test.converged(float(np.linalg.norm(ev.r[:n])), ev.scale):
                self.last, self.increment = ev, Du
                return len(test.norms) - 1, lam
            if ev.K is None:
                ev = problem.evaluate(trial, lam, tangent=True)
            self._factor(problem, trial, ev)
            du = self._solve(-ev.r[:n], fresh=True)
            if control is not None:
                du_f = self._solve(ev.F[:n], fresh=False)
                d = control.correction(du, du_f, Du, lam - lam0, ev.F[:n])
                du = du + d * du_f
                Du = Du + du
                lam += d
            r_norm = test.norms[-1]
            if correct is not None:
                pending = correct(trial, du, lam, r_norm)
            else:
                problem.update(trial, du)
            du_norm = float(np.linalg.norm(du))
            x_norm = problem.positions(trial)
            test.correction(du_norm, x_norm)
            # after a correction at round-off the residual has almost surely converged: a fused
            # problem then skips the tangent of the next evaluation
            small = du_norm <= 1e-8 * x_norm
        raise NewtonFailure("no convergence", len(test.norms), test.norms)  # pragma: no cover
