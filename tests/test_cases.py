"""Every validation case in ``cases/`` runs and matches its ``reference.toml``.

The same machinery as ``fem validate`` (:func:`fem.validate.case_dirs` and
:func:`fem.validate.check_case`), one test per case folder, results files in pytest's ``tmp_path``.
"""

import tomllib
from pathlib import Path

import pytest

from fem import validate

CASES_DIR = Path(__file__).resolve().parents[1] / "cases"
CASES = validate.case_dirs(CASES_DIR)
FOUNDATION = ("cantilever_2d", "cantilever_3d", "cantilever_3d_torsion_biaxial",
              "propped_cantilever", "portal_frame", "space_truss")


def test_foundation_cases_present():
    names = {c.name for c in CASES}
    missing = [n for n in FOUNDATION if n not in names]
    assert not missing, f"validation cases missing from {CASES_DIR}: {missing}"


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_case_documented(case):
    assert (case / "deck.toml").is_file()
    assert (case / "README.md").is_file()
    with open(case / "reference.toml", "rb") as fh:
        ref = tomllib.load(fh)
    assert ref.get("title") and ref.get("source"), "reference.toml needs a title and a source"
    assert ref.get("quantities"), "reference.toml has no [[quantities]]"
    for q in ref["quantities"]:
        where = f"{case.name}: quantity {q.get('name')!r}"
        assert q.get("name") and q.get("step") and q.get("source"), where
        assert q.get("kind") in validate.KINDS, where
        assert ("tolerance" in q) != ("abs_tolerance" in q), \
            f"{where}: give exactly one of tolerance and abs_tolerance"
        if "tolerance" in q:
            assert q["value"] != 0, f"{where}: a zero reference needs abs_tolerance"


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_case_passes(case, tmp_path):
    rows = validate.check_case(case, workdir=str(tmp_path))
    assert rows, f"{case.name}: no quantities compared"
    failed = [r for r in rows if not r.passed]
    assert not failed, "\n" + validate.table(rows)
