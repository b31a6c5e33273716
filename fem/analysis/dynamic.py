"""Dynamic steps: the time loop, Newton iterations, step-size safeguards and the energy balance.

Each step goes from the committed state ``s0`` to a trial ``s1`` predicted as ``d0 + h v0`` and
corrected by Newton on the integrator's residual (:mod:`fem.integrators`). If Newton fails, the
step is retried with ``h`` halved, at most ``max_cuts`` times in a row; after a cut the step size
grows back (doubling) towards the requested one; the cuts are counted in the statistics. Nothing
loops without bound: past ``max_cuts``, or once a halved step would no longer advance time (a few
ulps of ``t``), the step stops with a :class:`~fem.errors.ConvergenceError` and the frames written
so far stay in the results file. Output times are computed, never counted up one interval at a
time, and :func:`fem.interrupt.check` runs at every time step and Newton iteration.

Groups with the capability ``"step_control"`` (contacts, and force elements with damping or
actuation, :mod:`fem.analysis.events`) keep their history with every integrator; contacts also
bound the time step before it is taken (an impact about to begin or under way) and may refuse a
converged one (a contact closed too deep: halved as a failed step is).

A singular effective tangent is not a reason to cut the step when a free DOF has no mass: no time
step can help, and the step raises a :class:`~fem.errors.ModelError` naming it (every free DOF
needs mass or stiffness). A converged time step whose state is not finite raises
:class:`~fem.errors.AccuracyError`.

Energy bookkeeping, written at every output frame (``/steps/<s>/energy/*``):

``kinetic``, ``strain``
    at the frame (for the energy-conserving scheme the strain energy of the algorithmic strains);
``external_work``
    work of the external loads since the step started, with the integrator's own load average;
``constraint_work``
    work of the support reactions on prescribed motions and of the joints' drivers since the
    step started (the reactions are the residual at the fixed DOFs, and a driver's work is that
    of its step force, so for the energy-conserving scheme the balance is exact);
``total``
    ``kinetic + strain - external_work - constraint_work``, constant for a conservative system
    and an energy-conserving scheme;
``dissipated``
    ``total(start) - total``: energy the scheme removed (negative: energy it created);
``damping``
    only for models with dissipative groups (contacts with damping, friction or restitution
    below one; spring-dampers, bushings, Rayleigh damping, joint friction: :mod:`fem.analysis.
    events`): the energy they took since the step started, so that ``total + damping`` is
    constant in free motion with the energy-conserving scheme;
``actuator_work``
    only for models with joint efforts or controllers: the work they did since the step
    started (``total + damping - actuator_work`` is then constant);
``linear_momentum``, ``angular_momentum``
    about the origin (mid-point schemes conserve both for free bodies).
"""

from __future__ import annotations

import logging
import math

import numpy as np

from fem import interrupt, linalg
from fem.analysis import dynamic_deck
from fem.analysis.base import StepBase
from fem.analysis.dynamic_deck import DynamicSettings
from fem.analysis.events import StepEvents
from fem.analysis.settle import settle
from fem.constraints.handlers import consistent
from fem.errors import AccuracyError, ConvergenceError, ModelError
from fem.inertia import inertia_groups
from fem.integrators import make_integrator
from fem.integrators.planar_run import PlanarRun
from fem.model import apply_velocities
from fem.solvers import eigen
from fem.solvers.controls import CutBack, DynamicProgress
from fem.solvers.newton import Evaluation, NewtonFailure

log = logging.getLogger(__name__)


class TimeStep:
    """The Newton problem of one time step from ``s0``: the integrator's residual at ``s1``.

    The integrator evaluates the residual and its tangent in one pass (``fused``).
    """

    fused = True

    def __init__(self, step, s0):
        self.step, self.s0, self.system = step, s0, step.system

    def evaluate(self, s1, lam: float, tangent: bool) -> Evaluation:
        """The integrator's residual (and effective tangent) at the trial end state ``s1``."""
        r, scale, K = self.step.integrator.evaluate(self.s0, s1, tangent=tangent)
        return Evaluation(r, scale, K)

    def update(self, s1, du) -> None:
        """Apply a correction of the unknowns to the end state."""
        self.system.update_unknowns(s1, du)

    def floor(self, K, s1):
        """The residual's round-off floor of each block at the tangent ``K``."""
        return self.step.floors(K, s1)

    def positions(self, s1) -> float:
        """Norm of the positions the corrections move."""
        return float(np.linalg.norm(self.system.positions(s1)))


