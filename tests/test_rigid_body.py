"""Rigid bodies as an element family: the ``[[bodies]]`` table (:mod:`fem.elements.rigid_body`).

A body is a node carrying a mass and an inertia tensor, integrated by the nodal inertia. Checks,
each on a model built from a deck:

* a free 3D body with a full inertia tensor tumbling about a non-principal axis keeps its kinetic
  energy and spatial angular momentum to 1e-10 over 2000 steps (Simo & Wong's momentum form is
  exact up to Newton's tolerance), with the energy-conserving scheme and the plain mid-point rule;
* a torque-free axisymmetric body follows Euler's closed-form solution (the body angular velocity
  precesses at ``(C - A)/A w3``) with an error of second order in the time step;
* under ``[gravity]`` a body falls along ``x0 + v0 t + g t^2/2`` to 1e-10 (a dead load, exact for
  the mid-point average), and gravity is ``m g`` at its node;
* a 2D body translates and spins exactly; a body welded to a cantilever tip loads it with its
  weight in a static step; a buckling step runs with a body;
* deck mistakes name the key; the XDMF carries the nodal frames ``axis_x/y/z`` (the columns of
  the final rotation matrix); ``fem run`` writes a body's dynamic step.
"""

import math
import subprocess
import sys

import h5py
import numpy as np
import pytest
from results_checks import read_xdmf

from fem import rotations as so3
from fem.elements import RigidBody
from fem.errors import DeckError
from fem.inertia.nodal import NodalInertia
from fem.io import deck as deck_io
from fem.loads import gravity_force
from fem.run import make_step
from fem.run import run as run_deck
from fem.system import System

G = 9.81
J_FULL = [[3.0, 0.4, -0.2], [0.4, 2.0, 0.3], [-0.2, 0.3, 1.5]]     # eigenvalues all distinct


def solve(text: str):
    """Build a deck from its text and run its steps; (deck, system, state, steps)."""
    dk = deck_io.loads(text)
    sysm = System(dk.model)
    state = sysm.reference_state()
    steps = []
    for spec in dk.steps:
        step = make_step(spec, sysm, dk, dk.output["every"])
        step.run(state, None)
        steps.append(step)
    return dk, sysm, state, steps


def body_deck(dim: int = 3, *, x0=(0.1, 0.2, 0.3), mass=2.0, inertia=J_FULL, velocity=None,
              omega=None, integrator="energy_conserving", h=0.01, duration=20.0,
              tolerance=1e-12, extra="") -> str:
    """One free body at ``x0`` with an initial velocity and spin (about its centre of mass)."""
    x0 = list(x0)[:dim]
    fields = ""
    if velocity is not None:
        fields += f"velocity = {list(velocity)}\n"
    if omega is not None:
        fields += f"angular_velocity = {omega}\ncenter = {x0}\n"
    vel = f'[[velocities]]\nname = "start"\n{fields}\n' if fields else ""
    names = '["start"]' if fields else "[]"
    return f"""\
[model]
dim = {dim}

[nodes]
coordinates = [{x0}]

[[bodies]]
name = "body"
nodes = 1
mass = {mass}
inertia = {inertia}

{vel}{extra}
[[steps]]
name = "free"
type = "dynamic"
integrator = "{integrator}"
time_step = {h}
duration = {duration}
tolerance = {tolerance}
velocities = {names}
"""


def history(step, key):
    return np.array([row[key] for row in step.history])


def body_velocity(state) -> np.ndarray:
    """(3,) the body angular velocity ``W = R^T omega`` of node 0."""
    return state.rotation_matrices()[0].T @ state.v[0, 3:6]


# --- the family -------------------------------------------------------------------------------

