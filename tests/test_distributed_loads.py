"""Uniform distributed loads on beams (issue 10, item 5): dead and follower, statics and dynamics.

References: the linear beam formulas (cantilever ``w L^4 / (8 EI)`` and root moment ``w L^2 / 2``;
simply supported ``5 w L^4 / (384 EI)``; exact at the nodes of Hermite beams with consistent
loads); the follower load's stiffness against a central difference of the load; a cantilever
under a large uniform follower load normal to its axis against the elastica solved here as a
boundary-value problem (scipy ``solve_bvp``, independent of the element code); the work balance
of a dynamic run.
"""

import numpy as np
import pytest
from helpers import line_beam, node, solve
from scipy.integrate import solve_bvp

from fem import rotations as so3
from fem.errors import DeckError
from fem.io.deck import from_dict
from fem.loads import StepLoads
from fem.system import System

EI = 2.0


def beam(dim, n, L=3.0, formulation="linear", **extra):
    d = line_beam(dim, n, length=L, E=1e3, G=4e2, A=1e3, Iy=EI / 1e3, Iz=EI / 1e3, J=1e-3,
                  formulation=formulation)
    d.update(extra)
    return d


def reactions(sysm, state, step, nid_index):
    """Support reaction at a node: internal force minus the load applied there directly."""
    r = sysm.dofmap.to_nodal(sysm.internal_force(state))
    return r[nid_index] - step.loads.force(state, 1.0)[nid_index]


@pytest.mark.parametrize("dim", [2, 3])
def test_cantilever_tip_deflection_and_root_moment(dim):
    w, L = 0.7, 3.0
    q = [0.0, -w] if dim == 2 else [0.0, 0.0, -w]
    d = beam(dim, 6, L, supports=[{"nodes": 1, "fixed": ["all"]}],
             loads=[{"name": "w", "elements": "beam", "per_length": q}],
             steps=[{"name": "s", "type": "static"}])
    dk, sysm, state, (step,) = solve(d)
    tip, root = node(dk, 2), node(dk, 1)
    assert state.u[tip, dim - 1] == pytest.approx(-w * L**4 / (8 * EI), rel=1e-9)
    rr = reactions(sysm, state, step, root)
    assert rr[dim - 1] == pytest.approx(w * L, rel=1e-9)
    # 2D: rz; 3D: the load along -z bends about y, reaction moment -w L^2/2 about y
    m = rr[2] if dim == 2 else rr[4]
    assert abs(m) == pytest.approx(w * L**2 / 2, rel=1e-9)
    # the consistent end loads of one straight element: q L / 2 and q L^2 / 12
    loads = step.loads.force(state, 1.0)
    Le = L / 6
    assert loads[tip, dim - 1] == pytest.approx(-w * Le / 2, rel=1e-12)
    assert abs(loads[tip, 2 if dim == 2 else 4]) == pytest.approx(w * Le**2 / 12, rel=1e-12)


def test_simply_supported_midspan_deflection():
    w, L = 1.3, 4.0
    d = beam(2, 8, L, supports=[{"nodes": 1, "fixed": ["ux", "uy"]},
                                {"nodes": 2, "fixed": ["uy"]}],
             loads=[{"name": "w", "elements": ["beam"], "per_length": [0.0, -w]}],
             steps=[{"name": "s", "type": "static"}])
    dk, sysm, state, _ = solve(d)
    mid = int(np.flatnonzero(np.isclose(dk.model.X[:, 0], L / 2))[0])
    assert state.u[mid, 1] == pytest.approx(-5 * w * L**4 / (384 * EI), rel=1e-9)


@pytest.mark.parametrize("dim", [2, 3])
def test_follower_load_stiffness_is_minus_its_derivative(dim):
    """K_L = -d f_ext / d(increment), increments of translations and spatial spins."""
    rng = np.random.default_rng(3)
    q = [0.4, -1.1] if dim == 2 else [0.4, -1.1, 0.6]
    d = beam(dim, 3, formulation="corotational",
             loads=[{"name": "w", "elements": "beam", "per_length": q, "kind": "follower"}],
             steps=[{"name": "s", "type": "static"}])
    dk = from_dict(d)
    sysm = System(dk.model)
    loads = StepLoads(dk.model, dk.steps[0]["loads"], ramp=True)
    st = sysm.reference_state()
    n, ns = st.n_nodes, dk.model.nslots
    if dim == 2:
        st.rot[:] = rng.normal(size=n)
    else:
        st.rot[:] = so3.quat_from_rotvec(rng.normal(size=(n, 3)))
    st.u[:, :dim] = rng.normal(size=(n, dim)) * 0.1
    K = loads.stiffness(st, 0.8)
    h = 1e-6
    for a in range(n):
        for j in range(ns):
            du = np.zeros((n, ns))
            du[a, j] = h
            plus, minus = st.copy(), st.copy()
            plus.increment(du)
            minus.increment(-du)
            fd = -(loads.force(plus, 0.8) - loads.force(minus, 0.8)) / (2 * h)
            assert np.allclose(K[a][:, j], fd[a], atol=1e-7)
            assert np.allclose(np.delete(fd, a, axis=0), 0.0, atol=1e-7)   # node-local


