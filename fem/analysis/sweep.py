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
Modes are tracked from one value to the next by their vectors (the mass-weighted MAC, an
assignment problem; a diverged mode's real pair ``+-a`` counted once:
:mod:`fem.analysis.rotordynamics`), so a line of the Campbell diagram is one mode even where
frequencies cross. Each value's verdict is *stable*, *unstable* (an eigenvalue whose real part
exceeds its error bound: divergence or flutter) or *unknown* (the solve found no eigenvalue
there, e.g. far past a buckling load: a warning names those values; unknown is never counted as
stable). Where the state first turns unstable after a stable value, with ``refine`` the boundary
is located by bisection on the parameter to ``tolerance`` (relative). A value without an
equilibrium (beyond a limit load) ends the sweep with a warning; the values before it are
written. ``equilibrium = false`` linearizes every value about the state the sweep starts from,
as given (no Newton; see :mod:`fem.analysis.linearize` for a free motion in the equilibrium).

A spin sweep linearizes in the frame turning with the spin; ``frame = "fixed"`` converts its
frequencies to the inertial frame (``|s w_r + Omega|``, ``s`` the whirl sense of the
eigenvector: exact for a rotor symmetric about the axis on isotropic supports, warned about
otherwise), ``frame = "rotating"`` (the default) keeps them. Each mode's whirl (forward: with the
spin) comes from its eigenvector, and the crossings of every line with the engine orders
``orders * spin`` (the critical speeds in the fixed frame) are located by interpolation and,
with ``refine``, by regula falsi with extra eigen-solves (:mod:`fem.analysis.rotordynamics`).

