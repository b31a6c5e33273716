"""Axial spring-dampers at body-fixed points (issue 30): step form, tangents, a bouncing bar.

References: the energy identity of the discrete gradient (``f . inc = U1 - U0 + D``, exact by
construction, to round-off over random steps with large turns), central finite differences by
spatial spins (static and step forms, velocities for ``D``), and the closed-form bounce and pitch
of a rigid bar on two vertical spring-dampers (frequencies and damping ratios).
"""

import tomllib
from pathlib import Path

import numpy as np
import pytest
from helpers import with_changes

from fem import rotations as so3
from fem.elements.force import Curve
from fem.elements.force.offset import BodySpringDamper
from fem.errors import DeckError
from fem.io import deck as deck_io
from fem.run import run
from fem.state import State

SPRINGS = {"linear": Curve.linear(3e3, 40.0),
           "table": Curve.table([[-0.1, -500.0], [0.0, 20.0], [0.05, 200.0], [0.2, 1500.0]])}
DAMPERS = {"none": None, "linear": Curve.linear(60.0),
           "table": Curve.table([[-1.0, -30.0], [0.0, 0.0], [0.3, 90.0], [2.0, 150.0]])}
GROUPS = [(s, d, dim, gr) for s in SPRINGS for d in DAMPERS for dim in (2, 3)
          for gr in (False, True)]


def group(spring, damper, dim, grounded, E=5, rng=None):
    rng = rng or np.random.default_rng(0)
    n = E if grounded else 2 * E
    X = rng.normal(size=(n, 3))
    nen = 1 if grounded else 2
    offsets = 0.4 * rng.normal(size=(E, nen, 3))
    if dim == 2:
        X[:, 2] = 0.0
        offsets[..., 2] = 0.0
    if grounded:
        ground = X + 0.7 * rng.normal(size=(E, 3))
        if dim == 2:
            ground[:, 2] = 0.0
        return BodySpringDamper("s", np.arange(E)[:, None], X, dim, SPRINGS[spring],
                                DAMPERS[damper], offsets, ground=ground), X
    conn = np.arange(2 * E).reshape(E, 2)
    free = np.linalg.norm((X[conn[:, 1]] + offsets[:, 1]) - (X[conn[:, 0]] + offsets[:, 0]),
                          axis=1) - 0.05
    return BodySpringDamper("s", conn, X, dim, SPRINGS[spring], DAMPERS[damper], offsets,
                            free_length=free), X


def states(g, X, rng, scale=0.1, turn=0.8, h=1e-2):
    """Random start and end states (turns of ``turn`` rad, spins of the step up to 1 rad)."""
    dim = g.dim
    s0 = State.reference(dim, len(X))
    s0.u[:, :dim] = scale * rng.normal(size=(len(X), dim))
    s0.v[:] = rng.normal(size=s0.v.shape)
    if dim == 2:
        s0.v[:, 2:] = rng.normal(size=(len(X), 1))
        s0.rot[:] = turn * rng.normal(size=len(X))
    else:
        s0.rot[:] = so3.quat_from_rotvec(turn * rng.normal(size=(len(X), 3)))
    s1 = s0.copy()
    s1.t = h
    d = np.zeros_like(s0.v)
    d[:, :dim] = scale * rng.normal(size=(len(X), dim))
    d[:, dim if dim == 2 else 3:] = turn * rng.normal(size=(len(X), 1 if dim == 2 else 3))
    s1.increment(d)
    return s0, s1


def increment(g, s0, s1):
    """Translations and the step's rotations (2D: angles; 3D: rotation vectors)."""
    if g.dim == 3:
        theta = so3.rotvec_from_quat(so3.quat_mul(s1.rot, so3.quat_conj(s0.rot)))
        nodal = np.concatenate([s1.u - s0.u, theta], axis=1)
    else:
        nodal = np.column_stack([(s1.u - s0.u)[:, :2], s1.rot - s0.rot])
    return g.element_vector(nodal)


