"""The energy-conserving step of planar beam and multibody models, compiled (issues 14, 32).

A small model's time step is interpreter work: the flexible pendulum of
``benchmarks/small_models.py`` (100 co-rotational beams) spent about 0.2 ms of every evaluation
in some sixty small numpy calls around the element kernel (kinematics, velocities, inertia,
Cayley columns, scatter), three evaluations a step. For the models where that path reduces to
nodes and beams, :class:`PlanarStep` computes the same residual, reference and tangent with the
kernels of :mod:`fem.integrators.planar_kernel`:

* 2D, the energy-conserving integrator (:class:`fem.integrators.midpoint.EnergyConserving`);
* every element group a co-rotational 2D beam group that takes the compiled energy-conserving
  force (:mod:`fem.elements.beam.beam2d_jit`: no offsets, no interior modes) or a group of 2D
  rigid bodies (:class:`fem.elements.rigid_body.RigidBody`: no force of its own, its inertia
  ``diag(m, m, J)`` is the node's), inertia nodal (lumped beams, point masses, bodies) or the
  consistent inertia of co-rotational beams with its director velocities
  (:mod:`fem.inertia.beam`; :mod:`fem.integrators.planar_inertia_kernel`);
* constraint groups of 2D revolute, fixed, inline and undriven prismatic joints (between
  nodes, at offsets from them, or to the ground; revolute ones driven or not), without released
  rows: their discrete gradients (:mod:`fem.integrators.planar_joint_kernel`: point, angle
  and slide rows of :mod:`fem.constraints.joint_rows`);
* loads that do not turn with the structure (dead loads, gravity; any time function): their
  forces come from :meth:`~fem.integrators.base.Integrator.external`.

The compiled time step (:meth:`PlanarStep.iterate`) solves with a banded LU without pivoting
(:mod:`fem.solvers.banded`): the step's own where the model has no multipliers, else one whose
numbering puts each joint's multipliers right after the last of its nodes' unknowns
(:func:`~fem.integrators.planar_joints.joint_order`), so that every multiplier's pivot is the
Schur complement of the nodes already eliminated (the chain of ``benchmarks/multibody.py``: a
band of 9). What the step does not take is logged (:meth:`PlanarStep.make`) and keeps the
general path.

:meth:`PlanarStep.eligible` says which of these a model misses, from what it declares (the
groups' compiled pairs, :attr:`fem.elements.base.ElementGroup.compiled_pairs`). Anything else
keeps the general path, which stays the reference: ``tests/test_planar_step.py`` and
``tests/test_planar_multibody.py`` compare residuals, references and tangents of the two at
random states, and whole runs. The step's results are those of the general path to round-off
(sums in another order, another LU).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from fem import linalg
from fem.elements.rigid_body import RigidBody
from fem.integrators.planar_inertia import (
    NO_INERTIA,
    consistent_data,
    director_rates,
    write_rates,
)
from fem.integrators.planar_joints import (
    NO_JOINTS,
    free_rows,
    joint_data,
    joint_order,
    set_targets,
)
from fem.kernels import Kernel
from fem.solvers.banded import MAX_BAND, BandedLU

log = logging.getLogger(__name__)

_nodes = Kernel("fem.integrators.planar_kernel", "nodes")


@dataclass
class _Evaluation:
    """The latest evaluation, kept for the Newton test's repeats and for ``finish``."""

    s0: object
    u: NDArray
    rot: NDArray
    mu: NDArray
    v: NDArray
    r: NDArray
    scale: NDArray
    K: NDArray | None
    inc: NDArray
    f_ext: NDArray
    energies: list
    hist: dict
    ud1: NDArray | None = None        # the consistent inertia's director rates of s1


