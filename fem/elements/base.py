"""The element-group protocol shared by every element family.

A group is a batch of ``E`` same-type elements with connectivity ``conn (E, nen)`` (node indices)
and per-element properties. Given a :class:`~fem.state.State` it returns, vectorized over the batch
and in the global frame:

===================================  ==================  =========================================
method                               shape               what
===================================  ==================  =========================================
``internal_force(state)``            ``(E, nd)``         resisting nodal forces (moments
                                                         conjugate to spatial spins in 3D)
``tangent(state)``                   ``(E, nd, nd)``     d(internal force)/d(increment):
                                                         material + geometric
``energy(state)``                    ``(E,)``            strain energy
``mass(state, lumped)``              ``(E, nd, nd)``     consistent or lumped mass
``stress(state)``                    ``(E, ns)``         generalized stresses (basic forces)
``stress_rate(state, due)``          ``(E, ns)``         their linearized change for ``due``
``material_tangent(state)``          ``(E, nd, nd)``     the part of ``tangent`` not from stress
``geometric_stiffness(state, s)``    ``(E, nd, nd)``     the stress part, for stresses ``s``
``outputs(state)``                   ``{name: (E, k)}``  section forces for results files
``results(state)``                   ``(out, parts)``    ``"nodal_outputs"``: the outputs
                                                         and the :class:`NodalParts` of the
                                                         nodal fields
===================================  ==================  =========================================

``tangent == material_tangent + geometric_stiffness(stress)`` at every state; linear buckling uses
the two parts separately. ``evaluate(state, tangent)`` returns the force and the tangent together
(what Newton calls; one kinematics for both). Element DOFs are ordered node by node, ``dof_names``
within each node.

A group *declares* what it is and what it can do, and steps ask the declaration (never probe for
attributes): ``dof_names`` (its DOFs per node), ``cell_type`` (how meshes, results files and
ParaView draw it), ``capabilities`` (a subset of :data:`CAPABILITIES`; :func:`require` turns a
missing one into a deck error naming the group and what it can do), ``additive_rotations``
(small-displacement groups whose rotation DOFs are rotation vectors, added, not composed) and
``n_internal`` (element-internal unknowns per element, with ``"internal_unknowns"``: the beams'
interior modes of linear buckling, ``interior_stiffness(state, s, material)``) and
``compiled_pairs`` (the methods that run compiled kernels for large groups,
:data:`fem.kernels.PAIRS`: the compiled steps take the groups that declare theirs).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from numpy.typing import NDArray

from fem import lazy
from fem.errors import DeckError

sp = lazy.module("scipy.sparse")

#: What a step may ask of an element group, and how a deck error describes it.
CAPABILITIES = {
    "stiffness": "internal force and tangent (static steps)",
    "geometric_stiffness": "a material/geometric split of the tangent (buckling steps)",
    "mass": "a mass and a lumped nodal inertia (dynamic steps)",
    "energy_conserving": "an energy-conserving force (integrator = \"energy_conserving\")",
    "internal_unknowns": "element-internal unknowns (the interior modes of buckling steps)",
    "nodal_outputs": "stresses averaged to the nodes (nodal fields in results files)",
    "step_control": "limits and checks of the time step, and a history kept by every "
                    "integrator (contacts, fem.analysis.events)",
    "dissipation": "energy taken by damping or friction, booked in energy/damping",
    "damping": "a damping matrix d(force)/d(velocity) (the linearize step's D)",
    "reactions": "forces that grow with a joint's reaction (its Lagrange multipliers, handed "
                 "over by the system: friction from the reaction)",
    "broad_phase": "elements (candidate pairs) listed again before each time step, a new "
                   "pattern when they change (sphere sets, fem.elements.contact.sphere_set)",
}


@dataclass
class NodalParts:
    """What an element group gives to the nodal fields of a frame (:func:`nodal_average`).

    Attributes
    ----------
    conn : (E, nen) node indices
    weight : (E,) or (E, nen) each element's weight at each of its nodes (e.g. its area, or
        its corner angles)
    values : ``{name: (E, ...)}`` per-element values, the family's to read
    finish : ``finish(parts, n) -> {name: (n,) or (n, 3)}``: the nodal fields of all the parts
        that share this function (one call per family, e.g. with :func:`average`; ``NaN`` at
        nodes no part has)
    """

    conn: NDArray
    weight: NDArray
    values: dict[str, NDArray]
    finish: Callable[[list, int], dict[str, NDArray]]


def average(conn: NDArray, weight: NDArray, values: NDArray, n: int) -> tuple[NDArray, NDArray]:
    """Weighted sums at the nodes: ``(sum_e w_e v_e (n, k), sum_e w_e (n,))``.

    ``conn (m, nen)`` node indices, ``weight (m,)`` (per element) or ``(m, nen)`` (per corner),
    ``values (m, k)`` (one value per element) or ``(m, nen, k)`` (one per element corner); one
    sparse incidence product, no loop over elements or nodes.
    """
    m, nen = conn.shape
    per_corner = values.ndim == 3
    cols = np.arange(m * nen) if per_corner else np.repeat(np.arange(m), nen)
    w = np.broadcast_to(weight.reshape(m, -1), (m, nen)).ravel()
    S = sp.csr_matrix((w, (conn.ravel(), cols)),
                      shape=(n, m * nen if per_corner else m))
    v = values.reshape(m * nen, -1) if per_corner else values.reshape(m, -1)
    return S @ v, S @ np.ones(S.shape[1])


def nodal_average(parts: list[NodalParts], n: int) -> dict[str, NDArray]:
    """The nodal fields of ``parts``: one ``finish`` call per family, with its parts."""
    families: dict = {}
    for p in parts:
        families.setdefault(p.finish, []).append(p)
    out: dict[str, NDArray] = {}
    for finish, group in families.items():
        out.update(finish(group, n))
    return out


class ElementGroup:
    """Base class: connectivity, reference geometry and nodal gathering."""

    type_name: ClassVar[str] = ""
    nen: ClassVar[int] = 2
    #: meshio / VTK cell type drawn for each element ("vertex", "line", "triangle", "quad")
    cell_type: ClassVar[str] = "line"
    #: what the family can do (keys of CAPABILITIES)
    capabilities: ClassVar[frozenset[str]] = frozenset({"stiffness"})
    #: rotation DOFs are rotation vectors updated by addition (small-displacement groups)
    additive_rotations: bool = False
    #: which inertia integrates the group: "lumped" (its lumped_inertia, in the nodal group) or
    #: "consistent" (an element-level inertia group, fem.inertia.beam)
    inertia: str = "lumped"
    dof_names: tuple[str, ...] = ()
    stress_names: tuple[str, ...] = ()
    #: the compiled pairs (:data:`fem.kernels.PAIRS`, ``"<family>.<method>"``) the group's
    #: methods take from their threshold; none: numpy only
    compiled_pairs: frozenset[str] = frozenset()
    #: ``(E, nen, 3)`` where the cells are drawn, as reference offsets from the nodes that
    #: carry them (body-fixed attachment points, :mod:`fem.io.drawing`); None: at the nodes
    drawn_offsets: NDArray | None = None

    def __init__(self, name: str, conn: NDArray, X: NDArray, dim: int):
        self.name = name
        self.conn = np.asarray(conn, dtype=np.int64)
        self.conn.setflags(write=False)
        self.dim = dim
        self.X = np.asarray(X, dtype=float)[self.conn]            # (E, nen, 3) reference coords

    def __len__(self) -> int:
        return len(self.conn)

    @property
    def cells(self) -> NDArray:
        """(C, nen) what results files and drawings show, and the nodes the group acts on.

        The elements (``conn``); a group whose elements change during a run (the candidate
        pairs of a sphere set) shows what stays (its spheres).
        """
        return self.conn

    @property
    def dispatch_size(self) -> int:
        """The element count that chooses compiled or numpy code (:func:`fem.kernels.compiled`).

        The group's own, or that of the group it was taken from (:meth:`take`): a part of a
        group runs the same code as the whole, so that its elements' values are the same to the
        last bit.
        """
        return self.__dict__.get("_dispatch_n", len(self))

    def take(self, elements: NDArray) -> ElementGroup:
        """A group of the ``elements`` (increasing indices) of this one: owner-computes assembly.

        A copy whose arrays with this group's elements on their first axis are cut to
        ``elements``, also inside dicts, lists, tuples and the family's helper objects (frames,
        sections, compiled kernels' prepared data), so that every method computes the kept
        elements as this group does (:mod:`fem.owner_computes`). An array of another meaning
        whose first axis happens to be the element count would be cut too: callers take parts
        of groups larger than any such array (:data:`fem.owner_computes.MIN_TAKE`).
        """
        idx = np.asarray(elements, dtype=np.int64)
        part = _cut(self, idx, len(self), {})
        part.__dict__["_dispatch_n"] = self.dispatch_size
        return part

    @property
    def nd(self) -> int:
        """DOFs per element."""
        return self.nen * len(self.dof_names)

    @property
    def ndn(self) -> int:
        """DOFs per node of the element."""
        return len(self.dof_names)

    @property
    def n_internal(self) -> int:
        """Element-internal unknowns per element (none unless ``"internal_unknowns"``)."""
        return 0

    # --- gathering ----------------------------------------------------------------------------
    def positions(self, state) -> NDArray:
        """(E, nen, 3) current nodal positions relative to each element's first node.

        Relative to the first node, and formed from displacement *differences*, so that a chord
        of a short element in a large model keeps its digits: ``(X_a - X_0) + (u_a - u_0)``.
        """
        u = state.u[self.conn]
        return (self.X - self.X[:, :1]) + (u - u[:, :1])

    def element_vector(self, nodal: NDArray) -> NDArray:
        """(E, nd) element values of an ``(n, nslots)`` nodal array (slots of ``dof_names``)."""
        slots = ("ux", "uy", "rz") if self.dim == 2 else ("ux", "uy", "uz", "rx", "ry", "rz")
        cols = [slots.index(d) for d in self.dof_names]
        return nodal[self.conn][:, :, cols].reshape(len(self), self.nen * len(cols))

    # --- protocol defaults ----------------------------------------------------------------------
    def evaluate(self, state, tangent: bool = True) -> tuple[NDArray, NDArray | None]:
        """Internal force ``(E, nd)`` and, if ``tangent``, the tangent ``(E, nd, nd)``.

        What Newton calls: a family whose force and tangent share kinematics overrides it to
        compute them once (the beams do).
        """
        return self.internal_force(state), self.tangent(state) if tangent else None

    def tangent(self, state) -> NDArray:
        """Material plus geometric tangent."""
        return self.material_tangent(state) + self.geometric_stiffness(state, self.stress(state))

    def lumped_inertia(self, state) -> tuple[NDArray, NDArray]:
        """Each element's lumped inertia at its nodes, for :class:`fem.inertia.nodal.NodalInertia`.

        ``m (E, nen)`` translational masses and ``J (E, nen, 3, 3)`` rotary inertias in the
        global axes at the reference (2D: about z only), read from the diagonal node blocks of the
        lumped ``mass``; a family with another inertia overrides it (or brings its own inertia
        group).
        """
        Me = self.mass(state, lumped=True)
        E, ndn, names = len(self), self.ndn, self.dof_names
        m = np.zeros((E, self.nen))
        J = np.zeros((E, self.nen, 3, 3))
        trans = [k for k, d in enumerate(names) if d.startswith("u")]
        rot = [(k, "xyz".index(d[1])) for k, d in enumerate(names) if d.startswith("r")]
        for a in range(self.nen):
            o = a * ndn
            if trans:
                m[:, a] = Me[:, o + trans[0], o + trans[0]]
            for ki, i in rot:
                for kj, j in rot:
                    J[:, a, i, j] = Me[:, o + ki, o + kj]
        return m, J

    def outputs(self, state) -> dict[str, NDArray]:
        """Generalized stresses by name, ``{name: (E,)}``."""
        s = self.stress(state)
        return {n: s[:, i] for i, n in enumerate(self.stress_names)}

    def results(self, state) -> tuple[dict[str, NDArray], NodalParts | None]:
        """``(outputs(state), NodalParts)`` of one evaluation (with ``"nodal_outputs"``).

        The parts are None when the group gives no nodal fields.
        """
        raise NotImplementedError(f"{self.type_name} groups have no nodal outputs")

    def properties(self) -> dict[str, NDArray]:
        """Per-element data written to results files, ``{name: (E,)}``."""
        return {}

    def history_fields(self) -> dict[str, tuple[int, ...]]:
        """``{name: shape}``: the energy-conserving scheme's history of the group.

        What :meth:`conserving_start` gives and ``conserving`` carries from step to step, kept
        in ``State.history[<group name>]`` (:meth:`fem.system.System.reference_state` creates
        it). None without the capability ``"energy_conserving"`` or where the group has no such
        force (a beam with offsets).
        """
        if "energy_conserving" not in self.capabilities:
            return {}
        from fem.errors import ModelError
        from fem.state import State

        reference = State.reference(self.dim, int(self.conn.max(initial=-1)) + 1)
        try:
            start = self.conserving_start(reference)
        except ModelError:
            return {}
        return {name: np.shape(value) for name, value in start.items()}

    def options(self) -> dict[str, str]:
        """The group's deck options written to results files (formulation, theory, ...)."""
        return {}


