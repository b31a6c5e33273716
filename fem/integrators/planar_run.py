"""Runs of energy-conserving time steps of a planar model between two frames, compiled (issue 32).

The compiled Newton loop of one time step (:meth:`fem.integrators.planar.PlanarStep.iterate`)
left the Python around it, most of the 10-element pendulum's step: the kernel's call with some
sixty arguments, the predictor, state copies, the finish and the energy bookkeeping of
:meth:`fem.analysis.dynamic.DynamicStep._newton`. Where nothing between two time steps needs
Python, :class:`PlanarRun` advances several of them in one call of
:func:`fem.integrators.planar_run_kernel.run` and books them afterwards as the step-by-step path
does (steps, time, the work of the loads and of the reactions, the last step's iterations, norms
and reactions), so the frames, the energy balance and the summary are those of the step-by-step
path: the same kernel takes each step from the same predictor, and the energies are summed as
numpy sums them. A run ends at the step after which a frame is due or the step's duration is
reached, before a step of another size (the last, shortened one; steps growing back after a
halving), after at most :data:`MAX_STEPS` steps or :data:`MAX_NODE_STEPS` node-steps (the
interrupt check runs between runs, every few milliseconds), or at the first step that does not
converge: that one is handed back to the general path, which reports and cuts back.

It takes a step (:meth:`PlanarRun.eligible`, the reason logged, then one step at a time) whose
model the compiled step takes (:meth:`fem.integrators.planar.PlanarStep.eligible`) with the banded
LU, without groups of step control (contacts, damped or actuated force elements) or prescribed
motion, whose loads do not turn with the structure (any time function: evaluated at the run's
times beforehand, as are the drives of driven joints, their targets at the steps' ends and
their values at the mid-steps where the drivers' work is taken, for :data:`HORIZON` steps
ahead and over arrays of times where that is exact,
:attr:`fem.time_functions.Steady.exact_over_arrays`); the consistent inertia's
director rates are carried from step to step inside the call and written into the state after
it (:func:`fem.integrators.planar_inertia.write_rates`, as the step's finish does); while the step
has an ``on_step`` callback (a Python call per step), steps go one at a time. Generalized-alpha
and the trapezoidal rule go in runs of their own (:class:`fem.integrators.planar_alpha.
PlanarAlphaRun`, which :meth:`PlanarRun.make` returns for them).
"""

from __future__ import annotations

import bisect
import logging

import numpy as np

from fem.integrators.planar_inertia import NO_INERTIA, director_rates, write_rates
from fem.integrators.planar_joints import NO_JOINTS

log = logging.getLogger(__name__)

MAX_STEPS = 256              # time steps of one compiled call at most
MAX_NODE_STEPS = 4096        # and nodes times steps (a few milliseconds between interrupt checks)
HORIZON = 256                # time steps whose drives are evaluated at once, ahead of the runs


