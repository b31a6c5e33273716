"""Layered (laminate) shell sections and quadrilateral shell cells (issue 12, items 1 and 4).

References, each derived here or cited:

* classical lamination theory (CLT): ``A, B, D = sum_k Qbar_k (dz, dz^2/2, dz^3/3)`` (Jones,
  *Mechanics of Composite Materials*, 2nd ed., 1999, eq. 4.22; Reddy, *Mechanics of Laminated
  Composite Plates and Shells*, 2nd ed., 2004, eq. 3.3.14), with the explicit ``Qbar_ij`` of Reddy
  eq. 2.3.17 / Jones eq. 2.85 written out below (the code takes the matrix product ``T^T Q T``);
* the simply supported symmetric cross-ply plate under the sinusoidal load ``q0 sin(pi x/a)
  sin(pi y/b)``: Navier's CLPT solution ``w0 = q0 / (pi^4/a^4 (D11 + 2 (D12 + 2 D66) (a/b)^2 +
  D22 (a/b)^4))`` at the centre (Reddy 2004, section 5.2, eq. 5.2.8 with m = n = 1);
* a free plate of any laminate under uniform edge forces ``N0`` has the uniform CLPT state
  ``[eps; kappa] = [[A, B], [B, D]]^-1 [N0; 0]`` (equilibrium holds with constant resultants, and
  the state is compatible): an antisymmetric [0/90] plate bends under a pure in-plane force;
* the kinetic energy of a rigid motion of a layered plate, ``1/2 int rho |v0 + w x r|^2 dV``.
"""

import logging

import numpy as np
import pytest
import scipy.sparse as sp
from helpers import deck_error, square_plate_mesh
from numpy.polynomial import legendre
from scipy.sparse.linalg import spsolve
from test_shell import patch, state_of

from fem import rotations as so3
from fem.elements.shell import Shell, shell_jit
from fem.elements.shell.corot import CorotShell
from fem.model import Layer, Material, OrthotropicMaterial, ShellSection
from fem.state import State

rng = np.random.default_rng(1212)
# Reddy's material 1: E1/E2 = 25, G12 = 0.5 E2, nu12 = 0.25 (CLPT ignores G13, G23)
E2 = 1.0e4
CFRP = OrthotropicMaterial("cfrp", E1=25 * E2, E2=E2, G12=0.5 * E2, nu12=0.25, rho=1.5)
STEEL = Material("steel", 2.0e5, 2.0e5 / 2.6, 7.8)


def laminate(angles, t, mat=CFRP) -> ShellSection:
    """Equal layers of ``mat``, bottom to top, at ``angles`` (degrees)."""
    return ShellSection("lam", tuple(Layer(mat, t, a) for a in angles))


def q_material(m: OrthotropicMaterial) -> np.ndarray:
    """Jones eq. 2.61: the reduced stiffness in the material axes."""
    nu21 = m.nu12 * m.E2 / m.E1
    d = 1 - m.nu12 * nu21
    return np.array([[m.E1 / d, m.nu12 * m.E2 / d, 0], [m.nu12 * m.E2 / d, m.E2 / d, 0],
                     [0, 0, m.G12]])


def qbar(m: OrthotropicMaterial, degrees: float) -> np.ndarray:
    """Reddy eq. 2.3.17 (Jones eq. 2.85): the turned stiffness, written out term by term."""
    Q = q_material(m)
    Q11, Q12, Q22, Q66 = Q[0, 0], Q[0, 1], Q[1, 1], Q[2, 2]
    c, s = np.cos(np.radians(degrees)), np.sin(np.radians(degrees))
    b11 = Q11 * c**4 + 2 * (Q12 + 2 * Q66) * s**2 * c**2 + Q22 * s**4
    b12 = (Q11 + Q22 - 4 * Q66) * s**2 * c**2 + Q12 * (s**4 + c**4)
    b22 = Q11 * s**4 + 2 * (Q12 + 2 * Q66) * s**2 * c**2 + Q22 * c**4
    b16 = (Q11 - Q12 - 2 * Q66) * s * c**3 + (Q12 - Q22 + 2 * Q66) * s**3 * c
    b26 = (Q11 - Q12 - 2 * Q66) * s**3 * c + (Q12 - Q22 + 2 * Q66) * s * c**3
    b66 = (Q11 + Q22 - 2 * Q12 - 2 * Q66) * s**2 * c**2 + Q66 * (s**4 + c**4)
    return np.array([[b11, b12, b16], [b12, b22, b26], [b16, b26, b66]])


def stress_to_material(sig: np.ndarray, degrees: float) -> np.ndarray:
    """Stresses (sx, sy, txy) turned to axes at ``degrees`` (Jones eq. 2.76)."""
    c, s = np.cos(np.radians(degrees)), np.sin(np.radians(degrees))
    Ts = np.array([[c * c, s * s, 2 * s * c], [s * s, c * c, -2 * s * c],
                   [-s * c, s * c, c * c - s * s]])
    return Ts @ sig


# --- small models assembled here -----------------------------------------------------------------


def dofs(g) -> np.ndarray:
    return (6 * g.conn[:, :, None] + np.arange(6)).reshape(len(g), 18)


def assemble(g, n: int, K: np.ndarray | None = None) -> sp.csr_matrix:
    """Sparse global matrix of element matrices ``K`` (default the group's stiffness)."""
    K = g.K if K is None else K
    d = dofs(g)
    rows = np.broadcast_to(d[:, :, None], K.shape).ravel()
    cols = np.broadcast_to(d[:, None, :], K.shape).ravel()
    return sp.coo_matrix((K.ravel(), (rows, cols)), shape=(6 * n, 6 * n)).tocsr()


