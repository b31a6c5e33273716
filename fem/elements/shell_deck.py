"""The deck entry of :class:`~fem.elements.shell.Shell` groups: ``[[elements]] type = "shell"``.

Its keys (:data:`KEYS`) and its construction (:func:`build`), registered with the class in
:mod:`fem.elements`. The thickness is a key of the entry, not a section: ``[[sections]]`` are beam
cross-sections (A, I, J, shapes) and none of their keys means anything to a shell, while a
homogeneous shell needs exactly one number; a shell section table can come with the layered
(laminate) sections of issue 12, and ``thickness`` stays the one-layer shorthand.
``formulation`` picks the small-displacement :class:`~fem.elements.shell.Shell` (``"linear"``)
or the co-rotational :class:`~fem.elements.shell_corot.CorotShell` (``"corotational"``).
"""

from __future__ import annotations

import numpy as np

from fem.elements.shell import Shell
from fem.elements.shell_corot import CorotShell
from fem.errors import DeckError
from fem.io.build import Entry
from fem.io.build_elements import (
    CONNECTIVITY,
    FORMULATION,
    MATERIAL,
    MESH_GROUP,
    GroupInputs,
    GroupPiece,
    material,
    row_key,
    rows,
)
from fem.io.keys import MAX_DERIVED, REQUIRED, Key, sci

TABLE = "elements"
PLURAL = "shells"
KEYS = [MATERIAL, CONNECTIVITY, MESH_GROUP, FORMULATION,
        Key("thickness", "float", REQUIRED, "shells: the (uniform) shell thickness",
            positive=True)]
NOT_USED: dict[str, str] = {}


def build(e: Entry, inputs: GroupInputs) -> GroupPiece:
    """A shell group from its validated deck entry."""
    v = e.values
    if inputs.dim != 3:
        raise DeckError(f"{e.where}.type", f"shells are 3D elements (6 DOFs per node), got "
                        f"model dim = {inputs.dim}; use [model] dim = 3")
    mat = material(e, inputs)
    if not -1.0 < mat.nu < 0.5:
        raise DeckError(f"{e.where}.material", f"a shell needs a Poisson's ratio in (-1, 0.5), "
                        f"got material '{mat.name}' with nu = E/(2G) - 1 = {mat.nu:.6g}")
    conn, where = rows(e, inputs.nodes, Shell.nen, Shell.cell_type)
    X = inputs.nodes.X[conn]                                          # (E, 3, 3)
    area = 0.5 * np.linalg.norm(np.cross(X[:, 1] - X[:, 0], X[:, 2] - X[:, 0]), axis=1)
    size = max(float(np.abs(inputs.nodes.X).max()), 1.0)
    flat = ~(area > 1e-12 * size**2)
    if np.any(flat):
        k = int(np.flatnonzero(flat)[0])
        ids = ", ".join(str(int(inputs.nodes.ids[i])) for i in conn[k])
        key, row = row_key(where, k, Shell.cell_type)
        raise DeckError(key, f"expected a triangle of nonzero area, got nodes {ids} on one "
                        f"line (area {area[k]:.3g}) in {row}")
    h = v["thickness"]
    with np.errstate(all="ignore"):
        derived = {"E thickness": np.full(len(conn), mat.E * h),
                   "E thickness^3": np.full(len(conn), mat.E * h**3),
                   "density thickness area": mat.rho * h * area}
    for what, val in derived.items():
        bad = ~(np.abs(val) <= MAX_DERIVED)
        if np.any(bad):
            raise DeckError(e.where, f"expected element stiffnesses and masses of at most "
                            f"{sci(MAX_DERIVED)} (double precision), got {what} = "
                            f"{float(val[np.flatnonzero(bad)[0]]):.3g} (material "
                            f"'{mat.name}'); check the units of the material and thickness")
    cls = CorotShell if v["formulation"] == "corotational" else Shell
    return GroupPiece(cls(v["name"], conn, inputs.nodes.X, 3, E=mat.E, nu=mat.nu, h=h,
                          rho=mat.rho), inputs.nodes)
