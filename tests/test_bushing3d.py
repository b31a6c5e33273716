"""3D bushings (issue 30, item 2): tangents, the step form's work, a rigid body on a bushing, decks.

References: central differences of the force by translations and spatial spins (tangent and
damping, 1e-6), the step form's work against the energy change plus the booked dissipation (to
round-off, the discrete gradient being exact), the linearized frequencies of a rigid body on a
bushing to the ground against ``sqrt(k_i / m_i)`` (decoupled) and ``scipy.linalg.eigh`` of the
closed-form ``K = B^T K_b B``, ``M = diag(m, m, m, J)`` (coupled: full K, turned axes, full
inertia), the damping ratios ``c_i / (2 sqrt(k_i m_i))``, and the energy of a free vibration in
large rotation (total + damping constant to 1e-8 of E0).
"""

import functools
from pathlib import Path

import numpy as np
import pytest
import scipy.linalg as sla
from helpers import solve

from fem import rotations as so3
from fem.elements.force.bushing3d import Bushing3D
from fem.errors import DeckError
from fem.io import deck as deck_io
from fem.state import State

rng0 = np.random.default_rng(7)
_A = rng0.normal(size=(6, 6))
K_FULL = _A @ _A.T * 1e3 + np.diag([4e3, 3e3, 5e3, 8e2, 6e2, 7e2])
_B = rng0.normal(size=(6, 6))
C_FULL = _B @ _B.T * 2.0 + np.diag([30.0, 20.0, 25.0, 6.0, 5.0, 4.0])


def turned_axes(rng):
    return so3.expm(rng.normal(size=3))


def bushing(grounded, damped, E=3, rng=None):
    rng = rng or np.random.default_rng(0)
    n = E if grounded else 2 * E
    X = rng.normal(size=(n, 3))
    conn = np.arange(E)[:, None] if grounded else np.arange(2 * E).reshape(E, 2)
    return Bushing3D("b", conn, X, 3, K_FULL, C_FULL if damped else None,
                     axes=turned_axes(rng)), X


def state(X, rng, scale=0.1, turn=0.8):
    n = len(X)
    s = State.reference(3, n)
    s.u[:] = scale * rng.normal(size=(n, 3))
    s.rot[:] = so3.quat_from_rotvec(turn * rng.normal(size=(n, 3)))
    s.v[:] = rng.normal(size=s.v.shape)
    return s


def columns(g, s, force, field="q", eps=1e-6):
    """(E, nd, nd) central differences of ``force(state)`` by translations and spatial spins
    (``field = "q"``) or by the velocities (``"v"``)."""
    out = np.zeros((len(g), g.nd, g.nd))
    for a in range(g.nen):
        for i in range(6):
            f = []
            for sign in (1, -1):
                t = s.copy()
                nodes = g.conn[:, a]
                if field == "v":
                    t.v[nodes, i] += sign * eps
                elif i < 3:
                    t.u[nodes, i] += sign * eps
                else:
                    dw = np.zeros((len(nodes), 3))
                    dw[:, i - 3] = sign * eps
                    t.rot[nodes] = so3.rotate_spatial(t.rot[nodes], dw)
                f.append(force(t))
            out[:, :, a * 6 + i] = (f[0] - f[1]) / (2 * eps)
    return out


CASES = [(gr, dm) for gr in (False, True) for dm in (False, True)]


@pytest.mark.parametrize("grounded, damped", CASES)
def test_tangent_and_damping_are_the_derivatives(grounded, damped):
    """Turned nodes (rotations of 0.8 rad), velocities, full K and C in turned axes: the
    tangent equals central differences of the force by translations and spatial spins, and
    :meth:`damping` those by the velocities, to 1e-6 of their size (measured 1e-9)."""
    rng = np.random.default_rng(1)
    g, X = bushing(grounded, damped, rng=rng)
    s = state(X, rng)
    f, K = g.evaluate(s)
    fd = columns(g, s, lambda t: g.evaluate(t, tangent=False)[0])
    assert np.abs(K - fd).max() < 1e-6 * np.abs(K).max()
    if damped:
        Dfd = columns(g, s, lambda t: g.evaluate(t, tangent=False)[0], field="v")
        D = g.damping(s)
        assert np.abs(D - Dfd).max() < 1e-6 * np.abs(D).max()


