"""Axial spring-dampers attached to bodies at body-fixed points (issue 30, item 2).

The element of :mod:`fem.elements.force.axial` between two *points*: ``P_a = x_a + R_a c_a``
and ``P_b = x_b + R_b c_b`` (``c`` the reference offsets from the nodes, global axes at the
reference; the nodes' reference orientations are the identity, so ``c`` is also the point in
the body frame), or a node's point and a ground point. The point moves with its node's rotation:
a rigid body's node, or a beam node. With the arms ``a = R c``, ``d = P_b - P_a``, ``l = |d|``,
``n = d / l`` and the columns ``[u, w]`` of a node (``w`` spatial spins in 3D, the angle about
``z`` in 2D; ``d(R c) = w x a``), the length's gradient is::

    G = [-n, -(a_a x n), n, a_b x n] = B n,     B = [-T_a, T_b]^T,   T = [I; hat(a)]

and the tension ``N = F_s(e) + F_d(e')`` acts as ``f = N G`` (the point of :mod:`.axial` with
the moments ``a x (N n)`` of the force at the points).

* static steps and the Newmark family (``evaluate``): ``dG = M dq`` with ``M = B (I - n n^T) B^T
  / l`` plus ``hat(n) hat(a)`` on each node's spin block (signed): the tangent ``F_s' G G^T + N M
  + F_d' G (M^T v)^T``, and :meth:`damping` ``F_d' G G^T`` (the linearize step's ``D``).
* the energy-conserving scheme (``conserving``): over the step a node's arm changes by
  ``a_1 - a_0 = theta x j`` exactly (``theta`` the step's rotation: the angle increment in 2D,
  the rotation vector in 3D; ``j = jl(theta) a_0`` in 2D, the Cayley form ``j = c(|theta|)
  mean(a)`` in 3D, :func:`fem.constraints.joint_rows` ``_StepTurn``, as the joints' discrete
  gradients), so with ``c = (d_0 + d_1) / (l_0 + l_1)`` the discrete gradient of the length is
  ``G_d = [-c, -(j_a x c), c, j_b x c]``: ``G_d . [du; theta] = l_1 - l_0`` exactly (Gonzalez's
  discrete gradient of a function of a distance, O. Gonzalez, J. Nonlinear Sci. 6 (1996)
  449-467; the joints' rows, :mod:`fem.constraints.joint`). The spring's force is the secant of
  its potential and the damper's ``F_d((l_1 - l_0)/h)``, so ``f . inc = U_1 - U_0 + D`` to
  round-off, ``D = F_d (l_1 - l_0) >= 0`` booked in ``dissipated``. The tangent is the exact
  derivative by ``q_1`` (spins of ``s1``).

In 2D the element's rotation columns are the angles (``additive_rotations``: the 2D
energy-conserving scheme pairs them with the angle increment, as a joint's rows).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from fem import rotations as so3
from fem.constraints.joint_rows import _StepTurn, rotz
from fem.elements.base import outer
from fem.elements.force.axial import SpringDamper
from fem.elements.force.laws import Curve

#: the 2D columns ``ux, uy, rz`` among a node's six
_PLANE = np.array([0, 1, 5])


class BodySpringDamper(SpringDamper):
    """Axial spring-dampers between body-fixed points (module doc).

    Parameters
    ----------
    name : group name
    conn : (E, 2) node pairs ``(a, b)``, or (E, 1) nodes tied to the ground points
    X : (n, 3) reference coordinates
    dim : 2 or 3
    spring, damper : force laws (:class:`~fem.elements.force.laws.Curve`) or None
    offsets : (E, nen, 3) the reference offsets ``c`` of the points from the nodes (global
        axes); with ``conn (E, 1)`` the node's
    free_length : (E,) ``l_0``; None: the reference distances of the points
    ground : (E, 3) the ground points (``conn (E, 1)``)
    """

    def __init__(self, name, conn, X, dim, spring: Curve | None, damper: Curve | None,
                 offsets, free_length=None, ground=None):
        conn = np.asarray(conn, dtype=np.int64)
        self.offsets = np.array(offsets, dtype=float).reshape(len(conn), conn.shape[1], 3)
        if dim == 2:
            self.offsets[..., 2] = 0.0
        self.drawn_offsets = self.offsets               # drawn at the points, not the nodes
        super().__init__(name, conn, X, dim, spring, damper, free_length=free_length,
                         ground=ground)
        self.dof_names = ("ux", "uy", "rz") if dim == 2 else ("ux", "uy", "uz", "rx", "ry", "rz")
        self.additive_rotations = dim == 2
        self._cols = _PLANE if dim == 2 else np.arange(6)
        #: +1 on node ``b``, -1 on node ``a`` (per node of an element)
        self._sign = np.array([1.0]) if self.nen == 1 else np.array([-1.0, 1.0])

    # --- kinematics -----------------------------------------------------------------------------
    def _d0(self) -> NDArray:
        """(E, dim) the reference ``d`` between the points."""
        P = self.X + self.offsets
        if self.nen == 1:
            return (P[:, 0] - self.ground)[:, :self.dim]
        return (P[:, 1] - P[:, 0])[:, :self.dim]

    def _rotations(self, state) -> NDArray:
        """(E, nen, 3, 3) the nodes' rotations."""
        if self.dim == 2:
            return rotz(state.rot[self.conn])
        return so3.quat_to_matrix(state.rot[self.conn])

    def _arms(self, state) -> NDArray:
        """(E, nen, 3) the current arms ``R c``."""
        return np.einsum("eaij,eaj->eai", self._rotations(state), self.offsets)

    def _d3(self, state, arms) -> NDArray:
        """(E, 3) ``d`` from the reference one and the changes (no cancellation)."""
        u = np.zeros((len(self), self.nen, 3))
        u[..., :self.dim] = state.u[self.conn][:, :, :self.dim]
        move = u + arms - self.offsets
        d = np.zeros((len(self), 3))
        d[:, :self.dim] = self._d0()
        return d + move[:, -1] - (move[:, 0] if self.nen == 2 else 0.0)

    def _d(self, state) -> NDArray:
        return self._d3(state, self._arms(state))[:, :self.dim]

    def _B(self, arms) -> NDArray:
        """(E, nen * 6, 3) ``B`` (module doc): ``sign T`` per node, all six columns."""
        E = len(self)
        T = np.zeros((E, self.nen, 6, 3))
        T[:, :, :3] = np.eye(3)
        T[:, :, 3:] = so3.hat(arms)
        return (self._sign[None, :, None, None] * T).reshape(E, 6 * self.nen, 3)

    def _take(self, a: NDArray) -> NDArray:
        """The element's columns (and rows, for matrices) of all-six-columns arrays."""
        cols = (np.arange(self.nen)[:, None] * 6 + self._cols).ravel()
        if a.ndim == 2:
            return a[:, cols]
        return a[:, cols][:, :, cols]

    def _spin_blocks(self, V: NDArray) -> NDArray:
        """(E, nen * 6, nen * 6) ``sign V_i`` on each node's spin block (``V (E, nen, 3, 3)``)."""
        E = len(self)
        out = np.zeros((E, self.nen, 6, self.nen, 6))
        for i in range(self.nen):
            out[:, i, 3:, i, 3:] = self._sign[i] * V[:, i]
        return out.reshape(E, 6 * self.nen, 6 * self.nen)

    def _static(self, state):
        """``l``, ``n (E, 3)``, ``G (E, nd)`` and ``M (E, nd, nd)`` with ``dG = M dq``."""
        arms = self._arms(state)
        d = self._d3(state, arms)
        l = np.linalg.norm(d, axis=1)
        n = d / l[:, None]
        B = self._B(arms)
        P = (np.eye(3) - outer(n, n)) / l[:, None, None]
        M = B @ P @ np.swapaxes(B, 1, 2) + self._spin_blocks(so3.hat(n)[:, None] @ so3.hat(arms))
        return l, n, self._take(np.einsum("eij,ej->ei", B, n)), self._take(M)

    def _at(self, state):
        l, n, G, M = self._static(state)
        vr = self.element_vector(state.v)
        rate = np.einsum("ei,ei->e", G, vr)
        return (G, M, l, vr, rate) + self._laws(l, rate)

    # --- at a state -----------------------------------------------------------------------------
    def evaluate(self, state, tangent: bool = True):
        """Force ``N G`` and its tangent at fixed velocities (module doc)."""
        G, M, _, vr, _, Fs, dFs, Fd, dFd = self._at(state)
        N = Fs + Fd
        f = N[:, None] * G
        if not tangent:
            return f, None
        Mv = np.einsum("eij,ei->ej", M, vr)                     # d(G . v)/dq
        return f, (dFs[:, None, None] * outer(G, G) + N[:, None, None] * M
                   + dFd[:, None, None] * outer(G, Mv))

    def damping(self, state) -> NDArray:
        """(E, nd, nd) ``F_d' G G^T``."""
        G, _, _, _, _, _, _, _, dFd = self._at(state)
        return dFd[:, None, None] * outer(G, G)

    def stress(self, state) -> NDArray:
        """(E, 1) the tension ``N``."""
        _, _, _, _, _, Fs, _, Fd, _ = self._at(state)
        return (Fs + Fd)[:, None]

    def power(self, state) -> NDArray:
        """(E,) ``F_d e'``."""
        _, _, _, _, rate, _, _, Fd, _ = self._at(state)
        return Fd * rate

    def outputs(self, state) -> dict[str, NDArray]:
        """Per element: tension, spring and damper forces, deflection, its rate, dissipated."""
        _, _, l, _, rate, Fs, _, Fd, _ = self._at(state)
        out = {"force": Fs + Fd, "spring_force": Fs, "damper_force": Fd,
               "deflection": l - self.free_length, "deflection_rate": rate}
        return self._history_outputs(state, out)

    # --- the energy-conserving scheme -----------------------------------------------------------
    def _step_rotations(self, s0, s1) -> NDArray:
        """(E, 2, 3) the step's rotations of the nodes (the ground's zero first if grounded)."""
        theta = np.zeros((len(self), 2, 3))
        conn = self.conn
        if self.dim == 2:
            theta[:, 2 - self.nen:, 2] = s1.rot[conn] - s0.rot[conn]
        else:
            theta[:, 2 - self.nen:] = so3.rotvec_from_quat(
                so3.quat_mul(s1.rot[conn], so3.quat_conj(s0.rot[conn])))
        return theta

    def conserving(self, s0, s1, sm, inc, hist, spins=None):
        """Algorithmic force, its tangent, the energy at ``s1`` and the history (module doc)."""
        h = s1.t - s0.t
        E, nen = len(self), self.nen
        arms0, arms1 = self._arms(s0), self._arms(s1)
        d0, d1 = self._d3(s0, arms0), self._d3(s1, arms1)
        l0, l1 = np.linalg.norm(d0, axis=1), np.linalg.norm(d1, axis=1)
        S_l = l0 + l1
        c = (d0 + d1) / S_l[:, None]
        n1 = d1 / l1[:, None]
        turn = _StepTurn(3 if self.dim == 3 else 2, self._step_rotations(s0, s1), True)
        first = 2 - nen                                      # the turn's node of element node 0
        j = np.stack([turn.j(first + i, arms0[:, i], arms1[:, i]) for i in range(nen)], axis=1)
        Dj = np.stack([turn.dj(first + i, arms0[:, i], arms1[:, i]) for i in range(nen)], axis=1)
        # the points' change d_1 - d_0 = sum sign (du + theta x j): from the increments
        theta = turn.theta[:, first:]
        du = np.zeros((E, nen, 3))
        du[..., :self.dim] = (s1.u - s0.u)[self.conn][:, :, :self.dim]
        move = du + so3.cross(theta, j)
        dd = np.einsum("a,eai->ei", self._sign, move)
        dl = np.einsum("ei,ei->e", c, dd)
        e0, e1 = l0 - self.free_length, l1 - self.free_length
        N, dN = self.spring.secant(e0, e1)
        D = np.zeros(E)
        if self.damper is not None:
            Fd, dFd = self.damper(dl / h)
            N, dN = N + Fd, dN + dFd / h
            D = Fd * dl
        Bd = self._B(j)                                      # [I; hat(j)] per node, signed
        Gd = np.einsum("eij,ej->ei", Bd, c)
        B1 = self._B(arms1)
        G1 = np.einsum("eij,ej->ei", B1, n1)
        Pc = (np.eye(3) - outer(c, n1)) / S_l[:, None, None]
        Md = Bd @ Pc @ np.swapaxes(B1, 1, 2) - self._spin_blocks(so3.hat(c)[:, None] @ Dj)
        Gd, G1, Md = self._take(Gd), self._take(G1), self._take(Md)
        f = N[:, None] * Gd
        K = dN[:, None, None] * outer(Gd, G1) + N[:, None, None] * Md
        return f, K, self.spring.integral(e1), self._booked(hist, D)
