"""What every force element group shares: history, dissipation and the dynamic step's protocol.

A force element acts between two nodes (``conn (E, 2)``) or between a node and the ground
(``conn (E, 1)``, the ground point or orientation fixed); it is massless. Its damping (and a
joint's friction) takes energy: the history (``conserving_start`` / ``conserving``, kept by the
energy-conserving scheme; ``commit`` for the other integrators through
:mod:`fem.analysis.events`) holds ``dissipated``, the energy each element took since the dynamic
step began, which the step writes as ``energy/damping`` (capability ``"dissipation"``), and, for
elements that drive (a joint's applied torque or controller), ``actuator_work``, the work they did
on the model (``energy/actuator_work``).

With the energy-conserving scheme the dissipated energy is exact (the damping force acts on the
step's mean rate, its work is what is booked); the Newmark family books the trapezoidal rule of
the power ``F_d v`` at the step's ends. Static steps see the elastic force and tangent (velocities
zero). The linearize step takes :meth:`damping` into its ``D`` (capability ``"damping"``), the
Newmark family into its Newton matrix (times ``gamma / (beta h)``).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from fem.elements.base import EvaluatedGroup, spread_matrix  # noqa: F401 - for the family


class ForceElement(EvaluatedGroup):
    """Base class of force elements (module doc)."""

    cell_type = "line"
    #: whether the group does work of its own (an applied torque, a controller)
    actuated = False

    def __init__(self, name, conn, X, dim, dissipative: bool):
        super().__init__(name, conn, X, dim)
        self.nen = self.conn.shape[1]
        if self.nen == 1:
            self.cell_type = "vertex"
        self.dissipative = bool(dissipative)
        caps = {"stiffness", "mass", "energy_conserving"}
        if self.dissipative or self.actuated:
            caps |= {"step_control", "dissipation", "damping"}
        self.capabilities = frozenset(caps)

    # --- massless -------------------------------------------------------------------------------
    def mass(self, state=None, lumped: bool = False) -> NDArray:
        """(E, nd, nd) zeros: force elements are massless."""
        return np.zeros((len(self), self.nd, self.nd))

    def damping(self, state) -> NDArray:
        """(E, nd, nd) ``d f / d v`` at ``state`` (the linearize step's ``D``)."""
        return np.zeros((len(self), self.nd, self.nd))

    def power(self, state) -> NDArray:
        """(E,) power the damping takes at ``state``."""
        return np.zeros(len(self))

    def actuator_power(self, state) -> NDArray:
        """(E,) power the actuators give the model at ``state``."""
        return np.zeros(len(self))

    # --- history -------------------------------------------------------------------------------
    def conserving_start(self, state) -> dict:
        """``dissipated`` (and ``actuator_work``) from zero, when the group takes energy."""
        if not (self.dissipative or self.actuated):
            return {}
        out = {"dissipated": np.zeros(len(self))}
        if self.actuated:
            out["actuator_work"] = np.zeros(len(self))
        return out

    def _booked(self, hist: dict, D: NDArray, W: NDArray | None = None) -> dict:
        if not hist:
            return {}
        out = {"dissipated": hist["dissipated"] + D}
        if "actuator_work" in hist:
            out["actuator_work"] = hist["actuator_work"] + (0.0 if W is None else W)
        return out

    def commit(self, s0, s1, hist) -> dict:
        """The history at ``s1`` for the Newmark family: trapezoidal rule of the powers."""
        h = s1.t - s0.t
        D = 0.5 * h * (self.power(s0) + self.power(s1))
        W = 0.5 * h * (self.actuator_power(s0) + self.actuator_power(s1))
        return self._booked(hist, D, W)

    def check_step(self, s0, s1, mass) -> str | None:
        """Never refused."""
        return None

    def max_step(self, state, mass) -> float:
        """Any step."""
        return np.inf

    def _history_outputs(self, state, out: dict) -> dict:
        hist = state.history.get(self.name)
        if hist:
            out["dissipated"] = hist["dissipated"]
            if "actuator_work" in hist:
                out["actuator_work"] = hist["actuator_work"]
        return out


def spread(phi: NDArray, nen: int) -> NDArray:
    """(E, nen * k) the element vector of a force ``phi (E, k)`` on ``b`` minus ``a``."""
    return phi if nen == 1 else np.concatenate([-phi, phi], axis=1)
