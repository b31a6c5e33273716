"""Sphinx configuration of the fem docs (``make docs``; MyST Markdown pages).

The deck reference (``deck/<table>.md``) is not committed: :mod:`fem_docs` writes it from the
deck schema when a build starts, so it cannot drift from the code; so is the validation table
(``_generated/validation.md``, from ``fem validate --report``: ``fem_validation_report`` names
the report's ``validation.md``, default ``_build/validation/validation.md``).
"""

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "_ext"))
sys.path.insert(0, str(HERE.parent))

project = "fem"
author = "the fem developers"
copyright = "the fem developers"
extensions = ["myst_parser", "sphinx.ext.autodoc", "sphinx.ext.napoleon", "fem_docs"]
napoleon_google_docstring = False
autodoc_typehints = "none"
autodoc_member_order = "bysource"
source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "_generated"]
myst_heading_anchors = 3
html_theme = "alabaster"
html_static_path = []
# the pictures are the project's own (docs/images); no remote images, no intersphinx
suppress_warnings = []
