"""The compiled energy-conserving step of 2D co-rotational beams against numpy (issue 14, item 1).

:meth:`fem.elements.beam.Beam.conserving` through :mod:`fem.elements.beam.beam2d_ec_kernel` gives
the
numpy reference's force, tangent, energy and algorithmic basic deformations to 1e-13 relative (of
each array's largest entry), for Euler-Bernoulli and Timoshenko beams of mixed sections on shared
nodes, at a deformed state carried through a large rigid turn and stepped by rotations of order
1 rad, the rotation slots holding angle increments or Cayley parameters (planar rotations are
additive: the kernel takes either as given); the kernel's own force does the step's work exactly
(``f . inc = Phi(v1) - Phi(v0)``) and has no resultant force or moment about the mid-point
configuration; a group of more than one chunk (parallel) gives the same numbers. Linear and
offset groups and ``FEM_JIT=0`` keep the numpy path.
"""


import numpy as np
import pytest

from fem.elements import Beam
from fem.elements.beam import beam2d_jit
from fem.integrators.inertia import midpoint_state, step_kinematics
from fem.state import State

pytestmark = pytest.mark.skipif(not beam2d_jit.enabled(), reason="numba is not installed")


def network(theory: str, rng, n: int = 60, E: int = 90) -> tuple[Beam, np.ndarray]:
    """``E`` beams of random sections and directions between ``n`` shared nodes ``X`` in the
    plane, numbered in no order, connectivity running either way."""
    X = np.zeros((n, 3))
    X[:, :2] = rng.normal(size=(n, 2)) * 2.0
    pairs = rng.integers(0, n, size=(4 * E, 2))
    pairs = pairs[np.linalg.norm(X[pairs[:, 1]] - X[pairs[:, 0]], axis=1) > 1.0][:E]
    g = Beam("b", pairs, X, 2, formulation="corotational", theory=theory,
             E=rng.uniform(1, 3, E) * 210.0, G=80.0, A=rng.uniform(1, 2, E),
             Iz=rng.uniform(0.02, 0.08, E), Ay=rng.uniform(0.2, 1.0, E))
    return g, X


def _turn(x: np.ndarray, angle: float) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    return x @ np.array([[c, -s], [s, c]]).T


def step(g: Beam, X: np.ndarray, rng, slots: str = "angle", strain: float = 0.05):
    """One step: a strained state with nodal rotations of about 0.8 rad turned rigidly by 2.5 rad,
    then turned rigidly by a further 1 rad about its centre, strained, its nodes turned by a
    further 0.5 rad; the mid-point state and the element increments, their rotation slots the
    angle increments or (``slots="cayley"``) the Cayley parameters ``2 tan(dtheta/2)``."""
    n = len(X)
    s0 = State.reference(2, n)
    s0.u[:, :2] = _turn(X[:, :2] + 0.05 * rng.normal(size=(n, 2)), 2.5) + [0.3, -1.2] - X[:, :2]
    s0.rot[:] = 2.5 + 0.8 * rng.normal(size=n)
    x0 = X[:, :2] + s0.u[:, :2]
    c = x0.mean(axis=0)
    s1 = s0.copy()
    s1.u[:, :2] = _turn(x0 - c + strain * rng.normal(size=(n, 2)), 1.0) + c - X[:, :2]
    s1.rot[:] = s0.rot + 1.0 + 0.5 * rng.normal(size=n)
    kin = step_kinematics(s0, s1, None)
    sm = midpoint_state(s0, s1, None, kin)
    inc = kin.increment.copy()
    if slots == "cayley":
        inc[:, 2] = 2 * np.tan(inc[:, 2] / 2)
    assert 0.7 < np.median(np.abs(kin.increment[:, 2])) and np.abs(inc[:, 2]).max() < 4
    return s0, s1, sm, g.element_vector(inc)


def both_paths(g: Beam, args, monkeypatch):
    """``g.conserving`` compiled and in numpy, as ``(f, K, energy, v1)`` each."""
    assert g._compiled(conserving=True)
    out = g.conserving(*args)
    with monkeypatch.context() as m:
        m.setenv("FEM_JIT", "0")
        assert not g._compiled(conserving=True)
        ref = g.conserving(*args)
    return (*out[:3], out[3]["v"]), (*ref[:3], ref[3]["v"])


def assert_same(out, ref, rtol=1e-13):
    for name, a, b in zip(("f", "K", "energy", "v1"), out, ref, strict=True):
        assert a.shape == b.shape and np.abs(b).max() > 0, name
        assert np.abs(a - b).max() <= rtol * np.abs(b).max(), name


