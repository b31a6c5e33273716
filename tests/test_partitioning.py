"""Coordinate partitioning with Blajer's projective criterion and the null-space formulation
(fem.constraints.handlers.partitioning, fem.constraints.handlers.nullspace), on the fem models of
the notes' pendulums and four-bar FB-S1 (notes/mufti_blajer.md parts B and D; Part E tests
11-17)."""


import numpy as np
import pytest
from helpers import case_deck as deck
from helpers import lift_to_3d
from scipy.optimize import brentq

from fem.constraints.handlers import consistent
from fem.constraints.handlers import coordinates as co
from fem.constraints.handlers import nullspace as ns
from fem.constraints.handlers import partitioning as pt
from fem.errors import ModelError
from fem.io.deck import from_dict
from fem.loads import StepLoads
from fem.model import apply_velocities
from fem.system import System

# notes D1: the initial state of FB-S1 in Blajer's clockwise relative angles
Q0 = np.array([0.0, 1.0590759822, 1.9217036704])
QDOT0 = np.array([6.0, -6.3069207705, 2.3960099723])


def mechanism(d):
    """The Mechanism of deck dict ``d`` (its first step's loads) and its initial state."""
    dk = from_dict(d)
    sysm = System(dk.model)
    state = sysm.reference_state()
    spec = dk.steps[0]
    apply_velocities(spec["settings"].velocities, state, dk.model.X)
    loads = StepLoads(dk.model, spec["loads"], ramp=False, prescribed=spec["prescribed"])
    loads.begin(state)
    return ns.Mechanism(sysm, loads.force), state


def angles(mech, state):
    """FB-S1's (alpha1, alpha2, alpha3) from the joints' relative angles at O1, O2, O3 (O4 cut,
    notes B8): the signs turn the joints' convention into the notes' clockwise one, read off the
    notes' rates at t = 0 (whose magnitudes the joint rates must match first)."""
    raw = co.joint_angles(mech, ["O1", "O2", "O3"], closure=["O4"])
    rates = raw.S @ mech.velocities(state)
    np.testing.assert_allclose(np.abs(rates), np.abs(QDOT0), rtol=1e-9)
    return co.joint_angles(mech, ["O1", "O2", "O3"], closure=["O4"], signs=np.sign(rates / QDOT0),
                           names=["alpha1", "alpha2", "alpha3"], offset=Q0)


@pytest.fixture(scope="module")
def fbs1():
    mech, state = mechanism(deck("four_bar_fbs1"))
    return mech, state, angles(mech, state)


# notes D1, "Projective criterion for FB-S1": alpha1 -> (alpha2, alpha3), cos^2 alpha, cos^2 beta
TABLE = [
    (0.0, (1.059076, 1.921704), (0.906721, 0.738857, 0.148875), (0.093279, 0.261143, 0.851125)),
    (np.pi / 4, (0.157328, 2.225488), (0.880977, 0.765536, 0.269466), None),
    (0.7, (0.2637869, 2.1960853), (0.8609032, 0.7336175, 0.2518095), None),
    (np.pi / 2, (-0.918336, 2.372799), (0.821659, 0.922141, 0.0), (0.178341, 0.077859, 1.0)),
    (np.pi, (-2.66543, 1.921704), (0.900828, 0.976421, 0.238516), None),
    (1.5 * np.pi, (-3.804085, 1.539541), (0.945733, 0.940684, 0.0), None),
]


@pytest.fixture(scope="module")
def table_states(fbs1):
    """FB-S1 at the table's alpha1, reached from alpha1 = 0 in steps of at most 0.1 rad by Newton
    on the fem model's joints (the branch of alpha3 = +arccos of (40) is the deck's)."""
    mech, state, alpha = fbs1
    s, out, a1 = state.copy(), {}, 0.0
    for target, *_ in TABLE:
        for value in np.linspace(a1, target, int(np.ceil(abs(target - a1) / 0.1)) + 1)[1:]:
            pt.solve_dependent(mech, s, alpha, ["alpha1"], [value])
        out[target], a1 = s.copy(), target
    return out


