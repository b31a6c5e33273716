"""The compiled banded LU of small Newton systems (fem.solvers.banded) against dense LU.

Random unsymmetric band matrices with rows of very different sizes, some with their unknowns
shuffled (reverse Cuthill-McKee renumbers them back into a band); null pivots (it does not
pivot, as PETSc's own LU does not: a zero pivot is reported, never divided by),
non-finite right-hand sides; dynamic steps of small models use it and give the runs the PETSc
LU gives; models with multipliers or solver options keep PETSc.
"""

import copy

import numpy as np
import pytest
import scipy.sparse as sp

from fem import linalg
from fem.integrators import planar, planar_alpha
from fem.io.deck import from_dict
from fem.run import make_step
from fem.solvers import banded
from fem.system import System

pytest.importorskip("numba")


def band_matrix(rng, n: int, width: int, shuffle: bool) -> sp.csr_matrix:
    """Unsymmetric, rows scaled by 1e-3 to 1e3 (forces beside moments), a diagonal of either
    sign that outweighs its row (as a time step's mass does) only somewhat."""
    A = sp.diags([rng.normal(size=n - abs(k)) for k in range(-width, width + 1)],
                 list(range(-width, width + 1)), format="lil")
    A.setdiag(rng.choice([-1.0, 1.0], n) * (0.5 + width * rng.random(n)))
    A = (sp.diags(10.0 ** rng.uniform(-3, 3, n)) @ A).tocsr()
    if shuffle:
        p = rng.permutation(n)
        A = A[p][:, p].tocsr()
    A.sort_indices()
    return A


@pytest.mark.parametrize("n, width, shuffle", [(1, 0, False), (30, 3, False), (303, 5, False),
                                               (200, 7, True), (50, 2, True)])
def test_solves_equal_dense_lu(n, width, shuffle):
    rng = np.random.default_rng(n + width)
    A = band_matrix(rng, n, width, shuffle)
    if n == 1:
        A = sp.csr_matrix(np.array([[2.5]]))
    lu = banded.BandedLU.make(A.indptr, A.indices)
    rows = np.repeat(np.arange(n), np.diff(A.indptr))
    given = int(np.abs(rows - A.indices).max())
    assert lu is not None
    if shuffle:                                           # RCM (a heuristic) narrows it again
        assert lu.kl <= 2 * width < given
    else:
        assert lu.kl == width
    lu.fill(A.data)
    # dense LU's answer is itself known to cond(A) eps only (and changes with the BLAS threads)
    tol = max(1e-11, 10 * np.linalg.cond(A.toarray(), np.inf) * np.finfo(float).eps)
    for _ in range(2):                                    # one factorization, two solves
        b = rng.normal(size=n)
        x, report = lu.solve(b)
        exact = np.linalg.solve(A.toarray(), b)
        assert np.abs(x - exact).max() <= tol * np.abs(exact).max()
        assert report.backward_error <= 1e-15 and report.refinements == 0
    A.data *= 3.0                                         # refilled: factored again
    lu.fill(A.data)
    x, _ = lu.solve(b)
    assert np.abs(x - exact / 3.0).max() <= tol * np.abs(exact).max()


def test_wide_bands_are_left_to_the_sparse_lu():
    A = sp.random(200, 200, density=0.3, random_state=1, format="csr") + sp.eye(200)
    A = A.tocsr()
    A.sort_indices()
    assert banded.BandedLU.make(A.indptr, A.indices) is None


def test_null_pivots_and_non_finite_right_hand_sides_are_refused():
    A = sp.csr_matrix(np.array([[1.0, 2.0, 0.0], [2.0, 4.0, 0.0], [0.0, 0.0, 1.0]]))
    lu = banded.BandedLU.make(A.indptr, A.indices)
    lu.fill(A.data)
    with pytest.raises(linalg.SingularMatrixError):
        lu.solve(np.ones(3))
    # a pivot is null relative to its row (PETSc's rule), not to the matrix: a row of small
    # entries (other units) is not singular, a difference at round-off of its row is
    for rows, singular in (([[1.0, 0.0], [0.0, 1e-14]], False),
                           ([[1.0, 1.0], [1.0, 1.0 + 1e-14]], True),
                           ([[0.0, 1.0], [1.0, 0.0]], True)):      # no pivoting
        B = sp.csr_matrix(np.array(rows))
        lu = banded.BandedLU.make(B.indptr, B.indices)
        lu.fill(B.data)
        if singular:
            with pytest.raises(linalg.SingularMatrixError):
                lu.solve(np.ones(2))
        else:
            assert lu.solve(np.ones(2))[0] == pytest.approx([1.0, 1e14])
    lu = banded.BandedLU.make(A.indptr, A.indices)
    lu.fill(np.ones(len(A.data)))
    with pytest.raises(linalg.NonFiniteError):
        lu.solve(np.array([1.0, np.nan, 0.0]))


