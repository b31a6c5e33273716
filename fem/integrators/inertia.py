"""Step kinematics: the increments of a time step and its mid-point configuration.

Rotations of 3D nodes are updated by spatial increments, ``R_n+1 = exp(hat(theta)) R_n``; the body
increment is ``Theta = R_n^T theta``. Nodes used only by small-displacement elements
(``System.additive``) and all 2D nodes have additive rotation coordinates and are treated like
translations. The masses themselves are inertia groups (:mod:`fem.inertia`).
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
        inc = nodal_increment(s0, s1, additive)
        theta = np.zeros((n, 3))
        theta[:, 2] = inc[:, 2]
        return StepKinematics(dx, theta, theta, inc)
    R0 = so3.quat_to_matrix(s0.rot) if R0 is None else R0
    Theta = so3.rotvec_from_quat(so3.quat_mul(so3.quat_conj(s0.rot), s1.rot))       # log(R0^T R1)
    theta = np.einsum("nij,nj->ni", R0, Theta)                               # R0 Theta
    if additive is not None and additive.any():
        lin = so3.rotvec_from_quat(s1.rot[additive]) - so3.rotvec_from_quat(s0.rot[additive])
        theta[additive] = lin
        Theta[additive] = lin
    return StepKinematics(dx, theta, Theta, np.column_stack([dx, theta]))


def nodal_increment(s0, s1, additive: NDArray | None) -> NDArray:
    """(n, nslots) the increment from ``s0`` to ``s1``: :func:`step_kinematics`'s ``increment``.

    Planar states directly (a static increment's work asks for nothing else, every increment).
    """
    if s0.dim != 2:
        return step_kinematics(s0, s1, additive).increment
    inc = np.empty((len(s0.u), 3))
    np.subtract(s1.u[:, :2], s0.u[:, :2], out=inc[:, :2])
    np.subtract(s1.rot, s0.rot, out=inc[:, 2])
    return inc


def midpoint_state(s0, s1, additive: NDArray | None, kin: StepKinematics | None = None):
    """The mid-point configuration: average positions, half the rotation increment.

    Its velocities are the mean of the ends' (with the mid-point family's ``v1 = 2 dx/h - v0``,
    the step's mean rate ``dx / h``): what velocity-dependent forces (dampers) see there. Its
    multipliers are those of ``s1`` (the mid-point family's act over the whole step): what
    friction from a joint's reaction sees.
    """
    from fem.state import State

    sm = State(dim=s0.dim, t=0.5 * (s0.t + s1.t), u=0.5 * (s0.u + s1.u), rot=s0.rot,
               v=0.5 * (s0.v + s1.v), a=s0.a, internal=0.5 * (s0.internal + s1.internal),
               internal_v=0.5 * (s0.internal_v + s1.internal_v), multipliers=s1.multipliers)
    if s0.dim == 2:
        sm.rot = 0.5 * (s0.rot + s1.rot)
        return sm
    kin = step_kinematics(s0, s1, additive) if kin is None else kin
    # half the rotation vector, also where ``theta`` holds Cayley parameters (``rotvec``:
    # fem.integrators.cayley.CayleyKinematics3D)
    rotvec = getattr(kin, "rotvec", None)
    sm.rot = so3.rotate_spatial(s0.rot, 0.5 * (kin.theta if rotvec is None else rotvec))
    if additive is not None and additive.any():
        psi = 0.5 * (so3.rotvec_from_quat(s0.rot[additive])
                     + so3.rotvec_from_quat(s1.rot[additive]))
        sm.rot[additive] = so3.quat_from_rotvec(psi)
    return sm
