"""The co-rotational flat shell triangle (``formulation = "corotational"``): invariants and
large-rotation benchmarks.

References: the rolled-up strip is the classic exact solution of pure bending (a strip under an
end moment ``M = 2 pi EI / L`` bends into a full circle: Crisfield, *Non-linear Finite Element
Analysis of Solids and Structures*, vol. 1, section 7.5; for shells, e.g. Battini 2007, CMAME
196, 1905-1914); with ``nu = 0`` the strip is a beam. The end-loaded cantilever is compared with
the elastica solved in the test (``theta'' = -(P/EI) cos(theta)``; the values agree with
Mattiasson 1981, IJNME 17, 145-153, Table 1: ``PL^2/EI = 1``: ``w/L = 0.30172``, ``u/L =
0.05643``). Plate buckling: the simply supported square plate under uniform uniaxial compression,
``N_cr = k pi^2 D / b^2`` with ``k = (m b / a + a / (m b))^2`` (Timoshenko & Gere 1961, *Theory of
Elastic Stability*, section 9.2).
"""

import numpy as np
import pytest
from helpers import solve, square_plate_mesh
from scipy.integrate import solve_bvp

from fem import rotations as so3
from fem.elements.shell import Shell
from fem.elements.shell.corot import CorotShell
from fem.state import State

rng = np.random.default_rng(12)
E, NU, H = 1.0e4, 0.3, 0.05


def patch():
    """MacNeal-Harder's distorted patch (0.24 x 0.12, 10 triangles), turned to an oblique plane."""
    X = np.array([[0, 0], [0.24, 0], [0.24, 0.12], [0, 0.12],
                  [0.04, 0.02], [0.18, 0.03], [0.16, 0.08], [0.08, 0.08]])
    quads = [(0, 1, 5, 4), (1, 2, 6, 5), (2, 3, 7, 6), (3, 0, 4, 7), (4, 5, 6, 7)]
    conn = np.array([t for a, b, c, d in quads for t in ((a, b, c), (a, c, d))])
    R = so3.expm(np.array([0.7, 0.2, 0.4]))
    return np.column_stack([X, np.zeros(len(X))]) @ R.T, conn


def assemble(g, n: int, f: np.ndarray, K: np.ndarray | None = None):
    """Dense global force (and tangent) of element arrays ``f (E, 18)``, ``K (E, 18, 18)``."""
    dofs = (6 * g.conn[:, :, None] + np.arange(6)).reshape(len(g), 18)
    F = np.zeros(6 * n)
    np.add.at(F, dofs, f)
    if K is None:
        return F
    KK = np.zeros((6 * n, 6 * n))
    np.add.at(KK, (dofs[:, :, None], dofs[:, None, :]), K)
    return F, KK


def moved(st: State, du: np.ndarray) -> State:
    """``st`` moved by ``du (n, 6)``: translations added, rotations turned by spatial spins."""
    s = st.copy()
    s.increment(du, np.zeros(len(du), dtype=bool))
    return s


def deformed(X: np.ndarray, angle: float = 1.0) -> State:
    """A random deformation of the patch carried by a large rotation about an oblique axis."""
    n = len(X)
    axis = np.array([1.0, -2.0, 0.5]) / np.linalg.norm([1.0, -2.0, 0.5])
    Q = so3.expm(angle * axis)
    st = State.reference(3, n)
    u = 0.01 * rng.normal(size=(n, 3))
    st.u[:] = (X + u) @ Q.T + np.array([0.3, -1.2, 2.0]) - X
    st.rot[:] = so3.matrix_to_quat(Q @ so3.expm(0.2 * rng.normal(size=(n, 3))))
    return st


def test_large_rigid_motion_gives_no_force_and_no_energy():
    X, conn = patch()
    g = CorotShell("p", conn, X, 3, E=E, nu=NU, h=H)
    axis = np.array([1.0, 2.0, -1.5]) / np.linalg.norm([1.0, 2.0, -1.5])
    Q = so3.expm(1.0 * axis)
    st = State.reference(3, len(X))
    st.u[:] = X @ Q.T + np.array([2.0, -3.0, 0.7]) - X
    st.rot[:] = so3.matrix_to_quat(np.broadcast_to(Q, (len(X), 3, 3)))
    scale = np.abs(g.K).max() * 0.24                       # force of a displacement of the size
    assert np.abs(g.internal_force(st)).max() <= 1e-12 * scale
    assert np.abs(g.energy(st)).max() <= 1e-12 * scale * 0.24
    # and the tangent there is the linear stiffness turned by Q (no stress, no geometric part)
    Qb = np.kron(np.eye(6), Q)
    Kq = Qb @ g.K @ Qb.T
    assert np.abs(g.tangent(st) - Kq).max() <= 1e-10 * np.abs(g.K).max()


