"""A step's linear systems: one matrix of the tangent's pattern and its direct solver.

:class:`LinearSystem` is what Newton fills and solves with (DESIGN.md, "LinearSystem"): the
PETSc matrix on the assembler's CSR pattern and its KSP (options prefix ``<step>_``), or, for a
small system with a narrow band that PETSc's own LU would factor, the compiled banded LU
(:mod:`fem.solvers.banded`). It knows nothing of the step: it fills, solves with a report of the
solve's accuracy (:func:`fem.linalg.solve_checked`), gives the sign of the last factorization's
determinant, and closes. What a singular or non-finite solve *means* (a mechanism, a failure to
cut back from) is the step's to say.

The PETSc objects are made at first use: the compiled steps of small planar models may never
use them, and making them was a tenth of such a static step. Systems of at most
:data:`fem.solvers.dense.DENSE_MAX` unknowns that PETSc's own LU would factor (no zero
diagonal, no PETSc options for the step, a step that did not ask for the banded LU) are
solved dense with LAPACK
through numpy (:class:`fem.solvers.dense.DenseLU`, issue 32): PETSc is then not even started.
Whoever asks for the PETSc objects (:attr:`LinearSystem.A`, :attr:`LinearSystem.ksp`) gets
them, filled with the last values, and they take every solve from then on.

**Distributed solve** (issue 31, stage 3). In a replicated run (``mpiexec -n N fem run ...``,
:mod:`fem.mpi`) with the command-line option ``-fem_distributed_solve``, the matrix is one
MPIAIJ on COMM_WORLD instead of one serial matrix per rank: each rank owns PETSc's contiguous
block of rows and sets only those, from the full CSR values it has computed like every rank
(:func:`fem.linalg.create_matrix`, :func:`fem.linalg.fill_matrix`), and MUMPS factors across
the ranks. Right-hand sides and solutions stay whole numpy vectors on every rank (each rank's
rows in, the solution gathered to all: :mod:`fem.linalg.checked`), so everything around the
solve runs replicated as before. The package is MUMPS whatever the size (PETSc's own LU and the
banded LU are serial), and the compiled steps of small planar models step aside. The accuracy
estimate of a linear step's solution (:func:`fem.linalg.accuracy`) is made with the
distributed factorization's solves on the whole tangent (:meth:`LinearSystem.whole`), and rank
0's estimate is every rank's. Under owner-computes assembly
(``-fem_distributed_assembly``, :mod:`fem.owner_computes`) the matrix's rows are numbered by the
model's partition (:attr:`LinearSystem.rows`, :class:`fem.linalg.RowMap`) and each rank sets
the rows it assembled.

**Collective control** (issue 31, stage 6). Under owner-computes assembly a rank's CSR values
are right on its own rows only, so a verdict on the tangent made from them is the rank's alone.
The decisions a step makes from the tangent are therefore taken here, once, from a value every
rank shares: :meth:`LinearSystem.finite` (is the tangent finite? each rank looks at its rows,
one ``Allreduce`` of a flag), :meth:`LinearSystem.whole` (the tangent right on every row,
gathered from the owners in one ``Allgatherv``: what a mechanism's diagnosis reads, on an error
path only) and :meth:`LinearSystem.agree` (any other rank-local flag, e.g. an error on one rank
before a collective solve). The solve's own verdicts are shared already: MUMPS's null pivots
(``INFOG(28)``) and determinant (``RINFOG(12)``, ``INFOG(34)``) are global information, on every
rank, and the solution and residual of :func:`fem.linalg.solve_checked` are gathered to every
rank before their finiteness and backward error are judged. Everything Newton decides from
(residuals, corrections, round-off floors, line-search merits, the controls' and arc-length's
products, energies) is computed from vectors gathered to every rank, so it is the same bits on
every rank (:mod:`fem.owner_computes`).
"""

from __future__ import annotations

import logging

import numpy as np
from numpy.typing import NDArray

from fem import _petsc, linalg, mpi
from fem.solvers.dense import DENSE_MAX, DenseLU

log = logging.getLogger(__name__)

#: the command-line option that asks for the distributed solve (module docstring)
DISTRIBUTED_OPTION = "fem_distributed_solve"


def distributed_requested() -> bool:
    """Whether the Newton systems are to be solved across the ranks (module docstring).

    Owner-computes assembly (``-fem_distributed_assembly``, :mod:`fem.owner_computes`) asks
    for it too.
    """
    if mpi.size() == 1:                 # a serial run: PETSc need not start to say no
        return False
    options = _petsc.PETSc().Options()
    return (bool(options.getBool(DISTRIBUTED_OPTION, False))
            or bool(options.getBool("fem_distributed_assembly", False)))


