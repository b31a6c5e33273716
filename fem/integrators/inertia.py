"""Nodal inertia: lumped masses and rotary inertias, kinetic energy, momenta, step kinematics.

In dynamics every node carries a translational mass ``m`` and, where it has rotations, a rotary
inertia: a scalar ``I`` in 2D, a ``3 x 3`` tensor ``J`` in 3D, written in the node's material frame
(the global axes at the reference). They are the lumped (HRZ) masses of the element groups plus the
deck's point masses. The translational part may instead be the consistent mass of the elements
(constant in the global frame: trusses and small-displacement elements only).

Rotations of 3D nodes are updated by spatial increments, ``R_n+1 = exp(hat(theta)) R_n``; the body
increment is ``Theta = R_n^T theta`` and body angular velocities ``W = R^T omega`` (``state.v``
holds the spatial ``omega``). The spatial angular momentum of a node is ``Pi = R J W``. Nodes used
only by small-displacement elements (``System.additive``) and all 2D nodes have additive rotation
coordinates and are treated like translations.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from fem import rotations as so3


@dataclass
class StepKinematics:
    """Increments of a time step from state ``s0`` to ``s1`` (per node)."""

    dx: NDArray          # (n, 3) translation increment
    theta: NDArray       # (n, 3) rotation increment: spatial spin (3D Lie nodes) or additive
    Theta: NDArray       # (n, 3) body increment R0^T theta (3D), else equal to theta
    increment: NDArray   # (n, nslots) the increment in DOF-slot layout (what the work uses)


def step_kinematics(s0, s1, additive: NDArray | None, R0: NDArray | None = None) -> StepKinematics:
    """The increments between two states; rotations as in :meth:`fem.state.State.increment`.

    ``R0`` (``s0``'s rotation matrices) may be passed when already known.
    """
    dx = s1.u - s0.u
    n = len(dx)
    if s0.dim == 2:
        theta = np.zeros((n, 3))
        theta[:, 2] = s1.rot - s0.rot
        inc = np.column_stack([dx[:, :2], theta[:, 2]])
        return StepKinematics(dx, theta, theta, inc)
    R0 = so3.quat_to_matrix(s0.rot) if R0 is None else R0
    Theta = so3.rotvec_from_quat(so3.quat_mul(_conj(s0.rot), s1.rot))       # log(R0^T R1)
    theta = np.einsum("nij,nj->ni", R0, Theta)                               # R0 Theta
    if additive is not None and additive.any():
        lin = so3.rotvec_from_quat(s1.rot[additive]) - so3.rotvec_from_quat(s0.rot[additive])
        theta[additive] = lin
        Theta[additive] = lin
    return StepKinematics(dx, theta, Theta, np.column_stack([dx, theta]))


def midpoint_state(s0, s1, additive: NDArray | None, kin: StepKinematics | None = None):
    """The mid-point configuration: average positions, half the rotation increment."""
    from fem.state import State

    sm = State(dim=s0.dim, t=0.5 * (s0.t + s1.t), u=0.5 * (s0.u + s1.u), rot=s0.rot,
               v=s0.v, a=s0.a)
    if s0.dim == 2:
        sm.rot = 0.5 * (s0.rot + s1.rot)
        return sm
    kin = step_kinematics(s0, s1, additive) if kin is None else kin
    sm.rot = so3.rotate_spatial(s0.rot, 0.5 * kin.theta)
    if additive is not None and additive.any():
        psi = 0.5 * (so3.rotvec_from_quat(s0.rot[additive])
                     + so3.rotvec_from_quat(s1.rot[additive]))
        sm.rot[additive] = so3.quat_from_rotvec(psi)
    return sm


def _conj(q: NDArray) -> NDArray:
    out = q.copy()
    out[..., 1:] *= -1
    return out


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
        n = model.n_nodes
        state = state or system.reference_state()
        self.m = np.zeros(n)
        self.I = np.zeros(n)
        self.J = np.zeros((n, 3, 3))
        for g in model.groups:
            Me = g.mass(state, lumped=True)
            ndn = g.ndn
            for a in range(g.nen):
                o = a * ndn
                np.add.at(self.m, g.conn[:, a], Me[:, o, o])
                if ndn == 3 and self.dim == 2:
                    np.add.at(self.I, g.conn[:, a], Me[:, o + 2, o + 2])
                elif ndn == 6:
                    np.add.at(self.J, g.conn[:, a], Me[:, o + 3:o + 6, o + 3:o + 6])
        for pm in getattr(model, "masses", ()):
            np.add.at(self.m, pm.nodes, pm.mass)
            if self.dim == 2:
                np.add.at(self.I, pm.nodes, pm.inertia[2, 2])
            else:
                np.add.at(self.J, pm.nodes, pm.inertia)
        additive = system.additive
        self.lie = (np.ones(n, dtype=bool) if additive is None else ~additive) & (self.dim == 3)

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