def test_a_body_is_a_vertex_with_every_dof_and_only_inertia():
    dk = deck_io.loads(body_deck(3, duration=0.01))
    g = dk.model.groups[0]
    assert isinstance(g, RigidBody) and g.type_name == "rigid" and g.cell_type == "vertex"
    assert g.dof_names == ("ux", "uy", "uz", "rx", "ry", "rz") and not g.additive_rotations
    sysm = System(dk.model)
    s = sysm.reference_state()
    s.u[0] = [0.3, -0.1, 0.2]
    s.rot[0] = so3.quat_from_rotvec(np.array([0.4, -0.3, 0.9]))
    assert not np.any(g.internal_force(s)) and not np.any(g.tangent(s)) and not np.any(g.energy(s))
    assert np.array_equal(g.mass(s), g.mass(s, lumped=True))
    assert np.allclose(g.mass(s)[0], np.block([[2.0 * np.eye(3), np.zeros((3, 3))],
                                               [np.zeros((3, 3)), np.array(J_FULL)]]))
    inertia = NodalInertia(sysm)
    assert inertia.m[0] == 2.0 and np.array_equal(inertia.J[0], J_FULL) and inertia.lie[0]
    assert sysm.additive is not None and not sysm.additive[0]
    # System.mass (consistent and lumped) carries the body's blocks
    for lumped in (False, True):
        M = sysm.assembler.to_scipy(sysm.mass(s, lumped=lumped)).toarray()
        assert np.allclose(M, g.mass(s)[0])


# --- 1. a free body tumbling: energy and angular momentum exact ------------------------------

@pytest.mark.parametrize("integrator", ["energy_conserving", "midpoint"])
def test_free_body_keeps_energy_and_angular_momentum(integrator):
    """500 steps of a tumbling body: T and Pi to 1e-10 relative, p exactly. Both schemes keep
    them exactly at any length (measured 1.9e-13 and 1.3e-13 after 500 steps, 1.1e-12 and
    6.8e-13 after 2000, the length this test had: the same bounds); 500 steps of 0.01 s turn the
    body's spin by 0.59 of its size in the body (1.4 at 250 steps, the bound 0.1)."""
    text = body_deck(3, velocity=[0.1, -0.2, 0.3], omega=[1.0, 2.0, 0.5], integrator=integrator,
                     duration=5.0)
    dk, sysm, state, (step,) = solve(text)
    assert step.steps == 500
    T, L, p = history(step, "kinetic"), history(step, "angular_momentum"), \
        history(step, "linear_momentum")
    assert T[0] == pytest.approx(0.5 * 2.0 * 0.14 + 0.5 * np.array([1, 2, 0.5])
                                 @ np.array(J_FULL) @ np.array([1, 2, 0.5]), rel=1e-14)
    assert np.max(np.abs(T / T[0] - 1)) < 1e-10
    assert np.max(np.linalg.norm(L - L[0], axis=1)) < 1e-10 * np.linalg.norm(L[0])
    assert np.max(np.linalg.norm(p - p[0], axis=1)) < 1e-12
    # it really tumbles: the spin about a non-principal axis wanders in the body
    W0 = np.array([1.0, 2.0, 0.5])
    W = body_velocity(state)
    assert np.linalg.norm(W - W0) > 0.1 * np.linalg.norm(W0)
    # and it translates uniformly
    assert np.allclose(state.u[0], 5.0 * np.array([0.1, -0.2, 0.3]), rtol=1e-12)


# --- 2. Euler's closed-form solution, second order -------------------------------------------

def euler_top(t: float, W0: np.ndarray, A: float, C: float) -> np.ndarray:
    """Body angular velocity of a torque-free body with J = diag(A, A, C)."""
    lam = (C - A) / A * W0[2]
    c, s = math.cos(lam * t), math.sin(lam * t)
    return np.array([c * W0[0] - s * W0[1], s * W0[0] + c * W0[1], W0[2]])


GENERALIZED_ALPHA_ORDER = pytest.mark.xfail(strict=True, reason=(
    "generalized_alpha (rho_inf < 1) is first order for a tumbling 3D body (error ratios 1.98, "
    "1.99): the residual blends R0 J A0 and R1 J A1 in two frames and weights the gyroscopic "
    "W x J W with alpha_m; rotating the old inertial force by R1 R0^T and weighting its "
    "gyroscopic part with alpha_f restores order two (measured ratios 4.00)"))


