"""Planar co-rotational superelements (issue 13 item 3): ``formulation = "corotational"``.

A free 2D beam (length 1, 8 elements, lumped inertia) reduced by Craig-Bampton with its two ends
as the interface, placed in a model by a translation and used as a superelement on a floating
frame. Checked against invariants (rigid motions, exact work identities, conservation laws),
central differences, the linear superelement at small displacements, the full co-rotational
beam model of the same mesh, and (geometric stiffening by the mean axial strain, on by default)
the classical buckling load and beam-column.
"""

import copy

import h5py
import numpy as np
import pytest
import scipy.linalg as sla
from helpers import solve

from fem.elements.superelement.corot import CorotSuperelement, rotation
from fem.elements.superelement.corot3d import CorotSuperelement3D
from fem.errors import DeckError
from fem.inertia import inertia_groups
from fem.io.deck import from_dict
from fem.run import make_step
from fem.system import System

N = 8                        # beam elements of the component
EI, EA, RHO_A, RHO_I = 0.2, 1000.0, 1.0, 1e-3


def component(file, modes=4, **step):
    """The free beam 1-2 along x, reduced to ``file``."""
    return {"model": {"dim": 2},
            "materials": [{"name": "m", "E": EA, "G": 400.0}],
            "sections": [{"name": "s", "A": 1.0, "Iz": EI / EA, "mass_per_length": RHO_A,
                          "rotary_inertia_per_length": RHO_I}],
            "nodes": {"ids": [1, 2], "coordinates": [[0.0, 0.0], [1.0, 0.0]]},
            "elements": [{"name": "bar", "type": "beam", "material": "m", "section": "s",
                          "formulation": "corotational", "connectivity": [[1, 2]],
                          "divisions": N}],
            "steps": [{"name": "reduce", "type": "cms_reduce", "interface": [1, 2],
                       "file": file, "modes": modes, **step}]}


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """``bar.h5`` (4 modes), ``bar_all.h5`` (all 21 fixed-interface modes: exact reduction),
    ``bar_consistent.h5`` (consistent mass), ``bar_v1.h5`` (a version-1 file)."""
    base = tmp_path_factory.mktemp("corot")
    solve(component("bar.h5"), base / "bar_reduce.h5", base_dir=str(base))
    solve(component("bar_all.h5", modes=3 * (N - 1)), base / "bar_all_reduce.h5",
          base_dir=str(base))
    solve(component("bar_consistent.h5", mass="consistent"), base / "bar_consistent_reduce.h5",
          base_dir=str(base))
    import shutil

    shutil.copy(base / "bar.h5", base / "bar_v1.h5")
    with h5py.File(base / "bar_v1.h5", "a") as f:
        f.attrs["version"] = 1
        del f["component/mass"]
    return base


def model(files, file="bar.h5", formulation="corotational", shift=(0.3, 0.2), steps=None,
          **keys):
    """A model of the superelement alone, placed at ``shift``: (deck, system, group)."""
    d = component(file)
    d["nodes"]["coordinates"] = [[shift[0], shift[1]], [1.0 + shift[0], shift[1]]]
    d["elements"] = [{"name": "se", "type": "superelement", "file": file,
                      "formulation": formulation, **keys}]
    d["steps"] = steps or [{"name": "s", "type": "static"}]
    dk = from_dict(d, base_dir=str(files))
    return dk, System(dk.model), dk.model.group("se")


def with_vector(g, state, e):
    """A copy of ``state`` whose element vector is ``e`` (nodes ux, uy, rz; then eta)."""
    out = state.copy()
    nodes = g.conn[0]
    out.u[nodes, :2] = e[g.tx]
    out.rot[nodes] = e[g.tr]
    out.internal[g.internal_start:g.internal_start + g.n_internal] = e[g.ie]
    return out


def moved(g, state, angle, shift):
    """``state`` after a rigid motion: turned by ``angle`` about the origin, then shifted."""
    X = g.X[0, :, :2]
    e = g.vector(state).copy()
    x = X + e[g.tx]
    e[g.tx] = x @ rotation(angle).T + shift - X
    e[g.tr] += angle
    return with_vector(g, state, e)


def deformed(g, state, rng, scale=0.05):
    e = g.vector(state).copy()
    e[:g.nd] += rng.normal(size=g.nd) * scale
    e[g.ie] += rng.normal(size=g.n_internal) * scale * 0.2
    return with_vector(g, state, e)


def central_jacobian(fun, e, eps=1e-6):
    return np.column_stack([(fun(e + eps * c) - fun(e - eps * c)) / (2 * eps)
                            for c in np.eye(len(e))])


