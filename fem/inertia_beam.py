"""Consistent (cubic Hermite) inertia of co-rotational beams: an inertia group beside the nodal one.

Meijaard's eq. 17 with ``eps1 = 0`` (notes/meijaard.md, section 1.12) places the elastic line at

    r(xi) = N1 x_p + N2 d_p + N3 x_q + N4 d_q,       d_a = l0 R_a a        (E, 4, 3) "y-slots"

with the cubic Hermite functions ``N1..N4``, the nodal positions ``x_a`` and the *directors*
``d_a``: the element's reference axis ``a`` carried by the nodal rotation ``R_a`` and scaled by
``l0``. ``r`` is linear in ``y = (x_p, d_p, x_q, d_q)``, so the kinetic energy of ``rho A`` is a
quadratic form with a *constant* matrix in the spatial velocities ``u = dy/dt = (v_p, w_p x d_p,
v_q, w_q x d_q)``::

    T = 1/2 u . M u,   M = rho A l0 / 420 [[156, 22, 54, -13], [22, 4, 13, -3],
                                           [54, 13, 156, -22], [-13, -3, -22, 4]]  (x) I_3

(eq. 19 with ``l0 A theta_dot = d_dot``). At the reference this is the classical Hermite mass
(156/22/54/13/4/3 over 420; :meth:`ConsistentBeamInertia.element_mass`). Its convective terms
(eq. 20) are not written separately: they come out of the momentum form below. The rotary inertia
of the cross-section stays lumped, ``rho I l0 / 2`` and ``rho J l0 / 2`` per node, in the nodal
group (:meth:`fem.elements.beam.Beam.lumped_inertia`): a constant body inertia, which Simo-Wong's
form integrates exactly.

Mid-point family (:meth:`ConsistentBeamInertia.midpoint_force`). The nodal velocity updates are
untouched (``v1 = 2 dx/h - v0``, ``W1 = 2 Theta/h - W0``). With the momenta ``pi = M u`` at both
ends and the mid-point slot velocities ``u_m = (u0 + u1)/2``, a constant ``M`` gives the identity

    T1 - T0 = (pi1 - pi0) . u_m        (exact: u1.Mu1 - u0.Mu0 = (u1 - u0).M(u1 + u0)).

Translations: ``h u_m = dx``, so the force ``(pi1 - pi0)_x / h`` does the work
``(pi1 - pi0)_x . u_m``. Directors: ``h u_m`` is *exactly linear* in the spatial rotation
increment ``theta`` of the node: with ``theta = R0 Theta = R1 Theta`` and
``Q - I = jl(theta) hat(theta)`` (``Q = exp(hat(theta))``),

    h u_m = theta x d1 + (h/2) (I - Q) d_dot0 = C theta,
    C = -hat(d1) + (h/2) jl(theta) hat(d_dot0),

so the nodal moment ``C^T (pi1 - pi0)_d / h`` does the work ``(pi1 - pi0)_d . u_m``. Summed,
``f . inc = T1 - T0`` to round-off, at any step size and rotation: the energy-conserving scheme
keeps its guarantee. Linear momentum ``sum pi_x`` (the Hermite functions of the positions sum to
one) changes by ``h sum f_x``: conserved exactly in free motion. Angular momentum
``sum y x pi`` is *not* exact with this moment: it changes by ``h`` times the moment of the
inertial forces about the mid-point positions plus, per node, ``h (C^T dpi_d/h - m_a)`` where
``m_a = (d1 x pi1 - d0 x pi0)/h - u_m x pi_m`` is the moment that would close it; the difference
is ``(1/4) (d_dot1 - d_dot0) x (pi1 - pi0) + O(h^3)``, third order per step (measured in
``tests/test_consistent_inertia.py``).

No other force closes both balances while the director rates are rigid, ``d_dot = w x d``, and
the rates follow the mid-point family's updates. Take a *rigid* increment ``dx_a = c + psi x
x_m,a``, every node turned by ``psi`` (the increments on which the elastic forces, with neither
resultant nor moment about the mid-point positions, do no work). Any ``f`` with ``f . inc = T1 -
T0``, resultant ``dP/h`` and moment ``dL/h`` would do the work ``c . dP/h + psi . dL/h`` on it, so
``T1 - T0 = c . dP/h + psi . dL/h`` is necessary, and it involves the kinematics and the velocity
update only. Writing ``y_m = (y0 + y1)/2`` and using ``sum u_m x pi_m = 0`` (``M`` symmetric),
the two sides differ by ``sum_d [e . (dpi_d + pi_m,d x psi) - z . (pi_m,d x psi)]`` with ``e =
u_m,d - psi x d_m / h`` and ``z = (d1 - d0 - psi x d_m)/h``. The lumped inertia has no
translation-director coupling: there it reduces to Simo & Wong's rigid body and holds exactly.
The Hermite mass couples ``pi_d`` to the translations, and ``e`` cannot vanish: ``(w0 x d0 + w1 x
d1)/2 = psi x (d0 + d1)/(2h)`` asks ``w1 x d1`` for a vector that is not normal to ``d1``. The
defect is 1e-3 (2D) and 4e-4 (3D) of the kinetic energy at 0.1 rad per step with either the
exponential or the Cayley rotation update (``test_no_inertial_force_closes_energy_and_angular_
momentum_with_rigid_director_rates``). Both balances at once need director *velocities* as
unknowns of their own, updated by the mid-point rule ``d_dot1 = 2 (d1 - d0)/h - d_dot0`` with the
rigidity of the directors a constraint (Betsch & Steinmann 2001, Comput. Methods Appl.
Mech. Engrg. 191, 467-488; the same ``y``-slot mid-point form as Romero & Armero 2002, Int. J.
Numer. Meth. Engng 54, 1683-1716, whose rods carry no translation-director coupling): a
different state than the nodal ``(v, w)`` of this code. Energy and linear momentum stay exact.

Tangent: exact along Newton's corrections of ``s1`` (translations ``dx``, spatial spins ``dw``;
2D embedded as spins about z): ``d d1 = -hat(d1) dw``, ``d d_dot1 = -(hat(d_dot1) + (2/h) hat(d1)
jl_inv(theta)^T) dw`` (the Simo-Wong identity ``dTheta = jl_inv(Theta)^T R1^T dw``),
``d theta = jl_inv(theta) dw`` and ``d(jl(theta)^T y)/dtheta = -jl^T kh(theta, jl^T y)``.

Newmark family (:meth:`ConsistentBeamInertia.newmark_force`): ``f_y = M d2y/dt2`` with
``d2y_d = alpha x d + w x (w x d)``, nodal ``f_x = f_y,x``, ``m_a = d_a x f_y,d``, and its exact
tangent for the Newmark rates.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from fem import rotations as so3

#: Hermite mass pattern on the y-slots (x_p, d_p, x_q, d_q), times rho A l0
PATTERN = np.array([[156, 22, 54, -13], [22, 4, 13, -3],
                    [54, 13, 156, -22], [-13, -3, -22, 4]], dtype=float) / 420
_X, _D = [0, 2], [1, 3]                 # slots of positions and directors


class ConsistentBeamInertia:
    """The consistent ``rho A`` inertia of one co-rotational beam group (see the module doc).

    Parameters
    ----------
    system : the assembled system (``system.model.groups[index]`` is the beam group)
    index : position of the beam group in ``model.groups``

    Attributes
    ----------
    index : the element group the force and tangent blocks belong to
    mu : (E,) ``rho A l0`` ; a : (E, 3) reference axis (global = nodal material axes) times ``l0``
    """

    def __init__(self, system, index: int):
        g = system.model.groups[index]
        self.index, self.group = index, g
        self.dim = g.dim
        self.conn = g.conn
        rhoA = getattr(g, "inertia_per_length", {"rhoA": g.props["rho"] * g.props["A"]})["rhoA"]
        self.mu = rhoA * g.l0
        axes = g._reference_axes()
        self.a = axes[:, :, 0] * g.l0[:, None]
        # element DOFs in the 12-vector of the 3D embedding (2D: ux, uy, rz per node)
        self.cols = np.array([0, 1, 5, 6, 7, 11]) if self.dim == 2 else np.arange(12)
        self.M = self.mu[:, None, None] * PATTERN          # (E, 4, 4)

    # --- kinematics ---------------------------------------------------------------------------
    def _slots(self, state, R: NDArray | None = None):
        """Directors ``d (E, 2, 3)``, slot velocities ``u (E, 4, 3)`` and spins ``w (E, 2, 3)``."""
        R = state.rotation_matrices() if R is None else R
        d = np.einsum("eaij,ej->eai", R[self.conn], self.a)
        v, w = self._rates(state.v)
        u = np.empty((len(d), 4, 3))
        u[:, _X] = v
        u[:, _D] = so3.cross(w, d)
        return d, u, w

    def _rates(self, arr: NDArray) -> tuple[NDArray, NDArray]:
        """Translational and spatial angular rates ``(E, 2, 3)`` of a nodal rate array."""
        e = arr[self.conn]
        t = np.zeros(e.shape[:2] + (3,))
        w = np.zeros_like(t)
        if self.dim == 2:
            t[..., :2], w[..., 2] = e[..., :2], e[..., 2]
        else:
            t, w = e[..., :3], e[..., 3:6]
        return t, w

    def _momenta(self, u: NDArray) -> NDArray:
        return np.einsum("eij,ejk->eik", self.M, u)

    # --- energy and momenta -------------------------------------------------------------------
    def kinetic_energy(self, state) -> float:
        """``1/2 u . M u`` summed over the group."""
        _, u, _ = self._slots(state)
        return 0.5 * float(np.einsum("eik,eik->", u, self._momenta(u)))

    def linear_momentum(self, state) -> NDArray:
        """(3,) ``sum pi_x``."""
        _, u, _ = self._slots(state)
        return self._momenta(u)[:, _X].sum(axis=(0, 1))

    def angular_momentum(self, state, X: NDArray) -> NDArray:
        """(3,) ``sum y x pi`` about the origin."""
        d, u, _ = self._slots(state)
        pi = self._momenta(u)
        x = (X + state.u)[self.conn]
        return (so3.cross(x, pi[:, _X]) + so3.cross(d, pi[:, _D])).sum(axis=(0, 1))

    def nodal_mass(self, n: int) -> NDArray:
        """(n,) translational mass per node, ``rho A l0 / 2`` (diagonal estimates only)."""
        out = np.zeros(n)
        for k in range(2):
            np.add.at(out, self.conn[:, k], 0.5 * self.mu)
        return out

    def element_mass(self, state) -> NDArray:
        """(E, nd, nd) the mass ``L^T M L`` on the nodal velocities (``L``: ``d_dot = -hat(d) w``).

        At the reference: the classical Hermite mass of ``rho A`` (Przemieniecki), in global axes.
        """
        d, _, _ = self._slots(state)
        L = self._velocity_map(d)
        out = self._ltml(L, L)
        return out[:, self.cols][:, :, self.cols]

    def _velocity_map(self, d: NDArray) -> NDArray:
        """(E, 4, 3, 12) ``du_slot / d(nodal rates)`` in the 3D embedding."""
        E = len(d)
        L = np.zeros((E, 4, 3, 12))
        eye = np.eye(3)
        L[:, 0, :, 0:3], L[:, 2, :, 6:9] = eye, eye
        L[:, 1, :, 3:6], L[:, 3, :, 9:12] = -so3.hat(d[:, 0]), -so3.hat(d[:, 1])
        return L

    def _ltml(self, Lr: NDArray, Lc: NDArray) -> NDArray:
        """(E, 12, 12) ``sum_ij M_ij Lr_i^T Lc_j``."""
        return np.einsum("eiak,eij,ejal->ekl", Lr, self.M, Lc)

    # --- inertial forces of the integrator families -------------------------------------------
    def midpoint_force(self, s0, s1, kin, h: float, tangent: bool = True):
        """Element inertial forces ``(E, nd)`` of the mid-point family and their tangent.

        ``s1.v`` must hold the mid-point velocities of the step (``midpoint_velocities``).
        ``f . inc = T1 - T0`` exactly (module doc).
        """
        if getattr(kin, "dpsi", None) is not None:
            return self._midpoint_force_cayley(s0, s1, kin, h, tangent)
        E = len(self.mu)
        R1 = s1.rotation_matrices()
        d0, u0, _ = self._slots(s0)
        d1, u1, _ = self._slots(s1, R1)
        dpi = self._momenta(u1 - u0)
        theta = self._theta(kin)                                   # (E, 2, 3) spatial
        ddot0 = u0[:, _D]
        dpid = dpi[:, _D]
        jlT = np.swapaxes(so3.jl(theta), -1, -2)
        z = np.einsum("eaij,eaj->eai", jlT, dpid)                 # jl^T dpi_d
        f = np.zeros((E, 2, 6))
        f[:, :, :3] = dpi[:, _X] / h
        f[:, :, 3:] = (so3.cross(d1[:, :, :], dpid) - 0.5 * h * so3.cross(ddot0, z)) / h
        f = f.reshape(E, 12)
        if not tangent:
            return f[:, self.cols], None
        # d(u1) / d(corrections): translations 2/h, directors Dv
        jliT = np.swapaxes(so3.jl_inv(theta), -1, -2)
        Dv = -so3.hat(u1[:, _D]) - (2 / h) * so3.hat(d1) @ jliT      # (E, 2, 3, 3)
        Lu = np.zeros((E, 4, 3, 12))
        eye = np.eye(3)
        Lu[:, 0, :, 0:3], Lu[:, 2, :, 6:9] = 2 / h * eye, 2 / h * eye
        Lu[:, 1, :, 3:6], Lu[:, 3, :, 9:12] = Dv[:, 0], Dv[:, 1]
        dpi_du = np.einsum("eij,ejak->eiak", self.M, Lu)            # (E, 4, 3, 12)
        K = np.zeros((E, 2, 6, 12))
        K[:, :, :3] = dpi_du[:, _X] / h
        hat_ddot0 = so3.hat(ddot0)
        # d z = jl^T d dpi_d - jl^T kh(theta, z) jl_inv(theta) dw
        dz = np.einsum("eaij,eajk->eaik", jlT, dpi_du[:, _D])
        dz_w = -jlT @ so3.kh(theta, z) @ so3.jl_inv(theta)          # (E, 2, 3, 3)
        Kr = (np.einsum("eaij,eajk->eaik", so3.hat(d1), dpi_du[:, _D])
              - 0.5 * h * np.einsum("eaij,eajk->eaik", hat_ddot0, dz))
        own = so3.hat(dpid) @ so3.hat(d1) - 0.5 * h * hat_ddot0 @ dz_w
        Kr[:, 0, :, 3:6] += own[:, 0]
        Kr[:, 1, :, 9:12] += own[:, 1]
        K[:, :, 3:] = Kr / h
        K = K.reshape(E, 12, 12)
        return f[:, self.cols], K[:, self.cols][:, :, self.cols]

    def _midpoint_force_cayley(self, s0, s1, kin, h: float, tangent: bool):
        """2D, rotations paired with Cayley parameters ``psi`` (``w1 = 2 psi/h - w0``).

        ``d1 - d0 = psi x d_m`` (``d_m = (d0 + d1)/2``), so ``h u_m = psi (e_z x d1 + (h/2) w0
        d_m) = psi c`` and the moment ``c . dpi_d / h`` does the work ``dpi_d . u_m``. Tangent
        along the angle corrections: ``d d1 = e_z x d1``, ``d psi = (1 + psi^2/4)``, ``d u1_d =
        (2/h) dpsi e_z x d1 - w1 d1``, ``d c = -d1 + (h/4) w0 e_z x d1``.
        """
        E = len(self.mu)
        d0, u0, _ = self._slots(s0)
        d1, u1, _ = self._slots(s1)
        dpi = self._momenta(u1 - u0)
        dpid = dpi[:, _D]
        w0 = s0.v[self.conn][:, :, 2:3]                              # (E, 2, 1)
        w1 = s1.v[self.conn][:, :, 2:3]
        ez = np.array([0.0, 0.0, 1.0])
        zd1 = np.cross(ez, d1)
        c = zd1 + 0.5 * h * w0 * 0.5 * (d0 + d1)                     # (E, 2, 3)
        f = np.zeros((E, 2, 6))
        f[:, :, :3] = dpi[:, _X] / h
        f[:, :, 5] = np.einsum("eai,eai->ea", c, dpid) / h
        f = f.reshape(E, 12)
        if not tangent:
            return f[:, self.cols], None
        dpsi = kin.dpsi[self.conn][:, :, None]
        Du = 2 / h * dpsi * zd1 - w1 * d1                            # (E, 2, 3)
        Lu = np.zeros((E, 4, 3, 12))
        eye = np.eye(3)
        Lu[:, 0, :, 0:3], Lu[:, 2, :, 6:9] = 2 / h * eye, 2 / h * eye
        Lu[:, 1, :, 5], Lu[:, 3, :, 11] = Du[:, 0], Du[:, 1]
        dpi_du = np.einsum("eij,ejak->eiak", self.M, Lu)            # (E, 4, 3, 12)
        K = np.zeros((E, 2, 6, 12))
        K[:, :, :3] = dpi_du[:, _X] / h
        K[:, :, 5] = np.einsum("eai,eaik->eak", c, dpi_du[:, _D]) / h
        dc = -d1 + 0.25 * h * w0 * zd1
        own = np.einsum("eai,eai->ea", dc, dpid) / h
        K[:, 0, 5, 5] += own[:, 0]
        K[:, 1, 5, 11] += own[:, 1]
        K = K.reshape(E, 12, 12)
        return f[:, self.cols], K[:, self.cols][:, :, self.cols]

    def _theta(self, kin) -> NDArray:
        """(E, 2, 3) spatial rotation increments of the nodes (2D: about z)."""
        return kin.theta[self.conn]

    def newmark_force(self, state, kin=None, h=None, beta=None, gamma=None):
        """Element inertial forces ``(E, nd)`` ``d/dt(dT/du)`` and, given the step, the tangent."""
        E = len(self.mu)
        d, u, w = self._slots(state)
        acc, alpha = self._rates(state.a)
        ydd = np.empty_like(u)
        ydd[:, _X] = acc
        ydd[:, _D] = so3.cross(alpha, d) + so3.cross(w, u[:, _D])
        F = self._momenta(ydd)
        f = np.zeros((E, 2, 6))
        f[:, :, :3] = F[:, _X]
        f[:, :, 3:] = so3.cross(d, F[:, _D])
        f = f.reshape(E, 12)
        if kin is None:
            return f[:, self.cols]
        c, g = 1 / (beta * h * h), gamma / (beta * h)
        jliT = np.swapaxes(so3.jl_inv(self._theta(kin)), -1, -2)
        hd = so3.hat(d)
        Da = (-so3.hat(ydd[:, _D])
              - (c * hd + g * (so3.hat(u[:, _D]) + so3.hat(w) @ hd)) @ jliT)
        La = np.zeros((E, 4, 3, 12))
        eye = np.eye(3)
        La[:, 0, :, 0:3], La[:, 2, :, 6:9] = c * eye, c * eye
        La[:, 1, :, 3:6], La[:, 3, :, 9:12] = Da[:, 0], Da[:, 1]
        dF = np.einsum("eij,ejak->eiak", self.M, La)
        K = np.zeros((E, 2, 6, 12))
        K[:, :, :3] = dF[:, _X]
        Kr = np.einsum("eaij,eajk->eaik", hd, dF[:, _D])
        own = so3.hat(F[:, _D]) @ hd
        Kr[:, 0, :, 3:6] += own[:, 0]
        Kr[:, 1, :, 9:12] += own[:, 1]
        K[:, :, 3:] = Kr
        K = K.reshape(E, 12, 12)
        return f[:, self.cols], K[:, self.cols][:, :, self.cols]


def consistent_groups(system) -> list[ConsistentBeamInertia]:
    """The consistent inertia groups of the model's beam groups that ask for them."""
    return [ConsistentBeamInertia(system, i) for i, g in enumerate(system.model.groups)
            if getattr(g, "inertia", "lumped") == "consistent" and "mass" in g.capabilities]
