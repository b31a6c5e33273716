"""The deck of a stability sweep: its values, and the spin's axis, center, frame and orders.

:meth:`fem.analysis.sweep.SweepStep.check` calls :func:`check` once the deck builder
(:mod:`fem.io.build_steps`) has checked what every step shares; the keys themselves are the fields
of :class:`fem.analysis.sweep.SweepSettings`.
"""

from __future__ import annotations

import numpy as np

from fem.analysis.settings import from_values
from fem.errors import DeckError

MAX_VALUES = 10_000       # a sweep's values: each is a Newton solve and an eigen-solve
MAX_ORDERS = 100          # engine orders: each is crossed with every line


def check(cls, e, inputs, spec: dict):
    """The settings (class ``cls``) of sweep ``e``; a load sweep needs loads."""
    s = from_values(cls, e.values)
    check_values(s.values, f"{e.where}.values")
    dim = inputs.model.dim
    if s.parameter == "load":
        if not spec["loads"]:
            raise DeckError(f"{e.where}.loads", "a load sweep scales the step's loads: name "
                            "them (or leave loads out to take those no earlier step applied)")
        for key in ("axis", "center", "frame", "orders"):
            if getattr(s, key) is not None:
                raise DeckError(f"{e.where}.{key}", "used by parameter = \"spin\" only")
        return s
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