# --- the criterion (notes B4, Part E test 12) ---------------------------------------------------
def test_fbs1_mass_matrix_in_the_angles_is_the_notes():
    """notes D1: M(q0) in (alpha1, alpha2, alpha3), built here from the fem model's bodies as
    J^T M J on the open chain cut at O4."""
    mech, state = mechanism(deck("four_bar_fbs1"))
    alpha = angles(mech, state)
    M_s, C, J = co.generalized(alpha, mech.mass(state), mech.jacobian(state))
    np.testing.assert_allclose(M_s, [[1.4474260903, 1.1802130452, -0.0340946867],
                                     [1.1802130452, 1.084, 0.0606666667],
                                     [-0.0340946867, 0.0606666667, 0.1706666667]], atol=1e-9)
    np.testing.assert_allclose(C @ QDOT0, 0.0, atol=1e-9)     # the notes' rates close the loop
    assert C.shape == (2, 3)


@pytest.mark.parametrize("alpha1", [row[0] for row in TABLE])
def test_fbs1_projective_criterion_table(fbs1, table_states, alpha1):
    """notes D1 table "Projective criterion for FB-S1" (every row), from the fem model: the
    positions (alpha2, alpha3), cos^2 alpha and cos^2 beta [1e-6]; cos^2 alpha3 = 0 at pi/2 and
    3 pi/2 (B8: D[:, 3] = 0 there)."""
    mech, _, alpha = fbs1
    _, q23, ca, cb = next(row for row in TABLE if row[0] == alpha1)
    s = table_states[alpha1]
    q = alpha.values(mech, s)
    assert q[0] == pytest.approx(alpha1, abs=1e-12)
    assert np.abs(np.angle(np.exp(1j * (q[1:] - q23)))).max() < 1e-6
    crit = pt.criterion(mech, s, alpha)
    np.testing.assert_allclose(crit.cos2_alpha, ca, atol=1e-6)
    if cb is not None:
        np.testing.assert_allclose(crit.cos2_beta, cb, atol=1e-6)
    if alpha1 in (np.pi / 2, 1.5 * np.pi):
        assert crit.cos2_alpha[2] < 1e-12
    # B4 property 3: no sum rule without a diagonal metric (notes: sum in [1.72, 2.20])
    assert 1.72 <= crit.cos2_alpha.sum() <= 2.20


def test_fbs1_tangent_basis_at_0_7(fbs1, table_states):
    """notes D1: at alpha1 = 0.7, D = [1, -1.233153, 0.353747] (Blajer's [I, A^T], q_I = alpha1)."""
    mech, _, alpha = fbs1
    s = table_states[0.7]
    _, C, _ = co.generalized(alpha, mech.mass(s), mech.jacobian(s))
    np.testing.assert_allclose(pt.tangent_basis(C, [0]), [[1.0, -1.233153, 0.353747]], atol=1e-6)


@pytest.mark.parametrize("which", ["dofs", "angles"])
@pytest.mark.parametrize("alpha1", [0.0, 0.7, np.pi])
def test_criterion_invariants(fbs1, table_states, which, alpha1):
    """notes B4 properties 1-3 (Part E test 12) [1e-12]: cos^2 alpha + cos^2 beta = 1; the values
    do not depend on the independent set that built D (every admissible one); with a diagonal
    metric (the bodies' DOFs: M = diag(m, m, J)) they sum to k = 1."""
    mech, _, alpha = fbs1
    s = table_states[alpha1]
    coords = co.model_coordinates(mech) if which == "dofs" else alpha
    crit = pt.criterion(mech, s, coords)
    np.testing.assert_allclose(crit.cos2_alpha + crit.cos2_beta, 1.0, atol=1e-12)
    M_s, C, _ = co.generalized(coords, mech.mass(s), mech.jacobian(s))
    tried = 0
    for i in range(len(M_s)):
        if crit.cos2_alpha[i] < 1e-6:                         # C_D singular: not a partition
            continue
        ca, cb, _ = pt.projective_criterion(M_s, C, pt.tangent_basis(C, [i], coords.names))
        np.testing.assert_allclose(ca, crit.cos2_alpha, atol=1e-12)
        np.testing.assert_allclose(cb, crit.cos2_beta, atol=1e-12)
        tried += 1
    assert tried >= 3
    if which == "dofs":
        assert crit.cos2_alpha.sum() == pytest.approx(mech.k, abs=1e-12)


