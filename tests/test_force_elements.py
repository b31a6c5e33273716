"""Force elements (issue 30, items 2 and 3): spring-dampers, their step forms, tangents, decks.

References: the energy identity of the discrete gradient (``f . dq = U1 - U0 + D``, exact by
construction, checked to round-off over random steps), central finite differences of the forces
(static and step forms), exact integrals of the tables, and the implicit mid-point rule of the
linear oscillator (which the energy-conserving scheme is for a linear spring-damper).
"""

import copy
import tomllib
from pathlib import Path

import numpy as np
import pytest
from helpers import with_changes

from fem import rotations as so3
from fem.elements.force import Curve, SpringDamper
from fem.elements.force.coordinate import CoordinateForce, CoordinateGeometry
from fem.errors import DeckError
from fem.io import deck as deck_io
from fem.run import run
from fem.state import State
from fem.time_functions import Ramp, Table

CASES = Path(__file__).resolve().parents[1] / "cases"

SPRINGS = {"linear": Curve.linear(3e3, 40.0),
           "table": Curve.table([[-0.1, -500.0], [0.0, 20.0], [0.05, 200.0], [0.2, 1500.0]])}
DAMPERS = {"none": None, "linear": Curve.linear(60.0),
           "table": Curve.table([[-1.0, -30.0], [0.0, 0.0], [0.3, 90.0], [2.0, 150.0]])}


def axial(spring, damper, dim=3, grounded=False, E=5, rng=None):
    rng = rng or np.random.default_rng(0)
    n = E if grounded else 2 * E
    X = rng.normal(size=(n, 3))
    if dim == 2:
        X[:, 2] = 0.0
    if grounded:
        ground = X + 0.5 * rng.normal(size=(E, 3))
        if dim == 2:
            ground[:, 2] = 0.0
        return SpringDamper("s", np.arange(E)[:, None], X, dim, SPRINGS[spring],
                            DAMPERS[damper], ground=ground), X
    conn = np.arange(2 * E).reshape(E, 2)
    return SpringDamper("s", conn, X, dim, SPRINGS[spring], DAMPERS[damper],
                        free_length=0.8 * np.ones(E)), X


def states(g, X, rng, scale=0.1, h=1e-2):
    dim = g.dim
    s0 = State.reference(dim, len(X))
    s0.u[:, :dim] = scale * rng.normal(size=(len(X), dim))
    s0.v[:, :dim] = rng.normal(size=(len(X), dim))
    s1 = s0.copy()
    s1.t = h
    s1.u[:, :dim] += scale * rng.normal(size=(len(X), dim))
    return s0, s1


def increment(g, s0, s1):
    nodal = np.zeros_like(s0.v)
    nodal[:, :g.dim] = (s1.u - s0.u)[:, :g.dim]
    return g.element_vector(nodal)


GROUPS = [(s, d, dim, gr) for s in SPRINGS for d in DAMPERS for dim in (2, 3)
          for gr in (False, True)]


def test_curve_integral_and_secant():
    """``U`` is the exact integral of the table (a fine trapezoid rule), the secant its slope."""
    c = SPRINGS["table"]
    x = np.linspace(-0.3, 0.4, 70001)
    F = c(x)[0]
    U = np.concatenate([[0], np.cumsum(0.5 * (F[1:] + F[:-1]) * np.diff(x))])
    U -= np.interp(0.0, x, U)
    np.testing.assert_allclose(c.integral(x), U, atol=1e-9)
    S, _ = c.secant(np.array([-0.25, 0.01]), np.array([0.3, 0.01 + 1e-12]))
    np.testing.assert_allclose(S[0], (c.integral(0.3) - c.integral(-0.25)) / 0.55, rtol=1e-14)
    np.testing.assert_allclose(S[1], c(0.01)[0], rtol=1e-9)


