"""Consistent (cubic Hermite) inertia of co-rotational beams: an inertia group beside the nodal one.

Meijaard's eq. 17 with ``eps1 = 0`` (notes/meijaard.md, section 1.12) places the elastic line at

    r(xi) = N1 x_p + N2 d_p + N3 x_q + N4 d_q,       d_a = l0 R_a a        (E, 4, 3) "y-slots"

with the cubic Hermite functions ``N1..N4``, the nodal positions ``x_a`` and the *directors*
``d_a``: the element's reference axis ``a`` carried by the nodal rotation ``R_a`` and scaled by
``l0``. ``r`` is linear in ``y = (x_p, d_p, x_q, d_q)``, so the kinetic energy of ``rho A`` is a
quadratic form with a *constant* matrix in the slot velocities ``u = (v_p, u_dp, v_q, u_dq)``
(rigid director rates ``u_d = w x d`` in the Newmark family, rates of their own in the mid-point
family, see below)::

    T = 1/2 u . M u,   M = rho A l0 / 420 [[156, 22, 54, -13], [22, 4, 13, -3],
                                           [54, 13, 156, -22], [-13, -3, -22, 4]]  (x) I_3

(eq. 19 with ``l0 A theta_dot = d_dot``). At the reference this is the classical Hermite mass
(156/22/54/13/4/3 over 420; :meth:`ConsistentBeamInertia.element_mass`). Its convective terms
(eq. 20) are not written separately: they come out of the momentum form below. The rotary inertia
of the cross-section stays lumped, ``rho I l0 / 2`` and ``rho J l0 / 2`` per node, in the nodal
group (:meth:`fem.elements.beam.Beam.lumped_inertia`): a constant body inertia, which Simo-Wong's
form integrates exactly.

Mid-point family (:meth:`ConsistentBeamInertia.midpoint_force`): director velocities as state
(Betsch & Steinmann 2001, Comput. Methods Appl. Mech. Engrg. 191, 467-488; the same ``y``-slot
mid-point form as Romero & Armero 2002, Int. J. Numer. Meth. Engng 54, 1683-1716). The slot
velocities of the directors ``u_d (E, 2, 3)`` are unknowns of their own, kept in
``state.rates[<group>]`` (``v``, with the nodal velocities and rotations they belong to,
``nodal_v`` and ``nodal_rot``: :meth:`ConsistentBeamInertia.rate_fields`) and updated by the
mid-point rule like the nodal velocities (``v1 = 2 dx/h - v0``, ``W1 = 2 Theta/h - W0``,
untouched). The force evaluation computes the trial rates of ``s1`` from ``s0`` and ``s1``; the
integrator's rate update writes the converged ones (:meth:`ConsistentBeamInertia.update_rates`):

    u_d1 = 2 (d1 - d0)/h - u_d0,       so     u_m = (u0 + u1)/2 = dy/h   for every slot.

A state without them (the start of a run, initial velocity fields) takes the rigid rates ``w x
d``; so does an element whose nodes' velocities or rotations changed since the rates were
written (a new step's velocity fields, a static step between two dynamic ones): the rates carry
the nodal velocities and rotations they belong to. With ``pi = M u`` and the slot force ``f_y =
(pi1 - pi0)/h``:

* energy: ``f_y . dy = (u1 - u0) . M (u1 + u0)/2 = T1 - T0`` (``M`` constant, symmetric);
* the nodes: ``f_x`` on the translations; the rotations of co-rotational beams are Cayley
  parameters ``psi`` in the energy-conserving scheme, 2D and 3D
  (:func:`fem.integrators.cayley.chord_nodes`): ``d1 = cay(psi) d0``, so ``d1 - d0 = psi x
  dbar`` exactly, ``dbar = (d0 + d1)/2``, and the moment ``m = dbar x f_d`` paired with ``psi``
  does the work ``f_d . (d1 - d0)``. Nodes turned by the rotation vector ``theta`` (the plain
  mid-point rule, linear-frame beams) have ``d1 - d0 = (Q - I) d0 = -jl(theta) hat(d0) theta``
  and take ``m = d0 x jl(theta)^T f_d``. Either way ``f . inc = T1 - T0`` to round-off, at any
  step and rotation;
* linear momentum ``P = sum pi_x`` (the Hermite functions of the positions sum to one, so it
  is ``int rho A r_dot``) changes by ``h sum f_x``: exact in free motion;
* angular momentum ``L = sum y x pi`` (``= int rho A r x r_dot``, ``r`` bilinear in ``y`` and
  ``u``): ``y1 x pi1 - y0 x pi0 = ybar x (pi1 - pi0) + dy x pi_m`` and ``sum dy x pi_m = h sum_ij
  M_ij u_m,i x u_m,j = 0`` (``M`` symmetric, blocks ``M_ij I_3``), so ``(L1 - L0)/h = sum ybar x
  f_y = sum_a (x_m,a x f_x,a + dbar_a x f_d,a)``: the moment of the nodal forces about the
  mid-point positions, which the elastic forces of the Cayley scheme do not have. Exact in free
  motion at Cayley nodes.

Why the state had to change: no inertial force closes energy and angular momentum while the
director rates are rigid, ``d_dot = w x d``, and the rates follow the mid-point family's nodal
updates. Take a *rigid* increment ``dx_a = c + psi x x_m,a``, every node turned by ``psi`` (the
increments on which the elastic forces, with neither resultant nor moment about the mid-point
positions, do no work). Any ``f`` with ``f . inc = T1 - T0``, resultant ``dP/h`` and moment
``dL/h`` would do the work ``c . dP/h + psi . dL/h`` on it, so ``T1 - T0 = c . dP/h + psi .
dL/h`` is necessary, and it involves the kinematics and the velocity update only. Writing ``y_m
= (y0 + y1)/2`` and using ``sum u_m x pi_m = 0`` (``M`` symmetric), the two sides differ by
``sum_d [e . (dpi_d + pi_m,d x psi) - z . (pi_m,d x psi)]`` with ``e = u_m,d - psi x d_m / h``
and ``z = (d1 - d0 - psi x d_m)/h``. The lumped inertia has no translation-director coupling:
there it reduces to Simo & Wong's rigid body and holds exactly. The Hermite mass couples
``pi_d`` to the translations, and ``e`` cannot vanish: ``(w0 x d0 + w1 x d1)/2 = psi x (d0 +
d1)/(2h)`` asks ``w1 x d1`` for a vector that is not normal to ``d1``. The defect is 1e-3 (2D)
and 4e-4 (3D) of the kinetic energy at 0.1 rad per step with either the exponential or the
Cayley rotation update (``test_no_inertial_force_closes_energy_and_angular_momentum_with_rigid_
director_rates``). With ``u_d`` of its own, ``e = 0`` at Cayley nodes: ``u_m,d = (d1 - d0)/h =
psi x d_m / h`` and ``z = 0``. The rate ``u_d`` is not tied to ``w x d``: the director rigidity is
a constraint on the positions (``d = R a``), not on the velocities, as in Betsch & Steinmann.

Two velocity memories: the rotary inertia of the cross-section stays on the nodes (Simo-Wong,
``W1 = 2 Theta/h - W0``), so a node's transverse rotation is remembered by ``u_d`` and by ``w``.
Their difference ``delta = u_d - w x d`` is a neutral mode of the two mid-point updates
(``delta1 = -delta0`` to first order): in the free flights of
``tests/test_consistent_inertia.py`` it reaches 3-5% of ``w x d`` (2D) and up to half of it
(3D), and the kinetic energy of ``u_d`` differs from that of ``w x d`` by up to 1.6% of the
initial one. It costs nothing in exactness, and no Newton difficulty could be traced to it
(the soft 3D flight halves steps where its local rotations near pi, with the rigid rates too,
depending on 3% of the initial velocity). Director slots for the rotary inertia as well
(Betsch & Steinmann's ``1/2 sum E_i |d_dot_i|^2``, ``E_i = tr(J)/2 - J_i``, off the nodes)
would leave one memory; not done.

Tangent: exact along Newton's corrections of ``s1`` (translations ``dx``, spatial spins ``dw``;
2D embedded as spins about z): ``d d1 = -hat(d1) dw``, ``d u_d1 = (2/h) d d1``, ``d dbar = d d1
/ 2``; the Cayley moment depends on ``d1`` alone, not on ``psi``. Rotation-vector nodes: ``d
theta = jl_inv(theta) dw`` and ``d(jl(theta)^T y)/dtheta = -jl^T kh(theta, jl^T y)``.

Newmark family (:meth:`ConsistentBeamInertia.newmark_force`), unchanged, with the rigid rates
``u_d = w x d`` (it neither reads nor writes the stored ones): ``f_y = M d2y/dt2`` with
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
        self.name = g.name                                  # its rates: state.rates[name]
        self._kept = None         # the last _state_slots: (state, its rates, t, v, rot, slots)

    @staticmethod
    def rate_fields(g) -> dict[str, tuple]:
        """The rates of beam group ``g`` in ``State.rates``: ``{name: (shape, fill)}``.

        ``v (E, 2, 3)`` the director slots' velocities; ``nodal_v``, ``nodal_rot`` the nodal
        velocities and rotations they were written with, NaN until the mid-point family writes
        them (:meth:`director_rates` then takes the rigid rates).
        """
        E, ns = len(g), 3 if g.dim == 2 else 6
        rot = (E, 2) if g.dim == 2 else (E, 2, 4)
        nan = float("nan")
        return {"v": ((E, 2, 3), 0.0), "nodal_v": ((E, 2, ns), nan), "nodal_rot": (rot, nan)}

    # --- kinematics ---------------------------------------------------------------------------
    def _slots(self, state, R: NDArray | None = None, stored: bool = True):
        """Directors ``d (E, 2, 3)``, slot velocities ``u (E, 4, 3)`` and spins ``w (E, 2, 3)``.

        The director slots hold the state's director rates (:meth:`director_rates`), or with
        ``stored=False`` the rigid rates ``w x d`` (Newmark family, element mass).
        """
        d = self._directors(state.rotation_matrices() if R is None else R)
        v, w = self._rates(state.v)
        u = np.empty((len(d), 4, 3))
        u[:, _X] = v
        u[:, _D] = self.director_rates(state, d, w) if stored else so3.cross(w, d)
        return d, u, w

    def _state_slots(self, state):
        """:meth:`_slots` of ``state``, kept while the state is unchanged.

        A frame asks for the kinetic energy and both momenta of the same state (three
        evaluations of the director rates, most of a small model's frame): the second and third
        take the first's arrays (read only), if ``state`` is the same object at the same time
        with the same velocities, rotations and rates dictionary.
        """
        rates = state.rates.get(self.name)
        kept = self._kept
        if (kept is not None and kept[0] is state and kept[1] is rates and kept[2] == state.t
                and np.array_equal(kept[3], state.v) and np.array_equal(kept[4], state.rot)):
            return kept[5]
        out = self._slots(state)
        self._kept = (state, rates, state.t, state.v.copy(), state.rot.copy(), out)
        return out

    def _directors(self, R: NDArray) -> NDArray:
        """(E, 2, 3) ``d_a = R_a a`` of nodal rotation matrices ``R (n, 3, 3)``."""
        return np.einsum("eaij,ej->eai", R[self.conn], self.a)

    def director_rates(self, state, d: NDArray | None = None,
                       w: NDArray | None = None) -> NDArray:
        """(E, 2, 3) the director slots' velocities ``u_d`` of ``state`` (module doc).

        Those the mid-point family stored (:meth:`midpoint_force`) where the element's nodes
        still have the velocities and rotations they were written with; elsewhere the rigid
        rates ``w x d``.
        """
        if d is None:
            d = self._directors(state.rotation_matrices())
        if w is None:
            w = self._rates(state.v)[1]
        got = state.rates.get(self.name)
        v, rot = self._stamp(state)
        if (not got or "v" not in got or got["nodal_v"].shape != v.shape
                or got["nodal_rot"].shape != rot.shape):
            return so3.cross(w, d)
        same_v, same_rot = got["nodal_v"] == v, got["nodal_rot"] == rot
        if same_v.all() and same_rot.all():     # every element's (a time loop's frame)
            return got["v"].copy()
        E = len(d)
        same = np.all(same_v.reshape(E, -1), axis=1) & np.all(same_rot.reshape(E, -1), axis=1)
        return np.where(same[:, None, None], got["v"], so3.cross(w, d))

    def _stamp(self, state) -> tuple[NDArray, NDArray]:
        """The nodal velocities and rotations the stored director rates belong to."""
        return state.v[self.conn], state.rot[self.conn]

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
        _, u, _ = self._state_slots(state)
        return 0.5 * float(np.einsum("eik,eik->", u, self._momenta(u)))

    def linear_momentum(self, state) -> NDArray:
        """(3,) ``sum pi_x``."""
        _, u, _ = self._state_slots(state)
        return self._momenta(u)[:, _X].sum(axis=(0, 1))

    def angular_momentum(self, state, X: NDArray) -> NDArray:
        """(3,) ``sum y x pi`` about the origin."""
        d, u, _ = self._state_slots(state)
        pi = self._momenta(u)
        x = (X + state.u)[self.conn]
        return (so3.cross(x, pi[:, _X]) + so3.cross(d, pi[:, _D])).sum(axis=(0, 1))

    def balance(self, state, X: NDArray) -> tuple[float, NDArray, NDArray]:
        """:meth:`kinetic_energy`, :meth:`linear_momentum` and :meth:`angular_momentum` at once.

        A frame's three numbers from one evaluation of the slots and momenta (the same
        operations, so the same bits as the three calls).
        """
        d, u, _ = self._slots(state)
        pi = self._momenta(u)
        y = np.empty_like(u)                # the slots' positions and directors, one cross
        y[:, _X], y[:, _D] = (X + state.u)[self.conn], d
        yxp = so3.cross(y, pi)
        # summed as the three calls sum: a C-ordered (E, 2, 3) (a reduction's order follows
        # the layout; fancy indexing's would differ in the last bit)
        H = np.add(yxp[:, 0::2], yxp[:, 1::2], out=np.empty((len(u), 2, 3)))
        return (0.5 * float(np.einsum("eik,eik->", u, pi)), pi[:, _X].sum(axis=(0, 1)),
                H.sum(axis=(0, 1)))

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
        L = self._velocity_map(self._directors(state.rotation_matrices()))
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
        With the trial director rates ``u_d1 = 2 (d1 - d0)/h - u_d0`` (:meth:`_trial`, not
        written: :meth:`update_rates` does that for the converged step); ``f_y = (pi1 -
        pi0)/h``, nodal forces ``f_x`` and moments ``dbar x f_d`` (Cayley nodes) or ``d0 x
        jl(theta)^T f_d`` (rotation vectors). ``f . inc = T1 - T0`` exactly, and at Cayley nodes
        the moment about the mid-point positions is ``(L1 - L0)/h`` (module doc).
        """
        E = len(self.mu)
        d0, u0, d1, u1 = self._trial(s0, s1, h)
        fy = self._momenta(u1 - u0) / h                            # (E, 4, 3)
        fd = fy[:, _D]
        B, own = self._moment_map(kin, d0, d1, fd, tangent)       # m = B f_d
        f = np.zeros((E, 2, 6))
        f[:, :, :3] = fy[:, _X]
        f[:, :, 3:] = np.einsum("eaij,eaj->eai", B, fd)
        f = f.reshape(E, 12)
        if not tangent:
            return f[:, self.cols], None
        # d u1 / d(corrections): translations (2/h) I, directors -(2/h) hat(d1)
        Lu = np.zeros((E, 4, 3, 12))
        eye = np.eye(3)
        hd1 = so3.hat(d1)
        Lu[:, 0, :, 0:3], Lu[:, 2, :, 6:9] = 2 / h * eye, 2 / h * eye
        Lu[:, 1, :, 3:6], Lu[:, 3, :, 9:12] = -2 / h * hd1[:, 0], -2 / h * hd1[:, 1]
        dfy = np.einsum("eij,ejak->eiak", self.M, Lu) / h          # (E, 4, 3, 12)
        K = np.zeros((E, 2, 6, 12))
        K[:, :, :3] = dfy[:, _X]
        K[:, :, 3:] = np.einsum("eaij,eajk->eaik", B, dfy[:, _D])
        K[:, 0, 3:, 3:6] += own[:, 0]
        K[:, 1, 3:, 9:12] += own[:, 1]
        K = K.reshape(E, 12, 12)
        return f[:, self.cols], K[:, self.cols][:, :, self.cols]

    def _trial(self, s0, s1, h: float):
        """Directors and slot velocities of both ends, ``u_d1 = 2 (d1 - d0)/h - u_d0``."""
        d0, u0, _ = self._slots(s0)
        d1 = self._directors(s1.rotation_matrices())
        u1 = np.empty_like(u0)
        u1[:, _X] = self._rates(s1.v)[0]
        u1[:, _D] = 2 * (d1 - d0) / h - u0[:, _D]
        return d0, u0, d1, u1

    def update_rates(self, s0, s1, kin, h: float) -> None:
        """Write the director rates of the converged step into ``s1`` (mid-point family).

        With the nodal velocities and rotations of ``s1`` they belong to (module doc); what
        :meth:`midpoint_force` computed at the same ``s1``.
        """
        u1 = self._trial(s0, s1, h)[3]
        v1, rot1 = self._stamp(s1)
        s1.rates[self.name] = {"v": u1[:, _D], "nodal_v": v1, "nodal_rot": rot1}

    def _moment_map(self, kin, d0, d1, fd, tangent: bool):
        """``B (E, 2, 3, 3)``, the nodal moments being ``m = B f_d``, and ``dB/dw f_d`` (fixed f_d).

        Cayley nodes: ``B = hat(dbar)``, ``d dbar = -hat(d1) dw / 2``. Rotation-vector nodes:
        ``B = hat(d0) jl(theta)^T``, ``d theta = jl_inv(theta) dw``. (``own`` is None without
        ``tangent``.)
        """
        B = so3.hat(0.5 * (d0 + d1))
        own = 0.5 * so3.hat(fd) @ so3.hat(d1) if tangent else None
        exp = ~self._cayley(kin)
        if exp.any():
            theta = self._rotvec(kin)[exp]                         # (k, 3) spatial
            jlT = np.swapaxes(so3.jl(theta), -1, -2)
            hd0 = so3.hat(d0[exp])
            B[exp] = hd0 @ jlT
            if tangent:
                z = np.einsum("kij,kj->ki", jlT, fd[exp])          # jl^T f_d
                own[exp] = -hd0 @ jlT @ so3.kh(theta, z) @ so3.jl_inv(theta)
        return B, own

    def _cayley(self, kin) -> NDArray:
        """(E, 2) bool: nodes turned by Cayley parameters ``psi`` in this step."""
        on = getattr(kin, "on", None)
        if on is None:
            return np.zeros(self.conn.shape, dtype=bool)
        return on[self.conn]

    def _rotvec(self, kin) -> NDArray:
        """(E, 2, 3) spatial rotation vectors of the step (2D: about z)."""
        rotvec = getattr(kin, "rotvec", None)
        return (kin.theta if rotvec is None else rotvec)[self.conn]

    def _theta(self, kin) -> NDArray:
        """(E, 2, 3) spatial rotation increments of the nodes (2D: about z)."""
        return kin.theta[self.conn]

    def newmark_force(self, state, kin=None, h=None, beta=None, gamma=None):
        """Element inertial forces ``(E, nd)`` ``d/dt(dT/du)`` and, given the step, the tangent."""
        E = len(self.mu)
        d, u, w = self._slots(state, stored=False)
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
