"""Grounded linear springs: one node's DOF tied to the ground, energy ``k u^2 / 2``.

``u`` is the DOF's displacement from the reference (translations; in 2D also the rotation about z,
which is additive there). Used for supports with finite stiffness and for lumped models such as
Crisfield & Shi's two-degree-of-freedom snap model (a spring kept horizontal).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from fem.elements.base import ElementGroup


class GroundSpring(ElementGroup):
    """A batch of grounded springs, one per node, all on the DOF ``dof``."""

    type_name = "spring"
    nen = 1
    cell_type = "vertex"
    capabilities = frozenset({"stiffness", "geometric_stiffness", "mass", "energy_conserving"})
    additive_rotations = True          # u is the DOF's value: a rotation about z in 2D
    stress_names = ("F",)

    def __init__(self, name: str, nodes, X, dim: int, dof: str, k):
        super().__init__(name, np.asarray(nodes, dtype=np.int64)[:, None], X, dim)
        self.dof_names = (dof,)
        self.formulation = "linear"
        self.k = np.broadcast_to(np.asarray(k, dtype=float), (len(self),)).copy()
        self.l0 = np.ones(len(self))

    def _u(self, state) -> NDArray:
        return self.element_vector(state.dof_values())[:, 0]

    def stress(self, state) -> NDArray:
        """(E, 1) spring force."""
        return (self.k * self._u(state))[:, None]

    def internal_force(self, state) -> NDArray:
        """(E, 1) ``k u``."""
        return self.stress(state)

    def tangent(self, state) -> NDArray:
        """(E, 1, 1) ``k``."""
        return self.k[:, None, None].copy()

    material_tangent = tangent

    def geometric_stiffness(self, state, stress) -> NDArray:
        """None: a grounded spring has no geometric stiffness."""
        return np.zeros((len(self), 1, 1))

    def stress_rate(self, state, due) -> NDArray:
        """(E, 1) ``k du``."""
        return self.k[:, None] * due

    def energy(self, state) -> NDArray:
        """(E,) ``k u^2 / 2``."""
        return 0.5 * self.k * self._u(state) ** 2

    def mass(self, state=None, lumped: bool = False) -> NDArray:
        """(E, 1, 1) zeros: springs are massless."""
        return np.zeros((len(self), 1, 1))

    def properties(self) -> dict[str, NDArray]:
        """Stiffness per spring."""
        return {"k": self.k}

    def options(self) -> dict[str, str]:
        """Linear, always."""
        return {"formulation": self.formulation}

    def conserving_start(self, state) -> dict:
        """No history."""
        return {}

    def conserving(self, s0, s1, sm, inc, hist):
        """``k (u0 + u1)/2``: exact for the quadratic energy."""
        um = 0.5 * (self._u(s0) + self._u(s1))
        return (self.k * um)[:, None], 0.5 * self.tangent(s1), self.energy(s1), {}
