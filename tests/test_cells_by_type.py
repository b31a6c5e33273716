"""A family that is not a line, plugged in from outside fem: cells by type from mesh to XDMF.

The constant-strain triangle membrane below (plane stress, 3 nodes, DOFs ux, uy) and its deck
entry are defined here and registered through :func:`fem.elements.register` only; nothing in
``fem/io`` knows it. A Gmsh mesh of triangles written by meshio feeds its ``mesh_group``; a linear
static step pulls the plate with a uniform edge traction, and the patch test (uniform stress
equal to the traction, the exact linear displacement field) must hold to 1e-10; the results file
and the XDMF must carry Triangle cells with the mesh's connectivity, and with a grounded spring
beside the membrane, a Mixed topology that ParaView reads as one grid of both cell types.
"""

import shutil
import subprocess
import textwrap
import xml.etree.ElementTree as ET

import h5py
import meshio
import numpy as np
import pytest
from results_checks import read_xdmf

from fem.elements import register, unregister
from fem.elements.base import ElementGroup
from fem.errors import DeckError
from fem.io import deck as deck_io
from fem.io.keys import REQUIRED, Key
from fem.io.keys.groups import (
    CONNECTIVITY,
    MATERIAL,
    MESH_GROUP,
    GroupPiece,
    material,
    rows,
)
from fem.io.schema import reference_markdown, table_keys
from fem.run import run


class Membrane(ElementGroup):
    """Constant-strain triangles in plane stress, vectorized over the batch (linear)."""

    type_name = "membrane"
    nen = 3
    cell_type = "triangle"
    dof_names = ("ux", "uy")
    stress_names = ("sxx", "syy", "sxy")

    def __init__(self, name, conn, X, dim, E, nu, t, rho=0.0):
        super().__init__(name, conn, X, dim)
        self.formulation = "linear"
        x, y = self.X[:, :, 0], self.X[:, :, 1]                       # (E, 3)
        b = np.roll(y, -1, axis=1) - np.roll(y, -2, axis=1)           # y_j - y_k
        c = np.roll(x, -2, axis=1) - np.roll(x, -1, axis=1)           # x_k - x_j
        area2 = np.sum(x * b, axis=1)                                  # 2 A, signed
        self.area = np.abs(area2) / 2
        B = np.zeros((len(self), 3, 6))
        B[:, 0, 0::2] = b / area2[:, None]
        B[:, 1, 1::2] = c / area2[:, None]
        B[:, 2, 0::2] = c / area2[:, None]
        B[:, 2, 1::2] = b / area2[:, None]
        self.B = B                                                     # (E, 3, 6)
        D = E / (1 - nu**2) * np.array([[1, nu, 0], [nu, 1, 0], [0, 0, (1 - nu) / 2]])
        self.D = np.broadcast_to(D, (len(self), 3, 3))
        self.t, self.rho = t, rho
        self.K = (t * self.area)[:, None, None] * np.einsum("eki,ekl,elj->eij", B, self.D, B)

    def _u(self, state):
        return self.element_vector(state.dof_values())                # (E, 6)

    def stress(self, state):
        """(E, 3) sxx, syy, sxy."""
        return np.einsum("eij,ejk,ek->ei", self.D, self.B, self._u(state))

    def internal_force(self, state):
        """(E, 6) ``K u``."""
        return np.einsum("eij,ej->ei", self.K, self._u(state))

    def tangent(self, state):
        """(E, 6, 6) the constant stiffness."""
        return self.K.copy()

    material_tangent = tangent

    def geometric_stiffness(self, state, stress):
        """None: linear."""
        return np.zeros_like(self.K)

    def stress_rate(self, state, due):
        """(E, 3) ``D B du``."""
        return np.einsum("eij,ejk,ek->ei", self.D, self.B, due)

    def energy(self, state):
        """(E,) ``u K u / 2``."""
        u = self._u(state)
        return 0.5 * np.einsum("ei,eij,ej->e", u, self.K, u)

    def mass(self, state=None, lumped=False):
        """(E, 6, 6) consistent or lumped mass."""
        m = (self.rho * self.t * self.area)[:, None, None]
        if lumped:
            return m / 3 * np.eye(6)
        return m / 12 * np.kron(np.ones((3, 3)) + np.eye(3), np.eye(2))

    def properties(self):
        """Area and thickness per element."""
        return {"area": self.area, "thickness": np.full(len(self), self.t)}


