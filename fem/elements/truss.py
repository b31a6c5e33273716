"""Two-node truss (bar) elements in 2D and 3D: linear, co-rotational and total-Lagrangian.

Formulations (Crisfield, *Non-linear Finite Element Analysis of Solids and Structures*, vol. 1,
ch. 3; Crisfield & Shi 1994, eqs. 4, 10, 25-27; notes/crisfield_shi.md section 1.2):

``linear``
    small displacements about the reference chord ``e0``: ``N = EA e0.(u2-u1)/l0``.
``corotational`` with ``strain = "engineering"``
    ``N = EA (l - l0)/l0``, ``f = N {-e; e}``,
    ``K = (EA/l0) [e e^T] + (N/l) [I - e e^T]`` (block pattern ``[[k, -k], [-k, k]]``).
``corotational`` with ``strain = "green"``
    ``S = EA (l^2 - l0^2)/(2 l0^2)``, ``f = (S/l0) {-x21; x21}``,
    ``K = (EA/l0^3) [x21 x21^T] + (S/l0) [I]``; the axial force is ``N = S l/l0``.

The generalized stress is the axial force ``N`` (for Green strain the second Piola-Kirchhoff
resultant
``S``, with ``N`` reported in the outputs).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from fem.elements.base import ElementGroup, outer, spread_matrix, unit

FORMULATIONS = ("linear", "corotational")
STRAINS = ("engineering", "green")


class Truss(ElementGroup):
    """A batch of 2-node bars.

    Parameters
    ----------
    name : group name
    conn : (E, 2) node indices
    X : (n, 3) reference coordinates of the model's nodes
    dim : 2 or 3
    EA : (E,) axial stiffness
    rhoA : (E,) mass per unit length
    formulation : ``"linear"`` or ``"corotational"``
    strain : ``"engineering"`` or ``"green"`` (co-rotational only)
    """

    type_name = "truss"
    nen = 2
    capabilities = frozenset({"stiffness", "geometric_stiffness", "mass", "energy_conserving"})
    stress_names = ("N",)

    def __init__(self, name, conn, X, dim, EA, rhoA=0.0, formulation="corotational",
                 strain="engineering"):
        super().__init__(name, conn, X, dim)
        self.dof_names = ("ux", "uy") if dim == 2 else ("ux", "uy", "uz")
        self.EA = np.broadcast_to(np.asarray(EA, dtype=float), (len(self),)).copy()
        self.rhoA = np.broadcast_to(np.asarray(rhoA, dtype=float), (len(self),)).copy()
        self.formulation = formulation
        self.strain = strain if formulation == "corotational" else "engineering"
        self.x21_0 = (self.X[:, 1] - self.X[:, 0])[:, :dim]            # (E, dim)
        self.e0, self.l0 = unit(self.x21_0)

    # --- kinematics ---------------------------------------------------------------------------
    def _chord(self, state) -> tuple[NDArray, NDArray, NDArray]:
        x = self.positions(state)[:, :, :self.dim]
        x21 = x[:, 1] - x[:, 0]
        e, l = unit(x21)
        return x21, e, l

    def _du21(self, state) -> NDArray:
        return (state.u[self.conn[:, 1]] - state.u[self.conn[:, 0]])[:, :self.dim]

    def stress(self, state) -> NDArray:
        """(E, 1) axial force ``N`` (``S`` for Green strain)."""
        if self.formulation == "linear":
            n = self.EA / self.l0 * np.einsum("ei,ei->e", self.e0, self._du21(state))
        else:
            _, _, l = self._chord(state)
            if self.strain == "green":
                n = self.EA * (l**2 - self.l0**2) / (2 * self.l0**2)
            else:
                n = self.EA * (l - self.l0) / self.l0
        return n[:, None]

    def _force_direction(self, state) -> NDArray:
        """(E, dim) vector ``b`` with ``f = N {-b; b}``."""
        if self.formulation == "linear":
            return self.e0
        x21, e, _ = self._chord(state)
        return x21 / self.l0[:, None] if self.strain == "green" else e

    # --- protocol -----------------------------------------------------------------------------
    def internal_force(self, state) -> NDArray:
        """(E, 2 dim) nodal forces ``N {-b; b}``."""
        nb = self.stress(state) * self._force_direction(state)
        return np.concatenate([-nb, nb], axis=1)

    def tangent(self, state) -> NDArray:
        """(E, 2 dim, 2 dim) material + geometric tangent (material only for the linear truss)."""
        if self.formulation == "linear":
            return self.material_tangent(state)
        return super().tangent(state)

    def material_tangent(self, state) -> NDArray:
        """(E, 2 dim, 2 dim) stiffness from the change of stress, at fixed geometry."""
        b = self._force_direction(state)                      # dN = (EA/l0) b.du21 in all three
        return spread_matrix((self.EA / self.l0)[:, None, None] * outer(b, b))

    def geometric_stiffness(self, state, stress: NDArray) -> NDArray:
        """(E, 2 dim, 2 dim) initial-stress stiffness for axial forces ``stress (E, 1)``."""
        n = stress[:, 0]
        eye = np.eye(self.dim)
        if self.formulation == "linear":
            k = (n / self.l0)[:, None, None] * (eye - outer(self.e0, self.e0))
        elif self.strain == "green":
            k = (n / self.l0)[:, None, None] * np.broadcast_to(eye, (len(self), self.dim, self.dim))
        else:
            _, e, l = self._chord(state)
            k = (n / l)[:, None, None] * (eye - outer(e, e))
        return spread_matrix(k)

    def stress_rate(self, state, due: NDArray) -> NDArray:
        """(E, 1) linearized change of the axial force for element increments ``due (E, 2 dim)``."""
        b = self._force_direction(state)
        d21 = due[:, self.dim:] - due[:, :self.dim]
        return (self.EA / self.l0 * np.einsum("ei,ei->e", b, d21))[:, None]

    def energy(self, state) -> NDArray:
        """(E,) strain energy."""
        n = self.stress(state)[:, 0]                           # 1/2 EA l0 strain^2
        return 0.5 * n**2 * self.l0 / self.EA

    def mass(self, state=None, lumped: bool = False) -> NDArray:
        """(E, 2 dim, 2 dim) consistent (``rhoA l0/6 [[2I, I], [I, 2I]]``) or lumped mass."""
        m = (self.rhoA * self.l0)[:, None, None]
        eye = np.eye(self.dim)
        if lumped:
            return m / 2 * np.eye(2 * self.dim)
        return m / 6 * np.block([[2 * eye, eye], [eye, 2 * eye]])

    def outputs(self, state) -> dict[str, NDArray]:
        """Axial force ``N`` (true force, also for Green strain) and strain."""
        s = self.stress(state)[:, 0]
        if self.formulation == "corotational" and self.strain == "green":
            _, _, l = self._chord(state)
            return {"N": s * l / self.l0, "strain": s / self.EA}
        return {"N": s, "strain": s / self.EA}

    def properties(self) -> dict[str, NDArray]:
        """Axial stiffness, reference length and mass per length."""
        return {"EA": self.EA, "length": self.l0, "rhoA": self.rhoA}

    def options(self) -> dict[str, str]:
        """Formulation and strain measure."""
        return {"formulation": self.formulation, "strain": self.strain}

    # --- energy-conserving dynamics (Crisfield & Shi 1994) -------------------------------------
    def conserving_start(self, state) -> dict:
        """No algorithmic history: the bar's strain is always the geometric one."""
        return {}

    def conserving(self, s0, s1, sm, inc, hist):
        """Algorithmic force, its tangent, the energy at ``s1``: ``f . (d1 - d0) = Phi1 - Phi0``.

        Engineering strain (Crisfield & Shi eqs. 8-20): ``f = beta N_av {-e_m; e_m}``,
        ``beta = 2 l_m / (l_n + l_n+1)``, ``e_m`` along the mid-point chord; tangent (their eq. 24,
        written out in notes/crisfield_shi.md section 1.4, not symmetric)
        ``k = N_av/S e_m (e_m - beta e1)^T + beta EA/(2 l0) e_m e1^T + N_m/(2 l_m) (I - e_m
        e_m^T)``. Green strain (Simo & Tarnow; eq. 28): ``f = N_av x21_m / l0``. Linear: ``K d_m``.
        Each tangent is the exact derivative of ``f`` with respect to the nodal translations of
        ``s1`` (Newton's corrections; ``d x21_m = d x21_1 / 2``, ``d beta`` and ``d N_n+1`` as in
        notes/crisfield_shi.md section 1.4), so Newton converges quadratically.
        """
        d = self.dim
        x0, e0v, l_n = self._chord(s0)
        x1, e1, l_1 = self._chord(s1)
        xm = 0.5 * (x0 + x1)
        em, lm = unit(xm)
        eye = np.eye(d)
        if self.formulation == "linear":
            K = self.material_tangent(s0)
            f = np.einsum("eij,ej->ei", K, 0.5 * inc + self._displacement(s0))
            return f, 0.5 * K, self.energy(s1), {}
        EA, l0 = self.EA, self.l0
        if self.strain == "green":
            Nn = EA * (l_n**2 - l0**2) / (2 * l0**2)
            N1 = EA * (l_1**2 - l0**2) / (2 * l0**2)
            Nav = 0.5 * (Nn + N1)
            b = xm / l0[:, None]
            k = (Nav / (2 * l0))[:, None, None] * eye + (EA / (2 * l0**3))[:, None, None] * outer(
                xm, x1)
        else:
            Nn, N1 = EA * (l_n - l0) / l0, EA * (l_1 - l0) / l0
            Nav = 0.5 * (Nn + N1)
            S = l_n + l_1
            beta = 2 * lm / S
            b = beta[:, None] * em
            k = ((Nav / S)[:, None, None] * outer(em, em - beta[:, None] * e1)
                 + (beta * EA / (2 * l0))[:, None, None] * outer(em, e1)
                 + (beta * Nav / (2 * lm))[:, None, None] * (eye - outer(em, em)))
        nb = Nav[:, None] * b
        energy = 0.5 * N1**2 * l0 / EA
        return np.concatenate([-nb, nb], axis=1), spread_matrix(k), energy, {}

    def _displacement(self, state) -> NDArray:
        return self.element_vector(state.dof_values())
