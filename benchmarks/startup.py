"""Start-up: wall time of ``fem run`` on a one-element deck, each run in a cold Python.

Issue 14 asks for ``fem run`` of a one-element deck in under 0.8 s (it took 1.2 s, 0.7 s of it
PETSc's and MPI's start-up). Each command runs ``REPEAT`` times as a new process and the median
wall time is reported, beside what it is made of: the interpreter alone, ``import fem``, every
module a run imports (``import fem.run``) and PETSc's start with MPI (``fem._petsc.init()``,
NumPy's import included). Each row is a process of its own, so the rows overlap and do not add
up. The ratio is to the 0.8 s target (below 1 passes). The machine's load average is printed
too: other processes on the cores stretch every row.

Beside Exudyn (issue 32: one-element ``fem run`` under 2x Exudyn's import and one step): the
peer's row is a cold process that imports Exudyn, builds a point mass under gravity and takes
one time step of its default solver (:data:`EXUDYN`), run in turn with ``fem run`` (fem, Exudyn,
fem, ...), so that both sample the machine's speed alike; the ratio is fem's median over
Exudyn's (below 2 passes). Where Exudyn does not import (the extra ``peers``), the row says so;
``FEM_PEER_PYTHON`` names another interpreter to run it with (a virtual environment of its own).

Before and after (issue 32): with ``FEM_BEFORE=<a source tree of fem>`` (``git archive <commit> |
tar -x -C <dir>``), that tree's ``fem run`` is a third command of the interleaved rounds, so the
two versions are compared on the same machine load; both then run as ``python -P -m fem.cli``
with their tree first on ``PYTHONPATH``.

Python compiles fem's modules on every start when bytecode caching is off
(``PYTHONDONTWRITEBYTECODE``): the header says which, as it moves the times by about 0.1 s.
"""

import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET = 0.8            # seconds, issue 14
PEER_TARGET = 2.0       # fem run / Exudyn's import and one step, issue 32
REPEAT = 5

#: Exudyn's import and one time step of one point mass under gravity (its default solver,
#: generalized-alpha), no solution file; prints the mass's height, -g h^2 / 2.
EXUDYN = """\
import exudyn as exu
from exudyn.itemInterface import LoadForceVector, MarkerNodePosition, MassPoint, NodePoint

mbs = exu.SystemContainer().AddSystem()
n = mbs.AddNode(NodePoint(referenceCoordinates=[0.0, 0.0, 0.0]))
mbs.AddObject(MassPoint(nodeNumber=n, mass=1.0))
mbs.AddLoad(LoadForceVector(markerNumber=mbs.AddMarker(MarkerNodePosition(nodeNumber=n)),
                            loadVector=[0.0, -9.81, 0.0]))
mbs.Assemble()
s = exu.SimulationSettings()
s.timeIntegration.numberOfSteps = 1
s.timeIntegration.endTime = 1e-3
s.timeIntegration.verboseMode = 0
s.solution.file.write = False
exu.SolveDynamic(mbs, s)
print(mbs.GetNodeOutput(n, exu.OutputVariableType.Position)[1])
"""

#: A 2D cantilever of one linear beam element under a tip force (units N, mm).
DECK = """\
[model]
dim = 2
title = "One-element cantilever, tip force"
units = "N, mm"

[[materials]]
name = "steel"
E = 210000.0
nu = 0.3

[[sections]]
name = "s"
A = 2848.0
Iz = 19.43e6

[nodes]
coordinates = [[0.0, 0.0], [2000.0, 0.0]]

[sets]
root = [1]
tip = [2]

[[elements]]
name = "beam"
type = "beam"
formulation = "linear"
material = "steel"
section = "s"
connectivity = [[1, 2]]

[[supports]]
nodes = "root"
fixed = ["all"]

[[loads]]
name = "P"
nodes = "tip"
force = [0.0, -5000.0]

[[steps]]
name = "tip_force"
type = "static"
loads = ["P"]
"""


def fem_command() -> list[str]:
    """The ``fem`` console script of this interpreter's environment (``python -m fem.cli``)."""
    script = Path(sys.executable).parent / "fem"
    if script.is_file():
        return [str(script)]
    found = shutil.which("fem")
    return [found] if found else [sys.executable, "-m", "fem.cli"]


def median_wall(command: list[str], repeat: int = REPEAT, make_args=None) -> float:
    """Median wall time of ``repeat`` runs of ``command`` (plus ``make_args(i)``), in seconds."""
    times = []
    for i in range(repeat):
        args = command + (make_args(i) if make_args else [])
        t = time.perf_counter()
        proc = subprocess.run(args, capture_output=True, text=True)
        times.append(time.perf_counter() - t)
        if proc.returncode != 0:
            raise RuntimeError(f"{' '.join(args)} failed ({proc.returncode}):\n{proc.stderr}")
    return statistics.median(times)


