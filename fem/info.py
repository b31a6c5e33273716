"""Versions of fem and of everything it runs on (``fem info``, results-file attributes)."""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import importlib.util
import os
import platform

from fem import __version__, _petsc


@functools.cache
def _dist_version(name: str) -> str:
    """The version of the distribution that provides the importable package ``name``.

    Read from the name of its ``<name>-<version>.dist-info`` (or ``.egg-info``) folder beside the
    package, the one ``import name`` would load, without importing it: every run writes these,
    and ``importlib.metadata`` took 0.05 to 0.1 s to import and search (issue 32). Anything
    else is asked of ``importlib.metadata``. Cached: a study's worker writes these into every
    variant's file.
    """
    spec = importlib.util.find_spec(name)
    if spec is None:
        return "not installed"
    if spec.submodule_search_locations:
        site = os.path.dirname(next(iter(spec.submodule_search_locations)))
        stem = name.lower().replace("-", "_") + "-"
        try:
            entries = sorted(os.listdir(site))
        except OSError:
            entries = []
        for entry in entries:
            low = entry.lower()
            if low.startswith(stem) and low.endswith((".dist-info", ".egg-info")):
                version = entry[len(stem):].rsplit(".", 1)[0].split("-py")[0]
                if version[:1].isdigit():
                    return version
    from importlib import metadata

    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not installed"


#: the MPI libraries' sonames tried before ``ctypes.util.find_library`` (which runs
#: ``ldconfig -p``, a process of its own: 10 ms of a one-element run): Open MPI 3-5, MPICH 3-4
MPI_SONAMES = ("libmpi.so.40", "libmpi.so.12")


def _mpi_library():
    for name in MPI_SONAMES:
        try:
            return ctypes.CDLL(name)
        except OSError:
            continue
    name = ctypes.util.find_library("mpi")
    return None if name is None else ctypes.CDLL(name)


@functools.cache
def mpi_version() -> str:
    """The MPI library's own version string (first line), without initialising MPI (cached)."""
    try:
        lib = _mpi_library()
        if lib is None:
            return "unknown"
        buf = ctypes.create_string_buffer(8192)
        length = ctypes.c_int()
        lib.MPI_Get_library_version(buf, ctypes.byref(length))
        return buf.value.decode(errors="replace").split(",")[0].strip()
    except (OSError, AttributeError):
        return "unknown"


def versions(slepc: bool = False, petsc: bool = False) -> dict[str, str]:
    """Name -> version of fem, Python and the libraries.

    Every run writes these, so nothing is imported or started for them that the run itself does
    not need (SciPy's and meshio's versions come from their distributions' metadata). SLEPc is
    asked its library version (``slepc``) only when it is already running or ``slepc`` is true
    (``fem info``); otherwise only slepc4py's version is given (slepc4py X.Y.* runs on SLEPc X.Y).
    PETSc likewise (``petsc``): a run writes :data:`fem._petsc.NOT_STARTED` until it starts
    PETSc, and its results file gets the version when it closes.
    """
    import h5py
    import numpy

    _petsc.locate()                 # petsc4py's and slepc4py's folders, before PETSc starts
    out = {
        "fem": __version__,
        "python": platform.python_version(),
        "numpy": numpy.__version__,
        "scipy": _dist_version("scipy"),
        "petsc": _petsc.NOT_STARTED,
        "petsc4py": _dist_version("petsc4py"),
    }
    if petsc or _petsc.started():
        out["petsc"] = ".".join(str(x) for x in _petsc.PETSc().Sys.getVersion())
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

    lines = [f"{k:<10} {v}" for k, v in versions(slepc=True, petsc=True).items()]
    PETSc = _petsc.PETSc()
    scalar = "complex" if PETSc.ScalarType().dtype.kind == "c" else "real"
    lines.append(f"{'scalars':<10} {scalar}, {PETSc.IntType().dtype.itemsize * 8}-bit indices")
    lines.append(f"{'packages':<10} {', '.join(linalg.external_packages()) or 'none'}")
    lines.append(f"{'direct LU':<10} {linalg.best_lu_package()} (default for every step)")
    return "\n".join(lines)
