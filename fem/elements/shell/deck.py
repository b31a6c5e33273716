"""The deck entry of :class:`~fem.elements.shell.Shell` groups: ``[[elements]] type = "shell"``.

Its keys (:data:`KEYS`) and its construction (:func:`build`), registered with the class in
:mod:`fem.elements`. The thickness is a key of the entry, not a section: ``[[sections]]`` are beam
cross-sections (A, I, J, shapes) and none of their keys means anything to a shell, while a
homogeneous shell needs exactly one number. Layered (laminate) sections are a table of their own,
``[[shell_sections]]`` (layers of isotropic or orthotropic materials; classical lamination
theory, :mod:`fem.elements.shell.laminate`), named by ``section``; ``material`` and ``thickness``
stay the homogeneous shorthand, and an entry gives exactly one of the two. ``direction`` is the
vector whose projection on each facet is the axis 1 of the results' chosen axes (``s_top_11``,
..., :mod:`fem.elements.shell.results`) and, with a section, the axis the layer angles start
from; without it, global x (a homogeneous shell takes global z on facets to which x is
normal). ``results`` picks what each results frame holds of the group (nodal fields, cell
fields, element-frame components; :data:`~fem.elements.shell.RESULTS`).
``formulation`` picks the small-displacement :class:`~fem.elements.shell.Shell` (``"linear"``)
or the co-rotational :class:`~fem.elements.shell.corot.CorotShell` (``"corotational"``). Rows
and mesh cells may be triangles or quadrilaterals, which are split into two triangles each
(:mod:`fem.elements.shell.cells`).
"""

from __future__ import annotations

import numpy as np

from fem.elements.shell.cells import shell_rows
from fem.elements.shell.corot import CorotShell
from fem.elements.shell.group import DEFAULT_RESULTS, RESULTS, Shell, element_frames
from fem.elements.shell.laminate import facet_angles
from fem.errors import DeckError, did_you_mean
from fem.io.keys import MAX_DERIVED, Key, sci, shown
from fem.io.keys.entries import Entry, lookup
from fem.io.keys.groups import (
    CONNECTIVITY,
    FORMULATION,
    MESH_GROUP,
    GroupInputs,
    GroupPiece,
    material,
)
from fem.model import OrthotropicMaterial

TABLE = "elements"
PLURAL = "shells"
KEYS = [Key("material", "str", None, "material name (shells: with thickness, or give section)"),
        CONNECTIVITY, MESH_GROUP, FORMULATION,
        Key("thickness", "float", None, "shells: the (uniform) shell thickness, with material",
            positive=True),
        Key("section", "str", None, "section name (shells: a [[shell_sections]] layered "
            "section, instead of material and thickness)"),
        Key("direction", "vector", None, "shells: `[x, y, z]`, the vector whose projection on "
            "each triangle is axis 1 of the results' chosen axes (`s_top_11`, ..., `dir1`) and, "
            "with a section, the axis the layer angles start from; it must not be normal to a "
            "triangle (default `[1, 0, 0]`; a homogeneous shell then takes `[0, 0, 1]` on "
            "triangles within 0.1 degrees of normal to x)"),
        Key("results", "names", None, "shells: what each results frame holds, any of `nodal` "
            "(stresses, forces and moments in global and chosen axes, von Mises and principal "
            "stresses, thickness and the axes, averaged to the nodes: /steps/<s>/nodal/), "
            "`cells` (the same per triangle) and `element` (the element-frame components, "
            "`Nxx_element`, ...; laminates: each layer's material-axis components); default "
            "`[\"nodal\", \"element\"]`")]
NOT_USED: dict[str, str] = {}


def build(e: Entry, inputs: GroupInputs) -> GroupPiece:
    """A shell group from its validated deck entry."""
    v = e.values
    if inputs.dim != 3:
        raise DeckError(f"{e.where}.type", f"shells are 3D elements (6 DOFs per node), got "
                        f"model dim = {inputs.dim}; use [model] dim = 3")
    props, bounds = _section(e, inputs)
    rows = shell_rows(e, inputs.nodes)
    conn = rows.conn
    X = inputs.nodes.X[conn]                                          # (E, 3, 3)
    area = 0.5 * np.linalg.norm(np.cross(X[:, 1] - X[:, 0], X[:, 2] - X[:, 0]), axis=1)
    size = max(float(np.abs(inputs.nodes.X).max()), 1.0)
    flat = ~(area > 1e-12 * size**2)
    if np.any(flat):
        k = int(np.flatnonzero(flat)[0])
        ids = ", ".join(str(int(inputs.nodes.ids[i])) for i in conn[k])
        key, row = rows.row(k)
        shape = ("a triangle" if rows.kind[k] == "triangle" else "a quadrilateral whose two "
                 "triangles (split along the shorter diagonal) have")
        raise DeckError(key, f"expected {shape} of nonzero area, got nodes {ids} on one "
                        f"line (area {area[k]:.3g}) in {row}")
    _check_derived(e, bounds, area)
    if props.get("direction") is not None:
        _check_direction(e, inputs, rows, props["direction"])
    cls = CorotShell if v["formulation"] == "corotational" else Shell
    return GroupPiece(cls(v["name"], conn, inputs.nodes.X, 3, source=rows.source,
                          results=_results(e), **props), inputs.nodes)


