"""The spatial R-P-U-S four-bar with its coupler as a 3D co-rotational superelement (issue 33).

``cases/four_bar_rpus_superelement`` (Anantharaman's geometry, notes/application_papers.md section
7): tests/test_cases.py checks the superelement deck against the full model's largest mid-span
deflection and the energy balance; here the whole history of the mid-span deflection against the
full model's (``beams.toml``, the coupler as the 8 co-rotational beams it is reduced from), and
the reference value against a fresh run of the full model (a soak test: about 20 s).
"""

import os
import shutil
import tomllib
from pathlib import Path

import h5py
import numpy as np
import pytest

from fem.io.deck import load
from fem.io.results import _history
from fem.run import run

CASE = Path(__file__).resolve().parents[1] / "cases" / "four_bar_rpus_superelement"
MID = {"kind": "chord_offset", "nodes": [3, 7, 11]}


def deflection(path: Path, group: str | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Times, the mid-span's distance from the chord / length, and the energy lost, per frame."""
    q = MID if group is None else {**MID, "group": group}
    with h5py.File(path, "r") as h5:
        s = h5["steps/run"]
        return (s["time"][()], _history(h5, s, q, h5["model/node_ids"][()], []),
                s["energy/dissipated"][()])


@pytest.mark.soak
@pytest.mark.skipif(not os.environ.get("FEM_SOAK"), reason="soak test (FEM_SOAK=1)")
def test_superelement_follows_the_full_beams_over_the_run(tmp_path):
    """The superelement's mid-span deflection within 1 % of the full model's peak at every
    output frame (measured 0.35 %), the reference value the full model's peak (to 1e-9), and
    both models' energy balance closed to 1e-7 J (measured 9e-11 and 5e-11 J)."""
    for f in CASE.glob("*.toml"):
        shutil.copy(f, tmp_path)
    for deck in ("coupler", "beams", "deck"):
        run(load(str(tmp_path / f"{deck}.toml")), str(tmp_path / f"{deck}.h5"))
    t, full, lost_full = deflection(tmp_path / "beams.h5", None)
    t_se, se, lost_se = deflection(tmp_path / "deck.h5", "coupler")
    np.testing.assert_array_equal(t, t_se)
    peak = full.max()
    with open(CASE / "reference.toml", "rb") as fh:
        ref = tomllib.load(fh)["quantities"][0]
    assert ref["value"] == pytest.approx(peak, rel=1e-9)
    assert peak > 5e-3                                   # 7 cm of the 14.5 m coupler
    assert np.abs(se - full).max() < 1e-2 * peak
    assert np.abs(lost_full).max() < 1e-7 and np.abs(lost_se).max() < 1e-7