def _cut(value, idx: NDArray, n: int, memo: dict):
    """``value`` with every array of first axis ``n`` cut to ``idx`` (:meth:`ElementGroup.take`).

    Recurses into dicts, lists, tuples (named ones too) and objects of ``fem``'s own classes
    (copied); anything else is shared.
    """
    if isinstance(value, np.ndarray):
        return value[idx] if value.ndim and value.shape[0] == n else value
    key = id(value)
    if key in memo:
        return memo[key]
    if isinstance(value, dict):
        out = {k: _cut(v, idx, n, memo) for k, v in value.items()}
    elif isinstance(value, tuple) and hasattr(value, "_fields"):
        out = type(value)(*(_cut(v, idx, n, memo) for v in value))
    elif isinstance(value, (list, tuple)):
        out = type(value)(_cut(v, idx, n, memo) for v in value)
    elif type(value).__module__.startswith("fem.") and hasattr(value, "__dict__") and not \
            isinstance(value, type):
        out = copy.copy(value)
        memo[key] = out
        out.__dict__.update({k: _cut(v, idx, n, memo) for k, v in vars(value).items()})
        return out
    else:
        return value
    memo[key] = out
    return out


def require(groups, capability: str, where: str, asked: str) -> None:
    """Raise a deck error if a group lacks ``capability`` (``asked``: what asked for it).

    The message names the group, its family and what it can do, e.g. ``element group 'ties'
    (cable) cannot do an energy-conserving force, asked by integrator = "energy_conserving";
    it can do: internal force and tangent (static steps)``.
    """
    for g in groups:
        if capability not in g.capabilities:
            can = "; ".join(CAPABILITIES[c] for c in CAPABILITIES if c in g.capabilities)
            raise DeckError(where, f"element group '{g.name}' ({g.type_name}) cannot do "
                            f"{CAPABILITIES[capability]}, asked by {asked}; it can do: {can}")