def solve_fixed(K: sp.csr_matrix, F: np.ndarray, fixed: np.ndarray) -> np.ndarray:
    """Solve ``K u = F`` with the DOFs ``fixed`` (bool, (N,)) held at zero."""
    free = np.flatnonzero(~fixed)
    u = np.zeros(len(F))
    u[free] = spsolve(K[free][:, free].tocsc(), F[free])
    return u



def constant_field(X: np.ndarray, eps, kap) -> np.ndarray:
    """(n, 6) nodal values of uniform membrane strains ``eps`` and curvatures ``kap`` (x-y plane).

    ``u = ex x + gxy/2 y``, ``v = gxy/2 x + ey y`` (no rigid turn: the drilling rotation
    ``(v,x - u,y)/2`` is 0), ``w = -(kx x^2 + ky y^2 + kxy x y)/2`` (CLPT: ``kappa = -(w,xx,
    w,yy, 2 w,xy)``), ``theta_x = w,y``, ``theta_y = -w,x``.
    """
    x, y = X[:, 0], X[:, 1]
    d = np.zeros((len(X), 6))
    d[:, 0] = eps[0] * x + 0.5 * eps[2] * y
    d[:, 1] = 0.5 * eps[2] * x + eps[1] * y
    d[:, 2] = -0.5 * (kap[0] * x**2 + kap[1] * y**2 + kap[2] * x * y)
    d[:, 3] = -(kap[1] * y + 0.5 * kap[2] * x)
    d[:, 4] = kap[0] * x + 0.5 * kap[2] * y
    return d


# --- one layer is the homogeneous shell ----------------------------------------------------------

@pytest.mark.parametrize("cls", [Shell, CorotShell])
def test_one_isotropic_layer_is_the_homogeneous_shell(cls):
    """Same stiffness (local and global), masses and outputs to 1e-12, whatever the layer angle
    and direction (an isotropic layer has no preferred axis)."""
    X = np.array([[0, 0, 0], [2.0, 0.3, 0.1], [0.4, 1.7, -0.2], [2.2, 2.0, 0.3]])
    conn = np.array([[0, 1, 2], [1, 3, 2]])
    h = 0.05
    ref = cls("a", conn, X, 3, E=STEEL.E, nu=STEEL.nu, h=h, rho=STEEL.rho)
    lam = cls("b", conn, X, 3, section=laminate([37.0], h, STEEL), direction=[0.3, 1.0, 0.2])
    assert np.abs(lam.laminate.B).max() <= 1e-12 * np.abs(lam.laminate.D).max() / h
    for a, b in ((ref.K_local, lam.K_local), (ref.K, lam.K),
                 (ref.mass(), lam.mass()), (ref.mass(lumped=True), lam.mass(lumped=True))):
        assert np.abs(a - b).max() <= 1e-12 * np.abs(a).max()
    st = state_of(1e-3 * rng.normal(size=(len(X), 6)))
    want = ref.outputs(st)
    got = lam.outputs(st)
    for k in ("Nxx_element", "Nyy_element", "Nxy_element", "Mxx_element", "Myy_element",
              "Mxy_element"):
        assert got[k] == pytest.approx(want[k], rel=1e-12, abs=1e-12 * np.abs(want[k]).max())
    # the one layer's surfaces are the homogeneous shell's (axes turned, stresses the same)
    for where in ("top", "bottom"):
        sx, sy, sxy = (want[f"s{c}_{where}_element"] for c in ("xx", "yy", "xy"))
        ang = lam.laminate.phi + np.radians(37.0)
        c, s = np.cos(ang), np.sin(ang)
        s11 = c * c * sx + s * s * sy + 2 * s * c * sxy
        assert got[f"s_layer1_{where}_mat11"] == pytest.approx(s11, rel=1e-10,
                                                               abs=1e-10 * np.abs(sx).max())


# --- CLT matrices and the coupled patch test -----------------------------------------------------

def test_cross_ply_abd_against_the_closed_forms():
    """[0/90/90/0], layers t = h/4: ``D11 = (14 Q11 + 2 Q22) t^3/3``, ``D22 = (14 Q22 + 2 Q11)
    t^3/3``, ``D12 = Q12 h^3/12``, ``D66 = Q66 h^3/12``, ``A = h (Q11 + Q22)/2 ...``, ``B = 0``;
    [0/90], t = h/2: ``B11 = -B22 = (Q22 - Q11) h^2/8``, other B zero."""
    t = 0.0025
    X, conn = patch()
    Q = q_material(CFRP)
    g = Shell("p", conn, X, 3, section=laminate([0, 90, 90, 0], t))
    lam = g.laminate
    phi = lam.phi                                  # each facet's e1 from global x
    h = 4 * t
    D = np.array([[(14 * Q[0, 0] + 2 * Q[1, 1]) * t**3 / 3, Q[0, 1] * h**3 / 12, 0],
                  [Q[0, 1] * h**3 / 12, (14 * Q[1, 1] + 2 * Q[0, 0]) * t**3 / 3, 0],
                  [0, 0, Q[2, 2] * h**3 / 12]])
    A = h * np.array([[(Q[0, 0] + Q[1, 1]) / 2, Q[0, 1], 0], [Q[0, 1], (Q[0, 0] + Q[1, 1]) / 2, 0],
                      [0, 0, Q[2, 2]]])
    assert np.ptp(phi) > 1.0                        # the facets' e1 point many ways
    for e in range(len(g)):                        # each facet's matrices in global axes
        T = to_facet(phi[e])
        np.testing.assert_allclose(T.T @ lam.D[e] @ T, D, rtol=0, atol=1e-12 * D.max())
        np.testing.assert_allclose(T.T @ lam.A[e] @ T, A, rtol=0, atol=1e-12 * A.max())
    assert np.abs(lam.B).max() <= 1e-12 * A.max() * h
    anti = Shell("p", conn, X, 3, section=laminate([0, 90], 2 * t)).laminate
    B = np.diag([(Q[1, 1] - Q[0, 0]) * h**2 / 8, (Q[0, 0] - Q[1, 1]) * h**2 / 8, 0])
    for e in range(len(g)):
        T = to_facet(phi[e])
        np.testing.assert_allclose(T.T @ anti.B[e] @ T, B, rtol=0, atol=1e-12 * np.abs(B).max())
    assert anti.h == pytest.approx(h) and anti.rho_h == pytest.approx(CFRP.rho * h)


