"""What the ParaView files draw: the model's nodes and cells, and its mechanism as a mechanism.

One unstructured grid (:mod:`fem.io.paraview`): its points are the model's nodes (first, in node
order) and then the *drawn points* of the parts that are not elements; its cells are the element
groups' cells (in group order, :func:`element_topology`) and then the parts' cells:

* **rigid bodies** (:mod:`fem.elements.rigid_body`): each body as its shape (the deck's
  ``shape``: by default the box of its equivalent inertia, else a box, cylinder or sphere of the
  given size), centred at its node (the centre of mass) along its axes (the box of inertia along
  the principal axes), and its frame: a line from the node along each of its axes (x, y, z; the
  global axes at the reference), out of the shape by a fifth of its size;
* **joints** (:mod:`fem.constraints.joint`) and **ties**: the joint point of each item twice, as
  the point of its first node and as that of its second (``P = X_a + c_a = X_b + c_b``; they
  part where a joint slides), a cell at the first (the joint's cell data), a short line through
  it along the joint axis (revolute, cylindrical, prismatic, inline, the planar joint's normal;
  the universal joint's two axes, one on each node), and the *arms*, lines from each node to its
  joint point (so a body drawn by its centre reaches its joints);
* **elements drawn at body points** (:attr:`fem.elements.base.ElementGroup.drawn_offsets`:
  spring-dampers with ``body_points``): their cells join the attachment points, carried by the
  nodes, and an *arm* (kind ``element_arm``) joins each node to its point. A grounded one is a
  point cell at its body point (the ground point is not drawn);
* **co-rotational superelements**: their component's nodes at their recovered positions, and a
  cell at each interface node of every superelement; a 3D one draws its component's mesh (the
  beams' lines, the shells' triangles and quads of its file's ``/component/cells``) on those
  nodes, so that its recovered configuration ``y_j = x_a + R_a c_j`` is seen whole.

Every drawn point follows one node rigidly: ``x_p = x_c + R_c (X_p - X_c)`` (its *carrier* ``c``:
the body's node, a joint's first or second node), so that its displacement and velocity are
those of that motion (:meth:`Drawing.carried`) and one *Warp By Vector* moves everything; a
superelement's recovered nodes follow their own displacements. Rotations are the nodes'.

The cell arrays ``part`` (the index in :attr:`Drawing.parts`: the element groups, then the
constraint groups) and ``kind`` (:data:`KINDS`) say what each cell is, so that ParaView's
*Threshold* picks a group, the bodies or the joints.

Cells are written as XDMF names them (:data:`XDMF_CELLS`): one uniform topology when all cells
have one type, else XDMF's ``Mixed`` list, in which every cell is its type's number, the node
count for polylines (always 2) and its nodes. A single-node cell (a grounded spring, a body's
node, a joint point) is a ``Polyvertex`` in a uniform topology and, in a ``Mixed`` one, a line
from the node to itself: in a ``Mixed`` list ParaView's Xdmf3 reader wants a polyvertex's node
count and meshio's reader wants none, so no polyvertex can be read by both.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from fem import rotations as so3

# meshio / fem cell type -> XDMF topology type, nodes per cell, number in a Mixed topology
XDMF_CELLS = {"vertex": ("Polyvertex", 1, 0x1), "line": ("Polyline", 2, 0x2),
              "triangle": ("Triangle", 3, 0x4), "quad": ("Quadrilateral", 4, 0x5),
              "tetra": ("Tetrahedron", 4, 0x6), "hexahedron": ("Hexahedron", 8, 0x9)}

#: the cell array ``kind``: what each drawn cell is
KINDS = {"element": 0, "body": 1, "body_x": 2, "body_y": 3, "body_z": 4, "joint": 5,
         "joint_axis": 6, "joint_arm": 7, "superelement": 8, "element_arm": 9}

SEGMENTS = 12               # the points around a drawn cylinder, sphere or disc
AXIS_SHARE = 0.08           # a joint axis is drawn this share of the model's extent each side
FRAME_SHARE = 0.2           # a body's axes reach this share of its size beyond its shape
THIN_SHARE = 0.05           # a box side of zero inertia is drawn this share of the largest side
POINT_SHARE = 0.02          # a body without inertia is a cube this share of the model's extent


@dataclass(frozen=True)
class Topology:
    """Cells as the XDMF topology names them.

    ``kind`` is the XDMF topology type (``"Polyline"``, ..., ``"Mixed"``), ``cells`` the array
    (``(C, nen)`` node indices, or the flat Mixed list) and ``count`` the number of cells.
    """

    kind: str
    cells: NDArray
    count: int

    @property
    def nodes_per_element(self) -> int | None:
        """Nodes of each cell of a uniform topology (None for Mixed)."""
        return None if self.kind == "Mixed" else self.cells.shape[1]


def drawn_groups(model) -> list:
    """The element groups drawn by their cells: every group of a cell type XDMF has."""
    return [g for g in model.groups if g.cell_type in XDMF_CELLS]


def encode(blocks: list[tuple[str, NDArray]]) -> Topology:
    """The XDMF topology of cell ``blocks`` ``[(cell type, (E, nen) nodes)]``, in their order.

    One type: uniform. Vertices and lines only: uniform ``Polyline``, a vertex as a line from
    its node to itself. Else ``Mixed`` (see the module docstring).
    """
    blocks = [(t, np.asarray(c, dtype=np.int64).reshape(len(c), -1)) for t, c in blocks]
    count = sum(len(c) for _, c in blocks)
    types = {t for t, c in blocks if len(c)}
    if len(types) <= 1:
        t = types.pop() if types else "line"
        kind, nen, _ = XDMF_CELLS[t]
        cells = np.concatenate([c for _, c in blocks if len(c)] or [np.zeros((0, nen),
                                                                           dtype=np.int64)])
        return Topology(kind, cells, count)
    if types <= {"vertex", "line"}:
        lines = [np.repeat(c, 2, axis=1) if t == "vertex" else c for t, c in blocks]
        return Topology("Polyline", np.concatenate(lines), count)
    parts = []
    for t, c in blocks:                     # per block, vectorized over its cells
        if t == "vertex":
            t, c = "line", np.repeat(c, 2, axis=1)
        _, nen, code = XDMF_CELLS[t]
        head = [np.full(len(c), code)] + ([np.full(len(c), nen)] if t == "line" else [])
        parts.append(np.column_stack(head + [c]).ravel())
    return Topology("Mixed", np.concatenate(parts).astype(np.int64), count)


def element_topology(model) -> tuple[Topology, tuple]:
    """The cells of every drawn element group (in group order) and the groups drawn."""
    groups = drawn_groups(model)
    return encode([(g.cell_type, g.cells) for g in groups]), tuple(groups)


# --- shapes ---------------------------------------------------------------------------------------
def _ring(z: float) -> NDArray:
    """(SEGMENTS, 3) points of a circle of diameter 1 at height ``z``."""
    a = 2 * np.pi * np.arange(SEGMENTS) / SEGMENTS
    return np.column_stack([0.5 * np.cos(a), 0.5 * np.sin(a), np.full(SEGMENTS, z)])


def _template(shape: str, dim: int) -> tuple[NDArray, list[tuple[str, NDArray]]]:
    """A shape of unit size about the origin: its points ``(p, 3)`` and cell blocks.

    Box: the unit cube (hexahedron; 2D: the unit square, quad). Cylinder: diameter 1, length 1
    along z, its side quads and its end fans of triangles (2D: a disc). Sphere: diameter 1,
    latitude bands of quads and polar fans of triangles (2D: a disc).
    """
    k = SEGMENTS
    j = np.arange(k)
    if shape == "box" and dim == 3:
        c = np.array([[x, y, z] for z in (-.5, .5) for y in (-.5, .5) for x in (-.5, .5)])
        return c[[0, 1, 3, 2, 4, 5, 7, 6]], [("hexahedron", np.arange(8)[None])]
    if shape == "box":
        return (np.array([[-.5, -.5, 0], [.5, -.5, 0], [.5, .5, 0], [-.5, .5, 0]]),
                [("quad", np.arange(4)[None])])
    if dim == 2:                                           # a disc: rim and centre
        pts = np.vstack([_ring(0.0), [[0.0, 0.0, 0.0]]])
        return pts, [("triangle", np.column_stack([np.full(k, k), j, (j + 1) % k]))]
    if shape == "cylinder":
        pts = np.vstack([_ring(-.5), _ring(.5), [[0, 0, -.5], [0, 0, .5]]])
        side = np.column_stack([j, (j + 1) % k, k + (j + 1) % k, k + j])
        ends = np.vstack([np.column_stack([np.full(k, 2 * k), (j + 1) % k, j]),
                          np.column_stack([np.full(k, 2 * k + 1), k + j, k + (j + 1) % k])])
        return pts, [("quad", side), ("triangle", ends)]
    bands = SEGMENTS // 2                                  # a sphere
    lat = np.pi * np.arange(1, bands) / bands              # the rings' polar angles
    rings = np.vstack([_ring(0.0)[:, :2] * np.sin(t) for t in lat])
    pts = np.vstack([np.column_stack([rings, 0.5 * np.repeat(np.cos(lat), k)]),
                     [[0, 0, .5], [0, 0, -.5]]])
    r = np.arange(bands - 2)[:, None] * k
    quads = np.stack([r + j, r + (j + 1) % k, r + k + (j + 1) % k, r + k + j],
                     axis=-1).reshape(-1, 4)
    n_ring = (bands - 1) * k
    last = n_ring - k
    caps = np.vstack([np.column_stack([np.full(k, n_ring), j, (j + 1) % k]),
                      np.column_stack([np.full(k, n_ring + 1), last + (j + 1) % k, last + j])])
    return pts, [("quad", quads), ("triangle", caps)]


def _turning(axis: NDArray) -> NDArray:
    """(3, 3) a rotation taking the z axis to the unit vector ``axis``."""
    z = np.array([0.0, 0.0, 1.0])
    v, c = np.cross(z, axis), float(z @ axis)
    if np.linalg.norm(v) < 1e-12:
        return np.eye(3) if c > 0 else np.diag([1.0, -1.0, -1.0])
    K = so3.hat(v)
    return np.eye(3) + K + K @ K / (1 + c)


def _box_axes(a: NDArray) -> NDArray:
    """(3, 3) a box's axes: ``a``, then ``b`` normal to it and to global z, ``c = a x b``.

    ``b`` is normal to global y instead when ``a`` is (nearly) along z.
    """
    up = np.array([0.0, 0.0, 1.0]) if abs(a[2]) < 0.9 else np.array([0.0, 1.0, 0.0])
    b = np.cross(up, a)
    b /= np.linalg.norm(b)
    return np.column_stack([a, b, np.cross(a, b)])


def body_shapes(group, dim: int, extent: float) -> tuple[str, NDArray, NDArray]:
    """The shape of a group's bodies: its name, sizes ``(E, 3)`` and axes ``(E, 3, 3)``.

    The deck's ``shape`` and ``size`` (:mod:`fem.elements.rigid_body_deck`), or by default the
    box of equal mass and inertia along the principal axes: side ``a_1`` with ``a_1^2 = 6 (J_2
    + J_3 - J_1) / m`` (2D: a square of ``Izz = m a^2 / 6``); a side of zero (a rod) is drawn
    :data:`THIN_SHARE` of the largest side, a body without inertia as a cube of
    :data:`POINT_SHARE` of the model's extent.
    """
    E = len(group)
    shape, size, axis = group.drawing
    if shape != "inertia":
        sizes = np.zeros(3)
        if shape == "box":
            sizes[:len(size)] = size
        elif shape == "cylinder":
            sizes[:] = (size[0], size[0], size[1] if len(size) > 1 else 0.0)
        else:
            sizes[:] = size[0]
        a = np.asarray(axis, dtype=float) / np.linalg.norm(axis)
        Q = _turning(a) if shape == "cylinder" and dim == 3 else \
            _box_axes(a) if shape == "box" else np.eye(3)
        return shape, np.broadcast_to(sizes, (E, 3)).copy(), np.broadcast_to(Q, (E, 3, 3)).copy()
    m = group.m
    if dim == 2:
        a = np.sqrt(np.maximum(6.0 * group.J[:, 2, 2] / m, 0.0))
        sizes = np.column_stack([a, a, np.zeros(E)])
        Q = np.broadcast_to(np.eye(3), (E, 3, 3)).copy()
    else:
        w, Q = np.linalg.eigh(group.J)                       # principal moments, axes
        total = w.sum(axis=1, keepdims=True)
        sizes = np.sqrt(np.maximum(6.0 * (total - 2.0 * w) / m[:, None], 0.0))
    big = sizes.max(axis=1, keepdims=True)
    sizes = np.where(big > 0, np.maximum(sizes, THIN_SHARE * big), POINT_SHARE * extent)
    if dim == 2:
        sizes[:, 2] = 0.0
    return "box", sizes, Q


# --- the drawing ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Span:
    """Where a group's items are in the drawing: ``first`` point and ``first_cell`` of ``count``."""

    first: int
    first_cell: int
    count: int


