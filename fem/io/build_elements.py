"""Build one ``[[elements]]`` group: connectivity (inline, subdivided or from a mesh), checks."""

from __future__ import annotations

import numpy as np

from fem.elements import Beam, Truss
from fem.errors import DeckError, did_you_mean
from fem.io.build import _lookup


def _connectivity(b, e) -> np.ndarray:
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
            raise DeckError(where, f"mesh group '{name}' {what}; expected a group of 2-node line "
                            f"cells; the mesh's groups are: {b.mesh.describe_groups()}")
        return b.mesh.lines[b.mesh.line_sets[name]]
    conn = []
    for i, row in enumerate(v["connectivity"]):
        where = f"{e.where}.connectivity[{i}]"
        if len(row) != 2 or any(x != int(x) for x in row):
            raise DeckError(where, f"expected two node ids, got {row}")
        conn.append(b.node_indices([int(x) for x in row], where))
    if not conn:
        raise DeckError(f"{e.where}.connectivity", "expected at least one [node, node] row, got "
                        "an empty list")
    return np.array(conn, dtype=np.int64)


def _subdivide(b, conn: np.ndarray, n: int) -> np.ndarray:
    """Split each row into ``n`` equal elements, creating the intermediate nodes."""
    if n == 1:
        return conn
    out = []
    next_id = max(b.ids) + 1
    for a, c in conn:
        xa, xc = b.X[a], b.X[c]
        chain = [a]
        for k in range(1, n):
            b.X.append(xa + (xc - xa) * k / n)
            b.ids.append(next_id)
            b.index[next_id] = len(b.X) - 1
            chain.append(len(b.X) - 1)
            next_id += 1
        chain.append(c)
        out.extend([[chain[k], chain[k + 1]] for k in range(n)])
    return np.array(out, dtype=np.int64)


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


def build_group(b, e):
    """An element group from its validated deck entry."""
    v = e.values
    mat = _lookup(b.mats, v["material"], "material", f"{e.where}.material")
    sec = _lookup(b.secs, v["section"], "section", f"{e.where}.section")
    conn = _connectivity(b, e)
    same = conn[:, 0] == conn[:, 1]
    if np.any(same):
        k = int(np.flatnonzero(same)[0])
        raise DeckError(f"{e.where}.connectivity[{k}]", "expected two different nodes, got node "
                        f"{b.ids[conn[k, 0]]} twice")
    X = np.array(b.X)
    lengths = np.linalg.norm(X[conn[:, 1]] - X[conn[:, 0]], axis=1)
    tiny = lengths <= 1e-12 * max(np.abs(X).max(), 1.0)
    if np.any(tiny):
        k = int(np.flatnonzero(tiny)[0])
        where = X[conn[k, 0], :b.dim].tolist()
        raise DeckError(f"{e.where}.connectivity[{k}]", "expected nodes at different positions, "
                        f"got nodes {b.ids[conn[k, 0]]} and {b.ids[conn[k, 1]]}, which are both "
                        f"at {where}: the element would have zero length")
    conn = _subdivide(b, conn, v["divisions"])
    X = np.array(b.X)
    name = v["name"]
    b.node_sets.setdefault(name, np.unique(conn))
    if v["type"] == "truss":
        for key in ("theory", "orientation", "orientation_node"):
            if key in e.given:
                raise DeckError(f"{e.where}.{key}", "not used by trusses")
        return Truss(name, conn, X, b.dim, EA=mat.E * sec.A, rhoA=mat.rho * sec.A,
                     formulation=v["formulation"], strain=v["strain"])
    if "strain" in e.given:
        raise DeckError(f"{e.where}.strain", "used by co-rotational trusses only")
    needs = ["Iz"] if b.dim == 2 else ["Iy", "Iz", "J"]
    if v["theory"] == "timoshenko":
        needs += ["Ay"] if b.dim == 2 else ["Ay", "Az"]
    for p in needs:
        val = getattr(sec, p)
        if not (val > 0 and np.isfinite(val)):
            raise DeckError(f"{e.where}.section", f"a {b.dim}D {v['theory']} beam needs a section "
                            f"with a positive {p}, got section '{sec.name}' with {p} = {val:g}")
    ref = None
    if b.dim == 3:
        ref = _orientation(b, e, X, conn)
    else:
        for key in ("orientation", "orientation_node"):
            if key in e.given:
                raise DeckError(f"{e.where}.{key}", "used by 3D beams only")
    return Beam(name, conn, X, b.dim, E=mat.E, G=mat.G, A=sec.A, Iy=sec.Iy, Iz=sec.Iz, J=sec.J,
                Ay=sec.Ay, Az=sec.Az, rho=mat.rho, formulation=v["formulation"],
                theory=v["theory"], ref=ref, rotary_inertia=v["rotary_inertia"])
