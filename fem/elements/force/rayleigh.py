"""Rayleigh damping ``C = alpha M + beta K`` of an element group, as a force element on its nodes.

A :class:`RayleighDamping` group is the damping twin of one structural element group (its
*host*: the same connectivity and DOFs, so no unknowns are added) or of the deck's point masses.
Its element matrices are ``C_e = alpha M_e + beta K_e`` (E, nd, nd), vectorized over the host's
batch:

* ``M_e``: the host's mass as the dynamic steps integrate it: its lumped nodal inertia
  (:meth:`fem.elements.base.ElementGroup.lumped_inertia`, the blocks
  :class:`fem.inertia.nodal.NodalInertia` sums, global axes at the reference), or its consistent
  mass for beams with ``inertia = "consistent"``; the point masses' nodal blocks for the twin of
  ``[[masses]]``. So the model-wide ``alpha M`` is exactly ``alpha`` times the mass of the
  dynamic, modal and linearize steps;
* ``K_e`` (``stiffness``): ``"tangent"``, the host's *material* tangent at the current
  configuration (co-rotational elements: at their current frames), or ``"initial"``, its
  tangent at the reference (constant). The material tangent of an elastic element is positive
  semi-definite and vanishes on the rigid motions of the current configuration, so the damping
  never gives energy and a rigid spin is not damped; the initial stiffness is constant (linear
  damping, exact tangents) but, in large rotations, damps the rigid rotation away from the
  reference (its null space is the reference's rigid motions). The geometric stiffness is left
  out of both (a compressive stress would make ``C`` indefinite: damping that feeds energy).

The damping force is ``C v``, ``v`` the element's velocities (spatial angular velocities for
rotations). How each integrator takes it (:mod:`fem.elements.force.base`):

* energy-conserving / mid-point scheme (``conserving``): ``f = C dq / h`` with ``dq`` the
  step's increment (so the rate is the step's mean rate ``v_m = dq / h``; Cayley parameters
  ``psi`` at the nodes of co-rotational hosts) and ``C`` constant over the step: ``initial``,
  or (``tangent``) the material tangent at the step's mid-point configuration, whose rigid
  motions are exactly the increments of a rigid step (``dx = psi x x_m``), so that a rigid spin
  is not damped. Its work ``f . dq = h v_m . C v_m`` is booked in the history's
  ``dissipated``, so ``total + damping`` is constant to the Newton tolerance. The tangent is
  ``C / h`` (3D rotations by spins: times ``jl_inv(theta)``, or ``cay_inv_spin(psi)``); the
  tangent variant leaves out the derivative of ``C`` by the mid-point (Newton then converges
  linearly, at a rate of order ``beta |dK/dq| |v|``);
* Newmark family (``evaluate``): ``C(q) v`` at the evaluation point (the ends of the step, which
  generalized-alpha weighs), the integrator adding ``gamma / (beta h) C`` to its Newton matrix
  (:meth:`damping`); ``dC/dq v`` of the tangent variant is left out of the tangent. The
  dissipation is booked by the trapezoidal rule of the power ``v . C v``;
* static steps: velocities zero, no force; linearize: :meth:`damping` is its ``D``.

For proportional damping a mode of ``K phi = omega^2 M phi`` has the damping ratio
``zeta = alpha / (2 omega) + beta omega / 2`` (Clough & Penzien, Dynamics of Structures, 2nd
ed. 1993, eq. 12-41; Chopra, Dynamics of Structures, eq. 11.4.3).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from fem import rotations as so3
from fem.elements.force.base import ForceElement

STIFFNESS = ("tangent", "initial")


class RayleighDamping(ForceElement):
    """Rayleigh damping of an element group or of the point masses (module doc).

    Parameters
    ----------
    name : group name (``<host>_damping``)
    host : the damped element group, or None (point masses: ``conn (E, 1)``, ``masses``)
    alpha, beta : the mass and stiffness factors (>= 0)
    stiffness : ``"tangent"`` or ``"initial"`` (module doc)
    conn, X, dim, dof_names, masses : point masses only: ``(E, 1)`` nodes, coordinates, the
        dimension, the DOFs they damp and ``(E, ndn, ndn)`` their mass blocks on them
    """

    type_name = "rayleigh_damping"

    def __init__(self, name, host, alpha: float, beta: float, stiffness: str = "tangent", *,
                 conn=None, X=None, dim=None, dof_names=None, masses=None):
        self.host = host
        if host is not None:
            conn, dim = host.conn, host.dim
            X = np.zeros((int(conn.max(initial=-1)) + 1, 3))
            X[conn] = host.X
            self.dof_names = tuple(host.dof_names)
            self.additive_rotations = host.additive_rotations
            if getattr(host, "frame", None) is not None:
                # the host's step kinematics: co-rotational nodes hand it Cayley parameters
                self.frame = host.frame
        else:
            self.dof_names = tuple(dof_names)
        super().__init__(name, conn, X, dim, dissipative=True)
        self._n = int(self.conn.max(initial=-1)) + 1       # nodes of a reference state
        if host is not None:
            self.cell_type = host.cell_type
        self.alpha, self.beta = float(alpha), float(beta)
        self.stiffness = stiffness
        self._masses = None if masses is None else np.asarray(masses, dtype=float)
        self._M = None                 # (E, nd, nd) alpha M_e, constant
        self._K0 = None                # (E, nd, nd) the host's initial tangent
        self._c0 = None                # (state, t, u, C) the matrix at a step's start

    # --- the matrices ---------------------------------------------------------------------------
    def mass_matrix(self) -> NDArray:
        """(E, nd, nd) the host's element mass as the dynamic steps integrate it (module doc)."""
        if self.host is None:
            return self._masses
        from fem.state import State

        host = self.host
        ref = State.reference(self.dim, self._n)
        if host.inertia == "consistent":
            return host.mass(ref, lumped=False)
        if "mass" not in host.capabilities:
            return np.zeros((len(self), self.nd, self.nd))
        m, J = host.lumped_inertia(ref)
        out = np.zeros((len(self), self.nd, self.nd))
        names, ndn = self.dof_names, self.ndn
        trans = [k for k, d in enumerate(names) if d.startswith("u")]
        rot = [(k, "xyz".index(d[1])) for k, d in enumerate(names) if d.startswith("r")]
        for a in range(self.nen):
            o = a * ndn
            for k in trans:
                out[:, o + k, o + k] = m[:, a]
            for ki, i in rot:
                for kj, j in rot:
                    out[:, o + ki, o + kj] = J[:, a, i, j]
        return out

    def matrix(self, state) -> NDArray:
        """(E, nd, nd) ``C_e = alpha M_e + beta K_e`` at ``state``."""
        if self._M is None:
            self._M = self.alpha * self.mass_matrix()
        if self.beta == 0.0 or self.host is None:
            return self._M
        if self.stiffness == "initial":
            if self._K0 is None:
                from fem.state import State

                self._K0 = self.beta * self.host.tangent(State.reference(self.dim, self._n))
            return self._M + self._K0
        return self._M + self.beta * self.host.material_tangent(state)

    def _start(self, s0) -> NDArray:
        """``C`` at the step's start ``s0`` (kept while ``s0`` is unchanged)."""
        c = self._c0
        if (c is not None and c[0] is s0 and c[1] == s0.t and np.array_equal(c[2], s0.u)
                and np.array_equal(c[3], s0.rot)):
            return c[4]
        C = self.matrix(s0)
        self._c0 = (s0, s0.t, s0.u.copy(), s0.rot.copy(), C)
        return C

    # --- at a state -----------------------------------------------------------------------------
    def evaluate(self, state, tangent: bool = True):
        """Force ``C v`` ``(E, nd)`` and its derivative by the positions (zero, module doc)."""
        C = self.matrix(state)
        f = np.einsum("eij,ej->ei", C, self.element_vector(state.v))
        return f, (np.zeros_like(C) if tangent else None)

    def tangent(self, state) -> NDArray:
        """(E, nd, nd) zeros: the force's dependence on the positions is left out."""
        return np.zeros((len(self), self.nd, self.nd))

    def geometric_stiffness(self, state, stress) -> NDArray:
        """(E, nd, nd) zeros."""
        return self.tangent(state)

    def stress(self, state) -> NDArray:
        """(E, 0): no section forces."""
        return np.zeros((len(self), 0))

    def damping(self, state) -> NDArray:
        """(E, nd, nd) ``C_e`` at ``state``: the force's derivative by the velocities."""
        return self.matrix(state)

    def energy(self, state) -> NDArray:
        """(E,) zeros: no potential."""
        return np.zeros(len(self))

    def power(self, state) -> NDArray:
        """(E,) ``v . C v``, the power the damping takes."""
        v = self.element_vector(state.v)
        return np.einsum("ei,eij,ej->e", v, self.matrix(state), v)

    def outputs(self, state) -> dict[str, NDArray]:
        """Per element: the power the damping takes, and the energy it took in the step."""
        return self._history_outputs(state, {"power": self.power(state)})

    def properties(self) -> dict[str, NDArray]:
        """The factors, per element."""
        return {"alpha": np.full(len(self), self.alpha), "beta": np.full(len(self), self.beta)}

    def options(self) -> dict[str, str]:
        """What it damps and on which stiffness."""
        return {"host": self.host.name if self.host is not None else "point masses",
                "stiffness": self.stiffness}

    # --- the energy-conserving scheme -----------------------------------------------------------
    def conserving(self, s0, s1, sm, inc, hist, spins=None, cayley=None):
        """``C dq / h``, its tangent, no energy and the booked dissipation (module doc)."""
        h = s1.t - s0.t
        # the tangent variant at the mid-point configuration (sm), whose rigid motions are the
        # increments of a rigid step (dx = psi x x_m with Cayley rotations): not damped
        tangent_variant = self.stiffness == "tangent" and self.beta and self.host is not None
        C = self.matrix(sm) if tangent_variant and sm is not None else self._start(s0)
        f = np.einsum("eij,ej->ei", C, inc) / h
        D = np.einsum("ei,ei->e", f, inc)
        K = C / h
        if spins is not None and np.any(spins):
            # 3D rotations turned by spins dw of s1: d theta = jl_inv(theta) dw, or (Cayley
            # nodes of co-rotational hosts) d psi = cay_inv_spin(psi) dw
            ndn = self.ndn
            r = [k for k, d in enumerate(self.dof_names) if d.startswith("r")]
            J = np.broadcast_to(np.eye(self.nd), (len(self), self.nd, self.nd)).copy()
            for a in range(self.nen):
                cols = [a * ndn + k for k in r]
                rv = inc[:, cols]
                cay = np.zeros(len(self), dtype=bool) if cayley is None else cayley[:, a]
                blk = np.where(cay[:, None, None], so3.cay_inv_spin(rv), so3.jl_inv(rv))
                blk[~spins[:, a]] = np.eye(3)
                J[:, a * ndn + r[0]:a * ndn + r[-1] + 1, a * ndn + r[0]:a * ndn + r[-1] + 1] = blk
            K = K @ J
        return f, K, np.zeros(len(self)), self._booked(hist, D)
