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
    bodies, point masses) keep the angle, with which a free body spins at its exact rate. 3D
    nodes keep ``exp``: the 3D update ``R1 = cay(h w_m) R0`` is not done.

Both tangents are the exact derivatives of the residual along Newton's corrections of ``s1``
(translations added, 3D rotations turned by spatial spins), so Newton converges quadratically:
a spin ``dw`` of ``s1`` turns the step's rotation vector by ``jl_inv(theta) dw`` and the mid-point
orientation by :func:`fem.rotations.half_spin` ``(theta) dw`` (not ``dw / 2``); the elements
carry these through their mid-point ``B`` (:meth:`fem.elements.beam.Beam.conserving`) and the
mid-point rule through ``K(d_m)``; the Simo-Wong inertia tangent is exact as it stands
(:meth:`fem.inertia.NodalInertia.midpoint_force`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from fem import rotations as so3
from fem.integrators.base import Integrator, midpoint_velocities
from fem.integrators.inertia import StepKinematics, midpoint_state


@dataclass
class CayleyKinematics(StepKinematics):
    """2D steps of the energy-conserving scheme: rotations as Cayley parameters.

    ``theta``, ``Theta`` and ``increment`` hold ``psi = 2 tan(dtheta/2)`` in the rotation slot
    (what the velocities, the inertia, the forces and the work are paired with).
    """

    dtheta: NDArray | None = None     # (n,) the nodes' angle increments
    dpsi: NDArray | None = None       # (n,) d psi / d dtheta = 1 + psi^2 / 4
    secant: NDArray | None = None     # (n,) dtheta / psi (cayley_secant)
    dsecant: NDArray | None = None    # (n,) its derivative by dtheta


def chord_nodes(model) -> NDArray:
    """(n,) the 2D nodes of co-rotational beams, whose rotations follow mid-point chords."""
    on = np.zeros(model.n_nodes, dtype=bool)
    for g in model.groups:
        frame = getattr(g, "frame", None)
        if frame is not None and not frame.linear and "rz" in g.dof_names:
            on[g.conn] = True
    return on


def cayley_secant(dtheta: NDArray) -> tuple[NDArray, NDArray]:
    """``s = dtheta / psi`` with ``psi = 2 tan(dtheta/2)``, and ``ds/ddtheta``; ``(n,)`` each.

    A force ``f`` paired with the angle increment does the work ``f dtheta = (s f) psi``.
    """
    u = 0.5 * np.asarray(dtheta, dtype=float)
    small = np.abs(u) < 0.1
    us = np.where(u == 0, 1.0, u)
    ul = np.where(small, 1.0, u)
    u2 = u * u
    s = np.where(u == 0, 1.0, us / np.tan(us))
    # u cot u = 1 - u^2/3 - u^4/45 - 2 u^6/945 - u^8/4725 - 2 u^10/93555 - ...
    ds_du = np.where(small, -u * (2 / 3 + u2 * (4 / 45 + u2 * (12 / 945 + u2 * (
        8 / 4725 + u2 * 20 / 93555)))), 1 / np.tan(ul) - ul / np.sin(ul) ** 2)
    return s, 0.5 * ds_du


class MidpointRule(Integrator):
    """Plain mid-point rule: internal forces evaluated at the mid-point configuration."""

    name = "midpoint"
    family = "midpoint"

    def _elements(self, s0, s1, kin, tangent: bool):
        sm = midpoint_state(s0, s1, self.additive, kin)
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
            g, P_lin if g.additive_rotations else P)
            for g in sysm.model.groups]
        return f, sysm.assembler.matrix(Ks), None

    def _parts(self, s0, s1, tangent=False):
        # the unknowns the evaluation depends on: positions, rotations, and (constraint forces)
        # the multipliers
        key = (s1.u.copy(), s1.rot.copy(), s1.multipliers.copy())
        cached = self._cache
        if (cached is not None and cached[0] is s0
                and all(np.array_equal(a, b) for a, b in zip(cached[1], key, strict=True))
                and (cached[2][4] is not None or not tangent)):
            s1.v[:] = cached[3]
            return cached[2]          # the converged evaluation, reused by finish()
        if self._s0 is not s0:
            self.start_step(s0)
        kin = self.kinematics(s0, s1)
        R1 = s1.rotation_matrices() if self.dim == 3 else None
        midpoint_velocities(self.inertia, s0, s1, kin, self.h, self.W0, R1)
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
            f_el = f_el + f_c
            if K_el is not None:
                K_el = K_el + K_c
        f_ext = 0.5 * (self.f_ext0 + self.external(s1, s1.t))
        parts = kin, f_in, K_in, f_el, K_el, f_ext, extra
        self._cache = (s0, key, parts, s1.v.copy())
        return parts

    def evaluate(self, s0, s1, tangent: bool = True):
        """Full residual, its norm scale and (if asked) the CSR values of the effective tangent."""
        kin, (f_in, f_x, K_x), K_in, f_el, K_el, f_ext, _ = self._parts(s0, s1, tangent)
        dm = self.system.dofmap
        fi, fe = dm.from_nodal(f_in), dm.from_nodal(f_ext)
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

    def finish(self, s0, s1) -> tuple[float, float]:
        """Set the rates of ``s1``; return its strain energy and the step's external work."""
        kin, _, _, _, _, f_ext, _ = self._parts(s0, s1)
        s1.a[:] = (s1.v - s0.v) / self.h
        work = float(np.sum(f_ext * kin.increment))
        return self.system.strain_energy(s1), work


