"""Ctrl-C (SIGINT) and SIGTERM: stop a run at the next safe point, never inside a frame.

Python's default SIGINT handler raises ``KeyboardInterrupt`` at whatever bytecode runs at that
moment, including inside h5py's callbacks, which swallow it (so Ctrl-C was sometimes ignored) or
leave the datasets of a step with unequal frame counts. Here a signal only records itself;
the analysis calls :func:`check` at safe points (every Newton iteration, every increment or time
step), which raises :class:`~fem.errors.Interrupted`. The step then drops the increment it was
computing, and the results file is closed with every dataset of every step at the same frame
count. A frame being written is never cut: :func:`critical` defers even a second signal until the
frame is complete. Outside a frame, a second Ctrl-C stops at once (for a long computation that
reaches no check point soon).

Only :mod:`fem.cli` installs the handlers (:func:`installed`); the library never changes the
process's signal handling when it is used from Python.

**Several MPI ranks** (issue 31, stage 6). A signal may reach some ranks of a run only (``kill
-INT`` of one rank's pid, a scheduler signalling one node): a rank that stopped alone would leave
the others running on, or waiting in their next collective operation, until
:func:`fem.mpi.finish` gives up and aborts them (a second message, after
``FEM_MPI_AGREE_SECONDS``). So inside :func:`together` (``fem run`` on several ranks, whose ranks
pass the same check points in the same order) the ranks decide together: at a :func:`check`
every rank reduces the signal it has seen, whether it is writing a frame, and the time since the
last reduction, and every rank stops at the same check, with the same signal, once any rank has
seen one. A reduction at every check cost a replicated run of 1000 cheap time steps on 3
oversubscribed ranks a third of its time, so the ranks reduce every ``k``-th check only, ``k``
chosen at each reduction from the reduced (hence common) time so that they meet about every
:data:`AGREE_INTERVAL` seconds: at most that much later than a lone process would stop.
"""

from __future__ import annotations

import contextlib
import signal
import time
from collections.abc import Iterator

from fem.errors import Interrupted

SIGNALS = (signal.SIGINT, signal.SIGTERM)

_pending: int | None = None
_critical = 0
#: seconds between the reductions of ranks that check together (module docstring)
AGREE_INTERVAL = 0.25
_MAX_EVERY = 4096

_together = None        # an mpi4py communicator whose ranks check together (together())
_every = 1              # checks between two reductions (the same on every rank)
_count = 0              # checks since the last reduction
_since = 0.0            # time of the last reduction (this rank's clock)


def _handler(signum, frame) -> None:
    global _pending
    if _pending is not None and _critical == 0:
        raise Interrupted(_pending)          # the second signal: stop now
    _pending = signum


def check() -> None:
    """Raise :class:`~fem.errors.Interrupted` if a signal arrived since the handlers went in.

    Inside :func:`together`: if a signal arrived on any rank (a collective call: every rank of
    the communicator must make it, at the same point of the run).
    """
    if _together is not None:
        _check_together()
    elif _pending is not None and _critical == 0:
        raise Interrupted(_pending)


def _check_together() -> None:
    """:func:`check` of ranks that check together: every ``_every``-th call, one reduction."""
    global _pending, _every, _count, _since
    _count += 1
    if _count < _every:
        return
    import numpy as np
    from mpi4py import MPI

    now = time.monotonic()
    seen = np.array([_pending or 0, _critical, int((now - _since) * 1e6)], dtype=np.int64)
    _together.Allreduce(MPI.IN_PLACE, seen, op=MPI.MAX)
    _count, _since = 0, now
    # the next interval from reduced values only, so that every rank computes the same one
    target = int(_every * AGREE_INTERVAL * 1e6 / max(int(seen[2]), 1))
    _every = max(1, min(target, 2 * _every, _MAX_EVERY))
    if seen[0] and not seen[1]:
        if _pending is None:
            _pending = int(seen[0])
        raise Interrupted(int(seen[0]))


def request(signum: int = signal.SIGTERM) -> None:
    """Ask the run to stop as if ``signum`` had arrived (a watchdog, a GUI's stop button).

    Safe to call from another thread: the run stops at its next :func:`check`.
    """
    global _pending
    _pending = signum


def pending() -> int | None:
    """The signal that arrived, if any."""
    return _pending


@contextlib.contextmanager
def critical() -> Iterator[None]:
    """A block that signals never cut (writing one frame): the next check() raises."""
    global _critical
    _critical += 1
    try:
        yield
    finally:
        _critical -= 1


@contextlib.contextmanager
def together(comm) -> Iterator[None]:
    """Every :func:`check` of the block made by all ranks of ``comm`` (mpi4py) at once.

    ``comm=None``: each process checks on its own, as without MPI (module docstring).
    """
    global _together, _every, _count, _since
    old, _together = _together, comm
    _every, _count, _since = 1, 0, time.monotonic()
    try:
        yield
    finally:
        _together = old


@contextlib.contextmanager
def installed() -> Iterator[None]:
    """Install the handlers for SIGINT and SIGTERM for the duration of the block."""
    global _pending
    _pending = None
    old = {s: signal.signal(s, _handler) for s in SIGNALS}
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)