# --- element kinematics --------------------------------------------------------------------------
def test_file_keeps_the_lumped_diagonal_mass(files):
    """Version 2 file with ``/component/mass``: the component's lumped masses (rho A L per node,
    half at the ends; they sum to the beam's mass 1) and none with the consistent mass."""
    with h5py.File(files / "bar.h5") as f:
        assert f.attrs["version"] == 2
        m = f["component/mass"][()]
        slots = f["component/dofs"][()][:, 1]
    assert m[slots == 0].sum() == pytest.approx(RHO_A * 1.0, rel=1e-12)
    assert m[slots == 1].sum() == pytest.approx(RHO_A * 1.0, rel=1e-12)
    with h5py.File(files / "bar_consistent.h5") as f:
        assert "component/mass" not in f


def test_rigid_motion_gives_zero_force_and_energy(files):
    """Translated and turned by 1 rad (and a deformed state moved so): zero force and energy
    to round-off (measured 1.7e-14 of a unit stiffness force), and the deformed state's
    energy unchanged, its force rotated (objectivity)."""
    _, sysm, g = model(files)
    s = sysm.reference_state()
    r = moved(g, s, 1.0, np.array([0.4, -0.7]))
    scale = np.abs(g.Ke).max()
    assert np.abs(g.internal_force(r)).max() < 1e-12 * scale
    assert abs(g.energy(r)[0]) < 1e-24 * scale
    d = deformed(g, s, np.random.default_rng(1))
    dr = moved(g, d, 1.0, np.array([0.4, -0.7]))
    assert g.energy(dr)[0] == pytest.approx(g.energy(d)[0], rel=1e-12)
    f, fr = g.internal_force(d)[0], g.internal_force(dr)[0]
    R = rotation(1.0)
    expect = fr.copy()
    expect[g.tx] = f[g.tx] @ R.T
    assert np.abs(fr - expect).max() < 1e-11 * np.abs(f).max()


def test_tangent_equals_central_differences_and_force_is_the_energy_gradient(files):
    """At a deformed, rotated state (0.7 rad): the exact tangent equals central differences
    of the force to 1e-6 (measured ~2e-12), the force central differences of the energy."""
    _, sysm, g = model(files)
    s = moved(g, deformed(g, sysm.reference_state(), np.random.default_rng(2)), 0.7,
              np.array([0.1, 0.3]))
    e = g.vector(s)
    force = lambda x: g.internal_force(with_vector(g, s, x))[0]        # noqa: E731
    energy = lambda x: np.array([g.energy(with_vector(g, s, x))[0]])   # noqa: E731
    K = g.tangent(s)[0]
    assert np.abs(K - central_jacobian(force, e)).max() < 1e-6 * np.abs(K).max()
    f = force(e)
    assert np.abs(f - central_jacobian(energy, e)[0]).max() < 1e-6 * np.abs(f).max()
    # the material part alone is not the tangent: the geometric part matters here
    assert np.abs(g.material_tangent(s)[0] - K).max() > 1e-4 * np.abs(K).max()


def test_small_displacements_agree_with_the_linear_superelement(files):
    """Displacements of size u about the reference: the force differs from the linear
    superelement's ``K q`` by O(u^2) (ratio of the differences at u and u/10 about 100) and
    the tangent at the reference is ``K``."""
    _, sysm, g = model(files)
    _, _, lin = model(files, formulation="linear")
    s0 = sysm.reference_state()
    np.testing.assert_allclose(g.tangent(s0)[0], lin.tangent(s0)[0], rtol=0,
                               atol=1e-12 * np.abs(lin.Ke).max())
    rng = np.random.default_rng(3)
    direction = rng.normal(size=g.nde)
    diffs = []
    for u in (1e-3, 1e-4):
        s = with_vector(g, s0, u * direction)
        diffs.append(np.abs(g.internal_force(s) - lin.internal_force(s)).max())
    assert 70 < diffs[0] / diffs[1] < 130


def test_energy_conserving_force_does_the_exact_work_on_large_steps(files):
    """Steps of 0.5 rad of frame rotation plus stretch and bending: ``f . dq = U1 - U0`` to
    1e-12 of the energy (measured ~1e-15), in both directions."""
    _, sysm, g = model(files)
    rng = np.random.default_rng(4)
    s0 = moved(g, deformed(g, sysm.reference_state(), rng), 0.3, np.array([0.0, 0.1]))
    for k in range(4):
        s1 = moved(g, deformed(g, s0, rng, 0.08), 0.5 * (-1) ** k, rng.normal(size=2))
        f, _, U1, _ = g.conserving(s0, s1, None, None, {})
        work = f[0] @ (g.vector(s1) - g.vector(s0))
        dU = U1[0] - g.energy(s0)[0]
        assert abs(work - dU) < 1e-12 * max(U1[0], g.energy(s0)[0])
        assert abs(dU) > 1e-3 * U1[0]                         # a real change of energy


