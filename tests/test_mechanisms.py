"""Rigid mechanisms with joints: reactions against closed forms at every frame, redundant joints
detected and released, and every mistake in a [[joints]] table a deck error naming its key."""

import logging

import h5py
import numpy as np
import pytest
from helpers import case_deck as deck
from helpers import deck_error, lift_to_3d, solve, with_changes

from fem.io.deck import from_dict


def test_rod_pendulum_reactions_follow_the_closed_form_in_every_frame(tmp_path):
    """notes/mufti_blajer.md D2: at an angle theta below the horizontal, omega^2 = 3 g sin / L,
    so the pivot force on the rod is -2.5 m g sin(theta) along it and m g cos(theta) / 4 across
    it: m g / 4 at release, 2.5 m g at the bottom (passed within the run)."""
    h5 = str(tmp_path / "p.h5")
    solve(deck("rod_pendulum"), h5)
    m, g = 3.0, 9.81
    with h5py.File(h5) as f:
        s = f["steps/swing/elements/pivot"]
        # the rod swings down clockwise: its angle relative to the ground is -theta
        theta, fx, fy = -s["angle"][:, 0], s["fx"][:, 0], s["fy"][:, 0]
    assert theta.max() > np.pi / 2 > theta[0]            # the bottom is inside the run
    np.testing.assert_allclose(fx, -2.5 * m * g * np.sin(theta), rtol=0, atol=1e-6 * m * g)
    np.testing.assert_allclose(fy, m * g * np.cos(theta) / 4, rtol=0, atol=1e-6 * m * g)
    bottom = np.argmin(np.abs(theta - np.pi / 2))
    assert abs(abs(fx[bottom]) - 2.5 * m * g) < 0.05 * m * g


def four_bar_3d(duration: float) -> dict:
    """FB-S1 (notes D1) in 3D: the same bodies in the x-y plane with four revolute joints whose
    axes are z: 20 constraint rows of rank 17."""
    d = lift_to_3d(deck("four_bar_fbs1"))
    d["steps"][0]["duration"] = duration
    d["steps"][0]["output_interval"] = duration
    return d


def test_redundant_joints_of_a_planar_four_bar_in_3d_are_released_and_named(caplog):
    with caplog.at_level(logging.WARNING, logger="fem"):
        dk = from_dict(four_bar_3d(0.25))
    released = [c.released for c in dk.model.constraints]
    assert sum(int(r.sum()) for r in released) == 3      # notes D1: rank 17 of 20
    notes = [r.message for r in caplog.records if "redundant constraint" in r.message]
    assert len(notes) == 3 and all("joints 'O" in n for n in notes)


def test_the_3d_four_bar_moves_as_the_planar_one(tmp_path):
    """With its redundant rows released the 3D model is the planar mechanism: the crank angle at
    t = 0.25 s is the notes' (D1 table) within 1e-4 rad at dt = 5e-4, and the in-plane
    reactions at t = 0 are the notes' pin forces (the released rows are out of the plane, where
    the reactions are not unique)."""
    h5 = str(tmp_path / "fb3.h5")
    dk, sysm, state, steps = solve(four_bar_3d(0.25), h5)
    angle = steps[0].system.outputs(state)["O1"]["angle"][0]
    # the crank's angle about +z relative to the ground: -alpha1 (mod 2 pi)
    assert abs(np.angle(np.exp(1j * (angle + 2.106405390)))) < 1e-4
    assert abs(state.u[:, 2]).max() < 1e-12                # it stays in its plane
    with h5py.File(h5) as f:
        out = f["steps/swing/elements"]
        # notes D1, pin forces at t = 0 (the joint frames are the global axes then)
        for joint, fx, fy in (("O1", 0.0826311484, 1.7909153192),
                              ("O4", -1.0989512818, 8.2676077370)):
            np.testing.assert_allclose([out[joint]["fx"][0, 0], out[joint]["fy"][0, 0]],
                                       [fx, fy], rtol=1e-8)