def interleaved(commands: list[list[str]], repeat: int = REPEAT) -> list[tuple[float, float]]:
    """Median wall and CPU time of each command, the commands run in turn ``repeat`` times.

    A command is a list of arguments or a callable ``i -> arguments``. The CPU time is the
    process's and its children's (user and system, ``RUSAGE_CHILDREN``): on a loaded machine
    the wall time also counts the waits for a core, the CPU time not.
    """
    times = [[] for _ in commands]
    cpus = [[] for _ in commands]
    for i in range(repeat):
        for command, t, c in zip(commands, times, cpus, strict=True):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            t.append(median_wall(command(i) if callable(command) else command, repeat=1))
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            c.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    return [(statistics.median(t), statistics.median(c)) for t, c in zip(times, cpus,
                                                                         strict=True)]


def peer_python() -> str:
    """The interpreter of the Exudyn row: ``FEM_PEER_PYTHON``, or this one."""
    return os.environ.get("FEM_PEER_PYTHON") or sys.executable


def exudyn_available() -> str | None:
    """Why Exudyn cannot run in the peer's interpreter, or None."""
    proc = subprocess.run([peer_python(), "-c", "import exudyn"], capture_output=True,
                          text=True)
    if proc.returncode == 0:
        return None
    return (proc.stderr.strip().splitlines() or ["it does not import"])[-1]


def tree_command(tree: Path) -> list[str]:
    """``fem`` (``python -m fem.cli``) of the source tree ``tree``.

    ``-P``: the working directory is not put before ``PYTHONPATH`` (run from a checkout, it
    would import that checkout's fem for both trees).
    """
    return ["env", f"PYTHONPATH={tree}", sys.executable, "-P", "-m", "fem.cli"]


def main():
    caching = "off" if os.environ.get("PYTHONDONTWRITEBYTECODE") else "on"
    print(f"Start-up: median wall time of {REPEAT} cold runs (bytecode caching {caching}, "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores), target {TARGET} s")
    py = [sys.executable, "-c"]
    fem = fem_command()
    with tempfile.TemporaryDirectory() as tmp:
        deck = Path(tmp) / "one.toml"
        deck.write_text(DECK)
        median_wall(fem + ["run", str(deck), "-o", str(Path(tmp) / "warm.h5")], repeat=1)
        rows = [
            ("python -c pass", median_wall(py + ["pass"])),
            ("python -c 'import fem'", median_wall(py + ["import fem"])),
            ("python -c 'import fem.run'", median_wall(py + ["import fem.run"])),
            ("PETSc and MPI start", median_wall(py + ["from fem import _petsc; _petsc.init()"])),
        ]
        run = lambda i: fem + ["run", str(deck), "-o", str(Path(tmp) / f"{i}.h5")]  # noqa: E731
        before = os.environ.get("FEM_BEFORE")
        commands = [run]
        if before:
            here = tree_command(Path(__file__).resolve().parents[1])
            old = tree_command(Path(before).resolve())
            median_wall(old + ["run", str(deck), "-o", str(Path(tmp) / "old.h5")], repeat=1)
            commands = [
                lambda i: here + ["run", str(deck), "-o", str(Path(tmp) / f"{i}.h5")],
                lambda i: old + ["run", str(deck), "-o", str(Path(tmp) / f"old{i}.h5")]]
        why = exudyn_available()
        if why is None:
            commands.append([peer_python(), "-c", EXUDYN])
        times = interleaved(commands)
        names = ["fem run one-element deck"] + ([f"  the same, {Path(before).name}"]
                                                if before else [])
        peer = times[-1] if why is None else None
    print(f"{'command':<28} {'median s':>9} {'/ target':>9}")
    for name, t in rows:
        print(f"{name:<28} {t:>9.3f} {t / TARGET:>9.2f}")
    print(f"\nInterleaved rounds ({REPEAT}), load average {os.getloadavg()[0]:.1f}: median wall "
          "and CPU time (user + system)")
    head = "/ Exudyn" if peer else ""
    print(f"{'command':<28} {'wall s':>7} {'CPU s':>7} {head:>9} {head:>9}")
    for name, (wall, cpu) in zip(names, times, strict=False):
        ratio = f"{wall / peer[0]:>9.2f} {cpu / peer[1]:>9.2f}" if peer else ""
        print(f"{name:<28} {wall:>7.3f} {cpu:>7.3f} {ratio}")
    if peer is None:
        print(f"Exudyn: not run ({why})")
        return
    print(f"{'Exudyn import + one step':<28} {peer[0]:>7.3f} {peer[1]:>7.3f}")
    print(f"fem run / Exudyn's import + one step: {times[0][0] / peer[0]:.2f} wall, "
          f"{times[0][1] / peer[1]:.2f} CPU (target below {PEER_TARGET:g})")
