"""The SLEPc back-end of the eigen front-end: Krylov-Schur.

Stewart 2001 (SIAM J. Matrix Anal. Appl. 23, "A Krylov-Schur algorithm for large
eigenproblems"); Hernandez, Roman & Vidal 2005 (ACM TOMS 31, "SLEPc: a scalable and flexible
toolkit for the solution of eigenvalue problems").

* :func:`symmetric`: the pairs of ``K x = omega^2 M x`` nearest a shift ``sigma`` (``GHEP``,
  shift-and-invert). The spectral transformation's solves are the front-end's factorization of
  ``K - sigma M`` (the one the own Lanczos uses: one factorization, the step's options), handed
  to SLEPc as a Python preconditioner of its ``preonly`` KSP; a ``deflate`` space (vectors
  already found) makes SLEPc search its ``M``-orthogonal complement (``EPSSetDeflationSpace``),
  which is how the front-end checks that no copy of a multiple eigenvalue was missed.
* :func:`largest_real`: the pairs of largest real part of ``a x = nu b x`` (``GHEP`` or
  ``GNHEP``; ``b`` factored by SLEPc's spectral transformation, a direct LU), and the largest
  eigenvalue magnitude of the pencil, the scale that tells round-off from an eigenvalue.
* :func:`eps_largest_real`: that EPS, configured from the options database; the check of a
  deck's SLEPc options (:mod:`fem.io.solver_options`) makes its throw-away solver here too.

Under the distributed solve (issue 31, stage 7: a :class:`~.common.Factorization` made with
``distributed``) :func:`symmetric`'s EPS is on COMM_WORLD: ``K`` and ``M`` are MPIAIJ matrices,
each rank holding PETSc's block of their rows and of every Krylov vector; the preconditioner
gathers the vector it is given, solves with the distributed factorization and keeps its block;
the converged vectors are gathered, in the serial numbering, to every rank. A pending signal
ends the solve on every rank together (one reduction per solve and per restart).

Options: the EPS has the prefix ``<prefix>eps_`` (``-<step>_eps_view``; the deck's ``eps_tol``
arrives as ``<step>_eps_eps_tol``, :func:`fem.linalg.push_options`) and reads them last.

Interrupts: a stopping test (``EPSSetStoppingTestFunction``, once per restart) ends the solve with
``EPS_CONVERGED_USER`` when a signal is pending, and the Python preconditioner returns zero
instead of a solve from the moment one is: a breakdown, which ends the expansion of the Krylov
basis under way at once (otherwise the rest of the cycle's orthogonalizations took a second on a
model of 1e4 unknowns), so that the stopping test comes next; the caller then calls
:func:`fem.interrupt.check`. (An error raised inside SLEPc's iteration leaves its dense
projected matrices taken, so that the EPS cannot be destroyed: the solve is ended, never
failed.)
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from fem import _petsc, interrupt, linalg
from fem.errors import ConvergenceError


def _pending(comm=None) -> bool:
    """Whether a signal is pending (on any rank of ``comm``, an mpi4py communicator)."""
    here = interrupt.pending() is not None
    if comm is None:
        return here
    from mpi4py import MPI

    return bool(comm.allreduce(here, op=MPI.LOR))


def _whole(v) -> NDArray:
    """The entries of the PETSc vector ``v`` of every rank, on every rank (serial order)."""
    local = v.getArray(readonly=True)
    if v.getComm().getSize() == 1:
        return local.copy()
    out = np.empty(v.getSize())
    counts = np.diff(v.getOwnershipRanges())
    v.getComm().tompi4py().Allgatherv(np.ascontiguousarray(local), [out, counts])
    return out


class _Solve:
    """A Python preconditioner applying a block solve ``solve(B) -> A^{-1} B`` to vectors.

    ``comm`` (mpi4py): the vectors are distributed; each is gathered, solved whole (every rank
    takes part in the distributed solve) and this rank's block kept.
    """

    def __init__(self, solve, comm=None):
        self.solve = solve
        self.comm = comm
        self.count = 0

    def setUp(self, pc) -> None:                       # noqa: N802 (petsc4py's protocol)
        """Nothing to set up: the factorization is the front-end's."""

    def apply(self, pc, x, y) -> None:
        """``y = A^{-1} x``; ``y = 0`` once a signal is pending (the solve is ending)."""
        if _pending(self.comm):
            y.zeroEntries()          # a breakdown: the expansion under way ends at once
            return
        self.count += 1
        if self.comm is None:
            y.setArray(self.solve(x.getArray(readonly=True)[:, None])[:, 0])
            return
        r0, r1 = y.getOwnershipRange()
        y.setArray(self.solve(_whole(x)[:, None])[r0:r1, 0])


