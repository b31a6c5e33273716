"""The deck entries of force elements: the ``[[connectors]]`` table.

One entry is one group of one ``type`` (:data:`TYPES`), its elements between the node ``pairs``
or between the nodes ``ground`` and the ground. The laws are linear (``stiffness``,
``damping``, with ``preload``) or tables (``spring_table`` ``[[deflection, force], ...]``,
``damper_table`` ``[[rate, force], ...]``, :mod:`fem.elements.force.laws`).
"""

from __future__ import annotations

import numpy as np

from fem.elements.force.laws import Curve
from fem.errors import DeckError
from fem.io.keys import Key, shown
from fem.io.keys.entries import Entry, lowest_eigenvalue, vector
from fem.io.keys.groups import GroupInputs, GroupPiece, node_pairs

TABLE = "connectors"
MAX_TABLE = 10_000       # rows of a law's table

PAIRS = Key("pairs", "matrix", None, "`[[node_a, node_b], ...]`: elements between two nodes (give "
            "pairs or ground)")
GROUND = Key("ground", "nodes", None, "node id, list of ids or node-set name: elements between "
             "each node and the ground")
STIFFNESS = Key("stiffness", "float", None, "linear spring constant (force/length; rotational: "
                "moment/rad)", nonnegative=True)
DAMPING = Key("damping", "float", None, "linear damping constant (force s/length; rotational: "
              "moment s/rad)", nonnegative=True)
SPRING_TABLE = Key("spring_table", "matrix", None, "`[[deflection, force], ...]`: the spring's "
                   "force-deflection law (deflection strictly increasing, linear beyond the "
                   "ends; instead of stiffness and preload)")
DAMPER_TABLE = Key("damper_table", "matrix", None, "`[[rate, force], ...]`: the damper's "
                   "force-velocity law (rate strictly increasing through 0, force "
                   "nondecreasing and 0 at rate 0; instead of damping)")


def pairs_or_ground(e: Entry, inputs: GroupInputs) -> tuple[np.ndarray, bool]:
    """``(conn, grounded)``: ``(E, 2)`` pairs of distinct nodes, or ``(E, 1)`` grounded nodes."""
    v, w = e.values, e.where
    if (v["pairs"] is None) == (v["ground"] is None):
        raise DeckError(w, "expected pairs = [[node_a, node_b], ...] (elements between nodes) or "
                        "ground = [nodes] (elements to the ground), got "
                        f"{'both' if v['pairs'] is not None else 'neither'}")
    if v["pairs"] is not None:
        conn = node_pairs(inputs.nodes, v["pairs"], f"{w}.pairs", "[node_a, node_b] pair")
        same = np.flatnonzero(conn[:, 0] == conn[:, 1])
        if len(same):
            k = int(same[0])
            raise DeckError(f"{w}.pairs[{k}]", f"expected two different nodes, got node "
                            f"{inputs.nodes.ids[conn[k, 0]]} twice")
        return conn, False
    return np.atleast_1d(inputs.nodes.indices(v["ground"], f"{w}.ground"))[:, None], True


def spring_law(v: dict, where: str, preload: float = 0.0) -> Curve | None:
    """The spring's curve of ``stiffness`` (and ``preload``) or ``spring_table``; or None."""
    if v["spring_table"] is not None:
        if v["stiffness"] is not None or preload:
            raise DeckError(f"{where}.spring_table", "give stiffness"
                            + (" (and preload)" if "preload" in v else "")
                            + " or spring_table, not both")
        return Curve.table(table(v["spring_table"], f"{where}.spring_table"))
    if v["stiffness"] is None and not preload:
        return None
    return Curve.linear(v["stiffness"] or 0.0, preload)


