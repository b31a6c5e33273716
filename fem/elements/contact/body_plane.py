"""Spheres on nodes against a plane carried by a body: a body's plane (2D and 3D).

The plane of a :class:`BodyPlaneContact` is given at the reference configuration (a point ``p``
and a normal ``n_0`` pointing to the open side) and moves and turns with a body node ``b`` (a
rigid body, or any node with rotations), so a sphere on node ``a`` of radius ``R`` has the gap::

    g = (x_a - x_b) . n - (p - X_b) . n_0 - R,     n = Q_b n_0

(``Q_b`` the body's rotation: by its angle in plane models, its quaternion in space), computed as
``g_ref + du . n + d_ref . (n - n_0)`` with ``d_ref = X_a - X_b`` and ``du = u_a - u_b`` so that
the digits of the reference stay apart from the displacements'. Its gradient (element vector: the
sphere node's DOFs, then the body's; the sphere's rotation takes no part) is ``[n, 0, -n, m]``
with ``r = x_a - x_b`` and the moment arm ``m = r . (z x n)`` (2D, by the angle) or ``n x r``
(3D, by the spatial spins Newton turns the body with): the body takes the force ``F n`` at its
node and the moment of the force about it. Both nodes carry rotation DOFs: the spheres must be
rigid bodies (or have their rotations fixed).

Energy-conserving scheme: the discrete gradient of the gap over a step is exact by the product
rule ``r_1 . n_1 - r_0 . n_0 = (r_1 - r_0) . mean(n) + mean(r) . (n_1 - n_0)`` and an exact form
of the normal's change:

* 2D: ``(Q(theta_1) - Q(theta_0)) / dtheta = sinc(dtheta/2) Q'(theta_m)`` (as the plane
  bushing's, :mod:`fem.elements.force.bushing`): ``m = sinc(dtheta/2) mean(r) . Q'(theta_m)
  n_0``;
* 3D: ``n_1 - n_0 = psi x mean(n)`` with the Cayley parameter ``psi = c theta``, ``c =
  tan(t/2)/(t/2)``, ``t = |theta|``, of the step's spatial rotation vector ``theta`` (the joints'
  *Cayley form*, :mod:`fem.constraints.joint`): ``m = c mean(n) x mean(r)``;

so ``G . dq = g_1 - g_0`` to round-off, the elastic laws conserve energy and the damped ones take
what is booked (:mod:`fem.elements.contact.group`); the forces are equal and opposite (linear
momentum exact). The body's moment is that of the mid-point forces about the mid-point arm times
``tan(dtheta/2)/(dtheta/2)`` (2D: ``sinc / cos``; 3D: ``c``), so angular momentum is exact while
the body does not turn (a central impact) and otherwise changes by ``O(dtheta^2)`` of the
contact's moment a step, as a hinge on an ``exp`` node does (:mod:`fem.constraints.joint`; a 3D
body that turns by ``cay(psi)``, welded to shells, should have it exact, the integrator pairing
the row with ``psi``: not tested). The tangent is the exact derivative by the end state (3D: by
spins, the rotation vector turning by ``jl_inv(theta) dw``).

Not built: friction against a body's plane (the deck refuses it).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from fem import rotations as so3
from fem.elements.contact.group import Contact


def _rot(theta: NDArray, v: NDArray) -> NDArray:
    """(E, 2) ``Q(theta) v`` for ``v (2,)``."""
    c, s = np.cos(theta), np.sin(theta)
    return np.stack([c * v[0] - s * v[1], s * v[0] + c * v[1]], axis=-1)


def _perp(n: NDArray) -> NDArray:
    """(E, 2) ``z x n``: ``Q'(theta) n_0`` for ``n = Q(theta) n_0``."""
    return np.stack([-n[:, 1], n[:, 0]], axis=-1)


def _cayley_factor(theta: NDArray) -> tuple[NDArray, NDArray]:
    """``c = tan(t/2) / (t/2)`` of ``t = |theta|`` (``psi = c theta``) and ``dc/dtheta (E, 3)``."""
    t = np.linalg.norm(theta, axis=1)
    u = 0.5 * t
    small = u < 1e-3
    us = np.where(small, 1.0, u)
    c = np.where(small, 1 + u**2 / 3 + 2 * u**4 / 15, np.tan(us) / us)
    # dc/dt / t = (u sec^2 u - tan u) / (4 u^3)
    k = np.where(small, 1 / 6 + 2 * u**2 / 15,
                 (us / np.cos(us) ** 2 - np.tan(us)) / (4 * us**3))
    return c, k[:, None] * theta