class DynamicStep(StepBase):
    """A dynamic step; see the module docstring."""

    step_type = "dynamic"
    MODAL_LOADS = True          # the integrators' residual and work take them (fem.integrators)

    @staticmethod
    def frame_gravity(values: dict) -> bool:
        """The energy-conserving scheme applies it (EnergyConserving._frame_gravity)."""
        return values.get("integrator") == "energy_conserving"

    Settings = DynamicSettings
    LOADS_STAY = True
    RESUMABLE = True
    FRAMES = True             # its writer shows its progress
    LOADS_RAMP = False           # a load without a time function is on from the start
    events = None                # contact groups' step control (fem.analysis.events)

    @classmethod
    def requires(cls, values: dict) -> list[tuple[str, str, str]]:
        """A mass, and the energy-conserving force when that integrator is asked for."""
        out = [*super().requires(values), ("mass", "type", 'type = "dynamic"')]
        if values.get("integrator") == "energy_conserving" \
                and values.get("formulation", "multipliers") == "multipliers":
            out.append(("energy_conserving", "integrator", 'integrator = "energy_conserving"'))
        return out

    check = staticmethod(dynamic_deck.check)

    @classmethod
    def make(cls, spec: dict, system, deck, output_every: int = 1) -> DynamicStep:
        """A step of the multiplier formulation, or of an eliminating one (its ``formulation``)."""
        step = cls
        if spec["settings"].formulation != "multipliers":
            # an EliminatedStep is a DynamicStep: its module imports this one
            from fem.analysis.eliminated import EliminatedStep
            step = EliminatedStep
        return step(spec["name"], system, cls.step_loads(spec, system), spec["settings"],
                    solver_options=deck.solver_options, output_every=output_every)

    def __init__(self, name, system, loads, settings: DynamicSettings, solver_options=None,
                 output_every: int = 1, on_step=None):
        super().__init__(name, system, loads, solver_options)
        self.on_step = on_step          # callable(state), after every accepted time step
        self.settings = settings
        self.output_every = output_every
        self.test = self.norm_test(settings.tolerance, settings.max_iterations)
        self.history: list[dict] = []
        self._kkt_warned = False
        self.progress = DynamicProgress(size=settings.time_step,
                                        next_output=settings.output_interval)

    @property
    def steps(self) -> int:
        """Converged time steps."""
        return self.progress.steps

    @property
    def cuts(self) -> int:
        """Halvings of the time step in all."""
        return self.progress.cuts

    @property
    def energy0(self) -> float:
        """Kinetic plus strain energy at the start of the step."""
        return self.progress.initial_energy

    def checkpoint_progress(self) -> DynamicProgress:
        """The progress with the step's own flags."""
        p = super().checkpoint_progress()
        p.kkt_warned = self._kkt_warned
        return p

    def run(self, state, results, resume=None):
        """Advance ``state`` through the step, writing frames and the energy balance.

        ``resume``: a :class:`~fem.analysis.base.Resume`; ``state`` is then a checkpoint's
        (the step's clock, its rates and history) and the time steps continue from it. What
        the step builds from its start (the loads' history, the inertia) is built from
        ``resume.start`` as from ``state`` at the start.
        """
        s = self.settings
        begin = state if resume is None else resume.start.copy()
        start = begin.copy()
        start.t = 0.0                       # the step's own clock
        if resume is None:
            self.check_drives(start)
        self.open_solver(banded=True)
        self.loads.begin(begin)
        X = self.system.model.X
        apply_velocities(s.velocities, begin, X)       # fields on one node add up
        # lumped nodal inertia, plus consistent groups of beams that ask for them
        inertia = inertia_groups(self.system, begin)
        self.inertia = inertia
        if s.velocities and resume is None:
            self.project_velocities(state, inertia)
        self.settled = None
        if s.settle and resume is None:         # bodies resting on contacts: no initial jump
            self.settled = settle(self, state, inertia)
        # the residual's reference per block of the convergence test, from the integrator's
        # inertial, internal and external forces
        integ = make_integrator(s.integrator, self.system, inertia, self.loads, s.time_step,
                                rho_inf=s.rho_inf, reference=self.block_scale)
        self.integrator = integ
        if resume is None:
            t_start = state.t
            state.t = 0.0
            integ.begin(state)
        else:
            self.progress = resume.progress
            t_start = self.progress.t_start
            integ.begin(state.copy())       # its own objects; the state's history stays
        self.events = StepEvents.make(self, state, fresh=resume is None)
        writer = results.begin_step(self.name, "dynamic", self.system, clock="time",
                                    span=s.duration, resume=resume is not None) \
            if results else None
        if writer:
            writer.keep_checkpoints(self.checkpoint_progress)
        p = self.progress
        self._reactions = None
        if resume is None:
            strain0 = self._initial_strain(state)
            p.initial_kinetic = inertia.kinetic_energy(state)
            p.initial_energy = p.initial_kinetic + strain0
            p.initial_momenta = np.stack([inertia.linear_momentum(state),
                                          inertia.angular_momentum(state, X)])
            p.t_start = float(t_start)
            self._frame(writer, state, strain0, (0.0, 0.0))
        else:
            self.restore_notes(p)
            self._kkt_warned = p.kkt_warned
            self.history.append({
                "time": 0.0, "kinetic": p.initial_kinetic,
                "strain": p.initial_energy - p.initial_kinetic, "external_work": 0.0,
                "constraint_work": 0.0, "total": p.initial_energy, "dissipated": 0.0,
                "linear_momentum": p.initial_momenta[0],
                "angular_momentum": p.initial_momenta[1]})
        # the time step: halved when Newton fails, doubled back after every converged step
        self.policy = CutBack(p, nominal=s.time_step, smallest=0.0,
                              max_cuts=s.max_cuts, grow=2.0, what="time step",
                              too_small="a step of {half:.3g} would no longer advance time")
        # several time steps per compiled call where nothing between them needs Python
        runs = PlanarRun.make(self)
        try:
            while p.time < s.duration - 1e-12 * s.duration:
                interrupt.check()
                ran = runs.advance(self, state, writer) if runs is not None else None
                if ran is not None:
                    strain, work = ran
                else:
                    trial, strain, dwork = self._advance(state)
                    if self.events is not None:
                        self.events.accept(state, trial)
                    p.external_work += dwork[0]
                    p.constraint_work += dwork[1]
                    work = (p.external_work, p.constraint_work)
                    state.assign(trial)
                    p.time = state.t
                    p.steps += 1
                    if writer:
                        writer.advance(state.t, self._stats["iterations"])
                    if self.on_step is not None:
                        self.on_step(state)
                due = (p.next_output is None and p.steps % self.output_every == 0) or (
                    p.next_output is not None and p.time >= p.next_output - 1e-9 * s.time_step)
                end = p.time >= s.duration - 1e-12 * s.duration
                if due or end:
                    if p.next_output is not None:       # before the frame: its checkpoint's
                        p.next_output = self._next_output(p.time)
                    self._frame(writer, state, strain, work, last=end)
            self.loads.finish(state, state.t)
            self.warn_solves("time")
        finally:
            if writer:
                writer.close()
            self.close()
        state.t = t_start + state.t
        return state

    def project_velocities(self, state, inertia) -> None:
        """Make the velocities the step set admissible: ``G v + dg/dt = 0`` (in place).

        Velocities that violate the joints (a welded body given a speed, a four-bar locked by a
        second pin yet given its crank rate) would be kept by the integrator as a motion the
        joints forbid, with its kinetic energy "conserved" while nothing moves. They are
        replaced by the nearest admissible ones in the kinetic-energy norm, the solution of
        ``min (v' - v)^T M (v' - v)`` subject to ``G v' + dg/dt = 0``
        (:func:`fem.constraints.handlers.consistent.velocity_rhs`: the projection MBDyn's initial
        assembly, Exudyn and Chrono's velocity-level assembly make), and the step warns with the
        change of kinetic energy. A violation at round-off (``1e-10`` of ``|G| |v|``) is left alone,
        so consistent velocities pass unchanged. Where the projection's matrix is singular (a
        joint on a node without mass) the step warns and keeps them.
        """
        sysm = self.system
        bad = [name for name, gap, ref in consistent.velocity_gaps(sysm, state)
               if gap > 1e-10 * ref]
        if not bad:
            return
        names = ", ".join(f"'{n}'" for n in bad)
        T0 = inertia.kinetic_energy(state)
        A = linalg.matrix_from_scipy(sysm.assembler.to_scipy(
            consistent.kkt_matrix(sysm, inertia, state)).tocsr())
        ksp = linalg.direct_solver(A, self.prefix, self.solver_options)
        try:
            x = linalg.solve(ksp, consistent.velocity_rhs(sysm, state))
        except (linalg.SingularMatrixError, linalg.NonFiniteError) as err:
            self.warn(f"the initial velocities violate joints {names} and cannot be projected "
                      f"onto them ({err}: a joint on a DOF without mass); they are kept")
            return
        finally:
            ksp.destroy()
            A.destroy()
        state.v[:] = consistent.with_velocities(sysm, state, x).v
        self.warn(f"the initial velocities violate joints {names}: projected onto them (the "
                  f"admissible velocities nearest in kinetic energy), kinetic energy "
                  f"{T0:.6g} -> {inertia.kinetic_energy(state):.6g}")

    def _next_output(self, t: float) -> float:
        """The first output time after ``t``.

        Computed, not counted up: an interval far below the time step would take billions of
        additions per step.
        """
        s = self.settings
        after = t + 1e-9 * s.time_step
        k = np.floor(after / s.output_interval) + 1
        nxt = k * s.output_interval
        return float(nxt if nxt > after else (k + 1) * s.output_interval)

    def _initial_strain(self, state) -> float:
        return self.system.strain_energy(state)

    def _advance(self, s0):
        """One time step from ``s0``, cut back on failure (``self.policy``); (s1, strain, work)."""
        policy = self.policy
        # a step below a few ulps of the time scale no longer advances time
        policy.smallest = 4 * np.spacing(max(abs(s0.t), self.settings.time_step))
        while True:
            limit = np.inf
            if self.events is not None:
                # sphere sets list their candidate pairs for a step of at most this size; the
                # pattern follows the groups' elements, also a list made at the step's start
                # (conserving_start), which the broad phase does not count as a change
                self.events.broad_phase(s0, min(policy.size, self.settings.duration - s0.t))
                self.repattern()
                limit = self.events.max_step(s0)
            policy.size = h = min(policy.size, self.settings.duration - s0.t, limit)
            try:
                result = self._newton(s0, h)
            except NewtonFailure as fail:
                self.commit_solves(s0.t + h, failed=True)
                self.progress.cuts += 1
                why = policy.cut()
                if why is not None:
                    raise ConvergenceError(f"Newton failed ({fail.reason}) after "
                                           f"{policy.cuts - 1} halvings of the time step: {why}",
                                           step=self.name, time=s0.t + h,
                                           iteration=fail.iteration, norms=fail.norms) from None
                log.info("step %s: t=%.6g, %s; halving the time step", self.name, s0.t + h,
                         fail.reason)
                continue
            policy.success(self._stats["iterations"])
            return result

    def repattern(self) -> None:
        """A new assembler and linear system where a group's elements changed (a sphere set).

        Cheap when none did (:meth:`fem.system.System.repattern` compares the arrays by identity).
        """
        if self.system.repattern():
            self.linear.close()
            self.linear = self._linear_system()
            self.open_solver(banded=True)

    def _newton(self, s0, h):
        """Newton on the time step of size ``h`` from ``s0``; (s1, strain, (work, constraint))."""
        integ = self.integrator
        integ.h = h
        integ.start_step(s0)
        s1 = self._predict(s0, h)
        got = None
        planar = getattr(integ, "_planar", None)
        if planar is not None and planar.banded(self) is not None:
            got = planar.iterate(integ, self, s0, s1)     # a small planar model: compiled
            if got is None:                   # anything to report or cut back from: the
                s1 = self._predict(s0, h)     # general path, from the same predictor
        if got is None:
            newton = self.newton(modified=self.settings.newton == "modified")
            its, _ = newton.iterate(TimeStep(self, s0), s1, s1.t)
            r = newton.last.r
        else:
            its, r = got
        why = self.events.refuse(s0, s1) if self.events is not None else None
        if why is not None:
            raise NewtonFailure(f"step refused: {why}", its, self.test.norms)
        strain, work = integ.finish(s0, s1)
        self._check_finite(s1, r, strain, work)
        self.commit_solves(s1.t)
        self._reactions = r
        n = self.n
        inc = self.system.dofmap.from_nodal(integ.increment(s0, s1))
        # reactions on prescribed motion, and the drivers' work
        constraint = float(r[n:] @ inc[n:]) + self.system.drive_work(
            s0, s1, average=integ.family != "midpoint")
        self._stats = {"iterations": its, "time_step": h, "residual": self.test.norms[-1]}
        return s1, strain, (work, constraint)

    def _predict(self, s0, h: float):
        """The time step's start for Newton: ``d_n + h v_n`` (Crisfield & Shi's, notes 2.1)."""
        s1 = s0.copy()
        s1.t = s0.t + h
        predictor = h * s0.v
        predictor[self.system.dofmap.fixed] = 0.0
        self.system.update(s1, predictor)
        self.apply_prescribed(s1, s1.t)
        return s1

    def _check_finite(self, s1, r, strain: float, work: float) -> None:
        """A converged time step must have a finite state, residual and energy balance."""
        # one sum: finite unless a value is not (or they reach 1e308, overflowed all the same);
        # five isfinite passes were a tenth of a small model's time step (issue 32)
        total = float(s1.u.sum()) + float(s1.rot.sum()) + float(s1.v.sum()) + float(s1.a.sum())
        if not math.isfinite(total + float(r.sum()) + strain + work):
            raise AccuracyError(f"step '{self.name}', time {s1.t:.6g}: the solution overflowed "
                                "(displacements, velocities, forces or energies are not finite)")

    def mass_diagonal(self) -> np.ndarray:
        """(n_free,) the lumped mass or rotary inertia of each free DOF."""
        return self.system.dofmap.from_nodal(self.inertia.diagonal())[:self.system.n_free]

    def singular(self, err, failure: NewtonFailure) -> Exception:
        """What a singular effective tangent means.

        A massless DOF without stiffness: a :class:`~fem.errors.ModelError` naming it (no time
        step helps). When the DOF it leaves free has mass: a Newton failure, which a shorter step
        (more ``M / h^2``) may cure.
        """
        mass = self.mass_diagonal()
        if np.all(mass > 0):
            return failure
        csr = self.system.assembler.to_scipy(self.linear.whole())   # every row, its owner's
        # only nodal DOFs can lack mass and stiffness: a multiplier's diagonal is zero by design
        diag = np.abs(csr.diagonal()[self.system.dofmap.blocks["nodal"]])
        zero = np.flatnonzero(diag <= 1e-14 * (diag.max() if len(diag) else 1.0))
        if len(zero):               # DOFs on their own
            moving, joint = zero, "as have"
        else:                       # a combination of DOFs: those the null mode moves most
            phi = np.abs(eigen.null_vector(csr))
            moving = np.argsort(-phi)[:int(np.sum(phi > 0.5 * phi.max()))]
            joint = "moving with"
        k = int(moving[0])
        if mass[k] > 0:
            return failure
        dm, ids = self.system.dofmap, self.system.model.node_ids
        others = [dm.describe(int(j), ids) for j in moving[1:3]]
        more = len(moving) - 1 - len(others)
        also = (f" ({joint} " + ", ".join(others) + (f" and {more} more" if more else "")
                + ")") if others else ""
        return ModelError(f"step '{self.name}': {dm.describe(k, ids)} has neither mass nor "
                          f"stiffness{also}: in a dynamic step every free DOF needs mass or "
                          "stiffness; give the node a mass ([[masses]]) or its elements a "
                          "density, or support the DOF")

    def consistent(self, state):
        """Consistent accelerations ``(n, nslots)`` and reactions of ``state``, or None.

        The reactions are the physical multipliers per constraint group of the state with its
        velocities projected on the constraints (:mod:`fem.constraints.handlers.consistent`); None
        if the system is singular. Uses and refills the step's matrix.
        """
        sysm = self.system
        if not all(getattr(x, "consistent_reactions", True) for x in self.inertia.extras):
            if not self._kkt_warned:      # a 3D co-rotational superelement's frame inertia
                self.warn("the reactions written are the time steps' multipliers (averages over "
                          "a step; zero at the start): a 3D co-rotational superelement has no "
                          "consistent reactions yet")
                self._kkt_warned = True
            return None
        # the matrix depends on the positions only: one factorization for both solves
        asm = sysm.assembler              # the PETSc matrix (never the banded LU's: multipliers)
        linalg.fill_matrix(self.A, asm.indptr, asm.indices,
                           consistent.kkt_matrix(sysm, self.inertia, state))
        try:
            x, _ = linalg.solve_checked(self.ksp, consistent.velocity_rhs(sysm, state))
            state = consistent.with_velocities(sysm, state, x)
            x, _ = linalg.solve_checked(self.ksp, consistent.kkt_rhs(
                sysm, self.inertia, state, self.integrator.external(state, state.t),
                self.integrator.modal_external(state.t)))
        except (linalg.SingularMatrixError, linalg.NonFiniteError) as err:
            if not self._kkt_warned:
                self.warn(f"the reactions written are the time steps' multipliers (averages over "
                          f"a step; zero at the start): the equations of consistent reactions are "
                          f"singular ({err}), as they are when a DOF has no mass (a massless beam "
                          "node at a joint: give the elements a density)")
                self._kkt_warned = True
            return None
        return consistent.split(self.system, x)

    def _outputs(self, state) -> tuple[dict, dict]:
        """Element outputs and nodal fields (constraint groups: at consistent reactions)."""
        sysm = self.system
        if not sysm.model.constraints:
            return sysm.frame_outputs(state)
        solved = self.consistent(state)
        if solved is None:
            return sysm.frame_outputs(state)
        shown = state.copy()
        for lam, pos, scale in zip(solved[1], sysm._lam, sysm.constraint_scales, strict=True):
            shown.multipliers[pos] = lam / scale
        return sysm.frame_outputs(shown)

    def _frame(self, writer, state, strain: float, work: list[float], last: bool = False) -> None:
        T, linear, angular = self.inertia.balance(state, self.system.model.X)
        total = T + strain - work[0] - work[1]
        row = {"time": state.t, "kinetic": T, "strain": strain, "external_work": work[0],
               "constraint_work": work[1],
               "total": total, "dissipated": self.energy0 - total,
               "linear_momentum": linear, "angular_momentum": angular}
        damping = self.events.damping(state) if self.events is not None else None
        if damping is not None:
            row["damping"] = damping
            actuated = self.events.actuator_work(state)
            if actuated is not None:               # joint efforts and controllers
                row["actuator_work"] = actuated
        self.history.append(row)
        if writer:
            stats = getattr(self, "_stats", {"iterations": 0, "time_step": 0.0, "residual": 0.0})
            outs, nodal = self._outputs(state)
            writer.frame(state, outputs=outs, nodal_fields=nodal, time=state.t, dynamic=True,
                         stats=dict(stats, cuts=self.cuts),
                         reactions=self._reactions, last=last,
                         energy={k: v for k, v in row.items() if k != "time"})

    def summary(self) -> list[str]:
        """Lines for the run summary: steps, cuts, energy and momentum balance."""
        first, last = self.history[0], self.history[-1]
        scale = max(abs(first["total"]), abs(first["kinetic"]) + abs(first["strain"]))
        # with dissipative groups, the balance is of total + damping (energy/damping)
        damped = "damping" in last
        change = (last["total"] + last.get("damping", 0.0)
                  - first["total"] - first.get("damping", 0.0))
        # from rest and unstrained there is nothing to be relative to: say the change itself
        change = (f"change {change / scale:+.2e} relative" if scale > 0 else
                  f"change {change:+.3e}")
        lines = [f"{self.steps} time steps, {self.cuts} step-size halvings",
                 f"energy: kinetic {last['kinetic']:.6g}, strain {last['strain']:.6g}, "
                 f"external work {last['external_work']:.6g}, "
                 + (f"constraint work {last['constraint_work']:.6g}, "
                    if last["constraint_work"] else "")
                 + (f"damping {last['damping']:.6g}, total + damping "
                    f"{last['total'] + last['damping']:.10g} ({change})" if damped else
                    f"total {last['total']:.10g} ({change})")]
        for key in ("linear_momentum", "angular_momentum"):
            a, b = first[key], last[key]
            lines.append(f"{key.replace('_', ' ')}: {np.array2string(b, precision=6)} "
                         f"(change {np.linalg.norm(b - a):.2e})")
        if getattr(self, "settled", None) is not None:
            lines.append(f"settled to the static equilibrium in {self.settled} iterations")
        return lines