def test_force_is_the_potential_gradient_and_rigid_motions_are_free():
    """Undamped: the force equals central differences of the energy (by spins and
    translations, so the rotation rows are spatial moments), and a rigid motion of a pair
    (both nodes turned by one rotation about a point and translated) leaves the deflection and
    energy unchanged (objectivity)."""
    rng = np.random.default_rng(2)
    g, X = bushing(False, False, rng=rng)
    s = state(X, rng)
    f = g.evaluate(s, tangent=False)[0]
    grad = columns(g, s, lambda t: g.energy(t)[:, None] * np.ones((1, g.nd)))[:, 0]
    assert np.abs(f - grad).max() < 1e-6 * np.abs(f).max()
    Q = so3.expm(np.array([0.3, -1.1, 0.7]))
    moved = s.copy()
    x = X + s.u
    moved.u[:] = x @ Q.T + np.array([1.0, -2.0, 0.5]) - X
    moved.rot[:] = so3.matrix_to_quat(Q @ so3.quat_to_matrix(s.rot))
    e0, e1 = g._at(s)[2], g._at(moved)[2]
    assert np.abs(e1 - e0).max() < 1e-12 * np.abs(e0).max()


@pytest.mark.parametrize("grounded, damped", CASES)
def test_step_work_equals_energy_change_plus_dissipation(grounded, damped):
    """The energy-conserving step form between two turned states (a step's rotations of 0.3
    rad): ``f . dq = U_1 - U_0 + D`` to round-off (1e-12 of the work's terms) with ``D >= 0``
    booked; its force tends to the mid-point gradient (``B_d - B_m`` is third order)."""
    rng = np.random.default_rng(3)
    g, X = bushing(grounded, damped, rng=rng)
    s0 = state(X, rng)
    s1 = s0.copy()
    s1.t = 1e-2
    theta = 0.3 * rng.normal(size=(len(X), 3))
    s1.u[:] += 0.05 * rng.normal(size=s1.u.shape)
    s1.rot[:] = so3.rotate_spatial(s0.rot, theta)
    from fem.integrators.inertia import midpoint_state

    sm = midpoint_state(s0, s1, np.zeros(len(X), dtype=bool))
    nodal = np.hstack([s1.u - s0.u, theta])
    inc = g.element_vector(nodal)
    hist = g.conserving_start(s0)
    f, K, U1, h1 = g.conserving(s0, s1, sm, inc, hist)
    work = np.einsum("ei,ei->e", f, inc)
    U0 = g.energy(s0)
    D = h1["dissipated"] if damped else 0.0
    scale = np.abs(U0).max() + np.abs(U1).max()
    assert np.abs(work - (U1 - U0 + D)).max() < 1e-12 * scale
    if damped:
        assert np.all(h1["dissipated"] > 0)


# --- a rigid body on a bushing to the ground -----------------------------------------------------
MASS = 2.0
INERTIA = [0.5, 0.3, 0.4]
DIAG = [800.0, 1800.0, 1200.0, 50.0, 40.0, 30.0]


def body_deck(stiffness, steps, damping=None, axes=None, inertia=INERTIA, velocity=None):
    conn = {"name": "mount", "type": "bushing", "ground": [1], "stiffness_matrix": stiffness}
    if damping is not None:
        conn["damping_matrix"] = damping
    if axes is not None:
        conn["axes"] = axes
    d = {"model": {"dim": 3, "title": "a body on a 3D bushing"},
         "nodes": {"coordinates": [[0.0, 0.0, 0.0]]},
         "bodies": [{"name": "block", "nodes": [1], "mass": MASS, "inertia": inertia}],
         "connectors": [conn], "steps": steps}
    if velocity is not None:
        d["velocities"] = [dict({"name": "kick", "nodes": [1]}, **velocity)]
    return d


LIN = [{"name": "lin", "type": "linearize", "modes": 6, "method": "dense"}]


def test_decoupled_frequencies_and_damping_ratios():
    """Diagonal K and C, global axes, principal inertia at the node: the six linearized
    eigenvalues are ``-zeta w +- i w sqrt(1 - zeta^2)`` with ``w = sqrt(k_i / m_i)`` and
    ``zeta_i = c_i / (2 sqrt(k_i m_i))`` to 1e-9."""
    m = np.array([MASS] * 3 + INERTIA)
    zeta = np.array([0.01, 0.02, 0.05, 0.1, 0.03, 0.2])
    c = 2 * zeta * np.sqrt(np.array(DIAG) * m)
    lin = solve(body_deck(DIAG, LIN, damping=list(c)))[3][0].eigen
    p = lin.values[np.argsort(np.abs(lin.values))]
    w = np.sqrt(np.array(DIAG) / m)
    order = np.argsort(w)
    np.testing.assert_allclose(np.abs(p), w[order], rtol=1e-9)
    np.testing.assert_allclose(-p.real / np.abs(p), zeta[order], rtol=1e-9)


