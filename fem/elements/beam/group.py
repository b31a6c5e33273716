"""Two-node beam elements, 2D and 3D, linear or co-rotational, Euler-Bernoulli or Timoshenko.

A beam is a frame (:mod:`fem.elements.beam.frames2d`, :mod:`fem.elements.beam.frames3d`) composed
with the frame-free basic beam (:mod:`fem.elements.beam.basic`), as in STYLE.md::

    kin = frame.kinematics(...)              # v (E, nb), B (E, nb, nd)
    sigma, D, q = basic.response(kin.v)      # stresses, strain Jacobian, basic forces
    f = B^T q
    K = B^T (D^T S D + sum sigma_k H_k) B + frame.geometric(kin, q)

``formulation = "linear"`` freezes the frame at the reference geometry and drops the second-order
strains from the response (the classical small-displacement beam); its geometric stiffness, used by
linear buckling, keeps them (the consistent geometric stiffness).

``offsets`` put the elastic axis off the nodes, on rigid arms that turn with them
(:mod:`fem.elements.beam.offsets`): the frame is set up between the offset ends and every result
of the ends (force, tangent, mass) is mapped to the nodes there, around the same code.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from fem import rotations as so3
from fem.elements.base import ElementGroup
from fem.elements.beam import beam2d_jit, beam3d_jit
from fem.elements.beam import interior as beam_interior
from fem.elements.beam import mass as beam_mass
from fem.elements.beam import offsets as beam_offsets
from fem.elements.beam.basic import BasicBeam
from fem.elements.beam.frames2d import CorotFrame2D, LinearFrame2D
from fem.elements.beam.frames3d import CorotFrame3D, LinearFrame3D, reference_triad
from fem.errors import DeckError, ModelError
from fem.model import mass_per_length

FORMULATIONS = ("linear", "corotational")
THEORIES = ("euler-bernoulli", "timoshenko")


def _per_element(value, n: int) -> NDArray:
    return np.broadcast_to(np.asarray(value, dtype=float), (n,)).copy()


class Beam(ElementGroup):
    """A batch of 2-node beams.

    Parameters
    ----------
    name : group name
    conn : (E, 2) node indices
    X : (n, 3) reference coordinates of the model's nodes
    dim : 2 (DOFs ux, uy, rz) or 3 (ux, uy, uz, rx, ry, rz)
    E, G, rho : material, per element or scalar
    A, Iy, Iz, J, Ay, Az : section, per element or scalar (``Iz`` bends in the local x-y plane)
    formulation : ``"linear"`` or ``"corotational"``
    theory : ``"euler-bernoulli"`` or ``"timoshenko"`` (uses the shear areas)
    ref : (E, 3) or (3,) vector giving the local y axis (3D; projected normal to the axis)
    rotary_inertia : include the rotary inertia of the cross-section in the mass
    offsets : (E, 2, 3) or (2, 3) rigid end offsets, global axes at the reference (None: none)
    offsets_key : the deck key of ``offsets``, for the errors of what offset beams refuse
    """

    type_name = "beam"
    nen = 2
    capabilities = frozenset({"stiffness", "geometric_stiffness", "mass", "energy_conserving",
                              "internal_unknowns"})

    def __init__(self, name, conn, X, dim, *, E, G, A, Iy=0.0, Iz=0.0, J=0.0, Ay=np.inf, Az=np.inf,
                 rho=0.0, formulation="corotational", theory="euler-bernoulli", ref=None,
                 rotary_inertia=True, rhoA=None, rhoI=None, inertia="lumped", offsets=None,
                 offsets_key=None):
        super().__init__(name, conn, X, dim)
        n = len(self)
        self.offsets = None
        Xf = self.X                                 # where the elastic axis ends (reference)
        if offsets is not None:
            e = np.broadcast_to(np.asarray(offsets, dtype=float), (n, 2, 3))
            self.offsets = beam_offsets.Offsets(dim, e)
            Xf = self.X + self.offsets.e
            self.offsets_key = offsets_key or f"elements '{name}'.offsets"
            if self.offsets.nonzero.any():          # no energy-conserving force (module doc)
                self.capabilities = self.capabilities - {"energy_conserving"}
        self.dof_names = ("ux", "uy", "rz") if dim == 2 else ("ux", "uy", "uz", "rx", "ry", "rz")
        self.formulation, self.theory = formulation, theory
        self.additive_rotations = formulation == "linear"
        self.props = {k: _per_element(v, n) for k, v in
                      dict(E=E, G=G, A=A, Iy=Iy, Iz=Iz, J=J, Ay=Ay, Az=Az, rho=rho).items()}
        p = self.props
        shear = theory == "timoshenko"
        linear = formulation == "linear"
        if dim == 2:
            self.frame = (LinearFrame2D if linear else CorotFrame2D)(Xf)
            self.E0 = None
        else:
            ref = np.broadcast_to(np.asarray(ref, dtype=float), (n, 3))
            self.E0 = reference_triad(Xf, ref)
            self.frame = (LinearFrame3D if linear else CorotFrame3D)(Xf, self.E0)
        self.l0 = self.frame.l0
        if not linear:                              # offset ends: the static 3D kernel only
            self.compiled_pairs = (frozenset({f"beam{dim}d.evaluate", f"beam{dim}d.conserving"})
                                   if offsets is None else frozenset({"beam3d.evaluate"})
                                   if dim == 3 else frozenset())
        inf = np.full(n, np.inf)
        self.basic = BasicBeam(dim, self.l0, p["E"] * p["A"], p["G"] * p["J"], p["E"] * p["Iy"],
                               p["E"] * p["Iz"], p["G"] * p["Ay"] if shear else inf,
                               p["G"] * p["Az"] if shear else inf, nonlinear=not linear)
        self.rotary_inertia = rotary_inertia
        # "consistent": rho A moves to the consistent inertia group (fem.inertia.beam)
        self.inertia = inertia
        # mass and rotary inertias per length: rho A, rho Iy, rho Iz, rho J (polar); from the
        # density and the stiffness section unless given directly (papers give rho A and rho I
        # apart from EA and EI)
        rI = (p["rho"] * p["Iy"], p["rho"] * p["Iz"], p["rho"] * (p["Iy"] + p["Iz"]))
        self.inertia_per_length = {
            "rhoA": _per_element(mass_per_length(p["rho"], p["A"], rhoA), n),
            **{k: r if rhoI is None else _per_element(rhoI[i], n)
               for i, (k, r) in enumerate(zip(("rhoIy", "rhoIz", "rhoJ"), rI, strict=True))}}
        self.stress_names = (("N", "M1", "M2") if dim == 2 else
                             ("N", "Mt", "My1", "My2", "Mz1", "Mz2"))

    # --- gathering ----------------------------------------------------------------------------
    def _kinematics(self, state):
        """The frame's kinematics of the elastic axis (between the offset ends, if any)."""
        return self._ends(state)[0]

    def _ends(self, state):
        """Frame kinematics and the current offset arms ``c (E, 2, 3)`` (None without offsets).

        Co-rotational beams see the ends ``x + R e`` turning with the nodes; linear beams the
        ends' displacements ``T0 d`` (arms frozen at the reference, ``c = e``).
        """
        off = self.offsets
        x = self.positions(state)
        R = None
        if self.dim == 2:
            rot = state.rot[self.conn]
            if off is not None and not self.frame.linear:
                R = state.rotation_matrices()[self.conn]
        else:
            rot = state.rotation_matrices()[self.conn] if not self.frame.linear else None
            R = rot
        d = self.element_vector(state.dof_values()) if self.frame.linear else None
        if off is None:
            return self.frame.kinematics(x, rot, d), None
        c = off.arms(None if self.frame.linear else R)
        if self.frame.linear:
            d = off.ends(d, c)
        else:
            x = x + c
        return self.frame.kinematics(x, rot, d), c

    def _to_nodes(self, c, f=None, K=None, f_lever=None):
        """Nodal force ``T^T f`` and tangent ``T^T K T`` (+ lever term of ``f_lever``) of ends."""
        off = self.offsets
        if off is None:
            return f, K
        return (None if f is None else off.force(f, c),
                None if K is None else off.tangent(K, c, f_lever))

    # --- protocol -----------------------------------------------------------------------------
    def stress(self, state) -> NDArray:
        """(E, ns) generalized stresses ``sigma`` (Meijaard's, see beam_basic)."""
        kin = self._kinematics(state)
        return self.basic.response(kin.v)[0]

    def evaluate(self, state, tangent: bool = True) -> tuple[NDArray, NDArray | None]:
        """``B^T q`` and (if asked) the material + geometric tangent, from one kinematics.

        The frame and the basic response are computed once for both (they were about 40% of
        the element time when force and tangent were separate calls). The compiled pair
        ``beam2d.evaluate`` / ``beam3d.evaluate`` (:mod:`fem.kernels`): the kernel where
        :meth:`_compiled` says so, else :meth:`evaluate_numpy`.
        """
        if self._compiled():
            return (beam2d_jit if self.dim == 2 else beam3d_jit).evaluate_group(self, state,
                                                                                  tangent)
        return self.evaluate_numpy(state, tangent)

    def evaluate_numpy(self, state, tangent: bool = True) -> tuple[NDArray, NDArray | None]:
        """:meth:`evaluate` in numpy: the reference of the compiled pair, and its fallback."""
        kin, c = self._ends(state)
        sigma, D, q = self.basic.response(kin.v)
        f = np.einsum("ebd,eb->ed", kin.B, q)
        if not tangent:
            return self._to_nodes(c, f)
        kb = self.basic.material_stiffness(D)
        BT = np.swapaxes(kin.B, 1, 2)
        if self.frame.linear:
            return self._to_nodes(c, f, BT @ kb @ kin.B)
        kb = kb + self.basic.stress_hessian(sigma)
        return self._to_nodes(c, f, BT @ kb @ kin.B + self.frame.geometric(kin, q), f)

    def _compiled(self, conserving: bool = False) -> bool:
        """Whether :meth:`evaluate` (``conserving``: :meth:`conserving`) runs compiled code.

        3D co-rotational groups of at least :data:`fem.kernels.MIN_ELEMENTS` (``conserving``:
        without offsets, ``MIN_CONSERVING``) elements, where numba is there and ``FEM_JIT`` is
        not ``0`` (:mod:`fem.elements.beam.beam3d_jit`); 2D co-rotational groups without offsets of
        as many (:mod:`fem.elements.beam.beam2d_jit`, its own ``MIN_CONSERVING`` for
        ``conserving``). The vectorized numpy code is the reference and the fallback.
        """
        pair = f"beam{self.dim}d.{'conserving' if conserving else 'evaluate'}"
        return pair in self.compiled_pairs and (beam2d_jit if self.dim == 2 else beam3d_jit
                                                ).compiled(self.dispatch_size, conserving)

    def _kernel_data(self) -> beam3d_jit.Prepared | beam2d_jit.Prepared:
        """What the compiled kernel needs of this group besides the state, prepared once."""
        prep = self.__dict__.get("_kernel_prepared")
        if prep is None:
            prep = (beam2d_jit.prepare(self.conn, self.X, self.l0, self.basic) if self.dim == 2
                    else beam3d_jit.prepare(self.conn, self.X, self.E0, self.l0, self.basic))
            self._kernel_prepared = prep
        return prep

    def internal_force(self, state) -> NDArray:
        """(E, nd) ``B^T q``."""
        return self.evaluate(state, tangent=False)[0]

    def tangent(self, state) -> NDArray:
        """(E, nd, nd) material + geometric tangent (material only for the linear beam)."""
        return self.evaluate(state)[1]

    def material_tangent(self, state) -> NDArray:
        """(E, nd, nd) ``B^T D^T S D B`` (``T^T (...) T`` with offsets)."""
        kin, c = self._ends(state)
        _, D, _ = self.basic.response(kin.v)
        return self._to_nodes(c, K=np.swapaxes(kin.B, 1, 2) @ self.basic.material_stiffness(D)
                              @ kin.B)[1]

    def geometric_stiffness(self, state, stress: NDArray) -> NDArray:
        """(E, nd, nd) geometric stiffness of generalized stresses ``stress (E, ns)``.

        With offsets, ``T^T (...) T`` plus the turning arms under the end forces ``B^T q``.
        """
        kin, c = self._ends(state)
        D = self.basic.strain_jacobian(kin.v)
        q = np.einsum("ekb,ek->eb", D, stress)
        kg = np.swapaxes(kin.B, 1, 2) @ self.basic.stress_hessian(stress) @ kin.B
        f = np.einsum("ebd,eb->ed", kin.B, q) if c is not None else None
        return self._to_nodes(c, K=kg + self.frame.geometric(kin, q), f_lever=f)[1]

    def stress_rate(self, state, due: NDArray) -> NDArray:
        """(E, ns) linearized change of the stresses for element increments ``due (E, nd)``."""
        kin, c = self._ends(state)
        if c is not None:
            due = self.offsets.ends(due, c)
        D = self.basic.strain_jacobian(kin.v)
        return np.einsum("ekl,elb,ebd,ed->ek", self.basic.S, D, kin.B, due)

    def energy(self, state) -> NDArray:
        """(E,) strain energy ``1/2 eps^T S eps``."""
        return self.basic.energy(self._kinematics(state).v)

    def outputs(self, state) -> dict[str, NDArray]:
        """Section forces (see :meth:`BasicBeam.section_forces`)."""
        kin = self._kinematics(state)
        _, _, q = self.basic.response(kin.v)
        return self.basic.section_forces(q, kin.l)

    def mass(self, state=None, lumped: bool = False) -> NDArray:
        """(E, nd, nd) consistent or lumped (HRZ) mass in the global frame, reference geometry.

        With offsets, the mass of the ends mapped to the nodes, ``T0^T M T0`` (arms ``c = e``).
        """
        r = self.inertia_per_length
        keep = 1.0 if self.rotary_inertia else 0.0
        local = beam_mass.local_mass(self.dim, self.l0, r["rhoA"], keep * r["rhoIy"],
                                     keep * r["rhoIz"], r["rhoJ"], lumped=lumped)
        T = beam_mass.rotation_blocks(self.dim, self._reference_axes())
        M = np.swapaxes(T, 1, 2) @ local @ T
        return M if self.offsets is None else self.offsets.tangent(M, self.offsets.e)

    def lumped_inertia(self, state) -> tuple[NDArray, NDArray]:
        """Nodal masses and rotary inertias (see the base class); consistent inertia: rotary only.

        With ``inertia = "consistent"`` the translational mass and its HRZ share of the bending
        rotations belong to :class:`fem.inertia.beam.ConsistentBeamInertia`; the nodes keep the
        cross-section's rotary inertia ``rho I l0 / 2`` (and ``rho J l0 / 2``).

        Offset elements with mass have none: a nodal inertia cannot hold a mass off its node
        (:mod:`fem.elements.beam.offsets`); a deck error names the key.
        """
        self._refuse_offset_mass("a lumped nodal inertia (dynamic and linearize steps, gravity, "
                                 "modal steps with mass = \"lumped\")")
        if self.inertia != "consistent":
            return super().lumped_inertia(state)
        r = self.inertia_per_length
        keep = 1.0 if self.rotary_inertia else 0.0
        local = beam_mass.local_mass(self.dim, self.l0, 0 * r["rhoA"], keep * r["rhoIy"],
                                     keep * r["rhoIz"], r["rhoJ"], lumped=True)
        T = beam_mass.rotation_blocks(self.dim, self._reference_axes())
        Me = np.swapaxes(T, 1, 2) @ local @ T
        J = np.zeros((len(self), 2, 3, 3))
        for a, o in enumerate((0, self.ndn)):
            if self.dim == 2:
                J[:, a, 2, 2] = Me[:, o + 2, o + 2]
            else:
                J[:, a] = Me[:, o + 3:o + 6, o + 3:o + 6]
        return np.zeros((len(self), 2)), J

    def _refuse_offset_mass(self, what: str) -> None:
        """Raise a deck error if elements with offsets carry mass, for ``what`` asked of it."""
        off = self.offsets
        if off is None:
            return
        massive = off.nonzero & (self.inertia_per_length["rhoA"] != 0)
        if np.any(massive):
            raise DeckError(self.offsets_key, f"beam group '{self.name}' has offsets and mass "
                            f"(element {int(np.flatnonzero(massive)[0]) + 1}): its mass lies off "
                            f"the nodes, which {what} cannot carry; offset beams with mass take "
                            "static, buckling and modal steps with mass = \"consistent\" only "
                            "(or give the section mass_per_length = 0)")

    def _reference_axes(self) -> NDArray:
        if self.dim == 3:
            return self.E0
        e = self.frame.e0
        E0 = np.zeros((len(self), 3, 3))
        E0[:, :2, 0], E0[:, 0, 1], E0[:, 1, 1], E0[:, 2, 2] = e, -e[:, 1], e[:, 0], 1.0
        return E0

    def properties(self) -> dict[str, NDArray]:
        """Section and material data per element, with the inertia per length the mass uses.

        ``rhoA``, ``rhoIy``, ``rhoIz``, ``rhoJ``: the mass and rotary inertias per length
        actually used (a section's ``mass_per_length`` and ``rotary_inertia_per_length`` where
        given, else the density times the section; ``rhoIy``, ``rhoIz`` zero without
        ``rotary_inertia``), not the material's density.
        """
        keep = 1.0 if self.rotary_inertia else 0.0
        r = self.inertia_per_length
        return {**{k: v for k, v in self.props.items() if k != "rho"}, "length": self.l0,
                "rhoA": r["rhoA"], "rhoIy": keep * r["rhoIy"], "rhoIz": keep * r["rhoIz"],
                "rhoJ": r["rhoJ"]}

    def options(self) -> dict[str, str]:
        """Formulation, theory, inertia (lumped, consistent), rotary_inertia (true, false)."""
        return {"formulation": self.formulation, "theory": self.theory, "inertia": self.inertia,
                "rotary_inertia": "true" if self.rotary_inertia else "false"}

    # --- interior modes (linear buckling) ----------------------------------------------------
    @property
    def n_internal(self) -> int:
        """Interior (bubble) modes per element, see :mod:`fem.elements.beam.interior`.

        They are internal unknowns of a buckling step that asks for them (the DOF map's
        ``internal`` block): they enlarge the Ritz space of the buckling mode only.
        """
        return beam_interior.count(self.dim, self.theory == "timoshenko")

    def interior_stiffness(self, state, stress: NDArray, material: bool) -> tuple[NDArray, NDArray]:
        """Couplings ``(E, nd, ni)`` of nodal DOFs with interior modes and ``(E, ni, ni)``.

        The geometric part for generalized stresses ``stress``, plus the elastic stiffness of the
        interior modes if ``material`` (their elastic coupling with the nodes is zero).
        """
        kin, c = self._ends(state)
        shear = self.theory == "timoshenko"
        g_va, k_aa = beam_interior.geometric(self.dim, self.l0, stress, shear)
        if material:
            b = self.basic
            k_aa = k_aa + beam_interior.material(self.dim, self.l0, b.EIy, b.EIz, b.GJ, b.GAy,
                                                 b.GAz, shear)
        g_va = np.swapaxes(kin.B, 1, 2) @ g_va
        if c is not None:                              # T^T: from the ends to the nodes
            g_va = np.swapaxes(self.offsets.matrix(c), 1, 2) @ g_va
        return g_va, k_aa

    # --- energy-conserving dynamics ----------------------------------------------------------
    def conserving_start(self, state) -> dict:
        """The algorithmic basic deformations start from the geometric ones."""
        if self.offsets is not None and self.offsets.nonzero.any():
            raise ModelError(f"beam group '{self.name}' has offsets: it has no energy-conserving "
                             "force (use another integrator, or no offsets)")
        return {"v": self._kinematics(state).v.copy()}

    def conserving(self, s0, s1, sm, inc, hist, spins=None, cayley=None):
        """Algorithmic force with ``f . (d1 - d0) = Phi(v1) - Phi(v0)`` exactly, and momentum.

        The basic deformations are *algorithmic*: ``v1 = v0 + B_m inc`` with ``B_m`` the frame's
        ``B`` at the mid-point configuration ``sm`` (Crisfield & Shi, section 5, eqs. 35(b), 38-43,
        extended to 3D). The elongation row is scaled by ``beta = 2 l_m / (l_n + l_n+1)`` (their
        eq. 20), so the elongation stays the geometric one; the local rotations follow the
        mid-point rule and may drift from the geometric ones (notes/crisfield_shi.md, section 4.2,
        option (b)). ``Phi`` is quadratic in the strains and the strains are quadratic in ``v``, so
        with ``q = D(v_m)^T sigma_av`` the identity ``Phi(v1) - Phi(v0) = q . (v1 - v0)`` is exact,
        and ``f = B_m^T q`` does the same work. ``B_m`` annihilates rigid motions about the
        mid-point configuration, so ``f`` has neither resultant force nor moment there: linear
        and angular momentum are conserved with the mid-point inertia.

        The tangent is the exact derivative of ``f`` with respect to Newton's corrections ``ds``
        of ``s1`` (translations added, 3D rotations turned by spatial spins where ``spins`` (E, 2)
        says so: by default co-rotational beams, not linear ones; see :func:`_correction_map`).
        With ``P = d(mid-point motion)/ds``, ``Q = d(inc)/ds``, ``B'`` the scaled ``B_m``,
        ``q' = (beta N, m)`` and ``b1 = {-e1; e1}`` (end chord)::

            dv1 = [b1 ; B_m Q + d(B_m inc)/dd_m P] ds        (elongation: dv1_0 = d l_1)
            df  = B'^T kb dv1 + geometric(q') P ds + B_m,0^T N dbeta
            kb  = (D_m^T S D_1 + sum_k sigma_av,k H_k) / 2,
            dbeta = (e_m - beta e1) . dx21 / (l_n + l_n+1)    (notes/crisfield_shi.md, 1.4)

        ``d(B_m inc)/dd_m`` is :meth:`bw_derivative` of the frame, the right-hand contraction of
        ``dB/dd`` whose left-hand one is the geometric stiffness. Newton converges quadratically.

        ``cayley`` (E, 2) marks 3D nodes whose ``inc`` holds the Cayley parameter ``psi`` of
        ``R1 R0^T = cay(psi)`` instead of its rotation vector (the energy-conserving scheme's
        3D Cayley rotations, :mod:`fem.integrators.midpoint`): nothing changes but ``Q`` and
        ``P`` there (:func:`_correction_map`). With it a rigid step changes the local rotations
        by ``Lambda_a (R_r^T psi - G_m inc) = 0``: ``x1 - x0 = psi x x_m`` for ``cay(psi)``.
        """
        if self._compiled(conserving=True):          # the same, element by element
            return (beam2d_jit if self.dim == 2 else beam3d_jit).conserving_group(
                self, s0, s1, sm, inc, hist, spins, cayley)
        return self.conserving_numpy(s0, s1, sm, inc, hist, spins, cayley)

    def conserving_numpy(self, s0, s1, sm, inc, hist, spins=None, cayley=None):
        """:meth:`conserving` in numpy: the reference of the compiled pair, and its fallback."""
        basic = self.basic
        kin = self._kinematics(sm)
        B = kin.B
        v0 = hist["v"]
        linear = self.frame.linear
        Bs = B
        if not linear:
            x0 = self.positions(s0)
            x1 = self.positions(s1)
            l_n = np.linalg.norm(x0[:, 1] - x0[:, 0], axis=1)
            x21 = (x1[:, 1] - x1[:, 0])[:, :self.dim]
            l_1 = np.linalg.norm(x21, axis=1)
            beta = 2 * kin.l / (l_n + l_1)
            Bs = B.copy()
            Bs[:, 0, :] *= beta[:, None]
        v1 = v0 + np.einsum("ebd,ed->eb", Bs, inc)
        if not linear:
            v1[:, 0] = l_1 - self.l0                      # the same, without round-off drift
        S = basic.S
        sig0 = (S @ basic.strain(v0)[:, :, None])[:, :, 0]
        eps1 = basic.strain(v1)
        sig1 = (S @ eps1[:, :, None])[:, :, 0]
        sig_av = 0.5 * (sig0 + sig1)
        Dm = basic.strain_jacobian(0.5 * (v0 + v1))
        q = np.einsum("ekb,ek->eb", Dm, sig_av)
        f = np.einsum("ebd,eb->ed", Bs, q)
        energy = 0.5 * np.einsum("ek,ek->e", eps1, sig1)
        kb = 0.5 * np.swapaxes(Dm, 1, 2) @ S @ basic.strain_jacobian(v1)
        if basic.nonlinear:
            kb = kb + 0.5 * basic.stress_hessian(sig_av)
        if spins is None:
            spins = np.full((len(self), 2), not linear)
        Q = _correction_map(self.dim, inc, spins, half=False, cayley=cayley)
        if linear:
            K = np.swapaxes(B, 1, 2) @ kb @ (B if Q is None else B @ Q)
            return f, K, energy, {"v": v1}
        P = _correction_map(self.dim, inc, spins, half=True, cayley=cayley)
        d, ndn = self.dim, self.ndn
        e1 = x21 / l_1[:, None]
        em = B[:, 0, ndn:ndn + d]                          # row 0 of B is {-e_m; e_m}
        dv1 = B @ Q if Q is not None else B.copy()
        dv1 += self.frame.bw_derivative(kin, inc) @ P
        dv1[:, 0] = 0.0
        dv1[:, 0, :d], dv1[:, 0, ndn:ndn + d] = -e1, e1
        qs = q.copy()
        qs[:, 0] *= beta
        gb = (q[:, 0] / (l_n + l_1))[:, None] * (em - beta[:, None] * e1)
        dbeta = np.zeros_like(inc)
        dbeta[:, :d], dbeta[:, ndn:ndn + d] = -gb, gb
        K = (np.swapaxes(Bs, 1, 2) @ kb @ dv1 + self.frame.geometric(kin, qs) @ P
             + np.einsum("ei,ej->eij", B[:, 0], dbeta))
        return f, K, energy, {"v": v1}


