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


def _copy_fields(fields: dict) -> dict:
    """A copy of ``State.rates`` or ``State.history`` (per group, named arrays), never aliasing.

    Trial states are copied at every time step and increment; ``copy.deepcopy``'s generic walk
    was most of that. Values that are not arrays are deep-copied.
    """
    return {group: {key: value.copy() if type(value) is np.ndarray else copy.deepcopy(value)
                    for key, value in arrays.items()}
            for group, arrays in fields.items()}


def _declared(fields: dict | None) -> dict[str, dict[str, NDArray]]:
    """``{group: {name: array}}`` of declared fields ``{group: {name: (shape, fill)}}``."""
    return {group: {name: np.full(shape, fill, dtype=float) for name, (shape, fill) in
                    named.items()} for group, named in (fields or {}).items()}


@dataclass
class State:
    """Everything that changes in an analysis, at time (or load factor) ``t``.

    Every unknown of a model and every rate or algorithmic variable an analysis carries from one
    time step (or step) to the next is a field here, and nothing else carries state between
    steps: :meth:`arrays` and :meth:`from_arrays` round-trip all of them bit for bit (the
    results file's ``/steps/<s>/state``, restart).

    Attributes
    ----------
    t : time in a dynamic step, pseudo-time (= load factor) in a static step
    u : (n, 3) nodal displacements, global frame
    rot : (n,) rotation angle about z (2D) or (n, 4) unit quaternions (3D), from the reference
    v : (n, nslots) velocities: translational, then angular (spatial angular velocity in 3D)
    a : (n, nslots) accelerations, same layout
    internal : (n_internal,) element-internal unknowns (the DOF map's ``internal`` block: the
        superelements' modal coordinates ``eta``)
    internal_v, internal_a : (n_internal,) their rates and accelerations
    multipliers : (n_multipliers,) Lagrange multipliers of the constraint groups (its
        ``multipliers`` block)
    load_scales : the load history: the scale each load has reached (:mod:`fem.loads`)
    prescribed : (n, nslots) the prescribed values applied so far, or None before any
    rates : ``{group: {name: array}}`` the rates inertia groups declare
        (:func:`fem.inertia.rate_fields`: the director rates of consistent beams, the recovered
        velocities of co-rotational superelements), written by the integrators' rate updates
    history : ``{group: {name: array}}`` the energy-conserving scheme's algorithmic history,
        declared by the element groups (:meth:`fem.elements.base.ElementGroup.history_fields`,
        :meth:`fem.elements.beam.Beam.conserving`)
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
    internal_v: NDArray | None = None
    internal_a: NDArray | None = None
    rates: dict[str, dict[str, NDArray]] = field(default_factory=dict)
    history: dict[str, dict[str, NDArray]] = field(default_factory=dict)

    def __post_init__(self):
        # rates of the internal unknowns: at rest unless given
        if self.internal_v is None or len(self.internal_v) != len(self.internal):
            self.internal_v = np.zeros(len(self.internal))
        if self.internal_a is None or len(self.internal_a) != len(self.internal):
            self.internal_a = np.zeros(len(self.internal))

    @classmethod
    def reference(cls, dim: int, n_nodes: int, n_internal: int = 0,
                  n_multipliers: int = 0, rates: dict | None = None,
                  history: dict | None = None) -> State:
        """The undeformed state at rest.

        ``rates`` and ``history``: the declared fields, ``{group: {name: (shape, fill)}}``,
        created filled with ``fill`` (:meth:`fem.system.System.reference_state` passes every
        group's declaration).
        """
        nslots = 3 if dim == 2 else 6
        rot = np.zeros(n_nodes) if dim == 2 else so3.quat_identity(n_nodes)
        return cls(dim=dim, t=0.0, u=np.zeros((n_nodes, 3)), rot=rot,
                   v=np.zeros((n_nodes, nslots)), a=np.zeros((n_nodes, nslots)),
                   internal=np.zeros(n_internal), multipliers=np.zeros(n_multipliers),
                   rates=_declared(rates), history=_declared(history))

    def copy(self) -> State:
        """Deep copy (trial states never alias committed ones)."""
        return State(dim=self.dim, t=self.t, u=self.u.copy(), rot=self.rot.copy(),
                     v=self.v.copy(), a=self.a.copy(), internal=self.internal.copy(),
                     multipliers=self.multipliers.copy(), load_scales=dict(self.load_scales),
                     prescribed=None if self.prescribed is None else self.prescribed.copy(),
                     internal_v=self.internal_v.copy(), internal_a=self.internal_a.copy(),
                     rates=_copy_fields(self.rates), history=_copy_fields(self.history))

    def assign(self, other: State) -> None:
        """Overwrite this state with ``other`` (commit a trial state)."""
        self.t = other.t
        self.u[...] = other.u
        self.rot[...] = other.rot
        self.v[...] = other.v
        self.a[...] = other.a
        self.internal = other.internal.copy()
        self.internal_v = other.internal_v.copy()
        self.internal_a = other.internal_a.copy()
        self.multipliers = other.multipliers.copy()
        self.load_scales = dict(other.load_scales)
        self.prescribed = None if other.prescribed is None else other.prescribed.copy()
        self.rates = _copy_fields(other.rates)
        self.history = _copy_fields(other.history)

    # --- as plain arrays (the results file; restart) -----------------------------------------
    def arrays(self) -> dict[str, NDArray]:
        """The state as named arrays, e.g. for ``/steps/<s>/state`` of a results file.

        Nested fields are flattened with ``/`` in the names (``load_scales/P``,
        ``rates/<group>/<name>``, ``history/<group>/<name>``); :meth:`from_arrays` reads them
        back.
        """
        out = {"dim": np.array(self.dim), "t": np.array(self.t), "u": self.u, "rot": self.rot,
               "v": self.v, "a": self.a, "internal": self.internal,
               "internal_v": self.internal_v, "internal_a": self.internal_a,
               "multipliers": self.multipliers}
        if self.prescribed is not None:
            out["prescribed"] = self.prescribed
        for name, scale in self.load_scales.items():
            out[f"load_scales/{name}"] = np.array(scale)
        for kind in ("rates", "history"):
            for group, named in getattr(self, kind).items():
                for key, value in named.items():
                    out[f"{kind}/{group}/{key}"] = value
        return out

    @classmethod
    def from_arrays(cls, arrays: dict) -> State:
        """A state from :meth:`arrays` (values may be h5py datasets or numpy arrays).

        Files of earlier versions kept the rates and the history in one untyped dictionary,
        ``conserving/<key>/<name>``: ``<group>`` (history), ``<group>.director_rates``
        (consistent beams' rates) and ``<group>.rates`` (superelements: ``eta`` rates, a
        co-rotational one's recovered velocities ``v``, ``a``). They are read into the typed
        fields; the rates of ``eta`` only where one superelement holds every internal unknown
        (the file does not say where each superelement's ``eta`` are), else they stay at rest
        with a warning.
        """
        a = {k: np.asarray(v) for k, v in arrays.items()}
        state = cls(dim=int(a["dim"]), t=float(a["t"]), u=a["u"].copy(), rot=a["rot"].copy(),
                    v=a["v"].copy(), a=a["a"].copy(), internal=a["internal"].copy(),
                    multipliers=a["multipliers"].copy(),
                    prescribed=a["prescribed"].copy() if "prescribed" in a else None,
                    internal_v=a["internal_v"].copy() if "internal_v" in a else None,
                    internal_a=a["internal_a"].copy() if "internal_a" in a else None)
        legacy = {}
        for name, value in a.items():
            parts = name.split("/")
            if parts[0] == "load_scales":
                state.load_scales[parts[1]] = float(value)
            elif parts[0] in ("rates", "history") and len(parts) == 3:
                getattr(state, parts[0]).setdefault(parts[1], {})[parts[2]] = value.copy()
            elif parts[0] == "conserving" and len(parts) == 3:
                legacy.setdefault(parts[1], {})[parts[2]] = value.copy()
        _read_legacy(state, legacy)
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


def _read_legacy(state: State, legacy: dict) -> None:
    """The untyped ``conserving`` entries of older files into the typed fields (from_arrays)."""
    etas = []
    for key, named in legacy.items():
        if key.endswith(".director_rates"):
            state.rates[key[:-len(".director_rates")]] = named
        elif key.endswith(".rates"):
            group = key[:-len(".rates")]
            if "eta" in named:           # a co-rotational superelement: y_dot, y_ddot; eta rates
                state.rates[group] = {k: named[k] for k in ("v", "a") if k in named}
                etas.append((named["eta"].ravel(), None))
            else:                        # a linear one: the rates of eta
                etas.append((named["v"].ravel(), named["a"].ravel()))
        else:
            state.history[key] = named
    if len(etas) == 1 and len(etas[0][0]) == len(state.internal):
        v, acc = etas[0]
        state.internal_v = v.copy()
        if acc is not None:
            state.internal_a = acc.copy()
    elif etas:
        import logging

        logging.getLogger(__name__).warning(
            "a state of an older results file holds the modal rates of %d superelements "
            "without their places among the internal unknowns: they are read as at rest",
            len(etas))
