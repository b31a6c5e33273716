"""Regenerate the sweep pictures of the docs (docs/theory.md) in docs/images/ (``make images``).

* ``jeffcott_campbell.png``, ``jeffcott_stability.png``: cases/jeffcott_rotor (the fixed-frame
  Campbell diagram in rpm with its forward and backward whirl and critical speeds; the
  stability plot of a stable rotor, every real part zero within round-off);
* ``column_stability.png``: the pinned column of tests/test_sweep.py loaded to twice its Euler
  load (the boundary marked, the growth rate past it).
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    """Run the two sweeps in a temporary folder and copy their PNGs to docs/images/."""
    sys.path.insert(0, str(ROOT))
    from fem.io import deck as deck_io
    from fem.run import run
    from tests.test_sweep import PI2, column

    out = ROOT / "docs" / "images"
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        r = run(deck_io.load(str(ROOT / "cases" / "jeffcott_rotor" / "deck.toml")),
                str(Path(tmp) / "jeffcott.h5"))
        for png, name in zip(r.plots, ("jeffcott_campbell.png", "jeffcott_stability.png"),
                             strict=True):
            shutil.copyfile(png, out / name)
        values = [PI2 * k / 10 for k in range(21)]
        r = run(deck_io.from_dict(column(values, modes=3)), str(Path(tmp) / "column.h5"))
        shutil.copyfile(r.plots[1], out / "column_stability.png")
    print(f"written: {out}")


if __name__ == "__main__":
    main()
