"""DOF numbering, CSR assembly into PETSc, and the linear element matrices against textbook
forms."""

import numpy as np
import pytest

from fem import linalg
from fem.dofs import DofMap
from fem.elements import Beam, Truss
from fem.model import Model
from fem.state import State
from fem.system import System


def mixed_model():
    """2D: beam 1-2-3, truss 3-4 and 2-4; node 1 clamped, node 4 pinned."""
    X = np.array([[0, 0, 0], [1, 0, 0], [2, 0.5, 0], [1, -1, 0.0]])
    beam = Beam("frame", [[0, 1], [1, 2]], X, 2, E=10.0, G=4.0, A=1.0, Iz=0.1,
                formulation="corotational")
    truss = Truss("bars", [[2, 3], [1, 3]], X, 2, EA=5.0, formulation="corotational")
    fixed = np.zeros((4, 3), dtype=bool)
    fixed[0] = True
    fixed[3, :2] = True
    return Model(dim=2, X=X, node_ids=np.array([10, 20, 30, 40]), groups=(beam, truss),
                 fixed=fixed)


def test_dofmap_numbering():
    dm = DofMap.build(mixed_model())
    # node 4 (truss only) has no rotation; node 1 is clamped; free DOFs are numbered first,
    # node by node, then the fixed ones.
    assert dm.active.tolist() == [[1, 1, 1], [1, 1, 1], [1, 1, 1], [1, 1, 0]]
    assert dm.n_free == 6 and dm.n_active == 11
    assert dm.index.tolist() == [[6, 7, 8], [0, 1, 2], [3, 4, 5], [9, 10, -1]]
    assert dm.element_dofs(np.array([[2, 3]]), ("ux", "uy")).tolist() == [[3, 4, 9, 10]]
    assert dm.describe(4, np.array([10, 20, 30, 40])) == "node 30 uy"
    full = np.arange(11.0)
    assert np.array_equal(dm.from_nodal(dm.to_nodal(full)), full)


def to_dense(A):
    import scipy.sparse as sp

    ai, aj, av = A.getValuesCSR()
    return sp.csr_matrix((av, aj, ai), shape=A.getSize()).toarray()


def dense_reference(model, state, what="tangent"):
    """The 10-line loop-over-elements assembler (STYLE.md): dense, on the full active vector."""
    dm = DofMap.build(model)
    K = np.zeros((dm.n_active, dm.n_active))
    for g in model.groups:
        ke_all = g.tangent(state) if what == "tangent" else g.mass(state)
        for e in range(len(g)):
            idx = dm.element_dofs(g.conn[e:e + 1], g.dof_names)[0]
            K[np.ix_(idx, idx)] += ke_all[e]
    return K[:dm.n_free, :dm.n_free]


@pytest.mark.parametrize("what", ["tangent", "mass"])
def test_petsc_matrix_equals_dense_reference(what):
    model = mixed_model()
    sysm = System(model)
    st = State.reference(2, 4)
    st.u[:, :2] = np.random.default_rng(3).normal(size=(4, 2)) * 0.1
    st.rot[:] = [0.0, 0.2, -0.1, 0.0]
    data = sysm.tangent(st) if what == "tangent" else sysm.mass(st)
    asm = sysm.assembler
    A = linalg.create_matrix(asm.indptr, asm.indices)
    linalg.fill_matrix(A, asm.indptr, asm.indices, data)
    dense = to_dense(A)
    assert np.allclose(dense, dense_reference(model, st, what), rtol=0, atol=1e-14)
    # refilling keeps the pattern; a new nonzero would be an error
    linalg.fill_matrix(A, asm.indptr, asm.indices, 2 * data)
    assert np.allclose(to_dense(A), 2 * dense, atol=1e-14)
    A.destroy()


def test_compiled_gathers_and_row_sums_equal_numpy(monkeypatch):
    """The compiled assembly loops (fem.assembly_kernel) against bincount and scipy."""
    pytest.importorskip("numba")
    import scipy.sparse as sp

    from fem import assembly

    model = mixed_model()
    sysm = System(model)
    asm = sysm.assembler
    rng = np.random.default_rng(5)
    blocks = [rng.normal(size=(len(g), g.nd, g.nd)) for g in model.groups]
    q = rng.normal(size=asm.n_free)
    reference = asm.matrix(blocks)
    absA = sp.csr_matrix((np.abs(reference), asm.indices, asm.indptr),
                         shape=(asm.n_free, asm.n_free))
    fe = [rng.normal(size=(len(g), g.nd)) for g in model.groups]
    vector = asm.vector(fe)
    monkeypatch.setattr(assembly, "MIN_COMPILED", 1)
    # a stable order by target: every entry sums in bincount's order, to the last bit
    assert np.array_equal(asm.matrix(blocks), reference)
    assert np.array_equal(asm.vector(fe), vector)
    assert np.allclose(asm.abs_times(reference, q), absA @ q, rtol=1e-14, atol=0)
    # the clamp's entries were among them, marked by the slot nnz and dropped
    assert np.any(asm.groups[0].slot == asm.nnz)