def _section(e: Entry, inputs: GroupInputs) -> tuple[dict, tuple]:
    """The section keywords of :class:`Shell` (``E, nu, h, rho`` or ``section``; ``direction``).

    With the bounds :func:`_check_derived` checks: a modulus times the thickness, the
    thickness, the mass per area and the words that name the section in messages.
    """
    v = e.values
    homogeneous = [k for k in ("material", "thickness") if v[k] is not None]
    if v["section"] is not None:
        if homogeneous:
            raise DeckError(f"{e.where}.{homogeneous[0]}", f"expected either section (a layered "
                            f"[[shell_sections]] section) or material and thickness, got both "
                            f"section and {homogeneous[0]}")
        sec = lookup(inputs.shell_sections, v["section"], "shell section", f"{e.where}.section",
                     " (a [[shell_sections]] name)")
        direction = _direction(e, [1.0, 0.0, 0.0])
        stiff = sum(_modulus(ly.material) * ly.thickness for ly in sec.layers)
        rho_h = sum(ly.material.rho * ly.thickness for ly in sec.layers)
        return ({"section": sec, "direction": direction},
                (stiff, sec.thickness, rho_h, f"section '{sec.name}'"))
    if not homogeneous:
        raise DeckError(e.where, "expected material and thickness (a homogeneous shell) or "
                        "section = \"<name>\" (a layered [[shell_sections]] section), got neither")
    for key in ("material", "thickness"):
        if v[key] is None:
            what = "a number (the shell thickness)" if key == "thickness" else "a material name"
            raise DeckError(f"{e.where}.{key}", f"missing required key '{key}': expected {what}; "
                            "a homogeneous shell takes material and thickness (or give section)")
    mat = material(e, inputs)
    if not -1.0 < mat.nu < 0.5:
        raise DeckError(f"{e.where}.material", f"a shell needs a Poisson's ratio in (-1, 0.5), "
                        f"got material '{mat.name}' with nu = E/(2G) - 1 = {mat.nu:.6g}")
    h = v["thickness"]
    return ({"E": mat.E, "nu": mat.nu, "h": h, "rho": mat.rho, "direction": _direction(e, None)},
            (mat.E * h, h, mat.rho * h, f"material '{mat.name}'"))


def _results(e: Entry) -> tuple[str, ...]:
    """The entry's ``results`` words (default :data:`~fem.elements.shell.DEFAULT_RESULTS`)."""
    words = e.values["results"]
    if words is None:
        return DEFAULT_RESULTS
    if not words:
        raise DeckError(f"{e.where}.results", f"expected some of {', '.join(RESULTS)}, got an "
                        "empty list (a shell group's results frame would hold nothing of it)")
    for i, word in enumerate(words):
        if word not in RESULTS:
            raise DeckError(f"{e.where}.results[{i}]", f"expected one of {', '.join(RESULTS)}, "
                            f"got {shown(word)}" + did_you_mean(word, RESULTS))
        if word in words[:i]:
            raise DeckError(f"{e.where}.results[{i}]", f"'{word}' is given twice")
    return tuple(words)


def _direction(e: Entry, default):
    """The entry's ``direction`` as a (3,) array (``default`` if not given), checked nonzero."""
    given = e.values["direction"]
    if given is None:
        return None if default is None else np.array(default, dtype=float)
    direction = np.array(given, dtype=float)
    if len(direction) != 3 or not np.linalg.norm(direction) > 0:
        raise DeckError(f"{e.where}.direction", f"expected a nonzero vector [x, y, z], got "
                        f"{shown(given)}")
    return direction


def _check_derived(e: Entry, bounds: tuple, area) -> None:
    """Refuse element stiffnesses and masses beyond ``MAX_DERIVED`` (or not finite)."""
    stiff, h, rho_h, name = bounds
    with np.errstate(all="ignore"):
        derived = {"E thickness": np.full(len(area), np.float64(stiff)),
                   "E thickness^3": np.full(len(area), np.float64(stiff) * h**2),
                   "density thickness area": np.float64(rho_h) * area}
    for what, val in derived.items():
        bad = ~(np.abs(val) <= MAX_DERIVED)
        if np.any(bad):
            raise DeckError(e.where, f"expected element stiffnesses and masses of at most "
                            f"{sci(MAX_DERIVED)} (double precision), got {what} = "
                            f"{float(val[np.flatnonzero(bad)[0]]):.3g} ({name}); check the "
                            "units of the material and thickness")


def _modulus(mat) -> float:
    """The largest modulus of a layer material (for the bounds)."""
    if isinstance(mat, OrthotropicMaterial):
        return max(mat.E1, mat.E2, mat.G12)
    return mat.E


def _check_direction(e: Entry, inputs: GroupInputs, rows, direction) -> None:
    """Refuse a ``direction`` normal to a triangle (it has no in-plane projection there)."""
    T = element_frames(inputs.nodes.X[rows.conn])
    _, normal = facet_angles(T, direction)
    if np.any(normal):
        k = int(np.flatnonzero(normal)[0])
        key, row = rows.row(k)
        ids = ", ".join(str(int(inputs.nodes.ids[i])) for i in rows.conn[k])
        raise DeckError(f"{e.where}.direction", f"expected a direction not normal to any "
                        f"triangle (the results' axis 1 and the layer angles start from its "
                        f"projection), got "
                        f"{direction.tolist()}, normal to the triangle of nodes {ids} in {row} "
                        f"({key}); give another direction")
