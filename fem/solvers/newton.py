"""Newton's method, one loop for every step, and its convergence test.

After OpenSees's ``NewtonRaphson`` and ``ConvergenceTest``: :class:`Newton` knows only

* a *problem* (:class:`Problem`): the residual of one increment or time step, its tangent, and
  how a correction updates the trial state: a static increment at a load factor, a time step of
  an integrator (:mod:`fem.analysis.static`, :mod:`fem.analysis.dynamic`);
* a *linear system* (:class:`fem.solvers.linear_system.LinearSystem`: ``fill(K)``,
  ``solve(rhs) -> (x, report)``, ``n``), and two small hooks of the step that owns it: what a
  singular factorization means (``singular``: a failure to cut back from, or a model error), and
  where the accuracy reports of the solves go (``solved``);
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

from fem import interrupt, linalg
from fem.dofs import block_norms
from fem.solvers import newton_scalar as scalar
from fem.solvers.newton_scalar import ROUND_OFF_MARGIN  # noqa: F401 (fem.solvers.newton's name)


class NewtonFailure(Exception):
    """Raised inside a step when an increment fails; the step cuts it or reports the error."""

    def __init__(self, reason: str, iteration: int, norms: list[float]):
        self.reason = reason
        self.iteration = iteration
        self.norms = list(norms)
        super().__init__(reason)


@dataclass
class NormTest:
    """Residual test per block, with a round-off floor, a stagnation guard and a divergence guard.

    The unknowns come in blocks of different units (:data:`fem.dofs.KINDS`: forces at the
    translations, moments at the rotations, element-internal unknowns, constraint rows), given by
    ``kind``, the block of each unknown (None: one block). Their residuals are never added into
    one norm: with forces of 1e6 and moments of 1e-3 (a change of units does that) such a norm
    is the force residual alone, and the moments would pass unconverged, or in the opposite
    units never. Each block ``b`` has its own norm ``|r_b|`` and its own reference ``scale_b``,
    supplied per iteration by the caller in the block's units
    (:meth:`fem.analysis.base.StepBase.block_scale`). An increment has converged when, after
    ``k`` Newton corrections, every block has:

    * ``|r_b| <= max(rtol * scale_b, atol)``, so the test is unit-free; or
    * ``|r_b| <= floor_b``, the block's round-off floor (:meth:`set_floor`), and the last
      correction no longer halved it, or started below the floor too: the residual is round-off,
      no iteration can lower it.

    **Why a floor.** Nodal coordinates are stored as positions ``x = X + u``, known only to
    ``eps |x|`` however small the displacement ``u`` is; internal forces computed from them carry
    errors of about ``eps |K| |x|`` (``|K|`` the entrywise absolute tangent, rotations counted
    with magnitude 1, :meth:`fem.analysis.base.StepBase.floors`), row by row, so block by block.
    No iteration can reduce the residual below that. When the load is small compared with the
    stiffness of the members (0.01 N on a steel rod, a stiff pendulum hanging at rest),
    ``rtol * scale`` falls below it and a plain relative test never passes. Since the floor is
    an upper estimate of the round-off (sums of absolute values), a residual below it may still
    be falling: the block is accepted there only once a correction has stopped halving it, or
    went from below the floor to below it again (round-off noise halves as often as not: the
    residual of a small load on a stiff rod went 8e-9, 4e-9 under a floor of 3e-7), so at least
    one correction is always made, and a load whose residual is already below the floor still
    moves the structure, by the solution of the linearized problem; where the relative test can
    be met, the iterations are those it needs.

    **Stagnation guard.** When the last correction is at round-off *relative to the positions*,
    ``|du| <= round_off * |x|`` (:meth:`correction`; comparing with the displacements instead
    would never fire for small motions), and the residual no longer halves, no iteration can
    change the state any more: the increment is accepted if every block has ``|r_b| <= max(1000
    rtol scale_b, ROUND_OFF_MARGIN floor_b)`` and otherwise fails with a message that names the
    block (the tolerance is below what the model's arithmetic resolves). The floor is a sum of
    row estimates, but the element arithmetic behind a row (co-rotational frames, chord angles
    from differences of positions) adds round-off of the same size several times over: a
    pendulum of 1000 stiff 2 mm beams stagnated at 1.4 floors (2.8e-5 N, 1.1e-6 relative, with
    corrections at 1e-13 of the positions), just above 1000 rtol, and halved its step 13657
    times.

    **Divergence.** A non-finite residual, ``max_iterations`` exceeded, or a residual a million
    times its first value after three iterations fail the increment (:class:`NewtonFailure`),
    with a reason that names the block furthest from its tolerance.

    ``norms`` keeps the 2-norm of the whole residual per iteration (the results file's
    statistics, the bent corrections' test), ``block_norms`` the norm of each block.
    """

    rtol: float = 1e-9
    atol: float = 0.0
    max_iterations: int = 25
    round_off: float = 1e-13
    kind: NDArray | None = None            # (n,) block of each unknown; None: one block
    names: tuple[str, ...] = ("",)         # what each block holds, for messages
    norms: list[float] = field(default_factory=list)
    block_norms: list[NDArray] = field(default_factory=list)
    floor: NDArray | float = 0.0
    at_floor: bool = False
    scale: NDArray | float = 1.0           # the latest reference of each block

    def start(self) -> None:
        """Begin a new increment."""
        self.norms = []
        self.block_norms = []
        self._du_ratio = np.inf
        self.floor = 0.0
        self.at_floor = False

    def set_floor(self, floor) -> None:
        """The residual's round-off floor ``eps |K| |x|`` per block at the latest tangent."""
        floor = np.asarray(floor, dtype=float)
        self.floor = np.where(np.isfinite(floor), floor, 0.0)

    def correction(self, du_norm: float, x_norm: float) -> None:
        """Record the size of the Newton correction just applied and of the positions it moved."""
        self._du_ratio = scalar.correction_ratio(du_norm, x_norm)

    def blocks(self, r) -> NDArray:
        """(nblocks,) the norm of each block of the residual ``r`` (a vector, or one norm)."""
        r = np.atleast_1d(np.asarray(r, dtype=float))
        if self.kind is None or len(r) != len(self.kind):
            return np.array([np.linalg.norm(r)])
        return block_norms(self.kind, r, len(self.names))

    def weighted(self, r, scale) -> float:
        """A unit-free size of ``r``: the root sum of squares of ``|r_b| / scale_b``."""
        b = self.blocks(r)
        return float(np.linalg.norm(b / np.maximum(np.broadcast_to(scale, b.shape), 1e-300)))

    def describe(self, b: NDArray | None = None) -> str:
        """The block furthest from its tolerance: ``"moment residual 3.2e-04 > 1e-09 x 4.1e+02"``.

        ``b`` are block norms (default: the latest).
        """
        b = self.block_norms[-1] if b is None else b
        tol = self._tolerance(len(b))
        k = int(np.argmax(b / np.maximum(tol, 1e-300)))
        name = f"{self.names[k]} residual" if len(b) == len(self.names) and self.names[k] \
            else "residual"
        scale = np.broadcast_to(self.scale, b.shape)[k]
        if self.atol > self.rtol * scale:
            return f"{name} {b[k]:.3e} > tolerance {self.atol:.3e}"
        return f"{name} {b[k]:.3e} > tolerance {self.rtol:g} x {scale:.3e}"

    def _tolerance(self, nb: int) -> NDArray:
        return np.maximum(self.rtol * np.broadcast_to(self.scale, (nb,)), self.atol)

    def _floor(self, nb: int) -> NDArray:
        """(nb,) the round-off floor of each block (one floor for all: its norm in each)."""
        if np.size(self.floor) in (1, nb):
            return np.array(np.broadcast_to(self.floor, (nb,)), dtype=float)
        return np.full(nb, np.linalg.norm(self.floor))

    def converged(self, r, scale) -> bool:
        """Record a residual; true when converged; :class:`NewtonFailure` when diverging.

        ``r`` is the residual of the unknowns (or its norm), ``scale`` the reference of each
        block (or one for all). The verdict is :func:`fem.solvers.newton_scalar.verdict`'s,
        which the compiled steps of small planar models call too.
        """
        b = self.blocks(r)
        # the blocks partition r: its norm is theirs (one pass over r, not two)
        rnorm = float(np.sqrt(np.dot(b, b)))
        self.norms.append(rnorm)
        self.block_norms.append(b)
        self.scale = np.array(np.broadcast_to(scale, b.shape), dtype=float)
        it = len(self.norms) - 1
        first = it == 0
        verdict = scalar.verdict(
            b, self.scale, self.rtol, self.atol, b if first else self.block_norms[-2],
            self._floor(len(b)), rnorm, 0.0 if first else self.norms[-2], self.norms[0],
            self._du_ratio, it, self.round_off, self.max_iterations)
        if verdict == scalar.GOING:
            return False
        if verdict in (scalar.CONVERGED, scalar.AT_FLOOR, scalar.ROUND_OFF):
            self.at_floor = self.at_floor or verdict == scalar.AT_FLOOR
            return True
        if verdict == scalar.NOT_FINITE:
            raise NewtonFailure("residual is not finite", it, self.norms)
        if verdict == scalar.STAGNATED:
            tol = self._tolerance(len(b))
            k = int(np.argmax(b / np.maximum(tol, 1e-300)))
            raise NewtonFailure(f"the {self.describe(b).split(' >')[0]} stagnates "
                                f"({b[k] / self.scale[k]:.1e} relative) while the corrections "
                                f"are at round-off: the tolerance {self.rtol:g} is below what "
                                "this model resolves; raise the step's tolerance", it, self.norms)
        if verdict == scalar.ITERATIONS:
            raise NewtonFailure(f"no convergence in {self.max_iterations} iterations "
                                f"({self.describe(b)})", it, self.norms)
        raise NewtonFailure(f"residual diverging ({self.describe(b)})", it, self.norms)


@dataclass
class Evaluation:
    """One evaluation of a problem at a trial state (full active-DOF vectors, free DOFs first)."""

    r: NDArray                   # (n_active,) residual
    scale: NDArray | float       # reference of each block of the residual (see NormTest)
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

    def floor(self, K: NDArray, trial) -> NDArray | float:
        """The residual's round-off floor at this tangent, per block (see :class:`NormTest`)."""

    def positions(self, trial) -> float:
        """The norm of the positions the corrections move (see :meth:`NormTest.correction`)."""

    # optional: ``with_tangent(trial, lam, ev) -> Evaluation`` adds the tangent to ``ev``, a
    # residual-only evaluation at ``trial`` and ``lam`` (the vectors it has are not computed
    # again); without it Newton evaluates the problem again with the tangent.
    # optional: ``correct(trial, du, lam, r_norm) -> Evaluation | None`` applies a correction of
    # an unbordered iteration its own way (e.g. fem.analysis.bent) and may return the evaluation
    # (the residual, with or without the tangent) at the corrected trial, which then is not
    # computed again; a line search
    # (Newton's ``line_search``) takes its place when one is given


LINE_SEARCHES = ("none", "residual", "energy")


@dataclass
class LineSearch:
    """How much of a Newton correction ``du`` to apply: ``trial + s du``, ``0 < s <= 1``.

    The full step is tried first, and kept when it passes, so where Newton converges well a line
    search costs nothing (the residual at ``s = 1`` is the next iteration's).

    ``"residual"``: backtracking on the unit-free merit ``phi(s) = |r(s)|_w^2 / 2``, the block
    norms weighted by their references (:meth:`NormTest.weighted`, so that forces and moments do
    not mix); Newton's direction descends it with ``phi'(0) = -2 phi(0)``; a step passes when
    ``phi(s) <= (1 - 2 alpha s) phi(0)`` (Armijo, ``alpha = 1e-4``), else the minimizer of the
    quadratic through ``phi(0)``, ``phi'(0)``, ``phi(s)``, kept within ``[0.1 s, 0.5 s]``
    (Dennis & Schnabel 1983, section 6.3.2).

    ``"energy"``: the directional derivative of the potential ``g(s) = r(trial + s du) . du``
    (Crisfield 1991, vol. 1, section 9.5; Bonet & Wood 2008, section 7.4): the step passes when
    ``|g(s)| <= eta |g(0)|`` (``eta = 0.5``) or ``g(1)`` has the sign of ``g(0)`` (the potential
    still falls at the full step: no extrapolation); otherwise the root of ``g`` is bracketed in
    ``[0, 1]`` and found by the Illinois variant of regula falsi (Dowell & Jarratt 1971). When
    ``du`` is not a descent direction (``g(0) >= 0``: an indefinite tangent past a limit point)
    the full step is taken.

    At most ``max_trials`` residuals are evaluated after the full step's; then the best trial
    found is taken (never a zero step).
    """

    kind: str = "residual"
    max_trials: int = 6
    alpha: float = 1e-4
    eta: float = 0.5
    steps: list[float] = field(default_factory=list)     # the accepted s of every correction

    def __call__(self, problem, trial, du: NDArray, lam: float, ev0: Evaluation,
                 test: NormTest) -> tuple[Evaluation, float]:
        """Apply ``s du`` to ``trial``; the evaluation there (residual only) and ``s``."""
        n = len(du)

        def at(step: float):
            cand = trial.copy()
            problem.update(cand, step * du)
            return cand, problem.evaluate(cand, lam, tangent=False)

        cand, ev = at(1.0)
        trials = [(1.0, cand, ev)]
        if self.kind == "energy":
            s = self._energy(at, trials, float(ev0.r[:n] @ du), du, n)
        else:
            s = self._residual(at, trials, ev0, test, n)
        s, cand, ev = next(t for t in trials if t[0] == s)
        trial.assign(cand)
        self.steps.append(s)
        return ev, s

    def _residual(self, at, trials, ev0, test, n) -> float:
        w = ev0.scale                 # the weights stay those of the start of the search
        phi0 = 0.5 * test.weighted(ev0.r[:n], w) ** 2
        best, s = (np.inf, 1.0), 1.0
        for _ in range(self.max_trials + 1):
            phi = 0.5 * test.weighted(trials[-1][2].r[:n], w) ** 2
            if np.isfinite(phi) and phi < best[0]:
                best = (phi, s)
            if phi <= (1 - 2 * self.alpha * s) * phi0:
                return s
            if len(trials) > self.max_trials:
                break
            # the minimizer of the quadratic with phi(0), phi'(0) = -2 phi0 and phi(s)
            curv = phi - phi0 + 2 * phi0 * s if np.isfinite(phi) else np.inf
            s = float(np.clip(phi0 * s * s / curv if curv > 0 else 0.1 * s, 0.1 * s, 0.5 * s))
            cand, ev = at(s)
            trials.append((s, cand, ev))
        return best[1] if np.isfinite(best[0]) else trials[-1][0]

    def _energy(self, at, trials, g0: float, du, n) -> float:
        g1 = float(trials[0][2].r[:n] @ du)
        if not g0 < 0 or (np.isfinite(g1) and (g1 <= 0 or abs(g1) <= self.eta * abs(g0))):
            return 1.0
        best = (abs(g1) if np.isfinite(g1) else np.inf, 1.0)
        a, ga, b, gb = 0.0, g0, 1.0, g1 if np.isfinite(g1) else abs(g0)
        side = 0
        for _ in range(self.max_trials):
            s = float(np.clip(a - ga * (b - a) / (gb - ga), a + 0.01 * (b - a),
                              b - 0.01 * (b - a)))
            cand, ev = at(s)
            trials.append((s, cand, ev))
            g = float(ev.r[:n] @ du)
            if not np.isfinite(g):
                b, gb, side = s, abs(g0), 0
                continue
            if abs(g) < best[0]:
                best = (abs(g), s)
            if abs(g) <= self.eta * abs(g0):
                return s
            if g < 0:                      # the root is beyond s: it replaces the left end
                a, ga = s, g
                if side == -1:             # Illinois: the right end was kept twice, halve it
                    gb *= 0.5
                side = -1
            else:
                b, gb = s, g
                if side == 1:
                    ga *= 0.5
                side = 1
        return best[1]


#: Modified Newton: a new tangent once the residual falls by less than this factor an iteration
MODIFIED_CONTRACTION = 0.25


class Newton:
    """Newton iterations of one increment; see the module docstring.

    Parameters
    ----------
    linear : the :class:`~fem.solvers.linear_system.LinearSystem`: ``fill(K)`` the matrix,
        ``solve(rhs) -> (x, report)`` (raises :class:`fem.linalg.SingularMatrixError` or
        :class:`fem.linalg.NonFiniteError`), ``n`` the number of unknowns
    test : the convergence test (its ``max_iterations`` bounds the loop)
    factored : optional ``callable(r_norm)``, called after the first solve with each new
        factorization (the static step watches the tangent's determinant there)
    line_search : optional :class:`LineSearch` for the corrections of unbordered iterations (it
        takes the place of the problem's own ``correct``)
    modified : modified Newton for unbordered iterations: the increment's first tangent is
        factored and reused, and a new one only when an iteration reduces the residual by less
        than :data:`MODIFIED_CONTRACTION`. The converged state meets the same test; the
        iterations converge linearly instead of quadratically, each without a tangent or a
        factorization (where those are most of an iteration: small models, or a factorization
        that costs many residuals). Carrying the factorization from one time step to the next
        was tried on the flexible pendulum of ``benchmarks/small_models.py``: 5.5 iterations a
        step instead of 2, slower than full Newton
    singular : optional ``callable(err, failure) -> Exception``: what a singular factorization
        means to the step (``err`` the :class:`fem.linalg.SingularMatrixError`, ``failure`` the
        :class:`NewtonFailure` raised without the hook, which the step may return); the
        exception returned is raised
    solved : optional ``callable(report)``, given the accuracy report of every solve
        (:func:`fem.linalg.solve_checked`)
    """

    def __init__(self, linear, test: NormTest, factored=None,
                 line_search: LineSearch | None = None, modified: bool = False,
                 singular=None, solved=None):
        self.linear = linear
        self.test = test
        self.factored = factored
        self.line_search = line_search
        self.modified = modified
        self.singular = singular
        self.solved = solved
        self.last: Evaluation | None = None
        self.increment: NDArray | None = None

    def _factor(self, problem, trial, ev: Evaluation) -> None:
        self.linear.fill(ev.K)
        self.test.set_floor(problem.floor(ev.K, trial))

    def _solve(self, rhs: NDArray, fresh: bool) -> NDArray:
        test = self.test
        try:
            x, report = self.linear.solve(rhs)
        except linalg.SingularMatrixError as err:
            failure = NewtonFailure(f"singular tangent ({err})", len(test.norms), test.norms)
            raise (failure if self.singular is None else self.singular(err, failure)) from None
        except linalg.NonFiniteError as err:
            raise NewtonFailure(f"linear solve: {err}", len(test.norms), test.norms) from None
        if self.solved is not None:
            self.solved(report)
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
        search = self.line_search if control is None else None
        pending = None
        modified = self.modified and control is None
        stale = True                       # a tangent to factor at the next iteration
        for _ in range(test.max_iterations + 2):
            interrupt.check()
            ev = pending or problem.evaluate(trial, lam,
                                             tangent=problem.fused and not small and stale)
            pending = None
            if test.converged(ev.r[:n], ev.scale):
                self.last, self.increment = ev, Du
                return len(test.norms) - 1, lam
            if modified and not stale and len(test.norms) > 1 \
                    and test.norms[-1] > MODIFIED_CONTRACTION * test.norms[-2]:
                stale = True               # the old tangent no longer contracts: a new one
            if stale:
                if ev.K is None:
                    with_tangent = getattr(problem, "with_tangent", None)
                    ev = (with_tangent(trial, lam, ev) if with_tangent is not None
                          else problem.evaluate(trial, lam, tangent=True))
                self._factor(problem, trial, ev)
                stale = not modified
                du = self._solve(-ev.r[:n], fresh=True)
            else:
                du = self._solve(-ev.r[:n], fresh=False)
            if control is not None:
                du_f = self._solve(ev.F[:n], fresh=False)
                d = control.correction(du, du_f, Du, lam - lam0, ev.F[:n])
                du = du + d * du_f
                Du = Du + du
                lam += d
            r_norm = test.norms[-1]
            if search is not None:
                pending, step = search(problem, trial, du, lam, ev, test)
                du = step * du
            elif correct is not None:
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