def to_facet(phi: float) -> np.ndarray:
    """Engineering strains, global axes -> a facet's (its e1 at ``-phi`` from global x, where
    ``phi`` is the angle of global x from e1): Jones eq. 2.80 at ``-phi``. A stiffness ``M_f``
    of the facet axes is ``T^T M_f T`` in the global axes (the same energy)."""
    c, s = np.cos(-phi), np.sin(-phi)
    return np.array([[c * c, s * s, c * s], [s * s, c * c, -c * s],
                     [-2 * c * s, 2 * c * s, c * c - s * s]])


def test_coupled_patch_test_of_an_unsymmetric_laminate():
    """Membrane strains and curvatures together, [30/-60/15] (A, B, D all full): the boundary
    nodes of the distorted patch take the exact constant field, the inner nodes solve for it
    exactly, and N, M are [[A, B], [B, D]] [eps; kappa] in every element."""
    X, conn = patch()
    g = Shell("p", conn, X, 3, section=laminate([30, -60, 15], 0.004))
    eps, kap = np.array([1e-3, -4e-4, 6e-4]), np.array([0.05, -0.02, 0.03])
    exact = constant_field(X, eps, kap)
    K = assemble(g, len(X)).toarray()
    inner, outer = np.arange(24, 48), np.arange(24)
    d = exact.ravel().copy()
    d[inner] = np.linalg.solve(K[np.ix_(inner, inner)], -K[np.ix_(inner, outer)] @ d[outer])
    np.testing.assert_allclose(d.reshape(-1, 6), exact, rtol=0, atol=1e-10 * np.abs(exact).max())
    out = g.outputs(state_of(exact))
    lam = g.laminate
    for e in range(len(g)):
        T = to_facet(lam.phi[e])
        el, kl = T @ eps, T @ kap
        N = lam.A[e] @ el + lam.B[e] @ kl
        M = lam.B[e] @ el + lam.D[e] @ kl
        got = np.array([out[k + "_element"][e] for k in ("Nxx", "Nyy", "Nxy", "Mxx", "Myy",
                                                           "Mxy")])
        np.testing.assert_allclose(got, np.r_[N, M], rtol=0,
                                   atol=1e-10 * np.abs(np.r_[N, M]).max())


# --- the antisymmetric cross-ply: an in-plane force bends it -------------------------------------

def test_antisymmetric_cross_ply_bends_under_an_in_plane_force():
    """A free square [0/90] plate (a = 1, h = 0.01), uniform edge force Nx = 1 on x = 0 and
    x = a, interior nodes jittered: the CLPT solution is uniform, ``[eps; kappa] = ABD^-1 [Nx, 0,
    0, 0, 0, 0]``, with ``kappa_x, kappa_y != 0`` from B alone. The edge load is the work
    equivalent of the traction on the OPT's edge displacement: ``Nx L/2`` at the ends of each
    side of length L and the drilling moments ``-+ alpha_b Nx L^2/12`` at its start and end
    (counter-clockwise along the boundary; ``alpha_b = 3/2``, Felippa 2003, eq. 4.5). The node at
    the origin is held (the exact field vanishes there with its rotations); every node must take
    the exact field."""
    n, a, t = 8, 1.0, 0.005
    X, tri, ids = square_plate_mesh(n, a)
    inner = ~(np.isclose(X[:, :2], 0) | np.isclose(X[:, :2], a)).any(axis=1)
    X[inner, :2] += rng.uniform(-0.25, 0.25, size=(inner.sum(), 2)) * a / n
    g = Shell("p", tri - 1, X, 3, section=laminate([0, 90], t))
    Q = q_material(CFRP)
    h = 2 * t
    A = h * np.array([[(Q[0, 0] + Q[1, 1]) / 2, Q[0, 1], 0],
                      [Q[0, 1], (Q[0, 0] + Q[1, 1]) / 2, 0], [0, 0, Q[2, 2]]])
    B = np.diag([(Q[1, 1] - Q[0, 0]) * h**2 / 8, (Q[0, 0] - Q[1, 1]) * h**2 / 8, 0])
    D = h**3 / 12 * np.array([[(Q[0, 0] + Q[1, 1]) / 2, Q[0, 1], 0],
                              [Q[0, 1], (Q[0, 0] + Q[1, 1]) / 2, 0], [0, 0, Q[2, 2]]])
    Nx = 1.0
    sol = np.linalg.solve(np.block([[A, B], [B, D]]), [Nx, 0, 0, 0, 0, 0])
    eps, kap = sol[:3], sol[3:]
    assert abs(kap[0]) > 0.1 * abs(eps[0]) / h                  # it does bend
    F = np.zeros((len(X), 6))
    L = a / n
    for x, sign in ((a, 1), (0.0, -1)):                         # x = a goes up, x = 0 down
        side = np.flatnonzero(np.isclose(X[:, 0], x))
        side = side[np.argsort(sign * X[side, 1])]             # counter-clockwise order
        for i, j in zip(side[:-1], side[1:], strict=True):
            F[[i, j], 0] += sign * Nx * L / 2
            F[i, 5] -= 1.5 * Nx * L**2 / 12
            F[j, 5] += 1.5 * Nx * L**2 / 12
    fixed = np.zeros((len(X), 6), dtype=bool)
    fixed[0] = True
    u = solve_fixed(assemble(g, len(X)), F.ravel(), fixed.ravel()).reshape(-1, 6)
    exact = constant_field(X, eps, kap)
    np.testing.assert_allclose(u, exact, rtol=0, atol=1e-9 * np.abs(exact).max())
    centre = int(np.argmin(np.linalg.norm(X[:, :2] - a / 2, axis=1)))
    w = -0.5 * (kap[0] * X[centre, 0] ** 2 + kap[1] * X[centre, 1] ** 2)
    assert u[centre, 2] == pytest.approx(w, rel=1e-9)


