"""Spheres against a plane carried by a rigid body (issue 30, item 4: "a body's plane").

References: the energy identity of the discrete gradient (``f . dq = U1 - U0 + D`` to round-off
over random steps that close, open or keep contacts, the body turning), central differences of
the step form's force and of the static force and potential; runs of an elastic Hertz sphere
hitting a free rigid plate against the exact Hertz contact time of the equivalent mass
(``2.9433 delta_m / v``, ``delta_m = (5 m_eq v^2 / (4 K))^(2/5)``; Ma, Menon & Lankarani eq. 15)
and the conservation of energy and momenta.
"""

import h5py
import numpy as np
import pytest

from fem.elements.contact import NormalLaw
from fem.elements.contact.body_plane import BodyPlaneContact
from fem.elements.contact.laws import LAWS
from fem.errors import DeckError
from fem.io import deck as deck_io
from fem.run import run
from fem.state import State

LAW_ARGS = {"hertz": {}, "hunt_crossley": {"damping": 3e4},
            "lankarani_nikravesh": {"restitution": 0.7}, "kelvin_voigt": {"damping": 50.0},
            "hertz_plastic": {"restitution": 0.6}}


def law(kind, E):
    n = 1.0 if kind == "kelvin_voigt" else 1.5
    K = 2e5 if kind == "kelvin_voigt" else 5e6
    return NormalLaw(kind, np.full(E, K), n, **LAW_ARGS[kind])


def group(kind, E=6):
    """``E`` spheres (nodes 0..E-1) of radius 0.05 against the plane of body node ``E``."""
    X = np.zeros((E + 1, 3))
    X[:E, 0] = np.linspace(-0.3, 0.4, E)
    X[:E, 1] = 0.05
    X[E] = [0.05, -0.2, 0.0]
    g = BodyPlaneContact("c", np.arange(E), E, X, 2, law(kind, E), point=[0.0, 0.0],
                         normal=[0.1, 1.0], radius=0.05)
    return g, X


def states(g, X, rng, scale=0.02, h=1e-3):
    n = len(X)
    s0 = State.reference(2, n)
    s0.u[:, :2] = scale * rng.normal(size=(n, 2))
    s0.rot[:] = 0.3 * rng.normal(size=n)
    s0.v[:] = scale / h * rng.normal(size=(n, 3))
    s1 = s0.copy()
    s1.t = h
    s1.u[:, :2] += scale * rng.normal(size=(n, 2))
    s1.rot[:] += 0.2 * rng.normal(size=n)
    return s0, s1


def increment(g, s0, s1):
    nodal = np.zeros_like(s0.v)
    nodal[:, :2] = (s1.u - s0.u)[:, :2]
    nodal[:, 2] = s1.rot - s0.rot
    return g.element_vector(nodal)


@pytest.mark.parametrize("kind", LAWS)
def test_discrete_gradient_work_equals_energy_change(kind):
    """``f . dq = U1 - U0 + D`` to round-off with the body turning; elastic: ``D = 0``."""
    rng = np.random.default_rng(4)
    seen = set()
    for _ in range(30):
        g, X = group(kind)
        s0, s1 = states(g, X, rng)
        hist = g.conserving_start(s0)
        hist["approach_speed"] = np.abs(hist["approach_speed"]) + 0.5
        hist["max_penetration"] = np.maximum(hist["max_penetration"],
                                             -g._gap(s0)[0] + 0.02 * rng.random(len(g)))
        U0 = g.law.energy(-g._gap(s0)[0], hist)
        f, _, U1, h1 = g.conserving(s0, s1, None, increment(g, s0, s1), hist)
        d0, d1 = -g._gap(s0)[0], -g._gap(s1)[0]
        seen |= {("closing" if a <= 0 < b else "opening" if b <= 0 < a else
                  "closed" if a > 0 else "open") for a, b in zip(d0, d1, strict=True)}
        work = np.einsum("ei,ei->e", f, increment(g, s0, s1))
        D = h1["dissipated"]
        scale = np.abs(U0) + np.abs(U1) + np.abs(work) + 1e-300
        np.testing.assert_array_less(np.abs(work - (U1 - U0 + D)), 1e-12 * scale + 1e-300)
        assert np.all(D >= -1e-12 * scale)
        if not g.law.dissipative:
            np.testing.assert_array_less(np.abs(D), 1e-12 * scale + 1e-300)
        # equal and opposite forces; the sphere's rotation takes none
        np.testing.assert_allclose(f[:, 0:2], -f[:, 3:5], rtol=0, atol=1e-12 * np.abs(f).max())
        assert np.all(f[:, 2] == 0)
    assert seen == {"closing", "opening", "closed", "open"}


