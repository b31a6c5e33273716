"""The generalized-alpha (and trapezoidal) time step of planar beam models, compiled (issue 32).

The energy-conserving step of small planar beam models runs its Newton loop compiled
(:mod:`fem.integrators.planar`); generalized-alpha ran it through the general path, 10-20x
slower on the 10-element pendulum of ``benchmarks/small_models.py`` (some two hundred
interpreter calls an iteration, and the forces at the step's start evaluated again each step).
:class:`PlanarAlphaStep` is its compiled step (DESIGN.md, "compiled step"): the same model class
(2D; every element group's evaluation the compiled pair ``beam2d.evaluate``, inlined at any size
as the static increment does, :mod:`fem.analysis.planar_static`; nodal inertia only; no joints,
ties, element damping, or loads that turn with the structure), its loop
:mod:`fem.integrators.planar_alpha_kernel`, its band LU the step's
(``step.linear.banded``). The internal forces at a step's start are computed by the loop's
kernel too (:meth:`PlanarAlphaStep.internal_force`), so that they are the numbers the last step
converged with, and a step depends on its start state alone (a restart continues to the same
bits).

:meth:`PlanarAlphaStep.eligible` says why a model is not taken; anything the loop does not
converge plainly (a failure to report or to cut back from) runs again through the general path,
which stays the reference: ``tests/test_planar_alpha.py`` compares iterations, norms, states
and energy balances of whole runs to 1e-12 (the element forces are summed in another order;
the accelerations, ``1 / (beta h^2)`` times the states' round-off, to 1e-10). The step's strain
energy is computed in the loop at convergence (:func:`.planar_alpha_kernel.strain_energy`).

Between two frames the time steps go several per compiled call (:class:`PlanarAlphaRun`, as
:class:`fem.integrators.planar_run.PlanarRun` takes energy-conserving ones), equal to one step
at a time bit for bit (``tests/test_planar_run.py``).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from fem import linalg
from fem.integrators.planar_run import PlanarRun
from fem.kernels import Kernel

log = logging.getLogger(__name__)

_kernel = Kernel("fem.integrators.planar_alpha_kernel", "step")


@dataclass
class _Converged:
    """The state a compiled time step converged on, and what the step's end needs of it."""

    inc: NDArray             # (n, 3) the step's increment
    external: NDArray        # (n, 3) the external forces (integ.external)
    energy: float            # the strain energy
    s1: object               # the trial state it converged on (until the next iterate)


