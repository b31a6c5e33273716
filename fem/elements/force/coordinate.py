"""Forces on a joint coordinate: springs, dampers, friction, stops, applied efforts, PD control.

A *coordinate* ``q`` is a revolute angle about an axis or a slide along one, of node ``b``
relative to node ``a`` (or to the ground), as :meth:`fem.constraints.joint.Joint.coordinates`
reports it. Its gradient and the derivative of the gradient come from the joints' rows
(:mod:`fem.constraints.joint_rows`): the 2D ``angle`` row (``theta_b - theta_a``), the ``slide``
rows (``(R_a e) . s``), and in 3D the driven revolute's ``turn`` row ``sin(phi - f)``, whose
gradient at ``f = phi`` is exactly that of the angle ``phi``. The generalized force
``Q(q, q', t)`` on the coordinate acts on the nodes as ``f = Q G`` (``G = dq/dx``), so it is
exactly the generalized force on that coordinate::

    Q = F_s(q - q_0) + F_l(q) + F_d(q') + T q' / max(|q'|, v_s) - E(t) - tau
    tau = K_p (r(t) - q) + K_d (r'(t) - q'),     T = T_f + mu r |R|

the spring ``F_s`` (linear or a table, free value ``q_0``), the stops ``F_l`` (one-sided penalty
contacts at ``q_min`` and ``q_max``, stiffness ``k_l``: a piecewise-linear law with the potential
``k_l (q - q_max)_+^2 / 2 + k_l (q_min - q)_+^2 / 2``), the damper ``F_d``, regularized Coulomb
friction of a given torque or force ``T_f`` (velocity scale ``v_s``: exact Coulomb above it,
viscous below), an applied effort ``E(t)`` (a time function; positive pushes ``q`` up) and a PD
controller on ``q`` with gains ``K_p``, ``K_d`` and setpoint ``r(t)``.

**Friction from the reaction.** With a coefficient ``mu`` the friction's limit grows by ``mu r
|R|``: ``R`` the joint's reaction, its Lagrange multipliers ``lambda`` (a revolute's joint force,
the ``point`` rows, with the pin radius ``r``; a prismatic's force normal to the slide, its
``slide`` rows, ``r = 1``); the moments the joint transmits do not press its surfaces here. The
multipliers are unknowns of the same Newton iteration: the force takes those of the iterate
(``state.multipliers``, the constraint group's positions and row scale handed over by
:meth:`bind_reactions` when the system is built), so a converged step satisfies the coupled
equations exactly, with no lag. The tangent omits the block ``d f / d lambda`` (an element
group's matrix has no multiplier columns): Newton converges linearly in that coupling, at the
rate ``mu r |dR/dlambda|`` of the friction's share of the reaction (the sliding block of
``cases/incline_prismatic`` takes one iteration a step, as with the same constant friction). The
energy-conserving scheme takes the multipliers of ``s1`` (the mid-point family's act over the
whole step), so the friction's work, booked in ``dissipated``, is the work of the force applied.

* static steps and the Newmark family (``evaluate``): ``Q`` at the state, tangent
  ``Q_q G G^T + Q_q' G (H v)^T + Q H`` (``H`` the coordinate's second derivative, ``Q_q'``'s
  term the rate's dependence on the positions at fixed velocities); :meth:`damping` is
  ``Q_q' G G^T`` (the linearize step's ``D``; ``K_p`` is in its ``K``);
* the energy-conserving scheme (``conserving``): ``G_d`` with ``G_d dq = q_1 - q_0`` exactly (the
  rows' discrete gradients; 3D angles: the ``turn`` row at ``f = (phi_0 + phi_1)/2``, scaled by
  ``dphi / (2 sin(dphi/2))``), spring and stops the secants of their potentials (energy exact),
  damper and friction on the mean rate ``(q_1 - q_0)/h``, their work booked in ``dissipated``;
  effort and controller at the mid-step time and mean state, their work ``(E + tau) (q_1 -
  q_0)`` booked in ``actuator_work`` (so ``total + damping - actuator_work`` is constant). The
  tangent is exact in 2D and for slides; for 3D angles it omits the derivative of the scale
  and of ``f`` (second order in the step's turn).

**Stick-slip** (``stick_slip``): instead of the regularized law, an elasto-plastic friction
element with a static limit ``T_s`` above the kinetic ``T`` (the reset-integrator model of
D. A. Haessig and B. Friedland, On the modeling and simulation of friction, J. Dyn. Sys. Meas.
Control 113 (1991) 354-362, with Karnopp's two limits): a stiff "bristle" of stiffness ``k_b``
between the coordinate and an anchor ``p`` (history), ``Q_b = k_b (q - p) + c_b q'`` (``c_b``
the bristle's damping, Canudas de Wit et al.'s sigma_1, IEEE Trans. Autom. Control 40 (1995)
419-425: it takes the energy of the relative velocity that sticking stops, which the undamped
stiff bristle would keep ringing, and may release a stuck joint). Stuck, the anchor stays:
the joint holds any effort up to ``T_s``, deflected by the effort over ``k_b``, without creep
(true sticking, where the regularized law creeps at ``v_s`` times the load's share). When
``|k_b (q - p)|`` would exceed the limit (``T_s`` stuck, ``T`` sliding; the energy-conserving
scheme compares the step's force, at the mean deflection) the joint slides: ``Q_b
= T sign(q - p)`` and the anchor follows, ``p = q - Q_b / k_b``; a sliding joint sticks again
when the trial force falls within ``T`` (its rate reversed). A return mapping at the step's end
from the anchor of its start, as in rate-independent plasticity. The bristle's energy ``k_b (q
- p)^2 / 2`` is part of the strain energy; the energy-conserving scheme takes, stuck, the secant
of it (exact work) and ``c_b dq / h`` (its work ``c_b dq^2 / h`` booked) and, sliding, ``T sign``
with the exact remainder ``Q_b dq - (U_1 - U_0) >= 0`` booked in ``dissipated``. The law is
built for the energy-conserving scheme only so far (the others refuse it: :meth:`commit`;
``evaluate`` gives the static steps and the linearize step a joint stuck at its anchor). The
tangent is
``k_b`` (and ``c_b`` by the rate) stuck, zero sliding on (a secant where an iterate slides from
a stuck start or against the start's slide: :meth:`CoordinateForce._bristle`; the limits'
dependence on the multipliers omitted as above). Output ``sliding``: 0 stuck, +-1 sliding up or
down, ``friction``: the bristle's force. A dynamic step starts stuck with the
bristle relaxed at the coordinate (``conserving_start``); other steps see the anchor the state
holds (the reference coordinate before any dynamic step): a joint stuck there up to ``T_s``.

3D angles are ``atan2`` values in ``(-pi, pi]``: a coordinate that passes ``pi`` jumps.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from fem.constraints import joint_rows
from fem.constraints.joint import Joint
from fem.elements.base import outer
from fem.elements.force.base import ForceElement
from fem.elements.force.laws import Curve
from fem.rotations import quat_identity

#: the 12 columns of a pair and the 2D ones (``ux, uy, rz`` of both)
_PLANE = np.array([0, 1, 5, 6, 7, 11])


class CoordinateGeometry(Joint):
    """A joint's geometry with the rows of one coordinate (no multipliers of its own).

    ``rows``: ``(("angle",),)`` (2D angle), ``(("slide", i),)`` or ``(("turn",),)`` (3D angle);
    the turn row's ``f`` is :attr:`f` (set before each use). With ``ground_a`` node ``a`` is the
    ground (at rest, unturned): ``conn`` then holds the node twice and only ``b``'s columns
    count.
    """

    def __init__(self, name, kind, pairs, offsets, frames, dim, rows, ground_a=False,
                 sign=None):
        super().__init__(name, kind, pairs, offsets, frames, dim)
        self.rows = rows
        self.n_multipliers = 1
        self.released = np.zeros((len(self), 1), dtype=bool)
        self.ground_a = ground_a
        if sign is not None:
            self.sign = np.asarray(sign, dtype=float)
        self.f = np.zeros(len(self))

    def _drive_at(self, t, derivative: int = 0):
        return self.f if derivative == 0 else np.zeros(len(self))

    def _rotations(self, state):
        R = super()._rotations(state)
        if self.ground_a:
            R[:, 0] = np.eye(3)
        return R

    def _geometry(self, state):
        if not self.ground_a:
            return super()._geometry(state)
        R = self._rotations(state)
        arms = np.einsum("eaij,eaj->eai", R, self.offsets)
        u = np.zeros((len(self), 3))
        u[:, :self.dim] = state.u[self.conn[:, 1], :self.dim]
        gap = u + (arms[:, 1] - self.offsets[:, 1]) - (arms[:, 0] - self.offsets[:, 0])
        return {"R": R, "arms": arms, "s": gap, "Fa": R[:, 0] @ self.frames,
                "Fb": R[:, 1] @ self.frames}

    def _step_rotations(self, s0, s1):
        theta = super()._step_rotations(s0, s1)
        if self.ground_a:
            theta[:, 0] = 0.0
        return theta

    def _angles(self, state):
        ang = state.rot[self.conn]
        return ang[:, 1] - (0.0 if self.ground_a else ang[:, 0])

    def raw(self, state) -> NDArray:
        """(E,) the coordinate of ``b`` relative to ``a`` (before :attr:`sign`)."""
        row = self.rows[0]
        if row[0] == "angle":
            return self._angles(state)
        geo = self._geometry(state)
        if row[0] == "slide":
            return np.einsum("ei,ei->e", geo["Fa"][:, :, row[1]], geo["s"])
        Fa, Fb = geo["Fa"], geo["Fb"]
        return np.arctan2(np.einsum("ei,ei->e", Fa[:, :, 1], Fb[:, :, 0]),
                          np.einsum("ei,ei->e", Fa[:, :, 0], Fb[:, :, 0]))


def identity_rotations(dim: int, n: int):
    """The rotation array of ``n`` unturned nodes."""
    return np.zeros(n) if dim == 2 else quat_identity(n)


class CoordinateForce(ForceElement):
    """Forces on a joint coordinate (module doc).

    Parameters
    ----------
    name : group name
    geometry : the coordinate's :class:`CoordinateGeometry` (its pairs; ``ground_a``: the
        group's ``conn`` holds the nodes alone)
    X : (n, 3) reference coordinates
    spring, damper : :class:`~fem.elements.force.laws.Curve` or None
    free : ``q_0`` of the spring
    friction : ``T_f`` (0: none); velocity_scale : ``v_s``
    reaction : ``(joint, rows, lever)`` friction from the reaction (module doc): the name of the
        joint group, the indices of its multipliers that make ``R`` and ``mu r`` (the
        coefficient times the pin radius, or the coefficient alone); None: none
    stick_slip : ``(T_s0, lever_s, k_b, c_b)``: the stick-slip law (module doc) with the static
        limit ``T_s = T_s0 + lever_s |R|``, the bristle's stiffness ``k_b`` and damping ``c_b``;
        None: the regularized law
    limits : ``(q_min, q_max)`` or None; limit_stiffness : ``k_l``
    effort : a time function or None
    controller : ``(K_p, K_d, r)`` (``r`` a time function) or None
    """

    type_name = "joint_force"
    stress_names = ("effort",)

    def __init__(self, name, geometry: CoordinateGeometry, X, spring=None, damper=None,
                 free=0.0, friction=0.0, velocity_scale=1.0, limits=None, limit_stiffness=0.0,
                 effort=None, controller=None, reaction=None, stick_slip=None):
        self.actuated = effort is not None or controller is not None
        self.reaction = reaction
        conn = geometry.conn[:, 1:] if geometry.ground_a else geometry.conn
        dim = geometry.dim
        super().__init__(name, conn, X, dim,
                         dissipative=damper is not None or friction > 0 or (
                             controller is not None and controller[1] > 0)
                         or reaction is not None or stick_slip is not None)
        self.stick_slip = stick_slip
        if reaction is not None:
            self.capabilities = self.capabilities | {"reactions"}
        self._lam = None                     # (E, r) multiplier positions, and their scale
        self._lam_scale = 1.0
        self.dof_names = ("ux", "uy", "rz") if dim == 2 else ("ux", "uy", "uz", "rx", "ry", "rz")
        self.additive_rotations = dim == 2        # 2D angles are additive (rows paired with them)
        self.geometry = geometry
        self.spring, self.damper, self.free = spring, damper, float(free)
        self.friction, self.velocity_scale = float(friction), float(velocity_scale)
        self.limits = None if limits is None else (float(limits[0]), float(limits[1]))
        self.stops = None if limits is None else _stops(self.limits, limit_stiffness)
        self.effort, self.controller = effort, controller
        self.cell_type = "vertex" if self.nen == 1 else "line"
        self.turn = geometry.rows[0][0] == "turn"
        self.planar_angle = geometry.rows[0][0] == "angle"
        cols = np.arange(12) if dim == 3 else _PLANE
        self._cols = cols[len(cols) // 2:] if geometry.ground_a else cols

    # --- the coordinate -------------------------------------------------------------------------
    def coordinate(self, state) -> NDArray:
        """(E,) ``q`` as reported (:attr:`Joint.sign`)."""
        return self.geometry.sign * self.geometry.raw(state)

    def _static(self, state, Q=None):
        """``q``, ``G (E, nd)`` and (``Q``) ``Q H (E, nd, nd)``."""
        geo = self.geometry
        if self.planar_angle:                      # 2D angles: constant G, no H
            G = np.zeros((len(self), self.nd))
            G[:, -1] = geo.sign
            if self.nen == 2:
                G[:, 2] = -geo.sign
            K = None if Q is None else np.zeros((len(self), self.nd, self.nd))
            return self.coordinate(state), G, K
        phi = geo.raw(state)
        mu = None if Q is None else (geo.sign * Q)[:, None]
        _, G, K = joint_rows.static_rows(geo, state, mu, phi)
        G = geo.sign[:, None] * G[:, 0, self._cols]
        K = None if K is None else K[:, self._cols][:, :, self._cols]
        return geo.sign * phi, G, K

    def bind_reactions(self, positions: NDArray, scale: float) -> None:
        """The joint's multipliers: ``positions (E, r)`` in ``State.multipliers``, row scale."""
        self._lam = np.asarray(positions)
        self._lam_scale = float(scale)

    def _reaction_norm(self, state) -> NDArray:
        """(E,) ``|R|`` of the joint (zero before the system binds it, or without)."""
        if self.reaction is None or self._lam is None or len(state.multipliers) == 0:
            return np.zeros(len(self))
        rows = self.reaction[1]
        lam = self._lam_scale * state.multipliers[self._lam[:, rows]]
        return np.sqrt(np.einsum("ei,ei->e", lam, lam))

    def friction_limit(self, state) -> NDArray:
        """(E,) ``T = T_f + mu r |R|`` (module doc); ``T_f`` before the system binds ``R``."""
        T = np.full(len(self), self.friction)
        if self.reaction is None or self._lam is None or len(state.multipliers) == 0:
            return T
        return T + self.reaction[2] * self._reaction_norm(state)

    def static_limit(self, state) -> NDArray:
        """(E,) the stick-slip law's ``T_s = T_s0 + mu_s r |R|``."""
        Ts0, lever = self.stick_slip[:2]
        return Ts0 + lever * self._reaction_norm(state)

    def _bristle(self, q, hist, state, q0=None):
        """Stick-slip return mapping at ``q`` from the anchor of ``hist`` (module doc).

        The bristle's elastic ``Q_b``, ``dQ_b/dq``, the new anchor and sliding directions (E,:
        0 stuck, +-1 sliding), or None without history (its damping: ``c_b`` where stuck). With
        ``q0`` (the energy-conserving scheme) the limits are those of the step's force, the mean
        deflection's: the stiff bristle's end values ring about it under the mid-point rule.

        ``dQ_b/dq`` is ``k_b`` stuck and zero sliding on, as the start slid; where the iterate
        slides from a stuck start or against the start's sliding, it is the secant ``T / |z|``
        (of the mean deflection with ``q0``: halved) instead: Newton's zero slope there would
        throw the iterate across the stuck range to the opposite slide, and back (the force is a
        plateau, a steep ramp and a plateau). The converged force is the law's either way.
        """
        if self.stick_slip is None or not hist or "anchor" not in hist:
            return None
        k = self.stick_slip[2]
        T, Ts = self.friction_limit(state), self.static_limit(state)
        z = q - hist["anchor"]
        zt = z if q0 is None else 0.5 * (z + q0 - hist["anchor"])
        limit = np.where(hist["sliding"] != 0, T, Ts)
        stick = np.abs(k * zt) <= limit
        direction = np.sign(zt)
        Q = np.where(stick, k * z, T * direction)
        on = direction == hist["sliding"]
        half = 1.0 if q0 is None else 0.5
        secant = half * T / np.maximum(np.abs(zt), 1e-300)
        dQ = np.where(stick, half * k, np.where(on, 0.0, secant))
        return (Q, dQ, np.where(stick, hist["anchor"], q - Q / k),
                np.where(stick, 0.0, direction))

    def _q_rate(self, state, G):
        return np.einsum("ei,ei->e", G, self.element_vector(state.v))

    def _Q(self, q, rate, t, T):
        """``Q (E,)``, ``dQ/dq``, ``dQ/dq'`` at a state (``T`` the friction's limit)."""
        E = len(self)
        Q, a, b = np.zeros(E), np.zeros(E), np.zeros(E)
        if self.spring is not None:
            F, dF = self.spring(q - self.free)
            Q, a = Q + F, a + dF
        if self.stops is not None:
            F, dF = self.stops(q)
            Q, a = Q + F, a + dF
        Qd, bd = self._dissipative(rate, T)
        Q, b = Q + Qd, b + bd
        tau, at, bt = self._actuator(q, rate, t)
        return Q - tau, a + at, b + bt

    def _dissipative(self, rate, T):
        """Damper and friction of limit ``T (E,)``: ``Q_d (E,)`` and ``dQ_d/dq'``."""
        Q, b = np.zeros(len(self)), np.zeros(len(self))
        if self.damper is not None:
            F, dF = self.damper(rate)
            Q, b = Q + F, b + dF
        if (self.friction > 0 or self.reaction is not None) and self.stick_slip is None:
            s = np.abs(rate)
            den = np.maximum(s, self.velocity_scale)
            Q = Q + T * rate / den
            b = b + np.where(s < self.velocity_scale, T / self.velocity_scale, 0.0)
        return Q, b

    def _actuator(self, q, rate, t):
        """The actuators' ``tau`` (pushing ``q`` up) and ``-dtau/dq``, ``-dtau/dq'``."""
        E = len(self)
        tau = np.zeros(E)
        a = b = 0.0
        if self.effort is not None:
            tau = tau + float(self.effort(t))
        if self.controller is not None:
            kp, kd, r = self.controller
            tau = tau + kp * (float(r(t)) - q) + kd * (float(r.derivative(t)) - rate)
            a, b = kp, kd
        return tau, a, b

    # --- at a state -----------------------------------------------------------------------------
    def evaluate(self, state, tangent: bool = True):
        """Force ``Q G`` and its tangent (module doc)."""
        # H, the coordinate's second derivative: the rows' d(G^T mu)/dq at mu = 1 (it is linear
        # in mu, so Q H needs no second evaluation of the rows)
        q, G, H = self._static(state, np.ones(len(self)) if tangent else None)
        rate = self._q_rate(state, G)
        Q, a, b = self._Q(q, rate, state.t, self.friction_limit(state))
        bristle = self._bristle(q, state.history.get(self.name), state)
        if bristle is not None:
            c = np.where(bristle[3] != 0, 0.0, self.stick_slip[3])
            Q, a, b = Q + bristle[0] + c * rate, a + bristle[1], b + c
        f = Q[:, None] * G
        if not tangent:
            return f, None
        Hv = np.einsum("eji,ej->ei", H, self.element_vector(state.v))      # d(q')/dx
        return f, (a[:, None, None] * outer(G, G) + b[:, None, None] * outer(G, Hv)
                   + Q[:, None, None] * H)

    def damping(self, state) -> NDArray:
        """(E, nd, nd) ``dQ/dq' G G^T``."""
        q, G, _ = self._static(state)
        b = self._Q(q, self._q_rate(state, G), state.t, self.friction_limit(state))[2]
        bristle = self._bristle(q, state.history.get(self.name), state)
        if bristle is not None:
            b = b + np.where(bristle[3] != 0, 0.0, self.stick_slip[3])
        return b[:, None, None] * outer(G, G)

    def energy(self, state) -> NDArray:
        """(E,) the spring's and the stops' potentials."""
        q = self.coordinate(state)
        U = np.zeros(len(self))
        if self.spring is not None:
            U = U + self.spring.integral(q - self.free)
        if self.stops is not None:
            U = U + self.stops.integral(q)
        hist = state.history.get(self.name)
        if self.stick_slip is not None and hist and "anchor" in hist:
            U = U + 0.5 * self.stick_slip[2] * (q - hist["anchor"]) ** 2
        return U

    def conserving_start(self, state) -> dict:
        """The base history, and (stick-slip) the anchor at the coordinate, stuck."""
        out = super().conserving_start(state)
        if self.stick_slip is not None:
            out["anchor"] = self.coordinate(state)
            out["sliding"] = np.zeros(len(self))
        return out

    def commit(self, s0, s1, hist) -> dict:
        """The Newmark family's history at ``s1`` (the base's).

        The stick-slip law is refused here (the integrators other than the energy-conserving
        one): the plain mid-point rule evaluates forces at a mid-point state without history,
        and the generalized-alpha runs of the incline diverged (open, issue 30).
        """
        if self.stick_slip is not None:
            from fem.errors import ModelError

            raise ModelError(f"joint forces '{self.name}': friction_law = \"stick_slip\" is "
                             "built for integrator = \"energy_conserving\" only so far")
        return super().commit(s0, s1, hist)

    def stress(self, state) -> NDArray:
        """(E, 1) the effort on the coordinate, ``-Q`` (positive pushes ``q`` up)."""
        q, G, _ = self._static(state)
        return -self._Q(q, self._q_rate(state, G), state.t,
                        self.friction_limit(state))[0][:, None]

    def power(self, state) -> NDArray:
        """(E,) power of the damper and the friction."""
        q, G, _ = self._static(state)
        rate = self._q_rate(state, G)
        return self._dissipative(rate, self.friction_limit(state))[0] * rate

    def actuator_power(self, state) -> NDArray:
        """(E,) power of the effort and the controller."""
        q, G, _ = self._static(state)
        rate = self._q_rate(state, G)
        return self._actuator(q, rate, state.t)[0] * rate

    def outputs(self, state) -> dict[str, NDArray]:
        """Per element: the coordinate, its rate, the effort, the actuator's share; history."""
        q, G, _ = self._static(state)
        rate = self._q_rate(state, G)
        T = self.friction_limit(state)
        Q = self._Q(q, rate, state.t, T)[0]
        out = {"effort": -Q, "coordinate": q, "coordinate_rate": rate,
               "actuator": self._actuator(q, rate, state.t)[0]}
        if self.reaction is not None:
            out["friction_limit"] = T
        hist = state.history.get(self.name)
        if self.stick_slip is not None and hist and "sliding" in hist:
            out["sliding"] = hist["sliding"]
            out["friction"] = self.stick_slip[2] * (q - hist["anchor"]) + np.where(
                hist["sliding"] != 0, 0.0, self.stick_slip[3] * rate)
        return self._history_outputs(state, out)

    def options(self) -> dict[str, str]:
        """The coordinate."""
        return {"coordinate": "slide" if self.geometry.rows[0][0] == "slide" else "angle"}

    # --- the energy-conserving scheme -----------------------------------------------------------
    def conserving(self, s0, s1, sm, inc, hist, spins=None):
        """Algorithmic force, its tangent, the energy at ``s1`` and the history (module doc)."""
        h = s1.t - s0.t
        geo = self.geometry
        q0, q1 = self.coordinate(s0), self.coordinate(s1)
        dq = q1 - q0
        E = len(self)
        N, dN = np.zeros(E), np.zeros(E)
        for curve, shift in ((self.spring, self.free), (self.stops, 0.0)):
            if curve is not None:
                S, dS = curve.secant(q0 - shift, q1 - shift)
                N, dN = N + S, dN + dS
        Qd, bd = self._dissipative(dq / h, self.friction_limit(s1))
        N, dN = N + Qd, dN + bd / h
        tm = 0.5 * (s0.t + s1.t)
        tau, at, bt = self._actuator(0.5 * (q0 + q1), dq / h, tm)
        N, dN = N - tau, dN + 0.5 * at + bt / h
        energy = self._potential(q1)
        booked = Qd * dq
        bristle = self._bristle(q1, hist, s1, q0)
        if bristle is not None:           # stuck: the secant of k_b z^2/2; sliding: T sign
            k, c = self.stick_slip[2:]
            z0, z1 = q0 - hist["anchor"], q1 - bristle[2]
            stick = bristle[3] == 0
            Qb = np.where(stick, 0.5 * k * (z0 + z1), bristle[0])
            U0, U1 = 0.5 * k * z0 * z0, 0.5 * k * z1 * z1
            N = N + Qb + np.where(stick, c * dq / h, 0.0)
            dN = dN + np.where(stick, c / h, 0.0) + bristle[1]
            energy = energy + U1
            booked = booked + np.where(stick, c * dq * dq / h, Qb * dq - (U1 - U0))
        # the discrete gradient of q (module doc)
        phi0, phi1 = geo.raw(s0), geo.raw(s1)
        geo.f = 0.5 * (phi0 + phi1) if self.turn else phi1
        scale = np.ones(E)
        if self.turn:
            half = 0.5 * (phi1 - phi0)
            small = np.abs(half) < 1e-4
            scale = np.where(small, 1 + half**2 / 6, half / np.where(small, 1.0, np.sin(half)))
        if self.planar_angle:
            _, G1, K = self._static(s1, N)
            return (N[:, None] * G1, dN[:, None, None] * outer(G1, G1), energy,
                    self._history(hist, booked, tau * dq, bristle))
        Gd, K = joint_rows.discrete_rows(geo, s0, s1, (geo.sign * N * scale)[:, None])
        if geo.dim == 2:
            Gd, K = Gd[..., _PLANE], K[:, _PLANE][:, :, _PLANE]
            cols = np.arange(6)
            cols = cols[3:] if geo.ground_a else cols
        else:
            cols = self._cols
        Gd = (geo.sign * scale)[:, None] * Gd[:, 0, cols]
        K = K[:, cols][:, :, cols]
        _, G1, _ = self._static(s1)
        f = N[:, None] * Gd
        Kt = dN[:, None, None] * outer(Gd, G1) + K
        return f, Kt, energy, self._history(hist, booked, tau * dq, bristle)

    def _potential(self, q) -> NDArray:
        """(E,) the spring's and the stops' potentials at ``q``."""
        U = np.zeros(len(self))
        if self.spring is not None:
            U = U + self.spring.integral(q - self.free)
        if self.stops is not None:
            U = U + self.stops.integral(q)
        return U

    def _history(self, hist, D, W, bristle) -> dict:
        out = self._booked(hist, D, W)
        if bristle is not None:
            out["anchor"], out["sliding"] = bristle[2], bristle[3]
        return out


def _stops(limits, k) -> Curve:
    """The stops' law: ``k (q - q_max)`` above, ``k (q - q_min)`` below, 0 between."""
    lo, hi = limits
    return Curve(np.array([lo - 1.0, lo, hi, hi + 1.0]), np.array([-k, 0.0, 0.0, k]))