def _stopping(eps, its, max_it, nconv, nev):
    """SLEPc's basic stopping test, and ``EPS_CONVERGED_USER`` when a signal is pending."""
    reason = _petsc.SLEPc().EPS.ConvergedReason
    comm = eps.getComm()
    if _pending(comm.tompi4py() if comm.getSize() > 1 else None):
        return reason.CONVERGED_USER
    if nconv >= nev:
        return reason.CONVERGED_TOL
    if its >= max_it:
        return reason.DIVERGED_ITS
    return reason.ITERATING


def symmetric(K, M, count: int, sigma: float, solve, prefix: str, *,
              deflate: NDArray | None = None, what: str = "the eigen-solve",
              tol: float = 1e-12, seed: int | None = None) -> tuple[NDArray, NDArray, int]:
    """Converged pairs ``(omega2 (m,), X (n, m), solves)`` of ``K x = omega^2 M x`` near ``sigma``.

    ``solve(B)`` is ``(K - sigma M)^{-1} B`` (the front-end's factorization); ``deflate (n, d)``
    vectors whose ``M``-orthogonal complement is searched; ``seed``: the search starts from
    ``OP`` applied to a random vector of this seed (default: SLEPc's own start, the same every
    time). At most ``count`` pairs, those nearest ``sigma``; SLEPc's own values are replaced by
    the caller's Rayleigh quotients.
    """
    SLEPc = _petsc.SLEPc()
    PETSc = _petsc.PETSc()
    world = bool(getattr(solve, "distributed", False)) and _petsc.PETSc().COMM_WORLD.getSize() > 1
    if world:                          # the distributed solve (module docstring)
        A, B = _world_matrix(K), _world_matrix(M)
    else:
        A, B = linalg.matrix_from_scipy(K), linalg.matrix_from_scipy(M)
    r0, r1 = A.getOwnershipRange()
    eps = SLEPc.EPS().create(comm=A.getComm())
    vecs = []
    ctx = _Solve(solve, A.getComm().tompi4py() if world else None)
    try:
        eps.setOptionsPrefix(prefix + "eps_")
        eps.setOperators(A, B)
        eps.setProblemType(SLEPc.EPS.ProblemType.GHEP)
        eps.setType(SLEPc.EPS.Type.KRYLOVSCHUR)
        eps.setDimensions(nev=count)
        eps.setTarget(sigma)
        eps.setWhichEigenpairs(SLEPc.EPS.Which.TARGET_MAGNITUDE)
        eps.setTolerances(tol=tol)
        eps.setStoppingTest(_stopping)
        st = eps.getST()
        st.setType(SLEPc.ST.Type.SINVERT)
        st.setShift(sigma)
        ksp = st.getKSP()
        ksp.setType("preonly")
        pc = ksp.getPC()
        pc.setType("python")
        pc.setPythonContext(ctx)
        if deflate is not None and deflate.shape[1]:
            for j in range(deflate.shape[1]):
                v = A.createVecRight()
                v.setArray(deflate[r0:r1, j])
                vecs.append(v)
            eps.setDeflationSpace(vecs)
        if seed is not None:
            start = A.createVecRight()
            vecs.append(start)
            start.setArray(solve(M @ np.random.default_rng(seed).standard_normal(
                (K.shape[0], 1)))[r0:r1, 0])
            eps.setInitialSpace([start])
        eps.setFromOptions()
        eps.solve()
        interrupt.check()                   # a stopping test that ended the solve: stop
        vr = A.createVecRight()
        vals, cols = [], []
        for i in range(eps.getConverged()):
            vals.append(eps.getEigenpair(i, vr).real)
            cols.append(_whole(vr))
        vr.destroy()
    except PETSc.Error as err:
        interrupt.check()       # a signal that ended the solve (a zero preconditioner output can
        #                         break SLEPc's small solves) is the signal, not a failure
        raise ConvergenceError(f"{what}: SLEPc's eigen-solve failed (PETSc error {err.ierr}; "
                               f"{count} pairs of {K.shape[0]} unknowns asked: method = "
                               "\"dense\" computes every pair of a small model)") from None
    finally:
        for obj in (eps, A, B, *vecs):
            obj.destroy()
    values = np.array(vals)
    X = np.array(cols).T if cols else np.zeros((K.shape[0], 0))
    near = np.argsort(np.abs(values - sigma), kind="stable")[:count]
    return values[near], X[:, near], ctx.count