def test_mathematical_pendulum_symbolic_values():
    """notes B5: x, y of a mass on a rod, Phi = x^2 + y^2 - rho^2: cos^2 alpha = (sin^2, cos^2)
    and cos^2 beta = (cos^2, sin^2) of gamma [1e-12]."""
    m, rho = 2.0, 1.5
    for gamma in (0.2, 0.9, 1.4):
        x, y = rho * np.cos(gamma), rho * np.sin(gamma)
        ca, cb, _ = pt.projective_criterion(m * np.eye(2), np.array([[2 * x, 2 * y]]))
        np.testing.assert_allclose(ca, [np.sin(gamma) ** 2, np.cos(gamma) ** 2], atol=1e-12)
        np.testing.assert_allclose(cb, [np.cos(gamma) ** 2, np.sin(gamma) ** 2], atol=1e-12)


def rod_at(mech, state, gamma):
    """The rod pendulum's body turned by gamma about its pivot at the origin."""
    s = state.copy()
    rho = 0.6
    s.u[0, :2] = [rho * np.cos(gamma) - rho, rho * np.sin(gamma)]
    s.rot[0] = gamma
    assert np.abs(mech.gap(s)).max() < 1e-15
    return s


@pytest.mark.parametrize(("gamma", "values"), [(0.3, (0.065499, 0.684501, 0.25)),
                                               (1.0, (0.531055, 0.218945, 0.25))])
def test_physical_pendulum_criterion(gamma, values):
    """notes B5 (26) and D2: the rod pendulum deck (L = 1.2, m = 3, J = m L^2/12) in its DOFs
    (x, y, gamma): cos^2 alpha = (m rho^2 sin^2, m rho^2 cos^2, J) / (m rho^2 + J) [1e-12], the
    notes' values [1e-6]; the same for every independent choice."""
    mech, state = mechanism(deck("rod_pendulum"))
    s = rod_at(mech, state, gamma)
    crit = pt.criterion(mech, s)
    m, rho, J = 3.0, 0.6, 0.36
    closed = np.array([m * rho**2 * np.sin(gamma) ** 2, m * rho**2 * np.cos(gamma) ** 2, J])
    np.testing.assert_allclose(crit.cos2_alpha, closed / (m * rho**2 + J), atol=1e-12)
    np.testing.assert_allclose(crit.cos2_alpha, values, atol=1e-6)
    for i in range(3):
        _, C, _ = co.generalized(co.model_coordinates(mech), mech.mass(s), mech.jacobian(s))
        ca, _, _ = pt.projective_criterion(mech.mass(s), C, pt.tangent_basis(C, [i]))
        np.testing.assert_allclose(ca, crit.cos2_alpha, atol=1e-12)


