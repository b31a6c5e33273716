"""Running a study's variants: in-process, in worker processes, or over MPI ranks.

Each variant runs in-process through :func:`fem.run.run` into ``<out>/variant_0007.h5``, without
XDMF files or the views they name unless the study says ``xdmf = true`` (every other dataset as
``fem run`` writes it; the views took 2/3 of a small modal variant's time); the
variant's values go to the file's root attributes (``study_variant``, ``study_keys`` and one
``study:<key path>`` per parameter), and its record (status, exit code, message, when it
started (``started``, seconds since the epoch), the process that ran it (``process``, its
id), wall and CPU time of this process, the named outputs) to ``<out>/variant_0007.json``,
written last under a temporary name and renamed. The command (:mod:`fem.study.command`) runs
the first variant alone in its own process (rank 0 under MPI) for the estimated time, then the
others:

* ``jobs = 1``: in this process, one after another;
* ``jobs > 1``: ``jobs`` processes, this one and ``jobs - 1`` workers started by the
  ``forkserver`` method from a server that imported fem once (:func:`pool`; the server starts
  first thing in the command, its imports beside the deck checks). Each worker starts PETSc once
  and runs the variants it is handed in-process; this process takes variants beside them from
  the end of the first, whatever the workers' start-up still takes, each process the next one
  as it is free (which process runs a variant changes nothing in its results). Workers ignore
  SIGINT: a Ctrl-C reaches the parent, which terminates them and keeps what finished;
* under an MPI launcher (``mpiexec -n N fem study ...``, :func:`launched`): rank ``r`` runs the
  variants ``r, r + N, ...`` after the first, which rank 0 runs alone (a static split: the same
  order whatever the timing), and rank 0 writes the summary once all ranks are through.

BLAS and OpenMP threads are pinned to one per process unless the user set them
(:func:`pin_threads`): N processes on N cores, not N times the cores' threads, and the same bits
from any process.

A variant that fails (no convergence, a model error that only shows when it runs) is recorded
with its exit code and message; the study goes on. ``resume`` skips the variants whose record says
done with a complete results file (every step of the deck has its end state,
``/steps/<s>/state``, which the results writer adds when the step is through) or failed with an
error of the variant itself (not an interrupt); any other is run again, its partial files removed.
"""

from __future__ import annotations

import glob
import json
import logging
import os
import signal
import sys
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from fem import interrupt
from fem.errors import FemError, Interrupted

if TYPE_CHECKING:       # spec imports the deck checks, which the fork server must not wait for
    from fem.study.spec import Output, Study

log = logging.getLogger(__name__)

THREAD_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
               "BLIS_NUM_THREADS", "NUMBA_NUM_THREADS")
INTERRUPTS = (130, 143)


class ResultsFolderError(FemError):
    """The study's results folder cannot be used as asked (exit code 2, like any bad input)."""

    exit_code = 2


@dataclass(frozen=True)
class Task:
    """What a worker needs to run one variant (picklable)."""

    index: int
    data: dict
    base_dir: str
    text: str
    path: str
    out: str
    keys: tuple
    values: tuple
    outputs: tuple[Output, ...]
    steps: tuple[str, ...]
    xdmf: bool = False


def variant_path(out_dir: str, i: int) -> str:
    """``<out>/variant_0007.h5``."""
    return os.path.join(out_dir, f"variant_{i:04d}.h5")


def record_path(h5: str) -> str:
    """The record beside a variant's results file: ``variant_0007.json``."""
    return os.path.splitext(h5)[0] + ".json"


def launched() -> bool:
    """Whether an MPI launcher started this process (:func:`fem._petsc.launched`)."""
    from fem import _petsc

    return _petsc.launched()


def pin_threads() -> None:
    """One BLAS/OpenMP thread per process where the user set none (before numpy loads).

    Workers inherit it. In every mode, ``-j 1`` too: a variant's results are then the same bits
    whichever process runs it (BLAS's threads change the last bits), and a small variant loses
    nothing (the 8-element modal variant of benchmarks/study.py: the same wall time, where its
    spare BLAS thread spun a second core, half of the CPU time).
    """
    for v in THREAD_VARS:
        if v == "NUMBA_NUM_THREADS" and "numba" in sys.modules:
            # numba read it at import; once its threads run, a new value makes its next
            # compile fail ("Cannot set NUMBA_NUM_THREADS ..."): a study run from a Python
            # session that used numba keeps numba's count
            continue
        os.environ.setdefault(v, "1")


