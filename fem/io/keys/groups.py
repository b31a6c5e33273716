"""What every element family's deck module builds a group with: keys, connectivity, checks.

An element family declares its deck keys and its construction in its own module
(``fem/elements/<family>_deck.py``, registered in :mod:`fem.elements`); the pieces they share live
here: the keys many families take (:data:`CONNECTIVITY`, :data:`MESH_GROUP`, :data:`MATERIAL`,
...), the inputs a construction reads (:class:`GroupInputs`) and the piece it returns
(:class:`GroupPiece`), the element rows of ``connectivity`` or of a mesh group's cells of the
family's cell type, and the checks of rows, lengths, stiffnesses and memory. Nothing here knows a
family: the orchestrator (:func:`fem.io.deck.from_dict`) calls each family's ``build``. A deck
leaf of :mod:`fem.io.keys` (it imports nothing of fem but its errors, the model and the keys), so
that the families' deck modules, in the physics layer, build their groups with it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from fem.errors import DeckError, did_you_mean
from fem.io.keys import (
    BYTES_PER_ELEMENT,
    BYTES_PER_NODE,
    MAX_DERIVED,
    MAX_NODE_ID,
    REQUIRED,
    Key,
    sci,
    shown,
)
from fem.io.keys.entries import Entry, lookup
from fem.io.keys.nodes import Nodes
from fem.model import Material, OrthotropicMaterial, Section, ShellSection

# --- keys that several families take (each family lists the ones it uses) ---------------------
MATERIAL = Key("material", "str", REQUIRED, "material name")
SECTION = Key("section", "str", REQUIRED, "section name")
CONNECTIVITY = Key("connectivity", "matrix", None, "`[[node_id, node_id], ...]`: the nodes of "
                   "each element, in the family's order (give connectivity or mesh_group)")
MESH_GROUP = Key("mesh_group", "str", None, "the cells of this mesh physical group / element set "
                 "of the family's cell type (lines for trusses and beams)")
DIVISIONS = Key("divisions", "int", 1, "split each connectivity row into this many equal "
                "elements (the model must fit in memory, see Names, numbers and sizes)",
                positive=True)
FORMULATION = Key("formulation", "str", "linear", "linear or corotational",
                  choices=("linear", "corotational"))
#: the keys of every family of 2-node line elements (trusses, beams), in this order
LINE_KEYS = [MATERIAL, SECTION, CONNECTIVITY, MESH_GROUP, DIVISIONS, FORMULATION]
CELL_NODES = {"vertex": 1, "line": 2, "triangle": 3, "quad": 4, "tetra": 4, "hexahedron": 8}


@dataclass(frozen=True)
class GroupInputs:
    """What a family's construction reads: everything built before the element groups.

    ``n_elements`` counts the elements of the groups built so far (for the memory estimate),
    ``n_internal`` their element-internal unknowns numbered in every step (superelements':
    where the next group's begin, :mod:`fem.dofs`); ``base_dir`` is the deck's folder (files a
    family reads are relative to it).
    """

    dim: int
    materials: Mapping[str, Material]
    sections: Mapping[str, Section]
    nodes: Nodes
    n_elements: int = 0
    n_internal: int = 0
    base_dir: str = "."
    #: the ``[[shell_sections]]`` (layered shell sections, :class:`fem.model.ShellSection`)
    shell_sections: Mapping[str, ShellSection] = field(default_factory=dict)
    #: the element groups built before this table's (connectors check their nodes' DOFs)
    before: tuple = ()


@dataclass(frozen=True)
class GroupPiece:
    """What a family's construction returns: its group, and the node table with its new nodes."""

    group: object
    nodes: Nodes


def material(e: Entry, inputs: GroupInputs) -> Material:
    """The isotropic material an entry names (``material``)."""
    mat = lookup(inputs.materials, e.values["material"], "material", f"{e.where}.material")
    if isinstance(mat, OrthotropicMaterial):
        raise DeckError(f"{e.where}.material", f"expected an isotropic material (E with nu or "
                        f"G), got the orthotropic material '{mat.name}': orthotropic materials "
                        "are for the layers of [[shell_sections]] (give a shell section = "
                        "\"<name>\" instead)")
    return mat


def section(e: Entry, inputs: GroupInputs) -> Section:
    """The section an entry names (``section``)."""
    return lookup(inputs.sections, e.values["section"], "section", f"{e.where}.section")


# --- element rows -------------------------------------------------------------------------------

def rows(e: Entry, nodes: Nodes, nen: int, cell_type: str) -> tuple[NDArray, str]:
    """(E, nen) node indices of a group and the deck key of its rows (for messages).

    From ``connectivity`` (rows of ``nen`` node ids) or ``mesh_group`` (the group's cells of
    ``cell_type``), checked: known nodes, no node twice in a row, no element twice.
    """
    v = e.values
    if (v["connectivity"] is None) == (v["mesh_group"] is None):
        got = "both" if v["mesh_group"] is not None else "neither"
        raise DeckError(e.where, f"expected exactly one of connectivity and mesh_group, got {got}")
    if v["mesh_group"] is not None:
        where = f"{e.where}.mesh_group"
        conn = _mesh_cells(nodes, v["mesh_group"], where, nen, cell_type)
    else:
        where = f"{e.where}.connectivity"
        what = "[node, node] row" if nen == 2 else f"row of {nen} node ids"
        conn = node_rows(nodes, v["connectivity"], where, what, nen)
    _distinct(nodes, conn, where, cell_type)
    _duplicates(nodes, conn, where, cell_type)
    return conn, where


def _mesh_cells(nodes: Nodes, name: str, where: str, nen: int, cell_type: str) -> NDArray:
    """The cells of ``cell_type`` of mesh group ``name``; a deck error names what it has."""
    mesh = nodes.mesh
    if mesh is None:
        raise DeckError(where, "expected [nodes] mesh = \"file\" for the mesh groups to come "
                        "from, got inline [nodes] coordinates")
    conn = mesh.group_cells(name, cell_type)
    kind = f"{nen}-node {cell_type} cells"
    if conn is None:
        if name in mesh.node_sets:
            what = f"has no {kind} (it has {mesh.describe_groups_of(name)})"
        else:
            what = "does not exist" + did_you_mean(name, mesh.node_sets)
        raise DeckError(where, f"mesh group {shown(name)} {what}; expected a group of {kind}; "
                        f"the mesh's groups are: {mesh.describe_groups()}")
    return conn


def node_rows(nodes: Nodes, given: list, where: str, what: str, nen: int = 2) -> NDArray:
    """(E, nen) node indices of deck rows ``[[id, id, ...], ...]`` (connectivity, tie pairs).

    Each row holds ``nen`` node ids (integers, possibly written 2.0); an unknown id is a deck
    error naming the row, as is an empty list (``what`` names a row in the message).
    """
    if not given:
        raise DeckError(where, f"expected at least one {what}, got an empty list")
    count = "two" if nen == 2 else str(nen)
    bad = next((i for i, row in enumerate(given) if len(row) != nen), None)
    if bad is not None:
        raise DeckError(f"{where}[{bad}]", f"expected {count} node ids, got {shown(given[bad])}")
    ids = np.array(given, dtype=float)                  # finite and bounded (keys.check_values)
    frac = np.flatnonzero(np.any(ids != np.round(ids), axis=1))
    if len(frac):
        raise DeckError(f"{where}[{frac[0]}]", f"expected {count} node ids (integers), got "
                        f"{shown(given[frac[0]])}")
    known = np.abs(ids) <= MAX_NODE_ID
    conn = np.where(known, nodes.lookup(np.where(known, ids, 0).astype(np.int64)), -1)
    missing = np.argwhere(conn < 0)
    if len(missing):
        i, k = missing[0]
        raise DeckError(f"{where}[{i}]", f"unknown node {shown(given[i][k])}: no node has this "
                        f"id; the node ids are {nodes.known_ids()}")
    return conn.astype(np.int64)


def node_pairs(nodes: Nodes, given: list, where: str, what: str) -> NDArray:
    """(E, 2) node indices of rows of two node ids (see :func:`node_rows`)."""
    return node_rows(nodes, given, where, what, 2)


def row_key(where: str, k: int, cell_type: str = "line") -> tuple[str, str]:
    """The deck key and the words for row ``k`` of a group (``connectivity`` or ``mesh_group``)."""
    if where.endswith("mesh_group"):
        return where, f"{cell_type} cell {k + 1} of the group"
    return f"{where}[{k}]", "the row"


def _distinct(nodes: Nodes, conn: NDArray, where: str, cell_type: str) -> None:
    """Refuse a row that names one node twice."""
    ordered = np.sort(conn, axis=1)
    same = np.flatnonzero(np.any(ordered[:, 1:] == ordered[:, :-1], axis=1))
    if len(same):
        k = int(same[0])
        twice = ordered[k, 1:][ordered[k, 1:] == ordered[k, :-1]][0]
        key, row = row_key(where, k, cell_type)
        count = "two" if conn.shape[1] == 2 else str(conn.shape[1])
        raise DeckError(key, f"expected {count} different nodes, got node {nodes.ids[twice]} "
                        f"twice in {row}")


def _duplicates(nodes: Nodes, conn: NDArray, where: str, cell_type: str) -> None:
    """Refuse a row that repeats an earlier one (in any order): it would double the element."""
    if len(conn) < 2:
        return
    ordered = np.sort(conn, axis=1)
    _, first, inverse = np.unique(ordered, axis=0, return_index=True, return_inverse=True)
    inverse = inverse.ravel()
    again = np.flatnonzero(first[inverse] != np.arange(len(conn)))
    if len(again):
        k = int(again[0])
        j = int(first[inverse[k]])
        ids = [int(nodes.ids[x]) for x in conn[j]]
        if where.endswith("mesh_group"):
            words = f"{cell_type} cells {j + 1} and {k + 1} of the group"
        else:
            words = f"rows {where.rsplit('.', 1)[1]}[{j}] and [{k}]"
        if len(ids) == 2:
            joined = f"nodes {ids[0]} and {ids[1]}"
            order = "the same nodes" if conn[j, 0] == conn[k, 0] else "the same nodes reversed"
        else:
            joined = "nodes " + ", ".join(str(i) for i in ids)
            order = "the same nodes" if np.array_equal(conn[j], conn[k]) else "in another order"
        raise DeckError(where if where.endswith("mesh_group") else f"{where}[{k}]",
                        f"expected each element once, got {words} both joining {joined} "
                        f"({order}): a repeated element doubles the stiffness; remove one")


# --- two-node line elements (trusses, beams) --------------------------------------------------

def line_lengths(nodes: Nodes, conn: NDArray, where: str) -> NDArray:
    """(E,) lengths of line elements; a zero-length element is a deck error naming its row."""
    X = nodes.X
    lengths = np.linalg.norm(X[conn[:, 1]] - X[conn[:, 0]], axis=1)
    size = max(float(np.abs(X).max()), 1.0)
    tiny = lengths <= 1e-12 * size
    if np.any(tiny):
        k = int(np.flatnonzero(tiny)[0])
        a, c = nodes.ids[conn[k, 0]], nodes.ids[conn[k, 1]]
        d = nodes.dim
        if lengths[k] == 0:
            got = f"nodes {a} and {c}, which are both at {X[conn[k, 0], :d].tolist()}"
        else:
            got = (f"nodes {a} and {c}, {lengths[k]:.3g} apart (at "
                   f"{X[conn[k, 0], :d].tolist()} and {X[conn[k, 1], :d].tolist()}), "
                   f"less than 1e-12 of the model's size ({size:.3g}, at least 1)")
        raise DeckError(row_key(where, k)[0], f"expected nodes at different positions, got "
                        f"{got}: the element would have zero length")
    return lengths


def check_derived(e: Entry, nodes: Nodes, conn: NDArray, L: NDArray, mat: Material,
                  sec: Section, q: dict[str, NDArray]) -> None:
    """Refuse element stiffnesses and masses ``q`` beyond ``MAX_DERIVED`` (or not finite).

    ``q`` maps a formula (``"E A / L"``) to its values per row, ``L`` the element lengths (after
    ``divisions``); the first bad one is reported.
    """
    for what, val in q.items():
        bad = ~(np.abs(val) <= MAX_DERIVED)
        if np.any(bad):
            k = int(np.flatnonzero(bad)[0])
            a, c = (int(nodes.ids[x]) for x in conn[k])
            raise DeckError(e.where, f"expected element stiffnesses and masses of at most "
                            f"{sci(MAX_DERIVED)} (double precision), got {what} = "
                            f"{float(val[k]):.3g} for the elements between nodes {a} and {c} "
                            f"(L = {float(L[k]):.3g}, material '{mat.name}', section "
                            f"'{sec.name}'); check the units of the material and section")


@dataclass(frozen=True)
class LineGroup:
    """What :func:`line_group` gives a family of line elements to build its group with."""

    material: Material
    section: Section
    conn: NDArray           # (E, 2) node indices, after ``divisions``
    nodes: Nodes            # the node table with the nodes ``divisions`` made


def line_group(e: Entry, inputs: GroupInputs, nen: int, cell_type: str,
               derived: Callable[[Material, Section, NDArray], dict[str, NDArray]],
               check: Callable[[Material, Section], None] | None = None) -> LineGroup:
    """The shared opening of a line family's ``build``: material, section, rows, checks, nodes.

    Looks up the material and section (then calls ``check(mat, sec)``, the family's own checks
    of them and of the entry), reads the rows, refuses zero lengths and element stiffnesses and
    masses ``derived(mat, sec, L)`` beyond the bounds (:func:`check_derived`), and splits the
    rows into ``divisions``.
    """
    mat, sec = material(e, inputs), section(e, inputs)
    if check is not None:
        check(mat, sec)
    conn, where = rows(e, inputs.nodes, nen, cell_type)
    lengths = line_lengths(inputs.nodes, conn, where)
    with np.errstate(all="ignore"):              # an overflow is the error reported here
        L = lengths / e.values["divisions"]
        check_derived(e, inputs.nodes, conn, L, mat, sec, derived(mat, sec, L))
    conn, nodes = subdivided(e, inputs, conn)
    return LineGroup(mat, sec, conn, nodes)


def subdivided(e: Entry, inputs: GroupInputs, conn: NDArray) -> tuple[NDArray, Nodes]:
    """The rows split into ``divisions`` equal elements, and the node table with the new nodes.

    Refuses first a model too large for this machine's memory. Vectorized over rows and
    divisions; the new nodes are numbered row by row, from the first node of the row to the
    second, with ids after the largest; their ``origin`` records the two end ids and the
    position ``k`` of ``n`` of each.
    """
    n = e.values["divisions"]
    _check_size(e, inputs, len(conn))
    if n == 1:
        return conn, inputs.nodes
    nodes = inputs.nodes
    count = len(conn)
    k = np.arange(1, n)                                         # (n - 1,)
    xa, xc = nodes.X[conn[:, 0]], nodes.X[conn[:, 1]]           # (rows, 3)
    X = xa[:, None, :] + (xc - xa)[:, None, :] * k[None, :, None] / n
    origin = np.empty((count, n - 1, 4), dtype=np.int64)
    origin[:, :, 0] = nodes.ids[conn[:, 0]][:, None]
    origin[:, :, 1] = nodes.ids[conn[:, 1]][:, None]
    origin[:, :, 2] = k[None, :]
    origin[:, :, 3] = n
    nodes, new = nodes.with_nodes(X.reshape(-1, 3), origin.reshape(-1, 4))
    new = new.reshape(count, n - 1)
    chain = np.column_stack([conn[:, 0], new, conn[:, 1]])     # (rows, n + 1)
    return np.stack([chain[:, :-1], chain[:, 1:]], axis=-1).reshape(-1, 2), nodes


def _check_size(e: Entry, inputs: GroupInputs, count: int) -> None:
    """Refuse ``divisions`` that make a model too large for this machine's memory (estimated)."""
    n = e.values["divisions"]
    new_nodes, elements = count * (n - 1), count * n
    total = inputs.n_elements + elements
    nodes = len(inputs.nodes.X) + new_nodes
    need = nodes * BYTES_PER_NODE + total * BYTES_PER_ELEMENT
    memory = machine_memory()
    if need > memory:
        raise DeckError(f"{e.where}.divisions", f"expected a model that fits in this machine's "
                        f"memory ({_bytes(memory)}), got divisions = {n} of "
                        f"{count} row{'s' if count > 1 else ''}: "
                        f"{elements} elements and {new_nodes} new nodes in this group, "
                        f"{total} elements and {nodes} nodes in all, about {_bytes(need)} "
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
