"""Path controls of static steps, and the one cut-back policy of every step.

A control says where the next increment goes and what to do after it (after OpenSees's
``LoadControl``, ``DisplacementControl`` and ``ArcLength`` integrators):

* :class:`LoadControl`: the load factor is the step's pseudo-time, from 0 to ``end`` (either
  sign); each increment is solved at a fixed load factor;
* :class:`DisplacementControl`: one free DOF moves by equal steps to its target; the load factor
  follows (Batoz & Dhatt), so it is an unknown of the increment (a *bordered* control);
* :class:`ArcLength`: Crisfield's cylindrical (``psi = 0``) or spherical (``psi = 1``) constraint
  ``|Du|^2 + psi^2 Dlam^2 |F|^2 = dl^2`` (Crisfield 1981; vol. 1, section 9.3), root chosen by the
  smallest angle with the current increment, ``dl`` scaled by ``sqrt(target / iterations)``.

Every control has ``finished``, ``start`` (the load factor the increment starts from, or for
load control the one it is solved at), ``accept(iterations, lam, Du)`` and ``cut()`` (halve
after a failure; a reason to give up, or None). Bordered controls add ``predictor`` and
``correction``, which :class:`fem.solvers.newton.Newton` calls.

:class:`CutBack` is the one step-size policy: halve on failure, grow back once convergence is fast
again, never beyond the nominal size, and give up (with a reason) below the smallest size or after
too many halvings in a row. Dynamic steps use it for their time step.

Each step keeps its resumable progress in a small dataclass, :class:`StaticProgress` (kept by the
controls) or :class:`DynamicProgress` (kept by the dynamic step's time loop): the controls' and the
loops' own variables live there, not in a copy, so that the progress written with a step's final
state (``/steps/<s>/state/progress``, :meth:`fem.io.hdf5.ResultsFile.write_state`) is the one the
step ran on, and, with the state, all a restart needs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from fem.errors import ConvergenceError, ModelError
from fem.solvers.newton import NewtonFailure

MAX_HALVINGS = 60        # halvings in a row of a load increment, whatever min_increment says


@dataclass
class StaticProgress:
    """Where a static step is on its path: with its state, all a restart needs.

    Attributes
    ----------
    control : ``"linear"``, ``"load"``, ``"displacement"`` or ``"arclength"``
    increments : converged increments
    load_factor : the load factor reached
    done : the path reached: ``|load_factor|`` under load control, the controlled DOF's motion
        under displacement control (unused by arc-length)
    size : the next increment: of ``|load_factor|``, of the DOF, or the arc length
    halvings : halvings of the increment in a row (:class:`CutBack`)
    sign : arc-length: the direction along the path (the predictor's sign)
    previous : arc-length: (n_free,) the last converged increment ``Du``, or None
    next_output : the increment count at which the next frame is written
    external_work : work of the external loads along the path (trapezoidal per increment)
    constraint_work : work of the reactions on prescribed motions along the path
    iterations : Newton iterations of the converged increments
    sign0 : load control: the tangent's sign at the start of the step (the limit-point watch's
        reference), or None
    warned : load control: whether the step warned of a limit point already
    reactions : (n_active,) the residual of the last converged increment (its reactions: the
        constraint work's trapezoidal rule), or None
    warnings : the step's warnings so far, one a line
    poor_solves : (k, 2) the load factor and backward error of converged increments whose
        linear solves stayed inaccurate, not yet warned of, or None
    """

    control: str = "linear"
    increments: int = 0
    load_factor: float = 0.0
    done: float = 0.0
    size: float = 0.0
    halvings: int = 0
    sign: float = 1.0
    previous: NDArray | None = None
    next_output: int = 1
    external_work: float = 0.0
    constraint_work: float = 0.0
    iterations: int = 0
    sign0: int | None = None
    warned: bool = False
    reactions: NDArray | None = None
    warnings: str = ""
    poor_solves: NDArray | None = None


@dataclass
class DynamicProgress:
    """Where a dynamic step is in time: with its state, all a restart needs.

    Attributes
    ----------
    time : the time reached, from the start of the step
    size : the time step of the next step (halved on failure, grown back: :class:`CutBack`)
    halvings : halvings of the time step in a row
    steps : converged time steps
    cuts : halvings of the time step in all
    next_output : the time of the next output frame (None: every ``[output] every``-th step)
    external_work, constraint_work : the work of the external loads and of the reactions on
        prescribed motions since the step started
    initial_energy : kinetic plus strain energy at the start (the energy balance's reference)
    initial_kinetic : kinetic energy at the start (the run summary's scale)
    initial_momenta : (2, 3) linear and angular momentum at the start (the run summary), or None
    t_start : the time the step started from (``state.t`` before it: the step's own clock
        starts at 0)
    kkt_warned : whether the step warned that the consistent reactions are singular
    warnings : the step's warnings so far, one a line
    poor_solves : (k, 2) the time and backward error of converged time steps whose linear
        solves stayed inaccurate, not yet warned of, or None
    """

    time: float = 0.0
    size: float = 0.0
    halvings: int = 0
    steps: int = 0
    cuts: int = 0
    next_output: float | None = None
    external_work: float = 0.0
    constraint_work: float = 0.0
    initial_energy: float = 0.0
    initial_kinetic: float = 0.0
    initial_momenta: NDArray | None = None
    t_start: float = 0.0
    kkt_warned: bool = False
    warnings: str = ""
    poor_solves: NDArray | None = None


@dataclass
class CutBack:
    """Step-size policy: halve on failure, grow back when fast, bounded (module docstring).

    The size and the halvings in a row live in the step's progress (``size`` and ``halvings`` of
    a :class:`StaticProgress` or :class:`DynamicProgress`).

    Attributes
    ----------
    progress : where the size and the halvings in a row are kept
    size : the current size (a magnitude)
    nominal : the largest size (the requested one)
    smallest : below it a halving gives up
    max_cuts : halvings allowed in a row
    grow : factor after a fast success
    fast : a success in at most this many iterations is fast (None: every success)
    what : what the size is, for messages ("increment", "time step", ...)
    too_small : the reason given below ``smallest`` (``{half}`` is the halved size)
    """

    progress: Any
    nominal: float
    smallest: float
    max_cuts: int
    grow: float = 1.5
    fast: int | None = None
    what: str = "increment"
    too_small: str = field(default="", repr=False)

    @property
    def size(self) -> float:
        """The current size."""
        return self.progress.size

    @size.setter
    def size(self, value: float) -> None:
        self.progress.size = float(value)       # a plain float in the progress (results file)

    @property
    def cuts(self) -> int:
        """Halvings in a row."""
        return self.progress.halvings

    @cuts.setter
    def cuts(self, value: int) -> None:
        self.progress.halvings = value

    def cut(self) -> str | None:
        """Halve after a failure; the reason to give up instead, or None."""
        self.cuts += 1
        if self.cuts > self.max_cuts:
            return f"{self.max_cuts} halvings of the {self.what} in a row"
        if self.size / 2 < self.smallest:
            return (self.too_small.format(half=self.size / 2) if self.too_small else
                    f"{self.what} below the minimum {self.smallest:.3g}")
        self.size /= 2
        return None

    def success(self, iterations: int) -> None:
        """A converged step of ``iterations``: the halvings in a row end; grow when fast."""
        self.cuts = 0
        if self.fast is None or iterations <= self.fast:
            self.size = min(self.grow * self.size, self.nominal)


class LoadControl:
    """Increments of the load factor from 0 to ``end`` (either sign), adapted by :class:`CutBack`.

    Parameters
    ----------
    end : the final load factor (nonzero)
    increments : the first increment is ``|end| / increments``
    min_increment, max_increment : bounds of the increment's magnitude (default: a 4096th of
        the first, and the first)
    fast_iterations : an increment converged in at most this many iterations lets the next grow
    """

    bordered = False

    def __init__(self, end: float, increments: int, min_increment: float | None = None,
                 max_increment: float | None = None, fast_iterations: int = 4):
        self.sign = 1.0 if end > 0 else -1.0
        self.end = abs(end)
        first = self.end / increments
        self.progress = StaticProgress(control="load", size=first, sign=self.sign)
        self.policy = CutBack(self.progress, smallest=abs(min_increment) if min_increment is not
                              None else first / 2**12,
                              nominal=abs(max_increment) if max_increment is not None else first,
                              max_cuts=MAX_HALVINGS, grow=1.5, fast=fast_iterations)

    @property
    def done(self) -> float:
        """``|lam|`` reached."""
        return self.progress.done

    @property
    def k(self) -> int:
        """Converged increments."""
        return self.progress.increments

    @property
    def lam(self) -> float:
        """The load factor reached."""
        return self.sign * self.done

    def finished(self, state=None) -> bool:
        """Whether the path has reached its end."""
        return self.done >= self.end - 1e-14 * self.end

    def start(self) -> float:
        """The load factor of the next increment, at which it is solved.

        It equals :attr:`lam` when the increment has become too small to change it.
        """
        self.policy.size = min(self.policy.size, self.end - self.done)
        return self.sign * (self.done + self.policy.size)

    def accept(self, iterations: int, lam: float, Du=None) -> None:
        """The increment to ``lam`` converged in ``iterations``."""
        p = self.progress
        p.done += self.policy.size
        p.increments += 1
        p.load_factor = float(self.lam)
        self.policy.success(iterations)

    def cut(self) -> str | None:
        """Halve the increment after a failure (a reason to give up, or None)."""
        return self.policy.cut()


class DisplacementControl:
    """One free DOF (position ``k`` of the free vector) moves by equal steps to ``target``."""

    bordered = True

    def __init__(self, k: int, target: float, increments: int):
        self.k = int(k)
        self.target = target
        step = abs(target) / increments
        self.progress = StaticProgress(control="displacement", size=step)
        self.policy = CutBack(self.progress, nominal=step, smallest=step / 2**10, max_cuts=20,
                              fast=4)

    @property
    def done(self) -> float:
        """The controlled DOF's motion reached."""
        return self.progress.done

    @property
    def lam(self) -> float:
        """The load factor reached."""
        return self.progress.load_factor

    @lam.setter
    def lam(self, value: float) -> None:
        self.progress.load_factor = float(value)

    @property
    def count(self) -> int:
        """Converged increments."""
        return self.progress.increments

    def finished(self, state=None) -> bool:
        """Whether the path has reached its end."""
        return abs(self.done) >= abs(self.target) - 1e-12 * abs(self.target)

    def start(self) -> float:
        """The load factor the increment starts from."""
        return self.lam

    def overshoots(self, trial) -> bool:
        """Whether the increment just solved passed a watched target (never: it is exact)."""
        return False

    def predictor(self, du_f: NDArray, F: NDArray) -> float:
        """Load-factor increment of the predictor along the tangent direction ``du_f``.

        The reference load must move the controlled DOF: where it does not (a DOF the loads
        never move, or a turning point of that DOF), no load factor reaches the target and
        halving the step cannot help, so the step stops with a reason.
        """
        self.step = min(self.policy.size, abs(self.target - self.done)) * np.sign(self.target)
        if not abs(du_f[self.k]) > 1e-12 * float(np.abs(du_f).max(initial=0.0)) \
                or not np.any(du_f):
            raise ConvergenceError("displacement control: the reference load does not move the "
                                   "controlled DOF here (its tangent response is zero); control "
                                   "a DOF the loads move, or use arc-length control past a "
                                   "turning point of this one")
        return self.step / du_f[self.k]

    def correction(self, du_r, du_f, Du, Dlam, F) -> float:
        """Load-factor correction of one Newton iteration: the controlled DOF stays put."""
        return -du_r[self.k] / du_f[self.k]

    def accept(self, iterations: int, lam: float, Du=None) -> None:
        """The increment converged at load factor ``lam``."""
        p = self.progress
        p.done = float(p.done + self.step)
        p.load_factor = float(lam)
        p.increments += 1
        self.policy.success(iterations)

    def cut(self) -> str | None:
        """Halve the increment after a failure (a reason to give up, or None)."""
        return self.policy.cut()


class ArcLength:
    """Crisfield's arc-length constraint (cylindrical or spherical); see the module docstring.

    Parameters
    ----------
    arc_length, max_arc_length : the initial and the largest ``dl``
    psi : load weight, 0 cylindrical, 1 spherical
    max_steps : increments at most
    target_iterations : iterations ``dl`` adapts to
    stop_load_factor : stop when ``|lam|`` reaches it
    watch : optional ``(node, slot, target, start)``: stop once that DOF reaches ``target``
        (landing on it exactly by a one-increment displacement control)
    free_index : ``(n, nslots)`` free-vector positions of the DOF slots (for the landing)
    """

    bordered = True

    def __init__(self, arc_length: float, max_arc_length: float | None, psi: float,
                 max_steps: int, target_iterations: int, stop_load_factor: float | None = None,
                 watch: tuple | None = None, free_index: NDArray | None = None):
        self.progress = StaticProgress(control="arclength", size=arc_length)
        self.policy = CutBack(self.progress, nominal=max_arc_length or 10 * arc_length,
                              smallest=arc_length / 2**12, max_cuts=20, what="arc length")
        self.psi2 = psi**2
        self.max_steps = max_steps
        self.target = target_iterations
        self.stop_lam = stop_load_factor
        self.watch = watch
        self.free_index = free_index

    @property
    def lam(self) -> float:
        """The load factor reached."""
        return self.progress.load_factor

    @property
    def count(self) -> int:
        """Converged increments."""
        return self.progress.increments

    @property
    def sign(self) -> float:
        """The direction along the path."""
        return self.progress.sign

    @property
    def previous(self) -> NDArray | None:
        """The last converged increment ``Du``."""
        return self.progress.previous

    @property
    def dl(self) -> float:
        """The arc length of the next increment."""
        return self.policy.size

    def finished(self, state) -> bool:
        """Whether the path has reached its end."""
        if self.count >= self.max_steps:
            return True
        if self.watch is not None and self.count > 0:
            node, dof, target, _ = self.watch
            if abs(state.dof_values()[node, dof] - target) <= 1e-12 * max(1.0, abs(target)):
                return True
        return self.stop_lam is not None and abs(self.lam) >= abs(self.stop_lam)

    def start(self) -> float:
        """The load factor the increment starts from."""
        return self.lam

    def short_of_target(self, state, describe) -> str | None:
        """What the path did not reach if it stopped at ``max_steps`` (None: it ended as asked).

        Without a target or a stop_load_factor, ``max_steps`` is the end the deck asked for.
        ``describe(node, dof)`` names a DOF for the message.
        """
        if self.count < self.max_steps or (self.watch is None and self.stop_lam is None):
            return None
        goals = []
        if self.watch is not None:
            node, dof, target, _ = self.watch
            value = state.dof_values()[node, dof]
            if abs(value - target) > 1e-12 * max(1.0, abs(target)):
                goals.append(f"its target {describe(node, dof, target)} (reached {value:.6g})")
        if self.stop_lam is not None:
            if abs(self.lam) >= abs(self.stop_lam):
                return None
            goals.append(f"its stop_load_factor {self.stop_lam:g} (reached {self.lam:.6g})")
        if len(goals) < (self.watch is not None) + (self.stop_lam is not None):
            return None                    # one goal was reached: that ended the path
        return (f"the arc-length path stopped after max_steps = {self.max_steps} increments "
                f"before {' or '.join(goals)}; raise max_steps or the arc length")

    def overshoots(self, trial) -> bool:
        """The increment just solved passed the watched DOF's target."""
        if self.watch is None:
            return False
        node, dof, target, start = self.watch
        return (trial.dof_values()[node, dof] - target) * (start - target) < 0

    def landing(self, state) -> DisplacementControl:
        """A one-increment displacement control from ``state`` onto the watched target."""
        node, dof, target, _ = self.watch
        landing = DisplacementControl(int(self.free_index[node, dof]),
                                      target - state.dof_values()[node, dof], 1)
        landing.lam = self.lam
        return landing

    def _load_term(self, F) -> float:
        return self.psi2 * float(F @ F)

    def predictor(self, du_f: NDArray, F: NDArray) -> float:
        """Load-factor increment of the predictor along the tangent direction ``du_f``."""
        if self.previous is not None:      # follow the path (Feng)
            self.progress.sign = 1.0 if du_f @ self.previous >= 0 else -1.0
        size = du_f @ du_f + self._load_term(F)
        if not size > 0:
            raise ModelError("arc-length control: the reference load is zero (it moves nothing); "
                             "give the step's loads a nonzero force or moment")
        return self.sign * self.dl / np.sqrt(size)

    def correction(self, du_r, du_f, Du, Dlam, F) -> float:
        """Load-factor correction of one Newton iteration."""
        fF = self._load_term(F)
        u = Du + du_r
        a = du_f @ du_f + fF
        b = 2 * (u @ du_f) + 2 * Dlam * fF
        c = u @ u + Dlam**2 * fF - self.dl**2
        disc = b * b - 4 * a * c
        if disc < 0:
            raise NewtonFailure("arc-length constraint has no real root", 0, [])
        roots = ((-b + np.sqrt(disc)) / (2 * a), (-b - np.sqrt(disc)) / (2 * a))
        # smallest angle between the new and the current increment
        return max(roots, key=lambda d: (u + d * du_f) @ Du + Dlam * (Dlam + d) * fF)

    def accept(self, iterations: int, lam: float, Du: NDArray | None = None) -> None:
        """The increment converged at ``lam`` in ``iterations``: adapt the arc length."""
        p = self.progress
        p.load_factor = float(lam)
        p.increments += 1
        p.previous = Du
        self.policy.cuts = 0
        self.policy.size = min(self.dl * np.sqrt(self.target / max(iterations, 1)),
                               self.policy.nominal)

    def cut(self) -> str | None:
        """Halve the arc length after a failure (a reason to give up, or None)."""
        return self.policy.cut()