def test_tangent_equals_central_differences_on_a_deformed_patch():
    """Columns: each node's translations and spatial spins (as System.update moves them)."""
    X, conn = patch()
    n = len(X)
    g = CorotShell("p", conn, X, 3, E=E, nu=NU, h=H)
    st = deformed(X)
    F, K = assemble(g, n, *g.evaluate(st))
    h = 1e-6
    cols = []
    for j in range(6 * n):
        du = np.zeros((n, 6))
        du.flat[j] = h
        cols.append((assemble(g, n, g.internal_force(moved(st, du)))
                     - assemble(g, n, g.internal_force(moved(st, -du)))) / (2 * h))
    Kfd = np.column_stack(cols)
    Kg = g.geometric_stiffness(st, g.stress(st))
    assert np.abs(Kg).max() > 1e-3 * np.abs(K).max()             # a stressed patch
    assert np.abs(K - Kfd).max() <= 1e-6 * np.abs(Kfd).max()
    # the split buckling uses, and the stress rate as the derivative of the stress
    Ks = g.material_tangent(st) + g.geometric_stiffness(st, g.stress(st))
    assert np.abs(Ks - g.tangent(st)).max() <= 1e-12 * np.abs(Ks).max()
    due = rng.normal(size=(n, 6)) * 1e-6
    fd = (g.stress(moved(st, due)) - g.stress(moved(st, -due))) / 2
    rate = g.stress_rate(st, due[conn].reshape(len(g), 18))
    assert np.abs(rate - fd).max() <= 1e-6 * np.abs(fd).max()


def test_internal_force_is_self_equilibrated():
    """``B`` annihilates rigid motions, so the element forces have no resultant force or moment
    about the origin (moments conjugate to spatial spins), in any deformed state."""
    X, conn = patch()
    g = CorotShell("p", conn, X, 3, E=E, nu=NU, h=H)
    st = deformed(X)
    f = g.internal_force(st).reshape(len(g), 3, 6)
    x = X[conn] + st.u[conn]
    assert np.abs(f[:, :, :3].sum(axis=1)).max() <= 1e-12 * np.abs(f).max()
    mom = (np.cross(x, f[:, :, :3]) + f[:, :, 3:]).sum(axis=1)
    assert np.abs(mom).max() <= 1e-12 * np.abs(f).max() * np.abs(x).max()


def test_small_displacements_reproduce_the_linear_element():
    X, conn = patch()
    g = CorotShell("p", conn, X, 3, E=E, nu=NU, h=H)
    lin = Shell("p", conn, X, 3, E=E, nu=NU, h=H)
    st0 = State.reference(3, len(X))
    assert np.abs(g.tangent(st0) - lin.K).max() <= 1e-10 * np.abs(lin.K).max()
    # force of a small motion: K d up to second order in d
    for eps in (1e-4, 1e-5):
        d = eps * rng.normal(size=(len(X), 6))
        st = State.reference(3, len(X))
        st.u[:] = d[:, :3]
        st.rot[:] = so3.quat_from_rotvec(d[:, 3:])
        lin_f = lin.internal_force(st)
        err = np.abs(g.internal_force(st) - lin_f).max() / np.abs(lin_f).max()
        assert err <= 100 * eps


# --- a plate strip, L = 1, width 0.1, as a cantilever ----------------------------------------

L, WIDTH, EY, HS = 1.0, 0.1, 1.0e6, 0.01
EI = EY * WIDTH * HS**3 / 12