@pytest.mark.parametrize("spring, damper, dim, grounded", GROUPS)
def test_discrete_gradient_work_equals_energy_change(spring, damper, dim, grounded):
    """``f . dq = U1 - U0 + D`` to round-off over random steps, ``D >= 0``; no damper: ``D = 0``."""
    rng = np.random.default_rng(1)
    for _ in range(20):
        g, X = axial(spring, damper, dim, grounded, rng=rng)
        s0, s1 = states(g, X, rng)
        hist = g.conserving_start(s0)
        f, _, U1, h1 = g.conserving(s0, s1, None, increment(g, s0, s1), hist)
        work = np.einsum("ei,ei->e", f, increment(g, s0, s1))
        U0 = g.energy(s0)
        np.testing.assert_allclose(U1, g.energy(s1), rtol=1e-14, atol=1e-14)
        D = h1["dissipated"] if h1 else np.zeros(len(g))
        scale = np.abs(U0) + np.abs(U1) + np.abs(work)
        np.testing.assert_array_less(np.abs(work - (U1 - U0 + D)), 1e-12 * scale)
        assert np.all(D >= 0)
        if damper == "none":
            assert not h1


@pytest.mark.parametrize("spring, damper, dim, grounded", GROUPS)
def test_conserving_tangent_is_the_derivative(spring, damper, dim, grounded):
    """The step form's tangent equals central differences of its force by the end positions."""
    rng = np.random.default_rng(2)
    g, X = axial(spring, damper, dim, grounded, rng=rng)
    s0, s1 = states(g, X, rng, scale=0.01)
    hist = g.conserving_start(s0)
    _, K, _, _ = g.conserving(s0, s1, None, increment(g, s0, s1), hist)
    fd = _columns(g, s1, lambda s: g.conserving(s0, s, None, increment(g, s0, s), hist)[0])
    np.testing.assert_allclose(K, fd, atol=1e-6 * np.abs(K).max())


@pytest.mark.parametrize("spring, damper, dim, grounded", GROUPS)
def test_static_tangent_and_damping_are_the_derivatives(spring, damper, dim, grounded):
    """``evaluate``'s tangent (at fixed velocities) and ``damping`` (by the velocities)."""
    rng = np.random.default_rng(3)
    g, X = axial(spring, damper, dim, grounded, rng=rng)
    s, _ = states(g, X, rng)
    _, K = g.evaluate(s)
    fd = _columns(g, s, lambda t: g.evaluate(t, tangent=False)[0])
    np.testing.assert_allclose(K, fd, atol=1e-6 * np.abs(K).max())
    C = g.damping(s)
    fd = _columns(g, s, lambda t: g.evaluate(t, tangent=False)[0], field="v")
    np.testing.assert_allclose(C, fd, atol=1e-6 * max(np.abs(C).max(), 1.0))
    if damper == "none":
        assert not np.any(C)


def _columns(g, s, force, field="u", eps=1e-7):
    """(E, nd, nd) central differences of ``force(state)`` by the element DOFs."""
    E, nd = len(g), g.nd
    out = np.zeros((E, nd, nd))
    for a in range(g.nen):
        for i in range(g.ndn):
            f = []
            for sign in (1, -1):
                t = s.copy()
                getattr(t, field)[g.conn[:, a], i] += sign * eps
                f.append(force(t))
            out[:, :, a * g.ndn + i] = (f[0] - f[1]) / (2 * eps)
    return out


# --- decks and runs ------------------------------------------------------------------------------

def case(name):
    return tomllib.loads((CASES / name / "deck.toml").read_text())


def changed(data, table="connectors", k=0, **changes):
    data = copy.deepcopy(data)
    with_changes(data[table][k], changes)
    return data


