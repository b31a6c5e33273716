"""The Newmark family: the trapezoidal rule and Chung & Hulbert's generalized-alpha method.

Equilibrium is enforced at interpolated times (Chung & Hulbert 1993, J. Appl. Mech. 60, eqs.
10-12)::

    (1 - alpha_m) M a_n+1 + alpha_m M a_n
        + (1 - alpha_f) (f_int - f_ext)_n+1 + alpha_f (f_int - f_ext)_n = 0

with Newmark's updates for ``beta``, ``gamma``. Given the spectral radius at infinite frequency
``rho_inf`` in ``[0, 1]``: ``alpha_m = (2 rho - 1)/(rho + 1)``, ``alpha_f = rho/(rho + 1)``,
``gamma = 1/2 - alpha_m + alpha_f``, ``beta = (1 - alpha_m + alpha_f)^2 / 4``. The trapezoidal rule
(average acceleration, Newmark ``beta = 1/4``, ``gamma = 1/2``) is ``alpha_m = alpha_f = 0``: the
"conventional procedure" of Crisfield & Shi (eqs. 1-3), which gains energy in rotating members in
tension. 3D nodal rotations use the material (body) description of Simo & Vu-Quoc (1988).
"""

from __future__ import annotations

import numpy as np

from fem.integrators.base import Integrator, newmark_rates


