"""The model: nodes, sets, materials, sections, element groups, supports, loads, velocity fields.

A :class:`Model` is built once (by :mod:`fem.io.deck` or by hand) and never changed afterwards;
analyses read it and keep everything that changes in a :class:`~fem.state.State`.

Nodes are stored by index ``0..n-1``; the user's node ids live in ``node_ids``. Coordinates are
always ``(n, 3)`` (2D models have ``z = 0``). The DOF slots of a node are ``("ux", "uy", "rz")`` in
2D and ``("ux", "uy", "uz", "rx", "ry", "rz")`` in 3D; which of them exist is decided by the
elements (:mod:`fem.dofs`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

import numpy as np
from numpy.typing import NDArray

from fem.time_functions import TimeFunction

DOF_SLOTS = {2: ("ux", "uy", "rz"), 3: ("ux", "uy", "uz", "rx", "ry", "rz")}
LOAD_KINDS = ("dead", "follower", "semitangential")


@dataclass(frozen=True)
class Material:
    """Linear elastic isotropic material."""

    name: str
    E: float
    G: float
    rho: float = 0.0

    @property
    def nu(self) -> float:
        """Poisson's ratio implied by E and G."""
        return self.E / (2 * self.G) - 1


@dataclass(frozen=True)
class OrthotropicMaterial:
    """Linear elastic orthotropic material in plane stress (a shell layer's), axes 1 and 2.

    ``nu12`` is the Poisson ratio of a strain along 2 under a stress along 1 (so ``nu21 = nu12
    E2 / E1``); positive definite when ``nu12^2 < E1 / E2``. Only shell layers take it
    (:class:`ShellSection`), which say where axis 1 goes.
    """

    name: str
    E1: float
    E2: float
    G12: float
    nu12: float
    rho: float = 0.0


@dataclass(frozen=True)
class Layer:
    """One layer of a :class:`ShellSection`: material, thickness, angle (degrees) of its axis 1."""

    material: Material | OrthotropicMaterial
    thickness: float
    angle: float = 0.0


@dataclass(frozen=True)
class ShellSection:
    """A layered (laminate) shell section, layers from the bottom (``-e3``) to the top.

    Classical lamination theory turns it into the facets' A, B, D matrices
    (:mod:`fem.elements.shell.laminate`).
    """

    name: str
    layers: tuple[Layer, ...]

    @property
    def thickness(self) -> float:
        """The total thickness."""
        return float(sum(ly.thickness for ly in self.layers))


@dataclass(frozen=True)
class Section:
    """Beam/truss cross-section in its local axes (x along the member, y and z principal).

    ``Iz`` governs bending in the local x-y plane (the only plane of a 2D beam), ``Iy`` bending in
    the x-z plane; ``Ay``, ``Az`` are shear areas (``inf`` for Euler-Bernoulli behaviour).
    """

    name: str
    A: float
    Iy: float = 0.0
    Iz: float = 0.0
    J: float = 0.0
    Ay: float = np.inf
    Az: float = np.inf
    #: mass per length ``rho A`` and rotary inertias per length ``(rho Iy, rho Iz, rho J)`` when
    #: given directly (papers give them apart from the stiffness section); None: from the
    #: material's density and this section
    rhoA: float | None = None
    rhoI: tuple[float, float, float] | None = None

    def mass_per_length(self, rho):
        """The mass per length of a member of density ``rho``: ``mass_per_length`` if given.

        >>> Section("s", A=2.0).mass_per_length(3.0)
        6.0
        >>> Section("s", A=2.0, rhoA=1.5).mass_per_length(3.0)
        1.5
        """
        return mass_per_length(rho, self.A, self.rhoA)

    @classmethod
    def rectangle(cls, name: str, b: float, h: float) -> Section:
        """Solid rectangle, depth ``h`` along local y, width ``b`` along local z.

        Saint-Venant torsion constant from the exact series (Timoshenko & Goodier, Theory of
        Elasticity, section 109), with ``t <= w`` the sides:
        ``J = w t^3 / 3 (1 - 192 t / (pi^5 w) sum_odd n tanh(n pi w / (2 t)) / n^5)``;
        shear areas 5/6 A.

        >>> s = Section.rectangle("r", b=1.0, h=2.0)
        >>> round(s.Iz, 6), round(s.Iy, 6), round(s.J / (2.0 * 1.0**3), 4)
        (0.666667, 0.166667, 0.2287)
        """
        w, t = max(b, h), min(b, h)
        n = np.arange(1, 40, 2)
        series = np.sum(np.tanh(n * np.pi * w / (2 * t)) / n**5)
        J = w * t**3 / 3 * (1 - 192 * t / (np.pi**5 * w) * series)
        A = b * h
        return cls(name, A=A, Iy=h * b**3 / 12, Iz=b * h**3 / 12, J=float(J), Ay=5 / 6 * A,
                   Az=5 / 6 * A)

    @classmethod
    def circle(cls, name: str, d: float) -> Section:
        """Solid circle of diameter ``d``; shear areas 9/10 A."""
        A = np.pi * d**2 / 4
        Ib = np.pi * d**4 / 64
        return cls(name, A=A, Iy=Ib, Iz=Ib, J=2 * Ib, Ay=0.9 * A, Az=0.9 * A)

    @classmethod
    def tube(cls, name: str, d: float, t: float) -> Section:
        """Circular tube, outer diameter ``d``, wall ``t``; shear areas A/2 (thin wall)."""
        di = d - 2 * t
        A = np.pi * (d**2 - di**2) / 4
        Ib = np.pi * (d**4 - di**4) / 64
        return cls(name, A=A, Iy=Ib, Iz=Ib, J=2 * Ib, Ay=0.5 * A, Az=0.5 * A)


