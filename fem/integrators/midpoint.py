"""The mid-point family: the plain mid-point rule and Crisfield & Shi's energy-conserving scheme.

Both use ``v1 = 2 dx/h - v0`` (Crisfield & Shi eq. 1), mid-point inertia ``m (v1 - v0)/h`` (eq. 6-7)
and, for 3D nodal rotations, Simo & Wong's (1991) momentum form ``(Pi1 - Pi0)/h``. External loads
act as the average of their end values, so their work over a step is exact for dead loads and the
energy balance becomes a work balance (notes/crisfield_shi.md section 2.1).

:class:`MidpointRule`
    internal forces at the mid-point configuration, ``f_int(d_m)`` (Simo et al.'s mid-point rule):
    energy is conserved only for quadratic strain energies, and a rotating bar is spuriously
    compressed (eq. 8-9 discussion, Fig. 6).
:class:`EnergyConserving`
    each element's *algorithmic* internal force, whose work over the step equals its strain-energy
    change exactly (Crisfield & Shi eqs. 8-21 for bars; the same principle for beams, see
    :meth:`fem.elements.beam.Beam.conserving`). With the inertia above:

    * energy: ``T_n+1 + Phi_n+1 - (T_n + Phi_n) = W_ext`` to the Newton tolerance, any step size;
    * linear momentum: the algorithmic forces are self-equilibrated;
    * angular momentum: they have no resultant moment about the mid-point positions (bars: forces
      along the mid-point chord; beams: the frame's B at the mid-point annihilates rigid motions
      there), and mid-point velocities make ``dL = h sum x_m x (f)`` vanish.

    The effective tangent ``K* + (2/h^2) M`` is not symmetric; the default LU solves it.

    **2D: Cayley rotations** (:class:`CayleyKinematics`). Under a steady spin the mid-point rule
    turns a chord by ``2 atan(omega h / 2)`` a step, and the beams' algorithmic chord increment
    ``z_m . dp / l_m`` is its Cayley parameter ``2 tan(dalpha/2)`` (notes/crisfield_shi.md
    section 4.2, option (b)). Nodes of co-rotational beams therefore turn by the Cayley
    parameter ``psi = h w_m`` too: the step's rotation slot holds ``psi = 2 tan(dtheta/2)``, the
    velocities are ``w1 = 2 psi/h - w0``, and the rotary inertia, the beams, the external moments
    and the work are paired with ``psi``. A rigid spin then turns nodes and chords alike and the
    algorithmic local rotations stay at zero (before: ``(omega h)^3 / 12`` a step). Forces
    written for the angle increment (linear beams, springs, joints: discrete gradients with
    ``f dtheta`` the exact work) are carried over by ``s = dtheta / psi`` per node
    (:meth:`EnergyConserving._cayley_rows`): same work, and a pin's moment arm becomes the
    mid-point offset ``(R0 + R1) s / 2``, so pinned beams conserve angular momentum exactly.
    Tangent columns of ``psi`` carry ``d psi / d dtheta = 1 + psi^2/4``. Other 2D nodes (rigid
    bodies, point masses) keep the angle, with which a free body spins at its exact rate.

    **3D: Cayley rotations** (:class:`CayleyKinematics3D`). The same in space: the mid-point
    chord of a rigid step moves by ``x1 - x0 = psi x (x0 + x1)/2`` exactly when the step turns
    by ``cay(psi)`` (:func:`fem.rotations.cay`), so the beams' algorithmic frame spin ``G_m inc``
    is ``R_r^T psi`` and their local rotations change by ``Lambda (R_r^T psi_a - G_m inc)``.
    Nodes of 3D co-rotational beams and shells therefore turn by ``R1 = cay(psi) R0`` with
    ``psi = h w_m`` (spatial; ``W1 = 2 Psi/h - W0``, ``Psi = R0^T psi``): a rigid spin leaves
    the local rotations unchanged (with ``exp`` they drifted by ``(omega h)^3/12`` a step).
    ``psi`` is an eigenvector of ``cay(psi)``, so ``R1^T psi = R0^T psi`` and Simo & Wong's
    ``(Pi1 - Pi0)/h`` does the work ``psi . (Pi1 - Pi0)/h = T1 - T0``; the beams take ``psi``
    as their nodal increment. So do co-rotational shells
    (:meth:`fem.elements.shell.corot.CorotShell.conserving`): a shell's frame spin ``G_m inc``
    is ``R_e^T psi`` on a rigid step as a beam's chord is. Forces paired with the rotation
    vector ``theta = log(R1 R0^T)`` (joints, springs, linear beams, rigid bodies) are carried
    over by the scalar secant ``s = |theta| / |psi|`` (``theta = s psi``), the same work. The
    joints' discrete gradients are written so that, carried over, their moments are those of
    the mid-point arms (:mod:`fem.constraints.joint`, *the Cayley form*): a joint between two
    Cayley nodes conserves angular momentum too, so nodes welded to Cayley nodes turn by
    ``cay(psi)`` as well (:func:`chord_nodes`).
    Newton still turns ``R1`` by spins ``dw``: ``d psi = (I - hat(psi)/2 + psi psi^T/4) dw``
    (:func:`fem.rotations.cay_inv_spin`), ``d s = s'(|theta|) n . dw``. The mid-point
    orientation stays ``exp(theta/2) R0``. Nodes of beams with consistent inertia are Cayley
    nodes too; that inertia keeps director velocities of its own (:mod:`fem.inertia.beam`).

Both tangents are the exact derivatives of the residual along Newton's corrections of ``s1``
(translations added, 3D rotations turned by spatial spins), so Newton converges quadratically:
a spin ``dw`` of ``s1`` turns the step's rotation vector by ``jl_inv(theta) dw`` and the mid-point
orientation by :func:`fem.rotations.half_spin` ``(theta) dw`` (not ``dw / 2``); the elements
carry these through their mid-point ``B`` (:meth:`fem.elements.beam.Beam.conserving`) and the
mid-point rule through ``K(d_m)``; the Simo-Wong inertia tangent is exact as it stands
(:meth:`fem.inertia.nodal.NodalInertia.midpoint_force`).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from fem import rotations as so3
from fem.integrators.base import Integrator, midpoint_velocities
from fem.integrators.cayley import (
    CayleyKinematics,
    CayleyKinematics3D,
    cayley_secant,
    chord_nodes,
)
from fem.integrators.inertia import midpoint_state


class MidpointRule(Integrator):
    """Plain mid-point rule: internal forces evaluated at the mid-point configuration."""

    name = "midpoint"
    family = "midpoint"

    def _elements(self, s0, s1, kin, tangent: bool):
        f, K, extra = self._static_elements(s0, s1, kin, tangent)
        if K is not None:
            # dampers at the mid-point see the mean rate dx/h: d f / d q1 = C / h
            sysm = self.system
            C = [g.damping(self._sm) if "damping" in g.capabilities else None
                 for g in sysm.model.groups]
            if any(c is not None for c in C):
                K = K + sysm.assembler.matrix(C) / self.h
        return f, K, extra

    def _static_elements(self, s0, s1, kin, tangent: bool):
        sm = self._sm = midpoint_state(s0, s1, self.additive, kin)
        sysm = self.system
        lie = self.inertia.lie
        if not tangent or not lie.any():
            f, K = sysm.evaluate(sm, tangent=tangent, constraints=False)
            return f, None if K is None else 0.5 * K, None
        f = sysm.internal_force(sm, constraints=False)
        # the mid-point moves by half a translation and by half_spin(theta) of a spin of s1; the
        # rotation DOFs of linear elements are rotation vectors, moved by jl_inv(psi_m) of a spin
        P = np.zeros((len(lie), 6, 6))
        P[:, range(6), range(6)] = 0.5
        P[lie, 3:6, 3:6] = so3.half_spin(kin.theta[lie])
        P_lin = P.copy()
        P_lin[lie, 3:6, 3:6] = so3.jl_inv(sm.rotation_vectors()[lie]) @ P[lie, 3:6, 3:6]
        Ks = [g.tangent(sm) @ _element_blocks(
            g, P_lin if g.additive_rotations else P, inner.shape[1])
            for g, inner in zip(sysm.model.groups, sysm.dofmap.internal, strict=True)]
        return f, sysm.assembler.matrix(Ks), None

    def _parts(self, s0, s1, tangent=False):
        # the unknowns the evaluation depends on: positions, rotations, element-internal
        # unknowns (superelements' modal coordinates) and (constraint forces) the multipliers;
        # the step's times too: a committed s0 may be the same object, moved, at the next step
        # (a model whose nodes all stand still moves only its eta)
        key = (np.array([s0.t, s1.t]), s1.u.copy(), s1.rot.copy(), s1.internal.copy(),
               s1.multipliers.copy())
        cached = self._cache
        if (cached is not None and cached[0] is s0
                and all(np.array_equal(a, b) for a, b in zip(cached[1], key, strict=True))
                and (cached[2][4] is not None or not tangent)):
            s1.v[:] = cached[3]
            s1.internal_v[:] = cached[4]
            return cached[2]          # the converged evaluation, reused by finish()
        if self._s0 is not s0:
            self.start_step(s0)
        kin = self.kinematics(s0, s1)
        R1 = s1.rotation_matrices() if self.dim == 3 else None
        midpoint_velocities(self.inertia, s0, s1, kin, self.h, self.W0, R1)
        if len(s1.internal):          # eta (superelements): v1 = 2 deta/h - v0, as the nodes
            s1.internal_v[:] = 2 * (s1.internal - s0.internal) / self.h - s0.internal_v
        f_in, K_in = self.nodal.midpoint_force(s0, s1, kin, self.h, self.Pi0, R1)
        if isinstance(kin, CayleyKinematics):
            K_in[:, 2, 2] *= kin.dpsi                  # W1 = 2 psi/h - W0, psi(dtheta)
        # element inertia groups (consistent beams): (n_active,) forces, blocks per group
        f_in = (f_in, *self.element_inertia("midpoint_force", s0, s1, kin, self.h, tangent,
                                            tangent=tangent))
        f_el, K_el, extra = self._elements(s0, s1, kin, tangent)
        # constraints: g(q_1) = 0 at the end of the step, forces G_d^T lambda with each group's
        # discrete gradient (G_d dq = g_1 - g_0), which do no work over a step whose ends both
        # satisfy g = 0 (ideal joints, fem.constraints; for the linear ties G_d = G)
        if self.system.model.constraints:
            f_c, K_c = self.system.constraint_step(s0, s1, tangent=K_el is not None)
            if isinstance(kin, CayleyKinematics):
                f_c, K_c = self._cayley_rows(kin, f_c, K_c)
            elif isinstance(kin, CayleyKinematics3D):
                f_c, K_c = self._cayley_rows_3d(kin, f_c, K_c)
            f_el = f_el + f_c
            if K_el is not None:
                K_el = K_el + K_c
        f_ext = 0.5 * (self.f_ext0 + self.external(s1, s1.t))
        parts = kin, f_in, K_in, f_el, K_el, f_ext, extra
        self._cache = (s0, key, parts, s1.v.copy(), s1.internal_v.copy())
        return parts

    def evaluate(self, s0, s1, tangent: bool = True):
        """Full residual, its norm scale and (if asked) the CSR values of the effective tangent."""
        kin, (f_in, f_x, K_x), K_in, f_el, K_el, f_ext, _ = self._parts(s0, s1, tangent)
        dm = self.system.dofmap
        fi, fe = dm.from_nodal(f_in), dm.from_nodal(f_ext)
        m0, m1 = self.modal_external(s0.t), self.modal_external(s1.t)
        if m0 is not None or m1 is not None:   # superelements' eta (gravity): the ends' mean
            fe = fe + 0.5 * ((0.0 if m0 is None else m0) + (0.0 if m1 is None else m1))
        if f_x is not None:
            fi = fi + f_x
        r, scale = fi + f_el - fe, self.scale(fi, f_el, fe)
        if not tangent:
            return r, scale, None
        KL = self.load_stiffness(s1, s1.t, 0.5)
        blocks = K_in if KL is None else K_in + KL
        K = K_el + self.system.assembler.matrix(K_x or [None] * len(self.system.model.groups),
                                                blocks)
        return r, scale, K

    def increment(self, s0, s1):
        """The step's increment, of the evaluation at ``s1`` (cached: the converged one)."""
        return self._parts(s0, s1)[0].increment

    def finish(self, s0, s1) -> tuple[float, float]:
        """Set the rates of ``s1``; return its strain energy and the step's external work."""
        kin, _, _, _, _, f_ext, _ = self._parts(s0, s1)
        self.update_rates(s0, s1, kin)
        work = float(np.sum(f_ext * kin.increment)) + self.modal_work(s0, s1)
        return self.system.strain_energy(s1), work

    def update_rates(self, s0, s1, kin) -> None:
        """The converged step's accelerations and the inertia groups' rates of ``s1``.

        ``s1.v`` and ``s1.internal_v`` hold the step's velocities (set with its evaluation);
        accelerations ``(v1 - v0) / h``; each element-level inertia group writes its own rates
        (:meth:`fem.inertia.beam.ConsistentBeamInertia.update_rates`, ...). Never done in a force
        evaluation, which computes the trial rates it needs without writing them.
        """
        s1.a[:] = (s1.v - s0.v) / self.h
        if len(s1.internal):
            s1.internal_a[:] = (s1.internal_v - s0.internal_v) / self.h
        for x in self.extras:
            x.update_rates(s0, s1, kin, self.h)


