"""Static steps: linear, and nonlinear path following (load, displacement, arc-length control).

One Newton loop serves every control (after OpenSees's ``LoadControl``, ``DisplacementControl`` and
``ArcLength`` integrators). Each iteration solves ``K du_r = -r`` and, when the load factor is an
unknown, ``K du_f = F`` with the same factorization, and the control picks ``dlam``:

* load control: ``lam`` is the step's pseudo-time; increments adapt (halved after a failed Newton
  solve, grown by 1.5 after one converging in at most ``fast_iterations``);
* displacement control: one DOF follows its prescribed path; ``dlam`` keeps it there (Batoz &
Dhatt);
* arc-length: Crisfield's cylindrical (``psi = 0``) or spherical (``psi = 1``) constraint
  ``|Du|^2 + psi^2 Dlam^2 |F|^2 = dl^2`` (Crisfield 1981; vol. 1, section 9.3), root chosen by the
  smallest angle with the previous increment, ``dl`` scaled by ``sqrt(target / iterations)``.

External forces are ``f_ext = lam F(u)`` (follower loads make ``F`` depend on the state), so these
controls need the default (ramp) load functions. Prescribed displacements ramp with ``lam`` under
load control, which runs towards a negative ``load_factor`` as well (the loads reversed).

No silent wrong answers:

* every linear solve is checked (:func:`fem.linalg.solve_checked`); a linear step estimates the
  condition number and raises :class:`~fem.errors.AccuracyError` when double precision cannot
  give the answer (:data:`ACCURACY_LIMIT`), and warns when it may have lost digits;
* load control watches the tangent: when the sign of its determinant (MUMPS, ``ICNTL(33)``) or,
  with other solvers, of the current stiffness parameter ``F . K^-1 F`` differs from the one at
  the start of the step at a converged state or at a Newton iterate of a converged increment that
  is as close to equilibrium as the increment's start (residual no larger than its first), a limit
  or bifurcation point was passed and the step warns. Such iterates count, not only the converged
  states: an increment that snaps through a limit point ends on a stable branch again, but its
  iterates cross the unstable one. Iterates far from equilibrium are ignored (the first
  corrections of slender co-rotational beams often have a tangent of either sign). Eigenvalues
  that cross zero in pairs leave the sign alone.
* an arc-length path that ends at ``max_steps`` before its target warns;
* a converged increment whose state or residual is not finite raises ``AccuracyError``;
* every loop is bounded, and :func:`fem.interrupt.check` runs at every increment and iteration.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from fem import interrupt, linalg
from fem.errors import AccuracyError, ConvergenceError, ModelError
from fem.newton import NewtonFailure, NormTest
from fem.steps import StepBase

log = logging.getLogger(__name__)

ACCURACY_LIMIT = 1e-2    # linear steps: above this estimated relative error the answer is refused
ACCURACY_WARN = 1e-4     # ... and above this it comes with a warning
MAX_CUTS = 60            # load control: halvings of the increment in a row, whatever min_increment


@dataclass
class StaticSettings:
    """Settings of a static step (deck keys of ``[[steps]]`` with ``type = "static"``)."""

    nonlinear: bool = False
    control: str = "load"              # load | displacement | arclength
    load_factor: float = 1.0           # final lam (load control)
    increments: int = 10               # initial increment = load_factor / increments
    min_increment: float | None = None
    max_increment: float | None = None
    fast_iterations: int = 4
    max_iterations: int = 25
    tolerance: float = 1e-9
    # displacement control
    node: int | None = None            # node index
    dof: int | None = None             # slot
    target: float | None = None
    # arc-length
    arc_length: float | None = None
    max_arc_length: float | None = None
    max_steps: int = 100
    psi: float = 0.0                   # 0 cylindrical, 1 spherical
    target_iterations: int = 5
    stop_load_factor: float | None = None
    stop_displacement: float | None = None
    extra: dict = field(default_factory=dict)


class StaticStep(StepBase):
    """A static step; see the module docstring."""

    step_type = "static"

    def __init__(self, name, system, loads, settings: StaticSettings, solver_options=None,
                 output_every: int = 1):
        super().__init__(name, system, loads, solver_options)
        self.settings = settings
        self.test = NormTest(rtol=settings.tolerance, max_iterations=settings.max_iterations)
        self.output_every = output_every
        self._signs: list[tuple] = []           # (tangent sign, residual) of the increment
        self._pattern = None                    # free part of F, when load control watches
        self._fresh = False
        self._sign0 = None                      # tangent sign at the start (load control)

    # --- residual and tangent -----------------------------------------------------------------
    def _residual(self, state, lam) -> tuple[NDArray, NDArray, float]:
        """Full residual ``f_int - f_ext(lam)`` (n_active,), the pattern ``F`` and a norm scale."""
        fint = self.system.internal_force(state)
        fext = self.external(state, lam)
        r = fint - fext
        F = self.system.dofmap.from_nodal(self.loads.pattern(state))
        scale = max(np.linalg.norm(fext), np.linalg.norm(fint), 1e-300)
        return r, F, scale

    def _factor(self, state, lam) -> None:
        """Refill the matrix with the tangent at ``state`` (factored at the next solve).

        Also sets the residual's round-off floor of the Newton test.
        """
        asm = self.system.assembler
        data = self.system.tangent(state, self.loads.stiffness(state, lam))
        linalg.fill_matrix(self.A, asm.indptr, asm.indices, data)
        self._tangent_data = data
        self._fresh = True
        self.test.set_floor(self.system.round_off_floor(data, self.system.positions(state)))

    def _solve(self, rhs: NDArray) -> NDArray:
        """A Newton solve: checked, refined, its accuracy and the tangent's sign recorded."""
        try:
            x, report = linalg.solve_checked(self.ksp, rhs)
        except linalg.SingularMatrixError as err:
            raise NewtonFailure(f"singular tangent ({err})", len(self.test.norms),
                                self.test.norms) from None
        except linalg.NonFiniteError as err:
            raise NewtonFailure(f"linear solve: {err}", len(self.test.norms),
                                self.test.norms) from None
        self.note_solve(report)
        if self._fresh and self._pattern is not None:    # load control: one sign per
            self._signs.append((self._tangent_sign(), self.test.norms[-1]))  # factorization
        self._fresh = False
        return x

    def _tangent_sign(self) -> int | None:
        """Sign of the determinant of the factored tangent, or of ``F . K^-1 F`` without one.

        Only load control asks (``self._pattern`` set); MUMPS's determinant is free, the
        stiffness parameter costs one more solve with the same factorization.
        """
        if self._pattern is None:
            return None
        sign = linalg.determinant_sign(self.ksp)
        if sign is not None or not np.any(self._pattern):
            return sign
        try:
            x = linalg.solve(self.ksp, self._pattern)
        except (linalg.SingularMatrixError, linalg.NonFiniteError):
            return 0
        return int(np.sign(self._pattern @ x))

    def _increment_checks(self, state, r, lam) -> None:
        """After a converged increment: finite results; keep its inaccurate solves."""
        if not (np.all(np.isfinite(state.u)) and np.all(np.isfinite(state.rot))
                and np.all(np.isfinite(r))):
            raise AccuracyError(f"step '{self.name}', load factor {lam:.6g}: the solution "
                                "overflowed (displacements, rotations or forces are not finite)")
        self.commit_solves(lam)

    # --- the step -----------------------------------------------------------------------------
    def run(self, state, recorder):
        """Advance ``state`` (committed in place) through the step, recording frames."""
        s = self.settings
        watch = s.nonlinear and s.control == "load"
        # MUMPS computes the determinant of every factorization for the limit-point watch
        self.open_solver({"mat_mumps_icntl_33": 1} if watch else None)
        self.loads.begin(state)
        writer = None
        if recorder:
            # the ParaView clock must only grow (fem.io.hdf5.StepWriter): the load factor's
            # magnitude under load control, the increment count where the load factor can fall
            path = s.nonlinear and s.control != "load"
            span = (s.increments if s.control == "displacement" else s.max_steps) if path \
                else (abs(s.load_factor) if s.nonlinear else 1.0)
            writer = recorder.begin_step(self.name, "static", self.system,
                                         clock="count" if path else "abs", span=span)
        try:
            if s.nonlinear:
                self._check_start(state)
            if not s.nonlinear:
                self._linear(state, writer)
            elif s.control == "load":
                self._load_control(state, writer)
            elif s.control == "displacement":
                self._path_following(state, writer, DisplacementControl(s, self.system))
            else:
                self._path_following(state, writer, ArcLength(s, self.system))
            self.loads.finish(state, state.t)
            self.warn_solves()
        finally:
            if writer:
                writer.close()
            self.close()
        return state

    def _check_start(self, state) -> None:
        """Factor the tangent at the start of a nonlinear step; a singular one is a mechanism.

        Load control also takes the sign of this tangent as the reference of its limit-point
        watch (a step normally starts from a stable state).
        """
        self._factor(state, 0.0)
        self._check_finite_tangent(state)
        if self.settings.control == "load":
            self._pattern = self.system.dofmap.from_nodal(
                self.loads.pattern(state))[:self.system.n_free]
        try:
            linalg.solve(self.ksp, np.ones(self.system.n_free))
        except (linalg.SingularMatrixError, linalg.NonFiniteError):
            raise self.mechanism_error() from None
        self._fresh = False
        self._sign0 = self._tangent_sign()

    def _check_finite_tangent(self, state) -> None:
        if not np.all(np.isfinite(self._tangent_data)):
            raise AccuracyError(f"step '{self.name}': the tangent stiffness is not finite at the "
                                "start of the step (coordinates, section data or the state "
                                "overflow)")

    def _linear(self, state, writer) -> None:
        """One solve linearized about the step's initial state: ``K du = F - f_int``.

        The solution is the result, so its accuracy is estimated (:func:`fem.linalg.accuracy`):
        beyond :data:`ACCURACY_LIMIT` the step raises :class:`~fem.errors.AccuracyError`
        instead of returning a wrong number.
        """
        trial = state.copy()
        du_p = self.apply_prescribed(trial, 1.0)
        fext = self.external(state, 1.0)
        r = self.system.linearized_force(state, du_p) - fext
        self._factor(state, 1.0)
        self._check_finite_tangent(state)
        n = self.system.n_free
        try:
            du_f, report = linalg.solve_checked(self.ksp, -r[:n])
        except linalg.SingularMatrixError:
            raise self.mechanism_error() from None
        except linalg.NonFiniteError as err:
            raise AccuracyError(f"step '{self.name}': {err}") from None
        self._check_accuracy(-r[:n], du_f, report)
        du = du_p + self.free_to_nodal(du_f)
        r = self.system.linearized_force(state, du) - fext
        self.system.update(state, du)
        self._increment_checks(state, r, 1.0)
        state.t = 1.0
        state.hist = trial.hist
        if writer:
            writer.frame(state, time=1.0, reactions=r, stats={
                "load_factor": 1.0, "iterations": 1, "residual": float(np.linalg.norm(r[:n]))})

    def _check_accuracy(self, b, x, report) -> None:
        """Refuse (or flag) the solution of a linear step that double precision cannot give."""
        if not np.any(b):
            return                           # nothing loads it: zero is exact
        cond, bound = linalg.accuracy(self.ksp, b, x)
        if not np.isfinite(bound):           # no condition estimate: the backward error alone
            if report.poor:
                raise AccuracyError(f"step '{self.name}': the linear solve is inaccurate "
                                    f"(backward error {report.backward_error:.1e} after "
                                    f"{report.refinements} refinements)")
            return
        detail = (f"condition number about {cond:.1e} (1-norm estimate of the equilibrated "
                  f"tangent), so the relative error of the solution may reach {bound:.0e}")
        if bound > ACCURACY_LIMIT:
            raise AccuracyError("the linear system is too ill-conditioned to solve in double "
                                f"precision: {detail} (step '{self.name}'); a chain of many "
                                "slender beam elements does this (the condition number grows "
                                "with the fourth power of the number of elements along a "
                                "member): use fewer elements")
        if bound > ACCURACY_WARN:
            self.warn(f"the linear system is ill-conditioned: {detail}")

    def _load_control(self, state, writer) -> None:
        """Increments of the load factor from 0 to ``load_factor`` (either sign), adapted.

        Every loop is bounded: an increment that fails is halved at most :data:`MAX_CUTS` times
        in a row and never below ``min_increment`` or below what changes the load factor.
        """
        s = self.settings
        lam_end = s.load_factor
        if lam_end == 0:
            return
        sign = 1.0 if lam_end > 0 else -1.0
        end = abs(lam_end)
        dlam = end / s.increments                  # magnitudes from here on
        dmin = abs(s.min_increment) if s.min_increment is not None else dlam / 2**12
        dmax = abs(s.max_increment) if s.max_increment is not None else dlam
        done = 0.0                                 # |lam| reached
        k = cuts = 0
        warned = False
        while done < end - 1e-14 * end:
            interrupt.check()
            dlam = min(dlam, end - done)
            lam_new = sign * (done + dlam)
            if lam_new == sign * done:
                raise ConvergenceError(f"the load increment {dlam:.3g} no longer changes the load "
                                       "factor", step=self.name, time=sign * done)
            trial = state.copy()
            self._signs = []
            try:
                its = self._newton_fixed_load(trial, lam_new, state)
            except NewtonFailure as fail:
                cuts += 1
                if dlam / 2 < dmin or cuts > MAX_CUTS:
                    raise ConvergenceError(f"Newton failed: {fail.reason}; increment below the "
                                           f"minimum {dmin:.3g}" if cuts <= MAX_CUTS else
                                           f"Newton failed: {fail.reason}; {MAX_CUTS} halvings "
                                           "of the increment in a row", step=self.name,
                                           time=lam_new, iteration=fail.iteration,
                                           norms=fail.norms) from None
                log.info("step %s: cutting increment at lam=%.6g (%s)", self.name, lam_new,
                         fail.reason)
                dlam /= 2
                self.commit_solves(0.0, failed=True)
                continue
            cuts = 0
            done += dlam
            lam = sign * done
            k += 1
            self._increment_checks(trial, self._last_r, lam)
            # Iterates far from equilibrium (the first corrections of a slender co-rotational
            # beam stretch or shorten its elements wildly) may have any sign; those as close to
            # equilibrium as the increment's start (residual at most its first) are near the
            # path, and a sign change there is the path's.
            r0 = self.test.norms[0]
            if not warned and any(g is not None and g != self._sign0 and rk <= r0
                                  for g, rk in self._signs):
                warned = True
                self.warn(f"passed a limit (or bifurcation) point near load factor "
                          f"{sign * (done - dlam):.6g} to {lam:.6g}: the sign of the tangent "
                          "stiffness's determinant (or of F . K^-1 F) changed in that increment "
                          "(the structure snaps through or branches), so the path beyond it is "
                          'not reliable under load control; use control = "arclength" to '
                          "follow it")
            state.assign(trial)
            if writer:
                writer.advance(lam, its)
            if writer and (k % self.output_every == 0 or done >= end - 1e-14 * end):
                writer.frame(state, time=lam, reactions=self._last_r, stats=self._stats(lam, its))
            if its <= s.fast_iterations:
                dlam = min(1.5 * dlam, dmax)

    def _newton_fixed_load(self, trial, lam, start) -> int:
        """Full Newton at fixed load; returns the number of iterations.

        No line search: for co-rotational beams the first correction of an increment typically
        raises the residual a hundredfold (a transient axial stretch) and is nonetheless the
        right step; residual- and energy-based line searches both cut it and triple the work.
        """
        self.test.start()
        self.apply_prescribed(trial, lam)
        trial.t = lam
        n = self.system.n_free
        for it in range(self.settings.max_iterations + 2):
            interrupt.check()
            r, F, scale = self._residual(trial, lam)
            if self.test.converged(np.linalg.norm(r[:n]), scale):
                self._last_r = r
                return it
            self._factor(trial, lam)
            if self._pattern is not None:
                self._pattern = F[:n]
            du = self._solve(-r[:n])
            self.system.update(trial, self.free_to_nodal(du))
            self.test.correction(np.linalg.norm(du),
                                 np.linalg.norm(self.system.positions(trial)))
        raise NewtonFailure("no convergence", it, self.test.norms)  # pragma: no cover

    def _stats(self, lam, its) -> dict:
        return {"load_factor": lam, "iterations": its, "residual": self.test.norms[-1]}

    def _path_following(self, state, writer, control) -> None:
        """Displacement or arc-length control; the load factor is an unknown."""
        if not self.loads.proportional:
            raise ModelError(f"step '{self.name}': {self.settings.control} control needs "
                             "proportional loads (no 'function' on the step's loads)")
        lam = 0.0
        prev_du = None
        k = 0
        failures = 0
        while not control.finished(state, lam, k):
            interrupt.check()
            trial = state.copy()
            self.test.start()
            try:
                du_step, dlam_step = self._bordered_newton(trial, lam, control, prev_du)
                if control.overshoots(trial):             # land exactly on the watched target
                    trial = state.copy()
                    self.test.start()
                    du_step, dlam_step = self._bordered_newton(trial, lam,
                                                               control.landing(state), prev_du)
            except NewtonFailure as fail:
                failures += 1
                if not control.cut() or failures > 20:
                    raise ConvergenceError(f"{self.settings.control} control failed: "
                                           f"{fail.reason}", step=self.name, time=lam,
                                           iteration=fail.iteration, norms=fail.norms) from None
                self.commit_solves(0.0, failed=True)
                continue
            failures = 0
            lam += dlam_step
            k += 1
            prev_du = du_step
            trial.t = lam
            self._increment_checks(trial, self._last_r, lam)
            state.assign(trial)
            control.adapt(len(self.test.norms) - 1)
            if writer:
                writer.advance(k, len(self.test.norms) - 1)
            if writer and (k % self.output_every == 0 or control.finished(state, lam, k)):
                writer.frame(state, time=lam, reactions=self._last_r,
                             stats=self._stats(lam, len(self.test.norms) - 1))
        short = getattr(control, "short_of_target", lambda *a: None)(state, lam, k)
        if short:
            self.warn(short)

    def _bordered_newton(self, trial, lam0, control, prev_du):
        n = self.system.n_free
        r, F, scale = self._residual(trial, lam0)
        self._factor(trial, lam0)
        du_f = self._solve(F[:n])
        dlam = control.predictor(du_f, F[:n], prev_du, trial)
        Du = dlam * du_f
        self.system.update(trial, self.free_to_nodal(Du))
        lam = lam0 + dlam
        for _ in range(self.settings.max_iterations + 2):
            interrupt.check()
            r, F, scale = self._residual(trial, lam)
            if self.test.converged(np.linalg.norm(r[:n]), scale):
                self._last_r = r
                return Du, lam - lam0
            self._factor(trial, lam)
            du_r = self._solve(-r[:n])
            du_f = self._solve(F[:n])
            d = control.correction(du_r, du_f, Du, lam - lam0, F[:n])
            du = du_r + d * du_f
            Du = Du + du
            lam += d
            self.system.update(trial, self.free_to_nodal(du))
            self.test.correction(np.linalg.norm(du),
                                 np.linalg.norm(self.system.positions(trial)))
        raise NewtonFailure("no convergence", len(self.test.norms), self.test.norms)


