"""Linear buckling about a reference state: ``(K_0 + lam K_D) phi = 0``.

``K_0`` is the full tangent at the step's initial state (material and geometric, with whatever
stresses earlier steps left). The step's loads are the reference (perturbation) load ``P``; a linear
solve ``K_0 du = P`` gives the stress increments ``ds`` of every element, and ``K_D`` is the
geometric stiffness of ``ds`` at the reference geometry plus the load stiffness of ``P``
(non-symmetric for follower and axial moments). Pre-buckling displacements are neglected (the
classical eigenvalue buckling of, e.g., Meijaard 1993, section 3, and of Abaqus ``*BUCKLE``).

By default the eigenproblem is bordered by the interior (bubble) modes of the beams
(:mod:`fem.elements.beam.interior`, numbered as element-internal unknowns by :mod:`fem.dofs`): a
larger Ritz space for the buckling mode only, on the same pre-buckling stresses, so that buckling
loads converge faster with the mesh.
``interior_modes = False`` gives the eigenvalues of the nodal discretization itself, the
bifurcation loads that a nonlinear analysis of the same mesh meets.

The eigenproblem ``(-K_D) phi = nu K_0 phi`` with ``nu = 1 / lam`` goes to the eigen front-end
(:func:`fem.solvers.eigen.general`: LAPACK up to :data:`fem.solvers.eigen.DENSE_LIMIT` unknowns,
SLEPc's Krylov-Schur above, or the block Lanczos in the buckling transformation), so the lowest
positive buckling factors are the largest real ``nu``; real eigenvalues only are reported (a
non-conservative load can leave none: no divergence-type instability).

Eigenvalues ``nu`` within round-off of zero are discarded: ``nu <= 1000 eps max|nu|`` (the
largest magnitude over the pencil) cannot be told from zero, and its ``1 / nu`` (about ``1e16``
for a column pulled instead of pushed) is noise, not a buckling load. A step with no mode left says
so (a warning: no buckling mode below the largest resolvable factor, and the factor at which the
reversed load buckles the structure, if it does); the results file then gets zero modes.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np

from fem import interrupt, linalg, mpi
from fem.analysis.base import StepBase
from fem.analysis.settings import MAX_MODES, OneVariant, setting
from fem.errors import ConvergenceError, DeckError, ModelError
from fem.solvers import eigen
from fem.solvers.linear_system import distributed_requested, note_serial

log = logging.getLogger(__name__)


@dataclass
class BucklingSettings(OneVariant):
    """Settings of a buckling step: the deck keys of ``[[steps]]`` with ``type = "buckling"``."""

    modes: int = setting("int", 4, "number of buckling modes", positive=True, maximum=MAX_MODES)
    interior_modes: bool = setting("bool", True, "add interior (bubble) modes to each beam for "
                                   "the buckling mode, so that loads converge faster with the "
                                   "mesh; false gives the eigenvalues of the nodal "
                                   "discretization (see Linear buckling)")
    method: str = setting("str", "auto", "eigen-solver: auto (LAPACK up to 400 unknowns, else "
                          "SLEPc's Krylov-Schur) or the project's block Lanczos in the buckling "
                          "transformation (symmetric problems without joints)",
                          choices=("auto", "lanczos"))


class BucklingStep(StepBase):
    """Eigenvalue buckling; see the module docstring."""

    step_type = "buckling"
    Settings = BucklingSettings
    WRITES = ("modes",)

    @classmethod
    def requires(cls, values: dict) -> list[tuple[str, str, str]]:
        """A stiffness split into its material and geometric parts."""
        return [*super().requires(values),
                ("geometric_stiffness", "type", 'type = "buckling"')]

    @classmethod
    def check(cls, entry, inputs, spec: dict) -> BucklingSettings:
        """The settings of a buckling step, which needs a reference load."""
        if not spec["loads"]:
            raise DeckError(f"{entry.where}.loads", "a buckling step needs a reference load")
        return super().check(entry, inputs, spec)

    def __init__(self, name, system, loads, settings: BucklingSettings | None = None,
                 solver_options=None):
        super().__init__(name, system, loads, solver_options)
        self.settings = settings = settings or BucklingSettings()
        self.modes = settings.modes
        self.interior_modes = settings.interior_modes and any(
            g.n_internal for g in system.model.groups)
        self.n_interior = 0                # interior unknowns the step added (0 if none)
        self.factors = np.zeros(0)
        self.shapes = np.zeros((0,))

    def matrices(self, state):
        """CSR values of ``K_0`` and ``K_D`` about ``state`` (used by tests, too)."""
        sysm = self.system
        self.loads.begin(state)
        k0 = sysm.tangent(state, self.loads.stiffness(state, 0.0, "held"))
        self.linear.tangent_data = k0
        linalg.fill_matrix(self.A, sysm.assembler.indptr, sysm.assembler.indices, k0)
        n = sysm.n_free
        P = self.system.dofmap.from_nodal(self.loads.pattern(state))
        try:
            du = linalg.solve(self.ksp, P[:n])
        except linalg.SingularMatrixError:
            raise self.mechanism_error() from None
        ds = sysm.stress_rates(state, self.free_to_nodal(du))
        self._stress_rates = ds
        kd = sysm.geometric_stiffness(state, ds, self.loads.stiffness(state, 0.0, "pattern"))
        return k0, kd

    def operators(self, state):
        """``K_0`` and ``K_D`` as scipy CSR matrices, with the beams' interior modes if enabled.

        The interior modes are element-internal unknowns of a second numbering of the model
        (:class:`~fem.system.System` with ``internal=True``): each beam's block holds its nodal
        matrix, its couplings with its interior modes and theirs (``interior_stiffness``: the
        geometric part of the stresses and, for ``K_0``, the elastic one), and the ordinary
        assembler places them. The pre-buckling stresses come from the nodal system: the
        interior modes are orthogonal to the nodal ones in the elastic energy.
        """
        sysm = self.system
        k0, kd = self.matrices(state)
        if not self.interior_modes:
            K0, KD = sysm.assembler.to_scipy(k0), sysm.assembler.to_scipy(kd)
        else:
            from fem.system import System

            inner = System(sysm.model, internal=True,
                           constraint_scales=sysm.constraint_scales)
            self.inner = inner
            blocks = inner.dofmap.blocks["internal"]
            self.n_interior = blocks.stop - blocks.start
            s0 = [g.stress(state) for g in sysm.model.groups]
            loads = self.loads
            K0 = inner.assembler.to_scipy(inner.assembler.matrix(
                self._blocks(state, s0, material=True), loads.stiffness(state, 0.0, "held"),
                constraints=inner._constraints(state, "tangent")))
            KD = inner.assembler.to_scipy(inner.assembler.matrix(
                self._blocks(state, self._stress_rates, material=False),
                loads.stiffness(state, 0.0, "pattern")))
        if not np.any(KD.data):
            raise ModelError(f"step '{self.name}': the reference load causes no geometric "
                             "stiffness (no element is stressed by it)")
        return K0, KD

    def _blocks(self, state, stresses: list, material: bool) -> list:
        """Each group's ``(E, nd + ni, nd + ni)`` block for the stresses (``material``: K_0)."""
        out = []
        for g, s in zip(self.system.model.groups, stresses, strict=True):
            nodal = g.tangent(state) if material else g.geometric_stiffness(state, s)
            ni = g.n_internal
            if not ni:
                out.append(nodal)
                continue
            C, Kaa = g.interior_stiffness(state, s, material)
            E, nd = nodal.shape[:2]
            full = np.zeros((E, nd + ni, nd + ni))
            full[:, :nd, :nd] = nodal
            full[:, :nd, nd:] = C
            full[:, nd:, :nd] = np.swapaxes(C, 1, 2)
            full[:, nd:, nd:] = Kaa
            out.append(full)
        return out

    def run(self, state, results):
        """Compute the buckling factors and modes; ``state`` is not changed."""
        self.open_solver()
        try:
            operators = self.operators(state)
            interrupt.check()
            factors, vectors = self._solve(*operators)
            interrupt.check()
        finally:
            self.close()
        n_nodes, ns = self.system.model.n_nodes, self.system.model.nslots
        shapes = np.zeros((len(factors), n_nodes, ns))
        for i, v in enumerate(vectors):
            nodal = self.system.dofmap.to_nodal(v[:self.system.n_free])
            peak = np.abs(nodal).max()      # zero for a mode inside one element between supports
            shapes[i] = nodal / peak if peak > 0 else nodal
        self.factors, self.shapes = factors, shapes
        if results is not None:
            self.xdmf = results.write_modes(self.name, "buckling", factors, shapes,
                                            attrs={"quantity": "load factor",
                                                   "interior_modes": int(self.interior_modes)})
        return state

    def summary(self) -> list[str]:
        """The load factors found (or that none was), and the interior unknowns added."""
        lines = [f"mode {i + 1}: load factor {lam:.6g}" for i, lam in enumerate(self.factors)]
        if len(self.factors) == 0 and not self.warnings:
            lines.append("no real positive buckling factor")
        if self.interior_modes:
            lines.append(f"with the beams' interior modes: {self.n_interior} "
                         f"unknowns besides the {self.system.n_free} nodal ones")
        return lines

    def _solve(self, K0, KD):
        """Lowest positive factors of ``(K0 + lam KD) phi = 0`` (scipy CSR matrices).

        Solved as ``(-K_D) phi = nu K_0 phi`` (:func:`fem.solvers.eigen.general`); values of
        ``nu`` within round-off of the pencil's largest magnitude are no buckling modes.
        """
        what = f"step '{self.name}': the buckling eigen-solve"
        if self.settings.method == "lanczos":
            pairs = self._lanczos(K0, KD)
        else:
            method = "dense" if K0.shape[0] <= eigen.DENSE_LIMIT else "slepc"
            pairs = eigen.general(-KD, K0, self.modes, method=method, prefix=self.prefix,
                                  what=what, distributed=self._distributed_eigen(method))
        nu, vecs = pairs.values, list(pairs.vectors.T)
        symmetric = eigen.is_symmetric(KD, 1e-10) and eigen.is_symmetric(K0, 1e-10)
        floor = ROUND_OFF * pairs.scale
        real = np.isfinite(nu) & (np.abs(nu.imag) <= 1e-8 * np.maximum(np.abs(nu.real), 1e-300))
        keep = real & (nu.real > floor)
        lam = 1.0 / nu.real[keep]
        vecs = [np.real(v) for v, k in zip(vecs, keep, strict=True) if k]
        order = np.argsort(lam)[: self.modes]
        if len(order) == 0:
            reverse = real & (nu.real < -floor)
            self.warn(f"no buckling mode below load factor {1 / floor if floor > 0 else np.inf:.2g}"
                      ": the reference load does not make the structure unstable (larger "
                      "factors are round-off)"
                      + (f"; reversed, it buckles at load factor {1 / nu.real[reverse].min():.6g}"
                         if reverse.any() else "")
                      + ("" if symmetric else "; a non-conservative load may lose stability by "
                         "flutter, which a buckling step does not find"))
        return lam[order], [vecs[i] for i in order]

    def _distributed_eigen(self, method: str) -> bool:
        """Whether the eigen-solve runs on the ranks of the distributed solve (issue 31, stage 7).

        Under ``-fem_distributed_solve``: SLEPc's EPS on MPIAIJ matrices (``K_0`` factored by
        MUMPS across the ranks), or the project's Lanczos with ``K_0`` factored so and its
        vectors whole on every rank; the dense method (LAPACK, small models) runs on every rank.
        The log says which.
        """
        if method == "dense":
            note_serial(f"step '{self.name}': the buckling eigen-solve (LAPACK)")
            return False
        if not distributed_requested():
            return False
        log.info("step '%s': the buckling eigen-solve (%s) on %d ranks, K_0 factored across "
                 "them (MUMPS)", self.name, method, mpi.size())
        return True

    def _lanczos(self, K0, KD) -> eigen.Eigenpairs:
        """The factors of smallest magnitude by the project's block Lanczos, as ``nu = 1/lam``.

        ``K_0 x = lam (-K_D) x`` with ``OP = K_0^{-1} (-K_D)``, symmetric in the ``K_0`` inner
        product (:func:`fem.solvers.eigen.general` with ``method = "lanczos"``): ``K_0`` must be
        positive definite (no joints or ties, whose multiplier rows make it a saddle point; a
        stable reference state) and ``K_D`` symmetric (conservative loads). ``2 modes + 2``
        pairs of either sign are sought; the scale of the round-off floor is the largest
        ``|nu|`` found, which is the pencil's (the Lanczos finds the largest ``|theta|`` first).
        """
        where = f"step '{self.name}': method = \"lanczos\""
        if self.system.model.constraints:
            raise ModelError(f"{where} needs a model without joints or ties (their multipliers "
                             "make K_0 indefinite); use method = \"auto\"")
        if not (eigen.is_symmetric(K0, 1e-10) and eigen.is_symmetric(KD, 1e-10)):
            raise ModelError(f"{where} needs a symmetric problem (a follower or axial moment "
                             "load makes it non-symmetric); use method = \"auto\"")
        try:
            return eigen.general(-KD, K0, min(2 * self.modes + 2, K0.shape[0]),
                                 method="lanczos", prefix=self.prefix,
                                 options=self.solver_options, what=where,
                                 distributed=self._distributed_eigen("lanczos"))
        except ConvergenceError as err:
            raise ConvergenceError(f"{where}: {err} (is the reference state stable, K_0 "
                                   "positive definite?)") from None


ROUND_OFF = 1e3 * np.finfo(float).eps   # |nu| below this times the largest is indistinguishable
