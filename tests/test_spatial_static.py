"""The compiled load-control increment of 3D beam models (fem.analysis.spatial_static).

Its increments take the general Newton loop's iterations, residual norms, bent corrections and
determinant signs to the same states (the general path evaluates groups this small with the
numpy beams); what it cannot finish (a cut back, a mechanism) goes the general way; the models
it does not take keep the general path, with the reason logged.
"""

import copy
import logging

import numpy as np
import pytest
from test_planar_static import Record, assert_same_run

from benchmarks.small_models import sze_deck
from fem.analysis import spatial_static
from fem.analysis.static import StaticStep
from fem.errors import ModelError
from fem.io.deck import from_dict
from fem.run import make_step
from fem.system import System

pytest.importorskip("numba")


def sze(increments: int = 20) -> dict:
    """Sze et al.'s cantilever under end shear (section 3.1) as the benchmark's 10 3D beams,
    tolerance 1e-9 (the paths' decisions clear of round-off)."""
    deck = sze_deck()
    deck["steps"][0].update(increments=increments, max_increment=4.0 / increments,
                            tolerance=1e-9)
    return deck


def frame() -> dict:
    """A skew 3D L-frame of two groups (Euler-Bernoulli, Timoshenko with shear arches): gravity,
    a tabled tip load with a moment, the clamped foot dragged sideways, the tip held in z."""
    return {
        "model": {"dim": 3, "title": "3D L-frame"},
        "materials": [{"name": "m", "E": 2.0e4, "nu": 0.3}],
        "sections": [{"name": "eb", "A": 1.0, "Iy": 1.0e-3, "Iz": 2.0e-3, "J": 1.5e-3,
                      "mass_per_length": 0.5},
                     {"name": "tim", "A": 0.8, "Iy": 2.0e-3, "Iz": 1.0e-3, "J": 2.0e-3,
                      "Ay": 0.6, "Az": 0.5}],
        "nodes": {"coordinates": [[0.0, 0.0, 0.0], [1.0, 0.1, 0.2], [1.1, -0.7, 0.4]]},
        "sets": {"foot": [1], "corner": [2], "tip": [3]},
        "elements": [{"name": "arm", "type": "beam", "formulation": "corotational",
                      "material": "m", "section": "eb", "connectivity": [[1, 2]],
                      "divisions": 5, "orientation": [0.0, 0.0, 1.0]},
                     {"name": "leg", "type": "beam", "formulation": "corotational",
                      "theory": "timoshenko", "material": "m", "section": "tim",
                      "connectivity": [[2, 3]], "divisions": 4, "orientation": [0.0, 0.0, 1.0]}],
        "supports": [{"nodes": "foot", "fixed": ["all"]},
                     {"nodes": "tip", "fixed": ["uz"]}],
        "functions": [{"name": "late", "type": "table", "points": [[0.0, 0.0], [1.0, 1.0],
                                                                    [2.0, 3.0]]}],
        "gravity": {"acceleration": [0.0, 0.0, -9.81]},
        "loads": [{"name": "push", "nodes": "tip", "force": [-20.0, 5.0, 0.0],
                   "moment": [0.5, 0.0, 2.0], "function": "late"}],
        "prescribed": [{"name": "drag", "nodes": "foot", "dof": "ux", "value": 0.05}],
        "steps": [{"name": "load", "type": "static", "nonlinear": True, "load_factor": 2.0,
                   "increments": 8, "tolerance": 1e-9, "prescribed": ["drag"]}]}