@dataclass(frozen=True)
class Drawing:
    """The drawn grid of a model (see the module docstring).

    ``points (N, 3)`` reference coordinates: the ``n`` nodes, then ``m`` rigidly carried points
    (``carrier (m,)`` node indices, ``offset (m, 3)`` their reference offsets ``X_p - X_c``),
    then the recovered nodes of superelements. ``topology``: all cells; ``part``, ``kind``
    ``(C,)`` per cell; ``parts``: the names of the parts (``"<type> <name>"``).
    ``elements``: each drawn element group's :class:`Span` (its cells); ``constraints``: each
    constraint group's (its first nodes' joint points and their cells); ``recovered``: each
    co-rotational superelement's recovered nodes (points).
    """

    points: NDArray
    n_nodes: int
    carrier: NDArray
    offset: NDArray
    topology: Topology
    part: NDArray
    kind: NDArray
    parts: tuple[str, ...]
    elements: dict = field(default_factory=dict)
    constraints: dict = field(default_factory=dict)
    recovered: dict = field(default_factory=dict)

    @property
    def n_points(self) -> int:
        """``N``: every point drawn."""
        return len(self.points)

    @property
    def n_carried(self) -> int:
        """``m``: the rigidly carried points."""
        return len(self.carrier)

    def carried(self, values: dict, dim: int) -> dict[str, NDArray]:
        """The motion of the carried points in a frame's ``values`` (the step's datasets).

        ``displacement`` and, when ``values`` has velocities, ``velocity``, ``(m, 3)`` each:
        ``u_c + R_c r - r`` and ``v_c + w_c x R_c r``, with ``r`` the point's offset and
        ``w_c`` its carrier's spatial angular velocity.
        """
        c, r = self.carrier, self.offset
        R = so3.quat_to_matrix(np.asarray(values["rotation"], dtype=float)[c])
        arm = np.einsum("pij,pj->pi", R, r)
        out = {"displacement": np.asarray(values["displacement"])[c] + arm - r}
        if "velocity" in values:
            v, w = _linear_angular(values["velocity"], c, dim)
            out["velocity"] = v + np.cross(w, arm)
        return out


