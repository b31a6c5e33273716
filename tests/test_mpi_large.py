"""The accounting of ``benchmarks/mpi_large.py`` (issue 31's million-unknown benchmark).

Two things the benchmark's figures rest on and that can go wrong without a run failing: the
peak resident set of each phase (``VmHWM``, reset at each phase's start through
``/proc/self/clear_refs``) must be the phase's own, not the process's, and the scaling model
must give back, on 1 and 2 ranks, the times and memory it was built from (every measured phase is
counted once, in the part of a run or of an iteration it belongs to).
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks import mpi_large

linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc/self (Linux)")


PEAKS = """
import numpy as np
from benchmarks import mpi_large
mpi_large._reset_peak()
before = mpi_large._status("VmHWM")
block = np.ones(200 * 2**17)                 # 200 MB, touched
high = mpi_large._status("VmHWM")
del block
mpi_large._reset_peak()
print(before, high, mpi_large._status("VmHWM"))
"""


@linux
def test_a_phase_peak_forgets_the_peaks_of_earlier_phases():
    """200 MB touched and freed before the reset count in the earlier peak only.

    In a fresh interpreter: where MPI is initialized (this process may be a singleton already)
    its memory hooks may keep freed pages mapped.
    """
    root = Path(__file__).resolve().parents[1]
    out = subprocess.run([sys.executable, "-c", PEAKS], capture_output=True, text=True,
                         check=True, env={**os.environ, "PYTHONPATH": str(root)}).stdout
    before, high, after = map(float, out.split())
    assert high > before + 150
    assert after < high - 150, (before, high, after)


def _runs():
    """Two runs of the shape ``worker`` prints (figures of the 1e6 run, rounded)."""
    def row(elements, peaks, mumps):
        return {"elements": elements, "mumps_mb": mumps, "mumps_estimate_mb": mumps,
                "maxrss_mb": max(peaks), "events": {"MatLUFactorSym": 3.0,
                                                     "MatLUFactorNum": 270.0, "MatSolve": 2.5},
                "phase_peak_mb": dict(zip(mpi_large.PHASES, peaks, strict=True))}
    one = {"n": 998280, "ranks": 1, "times": dict(zip(mpi_large.PHASES, [
        2.8, 38.6, 0.0, 2.7, 277.0, 2.8, 2.0, 0.1], strict=True)),
        "rows": [row(444152, [205, 5261, 5261, 5262, 11440, 11441, 11445, 11452], 8738)]}
    two = {"n": 998280, "ranks": 2, "times": dict(zip(mpi_large.PHASES, [
        4.8, 54.8, 1.0, 15.4, 236.0, 2.1, 1.5, 0.1], strict=True)),
        "rows": [row(223372, [204, 5260, 5261, 5263, 8660, 8661, 8665, 8672], 4456),
                 row(221492, [205, 5261, 5262, 5264, 8792, 8793, 8795, 8793], 4828)]}
    return [one, two]


def test_the_scaling_model_gives_back_the_runs_it_is_built_from():
    runs = _runs()
    rows = {r["ranks"]: r for r in mpi_large.scaling_model(runs)}
    one = runs[0]
    # 1 rank: every measured phase once, in the run's part or the iteration's
    assert rows[1]["once"] + rows[1]["iteration"] == pytest.approx(sum(one["times"].values()))
    assert rows[1]["mb"] == pytest.approx(11440)           # the factorization's peak
    # 2 ranks: the largest rank's peak while factoring (its held memory and MUMPS's share)
    assert rows[2]["mb"] == pytest.approx(8792)
    # weak scaling on 1 rank is the run itself; memory per rank never falls below the set-up's
    assert rows[1]["weak_iteration"] == pytest.approx(rows[1]["iteration"])
    assert min(r["mb"] for r in rows.values()) == pytest.approx(5262)
