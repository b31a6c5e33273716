"""Natural frequencies and modes about the current state: ``K_t phi = omega^2 M phi``.

``K_t`` is the full tangent at the step's initial state (material and geometric, with the
stresses and follower loads earlier steps left: a preloaded structure gives its loaded
frequencies; supports and joints as in every step, joints through their multipliers, whose rows
carry no mass). ``M`` is the mass the dynamic steps integrate (``mass = "lumped"``, the default:
one mass for modal analysis and dynamics) or the consistent one.

Two eigen-solvers, one answer (the tests hold them to 1e-8):

* ``method = "lanczos"`` (the default): the project's shift-invert block Lanczos
  (:func:`fem.solvers.eigen.lanczos.lanczos`), ``K - sigma M`` factored once by the step's direct
  solver (MUMPS by default, the step's PETSc options), each block one multi-right-hand-side
  solve (:func:`fem.linalg.solve_block`); every pair it returns is verified on the original
  problem, it needs no SLEPc, and on the benchmark lattice of 1e5 DOFs it took (with its
  factorization) 0.8 of SLEPc's time, both factoring ``L D L^T`` (``benchmarks/modal.py``,
  README "Performance");
* ``method = "slepc"``: SLEPc's Krylov-Schur with the shift-and-invert spectral transformation on
  the same factorization package.

Constraints (joints, ties) stay as Lagrange multipliers: ``K`` is the saddle point
``[[K_t, G^T], [G, 0]]`` and ``M`` has no mass on the multiplier rows, which shift-invert
handles as it is (the infinite eigenvalues of the multiplier rows map to ``theta = 0``); the
modes satisfy ``G phi = 0``.

The shift: ``shift`` when given; else ``0`` when ``K`` is regular, and when it is singular (a free
structure: rigid-body modes) a negative shift of ``1e-6`` of the largest ``K_ii / M_ii``, so that
the rigid-body modes come out at ``omega^2 ~ 0`` first.

Written to ``/modes/<step>/``: ``eigenvalues`` (omega^2), ``frequencies`` (rad/s), ``hertz``,
``shapes`` (``M``-normalized, nodal), ``modal_mass`` (of each shape scaled to a largest nodal
translation or rotation of 1), ``participation`` ``(m, 6)`` (``phi^T M r_d`` for unit rigid
translations ``x, y, z`` and rotations about the global axes through the origin),
``effective_mass`` ``(m, 6)`` (their squares: summed over all modes, the mass each rigid motion
moves) and ``backward_error`` (of the original problem, per pair). ParaView: the shapes in
``<out>_<step>_modes.xdmf`` (each mode named ``mode i: f Hz``, its frequency in Hz as "time"),
and ``<out>_<step>_vibration.xdmf``, every mode vibrating through one period in 20 frames
(:func:`fem.io.paraview.write_vibration`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from fem import _petsc, interrupt, linalg
from fem.analysis.base import StepBase
from fem.analysis.settings import MAX_MODES, setting
from fem.errors import ConvergenceError, ModelError
from fem.solvers.eigen.lanczos import ModalPairs, backward_errors, lanczos

log = logging.getLogger(__name__)

TOLERANCE = 1e-10          # relative residual of OP at which a Ritz pair is accepted


@dataclass
class ModalSettings:
    """Settings of a modal step: the deck keys of ``[[steps]]`` with ``type = "modal"``."""

    modes: int = setting("int", 10, "number of modes (the lowest, or the nearest the shift)",
                         positive=True, maximum=MAX_MODES)
    method: str = setting("str", "lanczos", "eigen-solver: the project's shift-invert block "
                          "Lanczos (the default: multi-right-hand-side solves, every pair "
                          "verified on K x = omega^2 M x, no SLEPc needed), or SLEPc's "
                          "Krylov-Schur (same pairs)", choices=("lanczos", "slepc"))
    shift: float = setting("float", None, "shift sigma (omega^2 units): the modes nearest it; "
                           "default 0, or slightly negative for a free structure")
    mass: str = setting("str", "lumped", "the mass matrix: the one dynamic steps integrate "
                        "(lumped nodal, with consistent beam inertia where a group asks for it) "
                        "or the consistent element masses", choices=("lumped", "consistent"))

    VARIANTS = ("",)
    REMOVES = ()

    @staticmethod
    def variant(values: dict) -> str:
        """Modal steps have one variant."""
        return ""


def is_symmetric(A, rtol: float = 1e-13) -> bool:
    """``A`` (scipy sparse) equals its transpose to ``rtol`` of its largest entry.

    Round-off of the assembly passes; a follower load's or a non-conservative term's asymmetry
    does not (it would make a symmetric factorization, which reads one triangle, wrong).
    """
    scale = abs(A).max() if A.nnz else 0.0
    D = (A - A.T).tocsr()
    return not D.nnz or abs(D).max() <= rtol * scale


class ModalStep(StepBase):
    """Natural frequencies and modes; see the module docstring."""

    step_type = "modal"
    Settings = ModalSettings

    @classmethod
    def requires(cls, values: dict) -> list[tuple[str, str, str]]:
        """A stiffness and a mass from every group."""
        return [*super().requires(values), ("mass", "type", 'type = "modal"')]

    def __init__(self, name, system, loads, settings: ModalSettings | None = None,
                 solver_options=None):
        super().__init__(name, system, loads, solver_options)
        self.settings = settings or ModalSettings()
        self.pairs: ModalPairs | None = None
        self.sigma = 0.0
        self.shapes = np.zeros((0,))
        self.xdmf = None

    # --- matrices -----------------------------------------------------------------------------
    def matrices(self, state):
        """``K_t`` and ``M`` as scipy CSR matrices on the unknowns."""
        sysm = self.system
        self.loads.begin(state)
        K = sysm.assembler.to_scipy(sysm.tangent(state, self.loads.stiffness(state, 0.0, "held")))
        M = sysm.assembler.to_scipy(sysm.mass(state, lumped=self.settings.mass == "lumped"))
        return K.tocsr(), M.tocsr()

    def _factor(self, K, M, sigma: float):
        """Fill the step's matrix with ``K - sigma M`` and return its block solve.

        A symmetric ``K - sigma M`` (no follower loads) is factored as ``L D L^T`` by MUMPS
        (:func:`fem.linalg.direct_solver`: half the factor's memory and work), else by LU.
        """
        if self.A is not None:
            self.A.destroy()
            self.ksp.destroy()
        A = (K - sigma * M).tocsr()
        self.A = linalg.matrix_from_scipy(A)
        self.A.setOptionsPrefix(self.prefix + "A_")
        self.ksp = linalg.direct_solver(self.A, self.prefix, self.solver_options,
                                        symmetric=is_symmetric(A))

        def solve(B: NDArray) -> NDArray:
            return linalg.solve_block(self.ksp, B)
        return solve

    def _shift(self, K, M) -> tuple[float, object]:
        """The shift and the solve of its factorization (module docstring)."""
        if self.settings.shift is not None:
            return self.settings.shift, self._factor(K, M, self.settings.shift)
        solve = self._factor(K, M, 0.0)
        try:
            solve(np.ones((K.shape[0], 1)))
            return 0.0, solve
        except linalg.SingularMatrixError:
            pass
        dk, dm = np.abs(K.diagonal()), np.abs(M.diagonal())
        ratio = dk[dm > 0] / dm[dm > 0]
        sigma = -1e-6 * float(ratio.max()) if len(ratio) else -1.0
        solve = self._factor(K, M, sigma)
        try:
            solve(np.ones((K.shape[0], 1)))
        except linalg.SingularMatrixError:
            raise ModelError(f"step '{self.name}': K - sigma M is singular at sigma = 0 and at "
                             f"sigma = {sigma:.3g}: a motion without stiffness has no mass either "
                             "(a free beam's twist without rotary inertia, a node with no "
                             "mass); give it inertia or a support") from None
        return sigma, solve

    # --- solvers ------------------------------------------------------------------------------
    def _slepc(self, K, M, count: int, sigma: float) -> ModalPairs:
        """SLEPc's Krylov-Schur, shift-and-invert about ``sigma``."""
        SLEPc = _petsc.SLEPc()
        A, B = linalg.matrix_from_scipy(K), linalg.matrix_from_scipy(M)
        eps = SLEPc.EPS().create(comm=A.getComm())
        try:
            eps.setOptionsPrefix(self.prefix + "eps_")
            eps.setOperators(A, B)
            eps.setProblemType(SLEPc.EPS.ProblemType.GHEP)
            eps.setType(SLEPc.EPS.Type.KRYLOVSCHUR)
            eps.setDimensions(nev=count)
            eps.setTarget(sigma)
            eps.setWhichEigenpairs(SLEPc.EPS.Which.TARGET_MAGNITUDE)
            eps.setTolerances(tol=1e-12)
            st = eps.getST()
            st.setType(SLEPc.ST.Type.SINVERT)
            st.setShift(sigma)
            ksp = st.getKSP()
            ksp.setType("preonly")
            # the factorization the own Lanczos gets (_factor): L D L^T when symmetric
            package = linalg.best_lu_package()
            symmetric = package == "mumps" and is_symmetric((K - sigma * M).tocsr())
            ksp.getPC().setType("cholesky" if symmetric else "lu")
            ksp.getPC().setFactorSolverType(package)
            eps.setFromOptions()
            eps.solve()
            vr = A.createVecRight()
            vals, vecs = [], []
            for i in range(eps.getConverged()):
                vals.append(eps.getEigenpair(i, vr).real)
                vecs.append(vr.getArray().copy())
            vr.destroy()
        except _petsc.PETSc().Error as err:
            raise ConvergenceError(f"step '{self.name}': SLEPc's eigen-solve failed (PETSc "
                                   f"error {err.ierr})") from None
        finally:
            for obj in (eps, A, B):
                obj.destroy()
        if len(vals) < count:
            raise ConvergenceError(f"step '{self.name}': SLEPc converged {len(vals)} of {count} "
                                   "modes")
        lam = np.array(vals)
        order = np.argsort(np.abs(lam - sigma), kind="stable")[:count]
        order = order[np.argsort(lam[order], kind="stable")]
        X = np.array(vecs).T[:, order]
        X = X / np.sqrt(np.einsum("ij,ij->j", X, M @ X))
        # Rayleigh quotients, as the own Lanczos gives them: SLEPc's sigma + 1 / theta carries
        # the errors of the solves (5e-8 for the lowest mode of a slender 3D cantilever, whose
        # vector's quotient is good to 1e-9)
        omega2 = np.einsum("ij,ij->j", X, K @ X)
        return ModalPairs(omega2, X, backward_errors(K, M, omega2, X), "slepc", 0)

    def solve_modes(self, K, M) -> ModalPairs:
        """The step's eigenpairs of ``K`` and ``M`` (scipy CSR on the unknowns)."""
        massive = int(np.count_nonzero(M.diagonal()))
        if massive == 0:
            raise ModelError(f"step '{self.name}': the model has no mass: give the materials a "
                             "density, the sections mass_per_length, or add [[masses]] (a modal "
                             "step needs the mass matrix)")
        # finite modes: at most one per DOF with mass (massless DOFs give infinite eigenvalues)
        count = min(self.settings.modes, massive)
        sigma, solve = self._shift(K, M)
        self.sigma = sigma
        interrupt.check()
        if self.settings.method == "slepc":
            return self._slepc(K, M, count, sigma)
        try:
            return lanczos(K, M, count, sigma, solve, tol=TOLERANCE)
        except ConvergenceError as err:
            raise ConvergenceError(f"step '{self.name}': {err}") from None

    # --- the step -----------------------------------------------------------------------------
    def run(self, state, results):
        """Compute the modes about ``state`` (not changed) and write them."""
        try:
            K, M = self.matrices(state)
            pairs = self.solve_modes(K, M)
        finally:
            self.close()
        self.pairs = pairs
        sysm, model = self.system, self.system.model
        nodal = sysm.dofmap.blocks["nodal"]
        X = pairs.vectors
        shapes = np.stack([sysm.dofmap.to_nodal(X[:sysm.n_free, i]) for i in range(X.shape[1])]) \
            if X.shape[1] else np.zeros((0, model.n_nodes, model.nslots))
        self.shapes = shapes
        R = self.rigid_motions()
        MX = M @ X
        gamma = (R.T @ MX[: R.shape[0]]).T if X.shape[1] else np.zeros((0, 6))   # (m, 6)
        peak = np.abs(X[nodal]).max(axis=0) if X.shape[1] else np.zeros(0)
        omega2 = pairs.omega2
        if results is not None:
            self.xdmf = results.write_modes(
                self.name, "modal", omega2, shapes,
                attrs={"quantity": "omega^2", "method": pairs.method, "shift": self.sigma,
                       "mass": self.settings.mass},
                extra={"frequencies": self.frequencies(), "hertz": self.frequencies() / (2 * np.pi),
                       "modal_mass": 1.0 / np.maximum(peak, 1e-300) ** 2,
                       "participation": gamma, "effective_mass": gamma**2,
                       "backward_error": pairs.backward_errors},
                labels=[f"mode {i + 1}: {f:.6g} Hz" for i, f in
                        enumerate(self.frequencies() / (2 * np.pi))],
                times=self.frequencies() / (2 * np.pi), vibration=True)
        return state

    def frequencies(self) -> NDArray:
        """(m,) circular frequencies ``sqrt(omega^2)``.

        A negative ``omega^2`` (an unstable state) gives ``-sqrt(-omega^2)``.
        """
        w2 = self.pairs.omega2 if self.pairs is not None else np.zeros(0)
        return np.sign(w2) * np.sqrt(np.abs(w2))

    def rigid_motions(self) -> NDArray:
        """``(n_nodal, 6)`` unit rigid translations and rotations about the origin.

        On the free nodal DOFs (2D: ``x, y`` and the rotation about ``z``; the other columns
        zero).
        """
        sysm, model = self.system, self.system.model
        X = model.X
        d = model.dim
        cols = np.zeros((model.n_nodes, model.nslots, 6))
        for k in range(d):
            cols[:, k, k] = 1.0
        if d == 2:
            cols[:, 0, 5], cols[:, 1, 5], cols[:, 2, 5] = -X[:, 1], X[:, 0], 1.0
        else:
            for k in range(3):
                e = np.zeros(3)
                e[k] = 1.0
                cols[:, :3, 3 + k] = np.cross(e, X)
                cols[:, 3 + k, 3 + k] = 1.0
        nodal = sysm.dofmap.blocks["nodal"]
        return np.stack([sysm.dofmap.from_nodal(cols[:, :, j])[nodal] for j in range(6)], axis=1)
