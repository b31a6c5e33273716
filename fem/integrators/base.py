"""What every time integrator shares: the protocol and the velocity updates.

An integrator advances a step from ``s0`` (time ``t0``, committed) to the trial ``s1`` (``t0 + h``)
that a Newton loop (:mod:`fem.analysis.dynamic`) corrects. It supplies, for the current ``s1``:

* ``evaluate(s0, s1, tangent)``: the residual (inertial + internal - external forces, full
  active-DOF vector), its norm scale and the CSR values of its derivative with respect to the
  increments of ``s1`` (computed together: they share the element kinematics);
* ``finish(s0, s1)``: velocities and accelerations of ``s1``, element history, and the step's
  strain energy and external work for the energy balance.

Velocities follow one of two families: the mid-point family (``v1 = 2 dx/h - v0``, body angular
velocities ``W1 = 2 Theta/h - W0``) and the Newmark family (``beta``, ``gamma``; rotations in the
material description of Simo & Vu-Quoc 1988, ``Theta = h W0 + h^2 ((1/2 - beta) A0 + beta A1)``).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from fem.inertia import InertiaSum
from fem.inertia.nodal import NodalInertia
from fem.integrators.inertia import step_kinematics


class Integrator:
    """Base class: holds the system, the nodal inertia, the step loads and the time step."""

    name = ""
    family = ""

    def __init__(self, system, inertia: NodalInertia | InertiaSum, loads, h: float):
        self.system = system
        self.inertia = inertia
        # the nodal group integrates the nodes, the element-level ones add element blocks
        self.nodal = inertia.nodal
        self.extras = inertia.extras
        self.loads = loads
        self.h = h
        self.dim = system.model.dim
        self.additive = system.additive
        self._s0 = None               # the step start whose R0, W0, Pi0, f_ext0 are cached
        self._cache = None            # the last evaluation (mid-point family)

    # --- to be provided by each scheme --------------------------------------------------------
    def begin(self, s0) -> None:
        """Called once at the start of the dynamic step (initial accelerations, history)."""

    def evaluate(self, s0, s1, tangent: bool = True):  # pragma: no cover - abstract
        """Residual, its scale and (optionally) the tangent's CSR values; see the module doc."""
        raise NotImplementedError

    def finish(self, s0, s1) -> tuple[float, float]:  # pragma: no cover - abstract
        """Rates and history of ``s1``; its strain energy and the step's external work."""
        raise NotImplementedError

    # --- shared pieces ------------------------------------------------------------------------
    def start_step(self, s0) -> None:
        """Called before the Newton iterations of every time step: cache what ``s0`` fixes."""
        self._s0 = s0
        self.R0 = s0.rotation_matrices() if self.dim == 3 else None
        self.f_ext0 = self.external(s0, s0.t)
        if self.dim == 3:
            self.W0 = self.inertia.body_velocity(s0, self.R0)
            self.Pi0 = self.inertia.spatial_momentum(s0, self.R0)
        else:
            self.W0 = self.Pi0 = None

    def element_inertia(self, method: str, *args, tangent: bool = True):
        """The element inertia groups' forces ``(n_active,)`` and tangent blocks per group.

        ``method`` is ``"midpoint_force"`` or ``"newmark_force"``, called with ``args``;
        ``(None, None)`` when every group is nodal (today's numbers, bit for bit).
        """
        if not self.extras:
            return None, None
        groups = self.system.model.groups
        fs, Ks = [None] * len(groups), [None] * len(groups)
        for x in self.extras:
            out = getattr(x, method)(*args)
            f, K = (out if isinstance(out, tuple) else (out, None))
            fs[x.index] = f if fs[x.index] is None else fs[x.index] + f
            if tangent and K is not None:
                Ks[x.index] = K if Ks[x.index] is None else Ks[x.index] + K
        return self.system.assembler.vector(fs), Ks if tangent else None

    def kinematics(self, s0, s1):
        """Step increments (see :func:`fem.integrators.inertia.step_kinematics`)."""
        return step_kinematics(s0, s1, self.additive, self.R0 if s0 is self._s0 else None)

    def increment(self, s0, s1) -> NDArray:
        """(n, nslots) the step's increment in DOF-slot layout (what the work is paired with)."""
        return self.kinematics(s0, s1).increment

    def external(self, state, t: float) -> NDArray:
        """(n, nslots) external forces at ``t`` on ``state``."""
        return self.loads.force(state, t)

    def modal_external(self, t: float) -> NDArray | None:
        """(n_active,) the loads on superelements' modal coordinates at ``t``, or None.

        Gravity's part on ``eta`` (:meth:`fem.loads.StepLoads.modal`) in the internal block;
        the nodal :meth:`external` has no place for it.
        """
        f = self.loads.modal(t)
        if f is None:
            return None
        dm = self.system.dofmap
        out = np.zeros(dm.n_active)
        start = dm.blocks["internal"].start
        out[start:start + len(f)] = f
        return out

    def external_full(self, state, t: float) -> NDArray:
        """(n_active,) external forces at ``t``: :meth:`external`'s and :meth:`modal_external`'s."""
        f = self.system.dofmap.from_nodal(self.external(state, t))
        modal = self.modal_external(t)
        return f if modal is None else f + modal

    def modal_work(self, s0, s1) -> float:
        """The step's work of the loads on the modal coordinates (the mean of its ends' loads)."""
        f0, f1 = self.loads.modal(s0.t), self.loads.modal(s1.t)
        if f0 is None and f1 is None:       # (one is None where a load's function is zero)
            return 0.0
        f = (0.0 if f0 is None else f0) + (0.0 if f1 is None else f1)
        k = len(f)
        return float(0.5 * f @ (s1.internal[:k] - s0.internal[:k]))

    def load_stiffness(self, state, t: float, factor: float) -> NDArray | None:
        """(n, nslots, nslots) ``factor`` times the load stiffness, or None."""
        K = self.loads.stiffness(state, t)
        return None if K is None else factor * K

    #: the convergence test's reference of a residual made of ``vectors`` (full force vectors):
    #: a callable, set by the dynamic step to its per-block references
    #: (:meth:`fem.analysis.base.StepBase.block_scale`); None: one norm, the largest part's
    reference = None

    def scale(self, *vectors: NDArray):
        """The residual's reference: per block (``reference``) or the largest part's norm."""
        if self.reference is not None:
            return self.reference(*vectors)
        return max([float(np.linalg.norm(v)) for v in vectors] + [1e-300])


