"""Solvers the analysis steps share.

Newton's method and its convergence test, path controls, eigen-solvers (:mod:`.newton`,
:mod:`.controls`, :mod:`.eigen`). They see a problem (residual, tangent, update), never a model,
a load or a time.
"""
