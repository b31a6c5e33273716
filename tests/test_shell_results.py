"""Shell results in global and chosen axes, at cells and nodes (issue 26, item 2).

References, each closed form derived here or cited:

* a membrane in uniform plane stress ``diag(s1, s2)`` (principal axes along the plate's x, y):
  its global tensor ``R diag(s1, s2, 0) R^T`` (``R`` the plate's rotation), in axes at ``beta``
  from x ``s11 = s1 c^2 + s2 s^2``, ``s22 = s1 s^2 + s2 c^2``, ``s12 = (s2 - s1) c s`` (Jones,
  *Mechanics of Composite Materials*, 2nd ed., 1999, eq. 2.76), von Mises ``sqrt(s1^2 - s1 s2 +
  s2^2)``; the facets reproduce it exactly (the OPT membrane's patch test), so every nodal and
  cell value is exact to round-off on any mesh;
* a cantilever under a tip moment ``M`` (width ``b``, thickness ``h``): beam theory's bending
  stress ``+-6 M / (b h^2)`` at the top and bottom, tension on the top for a moment turning the
  tip's +z fibres towards +x; the plate's clamped root holds the anticlastic curvature, which
  perturbs the stresses within about a width of the root (Timoshenko & Woinowsky-Krieger, *Theory
  of Plates and Shells*, 2nd ed., 1959, chapter 2, the anticlastic surface), so beyond it the
  nodes are checked;
* a two-layer [0/90] plate under a uniform in-plane force ``Nx``: the CLPT state ``[eps; kappa] =
  [[A, B], [B, D]]^-1 [Nx, 0, 0, 0, 0, 0]`` and the layer stresses ``Qbar_k (eps + z kappa)``
  (Reddy, *Mechanics of Laminated Composite Plates and Shells*, 2nd ed., 2004, eq. 3.3.14; the
  theory and the loads as in tests/test_shell_laminate.py).
"""

import h5py
import numpy as np
import pytest
from helpers import solve, square_plate_mesh
from test_shell import oblique
from test_shell_laminate import CFRP, assemble, laminate, q_material, qbar, solve_fixed

from fem.elements.base import nodal_average
from fem.elements.shell.group import DEFAULT_RESULTS, RESULTS, Shell

E, NU, H = 2.0e5, 0.3, 0.01
COMPS = ("xx", "yy", "zz", "xy", "yz", "xz")
PAIRS = ((0, 0), (1, 1), (2, 2), (0, 1), (1, 2), (0, 2))


def tensor(values: dict, field: str) -> np.ndarray:
    """(m, 3, 3) the symmetric tensors of ``<field>_xx ... <field>_xz`` in ``values``."""
    first = np.asarray(values[f"{field}_xx"])
    S = np.zeros(first.shape + (3, 3))
    for c, (i, j) in zip(COMPS, PAIRS, strict=True):
        S[..., i, j] = S[..., j, i] = values[f"{field}_{c}"]
    return S


