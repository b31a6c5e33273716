"""Build and run decks given as Python dicts (the same schema as the TOML decks)."""

import copy
import fcntl
import os
import shutil
import signal
import subprocess
import tempfile
import tomllib

import numpy as np
import pytest

from fem.errors import DeckError
from fem.io.deck import from_dict
from fem.io.hdf5 import ResultsFile
from fem.run import make_step
from fem.system import System


def solve(deck: dict, h5: str | None = None, *, base_dir: str | None = None, hook=None):
    """Run every step of a deck dict; returns (deck, system, state, steps).

    ``base_dir``: the folder the deck's file names are relative to; ``hook(deck)``: makes the
    ``on_step`` callback of every dynamic step.
    """
    dk = from_dict(deck) if base_dir is None else from_dict(deck, base_dir=base_dir)
    sysm = System(dk.model)
    state = sysm.reference_state()
    steps = []
    results = ResultsFile(str(h5), dk.model) if h5 else None
    try:
        for spec in dk.steps:
            step = make_step(spec, sysm, dk, dk.output["every"])
            if hook is not None and spec["type"] == "dynamic":
                step.on_step = hook(dk)
            step.run(state, results)
            steps.append(step)
    finally:
        if results:
            results.close()
    return dk, sysm, state, steps


def case_deck_path(name: str) -> str:
    """The deck of validation case ``name``."""
    from pathlib import Path

    return str(Path(__file__).resolve().parents[1] / "cases" / name / "deck.toml")


def case_deck(name: str) -> dict:
    """The deck of validation case ``name`` as a dict."""
    with open(case_deck_path(name), "rb") as fh:
        return tomllib.load(fh)


def lift_to_3d(planar: dict) -> dict:
    """A planar rigid-body deck in 3D: the same bodies in the x-y plane, joint axes along z.

    A body's inertia ``J`` (about z) becomes ``[J/2, J/2, J]`` (a thin bar or plate in the plane);
    points, gravity and velocity fields gain a zero z component.
    """
    d = copy.deepcopy(planar)
    d["model"]["dim"] = 3
    d["nodes"]["coordinates"] = [c + [0.0] for c in d["nodes"]["coordinates"]]
    for b in d.get("bodies", []):
        b["inertia"] = [b["inertia"] / 2, b["inertia"] / 2, b["inertia"]]
    for j in d.get("joints", []):
        if "points" in j:
            j["points"] = [p + [0.0] for p in j["points"]]
        j["axis"] = [0.0, 0.0, 1.0]
    if "gravity" in d:
        d["gravity"]["acceleration"] = d["gravity"]["acceleration"] + [0.0]
    for v in d.get("velocities", []):
        v["angular_velocity"] = [0.0, 0.0, v["angular_velocity"]]
        if "center" in v:
            v["center"] = v["center"] + [0.0]
        if "velocity" in v:
            v["velocity"] = v["velocity"] + [0.0]
    return d


def with_changes(table: dict, change: dict) -> dict:
    """``table`` updated by ``change``, where a value None deletes the key."""
    for k, v in change.items():
        if v is None:
            table.pop(k, None)
        else:
            table[k] = v
    return table


def deck_error(deck: dict) -> DeckError:
    """The DeckError that building ``deck`` raises (the test fails if it raises none)."""
    with pytest.raises(DeckError) as err:
        from_dict(deck)
    return err.value


def node(dk, node_id: int) -> int:
    """Index of a node id."""
    return int(np.flatnonzero(dk.model.node_ids == node_id)[0])


def line_beam(dim, n, *, length=1.0, E=1.0, G=0.5, A=1e4, Iy=1.0, Iz=1.0, J=1.0, axis=None,
              orientation=None, formulation="corotational", **element):
    """Deck parts of a straight beam from node 1 (origin) to node 2, ``n`` elements."""
    axis = np.array(axis if axis is not None else [1.0, 0, 0][:dim], dtype=float)
    axis = axis / np.linalg.norm(axis) * length
    sec = {"name": "s", "A": A, "Iz": Iz} if dim == 2 else {"name": "s", "A": A, "Iy": Iy,
                                                              "Iz": Iz, "J": J}
    el = {"name": "beam", "type": "beam", "material": "m", "section": "s",
          "formulation": formulation, "connectivity": [[1, 2]], "divisions": n, **element}
    if orientation is not None:
        el["orientation"] = list(orientation)
    return {"model": {"dim": dim},
            "materials": [{"name": "m", "E": E, "G": G}],
            "sections": [sec],
            "nodes": {"coordinates": [[0.0] * dim, axis.tolist()]},
            "elements": [el]}


def square_plate_mesh(n: int, a: float = 1.0):
    """An ``a x a`` square in the x-y plane, ``n x n`` squares of two triangles each.

    Returns ``(coords (N, 3), triangles (2 n^2, 3) of node ids, node ids)``; node ids are
    ``1..N`` row by row from the origin.
    """
    x = np.linspace(0, a, n + 1)
    XX, YY = np.meshgrid(x, x)
    coords = np.column_stack([XX.ravel(), YY.ravel(), np.zeros(XX.size)])
    k = (np.arange(n)[None, :] + (n + 1) * np.arange(n)[:, None]).ravel()
    tri = np.concatenate([np.column_stack([k, k + 1, k + n + 2]),
                          np.column_stack([k, k + n + 2, k + n + 1])]) + 1
    return coords, tri, np.arange(1, len(coords) + 1)


def run_pvpython(args: list, **kwargs) -> subprocess.CompletedProcess:
    """``pvpython *args`` under ``xvfb-run -a`` where it exists, one at a time.

    Two test workers starting ``xvfb-run -a`` at once may pick the same display number (it looks
    for a free one, then starts the server): one ParaView then aborts in
    ``vtkXOpenGLRenderWindow::CreateAWindow``. An exclusive lock on a file in the temporary
    folder keeps ParaView runs of every worker apart. ``kwargs`` go to :func:`subprocess.run`.
    """
    command = ["pvpython", *map(str, args)]
    if shutil.which("xvfb-run"):
        command = ["xvfb-run", "-a", *command]
    with open(os.path.join(tempfile.gettempdir(), "fem-tests-paraview.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = subprocess.run(command, **kwargs)
        if done.returncode in (134, -signal.SIGABRT):
            done = subprocess.run(command, **kwargs)
        return done
