"""What every analysis step shares: its linear system, loads, prescribed values and diagnostics.

A step owns one :class:`~fem.solvers.linear_system.LinearSystem` (a matrix and its direct
solver, options prefix ``<step name>_``), closed by :meth:`StepBase.close` (steps are also
context managers). Newton iterations only refill the matrix values.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from fem import owner_computes
from fem.analysis.settings import from_values
from fem.dofs import KINDS
from fem.errors import ModelError
from fem.loads import StepLoads
from fem.solvers import eigen
from fem.solvers import newton_scalar as scalar
from fem.solvers.linear_system import LinearSystem
from fem.solvers.newton import Newton, NewtonFailure, NormTest

log = logging.getLogger(__name__)


def options_prefix(step_name: str) -> str:
    """PETSc options prefix of a step: its name with anything but ``[A-Za-z0-9_]`` replaced."""
    return re.sub(r"\W", "_", step_name) + "_"


@dataclass
class Resume:
    """Where a restarted step continues (:mod:`fem.io.restart`).

    Attributes
    ----------
    start : the state the step started from (the previous step's end, or the reference)
    progress : the step's progress at the checkpoint (the state is the one ``run`` is given)
    """

    start: object
    progress: object


class StepBase:
    """Base class of analysis steps.

    A step type registered in :data:`fem.analysis.STEP_TYPES` declares its deck schema
    (``Settings``), what the deck builder asks of it (:meth:`requires`, :meth:`describe`,
    :meth:`check`, :data:`NO_LOADS`, :data:`NO_SUPERELEMENTS`, :data:`LOADS_STAY`), its
    constructor from a deck (:meth:`make`), the files it writes (:data:`WRITES`,
    :meth:`written_beside`) and its lines of the run summary (:meth:`summary`):
    :mod:`fem.io.build_steps` and :mod:`fem.run` ask only these, never a type's name.

    Parameters
    ----------
    name : step name (also the PETSc options prefix)
    system : :class:`~fem.system.System`
    loads : :class:`~fem.loads.StepLoads` of the step (loads and prescribed values)
    solver_options : PETSc options from the deck, pushed under the prefix
    """

    step_type = ""
    #: why a step of this type applies no loads (the message when its deck names some); None:
    #: it applies the loads it names, or those no earlier step applied
    NO_LOADS: str | None = None
    #: why a step of this type takes no superelement (the message after "superelement '<name>'");
    #: None: it takes them
    NO_SUPERELEMENTS: str | None = None
    #: whether the step's loads reach superelements' modal coordinates (:meth:`external`:
    #: gravity on superelements); steps without it refuse gravity on them (fem.io.build_steps)
    MODAL_LOADS = False

    @staticmethod
    def frame_gravity(values: dict) -> bool:
        """Whether a step of this type with these deck values applies gravity to 3D superelements.

        Their gravity turns with the frame (the energy-conserving scheme's
        ``gravity_conserving``); steps without it refuse it on them (fem.io.build_steps).
        """
        return False

    #: whether the loads of a step of this type stay applied after it (the deck's load history)
    LOADS_STAY = False
    #: whether its loads without a time function ramp with the step's pseudo-time (``g(t) = t``,
    #: removed loads ramp down); False: they apply at once, ``g = 1`` (:class:`fem.loads.StepLoads`)
    LOADS_RAMP = True
    #: the files a step of this type may write beside the results file: ``"modes"`` (the modes'
    #: XDMF), ``"vibration"`` (the modes vibrating), ``"matlab"`` (a state-space model),
    #: ``"plots"`` (PNG)
    WRITES: tuple[str, ...] = ()
    #: what every element group must give a step of this type besides a stiffness
    #: (:meth:`requires`), e.g. ``("mass",)``
    NEEDS: tuple[str, ...] = ()
    #: whether a step of this type continues from a checkpoint of its own (``run(state,
    #: results, resume=...)``); other steps run in one piece, and a restart runs them again
    #: from their start
    RESUMABLE = False
    #: whether its progress shows through its frames' writer (static, dynamic); the others are
    #: shown by the run as one piece (:mod:`fem.run`) on the clock :data:`CLOCK` (``"once"``:
    #: no clock, the step runs and ends; a sweep: ``"value"``), to :meth:`progress_span`
    FRAMES = False
    CLOCK = "once"

    def progress_span(self) -> float | None:
        """Where the step's progress clock ends, when it is known (a sweep: its values)."""
        return None

    def __init__(self, name: str, system, loads, solver_options: dict | None = None):
        self.name = name
        self.system = system
        self.loads = loads
        self.solver_options = dict(solver_options or {})
        self.prefix = options_prefix(name)
        # the matrix and direct solver Newton fills and solves with (open_solver chooses them)
        self.linear = self._linear_system()
        self.warnings: list[str] = []
        self._poor_pending: list[float] = []             # this increment's inaccurate solves
        self._poor_done: list[tuple[float, float]] = []  # (time, worst) of converged ones
        self.progress = None         # resumable progress (a dataclass) of steps that have one
        self._lever = None           # the model's size (block_scale)
        self._kinds = None           # block_scale's (n_active, blocks) indicator of the rows
        self.xdmf = None             # the modes' XDMF file, of steps that write one

    @classmethod
    def requires(cls, values: dict) -> list[tuple[str, str, str]]:
        """What the step asks of every element group, for deck values ``values``.

        ``(capability, deck key, what asks)`` triples (:data:`fem.elements.base.CAPABILITIES`);
        the deck builder turns a group lacking one into an error naming the group.
        """
        return [(c, "type", f'type = "{cls.step_type}"') for c in ("stiffness", *cls.NEEDS)]

    @classmethod
    def describe(cls, variant: str) -> str:
        """How deck messages name a step of this type and ``variant``: ``a <type> step``."""
        return f"a {cls.step_type} step"

    @classmethod
    def check(cls, entry, inputs, spec: dict):
        """The settings of deck step ``entry``, checked against the model.

        ``entry`` holds the step's deck key (``where``), its values with this type's defaults
        and the keys given; ``inputs`` is the deck builder's
        :class:`fem.io.build_steps.StepInputs` (model, node table, ...); ``spec`` the step's
        description so far (its resolved ``loads``, ``prescribed`` and ``remove``). The deck
        builder has checked what every step shares (names, loads, the keys of the variant and
        their choices). A mistake raises :class:`~fem.errors.DeckError` naming the key.
        """
        return from_values(cls.Settings, entry.values)

    @classmethod
    def step_loads(cls, spec: dict, system) -> StepLoads:
        """The loads and prescribed values of deck step ``spec`` (settings made) on ``system``."""
        settings = spec.get("settings")
        t_end = getattr(settings, "load_factor", None) or getattr(settings, "duration", 1.0)
        return StepLoads(system.model, spec["loads"], cls.LOADS_RAMP, spec["prescribed"],
                         spec.get("remove", ()), t_end=t_end)

    @classmethod
    def make(cls, spec: dict, system, deck, output_every: int = 1):
        """The step of deck description ``spec`` (with :meth:`check`'s settings) on ``system``.

        ``deck`` gives the PETSc options (and its path); ``output_every`` is ``[output] every``.
        """
        return cls(spec["name"], system, cls.step_loads(spec, system), spec["settings"],
                   solver_options=deck.solver_options)

    @property
    def resumable(self) -> bool:
        """Whether this step continues from a checkpoint of its own (:data:`RESUMABLE`)."""
        return self.RESUMABLE

    def checkpoint_progress(self):
        """The progress written with a checkpoint: the step's own, with its warnings so far."""
        p = self.progress
        if p is None:
            return None
        if hasattr(p, "warnings"):
            p.warnings = "\n".join(self.warnings)
            p.poor_solves = (np.array(self._poor_done, dtype=float).reshape(-1, 2)
                             if self._poor_done else None)
        return p

    def restore_notes(self, p) -> None:
        """The warnings of a checkpoint's progress ``p`` (:meth:`checkpoint_progress`)."""
        self.warnings = [w for w in p.warnings.split("\n") if w]
        self._poor_done = ([] if p.poor_solves is None
                           else [(float(a), float(b)) for a, b in p.poor_solves])

    def written_beside(self) -> tuple[str, ...]:
        """What of :data:`WRITES` this run of the step wrote (the modes' files: if it found any)."""
        return self.WRITES if self.xdmf else ()

    def summary(self) -> list[str]:
        """The step's lines of the run summary (its warnings follow them)."""
        return []

    def norm_test(self, tolerance: float, max_iterations: int) -> NormTest:
        """The step's convergence test: a norm per block of the DOF map (:data:`fem.dofs.KINDS`)."""
        kind = self.system.dofmap.kind_index[:self.system.n_free]
        return NormTest(rtol=tolerance, max_iterations=max_iterations, kind=kind, names=KINDS)

    # --- references of the convergence test (fem.solvers.newton.NormTest) -------------------
    def block_scale(self, *vectors: NDArray) -> NDArray:
        """(4,) the reference of each block of the residual, in the block's units.

        ``vectors`` are the full (n_active,) force vectors the residual is made of (external,
        internal, inertial); a block's own part is the largest of their norms over its rows,
        the fixed rows included (reactions: a cantilever's clamp carries the moment the tip
        force makes). The blocks then see each other through the model's size ``L`` (the
        diagonal of its bounding box): forces ``max(F, M / L)``, moments ``max(M, F L)``, so a
        block with nothing of its own to compare with is still held to the size the other
        block gives it (a pinned beam with no applied moment has no moment of its own at any
        node: the members' end moments cancel in the assembled vector; a beam rolled up by a
        tip moment has no force of its own), and a change of units (N and mm against kN and m)
        changes the references as it changes the residuals: the test does not depend on it.
        Element-internal unknowns (generalized forces of interior modes) are held to the force
        reference, at least. Constraint rows are scaled by the stiffness of the DOFs they hold
        (:meth:`fem.system.System._constraint_scales`): a row is the force (moment, for a group
        holding rotations only) that would close its violation, compared with that reference.
        The combination is :func:`fem.solvers.newton_scalar.references`, which the compiled
        steps of small planar models call too.
        """
        if self._kinds is None:           # (n_active, blocks): which block each row is in
            kind = self.system.dofmap.kind_index
            self._kinds = (np.arange(len(KINDS)) == kind[:, None]).astype(float)
            self._rotation_rows = self._rotation_constraints()
        # one product for all the vectors: small models ask this thousands of times a second
        V = np.stack(vectors) if len(vectors) > 1 else np.asarray(vectors[0])[None]
        own = np.sqrt(((V * V) @ self._kinds).max(axis=0))
        out = np.empty(len(KINDS))
        scalar.references(own[0], own[1], own[2], self._model_size(), self._rotation_rows, out)
        return out

    def _model_size(self) -> float:
        if self._lever is None:
            X = self.system.model.X
            self._lever = float(np.linalg.norm(X.max(axis=0) - X.min(axis=0))) if len(X) else 0.0
        return self._lever

    def _rotation_constraints(self) -> bool:
        """Whether the constraint groups hold rotations only (their rows are moments)."""
        groups = getattr(self.system.model, "constraints", ())
        return bool(groups) and all(not d.startswith("u") for c in groups for d in c.dof_names)

    def floors(self, K: NDArray, trial) -> NDArray:
        """(4,) the round-off floor ``eps |(|K| q)_b|`` of each block at the tangent ``K``.

        Coordinates are known to ``eps q`` (:meth:`fem.system.System.positions`), so internal
        forces computed from them carry errors up to about ``eps |K| q`` in each row (``|K|``
        the entrywise absolute tangent, CSR values ``K``); no Newton iteration can bring a
        block's residual below its part of that (0 where that is not finite). One pass over the
        matrix entries; the rule is :func:`fem.solvers.newton_scalar.floors`, the compiled
        steps' too.
        """
        asm = self.system.assembler
        absK_q = asm.abs_times(K, self.system.positions(trial))
        if self.system.owner is not None:       # K's owned rows only (fem.owner_computes)
            absK_q = self.system.owner.complete(absK_q)
        kind = self.system.dofmap.kind_index[:asm.n_free]
        out = np.empty(len(KINDS))
        scalar.floors(np.bincount(kind, weights=absK_q * absK_q, minlength=len(KINDS)),
                      np.finfo(float).eps, out)
        return out

    def warn(self, message: str) -> None:
        """Record a warning of this step (shown in the run summary) and log it."""
        text = f"step '{self.name}': {message}"
        if text not in self.warnings:
            self.warnings.append(text)
            log.warning("%s", text)

    # --- accuracy of Newton's linear solves ---------------------------------------------------
    def note_solve(self, report) -> None:
        """Keep the backward error of a Newton solve that stayed inaccurate after refinement."""
        if report.poor:
            self._poor_pending.append(report.backward_error)

    def commit_solves(self, where: float, failed: bool = False) -> None:
        """End of an increment or time step at ``where``: keep its inaccurate solves.

        Only if it converged: an increment that failed is retried and says nothing.
        """
        if self._poor_pending and not failed:
            self._poor_done.append((where, max(self._poor_pending)))
        self._poor_pending = []

    def warn_solves(self, what: str = "load factor") -> None:
        """One warning for all the converged increments some of whose solves were inaccurate.

        Newton converged anyway (its residual is computed independently of the solves), so the
        results hold to the tolerance; the warning says the tangent was hard to solve with.
        """
        if self._poor_done:
            where, _ = self._poor_done[0]
            worst = max(b for _, b in self._poor_done)
            unit = "time steps" if what == "time" else "increments"
            self.warn(f"{len(self._poor_done)} {unit} had linear solves that stayed "
                      f"inaccurate after iterative refinement (backward error up to {worst:.1e}, "
                      f"first at {what} {where:.6g}); Newton converged anyway")
            self._poor_done = []

    # --- drivers --------------------------------------------------------------------------------
    def check_drives(self, state) -> None:
        """Every driven joint must start where its drive function starts.

        Drive functions take the step's time (a dynamic step's starts at 0), so a coordinate
        that an earlier step moved elsewhere would jump: a :class:`ModelError` naming the joint.
        """
        for c in self.system.model.constraints:
            if getattr(c, "drive", None) is None:
                continue
            gap = np.abs(c.gap(state)[:, -1])
            if np.all(gap <= 1e-9 * max(1.0, float(np.abs(c.drive(state.t))))):
                continue
            e = int(np.argmax(gap))
            have = c.coordinates(state)
            name = "angle" if "angle" in have else "slide"
            raise ModelError(
                f"step '{self.name}': the driven {c.kind} joint {e + 1} of '{c.name}' starts at "
                f"{name} {float(have[name][e]):.6g}, but its drive function gives "
                f"{float(c.drive(state.t)):.6g} at t = {state.t:.6g}: drive functions take the "
                "step's time, so make the function start where the step finds the joint")

    # --- the linear solver Newton drives (fem.solvers.newton.Newton) --------------------------
    def _linear_system(self) -> LinearSystem:
        """A linear system on the system's current assembler (its pattern)."""
        blocks = self.system.dofmap.blocks
        return LinearSystem(self.system.assembler, self.system.n_free,
                            blocks["multipliers"].stop > blocks["multipliers"].start,
                            self.prefix, self.solver_options)

    def open_solver(self, defaults: dict | None = None, banded: bool = False) -> None:
        """Choose the step's matrix and direct solver (:meth:`LinearSystem.open`)."""
        self.linear.open(defaults, banded)
        owner_computes.attach(self)

    @property
    def A(self):
        """The step's PETSc matrix (made at first use after :meth:`open_solver`)."""
        return self.linear.A

    @property
    def ksp(self):
        """The step's PETSc direct solver (made at first use after :meth:`open_solver`)."""
        return self.linear.ksp

    @property
    def n(self) -> int:
        """Number of unknowns of the step's linear systems."""
        return self.system.n_free

    def newton(self, **options) -> Newton:
        """Newton on the step's linear system, with the step's hooks (``options``: Newton's).

        The step says what a singular tangent means (:meth:`singular`) and keeps the accuracy
        of every solve (:meth:`note_solve`).
        """
        return Newton(self.linear, self.test, singular=self.singular, solved=self.note_solve,
                      **options)

    def singular(self, err, failure: NewtonFailure) -> Exception:
        """What a singular tangent inside Newton means (Newton's ``singular`` hook).

        Here ``failure``, the :class:`NewtonFailure` the step may cut back from; ``err`` is the
        :class:`fem.linalg.SingularMatrixError`.
        """
        return failure

    def close(self) -> None:
        """Destroy the PETSc objects (those made)."""
        owner_computes.detach(self)
        self.linear.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # --- vectors ------------------------------------------------------------------------------
    def external(self, state, t: float, which: str = "all") -> NDArray:
        """(n_active,) external forces at ``t`` (see :meth:`fem.loads.StepLoads.force`).

        With the loads on the superelements' modal coordinates (:meth:`fem.loads.StepLoads.
        modal`: gravity) in the internal block.
        """
        dm = self.system.dofmap
        f = dm.from_nodal(self.loads.force(state, t, which))
        modal = self.loads.modal(t, which)
        if modal is not None:
            start = dm.blocks["internal"].start
            f[start:start + len(modal)] += modal
        return f

    def free_to_nodal(self, du_free: NDArray) -> NDArray:
        """(n, nslots) nodal increment of a free-DOF vector (zero at fixed DOFs)."""
        dm = self.system.dofmap
        return dm.to_nodal(du_free)

    # --- prescribed values --------------------------------------------------------------------
    def apply_prescribed(self, trial, t: float) -> NDArray:
        """Move the prescribed DOFs of ``trial`` to their values at ``t``; returns the increment."""
        du = self.loads.prescribed_increment(trial, t)
        if du is not None:
            self.system.update(trial, du)
            return du
        return np.zeros((trial.n_nodes, self.system.model.nslots))

    # --- diagnostics --------------------------------------------------------------------------
    def mechanism_error(self, matrix=None, diagonal: bool = True) -> ModelError:
        """A :class:`ModelError` naming the node and DOF a singular tangent leaves unrestrained.

        ``matrix``: that tangent (scipy sparse, on the free unknowns and multipliers); the
        step's own by default. ``diagonal = False`` skips the test for DOFs without any
        stiffness of their own (rigid bodies have none: their joints hold them) and names the
        motion of a null vector.
        """
        # every row from its owner (owner-computes assembly: fem.solvers.linear_system)
        csr = (self.system.assembler.to_scipy(self.linear.whole()) if matrix is None
               else matrix.tocsr())
        dm, model = self.system.dofmap, self.system.model
        ids = model.node_ids
        # only nodal DOFs can lack stiffness: a multiplier's diagonal is zero by design
        diag = np.abs(csr.diagonal()[dm.blocks["nodal"]])
        scale = diag.max() if len(diag) else 1.0
        zero = np.flatnonzero(diag <= 1e-14 * scale)
        if len(zero) and diagonal:
            k = int(zero[0])
            more = f" (and {len(zero) - 1} more)" if len(zero) > 1 else ""
            dof = dm.describe(k, ids, model)
            return ModelError(f"the model is a mechanism: {dof} has no stiffness{more}; add a "
                              "support or an element that restrains it")
        phi = np.abs(eigen.null_vector(csr))
        nodal = phi[dm.blocks["nodal"]]
        if len(nodal) == 0 or nodal.max() < 1e-6 * phi.max():   # only multipliers move:
            k = int(np.argmax(phi))                               # the constraints repeat
            return ModelError(f"redundant constraints: {dm.describe(k, ids, model)} is not "
                              "determined (the same motion is constrained twice, or a support "
                              "already holds it); remove one of them")
        k = int(np.argmax(nodal))
        moving = int(np.sum(nodal > 0.5 * nodal[k]))
        return ModelError(f"the model is a mechanism: {dm.describe(k, ids, model)} is "
                          "unrestrained "
                          f"(a rigid-body or mechanism mode moves it"
                          + (f" and {moving - 1} other DOFs" if moving > 1 else "")
                          + "); check the supports and the connections")
