"""Build one ``[[elements]]`` group: connectivity (inline, subdivided or from a mesh), checks."""

from __future__ import annotations

import os

import numpy as np

from fem.elements import Beam, Truss
from fem.errors import DeckError, did_you_mean
from fem.io.build import _lookup
from fem.io.schema import BYTES_PER_ELEMENT, BYTES_PER_NODE, MAX_DERIVED, MAX_NODE_ID, sci, shown


def _connectivity(b, e) -> tuple[np.ndarray, str]:
    """(E, 2) node indices of a group and the deck key of its rows (for messages)."""
    v = e.values
    if (v["connectivity"] is None) == (v["mesh_group"] is None):
        got = "both" if v["mesh_group"] is not None else "neither"
        raise DeckError(e.where, f"expected exactly one of connectivity and mesh_group, got {got}")
    if v["mesh_group"] is not None:
        where, name = f"{e.where}.mesh_group", v["mesh_group"]
        if b.mesh is None:
            raise DeckError(where, "expected [nodes] mesh = \"file\" for the mesh groups to come "
                            "from, got inline [nodes] coordinates")
        if name not in b.mesh.line_sets:
            if name in b.mesh.node_sets:
                what = f"has no 2-node line cells (it has {b.mesh.describe_groups_of(name)})"
            else:
                what = "does not exist" + did_you_mean(name, b.mesh.node_sets)
            raise DeckError(where, f"mesh group {shown(name)} {what}; expected a group of 2-node "
                            f"line cells; the mesh's groups are: {b.mesh.describe_groups()}")
        return b.mesh.lines[b.mesh.line_sets[name]], where
    where = f"{e.where}.connectivity"
    return node_pairs(b, v["connectivity"], where, "[node, node] row"), where


def node_pairs(b, rows: list, where: str, what: str) -> np.ndarray:
    """(E, 2) node indices of deck rows ``[[id, id], ...]`` (connectivity, tie pairs).

    Each row holds two node ids (integers, possibly written 2.0); an unknown id is a deck error
    naming the row, as is an empty list (``what`` names a row in the message).
    """
    if not rows:
        raise DeckError(where, f"expected at least one {what}, got an empty list")
    bad = next((i for i, row in enumerate(rows) if len(row) != 2), None)
    if bad is not None:
        raise DeckError(f"{where}[{bad}]", f"expected two node ids, got {shown(rows[bad])}")
    ids = np.array(rows, dtype=float)                   # finite and bounded (schema.check_values)
    frac = np.flatnonzero(np.any(ids != np.round(ids), axis=1))
    if len(frac):
        raise DeckError(f"{where}[{frac[0]}]", f"expected two node ids (integers), got "
                        f"{shown(rows[frac[0]])}")
    known = np.abs(ids) <= MAX_NODE_ID
    conn = np.where(known, b.lookup(np.where(known, ids, 0).astype(np.int64)), -1)
    missing = np.argwhere(conn < 0)
    if len(missing):
        i, k = missing[0]
        raise DeckError(f"{where}[{i}]", f"unknown node {shown(rows[i][k])}: no node has this "
                        f"id; the node ids are {b.known_ids()}")
    return conn.astype(np.int64)


def _duplicates(b, conn: np.ndarray, where: str) -> None:
    """Refuse a row that repeats an earlier one (in either order): it would double the element."""
    pairs = np.sort(conn, axis=1)
    _, first, inverse = np.unique(pairs, axis=0, return_index=True, return_inverse=True)
    inverse = inverse.ravel()
    again = np.flatnonzero(first[inverse] != np.arange(len(conn)))
    if len(again):
        k = int(again[0])
        j = int(first[inverse[k]])
        a, c = (int(b.ids[x]) for x in conn[j])
        if where.endswith("mesh_group"):
            rows = f"line cells {j + 1} and {k + 1} of the group"
        else:
            rows = f"rows {where.rsplit('.', 1)[1]}[{j}] and [{k}]"
        order = "the same nodes" if conn[j, 0] == conn[k, 0] else "the same nodes reversed"
        raise DeckError(where if where.endswith("mesh_group") else f"{where}[{k}]",
                        f"expected each element once, got {rows} both joining nodes {a} and {c} "
                        f"({order}): a repeated element doubles the stiffness; remove one")


def _subdivide(b, conn: np.ndarray, n: int) -> np.ndarray:
    """Split each row into ``n`` equal elements, creating the intermediate nodes.

    Vectorized over rows and divisions. The new nodes are numbered row by row, from the first node
    of the row to the second, with ids after the largest; ``b.origin`` records the two end ids and
    the position ``k`` of ``n`` of each.
    """
    if n == 1:
        return conn
    rows = len(conn)
    k = np.arange(1, n)                                         # (n - 1,)
    xa, xc = b.X[conn[:, 0]], b.X[conn[:, 1]]                   # (rows, 3)
    X = xa[:, None, :] + (xc - xa)[:, None, :] * k[None, :, None] / n
    origin = np.empty((rows, n - 1, 4), dtype=np.int64)
    origin[:, :, 0] = b.ids[conn[:, 0]][:, None]
    origin[:, :, 1] = b.ids[conn[:, 1]][:, None]
    origin[:, :, 2] = k[None, :]
    origin[:, :, 3] = n
    new = b.add_nodes(X.reshape(-1, 3), origin.reshape(-1, 4)).reshape(rows, n - 1)
    chain = np.column_stack([conn[:, 0], new, conn[:, 1]])     # (rows, n + 1)
    return np.stack([chain[:, :-1], chain[:, 1:]], axis=-1).reshape(-1, 2)


