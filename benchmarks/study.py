"""Studies (issue 35): per-variant overhead of ``fem study`` against ``fem run`` in a shell loop,
and ``-j 2`` (this process and a worker) against ``-j 1``.

1. Overhead: the one-element cantilever of :mod:`benchmarks.startup` (a static step whose solve
   takes well under a millisecond, so a variant's wall time is its overhead), ``N`` variants of
   its modulus. A shell loop runs ``fem run`` once per variant deck (a new process each: Python,
   imports, PETSc's and MPI's start); ``fem study -j 1`` runs them in one process. The study's
   per-variant figure is its marginal cost, ``(T(N) - T(1)) / (N - 1)``: the one start-up is
   not a per-variant cost. Goal (issue 35): at least 10x less per variant than the loop.
2. Workers: ``VARIANTS`` variants of a small modal deck (the 8-element cantilever of
   tests/test_study.py, about 0.03 s a variant) and of a small dynamic one (:data:`DYNAMIC`,
   about 0.1 s) with ``-j 1`` and ``-j 2`` (goal 1.8x on 2 free cores). The speed-up is
   bounded by the cores other processes leave, so each round also runs the machine's ceiling:
   two independent ``fem study -j 1`` of the same variants at once (``pair``: the wall time
   until both are through). ``pair / (-j 1)`` is how much two processes slow each other here
   (1 on two free cores), and ``2 (-j 1) / pair`` the most any 2 processes can gain, which the
   ``-j 2`` speed-up is reported against. ``ROUNDS`` rounds, the three runs interleaved in each
   (in reverse order every other round), the best of each kind taken and the median of the
   rounds' ratios; the load average is printed with every round, and first the CPU
   a busy loop gets alone and two at once (:func:`session_share`). Beside the wall
   times: the sums of the variants' CPU and wall times (their records; equal CPU sums say the
   workers add no work per variant, a wall sum well above the CPU sum that the cores were taken
   by others), and the steady rate, variants per second from the start of the second variant
   to the end of the last (start-up and the first variant, run alone for the estimate, left out).
   Where this environment turns Python's bytecode cache off (``PYTHONDONTWRITEBYTECODE``, so
   every process compiles fem's modules from source at import, about 0.4 s of CPU), the no-XDMF
   rounds run a second time with it on, as a user's Python has it: the commands without that
   variable and with ``PYTHONPYCACHEPREFIX`` a temporary folder, written by one study first; the
   output says which.
"""

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks.startup import DECK, fem_command

N = 20
VARIANTS = 100
ROUNDS = 3

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


def study_file(path: Path, key: str, values: list[float], xdmf: bool = False) -> str:
    path.write_text("[study]\n" + "xdmf = true\n" * xdmf
                    + f"[[study.parameters]]\nkey = \"{key}\"\nvalues = {values}\n")
    return str(path)


def records(folder: Path, launched: float, ended: float) -> tuple[float, ...]:
    """From the variants' records of a study launched and ended at these epoch times: the sums
    of their CPU and wall times (CPU: of the process running each), the steady rate (variants
    after the first per second, from the second's start to the last's end), the start-up (launch
    to the first variant's start) and the end (the last variant's end to the exit)."""
    recs = sorted((json.loads(p.read_text()) for p in folder.glob("variant_*.json")),
                  key=lambda r: r["index"])
    rest = recs[1:]
    last = max(r["started"] + r["wall_time"] for r in recs)
    span = max(r["started"] + r["wall_time"] for r in rest) - min(r["started"] for r in rest)
    return (sum(r["cpu_time"] for r in recs), sum(r["wall_time"] for r in recs),
            len(rest) / span, recs[0]["started"] - launched, ended - last)


#: a busy loop of ``WINDOW`` seconds of wall time that prints the CPU seconds it got
WINDOW = 3.0
BUSY = (f"import time\nt = time.time()\nwhile time.time() - t < {WINDOW}: pass\n"
        "print(time.process_time())")

#: the same cantilever, co-rotational, 30 energy-conserving time steps under a tip load: a small
#: variant of about 0.1 s (where the modal one takes 0.03 s, so the study's fixed start and end,
#: about 1 s, bound the -j 2 speed-up of 100 of them near 1.5x by Amdahl's law)
DYNAMIC = MODAL.replace('formulation = "linear"', 'formulation = "corotational"').split(
    "[[steps]]")[0] + """[[loads]]
name = "tip"
nodes = [2]
force = [0.0, -50.0]
[[steps]]
name = "swing"
type = "dynamic"
integrator = "energy_conserving"
time_step = 1e-3
duration = 0.03
loads = ["tip"]
"""


