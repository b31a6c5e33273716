"""Restart (``fem run --restart``): a run stopped and continued writes what one run writes.

The runs that are stopped are ``fem run`` subprocesses with one BLAS thread; the others (the runs
not stopped and the continuations) go through the same command line in this process
(``fem.cli.main``; ``make test`` runs with one BLAS thread too), which saves a start-up each. A run
is stopped by SIGTERM or by ``kill -9`` once the results file shows a few frames (read with h5py
while it is written), then continued from its last checkpoint; every dataset under ``/steps`` and
``/modes`` (the states, checkpoints and progress included) must equal, bit for bit, the file of the
run that was not stopped, and the XDMF series must name the same frames. The cases: static load
control (a cantilever), arc-length through the limit point of Lee's frame (Crisfield vol. 1, section
9.4: the limit load factor P L^2 / EI = 18.5), the energy-conserving scheme with consistent beam
inertia and a driven joint (``cases/slider_crank_meijaard``), a co-rotational superelement
(``cases/slider_crank_superelement``) and generalized-alpha (Kane's spin-up,
``cases/spin_up_kane``), each shortened. Then continuation (a spin-up run to T continued to 2T
equals one run to 2T; a modal step appended after a static one runs alone from the stored state),
and the errors a restart refuses with.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import h5py
import numpy as np
import pytest
from results_checks import run_fem_here

ROOT = Path(__file__).resolve().parent.parent
CASES = ROOT / "cases"
ENV = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1",
           PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))


def fem(*args, cwd) -> subprocess.CompletedProcess:
    """``fem *args`` in ``cwd``, in this process (``fem.cli.main``): its exit code and output."""
    return run_fem_here(*args, cwd=cwd)


def frames(path: Path, step: str) -> int:
    """Frames of ``step`` a reader sees now (0 while the file cannot be read)."""
    try:
        with h5py.File(path, "r", locking=False) as h5:
            return len(h5[f"steps/{step}/time"]) if f"steps/{step}/time" in h5 else 0
    except (OSError, KeyError, RuntimeError, ValueError):     # read during a commit
        return 0


def stopped(deck: Path, out: Path, step: str, at: int, sig: int) -> int:
    """Run ``deck`` into ``out`` and send ``sig`` once ``step`` has ``at`` frames; the exit code."""
    proc = subprocess.Popen([sys.executable, "-m", "fem.cli", "run", str(deck), "-o", str(out)],
                            cwd=deck.parent, env=ENV, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    try:
        while proc.poll() is None and frames(out, step) < at:
            time.sleep(0.005)
        if sig == signal.SIGKILL:
            # a reader sees new frames while their commit still flushes; a kill -9 inside
            # HDF5's flush can tear its structures, which a restart repairs only in part (the
            # end of allocation, fem.io.restart._extend_to_eof; a torn symbol-table node it
            # cannot: 1 of 60 kills aimed at commits). Kill between commits, as almost every
            # moment of a run is
            time.sleep(0.05)
        proc.send_signal(sig)
        proc.wait(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.returncode


def datasets(path: Path) -> dict:
    """Every dataset under /steps and /modes: ``{name: (shape, dtype, bytes)}``."""
    out = {}
    with h5py.File(path, "r") as h5:
        def visit(name, obj):
            if isinstance(obj, h5py.Dataset):
                v = np.asarray(obj[()])
                out[name] = (v.shape, v.dtype.str, v.tobytes())
        for top in ("steps", "modes"):
            if top in h5:
                h5[top].visititems(lambda n, o, t=top: visit(f"{t}/{n}", o))
    return out


def differences(a: Path, b: Path, skip: str | None = None) -> list[str]:
    """The datasets that differ between two results files (``skip``: a regex of names)."""
    da, db = datasets(a), datasets(b)
    names = sorted(n for n in set(da) | set(db) if not (skip and re.search(skip, n)))
    return [n for n in names if da.get(n) != db.get(n)]


def series(path: Path) -> str:
    """The XDMF series beside ``path``, with the results file's name taken out."""
    return path.with_suffix(".xdmf").read_text().replace(path.name, "OUT.h5")


def shortened(case: str, folder: Path, subs: dict, interval: int, deck="deck.toml") -> Path:
    """The deck of ``case`` in ``folder`` with lines ``key = ...`` replaced by ``subs``."""
    text = (CASES / case / deck).read_text()
    for key, value in subs.items():
        text, n = re.subn(rf"(?m)^{key} = .*$", f"{key} = {value}", text)
        assert n == 1, key
    path = folder / f"{case}.toml"
    path.write_text(text + f"\n[output]\ncheckpoint_interval = {interval}\n")
    return path


