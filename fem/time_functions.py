"""Time functions that scale loads and prescribed displacements and give drivers their motion.

Each is a small frozen dataclass with ``__call__(t)`` and its first and second time derivatives
``derivative(t)`` and ``second_derivative(t)`` (drivers need them for consistent velocities and
reactions), vectorized over ``t``. ``exact_over_arrays`` (a class attribute) says whether the
function's values over an array of times are its values at each time alone, bit for bit (a
compiled run evaluates the drives of its steps at once, :mod:`fem.integrators.planar_run`):
:class:`SpinUp` is not (numpy squares an array by multiplying, a scalar by ``pow``, which differ
in the last bit at some times). Piecewise-linear functions have the slope of the piece that
starts at ``t`` and no second derivative. In a static step the argument is the step's
pseudo-time, which is the load factor; in a dynamic step it is the time since the step started.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from numpy.typing import ArrayLike, NDArray


def _zeros(t: ArrayLike) -> NDArray:
    return np.zeros_like(np.asarray(t, dtype=float))


def _slopes(times: tuple, values: tuple, t: ArrayLike) -> NDArray:
    """The slope of the piece of a piecewise-linear function that starts at ``t`` (zero outside)."""
    t = np.asarray(t, dtype=float)
    slopes = np.diff(values) / np.diff(times)
    k = np.searchsorted(times, t, side="right") - 1
    inside = (k >= 0) & (k < len(slopes))
    return np.where(inside, slopes[np.clip(k, 0, len(slopes) - 1)], 0.0)


@dataclass(frozen=True)
class Constant:
    """``g(t) = value``."""

    exact_over_arrays: ClassVar[bool] = True

    value: float = 1.0

    def __call__(self, t: ArrayLike) -> NDArray:
        """The function at ``t`` (scalar or array)."""
        return np.full_like(np.asarray(t, dtype=float), self.value)

    def derivative(self, t: ArrayLike) -> NDArray:
        """The first derivative: zero."""
        return _zeros(t)

    second_derivative = derivative


@dataclass(frozen=True)
class Linear:
    """``g(t) = slope * t``, unbounded: the default of loads in static steps (the load factor)."""

    exact_over_arrays: ClassVar[bool] = True

    slope: float = 1.0

    def __call__(self, t: ArrayLike) -> NDArray:
        """The function at ``t`` (scalar or array)."""
        return self.slope * np.asarray(t, dtype=float)

    def derivative(self, t: ArrayLike) -> NDArray:
        """The first derivative: the slope."""
        return np.full_like(np.asarray(t, dtype=float), self.slope)

    def second_derivative(self, t: ArrayLike) -> NDArray:
        """The second derivative: zero."""
        return _zeros(t)


@dataclass(frozen=True)
class Ramp:
    """Linear from ``(t0, y0)`` to ``(t1, y1)``, constant outside.

    >>> Ramp(t0=0.0, t1=2.0)(np.array([-1.0, 1.0, 3.0]))
    array([0. , 0.5, 1. ])
    """

    exact_over_arrays: ClassVar[bool] = True

    t0: float = 0.0
    t1: float = 1.0
    y0: float = 0.0
    y1: float = 1.0

    def __call__(self, t: ArrayLike) -> NDArray:
        """The function at ``t`` (scalar or array)."""
        return np.interp(np.asarray(t, dtype=float), [self.t0, self.t1], [self.y0, self.y1])

    def derivative(self, t: ArrayLike) -> NDArray:
        """The first derivative: the slope between ``t0`` and ``t1``, zero outside."""
        return _slopes((self.t0, self.t1), (self.y0, self.y1), t)

    def second_derivative(self, t: ArrayLike) -> NDArray:
        """The second derivative: zero (the kinks are not resolved)."""
        return _zeros(t)


@dataclass(frozen=True)
class Table:
    """Piecewise linear through ``points`` (``(k, 2)``: time, value), constant beyond the ends."""

    exact_over_arrays: ClassVar[bool] = True

    times: tuple[float, ...]
    values: tuple[float, ...]

    def __call__(self, t: ArrayLike) -> NDArray:
        """The function at ``t`` (scalar or array)."""
        return np.interp(np.asarray(t, dtype=float), self.times, self.values)

    def derivative(self, t: ArrayLike) -> NDArray:
        """The first derivative: the slope of the piece at ``t``, zero beyond the ends."""
        return _slopes(self.times, self.values, t)

    def second_derivative(self, t: ArrayLike) -> NDArray:
        """The second derivative: zero (the kinks are not resolved)."""
        return _zeros(t)


@dataclass(frozen=True)
class Steady:
    """``y0`` until ``t0``, then growing at the constant ``rate``: a crank at constant speed.

    >>> Steady(rate=2.0, t0=1.0)(np.array([0.0, 2.0]))
    array([0., 2.])
    """

    exact_over_arrays: ClassVar[bool] = True

    rate: float = 1.0
    t0: float = 0.0
    y0: float = 0.0

    def __call__(self, t: ArrayLike) -> NDArray:
        """The function at ``t`` (scalar or array)."""
        return self.y0 + self.rate * np.maximum(np.asarray(t, dtype=float) - self.t0, 0.0)

    def derivative(self, t: ArrayLike) -> NDArray:
        """The first derivative: ``rate`` after ``t0``."""
        return np.where(np.asarray(t, dtype=float) >= self.t0, self.rate, 0.0)

    def second_derivative(self, t: ArrayLike) -> NDArray:
        """The second derivative: zero."""
        return _zeros(t)


@dataclass(frozen=True)
class SpinUp:
    """Kane, Ryan & Banerjee's spin-up to ``rate`` over ``t0 .. t1``, then constant speed.

    With ``T = t1 - t0`` and ``s = t - t0`` (notes/meijaard.md section 2.4, eq. 22)::

        y = rate / T (s^2 / 2 + (T / 2 pi)^2 (cos(2 pi s / T) - 1))     0 <= s <= T
        y = rate (s - T / 2)                                           s > T

    and ``y = 0`` before ``t0``: the speed rises smoothly (zero acceleration at both ends).
    """

    exact_over_arrays: ClassVar[bool] = False

    rate: float = 1.0
    t0: float = 0.0
    t1: float = 1.0

    def _s(self, t: ArrayLike) -> tuple[NDArray, float]:
        T = self.t1 - self.t0
        return np.clip(np.asarray(t, dtype=float) - self.t0, 0.0, None), T

    def __call__(self, t: ArrayLike) -> NDArray:
        """The function at ``t`` (scalar or array)."""
        s, T = self._s(t)
        k = 2 * np.pi / T
        during = self.rate / T * (0.5 * s**2 + (np.cos(k * s) - 1) / k**2)
        return np.where(s <= T, during, self.rate * (s - 0.5 * T))

    def derivative(self, t: ArrayLike) -> NDArray:
        """The first derivative (the speed)."""
        s, T = self._s(t)
        k = 2 * np.pi / T
        return np.where(s <= T, self.rate / T * (s - np.sin(k * s) / k), self.rate)

    def second_derivative(self, t: ArrayLike) -> NDArray:
        """The second derivative."""
        s, T = self._s(t)
        return np.where(s <= T, self.rate / T * (1 - np.cos(2 * np.pi * s / T)), 0.0)


TimeFunction = Constant | Linear | Ramp | Table | Steady | SpinUp
