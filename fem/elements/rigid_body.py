"""Rigid bodies: a node, the centre of mass, carrying a mass ``m`` and an inertia tensor ``J``.

A rigid body is an element group with one node per element and every DOF of that node (2D: ux, uy,
rz; 3D: ux, uy, uz, rx, ry, rz) and no stiffness: its internal force, tangent and strain energy are
zero. All it brings is inertia, through :meth:`RigidBody.lumped_inertia`: the mass and the inertia
tensor about the centre of mass, in the global axes at the reference orientation (the body's
material frame). :class:`fem.inertia.nodal.NodalInertia` integrates them with the node's other
masses, so the dynamics of a free body are those of a lumped node with rotary inertia: in 3D Simo &
Wong's (1991) momentum form ``(Pi1 - Pi0)/h`` of the mid-point family (kinetic energy and spatial
angular momentum ``Pi = R J R^T omega`` exact, to Newton's tolerance, for a torque-free body), the
Newmark form ``R (J A + W x J W)`` of the alpha family; ``[gravity]`` adds ``m g`` at the node
(:func:`fem.loads.gravity_force`) and ``System.mass`` the blocks ``diag(m I, J)``.

The rotations are finite (``additive_rotations = False``): a 3D body's orientation is the node's
unit quaternion, turned by spatial spins, so a body node is a Lie node of the nodal inertia
(:attr:`fem.system.System.additive` is false there) even when a linear beam shares it.

Bodies connect to the rest of a model through the elements and constraints that share their node
(a beam welded at the centre of mass) or, on their own, through supports, loads and gravity.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from fem.elements.base import ElementGroup

SLOTS = {2: ("ux", "uy", "rz"), 3: ("ux", "uy", "uz", "rx", "ry", "rz")}


class RigidBody(ElementGroup):
    """A batch of ``E`` rigid bodies, one per node.

    Parameters
    ----------
    nodes : (E,) node indices, the bodies' centres of mass
    mass : scalar or (E,) positive masses
    inertia : (3, 3) or (E, 3, 3) inertia tensors about the centres of mass, global axes at the
        reference orientation (2D: only ``[2, 2]``, about z, is used)
    drawing : how the ParaView files draw the bodies (:mod:`fem.io.drawing`): ``(shape, size,
        axis)``, shape ``"inertia"`` (the box of equal inertia, size unused), ``"box"``,
        ``"cylinder"`` or ``"sphere"`` of ``size``; ``axis`` (3,): a box's side a, a cylinder's
        length
    """

    type_name = "rigid"
    nen = 1
    cell_type = "vertex"
    capabilities = frozenset({"stiffness", "geometric_stiffness", "mass", "energy_conserving"})
    additive_rotations = False         # 3D orientations are unit quaternions turned by spins
    stress_names = ()

    def __init__(self, name: str, nodes, X, dim: int, mass, inertia,
                 drawing: tuple = ("inertia", (), (1.0, 0.0, 0.0))):
        super().__init__(name, np.asarray(nodes, dtype=np.int64)[:, None], X, dim)
        self.drawing = drawing
        self.dof_names = SLOTS[dim]
        E = len(self)
        self.m = np.broadcast_to(np.asarray(mass, dtype=float), (E,)).copy()
        self.J = np.broadcast_to(np.asarray(inertia, dtype=float), (E, 3, 3)).copy()
        if dim == 2:                   # only the inertia about z acts in the plane
            Izz = self.J[:, 2, 2].copy()
            self.J[:] = 0.0
            self.J[:, 2, 2] = Izz

    # --- no stiffness -----------------------------------------------------------------------------
    def stress(self, state) -> NDArray:
        """(E, 0): a rigid body has no generalized stresses."""
        return np.zeros((len(self), 0))

    def internal_force(self, state) -> NDArray:
        """(E, nd) zeros."""
        return np.zeros((len(self), self.nd))

    def tangent(self, state) -> NDArray:
        """(E, nd, nd) zeros."""
        return np.zeros((len(self), self.nd, self.nd))

    material_tangent = tangent

    def geometric_stiffness(self, state, stress) -> NDArray:
        """(E, nd, nd) zeros."""
        return np.zeros((len(self), self.nd, self.nd))

    def stress_rate(self, state, due) -> NDArray:
        """(E, 0)."""
        return np.zeros((len(self), 0))

    def energy(self, state) -> NDArray:
        """(E,) zeros: no strain energy."""
        return np.zeros(len(self))

    # --- inertia ----------------------------------------------------------------------------------
    def mass(self, state=None, lumped: bool = False) -> NDArray:
        """(E, nd, nd) ``diag(m I, J)`` (2D: ``diag(m, m, Izz)``), consistent and lumped alike."""
        d, E = self.dim, len(self)
        out = np.zeros((E, self.nd, self.nd))
        out[:, range(d), range(d)] = self.m[:, None]
        if d == 2:
            out[:, 2, 2] = self.J[:, 2, 2]
        else:
            out[:, 3:6, 3:6] = self.J
        return out

    def lumped_inertia(self, state) -> tuple[NDArray, NDArray]:
        """``m (E, 1)`` and ``J (E, 1, 3, 3)``: the bodies' masses and inertia tensors."""
        return self.m[:, None].copy(), self.J[:, None].copy()

    # --- results ----------------------------------------------------------------------------------
    def properties(self) -> dict[str, NDArray]:
        """``mass (E,)`` and ``inertia``: ``(E, 3, 3)`` in 3D, ``(E,)`` Izz in 2D."""
        J = self.J[:, 2, 2] if self.dim == 2 else self.J
        return {"mass": self.m, "inertia": J}

    def options(self) -> dict[str, str]:
        """How the bodies are drawn: ``shape``, and ``size``, ``axis`` as text."""
        shape, size, axis = self.drawing
        out = {"shape": shape}
        if shape != "inertia":
            out["size"] = " ".join(repr(x) for x in size)
        if shape == "box" or (shape == "cylinder" and self.dim == 3):
            out["axis"] = " ".join(repr(x) for x in axis)
        return out

    # --- the energy-conserving scheme -------------------------------------------------------------
    def conserving_start(self, state) -> dict:
        """No history."""
        return {}

    def conserving(self, s0, s1, sm, inc, hist, spins=None):
        """Zero force, tangent and energy: the body's inertia is the nodal inertia group's."""
        E, nd = len(self), self.nd
        return np.zeros((E, nd)), np.zeros((E, nd, nd)), np.zeros(E), {}
