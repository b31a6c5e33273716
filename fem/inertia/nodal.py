"""The nodal inertia group: lumped masses and rotary inertias at the nodes (Simo-Wong).

Every node carries a translational mass ``m`` and, where it has rotations, a rotary inertia: a
scalar ``I`` in 2D, a ``3 x 3`` tensor ``J`` in 3D, written in the node's material frame
(the global axes at the reference). They are the lumped (HRZ) masses of the element groups plus the
deck's point masses.

Rotations of 3D nodes are updated by spatial increments, ``R_n+1 = exp(hat(theta)) R_n``; the body
increment is ``Theta = R_n^T theta`` and body angular velocities ``W = R^T omega`` (``state.v``
holds the spatial ``omega``). The spatial angular momentum of a node is ``Pi = R J W``. Nodes used
only by small-displacement elements (``System.additive``) and all 2D nodes have additive rotation
coordinates and are treated like translations.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from fem import rotations as so3


class NodalInertia:
    """Lumped nodal masses and rotary inertias of a model (plus point masses).

    Attributes
    ----------
    m : (n,) translational mass per node
    I : (n,) rotary inertia about z (2D) ; J : (n, 3, 3) in the node's material frame (3D)
    lie : (n,) bool, 3D nodes whose rotations are spatial spins (not additive)
    """

    def __init__(self, system, state=None):
        model = system.model
        self.dim = model.dim
        self.nslots = model.nslots
        n = model.n_nodes
        state = state or system.reference_state()
        self.m = np.zeros(n)
        self.I = np.zeros(n)
        self.J = np.zeros((n, 3, 3))
        for g in model.groups:
            if "mass" not in g.capabilities:
                continue
            m, J = g.lumped_inertia(state)
            for a in range(g.nen):
                np.add.at(self.m, g.conn[:, a], m[:, a])
                if self.dim == 2:
                    np.add.at(self.I, g.conn[:, a], J[:, a, 2, 2])
                else:
                    np.add.at(self.J, g.conn[:, a], J[:, a])
        for pm in model.masses:
            np.add.at(self.m, pm.nodes, pm.mass)
            if self.dim == 2:
                np.add.at(self.I, pm.nodes, pm.inertia[2, 2])
            else:
                np.add.at(self.J, pm.nodes, pm.inertia)
        additive = system.additive
        self.lie = (np.ones(n, dtype=bool) if additive is None else ~additive) & (self.dim == 3)
        self._mass2d = None          # (h, M / h, 2 M / h^2 blocks) of 2D nodes, midpoint_force
        self._spinning = None        # whether any node has rotary inertia (3D), midpoint_force

    #: no element-level groups beside it (what a :class:`fem.inertia.InertiaSum` holds in
    #: ``extras``)
    extras: tuple = ()

    @property
    def nodal(self) -> NodalInertia:
        """Itself: the nodal group of a model whose inertia is nodal only."""
        return self

    # --- the mass matrix ----------------------------------------------------------------------
    @staticmethod
    def point_masses(system) -> NDArray:
        """(n, nslots, nslots) the nodal blocks of the model's point masses alone."""
        model = system.model
        d = model.dim
        out = np.zeros((model.n_nodes, model.nslots, model.nslots))
        for pm in model.masses:
            for k in range(d):
                np.add.at(out[:, k, k], pm.nodes, pm.mass)
            if d == 2:
                np.add.at(out[:, 2, 2], pm.nodes, pm.inertia[2, 2])
            else:
                np.add.at(out[:, 3:6, 3:6], pm.nodes, pm.inertia)
        return out

    def mass_blocks(self) -> NDArray:
        """(n, nslots, nslots) the lumped mass matrix's nodal blocks (global axes, reference)."""
        d = self.dim
        out = np.zeros((len(self.m), self.nslots, self.nslots))
        out[:, range(d), range(d)] = self.m[:, None]
        if d == 2:
            out[:, 2, 2] = self.I
        else:
            out[:, 3:6, 3:6] = self.J
        return out

    def diagonal(self) -> NDArray:
        """(n, nslots) the diagonal of the nodal blocks: masses and principal-axis inertias."""
        return np.einsum("nii->ni", self.mass_blocks())

    # --- per-node quantities ------------------------------------------------------------------
    def body_velocity(self, state, R: NDArray | None = None) -> NDArray:
        """(n, 3) body angular velocities ``W = R^T omega`` (additive nodes: omega itself)."""
        omega = state.v[:, 3:6]
        R = state.rotation_matrices() if R is None else R
        W = np.einsum("nji,nj->ni", R, omega)
        W[~self.lie] = omega[~self.lie]
        return W

    def spatial_momentum(self, state, R: NDArray | None = None) -> NDArray:
        """(n, 3) nodal angular momenta: ``R J W`` (3D), ``I omega_z`` on z (2D)."""
        if self.dim == 2:
            out = np.zeros((len(self.m), 3))
            out[:, 2] = self.I * state.v[:, 2]
            return out
        R = state.rotation_matrices() if R is None else R
        JW = np.einsum("nij,nj->ni", self.J, self.body_velocity(state, R))
        out = np.einsum("nij,nj->ni", R, JW)
        out[~self.lie] = JW[~self.lie]
        return out

    def kinetic_energy(self, state) -> float:
        """Translational plus rotational kinetic energy."""
        d = self.dim
        T = 0.5 * float(np.sum(self.m * np.einsum("ni,ni->n", state.v[:, :d], state.v[:, :d])))
        if d == 2:
            return T + 0.5 * float(np.sum(self.I * state.v[:, 2] ** 2))
        W = self.body_velocity(state)
        return T + 0.5 * float(np.einsum("ni,nij,nj->", W, self.J, W))

    def linear_momentum(self, state) -> NDArray:
        """(3,) total linear momentum."""
        p = np.zeros(3)
        p[:self.dim] = np.sum(self.m[:, None] * state.v[:, :self.dim], axis=0)
        return p

    def angular_momentum(self, state, X: NDArray) -> NDArray:
        """(3,) total angular momentum about the origin (``X`` reference coordinates)."""
        x = X + state.u
        v = np.zeros_like(x)
        v[:, :self.dim] = state.v[:, :self.dim]
        return (np.sum(so3.cross(x, self.m[:, None] * v), axis=0)
                + np.sum(self.spatial_momentum(state), axis=0))

    def balance(self, state, X: NDArray) -> tuple[float, NDArray, NDArray]:
        """The kinetic energy, linear and angular momentum (a frame's three numbers).

        In 2D the three methods' operations written out once (the same bits, fewer calls).
        """
        if self.dim != 2:
            return (self.kinetic_energy(state), self.linear_momentum(state),
                    self.angular_momentum(state, X))
        v = state.v
        vt, m = v[:, :2], self.m[:, None]
        T = 0.5 * float((self.m * np.einsum("ni,ni->n", vt, vt)).sum())
        T = T + 0.5 * float((self.I * v[:, 2] ** 2).sum())
        L = np.zeros(3)
        L[:2] = (m * vt).sum(axis=0)
        x = X + state.u
        vx = np.zeros_like(x)
        vx[:, :2] = vt
        spin = np.zeros((len(self.m), 3))
        spin[:, 2] = self.I * v[:, 2]
        return T, L, so3.cross(x, m * vx).sum(axis=0) + spin.sum(axis=0)

    # --- inertial forces of the integrator families -------------------------------------------
    def midpoint_force(self, s0, s1, kin, h: float, Pi0=None, R1=None) -> tuple[NDArray, NDArray]:
        """Inertial forces ``(n, nslots)`` of the mid-point family and their node-block tangents.

        Translations and additive rotations: ``m (v1 - v0)/h`` with tangent ``2 m / h^2``. Lie
        nodes: ``(Pi1 - Pi0)/h`` (Simo & Wong 1991), whose dot product with the spatial increment
        is exactly the change of rotational kinetic energy; tangent
        ``(-hat(Pi1) + (2/h) R1 J jl_inv(Theta)^T R1^T) / h``.

        The tangent is exact along Newton's spins ``dw`` of ``R1``: ``Pi1 = R1 J W1`` with
        ``W1 = 2 Theta/h - W0`` and ``exp(hat(Theta)) = R0^T R1``, so ``dPi1 = hat(dw) Pi1
        + (2/h) R1 J dTheta`` with ``dTheta = jl_inv(Theta) R0^T dw`` (a left perturbation of
        ``R0^T R1`` by the body spin ``R0^T dw``), and ``jl_inv(Theta) R0^T = jl_inv(Theta)^T
        R1^T`` because ``jl_inv(Theta)^T = jl_inv(Theta) exp(hat(Theta))`` and
        ``R1 = R0 exp(hat(Theta))``.

        Nodes turned by ``cay(psi) R0`` (``kin.on``, :class:`fem.integrators.cayley.
        CayleyKinematics3D`): ``Theta = R0^T psi``, whose change by a spin is ``kin.dTheta``;
        ``psi`` is an eigenvector of ``cay(psi)``, so ``psi . (Pi1 - Pi0)/h = T1 - T0`` still.
        """
        d, n = s0.dim, len(s0.u)
        if d == 2:                # M (v1 - v0) / h, M = diag(m, m, I) per node; K = 2 M / h^2
            if self._mass2d is None or self._mass2d[0] != h:
                mass = np.column_stack([self.m, self.m, self.I])
                K = np.zeros((n, 3, 3))
                K[:, range(3), range(3)] = mass * (2 / h**2)
                self._mass2d = (h, mass / h, K)
            _, mass_h, K = self._mass2d
            return (s1.v - s0.v) * mass_h, K.copy()      # the caller may scale K in place
        ns = 6
        f = np.zeros((n, ns))
        K = np.zeros((n, ns, ns))
        m = self.m
        f[:, :d] = m[:, None] * (s1.v[:, :d] - s0.v[:, :d]) / h
        K[:, range(d), range(d)] = (2 * m / h**2)[:, None]
        if self._spinning is None:
            self._spinning = bool(np.any(self.J))
        if not self._spinning:       # no rotary inertia (point masses): Pi = 0, no rotation terms
            return f, K
        lie = self.lie
        R1 = s1.rotation_matrices() if R1 is None else R1
        Pi0 = self.spatial_momentum(s0) if Pi0 is None else Pi0
        Pi1 = self.spatial_momentum(s1, R1)
        f[:, 3:6] = (Pi1 - Pi0) / h
        Kr = (-so3.hat(Pi1) + (2 / h) * R1 @ self.J @ np.swapaxes(so3.jl_inv(kin.Theta), 1, 2)
              @ np.swapaxes(R1, 1, 2)) / h
        on = getattr(kin, "on", None)
        if on is not None:        # turned by cay(psi) R0: dTheta = R0^T cay_inv_spin(psi) dw
            Kr[on] = (-so3.hat(Pi1[on]) + (2 / h) * R1[on] @ self.J[on] @ kin.dTheta[on]) / h
        K[lie, 3:6, 3:6] = Kr[lie]
        K[~lie, 3:6, 3:6] = 2 * self.J[~lie] / h**2
        return f, K

    def newmark_force(self, state, kin=None, h=None, beta=None, gamma=None):
        """Inertial forces ``M a`` of a state (and, given the step, their tangent node blocks).

        Lie nodes: ``R (J A + W x J W)`` with body ``W``, ``A``; tangent
        ``-hat(f) + R [J/(beta h^2) + gamma/(beta h) (hat(W) J - hat(J W))] jl_inv(Theta)^T R^T``.
        """
        d, n = state.dim, len(state.u)
        ns = 3 if d == 2 else 6
        f = np.zeros((n, ns))
        m = self.m
        f[:, :d] = m[:, None] * state.a[:, :d]
        if d == 2:
            f[:, 2] = self.I * state.a[:, 2]
        else:
            R = state.rotation_matrices()
            W = self.body_velocity(state, R)
            A = np.einsum("nji,nj->ni", R, state.a[:, 3:6])
            A[~self.lie] = state.a[~self.lie, 3:6]
            JW = np.einsum("nij,nj->ni", self.J, W)
            body = np.einsum("nij,nj->ni", self.J, A) + so3.cross(W, JW)
            f[:, 3:6] = np.einsum("nij,nj->ni", R, body)
            f[~self.lie, 3:6] = np.einsum("nij,nj->ni", self.J, A)[~self.lie]
        if kin is None:
            return f
        K = np.zeros((n, ns, ns))
        c = 1 / (beta * h * h)
        K[:, range(d), range(d)] = (c * m)[:, None]
        if d == 2:
            K[:, 2, 2] = c * self.I
            return f, K
        lie = self.lie
        inner = c * self.J + gamma / (beta * h) * (so3.hat(W) @ self.J - so3.hat(JW))
        Kr = -so3.hat(f[:, 3:6]) + R @ inner @ np.swapaxes(so3.jl_inv(kin.Theta), 1, 2) \
            @ np.swapaxes(R, 1, 2)
        K[lie, 3:6, 3:6] = Kr[lie]
        K[~lie, 3:6, 3:6] = c * self.J[~lie]
        return f, K
