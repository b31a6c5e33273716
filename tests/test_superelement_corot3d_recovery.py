"""3D co-rotational superelements drawn as their full component mesh (issue 33 item 4, recovery).

A free shell plate (32 flat triangles) reduced by Craig-Bampton with three corners as the
interface flies as a 3D co-rotational superelement (:mod:`fem.elements.superelement.corot3d`);
its results' drawing (:mod:`fem.io.drawing`) holds the component's triangles on its recovered
nodes. Checked: the drawn cells are the reducing model's triangles; read back with meshio, the
drawn points plus the drawn displacement at two frames are the recovered positions ``y_j = x_a +
R_a c_j`` computed here from the frame's state (positions, rotations, modal coordinates) to
1e-12; and the whole file passes the readers' checks (:func:`results_checks.check_with_meshio`).
"""

import h5py
import meshio
import numpy as np
import pytest
from helpers import solve, square_plate_mesh
from results_checks import check_with_meshio

from fem.io import superelement_file

H = 0.01


def plate_deck(file: str, steps: list) -> dict:
    """The free 1 x 1 plate of 32 linear flat shells (E 1e4, nu 0.3, rho 1, h 0.02)."""
    c, tri, ids = square_plate_mesh(4, 1.0)
    return {"model": {"dim": 3},
            "materials": [{"name": "m", "E": 1.0e4, "nu": 0.3, "density": 1.0}],
            "nodes": {"ids": ids.tolist(), "coordinates": c.tolist()},
            "elements": [{"name": "plate", "type": "shell", "material": "m",
                          "thickness": 0.02, "formulation": "linear",
                          "connectivity": tri.tolist()}],
            "steps": steps}


@pytest.fixture(scope="module")
def plate(tmp_path_factory):
    """``plate.h5``: 8 fixed-interface modes, corners 1, 5 and 25 the interface."""
    base = tmp_path_factory.mktemp("corot3d_draw")
    d = plate_deck("plate.h5", [{"name": "reduce", "type": "cms_reduce",
                                 "interface": [1, 5, 25], "file": "plate.h5", "modes": 8}])
    steps = solve(d, base_dir=str(base))[3]
    superelement_file.write(str(base / "plate.h5"), steps[0].data)
    return base


def test_the_file_keeps_the_component_cells(plate):
    """``/component/cells/triangle`` are the reducing deck's 32 triangles, on positions in the
    component's node ids."""
    _, tri, _ = square_plate_mesh(4, 1.0)
    with h5py.File(plate / "plate.h5", "r") as h5:
        ids = h5["component/node_ids"][()]
        cells = h5["component/cells/triangle"][()]
    assert list(h5py.File(plate / "plate.h5", "r")["component/cells"]) == ["triangle"]
    np.testing.assert_array_equal(ids[cells], tri)


def test_flying_plate_is_drawn_as_its_triangles_at_the_recovered_positions(plate):
    """A spinning, bending flight of 6 steps written every step: the XDMF's cells include the
    32 triangles on the recovered points; at frames 3 and the last the drawn points plus the
    displacement meshio reads are ``x_a + R_a c_j`` from that frame's positions, rotations and
    modal coordinates to 1e-12 (measured 0: the same numbers, written and read back; the points
    moved by 0.12); every array of every frame is what the results say (the readers' checks)."""
    c, tri, ids = square_plate_mesh(4, 1.0)
    d = plate_deck("plate.h5", [{"name": "fly", "type": "dynamic",
                                 "integrator": "energy_conserving", "time_step": H,
                                 "duration": 6 * H, "tolerance": 1e-12,
                                 "velocities": ["v0", "v4", "v24"]}])
    d["elements"] = [{"name": "se", "type": "superelement", "file": "plate.h5",
                      "formulation": "corotational"}]
    out = plate / "fly.h5"
    w = np.array([0.3, 0.5, 1.0])
    corners = np.array([0, 4, 24])
    d["velocities"] = [{"name": f"v{n}", "nodes": [int(ids[n])],
                        "velocity": np.cross(w, c[n] - [0.5, 0.5, 0.0]).tolist(),
                        "angular_velocity": (w + 3 * np.array(r)).tolist()}
                       for n, r in zip(corners, [[1.0, 0, 0], [0, -1.0, 0], [0.5, 0.5, 0]],
                                       strict=True)]
    dk, sysm, _, _ = solve(d, str(out), base_dir=str(plate))
    g = dk.model.group("se")
    xdmf = str(out)[:-3] + ".xdmf"
    with h5py.File(out, "r") as h5, meshio.xdmf.TimeSeriesReader(xdmf) as reader:
        p0, count = (h5["model/groups/se"].attrs[k] for k in ("first_point", "drawn_count"))
        assert count == len(c)
        points, cells = reader.read_points_cells()
        drawn = [b.data for b in cells if b.type == "triangle"]
        assert len(drawn) == 1
        np.testing.assert_array_equal(drawn[0] - p0, np.searchsorted(g.data.component_ids, tri))
        s = h5["steps/fly"]
        moved = 0.0
        last = s["time"].shape[0] - 1
        for k in (3, last):
            u = reader.read_data(k)[1]["displacement"]
            state = sysm.reference_state()
            state.u[:] = s["displacement"][k]
            state.rot[:] = s["rotation"][k]
            state.internal[:] = s["elements/se/modal_coordinates"][k, 0]
            y, _ = g.recovered(g.local_frame(state))
            got = (points + u)[p0:p0 + count][g.t_nodes]
            np.testing.assert_allclose(got, y, rtol=0, atol=1e-12)
            moved = max(moved, np.abs(y - g.Xc[g.t_nodes]).max())
        assert moved > 0.05
    assert check_with_meshio(xdmf, str(out), rotations=True) == last + 1


def test_a_beam_component_is_drawn_as_its_lines(tmp_path):
    """The free 3D beam of tests/test_superelement_corot3d.py (6 co-rotational beams between
    its interface ends): its drawing has the 6 lines, joining the recovered points in the
    order of the beam from end 1 to end 2, and a vertex at each interface node."""
    from test_superelement_corot3d import component, model, reduce

    from fem.io.drawing import KINDS, drawing

    reduce(component("bar.h5"), tmp_path)
    dk, _, g = model(tmp_path)
    dr = drawing(dk.model)
    span = dr.recovered["se"]
    assert span.count == 7
    cells = dr.topology.cells
    assert dr.topology.kind == "Polyline"            # vertices are lines from a node to itself
    mine = cells[dr.kind == KINDS["superelement"]]
    lines = mine[mine[:, 0] != mine[:, 1]] - span.first
    assert len(lines) == 6 and np.all(lines >= 0)
    x = g.Xc[lines][:, :, 0]                          # along the beam: x from 0.3 to 1.3
    np.testing.assert_allclose(np.sort(x[:, 0]), np.linspace(0.3, 1.3, 7)[:-1], atol=1e-12)
    np.testing.assert_allclose(x[:, 1] - x[:, 0], 1.0 / 6, atol=1e-12)
    vertices = mine[mine[:, 0] == mine[:, 1]][:, 0]
    np.testing.assert_array_equal(np.sort(vertices), np.sort(g.conn[0]))