# --- Navier: the simply supported symmetric cross-ply plate --------------------------------------

def _triangle_rule(n: int = 4):
    """Area coordinates (nq, 3) and weights (sum 1): collapsed tensor Gauss (degree 2n - 2)."""
    g, w = legendre.leggauss(n)
    g, w = (g + 1) / 2, w / 2
    s, t = np.meshgrid(g, g, indexing="ij")
    ws = (np.outer(w, w) * (1 - s)).ravel() * 2
    xi, eta = s.ravel(), (t * (1 - s)).ravel()
    return np.column_stack([1 - xi - eta, xi, eta]), ws


def navier_plate(n: int, angles, t: float, a: float = 1.0) -> tuple[float, Shell]:
    """Centre deflection of the n x n simply supported plate under ``sin(pi x/a) sin(pi y/a)``.

    Supports as tests/test_shell.py's "hard" simple support: ``w = 0`` on the edges, the
    rotation about each edge's normal (``w`` along it) zero, in-plane motion held (a symmetric
    laminate's membrane is uncoupled). Load: ``int q N_a dA`` with the linear ``N_a``.
    """
    X, tri, ids = square_plate_mesh(n, a)
    g = Shell("p", tri - 1, X, 3, section=laminate(angles, t))
    L, w = _triangle_rule()
    P = np.einsum("qa,eai->eqi", L, X[tri - 1])                     # (E, nq, 3)
    q = np.sin(np.pi * P[..., 0] / a) * np.sin(np.pi * P[..., 1] / a)
    fa = np.einsum("eq,q,qa->ea", q, w, L) * g.area[:, None]        # (E, 3)
    F = np.zeros((len(X), 6))
    np.add.at(F[:, 2], tri - 1, fa)
    xe = np.isclose(X[:, 0], 0) | np.isclose(X[:, 0], a)
    ye = np.isclose(X[:, 1], 0) | np.isclose(X[:, 1], a)
    fixed = np.zeros((len(X), 6), dtype=bool)
    fixed[:, [0, 1, 5]] = True
    fixed[xe | ye, 2] = True
    fixed[xe, 3] = True
    fixed[ye, 4] = True
    u = solve_fixed(assemble(g, len(X)), F.ravel(), fixed.ravel()).reshape(-1, 6)
    centre = int(np.argmin(np.linalg.norm(X[:, :2] - a / 2, axis=1)))
    return float(u[centre, 2]), g


def test_simply_supported_cross_ply_plate_against_navier():
    """[0/90/90/0], a/h = 100, Reddy's material: within 1 % on 16 x 16, converging at order
    about 2 (DKT deflections)."""
    t, a = 0.0025, 1.0
    Q = q_material(CFRP)
    h = 4 * t
    D11 = (14 * Q[0, 0] + 2 * Q[1, 1]) * t**3 / 3
    D22 = (14 * Q[1, 1] + 2 * Q[0, 0]) * t**3 / 3
    D12, D66 = Q[0, 1] * h**3 / 12, Q[2, 2] * h**3 / 12
    w0 = 1.0 / (np.pi**4 / a**4 * (D11 + 2 * (D12 + 2 * D66) + D22))
    w = {n: navier_plate(n, [0, 90, 90, 0], t)[0] for n in (4, 8, 16)}
    assert abs(w[16] / w0 - 1) < 0.01, (w, w0)
    err = np.array([abs(w[n] - w0) for n in (4, 8, 16)])
    assert err[2] < err[1] < err[0]
    order = -np.polyfit(np.log([4, 8, 16]), np.log(err), 1)[0]
    assert order > 1.5, (err, order)


# --- invariance and layer stresses of an angle ply -----------------------------------------------

