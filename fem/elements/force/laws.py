"""Force laws of force elements: a force as a piecewise-linear function of one variable.

A :class:`Curve` is ``F(x)`` through the points ``(x_i, F_i)`` (``x`` strictly increasing),
extended beyond the ends along the end segments; a linear law ``F = F_0 + k x`` is the curve
through ``(0, F_0)`` and ``(1, F_0 + k)``. Springs use it as a force-deflection law (``x`` the
deflection from the free length or angle, ``F_0`` the preload) with the potential
``U(x) = int_0^x F`` (exact: piecewise quadratic); dampers as a force-velocity law (``F(0) = 0``,
nondecreasing, so ``F(v) v >= 0``: a damper only takes energy). The production damper curves of
the McPherson study (application_papers.md section 13: regions of different viscous
coefficients, asymmetric in rebound) are such tables.

**Step form** (the energy-conserving scheme). Over a step the variable goes from ``x_0`` to
``x_1``; the spring's force is the secant of its potential, ``S = (U(x_1) - U(x_0)) / (x_1 -
x_0)`` (a discrete gradient: ``S (x_1 - x_0)`` is exactly the change of ``U``; the mid-point
force where the step is tiny), and a damper's force is ``F_d((x_1 - x_0)/h)``, whose work
``F_d (x_1 - x_0) >= 0`` is exactly the energy it takes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

#: relative size of a step's change below which the secant is taken at the middle
_SMALL = 1e-7


@dataclass(frozen=True)
class Curve:
    """``F(x)`` through ``(x_i, F_i)``, linear beyond the ends (module doc).

    Attributes
    ----------
    x : (m,) strictly increasing abscissae, ``m >= 2``
    F : (m,) values
    """

    x: NDArray
    F: NDArray

    @classmethod
    def linear(cls, slope: float, value: float = 0.0) -> Curve:
        """``F = value + slope x``."""
        return cls(np.array([0.0, 1.0]), np.array([value, value + slope]))

    @classmethod
    def table(cls, rows) -> Curve:
        """From rows ``[[x, F], ...]`` (already checked: increasing ``x``, at least two)."""
        a = np.asarray(rows, dtype=float)
        return cls(a[:, 0].copy(), a[:, 1].copy())

    @property
    def is_zero(self) -> bool:
        """Whether ``F`` vanishes everywhere."""
        return not np.any(self.F)

    def _segment(self, x: NDArray) -> tuple[NDArray, NDArray]:
        """Segment index of ``x`` (ends extended) and the segments' slopes."""
        k = np.clip(np.searchsorted(self.x, x, side="right") - 1, 0, len(self.x) - 2)
        slopes = np.diff(self.F) / np.diff(self.x)
        return k, slopes

    def __call__(self, x: NDArray) -> tuple[NDArray, NDArray]:
        """``F(x)`` and ``F'(x)`` (the right slope at a knot)."""
        x = np.asarray(x, dtype=float)
        k, slopes = self._segment(x)
        return self.F[k] + slopes[k] * (x - self.x[k]), slopes[k]

    def integral(self, x: NDArray) -> NDArray:
        """``U(x) = int_0^x F``, exact."""
        x = np.asarray(x, dtype=float)
        slopes = np.diff(self.F) / np.diff(self.x)
        if len(self.x) == 2:                       # linear: F(0) x + F' x^2 / 2
            return (self.F[0] - slopes[0] * self.x[0]) * x + 0.5 * slopes[0] * x * x
        knots = np.concatenate([[0.0], np.cumsum(0.5 * (self.F[1:] + self.F[:-1])
                                                 * np.diff(self.x))])

        def at(y):
            k = np.clip(np.searchsorted(self.x, y, side="right") - 1, 0, len(self.x) - 2)
            d = y - self.x[k]
            return knots[k] + self.F[k] * d + 0.5 * slopes[k] * d * d

        return at(x) - at(np.zeros(1))[0]

    def secant(self, x0: NDArray, x1: NDArray) -> tuple[NDArray, NDArray]:
        """``S = (U(x_1) - U(x_0)) / (x_1 - x_0)`` and ``dS/dx_1`` (module doc)."""
        dx = x1 - x0
        small = np.abs(dx) <= _SMALL * np.maximum(np.maximum(np.abs(x0), np.abs(x1)),
                                                  np.ptp(self.x))
        safe = np.where(small, 1.0, dx)
        S = (self.integral(x1) - self.integral(x0)) / safe
        F1 = self(x1)[0]
        dS = (F1 - S) / safe
        if small.any():
            Fm, dFm = self(0.5 * (x0 + x1))
            S, dS = np.where(small, Fm, S), np.where(small, 0.5 * dFm, dS)
        return S, dS

    def max_slope(self) -> float:
        """The largest ``|F'|`` (a stiffness scale)."""
        return float(np.abs(np.diff(self.F) / np.diff(self.x)).max())


def law(value: float | None, table, preload: float = 0.0) -> Curve | None:
    """The curve of a linear coefficient ``value`` (with ``preload``) or of a table; or None."""
    if table is not None:
        return Curve.table(table)
    if value is None and preload == 0.0:
        return None
    return Curve.linear(value or 0.0, preload)
