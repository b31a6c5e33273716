"""Loads of a step: the load history, external force vectors and their load stiffness.

**Load history.** Every load carries a scale, zero when the analysis starts and kept in the state
(``state.load_scales``). A step

* *applies* the loads it lists: each adds ``g(t)`` to its scale, where ``g`` is the load's function
  or, by default, ``t`` itself in a static step (the load factor, on top of what is there) and
  ``1`` in a dynamic one;
* *holds* every load applied before at its scale;
* *removes* the loads it names: in a static step they ramp down to zero over the step, in a dynamic
  step they vanish at once (a release).

So ``f_ext = f_held + lam F`` in a static step with default functions, which is what displacement
and arc-length control need (``F`` is :meth:`StepLoads.pattern`), and successive static steps
continue the same load path.

**Kinds.** Forces and moments are conjugate to translations and to *spatial* spins. With ``R`` the
nodal rotation and ``psi = log R`` its rotation vector:

==============  =================================  ============================================
kind            applied (global frame)             load stiffness ``-d f_ext / d(increment)``
==============  =================================  ============================================
dead            ``f0``, ``m0``                      0 (for moments: Argyris's *axial* moment)
follower        ``R f0``, ``R m0``                  ``hat(f)`` (force row, spin column),
                                                   ``hat(m)``
semitangential  ``jl_inv(psi)^T m0`` (moments)     ``-K_h(psi, m0) jl_inv(psi)``
==============  =================================  ============================================

The semitangential moment is conservative, with potential ``-m0 . psi`` (Argyris et al. 1979;
Meijaard 1993, section 3: "with rotation-vector nodal parameters it has no load stiffness"); the
follower and axial moments are not. In 2D a moment about z is the same for all three kinds and a
follower force turns with the nodal angle.

**Distributed loads and gravity** are resolved to nodal loads (:func:`resolve`) once per step:

* a uniform load ``q`` per reference length of a beam: the consistent end loads ``q L / 2`` and
  ``+-(L^2 / 12) e x q`` of the straight reference element (:func:`_distributed`). *Dead*: fixed,
  like dead nodal loads (the moments are Argyris's axial ones in 3D; their effect at the ends of
  a loaded run vanishes as the mesh is refined, and interior ones cancel). *Follower*: the load at
  each end turns with that end node's rotation, as a follower nodal load does, so it follows the
  deformed beam axis there (for Euler-Bernoulli beams the nodal rotation turns the tangent) and
  its load stiffness is the follower nodal loads' ``hat(f)``, ``hat(m)``; total ``q L`` (per
  reference length: the stretch of the axis does not change it);
* a uniform pressure ``p`` per reference area on triangles (shells, :class:`PressureLoad`):
  ``p A / 3 n`` at each corner, ``n`` the unit normal of the reference triangle (the consistent
  nodal forces of a uniform load on linear triangles; a positive ``p`` pushes along
  ``(x2 - x1) x (x3 - x1)``). *Dead*: fixed, resolved once per step;
* gravity: ``M g`` with the mass the dynamic step integrates (:func:`gravity_force`): dead,
  constant forces, whose work over a step is exact in the energy balance (for beams with
  consistent inertia the end moments stay at the reference axis: see
  :func:`_consistent_beam_gravity`); on linear superelements ``T^T M g``, its interface part as
  nodal forces and the rest on the modal coordinates (:func:`modal_gravity`,
  :meth:`StepLoads.modal`: the internal block of the DOF map, which static and dynamic steps add).

**Prescribed values** are totals: each listed one goes from its value at the start of the step to
``value`` (ramped over a static step, at once in a dynamic one), or follows ``value * g(t)`` when it
has a function. Prescribed rotations in 3D are applied as spatial increments about the global axis
of their slot.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from fem import rotations as so3
from fem.model import DistributedLoad, Gravity, NodalLoad, Prescribed
from fem.state import State
from fem.time_functions import Constant, Linear, TimeFunction


@dataclass(frozen=True)
class Pattern:
    """A load resolved to the nodes: per-node force and moment at unit scale.

    ``nodes (k,)`` may repeat a node (the ends of adjacent elements); ``force``, ``moment``
    ``(k, 3)`` global axes at the reference; ``kind`` as for nodal loads.
    """

    nodes: NDArray
    force: NDArray
    moment: NDArray
    kind: str


@dataclass(frozen=True)
class PressureLoad:
    """A uniform pressure per unit reference area on triangle groups (shells), a dead load.

    ``parts``: ``(group name, element indices)`` pairs; ``pressure``: force per area along each
    triangle's normal ``(x2 - x1) x (x3 - x1)`` at the reference (:func:`_pressure`).
    """

    name: str
    parts: tuple[tuple[str, NDArray], ...]
    pressure: float
    kind: str = "dead"
    function: TimeFunction | None = None


def resolve(load, model) -> Pattern:
    """The nodal :class:`Pattern` of a nodal, distributed or gravity load."""
    if isinstance(load, Gravity):
        f = gravity_force(model, load.acceleration)
        nodes = np.flatnonzero(np.any(f != 0.0, axis=1))
        d = model.dim
        force, moment = np.zeros((len(nodes), 3)), np.zeros((len(nodes), 3))
        force[:, :d] = f[nodes, :d]
        if d == 2:
            moment[:, 2] = f[nodes, 2]
        else:
            moment[:] = f[nodes, 3:6]
        return Pattern(nodes, force, moment, "dead")
    if isinstance(load, DistributedLoad):
        return _distributed(load, model)
    if isinstance(load, PressureLoad):
        return _pressure(load, model)
    k = len(load.nodes)
    return Pattern(load.nodes, _rows(load.force, k), _rows(load.moment, k), load.kind)


def _rows(a: NDArray, k: int) -> NDArray:
    """``a`` broadcast to ``(k, 3)`` rows: ``np.broadcast_to``'s values, a copy.

    Without ``broadcast_to``'s iterator (2-3 us a call; a static step of a small model asks
    once a load).
    """
    a = np.asarray(a)
    out = np.empty((k, 3), dtype=a.dtype)
    out[...] = a
    return out


def _end_loads(axis: NDArray, q: NDArray) -> tuple[NDArray, NDArray]:
    """Consistent end loads of a uniform load ``q`` (E, 3) per length on elements ``axis = L e``.

    With cubic (Hermite) bending and linear axial shape functions on the straight element:
    ``q L / 2`` at each end and the moments ``+-(L^2 / 12) e x q`` (only the part of ``q``
    normal to the axis bends it); returns the force at each end and the moment at the first.
    """
    L = np.linalg.norm(axis, axis=1)
    return 0.5 * L[:, None] * q, np.cross(axis, q) * (L / 12)[:, None]


def _distributed(load: DistributedLoad, model) -> Pattern:
    """Consistent nodal loads (:func:`_end_loads`) of a uniform load per reference length.

    A group without rotations (trusses: linear shape functions) gets the forces alone. Interior
    moments of equal adjacent elements cancel, so only the ends of a loaded run carry them.
    """
    nodes, forces, moments = [], [], []
    for name, elements in load.parts:
        g = model.group(name)
        conn = g.conn[elements]
        f, m = _end_loads(model.X[conn[:, 1]] - model.X[conn[:, 0]],
                          np.broadcast_to(load.per_length, (len(conn), 3)))
        if not {"rx", "ry", "rz"} & set(g.dof_names):
            m = np.zeros_like(m)
        nodes += [conn[:, 0], conn[:, 1]]
        forces += [f, f]
        moments += [m, -m]
    return Pattern(np.concatenate(nodes), np.vstack(forces), np.vstack(moments), load.kind)


def _pressure(load: PressureLoad, model) -> Pattern:
    """Consistent nodal forces ``p A / 3 n`` of a uniform pressure on reference triangles.

    ``(x2 - x1) x (x3 - x1) / 2 = A n``, so each corner takes ``p / 6`` times that cross product
    (the consistent load of linear triangles, and the DKT's load in Batoz, Bathe & Ho 1980: no
    nodal moments).
    """
    nodes, forces = [], []
    for name, elements in load.parts:
        conn = model.group(name).conn[elements]
        X = model.X[conn]                                           # (E, 3, 3)
        f = load.pressure / 6.0 * np.cross(X[:, 1] - X[:, 0], X[:, 2] - X[:, 0])
        nodes.append(conn.T.ravel())
        forces.append(np.tile(f, (3, 1)))
    force = np.vstack(forces)
    return Pattern(np.concatenate(nodes), force, np.zeros_like(force), load.kind)


def gravity_force(model, acceleration: NDArray) -> NDArray:
    """(n, nslots) ``M g``: gravity on every mass, with the mass the dynamic step integrates.

    Groups with lumped inertia (``lumped_inertia``, which :class:`fem.inertia.nodal.NodalInertia`
    integrates) take ``m_node g`` (translations only: the centre of mass of a lumped node is the
    node); beams with ``inertia = "consistent"`` the consistent ``M g`` of their Hermite ``rho A``
    (:func:`_consistent_beam_gravity`); the ``[[masses]]`` point masses ``m g``; superelements
    the part on their interface nodes of ``T^T M g`` (:func:`modal_gravity` the rest).
    """
    d, n = model.dim, model.n_nodes
    a = np.asarray(acceleration, dtype=float)[:d]
    state = State.reference(d, n)
    out = np.zeros((n, model.nslots))
    slots = model.slots
    for g in model.groups:
        if "mass" not in g.capabilities:
            continue
        if hasattr(g, "gravity_parts"):         # superelements: u_b's part of T^T M a
            if g.data.gravity is not None:      # (a step applying gravity refuses the others)
                np.add.at(out, g.conn[0], g.gravity_parts(acceleration)[0])
            continue
        if g.inertia == "consistent":
            fe = _consistent_beam_gravity(g, acceleration).reshape(len(g), g.nen, g.ndn)
            cols = [slots.index(name) for name in g.dof_names]
            np.add.at(out, (g.conn[:, :, None], np.array(cols)[None, None, :]), fe)
            continue
        m, _ = g.lumped_inertia(state)                      # (E, nen)
        np.add.at(out[:, :d], g.conn.ravel(), m.ravel()[:, None] * a)
    for pm in model.masses:
        np.add.at(out[:, :d], pm.nodes, pm.mass * a)
    return out


def modal_gravity(model, acceleration: NDArray) -> NDArray | None:
    """(k,) ``M g`` on the superelements' modal coordinates (the state's internal unknowns).

    The part on ``eta`` of their ``T^T M g`` (:meth:`fem.elements.superelement.Superelement.
    gravity_parts`), at each group's ``internal_start``; None without superelements.
    """
    supers = [g for g in model.groups if hasattr(g, "gravity_parts")
              and g.data.gravity is not None]
    if not supers:
        return None
    n = max(g.internal_start + g.n_internal for g in supers)
    out = np.zeros(n)
    for g in supers:
        out[g.internal_start:g.internal_start + g.n_internal] += g.gravity_parts(acceleration)[1]
    return out


def _consistent_beam_gravity(g, acceleration) -> NDArray:
    """(E, nd) ``M g`` of beams with consistent inertia (:mod:`fem.inertia.beam`).

    The consistent end loads of the distributed load ``rho A g`` at the reference geometry. The
    end moments are taken about the reference axis: the inertia group's elastic line turns them
    with the nodal directors, so this is exact at the reference and an approximation (vanishing
    with mesh refinement) once the ends turn.
    """
    q = g.inertia_per_length["rhoA"][:, None] * np.asarray(acceleration, dtype=float)
    f, m = _end_loads(g.X[:, 1] - g.X[:, 0], q)
    if g.dim == 2:
        return np.hstack([f[:, :2], m[:, 2:], f[:, :2], -m[:, 2:]])
    return np.hstack([f, m, f, -m])


def nodal_force(load: Pattern, scale: float, state, out: NDArray) -> None:
    """Add ``scale`` times ``load`` as it acts on ``state`` to ``out (n, nslots)``."""
    if scale == 0.0:
        return
    f0, m0, nodes = scale * load.force, scale * load.moment, load.nodes
    if state.dim == 2:
        if load.kind == "follower":
            c, s = np.cos(state.rot[nodes]), np.sin(state.rot[nodes])
            f = np.stack([c * f0[:, 0] - s * f0[:, 1], s * f0[:, 0] + c * f0[:, 1]], axis=-1)
        else:
            f = f0[:, :2]
        np.add.at(out, (nodes, slice(0, 2)), f)
        np.add.at(out, (nodes, 2), m0[:, 2])
        return
    if load.kind == "follower":
        R = so3.quat_to_matrix(state.rot[nodes])
        f, m = np.einsum("nij,nj->ni", R, f0), np.einsum("nij,nj->ni", R, m0)
    elif load.kind == "semitangential":
        f = f0
        psi = so3.rotvec_from_quat(state.rot[nodes])
        m = np.einsum("nji,nj->ni", so3.jl_inv(psi), m0)
    else:
        f, m = f0, m0
    np.add.at(out, (nodes, slice(0, 3)), f)
    np.add.at(out, (nodes, slice(3, 6)), m)


def nodal_stiffness(load: Pattern, scale: float, state, out: NDArray) -> None:
    """Add the load stiffness of ``scale`` times ``load`` to ``out (n, nslots, nslots)``."""
    if scale == 0.0 or load.kind == "dead":
        return
    nodes, f0, m0 = load.nodes, scale * load.force, scale * load.moment
    if state.dim == 2:
        if load.kind == "follower":
            c, s = np.cos(state.rot[nodes]), np.sin(state.rot[nodes])
            f = np.stack([c * f0[:, 0] - s * f0[:, 1], s * f0[:, 0] + c * f0[:, 1]], axis=-1)
            np.add.at(out, (nodes, 0, 2), f[:, 1])     # -d(R f0)/d theta = (f_y, -f_x)
            np.add.at(out, (nodes, 1, 2), -f[:, 0])
        return
    if load.kind == "follower":
        R = so3.quat_to_matrix(state.rot[nodes])
        np.add.at(out, (nodes, slice(0, 3), slice(3, 6)), so3.hat(np.einsum("nij,nj->ni", R, f0)))
        np.add.at(out, (nodes, slice(3, 6), slice(3, 6)), so3.hat(np.einsum("nij,nj->ni", R, m0)))
    else:  # semitangential
        psi = so3.rotvec_from_quat(state.rot[nodes])
        kl = -so3.kh(psi, m0) @ so3.jl_inv(psi)
        np.add.at(out, (nodes, slice(3, 6), slice(3, 6)), kl)


#: load vectors kept per step (StepLoads.force): a time step's two ends, an increment's, the pattern
MEMO = 4


class StepLoads:
    """The loads and prescribed values of one step, evaluated on states.

    Parameters
    ----------
    model : the model (for its dimension and node count)
    loads : the loads the step applies
    ramp : whether the loads without a time function ramp with the step's pseudo-time, ``g(t) =
        t``, and removed loads ramp down over it (a static step); False: they apply at once,
        ``g = 1``, and removed loads leave at once (a dynamic or linearize step). The step type
        declares it (:data:`fem.analysis.base.StepBase.LOADS_RAMP`).
    prescribed : the step's prescribed values
    removed : loads the step takes off
    t_end : the step's final pseudo-time (static: its load factor), for ramps
    """

    def __init__(self, model, loads: tuple, ramp: bool,
                 prescribed: tuple[Prescribed, ...] = (), removed: tuple = (),
                 t_end: float = 1.0):
        self.model = model
        self.dim = model.dim
        self.n = model.n_nodes
        self.nslots = model.nslots
        self.loads = tuple(loads)
        self.prescribed = tuple(prescribed)
        self.removed = tuple(removed)
        self.static = bool(ramp)
        self.default = Linear() if self.static else Constant()
        self.t_end = t_end
        self.held: list[tuple[NodalLoad, float]] = []      # or distributed loads, gravity
        self.leaving: list[tuple[NodalLoad, float]] = []
        self._start = None
        self._all = {ld.name: ld for ld in model.loads}
        self._patterns: dict[str, Pattern] = {}
        self._modal: dict[str, NDArray | None] = {}     # gravity on superelements' eta
        self._memo: dict = {}         # (t, which) -> forces, when they do not depend on the state
        self._steady = False          # and not on the time either (begin)
        self._dependent = None        # (held, leaving, state_dependent) last read
        self._affine = None           # (held, pattern): a static step's f(t) = held + t pattern,
        #                               False where not, None until the first force (begin)

    def _pattern(self, load) -> Pattern:
        """The load's nodal pattern, resolved once (gravity asks every group for its masses)."""
        if load.name not in self._patterns:
            self._patterns[load.name] = resolve(load, self.model)
        return self._patterns[load.name]

    # --- the history --------------------------------------------------------------------------
    def begin(self, state) -> None:
        """Read the load scales and prescribed values the step starts from."""
        scales = state.load_scales
        gone = {ld.name for ld in self.removed}
        self.held = [(self._all[name], s) for name, s in scales.items()
                     if s != 0.0 and name not in gone and name in self._all]
        self.leaving = [(ld, scales.get(ld.name, 0.0)) for ld in self.removed]
        if state.prescribed is None:
            state.prescribed = np.zeros((self.n, self.nslots))
        self._start = state.prescribed.copy()
        self._memo = {}
        self._affine = None
        # a dynamic step's loads without functions are constant in time (held ones too)
        self._steady = not self.static and not self.removed and all(
            ld.function is None for ld in self.loads)

    def finish(self, state, t: float) -> None:
        """Record in ``state`` the load scales at the end of the step (pseudo-time ``t``)."""
        scales = dict(state.load_scales)
        for ld in self.loads:
            scales[ld.name] = scales.get(ld.name, 0.0) + self._scale(ld, t)
        for ld in self.removed:
            scales[ld.name] = 0.0
        state.load_scales = scales

    def _scale(self, load: NodalLoad, t: float) -> float:
        return float((load.function or self.default)(t))

    def _leaving_factor(self, t: float) -> float:
        return max(0.0, 1.0 - t / self.t_end) if self.static else 0.0

    @property
    def steady(self) -> bool:
        """The forces are constant in time (a dynamic step's loads without functions; begin)."""
        return self._steady

    @property
    def proportional(self) -> bool:
        """The applied loads grow with the default function: ``f_ext = f_held + t F``."""
        return all(ld.function is None for ld in self.loads) and not self.removed

    @property
    def state_dependent(self) -> bool:
        """Some load turns with its node (follower, or a 3D semitangential moment).

        Kept with the lists it was read from (``held``, ``leaving``, which :meth:`begin` makes
        anew): every force asks, a small model's static step some dozen times.
        """
        kept = self._dependent
        if kept is not None and kept[0] is self.held and kept[1] is self.leaving:
            return kept[2]
        every = [ld for ld, _ in self.held] + list(self.loads) + [ld for ld, _ in self.leaving]
        found = any(ld.kind == "follower" or (ld.kind == "semitangential" and self.dim == 3)
                    for ld in every)
        self._dependent = (self.held, self.leaving, found)
        return found

    # --- forces -------------------------------------------------------------------------------
    def _terms(self, t: float, which: str):
        if which in ("all", "held"):
            yield from self.held
            f = self._leaving_factor(t)
            yield from ((ld, s * f) for ld, s in self.leaving)
        if which in ("all", "applied"):
            yield from ((ld, self._scale(ld, t)) for ld in self.loads)
        if which == "pattern":
            yield from ((ld, 1.0) for ld in self.loads)

    def force(self, state, t: float, which: str = "all") -> NDArray:
        """(n, nslots) nodal external forces at ``t``.

        ``which``: ``"all"``, ``"held"`` (earlier loads), ``"applied"`` (this step's, at ``t``) or
        ``"pattern"`` (this step's at unit scale: ``d f_ext / d lam`` for proportional loads).
        """
        if which == "all":
            if self._affine is None:       # decided once per step (begin)
                self._affine = self._linear_in_t() and (self.force(state, 0.0, "held"),
                                                         self.force(state, 0.0, "pattern"))
            if self._affine:
                held, pattern = self._affine
                return held + t * pattern  # a load-control step asks at every increment
        key = (None if self._steady else t, which)
        kept = self._memo.get(key)
        if kept is not None:          # a time step's Newton iterations ask for the same t, an
            return kept.copy()        # increment's work for its two ends
        out = np.zeros((self.n, self.nslots))
        for ld, s in self._terms(t, which):
            if s != 0.0:
                nodal_force(self._pattern(ld), s, state, out)
        if not self.state_dependent:
            if len(self._memo) >= MEMO:
                del self._memo[next(iter(self._memo))]          # the oldest
            self._memo[key] = out.copy()
        return out

    def modal(self, t: float, which: str = "all") -> NDArray | None:
        """(k,) the loads on the superelements' modal coordinates at ``t``, or None.

        Gravity's part on them (:func:`modal_gravity`), the first ``k`` internal unknowns of
        the DOF map (``which`` as in :meth:`force`); dead, so independent of the state.
        """
        out = None
        for ld, s in self._terms(t, which):
            if s == 0.0 or not isinstance(ld, Gravity):
                continue
            if ld.name not in self._modal:
                self._modal[ld.name] = modal_gravity(self.model, ld.acceleration)
            f = self._modal[ld.name]
            if f is not None:
                out = s * f if out is None else out + s * f
        return out

    def acceleration(self, t: float, which: str = "all") -> NDArray | None:
        """(3,) the gravity acting at ``t`` (``which`` as in :meth:`force`), or None.

        What co-rotational superelements take on their recovered masses (their gravity turns
        with them: :meth:`fem.elements.superelement.corot3d.CorotSuperelement3D.
        gravity_conserving`).
        """
        out = None
        for ld, s in self._terms(t, which):
            if s != 0.0 and isinstance(ld, Gravity):
                a = s * np.asarray(ld.acceleration, dtype=float)
                out = a if out is None else out + a
        return out

    def _linear_in_t(self) -> bool:
        """Whether the forces are ``held + t pattern`` (static, dead, no functions, none off)."""
        return (self.static and self.proportional and isinstance(self.default, Linear)
                and self.default.slope == 1.0 and not self.state_dependent)

    def pattern(self, state) -> NDArray:
        """(n, nslots) the applied loads at unit scale."""
        return self.force(state, 0.0, "pattern")

    def stiffness(self, state, t: float, which: str = "all") -> NDArray | None:
        """(n, nslots, nslots) load stiffness at ``t`` (``which`` as in :meth:`force`), or None."""
        if not self.state_dependent:
            return None
        out = np.zeros((self.n, self.nslots, self.nslots))
        for ld, s in self._terms(t, which):
            if s != 0.0:
                nodal_stiffness(self._pattern(ld), s, state, out)
        return out

    # --- prescribed values --------------------------------------------------------------------
    def prescribed_increment(self, state, t: float) -> NDArray | None:
        """(n, nslots) increment bringing the prescribed DOFs of ``state`` to their ``t`` values."""
        if not self.prescribed:
            return None
        if self._start is None:
            self.begin(state)
        if state.prescribed is None:
            state.prescribed = np.zeros((self.n, self.nslots))
        applied = state.prescribed
        target = applied.copy()
        ramp = min(1.0, t / self.t_end) if self.static else 1.0
        for p in self.prescribed:
            if p.function is not None:
                target[p.nodes, p.slot] = p.value * float(p.function(t))
            else:
                start = self._start[p.nodes, p.slot]
                target[p.nodes, p.slot] = start + (p.value - start) * ramp
        du = target - applied
        state.prescribed = target
        return du