def distorted_plate(n: int, a: float, rng) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The ``a x a`` square of ``n x n`` squares split in two, interior nodes moved by up to 0.3
    of a square at random; returns (coords (N, 3), triangles (0-based), node ids)."""
    X, tri, ids = square_plate_mesh(n, a)
    inner = ~(np.isclose(X[:, :2], 0) | np.isclose(X[:, :2], a)).any(axis=1)
    X[inner, :2] += rng.uniform(-0.3, 0.3, size=(inner.sum(), 2)) * a / n
    return X, tri - 1, ids


def edge_loads(X: np.ndarray, a: float, n: int, Nx: float, Ny: float) -> np.ndarray:
    """(N, 6) the work-equivalent nodal loads of the normal edge forces ``Nx``, ``Ny`` per length
    (x-y plane): ``q L / 2`` at the ends of each boundary segment of length ``L`` and the OPT's
    drilling moments ``-+ alpha_b q L^2 / 12`` at its start and end, counter-clockwise (Felippa,
    CMAME 192 (2003), eq. 4.5, ``alpha_b = 3/2``)."""
    F = np.zeros((len(X), 6))
    L = a / n
    sides = ((0, a, 1, Nx), (0, 0.0, -1, Nx), (1, a, -1, Ny), (1, 0.0, 1, Ny))
    for axis, at, order, q in sides:
        side = np.flatnonzero(np.isclose(X[:, axis], at))
        side = side[np.argsort(order * X[side, 1 - axis])]          # counter-clockwise
        out = 1.0 if at > 0 else -1.0
        for i, j in zip(side[:-1], side[1:], strict=True):
            F[[i, j], axis] += out * q * L / 2
            F[i, 5] -= 1.5 * q * L**2 / 12
            F[j, 5] += 1.5 * q * L**2 / 12
    return F


def plate_deck(X, tri, loads: np.ndarray, supports: list, element: dict | None = None,
               extra: dict | None = None) -> dict:
    """A deck of one shell group on ``X``, nodal loads ``(N, 6)`` (global) per node."""
    entries = [{"name": f"f{k}", "nodes": [int(k) + 1], "force": loads[k, :3].tolist(),
                "moment": loads[k, 3:].tolist()}
               for k in np.flatnonzero(np.abs(loads).max(axis=1) > 0)]
    deck = {"model": {"dim": 3},
            "materials": [{"name": "steel", "E": E, "nu": NU, "density": 7.8e-9}],
            "nodes": {"coordinates": X.tolist()},
            "elements": [{"name": "plate", "type": "shell", "material": "steel",
                          "thickness": H, "connectivity": (tri + 1).tolist(),
                          "results": list(RESULTS), **(element or {})}],
            "supports": supports, "loads": entries,
            "steps": [{"name": "s", "type": "static"}]}
    for key, value in (extra or {}).items():
        deck[key] = deck.get(key, []) + value if isinstance(value, list) else value
    return deck


def cantilever(nx: int, ny: int, length: float, width: float, rng=None, quads: bool = False):
    """A ``length x width`` plate of ``nx x ny`` rectangles (interior nodes moved by up to 0.2
    of a rectangle with ``rng``), as quadrilateral rows or split into two triangles each."""
    x, y = np.linspace(0, length, nx + 1), np.linspace(0, width, ny + 1)
    XX, YY = np.meshgrid(x, y)
    X = np.column_stack([XX.ravel(), YY.ravel(), np.zeros(XX.size)])
    if rng is not None:
        inner = ~(np.isclose(X[:, 0], 0) | np.isclose(X[:, 0], length)
                  | np.isclose(X[:, 1], 0) | np.isclose(X[:, 1], width))
        X[inner, :2] += rng.uniform(-0.2, 0.2, size=(inner.sum(), 2)) * length / nx
    k = (np.arange(nx)[None, :] + (nx + 1) * np.arange(ny)[:, None]).ravel()
    if quads:
        return X, np.column_stack([k, k + 1, k + nx + 2, k + nx + 1])
    return X, np.concatenate([np.column_stack([k, k + 1, k + nx + 2]),
                              np.column_stack([k, k + nx + 2, k + nx + 1])])


def tip_loads(X, length: float, width: float, ny: int, slot: int, total: float) -> np.ndarray:
    """(N, 6) a load ``total`` on DOF ``slot`` spread uniformly along the edge ``x = length``:
    ``total / width`` per length, half a segment's share at each end of each segment."""
    F = np.zeros((len(X), 6))
    tip = np.flatnonzero(np.isclose(X[:, 0], length))
    tip = tip[np.argsort(X[tip, 1])]
    for i, j in zip(tip[:-1], tip[1:], strict=True):
        F[[i, j], slot] += total / width * (X[j, 1] - X[i, 1]) / 2
    return F


