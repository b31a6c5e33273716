"""Progress of a run: a bar on a terminal, a line per frame with -v, nothing on a pipe."""

import fcntl
import os
import pty
import re
import select
import struct
import subprocess
import termios
from pathlib import Path

import pytest
from results_checks import env, fem_command, run_fem

CASES = Path(__file__).resolve().parents[1] / "cases"


def test_nothing_on_a_pipe_unless_asked(tmp_path):
    proc = run_fem("run", str(CASES / "von_mises_truss" / "deck.toml"), "-o",
                   str(tmp_path / "vm.h5"))
    assert proc.returncode == 0
    assert proc.stderr == ""                          # no bar, no log lines, no warnings
    assert proc.stdout.startswith("step snap (static)")


@pytest.mark.parametrize("where", ["before", "after"])
def test_verbose_prints_a_line_per_output_frame(tmp_path, where):
    """``fem -v run deck`` and ``fem run deck -v`` (as the README shows it) both log a line per
    frame; the run ends with its wall time."""
    deck = ("run", str(CASES / "von_mises_truss" / "deck.toml"), "-o", str(tmp_path / "vm.h5"))
    proc = run_fem(*(("-v", *deck) if where == "before" else (*deck, "-v")))
    assert re.fullmatch(r"wall time: [0-9.e+-]+ s", proc.stdout.splitlines()[-1]), proc.stdout
    assert proc.returncode == 0
    lines = [line for line in proc.stderr.splitlines() if " frame " in line]
    import h5py
    with h5py.File(tmp_path / "vm.h5", "r") as h5:
        frames = h5["steps/snap/time"].shape[0]
    assert len(lines) == frames
    # arc-length frames are counted (their load factor falls), from 1
    assert lines[0] == "fem: snap frame 0: increment 1, 1 iterations" or \
        re.fullmatch(r"fem: snap frame 0: increment 1, \d+ iterations", lines[0]), lines[0]


def test_a_terminal_shows_a_bar_with_the_steps_clock(tmp_path):
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
    proc = subprocess.Popen(fem_command("run", str(CASES / "four_bar_chain" / "deck.toml"), "-o",
                                        str(tmp_path / "chain.h5")), env=env(),
                            stdout=subprocess.DEVNULL, stderr=slave)
    os.close(slave)
    shown = b""
    while True:
        ready, _, _ = select.select([master], [], [], 0.5)
        if ready:
            try:
                chunk = os.read(master, 4096)
            except OSError:
                break
            if not chunk:
                break
            shown += chunk
        elif proc.poll() is not None:
            break
    proc.wait()
    os.close(master)
    assert proc.returncode == 0
    updates = [u for u in re.split(r"[\r\n]", shown.decode(errors="replace")) if "%|" in u]
    assert updates, shown
    assert all(u.startswith("fly (time):") for u in updates)
    percents = [int(re.search(r"(\d+)%\|", u).group(1)) for u in updates]
    assert percents == sorted(percents) and percents[-1] > 0     # refreshes: every 0.2 s
    assert any(re.search(r"/20, \d+ it", u) for u in updates)  # 20 s clock, Newton its


def test_a_closed_pipe_is_not_an_error(tmp_path):
    """``fem run ... | head``: the reader goes away; the run completes, no internal error.

    ``true`` leaves before anything is written (``head`` may read all of a short output first,
    which hides the failure).
    """
    deck = CASES / "cantilever_2d" / "deck.toml"
    out = tmp_path / "c.h5"
    command = " ".join(fem_command("run", str(deck), "-o", str(out)))
    proc = subprocess.run(f"{command} | true; exit ${{PIPESTATUS[0]}}", shell=True, env=env(),
                          capture_output=True, text=True, timeout=120, executable="/bin/bash")
    assert proc.returncode == 0, proc.stderr
    assert "internal error" not in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    assert "BrokenPipe" not in proc.stderr
    assert out.exists()                                   # the results are complete
    import h5py
    with h5py.File(out, "r") as h5:
        assert set(h5["steps"]) == {"tip_force", "tip_moment"}
