"""Ties (pins between coincident nodes): a constraint group of the one numbering of unknowns.

The validation case ``portal_frame_pinned`` checks a linear frame against its hand solution. Here:
the tie forces are the member end forces; nonlinear statics equal the same frame with the pinned
beam as a co-rotational bar; a clamped column with a pin at mid-height buckles at Euler's load of
a pin-ended column; a free-flying chain of beams pinned together conserves energy and both momenta
over 10^4 energy-conserving steps with its pins closed; deck mistakes are named.
"""

import math
import os

import h5py
import numpy as np
import pytest
from helpers import node, solve

from fem.errors import DeckError
from fem.io.deck import from_dict

E, A_c, I_c, A_b, I_b = 210000.0, 7808.0, 56.96e6, 5381.0, 83.56e6


def frame(beam: str, H: float = 20000.0, nonlinear: bool = False) -> dict:
    """The portal frame, its beam pinned by ties (``beam="tied"``) or a bar (``"truss"``)."""
    form = "corotational" if nonlinear else "linear"
    d = {"model": {"dim": 2},
         "materials": [{"name": "S", "E": E, "nu": 0.3}],
         "sections": [{"name": "col", "A": A_c, "Iz": I_c}, {"name": "bm", "A": A_b, "Iz": I_b}],
         "nodes": {"ids": [1, 2, 3, 4, 5, 6],
                   "coordinates": [[0, 0], [0, 4000], [6000, 4000], [6000, 0], [0, 4000],
                                   [6000, 4000]]},
         "elements": [{"name": "columns", "type": "beam", "formulation": form, "material": "S",
                       "section": "col", "connectivity": [[1, 2], [4, 3]], "divisions": 4}],
         "supports": [{"nodes": [1, 4], "fixed": ["all"]}],
         "loads": [{"name": "wind", "nodes": 2, "force": [H, -H]}],
         "steps": [{"name": "wind", "type": "static"}]}
    if beam == "tied":
        d["elements"].append({"name": "beam", "type": "beam", "formulation": form,
                              "material": "S", "section": "bm", "connectivity": [[5, 6]],
                              "divisions": 4})
        d["ties"] = [{"name": "pins", "pairs": [[2, 5], [3, 6]]}]
    else:
        d["elements"].append({"name": "beam", "type": "truss", "formulation": form,
                              "material": "S", "section": "bm", "connectivity": [[2, 3]]})
        d["nodes"] = {"ids": [1, 2, 3, 4], "coordinates": d["nodes"]["coordinates"][:4]}
    if nonlinear:
        d["steps"][0].update(nonlinear=True, increments=4)
    return d


def test_tie_forces_are_the_member_end_forces(tmp_path):
    H = 20000.0
    dk, sysm, state, _ = solve(frame("tied", H), str(tmp_path / "t.h5"))
    out = sysm.outputs(state)
    N = out["beam"]["N"]
    assert np.ptp(N) <= 1e-9 * abs(N[0])                  # a bar: the same N all along
    f1 = np.array([out["pins"]["fx"][0], out["pins"]["fy"][0]])
    f2 = np.array([out["pins"]["fx"][1], out["pins"]["fy"][1]])
    # the column tops receive the beam's end forces: N along the beam at its first end, and -N
    # e at the other (e from node 5 to node 6 is +x)
    np.testing.assert_allclose(f1, [N[0], 0.0], rtol=1e-10, atol=1e-8)
    np.testing.assert_allclose(f2, [-N[0], 0.0], rtol=1e-10, atol=1e-8)
    # equilibrium of each column top: the load, the tie force, and the column's end force
    r = sysm.internal_force(state, constraints=False)       # element forces on the nodes
    for nid, f, load in ((2, f1, [H, -H]), (3, f2, [0.0, 0.0])):
        k = sysm.dofmap.index[node(dk, nid), :2]
        np.testing.assert_allclose(r[k], np.add(load, f), rtol=1e-9, atol=1e-6)
    with h5py.File(tmp_path / "t.h5", "r") as h5:           # and the results file has them
        np.testing.assert_array_equal(h5["steps/wind/elements/pins/fx"][-1], out["pins"]["fx"])


