"""Invariants every element group must satisfy (STYLE.md, "Lint and tests", checks 1-5)."""

import numpy as np
import pytest
from conftest import CATALOGUE, fd_tangent, perturbed, random_state, rigid_state

from fem import rotations as so3

rng = np.random.default_rng(42)


def characteristic(g):
    """EA times a length: the force scale of the element."""
    ea = g.EA if hasattr(g, "EA") else g.props["E"] * g.props["A"]
    return float(np.max(ea) * g.l0.max())


def test_tangent_matches_finite_differences(group):
    for _ in range(3):
        st = random_state(group, rng)
        K = group.tangent(st)[0]
        Kfd = fd_tangent(group, st)
        assert np.abs(K - Kfd).max() <= 1e-6 * np.abs(Kfd).max()


def test_frame_derivative_of_B_times_a_vector(group):
    """``frame.bw_derivative(kin, w)`` is d(B w)/dd at fixed ``w`` (a central difference along
    spins and translations), and the transpose partner of the geometric stiffness:
    ``q . d(B w) == w . geometric(q)`` (both are contractions of one third-order tensor)."""
    frame = getattr(group, "frame", None)
    if frame is None or frame.linear:
        pytest.skip("B is constant (linear) or there is no frame (trusses)")
    h = 1e-6
    for _ in range(3):
        st = random_state(group, rng)
        kin = group._kinematics(st)
        w = rng.normal(size=(1, group.nd))
        q = rng.normal(size=(1, kin.B.shape[1]))
        J = frame.bw_derivative(kin, w)[0]
        fd = np.column_stack([
            (group._kinematics(perturbed(group, st, j, h)).B[0] @ w[0]
             - group._kinematics(perturbed(group, st, j, -h)).B[0] @ w[0]) / (2 * h)
            for j in range(group.nd)])
        assert np.abs(J - fd).max() <= 1e-6 * np.abs(fd).max()
        left = frame.geometric(kin, q)[0]
        assert np.allclose(q[0] @ J, w[0] @ left, rtol=0, atol=1e-12 * np.abs(left).max()
                           * np.abs(w).max() * 12)


def test_tangent_splits_into_material_and_geometric(group):
    if getattr(getattr(group, "frame", None), "linear", False) or getattr(
            group, "formulation", "") == "linear":
        pytest.skip("a linear element's tangent is its material stiffness")
    st = random_state(group, rng)
    K = group.material_tangent(st) + group.geometric_stiffness(st, group.stress(st))
    assert np.allclose(K, group.tangent(st), rtol=0, atol=1e-10 * np.abs(K).max())


def test_one_evaluation_gives_the_force_and_the_tangent_of_the_separate_routines(group):
    """``evaluate`` (what Newton calls: kinematics once) returns the same numbers as the stress
    path (``B^T q`` from ``stress``'s generalized stresses is not shared code for beams: the
    section forces' ``q`` and the split tangent below are computed separately)."""
    for _ in range(3):
        st = random_state(group, rng)
        f, K = group.evaluate(st)
        f_only, none = group.evaluate(st, tangent=False)
        assert none is None
        np.testing.assert_array_equal(f, f_only)
        split = group.material_tangent(st) + group.geometric_stiffness(st, group.stress(st))
        if getattr(getattr(group, "frame", None), "linear", False) or getattr(
                group, "formulation", "") == "linear":
            split = group.material_tangent(st)
        np.testing.assert_allclose(K, split, rtol=0, atol=1e-12 * np.abs(K).max())
        fd = fd_tangent(group, st)                    # and the force is the one K linearizes
        assert np.abs(K[0] - fd).max() <= 1e-6 * np.abs(fd).max()


def test_frame_spin_map_contraction_equals_the_full_tensor(group):
    """``g_contract(kin, c) == sum_k c_k dG_k``: the geometric stiffness contracts the change of
    the frame spin map without forming the ``(E, 3, 12, 12)`` tensor."""
    frame = getattr(group, "frame", None)
    if frame is None or frame.linear or not hasattr(frame, "g_contract"):
        pytest.skip("only the 3D co-rotational frame has a spin map G")
    st = random_state(group, rng)
    c = rng.normal(size=(1, 3))
    direct = frame.g_contract(group._kinematics(st), c)
    full = np.einsum("ek,ekij->eij", c, frame.g_derivative(group._kinematics(st)))
    np.testing.assert_allclose(direct, full, rtol=0, atol=1e-14 * np.abs(full).max())


def test_declared_capabilities_and_cells():
    """Every family declares what it is (steps ask the declaration, not the attributes)."""
    from fem.elements.base import CAPABILITIES
    from fem.elements.spring import GroundSpring

    spring = ("spring", lambda: GroundSpring("s", [0], np.zeros((1, 3)), 2, "uy", 5.0))
    for _, make in [*CATALOGUE, spring]:
        g = make()
        assert g.capabilities <= set(CAPABILITIES)
        assert {"stiffness", "mass"} <= g.capabilities
        assert g.cell_type == {1: "vertex", 2: "line"}[g.nen]
        assert g.n_internal == 0 or "internal_unknowns" in g.capabilities
        # small-displacement groups with rotation DOFs (or a spring's additive DOF value)
        assert g.additive_rotations == (getattr(g, "formulation", "") == "linear"
                                        and g.type_name != "truss")