def test_energy_conserving_tangent_approximates_its_derivative(files):
    """The Newton tangent of the energy-conserving force against central differences with
    respect to ``q1``: close (within 5 % on a 0.1 rad step; it leaves out the change of the
    discrete gradient's mid-point terms), and converging to it as the step shrinks."""
    _, sysm, g = model(files)
    rng = np.random.default_rng(5)
    s0 = deformed(g, sysm.reference_state(), rng)
    errors = []
    for angle in (0.1, 0.01):
        s1 = moved(g, deformed(g, s0, rng, angle / 5), angle, np.zeros(2))
        e1 = g.vector(s1)
        K = g.conserving(s0, s1, None, None, {})[1][0]
        fd = central_jacobian(
            lambda x: g.conserving(s0, with_vector(g, s1, x), None, None, {})[0][0], e1)
        errors.append(np.abs(K - fd).max() / np.abs(fd).max())
    assert errors[0] < 5e-2 and errors[1] < 0.2 * errors[0]


# --- geometric stiffening by the mean axial strain -----------------------------------------------
def full_beams(files):
    """The component's own deck as a model of co-rotational beams: (model, system)."""
    d = component("unused.h5")
    d["steps"] = [{"name": "s", "type": "static"}]
    fk = from_dict(d, base_dir=str(files))
    return fk.model, System(fk.model)


def test_chord_stiffening_is_the_geometric_stiffness_of_a_unit_tension(files):
    """The file's ``G`` is ``T^T K_G(N = 1) T``, the beams' geometric stiffness at a unit axial
    force in every element (the static solve of the unit chord tension gives N = 1 along the
    straight rod) to 1e-12 (measured 8e-16); the reduced pinned-pinned rod buckles at
    ``pi^2 EI / L^2`` within 1e-3 (measured +4.0e-5: the CMS and mesh error)."""
    _, _, g = model(files)
    assert g.stiffening and g.data.stiffening is not None
    fm, fs = full_beams(files)
    beams = fm.groups[0]
    unit = np.zeros((len(beams), len(beams.stress_names)))
    unit[:, beams.stress_names.index("N")] = 1.0
    KG = fs.assembler.to_scipy(fs.geometric_stiffness(fs.reference_state(), [unit])).toarray()
    T, G = g.data.T, g.data.stiffening
    assert np.abs(T.T @ KG @ T - G).max() < 1e-12 * np.abs(G).max()
    keep = g.data.boundary_slot[:, None] != np.array([0, 1])       # the ends' translations held
    keep = np.concatenate([keep.all(axis=1), np.ones(g.n_internal, bool)])
    K = g.data.K[np.ix_(keep, keep)]
    load = sla.eigh(K, G[np.ix_(keep, keep)], eigvals_only=True)[0]
    assert abs(load / (np.pi**2 * EI) - 1) < 1e-3


def test_stiffened_energy_gradient_hessian_and_work(files):
    """At large local coordinates (stiffening a quarter of the energy or more): the gradient
    and Hessian of ``U(q_l)`` equal central differences (1e-6); a bent rod whose chord
    shortens by the bending's second-order shortening (``e = -q^T G q / 2``) carries no axial
    force (its energy is the linear one at ``e = 0``, to 1e-12); the energy-conserving force
    does the exact work on large steps (1e-12, measured ~1e-15)."""
    _, sysm, g = model(files)
    _, _, off = model(files, geometric_stiffening=False)
    assert not off.stiffening and not np.any(off.Ge)
    rng = np.random.default_rng(11)
    ql = g.local_frame(g.vector(deformed(g, sysm.reference_state(), rng, 0.2))).ql
    U, U0 = g.local_energy(ql), off.local_energy(ql)
    assert abs(U - U0) > 0.25 * U0
    grad = g.local_gradient(ql)
    fd = central_jacobian(lambda x: np.array([g.local_energy(x)]), ql)[0]
    assert np.abs(grad - fd).max() < 1e-6 * np.abs(grad).max()
    H = g.local_hessian(ql)
    assert np.abs(H - central_jacobian(g.local_gradient, ql)).max() < 1e-6 * np.abs(H).max()
    e = float(g.nb @ ql)
    bent = ql - e * g.nb
    short = bent - 0.5 * float(bent @ g.Ge @ bent) * g.nb
    assert abs(g.local_energy(short) - off.local_energy(bent)) < 1e-12 * off.local_energy(bent)
    assert abs(g.nb @ g.local_gradient(short)) < 1e-9 * np.abs(g.local_gradient(short)).max()
    s0 = moved(g, deformed(g, sysm.reference_state(), rng, 0.2), 0.3, np.zeros(2))
    for k in range(4):
        s1 = moved(g, deformed(g, s0, rng, 0.2), 0.5 * (-1) ** k, rng.normal(size=2))
        f, _, U1, _ = g.conserving(s0, s1, None, None, {})
        dU = U1[0] - g.energy(s0)[0]
        assert abs(f[0] @ (g.vector(s1) - g.vector(s0)) - dU) < 1e-12 * max(U1[0],
                                                                           g.energy(s0)[0])
        assert abs(dU) > 1e-3 * U1[0]
        s0 = s1