def test_nonlinear_statics_of_pins_equal_a_bar_between_the_column_tops():
    """A co-rotational beam pinned at both ends and unloaded along its span is a bar."""
    H = 2.0e5                                                # sways the frame by about 1/20
    dk_t, _, s_t, _ = solve(frame("tied", H, nonlinear=True))
    dk_b, _, s_b, _ = solve(frame("truss", H, nonlinear=True))
    for nid in (2, 3):
        u_t, u_b = s_t.u[node(dk_t, nid)], s_b.u[node(dk_b, nid)]
        np.testing.assert_allclose(u_t, u_b, rtol=1e-8, atol=1e-8 * np.abs(u_b).max())
        np.testing.assert_allclose(s_t.rot[node(dk_t, nid)], s_b.rot[node(dk_b, nid)],
                                   rtol=1e-8)
    assert np.abs(s_t.u[node(dk_t, 2)]).max() > 100.0      # a large motion indeed
    np.testing.assert_array_equal(s_t.u[node(dk_t, 5)], s_t.u[node(dk_t, 2)])


def test_a_clamped_column_pinned_at_mid_height_buckles_like_a_pin_ended_one():
    """Fixed at both ends with a pin in the middle: the symmetric mode bends each half as a
    cantilever of length L/2, P = pi^2 EI / (4 (L/2)^2) = pi^2 EI / L^2."""
    L, EI = 2.0, 3.0
    d = {"model": {"dim": 2},
         "materials": [{"name": "m", "E": 1.0, "G": 0.5}],
         "sections": [{"name": "s", "A": 1e4, "Iz": EI}],
         "nodes": {"ids": [1, 2, 3, 4], "coordinates": [[0, 0], [0, L / 2], [0, L / 2], [0, L]]},
         "elements": [{"name": "col", "type": "beam", "formulation": "corotational",
                       "material": "m", "section": "s", "connectivity": [[1, 2], [3, 4]],
                       "divisions": 4}],
         "ties": [{"name": "hinge", "pairs": [[2, 3]]}],
         "supports": [{"nodes": 1, "fixed": ["all"]}, {"nodes": 4, "fixed": ["ux", "rz"]}],
         "loads": [{"name": "P", "nodes": 4, "force": [0.0, -1.0]}],
         "steps": [{"name": "b", "type": "buckling", "modes": 1}]}
    step = solve(d)[3][-1]
    assert step.factors[0] == pytest.approx(math.pi**2 * EI / L**2, rel=1e-5)


def chain(duration: float) -> dict:
    """Three 3D co-rotational beams pinned end to end, spinning and flexing, no supports."""
    return {"model": {"dim": 3},
            "materials": [{"name": "m", "E": 1000.0, "G": 400.0, "density": 100.0}],
            "sections": [{"name": "s", "A": 0.01, "Iy": 5e-4, "Iz": 8e-4, "J": 6e-4}],
            "nodes": {"ids": [1, 2, 3, 4, 5, 6],
                      "coordinates": [[0, 0, 0], [1, 0, 0], [1, 0, 0], [1.8, 0.6, 0],
                                      [1.8, 0.6, 0], [2.4, 0.6, 0.5]]},
            "elements": [{"name": "links", "type": "beam", "formulation": "corotational",
                          "material": "m", "section": "s",
                          "connectivity": [[1, 2], [3, 4], [5, 6]], "divisions": 2}],
            "ties": [{"name": "pins", "pairs": [[2, 3], [4, 5]]}],
            "velocities": [{"name": "spin", "angular_velocity": [0.3, 0.5, 1.0],
                            "velocity": [0.1, -0.2, 0.05]},
                           {"name": "flex", "nodes": [6], "velocity": [0.0, 0.0, 1.0]}],
            "steps": [{"name": "fly", "type": "dynamic", "time_step": 0.01,
                       "duration": duration, "velocities": ["spin", "flex"]}]}


#: the chain's steps: 10^4 in soak runs (FEM_SOAK=1), 2000 in make test (86 s on CI for 10^4)
CHAIN_STEPS = 10_000 if os.environ.get("FEM_SOAK") else 2_000


