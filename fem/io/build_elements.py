"""Build one ``[[elements]]`` group: connectivity (inline, subdivided or from a mesh), checks, data."""

from __future__ import annotations

import numpy as np

from fem.elements import Beam, Truss
from fem.errors import DeckError
from fem.io.build import _lookup


def _connectivity(b, e) -> np.ndarray:
    v = e.values
    if (v["connectivity"] is None) == (v["mesh_group"] is None):
        raise DeckError(e.where, "give exactly one of connectivity and mesh_group")
    if v["mesh_group"] is not None:
        if b.mesh is None:
            raise DeckError(f"{e.where}.mesh_group", "needs [nodes] mesh = \"file\"")
        rows = _lookup(b.mesh.line_sets, v["mesh_group"], "mesh group with line cells",
                       f"{e.where}.mesh_group")
        return b.mesh.lines[rows]
    conn = []
    for i, row in enumerate(v["connectivity"]):
        where = f"{e.where}.connectivity[{i}]"
        if len(row) != 2 or any(x != int(x) for x in row):
            raise DeckError(where, f"expected two node ids, got {row}")
        conn.append(b.node_indices([int(x) for x in row], where))
    if not conn:
        raise DeckError(f"{e.where}.connectivity", "no elements")
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
    """Local y = global Z x axis (local z as close to Z as possible); global Y for members along Z."""
    axis = X[conn[:, 1]] - X[conn[:, 0]]
    axis /= np.linalg.norm(axis, axis=1)[:, None]
    ref = np.cross([0.0, 0.0, 1.0], axis)
    vertical = np.linalg.norm(ref, axis=1) < 1e-6
    ref[vertical] = [0.0, 1.0, 0.0]
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
        raise DeckError(f"{e.where}.connectivity[{k}]", f"element connects node "
                        f"{b.ids[conn[k, 0]]} to itself")
    X = np.array(b.X)
    lengths = np.linalg.norm(X[conn[:, 1]] - X[conn[:, 0]], axis=1)
    tiny = lengths <= 1e-12 * max(np.abs(X).max(), 1.0)
    if np.any(tiny):
        k = int(np.flatnonzero(tiny)[0])
        raise DeckError(f"{e.where}.connectivity[{k}]", f"nodes {b.ids[conn[k, 0]]} and "
                        f"{b.ids[conn[k, 1]]} coincide: the element has zero length")
    conn = _subdivide(b, conn, v["divisions"])
    X = np.array(b.X)
    name = v["name"]
    b.node_sets.setdefault(name, np.unique(conn))
    if v["type"] == "truss":
        for key in ("theory", "orientation"):
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
            raise DeckError(f"{e.where}.section", f"section '{sec.name}' needs a positive {p} "
                            f"for a {b.dim}D {v['theory']} beam")
    ref = None
    if b.dim == 3:
        if v["orientation"] is None:
            ref = _default_orientation(X, conn)
        else:
            if len(v["orientation"]) != 3:
                raise DeckError(f"{e.where}.orientation", "expected [x, y, z]")
            ref = np.broadcast_to(np.array(v["orientation"], dtype=float), (len(conn), 3))
            axis = X[conn[:, 1]] - X[conn[:, 0]]
            cross = np.linalg.norm(np.cross(axis / np.linalg.norm(axis, axis=1)[:, None], ref),
                                   axis=1)
            if np.any(cross < 1e-8 * np.linalg.norm(ref, axis=1)):
                raise DeckError(f"{e.where}.orientation", "is parallel to (or zero along) an "
                                "element's axis: it cannot define the local y axis")
    elif "orientation" in e.given:
        raise DeckError(f"{e.where}.orientation", "used by 3D beams only")
    return Beam(name, conn, X, b.dim, E=mat.E, G=mat.G, A=sec.A, Iy=sec.Iy, Iz=sec.Iz, J=sec.J,
                Ay=sec.Ay, Az=sec.Az, rho=mat.rho, formulation=v["formulation"],
                theory=v["theory"], ref=ref, rotary_inertia=v["rotary_inertia"])
