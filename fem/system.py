"""A model with its DOF map and assembler: full internal-force vectors and tangent values.

This is the only place that loops, and it loops over element *groups* (a handful), never over
elements. Everything returned is on the full active-DOF vector (free DOFs first, then fixed ones,
see :mod:`fem.dofs`) or in the free-DOF CSR pattern of the :class:`~fem.assembly.Assembler`.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from fem.assembly import Assembler
from fem.dofs import DofMap
from fem.state import State


class System:
    """Assembled quantities of a model.

    Attributes
    ----------
    model, dofmap, assembler
    """

    def __init__(self, model):
        self.model = model
        self.dofmap = DofMap.build(model)
        self.assembler = Assembler(model, self.dofmap)
        self.additive = self._additive_nodes(model)
        self._entry_rows = None      # CSR row of every tangent entry (round_off_floor)

    @staticmethod
    def _additive_nodes(model) -> NDArray | None:
        """3D nodes used only by small-displacement elements: their rotation vector is additive."""
        if model.dim != 3:
            return None
        linear = np.zeros(model.n_nodes, dtype=bool)
        nonlinear = np.zeros(model.n_nodes, dtype=bool)
        for g in model.groups:
            (linear if getattr(g, "formulation", "") == "linear" else nonlinear)[g.conn] = True
        return linear & ~nonlinear

    def update(self, state: State, du_nodal: NDArray) -> None:
        """Apply a nodal increment ``(n, nslots)`` to ``state`` (see :meth:`State.increment`)."""
        state.increment(du_nodal, self.additive)

    @property
    def n_free(self) -> int:
        """Number of unknowns."""
        return self.dofmap.n_free

    def reference_state(self) -> State:
        """The undeformed state at rest."""
        return State.reference(self.model.dim, self.model.n_nodes)

    def internal_force(self, state: State) -> NDArray:
        """(n_active,) assembled internal forces."""
        return self.assembler.vector([g.internal_force(state) for g in self.model.groups])

    def tangent(self, state: State, load_stiffness: NDArray | None = None) -> NDArray:
        """CSR values of the free-DOF tangent (plus nodal load-stiffness blocks)."""
        return self.assembler.matrix([g.tangent(state) for g in self.model.groups],
                                     load_stiffness)

    def material_tangent(self, state: State) -> NDArray:
        """CSR values of the material part of the tangent."""
        return self.assembler.matrix([g.material_tangent(state) for g in self.model.groups])

    def geometric_stiffness(self, state: State, stresses: list[NDArray],
                            load_stiffness: NDArray | None = None) -> NDArray:
        """CSR values of the geometric stiffness of per-group ``stresses``."""
        return self.assembler.matrix(
            [g.geometric_stiffness(state, s) for g, s in zip(self.model.groups, stresses,
                                                             strict=True)], load_stiffness)

    def mass(self, state: State, lumped: bool = False) -> NDArray:
        """CSR values of the mass matrix."""
        return self.assembler.matrix([g.mass(state, lumped=lumped) for g in self.model.groups])

    def strain_energy(self, state: State) -> float:
        """Total strain energy."""
        return float(sum(g.energy(state).sum() for g in self.model.groups))

    def element_increments(self, du_nodal: NDArray) -> list[NDArray]:
        """Per-group element vectors ``(E, nd)`` of a nodal increment ``(n, nslots)``."""
        return [g.element_vector(du_nodal) for g in self.model.groups]

    def stress_rates(self, state: State, du_nodal: NDArray) -> list[NDArray]:
        """Per-group linearized stress changes for a nodal increment."""
        return [g.stress_rate(state, due) for g, due in
                zip(self.model.groups, self.element_increments(du_nodal), strict=True)]

    def linearized_force(self, state: State, du_nodal: NDArray) -> NDArray:
        """(n_active,) ``f_int(state) + K(state) du`` element by element (for linear steps)."""
        blocks = []
        for g, due in zip(self.model.groups, self.element_increments(du_nodal), strict=True):
            blocks.append(g.internal_force(state) + np.einsum("eij,ej->ei", g.tangent(state), due))
        return self.assembler.vector(blocks)

    def positions(self, state: State) -> NDArray:
        """(n_free,) the magnitude each free DOF's coordinate is known to relative precision.

        A translation is stored as part of a position ``x = X + u``, so round-off limits it to
        ``eps |x|`` however small ``u`` is; a rotation to ``eps max(|angle|, 1)`` (angles enter
        through sines and cosines, 3D orientations through unit quaternions).
        """
        nodal = np.ones((state.n_nodes, self.model.nslots))
        d = self.model.dim
        nodal[:, :d] = np.abs(self.model.X[:, :d] + state.u[:, :d])
        rot = np.abs(state.dof_values()[:, d:])
        nodal[:, d:] = np.maximum(rot, 1.0)
        return self.dofmap.from_nodal(nodal)[:self.n_free]

    def round_off_floor(self, tangent: NDArray, positions: NDArray) -> float:
        """``eps | |K| q |``: the residual norm below which round-off hides equilibrium.

        Coordinates are known to ``eps q`` (:meth:`positions`), so internal forces computed from
        them carry errors up to about ``eps |K| q`` (``|K|`` the entrywise absolute tangent, CSR
        values ``tangent``); no Newton iteration can bring the residual below that. One pass over
        the matrix entries (its row of every entry is computed once).
        """
        asm = self.assembler
        if self._entry_rows is None:
            self._entry_rows = np.repeat(np.arange(asm.n_free), np.diff(asm.indptr))
        absK_q = np.bincount(self._entry_rows, weights=np.abs(tangent) * positions[asm.indices],
                             minlength=asm.n_free)
        return float(np.finfo(float).eps * np.linalg.norm(absK_q))

    def outputs(self, state: State) -> dict[str, dict[str, NDArray]]:
        """Section forces per group."""
        return {g.name: g.outputs(state) for g in self.model.groups}