def test_internal_force_vector_matches_element_loop():
    model = mixed_model()
    sysm = System(model)
    st = State.reference(2, 4)
    st.u[:, :2] = np.random.default_rng(4).normal(size=(4, 2)) * 0.1
    f = sysm.internal_force(st)
    ref = np.zeros(sysm.dofmap.n_active)
    for g in model.groups:
        fe = g.internal_force(st)
        for e in range(len(g)):
            ref[sysm.dofmap.element_dofs(g.conn[e:e + 1], g.dof_names)[0]] += fe[e]
    assert np.allclose(f, ref, atol=1e-14)


def przemieniecki(L, E, G, A, Iy, Iz, J, phi_y=0.0, phi_z=0.0):
    """12x12 local stiffness of a Timoshenko beam along x (Przemieniecki 1968, eq. 5.116)."""
    K = np.zeros((12, 12))
    K[0, 0] = K[6, 6] = E * A / L
    K[0, 6] = K[6, 0] = -E * A / L
    K[3, 3] = K[9, 9] = G * J / L
    K[3, 9] = K[9, 3] = -G * J / L
    for (v, r, I, phi, s) in ((1, 5, Iz, phi_y, 1.0), (2, 4, Iy, phi_z, -1.0)):
        c = E * I / (L**3 * (1 + phi))
        idx = [v, r, 6 + v, 6 + r]
        k = c * np.array([[12, 6 * L * s, -12, 6 * L * s],
                          [6 * L * s, (4 + phi) * L**2, -6 * L * s, (2 - phi) * L**2],
                          [-12, -6 * L * s, 12, -6 * L * s],
                          [6 * L * s, (2 - phi) * L**2, -6 * L * s, (4 + phi) * L**2]])
        K[np.ix_(idx, idx)] = k
    return K


@pytest.mark.parametrize("theory", ["euler-bernoulli", "timoshenko"])
@pytest.mark.parametrize("formulation", ["linear", "corotational"])
def test_beam3d_stiffness_is_the_textbook_matrix(theory, formulation):
    L, E, G, A, Iy, Iz, J, Ay, Az = 2.0, 200.0, 77.0, 3.0, 0.4, 0.7, 0.5, 2.5, 2.4
    X = np.array([[0, 0, 0], [L, 0, 0.0]])
    b = Beam("b", [[0, 1]], X, 3, E=E, G=G, A=A, Iy=Iy, Iz=Iz, J=J, Ay=Ay, Az=Az,
             formulation=formulation, theory=theory, ref=[0, 1, 0])
    shear = theory == "timoshenko"
    ref = przemieniecki(L, E, G, A, Iy, Iz, J,
                        phi_y=12 * E * Iz / (G * Ay * L**2) if shear else 0.0,
                        phi_z=12 * E * Iy / (G * Az * L**2) if shear else 0.0)
    K = b.tangent(State.reference(3, 2))[0]
    assert np.allclose(K, ref, rtol=1e-13, atol=1e-13 * np.abs(ref).max())


def test_beam2d_stiffness_is_the_textbook_matrix():
    L, E, A, I = 3.0, 70.0, 2.0, 0.3
    c, s = np.cos(0.4), np.sin(0.4)
    X = np.array([[0, 0, 0], [L * c, L * s, 0.0]])
    b = Beam("b", [[0, 1]], X, 2, E=E, G=30.0, A=A, Iz=I, formulation="linear")
    k = E * I / L**3
    local = np.array([[E * A / L, 0, 0, -E * A / L, 0, 0],
                      [0, 12 * k, 6 * L * k, 0, -12 * k, 6 * L * k],
                      [0, 6 * L * k, 4 * L**2 * k, 0, -6 * L * k, 2 * L**2 * k],
                      [-E * A / L, 0, 0, E * A / L, 0, 0],
                      [0, -12 * k, -6 * L * k, 0, 12 * k, -6 * L * k],
                      [0, 6 * L * k, 2 * L**2 * k, 0, -6 * L * k, 4 * L**2 * k]])
    T = np.zeros((6, 6))
    for o in (0, 3):
        T[o:o + 2, o:o + 2] = [[c, s], [-s, c]]
        T[o + 2, o + 2] = 1
    assert np.allclose(b.tangent(State.reference(2, 2))[0], T.T @ local @ T, atol=1e-12)


