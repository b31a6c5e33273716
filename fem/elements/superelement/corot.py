"""Planar co-rotational superelements: a reduced component riding a large motion (issue 13 item 3).

A :class:`~fem.elements.superelement.Superelement` whose reduced stiffness acts on *local*
(deformational) coordinates: the component's rigid motion is carried by a floating frame, the
chord of its first two interface nodes ``a``, ``b`` (Geradin & Cardona 2001, "Flexible multibody
dynamics", ch. 12, the co-rotational superelement; here in the plane, ``dim = 2``).

Kinematics (every interface node has ``ux``, ``uy``; ``E = [[0, -1], [1, 0]]``):

* frame: ``d = x_b - x_a`` (current), ``D = X_b - X_a`` (reference, as placed); ``alpha`` the
  angle from ``D`` to ``d``, ``R = R(alpha)``. The branch of ``alpha`` is the one nearest node
  ``a``'s rotation (when it has one), so ``alpha`` follows any number of turns;
* local coordinates ``q_l`` in the element vector's layout: translations of interface node ``i``
  ``u_l,i = R^T (x_i - x_a) - (X_i - X_a)``, rotations ``theta_l,i = theta_i - alpha``, modal
  coordinates ``eta`` unchanged (``u_l,a = 0``, ``u_l,b`` normal to ``D`` is 0);
* strain energy ``U = q_l^T K q_l / 2`` with the file's ``K`` (rigid motions are in its null
  space: the deck checks; with geometric stiffening ``U(q_l)`` below); internal force
  ``B^T K q_l`` (``B = dq_l/dq``; with stiffening ``B^T dU/dq_l``); tangent exact,
  ``B^T K B + sum_k (K q_l)_k d2 q_l,k / dq2`` (:meth:`CorotSuperelement.geometric`; with
  stiffening ``B^T (d2U/dq_l2) B`` and ``dU/dq_l`` for ``K q_l``). At small displacements
  ``q_l = q - (a rigid motion)`` to first order: the linear superelement's force to second
  order.

Energy-conserving force (:meth:`CorotSuperelement.conserving`): ``f = G^T K (q_l0 + q_l1) / 2``
(with stiffening ``G^T sbar``, an exact average of ``dU/dq_l``, see there)
with ``G`` a discrete gradient of ``q_l(q)``, ``G (q_1 - q_0) = q_l(q_1) - q_l(q_0)`` exactly:

* frame angle: ``dalpha = atan2(d0 x d1, d0 . d1) = g . (d1 - d0)`` with
  ``g = (dalpha / sin dalpha) / (|d0| |d1|) E dbar`` (``d0 x d1 = (E dbar) . (d1 - d0)``);
* ``R1^T p1 - R0^T p0 = Rbar^T dp + (R1 - R0)^T pbar`` with ``Rbar = (R0 + R1)/2`` and
  ``R1 - R0 = 2 sin(dalpha/2) R(alphabar) E``;
* ``theta_l``: ``dtheta_i - dalpha``.

So ``f . (q_1 - q_0) = U_1 - U_0`` to round-off at any step. Newton's tangent is
``G^T K B_1 / 2`` plus half the geometric stiffness of ``K (q_l0 + q_l1)/2`` at the mid-point
configuration (an approximation of ``df/dq_1``: the derivative of ``G`` is taken as the
mid-point's second derivative of ``q_l``).

The recovered configuration (what the inertia integrates, :mod:`fem.inertia.floating`): the
component's nodes ``y_j = x_a + R (X_j - X_a + (T q_l)_u,j)`` and rotations ``psi_j = alpha +
(T q_l)_theta,j`` on the component's unknowns (``T`` the file's recovery, local frame), with its
Jacobian, discrete gradient (the same pieces) and its acceleration at zero ``q`` acceleration.
The component's nodes are also written as outputs (``recovered_displacement``), so validation
quantities can read interior points (:mod:`fem.validate`, ``chord_offset`` with ``group``).

Geometric stiffening by the mean axial strain (deck key ``geometric_stiffening``, on by
default when the file has the chord stiffening ``G``, :func:`fem.analysis.cms.chord_stiffening`:
the component's geometric stiffness under a unit chord tension, on ``q``). The chord
elongation ``e = n . u_l,b`` (``n = D/|D|``; node ``b``'s local translation lies along ``n``)
becomes the mean-strain elongation ``s = e + q_l^T G q_l / 2`` in the linear energy::

    U = qt^T K qt / 2,     qt = q_l + (q_l^T G q_l / 2) n_b     (n_b: n in b's ux, uy slots)

gradient ``Bt^T K qt`` with ``Bt = I + n_b (G q_l)^T``, Hessian ``Bt^T K Bt + (n_b . K qt) G``.
For a straight rod ``q_l^T G q_l = int w'^2 dx``, so the axial force is one mean value
``N = EA/L (e + int w'^2 dx / 2)`` along the rod: the classical stiffening of an inextensible
rod's bending by its tension (centrifugal stiffening; buckling under compression), which does
not lock, unlike the full second-order strains of the modes (their axial field is linear
along the rod, so the bending's second-order shortening cannot be released: Meijaard's
slider-crank rod came out 18 % too stiff with them, 6 % too flexible without stiffening).
``U`` is quartic in ``q_l``, so the Simpson average of its gradient below is exact for the
work (its work along the straight path is a cubic).

Three dimensions are :mod:`fem.elements.superelement.corot3d` (node a's triad as the frame);
files without the lumped diagonal mass are refused (``/component/mass``, a ``cms_reduce`` with
``mass = "lumped"``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from fem.elements.superelement.group import Superelement, SuperelementData

E2 = np.array([[0.0, -1.0], [1.0, 0.0]])      # a quarter turn: E v is v turned by +90 degrees
RIGID = 1e-8                                  # |K r| below this share of |K| |r|: r is rigid


def rotation(alpha: float) -> NDArray:
    """(2, 2) ``R(alpha)``."""
    c, s = np.cos(alpha), np.sin(alpha)
    return np.array([[c, -s], [s, c]])


def cross(a: NDArray, b: NDArray) -> NDArray:
    """``a x b`` (the z component) of ``(..., 2)`` vectors."""
    return a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]


@dataclass
class Frame:
    """The floating frame of one configuration: what the forces and the recovery use.

    ``p (k, 2)`` interface nodes relative to node ``a`` (current), ``d = p[1]``, ``alpha``,
    ``R (2, 2)``, ``ql (nde,)`` the local coordinates in the element vector's layout.
    """

    p: NDArray
    d: NDArray
    alpha: float
    R: NDArray
    ql: NDArray


class CorotSuperelement(Superelement):
    """A planar superelement on a floating frame (module docstring); ``E = 1``.

    Parameters as :class:`~fem.elements.superelement.Superelement`; the file must hold the
    component's lumped mass (``data.component_mass``) and every interface node ``ux``, ``uy``
    (the deck's build checks both, and that ``K`` annihilates the rigid motions).
    """

    capabilities = frozenset({"stiffness", "mass", "energy_conserving", "internal_unknowns"})
    inertia = "floating"                # fem.inertia.floating.FloatingInertia

    def __init__(self, name: str, nodes, X, dim: int, data: SuperelementData,
                 internal_start: int = 0, path: str = "", stiffening: bool = False):
        super().__init__(name, nodes, X, dim, data, internal_start, path)
        self.stiffening = bool(stiffening) and data.stiffening is not None
        names, ndn, k = self.dof_names, self.ndn, self.nen
        base = np.arange(k) * ndn
        #: (k, 2) element-vector positions of each interface node's ux, uy
        self.tx = np.column_stack([base + names.index("ux"), base + names.index("uy")])
        #: (k,) ... of its rz (-1: none)
        self.tr = base + names.index("rz") if "rz" in names else np.full(k, -1)
        self.ie = np.arange(self.nd, self.nd + data.n_modal)
        self.nde = self.nd + data.n_modal
        self.P = self.X[0, :, :2] - self.X[0, :1, :2]           # (k, 2) X_i - X_a
        D = self.P[1]
        #: (nde, nde) the chord stiffening ``G`` on the element vector (zero: off), (nde,)
        #: ``n_b``, the chord's direction in node b's ux, uy slots
        self.Ge = self._embed(data.stiffening)[0] if self.stiffening else np.zeros(
            (self.nde, self.nde))
        self.nb = np.zeros(self.nde)
        self.nb[self.tx[1]] = D / np.linalg.norm(D)
        self.Phi = float(np.arctan2(D[1], D[0]))
        # --- the component's recovery: its unknowns (node, slot) and T's rows
        n_c = len(data.component_ids)
        table = np.full((n_c, 3), -1)
        table[data.component_dofs[:, 0], data.component_dofs[:, 1]] = np.arange(
            len(data.component_dofs))
        moving = (table[:, 0] >= 0) | (table[:, 1] >= 0)
        #: (Nt,) component nodes with translations, (Nt, 2) their rows of T
        self.t_nodes = np.flatnonzero(moving)
        self.rows_u = table[moving][:, :2]
        self.rows_r = table[:, 2]                               # (Nc,) -1: no rotation
        self.r_nodes = np.flatnonzero(self.rows_r >= 0)
        #: (Nc, 3) the component's nodes as placed in the model
        self.Xc = data.component_coordinates + self.offset
        self.C0 = self.Xc[self.t_nodes, :2] - self.X[0, 0, :2]  # (Nt, 2) X_j - X_a

    # --- checks of the deck's build -------------------------------------------------------------
    def translation_complete(self) -> bool:
        """Whether every recovered node with a translation has both (``T``'s rows)."""
        return bool(np.all(self.rows_u >= 0))

    def rigid_defect(self) -> float:
        """``max |K r| / (max |K| max |r|)`` over the three rigid motions of the interface."""
        K = self.Ke[0]
        Xi = self.X[0, :, :2]
        r = np.zeros((3, self.nde))
        r[0, self.tx[:, 0]] = 1.0
        r[1, self.tx[:, 1]] = 1.0
        r[2, self.tx[:, 0]], r[2, self.tx[:, 1]] = -Xi[:, 1], Xi[:, 0]
        r[2, self.tr[self.tr >= 0]] = 1.0
        scale = max(np.abs(K).max(), 1e-300) * np.abs(r).max(axis=1)
        return float((np.abs(r @ K).max(axis=1) / scale).max())

    # --- kinematics -----------------------------------------------------------------------------
    def vector(self, state) -> NDArray:
        """(nde,) the element vector ``[nodal slots; eta]`` of ``state``."""
        return self.coordinates(state)[0]

    def local_frame(self, e: NDArray) -> Frame:
        """The floating frame and local coordinates of element vector ``e``."""
        u = e[self.tx]                                          # (k, 2)
        p = self.P + (u - u[:1])
        d = p[1]
        alpha = float(np.arctan2(d[1], d[0])) - self.Phi
        if self.tr[0] >= 0:     # the branch nearest node a's rotation: alpha follows turns
            ta = e[self.tr[0]]
            alpha = ta + float(np.remainder(alpha - ta + np.pi, 2 * np.pi) - np.pi)
        R = rotation(alpha)
        ql = e.copy()
        ql[self.tx] = p @ R - self.P
        has = self.tr >= 0
        ql[self.tr[has]] = e[self.tr[has]] - alpha
        return Frame(p, d, alpha, R, ql)

    def _fill(self, Rm: NDArray, v: NDArray, g: NDArray) -> tuple[NDArray, NDArray]:
        """``(nde, nde)`` a (discrete) gradient of ``q_l`` and ``(nde,)`` that of ``alpha``.

        Translation rows of node ``i``: ``Rm^T (dx_i - dx_a) + v_i dalpha``; rotation rows:
        ``dtheta_i - dalpha``; ``eta``: identity; ``dalpha = g . (dx_b - dx_a)``.
        """
        tx, tr = self.tx, self.tr
        B = np.zeros((self.nde, self.nde))
        gcol = np.zeros(self.nde)
        gcol[tx[1]] += g
        gcol[tx[0]] -= g
        B[tx[:, :, None], tx[:, None, :]] += Rm.T
        B[tx[:, :, None], tx[0][None, None, :]] -= Rm.T
        B[tx] += v[:, :, None] * gcol
        has = tr >= 0
        B[tr[has], tr[has]] = 1.0
        B[tr[has]] -= gcol
        B[self.ie, self.ie] = 1.0
        return B, gcol

    def jacobian(self, f: Frame) -> tuple[NDArray, NDArray]:
        """``B = dq_l/dq (nde, nde)`` and ``d alpha/dq (nde,)`` at frame ``f``."""
        g = E2 @ f.d / (f.d @ f.d)
        return self._fill(f.R, -(f.p @ E2.T) @ f.R, g)

    def geometric(self, p: NDArray, d: NDArray, R: NDArray, s: NDArray) -> NDArray:
        """``(nde, nde)`` ``sum_k s_k d2 q_l,k / dq2`` at ``p``, ``d``, ``R``.

        The derivative of ``B^T s`` at fixed ``s`` (module docstring).
        """
        tx, tr = self.tx, self.tr
        f = s[tx] @ R.T                                         # (k, 2) global R s_u,i
        Ef = f @ E2.T
        dd = d @ d
        g = E2 @ d / dd
        gcol = np.zeros(self.nde)
        gcol[tx[1]] += g
        gcol[tx[0]] -= g
        Kg = np.zeros((self.nde, self.nde))
        Kg[tx] += Ef[:, :, None] * gcol                         # d(R s_u,i) = E R s_u,i dalpha
        Kg[tx[0]] -= Ef.sum(axis=0)[:, None] * gcol
        moment = float(cross(p, f).sum() + s[tr[tr >= 0]].sum())
        dM = np.zeros(self.nde)
        dM[tx] -= Ef
        dM[tx[0]] += Ef.sum(axis=0)
        dM += float(np.einsum("ij,ij->", p, f)) * gcol
        H = (E2 - 2.0 * np.outer(E2 @ d, d) / dd) / dd          # d g / d d
        Hcol = np.zeros((2, self.nde))
        Hcol[:, tx[1]] += H
        Hcol[:, tx[0]] -= H
        step = np.outer(g, dM) + moment * Hcol
        Kg[tx[1]] -= step
        Kg[tx[0]] += step
        return Kg

    def step_gradient(self, f0: Frame, f1: Frame) -> dict:
        """The discrete gradient of ``q_l`` from frame ``f0`` to ``f1`` and its pieces.

        ``G (nde, nde)``, ``gcol (nde,)`` (``dalpha = gcol . dq``), ``dalpha``, ``abar``
        (mid-point angle), ``Rbar = (R0 + R1)/2``, ``chord = 2 sin(dalpha/2)/dalpha``,
        ``pbar``, ``dbar`` (module docstring).
        """
        d0, d1 = f0.d, f1.d
        dalpha = float(np.arctan2(cross(d0, d1), d0 @ d1))
        dbar = 0.5 * (d0 + d1)
        g = E2 @ dbar / (np.sinc(dalpha / np.pi) * np.sqrt((d0 @ d0) * (d1 @ d1)))
        abar = f0.alpha + 0.5 * dalpha
        Rbar = 0.5 * (f0.R + rotation(f0.alpha + dalpha))
        chord = float(np.sinc(dalpha / (2 * np.pi)))
        pbar = 0.5 * (f0.p + f1.p)
        v = -chord * (pbar @ E2.T) @ rotation(abar)
        G, gcol = self._fill(Rbar, v, g)
        return {"G": G, "gcol": gcol, "dalpha": dalpha, "abar": abar, "Rbar": Rbar,
                "chord": chord, "pbar": pbar, "dbar": dbar}

    # --- the energy of the local coordinates ----------------------------------------------------
    def stiffened(self, ql: NDArray) -> NDArray:
        """``qt = q_l + (q_l^T G q_l / 2) n_b (nde,)``: the chord elongation made the mean one."""
        return ql + 0.5 * float(ql @ self.Ge @ ql) * self.nb

    def local_energy(self, ql: NDArray) -> float:
        """``U = qt^T K qt / 2``."""
        qt = self.stiffened(ql)
        return float(0.5 * qt @ self.Ke[0] @ qt)

    def local_gradient(self, ql: NDArray) -> NDArray:
        """``dU/dq_l = Bt^T K qt (nde,)``, ``Bt = I + n_b (G q_l)^T``."""
        Kqt = self.Ke[0] @ self.stiffened(ql)
        return Kqt + float(self.nb @ Kqt) * (self.Ge @ ql)

    def local_hessian(self, ql: NDArray) -> NDArray:
        """``d2U/dq_l2 = Bt^T K Bt + (n_b . K qt) G (nde, nde)``."""
        K = self.Ke[0]
        Bt = np.eye(self.nde) + np.outer(self.nb, self.Ge @ ql)
        return Bt.T @ K @ Bt + float(self.nb @ K @ self.stiffened(ql)) * self.Ge

    # --- the element protocol ---------------------------------------------------------------------
    def _response(self, state, tangent: bool):
        f = self.local_frame(self.vector(state))
        s = self.local_gradient(f.ql)
        B, _ = self.jacobian(f)
        force = (B.T @ s)[None]
        if not tangent:
            return force, None
        return force, (B.T @ self.local_hessian(f.ql) @ B
                       + self.geometric(f.p, f.d, f.R, s))[None]

    def internal_force(self, state) -> NDArray:
        """(E, nde) ``B^T dU/dq_l`` (``B^T K q_l`` without stiffening)."""
        return self._response(state, False)[0]

    def evaluate(self, state, tangent: bool = True):
        """Internal force and (if asked) the exact tangent, from one frame."""
        return self._response(state, tangent)

    def tangent(self, state) -> NDArray:
        """(E, nde, nde) ``B^T (d2U/dq_l2) B`` plus the geometric part (exact)."""
        return self._response(state, True)[1]

    def material_tangent(self, state) -> NDArray:
        """(E, nde, nde) ``B^T (d2U/dq_l2) B``."""
        f = self.local_frame(self.vector(state))
        B, _ = self.jacobian(f)
        return (B.T @ self.local_hessian(f.ql) @ B)[None]

    def energy(self, state) -> NDArray:
        """(E,) ``U(q_l)``."""
        return np.array([self.local_energy(self.local_frame(self.vector(state)).ql)])

    def conserving(self, s0, s1, sm, inc, hist, **kinematics):
        """``G^T sbar``: work ``U_1 - U_0`` exactly (module docstring).

        ``sbar`` is the average of ``dU/dq_l`` along the straight path from ``q_l0`` to
        ``q_l1`` by Simpson's rule, exact for its work (``dU/dq_l . (q_l1 - q_l0)`` along the
        path is a cubic, ``U`` being quartic): ``sbar . (q_l1 - q_l0) = U_1 - U_0``; without
        stiffening it is ``K (q_l0 + q_l1)/2``.
        """
        f0, f1 = self.local_frame(self.vector(s0)), self.local_frame(self.vector(s1))
        st = self.step_gradient(f0, f1)
        qm = 0.5 * (f0.ql + f1.ql)
        sbar = (self.local_gradient(f0.ql) + 4 * self.local_gradient(qm)
                + self.local_gradient(f1.ql)) / 6
        G = st["G"]
        force = G.T @ sbar
        B1, _ = self.jacobian(f1)
        H = (2 * self.local_hessian(qm) + self.local_hessian(f1.ql)) / 6      # d sbar / d q_l1
        Kt = G.T @ H @ B1 + 0.5 * self.geometric(st["pbar"], st["dbar"],
                                                  rotation(st["abar"]), sbar)
        return force[None], Kt[None], np.array([self.local_energy(f1.ql)]), {}

    # --- the recovered configuration ----------------------------------------------------------
    def _c(self, ql: NDArray) -> tuple[NDArray, NDArray]:
        """``c_j = X_j - X_a + (T q_l)_u,j (Nt, 2)`` and ``w = T q_l (n,)``."""
        w = self.data.T @ ql[self.pos]
        return self.C0 + w[self.rows_u], w

    def recovered(self, e: NDArray, f: Frame | None = None) -> NDArray:
        """``y (n,)`` on the component's unknowns: positions of its nodes, rotations ``psi``."""
        f = self.local_frame(e) if f is None else f
        c, w = self._c(f.ql)
        y = np.zeros(len(w))
        y[self.rows_u] = (self.X[0, 0, :2] + e[self.tx[0]]) + c @ f.R.T
        rr = self.rows_r[self.r_nodes]
        y[rr] = f.alpha + w[rr]
        return y

    def _y_gradient(self, Bq: NDArray, gcol: NDArray, Rm: NDArray, Rw: NDArray,
                    c: NDArray) -> NDArray:
        """``(n, nde)`` the (discrete) gradient of ``y``.

        Translation rows ``dx_a + Rm T_u dq_l + Rw E c_j dalpha``, rotation rows ``dalpha +
        T_theta dq_l`` (``Bq`` the rows of the gradient of ``q_l`` in the file's order).
        """
        TB = self.data.T @ Bq                                   # (n, nde)
        J = TB.copy()
        J[self.rows_u] = np.einsum("ij,njk->nik", Rm, TB[self.rows_u])
        J[self.rows_u[:, 0], self.tx[0, 0]] += 1.0
        J[self.rows_u[:, 1], self.tx[0, 1]] += 1.0
        J[self.rows_u] += ((c @ E2.T) @ Rw.T)[:, :, None] * gcol
        J[self.rows_r[self.r_nodes]] += gcol
        return J

    def recovery_jacobian(self, e: NDArray, f: Frame | None = None) -> NDArray:
        """``J_y = dy/dq (n, nde)`` at ``e``."""
        f = self.local_frame(e) if f is None else f
        B, gcol = self.jacobian(f)
        return self._y_gradient(B[self.pos], gcol, f.R, f.R, self._c(f.ql)[0])

    def recovery_gradient(self, f0: Frame, f1: Frame, st: dict | None = None) -> NDArray:
        """``G_y (n, nde)``: ``G_y (q_1 - q_0) = y(q_1) - y(q_0)`` exactly (module docstring)."""
        st = self.step_gradient(f0, f1) if st is None else st
        cbar = 0.5 * (self._c(f0.ql)[0] + self._c(f1.ql)[0])
        return self._y_gradient(st["G"][self.pos], st["gcol"], st["Rbar"],
                                st["chord"] * rotation(st["abar"]), cbar)

    def recovery_acceleration(self, e: NDArray, edot: NDArray) -> NDArray:
        """``(n,)`` ``y''`` at zero ``q''``: ``d2y/dq2 [q', q']`` (the convective part)."""
        f = self.local_frame(e)
        tx, tr = self.tx, self.tr
        B, gcol = self.jacobian(f)
        pdot = edot[tx] - edot[tx[0]]
        dd = f.d @ f.d
        ad = float(gcol @ edot)
        add = -2.0 * ad * float(f.d @ pdot[1]) / dd
        qd = B @ edot
        qdd = np.zeros(self.nde)
        qdd[tx] = (-2 * ad * (pdot @ E2.T) - add * (f.p @ E2.T) - ad**2 * f.p) @ f.R
        qdd[tr[tr >= 0]] = -add
        T = self.data.T
        c, _ = self._c(f.ql)
        cd, cdd = (T @ qd[self.pos])[self.rows_u], T @ qdd[self.pos]
        out = cdd.copy()
        out[self.rows_u] = (cdd[self.rows_u] + 2 * ad * cd @ E2.T + add * c @ E2.T
                            - ad**2 * c) @ f.R.T
        out[self.rows_r[self.r_nodes]] += add
        return out

    # --- results --------------------------------------------------------------------------------
    def outputs(self, state) -> dict[str, NDArray]:
        """``modal_coordinates (E, m)``, ``recovered_displacement (E, Nc, 3)``.

        The latter: ux, uy, rz of the component's nodes, global axes, from their placed
        coordinates.
        """
        e = self.vector(state)
        y = self.recovered(e)
        out = np.zeros((len(self.Xc), 3))
        out[self.t_nodes, :2] = y[self.rows_u] - self.Xc[self.t_nodes, :2]
        out[self.r_nodes, 2] = y[self.rows_r[self.r_nodes]]
        return {"modal_coordinates": self.modal(state).copy(), "recovered_displacement": out[None]}

    def properties(self) -> dict[str, NDArray]:
        """The linear superelement's, plus the component's node ids and placed coordinates."""
        return {**super().properties(), "component_ids": self.data.component_ids[None, :],
                "component_coordinates": self.Xc[None]}

    def options(self) -> dict[str, str]:
        """The file, its reduction method and mass, ``formulation = "corotational"``."""
        return {**super().options(), "formulation": "corotational",
                "geometric_stiffening": str(self.stiffening).lower()}
