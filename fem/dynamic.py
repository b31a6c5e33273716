"""Dynamic steps: the time loop, Newton iterations, step-size safeguards and the energy balance.

Each step goes from the committed state ``s0`` to a trial ``s1`` predicted as ``d0 + h v0`` and
corrected by Newton on the integrator's residual (:mod:`fem.integrators`). If Newton fails, the
step is retried with ``h`` halved, at most ``max_cuts`` times in a row; after a cut the step size
grows back (doubling) towards the requested one; the cuts are counted in the statistics. Nothing
loops without bound: past ``max_cuts`` the step stops with a :class:`~fem.errors.ConvergenceError`
and the frames written so far stay in the results file.

Energy bookkeeping, written at every output frame (``/steps/<s>/energy/*``):

``kinetic``, ``strain``
    at the frame (for the energy-conserving scheme the strain energy of the algorithmic strains);
``external_work``
    work of the external loads since the step started, with the integrator's own load average;
``constraint_work``
    work of the support reactions on prescribed motions since the step started (the reactions
    are the residual at the fixed DOFs, so for the energy-conserving scheme the balance is exact);
``total``
    ``kinetic + strain - external_work - constraint_work``, constant for a conservative system
    and an energy-conserving scheme;
``dissipated``
    ``total(start) - total``: energy the scheme removed (negative: energy it created);
``linear_momentum``, ``angular_momentum``
    about the origin (mid-point schemes conserve both for free bodies).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

import numpy as np

from fem import linalg
from fem.errors import ConvergenceError
from fem.integrators import make_integrator
from fem.integrators.inertia import NodalInertia
from fem.newton import NewtonFailure, NormTest
from fem.steps import StepBase

log = logging.getLogger(__name__)


@dataclass
class VelocityField:
    """Initial velocities ``v = v0 + omega x (x - center)`` and nodal spins ``omega``."""

    name: str
    nodes: np.ndarray
    velocity: np.ndarray
    angular_velocity: np.ndarray
    center: np.ndarray

    def apply(self, state, X: np.ndarray) -> None:
        """Set the velocities of the field's nodes in ``state``."""
        x = X[self.nodes] + state.u[self.nodes]
        v = self.velocity + np.cross(self.angular_velocity, x - self.center)
        d = state.dim
        state.v[self.nodes, :d] = v[:, :d]
        if d == 2:
            state.v[self.nodes, 2] = self.angular_velocity[2]
        else:
            state.v[self.nodes, 3:6] = self.angular_velocity


@dataclass
class DynamicSettings:
    """Settings of a dynamic step (deck keys of ``[[steps]]`` with ``type = "dynamic"``)."""

    integrator: str = "energy_conserving"
    rho_inf: float = 0.8
    time_step: float = 0.01
    duration: float = 1.0
    output_interval: float | None = None
    max_iterations: int = 30
    tolerance: float = 1e-10
    max_cuts: int = 8
    velocities: tuple = ()
    extra: dict = field(default_factory=dict)