def _columns(g, s, force, field="u", eps=1e-7):
    """(E, nd, nd) central differences by the element DOFs (3D rotations: spatial spins)."""
    E, nd = len(g), g.nd
    out = np.zeros((E, nd, nd))
    for a in range(g.nen):
        for i in range(g.ndn):
            f = []
            for sign in (1, -1):
                t = s.copy()
                if field == "v":
                    t.v[g.conn[:, a], i] += sign * eps
                else:
                    d = np.zeros_like(t.v)
                    d[g.conn[:, a], i] = sign * eps
                    t.increment(d)
                f.append(force(t))
            out[:, :, a * g.ndn + i] = (f[0] - f[1]) / (2 * eps)
    return out


@pytest.mark.parametrize("spring, damper, dim, grounded", GROUPS)
def test_work_equals_energy_change(spring, damper, dim, grounded):
    """``f . inc = U1 - U0 + D`` to round-off over random steps with large turns, ``D >= 0``."""
    rng = np.random.default_rng(1)
    for _ in range(10):
        g, X = group(spring, damper, dim, grounded, rng=rng)
        s0, s1 = states(g, X, rng)
        inc = increment(g, s0, s1)
        hist = g.conserving_start(s0)
        f, _, U1, h1 = g.conserving(s0, s1, None, inc, hist)
        work = np.einsum("ei,ei->e", f, inc)
        U0 = g.energy(s0)
        np.testing.assert_allclose(U1, g.energy(s1), rtol=1e-13, atol=1e-13)
        D = h1["dissipated"] if h1 else np.zeros(len(g))
        scale = np.abs(U0) + np.abs(U1) + np.abs(work)
        np.testing.assert_array_less(np.abs(work - (U1 - U0 + D)), 1e-12 * scale)
        assert np.all(D >= 0)


@pytest.mark.parametrize("spring, damper, dim, grounded", GROUPS)
def test_tangents_are_the_derivatives(spring, damper, dim, grounded):
    """Static tangent (spins, fixed velocities), ``damping`` (velocities), step tangent."""
    rng = np.random.default_rng(2)
    g, X = group(spring, damper, dim, grounded, rng=rng)
    s0, s1 = states(g, X, rng, scale=0.05, turn=0.3)
    _, K = g.evaluate(s1)
    fd = _columns(g, s1, lambda t: g.evaluate(t, tangent=False)[0])
    np.testing.assert_allclose(K, fd, atol=1e-6 * np.abs(K).max())
    C = g.damping(s1)
    fd = _columns(g, s1, lambda t: g.evaluate(t, tangent=False)[0], field="v")
    np.testing.assert_allclose(C, fd, atol=1e-6 * max(np.abs(C).max(), 1.0))
    hist = g.conserving_start(s0)
    _, K, _, _ = g.conserving(s0, s1, None, None, hist)
    fd = _columns(g, s1, lambda t: g.conserving(s0, t, None, None, hist)[0])
    np.testing.assert_allclose(K, fd, atol=1e-6 * np.abs(K).max())


def test_zero_offsets_are_the_node_element():
    """Zero offsets: the translational force and tangent of the node-to-node element."""
    from fem.elements.force import SpringDamper

    rng = np.random.default_rng(3)
    for dim in (2, 3):
        g, X = group("table", "table", dim, False, rng=rng)
        g0 = BodySpringDamper("s", g.conn, X, dim, g.spring, g.damper, 0 * g.offsets,
                              free_length=g.free_length)
        ref = SpringDamper("s", g.conn, X, dim, g.spring, g.damper, free_length=g.free_length)
        s0, s1 = states(g0, X, rng)
        t = [0, 1, 3, 4] if dim == 2 else [0, 1, 2, 6, 7, 8]
        f, K = g0.evaluate(s1)
        fr, Kr = ref.evaluate(s1)
        np.testing.assert_allclose(f[:, t], fr, rtol=1e-13, atol=1e-12)
        np.testing.assert_allclose(K[:, t][:, :, t], Kr, rtol=1e-12, atol=1e-9)
        inc = increment(g0, s0, s1)
        h0 = g0.conserving_start(s0)
        f = g0.conserving(s0, s1, None, inc, h0)[0]
        fr = ref.conserving(s0, s1, None, inc[:, t], ref.conserving_start(s0))[0]
        np.testing.assert_allclose(f[:, t], fr, rtol=1e-12, atol=1e-12)