def session_share() -> tuple[float, float]:
    """The CPU seconds one busy process gets in ``WINDOW`` s, and two of them at once.

    Both run in this process's session, as a study's workers do: where Linux shares the cores
    between sessions (autogroup scheduling, ``/proc/sys/kernel/sched_autogroup_enabled``), two
    processes of one session get no more than one when other sessions keep the cores busy.
    """
    def busy(n: int) -> float:
        procs = [subprocess.Popen([sys.executable, "-c", BUSY], stdout=subprocess.PIPE,
                                  text=True) for _ in range(n)]
        return sum(float(p.communicate()[0]) for p in procs)

    return busy(1), busy(2)


def together(commands: list[list[str]], env: dict | None = None) -> float:
    """Wall time of ``commands`` started at once, until the last is through."""
    t = time.perf_counter()
    procs = [subprocess.Popen(c, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                              env=env) for c in commands]
    for c, p in zip(commands, procs, strict=True):
        _, err = p.communicate()
        if p.returncode != 0:
            raise RuntimeError(f"{c} failed ({p.returncode}):\n{err}")
    return time.perf_counter() - t


def wall(args: list[str], shell: bool = False, env: dict | None = None) -> float:
    t = time.perf_counter()
    proc = subprocess.run(args, capture_output=True, text=True, shell=shell, env=env)
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

        workers(fem, tmp)
        if os.environ.get("PYTHONDONTWRITEBYTECODE"):
            workers(fem, tmp, bytecode=True)
        workers(fem, tmp, xdmf=True)
        workers(fem, tmp, dynamic=True, bytecode=bool(os.environ.get("PYTHONDONTWRITEBYTECODE")))


