"""The README stays true: the deck reference is the schema's, every case is in the table."""

from pathlib import Path

from fem.io.schema import reference_markdown

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def section(start: str, end: str) -> str:
    return README.split(start, 1)[1].split(end, 1)[0].strip("\n")


def test_deck_reference_is_generated_from_the_schema():
    body = section("<!-- deck-reference:start -->", "<!-- deck-reference:end -->")
    assert body.strip() == reference_markdown().strip(), (
        "README deck reference is stale: run python -m fem.io.schema --update-readme")


def test_every_case_is_in_the_validation_table():
    cases = sorted(p.parent.name for p in (ROOT / "cases").glob("*/reference.toml"))
    missing = [c for c in cases if f"`{c}`" not in README]
    assert not missing, f"cases missing from the README's validation table: {missing}"


def test_readme_gives_the_two_commands():
    assert "make test" in README and "make demo" in README
    assert "make test" in (ROOT / ".ci" / "run").read_text()