@pytest.mark.parametrize("integrator", ["energy_conserving", "midpoint", "trapezoidal",
                                        pytest.param("generalized_alpha",
                                                     marks=GENERALIZED_ALPHA_ORDER)])
def test_axisymmetric_body_precesses_as_euler_says_at_second_order(integrator):
    A, C, t = 2.0, 0.7, 2.0
    W0 = np.array([0.8, -0.3, 3.0])
    exact = euler_top(t, W0, A, C)
    err = []
    for h in (0.04, 0.02, 0.01):
        text = body_deck(3, inertia=[A, A, C], omega=W0.tolist(), integrator=integrator, h=h,
                         duration=t)
        state = solve(text)[2]
        err.append(np.linalg.norm(body_velocity(state) - exact))
    assert err[0] < 1e-2 * np.linalg.norm(W0)
    for coarse, fine in zip(err, err[1:], strict=False):
        assert 3.6 < coarse / fine < 4.4, err


# --- 3. free fall under gravity ----------------------------------------------------------------

@pytest.mark.parametrize("dim", [2, 3])
def test_body_falls_along_the_parabola(dim):
    g = [0.0, -G] if dim == 2 else [0.0, 0.0, -G]
    v0 = [1.5, 2.0, 4.0][:dim]
    text = body_deck(dim, x0=(1.0, 2.0, 3.0), mass=3.0, inertia=0.2 if dim == 2 else [1, 2, 3],
                     velocity=v0, h=0.01, duration=1.0, extra=f"[gravity]\nacceleration = {g}\n")
    dk, sysm, state, (step,) = solve(text)
    f = gravity_force(dk.model, np.r_[g, 0.0][:3])
    assert np.allclose(f[0, :dim], 3.0 * np.array(g), rtol=1e-15)     # m g at the body's node
    t = 1.0
    expected = np.array(v0) * t + 0.5 * np.array(g) * t**2
    assert np.max(np.abs(state.u[0, :dim] - expected)) < 1e-10
    assert np.max(np.abs(state.v[0, :dim] - (np.array(v0) + np.array(g) * t))) < 1e-10
    # the energy balance closes with gravity's work
    total = history(step, "total")
    assert abs(total[-1] - total[0]) < 1e-10 * history(step, "kinetic").max()


# --- 4. 2D bodies and deck mistakes ------------------------------------------------------------

@pytest.mark.parametrize("integrator", ["energy_conserving", "midpoint", "generalized_alpha"])
def test_2d_body_translates_and_spins_exactly(integrator):
    text = body_deck(2, x0=(1.0, 2.0), mass=3.0, inertia=0.5, velocity=[0.3, -0.1], omega=2.0,
                     integrator=integrator, h=0.05, duration=5.0)
    dk, sysm, state, (step,) = solve(text)
    assert dk.model.groups[0].dof_names == ("ux", "uy", "rz")
    assert np.allclose(state.u[0, :2], [1.5, -0.5], rtol=1e-12)
    assert state.rot[0] == pytest.approx(10.0, rel=1e-12)
    T, L = history(step, "kinetic"), history(step, "angular_momentum")
    assert T[0] == pytest.approx(0.5 * 3.0 * 0.1 + 0.5 * 0.5 * 4.0, rel=1e-14)
    assert np.max(np.abs(T / T[0] - 1)) < 1e-12
    assert np.max(np.abs(L - L[0])) < 1e-12 * np.abs(L[0]).max()


BODY_2D = body_deck(2, x0=(1.0, 2.0), inertia=0.5, duration=0.1)


