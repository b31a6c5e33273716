"""The deck entry of :class:`~fem.elements.beam.Beam` groups: ``[[elements]] type = "beam"``.

Its keys (:data:`KEYS`) and its construction (:func:`build`: deck values -> group, with the
local axes of 3D beams), registered with the class in :mod:`fem.elements`.
"""

from __future__ import annotations

import numpy as np

from fem.elements import truss_deck
from fem.elements.beam import Beam
from fem.errors import DeckError
from fem.io.keys import Key, shown
from fem.io.keys.entries import Entry, vector
from fem.io.keys.groups import LINE_KEYS, GroupInputs, GroupPiece, line_group

TABLE = "elements"
PLURAL = "beams"
KEYS = [*LINE_KEYS,
        Key("theory", "str", "euler-bernoulli", "beams: euler-bernoulli or timoshenko",
            choices=("euler-bernoulli", "timoshenko")),
        Key("orientation", "vector", None, "3D beams: approximate local y axis (made normal to "
            "the member); default: global Z x member axis, or global Y for members along Z"),
        Key("orientation_node", "int", None, "3D beams: a node lying in each element's local "
            "x-y plane, on the side of local +y (instead of orientation)"),
        Key("rotary_inertia", "bool", True, "beams: include the rotary inertia in the mass"),
        Key("inertia", "str", "lumped", "beams: lumped (nodal) or consistent (cubic Hermite "
            "rho A, co-rotational beams; rotary inertia stays lumped) inertia in dynamics; "
            "with consistent inertia the energy-conserving scheme keeps energy, linear and "
            "angular momentum exact (the director velocities are state)",
            choices=("lumped", "consistent")),
        Key("offsets", "number_vector_or_matrix", None, "beams: rigid end offsets of the "
            "elastic axis from the nodes (eccentric beams, shell stiffeners), global axes at "
            "the reference: [ex, ey(, ez)] for both ends or [[e1...], [e2...]] one per end; "
            "every element of the entry gets the same, each of its divisions too; offset "
            "beams with mass: no dynamic or linearize steps, no gravity, modal steps with "
            "mass = \"consistent\" only")]
NOT_USED = {"strain": "used by co-rotational trusses only"}


def derived(mat, sec, L: np.ndarray, theory: str) -> dict[str, np.ndarray]:
    """The stiffnesses and masses of each element, by formula (bounded in the deck reference)."""
    q = truss_deck.derived(mat, sec, L)
    for p in ("Iy", "Iz"):
        q[f"12 E {p} / L^3"] = 12 * mat.E * getattr(sec, p) / L**3
        q[f"density {p} L"] = mat.rho * getattr(sec, p) * L
    q["G J / L"] = mat.G * sec.J / L
    q["density A L^3"] = mat.rho * sec.A * L**3
    if theory == "timoshenko":
        for p, i in (("Ay", "Iz"), ("Az", "Iy")):
            if not np.isfinite(getattr(sec, p)):          # not given: Az of a 2D beam
                continue
            q[f"G {p} / L"] = mat.G * getattr(sec, p) / L
            q[f"12 E {i} / (G {p} L^2)"] = (12 * mat.E * getattr(sec, i)
                                            / (mat.G * getattr(sec, p) * L**2))
    return q


def build(e: Entry, inputs: GroupInputs) -> GroupPiece:
    """A beam group from its validated deck entry."""
    v, dim = e.values, inputs.dim

    def check(mat, sec) -> None:
        needs = ["Iz"] if dim == 2 else ["Iy", "Iz", "J"]
        if v["theory"] == "timoshenko":
            needs += ["Ay"] if dim == 2 else ["Ay", "Az"]
        for p in needs:
            val = getattr(sec, p)
            if not (val > 0 and np.isfinite(val)):
                raise DeckError(f"{e.where}.section", f"a {dim}D {v['theory']} beam needs a "
                                f"section with a positive {p}, got section '{sec.name}' with "
                                f"{p} = {val:g}")
        if dim == 2:
            for key in ("orientation", "orientation_node"):
                if key in e.given:
                    raise DeckError(f"{e.where}.{key}", "used by 3D beams only")
        if v["inertia"] == "consistent" and v["formulation"] != "corotational":
            raise DeckError(f"{e.where}.inertia", "consistent inertia is for co-rotational "
                            f"beams (its directors turn with the nodes), got formulation = "
                            f"\"{v['formulation']}\"")
        if not v["rotary_inertia"] and sec.rhoI is not None:
            raise DeckError(f"{e.where}.rotary_inertia", f"false contradicts section "
                            f"'{sec.name}', which gives rotary_inertia_per_length; remove one "
                            "of the two")

    g = line_group(e, inputs, Beam.nen, Beam.cell_type,
                   lambda mat, sec, L: derived(mat, sec, L, v["theory"]), check)
    mat, sec, conn, nodes = g.material, g.section, g.conn, g.nodes
    offsets = _offsets(e, nodes, conn, dim)
    ref = _orientation(e, nodes, conn, offsets) if dim == 3 else None
    return GroupPiece(Beam(v["name"], conn, nodes.X, dim, E=mat.E, G=mat.G, A=sec.A, Iy=sec.Iy,
                           Iz=sec.Iz, J=sec.J, Ay=sec.Ay, Az=sec.Az, rho=mat.rho,
                           formulation=v["formulation"], theory=v["theory"], ref=ref,
                           rotary_inertia=v["rotary_inertia"], rhoA=sec.rhoA, rhoI=sec.rhoI,
                           inertia=v["inertia"], offsets=offsets,
                           offsets_key=f"{e.where}.offsets"),
                      nodes)


