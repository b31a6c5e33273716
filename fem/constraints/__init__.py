"""Constraint groups: joints between nodes, with Lagrange multipliers as unknowns.

A constraint group is a block source like an element group (:mod:`fem.assembly`): its items
constrain the DOFs of their nodes, each with ``n_multipliers`` multipliers ``lambda`` numbered in
the DOF map's ``multipliers`` block (:mod:`fem.dofs`). For constraints ``g(q) = 0`` with Jacobian
``G`` its vector and tangent, on ``[nodal DOFs; multipliers]``, are::

    [G^T lambda ; g(q)]          [[d(G^T lambda)/dq, G^T], [G, 0]]

added to the residual ``f_int - f_ext`` and to the tangent of every step. ``lambda`` is the force
the constraint transmits (for a tie: the force its first node receives from its second).

=====================  ==========================================================================
group                  constraint
=====================  ==========================================================================
:class:`.tie.Tie`      coincident translations of two nodes (a pin between members meeting at a
                       point): ``u_b - u_a = 0``, exact under finite rotations (it is linear)
:class:`.joint.Joint`  joints at any point between two nodes or a node and the ground, each
                       with its frame: spherical, revolute, universal, fixed, cylindrical,
                       prismatic, planar, inline; revolute and prismatic ones may be driven
                       (``[[joints]]`` in decks, :mod:`fem.io.build_constraints`)
:class:`.spherical.    the spherical joint as its own class (the point rows of a joint)
Spherical`
=====================  ==========================================================================

For the energy-conserving scheme every group also gives ``step_vector(s0, s1, mu, scale)`` and
``step_tangent``: ``[G_d^T lambda; g(q_1)]`` with ``G_d dq = g(q_1) - g(q_0)``, so that ideal
joints do no work over a step (:meth:`fem.system.System.constraint_step_vector`). What the pair
groups share is in :mod:`fem.constraints.base`.
"""

from fem.constraints.spherical import Spherical
from fem.constraints.tie import Tie

CONSTRAINT_TYPES = {"tie": Tie}

__all__ = ["CONSTRAINT_TYPES", "Spherical", "Tie"]
