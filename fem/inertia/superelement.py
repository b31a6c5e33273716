"""The inertia of a linear superelement: its constant reduced mass on its coordinates."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray


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

    def linear_blocks(self, state):
        """Element blocks of the linearized inertia: ``(M q_ddot, M, 0, 0)``."""
        z = np.zeros_like(self.M)
        return self.newmark_force(state), self.M.copy(), z, z.copy()
