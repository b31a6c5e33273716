"""Penalty contact groups: spheres on nodes against each other, or against a plane.

A pair's gap ``g`` is the distance between the sphere surfaces: ``|x_b - x_a| - (R_a + R_b)``
for two spheres on nodes (:class:`SphereContact`), ``(x - p) . n - R`` for a sphere (or a bare
node, ``R = 0``) against the plane through ``p`` with unit normal ``n`` pointing to the open side
(:class:`PlaneContact`: the ground; the nodes of beams or shells). The penetration is
``delta = -g``; the normal law (:mod:`.laws`) gives a compressive force ``F >= 0`` along the
gradient of the gap, zero when it is open. Only translations take part: the forces act at the
nodes (a sphere's friction makes no moment about its centre).

Friction: regularized Coulomb, ``f_t = -mu F v_t / max(|v_t|, v_s)`` against the relative
tangential velocity ``v_t`` (the velocity scale ``v_s``): exact Coulomb above ``v_s``, a viscous
force below it, so a body held by friction creeps at ``|v_t| = v_s |f_t| / (mu F)``.

Evaluations:

* static steps and the Newmark family (``evaluate``): the force at the state, velocities from
  the state; the tangent is the elastic part's (the damping and friction tangents, which need the
  integrator's rate coefficients, are not included: Newton converges linearly while they act);
* the energy-conserving scheme (``conserving``): the elastic force is the discrete gradient of
  the contact potential, ``f . (q_1 - q_0) = Phi(delta_1) - Phi(delta_0)`` to round-off over any
  step, the one in which the contact closes or opens included: ``F`` is the secant of the law
  (:meth:`.laws.NormalLaw.step`) and the direction the discrete gradient of the gap
  (``(d_0 + d_1) / (l_0 + l_1)`` for two spheres, ``n`` for a plane); damping and friction act
  with the step's mean rates and take exactly the energy booked in the pair's history
  (``dissipated``). Its tangent is the exact derivative by ``q_1`` (damping, friction and the
  turning of the step's normal included).

History per pair (``conserving_start`` / ``conserving``): ``approach_speed`` (the rate of
penetration when the contact closed), ``max_penetration``, ``contact_time`` (of the current or
last contact, while its force acts, from the crossings interpolated linearly within the steps) and
``dissipated`` (energy taken since the dynamic step began).

Time steps (``check_step``, ``max_step``, called by dynamic steps through
:mod:`fem.analysis.events`): a step that closes a contact deeper than ``max_penetration`` times
the estimated largest penetration ``delta_m = ((n + 1) m v^2 / (2 K))^(1/(n+1))`` is refused
(and halved); while a contact is closed the step is at most the contact time
``t_c = C delta_m / v`` (:func:`.laws.contact_time_factor`, Hertz: ``2.94 delta_m / v``, Ma et
al. eq. 15) over ``steps_per_contact``, and an open pair approaching at ``v`` limits the step to
about the time it needs to close.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from fem.elements.base import EvaluatedGroup, outer, spread_matrix
from fem.elements.contact.laws import HISTORY_LAWS, NormalLaw, contact_time_factor

HISTORY = ("approach_speed", "max_penetration", "contact_time", "dissipated")


def history_of(state, name: str) -> dict | None:
    """The group's history in ``state`` (None before a dynamic step set one)."""
    return state.history.get(name) or None


