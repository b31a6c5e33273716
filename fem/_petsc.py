"""Locate and initialise petsc4py and slepc4py.

Debian installs petsc4py under ``/usr/lib/petscdir/<version>/<arch>-real/lib/python3/dist-packages``
and relies on a ``/usr/lib/petsc`` alternative (from ``petsc-dev``) or ``PETSC_DIR`` to find it.
When petsc4py is not importable as is, the real-number Debian build is added to ``sys.path`` here,
so
``fem`` works without any shell set-up. A petsc4py that imports on its own (conda-forge, a source
build) is always used as it is.

``init(argv)`` must run before the first ``from petsc4py import PETSc`` so that PETSc options given
on the command line (``-static1_ksp_view``) reach the options database; :mod:`fem.cli` calls it
first. It starts PETSc only: SLEPc is initialised by :func:`SLEPc`, the first time an eigen-solver
needs it, so runs without one never load it.

Start-up cost. Most of a small run's wall time was MPI's start-up (Open MPI 4.1, Debian, 2 cores):
``PetscInitialize`` took 0.25 s, of which 0.2 s was the ``cm`` PML probing for high-speed networks
(PSM, PSM2) that a process on its own never uses. A process that no launcher started (a singleton)
is a serial run, so :func:`_serial_mpi_defaults` picks the PML over Open MPI's own transports
(``ob1``: self, shared memory, TCP) there, through Open MPI's environment variable, set only while
MPI starts: ``PetscInitialize`` then takes 0.05 s. Under ``mpiexec``/``srun`` (launcher variables
set), and for a variable the user set, nothing changes; other MPI libraries ignore it.

Not done, on purpose: ``ess_singleton_isolated`` (no ``orted`` helper, 0.04 s less) gives every
singleton on a machine the same job id, hence one session directory under ``/tmp`` that every run
creates and removes; with runs starting at once, ``MPI_Init`` was seen to fail on it ("unable to
create the desired directory"). Open MPI's default singletons have their own race there too (8
starting at once: 3 failures in 160, "File exists"), but not one shared directory.
"""

from __future__ import annotations

import glob
import importlib.util
import os
import sys

_initialised = False
_args: list[str] = []     # the arguments PETSc was initialised with; SLEPc gets the same
_deferred: list[str] = []  # the arguments PETSc is to start with, when a run first needs it

#: the PETSc version written for a run that has not started PETSc (its solves were dense,
#: :mod:`fem.solvers.dense`): :func:`fem.info.versions`
NOT_STARTED = "not started"
_slepc: list = []         # [SLEPc module] once initialised, [ImportError] if it does not import

#: Environment variables that Open MPI's, MPICH's and Slurm's launchers set in the processes
#: they start: any of them means this is not a singleton.
LAUNCHER_VARIABLES = ("OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK", "PMIX_RANK",
                      "PMIX_NAMESPACE", "PMI_RANK", "PMI_SIZE", "PMI_FD", "MPI_LOCALNRANKS",
                      "HYDI_CONTROL_FD", "SLURM_PROCID")

#: Open MPI's ``ess`` component of a process that started MPI without a launcher: it exports
#: ``OMPI_MCA_ess`` with this value (a launched rank has ``^singleton``)
SINGLETON = "singleton"

#: Open MPI settings of a singleton (a serial run): see the module docstring.
SERIAL_MPI = {"OMPI_MCA_pml": "ob1"}


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


def launched(environ=os.environ) -> bool:
    """Whether a launcher (``mpiexec``, ``srun``) started this process: a launcher variable set.

    Not where those variables are a singleton's, inherited: a process that started MPI on its
    own (Open MPI's ``ess`` component ``singleton``) sets ``PMIX_RANK`` and its kin in its
    environment, and a program it starts (a test runner's subprocess, a script's ``fem run``)
    inherits them; that program is a serial run (its MPI starts as a singleton of its own).
    """
    if environ.get("OMPI_MCA_ess") == SINGLETON:
        return False
    return any(name in environ for name in LAUNCHER_VARIABLES)


def _serial_mpi_defaults(environ=os.environ) -> dict[str, str]:
    """Set :data:`SERIAL_MPI` in ``environ`` unless a launcher started us; return what was set.

    Must run before MPI is initialised (Open MPI reads its ``OMPI_MCA_*`` variables then). A
    value the user set is kept.
    """
    if launched(environ):
        return {}
    added = {k: v for k, v in SERIAL_MPI.items() if k not in environ}
    environ.update(added)
    return added