def przemieniecki_geometric(L, N, phi):
    """Geometric stiffness of a Timoshenko beam on (v1, theta1, v2, theta2): Przemieniecki,
    Theory of Matrix Structural Analysis (1968), section 15.3; Euler-Bernoulli at ``phi = 0``."""
    a, b = 6 / 5 + 2 * phi + phi**2, L / 10
    c, d = L**2 * (2 / 15 + phi / 6 + phi**2 / 12), -L**2 * (1 / 30 + phi / 6 + phi**2 / 12)
    return N / (L * (1 + phi) ** 2) * np.array([[a, b, -a, b], [b, c, -b, d],
                                                [-a, -b, a, -b], [b, d, -b, c]])


@pytest.mark.parametrize("theory", ["euler-bernoulli", "timoshenko"])
@pytest.mark.parametrize("formulation", ["linear", "corotational"])
@pytest.mark.parametrize("dim", [2, 3])
def test_beam_geometric_stiffness_is_the_textbook_matrix(dim, theory, formulation):
    """Shear-deformable slopes in the second-order elongation give Przemieniecki's Phi terms."""
    L, E, G, A, Iy, Iz, Ay, Az, N = 2.0, 200.0, 77.0, 3.0, 0.4, 0.7, 0.5, 0.6, -3.7
    b = Beam("b", [[0, 1]], np.array([[0, 0, 0], [L, 0, 0.0]]), dim, E=E, G=G, A=A, Iy=Iy,
             Iz=Iz, J=0.5, Ay=Ay, Az=Az, formulation=formulation, theory=theory, ref=[0, 1, 0])
    shear = theory == "timoshenko"
    stress = np.zeros((1, 3 if dim == 2 else 6))
    stress[0, 0] = N
    KG = b.geometric_stiffness(State.reference(dim, 2), stress)[0]
    planes = [([1, 2, 4, 5], Iz, Ay, 1.0)] if dim == 2 else [([1, 5, 7, 11], Iz, Ay, 1.0),
                                                             ([2, 4, 8, 10], Iy, Az, -1.0)]
    ref = np.zeros_like(KG)
    for idx, I, As, sign in planes:
        phi = 12 * E * I / (G * As * L**2) if shear else 0.0
        flip = np.diag([1.0, sign, 1.0, sign])     # theta_y = -w' in the x-z plane
        ref[np.ix_(idx, idx)] = flip @ przemieniecki_geometric(L, N, phi) @ flip
    assert np.allclose(KG, ref, rtol=1e-13, atol=1e-13 * np.abs(ref).max())


def test_orientation_by_a_third_node_equals_the_vector():
    """A node in the local x-y plane orients 3D beams as the equivalent reference vector does."""
    from fem.io.deck import from_dict

    def deck(**orient):
        return {"model": {"dim": 3}, "materials": [{"name": "m", "E": 1.0, "G": 0.4}],
                "sections": [{"name": "s", "A": 1.0, "Iy": 0.1, "Iz": 0.3, "J": 0.2}],
                "nodes": {"coordinates": [[0, 0, 0], [1, 2, 2], [3, 0, 1]]},
                "elements": [{"name": "b", "type": "beam", "material": "m", "section": "s",
                              "connectivity": [[1, 2]], "divisions": 3, **orient}],
                "supports": [{"nodes": 1, "fixed": ["all"]}],
                "steps": [{"name": "s", "type": "static"}]}
    by_node = from_dict(deck(orientation_node=3)).model.groups[0]
    # the third node's position relative to each element's first node differs along the
    # member, but it lies in the same plane through the axis: the same local axes
    by_vector = from_dict(deck(orientation=[3, 0, 1])).model.groups[0]
    assert np.allclose(by_node.E0, by_vector.E0, atol=1e-14)
    with pytest.raises(Exception, match="lies on the axis"):
        bad = deck(orientation_node=3)
        bad["nodes"]["coordinates"][2] = [2, 4, 4]
        from_dict(bad)