@pytest.mark.parametrize(("old", "new", "key", "words"), [
    ("mass = 2.0\n", "", "bodies[0].mass", "missing required key 'mass'"),
    ("mass = 2.0", "mass = -2.0", "bodies[0].mass", "expected a positive number, got -2.0"),
    ("mass = 2.0", "mass = 0.0", "bodies[0].mass", "expected a positive number, got 0.0"),
    ("inertia = 0.5\n", "", "bodies[0].inertia", "missing required key 'inertia'"),
    ("inertia = 0.5", "inertia = -0.5", "bodies[0].inertia", "expected rotary inertias >= 0"),
    ("inertia = 0.5", "inertia = [1, 2, 3]", "bodies[0].inertia", "expected one number, Izz"),
    ("mass = 2.0", "mass = 2.0\naxes = [1, 0]", "bodies[0].axes", "unknown key"),
    ("mass = 2.0", "mas = 2.0", "bodies[0].mas", "did you mean 'mass'?"),
    ("nodes = 1", "nodes = 7", "bodies[0].nodes", "unknown node 7"),
    ("nodes = 1", "nodes = [1, 1]", "bodies[0].nodes", "expected each node once"),
    ('name = "body"', 'name = "a/b"', "bodies[0].name", "expected a name"),
])
def test_2d_deck_mistakes_name_the_key(old, new, key, words):
    assert old in BODY_2D
    text = BODY_2D.replace(old, new, 1)
    with pytest.raises(DeckError) as err:
        deck_io.loads(text)
    assert err.value.key == key, str(err.value)
    assert words in str(err.value)


@pytest.mark.parametrize(("dim", "keys", "key", "words"), [
    (2, 'shape = "box"', "bodies[0].size", 'required with shape = "box": [a, b]'),
    (2, 'shape = "cone"', "bodies[0].shape", "expected one of inertia, box, cylinder, sphere"),
    (2, "size = [1, 2]", "bodies[0].size", 'the default shape ("inertia") takes its size'),
    (2, 'shape = "box"\nsize = [1, 2, 3]', "bodies[0].size", "expected [a, b] for a 2D box"),
    (3, 'shape = "box"\nsize = [1, 0, 3]', "bodies[0].size", "3 positive numbers, got"),
    (3, 'shape = "cylinder"\nsize = [1]', "bodies[0].size", "[diameter, length] for a 3D"),
    (2, 'shape = "sphere"\nsize = [1]\naxis = [1, 0]', "bodies[0].axis",
     'applies to shape = "box"'),
    (2, 'shape = "cylinder"\nsize = [1]\naxis = [1, 0]', "bodies[0].axis",
     'applies to shape = "box"'),
    (3, 'shape = "box"\nsize = [1, 2, 3]\naxis = [0, 0, 0]', "bodies[0].axis",
     "expected a nonzero [x, y, z], got"),
    (2, 'shape = "box"\nsize = [1, 2]\naxis = [1, 0, 0]', "bodies[0].axis",
     "expected a nonzero [x, y], got"),
    (3, 'shape = "box"\nsize = [1, 2, 3]\naxis = "x"', "bodies[0].axis",
     "expected a list of numbers"),
])
def test_drawing_mistakes_name_the_key(dim, keys, key, words):
    text = body_deck(dim, inertia=0.5 if dim == 2 else J_FULL, duration=0.1).replace(
        "mass = 2.0", f"mass = 2.0\n{keys}")
    with pytest.raises(DeckError) as err:
        deck_io.loads(text)
    assert err.value.key == key, str(err.value)
    assert words in str(err.value), str(err.value)