def _linear_angular(rates: NDArray, nodes: NDArray, dim: int) -> tuple[NDArray, NDArray]:
    """``(k, 3)`` linear and angular parts of nodal rates ``(n, nslots)`` at ``nodes``."""
    x = np.asarray(rates, dtype=float)[nodes]
    lin, ang = np.zeros((len(nodes), 3)), np.zeros((len(nodes), 3))
    lin[:, :dim] = x[:, :dim]
    if dim == 2:
        ang[:, 2] = x[:, 2]
    else:
        ang[:] = x[:, 3:6]
    return lin, ang


class _Builder:
    """Collects carried points and cell blocks in order."""

    def __init__(self, X: NDArray):
        self.X = np.asarray(X, dtype=float)
        self.points = [self.X]
        self.carrier, self.offset = [], []
        self.blocks, self.part, self.kind = [], [], []
        self.n = len(self.X)

    @property
    def size(self) -> int:
        return self.n + sum(len(c) for c in self.carrier)

    def carry(self, nodes: NDArray, P: NDArray) -> NDArray:
        """Points at ``P (k, 3)`` carried by ``nodes (k,)``; returns their indices."""
        first = self.size
        nodes = np.asarray(nodes, dtype=np.int64)
        self.carrier.append(nodes)
        self.offset.append(np.asarray(P, dtype=float) - self.X[nodes])
        self.points.append(np.asarray(P, dtype=float))
        return first + np.arange(len(nodes))

    def cells(self, cell_type: str, conn: NDArray, part: int, kind) -> None:
        conn = np.asarray(conn, dtype=np.int64).reshape(len(conn), -1)
        self.blocks.append((cell_type, conn))
        self.part.append(np.full(len(conn), part))
        self.kind.append(np.broadcast_to(kind, (len(conn),)))

    @property
    def cell_count(self) -> int:
        return sum(len(c) for _, c in self.blocks)


