"""The compiled energy-conserving step of 3D co-rotational beams against numpy (issue 14, item 1).

:meth:`fem.elements.beam.Beam.conserving` through :mod:`fem.elements.beam.beam3d_ec_kernel` gives
the
numpy reference's force, tangent, energy and algorithmic basic deformations to 1e-13 relative (of
each array's largest entry), for Euler-Bernoulli and Timoshenko beams of mixed sections on shared
nodes, at a deformed state carried through a large rigid turn and stepped by rotations of order
1 rad, the rotation slots holding rotation vectors, Cayley parameters or a mix, with some nodes
not corrected by spins; the kernel's own force does the step's work exactly (``f . inc =
Phi(v1) - Phi(v0)``) and has no resultant force or moment about the mid-point configuration.
Small, linear, 2D and offset groups and ``FEM_JIT=0`` keep the numpy path.
"""

import dataclasses

import numpy as np
import pytest

from fem import rotations as so3
from fem.elements import Beam
from fem.elements.beam import beam3d_jit
from fem.elements.samples import stepped
from fem.integrators.inertia import midpoint_state, step_kinematics
from fem.state import State

pytestmark = pytest.mark.skipif(not beam3d_jit.enabled(conserving=True),
                                reason="numba is not installed")


def network(theory: str, rng, n: int = 60, E: int = 90) -> tuple[Beam, np.ndarray]:
    """``E`` beams of random sections and orientations between ``n`` shared nodes ``X``,
    numbered in no order, connectivity running either way."""
    X = rng.normal(size=(n, 3)) * 2.0
    pairs = rng.integers(0, n, size=(4 * E, 2))
    pairs = pairs[np.linalg.norm(X[pairs[:, 1]] - X[pairs[:, 0]], axis=1) > 1.0][:E]
    g = Beam("b", pairs, X, 3, formulation="corotational", theory=theory,
             E=rng.uniform(1, 3, E) * 210.0, G=80.0, A=rng.uniform(1, 2, E),
             Iy=rng.uniform(0.02, 0.08, E), Iz=rng.uniform(0.02, 0.08, E), J=0.06,
             Ay=1.5, Az=1.6, ref=rng.normal(size=(E, 3)))
    return g, X


def step_states(X: np.ndarray, rng) -> tuple[State, State]:
    """A strained state with nodal rotations of about 0.8 rad turned rigidly by 2.5 rad, and the
    same a step later: turned rigidly by a further 1 rad, strained, its nodes turned by 0.5 rad."""
    n = len(X)
    Q0 = so3.expm(2.5 * np.array([1.0, -2.0, 0.5]) / np.linalg.norm([1.0, -2.0, 0.5]))
    s0 = State.reference(3, n)
    s0.u[:] = (X + 0.05 * rng.normal(size=X.shape)) @ Q0.T + np.array([0.3, -1.2, 2.0]) - X
    s0.rot[:] = so3.matrix_to_quat(Q0 @ so3.expm(0.8 * rng.normal(size=(n, 3))))
    return s0, stepped(X, s0, rng, strain=0.05)


def step(g: Beam, X: np.ndarray, rng, cayley: str):
    """The states and increments of one step; the Cayley flags of the group's nodes."""
    s0, s1 = step_states(X, rng)
    kin = step_kinematics(s0, s1, None)
    sm = midpoint_state(s0, s1, None, kin)
    n = len(X)
    on = {"none": np.zeros(n, dtype=bool), "all": np.ones(n, dtype=bool),
          "mixed": rng.random(n) < 0.5}[cayley]
    inc = kin.increment.copy()
    inc[on, 3:] = so3.cay_from_quat(so3.quat_mul(s1.rot, so3.quat_conj(s0.rot)))[on]
    angle = np.linalg.norm(kin.theta, axis=1)
    assert 0.7 < np.median(angle) and angle.max() < 2.5        # steps of order 1 rad
    return s0, s1, sm, g.element_vector(inc), on[g.conn]


def both_paths(g: Beam, args, kw, monkeypatch):
    """``g.conserving`` compiled and in numpy, as ``(f, K, energy, v1)`` each."""
    assert g._compiled(conserving=True)
    out = g.conserving(*args, **kw)
    with monkeypatch.context() as m:
        m.setenv("FEM_JIT", "0")
        assert not g._compiled(conserving=True)
        ref = g.conserving(*args, **kw)
    return (*out[:3], out[3]["v"]), (*ref[:3], ref[3]["v"])