def test_angle_ply_turned_with_its_direction_is_the_same_plate():
    """[45/-45]s: the layer angles turned by +30 degrees with the direction turned by -30 about
    the normal put every fibre where it was: the same deflections and layer stresses."""
    w1, g1 = navier_plate(8, [45, -45, -45, 45], 0.0025)
    X, tri, _ = square_plate_mesh(8)
    c, s = np.cos(np.radians(-30)), np.sin(np.radians(-30))
    g2 = Shell("p", tri - 1, X, 3, section=laminate([75, -15, -15, 75], 0.0025),
               direction=[c, s, 0.0])
    np.testing.assert_allclose(g2.K, g1.K, rtol=0, atol=1e-12 * np.abs(g1.K).max())
    st = state_of(constant_field(X, [1e-4, 2e-4, -1e-4], [0.01, -0.02, 0.015]))
    o1, o2 = g1.outputs(st), g2.outputs(st)
    for k in o1:                        # all but the components in the (turned) chosen axes
        if not k.endswith(("_11", "_22", "_12")):
            np.testing.assert_allclose(o2[k], o1[k], rtol=0, atol=1e-10 * np.abs(o1[k]).max())
    assert w1 > 0


def test_layer_stresses_are_qbar_strains_in_material_axes():
    """A uniform strain-and-curvature state on the distorted patch, [45/-45]s and a direction
    at 20 degrees: at the bottom and top of each layer, ``Qbar (eps + z kappa)`` in the global
    axes (Reddy's explicit Qbar) turned to the layer's material axes, in every element."""
    X, conn = patch()
    t, angles, turn = 0.002, [45, -45, -45, 45], 20.0
    d = [np.cos(np.radians(turn)), np.sin(np.radians(turn)), 0.0]
    g = Shell("p", conn, X, 3, section=laminate(angles, t), direction=d)
    eps, kap = np.array([2e-4, -1e-4, 3e-4]), np.array([0.02, 0.01, -0.03])
    st = state_of(constant_field(X, eps, kap))
    out = g.outputs(st)
    z = np.array([-2, -1, 0, 1, 2]) * t
    for k, ang in enumerate(angles):
        theta = turn + ang                          # fibre angle from global x
        for where, zz in (("bottom", z[k]), ("top", z[k + 1])):
            sig = stress_to_material(qbar(CFRP, theta) @ (eps + zz * kap), theta)
            for i, c in enumerate(("mat11", "mat22", "mat12")):
                got = out[f"s_layer{k + 1}_{where}_{c}"]
                np.testing.assert_allclose(got, sig[i], rtol=0,
                                           atol=1e-9 * np.abs(sig).max())
    # co-rotational: a rigid rotation on top changes none of them (objective outputs) but the
    # global components, which turn with it: S' = R S R^T
    g = CorotShell("p", conn, X, 3, section=laminate(angles, t), direction=d)
    out = g.outputs(st)
    Rq = so3.expm(np.array([0.4, -1.1, 0.7]))
    moved = st.copy()
    moved.u[:] = (X + st.u) @ Rq.T - X
    moved.rot[:] = so3.matrix_to_quat(Rq @ st.rotation_matrices())
    again = g.outputs(moved)
    comps = ("xx", "yy", "zz", "xy", "yz", "xz")
    pairs = ((0, 0), (1, 1), (2, 2), (0, 1), (1, 2), (0, 2))
    fields = {key[:-3] for key in out if key.endswith("_xz")}
    for field in fields:
        S = np.zeros((len(conn), 3, 3))
        for c, (i, j) in zip(comps, pairs, strict=True):
            S[:, i, j] = S[:, j, i] = out[f"{field}_{c}"]
        turned = Rq @ S @ Rq.T
        for c, (i, j) in zip(comps, pairs, strict=True):
            np.testing.assert_allclose(again[f"{field}_{c}"], turned[:, i, j], rtol=0,
                                       atol=1e-9 * np.abs(S).max())
    assert len(fields) == 2 + 2 + 2 * len(angles)           # N, M, top, bottom, layer faces
    for key, val in out.items():
        if not key.endswith(comps):
            np.testing.assert_allclose(again[key], val, rtol=0,
                                       atol=1e-9 * np.abs(val).max() + 1e-300)


# --- mass ----------------------------------------------------------------------------------------

def test_mass_of_an_unsymmetric_stack_gives_the_rigid_motion_energy():
    """Steel under CFRP (density not symmetric about the mid-surface): for the rigid velocity
    ``v0 e2 + w e1 x r`` (r from the origin, on the mid-surface) the consistent mass gives
    ``1/2 int rho |v|^2 dV = 1/2 [m (v0^2 + w^2 <y^2>) A - 2 v0 w S A + w^2 I A]``, with ``m``,
    ``S``, ``I`` the mass, first moment and rotary inertia per area (the plate's ``<y^2>`` its
    mean of y^2); the lumped mass keeps the total mass."""
    X, conn = patch()
    t1, t2 = 0.003, 0.001
    sec = ShellSection("s", (Layer(STEEL, t1, 0.0), Layer(CFRP, t2, 30.0)))
    g = Shell("p", conn, X, 3, section=sec)
    z0, z1, z2 = -(t1 + t2) / 2, -(t1 + t2) / 2 + t1, (t1 + t2) / 2
    m = STEEL.rho * t1 + CFRP.rho * t2
    S = STEEL.rho * (z1**2 - z0**2) / 2 + CFRP.rho * (z2**2 - z1**2) / 2
    I = STEEL.rho * (z1**3 - z0**3) / 3 + CFRP.rho * (z2**3 - z1**3) / 3
    assert abs(S) > 0.1 * m * (t1 + t2) / 4
    v0, w = 0.7, 1.3
    d = np.zeros((len(X), 6))
    d[:, 1] = v0
    d[:, 2] = w * X[:, 1]                                   # (w e1 x r)_z = w y
    d[:, 3] = w
    Mg = assemble(g, len(X), g.mass()).toarray()
    area = 0.24 * 0.12
    y2 = 0.12**2 / 3                                       # mean of y^2 over 0 <= y <= 0.12
    want = 0.5 * (m * (v0**2 + w**2 * y2) * area - 2 * v0 * w * S * area + w**2 * I * area)
    assert 0.5 * d.ravel() @ Mg @ d.ravel() == pytest.approx(want, rel=1e-12)
    Ml = assemble(g, len(X), g.mass(lumped=True)).toarray()
    ones = np.zeros((len(X), 6))
    ones[:, 0] = 1.0
    assert ones.ravel() @ Ml @ ones.ravel() == pytest.approx(m * area, rel=1e-12)


