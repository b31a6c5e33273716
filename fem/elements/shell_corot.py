"""Co-rotational flat shell triangle: the linear OPT + DKT facet in a frame that follows it.

The framework is the consistent ("global") co-rotational formulation of Battini & Pacoste
(J.-M. Battini, C. Pacoste, *On the equivalence of local and global formulations in co-rotational
analyses*, 2006; the same steps as their beams, :mod:`fem.elements.frames3d`): the element's
local deformational displacements ``p`` are exact functions of the global nodal positions and
orientations, the internal force is ``B^T q`` with ``B = dp/dd`` and ``q = K_l p``, and the
tangent is its exact derivative, ``B^T K_l B`` plus the geometric stiffness ``d(B^T)/dd : q``
(Felippa & Haugen, CMAME 194 (2005) 2285-2335, call the same object the consistent tangent of
the "EICR" with its projector; here ``B`` itself annihilates rigid motions, so no separate
projector is applied). Small strains, large rotations.

* **Element frame** ``R_e = [e1 e2 e3]`` from the current corners (:func:`element_frames`):
  ``e1`` along side 1-2, ``e3`` the normal, as the linear element's frame (one of the frame
  choices of Felippa & Haugen, section 5); ``R_0`` is its reference value.
* **Deformational DOFs** of corner ``a``: ``u_a = R_e^T (x_a - x_1) - (X_a - X_1)_0`` (reference
  local coordinates; ``u_1 = 0``, and the local ``w_a`` and ``v_2`` vanish identically), and
  ``theta_a = log(R_e^T R_a R_0)`` (``R_a`` the nodal rotation).
* **Frame spin** (frame components) ``w = G dd``, exact for this frame: with ``r_a = x_a - x_1``,
  local coordinates ``(l, 0)``, ``(x3, y3)`` of corners 2 and 3,

      w3 = e2 . dr_2 / l,   w2 = -e3 . dr_2 / l,   w1 = (x3 w2 + e3 . dr_3) / y3,

  so ``du_a = R_e^T dr_a + hat(u~_a) G dd`` (``u~_a = R_e^T r_a``) and
  ``dtheta_a = Lambda_a (R_e^T dw_a - G dd)``, ``Lambda_a = jl_inv(theta_a)``.
* **Geometric stiffness** at fixed ``q``: (i) the frame turning the local forces ``R_e q_u`` and
  moments ``R_e Lambda_a^T m_a``; (ii) the change of ``Lambda^T`` (``K_h``,
  :func:`fem.rotations.kh`); (iii) the change of the lever arms ``u~_a`` in ``G^T c``, ``c = sum_a
  q_u,a x u~_a - Lambda_a^T m_a``; (iv) the change of ``G`` itself (:meth:`g_contract`). A central
  difference of the force checks all four (tests/test_shell_corot.py).

At the reference, ``B`` differs from the linear element's ``Lambda`` only by rigid modes of
``K_l``, so the small-displacement limit is the linear element exactly. The stresses a buckling
step carries (``stress``, ``stress_rate``) are the local nodal forces ``q (E, 18)``, the basic
forces of the geometric stiffness; the outputs (``N``, ``M``, surface stresses) are the linear
element's of ``p``. Mass and pressure: the linear element's (reference geometry; the lumped
nodal inertia is isotropic, the same in every frame; pressure is a dead load).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from fem import rotations as so3
from fem.elements.base import outer
from fem.elements.shell import Shell, element_frames

_T = [slice(6 * a, 6 * a + 3) for a in range(3)]          # translation DOFs of corner a
_W = [slice(6 * a + 3, 6 * a + 6) for a in range(3)]      # rotation (spin) DOFs of corner a


@dataclass
class ShellKinematics:
    """Frame quantities of one evaluation."""

    p: NDArray        # (E, 18) local deformational displacements and rotations
    B: NDArray        # (E, 18, 18) dp/dd (dd: translations and spatial spins)
    Re: NDArray       # (E, 3, 3) current element frame, columns e1 e2 e3
    xl: NDArray       # (E, 3, 3) current corners in the element frame, relative to corner 1
    G: NDArray        # (E, 3, 18) frame spin map (frame components)
    theta: NDArray    # (E, 3, 3) local rotations
    Lam: NDArray      # (E, 3, 3, 3) jl_inv(theta)
    Bhat: NDArray     # (E, 3, 3, 18) R_e^T E_a - G


class CorotShellFrame:
    """Co-rotational kinematics of flat triangles (see the module docstring).

    Parameters
    ----------
    R0 : (E, 3, 3) reference element frames, columns e1 e2 e3
    xl0 : (E, 3, 3) reference corners in those frames, relative to corner 1
    """

    def __init__(self, R0: NDArray, xl0: NDArray):
        self.R0 = R0
        self.xl0 = xl0

    def kinematics(self, x: NDArray, R: NDArray) -> ShellKinematics:
        """Frame of corners ``x (E, 3, 3)`` (relative to corner 1), nodal rotations ``R``.

        ``R (E, 3, 3, 3)``: the corners' rotation matrices (from the reference orientation).
        """
        E = len(x)
        Re = np.swapaxes(element_frames(x), 1, 2)
        ReT = np.swapaxes(Re, 1, 2)
        xl = np.einsum("eji,eaj->eai", Re, x)
        theta = so3.logm(np.einsum("eji,eajk,ekl->eail", Re, R, self.R0))
        G = self.spin_map(Re, xl)
        Lam = so3.jl_inv(theta)
        Bhat = np.repeat(-G[:, None], 3, axis=1)
        B = np.zeros((E, 18, 18))
        hx = so3.hat(xl)
        for a in range(3):
            Bhat[:, a, :, _W[a]] += ReT
            if a:
                B[:, _T[a], _T[a]] = ReT
                B[:, _T[a], _T[0]] = -ReT
                B[:, _T[a]] += hx[:, a] @ G
            B[:, _W[a]] = Lam[:, a] @ Bhat[:, a]
        p = np.concatenate([xl - self.xl0, theta], axis=2).reshape(E, 18)
        return ShellKinematics(p=p, B=B, Re=Re, xl=xl, G=G, theta=theta, Lam=Lam, Bhat=Bhat)

    @staticmethod
    def spin_map(Re: NDArray, xl: NDArray) -> NDArray:
        """(E, 3, 18) ``G``: the frame's spin (frame components) per element increment."""
        e2, e3 = Re[:, :, 1], Re[:, :, 2]
        l, x3, y3 = xl[:, 1, 0], xl[:, 2, 0], xl[:, 2, 1]
        G = np.zeros((len(Re), 3, 18))
        G[:, 0, _T[1]] = -(x3 / (y3 * l))[:, None] * e3
        G[:, 0, _T[2]] = (1.0 / y3)[:, None] * e3
        G[:, 1, _T[1]] = -(1.0 / l)[:, None] * e3
        G[:, 2, _T[1]] = (1.0 / l)[:, None] * e2
        G[:, :, _T[0]] = -(G[:, :, _T[1]] + G[:, :, _T[2]])
        return G

    def geometric(self, kin: ShellKinematics, q: NDArray) -> NDArray:
        """(E, 18, 18) derivative of ``B^T q`` at fixed local forces ``q (E, 18)``."""
        E = len(q)
        Re, G = kin.Re, kin.G
        qa = q.reshape(E, 3, 6)
        qu, m = qa[:, :, :3], qa[:, :, 3:]
        n = np.einsum("eaji,eaj->eai", kin.Lam, m)                   # Lambda_a^T m_a
        RG = Re @ G                                                   # spatial spin map
        K = np.zeros((E, 18, 18))
        Kh = so3.kh(kin.theta, m)                                     # (E, 3, 3, 3)
        for a in range(3):
            # (i) the frame turns the local forces and moments: d(R_e v) = -hat(R_e v) R_e G dd
            if a:
                F = so3.hat(np.einsum("eij,ej->ei", Re, qu[:, a])) @ RG
                K[:, _T[a]] -= F
                K[:, _T[0]] += F
            K[:, _W[a]] -= so3.hat(np.einsum("eij,ej->ei", Re, n[:, a])) @ RG
            # (ii) change of Lambda_a^T with the local rotation
            Bh = kin.Bhat[:, a]
            K += np.swapaxes(Bh, 1, 2) @ Kh[:, a] @ kin.Lam[:, a] @ Bh
        # (iii) the lever arms u~_a of c = sum_a q_u,a x u~_a - n_a
        Bt = kin.B.reshape(E, 3, 6, 18)[:, :, :3]                    # d u~_a / dd
        K += np.swapaxes(G, 1, 2) @ np.einsum("eaij,eajk->eik", so3.hat(qu), Bt)
        # (iv) the change of G
        c = np.cross(qu, kin.xl).sum(axis=1) - n.sum(axis=1)
        return K + self.g_contract(kin, c)

    @staticmethod
    def g_contract(kin: ShellKinematics, c: NDArray) -> NDArray:
        """(E, 18, 18) ``d(G^T c)/dd`` at fixed ``c (E, 3)``.

        ``G`` holds ``alpha v`` blocks (``v`` = ``e2`` or ``e3``, ``alpha`` of ``l, x3, y3``):
        ``d(alpha v) = v dalpha + alpha dv`` with ``dv = -hat(v) R_e G dd``, ``dl = e1 . dr_2``,
        ``dx3 = e1 . dr_3 + y3 w3`` and ``dy3 = e2 . dr_3 - x3 w3``.
        """
        E = len(c)
        Re, G, xl = kin.Re, kin.G, kin.xl
        e1, e2, e3 = Re[:, :, 0], Re[:, :, 1], Re[:, :, 2]
        l, x3, y3 = xl[:, 1, 0], xl[:, 2, 0], xl[:, 2, 1]
        RG = Re @ G

        def side(vec: NDArray, a: int) -> NDArray:
            row = np.zeros((E, 18))
            row[:, _T[a]], row[:, _T[0]] = vec, -vec
            return row

        def col(v: NDArray) -> NDArray:
            return v[:, None]

        dl = side(e1, 1)
        dx3 = side(e1, 2) + col(y3) * G[:, 2]
        dy3 = side(e2, 2) - col(x3) * G[:, 2]
        de2, de3 = -so3.hat(e2) @ RG, -so3.hat(e3) @ RG
        a01 = -x3 / (y3 * l)
        d01 = -dx3 / col(y3 * l) + col(x3 / (y3**2 * l)) * dy3 + col(x3 / (y3 * l**2)) * dl
        d02 = -dy3 / col(y3**2)
        c0, c1, c2 = (c[:, k, None, None] for k in range(3))
        M1 = (c0 * (outer(e3, d01) + a01[:, None, None] * de3)
              + c1 * (outer(e3, dl / col(l**2)) - (1.0 / l)[:, None, None] * de3)
              + c2 * (-outer(e2, dl / col(l**2)) + (1.0 / l)[:, None, None] * de2))
        M2 = c0 * (outer(e3, d02) + (1.0 / y3)[:, None, None] * de3)
        out = np.zeros((E, 18, 18))
        out[:, _T[1]], out[:, _T[2]], out[:, _T[0]] = M1, M2, -(M1 + M2)
        return out