def damper_law(v: dict, where: str) -> Curve | None:
    """The damper's curve of ``damping`` or ``damper_table``; or None."""
    if v["damper_table"] is not None:
        if v["damping"] is not None:
            raise DeckError(f"{where}.damper_table", "give damping or damper_table, not both")
        rows = table(v["damper_table"], f"{where}.damper_table")
        curve = Curve.table(rows)
        if np.any(np.diff(curve.F) < 0):
            k = int(np.flatnonzero(np.diff(curve.F) < 0)[0])
            raise DeckError(f"{where}.damper_table", f"expected a nondecreasing force (a damper "
                            f"only takes energy), got {curve.F[k]!r} then {curve.F[k + 1]!r} "
                            f"at rows {k + 1} and {k + 2}")
        if not curve.x[0] <= 0.0 <= curve.x[-1] or abs(float(curve(0.0)[0])) > 1e-12 * (
                np.abs(curve.F).max()):
            raise DeckError(f"{where}.damper_table", "expected a force of 0 at rate 0 (rates "
                            f"from below to above 0), got {float(curve(0.0)[0]):.6g} at 0 "
                            f"over rates [{curve.x[0]:g}, {curve.x[-1]:g}]")
        return curve
    if not v["damping"]:
        return None
    return Curve.linear(v["damping"])


def table(rows, where: str) -> list:
    """Rows ``[[x, F], ...]``: at least two, of two finite numbers, ``x`` strictly increasing."""
    if not isinstance(rows, list) or len(rows) < 2 or any(len(r) != 2 for r in rows):
        raise DeckError(where, f"expected at least two rows [x, F], got {shown(rows)}")
    if len(rows) > MAX_TABLE:
        raise DeckError(where, f"expected at most {MAX_TABLE} rows, got {len(rows)}")
    a = np.asarray(rows, dtype=float)
    if not np.all(np.isfinite(a)):
        raise DeckError(where, f"expected finite numbers, got {shown(rows)}")
    bad = np.flatnonzero(np.diff(a[:, 0]) <= 0)
    if len(bad):
        k = int(bad[0])
        raise DeckError(where, f"expected the first column strictly increasing, got "
                        f"{a[k, 0]!r} then {a[k + 1, 0]!r} at rows {k + 1} and {k + 2}")
    return rows


def ground_points(v: dict, conn: np.ndarray, inputs: GroupInputs, where: str) -> np.ndarray:
    """(E, 3) ``points``: one ground point per grounded node."""
    rows = v["points"]
    E = len(conn)
    if rows is None:
        raise DeckError(f"{where}.points", "required with ground: the ground point of each "
                        "node's element `[[x, y(, z)], ...]`")
    if len(rows) != E:
        raise DeckError(f"{where}.points", f"expected one point per node ({E}), got {len(rows)}")
    return np.array([vector(p, inputs.dim, f"{where}.points[{k}]", "coordinates")
                     for k, p in enumerate(rows)])


POINTS = Key("points", "matrix", None, "with ground: the ground point of each node's element "
             "`[[x, y(, z)], ...]`")
PRELOAD = Key("preload", "float", 0.0, "the spring's force at the free length (tension positive)")
FREE_LENGTH = Key("free_length", "float", None, "the spring's free length (default: each "
                  "element's reference length)", positive=True)


class FamilyDeck:
    """A force element family's deck entry (the attributes of a family deck module)."""

    TABLE = TABLE

    def __init__(self, plural: str, keys: list, build, not_used: dict | None = None):
        self.PLURAL = plural
        self.KEYS = keys
        self.NOT_USED = not_used or {}
        self.build = build


def _axial(e: Entry, inputs: GroupInputs) -> GroupPiece:
    """A group of axial spring-dampers from its validated deck entry."""
    from fem.elements.force.axial import SpringDamper

    v, w = e.values, e.where
    conn, grounded = pairs_or_ground(e, inputs)
    ground = ground_points(v, conn, inputs, w) if grounded else None
    if not grounded and v["points"] is not None:
        raise DeckError(f"{w}.points", "applies with ground, not with pairs")
    spring = spring_law(v, w, v["preload"])
    damper = damper_law(v, w)
    if spring is None and damper is None:
        raise DeckError(w, "expected a spring (stiffness, preload or spring_table) or a damper "
                        "(damping or damper_table), got neither")
    X = inputs.nodes.X
    offsets = None
    if v["body_points"] is not None:
        offsets = body_offsets(v["body_points"], conn, inputs, w, "ground" if grounded
                               else "pairs")
    P = X[conn] + (0.0 if offsets is None else offsets)
    d = (P[:, 0] - ground) if grounded else P[:, 1] - P[:, 0]
    l_ref = np.linalg.norm(d[:, :inputs.dim], axis=1)
    zero = np.flatnonzero(l_ref <= 1e-12 * max(float(np.abs(X).max(initial=0.0)), 1.0))
    if len(zero):
        k = int(zero[0])
        key = (f"{w}.body_points[{k}]" if offsets is not None else
               f"{w}.points[{k}]" if grounded else f"{w}.pairs[{k}]")
        raise DeckError(key, "expected two distinct points (the line of action of an axial "
                        "spring-damper is the line through them), got a zero length")
    if offsets is not None:
        from fem.elements.force.offset import BodySpringDamper

        group = BodySpringDamper(v["name"], conn, X, inputs.dim, spring, damper, offsets,
                                 free_length=v["free_length"], ground=ground)
    else:
        group = SpringDamper(v["name"], conn, X, inputs.dim, spring, damper,
                             free_length=v["free_length"], ground=ground)
    return GroupPiece(group, inputs.nodes)


