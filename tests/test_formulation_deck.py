"""The dynamic-step key ``formulation``: coordinate partitioning and the null-space formulation
from a deck (fem.analysis.eliminated), their results in the multiplier step's layout, and the
combinations they refuse as deck errors naming the key."""

import tomllib
from pathlib import Path

import h5py
import numpy as np
import pytest
from helpers import case_deck, deck_error, lift_to_3d
from results_checks import assert_consistent

from fem.io.deck import from_dict
from fem.run import run as run_deck

CASE = Path(__file__).resolve().parents[1] / "cases" / "four_bar_fbs1"


def reference_rows(until: float) -> list[dict]:
    """The FB-S1 case's reference quantities of kind "section" at frame 0 or t <= ``until``."""
    with open(CASE / "reference.toml", "rb") as fh:
        rows = tomllib.load(fh)["quantities"]
    return [q for q in rows if q["kind"] == "section"
            and (q.get("frame") == 0 or q.get("time", np.inf) <= until)]


def fbs1(formulation: str, **step) -> dict:
    """The case deck with ``formulation`` (the multiplier-only integrator key dropped)."""
    d = case_deck("four_bar_fbs1")
    s = d["steps"][0]
    s.pop("integrator")
    s.update(formulation=formulation, **step)
    return d


@pytest.fixture(scope="module", params=["partitioning", "nullspace"])
def run(request, tmp_path_factory):
    """FB-S1 over 1 s with the case's time step (5e-4) and output interval (0.25 s)."""
    path = tmp_path_factory.mktemp(request.param) / "fbs1.h5"
    result = run_deck(from_dict(fbs1(request.param, duration=1.0)), str(path))
    return request.param, result


@pytest.mark.slow
def test_fbs1_reference_table(run):
    """cases/four_bar_fbs1/reference.toml (notes D1): the pin forces at t = 0 [1e-8 relative] and
    the crank angle -alpha1 at t = 0.5 and 1 s [1e-4 rad] from each formulation; measured: RK4
    at the case's dt = 5e-4 is within 3e-8 rad."""
    _, result = run
    rows = reference_rows(1.0)
    assert len(rows) == 7 and sum("time" in q for q in rows) == 2
    with h5py.File(result.h5, "r") as h5:
        s = h5["steps/swing"]
        t = s["time"][()]
        np.testing.assert_allclose(t, [0.0, 0.25, 0.5, 0.75, 1.0], rtol=0, atol=1e-12)
        for q in rows:
            k = 0 if "frame" in q else int(np.argmin(np.abs(t - q["time"])))
            got = s[f"elements/{q['group']}/{q['quantity']}"][k, q["element"] - 1]
            tol = q.get("abs_tolerance", q.get("tolerance", 0) * abs(q["value"]))
            assert abs(got - q["value"]) <= tol, (q["name"], got, q["value"])


@pytest.mark.slow
def test_results_have_the_multiplier_steps_layout(run, tmp_path):
    """The same datasets as a multiplier step (positions, velocities, accelerations, reactions,
    joint outputs, energy, statistics), every frame whole, the XDMF naming only what exists.
    Invariants: the joints' global force at the ground nodes is the support reaction there
    [1e-12]; the energy balance holds (total = T + U - W_ext, constant to 1e-7 of E0 = 10.92 J,
    notes D1); the positions are on the joints [1e-12 m]."""
    name, result = run
    short = tmp_path / "multipliers.h5"
    d = case_deck("four_bar_fbs1")
    d["steps"][0].update(duration=0.001)
    run_deck(from_dict(d), str(short))
    with h5py.File(result.h5, "r") as h5, h5py.File(short, "r") as ref:
        s, r = h5["steps/swing"], ref["steps/swing"]
        names = set()
        s.visit(names.add)
        expected = set()
        r.visit(expected.add)
        assert {n for n in expected if not n.startswith(("state/progress", "checkpoints"))} \
            <= names
        for key in ("displacement", "velocity", "acceleration", "reaction"):
            assert s[key].shape[1:] == r[key].shape[1:] and s[key].shape[0] == 5
        nodes = {c: h5[f"model/constraints/{c}/connectivity"][0] for c in ("O1", "O4")}
        for c, (body, ground) in nodes.items():
            np.testing.assert_allclose(s["reaction"][:, ground, :2],
                                       s[f"elements/{c}/force"][:, 0, :2], rtol=0, atol=1e-12)
        e = {k: s[f"energy/{k}"][()] for k in ("kinetic", "strain", "external_work", "total",
                                               "dissipated", "constraint_work")}
        np.testing.assert_allclose(e["total"], e["kinetic"] + e["strain"] - e["external_work"]
                                   - e["constraint_work"], rtol=0, atol=1e-12)
        assert np.abs(e["dissipated"]).max() < 1e-7 * 10.92
        assert np.all(e["constraint_work"] == 0.0)
        assert s["increments/residual"][()].max() < 1e-12
        assert s.attrs["type"] == "dynamic"
    assert assert_consistent(result.h5, result.xdmf[0]) == 5


