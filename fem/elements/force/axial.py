"""Axial spring-dampers between two nodes, or between a node and a ground point.

With ``d = x_b - x_a`` (the ground point for ``a``), the length ``l = |d|``, the direction
``n = d / l``, the deflection ``e = l - l_0`` (``l_0`` the free length, default the reference
length) and its rate ``e' = n . (v_b - v_a)``, the element pulls its ends together with the
tension ``N = F_s(e) + F_d(e')``: ``F_s`` the spring's force-deflection law (``k e`` plus the
preload, or a table), ``F_d`` the damper's force-velocity law (``c e'``, or a table); both
:class:`~fem.elements.force.laws.Curve`. The force on ``b`` is ``-N n``. Only translations take
part (a line of action through the nodes).

* static steps and the Newmark family (``evaluate``): ``N`` at the state (velocities from the
  state); the tangent ``F_s' n n^T + (N / l) (I - n n^T)`` and the damper's dependence on ``n``
  at fixed velocities (``F_d' (I - n n^T) v_r n^T / l``); the damper's tangent by the
  velocities, :meth:`damping` ``F_d' n n^T``, is added by the Newmark family times its
  ``gamma / (beta h)`` and taken by the linearize step into its ``D``;
* the energy-conserving scheme (``conserving``): the direction is the discrete gradient of the
  length, ``c = (d_0 + d_1) / (l_0 + l_1)`` (``c . (d_1 - d_0) = l_1 - l_0`` exactly), the
  spring's force the secant of its potential over the step and the damper's ``F_d`` of the mean
  rate ``(l_1 - l_0)/h``: ``f . dq = U_1 - U_0 + D`` to round-off, ``D = F_d (l_1 - l_0) >= 0``
  booked in the history's ``dissipated``. Its tangent is the exact derivative by ``q_1``.

As the contact family does it (:mod:`fem.elements.contact.group`).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from fem.elements.base import outer
from fem.elements.force.base import ForceElement, spread, spread_matrix
from fem.elements.force.laws import Curve


class SpringDamper(ForceElement):
    """Axial spring-dampers (module doc).

    Parameters
    ----------
    name : group name
    conn : (E, 2) node pairs ``(a, b)``, or (E, 1) nodes tied to the ground points
    X : (n, 3) reference coordinates
    dim : 2 or 3
    spring : force-deflection law, or None
    damper : force-velocity law, or None
    free_length : (E,) ``l_0``; None: the reference lengths
    ground : (E, 3) the ground points (``conn (E, 1)``)
    """

    type_name = "spring_damper"
    stress_names = ("force",)

    def __init__(self, name, conn, X, dim, spring: Curve | None, damper: Curve | None,
                 free_length=None, ground=None):
        super().__init__(name, conn, X, dim, dissipative=damper is not None)
        self.dof_names = ("ux", "uy") if dim == 2 else ("ux", "uy", "uz")
        self.spring = spring if spring is not None else Curve.linear(0.0)
        self.damper = damper
        self.ground = None if ground is None else np.asarray(ground, dtype=float).reshape(-1, 3)
        l_ref = np.linalg.norm(self._d0(), axis=1)
        self.free_length = (l_ref.copy() if free_length is None else
                            np.broadcast_to(np.asarray(free_length, dtype=float),
                                            (len(self),)).copy())
        self.formulation = "table" if len(self.spring.x) > 2 else "linear"

    # --- kinematics -----------------------------------------------------------------------------
    def _d0(self) -> NDArray:
        """(E, dim) the reference ``d``."""
        if self.nen == 1:
            return (self.X[:, 0] - self.ground)[:, :self.dim]
        return (self.X[:, 1] - self.X[:, 0])[:, :self.dim]

    def _d(self, state) -> NDArray:
        u = state.u[self.conn][:, :, :self.dim]
        return self._d0() + (u[:, -1] - (u[:, 0] if self.nen == 2 else 0.0))

    def _relative(self, q: NDArray) -> NDArray:
        """(E, dim) ``b`` minus ``a`` of an element vector."""
        return q if self.nen == 1 else q[:, self.dim:] - q[:, :self.dim]

    def _at(self, state):
        d = self._d(state)
        l = np.linalg.norm(d, axis=1)
        n = d / l[:, None]
        vr = self._relative(self.element_vector(state.v))
        rate = np.einsum("ei,ei->e", n, vr)
        return (d, l, n, vr, rate) + self._laws(l, rate)

    def _laws(self, l: NDArray, rate: NDArray) -> tuple[NDArray, NDArray, NDArray, NDArray]:
        """``F_s, F_s', F_d, F_d'``: the spring at the length ``l``, the damper at ``rate``."""
        Fs, dFs = self.spring(l - self.free_length)
        Fd, dFd = (np.zeros(len(self)), np.zeros(len(self))) if self.damper is None \
            else self.damper(rate)
        return Fs, dFs, Fd, dFd

    # --- at a state -----------------------------------------------------------------------------
    def evaluate(self, state, tangent: bool = True):
        """Force ``(E, nd)`` and tangent ``(E, nd, nd)`` at ``state`` (module doc)."""
        _, l, n, vr, _, Fs, dFs, Fd, dFd = self._at(state)
        N = Fs + Fd
        f = spread(N[:, None] * n, self.nen)
        if not tangent:
            return f, None
        P = np.eye(self.dim) - outer(n, n)
        k = (dFs[:, None, None] * outer(n, n) + (N / l)[:, None, None] * P
             + (dFd / l)[:, None, None] * outer(n, (P @ vr[:, :, None])[..., 0]))
        return f, spread_matrix(k, self.nen)

    def damping(self, state) -> NDArray:
        """(E, nd, nd) ``F_d' n n^T``: the force's derivative by the velocities."""
        _, _, n, _, _, _, _, _, dFd = self._at(state)
        return spread_matrix(dFd[:, None, None] * outer(n, n), self.nen)

    def stress(self, state) -> NDArray:
        """(E, 1) the tension ``N``."""
        _, _, _, _, _, Fs, _, Fd, _ = self._at(state)
        return (Fs + Fd)[:, None]

    def energy(self, state) -> NDArray:
        """(E,) the spring's potential ``U(e)``."""
        return self.spring.integral(np.linalg.norm(self._d(state), axis=1) - self.free_length)

    def power(self, state) -> NDArray:
        """(E,) ``F_d e'``."""
        _, _, _, _, rate, _, _, Fd, _ = self._at(state)
        return Fd * rate

    def outputs(self, state) -> dict[str, NDArray]:
        """Per element: tension, spring and damper forces, deflection, its rate, dissipated."""
        _, l, _, _, rate, Fs, _, Fd, _ = self._at(state)
        out = {"force": Fs + Fd, "spring_force": Fs, "damper_force": Fd,
               "deflection": l - self.free_length, "deflection_rate": rate}
        return self._history_outputs(state, out)

    def properties(self) -> dict[str, NDArray]:
        """Free length per element."""
        return {"free_length": self.free_length}

    def options(self) -> dict[str, str]:
        """The laws' kinds."""
        return {"spring": self.formulation,
                "damper": "none" if self.damper is None else
                ("table" if len(self.damper.x) > 2 else "linear")}

    # --- the energy-conserving scheme -----------------------------------------------------------
    def conserving(self, s0, s1, sm, inc, hist):
        """Algorithmic force, its tangent, the energy at ``s1`` and the history (module doc)."""
        h = s1.t - s0.t
        d0, d1 = self._d(s0), self._d(s1)
        l0, l1 = np.linalg.norm(d0, axis=1), np.linalg.norm(d1, axis=1)
        S_l = l0 + l1
        c = (d0 + d1) / S_l[:, None]
        n1 = d1 / l1[:, None]
        dc = (np.eye(self.dim) - outer(c, n1)) / S_l[:, None, None]
        e0, e1 = l0 - self.free_length, l1 - self.free_length
        S, dS = self.spring.secant(e0, e1)
        N, dN = S, dS
        D = np.zeros(len(self))
        if self.damper is not None:
            # l_1 - l_0 = c . (d_1 - d_0), from the displacements' increment: no cancellation
            # of the lengths when the step is small beside them
            du = (s1.u - s0.u)[self.conn][:, :, :self.dim]
            dl = np.einsum("ei,ei->e", c, du[:, -1] - (du[:, 0] if self.nen == 2 else 0.0))
            Fd, dFd = self.damper(dl / h)
            N, dN = N + Fd, dN + dFd / h
            D = Fd * dl
        f = spread(N[:, None] * c, self.nen)
        K = spread_matrix(dN[:, None, None] * outer(c, n1) + N[:, None, None] * dc, self.nen)
        return f, K, self.spring.integral(e1), self._booked(hist, D)