def _check_size(b, e, rows: int) -> None:
    """Refuse ``divisions`` that make a model too large for this machine's memory (estimated)."""
    n = e.values["divisions"]
    new_nodes, elements = rows * (n - 1), rows * n
    b.n_elements = getattr(b, "n_elements", 0) + elements
    nodes = len(b.X) + new_nodes
    need = nodes * BYTES_PER_NODE + b.n_elements * BYTES_PER_ELEMENT
    memory = machine_memory()
    if need > memory:
        raise DeckError(f"{e.where}.divisions", f"expected a model that fits in this machine's "
                        f"memory ({_bytes(memory)}), got divisions = {n} of "
                        f"{rows} row{'s' if rows > 1 else ''}: "
                        f"{elements} elements and {new_nodes} new nodes in this group, "
                        f"{b.n_elements} elements and {nodes} nodes in all, about {_bytes(need)} "
                        f"(at {BYTES_PER_NODE} bytes per node and {BYTES_PER_ELEMENT} per "
                        "element); use fewer divisions")


def machine_memory() -> int:
    """Physical memory of this machine in bytes (``sysconf``); 2^63 where it cannot be known."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, ValueError, OSError):
        return 2**63


def _bytes(n: int) -> str:
    """``"7.8 GiB"``: a size for messages."""
    for unit, size in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{n} bytes"


def _default_orientation(X: np.ndarray, conn: np.ndarray) -> np.ndarray:
    """Local y = global Z x axis (local z as close to Z as possible); global Y along Z."""
    axis = X[conn[:, 1]] - X[conn[:, 0]]
    axis /= np.linalg.norm(axis, axis=1)[:, None]
    ref = np.cross([0.0, 0.0, 1.0], axis)
    vertical = np.linalg.norm(ref, axis=1) < 1e-6
    ref[vertical] = [0.0, 1.0, 0.0]
    return ref


def _orientation(b, e, X: np.ndarray, conn: np.ndarray) -> np.ndarray:
    """(E, 3) local-y reference vectors of 3D beams: default, ``orientation`` or a third node."""
    v = e.values
    if v["orientation"] is not None and v["orientation_node"] is not None:
        raise DeckError(f"{e.where}.orientation_node", "give orientation or orientation_node, "
                        "not both")
    if v["orientation"] is None and v["orientation_node"] is None:
        return _default_orientation(X, conn)
    if v["orientation_node"] is not None:
        k = b.node_indices(v["orientation_node"], f"{e.where}.orientation_node")[0]
        ref = X[k] - X[conn[:, 0]]
        key = "orientation_node"
    else:
        if len(v["orientation"]) != 3:
            raise DeckError(f"{e.where}.orientation", "expected [x, y, z]")
        ref = np.broadcast_to(np.array(v["orientation"], dtype=float), (len(conn), 3))
        key = "orientation"
    axis = X[conn[:, 1]] - X[conn[:, 0]]
    axis = axis / np.linalg.norm(axis, axis=1)[:, None]
    norm = np.linalg.norm(ref, axis=1)
    cross = np.linalg.norm(np.cross(axis, ref), axis=1)
    bad = cross <= 1e-8 * np.maximum(norm, 1e-300)
    if np.any(bad):
        what = ("lies on the axis of" if key == "orientation_node" else
                "is parallel to (or zero along)")
        raise DeckError(f"{e.where}.{key}", f"{what} element {int(np.flatnonzero(bad)[0]) + 1} "
                        "of the group: it cannot define the local y axis")
    return ref


def _row(where: str, k: int) -> tuple[str, str]:
    """The deck key and the words for row ``k`` of a group (``connectivity`` or ``mesh_group``)."""
    if where.endswith("mesh_group"):
        return where, f"line cell {k + 1} of the group"
    return f"{where}[{k}]", "the row"


def _check_derived(b, e, mat, sec, conn: np.ndarray, lengths: np.ndarray) -> None:
    """Refuse element stiffnesses and masses beyond ``MAX_DERIVED`` (or not finite).

    ``lengths`` are those of the rows before ``divisions``; each element is ``1/divisions`` of
    its row. Evaluated with numpy's warnings off: an overflow is the error reported here.
    """
    n = e.values["divisions"]
    beam = e.values["type"] == "beam"
    with np.errstate(all="ignore"):
        L = lengths / n
        q = {"E A / L": mat.E * sec.A / L, "density A L": mat.rho * sec.A * L}
        if beam:
            for p in ("Iy", "Iz"):
                q[f"12 E {p} / L^3"] = 12 * mat.E * getattr(sec, p) / L**3
                q[f"density {p} L"] = mat.rho * getattr(sec, p) * L
            q["G J / L"] = mat.G * sec.J / L
            q["density A L^3"] = mat.rho * sec.A * L**3
            if e.values["theory"] == "timoshenko":
                for p, i in (("Ay", "Iz"), ("Az", "Iy")):
                    q[f"G {p} / L"] = mat.G * getattr(sec, p) / L
                    q[f"12 E {i} / (G {p} L^2)"] = (12 * mat.E * getattr(sec, i)
                                                    / (mat.G * getattr(sec, p) * L**2))
    for what, val in q.items():
        bad = ~(np.abs(val) <= MAX_DERIVED)
        if np.any(bad):
            k = int(np.flatnonzero(bad)[0])
            a, c = (int(b.ids[x]) for x in conn[k])
            raise DeckError(e.where, f"expected element stiffnesses and masses of at most "
                            f"{sci(MAX_DERIVED)} (double precision), got {what} = "
                            f"{float(val[k]):.3g} for the elements between nodes {a} and {c} "
                            f"(L = {float(L[k]):.3g}, material '{mat.name}', section "
                            f"'{sec.name}'); check the units of the material and section")


def build_group(b, e):
    """An element group from its validated deck entry."""
    v = e.values
    mat = _lookup(b.mats, v["material"], "material", f"{e.where}.material")
    sec = _lookup(b.secs, v["section"], "section", f"{e.where}.section")
    if v["type"] == "truss":
        for key in ("theory", "orientation", "orientation_node"):
            if key in e.given:
                raise DeckError(f"{e.where}.{key}", "not used by trusses")
    else:
        if "strain" in e.given:
            raise DeckError(f"{e.where}.strain", "used by co-rotational trusses only")
        needs = ["Iz"] if b.dim == 2 else ["Iy", "Iz", "J"]
        if v["theory"] == "timoshenko":
            needs += ["Ay"] if b.dim == 2 else ["Ay", "Az"]
        for p in needs:
            val = getattr(sec, p)
            if not (val > 0 and np.isfinite(val)):
                raise DeckError(f"{e.where}.section", f"a {b.dim}D {v['theory']} beam needs a "
                                f"section with a positive {p}, got section '{sec.name}' with "
                                f"{p} = {val:g}")
        if b.dim == 2:
            for key in ("orientation", "orientation_node"):
                if key in e.given:
                    raise DeckError(f"{e.where}.{key}", "used by 3D beams only")
    conn, where = _connectivity(b, e)
    same = conn[:, 0] == conn[:, 1]
    if np.any(same):
        key, row = _row(where, int(np.flatnonzero(same)[0]))
        raise DeckError(key, f"expected two different nodes, got node "
                        f"{b.ids[conn[int(np.flatnonzero(same)[0]), 0]]} twice in {row}")
    _duplicates(b, conn, where)
    X = b.X
    lengths = np.linalg.norm(X[conn[:, 1]] - X[conn[:, 0]], axis=1)
    size = max(float(np.abs(X).max()), 1.0)
    tiny = lengths <= 1e-12 * size
    if np.any(tiny):
        k = int(np.flatnonzero(tiny)[0])
        a, c = b.ids[conn[k, 0]], b.ids[conn[k, 1]]
        if lengths[k] == 0:
            got = f"nodes {a} and {c}, which are both at {X[conn[k, 0], :b.dim].tolist()}"
        else:
            got = (f"nodes {a} and {c}, {lengths[k]:.3g} apart (at "
                   f"{X[conn[k, 0], :b.dim].tolist()} and {X[conn[k, 1], :b.dim].tolist()}), "
                   f"less than 1e-12 of the model's size ({size:.3g}, at least 1)")
        raise DeckError(_row(where, k)[0], f"expected nodes at different positions, got {got}: "
                        "the element would have zero length")
    _check_derived(b, e, mat, sec, conn, lengths)
    _check_size(b, e, len(conn))
    conn = _subdivide(b, conn, v["divisions"])
    X = b.X
    name = v["name"]
    b.node_sets.setdefault(name, np.unique(conn))
    if v["type"] == "truss":
        return Truss(name, conn, X, b.dim, EA=mat.E * sec.A, rhoA=mat.rho * sec.A,
                     formulation=v["formulation"], strain=v["strain"])
    ref = _orientation(b, e, X, conn) if b.dim == 3 else None
    return Beam(name, conn, X, b.dim, E=mat.E, G=mat.G, A=sec.A, Iy=sec.Iy, Iz=sec.Iz, J=sec.J,
                Ay=sec.Ay, Az=sec.Az, rho=mat.rho, formulation=v["formulation"],
                theory=v["theory"], ref=ref, rotary_inertia=v["rotary_inertia"])