@pytest.mark.parametrize(("inertia", "words"), [
    ("[[1.0, 0.5, 0], [0.4, 1.0, 0], [0, 0, 1.0]]", "expected a symmetric matrix, got Ixy = 0.5"),
    ("[[1.0, 2.0, 0], [2.0, 1.0, 0], [0, 0, 1.0]]", "positive semi-definite"),
    ("[1.0, 2.0]", "expected [Ixx, Iyy, Izz] or a 3 x 3 matrix"),
    ("2.0", "expected [Ixx, Iyy, Izz] or a 3 x 3 matrix"),
])
def test_3d_inertia_mistakes_name_the_key(inertia, words):
    text = body_deck(3, duration=0.01).replace(f"inertia = {J_FULL}", f"inertia = {inertia}")
    with pytest.raises(DeckError) as err:
        deck_io.loads(text)
    assert err.value.key == "bodies[0].inertia" and words in str(err.value)
    assert "(line 11)" in str(err.value)                  # the line of the inertia key


def test_two_body_groups_of_one_name_are_refused():
    text = BODY_2D.replace("[[steps]]", '[[bodies]]\nname = "body"\nnodes = 1\nmass = 1.0\n'
                           "inertia = 1.0\n\n[[steps]]")
    with pytest.raises(DeckError, match=r"bodies\[1\].name.*'body'"):
        deck_io.loads(text)


CANTILEVER_2D = """\
[model]
dim = 2

[[materials]]
name = "steel"
E = 1000.0
nu = 0.3

[[sections]]
name = "s"
A = 1.0
Iz = 0.01

[nodes]
coordinates = [[0, 0], [2, 0]]

[[elements]]
name = "beam"
type = "beam"
material = "steel"
section = "s"
connectivity = [[1, 2]]
divisions = 4

[[bodies]]
name = "weight"
nodes = 2
mass = 0.05
inertia = 0.01

[[supports]]
nodes = 1
fixed = ["all"]

[gravity]
acceleration = [0, -9.81]
"""


def test_a_body_welded_to_a_cantilever_loads_it_with_its_weight():
    """Static, linear beam: the tip deflection is ``m g L^3 / (3 E I)``."""
    text = CANTILEVER_2D + '\n[[steps]]\nname = "s"\ntype = "static"\n'
    dk, sysm, state, _ = solve(text)
    tip = int(np.flatnonzero(dk.model.node_ids == 2)[0])
    assert state.u[tip, 1] == pytest.approx(-0.05 * G * 8 / (3 * 1000 * 0.01), rel=1e-12)


def test_a_buckling_step_runs_with_a_body():
    """A body adds no stiffness: the Euler load of the cantilever (P L^2/(EI) = pi^2/4) stays."""
    text = (CANTILEVER_2D.replace("[gravity]\nacceleration = [0, -9.81]\n",
                                  '[[loads]]\nname = "P"\nnodes = 2\nforce = [-1.0, 0]\n')
            + '\n[[steps]]\nname = "b"\ntype = "buckling"\nmodes = 1\n')
    step = solve(text)[3][-1]
    assert step.factors[0] * 4 / (1000 * 0.01) == pytest.approx(math.pi**2 / 4, rel=1e-5)


# --- 5. oriented frames in the XDMF -----------------------------------------------------------

@pytest.mark.parametrize("dim", [2, 3])
def test_xdmf_draws_the_body_frames(tmp_path, dim):
    """axis_x, axis_y, axis_z of every frame: the columns of the nodal rotation matrix."""
    omega = [1.0, 2.0, 0.5] if dim == 3 else 1.3
    inertia = J_FULL if dim == 3 else 0.5
    text = body_deck(dim, inertia=inertia, omega=omega, h=0.05, duration=1.0)
    dk = deck_io.loads(text)
    result = run_deck(dk, str(tmp_path / "out.h5"))
    points, _, frames = read_xdmf(result.xdmf[0])
    with h5py.File(result.h5, "r") as h5:
        q = h5["steps/free/rotation"][()]                    # (T, n, 4)
        final = h5["steps/free/state/rot"][()]
    R = so3.quat_to_matrix(q[:, 0])                          # (T, 3, 3)
    assert len(frames) == len(q)
    for k, (_, point, _) in enumerate(frames):
        for c, name in enumerate(("axis_x", "axis_y", "axis_z")):
            assert point[name].shape == (len(points), 3)     # the node, then its drawing
            assert np.allclose(point[name][0], R[k, :, c], rtol=0, atol=1e-15)
            assert np.all(point[name][1:] == 0)
    last = frames[-1][1]
    if dim == 2:
        a = float(np.ravel(final)[0])
        assert a == pytest.approx(1.3, rel=1e-12)
        assert np.allclose(last["axis_x"][0], [math.cos(a), math.sin(a), 0], atol=1e-14)
        assert np.allclose(last["axis_y"][0], [-math.sin(a), math.cos(a), 0], atol=1e-14)
        assert np.allclose(last["axis_z"][0], [0, 0, 1], atol=1e-14)
    else:
        Rf = so3.quat_to_matrix(np.asarray(final).reshape(-1, 4))[0]
        axes = np.column_stack([last[n][0] for n in ("axis_x", "axis_y", "axis_z")])
        assert np.allclose(axes, Rf, atol=1e-14)
        assert np.allclose(axes.T @ axes, np.eye(3), atol=1e-13)
        assert np.linalg.norm(axes - np.eye(3)) > 0.5         # it turned


