"""Beam end offsets (:mod:`fem.elements.beam.offsets`): eccentric beams and shell stiffeners.

The element checks (zero offset, rigid motions, finite differences, the compiled kernel, the
mass) are invariants; the structures are checked against closed forms derived here:

* two flanges on rigid links (a sandwich): the parallel-axis theorem, and the exact answer of
  the discrete structure, whose flanges are linked at the nodes only;
* an axial force on the node line of an offset beam: the eccentric moment ``N e``;
* a shell strip with an eccentric stiffener: the composite T-beam (neutral axis, parallel axes);
* an offset cantilever rolled up by an end moment: the tip node on a circle of radius
  ``EI / M + e``.
"""

import numpy as np
import pytest
from conftest import fd_tangent, perturbed, random_state, rigid_state
from helpers import deck_error, line_beam, node, solve
from numpy.polynomial import legendre

from fem import kernels
from fem import rotations as so3
from fem.elements import Beam
from fem.elements.beam import beam3d_jit
from fem.errors import DeckError, ModelError
from fem.state import State

X2 = np.array([[0.3, -0.2, 0.0], [1.4, 0.5, 0.0]])
X3 = np.array([[0.3, -0.2, 0.1], [1.4, 0.5, -0.6]])
CONN = np.array([[0, 1]])
SECTION = dict(E=210.0, G=80.0, A=2.0, Iy=0.05, Iz=0.08, J=0.06, Ay=1.5, Az=1.6, rho=7.8)
KINDS = [(dim, form, theory) for dim in (2, 3) for form in ("linear", "corotational")
         for theory in ("euler-bernoulli", "timoshenko")]
IDS = [f"{d}d-{f}-{t}" for d, f, t in KINDS]
# end offsets of the element checks: different at the two ends, of the order of the length
OFFSETS = np.array([[0.2, -0.35, 0.15], [-0.1, 0.3, 0.25]])


def beam(dim, form, theory, offsets=None, X=None, conn=CONN) -> Beam:
    X = (X2 if dim == 2 else X3) if X is None else X
    return Beam("b", conn, X, dim, formulation=form, theory=theory,
                ref=[0.2, 0.3, 1.0] if dim == 3 else None, offsets=offsets, **SECTION)


# --- the element -------------------------------------------------------------------------------

@pytest.mark.parametrize(("dim", "form", "theory"), KINDS, ids=IDS)
def test_zero_offsets_give_the_beam_without_offsets(dim, form, theory):
    """The offset code path with ``e = 0`` is today's beam to 1e-13 (force, tangents, mass)."""
    plain, zero = beam(dim, form, theory), beam(dim, form, theory, np.zeros((2, 3)))
    st = random_state(plain, np.random.default_rng(3), rot_scale=1.0)
    f0, K0 = plain.evaluate(st)
    f1, K1 = zero.evaluate(st)
    s = plain.stress(st)
    pairs = [(f0, f1), (K0, K1), (plain.energy(st), zero.energy(st)),
             (plain.geometric_stiffness(st, s), zero.geometric_stiffness(st, s)),
             (plain.material_tangent(st), zero.material_tangent(st)),
             (plain.mass(), zero.mass()), (plain.mass(lumped=True), zero.mass(lumped=True))]
    for a, b in pairs:
        np.testing.assert_allclose(b, a, rtol=0, atol=1e-13 * np.abs(a).max())
    assert zero.capabilities == plain.capabilities       # nothing refused without an offset


@pytest.mark.parametrize(("dim", "form", "theory"), KINDS, ids=IDS)
def test_tangent_matches_central_differences(dim, form, theory):
    """Deformed state with nodal rotations of order 1 rad: tangent = central FD to 1e-6."""
    g = beam(dim, form, theory, OFFSETS)
    for seed in range(3):
        st = random_state(g, np.random.default_rng(seed), scale=0.3, rot_scale=1.0)
        K = g.tangent(st)[0]
        err = np.abs(K - fd_tangent(g, st)).max() / np.abs(K).max()
        assert err < 1e-6, err