def _world_matrix(csr):
    """An MPIAIJ matrix on COMM_WORLD with the values of the (whole) scipy matrix ``csr``."""
    csr = csr.tocsr().copy()
    csr.sum_duplicates()               # sorted columns, one entry each
    A = linalg.create_matrix(csr.indptr, csr.indices, comm=_petsc.PETSc().COMM_WORLD)
    linalg.fill_matrix(A, csr.indptr, csr.indices, csr.data)
    return A


def eps_largest_real(A, B, prefix: str, *, symmetric: bool, nev: int):
    """A SLEPc EPS for the largest real ``nu`` of ``A x = nu B x``, configured from options.

    Krylov-Schur with ``B`` factored by a direct LU (the best package, as
    :func:`fem.linalg.direct_solver`); options under ``prefix`` (``<step>_eps_``) then apply.
    Buckling steps and the check of the deck's SLEPc options (:mod:`fem.io.solver_options`) both
    make theirs here, so they agree.
    """
    SLEPc = _petsc.SLEPc()
    eps = SLEPc.EPS().create(comm=A.getComm())
    eps.setOptionsPrefix(prefix)
    eps.setOperators(A, B)
    eps.setProblemType(SLEPc.EPS.ProblemType.GHEP if symmetric else SLEPc.EPS.ProblemType.GNHEP)
    eps.setType(SLEPc.EPS.Type.KRYLOVSCHUR)
    eps.setDimensions(nev=nev)
    eps.setWhichEigenpairs(SLEPc.EPS.Which.LARGEST_REAL)
    eps.setStoppingTest(_stopping)
    ksp = eps.getST().getKSP()
    ksp.setType("preonly")
    ksp.getPC().setType("lu")
    ksp.getPC().setFactorSolverType(linalg.best_lu_package())
    return linalg.from_options(eps)


def largest_real(a, b, count: int, prefix: str, symmetric: bool, what: str,
                 distributed: bool = False) -> tuple[NDArray, NDArray, float]:
    """Largest real ``nu`` of ``a x = nu b x``: ``(nu (m,), X (n, m), largest |nu|)``.

    Krylov-Schur with ``b`` factored by LU; when some ``nu`` found is positive (or none is), the
    largest magnitude of the pencil is sought too (the factorization of ``b`` reused): only it
    tells whether they are all round-off. A negative one found so is kept for the caller.
    ``distributed``: on the ranks' MPIAIJ matrices, ``b`` factored by MUMPS across them, the
    vectors gathered in the serial numbering (module docstring).
    """
    SLEPc = _petsc.SLEPc()
    PETSc = _petsc.PETSc()
    world = distributed and PETSc.COMM_WORLD.getSize() > 1
    A, B = (_world_matrix(m) if world else linalg.matrix_from_scipy(m) for m in (a, b))
    eps = eps_largest_real(A, B, prefix, symmetric=symmetric,
                           nev=count if symmetric else 2 * count + 4)
    vr = A.createVecRight()
    vals, vecs = [], []
    try:
        eps.solve()
        interrupt.check()
        for i in range(eps.getConverged()):
            vals.append(eps.getEigenpair(i, vr))
            vecs.append(_whole(vr))
        scale = max((abs(v) for v in vals), default=0.0)
        if not vals or any(v.real > 0 for v in vals):
            eps.setWhichEigenpairs(SLEPc.EPS.Which.LARGEST_MAGNITUDE)
            eps.setDimensions(nev=1)
            try:
                eps.solve()
                interrupt.check()
                if eps.getConverged():
                    top = eps.getEigenpair(0, vr)
                    scale = max(scale, abs(top))
                    if top.real < 0:
                        vals.append(top)
                        vecs.append(_whole(vr))
            except PETSc.Error:
                interrupt.check()       # else keep the scale of the values found
    except PETSc.Error as err:
        interrupt.check()
        raise ConvergenceError(f"{what} failed (PETSc error {err.ierr})") from None
    finally:
        for obj in (eps, A, B, vr):
            obj.destroy()
    X = np.array(vecs).T if vecs else np.zeros((a.shape[0], 0), dtype=complex)
    return np.array(vals, dtype=complex), X, scale
