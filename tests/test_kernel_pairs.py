"""Every compiled pair of :data:`fem.kernels.PAIRS` gives its numpy reference's numbers.

A pair is one method in two implementations with one signature (:class:`fem.kernels.Pair`): on
the pair's own inputs (``Pair.samples``: groups above the dispatch threshold at large rotations
and steps, with offsets, laminates, Cayley parameters, ...), every array of the compiled side
equals the reference's to 1e-13 of its largest entry, and ``None`` stays ``None``. The method
the rest of fem calls (``Pair.dispatch``) gives the compiled side's numbers bit for bit on those
inputs and the reference's with ``FEM_JIT=0``. Every kernel module is one side of a registered
pair, or a compiled step's, which its own tests compare with the general path by iterations,
norms and states. The element invariants run both ways in ``tests/test_elements.py``.
"""

import glob
import importlib
import os
import zlib

import numpy as np
import pytest

from fem import kernels

#: the modules whose import registers pairs (the element families' dispatch modules, the
#: assembly, the bent corrections)
REGISTERING = ("fem.elements", "fem.assembly", "fem.analysis.bent")
for _module in REGISTERING:
    importlib.import_module(_module)

#: kernel modules that are no side of a pair: the compiled steps (planar time steps, planar and
#: 3D load-control increments) and the scalar logic they share (Newton's test, the banded LU),
#: compared with the general path by iterations, norms and states (tests/test_planar_step.py,
#: tests/test_planar_alpha.py, tests/test_planar_static.py, tests/test_spatial_static.py) and
#: with dense LU (tests/test_banded.py); the runs of time steps (tests/test_planar_run.py) and
#: the planar step's consistent beam inertia, compared element by element with
#: fem.inertia.beam's (tests/test_planar_crank.py)
STEP_KERNELS = {"fem.integrators.planar_kernel", "fem.integrators.planar_newton_kernel",
                "fem.integrators.planar_alpha_kernel", "fem.integrators.planar_joint_kernel",
                "fem.integrators.planar_run_kernel", "fem.integrators.planar_inertia_kernel",
                "fem.analysis.planar_static_kernel", "fem.analysis.spatial_static_kernel",
                "fem.solvers.newton_kernel", "fem.solvers.banded_kernel"}


def leaves(x, path="") -> list:
    """``[(path, array or None)]`` of a result: arrays, ``None``, tuples and dicts of them."""
    if isinstance(x, dict):
        return [leaf for k in sorted(x) for leaf in leaves(x[k], f"{path}.{k}")]
    if isinstance(x, tuple | list):
        return [leaf for i, v in enumerate(x) for leaf in leaves(v, f"{path}[{i}]")]
    return [(path, None if x is None else np.asarray(x))]


def fresh(args: tuple) -> tuple:
    """``args`` with copies of its arrays (a side may write into an argument)."""
    return tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)


def test_every_kernel_module_is_a_pair_or_a_compiled_steps():
    root = os.path.dirname(os.path.dirname(os.path.abspath(kernels.__file__)))
    modules = {os.path.relpath(p, root)[:-3].replace(os.sep, ".")
               for p in glob.glob(kernels.KERNELS, recursive=True)}
    paired = {p.kernel.module for p in kernels.PAIRS.values()}
    assert paired.isdisjoint(STEP_KERNELS)
    assert modules == paired | STEP_KERNELS
    for pair in kernels.PAIRS.values():
        assert pair.kernel.module.endswith("_kernel")


def test_a_name_is_registered_once():
    pair = next(iter(kernels.PAIRS.values()))
    with pytest.raises(ValueError, match="already registered"):
        kernels.register(pair)


@pytest.mark.parametrize("name", sorted(kernels.PAIRS))
def test_the_compiled_side_gives_the_reference_numbers(name, monkeypatch):
    pair = kernels.PAIRS[name]
    if not pair.kernel.enabled():
        pytest.skip("numba is not installed (or FEM_JIT=0)")
    samples = pair.samples(np.random.default_rng(zlib.crc32(name.encode())))
    assert samples
    for args in samples:
        if hasattr(args[0], "conn"):             # a group (a fit): above the dispatch threshold
            assert len(args[0].conn) >= kernels.MIN_ELEMENTS
        ref, out = leaves(pair.reference(*fresh(args))), leaves(pair.compiled(*fresh(args)))
        assert [p for p, _ in out] == [p for p, _ in ref]
        for (where, a), (_, b) in zip(out, ref, strict=True):
            if b is None:
                assert a is None, where
                continue
            assert a.shape == b.shape and np.abs(b).max() > 0, where
            assert np.abs(a - b).max() <= 1e-13 * np.abs(b).max(), where
        if pair.dispatch is None:
            continue
        for (where, a), (_, b) in zip(leaves(pair.dispatch(*fresh(args))), out, strict=True):
            assert (a is None and b is None) or np.array_equal(a, b), where
        with monkeypatch.context() as m:
            m.setenv("FEM_JIT", "0")
            numpy = leaves(pair.dispatch(*fresh(args)))
        for (where, a), (_, b) in zip(numpy, ref, strict=True):
            assert (a is None and b is None) or np.array_equal(a, b), where
