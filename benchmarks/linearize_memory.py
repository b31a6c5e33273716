"""Peak memory of a linearize step (two-sided Krylov-Schur, 20 pairs) at 1e4 to 1e5 unknowns.

Issue 27 (point 7): the two-sided Lanczos preallocated two dense complex bases of ``N x (N + 1)``
(``N = 2 n``, the state space): 6.2 GiB for 20 pairs of a 7200-DOF model, 0.64 TB at 1e5 DOFs.
Its goal: 20 pairs of a 1e5-DOF spinning beam within 2 GiB, memory growing at most linearly.

The model is a rotor of Kane's beams (cases/spinning_beam_linearized: L = 10 m, EI = 1.4e4,
rho A = 1.2, no rotary inertia) spinning at 2 rad/s about z, each blade of 834 co-rotational
beams (a single beam of 1e5 DOFs, 16 667 elements, is numerically singular: its bending
stiffness has a condition number of ``n^4 ~ 1e16``), blades 2 % longer one after the other (no
multiple eigenvalues across blades), 2 to 20 blades: 1e4 to 1e5 unknowns. Each run is ``fem
run`` in a process of its own, started by a small wrapper process that reports the peak RSS of
its child (``resource.getrusage(RUSAGE_CHILDREN).ru_maxrss``). Beside each linearize run the same
model runs a linear static step (assembly and one factorization of ``K``: what any step costs),
and the difference is the linearize step's own (the equilibrium under spin, ``M``, ``D``, ``K``
and the eigen-solve), per unknown: constant when the growth is linear. Also printed: wall time,
the largest ``|Re p| / |p|`` (a conservative model: round-off) and backward error read back from
the results, and what the old preallocation would have been.
"""

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import h5py
import numpy as np

from benchmarks.startup import fem_command

BLADES = (2, 6, 20)           # x 834 beams x 6 DOFs: 1.0e4, 3.0e4, 1.0e5 unknowns
DIVISIONS = 834
MODES = 20
SPIN = 2.0
GOAL = 2 * 1024 ** 3          # bytes, issue 27

#: Runs the command it is given as a child and prints the child's peak RSS (kB) and exit code.
WRAPPER = """
import json, resource, subprocess, sys
code = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE).returncode
print(json.dumps([resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, code]))
"""


def rotor_deck(blades: int, step: str) -> str:
    """A rotor of ``blades`` Kane beams in the x-y plane, clamped at radius 0.5 (module doc)."""
    coords, conn = [], []
    for i in range(blades):
        a = 2 * np.pi * i / blades
        e = np.array([np.cos(a), np.sin(a), 0.0])
        coords += [0.5 * e, (0.5 + 10.0 * (1 + 0.02 * i)) * e]
        conn.append(f"[{2 * i + 1}, {2 * i + 2}]")
    roots = ", ".join(str(2 * i + 1) for i in range(blades))
    nodes = ", ".join("[%.15g, %.15g, %.15g]" % tuple(c) for c in coords)
    if step == "linearize":
        steps = (f'type = "linearize"\nspin = [0.0, 0.0, {SPIN}]\nmodes = {MODES}\n'
                 'method = "lanczos"')
    else:
        steps = 'type = "static"'
    return f"""[model]
dim = 3
title = "rotor of {blades} Kane beams"

[[materials]]
name = "m"
E = 1.4e4
G = 7.0e3

[[sections]]
name = "s"
A = 2.0e3
Iy = 1.0
Iz = 1.0
J = 1.0
mass_per_length = 1.2

[nodes]
coordinates = [{nodes}]

[[elements]]
name = "blades"
type = "beam"
formulation = "corotational"
material = "m"
section = "s"
connectivity = [{", ".join(conn)}]
divisions = {DIVISIONS}
rotary_inertia = false

[[supports]]
nodes = [{roots}]
fixed = ["all"]

[[steps]]
name = "{step}"
{steps}
"""


def peak_run(deck: Path, out: Path) -> tuple[float, float]:
    """Peak RSS (bytes) and wall time (s) of ``fem run deck`` in a process of its own."""
    t = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", WRAPPER, *fem_command(), "run", str(deck),
                           "-o", str(out)], capture_output=True, text=True, check=True)
    wall = time.perf_counter() - t
    rss, code = json.loads(proc.stdout.strip().splitlines()[-1])
    if code != 0:
        raise RuntimeError(f"fem run {deck.name} failed with exit {code}")
    return rss * 1024.0, wall


def main(argv=()):
    print(f"peak RSS of a linearize step, {MODES} pairs nearest 0 of a rotor of Kane's beams "
          f"spinning at {SPIN} rad/s ({DIVISIONS} beams a blade); static: the same model, a "
          "linear static step")
    print(f"{'blades':>6} {'DOFs':>7} {'linearize':>10} {'static':>8} {'step':>8} "
          f"{'step/DOF':>8} {'time s':>7} {'max|Re p|/|p|':>13} {'max eta':>8} "
          f"{'old bases':>9} {'< 2 GiB':>7}")
    with tempfile.TemporaryDirectory() as tmp:
        for blades in BLADES:
            paths = {}
            for step in ("static", "linearize"):
                paths[step] = Path(tmp) / f"{step}{blades}.toml"
                paths[step].write_text(rotor_deck(blades, step))
            base, _ = peak_run(paths["static"], Path(tmp) / f"s{blades}.h5")
            h5 = Path(tmp) / f"l{blades}.h5"
            peak, wall = peak_run(paths["linearize"], h5)
            with h5py.File(h5, "r") as f:
                p = f["linear/linearize/eigenvalues"][()]
                eta = f["linear/linearize/backward_errors"][()]
                dofs = len(f["linear/linearize/unknowns"])
            old = 2 * (2 * dofs) * (2 * dofs + 1) * 16.0
            step = peak - base
            print(f"{blades:>6} {dofs:>7} {peak / 2**20:>8.0f}MB {base / 2**20:>6.0f}MB "
                  f"{step / 2**20:>6.0f}MB {step / dofs / 1024:>6.1f}kB {wall:>7.1f} "
                  f"{np.max(np.abs(p.real) / np.abs(p)):>13.1e} {eta.max():>8.1e} "
                  f"{old / 2**30:>7.0f}GB {'yes' if peak < GOAL else 'NO':>7}")


if __name__ == "__main__":
    main(sys.argv[1:])