def bytecode_env(tmp: Path) -> dict:
    """This environment with Python's bytecode cache on, written under ``tmp`` (never beside
    the sources): ``PYTHONDONTWRITEBYTECODE`` removed, ``PYTHONPYCACHEPREFIX`` set."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(tmp / "pycache")
    return env


def workers(fem: list[str], tmp: Path, rounds: int = ROUNDS, xdmf: bool = False,
            bytecode: bool = False, dynamic: bool = False) -> dict:
    """Part 2: ``-j 1``, ``-j 2`` and the pair of ``-j 1``, interleaved, best of ``rounds``;
    ``xdmf``: the variants write their XDMF files (as all did before studies left them out);
    ``bytecode``: the commands run with Python's bytecode cache on (:func:`bytecode_env`,
    written by a study run first), as a user's Python has it, where this environment may
    turn it off (``PYTHONDONTWRITEBYTECODE``: every process then compiles fem's modules);
    ``dynamic``: the variants are :data:`DYNAMIC`'s (about 0.1 s each), not the modal ones."""
    import shutil

    modal = tmp / ("dynamic.toml" if dynamic else "modal.toml")
    modal.write_text(DYNAMIC if dynamic else MODAL)
    hs = [0.005 + 0.0002 * i for i in range(VARIANTS)]
    st = study_file(tmp / "sm.toml", "sections.bar.h", hs, xdmf)
    env = bytecode_env(tmp) if bytecode else None

    def study(out: str, jobs: int) -> list[str]:
        return fem + ["study", str(modal), st, "-o", str(tmp / out), "-j", str(jobs)]

    cache = bytecode or not os.environ.get("PYTHONDONTWRITEBYTECODE")
    print(f"\n2. {VARIANTS} variants of an 8-element "
          + ("dynamic deck (30 time steps)" if dynamic else "modal deck")
          + (", xdmf = true" if xdmf else ", no XDMF (the default)")
          + f", {rounds} rounds ({os.cpu_count()} cores; Python's bytecode cache "
          + ("on" + (" (PYTHONDONTWRITEBYTECODE of this environment removed, "
                     "PYTHONPYCACHEPREFIX a temporary folder)" if bytecode else "")
             if cache else "off (PYTHONDONTWRITEBYTECODE): every process compiles fem") + ")")
    if bytecode:
        shutil.rmtree(tmp / "warm", ignore_errors=True)
        wall(study("warm", 2), env=env)             # writes the bytecode of every process
    one, two = session_share()
    try:
        with open("/proc/sys/kernel/sched_autogroup_enabled") as fh:
            autogroup = "on" if fh.read().strip() == "1" else "off"
    except OSError:
        autogroup = "unknown"
    print(f"CPU s a busy loop gets in {WINDOW:g} s of wall: one process {one:.2f}, two at once "
          f"{two:.2f} ({two / one:.2f}x; autogroup scheduling {autogroup}; load "
          f"{os.getloadavg()[0]:.1f})")
    print(f"{'round':<6} {'load':>5} {'-j 1 s':>8} {'-j 2 s':>8} {'pair s':>8} "
          f"{'speed-up':>9} {'ceiling':>8}")
    best = {"j1": np.inf, "j2": np.inf, "pair": np.inf}
    stats = {}
    ratios = []
    for k in range(rounds):
        load = os.getloadavg()[0]
        for out in ("j1", "j2", "pa", "pb"):
            shutil.rmtree(tmp / out, ignore_errors=True)
        t, at = {}, {}
        runs = [("j1", lambda: wall(study("j1", 1), env=env)),
                ("j2", lambda: wall(study("j2", 2), env=env)),
                ("pair", lambda: together([study("pa", 1), study("pb", 1)], env))]
        for name, run in runs[::-1] if k % 2 else runs:     # a drifting load favours none
            launched = time.time()
            t[name] = run()
            at[name] = (launched, time.time())
        for name in best:
            if t[name] < best[name]:
                best[name] = t[name]
                for folder in {"j1": ("j1",), "j2": ("j2",), "pair": ("pa", "pb")}[name]:
                    stats[folder] = records(tmp / folder, *at[name])
        ratios.append((t["j1"] / t["j2"], 2 * t["j1"] / t["pair"]))
        print(f"{k + 1:<6} {load:>5.1f} {t['j1']:>8.2f} {t['j2']:>8.2f} {t['pair']:>8.2f} "
              f"{ratios[-1][0]:>8.2f}x {ratios[-1][1]:>7.2f}x")
    print(f"\n{'best of ' + str(rounds):<22} {'wall s':>7} {'start s':>8} {'end s':>6} "
          f"{'variants: CPU s':>16} {'wall s':>7} {'steady /s':>10}")
    for name, t, folder in (("fem study -j 1", best["j1"], "j1"),
                            ("fem study -j 2", best["j2"], "j2"),
                            ("pair of -j 1: a", best["pair"], "pa"),
                            ("pair of -j 1: b", best["pair"], "pb")):
        cpu, w, rate, start, end = stats[folder]
        print(f"{name:<22} {t:>7.2f} {start:>8.2f} {end:>6.2f} {cpu:>16.2f} {w:>7.2f} "
              f"{rate:>10.2f}")
    speed = best["j1"] / best["j2"]
    ceiling = 2 * best["j1"] / best["pair"]
    steady = stats["j2"][2] / stats["j1"][2]
    steady_ceiling = (stats["pa"][2] + stats["pb"][2]) / stats["j1"][2]
    print(f"speed-up -j 2 / -j 1: {speed:.2f}x (goal 1.8x on 2 free cores); the machine's "
          f"ceiling 2 (-j 1) / pair: {ceiling:.2f}x (two processes slow each other "
          f"{best['pair'] / best['j1']:.2f}x); -j 2 reaches {speed / ceiling:.0%} of it")
    mid = np.median(np.array(ratios), axis=0)
    print(f"median of the rounds: speed-up {mid[0]:.2f}x, ceiling {mid[1]:.2f}x; steady rate "
          f"-j 2 / -j 1: {steady:.2f}x, the pair's together {steady_ceiling:.2f}x; load average "
          f"{os.getloadavg()[0]:.1f} at the end")
    return {"speed_up": speed, "ceiling": ceiling, "steady": steady, "median": tuple(mid),
            "steady_ceiling": steady_ceiling, "busy_two_over_one": two / one, **best}


def only_workers(rounds: int = ROUNDS) -> None:
    """Part 2 alone: ``python -m benchmarks.study workers [ROUNDS]``."""
    print(f"Studies: load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores at the start")
    with tempfile.TemporaryDirectory() as tmp:
        workers(fem_command(), Path(tmp), rounds)
        if os.environ.get("PYTHONDONTWRITEBYTECODE"):
            workers(fem_command(), Path(tmp), rounds, bytecode=True)
        workers(fem_command(), Path(tmp), rounds, xdmf=True)
        workers(fem_command(), Path(tmp), rounds, dynamic=True,
                bytecode=bool(os.environ.get("PYTHONDONTWRITEBYTECODE")))


if __name__ == "__main__":
    if sys.argv[1:2] == ["workers"]:
        sys.exit(only_workers(*(int(a) for a in sys.argv[2:3])))
    sys.exit(main())