def tasks(study: Study, out_dir: str) -> list[Task]:
    """Every variant of ``study`` as a :class:`Task` writing into ``out_dir``."""
    steps = tuple(s["name"] for s in study.base.get("steps", ()) if isinstance(s, dict))
    return [Task(i, study.data(i), study.base_dir, study.text, study.path,
                 variant_path(out_dir, i), tuple(study.keys), study.variants[i],
                 tuple(study.outputs), steps, study.xdmf) for i in range(len(study.variants))]


def complete(h5: str, steps: tuple[str, ...]) -> bool:
    """Whether results file ``h5`` holds the end state of every step (a finished run)."""
    import h5py

    try:
        with h5py.File(h5, "r") as f:
            return all(f"steps/{s}/state" in f for s in steps) and "study_variant" in f.attrs
    except (OSError, RuntimeError):
        return False


def read_record(h5: str) -> dict | None:
    """The record of the variant whose results file is ``h5`` (None: none, or unreadable)."""
    try:
        with open(record_path(h5), encoding="utf-8") as fh:
            return json.load(fh)
    except (OSError, ValueError):
        return None


def finished(task: Task) -> bool:
    """Whether ``task`` needs no run on ``--resume``."""
    rec = read_record(task.out)
    if rec is None:
        return False
    if rec.get("status") == "failed":
        return rec.get("exit_code") not in INTERRUPTS
    return rec.get("status") == "done" and complete(task.out, task.steps)


def _remove_partial(h5: str) -> None:
    """Remove what an earlier, unfinished run of this variant left (the study owns the folder)."""
    stem = os.path.splitext(h5)[0]
    for p in [h5, record_path(h5), *glob.glob(glob.escape(stem) + "*.xdmf")]:
        try:
            os.unlink(p)
        except FileNotFoundError:
            pass


def _write_json(path: str, data: dict) -> None:
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=1, default=str)
    os.replace(tmp, path)


def _mark(task: Task) -> None:
    """The variant's values in its results file's root attributes."""
    import h5py

    with h5py.File(task.out, "a") as f:
        f.attrs["study_keys"] = list(task.keys)
        for k, v in zip(task.keys, task.values, strict=True):
            f.attrs[f"study:{k}"] = v if isinstance(v, (int, float)) else str(v)
        f.attrs["study_variant"] = task.index


def run_variant(task: Task) -> dict:
    """Run one variant in this process; write and return its record.

    Failures of the variant are recorded (exit code as ``fem run`` gives it); an interrupt
    (:class:`~fem.errors.Interrupted`) is recorded too and raised again.
    """
    from fem.io import deck as deck_io
    from fem.run import run

    started, cpu = time.perf_counter(), time.process_time()
    rec = {"index": task.index, "values": dict(zip(task.keys, task.values, strict=True)),
           "started": time.time(), "process": os.getpid(),
           "status": "failed", "exit_code": 70, "message": "", "wall_time": 0.0,
           "cpu_time": 0.0, "outputs": {}}
    _remove_partial(task.out)
    stop = None
    try:
        deck = deck_io.from_dict(task.data, task.base_dir, task.text, task.path)
        run(deck, task.out, paraview=task.xdmf)
        _mark(task)
        rec.update(status="done", exit_code=0)
    except Interrupted as err:
        rec.update(exit_code=err.exit_code, message=str(err))
        stop = err
    except FemError as err:
        rec.update(exit_code=err.exit_code, message=str(err))
    except Exception as err:  # noqa: BLE001 - a bug: recorded, the study goes on
        log.debug("variant %d", task.index, exc_info=True)
        rec.update(exit_code=70, message=f"internal error: {type(err).__name__}: {err}")
    rec["wall_time"] = time.perf_counter() - started
    rec["cpu_time"] = time.process_time() - cpu
    if rec["status"] == "done":
        rec["outputs"], errors = read_outputs(task.out, task.outputs)
        if errors:
            rec["message"] = "; ".join(errors)
    if stop is None or os.path.isdir(os.path.dirname(task.out)):
        _write_json(record_path(task.out), rec)
    if stop is not None:
        raise stop
    return rec


