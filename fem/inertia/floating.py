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

``y_dot`` (and the rates of ``eta``) live in ``state.conserving["<group>.rates"]``
(``v (n,)``, ``a (n,)``, ``eta (m,)``); absent, they are ``J_y(q) q_dot`` from the nodes'
velocities with ``eta`` at rest. Kinetic energy, linear momentum ``sum m_j y_dot_j`` and angular
momentum ``sum m_j y_j x y_dot_j + J_j psi_dot_j`` (about the origin) come from them.

At interface nodes that turn by Cayley parameters (2D energy-conserving scheme, nodes of
co-rotational beams) the rotation rows, written for the angle increment, are carried over by the
secant ``s = dtheta / psi`` as the integrator does for elements
(:meth:`fem.integrators.midpoint.EnergyConserving._cayley_rows`).

Newmark family: refused as for linear superelements; without a step (consistent reactions,
:mod:`fem.constraints.handlers.consistent`) :meth:`FloatingInertia.newmark_force` gives the velocity
terms ``J_y^T M_d (d2y/dq2 [q_dot, q_dot])``.
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
        self.key = f"{g.name}.rates"

    # --- rates ------------------------------------------------------------------------------------
    def _edot(self, state, eta_rate: NDArray | None = None) -> NDArray:
        """(nde,) ``q_dot``: the nodes' velocities and the rates of ``eta``."""
        g = self.group
        nodal = g.element_vector(state.v)[0]
        if eta_rate is None:
            got = state.conserving.get(self.key)
            eta_rate = np.zeros(g.n_internal) if got is None else got["eta"]
        return np.concatenate([nodal, eta_rate])

    def rates(self, state) -> NDArray:
        """``y_dot (n,)`` of ``state`` (``J_y q_dot`` if the state has none)."""
        got = state.conserving.get(self.key)
        if got is not None:
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
    def midpoint_force(self, s0, s1, kin, h: float, tangent: bool = True):
        """``G_y^T M_d (y_dot_1 - y_dot_0) / h`` and its tangent; sets the rates of ``s1``."""
        g = self.group
        e0, e1 = g.vector(s0), g.vector(s1)
        f0, f1 = g.local_frame(e0), g.local_frame(e1)
        Gy = g.recovery_gradient(f0, f1)
        v0 = self.rates(s0)
        got = s0.conserving.get(self.key)
        w0 = np.zeros(g.n_internal) if got is None else got["eta"]
        v1 = 2.0 * (Gy @ (e1 - e0)) / h - v0
        w1 = 2.0 * (e1[g.ie] - e0[g.ie]) / h - w0
        s1.conserving[self.key] = {"v": v1, "a": (v1 - v0) / h, "eta": w1}
        f = Gy.T @ (self.Md * (v1 - v0)) / h
        K = None
        if tangent:
            K = (2.0 / h**2) * Gy.T @ (self.Md[:, None] * g.recovery_jacobian(e1, f1))
        secant = getattr(kin, "secant", None)
        if secant is not None:
            f, K = self._cayley_rows(kin, f, K)
        return f[None], None if K is None else K[None]

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
        """Without ``kin`` the velocity terms; with ``kin`` (a Newmark step) refused.

        The velocity terms ``J_y^T M_d d2y[q_dot, q_dot]`` at zero acceleration are what the
        consistent reactions need.
        """
        g = self.group
        if kin is None:
            e = g.vector(state)
            ydd = g.recovery_acceleration(e, self._edot(state))
            J = g.recovery_jacobian(e)
            return (J.T @ (self.Md * ydd))[None]
        from fem.errors import ModelError

        raise ModelError(f"superelement '{g.name}': its modal coordinates are integrated by the "
                         "mid-point family only; use integrator = \"energy_conserving\" or "
                         "\"midpoint\"")
