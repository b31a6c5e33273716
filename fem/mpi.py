"""MPI ranks of a replicated run: which rank speaks and writes, pinned threads, agreed exits.

``mpiexec -n N fem run deck.toml`` runs the deck *replicated* (issue 31, stage 2): every rank
parses the deck and runs the same serial computation on its own ``COMM_SELF`` PETSc objects, so
every rank's results are the serial run's, bit for bit. Rank 0 alone prints and writes files
(:func:`fem.io.files.writes` decides, in one place); the other ranks print nothing and keep
their results file in memory. It is the start of the distributed solver the issue describes
(``-fem_distributed_solve``, :mod:`fem.solvers.linear_system`), and what a batch scheduler runs.

* **Threads.** Under a launcher (:data:`fem._petsc.LAUNCHER_VARIABLES`) N ranks on N cores must
  not each start a thread per core in BLAS, OpenMP or numba: :func:`pin_threads` sets the
  thread-count variables the user did not set to 1, before numpy is first imported (``fem``'s
  ``__init__`` calls it). A serial run is never touched.
* **Output.** :func:`quiet` sends the prints and log lines of ranks other than 0 to a buffer;
  rank 0's are the run's.
* **Failures.** Every rank computes the same thing, so a deck error, a singular model, a Newton
  failure or an interrupt (Ctrl-C reaches every rank; a signal that reaches some ranks only is
  found by all at one check point, :func:`fem.interrupt.together`) ends every rank the same
  way: each returns the serial exit code, rank 0 having printed the one message.
  :func:`finish` checks that they agree: a rank that fails waits in a non-blocking barrier,
  polled, for up to :data:`AGREE_SECONDS` (``FEM_MPI_AGREE_SECONDS``); if the other ranks do
  not arrive there, the failure is its own (e.g. rank 0's results file cannot be written), and
  it prints its message (rank > 0: the buffered one) and ends every rank with ``MPI_Abort`` and
  the same code. So
  ``mpiexec``'s exit code is always the serial one, and no rank is left waiting. Open MPI adds
  its own notes on non-zero exits; ``mpiexec -q`` leaves them out.
* :func:`on_root` runs a check that looks at files (the results path) on rank 0 only and gives
  every rank its answer or its error, so that no rank sees a file another rank just created.
"""

from __future__ import annotations

import io
import os
import sys
import time

from fem import _petsc

#: the thread-count variables of BLAS (OpenBLAS, MKL, BLIS, Accelerate), OpenMP and numba
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                    "BLIS_NUM_THREADS", "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS",
                    "NUMBA_NUM_THREADS")

#: seconds a failing rank waits for the others to fail too before it aborts them (the ranks of
#: a replicated run may drift apart by this much when oversubscribed)
AGREE_SECONDS = 30.0

_buffer: io.StringIO | None = None      # what a quiet rank would have printed


def launched(environ=os.environ) -> bool:
    """Whether a launcher (``mpiexec``, ``srun``) started this process.

    As :func:`fem._petsc.launched`: not where the variables are a singleton's, inherited.
    ``os.environ`` is looked up by its encoded keys (what its ``in`` does, less the ten
    encodings and KeyErrors: 20 us of every step's solver set-up).
    """
    data = getattr(environ, "_data", None) if environ is os.environ else None
    if isinstance(data, dict) and _LAUNCHER_KEYS is not None:
        return (any(key in data for key in _LAUNCHER_KEYS)
                and data.get(_ESS_KEY) != _SINGLETON_VALUE)
    return _petsc.launched(environ)


def _launcher_keys() -> tuple | None:
    """The launcher variables as ``os.environ`` keys its ``_data`` (None: it has none)."""
    encode = getattr(os.environ, "encodekey", None)
    try:
        return tuple(encode(name) for name in _petsc.LAUNCHER_VARIABLES) if encode else None
    except (TypeError, ValueError):
        return None


_LAUNCHER_KEYS = _launcher_keys()
_ESS_KEY, _SINGLETON_VALUE = (
    (os.environ.encodekey("OMPI_MCA_ess"), os.environ.encodevalue(_petsc.SINGLETON))
    if _LAUNCHER_KEYS is not None else (None, None))


def pin_threads(environ=os.environ) -> dict[str, str]:
    """One thread per rank under a launcher: :data:`THREAD_VARIABLES` the user left unset.

    Must run before numpy (BLAS) and numba are imported. Returns what was set.
    """
    if not launched(environ):
        return {}
    added = {name: "1" for name in THREAD_VARIABLES if name not in environ}
    environ.update(added)
    return added


def _world():
    return _petsc.PETSc().COMM_WORLD


def size() -> int:
    """Ranks of COMM_WORLD (1 without a launcher: MPI is then not started for this)."""
    return _world().getSize() if launched() else 1


def rank() -> int:
    """The rank of this process in COMM_WORLD (0 without a launcher)."""
    return _world().getRank() if launched() else 0


def mpi4py_comm():
    """COMM_WORLD as an mpi4py communicator (replicated runs need mpi4py)."""
    return _world().tompi4py()


def quiet() -> None:
    """Send what ranks other than 0 print (stdout, stderr, logging) to a buffer."""
    global _buffer
    if size() > 1 and rank() > 0 and _buffer is None:
        _buffer = io.StringIO()
        sys.stdout = sys.stderr = _buffer


def on_root(check):
    """``check()`` evaluated on rank 0 only; every rank returns its value or raises its error."""
    if size() == 1:
        return check()
    comm = mpi4py_comm()
    answer = None
    if comm.Get_rank() == 0:
        try:
            answer = ("value", check())
        except Exception as err:  # noqa: BLE001 - handed to every rank, raised there
            answer = ("error", err)
    kind, value = comm.bcast(answer, root=0)
    if kind == "error":
        raise value
    return value


def finish(code: int, timeout: float | None = None) -> int:
    """The exit code of this rank, agreed with the others when it is a failure (module doc).

    Returns ``code`` when every rank failed (or none); otherwise prints this rank's message and
    aborts every rank with ``code`` (does not return).
    """
    if code == 0 or not _petsc._initialised or size() == 1:
        return code
    if timeout is None:
        timeout = float(os.environ.get("FEM_MPI_AGREE_SECONDS", AGREE_SECONDS))
    comm = mpi4py_comm()
    request = comm.Ibarrier()
    end = time.monotonic() + timeout
    while not request.Test():
        if time.monotonic() > end:
            if _buffer is not None:          # this rank failed alone: say why, as rank 0 would
                text = _buffer.getvalue()
                lines = [line for line in text.splitlines() if line.startswith("fem:")]
                sys.__stderr__.write("\n".join(lines[-3:]) + "\n")
            sys.__stderr__.write(f"fem: rank {comm.Get_rank()} of {comm.Get_size()} failed on "
                                 "its own; ending every rank\n")
            sys.__stderr__.flush()
            comm.Abort(code)
        time.sleep(0.01)
    return code