LEE = """
[model]
dim = 2
title = "Lee's frame (Crisfield vol. 1, 9.4): 120 x 120, pinned, load 24 from the corner"

[[materials]]
name = "m"
E = 720.0
nu = 0.3

[[sections]]
name = "s"
A = 6.0
Iz = 2.0

[nodes]
ids = [1, 2, 3, 4]
coordinates = [[0.0, 0.0], [0.0, 120.0], [24.0, 120.0], [120.0, 120.0]]

[[elements]]
name = "column"
type = "beam"
formulation = "corotational"
material = "m"
section = "s"
connectivity = [[1, 2]]
divisions = 5

[[elements]]
name = "beam"
type = "beam"
formulation = "corotational"
material = "m"
section = "s"
connectivity = [[2, 3], [3, 4]]
divisions = 2

[[supports]]
nodes = [1, 4]
fixed = ["ux", "uy"]

[[loads]]
name = "P"
nodes = 3
force = [0.0, -1.0]

[[steps]]
name = "path"
type = "static"
nonlinear = true
control = "arclength"
arc_length = 4.0
max_steps = 60
target_iterations = 4

[output]
checkpoint_interval = 7
"""

CANTILEVER = """
[model]
dim = 2

[[materials]]
name = "m"
E = 1.0e4
nu = 0.0
density = 1.0

[[sections]]
name = "s"
A = 1e-2
Iz = 1e-4

[nodes]
coordinates = [[0, 0], [2.0, 0]]

[[elements]]
name = "b"
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
force = [0.0, -0.6]

[[steps]]
name = "bend"
type = "static"
nonlinear = true
control = "load"
increments = 60
max_increment = 0.0166667

[output]
checkpoint_interval = 4
"""

MODAL = """
[[steps]]
name = "modes"
type = "modal"
modes = 4
"""


def lee(folder: Path) -> Path:
    path = folder / "lee.toml"
    path.write_text(LEE)
    return path


def cantilever(folder: Path, modal: bool = False) -> Path:
    path = folder / ("cantilever_modal.toml" if modal else "cantilever.toml")
    text = CANTILEVER.replace("\n[output]", (MODAL if modal else "") + "\n[output]")
    path.write_text(text)
    return path


def meijaard(folder: Path) -> Path:
    return shortened("slider_crank_meijaard", folder, {"duration": 0.0006,
                                                       "output_interval": 2.0e-5}, 3)


def superelement(folder: Path) -> Path:
    for name in ("rod.toml", "deck.toml"):
        shutil.copy(CASES / "slider_crank_superelement" / name, folder / name)
    done = fem("run", "rod.toml", "-o", "rod.h5", cwd=folder)
    assert done.returncode == 0, done.stderr
    return shortened("slider_crank_superelement", folder, {"duration": 0.0006,
                                                           "output_interval": 2.0e-5}, 3)


def alpha(folder: Path) -> Path:
    path = shortened("spin_up_kane", folder, {"duration": 0.5, "time_step": 0.0078125,
                                              "output_interval": 0.015625,
                                              "integrator": '"generalized_alpha"'}, 5)
    return path


def contact(folder: Path) -> Path:
    """Two spheres' plastic impact: the contact history (approach speed, dent, dissipation) and
    the step control at the impact carried across the restart."""
    return shortened("sphere_impact_plastic", folder, {}, 2)


#: (deck maker, step, frames at the SIGTERM, frames at the kill -9)
CASES_STOPPED = {"contact": (contact, "impact", 7, 14),
                 "load_control": (cantilever, "bend", 9, 30),
                 "arclength_lee": (lee, "path", 20, 40),
                 "energy_conserving_meijaard": (meijaard, "run", 6, 16),
                 "superelement": (superelement, "run", 6, 16),
                 "generalized_alpha": (alpha, "spin", 8, 20)}