def drawn_box(h5_path: str, frame: int | None = None) -> np.ndarray:
    """(8, 3) the corners of the body's drawn box (a hexahedron cell), where the XDMF draws them
    at ``frame`` (None: the reference), read with meshio."""
    import meshio

    xdmf = h5_path[:-3] + ".xdmf"
    with meshio.xdmf.TimeSeriesReader(xdmf) as r, h5py.File(h5_path, "r") as h5:
        points, cells = r.read_points_cells()
        hexa = next(c.data for c in cells if c.type == "hexahedron")
        assert hexa.shape == (1, 8)
        assert h5["xdmf/kind"][()].tolist().count(1) == 1       # one body cell
        if frame is not None:
            points = points + r.read_data(frame)[1]["displacement"]
    return points[hexa[0]]


def box_inertia(corners: np.ndarray, mass: float) -> np.ndarray:
    """(3, 3) the inertia tensor about its centre of a uniform box of ``mass`` with ``corners``
    in the VTK hexahedron order (bottom face 0-3, top 4-7): its sides from corner 0 (closed form,
    m (b^2 + c^2) / 12 about the axis of side a, in the box's axes)."""
    e = np.array([corners[1] - corners[0], corners[3] - corners[0], corners[4] - corners[0]])
    sides = np.linalg.norm(e, axis=1)
    Q = (e / sides[:, None]).T
    s2 = sides**2
    return Q @ np.diag(mass / 12 * (s2.sum() - s2)) @ Q.T


def test_a_body_is_drawn_as_the_box_of_its_inertia_moving_with_it(tmp_path):
    """The default drawing of a 3D body (J_FULL: no principal axis along a global one) is a box
    whose own inertia as a uniform box of the body's mass is the body's tensor [1e-12], centred
    at its node; while the body tumbles, the box's corners move rigidly with it: the corners'
    displaced positions are the node's motion applied to their offsets [1e-12]."""
    text = body_deck(3, omega=[1.0, 2.0, 0.5], h=0.05, duration=0.5)
    result = run_deck(deck_io.loads(text), str(tmp_path / "box.h5"))
    corners = drawn_box(result.h5)
    np.testing.assert_allclose(box_inertia(corners, 2.0), J_FULL, rtol=0, atol=1e-12)
    np.testing.assert_allclose(corners.mean(axis=0), [0.1, 0.2, 0.3], atol=1e-15)
    with h5py.File(result.h5, "r") as h5:
        q = h5["steps/free/rotation"][:, 0]
        u = h5["steps/free/displacement"][:, 0]
    for k in range(len(q)):
        R = so3.quat_to_matrix(q[k])
        want = np.array([0.1, 0.2, 0.3]) + u[k] + (corners - [0.1, 0.2, 0.3]) @ R.T
        np.testing.assert_allclose(drawn_box(result.h5, k), want, rtol=0, atol=1e-12)
    assert np.linalg.norm(so3.quat_to_matrix(q[-1]) - np.eye(3)) > 0.5     # it turned


