"""The state of an analysis: plain arrays, copied for trial states and committed explicitly.

Translations are additive. Rotations are not: in 3D each node carries a unit quaternion updated with
spatial incremental rotation vectors (``q <- exp(dw) q``); in 2D the rotation about z is a plain
angle (it is additive in the plane and keeps its winding number, e.g. ``2 pi`` for a rolled-up
beam).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from fem import rotations as so3


def _copy_history(history: dict) -> dict:
    """A deep copy of ``State.conserving`` (per group, named arrays), without ``copy.deepcopy``.

    Trial states are copied at every time step and increment; ``deepcopy``'s generic walk was
    most of that. Values that are not arrays are deep-copied as before.
    """
    return {group: {key: value.copy() if type(value) is np.ndarray else copy.deepcopy(value)
                    for key, value in arrays.items()} if type(arrays) is dict
            else copy.deepcopy(arrays)
            for group, arrays in history.items()}


@dataclass
class State:
    """Everything that changes in an analysis, at time (or load factor) ``t``.

    Attributes
    ----------
    t : time in a dynamic step, pseudo-time (= load factor) in a static step
    u : (n, 3) nodal displacements, global frame
    rot : (n,) rotation angle about z (2D) or (n, 4) unit quaternions (3D), from the reference
    v : (n, nslots) velocities: translational, then angular (spatial angular velocity in 3D)
    a : (n, nslots) accelerations, same layout
    internal : (n_internal,) element-internal unknowns (the DOF map's ``internal`` block)
    multipliers : (n_multipliers,) Lagrange multipliers of the constraint groups (its
        ``multipliers`` block)
    load_scales : the load history: the scale each load has reached (:mod:`fem.loads`)
    prescribed : (n, nslots) the prescribed values applied so far, or None before any
    conserving : the energy-conserving scheme's algorithmic history, per element group name
        (:meth:`fem.elements.beam.Beam.conserving`)
    """

    dim: int
    t: float
    u: NDArray
    rot: NDArray
    v: NDArray
    a: NDArray
    internal: NDArray = field(default_factory=lambda: np.zeros(0))
    multipliers: NDArray = field(default_factory=lambda: np.zeros(0))
    load_scales: dict[str, float] = field(default_factory=dict)
    prescribed: NDArray | None = None
    conserving: dict[str, dict[str, NDArray]] = field(default_factory=dict)

    @classmethod
    def reference(cls, dim: int, n_nodes: int, n_internal: int = 0,
                  n_multipliers: int = 0) -> State:
        """The undeformed state at rest."""
        nslots = 3 if dim == 2 else 6
        rot = np.zeros(n_nodes) if dim == 2 else so3.quat_identity(n_nodes)
        return cls(dim=dim, t=0.0, u=np.zeros((n_nodes, 3)), rot=rot,
                   v=np.zeros((n_nodes, nslots)), a=np.zeros((n_nodes, nslots)),
                   internal=np.zeros(n_internal), multipliers=np.zeros(n_multipliers))

    def copy(self) -> State:
        """Deep copy (trial states never alias committed ones)."""
        return State(dim=self.dim, t=self.t, u=self.u.copy(), rot=self.rot.copy(),
                     v=self.v.copy(), a=self.a.copy(), internal=self.internal.copy(),
                     multipliers=self.multipliers.copy(), load_scales=dict(self.load_scales),
                     prescribed=None if self.prescribed is None else self.prescribed.copy(),
                     conserving=_copy_history(self.conserving))

    def assign(self, other: State) -> None:
        """Overwrite this state with ``other`` (commit a trial state)."""
        self.t = other.t
        self.u[...] = other.u
        self.rot[...] = other.rot
        self.v[...] = other.v
        self.a[...] = other.a
        self.internal = other.internal.copy()
        self.multipliers = other.multipliers.copy()
        self.load_scales = dict(other.load_scales)
        self.prescribed = None if other.prescribed is None else other.prescribed.copy()
        self.conserving = _copy_history(other.conserving)

    # --- as plain arrays (the results file; restart) -----------------------------------------
    def arrays(self) -> dict[str, NDArray]:
        """The state as named arrays, e.g. for ``/steps/<s>/state`` of a results file.

        Nested fields are flattened with ``/`` in the names (``load_scales/P``,
        ``conserving/beam/v``); :meth:`from_arrays` reads them back.
        """
        out = {"dim": np.array(self.dim), "t": np.array(self.t), "u": self.u, "rot": self.rot,
               "v": self.v, "a": self.a, "internal": self.internal,
               "multipliers": self.multipliers}
        if self.prescribed is not None:
            out["prescribed"] = self.prescribed
        for name, scale in self.load_scales.items():
            out[f"load_scales/{name}"] = np.array(scale)
        for group, history in self.conserving.items():
            for key, value in history.items():
                out[f"conserving/{group}/{key}"] = value
        return out

    @classmethod
    def from_arrays(cls, arrays: dict) -> State:
        """A state from :meth:`arrays` (values may be h5py datasets or numpy arrays)."""
        a = {k: np.asarray(v) for k, v in arrays.items()}
        state = cls(dim=int(a["dim"]), t=float(a["t"]), u=a["u"].copy(), rot=a["rot"].copy(),
                    v=a["v"].copy(), a=a["a"].copy(), internal=a["internal"].copy(),
                    multipliers=a["multipliers"].copy(),
                    prescribed=a["prescribed"].copy() if "prescribed" in a else None)
        for name, value in a.items():
            parts = name.split("/")
            if parts[0] == "load_scales":
                state.load_scales[parts[1]] = float(value)
            elif parts[0] == "conserving":
                state.conserving.setdefault(parts[1], {})[parts[2]] = value.copy()
        return state

    @property
    def n_nodes(self) -> int:
        """Number of nodes."""
        return len(self.u)

    def increment(self, du: NDArray, additive: NDArray | None = None) -> None:
        """Add a nodal increment ``du`` (n, nslots); rotations are composed, never added.

        ``additive`` (n,) marks 3D nodes whose rotation increments are increments of the rotation
        vector instead of spatial spins: nodes that only small-displacement (linear) elements
        use, where the rotation vector is the DOF and superposition must hold exactly.
        """
        d = self.dim
        self.u[:, :d] += du[:, :d]
        if d == 2:
            self.rot += du[:, 2]
            return
        moved = np.any(du[:, 3:6] != 0.0, axis=1)
        if additive is not None:
            add = moved & additive
            if add.any():
                psi = so3.rotvec_from_quat(self.rot[add]) + du[add, 3:6]
                angle = float(np.linalg.norm(psi, axis=1).max())
                if angle > np.pi:
                    _warn_beyond_pi(angle)
                self.rot[add] = so3.quat_from_rotvec(psi)
            moved &= ~additive
        if moved.any():
            self.rot[moved] = so3.rotate_spatial(self.rot[moved], du[moved, 3:6])

    def rotation_matrices(self) -> NDArray:
        """(n, 3, 3) nodal rotation matrices (from the reference orientation)."""
        if self.dim == 3:
            return so3.quat_to_matrix(self.rot)
        c, s = np.cos(self.rot), np.sin(self.rot)
        r = np.zeros((len(c), 3, 3))
        r[:, 0, 0], r[:, 0, 1], r[:, 1, 0], r[:, 1, 1], r[:, 2, 2] = c, -s, s, c, 1.0
        return r

    def quaternions(self) -> NDArray:
        """(n, 4) nodal quaternions (about z in 2D)."""
        if self.dim == 3:
            return self.rot.copy()
        q = np.zeros((len(self.rot), 4))
        q[:, 0], q[:, 3] = np.cos(self.rot / 2), np.sin(self.rot / 2)
        return q

    def rotation_vectors(self) -> NDArray:
        """(n, 3) nodal rotation vectors; in 2D rz keeps its winding (2 pi stays 2 pi)."""
        if self.dim == 3:
            return so3.rotvec_from_quat(self.rot)
        out = np.zeros((len(self.rot), 3))
        out[:, 2] = self.rot
        return out

    def dof_values(self) -> NDArray:
        """(n, nslots) generalized displacements: translations and rotation vectors."""
        if self.dim == 2:
            return np.column_stack([self.u[:, 0], self.u[:, 1], self.rot])
        return np.column_stack([self.u, self.rotation_vectors()])


_warned_beyond_pi = False


def _warn_beyond_pi(angle: float) -> None:
    """Say once per run that a linear rotation passed pi (a unit quaternion wraps it by 2 pi).

    A linear solution scales with its load, so its translations stay right at any size; the
    rotations of such nodes, and the section forces computed from them, do not: a thin plate
    loaded far outside the linear range turned nodes by 13 rad, stored as 3.
    """
    global _warned_beyond_pi
    if _warned_beyond_pi:
        return
    _warned_beyond_pi = True
    import logging

    logging.getLogger(__name__).warning(
        "a node used only by small-displacement (linear) elements turned by %.3g rad, beyond "
        "pi: its rotation is stored wrapped by 2 pi, so the rotations and section forces "
        "written for such nodes are wrong (translations are not); use formulation = "
        "\"corotational\" for large rotations", angle)

