"""Stability sweep: a parameter stepped through a range, the linearized eigenvalues tracked.

A ``stability_sweep`` step takes the state the steps before it left and, for each of its
``values`` in turn,

* ``parameter = "spin"``: the steady rotation at that angular velocity about ``axis`` (through
  ``center``), its relative equilibrium found by Newton from the previous value's, under the
  step's loads at unit scale (gravity on a pendulum: as a linearize step applies them);
* ``parameter = "load"``: the equilibrium under the step's loads scaled by the value (on top of
  those held from earlier steps), by Newton from the previous value's (a continuation: beyond a
  bifurcation the path it follows is the one it was on, e.g. a straight column stays straight
  and turns unstable),

linearizes there (:class:`fem.analysis.linearize.LinearizeStep`: the same ``M``, ``D``, ``K``,
eigen-solvers, error bounds and verdicts) and keeps the ``modes`` eigenvalues nearest ``shift``.
Modes are tracked from one value to the next by their vectors (the largest mass-weighted
correlation, an assignment problem), so a line of the Campbell diagram is one mode even where
frequencies cross. Each value's verdict is *stable*, *unstable* (an eigenvalue whose real part
exceeds its error bound: divergence or flutter) or *unknown* (the solve found no eigenvalue
there, e.g. far past a buckling load: a warning names those values; unknown is never counted as
stable). Where the state first turns unstable after a stable value, with ``refine`` the boundary
is located by bisection on the parameter to ``tolerance`` (relative). A value without an
equilibrium (beyond a limit load) ends the sweep with a warning; the values before it are
written. ``equilibrium = false`` linearizes every value about the state the sweep starts from,
as given (no Newton; see :mod:`fem.analysis.linearize` for a free motion in the equilibrium).

Written: ``/sweep/<step>/`` ``parameter`` (k,), ``eigenvalues`` (k, m) complex, ``frequencies``
(k, m) rad/s, ``error_bounds`` (k, m) (of the tracked eigenvalues), ``max_real`` (k,) (largest
real part of the non-neutral eigenvalues, of the neutral ones where all are, NaN where there is
no eigenvalue), ``max_real_bound`` (k,) its error
bound, ``stable`` (k,) int: 1 stable, 0 unstable, -1 unknown, attribute ``boundary`` (NaN if no
value is unstable); PNGs beside the results: ``<out>_<step>_campbell.png`` (frequencies against the
parameter; for a spin, the excitation orders 1x and 2x) and ``<out>_<step>_stability.png``
(max Re p).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from fem import interrupt
from fem.analysis.linearize import Eigenvalues, LinearizeStep
from fem.analysis.settings import MAX_ITERATIONS, MAX_MODES, REQUIRED, setting
from fem.errors import ConvergenceError, ModelError
from fem.linearization import linear_model

log = logging.getLogger(__name__)

MAX_VALUES = 10_000       # a sweep's values: each is a Newton solve and an eigen-solve


@dataclass
class SweepSettings:
    """Settings of a stability sweep: the deck keys of ``type = "stability_sweep"``."""

    parameter: str = setting("str", REQUIRED, "what is swept: the spin (rad/s) or the load "
                             "factor of the step's loads", choices=("spin", "load"))
    values: list = setting("vector", REQUIRED, "the parameter's values, increasing (at most "
                           f"{MAX_VALUES})")
    axis: list = setting("vector", None, "spin: the axis [ax, ay, az] (3D; default z; 2D: "
                         "always z)")
    center: list = setting("vector", None, "spin: a point of the axis (default: origin)")
    modes: int = setting("int", 6, "eigenvalue pairs tracked (nearest the shift)",
                         positive=True, maximum=MAX_MODES)
    method: str = setting("str", "lanczos", "eigen-solver, as for a linearize step",
                          choices=("lanczos", "dense"))
    shift: float = setting("float", 0.0, "shift p_s (rad/s, real), as for a linearize step")
    geometric: bool = setting("bool", True, "include the stress (geometric) stiffness")
    refine: bool = setting("bool", True, "locate the first stability boundary by bisection")
    tolerance: float = setting("float", 1e-6, "relative accuracy of the boundary", positive=True)
    max_iterations: int = setting("int", 50, "Newton iterations per equilibrium",
                                  positive=True, maximum=MAX_ITERATIONS)
    equilibrium: bool = setting("bool", True, "find each value's equilibrium by Newton; false "
                                "linearizes about the state the sweep starts from, as given")

    VARIANTS = ("",)
    REMOVES = ()

    @staticmethod
    def variant(values: dict) -> str:
        """Sweeps have one variant."""
        return ""

    # what LinearizeStep reads of its settings
    spin = None
    inputs = None
    outputs = None


class ScaledLoads:
    """A step's loads with its own scaled by a factor: held + factor * pattern."""

    def __init__(self, loads, factor: float):
        self.loads, self.factor = loads, factor

    def force(self, state, t: float = 0.0, which: str = "all") -> NDArray:
        """Held forces plus ``factor`` times the step's pattern."""
        return (self.loads.force(state, t, "held")
                + self.factor * self.loads.force(state, t, "pattern"))

    def stiffness(self, state, t: float = 0.0, which: str = "all") -> NDArray | None:
        """Their load stiffness (None when no load turns with its node)."""
        held = self.loads.stiffness(state, t, "held")
        own = self.loads.stiffness(state, t, "pattern")
        if held is None:
            return None
        return held + self.factor * own


