"""Co-rotational flat shell triangle: the linear OPT + DKT facet in a frame that follows it.

The framework is the consistent ("global") co-rotational formulation of Battini & Pacoste
(J.-M. Battini, C. Pacoste, *On the equivalence of local and global formulations in co-rotational
analyses*, 2006; the same steps as their beams, :mod:`fem.elements.beam.frames3d`): the element's
local deformational displacements ``p`` are exact functions of the global nodal positions and
orientations, the internal force is ``B^T q`` with ``B = dp/dd`` and ``q = K_l p``, and the
tangent is its exact derivative, ``B^T K_l B`` plus the geometric stiffness ``d(B^T)/dd : q``
(Felippa & Haugen, CMAME 194 (2005) 2285-2335, call the same object the consistent tangent of
the "EICR" with its projector; here ``B`` itself annihilates rigid motions, so no separate
projector is applied). Small strains, large rotations.

* **Element frame** ``R_e = [e1 e2 e3]`` from the current corners (:func:`element_frames`):
  ``e1`` along side 1-2, ``e3`` the normal, as the linear element's frame (one of the frame
  choices of Felippa & Haugen, section 5); ``R_0`` is its reference value.
* **Deformational DOFs** of corner ``a``: ``u_a = R_e^T (x_a - x_1) - (X_a - X_1)_0`` (reference
  local coordinates; ``u_1 = 0``, and the local ``w_a`` and ``v_2`` vanish identically), and
  ``theta_a = log(R_e^T R_a R_0)`` (``R_a`` the nodal rotation).
* **Frame spin** (frame components) ``w = G dd``, exact for this frame: with ``r_a = x_a - x_1``,
  local coordinates ``(l, 0)``, ``(x3, y3)`` of corners 2 and 3,

      w3 = e2 . dr_2 / l,   w2 = -e3 . dr_2 / l,   w1 = (x3 w2 + e3 . dr_3) / y3,

  so ``du_a = R_e^T dr_a + hat(u~_a) G dd`` (``u~_a = R_e^T r_a``) and
  ``dtheta_a = Lambda_a (R_e^T dw_a - G dd)``, ``Lambda_a = jl_inv(theta_a)``.
* **Geometric stiffness** at fixed ``q``: (i) the frame turning the local forces ``R_e q_u`` and
  moments ``R_e Lambda_a^T m_a``; (ii) the change of ``Lambda^T`` (``K_h``,
  :func:`fem.rotations.kh`); (iii) the change of the lever arms ``u~_a`` in ``G^T c``, ``c = sum_a
  q_u,a x u~_a - Lambda_a^T m_a``; (iv) the change of ``G`` itself (:meth:`g_contract`). A central
  difference of the force checks all four (tests/test_shell_corot.py).

At the reference, ``B`` differs from the linear element's ``Lambda`` only by rigid modes of
``K_l``, so the small-displacement limit is the linear element exactly. The stresses a buckling
step carries (``stress``, ``stress_rate``) are the local nodal forces ``q (E, 18)``, the basic
forces of the geometric stiffness; the outputs (``N``, ``M``, surface stresses) are the linear
element's of ``p`` in the current frame (their global components turn with the facet). Mass
and pressure: the linear element's (reference geometry; the lumped nodal inertia is isotropic,
the same in every frame; pressure is a dead load).

Energy-conserving dynamics (:meth:`CorotShell.conserving`): ``Phi = p.K_l p / 2`` is quadratic
in ``p``, so Crisfield & Shi's algorithmic deformations ``p1 = p0 + B_m inc`` (``B`` at the
mid-point configuration) and force ``B_m^T K_l (p0 + p1)/2`` give the exact energy and both
momenta, as for the beams; the nodes turn by Cayley parameters like the beams' chords
(:func:`fem.integrators.midpoint.chord_nodes`), so a rigid spin adds no local deformation.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from fem import rotations as so3
from fem.elements.base import outer
from fem.elements.shell import shell_jit
from fem.elements.shell.group import Shell, element_frames

_T = [slice(6 * a, 6 * a + 3) for a in range(3)]          # translation DOFs of corner a
_W = [slice(6 * a + 3, 6 * a + 6) for a in range(3)]      # rotation (spin) DOFs of corner a


@dataclass
class ShellKinematics:
    """Frame quantities of one evaluation."""

    p: NDArray        # (E, 18) local deformational displacements and rotations
    B: NDArray        # (E, 18, 18) dp/dd (dd: translations and spatial spins)
    Re: NDArray       # (E, 3, 3) current element frame, columns e1 e2 e3
    xl: NDArray       # (E, 3, 3) current corners in the element frame, relative to corner 1
    G: NDArray        # (E, 3, 18) frame spin map (frame components)
    theta: NDArray    # (E, 3, 3) local rotations
    Lam: NDArray      # (E, 3, 3, 3) jl_inv(theta)
    Bhat: NDArray     # (E, 3, 3, 18) R_e^T E_a - G


class CorotShellFrame:
    """Co-rotational kinematics of flat triangles (see the module docstring).

    Parameters
    ----------
    R0 : (E, 3, 3) reference element frames, columns e1 e2 e3
    xl0 : (E, 3, 3) reference corners in those frames, relative to corner 1
    """

    #: a co-rotational frame: in the energy-conserving scheme its nodes turn by Cayley
    #: parameters like the chords of co-rotational beams (fem.integrators.midpoint.chord_nodes)
    linear = False

    def __init__(self, R0: NDArray, xl0: NDArray):
        self.R0 = R0
        self.xl0 = xl0

    def kinematics(self, x: NDArray, R: NDArray) -> ShellKinematics:
        """Frame of corners ``x (E, 3, 3)`` (relative to corner 1), nodal rotations ``R``.

        ``R (E, 3, 3, 3)``: the corners' rotation matrices (from the reference orientation).
        """
        E = len(x)
        Re, xl, theta = self.deformation(x, R)
        ReT = np.swapaxes(Re, 1, 2)
        G = self.spin_map(Re, xl)
        Lam = so3.jl_inv(theta)
        Bhat = np.repeat(-G[:, None], 3, axis=1)
        B = np.zeros((E, 18, 18))
        hx = so3.hat(xl)
        for a in range(3):
            Bhat[:, a, :, _W[a]] += ReT
            if a:
                B[:, _T[a], _T[a]] = ReT
                B[:, _T[a], _T[0]] = -ReT
                B[:, _T[a]] += hx[:, a] @ G
            B[:, _W[a]] = Lam[:, a] @ Bhat[:, a]
        p = np.concatenate([xl - self.xl0, theta], axis=2).reshape(E, 18)
        return ShellKinematics(p=p, B=B, Re=Re, xl=xl, G=G, theta=theta, Lam=Lam, Bhat=Bhat)

    def deformation(self, x: NDArray, R: NDArray) -> tuple[NDArray, NDArray, NDArray]:
        """``Re (E, 3, 3)`` (columns ``e1 e2 e3``), ``xl (E, 3, 3)`` and ``theta (E, 3, 3)``.

        The frame, the corners in it and the local rotations of corners ``x`` (relative to
        corner 1) with rotation matrices ``R (E, 3, 3, 3)``: what the outputs read, without
        the derivatives of :meth:`kinematics`.
        """
        Re = np.swapaxes(element_frames(x), 1, 2)
        ReT = np.swapaxes(Re, 1, 2)
        xl = (ReT[:, None] @ x[..., None])[..., 0]
        theta = so3.logm(ReT[:, None] @ R @ self.R0[:, None])
        return Re, xl, theta

    @staticmethod
    def spin_map(Re: NDArray, xl: NDArray) -> NDArray:
        """(E, 3, 18) ``G``: the frame's spin (frame components) per element increment."""
        e2, e3 = Re[:, :, 1], Re[:, :, 2]
        l, x3, y3 = xl[:, 1, 0], xl[:, 2, 0], xl[:, 2, 1]
        G = np.zeros((len(Re), 3, 18))
        G[:, 0, _T[1]] = -(x3 / (y3 * l))[:, None] * e3
        G[:, 0, _T[2]] = (1.0 / y3)[:, None] * e3
        G[:, 1, _T[1]] = -(1.0 / l)[:, None] * e3
        G[:, 2, _T[1]] = (1.0 / l)[:, None] * e2
        G[:, :, _T[0]] = -(G[:, :, _T[1]] + G[:, :, _T[2]])
        return G

    def geometric(self, kin: ShellKinematics, q: NDArray) -> NDArray:
        """(E, 18, 18) derivative of ``B^T q`` at fixed local forces ``q (E, 18)``."""
        E = len(q)
        Re, G = kin.Re, kin.G
        qa = q.reshape(E, 3, 6)
        qu, m = qa[:, :, :3], qa[:, :, 3:]
        n = np.einsum("eaji,eaj->eai", kin.Lam, m)                   # Lambda_a^T m_a
        RG = Re @ G                                                   # spatial spin map
        K = np.zeros((E, 18, 18))
        Kh = so3.kh(kin.theta, m)                                     # (E, 3, 3, 3)
        for a in range(3):
            # (i) the frame turns the local forces and moments: d(R_e v) = -hat(R_e v) R_e G dd
            if a:
                F = so3.hat(np.einsum("eij,ej->ei", Re, qu[:, a])) @ RG
                K[:, _T[a]] -= F
                K[:, _T[0]] += F
            K[:, _W[a]] -= so3.hat(np.einsum("eij,ej->ei", Re, n[:, a])) @ RG
            # (ii) change of Lambda_a^T with the local rotation
            Bh = kin.Bhat[:, a]
            K += np.swapaxes(Bh, 1, 2) @ Kh[:, a] @ kin.Lam[:, a] @ Bh
        # (iii) the lever arms u~_a of c = sum_a q_u,a x u~_a - n_a
        Bt = kin.B.reshape(E, 3, 6, 18)[:, :, :3]                    # d u~_a / dd
        K += np.swapaxes(G, 1, 2) @ np.einsum("eaij,eajk->eik", so3.hat(qu), Bt)
        # (iv) the change of G
        c = np.cross(qu, kin.xl).sum(axis=1) - n.sum(axis=1)
        return K + self.g_contract(kin, c)

    def bw_derivative(self, kin: ShellKinematics, w: NDArray) -> NDArray:
        """(E, 18, 18) derivative of ``B w`` for fixed element vectors ``w (E, 18)``.

        The right-hand contraction of ``dB/dd`` (:meth:`geometric` is the left-hand one, at
        fixed ``q``), for the energy-conserving step (:meth:`CorotShell.conserving`). With
        ``g = G dd`` the frame's spin (frame components), ``d(R_e^T v) = hat(R_e^T v) g``, so
        the translation rows ``R_e^T (w_a - w_1) + hat(u~_a) G w`` of corner ``a`` change by::

            hat(R_e^T (w_a - w_1)) G - hat(G w) B_a + hat(u~_a) dG[.] w

        (``B_a = du~_a/dd``), and the rotation rows ``Lambda_a y_a``, ``y_a = R_e^T w_a - G w``,
        as the beams' (:meth:`fem.elements.beam.frames3d.CorotFrame3D.bw_derivative`)::

            (K_h(theta_a, y_a) + hat(y_a)) B_a + Lambda_a (hat(R_e^T w_a) G - dG[.] w).
        """
        E = len(w)
        Re, G = kin.Re, kin.G
        dGw = self.gw_derivative(kin, w)                                  # (E, 3, 18) d(G w)
        wn = w.reshape(E, 3, 6)
        hGw = so3.hat(np.einsum("eki,ei->ek", G, w))
        hx = so3.hat(kin.xl)
        Bn = kin.B.reshape(E, 3, 6, 18)
        out = np.zeros((E, 18, 18))
        for a in (1, 2):
            rel = np.einsum("eji,ej->ei", Re, wn[:, a, :3] - wn[:, 0, :3])
            out[:, _T[a]] = so3.hat(rel) @ G - hGw @ Bn[:, a, :3] + hx[:, a] @ dGw
        y = np.einsum("eaij,ej->eai", kin.Bhat, w)                        # (E, 3, 3)
        wa = np.einsum("eji,eaj->eai", Re, wn[:, :, 3:])                  # R_e^T w_a
        rows = (so3.jl_inv_derivative(kin.theta, y) @ Bn[:, :, 3:]
                + kin.Lam @ (so3.hat(wa) @ G[:, None] - dGw[:, None]))
        for a in range(3):
            out[:, _W[a]] = rows[:, a]
        return out

    @staticmethod
    def gw_derivative(kin: ShellKinematics, w: NDArray) -> NDArray:
        """(E, 3, 18) ``d(G w)/dd`` at fixed element vectors ``w (E, 18)``.

        With ``a = w_2 - w_1``, ``b = w_3 - w_1`` (translations), ``G w = ((x3 g2 + e3.b)/y3,
        -e3.a/l, e2.a/l)``; ``v . de_k = (e_k x v) . R_e G dd`` and ``dl``, ``dx3``, ``dy3`` as
        in :meth:`g_contract`, whose transpose this is (``c . d(G w) = w . d(G^T c)``).
        """
        E = len(w)
        Re, G, xl = kin.Re, kin.G, kin.xl
        e1, e2, e3 = Re[:, :, 0], Re[:, :, 1], Re[:, :, 2]
        l, x3, y3 = xl[:, 1, 0, None], xl[:, 2, 0, None], xl[:, 2, 1, None]
        RG = Re @ G
        wt = w.reshape(E, 3, 6)[:, :, :3]
        a, b = wt[:, 1] - wt[:, 0], wt[:, 2] - wt[:, 0]
        g = np.einsum("eki,ei->ek", G, w)

        def side(vec: NDArray, k: int) -> NDArray:
            row = np.zeros((E, 18))
            row[:, _T[k]], row[:, _T[0]] = vec, -vec
            return row

        def turn(e: NDArray, v: NDArray) -> NDArray:
            return np.einsum("ei,eij->ej", np.cross(e, v), RG)

        dl = side(e1, 1)
        dx3 = side(e1, 2) + y3 * G[:, 2]
        dy3 = side(e2, 2) - x3 * G[:, 2]
        out = np.empty((E, 3, 18))
        out[:, 2] = (turn(e2, a) - g[:, 2, None] * dl) / l
        out[:, 1] = (-turn(e3, a) - g[:, 1, None] * dl) / l
        out[:, 0] = (g[:, 1, None] * dx3 + x3 * out[:, 1] + turn(e3, b)
                     - g[:, 0, None] * dy3) / y3
        return out

    @staticmethod
    def g_contract(kin: ShellKinematics, c: NDArray) -> NDArray:
        """(E, 18, 18) ``d(G^T c)/dd`` at fixed ``c (E, 3)``.

        ``G`` holds ``alpha v`` blocks (``v`` = ``e2`` or ``e3``, ``alpha`` of ``l, x3, y3``):
        ``d(alpha v) = v dalpha + alpha dv`` with ``dv = -hat(v) R_e G dd``, ``dl = e1 . dr_2``,
        ``dx3 = e1 . dr_3 + y3 w3`` and ``dy3 = e2 . dr_3 - x3 w3``.
        """
        E = len(c)
        Re, G, xl = kin.Re, kin.G, kin.xl
        e1, e2, e3 = Re[:, :, 0], Re[:, :, 1], Re[:, :, 2]
        l, x3, y3 = xl[:, 1, 0], xl[:, 2, 0], xl[:, 2, 1]
        RG = Re @ G

        def side(vec: NDArray, a: int) -> NDArray:
            row = np.zeros((E, 18))
            row[:, _T[a]], row[:, _T[0]] = vec, -vec
            return row

        def col(v: NDArray) -> NDArray:
            return v[:, None]

        dl = side(e1, 1)
        dx3 = side(e1, 2) + col(y3) * G[:, 2]
        dy3 = side(e2, 2) - col(x3) * G[:, 2]
        de2, de3 = -so3.hat(e2) @ RG, -so3.hat(e3) @ RG
        a01 = -x3 / (y3 * l)
        d01 = -dx3 / col(y3 * l) + col(x3 / (y3**2 * l)) * dy3 + col(x3 / (y3 * l**2)) * dl
        d02 = -dy3 / col(y3**2)
        c0, c1, c2 = (c[:, k, None, None] for k in range(3))
        M1 = (c0 * (outer(e3, d01) + a01[:, None, None] * de3)
              + c1 * (outer(e3, dl / col(l**2)) - (1.0 / l)[:, None, None] * de3)
              + c2 * (-outer(e2, dl / col(l**2)) + (1.0 / l)[:, None, None] * de2))
        M2 = c0 * (outer(e3, d02) + (1.0 / y3)[:, None, None] * de3)
        out = np.zeros((E, 18, 18))
        out[:, _T[1]], out[:, _T[2]], out[:, _T[0]] = M1, M2, -(M1 + M2)
        return out