# --- decks and runs ------------------------------------------------------------------------------

CASES = Path(__file__).resolve().parents[1] / "cases"


def bar():
    return tomllib.loads((CASES / "bouncing_bar" / "deck.toml").read_text())


def _ring(data, tmp_path, name="out"):
    import h5py

    data["steps"] = [s for s in data["steps"] if s["type"] == "dynamic"]
    run(deck_io.from_dict(data, base_dir=str(tmp_path)), str(tmp_path / f"{name}.h5"))
    with h5py.File(tmp_path / f"{name}.h5") as f:
        e = f[f"steps/{data['steps'][0]['name']}/energy"]
        return e["total"][()], e["damping"][()] if "damping" in e else None


def test_bar_balance_with_and_without_dampers(tmp_path):
    """``cases/bouncing_bar``'s kick: energy exact without dampers, booked exactly with them.

    Undamped, the energy-conserving scheme keeps ``total`` at ``m v^2/2 + J w^2/2 = 0.8666667 J``
    to 1e-10 (the springs' points turn with the bar: a discrete gradient through the body's
    rotation); damped, ``total + damping`` stays there to 1e-10 and the dampers took most of it.
    """
    E0 = 0.5 * 10.0 * 0.3**2 + 0.5 * 10.0 / 3.0 * 0.5**2
    data = bar()
    data["steps"][-1]["duration"] = 0.3
    total, damping = _ring(data, tmp_path)
    np.testing.assert_allclose(total + damping, E0, rtol=1e-10)
    assert damping[-1] > 0.8 * E0
    data = bar()
    del data["connectors"][0]["damping"]
    data["steps"][-1]["duration"] = 0.1
    total, damping = _ring(data, tmp_path, "free")
    np.testing.assert_allclose(total, E0, rtol=1e-10)
    assert damping is None


def test_spatial_body_on_oblique_springs_conserves_energy(tmp_path):
    """3D: a body turning about all axes on three oblique springs at body points: energy exact.

    The integrator pairs the group's moments with the step's rotation vectors (the body's
    ``exp`` update); the run's ``total`` stays at its initial value to 1e-10 over large turns.
    """
    data = {
        "model": {"dim": 3},
        "nodes": {"coordinates": [[0.0, 0.0, 0.0]]},
        "bodies": [{"name": "b", "nodes": [1], "mass": 2.0, "inertia": [0.3, 0.5, 0.7]}],
        "connectors": [{"name": "s", "type": "spring_damper", "ground": [1, 1, 1],
                        "points": [[1.5, 0.2, -1.0], [-1.0, 1.2, -0.8], [0.1, -1.3, -1.1]],
                        "body_points": [[0.5, 0.1, 0.0], [-0.4, 0.3, 0.1], [0.0, -0.4, -0.2]],
                        "stiffness": 200.0, "free_length": 0.8}],
        "velocities": [{"name": "v", "nodes": [1], "velocity": [0.3, -0.2, 0.5],
                        "angular_velocity": [3.0, -2.0, 4.0]}],
        "steps": [{"name": "tumble", "type": "dynamic", "integrator": "energy_conserving",
                   "duration": 0.2, "time_step": 0.01, "velocities": ["v"],
                   "tolerance": 1e-12}],
    }
    total, _ = _ring(data, tmp_path)
    np.testing.assert_allclose(total, total[0], rtol=1e-10)


