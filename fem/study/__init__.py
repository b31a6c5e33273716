"""Parameter studies: one deck, many variants (issue 35; DESIGN.md, "Studies").

A study (:mod:`.spec`) names deck keys by path (``materials.steel.E``: the entry named steel of
``[[materials]]``; ``steps.spin.rate``; ``nodes.coordinates[1][0]``) and their values (lists,
linear or logarithmic ranges, cartesian products, zipped lists, Latin hypercube or Sobol samples
by :mod:`scipy.stats.qmc` with a seed). It expands the parsed base deck into variants by those
paths (never by text), and checks every variant through the normal deck checks before any runs.
:mod:`.runner` runs the variants in-process (``-j 1``), in worker processes that import fem once
(``-j N``), or over MPI ranks (``mpiexec -n N``), one results file per variant and a record of
each; :mod:`.summary` writes the summary table (HDF5 and CSV) and, for a ``sensitivity`` study,
the central differences of the outputs to the parameters.
"""