class PlanarRun:
    """Several time steps of a planar energy-conserving model in one compiled call."""

    def __init__(self, step):
        from fem.integrators import planar_run_kernel

        self._start(step)
        self.kernel = planar_run_kernel
        groups = self.planar.groups
        self.gstart = np.cumsum([0] + [len(prep.l0) for _, prep, _ in groups], dtype=np.int64)
        self.names = [g.name for g, _, _ in groups]
        self._dslices = None         # each driven group's rows in the drives (G, 2)
        self._horizon = None         # (h, times, targets, mid-step drives) evaluated ahead

    def _start(self, step) -> None:
        """What every kind of run keeps: the compiled step, supports, run length, records."""
        self.planar = step.integrator._planar
        system = step.system
        self.fixed = np.ascontiguousarray(system.dofmap.fixed, dtype=np.bool_)
        self.cap = max(2, min(MAX_STEPS, MAX_NODE_STEPS // max(1, system.model.n_nodes)))
        self.hand_back = -1          # the step count at which a run handed a step back
        self.told = False            # whether the on_step callback was logged
        self.record = None           # a list: (iterations, norms) of every step appended
        self.iterations = 0          # the Newton iterations of the steps the runs took
        self._scratch = None         # the call's scratch arrays (trial state, element work)

    @staticmethod
    def eligible(step) -> str | None:
        """Why the time steps of ``step`` go one at a time, or None (the module docstring)."""
        from fem.integrators.planar import PlanarStep

        integ = step.integrator
        planar = getattr(integ, "_planar", None)
        if not isinstance(planar, PlanarStep):
            return "the compiled energy-conserving step does not take the model"
        return PlanarRun.loop_eligible(step, planar)

    @staticmethod
    def loop_eligible(step, planar) -> str | None:
        """Why the time loop of ``step`` goes one step at a time, or None (what both runs ask)."""
        integ = step.integrator
        # the time loop's own methods, which a run replaces: the step's must be its dynamic
        # step class's (found in its bases: the integrators do not import fem.analysis, which
        # imports them)
        loop = next((c for c in type(step).__mro__ if c.__name__ == "DynamicStep"
                     and c.__module__ == "fem.analysis.dynamic"), None)
        if loop is None:
            return "not a dynamic step's time loop"
        for name in ("_advance", "_newton", "_predict", "_check_finite"):
            if getattr(type(step), name) is not getattr(loop, name):
                return f"the step's {name} is its own ({type(step).__name__})"
        if planar.banded(step) is None:
            return "no banded LU (the solver has PETSc options, or the band is too wide)"
        if step.events is not None:
            return "groups with step control (contacts, damped or actuated force elements)"
        if step.loads.prescribed:
            return "prescribed motion"
        if integ.loads.state_dependent:
            return "loads that turn with the structure"
        return None

    @classmethod
    def make(cls, step) -> PlanarRun | None:
        """The compiled runs of ``step``, or None where :meth:`eligible` says why not (logged)."""
        from fem.integrators.planar import PlanarStep

        if cls is PlanarRun and getattr(step.integrator, "family", None) == "newmark":
            from fem.integrators.planar_alpha import PlanarAlphaRun

            return PlanarAlphaRun.make(step)
        why = cls.eligible(step)
        if why is not None:
            if isinstance(getattr(step.integrator, "_planar", None), PlanarStep):
                log.info("step %s: time steps one at a time, not several per compiled call (%s)",
                         step.name, why)
            return None
        return cls(step)

    def _times(self, step) -> tuple[list[float], float]:
        """The next run's times (its start and its steps' ends; none: empty) and step size."""
        p, s = step.progress, step.settings
        h = p.size
        if p.halvings or h != s.time_step or p.steps == self.hand_back:
            return [], h
        t, steps = p.time, p.steps
        last = s.duration - 1e-12 * s.duration
        if s.duration - t < h:               # the last step, shortened to end on the duration
            return ([t, t + (s.duration - t)] if t < last else []), s.duration - t
        times = [t]
        # the time loop's conditions (DynamicStep.run), step by step: a frame or the end stops
        while len(times) <= self.cap and t < last and h <= s.duration - t:
            t = t + h
            steps += 1
            times.append(t)
            if (p.next_output is None and steps % step.output_every == 0) or (
                    p.next_output is not None and t >= p.next_output - 1e-9 * s.time_step) \
                    or t >= last:
                break
        return (times if len(times) > 1 else []), h

    def _drives(self, jt: dict, times: list[float], h: float) -> tuple:
        """The driven angle rows' targets at the run's times and drives at its mid-steps.

        ``(k + 1, A)`` the ``atarget`` of :func:`fem.integrators.planar_joints.set_targets` at
        each time, ``(k, A)`` the drives at ``(t_j + t_j+1) / 2`` (where
        :meth:`fem.constraints.joint.Joint.drive_work` takes them) and ``(G, 2)`` the rows of
        each driven group. Evaluated for :data:`HORIZON` steps ahead at once (the times as
        :meth:`_times` adds them up, ``t + h``) and handed out in slices while the runs' times
        are those, bit for bit; other times (a shortened last step) are evaluated alone.
        """
        if self._dslices is None:
            self._dslices = np.array([[w.start, w.stop] for w, _ in jt["driven"]]
                                     or np.empty((0, 2)), dtype=np.int64)
        k = len(times) - 1
        if not jt["driven"]:
            A = len(jt["atarget"])
            return np.zeros((k + 1, A)), np.zeros((k, A)), self._dslices
        got = self._ahead(times, h)
        if got is None:                     # a new horizon from this run's start
            ahead, t = [times[0]], times[0]
            for _ in range(max(k, HORIZON)):
                t = t + h
                ahead.append(t)
            self._horizon = (h, ahead, *self._evaluate_drives(jt, ahead))
            got = self._ahead(times, h)
        targets, tmid = self._evaluate_drives(jt, times) if got is None else got
        jt["atarget"][:] = targets[-1]      # as set_targets leaves them
        return targets, tmid, self._dslices

    def _ahead(self, times: list[float], h: float) -> tuple | None:
        """The horizon's targets and mid-step drives at ``times``, or None: not its times."""
        if self._horizon is None or self._horizon[0] != h:
            return None
        _, ahead, targets, tmid = self._horizon
        j, k = bisect.bisect_left(ahead, times[0]), len(times) - 1
        if ahead[j:j + k + 1] != times:
            return None
        return targets[j:j + k + 1], tmid[j:j + k]

    @staticmethod
    def _evaluate_drives(jt: dict, times: list[float]) -> tuple:
        """``(k + 1, A)`` targets at ``times`` and ``(k, A)`` drives at their mid-steps.

        All times at once where that is exact (:meth:`fem.constraints.joint.Joint.drive_over`),
        else one at a time (:meth:`~fem.constraints.joint.Joint._drive_at`).
        """
        k, A = len(times) - 1, len(jt["atarget"])
        targets, tmid = np.zeros((k + 1, A)), np.zeros((k, A))
        t = np.array(times)
        mids = 0.5 * (t[:-1] + t[1:])
        for where, c in jt["driven"]:
            at, mid = c.drive_over(t), c.drive_over(mids)
            if at is None:
                for j, tj in enumerate(times):
                    targets[j, where] = c._drive_at(tj)
                for j in range(k):
                    mid_j = 0.5 * (times[j] + times[j + 1])
                    tmid[j, where] = c._drive_at(mid_j)
            else:
                targets[:, where], tmid[:, where] = at, mid
        return targets, tmid

    def _scratch_for(self, state, vh0, ud0) -> tuple:
        """The kernel's scratch arrays (contents of no use between calls), made once per shape."""
        key = (state.u.shape, state.rot.shape, state.multipliers.shape, vh0.shape, ud0.shape)
        if self._scratch is None or self._scratch[0] != key:
            self._scratch = (key, (np.empty_like(state.u), np.empty_like(state.rot),
                                   np.empty_like(state.v), np.empty_like(state.multipliers),
                                   np.empty_like(vh0), np.empty(len(vh0)),
                                   np.empty(self.planar.n_active), np.empty_like(ud0)))
        return self._scratch[1]

    def _begin(self, step) -> tuple[list, float] | None:
        """``(times, h)`` of the next run, the step size set; None: one step at a time.

        None where the step has an ``on_step`` callback (said once in the log) or nothing to take.
        """
        if step.on_step is not None:
            if not self.told:
                log.info("step %s: time steps one at a time while it has an on_step callback",
                         step.name)
                self.told = True
            return None
        times, h = self._times(step)
        if not times:
            return None
        step.policy.size = h                # as DynamicStep._advance sets it
        step.integrator.h = h
        return times, h

    @staticmethod
    def _loads(integ, state, times: list[float]) -> np.ndarray:
        """``(k + 1, n, 3)`` the external forces at the run's times (once where steady)."""
        F = np.empty((len(times), len(state.u), 3))
        if integ.loads.steady:
            F[:] = integ.external(state, times[0])
        else:
            for j, t in enumerate(times):
                F[j] = integ.external(state, t)
        return F

    def _ended(self, step, times: list[float], done: int, k: int, status: int) -> None:
        """After a call that took ``done`` of ``k`` steps: the next one is the general path's."""
        if done < k:
            self.hand_back = step.progress.steps + done
            log.debug("step %s: t=%.6g, the compiled run hands the step back (status %d)",
                      step.name, times[done + 1], status)

    def _book(self, step, state, writer, done: int, k: int, h: float, its, norms, work, cwork,
              r, strain) -> tuple[float, tuple[float, float]]:
        """Book the ``done`` of ``k`` steps a run took as the time loop books each.

        The work of the loads and reactions (added one step at a time), time, steps, the last
        step's iterations, norms and reactions, the policy and the writer's clock; returns what
        :meth:`advance` returns.
        """
        p = step.progress
        ext, con = p.external_work, p.constraint_work
        for w, c in zip(work[:done].tolist(), cwork[:done].tolist(), strict=True):
            ext += w                        # as the time loop adds them, one step at a time
            con += c
        p.external_work, p.constraint_work = ext, con
        p.time = state.t
        p.steps += done
        it = int(its[done - 1])
        step.test.start()
        step.test.norms = norms[done - 1, :it + 1].tolist()
        # the residual (reactions) of the last step, unless a failed one overwrote it
        step._reactions = r if done == k else None
        step._stats = {"iterations": it, "time_step": h, "residual": step.test.norms[-1]}
        self.iterations += sum(its[:done].tolist())
        if self.record is not None:
            self.record.extend((int(its[j]), norms[j, :its[j] + 1].tolist())
                               for j in range(done))
        step.policy.success(it)
        if writer:
            writer.advance(state.t, it)
        return float(strain[done - 1]), (p.external_work, p.constraint_work)

    def advance(self, step, state, writer) -> tuple[float, tuple[float, float]] | None:
        """Time steps from ``state`` to the next frame (in place); None: one at a time.

        Books them in ``step.progress`` as :meth:`fem.analysis.dynamic.DynamicStep.run` does
        and returns the last one's strain energy and the work so far.
        """
        begun = self._begin(step)
        if begun is None:
            return None
        times, h = begun
        integ, planar = step.integrator, self.planar
        k = len(times) - 1
        if planar._h != h:
            planar._h, planar.mass_h, planar.mass_k = h, planar.mass / h, planar.mass * (2 / h**2)
        d = planar.prepared(integ, step)
        lu = planar.banded(step)
        F = self._loads(integ, state, times)
        if len(self.names) == 1:            # the elements' history, a copy the call advances
            vh0 = np.array(state.history[self.names[0]]["v"], dtype=float, order="C")
        else:
            vh0 = np.concatenate([state.history[name]["v"] for name in self.names]
                                 + [np.empty((0, 3))])
        its, norms = np.zeros(k, np.int64), np.empty((k, len(d["norms"])))
        strain, work, cwork = np.empty(k), np.empty(k), np.empty(k)
        r, reference, tangent = np.empty(planar.n_active), np.empty(4), np.zeros(1, np.int64)
        jt = planar.joints or NO_JOINTS
        targets, tmid, dslices = self._drives(jt, times, h)
        ci = planar.consistent or NO_INERTIA
        ud0 = (director_rates(planar.inertia_kernel, ci, state) if planar.consistent is not None
               else d["ud_none"])
        u1, rot1, v1, mu1, vh1, energy, fe, ud1 = self._scratch_for(state, vh0, ud0)
        done, status = self.kernel.run(
            k, h, F, self.fixed, self.gstart, state.u, state.rot, state.v, state.a,
            state.multipliers, vh0, u1, rot1, v1, mu1, vh1,
            its, norms, strain, work, cwork,
            d["X"], planar.on, planar.mass_h, planar.mass_k, planar.index, d["conn"],
            d["chord0"], d["l0"], d["Sc"], d["Hc"], d["edofs"], d["slot"], d["f_e"], d["K_e"],
            energy, d["einc"], fe, d["kind"], d["n_free"],
            d["lever"], d["free_node"], d["free_slot"], planar.diag_rows, lu.indptr,
            lu.indices, lu.pos, lu.order, lu.ab, lu.kl, d["settings"], d["inc"], d["dpsi"],
            d["um"], r, d["norms"], d["K"], reference, tangent, jt["conn"], jt["offsets"],
            jt["mpos"], jt["scale"], jt["edofs"], jt["slot"], jt["aconn"], jt["ampos"],
            jt["ascale"], jt["atarget"], jt["aedofs"], jt["aslot"], jt["sconn"],
            jt["soffsets"], jt["sframe"], jt["smpos"], jt["sscale"], jt["sedofs"], jt["sslot"],
            ci["conn"], ci["axis"], ci["mu"], d["pattern"], ud0, ci["edofs"],
            ci["slot"], ud1, targets, tmid, dslices)
        planar._last = planar._iterated = None      # its caches are of no state now
        integ._s0 = None
        self._ended(step, times, done, k, status)
        if done == 0:
            return None
        state.t = times[done]
        if len(self.names) == 1:
            state.history[self.names[0]] = {"v": vh0}
        else:
            for name, a, b in zip(self.names, self.gstart[:-1], self.gstart[1:], strict=True):
                state.history[name] = {"v": vh0[a:b].copy()}
        if planar.consistent is not None:   # as PlanarStep.finish writes them
            write_rates(ci, state, ud0)
        return self._book(step, state, writer, done, k, h, its, norms, work, cwork, r, strain)
