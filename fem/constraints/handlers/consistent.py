"""Consistent accelerations and constraint reactions of a state (the index-1 equations).

Given positions and velocities, the accelerations ``a`` and the multipliers ``lambda`` solve::

    [ M   G^T ] [ a      ]   [ f_ext - f_int - f_v ]
    [ G   0   ] [ lambda ] = [ -gamma              ]

with ``M`` the mass of the inertia groups (rotations: spatial, ``R J R^T``), ``f_v`` their
velocity terms (``omega x (R J R^T omega)`` and the consistent beams' ones), ``G`` the constraint
groups' Jacobians and ``gamma`` their velocity and drive terms (``d2g/dt2 = G a + gamma``,
:meth:`fem.constraints.joint.Joint.bias`). This is Gauss's principle (Mufti's M(10), notes
``mufti_blajer.md`` A3-A4): ``lambda`` is the reaction of the mechanism in that state, exact for
the state (at ``t = 0`` the reaction at release; later the reaction the state's velocities and
loads call for), unlike a time step's multiplier, which is an average over the step.

Supported and prescribed DOFs have zero acceleration here (a prescribed motion's acceleration is
not included). Redundant constraints make the matrix singular: :class:`RedundantError`.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray


def _spatial_blocks(nodal, state) -> NDArray:
    """(n, nslots, nslots) the nodal group's mass blocks, rotations in spatial form."""
    blocks = nodal.mass_blocks()
    if nodal.dim == 3 and np.any(nodal.lie):
        R = state.rotation_matrices()[nodal.lie]
        blocks[nodal.lie, 3:6, 3:6] = R @ nodal.J[nodal.lie] @ np.swapaxes(R, 1, 2)
    return blocks


def kkt_matrix(system, inertia, state) -> NDArray:
    """CSR values of ``[[M, G^T], [G, Z]]`` at the positions of ``state``.

    ``Z`` is one on rows released as redundant (``lambda = 0``) and zero elsewhere.
    """
    groups = system.model.groups
    masses = [None] * len(groups)
    for x in inertia.extras:
        M = x.element_mass(state)
        masses[x.index] = M if masses[x.index] is None else masses[x.index] + M
    blocks = []
    for c in system.model.constraints:
        G = c.jacobian(state)
        E, k, nd = G.shape
        B = np.zeros((E, nd + k, nd + k))
        B[:, :nd, nd:] = np.swapaxes(G, 1, 2)
        B[:, nd:, :nd] = G
        B[:, nd:, nd:] = c.multiplier_block()
        blocks.append(B)
    return system.assembler.matrix(masses, _spatial_blocks(inertia.nodal, state),
                                   constraints=blocks)


def kkt_rhs(system, inertia, state, f_ext: NDArray, f_modal: NDArray | None = None) -> NDArray:
    """Right-hand side ``(n_free,)`` ``[f_ext - f_int - f_v; -gamma]`` of ``state``.

    ``f_ext (n, nslots)`` the nodal external forces of ``state``; ``f_modal (n_active,)`` those
    on superelements' modal coordinates, or None.
    """
    dm, asm = system.dofmap, system.assembler
    groups = system.model.groups
    still = state.copy()
    still.a[:] = 0.0
    still.internal_a[:] = 0.0
    f_v = dm.from_nodal(inertia.nodal.newmark_force(still))
    forces = [None] * len(groups)
    for x in inertia.extras:
        out = x.newmark_force(still)
        f = out[0] if isinstance(out, tuple) else out
        forces[x.index] = f if forces[x.index] is None else forces[x.index] + f
    if inertia.extras:
        f_v = f_v + asm.vector(forces)
    r = system.internal_force(state, constraints=False) - dm.from_nodal(f_ext) + f_v
    if f_modal is not None:
        r = r - f_modal
    rhs = -r[:system.n_free].copy()
    for c, pos in zip(system.model.constraints, dm.multipliers, strict=True):
        rhs[pos] = -c.bias(state)
    return rhs


def split(system, x: NDArray) -> tuple[NDArray, list[NDArray]]:
    """Nodal accelerations ``(n, nslots)`` and each group's ``lambda (E, r)`` of a solution."""
    dm = system.dofmap
    full = np.zeros(dm.n_active)
    full[:system.n_free] = x
    return dm.to_nodal(full), [x[pos] for pos in dm.multipliers]


def velocity_rhs(system, state) -> NDArray:
    """Right-hand side ``[0; -G v - dg/dt]`` of the velocities' projection on the constraints.

    With the matrix of :func:`kkt`, the solution ``dv`` is the mass-orthogonal correction that
    makes ``G (v + dv) + dg/dt = 0`` (the nearest admissible velocities in the kinetic-energy
    norm; ``dg/dt`` is the drivers' rate).
    """
    dm = system.dofmap
    rhs = np.zeros(system.n_free)
    v = state.v
    for c, pos in zip(system.model.constraints, dm.multipliers, strict=True):
        rhs[pos] = -np.einsum("eki,ei->ek", c.jacobian(state), c.element_vector(v)) \
            - c.time_rate(state)
    return rhs


def velocity_gaps(system, state) -> list[tuple[str, float, float]]:
    """Per constraint group: its name, ``max |G v + dg/dt|`` and that term's scale.

    The scale ``max (|G| |v| + |dg/dt|)`` tells round-off from a violation of the joint by the
    velocities.
    """
    out = []
    v = state.v
    for c in system.model.constraints:
        G, ve, rate = c.jacobian(state), c.element_vector(v), c.time_rate(state)
        gap = np.einsum("eki,ei->ek", G, ve) + rate
        ref = np.einsum("eki,ei->ek", np.abs(G), np.abs(ve)) + np.abs(rate)
        out.append((c.name, float(np.abs(gap).max(initial=0.0)), float(ref.max(initial=0.0))))
    return out


def with_velocities(system, state, x: NDArray):
    """A copy of ``state`` with the velocity correction of a :func:`velocity_rhs` solve added."""
    out = state.copy()
    out.v = out.v + split(system, x)[0]
    return out
