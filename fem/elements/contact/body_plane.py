"""Spheres on nodes against a plane carried by a rigid body (plane models): a body's plane.

The plane of a :class:`BodyPlaneContact` is given at the reference configuration (a point ``p``
and a normal ``n_0`` pointing to the open side) and moves and turns with a body node ``b``
(``ux, uy, rz``: a rigid body, or any node with a rotation), so a sphere on node ``a`` of radius
``R`` has the gap::

    g = (x_a - x_b) . n(theta) - (p - X_b) . n_0 - R,     n(theta) = Q(theta) n_0

(``Q`` the plane rotation by the body's angle ``theta``), computed as ``g_ref + du . n + d_ref .
(n - n_0)`` with ``d_ref = X_a - X_b`` and ``du = u_a - u_b`` so that the digits of the
reference stay apart from the displacements'. Its gradient (element vector ``u_a, v_a, rz_a,
u_b, v_b, rz_b``; the sphere's rotation takes no part) is ``[n, 0, -n, r . n_perp]``, ``r = x_a
- x_b``, ``n_perp = Q'(theta) n_0``: the body takes the force ``F n`` at its node and the moment
of the force about it.

Energy-conserving scheme: the discrete gradient of the gap over a step is exact by the product
rule ``r_1 . n_1 - r_0 . n_0 = (r_1 - r_0) . mean(n) + mean(r) . (n_1 - n_0)`` and the exact
difference quotient of the rotation ``(Q(theta_1) - Q(theta_0)) / dtheta = sinc(dtheta/2)
Q'(theta_m)`` (as the plane bushing's, :mod:`fem.elements.force.bushing`)::

    G = [mean(n), 0, -mean(n), sinc(dtheta/2) mean(r) . Q'(theta_m) n_0],   G . dq = g_1 - g_0

so the elastic laws conserve energy to round-off and the damped ones take what is booked
(:mod:`fem.elements.contact.group`); the forces are equal and opposite (linear momentum exact).
The moment about the body is ``sinc(dtheta/2) / cos(dtheta/2)`` times that of the mid-point
forces about the mid-point arm, so angular momentum is exact while the body does not turn (a
central impact) and otherwise changes by ``O(dtheta^2)`` of the contact's moment per step, as a
hinge on an ``exp`` node does (:mod:`fem.constraints.joint`). Its tangent is the exact derivative
by the end state.

Not built: friction against a body's plane, and 3D models (the deck refuses both).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from fem.elements.contact.group import Contact


def _rot(theta: NDArray, v: NDArray) -> NDArray:
    """(E, 2) ``Q(theta) v`` for ``v (2,)``."""
    c, s = np.cos(theta), np.sin(theta)
    return np.stack([c * v[0] - s * v[1], s * v[0] + c * v[1]], axis=-1)


def _perp(n: NDArray) -> NDArray:
    """(E, 2) ``z x n``: ``Q'(theta) n_0`` for ``n = Q(theta) n_0``."""
    return np.stack([-n[:, 1], n[:, 0]], axis=-1)


def _sinc(x: NDArray) -> tuple[NDArray, NDArray]:
    """``sin x / x`` and its derivative (series near 0)."""
    small = np.abs(x) < 1e-4
    xs = np.where(small, 1.0, x)
    s = np.where(small, 1 - x**2 / 6, np.sin(xs) / xs)
    ds = np.where(small, -x / 3 + x**3 / 30, (xs * np.cos(xs) - np.sin(xs)) / xs**2)
    return s, ds


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
        if dim != 2:
            raise ValueError("BodyPlaneContact: plane models only")
        nodes = np.asarray(nodes, dtype=np.int64)
        conn = np.column_stack([nodes, np.full(len(nodes), int(body), dtype=np.int64)])
        super().__init__(name, conn, X, dim, law, **kw)
        if self.friction > 0:
            raise ValueError("BodyPlaneContact: friction is not built")
        self.dof_names = ("ux", "uy", "rz")
        n = np.asarray(normal, dtype=float)[:2]
        self.n_ref = n / np.linalg.norm(n)
        self.point = np.asarray(point, dtype=float)[:2]
        self.R = np.broadcast_to(np.asarray(radius, dtype=float), (len(self),)).copy()
        self.d_ref = (self.X[:, 0] - self.X[:, 1])[:, :2]
        self.g_ref = (self.X[:, 0, :2] - self.point) @ self.n_ref - self.R

    # --- kinematics -----------------------------------------------------------------------------
    def _parts(self, state):
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
        du0, t0, n0, g0 = self._parts(s0)
        du1, t1, n1, g1 = self._parts(s1)
        rm = self.d_ref + 0.5 * (du0 + du1)
        nm = 0.5 * (n0 + n1)
        half = 0.5 * (t1 - t0)
        sc, dsc = _sinc(half)
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

    def _relative(self, q: NDArray) -> NDArray:
        """(E, 2) the sphere's motion relative to the body node's (friction is not built)."""
        return q[:, 0:2] - q[:, 3:5]

    def _spread(self, phi: NDArray) -> NDArray:
        out = np.zeros((len(self), 6))
        out[:, 0:2], out[:, 3:5] = phi, -phi
        return out

    def properties(self) -> dict[str, NDArray]:
        """Stiffness and radius per pair."""
        return {"K": self.law.K, "R": self.R}

