"""Modified Newton (``newton = "modified"``) converges to full Newton's states.

It factors a time step's (a load-control increment's) first tangent and reuses it, factoring
anew when an iteration reduces the residual by less than ``MODIFIED_CONTRACTION``; the converged
states meet the same test, so they agree with full Newton's to the tolerance, and the
energy-conserving scheme still conserves energy.
"""

import copy

import numpy as np
import pytest
from conftest import record_made

from fem.integrators.planar import PlanarStep
from fem.io.deck import from_dict
from fem.run import make_step
from fem.solvers.linear_system import LinearSystem
from fem.system import System


def pendulum(newton: str, steps: int = 120) -> dict:
    """A pinned flexible pendulum released from horizontal (benchmarks/small_models.py's)."""
    return {"model": {"dim": 2},
            "materials": [{"name": "m", "E": 1.0e4, "nu": 0.0}],
            "sections": [{"name": "s", "A": 1.0, "Iz": 1e-3, "mass_per_length": 0.5,
                          "rotary_inertia_per_length": 5e-4}],
            "nodes": {"coordinates": [[0.0, 0.0], [2.0, 0.0]]},
            "sets": {"pin": [1]},
            "elements": [{"name": "beam", "type": "beam", "formulation": "corotational",
                          "material": "m", "section": "s", "connectivity": [[1, 2]],
                          "divisions": 12}],
            "supports": [{"nodes": "pin", "fixed": ["ux", "uy"]}],
            "gravity": {"acceleration": [0.0, -9.81]},
            "steps": [{"name": "swing", "type": "dynamic", "integrator": "energy_conserving",
                       "time_step": 2e-3, "duration": 2e-3 * steps, "tolerance": 1e-10,
                       "output_interval": 2e-3 * steps / 20, "newton": newton}]}


def run(deck, monkeypatch, compiled: bool = False):
    """Final state, step, the number of factorizations (matrix refills) it made, iterations.

    ``compiled`` false: the general Newton loop (this planar model's time steps are otherwise
    one compiled loop, fem.integrators.planar_newton_kernel, which fills no PETSc matrix).
    """
    fills = []
    fill = LinearSystem.fill

    def counted(self, K):
        fills.append(1)
        fill(self, K)

    monkeypatch.setattr(LinearSystem, "fill", counted)
    if not compiled:
        monkeypatch.setattr(PlanarStep, "iterate", lambda self, *a: None)
    dk = from_dict(copy.deepcopy(deck))
    sysm = System(dk.model)
    state = sysm.reference_state()
    step = make_step(dk.steps[0], sysm, dk)
    its = []
    step.on_step = lambda s: its.append(step._stats["iterations"])
    step.run(state, None)
    monkeypatch.undo()
    return state, step, len(fills), its


def test_the_compiled_time_steps_iterate_as_the_general_modified_newton(monkeypatch):
    fast, _, fills, its = run(pendulum("modified"), monkeypatch, compiled=True)
    slow, _, _, its_ref = run(pendulum("modified"), monkeypatch)
    assert fills == 0 and its == its_ref
    assert np.abs(fast.u - slow.u).max() <= 1e-12 * np.abs(slow.u).max()


def test_modified_newton_reaches_full_newtons_states_with_fewer_factorizations(monkeypatch):
    full, step_f, fills_f, its_f = run(pendulum("full"), monkeypatch)
    mod, step_m, fills_m, its_m = run(pendulum("modified"), monkeypatch)
    its_f, its_m = sum(its_f), sum(its_m)
    steps = 120
    assert fills_f == its_f                       # full Newton: a tangent every iteration
    assert its_m >= its_f and fills_m < its_m     # modified: reused within the time steps
    assert fills_m >= steps                       # ... each of which factors once at least
    x = np.abs(full.u[:, :2]).max()
    assert np.abs(mod.u - full.u).max() <= 1e-8 * x
    assert np.abs(mod.rot - full.rot).max() <= 1e-8
    # both conserve the energy: the balance (kinetic + strain - work of gravity) stays at its
    # start while the pendulum turns potential energy into kinetic energy
    for step in (step_f, step_m):
        total = np.array([r["total"] for r in step.history])
        kinetic = np.array([r["kinetic"] for r in step.history])
        assert kinetic.max() > 0.5
        assert np.abs(total - total[0]).max() <= 1e-10 * kinetic.max()


def test_the_deck_key_is_checked():
    from fem.errors import DeckError

    with pytest.raises(DeckError, match="newton"):
        from_dict(pendulum("quasi"))


def test_modified_newton_of_a_static_step_reaches_full_newtons_path(monkeypatch):
    """``newton = "modified"`` under load control (the general loop: the compiled increment is
    full Newton's): the elastica's tip of full Newton to the tolerance, bent corrections still
    applied, fewer factorizations than iterations."""
    from fem.analysis import planar_static

    def elastica(newton):
        return {"model": {"dim": 2},
                "materials": [{"name": "unit", "E": 1.0, "nu": 0.0}],
                "sections": [{"name": "s", "A": 1.0e5, "Iz": 1.0}],
                "nodes": {"coordinates": [[0.0, 0.0], [1.0, 0.0]]},
                "elements": [{"name": "beam", "type": "beam", "formulation": "corotational",
                              "material": "unit", "section": "s", "connectivity": [[1, 2]],
                              "divisions": 10}],
                "supports": [{"nodes": [1], "fixed": ["all"]}],
                "loads": [{"name": "P", "nodes": [2], "force": [0.0, -1.0]}],
                "steps": [{"name": "bend", "type": "static", "nonlinear": True,
                           "load_factor": 10.0, "increments": 20, "max_increment": 0.5,
                           "tolerance": 1e-10, "newton": newton}]}

    made = record_made(monkeypatch, planar_static.PlanarIncrement)
    monkeypatch.setattr(planar_static.PlanarIncrement, "iterate", lambda self, *a: None)
    monkeypatch.setattr(planar_static.PlanarIncrement, "batch", lambda self, *a: None)
    runs = {}
    fill = LinearSystem.fill
    for newton in ("full", "modified"):
        fills = []
        monkeypatch.setattr(LinearSystem, "fill",
                            lambda self, K, fills=fills: fills.append(1) or fill(self, K))
        dk = from_dict(elastica(newton))
        sysm = System(dk.model)
        state = sysm.reference_state()
        step = make_step(dk.steps[0], sysm, dk)
        step.run(state, None)
        runs[newton] = (state, step, len(fills))
    assert made[0] is not None and made[1] is None       # modified: never the compiled increment
    (full, step_f, fills_f), (mod, step_m, fills_m) = runs["full"], runs["modified"]
    tip = np.abs(full.u[1, :2]).max()
    assert np.abs(mod.u[1, :2] - full.u[1, :2]).max() <= 1e-7 * tip
    its_f, its_m = step_f.progress.iterations, step_m.progress.iterations
    assert fills_f >= its_f and fills_m < its_m < 3 * its_f
    assert step_m.bent > 0