class DisplacementControl:
    """One free DOF moves by equal steps to ``target``; the load factor follows."""

    def __init__(self, s: StaticSettings, system):
        self.system = system
        k = system.dofmap.index[s.node, s.dof]
        if k < 0 or k >= system.n_free:
            raise ModelError("displacement control needs a free DOF")
        self.k = int(k)
        self.node, self.dof = s.node, s.dof
        self.target = s.target
        self.n = s.increments
        self.du = s.target / s.increments
        self.done = 0.0
        self.min_du = abs(self.du) / 2**10

    def finished(self, state, lam, k) -> bool:
        """Whether the path has reached its end."""
        return abs(self.done) >= abs(self.target) - 1e-12 * abs(self.target)

    def overshoots(self, trial) -> bool:
        """Whether the increment just solved passed the watched target."""
        return False

    def predictor(self, du_f, F, prev_du, state) -> float:
        """Load-factor increment of the predictor along the tangent direction ``du_f``."""
        self.step = min(abs(self.du), abs(self.target - self.done)) * np.sign(self.du)
        return self.step / du_f[self.k]

    def correction(self, du_r, du_f, Du, Dlam, F) -> float:
        """Load-factor correction of one Newton iteration."""
        return -du_r[self.k] / du_f[self.k]        # the controlled DOF stays put

    def adapt(self, iterations) -> None:
        """Update after a converged increment that took ``iterations``."""
        self.done += self.step

    def cut(self) -> bool:
        """Shrink the increment after a failure; False once below the minimum."""
        self.du /= 2
        return abs(self.du) >= self.min_du


