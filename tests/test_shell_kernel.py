"""The compiled co-rotational shell kernels against the vectorized numpy reference (issues 12, 14).

Same force and tangent to 1e-13 relative (of each array's largest entry) on a random mesh of
shared nodes, deformed and carried through a large rigid rotation with large nodal rotations on
top (local rotations up to about 2 rad, past the series branch of ``eta``); the force-only call
gives the same force; the energy-conserving step (force, tangent, energy, algorithmic
deformations) the same to 1e-13 for steps of about 1 rad, the rotation slots holding rotation
vectors, Cayley parameters or a mix of both; ``FEM_JIT=0`` and small groups take the numpy path.
"""

import numpy as np
import pytest

from fem import kernels
from fem import rotations as so3
from fem.elements.samples import stepped
from fem.elements.samples import triangle_mesh as random_mesh
from fem.elements.shell import shell_jit
from fem.elements.shell.corot import CorotShell
from fem.integrators.inertia import midpoint_state, step_kinematics
from fem.state import State

pytestmark = pytest.mark.skipif(not shell_jit.enabled(), reason="numba is not installed")


def deformed(X: np.ndarray, rng, spread: float) -> State:
    """Random strains and nodal rotations of size ``spread``, then a rigid turn of 2.5 rad."""
    Q = so3.expm(2.5 * np.array([1.0, -2.0, 0.5]) / np.linalg.norm([1.0, -2.0, 0.5]))
    st = State.reference(3, len(X))
    st.u[:] = (X + 0.02 * rng.normal(size=X.shape)) @ Q.T + np.array([0.3, -1.2, 2.0]) - X
    st.rot[:] = so3.matrix_to_quat(Q @ so3.expm(spread * rng.normal(size=(len(X), 3))))
    return st


def numpy_path(g: CorotShell, state: State, monkeypatch, tangent: bool = True):
    with monkeypatch.context() as m:
        m.setenv("FEM_JIT", "0")
        assert not g._compiled()
        return g.evaluate(state, tangent)


@pytest.mark.parametrize("spread", [0.05, 1.0])
def test_kernel_gives_the_numpy_numbers(spread, monkeypatch):
    rng = np.random.default_rng(11)
    X, conn = random_mesh(10, rng)
    g = CorotShell("s", conn, X, 3, E=rng.uniform(1e4, 3e4, len(conn)), nu=0.3,
                   h=rng.uniform(0.02, 0.05, len(conn)))
    state = deformed(X, rng, spread)
    theta = np.linalg.norm(g._kinematics(state).theta, axis=-1)
    assert theta.max() > (1.5 if spread > 0.5 else 0.05)      # large rotations were reached
    assert g._compiled()
    f, K = g.evaluate(state)
    f_ref, K_ref = numpy_path(g, state, monkeypatch)
    assert np.abs(f_ref).max() > 0 and np.abs(K_ref).max() > 0
    assert np.abs(f - f_ref).max() <= 1e-13 * np.abs(f_ref).max()
    assert np.abs(K - K_ref).max() <= 1e-13 * np.abs(K_ref).max()
    f_only, none = g.evaluate(state, tangent=False)
    assert none is None and np.array_equal(f_only, f)
    # the pieces the kernel takes by sign: corner 1's rows and columns balance the others'
    assert np.abs(K[:, :, 0:3] + K[:, :, 6:9] + K[:, :, 12:15]).max() \
        <= 1e-13 * np.abs(K).max()