@pytest.mark.parametrize("case", sorted(CASES_STOPPED))
def test_a_stopped_run_continued_equals_the_run_not_stopped(case, tmp_path):
    make, step, *stops = CASES_STOPPED[case]
    deck = make(tmp_path)
    full = tmp_path / "full.h5"
    done = fem("run", deck, "-o", full, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    total = frames(full, step)
    for sig, at in zip((signal.SIGTERM, signal.SIGKILL), stops, strict=True):
        out = tmp_path / f"stopped_{sig}.h5"
        rc = stopped(deck, out, step, at, sig)
        assert rc == -signal.SIGKILL if sig == signal.SIGKILL else rc == 143, rc
        assert frames(out, step) < total          # it stopped before the end
        again = fem("--debug", "run", deck, "--restart", out, cwd=tmp_path)
        assert again.returncode == 0, again.stderr
        assert differences(full, out) == [], sig
        assert series(out) == series(full)


def test_every_checkpoint_continues_to_the_same_bits(tmp_path):
    """From each checkpoint of Lee's frame's arc-length path (before, at and after its limit
    point), named on the command line."""
    deck = lee(tmp_path)
    full = tmp_path / "full.h5"
    assert fem("run", deck, "-o", full, cwd=tmp_path).returncode == 0
    with h5py.File(full, "r") as h5:
        lam = h5["steps/path/time"][()]
        marks = sorted(int(k) for k in h5["steps/path/checkpoints"])
    assert np.argmax(lam) < marks[-1] and np.isclose(lam.max() * 120**2 / (720 * 2), 18.5,
                                                     rtol=0.01)
    for k in (marks[1], marks[-2]):
        out = tmp_path / "part.h5"
        shutil.copy(full, out)
        done = fem("run", deck, "--restart", f"{out}:path:{k}", cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        assert differences(full, out) == [], k


def test_a_spin_up_continued_to_twice_its_duration_equals_one_run(tmp_path):
    """Kane's spin-up (energy-conserving scheme) to T = 0.25 s, then the deck extended to 2T;
    T is a frame of both (the time step 2^-7 s adds up exactly)."""
    subs = {"duration": 0.5, "time_step": 0.0078125, "output_interval": 0.015625}
    long = shortened("spin_up_kane", tmp_path, subs, 5)
    whole = tmp_path / "whole.h5"
    assert fem("run", long, "-o", whole, cwd=tmp_path).returncode == 0
    short = tmp_path / "short.toml"
    short.write_text(long.read_text().replace("duration = 0.5", "duration = 0.25"))
    out = tmp_path / "continued.h5"
    assert fem("run", short, "-o", out, cwd=tmp_path).returncode == 0
    done = fem("run", long, "--restart", out, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    with h5py.File(out, "r") as h5, h5py.File(whole, "r") as ref:
        T = h5["steps/spin/time"][()]
        k = int(np.flatnonzero(T == 0.25)[0])         # the short run's last frame
        extra = set(h5["steps/spin/checkpoints"]) - set(ref["steps/spin/checkpoints"])
    assert extra == ({str(k)} if (k + 1) % 5 else set())
    assert differences(whole, out, skip=rf"checkpoints/{k}/") == []
    assert series(out) == series(whole)


def test_a_modal_step_appended_runs_alone_from_the_stored_state(tmp_path):
    """The cantilever bent statically, then its modes about the bent state: appended to the
    static deck and run with --restart, they equal a run of the whole deck."""
    whole = tmp_path / "whole.h5"
    assert fem("run", cantilever(tmp_path, modal=True), "-o", whole, cwd=tmp_path).returncode == 0
    out = tmp_path / "out.h5"
    assert fem("run", cantilever(tmp_path), "-o", out, cwd=tmp_path).returncode == 0
    done = fem("run", cantilever(tmp_path, modal=True), "--restart", out, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "step modes (modal)" in done.stdout
    assert differences(whole, out) == []
    with h5py.File(out, "r") as h5:
        assert len(h5["modes/modes/eigenvalues"]) == 4


def test_restart_errors_are_one_line_each(tmp_path, capsys, monkeypatch):
    from fem.cli import main

    deck = cantilever(tmp_path)
    out = tmp_path / "out.h5"
    assert fem("run", deck, "-o", out, cwd=tmp_path).returncode == 0
    monkeypatch.chdir(tmp_path)

    def refused(text, *args, what):
        capsys.readouterr()
        assert main(["run", str(text), "--restart", *map(str, args)]) == 2
        err = capsys.readouterr().err
        assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
        assert what in err, err

    changed = tmp_path / "changed.toml"
    changed.write_text(deck.read_text().replace("E = 1.0e4", "E = 2.0e4"))
    refused(changed, out, what="materials[0].E")
    mesh = tmp_path / "more.toml"
    mesh.write_text(deck.read_text().replace("divisions = 8", "divisions = 9"))
    refused(mesh, out, what="elements[0].divisions")
    steps = tmp_path / "steps.toml"
    steps.write_text(deck.read_text().replace("increments = 60", "increments = 50"))
    refused(steps, out, what="steps[0].increments")
    refused(deck, f"{out}:nothere", what="no checkpoint of a step 'nothere'")
    refused(deck, f"{out}:bend:5", what="no checkpoint after frame 5")
    refused(deck, f"{out}:bend:x", what="FRAME must be a frame number")
    refused(deck, tmp_path / "missing.h5", what="no results file")
    refused(deck, out, "-o", tmp_path / "other.h5", what="continues the results file")
    bare = tmp_path / "bare.h5"
    shutil.copy(out, bare)
    with h5py.File(bare, "r+") as h5:
        del h5["steps/bend/checkpoints"]
    refused(deck, bare, what="has no checkpoint")
    with h5py.File(bare, "r+") as h5:              # a fem before checkpoints: no model_hash
        del h5.attrs["model_hash"]
    refused(deck, bare, what="has no checkpoint")
    with h5py.File(out, "r"):                     # a reader holds it (a shared lock)
        refused(deck, out, what="open in another program")
    text = tmp_path / "text.h5"
    text.write_text("not HDF5")
    refused(deck, text, what="not a results file")
    # the refusals wrote nothing: the file still continues to the same bits
    assert fem("run", deck, "--restart", f"{out}:bend:3", cwd=tmp_path).returncode == 0
    whole = tmp_path / "whole.h5"
    assert fem("run", deck, "-o", whole, cwd=tmp_path).returncode == 0
    assert differences(whole, out) == []