BODY_POINTS = Key("body_points", "matrix", None, "the points where each element attaches to its "
                  "nodes' bodies (global coordinates at the reference; they turn with the nodes: "
                  "rigid bodies or beam nodes): with pairs `[[x_a, y_a(, z_a), x_b, y_b(, z_b)], "
                  "...]`, with ground `[[x, y(, z)], ...]` (the node's point); default: the "
                  "nodes")


def body_offsets(rows, conn: np.ndarray, inputs: GroupInputs, where: str,
                 key: str) -> np.ndarray:
    """(E, nen, 3) the offsets ``P - X`` of ``body_points`` from the nodes (checked)."""
    dim, E, nen = inputs.dim, len(conn), conn.shape[1]
    w = f"{where}.body_points"
    if len(rows) != E:
        raise DeckError(w, f"expected one row per element ({E}), got {len(rows)}")
    P = np.zeros((E, nen, 3))
    for k, r in enumerate(rows):
        if len(r) != nen * dim:
            what = ("x_a, y_a(, z_a), x_b, y_b(, z_b): both ends' points" if nen == 2
                    else "the node's point")
            raise DeckError(f"{w}[{k}]", f"expected {nen * dim} coordinates ({what}; model.dim "
                            f"= {dim}), got {len(r)}: {shown(r)}")
        P[k, :, :dim] = np.asarray(r, dtype=float).reshape(nen, dim)
    if not np.all(np.isfinite(P)):
        raise DeckError(w, f"expected finite coordinates, got {shown(rows)}")
    need_rotations(conn, inputs, where, key == "ground", "rigid bodies or beams with "
                   "body_points", "; its points could not turn with it")
    return P - inputs.nodes.X[conn]


def need_rotations(conn: np.ndarray, inputs: GroupInputs, where: str, grounded: bool,
                   what: str, why: str = "") -> None:
    """Refuse (DeckError naming the pair or ``ground``) a node that no beam or body turns."""
    rotations = np.zeros(len(inputs.nodes.X), dtype=bool)
    for g in inputs.before:
        if "rz" in getattr(g, "dof_names", ()):
            rotations[g.conn] = True
    loose = np.flatnonzero(~rotations[conn].all(axis=1))
    if len(loose):
        k = int(loose[0])
        node = next(int(n) for n in conn[k] if not rotations[n])
        raise DeckError(f"{where}.ground" if grounded else f"{where}.pairs[{k}]",
                        f"expected nodes of {what}, got node {inputs.nodes.ids[node]}, which has "
                        f"no rotations (no beam or body uses it{why})")


AXIAL = FamilyDeck("axial spring-dampers", [PAIRS, GROUND, POINTS, BODY_POINTS, STIFFNESS,
                                            DAMPING, PRELOAD, FREE_LENGTH, SPRING_TABLE,
                                            DAMPER_TABLE], _axial)


