"""Every case's results as a new user reads them: meshio on every XDMF file (issue 26).

Each validation case (``cases/<name>/deck.toml``, dynamic steps shortened to a few time steps
with a frame at each, long static ones to a few increments) runs in a copy of its folder; every
XDMF file it writes (the time series, the modes and vibration files) is read with meshio's
``TimeSeriesReader``, and every array of every frame is compared with the results file's own
datasets by :func:`results_checks.check_with_meshio` (an independent reading of the layout:
node rows and cells exactly, the drawn bodies' and joints' points by their rigid motion).
"""

import copy
import shutil
import tomllib
from pathlib import Path

import pytest
from results_checks import assert_consistent, check_with_meshio

from fem.io import deck as deck_io
from fem.io.paraview import has_rotations
from fem.run import run

ROOT = Path(__file__).resolve().parents[1]
CASES = sorted(p.parent.name for p in (ROOT / "cases").glob("*/deck.toml"))
STEPS = 4                   # time steps kept of a dynamic step
INCREMENTS = 3              # increments kept of a static step


def shortened(deck: dict) -> dict:
    """A few time steps (a frame each) of every dynamic step, a few increments of static ones."""
    d = copy.deepcopy(deck)
    for s in d["steps"]:
        if s.get("type") == "dynamic":
            s["duration"] = min(s["duration"], STEPS * s["time_step"])
            s.pop("output_interval", None)
        elif s.get("increments", 0) > INCREMENTS:
            if "load_factor" in s:
                s["load_factor"] *= INCREMENTS / s["increments"]
            s["increments"] = INCREMENTS
        if "max_steps" in s:                    # arc-length: a few increments, then it warns
            s["max_steps"] = min(s["max_steps"], 2 * INCREMENTS)
    return d


def run_case(name: str, folder: Path):
    """Run case ``name`` (shortened) in ``folder``, a copy of its own; returns the result."""
    work = folder / name
    shutil.copytree(ROOT / "cases" / name, work)
    ref = tomllib.loads((work / "reference.toml").read_text()) \
        if (work / "reference.toml").exists() else {}
    for prep in ref.get("prepare", []):
        run(deck_io.load(str(work / prep)), str(work / f"{Path(prep).stem}_prepare.h5"))
    raw = tomllib.loads((work / "deck.toml").read_text())
    dk = deck_io.from_dict(shortened(raw), base_dir=str(work))
    return dk, run(dk, str(work / "out.h5"))


#: cases whose steps write no frames and no modes (linearize: /linear only)
NO_XDMF = {"spinning_beam_linearized", "two_link_hanging"}


@pytest.mark.parametrize("name", [c for c in CASES if c not in NO_XDMF])
def test_meshio_reads_every_array_of_every_case(name, tmp_path):
    dk, result = run_case(name, tmp_path)
    assert result.xdmf, result
    for xdmf in result.xdmf:
        frames = check_with_meshio(xdmf, result.h5, has_rotations(dk.model))
        assert frames > 0, xdmf
    assert_consistent(result.h5, result.xdmf[0] if result.xdmf else None)
