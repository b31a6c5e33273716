"""The inertia of a linear superelement: its constant reduced mass on its coordinates.

In a frame turning at the constant ``Omega`` about a point ``c`` (a linearize step or a spin
sweep, :mod:`fem.analysis.linear_model`) the superelement adds the inertial forces of the turning
frame of its component's own mass distribution, mapped by the reduction's basis ``T`` (the file's
``/component/T``, recovery ``u_c = T q`` on the component's unknowns, in the model's axes: a
superelement is placed by a translation only). With the component's lumped diagonal mass
(``/component/mass``: translations ``m_j`` per slot, rotations ``J_j`` about the global
axes), its nodes at ``x_j = X_j + u_j`` and the nodal terms of
:func:`fem.analysis.linear_model.inertial_forces` for nodes with additive rotation vectors (the
component's, a linear one)::

    translations:  m_j (2 Omega x v_j + Omega x (Omega x (x_j - c)))
    rotations:     Omega x J_j Omega + Omega x J_j w_j + w_j x J_j Omega + J_j (Omega x w_j)

(the forces at ``Omega`` less those at rest; 2D: the rotations carry ``I_z`` alone, with no
term of the spin), so on ``q``: the force ``T^T f_c`` at the state (its centrifugal part at
rest: the relative equilibrium includes it), the gyroscopic matrix ``T^T D_c T`` (translations
``2 m_j hat(Omega)``, rotations ``hat(Omega) J_j - hat(J_j Omega) + J_j hat(Omega)``) and the
centrifugal softening ``T^T K_c T`` (``m_j hat(Omega)^2``). The reduced mass stays the file's
``T^T M_c T``. Exact for the reduced model (the full component's lumped inertia restricted to
``u_c = T q``): against the full model the error is the reduction's. No geometric stiffening: a
linear superelement's ``K`` is constant, so the centrifugal tension does not stiffen it (the
full model to compare with is of linear beams).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from fem import lazy
from fem.rotations import hat

sp = lazy.module("scipy.sparse")


class SuperelementInertia:
    """The constant mass ``M`` of a superelement on ``q = [u_b; eta]`` (an element-level group).

    ``T = q_dot^T M q_dot / 2`` with the interface nodes' velocities (translations, and the
    rates of the rotation vectors at the additive nodes a linear superelement has) and the rates
    of ``eta``, the state's ``internal_v`` (``internal_a``: their accelerations), which the
    integrators update as they do the nodes' (mid-point family: ``v1 = 2 (eta_1 - eta_0) / h -
    v0``; Newmark family: Newmark's formulas; :mod:`fem.integrators.base`). The group declares
    no rates of its own.

    Mid-point family: ``f = M (q_dot_1 - q_dot_0) / h`` does the work ``T_1 - T_0`` exactly over
    a step (``f . (q_1 - q_0) = (q_dot_1 - q_dot_0) . M (q_dot_1 + q_dot_0) / 2``), and its
    tangent is ``2 M / h^2``. Newmark family: ``f = M q_ddot`` (a constant mass has no
    velocity-dependent inertial force), tangent ``M / (beta h^2)``.
    Momenta from the file's ``R^T M T`` (:attr:`fem.elements.superelement.Superelement.momentum`).

    Exact at interface nodes with additive rotations (used by small-displacement elements only,
    :attr:`fem.system.System.additive`). Where a node turns by spatial spins (a co-rotational
    beam, a joint or a rigid body shares it) its rotation slot holds the spatial angular
    velocity and the step's spatial increment, which differ from the rates and increments of
    the rotation vector at second order in the rotation: there the energy balance holds to that
    order (3.7e-8 of the energy at 2e-4 rad, with a spherical joint at a superelement node).
    """

    def __init__(self, system, index: int):
        g = system.model.groups[index]
        self.index, self.group, self.dim = index, g, g.dim
        self.M = g.Me                                       # (E, nd + m, nd + m)
        self.name = g.name

    @staticmethod
    def rate_fields(g) -> dict[str, tuple]:
        """None: the rates of ``eta`` are the state's ``internal_v``, ``internal_a``."""
        return {}

    def _slice(self) -> slice:
        g = self.group
        return slice(g.internal_start, g.internal_start + g.n_internal)

    def rates(self, state) -> tuple[NDArray, NDArray]:
        """``(E, m)`` rates and accelerations of ``eta``."""
        k = self._slice()
        return state.internal_v[k][None, :], state.internal_a[k][None, :]

    def velocities(self, state) -> NDArray:
        """(E, nd + m) ``q_dot``."""
        return np.hstack([self.group.element_vector(state.v), self.rates(state)[0]])

    def accelerations(self, state) -> NDArray:
        """(E, nd + m) ``q_ddot``."""
        return np.hstack([self.group.element_vector(state.a), self.rates(state)[1]])

    def kinetic_energy(self, state) -> float:
        """``q_dot^T M q_dot / 2``."""
        v = self.velocities(state)
        return 0.5 * float(np.einsum("ei,eij,ej->", v, self.M, v))

    def linear_momentum(self, state) -> NDArray:
        """(3,) of the component."""
        return np.einsum("eij,ej->i", self.group.momentum[:, :3], self.velocities(state))

    def angular_momentum(self, state, X: NDArray) -> NDArray:
        """(3,) of the component about the origin (reference positions: linear)."""
        v = self.velocities(state)
        L = np.einsum("eij,ej->i", self.group.momentum[:, 3:], v)
        return L + np.cross(self.group.offset, self.linear_momentum(state))

    def balance(self, state, X: NDArray) -> tuple[float, NDArray, NDArray]:
        """The kinetic energy, linear and angular momentum (a frame's three numbers)."""
        return (self.kinetic_energy(state), self.linear_momentum(state),
                self.angular_momentum(state, X))

    def nodal_mass(self, n: int) -> NDArray:
        """(n,) the diagonal translational mass at the interface nodes (diagonal estimates)."""
        g, out = self.group, np.zeros(n)
        if "ux" in g.dof_names:
            k = g.dof_names.index("ux")
            rows = np.arange(g.nen) * g.ndn + k
            np.add.at(out, g.conn.ravel(), self.M[:, rows, rows].ravel())
        return out

    def element_mass(self, state) -> NDArray:
        """(E, nd + m, nd + m) ``M``."""
        return self.M.copy()

    def midpoint_force(self, s0, s1, kin, h: float, tangent: bool = True):
        """``M (q_dot_1 - q_dot_0) / h`` and ``2 M / h^2`` (``s1``'s trial rates of ``eta``)."""
        f = np.einsum("eij,ej->ei", self.M, self.velocities(s1) - self.velocities(s0)) / h
        return f, (2 / h**2) * self.M if tangent else None

    def update_rates(self, s0, s1, kin, h: float) -> None:
        """Nothing: the rates of ``eta`` are the integrator's (``internal_v``)."""

    def newmark_force(self, state, kin=None, h=None, beta=None, gamma=None):
        """``M q_ddot``; given the step, with its tangent ``M / (beta h^2)``.

        A constant mass has no velocity-dependent inertial force: zero at zero acceleration,
        what the consistent accelerations of constrained steps ask
        (:mod:`fem.constraints.handlers.consistent`).
        """
        acc = self.accelerations(state)
        if kin is None and not np.any(acc):
            return np.zeros(acc.shape)
        f = np.einsum("eij,ej->ei", self.M, acc)
        if kin is None:
            return f
        return f, self.M / (beta * h * h)

    def linear_blocks(self, state, spin: NDArray | None = None, center: NDArray | None = None):
        """Element blocks of the linearized inertia: ``(M q_ddot, M, 0, 0)`` at rest.

        In a frame turning at ``spin (3,)`` about ``center (3,)``: plus the component's
        inertial forces of the turning frame (module docstring), ``(M q_ddot + T^T f_c, M,
        T^T D_c T, T^T K_c T)``. A zero or no ``spin`` adds nothing (the fixed frame's blocks,
        bit for bit).
        """
        z = np.zeros_like(self.M)
        f = self.newmark_force(state)
        if spin is None or not np.any(spin):
            return f, self.M.copy(), z, z.copy()
        fs, Ds, Ks = self.spin_terms(state, np.asarray(spin, dtype=float),
                                     np.zeros(3) if center is None else center)
        return f + fs, self.M.copy(), Ds, Ks

    def spin_terms(self, state, Omega: NDArray, c: NDArray):
        """``(E, nde)`` force, ``(E, nde, nde)`` ``D`` and ``K`` of a frame turning at ``Omega``.

        The component's terms (module docstring) on the element vector ``[u_b; eta]``.
        """
        g = self.group
        d = g.data
        if d.component_mass is None:
            from fem.errors import ModelError

            raise ModelError(f"superelement '{g.name}': its file has no /component/mass (a "
                             "cms_reduce with mass = \"lumped\" keeps it), which a turning "
                             "frame needs")
        T, dofs, mc = d.T, d.component_dofs, np.asarray(d.component_mass, dtype=float)
        dim, nc = self.dim, len(d.component_ids)
        ns = 3 if dim == 2 else 6
        q = g.coordinates(state)[0, g.pos]
        qd = self.velocities(state)[0, g.pos]
        u, v = np.zeros((nc, ns)), np.zeros((nc, ns))
        u[dofs[:, 0], dofs[:, 1]] = T @ q
        v[dofs[:, 0], dofs[:, 1]] = T @ qd
        mass = np.zeros((nc, ns))
        mass[dofs[:, 0], dofs[:, 1]] = mc
        W = hat(Omega)
        x = d.component_coordinates + g.offset
        x[:, :dim] += u[:, :dim]
        vt = np.zeros((nc, 3))
        vt[:, :dim] = v[:, :dim]
        # translations: m (2 W v + W W (x - c)); D = 2 m W, K = m W W (rows by slot mass)
        f = np.zeros((nc, ns))
        Db, Kb = np.zeros((nc, ns, ns)), np.zeros((nc, ns, ns))
        f[:, :dim] = mass[:, :dim] * (2 * vt @ W.T + (x - c) @ (W @ W).T)[:, :dim]
        Db[:, :dim, :dim] = 2 * mass[:, :dim, None] * W[:dim, :dim]
        Kb[:, :dim, :dim] = mass[:, :dim, None] * (W @ W)[:dim, :dim]
        if dim == 3:             # rotations (additive): the spin's part of the nodal terms
            J = mass[:, 3:6]                                    # diagonal J_j
            w = v[:, 3:6]
            JO = J * Omega
            f[:, 3:6] = (np.cross(Omega, JO) + np.cross(Omega, J * w) + np.cross(w, JO)
                         + J * np.cross(Omega, w))
            Db[:, 3:6, 3:6] = (W[None] * J[:, None, :] - hat(JO)
                               + J[:, :, None] * W[None])
        fq = T.T @ f[dofs[:, 0], dofs[:, 1]]
        # the nodal blocks on the component's unknowns (a node's rows couple), mapped by T
        table = np.full((nc, ns), -1)
        table[dofs[:, 0], dofs[:, 1]] = np.arange(len(dofs))
        ri, rk = table[:, :, None], table[:, None, :]
        both = np.broadcast_to((ri >= 0) & (rk >= 0), Db.shape)
        rows = np.broadcast_to(ri, Db.shape)[both]
        cols = np.broadcast_to(rk, Db.shape)[both]
        out = []
        for B in (Db, Kb):
            Bc = sp.csr_matrix((B[both], (rows, cols)), shape=(len(dofs), len(dofs)))
            out.append(g._embed(T.T @ (Bc @ T)))
        fe = np.zeros((1, g.nd + d.n_modal))
        fe[0, g.pos] = fq
        return fe, out[0], out[1]