def read_outputs(h5: str, outputs: tuple[Output, ...]) -> tuple[dict, list[str]]:
    """The named outputs of results file ``h5`` (NaN where one cannot be read, with why)."""
    import h5py

    from fem.study.spec import scalar

    values, errors = {}, []
    with h5py.File(h5, "r") as f:
        for o in outputs:
            try:
                values[o.name] = scalar(f, o)
            except (KeyError, ValueError, IndexError, TypeError) as err:
                values[o.name] = float("nan")
                errors.append(f"study.outputs.{o.name}: {err}")
    return values, errors


# --- one process --------------------------------------------------------------------------------
def serial(todo: list[Task], report: Callable[[dict], None] | None = None) -> list[dict]:
    """Run ``todo`` here, one after another; stops at an interrupt, keeping what finished."""
    out = []
    for t in todo:
        interrupt.check()
        rec = run_variant(t)
        out.append(rec)
        if report is not None:
            report(rec)
    return out


# --- worker processes ---------------------------------------------------------------------------
#: what the fork server imports once, before it forks the workers (no PETSc: MPI must not start
#: before a fork): fem's run and deck checks, and what the first variant of a small model
#: imported besides (scipy's sparse and dense solvers, the eigen-solvers), else each worker's
PRELOAD = ["fem.study.runner", "fem.run", "fem.study.spec", "numpy", "h5py", "scipy.linalg",
           "scipy.sparse.linalg", "fem.solvers.eigen.lanczos"]

#: variants handed to a worker ahead of the one it runs, so that it never waits for this process
#: (busy with a variant of its own) to hand it the next; one it has not begun when this process
#: runs out of variants this process takes back (:meth:`_Feed.take`)
AHEAD = 2

#: in a worker: which variants of the pool's list a process has begun (shared with this process,
#: :class:`_Feed`; set by :func:`_init_worker`)
_claims = None


def start_server() -> None:
    """Start the fork server (its imports) now, if not running yet.

    Its imports take about as long as this process's start-up (the deck checks), and the pool
    waits for them before its first worker starts: started first, they run beside it.
    """
    import multiprocessing as mp
    from multiprocessing import forkserver

    pin_threads()                        # the server and the workers inherit it
    mp.get_context("forkserver").set_forkserver_preload(PRELOAD)
    forkserver.ensure_running()


def _init_worker(petsc_args: list[str], claims=None) -> None:
    """A worker: SIGINT is the parent's to handle; PETSc deferred; numpy's warnings off.

    PETSc starts when a variant first needs it (:func:`fem._petsc.defer`), as in this process:
    the worker's warm-up on the first variant (:func:`_warm_up`, beside this process's run of it
    for the estimate) starts it for a model that needs it, before the worker is handed a variant
    of its own; a model that needs none (small dynamic and static ones, solved by the banded or
    dense solvers) never pays it (MPI's start, 0.15-0.6 s, delayed the warm-up, which ended up to
    0.3 s after this process's first variant: the worker's first real variant started late).
    PETSc options on the command line start it at once, as the command does (a bad one is
    reported there first).
    """
    global _claims
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    pin_threads()
    _claims = claims
    from fem import _petsc

    _petsc.defer(petsc_args)
    if petsc_args:
        _petsc.init()
    warnings.simplefilter("ignore", RuntimeWarning)


def worker_state() -> dict:
    """What this process has started (PETSc, numba): for tests of what a worker pays."""
    import sys

    from fem import _petsc

    return {"petsc": _petsc.started(), "numba": "numba" in sys.modules, "pid": os.getpid()}