@pytest.mark.parametrize("theory", ["euler-bernoulli", "timoshenko"])
@pytest.mark.parametrize("cayley", ["none", "all", "mixed"])
def test_conserving_kernel_gives_the_numpy_numbers(theory, cayley, monkeypatch):
    """Force, tangent, energy and v1 to 1e-13 relative, with drifted algorithmic deformations
    and spins off at a fifth of the nodes (their rotations corrected additively)."""
    rng = np.random.default_rng(21)
    g, X = network(theory, rng)
    s0, s1, sm, inc, on = step(g, X, rng, cayley)
    v0 = g.conserving_start(s0)["v"]
    hist = {"v": v0 + 0.01 * rng.normal(size=v0.shape)}
    spins = rng.random(len(X)) < 0.8
    kw = {"spins": spins[g.conn]} | ({} if cayley == "none" else {"cayley": on})
    out, ref = both_paths(g, (s0, s1, sm, inc, hist), kw, monkeypatch)
    for name, a, b in zip(("f", "K", "energy", "v1"), out, ref, strict=True):
        assert a.shape == b.shape and np.abs(b).max() > 0, name
        assert np.abs(a - b).max() <= 1e-13 * np.abs(b).max(), name
    # the step did work: the deformations and the tangent's rotation columns moved
    assert np.abs(ref[3] - hist["v"]).max() > 0.1 * np.abs(hist["v"]).max()
    # 90 elements ran in parallel chunks; a group of one chunk runs in the calling thread
    # (the same per-chunk code, compiled at another call site: round-off may differ)
    k = slice(0, 40)
    prep = g._kernel_data()
    part_prep = dataclasses.replace(prep, conn=prep.conn[k], chord0=prep.chord0[k],
                                    E0=prep.E0[k], l0=prep.l0[k], Sc=prep.Sc[k],
                                    coef=np.ascontiguousarray(prep.coef[:, k]))
    cay = kw.get("cayley")
    part = beam3d_jit.conserving(part_prep, sm.rot, sm.u, s0.u, s1.u, hist["v"][k], inc[k],
                                 kw["spins"][k], None if cay is None else cay[k])
    for a, b in zip(part, out, strict=True):
        assert np.abs(a - b[k]).max() <= 1e-13 * np.abs(b[k]).max()


@pytest.mark.parametrize("theory", ["euler-bernoulli", "timoshenko"])
def test_conserving_kernel_does_the_work_and_conserves_momenta(theory):
    """With the elongation of ``v0`` the geometric one: ``f . inc = Phi(v1) - Phi(v0)`` (the
    energy identity, exact up to round-off), and ``f`` has no resultant force nor moment about
    the mid-point configuration (momentum conservation); rotation vectors and Cayley
    parameters mixed."""
    rng = np.random.default_rng(5)
    g, X = network(theory, rng, n=12, E=10)
    s0, s1, sm, inc, on = step(g, X, rng, "mixed")
    v0 = g.conserving_start(s0)["v"]
    v0[:, 1:] += 0.05 * rng.normal(size=(len(v0), 6))        # drifted local rotations
    assert g._compiled(conserving=True)
    f, _, energy, h = g.conserving(s0, s1, sm, inc, {"v": v0}, cayley=on)
    assert np.allclose(energy, g.basic.energy(h["v"]), rtol=1e-13, atol=0)
    work = np.einsum("ed,ed->e", f, inc)
    dphi = energy - g.basic.energy(v0)
    terms = np.abs(f * inc).sum(axis=1)                       # the round-off's scale
    assert np.all(np.abs(dphi) > 1e-3 * terms)
    assert np.all(np.abs(work - dphi) <= 1e-13 * terms)
    fn = f.reshape(-1, 2, 6)
    xm = (X + sm.u)[g.conn]
    moment = np.cross(xm, fn[:, :, :3]).sum(axis=1) + fn[:, :, 3:].sum(axis=1)
    scale = np.abs(fn).max() * np.abs(xm).max()
    assert np.abs(fn[:, :, :3].sum(axis=1)).max() <= 1e-13 * scale
    assert np.abs(moment).max() <= 1e-13 * scale


def test_small_linear_2d_and_offset_groups_and_fem_jit_0_keep_the_numpy_path(monkeypatch):
    rng = np.random.default_rng(1)
    g, X = network("euler-bernoulli", rng, n=12, E=beam3d_jit.MIN_CONSERVING)
    assert g._compiled(conserving=True) and not g._compiled()
    if beam3d_jit.MIN_CONSERVING > 1:
        assert not network("euler-bernoulli", rng, n=12,
                           E=beam3d_jit.MIN_CONSERVING - 1)[0]._compiled(conserving=True)
    conn = np.arange(8).reshape(4, 2)
    X = rng.normal(size=(8, 3))
    sec = dict(E=1.0, G=1.0, A=1.0, Iy=1.0, Iz=1.0, J=1.0, ref=[0.3, 0.1, 1.0])
    assert not Beam("l", conn, X, 3, formulation="linear", **sec)._compiled(conserving=True)
    # 2D: the energy-conserving force is compiled (tests/test_beam2d_ec_kernel.py), the static
    # one is not
    assert not Beam("p", conn, X, 2, E=1.0, G=1.0, A=1.0, Iz=1.0)._compiled()
    assert not Beam("o", conn, X, 3, offsets=np.zeros((2, 3)), **sec)._compiled(conserving=True)
    assert Beam("c", conn, X, 3, **sec)._compiled(conserving=True)
    monkeypatch.setenv("FEM_JIT", "0")
    assert not Beam("c", conn, X, 3, **sec)._compiled(conserving=True)


def test_a_state_with_too_few_nodes_is_refused():
    """The kernel does not check its indices: the wrapper does, as numpy's gather would."""
    rng = np.random.default_rng(4)
    g, X = network("euler-bernoulli", rng, n=12, E=10)
    s = State.reference(3, int(g.conn.max()))
    inc = np.zeros((len(g), 12))
    with pytest.raises(IndexError, match=str(int(g.conn.max()) + 1)):
        g.conserving(s, s, s, inc, {"v": np.zeros((len(g), 7))})
