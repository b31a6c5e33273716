"""The energy-conserving step of planar beam models, evaluated in two compiled calls (issue 14).

A small model's time step is interpreter work: the flexible pendulum of
``benchmarks/small_models.py`` (100 co-rotational beams) spent about 0.2 ms of every evaluation
in some sixty small numpy calls around the element kernel (kinematics, velocities, inertia,
Cayley columns, scatter), three evaluations a step. For the models where that path reduces to
nodes and beams, :class:`PlanarStep` computes the same residual, reference and tangent with the
kernels of :mod:`fem.integrators.planar_kernel`:

* 2D, the energy-conserving integrator (:class:`fem.integrators.midpoint.EnergyConserving`);
* every element group a co-rotational 2D beam group that takes the compiled energy-conserving
  force (:mod:`fem.elements.beam.beam2d_jit`: no offsets, no interior modes), inertia nodal only
  (lumped beams, point masses);
* no joints or ties, and loads that do not turn with the structure (dead loads, gravity; any
  time function): their forces come from :meth:`~fem.integrators.base.Integrator.external`.

:meth:`PlanarStep.eligible` says which of these a model misses, from what it declares (the
groups' compiled pairs, :attr:`fem.elements.base.ElementGroup.compiled_pairs`). Anything else
keeps the general path, which stays the reference: ``tests/test_planar_step.py``
compares residuals, references and tangents of the two at random states, and whole runs. The
step's results are those of the general path to round-off (sums in another order).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from fem import linalg
from fem.kernels import Kernel

_nodes = Kernel("fem.integrators.planar_kernel", "nodes")


@dataclass
class _Evaluation:
    """The latest evaluation, kept for the Newton test's repeats and for ``finish``."""

    s0: object
    u: NDArray
    rot: NDArray
    v: NDArray
    r: NDArray
    scale: NDArray
    K: NDArray | None
    inc: NDArray
    f_ext: NDArray
    energies: list
    hist: dict


