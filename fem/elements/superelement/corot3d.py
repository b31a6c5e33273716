"""3D co-rotational superelements: a reduced component riding a floating frame (issue 33 item 1).

The spatial counterpart of :mod:`fem.elements.superelement.corot`: a
:class:`~fem.elements.superelement.Superelement` whose reduced stiffness acts on local
(deformational) coordinates, the component's rigid motion carried by a floating frame
(Geradin & Cardona 2001, "Flexible multibody dynamics", ch. 12, the co-rotational
superelement).

**The frame rule: node a's own triad.** The frame is the position ``x_a`` and the rotation
``R_a`` of the first interface node ``a`` (which must have ``rx, ry, rz``), as placed (``R_a =
I`` at the reference). Why this rule and not a least-squares fit or a triad of three nodes:
everything below is *bilinear* in the nodes' rotation matrices and positions, and nodes that
turn by Cayley parameters (``R_1 = cay(psi) R_0``, the energy-conserving scheme,
:mod:`fem.integrators.midpoint`) change by exactly ``R_1 - R_0 = hat(psi) (R_0 + R_1)/2``.
So the difference of any bilinear quantity over a time step is *exactly linear* in the step's
increments, with coefficients at the mid-point matrices: the discrete gradient is the
continuous Jacobian evaluated at averaged matrices, no correction term, no ill-conditioning
near rigid steps; and it annihilates the rigid motions of the mid-point configuration, which
is what makes the algorithmic forces conserve both momenta. A least-squares fit (a polar
decomposition) or the normalized cross products of a node triad are not bilinear.

Kinematics (interface nodes ``i``, ``p_i = x_i - x_a``, ``P_i = X_i - X_a``):

* translations ``u_l,i = R_a^T p_i - P_i``;
* rotations ``w_l,i = vee(skew(R_a^T R_i))`` (``sin(phi) n`` of the relative rotation
  ``phi n = log(R_a^T R_i)``; the same to first order as ``log``, and bilinear: the reason it
  is used; the difference is ``phi^3/6``, beyond the linear reduction's own order);
* modal coordinates ``eta`` unchanged; node ``a``'s local coordinates are zero.

``U = q_l^T K q_l / 2``; the rigid motions are in ``K``'s null space (the deck checks), so
holding node ``a`` at zero loses nothing: ``U`` is the linear superelement's energy of the
deformation seen from node a's frame. Internal force ``B^T K q_l`` with ``B = dq_l/dq``
(translations added, rotations turned by spatial spins ``dR = hat(dw) R``)::

    du_l,i = R_a^T (dx_i - dx_a + hat(p_i) dw_a),      dw_l,i = S_i (dw_i - dw_a),

``S_i v = skew-vee(R_a^T hat(v) R_i)``; tangent exact, ``B^T K B`` plus the derivative of
``B^T s`` at fixed ``s = K q_l`` (:meth:`CorotSuperelement3D.geometric`, exact: ``B^T s`` is
affine in each of ``R_a``, ``R_i``, ``p`` separately, so a unit difference is its derivative).

**Energy-conserving force** (:meth:`CorotSuperelement3D.conserving`): with the interface nodes
turning by ``cay(psi_i)`` (they are Cayley nodes, :func:`fem.integrators.cayley.chord_nodes`,
through :attr:`CorotSuperelement3D.frame`), ``q_l1 - q_l0 = G inc`` *exactly*, ``G`` being
``B`` at ``Rbar = (R_0 + R_1)/2`` and ``pbar = (p_0 + p_1)/2`` with ``psi`` in place of
``dw``. ``f = G^T K (q_l0 + q_l1)/2`` does the work ``U_1 - U_0`` to round-off at any step;
``G`` annihilates the mid-point rigid motions (``dx_i = t + omega x xbar_i``, ``psi_i =
omega``), so ``f`` has no resultant force and no moment about the mid-point positions: both
momenta are conserved. Newton's tangent: ``G^T K B_1 / 2`` plus the exact derivative of ``G``
(half the geometric part at the averaged matrices).

The recovered configuration (what the inertia integrates, :mod:`fem.inertia.floating3d`): the
component's node positions ``y_j = x_a + R_a c_j``, ``c_j = X_j - X_a + (T q_l)_u,j`` and local
rotations ``(T q_l)_theta,j``.

**Geometric stiffening** (issue 33 item 2; ``geometric_stiffening``, default on when the file
has it): a file reduced with ``modal_derivatives = true`` holds the component's own strain
energy as a quartic polynomial of the reduced coordinates (:mod:`fem.cms.nonlinear`: the full
model's Taylor polynomial by enforced displacements, on a basis with static modal
derivatives), and ``U(q_l)`` is that polynomial (:meth:`CorotSuperelement3D.local_energy`;
node a's coordinates, zero, are not in its higher terms). The force is ``B^T grad U``, the
tangent ``B^T H B`` plus the geometric part at ``s = grad U`` (exact). The energy-conserving
force is ``G^T sbar`` with ``sbar = int_0^1 grad U(q_l0 + t dq_l) dt``, integrated *exactly* by
the 2-point Gauss-Legendre rule (``grad U`` is cubic in ``t``), so ``f . inc = sbar . dq_l =
U_1 - U_0`` to round-off as for the quadratic energy, and both momenta stay exact (``G``
annihilates the mid-point rigid motions); its Newton tangent is ``G^T (int_0^1 t H dt) B_1``
plus the geometric part at ``sbar`` (exact, by the same rule). A spinning beam stiffens through
the derivatives' axial (foreshortening) fields, on which the frame's centrifugal inertia works,
and the cubic energy term ``N w'^2/2`` coupling them to the bending (Kane's spin-up).
The rotation slots of ``q_l`` (``sin(phi) n``) enter the polynomial as the rotation vectors it
was fitted on: the same to third order in the relative rotation.

**Gravity** (issue 33 item 3; :meth:`CorotSuperelement3D.gravity_conserving`): the potential
``V = -g . sum_k m_k y_k`` of the file's lumped masses at the recovered nodes (those
:mod:`fem.inertia.floating3d` integrates), with ``sum_k m_k y_k = M x_a + R_a z``, ``z = s_0 +
L q_l`` (``s_0 = sum m_k (X_k - X_a)``, ``L = sum m_k T_u,k``): bilinear in ``R_a`` and
``q_l``, so over a Cayley step ``R_a1 z_1 - R_a0 z_0 = psi_a x (Rbar zbar) + Rbar L G inc``
exactly and the force

    f = -M g on x_a,   g x (Rbar zbar) on psi_a,   -G^T L^T Rbar^T g   (g: the ends' mean)

does ``-f . inc = g . (sum m y_1 - sum m y_0)``, the potential's change, to round-off; the
energy-conserving step (:meth:`fem.integrators.midpoint.EnergyConserving._frame_gravity`) adds it
to the element's force and books that work as external. At a zero step it is the gradient of
``V`` (the continuous Jacobian at the averaged matrices, as the elastic force's). Its Newton
tangent is exact (the derivative of ``G`` by :meth:`CorotSuperelement3D.geometric`). Its dead
load on ``q`` (:meth:`gravity_parts`) is zero: the file's ``reduced/gravity`` is not used.

Linearize steps (issue 33 item 5) take it: the element's tangent above (with the polynomial's
Hessian at the relative equilibrium: the centrifugal stiffening) and its inertia's blocks about
rest in a turning frame (:meth:`fem.inertia.floating3d.FloatingInertia3D.linear_blocks`).

Refused (deck errors): Newmark, generalized-alpha, the plain mid-point rule (their inertia is not
written for the 3D frame yet), sweeps (``steps[i].type``), modal damping, gravity in static and
linearize steps (``steps[i].loads``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from fem import rotations as so3
from fem.elements.superelement.group import Superelement, SuperelementData
from fem.elements.superelement.polynomial import Polynomial
from fem.errors import ModelError
from fem.rotations import hat, vee

MEMO = 8            #: frames and Jacobians remembered
#: the 2-point Gauss-Legendre abscissae on [0, 1] (weights 1/2)
GAUSS = 0.5 + np.array([-0.5, 0.5]) / np.sqrt(3.0)
#: ``hat(e_c)`` for the three axes: ``EPS[c] @ v = e_c x v``
EPS = hat(np.eye(3))


def skew_map(A: NDArray, C: NDArray) -> NDArray:
    """``(k, 3, 3)``: ``S_i v = vee(A^T hat(v) C_i)`` (``A (3, 3)``, ``C (k, 3, 3)``)."""
    Y = np.einsum("ji,cjl,klm->kcim", A, EPS, C)               # (k, c, 3, 3)
    return np.swapaxes(vee(Y), 1, 2)                             # (k, 3 rows, c)


@dataclass
class Frame3D:
    """Node a's frame in one configuration.

    ``Ra (3, 3)``, ``Rs (k, 3, 3)`` the interface nodes' rotations (identity where a node has
    none), ``p (k, 3)`` positions relative to node ``a``, ``ql (nde,)`` the local coordinates
    in the element vector's layout, ``xa (3,)`` node a's position.
    """

    Ra: NDArray
    Rs: NDArray
    p: NDArray
    ql: NDArray
    xa: NDArray


class FloatingFrame3D:
    """Marks the group's nodes as following a non-linear frame (Cayley nodes of the scheme)."""

    linear = False


