"""Time functions that scale loads and prescribed displacements.

Each is a small frozen dataclass with ``__call__(t)``, vectorized over ``t``. In a static step the
argument is the step's pseudo-time, which is the load factor; in a dynamic step it is the time since
the step started.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray


@dataclass(frozen=True)
class Constant:
    """``g(t) = value``."""

    value: float = 1.0

    def __call__(self, t: ArrayLike) -> NDArray:
        """The function at ``t`` (scalar or array)."""
        return np.full_like(np.asarray(t, dtype=float), self.value)


@dataclass(frozen=True)
class Linear:
    """``g(t) = slope * t``, unbounded: the default of loads in static steps (the load factor)."""

    slope: float = 1.0

    def __call__(self, t: ArrayLike) -> NDArray:
        """The function at ``t`` (scalar or array)."""
        return self.slope * np.asarray(t, dtype=float)


@dataclass(frozen=True)
class Ramp:
    """Linear from ``(t0, y0)`` to ``(t1, y1)``, constant outside.

    >>> Ramp(t0=0.0, t1=2.0)(np.array([-1.0, 1.0, 3.0]))
    array([0. , 0.5, 1. ])
    """

    t0: float = 0.0
    t1: float = 1.0
    y0: float = 0.0
    y1: float = 1.0

    def __call__(self, t: ArrayLike) -> NDArray:
        """The function at ``t`` (scalar or array)."""
        return np.interp(np.asarray(t, dtype=float), [self.t0, self.t1], [self.y0, self.y1])


@dataclass(frozen=True)
class Table:
    """Piecewise linear through ``points`` (``(k, 2)``: time, value), constant beyond the ends."""

    times: tuple[float, ...]
    values: tuple[float, ...]

    def __call__(self, t: ArrayLike) -> NDArray:
        """The function at ``t`` (scalar or array)."""
        return np.interp(np.asarray(t, dtype=float), self.times, self.values)


TimeFunction = Constant | Linear | Ramp | Table