class PlanarAlphaStep:
    """Compiled generalized-alpha time steps of one planar beam model (module docstring)."""

    def __init__(self, integ, preps):
        system = integ.system
        dm, asm = system.dofmap, system.assembler
        self.n_active, self.nnz = dm.n_active, asm.nnz
        self.index = np.ascontiguousarray(dm.index, dtype=np.int64)
        rows = np.full(dm.index.shape, -1, dtype=np.int64)
        free = (dm.index >= 0) & (dm.index < asm.n_free)
        rows[free] = asm.diagonal_positions()[dm.index[free]]
        self.diag_rows = rows
        nodal = integ.inertia
        self.mass = np.column_stack([nodal.m, nodal.m, nodal.I])
        self.coefficients = np.array([integ.alpha_m, integ.alpha_f, integ.beta, integ.gamma])
        nodes_, slots = np.nonzero(free)
        free_node, free_slot = np.empty(dm.n_free, np.int64), np.empty(dm.n_free, np.int64)
        free_node[dm.index[free]], free_slot[dm.index[free]] = nodes_, slots
        self.data = {
            "X": np.ascontiguousarray(system.model.X, dtype=float),
            "conn": np.concatenate([p.conn for p, _ in preps]),
            "chord0": np.concatenate([p.chord0 for p, _ in preps]),
            "l0": np.concatenate([p.l0 for p, _ in preps]),
            "Sc": np.concatenate([p.Sc for p, _ in preps]),
            "Hc": np.concatenate([p.Hc for p, _ in preps]),
            "edofs": np.concatenate([np.ascontiguousarray(sc.edofs, dtype=np.int64)
                                     for _, sc in preps]),
            "slot": np.concatenate([np.asarray(sc.slot, dtype=np.int64) for _, sc in preps]),
            "kind": np.ascontiguousarray(dm.kind_index, dtype=np.int64),
            "n_free": dm.n_free, "free_node": free_node, "free_slot": free_slot}
        self._h = None
        self._settings = None
        self._scratch = None
        self._last: _Converged | None = None

    @staticmethod
    def eligible(integ) -> str | None:
        """Why the compiled step cannot take ``integ``'s time steps, or None.

        From what the model and its groups declare (the module docstring's list); numba is
        imported last, for a model it takes.
        """
        system = integ.system
        model, dm = system.model, system.dofmap
        for why, when in (("not a planar model", model.dim != 2),
                          ("element inertia groups", bool(integ.extras)),
                          ("joints or ties", bool(getattr(model, "constraints", ()))),
                          ("loads that turn with the structure", integ.loads.state_dependent),
                          ("no free unknowns", dm.n_free == 0),
                          ("unknowns besides the nodes'", dm.n_free != dm.n_nodal),
                          ("no element groups", not model.groups)):
            if when:
                return why
        for g in model.groups:
            if "beam2d.evaluate" not in g.compiled_pairs:
                return f"element group '{g.name}' ({g.type_name}) has no compiled 2D beam kernel"
            if "damping" in g.capabilities:
                return f"element group '{g.name}' has damping"
        if not _kernel.enabled():
            return "numba is not installed, or FEM_JIT = 0"
        return None

    @classmethod
    def make(cls, integ) -> PlanarAlphaStep | None:
        """The compiled step of ``integ``'s model, or None.

        None where :meth:`eligible` gives a reason, or where the kernel does not know a group's
        basic beam.
        """
        if cls.eligible(integ) is not None:
            return None
        system = integ.system
        preps = []
        for i, g in enumerate(system.model.groups):
            try:
                preps.append((g._kernel_data(), system.assembler.groups[i]))
            except RuntimeError:                # a basic beam the kernel does not know
                return None
        return cls(integ, preps)

    def internal_force(self, s0) -> NDArray:
        """``(n_active,)`` the beams' internal forces at ``s0``, by the loop's own kernel.

        The step's start forces (:meth:`fem.integrators.alpha.GeneralizedAlpha.start_step`):
        the same numbers the loop computed where the last step converged, so that a step's
        result depends on its start state alone (a restart continues to the same bits).
        """
        from fem.integrators.planar_kernel import evaluate

        d, E = self.data, len(self.data["l0"])
        if self._scratch is None:
            self._scratch = (np.empty((E, 6)), np.empty((E, 6, 6)), np.empty(0))
        f_e, K_e, K = self._scratch
        f = np.empty(self.n_active)
        evaluate(s0.u, s0.rot, d["conn"], d["chord0"], d["l0"], d["Sc"], d["Hc"], d["edofs"],
                 d["slot"], False, f_e, K_e, f, K)
        return f

    @staticmethod
    def banded(step):
        """The banded LU the compiled time step solves with: the step's own, or None."""
        return step.linear.banded

    def settings(self, step) -> NDArray:
        """The step's test and solver constants, as the kernel takes them (made once)."""
        from fem.solvers import newton

        if self._settings is None:
            test = step.test
            self._settings = np.array([
                test.rtol, test.atol, test.max_iterations, test.round_off,
                np.finfo(float).eps, linalg.NULL_PIVOT,
                linalg.REFINE_ABOVE, linalg.MAX_REFINEMENTS, linalg.POOR_BACKWARD_ERROR,
                step.settings.newton == "modified", newton.MODIFIED_CONTRACTION])
        return self._settings

    def sized(self, integ, h: float) -> None:
        """The effective mass ``(1 - alpha_m) M / (beta h^2)`` of a step of size ``h``."""
        if self._h != h:
            c = 1 / (integ.beta * h * h)          # NodalInertia.newmark_force's, times 1 - am
            self._h, self.mass_k = h, (1 - integ.alpha_m) * (c * self.mass)

    def iterate(self, integ, step, s0, s1) -> tuple[int, NDArray] | None:
        """Newton on the time step from ``s0`` to ``s1`` in one compiled loop, in place.

        Returns the iterations and the residual (the reactions), with the norms in
        ``step.test``; None where the step needs the general path (``s1`` is then in an
        unspecified state and the caller starts again from its predictor).
        """
        from fem.integrators import planar_alpha_kernel as kern

        if integ._s0 is not s0:
            integ.start_step(s0)
        h = integ.h
        self.sized(integ, h)
        d, lu, test = self.data, step.linear.banded, step.test
        self.settings(step)
        external = integ.external(s1, s1.t)
        fe = integ.system.dofmap.from_nodal(external)
        f0 = np.stack(integ._f0)
        n, E, m = len(s0.u), len(d["l0"]), self.n_active
        inc, f_in, f_int, r = np.empty((n, 3)), np.empty(m), np.empty(m), np.empty(m)
        norms = np.empty(test.max_iterations + 3)
        K, reference, tangent = np.empty(self.nnz), np.empty(4), np.zeros(1, dtype=np.int64)
        energy = np.empty(1)
        status, it = kern.step(
            d["X"], s0.u, s1.u, s0.rot, s1.rot, s0.v, s1.v, s0.a, s1.a, h, self.coefficients,
            self.mass, self.mass_k, self.index, d["conn"], d["chord0"], d["l0"], d["Sc"],
            d["Hc"], d["edofs"], d["slot"], np.empty((E, 6)), np.empty((E, 6, 6)), f0, fe,
            d["kind"], d["n_free"], float(step._model_size()), d["free_node"], d["free_slot"],
            self.diag_rows, lu.indptr, lu.indices, lu.pos, lu.order, lu.ab, lu.kl,
            self._settings, inc, f_in, f_int, r, norms, K, reference, tangent, energy)
        if status != kern.CONVERGED:
            self._last = None
            return None
        test.start()
        test.norms = [float(x) for x in norms[:it + 1]]
        self._last = _Converged(inc, external, float(energy[0]), s1)
        return it, r

    def converged(self, s1) -> _Converged | None:
        """What :meth:`iterate` just converged to at ``s1``, or None.

        Its increment, external forces and strain energy. Asked by the dynamic step right
        after :meth:`iterate`, before anything moves ``s1``.
        """
        last = self._last
        return last if last is not None and last.s1 is s1 else None