@pytest.mark.parametrize("kind", LAWS)
def test_conserving_tangent_is_the_derivative(kind):
    """The step form's tangent equals central differences of its force by the end state."""
    rng = np.random.default_rng(5)
    g, X = group(kind)
    checked = 0
    for _ in range(4):
        s0, s1 = states(g, X, rng, scale=0.01)
        hist = g.conserving_start(s0)
        hist["approach_speed"] = hist["approach_speed"] + 0.7
        _, K, _, _ = g.conserving(s0, s1, None, increment(g, s0, s1), hist)
        eps = 1e-7
        for a in range(2):
            for i in range(3):
                fs = []
                for sign in (1, -1):
                    s = s1.copy()
                    if i < 2:
                        s.u[g.conn[:, a], i] += sign * eps
                    else:
                        s.rot[g.conn[:, a]] += sign * eps
                    fs.append(g.conserving(s0, s, None, increment(g, s0, s), hist)[0])
                fd = (fs[0] - fs[1]) / (2 * eps)
                np.testing.assert_allclose(K[:, :, 3 * a + i], fd,
                                           atol=1e-6 * (np.abs(K).max() + 1e-300))
        checked += int(np.sum(-g._gap(s1)[0] > 0))
    assert checked > 0


def test_static_force_and_tangent_are_the_derivatives():
    """At a state: the force is the potential's gradient, the tangent the force's derivative."""
    rng = np.random.default_rng(6)
    g, X = group("hertz")
    for _ in range(4):
        s, _ = states(g, X, rng, scale=0.01)
        s.v[:] = 0.0
        f, K = g.evaluate(s)
        eps = 1e-7
        for a in range(2):
            for i in range(3):
                fs, es = [], []
                for sign in (1, -1):
                    t = s.copy()
                    if i < 2:
                        t.u[g.conn[:, a], i] += sign * eps
                    else:
                        t.rot[g.conn[:, a]] += sign * eps
                    fs.append(g.internal_force(t))
                    es.append(g.energy(t))
                np.testing.assert_allclose(K[:, :, 3 * a + i], (fs[0] - fs[1]) / (2 * eps),
                                           atol=1e-6 * np.abs(K).max())
                np.testing.assert_allclose(f[:, 3 * a + i], (es[0] - es[1]) / (2 * eps),
                                           atol=1e-6 * np.abs(f).max())
    assert np.abs(f).max() > 0


# --- runs: an elastic Hertz sphere hitting a free rigid plate ---------------------------------
M_S, J_S, R_S = 0.092, 0.4 * 0.092 * 0.02**2, 0.02         # the aluminium sphere of the cases
M_P, J_P = 0.25, 0.25 * (0.2**2 + 0.01**2) / 12            # a 200 x 10 mm plate
K_H, V0 = 5.5e9, 0.3


def plate_impact(offset=0.0, duration=3e-3):
    """The sphere 0.5 mm above the plate's top face (its normal +y) at x = 0.1 + offset, falling
    at V0; the plate's centre at x = 0.1 (so the angular momentum about the origin is not zero)."""
    return {
        "model": {"dim": 2},
        "nodes": {"coordinates": [[0.1 + offset, 0.005 + R_S + 5e-4], [0.1, 0.0]]},
        "bodies": [{"name": "ball", "nodes": [1], "mass": M_S, "inertia": J_S},
                   {"name": "plate", "nodes": [2], "mass": M_P, "inertia": J_P}],
        "contacts": [{"name": "hit", "nodes": [1], "radius": R_S, "law": "hertz",
                      "stiffness": K_H, "plane_body": 2, "plane_point": [0.0, 0.005],
                      "plane_normal": [0.0, 1.0]}],
        "velocities": [{"name": "down", "nodes": [1], "velocity": [0.0, -V0]}],
        "steps": [{"name": "impact", "type": "dynamic", "integrator": "energy_conserving",
                   "duration": duration, "time_step": 1e-4, "output_interval": 2e-4,
                   "velocities": ["down"],
                   "tolerance": 1e-12}],
    }