def _extent(model) -> float:
    """The diagonal of the box around the nodes and joint points (1 for a single point)."""
    from fem.constraints.joint import Joint

    pts = [model.X]
    for c in model.constraints:
        if isinstance(c, Joint):
            pts.append(model.X[c.conn[:, 0]] + c.offsets[:, 0])
    pts = np.vstack(pts)
    d = float(np.linalg.norm(pts.max(axis=0) - pts.min(axis=0)))
    return d if d > 0 else 1.0


#: the axes each joint kind is drawn with: (frame column, on which node: 0 first, 1 second)
JOINT_AXES = {3: {"revolute": ((2, 0),), "cylindrical": ((2, 0),), "prismatic": ((2, 0),),
                  "planar": ((2, 0),), "inline": ((2, 0),), "universal": ((0, 0), (1, 1))},
              2: {"revolute": ((2, 0),), "prismatic": ((0, 0),), "inline": ((0, 0),)}}


def drawing(model) -> Drawing:
    """The drawing of ``model`` (see the module docstring)."""
    b = _Builder(model.X)
    extent = _extent(model)
    parts = [f"{g.type_name} {g.name}" for g in model.groups] \
        + [f"{c.type_name} {c.name}" for c in model.constraints]
    part_of = {g.name: i for i, g in enumerate(model.groups)}
    elements = {}
    attached = []                               # (group, nodes, their points) drawn at points
    for g in drawn_groups(model):
        elements[g.name] = Span(0, b.cell_count, len(g.cells))
        cells = g.cells
        if g.drawn_offsets is not None:
            nodes = g.conn.ravel()
            cells = b.carry(nodes, model.X[nodes] + g.drawn_offsets.reshape(-1, 3))
            attached.append((g, nodes, cells))
            cells = cells.reshape(g.conn.shape)
        b.cells(g.cell_type, cells, part_of[g.name], KINDS["element"])
    for g, nodes, points in attached:                       # arms: node to its point
        arm = np.linalg.norm(g.drawn_offsets.reshape(-1, 3), axis=1) > 1e-12 * extent
        if np.any(arm):
            b.cells("line", np.column_stack([nodes[arm], points[arm]]), part_of[g.name],
                    KINDS["element_arm"])
    _draw_bodies(b, model, part_of, extent)
    constraints = _draw_constraints(b, model, extent)
    recovered, extra_points = _draw_superelements(b, model, part_of)
    points = np.vstack(b.points + extra_points)
    topo = encode(b.blocks)
    return Drawing(points=points, n_nodes=b.n,
                   carrier=np.concatenate(b.carrier) if b.carrier else np.zeros(0, np.int64),
                   offset=np.vstack(b.offset) if b.offset else np.zeros((0, 3)),
                   topology=topo,
                   part=np.concatenate(b.part) if b.part else np.zeros(0, np.int64),
                   kind=np.concatenate(b.kind) if b.kind else np.zeros(0, np.int64),
                   parts=tuple(parts), elements=elements, constraints=constraints,
                   recovered=recovered)


