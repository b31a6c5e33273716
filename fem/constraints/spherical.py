"""Spherical joints: a point of one node's rigid neighbourhood stays on a point of another's.

Each joint connects nodes ``a`` and ``b`` (beam nodes, or the reference nodes of rigid bodies) at
a point ``P``. With ``c_a = P - X_a`` and ``c_b = P - X_b`` the offsets at the reference (material
vectors: the reference orientation is the identity) the constraint is

    g = (x_b + R_b c_b) - (x_a + R_a c_a) = 0,

in 2D with ``R`` the rotation by the nodal angle, in 3D the nodal rotation matrix. With ``c = 0``
it is a tie (:mod:`fem.constraints.tie`); with offsets it couples the rotations. Written with
``a = R c`` (the current offsets) and spatial spins ``dw`` (``d(R c) = dw x a``)::

    G = [-I, hat(a_a), I, -hat(a_b)]                    (3D)
    G = [-I, -perp(a_a), I, perp(a_b)],  perp(a) = (-a_y, a_x)   (2D)

and the multiplier ``lambda`` is the force node ``a`` receives from node ``b`` through the joint,
acting at ``P`` (so also the moment ``a_a x lambda`` about node ``a``; the residual holds
``G^T lambda``, its negative); node ``b`` receives the opposite. Rows are scaled as the ties' are
(``scale``, the unknown ``mu = lambda / scale``).

**Ideal joints do no work over a time step.** A constraint force ``G(q_1)^T lambda`` does work
``lambda . G(q_1) dq`` over a step, which is not zero for a nonlinear ``g`` even when ``g`` holds
at both ends. :meth:`Spherical.step_vector` uses instead the *discrete gradient* ``G_d`` with
``G_d dq = g(q_1) - g(q_0)`` exactly: ``R_1 c - R_0 c = (exp(hat(theta)) - I) a_0 =
hat(theta) jl(theta) a_0 = -hat(jl(theta) a_0) theta`` for the step's spatial rotation vector
``theta`` (3D; in 2D ``(R(dtheta) - I) a_0 = dtheta (sin(t)/t perp(a_0) - (1 - cos t)/t a_0)``),
so ``G_d`` is ``G`` with ``a`` replaced by ``jl(theta) a_0`` (2D: by the bracket). Its work
``lambda . (g_1 - g_0)`` is zero when both ends satisfy the constraint: the energy-conserving
scheme keeps conserving energy with joints (and linear momentum: the forces are equal and
opposite). **Angular momentum is not exact**: the moments ``jl(theta) a_0 x lambda`` are not
those of equal and opposite forces at one point (that point would be ``x_m + a_m``), so a
free chain's angular momentum drifts slightly (5.7e-7 relative over 1000 steps in
``tests/test_spherical.py``). A discrete gradient that is both exact and equivariant needs the
Gonzalez / Betsch-Steinmann construction (a rank-one correction is singular for rigid steps):
the next step of the joints work.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from numpy.typing import NDArray

from fem import rotations as so3
from fem.constraints.base import PairGroup


def _perp(a: NDArray) -> NDArray:
    """``z x a`` of in-plane vectors ``(..., 2)``."""
    return np.stack([-a[..., 1], a[..., 0]], axis=-1)


class Spherical(PairGroup):
    """A group of spherical joints between node pairs at given points.

    Parameters
    ----------
    name : group name
    pairs : (E, 2) node indices ``(a, b)``
    offsets : (E, 2, 3) reference offsets ``P - X_a``, ``P - X_b`` of the joint point
    dim : 2 (a revolute joint of the plane) or 3
    node_ids : (n,) the model's node ids (for messages)
    """

    type_name: ClassVar[str] = "spherical"
    item, items = "spherical joint", "joints"

    def __init__(self, name: str, pairs: NDArray, offsets: NDArray, dim: int,
                 node_ids: NDArray | None = None):
        super().__init__(name, pairs, dim, ("ux", "uy", "rz") if dim == 2 else
                         ("ux", "uy", "uz", "rx", "ry", "rz"), node_ids)
        self.offsets = np.asarray(offsets, dtype=float)[:, :, :dim].copy()

    def element_vector(self, nodal: NDArray) -> NDArray:
        """(E, nd) the DOFs of each pair in an ``(n, nslots)`` nodal array."""
        return nodal[self.conn].reshape(len(self), -1)

    # --- geometry ------------------------------------------------------------------------------
    def _arms(self, state) -> NDArray:
        """(E, 2, dim) the current offsets ``R c`` of both nodes."""
        if self.dim == 2:
            ang = state.rot[self.conn]                                     # (E, 2)
            cs, sn = np.cos(ang)[..., None], np.sin(ang)[..., None]
            c = self.offsets
            return cs * c + sn * _perp(c)
        R = so3.quat_to_matrix(state.rot[self.conn])                       # (E, 2, 3, 3)
        return np.einsum("eaij,eaj->eai", R, self.offsets)

    def gap(self, state) -> NDArray:
        """(E, dim) ``g``, from displacement differences (no cancellation of coordinates)."""
        d = self.dim
        arms = self._arms(state)
        du = state.u[self.conn[:, 1], :d] - state.u[self.conn[:, 0], :d]
        # X_b + c_b = X_a + c_a = P, so g = (u_b - u_a) + (R_b - I) c_b - (R_a - I) c_a
        return du + (arms[:, 1] - self.offsets[:, 1]) - (arms[:, 0] - self.offsets[:, 0])

    def _jacobian(self, arms: NDArray) -> NDArray:
        """(E, dim, nd) ``G`` for the arms ``(E, 2, dim)`` (current, or the discrete ones)."""
        E, d = len(arms), self.dim
        eye = np.broadcast_to(np.eye(d), (E, d, d))
        if d == 2:
            pa, pb = _perp(arms[:, 0])[:, :, None], _perp(arms[:, 1])[:, :, None]
            return np.concatenate([-eye, -pa, eye, pb], axis=2)
        return np.concatenate([-eye, so3.hat(arms[:, 0]), eye, -so3.hat(arms[:, 1])], axis=2)

    def _assemble(self, G: NDArray, Kqq: NDArray, Gg: NDArray, scale: float) -> NDArray:
        """``scale [[Kqq, G^T], [Gg, 0]]`` per joint."""
        E, d = len(G), self.dim
        nd = self.nd
        K = np.zeros((E, nd + d, nd + d))
        K[:, :nd, :nd] = Kqq
        K[:, :nd, nd:] = np.swapaxes(G, 1, 2)
        K[:, nd:, :nd] = Gg
        return scale * K

    # --- statics (and every scheme but the energy-conserving one) ------------------------------
    def vector(self, state, mu: NDArray, scale: float = 1.0) -> NDArray:
        """(E, nd + dim) ``scale [G^T mu; g]``."""
        G = self._jacobian(self._arms(state))
        return scale * np.hstack([np.einsum("eki,ek->ei", G, mu), self.gap(state)])

    def tangent(self, state, mu: NDArray, scale: float = 1.0) -> NDArray:
        """(E, nd + dim, nd + dim) ``scale [[d(G^T mu)/dq, G^T], [G, 0]]``.

        The rotation rows of ``G^T mu`` are ``-a_a x mu`` and ``a_b x mu`` (3D); a spin turns
        the arm, ``d(a x mu) = (dw x a) x mu = (a mu^T - (mu . a) I) dw``. In 2D the rows are
        ``-perp(a_a) . mu`` and ``perp(a_b) . mu``, whose derivatives are ``a_a . mu`` and
        ``-a_b . mu``.
        """
        arms = self._arms(state)
        G = self._jacobian(arms)
        E, d, nd = len(arms), self.dim, self.nd
        Kqq = np.zeros((E, nd, nd))
        if d == 2:
            am = np.einsum("eai,ei->ea", arms, mu)
            Kqq[:, 2, 2], Kqq[:, 5, 5] = am[:, 0], -am[:, 1]
        else:
            for node, sign, rows in ((0, -1.0, slice(3, 6)), (1, 1.0, slice(9, 12))):
                a = arms[:, node]
                block = (np.einsum("ei,ej->eij", a, mu)
                         - np.einsum("ei,ei->e", a, mu)[:, None, None] * np.eye(3))
                Kqq[:, rows, rows] = sign * block
        return self._assemble(G, Kqq, G, scale)

    # --- the energy-conserving step: the discrete gradient -------------------------------------
    def _discrete_arms(self, s0, s1) -> tuple[NDArray, NDArray]:
        """(E, 2, dim) discrete arms (``G_d`` is ``G`` of them) and the step's rotations.

        ``jl(theta) a_0`` with ``theta`` the spatial rotation vector of the step (2D: ``t e_z``,
        which gives the bracket of the module docstring as ``perp`` of the arm). Also returns
        ``theta`` ((E, 2, 3) or, 2D, the angles (E, 2)).
        """
        arms0 = self._arms(s0)
        if self.dim == 2:
            # the plane as 3D: a rotation t about z, whose jl(t e_z) a_0 is the bracket's arm
            t = s1.rot[self.conn] - s0.rot[self.conn]                      # (E, 2)
            theta = np.zeros(t.shape + (3,))
            theta[..., 2] = t
            a3 = np.concatenate([arms0, np.zeros(t.shape + (1,))], axis=-1)
            return np.einsum("eaij,eaj->eai", so3.jl(theta), a3)[..., :2], t
        theta = so3.rotvec_from_quat(so3.quat_mul(s1.rot[self.conn],
                                                  so3.quat_conj(s0.rot[self.conn])))  # R1 R0^T
        return np.einsum("eaij,eaj->eai", so3.jl(theta), arms0), theta

    def step_vector(self, s0, s1, mu: NDArray, scale: float = 1.0) -> NDArray:
        """(E, nd + dim) ``scale [G_d^T mu; g(q_1)]``: joint forces doing no work over the step."""
        G = self._jacobian(self._discrete_arms(s0, s1)[0])
        return scale * np.hstack([np.einsum("eki,ek->ei", G, mu), self.gap(s1)])

    def step_tangent(self, s0, s1, mu: NDArray, scale: float = 1.0) -> NDArray:
        """Derivative of :meth:`step_vector` along Newton's corrections of ``s1``.

        Translations add; 3D rotations of ``s1`` turn by spins ``dw``, which move the step's
        rotation vector by ``jl_inv(theta) dw``: the rotation rows of ``G_d^T mu``
        (``-jl(theta_a) a0_a x mu``, ``jl(theta_b) a0_b x mu``) change by
        ``+-hat(mu) jl_derivative(theta, a0) jl_inv(theta)``. The rows ``g(q_1)`` change by
        ``G(q_1)``.
        """
        darms, theta = self._discrete_arms(s0, s1)
        Gd = self._jacobian(darms)
        G1 = self._jacobian(self._arms(s1))
        E, d, nd = len(darms), self.dim, self.nd
        Kqq = np.zeros((E, nd, nd))
        arms0 = self._arms(s0)
        if d == 2:
            theta3 = np.zeros(theta.shape + (3,))
            theta3[..., 2] = theta
            a3 = np.concatenate([arms0, np.zeros(theta.shape + (1,))], axis=-1)
            ddarm = so3.jl_derivative(theta3, a3)[..., :2, 2]              # d(arm)/dt, (E, 2, 2)
            # rows -perp(arm_a) . mu and perp(arm_b) . mu
            Kqq[:, 2, 2] = -np.einsum("ei,ei->e", _perp(ddarm[:, 0]), mu)
            Kqq[:, 5, 5] = np.einsum("ei,ei->e", _perp(ddarm[:, 1]), mu)
        else:
            hat_mu = so3.hat(mu)
            for node, sign, rows in ((0, 1.0, slice(3, 6)), (1, -1.0, slice(9, 12))):
                D = so3.jl_derivative(theta[:, node], arms0[:, node])
                # row of node a: hat(ad_a) mu = -ad_a x mu = mu x ad_a = hat(mu) ad_a
                Kqq[:, rows, rows] = sign * hat_mu @ D @ so3.jl_inv(theta[:, node])
        return self._assemble(Gd, Kqq, G1, scale)