def strip_deck(n: int, *, moment: float = 0.0, force: float = 0.0, increments: int = 5) -> dict:
    """An n x 1 strip of 2n triangles, root clamped; end moment about -y and force along +z,
    each split over the two tip nodes (nodes n + 1 and 2 n + 2)."""
    x = np.linspace(0, L, n + 1)
    coords = [[xi, yi, 0.0] for yi in (0.0, WIDTH) for xi in x]
    bot = np.arange(n) + 1
    top = bot + n + 1
    tri = np.concatenate([np.column_stack([bot, bot + 1, top + 1]),
                          np.column_stack([bot, top + 1, top])])
    load = {"name": "tip", "nodes": [n + 1, 2 * n + 2]}
    if moment:
        load["moment"] = [0.0, -moment / 2, 0.0]
    if force:
        load["force"] = [0.0, 0.0, force / 2]
    return {"model": {"dim": 3},
            "materials": [{"name": "m", "E": EY, "nu": 0.0}],
            "nodes": {"coordinates": coords},
            "elements": [{"name": "strip", "type": "shell", "formulation": "corotational",
                          "material": "m", "thickness": HS, "connectivity": tri.tolist()}],
            "supports": [{"nodes": [1, n + 2], "fixed": ["all"]}],
            "loads": [load],
            "steps": [{"name": "s", "type": "static", "nonlinear": True,
                       "increments": increments, "tolerance": 1e-10}]}


def rotation_along(state: State, nodes: np.ndarray) -> float:
    """Total rotation about y along a chain of nodes: the sum of neighbours' relative turns
    (a full turn is 2 pi here, where the tip's own orientation is back to the identity)."""
    R = state.rotation_matrices()[nodes]
    return float(sum(so3.logm(R[k + 1] @ R[k].T)[1] for k in range(len(nodes) - 1)))


def test_strip_rolls_up_into_a_full_circle():
    n = 20
    dk, _, st, _ = solve(strip_deck(n, moment=2 * np.pi * EI / L, increments=4))
    tips = [n, 2 * n + 1]
    x_tip = dk.model.X[tips] + st.u[tips]
    root = dk.model.X[[0, n + 1]]
    assert np.abs(x_tip - root).max() <= 0.005 * L             # back at the root
    assert rotation_along(st, np.arange(n + 1)) == pytest.approx(-2 * np.pi, rel=0.005)
    # half the moment: a half circle of radius L / pi, tip above the root at height 2 L / pi
    dk, _, st, _ = solve(strip_deck(n, moment=np.pi * EI / L, increments=2))
    x_tip = (dk.model.X[tips] + st.u[tips]).mean(axis=0)
    assert x_tip[0] == pytest.approx(0.0, abs=0.005 * L)
    assert x_tip[2] == pytest.approx(2 * L / np.pi, rel=0.005)


def elastica(k: float) -> np.ndarray:
    """Tip ``(theta, x, z) / (1, L, L)`` of the cantilever elastica under an end load ``P = k
    EI / L^2`` normal to the undeformed axis: ``theta'' = -k cos(theta)``, ``theta(0) = 0``,
    ``theta'(L) = 0``, ``x' = cos(theta)``, ``z' = sin(theta)``."""
    s = np.linspace(0, 1, 101)

    def rhs(_, y):
        return np.vstack([y[1], -k * np.cos(y[0]), np.cos(y[0]), np.sin(y[0])])

    def bc(a, b):
        return np.array([a[0], b[1], a[2], a[3]])

    sol = solve_bvp(rhs, bc, s, np.zeros((4, s.size)), tol=1e-10, max_nodes=100000)
    assert sol.success
    theta, _, x, z = sol.sol(1.0)
    return np.array([theta, x, z])


@pytest.mark.parametrize("k", [1.0, 3.0])
def test_end_loaded_strip_follows_the_elastica(k):
    n = 20
    exact = elastica(k)
    if k == 1.0:                                       # Mattiasson's table, to its digits
        assert exact[2] == pytest.approx(0.30172, abs=1e-5)
        assert 1 - exact[1] == pytest.approx(0.05643, abs=1e-5)
    dk, _, st, _ = solve(strip_deck(n, force=k * EI / L**2, increments=5))
    tips = [n, 2 * n + 1]
    u = st.u[tips].mean(axis=0)
    assert -u[0] == pytest.approx(L * (1 - exact[1]), rel=0.005)
    assert u[2] == pytest.approx(L * exact[2], rel=0.005)
    # the diagonals all lean one way, so the discrete strip is not symmetric about its middle
    # plane and moves sideways a little (2.5e-5 L at k = 3), far below the accuracy asked
    assert np.abs(u[1]) <= 0.005 * u[2]
    assert -rotation_along(st, np.arange(n + 1)) == pytest.approx(exact[0], rel=0.005)


