"""Inertia groups: the masses of a model as dynamics, modal analysis and energy balances see them.

Inertia is a capability of a group, separate from its stiffness: an element family declares
``"mass"`` and gives its lumped nodal inertia
(:meth:`fem.elements.base.ElementGroup.lumped_inertia`), point masses add theirs, and an
*inertia group* turns them into what the analyses need. Every inertia group gives
``kinetic_energy(state)``, ``linear_momentum(state)`` (3,) and ``angular_momentum(state, X)``
(3,, about the origin), and the inertial forces of the two integrator families, in one of two
shapes:

* **nodal** (:class:`NodalInertia`, one per model): ``mass_blocks()`` (n, nslots, nslots) of the
  mass matrix, ``diagonal()``, ``midpoint_force(s0, s1, kin, h, Pi0, R1)`` and
  ``newmark_force(state, kin, h, beta, gamma)`` as nodal arrays ``(n, nslots)`` with node-block
  tangents; it also keeps what the nodal velocity updates use (``lie``, ``body_velocity``,
  ``spatial_momentum``);
* **element-level** (:class:`fem.inertia_beam.ConsistentBeamInertia` for beams with
  ``inertia = "consistent"``, :class:`SuperelementInertia` for superelements; rigid bodies are
  nodal): ``index`` (its element group), ``element_mass(state)`` (E, nd, nd), ``nodal_mass(n)``
  (diagonal estimates), and ``midpoint_force``/``newmark_force`` as element vectors and
  matrices of that group.

:func:`inertia_groups` gives a model's inertia: the nodal group alone, or an :class:`InertiaSum`
of it and the element-level groups (``nodal``, ``extras``; energies and momenta summed), which
the integrators and ``System.mass`` use.

Nodal inertia: every node carries a translational mass ``m`` and, where it has rotations, a rotary
inertia: a scalar ``I`` in 2D, a ``3 x 3`` tensor ``J`` in 3D, written in the node's material frame
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
from fem.inertia_beam import consistent_groups
from fem.inertia_floating import FloatingInertia


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

    #: no element-level groups beside it (what an :class:`InertiaSum` holds in ``extras``)
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

        Nodes turned by ``cay(psi) R0`` (``kin.on``, :class:`fem.integrators.midpoint.
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


class InertiaSum:
    """Several inertia groups summed: the nodal group plus element-level ones.

    The nodal group (:class:`NodalInertia`) keeps every nodal quantity the velocity updates use
    (``lie``, ``body_velocity``, ``spatial_momentum``); the others (e.g.
    :class:`fem.inertia_beam.ConsistentBeamInertia`) give element forces and tangents for one
    element group each (``index``). Energies and momenta are sums; ``m``, ``I``, ``J`` are the
    nodal group's plus the others' translational masses, for diagonal estimates only.
    """

    def __init__(self, nodal: NodalInertia, extras):
        self.nodal, self.extras = nodal, list(extras)
        self.dim, self.nslots, self.lie = nodal.dim, nodal.nslots, nodal.lie
        self.m = nodal.m + sum(x.nodal_mass(len(nodal.m)) for x in self.extras)
        self.I, self.J = nodal.I, nodal.J

    def diagonal(self) -> NDArray:
        """(n, nslots) the nodal group's diagonal plus the others' translational masses."""
        out = self.nodal.diagonal()
        out[:, :self.dim] += (self.m - self.nodal.m)[:, None]
        return out

    def body_velocity(self, state, R=None) -> NDArray:
        """The nodal group's (see :meth:`NodalInertia.body_velocity`)."""
        return self.nodal.body_velocity(state, R)

    def spatial_momentum(self, state, R=None) -> NDArray:
        """The nodal group's (see :meth:`NodalInertia.spatial_momentum`)."""
        return self.nodal.spatial_momentum(state, R)

    def kinetic_energy(self, state) -> float:
        """Sum over the groups."""
        return self.nodal.kinetic_energy(state) + sum(x.kinetic_energy(state)
                                                      for x in self.extras)

    def linear_momentum(self, state) -> NDArray:
        """(3,) sum over the groups."""
        return self.nodal.linear_momentum(state) + sum(x.linear_momentum(state)
                                                       for x in self.extras)

    def angular_momentum(self, state, X: NDArray) -> NDArray:
        """(3,) sum over the groups, about the origin."""
        return self.nodal.angular_momentum(state, X) + sum(x.angular_momentum(state, X)
                                                           for x in self.extras)