@pytest.mark.parametrize("dim", [2, 3])
def test_a_cantilever_held_by_a_fixed_joint_is_the_clamped_one(dim):
    """A static cantilever whose root is welded to the ground by a fixed joint at a point a
    behind the root (a rigid arm): the root stays put, the tip deflects P L^3 / (3 E I), and the
    joint's reaction on the root, in its frame, is the force P and the moment P (L + a) about
    the joint point (statics)."""
    E, I, L, a, P = 1000.0, 0.02, 2.0, 0.5, 3.0
    X = [[0.0, 0.0], [L, 0.0]] if dim == 2 else [[0.0, 0.0, 0.0], [L, 0.0, 0.0]]
    section = {"name": "s", "A": 1.0, "Iz": I}
    if dim == 3:
        section.update(Iy=I, J=2 * I)
    joint = {"name": "weld", "type": "fixed", "ground": [1],
             "points": [[-a, 0.0] + ([0.0] if dim == 3 else [])]}
    load = [0.0, -P] + ([0.0] if dim == 3 else [])
    d = {"model": {"dim": dim},
         "materials": [{"name": "m", "E": E, "nu": 0.25}],
         "sections": [section],
         "nodes": {"coordinates": X},
         "elements": [{"name": "beam", "type": "beam", "material": "m", "section": "s",
                       "connectivity": [[1, 2]], "formulation": "linear"}],
         "joints": [joint],
         "loads": [{"name": "P", "nodes": [2], "force": load}],
         "steps": [{"name": "s", "type": "static"}]}
    dk, sysm, state, _ = solve(d)
    # the root is held at a point a behind it: the rigid arm does not bend, so the root stays
    # put and unturned, and the beam is the clamped cantilever
    assert state.u[1, 1] == pytest.approx(-P * L**3 / (3 * E * I), rel=1e-10)
    assert abs(state.u[0, :dim]).max() < 1e-12
    out = sysm.outputs(state)["weld"]
    assert out["fy"][0] == pytest.approx(P, rel=1e-10)
    assert abs(out["fx"][0]) < 1e-10 * P
    assert out["mz"][0] == pytest.approx(P * (L + a), rel=1e-10)


def test_without_mass_at_a_joint_the_step_multipliers_are_written_with_a_warning(tmp_path):
    """A massless beam node at a joint makes the consistent-reaction equations singular: the
    step warns once and writes its own multipliers (what System.outputs gives for the state)."""
    d = {"model": {"dim": 2},
         "materials": [{"name": "m", "E": 1.0e6, "nu": 0.3}],
         "sections": [{"name": "s", "A": 1.0, "Iz": 0.01}],
         "nodes": {"coordinates": [[0.0, 0.0], [1.0, 0.0], [1.5, 0.0]]},
         "elements": [{"name": "beam", "type": "beam", "material": "m", "section": "s",
                       "connectivity": [[1, 2]]}],
         "bodies": [{"name": "weight", "nodes": [3], "mass": 2.0, "inertia": 0.1}],
         "supports": [{"nodes": [1], "fixed": ["ux", "uy", "rz"]}],
         "joints": [{"name": "hinge", "type": "revolute", "pairs": [[2, 3]],
                     "points": [[1.0, 0.0]]}],
         "gravity": {"acceleration": [0.0, -9.81]},
         "steps": [{"name": "drop", "type": "dynamic", "duration": 0.05, "time_step": 0.01}]}
    h5 = str(tmp_path / "m.h5")
    dk, sysm, state, steps = solve(d, h5)
    warned = [w for w in steps[0].warnings if "consistent reactions are singular" in w]
    assert len(warned) == 1 and "no mass" in warned[0]
    with h5py.File(h5) as f:
        fy = f["steps/drop/elements/hinge/fy"][-1, 0]
    assert fy == pytest.approx(sysm.outputs(state)["hinge"]["fy"][0], rel=1e-12)
    assert abs(fy) > 0.1 * 2.0 * 9.81            # the hinge carries the falling weight


@pytest.mark.parametrize(("change", "key", "words"), [
    ({"type": "universal"}, "joints[0].type", "2D model"),
    ({"type": "spherical"}, "joints[0].type", "revolute joint"),
    ({"ground": [1]}, "joints[0]", "either pairs"),
    ({"points": [[0.0, 0.0], [1.0, 1.0]]}, "joints[0].points", "one point per joint"),
    ({"pairs": [[1, 1]]}, "joints[0].pairs[0]", "two different nodes"),
    ({"pairs": [[1, 7]]}, "joints[0].pairs", "unknown node 7"),
    ({"axis": [1.0, 0.0]}, "joints[0].axis", "not used"),
    ({"kind": "x"}, "joints[0]", "kind"),
])
def test_joint_mistakes_are_deck_errors(change, key, words):
    d = deck("four_bar_fbs1")
    d["joints"][1].update(change)
    d["joints"] = [d["joints"][1]]
    err = deck_error(d)
    assert err.key.startswith(key), err
    assert words in str(err)