# --- co-rotational laminates ---------------------------------------------------------------------

def oblique_patch():
    X, conn = patch()
    return X @ so3.expm(np.array([0.7, 0.2, 0.4])).T, conn


def test_corotational_laminate_tangent_and_rigid_motion():
    """[30/-60/15] on the oblique distorted patch (B, A16, D16 all nonzero): zero force and
    energy under a large rigid motion; the tangent equals central differences to 1e-6 in a
    deformed, turned state."""
    X, conn = oblique_patch()
    n = len(X)
    g = CorotShell("p", conn, X, 3, section=laminate([30, -60, 15], 0.004),
                   direction=[1.0, 0.5, 0.2])
    Q = so3.expm(1.1 * np.array([1.0, 2.0, -1.5]) / np.linalg.norm([1.0, 2.0, -1.5]))
    st = State.reference(3, n)
    st.u[:] = X @ Q.T + np.array([2.0, -3.0, 0.7]) - X
    st.rot[:] = so3.matrix_to_quat(np.broadcast_to(Q, (n, 3, 3)))
    scale = np.abs(g.K).max() * 0.24
    assert np.abs(g.internal_force(st)).max() <= 1e-12 * scale
    assert np.abs(g.energy(st)).max() <= 1e-12 * scale * 0.24
    # a deformed state carried by a large rotation
    st = State.reference(3, n)
    st.u[:] = (X + 0.01 * rng.normal(size=(n, 3))) @ Q.T + np.array([0.3, -1.2, 2.0]) - X
    st.rot[:] = so3.matrix_to_quat(Q @ so3.expm(0.2 * rng.normal(size=(n, 3))))
    f, K = g.evaluate(st)
    Kg = assemble(g, n, K).toarray()
    step = 1e-6
    cols = []
    for j in range(6 * n):
        du = np.zeros((n, 6))
        du.flat[j] = step
        fp, fm = (_assembled_force(g, n, _moved(st, s * du)) for s in (1, -1))
        cols.append((fp - fm) / (2 * step))
    Kfd = np.column_stack(cols)
    assert np.abs(Kg - Kfd).max() <= 1e-6 * np.abs(Kfd).max()
    assert np.abs(g.geometric_stiffness(st, g.stress(st))).max() > 1e-3 * np.abs(K).max()


def _moved(st: State, du: np.ndarray) -> State:
    s = st.copy()
    s.increment(du, np.zeros(len(du), dtype=bool))
    return s


def _assembled_force(g, n: int, st: State) -> np.ndarray:
    F = np.zeros(6 * n)
    np.add.at(F, dofs(g), g.internal_force(st))
    return F


@pytest.mark.skipif(not shell_jit.enabled(), reason="numba is not installed")
def test_the_compiled_kernel_takes_laminates(monkeypatch):
    """The kernel reads the local stiffness, coupling included: its numbers are the numpy
    code's to 1e-13 for an unsymmetric laminate."""
    n = 8
    x = np.linspace(0.0, 1.0, n + 1)
    XX, YY = np.meshgrid(x, x)
    X = np.column_stack([XX.ravel(), YY.ravel(), 0.3 * np.sin(3 * XX.ravel()) * YY.ravel()])
    k = (np.arange(n)[None, :] + (n + 1) * np.arange(n)[:, None]).ravel()
    conn = np.concatenate([np.column_stack([k, k + 1, k + n + 2]),
                           np.column_stack([k, k + n + 2, k + n + 1])])
    g = CorotShell("s", conn, X, 3, section=laminate([0, 45, 90], 0.01))
    assert g._compiled()
    Q = so3.expm(2.0 * np.array([1.0, -2.0, 0.5]) / np.linalg.norm([1.0, -2.0, 0.5]))
    st = State.reference(3, len(X))
    st.u[:] = (X + 0.02 * rng.normal(size=X.shape)) @ Q.T - X
    st.rot[:] = so3.matrix_to_quat(Q @ so3.expm(0.5 * rng.normal(size=(len(X), 3))))
    f, K = g.evaluate(st)
    with monkeypatch.context() as m:
        m.setenv("FEM_JIT", "0")
        f_ref, K_ref = g.evaluate(st)
    assert np.abs(f - f_ref).max() <= 1e-13 * np.abs(f_ref).max()
    assert np.abs(K - K_ref).max() <= 1e-13 * np.abs(K_ref).max()


# --- decks: sections, materials, quadrilaterals --------------------------------------------------