@pytest.mark.parametrize(("dim", "form", "theory"), KINDS, ids=IDS)
def test_tangent_splits_into_material_and_geometric(dim, form, theory):
    """Buckling's split holds with offsets; the lever of the end forces is in the geometric part.

    Linear beams: the tangent is the material part, the geometric stiffness is the
    co-rotational tangent's stress part at the reference (both with the arms ``c = e``).
    """
    g = beam(dim, form, theory, OFFSETS)
    st = random_state(g, np.random.default_rng(5), rot_scale=1.0)
    s = g.stress(st)
    K = g.tangent(st)
    Km = g.material_tangent(st)
    if form == "corotational":
        np.testing.assert_allclose(Km + g.geometric_stiffness(st, s), K, atol=1e-11 * abs(K).max())
        return
    np.testing.assert_allclose(Km, K, atol=1e-13 * abs(K).max())
    ref = State.reference(dim, 2)
    corot = beam(dim, "corotational", theory, OFFSETS)
    np.testing.assert_allclose(g.geometric_stiffness(ref, s),
                               corot.geometric_stiffness(ref, s), atol=1e-12 * abs(K).max())


@pytest.mark.parametrize("dim", [2, 3])
@pytest.mark.parametrize("form", ["linear", "corotational"])
def test_force_is_the_gradient_of_the_energy(dim, form):
    """``f_node = T^T f_end`` does the work of the beam's energy: ``dPhi = f . dd`` (central FD).

    The energy is the beam's own, of the ends' motion: the arms add none.
    """
    g = beam(dim, form, "timoshenko", OFFSETS)
    st = random_state(g, np.random.default_rng(2), rot_scale=1.0)
    f = g.internal_force(st)[0]
    h = 1e-6
    grad = [(g.energy(perturbed(g, st, j, h))[0] - g.energy(perturbed(g, st, j, -h))[0])
            / (2 * h) for j in range(g.nd)]
    np.testing.assert_allclose(grad, f, rtol=0, atol=1e-6 * np.abs(f).max())


def _rotation(dim, rng, angle):
    if dim == 2:
        return so3.expm(np.array([0.0, 0.0, angle]))
    axis = rng.normal(size=3)
    return so3.expm(angle * axis / np.linalg.norm(axis))


@pytest.mark.parametrize("dim", [2, 3])
@pytest.mark.parametrize("theory", ["euler-bernoulli", "timoshenko"])
def test_large_rigid_motion_gives_no_force(dim, theory):
    """Co-rotational offset beam turned rigidly by up to 3 rad: no force, no energy."""
    g = beam(dim, "corotational", theory, OFFSETS)
    scale = np.abs(g.tangent(State.reference(dim, 2))).max()
    rng = np.random.default_rng(7)
    for angle in (0.4, 1.7, 3.0):
        st = rigid_state(g, _rotation(dim, rng, angle), rng.normal(size=3) * (dim == 3 or
                                                                               [1, 1, 0]))
        f = g.internal_force(st)
        assert np.abs(f).max() < 1e-11 * scale
        assert abs(g.energy(st)[0]) < 1e-20 * scale


def test_offsets_move_the_elastic_axis():
    """The ends, not the nodes, make the beam: its length and frame are those between the ends.

    A 2D beam of nodes 1 apart with end offsets turning its axis by 90 degrees: its axial
    stiffness ``EA / l`` acts along the offset axis (0 -> (0, 2)), with ``l = 2``.
    """
    X = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]])
    g = Beam("b", CONN, X, 2, E=1.0, G=0.5, A=3.0, Iz=1e-9, formulation="linear",
             offsets=np.array([[0.0, 0.0, 0.0], [-1.0, 2.0, 0.0]]))
    assert g.l0[0] == pytest.approx(2.0)
    K = g.tangent(State.reference(2, 2))[0]
    assert K[4, 4] == pytest.approx(1.5, rel=1e-6)           # EA / l along the axis (y)
    assert abs(K[3, 3]) < 1e-6                               # nothing along x but bending


def test_compiled_kernel_with_offsets_equals_numpy(monkeypatch):
    """3D co-rotational groups of the compiled kernel: offsets applied outside it, to 1e-12."""
    if not beam3d_jit.enabled():
        pytest.skip("numba is not installed")
    rng = np.random.default_rng(11)
    n = 8
    X = np.concatenate([np.zeros((1, 3)), np.cumsum(rng.normal(size=(n, 3)) + [1, 0, 0], 0)])
    conn = np.column_stack([np.arange(n), np.arange(1, n + 1)])
    offsets = rng.normal(size=(n, 2, 3)) * 0.3
    g = beam(3, "corotational", "timoshenko", offsets, X=X, conn=conn)
    st = State.reference(3, n + 1)
    st.u[:] = rng.normal(size=(n + 1, 3)) * 0.2
    st.rot[:] = so3.quat_from_rotvec(rng.normal(size=(n + 1, 3)))
    assert not g._compiled()
    f, K = g.evaluate(st)
    monkeypatch.setattr(kernels, "MIN_ELEMENTS", 1)
    assert g._compiled()
    fc, Kc = g.evaluate(st)
    np.testing.assert_allclose(fc, f, rtol=0, atol=1e-12 * np.abs(f).max())
    np.testing.assert_allclose(Kc, K, rtol=0, atol=1e-12 * np.abs(K).max())


