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
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from fem import interrupt, linalg
from fem.errors import ConvergenceError, ModelError

METHODS = {"symmetric": ("dense", "lanczos", "slepc"), "general": ("dense", "slepc", "lanczos"),
           "quadratic": ("dense", "lanczos2")}
TOLERANCE = 1e-10       # symmetric Lanczos acceptance (its Rayleigh quotients: to ~1e-20)
ACCEPT = 1e-8           # a returned symmetric pair's largest backward error
CLUSTER = 1e-8          # values this close (relative) are copies of one eigenvalue
EPS = float(np.finfo(float).eps)
ROUND_OFF = 1e3 * EPS   # |omega^2| below this times max K_ii / M_ii: zero to round-off (rigid)
FREE_SHIFT = 1e-6       # the first shift of a free structure, times -max K_ii / M_ii
NEAREST = 1e-8          # the nearest a free structure's shift comes to zero, same units
PILOT = (6, 6)          # the pilot's block size and block solves
DENSE_LIMIT = 400       # general(method="auto"): LAPACK up to this many unknowns, else SLEPc


@dataclass
class Eigenpairs:
    """What every eigen-solve returns.

    Attributes
    ----------
    values : (m,) eigenvalues: ``omega^2`` ascending (symmetric), ``nu`` (general) or ``p``
        (quadratic, ordered by distance from the shift), complex for the last two
    vectors : (n, m) right vectors (columns); symmetric: ``M``-orthonormal
    residuals : (m,) backward errors of the pairs on the original problem
    method : the back-end that computed them
    asked : the pairs asked for (:attr:`found` is ``len(values)``)
    left : (n, m) left vectors ``y^T (A - nu B) = 0`` where the method gives them
    shift : the shift used (symmetric: ``sigma``, chosen for a free structure)
    note : why fewer pairs than asked came back (empty otherwise)
    scale : the largest eigenvalue magnitude of the pencil, where known (general: round-off of
        the values is about ``eps`` times it)
    dimension : the size of the space that gave them (Lanczos), else 0
    """

    values: NDArray
    vectors: NDArray
    residuals: NDArray
    method: str
    asked: int
    left: NDArray | None = None
    shift: complex = 0.0
    note: str = ""
    scale: float = 0.0
    dimension: int = 0

    @property
    def found(self) -> int:
        """The number of pairs returned."""
        return len(self.values)


class SingularShift(ModelError):
    """``K - sigma M`` (or ``K + p_s D + p_s^2 M``) is singular: an eigenvalue at the shift."""

    def __init__(self, shift, message: str):
        self.shift = shift
        super().__init__(message)


class Factorization:
    """``A`` (scipy sparse) factored once by fem's direct solver; calling it solves a block.

    The KSP has the options prefix ``prefix`` (the deck's ``options`` pushed under it), the
    matrix ``prefix + role``. A symmetric ``A`` (to ``1e-13`` of its largest entry: no follower
    loads) is factored as ``L D L^T`` by MUMPS (:func:`fem.linalg.direct_solver`: half the
    factor's memory and work). The factorization happens at the first solve; a singular ``A``
    raises :class:`fem.linalg.SingularMatrixError` there. :meth:`close` destroys the PETSc
    objects and releases the options.
    """

    def __init__(self, A, prefix: str, options: dict | None = None, *, role: str = "A_",
                 symmetric: bool | None = None):
        A = sp.csr_matrix(A)
        self.prefix = prefix
        self.A = linalg.matrix_from_scipy(A)
        self.A.setOptionsPrefix(prefix + role)
        self.ksp = linalg.direct_solver(self.A, prefix, options,
                                        symmetric=is_symmetric(A) if symmetric is None
                                        else symmetric)

    def __call__(self, B: NDArray) -> NDArray:
        """``A^{-1} B`` for a block ``B (n, m)`` (one multi-right-hand-side solve, checked)."""
        B = np.asarray(B, dtype=float)
        return linalg.solve_block(self.ksp, B.reshape(B.shape[0], -1))

    def regular(self) -> bool:
        """Whether the factorization found no null pivot (it happens here if not yet)."""
        try:
            self(np.ones((self.A.getSize()[0], 1)))
            return True
        except linalg.SingularMatrixError:
            return False

    def close(self) -> None:
        """Destroy the PETSc objects and release the options."""
        if self.ksp is not None:
            self.ksp.destroy()
            self.A.destroy()
            linalg.release_options(self.prefix)
            self.ksp = self.A = None

    def __enter__(self) -> Factorization:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def is_symmetric(A, rtol: float = 1e-13) -> bool:
    """``A`` (scipy sparse) equals its transpose to ``rtol`` of its largest entry.

    Round-off of the assembly passes; a follower load's or a non-conservative term's asymmetry
    does not (it would make a symmetric factorization, which reads one triangle, wrong).
    """
    A = sp.csr_matrix(A)
    scale = abs(A).max() if A.nnz else 0.0
    D = (A - A.T).tocsr()
    return not D.nnz or abs(D).max() <= rtol * scale


