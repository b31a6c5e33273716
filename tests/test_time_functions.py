"""Time functions over arrays of times: bit for bit their values one time at a time, where
they say so (``exact_over_arrays``, which lets a compiled run evaluate its drives at once)."""

import numpy as np
import pytest

from fem import time_functions as tf

FUNCTIONS = [tf.Constant(2.5), tf.Linear(1.7), tf.Ramp(0.1, 1.3, 0.2, 5.0),
             tf.Table((0.0, 0.5, 2.0), (0.0, 1.0, -3.0)), tf.Steady(124.8),
             tf.Steady(3.3, 0.2, 1.1), tf.SpinUp(6.0, 0.0, 1.5), tf.SpinUp(4.0, 0.3, 1.9)]


def times() -> np.ndarray:
    """Times as a time loop adds them up (steps of 1e-5 s and of 1e-3 s) and random ones."""
    rng = np.random.default_rng(3)
    return np.concatenate([np.cumsum(np.full(3000, 1e-5)), np.cumsum(np.full(2000, 1e-3)),
                           rng.uniform(-1.0, 3.0, 3000)])


@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: repr(f))
def test_values_over_arrays_are_the_values_one_at_a_time_where_declared(f):
    """Every function that declares ``exact_over_arrays`` gives, over an array, its values at
    each time alone bit for bit (compared as bytes: 0.0 and -0.0 apart)."""
    t = times()
    over = np.asarray(f(t), dtype=float)
    alone = np.array([float(f(float(x))) for x in t])
    if f.exact_over_arrays:
        assert over.tobytes() == alone.tobytes()
    else:                                  # SpinUp: the same to round-off (pow vs multiply)
        np.testing.assert_allclose(over, alone, rtol=1e-14, atol=1e-14)
