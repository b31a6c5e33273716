"""Fast start (issue 14): a run imports only what its steps need, and MPI starts lean when serial.

The timing itself is a benchmark (``python -m benchmarks startup``); these checks are structural,
so that the lazy imports cannot silently regress. Each run is a fresh interpreter (a test process
has imported everything already) that does what ``fem run`` does: read the deck, start PETSc, run
it, then report the top-level modules in ``sys.modules``:

* a static deck (the ``cantilever_2d`` case) never imports slepc4py, meshio or numba (nor numba's
  llvmlite); the positive control, a modal step with ``method = "slepc"``, does import slepc4py,
  so the check sees an import when there is one and SLEPc still loads when a step needs it;
* a nonlinear static truss under load control does not import numba either, the elastica
  (planar co-rotational beams: the compiled increment) does;
* the one-element deck of ``benchmarks/startup.py`` (issue 32) imports no eigen-solver, mesh
  reader, plotting or compiler, no PETSc (its solve is dense, :mod:`fem.solvers.dense`) and no
  SciPy at all (:mod:`fem.lazy`; :data:`ONE_ELEMENT_NEVER`); a deck of a few hundred unknowns
  still starts PETSc (the positive control);
* a second run of the elastica loads its compiled kernels from numba's cache and compiles
  nothing (numba's cache misses, counted over fem's kernel modules, are zero);
* Open MPI's serial settings (:data:`fem._petsc.SERIAL_MPI`) are set only while MPI starts, and
  never when a launcher (``mpiexec``, ``srun``) started the process or for a variable the user set;
  they do not make concurrent runs share one MPI session directory.
"""

import gc
import json
import os
import subprocess
import sys
from pathlib import Path

import h5py
import numpy as np
import pytest

from fem import _petsc, mpi

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("slepc4py", "meshio", "numba", "llvmlite")

SCRIPT = """
import json, os, sys
from fem import _petsc
from fem.io import deck as deck_io
from fem.run import run

deck = deck_io.load(sys.argv[1])
_petsc.defer(sys.argv[3:])          # as fem.cli does: PETSc starts when a step needs it
if sys.argv[3:]:
    _petsc.init()
result = run(deck, sys.argv[2])
hits = misses = 0                   # numba's cache, over fem's kernel modules
if "numba" in sys.modules:
    from numba.core.registry import CPUDispatcher

    for name, module in list(sys.modules.items()):
        if name.startswith("fem.") and name.endswith("_kernel"):
            for f in vars(module).values():
                if isinstance(f, CPUDispatcher):
                    hits += sum(f.stats.cache_hits.values())
                    misses += sum(f.stats.cache_misses.values())
import h5py
with h5py.File(result.h5, "r") as h5:
    petsc_version = h5.attrs["version_petsc"]
print(json.dumps({"modules": sorted({m.split(".")[0] for m in sys.modules}),
                  "loaded": sorted(sys.modules),
                  "petsc": "petsc4py.PETSc" in sys.modules,
                  "ompi": sorted(k for k in os.environ if k in _petsc.SERIAL_MPI),
                  "h5": result.h5, "cache_hits": hits, "cache_misses": misses,
                  "version_petsc": petsc_version}))
"""

#: what the one-element static deck of benchmarks/startup.py must not import (issue 32)
ONE_ELEMENT_NEVER = HEAVY + ("slepc4py", "matplotlib", "petsc4py", "scipy", "scipy.sparse",
                             "scipy.linalg", "scipy.spatial", "scipy.special")
#: nor the step types it does not run (the registry imports a step when it is looked up), what
#: only their deck modules' neighbours use, a nonlinear static step's compiled increments, or
#: what only a deck mistake's message uses (issue 32)
ONE_ELEMENT_UNUSED = tuple(f"fem.analysis.{m}" for m in (
    "cms", "dynamic", "linearize", "modify", "rotordynamics", "sweep", "planar_static",
    "spatial_static")) + ("fem.cms.modification", "difflib")