def midpoint_velocities(inertia, s0, s1, kin, h: float, W0=None, R1=None) -> None:
    """Set ``s1.v``: ``v1 = 2 dx/h - v0``; Lie nodes ``W1 = 2 Theta/h - W0``, ``omega = R1 W1``."""
    d = s0.dim
    if d == 2:                     # the increment's slots: dx, dy and the angle (or psi)
        np.subtract(kin.increment * (2 / h), s0.v, out=s1.v)
        return
    s1.v[:, :d] = 2 * kin.dx[:, :d] / h - s0.v[:, :d]
    W0 = inertia.body_velocity(s0) if W0 is None else W0
    W1 = 2 * kin.Theta / h - W0
    R1 = s1.rotation_matrices() if R1 is None else R1
    omega = np.einsum("nij,nj->ni", R1, W1)
    lie = inertia.lie
    s1.v[lie, 3:6] = omega[lie]
    s1.v[~lie, 3:6] = W1[~lie]                 # additive nodes: rates of the rotation vector


def newmark_rates(inertia, s0, s1, kin, h, beta, gamma, R0=None, W0=None) -> None:
    """Set ``s1.v`` and ``s1.a`` by Newmark's formulas (rotations in the material description).

    The element-internal unknowns (superelements' ``eta``) are additive: their rates
    ``internal_v``, ``internal_a`` by the same formulas.
    """
    if len(s1.internal):
        de = s1.internal - s0.internal
        ai = (de - h * s0.internal_v - h * h * (0.5 - beta) * s0.internal_a) / (beta * h * h)
        s1.internal_v[:] = s0.internal_v + h * ((1 - gamma) * s0.internal_a + gamma * ai)
        s1.internal_a[:] = ai
    d = s0.dim
    lin = slice(0, d) if d == 3 else slice(0, 3)
    inc = kin.increment
    a1 = (inc - h * s0.v - h * h * (0.5 - beta) * s0.a) / (beta * h * h)
    v1 = s0.v + h * ((1 - gamma) * s0.a + gamma * a1)
    if d == 2:
        s1.a[:], s1.v[:] = a1, v1
        return
    s1.a[:, lin], s1.v[:, lin] = a1[:, lin], v1[:, lin]
    R0 = s0.rotation_matrices() if R0 is None else R0          # s0's are cached per step
    R1 = s1.rotation_matrices()
    W0 = inertia.body_velocity(s0, R0) if W0 is None else W0
    A0 = np.einsum("nji,nj->ni", R0, s0.a[:, 3:6])
    A0[~inertia.lie] = s0.a[~inertia.lie, 3:6]
    A1 = (kin.Theta - h * W0 - h * h * (0.5 - beta) * A0) / (beta * h * h)
    W1 = W0 + h * ((1 - gamma) * A0 + gamma * A1)
    lie = inertia.lie
    s1.v[lie, 3:6] = np.einsum("nij,nj->ni", R1, W1)[lie]
    s1.a[lie, 3:6] = np.einsum("nij,nj->ni", R1, A1)[lie]
    s1.v[~lie, 3:6], s1.a[~lie, 3:6] = W1[~lie], A1[~lie]