def massive(M) -> int:
    """The unknowns with mass (rows of ``M`` not zero): at most that many finite eigenvalues."""
    return int(np.count_nonzero(np.asarray(abs(sp.csr_matrix(M)).sum(axis=1)).ravel()))


def spectrum_scale(K, M) -> float:
    """``max K_ii / M_ii`` over the unknowns with mass: the scale of ``K x = omega^2 M x``."""
    dk, dm = np.abs(K.diagonal()), np.abs(M.diagonal())
    ratio = dk[dm > 0] / dm[dm > 0]
    return float(ratio.max()) if len(ratio) else 0.0


def spectrum_of(A: NDArray) -> NDArray:
    """All eigenvalues (ascending) of a small dense symmetric matrix (LAPACK ``dsyevd``).

    For the checks of definiteness and singularity of small derived matrices (a component's
    interface flexibility), not a model's eigenpairs.
    """
    A = np.asarray(A, dtype=float)
    return np.linalg.eigvalsh(0.5 * (A + A.T))


def null_vector(csr, *, symmetric: bool = False) -> NDArray:
    """An approximate null vector of a singular sparse matrix (to name the unrestrained DOF).

    Up to 400 unknowns every eigenpair by LAPACK (the vector of the eigenvalue of least
    magnitude); above, SciPy's shift-invert Lanczos/Arnoldi (ARPACK) at a small negative shift,
    ``-1e-7`` of the largest diagonal entry, where ``A - sigma I`` is regular even though ``A``
    is not.
    """
    import scipy.sparse.linalg as spla

    n = csr.shape[0]
    scale = float(np.max(np.abs(csr.diagonal()))) or 1.0
    if n <= 400:
        import scipy.linalg as la

        w, v = la.eig(csr.toarray())
        return np.real(v[:, np.argmin(np.abs(w))])
    sigma = -1e-7 * scale
    if symmetric:
        _, v = spla.eigsh(csr, k=1, sigma=sigma, which="LM")
    else:
        _, v = spla.eigs(csr, k=1, sigma=sigma, which="LM")
    return np.real(v[:, 0])


def normalize_signs(X: NDArray) -> NDArray:
    """``X`` with each column's largest component real and positive (module docstring)."""
    if X.shape[1] == 0:
        return X
    mag = np.abs(X)
    top = mag.max(axis=0)
    k = np.argmax(mag >= (1 - 1e-8) * top, axis=0)          # the first within 1e-8 of it
    pivot = X[k, np.arange(X.shape[1])]
    phase = np.where(np.abs(pivot) > 0, np.abs(pivot) / np.where(pivot != 0, pivot, 1), 1)
    return X * (phase if np.iscomplexobj(X) else np.sign(phase.real))


# --- symmetric -----------------------------------------------------------------------------