def run_impact(tmp_path, data, name="out"):
    run(deck_io.from_dict(data, base_dir=str(tmp_path)), str(tmp_path / f"{name}.h5"))
    f = h5py.File(tmp_path / f"{name}.h5")
    return f, f["steps/impact"]


def test_central_hit_on_a_free_plate(tmp_path):
    """Contact time of the equivalent mass within 0.5%; energy to 1e-8, momenta to 1e-10."""
    f, s = run_impact(tmp_path, plate_impact())
    with f:
        e = s["energy"]
        total, T0 = e["total"][()], e["kinetic"][0]
        P, L = e["linear_momentum"][()], e["angular_momentum"][()]
        tc = s["elements/hit/contact_time"][-1, 0]
        gap = s["elements/hit/gap"][-1, 0]
        v = s["velocity"][-1]
    assert tc > 0 and gap > 0                                # hit and parted
    m_eq = M_S * M_P / (M_S + M_P)
    d_max = (5 * m_eq * V0**2 / (4 * K_H)) ** 0.4
    assert tc == pytest.approx(2.9433 * d_max / V0, rel=5e-3)
    assert np.abs(total - total[0]).max() < 1e-8 * T0
    p0 = M_S * V0
    assert np.abs(P - P[0]).max() < 1e-10 * p0
    assert np.abs(L[0]).max() > 0.05 * p0                    # about the origin: not zero
    assert np.abs(L - L[0]).max() < 1e-10 * p0 * 0.1
    # an elastic central impact: the velocities exchange as for two point masses
    vs = (M_S - M_P) / (M_S + M_P) * -V0
    assert v[0, 1] == pytest.approx(vs, rel=1e-6)
    assert v[1, 1] == pytest.approx(2 * M_S / (M_S + M_P) * -V0, rel=1e-6)
    assert abs(v[1, 2]) < 1e-12                              # the plate does not turn


def test_eccentric_hit_turns_the_plate(tmp_path):
    """Off the centre by 60 mm: the impulse P = 2 m_eff V0, 1/m_eff = 1/m + 1/M + a^2/J, turns
    the plate by P a / J; energy exact to 1e-8, linear momentum to 1e-10. Angular momentum is
    not exact (the body's exp-like angle: O(dtheta^2) a step, module doc): bounded here."""
    a = 0.06
    f, s = run_impact(tmp_path, plate_impact(offset=a))
    with f:
        e = s["energy"]
        total, T0 = e["total"][()], e["kinetic"][0]
        P, L = e["linear_momentum"][()], e["angular_momentum"][()]
        v = s["velocity"][-1]
        tc, gap = s["elements/hit/contact_time"][-1, 0], s["elements/hit/gap"][-1, 0]
    assert tc > 0 and gap > 0
    m_eff = 1 / (1 / M_S + 1 / M_P + a**2 / J_P)
    impulse = 2 * m_eff * V0
    assert M_S * (v[0, 1] + V0) == pytest.approx(impulse, rel=1e-4)
    assert J_P * v[1, 2] == pytest.approx(-impulse * a, rel=1e-4)
    assert np.abs(total - total[0]).max() < 1e-8 * T0
    assert np.abs(P - P[0]).max() < 1e-10 * M_S * V0
    # O(dtheta^2) of the contact's moment a step: 1.5e-12 here (the plate turns 2e-4 a step)
    assert np.abs(L - L[0]).max() < 1e-10 * M_S * V0 * 0.1


@pytest.mark.parametrize("changes, where, says", [
    ({"plane_body": 9}, "contacts[0].plane_body", "unknown node 9"),
    ({"plane_body": 1}, "contacts[0].plane_body", "also one of the nodes"),
    ({"friction": 0.2, "velocity_scale": 1e-3}, "contacts[0].friction", "not built"),
    ({"nodes": None, "pairs": [[1, 2]]}, "contacts[0].plane_body", "applies to nodes"),
])
def test_deck_errors(changes, where, says):
    """Bad input of a body's plane is a deck error naming the key."""
    data = plate_impact()
    data["contacts"][0].update(changes)
    data["contacts"][0] = {k: v for k, v in data["contacts"][0].items() if v is not None}
    if "pairs" in changes:
        for key in ("plane_point", "plane_normal"):
            del data["contacts"][0][key]
    with pytest.raises(DeckError) as err:
        deck_io.from_dict(data)
    assert err.value.key == where and says in str(err.value), str(err.value)