def turned(F: np.ndarray, R: np.ndarray) -> np.ndarray:
    """(N, 6) nodal forces and moments turned by ``R``."""
    return np.hstack([F[:, :3] @ R.T, F[:, 3:] @ R.T])


# --- (a) uniform tension on a distorted mesh, out of the x-y plane --------------------------------

@pytest.mark.parametrize("s1, s2", [(100.0, 0.0), (100.0, 40.0), (-30.0, 70.0)])
def test_uniform_stress_is_uniform_at_every_node_of_a_distorted_oblique_plate(tmp_path, s1, s2):
    """Edge forces ``s1 h``, ``s2 h`` on a 6 x 6 plate of randomly distorted triangles turned out
    of the x-y plane, direction at 30 degrees from the plate's x: through the results file, every
    shell node has the global tensor ``R diag(s1, s2, 0) R^T`` (top, middle and bottom), the
    components in the chosen axes, von Mises ``sqrt(s1^2 - s1 s2 + s2^2)``, the principal
    stresses and direction and the frame, to 1e-10; a node only a beam has is NaN."""
    rng = np.random.default_rng(26)
    n, a = 6, 1.0
    X, tri, _ = distorted_plate(n, a, rng)
    R = oblique()
    beta = np.radians(30.0)
    d = R @ [np.cos(beta), np.sin(beta), 0.0]
    F = turned(edge_loads(X, a, n, s1 * H, s2 * H), R)
    Xg = np.vstack([X @ R.T, [[-0.5, -0.5, 0.5]]])                # + a beam-only node
    F = np.vstack([F, np.zeros(6)])
    beam = {"sections": [{"name": "rod", "A": 1e-4, "Iy": 1e-9, "Iz": 1e-9, "J": 2e-9}],
            "elements": [{"name": "rod", "type": "beam", "material": "steel", "section": "rod",
                          "connectivity": [[1, len(Xg)]]}]}
    deck = plate_deck(Xg, tri, F, [{"nodes": [1, len(Xg)], "fixed": ["all"]}],
                      {"direction": d.tolist()}, beam)
    solve(deck, tmp_path / "out.h5")
    with h5py.File(tmp_path / "out.h5", "r") as f:
        g = f["steps/s/nodal"]
        assert g["s_top_xx"].shape == (1, len(Xg)) and g["dir1"].shape == (1, len(Xg), 3)
        nodal = {k: g[k][-1] for k in g}
    shell, beam_node = slice(0, len(X)), len(X)
    assert all(np.all(np.isnan(v[beam_node])) for v in nodal.values())
    nodal = {k: v[shell] for k, v in nodal.items()}
    tol = 1e-10 * max(abs(s1), abs(s2))
    want = R @ np.diag([s1, s2, 0.0]) @ R.T
    for face in ("s_top", "s_mid", "s_bottom"):
        np.testing.assert_allclose(tensor(nodal, face), np.broadcast_to(want, (len(X), 3, 3)),
                                   rtol=0, atol=tol)
        c, s = np.cos(beta), np.sin(beta)
        for comp, value in (("11", s1 * c * c + s2 * s * s), ("22", s1 * s * s + s2 * c * c),
                            ("12", (s2 - s1) * c * s)):
            np.testing.assert_allclose(nodal[f"{face}_{comp}"], value, rtol=0, atol=tol)
        np.testing.assert_allclose(nodal[f"{face}_mises"], np.sqrt(s1**2 - s1 * s2 + s2**2),
                                   rtol=0, atol=tol)
        np.testing.assert_allclose(nodal[f"{face}_p1"], max(s1, s2), rtol=0, atol=tol)
        np.testing.assert_allclose(nodal[f"{face}_p2"], min(s1, s2), rtol=0, atol=tol)
        p1 = R[:, 0] if s1 > s2 else R[:, 1]                        # the plate's x or y
        p1 = p1 if p1 @ d > 0 else -p1                              # along dir1's side
        np.testing.assert_allclose(nodal[f"{face}_p1_dir"], np.broadcast_to(p1, (len(X), 3)),
                                   rtol=0, atol=1e-10)
    np.testing.assert_allclose(tensor(nodal, "N"), np.broadcast_to(H * want, (len(X), 3, 3)),
                               rtol=0, atol=H * tol)
    assert np.abs(tensor(nodal, "M")).max() <= H**2 * tol
    for key, vec in (("normal", R[:, 2]), ("dir1", d), ("dir2", np.cross(R[:, 2], d))):
        np.testing.assert_allclose(nodal[key], np.broadcast_to(vec, (len(X), 3)), rtol=0,
                                   atol=1e-12)
    np.testing.assert_allclose(nodal["thickness"], H, rtol=1e-14)