def _run_fresh(deck: Path, out: Path, *petsc_options: str) -> dict:
    """Run ``deck`` in a new interpreter as ``fem run`` does; what it had imported at the end."""
    env = {k: v for k, v in os.environ.items()
           if k not in _petsc.SERIAL_MPI and k not in _petsc.LAUNCHER_VARIABLES
           and k not in _petsc._OPTION_SOURCES}
    proc = subprocess.run([sys.executable, "-c", SCRIPT, str(deck), str(out), *petsc_options],
                          env=env,
                          capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _displacements(h5_path: str) -> dict:
    with h5py.File(h5_path, "r") as h5:
        return {s: h5[f"steps/{s}/displacement"][()] for s in h5["steps"]}


def test_a_static_run_imports_no_eigen_solver_mesh_reader_or_compiler(tmp_path):
    """Nor PETSc (issue 32): its solves are dense (fem.solvers.dense). A PETSc option for one of
    its steps on the command line starts PETSc, whose LU then solves that step: the positive
    control, to the same answer."""
    deck = ROOT / "cases" / "cantilever_2d" / "deck.toml"
    report = _run_fresh(deck, tmp_path / "out.h5")
    with h5py.File(report["h5"], "r") as h5:
        assert set(h5["steps"]) == {"tip_force", "tip_moment"}
    loaded = sorted(set(HEAVY + ("petsc4py",)) & set(report["modules"]))
    assert loaded == [], f"a static run imported {loaded}"
    assert not report["petsc"] and report["version_petsc"] == _petsc.NOT_STARTED
    with_petsc = _run_fresh(deck, tmp_path / "petsc.h5", "-tip_force_ksp_type", "preonly")
    assert with_petsc["petsc"], "a PETSc option did not start PETSc"
    assert with_petsc["version_petsc"].count(".") == 2          # X.Y.Z, PETSc's own
    assert with_petsc["ompi"] == [], "Open MPI's serial settings stayed in the environment"
    dense, petsc = _displacements(report["h5"]), _displacements(with_petsc["h5"])
    for step in dense:
        scale = np.abs(petsc[step]).max()
        assert np.abs(dense[step] - petsc[step]).max() <= 1e-13 * scale, step


TRUSS = """
[model]
dim = 2
[[materials]]
name = "m"
E = 1.0
nu = 0.0
[[sections]]
name = "s"
A = 1.0
[nodes]
coordinates = [[0.0, 0.0], [1.0, 0.1], [2.0, 0.0]]
[[elements]]
name = "bars"
type = "truss"
formulation = "corotational"
material = "m"
section = "s"
connectivity = [[1, 2], [2, 3]]
[[supports]]
nodes = [1, 3]
fixed = ["ux", "uy"]
[[loads]]
name = "P"
nodes = [2]
force = [0.0, -1e-4]
[[steps]]
name = "push"
type = "static"
nonlinear = true
increments = 4
"""


def test_the_compiler_loads_for_planar_beams_under_load_control_only(tmp_path):
    """A nonlinear static truss under load control stays without numba; the elastica (planar
    co-rotational beams, fem.analysis.planar_static) loads it: the check sees an import. Run
    again, the elastica compiles nothing (issue 32)."""
    deck = tmp_path / "truss.toml"
    deck.write_text(TRUSS)
    report = _run_fresh(deck, tmp_path / "truss.h5")
    assert not set(HEAVY) & set(report["modules"]), report["modules"]
    report = _run_fresh(ROOT / "cases" / "elastica_cantilever" / "deck.toml",
                        tmp_path / "elastica.h5")
    assert "numba" in report["modules"] or os.environ.get("FEM_JIT") == "0"
    if os.environ.get("FEM_JIT") == "0":
        return
    # the first run may have compiled (a cold cache); a second one loads every kernel it calls
    report = _run_fresh(ROOT / "cases" / "elastica_cantilever" / "deck.toml",
                        tmp_path / "again.h5")
    assert report["cache_hits"] > 0, "no kernel loaded: the check would prove nothing"
    assert report["cache_misses"] == 0, "a second run compiled kernels"


def test_a_one_element_static_run_imports_only_what_it_solves_with(tmp_path):
    from benchmarks.startup import DECK

    deck = tmp_path / "one.toml"
    deck.write_text(DECK)
    report = _run_fresh(deck, tmp_path / "one.h5")
    with h5py.File(report["h5"], "r") as h5:
        assert set(h5["steps"]) == {"tip_force"}
    loaded = set(report["loaded"])
    assert "numpy.linalg" in loaded, "the check would not see a submodule"
    assert sorted(set(ONE_ELEMENT_NEVER) & loaded) == []
    assert "fem.analysis.static" in loaded, "the check would not see a step module"
    assert sorted(set(ONE_ELEMENT_UNUSED) & loaded) == []
    assert not report["petsc"], "PETSc started for one element"
    # the positive control: 100 elements (303 unknowns) solve with PETSc's LU
    nodes = ", ".join(f"[{20.0 * i}, 0.0]" for i in range(101))
    cells = ", ".join(f"[{i}, {i + 1}]" for i in range(1, 101))
    many = DECK.replace("[[0.0, 0.0], [2000.0, 0.0]]", f"[{nodes}]").replace(
        "tip = [2]", "tip = [101]").replace("connectivity = [[1, 2]]", f"connectivity = [{cells}]")
    deck.write_text(many)
    report = _run_fresh(deck, tmp_path / "many.h5")
    assert report["petsc"] and "petsc4py" in report["modules"]


FREEZE = """
import gc, sys
from fem.cli import main
sys.argv = ["fem", *sys.argv[1:]]
code = main()
print(gc.get_freeze_count(), file=sys.stderr)
sys.exit(code)
"""


def test_the_console_script_hides_its_objects_from_the_exit_collection(tmp_path):
    """``fem`` (``main()`` on the command line) freezes the garbage collector's objects as it
    returns: the exit skips the collection over every module's objects, 25 ms (issue 32). Its
    results are those of a run in this process, whose caller passed ``argv`` (a test, a
    script) and keeps its collections."""
    from benchmarks.startup import DECK

    deck = tmp_path / "one.toml"
    deck.write_text(DECK)
    proc = subprocess.run([sys.executable, "-c", FREEZE, "run", str(deck), "-o",
                           str(tmp_path / "one.h5")], capture_output=True, text=True,
                          cwd=ROOT, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert int(proc.stderr.strip().splitlines()[-1]) > 0, "nothing was frozen"
    from fem.cli import main

    frozen = gc.get_freeze_count()
    assert main(["run", str(deck), "-o", str(tmp_path / "here.h5")]) == 0
    assert gc.get_freeze_count() == frozen
    there, here = _displacements(tmp_path / "one.h5"), _displacements(tmp_path / "here.h5")
    assert list(there) == ["tip_force"] and np.abs(there["tip_force"]).max() > 0
    assert np.array_equal(there["tip_force"], here["tip_force"])


def test_a_slepc_modal_step_still_loads_slepc(tmp_path):
    pytest.importorskip("slepc4py")
    text = (ROOT / "cases" / "cantilever_modes" / "deck.toml").read_text()
    assert 'type = "modal"' in text
    deck = tmp_path / "deck.toml"
    deck.write_text(text.replace('type = "modal"', 'type = "modal"\nmethod = "slepc"', 1))
    report = _run_fresh(deck, tmp_path / "out.h5")
    assert "slepc4py" in report["modules"]
    with h5py.File(report["h5"], "r") as h5:
        assert len(h5["modes"]) == 1
        assert h5.attrs["version_slepc4py"].count(".") == 2          # X.Y.Z, from its metadata


def test_serial_settings_apply_to_a_process_no_launcher_started():
    environ = {"PATH": "/usr/bin"}
    added = _petsc._serial_mpi_defaults(environ)
    assert added == _petsc.SERIAL_MPI
    assert environ == {"PATH": "/usr/bin", **_petsc.SERIAL_MPI}


@pytest.mark.parametrize("launcher", ["OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK",
                                      "SLURM_PROCID"])
def test_serial_settings_never_apply_under_a_launcher(launcher):
    environ = {launcher: "0"}
    assert _petsc._serial_mpi_defaults(environ) == {}
    assert environ == {launcher: "0"}


def test_a_singletons_variables_inherited_are_no_launch():
    # what Open MPI exports in a process that started MPI on its own, and its children inherit
    environ = {"OMPI_MCA_ess": "singleton", "PMIX_RANK": "0", "PMIX_NAMESPACE": "17"}
    assert not _petsc.launched(environ)
    assert not mpi.launched(environ)
    assert _petsc._serial_mpi_defaults(dict(environ)) == _petsc.SERIAL_MPI
    launched = {**environ, "OMPI_MCA_ess": "^singleton", "OMPI_COMM_WORLD_SIZE": "1"}
    assert _petsc.launched(launched) and mpi.launched(launched)


SINGLETON_CHILD = """
import os, subprocess, sys
from mpi4py import MPI                      # this process: an MPI singleton
assert MPI.COMM_WORLD.Get_size() == 1
child = ("import os; from fem import mpi; from fem.study import runner; "
         "print(mpi.launched(), runner.launched(), 'PMIX_RANK' in os.environ)")
print(subprocess.run([sys.executable, "-c", child], capture_output=True, text=True,
                     check=True).stdout)
"""


def test_a_program_started_by_an_mpi_singleton_is_not_launched():
    """A test runner's worker or a script that started MPI runs ``fem``: a serial run there
    (it was taken for an ``mpiexec`` rank: quiet ranks, no serial MPI settings)."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OMPI_", "PMIX_", "PMI_", "OPAL_", "PRTE_", "ORTE_"))}
    proc = subprocess.run([sys.executable, "-c", SINGLETON_CHILD], env=env, capture_output=True,
                          text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 0, proc.stderr
    # the child inherits the singleton's variables (PMIX_RANK), and is not launched
    assert proc.stdout.split() == ["False", "False", "True"]


def test_serial_settings_keep_what_the_user_set():
    user = {k: f"user {k}" for k in _petsc.SERIAL_MPI}
    environ = dict(user)
    assert _petsc._serial_mpi_defaults(environ) == {}
    assert environ == user


def test_no_shared_singleton_session_directory():
    # isolated singletons share one job id and session directory (see fem._petsc's docstring)
    assert "OMPI_MCA_ess_singleton_isolated" not in _petsc.SERIAL_MPI


HELD = """
import glob, os, sys
from fem import _petsc
from fem.io import deck as deck_io
from fem.io.hdf5 import ResultsFile

deck = deck_io.load(sys.argv[1])
results = ResultsFile(sys.argv[2], deck.model)
assert not _petsc.started()
_petsc.init()                       # a later step needs PETSc: MPI's singleton helper starts
results.close()
held = []
for fd in glob.glob("/proc/[0-9]*/fd/*"):
    try:
        if os.readlink(fd) == results.path:
            held.append(fd)
    except OSError:
        pass
print(len(held))
"""


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc")
def test_petsc_started_during_a_run_does_not_hold_its_results_file(tmp_path):
    """PETSc now starts when a step first needs it, after the results file is open: Open MPI's
    singleton helper, forked then, must not inherit the file (fem.io.hdf5._not_inherited)."""
    env = {k: v for k, v in os.environ.items() if k not in _petsc.LAUNCHER_VARIABLES}
    proc = subprocess.run([sys.executable, "-c", HELD, str(ROOT / "cases" / "cantilever_2d" /
                                                         "deck.toml"), str(tmp_path / "out.h5")],
                          env=env, capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split()[-1] == "0", "a process still holds the closed results file"


def test_a_deferred_module_is_imported_at_its_first_use():
    script = ("import sys\nfrom fem import lazy\nm = lazy.module('xml.dom.minidom')\n"
              "before = 'xml.dom.minidom' in sys.modules\nm.parseString('<a/>')\n"
              "print(before, 'xml.dom.minidom' in sys.modules, lazy.module('xml.dom.minidom') "
              "is sys.modules['xml.dom.minidom'])")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          cwd=ROOT, timeout=60)
    assert proc.stdout.split() == ["False", "True", "True"], proc.stderr


@pytest.mark.parametrize("name", ["numpy", "scipy", "h5py", "meshio", "petsc4py",
                                  "no_such_package_here"])
def test_versions_are_read_without_importlib_metadata_as_it_reads_them(name):
    from importlib import metadata

    from fem import info

    _petsc.locate()
    try:
        expected = metadata.version(name)
    except metadata.PackageNotFoundError:
        expected = "not installed"
    assert info._dist_version(name) == expected


def test_the_mpi_library_is_found_without_ldconfig():
    from fem import info

    lib = info._mpi_library()
    if lib is None:
        pytest.skip("no MPI library")
    assert info.mpi_version().split()[0] in ("Open", "MPICH", "Intel(R)")