class CorotShell(Shell):
    """A batch of co-rotational flat shell triangles (``formulation = "corotational"``).

    The linear element's local stiffness ``K_local``, mass and outputs, on the deformational
    DOFs of :class:`CorotShellFrame`. Parameters as :class:`~fem.elements.shell.Shell`.
    """

    capabilities = frozenset({"stiffness", "geometric_stiffness", "mass", "energy_conserving",
                              "nodal_outputs"})
    additive_rotations = False
    compiled_pairs = frozenset({"shell.evaluate", "shell.conserving"})

    def __init__(self, name, conn, X, dim, **properties):
        super().__init__(name, conn, X, dim, **properties)
        self.formulation = "corotational"
        R0 = np.swapaxes(self.T, 1, 2)
        xl0 = np.einsum("eji,eaj->eai", R0, self.X - self.X[:, :1])
        xl0[:, :, 2] = 0.0                                  # flat: exactly in the plane
        self.frame = CorotShellFrame(R0, xl0)

    def _kinematics(self, state) -> ShellKinematics:
        return self.frame.kinematics(self.positions(state),
                                     state.rotation_matrices()[self.conn])

    def _q(self, kin: ShellKinematics) -> NDArray:
        return np.einsum("eij,ej->ei", self.K_local, kin.p)

    # --- protocol -----------------------------------------------------------------------------
    def evaluate(self, state, tangent: bool = True) -> tuple[NDArray, NDArray | None]:
        """``B^T q`` and (if asked) ``B^T K_l B`` plus the geometric stiffness of ``q``.

        The compiled pair ``shell.evaluate`` (:mod:`fem.kernels`): the kernel where
        :meth:`_compiled` says so, else :meth:`evaluate_numpy`.
        """
        if self._compiled():
            return shell_jit.evaluate_group(self, state, tangent)
        return self.evaluate_numpy(state, tangent)

    def evaluate_numpy(self, state, tangent: bool = True) -> tuple[NDArray, NDArray | None]:
        """:meth:`evaluate` in numpy: the reference of the compiled pair, and its fallback."""
        kin = self._kinematics(state)
        q = self._q(kin)
        f = np.einsum("eij,ei->ej", kin.B, q)
        if not tangent:
            return f, None
        return f, np.swapaxes(kin.B, 1, 2) @ self.K_local @ kin.B + self.frame.geometric(kin, q)

    def _compiled(self, conserving: bool = False) -> bool:
        """Whether :meth:`evaluate` (``conserving``: :meth:`conserving`) runs compiled code.

        Groups of at least :data:`fem.kernels.MIN_ELEMENTS` (``conserving``:
        ``MIN_CONSERVING``) triangles, where numba is there and ``FEM_JIT`` is not ``0``
        (:mod:`fem.elements.shell.shell_jit`); the vectorized numpy code is the reference and the
        fallback.
        """
        return shell_jit.compiled(self.dispatch_size, conserving)

    def internal_force(self, state) -> NDArray:
        """(E, 18) ``B^T K_l p`` in the global frame."""
        return self.evaluate(state, tangent=False)[0]

    def tangent(self, state) -> NDArray:
        """(E, 18, 18) material plus geometric tangent."""
        return self.evaluate(state)[1]

    def material_tangent(self, state) -> NDArray:
        """(E, 18, 18) ``B^T K_l B``."""
        B = self._kinematics(state).B
        return np.swapaxes(B, 1, 2) @ self.K_local @ B

    def geometric_stiffness(self, state, stress: NDArray) -> NDArray:
        """(E, 18, 18) geometric stiffness of local nodal forces ``stress (E, 18)``."""
        return self.frame.geometric(self._kinematics(state), stress)

    def stress(self, state) -> NDArray:
        """(E, 18) local nodal forces ``q = K_l p`` (the basic forces of the element)."""
        return self._q(self._kinematics(state))

    def stress_rate(self, state, due: NDArray) -> NDArray:
        """(E, 18) their linearized change ``K_l B due`` for element increments ``due``."""
        B = self._kinematics(state).B
        return np.einsum("eij,ejk,ek->ei", self.K_local, B, due)

    def energy(self, state) -> NDArray:
        """(E,) strain energy ``p.K_l p / 2``."""
        p = self._kinematics(state).p
        return 0.5 * np.einsum("ei,eij,ej->e", p, self.K_local, p)

    def _deformed(self, state) -> tuple[NDArray, NDArray]:
        """The deformational DOFs ``p`` and the current frames (rows ``e1, e2, e3``)."""
        Re, xl, theta = self.frame.deformation(self.positions(state),
                                               state.rotation_matrices()[self.conn])
        p = np.concatenate([xl - self.frame.xl0, theta], axis=2).reshape(len(self), 18)
        return p, np.swapaxes(Re, 1, 2)

    # --- energy-conserving dynamics ----------------------------------------------------------
    def conserving_start(self, state) -> dict:
        """The algorithmic local deformations start from the geometric ones."""
        return {"p": self._kinematics(state).p.copy()}

    def conserving(self, s0, s1, sm, inc, hist, spins=None, cayley=None):
        """Algorithmic force with ``f . inc = Phi(p1) - Phi(p0)`` exactly, and both momenta.

        Crisfield & Shi's construction (notes/crisfield_shi.md, sections 4-5), as the beams'
        (:meth:`fem.elements.beam.Beam.conserving`): the local deformations are *algorithmic*,
        ``p1 = p0 + B_m inc`` with ``B_m`` the frame's ``B`` at the mid-point configuration
        ``sm``, and ``f = B_m^T q`` with ``q = K_l (p0 + p1)/2``. ``Phi = p.K_l p/2`` is
        quadratic, so ``q . (p1 - p0) = Phi(p1) - Phi(p0)``: the work of ``f`` over the step is
        the strain-energy change. ``B_m`` annihilates the rigid motions about the mid-point
        configuration, so ``f`` has neither resultant force nor moment there: linear and angular
        momentum are exact with the mid-point inertia. ``p`` may drift from the geometric
        deformations (by O(h^3) a step; :meth:`conserving_start` restarts it at each dynamic
        step); a rigid step adds nothing to it when the nodes turn by ``cay(psi)``:
        ``x1 - x0 = psi x x_m``, so ``G_m inc = R_e^T psi`` and the local rotations change by
        ``Lambda_a (R_e^T psi - G_m inc) = 0``.

        ``inc (E, 18)``: translations and, per corner, the rotation vector of ``R1 R0^T`` or,
        where ``cayley (E, 3)`` says so, its Cayley parameter ``psi``. The tangent is the exact
        derivative along Newton's corrections of ``s1`` (translations added, rotations turned by
        spatial spins: a co-rotational shell's nodes always are, ``spins`` must be all true)::

            dp1 = (B_m Q + d(B_m inc)/dd_m P) ds,   df = B_m^T K_l dp1 / 2 + geometric(q) P ds

        with ``Q = d inc/ds``, ``P`` the motion of the mid-point configuration (:func:`step_maps`)
        and ``d(B_m inc)/dd_m`` :meth:`CorotShellFrame.bw_derivative`.
        """
        if spins is not None and not np.all(spins):
            raise ValueError("co-rotational shell nodes are corrected by spatial spins")
        if self._compiled(conserving=True):
            return shell_jit.conserving_group(self, s0, s1, sm, inc, hist, spins, cayley)
        return self.conserving_numpy(s0, s1, sm, inc, hist, spins, cayley)

    def conserving_numpy(self, s0, s1, sm, inc, hist, spins=None, cayley=None):
        """:meth:`conserving` in numpy: the reference of the compiled pair, and its fallback."""
        kin = self._kinematics(sm)
        B = kin.B
        p0 = hist["p"]
        p1 = p0 + np.einsum("eij,ej->ei", B, inc)
        q = np.einsum("eij,ej->ei", self.K_local, 0.5 * (p0 + p1))
        f = np.einsum("eij,ei->ej", B, q)
        energy = 0.5 * np.einsum("ei,eij,ej->e", p1, self.K_local, p1)
        Q, P = step_maps(inc, cayley)
        dp1 = B @ Q + self.frame.bw_derivative(kin, inc) @ P
        K = 0.5 * np.swapaxes(B, 1, 2) @ self.K_local @ dp1 + self.frame.geometric(kin, q) @ P
        return f, K, energy, {"p": p1}