@dataclass
class SweepPoint:
    """One value of the sweep: its eigenvalues and whether the state is stable."""

    value: float
    eigen: Eigenvalues
    state: object
    mass: object

    @property
    def verdict(self):
        """The :class:`fem.solvers.eigen.bounds.Verdict` of the value."""
        return self.eigen.verdict()

    @property
    def max_real(self) -> float:
        """Largest real part of the non-neutral eigenvalues (all neutral: of those; NaN: none)."""
        return self.verdict.max_real

    @property
    def stable(self) -> int:
        """1 stable, 0 unstable, -1 unknown (no eigenvalue found)."""
        return {"stable": 1, "unstable": 0, "unknown": -1}[self.verdict.state]


class SweepStep(LinearizeStep):
    """A stability sweep; see the module docstring."""

    step_type = "stability_sweep"
    Settings = SweepSettings
    nudge_singular_shift = True

    def __init__(self, name, system, loads, settings: SweepSettings | None = None,
                 solver_options=None):
        super().__init__(name, system, loads, settings, solver_options)
        self.points: list[SweepPoint] = []
        self.boundary: float | None = None
        self.tracked: tuple[NDArray, NDArray] | None = None

    # --- one value ----------------------------------------------------------------------------
    def _spin(self, value: float):
        if self.settings.parameter != "spin":
            return None
        if self.system.model.dim == 2:
            return [value]
        axis = np.asarray(self.settings.axis if self.settings.axis is not None
                          else [0.0, 0.0, 1.0], dtype=float)
        return list(value * axis / np.linalg.norm(axis))

    def point(self, value: float, start) -> SweepPoint:
        """Equilibrium, linearization and eigenvalues at ``value``, Newton from ``start``."""
        s = self.settings
        # a spin sweep's own loads are on at unit scale, as a linearize step's (the step's
        # ramp, which starts at zero, is not what a sweep over the spin means)
        loads = ScaledLoads(self.loads, value if s.parameter == "load" else 1.0)
        spin = self._spin(value)
        base = self.equilibrium(start, loads, spin, s.center)
        lm, _ = linear_model(self.system, base, loads, spin=spin, center=s.center,
                             geometric=s.geometric)
        interrupt.check()
        return SweepPoint(value, self.checked(lm), base, lm.M)

    # --- the step -----------------------------------------------------------------------------
    def run(self, state, results):
        """Sweep from ``state`` (not changed), locate the boundary, write data and plots."""
        s = self.settings
        self.loads.begin(state)
        try:
            start = state
            for v in s.values:
                try:
                    p = self.point(float(v), start)
                except ConvergenceError as err:
                    if not self.points:
                        raise
                    # beyond a limit load (or a critical spin) there is no equilibrium: keep
                    # and write what the values before it gave
                    self.warn(f"stopped at {s.parameter} = {v:g}, the values before it are "
                              f"written: {err}")
                    break
                self.points.append(p)
                start = p.state
                self.warn_inaccurate(p.eigen, f" at {s.parameter} = {v:g}")
                log.info("step %s: %s = %g, %s", self.name, s.parameter, v,
                         p.verdict.describe())
            self.boundary = self._boundary()
        finally:
            self.close()
        self.tracked = self.track()
        unknown = [p.value for p in self.points if p.stable < 0]
        if unknown:
            self.warn(f"no eigenvalue found at {s.parameter} = "
                      + ", ".join(f"{v:g}" for v in unknown)
                      + ": stability unknown there (not counted as stable)")
        if self.boundary is not None:
            first = next(p for p in self.points if p.stable == 0)
            self.warn(f"unstable from {s.parameter} = {self.boundary:.8g}: at {first.value:g} "
                      f"{first.verdict.describe()}")
        if results is not None:
            self.write(results, None)
        return state

    def _stable(self, p: SweepPoint) -> bool:
        return p.stable == 1

    def _boundary(self) -> float | None:
        """The first value where the state turns unstable (bisected with ``refine``).

        Bisected only between a stable value and the unstable one after it; an unknown value
        (no eigenvalue found) is never taken for stable: before the first unstable value it
        leaves the boundary at that value, and a bisection point that is unknown ends the
        bisection there.
        """
        pts = self.points
        first = next((i for i, p in enumerate(pts) if p.stable == 0), None)
        if first is None:
            return None
        if first == 0 or not self.settings.refine or pts[first - 1].stable != 1:
            return pts[first].value
        lo, hi = pts[first - 1], pts[first]
        tol = self.settings.tolerance
        while hi.value - lo.value > tol * max(abs(lo.value), abs(hi.value), 1e-300):
            try:
                mid = self.point(0.5 * (lo.value + hi.value), lo.state)
            except (ConvergenceError, ModelError) as err:
                self.warn(f"the boundary is bracketed by {lo.value:.8g} and {hi.value:.8g}: the "
                          f"bisection stopped at {0.5 * (lo.value + hi.value):.8g}: {err}")
                return hi.value
            if mid.stable < 0:
                self.warn(f"the boundary is bracketed by {lo.value:.8g} and {hi.value:.8g}: no "
                          f"eigenvalue found at {mid.value:.8g}, where the bisection stopped")
                return hi.value
            lo, hi = (lo, mid) if mid.stable == 0 else (mid, hi)
        return 0.5 * (lo.value + hi.value)

    def track(self) -> tuple[NDArray, NDArray]:
        """``(k, m)`` eigenvalues and frequencies, columns following each mode (NaN: missing).

        Consecutive values' modes are matched by the largest ``|x_a^H M x_b|`` over normalized
        vectors (an assignment problem), so crossing frequencies keep their lines.
        """
        from scipy.optimize import linear_sum_assignment  # only a sweep needs it (0.09 s)

        m = max((len(p.eigen.values) for p in self.points), default=0)
        k = len(self.points)
        P = np.full((k, m), np.nan + 1j * np.nan)
        prev = None
        for i, pt in enumerate(self.points):
            X = pt.eigen.vectors
            vals = pt.eigen.values
            cols = np.arange(len(vals))
            if prev is not None and len(vals) and prev[0].shape[1]:
                Xp, colsp = prev
                MX = pt.mass @ X
                norm = np.sqrt(np.abs(np.einsum("ij,ij->j", X.conj(), MX)))
                normp = np.sqrt(np.abs(np.einsum("ij,ij->j", Xp.conj(), pt.mass @ Xp)))
                C = np.abs(Xp.conj().T @ MX) / np.outer(np.maximum(normp, 1e-300),
                                                         np.maximum(norm, 1e-300))
                rows, new = linear_sum_assignment(-C)
                cols = np.full(len(vals), -1)
                cols[new] = colsp[rows]
                free = [c for c in range(m) if c not in set(cols[cols >= 0])]
                for j in np.flatnonzero(cols < 0):
                    cols[j] = free.pop(0)
            P[i, cols] = vals
            prev = (X, cols)
        return P, np.abs(P.imag)

    def summary(self) -> list[str]:
        """Lines for the run summary: the range, each end's verdict, the boundary or unknowns."""
        s = self.settings
        pts = self.points
        lines = [f"{len(pts)} values of the {s.parameter} from {pts[0].value:.6g} to "
                 f"{pts[-1].value:.6g}"]
        for p in (pts[0], pts[-1]) if len(pts) > 1 else pts:
            w = np.sort(p.eigen.frequencies)[:3]
            lines.append(f"at {p.value:.6g}: lowest frequencies "
                         + (", ".join(f"{x:.6g}" for x in w) + " rad/s" if len(w) else "none")
                         + f"; {p.verdict.describe()}")
        unknown = [p.value for p in pts if p.stable < 0]
        if unknown:
            lines.append(f"unknown at {len(unknown)} value(s) (no eigenvalue found): "
                         + ", ".join(f"{v:.6g}" for v in unknown[:10])
                         + (" ..." if len(unknown) > 10 else ""))
        if self.boundary is not None:
            lines.append(f"UNSTABLE from {s.parameter} = {self.boundary:.8g}")
        elif unknown:
            lines.append(f"stable at the {len(pts) - len(unknown)} values with eigenvalues; "
                         "unknown at the others")
        else:
            lines.append("stable over the range")
        return lines

    def write(self, results, base) -> None:
        """``/sweep/<step>/`` and the two PNGs (module docstring)."""
        from fem.io import files, plots

        s = self.settings
        P, W = self.tracked
        values = np.array([p.value for p in self.points])
        max_real = np.array([p.max_real for p in self.points])
        max_real_bound = np.array([p.verdict.max_real_bound for p in self.points])
        stable = np.array([p.stable for p in self.points], dtype=np.int8)
        boundary = np.nan if self.boundary is None else self.boundary
        results.write_linear(self.name, {"parameter": values, "eigenvalues": P,
                                         "frequencies": W, "error_bounds": self._bounds(P),
                                         "max_real": max_real, "max_real_bound": max_real_bound,
                                         "stable": stable},
                             {}, {"parameter": s.parameter, "boundary": boundary,
                                  "method": s.method, "shift": s.shift,
                                  "geometric": s.geometric}, group="sweep")
        label = "spin (rad/s)" if s.parameter == "spin" else "load factor"
        b = None if self.boundary is None else self.boundary
        plots.campbell(files.sweep_png_path(results.path, self.name, "campbell"), values, W,
                       label=label, orders=s.parameter == "spin", boundary=b,
                       title=f"Campbell diagram: step '{self.name}'")
        plots.stability(files.sweep_png_path(results.path, self.name, "stability"), values,
                        max_real, label=label, boundary=b,
                        title=f"stability: step '{self.name}'")


    def _bounds(self, P: NDArray) -> NDArray:
        """``(k, m)`` error bounds of the tracked eigenvalues ``P`` (NaN where ``P`` is)."""
        B = np.full(P.shape, np.nan)
        for i, pt in enumerate(self.points):
            for j in np.flatnonzero(np.isfinite(P[i])):
                k = np.flatnonzero(pt.eigen.values == P[i, j])
                if len(k):
                    B[i, j] = pt.eigen.bounds[k[0]]
        return B


def check_values(values, where: str) -> None:
    """A sweep's values: at least one, at most :data:`MAX_VALUES`, increasing."""
    from fem.errors import DeckError

    if not values:
        raise DeckError(where, "expected at least one value")
    if len(values) > MAX_VALUES:
        raise DeckError(where, f"at most {MAX_VALUES} values (each is a Newton solve and an "
                        f"eigen-solve), got {len(values)}")
    if np.any(np.diff(values) <= 0):
        raise DeckError(where, "expected increasing values")