@pytest.mark.parametrize("changes, where, says", [
    ({"body_points": [[-1.0, 0.0]]}, "connectors[0].body_points", "one row per element (2)"),
    ({"body_points": [[-1.0, 0.0, 0.0], [1.0, 0.0]]}, "connectors[0].body_points[0]",
     "expected 2 coordinates"),
    ({"body_points": [[-1.0, -0.5], [1.0, 0.0]]}, "connectors[0].body_points[0]",
     "zero length"),
    ({"ground": None, "pairs": [[1, 2]], "points": None,
      "body_points": [[-1.0, 0.0, 1.0, 0.0]]}, "connectors[0].pairs[0]", "no rotations"),
    ({"ground": None, "pairs": [[1, 2]], "points": None,
      "body_points": [[-1.0, 0.0]]}, "connectors[0].body_points[0]", "expected 4 coordinates"),
    ({"ground": [1, 3]}, "connectors[0].ground", "unknown node 3"),
    ({"stiffness": -5.0}, "connectors[0].stiffness", "-5"),
])
def test_deck_errors(changes, where, says):
    """Bad ``body_points`` input is a deck error naming the key and what was wrong."""
    data = bar()
    data["nodes"]["coordinates"].append([0.0, -3.0])
    data["masses"] = [{"nodes": [2], "mass": 1.0}]
    with_changes(data["connectors"][0], changes)
    with pytest.raises(DeckError) as err:
        deck_io.from_dict(data)
    assert err.value.key == where and says in str(err.value), str(err.value)


def test_spring_dampers_are_drawn_between_their_body_points(tmp_path):
    """The bouncing bar's XDMF (read by meshio): each spring is a cell at its body point, which
    moves as ``x + R c`` of the bar, and an arm joins the bar's node to each point."""
    import h5py
    from helpers import case_deck
    from results_checks import read_xdmf

    from fem.io.deck import from_dict
    from fem.io.drawing import KINDS

    d = case_deck("bouncing_bar")
    d["steps"] = [s for s in d["steps"] if s["type"] == "dynamic"]
    d["steps"][0]["duration"] = 0.2
    result = run(from_dict(d), str(tmp_path / "bar.h5"))
    points, _, frames = read_xdmf(result.xdmf[0])
    with h5py.File(result.h5, "r") as h5:
        X = h5["model/nodes"][()]
        first = int(h5["model/groups/ends"].attrs["first_cell"])
        kind, part = h5["xdmf/kind"][()], h5["xdmf/part"][()]
        u = h5["steps/ring/displacement"][()]
        angle = 2 * np.arctan2(h5["steps/ring/rotation"][()][..., 3],
                               h5["steps/ring/rotation"][()][..., 0])
    c = np.array([[-1.0, 0.0, 0.0], [1.0, 0.0, 0.0]])          # the deck's body_points
    cells = _cells(result.xdmf[0])                          # as meshio reads them
    assert len(cells) == len(kind)
    ends = np.array([cells[first][0], cells[first + 1][0]])  # the springs' point cells
    np.testing.assert_array_equal(points[ends], X[[0, 0]] + c)
    arms = [cells[i] for i in np.flatnonzero((kind == KINDS["element_arm"])
                                             & (part == part[first]))]
    np.testing.assert_array_equal(np.sort(arms, axis=1), np.sort(
        np.column_stack([[0, 0], ends]), axis=1))
    assert len(frames) == len(u) and len(u) > 3
    for k, (_, point, _) in enumerate(frames):
        a = angle[k, 0]
        R = np.array([[np.cos(a), -np.sin(a), 0], [np.sin(a), np.cos(a), 0], [0, 0, 1]])
        expect = u[k, 0] + c @ R.T - c                      # x + R c - (X + c)
        np.testing.assert_allclose(point["displacement"][ends], expect, rtol=0, atol=1e-15)
    assert np.ptp(angle) > 1e-3                             # the bar pitched: points turned


def _cells(xdmf: str) -> list:
    """Every drawn cell's points, in topology order, as meshio reads the series."""
    import meshio

    with meshio.xdmf.TimeSeriesReader(xdmf) as reader:
        _, blocks = reader.read_points_cells()
    return [c for b in blocks for c in b.data]
