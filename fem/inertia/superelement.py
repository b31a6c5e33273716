"""The inertia of a linear superelement: its constant reduced mass on its coordinates."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray


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
        (:mod:`fem.constraints.handlers.consistent`).
        """
        if kin is None:
            return np.zeros((len(self.group), self.M.shape[1]))
        from fem.errors import ModelError

        raise ModelError(f"superelement '{self.group.name}': its modal coordinates are "
                         "integrated by the mid-point family only; use integrator = "
                         "\"energy_conserving\" or \"midpoint\"")
