"""Plane bushings (issue 30, item 2): step form, tangents, a mass on a bushing, deck errors.

References: the energy identity of the discrete gradient (``f . dq = U1 - U0 + D``, exact in
the plane, checked to round-off over random steps), central finite differences of the forces
(static and step forms, and of the force by the velocities for ``damping``), and the closed-form
frequencies ``sqrt(k/m)`` and ``sqrt(k_r/J)`` of a rigid body on a bushing to the ground (the
energy-conserving scheme is the mid-point rule for this linear system: its discrete frequency
``2 atan(w h / 2) / h`` is compared, exact for the step).
"""


import numpy as np
import pytest
from helpers import with_changes

from fem.elements.force import Bushing
from fem.errors import DeckError
from fem.io import deck as deck_io
from fem.run import run
from fem.state import State

K_FULL = np.array([[4e3, 5e2, 1e2], [5e2, 3e3, -2e2], [1e2, -2e2, 8e2]])
C_FULL = np.array([[30.0, 5.0, 1.0], [5.0, 20.0, -2.0], [1.0, -2.0, 6.0]])


def bushing(grounded, damped, E=4, rng=None):
    rng = rng or np.random.default_rng(0)
    n = E if grounded else 2 * E
    X = rng.normal(size=(n, 3))
    X[:, 2] = 0.0
    conn = np.arange(E)[:, None] if grounded else np.arange(2 * E).reshape(E, 2)
    a = rng.normal(size=2)
    a /= np.linalg.norm(a)
    F = np.array([[a[0], -a[1]], [a[1], a[0]]])
    return Bushing("b", conn, X, 2, K_FULL, C_FULL if damped else None, axes=F), X


def states(X, rng, scale=0.1, turn=0.5, h=1e-2):
    n = len(X)
    s0 = State.reference(2, n)
    s0.u[:, :2] = scale * rng.normal(size=(n, 2))
    s0.rot[:] = turn * rng.normal(size=n)
    s0.v[:] = rng.normal(size=s0.v.shape)
    s1 = s0.copy()
    s1.t = h
    d = np.zeros_like(s0.v)
    d[:, :2] = scale * rng.normal(size=(n, 2))
    d[:, 2] = turn * rng.normal(size=n)
    s1.increment(d)
    return s0, s1


def increment(g, s0, s1):
    nodal = np.column_stack([(s1.u - s0.u)[:, :2], s1.rot - s0.rot])
    return g.element_vector(nodal)


def columns(g, s, force, field="u", eps=1e-7):
    """(E, nd, nd) central differences of ``force(state)`` by the element DOFs."""
    out = np.zeros((len(g), g.nd, g.nd))
    for a in range(g.nen):
        for i in range(3):
            f = []
            for sign in (1, -1):
                t = s.copy()
                if field == "v":
                    t.v[g.conn[:, a], i] += sign * eps
                elif i < 2:
                    t.u[g.conn[:, a], i] += sign * eps
                else:
                    t.rot[g.conn[:, a]] += sign * eps
                f.append(force(t))
            out[:, :, a * 3 + i] = (f[0] - f[1]) / (2 * eps)
    return out


CASES = [(gr, dm) for gr in (False, True) for dm in (False, True)]


@pytest.mark.parametrize("grounded, damped", CASES)
def test_step_work_equals_energy_change(grounded, damped):
    """``f . dq = U1 - U0 + D`` to round-off over random large steps, ``D >= 0``."""
    rng = np.random.default_rng(1)
    for _ in range(20):
        g, X = bushing(grounded, damped, rng=rng)
        s0, s1 = states(X, rng)
        inc = increment(g, s0, s1)
        hist = g.conserving_start(s0)
        f, _, U1, h1 = g.conserving(s0, s1, None, inc, hist)
        work = np.einsum("ei,ei->e", f, inc)
        U0 = g.energy(s0)
        np.testing.assert_allclose(U1, g.energy(s1), rtol=1e-14)
        D = h1["dissipated"] if h1 else np.zeros(len(g))
        scale = np.abs(U0) + np.abs(U1) + np.abs(work) + np.abs(D)
        np.testing.assert_array_less(np.abs(work - (U1 - U0 + D)), 1e-12 * scale)
        assert np.all(D >= 0) and (np.all(D > 0) if damped else not h1)