@pytest.mark.parametrize("changes, where, says", [
    ({"stiffness": -1.0}, "connectors[0].stiffness", "-1"),
    ({"damping": -3.0}, "connectors[0].damping", "-3"),
    ({"ground": [7]}, "connectors[0].ground", "unknown node 7"),
    ({"ground": None, "pairs": [[1, 1]]}, "connectors[0].pairs[0]", "twice"),
    ({"ground": None}, "connectors[0]", "neither"),
    ({"pairs": [[1, 2]]}, "connectors[0]", "both"),
    ({"points": None}, "connectors[0].points", "required"),
    ({"points": [[0.0, 0.0]]}, "connectors[0].points[0]", "zero length"),
    ({"points": [[1.0, 0.0, 0.0]]}, "connectors[0].points[0]", "2 coordinates"),
    ({"stiffness": None, "damping": None}, "connectors[0]", "neither"),
    ({"stiffness": None, "spring_table": [[0.0, 0.0], [0.0, 1.0]]}, "connectors[0].spring_table",
     "increasing"),
    ({"spring_table": [[0.0, 0.0], [1.0, 1.0]]}, "connectors[0].spring_table", "not both"),
    ({"stiffness": None, "spring_table": [[0.0, 1.0]]}, "connectors[0].spring_table", "two rows"),
    ({"damping": None, "damper_table": [[-1.0, -2.0], [1.0, -3.0]]},
     "connectors[0].damper_table", "nondecreasing"),
    ({"damping": None, "damper_table": [[0.5, 1.0], [1.0, 2.0]]},
     "connectors[0].damper_table", "0 at rate 0"),
    ({"free_length": 0.0}, "connectors[0].free_length", "0"),
    ({"type": "damper"}, "connectors[0].type", "spring_damper"),
])
def test_deck_errors(changes, where, says):
    """Bad connector input is a deck error naming the key and what was wrong."""
    with pytest.raises(DeckError) as err:
        deck_io.from_dict(changed(case("damped_oscillator"), **changes))
    assert err.value.key == where and says in str(err.value), str(err.value)


def test_oscillator_is_the_midpoint_rule_and_books_the_damping(tmp_path):
    """The energy-conserving run of the damped oscillator is the implicit mid-point rule.

    For a linear spring-damper on its line the scheme is exactly ``z_n+1 = (I - hA/2)^-1 (I +
    hA/2) z_n``: the run matches it to the Newton tolerance at every step, and ``total +
    damping`` stays at the initial energy to 1e-8 relative (its energy rows).
    """
    import h5py

    data = case("damped_oscillator")
    data["steps"] = data["steps"][:1]
    step = data["steps"][0]
    step.update(duration=0.4, time_step=2e-3)
    step.pop("output_interval")
    d = deck_io.from_dict(data, base_dir=str(tmp_path))
    run(d, str(tmp_path / "out.h5"))
    g = d.model.groups[0]
    k, c = g.spring.F[1] - g.spring.F[0], g.damper.F[1]
    A = np.array([[0.0, 1.0], [-k, -c]])
    h = 2e-3
    P = np.linalg.solve(np.eye(2) - h / 2 * A, np.eye(2) + h / 2 * A)
    z, xs = np.array([0.0, 1.0]), [0.0]
    for _ in range(200):
        z = P @ z
        xs.append(z[0])
    with h5py.File(tmp_path / "out.h5") as f:
        s = f["steps/free"]
        x = s["displacement"][:, 0, 0]
        total, damping = s["energy/total"][()], s["energy/damping"][()]
        dissipated = s["elements/suspension/dissipated"][:, 0]
    np.testing.assert_allclose(x, xs, atol=1e-11)
    np.testing.assert_allclose(total + damping, 0.5, rtol=1e-8)
    np.testing.assert_allclose(dissipated, damping, rtol=1e-12)
    assert damping[-1] > 0.05


# --- forces on joint coordinates -----------------------------------------------------------------

COORDS = [(2, "angle"), (2, "slide"), (3, "angle"), (3, "slide")]


def coordinate_force(dim, which, grounded, E=4, rng=None, **kw):
    """Joint coordinate forces on random node pairs with offsets and frames."""
    rng = rng or np.random.default_rng(0)
    n = E if grounded else 2 * E
    X = rng.normal(size=(n, 3))
    if dim == 2:
        X[:, 2] = 0.0
    pairs = np.column_stack([np.arange(E), np.arange(E)]) if grounded \
        else np.arange(2 * E).reshape(E, 2)
    offsets = 0.3 * rng.normal(size=(E, 2, 3))
    frames = np.linalg.qr(rng.normal(size=(3, 3)))[0] if dim == 3 else np.eye(3)
    if dim == 2 and which == "slide":
        a = rng.normal(size=2)
        a /= np.linalg.norm(a)
        frames = np.column_stack([[a[0], a[1], 0], [-a[1], a[0], 0], [0, 0, 1]])
    rows = {(2, "angle"): (("angle",),), (2, "slide"): (("slide", 0),),
            (3, "angle"): (("turn",),), (3, "slide"): (("slide", 2),)}[dim, which]
    kind = "revolute" if which == "angle" else "prismatic"
    geo = CoordinateGeometry("c", kind, pairs, offsets, np.broadcast_to(frames, (E, 3, 3)), dim,
                             rows, ground_a=grounded)
    args = dict(spring=Curve.linear(40.0, 3.0), free=0.1, damper=Curve.linear(2.0),
                friction=1.5, velocity_scale=0.2, limits=(-0.05, 0.08), limit_stiffness=900.0,
                effort=Table((0.0, 0.3, 1.0), (0.0, 2.0, -1.0)),
                controller=(30.0, 4.0, Ramp(0.0, 1.0, 0.0, 0.5)))
    args.update(kw)
    return CoordinateForce("c", geo, X, **args), X