def plate_impact_3d(offset=0.0, tilt=0.0):
    """:func:`plate_impact` in space, the plate turned by ``tilt`` about x at the start."""
    data = plate_impact(offset)
    data["model"]["dim"] = 3
    data["nodes"]["coordinates"] = [[*x, 0.0] for x in data["nodes"]["coordinates"]]
    data["bodies"][0]["inertia"] = [J_S] * 3
    data["bodies"][1]["inertia"] = [J_P, J_P, J_P]
    c = data["contacts"][0]
    c["plane_point"], c["plane_normal"] = [0.0, 0.005, 0.0], [0.0, 1.0, 0.0]
    data["velocities"][0]["velocity"] = [0.0, -V0, 0.0]
    return data


def test_hit_on_a_free_plate_3d(tmp_path):
    """3D, eccentric in x and z: the impulse 2 m_eff V0 (1/m_eff = 1/m + 1/M + (a^2 + b^2)/J
    for the isotropic plate), energy to 1e-8, linear momentum to 1e-10."""
    a, b = 0.06, 0.03
    data = plate_impact_3d(offset=a)
    data["nodes"]["coordinates"][0][2] = b
    f, s = run_impact(tmp_path, data)
    with f:
        e = s["energy"]
        total, T0 = e["total"][()], e["kinetic"][0]
        P, L = e["linear_momentum"][()], e["angular_momentum"][()]
        v = s["velocity"][-1]
        tc, gap = s["elements/hit/contact_time"][-1, 0], s["elements/hit/gap"][-1, 0]
    assert tc > 0 and gap > 0
    m_eff = 1 / (1 / M_S + 1 / M_P + (a**2 + b**2) / J_P)
    impulse = 2 * m_eff * V0
    assert M_S * (v[0, 1] + V0) == pytest.approx(impulse, rel=1e-4)
    # the plate's spin: J w = r x P, r = (a, 0.005, b) from its centre to the contact point
    np.testing.assert_allclose(J_P * v[1, 3:6], np.cross([a, 0.005, b], [0, -impulse, 0]),
                               rtol=1e-4, atol=1e-12 * impulse)
    assert np.abs(total - total[0]).max() < 1e-8 * T0
    assert np.abs(P - P[0]).max() < 1e-10 * M_S * V0
    # not exact for exp nodes (module doc): 1.7e-12 here
    assert np.abs(L - L[0]).max() < 1e-10 * M_S * V0 * 0.1


# --- 3D: the body turned by spins -------------------------------------------------------------
from fem import rotations as so3  # noqa: E402


def group3(kind, E=5):
    X = np.zeros((E + 1, 3))
    X[:E, 0] = np.linspace(-0.3, 0.4, E)
    X[:E, 1] = np.linspace(0.1, -0.2, E)
    X[:E, 2] = 0.05
    X[E] = [0.05, -0.02, -0.2]
    g = BodyPlaneContact("c", np.arange(E), E, X, 3, law(kind, E), point=[0.0, 0.0, 0.0],
                         normal=[0.1, -0.2, 1.0], radius=0.05)
    return g, X


def states3(g, X, rng, scale=0.02, h=1e-3, turn=0.3):
    n = len(X)
    s0 = State.reference(3, n)
    s0.u[:] = scale * rng.normal(size=(n, 3))
    s0.rot[:] = so3.quat_from_rotvec(turn * rng.normal(size=(n, 3)))
    s0.v[:] = scale / h * rng.normal(size=(n, 6))
    s1 = s0.copy()
    s1.t = h
    s1.u[:] += scale * rng.normal(size=(n, 3))
    s1.rot[:] = so3.rotate_spatial(s0.rot, turn * rng.normal(size=(n, 3)))
    return s0, s1


