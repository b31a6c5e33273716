"""Dynamic steps of small rigid mechanisms with the joints' multipliers eliminated.

A dynamic step with ``formulation = "partitioning"`` or ``"nullspace"`` integrates a 2D mechanism
of rigid bodies and joints by one of the two elimination handlers instead of the multiplier
equations of :mod:`fem.analysis.dynamic`:

``partitioning``
    Blajer, Schiehlen & Schirm's coordinate partitioning with the projective criterion
    (:class:`fem.constraints.handlers.partitioning.CoordinatePartitioning`; notes
    ``mufti_blajer.md`` part B, B(16)-(23), B4): fixed-step RK4 on the independent coordinates and
    their rates, the candidates being the model's free DOFs (the bodies' ``ux, uy, rz``), the
    independent ones chosen and switched by ``cos^2 alpha`` with 5 % hysteresis; the dependent ones
    by Newton on the joints.
``nullspace``
    the mass-orthogonal null-space formulation
    (:func:`fem.constraints.handlers.nullspace.integrate`; Mufti M(40), Blajer B(12)-(14) with an
    orthonormal tangent basis): fixed-step RK4 on all DOFs with the minimal equations'
    accelerations, positions and velocities projected back onto the joints after every step.

Both keep positions on the joints to Newton's tolerance (no drift) and give the reactions by
Blajer's B(37) with ``B = C = G``: the joints' multipliers, which are the physical pin forces.

**Results** go to the same layout as a multiplier step's (:class:`fem.io.step_writer.StepWriter`):
positions, rotations, velocities, accelerations, the joints' outputs (reactions in the joint
frame and the global ``force``/``moment``, relative coordinates) at the consistent reactions of
each frame's state, the support reactions (the residual at the supported DOFs with those
multipliers, from frame 0 on), and the energy balance: ``external_work`` is ``f . (q - q_0)``,
exact for the constant loads these formulations accept, ``constraint_work`` is zero (no drivers,
no prescribed motion). The statistics per frame are ``time_step``, ``residual`` (the largest
joint gap ``max |g|`` of the positions), ``cuts`` (0: fixed step) and ``iterations`` (``NaN``:
the handlers do not count their Newton iterations).

**Scope** (checked when the deck is built,
:func:`fem.analysis.dynamic_deck.unsupported`, each a
:class:`~fem.errors.DeckError` naming the key): a 2D model whose element groups are all rigid
bodies (point masses allowed), whose constraint groups are joints without drivers, at most
:data:`fem.constraints.handlers.nullspace.MAX_DOFS` free DOFs (the handlers are dense), no
prescribed values and only constant dead loads (no time functions, no follower loads). The keys
``integrator``, ``rho_inf``, ``tolerance`` and ``max_cuts`` belong to the multiplier formulation;
``time_step`` is the RK4 step and ``max_iterations`` bounds each Newton solve for positions.
"""

from __future__ import annotations

import numpy as np

from fem.analysis.dynamic import DynamicStep
from fem.constraints.handlers import nullspace as ns
from fem.constraints.handlers import partitioning as pt
from fem.errors import ModelError
from fem.model import apply_velocities


class EliminatedStep(DynamicStep):
    """A dynamic step by coordinate partitioning or the null-space formulation (module doc)."""

    RESUMABLE = False       # its mechanism's coordinates live in the step: a restart reruns it

    def run(self, state, results):
        """Advance ``state`` through the step, writing frames and the energy balance."""
        s = self.settings
        self.loads.begin(state)
        if self.loads.state_dependent:
            raise ModelError(f"step '{self.name}': formulation = \"{s.formulation}\" takes "
                             "constant dead loads; a follower load applied by an earlier step "
                             "is on")
        apply_velocities(s.velocities, state, self.system.model.X)
        mech = ns.Mechanism(self.system, self.loads.force)
        self.mech, self.inertia = mech, mech.inertia
        if s.velocities:
            self.project_velocities(state, self.inertia)   # the handlers project silently
        t_start = state.t
        state.t = 0.0
        writer = results.begin_step(self.name, "dynamic", self.system, clock="time",
                                    span=s.duration) if results else None
        p = self.progress
        self._stats = {"iterations": np.nan, "time_step": s.time_step, "residual": 0.0}
        self._start = None
        last = {}

        def on_step(work):
            if self._start is None:                  # the consistent initial state
                self._start = (mech.coordinates(work), mech.external_force(work, work.t))
                p.initial_energy = (self.inertia.kinetic_energy(work)
                                    + self.system.strain_energy(work))
            else:
                p.steps += 1
                p.time = work.t
                if writer:
                    writer.advance(work.t)
            due = p.steps == 0 or (p.next_output is None and p.steps % self.output_every == 0) \
                or (p.next_output is not None
                    and p.time >= p.next_output - 1e-9 * s.time_step) \
                or p.time >= s.duration - 1e-12 * s.duration
            if not due:
                return
            if p.steps and p.next_output is not None:
                p.next_output = self._next_output(p.time)
            shown = self._solved(work)
            q0, f = self._start
            p.external_work = float(f @ (mech.coordinates(work) - q0))
            self._stats["residual"] = float(np.abs(mech.gap(work)).max(initial=0.0))
            last["state"] = shown
            self._frame(writer, shown, self.system.strain_energy(shown),
                        (p.external_work, 0.0))

        try:
            if s.formulation == "partitioning":
                integ = pt.CoordinatePartitioning(mech, time_step=s.time_step,
                                                  max_iterations=s.max_iterations)
                integ.run(state, s.duration, on_step=on_step)
            else:
                ns.integrate(mech, state, s.duration, s.time_step, on_step=on_step,
                             max_iterations=s.max_iterations)
        finally:
            if writer:
                writer.close()
            self.close()
        end = last["state"]
        state.a[:], state.multipliers[:] = end.a, end.multipliers
        self.loads.finish(state, state.t)
        state.t = t_start + state.t
        return state

    def _solved(self, work):
        """A copy of ``work`` with its accelerations and the joints' multipliers (B(37)).

        Also sets the support reactions of the frame (``self._reactions``): the residual at the
        supported DOFs with those multipliers.
        """
        mech, sysm = self.mech, self.system
        shown = work.copy()
        if self.settings.formulation == "partitioning":
            lam, _ = pt.partition_reactions(mech, shown, shown.a[mech.free])
        else:
            a, flat = ns.accelerations(mech, shown)
            shown.a[mech.free] = a
            lam = mech.per_group(flat)
        for x, pos, scale in zip(lam, sysm._lam, sysm.constraint_scales, strict=True):
            shown.multipliers[pos] = x / scale
        self._reactions = (sysm.internal_force(shown)
                           - sysm.dofmap.from_nodal(self.loads.force(shown, shown.t)))
        return shown

    def _outputs(self, state) -> tuple[dict, dict]:
        """Element and joint outputs, nodal fields; ``state`` has the consistent multipliers."""
        return self.system.frame_outputs(state)