def _draw_bodies(b: _Builder, model, part_of: dict, extent: float) -> None:
    """The rigid bodies' shapes and their frames' axes, carried by their nodes."""
    from fem.elements.rigid_body import RigidBody

    dim = model.dim
    for g in model.groups:                                  # bodies: shapes and frames
        if not isinstance(g, RigidBody):
            continue
        shape, sizes, Q = body_shapes(g, dim, extent)
        pts, blocks = _template(shape, dim)
        node = g.conn[:, 0]
        X = model.X[node]
        P = X[:, None] + np.einsum("eij,epj->epi", Q, sizes[:, None] * pts[None])
        idx = b.carry(np.repeat(node, len(pts)), P.reshape(-1, 3)).reshape(len(g), len(pts))
        for t, conn in blocks:
            cells = idx[:, conn]                            # (E, cells, nen)
            b.cells(t, cells.reshape(-1, conn.shape[1]), part_of[g.name], KINDS["body"])
        half = 0.5 * np.einsum("eij,ej->ei", np.abs(Q), sizes)    # along the body's axes
        reach = half + FRAME_SHARE * sizes.max(axis=1, keepdims=True)
        for k in range(dim):                                # the body's axes x, y (, z)
            tips = b.carry(node, X + reach[:, k:k + 1] * np.eye(3)[k])
            b.cells("line", np.column_stack([node, tips]), part_of[g.name],
                    KINDS[("body_x", "body_y", "body_z")[k]])


