"""Kill -9 a run at the moments its commits make new frames visible, restart it, count failures.

The reliability measurement behind the kill -9 notes of ``fem.io.restart``: Lee's frame by
arc-length (the deck of ``tests/test_restart.py``) is started N times and killed as soon as a
reader sees a random number of its frames (that is, while or just after a commit flushes the
file: the worst moments), then ``fem run --restart`` is tried on what it left. Prints each
failure and the count. Measured 2026-11-28: 1 of 30 failed before the end-of-allocation repair
("addr overflow"), 1 of 60 after it (a torn symbol-table node).

    python scripts/restart_kill_stress.py /tmp/stress 60 [seed]
"""

import random
import signal
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
import test_restart as T  # noqa: E402


def main(folder: str, n: int, seed: int = 0) -> int:
    """Kill and restart ``n`` runs in ``folder``; print the failures and their count."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    deck = T.lee(folder)
    rng = random.Random(seed)
    bad = 0
    for i in range(n):
        out = folder / f"k{i}.h5"
        at = rng.randint(3, 60)
        T.stopped(deck, out, "path", at, signal.SIGKILL)
        again = T.fem("run", deck, "--restart", out, cwd=folder)
        if again.returncode != 0:
            bad += 1
            print(i, at, again.stderr.strip()[-200:], flush=True)
        out.unlink(missing_ok=True)
    print("failures", bad, "of", n)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]) if len(sys.argv) > 3 else 0))