def test_redundant_rows_of_the_3d_four_bar_are_dropped():
    """FB-S1 in 3D (notes D1, 3-D redundancy note: 20 rows of rank 17): the criterion works on the
    17 kept rows; the in-plane DOFs have the planar values, the out-of-plane ones are held; the
    null-space accelerations and reactions are the KKT's [1e-10]."""
    d = lift_to_3d(deck("four_bar_fbs1"))
    mech3, state3 = mechanism(d)
    assert (mech3.n, mech3.m, mech3.k) == (18, 17, 1)
    crit3 = pt.criterion(mech3, state3)
    mech2, state2 = mechanism(deck("four_bar_fbs1"))
    crit2 = pt.criterion(mech2, state2)
    plane = np.array([0, 1, 5])                       # ux, uy, rz of each 3D node
    in_plane = np.concatenate([6 * b + plane for b in range(3)])
    np.testing.assert_allclose(crit3.cos2_alpha[in_plane], crit2.cos2_alpha, atol=1e-12)
    assert np.abs(np.delete(crit3.cos2_alpha, in_plane)).max() < 1e-12
    # the null-space solve on the kept rows is the KKT one with the released rows' lambda = 0
    a, lam = ns.accelerations(mech3, state3)
    a_kkt, lam_kkt = kkt_solve(mech3, state3)
    np.testing.assert_allclose(a, a_kkt, rtol=0, atol=1e-11)
    for x, y in zip(mech3.per_group(lam), lam_kkt, strict=True):
        np.testing.assert_allclose(x, y, rtol=0, atol=1e-10)


# --- choosing (notes B4 algorithm, D1 mass sensitivity; Part E tests 16-17) ---------------------
def test_forcing_alpha3_at_its_singular_point_is_an_error(fbs1, table_states):
    """notes B8: alpha3 is singular at alpha1 = pi/2 (C_D singular): forcing it there raises,
    naming it; the greedy choice never takes it there."""
    mech, _, alpha = fbs1
    s = table_states[np.pi / 2]
    _, C, _ = co.generalized(alpha, mech.mass(s), mech.jacobian(s))
    with pytest.raises(pt.SingularChoice) as err:
        pt.tangent_basis(C, [2], alpha.names)
    assert isinstance(err.value, ModelError) and err.value.coordinates == ("alpha3",)
    assert "'alpha3' is singular" in str(err.value)
    crit = pt.criterion(mech, s, alpha)
    assert pt.choose(crit.cos2_alpha, crit.D) == [1]            # alpha2 is the best there
    # from alpha1: 0.922141 beats 0.821659 by 12 %, more than 5 % but not 15 %
    assert pt.choose(crit.cos2_alpha, crit.D, current=[0]) == [1]
    assert pt.choose(crit.cos2_alpha, crit.D, current=[0], hysteresis=0.15) == [0]
    assert pt.choose(crit.cos2_alpha, crit.D, current=[2], hysteresis=0.15) == [1]


@pytest.mark.parametrize(("case", "switch"), [
    ("uniform", (("alpha1", "alpha2", 1.218), ("alpha2", "alpha1", 4.664))),
    ("coupler x10", (("alpha1", "alpha2", 1.330), ("alpha2", "alpha1", 4.833))),
    ("crank x10", (("alpha1", "alpha2", 1.356), ("alpha2", "alpha1", 2.780))),
    ("identity metric", (("alpha2", "alpha1", 2.559), ("alpha1", "alpha2", 6.030))),
])
def test_best_coordinate_switch_angles_move_with_the_masses(case, switch):
    """notes D1 "Mass sensitivity": the angles alpha1 where the best coordinate changes between
    alpha1 and alpha2, for the deck's bars, a coupler or crank 10 times heavier, and the
    geometry-only criterion (identity metric). The notes' grid is 2 pi / 3600 and prints three
    decimals: [2.5e-3]. Here: a sweep of Newton positions every 0.05 rad and Brent's method."""
    d = deck("four_bar_fbs1")
    body = {"coupler x10": 1, "crank x10": 0}.get(case)
    if body is not None:
        d["bodies"][body]["mass"] *= 10
        d["bodies"][body]["inertia"] *= 10
    mech, state = mechanism(d)
    alpha = angles(mech, state)

    def diff(s):
        M_s, C, _ = co.generalized(alpha, mech.mass(s), mech.jacobian(s))
        ca = pt.projective_criterion(np.eye(3) if case == "identity metric" else M_s, C)[0]
        assert ca[2] < max(ca[0], ca[1])                     # alpha3 is never the best
        return ca[0] - ca[1]

    grid = np.arange(0.0, 2 * np.pi, 0.05)
    states, values = [], []
    for a1 in grid:
        pt.solve_dependent(mech, state, alpha, ["alpha1"], [a1])
        states.append(state.copy())
        values.append(diff(state))
    values = np.array(values)
    found = []
    for i in np.flatnonzero(np.sign(values[:-1]) != np.sign(values[1:])):
        work = states[i].copy()

        def f(x):
            pt.solve_dependent(mech, work, alpha, ["alpha1"], [x])
            return diff(work)

        names = ("alpha1", "alpha2") if values[i] > 0 else ("alpha2", "alpha1")
        found.append((*names, brentq(f, grid[i], grid[i + 1], xtol=1e-10)))
    assert [f[:2] for f in found] == [s[:2] for s in switch]
    np.testing.assert_allclose([f[2] for f in found], [s[2] for s in switch], atol=2.5e-3)


