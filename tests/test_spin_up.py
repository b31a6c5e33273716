"""The planar spin-up (cases/spin_up_kane, notes/meijaard.md 2.4): small-displacement beams
diverge where co-rotational ones follow the benchmark, and the energy-conserving scheme's
algorithmic rotations follow a near-rigid spin (a stretching beam's remainder held as a strict
expected failure)."""

import numpy as np
import pytest
from helpers import case_deck as deck
from helpers import solve

from fem.io.deck import from_dict
from fem.run import make_step
from fem.system import System

REFERENCE = -0.5739                 # notes 2.4 case 2: the extreme tip deflection (4 elements)


def tip_in_hub_frame(state) -> float:
    """v_tip = (x_tip - x_root) . (R_root e_y) of a state (the tip is node 5, the root node 1)."""
    x = state.u[:5, :2] + np.array([[0.0, 0.0], [2.5, 0.0], [5.0, 0.0], [7.5, 0.0], [10.0, 0.0]])
    psi = state.rot[0]
    return float((x[4] - x[0]) @ np.array([-np.sin(psi), np.cos(psi)]))


def spin_up(formulation: str) -> float:
    """The most negative tip deflection over 8 s (h = 0.02, lumped inertia)."""
    d = deck("spin_up_kane")
    d["elements"][0].update(formulation=formulation, inertia="lumped")
    d["steps"][0].update(duration=8.0, time_step=0.02, output_interval=8.0)
    worst = [0.0]

    def watch(state):
        worst[0] = min(worst[0], tip_in_hub_frame(state))

    dk = from_dict(d)
    sysm = System(dk.model)
    state = sysm.reference_state()
    step = make_step(dk.steps[0], sysm, dk, 1)
    step.on_step = watch
    step.run(state, None)
    return worst[0]


def test_linear_beams_diverge_where_corotational_ones_follow_the_benchmark():
    """Meijaard (and Simo & Vu-Quoc before him) show that beams with small-displacement
    kinematics cannot follow the spin-up: a rigid rotation strains them. Co-rotational beams
    stay within 6% of -0.5739 m with a coarse lumped model; linear ones pass 10 m, the beam's
    length."""
    assert abs(spin_up("corotational") / REFERENCE - 1) < 0.06
    assert spin_up("linear") < -10.0


@pytest.mark.xfail(strict=True, reason="with the 2D Cayley rotations (fem.integrators."
                   "midpoint) the spin drift of (omega h)^3 / 12 a step is gone (it was 0.0288 "
                   "here), but this beam is not rigid (started unstretched, it vibrates "
                   "axially and bends by 1e-5 rad), and the algorithmic local rotations still "
                   "differ from the geometric ones by 5.6e-8 rad after 200 steps (6.5e-9 with E "
                   "100 times larger, 2.8e-10 with 1e4 times); the mid-point chord increment is "
                   "exactly 2 tan(dalpha/2) only for a chord of constant length; a rigid step is "
                   "checked to 1e-14 in test_cayley_rotations")
def test_a_rigidly_spinning_beam_keeps_its_algorithmic_strains_at_zero():
    """A free straight beam spinning rigidly at 6 rad/s for 200 steps of 0.02 s: its strains
    stay zero, so the algorithmic ones must too."""
    d = {"model": {"dim": 2},
         "materials": [{"name": "m", "E": 2.8e7, "G": 1.0e7}],
         "sections": [{"name": "s", "A": 1.0, "Iz": 5e-4, "Ay": 1.0, "mass_per_length": 1.2}],
         "nodes": {"coordinates": [[-5.0, 0.0], [5.0, 0.0]]},
         "elements": [{"name": "beam", "type": "beam", "formulation": "corotational",
                       "theory": "timoshenko", "material": "m", "section": "s",
                       "connectivity": [[1, 2]]}],
         "velocities": [{"name": "spin", "angular_velocity": 6.0, "center": [0.0, 0.0]}],
         "steps": [{"name": "spin", "type": "dynamic", "duration": 4.0, "time_step": 0.02,
                    "velocities": ["spin"], "output_interval": 4.0}]}
    dk, sysm, state, _ = solve(d)
    group = dk.model.groups[0]
    drift = state.history["beam"]["v"] - group.conserving_start(state)["v"]
    assert abs(drift).max() < 1e-10
