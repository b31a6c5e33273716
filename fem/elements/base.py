"""The element-group protocol shared by every element family.

A group is a batch of ``E`` same-type elements with connectivity ``conn (E, nen)`` (node indices)
and per-element properties. Given a :class:`~fem.state.State` it returns, vectorized over the batch
and in the global frame:

===================================  ==================  =========================================
method                               shape               what
===================================  ==================  =========================================
``internal_force(state)``            ``(E, nd)``         resisting nodal forces (moments
                                                         conjugate to spatial spins in 3D)
``tangent(state)``                   ``(E, nd, nd)``     d(internal force)/d(increment):
                                                         material + geometric
``energy(state)``                    ``(E,)``            strain energy
``mass(state, lumped)``              ``(E, nd, nd)``     consistent or lumped mass
``stress(state)``                    ``(E, ns)``         generalized stresses (basic forces)
``stress_rate(state, due)``          ``(E, ns)``         their linearized change for ``due``
``material_tangent(state)``          ``(E, nd, nd)``     the part of ``tangent`` not from stress
``geometric_stiffness(state, s)``    ``(E, nd, nd)``     the stress part, for stresses ``s``
``outputs(state)``                   ``{name: (E, k)}``  section forces for results files
===================================  ==================  =========================================

``tangent == material_tangent + geometric_stiffness(stress)`` at every state; linear buckling uses
the two parts separately. A group may also offer interior modes for linear buckling
(``n_internal`` per element and ``interior_stiffness(state, s, material)``, numbered as internal
unknowns by :mod:`fem.dofs` when a buckling step asks for them); beams do. Element DOFs are
ordered node by node, ``dof_names`` within
each node.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from numpy.typing import NDArray


class ElementGroup:
    """Base class: connectivity, reference geometry and nodal gathering."""

    type_name: ClassVar[str] = ""
    nen: ClassVar[int] = 2
    dof_names: tuple[str, ...] = ()
    stress_names: tuple[str, ...] = ()

    def __init__(self, name: str, conn: NDArray, X: NDArray, dim: int):
        self.name = name
        self.conn = np.asarray(conn, dtype=np.int64)
        self.conn.setflags(write=False)
        self.dim = dim
        self.X = np.asarray(X, dtype=float)[self.conn]            # (E, nen, 3) reference coords

    def __len__(self) -> int:
        return len(self.conn)

    @property
    def nd(self) -> int:
        """DOFs per element."""
        return self.nen * len(self.dof_names)

    @property
    def ndn(self) -> int:
        """DOFs per node of the element."""
        return len(self.dof_names)

    # --- gathering ----------------------------------------------------------------------------
    def positions(self, state) -> NDArray:
        """(E, nen, 3) current nodal positions relative to each element's first node.

        Relative to the first node, and formed from displacement *differences*, so that a chord
        of a short element in a large model keeps its digits: ``(X_a - X_0) + (u_a - u_0)``.
        """
        u = state.u[self.conn]
        return (self.X - self.X[:, :1]) + (u - u[:, :1])

    def element_vector(self, nodal: NDArray) -> NDArray:
        """(E, nd) element values of an ``(n, nslots)`` nodal array (slots of ``dof_names``)."""
        slots = ("ux", "uy", "rz") if self.dim == 2 else ("ux", "uy", "uz", "rx", "ry", "rz")
        cols = [slots.index(d) for d in self.dof_names]
        return nodal[self.conn][:, :, cols].reshape(len(self), -1)

    # --- protocol defaults ----------------------------------------------------------------------
    def tangent(self, state) -> NDArray:
        """Material plus geometric tangent."""
        return self.material_tangent(state) + self.geometric_stiffness(state, self.stress(state))

    def outputs(self, state) -> dict[str, NDArray]:
        """Generalized stresses by name, ``{name: (E,)}``."""
        s = self.stress(state)
        return {n: s[:, i] for i, n in enumerate(self.stress_names)}

    def properties(self) -> dict[str, NDArray]:
        """Per-element data written to results files, ``{name: (E,)}``."""
        return {}


def unit(v: NDArray) -> tuple[NDArray, NDArray]:
    """Unit vectors and lengths of ``v (..., 3)``."""
    length = np.linalg.norm(v, axis=-1)
    return v / length[..., None], length


def outer(a: NDArray, b: NDArray) -> NDArray:
    """Batched outer product ``a b^T``."""
    return np.einsum("...i,...j->...ij", a, b)