def random_states(g, X, rng, scale=0.1, h=1e-2, turn=0.3):
    dim = g.dim
    s0 = State.reference(dim, len(X))
    s0.u[:, :dim] = scale * rng.normal(size=(len(X), dim))
    s0.v[:] = rng.normal(size=s0.v.shape)
    if dim == 2:
        s0.rot[:] = turn * rng.normal(size=len(X))
    else:
        s0.rot[:] = so3.quat_from_rotvec(turn * rng.normal(size=(len(X), 3)))
    s0.t = 0.37
    s1 = s0.copy()
    s1.t = s0.t + h
    d = np.zeros_like(s0.v)
    d[:, :dim] = scale * rng.normal(size=(len(X), dim))
    d[:, dim if dim == 2 else 3:] = scale * rng.normal(size=(len(X), 1 if dim == 2 else 3))
    s1.increment(d)
    if g.dim == 3 and g.turn:                # b turned from a about the axis (a revolute's)
        for s in (s0, s1):
            _about_axis(g, s, rng, turn)
    return s0, s1, g.element_vector(d)


def _about_axis(g, s, rng, turn):
    """Nodes ``b`` turned from ``a`` about the joint axis (``a``: the ground if grounded)."""
    geo = g.geometry
    axis = geo.frames[:, :, 2] * turn * rng.normal(size=(len(g), 1))
    rel = so3.quat_from_rotvec(axis)
    a = so3.quat_identity(len(g)) if geo.ground_a else s.rot[geo.conn[:, 0]]
    s.rot[geo.conn[:, 1]] = so3.quat_mul(a, rel)


def _spin_columns(g, s, force, eps=1e-7):
    """(E, nd, nd) central differences by the element DOFs (3D rotations: spatial spins)."""
    E, nd = len(g), g.nd
    out = np.zeros((E, nd, nd))
    for a in range(g.nen):
        for i in range(g.ndn):
            f = []
            for sign in (1, -1):
                t = s.copy()
                d = np.zeros_like(t.v)
                d[g.conn[:, a], i] = sign * eps
                t.increment(d)
                f.append(force(t))
            out[:, :, a * g.ndn + i] = (f[0] - f[1]) / (2 * eps)
    return out


@pytest.mark.parametrize("dim, which", COORDS)
@pytest.mark.parametrize("grounded", [False, True])
def test_coordinate_gradient_is_the_coordinate_derivative(dim, which, grounded):
    """``G`` is the derivative of ``q`` (spins in 3D); ``f = Q G`` with the static tangent."""
    rng = np.random.default_rng(4)
    g, X = coordinate_force(dim, which, grounded, rng=rng)
    s, _, _ = random_states(g, X, rng)
    _, G, _ = g._static(s)
    fd = _spin_columns(g, s, lambda t: g.coordinate(t)[:, None])[:, 0]
    np.testing.assert_allclose(G, fd, atol=1e-7)
    _, K = g.evaluate(s)
    fd = _spin_columns(g, s, lambda t: g.evaluate(t, tangent=False)[0])
    np.testing.assert_allclose(K, fd, atol=1e-6 * np.abs(K).max())
    C = g.damping(s)
    fdv = _columns(g, s, lambda t: g.evaluate(t, tangent=False)[0], field="v")
    np.testing.assert_allclose(C, fdv, atol=1e-6 * np.abs(C).max())