class Contact(EvaluatedGroup):
    """What both contact groups share: the law, friction, step forms and step control.

    Parameters
    ----------
    name : group name
    conn : (E, nen) node indices
    X : (n, 3) reference coordinates
    dim : 2 or 3
    law : the normal law (:class:`.laws.NormalLaw`)
    friction : Coulomb coefficient ``mu`` (0: none)
    velocity_scale : ``v_s`` of the regularization
    max_penetration : fraction of ``delta_m`` a closing step may reach
    steps_per_contact : time steps per estimated contact time, at least
    """

    type_name = "contact"
    cell_type = "line"
    stress_names = ("normal_force",)

    def __init__(self, name, conn, X, dim, law: NormalLaw, friction=0.0, velocity_scale=1e-3,
                 max_penetration=0.1, steps_per_contact=40):
        super().__init__(name, conn, X, dim)
        self.dof_names = ("ux", "uy") if dim == 2 else ("ux", "uy", "uz")
        self.law = law
        self.friction = float(friction)
        self.velocity_scale = float(velocity_scale)
        self.max_penetration = float(max_penetration)
        self.steps_per_contact = int(steps_per_contact)
        self.formulation = law.kind
        caps = {"stiffness", "mass", "energy_conserving", "step_control"}
        if law.dissipative or self.friction > 0:
            caps.add("dissipation")
        self.capabilities = frozenset(caps)

    # --- geometry, given by each pair type ------------------------------------------------------
    def _gap(self, state, hessian: bool = True) -> tuple[NDArray, NDArray, NDArray, NDArray]:
        """``g (E,)``, its gradient ``(E, nd)``, Hessian ``(E, nd, nd)``, normal ``(E, dim)``.

        The Hessian only if ``hessian`` (else None): the step control needs the gaps alone.
        """
        raise NotImplementedError

    def _gap_step(self, s0, s1):
        """The gap over a step and its discrete gradient.

        ``g0, g1``, the discrete gradient ``G (E, nd)`` (``G . dq = g1 - g0``), ``dG/dq1``, the
        gradient at ``s1``, the step's normal ``(E, dim)`` and its derivative by the relative
        end position ``(E, dim, dim)``.
        """
        raise NotImplementedError

    def _relative(self, q: NDArray) -> NDArray:
        """(E, dim) relative motion of an element vector ``(E, nd)`` (b minus a, or the node)."""
        raise NotImplementedError

    def _spread(self, phi: NDArray) -> NDArray:
        """(E, nd) the element vector of a force ``phi (E, dim)`` on the relative motion."""
        raise NotImplementedError

    # --- friction -------------------------------------------------------------------------------
    def _friction(self, F, vt):
        """``phi (E, dim) = mu F v_t / max(|v_t|, v_s)`` and ``|v_t|``, ``max(|v_t|, v_s)``."""
        s = np.linalg.norm(vt, axis=1)
        den = np.maximum(s, self.velocity_scale)
        return (self.friction * F / den)[:, None] * vt, s, den

    def _tangential(self, rel, n):
        return rel - np.einsum("ei,ei->e", rel, n)[:, None] * n

    # --- at a state -----------------------------------------------------------------------------
    def _at(self, state):
        g, grad, hess, n = self._gap(state)
        qdot = self.element_vector(state.v)
        rate = -np.einsum("ei,ei->e", grad, qdot)
        hist = history_of(state, self.name) if self.law.kind in HISTORY_LAWS else None
        F, dF = self.law.force(-g, rate, hist)
        phi = None
        if self.friction > 0:
            phi = self._friction(F, self._tangential(self._relative(qdot), n))[0]
        return g, grad, hess, rate, F, dF, phi

    def evaluate(self, state, tangent: bool = True):
        """Force ``(E, nd)`` and elastic tangent ``(E, nd, nd)`` at ``state`` (module doc)."""
        g, grad, hess, _, F, dF, phi = self._at(state)
        f = -F[:, None] * grad
        if phi is not None:
            f = f + self._spread(phi)
        if not tangent:
            return f, None
        return f, dF[:, None, None] * outer(grad, grad) - F[:, None, None] * hess


    def stress(self, state) -> NDArray:
        """(E, 1) normal force."""
        return self._at(state)[4][:, None]

    def energy(self, state) -> NDArray:
        """(E,) the contact potential at the penetration of ``state``."""
        return self.law.potential(-self._gap(state, hessian=False)[0])

    def mass(self, state=None, lumped: bool = False) -> NDArray:
        """(E, nd, nd) zeros: contacts are massless."""
        return np.zeros((len(self), self.nd, self.nd))

    def outputs(self, state) -> dict[str, NDArray]:
        """Per pair: normal force, gap, its rate, tangential force; contact time, dissipated.

        The gap is negative for a penetration; the contact time and the dissipated energy are the
        history's (dynamic steps).
        """
        g, _, _, rate, F, _, phi = self._at(state)
        out = {"normal_force": F, "gap": g, "gap_rate": -rate,
               "tangential_force": (np.zeros(len(self)) if phi is None
                                    else np.linalg.norm(phi, axis=1))}
        hist = history_of(state, self.name)
        if hist is not None:
            out["contact_time"] = hist["contact_time"]
            out["dissipated"] = hist["dissipated"]
        return out

    def properties(self) -> dict[str, NDArray]:
        """Stiffness per pair."""
        return {"K": self.law.K}

    def options(self) -> dict[str, str]:
        """The normal law."""
        return {"law": self.law.kind}

    # --- the energy-conserving scheme -----------------------------------------------------------
    def conserving_start(self, state) -> dict:
        """The history at the start of a dynamic step (a contact closed there keeps its rate)."""
        g, grad, _, _ = self._gap(state, hessian=False)
        rate = -np.einsum("ei,ei->e", grad, self.element_vector(state.v))
        d = -g
        return {"approach_speed": np.where(d > 0, np.maximum(rate, 0.0), 0.0),
                "max_penetration": np.maximum(d, 0.0), "contact_time": np.zeros(len(self)),
                "dissipated": np.zeros(len(self))}

    def conserving(self, s0, s1, sm, inc, hist):
        """Algorithmic force, its tangent, the energy at ``s1`` and the history (module doc).

        The tangent is the exact derivative by the end positions, except where the Lankarani-
        Nikravesh approach speed is taken from the step that closes a contact.
        """
        h = s1.t - s0.t
        g0, g1, G, dG, grad1, nm, dn = self._gap_step(s0, s1)
        d0, d1 = -g0, -g1
        hist = self._closing(s0, d0, d1, h, hist)
        F, dF, U1, D = self.law.step(d0, d1, h, hist)
        f = -F[:, None] * G
        K = dF[:, None, None] * outer(G, grad1) - F[:, None, None] * dG
        if self.friction > 0:
            dr = self._relative(inc)
            vt = self._tangential(dr, nm) / h
            phi, s, den = self._friction(F, vt)
            f = f + self._spread(phi)
            D = D + np.einsum("ei,ei->e", phi, dr)
            eye = np.eye(self.dim)
            t = vt / np.where(s > 0, s, 1.0)[:, None]
            slide = (s > self.velocity_scale)[:, None, None]
            dphi = (self.friction * F / den)[:, None, None] * np.where(slide, eye - outer(t, t),
                                                                       eye)
            # d v_t / d(relative end position): the projection, and the step normal's turning
            J = (eye - outer(nm, nm) - outer(nm, dr) @ dn
                 - np.einsum("ei,ei->e", dr, nm)[:, None, None] * dn) / h
            Kt = spread_matrix(dphi @ J, self.nen)
            # through the normal force: d phi = mu v_t / den dF, dF = -dF/dd1 grad1 . dq1
            dir_ = self._spread(self.friction * vt / den[:, None])
            K = K + Kt - outer(dir_, dF[:, None] * grad1)
        return f, K, U1, self._advance(hist, d0, d1, h, D)

    def _closing(self, s0, d0, d1, h, hist) -> dict:
        """The history with the approach speed of the contacts this step closes."""
        closing = (d0 <= 0) & (d1 > 0)
        if not closing.any():
            return hist
        _, grad0, _, _ = self._gap(s0, hessian=False)
        rate0 = -np.einsum("ei,ei->e", grad0, self.element_vector(s0.v))
        v = np.where(rate0 > 0, rate0, (d1 - d0) / h)
        hist = dict(hist)
        hist["approach_speed"] = np.where(closing, v, hist["approach_speed"])
        hist["onset"] = closing & (rate0 <= 0)          # the step form's, not kept
        return hist

    def _advance(self, hist, d0, d1, h, D) -> dict:
        """The history at the end of the step.

        The contact time counts while the force acts: while ``delta`` is above zero, or above
        the permanent indentation ``delta_p = (1 - e^2) delta_m`` of the plastic law (its
        surfaces part there), with the crossings interpolated linearly within the step.
        """
        dm1 = np.maximum(hist["max_penetration"], d1)
        if self.law.kind == "hertz_plastic":
            lost = 1 - self.law.restitution**2
            d0, d1 = d0 - lost * hist["max_penetration"], d1 - lost * dm1
        closing, closed, opening = (d0 <= 0) & (d1 > 0), (d0 > 0) & (d1 > 0), (d0 > 0) & (d1 <= 0)
        dd = np.where(d1 != d0, d1 - d0, 1.0)
        t = hist["contact_time"]
        t = np.where(closing, h * d1 / dd, t)
        t = np.where(closed, t + h, t)
        t = np.where(opening, t + h * d0 / (-dd), t)
        return {"approach_speed": hist["approach_speed"], "max_penetration": dm1,
                "contact_time": t, "dissipated": hist["dissipated"] + D}

    # --- the Newmark family's history (fem.analysis.events) -------------------------------------
    def commit(self, s0, s1, hist) -> dict:
        """The history at ``s1`` for schemes that evaluate at states (trapezoidal dissipation)."""
        h = s1.t - s0.t
        d0, d1 = -self._gap(s0, hessian=False)[0], -self._gap(s1, hessian=False)[0]
        hist = self._closing(s0, d0, d1, h, hist)
        D = 0.5 * h * (self.power(s0) + self.power(s1))
        return self._advance(hist, d0, d1, h, D)

    def power(self, state) -> NDArray:
        """(E,) the power the damping and friction take at ``state``."""
        g, grad, _, rate, F, _, phi = self._at(state)
        Fe = self.law.elastic(-g)[0]
        P = (F - Fe) * rate
        if phi is not None:
            P = P + np.einsum("ei,ei->e", phi, self._relative(self.element_vector(state.v)))
        return P

    # --- time steps -----------------------------------------------------------------------------
    def _pair_mass(self, mass: NDArray) -> NDArray:
        """(E,) the pair's effective mass from nodal masses ``(n,)``."""
        m = mass[self.conn]
        if m.shape[1] == 1:
            return m[:, 0]
        ma, mb = m[:, 0], m[:, 1]
        both = (ma > 0) & (mb > 0)
        return np.where(both, ma * mb / np.where(both, ma + mb, 1.0), np.maximum(ma, mb))

    def _largest(self, m, v, which=slice(None)):
        """Estimated largest penetration of an elastic impact at ``v`` of mass ``m``.

        ``m`` and ``v`` are of the pairs ``which`` (a mask or all).
        """
        n, K = self.law.n, self.law.K[which]
        return ((n + 1) * m * v**2 / (2 * K)) ** (1 / (n + 1))

    def check_step(self, s0, s1, mass: NDArray) -> str | None:
        """Why the step ``s0 -> s1`` is refused (a contact closed too deep), or None."""
        g0, grad0, _, _ = self._gap(s0, hessian=False)
        d0, d1 = -g0, -self._gap(s1, hessian=False)[0]
        closing = (d0 <= 0) & (d1 > 0)
        if not closing.any():
            return None
        h = s1.t - s0.t
        rate0 = -np.einsum("ei,ei->e", grad0, self.element_vector(s0.v))
        v = np.maximum(rate0, (d1 - d0) / h)
        dm = self._largest(self._pair_mass(mass), v)
        deep = closing & (d1 > self.max_penetration * dm)
        if not deep.any():
            return None
        k = int(np.flatnonzero(deep)[0])
        return (f"contact '{self.name}' pair {k + 1} closes {d1[k]:.3g} deep, more than "
                f"max_penetration = {self.max_penetration:g} of its estimated largest "
                f"penetration {dm[k]:.3g}")

    def max_step(self, state, mass: NDArray) -> float:
        """The longest time step from ``state`` that resolves its impacts (module doc)."""
        g, grad, _, _ = self._gap(state, hessian=False)
        d = -g
        rate = -np.einsum("ei,ei->e", grad, self.element_vector(state.v))
        m = self._pair_mass(mass)
        out = np.inf
        closed = (d > 0) & (m > 0)
        if closed.any():
            v = np.sqrt(rate[closed] ** 2 + 2 * self.law.potential(d)[closed] / m[closed])
            dm = self._largest(m[closed], v, closed)
            ok = v > 0
            if ok.any():
                tc = contact_time_factor(self.law.n) * dm[ok] / v[ok]
                out = min(out, float(tc.min()) / self.steps_per_contact)
        coming = (d <= 0) & (rate > 0) & (m > 0)
        if coming.any():
            v = rate[coming]
            dm = self._largest(m[coming], v, coming)
            out = min(out, float(((-d[coming] + 0.5 * self.max_penetration * dm) / v).min()))
        return out


