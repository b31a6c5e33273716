"""A dry run of the deck's PETSc options: throw-away solvers, and which options PETSc read.

Checks 2 and 3 of :mod:`fem.io.solver_options` ask PETSc itself. The deck's options are pushed
under a throw-away prefix onto a 2x2 AIJ matrix on ``COMM_SELF`` with a KSP made as the steps
make theirs (:func:`fem.linalg.direct_solver`), then ``setUp`` and one ``solve`` (MUMPS and
SuperLU read their options at the factorization); when the deck has eigen-solver options, an EPS
is set up as buckling steps set theirs up (:func:`dry_run`). PETSc then says which options were
read (``PetscOptionsUsed``, called through ctypes since petsc4py 3.18 does not expose it:
:func:`used_keys`); a run with ``-help`` lists the names PETSc reads, its output captured.
Everything pushed is removed afterwards and every object destroyed.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import glob
import io
import itertools
import os
import re
import sys
import tempfile
from dataclasses import dataclass

from fem.linalg import EIGEN_FAMILIES, petsc_name

# --- the dry run ------------------------------------------------------------------------------

@dataclass
class Run:
    """What a dry run found: the PETSc error, the deck keys PETSc read, the solvers it set up."""

    prefix: str
    error: Exception | None = None
    used: set | None = None
    solver: str = ""
    eigen_solver: str = ""
    no_slepc: bool = False
    names: frozenset = frozenset()


_COUNTER = itertools.count(1)


def is_eigen(key: str) -> bool:
    """Whether deck option ``key`` is an eigen-solver (SLEPc) option."""
    return key.lstrip("-").lower().startswith(EIGEN_FAMILIES)


def dry_run(options: dict, overlay: dict, eigen: bool, help_names: bool = False) -> Run:
    """Set up (and solve with) throw-away solvers with ``options``; see the module docstring.

    ``overlay`` holds command-line options of a step (deck spelling); they win, as in a step.
    ``eigen`` adds an EPS as buckling steps make theirs. With ``help_names``, PETSc's ``-help``
    output is captured and the option names it lists are returned in ``names``.
    """
    from fem import _petsc, linalg

    PETSc = _petsc.PETSc()
    prefix = f"fem_dry{next(_COUNTER)}_"    # unique: PETSc prints -help once per prefix
    run = Run(prefix)
    objects = []
    db = PETSc.Options()
    set_help = help_names and not db.hasName("help")
    try:
        with _captured_stdout(help_names) as captured:
            if set_help:
                db.setValue("help", "")
            try:
                linalg.push_options(prefix, overlay)          # the command line wins
                A = PETSc.Mat().createAIJ((2, 2), nnz=2, comm=PETSc.COMM_SELF)
                objects.append(A)
                A.setValues([0, 1], [0, 1], [[2.0, -1.0], [-1.0, 2.0]])
                A.assemble()
                ksp = linalg.direct_solver(A, prefix, options)
                objects.append(ksp)
                ksp.setUp()
                b, x = A.createVecs()
                objects += [b, x]
                b.set(1.0)
                try:
                    ksp.solve(b, x)
                except PETSc.Error as err:
                    if err.ierr != 91:      # not converging on this matrix says nothing of the deck
                        raise
                run.solver = _describe(ksp)
                if eigen:
                    _dry_eigen(prefix, objects, run)
            except PETSc.Error as err:
                run.error = err
            finally:
                if set_help:
                    db.delValue("help")
        run.used = used_keys(prefix, options, overlay)
    finally:
        linalg.release_options(prefix)
        for obj in reversed(objects):
            obj.destroy()
    if help_names:
        run.names = frozenset(deck_spelling(n) for n in
                              re.findall(r"-" + re.escape(prefix) + r"(\w+)", captured.text))
    return run


def _dry_eigen(prefix: str, objects: list, run: Run) -> None:
    """An EPS set up as a buckling step's (:func:`fem.solvers.eigen.general_solver`)."""
    import scipy.sparse as sp

    from fem import _petsc, linalg
    from fem.solvers.eigen import DENSE_LIMIT, general_solver

    try:
        _petsc.SLEPc()                       # SLEPc is optional: without it, nothing to check
    except ImportError:
        run.no_slepc = True
        return
    n = DENSE_LIMIT + 1                      # smaller problems never reach SLEPc
    k0 = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(n, n), format="csr")
    A, B = linalg.matrix_from_scipy(-sp.identity(n, format="csr")), linalg.matrix_from_scipy(k0)
    objects += [A, B]
    eps = general_solver(A, B, prefix + "eps_", symmetric=True, nev=4)  # as buckling
    objects.append(eps)
    eps.setUp()                              # factorizes B: the ST's MUMPS reads its options
    run.eigen_solver = (f"EPS {eps.getType()}, ST {eps.getST().getType()} with "
                        + _describe(eps.getST().getKSP()))