# --- integration (notes D1 "Switching simulation"; Part E tests 15-16) -------------------------
# notes D1, free motion table (DOP853 at 1e-13): alpha1 unwrapped
ALPHA1 = {0.5: 5.321853327, 1.0: 9.543177006, 1.5: 14.345511827, 2.0: 19.242334254}


def test_switching_run_reproduces_the_reference_motion(fbs1):
    """notes D1 switching simulation with the fem model: RK4 at dt = 2e-3 on (alpha_I, alpha_I'),
    Newton for the rest, the criterion in the angles every step with 5 % hysteresis. alpha1 at
    t = 0.5, 1, 1.5, 2 is the reference [1e-6; the notes: 4.2e-7 at t = 2 for this step] and the
    notes' own RK4 run to the printed digits (19.2423338317); 6 switches, the first two at
    0.158 s (to alpha2) and 0.47 s, all more than 0.1 s apart; energy constant [1.5e-7 relative,
    8e-8 at this step]; positions on the joints to Newton's tolerance; the reactions at t = 2 are
    the table's [1e-4 N, the phase error at this step] and the KKT multipliers of that state
    [1e-10]."""
    mech, state, alpha = fbs1
    s = state.copy()
    run = pt.CoordinatePartitioning(mech, alpha, time_step=2e-3).run(s, 2.0)
    for t, ref in ALPHA1.items():
        i = int(round(t / 2e-3))
        assert run.t[i] == pytest.approx(t, abs=1e-12)
        assert abs(run.s[i, 0] - ref) < 1e-6, (t, run.s[i, 0] - ref)
    assert run.s[-1, 0] == pytest.approx(19.2423338317, abs=5e-10)
    times = [t for t, *_ in run.switches]
    assert len(times) == 6 and np.diff(times).min() > 0.1
    assert run.switches[0][1:] == (("alpha1",), ("alpha2",))
    np.testing.assert_allclose(times[:2], [0.158, 0.47], atol=1e-9)
    E0 = 10.9198732659                                       # notes D1
    assert np.abs(run.energy - E0).max() < 1.5e-7 * E0
    assert run.gap.max() <= mech.tol
    # reactions at the end: B(37) from the run's accelerations, against the KKT and the table
    lam, y = pt.partition_reactions(mech, s, s.a[mech.free])
    assert np.abs(y).max() < 1e-10
    _, kkt = kkt_solve(mech, s)
    for a, b in zip(lam, kkt, strict=True):
        np.testing.assert_allclose(a, b, atol=1e-10)
    names = [c.name for c in mech.system.model.constraints]
    np.testing.assert_allclose(lam[names.index("O4")][0], [-1.0402905, 9.1620192], atol=1e-4)
    np.testing.assert_allclose(lam[names.index("O1")][0], [-1.3258802, -3.2391961], atol=1e-4)