def symmetric(K, M, count: int, shift: float | None = None, *, method: str = "lanczos",
              prefix: str = "eigen_", options: dict | None = None,
              factor: Callable | None = None, solve=None, tol: float = TOLERANCE,
              block: int | None = None, what: str = "the eigen-solve") -> Eigenpairs:
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
                return Factorization(A, prefix, options)
        sigma, solve = shifted(K, M, shift, factor=factor, what=what)
        own = True
    try:
        X, exhausted, dim = _iterate(method, K, M, want, sigma, solve, tol, block, prefix,
                                     scale, what)
    finally:
        if own:
            solve.close()
    everything = exhausted or X.shape[1] == n_mass      # every finite pair the model has
    return _finish(K, M, X, method, count, sigma, X.shape[1] if everything else None, dim,
                   what)


def shifted(K, M, shift: float | None = None, *, factor: Callable,
            what: str = "the eigen-solve"):
    """``(sigma, solver)``: the shift and the factorization ``factor(K - sigma M)``.

    ``shift``, or one chosen as :func:`symmetric` chooses it; the caller closes the solver.

    Raises :class:`SingularShift` for a given shift at an eigenvalue and
    :class:`~fem.errors.ModelError` for a motion with neither stiffness nor mass.
    """
    K, M = sp.csr_matrix(K), sp.csr_matrix(M)
    scale = spectrum_scale(K, M)
    if shift is not None:
        solve = factor((K - float(shift) * M).tocsr())
        if not _at_eigenvalue(K, M, solve, float(shift), scale):
            return float(shift), solve
        solve.close()
        free = " (the rigid-body modes of a free structure have omega^2 = 0)" if shift == 0 \
            else ""
        raise SingularShift(shift, f"{what}: K - sigma M is singular at the shift {shift:g}: "
                            f"an eigenvalue sits there{free}")
    solve = factor(K)
    if not _at_eigenvalue(K, M, solve, 0.0, scale):
        return 0.0, solve
    solve.close()
    return _free_shift(K, M, factor, scale, what)


def _at_eigenvalue(K, M, solve, sigma: float, scale: float) -> bool:
    """Whether ``K - sigma M`` is singular: a null pivot, or solves ruled by a null vector.

    A factorization need not find the null pivot of a singular matrix whose entries span many
    orders (a free chain of springs from 1 to 1e8 factored without one), and its solves are then
    the null vector times round-off's reciprocal: two solves ``x = (K - sigma M)^{-1} M r`` of
    random ``r`` whose Rayleigh quotients lie within the round-off of the spectrum (``1e3 eps
    max K_ii / M_ii``) of ``sigma`` say so (an inverse iteration's step lands on the eigenvalue
    nearest the shift). A regular matrix with an eigenvalue that close to the shift counts as
    singular too: its pairs are not resolved there.
    """
    if not solve.regular():
        return True
    x = solve(M @ np.random.default_rng(11).standard_normal((K.shape[0], 2)))
    if not np.all(np.isfinite(x)):
        return True
    mx = np.einsum("ij,ij->j", x, M @ x)
    if np.any(mx <= 0):
        return False                       # in the null space of M: no finite pair there
    rho = np.einsum("ij,ij->j", x, K @ x) / mx
    return bool(np.any(np.abs(rho - sigma) <= ROUND_OFF * scale))


def _free_shift(K, M, factor, scale: float, what: str):
    """The shift of a free structure and its factorization (module docstring)."""
    sigma = -FREE_SHIFT * scale if scale > 0 else -1.0
    solve = factor((K - sigma * M).tocsr())
    if _at_eigenvalue(K, M, solve, sigma, scale):
        solve.close()
        raise ModelError(f"{what}: K - sigma M is singular at sigma = 0 and at sigma = "
                         f"{sigma:.3g}: a motion without stiffness has no mass either (a free "
                         "beam's twist without rotary inertia, a node with no mass); give it "
                         "inertia or a support")
    rho = _pilot(K, M, solve)
    elastic = rho[rho > ROUND_OFF * scale]
    if len(elastic):
        target = max(float(elastic[0]), NEAREST * scale)
        if target < 0.1 * abs(sigma):
            solve.close()
            solve = factor((K + target * M).tocsr())
            if not _at_eigenvalue(K, M, solve, -target, scale):
                return -target, solve
            solve.close()
            solve = factor((K - sigma * M).tocsr())
    return sigma, solve