def increment3(g, s0, s1):
    nodal = np.zeros_like(s0.v)
    nodal[:, :3] = s1.u - s0.u
    R0 = so3.quat_to_matrix(s0.rot)
    nodal[:, 3:6] = np.einsum("nij,nj->ni", R0, so3.rotvec_from_quat(
        so3.quat_mul(so3.quat_conj(s0.rot), s1.rot)))
    return g.element_vector(nodal)


@pytest.mark.parametrize("kind", LAWS)
def test_discrete_gradient_3d(kind):
    """3D: ``f . dq = U1 - U0 + D`` to round-off (``dq``: translations and the spatial rotation
    vectors of the step), equal and opposite forces, the sphere's rotation taking none."""
    rng = np.random.default_rng(8)
    seen = set()
    for _ in range(20):
        g, X = group3(kind)
        s0, s1 = states3(g, X, rng)
        hist = g.conserving_start(s0)
        hist["approach_speed"] = np.abs(hist["approach_speed"]) + 0.5
        hist["max_penetration"] = np.maximum(hist["max_penetration"],
                                             -g._gap(s0)[0] + 0.02 * rng.random(len(g)))
        U0 = g.law.energy(-g._gap(s0)[0], hist)
        inc = increment3(g, s0, s1)
        f, _, U1, h1 = g.conserving(s0, s1, None, inc, hist)
        d0, d1 = -g._gap(s0)[0], -g._gap(s1)[0]
        seen |= {("closing" if a <= 0 < b else "opening" if b <= 0 < a else
                  "closed" if a > 0 else "open") for a, b in zip(d0, d1, strict=True)}
        work = np.einsum("ei,ei->e", f, inc)
        D = h1["dissipated"]
        scale = np.abs(U0) + np.abs(U1) + np.abs(work) + 1e-300
        np.testing.assert_array_less(np.abs(work - (U1 - U0 + D)), 1e-12 * scale + 1e-300)
        if not g.law.dissipative:
            np.testing.assert_array_less(np.abs(D), 1e-12 * scale + 1e-300)
        np.testing.assert_allclose(f[:, 0:3], -f[:, 6:9], rtol=0, atol=1e-12 * np.abs(f).max())
        assert np.all(f[:, 3:6] == 0)
    assert seen == {"closing", "opening", "closed", "open"}


def _moved(s, g, a, i, eps):
    """``s`` with node ``a`` of every pair moved by ``eps`` along DOF ``i`` (rotations: spins)."""
    t = s.copy()
    nodes = g.conn[:, a]
    if i < 3:
        t.u[nodes, i] += eps
    else:
        w = np.zeros((len(nodes), 3))
        w[:, i - 3] = eps
        t.rot[nodes] = so3.rotate_spatial(t.rot[nodes], w)
    return t


@pytest.mark.parametrize("kind", ["hertz", "hunt_crossley", "hertz_plastic"])
def test_tangents_3d_are_the_derivatives_by_spins(kind):
    """3D: the step form's tangent and the static one against central differences along
    Newton's corrections (translations added, rotations turned by spatial spins)."""
    rng = np.random.default_rng(9)
    g, X = group3(kind)
    checked = 0
    for _ in range(3):
        s0, s1 = states3(g, X, rng, scale=0.01)
        hist = g.conserving_start(s0)
        hist["approach_speed"] = hist["approach_speed"] + 0.7
        _, K, _, _ = g.conserving(s0, s1, None, increment3(g, s0, s1), hist)
        s1.v[:] = 0.0
        _, Ks = g.evaluate(s1)
        eps = 1e-7
        for a in range(2):
            for i in range(6):
                fs, ss = [], []
                for sign in (1, -1):
                    t = _moved(s1, g, a, i, sign * eps)
                    fs.append(g.conserving(s0, t, None, increment3(g, s0, t), hist)[0])
                    ss.append(g.internal_force(t))
                col = 6 * a + i
                np.testing.assert_allclose(K[:, :, col], (fs[0] - fs[1]) / (2 * eps),
                                           atol=1e-6 * (np.abs(K).max() + 1e-300))
                np.testing.assert_allclose(Ks[:, :, col], (ss[0] - ss[1]) / (2 * eps),
                                           atol=1e-6 * (np.abs(Ks).max() + 1e-300))
        checked += int(np.sum(-g._gap(s1)[0] > 0))
    assert checked > 0
