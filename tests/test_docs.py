"""The docs (docs/, ``make docs``) build without warnings and say what the code does.

* Sphinx builds them with warnings as errors (skipped where Sphinx or MyST is not installed: they
  come with the ``docs`` extra that ``make env`` installs);
* the deck reference pages are the schema's (``fem deck-reference``), one per table, none lost;
* every deck snippet (```toml) of the docs and the README is read by the deck reader, and the whole
  decks among them run;
* every ``>>>`` example runs and prints what the page says (doctest);
* the validation page lists every case, the troubleshooting page every exit code of fem.errors.
"""

import doctest
import importlib.util
import inspect
import os
import re
import sys
from pathlib import Path

import pytest

import fem.errors
from fem.cli import main
from fem.io.deck import loads
from fem.io.schema import TOP, reference_markdown

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
sys.path.insert(0, str(DOCS / "_ext"))
from fem_docs import deck_pages  # noqa: E402 - docs/_ext is not a package

PAGES = sorted(p for p in DOCS.rglob("*.md")
               if "_build" not in p.parts and p.parent.name != "deck")
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)


def blocks(path: Path, language: str) -> list[str]:
    return [body for lang, body in FENCE.findall(path.read_text()) if lang == language]


NASTY = "|u| < 1e-3 * L_0 [m] `x` #2 $y \\ ok"      # every character Markdown reads as markup


def _cases_with_a_failure():
    """A passing and a failing case (fem.report.CaseReport) whose texts hold :data:`NASTY`."""
    from fem.report import CaseReport
    from fem.validate import Row

    ok = CaseReport("case_ok", [Row("case_ok", "a", 1.0, 1.0 + 1e-9, 1e-9, 1e-6, False),
                                Row("case_ok", "b", 0.0, 2e-12, 2e-12, 1e-10, True)],
                    f"title {NASTY}", "source " + "word " * 40)
    bad = CaseReport("case_bad", [Row.failed("case_bad", "c", f"deck failed: {NASTY}")],
                     "a failing case", NASTY)
    return [ok, bad]


@pytest.mark.parametrize("with_report", [True, False], ids=["report", "no-report"])
@pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::PendingDeprecationWarning")
def test_sphinx_builds_the_docs_without_warnings(with_report, tmp_path):
    """With a report (a FAIL, markup characters in every text) the validation page shows its
    table cell for cell; without one, a line saying so and every case; no warnings either way."""
    for module in ("sphinx", "myst_parser"):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{module} is not installed (pip install -e '.[docs]', or make env)")
    import pickle

    from docutils import nodes
    from sphinx.cmd.build import build_main

    from fem.report import case_cells, markdown

    report = tmp_path / "validation.md"
    cases = _cases_with_a_failure()
    if with_report:
        report.write_text(markdown(cases, {"python": "3", "blas": NASTY}), encoding="utf-8")
    warnings = tmp_path / "warnings.txt"
    code = build_main(["-W", "--keep-going", "-q", "-b", "dummy", "-w", str(warnings),
                       "-D", f"fem_validation_report={report}",
                       "-d", str(tmp_path / "doctrees"), str(DOCS), str(tmp_path / "out")])
    assert code == 0, warnings.read_text()
    assert sorted(p.stem for p in (DOCS / "deck").glob("*.md")) == sorted(
        deck_pages(reference_markdown()))
    with open(tmp_path / "doctrees" / "validation.doctree", "rb") as fh:
        doctree = pickle.load(fh)
    page = doctree.astext()
    tables = list(doctree.findall(nodes.table))
    if with_report:
        assert len(tables) == 1 and "No validation report" not in page
        rows = [[e.astext() for e in row.findall(nodes.entry)] for row in tables[0].findall(
            nodes.row)]
        assert rows[1:] == [list(case_cells(c)) for c in cases]
        assert rows[1][1] == f"title {NASTY}" and rows[2][2] == NASTY
        assert rows[1][4:] == ["1.0e-06; 1.0e-10 abs", "1.00e-09 rel; 2.00e-12 abs", "PASS"]
        assert rows[2][3:] == ["1", "-", "-", "FAIL (1 of 1)"]
        assert f"case_bad: deck failed: {NASTY}" in page and f"blas {NASTY}." in page
    else:
        assert not tables and "No validation report in this build" in page
        names = sorted(p.parent.name for p in (ROOT / "cases").glob("*/reference.toml"))
        assert [c for c in names if f"{c}:" not in page] == []