@pytest.mark.parametrize("grounded, damped", CASES)
def test_step_tangent_is_the_derivative(grounded, damped):
    rng = np.random.default_rng(2)
    g, X = bushing(grounded, damped, rng=rng)
    s0, s1 = states(X, rng)
    hist = g.conserving_start(s0)
    K = g.conserving(s0, s1, None, None, hist)[1]
    fd = columns(g, s1, lambda s: g.conserving(s0, s, None, None, hist)[0])
    np.testing.assert_allclose(K, fd, atol=1e-6 * np.abs(K).max())


@pytest.mark.parametrize("grounded, damped", CASES)
def test_static_tangent_and_damping_are_the_derivatives(grounded, damped):
    rng = np.random.default_rng(3)
    g, X = bushing(grounded, damped, rng=rng)
    s, _ = states(X, rng)
    _, K = g.evaluate(s)
    fd = columns(g, s, lambda t: g.evaluate(t, tangent=False)[0])
    np.testing.assert_allclose(K, fd, atol=1e-6 * np.abs(K).max())
    C = g.damping(s)
    fd = columns(g, s, lambda t: g.evaluate(t, tangent=False)[0], field="v")
    np.testing.assert_allclose(C, fd, atol=1e-6 * max(np.abs(C).max(), 1.0))
    assert np.any(C) == damped


def test_static_force_is_the_potential_gradient():
    """Without damping ``f = dU/dq`` (central differences of the energy)."""
    rng = np.random.default_rng(4)
    g, X = bushing(False, False, rng=rng)
    s, _ = states(X, rng)
    s.v[:] = 0.0
    f, _ = g.evaluate(s, tangent=False)
    fd = columns(g, s, lambda t: g.energy(t)[:, None])[:, 0]
    np.testing.assert_allclose(f, fd, atol=1e-6 * np.abs(f).max())


# --- a rigid body on a bushing to the ground -----------------------------------------------------

M, J, KX, KY, KR = 2.0, 0.5, 800.0, 1800.0, 50.0


def body_deck(stiffness, velocity, axes=None, h=1e-3, duration=0.5):
    conn = {"name": "mount", "type": "bushing", "ground": [1], "stiffness_matrix": stiffness}
    if axes is not None:
        conn["axes"] = axes
    return {
        "model": {"dim": 2, "title": "a body on a bushing", "units": "m, kg, s, N"},
        "nodes": {"coordinates": [[0.0, 0.0]]},
        "bodies": [{"name": "block", "nodes": [1], "mass": M, "inertia": J}],
        "connectors": [conn],
        "velocities": [dict({"name": "kick", "nodes": [1]}, **velocity)],
        "steps": [{"name": "free", "type": "dynamic", "integrator": "energy_conserving",
                   "duration": duration, "time_step": h, "velocities": ["kick"],
                   "tolerance": 1e-12}],
    }


@pytest.mark.parametrize("slot, velocity, omega", [
    (0, {"velocity": [1.0, 0.0]}, np.sqrt(KX / M)),
    (1, {"velocity": [0.0, 1.0]}, np.sqrt(KY / M)),
    (2, {"angular_velocity": 1.0}, np.sqrt(KR / J)),
])
def test_body_on_bushing_oscillates_at_the_closed_form(tmp_path, slot, velocity, omega):
    """Each direction and the rotation at ``sqrt(k/m)``, ``sqrt(k_r/J)``: amplitude ``v0/w``.

    Diagonal stiffness, the body started with a unit rate in one DOF: that DOF follows ``sin(w_h
    t) v0 / w`` (``w_h = 2 atan(w h / 2) / h``, the mid-point rule's frequency, which differs from
    ``w`` by 1e-5 relative here) to 1e-9, and the others stay at rest.
    """
    import h5py

    h = 1e-3
    run(deck_io.from_dict(body_deck([KX, KY, KR], velocity, h=h), base_dir=str(tmp_path)),
        str(tmp_path / "out.h5"))
    with h5py.File(tmp_path / "out.h5") as f:
        s = f["steps/free"]
        t = s["time"][()]
        x = np.column_stack([s["displacement"][:, 0, :2], s["rotation_vector"][:, 0, 2]])
        total = s["energy/total"][()]
    wh = 2 * np.arctan(omega * h / 2) / h
    ref = np.sin(wh * t) / omega
    np.testing.assert_allclose(x[:, slot], ref, atol=1e-9 / omega)
    others = [k for k in range(3) if k != slot]
    np.testing.assert_allclose(x[:, others], 0.0, atol=1e-12)
    np.testing.assert_allclose(total, 0.5 * (J if slot == 2 else M), rtol=1e-10)


