"""A model with its DOF map and assembler: full internal-force vectors and tangent values.

This is the only place that loops, and it loops over element and constraint *groups* (a handful),
never over elements. Everything returned is on the full vector (the unknowns first: free nodal
DOFs, element-internal unknowns, multipliers; then the fixed DOFs, see :mod:`fem.dofs`) or in the
CSR pattern of the unknowns of the :class:`~fem.assembly.Assembler`.

The internal force and the tangent include the constraint groups' ``[G^T lambda; g(q)]`` and
``[[d(G^T lambda)/dq, G^T], [G, 0]]`` (``constraints=True``, the default); the mid-point
integrators evaluate element forces at the mid-point configuration and add the constraints'
step forms themselves (:meth:`constraint_step_vector`, :meth:`constraint_step_matrix`: each
group's discrete gradient, so that ideal joints do no work over a step).
"""

from __future__ import annotations

from functools import cached_property

import numpy as np
from numpy.typing import NDArray

from fem.assembly import Assembler
from fem.dofs import DofMap
from fem.elements.base import nodal_average
from fem.inertia import inertia_groups, rate_fields
from fem.inertia.nodal import NodalInertia
from fem.state import State


class System:
    """Assembled quantities of a model.

    Attributes
    ----------
    model, dofmap, assembler
    """

    def __init__(self, model, internal: bool = False, constraint_scales: list | None = None):
        #: the rank's owner-computes assembly while a step uses it (:mod:`fem.owner_computes`):
        #: :meth:`evaluate` and :meth:`tangent` then give the tangent's owned rows only
        self.owner = None
        self.model = model
        self.dofmap = DofMap.build(model, internal=internal)
        self.assembler = Assembler(model, self.dofmap)
        start = self.dofmap.blocks["multipliers"].start
        # each constraint group's multipliers, as positions in State.multipliers
        self._lam = [pos - start for pos in self.dofmap.multipliers]
        self.constraint_scales = (list(constraint_scales) if constraint_scales is not None
                                  else self._constraint_scales(model))
        self.additive = self._additive_nodes(model)
        self._bind_reactions(model)

    def _bind_reactions(self, model) -> None:
        """Hand groups whose forces grow with a joint's reaction its multipliers and scale."""
        names = [c.name for c in model.constraints]
        for g in model.groups:
            if "reactions" in g.capabilities:
                k = names.index(g.reaction[0])
                g.bind_reactions(self._lam[k], self.constraint_scales[k])

    def repattern(self) -> bool:
        """Make the assembler again if a group's elements changed (a sphere set's broad phase).

        Returns whether it did; the CSR pattern (and so every matrix of the old one) changed.
        """
        if all(g.conn is c for g, c in zip(self.model.groups, self.assembler.conns,
                                             strict=True)):
            return False
        self.assembler = Assembler(self.model, self.dofmap)
        return True

    @staticmethod
    def _additive_nodes(model) -> NDArray | None:
        """3D nodes whose rotations only small-displacement elements use: additive rotation vectors.

        Only groups with rotation DOFs have a say (a truss's formulation does not change what
        the rotations of a beam node are); a constraint group acting on rotations (a joint at
        offsets) turns its nodes by spins, so its nodes are never additive.
        """
        if model.dim != 3:
            return None
        linear = np.zeros(model.n_nodes, dtype=bool)
        nonlinear = np.zeros(model.n_nodes, dtype=bool)
        for g in model.groups:
            if {"rx", "ry", "rz"} & set(g.dof_names):
                (linear if g.additive_rotations else nonlinear)[g.conn] = True
        for c in model.constraints:
            if {"rx", "ry", "rz"} & set(c.dof_names):
                nonlinear[c.conn] = True
        return linear & ~nonlinear

    def update(self, state: State, du_nodal: NDArray) -> None:
        """Apply a nodal increment ``(n, nslots)`` to ``state`` (see :meth:`State.increment`)."""
        state.increment(du_nodal, self.additive)

    def update_unknowns(self, state: State, du: NDArray) -> None:
        """Apply a correction of the unknowns ``du (n_free,)``: every block of the DOF map."""
        state.increment(self.dofmap.to_nodal(du), self.additive)
        blocks = self.dofmap.blocks
        if blocks["internal"].stop > blocks["internal"].start:
            state.internal += du[blocks["internal"]]
        if blocks["multipliers"].stop > blocks["multipliers"].start:
            state.multipliers += du[blocks["multipliers"]]

    @property
    def n_free(self) -> int:
        """Number of unknowns."""
        return self.dofmap.n_free

    def reference_state(self) -> State:
        """The undeformed state at rest, with every field the groups declare.

        The rates of the inertia groups (:func:`fem.inertia.rate_fields`) and the history of the
        element groups (:meth:`fem.elements.base.ElementGroup.history_fields`, zeros until an
        energy-conserving step starts it).
        """
        blocks = self.dofmap.blocks
        rates, history = self._declared
        return State.reference(self.model.dim, self.model.n_nodes,
                               n_internal=blocks["internal"].stop - blocks["internal"].start,
                               n_multipliers=blocks["multipliers"].stop
                               - blocks["multipliers"].start,
                               rates=rates, history=history)

    @cached_property
    def _declared(self) -> tuple[dict, dict]:
        """The groups' declared rates and history, ``{group: {name: (shape, fill)}}``, once."""
        history = {g.name: {k: (shape, 0.0) for k, shape in g.history_fields().items()}
                   for g in self.model.groups}
        return rate_fields(self.model), {k: v for k, v in history.items() if v}

    # --- constraint groups (fem.constraints) --------------------------------------------------
    def _constraint_scales(self, model) -> list[float]:
        """Each constraint group's row scale: the mean stiffness of the DOFs it constrains.

        Constraint rows of entries 1 beside stiffness rows of entries ``EI/l^3`` make a badly
        scaled saddle-point matrix (and a factorization may take a unit pivot for a null one);
        rows and multipliers scaled by the stiffness where they act have entries of one size.
        From the elements' tangent at the reference state, once.
        """
        if not model.constraints:
            return []
        ref = self.reference_state()
        diag = np.abs(self.assembler.to_scipy(self.tangent(ref, constraints=False)).diagonal())
        typical = float(diag[diag > 0].mean()) if np.any(diag > 0) else 1.0
        scales = []
        for sc, c in zip(self.assembler.constraints, model.constraints, strict=True):
            dofs = sc.edofs[:, :c.nd].ravel()
            dofs = dofs[(dofs >= 0) & (dofs < self.dofmap.n_nodal)]
            values = diag[dofs]
            scales.append(float(values[values > 0].mean()) if np.any(values > 0) else typical)
        return scales

    def multipliers(self, state: State) -> list[NDArray]:
        """Each constraint group's multiplier unknowns, ``(E, n_multipliers)`` (scaled)."""
        return [state.multipliers[pos] for pos in self._lam]

    def _constraints(self, state: State, what: str):
        return [getattr(c, what)(state, mu, s) for c, mu, s in
                zip(self.model.constraints, self.multipliers(state), self.constraint_scales,
                    strict=True)]

    def constraint_step(self, s0: State, s1: State, tangent: bool = True
                        ) -> tuple[NDArray, NDArray | None]:
        """The groups' step forms over ``s0 -> s1``: vector and (``tangent``) CSR values.

        The vector (n_active,) is ``[G_d^T lambda; g(q_1)]``, the matrix its derivative by
        ``s1``; one evaluation per group gives both.

        ``G_d`` is each group's discrete gradient (``G_d dq = g(q_1) - g(q_0)``), so ideal
        joints do no work over a step whose ends satisfy them (the energy-conserving scheme).
        """
        pairs = [c.step(s0, s1, mu, s, tangent) for c, mu, s in
                 zip(self.model.constraints, self.multipliers(s1), self.constraint_scales,
                     strict=True)]
        none = [None] * len(self.model.groups)
        f = self.assembler.vector(none, constraints=[v for v, _ in pairs])
        if not tangent:
            return f, None
        return f, self.assembler.matrix(none, constraints=[K for _, K in pairs])

    def constraint_step_vector(self, s0: State, s1: State) -> NDArray:
        """(n_active,) :meth:`constraint_step`'s vector alone."""
        return self.constraint_step(s0, s1, tangent=False)[0]

    def constraint_step_matrix(self, s0: State, s1: State) -> NDArray:
        """CSR values of :meth:`constraint_step`'s derivative alone."""
        return self.constraint_step(s0, s1)[1]

    def drive_work(self, s0: State, s1: State, average: bool = False) -> float:
        """The work the drivers of the constraint groups did over ``s0 -> s1``.

        With the multipliers of ``s1`` (the mid-point family's, which act over the whole step),
        or (``average``) the mean of both ends' (schemes whose multipliers are end values).
        """
        mus = self.multipliers(s1)
        if average:
            mus = [0.5 * (a + b) for a, b in zip(self.multipliers(s0), mus, strict=True)]
        return sum(c.drive_work(s0, s1, mu, s) for c, mu, s in
                   zip(self.model.constraints, mus, self.constraint_scales, strict=True))

    def constraint_vector(self, state: State) -> NDArray:
        """(n_active,) the constraint groups' ``[G^T lambda; g(q)]``."""
        return self.assembler.vector([None] * len(self.model.groups),
                                     constraints=self._constraints(state, "vector"))

    def constraint_matrix(self, state: State) -> NDArray:
        """CSR values of the constraint groups' tangents."""
        return self.assembler.matrix([None] * len(self.model.groups),
                                     constraints=self._constraints(state, "tangent"))

    # --- element groups -----------------------------------------------------------------------
    def evaluate(self, state: State, load_stiffness: NDArray | None = None, tangent: bool = True,
                 constraints: bool = True) -> tuple[NDArray, NDArray | None]:
        """Internal forces ``(n_active,)`` and (if ``tangent``) the tangent's CSR values.

        One evaluation per group gives both (:meth:`fem.elements.base.ElementGroup.evaluate`:
        the element kinematics are computed once); the constraint groups' vectors and matrices
        and the nodal load-stiffness blocks are added. Under owner-computes assembly
        (:attr:`owner`) the tangent's values are right on this rank's rows only.
        """
        if self.owner is not None:
            return self.owner.evaluate(state, load_stiffness, tangent, constraints)
        pairs = [g.evaluate(state, tangent) for g in self.model.groups]
        f = self.assembler.vector([fe for fe, _ in pairs],
                                  constraints=self._constraints(state, "vector") if constraints
                                  else None)
        if not tangent:
            return f, None
        K = self.assembler.matrix([ke for _, ke in pairs], load_stiffness,
                                  constraints=self._constraints(state, "tangent") if constraints
                                  else None)
        return f, K

    def internal_force(self, state: State, constraints: bool = True) -> NDArray:
        """(n_active,) assembled internal forces (and the constraint groups' vectors)."""
        return self.evaluate(state, tangent=False, constraints=constraints)[0]

    def tangent(self, state: State, load_stiffness: NDArray | None = None,
                constraints: bool = True) -> NDArray:
        """CSR values of the tangent (plus nodal load-stiffness blocks and the constraints).

        Under owner-computes assembly (:attr:`owner`) right on this rank's rows only.
        """
        if self.owner is not None:
            return self.owner.tangent(state, load_stiffness, constraints)
        return self.assembler.matrix(
            [g.tangent(state) for g in self.model.groups], load_stiffness,
            constraints=self._constraints(state, "tangent") if constraints else None)

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
        """CSR values of the mass matrix (global axes, reference geometry).

        Lumped: the mass a dynamic step integrates: the nodal inertia group's blocks
        (:class:`fem.inertia.nodal.NodalInertia`, point masses included) plus the element mass of
        every element-level inertia group (beams with ``inertia = "consistent"``, whose rho A is
        not in the nodal group). Consistent: the element groups' consistent masses plus the point
        masses' nodal blocks.
        """
        if lumped:
            inertia = inertia_groups(self, state)
            blocks = [None] * len(self.model.groups)
            for x in inertia.extras:
                blocks[x.index] = x.element_mass(state)
            return self.assembler.matrix(blocks, inertia.nodal.mass_blocks())
        points = NodalInertia.point_masses(self) if self.model.masses else None
        return self.assembler.matrix(
            [g.mass(state, lumped=False) if "mass" in g.capabilities else None
             for g in self.model.groups], points)

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

    def linearized_force(self, state: State, du_nodal: NDArray,
                         dlam: NDArray | None = None, dinternal: NDArray | None = None
                         ) -> NDArray:
        """(n_active,) ``f_int(state) + K(state) du`` element by element (for linear steps).

        ``dlam (n_multipliers,)`` is the change of the multipliers (constraints are linear in
        them), ``dinternal (n_internal,)`` that of the element-internal unknowns.
        """
        blocks = []
        start = self.dofmap.blocks["internal"].start
        for g, due, pos in zip(self.model.groups, self.element_increments(du_nodal),
                               self.dofmap.internal, strict=True):
            if pos.shape[1]:                     # the group's internal unknowns follow
                inner = (dinternal[pos - start] if dinternal is not None
                         else np.zeros(pos.shape))
                due = np.hstack([due, inner])
            blocks.append(g.internal_force(state) + np.einsum("eij,ej->ei", g.tangent(state), due))
        cblocks = []
        for c, mu, pos, s in zip(self.model.constraints, self.multipliers(state), self._lam,
                                 self.constraint_scales, strict=True):
            dl = dlam[pos] if dlam is not None else np.zeros_like(mu)
            inc = np.hstack([c.element_vector(du_nodal), dl])
            cblocks.append(c.vector(state, mu, s) + np.einsum("eij,ej->ei",
                                                              c.tangent(state, mu, s), inc))
        return self.assembler.vector(blocks, constraints=cblocks)

    def positions(self, state: State) -> NDArray:
        """(n_free,) the magnitude each free DOF's coordinate is known to relative precision.

        A translation is stored as part of a position ``x = X + u``, so round-off limits it to
        ``eps |x|`` however small ``u`` is; a rotation to ``eps max(|angle|, 1)`` (angles enter
        through sines and cosines, 3D orientations through unit quaternions).
        """
        nodal = np.empty((state.n_nodes, self.model.nslots))
        d = self.model.dim
        np.abs(self.model.X[:, :d] + state.u[:, :d], out=nodal[:, :d])
        rot = state.rot if d == 2 else state.rotation_vectors()
        np.maximum(np.abs(rot), 1.0, out=nodal[:, d] if d == 2 else nodal[:, d:])
        out = np.zeros(self.n_free)                 # the other blocks: no coordinates
        dm = self.dofmap
        out[:dm.n_nodal] = nodal.reshape(-1)[dm.free_nodal_slots]
        return out

    def outputs(self, state: State) -> dict[str, dict[str, NDArray]]:
        """Section forces per element group, and what each constraint group transmits."""
        return self.frame_outputs(state, nodal=False)[0]

    def frame_outputs(self, state: State, nodal: bool = True
                      ) -> tuple[dict[str, dict[str, NDArray]], dict[str, NDArray]]:
        """What a results frame holds of ``state``: :meth:`outputs` and the nodal fields.

        The nodal fields ``{name: (n,) or (n, 3)}`` average the values of the groups with
        ``"nodal_outputs"`` over the elements at each node, across groups
        (:func:`fem.elements.base.nodal_average`; ``NaN`` at nodes no such group has), from
        the same evaluation as their cell outputs (:meth:`~fem.elements.base.ElementGroup.
        results`). ``nodal=False``: the outputs alone (and no nodal fields).
        """
        out, parts = {}, []
        for g in self.model.groups:
            if nodal and "nodal_outputs" in g.capabilities:
                out[g.name], p = g.results(state)
                if p is not None:
                    parts.append(p)
            else:
                out[g.name] = g.outputs(state)
        for c, mu, s in zip(self.model.constraints, self.multipliers(state),
                            self.constraint_scales, strict=True):
            out[c.name] = c.outputs(state, mu, s)
        return out, nodal_average(parts, self.model.n_nodes) if parts else {}