def _in_worker(task: Task, slot: int | None = None) -> dict | None:
    """A worker's :func:`run_variant` (handed by name: a worker runs its own module's).

    ``slot``: the variant's place in the pool's list; None, without running it, when another
    process has begun it (this process took it back, :meth:`_Feed.take`).
    """
    if slot is not None and _claims is not None and not claim(_claims, slot):
        return None
    return run_variant(task)


def claim(claims, slot: int) -> bool:
    """Mark variant ``slot`` begun in shared array ``claims``; False if a process had before.

    This process and the workers claim each variant as they begin it, so that one handed to a
    worker can be taken back and is run once.
    """
    with claims.get_lock():
        if claims[slot]:
            return False
        claims[slot] = 1
        return True


def _warm_up(task: Task) -> None:
    """A worker runs ``task`` (the first variant, written to a scratch folder) and drops it.

    While this process runs the first variant alone for the estimate, no other variant may
    start; a worker would idle, then pay its own one-off costs (compiled kernels loaded, the
    solvers' imports) in its first variant. Run on the same deck meanwhile, they are paid on a
    core that was free. Nothing of it is kept: the records and results are the real runs'.
    """
    try:
        run_variant(task)
    except Exception:  # noqa: BLE001 - a warm-up's failure is the real run's to report
        log.debug("warm-up of variant %d", task.index, exc_info=True)


class _Feed:
    """The variants not yet taken, shared by this process and the workers' hand-out.

    This process takes the next one between its own variants (:meth:`take`); a worker's is
    handed to it from the pool's result thread, as each of its variants comes back
    (:meth:`hand`), keeping :data:`AHEAD` per worker queued. Records come back through
    :attr:`done` to this process's thread, which reports them. With ``claims`` (a shared array,
    an entry per variant, :func:`claim`), this process, out of variants, takes back those handed
    to a worker that it has not begun, the last handed first: at the end, it would otherwise wait
    idle while the worker runs its queue (up to :data:`AHEAD` variants, one on average).
    """

    def __init__(self, todo: list[Task], claims=None):
        import queue
        import threading

        self.pending = list(reversed(list(enumerate(todo))))    # pop() takes the next
        self.handed: list[tuple[int, Task]] = []    # handed to the workers, in order
        self.claims = claims
        self.lock = threading.Lock()
        self.done: queue.SimpleQueue = queue.SimpleQueue()
        self.out = 0                                # handed to the workers, not back yet
        self.workers = None
        self.stopped = False

    def take(self) -> Task | None:
        """The next variant for this process (None: none left, or stopped)."""
        with self.lock:
            if self.stopped:
                return None
            if self.pending:
                slot, task = self.pending.pop()
                if self.claims is not None:
                    claim(self.claims, slot)        # not handed out: no one else claims it
                return task
            while self.claims is not None and self.handed:
                slot, task = self.handed.pop()
                if claim(self.claims, slot):
                    return task
            return None

    def hand(self, count: int = 1) -> None:
        """Hand up to ``count`` more variants to the workers."""
        for _ in range(count):
            with self.lock:
                if not self.pending or self.stopped:
                    return
                slot, task = self.pending.pop()
                self.handed.append((slot, task))
                self.out += 1
            try:
                self.workers.apply_async(_in_worker, (task, slot), callback=self._back,
                                         error_callback=self._failed)
            except ValueError:                  # the pool was terminated meanwhile
                return

    def _back(self, rec: dict | None) -> None:             # in the pool's result thread
        if rec is not None:                                # None: taken back, run here
            self.done.put(rec)                             # before the count: none is missed
        with self.lock:
            self.out -= 1
        self.hand()

    def _failed(self, err: BaseException) -> None:         # a bug, or a worker's crash
        self.done.put(err)
        with self.lock:
            self.out -= 1
            self.stopped = True

    def outstanding(self) -> int:
        with self.lock:
            return self.out