def test_rigid_motion_gives_no_force_and_no_energy(group):
    if group.formulation == "linear":
        pytest.skip("small-displacement elements are not invariant under finite rotations")
    for _ in range(5):
        axis = rng.normal(size=3) if group.dim == 3 else np.array([0.0, 0.0, 1.0])
        R = so3.expm(rng.uniform(-3, 3) * axis / np.linalg.norm(axis))
        st = rigid_state(group, R, rng.normal(size=3) * (group.dim == 3 or np.array([1, 1, 0])))
        f = group.internal_force(st)
        assert np.abs(f).max() <= 1e-9 * characteristic(group)
        assert abs(group.energy(st)[0]) <= 1e-9 * characteristic(group) * group.l0.max()


def test_small_rigid_motion_is_in_the_kernel(group):
    """K r = 0 for an infinitesimal rigid motion r about the reference."""
    st = rigid_state(group, np.eye(3), np.zeros(3))
    K = group.tangent(st)[0]
    X = group.X[0]
    for w in np.eye(3) if group.dim == 3 else [np.array([0.0, 0.0, 1.0])]:
        for t in (np.eye(3) if group.dim == 3 else np.eye(3)[:2]):
            pieces = []
            for a in range(2):
                v = np.cross(w, X[a]) + t
                pieces.append(v[:group.dim])
                if group.ndn > group.dim:
                    pieces.append(w if group.dim == 3 else w[2:])
            r = np.concatenate(pieces)
            assert np.abs(K @ r).max() <= 1e-12 * np.abs(K).max() * np.abs(r).max()


def test_energy_and_forces_are_objective(group):
    """A superimposed rigid rotation keeps the energy and rotates the forces."""
    if group.formulation == "linear":
        pytest.skip("small-displacement elements are not objective")
    st = random_state(group, rng)
    axis = rng.normal(size=3) if group.dim == 3 else np.array([0.0, 0.0, 1.0])
    Q = so3.expm(1.3 * axis / np.linalg.norm(axis))
    moved = st.copy()
    x = group.X[0] + st.u
    moved.u[:] = x @ Q.T - group.X[0]
    if group.dim == 2:
        moved.rot += np.arctan2(Q[1, 0], Q[0, 0])
    else:
        moved.rot[:] = so3.quat_mul(so3.matrix_to_quat(np.broadcast_to(Q, (2, 3, 3))), st.rot)
    assert np.isclose(group.energy(moved)[0], group.energy(st)[0], rtol=1e-11)
    f, fm = group.internal_force(st)[0], group.internal_force(moved)[0]
    blocks = len(f) // group.dim if group.dim == 3 else None
    if group.dim == 3:
        rotated = (f.reshape(blocks, 3) @ Q.T).ravel()
    else:
        ndn = group.ndn
        rotated = f.copy().reshape(2, ndn)
        rotated[:, :2] = rotated[:, :2] @ Q[:2, :2].T
        rotated = rotated.ravel()
    assert np.allclose(fm, rotated, atol=1e-10 * np.abs(f).max())


def test_symmetric_tangent_at_reference_and_for_trusses(group):
    st = random_state(group, rng)
    if group.type_name == "beam" and group.dim == 3:
        st = rigid_state(group, np.eye(3), np.zeros(3))   # spins make K non-symmetric elsewhere
    K = group.tangent(st)[0]
    assert np.allclose(K, K.T, atol=1e-12 * np.abs(K).max())


def test_small_displacements_match_the_linear_element(group):
    """Co-rotational and linear formulations agree to first order about the reference."""
    if group.formulation == "linear":
        pytest.skip("this is the linear element")
    import copy

    lin = copy.copy(group)
    kwargs = {}
    from fem.elements import Beam, Truss

    if isinstance(group, Truss):
        lin = Truss("t", group.conn, group.X[0], group.dim, EA=group.EA, rhoA=group.rhoA,
                    formulation="linear")
    else:
        p = group.props
        lin = Beam("b", group.conn, group.X[0], group.dim, formulation="linear",
                   theory=group.theory, ref=group.E0[0][:, 1] if group.dim == 3 else None,
                   **{k: p[k] for k in ("E", "G", "A", "Iy", "Iz", "J", "Ay", "Az", "rho")},
                   **kwargs)
    base = rigid_state(group, np.eye(3), np.zeros(3))
    assert np.allclose(group.tangent(base), lin.tangent(base), atol=1e-12 * characteristic(group))
    for eps in (1e-4, 1e-5):
        st = random_state(group, np.random.default_rng(7), scale=eps, rot_scale=eps)
        diff = np.abs(group.internal_force(st) - lin.internal_force(st)).max()
        assert diff <= 50 * eps**2 * characteristic(group)


def test_mass_gives_rigid_body_kinetic_energy(group):
    """Translation v: T = m v^2 / 2 for consistent and lumped mass."""
    v = np.array([0.3, -1.2, 0.7])[:group.dim]
    st = rigid_state(group, np.eye(3), np.zeros(3))
    rhoA = group.rhoA if hasattr(group, "rhoA") else group.props["rho"] * group.props["A"]
    m = float(rhoA[0] * group.l0[0])
    for lumped in (False, True):
        M = group.mass(st, lumped=lumped)[0]
        w = np.concatenate([np.concatenate([v, np.zeros(group.ndn - group.dim)])] * 2)
        assert np.isclose(0.5 * w @ M @ w, 0.5 * m * v @ v, rtol=1e-13)
