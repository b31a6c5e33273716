"""Invariants every element group must satisfy (STYLE.md, "Lint and tests", checks 1-5).

Over one-element groups of every family (``conftest.FAMILIES``: trusses, beams, shells, grounded
springs, rigid bodies, superelements), each with ``FEM_JIT=0``; the groups whose evaluation has
a compiled pair (co-rotational beams and shells, :data:`fem.kernels.PAIRS`) once more with the
compiled path forced on (``-compiled``: the dispatch threshold lowered to one element), so the
invariants hold the kernels too. Each (test, group) draws its random states from its own
generator, so both paths see the same states.

Where an invariant does not apply, the test says why: small-displacement (linear) groups are
neither invariant under finite rotations nor objective; a grounded spring ties its node to the
fixed ground, so no motion of the node is rigid; springs are massless; a rigid body has no
stiffness to compare with a linear element; only groups with a frame (beams, co-rotational
shells) have ``B`` and its derivatives; groups without the ``geometric_stiffness`` capability
(superelements) have no material/geometric split.
"""

import zlib

import numpy as np
import pytest
from conftest import (
    CATALOGUE,
    FAMILIES,
    fd_tangent,
    n_internal,
    perturbed,
    random_state,
    rigid_state,
    small_displacement,
)

from fem import kernels
from fem import rotations as so3

PARAMS = [(i, f, False) for i, f, _ in FAMILIES] + [(i, f, True) for i, f, c in FAMILIES if c]


@pytest.fixture(params=PARAMS, ids=[i + ("-compiled" if c else "") for i, _, c in PARAMS])
def group(request, monkeypatch):
    """The group, evaluated in numpy (``FEM_JIT=0``) or, ``-compiled``, by its kernel."""
    _, make, compiled = request.param
    if compiled:
        pytest.importorskip("numba")
        monkeypatch.delenv("FEM_JIT", raising=False)
        monkeypatch.setattr(kernels, "MIN_ELEMENTS", 1)
    else:
        monkeypatch.setenv("FEM_JIT", "0")
    g = make()
    if hasattr(g, "_compiled"):
        assert g._compiled() == compiled             # the path this variant asks for
    return g


@pytest.fixture
def rng(request):
    """A generator of the test and the group's family (the same for both paths)."""
    family = request.node.callspec.id.removesuffix("-compiled")
    return np.random.default_rng(zlib.crc32(f"{request.node.originalname}[{family}]".encode()))


def length(g) -> float:
    """The element's length (trusses, beams), else its size (at least 1: one-node groups)."""
    if g.type_name in ("truss", "beam"):
        return float(g.l0.max())
    return float(max(np.linalg.norm(g.X[0] - g.X[0, :1], axis=1).max(), 1.0))


def characteristic(g):
    """A force scale of the element: EA times a length (trusses, beams), else the largest
    stiffness at the reference times the square of the element's size."""
    if g.type_name in ("truss", "beam"):
        ea = g.EA if hasattr(g, "EA") else g.props["E"] * g.props["A"]
        return float(np.max(ea) * g.l0.max())
    K = g.tangent(rigid_state(g, np.eye(3), np.zeros(3)))
    return float(np.abs(K).max() * length(g) ** 2)


def has_frame(g) -> bool:
    return getattr(g, "frame", None) is not None and not g.frame.linear


def grounded(g) -> bool:
    return g.type_name == "spring"


def test_tangent_matches_finite_differences(group, rng):
    for _ in range(3):
        st = random_state(group, rng)
        K = group.tangent(st)[0]
        Kfd = fd_tangent(group, st)
        assert np.abs(K - Kfd).max() <= 1e-6 * np.abs(Kfd).max()


def test_frame_derivative_of_B_times_a_vector(group, rng):
    """``frame.bw_derivative(kin, w)`` is d(B w)/dd at fixed ``w`` (a central difference along
    spins and translations), and the transpose partner of the geometric stiffness:
    ``q . d(B w) == w . geometric(q)`` (both are contractions of one third-order tensor)."""
    if not has_frame(group):
        pytest.skip("B is constant (linear) or there is no frame (trusses, springs, bodies, "
                    "superelements)")
    h = 1e-6
    for _ in range(3):
        st = random_state(group, rng)
        kin = group._kinematics(st)
        w = rng.normal(size=(1, group.nd))
        q = rng.normal(size=(1, kin.B.shape[1]))
        J = group.frame.bw_derivative(kin, w)[0]
        fd = np.column_stack([
            (group._kinematics(perturbed(group, st, j, h)).B[0] @ w[0]
             - group._kinematics(perturbed(group, st, j, -h)).B[0] @ w[0]) / (2 * h)
            for j in range(group.nd)])
        assert np.abs(J - fd).max() <= 1e-6 * np.abs(fd).max()
        left = group.frame.geometric(kin, q)[0]
        assert np.allclose(q[0] @ J, w[0] @ left, rtol=0, atol=1e-12 * np.abs(left).max()
                           * np.abs(w).max() * 12)


