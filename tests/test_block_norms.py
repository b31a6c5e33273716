"""The convergence test has a norm per block (forces, moments, internal unknowns, constraints).

A residual that adds forces and moments into one norm depends on the units: the same cantilever
in units where its moments are a billion times its forces passed the test at the first residual
with its forces wrong by half (the moment residual alone filled the norm and its scale). With a
norm and a reference per block, every block is converged to the tolerance in any units, and the
same model gives the same answer.
"""

from unittest import mock

import numpy as np
import pytest

from fem.analysis.planar_static import PlanarIncrement
from fem.dofs import KINDS
from fem.io.deck import from_dict
from fem.run import make_step
from fem.solvers.newton import NewtonFailure, NormTest
from fem.system import System


def cantilever(fs: float = 1.0, ls: float = 1.0, tol: float = 1e-9) -> dict:
    """A co-rotational cantilever bent through a large angle by a tip force, in units where
    forces are ``fs`` and lengths ``ls`` times the base ones (so moments ``fs ls``)."""
    E, A, I, L, P = 1.0e4, 1e-2, 1e-4, 2.0, 3.0
    return {"model": {"dim": 2},
            "materials": [{"name": "m", "E": E * fs / ls**2, "nu": 0.0}],
            "sections": [{"name": "s", "A": A * ls**2, "Iz": I * ls**4}],
            "nodes": {"coordinates": [[0, 0], [L * ls, 0]]},
            "elements": [{"name": "b", "type": "beam", "formulation": "corotational",
                          "material": "m", "section": "s", "connectivity": [[1, 2]],
                          "divisions": 8}],
            "supports": [{"nodes": 1, "fixed": ["all"]}],
            "loads": [{"name": "P", "nodes": 2, "force": [0.0, -P * fs]}],
            "steps": [{"name": "bend", "type": "static", "nonlinear": True, "increments": 2,
                       "tolerance": tol}]}


def run(d: dict, mixed: bool = False):
    """Run the step; the relative residual of each block at every converged increment.

    ``mixed``: the former test, one norm of all unknowns against one scale (the largest norm of
    the external and internal forces, all units together), and one round-off floor. The
    general Newton loop, whose test this watches (the compiled increment of planar beams writes
    the same test out: test_the_compiled_increment_converges_in_any_units).
    """
    with mock.patch.object(PlanarIncrement, "make", return_value=None):
        return _run(d, mixed)


def _run(d: dict, mixed: bool):
    dk = from_dict(d)
    sysm = System(dk.model)
    state = sysm.reference_state()
    step = make_step(dk.steps[0], sysm, dk, 1)
    kind = sysm.dofmap.kind[:sysm.n_free]
    block_scale, floors, evaluate = step.block_scale, step.floors, step.evaluate
    refs, accepted = [None], []
    if mixed:
        step.test = NormTest(rtol=step.test.rtol, max_iterations=25)
        step.block_scale = lambda *v: max(max(np.linalg.norm(x) for x in v), 1e-300)
        step.floors = lambda K, trial: float(np.linalg.norm(floors(K, trial)))

    def evaluate_and_keep_the_references(trial, lam, tangent):
        refs[0] = block_scale(sysm.internal_force(trial), step.external(trial, lam))
        return evaluate(trial, lam, tangent)

    converged = step.test.converged

    def converged_and_record(r, scale):
        done = converged(r, scale)
        if done:
            blocks = np.sqrt(np.bincount(kind, weights=np.asarray(r) ** 2, minlength=4))
            accepted.append(blocks / refs[0])
        return done

    step.evaluate = evaluate_and_keep_the_references
    step.test.converged = converged_and_record
    step.run(state, None)
    return state, np.array(accepted)


def test_kinds_of_the_dof_map():
    """Translations are forces, rotations moments, fixed rows included; multipliers constraints."""
    d = cantilever()
    d["nodes"]["coordinates"].append([4.0, 0.0])
    d["elements"].append({"name": "c", "type": "beam", "formulation": "corotational",
                          "material": "m", "section": "s", "connectivity": [[3, 4]]})
    d["nodes"]["coordinates"].append([2.0, 0.0])
    d["elements"][1]["connectivity"] = [[4, 3]]
    d["ties"] = [{"name": "pin", "pairs": [[2, 4]]}]
    dm = System(from_dict(d).model).dofmap
    slots = np.array([0, 0, 1])                                  # ux uy rz
    active = dm.index >= 0
    np.testing.assert_array_equal(dm.kind[dm.index[active]],
                                  np.broadcast_to(slots, dm.index.shape)[active])
    assert np.all(dm.kind[dm.blocks["multipliers"]] == KINDS.index("constraint"))
    assert len(dm.kind) == dm.n_active and not dm.kind.flags.writeable


@pytest.mark.parametrize("fs, ls", [(1e6, 1e-9), (1e-3, 1e9), (1e3, 1e3)],
                         ids=["forces-1e6-moments-1e-3", "moments-1e6-forces-1e-3", "kN-mm"])
