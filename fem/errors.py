"""Exceptions that say where and what was expected.

The CLI turns each into one message and an exit code, never a traceback:

========================  =========  ========================================================
class                     exit code  raised for
========================  =========  ========================================================
:class:`DeckError`        2          a mistake in the deck (key, type, value, reference)
:class:`ModelError`       2          a well-formed deck describing an unusable model (mechanism)
:class:`ConvergenceError` 3          Newton, arc-length or an eigen-solver did not converge
:class:`AccuracyError`    3          a result would not be accurate in double precision
                                     (an ill-conditioned linear system, an overflow)
:class:`OutputError`      4          the results cannot be written (disk full, I/O error)
:class:`Interrupted`      130, 143   Ctrl-C (SIGINT) or SIGTERM; the run stopped cleanly
========================  =========  ========================================================

Warnings (a limit point passed under load control, a linear solve that lost digits inside a
Newton iteration that converged anyway, an arc-length path that stopped before its target) are not
errors: a step keeps them in its ``warnings`` list and logs them, and the run summary shows them.
"""

from __future__ import annotations

from collections.abc import Iterable

from fem import lazy

difflib = lazy.module("difflib")       # for a mistake's suggestion only (issue 32)


class FemError(Exception):
    """Base class of the errors fem reports to users."""

    exit_code = 1


class DeckError(FemError):
    """A deck entry is wrong.

    Parameters
    ----------
    key
        Dotted deck key, e.g. ``"elements[2].section"`` or ``"sections.IPE200.A"``.
    message
        What was expected and what was received.
    line
        Line in the deck file, where it is known.
    """

    exit_code = 2

    def __init__(self, key: str, message: str, line: int | None = None):
        self.key = key
        self.line = line
        self.message = message
        where = f"{key}" + (f" (line {line})" if line else "")
        super().__init__(f"{where}: {message}")


class ModelError(FemError):
    """The model is well formed but cannot be analysed (for example a mechanism)."""

    exit_code = 2


class ConvergenceError(FemError):
    """A nonlinear or eigen solve failed; carries where it happened and the last norms."""

    exit_code = 3

    def __init__(self, message: str, *, step: str | None = None, time: float | None = None,
                 iteration: int | None = None, norms: list[float] | None = None):
        self.step = step
        self.time = time
        self.iteration = iteration
        self.norms = list(norms or [])
        parts = []
        if step is not None:
            parts.append(f"step '{step}'")
        if time is not None:
            parts.append(f"time/load factor {time:.6g}")
        if iteration is not None:
            parts.append(f"iteration {iteration}")
        if self.norms:
            parts.append(f"residual {self.norms[-1]:.3e}")
        where = ", ".join(parts)
        super().__init__(f"{message}" + (f" ({where})" if where else ""))


class AccuracyError(FemError):
    """A result would not be accurate in double precision (e.g. an ill-conditioned system)."""

    exit_code = 3


class OutputError(FemError):
    """The results cannot be written (disk full, file-size limit, I/O error)."""

    exit_code = 4


class Interrupted(FemError):
    """The run was stopped by a signal (SIGINT: exit 130, SIGTERM: exit 143)."""

    def __init__(self, signum: int):
        import signal

        self.signum = signum
        self.exit_code = 128 + int(signum)
        name = signal.Signals(signum).name
        super().__init__(f"interrupted by {name}")


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """Return ``" (did you mean 'x'?)"`` for the closest choice, or an empty string.

    >>> did_you_mean("sectoin", ["section", "material"])
    " (did you mean 'section'?)"
    """
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""
