"""Eigen-solvers: the project's own Lanczos methods, LAPACK and SLEPc, in one package.

* :mod:`.lanczos`: shift-invert block Lanczos for symmetric pencils ``K x = omega^2 M x``;
* :mod:`.lanczos2`: the two-sided Lanczos of Doan, Geradin & Kill for quadratic problems
  ``(p^2 M + p B + K) x = 0``;
* :mod:`.pencil`: the pairs of largest real part of ``a x = nu b x`` (LAPACK or SLEPc).
"""