def _element_blocks(g, nodal: np.ndarray) -> np.ndarray:
    """(E, nd, nd) block-diagonal element matrices of per-node blocks ``(n, nslots, nslots)``."""
    slots = ("ux", "uy", "rz") if g.dim == 2 else ("ux", "uy", "uz", "rx", "ry", "rz")
    cols = [slots.index(d) for d in g.dof_names]
    ndn = g.ndn
    out = np.zeros((len(g), g.nd, g.nd))
    for a in range(g.nen):
        out[:, a * ndn:(a + 1) * ndn, a * ndn:(a + 1) * ndn] = \
            nodal[g.conn[:, a]][:, cols][:, :, cols]
    return out


class EnergyConserving(MidpointRule):
    """Crisfield & Shi's energy-conserving co-rotational scheme (see the module docstring)."""

    name = "energy_conserving"
    _chord_nodes = None

    def begin(self, s0) -> None:
        """Start every element's algorithmic history from the state's geometry.

        A dynamic step always starts from the geometric strains (an earlier step may have moved
        the structure), so any algorithmic drift of a previous dynamic step ends there.
        """
        for g in self.system.model.groups:
            s0.conserving[g.name] = g.conserving_start(s0)

    def kinematics(self, s0, s1):
        """Step increments; in 2D with the rotations as Cayley parameters (module doc)."""
        kin = super().kinematics(s0, s1)
        if self.dim != 2:
            return kin
        if self._chord_nodes is None:
            self._chord_nodes = chord_nodes(self.system.model)
        on = self._chord_nodes
        dth = kin.theta[:, 2].copy()
        psi = np.where(on, 2 * np.tan(0.5 * dth), dth)
        s, ds = cayley_secant(dth)
        theta = kin.theta.copy()
        theta[:, 2] = psi
        inc = kin.increment.copy()
        inc[:, 2] = psi
        return CayleyKinematics(kin.dx, theta, theta, inc, dtheta=dth,
                                dpsi=np.where(on, 1 + 0.25 * psi**2, 1.0),
                                secant=np.where(on, s, 1.0), dsecant=np.where(on, ds, 0.0))

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

    def _elements(self, s0, s1, kin, tangent: bool):
        sm = midpoint_state(s0, s1, self.additive, kin)
        sysm = self.system
        inc = kin.increment
        cayley = isinstance(kin, CayleyKinematics)
        if cayley:
            inc_angle = inc.copy()
            inc_angle[:, 2] = kin.dtheta
            s, ds = kin.secant, kin.dsecant
        fs, Ks, energies, hist = [], [], [], {}
        for g in sysm.model.groups:
            # 3D rotations of nodes that Newton turns by spins (the others are additive)
            spins = {"spins": self.inertia.lie[g.conn]} if "rx" in g.dof_names else {}
            rz = cayley and "rz" in g.dof_names
            additive = rz and g.additive_rotations
            f, K, energy, h1 = g.conserving(s0, s1, sm,
                                            g.element_vector(inc_angle if additive else inc),
                                            s0.conserving[g.name], **spins)
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
                else:                 # a function of psi: columns times d psi / d dtheta
                    K = K.copy()
                    K[:, :, cols] *= kin.dpsi[g.conn][:, None, :]
            fs.append(f)
            Ks.append(K)
            energies.append(energy)
            hist[g.name] = h1
        f_full = sysm.assembler.vector(fs)
        K_csr = sysm.assembler.matrix(Ks) if tangent else None
        return f_full, K_csr, (energies, hist)

    def finish(self, s0, s1) -> tuple[float, float]:
        """Rates of ``s1``, its algorithmic history; strain energy and external work."""
        kin, _, _, _, _, f_ext, (energies, hist) = self._parts(s0, s1)
        s1.conserving.update(hist)
        s1.a[:] = (s1.v - s0.v) / self.h
        work = float(np.sum(f_ext * kin.increment))
        return float(sum(e.sum() for e in energies)), work
