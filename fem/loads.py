"""Nodal loads of a step: external force vectors and their load stiffness.

Forces and moments are conjugate to translations and to *spatial* spins. With ``R`` the nodal
rotation, ``psi = log R`` its rotation vector and ``g(t)`` the load's time function:

================  ====================================  ==============================================
kind              applied (global frame)                load stiffness ``-d f_ext / d(increment)``
================  ====================================  ==============================================
dead              ``g f0``, ``g m0``                     0 (for moments: Argyris's *axial* moment)
follower          ``g R f0``, ``g R m0``                 ``hat(f)`` (force row, spin column), ``hat(m)``
semitangential    ``g jl_inv(psi)^T m0`` (moment only)   ``-K_h(psi, g m0) jl_inv(psi)``
================  ====================================  ==============================================

The semitangential moment is conservative, with potential ``-m0 . psi`` (Argyris et al. 1979;
Meijaard 1993, section 3: "with rotation-vector nodal parameters it has no load stiffness"); the
follower and axial moments are not. In 2D a moment about z is the same for all three kinds and a
follower force turns with the nodal angle.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from fem import rotations as so3
from fem.model import NodalLoad, Prescribed, default_function

PRESCRIBED = "__prescribed__"     # state.hist key: currently applied prescribed values (n, nslots)


class StepLoads:
    """The loads active in a step, evaluated on states.

    Parameters
    ----------
    model : the model (for its dimension and node count)
    loads : the :class:`~fem.model.NodalLoad` objects of the step
    step_type : decides the default time function (ramp in statics, constant in dynamics)
    prescribed : the step's prescribed values. With an explicit function a DOF follows
        ``value * g(t)``; with the default one it goes from its value at the start of the step to
        ``value`` (ramped in statics, at once in dynamics). Prescribed rotations in 3D are applied
        as spatial increments about the global axis of their slot.
    """

    def __init__(self, model, loads: tuple[NodalLoad, ...], step_type: str,
                 prescribed: tuple[Prescribed, ...] = ()):
        self.dim = model.dim
        self.n = model.n_nodes
        self.nslots = model.nslots
        self.loads = tuple(loads)
        self.prescribed = tuple(prescribed)
        self.default = default_function(step_type)
        self._start = None

    def begin(self, state) -> None:
        """Remember the prescribed values at the start of the step."""
        applied = state.hist.setdefault(PRESCRIBED, np.zeros((self.n, self.nslots)))
        self._start = applied.copy()

    def prescribed_increment(self, state, t: float) -> NDArray | None:
        """(n, nslots) increment that brings the prescribed DOFs of ``state`` to their values at ``t``."""
        if not self.prescribed:
            return None
        if self._start is None:
            self.begin(state)
        applied = state.hist.setdefault(PRESCRIBED, np.zeros((self.n, self.nslots)))
        target = applied.copy()
        for p in self.prescribed:
            if p.function is not None:
                target[p.nodes, p.slot] = p.value * float(p.function(t))
            else:
                g = float(self.default(t))
                start = self._start[p.nodes, p.slot]
                target[p.nodes, p.slot] = start + (p.value - start) * g
        du = target - applied
        state.hist[PRESCRIBED] = target
        return du

    def _scale(self, load: NodalLoad, t: float) -> float:
        return float((load.function or self.default)(t))

    @property
    def proportional(self) -> bool:
        """All loads use the default ramp, so that ``f_ext = t * F``."""
        return all(ld.function is None for ld in self.loads)

    @property
    def state_dependent(self) -> bool:
        """Some load turns with its node (follower, or a 3D semitangential moment)."""
        return any(ld.kind == "follower" or (ld.kind == "semitangential" and self.dim == 3)
                   for ld in self.loads)

    def force(self, state, t: float) -> NDArray:
        """(n, nslots) nodal external forces at ``t``."""
        out = np.zeros((self.n, self.nslots))
        d = self.dim
        for ld in self.loads:
            g = self._scale(ld, t)
            if g == 0.0:
                continue
            f0, m0 = g * ld.force, g * ld.moment
            nodes = ld.nodes
            if d == 2:
                if ld.kind == "follower":
                    c, s = np.cos(state.rot[nodes]), np.sin(state.rot[nodes])
                    f = np.stack([c * f0[0] - s * f0[1], s * f0[0] + c * f0[1]], axis=-1)
                else:
                    f = np.broadcast_to(f0[:2], (len(nodes), 2))
                np.add.at(out, (nodes, slice(0, 2)), f)
                np.add.at(out, (nodes, 2), m0[2])
                continue
            if ld.kind == "follower":
                R = so3.quat_to_matrix(state.rot[nodes])
                f, m = R @ f0, R @ m0
            elif ld.kind == "semitangential":
                f = np.broadcast_to(f0, (len(nodes), 3))
                psi = so3.rotvec_from_quat(state.rot[nodes])
                m = np.einsum("nji,j->ni", so3.jl_inv(psi), m0)
            else:
                f, m = np.broadcast_to(f0, (len(nodes), 3)), np.broadcast_to(m0, (len(nodes), 3))
            np.add.at(out, (nodes, slice(0, 3)), f)
            np.add.at(out, (nodes, slice(3, 6)), m)
        return out

    def stiffness(self, state, t: float) -> NDArray | None:
        """(n, nslots, nslots) load stiffness blocks at ``t``, or ``None`` when there is none."""
        if not self.state_dependent:
            return None
        out = np.zeros((self.n, self.nslots, self.nslots))
        for ld in self.loads:
            g = self._scale(ld, t)
            if g == 0.0 or ld.kind == "dead":
                continue
            nodes = ld.nodes
            f0, m0 = g * ld.force, g * ld.moment
            if self.dim == 2:
                if ld.kind == "follower":
                    c, s = np.cos(state.rot[nodes]), np.sin(state.rot[nodes])
                    f = np.stack([c * f0[0] - s * f0[1], s * f0[0] + c * f0[1]], axis=-1)
                    np.add.at(out, (nodes, 0, 2), f[:, 1])     # -d(R f0)/d theta = (f_y, -f_x)
                    np.add.at(out, (nodes, 1, 2), -f[:, 0])
                continue
            if ld.kind == "follower":
                R = so3.quat_to_matrix(state.rot[nodes])
                np.add.at(out, (nodes, slice(0, 3), slice(3, 6)), so3.hat(R @ f0))
                np.add.at(out, (nodes, slice(3, 6), slice(3, 6)), so3.hat(R @ m0))
            else:  # semitangential
                psi = so3.rotvec_from_quat(state.rot[nodes])
                kl = -so3.kh(psi, np.broadcast_to(m0, psi.shape)) @ so3.jl_inv(psi)
                np.add.at(out, (nodes, slice(3, 6), slice(3, 6)), kl)
        return out