class SuperelementInertia:
    """The constant mass ``M`` of a superelement on ``q = [u_b; eta]`` (an element-level group).

    ``T = q_dot^T M q_dot / 2`` with the interface nodes' velocities (translations, and the
    rates of the rotation vectors at the additive nodes a linear superelement has) and the rates
    of ``eta``. The state has no rate slots for element-internal unknowns, so those are kept in
    ``state.conserving["<group>.rates"]`` (``v``, ``a``: ``(E, m)``; absent: at rest), written
    by :meth:`midpoint_force` into the trial state: the mid-point family's ``v1 = 2 (eta_1 -
    eta_0) / h - v0``, as for the nodes. Then ``f = M (q_dot_1 - q_dot_0) / h`` does the work
    ``T_1 - T_0`` exactly over a step (``f . (q_1 - q_0) = (q_dot_1 - q_dot_0) . M (q_dot_1 +
    q_dot_0) / 2``), and its tangent is ``2 M / h^2``. The Newmark family is refused (its
    rates of ``eta`` would need the step's start, which its inertia calls do not pass).
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
        self.key = f"{g.name}.rates"                        # not a group name: names have no "."

    def rates(self, state) -> tuple[NDArray, NDArray]:
        """``(E, m)`` rates and accelerations of ``eta`` (zero if the state has none)."""
        got = state.conserving.get(self.key)
        if got is None:
            z = np.zeros((len(self.group), self.group.n_internal))
            return z, z
        return got["v"], got["a"]

    def velocities(self, state) -> NDArray:
        """(E, nd + m) ``q_dot``."""
        return np.hstack([self.group.element_vector(state.v), self.rates(state)[0]])

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
        """``M (q_dot_1 - q_dot_0) / h`` and ``2 M / h^2``; sets the rates of ``eta`` of ``s1``."""
        g = self.group
        v0, a0 = self.rates(s0)
        w1 = 2 * (g.modal(s1) - g.modal(s0)) / h - v0
        s1.conserving[self.key] = {"v": w1, "a": (w1 - v0) / h}
        f = np.einsum("eij,ej->ei", self.M, self.velocities(s1) - self.velocities(s0)) / h
        return f, (2 / h**2) * self.M if tangent else None

    def newmark_force(self, state, kin=None, h=None, beta=None, gamma=None):
        """Zero without ``kin``; with ``kin`` (a Newmark step) refused (class docstring).

        A constant mass has no velocity-dependent inertial force: zero at zero acceleration,
        what the consistent accelerations of constrained steps ask
        (:mod:`fem.analysis.consistent`).
        """
        if kin is None:
            return np.zeros((len(self.group), self.M.shape[1]))
        from fem.errors import ModelError

        raise ModelError(f"superelement '{self.group.name}': its modal coordinates are "
                         "integrated by the mid-point family only; use integrator = "
                         "\"energy_conserving\" or \"midpoint\"")


def inertia_groups(system, state=None):
    """The model's inertia: :class:`NodalInertia` alone or an :class:`InertiaSum`.

    NodalInertia alone (today's numbers) unless element groups ask for an inertia of their own
    (consistent beams, superelements; co-rotational ones: :mod:`fem.inertia_floating`).
    """
    nodal = NodalInertia(system, state)
    kinds = {"superelement": SuperelementInertia, "floating": FloatingInertia}
    extras = consistent_groups(system) + [
        kinds[g.inertia](system, i) for i, g in enumerate(system.model.groups)
        if getattr(g, "inertia", "lumped") in kinds]
    return InertiaSum(nodal, extras) if extras else nodal
