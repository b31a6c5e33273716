"""How a step treats its constraint groups: the handlers of a dynamic step's ``formulation``.

* multipliers (the default): the joints' multipliers are unknowns of every step; their
  consistent accelerations and reactions of a state solve Gauss's principle, the index-1
  equations (:mod:`fem.constraints.handlers.consistent`);
* ``nullspace``: the multipliers eliminated by an orthonormal tangent basis, the mass-orthogonal
  null-space form (:mod:`fem.constraints.handlers.nullspace`);
* ``partitioning``: Blajer's coordinate partitioning with the projective criterion
  (:mod:`fem.constraints.handlers.partitioning`).

The step that runs the last two from a deck is :mod:`fem.analysis.eliminated`.
"""