Written: ``/sweep/<step>/`` ``parameter`` (k,), ``eigenvalues`` (k, m) complex (as solved: the
rotating frame's for a spin), ``frequencies`` (k, m) rad/s (in the step's frame),
``error_bounds`` (k, m) (of the tracked eigenvalues), ``max_real`` (k,) (largest real part of
the non-neutral eigenvalues, of the neutral ones where all are, NaN where there is no
eigenvalue), ``max_real_bound`` (k,) its error bound, ``stable`` (k,) int: 1 stable, 0
unstable, -1 unknown, attribute ``boundary`` (NaN if no value is unstable); a spin sweep also
``whirl`` (k, m) int8 (+1 forward, -1 backward, 0 none or no spin, seen in the step's frame),
``whirl_ratio`` (k, m) (weaker over stronger whirl sense: 0 circular), ``critical_speeds``
(n,) rad/s with ``critical_orders``, ``critical_columns`` (the line, a column of
``frequencies``), ``critical_whirl``, ``critical_frequencies`` (rad/s), ``critical_refined``,
attributes ``frame`` and ``orders``. PNGs beside the results (axes in ``plot_units``):
``<out>_<step>_campbell.png`` (frequencies against the parameter, whirl as line styles, the
engine orders and their crossings) and ``<out>_<step>_stability.png`` (max Re p over the modes
with its error bound, round-off drawn as zero, the boundary marked).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from fem import interrupt
from fem.analysis import rotordynamics, sweep_deck
from fem.analysis.linear_model import Eigenvalues, linear_model
from fem.analysis.linearize import LinearizeStep
from fem.analysis.sweep_deck import FREQUENCY_UNITS, SweepSettings
from fem.errors import ConvergenceError, ModelError
from fem.solvers.linear_system import note_serial

log = logging.getLogger(__name__)


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
    #: its loads are a static step's (a linearize step's are not): the pattern it scales
    #: (:class:`ScaledLoads`) is the same, and a removed load ramps down with the pseudo-time
    LOADS_RAMP = True
    Settings = SweepSettings
    WRITES = ("plots",)
    nudge_singular_shift = True

    check = staticmethod(sweep_deck.check)

    def written_beside(self) -> tuple[str, ...]:
        """The Campbell diagram and the stability plot."""
        return self.WRITES

    def __init__(self, name, system, loads, settings: SweepSettings | None = None,
                 solver_options=None):
        super().__init__(name, system, loads, settings, solver_options)
        self.points: list[SweepPoint] = []
        self.boundary: float | None = None
        self.tracked: tuple[NDArray, NDArray] | None = None
        self.modes: list[rotordynamics.Modes] = []
        self.lines: rotordynamics.Lines | None = None
        self.criticals: list[rotordynamics.Crossing] = []

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

    CLOCK = "value"

    def progress_span(self) -> float:
        """The number of values: the progress counts the values done."""
        return float(len(self.settings.values))

    # --- the step -----------------------------------------------------------------------------
    def run(self, state, results):
        """Sweep from ``state`` (not changed), locate the boundary, write data and plots."""
        s = self.settings
        note_serial(f"step '{self.name}': the stability sweep (linearized models)")
        self.loads.begin(state)
        shown = getattr(results, "progress", None)
        try:
            start = state
            for i, v in enumerate(s.values):
                if shown is not None and i:
                    shown.update(float(i))
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
            if shown is not None:
                shown.update(float(len(self.points)))
            self.boundary = self._boundary()
        finally:
            self.close()
        self.tracked = self.track()
        self.criticals = self.critical_speeds()
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

    # --- lines, whirl, crossings (fem.analysis.rotordynamics) ---------------------------------
    @property
    def frame(self) -> str:
        """The frame of the frequencies: ``"rotating"`` (the default, and a load sweep's)."""
        return self.settings.frame or "rotating"

    @property
    def orders(self) -> list[float]:
        """A spin sweep's engine orders (default ``[1]``); none for a load sweep."""
        if self.settings.parameter != "spin":
            return []
        return [float(k) for k in (self.settings.orders if self.settings.orders is not None
                                   else [1.0])]

    def _axis(self) -> rotordynamics.Axis | None:
        if self.settings.parameter != "spin" or not self.points:
            return None
        model = self.system.model
        axis = [0.0, 0.0, 1.0] if model.dim == 2 or self.settings.axis is None \
            else self.settings.axis
        return rotordynamics.Axis.of(self.system.dofmap, model.slots, axis,
                                     self.points[0].eigen.vectors.shape[0])

    def _modes(self, p: SweepPoint, axis) -> rotordynamics.Modes:
        spin = p.value if self.settings.parameter == "spin" else 0.0
        return rotordynamics.Modes.of(p.value, p.eigen.values, p.eigen.vectors, p.mass, axis,
                                      spin)

    def track(self) -> tuple[NDArray, NDArray]:
        """``(k, m)`` eigenvalues and frequencies (in :attr:`frame`), a column per line.

        NaN where a line has no mode. Modes are followed by their mass-weighted MAC, a real
        pair ``+-a`` of a diverged mode counted once (:func:`fem.analysis.rotordynamics.track`),
        so crossing frequencies keep their lines and no line jumps to another mode.
        """
        axis = self._axis()
        self.modes = [self._modes(p, axis) for p in self.points]
        self.lines = rotordynamics.track(self.modes)
        P = self.lines.take(self.modes, lambda m: m.p)
        W = self.lines.take(self.modes, lambda m: m.frequencies(self.frame))
        if self.frame == "fixed":
            self._warn_elliptic()
        return P, W

    def _warn_elliptic(self) -> None:
        worst = (0.0, 0.0, 0)
        for m in self.modes:
            r = np.where(m.turns & (m.spin != 0.0), m.ratio, 0.0)
            if len(r) and r.max() > worst[0]:
                worst = (float(r.max()), m.spin, int(np.argmax(r)))
        if worst[0] > rotordynamics.ELLIPTIC:
            self.warn(f"frame = \"fixed\" assumes a rotor symmetric about the axis on isotropic "
                      f"supports, but at spin {worst[1]:.6g} a mode whirls elliptically "
                      f"(weaker/stronger sense {worst[0]:.2g}): its fixed-frame frequency is "
                      "its dominant harmonic only; the rotating frame is exact")

    def critical_speeds(self) -> list[rotordynamics.Crossing]:
        """A spin sweep's crossings of the lines with the engine orders (refined: ``refine``)."""
        if self.settings.parameter != "spin" or self.lines is None:
            return []
        axis = self._axis()

        def evaluate(value: float, i: int) -> rotordynamics.Modes:
            return self._modes(self.point(value, self.points[i].state), axis)

        try:
            return rotordynamics.crossings(self.modes, self.lines, self.frame, self.orders,
                                           evaluate if self.settings.refine else None,
                                           self.settings.tolerance)
        finally:
            self.close()

    def summary(self) -> list[str]:
        """Lines for the run summary: the range, each end's verdict, the boundary or unknowns."""
        s = self.settings
        pts = self.points
        lines = [f"{len(pts)} values of the {s.parameter} from {pts[0].value:.6g} to "
                 f"{pts[-1].value:.6g}"]
        for p in (pts[0], pts[-1]) if len(pts) > 1 else pts:
            w = np.sort(p.eigen.frequencies)[:3]
            lines.append(f"at {p.value:.6g}: lowest frequencies "
                         + (", ".join(f"{x:.6g}" for x in w) + " rad/s" + self._frame_note()
                            if len(w) else "none")
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
        return lines + self._rotor_lines()

    def _frame_note(self) -> str:
        return " (rotating frame)" if self.settings.parameter == "spin" else ""

    def _rotor_lines(self, most: int = 12) -> list[str]:
        """Summary lines of a spin sweep: the frame and the critical speeds (engine orders)."""
        s = self.settings
        if s.parameter != "spin":
            return []
        scale = FREQUENCY_UNITS[s.plot_units]
        unit = "" if s.plot_units == "rad/s" else f" ({{:.6g}} {s.plot_units})"
        orders = ", ".join(f"{k:g}x" for k in self.orders)
        head = f"{self.frame} frame; engine orders {orders or 'none'}: "
        if not self.criticals:
            return [head + "no crossing in the range"]
        lines = [head + f"{len(self.criticals)} crossings (critical speeds)"]
        whirl = {1: "forward", -1: "backward", 0: "no"}
        for c in self.criticals[:most]:
            lines.append(f"  spin {c.speed:.8g} rad/s" + unit.format(c.speed * scale)
                         + f": order {c.order:g}, line {c.column + 1}, {whirl[c.whirl]} whirl"
                         + ("" if c.refined else " (interpolated)"))
        if len(self.criticals) > most:
            lines.append(f"  ... and {len(self.criticals) - most} more: "
                         f"/sweep/{self.name}/critical_speeds")
        return lines

    def write(self, results, base) -> None:
        """``/sweep/<step>/`` and the two PNGs (module docstring)."""
        s = self.settings
        P, W = self.tracked
        values = np.array([p.value for p in self.points])
        max_real = np.array([p.max_real for p in self.points])
        max_real_bound = np.array([p.verdict.max_real_bound for p in self.points])
        stable = np.array([p.stable for p in self.points], dtype=np.int8)
        boundary = np.nan if self.boundary is None else self.boundary
        data = {"parameter": values, "eigenvalues": P, "frequencies": W,
                "error_bounds": self._bounds(P), "max_real": max_real,
                "max_real_bound": max_real_bound, "stable": stable}
        attrs = {"parameter": s.parameter, "boundary": boundary, "method": s.method,
                 "shift": s.shift, "geometric": s.geometric}
        if s.parameter == "spin":
            data.update(self._rotor_data())
            attrs.update({"frame": self.frame, "orders": np.array(self.orders, dtype=float)})
        results.write_linear(self.name, data, {}, attrs, group="sweep")
        self.plot(results, values, max_real, bound=max_real_bound)

    def _rotor_data(self) -> dict:
        """A spin sweep's whirl along the lines and its engine-order crossings (rad/s)."""
        lines, modes = self.lines, self.modes
        whirl = np.nan_to_num(lines.take(modes, lambda m: m.whirl(self.frame))).astype(np.int8)
        c = self.criticals
        return {"whirl": whirl,
                "whirl_ratio": lines.take(modes, lambda m: m.ratio),
                "critical_speeds": np.array([x.speed for x in c], dtype=float),
                "critical_orders": np.array([x.order for x in c], dtype=float),
                "critical_columns": np.array([x.column for x in c], dtype=np.int64),
                "critical_whirl": np.array([x.whirl for x in c], dtype=np.int8),
                "critical_frequencies": np.array([x.frequency for x in c], dtype=float),
                "critical_refined": np.array([x.refined for x in c], dtype=bool)}

    def plot(self, results, values: NDArray, max_real: NDArray,
             bound: NDArray | None = None) -> list[str]:
        """The Campbell diagram and the stability plot, handed to the results writer; their paths.

        ``bound (k,)``: the absolute error bound of ``max_real`` at each value (None: the
        plot shows the round-off band ``1e-9 max |p|`` instead, :func:`fem.io.plots.stability`).
        The writer draws them beside the results file
        (:meth:`fem.io.hdf5.ResultsFile.write_plots`).
        """
        s = self.settings
        spin = s.parameter == "spin"
        scale = FREQUENCY_UNITS[s.plot_units]
        x = values * scale if spin else values
        label = f"spin ({s.plot_units})" if spin else "load factor"
        b = None if self.boundary is None else self.boundary * (scale if spin else 1.0)
        _, W = self.tracked
        whirl = None
        if spin:
            whirl = np.nan_to_num(self.lines.take(self.modes, lambda m: m.whirl(self.frame)))
        what = {"fixed": "whirl frequency, fixed frame",
                "rotating": "frequency |Im p|, rotating frame"}[self.frame] if spin \
            else "frequency |Im p|"
        critical = [(c.speed * scale, c.frequency * scale, c.order, c.whirl)
                    for c in self.criticals]
        campbell = dict(parameter=x, frequencies=W * scale, label=label, whirl=whirl,
                        orders=self.orders, critical=critical, unit=s.plot_units,
                        frame=self.frame if spin else "", boundary=b,
                        ylabel=f"{what} ({s.plot_units})",
                        title=(f"Campbell diagram, {self.frame} frame: step '{self.name}'"
                               if spin else f"frequencies: step '{self.name}'"))
        size = np.array([np.abs(p.eigen.values).max(initial=0.0) for p in self.points])
        stability = dict(parameter=x, max_real=max_real, label=label, bound=bound, scale=size,
                         boundary=b, title=f"stability: step '{self.name}'")
        return results.write_plots(self.name, campbell, stability)


    def _bounds(self, P: NDArray) -> NDArray:
        """``(k, m)`` error bounds of the tracked eigenvalues ``P`` (NaN where ``P`` is)."""
        B = np.full(P.shape, np.nan)
        for i, pt in enumerate(self.points):
            for j in np.flatnonzero(np.isfinite(P[i])):
                k = np.flatnonzero(pt.eigen.values == P[i, j])
                if len(k):
                    B[i, j] = pt.eigen.bounds[k[0]]
        return B