class BodyPlaneContact(Contact):
    """Spheres (or bare nodes) on nodes against a plane that moves with a body node (module doc).

    Parameters
    ----------
    name : group name
    nodes : (E,) node indices of the spheres
    body : the body node's index
    X : (n, 3) reference coordinates
    dim : 2
    law : the normal law
    point : (2,) a point of the plane at the reference
    normal : (2,) its normal at the reference (any nonzero length), to the open side
    radius : scalar or (E,) sphere radii (0: bare nodes)
    """

    nen = 2
    cell_type = "line"
    additive_rotations = True

    def __init__(self, name, nodes, body, X, dim, law, point, normal, radius=0.0, **kw):
        nodes = np.asarray(nodes, dtype=np.int64)
        conn = np.column_stack([nodes, np.full(len(nodes), int(body), dtype=np.int64)])
        super().__init__(name, conn, X, dim, law, **kw)
        if self.friction > 0:
            raise ValueError("BodyPlaneContact: friction is not built")
        self.dof_names = ("ux", "uy", "rz") if dim == 2 else \
            ("ux", "uy", "uz", "rx", "ry", "rz")
        # 3D: the body turns by spins (quaternions), as a rigid body does
        self.additive_rotations = dim == 2
        n = np.asarray(normal, dtype=float)[:dim]
        self.n_ref = n / np.linalg.norm(n)
        self.point = np.asarray(point, dtype=float)[:dim]
        self.R = np.broadcast_to(np.asarray(radius, dtype=float), (len(self),)).copy()
        self.d_ref = (self.X[:, 0] - self.X[:, 1])[:, :dim]
        self.g_ref = (self.X[:, 0, :dim] - self.point) @ self.n_ref - self.R

    def conserving(self, s0, s1, sm, inc, hist, spins=None):
        """The step form (:meth:`Contact.conserving`); 3D rotations are the body's spins."""
        return super().conserving(s0, s1, sm, inc, hist)

    # --- kinematics -----------------------------------------------------------------------------
    def _parts(self, state):
        if self.dim == 3:
            return self._parts3(state)
        """``du = u_a - u_b (E, 2)``, the body's angle ``(E,)``, ``n (E, 2)``, ``g (E,)``."""
        u = state.u[self.conn][:, :, :2]
        du = u[:, 0] - u[:, 1]
        theta = state.rot[self.conn[:, 1]]
        n = _rot(theta, self.n_ref)
        # n - n_0 = sin(theta) z x n_0 - 2 sin^2(theta/2) n_0, without cos(theta) - 1
        turn = (np.sin(theta)[:, None] * _perp(self.n_ref[None])
                - (2 * np.sin(0.5 * theta) ** 2)[:, None] * self.n_ref)
        g = (self.g_ref + np.einsum("ei,ei->e", du, n)
             + np.einsum("ei,ei->e", self.d_ref, turn))
        return du, theta, n, g

    def _gap(self, state, hessian=True):
        if self.dim == 3:
            return self._gap3(state, hessian)
        du, _, n, g = self._parts(state)
        r = self.d_ref + du
        p = _perp(n)
        E = len(self)
        grad = np.zeros((E, 6))
        grad[:, 0:2], grad[:, 3:5], grad[:, 5] = n, -n, np.einsum("ei,ei->e", r, p)
        if not hessian:
            return g, grad, None, n
        hess = np.zeros((E, 6, 6))
        hess[:, 0:2, 5] = hess[:, 5, 0:2] = p
        hess[:, 3:5, 5] = hess[:, 5, 3:5] = -p
        hess[:, 5, 5] = -np.einsum("ei,ei->e", r, n)
        return g, grad, hess, n

    def _gap_step(self, s0, s1):
        if self.dim == 3:
            return self._gap_step3(s0, s1)
        du0, t0, n0, g0 = self._parts(s0)
        du1, t1, n1, g1 = self._parts(s1)
        rm = self.d_ref + 0.5 * (du0 + du1)
        nm = 0.5 * (n0 + n1)
        half = 0.5 * (t1 - t0)
        sc, dsc = so3.sinc(half)
        n_mid = _rot(0.5 * (t0 + t1), self.n_ref)
        p_mid = _perp(n_mid)
        rp = np.einsum("ei,ei->e", rm, p_mid)
        E = len(self)
        G = np.zeros((E, 6))
        G[:, 0:2], G[:, 3:5], G[:, 5] = nm, -nm, sc * rp
        dG = np.zeros((E, 6, 6))
        p1 = _perp(n1)
        dG[:, 0:2, 5], dG[:, 3:5, 5] = 0.5 * p1, -0.5 * p1
        dG[:, 5, 0:2], dG[:, 5, 3:5] = 0.5 * sc[:, None] * p_mid, -0.5 * sc[:, None] * p_mid
        dG[:, 5, 5] = 0.5 * dsc * rp - 0.5 * sc * np.einsum("ei,ei->e", rm, n_mid)
        r1 = self.d_ref + du1
        grad1 = np.zeros((E, 6))
        grad1[:, 0:2], grad1[:, 3:5], grad1[:, 5] = n1, -n1, np.einsum("ei,ei->e", r1, p1)
        unit = nm / np.linalg.norm(nm, axis=1)[:, None]
        return g0, g1, G, dG, grad1, unit, np.zeros((E, 2, 2))

    # --- 3D: the body's rotation a quaternion, turned by spins ---------------------------------
    def _parts3(self, state):
        """``du (E, 3)``, the body's rotation matrices ``(E, 3, 3)``, ``n (E, 3)``, ``g (E,)``."""
        u = state.u[self.conn]
        du = u[:, 0] - u[:, 1]
        Rb = so3.quat_to_matrix(state.rot[self.conn[:, 1]])
        n = Rb @ self.n_ref
        g = (self.g_ref + np.einsum("ei,ei->e", du, n)
             + np.einsum("ei,ei->e", self.d_ref, n - self.n_ref))
        return du, Rb, n, g

    def _gap3(self, state, hessian=True):
        """Gradient ``[n, 0, -n, n x r]`` by the spheres' motion and the body's spins."""
        du, _, n, g = self._parts3(state)
        r = self.d_ref + du
        E = len(self)
        grad = np.zeros((E, 12))
        grad[:, 0:3], grad[:, 6:9], grad[:, 9:12] = n, -n, so3.cross(n, r)
        if not hessian:
            return g, grad, None, n
        hn = so3.hat(n)
        hess = np.zeros((E, 12, 12))
        hess[:, 0:3, 9:12], hess[:, 6:9, 9:12] = -hn, hn        # d n = dw x n
        hess[:, 9:12, 0:3], hess[:, 9:12, 6:9] = hn, -hn
        hess[:, 9:12, 9:12] = so3.hat(r) @ hn
        return g, grad, hess, n

    def _gap_step3(self, s0, s1):
        """The Cayley form: ``n_1 - n_0 = psi x mean(n)``, ``psi = c theta`` (module doc)."""
        du0, R0, n0, g0 = self._parts3(s0)
        du1, _, n1, g1 = self._parts3(s1)
        qb0, qb1 = s0.rot[self.conn[:, 1]], s1.rot[self.conn[:, 1]]
        theta = np.einsum("eij,ej->ei", R0, so3.rotvec_from_quat(
            so3.quat_mul(so3.quat_conj(qb0), qb1)))          # log(R1 R0^T), spatial
        c, dc = _cayley_factor(theta)
        rm = self.d_ref + 0.5 * (du0 + du1)
        nm = 0.5 * (n0 + n1)
        m = so3.cross(nm, rm)
        E = len(self)
        G = np.zeros((E, 12))
        G[:, 0:3], G[:, 6:9], G[:, 9:12] = nm, -nm, c[:, None] * m
        h1, hm = so3.hat(n1), so3.hat(nm)
        dG = np.zeros((E, 12, 12))
        dG[:, 0:3, 9:12], dG[:, 6:9, 9:12] = -0.5 * h1, 0.5 * h1
        dG[:, 9:12, 0:3] = 0.5 * c[:, None, None] * hm
        dG[:, 9:12, 6:9] = -0.5 * c[:, None, None] * hm
        # a spin dw of R1 turns theta by jl_inv(theta) dw (and n1 by dw x n1)
        dG[:, 9:12, 9:12] = (0.5 * c[:, None, None] * so3.hat(rm) @ h1
                             + np.einsum("ei,ej->eij", m, dc) @ so3.jl_inv(theta))
        r1 = self.d_ref + du1
        grad1 = np.zeros((E, 12))
        grad1[:, 0:3], grad1[:, 6:9], grad1[:, 9:12] = n1, -n1, so3.cross(n1, r1)
        unit = nm / np.linalg.norm(nm, axis=1)[:, None]
        return g0, g1, G, dG, grad1, unit, np.zeros((E, 3, 3))

    def _relative(self, q: NDArray) -> NDArray:
        """(E, dim) the sphere's motion relative to the body node's (friction is not built)."""
        k = self.ndn
        return q[:, 0:self.dim] - q[:, k:k + self.dim]

    def _spread(self, phi: NDArray) -> NDArray:
        k = self.ndn
        out = np.zeros((len(self), self.nd))
        out[:, 0:self.dim], out[:, k:k + self.dim] = phi, -phi
        return out

    def properties(self) -> dict[str, NDArray]:
        """Stiffness and radius per pair."""
        return {"K": self.law.K, "R": self.R}