def laminate_deck(n: int = 2, **element) -> dict:
    """A clamped n x n [0/90]s plate under pressure, with the section from the deck."""
    X, tri, ids = square_plate_mesh(n)
    edge = (np.isclose(X[:, :2], 0) | np.isclose(X[:, :2], 1)).any(axis=1)
    el = {"name": "plate", "type": "shell", "section": "cross", "connectivity": tri.tolist(),
          **element}
    return {"model": {"dim": 3},
            "materials": [{"name": "cfrp", "type": "orthotropic", "E1": CFRP.E1, "E2": CFRP.E2,
                           "G12": CFRP.G12, "nu12": CFRP.nu12, "density": CFRP.rho},
                          {"name": "steel", "E": STEEL.E, "G": STEEL.G}],
            "shell_sections": [{"name": "cross", "layers": [
                {"material": "cfrp", "thickness": 0.0025, "angle": a} for a in (0, 90, 90, 0)]}],
            "nodes": {"coordinates": X.tolist()},
            "elements": [el],
            "supports": [{"nodes": ids[edge].tolist(), "fixed": ["all"]}],
            "loads": [{"name": "p", "elements": "plate", "pressure": 1.0}],
            "steps": [{"name": "s", "type": "static"}]}


def test_a_deck_section_is_the_section_built_here():
    from fem.io.deck import from_dict

    dk = from_dict(laminate_deck())
    g = dk.model.group("plate")
    ref = Shell("p", g.conn, dk.model.X, 3, section=laminate([0, 90, 90, 0], 0.0025))
    np.testing.assert_allclose(g.K, ref.K, rtol=0, atol=1e-14 * np.abs(ref.K).max())
    np.testing.assert_allclose(g.mass(), ref.mass(), rtol=0, atol=1e-14 * np.abs(ref.mass()).max())


@pytest.mark.parametrize("change, key, words", [
    ({"material": "steel"}, "elements[0].material", "either section"),
    ({"section": None}, "elements[0]", "got neither"),
    ({"section": "crosss"}, "elements[0].section", "unknown shell section 'crosss'"),
    ({"direction": [0.0, 0.0, 2.0]}, "elements[0].direction", "normal to the triangle"),
    ({"direction": [0.0, 0.0, 0.0]}, "elements[0].direction", "nonzero vector"),
    ({"section": None, "material": "steel", "thickness": 0.01, "direction": [0, 0, -1.0]},
     "elements[0].direction", "normal to the triangle"),
    ({"section": None, "material": "steel", "thickness": 0.01, "direction": [0, 0.0]},
     "elements[0].direction", "nonzero vector [x, y, z]"),
    ({"section": None, "material": "cfrp", "thickness": 0.01}, "elements[0].material",
     "orthotropic material 'cfrp'"),
    ({"section": None, "material": "steel"}, "elements[0].thickness", "missing required key"),
])
def test_shell_section_deck_errors(change, key, words):
    deck = laminate_deck()
    el = {k: v for k, v in {**deck["elements"][0], **change}.items() if v is not None}
    err = deck_error({**deck, "elements": [el]})
    assert err.key == key and words in err.message, err


@pytest.mark.parametrize("material, key, words", [
    ({"nu12": 5.1}, "materials[0].nu12", "nu12^2 < E1 / E2"),
    ({"E": 1.0}, "materials[0].E", "not used by type = \"orthotropic\""),
    ({"G12": None}, "materials[0].G12", "missing required key 'G12'"),
    ({"type": "isotropic", "E": 1.0, "nu": 0.3}, "materials[0].E1", "only by orthotropic"),
])
def test_orthotropic_material_deck_errors(material, key, words):
    deck = laminate_deck()
    mat = {k: v for k, v in {**deck["materials"][0], **material}.items() if v is not None}
    err = deck_error({**deck, "materials": [mat, deck["materials"][1]]})
    assert err.key == key and words in err.message, err


def test_layer_deck_errors():
    deck = laminate_deck()
    for layers, key, words in (
            ([], "shell_sections[0].layers", "a list of tables"),
            ([{"material": "cfrp"}], "shell_sections[0].layers[0].thickness", "missing"),
            ([{"material": "glass", "thickness": 0.1}], "shell_sections[0].layers[0].material",
             "unknown material 'glass'"),
            ([{"material": "cfrp", "thickness": -0.1}], "shell_sections[0].layers[0].thickness",
             "positive"),
            ([{"material": "cfrp", "thickness": 0.1}] * 257, "shell_sections[0].layers",
             "at most 256")):
        err = deck_error({**deck, "shell_sections": [{"name": "cross", "layers": layers}]})
        assert err.key == key and words in err.message, err
    # a beam cannot take an orthotropic material
    bad = {**deck, "sections": [{"name": "s", "A": 1.0, "Iy": 1.0, "Iz": 1.0, "J": 1.0}],
           "elements": deck["elements"] + [{"name": "b", "type": "beam", "material": "cfrp",
                                            "section": "s", "connectivity": [[1, 2]]}]}
    err = deck_error(bad)
    assert err.key == "elements[1].material" and "isotropic material" in err.message


def quad_plate(n: int = 6):
    """An n x n quad mesh of the unit square, interior nodes jittered (the diagonals differ),
    and its triangles split along each quad's shorter diagonal, computed here."""
    X, _, ids = square_plate_mesh(n)
    inner = ~(np.isclose(X[:, :2], 0) | np.isclose(X[:, :2], 1)).any(axis=1)
    X[inner, :2] += np.random.default_rng(5).uniform(-0.3, 0.3, size=(inner.sum(), 2)) / n
    k = (np.arange(n)[None, :] + (n + 1) * np.arange(n)[:, None]).ravel()
    quads = np.column_stack([k, k + 1, k + n + 2, k + n + 1])
    tri = []
    for a, b, c, d in quads:
        if np.linalg.norm(X[d] - X[b]) < np.linalg.norm(X[c] - X[a]):
            tri += [(a, b, d), (b, c, d)]
        else:
            tri += [(a, b, c), (a, c, d)]
    return X, quads, np.array(tri), ids


