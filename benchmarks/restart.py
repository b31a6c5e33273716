"""The cost of checkpoints (``[output] checkpoint_interval``, what ``fem run --restart`` needs).

A 1e4-step dynamic run of a small model writes a frame at every time step, so the writer, and
the checkpoints beside it, are as large a share of the run as they get: the flexible pendulum of
:mod:`benchmarks.small_models` (4 co-rotational beams, the energy-conserving scheme, compiled
time steps), 10 000 steps of 1e-3 s. Run with the default ``checkpoint_interval`` (a checkpoint,
with its forced commit, every that many frames) and with checkpoints at the step's end only
(``0``), alternately, ``REPEAT`` times each; the table gives each run's wall time and the ratio
of the fastest runs (the machine's speed wanders; alternating shares it out), and the time spent
writing checkpoints (inside :meth:`fem.io.hdf5.ResultsFile.write_checkpoint`, and the commits
they force, whole: an upper bound, as a forced commit spares the next timed one its frames) as
a share of its run: a figure the machine's wandering speed leaves nearly alone. Acceptance
(issue 29): the default costs under 5 %, a ratio under 1.05.
"""

import os
import tempfile
import time

from benchmarks.small_models import H, pendulum_deck
from fem import _petsc
from fem.io.deck import from_dict
from fem.io.hdf5 import ResultsFile
from fem.io.schema import SCHEMA
from fem.run import run

STEPS = 10_000
REPEAT = 2
DEFAULT = next(k.default for k in SCHEMA["output"] if k.name == "checkpoint_interval")


def deck(interval: int):
    """The pendulum, a frame at every one of :data:`STEPS` steps, checkpoints every ``interval``."""
    d = pendulum_deck(4)
    step = d["steps"][0]
    step.update(duration=H * STEPS)
    del step["output_interval"]
    d["output"] = {"checkpoint_interval": interval}
    return from_dict(d)


def timed(interval: int, folder: str) -> tuple[float, float]:
    """Wall time of one run with checkpoints every ``interval`` frames, and of its checkpoints."""
    path = os.path.join(folder, f"every_{interval}.h5")
    inside = [0.0]
    write, commit = ResultsFile.write_checkpoint, ResultsFile.commit

    def counted(self, *args, **kwargs):
        t0 = time.perf_counter()
        try:
            return write(self, *args, **kwargs)
        finally:
            inside[0] += time.perf_counter() - t0

    def forced(self, force=False, checkpoint=False):
        t0 = time.perf_counter()
        try:
            return commit(self, force, checkpoint)
        finally:
            if checkpoint:
                inside[0] += time.perf_counter() - t0
    ResultsFile.write_checkpoint, ResultsFile.commit = counted, forced
    try:
        start = time.perf_counter()
        run(deck(interval), path)
        return time.perf_counter() - start, inside[0]
    finally:
        ResultsFile.write_checkpoint, ResultsFile.commit = write, commit


def main() -> dict:
    _petsc.init()
    times = {DEFAULT: [], 0: []}
    share = {DEFAULT: [], 0: []}
    with tempfile.TemporaryDirectory() as folder:
        timed(0, folder)                       # compiled kernels loaded, caches warm
        for _ in range(REPEAT):
            for interval in (DEFAULT, 0):
                wall, inside = timed(interval, folder)
                times[interval].append(wall)
                share[interval].append(inside / wall)
    ratio = min(times[DEFAULT]) / min(times[0])
    print(f"checkpoints: the flexible pendulum, {STEPS} time steps, a frame each")
    print(f"{'checkpoint_interval':>20} {'runs (s)':>30} {'fastest (s)':>12} "
          f"{'checkpoints':>12}")
    for interval, ts in times.items():
        print(f"{interval:>20} {' '.join(f'{t:9.2f}' for t in ts):>30} {min(ts):12.2f} "
              f"{100 * max(share[interval]):11.2f}%")
    print(f"ratio (default {DEFAULT} / step ends only): {ratio:.3f}")
    return {"ratio": ratio, "times": times, "share": share}


if __name__ == "__main__":
    main()