def _pilot(K, M, solve) -> NDArray:
    """Rayleigh-Ritz values of ``(K, M)`` on a short block Krylov space of ``OP`` (ascending)."""
    from fem.solvers.eigen.lanczos import _next_block

    n = K.shape[0]
    b, steps = min(PILOT[0], n), PILOT[1]
    rng = np.random.default_rng(7)
    V, MV = np.zeros((n, 0)), np.zeros((n, 0))
    W = solve(M @ rng.standard_normal((n, b)))
    for j in range(steps):
        interrupt.check()
        W, MW, _ = _next_block(W, V, MV, M)
        if W.shape[1] == 0:
            break
        V, MV = np.hstack([V, W]), np.hstack([MV, MW])
        if j < steps - 1:
            W = solve(MW)
    Kr, Mr = V.T @ (K @ V), V.T @ MV
    import scipy.linalg as sla

    return sla.eigh(0.5 * (Kr + Kr.T), 0.5 * (Mr + Mr.T), eigvals_only=True)


def _iterate(method, K, M, want, sigma, solve, tol, block, prefix, scale, what):
    """``(X, exhausted, dimension)``: the iterative method's vectors, multiplicities checked.

    The check (module docstring) searches the ``M``-orthogonal complement of the vectors found:
    the Lanczos for one pair with single vectors (a basis as large as the first search's, so
    that it resolves what that one did), SLEPc for one too, each from random vectors of its
    own (the first search's start has no component along the copies it missed: its Krylov space
    holds one direction of each eigenspace); every value found nearer the shift than the
    farthest kept replaces it, and the check repeats.
    """
    from fem.solvers.eigen import lanczos as lz

    n, n_mass = K.shape[0], massive(M)
    seeds = itertools.count(1)            # each search of a deflated problem: a start of its own
    if method == "lanczos":
        b = max(1, min(block or lz.default_block(want), want))
        basis = min(n, max(4 * want + 2 * b, want + 8 * b))

        def run(k, D):
            go = solve if D is None else _deflated(solve, D, M)
            limit = n_mass - (0 if D is None else D.shape[1])
            asked = k
            while True:
                try:
                    # a deflated search starts from random vectors of its own: from an earlier
                    # search's, it has no component along the copies that one missed
                    p = lz.lanczos(K, M, asked, sigma, go, tol=tol,
                                   block=b if D is None else 1,
                                   max_dim=None if D is None else max(basis, 4 * asked + 2),
                                   seed=0 if D is None else next(seeds))
                    break
                except ConvergenceError as err:
                    # pairs inside a cluster wider than those asked (the rigid modes of
                    # several free bodies, at the round-off of the spectrum: 12 of them, 3
                    # asked) are not resolved one by one; the whole cluster is
                    if asked >= limit:
                        raise ConvergenceError(f"{what}: {err}") from None
                    asked = min(2 * asked + 4, limit)
            near = np.sort(np.argsort(np.abs(p.omega2 - sigma), kind="stable")[:k])
            return p.vectors[:, near], p.exhausted and len(near) < k, p.dimension
        check = 1
    else:
        from fem.solvers.eigen import slepc

        b = 1

        def run(k, D):
            # the check of a deflated problem at the Lanczos's tolerance: a fifth fewer solves
            vals, X, _ = slepc.symmetric(K, M, k, sigma, solve, prefix, deflate=D, what=what,
                                         seed=None if D is None else next(seeds),
                                         tol=1e-12 if D is None else tol)
            return _genuine(K, M, X, scale), False, X.shape[1]
        check = 1
    X, exhausted, dim = run(want, None)
    dim = dim if method == "lanczos" else 0
    if X.shape[1] < want and not exhausted:
        # (SLEPc) the finite spectrum exhausted? Only if a search of the rest converges, and
        # to infinite (spurious) values alone
        Y, _, converged = run(check, X)
        if Y.shape[1] or not converged:
            raise ConvergenceError(f"{what}: SLEPc converged {X.shape[1]} of the {want} pairs "
                                   "wanted" + (", and more exist" if Y.shape[1] else ""))
        exhausted = True
    for _ in range(want):
        if exhausted or X.shape[1] >= n_mass:
            break                               # every finite pair is there
        w = _rayleigh_quotients(K, M, X)
        if _largest_cluster(w, sigma, scale) < b:
            break
        Y, _, _ = run(check, X)
        if Y.shape[1] == 0:
            break
        v = _rayleigh_quotients(K, M, Y)
        far = np.sort(np.abs(w - sigma))
        nearer = np.abs(v - sigma) < far[-1] - (CLUSTER * np.abs(v) + ROUND_OFF * scale)
        if not nearer.any():
            break                               # nothing nearer was missed
        keep = np.argsort(np.abs(w - sigma), kind="stable")[:want - int(nearer.sum())]
        X = np.hstack([X[:, keep], Y[:, nearer]])
    return X, exhausted, dim