def test_system_mass_includes_the_point_masses():
    """Modal analysis and dynamics use one mass: the elements' plus the [[masses]] table's."""
    from helpers import line_beam

    from fem.io.deck import from_dict

    for dim in (2, 3):
        d = line_beam(dim, 2, A=0.5)                     # length 1, two elements of 0.5
        d["materials"][0]["density"] = 2.0
        d["supports"] = [{"nodes": 1, "fixed": ["all"]}]
        inertia = 0.3 if dim == 2 else [[0.3, 0.01, 0.0], [0.01, 0.4, 0.0], [0.0, 0.0, 0.5]]
        d["masses"] = [{"nodes": 2, "mass": 7.0, "inertia": inertia}]
        d["steps"] = [{"name": "s", "type": "static"}]
        sysm = System(from_dict(d).model)
        M = sysm.assembler.to_scipy(sysm.mass(sysm.reference_state(), lumped=True)).toarray()
        tip = sysm.dofmap.index[1]                       # node 2, the free end
        # half of the tip element's mass (rho A l / 2 = 0.25) plus the point mass
        assert M[tip[0], tip[0]] == pytest.approx(2.0 * 0.5 * 0.5 / 2 + 7.0, rel=1e-14)
        without = System(from_dict({**d, "masses": []}).model)
        M0 = without.assembler.to_scipy(without.mass(without.reference_state(),
                                                     lumped=True)).toarray()
        rot = tip[2:3] if dim == 2 else tip[3:6]
        added = M[np.ix_(rot, rot)] - M0[np.ix_(rot, rot)]
        np.testing.assert_allclose(added, np.atleast_2d(inertia), rtol=1e-14, atol=1e-15)


def test_dynamics_and_modal_analysis_use_one_mass():
    """The lumped mass matrix is the nodal inertia group's (what a dynamic step integrates):
    equal to the element groups' lumped masses plus the point masses assembled independently,
    and its kinetic energy ``v^T M v / 2`` is the inertia group's for any velocities."""
    from helpers import line_beam

    from fem.inertia.nodal import NodalInertia
    from fem.io.deck import from_dict
    from fem.state import State

    for dim in (2, 3):
        d = line_beam(dim, 3, A=0.5)
        d["materials"][0]["density"] = 2.0
        d["supports"] = [{"nodes": 1, "fixed": ["all"]}]
        inertia = 0.3 if dim == 2 else [[0.3, 0.01, 0.0], [0.01, 0.4, 0.0], [0.0, 0.0, 0.5]]
        d["masses"] = [{"nodes": [2, 4], "mass": 7.0, "inertia": inertia}]
        d["steps"] = [{"name": "s", "type": "static"}]
        sysm = System(from_dict(d).model)
        ref = sysm.reference_state()
        M = sysm.assembler.to_scipy(sysm.mass(ref, lumped=True)).toarray()
        elements = sysm.assembler.matrix([g.mass(ref, lumped=True) for g in sysm.model.groups],
                                         NodalInertia.point_masses(sysm))
        np.testing.assert_allclose(M, sysm.assembler.to_scipy(elements).toarray(), rtol=1e-14,
                                   atol=1e-14)
        st = State.reference(dim, sysm.model.n_nodes)
        v = np.random.default_rng(dim).normal(size=(sysm.model.n_nodes, sysm.model.nslots))
        st.v[:, :v.shape[1]] = v
        vf = sysm.dofmap.from_nodal(v)[:sysm.n_free]
        st.v[:, :v.shape[1]] = sysm.dofmap.to_nodal(vf)             # supported nodes at rest
        T = NodalInertia(sysm).kinetic_energy(st)
        assert T == pytest.approx(0.5 * vf @ M @ vf, rel=1e-13)


@pytest.mark.parametrize("inertia", ["lumped", "consistent"])
def test_the_mass_matrix_carries_the_whole_mass_whatever_the_inertia(inertia):
    """A rigid translation of a free beam carries ``rho A L`` in ``System.mass(lumped=True)``,
    with the nodal inertia or the consistent inertia group (whose rho A is not nodal)."""
    from helpers import line_beam

    from fem.io.deck import from_dict

    for dim in (2, 3):
        d = line_beam(dim, 4, A=0.5, length=2.0, inertia=inertia)
        d["materials"][0]["density"] = 3.0
        d["steps"] = [{"name": "s", "type": "static"}]
        sysm = System(from_dict(d).model)
        M = sysm.assembler.to_scipy(sysm.mass(sysm.reference_state(), lumped=True))
        nodal = np.zeros((sysm.model.n_nodes, sysm.model.nslots))
        nodal[:, 1] = 1.0                                # a rigid translation along y
        r = sysm.dofmap.from_nodal(nodal)[:sysm.n_free]
        assert r @ (M @ r) == pytest.approx(3.0 * 0.5 * 2.0, rel=1e-13)
