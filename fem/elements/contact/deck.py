"""The deck entry of contact groups: the ``[[contacts]]`` table.

One entry is one group of pairs with one law: ``pairs`` of nodes carrying spheres
(:class:`~fem.elements.contact.SphereContact`), ``spheres``: a node set whose every pair may
touch, found by a broad phase before each time step (:class:`~fem.elements.contact.sphere_set.
SphereSetContact`; the ground is a second entry with the same nodes against a plane), or
``nodes`` against the plane through
``plane_point`` with normal ``plane_normal`` (:class:`~fem.elements.contact.PlaneContact`: the
ground; a node set of beams or shells), or, with ``plane_body``, against a plane that moves and
turns with a body node (:class:`~fem.elements.contact.BodyPlaneContact`). The stiffness is
``stiffness`` or, for the Hertz laws, from ``material`` (and ``plane_material``) and the radii
(Ma, Menon & Lankarani eqs. 2-3).
"""

from __future__ import annotations

import numpy as np

from fem.elements.contact.body_plane import BodyPlaneContact
from fem.elements.contact.group import PlaneContact, SphereContact
from fem.elements.contact.laws import LAWS, NormalLaw, hertz_stiffness
from fem.elements.contact.sphere_set import SphereSetContact
from fem.errors import DeckError
from fem.io.keys import Key
from fem.io.keys.entries import Entry, lookup
from fem.io.keys.groups import GroupInputs, GroupPiece

TABLE = "contacts"
PLURAL = "contacts"
MAX_STEPS_PER_CONTACT = 10_000       # a count that sets the time step while a contact is closed
KEYS = [
    Key("pairs", "matrix", None, "`[[node_id, node_id], ...]`: pairs of nodes carrying spheres "
        "that touch each other (give pairs, or nodes with a plane)"),
    Key("spheres", "nodes", None, "node-set name or list of ids: spheres of `radius` (or "
        "`radii`) every pair of which may touch (a heap); a broad phase lists the candidate "
        "pairs before each time step"),
    Key("radii", "vector", None, "with spheres: one radius per sphere, in the order of "
        "spheres (instead of radius)"),
    Key("padding", "float", None, "with spheres: the broad phase's smallest padding (length): "
        "pairs whose gap is below it are listed, and the list is made again once a sphere may "
        "have moved half of it (default: a tenth of the largest radius)", positive=True),
    Key("nodes", "nodes", None, "node id, list of ids or node-set name: nodes (spheres of "
        "`radius`, or bare nodes) against the plane"),
    Key("plane_point", "vector", None, "a point of the plane (with nodes)"),
    Key("plane_normal", "vector", None, "the plane's normal, pointing to the open side (with "
        "nodes; any nonzero length)"),
    Key("plane_body", "int", None, "node id of a body carrying the plane (a rigid body, or a "
        "node with rotations): plane_point and plane_normal are given at the reference and move "
        "and turn with the node (default: the ground); the spheres' nodes take rotation DOFs "
        "too (make them rigid bodies, or fix their rotations)"),
    Key("radius", "float", 0.0, "radius of every sphere (0: bare nodes against a plane)",
        nonnegative=True),
    Key("law", "str", "hertz", "normal law: hertz (K delta^n), hunt_crossley (K delta^n + "
        "damping delta^n delta_dot), lankarani_nikravesh (K delta^n [1 + 3 (1 - e^2)/4 "
        "delta_dot / delta_dot^-]), kelvin_voigt (K delta + damping delta_dot, no tension), "
        "hertz_plastic (Hertz with permanent indentation, unloading curve from restitution)",
        choices=LAWS),
    Key("stiffness", "float", None, "K of the law (force / length^exponent); or give material",
        positive=True),
    Key("material", "str", None, "the spheres' material (E, nu): K from the radii, Hertz laws",
        ),
    Key("plane_material", "str", None, "the plane's material (default: the spheres'; K of a "
        "sphere on a flat)"),
    Key("exponent", "float", None, "n of K delta^n (default 1.5; kelvin_voigt: 1)",
        positive=True),
    Key("restitution", "float", None, "coefficient of restitution e in (0, 1] "
        "(lankarani_nikravesh, hertz_plastic)"),
    Key("damping", "float", None, "hunt_crossley: mu (force s / length^(exponent+1)); "
        "kelvin_voigt: c (force s / length)", nonnegative=True),
    Key("friction", "float", 0.0, "Coulomb coefficient mu (0: frictionless)", nonnegative=True),
    Key("velocity_scale", "float", None, "friction's regularization: below this sliding speed "
        "the friction force grows linearly with it (required with friction)", positive=True),
    Key("max_penetration", "float", 0.1, "a time step that closes a contact deeper than this "
        "fraction of its estimated largest penetration is refused and halved", positive=True),
    Key("steps_per_contact", "int", 40, "time steps at least per estimated contact time while a "
        "contact is closed", positive=True, maximum=MAX_STEPS_PER_CONTACT),
]
NOT_USED: dict[str, str] = {}
NEEDS = {"hunt_crossley": "damping", "kelvin_voigt": "damping",
         "lankarani_nikravesh": "restitution", "hertz_plastic": "restitution"}