def _genuine(K, M, X: NDArray, scale: float) -> NDArray:
    """The pairs a Krylov-Schur search returned that are eigenpairs of the pencil.

    ``X`` made ``M``-orthonormal (a copy of a vector already there, or a vector of the massless
    unknowns, has no ``M``-norm of its own: left out), refined by Rayleigh-Ritz, and only the
    pairs with a finite value (below ``1e6`` times the spectrum's scale: ``theta = 0`` of the
    infinite ones is not resolved) and a backward error below ``ACCEPT`` kept.
    """
    from fem.solvers.eigen.lanczos import _rayleigh_ritz, backward_errors

    if X.shape[1] == 0:
        return X
    w = _rayleigh_quotients(K, M, X)
    finite = np.isfinite(w) & (np.abs(w) <= 1e6 * max(scale, 1e-300))
    X, w = X[:, finite], w[finite]
    X = X[:, backward_errors(K, M, w, X) <= ACCEPT]
    G = X.T @ (M @ X)
    g, V = np.linalg.eigh(0.5 * (G + G.T))
    keep = g > 1e-10 * max(g.max(initial=0.0), 1e-300)
    if not keep.any():
        return X[:, :0]
    X = X @ (V[:, keep] / np.sqrt(g[keep]))
    w, X, KX, MX = _rayleigh_ritz(K, M, X, None)
    return X[:, backward_errors(K, M, w, X, KX, MX) <= ACCEPT]


def _deflated(solve, D: NDArray, M):
    """``solve`` followed by the ``M``-orthogonal projection off the span of ``D``."""
    MD = M @ D
    G = np.linalg.cholesky(D.T @ MD)          # D is M-orthonormal up to round-off

    def go(B):
        Y = solve(B)
        C = np.linalg.solve(G.T, np.linalg.solve(G, MD.T @ Y))
        return Y - D @ C
    return go


def _rayleigh_quotients(K, M, X: NDArray) -> NDArray:
    return np.einsum("ij,ij->j", X, K @ X) / np.einsum("ij,ij->j", X, M @ X)


def _largest_cluster(w: NDArray, sigma: float, scale: float) -> int:
    """The most copies of one eigenvalue among ``w``, the farthest from ``sigma``'s left out.

    Copies: values within ``CLUSTER`` (relative) or the round-off of the spectrum of their
    neighbours. The farthest value's own copies do not count: a copy missed there would tie
    with it, and the values returned would be the same.
    """
    if len(w) == 0:
        return 0
    order = np.argsort(w, kind="stable")
    v = w[order]
    gap = np.diff(v) > CLUSTER * np.maximum(np.abs(v[1:]), np.abs(v[:-1])) + ROUND_OFF * scale
    label = np.r_[0, np.cumsum(gap)]
    far = label[int(np.argmax(np.abs(v - sigma)))]
    sizes = np.bincount(label)
    sizes[far] = 0
    return int(sizes.max())


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
            what: str = "the eigen-solve") -> Eigenpairs:
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

        nu, X, scale = slepc.largest_real(A, B, count, prefix + "eps_", sym, what)
    elif method == "lanczos":
        from fem.solvers.eigen.lanczos import lanczos

        solve = Factorization(B, prefix, options, role="B_")
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
