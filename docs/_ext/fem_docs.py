"""Sphinx extension of the fem docs: the deck reference, one page per deck table.

:func:`deck_pages` cuts :func:`fem.io.schema.reference_markdown` (what ``fem deck-reference``
prints) at its table headings and writes ``deck/<table>.md`` and ``deck/index.md`` when a build
starts (``builder-inited``), so that the pages are always the schema's. Files whose text did not
change are left alone (Sphinx then does not read them again).

:func:`validation_table` writes ``_generated/validation.md``, which ``validation.md`` includes:
the table ``fem validate --report`` wrote (``DIR/validation.md``; ``make docs`` runs it into
``_build/validation`` first, the config value ``fem_validation_report`` names another file), or,
where no report exists (a build without running the cases), one line saying so and the list of
cases from ``cases/*/reference.toml``.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

HEADING = re.compile(r"^#### (?:`\[{1,2}(?P<table>[a-z_]+)\]{1,2}`: )?(?P<title>.*)$")

INDEX = """# Deck reference

Generated from the deck schema when the docs are built (the same text as `fem deck-reference`),
one page per table; [Writing decks](../decks.md) shows a whole deck and how the tables fit
together.

```{toctree}
:maxdepth: 1

"""


def _escape_bars(lines: list[str]) -> list[str]:
    """Rows of the reference's tables with a ``|`` inside the meaning (``|load factor|``) escaped.

    A table row has as many cells as its header; a meaning cell that holds ``|`` (an absolute
    value) would otherwise split into two and push the "used by" column out of the table.
    """
    out, cells = [], 0
    for line in lines:
        if not line.startswith("|"):
            cells = 0
        elif cells == 0:
            cells = line.count("|") - 1                    # the header row
        else:
            parts = line.split("|")
            extra = len(parts) - (cells + 2)
            if extra > 0 and not set(line) <= set("|-"):
                parts[4:5 + extra] = ["\\|".join(parts[4:5 + extra])]
                line = "|".join(parts)
        out.append(line)
    return out


def deck_pages(reference: str) -> dict[str, str]:
    """``{page name: Markdown}`` of the deck reference ``reference``, one page per table.

    A table's page is its ``#### `[table]`: what`` section with the heading raised to a title;
    the closing section without a table ("Names, numbers and sizes") is the page ``limits``.
    ``index`` lists them in the reference's order.
    """
    pages: dict[str, list[str]] = {}
    name = None
    for line in reference.splitlines():
        m = HEADING.match(line)
        if m:
            name = m["table"] or "limits"
            header = line[len("#### "):]
            pages[name] = [f"# {header}", ""]
            continue
        if name is None:
            raise ValueError(f"deck reference text before its first table: {line!r}")
        pages[name].append(line)
    out = {n: "\n".join(_escape_bars(lines)).rstrip() + "\n" for n, lines in pages.items()}
    out["index"] = INDEX + "".join(f"{n}\n" for n in pages) + "```\n"
    return out


def write_deck_pages(folder: Path) -> list[Path]:
    """Write :func:`deck_pages` of the current schema into ``folder``; the paths written."""
    from fem.io.schema import reference_markdown

    folder.mkdir(parents=True, exist_ok=True)
    pages = deck_pages(reference_markdown())
    for old in folder.glob("*.md"):
        if old.stem not in pages:
            old.unlink()
    paths = []
    for name, text in pages.items():
        path = folder / f"{name}.md"
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
        paths.append(path)
    return paths


#: where ``make docs`` has ``fem validate --report`` write, relative to the docs folder
REPORT = "_build/validation/validation.md"


def validation_table(report: Path, cases: Path) -> str:
    """The Markdown of the docs' validation table: ``report``'s text, or the list of cases.

    Without ``report``, one line says that no report was made and a list names every case of
    ``cases`` (``<case>/reference.toml``) with its title.
    """
    from fem.report import md_cell

    if report.is_file():
        return report.read_text(encoding="utf-8")
    lines = [f"No validation report in this build (`make docs` makes one: "
             f"`fem validate --report docs/{Path(REPORT).parent}`); the cases:", ""]
    for ref in sorted(cases.glob("*/reference.toml")):
        try:
            with open(ref, "rb") as fh:
                title = str(tomllib.load(fh).get("title", ""))
        except (OSError, tomllib.TOMLDecodeError):
            title = ""
        lines.append(f"* `{ref.parent.name}`" + (f": {md_cell(title)}" if title else ""))
    return "\n".join(lines) + "\n"


def _write_if_changed(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.is_file() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")


def _builder_inited(app) -> None:
    src = Path(app.srcdir)
    write_deck_pages(src / "deck")
    report = src / (app.config.fem_validation_report or REPORT)
    _write_if_changed(src / "_generated" / "validation.md",
                      validation_table(report, src.parent / "cases"))


def setup(app):
    """Register the generators with Sphinx."""
    app.add_config_value("fem_validation_report", "", "env", [str])
    app.connect("builder-inited", _builder_inited)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
