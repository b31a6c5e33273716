"""``fem validate --report DIR`` (fem.report): its HTML table is ``fem validate``'s, FAIL shows.

Two quick cases, the von Mises truss (its load path is plotted) and a copy of the static
cantilever with one reference value changed by 1 %, run in-process in one call; the report's
summary table is parsed from the HTML and compared cell by cell with the text table the same
call prints, and the docs' Markdown table (``validation.md``, one row per case) with the text
table's rows of each case: their count, tolerances, largest errors and verdicts.
"""

import re
import shutil
import tomllib
from html.parser import HTMLParser
from pathlib import Path

from fem.cli import main

CASES = Path(__file__).resolve().parents[1] / "cases"


class _Tables(HTMLParser):
    """The cells of every ``<table class=...>`` of a page, by class; the ``<img src>``s."""

    def __init__(self):
        super().__init__()
        self.tables, self.images = {}, []
        self._cls = self._row = self._cell = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table":
            self._cls = a.get("class")
            self.tables.setdefault(self._cls, [])
        elif tag == "tr" and self._cls:
            self._row = []
        elif tag in ("td", "th") and self._row is not None:
            self._cell = ""
        elif tag == "img":
            self.images.append(a["src"])

    def handle_data(self, data):
        if self._cell is not None:
            self._cell += data

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self._row.append(self._cell)
            self._cell = None
        elif tag == "tr" and self._row is not None:
            self.tables[self._cls].append(self._row)
            self._row = None
        elif tag == "table":
            self._cls = None


def _text_table(out: str) -> list[list[str]]:
    """The rows of ``fem validate``'s printed table, split at its columns (the dashes line)."""
    lines = out.splitlines()
    k = next(i for i, line in enumerate(lines) if set(line.replace(" ", "")) == {"-"})
    spans, pos = [], 0
    for dashes in lines[k].split("  "):
        start = lines[k].index(dashes, pos)
        spans.append((start, start + len(dashes)))
        pos = start + len(dashes)
    rows = []
    for line in lines[k + 1:]:
        if not line.strip():
            break
        rows.append([line[a:b if i < len(spans) - 1 else None].strip()
                     for i, (a, b) in enumerate(spans)])
    return rows


def _markdown_table(text: str) -> list[list[str]]:
    """The rows of the first Markdown table of ``text``, cells split at unescaped bars and
    unescaped (the header row first, the delimiter row left out)."""
    rows = []
    for line in text.splitlines():
        if set(line) <= set("|-") and rows:
            continue                            # the delimiter row
        if line.startswith("|"):
            cells = re.split(r"(?<!\\)\|", line.strip())[1:-1]
            rows.append([re.sub(r"\\(.)", r"\1", c.strip()) for c in cells])
        elif rows:
            break
    return rows


def _expected_markdown_row(case: str, rows: list[list[str]], folder: Path) -> list[str]:
    """A case's Markdown row as the text table of ``fem validate`` and its reference.toml give it.

    Tolerances: the distinct tolerance cells in order, ``abs`` added where the error is absolute;
    largest error: the error cell with the largest relative, then absolute, value.
    """
    with open(folder / "reference.toml", "rb") as fh:
        ref = tomllib.load(fh)
    tolerances = []
    for r in rows:
        t = r[5] + (" abs" if r[4].endswith(" abs") else "")
        if t not in tolerances:
            tolerances.append(t)
    largest = []
    for kind in ("rel", "abs"):
        errors = [r[4] for r in rows if r[4].endswith(f" {kind}")]
        if errors:
            largest.append(max(errors, key=lambda e: float(e.split()[0])))
    failed = sum(r[-1] == "FAIL" for r in rows)
    return [f"`{case}`", " ".join(ref["title"].split()), " ".join(ref["source"].split()),
            str(len(rows)), "; ".join(tolerances), "; ".join(largest),
            f"FAIL ({failed} of {len(rows)})" if failed else "PASS"]


def test_report_table_equals_validate_and_a_changed_reference_fails(tmp_path, capsys):
    cases = tmp_path / "cases"
    shutil.copytree(CASES / "von_mises_truss", cases / "von_mises_truss")
    bad = cases / "cantilever_2d_changed"
    shutil.copytree(CASES / "cantilever_2d", bad)
    ref = (bad / "reference.toml").read_text()
    old = "value = -3.2677335816810857"
    assert ref.count(old) == 1
    (bad / "reference.toml").write_text(ref.replace(old, "value = -3.30"))   # 1 % off

    report = tmp_path / "report"
    code = main(["validate", "--cases-dir", str(cases), "--report", str(report)])
    out = capsys.readouterr().out
    assert code == 1                                    # one quantity fails
    text = _text_table(out)
    page = _Tables()
    page.feed((report / "index.html").read_text(encoding="utf-8"))
    html_rows = page.tables["validation"]
    assert html_rows[0] == ["case", "quantity", "reference", "computed", "error", "tolerance",
                            "result"]
    assert html_rows[1:] == text
    assert len(text) == 22 + 3                          # the cantilever 22, von Mises 3 quantities
    failed = [r for r in html_rows[1:] if r[-1] == "FAIL"]
    assert [(r[0], r[1]) for r in failed] == [("cantilever_2d_changed",
                                               "tip force: tip deflection")]
    assert all(r[-1] == "PASS" for r in html_rows[1:] if r[0] != "cantilever_2d_changed")
    # the case's own section shows it too, and the environment names the libraries
    assert ["cantilever_2d_changed", "tip force: tip deflection"] in [
        r[:2] for r in page.tables["case"] if r[-1] == "FAIL"]
    env = {r[0]: r[1] for r in page.tables["environment"]}
    assert {"python", "numpy", "scipy", "petsc", "blas"} <= set(env)
    assert "blas" in env["blas"].lower() or "mkl" in env["blas"].lower()
    # the von Mises truss's load path is drawn: a PNG the page links
    assert page.images == ["plots/von_mises_truss_1.png"]
    assert (report / page.images[0]).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    # the docs' table (validation.md): a row per case, from the same rows as the printed table
    markdown = (report / "validation.md").read_text(encoding="utf-8")
    md = _markdown_table(markdown)
    assert md[0] == ["case", "what is checked", "reference", "quantities", "tolerance",
                     "largest error", "result"]
    assert [r[0] for r in md[1:]] == ["`cantilever_2d_changed`", "`von_mises_truss`"]
    for row in md[1:]:
        case = row[0].strip("`")
        expected = _expected_markdown_row(case, [r for r in text if r[0] == case], cases / case)
        source = expected.pop(2)
        shown = row.pop(2)                      # the source, shortened to SOURCE_CHARS
        assert row == expected
        assert len(shown) <= 110
        assert source.startswith(shown.removesuffix("\u2026")) and (shown == source) == (
            len(source) <= 110)
    assert md[1][-1] == "FAIL (1 of 22)" and md[2][-1] == "PASS"
    assert f"{len(text) - 1} of {len(text)} quantities PASS, 1 FAIL" in markdown
    assert re.search(r"\nRun on fem [^\n]*; numpy [^\n]*; blas ", markdown)