class SphereContact(Contact):
    """Spheres on nodes against each other: ``conn (E, 2)``, radii ``R (E, 2)``."""

    nen = 2

    def __init__(self, name, conn, X, dim, law, radii, **kw):
        super().__init__(name, conn, X, dim, law, **kw)
        self.R = np.broadcast_to(np.asarray(radii, dtype=float), (len(self), 2)).sum(axis=1)

    def _d(self, state):
        x = self.positions(state)[:, :, :self.dim]
        return x[:, 1] - x[:, 0]

    def _gap(self, state, hessian=True):
        d = self._d(state)
        l = np.linalg.norm(d, axis=1)
        n = d / l[:, None]
        grad = np.concatenate([-n, n], axis=1)
        if not hessian:
            return l - self.R, grad, None, n
        P = np.eye(self.dim) - outer(n, n)
        hess = spread_matrix(P / l[:, None, None])
        return l - self.R, grad, hess, n

    def _gap_step(self, s0, s1):
        d0, d1 = self._d(s0), self._d(s1)
        l0, l1 = np.linalg.norm(d0, axis=1), np.linalg.norm(d1, axis=1)
        S = l0 + l1
        c = (d0 + d1) / S[:, None]                      # (l1 - l0) = c . (d1 - d0), exactly
        n1 = d1 / l1[:, None]
        dc = np.eye(self.dim) / S[:, None, None] - outer(c, n1) / S[:, None, None]
        lc = np.linalg.norm(c, axis=1)
        nm = c / lc[:, None]
        dn = (np.eye(self.dim) - outer(nm, nm)) @ dc / lc[:, None, None]
        return (l0 - self.R, l1 - self.R, np.concatenate([-c, c], axis=1),
                spread_matrix(dc), np.concatenate([-n1, n1], axis=1), nm, dn)

    def _relative(self, q):
        return q[:, self.dim:] - q[:, :self.dim]

    def _spread(self, phi):
        return np.concatenate([-phi, phi], axis=1)