@pytest.mark.parametrize("dim", [2, 3])
def test_mass_gives_the_kinetic_energy_of_the_offset_axis(dim):
    """``T0^T M T0``: a rigid velocity of the nodes moves the offset beam rigidly.

    Translation ``v``: ``m |v|^2 / 2``, ``m = rho A l`` with ``l`` the offset axis's length.
    Spin ``w`` about z through the origin (2D and 3D): ``w^2 (m (|x_c|^2 + l^2 / 12) + rho Iz
    l) / 2`` about the offset axis's centre ``x_c`` (the consistent mass is exact for rigid
    motions; 3D: the local z axis along global Z, so that Iz is the inertia about it).
    """
    X = np.array([[0.3, -0.2, 0.0], [1.4, 0.5, 0.0]])
    e = np.array([[0.1, 0.4, 0.0], [-0.2, 0.3, 0.0]])
    ends = X + e
    ref = np.cross([0.0, 0.0, 1.0], ends[1] - ends[0])       # local y in-plane, z along Z
    g = Beam("b", CONN, X, dim, E=1.0, G=0.5, A=2.0, Iy=0.05, Iz=0.08, J=0.13, rho=3.0,
             formulation="linear", ref=ref if dim == 3 else None, offsets=e)
    M = g.mass()[0]
    length = np.linalg.norm(ends[1] - ends[0])
    m = 3.0 * 2.0 * length
    ndn = g.ndn
    v = np.array([0.3, -0.7, 0.0])
    d = np.zeros(2 * ndn)
    for a in range(2):
        d[a * ndn:a * ndn + dim] = v[:dim]
    assert 0.5 * d @ M @ d == pytest.approx(0.5 * m * v @ v, rel=1e-12)
    w = 1.3
    for a in range(2):
        d[a * ndn:a * ndn + dim] = np.cross([0, 0, w], X[a])[:dim]
        d[a * ndn + (2 if dim == 2 else 5)] = w
    xc = ends.mean(axis=0)
    ref = 0.5 * w**2 * (m * (xc @ xc + length**2 / 12) + 3.0 * 0.08 * length)
    assert 0.5 * d @ M @ d == pytest.approx(ref, rel=1e-12)


# --- closed forms ------------------------------------------------------------------------------

def chain_deck(dim, n, parts, load, form="linear", L=1.0, E=100.0, A=1.0, I=0.01):
    """A cantilever along x of ``n`` elements on shared nodes, one beam group per part.

    ``parts``: (name, offsets) of each group (all on the same nodes); node 1 clamped, ``load``
    on node ``n + 1``.
    """
    sec = ({"name": "s", "A": A, "Iz": I} if dim == 2 else
           {"name": "s", "A": A, "Iy": I, "Iz": I, "J": I})
    conn = [[i + 1, i + 2] for i in range(n)]
    return {"model": {"dim": dim},
            "materials": [{"name": "m", "E": E, "G": 0.4 * E}],
            "sections": [sec],
            "nodes": {"coordinates": [[L * i / n] + [0.0] * (dim - 1) for i in range(n + 1)]},
            "elements": [{"name": name, "type": "beam", "material": "m", "section": "s",
                          "formulation": form, "connectivity": conn, "offsets": off}
                         for name, off in parts],
            "supports": [{"nodes": 1, "fixed": ["all"]}],
            "loads": [{"name": "P", "nodes": n + 1, **load}],
            "steps": [{"name": "s", "type": "static"}]}