def _correction_map(dim: int, inc: NDArray, spins: NDArray, half: bool,
                    cayley: NDArray | None = None) -> NDArray | None:
    """(E, nd, nd) derivative of the step (or, ``half``, of the mid-point motion) by ``s1``.

    How Newton's corrections of ``s1`` move the step's increment ``inc`` (``half=False``) or the
    mid-point configuration (``half=True``), node by node. Translations and additive rotations
    (2D, 3D nodes without ``spins``): 1 and 1/2. 3D nodes corrected by spatial spins ``dw``: the
    step's rotation vector ``theta`` (``inc``) moves by ``jl_inv(theta) dw`` and the mid-point
    orientation ``exp(hat(theta)/2) R0`` turns by :func:`fem.rotations.half_spin`. Nodes marked
    ``cayley`` (E, 2) hold ``psi`` with ``exp(hat(theta)) = cay(psi)``: it moves by
    :func:`fem.rotations.cay_inv_spin`, the mid-point orientation (still ``exp(hat(theta)/2)
    R0``) by ``half_spin(log_cay(psi))``. ``None`` stands for the identity.
    """
    E, nd = inc.shape
    lie = dim == 3 and nd == 12 and bool(np.any(spins))
    if not half and not lie:
        return None
    M = np.zeros((E, nd, nd))
    M[:, range(nd), range(nd)] = 0.5 if half else 1.0
    if lie:
        th = inc.reshape(E, 2, 6)[:, :, 3:]                      # both nodes' rotation vectors
        blocks = so3.half_spin(th) if half else so3.jl_inv(th)
        if cayley is not None and np.any(cayley):
            cb = so3.half_spin(so3.log_cay(th)) if half else so3.cay_inv_spin(th)
            blocks = np.where(cayley[:, :, None, None], cb, blocks)
        blocks = np.where(spins[:, :, None, None], blocks, M[:, 3:6, 3:6][:, None])
        M[:, 3:6, 3:6], M[:, 9:12, 9:12] = blocks[:, 0], blocks[:, 1]
    return M
