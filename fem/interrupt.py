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
"""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator

from fem.errors import Interrupted

SIGNALS = (signal.SIGINT, signal.SIGTERM)

_pending: int | None = None
_critical = 0


def _handler(signum, frame) -> None:
    global _pending
    if _pending is not None and _critical == 0:
        raise Interrupted(_pending)          # the second signal: stop now
    _pending = signum


def check() -> None:
    """Raise :class:`~fem.errors.Interrupted` if a signal arrived since the handlers went in."""
    if _pending is not None and _critical == 0:
        raise Interrupted(_pending)


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