def build(e: Entry, inputs: GroupInputs) -> GroupPiece:
    """A contact group from its validated deck entry."""
    v, w, dim = e.values, e.where, inputs.dim
    kind = v["law"]
    given = [k for k in ("pairs", "spheres", "nodes") if v[k] is not None]
    if len(given) != 1:
        raise DeckError(w, "expected one of pairs (spheres against each other), spheres (a set "
                        "of spheres, every pair) or nodes (against a plane), got "
                        + ({0: "none", 2: "both "}.get(len(given), "") + " and ".join(given)))
    for key in ("radii", "padding"):
        if v[key] is not None and v["spheres"] is None:
            raise DeckError(f"{w}.{key}", "applies with spheres (a set of spheres)")
    for key in ("restitution", "damping"):
        if v[key] is not None and NEEDS.get(kind) != key:
            raise DeckError(f"{w}.{key}", f"not used by law = \"{kind}\"")
    need = NEEDS.get(kind)
    if need and v[need] is None:
        raise DeckError(f"{w}.{need}", f"required with law = \"{kind}\"")
    e_r = v["restitution"]
    if e_r is not None and not 0 < e_r <= 1:
        raise DeckError(f"{w}.restitution", f"expected a coefficient in (0, 1], got {e_r!r}")
    if v["friction"] > 0 and v["velocity_scale"] is None:
        raise DeckError(f"{w}.velocity_scale", "required with friction > 0: the sliding speed "
                        "below which the friction force is regularized (linear in the speed)")
    n = v["exponent"] if v["exponent"] is not None else (1.0 if kind == "kelvin_voigt" else 1.5)
    R = v["radius"]
    if v["pairs"] is not None:
        for key in ("plane_point", "plane_normal", "plane_material", "plane_body"):
            if v[key] is not None:
                raise DeckError(f"{w}.{key}", "applies to nodes against a plane, not to pairs")
        conn = _pairs(v["pairs"], inputs, f"{w}.pairs")
        K = _stiffness(v, inputs, w, n, R, R)
        law = NormalLaw(kind, np.full(len(conn), K), n, e_r or 1.0, v["damping"] or 0.0)
        group = SphereContact(v["name"], conn, inputs.nodes.X, dim, law, radii=[R, R],
                              **_options(v))
        return GroupPiece(group, inputs.nodes)
    if v["spheres"] is not None:
        return _sphere_set(e, inputs, kind, n, e_r)
    nodes = inputs.nodes.indices(v["nodes"], f"{w}.nodes")
    for key in ("plane_point", "plane_normal"):
        if v[key] is None:
            raise DeckError(f"{w}.{key}", "required with nodes (the plane they touch)")
        if len(v[key]) != dim:
            raise DeckError(f"{w}.{key}", f"expected {dim} components (model.dim = {dim}), got "
                            f"{len(v[key])}: {v[key]!r}")
    normal = np.asarray(v["plane_normal"], dtype=float)
    if not np.linalg.norm(normal) > 0 or not np.isfinite(np.linalg.norm(normal)):
        raise DeckError(f"{w}.plane_normal", f"expected a nonzero finite vector, got "
                        f"{v['plane_normal']!r}")
    K = _stiffness(v, inputs, w, n, R, np.inf)
    law = NormalLaw(kind, np.full(len(nodes), K), n, e_r or 1.0, v["damping"] or 0.0)
    if v["plane_body"] is not None:
        body = _plane_body(v, inputs, w, nodes)
        group = BodyPlaneContact(v["name"], nodes, body, inputs.nodes.X, dim, law,
                                 v["plane_point"], normal, radius=R, **_options(v))
        return GroupPiece(group, inputs.nodes)
    group = PlaneContact(v["name"], nodes, inputs.nodes.X, dim, law, v["plane_point"], normal,
                         radius=R, **_options(v))
    return GroupPiece(group, inputs.nodes)