def test_coupled_frequencies_against_eigh():
    """Full symmetric K, axes turned (given as two vectors), full inertia tensor: the
    linearized frequencies equal ``scipy.linalg.eigh(B^T K B, M)`` with ``B = diag(F^T, F^T)``
    to 1e-9 (at the reference the rotation vector's Jacobian is the identity)."""
    J = np.array([[0.5, 0.05, -0.02], [0.05, 0.3, 0.01], [-0.02, 0.01, 0.4]])
    x, y = np.array([1.0, 1.0, 0.0]), np.array([0.0, 0.3, 1.0])
    lin = solve(body_deck(K_FULL.tolist(), LIN, axes=[x.tolist(), y.tolist()],
                          inertia=J.tolist()))[3][0].eigen
    ex = x / np.linalg.norm(x)
    ey = y - (y @ ex) * ex
    ey /= np.linalg.norm(ey)
    F = np.column_stack([ex, ey, np.cross(ex, ey)])
    B = sla.block_diag(F.T, F.T)
    M = sla.block_diag(MASS * np.eye(3), J)
    w = np.sqrt(sla.eigh(B.T @ K_FULL @ B, M, eigvals_only=True))
    np.testing.assert_allclose(np.sort(lin.frequencies), w, rtol=1e-9)
    assert np.abs(lin.values.real).max() < 1e-9 * w.max()


@functools.cache
def kicked(integrator, damped):
    """The body on a soft bushing kicked into large rotation: the step's energy rows (each
    run once)."""
    steps = [{"name": "free", "type": "dynamic", "integrator": integrator,
              "duration": 0.3, "time_step": 5e-3, "velocities": ["kick"], "tolerance": 1e-12}]
    damping = [5.0, 5.0, 5.0, 0.2, 0.2, 0.2] if damped else None
    d = body_deck((K_FULL * 0.004).tolist(), steps, damping=damping,
                  axes=[[1.0, 1.0, 0.0], [0.0, 0.3, 1.0]],
                  velocity={"velocity": [1.0, 0.0, -0.5], "angular_velocity": [3.0, -2.0, 1.5]})
    rows = solve(d)[3][0].history
    return (np.array([r["total"] for r in rows]),
            np.array([r.get("damping", 0.0) for r in rows]), rows)


@pytest.mark.parametrize("damped", [False, True])
def test_free_vibration_in_large_rotation_conserves_energy(damped):
    """Kicked with 3.9 rad/s about a skew axis and 1 m/s (relative rotations up to 0.52 rad:
    the rotation vector's nonlinearity matters), 60 steps of the energy-conserving scheme:
    ``total`` (plus ``damping``) constant to 1e-11 of E0 (measured 6e-14; the mid-point
    gradient alone, without Gonzalez's correction, gives 1.2e-8); damped, the damping takes
    energy (more than 5 %; measured 25 %)."""
    total, damp, rows = kicked("energy_conserving", damped)
    E0 = total[0]
    assert np.abs(total + damp - E0).max() < 1e-11 * E0
    if damped:
        assert damp[-1] > 0.05 * E0
    assert max(r["strain"] for r in rows) > 0.3 * E0


@pytest.mark.parametrize("damped", [False, True])
def test_two_free_bodies_on_a_bushing_conserve_energy_and_momenta(damped):
    """Two free bodies joined by a bushing at offset nodes (the pair form: both frames turn),
    the second kicked into rotations up to 0.47 rad, 60 energy-conserving steps: ``total +
    damping`` constant to 1e-11 of E0 and the linear and angular momenta to 1e-10 (measured
    5e-14, 8e-14: the step force lies in the range of ``B_m^T``, self-equilibrated at the
    mid-point; Gonzalez's plain correction along ``dq`` drifted by 4e-7); damped, the bushing
    takes energy (measured 37 %)."""
    conn = {"name": "mount", "type": "bushing", "pairs": [[1, 2]],
            "stiffness_matrix": (K_FULL * 0.004).tolist(),
            "axes": [[1.0, 1.0, 0.0], [0.0, 0.3, 1.0]]}
    if damped:
        conn["damping_matrix"] = [5.0, 5.0, 5.0, 0.2, 0.2, 0.2]
    d = {"model": {"dim": 3},
         "nodes": {"coordinates": [[0.0, 0.0, 0.0], [0.3, 0.1, -0.2]]},
         "bodies": [{"name": "a", "nodes": [1], "mass": 2.0, "inertia": [0.5, 0.3, 0.4]},
                    {"name": "b", "nodes": [2], "mass": 1.0, "inertia": [0.2, 0.25, 0.1]}],
         "connectors": [conn],
         "velocities": [{"name": "kick", "nodes": [2], "velocity": [1.0, 0.0, -0.5],
                         "angular_velocity": [3.0, -2.0, 1.5]}],
         "steps": [{"name": "free", "type": "dynamic", "integrator": "energy_conserving",
                    "duration": 0.3, "time_step": 5e-3, "velocities": ["kick"],
                    "tolerance": 1e-12}]}
    rows = solve(d)[3][0].history
    total = np.array([r["total"] for r in rows])
    damp = np.array([r.get("damping", 0.0) for r in rows])
    E0 = total[0]
    assert np.abs(total + damp - E0).max() < 1e-11 * E0
    for key in ("linear_momentum", "angular_momentum"):
        p = np.array([r[key] for r in rows])
        assert np.abs(p - p[0]).max() < 1e-10 * np.abs(p[0]).max()
    assert (damp[-1] > 0.1 * E0) if damped else (max(r["strain"] for r in rows) > 0.3 * E0)