#: the [[joints]] keys of forces on a joint's coordinate (fem.io.build_joint_forces)
JOINT_FORCE_KEYS = [
    Key("coordinate", "str", None, "the coordinate the joint's forces act on: angle or slide "
        "(default: a revolute's angle, a prismatic's slide; a cylindrical joint names it)",
        choices=("angle", "slide")),
    Key("stiffness", "float", None, "a spring on the joint coordinate (moment/rad, "
        "force/length)", nonnegative=True),
    Key("free_coordinate", "float", 0.0, "the coordinate at which the spring is relaxed "
        "(rad or length, from the reference)"),
    Key("spring_table", "matrix", None, "`[[coordinate - free_coordinate, moment or force], "
        "...]`: a nonlinear spring instead of stiffness (first column strictly increasing)"),
    Key("damping", "float", None, "a damper on the coordinate's rate (moment s/rad, "
        "force s/length)", nonnegative=True),
    Key("damper_table", "matrix", None, "`[[rate, moment or force], ...]`: a nonlinear damper "
        "instead of damping (nondecreasing, 0 at rate 0)"),
    Key("friction", "float", 0.0, "regularized Coulomb friction: the constant friction moment "
        "or force (not from the reaction)", nonnegative=True),
    Key("friction_coefficient", "float", None, "friction from the joint's reaction: the "
        "coefficient mu (revolute: with pin_radius r, a friction moment mu r |R|, R the joint's "
        "force; prismatic: a friction force mu |N|, N the reaction normal to the slide); added "
        "to friction, regularized as it is", nonnegative=True),
    Key("pin_radius", "float", None, "revolute friction from the reaction: the pin radius r "
        "(required with friction_coefficient on a revolute joint)", positive=True),
    Key("velocity_scale", "float", None, "friction's regularization: below this rate the "
        "friction grows linearly with it (required with friction or friction_coefficient and "
        "the coulomb law)", positive=True),
    Key("friction_law", "str", "coulomb", "coulomb: regularized Coulomb friction (velocity_scale);"
        " stick_slip: an elasto-plastic (reset-integrator) friction that truly sticks up to a "
        "static limit (static_friction, static_coefficient) above the kinetic one (friction, "
        "friction_coefficient), through a stiff bristle (stick_stiffness)",
        choices=("coulomb", "stick_slip")),
    Key("static_friction", "float", None, "stick_slip: the static friction moment or force "
        "(default: friction; not below it)", nonnegative=True),
    Key("static_coefficient", "float", None, "stick_slip: the static coefficient mu_s of friction "
        "from the reaction (default: friction_coefficient; not below it)", nonnegative=True),
    Key("stick_stiffness", "float", None, "stick_slip: the stiffness of the stuck joint (moment/"
        "rad, force/length; required): a stuck joint deflects by the friction over it",
        positive=True),
    Key("stick_damping", "float", 0.0, "stick_slip: the stuck joint's damping (moment s/rad, "
        "force s/length): it takes the energy of the rate that sticking stops (about 2 "
        "sqrt(stick_stiffness m), m the mass it stops: the stuck joint does not ring)",
        nonnegative=True),
    Key("limits", "vector", None, "`[min, max]` stops on the coordinate: one-sided penalty "
        "contacts beyond them"),
    Key("limit_stiffness", "float", None, "the stops' penalty stiffness (required with limits)",
        positive=True),
    Key("effort", "str", None, "a [[functions]] name: an applied moment (revolute) or force "
        "(prismatic) on the coordinate, positive pushing it up"),
    Key("proportional_gain", "float", None, "PD controller on the coordinate: K_p (with "
        "setpoint)", nonnegative=True),
    Key("derivative_gain", "float", None, "PD controller: K_d", nonnegative=True),
    Key("setpoint", "str", None, "PD controller: a [[functions]] name, the coordinate's "
        "setpoint r(t) (its derivative is the rate's setpoint)"),
]


AXIS = Key("axis", "vector", None, "rotational, 3D: the axis (in the first node, at the "
           "reference) about which the angle of the second node is measured (required in 3D; "
           "their relative rotation should stay about it, as a revolute joint keeps it)")
FREE_ANGLE = Key("free_angle", "float", 0.0, "rotational: the angle at which the spring is "
                 "relaxed (rad, from the reference)")


def _frame(axis: np.ndarray) -> np.ndarray:
    """(3, 3) ``[e1, e2, e3]`` with ``e3`` along ``axis`` (a revolute joint's frame)."""
    a = axis / np.linalg.norm(axis)
    t = np.eye(3)[int(np.argmin(np.abs(a)))]
    b = t - (t @ a) * a
    b /= np.linalg.norm(b)
    return np.column_stack([b, np.cross(a, b), a])


