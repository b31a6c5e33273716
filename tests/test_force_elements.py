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

from fem.elements.force import Curve, SpringDamper
from fem.errors import DeckError
from fem.io import deck as deck_io
from fem.run import run
from fem.state import State

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
    entry = data[table][k]
    for key, v in changes.items():
        if v is None:
            entry.pop(key, None)
        else:
            entry[key] = v
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