class PlaneContact(Contact):
    """Spheres (or bare nodes) on nodes against a plane: ``conn (E, 1)``, radius ``R (E,)``."""

    nen = 1
    cell_type = "vertex"

    def __init__(self, name, nodes, X, dim, law, point, normal, radius=0.0, **kw):
        super().__init__(name, np.asarray(nodes, dtype=np.int64)[:, None], X, dim, law, **kw)
        n = np.asarray(normal, dtype=float)[:dim]
        self.normal = n / np.linalg.norm(n)
        self.point = np.asarray(point, dtype=float)[:dim]
        self.R = np.broadcast_to(np.asarray(radius, dtype=float), (len(self),)).copy()
        # the reference gap, kept apart from the displacements (their digits)
        self.g_ref = (self.X[:, 0, :dim] - self.point) @ self.normal - self.R

    def _g(self, state):
        return self.g_ref + state.u[self.conn[:, 0], :self.dim] @ self.normal

    def _gap(self, state, hessian=True):
        E = len(self)
        n = np.broadcast_to(self.normal, (E, self.dim))
        return (self._g(state), n.copy(), np.zeros((E, self.dim, self.dim)) if hessian else None,
                n)

    def _gap_step(self, s0, s1):
        E = len(self)
        n = np.broadcast_to(self.normal, (E, self.dim)).copy()
        zero = np.zeros((E, self.dim, self.dim))
        return self._g(s0), self._g(s1), n, zero, n, n, zero

    def _relative(self, q):
        return q

    def _spread(self, phi):
        return phi