@pytest.mark.slow
def test_a_free_chain_of_pinned_beams_conserves_energy_and_momenta():
    """10^4 energy-conserving steps (2000 without FEM_SOAK): ideal pins do no work; the pins
    stay closed."""
    gaps = []
    dk = from_dict(chain(CHAIN_STEPS * 0.01))
    pairs = dk.model.constraints[0].conn

    def watch(state):
        gaps.append(np.abs(state.u[pairs[:, 1]] - state.u[pairs[:, 0]]).max())

    from fem.run import make_step
    from fem.system import System

    sysm = System(dk.model)
    state = sysm.reference_state()
    step = make_step(dk.steps[0], sysm, dk)
    step.on_step = watch
    step.run(state, None)
    assert step.steps == CHAIN_STEPS and step.cuts == 0
    hist = step.history
    E0 = hist[0]["total"]
    P0, L0 = hist[0]["linear_momentum"], hist[0]["angular_momentum"]
    assert max(abs(r["total"] - E0) for r in hist) <= 1e-8 * abs(E0)
    assert max(np.linalg.norm(r["linear_momentum"] - P0) for r in hist) <= \
        1e-8 * np.linalg.norm(P0)
    assert max(np.linalg.norm(r["angular_momentum"] - L0) for r in hist) <= \
        1e-8 * np.linalg.norm(L0)
    assert max(gaps) <= 1e-10
    strain = [r["strain"] for r in hist]
    assert max(strain) > 1e-3 * E0                          # the links do flex


BASE = {"ties": [{"name": "pins", "pairs": [[2, 5], [3, 6]]}]}


@pytest.mark.parametrize("pairs, key, words", [
    ([[2, 999]], "ties[0].pairs[0]", "unknown node 999"),
    ([[2, 2]], "ties[0].pairs[0]", "node 2 tied to itself"),
    ([[2, 6]], "ties[0].pairs[0]", "expected two nodes at the same point"),
    ([[2, 5], [5, 2]], "ties[0].pairs[1]", "redundant tie: nodes 5 and 2 are already tied"),
    ([[2, 5], [3, 6], [5, 2]], "ties[0].pairs[2]", "redundant tie"),
    ([[1, 7]], "ties[0].pairs[0]", "ux is held at node 1 and at node 7"),
], ids=["unknown", "itself", "apart", "twice", "loop", "supports"])
def test_tie_mistakes_are_deck_errors(pairs, key, words):
    d = frame("tied")
    d["nodes"]["ids"].append(7)
    d["nodes"]["coordinates"].append([0, 0])               # node 7 at the clamped base 1
    d["elements"].append({"name": "stub", "type": "beam", "material": "S", "section": "col",
                          "connectivity": [[7, 5]]})
    d["supports"].append({"nodes": 7, "fixed": ["ux"]})
    d["ties"] = [{"name": "pins", "pairs": pairs}]
    with pytest.raises(DeckError) as info:
        from_dict(d)
    assert info.value.key == key and words in info.value.message, str(info.value)


def test_a_tie_group_may_not_take_an_element_groups_name():
    d = frame("tied")
    d["ties"][0]["name"] = "beam"
    with pytest.raises(DeckError, match="already an element group"):
        from_dict(d)


@pytest.mark.parametrize("also", ["distinct", "redundant"])
def test_ties_and_joints_in_one_model(also):
    """A model with both ties and joints (their rows differ in width: a tie's translations, a
    joint's translations and rotation). The portal frame's left pin as a tie and its right pin
    as a revolute joint (``distinct``), or both pins as ties and the right one again as a joint
    (``redundant``: its rows duplicate the tie's and are released), give the frame pinned by ties
    alone (1e-10). Before: a traceback from the redundancy check (rows of different widths)."""
    ref = solve(frame("tied"))[2].u
    d = frame("tied")
    if also == "distinct":
        d["ties"] = [{"name": "pins", "pairs": [[2, 5]]}]
    d["joints"] = [{"name": "hinge", "type": "revolute", "pairs": [[3, 6]]}]
    u = solve(d)[2].u
    np.testing.assert_allclose(u, ref, rtol=0, atol=1e-10 * np.abs(ref).max())
