"""What contact groups ask of a dynamic step: step limits, refused steps, history, dissipation.

Element groups with the capability ``"step_control"`` (:mod:`fem.elements.contact`) are asked,
through :class:`StepEvents`, the few things the time loop of :mod:`fem.analysis.dynamic` needs:

* before a time step, sphere sets (``"broad_phase"``, :mod:`fem.elements.contact.sphere_set`)
  list their candidate pairs again where a step may outrun the list (``broad_phase(state, h)``;
  the step then makes its pattern and solver again), and the energy of pairs dropped from a
  list stays in their history's ``dissipated_dropped``;
* before a time step, the longest step from the committed state (``max_step(state, mass)``: an
  open contact about to close, a closed one whose impact must be resolved): the step taken is the
  smallest of that, the CutBack policy's size and the time left, and the policy grows back
  (doubling) once the contacts have opened, so a short impact needs no short step elsewhere;
* after Newton converged, whether the step is refused (``check_step(s0, s1, mass)``: a contact
  closed deeper than its stated fraction of the estimated largest penetration); a refused step is
  halved as a step Newton failed is (the same CutBack: counted, bounded by ``max_cuts``);
* after a step is accepted, for integrators other than the energy-conserving one (which keeps
  the groups' history itself, ``conserving``), the groups' history at the new state
  (``commit(s0, s1, history)``: the approach speed of a contact closed, its duration, the
  dissipation by the trapezoidal rule of the power);
* the energy the dissipative groups (``"dissipation"``) took since the step began, the sum of
  their histories' ``dissipated``: the frame's ``energy/damping`` (only then written, so the
  results of other models stay as they were). With the energy-conserving scheme,
  ``total + damping`` is constant to the Newton tolerance in free motion;
* the work actuated groups (joint efforts and PD controllers, :mod:`fem.elements.force`) did,
  the sum of their histories' ``actuator_work``: the frame's ``energy/actuator_work``, so that
  ``total + damping - actuator_work`` is constant.

``mass`` is each node's translational mass (the step's lumped inertia), from which the groups
estimate the effective mass of a pair.
"""

from __future__ import annotations

import numpy as np


class StepEvents:
    """The step-controlling element groups of a dynamic step (None when there are none)."""

    def __init__(self, groups, mass: np.ndarray, keeps_history: bool):
        self.groups = groups
        self.mass = mass
        self.keeps_history = keeps_history
        self.dissipative = [g for g in groups if "dissipation" in g.capabilities]

    @classmethod
    def make(cls, step, state, fresh: bool = True) -> StepEvents | None:
        """The events of ``step`` (after its integrator began at ``state``), or None.

        ``fresh``: the step starts here (the groups' history starts from the state); a step
        resumed from a checkpoint keeps the history its state holds.
        """
        groups = [g for g in step.system.model.groups if "step_control" in g.capabilities]
        if not groups:
            return None
        mass = step.inertia.diagonal()[:, 0].copy()
        keeps = step.integrator.name == "energy_conserving"
        if not keeps and fresh:
            for g in groups:
                state.history[g.name] = g.conserving_start(state)
        return cls(groups, mass, keeps)

    def broad_phase(self, state, h: float) -> bool:
        """The candidate pairs of sphere sets at the committed ``state`` for a step ``<= h``.

        Returns whether a group's elements changed (the step makes a new pattern).
        """
        changed = False
        for g in self.groups:
            if "broad_phase" in g.capabilities:
                changed |= g.broad_phase(state, h)
        return changed

    def max_step(self, state) -> float:
        """The longest time step the groups allow from ``state`` (inf: any)."""
        return min([g.max_step(state, self.mass) for g in self.groups] + [np.inf])

    def refuse(self, s0, s1) -> str | None:
        """Why the converged step ``s0 -> s1`` is refused, or None."""
        for g in self.groups:
            why = g.check_step(s0, s1, self.mass)
            if why is not None:
                return why
        return None

    def accept(self, s0, s1) -> None:
        """The groups' history at the accepted ``s1`` (integrators that do not keep it)."""
        if self.keeps_history:
            return
        for g in self.groups:
            s1.history[g.name] = g.commit(s0, s1, s0.history[g.name])

    def damping(self, state) -> float | None:
        """Energy the dissipative groups took since the step began (None: no such group)."""
        if not self.dissipative:
            return None
        # a sphere set keeps the energy of the pairs its broad phase dropped apart
        return float(sum(state.history[g.name]["dissipated"].sum()
                         + np.sum(state.history[g.name].get("dissipated_dropped", 0.0))
                         for g in self.dissipative))

    def actuator_work(self, state) -> float | None:
        """Work the actuated groups (joint efforts, controllers) did since the step began."""
        done = [state.history[g.name]["actuator_work"] for g in self.dissipative
                if "actuator_work" in state.history.get(g.name, {})]
        return float(sum(w.sum() for w in done)) if done else None
