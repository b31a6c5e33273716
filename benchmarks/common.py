"""Shared pieces: a straight chain of 3D co-rotational beams in a random deformed state."""

import contextlib
import json
import os
import subprocess
import sys
import time

import numpy as np

from fem import _petsc, linalg
from fem import rotations as so3
from fem.elements import Beam
from fem.model import Model
from fem.state import State


def beam_chain(E: int, seed: int = 0):
    """A model of ``E`` 3D co-rotational beams along x (clamped at x = 0) and a deformed state."""
    _petsc.init()
    n = E + 1
    X = np.zeros((n, 3))
    X[:, 0] = np.linspace(0.0, 10.0, n)
    conn = np.c_[np.arange(E), np.arange(1, n)]
    beam = Beam("chain", conn, X, 3, E=2.1e5, G=8.1e4, A=1.0, Iy=0.1, Iz=0.2, J=0.15,
                formulation="corotational", ref=[0.0, 0.0, 1.0])
    fixed = np.zeros((n, 6), dtype=bool)
    fixed[0] = True
    model = Model(dim=3, X=X, node_ids=np.arange(1, n + 1), groups=(beam,), fixed=fixed)
    rng = np.random.default_rng(seed)
    state = State.reference(3, n)
    state.u[:] = rng.normal(size=(n, 3)) * 1e-3
    state.rot[:] = so3.quat_from_rotvec(rng.normal(size=(n, 3)) * 0.05)
    return model, state


def space_frame(n: int, height: int | None = None):
    """A lattice of ``n x n x height`` nodes (default ``height = n``: a cube) joined along x, y,
    z by 3D co-rotational beams.

    About ``3 n^2 (n - 1)`` elements for a cube (n = 7: 882, 15: 9450, 32: 95232); the bottom
    face is clamped. A realistic large model: well conditioned, unlike one very finely meshed
    member. A tall one (a tower) keeps the factorization's fronts at the size of a level.
    """
    _petsc.init()
    h = n if height is None else height
    g, gz = np.arange(n, dtype=float), np.arange(h, dtype=float)
    X = np.stack(np.meshgrid(g, g, gz, indexing="ij"), axis=-1).reshape(-1, 3)
    idx = np.arange(n * n * h).reshape(n, n, h)
    conn = np.concatenate([np.c_[idx[:-1].ravel(), idx[1:].ravel()],
                           np.c_[idx[:, :-1].ravel(), idx[:, 1:].ravel()],
                           np.c_[idx[:, :, :-1].ravel(), idx[:, :, 1:].ravel()]])
    axis = X[conn[:, 1]] - X[conn[:, 0]]
    ref = np.where(np.abs(axis[:, 2:3]) > 0.5, [[0.0, 1.0, 0.0]], [[0.0, 0.0, 1.0]])
    beam = Beam("lattice", conn, X, 3, E=2.1e5, G=8.1e4, A=1e-2, Iy=1e-5, Iz=2e-5, J=1.5e-5,
                rho=1.0, formulation="corotational", ref=ref)
    fixed = np.zeros((len(X), 6), dtype=bool)
    fixed[X[:, 2] == 0] = True
    top = np.flatnonzero(X[:, 2] == h - 1)
    return Model(dim=3, X=X, node_ids=np.arange(1, len(X) + 1), groups=(beam,),
                 fixed=fixed), top


def slab(n: int, layers: int):
    """A lattice of ``n x n x layers`` nodes of 3D co-rotational beams, clamped on its face x = 0.

    A thick plate of a frame: its factorization behaves like a 2D mesh's (fronts of a row of
    ``n x layers`` nodes), so a million DOFs fit in a few GB, and it is far less slender than a
    tower of the same size (its lowest modes stay well resolved).
    """
    model, _ = space_frame(n, layers)
    fixed = np.zeros_like(model.fixed)
    fixed[model.X[:, 0] == 0] = True
    return model.with_changes(fixed=fixed)


def best_of(fn, repeat: int = 3) -> float:
    """Smallest wall time of ``repeat`` calls, in seconds."""
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


@contextlib.contextmanager
def timed_solves():
    """Time every checked linear solve (``linalg.solve_checked``: what each Newton iteration
    calls) inside the block: yields ``[seconds, count]``, filled as the solves run."""
    orig = linalg.solve_checked
    spent = [0.0, 0]

    def timed(*args, **kwargs):
        t = time.perf_counter()
        out = orig(*args, **kwargs)
        spent[0] += time.perf_counter() - t
        spent[1] += 1
        return out

    linalg.solve_checked = timed
    try:
        yield spent
    finally:
        linalg.solve_checked = orig


def peer_process(module: str, mark: str, key: str, job: str | None = None,
                 timeout: float = 600) -> tuple[object | None, str]:
    """Run ``benchmarks.<module>.opensees_child()`` in a child process, or say why not.

    OpenSeesPy's library must never share a process with PETSc (it crashes on import there), so
    each benchmark's OpenSees side runs apart; the child prints ``mark`` + a JSON line with
    ``key`` (its results) or ``error`` (openseespy does not import). ``job`` goes to its stdin.
    """
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (root, os.environ.get("PYTHONPATH")) if p))
    code = f"from benchmarks.{module} import opensees_child; opensees_child()"
    try:
        proc = subprocess.run([sys.executable, "-c", code], input=job, capture_output=True,
                              text=True, env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, "the OpenSees process timed out"
    lines = [ln[len(mark):] for ln in proc.stdout.splitlines() if ln.startswith(mark)]
    if not lines:
        tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        return None, f"the OpenSees process failed (exit {proc.returncode}: {tail[:100]})"
    answer = json.loads(lines[-1])
    if "error" in answer:
        return None, f"openseespy does not import ({answer['error']})"
    return answer[key], ""

