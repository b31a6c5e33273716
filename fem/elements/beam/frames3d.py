"""Spatial beam frames: nodal motion (12 DOFs) -> basic deformations (u, theta_p, theta_q).

``CorotFrame3D`` is the co-rotational frame of Battini & Pacoste (2002, "Co-rotational beam elements
with warping effects in instability problems", CMAME 191, sections 2-3; after Nour-Omid & Rankin):

* ``r1`` is the chord direction; ``r2, r3`` follow from the mean ``p = (t_p + t_q)/2`` of the nodal
  local y axes: ``r3 = r1 x p / |r1 x p|``, ``r2 = r3 x r1``; ``R_r = [r1 r2 r3]``;
* nodal triads are ``T_a = R_a E0`` (``R_a`` the nodal rotation, ``E0`` the element's reference
  triad); the local rotations are ``theta_a = log(R_r^T T_a)`` and the elongation is ``u = l - l0``.

Increments are ``dd = (dx_p, dw_p, dx_q, dw_q)`` with spatial spins ``dw``. The frame spin in frame
components is ``w = G dd`` (their eq. 26, derived again here in global vectors), and

    du = r1 . (dx_q - dx_p),     dtheta_a = Lambda_a (R_r^T dw_a - G dd),
    Lambda_a = jl_inv(theta_a)  (the inverse of their T_s, eq. 11).

The geometric stiffness ``d(B^T q)/dd`` at fixed basic forces ``q = (N, m_p, m_q)`` has four parts:
the rotating chord (``N/l (I - r1 r1^T)``), the rotation of the frame carrying the nodal moments,
the change of ``jl_inv^T`` (``K_h``, :func:`fem.rotations.kh`) and the change of ``G`` itself. Each
is written below as a linear map of ``dd``; a central finite difference of the internal force checks
them in the tests. The tangent is not symmetric away from equilibrium (spatial spins are not
integrable coordinates); assembled at equilibrium under conservative loads it is. The same
third-order tensor ``dB/dd`` contracted on its other side, ``d(B w)/dd`` at fixed ``w``
(:meth:`CorotFrame3D.bw_derivative`), linearizes the energy-conserving step, whose basic
deformations move by ``B_m inc``.

``LinearFrame3D`` freezes ``B`` at the reference geometry (small displacements, rotation vectors).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from fem import rotations as so3
from fem.elements.base import outer, unit

_XP, _WP, _XQ, _WQ = slice(0, 3), slice(3, 6), slice(6, 9), slice(9, 12)


@dataclass
class Kinematics3D:
    """Frame quantities of one evaluation."""

    v: NDArray        # (E, 7) basic deformations
    B: NDArray        # (E, 7, 12)
    Rr: NDArray       # (E, 3, 3) co-rotated frame, columns r1 r2 r3
    l: NDArray        # (E,)
    p1: NDArray       # (E,) p . r1
    p2: NDArray       # (E,) p . r2 = |r1 x p|
    t: NDArray        # (E, 2, 3) nodal local y axes
    G: NDArray        # (E, 3, 12) frame spin map (frame components)
    theta: NDArray    # (E, 2, 3) local rotations
    Lam: NDArray      # (E, 2, 3, 3) jl_inv(theta)
    Bhat: NDArray     # (E, 2, 3, 12) R_r^T E_a - G
    dG: NDArray | None = None   # (E, 3, 12, 12) dG/dd, computed when first needed


def reference_triad(X: NDArray, ref: NDArray) -> NDArray:
    """(E, 3, 3) element triads (columns x, y, z): x on the chord, y in the plane of x, ``ref``."""
    e1, _ = unit(X[:, 1] - X[:, 0])
    e3, _ = unit(so3.cross(e1, ref))
    e2 = so3.cross(e3, e1)
    return np.stack([e1, e2, e3], axis=-1)


class CorotFrame3D:
    """Co-rotational spatial frame (Battini & Pacoste 2002)."""

    linear = False

    def __init__(self, X: NDArray, E0: NDArray):
        """``X (E, 2, 3)`` reference nodal coordinates, ``E0 (E, 3, 3)`` reference triads."""
        self.E0 = E0
        self.l0 = np.linalg.norm(X[:, 1] - X[:, 0], axis=-1)

    def _geometry(self, x: NDArray, R: NDArray) -> Kinematics3D:
        E = len(x)
        T = np.einsum("eaij,ejk->eaik", R, self.E0)                  # (E, 2, 3, 3)
        t = T[:, :, :, 1]
        r1, l = unit(x[:, 1] - x[:, 0])
        p = 0.5 * (t[:, 0] + t[:, 1])
        r3, _ = unit(so3.cross(r1, p))
        r2 = so3.cross(r3, r1)
        Rr = np.stack([r1, r2, r3], axis=-1)
        p1 = np.einsum("ei,ei->e", p, r1)
        p2 = np.einsum("ei,ei->e", p, r2)
        theta = so3.logm(np.einsum("eji,eajk->eaik", Rr, T))          # log(R_r^T T_a)
        G = np.zeros((E, 3, 12))
        c = (p1 / (l * p2))[:, None]
        G[:, 0, _XP], G[:, 0, _XQ] = c * r3, -c * r3
        G[:, 0, _WP] = so3.cross(t[:, 0], r3) / (2 * p2[:, None])
        G[:, 0, _WQ] = so3.cross(t[:, 1], r3) / (2 * p2[:, None])
        G[:, 1, _XP], G[:, 1, _XQ] = r3 / l[:, None], -r3 / l[:, None]
        G[:, 2, _XP], G[:, 2, _XQ] = -r2 / l[:, None], r2 / l[:, None]
        Bhat = np.repeat(-G[:, None], 2, axis=1)
        RrT = np.swapaxes(Rr, 1, 2)
        Bhat[:, 0, :, _WP] += RrT
        Bhat[:, 1, :, _WQ] += RrT
        Lam = so3.jl_inv(theta)
        B = np.zeros((E, 7, 12))
        B[:, 0, _XP], B[:, 0, _XQ] = -r1, r1
        B[:, 1:4] = Lam[:, 0] @ Bhat[:, 0]
        B[:, 4:7] = Lam[:, 1] @ Bhat[:, 1]
        v = np.concatenate([(l - self.l0)[:, None], theta[:, 0], theta[:, 1]], axis=1)
        return Kinematics3D(v=v, B=B, Rr=Rr, l=l, p1=p1, p2=p2, t=t, G=G, theta=theta, Lam=Lam,
                            Bhat=Bhat)

    def kinematics(self, x: NDArray, R: NDArray, d: NDArray) -> Kinematics3D:
        """Frame of positions ``x (E, 2, 3)`` and nodal rotation matrices ``R (E, 2, 3, 3)``."""
        return self._geometry(x, R)

    def geometric(self, kin: Kinematics3D, q: NDArray) -> NDArray:
        """(E, 12, 12) derivative of ``B^T q`` at fixed basic forces ``q (E, 7)``."""
        E = len(q)
        Rr, l, G = kin.Rr, kin.l, kin.G
        r1 = Rr[:, :, 0]
        m = q[:, 1:].reshape(E, 2, 3)
        mu = np.einsum("eaji,eaj->eai", kin.Lam, m)                  # Lambda_a^T m_a
        K = np.zeros((E, 12, 12))

        # 1. rotating chord under the axial force
        P = (q[:, 0] / l)[:, None, None] * (np.eye(3) - outer(r1, r1))
        K[:, _XP, _XP] += P
        K[:, _XP, _XQ] -= P
        K[:, _XQ, _XP] -= P
        K[:, _XQ, _XQ] += P

        # 2. the frame rotation carries the nodal moments R_r mu_a
        for a, rows in ((0, _WP), (1, _WQ)):
            K[:, rows, :] -= so3.hat(np.einsum("eij,ej->ei", Rr, mu[:, a])) @ Rr @ G

        # 3. change of jl_inv^T with the local rotations (K_h)
        Kh = so3.kh(kin.theta, m)                                      # (E, 2, 3, 3)
        for a in range(2):
            Bh = kin.Bhat[:, a]
            K += np.swapaxes(Bh, 1, 2) @ Kh[:, a] @ kin.Lam[:, a] @ Bh

        # 4. change of G: -sum_k mu_k dG_k / dd, with mu = mu_p + mu_q
        K -= self.g_contract(kin, mu.sum(axis=1))
        return K

    def g_derivative(self, kin: Kinematics3D) -> NDArray:
        """(E, 3, 12, 12) ``dG_ki / dd_j``: the change of the frame spin map ``G``.

        Each row block of ``G`` (``x_p, w_p, x_q, w_q`` of rows 1-3) is a linear map of ``dd``,
        written as ``(E, 3, 12)``. Kept in ``kin.dG`` once computed.
        """
        if kin.dG is not None:
            return kin.dG
        (Ma, M3, M2), Mb = self._g_parts(kin)
        dG = np.zeros((len(kin.l), 3, 12, 12))
        dG[:, 0, _XP], dG[:, 0, _XQ] = Ma, -Ma
        dG[:, 1, _XP], dG[:, 1, _XQ] = M3, -M3
        dG[:, 2, _XP], dG[:, 2, _XQ] = -M2, M2
        dG[:, 0, _WP], dG[:, 0, _WQ] = Mb
        kin.dG = dG
        return dG

    def g_contract(self, kin: Kinematics3D, c: NDArray) -> NDArray:
        """(E, 12, 12) ``sum_k c_k dG_k``, without forming ``dG`` (unless it is known)."""
        if kin.dG is not None:
            return np.einsum("ek,ekij->eij", c, kin.dG)
        (Ma, M3, M2), (Mb_p, Mb_q) = self._g_parts(kin)
        c0, c1, c2 = (c[:, k, None, None] for k in range(3))
        rows = c0 * Ma + c1 * M3 - c2 * M2
        out = np.zeros((len(c), 12, 12))
        out[:, _XP], out[:, _XQ] = rows, -rows
        out[:, _WP], out[:, _WQ] = c0 * Mb_p, c0 * Mb_q
        return out

    @staticmethod
    def _g_parts(kin: Kinematics3D):
        """The nonzero row blocks of ``dG``, each ``(E, 3, 12)``.

        ``(Ma, M3, M2)`` of the translation rows ``x_p`` of rows 0, 1, 2 of ``G`` (the ``x_q``
        rows are their negatives) and ``(Mb_p, Mb_q)`` of row 0's spin blocks.
        """
        E = len(kin.l)
        Rr, l, G, t, p1, p2 = kin.Rr, kin.l, kin.G, kin.t, kin.p1, kin.p2
        r1, r2, r3 = Rr[:, :, 0], Rr[:, :, 1], Rr[:, :, 2]
        g1, g2, g3 = G[:, 0], G[:, 1], G[:, 2]
        Ldl = np.zeros((E, 12))
        Ldl[:, _XP], Ldl[:, _XQ] = -r1, r1
        hat_t = so3.hat(t)                                             # (E, 2, 3, 3)
        Ldp = np.zeros((E, 3, 12))
        Ldp[:, :, _WP] = -0.5 * hat_t[:, 0]
        Ldp[:, :, _WQ] = -0.5 * hat_t[:, 1]
        Lr2 = -outer(r1, g3) + outer(r3, g1)
        Lr3 = outer(r1, g2) - outer(r2, g1)
        Lp1 = np.einsum("ei,eij->ej", r1, Ldp) + p2[:, None] * g3
        Lp2 = np.einsum("ei,eij->ej", r2, Ldp) - p1[:, None] * g3
        li, l2 = (1 / l)[:, None, None], (1 / l**2)[:, None, None]
        M3 = Lr3 * li - outer(r3, Ldl) * l2                            # d(r3/l)
        M2 = Lr2 * li - outer(r2, Ldl) * l2                            # d(r2/l)
        c = p1 / (l * p2)
        Lc = (Lp1 / (l * p2)[:, None] - (p1 / (l**2 * p2))[:, None] * Ldl
              - (p1 / (l * p2**2))[:, None] * Lp2)
        Ma = outer(r3, Lc) + c[:, None, None] * Lr3                    # d(c r3)
        hat_r3 = so3.hat(r3)
        Mb = []
        for a, cols in ((0, _WP), (1, _WQ)):
            tr3 = so3.cross(t[:, a], r3)
            m = (hat_t[:, a] @ Lr3 - outer(tr3, Lp2) / p2[:, None, None]) / (2 * p2)[:, None, None]
            m[:, :, cols] += hat_r3 @ hat_t[:, a] / (2 * p2)[:, None, None]   # -hat(r3) dt_a
            Mb.append(m)
        return (Ma, M3, M2), tuple(Mb)

    def bw_derivative(self, kin: Kinematics3D, w: NDArray) -> NDArray:
        """(E, 7, 12) derivative of ``B w`` for fixed element vectors ``w (E, 12)``.

        The right-hand contraction of ``dB/dd`` (``geometric`` is the left-hand one:
        ``q . (dB/dd) w == w . geometric(kin, q)`` for all ``q``, ``w``). Row 0, ``r1 . (w_q -
        w_p)``: ``(w_q - w_p)^T (I - r1 r1^T)/l (dx_q - dx_p)``. Rows of node ``a``,
        ``Lambda_a y_a`` with ``y_a = Bhat_a w = R_r^T w_a - G w``:

            d(Lambda_a y_a) = (K_h(theta_a, y_a) + hat(y_a)) B_a dd
                              + Lambda_a (hat(R_r^T w_a) G - dG[dd] w),

        since ``dtheta_a = B_a dd``, ``d(jl_inv y)/dtheta = K_h(theta, y) + hat(y)``
        (:func:`fem.rotations.jl_inv_derivative`) and the frame turns by the spin ``R_r G dd``.
        """
        E = len(w)
        Rr, l = kin.Rr, kin.l
        r1 = Rr[:, :, 0]
        out = np.zeros((E, 7, 12))
        P = (np.eye(3) - outer(r1, r1)) / l[:, None, None]
        row = np.einsum("ei,eij->ej", w[:, _XQ] - w[:, _XP], P)
        out[:, 0, _XP], out[:, 0, _XQ] = -row, row
        dGw = np.einsum("ekij,ei->ekj", self.g_derivative(kin), w)    # (E, 3, 12) d(G w)
        y = np.einsum("eaij,ej->eai", kin.Bhat, w)                       # (E, 2, 3) both nodes
        wa = np.einsum("eji,eaj->eai", Rr, w.reshape(E, 2, 6)[:, :, 3:])  # R_r^T w_a
        rows = (so3.jl_inv_derivative(kin.theta, y) @ kin.B[:, 1:].reshape(E, 2, 3, 12)
                + kin.Lam @ (so3.hat(wa) @ kin.G[:, None] - dGw[:, None]))
        out[:, 1:] = rows.reshape(E, 6, 12)
        return out


class LinearFrame3D(CorotFrame3D):
    """Small-displacement spatial frame: ``v = B0 d`` with ``B0`` at the reference geometry."""

    linear = True

    def __init__(self, X: NDArray, E0: NDArray):
        super().__init__(X, E0)
        self.ref = self._geometry(X, np.broadcast_to(np.eye(3), (len(X), 2, 3, 3)))

    def kinematics(self, x: NDArray, R: NDArray, d: NDArray) -> Kinematics3D:
        """Basic deformations ``B0 d`` of element vectors ``d (E, 12)``.

        ``d`` holds translations and rotation vectors.
        The rotation DOFs of a small-displacement element are rotation vectors, updated additively
        (:meth:`fem.state.State.increment`), so ``B0`` is the exact derivative and superposition
        holds.
        """
        ref = self.ref
        return Kinematics3D(v=np.einsum("ebd,ed->eb", ref.B, d), B=ref.B, Rr=ref.Rr, l=ref.l,
                            p1=ref.p1, p2=ref.p2, t=ref.t, G=ref.G, theta=ref.theta, Lam=ref.Lam,
                            Bhat=ref.Bhat)