M_END = 2e-3                 # end moments of the beam-column (end rotations 5e-3 unloaded)


def column(files, P, file=None, **keys):
    """The rod pinned at 1, on a roller at 2, bent by opposite end moments and pulled by ``P``
    at 2 (geometrically nonlinear static step): the end rotations ``(2,)``. ``file``: the
    superelement, else the full co-rotational beams."""
    d = component("unused.h5")
    if file is not None:
        d["elements"] = [{"name": "se", "type": "superelement", "file": file,
                          "formulation": "corotational", **keys}]
    d["supports"] = [{"nodes": 1, "fixed": ["ux", "uy"]}, {"nodes": 2, "fixed": ["uy"]}]
    d["loads"] = [{"name": "a", "nodes": 1, "moment": -M_END},
                  {"name": "b", "nodes": 2, "moment": M_END, "force": [P, 0.0]}]
    d["steps"] = [{"name": "s", "type": "static", "nonlinear": True, "tolerance": 1e-12}]
    dk, _, st, _ = solve(d, base_dir=str(files))
    return st.rot[np.searchsorted(dk.model.node_ids, [1, 2])]


@pytest.mark.parametrize("P", [1.0, -1.0])
def test_beam_column_end_rotations_under_tension_and_compression(files, P):
    """End moments M and an axial force P (+-0.51 of the buckling load): the end rotations of
    the classical beam-column, ``M L / (2 EI)`` times ``tanh(u)/u`` (tension) or ``tan(u)/u``
    (compression), ``u = L sqrt(|P|/EI) / 2``: 28 % less and 84 % more than unloaded. The
    superelement (4 modes) within 2e-4 (measured 2.9e-5, 3.5e-5; the full beams of the same
    mesh 2.6e-4, 9.3e-4); without stiffening it misses the axial force's effect entirely."""
    u = np.sqrt(abs(P) / EI) / 2
    expect = M_END / (2 * EI) * (np.tanh(u) if P > 0 else np.tan(u)) / u
    rot = column(files, P, "bar.h5")
    assert rot[1] == pytest.approx(-rot[0], rel=1e-9)
    assert abs(rot[1] / expect - 1) < 2e-4
    assert abs(column(files, P, "bar.h5", geometric_stiffening=False)[1] / expect - 1) > 0.25


def test_stiffening_needs_a_file_with_it(files, tmp_path):
    """A component with three interface nodes has no chord stiffening in its file:
    ``geometric_stiffening`` then defaults to off, and true is a DeckError naming the key;
    true on a linear superelement too."""
    d = component("three.h5")
    d["steps"][0]["interface"] = [1, 2, 5]
    solve(d, tmp_path / "three_reduce.h5", base_dir=str(tmp_path))
    with h5py.File(tmp_path / "three.h5") as f:
        assert "reduced/stiffening" not in f and "reduced/cubic" not in f
    with h5py.File(files / "bar.h5") as f:
        assert f["reduced/stiffening"].shape == f["reduced/K"].shape
    d["elements"] = [{"name": "se", "type": "superelement", "file": "three.h5",
                      "formulation": "corotational", "nodes": [1, 2, 5]}]
    d["steps"] = [{"name": "s", "type": "static"}]
    d["nodes"] = {"ids": [1, 2, 5], "coordinates": [[0.0, 0.0], [1.0, 0.0], [0.375, 0.0]]}
    g = from_dict(copy.deepcopy(d), base_dir=str(tmp_path)).model.group("se")
    assert not g.stiffening and not np.any(g.Ge)
    d["elements"][0]["geometric_stiffening"] = True
    with pytest.raises(DeckError) as err:
        from_dict(copy.deepcopy(d), base_dir=str(tmp_path))
    assert err.value.key == "elements[0].geometric_stiffening"
    assert "two interface nodes" in err.value.message
    with pytest.raises(DeckError) as err:
        model(files, formulation="linear", geometric_stiffening=True)
    assert err.value.key == "elements[0].geometric_stiffening"


