"""Where ``fem study``'s fixed time goes (issue 35): the command's phases with ``-j 1`` and
``-j 2``, seconds from its launch.

``python -m benchmarks.study_phases [dynamic|modal] [ROUNDS]``: 100 variants of the benchmark's
deck (:mod:`benchmarks.study`: ``DYNAMIC``, about 0.13 s a variant on an idle machine, or
``MODAL``, 0.03 s), each command run in a fresh process (Python's bytecode cache on, in a
temporary folder) whose fem functions are wrapped to note when they start and end: the study's
imports, the deck checks (:func:`fem.study.spec.check`), the first variant alone (for the
estimate), the pool's close and join, the summary; in the worker, its start (``_init_worker``)
and its warm-up on the first variant. From the variants' records: when each process began its
first variant of its own and ended its last. The best round (least wall time) of each is shown,
with the load average; the parallel part is what lies between the estimate and the last
variant's end.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

if __name__ == "__main__" and sys.argv[1:2] == ["--child"] or __name__ == "__mp_main__":
    # the traced command (and, imported as __mp_main__, its workers): wrap, then run
    from fem.study import command, runner, spec, summary

    T0 = float(os.environ["FEM_PHASES_T0"])
    NOTES = os.environ["FEM_PHASES_FILE"]

    def note(what: str, t0: float, t1: float) -> None:
        with open(NOTES, "a") as fh:
            fh.write(json.dumps([os.getpid(), what, t0 - T0, t1 - T0]) + "\n")

    def wrap(module, name: str, label: str) -> None:
        f = getattr(module, name)

        def timed(*args, **kwargs):
            t = time.time()
            try:
                return f(*args, **kwargs)
            finally:
                note(label, t, time.time())

        timed.__name__ = timed.__qualname__ = name       # pickled by name to the workers
        timed.__module__ = module.__name__
        setattr(module, name, timed)

    wrap(spec, "check", "deck checks")
    wrap(summary, "write", "summary")
    wrap(runner, "_init_worker", "worker start")
    wrap(runner, "_warm_up", "worker warm-up")
    wrap(command, "_estimate", "estimate")
    first = runner.serial

    def serial(todo, report=None):
        t = time.time()
        out = first(todo, report)
        note("first variant alone" if len(todo) == 1 else "the others (-j 1)", t, time.time())
        return out

    serial.__name__ = serial.__qualname__ = "serial"
    runner.serial = serial
    import multiprocessing.pool as mpp

    for name in ("close", "join"):
        wrap(mpp.Pool, name, f"pool {name}")
    if __name__ == "__main__":
        note("imports", T0, time.time())
        from fem.cli import main

        code = main(["study", *sys.argv[2:]])
        note("main returned", time.time(), time.time())
        sys.exit(code)

ORDER = ("imports", "deck checks", "worker start", "first variant alone", "worker warm-up",
         "estimate", "the others (-j 1)", "pool close", "pool join", "summary", "main returned")


def trace(deck: Path, study: Path, out: Path, jobs: int, env: dict) -> tuple[float, list, dict]:
    """Run the traced command once: its wall time, its notes, the processes' first/last."""
    shutil.rmtree(out, ignore_errors=True)
    notes = out.with_suffix(".notes")
    notes.unlink(missing_ok=True)
    t0 = time.time()
    env = {**env, "FEM_PHASES_T0": repr(t0), "FEM_PHASES_FILE": str(notes)}
    done = subprocess.run([sys.executable, "-m", "benchmarks.study_phases", "--child",
                           str(deck), str(study), "-o", str(out), "-j", str(jobs)],
                          env=env, capture_output=True, text=True)
    wall = time.time() - t0
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-2000:])
    rows = [json.loads(line) for line in notes.read_text().splitlines()]
    procs: dict[int, list] = {}
    for p in out.glob("variant_*.json"):
        r = json.loads(p.read_text())
        procs.setdefault(r["process"], []).append(r)
    spans = {pid: (min(r["started"] for r in rs) - t0,
                   max(r["started"] + r["wall_time"] for r in rs) - t0, len(rs))
             for pid, rs in procs.items()}
    return wall, rows, spans


def main(kind: str = "dynamic", rounds: int = 3) -> None:
    from benchmarks.study import DYNAMIC, MODAL, bytecode_env, study_file

    root = Path(__file__).resolve().parent.parent
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        deck = tmp / "deck.toml"
        deck.write_text(DYNAMIC if kind == "dynamic" else MODAL)
        study = Path(study_file(tmp / "study.toml", "sections.bar.h",
                                [0.005 + 0.0002 * i for i in range(100)]))
        env = bytecode_env(tmp)
        env["PYTHONPATH"] = os.pathsep.join([str(root), env.get("PYTHONPATH", "")])
        trace(deck, study, tmp / "warm", 2, env)          # bytecode and compiled kernels
        best = {}
        for k in range(rounds):
            for jobs in ((1, 2) if k % 2 == 0 else (2, 1)):
                load = os.getloadavg()[0]
                got = trace(deck, study, tmp / f"j{jobs}", jobs, env)
                if jobs not in best or got[0] < best[jobs][0][0]:
                    best[jobs] = (got, load)
        print(f"fem study phases: 100 {kind} variants, best of {rounds}, seconds from the launch")
        for jobs in (1, 2):
            (wall, rows, spans), load = best[jobs]
            print(f"\n-j {jobs}: wall {wall:.2f} s (load {load:.1f})")
            main_pid = next(pid for pid, label, _, _ in rows if label == "imports")
            print(f"  {'phase':<22} {'begins':>7} {'ends':>7} {'takes':>7}")
            for what in ORDER:
                for pid, label, a, b in rows:
                    if label == what:
                        who = "" if pid == main_pid else " (worker)"
                        print(f"  {what:<22} {a:7.3f} {b:7.3f} {b - a:7.3f}{who}")
            for pid, (a, b, n) in sorted(spans.items(), key=lambda s: s[1][0]):
                who = "fem process" if pid == main_pid else "worker"
                print(f"  {who:<12} {n:>3} variants: the first begun {a:7.3f}, the last ended "
                      f"{b:7.3f}")


if __name__ == "__main__" and sys.argv[1:2] != ["--child"]:
    main(*(sys.argv[1:2] or ["dynamic"]), *(int(a) for a in sys.argv[2:3]))