# --- (b) a cantilever plate under a tip moment ----------------------------------------------------

@pytest.mark.parametrize("nu", [0.0, 0.3])
def test_cantilever_plate_under_a_tip_moment_has_the_beam_bending_stress(nu):
    """A 4 x 1 plate (16 x 4 rectangles split in two) clamped at x = 0, an end moment ``M``
    about +y spread along x = 4: the nodal bending stress along the span is ``+6 M / (b h^2)``
    on the top (the tip's top fibres turn towards +x: tension) and ``-6 M / (b h^2)`` on the
    bottom, zero in the middle. With ``nu = 0`` the plate is the beam and the DKT reproduces its
    constant curvature: every node to 1e-9. With ``nu = 0.3`` the clamp holds the anticlastic
    curvature; its effect decays away from the root (the error falls every half width) and is
    below 2% beyond one width and 0.2% beyond two (1.1% and 0.10% on this mesh)."""
    length, width, M = 4.0, 1.0, 1e-4
    X, tri = cantilever(16, 4, length, width)
    F = tip_loads(X, length, width, 4, 4, M)
    root = np.flatnonzero(np.isclose(X[:, 0], 0)) + 1
    deck = plate_deck(X, tri, F, [{"nodes": root.tolist(), "fixed": ["all"]}],
                      {"direction": [1.0, 0.0, 0.0]})
    deck["materials"][0]["nu"] = nu
    _, sysm, state, _ = solve(deck)
    _, nodal = sysm.frame_outputs(state)
    sig = 6 * M / (width * H**2)
    err = np.maximum(np.abs(nodal["s_top_11"] / sig - 1), np.abs(nodal["s_bottom_11"] / sig + 1))
    np.testing.assert_allclose(nodal["s_top_xx"], nodal["s_top_11"], rtol=0, atol=1e-12 * sig)
    assert np.abs(nodal["s_mid_11"]).max() <= 1e-12 * sig
    if nu == 0.0:
        assert err.max() <= 1e-9, err.max()
        return
    x = np.unique(X[:, 0])
    worst = np.array([err[np.isclose(X[:, 0], xi)].max() for xi in x])
    assert np.all(np.diff(worst[::2]) < 0), worst                        # decays from the root
    assert worst[x >= width - 1e-9].max() <= 2e-2, worst
    assert worst[x >= 2 * width - 1e-9].max() <= 2e-3, worst
    assert worst[0] > 0.01                                               # the root's effect