@pytest.mark.parametrize("dim, which", COORDS)
@pytest.mark.parametrize("grounded", [False, True])
def test_coordinate_step_work_equals_energy_change(dim, which, grounded):
    """``f . inc = U1 - U0 + D - W`` to round-off (``W`` the actuators' work), ``D >= 0``.

    ``inc`` pairs translations and the step's rotation vectors (what the energy-conserving
    scheme hands groups that are not co-rotational); the steps cross the stops.
    """
    rng = np.random.default_rng(5)
    for _ in range(10):
        g, X = coordinate_force(dim, which, grounded, rng=rng)
        s0, s1, _ = random_states(g, X, rng)
        if dim == 3:
            theta = so3.rotvec_from_quat(so3.quat_mul(s1.rot, so3.quat_conj(s0.rot)))
            nodal = np.concatenate([s1.u - s0.u, theta], axis=1)
        else:
            nodal = np.column_stack([(s1.u - s0.u)[:, :2], s1.rot - s0.rot])
        inc = g.element_vector(nodal)
        hist = g.conserving_start(s0)
        f, _, U1, h1 = g.conserving(s0, s1, None, inc, hist)
        work = np.einsum("ei,ei->e", f, inc)
        U0 = g.energy(s0)
        D, W = h1["dissipated"], h1["actuator_work"]
        scale = np.abs(U0) + np.abs(U1) + np.abs(work) + np.abs(D) + np.abs(W)
        np.testing.assert_array_less(np.abs(work - (U1 - U0 + D - W)), 1e-12 * scale)
        assert np.all(D >= 0)


@pytest.mark.parametrize("dim, which", COORDS)
def test_coordinate_step_tangent(dim, which):
    """The step form's tangent against differences by spins of ``s1`` (3D angles: to O(h))."""
    rng = np.random.default_rng(6)
    g, X = coordinate_force(dim, which, False, rng=rng, limits=None)
    s0, s1, _ = random_states(g, X, rng, scale=0.01, turn=0.02)
    hist = g.conserving_start(s0)

    def force(s):
        return g.conserving(s0, s, None, None, hist)[0]

    K = g.conserving(s0, s1, None, None, hist)[1]
    fd = _spin_columns(g, s1, force)
    tol = 1e-2 if (dim, which) == (3, "angle") else 1e-6
    np.testing.assert_allclose(K, fd, atol=tol * np.abs(K).max())


@pytest.mark.parametrize("changes, where, says", [
    ({"stiffness": -1.0}, "joints[0].stiffness", "-1"),
    ({"damping": -2.0}, "joints[0].damping", "-2"),
    ({"velocity_scale": None}, "joints[0].velocity_scale", "required"),
    ({"limits": [0.1, -0.1], "limit_stiffness": 1e3}, "joints[0].limits", "min < max"),
    ({"limits": [-0.1, 0.1]}, "joints[0].limit_stiffness", "required"),
    ({"limit_stiffness": 1e3}, "joints[0].limit_stiffness", "without limits"),
    ({"setpoint": "nowhere", "proportional_gain": 3.0}, "joints[0].setpoint", "unknown function"),
    ({"proportional_gain": 3.0}, "joints[0].setpoint", "required"),
    ({"effort": "nowhere"}, "joints[0].effort", "unknown function"),
    ({"type": "fixed"}, "joints[0].stiffness", "revolute, prismatic or cylindrical"),
    ({"coordinate": "slide"}, "joints[0].coordinate", "no slide"),
    ({"spring_table": [[0.0, 0.0], [-1.0, 1.0]], "stiffness": None}, "joints[0].spring_table",
     "increasing"),
    ({"friction": -1.0}, "joints[0].friction", "-1"),
])
def test_joint_force_deck_errors(changes, where, says):
    """Bad joint-force input is a deck error naming the key and what was wrong."""
    with pytest.raises(DeckError) as err:
        deck_io.from_dict(changed(case("coulomb_rotor"), "joints", **changes))
    assert err.value.key == where and says in str(err.value), str(err.value)


