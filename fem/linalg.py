"""PETSc layer: Mat/Vec from the assembler's CSR pattern, direct solvers, the options database.

Helpers create petsc4py objects and nothing wraps them (STYLE.md, "PETSc"). A step creates its
matrix and KSP once; Newton iterations only refill values, so PETSc reuses the symbolic
factorization while the pattern holds. Each KSP has an options prefix (``<step>_``); options from
the deck's ``[solver]`` table are pushed under that prefix, never overriding an option already in
the database (the command line wins), and stay there until the step releases them
(:func:`release_options`): some packages, MUMPS among them, read their options only when the first
factorization happens.

The default is a direct LU with the best package PETSc was built with: MUMPS, then SuperLU, then
PETSc's own LU. With MUMPS, null-pivot detection (``ICNTL(24)``) is on, so a singular matrix (a
mechanism) is reported instead of solved into garbage.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from fem import _petsc
from fem.errors import ConvergenceError

LU_PACKAGES = ("mumps", "superlu", "petsc")


class SingularMatrixError(Exception):
    """The factorization found zero pivots; ``null_pivots`` says how many (-1 if unknown)."""

    def __init__(self, null_pivots: int, detail: str = ""):
        self.null_pivots = null_pivots
        super().__init__(f"singular matrix ({null_pivots} null pivots) {detail}".strip())


def external_packages() -> list[str]:
    """Solver packages PETSc was built with, among those fem knows about."""
    PETSc = _petsc.PETSc()
    names = ("mumps", "superlu", "superlu_dist", "umfpack", "klu", "cholmod", "hypre", "pastix",
             "strumpack", "mkl_pardiso")
    return [n for n in names if PETSc.Sys.hasExternalPackage(n)]


def best_lu_package() -> str:
    """The direct solver fem uses by default: MUMPS, then SuperLU, then PETSc's own LU."""
    have = external_packages()
    for name in LU_PACKAGES[:-1]:
        if name in have:
            return name
    return "petsc"


def create_matrix(indptr: NDArray, indices: NDArray, prefix: str | None = None):
    """A serial AIJ matrix preallocated with the CSR pattern; new nonzeros are an error."""
    PETSc = _petsc.PETSc()
    n = len(indptr) - 1
    A = PETSc.Mat().createAIJ((n, n), csr=(indptr.astype(PETSc.IntType),
                                           indices.astype(PETSc.IntType)),
                              comm=PETSc.COMM_SELF)
    A.setOption(PETSc.Mat.Option.NEW_NONZERO_ALLOCATION_ERR, True)
    if prefix:
        A.setOptionsPrefix(prefix)
    return A


def matrix_from_scipy(csr):
    """A serial AIJ matrix with the pattern and values of a ``scipy.sparse`` matrix."""
    csr = csr.tocsr()
    csr.sort_indices()
    A = create_matrix(csr.indptr, csr.indices)
    fill_matrix(A, csr.indptr, csr.indices, csr.data)
    return A


def fill_matrix(A, indptr: NDArray, indices: NDArray, data: NDArray) -> None:
    """Overwrite the values of ``A`` with CSR ``data`` on the pattern it was created with."""
    PETSc = _petsc.PETSc()
    A.setValuesCSR(indptr.astype(PETSc.IntType, copy=False),
                   indices.astype(PETSc.IntType, copy=False),
                   np.ascontiguousarray(data, dtype=float))
    A.assemble()


_PUSHED: dict[str, list[str]] = {}


def push_options(prefix: str, options: dict | None) -> None:
    """Put ``options`` into the database under ``prefix`` unless already set (command line wins)."""
    opts = _petsc.PETSc().Options()
    pushed = _PUSHED.setdefault(prefix, [])
    for key, value in (options or {}).items():
        name = prefix + key.lstrip("-")
        if opts.hasName(name):
            continue
        if isinstance(value, bool):
            value = "true" if value else "false"
        opts.setValue(name, "" if value is None else str(value))
        pushed.append(name)


def release_options(prefix: str) -> None:
    """Remove the options :func:`push_options` put under ``prefix``."""
    opts = _petsc.PETSc().Options()
    for name in _PUSHED.pop(prefix, []):
        opts.delValue(name)


def direct_solver(A, prefix: str, options: dict | None = None):
    """A KSP on ``A``: ``preonly`` + LU with the best package, then deck/command-line options.

    Parameters
    ----------
    A : petsc4py Mat, the operator (its values may be refilled later)
    prefix : options prefix, e.g. ``"static1_"``
    options : deck options (``{"ksp_type": "gmres", "pc_type": "ilu"}``), pushed under ``prefix``
    """
    PETSc = _petsc.PETSc()
    ksp = PETSc.KSP().create(comm=A.getComm())
    ksp.setOptionsPrefix(prefix)
    ksp.setOperators(A)
    ksp.setType("preonly")
    pc = ksp.getPC()
    pc.setType("lu")
    package = best_lu_package()
    pc.setFactorSolverType(package)
    defaults = {}
    if package == "mumps":
        defaults["mat_mumps_icntl_24"] = 1          # detect null pivots instead of dividing by them
    push_options(prefix, {**defaults, **(options or {})})
    ksp.setFromOptions()
    return ksp


def solve(ksp, b: NDArray, x: NDArray | None = None) -> NDArray:
    """Solve ``A x = b`` with numpy arrays; raises on failure or on a singular factorization."""
    PETSc = _petsc.PETSc()
    b = np.ascontiguousarray(b, dtype=float)
    if x is None:
        x = np.zeros_like(b)
    bv = PETSc.Vec().createWithArray(b, comm=PETSc.COMM_SELF)
    xv = PETSc.Vec().createWithArray(x, comm=PETSc.COMM_SELF)
    try:
        ksp.solve(bv, xv)
    except PETSc.Error as err:  # zero pivot in PETSc's or SuperLU's LU
        raise SingularMatrixError(-1, f"(PETSc error {err.ierr})") from None
    finally:
        bv.destroy()
        xv.destroy()
    reason = ksp.getConvergedReason()
    pc = ksp.getPC()
    if pc.getType() == "lu" and pc.getFactorSolverType() == "mumps":
        F = pc.getFactorMatrix()
        if F.getMumpsInfog(28) > 0:
            raise SingularMatrixError(F.getMumpsInfog(28))
    if reason < 0:
        pc_failed = getattr(PETSc.KSP.ConvergedReason, "DIVERGED_PC_FAILED", None)
        if pc_failed is None:      # petsc4py < 3.19 spells it this way
            pc_failed = PETSc.KSP.ConvergedReason.DIVERGED_PCSETUP_FAILED
        if reason == pc_failed:
            raise SingularMatrixError(-1, "(factorization failed)")
        raise ConvergenceError(f"linear solver {ksp.getOptionsPrefix()} diverged (reason {reason})")
    if not np.all(np.isfinite(x)):
        raise SingularMatrixError(-1, "(non-finite solution)")
    return x


def null_vector(csr, *, symmetric: bool = False) -> NDArray:
    """An approximate null vector of a singular sparse matrix (to name the unrestrained DOF).

    Uses scipy's shift-invert Lanczos/Arnoldi at a small negative shift, where ``A - sigma I`` is
    regular even though ``A`` is not.
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