class MembraneDeck:
    """The membrane's deck entry: its keys and its construction (a deck module's attributes)."""

    TABLE = "elements"
    PLURAL = "membranes"
    KEYS = [MATERIAL, CONNECTIVITY, MESH_GROUP,
            Key("membrane_thickness", "float", REQUIRED, "membrane thickness", positive=True)]
    NOT_USED: dict = {}

    @staticmethod
    def build(e, inputs):
        mat = material(e, inputs)
        conn, _ = rows(e, inputs.nodes, Membrane.nen, Membrane.cell_type)
        group = Membrane(e.values["name"], conn, inputs.nodes.X, inputs.dim, mat.E, mat.nu,
                         e.values["membrane_thickness"], mat.rho)
        return GroupPiece(group, inputs.nodes)


@pytest.fixture
def membrane():
    register("membrane", Membrane, MembraneDeck)
    yield
    unregister("membrane")


# --- the plate: 4 x 2, 4 x 2 squares each cut into two triangles, pulled by p on x = 4 ---------
L, H, NX, NY = 4.0, 2.0, 4, 2
E, NU, T, P = 1000.0, 0.3, 0.1, 7.0


def plate_mesh():
    """Gmsh mesh: triangles "plate" (2D physical group 1), lines "left" and "right" (1D)."""
    x, y = np.meshgrid(np.linspace(0, L, NX + 1), np.linspace(0, H, NY + 1))
    points = np.column_stack([x.ravel(), y.ravel(), np.zeros(x.size)])
    k = np.arange(NX + 1)[None, :-1] + (NX + 1) * np.arange(NY)[:, None]     # lower-left corners
    k = k.ravel()
    tri = np.concatenate([np.column_stack([k, k + 1, k + NX + 2]),
                          np.column_stack([k, k + NX + 2, k + NX + 1])])
    left = np.arange(NY + 1) * (NX + 1)
    right = left + NX
    lines = np.concatenate([np.column_stack([left[:-1], left[1:]]),
                            np.column_stack([right[:-1], right[1:]])])
    tags = np.array([1] * NY + [2] * NY)
    mesh = meshio.Mesh(points, [("triangle", tri), ("line", lines)],
                       cell_data={"gmsh:physical": [np.full(len(tri), 1), tags],
                                  "gmsh:geometrical": [np.full(len(tri), 1), tags]},
                       field_data={"plate": np.array([1, 2]), "left": np.array([1, 1]),
                                   "right": np.array([2, 1])})
    return mesh, tri, right


def plate_deck(extra: str = "", group: str = "plate") -> str:
    """Supports on x = 0, the consistent nodal forces of traction P on x = L (node ids 1..n)."""
    _, _, right = plate_mesh()
    dy = H / NY
    ends, inner = right[[0, -1]] + 1, right[1:-1] + 1
    return textwrap.dedent(f"""\
        [model]
        dim = 2
        [[materials]]
        name = "m"
        E = {E}
        nu = {NU}
        [nodes]
        mesh = "plate.msh"
        [[elements]]
        name = "plate"
        type = "membrane"
        material = "m"
        membrane_thickness = {T}
        mesh_group = "{group}"
        [[supports]]
        nodes = "left"
        fixed = ["ux"]
        [[supports]]
        nodes = 1
        fixed = ["uy"]
        [[loads]]
        name = "ends"
        nodes = {ends.tolist()}
        force = [{P * T * dy / 2!r}, 0.0]
        [[loads]]
        name = "inner"
        nodes = {inner.tolist()}
        force = [{P * T * dy!r}, 0.0]
        """) + extra + textwrap.dedent("""\
        [[steps]]
        name = "pull"
        type = "static"
        """)


@pytest.fixture
def plate(tmp_path, membrane):
    mesh, tri, _ = plate_mesh()
    mesh.write(tmp_path / "plate.msh", file_format="gmsh22", binary=False)
    return tmp_path, tri


def test_the_schema_takes_the_registered_family(membrane):
    names = {k.name: k for k in table_keys("elements")}
    assert "membrane" in names["type"].choices and names["membrane_thickness"].required
    assert "| `membrane_thickness` | float | required | membrane thickness | membrane |" in \
        reference_markdown()


def test_registration_is_undone():
    assert "membrane_thickness" not in {k.name for k in table_keys("elements")}