class ArcLength:
    """Crisfield's arc-length constraint (cylindrical or spherical)."""

    def __init__(self, s: StaticSettings, system=None):
        self.dl = s.arc_length
        self.dl_max = s.max_arc_length or 10 * s.arc_length
        self.dl_min = s.arc_length / 2**12
        self.psi2 = s.psi**2
        self.max_steps = s.max_steps
        self.target = s.target_iterations
        self.stop_lam = s.stop_load_factor
        self.sign = 1.0
        self.watch = None
        self.system = system
        if s.node is not None and system is not None:
            self.watch = (s.node, s.dof, s.target)
            self.start = float(system.reference_state().dof_values()[s.node, s.dof])

    def finished(self, state, lam, k) -> bool:
        """Whether the path has reached its end."""
        if k >= self.max_steps:
            return True
        if self.watch is not None and k > 0:
            node, dof, target = self.watch
            if abs(state.dof_values()[node, dof] - target) <= 1e-12 * max(1.0, abs(target)):
                return True
        return self.stop_lam is not None and abs(lam) >= abs(self.stop_lam)

    def short_of_target(self, state, lam, k) -> str | None:
        """What the path did not reach if it stopped at ``max_steps`` (None: it ended as asked).

        Without a target or a stop_load_factor, ``max_steps`` is the end the deck asked for.
        """
        if k < self.max_steps or (self.watch is None and self.stop_lam is None):
            return None
        goals = []
        if self.watch is not None:
            node, dof, target = self.watch
            value = state.dof_values()[node, dof]
            if abs(value - target) > 1e-12 * max(1.0, abs(target)):
                name = self.system.dofmap.slots[dof]
                goals.append(f"its target {name} = {target:g} of node "
                             f"{self.system.model.node_ids[node]} (reached {value:.6g})")
        if self.stop_lam is not None:
            if abs(lam) >= abs(self.stop_lam):
                return None
            goals.append(f"its stop_load_factor {self.stop_lam:g} (reached {lam:.6g})")
        if len(goals) < (self.watch is not None) + (self.stop_lam is not None):
            return None                    # one goal was reached: that ended the path
        return (f"the arc-length path stopped after max_steps = {self.max_steps} increments "
                f"before {' or '.join(goals)}; raise max_steps or the arc length")

    def overshoots(self, trial) -> bool:
        """The step just solved passed the watched DOF's target."""
        if self.watch is None:
            return False
        node, dof, target = self.watch
        return (trial.dof_values()[node, dof] - target) * (self.start - target) < 0

    def landing(self, state) -> DisplacementControl:
        """A one-increment displacement control from ``state`` onto the watched target."""
        node, dof, target = self.watch
        s = StaticSettings(node=node, dof=dof, increments=1,
                           target=target - state.dof_values()[node, dof])
        return DisplacementControl(s, self.system)

    def _load_term(self, F) -> float:
        return self.psi2 * float(F @ F)

    def predictor(self, du_f, F, prev_du, state) -> float:
        """Load-factor increment of the predictor along the tangent direction ``du_f``."""
        if prev_du is not None:
            self.sign = 1.0 if du_f @ prev_du >= 0 else -1.0   # follow the path (Feng et al.)
        self._prev = prev_du
        return self.sign * self.dl / np.sqrt(du_f @ du_f + self._load_term(F))

    def correction(self, du_r, du_f, Du, Dlam, F) -> float:
        """Load-factor correction of one Newton iteration."""
        fF = self._load_term(F)
        u = Du + du_r
        a = du_f @ du_f + fF
        b = 2 * (u @ du_f) + 2 * Dlam * fF
        c = u @ u + Dlam**2 * fF - self.dl**2
        disc = b * b - 4 * a * c
        if disc < 0:
            raise NewtonFailure("arc-length constraint has no real root", 0, [])
        roots = ((-b + np.sqrt(disc)) / (2 * a), (-b - np.sqrt(disc)) / (2 * a))
        # smallest angle between the new and the current increment
        return max(roots, key=lambda d: (u + d * du_f) @ Du + Dlam * (Dlam + d) * fF)

    def adapt(self, iterations) -> None:
        """Update after a converged increment that took ``iterations``."""
        self.dl = min(self.dl * np.sqrt(self.target / max(iterations, 1)), self.dl_max)

    def cut(self) -> bool:
        """Shrink the increment after a failure; False once below the minimum."""
        self.dl /= 2
        return self.dl >= self.dl_min