def unit(v: NDArray) -> tuple[NDArray, NDArray]:
    """Unit vectors and lengths of ``v (..., 3)``."""
    length = np.linalg.norm(v, axis=-1)
    return v / length[..., None], length


def outer(a: NDArray, b: NDArray) -> NDArray:
    """Batched outer product ``a b^T``."""
    return np.einsum("...i,...j->...ij", a, b)


def spread_matrix(k: NDArray, nen: int = 2) -> NDArray:
    """(E, nd, nd) ``B^T k B`` of a block ``k (E, m, m)`` on node b's motion minus node a's.

    ``[[k, -k], [-k, k]]`` for two-node elements (bars, spring-dampers, sphere pairs); ``k``
    itself for one node against the ground (``nen = 1``).
    """
    return k if nen == 1 else np.block([[k, -k], [-k, k]])


class EvaluatedGroup(ElementGroup):
    """An element group whose :meth:`evaluate` gives its force and tangent from one kinematics.

    The force elements and contacts (:mod:`fem.elements.force`, :mod:`fem.elements.contact`)
    compute both at once; their internal force and (material) tangent are read from it.
    """

    def internal_force(self, state) -> NDArray:
        """(E, nd) the forces on the nodes (resisting)."""
        return self.evaluate(state, tangent=False)[0]

    def tangent(self, state) -> NDArray:
        """(E, nd, nd) the tangent :meth:`evaluate` gives."""
        return self.evaluate(state)[1]

    def material_tangent(self, state) -> NDArray:
        """The tangent: these groups have no separate geometric stiffness."""
        return self.tangent(state)