@pytest.mark.parametrize(("change", "key", "words"), [
    ({"axis": None}, "joints[0].axis", "needs its axis"),
    ({"axis": [0.0, 0.0, 0.0]}, "joints[0].axis", "nonzero"),
    ({"second_axis": [0.0, 1.0, 1.0]}, "joints[0].second_axis", "perpendicular"),
    ({"type": "universal"}, "joints[0].second_axis", "universal joint needs"),
])
def test_joint_frame_mistakes_are_deck_errors(change, key, words):
    d = four_bar_3d(0.1)
    with_changes(d["joints"][0], change)
    err = deck_error(d)
    assert err.key.startswith(key), err
    assert words in str(err)


def test_a_joint_on_a_node_without_rotations_is_a_deck_error():
    d = deck("four_bar_fbs1")
    d["nodes"]["coordinates"].append([3.0, 3.0])
    d["nodes"]["ids"].append(4)
    d["masses"] = [{"nodes": [4], "mass": 1.0}]
    d["joints"][0]["ground"] = [4]
    err = deck_error(d)
    assert err.key == "joints[0].ground" and "no rotations" in str(err)


@pytest.mark.parametrize("dim", [2, 3])
def test_a_bead_on_an_inline_joint_slides_down_its_line(tmp_path, dim):
    """A body whose centre stays on a line of the ground inclined at 30 degrees (an inline joint,
    rotations free) slides with g sin 30 along it; the reaction on the body is m g cos 30 normal
    to the line (its frame: e1 along the line in 2D; the axis is e3 in 3D), and it does not turn.
    """
    m, g, c, s = 2.0, 9.81, np.cos(np.pi / 6), np.sin(np.pi / 6)
    z = [0.0] if dim == 3 else []
    d = {"model": {"dim": dim}, "nodes": {"coordinates": [[0.0, 0.0] + z]},
         "bodies": [{"name": "bead", "nodes": [1], "mass": m,
                     "inertia": 0.1 if dim == 2 else [0.1, 0.1, 0.1]}],
         "joints": [{"name": "line", "type": "inline", "ground": [1],
                     "axis": [-c, -s] + z}],
         "gravity": {"acceleration": [0.0, -g] + z},
         "steps": [{"name": "run", "type": "dynamic", "duration": 0.5, "time_step": 0.01,
                    "output_interval": 0.1}]}
    h5 = str(tmp_path / "b.h5")
    _, _, state, _ = solve(d, h5)
    slide = 0.5 * g * s * 0.5**2
    np.testing.assert_allclose(state.u[0, :2], slide * np.array([-c, -s]), rtol=1e-10)
    assert abs(state.rot[0] if dim == 2 else state.rotation_vectors()[0]).max() < 1e-12
    with h5py.File(h5) as f:
        out = {k: v[:, 0] for k, v in f["steps/run/elements/line"].items()}
        t = f["steps/run/time"][:]
    np.testing.assert_allclose(out["slide"], 0.5 * g * s * t**2, rtol=1e-10, atol=1e-14)
    # the force the line exerts on the bead: m g cos 30 along the upward normal (-s, c)
    if dim == 2:            # frame e1 = the axis (-c, -s), e2 = (s, -c)
        force = np.outer(out["fx"], [-c, -s]) + np.outer(out["fy"], [s, -c])
        np.testing.assert_allclose(force, np.outer(np.ones_like(t), m * g * c * np.array(
            [-s, c])), rtol=0, atol=1e-10 * m * g)
    else:                   # frame e3 = the axis, e1 and e2 across it
        np.testing.assert_allclose(np.hypot(out["fx"], out["fy"]), m * g * c, rtol=1e-10)
        assert abs(out["fz"]).max() < 1e-10 * m * g
