"""Locate and initialise petsc4py and slepc4py.

Debian installs petsc4py under ``/usr/lib/petscdir/<version>/<arch>-real/lib/python3/dist-packages``
and relies on a ``/usr/lib/petsc`` alternative (from ``petsc-dev``) or ``PETSC_DIR`` to find it.
When petsc4py is not importable as is, the real-number Debian build is added to ``sys.path`` here,
so
``fem`` works without any shell set-up. A petsc4py that imports on its own (conda-forge, a source
build) is always used as it is.

``init(argv)`` must run before the first ``from petsc4py import PETSc`` so that PETSc options given
on the command line (``-static1_ksp_view``) reach the options database; :mod:`fem.cli` calls it
first.
"""

from __future__ import annotations

import glob
import importlib.util
import os
import sys

_initialised = False


def _debian_site(pattern: str) -> str | None:
    builds = sorted(glob.glob(pattern))
    return builds[-1] if builds else None


def _ensure_importable(module: str, env: str, pattern: str) -> None:
    if importlib.util.find_spec(module) is not None:
        return
    root = os.environ.get(env) or _debian_site(pattern)
    if root is None:
        return
    site = os.path.join(root, "lib", "python3", "dist-packages")
    if os.path.isdir(site) and site not in sys.path:
        sys.path.append(site)
        os.environ.setdefault(env, root)


def init(argv: list[str] | None = None) -> None:
    """Make petsc4py/slepc4py importable and initialise them with ``argv`` (PETSc options)."""
    global _initialised
    if _initialised:
        return
    _ensure_importable("petsc4py", "PETSC_DIR", "/usr/lib/petscdir/petsc*/*-real")
    _ensure_importable("slepc4py", "SLEPC_DIR", "/usr/lib/slepcdir/slepc*/*-real")
    import petsc4py

    # PETSc's signal handler would turn Ctrl-C (and a closed pipe) into an MPI abort; Python
    # handles signals instead, so an interrupted run closes its results file cleanly.
    args = [sys.argv[0] if sys.argv else "fem", "-no_signal_handler"] + list(argv or [])
    petsc4py.init(args)
    try:
        import slepc4py

        slepc4py.init(args)
    except ImportError:  # SLEPc is optional for everything but eigen-analyses
        pass
    _initialised = True


def PETSc():  # noqa: N802 - mirrors the module name
    """Return the initialised ``petsc4py.PETSc`` module."""
    init()
    from petsc4py import PETSc as _PETSc

    return _PETSc


def SLEPc():  # noqa: N802
    """Return the initialised ``slepc4py.SLEPc`` module (ImportError when SLEPc is missing)."""
    init()
    from slepc4py import SLEPc as _SLEPc

    return _SLEPc