def test_quadrilaterals_from_a_mesh_and_rows_are_the_triangles_given_explicitly(tmp_path):
    """A Gmsh file of quads (physical group "plate", boundary lines "edge") through meshio, the
    same quads as connectivity rows of 4 nodes, and the triangles of the shorter diagonals as
    rows of 3: the same model (stiffness, deflections); the results file draws triangles, maps
    them to their quads (source_cell) and holds the layer stresses, also as XDMF cell data."""
    import h5py
    import meshio

    from fem.io import deck as deck_io
    from fem.run import run

    X, quads, tri, ids = quad_plate()
    edge = np.flatnonzero((np.isclose(X[:, :2], 0) | np.isclose(X[:, :2], 1)).any(axis=1))
    mesh = meshio.Mesh(X, [("quad", quads), ("vertex", edge[:, None])],
                       cell_data={"gmsh:physical": [np.full(len(quads), 1),
                                                    np.full(len(edge), 2)],
                                  "gmsh:geometrical": [np.full(len(quads), 1),
                                                       np.full(len(edge), 2)]},
                       field_data={"plate": np.array([1, 2]), "edge": np.array([2, 0])})
    mesh.write(tmp_path / "plate.msh", file_format="gmsh22", binary=False)
    base = laminate_deck()
    del base["nodes"], base["elements"], base["supports"]
    decks = {"mesh": {**base, "nodes": {"mesh": "plate.msh"},
                      "elements": [{"name": "plate", "type": "shell", "section": "cross",
                                    "mesh_group": "plate"}],
                      "supports": [{"nodes": "edge", "fixed": ["all"]}]}}
    for name, rows in (("quads", quads + 1), ("triangles", tri + 1)):
        decks[name] = {**base, "nodes": {"coordinates": X.tolist()},
                       "elements": [{"name": "plate", "type": "shell", "section": "cross",
                                     "connectivity": rows.tolist()}],
                       "supports": [{"nodes": (edge + 1).tolist(), "fixed": ["all"]}]}
    w = {}
    for name, deck in decks.items():
        (tmp_path / f"{name}.toml").write_text(_toml(deck))
        dk = deck_io.load(str(tmp_path / f"{name}.toml"))
        g = dk.model.group("plate")
        assert np.array_equal(g.conn, tri)
        result = run(dk, str(tmp_path / f"{name}.h5"))
        with h5py.File(result.h5, "r") as f:
            w[name] = f["steps/s/displacement"][-1]
            grp = f["model/groups/plate"]
            assert grp.attrs["cell_type"] == "triangle" and grp["connectivity"].shape == tri.shape
            src = np.arange(len(tri)) if name == "triangles" else np.repeat(np.arange(len(quads)),
                                                                            2)
            assert np.array_equal(grp["source_cell"][()], src)
            s11 = f["steps/s/elements/plate/s_layer4_top_mat11"][-1]
            assert np.abs(s11).max() > 0
        xdmf = open(result.xdmf[0]).read()
        assert "Triangle" in xdmf and "s_layer4_top_mat11" in xdmf
    assert np.abs(w["triangles"]).max() > 0
    for name in ("mesh", "quads"):
        np.testing.assert_allclose(w[name], w["triangles"], rtol=0,
                                   atol=1e-13 * np.abs(w["triangles"]).max())


def _toml(deck: dict) -> str:
    from toml_writer import dumps

    return dumps(deck)


def test_quadrilateral_rows_errors_and_warped_cells(caplog):
    X, quads, tri, ids = quad_plate(3)
    deck = laminate_deck()
    deck["nodes"] = {"coordinates": X.tolist()}
    deck["supports"] = [{"nodes": [1, 2, 3, 4], "fixed": ["all"]}]
    rows = (quads + 1).tolist()
    bad = rows[:2] + [rows[2][:3]] + rows[3:]
    err = deck_error({**deck, "elements": [{**deck["elements"][0], "connectivity": bad}]})
    assert err.key == "elements[0].connectivity[2]" and "expected 4 node ids" in err.message
    five = [rows[0] + [rows[1][2]]]
    err = deck_error({**deck, "elements": [{**deck["elements"][0], "connectivity": five}]})
    assert err.key == "elements[0].connectivity[0]" and "or 4 (a quadrilateral" in err.message
    # corners out of order: a bow tie, folded over itself
    a, b, c, d = rows[4]
    err = deck_error({**deck, "elements": [{**deck["elements"][0],
                                            "connectivity": [[a, c, b, d]]}]})
    assert err.key == "elements[0].connectivity[0]" and "convex" in err.message
    # a warped quad: corner lifted, split anyway with a warning naming it
    from fem.io.deck import from_dict

    Xw = X.copy()
    Xw[rows[8][2] - 1, 2] = 0.2                     # the plate's corner: one quad
    deck["nodes"] = {"coordinates": Xw.tolist()}
    with caplog.at_level(logging.WARNING, logger="fem.elements.shell.cells"):
        dk = from_dict({**deck, "elements": [{**deck["elements"][0], "connectivity": rows}]})
    assert len(dk.model.group("plate")) == 2 * len(rows)
    assert any("1 warped quadrilateral" in r.message and "connectivity[8]" in r.message
               for r in caplog.records), caplog.records