def test_turned_axes_oscillate_along_the_local_axis(tmp_path):
    """Local x axis at 30 degrees, ``k_x`` along it: a kick along it oscillates at sqrt(k_x/m)
    along it only (stiff ``k_y`` across it would show within one period otherwise)."""
    import h5py

    h, a = 1e-3, np.radians(30.0)
    axis = [np.cos(a), np.sin(a)]
    run(deck_io.from_dict(body_deck([KX, KY, KR], {"velocity": axis}, axes=[axis], h=h),
                          base_dir=str(tmp_path)), str(tmp_path / "out.h5"))
    with h5py.File(tmp_path / "out.h5") as f:
        s = f["steps/free"]
        t, x = s["time"][()], s["displacement"][:, 0, :2]
        e = s["elements/mount/deflection"][:, 0]
    omega = np.sqrt(KX / M)
    ref = np.sin(2 * np.arctan(omega * h / 2) / h * t) / omega
    np.testing.assert_allclose(x, ref[:, None] * np.array(axis), atol=1e-9)
    np.testing.assert_allclose(e[:, 0], ref, atol=1e-9)
    np.testing.assert_allclose(e[:, 1:], 0.0, atol=1e-12)


def _changed(**changes):
    data = body_deck([KX, KY, KR], {"velocity": [1.0, 0.0]})
    with_changes(data["connectors"][0], changes)
    return data


@pytest.mark.parametrize("changes, where, says", [
    ({"stiffness_matrix": [1.0, 2.0]}, "connectors[0].stiffness_matrix", "diagonal of 3"),
    ({"stiffness_matrix": [[1.0, 0.0], [0.0, 1.0]]}, "connectors[0].stiffness_matrix", "3x3"),
    ({"stiffness_matrix": [[1.0, 0.5, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]},
     "connectors[0].stiffness_matrix", "symmetric"),
    ({"stiffness_matrix": [[1.0, 2.0, 0.0], [2.0, 1.0, 0.0], [0.0, 0.0, 1.0]]},
     "connectors[0].stiffness_matrix", "eigenvalue -1"),
    ({"stiffness_matrix": [1.0, -2.0, 3.0]}, "connectors[0].stiffness_matrix[1]", "-2"),
    ({"damping_matrix": [1.0, 2.0, -0.5]}, "connectors[0].damping_matrix[2]", "-0.5"),
    ({"damping_matrix": [[0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 0.0]]},
     "connectors[0].damping_matrix", "semi-definite"),
    ({"stiffness_matrix": None}, "connectors[0].stiffness_matrix", "required"),
    ({"ground": [5]}, "connectors[0].ground", "unknown node 5"),
    ({"ground": None, "pairs": [[1, 7]]}, "connectors[0].pairs[0]", "unknown node 7"),
    ({"axes": [[0.0, 0.0]]}, "connectors[0].axes[0]", "nonzero"),
    ({"axes": [[1.0, 0.0], [0.0, 1.0]]}, "connectors[0].axes", "one row"),
])
def test_deck_errors(changes, where, says):
    """Bad bushing input is a deck error naming the key and what was wrong."""
    with pytest.raises(DeckError) as err:
        deck_io.from_dict(_changed(**changes))
    assert err.value.key == where and says in str(err.value), str(err.value)


def test_node_without_rotations_is_refused():
    """A truss node (no rotations) under a bushing: a deck error naming the node."""
    data = _changed(ground=None, pairs=[[1, 2]])
    data["nodes"]["coordinates"].append([1.0, 0.0])
    data["materials"] = [{"name": "steel", "E": 2e11, "nu": 0.3, "density": 7800.0}]
    data["sections"] = [{"name": "rod", "A": 1e-4}]
    data["elements"] = [{"name": "bar", "type": "truss", "connectivity": [[1, 2]],
                         "material": "steel", "section": "rod"}]
    with pytest.raises(DeckError) as err:
        deck_io.from_dict(data)
    assert err.value.key == "connectors[0].pairs[0]" and "node 2" in str(err.value) \
        and "no rotations" in str(err.value), str(err.value)
