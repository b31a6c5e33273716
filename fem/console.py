"""The terminal side of a run's progress: a bar on a terminal, lines with ``-v``, else nothing.

Used by :mod:`fem.cli` only. The bar (tqdm) goes to stderr and shows the step, its clock (load
factor, time or increment) against where it ends, the Newton iterations of the last increment and
the time to go; it is drawn only when stderr is a terminal, so pipes and log files stay clean.
With ``-v`` every output frame is one line on stderr instead.
"""

from __future__ import annotations

import sys

from fem.progress import Progress

UNITS = {"time": "time", "abs": "load factor", "count": "increment", "value": "value",
         "once": "step"}


class Bar(Progress):
    """A tqdm bar per step, on stderr."""

    def __init__(self, stream=None):
        self.stream = stream or sys.stderr
        self.bar = None
        self.value = 0.0

    def begin(self, step, kind, span, clock):
        """Open a bar for the step."""
        from tqdm import tqdm

        self.end()
        self.value = 0.0
        total = float(span) if span else None
        fmt = ("{desc}: {percentage:3.0f}%|{bar}| {n:.4g}/{total:.4g}{postfix} "
               "[{elapsed}<{remaining}]") if total else "{desc}: {n:.4g}{postfix} [{elapsed}]"
        desc = f"{step} ({UNITS.get(clock, clock)})"
        if clock == "once":             # a step without a clock (modal, linearize): it runs
            fmt, desc = "{desc}: running [{elapsed}]", f"{step} ({kind})"
        self.bar = tqdm(total=total, desc=desc, file=self.stream,
                        bar_format=fmt, leave=False, dynamic_ncols=True, mininterval=0.2)

    def update(self, value, iterations=None):
        """Move the bar to ``value``."""
        if self.bar is None:
            return
        value = float(value)
        if self.bar.total:
            value = min(value, self.bar.total)
        if iterations is not None:
            self.bar.set_postfix_str(f"{iterations} it", refresh=False)
        self.bar.update(value - self.value)
        self.value = value

    def frame(self, step, index, value):
        """Frames move the bar too (steps that report no increments)."""
        self.update(value)

    def end(self):
        """Close the bar."""
        if self.bar is not None:
            self.bar.close()
            self.bar = None


class Lines(Progress):
    """One line per output frame on stderr (``fem run -v``)."""

    def __init__(self, stream=None):
        self.stream = stream or sys.stderr
        self.clock = "time"
        self.iterations = None

    def begin(self, step, kind, span, clock):
        """Remember the step's clock."""
        self.clock = clock
        print(f"fem: step {step} ({kind}) begins", file=self.stream, flush=True)

    def update(self, value, iterations=None):
        """Remember the iterations of the last increment."""
        self.iterations = iterations

    def frame(self, step, index, value):
        """One line per frame."""
        its = f", {self.iterations} iterations" if self.iterations is not None else ""
        print(f"fem: {step} frame {index}: {UNITS.get(self.clock, self.clock)} {value:.6g}{its}",
              file=self.stream, flush=True)


def choose(verbose: bool, stream=None) -> Progress:
    """Lines with ``-v``, a bar on a terminal, nothing otherwise."""
    stream = stream or sys.stderr
    if verbose:
        return Lines(stream)
    if getattr(stream, "isatty", lambda: False)():
        return Bar(stream)
    return Progress()