def _sphere_set(e: Entry, inputs: GroupInputs, kind: str, n: float, e_r) -> GroupPiece:
    """The group of ``spheres``: every pair a candidate of the broad phase."""
    v, w, dim = e.values, e.where, inputs.dim
    for key in ("plane_point", "plane_normal", "plane_material", "plane_body"):
        if v[key] is not None:
            raise DeckError(f"{w}.{key}", "applies to nodes against a plane, not to spheres (give "
                            "the ground as a second entry with nodes)")
    nodes = inputs.nodes.indices(v["spheres"], f"{w}.spheres")
    if len(np.unique(nodes)) != len(nodes):
        raise DeckError(f"{w}.spheres", "lists a node twice")
    if len(nodes) < 2:
        raise DeckError(f"{w}.spheres", f"expected at least two spheres, got {len(nodes)}")
    if v["radii"] is not None:
        if v["radius"]:
            raise DeckError(f"{w}.radii", "expected radius or radii, got both")
        radii = np.asarray(v["radii"], dtype=float)
        if radii.shape != nodes.shape:
            raise DeckError(f"{w}.radii", f"expected one radius per sphere ({len(nodes)}), got "
                            f"{len(radii)}")
    else:
        radii = np.full(len(nodes), float(v["radius"]))
    if not np.all(np.isfinite(radii) & (radii > 0)):
        raise DeckError(f"{w}.radii" if v["radii"] is not None else f"{w}.radius",
                        "expected positive radii: spheres of a set touch by their surfaces")
    if v["stiffness"] is not None:
        K = float(_stiffness(v, inputs, w, n, 1.0, 1.0))

        def stiffness(Ri, Rj):
            return K
    else:
        _stiffness(v, inputs, w, n, float(radii[0]), float(radii[0]))     # checks the material
        mat = lookup(inputs.materials, v["material"], "material", f"{w}.material")

        def stiffness(Ri, Rj):
            return hertz_stiffness(Ri, Rj, mat.E, mat.nu, mat.E, mat.nu)
    padding = v["padding"] if v["padding"] is not None else 0.1 * float(radii.max())
    law = NormalLaw(kind, np.zeros(0), n, e_r or 1.0, v["damping"] or 0.0)
    group = SphereSetContact(v["name"], nodes, inputs.nodes.X, dim, law, radii, stiffness,
                             padding, **_options(v))
    return GroupPiece(group, inputs.nodes)


def _plane_body(v: dict, inputs: GroupInputs, w: str, nodes: np.ndarray) -> int:
    """The index of ``plane_body``: a known node, not one of the spheres."""
    where = f"{w}.plane_body"
    if v["friction"] > 0:
        raise DeckError(f"{w}.friction", "friction against a body's plane is not built (give "
                        "friction = 0)")
    body = int(inputs.nodes.indices([v["plane_body"]], where)[0])
    if body in nodes:
        raise DeckError(where, f"node {v['plane_body']} is also one of the nodes against its "
                        "plane")
    return body


def _options(v: dict) -> dict:
    return {"friction": v["friction"], "velocity_scale": v["velocity_scale"] or 1.0,
            "max_penetration": v["max_penetration"], "steps_per_contact": v["steps_per_contact"]}


def _pairs(rows, inputs: GroupInputs, where: str) -> np.ndarray:
    """(E, 2) node indices of ``pairs``: rows of two distinct known nodes."""
    if not rows or any(len(r) != 2 for r in rows):
        raise DeckError(where, f"expected rows of two node ids [[a, b], ...], got {rows!r}"[:200])
    ids = []
    for r in rows:
        if not all(float(x).is_integer() for x in r):
            raise DeckError(where, f"expected integer node ids, got {r!r}")
        ids.append([int(x) for x in r])
    conn = inputs.nodes.indices([i for r in ids for i in r], where).reshape(-1, 2)
    same = np.flatnonzero(conn[:, 0] == conn[:, 1])
    if len(same):
        raise DeckError(where, f"row {same[0] + 1} pairs node {ids[same[0]][0]} with itself")
    return conn


def _stiffness(v: dict, inputs: GroupInputs, w: str, n: float, Ri: float, Rj: float) -> float:
    """``stiffness``, or the Hertz K of ``material`` (and ``plane_material``) and the radii."""
    if (v["stiffness"] is None) == (v["material"] is None):
        raise DeckError(f"{w}.stiffness", "expected stiffness or material (Hertz K from the "
                        f"radii), got {'both' if v['stiffness'] is not None else 'neither'}")
    if v["stiffness"] is not None:
        if v["plane_material"] is not None:
            raise DeckError(f"{w}.plane_material", "applies with material, not with stiffness")
        return float(v["stiffness"])
    if v["law"] == "kelvin_voigt" or n != 1.5:
        raise DeckError(f"{w}.material", "gives the Hertz stiffness (exponent 1.5, a Hertz "
                        f"law); law = \"{v['law']}\" with exponent {n:g} needs stiffness")
    if not Ri > 0:
        raise DeckError(f"{w}.radius", "a positive radius is required with material (the Hertz "
                        "stiffness grows with the square root of the radius)")
    mat = lookup(inputs.materials, v["material"], "material", f"{w}.material")
    other = (lookup(inputs.materials, v["plane_material"], "material", f"{w}.plane_material")
             if v["plane_material"] is not None else mat)
    for m, key in ((mat, "material"), (other, "plane_material")):
        if not (getattr(m, "G", 0) > 0 and -1 < m.nu < 0.5):
            raise DeckError(f"{w}.{key}", f"material '{m.name}' is not an isotropic material "
                            "with -1 < nu < 0.5")
    K = hertz_stiffness(Ri, Rj, mat.E, mat.nu, other.E, other.nu)
    if not np.isfinite(K) or K <= 0:
        raise DeckError(f"{w}.material", f"gives no finite positive stiffness (K = {K!r})")
    return float(K)