class DynamicStep(StepBase):
    """A dynamic step; see the module docstring."""

    step_type = "dynamic"

    def __init__(self, name, system, loads, settings: DynamicSettings, solver_options=None,
                 output_every: int = 1, on_step=None):
        super().__init__(name, system, loads, solver_options)
        self.on_step = on_step          # callable(state), after every accepted time step
        self.settings = settings
        self.output_every = output_every
        self.test = NormTest(rtol=settings.tolerance, max_iterations=settings.max_iterations)
        self.history: list[dict] = []
        self.cuts = 0
        self.steps = 0

    def run(self, state, results):
        """Advance ``state`` through the step, writing frames and the energy balance."""
        s = self.settings
        self.open_solver()
        self.loads.begin(state)
        X = self.system.model.X
        for vf in s.velocities:
            vf.apply(state, X)
        inertia = NodalInertia(self.system, state)
        self.inertia = inertia
        integ = make_integrator(s.integrator, self.system, inertia, self.loads, s.time_step,
                                rho_inf=s.rho_inf)
        self.integrator = integ
        t_start = state.t
        state.t = 0.0
        integ.begin(state)
        writer = results.begin_step(self.name, "dynamic", self.system, clock="time",
                                    span=s.duration) if results else None
        strain0 = self._initial_strain(state)
        self.energy0 = inertia.kinetic_energy(state) + strain0
        work = [0.0, 0.0]                          # external, constraint
        self._reactions = None
        self._frame(writer, state, strain0, work)
        next_out = s.output_interval
        h = s.time_step
        try:
            while state.t < s.duration - 1e-12 * s.duration:
                h = min(h, s.duration - state.t)
                trial, strain, dwork = self._advance(state, h)
                work = [work[0] + dwork[0], work[1] + dwork[1]]
                state.assign(trial)
                self.steps += 1
                if writer:
                    writer.advance(state.t, self._stats["iterations"])
                if self.on_step is not None:
                    self.on_step(state)
                due = (next_out is None and self.steps % self.output_every == 0) or (
                    next_out is not None and state.t >= next_out - 1e-9 * s.time_step)
                if due or state.t >= s.duration - 1e-12 * s.duration:
                    self._frame(writer, state, strain, work)
                    if next_out is not None:
                        while next_out <= state.t + 1e-9 * s.time_step:
                            next_out += s.output_interval
                h = min(2 * h, s.time_step) if h < s.time_step else h
            self.loads.finish(state, state.t)
        finally:
            if writer:
                writer.close()
            self.close()
        state.t = t_start + state.t
        return state

    def _initial_strain(self, state) -> float:
        return self.system.strain_energy(state)

    def _advance(self, s0, h):
        """One time step from ``s0``, cutting ``h`` on failure; returns (s1, strain, work)."""
        cuts = 0
        while True:
            try:
                return self._newton(s0, h)
            except NewtonFailure as fail:
                cuts += 1
                self.cuts += 1
                if cuts > self.settings.max_cuts:
                    raise ConvergenceError(
                        f"Newton failed ({fail.reason}) after {cuts - 1} halvings of the time "
                        f"step (to {h:.3g})", step=self.name, time=s0.t + h,
                        iteration=fail.iteration, norms=fail.norms) from None
                log.info("step %s: t=%.6g, %s; halving the time step", self.name, s0.t + h,
                         fail.reason)
                h /= 2

    def _newton(self, s0, h):
        integ = self.integrator
        integ.h = h
        integ.start_step(s0)
        s1 = s0.copy()
        s1.t = s0.t + h
        predictor = h * s0.v            # d_n + h v_n, Crisfield & Shi's (notes, section 2.1)
        fixed = self.system.dofmap.fixed
        predictor[fixed] = 0.0
        self.system.update(s1, predictor)
        self.apply_prescribed(s1, s1.t)
        self.test.start()
        n = self.system.n_free
        asm = self.system.assembler
        for _ in range(self.settings.max_iterations + 2):
            # after a tiny correction the residual has almost surely converged: skip its tangent
            likely = self.test.norms and self.test._du_ratio < 1e-8
            r, scale, data = integ.evaluate(s0, s1, tangent=not likely)
            if self.test.converged(np.linalg.norm(r[:n]), scale):
                strain, work = integ.finish(s0, s1)
                self._reactions = r
                inc = self.system.dofmap.from_nodal(integ.kinematics(s0, s1).increment)
                constraint = float(r[n:] @ inc[n:])       # reactions on prescribed motion
                self._stats = {"iterations": len(self.test.norms) - 1, "time_step": h,
                               "residual": self.test.norms[-1]}
                return s1, strain, (work, constraint)
            if data is None:
                r, scale, data = integ.evaluate(s0, s1, tangent=True)
            self._tangent_data = data
            linalg.fill_matrix(self.A, asm.indptr, asm.indices, data)
            try:
                du = linalg.solve(self.ksp, -r[:n])
            except linalg.SingularMatrixError as err:
                raise NewtonFailure(f"singular tangent ({err})", len(self.test.norms),
                                    self.test.norms) from None
            self.system.update(s1, self.free_to_nodal(du))
            self.test.correction(np.linalg.norm(du), np.linalg.norm(
                self.system.dofmap.from_nodal(s1.dof_values())[:n]) + 1e-300)
        raise NewtonFailure("no convergence", len(self.test.norms), self.test.norms)

    def _frame(self, writer, state, strain: float, work: list[float]) -> None:
        inertia = self.inertia
        T = inertia.kinetic_energy(state)
        total = T + strain - work[0] - work[1]
        row = {"time": state.t, "kinetic": T, "strain": strain, "external_work": work[0],
               "constraint_work": work[1],
               "total": total, "dissipated": self.energy0 - total,
               "linear_momentum": inertia.linear_momentum(state),
               "angular_momentum": inertia.angular_momentum(state, self.system.model.X)}
        self.history.append(row)
        if writer:
            stats = getattr(self, "_stats", {"iterations": 0, "time_step": 0.0, "residual": 0.0})
            writer.frame(state, time=state.t, dynamic=True, stats=dict(stats, cuts=self.cuts),
                         reactions=self._reactions,
                         energy={k: v for k, v in row.items() if k != "time"})

    def summary(self) -> list[str]:
        """Lines for the run summary: steps, cuts, energy and momentum balance."""
        first, last = self.history[0], self.history[-1]
        scale = max(abs(first["total"]), abs(first["kinetic"]) + abs(first["strain"]), 1e-300)
        lines = [f"{self.steps} time steps, {self.cuts} step-size halvings",
                 f"energy: kinetic {last['kinetic']:.6g}, strain {last['strain']:.6g}, "
                 f"external work {last['external_work']:.6g}, "
                 + (f"constraint work {last['constraint_work']:.6g}, "
                    if last["constraint_work"] else "")
                 + f"total {last['total']:.10g} "
                 f"(change {(last['total'] - first['total']) / scale:+.2e} relative)"]
        for key in ("linear_momentum", "angular_momentum"):
            a, b = first[key], last[key]
            lines.append(f"{key.replace('_', ' ')}: {np.array2string(b, precision=6)} "
                         f"(change {np.linalg.norm(b - a):.2e})")
        return lines
