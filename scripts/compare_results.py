"""Run every case and compare two such runs dataset by dataset, bit for bit.

A refactoring that moves code must not change results. Run the cases before and after it and
compare::

    python scripts/compare_results.py run /tmp/before      # on the old commit
    python scripts/compare_results.py run /tmp/after       # on the new one
    python scripts/compare_results.py compare /tmp/before /tmp/after

``run`` copies each ``cases/<name>/`` folder into ``<out>/<name>/``, runs its ``prepare`` decks
and ``deck.toml`` there with ``fem run`` (one BLAS thread, so that sums are ordered alike) and
keeps the results. ``compare`` reads every HDF5 file of both trees and reports every dataset
whose shape, dtype or bytes differ, every dataset present on one side only, and every attribute
that differs, except those that say when and with what a file was written (``created``,
``version_*``, ``deck_path``). It exits 1 when anything differs.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import h5py
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
VOLATILE = ("created", "deck_path")          # attributes that say when and where, not what


def run(out: Path, names: list[str]) -> int:
    """Run the cases ``names`` (all when empty) into ``out``; the count that failed."""
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    fem = [sys.executable, "-m", "fem.cli"]
    failed = 0
    for case in sorted((ROOT / "cases").glob("*/deck.toml")):
        name = case.parent.name
        if names and name not in names:
            continue
        work = out / name
        shutil.rmtree(work, ignore_errors=True)
        shutil.copytree(case.parent, work)
        ref = work / "reference.toml"
        prepare = tomllib.loads(ref.read_text()).get("prepare", []) if ref.exists() else []
        for deck in [*prepare, "deck.toml"]:
            stem = Path(deck).stem
            proc = subprocess.run([*fem, "run", deck, "-o", f"{stem}.h5"], cwd=work, env=env,
                                  capture_output=True, text=True)
            if proc.returncode != 0:
                print(f"{name}/{deck}: exit {proc.returncode}: {proc.stderr.strip()[-300:]}")
                failed += 1
                break
        else:
            print(f"{name}: ran")
    return failed


def _attrs(obj, root: str = "") -> dict:
    """The attributes that say what; a path under the run folder ``root`` reads ``<run>``.

    (A superelement's ``file``, its ``source``: the same file, run in another folder.)
    """
    def local(v):
        if root and isinstance(v, (str, bytes)):
            text = v.decode() if isinstance(v, bytes) else v
            return text.replace(root, "<run>")
        return v
    return {k: local(v) for k, v in obj.attrs.items()
            if k not in VOLATILE and not k.startswith("version_")}


def _same(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.dtype.kind in "OSU":
        return bool(np.all(a == b))
    return a.tobytes() == b.tobytes()


def compare_files(a: Path, b: Path, roots: tuple[str, str] = ("", "")) -> list[str]:
    """What differs between two results files (empty when they are equal).

    ``roots``: the two run folders, which paths in attributes are taken relative to.
    """
    out = []
    with h5py.File(a, "r") as fa, h5py.File(b, "r") as fb:
        items = {}

        def visit(tag):
            def f(name, obj):
                items.setdefault(name, [None, None])[tag] = obj
            return f

        fa.visititems(visit(0))
        fb.visititems(visit(1))
        for name, (x, y) in sorted(items.items()):
            if x is None or y is None:
                out.append(f"{name}: only in {'after' if x is None else 'before'}")
                continue
            if isinstance(x, h5py.Dataset) != isinstance(y, h5py.Dataset):
                out.append(f"{name}: a dataset on one side only")
                continue
            if isinstance(x, h5py.Dataset) and not _same(x[()], y[()]):
                out.append(f"{name}: values differ")
            ax, ay = _attrs(x, roots[0]), _attrs(y, roots[1])
            for k in sorted(set(ax) | set(ay)):
                if k not in ax or k not in ay or not _same(ax[k], ay[k]):
                    out.append(f"{name}: attribute {k} differs")
        ra, rb = _attrs(fa, roots[0]), _attrs(fb, roots[1])
        for k in sorted(set(ra) | set(rb)):
            if k not in ra or k not in rb or not _same(ra[k], rb[k]):
                out.append(f"/: attribute {k} differs")
    return out


def compare(before: Path, after: Path) -> int:
    """Compare every ``.h5`` under ``before`` with its twin under ``after``; 1 if any differs."""
    bad = 0
    files = sorted(p.relative_to(before) for p in before.rglob("*.h5"))
    others = sorted(p.relative_to(after) for p in after.rglob("*.h5"))
    for rel in sorted(set(others) - set(files)):
        print(f"{rel}: only in {after}")
        bad = 1
    for rel in files:
        if not (after / rel).exists():
            print(f"{rel}: only in {before}")
            bad = 1
            continue
        diffs = compare_files(before / rel, after / rel,
                              (str(before.resolve()), str(after.resolve())))
        for d in diffs:
            print(f"{rel}: {d}")
        bad |= bool(diffs)
    print(f"{len(files)} files compared: " + ("identical" if not bad else "DIFFERENT"))
    return bad


def main(argv=None) -> int:
    """Command line: ``run OUT [CASE ...]`` or ``compare BEFORE AFTER``."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="run the cases into a folder")
    r.add_argument("out", type=Path)
    r.add_argument("cases", nargs="*", help="case names (default: all)")
    c = sub.add_parser("compare", help="compare two folders of results, bit for bit")
    c.add_argument("before", type=Path)
    c.add_argument("after", type=Path)
    args = p.parse_args(argv)
    if args.command == "run":
        args.out.mkdir(parents=True, exist_ok=True)
        return 1 if run(args.out, args.cases) else 0
    return compare(args.before, args.after)


if __name__ == "__main__":
    sys.exit(main())