def run(deck: dict, monkeypatch, compiled: bool = True):
    """Run the deck's step: (state, step, per-increment records), as tests/test_planar_static.py
    does. ``compiled`` false: without the compiled increment."""
    made = []
    make = spatial_static.SpatialIncrement.make.__func__
    monkeypatch.setattr(spatial_static.SpatialIncrement, "make", classmethod(
        lambda cls, step: made.append(make(cls, step) if compiled else "off") or made[-1]))
    watched = []
    checks = StaticStep._increment_checks            # every converged increment, first thing

    def watch(self, state, r, lam):
        watched.append((list(self.test.norms), [g for g, _ in self._signs]))
        return checks(self, state, r, lam)

    monkeypatch.setattr(StaticStep, "_increment_checks", watch)
    dk = from_dict(copy.deepcopy(deck))
    sysm = System(dk.model)
    state = sysm.reference_state()
    step = make_step(dk.steps[0], sysm, dk)
    record = Record()
    step.run(state, record)
    monkeypatch.undo()
    assert isinstance(made[0], spatial_static.SpatialIncrement) == compiled, made[0]
    return state, step, [(lam, its, norms, signs) for (lam, its), (norms, signs)
                         in zip(record.increments, watched, strict=True)]


def test_sze_cantilever_increments_as_the_general_loop(monkeypatch):
    """10 beams, one group under MIN_ELEMENTS (numpy in the general path, the kernel here):
    the same increments, iterations, norms, bent corrections, signs and states; the tip of
    the elastica (Mattiasson 1981, Table 1, P L^2 / EI = 4: 1 - x / L = 0.32894, w / L =
    0.66996; the beams stretch by P / EA and are 10, hence 1e-4 L)."""
    fast = run(sze(), monkeypatch)
    slow = run(sze(), monkeypatch, compiled=False)
    assert_same_run(fast, slow)
    state, step, inc = fast
    assert step.bent > 0 and len(inc) == 20
    tip = state.u[1]                               # divisions number the tip node 2
    assert tip[[0, 2]] == pytest.approx([-3.2894, 6.6996], abs=1e-3)
    assert abs(tip[1]) < 1e-12


def test_a_skew_frame_of_two_theories_increments_as_the_general_loop(monkeypatch):
    """Two groups (Euler-Bernoulli and Timoshenko: the shear-arch terms of one merged on the
    other's pairs), gravity, a load function with a moment, a prescribed support motion: the
    same increments to the same states, and the same work of the loads and the reactions."""
    fast = run(frame(), monkeypatch)
    slow = run(frame(), monkeypatch, compiled=False)
    assert_same_run(fast, slow)
    assert abs(fast[1].progress.constraint_work) > 1e-6
    assert np.abs(fast[0].rot[:, 1:]).max() > 0.05              # the nodes turned


def test_an_increment_the_compiled_loop_cannot_finish_goes_the_general_way(monkeypatch):
    """Six iterations allowed on the whole load at once: the compiled loop gives up, the
    general path cuts the increment back as it always does, and both runs end alike."""
    deck = sze(increments=1)
    deck["steps"][0].update(max_iterations=6)
    calls = []
    iterate = spatial_static.SpatialIncrement.iterate
    monkeypatch.setattr(spatial_static.SpatialIncrement, "iterate",
                        lambda self, *a: calls.append(iterate(self, *a)) or calls[-1])
    fast = run(deck, monkeypatch)
    slow = run(deck, monkeypatch, compiled=False)
    assert None in calls and any(c is not None for c in calls)
    assert len(fast[2]) > 1                        # cut back into several increments
    assert_same_run(fast, slow)


def test_a_mechanism_is_reported_by_the_general_check(monkeypatch):
    deck = sze(increments=2)
    deck["supports"][0]["fixed"] = ["ux", "uy", "uz"]      # the root turns freely
    with pytest.raises(ModelError, match="mechanism"):
        run(deck, monkeypatch)


def changed(change: str | None, monkeypatch) -> dict:
    """Sze's cantilever in two increments with one thing the compiled increment does not take."""
    deck = sze(increments=2)
    step = deck["steps"][0]
    if change == "follower":
        deck["loads"][0]["kind"] = "follower"
    elif change == "line_search":
        step["line_search"] = "energy"
    elif change == "modified":
        step["newton"] = "modified"
    elif change == "truss":
        deck["elements"].append({"name": "rod", "type": "truss", "material": "m",
                                 "section": "strip", "connectivity": [[1, 2]]})
    elif change == "linear":
        deck["elements"][0]["formulation"] = "linear"
    elif change == "offsets":
        deck["elements"][0]["offsets"] = [[0.0, 0.0, 0.01], [0.0, 0.0, 0.01]]
    elif change == "arclength":
        step.update(control="arclength", arc_length=0.1, max_steps=3)
        for key in ("load_factor", "increments", "max_increment"):
            del step[key]
    elif change == "large":
        deck["elements"][0]["divisions"] = 501             # 3006 unknowns
    elif change == "fem_jit_0":
        monkeypatch.setenv("FEM_JIT", "0")
    return deck


