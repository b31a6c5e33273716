"""Versions of fem and of everything it runs on (``fem info``, results-file attributes)."""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import platform
from importlib import metadata

from fem import __version__, _petsc


@functools.cache
def _dist_version(name: str) -> str:
    # cached: a study's worker writes these into every variant's file, and reading the
    # distributions' metadata took 5 ms a variant (15 % of a small modal variant)
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not installed"


@functools.cache
def mpi_version() -> str:
    """The MPI library's own version string (first line), without initialising MPI (cached)."""
    name = ctypes.util.find_library("mpi")
    if name is None:
        return "unknown"
    try:
        lib = ctypes.CDLL(name)
        buf = ctypes.create_string_buffer(8192)
        length = ctypes.c_int()
        lib.MPI_Get_library_version(buf, ctypes.byref(length))
        return buf.value.decode(errors="replace").split(",")[0].strip()
    except (OSError, AttributeError):
        return "unknown"


def versions(slepc: bool = False) -> dict[str, str]:
    """Name -> version of fem, Python and the libraries.

    Every run writes these, so nothing is imported or started for them that the run itself does
    not need (SciPy's and meshio's versions come from their distributions' metadata). SLEPc is
    asked its library version (``slepc``) only when it is already running or ``slepc`` is true
    (``fem info``); otherwise only slepc4py's version is given (slepc4py X.Y.* runs on SLEPc X.Y).
    """
    import h5py
    import numpy

    PETSc = _petsc.PETSc()
    v = PETSc.Sys.getVersion()
    out = {
        "fem": __version__,
        "python": platform.python_version(),
        "numpy": numpy.__version__,
        "scipy": _dist_version("scipy"),
        "petsc": ".".join(str(x) for x in v),
        "petsc4py": _dist_version("petsc4py"),
    }
    if slepc or _petsc.slepc_started():
        try:
            SLEPc = _petsc.SLEPc()
            out["slepc"] = ".".join(str(x) for x in SLEPc.Sys.getVersion())
            out["slepc4py"] = _dist_version("slepc4py")
        except ImportError:
            out["slepc"] = "not installed"
    else:
        out["slepc4py"] = _dist_version("slepc4py")
        if out["slepc4py"] == "not installed":
            out["slepc"] = "not installed"
    out["mpi"] = mpi_version()
    out["meshio"] = _dist_version("meshio")
    out["h5py"] = h5py.version.version
    out["hdf5"] = h5py.version.hdf5_version
    return out


def report() -> str:
    """The text of ``fem info``."""
    from fem import linalg

    lines = [f"{k:<10} {v}" for k, v in versions(slepc=True).items()]
    PETSc = _petsc.PETSc()
    scalar = "complex" if PETSc.ScalarType().dtype.kind == "c" else "real"
    lines.append(f"{'scalars':<10} {scalar}, {PETSc.IntType().dtype.itemsize * 8}-bit indices")
    lines.append(f"{'packages':<10} {', '.join(linalg.external_packages()) or 'none'}")
    lines.append(f"{'direct LU':<10} {linalg.best_lu_package()} (default for every step)")
    return "\n".join(lines)