def _describe(ksp) -> str:
    """``KSP preonly, PC lu with mumps``: the solver a dry run set up."""
    pc = ksp.getPC()
    text = f"KSP {ksp.getType()}, PC {pc.getType()}"
    if pc.getType() in ("lu", "cholesky", "ilu", "icc"):
        with contextlib.suppress(Exception):
            text += f" with {pc.getFactorSolverType()}"
    return text


def deck_spelling(name: str) -> str:
    """Inverse of :func:`petsc_name` (``eps_eps_tol`` -> ``eps_tol``)."""
    rest = name[4:]
    return rest if name.lower().startswith("eps_") and is_eigen(rest) else name


_LIBRARY: list = []


def _petsc_library():
    """The PETSc shared library petsc4py runs on, as a ctypes handle (None if not found)."""
    if _LIBRARY:
        return _LIBRARY[0]
    candidates = []
    with contextlib.suppress(OSError):
        with open("/proc/self/maps") as fh:          # Linux: the very library loaded
            candidates += [line.split()[-1] for line in fh
                           if os.path.basename(line.split()[-1]).startswith("libpetsc")]
    with contextlib.suppress(Exception):
        import petsc4py

        config = petsc4py.get_config()
        root = os.path.join(config["PETSC_DIR"], config.get("PETSC_ARCH") or "", "lib")
        candidates += sorted(glob.glob(os.path.join(root, "libpetsc*.so*")))
        candidates += sorted(glob.glob(os.path.join(root, "libpetsc*.dylib")))
    for name in ("petsc", "petsc_real"):
        found = ctypes.util.find_library(name)
        if found:
            candidates.append(found)
    library = None
    for path in dict.fromkeys(candidates):
        try:
            handle = ctypes.CDLL(path)
            used = handle.PetscOptionsUsed
        except (OSError, AttributeError):
            continue
        used.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_int)]
        used.restype = ctypes.c_int
        library = handle
        break
    _LIBRARY.append(library)
    return library


def used_keys(prefix: str, options: dict, overlay: dict) -> set | None:
    """Deck keys PETSc read under ``prefix`` (or that the command line overrides), or None."""
    library = _petsc_library()
    if library is None:
        return None
    overridden = {petsc_name(k).lower() for k in overlay}
    used = set()
    for key in options:
        name = petsc_name(key)
        flag = ctypes.c_int(0)       # PetscBool is an enum: int
        if name.lower() in overridden:
            used.add(key)
        elif library.PetscOptionsUsed(None, (prefix + name).encode(), ctypes.byref(flag)) != 0:
            return None
        elif flag.value:
            used.add(key)
    return used


class _Captured:
    text = ""


@contextlib.contextmanager
def _captured_stdout(active: bool):
    """Send what PETSc writes to standard output (its ``-help``) to ``.text`` instead.

    Both ways out are caught: the C ``stdout`` (file descriptor 1) and Python's ``sys.stdout``,
    which petsc4py may route PETSc's printing through.
    """
    captured = _Captured()
    if not active:
        yield captured
        return
    libc = ctypes.CDLL(None)
    libc.fflush.argtypes = [ctypes.c_void_p]
    sys.stdout.flush()
    libc.fflush(None)
    saved, python_stdout = os.dup(1), sys.stdout
    with tempfile.TemporaryFile() as tmp:
        os.dup2(tmp.fileno(), 1)
        sys.stdout = io.StringIO()
        try:
            yield captured
        finally:
            libc.fflush(None)
            os.dup2(saved, 1)
            os.close(saved)
            text, sys.stdout = sys.stdout.getvalue(), python_stdout
            tmp.seek(0)
            captured.text = tmp.read().decode(errors="replace") + text
