"""Ctrl-C (SIGINT) and SIGTERM at random moments of a run: the results stay whole.

On either signal the run stops at its next safe point or drops the frame it is writing (never half
of it), closes the results and XDMF files, says where they are, and exits 130 (SIGINT) or 143
(SIGTERM). Each trial sends one signal at a random moment after the run has begun (a static step
of many increments, then a dynamic step writing a frame per time step) and checks the exit code,
the message, and that every dataset of every step has the same number of frames and the XDMF
names only frames that exist. ``FEM_SOAK=1`` runs five times as many trials.
"""

import os
import random
import signal
import time

import pytest
from results_checks import assert_consistent, start_run, wait_for_frames

DECK = """
[model]
dim = 2

[[materials]]
name = "m"
E = 1000.0
nu = 0.3
density = 1.0

[[sections]]
name = "s"
A = 0.01
Iz = 1e-5

[nodes]
coordinates = [[0, 0], [1, 0]]

[[elements]]
name = "beam"
type = "beam"
formulation = "corotational"
material = "m"
section = "s"
connectivity = [[1, 2]]
divisions = 8

[[supports]]
nodes = 1
fixed = ["all"]

[[loads]]
name = "P"
nodes = 2
force = [0, -1e-3]

[[steps]]
name = "load"
type = "static"
nonlinear = true
increments = 40
max_increment = 0.025

[[steps]]
name = "swing"
type = "dynamic"
remove = ["P"]
time_step = 0.002
duration = 50.0
"""

TRIALS = 20 * (5 if os.environ.get("FEM_SOAK") else 1)
PARALLEL = 2                      # runs at once (the machine has two cores)
EXIT = {signal.SIGINT: 130, signal.SIGTERM: 143}


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_at_a_random_moment_leaves_whole_results(signum, tmp_path):
    deck = tmp_path / "deck.toml"
    deck.write_text(DECK)
    rng = random.Random(int(signum) * 1000 + TRIALS)
    delays = [rng.uniform(0.0, 2.0) for _ in range(TRIALS)]
    for batch in range(0, TRIALS, PARALLEL):
        runs = []
        for k in range(batch, min(batch + PARALLEL, TRIALS)):
            out, log = tmp_path / f"run{k}.h5", tmp_path / f"run{k}.log"
            runs.append((k, out, log, start_run(deck, out, log)))
        for k, out, log, proc in runs:
            try:
                wait_for_frames(log, 1)                  # the run has begun
                time.sleep(delays[k])
                proc.send_signal(signum)
                proc.wait(timeout=120)
            finally:
                proc.kill()
                proc.wait()
            said = log.read_text()
            where = f"trial {k}, {signum.name} {delays[k]:.3f} s after the first frame:\n{said}"
            assert proc.returncode == EXIT[signum], where
            assert f"interrupted by {signum.name}: the run stopped" in said, where
            assert f"the completed steps and increments are in {out}" in said, where
            assert "Traceback" not in said and "internal error" not in said, where
            assert assert_consistent(str(out), str(out.with_suffix(".xdmf"))) >= 1, where