def _offsets(e: Entry, nodes, conn: np.ndarray, dim: int) -> np.ndarray | None:
    """(2, 3) end offsets of the entry's elements (``offsets``), checked; None if not given.

    One vector offsets both ends alike, a pair each end. The elastic axis must keep a length
    (``line_lengths``' bound) and a consistent-inertia beam cannot take offsets (its inertia
    group moves the nodes' axis).
    """
    value = e.values["offsets"]
    if value is None:
        return None
    where = f"{e.where}.offsets"
    comps = "[ex, ey]" if dim == 2 else "[ex, ey, ez]"
    expect = (f"expected one offset {comps} for both ends or a pair [{comps}, {comps}], one per "
              f"end ({dim} components, model.dim = {dim})")
    rows = value if isinstance(value, list) and value and isinstance(value[0], list) else \
        [value, value]
    if not isinstance(value, list) or len(rows) != 2 \
            or any(not isinstance(r, list) or len(r) != dim for r in rows):
        raise DeckError(where, f"{expect}, got {shown(value)}")
    out = np.zeros((2, 3))
    out[:, :dim] = np.array(rows, dtype=float)
    if np.any(out) and e.values["inertia"] == "consistent":
        raise DeckError(where, "a beam with inertia = \"consistent\" takes no offsets (its "
                        "inertia follows the nodes' axis); use inertia = \"lumped\"")
    X = nodes.X
    axis = X[conn[:, 1]] + out[1] - X[conn[:, 0]] - out[0]
    length = np.linalg.norm(axis, axis=1)
    size = max(float(np.abs(X).max()), float(np.abs(out).max()), 1.0)
    short = np.flatnonzero(~(length > 1e-12 * size))
    if len(short):
        k = int(short[0])
        a, b = (int(nodes.ids[i]) for i in conn[k])
        raise DeckError(where, f"expected offset ends at different positions, got ends "
                        f"{length[k]:.3g} apart for the element between nodes {a} and {b}: the "
                        "elastic axis would have zero length")
    return out


def _default_orientation(X: np.ndarray, conn: np.ndarray,
                         ends: np.ndarray | None = None) -> np.ndarray:
    """Local y = global Z x axis (local z as close to Z as possible); global Y along Z.

    The axis runs between the nodes, or between the offset ends ``ends`` (2, 3) if given.
    """
    axis = X[conn[:, 1]] - X[conn[:, 0]]
    if ends is not None and np.any(ends):
        axis = axis + ends[1] - ends[0]
    axis /= np.linalg.norm(axis, axis=1)[:, None]
    ref = np.cross([0.0, 0.0, 1.0], axis)
    vertical = np.linalg.norm(ref, axis=1) < 1e-6
    ref[vertical] = [0.0, 1.0, 0.0]
    return ref


def _orientation(e: Entry, nodes, conn: np.ndarray,
                 offsets: np.ndarray | None = None) -> np.ndarray:
    """(E, 3) local-y reference vectors of 3D beams: default, ``orientation`` or a third node.

    The local x axis is the elastic axis: between the offset ends, with ``offsets`` (2, 3).
    """
    v, X = e.values, nodes.X
    ends = np.zeros((2, 3)) if offsets is None else offsets
    if v["orientation"] is not None and v["orientation_node"] is not None:
        raise DeckError(f"{e.where}.orientation_node", "give orientation or orientation_node, "
                        "not both")
    if v["orientation"] is None and v["orientation_node"] is None:
        return _default_orientation(X, conn, ends)
    if v["orientation_node"] is not None:
        k = nodes.indices(v["orientation_node"], f"{e.where}.orientation_node")[0]
        ref = X[k] - X[conn[:, 0]] - ends[0]        # from the elastic axis's first end
        key = "orientation_node"
    else:
        ref = np.broadcast_to(vector(v["orientation"], 3, f"{e.where}.orientation"),
                              (len(conn), 3))
        key = "orientation"
    axis = X[conn[:, 1]] + ends[1] - X[conn[:, 0]] - ends[0]
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
