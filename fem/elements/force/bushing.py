"""Bushings: linear stiffness and damping on the relative motion of two nodes in a local frame.

Plane models (``ux, uy, rz`` per node). With ``d = x_b - x_a`` (grounded: ``d = u_b``, node ``a``
the ground at ``b``'s reference position, unturned), ``R(theta)`` the plane rotation and ``F``
the 2x2 local axes (columns, given at the reference), the local deflection is::

    e = [F^T (R(theta_a)^T d - d_ref),  theta_b - theta_a]        (3,)

the relative displacement and the relative rotation in the frame that turns with the first node
(the frame is ``R(theta_a) F``; grounded, the fixed ``F``). The bushing's potential is
``U = e^T K e / 2`` and its generalized force ``f = B^T (K e + C e')`` with ``B = de/dq`` and
``e' = B v``; ``K`` and ``C`` are symmetric positive semi-definite 3x3 matrices (a diagonal is
the uncoupled bushing).

* static steps and the Newmark family (``evaluate``): ``f`` at the state, the tangent ``B^T K B
  + (dB^T/dq) lambda + B^T C (de'/dq)`` at fixed velocities (``lambda = K e + C e'``);
  :meth:`damping` is ``B^T C B`` (the linearize step's ``D``);
* the energy-conserving scheme (``conserving``): a discrete gradient ``B_d`` with ``B_d dq = e_1
  - e_0`` exactly (the product rule ``R_1 d_1 - R_0 d_0 = Rbar dd + (R_1 - R_0) dbar`` and the
  exact difference quotient ``(R(theta_1) - R(theta_0)) / dtheta = sinc(dtheta/2) R'(theta_m)``;
  the plane angle is additive), the force ``B_d^T (K ebar + C de / h)``: ``f . dq = U_1 - U_0 +
  D`` to round-off with ``D = de^T C de / h >= 0`` booked in ``dissipated`` (O. Gonzalez, J.
  Nonlinear Sci. 6 (1996) 449, the discrete gradient of a quadratic potential in a strain
  measure). Its tangent is the exact derivative by ``q_1``.

Three-dimensional bushings: :mod:`fem.elements.force.bushing3d`.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from fem import rotations as so3
from fem.elements.force.base import ForceElement


def _rt(theta: NDArray) -> NDArray:
    """(E, 2, 2) ``R(theta)^T``."""
    c, s = np.cos(theta), np.sin(theta)
    return np.stack([np.stack([c, s], -1), np.stack([-s, c], -1)], -2)


def _drt(theta: NDArray) -> NDArray:
    """(E, 2, 2) ``d R(theta)^T / d theta``."""
    c, s = np.cos(theta), np.sin(theta)
    return np.stack([np.stack([-s, c], -1), np.stack([-c, -s], -1)], -2)


class Bushing(ForceElement):
    """Plane bushings between two nodes, or a node and the ground (module doc).

    Parameters
    ----------
    name : group name
    conn : (E, 2) node pairs ``(a, b)``, or (E, 1) nodes tied to the ground
    X : (n, 3) reference coordinates
    dim : 2
    stiffness : (3, 3) symmetric positive semi-definite ``K`` (``ux, uy, rz`` local)
    damping : (3, 3) ``C`` or None
    axes : (2, 2) the local axes as columns (default the global ones)
    """

    type_name = "bushing"
    stress_names = ("fx", "fy", "mz")

    def __init__(self, name, conn, X, dim, stiffness, damping=None, axes=None):
        if dim != 2:
            raise ValueError("Bushing: plane models only")
        super().__init__(name, conn, X, dim, dissipative=damping is not None)
        self.dof_names = ("ux", "uy", "rz")
        self.additive_rotations = True
        self.K = np.asarray(stiffness, dtype=float).reshape(3, 3)
        self.C = None if damping is None else np.asarray(damping, dtype=float).reshape(3, 3)
        self.F = np.eye(2) if axes is None else np.asarray(axes, dtype=float).reshape(2, 2)
        self.d_ref = (np.zeros((len(self), 2)) if self.nen == 1 else
                      (self.X[:, 1] - self.X[:, 0])[:, :2])
        self.e_ref = self.d_ref @ self.F

    # --- kinematics -----------------------------------------------------------------------------
    def _parts(self, q: NDArray):
        """``d (E, 2)``, ``theta_a``, ``theta_b`` of element vectors ``q`` (displacements)."""
        if self.nen == 1:
            return q[:, :2], np.zeros(len(self)), q[:, 2]
        return q[:, 3:5] - q[:, :2], q[:, 2], q[:, 5]

    def _q(self, state) -> NDArray:
        nodal = np.column_stack([state.u[:, :2], state.rot])
        return self.element_vector(nodal)

    def _e(self, d, ta, tb):
        et = np.einsum("ij,eik,ek->ej", self.F, _rt(ta), d) - self.e_ref
        return np.column_stack([et, tb - ta])

    def _B(self, d, ta):
        """(E, 3, nd) ``de/dq``."""
        E = len(self)
        FR = np.einsum("ij,eik->ejk", self.F, _rt(ta))         # F^T R^T
        B = np.zeros((E, 3, self.nd))
        if self.nen == 1:
            B[:, :2, :2] = FR
            B[:, 2, 2] = 1.0
            return B
        B[:, :2, 3:5] = FR
        B[:, :2, :2] = -FR
        B[:, :2, 2] = np.einsum("ij,eik,ek->ej", self.F, _drt(ta), d)
        B[:, 2, 5], B[:, 2, 2] = 1.0, -1.0
        return B

    def _lam(self, e, rate):
        lam = e @ self.K
        return lam if self.C is None else lam + rate @ self.C

    def _at(self, state):
        q = self._q(state)
        d, ta, tb = self._parts(q)
        d = d + self.d_ref
        e = self._e(d, ta, tb)
        B = self._B(d, ta)
        rate = np.einsum("eij,ej->ei", B, self.element_vector(state.v))
        return d, ta, e, B, rate

    # --- at a state -----------------------------------------------------------------------------
    def evaluate(self, state, tangent: bool = True):
        """Force ``(E, nd)`` and tangent ``(E, nd, nd)`` at ``state`` (module doc)."""
        d, ta, e, B, rate = self._at(state)
        lam = self._lam(e, rate)
        f = np.einsum("eij,ei->ej", B, lam)
        if not tangent:
            return f, None
        K = np.einsum("eki,kl,elj->eij", B, self.K, B)
        if self.nen == 2:
            lt = lam[:, :2] @ self.F.T                               # F lambda_t
            g = np.einsum("eik,ei->ek", _drt(ta), lt)               # (dR^T)^T F lambda_t
            ub, ua = slice(3, 5), slice(0, 2)
            K[:, ub, 2] += g
            K[:, ua, 2] -= g
            K[:, 2, ub] += g
            K[:, 2, ua] -= g
            K[:, 2, 2] -= np.einsum("eik,ek,ei->e", _rt(ta), d, lt)
            if self.C is not None:
                v = self.element_vector(state.v)
                vd, wa = v[:, 3:5] - v[:, :2], v[:, 2]
                dr = np.zeros((len(self), 3, self.nd))               # d e' / d q
                dRt = np.einsum("ij,eik->ejk", self.F, _drt(ta))
                Rt = np.einsum("ij,eik->ejk", self.F, _rt(ta))
                dr[:, :2, 2] = np.einsum("ejk,ek->ej", dRt, vd) - wa[:, None] * np.einsum(
                    "ejk,ek->ej", Rt, d)
                dr[:, :2, 3:5] = wa[:, None, None] * dRt
                dr[:, :2, 0:2] = -wa[:, None, None] * dRt
                K += np.einsum("eki,kl,elj->eij", B, self.C, dr)
        return f, K

    def damping(self, state) -> NDArray:
        """(E, nd, nd) ``B^T C B``: the force's derivative by the velocities."""
        if self.C is None:
            return np.zeros((len(self), self.nd, self.nd))
        B = self._at(state)[3]
        return np.einsum("eki,kl,elj->eij", B, self.C, B)

    def energy(self, state) -> NDArray:
        """(E,) ``e^T K e / 2``."""
        e = self._at(state)[2]
        return 0.5 * np.einsum("ei,ij,ej->e", e, self.K, e)

    def power(self, state) -> NDArray:
        """(E,) ``e'^T C e'``."""
        if self.C is None:
            return np.zeros(len(self))
        rate = self._at(state)[4]
        return np.einsum("ei,ij,ej->e", rate, self.C, rate)

    def stress(self, state) -> NDArray:
        """(E, 3) the local force and moment ``K e + C e'`` (on ``b``, opposite)."""
        _, _, e, _, rate = self._at(state)
        return self._lam(e, rate)

    def outputs(self, state) -> dict[str, NDArray]:
        """Per element: local force (3), deflection (3), its rate (3), dissipated."""
        _, _, e, _, rate = self._at(state)
        return self._history_outputs(state, {"force": self._lam(e, rate), "deflection": e,
                                             "deflection_rate": rate})

    # --- the energy-conserving scheme -----------------------------------------------------------
    def _discrete(self, q0, q1):
        """``e_0``, ``e_1`` and the discrete gradient ``B_d (E, 3, nd)`` (module doc)."""
        d0, ta0, tb0 = self._parts(q0)
        d1, ta1, tb1 = self._parts(q1)
        d0, d1 = d0 + self.d_ref, d1 + self.d_ref
        e0, e1 = self._e(d0, ta0, tb0), self._e(d1, ta1, tb1)
        B = np.zeros((len(self), 3, self.nd))
        if self.nen == 1:
            B[:, :2, :2] = self.F.T
            B[:, 2, 2] = 1.0
            return e0, e1, B, None
        Rbar = 0.5 * (_rt(ta0) + _rt(ta1))
        FR = np.einsum("ij,eik->ejk", self.F, Rbar)
        half = 0.5 * (ta1 - ta0)
        sc, _ = so3.sinc(half)
        tm = 0.5 * (ta0 + ta1)
        dbar = 0.5 * (d0 + d1)
        B[:, :2, 3:5], B[:, :2, :2] = FR, -FR
        B[:, :2, 2] = sc[:, None] * np.einsum("ij,eik,ek->ej", self.F, _drt(tm), dbar)
        B[:, 2, 5], B[:, 2, 2] = 1.0, -1.0
        return e0, e1, B, (ta1, tm, half, sc, dbar)

    def conserving(self, s0, s1, sm, inc, hist):
        """Algorithmic force, its tangent, the energy at ``s1`` and the history (module doc)."""
        h = s1.t - s0.t
        q0, q1 = self._q(s0), self._q(s1)
        e0, e1, Bd, aux = self._discrete(q0, q1)
        de = e1 - e0
        lam = 0.5 * (e0 + e1) @ self.K
        A = 0.5 * self.K
        D = np.zeros(len(self))
        if self.C is not None:
            lam = lam + de @ self.C / h
            A = A + self.C / h
            D = np.einsum("ei,ij,ej->e", de, self.C, de) / h
        f = np.einsum("eij,ei->ej", Bd, lam)
        d1, ta1, _ = self._parts(q1)
        B1 = self._B(d1 + self.d_ref, ta1)
        K = np.einsum("eki,kl,elj->eij", Bd, A, B1)
        if aux is not None:
            ta1, tm, half, sc, dbar = aux
            lt = lam[:, :2] @ self.F.T
            g = 0.5 * np.einsum("eik,ei->ek", _drt(ta1), lt)        # d Rbar / d theta_a1
            gm = 0.5 * sc[:, None] * np.einsum("eik,ei->ek", _drt(tm), lt)   # d dbar
            _, dsc = so3.sinc(half)
            dtt = np.einsum("eik,ek,ei->e", 0.5 * dsc[:, None, None] * _drt(tm)
                            - 0.5 * sc[:, None, None] * _rt(tm), dbar, lt)
            ub, ua = slice(3, 5), slice(0, 2)
            K[:, ub, 2] += g
            K[:, ua, 2] -= g
            K[:, 2, ub] += gm
            K[:, 2, ua] -= gm
            K[:, 2, 2] += dtt
        U1 = 0.5 * np.einsum("ei,ij,ej->e", e1, self.K, e1)
        return f, K, U1, self._booked(hist, D)