def pendulum(**step) -> dict:
    return {"model": {"dim": 2},
            "materials": [{"name": "m", "E": 1.0e4, "nu": 0.0}],
            "sections": [{"name": "s", "A": 1.0, "Iz": 1e-3, "mass_per_length": 0.5,
                          "rotary_inertia_per_length": 5e-4}],
            "nodes": {"coordinates": [[0.0, 0.0], [2.0, 0.0]]},
            "sets": {"pin": [1], "tip": [2]},
            "elements": [{"name": "beam", "type": "beam", "formulation": "corotational",
                          "material": "m", "section": "s", "connectivity": [[1, 2]],
                          "divisions": 10}],
            "supports": [{"nodes": "pin", "fixed": ["ux", "uy"]}],
            "gravity": {"acceleration": [0.0, -9.81]},
            "steps": [{"name": "swing", "type": "dynamic", "time_step": 2e-3, "duration": 0.1,
                       "tolerance": 1e-10, **step}]}


def run(deck, monkeypatch=None, petsc=False):
    if petsc:
        monkeypatch.setattr(banded.BandedLU, "make", classmethod(lambda cls, *a: None))
    dk = from_dict(copy.deepcopy(deck))
    sysm = System(dk.model)
    state = sysm.reference_state()
    step = make_step(dk.steps[0], sysm, dk)
    seen = []
    fill = step.linear.fill
    step.linear.fill = lambda K: (seen.append(step.linear.banded), fill(K))
    step.run(state, None)
    if petsc:
        monkeypatch.undo()
    return state, seen


@pytest.mark.parametrize("integrator", ["midpoint", "generalized_alpha"])
def test_dynamic_steps_of_small_models_solve_banded_as_petsc_does(integrator, monkeypatch):
    """(The energy-conserving scheme and generalized-alpha of this model run compiled time
    steps, which use the banded LU's kernels directly: tests/test_planar_step.py and
    tests/test_planar_alpha.py; here generalized-alpha takes the general path.)"""
    monkeypatch.setattr(planar_alpha.PlanarAlphaStep, "make", classmethod(lambda cls, i: None))
    deck = pendulum(integrator=integrator)
    fast, seen = run(deck)
    assert seen and all(isinstance(b, banded.BandedLU) for b in seen)
    slow, seen = run(deck, monkeypatch, petsc=True)
    assert seen and all(b is None for b in seen)
    assert np.abs(fast.u - slow.u).max() <= 1e-11 * np.abs(slow.u).max()
    assert np.abs(fast.v - slow.v).max() <= 1e-9 * np.abs(slow.v).max()


@pytest.mark.parametrize("change", ["joint", "options"])
def test_multipliers_and_solver_options_keep_petsc(change, monkeypatch):
    """(The compiled energy-conserving step of this model with a joint numbers its own banded
    LU, multipliers after their nodes: tests/test_planar_multibody.py; here the general path.)"""
    monkeypatch.setattr(planar.PlanarStep, "make", classmethod(lambda cls, i: None))
    deck = pendulum()
    if change == "joint":
        deck["joints"] = [{"name": "hinge", "type": "revolute", "ground": [2]}]
        deck["supports"] = []
        deck["elements"][0]["connectivity"] = [[2, 1]]
    else:
        deck["solver"] = {"petsc_options": {"pc_factor_mat_ordering_type": "rcm"}}
    _, seen = run(deck)
    assert seen and all(b is None for b in seen)


def test_a_pattern_met_again_is_renumbered_once(monkeypatch):
    """The memo of BandedLU.make: a pattern met again gets the renumbering and band positions
    made the first time (the same arrays) and solves as a fresh one does; a pattern of the same
    size with other columns, or too wide a band, is not mistaken for it."""
    rng = np.random.default_rng(7)
    monkeypatch.setattr(banded, "_memo", banded.OrderedDict())
    A = band_matrix(rng, 60, 14, shuffle=True)            # renumbered (wider than RCM_ABOVE)
    first, again = (banded.BandedLU.make(A.indptr, A.indices) for _ in range(2))
    fresh = banded.BandedLU._make(A.indptr.astype(np.int64), A.indices.astype(np.int64), 60)
    assert again.pos is first.pos and again.order is first.order and again.kl == first.kl
    np.testing.assert_array_equal(again.pos, fresh.pos)
    np.testing.assert_array_equal(again.order, fresh.order)
    b = rng.normal(size=60)
    for lu in (again, fresh):
        lu.fill(A.data)
    np.testing.assert_array_equal(again.solve(b)[0], fresh.solve(b)[0])
    assert again.ab is not first.ab                      # each its own factors
    B = band_matrix(rng, 60, 14, shuffle=True)           # same size, other columns
    other = banded.BandedLU.make(B.indptr, B.indices)
    assert other.pos is not first.pos
    np.testing.assert_array_equal(other.pos, banded.BandedLU._make(
        B.indptr.astype(np.int64), B.indices.astype(np.int64), 60).pos)
    wide = sp.random(80, 80, density=0.9, random_state=1, format="csr") + sp.eye(80)
    assert banded.BandedLU.make(wide.indptr, wide.indices) is None
    assert banded.BandedLU.make(wide.indptr, wide.indices) is None   # remembered as too wide
    for k in range(banded.MEMO_SIZE + 2):                # the memo stays bounded
        C = band_matrix(rng, 10 + k, 2, shuffle=False)
        banded.BandedLU.make(C.indptr, C.indices)
    assert len(banded._memo) == banded.MEMO_SIZE