def test_small_groups_and_fem_jit_0_keep_the_numpy_path(monkeypatch):
    rng = np.random.default_rng(2)
    X, conn = random_mesh(5, rng)                              # 50 triangles
    assert shell_jit.MIN_CONSERVING <= len(conn) < kernels.MIN_ELEMENTS
    small = CorotShell("a", conn, X, 3, E=1.0, nu=0.3, h=0.1)
    assert not small._compiled()
    assert small._compiled(conserving=True)        # a dynamic run calls it thousands of times
    X, conn = random_mesh(2, rng)
    assert len(conn) < shell_jit.MIN_CONSERVING
    assert not CorotShell("c", conn, X, 3, E=1.0, nu=0.3, h=0.1)._compiled(conserving=True)
    X, conn = random_mesh(6, rng)                              # 72 triangles
    g = CorotShell("b", conn, X, 3, E=1.0, nu=0.3, h=0.1)
    assert g._compiled()
    assert g._compiled(conserving=True)
    monkeypatch.setenv("FEM_JIT", "0")
    assert not g._compiled()
    assert not g._compiled(conserving=True)


@pytest.mark.parametrize("cayley", ["none", "all", "mixed"])
def test_conserving_kernel_gives_the_numpy_numbers(cayley, monkeypatch):
    """The energy-conserving step (CorotShell.conserving): algorithmic force, tangent, energy
    and deformations equal the numpy reference's to 1e-13 relative, with drifted algorithmic
    deformations, at a large state (as above) stepped by rotations of order 1 rad; the corners'
    rotation slots hold rotation vectors, Cayley parameters, or either at random."""
    rng = np.random.default_rng(14)
    X, conn = random_mesh(10, rng)
    g = CorotShell("s", conn, X, 3, E=rng.uniform(1e4, 3e4, len(conn)), nu=0.3,
                   h=rng.uniform(0.02, 0.05, len(conn)))
    s0 = deformed(X, rng, 1.0)
    s1 = stepped(X, s0, rng)
    kin = step_kinematics(s0, s1, None)
    sm = midpoint_state(s0, s1, None, kin)
    on = {"none": np.zeros(len(X), dtype=bool), "all": np.ones(len(X), dtype=bool),
          "mixed": rng.random(len(X)) < 0.5}[cayley]
    inc = kin.increment.copy()
    inc[on, 3:] = so3.cay_from_quat(so3.quat_mul(s1.rot, so3.quat_conj(s0.rot)))[on]
    angle = np.linalg.norm(kin.theta, axis=1)
    assert 0.7 < np.median(angle) and angle.max() < 2.5        # steps of order 1 rad
    p0 = g.conserving_start(s0)["p"]
    hist = {"p": p0 + 0.01 * rng.normal(size=p0.shape)}
    args = (s0, s1, sm, g.element_vector(inc), hist)
    kw = {"spins": np.ones(conn.shape, dtype=bool), "cayley": on[conn]}
    assert g._compiled(conserving=True)
    out = g.conserving(*args, **kw)
    with monkeypatch.context() as m:
        m.setenv("FEM_JIT", "0")
        assert not g._compiled(conserving=True)
        ref = g.conserving(*args, **kw)
    for name, a, b in zip(("f", "K", "energy", "p1"), (*out[:3], out[3]["p"]),
                          (*ref[:3], ref[3]["p"]), strict=True):
        assert a.shape == b.shape and np.abs(b).max() > 0, name
        assert np.abs(a - b).max() <= 1e-13 * np.abs(b).max(), name
    # the step did change the algorithmic deformations (an increment that does work)
    assert np.abs(ref[3]["p"] - hist["p"]).max() > 0.1 * np.abs(hist["p"]).max()
    # 200 triangles ran in parallel chunks; a group of one chunk runs in the calling thread
    # (the same per-chunk code, compiled at another call site: round-off may differ)
    k = slice(0, 50)
    part = shell_jit.conserving(g.positions(sm)[k], sm.rotation_matrices()[conn[k]],
                                g.frame.R0[k], g.frame.xl0[k], g.K_local[k], hist["p"][k],
                                args[3][k], kw["cayley"][k])
    for a, b in zip(part, (*out[:3], out[3]["p"]), strict=True):
        assert np.abs(a - b[k]).max() <= 1e-13 * np.abs(b[k]).max()
