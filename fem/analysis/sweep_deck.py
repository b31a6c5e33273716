"""The deck of a stability sweep: its keys (:class:`SweepSettings`) and their checks.

:class:`fem.analysis.sweep.SweepStep` declares them: :func:`check` runs once the deck builder
(:mod:`fem.io.build_steps`) has checked what every step shares, and checks the values, the loads
of a load sweep and the spin's axis, center, frame and orders.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fem.analysis.linearize_deck import refuse_floating_3d, spinning_superelements
from fem.analysis.settings import (
    MAX_ITERATIONS,
    MAX_MODES,
    REQUIRED,
    OneVariant,
    from_values,
    setting,
)
from fem.errors import DeckError

MAX_VALUES = 10_000       # a sweep's values: each is a Newton solve and an eigen-solve
MAX_ORDERS = 100          # engine orders: each is crossed with every line
#: the units of the Campbell diagram (``plot_units``) and their scales from rad/s
FREQUENCY_UNITS = {"rad/s": 1.0, "Hz": 1.0 / (2 * np.pi), "rpm": 60.0 / (2 * np.pi)}


@dataclass
class SweepSettings(OneVariant):
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
    refine: bool = setting("bool", True, "locate the first stability boundary by bisection "
                           "(and a spin's engine-order crossings by regula falsi)")
    tolerance: float = setting("float", 1e-6, "relative accuracy of the boundary (and of the "
                               "crossings)", positive=True)
    max_iterations: int = setting("int", 50, "Newton iterations per equilibrium",
                                  positive=True, maximum=MAX_ITERATIONS)
    frame: str = setting("str", None, "spin: the frame of the frequencies, whirl and Campbell "
                         "diagram: rotating (the linearization's, exact for any rotor; the "
                         "default) or fixed (converted, for a rotor symmetric about the axis on "
                         "isotropic supports)", choices=("rotating", "fixed"))
    orders: list = setting("vector", None, "spin: engine orders k (positive): the lines "
                           "k * spin drawn and crossed by the frequencies (critical speeds; "
                           f"default [1], at most {MAX_ORDERS})")
    plot_units: str = setting("str", "rad/s", "units of the plots' spin and frequency axes "
                              "(the results stay in rad/s)", choices=tuple(FREQUENCY_UNITS))
    equilibrium: bool = setting("bool", True, "find each value's equilibrium by Newton; false "
                                "linearizes about the state the sweep starts from, as given")

    # what LinearizeStep reads of its settings
    spin = None
    inputs = None
    outputs = None


def check(e, inputs, spec: dict) -> SweepSettings:
    """The settings of sweep ``e``; a load sweep needs loads."""
    s = from_values(SweepSettings, e.values)
    check_values(s.values, f"{e.where}.values")
    refuse_floating_3d(inputs.model, f"{e.where}.type", "a sweep (a linearization at each value)")
    dim = inputs.model.dim
    if s.parameter == "load":
        if not spec["loads"]:
            raise DeckError(f"{e.where}.loads", "a load sweep scales the step's loads: name "
                            "them (or leave loads out to take those no earlier step applied)")
        for key in ("axis", "center", "frame", "orders"):
            if getattr(s, key) is not None:
                raise DeckError(f"{e.where}.{key}", "used by parameter = \"spin\" only")
        return s
    spinning_superelements(inputs.model, f"{e.where}.parameter")
    if s.orders is not None:
        k = np.asarray(s.orders, dtype=float)
        if len(k) > MAX_ORDERS or not np.all(np.isfinite(k) & (k > 0)):
            raise DeckError(f"{e.where}.orders", f"expected at most {MAX_ORDERS} positive engine "
                            f"orders, e.g. [1, 2], got {list(s.orders)}")
    if s.axis is not None:
        if dim == 2:
            raise DeckError(f"{e.where}.axis", "a 2D model spins about z: leave axis out")
        if len(s.axis) != 3 or not np.any(np.asarray(s.axis, dtype=float)):
            raise DeckError(f"{e.where}.axis", f"expected a nonzero [ax, ay, az], got "
                            f"{list(s.axis)}")
    if s.center is not None and len(s.center) != dim:
        raise DeckError(f"{e.where}.center", f"expected {dim} coordinates, got "
                        f"{list(s.center)}")
    return s


def check_values(values, where: str) -> None:
    """A sweep's values: at least one, at most :data:`MAX_VALUES`, increasing."""
    if not values:
        raise DeckError(where, "expected at least one value")
    if len(values) > MAX_VALUES:
        raise DeckError(where, f"at most {MAX_VALUES} values (each is a Newton solve and an "
                        f"eigen-solve), got {len(values)}")
    if np.any(np.diff(values) <= 0):
        raise DeckError(where, "expected increasing values")