def mass_per_length(rho, A, given=None):
    """Mass per length ``rho A`` of members (scalars or per-element arrays), or ``given``.

    The one rule of trusses and beams: a section's ``mass_per_length`` (papers give rho A apart
    from EA and EI) wins over the material's density times the area.
    """
    return rho * A if given is None else given


@dataclass(frozen=True)
class NodalLoad:
    """Force and moment applied at each node of ``nodes``, scaled by ``function(t)``.

    ``kind`` says how the load follows the node: ``dead`` (fixed global direction; for moments this
    is Argyris's *axial* moment), ``follower`` (rotates with the node) or ``semitangential``
    (a conservative moment whose potential is ``-M . psi`` with ``psi`` the nodal rotation vector).
    """

    name: str
    nodes: NDArray
    force: NDArray
    moment: NDArray
    kind: str = "dead"
    function: TimeFunction | None = None


@dataclass(frozen=True)
class DistributedLoad:
    """A uniform load per unit (reference) length on elements of line groups.

    ``parts``: ``(group name, element indices)`` pairs.

    ``per_length`` (3,) force per length, global axes. ``kind``: ``dead`` (fixed global
    direction) or ``follower`` (at each end of an element the load turns with that end node's
    rotation, i.e. with the deformed beam axis there; see :mod:`fem.loads`).
    """

    name: str
    parts: tuple[tuple[str, NDArray], ...]
    per_length: NDArray
    kind: str = "dead"
    function: TimeFunction | None = None


@dataclass(frozen=True)
class Gravity:
    """Gravity: ``M g`` on every mass of the model (see :func:`fem.loads.gravity_force`).

    A load named ``"gravity"`` like the ``[[loads]]``: steps apply, hold and remove it by name.
    """

    acceleration: NDArray
    function: TimeFunction | None = None
    name: str = "gravity"
    kind: str = "dead"


@dataclass(frozen=True)
class Prescribed:
    """A prescribed value of one DOF slot at ``nodes``, scaled by ``function(t)``."""

    name: str
    nodes: NDArray
    slot: int
    value: float
    function: TimeFunction | None = None


@dataclass(frozen=True)
class PointMass:
    """Lumped mass ``mass`` and rotary inertia ``inertia`` (3 x 3, global axes) at ``nodes``."""

    name: str
    nodes: NDArray
    mass: float
    inertia: NDArray


@dataclass
class VelocityField:
    """Initial velocities ``v = v0 + omega x (x - center)`` and nodal spins ``omega``."""

    name: str
    nodes: np.ndarray
    velocity: np.ndarray
    angular_velocity: np.ndarray
    center: np.ndarray

    def values(self, state, X: np.ndarray) -> np.ndarray:
        """(k, nslots) the field's velocities and spins at its nodes."""
        x = X[self.nodes] + state.u[self.nodes]
        v = self.velocity + np.cross(self.angular_velocity, x - self.center)
        d = state.dim
        out = np.zeros((len(self.nodes), state.v.shape[1]))
        out[:, :d] = v[:, :d]
        if d == 2:
            out[:, 2] = self.angular_velocity[2]
        else:
            out[:, 3:6] = self.angular_velocity
        return out

    def apply(self, state, X: np.ndarray) -> None:
        """Set the velocities of the field's nodes (several fields: :func:`apply_velocities`)."""
        apply_velocities((self,), state, X)