def test_tangent_splits_into_material_and_geometric(group, rng):
    if small_displacement(group) or getattr(getattr(group, "frame", None), "linear", False):
        pytest.skip("a linear element's tangent is its material stiffness")
    if "geometric_stiffness" not in group.capabilities:
        pytest.skip("no material/geometric split declared (co-rotational superelements)")
    st = random_state(group, rng)
    K = group.material_tangent(st) + group.geometric_stiffness(st, group.stress(st))
    assert np.allclose(K, group.tangent(st), rtol=0, atol=1e-10 * np.abs(K).max())


def test_one_evaluation_gives_the_force_and_the_tangent_of_the_separate_routines(group, rng):
    """``evaluate`` (what Newton calls: kinematics once) returns the same numbers as the stress
    path (``B^T q`` from ``stress``'s generalized stresses is not shared code for beams: the
    section forces' ``q`` and the split tangent below are computed separately)."""
    for _ in range(3):
        st = random_state(group, rng)
        f, K = group.evaluate(st)
        f_only, none = group.evaluate(st, tangent=False)
        assert none is None
        np.testing.assert_array_equal(f, f_only)
        np.testing.assert_array_equal(f, group.internal_force(st))
        if small_displacement(group) or getattr(getattr(group, "frame", None), "linear", False):
            split = group.material_tangent(st)
        elif "geometric_stiffness" not in group.capabilities:
            split = group.tangent(st)
        else:
            split = group.material_tangent(st) + group.geometric_stiffness(st, group.stress(st))
        np.testing.assert_allclose(K, split, rtol=0, atol=1e-12 * np.abs(K).max())
        fd = fd_tangent(group, st)                    # and the force is the one K linearizes
        assert np.abs(K[0] - fd).max() <= 1e-6 * np.abs(fd).max()


def test_frame_spin_map_contraction_equals_the_full_tensor(group, rng):
    """``g_contract(kin, c) == sum_k c_k dG_k``: the geometric stiffness contracts the change of
    the frame spin map without forming the ``(E, 3, 12, 12)`` tensor."""
    frame = getattr(group, "frame", None)
    if not has_frame(group) or not hasattr(frame, "g_derivative"):
        pytest.skip("only the 3D co-rotational beam frame has the full spin-map tensor")
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
    assert {i for i, _ in CATALOGUE} < {i for i, _, _ in FAMILIES}
    for _, make in [*((i, f) for i, f, _ in FAMILIES), spring]:
        g = make()
        assert g.capabilities <= set(CAPABILITIES)
        assert {"stiffness", "mass"} <= g.capabilities
        assert g.cell_type == ("superelement" if g.type_name == "superelement" else
                               {1: "vertex", 2: "line", 3: "triangle"}[g.nen])
        assert g.n_internal == 0 or "internal_unknowns" in g.capabilities
        # small-displacement groups with rotation DOFs (or a spring's additive DOF value); a
        # planar co-rotational superelement keeps its linear parent's flag (2D rotations add)
        if not (g.type_name == "superelement" and not small_displacement(g)):
            assert g.additive_rotations == (small_displacement(g) and g.type_name != "truss")


def test_rigid_motion_gives_no_force_and_no_energy(group, rng):
    if small_displacement(group):
        pytest.skip("small-displacement elements are not invariant under finite rotations")
    scale = characteristic(group)
    for _ in range(5):
        axis = rng.normal(size=3) if group.dim == 3 else np.array([0.0, 0.0, 1.0])
        R = so3.expm(rng.uniform(-3, 3) * axis / np.linalg.norm(axis))
        st = rigid_state(group, R, rng.normal(size=3) * (group.dim == 3 or np.array([1, 1, 0])))
        f = group.internal_force(st)
        assert np.abs(f).max() <= 1e-9 * scale
        assert abs(group.energy(st)[0]) <= 1e-9 * scale * length(group)


def rigid_velocity(g, w, t) -> np.ndarray:
    """The element vector of the infinitesimal rigid motion ``w x X + t`` (spin ``w``); zero
    internal unknowns (a superelement's interior follows its interface rigidly)."""
    slots = ("ux", "uy", "uz", "rx", "ry", "rz")
    pieces = []
    for X in g.X[0]:
        v = dict(zip(slots, np.r_[np.cross(w, X) + t, w], strict=True))
        pieces.append([v[d] for d in g.dof_names])
    return np.r_[np.concatenate(pieces), np.zeros(n_internal(g))]


def test_small_rigid_motion_is_in_the_kernel(group):
    """K r = 0 for an infinitesimal rigid motion r about the reference."""
    if grounded(group):
        pytest.skip("a grounded spring resists every motion of its node")
    st = rigid_state(group, np.eye(3), np.zeros(3))
    K = group.tangent(st)[0]
    for w in np.eye(3) if group.dim == 3 else [np.array([0.0, 0.0, 1.0])]:
        for t in (np.eye(3) if group.dim == 3 else np.eye(3)[:2]):
            r = rigid_velocity(group, w, t)
            assert np.abs(K @ r).max() <= 1e-12 * np.abs(K).max() * np.abs(r).max()


