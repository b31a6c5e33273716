"""Studies (issue 35): per-variant overhead of ``fem study`` against ``fem run`` in a shell loop,
and 2 worker processes against 1.

1. Overhead: the one-element cantilever of :mod:`benchmarks.startup` (a static step whose solve
   takes well under a millisecond, so a variant's wall time is its overhead), ``N`` variants of
   its modulus. A shell loop runs ``fem run`` once per variant deck (a new process each: Python,
   imports, PETSc's and MPI's start); ``fem study -j 1`` runs them in one process. The study's
   per-variant figure is its marginal cost, ``(T(N) - T(1)) / (N - 1)``: the one start-up is
   not a per-variant cost. Goal (issue 35): at least 10x less per variant than the loop.
2. Workers: ``VARIANTS`` variants of a small modal deck (the 8-element cantilever of
   tests/test_study.py) with ``-j 1`` and ``-j 2``; the speed-up (goal 1.8x on 2 free cores) is
   bounded by the cores other processes leave: the load average is printed before and after,
   and the sums of the variants' CPU and wall times (their records): equal CPU sums say the
   workers add no work per variant, and a wall sum well above the CPU sum says the cores were
   taken by others.
"""

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.startup import DECK, fem_command

N = 20
VARIANTS = 100

#: the 8-element cantilever of tests/test_study.py (which imports it): 3 modes, consistent mass
MODAL = """\
[model]
dim = 2
title = "cantilever for a study"
[[materials]]
name = "steel"
E = 2.0e11
nu = 0.3
density = 7800.0
[[sections]]
name = "bar"
shape = "rectangle"
b = 0.02
h = 0.01
[nodes]
coordinates = [[0.0, 0.0], [1.0, 0.0]]
[[elements]]
name = "beam"
type = "beam"
formulation = "linear"
material = "steel"
section = "bar"
connectivity = [[1, 2]]
divisions = 8
rotary_inertia = false
[[supports]]
nodes = [1]
fixed = ["all"]
[[steps]]
name = "modes"
type = "modal"
modes = 3
mass = "consistent"
"""


def study_file(path: Path, key: str, values: list[float]) -> str:
    path.write_text(f"[study]\n[[study.parameters]]\nkey = \"{key}\"\nvalues = {values}\n")
    return str(path)


def records(folder: Path) -> tuple[float, float]:
    """The sums of the variants' CPU and wall times (their records; CPU: the running process)."""
    recs = [json.loads(p.read_text()) for p in folder.glob("variant_*.json")]
    return sum(r["cpu_time"] for r in recs), sum(r["wall_time"] for r in recs)


def wall(args: list[str], shell: bool = False) -> float:
    t = time.perf_counter()
    proc = subprocess.run(args, capture_output=True, text=True, shell=shell)
    if proc.returncode != 0:
        raise RuntimeError(f"{args} failed ({proc.returncode}):\n{proc.stderr}")
    return time.perf_counter() - t


def main():
    fem = fem_command()
    load0 = os.getloadavg()[0]
    print(f"Studies: load average {load0:.1f} on {os.cpu_count()} cores at the start")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        base = tmp / "one.toml"
        base.write_text(DECK)
        moduli = [210000.0 * (1 + 0.01 * i) for i in range(N)]
        for i, e in enumerate(moduli):
            (tmp / f"deck_{i}.toml").write_text(DECK.replace("E = 210000.0", f"E = {e}"))
        wall(fem + ["run", str(base), "-o", str(tmp / "warm.h5")])      # bytecode, caches
        loop = " ; ".join(f"{' '.join(fem)} run {tmp}/deck_{i}.toml -o {tmp}/loop_{i}.h5 "
                          f"> /dev/null || exit 1" for i in range(N))
        t_loop = wall(["bash", "-c", loop])
        one = study_file(tmp / "s1.toml", "materials.steel.E", moduli[:1])
        many = study_file(tmp / "sn.toml", "materials.steel.E", moduli)
        t1 = wall(fem + ["study", str(base), one, "-o", str(tmp / "o1")])
        tn = wall(fem + ["study", str(base), many, "-o", str(tmp / "on")])
        per_loop = t_loop / N
        per_study = (tn - t1) / (N - 1)
        print(f"\n1. per-variant overhead, one-element static deck, {N} variants")
        print(f"{'':<38} {'wall s':>8} {'per variant s':>14}")
        print(f"{'fem run in a shell loop':<38} {t_loop:>8.2f} {per_loop:>14.4f}")
        print(f"{'fem study -j 1, 1 variant':<38} {t1:>8.2f}")
        print(f"{f'fem study -j 1, {N} variants':<38} {tn:>8.2f} {per_study:>14.4f}")
        print(f"ratio loop / study per variant: {per_loop / per_study:.1f}x (goal >= 10x)")

        modal = tmp / "modal.toml"
        modal.write_text(MODAL)
        hs = [0.005 + 0.0002 * i for i in range(VARIANTS)]
        st = study_file(tmp / "sm.toml", "sections.bar.h", hs)
        j1 = wall(fem + ["study", str(modal), st, "-o", str(tmp / "j1"), "-j", "1"])
        j2 = wall(fem + ["study", str(modal), st, "-o", str(tmp / "j2"), "-j", "2"])
        load1 = os.getloadavg()[0]
        print(f"\n2. {VARIANTS} variants of an 8-element modal deck")
        print(f"{'':<38} {'wall s':>8} {'variants: CPU s':>16} {'wall s':>8}")
        for name, t, folder in (("fem study -j 1", j1, "j1"), ("fem study -j 2", j2, "j2")):
            cpu, w = records(tmp / folder)
            print(f"{name:<38} {t:>8.2f} {cpu:>16.2f} {w:>8.2f}")
        print(f"speed-up -j 2 / -j 1: {j1 / j2:.2f}x (goal 1.8x on 2 free cores); load average "
              f"{load0:.1f} at the start, {load1:.1f} at the end, {os.cpu_count()} cores")


if __name__ == "__main__":
    sys.exit(main())
