"""Decks whose nodes and elements come from mesh files (meshio): Gmsh 2.2 and 4.1, Abaqus.

The mesh files are written here with meshio, the way meshio itself represents named groups:

* Gmsh: ``field_data[name] = [physical tag, dimension]`` plus ``cell_data["gmsh:physical"]`` and
  ``cell_data["gmsh:geometrical"]`` per cell block; format 4.1 also needs the node entities
  ``point_data["gmsh:dim_tags"]`` to write its ``$Entities`` section (without it the physical
  groups are lost). The frame reuses physical tag numbers across dimensions (tag 1 is both the
  "columns" curve group and the "base" point group), as Gmsh does.
* Abaqus: ``cell_sets`` (``*ELSET``) and ``point_sets`` (``*NSET``).

A mesh deck must give the same results as the same model written inline.
"""

import subprocess
import sys

import h5py
import meshio
import numpy as np
import pytest

# A portal frame, 4 x 3, each member split in two: columns 0-1-2 and 4-5-6, girder 2-3-4.
POINTS = np.array([[0, 0], [0, 1.5], [0, 3], [2, 3], [4, 3], [4, 1.5], [4, 0.0]])
COLUMNS = np.array([[0, 1], [1, 2], [4, 5], [5, 6]])
GIRDER = np.array([[2, 3], [3, 4]])
POINT_GROUPS = {"base": [0, 6], "corner": [2], "mid": [3]}

MATERIALS = """\
[[materials]]
name = "steel"
E = 210000.0
nu = 0.3

[[sections]]
name = "col"
A = 5.0
Iz = 3.0

[[sections]]
name = "gird"
A = 4.0
Iz = 2.0
"""

LOADS = """\
[[supports]]
nodes = "base"
fixed = ["all"]

[[loads]]
name = "wind"
nodes = "corner"
force = [1.0e3, 0]

[[loads]]
name = "snow"
nodes = "mid"
force = [0, -2.0e3]
moment = 300.0

[[steps]]
name = "s"
type = "static"
"""


def frame_deck(nodes_table, columns, girder):
    return (f"[model]\ndim = 2\nunits = \"N, m\"\n\n{MATERIALS}\n{nodes_table}\n"
            f"[[elements]]\nname = \"cols\"\ntype = \"beam\"\nmaterial = \"steel\"\n"
            f"section = \"col\"\n{columns}\n\n"
            f"[[elements]]\nname = \"top\"\ntype = \"beam\"\nmaterial = \"steel\"\n"
            f"section = \"gird\"\n{girder}\n\n{LOADS}")


def rows(conn):
    return "[" + ", ".join(f"[{a + 1}, {b + 1}]" for a, b in conn) + "]"


INLINE = frame_deck(
    "[nodes]\ncoordinates = [" + ", ".join(f"[{x:g}, {y:g}]" for x, y in POINTS) + "]\n\n"
    "[sets]\n" + "".join(f"{k} = [{', '.join(str(i + 1) for i in v)}]\n"
                         for k, v in POINT_GROUPS.items()),
    f"connectivity = {rows(COLUMNS)}", f"connectivity = {rows(GIRDER)}")


def mesh_deck(mesh_file, columns="columns", girder="girder"):
    return frame_deck(f"[nodes]\nmesh = \"{mesh_file}\"\n", f"mesh_group = \"{columns}\"",
                      f"mesh_group = \"{girder}\"")


