"""The inertia of a co-rotational superelement: its component's lumped mass on the recovered nodes.

A :class:`~fem.elements.superelement.corot.CorotSuperelement` recovers its component's nodes
``y(q)`` (positions ``y_j = x_a + R(alpha) c_j`` and rotations ``psi_j``,
:meth:`~fem.elements.superelement.corot.CorotSuperelement.recovered`). With the component's
lumped diagonal mass ``M_d`` (the file's ``/component/mass``: translational ``m_j``, isotropic, and
rotary ``J_j``, both unchanged by planar rotations) the kinetic energy is exactly

    T = y_dot^T M_d y_dot / 2,          y_dot = J_y(q) q_dot,

a constant mass on ``y``: the nodes' lumped inertia of the full component, carried through the
reduction's recovery, with every centrifugal and Coriolis term of the floating frame.

Mid-point family (:meth:`FloatingInertia.midpoint_force`): the recovered velocities are updated as
nodal ones are, ``y_dot_1 = 2 dy/h - y_dot_0`` with ``dy = G_y (q_1 - q_0)`` and ``G_y`` the
discrete gradient of ``y(q)``
(:meth:`~fem.elements.superelement.corot.CorotSuperelement.recovery_gradient`:
``G_y (q_1 - q_0) = y(q_1) - y(q_0)`` exactly). The inertial force

    f = G_y^T M_d (y_dot_1 - y_dot_0) / h

does the work ``f . (q_1 - q_0) = (y_dot_1 - y_dot_0) . M_d (y_dot_1 + y_dot_0) / 2 = T_1 - T_0``
exactly, at any step. Its Newton tangent is ``(2/h^2) G_y^T M_d J_y(q_1)`` (the change of
``G_y`` with ``q_1`` is left out: it is of relative order ``(omega h)^2``). The price of the exact
energy is ``O(n r)`` a step (``n`` the component's unknowns, ``r`` the reduced ones): ``T``
is applied to the gradients at every evaluation.

``y_dot`` and ``y_ddot`` live in ``state.rates[<group>]`` (``v (n,)``, ``a (n,)``, with the
``stamp`` of the nodal velocities, rates of ``eta`` and coordinates they belong to,
:meth:`FloatingInertia.rate_fields`), the rates of ``eta`` in the state's ``internal_v``. The
force evaluation computes the trial ``y_dot_1`` from ``s0`` and ``s1``; the integrator's rate
update writes the converged one (:meth:`FloatingInertia.update_rates`). Where the state has none,
or its nodes' velocities or coordinates changed since (a velocity field applied at a step's
start, a static step), they are ``J_y(q) q_dot``. Kinetic energy, linear momentum ``sum m_j
y_dot_j`` and angular momentum ``sum m_j y_j x y_dot_j + J_j psi_dot_j`` (about the origin) come
from them.

At interface nodes that turn by Cayley parameters (2D energy-conserving scheme, nodes of
co-rotational beams) the rotation rows, written for the angle increment, are carried over by the
secant ``s = dtheta / psi`` as the integrator does for elements
(:meth:`fem.integrators.midpoint.EnergyConserving._cayley_rows`).

Newmark family (:meth:`FloatingInertia.newmark_force`): ``y_dot = J_y q_dot`` has no memory of
its own, and ``f = J_y^T M_d y_ddot`` with ``y_ddot = J_y q_ddot + d2y/dq2 [q_dot, q_dot]``
(:meth:`~fem.elements.superelement.corot.CorotSuperelement.recovery_acceleration`), the
``q_ddot`` and ``q_dot`` of Newmark's updates (nodes, and ``eta`` in ``internal_a``,
``internal_v``): Lagrange's equations for ``T`` with a constant ``M_d``. Its tangent takes
``J_y^T M_d J_y / (beta h^2)`` and the velocity terms' ``gamma / (beta h)`` part; the change of
``J_y`` with ``q`` is left out (Newton converges linearly where it matters). Without a step
(consistent reactions, :mod:`fem.constraints.handlers.consistent`) it gives the velocity terms
``J_y^T M_d (d2y/dq2 [q_dot, q_dot])`` at zero acceleration.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray


class FloatingInertia:
    """The element-level inertia group of one co-rotational superelement (module docstring)."""

    def __init__(self, system, index: int):
        g = system.model.groups[index]
        self.index, self.group, self.dim = index, g, g.dim
        self.Md = np.asarray(g.data.component_mass, dtype=float)     # (n,)
        self.M = g.Me                                                # reduced, for estimates
        self.name = g.name                                           # state.rates[name]
        self._last = None          # the last trial rates (midpoint_force), for update_rates

    @staticmethod
    def rate_fields(g) -> dict[str, tuple]:
        """The rates of superelement ``g`` in ``State.rates``: ``{name: (shape, fill)}``.

        ``v``, ``a (n,)``: ``y_dot``, ``y_ddot`` on the component's unknowns; ``stamp (2 nde,)``
        the nodal velocities and rates of ``eta`` (``q_dot``) and the coordinates ``q`` they
        belong to, NaN until an integrator writes them.
        """
        n = len(g.data.component_mass)
        return {"v": ((n,), 0.0), "a": ((n,), 0.0), "stamp": ((2 * g.nde,), float("nan"))}

    # --- rates ------------------------------------------------------------------------------------
    def _eta(self, state, what: str = "internal_v") -> NDArray:
        """(m,) the rates (or accelerations) of ``eta`` in ``state``."""
        g = self.group
        return getattr(state, what)[g.internal_start:g.internal_start + g.n_internal]

    def _edot(self, state, eta_rate: NDArray | None = None) -> NDArray:
        """(nde,) ``q_dot``: the nodes' velocities and the rates of ``eta``."""
        g = self.group
        nodal = g.element_vector(state.v)[0]
        return np.concatenate([nodal, self._eta(state) if eta_rate is None else eta_rate])

    def _stamp(self, state) -> NDArray:
        """(2 nde,) ``q_dot`` and ``q`` of ``state``: what stored rates belong to."""
        return np.concatenate([self._edot(state), self.group.vector(state)])

    def rates(self, state) -> NDArray:
        """``y_dot (n,)`` of ``state`` (``J_y q_dot`` if the state has none for its ``q_dot``)."""
        got = state.rates.get(self.name)
        if got and "v" in got and ("stamp" not in got
                                   or np.array_equal(got["stamp"], self._stamp(state))):
            return got["v"]
        g = self.group
        return g.recovery_jacobian(g.vector(state)) @ self._edot(state)

    # --- energies and momenta -------------------------------------------------------------------
    def kinetic_energy(self, state) -> float:
        """``y_dot^T M_d y_dot / 2``."""
        yd = self.rates(state)
        return 0.5 * float(yd @ (self.Md * yd))

    def linear_momentum(self, state) -> NDArray:
        """(3,) ``sum m_j y_dot_j``."""
        g, yd = self.group, self.rates(state)
        out = np.zeros(3)
        out[:2] = (self.Md[g.rows_u] * yd[g.rows_u]).sum(axis=0)
        return out

    def angular_momentum(self, state, X: NDArray) -> NDArray:
        """(3,) about the origin: ``sum m_j y_j x y_dot_j + J_j psi_dot_j``."""
        g, yd = self.group, self.rates(state)
        y = g.recovered(g.vector(state))
        ru, rr = g.rows_u, g.rows_r[g.r_nodes]
        py = self.Md[ru] * yd[ru]
        L = np.zeros(3)
        L[2] = float((y[ru][:, 0] * py[:, 1] - y[ru][:, 1] * py[:, 0]).sum()
                     + (self.Md[rr] * yd[rr]).sum())
        return L

    def balance(self, state, X: NDArray) -> tuple[float, NDArray, NDArray]:
        """The kinetic energy, linear and angular momentum (a frame's three numbers)."""
        return (self.kinetic_energy(state), self.linear_momentum(state),
                self.angular_momentum(state, X))

    def nodal_mass(self, n: int) -> NDArray:
        """(n,) the reduced mass's diagonal at the interface nodes' ux (diagonal estimates)."""
        g, out = self.group, np.zeros(n)
        rows = g.tx[:, 0]
        np.add.at(out, g.conn.ravel(), self.M[0, rows, rows])
        return out

    def element_mass(self, state) -> NDArray:
        """(E, nde, nde) ``J_y^T M_d J_y`` (at the reference: the file's reduced ``M``)."""
        J = self.group.recovery_jacobian(self.group.vector(state))
        return (J.T @ (self.Md[:, None] * J))[None]

    # --- the integrator families ----------------------------------------------------------------
    def _trial(self, s0, s1, h: float):
        """``e1``, ``f1``, ``G_y``, ``y_dot_0`` and the trial ``y_dot_1`` of the step.

        ``y_dot_1 = 2 G_y (q_1 - q_0)/h - y_dot_0``: a pure function of the two states.
        """
        g = self.group
        e0, e1 = g.vector(s0), g.vector(s1)
        f0, f1 = g.local_frame(e0), g.local_frame(e1)
        Gy = g.recovery_gradient(f0, f1)
        v0 = self.rates(s0)
        v1 = 2.0 * (Gy @ (e1 - e0)) / h - v0
        return e1, f1, Gy, v0, v1

    def midpoint_force(self, s0, s1, kin, h: float, tangent: bool = True):
        """``G_y^T M_d (y_dot_1 - y_dot_0) / h`` and its tangent, at the trial rates of ``s1``."""
        g = self.group
        e1, f1, Gy, v0, v1 = self._trial(s0, s1, h)
        self._last = (s0, h, e1.copy(), self._stamp(s0), v0, v1)
        f = Gy.T @ (self.Md * (v1 - v0)) / h
        K = None
        if tangent:
            K = (2.0 / h**2) * Gy.T @ (self.Md[:, None] * g.recovery_jacobian(e1, f1))
        secant = getattr(kin, "secant", None)
        if secant is not None:
            f, K = self._cayley_rows(kin, f, K)
        return f[None], None if K is None else K[None]

    def update_rates(self, s0, s1, kin, h: float) -> None:
        """Write ``y_dot_1``, ``y_ddot_1`` of the converged step into ``s1`` (mid-point family).

        The rates of ``eta`` are the integrator's (``internal_v``, set before).
        """
        last = self._last
        if (last is not None and last[0] is s0 and last[1] == h
                and np.array_equal(last[2], self.group.vector(s1))
                and np.array_equal(last[3], self._stamp(s0))):
            v0, v1 = last[4], last[5]           # the evaluation at this s1 (the same numbers)
        else:
            v0, v1 = self._trial(s0, s1, h)[3:]
        s1.rates[self.name] = {"v": v1, "a": (v1 - v0) / h, "stamp": self._stamp(s1)}

    def _cayley_rows(self, kin, f: NDArray, K: NDArray | None):
        """Rotation rows at Cayley nodes times ``s = dtheta/psi`` (+ ``f ds/ddtheta``)."""
        g = self.group
        has = g.tr >= 0
        rows, nodes = g.tr[has], g.conn[0][has]
        s, ds = kin.secant[nodes], kin.dsecant[nodes]
        f = f.copy()
        f_theta = f[rows].copy()
        f[rows] *= s
        if K is not None:
            K = K.copy()
            K[rows] *= s[:, None]
            K[rows, rows] += f_theta * ds
        return f, K

    def newmark_force(self, state, kin=None, h=None, beta=None, gamma=None):
        """``J_y^T M_d y_ddot`` (module doc) and, given the step, its tangent.

        Without ``kin`` at zero acceleration: the velocity terms ``J_y^T M_d d2y[q_dot, q_dot]``
        the consistent reactions need.
        """
        g = self.group
        e = g.vector(state)
        edot = self._edot(state)
        ydd = g.recovery_acceleration(e, edot)
        J = g.recovery_jacobian(e)
        eddot = np.concatenate([g.element_vector(state.a)[0], self._eta(state, "internal_a")])
        if kin is not None or np.any(eddot):
            ydd = J @ eddot + ydd
        f = (J.T @ (self.Md * ydd))[None]
        if kin is None:
            return f
        c, cg = 1.0 / (beta * h * h), gamma / (beta * h)
        MJ = self.Md[:, None] * J
        # the velocity terms are quadratic in q_dot: central differences by unit rates are
        # their exact derivative (up to round-off)
        n = len(edot)
        C = np.empty((len(ydd), n))
        for k in range(n):
            dk = np.zeros(n)
            dk[k] = 1.0
            C[:, k] = 0.5 * (g.recovery_acceleration(e, edot + dk)
                             - g.recovery_acceleration(e, edot - dk))
        K = c * (J.T @ MJ) + cg * (J.T @ (self.Md[:, None] * C))
        return f, K[None]

    def linear_blocks(self, state, spin: NDArray | None = None, center: NDArray | None = None):
        """Element blocks of the linearized inertia at ``state``: ``(f, M, D, K)``.

        ``f`` the inertial force (:meth:`newmark_force`), ``M = J_y^T M_d J_y``, ``D`` its
        derivative by ``q_dot`` (the velocity terms), ``K`` by ``q`` at fixed rates (central
        differences of ``f``; zero at rest). In a frame turning at ``spin (3,)`` (2D: about
        z) through ``center``, ``f`` adds the turning frame's forces on the recovered nodes,
        ``J_y^T m (2 W y_dot + W W (y - c))`` on their translations (``W = hat(Omega)``; the
        rotations ``psi`` carry ``I_z`` alone, which a planar spin does not load): exact on the
        recovered configuration (the component's lumped masses at ``y(q)``), with
        ``D = J_y^T (2 m W) J_y`` (the central differences in ``q_dot`` of a force linear and
        quadratic in it are exact) and ``K`` (centrifugal softening ``J_y^T m W W J_y`` and the
        change of ``J_y`` with ``q`` under the centrifugal forces) by central differences in
        ``q``. A zero or no ``spin`` adds nothing (the fixed frame's blocks, bit for bit).
        """
        g = self.group
        e, edot = g.vector(state), self._edot(state)
        eddot = np.concatenate([g.element_vector(state.a)[0], self._eta(state, "internal_a")])
        spinning = spin is not None and bool(np.any(spin))
        if spinning:
            w = float(np.asarray(spin, dtype=float)[2])       # planar: about z
            c = np.zeros(2) if center is None else np.asarray(center, dtype=float)[:2]
            ru = g.rows_u
            mu = self.Md[ru]                                    # (Nt, 2)
            W = w * np.array([[0.0, -1.0], [1.0, 0.0]])

        def force(e_, edot_):
            J = g.recovery_jacobian(e_)
            acc = J @ eddot + g.recovery_acceleration(e_, edot_)
            out = J.T @ (self.Md * acc)
            if spinning:
                y, yd = g.recovered(e_), J @ edot_
                fy = np.zeros(len(y))
                fy[ru] = mu * (2 * yd[ru] @ W.T + (y[ru] - c) @ (W @ W).T)
                out = out + J.T @ fy
            return out

        J = g.recovery_jacobian(e)
        f = force(e, edot)
        n = len(e)
        D, K = np.zeros((n, n)), np.zeros((n, n))
        moving = bool(np.any(edot) or np.any(eddot)) or spinning
        for k in range(n):
            dk = np.zeros(n)
            dk[k] = 1.0
            if np.any(edot) or spinning:
                D[:, k] = 0.5 * (force(e, edot + dk) - force(e, edot - dk))
            if moving:
                step = 1e-6 * max(1.0, abs(e[k]))
                K[:, k] = (force(e + step * dk, edot) - force(e - step * dk, edot)) / (2 * step)
        return f[None], (J.T @ (self.Md[:, None] * J))[None], D[None], K[None]