# --- inertia -------------------------------------------------------------------------------------
def inertia(sysm, g):
    return next(x for x in inertia_groups(sysm).extras if x.group is g)


def test_recovery_and_its_gradients(files):
    """``y(q)``: at the reference its Jacobian is the file's ``T`` in the element layout, so
    ``J_y^T M_d J_y`` is the reduced mass (to 1e-12); at a moved state ``J_y`` equals central
    differences of ``y`` (1e-6), the discrete gradient maps the step exactly (1e-12), and the
    convective acceleration equals the second difference of ``y`` along ``q_dot`` (1e-5)."""
    _, sysm, g = model(files)
    x = inertia(sysm, g)
    s0 = sysm.reference_state()
    M = x.element_mass(s0)[0]
    assert np.abs(M - g.Me[0]).max() < 1e-12 * np.abs(g.Me).max()
    rng = np.random.default_rng(6)
    s = moved(g, deformed(g, s0, rng), 0.8, np.array([0.2, 0.1]))
    e = g.vector(s)
    J = g.recovery_jacobian(e)
    assert np.abs(J - central_jacobian(g.recovered, e)).max() < 1e-6 * np.abs(J).max()
    s1 = moved(g, deformed(g, s, rng, 0.1), -0.5, np.array([0.3, -0.2]))
    e1 = g.vector(s1)
    Gy = g.recovery_gradient(g.local_frame(e), g.local_frame(e1))
    dy = g.recovered(e1) - g.recovered(e)
    assert np.abs(Gy @ (e1 - e) - dy).max() < 1e-12 * np.abs(dy).max()
    v = rng.normal(size=g.nde)
    eps = 1e-4
    second = (g.recovered(e + eps * v) - 2 * g.recovered(e) + g.recovered(e - eps * v)) / eps**2
    acc = g.recovery_acceleration(e, v)
    assert np.abs(acc - second).max() < 1e-5 * np.abs(acc).max()


def test_inertial_force_does_the_exact_work_of_the_kinetic_energy(files):
    """Large steps (0.5 rad and stretch) with the mid-point update of the recovered rates:
    ``f . dq = T1 - T0`` to 1e-12 (measured ~1e-15); its tangent near central differences."""
    _, sysm, g = model(files)
    x = inertia(sysm, g)
    rng = np.random.default_rng(7)
    s0 = deformed(g, sysm.reference_state(), rng)
    s0.v[g.conn[0]] = rng.normal(size=(2, 3))
    h = 0.1
    for k in range(3):
        s1 = moved(g, deformed(g, s0, rng, 0.08), 0.5 * (-1) ** k, rng.normal(size=2) * 0.2)
        f, K = x.midpoint_force(s0, s1, None, h)
        x.update_rates(s0, s1, None, h)            # the integrator's rate update of the end
        T0, T1 = x.kinetic_energy(s0), x.kinetic_energy(s1)
        work = f[0] @ (g.vector(s1) - g.vector(s0))
        assert abs(work - (T1 - T0)) < 1e-12 * max(T0, T1)
        assert abs(T1 - T0) > 1e-3 * T0
        s0 = s1


# --- dynamics: free flight ----------------------------------------------------------------------
SPIN, BEND = 2.0, 0.2            # rad/s: the frame's spin, the ends' extra rotation rates
FREE_STEPS, H = 600, 0.01