def gmsh_frame(points=POINTS):
    """The frame as meshio represents a Gmsh mesh with physical groups (see module docstring)."""
    pts = np.column_stack([points, np.zeros(len(points))])
    cells = [("line", COLUMNS), ("line", GIRDER)] + [
        ("vertex", np.array(v).reshape(-1, 1)) for v in POINT_GROUPS.values()]
    # (dimension, physical tag) of each block; physical tags restart in each dimension
    groups = [("columns", 1, 1), ("girder", 1, 2), ("base", 0, 1), ("corner", 0, 2),
              ("mid", 0, 3)]
    field_data = {name: np.array([tag, dim]) for name, dim, tag in groups}
    physical = [np.full(len(c[1]), tag) for (_, _, tag), c in zip(groups, cells, strict=True)]
    geometrical = [np.full(len(c[1]), tag) for (_, _, tag), c in zip(groups, cells, strict=True)]
    # node entities for format 4.1: every cell block's (dimension, entity) must own a node
    dim_tags = np.array([[0, 1], [1, 1], [0, 2], [0, 3], [1, 2], [1, 1], [0, 1]])
    return meshio.Mesh(pts, cells, point_data={"gmsh:dim_tags": dim_tags},
                       cell_data={"gmsh:physical": physical, "gmsh:geometrical": geometrical},
                       field_data=field_data)


def abaqus_frame():
    cells = [("line", np.vstack([COLUMNS, GIRDER]))]
    return meshio.Mesh(POINTS, cells,
                       cell_sets={"columns": [np.arange(4)], "girder": [np.arange(4, 6)]},
                       point_sets={k: np.array(v) for k, v in POINT_GROUPS.items()})


def write_mesh(path, kind):
    if kind == "abaqus":
        abaqus_frame().write(path, file_format="abaqus")
    else:
        fmt, binary = {"gmsh22-ascii": ("gmsh22", False), "gmsh22-binary": ("gmsh22", True),
                       "gmsh41-ascii": ("gmsh", False), "gmsh41-binary": ("gmsh", True)}[kind]
        gmsh_frame().write(path, file_format=fmt, binary=binary)


