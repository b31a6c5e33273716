"""Bent corrections (fem.analysis.bent): the chord fit, exact for trees, and its compiled form."""

import numpy as np
import pytest

from fem import rotations as so3
from fem.analysis import bent
from fem.elements import Beam
from fem.model import Model
from fem.system import System


def model_3d(conn, X):
    axis = X[conn[:, 1]] - X[conn[:, 0]]
    ref = np.where(np.abs(axis[:, 2:3]) > 0.5 * np.linalg.norm(axis, axis=1)[:, None],
                   [[0.0, 1.0, 0.0]], [[0.0, 0.0, 1.0]])
    beam = Beam("b", conn, X, 3, E=2.1e5, G=8.1e4, A=1e-2, Iy=1e-5, Iz=2e-5, J=1.5e-5,
                formulation="corotational", ref=ref)
    fixed = np.zeros((len(X), 6), dtype=bool)
    fixed[0] = True
    return Model(dim=3, X=X, node_ids=np.arange(1, len(X) + 1), groups=(beam,), fixed=fixed)


def cantilever(n):
    """A bent, twisted 3D cantilever of n elements clamped at node 0 (a tree)."""
    s = np.linspace(0.0, 1.0, n + 1)
    X = np.c_[s, 0.3 * np.sin(2 * s), 0.2 * s**2]
    return model_3d(np.c_[np.arange(n), np.arange(1, n + 1)], X)


@pytest.mark.parametrize("compiled", [False, True])
def test_a_linearized_rotation_is_bent_into_the_finite_rotation(compiled, monkeypatch):
    """A tree's correction ``omega x X`` with spins ``omega`` becomes ``exp(omega) X - X``.

    Each chord turns by ``e x Delta / l + (e . w) e = omega`` with no stretch, and a tree's
    least-squares fit of the chords is exact, so the bent nodes are the rigidly turned ones.
    """
    if compiled:
        pytest.importorskip("numba")
    else:
        monkeypatch.setenv("FEM_JIT", "0")
    model = cantilever(80)
    system = System(model)
    state = system.reference_state()
    fit = bent.ChordFit(system)
    assert not compiled or (fit.chord0 is not None and bent._compiled.enabled())
    omega = np.array([0.3, -0.5, 0.7])
    X = model.X
    dn = np.zeros((len(X), 6))
    dn[:, :3] = np.cross(omega, X)
    dn[:, 3:] = omega
    out = fit(state, dn)
    assert np.allclose(out[:, :3], X @ so3.expm(omega).T - X, rtol=0, atol=1e-13)
    assert np.array_equal(out[:, 3:], dn[:, 3:])        # rotations keep Newton's increments


def test_compiled_chord_fit_equals_numpy():
    """On a deformed lattice (not a tree: least squares) with a random correction, to 1e-13."""
    pytest.importorskip("numba")
    from benchmarks.common import space_frame

    model, _ = space_frame(4)
    system = System(model)
    state = system.reference_state()
    rng = np.random.default_rng(7)
    state.u[:, :3] = 0.05 * rng.normal(size=(len(model.X), 3))
    state.u[model.fixed[:, 0], :3] = 0.0
    dn = 0.1 * rng.normal(size=(len(model.X), 6))
    dn[model.fixed[:, 0]] = 0.0
    fit = bent.ChordFit(system)
    assert fit.chord0 is not None and bent._compiled.enabled()
    numpy_rhs = fit.rhs_numpy(state, dn)
    rhs = np.empty_like(numpy_rhs)
    bent._compiled.function(state.u, dn, fit.conn, fit.chord0, fit.w, rhs)
    assert np.allclose(rhs, numpy_rhs, rtol=0, atol=1e-13 * np.abs(numpy_rhs).max())
    assert np.abs(numpy_rhs).max() > 1e-3                 # the fit had work to do
    from fem.analysis import bent_kernel

    assert bent_kernel._SMALL == so3._SMALL                  # the same series threshold