def test_forcing_alpha3_in_a_run_is_reported_singular(fbs1):
    """notes D1: forcing q_I = alpha3 fails below alpha1 = pi/2, where alpha3 turns: the run raises
    SingularChoice naming alpha3 there (cos^2 alpha3 below 1e-3), not after a wrong motion."""
    mech, state, alpha = fbs1
    s = state.copy()
    integ = pt.CoordinatePartitioning(mech, alpha, time_step=2e-3, independent=["alpha3"])
    with pytest.raises(pt.SingularChoice) as err:
        integ.run(s, 0.5)
    assert err.value.coordinates == ("alpha3",) and "'alpha3'" in str(err.value)
    assert err.value.time < 0.25
    a1 = alpha.values(mech, s)[0]
    assert 1.4 < a1 < np.pi / 2
    assert pt.criterion(mech, s, alpha).cos2_alpha[2] < 1e-3


# --- the null-space formulation (notes A4 item 5, B3, B7; Part E tests 11, 14) ------------------
def kkt_solve(mech, state):
    """The dense KKT solve of fem.constraints.handlers.consistent: accelerations (n,), multipliers
    per group."""
    sysm = mech.system
    A = sysm.assembler.to_scipy(consistent.kkt_matrix(sysm, mech.inertia, state)).toarray()
    rhs = consistent.kkt_rhs(sysm, mech.inertia, state, mech.external(state, state.t))
    x = np.linalg.solve(A, rhs)
    nodal, lam = consistent.split(sysm, x)
    return nodal[mech.free], lam


def test_nullspace_gives_the_kkt_accelerations_and_the_pin_forces(fbs1):
    """FB-S1 at t = 0: the null-space minimal equations give the KKT accelerations and
    multipliers [1e-12]; the pin forces are the notes' D1 f_O4 and f_O1 [1e-9], the angular
    accelerations the notes' q'' [1e-9], and the lower part of B(37) vanishes."""
    mech, state, alpha = fbs1
    a, lam = ns.accelerations(mech, state)
    a_kkt, lam_kkt = kkt_solve(mech, state)
    np.testing.assert_allclose(a, a_kkt, rtol=0, atol=1e-12 * np.abs(a_kkt).max())
    per_group = mech.per_group(lam)
    for x, y in zip(per_group, lam_kkt, strict=True):
        np.testing.assert_allclose(x, y, rtol=0, atol=1e-11)      # forces of ~10 N
    names = [c.name for c in mech.system.model.constraints]
    np.testing.assert_allclose(per_group[names.index("O4")][0], [-1.0989512818, 8.2676077370],
                               atol=1e-9)
    np.testing.assert_allclose(per_group[names.index("O1")][0], [0.0826311484, 1.7909153192],
                               atol=1e-9)
    np.testing.assert_allclose(alpha.S @ a, [5.5087432284, -13.4594688462, 4.3013177812],
                               atol=1e-9)
    _, y = pt.partition_reactions(mech, state, a)
    assert np.abs(y).max() < 1e-12


def test_nullspace_pendulum_at_release():
    """notes D2: the rod pendulum released from horizontal: gamma'' = -3 g / (2 L) and the pivot
    force on the rod (0, m g / 4) [1e-9]."""
    mech, state = mechanism(deck("rod_pendulum"))
    a, lam = ns.accelerations(mech, state)
    g, L, m = 9.81, 1.2, 3.0
    assert a[2] == pytest.approx(-3 * g / (2 * L), abs=1e-9)
    np.testing.assert_allclose(lam, [0.0, m * g / 4], atol=1e-9)


