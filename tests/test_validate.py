"""``fem validate`` runs every case, whatever happens to one of them (issue "Trust", section 5)."""

import shutil
from pathlib import Path

import numpy as np
import pytest
from results_checks import run_fem

CASES = Path(__file__).resolve().parents[1] / "cases"


def test_validate_runs_every_case_and_reports_failures_as_rows(tmp_path):
    good = tmp_path / "cantilever_2d"
    shutil.copytree(CASES / "cantilever_2d", good)
    # a case whose step cannot converge: one Newton iteration for a large nonlinear load
    stuck = tmp_path / "stuck"
    shutil.copytree(CASES / "elastica_cantilever", stuck)
    deck = (stuck / "deck.toml").read_text()
    (stuck / "deck.toml").write_text(deck.replace("nonlinear = true",
                                                  "nonlinear = true\nmax_iterations = 1", 1))
    # a case whose reference file is not TOML, and one whose quantities lack values
    broken = tmp_path / "broken"
    shutil.copytree(CASES / "cantilever_2d", broken)
    (broken / "reference.toml").write_text("[[quantities]\nname = ")
    empty = tmp_path / "empty"
    shutil.copytree(CASES / "cantilever_2d", empty)
    (empty / "reference.toml").write_text('[[quantities]]\nname = "x"\nstep = "s"\n'
                                          'kind = "displacement"\n')
    proc = run_fem("validate", "--cases-dir", str(tmp_path))
    out = proc.stdout
    assert proc.returncode == 1, proc.stderr
    assert "internal error" not in proc.stderr and "Traceback" not in proc.stderr
    rows = [line.split() for line in out.splitlines() if line.endswith(("PASS", "FAIL"))]
    by_case = {}
    for row in rows:
        by_case.setdefault(row[0], set()).add(row[-1])
    assert by_case["cantilever_2d"] == {"PASS"}            # the good case still ran and passed
    assert by_case["stuck"] == {"FAIL"} and by_case["broken"] == {"FAIL"}
    assert by_case["empty"] == {"FAIL"}
    assert "stuck: " in out and "iterations" in out        # why it failed
    assert "broken: malformed reference file" in out
    assert "empty: malformed reference file: quantities[0] lacks value, tolerance" in out
    assert "FAIL" in out.splitlines()[-1]


def test_history_statistics_find_what_they_name():
    """A peak between frames is found by its parabola (exact for a parabola), the time of it
    too; amplitude and mean over the frames after a time; the first maximum is the first."""
    from fem.io.results import _statistic

    t = np.linspace(0.0, 1.0, 11)
    y = -(t - 0.33) ** 2 + 2.0                             # peak between frames 3 and 4
    q = {"statistic": "first_maximum"}
    assert _statistic(t, y, q) == pytest.approx(2.0, abs=1e-12)
    assert _statistic(t, y, {**q, "report": "time"}) == pytest.approx(0.33, abs=1e-12)
    t3 = np.linspace(0.0, 1.0, 101)
    wave = np.sin(2 * np.pi * 3 * t3) + t3                 # peaks near 1/12, 5/12, 9/12
    assert _statistic(t3, wave, {**q, "report": "time"}) < 0.2     # the first, not the highest
    assert _statistic(t, y, {"statistic": "amplitude", "after": 0.5}) == pytest.approx(
        0.5 * ((0.5 - 0.33) ** 2 - (1 - 0.33) ** 2) * -1)
    assert _statistic(t, t, {"statistic": "mean", "after": 0.5}) == pytest.approx(0.75)
    assert np.isnan(_statistic(t, t, q))                   # rising all the way: no maximum


@pytest.mark.parametrize(("quantity", "words"), [
    ('kind = "chord_offset"\n', "(chord_offset) lacks nodes"),
    ('kind = "chord_offset"\nnodes = [1, 2]\n', "expected three node ids"),
    ('kind = "relative_position"\nnode = 2\n', "lacks relative_to, component"),
    ('kind = "energy"\nquantity = "total"\nstatistic = "median"\n', "statistic: expected one of"),
    ('kind = "frequency"\n', "(frequency) lacks mode"),
    ('kind = "frequency"\nmode = 1\nunit = "rpm"\n', "unit: expected one of rad/s, Hz"),
    ('kind = "frequency"\nmode = 0\n', "mode: expected a mode number"),
    ('kind = "critical_speed"\nwhirl = "sideways"\n', "whirl: expected one of forward"),
    ('kind = "critical_speed"\norder = -1\n', "order: expected a positive engine order"),
    ('kind = "critical_speed"\nnumber = 0\n', "number: expected 1, 2"),
    ('kind = "critical_speed"\nunit = "rps"\n', "unit: expected one of rad/s, Hz, rpm"),
])
def test_reference_mistakes_in_the_history_kinds_name_the_key(tmp_path, quantity, words):
    """A malformed quantity of the history kinds is a FAIL row saying what is missing, before
    anything runs."""
    from fem.validate import check_case

    (tmp_path / "reference.toml").write_text(
        f'[[quantities]]\nname = "q"\nstep = "s"\nvalue = 0.0\ntolerance = 1e-3\n{quantity}')
    rows = check_case(tmp_path)
    assert len(rows) == 1 and not rows[0].passed
    assert "malformed reference file" in rows[0].reason and words in rows[0].reason


def test_a_mode_the_step_did_not_find_is_a_row_saying_so(tmp_path):
    """A frequency quantity asking for mode 7 of a step that found 2: the row says how many the
    step found and what to change (it was an IndexError's repr)."""
    from fem.validate import check_case

    case = tmp_path / "two_link_hanging"
    shutil.copytree(CASES / "two_link_hanging", case)
    ref = case / "reference.toml"
    ref.write_text(ref.read_text().replace("mode = 2\n", "mode = 7\n"))
    rows = check_case(case, workdir=str(tmp_path))
    bad = [r for r in rows if not r.passed]
    assert len(bad) == 1 and len(rows) == 3
    assert "mode 7: step 'hanging' found 2 (ask its deck for more modes)" in bad[0].reason


def test_a_critical_speed_the_sweep_did_not_find_is_a_row_saying_so(tmp_path):
    """cases/jeffcott_rotor asked for a third backward crossing of 1x (it has two): a FAIL row
    saying how many the step found; the others pass, the rpm unit converts."""
    from fem.validate import check_case

    case = tmp_path / "jeffcott_rotor"
    shutil.copytree(CASES / "jeffcott_rotor", case)
    ref = case / "reference.toml"
    text = ref.read_text().replace("number = 2\nvalue = 605.1438020",
                                   "number = 3\nvalue = 605.1438020")
    text = text.replace('whirl = "forward"\nvalue = 201.4513842',
                        'whirl = "forward"\nunit = "rpm"\nvalue = 1923.719015')
    ref.write_text(text)
    rows = check_case(case, workdir=str(tmp_path))
    bad = [r for r in rows if not r.passed]
    assert len(bad) == 1 and len(rows) == 7
    assert "critical speed 3 (order 1, backward whirl): step 'run_up' found 2" in bad[0].reason
