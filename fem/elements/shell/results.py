"""Shell results engineers read: stresses in global and chosen axes, at cells and at nodes.

A facet's outputs are in-plane tensors in its own axes ``(e1, e2)``: the mean membrane forces
``N``, moments ``M`` (``M = int z sigma dz``, ``z`` along ``e3``) and the stresses at the top
(``+e3``), middle and bottom faces (laminates: at the bottom and top of every layer). Facets of
one mesh have different ``e1`` (along their side 1-2), so these components jump from facet to
facet even in a uniform field. Here they are written in axes that do not depend on the facet:

* **global**: the 3D tensor ``S = P^T s P`` (``P (2, 3)`` the rows ``e1, e2``; plane stress, so
  ``S e3 = 0``), its components ``xx, yy, zz, xy, yz, xz``;
* **chosen axes** ``(1, 2)``: axis 1 is the projection on the facet of the group's ``direction``
  (the axis its layer angles start from), ``a1 = cos(phi) e1 + sin(phi) e2``, axis 2 ``a2 = e3 x
  a1``; components ``11, 22, 12``. Without a ``direction`` a homogeneous shell takes global x,
  or global z on facets to which x is within 0.1 degrees of normal (the convention of Abaqus,
  *Analysis User's Guide*, section 1.2.2, "Local tangent directions on surfaces in space");
* **invariants** of each stress (not of ``N``, ``M``): von Mises ``sqrt(s11^2 - s11 s22 + s22^2 +
  3 s12^2)`` (plane stress) and the principal stresses ``p1 >= p2``, ``(s11 + s22)/2 +-
  sqrt(((s11 - s22)/2)^2 + s12^2)``, the first at ``0.5 atan2(2 s12, s11 - s22)`` from axis 1;
* laminates, also each layer face in its **material axes** (``mat11, mat22, mat12``; axis 1 at
  the layer angle from axis 1 above).

A co-rotational facet's tensors are those of its deformational displacements in its current
frame: its global components turn with it, the chosen-axis ones and the invariants do not.

**Nodal fields** (:func:`nodal_fields`): averages of the facets' (element *mean*, not
extrapolated) values over the facets of every shell group that have the node, each weighted by
its corner angle at the node (the weights of Thurmer & Wuthrich's vertex normals, J. Graphics
Tools 3 (1998) 43-46: each direction around a node counts once, whatever the sizes and
diagonals of its triangles). The node's normal ``n`` is the weighted mean of the facets' normals
(the "nodal projection plane" of Altair HyperView's projection rule); each facet's tensors and
axis 1 are turned onto the node's plane by the smallest rotation taking its normal to ``n``
before they are averaged, so the nodal tensor is a plane stress in that plane (its global
components, its components in the node's axes ``(dir1, dir2)``, the mean axis 1 projected on
the plane, and its invariants all describe it), a uniform field is uniform to round-off on any
mesh and a bent strip keeps its bending stress at its nodes. Top and bottom follow each facet's
normal: the mesh's triangles must be consistently oriented (as for laminates). Where groups of
different thickness meet, or at a fold, the average mixes their faces, as any nodal average
does; the cell fields stay unaveraged.

Names (:data:`TENSOR_COMPONENTS` ...): ``<field>_<component>`` with ``<field>`` one of ``N``,
``M``, ``s_top``, ``s_mid``, ``s_bottom`` (homogeneous; a laminate has ``s_top``, ``s_bottom``
and ``s_layer<k>_<bottom|top>``); ``thickness``; at nodes the 3-vectors ``normal``, ``dir1``,
``dir2`` (the frame) and ``<stress>_p1_dir`` (the first principal direction, its component
along ``dir1`` not negative).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from fem.elements.base import NodalParts, average

#: the global components of a symmetric tensor, and their (row, column)
TENSOR_COMPONENTS = ("xx", "yy", "zz", "xy", "yz", "xz")
_I = np.array([0, 1, 2, 0, 1, 0])
_J = np.array([0, 1, 2, 1, 2, 2])
#: components in the chosen axes, and in a layer's material axes
AXIS_COMPONENTS = ("11", "22", "12")
MATERIAL_COMPONENTS = ("mat11", "mat22", "mat12")
#: the invariants of a stress
INVARIANTS = ("mises", "p1", "p2")
#: a homogeneous shell without direction: global x, or global z where x is within this angle
#: (degrees) of a facet's normal
FALLBACK_DEGREES = 0.1


def default_axis(normal: NDArray) -> NDArray:
    """(..., 3) the default axis 1: global x projected on the planes of ``normal (..., 3)``.

    Global z where x is within :data:`FALLBACK_DEGREES` of the normal (Abaqus's convention).
    """
    x = np.zeros(normal.shape)
    x[..., 0] = 1.0
    near = np.abs(normal[..., 0]) > np.cos(np.radians(FALLBACK_DEGREES))
    x[near] = [0.0, 0.0, 1.0]
    return _unit(x - np.sum(x * normal, axis=-1)[..., None] * normal)


def _unit(v: NDArray) -> NDArray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return v / np.linalg.norm(v, axis=-1)[..., None]


def basis(P: NDArray) -> NDArray:
    """(E, 3, 6): global components of the in-plane unit tensors of axes ``P (E, 2, 3)``.

    ``e1 e1``, ``e2 e2`` and ``e1 e2 + e2 e1``, the rows of ``P`` being ``e1``, ``e2``.
    """
    e1, e2 = P[:, 0], P[:, 1]
    return np.stack([e1[:, _I] * e1[:, _J], e2[:, _I] * e2[:, _J],
                     e1[:, _I] * e2[:, _J] + e2[:, _I] * e1[:, _J]], axis=1)


def turned(s: NDArray, psi: NDArray) -> NDArray:
    """(E, 3) in-plane tensors ``s (E, 3)`` in axes turned by ``psi (E,)`` (rad) about ``e3``."""
    c, t = np.cos(psi), np.sin(psi)
    xx, yy, xy = s[:, 0], s[:, 1], s[:, 2]
    return np.column_stack([c * c * xx + t * t * yy + 2 * c * t * xy,
                            t * t * xx + c * c * yy - 2 * c * t * xy,
                            c * t * (yy - xx) + (c * c - t * t) * xy])


def invariants(s: NDArray) -> tuple[NDArray, NDArray, NDArray, NDArray]:
    """Von Mises, ``p1 >= p2`` and the angle of ``p1`` from axis 1 of plane stresses ``s``."""
    xx, yy, xy = s[:, 0], s[:, 1], s[:, 2]
    mean, r = 0.5 * (xx + yy), np.hypot(0.5 * (xx - yy), xy)
    mises = np.sqrt(np.maximum(xx * xx - xx * yy + yy * yy + 3 * xy * xy, 0.0))
    return mises, mean + r, mean - r, 0.5 * np.arctan2(2 * xy, xx - yy)


def cell_fields(T: NDArray, phi: NDArray, fields: dict[str, NDArray],
                material: dict[str, NDArray] | None = None) -> tuple[dict, dict]:
    """Cell outputs of element-axis tensors, and their global components (for the nodes).

    ``T (E, 3, 3)``: the facets' (current) frames, rows ``e1, e2, e3``; ``phi (E,)``: the chosen
    axis 1 from ``e1``; ``fields``: ``{name: (E, 3)}`` in-plane tensors in the element axes
    (``N``, ``M`` and stresses, whose names start with ``s_``); ``material``: ``{name: psi
    (E,)}``, the material axes of layer faces. Returns ``({<name>_<component>: (E,)}, {name:
    (E, 6)})``.
    """
    cells, glob = {}, {}
    B = basis(T[:, :2])
    for name, s in fields.items():
        g = (s[:, None, :] @ B)[:, 0]
        glob[name] = g
        cells.update({f"{name}_{c}": g[:, i] for i, c in enumerate(TENSOR_COMPONENTS)})
        local = turned(s, phi)
        cells.update({f"{name}_{c}": local[:, i] for i, c in enumerate(AXIS_COMPONENTS)})
        if name.startswith("s_"):
            inv = invariants(s)
            cells.update({f"{name}_{c}": inv[i] for i, c in enumerate(INVARIANTS)})
        if material and name in material:
            m = turned(s, material[name])
            cells.update({f"{name}_{c}": m[:, i] for i, c in enumerate(MATERIAL_COMPONENTS)})
    return cells, glob


def nodal_parts(conn: NDArray, X: NDArray, T: NDArray, phi: NDArray, thickness: NDArray,
                glob: dict[str, NDArray]) -> NodalParts:
    """What a shell group gives to the nodal fields: its global tensors, frames, thickness.

    ``X (E, 3, 3)``: the corners (reference), whose angles weigh the averages.
    """
    a1 = np.cos(phi)[:, None] * T[:, 0] + np.sin(phi)[:, None] * T[:, 1]
    values = {"normal": T[:, 2], "dir1": a1, "thickness": thickness, **glob}
    return NodalParts(conn, corner_angles(X), values, nodal_fields)


def corner_angles(X: NDArray) -> NDArray:
    """(E, 3) the angles at the corners of triangles ``X (E, 3, 3)`` (rad; they sum to pi)."""
    u = _unit(np.roll(X, -1, axis=1) - X)                     # towards the next corner
    v = _unit(np.roll(X, 1, axis=1) - X)                      # towards the previous one
    return np.arctan2(np.linalg.norm(np.cross(u, v), axis=2), np.sum(u * v, axis=2))


def plane_turn(a: NDArray, b: NDArray) -> NDArray:
    """(..., 3, 3) the smallest rotations taking unit vectors ``a`` to ``b`` (both (..., 3)).

    ``I + hat(v) + hat(v)^2 / (1 + c)``, ``v = a x b``, ``c = a . b``; the identity where ``b``
    is (nearly) ``-a`` (opposite normals: triangles not consistently oriented) or not finite.
    """
    v = np.cross(a, b)
    c = np.sum(a * b, axis=-1)
    ok = (1.0 + c > 1e-8) & np.isfinite(c)
    K = np.zeros(v.shape + (3,))
    K[..., 0, 1], K[..., 0, 2], K[..., 1, 2] = -v[..., 2], v[..., 1], -v[..., 0]
    K[..., 1, 0], K[..., 2, 0], K[..., 2, 1] = v[..., 2], -v[..., 1], v[..., 0]
    scale = np.where(ok, 1.0 / np.where(ok, 1.0 + c, 1.0), 0.0)
    R = np.eye(3) + np.where(ok[..., None, None], K + scale[..., None, None] * (K @ K), 0.0)
    return R


def tensor_turn(R: NDArray) -> NDArray:
    """(..., 6, 6): ``S -> R S R^T`` on symmetric tensors' components, rotations ``R``.

    Components ``xx, yy, zz, xy, yz, xz``; ``R (..., 3, 3)``.
    """
    Ri, Rj = R[..., _I, :], R[..., _J, :]                      # (..., 6, 3) rows i and j
    off = (_I != _J).astype(float)
    return (Ri[..., :, _I] * Rj[..., :, _J]
            + off * Ri[..., :, _J] * Rj[..., :, _I])


def nodal_fields(parts: list[NodalParts], n: int) -> dict[str, NDArray]:
    """The nodal fields of the shell groups' parts (see the module docstring).

    First the node's normal (the area-weighted mean of its facets' normals) and thickness; then
    each facet's tensors and axis 1, turned by the smallest rotation taking its plane to each of
    its nodes' (:func:`plane_turn`), averaged with the facets' areas. ``NaN`` at nodes without
    shells (and, for a layer's fields, at nodes without that layer).
    """
    frame = np.zeros((n, 4))
    weight = np.zeros(n)
    for p in parts:
        s, w = average(p.conn, p.weight, np.column_stack([p.values["normal"],
                                                          p.values["thickness"]]), n)
        frame += s
        weight += w
    with np.errstate(invalid="ignore", divide="ignore"):
        thickness = frame[:, 3] / weight
    covered = weight > 0
    normal = _unit(frame[:, :3])
    bad = covered & ~(np.linalg.norm(frame[:, :3], axis=1) > 1e-6 * weight)
    normal[bad] = [0.0, 0.0, 1.0]             # opposite normals cancel (inconsistent triangles)
    sums: dict[str, tuple[NDArray, NDArray]] = {}
    for p in parts:
        R = plane_turn(p.values["normal"][:, None, :], normal[p.conn])        # (E, nen, 3, 3)
        names = [k for k in p.values if k.startswith(("N", "M", "s_"))]
        G = np.stack([p.values[k] for k in names], axis=2)                   # (E, 6, F)
        turned_g = tensor_turn(R) @ G[:, None]                                # (E, nen, 6, F)
        turned_a1 = (R @ p.values["dir1"][:, None, :, None])[..., 0]          # (E, nen, 3)
        E, nen = p.conn.shape
        both = np.concatenate([turned_a1, np.swapaxes(turned_g, 2, 3).reshape(E, nen, -1)],
                              axis=2)
        total, w = average(p.conn, p.weight, both, n)
        _add(sums, "dir1", (total[:, :3], w))
        for k, name in enumerate(names):
            _add(sums, name, (total[:, 3 + 6 * k:9 + 6 * k], w))
    with np.errstate(invalid="ignore", divide="ignore"):
        avg = {k: v / w[:, None] for k, (v, w) in sums.items()}
    d = avg.pop("dir1")
    d -= np.sum(d * normal, axis=1)[:, None] * normal
    a1 = _unit(d)
    weak = covered & ~(np.linalg.norm(d, axis=1) > 1e-6)      # opposite axes 1 cancel
    a1[weak] = default_axis(normal[weak])
    a2 = np.cross(normal, a1)
    P = np.stack([a1, a2], axis=1)                            # (n, 2, 3)
    out = {"normal": normal, "dir1": a1, "dir2": a2, "thickness": thickness}
    for name, g in avg.items():
        out.update({f"{name}_{c}": g[:, i] for i, c in enumerate(TENSOR_COMPONENTS)})
        S = np.empty((n, 3, 3))
        S[:, _I, _J] = g
        S[:, _J, _I] = g
        local = P @ S @ np.swapaxes(P, 1, 2)                  # (n, 2, 2) in the nodal plane
        s = np.column_stack([local[:, 0, 0], local[:, 1, 1], local[:, 0, 1]])
        out.update({f"{name}_{c}": s[:, i] for i, c in enumerate(AXIS_COMPONENTS)})
        if name.startswith("s_"):
            inv = invariants(s)
            out.update({f"{name}_{c}": inv[i] for i, c in enumerate(INVARIANTS)})
            ang = inv[3]
            out[f"{name}_p1_dir"] = np.cos(ang)[:, None] * a1 + np.sin(ang)[:, None] * a2
    return out


def _add(sums: dict, name: str, pair: tuple[NDArray, NDArray]) -> None:
    """Add weighted sums ``(values, weights)`` to ``sums[name]``."""
    if name in sums:
        v, w = sums[name]
        sums[name] = (v + pair[0], w + pair[1])
    else:
        sums[name] = pair