def flight(files, file, full=False, spin=SPIN, integrator="energy_conserving",
           steps=FREE_STEPS, **keys):
    """A free flight of 600 steps of 0.01 s (energy-conserving scheme, or ``integrator``): the
    superelement (or, ``full``, the co-rotational beams of the same mesh, lumped inertia)
    started with the superelement's recovered velocities of a spin about (0.8, 0.2) plus
    opposite end rotation rates (a bending velocity). Returns the mid-point's path and the
    energy rows. ``keys``: of the superelement's entry."""
    dyn = {"name": "fly", "type": "dynamic", "integrator": integrator,
           "time_step": H, "duration": H * steps, "tolerance": 1e-12}
    dk, sysm, g = model(files, file, steps=[dyn], **keys)
    s = sysm.reference_state()
    centre = np.array([0.8, 0.2])
    X = g.X[0, :, :2]
    s.v[g.conn[0], :2] = spin * (X - centre) @ np.array([[0.0, 1.0], [-1.0, 0.0]])
    s.v[g.conn[0], 2] = spin + BEND * np.array([1.0, -1.0])
    ydot = g.recovery_jacobian(g.vector(s)) @ np.concatenate(
        [g.element_vector(s.v)[0], np.zeros(g.n_internal)])
    if full:
        d = component(file)
        d["nodes"]["coordinates"] = [[0.3, 0.2], [1.3, 0.2]]
        d["steps"] = [dyn]
        dk = from_dict(d, base_dir=str(files))
        sysm = System(dk.model)
        s = sysm.reference_state()
        ids = g.data.component_ids
        rows = np.searchsorted(dk.model.node_ids, ids)
        assert np.all(dk.model.node_ids[rows] == ids)
        s.v[rows[g.t_nodes], :2] = ydot[g.rows_u]
        s.v[rows[g.r_nodes], 2] = ydot[g.rows_r[g.r_nodes]]
        mid = rows[np.argmin(np.abs(g.Xc[:, 0] - 0.8))]
        where = lambda st: dk.model.X[mid, :2] + st.u[mid, :2]             # noqa: E731
    else:
        j = int(np.argmin(np.abs(g.Xc[g.t_nodes, 0] - 0.8)))
        where = lambda st: g.recovered(g.vector(st))[g.rows_u[j]]          # noqa: E731
    step = make_step(dk.steps[0], sysm, dk, dk.output["every"])
    path = []
    step.on_step = lambda st: path.append(where(st))
    step.run(s, None)
    return np.array(path), step.history


def test_free_flight_conserves_energy_and_linear_momentum(files):
    """150 steps of 0.01 s (0.48 turn at 2 rad/s): total energy constant to 1e-10 relative
    and linear momentum to 1e-10 of its size (measured 6e-13, 4e-12: the Newton tolerance; the
    scheme conserves both exactly at any length, 2.5e-12 and 5.6e-12 over 600 steps), and the
    component bends (strain energy 2e-3 of the total). Angular momentum is not an invariant of
    these discrete gradients (neither the elastic nor the inertial one has zero moment about the
    mid-point positions): it wanders by 1e-7 of its size, bounded by 1e-6. The run was 600 steps;
    the largest strain energy and angular-momentum wander are reached within the first 150
    (measured the same over both: 2.0e-3 and 8.6e-8 with 4 modes, 2.3e-3 and 9.6e-8 with all)."""
    for file in ("bar.h5", "bar_all.h5"):
        rows = flight(files, file, steps=150)[1]
        total = np.array([r["total"] for r in rows])
        assert np.abs(total - total[0]).max() < 1e-10 * total[0]
        p = np.array([r["linear_momentum"] for r in rows])
        assert np.abs(p - p[0]).max() < 1e-10 * np.abs(p[0]).max()
        L = np.array([r["angular_momentum"] for r in rows])[:, 2]
        assert np.abs(L - L[0]).max() < 1e-6 * abs(L[0])
        assert max(r["strain"] for r in rows) > 1e-3 * total[0]


def test_free_flight_follows_the_full_corotational_beams(files):
    """The mid-point's path against the full co-rotational beams of the same mesh, over 3 s
    (300 steps).

    Without spin (a bending flight, deflections about 1 % of the length): with every
    fixed-interface mode kept (an exact reduction; only the non-linearity of the local
    deformation differs) within 1e-5 of the length over 3 s (measured 4.7e-6; 1.0e-5 over 6 s,
    4.4e-6 without stiffening); with 4 modes within 5e-5 (truncation; measured 1.5e-5, 2.8e-5
    over 6 s).

    With a spin, without stiffening, the difference grows as the spin squared (measured 2.0e-4
    at 0.5 rad/s, 8.1e-4 at 1 rad/s over 3 s; 4.2e-4, 1.5e-3 and 4.0e-3 at 2 rad/s over 6 s):
    the centrifugal tension stiffens the beams' bending, a superelement linear in its floating
    frame does not. With the mean-strain stiffening it shrinks 3.0 and 2.8 times (to 6.6e-5,
    2.9e-4; 3.2 and 2.7 times over 6 s, 2.1 times at 2 rad/s), not more: a free spinning rod's
    tension is parabolic, zero at its free ends, and the mean strain gives it uniform at its
    mean, which stiffens the first free-free bending mode 1/0.74 times as much as the parabola
    does (``int N w'^2``); under end loads (the beam-column above, the slider-crank's rod) the
    axial force is uniform and the model is exact. The differences do not shrink with the time
    step (the same at h/4: model differences, not the integrator's).

    The flights were 6 s with the bounds 2e-5, 1e-4 and 1e-3; these differences grow about in
    proportion to the time (all modes: 2.4e-6, 4.7e-6, 1.0e-5 after 1.5, 3 and 6 s), so over
    3 s the bounds are halved (the same margins: measured/bound 0.47, 0.31, 0.40 here against
    0.52, 0.28, 0.42 over 6 s); the spin-squared window and the stiffening ratios are
    properties of the model, not of the length (ratio 4.0 here, 3.5 over 6 s)."""
    kw = {"steps": 300}
    full = flight(files, "bar_all.h5", True, spin=0.0, **kw)[0]
    assert np.abs(flight(files, "bar_all.h5", spin=0.0, **kw)[0] - full).max() < 1e-5
    assert np.abs(flight(files, "bar.h5", spin=0.0, **kw)[0] - full).max() < 5e-5
    fulls = [flight(files, "bar_all.h5", True, spin=w, **kw)[0] for w in (0.5, 1.0)]
    linear = [np.abs(flight(files, "bar_all.h5", spin=w, geometric_stiffening=False, **kw)[0]
                     - f).max() for w, f in zip((0.5, 1.0), fulls, strict=True)]
    assert linear[0] < 5e-4 and 2.5 < linear[1] / linear[0] < 4.5
    stiff = [np.abs(flight(files, "bar_all.h5", spin=w, **kw)[0] - f).max()
             for w, f in zip((0.5, 1.0), fulls, strict=True)]
    assert stiff[0] < linear[0] / 2.5 and stiff[1] < linear[1] / 2.4


