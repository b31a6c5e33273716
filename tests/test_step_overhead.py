"""Per-step checks made cheap (issue 32) must still refuse what they refused.

A converged time step's finiteness check is one sum of the state, the residual and the
energies (:meth:`fem.analysis.dynamic.DynamicStep._check_finite`) instead of one ``isfinite``
pass per array: a NaN or an infinity in any of them still ends the step with an
:class:`~fem.errors.AccuracyError`.
"""

import numpy as np
import pytest

from benchmarks.small_models import pendulum_deck
from fem.errors import AccuracyError
from fem.io.deck import from_dict
from fem.run import make_step
from fem.system import System


@pytest.fixture(scope="module")
def step_and_state():
    deck = from_dict(pendulum_deck(2))
    system = System(deck.model)
    state = system.reference_state()
    return make_step(deck.steps[0], system, deck, deck.output["every"]), state


@pytest.mark.parametrize("field", ["u", "rot", "v", "a", "r", "strain", "work"])
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_a_non_finite_value_anywhere_ends_the_step(step_and_state, field, bad):
    step, state = step_and_state
    s1 = state.copy()
    s1.v[:] = 1.0
    r, strain, work = np.ones(step.n + 1), 1.0, 2.0
    step._check_finite(s1, r, strain, work)                       # all finite: passes
    if field == "r":
        r[-1] = bad
    elif field == "strain":
        strain = bad
    elif field == "work":
        work = bad
    else:
        getattr(s1, field).reshape(-1)[-1] = bad
    with pytest.raises(AccuracyError, match="overflowed"):
        step._check_finite(s1, r, strain, work)