@pytest.mark.parametrize("theory", ["euler-bernoulli", "timoshenko"])
@pytest.mark.parametrize("slots", ["angle", "cayley"])
def test_conserving_kernel_gives_the_numpy_numbers(theory, slots, monkeypatch):
    """Force, tangent, energy and v1 to 1e-13 relative, with drifted algorithmic deformations."""
    rng = np.random.default_rng(21)
    g, X = network(theory, rng)
    if theory == "timoshenko":                     # the shear-arch terms are in
        assert g.basic.shear_arch
    s0, s1, sm, inc = step(g, X, rng, slots)
    v0 = g.conserving_start(s0)["v"]
    hist = {"v": v0 + 0.01 * rng.normal(size=v0.shape)}
    out, ref = both_paths(g, (s0, s1, sm, inc, hist), monkeypatch)
    assert_same(out, ref)
    # the step did work: the deformations moved, the tangent is not the static one's
    assert np.abs(ref[3] - hist["v"]).max() > 0.1 * np.abs(hist["v"]).max()


def test_a_group_of_several_chunks_gives_the_same_numbers(monkeypatch):
    """Past ``_CHUNK`` elements the kernel runs its chunks in ``prange``: the same numbers."""
    from fem.elements.beam import beam2d_ec_kernel

    rng = np.random.default_rng(8)
    E = 2 * beam2d_ec_kernel._CHUNK + 37
    g, X = network("timoshenko", rng, n=300, E=E)
    assert len(g) == E
    s0, s1, sm, inc = step(g, X, rng)
    v0 = g.conserving_start(s0)["v"]
    out, ref = both_paths(g, (s0, s1, sm, inc, {"v": v0}), monkeypatch)
    assert_same(out, ref)


@pytest.mark.parametrize("theory", ["euler-bernoulli", "timoshenko"])
def test_conserving_kernel_does_the_work_and_conserves_momenta(theory):
    """With the elongation of ``v0`` the geometric one: ``f . inc = Phi(v1) - Phi(v0)`` (the
    energy identity, exact up to round-off), and ``f`` has no resultant force nor moment about
    the mid-point configuration (momentum conservation)."""
    rng = np.random.default_rng(5)
    g, X = network(theory, rng, n=12, E=10)
    s0, s1, sm, inc = step(g, X, rng)
    v0 = g.conserving_start(s0)["v"]
    v0[:, 1:] += 0.05 * rng.normal(size=(len(v0), 2))        # drifted local rotations
    assert g._compiled(conserving=True)
    f, _, energy, h = g.conserving(s0, s1, sm, inc, {"v": v0})
    assert np.allclose(energy, g.basic.energy(h["v"]), rtol=1e-13, atol=0)
    work = np.einsum("ed,ed->e", f, inc)
    dphi = energy - g.basic.energy(v0)
    terms = np.abs(f * inc).sum(axis=1)                       # the round-off's scale
    assert np.all(np.abs(dphi) > 1e-3 * terms)
    assert np.all(np.abs(work - dphi) <= 1e-13 * terms)
    fn = f.reshape(-1, 2, 3)
    xm = (X + sm.u)[g.conn][:, :, :2]
    moment = (xm[:, :, 0] * fn[:, :, 1] - xm[:, :, 1] * fn[:, :, 0] + fn[:, :, 2]).sum(axis=1)
    scale = np.abs(fn).max() * np.abs(xm).max()
    assert np.abs(fn[:, :, :2].sum(axis=1)).max() <= 1e-13 * scale
    assert np.abs(moment).max() <= 1e-13 * scale


def test_linear_and_offset_groups_and_fem_jit_0_keep_the_numpy_path(monkeypatch):
    rng = np.random.default_rng(1)
    g, X = network("euler-bernoulli", rng, n=12, E=beam2d_jit.MIN_CONSERVING)
    assert g._compiled(conserving=True) and not g._compiled()     # no static 2D kernel
    if beam2d_jit.MIN_CONSERVING > 1:
        assert not network("euler-bernoulli", rng, n=12,
                           E=beam2d_jit.MIN_CONSERVING - 1)[0]._compiled(conserving=True)
    conn = np.arange(8).reshape(4, 2)
    X = rng.normal(size=(8, 3))
    sec = dict(E=1.0, G=1.0, A=1.0, Iz=1.0)
    assert not Beam("l", conn, X, 2, formulation="linear", **sec)._compiled(conserving=True)
    assert not Beam("o", conn, X, 2, offsets=np.zeros((2, 3)), **sec)._compiled(conserving=True)
    assert Beam("c", conn, X, 2, **sec)._compiled(conserving=True)
    monkeypatch.setenv("FEM_JIT", "0")
    assert not Beam("c", conn, X, 2, **sec)._compiled(conserving=True)


def test_a_state_with_too_few_nodes_is_refused():
    """The kernel does not check its indices: the wrapper does, as numpy's gather would."""
    rng = np.random.default_rng(4)
    g, X = network("euler-bernoulli", rng, n=12, E=10)
    s = State.reference(2, int(g.conn.max()))
    inc = np.zeros((len(g), 6))
    with pytest.raises(IndexError, match=str(int(g.conn.max()) + 1)):
        g.conserving(s, s, s, inc, {"v": np.zeros((len(g), 3))})