class PlanarStep:
    """Compiled evaluations of one dynamic step's planar beam model (module docstring)."""

    def __init__(self, integ, groups):
        from fem.integrators import planar_kernel as kern

        self.kern = kern
        self.joint_kernel = None
        if getattr(integ.system.model, "constraints", ()):
            from fem.integrators import planar_joint_kernel

            self.joint_kernel = planar_joint_kernel
        self.inertia_kernel = None
        if integ.extras:
            from fem.integrators import planar_inertia_kernel

            self.inertia_kernel = planar_inertia_kernel
        system = self.system = integ.system
        dm = system.dofmap
        asm = system.assembler
        self.n_active, self.nnz = dm.n_active, asm.nnz
        self.index = np.ascontiguousarray(dm.index, dtype=np.int64)
        # the CSR position of each free slot's diagonal entry (-1 elsewhere)
        rows = np.full(dm.index.shape, -1, dtype=np.int64)
        free = (dm.index >= 0) & (dm.index < asm.n_free)
        rows[free] = asm.diagonal_positions()[dm.index[free]]
        self.diag_rows = rows
        nodal = integ.nodal           # element inertia groups: their own kernel (consistent)
        self.mass = np.column_stack([nodal.m, nodal.m, nodal.I])
        self.on = np.ascontiguousarray(integ.chord_nodes())
        self.groups = [(g, g._kernel_data(), asm.groups[i]) for i, g in groups
                       if not isinstance(g, RigidBody)]
        self.joints = joint_data(system)
        self.consistent = consistent_data(integ)
        self._lu = None               # (linear system, banded LU) of models with multipliers
        self._h = None
        self._last: _Evaluation | None = None
        self._step = None             # the compiled time step's data (iterate), made at first use
        self._iterated = None         # the state iterate() converged last, until evaluate()

    @staticmethod
    def eligible(integ) -> str | None:
        """Why the compiled step cannot take ``integ``'s time steps, or None.

        From what the model and its groups declare (the module docstring's list): every element
        group's energy-conserving force the compiled pair ``beam2d.conserving``
        (:attr:`~fem.elements.base.ElementGroup.compiled_pairs`), taken at its size
        (:func:`fem.elements.beam.beam2d_jit.compiled`), whose kernel the step inlines.
        """
        from fem.constraints.joint import Joint
        from fem.elements.beam import beam2d_jit
        from fem.inertia.beam import ConsistentBeamInertia

        system = integ.system
        model = system.model
        for why, when in (("not a planar model", model.dim != 2),
                          ("loads that turn with the structure", integ.loads.state_dependent)):
            if when:
                return why
        on = integ.chord_nodes()
        for x in integ.extras:
            if type(x) is not ConsistentBeamInertia:
                return (f"element inertia group '{x.group.name}' ({type(x).__name__}): only "
                        "the consistent inertia of co-rotational beams is compiled")
            if not on[x.conn].all():
                return (f"element inertia group '{x.group.name}': consistent inertia on nodes "
                        "that do not turn by Cayley parameters")
        for c in getattr(model, "constraints", ()):
            if not (isinstance(c, Joint) and c.dim == 2
                    and c.kind in ("revolute", "fixed", "inline", "prismatic")):
                return (f"constraint group '{c.name}' ({c.type_name}): only 2D revolute, fixed, "
                        "inline and prismatic joints are compiled")
            if c.kind == "prismatic" and c.drive is not None:
                return f"constraint group '{c.name}': driven prismatic joints are not compiled"
            if c.released.any():
                return f"joints '{c.name}' have redundant rows released"
        if not _nodes.enabled():               # numba is imported here, for a model it may take
            return "numba is not installed, or FEM_JIT = 0"
        for i, g in enumerate(model.groups):
            if isinstance(g, RigidBody):        # inertia only: the nodes'
                continue
            if g.type_name != "beam":
                return (f"element group '{g.name}' ({g.type_name}): only co-rotational 2D beams "
                        "and rigid bodies are compiled")
            if not ("beam2d.conserving" in g.compiled_pairs
                    and beam2d_jit.compiled(len(g), conserving=True)):
                return (f"element group '{g.name}' ({g.type_name}) has no compiled 2D beam "
                        "energy-conserving kernel")
            if system.dofmap.internal and system.dofmap.internal[i].shape[1]:
                return f"element group '{g.name}' has element-internal unknowns"
        return None

    @classmethod
    def make(cls, integ) -> PlanarStep | None:
        """The compiled step of ``integ``'s model, or None where :meth:`eligible` says why not.

        The reason is logged (INFO): the general path takes the step.
        """
        why = cls.eligible(integ)
        if why is not None:
            log.info("the compiled energy-conserving step does not take this model (%s): "
                     "the general path", why)
            return None
        return cls(integ, list(enumerate(integ.system.model.groups)))

    # --- the integrator's protocol --------------------------------------------------------------
    def evaluate(self, integ, s0, s1, tangent: bool):
        """Residual, its reference and (if asked) the tangent's CSR values at ``s1``."""
        self._iterated = None
        last = self._last
        if (last is not None and last.s0 is s0 and (last.K is not None or not tangent)
                and np.array_equal(last.u, s1.u) and np.array_equal(last.rot, s1.rot)
                and np.array_equal(last.mu, s1.multipliers)):
            s1.v[:] = last.v
            return last.r, last.scale, last.K if tangent else None
        if integ._s0 is not s0:
            integ.start_step(s0)
        h = integ.h
        if self._h != h:
            self._h, self.mass_h, self.mass_k = h, self.mass / h, self.mass * (2 / h**2)
        kern = self.kern
        n = len(s0.u)
        inc, dpsi, um = np.empty((n, 3)), np.empty(n), np.empty((n, 3))
        f_in = np.empty(self.n_active)
        kern.nodes(s0.u, s1.u, s0.rot, s1.rot, s0.v, self.on, self.mass_h, 2 / h, self.index,
                   inc, dpsi, um, s1.v, f_in)
        f_el = np.zeros(self.n_active)
        K = np.zeros(self.nnz if tangent else 0)
        if tangent:
            kern.mass_diagonal(self.mass_k, dpsi, self.diag_rows, K)
        ci, ud1 = self.consistent, None
        if ci is not None:
            ud0 = director_rates(self.inertia_kernel, ci, s0)
            ud1 = np.empty_like(ud0)
            self.inertia_kernel.consistent(s0.rot, s1.rot, s0.v, s1.v, ci["conn"], ci["axis"],
                                           ci["mu"], ci["pattern"], ud0, h, ci["edofs"],
                                           ci["slot"], tangent, ud1, f_in, K)
        energies, hist = [], {}
        for g, prep, sc in self.groups:
            E = len(prep.l0)
            energy, vh1 = np.empty(E), np.empty((E, 3))
            kern.beams(um, s0.u, s1.u, prep.conn, prep.chord0, prep.l0, prep.Sc, prep.Hc,
                       s0.history[g.name]["v"], inc, dpsi, sc.edofs, sc.slot, tangent,
                       np.empty((E, 6)), np.empty((E, 6, 6)), energy, vh1, np.empty((E, 6)),
                       f_el, K)
            energies.append(energy)
            hist[g.name] = {"v": vh1}
        jt = self.joints
        if jt is not None:
            jk = self.joint_kernel
            set_targets(jt, s1.t)
            jk.revolute(s0.u, s1.u, s0.rot, s1.rot, jt["conn"], jt["offsets"], jt["mpos"],
                        s1.multipliers, jt["scale"], self.on, jt["edofs"], jt["slot"], tangent,
                        f_el, K)
            jk.angles(s0.rot, s1.rot, jt["aconn"], jt["ampos"], s1.multipliers, jt["ascale"],
                      jt["atarget"], self.on, jt["aedofs"], jt["aslot"], tangent, f_el, K)
            jk.slides(s0.u, s1.u, s0.rot, s1.rot, jt["sconn"], jt["soffsets"], jt["sframe"],
                      jt["smpos"], s1.multipliers, jt["sscale"], self.on, jt["sedofs"],
                      jt["sslot"], tangent, f_el, K)
        f_ext = 0.5 * (integ.f_ext0 + integ.external(s1, s1.t))
        fe = integ.system.dofmap.from_nodal(f_ext)
        r = f_in + f_el - fe
        scale = integ.scale(f_in, f_el, fe)
        K = K if tangent else None
        self._last = _Evaluation(s0, s1.u.copy(), s1.rot.copy(), s1.multipliers.copy(),
                                 s1.v.copy(), r, scale, K, inc, f_ext, energies, hist, ud1)
        return r, scale, K

    def _converged(self, integ, s0, s1) -> _Evaluation:
        """The evaluation at ``s1``, kept or made.

        The one :meth:`iterate` just converged on is taken as it is: its caller asks next,
        before anything moves ``s1``.
        """
        if self._iterated is not s1:
            self.evaluate(integ, s0, s1, tangent=False)
        return self._last

    def finish(self, integ, s0, s1) -> tuple[float, float]:
        """Rates and element history of ``s1``; its strain energy and the step's work."""
        last = self._converged(integ, s0, s1)
        s1.history.update(last.hist)
        s1.a[:] = (s1.v - s0.v) / integ.h
        if last.ud1 is not None:
            write_rates(self.consistent, s1, last.ud1)
        work = float(np.sum(last.f_ext * last.inc))
        return float(sum(e.sum() for e in last.energies)), work

    def increment(self, integ, s0, s1) -> NDArray:
        """(n, 3) the step's increment (``psi`` in the rotation slots of Cayley nodes)."""
        return self._converged(integ, s0, s1).inc

    # --- the whole Newton loop of a time step, compiled -------------------------------------
    def iterate(self, integ, step, s0, s1) -> tuple[int, NDArray] | None:
        """Newton on the time step from ``s0`` to ``s1`` in one compiled loop, in place.

        :mod:`fem.integrators.planar_newton_kernel`: full or modified Newton as the step's
        ``newton`` says, with the banded LU of :meth:`banded`. Returns the iterations
        and the residual (the reactions), with the converged evaluation kept for
        :meth:`finish` and the norms in ``step.test``; None where the step needs the general
        path (a failure to report or to cut back from): ``s1`` is then in an unspecified state
        and the caller starts again from its predictor.
        """
        if integ._s0 is not s0:
            integ.start_step(s0)
        h = integ.h
        if self._h != h:
            self._h, self.mass_h, self.mass_k = h, self.mass / h, self.mass * (2 / h**2)
        d = self.prepared(integ, step)
        kern = d["kernel"]
        lu, test, settings = self.banded(step), step.test, d["settings"]
        f_ext = 0.5 * (integ.f_ext0 + integ.external(s1, s1.t))
        fe = integ.system.dofmap.from_nodal(f_ext)
        E = len(d["l0"])
        # work arrays made once (the state-like outputs, kept by the state or the caller, not)
        inc, dpsi, um, norms, K = d["inc"], d["dpsi"], d["um"], d["norms"], d["K"]
        r, reference, tangent = np.empty(self.n_active), np.empty(4), np.zeros(1, np.int64)
        energy, vh1 = np.empty(E), np.empty((E, 3))
        vh0 = (s0.history[self.groups[0][0].name]["v"] if len(self.groups) == 1 else
               np.concatenate([s0.history[g.name]["v"] for g, _, _ in self.groups]
                              + [np.empty((0, 3))]))
        jt = self.joints or NO_JOINTS
        set_targets(jt, s1.t)
        ci = self.consistent or NO_INERTIA
        ud0 = (director_rates(self.inertia_kernel, ci, s0) if self.consistent is not None
               else d["ud_none"])
        ud1 = np.empty_like(ud0)
        status, it = kern.step(
            d["X"], s0.u, s1.u, s0.rot, s1.rot, s0.v, s1.v, self.on, self.mass_h, self.mass_k,
            2 / h, self.index, d["conn"], d["chord0"], d["l0"], d["Sc"], d["Hc"], vh0,
            d["edofs"], d["slot"], d["f_e"], d["K_e"], energy, vh1, d["einc"], fe, d["kind"],
            d["n_free"], d["lever"], d["free_node"], d["free_slot"], self.diag_rows, lu.indptr,
            lu.indices, lu.pos, lu.order, lu.ab, lu.kl, settings, inc, dpsi, um, r, norms, K,
            reference, tangent, jt["conn"], jt["offsets"], jt["mpos"], jt["scale"], jt["edofs"],
            jt["slot"], jt["aconn"], jt["ampos"], jt["ascale"], jt["atarget"], jt["aedofs"],
            jt["aslot"], s1.multipliers, jt["sconn"], jt["soffsets"], jt["sframe"], jt["smpos"],
            jt["sscale"], jt["sedofs"], jt["sslot"], ci["conn"], ci["axis"], ci["mu"],
            d["pattern"], ud0, h, ci["edofs"], ci["slot"], ud1)
        if status != kern.CONVERGED:
            self._iterated = None
            return None
        test.start()
        test.norms = norms[:it + 1].tolist()
        energies, hist, start = [], {}, 0
        for g, prep, _ in self.groups:
            stop = start + len(prep.l0)
            energies.append(energy[start:stop])
            hist[g.name] = {"v": vh1[start:stop]}
            start = stop
        self._last = _Evaluation(s0, s1.u.copy(), s1.rot.copy(), s1.multipliers.copy(),
                                 s1.v.copy(), r, reference, K.copy() if tangent[0] else None,
                                 inc.copy(), f_ext, energies, hist,
                                 ud1 if self.consistent is not None else None)
        self._iterated = s1
        return it, r

    def banded(self, step):
        """The banded LU the compiled time step solves with, or None (the general path).

        The step's own (:attr:`fem.solvers.linear_system.LinearSystem.banded`) for models
        without multipliers; with joints one numbered by :func:`joint_order`, made once per
        linear system, unless the step's solver has PETSc options of the user's (deck or
        command line) or the band is too wide.
        """
        linear = step.linear
        if self.joints is None:
            return linear.banded
        lu = self._lu
        if lu is not None and lu[0] is linear:
            return lu[1]
        lu = None
        if not linear.petsc_options_given:
            asm = self.system.assembler
            order, kl = joint_order(self.system)
            if kl <= MAX_BAND:
                lu = BandedLU(asm.indptr, asm.indices, order, kl)
        self._lu = (linear, lu)
        return lu

    def prepared(self, integ, step) -> dict:
        """:meth:`_step_data`, with the step's test and solver constants (``settings``)."""
        d = self._step or self._step_data(integ, step)
        if d.get("settings") is None:
            from fem.solvers import newton

            test = step.test
            d["settings"] = np.array([
                test.rtol, test.atol, test.max_iterations, test.round_off,
                np.finfo(float).eps, linalg.NULL_PIVOT,
                linalg.REFINE_ABOVE, linalg.MAX_REFINEMENTS, linalg.POOR_BACKWARD_ERROR,
                step.settings.newton == "modified", newton.MODIFIED_CONTRACTION])
            d["norms"] = np.empty(test.max_iterations + 3)
        return d

    def _step_data(self, integ, step) -> dict:
        """What the compiled time step needs besides the states, made once."""
        from fem.integrators import planar_newton_kernel

        system = integ.system
        dm = system.dofmap
        preps = [prep for _, prep, _ in self.groups]
        free_node, free_slot = free_rows(dm)
        n, E = system.model.n_nodes, sum(len(p.l0) for p in preps)
        self._step = {
            "kernel": planar_newton_kernel,
            "inc": np.empty((n, 3)), "dpsi": np.empty(n), "um": np.empty((n, 3)),
            "K": np.empty(self.nnz), "f_e": np.empty((E, 6)), "K_e": np.empty((E, 6, 6)),
            "einc": np.empty((E, 6)),
            "X": np.ascontiguousarray(system.model.X, dtype=float),
            "conn": np.concatenate([p.conn for p in preps] + [np.empty((0, 2), np.int64)]),
            "chord0": np.concatenate([p.chord0 for p in preps] + [np.empty((0, 2))]),
            "l0": np.concatenate([p.l0 for p in preps] + [np.empty(0)]),
            "Sc": np.concatenate([p.Sc for p in preps] + [np.empty((0, 4))]),
            "Hc": np.concatenate([p.Hc for p in preps] + [np.empty((0, 3))]),
            "edofs": np.concatenate([np.ascontiguousarray(sc.edofs, dtype=np.int64)
                                     for _, _, sc in self.groups]
                                    + [np.empty((0, 6), np.int64)]),
            "slot": np.concatenate([np.asarray(sc.slot, dtype=np.int64)
                                    for _, _, sc in self.groups] + [np.empty(0, np.int64)]),
            "kind": np.ascontiguousarray(dm.kind_index, dtype=np.int64),
            "n_free": dm.n_free, "lever": float(step._model_size()),
            "ud_none": np.empty((0, 2, 2)), "pattern": (self.consistent or {}).get(
                "pattern", np.zeros((4, 4))),
            "free_node": free_node, "free_slot": free_slot}
        return self._step