def test_a_box_drawn_from_the_deck_has_its_size_and_axis(tmp_path):
    """``shape = "box"``, ``size = [a, b, c]``, ``axis``: side a along the axis, b normal to it
    and to z, c = a x b; the drawing only (the dynamics stay the inertia's)."""
    text = body_deck(3, duration=0.1).replace(
        "mass = 2.0", 'mass = 2.0\nshape = "box"\nsize = [0.6, 0.2, 0.1]\naxis = [1, 1, 0]')
    result = run_deck(deck_io.loads(text), str(tmp_path / "box.h5"))
    c = drawn_box(result.h5)
    a, b, h = c[1] - c[0], c[3] - c[0], c[4] - c[0]
    np.testing.assert_allclose(a, 0.6 * np.array([1, 1, 0]) / np.sqrt(2), atol=1e-15)
    np.testing.assert_allclose(b, 0.2 * np.array([-1, 1, 0]) / np.sqrt(2), atol=1e-15)
    np.testing.assert_allclose(h, [0, 0, 0.1], atol=1e-15)
    with h5py.File(result.h5, "r") as h5:
        g = h5["model/groups/body"].attrs
        assert (g["shape"], g["size"], g["axis"]) == ("box", "0.6 0.2 0.1", "1.0 1.0 0.0")


def test_a_model_without_rotations_has_no_frames(tmp_path):
    text = """\
[model]
dim = 2

[[materials]]
name = "m"
E = 100.0
nu = 0.3
density = 1.0

[[sections]]
name = "s"
A = 1.0

[nodes]
coordinates = [[0, 0], [1, 0]]

[[elements]]
name = "bar"
type = "truss"
material = "m"
section = "s"
connectivity = [[1, 2]]

[[supports]]
nodes = 1
fixed = ["ux", "uy"]

[[supports]]
nodes = 2
fixed = ["uy"]

[[loads]]
name = "P"
nodes = 2
force = [1.0, 0]

[[steps]]
name = "s"
type = "static"
"""
    result = run_deck(deck_io.loads(text), str(tmp_path / "out.h5"))
    _, _, frames = read_xdmf(result.xdmf[0])
    assert frames and not any("axis_x" in point for _, point, _ in frames)


# --- 6. fem run ------------------------------------------------------------------------------

def test_fem_run_writes_a_body_in_a_dynamic_step(tmp_path):
    deck = tmp_path / "body.toml"
    deck.write_text(body_deck(3, velocity=[0.1, 0, 0], omega=[0.3, 1.0, 0.2], h=0.05,
                              duration=0.5))
    p = subprocess.run([sys.executable, "-m", "fem.cli", "run", str(deck), "-o",
                        str(tmp_path / "out.h5")], cwd=tmp_path, capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stderr == ""
    with h5py.File(tmp_path / "out.h5", "r") as h5:
        g = h5["model/groups/body"]
        assert g.attrs["type"] == "rigid" and g.attrs["cell_type"] == "vertex"
        assert g["mass"][()].tolist() == [2.0] and np.array_equal(g["inertia"][0], J_FULL)
        assert h5["steps/free/time"].shape == (11,)
        T = h5["steps/free/energy/kinetic"][()]
        assert np.allclose(T, T[0], rtol=1e-10)
    assert (tmp_path / "out.xdmf").exists()


def test_fem_run_names_the_key_of_a_body_mistake(tmp_path):
    deck = tmp_path / "body.toml"
    deck.write_text(BODY_2D.replace("mass = 2.0", "mass = -1.0"))
    p = subprocess.run([sys.executable, "-m", "fem.cli", "run", str(deck), "-o",
                        str(tmp_path / "out.h5")], cwd=tmp_path, capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert p.stderr.startswith("fem: error: bodies[0].mass (line 10): expected a positive")