class CorotSuperelement3D(Superelement):
    """A 3D superelement on node a's floating frame (module docstring); ``E = 1``."""

    capabilities = frozenset({"stiffness", "mass", "energy_conserving", "internal_unknowns"})
    additive_rotations = False          # its nodes turn by spatial spins
    inertia = "floating3d"              # fem.inertia.floating3d.FloatingInertia3D
    frame = FloatingFrame3D()           # its nodes turn by Cayley parameters (chord_nodes)

    def __init__(self, name: str, nodes, X, dim: int, data: SuperelementData,
                 internal_start: int = 0, path: str = "", stiffening: bool = False):
        super().__init__(name, nodes, X, dim, data, internal_start, path)
        #: the component's own polynomial strain energy (module doc, "Geometric stiffening")
        self.polynomial = stiffening_polynomial(self) if stiffening else None
        self.stiffening = self.polynomial is not None
        names, ndn, k = self.dof_names, self.ndn, self.nen
        base = np.arange(k) * ndn
        #: (k, 3) element-vector positions of each interface node's ux, uy, uz
        self.tx = np.column_stack([base + names.index(s) for s in ("ux", "uy", "uz")])
        rot = all(s in names for s in ("rx", "ry", "rz"))
        #: (k, 3) ... of its rx, ry, rz (-1: none)
        self.tr = (np.column_stack([base + names.index(s) for s in ("rx", "ry", "rz")])
                   if rot else np.full((k, 3), -1))
        #: (k,) interface nodes with local rotations (every one with rotations but node a)
        self.has_w = self.tr[:, 0] >= 0
        self.has_w[0] = False
        self.ie = np.arange(self.nd, self.nd + data.n_modal)
        self.nde = self.nd + data.n_modal
        self.P = self.X[0] - self.X[0, :1]                       # (k, 3) X_i - X_a
        # --- the component's recovery: its unknowns (node, slot) and T's rows
        n_c = len(data.component_ids)
        table = np.full((n_c, 6), -1)
        table[data.component_dofs[:, 0], data.component_dofs[:, 1]] = np.arange(
            len(data.component_dofs))
        moving = (table[:, :3] >= 0).any(axis=1)
        turning = (table[:, 3:] >= 0).any(axis=1)
        #: (Nt,) component nodes with translations, (Nt, 3) their rows of T
        self.t_nodes = np.flatnonzero(moving)
        self.rows_u = table[moving][:, :3]
        #: (Nr,) component nodes with rotations, (Nr, 3) their rows of T
        self.r_nodes = np.flatnonzero(turning)
        self.rows_r = table[turning][:, 3:]
        #: (Nc, 3) the component's nodes as placed in the model
        self.Xc = data.component_coordinates + self.offset
        self.C0 = self.Xc[self.t_nodes] - self.X[0, 0]            # (Nt, 3) X_j - X_a
        #: the last few frames and Jacobians (a step evaluates each several times)
        self._memo: dict = {}

    # --- checks of the deck's build -------------------------------------------------------------
    def translation_complete(self) -> bool:
        """Whether every recovered node with a translation or rotation has all three."""
        return bool(np.all(self.rows_u >= 0) and np.all(self.rows_r >= 0))

    def rigid_defect(self) -> float:
        """``max |K r| / (max |K| max |r|)`` over the six rigid motions of the interface."""
        K = self.Ke[0]
        Xi = self.X[0]
        r = np.zeros((6, self.nde))
        for c in range(3):
            r[c, self.tx[:, c]] = 1.0
            r[3 + c][self.tx] = np.cross(np.eye(3)[c], Xi)
            if self.tr[0, 0] >= 0:
                r[3 + c, self.tr[:, c]] = 1.0
        scale = max(np.abs(K).max(), 1e-300) * np.abs(r).max(axis=1)
        return float((np.abs(r @ K).max(axis=1) / scale).max())

    # --- kinematics -----------------------------------------------------------------------------
    def vector(self, state) -> NDArray:
        """(nde,) the element vector ``[nodal slots; eta]`` of ``state`` (rotation vectors)."""
        return self.coordinates(state)[0]

    def local_frame(self, state) -> Frame3D:
        """Node a's frame and the local coordinates of ``state`` (the last few remembered)."""
        nodes = self.conn[0]
        u, q, eta = state.u[nodes, :3], state.rot[nodes], self.modal(state)[0]
        key = (u.tobytes(), q.tobytes(), eta.tobytes())
        memo = self._memo.setdefault("frame", {})
        if key not in memo:
            if len(memo) >= MEMO:
                memo.pop(next(iter(memo)))
            memo[key] = self.frame_of(self.X[0] + u, so3.quat_to_matrix(q), eta)
        return memo[key]

    def frame_of(self, x: NDArray, Rs: NDArray, eta: NDArray) -> Frame3D:
        """The frame of interface positions ``x (k, 3)``, rotations ``Rs (k, 3, 3)``, ``eta``."""
        Ra = Rs[0]
        p = x - x[0]
        ql = np.zeros(self.nde)
        ql[self.tx] = p @ Ra - self.P
        w = self.has_w
        ql[self.tr[w]] = vee(np.einsum("ji,kjl->kil", Ra, Rs[w]))
        ql[self.ie] = eta
        return Frame3D(Ra, Rs, p, ql, x[0].copy())

    def jacobian(self, Ra: NDArray, Rs: NDArray, p: NDArray) -> NDArray:
        """``(nde, nde)`` ``B`` at ``Ra``, ``Rs``, ``p`` (module docstring).

        Columns: the nodes' translations, spins and ``eta``; also ``G`` at the averaged
        matrices.
        """
        key = (Ra.tobytes(), Rs.tobytes(), p.tobytes())
        memo = self._memo.setdefault("jacobian", {})
        if key in memo:
            return memo[key]
        if len(memo) >= MEMO:
            memo.pop(next(iter(memo)))
        tx, tr, w = self.tx, self.tr, self.has_w
        B = np.zeros((self.nde, self.nde))
        memo[key] = B
        RaT = Ra.T
        B[tx[:, :, None], tx[:, None, :]] = RaT
        B[tx[:, :, None], tx[0][None, None, :]] -= RaT
        B[tx[:, :, None], tr[0][None, None, :]] += RaT @ hat(p)
        if w.any():
            S = skew_map(Ra, Rs[w])                              # (kw, 3, 3)
            rows = tr[w]
            B[rows[:, :, None], rows[:, None, :]] = S
            B[rows[:, :, None], tr[0][None, None, :]] -= S
        B[self.ie, self.ie] = 1.0
        return B

    def _force_of(self, Ra: NDArray, Rs: NDArray, p: NDArray, s: NDArray) -> NDArray:
        """``B(Ra, Rs, p)^T s (nde,)``, affine in each of ``Ra``, ``Rs``, ``p`` separately."""
        tx, tr, w = self.tx, self.tr, self.has_w
        f = np.zeros(self.nde)
        g = s[tx] @ Ra.T                                         # (k, 3) R_a s_u,i
        f[tx] = g
        f[tx[0]] -= g.sum(axis=0)
        f[tr[0]] += np.cross(g, p).sum(axis=0)
        if w.any():
            m = np.einsum("kic,ki->kc", skew_map(Ra, Rs[w]), s[tr[w]])
            f[tr[w]] += m
            f[tr[0]] -= m.sum(axis=0)
        f[self.ie] = s[self.ie]
        return f

    def geometric(self, s: NDArray, Ra: NDArray, Rs: NDArray, p: NDArray,
                  Rd: NDArray | None = None, factor: float = 1.0) -> NDArray:
        """``(nde, nde)`` the derivative of ``B^T s`` at fixed ``s``.

        ``Ra``, ``Rs`` and ``p`` move by ``factor`` times a node's translation (``dp``) or spin
        (``hat(dw) Rd``; ``Rd`` the rotations the spin acts on, ``Rs`` by default): ``factor
        = 1/2`` and ``Rd = R_1`` for the averaged matrices of ``G``. With ``g_i = R_a s_u,i``
        and the moments ``m_i = vee(R_a hat(s_w,i) R_i^T)`` of :meth:`_force_of`: a
        translation moves ``sum g_i x p_i``, a spin of node a every ``g_i`` and ``m_i``, a
        spin of node i its ``m_i``.
        """
        Rd = Rs if Rd is None else Rd
        tx, tr, w, phi = self.tx, self.tr, self.has_w, factor
        K = np.zeros((self.nde, self.nde))
        su = s[tx]
        g = su @ Ra.T                                            # (k, 3)
        Hg = hat(g[1:])                                          # (k-1, 3, 3)
        K[tr[0][:, None], tx[1:, None, :]] += phi * Hg
        K[tr[0][:, None], tx[0][None, :]] -= phi * Hg.sum(axis=0)
        H = hat(su @ Rd[0].T)                                    # (k, 3, 3) hat(Rd_a s_u,i)
        K[tx[:, :, None], tr[0][None, None, :]] -= phi * H
        K[tx[0][:, None], tr[0][None, :]] += phi * H.sum(axis=0)
        K[tr[0][:, None], tr[0][None, :]] += phi * np.einsum("kij,kjl->il", hat(p), H)
        if w.any():
            sw = hat(s[tr[w]])                                   # (kw, 3, 3)
            Xa = np.einsum("ij,kjl,kml->kim", Rd[0], sw, Rs[w])  # Rd_a hat(s) R_i^T
            Da = np.swapaxes(vee(np.einsum("cij,kjl->kcil", EPS, Xa)), 1, 2)
            Y = np.einsum("ij,kjl,kml->kim", Ra, sw, Rd[w])      # R_a hat(s) Rd_i^T
            Di = -np.swapaxes(vee(np.einsum("kij,cjl->kcil", Y, EPS)), 1, 2)
            rows = tr[w]
            K[rows[:, :, None], tr[0][None, None, :]] += phi * Da
            K[tr[0][:, None], tr[0][None, :]] -= phi * Da.sum(axis=0)
            K[rows[:, :, None], rows[:, None, :]] += phi * Di
            K[tr[0][None, :, None], rows[:, None, :]] -= phi * Di
        return K

    # --- the element protocol -------------------------------------------------------------------
    def _response(self, state, tangent: bool):
        fr = self.local_frame(state)
        s = self.local_stress(fr.ql)
        B = self.jacobian(fr.Ra, fr.Rs, fr.p)
        force = (B.T @ s)[None]
        if not tangent:
            return force, None
        K = self.local_stiffness(fr.ql)
        return force, (B.T @ K @ B + self.geometric(s, fr.Ra, fr.Rs, fr.p))[None]

    def internal_force(self, state) -> NDArray:
        """(E, nde) ``B^T K q_l``."""
        return self._response(state, False)[0]

    def evaluate(self, state, tangent: bool = True):
        """Internal force and (if asked) the exact tangent, from one frame."""
        return self._response(state, tangent)

    def tangent(self, state) -> NDArray:
        """(E, nde, nde) ``B^T K B`` plus the geometric part (exact, by spins)."""
        return self._response(state, True)[1]

    def material_tangent(self, state) -> NDArray:
        """(E, nde, nde) ``B^T K B``."""
        fr = self.local_frame(state)
        B = self.jacobian(fr.Ra, fr.Rs, fr.p)
        return (B.T @ self.local_stiffness(fr.ql) @ B)[None]

    def energy(self, state) -> NDArray:
        """(E,) ``U(q_l)``: ``q_l^T K q_l / 2`` (plus the polynomial's higher terms)."""
        return np.array([self.local_energy(self.local_frame(state).ql)])

    # --- the local strain energy: quadratic, or the component's polynomial -----------------------
    def local_energy(self, ql: NDArray) -> float:
        """``U(q_l)``."""
        if self.polynomial is not None:
            return self.polynomial.energy(ql)
        return float(0.5 * ql @ self.Ke[0] @ ql)

    def local_stress(self, ql: NDArray) -> NDArray:
        """``(nde,)`` ``dU/dq_l``."""
        if self.polynomial is not None:
            return self.polynomial.gradient(ql)
        return self.Ke[0] @ ql

    def local_stiffness(self, ql: NDArray) -> NDArray:
        """``(nde, nde)`` ``d^2U/dq_l^2``."""
        if self.polynomial is not None:
            return self.polynomial.hessian(ql)
        return self.Ke[0]

    def mean_stress(self, q0: NDArray, q1: NDArray) -> tuple[NDArray, NDArray]:
        """``sbar = int_0^1 dU/dq(q0 + t dq) dt`` and its derivative by ``q1``.

        ``int_0^1 t H(q0 + t dq) dt``; by the 2-point Gauss-Legendre rule, exact: the
        polynomial's gradient is cubic in ``t``, ``t H`` too. Linear: ``K (q0 + q1)/2``, ``K/2``.
        """
        if self.polynomial is None:
            K = self.Ke[0]
            return K @ (0.5 * (q0 + q1)), 0.5 * K
        dq = q1 - q0
        s, D = np.zeros_like(q0), np.zeros((len(q0), len(q0)))
        for t in GAUSS:
            q = q0 + t * dq
            s += 0.5 * self.polynomial.gradient(q)
            D += 0.5 * t * self.polynomial.hessian(q)
        return s, D

    def step_gradient(self, f0: Frame3D, f1: Frame3D) -> NDArray:
        """``G (nde, nde)``: ``G inc = q_l1 - q_l0`` exactly for Cayley steps (module doc)."""
        return self.jacobian(0.5 * (f0.Ra + f1.Ra), 0.5 * (f0.Rs + f1.Rs), 0.5 * (f0.p + f1.p))

    def conserving(self, s0, s1, sm, inc, hist, **kinematics):
        """``G^T K (q_l0 + q_l1)/2``: work ``U_1 - U_0`` exactly, both momenta (module doc).

        ``inc`` must hold the Cayley parameters ``psi`` of the interface nodes' rotations
        (``R_1 = cay(psi) R_0``), as the energy-conserving scheme gives its Cayley nodes.
        """
        f0, f1 = self.local_frame(s0), self.local_frame(s1)
        G = self.step_gradient(f0, f1)
        sbar, D = self.mean_stress(f0.ql, f1.ql)
        B1 = self.jacobian(f1.Ra, f1.Rs, f1.p)
        Ra, Rs, p = 0.5 * (f0.Ra + f1.Ra), 0.5 * (f0.Rs + f1.Rs), 0.5 * (f0.p + f1.p)
        Kt = G.T @ D @ B1 + self.geometric(sbar, Ra, Rs, p, f1.Rs, 0.5)
        U1 = self.local_energy(f1.ql)
        return (G.T @ sbar)[None], Kt[None], np.array([U1]), {}

    # --- the recovered configuration ------------------------------------------------------------
    def local_field(self, ql: NDArray) -> tuple[NDArray, NDArray]:
        """``c (Nt, 3)`` the recovered nodes in the frame, ``w (Nr, 3)`` their local rotations."""
        z = self.data.T @ ql[self.pos]
        return self.C0 + z[self.rows_u], z[self.rows_r]

    def recovered(self, fr: Frame3D) -> tuple[NDArray, NDArray]:
        """``y (Nt, 3)`` the recovered positions ``x_a + R_a c`` and ``w (Nr, 3)``."""
        c, w = self.local_field(fr.ql)
        return fr.xa + c @ fr.Ra.T, w

    def outputs(self, state) -> dict[str, NDArray]:
        """``modal_coordinates (E, m)``, ``recovered_displacement (E, Nc, 3)`` (translations)."""
        y, _ = self.recovered(self.local_frame(state))
        out = np.zeros((len(self.Xc), 3))
        out[self.t_nodes] = y - self.Xc[self.t_nodes]
        return {"modal_coordinates": self.modal(state).copy(), "recovered_displacement": out[None]}

    def properties(self) -> dict[str, NDArray]:
        """The linear superelement's, plus the component's node ids and placed coordinates."""
        return {**super().properties(), "component_ids": self.data.component_ids[None, :],
                "component_coordinates": self.Xc[None]}

    def options(self) -> dict[str, str]:
        """The file, its reduction method and mass, ``formulation = "corotational"``."""
        return {**super().options(), "formulation": "corotational",
                "geometric_stiffening": str(self.stiffening).lower()}

    # --- gravity on the recovered masses (issue 33 item 3; module doc "Gravity") ---------------
    def gravity_parts(self, acceleration) -> tuple[NDArray, NDArray]:
        """Zeros: its gravity turns with the frame, so it is no dead load on ``q``.

        The energy-conserving step takes it from :meth:`gravity_conserving` instead.
        """
        return np.zeros((self.nen, 6)), np.zeros(self.n_internal)

    def gravity_moments(self) -> tuple[float, NDArray, NDArray]:
        """``M``, ``s0 (3,)`` and ``L (3, nde)``: ``sum_k m_k y_k = M x_a + R_a (s0 + L q_l)``.

        ``m_k`` the file's lumped translational masses of the recovered nodes (what
        :mod:`fem.inertia.floating3d` integrates), ``s0 = sum m_k (X_k - X_a)``, ``L`` the first
        moment of ``T``'s translation rows. Cached.
        """
        got = self._memo.get("gravity")
        if got is None:
            m = np.asarray(self.data.component_mass, dtype=float)[self.rows_u]     # (Nt, 3)
            if np.abs(m - m[:, :1]).max(initial=0.0) > 1e-12 * np.abs(m).max(initial=1.0):
                raise ModelError(f"superelement '{self.name}': gravity needs the same lumped "
                                 "mass along x, y and z at every recovered node")
            mk = m[:, 0]
            L = np.zeros((3, self.nde))
            L[:, self.pos] = np.einsum("k,kcr->cr", mk, self.data.T[self.rows_u])
            got = self._memo["gravity"] = (float(mk.sum()), mk @ self.C0, L)
        return got

    def gravity_potential(self, state, acceleration) -> float:
        """``-a . sum_k m_k y_k`` of ``state`` (zero where the masses sit at the origin)."""
        M, s0, L = self.gravity_moments()
        fr = self.local_frame(state)
        return -float(np.asarray(acceleration, dtype=float) @ (
            M * fr.xa + fr.Ra @ (s0 + L @ fr.ql)))

    def gravity_conserving(self, s0, s1, a0, a1, tangent: bool = True):
        """Gravity ``abar = (a0 + a1)/2`` on the recovered masses over a step: ``(f, K, W)``.

        ``W = abar . (sum m y_1 - sum m y_0)``, its work, equals ``-f . inc`` exactly for Cayley
        steps (module doc); ``f (nde,)`` is paired with the element increment as the elastic
        force is, ``K (nde, nde)`` its Newton tangent with respect to ``s1`` (or None).
        """
        M, sm, L = self.gravity_moments()
        a = 0.5 * (np.asarray(a0, dtype=float) + np.asarray(a1, dtype=float))
        f0, f1 = self.local_frame(s0), self.local_frame(s1)
        z0, z1 = sm + L @ f0.ql, sm + L @ f1.ql
        zbar = 0.5 * (z0 + z1)
        Ra, Rs, p = 0.5 * (f0.Ra + f1.Ra), 0.5 * (f0.Rs + f1.Rs), 0.5 * (f0.p + f1.p)
        G = self.step_gradient(f0, f1)
        s = L.T @ (Ra.T @ a)                                     # (nde,)
        f = -(G.T @ s)
        f[self.tx[0]] -= M * a
        f[self.tr[0]] += np.cross(a, Ra @ zbar)
        W = float(a @ (M * (f1.xa - f0.xa) + f1.Ra @ z1 - f0.Ra @ z0))
        if not tangent:
            return f, None, W
        B1 = self.jacobian(f1.Ra, f1.Rs, f1.p)
        Ha = hat(a)
        K = -self.geometric(s, Ra, Rs, p, f1.Rs, 0.5)
        K[self.tr[0]] += 0.5 * Ha @ Ra @ L @ B1
        K[self.tr[0][:, None], self.tr[0][None, :]] -= 0.5 * Ha @ hat(f1.Ra @ zbar)
        K[:, self.tr[0]] -= 0.5 * G.T @ L.T @ f1.Ra.T @ Ha
        return f, K, W


def stiffening_polynomial(g: CorotSuperelement3D) -> Polynomial:
    """The file's polynomial strain energy on the element vector's layout (``g.pos``)."""
    d = g.data
    return Polynomial(g.Ke[0], g.pos[d.nonlinear_index], d.cubic, d.quartic,
                      None if d.quartic_index is None else g.pos[d.quartic_index])
