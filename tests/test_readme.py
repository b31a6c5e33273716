"""The README stays short and true: under 20 KB, the two commands, links that lead somewhere.

The deck reference, the validation table and the rest moved to docs/ (tests/test_docs.py checks
them there); the README's deck is read and run by test_docs.py too.
"""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def test_readme_is_under_20_kb():
    assert len(README.encode()) < 20_000, len(README.encode())


def test_readme_gives_the_two_commands():
    assert "make test" in README and "make demo" in README and "make docs" in README
    assert "make test" in (ROOT / ".ci" / "run").read_text()


def test_readme_links_lead_to_files():
    targets = re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", README)
    assert any(t.startswith("docs/tutorials/") for t in targets)
    missing = [t for t in targets if not (ROOT / t).exists()]
    assert not missing, f"README links to files that do not exist: {missing}"


def test_readme_names_the_install_routes_the_setup_script_prints():
    setup = (ROOT / "scripts" / "setup_env.sh").read_text()
    for route in ("conda-forge", "FEM_PYTHON=", "FEM_PETSC_FROM_SOURCE=1"):
        assert route in README and route in setup, route
