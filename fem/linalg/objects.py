"""PETSc objects: Mat from the assembler's CSR pattern, direct solvers, the options database.

Helpers create petsc4py objects and nothing wraps them (STYLE.md, "PETSc"). A step creates its
matrix and KSP once; Newton iterations only refill values, so PETSc reuses the symbolic
factorization while the pattern holds. Each KSP has an options prefix (``<step>_``); options from
the deck's ``[solver]`` table are pushed under that prefix, never overriding an option already in
the database (the command line wins), and stay there until the step releases them
(:func:`release_options`): some packages, MUMPS among them, read their options only when the first
factorization happens.

The default is a direct LU with the best package PETSc was built with: MUMPS, then SuperLU, then
PETSc's own LU. With MUMPS, null-pivot detection (``ICNTL(24)``) is on, so a singular matrix (a
mechanism) is reported instead of solved into garbage. Solves and their checks are
:mod:`fem.linalg.checked`'s.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from fem import _petsc

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


class RowMap:
    """The rows of a rank of an MPI matrix numbered by a partition (:mod:`fem.partition`).

    Rank ``rank`` owns the partition's rows ``ranges[rank]:ranges[rank + 1]``, the serial rows
    :attr:`rows`; its CSR (``indptr``, ``indices`` in the partition's numbering, columns sorted)
    takes the values ``data[take]`` of a full serial CSR. Vectors cross in the same way: the
    rank's entries of a serial vector ``v`` are ``v[rows]``, and the gathered entries of every
    rank are the serial vector at ``serial``.
    """

    def __init__(self, serial: NDArray, new: NDArray, ranges: NDArray, rank: int,
                 indptr: NDArray, indices: NDArray):
        PETSc = _petsc.PETSc()
        self.serial, self.ranges = serial, ranges
        self.counts = np.diff(ranges)
        r0, r1 = int(ranges[rank]), int(ranges[rank + 1])
        self.rows = serial[r0:r1]
        starts, lens = indptr[self.rows], indptr[self.rows + 1] - indptr[self.rows]
        self.indptr = np.concatenate([[0], np.cumsum(lens)]).astype(PETSc.IntType)
        row = np.repeat(np.arange(len(self.rows)), lens)
        take = (np.arange(int(self.indptr[-1])) - np.repeat(self.indptr[:-1], lens)
                + np.repeat(starts, lens))
        cols = new[indices[take]]
        order = np.lexsort((cols, row))
        self.take = take[order]
        self.indices = cols[order].astype(PETSc.IntType)


def create_matrix(indptr: NDArray, indices: NDArray, prefix: str | None = None, comm=None,
                  rows: RowMap | None = None):
    """An AIJ matrix on the CSR pattern (sorted columns); new nonzeros are an error.

    Serial (``comm`` None or of one process): made on arrays of its own
    (``MatCreateSeqAIJWithArrays``): PETSc works on them in place, so :func:`fill_matrix` copies
    a refill straight into the value array instead of inserting it row by row (``setValuesCSR``
    with its per-row searches and the conversion of the index arrays to PETSc's integers at every
    call). On a communicator of several processes (the distributed solve of a replicated run,
    :mod:`fem.solvers.linear_system`): an MPIAIJ matrix, each rank owning PETSc's contiguous
    block of rows and preallocated from its rows of the (replicated) pattern; with ``rows``
    (owner-computes assembly, :mod:`fem.owner_computes`), the rows and columns numbered by a
    partition and the rank's rows those of the :class:`RowMap` (kept on the matrix: fills and
    solves with serial vectors translate through it).
    """
    PETSc = _petsc.PETSc()
    n = len(indptr) - 1
    if comm is not None and comm.getSize() > 1:
        A = PETSc.Mat().create(comm=comm)
        local = PETSc.DECIDE if rows is None else len(rows.rows)
        A.setSizes(((local, n), (local, n)))
        if rows is not None:
            A.setAttr("__fem_rows__", rows)
        A.setType("aij")
        if prefix:
            A.setOptionsPrefix(prefix)
        A.setUp()
        A.setPreallocationCSR(_local_rows(A, indptr, indices)[:2])
        A.setOption(PETSc.Mat.Option.NEW_NONZERO_ALLOCATION_ERR, True)
        return A
    csr = (np.array(indptr, dtype=PETSc.IntType), np.array(indices, dtype=PETSc.IntType),
           np.zeros(len(indices)))
    A = PETSc.Mat().createAIJWithArrays((n, n), csr, comm=PETSc.COMM_SELF)
    A.setOption(PETSc.Mat.Option.NEW_NONZERO_ALLOCATION_ERR, True)
    if prefix:
        A.setOptionsPrefix(prefix)
    return A


def _local_rows(A, indptr: NDArray, indices: NDArray, data: NDArray | None = None):
    """The rank's rows of a full CSR in the MPI matrix ``A``: (indptr from 0, indices, data).

    Column indices stay global.
    """
    PETSc = _petsc.PETSc()
    rows = A.getAttr("__fem_rows__")
    if rows is not None:
        out = [rows.indptr, rows.indices]
        if data is not None:
            out.append(np.ascontiguousarray(data[rows.take], dtype=float))
        return out
    r0, r1 = A.getOwnershipRange()
    a, b = int(indptr[r0]), int(indptr[r1])
    out = [np.asarray(indptr[r0:r1 + 1] - a, dtype=PETSc.IntType),
           np.asarray(indices[a:b], dtype=PETSc.IntType)]
    if data is not None:
        out.append(np.ascontiguousarray(data[a:b], dtype=float))
    return out


def matrix_from_scipy(csr):
    """A serial AIJ matrix with the pattern and values of a ``scipy.sparse`` matrix."""
    csr = csr.tocsr()
    if not csr.has_canonical_format:    # sorted columns, one entry each
        csr = csr.copy()
        csr.sum_duplicates()
    A = create_matrix(csr.indptr, csr.indices)
    fill_matrix(A, csr.indptr, csr.indices, csr.data)
    return A


def fill_matrix(A, indptr: NDArray, indices: NDArray, data: NDArray) -> None:
    """Overwrite the values of ``A`` with CSR ``data`` on the pattern it was created with.

    A matrix of :func:`create_matrix` gets the values copied into its own value array (the
    pattern is the one it was made with); ``assemble`` then marks it changed, so the next solve
    factors it again. Other matrices are refilled through ``setValuesCSR``; an MPI matrix takes
    its own rows of the full CSR only.
    """
    PETSc = _petsc.PETSc()
    if A.getComm().getSize() > 1:
        A.setValuesCSR(*_local_rows(A, indptr, indices, data))
        A.assemble()
        return
    csr = A.getAttr("__csr__")
    if csr is not None and len(csr[2]) == len(data) and len(csr[0]) == len(indptr):
        np.copyto(csr[2], data)
    else:
        A.setValuesCSR(indptr.astype(PETSc.IntType, copy=False),
                       indices.astype(PETSc.IntType, copy=False),
                       np.ascontiguousarray(data, dtype=float))
    A.assemble()


#: option families of SLEPc's eigen-solver: a deck writes them with SLEPc's names, and they reach
#: the eigen-solver of the step, whose prefix is ``<step>_eps_`` (:func:`petsc_name`)
EIGEN_FAMILIES = ("eps_", "st_", "bv_", "ds_", "rg_")
_PUSHED: dict[str, list[str]] = {}


def petsc_name(key: str) -> str:
    """The PETSc option name a deck key stands for, after the step's prefix ``<step>_``.

    Linear-solver options keep their name; SLEPc options get the eigen-solver's ``eps_``.

    >>> petsc_name("-ksp_type"), petsc_name("eps_tol"), petsc_name("st_ksp_type")
    ('ksp_type', 'eps_eps_tol', 'eps_st_ksp_type')
    """
    name = key.lstrip("-")
    return "eps_" + name if name.lower().startswith(EIGEN_FAMILIES) else name


def push_options(prefix: str, options: dict | None) -> None:
    """Put ``options`` into the database under ``prefix`` unless already set (command line wins).

    Deck names become PETSc names as :func:`petsc_name` says: SLEPc options (``eps_tol``) go to
    the eigen-solver of the step (``<prefix>eps_eps_tol``). The deck's options were checked when
    the deck was read and PETSc started (:mod:`fem.io.solver_options`).
    """
    opts = _petsc.PETSc().Options()
    pushed = _PUSHED.setdefault(prefix, [])
    for key, value in (options or {}).items():
        name = prefix + petsc_name(key)
        if opts.hasName(name):
            continue
        if isinstance(value, bool):
            value = "true" if value else "false"
        opts.setValue(name, "" if value is None else str(value))
        pushed.append(name)


def release_options(prefix: str) -> None:
    """Remove the options :func:`push_options` put under ``prefix``."""
    names = _PUSHED.pop(prefix, [])
    if not names:
        return                     # nothing pushed (PETSc may not even have started)
    opts = _petsc.PETSc().Options()
    for name in names:
        opts.delValue(name)


def from_options(obj):
    """``obj.setFromOptions()`` for a KSP or EPS ``obj``, which is returned.

    A bad option destroys ``obj`` before the error propagates: nothing half-built stays behind.
    """
    try:
        obj.setFromOptions()
    except Exception:
        obj.destroy()
        raise
    return obj


#: Unknowns up to which a step factors with PETSc's own LU instead of MUMPS (:func:`lu_package`),
#: and up to which it does so for chain-like matrices (at most :data:`CHAIN_ENTRIES` stored
#: entries per row). Measured (refill, factorization and solve, ms, on a shared 2-core machine):
#: 2D beam chains of 30 / 300 / 900 / 1500 / 3000 / 6000 / 12000 unknowns, MUMPS 0.18 / 0.68 /
#: 2.1 / 3.1 / 11 / 27 / 53, PETSc's LU (nested dissection) 0.008 / 0.037 / 0.10 / 0.18 / 0.39 /
#: 0.83 / 1.9; 3D lattices of beams (``benchmarks.common.space_frame``) of 288 / 600 / 1080 /
#: 1764 unknowns, MUMPS 0.70 / 2.0 / 7.2 / 37, PETSc's LU 0.32 / 2.1 / 10 / 57: their fill
#: grows faster, they meet near 600. Chains stop at 6000 unknowns, where their smallest
#: pivots stay well above :data:`NULL_PIVOT` of their diagonal.
SMALL_LU = 600
SMALL_CHAIN_LU = 6000
CHAIN_ENTRIES = 12


#: A pivot of PETSc's own LU at most this times the diagonal entry it came from is a null pivot
#: (:func:`_check_pivots`): a mechanism leaves round-off there (9e-17 in the mechanism tests of
#: tests/test_deck_errors.py), while regular tangents keep their smallest pivot far above it
#: (measured: clamped 2D cantilever chains of 300 / 1000 / 2000 beams 1.5e-7 / 4e-9 / 5e-10,
#: the smallest of tests/test_nonlinear_static.py's 1.5e-7).
NULL_PIVOT = 1e-12


#: The fill-reducing ordering of PETSc's own LU (options may choose another).
SMALL_LU_ORDERING = "nd"


def lu_package(n: int, options: dict | None = None, prefix: str = "",
               zero_diagonal: bool = False, nnz: int | None = None) -> str:
    """The LU package of a step's ``n`` unknowns: PETSc's own for small systems, else the best.

    MUMPS's fixed cost per factorization (0.4 ms) is most of a Newton iteration of a small
    model; PETSc's own sparse LU has almost none. It does not pivot, so a matrix with zero
    diagonal entries (Lagrange multipliers: ``zero_diagonal``) keeps the best package, and so
    does a step whose deck or command-line options speak to MUMPS or SuperLU (``mat_mumps_*``,
    ``mat_superlu_*``) or choose the package: they meant a particular one. Null pivots are
    detected after the factorization (:func:`_check_pivots`), as MUMPS's ``ICNTL(24)`` does.
    ``nnz``, the stored entries, admits chain-like matrices up to :data:`SMALL_CHAIN_LU`.
    """
    chain = nnz is not None and n <= SMALL_CHAIN_LU and nnz <= CHAIN_ENTRIES * n
    if (n > SMALL_LU and not chain) or zero_diagonal:
        return best_lu_package()
    given = list(options or ())
    if prefix:
        given += _petsc.option_names(prefix)
    if any(k.startswith(("mat_mumps_", "mat_superlu_", "pc_factor_mat_solver_type"))
           for k in given):
        return best_lu_package()
    return "petsc"


def direct_solver(A, prefix: str, options: dict | None = None, package: str | None = None,
                  symmetric: bool = False):
    """A KSP on ``A``: ``preonly`` + LU with the best package, then deck/command-line options.

    Parameters
    ----------
    A : petsc4py Mat, the operator (its values may be refilled later)
    prefix : options prefix, e.g. ``"static1_"``
    options : deck options (``{"ksp_type": "gmres", "pc_type": "ilu"}``), pushed under ``prefix``
    package : the default LU package (default: the best, :func:`best_lu_package`); the options
        may choose another
    symmetric : ``A`` is symmetric (the caller checked): with MUMPS the default is then its
        symmetric indefinite ``L D L^T`` (``pc_type cholesky`` on an AIJ matrix: MUMPS ``SYM =
        2``, from the upper triangle, pivoting for an indefinite or saddle-point ``A``), which
        stores about half the factor entries and takes half the factorization's work (a lattice
        of 1e5 DOFs: 7.7e7 entries instead of 1.75e8, 23 s instead of 44); other packages keep LU
    """
    PETSc = _petsc.PETSc()
    ksp = PETSc.KSP().create(comm=A.getComm())
    ksp.setOptionsPrefix(prefix)
    ksp.setOperators(A)
    ksp.setType("preonly")
    pc = ksp.getPC()
    pc.setType("lu")
    package = package or best_lu_package()
    pc.setFactorSolverType(package)
    if package == "petsc":
        # only an exact zero stops the factorization (the default, 2.2e-14, is absolute and
        # unit-dependent); null pivots are judged relative to the matrix (_check_pivots)
        pc.setFactorPivot(zeropivot=0.0)
        pc.setFactorOrdering(SMALL_LU_ORDERING)
    name, opts = prefix + "pc_factor_mat_solver_type", PETSc.Options()
    chosen = (opts.getString(name) if opts.hasName(name) else None) \
        or (options or {}).get("pc_factor_mat_solver_type") or package
    defaults = {}
    if chosen == "mumps":
        defaults["mat_mumps_icntl_24"] = 1          # detect null pivots instead of dividing by them
        if symmetric:
            pc.setType("cholesky")                  # a deck's or the command line's pc_type wins
            pc.setFactorSolverType("mumps")
    push_options(prefix, {**defaults, **(options or {})})
    return from_options(ksp)