def test_projections_are_mass_orthogonal(fbs1, table_states):
    """notes A4/B3: the velocity projection makes G v = 0 with a correction M-orthogonal to the
    tangent space (the nearest admissible velocities in kinetic energy); the position Newton lands
    on the joints [tolerance] with a correction M-orthogonal to the tangent space to first order."""
    mech, _, _ = fbs1
    s = table_states[0.7].copy()
    rng = np.random.default_rng(3)
    v0 = rng.normal(size=mech.n)
    s.v[mech.free] = v0
    ns.project_velocities(mech, s)
    M, G = mech.mass(s), mech.jacobian(s)
    Z = ns.split(G).Z
    v = mech.velocities(s)
    assert np.abs(G @ v).max() < 1e-13
    assert np.abs(Z.T @ M @ (v - v0)).max() < 1e-13
    q0 = mech.coordinates(s)
    dq = 1e-5 * rng.normal(size=mech.n)
    mech.set_coordinates(s, q0 + dq)
    assert ns.project_positions(mech, s) >= 1
    assert np.abs(mech.gap(s)).max() <= mech.tol
    back = mech.coordinates(s) - (q0 + dq)
    assert np.abs(Z.T @ M @ back).max() < 1e-3 * np.abs(M @ back).max()


def test_nullspace_run_reproduces_the_reference_motion(fbs1):
    """RK4 at dt = 2e-3 on all of (q, v) with null-space accelerations and projections: alpha1 at
    t = 0.5 is the D1 table's [1e-6; 7e-8 at this step], energy constant [1e-7 relative],
    positions on the joints."""
    mech, state, alpha = fbs1
    s = state.copy()
    run = ns.integrate(mech, s, 0.5, 2e-3)
    a1 = (alpha.S @ run.q.T)[0] + alpha.offset[0]
    assert abs(a1[-1] - ALPHA1[0.5]) < 1e-6
    assert np.abs(run.energy - 10.9198732659).max() < 1e-7 * 10.9198732659
    assert run.gap.max() <= mech.tol


# --- limits ------------------------------------------------------------------------------------
def test_a_large_model_is_refused():
    n = ns.MAX_DOFS // 3 + 1
    d = {"model": {"dim": 2},
         "nodes": {"coordinates": [[float(i), 0.0] for i in range(n)]},
         "bodies": [{"name": "b", "nodes": list(range(1, n + 1)), "mass": 1.0, "inertia": 1.0}],
         "steps": [{"name": "s", "type": "dynamic", "duration": 1.0, "time_step": 0.1}]}
    dk = from_dict(d)
    with pytest.raises(ModelError, match=f"{3 * n} free nodal DOFs.*at most {ns.MAX_DOFS}"):
        ns.Mechanism(System(dk.model))


def test_coordinates_that_do_not_parametrize_are_refused(fbs1):
    mech, state, _ = fbs1
    bad = co.joint_angles(mech, ["O1", "O2", "O3"], closure=["O3", "O4"])
    with pytest.raises(ModelError, match="do not parametrize"):
        pt.criterion(mech, state, bad)
    with pytest.raises(ModelError, match="no joint or constraint group 'O9'"):
        co.joint_angles(mech, ["O9"], closure=["O4"])
    with pytest.raises(ModelError, match="degrees of freedom"):
        pt.CoordinatePartitioning(mech, time_step=1e-3, independent=["node 1 ux", "node 1 uy"])


@pytest.mark.parametrize("independent", [None, ["node 1 rz"]])
def test_model_coordinates_run(fbs1, independent):
    """The model's own DOFs as candidates (no closure cut): 0.1 s of motion at dt = 2e-3 agrees
    with the angles' run (the motion is intrinsic; RK4's errors in different coordinates differ,
    1e-8 here), switching among the bodies' DOFs or forced on the crank's rotation (never
    singular: a Grashof crank)."""
    mech, state, alpha = fbs1
    s1, s2 = state.copy(), state.copy()
    pt.CoordinatePartitioning(mech, time_step=2e-3, independent=independent).run(s1, 0.1)
    pt.CoordinatePartitioning(mech, alpha, time_step=2e-3).run(s2, 0.1)
    assert abs(alpha.values(mech, s1)[0] - alpha.values(mech, s2)[0]) < 1e-7
