"""Penalty contact (issue 30, item 4): laws, discrete gradients, tangents, step control.

References: the energy identity of the discrete gradient (``f . dq = Phi1 - Phi0 + D``, exact
by construction, checked to round-off over random steps that close, open or stay in contact),
central finite differences of the forces, and the closed forms of Ma, Menon & Lankarani
(application_papers.md section 15).
"""

import numpy as np
import pytest
from helpers import with_changes

from fem.elements.contact import NormalLaw, PlaneContact, SphereContact, hertz_stiffness
from fem.elements.contact.laws import LAWS, contact_time_factor
from fem.state import State

LAW_ARGS = {"hertz": {}, "hunt_crossley": {"damping": 3e4},
            "lankarani_nikravesh": {"restitution": 0.7}, "kelvin_voigt": {"damping": 50.0},
            "hertz_plastic": {"restitution": 0.6}}


def law(kind, E=1):
    n = 1.0 if kind == "kelvin_voigt" else 1.5
    K = 2e5 if kind == "kelvin_voigt" else 5e6
    return NormalLaw(kind, np.full(E, K), n, **LAW_ARGS[kind])


def spheres(kind, friction=0.0, E=6, dim=3, rng=None):
    """``E`` sphere pairs, each on its own two nodes, radii 0.1 + 0.05."""
    rng = rng or np.random.default_rng(0)
    X = np.zeros((2 * E, 3))
    X[1::2, :dim] = rng.normal(size=(E, dim))
    X[1::2, :dim] *= 0.15 / np.linalg.norm(X[1::2, :dim], axis=1)[:, None]
    X[1::2] += X[::2]
    conn = np.arange(2 * E).reshape(E, 2)
    return SphereContact("c", conn, X, dim, law(kind, E), radii=[0.1, 0.05], friction=friction,
                         velocity_scale=0.05), X


def plane(kind, friction=0.0, E=6, dim=2):
    X = np.zeros((E, 3))
    X[:, 0] = np.arange(E)
    n = np.array([0.3, 1.0, 0.2])[:dim]
    return PlaneContact("c", np.arange(E), X, dim, law(kind, E), point=np.zeros(dim),
                        normal=n, radius=0.05, friction=friction, velocity_scale=0.05), X


def states(group, X, rng, scale=0.08, h=1e-3):
    """A start and an end state: random motions of the size of the overlap."""
    dim = group.dim
    s0 = State.reference(dim, len(X))
    s0.u[:, :dim] = scale * rng.normal(size=(len(X), dim))
    s0.v[:, :dim] = scale / h * rng.normal(size=(len(X), dim))
    s1 = s0.copy()
    s1.t = h
    s1.u[:, :dim] += scale * rng.normal(size=(len(X), dim))
    return s0, s1


def increment(group, s0, s1):
    nodal = np.zeros_like(s0.v)
    nodal[:, :group.dim] = (s1.u - s0.u)[:, :group.dim]
    return group.element_vector(nodal)


@pytest.mark.parametrize("kind", LAWS)
@pytest.mark.parametrize("make", [spheres, plane])
def test_discrete_gradient_work_equals_energy_change(kind, make):
    """``f . dq = U1 - U0 + D`` to round-off over random steps, ``D >= 0``; elastic: ``D = 0``.

    The steps close, open and keep contacts (each kind counted); friction's share is in ``D``.
    """
    rng = np.random.default_rng(1)
    seen = set()
    for trial in range(40):
        g, X = make(kind, friction=0.3 if trial % 2 else 0.0)
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
        if not g.law.dissipative and trial % 2 == 0:
            np.testing.assert_array_less(np.abs(D), 1e-12 * scale + 1e-300)
    assert seen == {"closing", "opening", "closed", "open"}


@pytest.mark.parametrize("kind", LAWS)
@pytest.mark.parametrize("make", [spheres, plane])
@pytest.mark.parametrize("friction", [0.0, 0.4])
def test_conserving_tangent_is_the_derivative(kind, make, friction):
    """The step form's tangent equals central differences of its force by the end state."""
    rng = np.random.default_rng(2)
    g, X = make(kind, friction=friction)
    for _ in range(5):
        s0, s1 = states(g, X, rng, scale=0.02)
        s1.u[:, :g.dim] = s0.u[:, :g.dim] + 0.3 * (s1.u - s0.u)[:, :g.dim]
        hist = g.conserving_start(s0)
        hist["approach_speed"] = hist["approach_speed"] + 0.7
        _, K, _, _ = g.conserving(s0, s1, None, increment(g, s0, s1), hist)
        eps = 1e-7
        for a in range(g.nen):
            for i in range(g.dim):
                col = a * g.dim + i
                fs = []
                for sign in (1, -1):
                    s = s1.copy()
                    s.u[g.conn[:, a], i] += sign * eps
                    fs.append(g.conserving(s0, s, None, increment(g, s0, s), hist)[0])
                fd = (fs[0] - fs[1]) / (2 * eps)
                ref = np.abs(K).max() + 1e-300
                np.testing.assert_allclose(K[:, :, col], fd, atol=1e-5 * ref)


