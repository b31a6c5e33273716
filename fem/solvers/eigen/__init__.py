"""Eigen-solvers behind one front-end (:mod:`.front`; DESIGN.md, "Eigen front-end").

Steps and :mod:`fem.cms` call :func:`symmetric`, :func:`general` and :func:`quadratic`, which
return :class:`Eigenpairs` (:mod:`.common`, with the factorization they share); the symmetric
solve's shift is chosen by :mod:`.shift` and its multiplicities checked by :mod:`.multiplicity`.
The back-ends beside them are

* :mod:`.dense`: every pair by LAPACK;
* :mod:`.lanczos`: shift-invert block Lanczos for symmetric pencils ``K x = omega^2 M x``;
* :mod:`.lanczos2`: the two-sided Krylov solver on Doan, Geradin & Kill's first-order form for
  quadratic problems ``(p^2 M + p B + K) x = 0``;
* :mod:`.slepc`: SLEPc's Krylov-Schur (shift-and-invert for symmetric pencils, largest real part
  of general ones);
* :mod:`.bounds`: error bounds of the eigenvalues of quadratic problems and the stability
  verdict stated against them.

Importing this package loads none of them (nor LAPACK's SciPy wrappers or SLEPc): a run without
eigen steps does not pay for them.
"""

from fem.solvers.eigen.bounds import ErrorBounds, Verdict, error_bounds, verdict
from fem.solvers.eigen.common import (
    DENSE_LIMIT,
    METHODS,
    Eigenpairs,
    Factorization,
    SingularShift,
    is_symmetric,
    massive,
    normalize_signs,
    null_vector,
    spectrum_of,
    spectrum_scale,
)
from fem.solvers.eigen.front import (
    general,
    general_solver,
    quadratic,
    quadratic_residuals,
    symmetric,
)
from fem.solvers.eigen.shift import shifted

__all__ = ["DENSE_LIMIT", "METHODS", "ErrorBounds", "Eigenpairs", "Factorization", "SingularShift",
           "Verdict", "error_bounds", "general", "verdict",
           "general_solver", "is_symmetric", "massive", "normalize_signs", "null_vector",
           "quadratic", "quadratic_residuals", "shifted", "spectrum_of", "spectrum_scale",
           "symmetric"]
