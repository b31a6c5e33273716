"""The summary table of a study (``summary.csv``, ``summary.h5``) and its sensitivities.

One row per variant, in variant order: ``variant``, the parameters' values (one column per key
path), ``status`` (done, failed, or missing: not run, or stopped by an interrupt), ``exit_code``
(as ``fem run`` gives it; -1 when missing), ``wall_time`` (s), the named outputs (NaN where a
variant has none), and ``message`` (why a variant failed). ``summary.h5`` holds the same columns
as datasets: ``variant`` (n,), ``values`` (n, P) with attribute ``keys``, ``status``,
``exit_code``, ``wall_time``, ``message`` and ``outputs/<name>`` (n,).

A ``sensitivity`` study adds the central differences ``d out / d p = (out(p (1 + h)) - out(p (1 -
h))) / (2 h p)``: ``sensitivity.csv`` (a row per output, a column per parameter) and
``sensitivity/<output>`` (P,) in ``summary.h5`` with attributes ``keys``, ``relative_step``,
``nominal`` (the outputs at the nominal values); also the normalized ``(p / out) d out / d p``,
and for modal frequencies the exact derivatives beside them, ``sensitivity/<output>_exact``
(:mod:`fem.study.exact`; where not offered, the attribute ``exact`` of ``sensitivity/<output>``
says why).
"""

from __future__ import annotations

import csv
import math
import os

import numpy as np

from fem.study.runner import read_record, variant_path
from fem.study.spec import Study

FIXED = ("variant", "status", "exit_code", "wall_time")


def collect(study: Study, out_dir: str) -> list[dict]:
    """Every variant's record from ``out_dir`` (a ``missing`` one where there is none)."""
    rows = []
    for i in range(len(study.variants)):
        rec = read_record(variant_path(out_dir, i))
        if rec is None or rec.get("exit_code") in (130, 143):
            rec = {"index": i, "status": "missing", "exit_code": -1, "wall_time": float("nan"),
                   "message": rec.get("message", "") if rec else "", "outputs": {}}
        rows.append(rec)
    return rows


def _cell(v) -> str:
    if isinstance(v, float):
        return repr(v)
    return str(v)


def write(study: Study, out_dir: str) -> list[dict]:
    """Write ``summary.csv`` and ``summary.h5`` (and the sensitivities) from the records."""
    import h5py

    rows = collect(study, out_dir)
    names = [o.name for o in study.outputs]
    header = ["variant", *study.keys, "status", "exit_code", "wall_time", *names, "message"]
    tmp = os.path.join(out_dir, f"summary.csv.tmp{os.getpid()}")
    with open(tmp, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(header)
        for i, r in enumerate(rows):
            w.writerow([i, *map(_cell, study.variants[i]), r["status"], r["exit_code"],
                        _cell(float(r["wall_time"])),
                        *(_cell(float(r["outputs"].get(n, math.nan))) for n in names),
                        r.get("message", "")])
    os.replace(tmp, os.path.join(out_dir, "summary.csv"))
    tmp = os.path.join(out_dir, f"summary.h5.tmp{os.getpid()}")
    str_t = h5py.string_dtype()
    with h5py.File(tmp, "w") as f:
        f["variant"] = np.arange(len(rows))
        try:
            values = np.array(study.variants, dtype=float).reshape(len(rows), -1)
        except (TypeError, ValueError):             # a parameter of strings
            values = np.array([[str(v) for v in row] for row in study.variants], dtype=str_t)
        f["values"] = values
        f["values"].attrs["keys"] = study.keys
        f["status"] = np.array([r["status"] for r in rows], dtype=str_t)
        f["exit_code"] = np.array([r["exit_code"] for r in rows], dtype=np.int64)
        f["wall_time"] = np.array([r["wall_time"] for r in rows], dtype=float)
        f["message"] = np.array([r.get("message", "") for r in rows], dtype=str_t)
        g = f.create_group("outputs")
        for n in names:
            g[n] = table(rows, n)
        f.attrs["kind"] = study.kind
        f.attrs["base_deck"] = os.path.abspath(study.path) if study.path else ""
        if study.kind == "sensitivity":
            _sensitivity(study, rows, f, out_dir)
    os.replace(tmp, os.path.join(out_dir, "summary.h5"))
    return rows


def table(rows: list[dict], name: str) -> np.ndarray:
    """Output ``name`` of every row (NaN where missing)."""
    return np.array([float(r["outputs"].get(name, math.nan)) for r in rows])


def differences(study: Study, rows: list[dict]) -> dict[str, np.ndarray]:
    """``{output: (P,) d out / d p}`` by central differences (NaN where a variant failed)."""
    h = study.relative_step
    p0 = np.array(study.variants[0], dtype=float)
    out = {}
    for o in study.outputs:
        y = table(rows, o.name)
        plus, minus = y[1::2], y[2::2]
        out[o.name] = (plus - minus) / (2 * h * p0)
    return out


def _sensitivity(study: Study, rows: list[dict], f, out_dir: str) -> None:
    from fem.study.exact import exact

    d = differences(study, rows)
    found, why = exact(study)
    p0 = np.array(study.variants[0], dtype=float)
    g = f.create_group("sensitivity")
    g.attrs["keys"] = study.keys
    g.attrs["relative_step"] = study.relative_step
    g.attrs["method"] = "central differences, truncation error O(h^2)"
    nan = [math.nan] * len(study.keys)
    with open(os.path.join(out_dir, "sensitivity.csv"), "w", newline="",
              encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["output", "nominal", *(f"d/d {k}" for k in study.keys),
                    *(f"normalized {k}" for k in study.keys),
                    *(f"exact d/d {k}" for k in study.keys), "exact: why not"])
        for o in study.outputs:
            y0 = float(rows[0]["outputs"].get(o.name, math.nan))
            g[o.name] = d[o.name]
            g[o.name].attrs["nominal"] = y0
            g[f"{o.name}_normalized"] = d[o.name] * p0 / y0
            if o.name in found:
                g[f"{o.name}_exact"] = found[o.name]
                g[f"{o.name}_exact"].attrs["method"] = "Hutton & Smith eq. (8) (fem.study.exact)"
            elif o.name in why:
                g[o.name].attrs["exact"] = why[o.name]
            w.writerow([o.name, _cell(y0), *map(_cell, d[o.name].tolist()),
                        *map(_cell, (d[o.name] * p0 / y0).tolist()),
                        *map(_cell, found.get(o.name, nan)), why.get(o.name, "")])