# --- linear buckling --------------------------------------------------------------------------

def compressed_plate(n: int) -> dict:
    """A simply supported unit square plate (n x n squares), uniform compression on x = 1."""
    coords, tri, ids = square_plate_mesh(n)
    x0, x1 = np.isclose(coords[:, 0], 0), np.isclose(coords[:, 0], 1)
    ye = np.isclose(coords[:, 1], 0) | np.isclose(coords[:, 1], 1)
    sup = [{"nodes": ids[x0 | x1 | ye].tolist(), "fixed": ["uz"]},
           {"nodes": ids[x0 | x1].tolist(), "fixed": ["rx"]},
           {"nodes": ids[ye].tolist(), "fixed": ["ry"]},
           {"nodes": ids[x0].tolist(), "fixed": ["ux"]},
           {"nodes": [1], "fixed": ["uy"]}]
    share = np.where(ye[x1], 0.5, 1.0) / n                         # N = 1 per unit width
    loads = [{"name": f"N{i}", "nodes": [int(i)], "force": [-float(s), 0.0, 0.0]}
             for i, s in zip(ids[x1], share, strict=True)]
    return {"model": {"dim": 3}, "materials": [{"name": "m", "E": E, "nu": NU}],
            "nodes": {"coordinates": coords.tolist()},
            "elements": [{"name": "plate", "type": "shell", "formulation": "corotational",
                          "material": "m", "thickness": 0.01, "connectivity": tri.tolist()}],
            "supports": sup, "loads": loads,
            "steps": [{"name": "b", "type": "buckling", "modes": 2}]}


def test_simply_supported_plate_buckles_at_the_classical_load():
    """``k = 4`` (m = 1) and ``k = 6.25`` (m = 2); the error falls at an order above 1.5."""
    D = E * 0.01**3 / (12 * (1 - NU**2))
    ncr = np.pi**2 * D * np.array([4.0, 6.25])
    err = {n: solve(compressed_plate(n))[3][-1].factors[:2] / ncr - 1 for n in (8, 16)}
    assert abs(err[16][0]) <= 0.005
    assert abs(err[16][1]) <= 0.02
    assert np.log2(abs(err[8][0] / err[16][0])) >= 1.5


# --- shells and beams on shared nodes -----------------------------------------------------------
@pytest.mark.parametrize("formulation", ["linear", "corotational"])
def test_a_strip_stiffened_by_edge_beams_bends_with_the_summed_stiffness(formulation):
    """Shells and 3D beams sharing nodes and rotations: a cantilever strip (nu = 0, in
    cylindrical bending: a beam of E b h^3 / 12) with a beam of second moment I_b along each
    edge, end load P: tip deflection P L^3 / (3 (E b h^3 / 12 + 2 E I_b)) (Euler-Bernoulli
    beam theory), within 0.5% with 20 elements a side."""
    n = 20
    P = 1e-4 * EI / L**2                               # small: the linear range
    d = strip_deck(n, force=P, increments=1)
    d["elements"][0]["formulation"] = formulation
    Ib = 2.0 * EI / EY                                 # each beam: twice the strip's stiffness
    # Iz (bending in the strip's plane) ten times Iy: the wrong plane would show at once
    d["sections"] = [{"name": "edge", "A": 1e-2, "Iy": Ib, "Iz": 10 * Ib, "J": Ib}]
    for name, first in (("beam_bottom", 1), ("beam_top", n + 2)):
        d["elements"].append({"name": name, "type": "beam", "formulation": formulation,
                              "material": "m", "section": "edge",
                              "connectivity": [[k, k + 1] for k in range(first, first + n)]})
    if formulation == "linear":
        d["steps"] = [{"name": "s", "type": "static"}]
    dk, _, st, _ = solve(d)
    w = st.u[[n, 2 * n + 1], 2]
    exact = P * L**3 / (3 * (EI + 2 * EY * Ib))
    assert w == pytest.approx([exact, exact], rel=5e-3)
