"""The inertia of a 3D co-rotational superelement: its component's lumped mass on the frame.

A :class:`~fem.elements.superelement.corot3d.CorotSuperelement3D` recovers its component's
node positions ``y_j = x_a + R_a c_j(q_l)`` and local rotations ``w_j(q_l)`` (``T q_l``) on
node a's frame. With the file's lumped diagonal mass (``/component/mass``: ``m_j`` on the
translations, ``J_j`` on the rotations, axes of the component as reduced, which are the frame's
at the reference) the kinetic energy is

    T = sum_j m_j |y_dot_j|^2 / 2 + sum_j V_j . J_j V_j / 2,      V_j = W_a + w_dot_j,

``W_a = R_a^T omega_a`` the frame's body angular velocity: the translations exactly (every
centrifugal and Coriolis term of the floating frame), the rotary inertia of node ``j`` with its
body angular velocity taken as the frame's plus the local rotations' rates and its inertia
tensor in the frame's axes (exact to first order in the local rotations, the linear
reduction's own order; the floating frame of reference's usual rotary term, Shabana,
"Dynamics of multibody systems", 4th ed., section 5.5, for lumped nodes).

Energy-conserving scheme (:meth:`FloatingInertia3D.midpoint_force`), node ``a`` turning by
``R_a1 = cay(psi_a) R_a0``, ``Theta_a = R_a0^T psi_a``; the recovered velocities are updated as
nodal ones are: ``y_dot_1 = 2 dy/h - y_dot_0``, ``V_1 = 2 (Theta_a + dw)/h - V_0``, with

    dy_j = dx_a + (I - hat(psi_a)^2/4) Rbar_a dc_j + psi_a x ytil_j,
    ytil_j = (R_a0 c_j0 + R_a1 c_j1)/2,   Rbar_a = (R_a0 + R_a1)/2,

exact (``R_a1 - R_a0 = hat(psi_a) Rbar_a``, and ``hat(psi) R_0 = R_1 - R_0 - hat(psi)^2 Rbar/2``)
and ``dc = T_u G inc``, ``dw = T_theta G inc`` (``G`` the element's discrete gradient of
``q_l``). The inertial force ``G_y^T m (y_dot_1 - y_dot_0)/h`` plus, for the rotary part,
``(Pi_1 - Pi_0)/h`` on ``psi_a`` (``Pi = R_a sum_j J_j V_j``, Simo & Wong 1991's spatial form)
and ``G^T T_theta^T J (V_1 - V_0)/h`` on ``q``, does the work ``T_1 - T_0`` exactly
(``R_a1^T psi_a = R_a0^T psi_a``). On a mid-point rigid motion (``dx_i = t + omega x xbar_i``,
``psi_i = omega``) ``G`` vanishes and ``dy_j = t + omega x (y_j0 + y_j1)/2``, so the force's
resultant and moment are the changes of ``sum m y_dot`` and ``sum m y x y_dot + Pi`` over the
step: with the elastic force's (zero, :mod:`fem.elements.superelement.corot3d`) both momenta
are conserved exactly. Newton's tangent leaves out the change of ``G``, ``Rbar_a`` and
``ytil`` with ``q_1`` (of relative order ``(omega h)^2``).

The rates live in ``state.rates[<group>]``: ``v (n,)`` holds ``y_dot`` on the component's
translation rows and ``V`` on its rotation rows, ``a`` their step differences over ``h``,
``stamp`` as :mod:`fem.inertia.floating`. Without stored rates, ``y_dot = J_y q_dot`` and
``V = R_a^T omega_a + T_theta B q_dot``.

**Linearized about rest** (the linearize step, issue 33 item 5;
:meth:`FloatingInertia3D.linear_blocks`): about a state at rest relative to a frame turning at
the constant ``Omega`` about an axis through ``c`` (all vectors in the turning frame's axes; a
static state: ``Omega = 0``). The recovered nodes' absolute accelerations are ``y_ddot + 2
Omega x y_dot + Omega x (Omega x (y - c))`` and their absolute body rates ``V = R_a^T Omega +
J_V q_dot``; the virtual work of d'Alembert's forces (the continuous form of the scheme's:
``G_y^T m`` on the translations, ``R_a (J V_dot + W_a x J V)`` summed on node a's spin and
``J V_dot`` through ``q_l``) gives, at ``q_dot = 0``::

    f = J_y^T m (J_y q_ddot + W W (y - c)) + J_V^T J J_V q_ddot + Omega x Pi   (on spin a)
    M = J_y^T m J_y + J_V^T J J_V
    D = 2 J_y^T m W J_y + J_V^T J R_a^T W P_a + P_a^T (W R_a J J_V - hat(Pi) P_a)
    K = J_y^T m W W J_y + d(J_y^T F_c)/dq + P_a^T W (J_s W - hat(J_s Omega)) P_a

with ``W = hat(Omega)``, ``P_a`` the rows of node a's spin, ``J_s = R_a (sum_j J_j) R_a^T``,
``Pi = J_s Omega`` and ``F_c = m W W (y - c)`` the centrifugal forces at fixed value
(:meth:`FloatingInertia3D.geometric_jy`: the frame's turn, the change of ``B`` and of the lever
``R_a c_j``). ``D`` is skew (gyroscopic and Coriolis); ``K`` is the derivative of ``f`` at
``q_ddot = 0`` exactly (the accelerations' own terms in ``K`` are left out: zero at an
equilibrium, which is what a linearize step under spin finds). The rotary inertia's tensor
stays in the frame's axes as in the scheme (the local rotations do not turn it), so a spin
loads the local rotations through ``M``, ``D`` only. A state where the superelement moves
(the end of a dynamic step) is refused.

Integrators: the energy-conserving scheme only; the deck refuses the others.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from fem.errors import ModelError
from fem.rotations import cay_inv_spin, hat


class FloatingInertia3D:
    """The element-level inertia group of one 3D co-rotational superelement (module doc)."""

    def __init__(self, system, index: int):
        g = system.model.groups[index]
        self.index, self.group, self.dim = index, g, g.dim
        Md = np.asarray(g.data.component_mass, dtype=float)
        self.Md = Md
        self.m = Md[g.rows_u]                                   # (Nt, 3)
        self.J = Md[g.rows_r]                                   # (Nr, 3) diagonal, frame axes
        self.M = g.Me
        self.name = g.name
        self._last = None

    @staticmethod
    def rate_fields(g) -> dict[str, tuple]:
        """As :meth:`fem.inertia.floating.FloatingInertia.rate_fields`."""
        n = len(g.data.component_mass)
        return {"v": ((n,), 0.0), "a": ((n,), 0.0), "stamp": ((2 * g.nde,), float("nan"))}

    # --- rates ----------------------------------------------------------------------------------
    def _eta(self, state, what: str = "internal_v") -> NDArray:
        g = self.group
        return getattr(state, what)[g.internal_start:g.internal_start + g.n_internal]

    def _edot(self, state) -> NDArray:
        """(nde,) ``q_dot``: velocities, spatial angular velocities, rates of ``eta``."""
        return np.concatenate([self.group.element_vector(state.v)[0], self._eta(state)])

    def _stamp(self, state) -> NDArray:
        return np.concatenate([self._edot(state), self.group.vector(state)])

    def _split(self, v: NDArray) -> tuple[NDArray, NDArray]:
        g = self.group
        return v[g.rows_u], v[g.rows_r]

    def _join(self, yd: NDArray, V: NDArray) -> NDArray:
        g = self.group
        out = np.zeros(len(self.Md))
        out[g.rows_u], out[g.rows_r] = yd, V
        return out

    def velocity_jacobians(self, fr) -> tuple[NDArray, NDArray]:
        """``J_y (Nt, 3, nde)`` and ``J_V (Nr, 3, nde)`` at frame ``fr``."""
        g = self.group
        B = g.jacobian(fr.Ra, fr.Rs, fr.p)
        TB = g.data.T @ B[g.pos]                                 # (n, nde)
        c, _ = g.local_field(fr.ql)
        Jy = np.einsum("ij,njk->nik", fr.Ra, TB[g.rows_u])
        Jy[:, np.arange(3), g.tx[0]] += 1.0
        Jy[:, :, g.tr[0]] -= hat(c @ fr.Ra.T)
        JV = TB[g.rows_r].copy()
        JV[:, :, g.tr[0]] += fr.Ra.T
        return Jy, JV

    def rates(self, state) -> tuple[NDArray, NDArray]:
        """``y_dot (Nt, 3)``, ``V (Nr, 3)`` of ``state`` (stored, or from ``q_dot``)."""
        got = state.rates.get(self.name)
        if got and "v" in got and ("stamp" not in got
                                   or np.array_equal(got["stamp"], self._stamp(state))):
            return self._split(got["v"])
        Jy, JV = self.velocity_jacobians(self.group.local_frame(state))
        qd = self._edot(state)
        return Jy @ qd, JV @ qd

    # --- energies and momenta -------------------------------------------------------------------
    def kinetic_energy(self, state) -> float:
        """``sum m |y_dot|^2 / 2 + sum V . J V / 2``."""
        yd, V = self.rates(state)
        return 0.5 * float((self.m * yd * yd).sum() + (self.J * V * V).sum())

    def linear_momentum(self, state) -> NDArray:
        """(3,) ``sum m y_dot``."""
        return (self.m * self.rates(state)[0]).sum(axis=0)

    def angular_momentum(self, state, X: NDArray) -> NDArray:
        """(3,) about the origin: ``sum m y x y_dot + R_a sum J V``."""
        g = self.group
        fr = g.local_frame(state)
        y, _ = g.recovered(fr)
        yd, V = self.rates(state)
        return np.cross(y, self.m * yd).sum(axis=0) + fr.Ra @ (self.J * V).sum(axis=0)

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
        """(E, nde, nde) ``J_y^T m J_y + J_V^T J J_V`` (at the reference: the file's ``M``)."""
        Jy, JV = self.velocity_jacobians(self.group.local_frame(state))
        return (np.einsum("nik,ni,nil->kl", Jy, self.m, Jy)
                + np.einsum("nik,ni,nil->kl", JV, self.J, JV))[None]

    # --- the energy-conserving scheme -----------------------------------------------------------
    def _trial(self, s0, s1, kin, h: float):
        """What the step's force and rates need: frames, ``G``, increments, trial rates."""
        g = self.group
        if getattr(kin, "dTheta", None) is None or not np.all(kin.on[g.conn[0]]):
            raise ModelError(f"superelement '{g.name}': a 3D co-rotational superelement is "
                             "integrated by the energy-conserving scheme only (its interface "
                             "nodes turning by Cayley parameters)")
        f0, f1 = g.local_frame(s0), g.local_frame(s1)
        G = g.step_gradient(f0, f1)
        inc = np.concatenate([g.element_vector(kin.increment)[0],
                              g.modal(s1)[0] - g.modal(s0)[0]])
        dq = G @ inc                                             # = q_l1 - q_l0
        dw = (g.data.T @ dq[g.pos])[g.rows_r]
        c0, _ = g.local_field(f0.ql)
        c1, _ = g.local_field(f1.ql)
        psi = inc[g.tr[0]]
        Theta = f0.Ra.T @ psi
        dy = (f1.xa + c1 @ f1.Ra.T) - (f0.xa + c0 @ f0.Ra.T)
        yd0, V0 = self.rates(s0)
        yd1 = 2.0 * dy / h - yd0
        V1 = 2.0 * (Theta + dw) / h - V0
        ytil = 0.5 * (c0 @ f0.Ra.T + c1 @ f1.Ra.T)
        Rbar = 0.5 * (f0.Ra + f1.Ra)
        A = np.eye(3) - 0.25 * hat(psi) @ hat(psi)
        return f0, f1, G, psi, ytil, Rbar, A, yd0, yd1, V0, V1

    def midpoint_force(self, s0, s1, kin, h: float, tangent: bool = True):
        """The inertial force (module doc) and its Newton tangent."""
        g = self.group
        f0, f1, G, psi, ytil, Rbar, A, yd0, yd1, V0, V1 = self._trial(s0, s1, kin, h)
        self._last = (s0, h, g.vector(s1).copy(), self._stamp(s0), yd0, yd1, V0, V1)
        F = self.m * (yd1 - yd0) / h                             # (Nt, 3)
        Q = self.J * (V1 - V0) / h                               # (Nr, 3)
        nde = g.nde
        f = np.zeros(nde)
        f[g.tx[0]] += F.sum(axis=0)
        f[g.tr[0]] += np.cross(ytil, F).sum(axis=0)
        S0, S1 = (self.J * V0).sum(axis=0), (self.J * V1).sum(axis=0)
        f[g.tr[0]] += (f1.Ra @ S1 - f0.Ra @ S0) / h
        # through q_l: G^T (T_u^T (Rbar^T A F) + T_theta^T Q)
        z = np.zeros(len(self.Md))
        z[g.rows_u] = F @ A @ Rbar                               # rows: Rbar^T A F_j
        z[g.rows_r] = Q
        zq = np.zeros(nde)
        zq[g.pos] = g.data.T.T @ z
        f += G.T @ zq
        K = None
        if tangent:
            Jy1, JV1 = self.velocity_jacobians(f1)
            B1 = g.jacobian(f1.Ra, f1.Rs, f1.p)
            dTheta = np.zeros((3, nde))
            dTheta[:, g.tr[0]] = kin.dTheta[g.conn[0, 0]]
            TB1 = g.data.T @ B1[g.pos]
            dV = 2.0 / h * (dTheta[None] + TB1[g.rows_r])         # (Nr, 3, nde)
            dF = (2.0 / h**2) * self.m[:, :, None] * Jy1          # (Nt, 3, nde)
            dQ = self.J[:, :, None] * dV / h
            Gy = np.zeros((len(F), 3, nde))                       # the translations' G_y
            TG = g.data.T @ G[g.pos]
            Gy[:] = np.einsum("ij,jk,nkl->nil", A, Rbar, TG[g.rows_u])
            Gy[:, np.arange(3), g.tx[0]] += 1.0
            Gy[:, :, g.tr[0]] -= hat(ytil)
            K = np.einsum("nik,nil->kl", Gy, dF)
            K += np.einsum("nik,nil->kl", TG[g.rows_r], dQ)
            K[g.tr[0]] += f1.Ra @ np.einsum("nil->il", self.J[:, :, None] * dV) / h
            K[g.tr[0][:, None], g.tr[0][None, :]] -= hat(f1.Ra @ S1) / h
            K += g.geometric(zq, Rbar, 0.5 * (f0.Rs + f1.Rs), 0.5 * (f0.p + f1.p), f1.Rs, 0.5)
            # Rbar, A(psi) and ytil move with node a's spin, ytil with c_1 too
            c1 = g.local_field(f1.ql)[0]
            AF = F @ A
            dpsi = cay_inv_spin(psi)
            dAF = 0.25 * (hat(np.cross(psi, F)) + hat(psi) @ hat(F)) @ dpsi     # (Nt, 3, 3)
            dz = 0.5 * np.einsum("ji,njk->nik", f1.Ra, hat(AF)) + np.einsum(
                "ji,njk->nik", Rbar, dAF)
            zt = np.zeros((len(self.Md), 3))
            zt[g.rows_u] = dz
            K[:, g.tr[0]] += G.T[:, g.pos] @ (g.data.T.T @ zt.reshape(len(self.Md), 3))
            Rc1 = c1 @ f1.Ra.T
            K[g.tr[0][:, None], g.tr[0][None, :]] += 0.5 * np.einsum(
                "nij,njk->ik", hat(F), hat(Rc1))
            K[g.tr[0]] -= 0.5 * np.einsum("nij,jk,nkl->il", hat(F), f1.Ra, TB1[g.rows_u])
        return f[None], None if K is None else K[None]

    def update_rates(self, s0, s1, kin, h: float) -> None:
        """Write ``v``, ``a`` and the ``stamp`` of the converged step into ``s1``."""
        last = self._last
        if (last is not None and last[0] is s0 and last[1] == h
                and np.array_equal(last[2], self.group.vector(s1))
                and np.array_equal(last[3], self._stamp(s0))):
            yd0, yd1, V0, V1 = last[4:]
        else:
            yd0, yd1, V0, V1 = self._trial(s0, s1, kin, h)[7:]
        v0, v1 = self._join(yd0, V0), self._join(yd1, V1)
        s1.rates[self.name] = {"v": v1, "a": (v1 - v0) / h, "stamp": self._stamp(s1)}

    #: the consistent reactions of an output frame need :meth:`newmark_force`, which this
    #: inertia refuses: the dynamic step writes the time steps' multipliers instead
    consistent_reactions = False

    def newmark_force(self, *args, **kwargs):
        """Refused: the 3D frame's inertia is written for the energy-conserving scheme only."""
        raise ModelError(f"superelement '{self.group.name}': the Newmark family does not take "
                         "3D co-rotational superelements yet; use integrator = "
                         "\"energy_conserving\"")

    # --- the linearize step (issue 33 item 5; module doc "Linearized about rest") -------------
    def geometric_jy(self, fr, F: NDArray) -> NDArray:
        """``(nde, nde)`` the derivative of ``J_y^T F`` by ``q`` at fixed ``F (Nt, 3)``.

        ``J_y,j^T F_j = (T_u B)_j^T R_a^T F_j + F_j`` on ``x_a`` ``+ (R_a c_j) x F_j`` on node
        a's spin: ``R_a`` turns (``d(R_a^T F) = R_a^T hat(F) dphi_a``), ``B`` changes
        (:meth:`~fem.elements.superelement.corot3d.CorotSuperelement3D.geometric` at ``s =
        T_u^T R_a^T F``) and ``R_a c_j`` moves (``dphi_a x R_a c_j + R_a T_u,j B dq``).
        """
        g = self.group
        Ra = fr.Ra
        B = g.jacobian(Ra, fr.Rs, fr.p)
        TB = g.data.T @ B[g.pos]                                 # (n, nde)
        T = g.data.T
        ta = g.tr[0]
        z = np.zeros(len(self.Md))
        z[g.rows_u] = F @ Ra                                     # rows: R_a^T F_j
        s = np.zeros(g.nde)
        s[g.pos] = T.T @ z
        K = g.geometric(s, Ra, fr.Rs, fr.p)
        zt = np.zeros((len(self.Md), 3))
        zt[g.rows_u] = np.einsum("ji,njk->nik", Ra, hat(F))      # R_a^T hat(F_j)
        K[:, ta] += B[g.pos].T @ (T.T @ zt)
        c, _ = g.local_field(fr.ql)
        HF = hat(F)
        K[ta[:, None], ta[None, :]] += np.einsum("nij,njk->ik", HF, hat(c @ Ra.T))
        K[ta] -= np.einsum("nij,jk,nkl->il", HF, Ra, TB[g.rows_u])
        return K

    def linear_blocks(self, state, spin: NDArray | None = None, center: NDArray | None = None):
        """Element blocks of the linearized inertia at ``state``: ``(f, M, D, K)``, ``E = 1``.

        About a state at rest relative to the frame turning at ``spin (3,)`` through
        ``center (3,)`` (module doc "Linearized about rest"); a state where the superelement
        moves is refused (:class:`~fem.errors.ModelError`).
        """
        g = self.group
        qd = self._edot(state)
        if np.any(qd):
            raise ModelError(f"superelement '{g.name}': a linearize step about a state where "
                             "a 3D co-rotational superelement moves (the end of a dynamic "
                             "step) is not built yet; linearize about a static state, or about "
                             "a steady spin (steps[i].spin)")
        fr = g.local_frame(state)
        Jy, JV = self.velocity_jacobians(fr)
        qdd = np.concatenate([g.element_vector(state.a)[0], self._eta(state, "internal_a")])
        Omega = np.zeros(3) if spin is None else np.asarray(spin, dtype=float).reshape(3)
        c = np.zeros(3) if center is None else np.asarray(center, dtype=float).reshape(3)
        W = hat(Omega)
        m, J, ta = self.m, self.J, g.tr[0]
        y, _ = g.recovered(fr)
        Fc = m * ((y - c) @ (W @ W).T)                           # (Nt, 3) centrifugal
        Ob = fr.Ra.T @ Omega                                     # the spin in the frame's axes
        Jsum = J.sum(axis=0)
        Pi = fr.Ra @ (Jsum * Ob)                                 # spatial, the rest's momentum
        f = (np.einsum("nik,ni->k", Jy, m * (Jy @ qdd) + Fc)
             + np.einsum("nik,ni->k", JV, J * (JV @ qdd)))
        f[ta] += np.cross(Omega, Pi)
        M = np.einsum("nik,ni,nil->kl", Jy, m, Jy) + np.einsum("nik,ni,nil->kl", JV, J, JV)
        D = 2.0 * np.einsum("nik,ni,ij,njl->kl", Jy, m, W, Jy)
        RaW = fr.Ra.T @ W                                        # d(R_a^T Omega)/dt by omega_a
        D[:, ta] += np.einsum("nik,ni,ij->kj", JV, J, RaW)
        D[ta] += W @ fr.Ra @ np.einsum("ni,nil->il", J, JV)
        D[ta[:, None], ta[None, :]] -= hat(Pi)
        K = np.einsum("nik,ni,ij,njl->kl", Jy, m, W @ W, Jy) + self.geometric_jy(fr, Fc)
        Js = fr.Ra @ (Jsum[:, None] * fr.Ra.T)
        K[ta[:, None], ta[None, :]] += W @ (Js @ W - hat(Js @ Omega))
        return f[None], M[None], D[None], K[None]