def test_newmark_family_books_the_same_damping():
    """Generalized-alpha (its Newton on the bushing's force and tangent by spins, tolerance
    1e-12) on the damped kick: the damping it books (trapezoidal rule of the power) within
    1e-3 of the energy-conserving scheme's (measured 1e-5), the balance within 1e-3 of E0
    (its numerical dissipation and the rule's error; measured 1.1e-4)."""
    total, damp, _ = kicked("generalized_alpha", True)
    _, ref, _ = kicked("energy_conserving", True)
    assert damp[-1] == pytest.approx(ref[-1], rel=1e-3)
    assert np.abs(total + damp - total[0]).max() < 1e-3 * total[0]


def _errors(**changes):
    d = body_deck(DIAG, LIN)
    d["connectors"][0].update(changes)
    return d


@pytest.mark.parametrize("changes, where, says", [
    ({"stiffness_matrix": [1.0, 2.0, 3.0]}, "connectors[0].stiffness_matrix", "diagonal of 6"),
    ({"stiffness_matrix": np.eye(3).tolist()}, "connectors[0].stiffness_matrix", "6x6"),
    ({"stiffness_matrix": (np.eye(6) + np.triu(np.ones((6, 6)), 1)).tolist()},
     "connectors[0].stiffness_matrix", "symmetric"),
    ({"stiffness_matrix": (np.eye(6) - 2 * np.eye(6)[::-1]).tolist()},
     "connectors[0].stiffness_matrix", "semi-definite"),
    ({"damping_matrix": [1.0, 1.0, -1.0, 1.0, 1.0, 1.0]}, "connectors[0].damping_matrix[2]",
     "nonnegative"),
    ({"damping_matrix": (np.eye(6) - 2 * np.eye(6)[::-1]).tolist()},
     "connectors[0].damping_matrix", "semi-definite"),
    ({"axes": [[1.0, 0.0, 0.0]]}, "connectors[0].axes", "two rows"),
    ({"axes": [[1.0, 0.0, 0.0], [2.0, 0.0, 0.0]]}, "connectors[0].axes[1]", "not along x"),
    ({"axes": [[0.0, 0.0, 0.0], [0.0, 1.0, 0.0]]}, "connectors[0].axes[0]", "nonzero"),
    ({"axes": [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, -1.0]]}, "connectors[0].axes",
     "left-handed"),
    ({"axes": [[1.0, 0.0, 0.0], [0.1, 1.0, 0.0], [0.0, 0.0, 1.0]]}, "connectors[0].axes",
     "orthonormal"),
])
def test_deck_errors(changes, where, says):
    """Wrong sizes, non-symmetric or indefinite K and C, bad axes: a deck error naming the key."""
    with pytest.raises(DeckError) as err:
        deck_io.from_dict(_errors(**changes))
    assert err.value.key == where and says in str(err.value), str(err.value)


def test_six_component_outputs_reach_paraview_as_two_cell_vectors(tmp_path):
    """The (T, E, 6) force, deflection and rate of a 3D bushing are drawn as the cell vectors
    <q>_u (ux, uy, uz) and <q>_r (rx, ry, rz): meshio reads them from the XDMF equal to the
    HDF5 dataset at every frame (before, ParaView showed only the scalar `dissipated`)."""
    import h5py
    import meshio

    from fem.io.deck import load
    from fem.run import run

    case = Path(__file__).parents[1] / "cases" / "bushing_3d_body" / "deck.toml"
    out = tmp_path / "b.h5"
    result = run(load(str(case)), str(out))
    with h5py.File(out, "r") as f:
        steps = [s for s in f["steps"] if "elements/mount/force" in f["steps"][s]]
        data = {q: np.concatenate([f[f"steps/{s}/elements/mount/{q}"][()] for s in steps])
                for q in ("force", "deflection", "deflection_rate")}
    with meshio.xdmf.TimeSeriesReader(result.xdmf[0]) as r:
        r.read_points_cells()
        assert r.num_steps == len(data["force"])
        for k in range(r.num_steps):
            _, _, cd = r.read_data(k)
            for q, D in data.items():
                for half, cols in (("u", slice(0, 3)), ("r", slice(3, 6))):
                    got = np.concatenate(cd[f"{q}_{half}"])
                    got = got[~np.isnan(got).any(axis=1)]
                    np.testing.assert_array_equal(got, D[k][:, cols])