def test_patch_test_and_triangle_cells_in_hdf5_and_xdmf(plate):
    folder, tri = plate
    (folder / "deck.toml").write_text(plate_deck())
    deck = deck_io.load(str(folder / "deck.toml"))
    result = run(deck, str(folder / "out.h5"))
    with h5py.File(result.h5, "r") as f:
        g = f["model/groups/plate"]
        assert g.attrs["type"] == "membrane" and g.attrs["cell_type"] == "triangle"
        assert g.attrs["first_cell"] == 0
        np.testing.assert_array_equal(g["connectivity"][:], tri)
        cells = f["model/cells"]
        assert cells.attrs["topology"] == "Triangle" and cells.attrs["cell_type"] == "triangle"
        np.testing.assert_array_equal(cells[:], tri)
        s = f["steps/pull/elements/plate"]
        # the patch test: a uniform stress equal to the traction, nothing else
        np.testing.assert_allclose(s["sxx"][0], P, rtol=1e-10, atol=0)
        np.testing.assert_allclose(s["syy"][0], 0.0, rtol=0, atol=1e-10 * P)
        np.testing.assert_allclose(s["sxy"][0], 0.0, rtol=0, atol=1e-10 * P)
        X, u = f["model/nodes"][:], f["steps/pull/displacement"][0]
        np.testing.assert_allclose(u[:, 0], P / E * X[:, 0], rtol=0, atol=1e-10 * P / E * L)
        np.testing.assert_allclose(u[:, 1], -NU * P / E * X[:, 1], rtol=0,
                                   atol=1e-10 * P / E * L)
    root = ET.parse(result.xdmf[0]).getroot()
    topo = next(g for g in root.iter("Grid") if g.get("Name") == "mesh").find("Topology")
    assert topo.get("TopologyType") == "Triangle"
    assert topo.get("NumberOfElements") == str(len(tri))
    points, cells, frames = read_xdmf(result.xdmf[0])             # through meshio
    np.testing.assert_array_equal(cells, tri)
    (_, _, cell_data), = frames
    np.testing.assert_allclose(cell_data["sxx"], P, rtol=1e-10)
    np.testing.assert_array_equal(cell_data["kind"], 0)


def test_mixed_cells_with_a_grounded_spring(plate):
    """Triangles and vertices: one Mixed topology, the cell data over both in topology order.

    In a Mixed topology a vertex is a line from its node to itself: ParaView's Xdmf3 reader wants
    a polyvertex's node count there and meshio's reader wants none (fem.io.drawing).
    """
    folder, tri = plate
    spring = '[[springs]]\nname = "pin"\nnodes = [1, 2]\ndof = "uy"\nstiffness = 5.0\n'
    (folder / "deck.toml").write_text(plate_deck(spring))
    result = run(deck_io.load(str(folder / "deck.toml")), str(folder / "out.h5"))
    with h5py.File(result.h5, "r") as f:
        cells = f["model/cells"]
        assert cells.attrs["topology"] == "Mixed" and cells.attrs["cell_type"] == "mixed"
        assert f["model/groups/pin"].attrs["cell_type"] == "vertex"
        assert f["model/groups/pin"].attrs["first_cell"] == len(tri)
        want = np.concatenate([np.column_stack([np.full(len(tri), 4), tri]).ravel(),
                               [2, 2, 0, 0, 2, 2, 1, 1]])  # Polyline, 2 nodes, node twice
        np.testing.assert_array_equal(cells[:], want)
        F_h5 = f["steps/pull/elements/pin/F"][0]
    points, cells, frames = read_xdmf(result.xdmf[0])             # through meshio
    (_, _, cell_data), = frames
    sxx, F = cell_data["sxx"], cell_data["F"]
    np.testing.assert_allclose(sxx[:len(tri)], P, rtol=1e-10)
    assert np.all(np.isnan(sxx[len(tri):])) and np.all(np.isnan(F[:len(tri)]))
    np.testing.assert_array_equal(F[len(tri):], F_h5)
    topo = next(g for g in ET.parse(result.xdmf[0]).getroot().iter("Grid")
                if g.get("Name") == "mesh").find("Topology")
    assert topo.get("TopologyType") == "Mixed"
    assert topo.get("NumberOfElements") == str(len(tri) + 2)
    if shutil.which("pvpython"):            # ParaView reads both cell types as one grid
        probe = folder / "probe.py"
        probe.write_text(textwrap.dedent("""
            import sys
            from paraview import simple as pv
            from paraview import servermanager as sm
            r = pv.Xdmf3ReaderT(FileName=[sys.argv[1]])
            r.UpdatePipelineInformation()
            r.UpdatePipeline(1.0)
            data = sm.Fetch(r)
            types = sorted({data.GetCellType(i) for i in range(data.GetNumberOfCells())})
            first = data.GetCell(0)
            print("cells", data.GetNumberOfCells(), *types)
            print("first", *[first.GetPointId(i) for i in range(first.GetNumberOfPoints())])
            """))
        proc = subprocess.run(["pvpython", str(probe), result.xdmf[0]], capture_output=True,
                              text=True, timeout=300)
        shown = {x.split()[0]: x.split()[1:] for x in proc.stdout.splitlines() if x.strip()}
        # VTK cell types 4 (poly-line: the springs' vertices) and 5 (triangle)
        assert shown.get("cells") == [str(len(tri) + 2), "4", "5"], proc.stdout + proc.stderr
        assert shown.get("first") == [str(i) for i in tri[0]], proc.stdout