def test_a_strip_rolled_into_a_half_circle_keeps_its_stresses_in_its_own_axes():
    """Co-rotational strip (nu = 0) under the end moment ``pi EI / L`` (a half circle,
    tests/test_shell_corot.py): the nodal bending stress along the strip is ``-+6 M / (b h^2)``
    on the top and bottom (``+e3`` is the inside of the curl) within 1e-4, and the global tensor
    turned with the strip, ``sigma t t^T`` with ``t = (cos kx, 0, sin kx)`` the arc's tangent at
    the node's place, within 2e-4 at the interior nodes (at the two end nodes, one facet's
    tangent)."""
    from test_shell_corot import EI, HS, WIDTH, L, strip_deck

    n = 20
    M = np.pi * EI / L
    deck = strip_deck(n, moment=M, increments=2)
    deck["elements"][0]["results"] = list(RESULTS)
    _, sysm, state, _ = solve(deck)
    cells, nodal = sysm.frame_outputs(state)
    sig = 6 * M / (WIDTH * HS**2)
    assert np.abs(nodal["s_top_11"] / -sig - 1).max() <= 1e-4
    assert np.abs(nodal["s_bottom_11"] / sig - 1).max() <= 1e-4
    assert np.abs(cells["strip"]["s_top_11"] / -sig - 1).max() <= 1e-4
    x = sysm.model.X[:, 0]
    t = np.column_stack([np.cos(np.pi * x / L), 0 * x, np.sin(np.pi * x / L)])
    inner = (x > 1e-9) & (x < L - 1e-9)
    np.testing.assert_allclose(nodal["dir1"][inner], t[inner], rtol=0, atol=1e-3)
    want = -sig * np.einsum("ni,nj->nij", t, t)
    assert np.abs(tensor(nodal, "s_top")[inner] - want[inner]).max() <= 2e-4 * sig


# --- (c) no checkerboard: the two triangles of a quadrilateral ------------------------------------

def quad_pairs(group) -> tuple[np.ndarray, np.ndarray]:
    """The two triangles of each quadrilateral of ``group`` (from its ``source_cell``)."""
    order = np.argsort(group.source, kind="stable")
    t1, t2 = order[0::2], order[1::2]
    assert np.array_equal(group.source[t1], group.source[t2])
    return t1, t2


def test_the_two_triangles_of_a_quadrilateral_agree_in_a_uniform_field():
    """Quadrilateral rows (6 x 6, jittered, turned out of plane) split into triangles, uniform
    biaxial stress with shear in the chosen axes: each quad's two triangles have the same global
    and chosen-axis components (and invariants) to 1e-10, where their element-frame components
    differ (the checkerboard the issue saw: a median jump of tens of percent)."""
    from test_shell_laminate import quad_plate

    n = 6
    X, quads, _, _ = quad_plate(n)
    R = oblique()
    F = turned(edge_loads(X, 1.0, n, 80.0 * H, 30.0 * H), R)
    deck = plate_deck(X @ R.T, quads, F, [{"nodes": [1], "fixed": ["all"]}],
                      {"direction": (R @ [1.0, 1.0, 0.0]).tolist()})
    dk, sysm, state, _ = solve(deck)
    cells = sysm.outputs(state)["plate"]
    t1, t2 = quad_pairs(dk.model.group("plate"))
    for key, v in cells.items():
        if key.endswith("_element") or key == "thickness" or key.startswith("M"):
            continue
        assert np.abs(v[t1] - v[t2]).max() <= 1e-10 * 80.0, key
    jump = np.abs(cells["syy_top_element"][t1] - cells["syy_top_element"][t2]) / 80.0
    assert np.median(jump) > 0.1
    np.testing.assert_allclose(cells["s_top_12"], -25.0, rtol=1e-10)      # (30 - 80) / 2


