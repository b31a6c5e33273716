"""What the eigen front-end and its parts share (:mod:`.front`): the answer, the factorization.

:class:`Eigenpairs` is what every eigen-solve returns; :class:`Factorization` factors a shifted
matrix once with fem's direct solver and solves blocks with it; :class:`SingularShift` says an
eigenvalue sits at the shift. The measures of a pencil (:func:`spectrum_scale`, :func:`massive`)
and the sign convention of the vectors (:func:`normalize_signs`) are the front-end's, described
in its module docstring, with the tolerances below.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from fem import lazy, linalg
from fem.errors import ModelError

sp = lazy.module("scipy.sparse")
log = logging.getLogger(__name__)

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

    ``distributed`` (the distributed solve of a run of several ranks, issue 31, stage 7): ``A``
    (whole on every rank) is one MPIAIJ matrix on COMM_WORLD, each rank setting PETSc's block
    of its rows, factored by MUMPS across the ranks; blocks to solve and their solutions stay
    whole on every rank (the solutions gathered, :mod:`fem.linalg.checked`), so that everything
    around the solves runs replicated.
    """

    def __init__(self, A, prefix: str, options: dict | None = None, *, role: str = "A_",
                 symmetric: bool | None = None, distributed: bool = False):
        A = sp.csr_matrix(A)
        self.prefix = prefix
        self.distributed = distributed
        if distributed:
            from fem import _petsc

            A = A.copy()
            A.sum_duplicates()                     # sorted columns, one entry each
            self.A = linalg.create_matrix(A.indptr, A.indices, comm=_petsc.PETSc().COMM_WORLD)
            linalg.fill_matrix(self.A, A.indptr, A.indices, A.data)
            log.info("%s: a factorization of %d unknowns across %d ranks (MUMPS)", prefix[:-1],
                     A.shape[0], self.A.getComm().getSize())
        else:
            self.A = linalg.matrix_from_scipy(A)
        self.A.setOptionsPrefix(prefix + role)
        self.ksp = linalg.direct_solver(self.A, prefix, options,
                                        package="mumps" if distributed else None,
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
