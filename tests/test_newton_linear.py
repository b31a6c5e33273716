"""Newton on a LinearSystem (issue 31, stage 1): the step's meaning of a singular solve and its
solve reports reach Newton through its two hooks, ``singular`` and ``solved``."""

from __future__ import annotations

import numpy as np
import pytest

from fem import linalg
from fem.solvers.newton import Evaluation, Newton, NewtonFailure, NormTest


class Linear:
    """A LinearSystem's interface around a dense matrix; singular when told."""

    def __init__(self, n: int, singular: bool = False):
        self.n, self.singular, self.K = n, singular, None

    def fill(self, K):
        self.K = K

    def solve(self, rhs):
        if self.singular:
            raise linalg.SingularMatrixError(3)
        x = np.linalg.solve(self.K, rhs)
        return x, linalg.SolveReport(1e-16, 1e-16, 0)


class Quadratic:
    """r(x) = x + x^3 - b, one unknown per entry, tangent diag(1 + 3 x^2)."""

    fused = True

    def __init__(self, b):
        self.b = b

    def evaluate(self, x, lam, tangent):
        return Evaluation(r=x + x ** 3 - lam * self.b, scale=1.0,
                          K=np.diag(1 + 3 * x ** 2) if tangent else None)

    def update(self, x, du):
        x += du

    def floor(self, K, x):
        return 0.0

    def positions(self, x):
        return float(np.linalg.norm(x)) or 1.0


def test_newton_solves_with_the_linear_system_and_reports_each_solve():
    b = np.array([2.0, 10.0])
    reports = []
    newton = Newton(Linear(2), NormTest(rtol=1e-12), solved=reports.append)
    x = np.zeros(2)
    its, _ = newton.iterate(Quadratic(b), x, 1.0)
    assert np.allclose(x + x ** 3, b, rtol=1e-12, atol=0)
    assert len(reports) == its and all(r.backward_error == 1e-16 for r in reports)


def test_a_singular_solve_means_what_the_step_says():
    class Mechanism(Exception):
        pass

    seen = []

    def singular(err, failure):
        seen.append((err, failure))
        return Mechanism("the step's meaning")

    newton = Newton(Linear(2, singular=True), NormTest(), singular=singular)
    with pytest.raises(Mechanism):
        newton.iterate(Quadratic(np.ones(2)), np.zeros(2), 1.0)
    (err, failure), = seen
    assert isinstance(err, linalg.SingularMatrixError)
    assert isinstance(failure, NewtonFailure) and "singular tangent" in failure.reason
    plain = Newton(Linear(2, singular=True), NormTest())       # without the hook: a failure
    with pytest.raises(NewtonFailure, match="singular tangent"):
        plain.iterate(Quadratic(np.ones(2)), np.zeros(2), 1.0)