def step_maps(inc: NDArray, cayley: NDArray | None = None) -> tuple[NDArray, NDArray]:
    """(E, 18, 18) ``Q = d inc/ds`` and ``P = d(mid-point motion)/ds`` for spins ``ds`` of ``s1``.

    Translations: 1 and 1/2. A spin ``dw`` of the end rotation ``exp(theta) R0`` moves the
    rotation vector ``theta`` by ``jl_inv(theta) dw`` and turns the mid-point rotation
    ``exp(theta/2) R0`` by :func:`fem.rotations.half_spin` ``(theta) dw``; corners marked
    ``cayley (E, 3)`` hold ``psi`` with ``exp(theta) = cay(psi)``, moved by
    :func:`fem.rotations.cay_inv_spin`, the mid-point (still ``exp(theta/2) R0``) by
    ``half_spin(log_cay(psi))`` (the beams' ``_correction_map`` for three nodes).
    """
    E = len(inc)
    th = inc.reshape(E, 3, 6)[:, :, 3:]
    Qr, Pr = so3.jl_inv(th), so3.half_spin(th)
    if cayley is not None and np.any(cayley):
        c = np.asarray(cayley, dtype=bool)[:, :, None, None]
        Qr = np.where(c, so3.cay_inv_spin(th), Qr)
        Pr = np.where(c, so3.half_spin(so3.log_cay(th)), Pr)
    Q, P = np.zeros((E, 18, 18)), np.zeros((E, 18, 18))
    for a in range(3):
        Q[:, _T[a], _T[a]] = np.eye(3)
        P[:, _T[a], _T[a]] = 0.5 * np.eye(3)
        Q[:, _W[a], _W[a]] = Qr[:, a]
        P[:, _W[a], _W[a]] = Pr[:, a]
    return Q, P
