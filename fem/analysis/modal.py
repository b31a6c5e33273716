"""Natural frequencies and modes about the current state: ``K_t phi = omega^2 M phi``.

``K_t`` is the full tangent at the step's initial state (material and geometric, with the
stresses and follower loads earlier steps left: a preloaded structure gives its loaded
frequencies; supports and joints as in every step, joints through their multipliers, whose rows
carry no mass). ``M`` is the mass the dynamic steps integrate (``mass = "lumped"``, the default:
one mass for modal analysis and dynamics) or the consistent one.

Three eigen-solvers, one answer, all through the eigen front-end
(:func:`fem.solvers.eigen.symmetric`: values the Rayleigh quotients of their vectors, checked
by their backward errors, multiplicities verified, mode signs normalized, the tests hold them to
1e-8 of each other):

* ``method = "lanczos"`` (the default): the project's shift-invert block Lanczos
  (:func:`fem.solvers.eigen.lanczos.lanczos`), ``K - sigma M`` factored once by the step's direct
  solver (MUMPS ``L D L^T`` by default, the step's PETSc options), each block one
  multi-right-hand-side solve (:func:`fem.linalg.solve_block`); it needs no SLEPc, and on the
  benchmark lattice of 1e5 DOFs it took (with its factorization) 0.8 of SLEPc's time
  (``benchmarks/modal.py``, docs/performance.md);
* ``method = "slepc"``: SLEPc's Krylov-Schur with the shift-and-invert spectral transformation on
  the same factorization;
* ``method = "dense"``: every pair by LAPACK (at most :data:`DENSE_LIMIT` unknowns), the
  cross-check.

Constraints (joints, ties) stay as Lagrange multipliers: ``K`` is the saddle point
``[[K_t, G^T], [G, 0]]`` and ``M`` has no mass on the multiplier rows, which shift-invert
handles as it is (the infinite eigenvalues of the multiplier rows map to ``theta = 0``) and the
dense solve condenses; the modes satisfy ``G phi = 0``.

The shift: ``shift`` when given (one at an eigenvalue, such as ``0`` for a free structure, is a
deck error naming the key); else ``0`` when ``K`` is regular, and when it is singular (a free
structure: rigid-body modes) one chosen from the spectrum's scale by a short Lanczos pilot
(:mod:`fem.solvers.eigen.front`): near the first elastic ``omega^2``, below the rigid modes'
round-off, so that every method returns every rigid mode first. Asking more modes than the model
has (its unknowns with mass, less the constraints on them) returns those it has, with a warning.

Written to ``/modes/<step>/``: ``eigenvalues`` (omega^2), ``frequencies`` (rad/s), ``hertz``,
``shapes`` (``M``-normalized, nodal), ``modal_mass`` (of each shape scaled to a largest nodal
translation or rotation of 1), ``participation`` ``(m, 6)`` (``phi^T M r_d`` for unit rigid
translations ``x, y, z`` and rotations about the global axes through the origin),
``effective_mass`` ``(m, 6)`` (their squares: summed over all modes, the mass each rigid motion
moves), ``backward_error`` (of the original problem, per pair) and, in a damped model
(Rayleigh damping, dampers: groups with a damping matrix ``C``), ``damping_ratios``
(``phi^T C phi / (2 omega)``: ``alpha / (2 omega) + beta omega / 2`` for Rayleigh damping).
ParaView: the shapes in ``<out>_<step>_modes.xdmf`` (each mode named ``mode i: f Hz``, its
frequency in Hz as "time"), and ``<out>_<step>_vibration.xdmf``, every mode vibrating
through one period in 20 frames (:func:`fem.io.paraview_modes.write_vibration`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from fem import interrupt, mpi
from fem.analysis.base import StepBase
from fem.analysis.settings import MAX_MODES, OneVariant, mass_setting, setting, where_setting
from fem.errors import DeckError, ModelError
from fem.solvers import eigen

log = logging.getLogger(__name__)

TOLERANCE = 1e-10          # relative residual of OP at which a Ritz pair is accepted
DENSE_LIMIT = 3000         # unknowns of method = "dense"


@dataclass
class ModalSettings(OneVariant):
    """Settings of a modal step: the deck keys of ``[[steps]]`` with ``type = "modal"``."""

    modes: int = setting("int", 10, "number of modes (the lowest, or the nearest the shift)",
                         positive=True, maximum=MAX_MODES)
    method: str = setting("str", "lanczos", "eigen-solver: the project's shift-invert block "
                          "Lanczos (the default: multi-right-hand-side solves, no SLEPc "
                          "needed), SLEPc's Krylov-Schur, or every pair by LAPACK (dense, "
                          f"at most {DENSE_LIMIT} unknowns); the same pairs, each verified on "
                          "K x = omega^2 M x", choices=("lanczos", "slepc", "dense"))
    shift: float = setting("float", None, "shift sigma (omega^2 units): the modes nearest it "
                           "(not at an eigenvalue); default 0, or for a free structure one "
                           "below its rigid-body modes chosen from the spectrum's scale")
    mass: str = mass_setting()

    where: str = where_setting()          # the step entry, for messages


class ModalStep(StepBase):
    """Natural frequencies and modes; see the module docstring."""

    step_type = "modal"
    Settings = ModalSettings
    NO_LOADS = "it linearizes about the state the steps before it left, with their loads on"
    WRITES = ("modes", "vibration")
    NEEDS = ("mass",)            # a stiffness and a mass from every group

    @classmethod
    def check(cls, entry, inputs, spec: dict) -> ModalSettings:
        """The settings of a modal step, which name it in their messages."""
        s = super().check(entry, inputs, spec)
        s.where = entry.where
        return s

    def __init__(self, name, system, loads, settings: ModalSettings | None = None,
                 solver_options=None):
        super().__init__(name, system, loads, solver_options)
        self.settings = settings or ModalSettings()
        self.pairs: eigen.Eigenpairs | None = None
        self.sigma = 0.0
        self.shapes = np.zeros((0,))
        self.zeta: NDArray | None = None
        self.xdmf = None

    # --- matrices -----------------------------------------------------------------------------
    def matrices(self, state):
        """``K_t`` and ``M`` as scipy CSR matrices on the unknowns."""
        sysm = self.system
        self.loads.begin(state)
        K = sysm.assembler.to_scipy(sysm.tangent(state, self.loads.stiffness(state, 0.0, "held")))
        M = sysm.assembler.to_scipy(sysm.mass(state, lumped=self.settings.mass == "lumped"))
        return K.tocsr(), M.tocsr()

    # --- the eigen-solve ----------------------------------------------------------------------
    def solve_modes(self, K, M) -> eigen.Eigenpairs:
        """The step's eigenpairs of ``K`` and ``M`` (scipy CSR on the unknowns)."""
        st = self.settings
        if eigen.massive(M) == 0:
            raise ModelError(f"step '{self.name}': the model has no mass: give the materials a "
                             "density, the sections mass_per_length, or add [[masses]] (a modal "
                             "step needs the mass matrix)")
        if st.method == "dense" and K.shape[0] > DENSE_LIMIT:
            raise ModelError(f"step '{self.name}': method = \"dense\" is for models of at most "
                             f"{DENSE_LIMIT} unknowns ({K.shape[0]} here); use \"lanczos\"")
        interrupt.check()
        distributed = self.distributed_eigen(st.method)
        try:
            pairs = eigen.symmetric(K, M, st.modes, st.shift, method=st.method,
                                    prefix=self.prefix, options=self.solver_options,
                                    tol=TOLERANCE, what=f"step '{self.name}'",
                                    distributed=distributed)
        except eigen.SingularShift as err:
            raise DeckError(f"{st.where}.shift", f"{err}; leave shift out (a free structure's "
                            "modes are then found with a shift chosen below its rigid-body "
                            "modes) or give one away from the eigenvalues") from None
        self.sigma = float(pairs.shift)
        if pairs.note:
            self.warn(f"modes = {st.modes}: {pairs.note}; all {pairs.found} are written")
        return pairs

    def distributed_eigen(self, method: str) -> bool:
        """Whether the factorizations of ``K - sigma M`` are made across the ranks.

        Under ``-fem_distributed_solve`` (issue 31, stage 7; :mod:`fem.solvers.linear_system`):
        each is one MPI matrix factored by MUMPS across the ranks
        (:class:`fem.solvers.eigen.Factorization`), for ``method = "slepc"`` and for the
        project's Lanczos alike. SLEPc's Krylov-Schur then runs on MPIAIJ ``K`` and ``M``, its
        Krylov vectors distributed (:mod:`fem.solvers.eigen.slepc`); the project's Lanczos keeps
        its vectors whole on every rank (they cost ``n`` times the block, the factorization
        grows faster). The front-end's checks and the modes are whole on every rank, in the
        serial numbering, the serial ones to the solves' rounding. ``method = "dense"``
        (LAPACK) runs replicated. The log says which.
        """
        from fem.solvers.linear_system import distributed_requested

        if not distributed_requested():
            return False
        if method == "dense":
            log.info("step '%s': method = \"dense\" runs on every rank (LAPACK is serial); the "
                     "distributed solve is not used", self.name)
            return False
        log.info("step '%s': K - sigma M factored across %d ranks (MUMPS); %s", self.name,
                 mpi.size(), "SLEPc's Krylov-Schur on the distributed K and M"
                 if method == "slepc" else "the Lanczos vectors whole on every rank")
        return True

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
        peak = np.abs(X[nodal]).max(axis=0, initial=0.0) if X.shape[1] else np.zeros(0)
        omega2 = pairs.values
        zeta = self.damping_ratios(state, M, X)
        self.zeta = zeta
        extra = {} if zeta is None else {"damping_ratios": zeta}
        if results is not None:
            self.xdmf = results.write_modes(
                self.name, "modal", omega2, shapes,
                attrs={"quantity": "omega^2", "method": pairs.method, "shift": self.sigma,
                       "mass": self.settings.mass},
                extra={"frequencies": self.frequencies(), "hertz": self.frequencies() / (2 * np.pi),
                       "modal_mass": 1.0 / np.maximum(peak, 1e-300) ** 2,
                       "participation": gamma, "effective_mass": gamma**2,
                       "backward_error": pairs.residuals, **extra},
                labels=[f"mode {i + 1}: {f:.6g} Hz" for i, f in
                        enumerate(self.frequencies() / (2 * np.pi))],
                times=self.frequencies() / (2 * np.pi), vibration=True)
        return state

    def damping_ratios(self, state, M, X) -> NDArray | None:
        """(m,) each mode's damping ratio ``phi^T C phi / (2 omega phi^T M phi)``, or None.

        ``C`` the element groups' damping matrices (capability ``"damping"``: Rayleigh damping,
        dampers) at ``state``; for Rayleigh damping ``C = alpha M + beta K`` this is
        ``alpha / (2 omega) + beta omega / 2`` (Clough & Penzien 1993, eq. 12-41); for other
        damping, the modal (diagonal) approximation of the non-proportional damping.
        """
        groups = self.system.model.groups
        if not any("damping" in g.capabilities for g in groups) or not X.shape[1]:
            return None
        asm = self.system.assembler
        C = asm.to_scipy(asm.matrix([g.damping(state) if "damping" in g.capabilities else None
                                     for g in groups])).tocsr()
        w = self.frequencies()
        num = np.einsum("ij,ij->j", X, C @ X)
        den = 2 * w * np.einsum("ij,ij->j", X, M @ X)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(w > 0, num / den, np.nan)

    def frequencies(self) -> NDArray:
        """(m,) circular frequencies ``sqrt(omega^2)``.

        A negative ``omega^2`` (an unstable state) gives ``-sqrt(-omega^2)``.
        """
        w2 = self.pairs.values if self.pairs is not None else np.zeros(0)
        return np.sign(w2) * np.sqrt(np.abs(w2))

    def summary(self) -> list[str]:
        """The frequencies of the modes, rad/s and Hz (and damping ratios, when damped)."""
        w = self.frequencies()
        zeta = self.zeta
        return [f"mode {i + 1}: {wi:.6g} rad/s ({hz:.6g} Hz)"
                + (f", damping ratio {zeta[i]:.6g}" if zeta is not None else "")
                for i, (wi, hz) in enumerate(zip(w, w / (2 * np.pi), strict=True))]

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