def _element_blocks(g, nodal: np.ndarray, internal: int = 0) -> np.ndarray:
    """(E, nd, nd) block-diagonal element matrices of per-node blocks ``(n, nslots, nslots)``.

    With ``internal`` element-internal unknowns after the nodal ones, ``(E, nd + internal, ...)``
    whose last block is ``I / 2`` (they are additive: the mid-point moves by half of them).
    """
    slots = ("ux", "uy", "rz") if g.dim == 2 else ("ux", "uy", "uz", "rx", "ry", "rz")
    cols = [slots.index(d) for d in g.dof_names]
    ndn = g.ndn
    out = np.zeros((len(g), g.nd + internal, g.nd + internal))
    out[:, range(g.nd, g.nd + internal), range(g.nd, g.nd + internal)] = 0.5
    for a in range(g.nen):
        out[:, a * ndn:(a + 1) * ndn, a * ndn:(a + 1) * ndn] = \
            nodal[g.conn[:, a]][:, cols][:, :, cols]
    return out


class EnergyConserving(MidpointRule):
    """Crisfield & Shi's energy-conserving co-rotational scheme (see the module docstring)."""

    name = "energy_conserving"
    _chord_nodes = None
    _planar = None            # compiled evaluations of planar beam models (integrators.planar)

    def begin(self, s0) -> None:
        """Start every element's algorithmic history from the state's geometry.

        A dynamic step always starts from the geometric strains (an earlier step may have moved
        the structure), so any algorithmic drift of a previous dynamic step ends there.
        """
        for g in self.system.model.groups:
            s0.history[g.name] = g.conserving_start(s0)
        from fem.integrators.planar import PlanarStep

        self._planar = PlanarStep.make(self)

    def chord_nodes(self) -> NDArray:
        """(n,) bool, the nodes that turn by Cayley parameters (:func:`chord_nodes`)."""
        if self._chord_nodes is None:
            self._chord_nodes = chord_nodes(self.system.model)
        return self._chord_nodes

    def evaluate(self, s0, s1, tangent: bool = True):
        """Full residual, its norm scale and (if asked) the tangent (compiled where it can be)."""
        if self._planar is not None:
            return self._planar.evaluate(self, s0, s1, tangent)
        return super().evaluate(s0, s1, tangent)

    def finish(self, s0, s1) -> tuple[float, float]:
        """Rates and element history of ``s1``; its strain energy and the step's work."""
        if self._planar is not None:
            return self._planar.finish(self, s0, s1)
        return self._finish(s0, s1)

    def increment(self, s0, s1):
        """The step's increment, of the evaluation at ``s1`` (cached: the converged one)."""
        if self._planar is not None:
            return self._planar.increment(self, s0, s1)
        return super().increment(s0, s1)

    def kinematics(self, s0, s1):
        """Step increments; nodes of co-rotational beams turn by Cayley parameters (module doc)."""
        on = self.chord_nodes()
        if self.dim == 3:
            kin = super().kinematics(s0, s1)
            return self._kinematics_3d(s0, kin, on) if on.any() else kin
        # 2D, written out (step_kinematics and the Cayley slots in one pass: small models run
        # this a few thousand times a second, where every numpy call counts)
        dx = s1.u - s0.u
        dth = s1.rot - s0.rot
        psi = 2 * np.tan(0.5 * dth)
        dpsi = 1 + 0.25 * psi * psi
        if not on.all():
            psi[~on], dpsi[~on] = dth[~on], 1.0
        inc = np.empty((len(dx), 3))
        inc[:, :2] = dx[:, :2]
        inc[:, 2] = psi
        theta = np.zeros_like(inc)
        theta[:, 2] = psi
        return CayleyKinematics(dx, theta, theta, inc, dtheta=dth, on=on, dpsi=dpsi)

    def _kinematics_3d(self, s0, kin, on) -> CayleyKinematics3D:
        """``psi = theta / s`` at the nodes ``on``, ``s = (t/2) cot(t/2)``, ``t = |theta|``."""
        theta = kin.theta
        t = np.sqrt(np.einsum("ni,ni->n", theta, theta))
        s, ds = cayley_secant(t)
        s, ds = np.where(on, s, 1.0), np.where(on, ds, 0.0)
        n = theta / np.where(t > 0, t, 1.0)[:, None]
        psi = theta / s[:, None]
        R0 = self.R0 if s0 is self._s0 else s0.rotation_matrices()
        dTheta = np.swapaxes(R0, 1, 2) @ so3.cay_inv_spin(psi)
        inc = kin.increment.copy()
        inc[:, 3:6] = psi
        return CayleyKinematics3D(kin.dx, psi, kin.Theta / s[:, None], inc, rotvec=theta,
                                  on=on, dTheta=dTheta, secant=s, dsecant=ds[:, None] * n)

    def _cayley_rows(self, kin, f, K):
        """Forces paired with the angle increments, paired with ``psi`` instead (2D).

        Row ``rz`` of a node is multiplied by ``s = dtheta / psi`` (:func:`cayley_secant`), so
        the work is unchanged; the tangent's row by ``s``, plus ``f ds/ddtheta`` on its diagonal.
        """
        dm = self.system.dofmap
        s, ds = kin.secant, kin.dsecant
        rows = dm.index[:, 2]
        on = rows >= 0
        f = f.copy()
        f_theta = f[rows[on]].copy()
        f[rows[on]] *= s[on]
        if K is None:
            return f, None
        asm = self.system.assembler
        scale = np.ones(asm.n_free)
        free = on & (rows < asm.n_free)
        scale[rows[free]] = s[free]
        K = K * scale[asm.entry_rows]
        diag = asm.diagonal_positions()
        K[diag[rows[free]]] += f_theta[free[on]] * ds[free]
        return f, K

    def _cayley_rows_3d(self, kin, f, K):
        """Forces paired with the rotation vectors, paired with ``psi`` instead (3D).

        Rows ``rx, ry, rz`` of a node ``on`` are multiplied by ``s = |theta| / |psi|``, so the
        work is unchanged; the tangent's rows by ``s``, plus the node block ``f ds/dw``.
        """
        dm = self.system.dofmap
        rows = dm.index[:, 3:6]
        act = kin.on[:, None] & (rows >= 0)
        f = f.copy()
        f_theta = np.zeros((len(rows), 3))
        f_theta[act] = f[rows[act]]
        f[rows[act]] *= np.broadcast_to(kin.secant[:, None], rows.shape)[act]
        if K is None:
            return f, None
        asm = self.system.assembler
        scale = np.ones(asm.n_free)
        free = act & (rows < asm.n_free)
        scale[rows[free]] = np.broadcast_to(kin.secant[:, None], rows.shape)[free]
        blocks = np.zeros((len(rows), 6, 6))
        blocks[:, 3:6, 3:6] = np.einsum("ni,nj->nij", f_theta, kin.dsecant)
        K = K * scale[asm.entry_rows] + asm.matrix([None] * len(asm.groups), blocks)
        return f, K

    def _elements(self, s0, s1, kin, tangent: bool):
        sm = midpoint_state(s0, s1, self.additive, kin)
        sysm = self.system
        inc = kin.increment
        if isinstance(kin, CayleyKinematics3D):
            return self._elements_3d(s0, s1, sm, kin, tangent)
        cayley = isinstance(kin, CayleyKinematics)
        inc_angle = None
        fs, Ks, energies, hist = [], [], [], {}
        for g in sysm.model.groups:
            # 3D rotations of nodes that Newton turns by spins (the others are additive)
            spins = {"spins": self.inertia.lie[g.conn]} if "rx" in g.dof_names else {}
            rz = cayley and "rz" in g.dof_names
            additive = rz and g.additive_rotations
            if additive and inc_angle is None:
                inc_angle = inc.copy()
                inc_angle[:, 2] = kin.dtheta
                s, ds = kin.secant, kin.dsecant
            f, K, energy, h1 = g.conserving(s0, s1, sm,
                                            g.element_vector(inc_angle if additive else inc),
                                            s0.history[g.name], **spins)
            if rz:
                # the rotation slots of the element vector
                cols = [a * g.ndn + g.dof_names.index("rz") for a in range(g.nen)]
                if additive:          # paired with the angle: rows times s (_cayley_rows)
                    f_theta = f[:, cols].copy()
                    f = f.copy()
                    f[:, cols] *= s[g.conn]
                    K = K.copy()
                    K[:, cols, :] *= s[g.conn][:, :, None]
                    for a, c in enumerate(cols):
                        K[:, c, c] += f_theta[:, a] * ds[g.conn[:, a]]
                elif tangent:         # a function of psi: columns times d psi / d dtheta
                    K = K.copy()
                    K[:, :, cols] *= kin.dpsi[g.conn][:, None, :]
            fs.append(f)
            Ks.append(K)
            energies.append(energy)
            hist[g.name] = h1
        f_full = sysm.assembler.vector(fs)
        K_csr = sysm.assembler.matrix(Ks) if tangent else None
        return f_full, K_csr, (energies, hist)

    def _elements_3d(self, s0, s1, sm, kin, tangent: bool):
        """:meth:`_elements` with 3D Cayley nodes (module doc).

        Co-rotational beams and shells take ``psi`` (their tangent by spins through
        ``cay_inv_spin``); the other groups with rotations take the rotation vectors, and their
        assembled rows are carried over by ``s`` (:meth:`_cayley_rows_3d`).
        """
        sysm = self.system
        inc_exp = kin.increment.copy()
        inc_exp[:, 3:6] = kin.rotvec
        none = [None] * len(sysm.model.groups)
        fs, Ks, fx, Kx = none.copy(), none.copy(), none.copy(), none.copy()
        energies, hist, gravity_work = [], {}, 0.0
        for i, g in enumerate(sysm.model.groups):
            rot = bool({"rx", "ry", "rz"} & set(g.dof_names))
            frame = getattr(g, "frame", None)
            chord = rot and frame is not None and not frame.linear
            kw = {"spins": self.inertia.lie[g.conn]} if "rx" in g.dof_names else {}
            if chord:
                kw["cayley"] = kin.on[g.conn]
            f, K, energy, h1 = g.conserving(s0, s1, sm,
                                            g.element_vector(kin.increment if chord else inc_exp),
                                            s0.history[g.name], **kw)
            if chord and hasattr(g, "gravity_conserving"):
                f, K, w = self._frame_gravity(g, s0, s1, f, K, tangent)
                gravity_work += w
            theta_paired = rot and not chord and kin.on[g.conn].any()
            (fx if theta_paired else fs)[i] = f
            (Kx if theta_paired else Ks)[i] = K
            energies.append(energy)
            hist[g.name] = h1
        asm = sysm.assembler
        f_full = asm.vector(fs)
        K_csr = asm.matrix(Ks) if tangent else None
        if any(f is not None for f in fx):
            f_x, K_x = self._cayley_rows_3d(kin, asm.vector(fx),
                                            asm.matrix(Kx) if tangent else None)
            f_full = f_full + f_x
            if tangent:
                K_csr = K_csr + K_x
        return f_full, K_csr, (energies, hist, gravity_work)

    def _frame_gravity(self, g, s0, s1, f, K, tangent: bool):
        """A floating frame's gravity added to its force and tangent; also its work.

        Groups whose gravity turns with them (3D co-rotational superelements,
        :meth:`fem.elements.superelement.corot3d.CorotSuperelement3D.gravity_conserving`): the
        gravity of the step's ends, its work ``abar . d(sum m y)`` exact, booked as external.
        """
        a0, a1 = self.loads.acceleration(s0.t), self.loads.acceleration(s1.t)
        if a0 is None and a1 is None:
            return f, K, 0.0
        zero = np.zeros(3)
        fg, Kg, w = g.gravity_conserving(s0, s1, zero if a0 is None else a0,
                                         zero if a1 is None else a1, K is not None)
        return f + fg[None], None if K is None else K + Kg[None], w

    def _finish(self, s0, s1) -> tuple[float, float]:
        """:meth:`finish` of the general path."""
        kin, _, _, _, _, f_ext, (energies, hist, *gravity) = self._parts(s0, s1)
        s1.history.update(hist)
        self.update_rates(s0, s1, kin)
        work = float(np.sum(f_ext * kin.increment)) + self.modal_work(s0, s1) + sum(gravity)
        return float(sum(e.sum() for e in energies)), work