def test_controller_on_a_spherical_joint_is_refused():
    data = case("coulomb_rotor")
    data["model"]["dim"] = 3
    data["nodes"]["coordinates"] = [[0.0, 0.0, 0.0]]
    data["bodies"][0]["inertia"] = [1.0, 1.0, 1.0]
    data["velocities"][0]["angular_velocity"] = [0.0, 0.0, 1.0]
    data["functions"] = [{"name": "r", "type": "constant", "value": 0.1}]
    data = changed(data, "joints", type="spherical", stiffness=None, friction=None,
                   velocity_scale=None, proportional_gain=10.0, setpoint="r")
    with pytest.raises(DeckError) as err:
        deck_io.from_dict(data)
    assert err.value.key == "joints[0].proportional_gain" and "spherical" in str(err.value)


@pytest.mark.parametrize("changes, where, says", [
    ({"axis": [0.0, 0.0, 1.0]}, "connectors[0].axis", "2D"),
    ({"stiffness": None}, "connectors[0]", "neither"),
    ({"ground": None, "pairs": [[1, 5]]}, "connectors[0].pairs[0]", "unknown node 5"),
])
def test_rotational_deck_errors(changes, where, says):
    data = case("coulomb_rotor")
    data["connectors"] = [{"name": "t", "type": "rotational_spring_damper", "ground": [1],
                           "stiffness": 100.0}]
    with pytest.raises(DeckError) as err:
        deck_io.from_dict(changed(data, **changes))
    assert err.value.key == where and says in str(err.value), str(err.value)