def test_short_runs_agree_with_the_multiplier_step(tmp_path):
    """0.05 s of FB-S1 at dt = 1e-3: the crank angle of each formulation equals the multiplier
    step's (energy-conserving mid-point, second order: 1e-6 rad at this step) and the two
    elimination formulations agree with each other to RK4's error [1e-9 rad]."""
    angles = {}
    for form in ("multipliers", "partitioning", "nullspace"):
        d = case_deck("four_bar_fbs1")
        s = d["steps"][0]
        s.update(duration=0.05, time_step=1e-3, output_interval=0.05)
        if form != "multipliers":
            s.pop("integrator")
            s["formulation"] = form
        result = run_deck(from_dict(d), str(tmp_path / f"{form}.h5"))
        with h5py.File(result.h5, "r") as h5:
            angles[form] = h5["steps/swing/elements/O1/angle"][-1, 0]
    assert angles["multipliers"] < -0.25                         # the crank turned
    assert abs(angles["partitioning"] - angles["nullspace"]) < 1e-9
    assert abs(angles["partitioning"] - angles["multipliers"]) < 1e-6


# --- what the elimination formulations refuse -------------------------------------------------
def _rod(formulation="partitioning", **step):
    d = case_deck("rod_pendulum")
    s = d["steps"][0]
    s.pop("integrator")
    s.update(formulation=formulation, **step)
    return d


@pytest.mark.parametrize("key", ["integrator", "rho_inf", "tolerance", "max_cuts"])
@pytest.mark.parametrize("formulation", ["partitioning", "nullspace"])
def test_multiplier_keys_are_refused(formulation, key):
    value = {"integrator": "midpoint", "rho_inf": 0.5, "tolerance": 1e-8, "max_cuts": 3}[key]
    err = deck_error(_rod(formulation, **{key: value}))
    assert err.key == f"steps[0].{key}"
    assert 'used by formulation = "multipliers" only' in err.message
    assert f'formulation = "{formulation}"' in err.message


def test_unknown_formulation():
    err = deck_error(_rod("lagrange"))
    assert err.key == "steps[0].formulation"
    assert "partitioning" in err.message and "lagrange" in err.message


def test_a_flexible_group_is_refused():
    d = _rod("nullspace")
    d["springs"] = [{"name": "k", "nodes": [1], "dof": "uy", "stiffness": 10.0}]
    err = deck_error(d)
    assert err.key == "steps[0].formulation"
    assert "rigid bodies and joints" in err.message and "'k'" in err.message


def test_a_3d_model_is_refused():
    d = lift_to_3d(case_deck("four_bar_fbs1"))
    d["steps"][0].pop("integrator")
    d["steps"][0]["formulation"] = "partitioning"
    err = deck_error(d)
    assert err.key == "steps[0].formulation" and "2D" in err.message and "3D" in err.message


def test_a_driver_is_refused():
    d = _rod("partitioning")
    d["functions"] = [{"name": "spin", "type": "steady", "rate": 1.0}]
    d["joints"][0]["drive"] = "spin"
    err = deck_error(d)
    assert err.key == "steps[0].formulation" and "'pivot'" in err.message
    assert "driv" in err.message


def test_time_varying_loads_and_prescribed_values_are_refused():
    d = _rod("nullspace")
    d["functions"] = [{"name": "up", "type": "ramp"}]
    d["loads"] = [{"name": "push", "nodes": [1], "force": [1.0, 0.0], "function": "up"}]
    err = deck_error(d)
    assert err.key == "steps[0].loads" and "'push'" in err.message
    d = _rod("nullspace")
    d["loads"] = [{"name": "push", "nodes": [1], "force": [1.0, 0.0], "kind": "follower"}]
    assert deck_error(d).key == "steps[0].loads"
    d = _rod("partitioning")
    d["prescribed"] = [{"name": "lift", "nodes": [1], "dof": "uy", "value": 0.1}]
    err = deck_error(d)
    assert err.key == "steps[0].prescribed" and "'lift'" in err.message
    d["steps"][0]["prescribed"] = []
    from_dict(d)                                          # without them the deck is fine


def test_multipliers_is_the_default_and_keeps_its_keys():
    d = case_deck("rod_pendulum")
    dk = from_dict(d)
    assert dk.steps[0]["settings"].formulation == "multipliers"
    d["steps"][0].update(formulation="multipliers", tolerance=1e-8, max_cuts=3)
    assert from_dict(d).steps[0]["settings"].tolerance == 1e-8