def locate() -> None:
    """Make petsc4py and slepc4py importable (Debian's real build, module docstring)."""
    _ensure_importable("petsc4py", "PETSC_DIR", "/usr/lib/petscdir/petsc*/*-real")
    _ensure_importable("slepc4py", "SLEPC_DIR", "/usr/lib/slepcdir/slepc*/*-real")


def defer(argv: list[str]) -> None:
    """Start PETSc with ``argv`` when it is first needed (:func:`PETSc`), not now.

    ``fem run`` of a small static model may not need PETSc at all (its solves are dense,
    :mod:`fem.solvers.dense`); until PETSc starts, :func:`option_names` answers from ``argv``.
    """
    _deferred[:] = list(argv)


def started() -> bool:
    """Whether PETSc has been initialised in this process."""
    return _initialised


#: where PETSc reads options besides the command line (``PetscOptionsInsert``): if any is set,
#: :func:`option_names` starts PETSc to read them
_OPTION_SOURCES = ("PETSC_OPTIONS", "PETSC_OPTIONS_YAML")


def _rc_files() -> list[str]:
    home = os.path.expanduser("~")
    return [p for p in (os.path.join(home, ".petscrc"), ".petscrc")
            if os.path.isfile(p)]


def option_names(prefix: str = "") -> list[str]:
    """The PETSc options given for ``prefix`` (names without it), without starting PETSc.

    Once PETSc runs, its options database answers. Before, the arguments it is to start with
    (:func:`defer`) do, unless options may come from elsewhere (``PETSC_OPTIONS``, a
    ``.petscrc`` file): PETSc is then started and asked.
    """
    if not _initialised and (any(os.environ.get(v) for v in _OPTION_SOURCES) or _rc_files()):
        init()
    if _initialised:
        from petsc4py import PETSc as _PETSc

        names = list(_PETSc.Options().getAll())
    else:
        names = [a[1:] for a in _deferred if a.startswith("-") and len(a) > 1
                 and not a[1:2].isdigit() and a[1:2] != "."]
    return [k[len(prefix):] for k in names if k.startswith(prefix)]


def init(argv: list[str] | None = None) -> None:
    """Make petsc4py/slepc4py importable and initialise PETSc with ``argv`` (PETSc options).

    Without ``argv``: the arguments of :func:`defer`. SLEPc is only made importable here;
    :func:`SLEPc` initialises it when first needed.
    """
    global _initialised
    if _initialised:
        return
    if argv is None:
        argv = _deferred
    locate()
    import petsc4py

    # PETSc's signal handler would turn Ctrl-C (and a closed pipe) into an MPI abort; Python
    # handles signals instead, so an interrupted run closes its results file cleanly.
    args = [sys.argv[0] if sys.argv else "fem", "-no_signal_handler"] + list(argv or [])
    # MPI reads these when it starts; taken back after, so processes we start do not inherit them
    added = {} if "petsc4py.PETSc" in sys.modules else _serial_mpi_defaults()
    try:
        petsc4py.init(args)
    finally:
        for name in added:
            os.environ.pop(name, None)
    _args[:] = args
    _initialised = True


def PETSc():  # noqa: N802 - mirrors the module name
    """Return the initialised ``petsc4py.PETSc`` module."""
    init()
    from petsc4py import PETSc as _PETSc

    return _PETSc


def slepc_started() -> bool:
    """Whether :func:`SLEPc` has initialised SLEPc in this process."""
    return bool(_slepc) and not isinstance(_slepc[0], ImportError)


def SLEPc():  # noqa: N802
    """Return the initialised ``slepc4py.SLEPc`` module (ImportError when SLEPc is missing).

    SLEPc is initialised here, on first use, with the arguments PETSc got: the command-line
    options are already in PETSc's options database, where SLEPc's objects read theirs.
    """
    init()
    if not _slepc:
        try:
            import slepc4py

            slepc4py.init(_args)
            from slepc4py import SLEPc as _SLEPc
        except ImportError as err:  # SLEPc is optional for everything but eigen-analyses
            _slepc.append(err)
        else:
            _slepc.append(_SLEPc)
    if isinstance(_slepc[0], ImportError):
        raise ImportError(str(_slepc[0]))
    return _slepc[0]
