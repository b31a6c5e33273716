"""Peak memory and time of the CSR pattern's construction, the old one-``np.unique`` way vs now.

Issue 31 (memory per rank): every rank builds the whole serial pattern (``fem.assembly``'s
:func:`~fem.assembly.csr_pattern`). It used to concatenate every element's ``(row, column)`` keys
of every source and call ``np.unique(..., return_inverse=True)`` once (an argsort of ~144 int64
keys per 3D beam: the keys, their concatenation, the sort's permutation, the sorted copy and the
inverse each ~0.5 GB at a million unknowns); it now makes the keys a few million at a time
(:data:`fem.assembly.PATTERN_CHUNK`), gathers each chunk's unique keys, sorts them into the
pattern, and looks each chunk's keys up in it. :func:`reference_pattern` is the old construction,
kept as the reference the new one must equal bit for bit (``tests/test_assembly_pattern.py``).

The model is the frame plate of :func:`benchmarks.common.slab` (3 node layers, as
``benchmarks.mpi_large``). Each measurement is ``System(model)`` (DOF map, sources, pattern,
slots) in a fresh process: its time and its peak resident set above the model's (``VmHWM`` after
``/proc/self/clear_refs``), old and new interleaved, best of ``--repeat``. Then the construction
alone in one process on small models (what the test suite builds thousands of), old and new
interleaved, best of many::

    python -m benchmarks.pattern_memory                 # 2e4 and 2e5 unknowns (~1 min)
    python -m benchmarks.pattern_memory --size 1e6 --repeat 1   # ~12 GB for the old one
"""

import argparse
import json
import os
import subprocess
import sys
import time
import timeit

import numpy as np

LAYERS = 3
MARK = "PATTERN_MEMORY "


def reference_pattern(sources: list, n_free: int) -> tuple:
    """The pattern and slots as ``fem.assembly`` built them before issue 31's change: one
    ``np.unique(..., return_inverse=True)`` of every source's keys (the reference)."""
    keys, keeps = [], []
    for ed in sources:
        r = np.broadcast_to(ed[:, :, None], ed.shape + ed.shape[1:]).reshape(-1)
        c = np.broadcast_to(ed[:, None, :], ed.shape + ed.shape[1:]).reshape(-1)
        keep = (r >= 0) & (r < n_free) & (c >= 0) & (c < n_free)
        keys.append(r[keep] * n_free + c[keep])
        keeps.append(keep)
    diag = np.arange(n_free, dtype=np.int64) * (n_free + 1)
    unique, inverse = np.unique(np.concatenate(keys + [diag]), return_inverse=True)
    rows = unique // max(n_free, 1)
    indptr = np.searchsorted(rows, np.arange(n_free + 1)).astype(np.int64)
    indices = (unique % max(n_free, 1)).astype(np.int64)
    bounds = np.cumsum([0] + [len(k) for k in keys])
    nnz = len(unique)
    index = np.int32 if nnz < np.iinfo(np.int32).max else np.int64
    slots = []
    for i, keep in enumerate(keeps):
        slot = np.full(keep.shape, nnz, dtype=index)
        slot[keep] = inverse[bounds[i]:bounds[i + 1]]
        slots.append(slot)
    return indptr, indices, slots


def _status(key: str) -> float:
    """A ``/proc/self/status`` figure in MB."""
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(key + ":"):
                return int(line.split()[1]) / 1024
    return 0.0


def child(method: str, edge: int) -> None:
    """Build ``System`` of the plate of edge ``edge`` by ``method`` and print its figures."""
    import gc

    from benchmarks.common import slab
    from fem import assembly
    from fem.system import System

    if method == "old":
        assembly.csr_pattern = reference_pattern
    model = slab(edge, LAYERS)
    gc.collect()
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")
    before = _status("VmRSS")
    t = time.perf_counter()
    sysm = System(model)
    seconds = time.perf_counter() - t
    peak = _status("VmHWM") - before
    asm = sysm.assembler
    entries = sum(len(sc.slot) for sc in (*asm.groups, *asm.constraints, asm.nodes))
    held = (asm.indptr.nbytes + asm.indices.nbytes
            + sum(sc.slot.nbytes for sc in (*asm.groups, *asm.constraints, asm.nodes)))
    print(MARK + json.dumps({"method": method, "n": int(sysm.n_free), "nnz": int(asm.nnz),
                             "entries": int(entries), "seconds": seconds, "peak_mb": peak,
                             "held_mb": held / 2 ** 20}), flush=True)


def measure(method: str, edge: int) -> dict:
    """One :func:`child` run in a fresh process."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (root, os.environ.get("PYTHONPATH")) if p))
    code = f"from benchmarks.pattern_memory import child; child({method!r}, {edge})"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         check=True).stdout
    return json.loads(next(line for line in out.splitlines()
                           if line.startswith(MARK))[len(MARK):])


def small_models(repeat: int = 200) -> None:
    """Old vs new construction alone on small plates, interleaved in one process."""
    from benchmarks.common import slab
    from fem.assembly import csr_pattern, pattern_sources
    from fem.dofs import DofMap

    print("construction alone, small plates (best of %d, interleaved):" % repeat)
    for edge, layers in ((2, 1), (4, 2), (10, 3), (24, 3)):
        model = slab(edge, layers)
        dm = DofMap.build(model)
        sources = pattern_sources(model, dm)
        best = {"old": np.inf, "new": np.inf}
        for _ in range(5):
            for name, fn in (("old", reference_pattern), ("new", csr_pattern)):
                t = timeit.timeit(lambda fn=fn: fn(sources, dm.n_free), number=repeat // 5)
                best[name] = min(best[name], t / (repeat // 5))
        print(f"  {dm.n_free:6d} unknowns: old {best['old'] * 1e6:8.1f} us, new "
              f"{best['new'] * 1e6:8.1f} us, new/old {best['new'] / best['old']:.2f}")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=float, nargs="*", default=[2e4, 2e5],
                        help="unknowns of the plates (default 2e4 2e5)")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each (best of)")
    parser.add_argument("--no-small", action="store_true", help="skip the small models")
    args = parser.parse_args(argv)
    from benchmarks.mpi_large import plate_edge

    print("load:", os.getloadavg())
    if not args.no_small:
        small_models()
    print("System(model) of the frame plate, fresh process each, best of %d:" % args.repeat)
    for size in args.size:
        edge = plate_edge(size)
        best = {}
        for _ in range(args.repeat):
            for method in ("old", "new"):
                run = measure(method, edge)
                prev = best.get(method)
                best[method] = run if prev is None else {
                    **run, "seconds": min(run["seconds"], prev["seconds"]),
                    "peak_mb": min(run["peak_mb"], prev["peak_mb"])}
        old, new = best["old"], best["new"]
        print(f"  {old['n']:9,d} unknowns, {old['entries']:,d} entries, nnz {old['nnz']:,d}: "
              f"time old {old['seconds']:.2f} s, new {new['seconds']:.2f} s "
              f"(new/old {new['seconds'] / old['seconds']:.2f}); peak above the model old "
              f"{old['peak_mb']:,.0f} MB, new {new['peak_mb']:,.0f} MB "
              f"({new['peak_mb'] * 2 ** 20 / new['n']:,.0f} B per unknown, old "
              f"{old['peak_mb'] * 2 ** 20 / old['n']:,.0f}); pattern and slots held "
              f"{new['held_mb']:,.0f} MB")
    print("load:", os.getloadavg())


if __name__ == "__main__":
    main()
