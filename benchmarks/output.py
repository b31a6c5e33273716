"""The cost of writing a frame: results file, ParaView's views and the XDMF, per output frame.

Three small dynamic runs write a frame at every time step, so the writer's share of their time is
as large as it gets:

``chain 2D``
    :func:`benchmarks.multibody.chain_deck`: 20 rigid bars on revolute joints (a mechanism: its
    bodies and joints are drawn too), 300 steps.
``beam 3D``
    A 3D cantilever of 24 co-rotational beams released from a static tip load, 300 steps.
``plate``
    A shell plate of 6 x 6 quadrilaterals (72 triangles) released from a static pressure-like
    load, 100 steps.

For each, the table gives the run's frames per second, the writer's milliseconds per frame (the
time inside :meth:`fem.io.step_writer.StepWriter.frame`, with the commits it makes, and the step's
closing commit, divided by the frames), its share of the run, and the results file's size per
frame (bytes, the whole file over the frames). The writer's time includes the HDF5 writes, the
per-frame views ParaView and meshio read and the XDMF rewrites.
"""

import os
import tempfile
import time

from benchmarks.multibody import chain_deck
from fem import _petsc
from fem.io import step_writer
from fem.io.deck import from_dict
from fem.run import run

STEPS = 300


def beam_deck(n: int = 24, steps: int = STEPS) -> dict:
    """A 3D cantilever of ``n`` co-rotational beams: loaded statically, then released."""
    h = 1e-3
    return {"model": {"dim": 3},
            "nodes": {"coordinates": [[i / n, 0.0, 0.0] for i in range(n + 1)]},
            "materials": [{"name": "steel", "E": 2.1e11, "nu": 0.3, "density": 7850.0}],
            "sections": [{"name": "tube", "A": 1e-4, "Iy": 1e-8,
                          "Iz": 1e-8, "J": 2e-8}],
            "elements": [{"name": "beam", "type": "beam", "material": "steel",
                          "section": "tube", "formulation": "corotational",
                          "connectivity": [[i + 1, i + 2] for i in range(n)],
                          "orientation": [0.0, 0.0, 1.0]}],
            "supports": [{"nodes": [1], "fixed": ["all"]}],
            "loads": [{"name": "P", "nodes": [n + 1], "force": [0.0, 0.0, -5.0]}],
            "steps": [{"name": "load", "type": "static"},
                      {"name": "swing", "type": "dynamic", "remove": ["P"], "time_step": h,
                       "duration": h * steps}]}


def plate_deck(n: int = 6, steps: int = STEPS // 3) -> dict:
    """A square shell plate of ``n x n`` quadrilaterals, clamped on one side, loaded at its
    free corners, released."""
    coords = [[i / n, j / n, 0.0] for j in range(n + 1) for i in range(n + 1)]
    quads = [[j * (n + 1) + i + 1, j * (n + 1) + i + 2, (j + 1) * (n + 1) + i + 2,
              (j + 1) * (n + 1) + i + 1] for j in range(n) for i in range(n)]
    h = 1e-4
    return {"model": {"dim": 3},
            "nodes": {"coordinates": coords},
            "materials": [{"name": "steel", "E": 2.1e11, "nu": 0.3, "density": 7850.0}],
            "elements": [{"name": "plate", "type": "shell", "material": "steel",
                          "thickness": 0.01, "connectivity": quads}],
            "supports": [{"nodes": [j * (n + 1) + 1 for j in range(n + 1)], "fixed": ["all"]}],
            "loads": [{"name": "P", "nodes": [n + 1, (n + 1) ** 2],
                       "force": [0.0, 0.0, -100.0]}],
            "steps": [{"name": "load", "type": "static"},
                      {"name": "swing", "type": "dynamic", "remove": ["P"], "time_step": h,
                       "duration": h * steps,
                       "integrator": "generalized_alpha"}]}


def measure(deck: dict) -> dict:
    """Run ``deck`` writing a frame per time step; frames, times and file size."""
    spent = [0.0]
    frame, close = step_writer.StepWriter.frame, step_writer.StepWriter.close

    def timed(fn):
        def wrapper(*args, **kw):
            t = time.perf_counter()
            try:
                return fn(*args, **kw)
            finally:
                spent[0] += time.perf_counter() - t
        return wrapper

    step_writer.StepWriter.frame, step_writer.StepWriter.close = timed(frame), timed(close)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "out.h5")
            t = time.perf_counter()
            result = run(from_dict(deck), out)
            total = time.perf_counter() - t
            import h5py

            with h5py.File(out, "r") as h5:
                frames = sum(s["time"].shape[0] for s in h5["steps"].values())
            size = os.path.getsize(out) + sum(os.path.getsize(x) for x in result.xdmf)
    finally:
        step_writer.StepWriter.frame, step_writer.StepWriter.close = frame, close
    return {"frames": frames, "total": total, "writer": spent[0], "size": size}


def main() -> None:
    """Print the table."""
    _petsc.init()
    chain = chain_deck(20)
    chain["steps"][0].update(duration=1e-3 * STEPS)
    del chain["steps"][0]["output_interval"]
    cases = {"chain 2D": chain, "beam 3D": beam_deck(), "plate": plate_deck()}
    print("output: frames written at every time step (benchmarks/output.py)")
    print(f"{'model':10s} {'frames':>6s} {'frames/s':>9s} {'writer ms/frame':>16s} "
          f"{'share':>6s} {'bytes/frame':>12s}")
    for name, deck in cases.items():
        m = measure(deck)
        print(f"{name:10s} {m['frames']:6d} {m['frames'] / m['total']:9.1f} "
              f"{1e3 * m['writer'] / m['frames']:16.2f} {m['writer'] / m['total']:6.1%} "
              f"{m['size'] / m['frames']:12.0f}")


if __name__ == "__main__":
    main()
