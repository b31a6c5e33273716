"""How a run tells about its progress: the protocol the results writer and the steps call.

The library never prints (STYLE.md); :mod:`fem.cli` passes a :class:`Progress` that draws a bar
or writes lines (:mod:`fem.console`). Every method is cheap and optional to implement: this base
class does nothing, which is what a run from Python gets by default.

A step's *clock* is what its progress is measured in: the time of a dynamic step, the magnitude of
the load factor under load control, the increment count of arc-length and displacement control
(see :class:`fem.io.step_writer.StepWriter`); ``span`` is where that clock ends, when it is known.
"""

from __future__ import annotations


class Progress:
    """Progress of a run, step by step (does nothing; subclasses show it)."""

    def begin(self, step: str, kind: str, span: float | None, clock: str) -> None:
        """A step starts; its clock runs from 0 towards ``span`` (None: unknown)."""

    def update(self, value: float, iterations: int | None = None) -> None:
        """The step's clock reached ``value`` after an increment of ``iterations`` iterations."""

    def frame(self, step: str, index: int, value: float) -> None:
        """Frame ``index`` of ``step`` was written at clock ``value``."""

    def end(self) -> None:
        """The step ended (completed, failed or interrupted)."""