def test_rotational_connector_is_the_joint_spring(tmp_path):
    """The rotor's spring as a rotational connector gives the joint spring's run, bit for bit.

    Two routes to the same generalized force (the joint's coordinate, the connector's angle to
    the ground): the rotation histories agree to round-off, and the friction books the same.
    """
    import h5py

    data = case("coulomb_rotor")
    data["steps"][0]["duration"] = 0.3
    runs = []
    for name, d in (("joint", data), ("connector", changed(data, "joints", stiffness=None))):
        if name == "connector":
            d["connectors"] = [{"name": "t", "type": "rotational_spring_damper", "ground": [1],
                                "stiffness": 100.0}]
        run(deck_io.from_dict(d, base_dir=str(tmp_path)), str(tmp_path / f"{name}.h5"))
        with h5py.File(tmp_path / f"{name}.h5") as f:
            s = f["steps/swing"]
            runs.append((s["rotation_vector"][:, 0, 2], s["energy/damping"][()],
                         s["energy/total"][()]))
    np.testing.assert_allclose(runs[0][0], runs[1][0], rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(runs[0][1], runs[1][1], rtol=1e-10)
    np.testing.assert_allclose(runs[0][2] + runs[0][1], 0.5, rtol=1e-9)


# --- the quarter-car and the PD arm -------------------------------------------------------------

def test_quarter_car_follows_solve_ivp(tmp_path):
    """The energy-conserving run of ``cases/quarter_car`` against scipy's solve_ivp.

    The same 2-DOF model (point masses on linear spring-dampers, the ramped road): the sprung
    mass within 1e-4 of its peak, the unsprung within 1e-3 (the scheme's phase error of the
    69 rad/s wheel hop at h = 1 ms is (w h)^2/12 = 4e-4 a radian); the damper's energy is the
    integral of c (v_s - v_u)^2 along the reference to 1e-3.
    """
    import h5py
    from scipy.integrate import solve_ivp

    data = case("quarter_car")
    data["steps"] = data["steps"][1:]
    data["steps"][0]["duration"] = 0.5
    run(deck_io.from_dict(data, base_dir=str(tmp_path)), str(tmp_path / "out.h5"))
    ms, mu, ks, cs, kt = 250.0, 35.0, 16000.0, 1000.0, 160000.0

    def rhs(t, z):
        xs, xu, vs, vu, _ = z
        Fs = ks * (xs - xu) + cs * (vs - vu)
        road = 0.05 * min(max(t / 0.01, 0.0), 1.0)
        return [vs, vu, -Fs / ms, (Fs - kt * (xu - road)) / mu, cs * (vs - vu) ** 2]

    sol = solve_ivp(rhs, (0, 0.5), np.zeros(5), method="DOP853", rtol=1e-12, atol=1e-14,
                    dense_output=True, max_step=1e-3)
    with h5py.File(tmp_path / "out.h5") as f:
        s = f["steps/ride"]
        t, x = s["time"][()], s["displacement"][:, :2, 1]
        damping = s["energy/damping"][()]
    ref = sol.sol(t)
    np.testing.assert_allclose(x[:, 1], ref[0], atol=1e-4 * np.abs(ref[0]).max())
    np.testing.assert_allclose(x[:, 0], ref[1], atol=1e-3 * np.abs(ref[1]).max())
    np.testing.assert_allclose(damping, ref[4], atol=1e-3 * ref[4].max())


def _arm_poles(q, kp, kd):
    """The poles of M(q) s^2 + K_d s + K_p + K_g(q) of two 1 kg, 1 m rods (case README)."""
    import scipy.linalg as la

    m, l, g = 1.0, 1.0, 9.81
    lc, inertia = l / 2, m * l * l / 12
    c2, c1, c12 = np.cos(q[1]), np.cos(q[0]), np.cos(q[0] + q[1])
    M = np.array([[2 * inertia + m * lc**2 + m * (l**2 + lc**2 + 2 * l * lc * c2),
                   inertia + m * (lc**2 + l * lc * c2)],
                  [inertia + m * (lc**2 + l * lc * c2), inertia + m * lc**2]])
    Kg = g * np.array([[m * lc * c1 + m * (l * c1 + lc * c12), m * lc * c12],
                       [m * lc * c12, m * lc * c12]])
    A = np.block([[np.zeros((2, 2)), np.eye(2)],
                  [-la.solve(M, np.diag(kp) + Kg), -la.solve(M, np.diag(kd))]])
    p = np.linalg.eigvals(A)
    return np.sort_complex(p[p.imag >= 0])


def test_pd_arm_poles_and_balance(tmp_path):
    """``cases/pd_two_link_arm``: every linearized pole against the joint-space model.

    The settled angles satisfy ``K_p (r - q) = dV_g/dq`` to 1e-6 N m; the poles of the linearize
    step equal those of ``M(q) s^2 + K_d s + K_p + K_g(q)`` at the settled angles to 1e-7 (the
    real ones too, which the case's table cannot name). Without the controllers' gains in D and
    K they would not (the hanging arm's poles are +-i sqrt(...)).
    """
    import h5py

    data = case("pd_two_link_arm")
    run(deck_io.from_dict(data, base_dir=str(tmp_path)), str(tmp_path / "arm.h5"))
    with h5py.File(tmp_path / "arm.h5") as f:
        s = f["steps/reach"]
        q = np.array([s["elements/shoulder_force/coordinate"][-1, 0],
                      s["elements/elbow_force/coordinate"][-1, 0]])
        p = np.sort_complex(f["linear/poles/eigenvalues"][()])
    g, r = 9.81, np.array([0.6, -0.4])
    grad = g * np.array([0.5 * np.sin(q[0]) + np.sin(q[0]) + 0.5 * np.sin(q[0] + q[1]),
                         0.5 * np.sin(q[0] + q[1])])
    np.testing.assert_allclose(np.array([60.0, 20.0]) * (r - q), grad, atol=1e-6)
    np.testing.assert_allclose(p, _arm_poles(q, [60.0, 20.0], [25.0, 5.0]), rtol=1e-7)


def test_pd_arm_energy_conserving_balance(tmp_path):
    """With the energy-conserving scheme ``total + damping - actuator_work`` stays at zero.

    The controllers' work (their P and D parts, the setpoint moving) is booked in
    ``energy/actuator_work`` (the D part too: it is the controller's torque, not a damper, so
    ``damping`` stays zero); the balance closes to the Newton tolerance (1e-10 of the work).
    """
    import h5py

    data = case("pd_two_link_arm")
    data["steps"] = data["steps"][:1]
    data["steps"][0].update(integrator="energy_conserving", duration=1.5, output_interval=0.1)
    run(deck_io.from_dict(data, base_dir=str(tmp_path)), str(tmp_path / "arm.h5"))
    with h5py.File(tmp_path / "arm.h5") as f:
        e = f["steps/reach/energy"]
        total, damping, work = e["total"][()], e["damping"][()], e["actuator_work"][()]
    assert abs(work[-1]) > 0.5 and not np.any(damping)
    np.testing.assert_allclose(total + damping - work, 0.0, atol=1e-10 * np.abs(work).max())