class PlanarAlphaRun(PlanarRun):
    """Several generalized-alpha (or trapezoidal) time steps in one compiled call (issue 32).

    As :class:`fem.integrators.planar_run.PlanarRun` takes energy-conserving ones: between two
    frames, one step size, at most :data:`~fem.integrators.planar_run.MAX_STEPS` steps or
    :data:`~fem.integrators.planar_run.MAX_NODE_STEPS` node-steps, the first step that does not
    converge handed back to the general path; :func:`fem.integrators.planar_alpha_kernel.run`
    takes each step as the step-by-step path does (its start forces, predictor, Newton loop,
    work and checks), booked afterwards in the same order, so states, frames, energies and
    summaries are the step-by-step path's bit for bit (``tests/test_planar_run.py``). It
    takes the models :class:`PlanarAlphaStep` takes, with the step's banded LU, without step
    control, prescribed motion or an ``on_step`` callback, whose integrator's step methods are
    :class:`fem.integrators.alpha.GeneralizedAlpha`'s.
    """

    def __init__(self, step):
        self._start(step)

    @staticmethod
    def eligible(step) -> str | None:
        """Why the time steps of ``step`` go one at a time, or None (the class docstring)."""
        from fem.integrators.alpha import GeneralizedAlpha

        integ = step.integrator
        if not isinstance(integ, GeneralizedAlpha):
            return "not a generalized-alpha integrator"
        for name in ("start_step", "evaluate", "finish", "increment", "external"):
            if getattr(type(integ), name) is not getattr(GeneralizedAlpha, name):
                return f"the integrator's {name} is its own ({type(integ).__name__})"
        if integ._planar is False:          # as the first start_step makes it
            integ._planar = PlanarAlphaStep.make(integ)
        planar = integ._planar
        if not isinstance(planar, PlanarAlphaStep):
            return "the compiled generalized-alpha step does not take the model"
        return PlanarRun.loop_eligible(step, planar)

    @classmethod
    def make(cls, step) -> PlanarAlphaRun | None:
        """The compiled runs of ``step``, or None where :meth:`eligible` says why not (logged)."""
        why = cls.eligible(step)
        if why is not None:
            if isinstance(getattr(step.integrator, "_planar", None), PlanarAlphaStep):
                log.info("step %s: time steps one at a time, not several per compiled call (%s)",
                         step.name, why)
            return None
        return cls(step)

    def advance(self, step, state, writer) -> tuple[float, tuple[float, float]] | None:
        """Time steps from ``state`` to the next frame (in place); None: one at a time.

        Books them in ``step.progress`` as :meth:`fem.analysis.dynamic.DynamicStep.run` does
        and returns the last one's strain energy and the work so far.
        """
        from fem.integrators import planar_alpha_kernel as kern

        begun = self._begin(step)
        if begun is None:
            return None
        times, h = begun
        integ, planar = step.integrator, self.planar
        k = len(times) - 1
        planar.sized(integ, h)
        settings = planar.settings(step)
        d, lu = planar.data, planar.banded(step)
        n, E, m = len(state.u), len(d["l0"]), planar.n_active
        F = self._loads(integ, state, times)
        if self._scratch is None:          # the call's scratch (no use between calls)
            self._scratch = (np.empty((n, 3)), np.empty((n, 3)), np.empty((n, 3)),
                             np.empty((n, 3)), np.empty(n), np.empty((3, m)), np.empty(3 * n),
                             np.empty(3 * n), np.empty((E, 6)), np.empty((E, 6, 6)),
                             np.empty(m), np.empty(m), np.empty(planar.nnz))
        u1, v1, a1, inc, rot1, f0, fnod, prod, f_e, K_e, f_in, f_int, K = self._scratch
        its = np.zeros(k, np.int64)
        norms = np.empty((k, step.test.max_iterations + 3))
        strain, work, cwork = np.empty(k), np.empty(k), np.empty(k)
        r, fe, last = np.empty(m), np.empty(m), np.empty(step.test.max_iterations + 3)
        reference, tangent, energy = np.empty(4), np.zeros(1, np.int64), np.empty(1)
        done, status = kern.run(
            k, F, self.fixed, state.u, state.rot, state.v, state.a, u1, rot1, v1, a1,
            its, norms, strain, work, cwork, f0, fe, fnod, prod,
            d["X"], h, planar.coefficients, planar.mass, planar.mass_k, planar.index,
            d["conn"], d["chord0"], d["l0"], d["Sc"], d["Hc"], d["edofs"], d["slot"], f_e, K_e,
            d["kind"], d["n_free"], float(step._model_size()), d["free_node"], d["free_slot"],
            planar.diag_rows, lu.indptr, lu.indices, lu.pos, lu.order, lu.ab, lu.kl, settings,
            inc, f_in, f_int, r, last, K, reference, tangent, energy)
        planar._last = None                 # of no state now
        integ._s0 = None
        self._ended(step, times, done, k, status)
        if done == 0:
            return None
        state.t = times[done]
        return self._book(step, state, writer, done, k, h, its, norms, work, cwork, r, strain)