@pytest.mark.parametrize("integrator, spin", [("trapezoidal", 0.5),
                                               ("generalized_alpha", 0.0)])
def test_newmark_family_flight_follows_the_full_corotational_beams(files, integrator, spin):
    """Trapezoidal and generalized-alpha take co-rotational superelements (``y_dot = J_y
    q_dot``, ``f = J_y^T M_d (J_y q_ddot + d2y[q_dot, q_dot])``, ``eta``'s rates in
    ``internal_v``, ``internal_a``): 300 steps of 0.01 s against the full co-rotational beams
    of the same mesh with the same integrator. With every mode kept (an exact reduction) the
    mid-point's path agrees as with the energy-conserving scheme above (bending flight within
    2e-5 of the length, measured 1.0e-5; at 0.5 rad/s within 3e-4, measured 1.4e-4 over 600
    steps: the model differences of the mean-strain stiffening). Energy: neither scheme
    conserves it for this non-linear model; the trapezoidal rule's drift stays within 3 times
    the full beams' (measured 1.5 times), generalized-alpha's dissipation (booked in
    ``dissipated``) within 2 % of theirs (measured 0.3 %) in the bending flight."""
    kw = {"spin": spin, "integrator": integrator, "steps": 300}
    full, rows_full = flight(files, "bar_all.h5", True, **kw)
    path, rows = flight(files, "bar_all.h5", **kw)
    assert np.abs(path - full).max() < (3e-4 if spin else 2e-5)
    total = np.array([r["total"] for r in rows])
    total_full = np.array([r["total"] for r in rows_full])
    if integrator == "trapezoidal":
        drift, drift_full = (np.abs(e - e[0]).max() for e in (total, total_full))
        assert drift < 3 * drift_full and drift < 1e-4 * total[0]
    else:
        d, d_full = rows[-1]["dissipated"], rows_full[-1]["dissipated"]
        assert d > 0 and abs(d - d_full) < 2e-2 * d_full
    assert max(r["strain"] for r in rows) > 1e-3 * total[0]


def test_linearize_takes_a_corotational_superelement(files):
    """A linearize step about the free component at rest: the co-rotational superelement's
    linearized mass is ``J_y^T M_d J_y`` (the reduced ``M`` at the reference), and with every
    fixed-interface mode kept (an exact reduction) its flexible frequencies are the full
    co-rotational beams' to 1e-8 (measured 3e-14); the rigid motions stay at zero (within the
    sqrt(eps) of a double root). With 4 modes the first two are within 0.1 % of them (the
    reduction's error; measured 3.3e-4)."""
    lin = [{"name": "lin", "type": "linearize", "modes": 6, "method": "dense"}]

    def flexible(dk):
        sysm = System(dk.model)
        state = sysm.reference_state()
        step = make_step(dk.steps[0], sysm, dk, dk.output["every"])
        step.run(state, None)
        w = step.eigen.frequencies
        # the rigid motions: double roots at zero, found within sqrt(eps) of it
        return np.sort(w[w >= 1e-4 * w.max()])

    d = component("bar_all.h5")
    d["steps"] = copy.deepcopy(lin)
    full = flexible(from_dict(d, base_dir=str(files)))
    exact = flexible(model(files, "bar_all.h5", steps=copy.deepcopy(lin))[0])
    assert len(full) == len(exact) == 3
    assert np.abs(exact / full - 1).max() < 1e-8
    four = flexible(model(files, "bar.h5", steps=copy.deepcopy(lin))[0])
    assert np.abs(four[:2] / full[:2] - 1).max() < 1e-3