def note_serial(what: str) -> bool:
    """Say in the log that ``what`` runs on every rank, serially, if a distributed option was given.

    Issue 31, stage 9: the paths that stay serial (a CMS reduction's dense matrices, the
    linearized models of linearize steps and stability sweeps, the dense eigen-solves of small
    buckling steps, the compiled increments of small models) run replicated under
    ``-fem_distributed_solve`` and ``-fem_distributed_assembly``, which is not an error.
    Returns whether it was said.
    """
    if not distributed_requested():
        return False
    log.info("%s runs on every rank, serially: -fem_distributed_solve does not apply to it", what)
    return True


def dense_eligible(n: int, package: str, options_given: bool, distributed: bool) -> bool:
    """Whether a system of ``n`` unknowns PETSc would factor with ``package`` is solved dense."""
    return package == "petsc" and not options_given and not distributed and n <= DENSE_MAX


class LinearSystem:
    """The matrix and direct solver of one step (module docstring).

    Parameters
    ----------
    assembler : the system's assembler (its CSR pattern ``indptr``, ``indices``, ``nnz``)
    n : unknowns of the systems (free DOFs, internal unknowns and multipliers)
    zero_diagonal : whether multipliers put zeros on the diagonal (no PETSc LU without pivoting)
    prefix : PETSc options prefix (``<step>_``)
    solver_options : the deck's options for this step's solver
    """

    def __init__(self, assembler, n: int, zero_diagonal: bool, prefix: str,
                 solver_options: dict | None = None):
        self.assembler = assembler
        self.n = n
        self.zero_diagonal = zero_diagonal
        self.prefix = prefix
        self.solver_options = dict(solver_options or {})
        self._A = None
        self._ksp = None
        self._pending = None        # (options, package) of the PETSc objects made at first use
        self.banded = None          # the compiled banded LU, when chosen by open()
        self.dense = None           # the dense LU (fem.solvers.dense), when chosen by open()
        self.tangent_data = None    # the CSR values last filled
        self.petsc_options_given = False
        self.distributed = False    # one MPI matrix across the ranks (module docstring)
        #: (serial, new, ranges, rank) of a partition numbering the distributed matrix's rows
        #: (owner-computes assembly, :func:`fem.owner_computes.attach`); None: PETSc's blocks
        self.rows = None
        self._entries = None        # (rows, CSR entries of every rank's rows, counts per rank)

    def open(self, defaults: dict | None = None, banded: bool = False) -> None:
        """Choose the matrix and direct solver.

        ``defaults`` are options the step needs (e.g. MUMPS's determinant), given under the
        deck's: the deck and the command line win. ``banded``: solves of a small system (one
        PETSc's own LU would take) go to the compiled banded LU; the PETSc matrix and solver stay
        for everything else. Options for the step's solver in the deck or on the command line
        (``-<step>_ksp_view``) keep PETSc's solves (:attr:`petsc_options_given`).
        """
        self.distributed = distributed_requested()
        given = _petsc.option_names(self.prefix)    # read once: lu_package takes them too
        self.petsc_options_given = self.distributed or bool(self.solver_options) or bool(given)
        asm = self.assembler
        # small systems factor with PETSc's own LU, unless multipliers put zeros on the diagonal
        package = "mumps" if self.distributed else linalg.lu_package(
            self.n, [*self.solver_options, *given], zero_diagonal=self.zero_diagonal,
            nnz=asm.nnz)
        if defaults and package != "mumps":
            defaults = {k: v for k, v in defaults.items() if not k.startswith("mat_mumps_")}
        self._pending = ({**(defaults or {}), **self.solver_options}, package)
        if banded and self.distributed:
            log.info("%s: the banded LU is serial; the distributed solve (MUMPS) takes the "
                     "step's systems", self.prefix[:-1])
        if banded and package == "petsc" and not self.petsc_options_given:
            from fem.solvers.banded import BandedLU

            self.banded = BandedLU.make(asm.indptr, asm.indices)
        # a step that asked for the banded LU (time steps: many solves) and did not get it
        # (no numba, a wide band) keeps PETSc's LU, whose solves cost less than a dense one's
        # column loop on a tangent that is not symmetric positive definite
        if not banded and dense_eligible(self.n, package, self.petsc_options_given,
                                         self.distributed):
            self.dense = DenseLU(asm.indptr, asm.indices)

    def _make(self) -> None:
        """The matrix and the direct solver :meth:`open` chose, made now."""
        options, package = self._pending
        self._pending = None
        asm = self.assembler
        comm = _petsc.PETSc().COMM_WORLD if self.distributed else None
        rows = None
        if comm is not None and self.rows is not None:
            serial, new, ranges, rank = self.rows
            rows = linalg.RowMap(serial, new, ranges, rank, asm.indptr, asm.indices)
        self._A = linalg.create_matrix(asm.indptr, asm.indices, prefix=self.prefix + "A_",
                                       comm=comm, rows=rows)
        if comm is not None:
            log.info("%s: distributed solve, %d unknowns on %d ranks (MUMPS)", self.prefix[:-1],
                     self.n, comm.getSize())
        self._ksp = linalg.direct_solver(self._A, self.prefix, options, package)

    def _petsc_objects(self) -> None:
        """Make the PETSc objects if not yet made; they take the dense LU's place."""
        if self._pending is not None:
            self._make()
        if self.dense is not None:
            self.dense = None
            if self.tangent_data is not None:
                linalg.fill_matrix(self._A, self.assembler.indptr, self.assembler.indices,
                                   self.tangent_data)

    @property
    def A(self):
        """The PETSc matrix (made at first use after :meth:`open`)."""
        self._petsc_objects()
        return self._A

    @A.setter
    def A(self, value) -> None:
        self._A = value

    @property
    def ksp(self):
        """The PETSc direct solver (made at first use after :meth:`open`)."""
        self._petsc_objects()
        return self._ksp

    @ksp.setter
    def ksp(self, value) -> None:
        self._ksp = value

    def fill(self, K: NDArray) -> None:
        """Refill the matrix with the CSR values ``K`` (factored at the next solve)."""
        if self.banded is not None:
            self.banded.fill(K)
        elif self.dense is not None:
            self.dense.fill(K)
        else:
            linalg.fill_matrix(self.A, self.assembler.indptr, self.assembler.indices, K)
        self.tangent_data = K

    def solve(self, rhs: NDArray):
        """``(x, report)``: a checked solve (:func:`fem.linalg.solve_checked`).

        Raises :class:`fem.linalg.SingularMatrixError` or :class:`fem.linalg.NonFiniteError`.
        """
        if self.banded is not None:
            return self.banded.solve(rhs)
        if self.dense is not None:
            return self.dense.solve(rhs)
        return linalg.solve_checked(self.ksp, rhs)

    # --- collective control (module docstring) ------------------------------------------------
    @property
    def comm(self):
        """The mpi4py communicator of the distributed solve (None: a serial or replicated one)."""
        return mpi.mpi4py_comm() if self.distributed else None

    def agree(self, flag: bool) -> bool:
        """``flag`` of any rank (one ``Allreduce``): true on every rank if true on one."""
        comm = self.comm
        if comm is None:
            return bool(flag)
        from mpi4py import MPI

        return bool(comm.allreduce(bool(flag), op=MPI.LOR))

    def _owned_entries(self) -> tuple[NDArray, NDArray]:
        """The CSR entries of every rank's rows, rank by rank, and how many each rank has."""
        if self._entries is None or self._entries[0] is not self.rows:
            serial, _, ranges, _ = self.rows
            indptr = self.assembler.indptr
            lens = indptr[serial + 1] - indptr[serial]
            ends = np.cumsum(lens)
            take = np.arange(int(ends[-1]) if len(ends) else 0) \
                - np.repeat(ends - lens, lens) + np.repeat(indptr[serial], lens)
            counts = np.diff(np.concatenate([[0], ends])[np.asarray(ranges)])
            self._entries = (self.rows, take, counts)
        return self._entries[1:]

    def owned(self, K: NDArray) -> NDArray:
        """The CSR values of ``K`` on this rank's rows (all of them, unless owners assemble)."""
        if self.rows is None or not self.distributed:
            return K
        take, counts = self._owned_entries()
        rank = self.rows[3]
        start = int(counts[:rank].sum())
        return K[take[start:start + counts[rank]]]

    def finite(self) -> bool:
        """Whether the last tangent filled is finite on every row of every rank."""
        return not self.agree(not np.all(np.isfinite(self.owned(self.tangent_data))))

    def whole(self) -> NDArray:
        """The last tangent filled, right on every row (gathered from the owners' rows)."""
        K = self.tangent_data
        if self.rows is None or not self.distributed:
            return K
        take, counts = self._owned_entries()
        buf = np.empty(int(counts.sum()))
        self.comm.Allgatherv(np.ascontiguousarray(self.owned(K), dtype=float), [buf, counts])
        out = np.array(K, dtype=float)
        out[take] = buf
        return out

    def determinant_sign(self) -> int | None:
        """Sign of the determinant of the last factorization, if the solver gave it."""
        if self.dense is not None:
            return self.dense.determinant_sign()
        return linalg.determinant_sign(self.ksp)

    def accuracy(self, b: NDArray, x: NDArray) -> tuple[float, float]:
        """Condition number and error bound of the solution ``x`` of the last solve with ``b``.

        :func:`fem.linalg.accuracy` (an estimate), or the dense LU's (exact).
        """
        if self.dense is not None:
            return self.dense.accuracy(b, x)
        if self.distributed:       # the whole tangent, its rows from their owners
            asm = self.assembler
            return linalg.accuracy(self.ksp, b, x, (asm.indptr, asm.indices, self.whole()))
        return linalg.accuracy(self.ksp, b, x)

    def close(self) -> None:
        """Destroy the PETSc objects (those made); release the options prefix."""
        self._pending = None
        self.dense = None
        for obj in (self._ksp, self._A):
            if obj is not None:
                obj.destroy()
        self._ksp = self._A = None
        linalg.release_options(self.prefix)