def run_cli(tmp_path, text, name):
    (tmp_path / f"{name}.toml").write_text(text)
    p = subprocess.run([sys.executable, "-m", "fem.cli", "run", f"{name}.toml", "-o",
                        f"{name}.h5"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    return p


def results(tmp_path, text, name):
    p = run_cli(tmp_path, text, name)
    assert p.returncode == 0, p.stderr
    with h5py.File(tmp_path / f"{name}.h5") as f:
        out = {"X": f["model/nodes"][:], "ids": f["model/node_ids"][:],
               "sets": {k: v[:] for k, v in f["model/sets"].items()},
               "u": f["steps/s/displacement"][-1], "rot": f["steps/s/rotation_vector"][-1],
               "reaction": f["steps/s/reaction"][-1],
               "forces": {g: {q: d[-1] for q, d in f[f"steps/s/elements/{g}"].items()}
                          for g in f["steps/s/elements"]}}
    return out


def match(X_from, X_to):
    """Index into ``X_from`` of each row of ``X_to`` (same coordinates)."""
    d = np.linalg.norm(X_from[None, :, :] - X_to[:, None, :], axis=2)
    idx = np.argmin(d, axis=1)
    assert np.all(d[np.arange(len(X_to)), idx] < 1e-12)
    return idx


@pytest.fixture(scope="module")
def inline(tmp_path_factory):
    return results(tmp_path_factory.mktemp("inline"), INLINE, "inline")


@pytest.mark.parametrize("kind", ["gmsh22-ascii", "gmsh22-binary", "gmsh41-ascii",
                                  "gmsh41-binary", "abaqus"])
def test_frame_from_a_mesh_equals_the_inline_frame(tmp_path, inline, kind):
    name = "frame.inp" if kind == "abaqus" else "frame.msh"
    write_mesh(tmp_path / name, kind)
    r = results(tmp_path, mesh_deck(name), "mesh")
    assert len(r["X"]) == len(inline["X"])
    k = match(r["X"], inline["X"])                 # Gmsh 4.1 reorders nodes by entity
    scale = np.abs(inline["u"]).max()
    assert scale > 0
    np.testing.assert_allclose(r["u"][k], inline["u"], rtol=0, atol=1e-12 * scale)
    np.testing.assert_allclose(r["rot"][k], inline["rot"], rtol=0,
                               atol=1e-12 * np.abs(inline["rot"]).max())
    np.testing.assert_allclose(r["reaction"][k], inline["reaction"], rtol=0,
                               atol=1e-10 * np.abs(inline["reaction"]).max())
    for g, qs in inline["forces"].items():
        for q, v in qs.items():
            np.testing.assert_allclose(r["forces"][g][q], v, rtol=0,
                                       atol=1e-10 * np.abs(v).max() + 1e-12)
    # the mesh's groups are node sets of the results file, holding the same nodes
    for s, ids in POINT_GROUPS.items():
        got = r["X"][np.searchsorted(r["ids"], r["sets"][s])]
        np.testing.assert_array_equal(np.sort(got, axis=0), np.sort(inline["X"][ids], axis=0))
    for s, conn in (("columns", COLUMNS), ("girder", GIRDER)):
        got = r["X"][np.searchsorted(r["ids"], r["sets"][s])]
        want = np.column_stack([POINTS[np.unique(conn)], np.zeros(len(np.unique(conn)))])
        np.testing.assert_array_equal(np.sort(got, axis=0), np.sort(want, axis=0))


def test_physical_tags_are_matched_with_their_dimension(tmp_path):
    """Tag 1 is both a curve group and a point group: each keeps its own cells."""
    from fem.io import mesh

    gmsh_frame().write(tmp_path / "frame.msh", file_format="gmsh22", binary=False)
    m = mesh.read(str(tmp_path / "frame.msh"))
    assert sorted(m.line_sets) == ["columns", "girder"]
    np.testing.assert_array_equal(m.lines[m.line_sets["columns"]], COLUMNS)
    np.testing.assert_array_equal(m.lines[m.line_sets["girder"]], GIRDER)
    np.testing.assert_array_equal(m.node_sets["base"], [0, 6])
    assert m.cell_types == {"columns": ["line"], "girder": ["line"], "base": ["vertex"],
                            "corner": ["vertex"], "mid": ["vertex"]}


def cantilever_gmsh(n, L):
    x = np.linspace(0.0, L, n + 1)
    pts = np.column_stack([x, np.zeros(n + 1), np.zeros(n + 1)])
    lines = np.column_stack([np.arange(n), np.arange(1, n + 1)])
    cells = [("line", lines), ("vertex", [[0]]), ("vertex", [[n]])]
    groups = [(1, 1), (0, 1), (0, 2)]                 # (dimension, tag)
    dim_tags = np.array([[0, 1]] + [[1, 1]] * (n - 1) + [[0, 2]])
    return meshio.Mesh(pts, cells, point_data={"gmsh:dim_tags": dim_tags},
                       cell_data={"gmsh:physical": [np.full(len(c[1]), t) for (_, t), c in
                                                    zip(groups, cells, strict=True)],
                                  "gmsh:geometrical": [np.full(len(c[1]), t) for (_, t), c in
                                                       zip(groups, cells, strict=True)]},
                       field_data={"beam": np.array([1, 1]), "clamp": np.array([1, 0]),
                                   "tip": np.array([2, 0])})


CANTILEVER = """\
[model]
dim = {dim}

[[materials]]
name = "alu"
E = 70000.0
G = 26000.0

[[sections]]
name = "rod"
A = 80.0
Iy = 900.0
Iz = 700.0
J = 1500.0

[nodes]
mesh = "{mesh}"

[[elements]]
name = "arm"
type = "beam"
material = "alu"
section = "rod"
mesh_group = "beam"

[[supports]]
nodes = "clamp"
fixed = ["all"]

[[loads]]
name = "P"
nodes = "tip"
force = {force}

[[steps]]
name = "s"
type = "static"
"""


@pytest.mark.parametrize("fmt", ["gmsh22", "gmsh"])
def test_cantilever_from_gmsh_matches_closed_form_2d(tmp_path, fmt):
    L, P, E, Iz = 500.0, -40.0, 70000.0, 700.0
    cantilever_gmsh(6, L).write(tmp_path / "arm.msh", file_format=fmt, binary=False)
    r = results(tmp_path, CANTILEVER.format(dim=2, mesh="arm.msh", force=f"[0, {P}]"), "c")
    tip = int(np.argmax(r["X"][:, 0]))
    assert r["X"][tip, 0] == L
    np.testing.assert_allclose(r["u"][tip, 1], P * L**3 / (3 * E * Iz), rtol=1e-12)
    np.testing.assert_allclose(r["rot"][tip, 2], P * L**2 / (2 * E * Iz), rtol=1e-12)
    assert abs(r["u"][tip, 0]) < 1e-12 * abs(r["u"][tip, 1])


def test_cantilever_from_abaqus_matches_closed_form_3d(tmp_path):
    L, P, E, Iy = 500.0, 25.0, 70000.0, 900.0
    n = 5
    pts = np.column_stack([np.linspace(0, L, n + 1), np.zeros(n + 1), np.zeros(n + 1)])
    lines = np.column_stack([np.arange(n), np.arange(1, n + 1)])
    meshio.Mesh(pts, [("line", lines)], cell_sets={"beam": [np.arange(n)]},
                point_sets={"clamp": np.array([0]), "tip": np.array([n])}).write(
        tmp_path / "arm.inp", file_format="abaqus")
    r = results(tmp_path, CANTILEVER.format(dim=3, mesh="arm.inp", force=f"[0, 0, {P}]"), "c")
    # local y = global Y and local z = global Z for a member along X: Iy governs the x-z plane
    np.testing.assert_allclose(r["u"][n, 2], P * L**3 / (3 * E * Iy), rtol=1e-12)
    np.testing.assert_allclose(r["rot"][n, 1], -P * L**2 / (2 * E * Iy), rtol=1e-12)


# --- errors ---------------------------------------------------------------------------------------

def error(tmp_path, text, *fragments):
    p = run_cli(tmp_path, text, "bad")
    assert p.returncode == 2, p.stdout + p.stderr
    assert "Traceback" not in p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1, p.stderr
    for f in fragments:
        assert f in lines[0], f"{f!r} not in {lines[0]!r}"
    return lines[0]


def deck_line(text, snippet):
    return next(i + 1 for i, x in enumerate(text.splitlines()) if snippet in x)


def test_mesh_file_not_found(tmp_path):
    text = mesh_deck("frame.msh")
    error(tmp_path, text, "nodes.mesh", "'frame.msh'", "there is no file",
          f"(line {deck_line(text, 'mesh =')})")


def test_mesh_group_that_does_not_exist_lists_the_groups(tmp_path):
    write_mesh(tmp_path / "frame.msh", "gmsh22-ascii")
    text = mesh_deck("frame.msh", columns="colums")
    error(tmp_path, text, "elements[0].mesh_group", "mesh group 'colums' does not exist",
          "did you mean 'columns'?", "base (vertex), columns (line), corner (vertex), "
          "girder (line), mid (vertex)", f"(line {deck_line(text, 'colums')})")


def test_mesh_group_without_line_cells(tmp_path):
    write_mesh(tmp_path / "frame.inp", "abaqus")
    text = mesh_deck("frame.inp", girder="mid")
    error(tmp_path, text, "elements[1].mesh_group", "mesh group 'mid' has no 2-node line cells",
          "points only", "columns (line)")


def test_node_set_missing_from_the_mesh(tmp_path):
    write_mesh(tmp_path / "frame.msh", "gmsh41-ascii")
    text = mesh_deck("frame.msh").replace('nodes = "base"', 'nodes = "bases"')
    error(tmp_path, text, "supports[0].nodes", "unknown node set 'bases'",
          "did you mean 'base'?", "known: base, cols, columns, corner, girder, mid, top")


def test_mesh_file_that_meshio_cannot_read(tmp_path):
    (tmp_path / "frame.msh").write_text("$MeshFormat\nthis is not a mesh\n")
    error(tmp_path, mesh_deck("frame.msh"), "nodes.mesh", "cannot use the mesh file 'frame.msh'",
          "meshio could not read it")


def test_mesh_with_z_in_a_2d_model(tmp_path):
    m = gmsh_frame()
    m.points[3, 2] = 0.5
    m.write(tmp_path / "frame.msh", file_format="gmsh22", binary=False)
    error(tmp_path, mesh_deck("frame.msh"), "nodes.mesh", "expected z = 0",
          "got z = 0.5 at mesh node 4")


def test_mesh_group_with_inline_coordinates(tmp_path):
    text = INLINE.replace(f"connectivity = {rows(GIRDER)}", 'mesh_group = "girder"')
    error(tmp_path, text, "elements[1].mesh_group", "expected [nodes] mesh = \"file\"")


# --- limits: numbers, names and repeated cells in mesh files ----------------------------------

def load_error(tmp_path, text, *fragments):
    """Load ``text`` as ``tmp_path/bad.toml`` in-process: one DeckError with each fragment."""
    from fem.errors import DeckError
    from fem.io import deck as deck_io

    with pytest.raises(DeckError) as info:
        deck_io.loads(text, str(tmp_path / "bad.toml"))
    msg = str(info.value)
    assert len(msg.splitlines()) == 1, msg
    for f in fragments:
        assert f in msg, f"{f!r} not in {msg!r}"
    return msg


@pytest.mark.parametrize("value, got", [(np.nan, "nan"), (np.inf, "inf"), (1e300, "1e+300")])
def test_mesh_point_that_is_not_finite_or_too_large(tmp_path, value, got):
    m = gmsh_frame()
    m.points[3, 1] = value
    m.write(tmp_path / "frame.msh", file_format="gmsh22", binary=False)
    text = mesh_deck("frame.msh")
    load_error(tmp_path, text, "nodes.mesh", f"(line {deck_line(text, 'mesh =')})",
               "expected finite coordinates", f"got y = {got} at mesh node 4")


@pytest.mark.parametrize("kind", ["gmsh22-ascii", "abaqus"])
def test_mesh_group_whose_name_is_not_a_valid_set_name(tmp_path, kind):
    path = tmp_path / ("frame.inp" if kind == "abaqus" else "frame.msh")
    if kind == "abaqus":
        m = abaqus_frame()
        m.point_sets["mid/span"] = m.point_sets.pop("mid")
        m.write(path, file_format="abaqus")
    else:
        m = gmsh_frame()
        m.field_data["mid/span"] = m.field_data.pop("mid")
        m.write(path, file_format="gmsh22", binary=False)
    text = mesh_deck(path.name).replace('nodes = "mid"', 'nodes = "corner"')
    load_error(tmp_path, text, "nodes.mesh", f"(line {deck_line(text, 'mesh =')})",
               "mesh group 'mid/span'", "letters (A-Z, a-z), digits, _ and -")


def test_mesh_group_with_a_repeated_line_cell(tmp_path):
    cells = [("line", np.vstack([COLUMNS, GIRDER, GIRDER[::-1, ::-1][:1]]))]
    m = meshio.Mesh(POINTS, cells, cell_sets={"columns": [np.arange(4)],
                                              "girder": [np.arange(4, 7)]},
                    point_sets={k: np.array(v) for k, v in POINT_GROUPS.items()})
    m.write(tmp_path / "frame.inp", file_format="abaqus")
    text = mesh_deck("frame.inp")
    load_error(tmp_path, text, "elements[1].mesh_group", "line cells 2 and 3 of the group",
               "joining nodes 4 and 5", "the same nodes reversed",
               f"(line {deck_line(text, 'girder')})")