def test_mesh_group_without_cells_of_the_family_type(plate):
    folder, _ = plate
    (folder / "deck.toml").write_text(plate_deck(group="left"))
    with pytest.raises(DeckError) as err:
        deck_io.load(str(folder / "deck.toml"))
    assert err.value.key == "elements[0].mesh_group"
    for words in ("mesh group 'left' has no 3-node triangle cells (it has line cells)",
                  "plate (triangle)"):
        assert words in err.value.message, err.value.message


@pytest.mark.parametrize("step, key, asked", [
    ('type = "buckling"\nloads = ["ends", "inner"]', "type", 'type = "buckling"'),
    ('type = "dynamic"\ntime_step = 0.1\nduration = 1.0', "type", 'type = "dynamic"'),
])
def test_a_step_asking_what_a_family_cannot_do_is_a_deck_error(plate, step, key, asked):
    """The membrane declares only a stiffness (the base protocol's default capabilities): a
    buckling or dynamic step names the group, what asked, and what the group can do."""
    folder, _ = plate
    text = plate_deck().replace('name = "pull"\ntype = "static"', f'name = "pull"\n{step}')
    (folder / "deck.toml").write_text(text)
    with pytest.raises(DeckError) as err:
        deck_io.load(str(folder / "deck.toml"))
    assert err.value.key == f"steps[0].{key}"
    assert ("element group 'plate' (membrane) cannot do" in err.value.message
            and f"asked by {asked}; it can do: internal force and tangent (static steps)"
            in err.value.message), err.value.message


def test_the_energy_conserving_integrator_is_asked_of_every_group(plate):
    """A family with a mass but no energy-conserving force may run generalized-alpha only."""
    folder, _ = plate
    Membrane.capabilities = frozenset({"stiffness", "mass"})
    try:
        step = 'type = "dynamic"\ntime_step = 0.1\nduration = 1.0'
        text = plate_deck().replace('name = "pull"\ntype = "static"', f'name = "pull"\n{step}')
        (folder / "deck.toml").write_text(text)
        with pytest.raises(DeckError) as err:          # energy_conserving is the default
            deck_io.load(str(folder / "deck.toml"))
        assert err.value.key == "steps[0].integrator"
        assert 'an energy-conserving force (integrator = "energy_conserving"), asked by ' \
            'integrator = "energy_conserving"' in err.value.message, err.value.message
        (folder / "deck.toml").write_text(text.replace("duration = 1.0", "duration = 1.0\n"
                                                       'integrator = "generalized_alpha"'))
        assert deck_io.load(str(folder / "deck.toml")).steps[0]["type"] == "dynamic"
    finally:
        del Membrane.capabilities


def test_keys_of_other_families_are_not_used_by_it(plate):
    folder, _ = plate
    (folder / "deck.toml").write_text(plate_deck().replace('membrane_thickness =',
                                                           'divisions = 2\nmembrane_thickness ='))
    with pytest.raises(DeckError, match="not used by membranes") as err:
        deck_io.load(str(folder / "deck.toml"))
    assert err.value.key == "elements[0].divisions"


def test_the_writer_is_handed_the_outputs(tmp_path, monkeypatch):
    """StepWriter.frame writes the outputs it receives and evaluates no element."""
    from fem.io.hdf5 import ResultsFile
    from fem.system import System

    text = plate_deck()
    mesh, tri, _ = plate_mesh()
    mesh.write(tmp_path / "plate.msh", file_format="gmsh22", binary=False)
    register("membrane", Membrane, MembraneDeck)
    try:
        (tmp_path / "deck.toml").write_text(text)
        model = deck_io.load(str(tmp_path / "deck.toml")).model
    finally:
        unregister("membrane")
    system = System(model)
    state = system.reference_state()
    monkeypatch.setattr(Membrane, "outputs", lambda self, s: pytest.fail("evaluated"))
    given = {"plate": {"q": np.arange(len(tri), dtype=float)}}
    with ResultsFile(str(tmp_path / "w.h5"), model) as results:
        writer = results.begin_step("s", "static", system, clock="abs")
        writer.frame(state, outputs=given, time=1.0)
        writer.close()
    with h5py.File(tmp_path / "w.h5", "r") as f:
        np.testing.assert_array_equal(f["steps/s/elements/plate/q"][0], given["plate"]["q"])
    (_, _, cell_data), = read_xdmf(str(tmp_path / "w.xdmf"))[2]
    np.testing.assert_array_equal(cell_data["q"], given["plate"]["q"])