@pytest.mark.parametrize("dim", [2, 3])
@pytest.mark.parametrize("n", [1, 4, 16])
def test_sandwich_of_two_offset_flanges(dim, n):
    """Two flanges at +e and -e on shared nodes: ``EI = 2 EI_f + 2 EA e^2`` (parallel axes).

    End moment ``M``: every section carries it as the couple and the flanges' own bending in
    the ratio of their stiffnesses, so the tip turns by ``M L / EI`` and deflects by
    ``M L^2 / (2 EI)``, exactly, on any mesh.

    Tip force ``P``: the flanges are linked at the nodes only. In an element the axial
    forces are constant, so the couple carries the element's mean moment share
    ``M_mean EI' / EI`` (``EI' = 2 EA e^2``) and the flanges the rest, ``M(x) - M_c``. The
    rotation of an element is then ``M_mean h / EI``: the nodal rotations are exact, the tip
    turns by ``P L^2 / (2 EI)``. The deflection gains, in each element, ``int (h - x) (M(x) -
    M_mean) EI' / (EI_f2 EI) dx = P h^3 EI' / (12 EI_f2 EI)`` (``EI_f2 = 2 EI_f``, the two
    flanges' own bending), so ``w = P L^3 / (3 EI) (1 + EI' / (4 n^2 EI_f2))``: the
    parallel-axis value as the links become continuous (n -> infinity), within 1e-10 of this
    discrete closed form at every n.
    """
    E, A, I, e, L = 100.0, 1.0, 0.01, 0.1, 1.0
    EIf2, EIc = 2 * E * I, 2 * E * A * e**2
    EI = EIf2 + EIc
    off = [0.0, e] if dim == 2 else [0.0, e, 0.0]
    neg = [-x for x in off]
    parts = [("top", off), ("bottom", neg)]
    moment = {"moment": 1.0} if dim == 2 else {"moment": [0.0, 0.0, 1.0]}
    dk, _, st, _ = solve(chain_deck(dim, n, parts, moment, E=E, A=A, I=I, L=L))
    tip = node(dk, n + 1)
    rot = st.rotation_vectors()[tip, 2]
    assert rot == pytest.approx(L / EI, rel=1e-10)
    assert st.u[tip, 1] == pytest.approx(L**2 / (2 * EI), rel=1e-10)
    force = {"force": [0.0, 1.0] + [0.0] * (dim - 2)}
    dk, _, st, _ = solve(chain_deck(dim, n, parts, force, E=E, A=A, I=I, L=L))
    rot = st.rotation_vectors()[tip, 2]
    assert rot == pytest.approx(L**2 / (2 * EI), rel=1e-10)
    w = L**3 / (3 * EI) * (1 + EIc / (4 * n**2 * EIf2))
    assert st.u[tip, 1] == pytest.approx(w, rel=1e-10)
    assert abs(st.u[tip, 1] / (L**3 / (3 * EI)) - 1) < 0.26 / n**2     # -> parallel axes


@pytest.mark.parametrize("dim", [2, 3])
@pytest.mark.parametrize("form", ["linear", "corotational"])
def test_axial_force_on_the_node_line_bends_an_offset_beam(dim, form):
    """One beam with its axis at ``e`` off the node line, ``N`` along the line at the tip node.

    The rigid arm carries ``N`` to the beam's end with the moment ``N e`` (about z, the axis
    above the line): uniform bending. Tip rotation ``N e L / EI``, transverse deflection ``N e
    L^2 / (2 EI)``, and the node, below the turned end, moves along x by ``N L / EA + e theta``
    (the work ``N u`` is twice ``N^2 L / 2 EA + (N e)^2 L / 2 EI``). Linear theory: the
    co-rotational beam at a load 1e-7 of that, compared to first order.
    """
    E, A, I, e, L, n = 100.0, 1.0, 0.01, 0.1, 1.0, 4
    N = 1.0 if form == "linear" else 1e-7
    off = [0.0, e] if dim == 2 else [0.0, e, 0.0]
    dk, _, st, _ = solve(chain_deck(dim, n, [("beam", off)],
                                    {"force": [N] + [0.0] * (dim - 1)}, form=form, E=E, A=A,
                                    I=I, L=L))
    tip = node(dk, n + 1)
    theta = N * e * L / (E * I)
    tol = 1e-10 if form == "linear" else 1e-6
    assert st.rotation_vectors()[tip, 2] == pytest.approx(theta, rel=tol)
    assert st.u[tip, 1] == pytest.approx(N * e * L**2 / (2 * E * I), rel=tol)
    assert st.u[tip, 0] == pytest.approx(N * L / (E * A) + e * theta, rel=tol)