def pool(todo: list[Task], jobs: int, report: Callable[[dict], None] | None = None,
         petsc_args: list[str] = (), before: Callable[[], None] | None = None,
         warm: Task | None = None) -> list[dict]:
    """Run ``todo`` in ``jobs`` processes: this one and ``jobs - 1`` workers.

    The workers are forked by the fork server, which imported fem once.

    ``before()`` runs in this process first, while the pool is made (in a thread: making it
    waits for the server's imports) and its workers start; no variant of ``todo`` is handed to
    them before it is through; meanwhile each worker runs ``warm`` (the variant ``before()``
    runs) into a scratch folder, removed at the end (:func:`_warm_up`). Then this process and
    the workers take the variants in order as
    each is free: this one at once, whatever the workers' start-up (the server's imports, PETSc)
    still takes, and none of them idle while variants wait; at the end this process takes back
    the variants handed to a worker that it has not begun (:class:`_Feed`).

    At a signal (:func:`fem.interrupt.pending`) the workers are terminated and
    :class:`~fem.errors.Interrupted` is raised; the records written so far stay.
    """
    import dataclasses
    import multiprocessing as mp
    import queue
    import shutil
    import tempfile
    import threading

    start_server()                       # at once if the command started it before
    scratch = tempfile.mkdtemp(prefix="fem-study-warm-") if warm is not None else None
    ctx = mp.get_context("forkserver")
    out: list[dict] = []
    feed = _Feed(todo, ctx.Array("b", max(len(todo), 1)))
    ready = threading.Event()           # before() is through: variants may go to the workers

    def make() -> None:
        """Make the pool, then hand the workers their first variants once ``before()`` is through.

        In a thread: making the pool waits for the server's imports, and this process runs
        variants meanwhile.
        """
        try:
            feed.workers = ctx.Pool(jobs - 1, initializer=_init_worker,
                                    initargs=(list(petsc_args), feed.claims))
        except BaseException as err:  # noqa: BLE001 - raised again in this process's thread
            feed.done.put(err)
            return
        for k in range(jobs - 1 if warm is not None else 0):
            out_k = variant_path(os.path.join(scratch, str(k)), warm.index)
            os.makedirs(os.path.dirname(out_k))
            feed.workers.apply_async(_warm_up, (dataclasses.replace(warm, out=out_k),))
        ready.wait()
        feed.hand(AHEAD * (jobs - 1))

    def collect(wait: float = 0.0) -> None:
        """Report the records the workers handed back (waiting up to ``wait`` s for one)."""
        while True:
            try:
                got = feed.done.get(timeout=wait) if wait else feed.done.get_nowait()
            except queue.Empty:
                return
            if isinstance(got, BaseException):
                raise got
            out.append(got)
            if report is not None:
                report(got)
            wait = 0.0

    maker = threading.Thread(target=make, name="fem-study-pool", daemon=True)
    maker.start()
    try:
        if before is not None:
            before()
        ready.set()
        while (task := feed.take()) is not None:
            interrupt.check()
            rec = run_variant(task)
            out.append(rec)
            if report is not None:
                report(rec)
            collect()
        maker.join()
        while feed.outstanding():
            interrupt.check()
            collect(0.05)
        collect()
    except BaseException:
        with feed.lock:
            feed.stopped = True
        ready.set()
        maker.join()
        if feed.workers is not None:
            feed.workers.terminate()    # SIGTERM: a variant being computed is dropped
            feed.workers.join()
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
        raise
    feed.workers.close()
    feed.workers.join()                 # a warm-up still running ends first
    if scratch is not None:
        shutil.rmtree(scratch, ignore_errors=True)
    return out


# --- MPI ranks ----------------------------------------------------------------------------------
def mpi_comm():
    """``MPI.COMM_WORLD`` when launched on more than one rank, else None."""
    if not launched():
        return None
    from mpi4py import MPI

    return MPI.COMM_WORLD if MPI.COMM_WORLD.Get_size() > 1 else None


def ranks(todo: list[Task], comm, report: Callable[[dict], None] | None = None) -> list[dict]:
    """Run this rank's share of ``todo`` (a static split by variant index), then wait for all."""
    from fem.io import files

    rank, size = comm.Get_rank(), comm.Get_size()
    mine = [t for t in todo if t.index % size == rank]
    with files.scratch():       # a rank's variants are its own files, not a replicated run's
        out = serial(mine, report)
    comm.Barrier()
    return out