class CorotShell(Shell):
    """A batch of co-rotational flat shell triangles (``formulation = "corotational"``).

    The linear element's local stiffness ``K_local``, mass and outputs, on the deformational
    DOFs of :class:`CorotShellFrame`. Parameters as :class:`~fem.elements.shell.Shell`.
    """

    capabilities = frozenset({"stiffness", "geometric_stiffness", "mass"})
    additive_rotations = False

    def __init__(self, name, conn, X, dim, *, E, nu, h, rho=0.0):
        super().__init__(name, conn, X, dim, E=E, nu=nu, h=h, rho=rho)
        self.formulation = "corotational"
        R0 = np.swapaxes(self.T, 1, 2)
        xl0 = np.einsum("eji,eaj->eai", R0, self.X - self.X[:, :1])
        xl0[:, :, 2] = 0.0                                  # flat: exactly in the plane
        self.frame = CorotShellFrame(R0, xl0)

    def _kinematics(self, state) -> ShellKinematics:
        return self.frame.kinematics(self.positions(state),
                                     state.rotation_matrices()[self.conn])

    def _q(self, kin: ShellKinematics) -> NDArray:
        return np.einsum("eij,ej->ei", self.K_local, kin.p)

    # --- protocol -----------------------------------------------------------------------------
    def evaluate(self, state, tangent: bool = True) -> tuple[NDArray, NDArray | None]:
        """``B^T q`` and (if asked) ``B^T K_l B`` plus the geometric stiffness of ``q``."""
        kin = self._kinematics(state)
        q = self._q(kin)
        f = np.einsum("eij,ei->ej", kin.B, q)
        if not tangent:
            return f, None
        return f, np.swapaxes(kin.B, 1, 2) @ self.K_local @ kin.B + self.frame.geometric(kin, q)

    def internal_force(self, state) -> NDArray:
        """(E, 18) ``B^T K_l p`` in the global frame."""
        return self.evaluate(state, tangent=False)[0]

    def tangent(self, state) -> NDArray:
        """(E, 18, 18) material plus geometric tangent."""
        return self.evaluate(state)[1]

    def material_tangent(self, state) -> NDArray:
        """(E, 18, 18) ``B^T K_l B``."""
        B = self._kinematics(state).B
        return np.swapaxes(B, 1, 2) @ self.K_local @ B

    def geometric_stiffness(self, state, stress: NDArray) -> NDArray:
        """(E, 18, 18) geometric stiffness of local nodal forces ``stress (E, 18)``."""
        return self.frame.geometric(self._kinematics(state), stress)

    def stress(self, state) -> NDArray:
        """(E, 18) local nodal forces ``q = K_l p`` (the basic forces of the element)."""
        return self._q(self._kinematics(state))

    def stress_rate(self, state, due: NDArray) -> NDArray:
        """(E, 18) their linearized change ``K_l B due`` for element increments ``due``."""
        B = self._kinematics(state).B
        return np.einsum("eij,ejk,ek->ei", self.K_local, B, due)

    def energy(self, state) -> NDArray:
        """(E,) strain energy ``p.K_l p / 2``."""
        p = self._kinematics(state).p
        return 0.5 * np.einsum("ei,eij,ej->e", p, self.K_local, p)

    def section_forces(self, state) -> NDArray:
        """(E, 6) mean ``N``, ``M`` of the deformational DOFs, element frame."""
        return self._generalized(self._kinematics(state).p)