@pytest.mark.parametrize(("change", "reason"), [
    (None, None), ("follower", "loads that turn with the structure"),
    ("line_search", "line_search = 'energy'"), ("modified", "newton = 'modified'"),
    ("truss", "element group 'rod' (truss) has no compiled 3D beam kernel"),
    ("linear", "nodes with additive rotations"),
    ("offsets", "element group 'strip' has offset ends"),
    ("arclength", "control = 'arclength'"),
    ("large", "more than 3000 unknowns"),
    ("fem_jit_0", "numba is not installed, or FEM_JIT = 0")])
def test_eligible_says_why_a_step_keeps_the_general_path(change, reason, monkeypatch, caplog):
    """From the step's settings and what the groups declare: Sze's cantilever is taken; each
    change names what the compiled increment does not take, and the step logs it (run for a
    load, a group and an element declaration: the runs of the rest cost seconds)."""
    dk = from_dict(changed(change, monkeypatch))
    sysm = System(dk.model)
    step = make_step(dk.steps[0], sysm, dk)
    assert spatial_static.SpatialIncrement.eligible(step) == reason
    if change not in ("follower", "truss", "offsets", "fem_jit_0"):
        return
    with caplog.at_level(logging.INFO, logger="fem.analysis.static"):
        step.run(sysm.reference_state(), None)
    assert step._compiled is None
    assert f"step shear: increments by the general Newton loop ({reason})" in caplog.text


def shallow_arch(load: float) -> dict:
    """tests/test_planar_static.py's shallow arch (span 2, rise 0.08, 16 beams) in the x-z plane
    of a 3D model: ends pinned, their twist about the chord held, pushed down at the crown."""
    n = 16
    x = np.linspace(-1.0, 1.0, n + 1)
    z = 0.08 * (1 - x**2)
    return {"model": {"dim": 3, "title": "shallow arch in space"},
            "materials": [{"name": "m", "E": 1.0, "G": 0.4}],
            "sections": [{"name": "s", "A": 1.0e4, "Iy": 1.0, "Iz": 2.0, "J": 1.0}],
            "nodes": {"coordinates": np.c_[x, np.zeros_like(x), z].tolist()},
            "sets": {"ends": [1, n + 1], "crown": [n // 2 + 1]},
            "elements": [{"name": "arch", "type": "beam", "formulation": "corotational",
                          "material": "m", "section": "s", "orientation": [0.0, 1.0, 0.0],
                          "connectivity": [[i + 1, i + 2] for i in range(n)]}],
            "supports": [{"nodes": "ends", "fixed": ["ux", "uy", "uz", "rx"]}],
            "loads": [{"name": "P", "nodes": "crown", "force": [0.0, 0.0, -1.0]}],
            "steps": [{"name": "push", "type": "static", "nonlinear": True,
                       "load_factor": load, "increments": 10, "tolerance": 1e-10}]}


def test_a_limit_point_passed_under_load_control_warns_on_both_paths(monkeypatch):
    """The band LU's determinant signs are the general path's, factorization by factorization,
    and the step warns where it did (the planar arch's limit load 1.79, turned into space)."""
    fast = run(shallow_arch(4.0), monkeypatch)
    slow = run(shallow_arch(4.0), monkeypatch, compiled=False)
    assert_same_run(fast, slow, states=1e-10)
    for _, step, inc in (fast, slow):
        assert any("passed a limit" in w for w in step.warnings)
        assert any(-1 in signs for _, _, _, signs in inc)