class GeneralizedAlpha(Integrator):
    """Generalized-alpha (and, with ``alpha_m = alpha_f = 0``, Newmark's trapezoidal rule)."""

    name = "generalized_alpha"
    family = "newmark"
    _planar = False           # compiled time steps of planar beam models: None if not taken

    def __init__(self, system, inertia, loads, h, rho_inf: float = 0.8):
        super().__init__(system, inertia, loads, h)
        r = float(rho_inf)
        self.rho_inf = r
        self.alpha_m = (2 * r - 1) / (r + 1)
        self.alpha_f = r / (r + 1)
        self.gamma = 0.5 - self.alpha_m + self.alpha_f
        self.beta = 0.25 * (1 - self.alpha_m + self.alpha_f) ** 2

    def begin(self, s0) -> None:
        """Initial accelerations from equilibrium: ``M a0 = f_ext - f_int`` (lumped M).

        The nodes' diagonal estimate; with superelements the full system, ``eta`` included
        (:meth:`_consistent_accelerations`).
        """
        sysm = self.system
        dm = sysm.dofmap
        r = sysm.internal_force(s0) - self.external_full(s0, s0.t)
        s0z = _with_zero_acc(s0)
        f_in = self.nodal.newmark_force(s0z)      # gyroscopic part only
        r = r + dm.from_nodal(f_in)
        f_x = self.element_inertia("newmark_force", s0z, tangent=False)[0]
        if f_x is not None:
            # consistent element masses: the diagonal estimate of ``m`` below (a0 approximate)
            r = r + f_x
        n = sysm.n_free
        diag = dm.from_nodal(self.inertia.diagonal())[:n]
        a = np.zeros(dm.n_active)
        with np.errstate(divide="ignore", invalid="ignore"):
            a[:n] = np.where(diag > 0, -r[:n] / diag, 0.0)
        if len(s0.internal) and self._consistent_accelerations(s0):
            return
        nodal = dm.to_nodal(a)
        if self.dim == 3:                          # body -> spatial for Lie nodes
            R = s0.rotation_matrices()
            lie = self.inertia.lie
            nodal[lie, 3:6] = np.einsum("nij,nj->ni", R, nodal[:, 3:6])[lie]
        s0.a[:] = nodal

    def _consistent_accelerations(self, s0) -> bool:
        """With superelements: ``a0`` and ``eta``'s from ``M a0 = f_ext - f_int - f_v``.

        The nodes' diagonal estimate leaves the rotations of nodes that only a superelement
        holds without acceleration and ``eta`` without any; the full system of Gauss's
        principle (:mod:`fem.constraints.handlers.consistent`, with the joints' rows) gives
        both. False where it is singular (a DOF without mass): the estimate then stands.
        """
        import scipy.sparse.linalg as spla

        from fem.constraints.handlers import consistent

        sysm = self.system
        A = sysm.assembler.to_scipy(consistent.kkt_matrix(sysm, self.inertia, s0)).tocsc()
        rhs = consistent.kkt_rhs(sysm, self.inertia, s0, self.external(s0, s0.t),
                                 self.modal_external(s0.t))
        with np.errstate(all="ignore"):
            try:
                x = spla.spsolve(A, rhs)
            except RuntimeError:            # exactly singular
                return False
        if not np.all(np.isfinite(x)) or \
                np.abs(A @ x - rhs).max() > 1e-8 * max(np.abs(rhs).max(), 1e-300):
            return False
        a, _ = consistent.split(sysm, x)
        s0.a[:] = a
        s0.internal_a[:] = x[sysm.dofmap.blocks["internal"]]
        return True

    def _cached(self, s0) -> tuple:
        """``R0``, ``W0`` of ``s0`` when :meth:`start_step` cached them, else ``(None, None)``."""
        if self.dim == 3 and self._s0 is s0:
            return self.R0, self.W0
        return None, None

    def start_step(self, s0) -> None:
        """Inertial, internal and external forces at ``t0``, once per time step.

        The internal ones by the compiled step's kernel where it takes the model
        (:meth:`fem.integrators.planar_alpha.PlanarAlphaStep.internal_force`).
        """
        super().start_step(s0)
        if self._planar is False:            # made at the first step (numba is imported then)
            from fem.integrators.planar_alpha import PlanarAlphaStep

            self._planar = PlanarAlphaStep.make(self)
        dm = self.system.dofmap
        fi0 = dm.from_nodal(self.nodal.newmark_force(s0))
        f_x = self.element_inertia("newmark_force", s0, tangent=False)[0]
        fint0 = (self.system.internal_force(s0) if self._planar is None
                 else self._planar.internal_force(s0))
        fext0 = dm.from_nodal(self.f_ext0)
        modal = self.modal_external(s0.t)                   # superelements' eta (gravity)
        self._f0 = (fi0 if f_x is None else fi0 + f_x, fint0,
                    fext0 if modal is None else fext0 + modal)

    def _end0(self, s0):
        return self._f0

    def evaluate(self, s0, s1, tangent: bool = True):
        """Full residual, its norm scale and (if asked) the CSR values of the effective tangent."""
        kin = self.kinematics(s0, s1)
        newmark_rates(self.inertia, s0, s1, kin, self.h, self.beta, self.gamma,
                      *self._cached(s0))
        dm = self.system.dofmap
        am, af = self.alpha_m, self.alpha_f
        if tangent:
            f_in1, K_in = self.nodal.newmark_force(s1, kin, self.h, self.beta, self.gamma)
            f_x, K_x = self.element_inertia("newmark_force", s1, kin, self.h, self.beta,
                                            self.gamma)
        else:
            f_in1 = self.nodal.newmark_force(s1)
            f_x, K_x = self.element_inertia("newmark_force", s1, tangent=False)
        fi1 = dm.from_nodal(f_in1)
        if f_x is not None:
            fi1 = fi1 + f_x
        fint1, K_el = self.system.evaluate(s1, tangent=tangent)
        fext1 = self.external_full(s1, s1.t)
        fi0, fint0, fext0 = self._end0(s0)
        r = ((1 - am) * fi1 + am * fi0 + (1 - af) * (fint1 - fext1) + af * (fint0 - fext0))
        scale = self.scale(fi1, fint1, fext1)
        if not tangent:
            return r, scale, None
        blocks = (1 - am) * K_in
        KL = self.load_stiffness(s1, s1.t, 1 - af)
        if KL is not None:
            blocks = blocks + KL
        ng = len(self.system.model.groups)
        K_x = [None] * ng if K_x is None else [None if k is None else (1 - am) * k for k in K_x]
        K = (1 - af) * K_el + self.system.assembler.matrix(K_x, blocks)
        # element damping (force elements, joint dampers and controllers): d f / d v1 is
        # their damping matrix times gamma / (beta h)
        C = [g.damping(s1) if "damping" in g.capabilities else None
             for g in self.system.model.groups]
        if any(c is not None for c in C):
            K = K + ((1 - af) * self.gamma / (self.beta * self.h)) * \
                self.system.assembler.matrix(C)
        return r, scale, K

    def finish(self, s0, s1) -> tuple[float, float]:
        """Rates of ``s1``; its strain energy and the step's external work (trapezoidal).

        After a compiled step (:mod:`fem.integrators.planar_alpha`) the rates are its last
        evaluation's, the same formulas at the same ``s1``.
        """
        done = None if not self._planar else self._planar.converged(s1)
        if done is not None:
            f_ext = 0.5 * (self.f_ext0 + done.external)        # external(s0), external(s1)
            return done.energy, float(np.sum(f_ext * done.inc))
        kin = self.kinematics(s0, s1)
        newmark_rates(self.inertia, s0, s1, kin, self.h, self.beta, self.gamma,
                      *self._cached(s0))
        f_ext = 0.5 * (self.external(s0, s0.t) + self.external(s1, s1.t))
        return (self.system.strain_energy(s1),
                float(np.sum(f_ext * kin.increment)) + self.modal_work(s0, s1))


    def increment(self, s0, s1):
        """The step's increment (the compiled step's own, where it converged on ``s1``)."""
        done = None if not self._planar else self._planar.converged(s1)
        return super().increment(s0, s1) if done is None else done.inc


class Trapezoidal(GeneralizedAlpha):
    """Newmark's average-acceleration (trapezoidal) rule: ``beta = 1/4``, ``gamma = 1/2``."""

    name = "trapezoidal"

    def __init__(self, system, inertia, loads, h):
        super().__init__(system, inertia, loads, h, rho_inf=1.0)
        self.alpha_m = self.alpha_f = 0.0
        self.beta, self.gamma = 0.25, 0.5


def _with_zero_acc(state):
    s = state.copy()
    s.a[:] = 0.0
    s.internal_a[:] = 0.0
    return s

