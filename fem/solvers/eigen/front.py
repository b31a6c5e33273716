"""The eigen front-end: every eigen-solve of a model goes through one of three calls.

* :func:`symmetric` ``(K, M, count, shift)``: the pairs of ``K x = omega^2 M x`` nearest the
  shift (``K`` symmetric, saddle points of multipliers included; ``M`` positive semi-definite),
  by ``dense`` (LAPACK, :mod:`.dense`), ``lanczos`` (the project's shift-invert block Lanczos,
  :mod:`.lanczos`) or ``slepc`` (Krylov-Schur, :mod:`.slepc`): modal steps, CMS reductions, the
  reduced models of :mod:`fem.cms`;
* :func:`general` ``(A, B, count)``: the pairs of largest real part of ``A x = nu B x`` by
  ``dense``, ``slepc`` or, for a symmetric pencil with ``B`` positive definite, ``lanczos`` in
  the buckling transformation: buckling steps;
* :func:`quadratic` ``(M, D, K, count, shift)``: the pairs of ``(p^2 M + p D + K) x = 0``
  nearest the shift, with left vectors, by ``dense`` (the first-order pencil, QZ) or
  ``lanczos2`` (the two-sided Krylov solver of Doan, Geradin & Kill, :mod:`.lanczos2`): linearize
  steps and stability sweeps.

Each returns one :class:`Eigenpairs`. What holds for every method (DESIGN.md, "Eigen
front-end"):

* **Values are checked.** Symmetric values are the Rayleigh quotients of the returned vectors on
  the original ``K`` and ``M``, after a Rayleigh-Ritz step in their span (which also makes near
  multiple pairs ``M``-orthonormal); every pair's backward error on the original problem is
  returned and must be small (else :class:`~fem.errors.ConvergenceError`).
* **No silent short answers.** Fewer pairs than asked come back only when the model has no more
  (its finite spectrum is exhausted: the unknowns with mass, less the constraints on them), and
  :attr:`Eigenpairs.note` says so; anything else short is a
  :class:`~fem.errors.ConvergenceError`.
* **Multiplicities.** A Krylov method finds at most as many copies of a multiple eigenvalue as its
  block has vectors (SLEPc's Krylov-Schur: one; exact arithmetic gives no more, round-off some).
  When a returned cluster (values within ``1e-8`` relative, or at the round-off of the spectrum)
  is as large as the block, the ``M``-orthogonal complement of the returned vectors is searched
  for its nearest pair (a restart with deflation: Saad 2011, "Numerical methods for large
  eigenvalue problems", 2nd ed., section 4.2; Wilkinson's deflation for symmetric matrices); one
  nearer the shift than the farthest returned takes that one's place, and the search repeats.
* **Signs.** Each vector's component of largest magnitude (the first within ``1e-8`` of it) is
  made real and positive, so a mode shape does not flip with the BLAS thread count.
* **Free structures** (``shift`` not given and ``K`` singular: rigid-body modes). The shift must
  lie below the rigid modes' round-off, yet near the low spectrum: a Krylov method resolves
  eigenvalues ``lam`` only as fast as ``(lam_2 - lam_1) / |sigma|`` separates them in the
  shift-inverted spectrum, and SLEPc, given ``-1e-6 max K_ii / M_ii`` (2000 times the first
  elastic ``omega^2`` of a free thin plate) returned 3 of its 6 rigid modes. So: a first shift
  ``sigma_0 = -1e-6 max K_ii / M_ii`` (regular: below every eigenvalue's round-off), a pilot
  of six block solves there (a block Krylov space of 36 vectors and its Rayleigh-Ritz values on
  ``K``, ``M``: values at round-off are rigid modes, the first above them the scale of the low
  spectrum, resolved or not), and the shift moved to minus that value when it is below a tenth of
  ``|sigma_0|`` (at most ``1e-10 max K_ii / M_ii`` from zero). Ritz values bound the
  eigenvalues of their rank from above (Cauchy interlacing), so the new shift never passes the
  first elastic eigenvalue's scale by more than the pilot's resolution.
* **An explicit shift at an eigenvalue** (``shift = 0`` on a free structure): :class:`SingularShift`
  (a :class:`~fem.errors.ModelError`), which the step turns into a deck error naming its key.
* **Interrupts.** The Lanczos iterations poll :func:`fem.interrupt.check` once per block solve,
  SLEPc through its stopping test and preconditioner (:mod:`.slepc`).

The factorizations of ``K - sigma M`` are the caller's (``factor``: e.g. a CMS component's, with
its options prefix) or :class:`Factorization`'s (fem's direct solver, ``L D L^T`` by MUMPS when
the matrix is symmetric, the deck's and the command line's options under ``prefix``). Nothing
here imports LAPACK, SciPy's dense or sparse eigen-solvers or SLEPc before a solve needs them.

The parts: :mod:`.common` (:class:`Eigenpairs`, :class:`Factorization`, the tolerances),
:mod:`.shift` (the shift, free structures), :mod:`.multiplicity` (the iteration and its check of
multiplicities).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

from fem import lazy
from fem.errors import ConvergenceError, ModelError
from fem.solvers.eigen.common import (
    ACCEPT,
    METHODS,
    TOLERANCE,
    Eigenpairs,
    Factorization,
    SingularShift,
    is_symmetric,
    massive,
    normalize_signs,
    spectrum_scale,
)
from fem.solvers.eigen.multiplicity import iterate
from fem.solvers.eigen.shift import shifted

sp = lazy.module("scipy.sparse")

# --- symmetric -----------------------------------------------------------------------------

def symmetric(K, M, count: int, shift: float | None = None, *, method: str = "lanczos",
              prefix: str = "eigen_", options: dict | None = None,
              factor: Callable | None = None, solve=None, tol: float = TOLERANCE,
              block: int | None = None, what: str = "the eigen-solve",
              distributed: bool = False) -> Eigenpairs:
    """The ``count`` pairs of ``K x = omega^2 M x`` nearest ``shift`` (module docstring).

    Parameters
    ----------
    K, M : scipy sparse ``(n, n)``, symmetric, ``M`` positive semi-definite
    count : pairs wanted
    shift : ``sigma``; None: 0, or for a singular ``K`` (a free structure) one chosen from the
        spectrum's scale (module docstring)
    method : ``"dense"``, ``"lanczos"`` or ``"slepc"``
    prefix, options : the options prefix (``<step>_``) and the deck's options of the default
        factorization and of SLEPc's EPS (``<prefix>eps_``)
    factor : ``factor(A) -> solver`` with ``solver(B) = A^{-1} B``, ``solver.regular()``,
        ``solver.close()`` (default :class:`Factorization` with ``prefix`` and ``options``)
    solve : instead, the caller's factorization of ``K - shift M`` (``shift`` given; kept open:
        :func:`shifted` makes one, with the automatic shift, for several solves)
    tol : the Lanczos acceptance (:func:`fem.solvers.eigen.lanczos.lanczos`)
    block : the Lanczos block (default :func:`fem.solvers.eigen.lanczos.default_block`)
    what : names the solve in messages (``"step 'modes'"``)
    distributed : the default factorizations are MPI matrices factored across the ranks of a
        distributed solve (:class:`Factorization`); everything else runs replicated

    Raises :class:`SingularShift` for a given shift at an eigenvalue,
    :class:`~fem.errors.ModelError` for a motion with neither stiffness nor mass,
    :class:`~fem.errors.ConvergenceError` when an iterative method does not converge.
    """
    K, M = sp.csr_matrix(K), sp.csr_matrix(M)
    n_mass = massive(M)
    if n_mass == 0:
        raise ModelError(f"{what}: no unknown has mass (M = 0): no eigenvalue is finite")
    want = min(count, n_mass)
    scale = spectrum_scale(K, M)
    if method == "dense":
        from fem.solvers.eigen import dense

        w, X = dense.symmetric(K, M)
        sigma = 0.0 if shift is None else float(shift)
        X = X[:, np.argsort(np.abs(w - sigma), kind="stable")[:want]]
        return _finish(K, M, X, method, count, sigma, len(w), 0, what)
    if method not in METHODS["symmetric"]:
        raise ValueError(f"unknown symmetric eigen-solver {method!r}")
    if solve is not None:
        if shift is None:
            raise ValueError("a factorization given needs its shift")
        sigma, own = float(shift), False
    else:
        if factor is None:
            def factor(A):
                return Factorization(A, prefix, options, distributed=distributed)
        sigma, solve = shifted(K, M, shift, factor=factor, what=what)
        own = True
    try:
        X, exhausted, dim = iterate(method, K, M, want, sigma, solve, tol, block, prefix,
                                     scale, what)
    finally:
        if own:
            solve.close()
    everything = exhausted or X.shape[1] == n_mass      # every finite pair the model has
    return _finish(K, M, X, method, count, sigma, X.shape[1] if everything else None, dim,
                   what)


def _finish(K, M, X, method, count, sigma, finite, dimension, what) -> Eigenpairs:
    """Rayleigh-Ritz in the span of ``X``, checked, ordered, signs normalized; the note."""
    from fem.solvers.eigen.lanczos import _rayleigh_ritz, backward_errors

    n = K.shape[0]
    if X.shape[1]:
        omega2, X, KX, MX = _rayleigh_ritz(K, M, X, None)
        berr = backward_errors(K, M, omega2, X, KX, MX)
    else:
        omega2, berr = np.zeros(0), np.zeros(0)
    order = np.argsort(omega2, kind="stable")
    omega2, X, berr = omega2[order], X[:, order], berr[order]
    if len(berr) and berr.max() > ACCEPT:
        raise ConvergenceError(f"{what}: {method} returned pairs with backward errors up to "
                               f"{berr.max():.2g} (above {ACCEPT:g})")
    note = ""
    if len(omega2) < count:
        if finite is None:
            raise ConvergenceError(f"{what}: {method} returned {len(omega2)} of {count} pairs")
        note = (f"asked {count} pairs, the model has {len(omega2)} (its finite eigenvalues: "
                f"{massive(M)} unknowns with mass, less the constraints on them)")
    return Eigenpairs(omega2, normalize_signs(X) if n else X, berr, method, count, shift=sigma,
                      note=note, dimension=dimension)


# --- general -------------------------------------------------------------------------------

def general(A, B, count: int, *, method: str = "dense", prefix: str = "eigen_",
            options: dict | None = None, symmetric: bool | None = None,
            what: str = "the eigen-solve", distributed: bool = False) -> Eigenpairs:
    """At least ``count`` pairs of largest real part of ``A x = nu B x``, and the pencil's scale.

    ``dense``: every pair (LAPACK); ``slepc``: Krylov-Schur with ``B`` factored (the largest
    magnitude sought too when a positive ``nu`` is found, :func:`.slepc.largest_real`);
    ``lanczos``: the ``count`` values of largest magnitude, of either sign, by the block Lanczos
    in the buckling transformation (Grimes, Lewis & Simon 1994, section 5.2: ``B x = lam A x``,
    ``OP = B^{-1} A`` symmetric in the ``B`` inner product, ``nu = 1 / lam``), for a symmetric
    pencil with ``B`` positive definite (``B``'s factorization with ``prefix``, ``options``).
    ``scale`` is the largest ``|nu|`` of the pencil (for ``lanczos``: of those found, the
    largest first). Vectors are phase-normalized (their largest component real, positive).
    ``symmetric``: whether to treat the pencil as symmetric (``dense``: ``eigh`` when ``B`` is
    also definite; ``slepc``: ``GHEP``); default: both matrices symmetric to ``1e-10``.
    ``distributed``: ``slepc``'s EPS and ``lanczos``'s factorization of ``B`` are on the ranks of
    the distributed solve (MPIAIJ, MUMPS; vectors gathered in the serial numbering).
    """
    A, B = sp.csr_matrix(A), sp.csr_matrix(B)
    sym = is_symmetric(A, 1e-10) and is_symmetric(B, 1e-10) if symmetric is None else symmetric
    if method == "dense":
        from fem.solvers.eigen import dense

        nu, X = dense.general(A, B, sym)
        finite = nu[np.isfinite(nu)]
        scale = float(np.abs(finite).max()) if len(finite) else 0.0
    elif method == "slepc":
        from fem.solvers.eigen import slepc

        nu, X, scale = slepc.largest_real(A, B, count, prefix + "eps_", sym, what,
                                          distributed=distributed)
    elif method == "lanczos":
        from fem.solvers.eigen.lanczos import lanczos

        solve = Factorization(B, prefix, options, role="B_", distributed=distributed)
        try:
            p = lanczos(B, A, min(count, B.shape[0]), 0.0, solve, inner=B, tol=TOLERANCE)
        finally:
            solve.close()
        lam = p.omega2
        nu = np.where(lam != 0, 1.0 / np.where(lam != 0, lam, 1.0), np.inf).astype(complex)
        X = p.vectors.astype(complex)
        scale = float(np.abs(nu).max(initial=0.0))
    else:
        raise ValueError(f"unknown general eigen-solver {method!r}")
    X = normalize_signs(X.astype(complex))
    return Eigenpairs(nu, X, _general_residuals(A, B, nu, X), method, count, scale=scale)


def general_solver(A, B, prefix: str, *, symmetric: bool, nev: int):
    """The SLEPc EPS :func:`general` sets up (``slepc``), configured from the options database.

    For the check of a deck's SLEPc options (:mod:`fem.io.solver_options`), which sets one up on a
    small pencil and solves nothing; the caller destroys it.
    """
    from fem.solvers.eigen.slepc import eps_largest_real

    return eps_largest_real(A, B, prefix, symmetric=symmetric, nev=nev)


def _general_residuals(A, B, nu, X) -> NDArray:
    """``||A x - nu B x|| / ((||A|| + |nu| ||B||) ||x||)``; NaN for infinite ``nu``."""
    if X.shape[1] == 0:
        return np.zeros(0)
    nA, nB = _norm(A), _norm(B)
    ok = np.isfinite(nu)
    nuf = np.where(ok, nu, 0.0)
    R = A @ X - (B @ X) * nuf
    den = (nA + np.abs(nuf) * nB) * np.abs(X).max(axis=0)
    return np.where(ok, np.abs(R).max(axis=0) / np.maximum(den, 1e-300), np.nan)


def _norm(A) -> float:
    return float(abs(A).sum(axis=1).max()) if A.nnz else 0.0


# --- quadratic -----------------------------------------------------------------------------

def quadratic(M, D, K, count: int, shift: complex = 0.0, *, method: str = "lanczos2",
              what: str = "the eigen-solve") -> Eigenpairs:
    """The ``count`` pairs of ``(p^2 M + p D + K) x = 0`` nearest ``shift``, with left vectors.

    ``dense``: every finite pair of the first-order pencil (:func:`.dense.quadratic`), those with
    a backward error below ``1e-6`` kept; ``lanczos2``: the two-sided Krylov solver
    (:func:`.lanczos2.quadratic_eigen`, which accepts a pair at ``1e-8``). Complex conjugates
    count separately. Fewer than ``count`` come back only when the finite spectrum is exhausted
    (:attr:`Eigenpairs.note`). Raises :class:`SingularShift` for an eigenvalue at the shift
    (``lanczos2``: ``K + p_s D + p_s^2 M`` is factored).
    """
    if method == "dense":
        from fem.solvers.eigen import dense

        p, X, Y = dense.quadratic(M, D, K)
        errors = quadratic_residuals(M, D, K, p, X)
        good = errors < 1e-6
        p, X, Y, errors = p[good], X[:, good], Y[:, good], errors[good]
        near = np.argsort(np.abs(p - shift), kind="stable")[:count]
        p, X, Y, errors = p[near], X[:, near], Y[:, near], errors[near]
    elif method == "lanczos2":
        from fem.solvers.eigen import lanczos2

        try:
            q = lanczos2.quadratic_eigen(M, D, K, count, shift)
        except lanczos2.SingularShift as err:
            raise SingularShift(shift, f"{what}: {err}") from None
        except ConvergenceError as err:
            raise ConvergenceError(f"{what}: {err}") from None
        p, X, Y, errors = q.values, q.right, q.left, q.backward_errors
    else:
        raise ValueError(f"unknown quadratic eigen-solver {method!r}")
    note = "" if len(p) >= count else (f"asked {count} eigenvalues, the model has {len(p)} "
                                       "finite ones")
    return Eigenpairs(p, normalize_signs(np.asarray(X, dtype=complex)), errors, method, count,
                      left=normalize_signs(np.asarray(Y, dtype=complex)), shift=shift,
                      note=note)


def quadratic_residuals(M, D, K, p: NDArray, X: NDArray) -> NDArray:
    """Second-order backward errors of the columns of ``X`` (infinity norms).

    ``||(p^2 M + p D + K) x|| / ((|p|^2 ||M|| + |p| ||D|| + ||K||) ||x||)``.
    """
    if X.shape[1] == 0:
        return np.zeros(0)
    R = (M @ X) * p**2 + (D @ X) * p + K @ X
    den = (np.abs(p)**2 * _norm(M) + np.abs(p) * _norm(D) + _norm(K)) * np.abs(X).max(axis=0)
    return np.abs(R).max(axis=0) / np.maximum(den, 1e-300)