@pytest.mark.parametrize("make", [spheres, plane])
def test_static_tangent_is_the_derivative(make):
    """The elastic force and tangent at a state (static steps): central differences of the
    force and of the potential."""
    rng = np.random.default_rng(3)
    g, X = make("hertz")
    touching = 0
    for _ in range(5):
        s, _ = states(g, X, rng, scale=0.02)
        s.v[:] = 0.0
        f, K = g.evaluate(s)
        eps = 1e-7
        for a in range(g.nen):
            for i in range(g.dim):
                fs = []
                for sign in (1, -1):
                    t = s.copy()
                    t.u[g.conn[:, a], i] += sign * eps
                    fs.append(g.internal_force(t))
                np.testing.assert_allclose(K[:, :, a * g.dim + i], (fs[0] - fs[1]) / (2 * eps),
                                           atol=1e-6 * np.abs(K).max())
        # and the force is the gradient of the energy (central differences of the potential)
        f = g.internal_force(s)
        for a in range(g.nen):
            for i in range(g.dim):
                es = []
                for sign in (1, -1):
                    t = s.copy()
                    t.u[g.conn[:, a], i] += sign * eps
                    es.append(g.energy(t))
                np.testing.assert_allclose(f[:, a * g.dim + i], (es[0] - es[1]) / (2 * eps),
                                           atol=1e-6 * np.abs(f).max())
        touching += int(np.sum(g._gap(s)[0] < 0))
    assert touching > 0                                 # the checks saw forces


def test_no_tension_and_open_gap():
    """The force vanishes when the gap is open, and a damped law never pulls."""
    lw = law("hunt_crossley")
    F, _ = lw.force(np.array([-1e-3, 1e-3, 1e-3]), np.array([5.0, -1e3, 1.0]))
    assert F[0] == 0 and F[1] == 0 and F[2] > 0


def test_hertz_constants():
    """Eq. 2-3 for two aluminium spheres and the contact-time factor of eq. 15."""
    E, nu = 70e9, 0.33
    K = hertz_stiffness(0.02, 0.02, E, nu, E, nu)
    # (4/3) E* sqrt(R*), E* = E / (2 (1 - nu^2)), R* = R/2: the textbook form
    assert K == pytest.approx(4 / 3 * E / (2 * (1 - nu**2)) * np.sqrt(0.01), rel=1e-14)
    assert 5.2e9 < K < 5.5e9
    assert contact_time_factor(1.5) == pytest.approx(2.9432, abs=1e-4)
    assert contact_time_factor(1.0) == pytest.approx(np.pi, rel=1e-14)


# --- decks, runs and step control -------------------------------------------------------------
import copy  # noqa: E402
import tomllib  # noqa: E402
from pathlib import Path  # noqa: E402

from scipy.integrate import solve_ivp  # noqa: E402

from fem.errors import DeckError  # noqa: E402
from fem.io import deck as deck_io  # noqa: E402
from fem.run import run  # noqa: E402

CASES = Path(__file__).resolve().parents[1] / "cases"


def case(name):
    return tomllib.loads((CASES / name / "deck.toml").read_text())


def with_contact(data, **changes):
    data = copy.deepcopy(data)
    with_changes(data["contacts"][0], changes)
    return data


@pytest.mark.parametrize("name, changes, where, says", [
    ("sphere_impact_plastic", {"stiffness": -1.0}, "contacts[0].stiffness", "positive"),
    ("vibro_impact", {"damping": -3.0}, "contacts[0].damping", "-3"),
    ("sphere_impact_plastic", {"restitution": 0.0}, "contacts[0].restitution", "(0, 1]"),
    ("sphere_impact_plastic", {"restitution": 1.2}, "contacts[0].restitution", "(0, 1]"),
    ("sphere_impact_plastic", {"pairs": [[1, 7]]}, "contacts[0].pairs", "unknown node 7"),
    ("sphere_impact_plastic", {"pairs": [[1, 1]]}, "contacts[0].pairs", "itself"),
    ("vibro_impact", {"nodes": [9]}, "contacts[0].nodes", "unknown node 9"),
    ("vibro_impact", {"plane_normal": [0.0, 0.0]}, "contacts[0].plane_normal", "nonzero"),
    ("vibro_impact", {"plane_normal": [0.0, 1.0, 0.0]}, "contacts[0].plane_normal", "2 comp"),
    ("vibro_impact", {"plane_point": None}, "contacts[0].plane_point", "required"),
    ("sphere_impact_plastic", {"restitution": None}, "contacts[0].restitution", "required"),
    ("vibro_impact", {"friction": 0.3}, "contacts[0].velocity_scale", "required"),
    ("sphere_impact_plastic", {"stiffness": None}, "contacts[0].stiffness", "neither"),
    ("sphere_impact_plastic", {"nodes": [1]}, "contacts[0]", "both"),
    ("sphere_impact_plastic", {"law": "coulomb"}, "contacts[0].law", "hertz"),
    ("sphere_impact_plastic", {"stiffness": None, "material": "steel"}, "contacts[0].material",
     "unknown material"),
])
def test_deck_errors(name, changes, where, says):
    """Bad contact input is a deck error naming the key and what was wrong."""
    with pytest.raises(DeckError) as err:
        deck_io.from_dict(with_contact(case(name), **changes))
    assert err.value.key == where and says in str(err.value), str(err.value)