@pytest.mark.parametrize("dim", [2, 3])
def test_offset_cantilever_rolled_up_by_an_end_moment(dim):
    """Co-rotational offset cantilever, end moment ``M`` at the tip node: a circle.

    The moment reaches the beam's end through the rigid arm unchanged (a couple has no
    lever), so the beam, whatever its offset, is in pure bending about its own centroid
    line: curvature ``M / EI``, every element turning by ``M l0 / EI`` exactly (the basic
    beam's pure bending). With the axis at ``e`` above the node line (2D: ``(0, e)``; 3D:
    along local y, bending about z), the end at angle ``phi = M s / EI`` is at ``(0, e) + r
    (sin phi, 1 - cos phi)``, ``r = EI / M``, and the node below it at ``end - R(phi) (0, e)
    = (r + e) (sin phi, 1 - cos phi)``: on a circle of radius ``r + e``. ``M = 2 pi EI / L``
    closes the circle (tip node back at the root, turned by 2 pi: exact on any mesh); ``M =
    pi EI / L``, the half circle, puts the tip node at ``(0, 2 (L / pi + e))``, to the
    polygon's ``O(phi_e^4)`` chords (``phi_e = pi / 20``).
    """
    n, e = 20, 0.15
    for phi, tol in ((2 * np.pi, 1e-9), (np.pi, 1e-6)):
        off = [0.0, e] if dim == 2 else [0.0, e, 0.0]
        d = line_beam(dim, n, offsets=off, orientation=None if dim == 2 else [0, 1, 0])
        d["supports"] = [{"nodes": 1, "fixed": ["all"]}]
        d["loads"] = [{"name": "M", "nodes": 2,
                       "moment": phi if dim == 2 else [0.0, 0.0, phi]}]
        d["steps"] = [{"name": "roll", "type": "static", "nonlinear": True, "increments": 4,
                       "tolerance": 1e-12}]
        dk, _, st, _ = solve(d)
        tip = node(dk, 2)
        r = 1.0 / phi
        want = (r + e) * np.array([np.sin(phi), 1 - np.cos(phi)]) - [1.0, 0.0]
        np.testing.assert_allclose(st.u[tip, :2], want, rtol=0, atol=tol)
        if dim == 2:                                   # the 2D angle keeps its winding
            assert st.rot[tip] == pytest.approx(phi, rel=1e-9)
        else:                                          # a 3D orientation: about z by phi
            R = st.rotation_matrices()[tip]
            np.testing.assert_allclose(R, so3.expm(np.array([0.0, 0.0, phi])), atol=1e-9)