def test_deck_reference_pages_are_the_schemas_one_per_table():
    reference = reference_markdown()
    pages = deck_pages(reference)
    assert set(TOP) | {"limits", "index"} == set(pages)
    for table in TOP:
        assert f"\n{table}\n" in pages["index"]
    # nothing lost or changed: the pages, titles lowered back to the reference's headings
    # and the escaped bars unescaped, are the reference
    back = "\n".join(re.sub(r"^# ", "#### ", pages[name], count=1).replace("\\|", "|")
                     for name in pages if name != "index")
    assert back.split() == reference.split()


def test_the_bar_in_a_meaning_is_escaped_not_a_column():
    text = "#### `[x]`: t\n\n| key | type | default | meaning |\n|---|---|---|---|\n" \
           "| `a` | float |  | stop when |load| is 2 |\n"
    assert r"stop when \|load\| is 2 |" in deck_pages(text)["x"]


DECKS = [(path, i, body) for path in [ROOT / "README.md", *PAGES]
         for i, body in enumerate(blocks(path, "toml"))]


@pytest.mark.parametrize("path, i, body", DECKS,
                         ids=[f"{p.relative_to(ROOT)}-{i}" for p, i, _ in DECKS])
def test_every_deck_snippet_is_read_and_whole_decks_run(path, i, body, tmp_path):
    deck = loads(body, path=f"{path.name} snippet {i}")     # DeckError on any mistake
    if deck.steps:
        deck_file = tmp_path / "deck.toml"
        deck_file.write_text(body)
        assert main(["run", str(deck_file), "-o", str(tmp_path / "out.h5")]) == 0


def test_there_are_deck_snippets_and_doctests():
    assert len(DECKS) >= 2
    assert sum(">>>" in b for p in PAGES for b in blocks(p, "pycon")) >= 4


@pytest.mark.parametrize("path", [p for p in PAGES if any(">>>" in b for b in blocks(p, "pycon"))],
                         ids=lambda p: str(p.relative_to(DOCS)))
def test_doctests_of_the_docs_run(path, tmp_path, monkeypatch):
    """Each page's ``>>>`` examples in one namespace, from a folder that holds examples/."""
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    monkeypatch.chdir(tmp_path)
    text = "\n".join(blocks(path, "pycon"))
    test = doctest.DocTestParser().get_doctest(text, {}, path.name, str(path), 0)
    flags = doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS
    runner = doctest.DocTestRunner(optionflags=flags)
    runner.run(test)
    assert runner.failures == 0 and runner.tries > 0


def test_every_case_is_in_the_validation_table(tmp_path):
    """The page includes the generated table; without a report, that lists every case."""
    from fem_docs import validation_table

    assert "```{include} _generated/validation.md\n```" in (DOCS / "validation.md").read_text()
    page = validation_table(tmp_path / "none.md", ROOT / "cases")
    cases = sorted(p.parent.name for p in (ROOT / "cases").glob("*/reference.toml"))
    missing = [c for c in cases if f"`{c}`" not in page]
    assert not missing, f"cases missing from the generated validation list: {missing}"
    (tmp_path / "report.md").write_text("| case |\n|---|\n| `x` |\n")
    assert validation_table(tmp_path / "report.md", ROOT / "cases") == "| case |\n|---|\n| `x` |\n"


def test_troubleshooting_lists_every_exit_code():
    rows = {}
    for line in (DOCS / "troubleshooting.md").read_text().splitlines():
        m = re.match(r"\| ([\d, ]+) \|([^|]*)\|", line)
        if m:
            for code in m[1].split(","):
                rows[int(code)] = m[2]
    for name, cls in inspect.getmembers(fem.errors, inspect.isclass):
        if issubclass(cls, fem.errors.FemError) and isinstance(cls.__dict__.get("exit_code"), int):
            assert name in rows.get(cls.exit_code, ""), (name, cls.exit_code)
    assert {0, 1, 2, 3, 4, 70, 130, 143} <= set(rows)


def test_docs_name_existing_files():
    """Relative links of the committed pages point to files (the deck pages: generated ones)."""
    generated = {f"{n}.md" for n in deck_pages(reference_markdown())}
    for page in PAGES:
        for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", page.read_text()):
            path = (page.parent / target).resolve()
            if path.parent == DOCS / "deck" and path.name in generated:
                continue
            assert path.exists(), f"{page.relative_to(ROOT)}: {target}"
        for target in re.findall(r"literalinclude\} (\S+)", page.read_text()):
            assert (page.parent / target).is_file(), f"{page.relative_to(ROOT)}: {target}"
    assert os.path.isdir(DOCS / "images")