def test_hertz_stiffness_from_material():
    """``material`` gives eqs. 2-3's K: the aluminium spheres' 5.2-5.5e9 of the paper."""
    data = with_contact(case("sphere_impact_elastic"), stiffness=None, material="al")
    data["materials"] = [{"name": "al", "E": 70e9, "nu": 0.33}]
    g = deck_io.from_dict(data).model.groups[0]
    assert g.law.K[0] == pytest.approx(hertz_stiffness(0.02, 0.02, 70e9, 0.33, 70e9, 0.33))
    assert 5.2e9 < g.law.K[0] < 5.5e9


def run_case(tmp_path, data, name="out"):
    d = deck_io.from_dict(data, base_dir=str(tmp_path))
    run(d, str(tmp_path / f"{name}.h5"))
    return d


def test_deep_closing_step_is_refused_and_halved(tmp_path):
    """Without the approach limit a 1 ms step would close 0.3 mm deep (20 delta_m): refused.

    The step control's estimate of the approach is switched off, so only the refusal acts: the
    run must halve the closing step (cuts counted) and still meet the Hertz contact time.
    """
    import h5py

    from fem.elements.contact.group import Contact

    data = case("sphere_impact_elastic")
    data["nodes"]["coordinates"] = [[0.0, 0.0], [0.0401, 0.0]]
    data["steps"][0]["duration"] = 0.01
    keep = Contact.max_step

    def closed_only(self, state, mass):
        d = -self._gap(state)[0]
        return keep(self, state, mass) if np.any(d > 0) else np.inf

    Contact.max_step = closed_only
    try:
        run_case(tmp_path, data)
    finally:
        Contact.max_step = keep
    with h5py.File(tmp_path / "out.h5") as f:
        s = f["steps/impact"]
        cuts = int(s["increments/cuts"][-1])
        tc = float(s["elements/impact/contact_time"][-1, 0])
    assert cuts >= 5                         # 1 ms down to a few us
    m, v, K = 0.046, 0.3, 5.5e9
    assert tc == pytest.approx(2.9433 * (5 * m * v**2 / (4 * K)) ** 0.4 / v, rel=5e-3)


def test_lankarani_nikravesh_against_solve_ivp(tmp_path):
    """The e = 0.7 spheres with Lankarani-Nikravesh: exit speed and loss of a scipy solve.

    (Not the paper's 0.21 m/s: that is the permanent-indentation law, cases/
    sphere_impact_plastic/README.md.)
    """
    import h5py

    m, K, v0, e = 0.046, 5.5e9, 0.3, 0.7
    c = 0.75 * (1 - e**2) / v0

    def rhs(t, y):
        return [y[1], -K * max(y[0], 0) ** 1.5 * (1 + c * y[1]) / m if y[0] > 0 else 0.0]

    def part(t, y):
        return y[0]

    part.terminal, part.direction = True, -1
    sol = solve_ivp(rhs, [0, 1e-3], [1e-30, v0], events=part, rtol=1e-12, atol=1e-20,
                    max_step=1e-7)
    v_out, t_c = -sol.y_events[0][0][1], sol.t_events[0][0]
    data = with_contact(case("sphere_impact_plastic"), law="lankarani_nikravesh")
    data["steps"][0]["duration"] = 0.15
    run_case(tmp_path, data)
    with h5py.File(tmp_path / "out.h5") as f:
        s = f["steps/impact"]
        assert s["elements/impact/gap_rate"][-1, 0] == pytest.approx(v_out, rel=2e-3)
        assert s["elements/impact/contact_time"][-1, 0] == pytest.approx(t_c, rel=5e-3)
        loss = 0.5 * m * (v0**2 - v_out**2)
        assert s["energy/damping"][-1] == pytest.approx(loss, rel=5e-3)
        assert abs(s["energy/dissipated"][-1] - s["energy/damping"][-1]) < 1e-8 * 2.07e-3
    assert v_out == pytest.approx(0.2388, abs=1e-3)


@pytest.mark.parametrize("integrator", ["generalized_alpha", "trapezoidal"])
def test_newmark_family_elastic_impact(tmp_path, integrator):
    """The Newmark family's forces at their evaluation points: the elastic impact's exit speed.

    No energy booking is exact there; an elastic contact writes no ``energy/damping``.
    """
    import h5py

    data = case("sphere_impact_elastic")
    data["steps"][0]["integrator"] = integrator
    data["steps"][0]["duration"] = 0.15
    run_case(tmp_path, data)
    with h5py.File(tmp_path / "out.h5") as f:
        s = f["steps/impact"]
        assert "damping" not in s["energy"]
        rate = s["elements/impact/gap_rate"][-1, 0]
        tc = s["elements/impact/contact_time"][-1, 0]
    tol = 2e-2 if integrator == "generalized_alpha" else 1e-3
    assert rate == pytest.approx(0.3, rel=tol)
    assert tc == pytest.approx(1.5175e-4, rel=2e-2)
