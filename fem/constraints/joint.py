"""Joints between two nodes: spherical, revolute, universal, fixed, prismatic, cylindrical, planar.

Each joint connects nodes ``a`` and ``b`` (beam nodes, rigid bodies' nodes, or a grounded node)
at a point ``P`` with a joint frame ``F = [e1, e2, e3]`` (reference, global axes; the nodes'
reference orientations are the identity, so ``F`` is also material in both nodes). With the
offsets ``c_a = P - X_a``, ``c_b = P - X_b``, the current arms ``a = R c`` and the gap
``s = (x_b + a_b) - (x_a + a_a)``, a joint is a list of *rows* of three kinds:

===========  ===================================  ==========================================
row          constraint                           multiplier (what node ``a`` receives)
===========  ===================================  ==========================================
``point``    ``s = 0`` (``dim`` rows)             the force at ``P`` (global axes)
``perp i j`` ``(R_a e_i) . (R_b e_j) = 0``        the moment about ``(R_a e_i) x (R_b e_j)``
``slide i``  ``(R_a e_i) . s = 0``                the force along ``R_a e_i`` at ``x_b + a_b``
``angle``    ``theta_b - theta_a = 0`` (2D)       the moment about z
===========  ===================================  ==========================================

=============  ==================================================  ===========================
joint          3D rows                                             2D rows
=============  ==================================================  ===========================
spherical      point                                               (2D: revolute)
revolute       point, perp 1 3, perp 2 3 (axis ``e3``)             point
universal      point, perp 1 2 (``e1`` in ``a``, ``e2`` in ``b``)  --
fixed          point, perp 2 3, perp 3 1, perp 1 2                 point, angle
cylindrical    slide 1, slide 2, perp 1 3, perp 2 3 (axis ``e3``)  --
prismatic      slide 1, slide 2, perp 2 3, perp 3 1, perp 1 2      slide 2, angle (axis ``e1``)
planar         slide 3, perp 1 3, perp 2 3 (normal ``e3``)         --
inline         slide 1, slide 2 (line ``e3`` of ``a``)              slide 2 (line ``e1``)
=============  ==================================================  ===========================

An inline joint keeps ``b``'s point on a line of ``a``, its rotations free (a massless slider
pinned to a rod end); the line is the first node's, so a joint to the ground puts the ground
first (``ground_first``). A driver adds one row (:data:`DRIVEN`): the revolute angle or the
prismatic slide equals the drive function.

Spins ``dw`` turn a node's vectors, ``d(R v) = dw x (R v)``, so (columns ``u_a, w_a, u_b, w_b``)::

    point   G = [-I, hat(a_a), I, -hat(a_b)]
    perp    G = [0, d x c, 0, c x d]                 d = R_a e_i, c = R_b e_j
    slide   G = [-d, d x (s + a_a), d, a_b x d]      d = R_a e_i

The residual holds ``G^T lambda`` (a joint's reaction on node ``a`` is ``-G_a^T lambda``); rows
are scaled as the ties' are (``scale``; the unknowns are ``mu = lambda / scale``). 2D joints are
computed as 3D ones in the plane (rotations about z) and keep the columns ``ux, uy, rz``.

**Ideal joints do no work over a time step.** The energy-conserving scheme uses the *discrete
gradient* ``G_d`` with ``G_d [du; theta] = g(q_1) - g(q_0)`` exactly (``theta``: the step's
spatial rotation vectors): a rotated vector changes by ``R_1 v - R_0 v = theta x j``, and a
product by ``D(d . c) = Dd . mean(c) + mean(d) . Dc``, so::

    point   G_d = [-I, hat(ja_a), I, -hat(ja_b)]                   ja = j(a)
    perp    G_d = [0, jd x mean(c), 0, jc x mean(d)]              jd = j(d), jc = j(c)
    slide   G_d = [-mean(d), jd x mean(s) + mean(d) x ja_a, mean(d), ja_b x mean(d)]

Its work ``lambda . (g_1 - g_0)`` vanishes when both ends satisfy the joint: energy stays exact,
and linear momentum too (the forces are equal and opposite). In 2D ``j = jl(theta) v_0``.

**The Cayley form (3D).** ``theta x j = R_1 v - R_0 v`` fixes ``j`` up to a part along
``theta``; 3D joints take ``j = c mean(v)``, ``c = tan(t/2)/(t/2)``, ``t = |theta|``:
``psi = c theta`` is the Cayley parameter of the step's rotation (``R_1 R_0^T = cay(psi)``), for
which ``R_1 v - R_0 v = psi x mean(v)`` exactly, so ``theta x j`` is that change. The
energy-conserving scheme pairs the rows of nodes that turn by ``cay(psi)`` (those of
co-rotational beams and shells, and nodes welded to them:
:func:`fem.integrators.cayley.chord_nodes`) with ``psi``, multiplying them by ``s = 1/c``:
there the moments become ``mean(a) x lambda`` and ``mean(d) x mean(c)``, those of equal and
opposite forces at the mid-point joint point (``x_a + mean(a_a) = x_b + mean(a_b)`` when both
ends satisfy the joint) and of opposite couples: **angular momentum is exact** for joints between
two such nodes (2e-12 relative over 1000 steps of the free chain of ``tests/test_spherical.py``,
which drifted by 5.7e-7 with ``j = jl(theta) v_0``; a rigid body welded to a shell node,
``tests/test_shell_mixed.py``). A joint with a node that turns by ``exp`` (a rigid body on a
hinge) conserves energy, not angular momentum: its moments are ``c mean(v) x lambda``, and
Simo & Wong's ``exp`` update has no ``j`` that is both the exact change and the mean arm. ``c``
grows without bound as a step's rotation nears pi (a node turned by pi in one step).

:meth:`Joint.bias` gives ``gamma`` with ``d2g/dt2 = G a + gamma`` (the velocity terms), which the
consistent accelerations and reactions of a state use (:mod:`fem.constraints.reactions`).
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from numpy.typing import NDArray

from fem import rotations as so3
from fem.constraints import joint_rows
from fem.constraints.base import PairGroup
from fem.constraints.joint_rows import UA, WA, dot, rotz, turned

#: each joint's rows, per model dimension (see the module docstring)
ROWS: dict[int, dict[str, tuple]] = {
    3: {
        "spherical": (("point",),),
        "revolute": (("point",), ("perp", 0, 2), ("perp", 1, 2)),
        "universal": (("point",), ("perp", 0, 1)),
        "fixed": (("point",), ("perp", 1, 2), ("perp", 2, 0), ("perp", 0, 1)),
        "cylindrical": (("slide", 0), ("slide", 1), ("perp", 0, 2), ("perp", 1, 2)),
        "prismatic": (("slide", 0), ("slide", 1), ("perp", 1, 2), ("perp", 2, 0),
                      ("perp", 0, 1)),
        "planar": (("slide", 2), ("perp", 0, 2), ("perp", 1, 2)),
        "inline": (("slide", 0), ("slide", 1)),
    },
    2: {
        "revolute": (("point",),),
        "fixed": (("point",), ("angle",)),
        "prismatic": (("slide", 1), ("angle",)),
        "inline": (("slide", 1),),
    },
}

#: the row a driver adds (the last one): the joint's coordinate equals the drive function
DRIVEN: dict[int, dict[str, tuple]] = {
    3: {"revolute": ("turn",), "prismatic": ("slide", 2)},
    2: {"revolute": ("angle",), "prismatic": ("slide", 0)},
}

#: the 2D DOFs ``ux, uy, rz`` among the 3D ones of a pair
_PLANE = np.array([0, 1, 5, 6, 7, 11])


class Joint(PairGroup):
    """A group of joints of one kind between node pairs.

    Parameters
    ----------
    name : group name
    kind : a key of :data:`ROWS` for ``dim``
    pairs : (E, 2) node indices ``(a, b)``
    offsets : (E, 2, 3) reference offsets ``P - X_a``, ``P - X_b`` of the joint point
    frames : (E, 3, 3) the joint frames, columns ``e1, e2, e3`` (global axes, orthonormal);
        None: the global axes
    dim : 2 or 3
    node_ids : (n,) the model's node ids (for messages)
    grounded : (E,) bool, joints to the ground: their node ``b`` is the ground (node ``a``
        with ``ground_first``, as inline joints need: the line is the first node's)
    drive : the time function of a driver (revolute, prismatic: :data:`DRIVEN`), or None
    """

    type_name: ClassVar[str] = "joint"
    item, items = "joint", "joints"

    def __init__(self, name: str, kind: str, pairs: NDArray, offsets: NDArray,
                 frames: NDArray | None, dim: int, node_ids: NDArray | None = None,
                 grounded: NDArray | None = None, drive=None, ground_first: bool = False):
        if kind not in ROWS[dim]:
            raise ValueError(f"no {kind} joint in {dim}D")
        if drive is not None and kind not in DRIVEN[dim]:
            raise ValueError(f"no driven {kind} joint in {dim}D")
        dofs = ("ux", "uy", "rz") if dim == 2 else ("ux", "uy", "uz", "rx", "ry", "rz")
        self.kind = kind
        #: the time function of the driven coordinate (its last row), or None
        self.drive = drive
        self.rows = ROWS[dim][kind] + ((DRIVEN[dim][kind],) if drive is not None else ())
        n_rows = sum(dim if r[0] == "point" else 1 for r in self.rows)
        super().__init__(name, pairs, n_rows, dofs, node_ids)
        self.dim = dim
        self.type_name = kind
        E = len(self.conn)
        self.offsets = np.array(offsets, dtype=float).reshape(E, 2, 3)
        if dim == 2:
            self.offsets[..., 2] = 0.0
        self.frames = (np.broadcast_to(np.eye(3), (E, 3, 3)).copy() if frames is None
                       else np.array(frames, dtype=float).reshape(E, 3, 3))
        self.grounded = (np.zeros(E, dtype=bool) if grounded is None
                         else np.asarray(grounded, dtype=bool))
        self.ground_first = ground_first
        #: (E,) the reported coordinates are ``sign`` times the second node's relative to the
        #: first: -1 for joints whose second node is the ground, so that they report (and
        #: drive) the node's motion relative to the ground
        self.sign = np.where(self.grounded & (not ground_first), -1.0, 1.0)
        #: (E, r) rows found redundant (:mod:`fem.constraints.redundancy`): each is replaced by
        #: ``lambda = 0``, its reaction reported as zero
        self.released = np.zeros((E, self.n_multipliers), dtype=bool)

    def with_released(self, released: NDArray) -> Joint:
        """A copy whose rows ``released (E, r)`` are dropped (``lambda = 0`` instead)."""
        import copy

        out = copy.copy(self)
        out.released = np.asarray(released, dtype=bool).reshape(len(self), self.n_multipliers)
        return out

    def element_vector(self, nodal: NDArray) -> NDArray:
        """(E, nd) the DOFs of each pair in an ``(n, nslots)`` nodal array."""
        return nodal[self.conn].reshape(len(self), -1)

    # --- kinematics ----------------------------------------------------------------------------
    def _rotations(self, state) -> NDArray:
        """(E, 2, 3, 3) the nodes' rotation matrices."""
        if self.dim == 2:
            return rotz(state.rot[self.conn])
        return so3.quat_to_matrix(state.rot[self.conn])

    def _geometry(self, state) -> dict:
        """Rotations, arms, gap and the frames' current vectors of ``state``."""
        R = self._rotations(state)
        arms = np.einsum("eaij,eaj->eai", R, self.offsets)
        u = np.zeros((len(self), 2, 3))
        u[..., :self.dim] = state.u[self.conn, :self.dim]
        s = (u[:, 1] - u[:, 0]) + (arms[:, 1] - self.offsets[:, 1]) \
            - (arms[:, 0] - self.offsets[:, 0])
        return {"R": R, "arms": arms, "s": s,
                "Fa": R[:, 0] @ self.frames, "Fb": R[:, 1] @ self.frames}

    def _step_rotations(self, s0, s1) -> NDArray:
        """(E, 2, 3) the spatial rotation vectors of the step ``s0 -> s1``."""
        if self.dim == 2:
            theta = np.zeros((len(self), 2, 3))
            theta[..., 2] = s1.rot[self.conn] - s0.rot[self.conn]
            return theta
        return so3.rotvec_from_quat(so3.quat_mul(s1.rot[self.conn],
                                                 so3.quat_conj(s0.rot[self.conn])))

    def _angles(self, state) -> NDArray:
        """(E,) ``theta_b - theta_a`` (2D)."""
        ang = state.rot[self.conn]
        return ang[:, 1] - ang[:, 0]

    def _plane(self, G: NDArray, K: NDArray | None = None):
        """The 2D columns (and rows) of 3D pair arrays."""
        if self.dim == 3:
            return G, K
        return G[..., _PLANE], None if K is None else K[:, _PLANE][:, :, _PLANE]

    # --- rows: the constraint, its Jacobian and the Jacobian's derivative ----------------------
    def _drive_at(self, t: float, derivative: int = 0) -> NDArray:
        """(E,) the driven ``theta_b - theta_a`` (or slide) at ``t``, or its time derivative.

        The drive function gives the reported coordinate (:attr:`sign`); 0 without a drive.
        """
        if self.drive is None:
            return np.zeros(len(self))
        fun = (self.drive, self.drive.derivative, self.drive.second_derivative)[derivative]
        return self.sign * float(fun(t))

    def drive_over(self, times: NDArray) -> NDArray | None:
        """(k, E) :meth:`_drive_at` at each of the ``times (k,)``, bit for bit, in one evaluation.

        None without a drive or where the drive's values over an array are not its values one
        time at a time (:data:`fem.time_functions.SpinUp.exact_over_arrays`).
        """
        if self.drive is None or not self.drive.exact_over_arrays:
            return None
        return self.sign[None, :] * np.asarray(self.drive(times), dtype=float)[:, None]

    def _static(self, state, mu: NDArray | None, f: float | None = None
                ) -> tuple[NDArray, NDArray, NDArray | None]:
        """``g``, ``G`` and ``d(G^T mu)/dq`` (:func:`fem.constraints.joint_rows.static_rows`)."""
        return joint_rows.static_rows(self, state, mu, f)

    def _discrete(self, s0, s1, mu: NDArray, tangent: bool = True
                  ) -> tuple[NDArray, NDArray | None]:
        """``G_d`` and its derivative (:func:`fem.constraints.joint_rows.discrete_rows`)."""
        return joint_rows.discrete_rows(self, s0, s1, mu, tangent)

    def _assemble(self, G: NDArray, Kqq: NDArray, Gg: NDArray, scale: float) -> NDArray:
        """``scale [[Kqq, G^T], [Gg, Z]]`` per joint (columns of the model's DOFs).

        Released rows have zero ``G`` and ``Gg`` rows and a one on ``Z``'s diagonal (the row
        ``lambda = 0``).
        """
        E, r, nd = len(G), self.n_multipliers, self.nd
        K = np.zeros((E, nd + r, nd + r))
        K[:, :nd, :nd] = Kqq
        K[:, :nd, nd:] = np.swapaxes(G, 1, 2)
        K[:, nd:, :nd] = Gg
        K[:, nd:, nd:] = self.multiplier_block()
        return scale * K

    def _kept(self, G: NDArray) -> NDArray:
        """``G`` with the released rows zeroed."""
        if self.released.any():
            G = np.where(self.released[:, :, None], 0.0, G)
        return G

    def multiplier_block(self) -> NDArray:
        """(E, r, r) the diagonal block of the multipliers: one on released rows."""
        E, r = self.released.shape
        Z = np.zeros((E, r, r))
        Z[:, range(r), range(r)] = self.released
        return Z

    def _rows(self, g: NDArray, mu: NDArray) -> NDArray:
        """The constraint rows: ``g``, and ``mu`` itself on released rows."""
        return np.where(self.released, mu, g) if self.released.any() else g

    # --- the protocol of constraint groups (fem.constraints) -----------------------------------
    def gap(self, state) -> NDArray:
        """(E, r) the constraint values ``g``."""
        return self._static(state, None)[0]

    def jacobian(self, state) -> NDArray:
        """(E, r, nd) ``G`` (zero rows where released)."""
        return self._kept(self._plane(self._static(state, None)[1])[0])

    def vector(self, state, mu: NDArray, scale: float = 1.0) -> NDArray:
        """(E, nd + r) ``scale [G^T mu; g]``."""
        g, G, _ = self._static(state, None)
        G = self._kept(self._plane(G)[0])
        return scale * np.hstack([np.einsum("eki,ek->ei", G, mu), self._rows(g, mu)])

    def tangent(self, state, mu: NDArray, scale: float = 1.0) -> NDArray:
        """(E, nd + r, nd + r) ``scale [[d(G^T mu)/dq, G^T], [G, 0]]``."""
        _, G, K = self._static(state, np.where(self.released, 0.0, mu))
        G, K = self._plane(G, K)
        G = self._kept(G)
        return self._assemble(G, K, G, scale)

    def step(self, s0, s1, mu: NDArray, scale: float = 1.0, tangent: bool = True
             ) -> tuple[NDArray, NDArray | None]:
        """:meth:`step_vector` and (``tangent``) :meth:`step_tangent` from one evaluation."""
        kept_mu = np.where(self.released, 0.0, mu)
        Gd, K = self._plane(*self._discrete(s0, s1, kept_mu, tangent))
        Gd = self._kept(Gd)
        g1, G1, _ = self._static(s1, None)
        vec = scale * np.hstack([np.einsum("eki,ek->ei", Gd, mu), self._rows(g1, mu)])
        if not tangent:
            return vec, None
        return vec, self._assemble(Gd, K, self._kept(self._plane(G1)[0]), scale)

    def step_vector(self, s0, s1, mu: NDArray, scale: float = 1.0) -> NDArray:
        """(E, nd + r) ``scale [G_d^T mu; g(q_1)]``: joint forces doing no work over the step."""
        return self.step(s0, s1, mu, scale, tangent=False)[0]

    def step_tangent(self, s0, s1, mu: NDArray, scale: float = 1.0) -> NDArray:
        """Derivative of :meth:`step_vector` along Newton's corrections of ``s1``."""
        return self.step(s0, s1, mu, scale)[1]

    def bias(self, state) -> NDArray:
        """(E, r) ``gamma``: ``d2g/dt2 = G a + gamma`` (velocities of ``state``; spatial spins)."""
        return joint_rows.bias_rows(self, state)

    def time_rate(self, state) -> NDArray:
        """(E, r) ``dg/dt`` at fixed positions: the drive's (zero for undriven rows).

        The admissible velocities satisfy ``G v + dg/dt = 0``.
        """
        out = np.zeros((len(self), self.n_multipliers))
        if self.drive is None:
            return out
        rate = self._drive_at(state.t, 1)
        if self.rows[-1][0] == "turn":
            geo = self._geometry(state)
            f = self._drive_at(state.t)
            out[:, -1] = rate * dot(turned(geo["Fa"], f, 1), geo["Fb"][:, :, 0])
        else:
            out[:, -1] = -rate
        return np.where(self.released, 0.0, out)

    def drive_work(self, s0, s1, mu: NDArray, scale: float = 1.0) -> float:
        """The work the drivers did on the model over the step ``s0 -> s1`` (multipliers ``mu``).

        ``-lambda (g(q_1) - g(q_0))`` of the driven rows, both at the drive's mid-step value:
        for the energy-conserving scheme this is exactly the work of the step forces
        ``-G_d^T lambda`` (the drive's discrete gradient is taken at that value).
        """
        if self.drive is None:
            return 0.0
        f = self._drive_at(0.5 * (s0.t + s1.t))
        if self.rows[-1][0] == "angle":       # static_rows' last row, without the others
            change = (self._angles(s1) - f) - (self._angles(s0) - f)
        else:
            change = self._static(s1, None, f)[0][:, -1] - self._static(s0, None, f)[0][:, -1]
        lam = np.where(self.released[:, -1], 0.0, scale * mu[:, -1])
        return -float(lam @ change)

    # --- what a joint transmits -----------------------------------------------------------------
    def reactions(self, state, lam: NDArray) -> dict[str, NDArray]:
        """Force and moment on node ``a`` at the joint, in the joint's current frame.

        ``lam (E, r)`` the physical multipliers. The force is ``-G_u_a^T lambda``; the moment is
        taken about ``x_b + a_b`` (the joint point; for sliding joints the point of ``b``), both
        in the frame ``R_a F``. Joints with the ground first report those on node ``b`` (the
        opposite ones): a joint to the ground always reports the reaction on its node.
        """
        return self._in_frame(*self._reaction_vectors(state, lam))

    def _in_frame(self, force: NDArray, moment: NDArray, Fa: NDArray) -> dict[str, NDArray]:
        """The components in the frames ``Fa (E, 3, 3)`` of global ``force``, ``moment``."""
        f = np.einsum("eji,ej->ei", Fa, force)
        m = np.einsum("eji,ej->ei", Fa, moment)
        if self.dim == 2:
            return {"fx": f[:, 0], "fy": f[:, 1], "mz": m[:, 2]}
        return {"fx": f[:, 0], "fy": f[:, 1], "fz": f[:, 2],
                "mx": m[:, 0], "my": m[:, 1], "mz": m[:, 2]}

    def _reaction_vectors(self, state, lam: NDArray) -> tuple[NDArray, NDArray, NDArray]:
        """Force and moment ``(E, 3)`` of :meth:`reactions` in the global frame, and ``R_a F``."""
        geo = self._geometry(state)
        _, G, _ = self._static(state, None)
        GTl = np.einsum("eki,ek->ei", G, lam)
        force, moment = -GTl[:, UA], -GTl[:, WA]
        r = geo["arms"][:, 0] + geo["s"]
        moment = moment - so3.cross(r, force)
        if self.ground_first:
            flip = np.where(self.grounded, -1.0, 1.0)[:, None]
            force, moment = flip * force, flip * moment
        return force, moment, geo["Fa"]

    def coordinates(self, state) -> dict[str, NDArray]:
        """Relative joint coordinates: the angle about the axis, the slide along it.

        Of node ``b`` relative to node ``a``; for joints to the ground, of the node relative to
        the ground (:attr:`sign`).
        """
        geo = self._geometry(state)
        out = {}
        if self.dim == 2:
            if self.kind in ("prismatic", "inline"):
                out["slide"] = dot(geo["Fa"][:, :, 0], geo["s"])
            else:
                out["angle"] = self._angles(state)
            return {k: self.sign * v for k, v in out.items()}
        Fa, Fb = geo["Fa"], geo["Fb"]
        if self.kind in ("revolute", "cylindrical", "planar"):
            out["angle"] = np.arctan2(dot(Fa[:, :, 1], Fb[:, :, 0]),
                                      dot(Fa[:, :, 0], Fb[:, :, 0]))
        if self.kind in ("prismatic", "cylindrical", "inline"):
            out["slide"] = dot(Fa[:, :, 2], geo["s"])
        if self.kind == "spherical":
            rel = np.einsum("eji,ejk->eik", geo["R"][:, 0], geo["R"][:, 1])  # R_a^T R_b
            loc = np.einsum("eji,ej->ei", self.frames, so3.logm(rel))
            out.update({"rx": loc[:, 0], "ry": loc[:, 1], "rz": loc[:, 2]})
        return {k: self.sign * v for k, v in out.items()}

    def outputs(self, state, mu: NDArray, scale: float = 1.0) -> dict[str, NDArray]:
        """Reactions in the joint frame, the relative joint coordinates and (drivers) the effort.

        The effort is the generalized force the driver exerts along its coordinate (a torque
        about the axis, or a force along it): positive when it pushes the coordinate up, so its
        power is ``effort * rate``. It is part of the reactions as well. ``force`` and
        ``moment`` ``(E, 3)`` are the reactions' force and moment in the global frame (2D: in
        the plane, and about z), the vectors ParaView draws (:mod:`fem.io.paraview`).
        """
        force, moment, Fa = self._reaction_vectors(state, scale * mu)
        out = {**self._in_frame(force, moment, Fa), **self.coordinates(state),
               "force": force, "moment": moment}
        if self.drive is not None:
            out["effort"] = np.where(self.released[:, -1], 0.0, -self.sign * scale * mu[:, -1])
        return out

    def describe_unknown(self, e: int, j: int) -> str:
        """Names multiplier ``j`` of joint ``e`` for messages."""
        a, b = self.conn[e]
        ids = self.node_ids if self.node_ids is not None else np.arange(1, max(a, b) + 2)
        k = 0
        for row in self.rows:
            n = self.dim if row[0] == "point" else 1
            if j < k + n:
                what = (f"the force {'xyz'[j - k]}" if row[0] == "point" else
                        "the driving effort" if self.drive is not None
                        and j == self.n_multipliers - 1 else
                        "the moment" if row[0] in ("perp", "angle") else "the sliding force")
                break
            k += n
        if self.grounded[e] and self.ground_first:
            a, b = b, a
        other = "the ground" if self.grounded[e] else f"node {ids[b]}"
        return (f"{what} of the {self.kind} joint between node {ids[a]} and {other} "
                f"(joints '{self.name}')")
