"""Static steps: linear, and nonlinear path following (load, displacement, arc-length control).

A nonlinear step is one loop over increments, whatever its control (:mod:`fem.solvers.controls`):
the control says where the increment starts (load control: the load factor it is solved at;
displacement control and arc-length: the load factor it starts from, the factor being an unknown
of the increment), :class:`fem.solvers.newton.Newton` iterates it to equilibrium with this step
as its problem (residual ``f_int - f_ext(lam)``, tangent, load pattern ``F``), and the control
accepts it, or cuts it back after a failure (:class:`fem.solvers.controls.CutBack`). In models
of co-rotational beams alone (planar or 3D) a load-control increment is one compiled call instead
(:mod:`fem.analysis.planar_static`, :mod:`fem.analysis.spatial_static`: the same iterations to
round-off, and the determinant's sign from its band LU's pivots), and in planar models the
increments up to the next frame are one call together (:meth:`_batch` books them, bit for bit
as one by one); an increment it cannot finish runs again through Newton here, and a model it
does not take is logged with the reason.

External forces are ``f_ext = lam F(u)`` (follower loads make ``F`` depend on the state), so
displacement and arc-length control need the default (ramp) load functions. Prescribed
displacements ramp with ``lam`` under load control, which runs towards a negative ``load_factor``
as well (the loads reversed).

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
import math

import numpy as np
from numpy.typing import NDArray

from fem import interrupt, linalg
from fem.analysis import static_deck
from fem.analysis.base import StepBase
from fem.analysis.bent import TRUST, ChordFit
from fem.analysis.static_deck import StaticSettings
from fem.errors import AccuracyError, ConvergenceError, ModelError
from fem.integrators.inertia import nodal_increment
from fem.solvers.controls import ArcLength, DisplacementControl, LoadControl, StaticProgress
from fem.solvers.newton import Evaluation, LineSearch, Newton, NewtonFailure

log = logging.getLogger(__name__)

ACCURACY_LIMIT = 1e-2    # linear steps: above this estimated relative error the answer is refused
ACCURACY_WARN = 1e-4     # ... and above this it comes with a warning


class StaticStep(StepBase):
    """A static step (see the module docstring), and the Newton problem of its increments."""

    step_type = "static"
    MODAL_LOADS = True          # its residual and pattern are StepBase.external's
    Settings = StaticSettings
    LOADS_STAY = True
    RESUMABLE = True               # nonlinear ones (resumable)
    FRAMES = True                  # its writer shows its progress
    fused = False          # internal force and tangent are evaluated separately

    describe = staticmethod(static_deck.describe)
    check = staticmethod(static_deck.check)

    @classmethod
    def make(cls, spec: dict, system, deck, output_every: int = 1) -> StaticStep:
        """A static step writing every ``output_every``-th increment."""
        return cls(spec["name"], system, cls.step_loads(spec, system), spec["settings"],
                   solver_options=deck.solver_options, output_every=output_every)

    def __init__(self, name, system, loads, settings: StaticSettings, solver_options=None,
                 output_every: int = 1):
        super().__init__(name, system, loads, solver_options)
        self.settings = settings
        self.test = self.norm_test(settings.tolerance, settings.max_iterations)
        self.output_every = output_every
        self._signs: list[tuple] = []           # (tangent sign, residual) of the increment
        self._watch = False                     # load control watches the tangent's sign
        self._pattern = None                    # free part of F, for F . K^-1 F
        self._sign0 = None                      # tangent sign at the start (load control)
        self._warned = False                    # warned of a limit point (load control)
        self._chords = None                     # bent corrections (fem.analysis.bent)
        self.bent = 0                           # corrections applied bent
        self.progress = StaticProgress()        # the control's, once it runs
        self.line_search = None                 # fem.solvers.newton.LineSearch, if any
        self._reactions = None                  # of the last converged increment (work)
        self._loads_end = None                  # (load factor, external forces) of that one
        self._compiled = None                   # the compiled increment (planar, spatial)
        self.state = None                       # the state the step advances (run)

    # --- the Newton problem (fem.solvers.newton.Problem) --------------------------------------
    def evaluate(self, trial, lam: float, tangent: bool) -> Evaluation:
        """Residual ``f_int - f_ext(lam)``, its scale, the pattern ``F``, the tangent if asked."""
        fint, K = self.system.evaluate(
            trial, self.loads.stiffness(trial, lam) if tangent else None, tangent)
        fext = self.external(trial, lam)
        F = self.external(trial, 0.0, "pattern")
        scale = self.block_scale(fext, fint)
        if self._watch:
            self._pattern = F[:self.n]
        return Evaluation(fint - fext, scale, K, F)

    def with_tangent(self, trial, lam: float, ev: Evaluation) -> Evaluation:
        """``ev``, the residual at ``trial`` and ``lam``, with the tangent there.

        The residual, its scale and the load pattern stay those of ``ev`` (the same state and
        load factor give the same numbers); only the elements are evaluated again.
        """
        _, K = self.system.evaluate(trial, self.loads.stiffness(trial, lam), tangent=True)
        return Evaluation(ev.r, ev.scale, K, ev.F)

    def update(self, trial, du: NDArray) -> None:
        """Apply a correction of the unknowns."""
        self.system.update_unknowns(trial, du)

    def correct(self, trial, du: NDArray, lam: float, r_norm: float) -> Evaluation | None:
        """Apply a load-control correction: straight, or bent if straight raised the residual.

        The straight trial's residual becomes the next iteration's (no extra cost when it is
        accepted); a correction that raised it is applied along turned chords instead
        (:mod:`fem.analysis.bent`), never shortened. A bent correction that turns nodes by more
        than :data:`~fem.analysis.bent.TRUST` and still raises the residual is scaled to that
        turn (it keeps single large increments on the branch they start from). The residual
        after a bent correction is seldom converged, so it is returned with its tangent: one
        element pass instead of a residual pass and then a tangent pass (a tangent too many
        when it has converged).
        """
        if self._chords is None:
            self._chords = ChordFit(self.system)
        if not self._chords.active:
            self.update(trial, du)
            return None
        straight = trial.copy()
        self.update(straight, du)
        ev = self.evaluate(straight, lam, tangent=False)
        n = self.n
        if np.linalg.norm(ev.r[:n]) <= r_norm:
            trial.assign(straight)
            return ev
        self.bent += 1
        dm, d = self.system.dofmap, self.system.model.dim
        dn = dm.to_nodal(du)
        bent = self._chords(trial, dn)
        big = float(np.abs(dn[:, d:]).max()) if dn.shape[1] > d else 0.0
        if big > TRUST:
            candidate = trial.copy()
            self._apply_bent(candidate, bent, du)
            ev = self.evaluate(candidate, lam, tangent=False)
            if np.linalg.norm(ev.r[:n]) <= r_norm:
                trial.assign(candidate)
                return ev
            bent = self._chords(trial, dn * (TRUST / big))
            du = du * (TRUST / big)
        self._apply_bent(trial, bent, du)
        return self.evaluate(trial, lam, tangent=True)

    def _apply_bent(self, trial, bent_nodal: NDArray, du: NDArray) -> None:
        """The bent nodal correction, and ``du`` for the other blocks (multipliers)."""
        self.system.update(trial, bent_nodal)
        blocks = self.system.dofmap.blocks
        if blocks["multipliers"].stop > blocks["multipliers"].start:
            trial.multipliers += du[blocks["multipliers"]]

    def floor(self, K: NDArray, trial) -> NDArray:
        """The residual's round-off floor of each block at the tangent ``K``."""
        return self.floors(K, trial)

    def positions(self, trial) -> float:
        """Norm of the positions the corrections move."""
        return float(np.linalg.norm(self.system.positions(trial)))

    def _factored(self, r_norm: float) -> None:
        """After a new factorization's first solve: record the tangent's sign (load control)."""
        if self._watch:
            self._signs.append((self._tangent_sign(), r_norm))

    def _tangent_sign(self) -> int | None:
        """Sign of the determinant of the factored tangent, or of ``F . K^-1 F`` without one.

        Only load control asks; MUMPS's determinant is free, the stiffness parameter costs one
        more solve with the same factorization.
        """
        sign = self.linear.determinant_sign()
        if sign is not None or self._pattern is None or not np.any(self._pattern):
            return sign
        try:
            x = self.linear.solve(self._pattern)[0]
        except (linalg.SingularMatrixError, linalg.NonFiniteError):
            return 0
        return int(np.sign(self._pattern @ x))

    def _increment_checks(self, state, r, lam) -> None:
        """After a converged increment: finite results; keep its inaccurate solves."""
        # one sum: finite unless a value is not (or they reach 1e308, overflowed all the same)
        if not math.isfinite(float(state.u.sum()) + float(state.rot.sum()) + float(r.sum())):
            raise AccuracyError(self._overflow(lam))
        self.commit_solves(lam)

    def _overflow(self, lam: float) -> str:
        return (f"step '{self.name}', load factor {lam:.6g}: the solution overflowed "
                "(displacements, rotations or forces are not finite)")

    # --- the step -----------------------------------------------------------------------------
    def control(self):
        """The control object of a nonlinear step (see :mod:`fem.solvers.controls`)."""
        s, dm = self.settings, self.system.dofmap
        if s.control == "load":
            return LoadControl(s.load_factor, s.increments, s.min_increment, s.max_increment,
                               s.fast_iterations)
        if not self.loads.proportional:
            raise ModelError(f"step '{self.name}': {s.control} control needs proportional loads "
                             "(no 'function' on the step's loads)")
        if s.control == "displacement":
            k = dm.index[s.node, s.dof]
            if k < 0 or k >= self.n:
                raise ModelError("displacement control needs a free DOF")
            return DisplacementControl(k, s.target, s.increments)
        watch = None
        if s.node is not None:
            start = float(self.system.reference_state().dof_values()[s.node, s.dof])
            watch = (s.node, s.dof, s.target, start)
        return ArcLength(s.arc_length, s.max_arc_length, s.psi, s.max_steps,
                         s.target_iterations, s.stop_load_factor, watch, dm.index)

    @property
    def resumable(self) -> bool:
        """Nonlinear steps continue from their checkpoints; a linear one is one solve."""
        return self.settings.nonlinear

    def checkpoint_progress(self) -> StaticProgress:
        """The progress with the step's own variables (limit-point watch, reactions)."""
        p = super().checkpoint_progress()
        p.sign0 = None if self._sign0 is None else int(self._sign0)
        p.warned, p.reactions = bool(self._warned), self._reactions
        return p

    def run(self, state, recorder, resume=None):
        """Advance ``state`` (committed in place) through the step, recording frames.

        ``resume``: a :class:`~fem.analysis.base.Resume`; ``state`` is then a checkpoint's and
        the increments continue from it.
        """
        s = self.settings
        self.state = state
        if resume is None:
            self.check_drives(state)
        self._watch = s.nonlinear and s.control == "load"
        # MUMPS computes the determinant of every factorization for the limit-point watch
        self.open_solver({"mat_mumps_icntl_33": 1} if self._watch else None)
        self.loads.begin(state if resume is None else resume.start)
        writer = None
        if recorder:
            # the ParaView clock must only grow (fem.io.step_writer.StepWriter): the load factor's
            # magnitude under load control, the increment count where the load factor can fall
            path = s.nonlinear and s.control != "load"
            span = (s.increments if s.control == "displacement" else s.max_steps) if path \
                else (abs(s.load_factor) if s.nonlinear else 1.0)
            writer = recorder.begin_step(self.name, "static", self.system,
                                         clock="count" if path else "abs", span=span,
                                         resume=resume is not None)
            if s.nonlinear:
                writer.keep_checkpoints(self.checkpoint_progress)
        try:
            if not s.nonlinear:
                self._linear(state, writer)
            elif s.load_factor != 0 or s.control != "load":
                control = self.control()
                self._compiled = self._compiled_increment()
                if resume is None:
                    self._check_start(state)
                else:
                    self._resume(control, resume.progress)
                self._increments(state, writer, control, resumed=resume is not None)
            self.loads.finish(state, state.t)
            self.warn_solves()
        finally:
            if writer:
                writer.close()
            self.close()
        return state

    def _resume(self, control, p: StaticProgress) -> None:
        """Continue from a checkpoint's progress ``p``: the control's and the step's own."""
        control.progress = control.policy.progress = p
        self._sign0, self._warned, self._reactions = p.sign0, p.warned, p.reactions
        self.restore_notes(p)

    def _compiled_increment(self):
        """The compiled load-control increment of the model (planar or 3D beams), or None.

        Where the general Newton loop runs the increments, the log says why (``fem run -v``).
        Imported here: a linear step never needs them (2 ms of a one-element run, issue 32).
        """
        from fem.analysis.planar_static import PlanarIncrement
        from fem.analysis.spatial_static import SpatialIncrement

        if self.system.model.dim == 3:
            made = SpatialIncrement.make(self)
        else:
            made = PlanarIncrement.make(self)
            if made is None:
                made = PlanarIncrement.eligible(self) or ("the tangent or the chords' Laplacian "
                                                         "is too wide for the banded LU")
        if isinstance(made, str):
            log.info("step %s: increments by the general Newton loop (%s)", self.name, made)
            return None
        return made

    def _check_start(self, state) -> None:
        """Factor the tangent at the start of a nonlinear step; a singular one is a mechanism.

        Load control also takes the sign of this tangent as the reference of its limit-point
        watch (a step normally starts from a stable state). The compiled increment
        (:mod:`fem.analysis.planar_static`, :mod:`~fem.analysis.spatial_static`) checks it on
        its band LU where it can.
        """
        if self._compiled is not None and self._compiled.start(self, state):
            return
        ev = self.evaluate(state, 0.0, tangent=True)
        self.linear.fill(ev.K)
        self._check_finite_tangent(state)
        try:
            self.linear.solve(np.ones(self.n))
        except (linalg.SingularMatrixError, linalg.NonFiniteError):
            raise self.mechanism_error() from None
        if self._watch:
            self._sign0 = self._tangent_sign()

    def _check_finite_tangent(self, state) -> None:
        if not self.linear.finite():          # every rank's rows (collective control)
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
        self.linear.fill(self.system.tangent(state, self.loads.stiffness(state, 1.0)))
        self._check_finite_tangent(state)
        n = self.system.n_free
        try:
            du_f, report = self.linear.solve(-r[:n])
        except linalg.SingularMatrixError:
            raise self.mechanism_error() from None
        except linalg.NonFiniteError as err:
            raise AccuracyError(f"step '{self.name}': {err}") from None
        self._check_accuracy(-r[:n], du_f, report)
        du = du_p + self.free_to_nodal(du_f)
        dlam = du_f[self.system.dofmap.blocks["multipliers"]]
        dint = du_f[self.system.dofmap.blocks["internal"]]      # superelements' modal coordinates
        r = self.system.linearized_force(state, du, dlam, dint) - fext
        self.system.update(state, du)
        state.multipliers += dlam
        state.internal = state.internal + dint
        self._increment_checks(state, r, 1.0)
        state.t = 1.0
        state.prescribed = trial.prescribed
        inc = self.system.dofmap.from_nodal(du)
        inc[self.system.dofmap.blocks["internal"]] = dint
        p = self.progress
        p.increments, p.load_factor, p.done, p.size, p.iterations = 1, 1.0, 1.0, 1.0, 1
        p.external_work = 0.5 * float(fext @ inc)           # linear: Clapeyron
        p.constraint_work = 0.5 * float(r[n:] @ inc[n:])
        if writer:
            outs, nodal = self.system.frame_outputs(state)
            writer.frame(state, outputs=outs, nodal_fields=nodal, time=1.0, reactions=r,
                         stats={"load_factor": 1.0, "iterations": 1,
                                "residual": float(np.linalg.norm(r[:n]))})

    def _check_accuracy(self, b, x, report) -> None:
        """Refuse (or flag) the solution of a linear step that double precision cannot give."""
        if not np.any(b):
            return                           # nothing loads it: zero is exact
        cond, bound = self.linear.accuracy(b, x)
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

    def _increments(self, state, writer, control, resumed: bool = False) -> None:
        """The increments of a nonlinear step under ``control``; every loop is bounded.

        ``resumed``: from a checkpoint, whose progress the control has (:meth:`_resume`). The
        loads at the last increment's end (``_loads_end``) are computed again from its state,
        to the same bits.
        """
        from fem.analysis.planar_static import BATCH  # with the compiled increments

        p = self.progress = control.progress
        if not resumed:
            p.next_output = self.output_every
        self._loads_end = None
        self.line_search = self._line_search()
        newton = None                   # made when Newton first takes an increment
        # the compiled increments, several in a call while nothing between them needs Python;
        # one that does not converge there runs below, through Newton
        batch = getattr(self._compiled, "batch", None) if not control.bordered else None
        general = False                 # the next increment: Newton's (the batch failed it)
        while not control.finished(state):
            interrupt.check()
            if batch is not None and not general:
                count = p.next_output - p.increments if writer else BATCH
                lam0 = control.lam
                b = batch(self, state, control, max(count, 1))
                if b is None:
                    batch = None            # not for these loads: one by one
                    log.info("step %s: one compiled call an increment (prescribed motions, or "
                             "loads not held + lam pattern)", self.name)
                else:
                    general = b.failed
                    took = self._batch(b, state, writer, control, lam0)
                    if general:
                        log.info("step %s: the increment from lam=%.6g by the general Newton "
                                 "loop (the compiled one did not finish it)", self.name,
                                 control.lam)
                    if took:
                        continue
            if newton is None:
                newton = self.newton(factored=self._factored, line_search=self.line_search,
                                     modified=self.settings.newton == "modified")
            lam0 = tried = control.lam
            trial = state.copy()
            self._signs = []
            try:
                if control.bordered:
                    its, lam = newton.iterate(self, trial, control.start(), control)
                    if control.overshoots(trial):      # land exactly on the watched target
                        trial = state.copy()
                        its, lam = newton.iterate(self, trial, control.start(),
                                                  control.landing(state))
                else:
                    lam = tried = control.start()
                    if lam == lam0:
                        raise ConvergenceError(f"the load increment {lam - lam0:.3g} no longer "
                                               "changes the load factor", step=self.name,
                                               time=lam0)
                    self.apply_prescribed(trial, lam)
                    trial.t = lam
                    its, r = self._iterate(newton, trial, lam, compiled=not general)
                    general = False
            except NewtonFailure as fail:
                general = False
                self.commit_solves(0.0, failed=True)
                why = control.cut()
                if why is not None:
                    what = ("Newton failed" if control.bordered is False else
                            f"{self.settings.control} control failed")
                    raise ConvergenceError(f"{what}: {fail.reason}; {why}", step=self.name,
                                           time=tried, iteration=fail.iteration,
                                           norms=fail.norms) from None
                log.info("step %s: cutting the increment from lam=%.6g (%s)", self.name, lam0,
                         fail.reason)
                continue
            if control.bordered:
                r = newton.last.r
            trial.t = lam
            self._increment_checks(trial, r, lam)
            if self._watch and not self._warned:
                self._warned = self._limit_point(lam0, lam)
            control.accept(its, lam, newton.increment)
            p.iterations += its
            self._work(state, trial, lam0, lam, r)
            state.assign(trial)
            k = p.increments
            due = k >= p.next_output or control.finished(state)
            if due:
                p.next_output = (k // self.output_every + 1) * self.output_every
            if writer:
                writer.advance(lam if not control.bordered else k, its)
                if due:
                    outs, nodal = self.system.frame_outputs(state)
                    writer.frame(state, outputs=outs, nodal_fields=nodal, time=lam, reactions=r,
                                 stats={"load_factor": lam, "iterations": its,
                                        "residual": self.test.norms[-1]},
                                 last=control.finished(state))
        short = getattr(control, "short_of_target", None)
        if short is not None:
            message = short(state, lambda node, dof, target: (
                f"{self.system.dofmap.slots[dof]} = {target:g} of node "
                f"{self.system.model.node_ids[node]}"))
            if message:
                self.warn(message)

    def _batch(self, b, state, writer, control, lam0: float) -> bool:
        """The book-keeping of increments converged in one compiled call (``b``, a Batch).

        What the loop of :meth:`_increments` does after each converged increment, in the same
        order and arithmetic: the finite check, the limit-point watch, the iterations, the
        loads' and reactions' work (:meth:`_work`), the frame. The control has advanced already
        (:meth:`fem.analysis.planar_static.PlanarIncrement.batch`). False where ``b`` is None
        or empty (the loop then takes the next increment itself). ``lam0``: the load factor
        the batch started from.
        """
        if not len(b):
            return False
        k, p = len(b), self.progress
        lams = b.lam.tolist()
        starts = [lam0] + lams[:-1]
        # one sum: finite unless a value is not (as _increment_checks, for all of them)
        if not math.isfinite(float(b.U.sum()) + float(b.ROT.sum()) + float(b.R.sum())):
            for j in range(k):
                if not math.isfinite(float(b.U[j].sum()) + float(b.ROT[j].sum())
                                     + float(b.R[j].sum())):
                    raise AccuracyError(self._overflow(lams[j]))
        self.commit_solves(lams[-1])
        its = b.its.tolist()
        if self._watch and not self._warned and b.near.any():
            for j in np.flatnonzero(b.near).tolist():
                self._increment_notes(b, j)
                if self._limit_point(starts[j], lams[j]):
                    self._warned = True
                    break
        p.iterations += sum(its)
        # the work of each increment (_work), with the kernel's increments and loads: the
        # loads' by the same dot products; the reactions' is zero (no prescribed motion, so the
        # fixed rows' increments are 0) and adding 0.0 leaves the sum as it was. The loads at
        # the first start are external(state, lam0)'s held + lam0 pattern (StepLoads.force, the
        # same products gathered first); the dot products are matmul's of rows by columns,
        # numpy's DOUBLE_dot (BLAS ddot) as ``@`` of two vectors takes, in one call
        f0 = self._loads_end[1] if self._loads_end and self._loads_end[0] == starts[0] \
            else b.held + starts[0] * b.pattern
        ends = b.fe + np.concatenate([f0[None], b.fe[:-1]])
        work = p.external_work
        for d in np.matmul(ends[:, None, :], b.inc[:, :, None])[:, 0, 0].tolist():
            work += 0.5 * d
        p.external_work = work
        self._loads_end = (lams[-1], b.fe[-1].copy())
        self._reactions = b.R[-1].copy()
        self.bent += int(b.bent.sum())
        self._increment_notes(b, k - 1)
        state.u[...] = b.U[-1]
        state.rot[...] = b.ROT[-1]
        state.t = lams[-1]
        k_all = p.increments
        due = k_all >= p.next_output or control.finished(state)
        if due:
            p.next_output = (k_all // self.output_every + 1) * self.output_every
        if writer:
            for lam, it in zip(lams, its, strict=True):
                writer.advance(lam, it)
            if due:
                outs, nodal = self.system.frame_outputs(state)
                writer.frame(state, outputs=outs, nodal_fields=nodal, time=lams[-1],
                             reactions=self._reactions,
                             stats={"load_factor": lams[-1], "iterations": its[-1],
                                    "residual": self.test.norms[-1]},
                             last=control.finished(state))
        return True

    def _increment_notes(self, b, j: int) -> None:
        """The norms and factorizations' signs of the batch's ``j``-th increment to the step."""
        self.test.start()
        self.test.norms = b.norms[j, :b.its[j] + 1].tolist()
        self._signs = [(int(g), self.test.norms[i])
                       for i, g in enumerate(b.signs[j, :b.nsigns[j]].tolist())]

    def _iterate(self, newton: Newton, trial, lam: float,
                 compiled: bool = True) -> tuple[int, NDArray]:
        """Newton on a load-control increment: compiled where it can be (planar, spatial).

        The iterations and the residual at the converged state (the reactions); ``compiled``
        false: Newton's at once (the compiled increment did not finish this one).
        """
        if compiled and self._compiled is not None:
            done = self._compiled.iterate(self, trial, lam)
            if done is not None:
                return done
        its, _ = newton.iterate(self, trial, lam)
        return its, newton.last.r

    def _line_search(self) -> LineSearch | None:
        """The line search of load-control corrections (see LINE_SEARCH_DEFAULT)."""
        mode = self.settings.line_search
        return None if mode == "none" else LineSearch(mode)

    def _work(self, s0, s1, lam0: float, lam: float, r: NDArray) -> None:
        """Add an increment's work to the progress, by the trapezoidal rule.

        The loads' work on the increment from ``s0`` at ``lam0`` to ``s1`` at ``lam``
        (rotations as spatial increments), and the reactions' (the residual at the fixed DOFs,
        ``r`` at the end of the increment) on prescribed motions.
        """
        n, p = self.n, self.progress
        dm = self.system.dofmap
        inc = dm.from_nodal(nodal_increment(s0, s1, self.system.additive))
        inc[dm.blocks["internal"]] = _internal_increment(s0, s1, dm)
        # the last increment's end is this one's start (s0 is the state it committed)
        f0 = self._loads_end[1] if self._loads_end and self._loads_end[0] == lam0 \
            else self.external(s0, lam0)
        f1 = self.external(s1, lam)
        self._loads_end = (lam, f1)
        p.external_work += 0.5 * float((f0 + f1) @ inc)
        r0 = r if self._reactions is None else self._reactions
        p.constraint_work += 0.5 * float((r0[n:] + r[n:]) @ inc[n:])
        self._reactions = r

    def _limit_point(self, lam0: float, lam: float) -> bool:
        """Warn when the tangent's sign changed near the path in the increment just converged.

        Iterates far from equilibrium (the first corrections of a slender co-rotational beam
        stretch or shorten its elements wildly) may have any sign; those as close to equilibrium
        as the increment's start (residual at most its first) are near the path, and a sign
        change there is the path's.
        """
        r0 = self.test.norms[0]
        if not any(g is not None and g != self._sign0 and rk <= r0 for g, rk in self._signs):
            return False
        self.warn(f"passed a limit (or bifurcation) point near load factor {lam0:.6g} to "
                  f"{lam:.6g}: the sign of the tangent stiffness's determinant (or of "
                  "F . K^-1 F) changed in that increment (the structure snaps through or "
                  "branches), so the path beyond it is not reliable under load control; use "
                  'control = "arclength" to follow it')
        return True

    def summary(self) -> list[str]:
        """The load factor reached, the largest displacement and the strain energy."""
        state, system = self.state, self.system
        u = state.u
        k = int(np.argmax(np.linalg.norm(u, axis=1)))
        return [f"load factor {state.t:.6g}; largest displacement {np.linalg.norm(u[k]):.6g} "
                f"at node {system.model.node_ids[k]}",
                f"strain energy {system.strain_energy(state):.6g}"]


def _internal_increment(s0, s1, dm) -> NDArray:
    """The increment of the state's internal unknowns (superelements' eta) in the internal block.

    Zeros for the internal unknowns a step adds of its own (numbered after the state's).
    """
    block = dm.blocks["internal"]
    out = np.zeros(block.stop - block.start)
    k = min(len(s1.internal), len(out))
    out[:k] = s1.internal[:k] - s0.internal[:k]
    return out