def test_every_block_converges_in_any_units(fs, ls):
    """Forces of 1e6 and moments of 1e-3 (or the reverse): the same answer and the same
    relative accuracy of each block as in the base units, where one mixed norm was wrong."""
    base, base_blocks = run(cantilever())
    state, blocks = run(cantilever(fs, ls))
    assert blocks.max() <= 1e-9 and base_blocks.max() <= 1e-9
    np.testing.assert_allclose(state.u / ls, base.u, rtol=0, atol=1e-8 * np.abs(base.u).max())
    np.testing.assert_allclose(state.rot, base.rot, rtol=0, atol=1e-8)


@pytest.mark.parametrize("fs, ls", [(1e6, 1e-9), (1e-3, 1e9), (1e3, 1e3)],
                         ids=["forces-1e6-moments-1e-3", "moments-1e6-forces-1e-3", "kN-mm"])
def test_the_compiled_increment_converges_in_any_units(fs, ls):
    """The same through fem.analysis.planar_static (the test in fem.solvers.newton_kernel): the
    answer of the base units, every block of the final residual within the tolerance of its
    reference."""
    pytest.importorskip("numba")
    states, made = [], []
    make = PlanarIncrement.make.__func__
    with mock.patch.object(PlanarIncrement, "make",
                           classmethod(lambda cls, s: made.append(make(cls, s)) or made[-1])):
        for d in (cantilever(), cantilever(fs, ls)):
            dk = from_dict(d)
            sysm = System(dk.model)
            state = sysm.reference_state()
            step = make_step(dk.steps[0], sysm, dk, 1)
            step.run(state, None)
            states.append((state, step, sysm))
    assert len(made) == 2 and all(m is not None for m in made)
    (base, _, _), (state, step, sysm) = states
    np.testing.assert_allclose(state.u / ls, base.u, rtol=0, atol=1e-8 * np.abs(base.u).max())
    np.testing.assert_allclose(state.rot, base.rot, rtol=0, atol=1e-8)
    lam = step.settings.load_factor
    fint = sysm.internal_force(state)
    fext = step.external(state, lam)
    kind = sysm.dofmap.kind[:sysm.n_free]
    r = (fint - fext)[:sysm.n_free]
    blocks = np.sqrt(np.bincount(kind, weights=r**2, minlength=4))
    assert np.all(blocks <= 1e-9 * step.block_scale(fext, fint))


def test_one_mixed_norm_stops_too_early_when_moments_dominate():
    """The former test on the same cantilever in units where moments are 1e12 times forces: it
    accepted the first residual of an increment, forces wrong by half, the tip 27 % short."""
    base, _ = run(cantilever())
    state, blocks = run(cantilever(1e-3, 1e9), mixed=True)
    assert blocks[:, KINDS.index("force")].max() > 0.1
    assert abs(state.u[1, 0] / 1e9 - base.u[1, 0]) > 0.1 * abs(base.u[1, 0])


def test_the_failing_block_is_named():
    """A moment residual far above its tolerance is what the failure says."""
    t = NormTest(rtol=1e-9, max_iterations=2, kind=np.array([0, 0, 1]), names=KINDS)
    t.start()
    scale = np.array([10.0, 400.0, 1.0, 1.0])
    r = np.array([1e-12, 1e-12, 3.2e-4])
    assert not t.converged(r, scale)
    t.correction(1.0, 1.0)
    assert not t.converged(r, scale)
    with pytest.raises(NewtonFailure, match=r"moment residual 3\.200e-04 > tolerance 1e-09 x "
                                            r"4\.000e\+02"):
        t.converged(r, scale)
    t.start()
    assert t.converged(np.array([1e-9, 0.0, 3e-7]), scale)       # each block to its own scale
    t.start()
    assert not t.converged(np.array([1e-7, 0.0, 0.0]), scale)    # forces: 1e-8 relative


def test_a_block_at_its_round_off_floor_is_accepted_once_it_stops_halving():
    """The floor is per block: a moment block below its floor passes once a correction no
    longer halves it (or it started below it), while the force block meets its tolerance."""
    t = NormTest(rtol=1e-12, kind=np.array([0, 1]), names=KINDS)
    t.start()
    t.set_floor([1e-20, 1e-6, 0.0, 0.0])
    scale = np.ones(4)
    assert not t.converged(np.array([1.0, 1.0]), scale)
    t.correction(1e-3, 1e3)
    assert not t.converged(np.array([1e-13, 1e-7]), scale)       # still falling fast
    assert t.converged(np.array([1e-13, 4e-8]), scale) and t.at_floor    # was below already


def test_no_convergence_message_names_the_block_in_a_run():
    """A step that cannot converge in its iterations says which block did not."""
    d = cantilever()
    d["steps"][0].update(increments=1, max_iterations=1, min_increment=1.0, max_increment=1.0)
    from fem.errors import ConvergenceError
    with pytest.raises(ConvergenceError, match=r"(force|moment) residual [0-9.e+-]+ > "
                                               r"tolerance 1e-09 x"):
        run(d)