# --- deck errors ---------------------------------------------------------------------------------
@pytest.mark.parametrize("file, formulation, words", [
    ("bar.h5", "floating", "expected one of"),
    ("bar_consistent.h5", "corotational", "mass = \"lumped\""),
    ("bar_v1.h5", "corotational", "mass = \"lumped\""),
])
def test_bad_corotational_entries_are_deck_errors(files, file, formulation, words):
    with pytest.raises(DeckError) as err:
        model(files, file, formulation)
    assert err.value.key == "elements[0].formulation" and words in err.value.message


def test_gravity_on_a_corotational_superelement_is_refused(files):
    """Gravity reaches linear superelements only so far (issue 33): a deck error at the step."""
    d = component("bar.h5")
    d["elements"] = [{"name": "se", "type": "superelement", "file": "bar.h5",
                      "formulation": "corotational"}]
    d["gravity"] = {"acceleration": [0.0, -9.81]}
    d["steps"] = [{"name": "s", "type": "static"}]
    with pytest.raises(DeckError) as err:
        from_dict(d, base_dir=str(files))
    assert err.value.key == "steps[0].loads" and "co-rotational superelement 'se'" in \
        err.value.message


def test_3d_corotational_superelements_ride_their_first_node(tmp_path):
    """A 3D component makes the spatial co-rotational superelement (issue 33;
    tests/test_superelement_corot3d.py); reduced with the consistent mass it is refused."""
    d = {"model": {"dim": 3},
         "materials": [{"name": "m", "E": 1000.0, "G": 400.0}],
         "sections": [{"name": "s", "A": 1.0, "Iy": 0.01, "Iz": 0.01, "J": 0.02,
                       "mass_per_length": 1.0, "rotary_inertia_per_length": [0.01, 0.01, 0.02]}],
         "nodes": {"ids": [1, 2], "coordinates": [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]]},
         "elements": [{"name": "bar", "type": "beam", "material": "m", "section": "s",
                       "connectivity": [[1, 2]], "divisions": 2,
                       "orientation": [0.0, 1.0, 0.0]}],
         "steps": [{"name": "reduce", "type": "cms_reduce", "interface": [1, 2], "modes": 2,
                    "file": "b3.h5"}]}
    solve(copy.deepcopy(d), tmp_path / "b3_reduce.h5", base_dir=str(tmp_path))
    reduce = copy.deepcopy(d)
    reduce["steps"][0].update(file="b3c.h5", mass="consistent")
    d["elements"] = [{"name": "se", "type": "superelement", "file": "b3.h5",
                      "formulation": "corotational"}]
    d["steps"] = [{"name": "s", "type": "static"}]
    g = from_dict(copy.deepcopy(d), base_dir=str(tmp_path)).model.group("se")
    assert isinstance(g, CorotSuperelement3D) and g.rigid_defect() < 1e-12
    solve(copy.deepcopy(reduce), tmp_path / "b3c_reduce.h5", base_dir=str(tmp_path))
    d["elements"][0]["file"] = "b3c.h5"
    with pytest.raises(DeckError) as err:
        from_dict(d, base_dir=str(tmp_path))
    assert err.value.key == "elements[0].formulation" and "lumped" in err.value.message


def test_a_supported_component_is_refused(tmp_path):
    """A component clamped at one end: K resists rigid motions."""
    d = component("clamped.h5")
    d["nodes"]["ids"] = [1, 2, 3]
    d["nodes"]["coordinates"].append([2.0, 0.0])
    d["elements"][0]["connectivity"] = [[1, 2], [2, 3]]
    d["supports"] = [{"nodes": [3], "fixed": ["all"]}]
    solve(copy.deepcopy(d), tmp_path / "clamped_reduce.h5", base_dir=str(tmp_path))
    d["elements"] = [{"name": "se", "type": "superelement", "file": "clamped.h5",
                      "formulation": "corotational"}]
    d["steps"] = [{"name": "s", "type": "static"}]
    del d["supports"]
    with pytest.raises(DeckError) as err:
        from_dict(d, base_dir=str(tmp_path))
    assert err.value.key == "elements[0].formulation" and "rigid motions" in err.value.message


def test_a_version_1_file_still_makes_a_linear_superelement(files):
    _, _, g = model(files, "bar_v1.h5", "linear")
    assert not isinstance(g, CorotSuperelement) and g.data.component_mass is None