def smooth_cantilever(nx: int, rng) -> tuple[dict, np.ndarray, np.ndarray, np.ndarray]:
    """The tip-loaded cantilever (4 x 1, ``nx x nx/4`` jittered quadrilaterals turned out of
    plane, nu = 0: a beam), ``P`` up at the tip: cells, nodal fields, the cells' centroids and
    the nodes in the plate's coordinates and the beam's top stress ``-6 P (L - x) / (b h^2)``."""
    length, width, P = 4.0, 1.0, 1e-5
    X, quads = cantilever(nx, nx // 4, length, width, rng, quads=True)
    R = oblique()
    F = turned(tip_loads(X, length, width, nx // 4, 2, P), R)
    root = np.flatnonzero(np.isclose(X[:, 0], 0)) + 1
    deck = plate_deck(X @ R.T, quads, F, [{"nodes": root.tolist(), "fixed": ["all"]}],
                      {"direction": R[:, 0].tolist()})
    deck["materials"][0]["nu"] = 0.0
    dk, sysm, state, _ = solve(deck)
    outs, nodal = sysm.frame_outputs(state)
    g = dk.model.group("plate")
    centroids = g.X.mean(axis=1) @ R

    def beam(x):
        return -6 * P * (length - x) / (width * H**2)

    return outs["plate"], nodal, centroids, X, g, beam


def test_chosen_axis_components_of_a_smooth_field_are_smooth():
    """Tip-loaded cantilever (the bending stress linear along the span) on jittered quads split
    in two, 16, 32 and 64 along the span: beyond one width from the root (its clamp's boundary
    layer), the jump of ``s_top_11`` between a quad's two triangles, less the beam's change
    between their centroids, is at most 1.5% of the largest stress, and its median falls at
    each halving, to at most 0.4 of the coarsest's (first order, the DKT's mean curvatures:
    measured 0.23-0.31 over four jitters); the element-frame ``syy_top_element`` jumps by a
    median above 15% at every size (no refinement removes that checkerboard). The nodal
    ``s_top_11`` is within 4% of beam theory there (boundary nodes included), falls at each
    halving, to at most 0.4 of the coarsest's (measured 0.24-0.28)."""
    rng = np.random.default_rng(11)
    med, nodal_err = [], []
    for nx in (16, 32, 64):
        cells, nodal, cent, X, g, beam = smooth_cantilever(nx, rng)
        t1, t2 = quad_pairs(g)
        top = np.abs(beam(0.0))
        far = cent[t1, 0] > 1.0
        jump = cells["s_top_11"][t1] - cells["s_top_11"][t2]
        rest = np.abs(jump - (beam(cent[t1, 0]) - beam(cent[t2, 0])))[far] / top
        assert rest.max() <= 0.015, (nx, rest.max())
        med.append(np.median(rest))
        old = np.abs(cells["syy_top_element"][t1] - cells["syy_top_element"][t2])[far] / top
        assert np.median(old) > 0.15, (nx, np.median(old))
        nodes = X[:, 0] >= 1.0
        nodal_err.append(np.abs(nodal["s_top_11"][nodes] - beam(X[nodes, 0])).max() / top)
    assert np.all(np.diff(med) < 0) and med[2] <= 0.4 * med[0], med
    assert nodal_err[0] <= 0.04, nodal_err
    assert np.all(np.diff(nodal_err) < 0) and nodal_err[2] <= 0.4 * nodal_err[0], nodal_err


# --- (d) laminate: per-layer stresses against lamination theory -----------------------------------

def test_two_layer_plate_layer_stresses_in_global_axes_are_lamination_theory():
    """A free [0/90] plate (8 x 8, jittered, turned out of plane) under the edge force ``Nx``:
    the CLPT state ``ABD^-1 [Nx, 0, 0, 0, 0, 0]`` (an antisymmetric laminate bends); at every
    node and cell, each layer face's global stress is ``R Qbar_k (eps + z kappa) R^T`` (Reddy's
    explicit Qbar), its chosen-axis components are ``Qbar_k (eps + z kappa)``, its material-axis
    ones (cells) ``Q_k T_k (eps + z kappa)``, its von Mises the closed form, to 1e-9; ``s_top`` and
    ``s_bottom`` are the outer faces."""
    n, a, t = 8, 1.0, 0.005
    X, tri, _ = distorted_plate(n, a, np.random.default_rng(4))
    R = oblique()
    g = Shell("p", tri, X @ R.T, 3, section=laminate([0, 90], t), direction=R[:, 0])
    Q = q_material(CFRP)
    h = 2 * t
    A = h * np.array([[(Q[0, 0] + Q[1, 1]) / 2, Q[0, 1], 0],
                      [Q[0, 1], (Q[0, 0] + Q[1, 1]) / 2, 0], [0, 0, Q[2, 2]]])
    B = np.diag([(Q[1, 1] - Q[0, 0]) * h**2 / 8, (Q[0, 0] - Q[1, 1]) * h**2 / 8, 0])
    D = h**3 / 12 * A / h
    Nx = 1.0
    state = np.linalg.solve(np.block([[A, B], [B, D]]), [Nx, 0, 0, 0, 0, 0])
    eps, kap = state[:3], state[3:]
    F = turned(edge_loads(X, a, n, Nx, 0.0), R)
    fixed = np.zeros((len(X), 6), dtype=bool)
    fixed[0] = True
    u = solve_fixed(assemble(g, len(X)), F.ravel(), fixed.ravel()).reshape(-1, 6)
    from test_shell import state_of

    cells, parts = g.results(state_of(u))
    nodal = nodal_average([parts], len(X))
    z = {"layer1_bottom": -t, "layer1_top": 0.0, "layer2_bottom": 0.0, "layer2_top": t}
    angle = {"layer1": 0.0, "layer2": 90.0}
    scale = np.abs(Q).max() * (np.abs(eps).max() + t * np.abs(kap).max())
    for face, zz in z.items():
        layer = face.split("_")[0]
        sx, sy, sxy = qbar(CFRP, angle[layer]) @ (eps + zz * kap)
        want = R @ np.array([[sx, sxy, 0], [sxy, sy, 0], [0, 0, 0]]) @ R.T
        for values in (cells, nodal):
            m = len(values[f"s_{face}_xx"])
            np.testing.assert_allclose(tensor(values, f"s_{face}"),
                                       np.broadcast_to(want, (m, 3, 3)), rtol=0,
                                       atol=1e-9 * scale)
            for comp, v in (("11", sx), ("22", sy), ("12", sxy)):
                np.testing.assert_allclose(values[f"s_{face}_{comp}"], v, rtol=0,
                                           atol=1e-9 * scale)
            np.testing.assert_allclose(values[f"s_{face}_mises"],
                                       np.sqrt(sx * sx - sx * sy + sy * sy + 3 * sxy * sxy),
                                       rtol=0, atol=1e-9 * scale)
        c, s = (1.0, 0.0) if angle[layer] == 0 else (0.0, 1.0)
        mat = (c * c * sx + s * s * sy + 2 * c * s * sxy, s * s * sx + c * c * sy - 2 * c * s * sxy)
        for comp, v in zip(("mat11", "mat22"), mat, strict=True):
            np.testing.assert_allclose(cells[f"s_{face}_{comp}"], v, rtol=0, atol=1e-9 * scale)
    for outer, face in (("s_top", "s_layer2_top"), ("s_bottom", "s_layer1_bottom")):
        for comp in COMPS:
            np.testing.assert_array_equal(nodal[f"{outer}_{comp}"], nodal[f"{face}_{comp}"])
    assert abs(kap[0]) > 0.1 * abs(eps[0]) / h                  # it does bend


# --- the deck keys and the results file -----------------------------------------------------------

def small_plate(**element) -> dict:
    """A 2 x 2 clamped plate under pressure: a static and a short dynamic step."""
    X, tri = cantilever(2, 2, 1.0, 1.0)
    root = np.flatnonzero(np.isclose(X[:, 0], 0)) + 1
    deck = plate_deck(X, tri, np.zeros((len(X), 6)), [{"nodes": root.tolist(),
                                                        "fixed": ["all"]}], element)
    deck["loads"] = [{"name": "p", "elements": "plate", "pressure": 1e-3}]
    deck["steps"] = [{"name": "s", "type": "static"},
                     {"name": "d", "type": "dynamic", "duration": 2e-5, "time_step": 1e-5,
                      "integrator": "midpoint"}]
    return deck


def test_every_step_writes_the_nodal_fields_of_its_frames(tmp_path):
    """Static and dynamic frames hold ``/steps/<s>/nodal/<q>``, ``(T, n)`` or ``(T, n, 3)``:
    the nodal fields of the frame's state (the last one recomputed here)."""
    _, sysm, state, _ = solve(small_plate(), tmp_path / "out.h5")
    _, nodal = sysm.frame_outputs(state)
    with h5py.File(tmp_path / "out.h5", "r") as f:
        for step in ("s", "d"):
            g = f[f"steps/{step}/nodal"]
            T = len(f[f"steps/{step}/time"])
            assert sorted(g) == sorted(nodal)
            for q, v in nodal.items():
                assert g[q].shape == (T,) + v.shape
        for q, v in nodal.items():
            np.testing.assert_allclose(f[f"steps/d/nodal/{q}"][-1], v, rtol=1e-12,
                                       atol=1e-12 * np.abs(v).max())
        assert np.abs(f["steps/d/nodal/s_top_mises"][-1]).max() > 0


@pytest.mark.parametrize("results, nodal, cells", [
    (["nodal"], True, set()),
    (["element"], False, {"Nxx_element", "sxx_top_element"}),
    (["cells", "element"], False, {"s_top_mises", "Mxx_element", "thickness"}),
    (None, True, {"Nxx_element", "sxx_top_element"}),      # the default: DEFAULT_RESULTS
])
def test_results_key_picks_what_a_frame_holds(results, nodal, cells):
    deck = {**small_plate(results=results), "steps": [{"name": "s", "type": "static"}]}
    if results is None:
        del deck["elements"][0]["results"]
    words = DEFAULT_RESULTS if results is None else results
    _, sysm, state, _ = solve(deck)
    outs, fields = sysm.frame_outputs(state)
    assert bool(fields) == nodal and ("s_top_mises" in fields) == nodal
    assert cells <= set(outs["plate"]) and bool(outs["plate"]) == bool(cells)
    assert ("sxx_top_element" in outs["plate"]) == ("element" in words)
    assert ("s_top_xx" in outs["plate"]) == ("cells" in words)


@pytest.mark.parametrize("element, key, words", [
    ({"results": ["nodal", "cell"]}, "elements[0].results[1]", "did you mean 'cells'"),
    ({"results": []}, "elements[0].results", "empty list"),
    ({"results": ["nodal", "nodal"]}, "elements[0].results[1]", "given twice"),
    ({"results": "nodal"}, "elements[0].results", "a list of names"),
    ({"direction": [0.0, 0.0, 1.0]}, "elements[0].direction", "normal to the triangle"),
    ({"direction": [0.0, 0.0, 0.0]}, "elements[0].direction", "nonzero vector"),
    ({"direction": [1.0, 0.0]}, "elements[0].direction", "nonzero vector [x, y, z]"),
])
def test_shell_results_deck_errors(element, key, words):
    from helpers import deck_error

    err = deck_error(small_plate(**element))
    assert err.key == key and words in err.message, err


def test_default_axes_of_a_homogeneous_shell_follow_abaqus_convention():
    """Without ``direction``, axis 1 is global x projected on each facet, or global z on facets
    to which x is (within 0.1 degrees) normal: two faces of a box, the face x = 0 takes z, the
    floor x."""
    X = np.array([[0, 0, 0], [0, 1, 0], [0, 1, 1], [0, 0, 1],          # the face x = 0
                  [1, 0, 0], [1, 1, 0]], dtype=float)                 # and the floor z = 0
    tri = np.array([[0, 1, 2], [0, 2, 3], [0, 4, 5], [0, 5, 1]])
    g = Shell("p", tri, X, 3, E=E, nu=NU, h=H)
    a1 = np.cos(g.phi)[:, None] * g.T[:, 0] + np.sin(g.phi)[:, None] * g.T[:, 1]
    np.testing.assert_allclose(a1[:2], [[0, 0, 1]] * 2, atol=1e-15)
    np.testing.assert_allclose(a1[2:], [[1, 0, 0]] * 2, atol=1e-15)
