"""Component mode synthesis (issue 13): reductions of components and their coupling.

* :mod:`fem.cms.craig_bampton`: static constraint modes + fixed-interface normal modes;
* :mod:`fem.cms.coupling`: Craig-Bampton components assembled on shared boundary coordinates;
* :mod:`fem.cms.free_interface`: free-free modes + residual attachment modes, coupled with the
  interface forces eliminated (Hutton & Smith), and the modes-only variant;
* :mod:`fem.cms.component`: the input checks, factorizations and modes they share, and
  :func:`~fem.cms.component.node_dofs` (a node set's unknowns and their global labels);
* :mod:`fem.cms.modification`: Hutton-Smith design modification of a coupled free-interface
  model (eigenvalue sensitivities, forward and inverse modification; Python API);
* :mod:`fem.cms.nonlinear`: modal derivatives and the component's own polynomial strain energy
  (geometric stiffening of 3D co-rotational superelements).

In decks: the ``cms_reduce`` step and the ``superelement`` element family
(:mod:`fem.analysis.cms`, :mod:`fem.elements.superelement`) and the ``modify`` step
(:mod:`fem.analysis.modify`). Superelements in large motion are to come.
"""

#: the kinds of design parameter of a modification (:mod:`fem.cms.modification`), the choices of
#: the ``modify`` step's ``parameters.kind``: here, so that the deck schema does not import the
#: modification's solvers
KINDS = ("density", "modulus")