def _rotational(e: Entry, inputs: GroupInputs) -> GroupPiece:
    """A group of rotational spring-dampers from its validated deck entry."""
    from fem.elements.force.coordinate import CoordinateForce, CoordinateGeometry

    v, w, dim = e.values, e.where, inputs.dim
    conn, grounded = pairs_or_ground(e, inputs)
    if dim == 2:
        if v["axis"] is not None:
            raise DeckError(f"{w}.axis", "not used in a 2D model (the angle is about z)")
        F = np.eye(3)
        rows = (("angle",),)
    else:
        if v["axis"] is None:
            raise DeckError(f"{w}.axis", "required in 3D: the axis of the angle")
        axis = vector(v["axis"], 3, f"{w}.axis")
        if not np.linalg.norm(axis) > 0:
            raise DeckError(f"{w}.axis", f"expected a nonzero axis, got {shown(v['axis'])}")
        F = _frame(axis)
        rows = (("turn",),)
    spring = spring_law(v, w)
    damper = damper_law(v, w)
    if spring is None and damper is None:
        raise DeckError(w, "expected a spring (stiffness or spring_table) or a damper "
                        "(damping or damper_table), got neither")
    E = len(conn)
    pairs = np.column_stack([conn[:, 0], conn[:, 0]]) if grounded else conn
    geo = CoordinateGeometry(v["name"], "revolute", pairs, np.zeros((E, 2, 3)),
                             np.broadcast_to(F, (E, 3, 3)), dim, rows, ground_a=grounded)
    group = CoordinateForce(v["name"], geo, inputs.nodes.X, spring=spring, damper=damper,
                            free=v["free_angle"])
    group.type_name = "rotational_spring_damper"
    return GroupPiece(group, inputs.nodes)


ROTATIONAL = FamilyDeck("rotational spring-dampers", [PAIRS, GROUND, AXIS, STIFFNESS, DAMPING,
                                                      FREE_ANGLE, SPRING_TABLE, DAMPER_TABLE],
                        _rotational)


STIFFNESS_MATRIX = Key("stiffness_matrix", "number_vector_or_matrix", None, "bushing: the "
                       "stiffness in the local frame, a diagonal `[k_x, k_y, k_rz]` or a full "
                       "symmetric positive semi-definite 3x3 matrix (ux, uy, rz; force/length, "
                       "moment/rad); 3D: a diagonal of 6 or a 6x6 matrix (ux, uy, uz, rx, ry, "
                       "rz)")
DAMPING_MATRIX = Key("damping_matrix", "number_vector_or_matrix", None, "bushing: the damping "
                     "in the local frame, a diagonal or a symmetric positive semi-definite "
                     "matrix like stiffness_matrix")
AXES = Key("axes", "matrix", None, "bushing: `[[a_x, a_y]]`, the local x axis at the "
           "reference (default the global x); 3D: `[x_axis, y_axis]` (y made normal to x, z = "
           "x cross y) or the three axes `[x_axis, y_axis, z_axis]` (orthonormal, right-handed); "
           "the frame turns with the first node")


def bushing_matrix(value, n: int, where: str) -> np.ndarray:
    """(n, n) a symmetric positive semi-definite matrix from a diagonal or a full matrix."""
    slots = "ux, uy, rz" if n == 3 else "ux, uy, uz, rx, ry, rz"
    if not isinstance(value, list) or not value:
        raise DeckError(where, f"expected a diagonal of {n} numbers or a {n}x{n} matrix, got "
                        f"{shown(value)}")
    if all(not isinstance(x, list) for x in value):
        a = np.asarray(value, dtype=float)
        if a.shape != (n,):
            raise DeckError(where, f"expected a diagonal of {n} numbers ({slots}), got "
                            f"{len(value)}")
        if not np.all(np.isfinite(a)) or np.any(a < 0):
            k = int(np.flatnonzero(~(a >= 0))[0])
            raise DeckError(f"{where}[{k}]", f"expected a nonnegative number, got {a[k]!r}")
        return np.diag(a)
    if any(not isinstance(r, list) for r in value) or len(value) != n or any(
            len(r) != n for r in value):
        raise DeckError(where, f"expected a {n}x{n} matrix ({slots}), got "
                        f"{shown(value)}")
    a = np.asarray(value, dtype=float)
    if not np.all(np.isfinite(a)):
        raise DeckError(where, f"expected finite numbers, got {shown(value)}")
    scale = max(float(np.abs(a).max()), 1e-300)
    if np.any(np.abs(a - a.T) > 1e-12 * scale):
        i, j = np.argwhere(np.abs(a - a.T) > 1e-12 * scale)[0]
        raise DeckError(where, f"expected a symmetric matrix, got {a[i, j]!r} at [{i}][{j}] "
                        f"and {a[j, i]!r} at [{j}][{i}]")
    low = lowest_eigenvalue(a)
    if low < -1e-12 * scale:
        raise DeckError(where, f"expected a positive semi-definite matrix (it stores energy, "
                        f"its damping takes it), got the eigenvalue {low:.6g}")
    return 0.5 * (a + a.T)