def _draw_constraints(b: _Builder, model, extent: float) -> dict:
    """The joints' and ties' points, axes and arms; their spans by name."""
    from fem.constraints.joint import Joint

    dim = model.dim
    constraints = {}
    for ci, c in enumerate(model.constraints):
        part = len(model.groups) + ci
        a, bb = c.conn[:, 0], c.conn[:, 1]
        if isinstance(c, Joint):
            off, F = c.offsets, c.frames
        else:                                               # ties: coincident nodes
            off, F = np.zeros((len(c), 2, 3)), np.broadcast_to(np.eye(3), (len(c), 3, 3))
        Pa = b.carry(a, model.X[a] + off[:, 0])
        Pb = b.carry(bb, model.X[bb] + off[:, 1])
        constraints[c.name] = Span(int(Pa[0]) if len(c) else b.size, b.cell_count, len(c))
        b.cells("vertex", Pa[:, None], part, KINDS["joint"])
        for col, side in JOINT_AXES[dim].get(c.kind, ()) if isinstance(c, Joint) else ():
            nodes = a if side == 0 else bb
            d = AXIS_SHARE * extent * F[:, :, col]
            base = model.X[nodes] + off[:, side]
            ends = b.carry(np.concatenate([nodes, nodes]), np.vstack([base - d, base + d]))
            b.cells("line", ends.reshape(2, -1).T, part, KINDS["joint_axis"])
        for nodes, P, side in ((a, Pa, 0), (bb, Pb, 1)):
            arm = np.linalg.norm(off[:, side], axis=1) > 1e-12 * extent
            if np.any(arm):
                b.cells("line", np.column_stack([nodes[arm], P[arm]]), part, KINDS["joint_arm"])
    return constraints


def _draw_superelements(b: _Builder, model, part_of: dict) -> tuple[dict, list]:
    """The superelements' nodes, and the recovered nodes of co-rotational ones (extra points).

    A 3D co-rotational superelement whose file holds its component's cells
    (``/component/cells``) draws them on its recovered nodes (:func:`_component_cells`); the
    others draw their recovered nodes as vertices.
    """
    from fem.elements.superelement import Superelement
    from fem.elements.superelement.corot import CorotSuperelement
    from fem.elements.superelement.corot3d import CorotSuperelement3D

    recovered = {}
    extra_points = []
    first = b.size
    for g in model.groups:                                  # superelements
        if not isinstance(g, Superelement):
            continue
        nodes = g.conn[0]
        b.cells("vertex", nodes[:, None], part_of[g.name], KINDS["superelement"])
        if isinstance(g, CorotSuperelement | CorotSuperelement3D):
            Xc = np.asarray(g.Xc, dtype=float)
            idx = first + sum(len(p) for p in extra_points) + np.arange(len(Xc))
            recovered[g.name] = Span(int(idx[0]), b.cell_count, len(Xc))
            extra_points.append(Xc)
            blocks = _component_cells(g) if isinstance(g, CorotSuperelement3D) else None
            for t, conn in blocks or [("vertex", np.arange(len(Xc))[:, None])]:
                b.cells(t, idx[conn], part_of[g.name], KINDS["superelement"])
    return recovered, extra_points


def _component_cells(g) -> list | None:
    """``[(cell type, (E, nen) positions in the component's nodes)]`` of a superelement's file.

    None when the file holds no cells (written before issue 33's recovery): then its nodes.
    Nodes in no cell (a point mass of the component) are drawn as vertices.
    """
    cells = g.data.cells
    if not cells:
        return None
    blocks = [(t, c) for t, c in cells.items() if t in XDMF_CELLS and len(c)]
    used = np.zeros(len(g.Xc), dtype=bool)
    for _, c in blocks:
        used[c.ravel()] = True
    if not used.all():
        blocks.append(("vertex", np.flatnonzero(~used)[:, None]))
    return blocks