def test_energy_and_forces_are_objective(group, rng):
    """A superimposed rigid rotation keeps the energy and rotates the forces."""
    if small_displacement(group):
        pytest.skip("small-displacement elements are not objective")
    if grounded(group):
        pytest.skip("the ground does not turn with a superimposed rotation")
    st = random_state(group, rng)
    axis = rng.normal(size=3) if group.dim == 3 else np.array([0.0, 0.0, 1.0])
    Q = so3.expm(1.3 * axis / np.linalg.norm(axis))
    moved = st.copy()
    nodes = group.conn[0]
    x = group.X[0] + st.u[nodes]
    moved.u[nodes] = x @ Q.T - group.X[0]
    if group.dim == 2:
        moved.rot += np.arctan2(Q[1, 0], Q[0, 0])
    else:
        moved.rot[:] = so3.quat_mul(so3.matrix_to_quat(np.broadcast_to(Q, (st.n_nodes, 3, 3))),
                                    st.rot)
    assert np.isclose(group.energy(moved)[0], group.energy(st)[0], rtol=1e-11)
    f, fm = group.internal_force(st)[0], group.internal_force(moved)[0]
    rotated = f.copy()                             # internal unknowns do not turn
    nodal = rotated[:group.nd].reshape(group.nen, group.ndn)
    if group.dim == 3:
        nodal[:] = (nodal.reshape(-1, 3) @ Q.T).reshape(nodal.shape)   # forces and moments
    else:
        nodal[:, :2] = nodal[:, :2] @ Q[:2, :2].T
    assert np.allclose(fm, rotated, atol=1e-10 * np.abs(f).max())


def test_symmetric_tangent_at_reference_and_for_trusses(group, rng):
    st = random_state(group, rng)
    spins = group.dim == 3 and not group.additive_rotations and "rx" in group.dof_names
    if spins:
        st = rigid_state(group, np.eye(3), np.zeros(3))   # spins make K non-symmetric elsewhere
    K = group.tangent(st)[0]
    assert np.allclose(K, K.T, atol=1e-12 * np.abs(K).max())


def linear_twin(g):
    """The small-displacement element of co-rotational group ``g``."""
    from fem.elements import Beam, Shell, Superelement, Truss

    if isinstance(g, Truss):
        return Truss("t", g.conn, g.X[0], g.dim, EA=g.EA, rhoA=g.rhoA, formulation="linear")
    if isinstance(g, Beam):
        p = g.props
        return Beam("b", g.conn, g.X[0], g.dim, formulation="linear", theory=g.theory,
                    ref=g.E0[0][:, 1] if g.dim == 3 else None,
                    **{k: p[k] for k in ("E", "G", "A", "Iy", "Iz", "J", "Ay", "Az", "rho")})
    if isinstance(g, Shell):
        p = g.props
        return Shell("s", g.conn, g.X[0], g.dim, **{k: p[k] for k in ("E", "nu", "h", "rho")})
    return Superelement("c", g.conn[0], g.X[0], g.dim, g.data)


def test_small_displacements_match_the_linear_element(group):
    """Co-rotational and linear formulations agree to first order about the reference."""
    if small_displacement(group):
        pytest.skip("this is the linear element")
    if group.type_name == "rigid":
        pytest.skip("a rigid body has no stiffness: there is no linear element to compare")
    lin = linear_twin(group)
    scale = characteristic(group)
    base = rigid_state(group, np.eye(3), np.zeros(3))
    assert np.allclose(group.tangent(base), lin.tangent(base), atol=1e-12 * scale)
    for eps in (1e-4, 1e-5):
        st = random_state(group, np.random.default_rng(7), scale=eps, rot_scale=eps)
        diff = np.abs(group.internal_force(st) - lin.internal_force(st)).max()
        assert diff <= 50 * eps**2 * scale


def total_mass(g) -> float:
    """The element's mass, from its data (not from its mass matrix)."""
    if g.type_name in ("truss", "beam"):
        rhoA = g.rhoA if hasattr(g, "rhoA") else g.props["rho"] * g.props["A"]
        return float(rhoA[0] * g.l0[0])
    if g.type_name == "shell":
        a, b = g.X[0, 1] - g.X[0, 0], g.X[0, 2] - g.X[0, 0]
        return float(g.props["rho"][0] * g.props["h"][0] * np.linalg.norm(np.cross(a, b)) / 2)
    if g.type_name == "rigid":
        return float(g.m[0])
    d = g.data                                      # the component's lumped translations
    return float(d.component_mass[d.component_dofs[:, 1] == 0].sum())


def test_mass_gives_rigid_body_kinetic_energy(group):
    """Translation v: T = m v^2 / 2 for consistent and lumped mass."""
    if grounded(group):
        pytest.skip("springs are massless")
    v = np.array([0.3, -1.2, 0.7])
    st = rigid_state(group, np.eye(3), np.zeros(3))
    m = total_mass(group)
    w = rigid_velocity(group, np.zeros(3), v)
    for lumped in (False, True):
        M = group.mass(st, lumped=lumped)[0]
        assert np.isclose(0.5 * w @ M @ w, 0.5 * m * v[:group.dim] @ v[:group.dim], rtol=1e-13)
