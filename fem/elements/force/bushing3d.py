"""3D bushings: 6x6 stiffness and damping on the relative motion of two nodes in a local frame.

Nodes with ``ux, uy, uz, rx, ry, rz``, rotations ``R`` from the reference turned by spatial
spins (``dR = hat(dw) R``; forces on the rotation slots are spatial moments). With ``d = x_b -
x_a`` (grounded: ``d = u_b``, node ``a`` the ground at ``b``'s reference position, ``R_a = I``)
and ``F`` the 3x3 local axes (columns, given at the reference), the local deflection is::

    e = [F^T (R_a^T d - d_ref),  F^T psi],    psi = log(R_a^T R_b)        (6,)

the relative displacement of ``b`` and the rotation vector of the relative rotation, both in
the frame ``R_a F`` that turns with the first node (grounded: the fixed ``F``). ``psi`` is exact
for any relative rotation below pi (no small-rotation measure). Potential ``U = e^T K e / 2``,
generalized force ``f = B^T (K e + C e')``, ``B = de/dq`` by translations and spatial spins::

    B_t = F^T R_a^T [-I, hat(d), I, 0],   B_r = F^T jl_inv(psi) R_a^T [0, -I, 0, I]

(columns ``u_a, w_a, u_b, w_b``; ``d(log R)`` under a left perturbation ``dw`` is ``jl_inv(psi)
dw``: Bullo & Murray, Proportional derivative control on the Euclidean group, 1995, and
:func:`fem.rotations.jl_inv`), ``e' = B v`` with the spatial angular velocities. ``K``, ``C``
symmetric positive semi-definite (a diagonal is the uncoupled bushing).

* static steps and the Newmark family (``evaluate``): ``f`` at the state, the tangent
  ``B^T K B + d(B^T lambda)/dq + B^T C de'/dq`` (``lambda = K e + C e'``; the second term through
  :func:`fem.rotations.kh`, the derivative of ``jl_inv(psi)^T m``, the third through
  :func:`fem.rotations.jl_inv_derivative`), exact by spins; :meth:`damping` is ``B^T C B``;
* the energy-conserving scheme (``conserving``): the mid-point gradient ``B_m`` (at the mid-point
  configuration, which the step's rotation vector ``theta`` turns by ``theta / 2``: ``B_m dq`` is
  the derivative along the step's path at its middle) with a correction after O. Gonzalez (J.
  Nonlinear Sci. 6 (1996) 449, eq. (3.5), his discrete gradient taken in the strain space, with
  the metric ``B_m^T B_m``)::

      B_d = (I + r de_m^T / |de_m|^2) B_m,    de_m = B_m dq,  r = e_1 - e_0 - de_m

  so ``B_d dq = e_1 - e_0`` exactly (``r`` is third order in the step and vanishes with the
  deformation increment: the scheme stays second order) and the force ``B_d^T (K ebar + C de /
  h)`` does the work ``U_1 - U_0 + D`` to round-off, ``D = de^T C de / h >= 0`` booked in
  ``dissipated``: the energy is exact for the rotational part too. The force stays in the range
  of ``B_m^T``, so it is self-equilibrated at the mid-point configuration (no net force; Gonzalez's
  plain correction along ``dq`` gave a pair's momentum a drift of 4e-7). The tangent is
  ``B_d^T (K/2 + C/h) B_1`` plus the mid-point geometric
  term ``d(B_m^T lambda)/dq_m`` carried to ``s_1`` by half a translation and
  :func:`fem.rotations.half_spin`; the derivative of the correction is left out (it is of the
  order of the step's ``|de - B_m dq| / |dq|``, so Newton converges fast but not quadratically).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from fem import rotations as so3
from fem.elements.force.base import ForceElement
from fem.elements.force.bushing import Bushing

#: the slots of a node in the element vector: translations and spins
_U, _W = slice(0, 3), slice(3, 6)


def _blocks(E: int, nen: int) -> list[tuple[slice, slice]]:
    """Per node (``a``, ``b``; grounded: ``b`` alone) its translation and spin columns."""
    return [(slice(6 * k, 6 * k + 3), slice(6 * k + 3, 6 * k + 6)) for k in range(nen)]


class Bushing3D(Bushing):
    """3D bushings between two nodes, or a node and the ground (module doc).

    Parameters
    ----------
    name : group name
    conn : (E, 2) node pairs ``(a, b)``, or (E, 1) nodes tied to the ground
    X : (n, 3) reference coordinates
    dim : 3
    stiffness : (6, 6) symmetric positive semi-definite ``K`` (``ux, uy, uz, rx, ry, rz`` local)
    damping : (6, 6) ``C`` or None
    axes : (3, 3) the local axes as columns, orthonormal and right-handed (default the global)
    """

    stress_names = ("fx", "fy", "fz", "mx", "my", "mz")

    def __init__(self, name, conn, X, dim, stiffness, damping=None, axes=None):
        if dim != 3:
            raise ValueError("Bushing3D: 3D models only")
        ForceElement.__init__(self, name, conn, X, dim, dissipative=damping is not None)
        self.dof_names = ("ux", "uy", "uz", "rx", "ry", "rz")
        self.additive_rotations = False
        self.K = np.asarray(stiffness, dtype=float).reshape(6, 6)
        self.C = None if damping is None else np.asarray(damping, dtype=float).reshape(6, 6)
        self.F = np.eye(3) if axes is None else np.asarray(axes, dtype=float).reshape(3, 3)
        self.d_ref = (np.zeros((len(self), 3)) if self.nen == 1 else
                      self.X[:, 1] - self.X[:, 0])
        self.e_ref = self.d_ref @ self.F

    # --- kinematics -----------------------------------------------------------------------------
    def _frames(self, state):
        """``d (E, 3)``, ``R_a``, ``R_b`` (E, 3, 3) at ``state``."""
        R = so3.quat_to_matrix(state.rot[self.conn])
        u = state.u[self.conn]
        if self.nen == 1:
            return self.d_ref + u[:, 0], np.broadcast_to(np.eye(3), R[:, 0].shape), R[:, 0]
        return self.d_ref + u[:, 1] - u[:, 0], R[:, 0], R[:, 1]

    def _kin(self, state):
        """``d, R_a, psi, e (E, 6), B (E, 6, nd), rate (E, 6)``, ``jl_inv(psi)``."""
        d, Ra, Rb = self._frames(state)
        psi = so3.logm(np.einsum("eji,ejk->eik", Ra, Rb))
        Ji = so3.jl_inv(psi)
        e = np.concatenate([np.einsum("ij,eki,ek->ej", self.F, Ra, d) - self.e_ref,
                            psi @ self.F], axis=1)
        FRt = np.einsum("ij,eki->ejk", self.F, Ra)                 # F^T R_a^T
        FJR = np.einsum("ij,eik,elk->ejl", self.F, Ji, Ra)        # F^T jl_inv R_a^T
        B = np.zeros((len(self), 6, self.nd))
        if self.nen == 1:
            B[:, :3, _U] = FRt
            B[:, 3:, _W] = FJR
        else:
            B[:, :3, 0:3], B[:, :3, 6:9] = -FRt, FRt
            B[:, :3, 3:6] = FRt @ so3.hat(d)
            B[:, 3:, 3:6], B[:, 3:, 9:12] = -FJR, FJR
        rate = np.einsum("eij,ej->ei", B, self.element_vector(state.v))
        return d, Ra, psi, e, B, rate, Ji

    def _at(self, state):
        d, _, _, e, B, rate, _ = self._kin(state)
        return d, None, e, B, rate

    def _geometric(self, d, Ra, psi, Ji, lam) -> NDArray:
        """(E, nd, nd) ``d(B^T lambda)/dq`` at fixed ``lambda`` (module doc)."""
        E = len(self)
        g = np.einsum("eij,jk,ek->ei", Ra, self.F, lam[:, :3])      # force on b (global)
        mu = lam[:, 3:] @ self.F.T                                  # F lambda_r (a's axes)
        m = np.einsum("eij,ekj,ek->ei", Ra, Ji, mu)                 # moment on b: R_a J^-T mu
        P = np.einsum("eij,ejk,ekl,eml->eim", Ra, so3.kh(psi, mu), Ji, Ra)
        G = np.zeros((E, self.nd, self.nd))
        if self.nen == 1:
            G[:, _W, _W] = P
            return G
        hg, hm, hd = so3.hat(g), so3.hat(m), so3.hat(d)
        ua, wa, ub, wb = slice(0, 3), slice(3, 6), slice(6, 9), slice(9, 12)
        G[:, ua, wa] = hg
        G[:, ub, wa] = -hg
        G[:, wa, ua] = -hg
        G[:, wa, ub] = hg
        G[:, wa, wa] = hd @ hg + hm + P
        G[:, wa, wb] = -P
        G[:, wb, wa] = -hm - P
        G[:, wb, wb] = P
        return G

    def _rate_derivative(self, state, d, Ra, psi, Ji) -> NDArray:
        """(E, 6, nd) ``de'/dq`` at fixed velocities (module doc)."""
        E = len(self)
        v = state.v[self.conn]
        out = np.zeros((E, 6, self.nd))
        if self.nen == 1:
            DJ = so3.jl_inv_derivative(psi, v[:, 0, 3:])
            out[:, 3:, _W] = np.einsum("ij,eik,ekl->ejl", self.F, DJ, Ji)
            return out
        wa, wb = v[:, 0, 3:], v[:, 1, 3:]
        yv = v[:, 1, :3] - v[:, 0, :3] + np.cross(d, wa)
        FRt = np.einsum("ij,eki->ejk", self.F, Ra)
        ha = FRt @ so3.hat(wa)
        out[:, :3, 3:6] = FRt @ so3.hat(yv)
        out[:, :3, 6:9], out[:, :3, 0:3] = -ha, ha
        z = np.einsum("eji,ej->ei", Ra, wb - wa)
        DJ = np.einsum("ij,eik,ekl,eml->ejm", self.F, so3.jl_inv_derivative(psi, z), Ji, Ra)
        spin = np.einsum("ij,eik,elk,elm->ejm", self.F, Ji, Ra, so3.hat(wb - wa))
        out[:, 3:, 3:6] = -DJ + spin
        out[:, 3:, 9:12] = DJ
        return out

    # --- at a state -----------------------------------------------------------------------------
    def evaluate(self, state, tangent: bool = True):
        """Force ``(E, nd)`` and tangent by spins ``(E, nd, nd)`` at ``state`` (module doc)."""
        d, Ra, psi, e, B, rate, Ji = self._kin(state)
        lam = self._lam(e, rate)
        f = np.einsum("eij,ei->ej", B, lam)
        if not tangent:
            return f, None
        K = np.einsum("eki,kl,elj->eij", B, self.K, B) + self._geometric(d, Ra, psi, Ji, lam)
        if self.C is not None:
            K += np.einsum("eki,kl,elj->eij", B, self.C,
                           self._rate_derivative(state, d, Ra, psi, Ji))
        return f, K

    # --- the energy-conserving scheme -----------------------------------------------------------
    def conserving(self, s0, s1, sm, inc, hist, spins=None, **kinematics):
        """Algorithmic force, its tangent, the energy at ``s1`` and the history (module doc).

        ``inc (E, nd)``: the step's increments, translations and the rotation vectors
        ``theta`` with ``R_1 = exp(theta) R_0`` (what the rows are paired with).
        """
        h = s1.t - s0.t
        e0 = self._kin(s0)[3]
        d1, Ra1, psi1, e1, B1, _, Ji1 = self._kin(s1)
        dm, Ram, psim, _, Bm, _, Jim = self._kin(sm)
        de = e1 - e0
        dem = np.einsum("eij,ej->ei", Bm, inc)                     # B_m dq
        n2 = np.einsum("ei,ei->e", dem, dem)
        scale = np.where(n2 > 1e-300, 1.0 / np.where(n2 > 1e-300, n2, 1.0), 0.0)
        # B_d = (I + r dem^T / |dem|^2) B_m: B_d dq = de, forces in the range of B_m^T
        corr = np.eye(6) + np.einsum("ei,ej->eij", (de - dem) * scale[:, None], dem)
        Bd = corr @ Bm
        lam = 0.5 * (e0 + e1) @ self.K
        A = 0.5 * self.K
        D = np.zeros(len(self))
        if self.C is not None:
            lam = lam + de @ self.C / h
            A = A + self.C / h
            D = np.einsum("ei,ij,ej->e", de, self.C, de) / h
        f = np.einsum("eij,ei->ej", Bd, lam)
        K = np.einsum("eki,kl,elj->eij", Bd, A, B1)
        # the mid-point moves by half a translation and by half_spin(theta) of a spin of s1
        Pm = np.zeros((len(self), self.nd, self.nd))
        for k in range(self.nen):
            u, w = slice(6 * k, 6 * k + 3), slice(6 * k + 3, 6 * k + 6)
            Pm[:, u, u] = 0.5 * np.eye(3)
            Pm[:, w, w] = so3.half_spin(inc[:, w])
        K = K + self._geometric(dm, Ram, psim, Jim, lam) @ Pm
        U1 = 0.5 * np.einsum("ei,ij,ej->e", e1, self.K, e1)
        return f, K, U1, self._booked(hist, D)

    def options(self) -> dict[str, str]:
        """The rotation measure."""
        return {"rotation": "log(R_a^T R_b)"}