def elastica_tip(qL3: float) -> np.ndarray:
    """Tip (x, y) / L of an inextensible cantilever under a normal follower load q per length.

    x' = cos t, y' = sin t, t' = m / EI, n' = -q (-sin t, cos t), m' = -(cos t n_y - sin t n_x);
    clamped at s = 0, free (n = 0, m = 0) at s = L; here L = EI = 1.
    """
    def f(s, z):
        x, y, t, nx, ny, m = z
        return np.vstack([np.cos(t), np.sin(t), m, qL3 * np.sin(t), -qL3 * np.cos(t),
                          -(np.cos(t) * ny - np.sin(t) * nx)])

    def bc(a, b):
        return np.array([a[0], a[1], a[2], b[3], b[4], b[5]])

    s = np.linspace(0, 1, 201)
    z = np.zeros((6, len(s)))
    z[0] = s
    sol = solve_bvp(f, bc, s, z, tol=1e-10, max_nodes=100000)
    assert sol.success
    return sol.sol(1.0)[:2]


def test_cantilever_under_large_follower_load_matches_the_elastica():
    """q L^3 / EI = 3 (the tip turns 28 degrees): 40 elements agree with the BVP to 1e-6 L.

    The error falls as h^2 (10 elements: 8e-7 L; 40: 4e-9 L).
    """
    qL3 = 3.0
    L = 1.0
    d = line_beam(2, 40, length=L, E=1e6, A=1e2, Iz=1e-6, formulation="corotational")
    d.update(supports=[{"nodes": 1, "fixed": ["all"]}],
             loads=[{"name": "w", "elements": "beam", "per_length": [0.0, qL3],
                     "kind": "follower"}],
             steps=[{"name": "s", "type": "static", "nonlinear": True, "increments": 10,
                     "tolerance": 1e-10}])
    dk, sysm, state, _ = solve(d)
    tip = node(dk, 2)
    x = dk.model.X[tip, :2] + state.u[tip, :2]
    ref = elastica_tip(qL3)
    assert np.allclose(x, ref, atol=1e-6)
    # and differs from the dead load's answer by far more than that
    d["loads"][0]["kind"] = "dead"
    dk2, _, state2, _ = solve(d)
    assert np.linalg.norm(dk2.model.X[tip, :2] + state2.u[tip, :2] - ref) > 1e-2


def test_dynamic_work_of_a_distributed_load_closes_the_energy_balance():
    """A free-free beam pushed by a dead distributed load: kinetic + strain = work, to 1e-8."""
    d = line_beam(2, 4, length=2.0, E=1e3, A=1.0, Iz=1e-2, formulation="corotational")
    d["materials"][0]["density"] = 1.0
    d["supports"] = [{"nodes": 1, "fixed": ["ux", "uy"]}]
    d["loads"] = [{"name": "w", "elements": "beam", "per_length": [0.3, -2.0]}]
    d["steps"] = [{"name": "go", "type": "dynamic", "time_step": 0.01, "duration": 1.0,
                   "tolerance": 1e-11}]
    _, _, _, (step,) = solve(d)
    work = np.array([r["external_work"] for r in step.history])
    total = np.array([r["total"] for r in step.history])
    assert work[-1] > 0.5
    assert np.abs(total).max() <= 1e-8 * np.abs(work).max()


@pytest.mark.parametrize(("load", "key", "match"), [
    ({"elements": "beam"}, "loads[0].per_length", "missing"),
    ({"per_length": [0, 1]}, "loads[0].elements", "missing"),
    ({"elements": "bean", "per_length": [0, 1]}, "loads[0].elements", "did you mean 'beam'"),
    ({"elements": "beam", "per_length": [0, 1, 2]}, "loads[0].per_length", "expected 2"),
    ({"elements": "beam", "per_length": [0, 1], "nodes": 2}, "loads[0].nodes", "not used"),
    ({"elements": "beam", "per_length": [0, 1], "force": [0, 1]}, "loads[0].force", "not used"),
    ({"elements": "beam", "per_length": [0, 1], "kind": "semitangential"}, "loads[0].kind",
     "dead or follower"),
    ({"elements": 3, "per_length": [0, 1]}, "loads[0].elements", "element-group name"),
    ({"force": [0, 1]}, "loads[0]", "neither"),
])
def test_distributed_load_deck_errors_name_the_key(load, key, match):
    d = beam(2, 2, supports=[{"nodes": 1, "fixed": ["all"]}],
             loads=[{"name": "w", **load}], steps=[{"name": "s", "type": "static"}])
    with pytest.raises(DeckError, match=match) as err:
        from_dict(d)
    assert err.value.key == key


def test_follower_distributed_load_on_trusses_is_an_error():
    d = {"model": {"dim": 2}, "materials": [{"name": "m", "E": 1.0, "G": 0.5}],
         "sections": [{"name": "s", "A": 1.0}],
         "nodes": {"coordinates": [[0, 0], [1, 0]]},
         "elements": [{"name": "bar", "type": "truss", "material": "m", "section": "s",
                       "connectivity": [[1, 2]]}],
         "supports": [{"nodes": [1, 2], "fixed": ["uy"]}, {"nodes": 1, "fixed": ["ux"]}],
         "loads": [{"name": "w", "elements": "bar", "per_length": [1.0, 0.0],
                    "kind": "follower"}],
         "steps": [{"name": "s", "type": "static"}]}
    with pytest.raises(DeckError, match="has none") as err:
        from_dict(d)
    assert err.value.key == "loads[0].kind"
    d["loads"][0]["kind"] = "dead"              # a dead load on trusses: q L / 2, no moments
    dk, sysm, state, (step,) = solve(d)
    assert np.allclose(step.loads.force(state, 1.0)[:, 0], [0.5, 0.5])