class PlanarStep:
    """Compiled evaluations of one dynamic step's planar beam model (module docstring)."""

    def __init__(self, integ, groups):
        from fem.integrators import planar_kernel as kern

        self.kern = kern
        system = integ.system
        dm = system.dofmap
        asm = system.assembler
        self.n_active, self.nnz = dm.n_active, asm.nnz
        self.index = np.ascontiguousarray(dm.index, dtype=np.int64)
        # the CSR position of each free slot's diagonal entry (-1 elsewhere)
        rows = np.full(dm.index.shape, -1, dtype=np.int64)
        free = (dm.index >= 0) & (dm.index < asm.n_free)
        rows[free] = asm.diagonal_positions()[dm.index[free]]
        self.diag_rows = rows
        nodal = integ.inertia
        self.mass = np.column_stack([nodal.m, nodal.m, nodal.I])
        self.on = np.ascontiguousarray(integ.chord_nodes())
        self.groups = [(g, g._kernel_data(), asm.groups[i]) for i, g in groups]
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
        from fem.elements.beam import beam2d_jit

        system = integ.system
        model = system.model
        for why, when in (("not a planar model", model.dim != 2),
                          ("element inertia groups", bool(integ.extras)),
                          ("joints or ties", bool(getattr(model, "constraints", ()))),
                          ("loads that turn with the structure", integ.loads.state_dependent)):
            if when:
                return why
        if not _nodes.enabled():               # numba is imported here, for a model it may take
            return "numba is not installed, or FEM_JIT = 0"
        for i, g in enumerate(model.groups):
            if not ("beam2d.conserving" in g.compiled_pairs
                    and beam2d_jit.compiled(len(g), conserving=True)):
                return (f"element group '{g.name}' ({g.type_name}) has no compiled 2D beam "
                        "energy-conserving kernel")
            if system.dofmap.internal and system.dofmap.internal[i].shape[1]:
                return f"element group '{g.name}' has element-internal unknowns"
        return None

    @classmethod
    def make(cls, integ) -> PlanarStep | None:
        """The compiled step of ``integ``'s model, or None where :meth:`eligible` says why not."""
        if cls.eligible(integ) is not None:
            return None
        return cls(integ, list(enumerate(integ.system.model.groups)))

    # --- the integrator's protocol --------------------------------------------------------------
    def evaluate(self, integ, s0, s1, tangent: bool):
        """Residual, its reference and (if asked) the tangent's CSR values at ``s1``."""
        self._iterated = None
        last = self._last
        if (last is not None and last.s0 is s0 and (last.K is not None or not tangent)
                and np.array_equal(last.u, s1.u) and np.array_equal(last.rot, s1.rot)):
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
        f_ext = 0.5 * (integ.f_ext0 + integ.external(s1, s1.t))
        fe = integ.system.dofmap.from_nodal(f_ext)
        r = f_in + f_el - fe
        scale = integ.scale(f_in, f_el, fe)
        K = K if tangent else None
        self._last = _Evaluation(s0, s1.u.copy(), s1.rot.copy(), s1.v.copy(), r, scale, K, inc,
                                 f_ext, energies, hist)
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
        work = float(np.sum(last.f_ext * last.inc))
        return float(sum(e.sum() for e in last.energies)), work

    def increment(self, integ, s0, s1) -> NDArray:
        """(n, 3) the step's increment (``psi`` in the rotation slots of Cayley nodes)."""
        return self._converged(integ, s0, s1).inc

    # --- the whole Newton loop of a time step, compiled -------------------------------------
    def iterate(self, integ, step, s0, s1) -> tuple[int, NDArray] | None:
        """Newton on the time step from ``s0`` to ``s1`` in one compiled loop, in place.

        :mod:`fem.integrators.planar_newton_kernel`: full or modified Newton as the step's
        ``newton`` says, with the step's banded LU (``step.linear.banded``). Returns the iterations
        and the residual (the reactions), with the converged evaluation kept for
        :meth:`finish` and the norms in ``step.test``; None where the step needs the general
        path (a failure to report or to cut back from): ``s1`` is then in an unspecified state
        and the caller starts again from its predictor.
        """
        from fem.integrators import planar_newton_kernel as kern
        from fem.solvers import newton

        if integ._s0 is not s0:
            integ.start_step(s0)
        h = integ.h
        if self._h != h:
            self._h, self.mass_h, self.mass_k = h, self.mass / h, self.mass * (2 / h**2)
        d = self._step or self._step_data(integ, step)
        lu, test = step.linear.banded, step.test
        settings = d.get("settings")
        if settings is None:                  # the step's test and solver constants
            settings = d["settings"] = np.array([
                test.rtol, test.atol, test.max_iterations, test.round_off,
                np.finfo(float).eps, linalg.NULL_PIVOT,
                linalg.REFINE_ABOVE, linalg.MAX_REFINEMENTS, linalg.POOR_BACKWARD_ERROR,
                step.settings.newton == "modified", newton.MODIFIED_CONTRACTION])
        f_ext = 0.5 * (integ.f_ext0 + integ.external(s1, s1.t))
        fe = integ.system.dofmap.from_nodal(f_ext)
        n, E = len(s0.u), len(d["l0"])
        inc, dpsi, um = np.empty((n, 3)), np.empty(n), np.empty((n, 3))
        r, norms = np.empty(self.n_active), np.empty(test.max_iterations + 3)
        K, reference, tangent = np.empty(self.nnz), np.empty(4), np.zeros(1, dtype=np.int64)
        energy, vh1 = np.empty(E), np.empty((E, 3))
        vh0 = (s0.history[self.groups[0][0].name]["v"] if len(self.groups) == 1 else
               np.concatenate([s0.history[g.name]["v"] for g, _, _ in self.groups]))
        status, it = kern.step(
            d["X"], s0.u, s1.u, s0.rot, s1.rot, s0.v, s1.v, self.on, self.mass_h, self.mass_k,
            2 / h, self.index, d["conn"], d["chord0"], d["l0"], d["Sc"], d["Hc"], vh0,
            d["edofs"], d["slot"], np.empty((E, 6)), np.empty((E, 6, 6)), energy, vh1,
            np.empty((E, 6)), fe, d["kind"], d["n_free"], d["lever"], d["free_node"],
            d["free_slot"], self.diag_rows, lu.indptr, lu.indices, lu.pos, lu.order, lu.ab,
            lu.kl, settings, inc, dpsi, um, r, norms, K, reference, tangent)
        if status != kern.CONVERGED:
            self._iterated = None
            return None
        test.start()
        test.norms = [float(x) for x in norms[:it + 1]]
        energies, hist, start = [], {}, 0
        for g, prep, _ in self.groups:
            stop = start + len(prep.l0)
            energies.append(energy[start:stop])
            hist[g.name] = {"v": vh1[start:stop]}
            start = stop
        self._last = _Evaluation(s0, s1.u.copy(), s1.rot.copy(), s1.v.copy(), r, reference,
                                 K if tangent[0] else None, inc, f_ext, energies, hist)
        self._iterated = s1
        return it, r

    def _step_data(self, integ, step) -> dict:
        """What the compiled time step needs besides the states, made once."""
        system = integ.system
        dm = system.dofmap
        preps = [prep for _, prep, _ in self.groups]
        free = (dm.index >= 0) & (dm.index < dm.n_free)
        nodes_, slots = np.nonzero(free)
        rows = dm.index[free]
        free_node, free_slot = np.empty(dm.n_free, np.int64), np.empty(dm.n_free, np.int64)
        free_node[rows], free_slot[rows] = nodes_, slots
        self._step = {
            "X": np.ascontiguousarray(system.model.X, dtype=float),
            "conn": np.concatenate([p.conn for p in preps]),
            "chord0": np.concatenate([p.chord0 for p in preps]),
            "l0": np.concatenate([p.l0 for p in preps]),
            "Sc": np.concatenate([p.Sc for p in preps]),
            "Hc": np.concatenate([p.Hc for p in preps]),
            "edofs": np.concatenate([np.ascontiguousarray(sc.edofs, dtype=np.int64)
                                     for _, _, sc in self.groups]),
            "slot": np.concatenate([np.asarray(sc.slot, dtype=np.int64)
                                    for _, _, sc in self.groups]),
            "kind": np.ascontiguousarray(dm.kind_index, dtype=np.int64),
            "n_free": dm.n_free, "lever": float(step._model_size()),
            "free_node": free_node, "free_slot": free_slot}
        return self._step
