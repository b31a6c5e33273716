"""Newton's scalar rules are written once (fem.solvers.newton_scalar) and compiled as they stand.

The general path (NormTest, StepBase.block_scale and floors) calls the plain functions; the
compiled steps of small planar models (fem.solvers.newton_kernel) call the same functions
compiled by numba, and the banded LU's solve and the compiled steps' share one compiled
refinement (fem.solvers.banded_kernel.refined). Each verdict of the convergence test is checked
on a case built for its branch (NormTest's rules, its docstring), both ways; the whole-run
comparisons of the two paths are tests/test_planar_step.py and tests/test_planar_static.py.
"""

import math

import numpy as np
import pytest

from fem import linalg
from fem.solvers import newton_scalar as scalar
from fem.solvers.newton import NewtonFailure, NormTest

REF = np.array([1.0, 2.0, 1.0, 1.0])
RTOL = 1e-6                                        # tolerances 1e-6, 2e-6, 1e-6, 1e-6


def case(b, prev=None, floor=0.0, it=1, du_ratio=math.inf, rnorm_prev=None, rnorm0=None,
         max_iterations=25):
    """The verdict's arguments for block norms ``b`` (the whole norm theirs)."""
    b = np.asarray(b, dtype=float)
    rnorm = float(np.sqrt(b @ b))
    prev = b * 4 if prev is None else np.asarray(prev, dtype=float)
    rnorm_prev = float(np.sqrt(prev @ prev)) if rnorm_prev is None else rnorm_prev
    return (b, REF, RTOL, 0.0, prev, np.full(4, floor), rnorm, rnorm_prev,
            rnorm if rnorm0 is None else rnorm0, du_ratio, it, 1e-13, max_iterations)


CASES = {
    "converged": (case([1e-7, 1.9e-6, 0, 0], it=0), scalar.CONVERGED),
    "one block above its tolerance": (case([1e-7, 2.1e-6, 0, 0], it=0), scalar.GOING),
    "not finite": (case([np.nan, 0, 0, 0]), scalar.NOT_FINITE),
    # below a floor of 1e-5 and no longer halved: round-off
    "at a stalled floor": (case([3e-6, 0, 0, 0], prev=[4e-6, 0, 0, 0], floor=1e-5),
                           scalar.AT_FLOOR),
    # below the floor but halving: one more iteration
    "below a floor, halving": (case([1.5e-6, 0, 0, 0], prev=[2e-5, 0, 0, 0], floor=1e-5),
                               scalar.GOING),
    "below a floor at the first iteration": (case([3e-6, 0, 0, 0], floor=1e-5, it=0),
                                             scalar.GOING),
    # corrections at round-off, the residual no longer halving: within 1000 tolerances...
    "stagnated within 1000 tolerances": (case([5e-4, 0, 0, 0], prev=[6e-4, 0, 0, 0],
                                              du_ratio=1e-14), scalar.ROUND_OFF),
    # ... or ROUND_OFF_MARGIN floors, else a failure
    "stagnated within the floors' margin": (case([5e-3, 0, 0, 0], prev=[6e-3, 0, 0, 0],
                                                 floor=1e-3, du_ratio=1e-14), scalar.ROUND_OFF),
    "stagnated above": (case([5e-2, 0, 0, 0], prev=[6e-2, 0, 0, 0], floor=1e-3,
                             du_ratio=1e-14), scalar.STAGNATED),
    "the iteration limit": (case([1.0, 0, 0, 0], it=25), scalar.ITERATIONS),
    "diverging": (case([2e6, 0, 0, 0], it=3, rnorm0=1.0), scalar.DIVERGING),
    "not yet diverging": (case([2e6, 0, 0, 0], it=2, rnorm0=1.0), scalar.GOING),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_verdict_both_ways(name):
    args, expected = CASES[name]
    assert scalar.verdict(*args) == expected
    nk = pytest.importorskip("fem.solvers.newton_kernel")
    assert nk.verdict(*args) == expected


def test_normtest_takes_the_verdicts():
    """NormTest's answers are the verdicts': converged, at the floor, or the failure's reason."""
    test = NormTest(rtol=RTOL, kind=np.array([0, 1, 2, 3]), names=("force", "moment", "i", "c"))
    test.start()
    assert not test.converged(np.array([1.0, 0, 0, 0]), REF)
    test.set_floor(np.full(4, 10.0))
    assert test.converged(np.array([0.9, 0, 0, 0]), REF) and test.at_floor
    test.start()
    test.converged(np.array([1.0, 0, 0, 0]), REF)
    test.correction(1e-15, 1.0)
    with pytest.raises(NewtonFailure, match="force residual .* stagnates"):
        test.converged(np.array([0.9, 0, 0, 0]), REF)


def test_the_compiled_steps_compile_the_python_rules():
    nk = pytest.importorskip("fem.solvers.newton_kernel")
    assert nk.verdict.py_func is scalar.verdict
    assert nk.block_references.py_func is scalar.references
    assert nk.block_floors.py_func is scalar.floors
    assert nk.ratio.py_func is scalar.correction_ratio


def test_references_and_floors_both_ways():
    nk = pytest.importorskip("fem.solvers.newton_kernel")
    rng = np.random.default_rng(7)
    for lever, rotations in ((0.0, False), (3.5, False), (3.5, True)):
        F, M, internal = rng.uniform(0, 10, 3)
        a, b = np.empty(4), np.empty(4)
        scalar.references(F, M, internal, lever, rotations, a)
        nk.block_references(F, M, internal, lever, rotations, b)
        assert np.array_equal(a, b)
        FL, ML = (max(F, M / lever), max(M, F * lever)) if lever else (F, M)
        assert np.array_equal(a, [FL, ML, max(internal, FL), ML if rotations else FL])
    squares = np.array([4.0, np.inf, 0.0, 1e-300])
    a, b = np.empty(4), np.empty(4)
    scalar.floors(squares, 0.5, a)
    nk.block_floors(squares, 0.5, b)
    assert np.array_equal(a, b) and np.array_equal(a, [1.0, 0.0, 0.0, 0.5 * 1e-150])


def test_one_refinement_for_the_banded_lu_and_the_compiled_steps():
    """BandedLU.solve and newton_kernel.solve: the same compiled refinement, the same numbers."""
    nk = pytest.importorskip("fem.solvers.newton_kernel")
    import scipy.sparse as sp

    from fem.solvers.banded import BandedLU

    n = 40
    rng = np.random.default_rng(3)
    A = sp.diags([rng.uniform(-1, 1, n - 2), rng.uniform(-1, 1, n - 1), 4 + rng.uniform(0, 1, n),
                  rng.uniform(-1, 1, n - 1), rng.uniform(-1, 1, n - 2)], [-2, -1, 0, 1, 2],
                 format="csr")
    lu = BandedLU.make(A.indptr, A.indices)
    lu.fill(A.data)
    r = rng.normal(size=n)
    x, report = lu.solve(-r)
    assert report.backward_error <= linalg.REFINE_ABOVE
    assert np.allclose(A @ x, -r, rtol=0, atol=1e-13 * np.abs(r).max())
    y = np.empty(n)
    assert nk.solve(lu.ab, lu.kl, lu.order, lu.indptr, lu.indices, lu.data, lu.norm, r, y,
                    np.empty(n), np.empty(n), linalg.REFINE_ABOVE, linalg.MAX_REFINEMENTS,
                    linalg.POOR_BACKWARD_ERROR)
    assert np.array_equal(x, y)