def _bushing(e: Entry, inputs: GroupInputs) -> GroupPiece:
    """A group of bushings from its validated deck entry."""
    from fem.elements.force.bushing import Bushing
    from fem.elements.force.bushing3d import Bushing3D

    v, w, dim = e.values, e.where, inputs.dim
    conn, grounded = pairs_or_ground(e, inputs)
    need_rotations(conn, inputs, w, grounded, "beams or rigid bodies")
    n = 3 if dim == 2 else 6
    if v["stiffness_matrix"] is None:
        raise DeckError(f"{w}.stiffness_matrix", "required: the bushing's stiffness, a diagonal "
                        + ("[k_x, k_y, k_rz] or a 3x3 matrix" if dim == 2 else
                           "of 6 (ux, uy, uz, rx, ry, rz) or a 6x6 matrix"))
    K = bushing_matrix(v["stiffness_matrix"], n, f"{w}.stiffness_matrix")
    C = (None if v["damping_matrix"] is None else
         bushing_matrix(v["damping_matrix"], n, f"{w}.damping_matrix"))
    if dim == 3:
        F = None if v["axes"] is None else axes_3d(v["axes"], f"{w}.axes")
        return GroupPiece(Bushing3D(v["name"], conn, inputs.nodes.X, dim, K, C, axes=F),
                          inputs.nodes)
    F = None
    if v["axes"] is not None:
        rows = v["axes"]
        if len(rows) != 1:
            raise DeckError(f"{w}.axes", f"expected one row [[a_x, a_y]] (the local x axis) in "
                            f"2D, got {len(rows)}")
        a = vector(rows[0], 2, f"{w}.axes[0]")[:2]
        if not np.linalg.norm(a) > 0:
            raise DeckError(f"{w}.axes[0]", f"expected a nonzero axis, got {shown(rows[0])}")
        a = a / np.linalg.norm(a)
        F = np.array([[a[0], -a[1]], [a[1], a[0]]])
    group = Bushing(v["name"], conn, inputs.nodes.X, dim, K, C, axes=F)
    return GroupPiece(group, inputs.nodes)


def axes_3d(rows, where: str) -> np.ndarray:
    """(3, 3) the local axes (columns) of ``[x, y]`` or ``[x, y, z]`` rows (see :data:`AXES`)."""
    if not isinstance(rows, list) or len(rows) not in (2, 3):
        raise DeckError(where, "expected two rows [x_axis, y_axis] or three [x_axis, y_axis, "
                        f"z_axis] in 3D, got {shown(rows)}")
    a = [vector(r, 3, f"{where}[{k}]") for k, r in enumerate(rows)]
    for k, r in enumerate(a):
        if not np.linalg.norm(r) > 0:
            raise DeckError(f"{where}[{k}]", f"expected a nonzero axis, got {shown(rows[k])}")
    x = a[0] / np.linalg.norm(a[0])
    if len(a) == 3:
        F = np.column_stack([r / np.linalg.norm(r) for r in a])
        off = np.abs(F.T @ F - np.eye(3)).max()
        if off > 1e-9 or np.linalg.det(F) < 0:
            raise DeckError(where, "expected three orthonormal right-handed axes (z = x cross "
                            f"y), got {shown(rows)}" + (f" (|F^T F - I| = {off:.3g})"
                                                         if off > 1e-9 else " (left-handed)"))
        return F
    y = a[1] - (a[1] @ x) * x
    if not np.linalg.norm(y) > 1e-9 * np.linalg.norm(a[1]):
        raise DeckError(f"{where}[1]", f"expected a y axis not along x, got {shown(rows[1])} "
                        f"with x = {shown(rows[0])}")
    y = y / np.linalg.norm(y)
    return np.column_stack([x, y, np.cross(x, y)])


BUSHING = FamilyDeck("bushings", [PAIRS, GROUND, STIFFNESS_MATRIX, DAMPING_MATRIX, AXES],
                     _bushing)