def apply_velocities(fields, state, X: np.ndarray) -> None:
    """Set the velocities of the nodes the ``fields`` cover to the *sum* of their fields.

    Fields superpose (a spin plus a kick is the sum of the two motions, since velocity fields
    are linear), so a node in several fields gets their sum, not the last one; nodes in no
    field keep their velocities.
    """
    if not fields:
        return
    total = np.zeros_like(state.v)
    covered = np.zeros(len(state.v), dtype=bool)
    for vf in fields:
        np.add.at(total, vf.nodes, vf.values(state, X))
        covered[vf.nodes] = True
    state.v[covered] = total[covered]


@dataclass(frozen=True)
class Model:
    """Immutable description of the structure.

    Attributes
    ----------
    dim : 2 or 3
    X : (n, 3) reference nodal coordinates, global frame
    node_ids : (n,) user node ids
    fixed : (n, nslots) bool, DOFs held at zero (or at a prescribed value)
    groups : element groups (see :mod:`fem.elements`)
    constraints : constraint groups (see :mod:`fem.constraints`): Lagrange multipliers
    node_origin : (n, 4) int or None; for a node made by ``divisions``: the ids of the two end
        nodes of the row it subdivides, its position ``k`` from the first (1 to ``d - 1``) and
        ``d``, the divisions; ``-1`` in every column for a node the user gave
    """

    dim: int
    X: NDArray
    node_ids: NDArray
    groups: tuple = ()
    node_sets: Mapping[str, NDArray] = field(default_factory=dict)
    materials: Mapping[str, Material] = field(default_factory=dict)
    sections: Mapping[str, Section] = field(default_factory=dict)
    fixed: NDArray | None = None
    prescribed: tuple[Prescribed, ...] = ()
    loads: tuple = ()              # NodalLoad, DistributedLoad, Gravity
    masses: tuple[PointMass, ...] = ()
    constraints: tuple = ()
    functions: Mapping[str, TimeFunction] = field(default_factory=dict)
    title: str = ""
    units: str = ""
    node_origin: NDArray | None = None

    def __post_init__(self):
        X = np.array(self.X, dtype=float)
        X.setflags(write=False)
        object.__setattr__(self, "X", X)
        if self.fixed is None:
            object.__setattr__(self, "fixed", np.zeros((len(X), self.nslots), dtype=bool))
        self.fixed.setflags(write=False)
        object.__setattr__(self, "node_sets", MappingProxyType(dict(self.node_sets)))
        object.__setattr__(self, "functions", MappingProxyType(dict(self.functions)))

    @property
    def n_nodes(self) -> int:
        """Number of nodes."""
        return len(self.X)

    @property
    def slots(self) -> tuple[str, ...]:
        """DOF slot names of every node."""
        return DOF_SLOTS[self.dim]

    @property
    def nslots(self) -> int:
        """Number of DOF slots per node."""
        return len(DOF_SLOTS[self.dim])

    def describe_node(self, i: int, dof: str = "") -> str:
        """``"node 12 uy"``, with where it lies if ``divisions`` made it (``i``: node index).

        >>> m = Model(dim=2, X=np.zeros((3, 3)), node_ids=np.array([1, 2, 3]),
        ...           node_origin=np.array([[-1] * 4, [-1] * 4, [1, 2, 3, 10]]))
        >>> m.describe_node(2, "uy")
        'node 3 uy (the 3rd of 9 interior nodes between nodes 1 and 2, divisions = 10)'
        >>> m.describe_node(0)
        'node 1'
        """
        text = f"node {self.node_ids[i]}" + (f" {dof}" if dof else "")
        if self.node_origin is None or self.node_origin[i, 0] < 0:
            return text
        a, b, k, n = (int(x) for x in self.node_origin[i])
        which = "the middle node" if n == 2 else f"the {_ordinal(k)} of {n - 1} interior nodes"
        return f"{text} ({which} between nodes {a} and {b}, divisions = {n})"

    def group(self, name: str):
        """Element group by name."""
        for g in self.groups:
            if g.name == name:
                return g
        raise KeyError(name)

    def with_changes(self, **changes) -> Model:
        """A copy with some fields replaced (models are never modified in place)."""
        fields = {k: getattr(self, k) for k in self.__dataclass_fields__}
        fields.update(changes)
        return Model(**fields)


def _ordinal(k: int) -> str:
    """``"1st"``, ``"2nd"``, ``"3rd"``, ``"11th"``, ``"22nd"``."""
    suffix = "th" if 10 <= k % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(k % 10, "th")
    return f"{k}{suffix}"