def stiffened_strip(offset: float, nx: int = 40, ny: int = 4):
    """A clamped strip of shell triangles with a beam stiffener on its centre line.

    Strip ``L x b`` (10 x 1), thickness ``t = 0.1``, in the x-y plane, ``nx x ny`` squares of
    two triangles; a rectangular stiffener ``b_s x h_s`` (0.1 x 0.6) below it on the nodes of
    the centre line (``ny`` even), offset ``(0, 0, -offset)``. Poisson's ratio 0: the strip
    bends as a beam (no anticlastic plate stiffness, ``E t^3 / 12`` per width). Tip force
    ``P = 1e-3`` down at the centre node of the free end.
    """
    L, b, t, bs, hs, E = 10.0, 1.0, 0.1, 0.1, 0.6, 1.0e4
    x, y = np.linspace(0, L, nx + 1), np.linspace(-b / 2, b / 2, ny + 1)
    XX, YY = np.meshgrid(x, y, indexing="ij")                      # node (i, j): i nx + ...
    coords = np.column_stack([XX.ravel(), YY.ravel(), np.zeros(XX.size)])
    ids = np.arange(1, len(coords) + 1).reshape(nx + 1, ny + 1)
    a, c = ids[:-1, :-1].ravel(), ids[1:, :-1].ravel()
    d, f = ids[1:, 1:].ravel(), ids[:-1, 1:].ravel()
    tri = np.concatenate([np.column_stack([a, c, d]), np.column_stack([a, d, f])])
    line = ids[:, ny // 2]
    deck = {"model": {"dim": 3},
            "materials": [{"name": "m", "E": E, "nu": 0.0}],
            "sections": [{"name": "stiffener", "A": bs * hs, "Iy": bs * hs**3 / 12,
                          "Iz": hs * bs**3 / 12, "J": 0.26 * hs * bs**3}],
            "nodes": {"coordinates": coords.tolist()},
            "elements": [{"name": "plate", "type": "shell", "material": "m", "thickness": t,
                          "connectivity": tri.tolist()},
                         {"name": "stiffener", "type": "beam", "material": "m",
                          "section": "stiffener",
                          "connectivity": np.column_stack([line[:-1], line[1:]]).tolist(),
                          "offsets": [0.0, 0.0, -offset]}],
            "supports": [{"nodes": ids[0].tolist(), "fixed": ["all"]}],
            "loads": [{"name": "P", "nodes": int(line[-1]), "force": [0.0, 0.0, -1e-3]}],
            "steps": [{"name": "s", "type": "static"}]}
    return deck, int(line[-1]), dict(L=L, b=b, t=t, bs=bs, hs=hs, E=E, P=1e-3)


def test_stiffened_plate_is_the_composite_t_beam():
    """A shell strip with an eccentric stiffener bends as the T-section's composite beam.

    Plate (flange ``b t``) at z = 0, stiffener centroid at ``z_s = -(t/2 + h_s/2)``; neutral
    axis ``z_n = A_s z_s / (A_p + A_s)``; ``EI = E (b t^3/12 + A_p z_n^2 + b_s h_s^3/12 + A_s
    (z_s - z_n)^2)``, tip deflection ``P L^3 / (3 EI)``. Mesh: 40 x 4 squares of two
    triangles (320 shells, 40 beams), the stiffener on the 41 centre-line nodes. Within 2%:
    the shell model differs from the beam formula by the flange's shear lag (the stiffener
    pulls on the plate along one line, so the membrane stress falls off across the width;
    b/L = 0.1 keeps that small), the links at the nodes only (the sandwich test's
    ``O(1/n^2)``) and the load's local effects at the tip. With the offset set to 0 the
    stiffener bends about the mid-surface: ``EI = E (b t^3/12 + b_s h_s^3/12)``, more than
    three times softer than the T-section; far outside 2%.
    """
    deck, tip, p = stiffened_strip(0.1 / 2 + 0.6 / 2)
    t, hs, bs, b = p["t"], p["hs"], p["bs"], p["b"]
    Ap, As = b * t, bs * hs
    zs = -(t / 2 + hs / 2)
    zn = As * zs / (Ap + As)
    EI = p["E"] * (b * t**3 / 12 + Ap * zn**2 + bs * hs**3 / 12 + As * (zs - zn) ** 2)
    w_ref = -p["P"] * p["L"] ** 3 / (3 * EI)
    dk, _, st, _ = solve(deck)
    w = st.u[node(dk, tip), 2]
    assert abs(w / w_ref - 1) < 0.02, (w, w_ref)
    deck0, _, _ = stiffened_strip(0.0)
    dk0, _, st0, _ = solve(deck0)
    w0 = st0.u[node(dk0, tip), 2]
    EI0 = p["E"] * (b * t**3 / 12 + bs * hs**3 / 12)
    assert abs(w0 / (-p["P"] * p["L"] ** 3 / (3 * EI0)) - 1) < 0.02       # the model is right
    assert abs(w0 / w_ref - 1) > 1.0                                       # ... and far off


def arm_column(dim: int, n: int, a: float, form: str) -> dict:
    """A cantilever column (EI = 0.1, L = 1) of ``n`` elements whose last element's second end
    is offset by ``-a`` along the axis: its tip node sits on a rigid arm of length ``a`` beyond
    the column's top, and carries the compressive load ``P = 1``."""
    coords = ([[i / n] + [0.0] * (dim - 1) for i in range(n)] + [[1.0 + a] + [0.0] * (dim - 1)])
    sec = ({"name": "s", "A": 1.0, "Iz": 1e-3} if dim == 2 else
           {"name": "s", "A": 1.0, "Iy": 1e-3, "Iz": 1e-3, "J": 1e-3})

    def group(name, conn, **more):
        return {"name": name, "type": "beam", "material": "m", "section": "s",
                "formulation": form, "connectivity": conn, **more}
    planar = [{"nodes": list(range(2, n + 2)), "fixed": ["uz", "rx", "ry"]}] if dim == 3 else []
    return {"model": {"dim": dim}, "materials": [{"name": "m", "E": 100.0, "G": 40.0}],
            "sections": [sec], "nodes": {"coordinates": coords},
            "elements": [group("column", [[i + 1, i + 2] for i in range(n - 1)]),
                         group("top", [[n, n + 1]],
                               offsets=[[0.0] * dim, [-a] + [0.0] * (dim - 1)])],
            "supports": [{"nodes": 1, "fixed": ["all"]}, *planar],
            "loads": [{"name": "P", "nodes": n + 1, "force": [-1.0] + [0.0] * (dim - 1)}],
            "steps": [{"name": "b", "type": "buckling", "modes": 1}]}


@pytest.mark.parametrize("dim", [2, 3])
@pytest.mark.parametrize("form", ["linear", "corotational"])
def test_buckling_of_a_column_loaded_on_a_rigid_arm(dim, form):
    """Linear buckling: the geometric stiffness of the turning arm (the lever term).

    A cantilever column with a rigid extension ``a`` on top, the load ``P`` at its end: with
    ``k^2 = P / EI``, ``EI v'' = P (v_L + a v'_L - v)`` gives ``v = D (1 - cos kx)`` and
    ``D = v_L + a v'_L``, so ``k L tan(k L) = L / a`` (``a = 0``: Euler's ``pi / 2``). Eight
    elements with their interior modes: within 1e-8 (Euler's case 6e-10). Without the lever
    term the arm would not count (Euler's load of the bare column, 3.3 times higher at ``a =
    1``).
    """
    from scipy.optimize import brentq

    for a in (0.3, 1.0):
        kL = brentq(lambda z: z * np.tan(z) - 1.0 / a, 1e-9, np.pi / 2 - 1e-12)
        factor = solve(arm_column(dim, 8, a, form))[3][-1].factors[0]
        assert factor == pytest.approx(0.1 * kL**2, rel=1e-8)


# --- mass in steps -------------------------------------------------------------------------------

def _sandwich_frequency(n: int, E, A, I, e, rho) -> float:
    d = chain_deck(2, n, [("top", [0.0, e]), ("bottom", [0.0, -e])], {"force": [0.0, 1.0]},
                   E=E, A=A, I=I)
    d["materials"][0]["density"] = rho
    d.pop("loads")
    d["steps"] = [{"name": "modes", "type": "modal", "mass": "consistent", "modes": 2}]
    _, _, _, steps = solve(d)
    return float(np.sqrt(steps[0].pairs.values[0]))


def test_modal_step_with_consistent_mass_on_a_sandwich():
    """Modal, ``mass = "consistent"`` (``T0^T M T0``): the sandwich's first bending frequency.

    The composite cantilever (``EI = 2 EI_f + 2 EA e^2``, ``m = 2 rho A``) with the rotary
    inertia of its section, ``rho J = 2 rho (I + A e^2)`` (the flanges' axial motion on the
    rigid links gives the ``A e^2`` part): Rayleigh's quotient with the Euler-Bernoulli mode
    ``phi`` (``beta_1 L = 1.8751``), ``omega^2 = omega_EB^2 / (1 + r^2 int phi'^2 / int
    phi^2)``, ``r^2 = I / A + e^2`` (error ``O((r^2 int phi'^2 / int phi^2)^2)``, 1e-6 here).
    The flanges linked at the nodes only lower the frequency by ``O(1 / n^2)`` (the sandwich
    test): 40 and 80 elements, error ratio 4, and their Richardson extrapolation within 1e-5
    of the reference. The offsets' share of the rotary inertia alone moves it by 9e-4.
    """
    E, A, I, e, rho = 100.0, 1.0, 1e-4, 0.02, 2.0
    b1 = 1.8751040687
    x, wq = legendre.leggauss(40)
    x, wq = (x + 1) / 2, wq / 2
    s = (np.cosh(b1) + np.cos(b1)) / (np.sinh(b1) + np.sin(b1))
    phi = np.cosh(b1 * x) - np.cos(b1 * x) - s * (np.sinh(b1 * x) - np.sin(b1 * x))
    dphi = b1 * (np.sinh(b1 * x) + np.sin(b1 * x) - s * (np.cosh(b1 * x) - np.cos(b1 * x)))
    ratio = (wq @ dphi**2) / (wq @ phi**2)
    EI, r2 = 2 * E * I + 2 * E * A * e**2, I / A + e**2
    ref = b1**2 * np.sqrt(EI / (2 * rho * A)) / np.sqrt(1 + r2 * ratio)
    assert e**2 * ratio / 2 > 5e-4                      # what the offsets' inertia is worth
    w40, w80 = (_sandwich_frequency(n, E, A, I, e, rho) for n in (40, 80))
    assert 3.6 < (w40 - ref) / (w80 - ref) < 4.4
    assert abs((4 * w80 - w40) / 3 / ref - 1) < 1e-5


# --- bad input ---------------------------------------------------------------------------------

def _beam_deck(dim=2, **element):
    d = line_beam(dim, 2, **element)
    d["supports"] = [{"nodes": 1, "fixed": ["all"]}]
    d["steps"] = [{"name": "s", "type": "static"}]
    return d


@pytest.mark.parametrize(("dim", "value", "words"), [
    (2, [0.0, 0.1, 0.0], "expected one offset [ex, ey]"),
    (3, [0.0, 0.1], "expected one offset [ex, ey, ez]"),
    (3, [[0.0, 0.1, 0.0]], "a pair"),
    (3, [[0.0, 0.1, 0.0], [0.0, 0.1]], "3 components"),
    (2, [[0.0, 0.1], [0.0, 0.1], [0.0, 0.1]], "a pair"),
    (2, 0.1, "expected one offset"),
    (2, [[0.0, 0.0], [-0.5, 0.0]], "zero length"),
])
def test_offsets_of_the_wrong_shape_are_deck_errors(dim, value, words):
    err = deck_error(_beam_deck(dim, offsets=value))
    assert err.key == "elements[0].offsets"
    assert words in err.message


@pytest.mark.parametrize("element", [
    {"name": "t", "type": "truss", "material": "m", "section": "s", "connectivity": [[1, 2]]},
])
def test_offsets_on_a_family_that_takes_none(element):
    d = _beam_deck(2)
    d["elements"] = [{**element, "offsets": [0.0, 0.1]}]
    err = deck_error(d)
    assert err.key.endswith("offsets"), err


def test_offsets_on_shells_are_refused():
    deck, _, _ = stiffened_strip(0.35, nx=2, ny=2)
    deck["elements"][0]["offsets"] = [0.0, 0.0, -0.1]
    assert deck_error(deck).key == "elements[0].offsets"


def test_offsets_with_consistent_inertia_are_refused():
    err = deck_error(_beam_deck(2, offsets=[0.0, 0.1], inertia="consistent"))
    assert err.key == "elements[0].offsets" and "consistent" in err.message


def _massive(d, step):
    d["materials"][0]["density"] = 1.0
    d["steps"] = [step]
    return d


@pytest.mark.parametrize("step", [
    {"name": "d", "type": "dynamic", "time_step": 0.01, "duration": 0.02,
     "integrator": "midpoint"},
    {"name": "d", "type": "dynamic", "time_step": 0.01, "duration": 0.02,
     "integrator": "generalized_alpha"},
    {"name": "m", "type": "modal", "modes": 1},
])
def test_dynamics_of_offset_beams_with_mass_is_refused(step):
    """Dynamic steps (and modal ones with the lumped mass) refuse offset beams with mass."""
    d = _massive(_beam_deck(2, offsets=[0.0, 0.1]), step)
    with pytest.raises(DeckError) as err:
        solve(d)
    assert err.value.key == "elements[0].offsets"
    assert "beam group 'beam'" in err.value.message


@pytest.mark.parametrize("integrator", [{}, {"integrator": "energy_conserving"}],
                         ids=["default", "energy_conserving"])
def test_energy_conserving_integrator_is_refused_at_the_deck(integrator):
    """The default integrator is the energy-conserving one: offset groups do not offer it."""
    d = _massive(_beam_deck(2, offsets=[0.0, 0.1]),
                 {"name": "d", "type": "dynamic", "time_step": 0.01, "duration": 0.02,
                  **integrator})
    err = deck_error(d)
    assert err.key == "steps[0].integrator"
    assert "energy-conserving" in err.message and "'beam'" in err.message


def test_gravity_on_offset_beams_with_mass_is_refused():
    d = _massive(_beam_deck(2, offsets=[0.0, 0.1]), {"name": "s", "type": "static"})
    d["gravity"] = {"acceleration": [0.0, -9.81]}
    assert deck_error(d).key == "elements[0].offsets"


def test_massless_offset_beams_and_zero_offsets_keep_their_dynamics():
    """Without mass (or offsets) nothing is off the nodes: a dynamic step runs."""
    g = Beam("b", CONN, X2, 2, E=1.0, G=0.5, A=1.0, Iz=1.0, rho=0.0, offsets=OFFSETS)
    m, J = g.lumped_inertia(State.reference(2, 2))
    assert not np.any(m)
    g = Beam("b", CONN, X2, 2, E=1.0, G=0.5, A=1.0, Iz=1.0, rho=1.0, offsets=np.zeros((2, 3)))
    g.lumped_inertia(State.reference(2, 2))
    g = Beam("b", CONN, X2, 2, E=1.0, G=0.5, A=1.0, Iz=1.0, rho=1.0, offsets=OFFSETS)
    with pytest.raises(ModelError):
        g.conserving_start(State.reference(2, 2))
    with pytest.raises(DeckError):
        g.lumped_inertia(State.reference(2, 2))



def test_a_load_per_length_on_offset_beams_is_refused():
    """The distributed load acts on the line between the nodes (fem.loads), not on the offset
    axis: refused by name rather than silently applied with the wrong length and moment."""
    d = _beam_deck(3, offsets=[0.0, 0.1, 0.0])
    d["loads"] = [{"name": "q", "elements": "beam", "per_length": [0.0, 0.0, -1.0]}]
    err = deck_error(d)
    assert err.key == "loads[0].elements"
    assert "end offsets" in err.message and "elements[0].offsets" in err.message
    d = _beam_deck(3, offsets=[0.0, 0.0, 0.0])           # zero offsets: the load is fine
    d["loads"] = [{"name": "q", "elements": "beam", "per_length": [0.0, 0.0, -1.0]}]
    d["steps"] = [{"name": "s", "type": "static"}]
    from fem.io import deck as deck_io
    deck_io.from_dict(d)
