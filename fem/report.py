"""``fem validate --report DIR``: the validation cases as one HTML page with plots.

``DIR/index.html`` holds the environment (versions of Python, numpy, scipy, PETSc, SLEPc, MPI,
HDF5, the BLAS numpy was built with, the direct solver), the summary table (the rows of
``fem validate``'s table, cell for cell: :func:`fem.validate.cells`) and one section per case:
its title and source (``reference.toml``), its quantities with reference, computed value,
error, tolerance and PASS/FAIL, why a quantity could not be computed, and plots
(``DIR/plots/*.png``) of the computed curves the quantities are read from (time histories, load
paths: :meth:`fem.io.results.Results.curve`) with the reference values marked on them.
"""

from __future__ import annotations

import html
import os
import platform
import re
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from fem import __version__, validate

#: at most this many plots per case (cases with many quantities on one curve share a plot)
MAX_PLOTS = 8


@dataclass
class CaseReport:
    """One case's rows, its reference file's title and source, and its plots."""

    case: str
    rows: list
    title: str = ""
    source: str = ""
    seconds: float = 0.0
    plots: list[str] = field(default_factory=list)


def environment() -> dict[str, str]:
    """Versions of what the cases ran on, the BLAS numpy uses and the direct solver."""
    from fem import linalg
    from fem.info import versions

    out = versions(slepc=False, petsc=True)
    out["platform"] = f"{platform.system()} {platform.release()} {platform.machine()}"
    out["blas"] = blas()
    out["direct LU"] = linalg.best_lu_package()
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
        if name in os.environ:
            out[name] = os.environ[name]
    return out


def blas() -> str:
    """The BLAS and LAPACK libraries loaded in this process (numpy's, scipy's, PETSc's).

    Read from the process's memory map (Linux), so it names what runs, not what was built
    against; numpy's build configuration where there is no map.
    """
    import scipy.linalg  # noqa: F401 - loads scipy's BLAS, to be listed

    try:
        with open("/proc/self/maps", encoding="utf-8") as fh:
            libs = {line.split()[-1] for line in fh if ".so" in line}
    except OSError:
        libs = set()
    names = sorted({os.path.basename(p) for p in libs
                    if any(k in os.path.basename(p).lower() for k in ("blas", "lapack", "mkl"))
                    and "cpython" not in p})
    if names:
        return ", ".join(names)
    try:
        info = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        return f"{info.get('name', '?')} {info.get('version', '')}".strip()
    except (TypeError, KeyError, AttributeError):
        return "unknown"


def _curves(results, quantities: list[dict]) -> list[tuple[tuple, dict, list[dict]]]:
    """The computed curves of a case's quantities, one per (step, curve), with their quantities."""
    found: dict[tuple, tuple[dict, list[dict]]] = {}
    for q in quantities:
        try:
            curve = results.curve(q)
        except (KeyError, IndexError, ValueError, TypeError):
            continue
        if curve is None:
            continue
        x, y, xlabel = curve
        key = (q["step"], xlabel, np.asarray(y).tobytes(), np.asarray(x).tobytes())
        entry = found.setdefault(key, ({"x": np.asarray(x), "y": np.asarray(y),
                                        "xlabel": xlabel, "step": q["step"]}, []))
        entry[1].append(q)
    return [(k, c, qs) for k, (c, qs) in found.items()][:MAX_PLOTS]


def _draw(path: str, curve: dict, quantities: list[dict], title: str) -> None:
    """The computed curve, and each reference value where it belongs on it."""
    from fem.io.plots import _METADATA, _pyplot

    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    try:
        x, y = curve["x"], curve["y"]
        ax.plot(x, y, "-", color="C0", lw=1.4, marker="o" if len(x) <= 40 else None, ms=3,
                label="computed")
        for i, q in enumerate(quantities):
            color = f"C{(i + 1) % 10}"
            label = f"reference: {q['name']}"
            if q.get("statistic") == "amplitude":          # not a level of the curve
                ax.plot([], [], " ", label=f"{label} = {q['value']:.6g} (amplitude)")
            elif q["kind"] == "limit_load_factor" or ("statistic" in q
                                                      and q.get("report") != "time"):
                ax.axhline(q["value"], color=color, ls="--", lw=1.0, label=label)
            elif q.get("report") == "time":
                ax.axvline(q["value"], color=color, ls="--", lw=1.0, label=label)
            else:
                t = q["time"] if "time" in q else x[q.get("frame", -1)]
                ax.plot([t], [q["value"]], "D", mfc="none", mec=color, ms=8, mew=1.5,
                        label=label)
        ax.set_xlabel(curve["xlabel"])
        ax.set_ylabel("load factor" if quantities[0]["kind"] == "limit_load_factor"
                      else quantities[0]["name"])
        ax.set_title(title, fontsize=9)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7, loc="best")
        fig.savefig(path, dpi=100, bbox_inches="tight", metadata=_METADATA)
    finally:
        plt.close(fig)


def run_cases(cases: list[Path], directory: str, keep: str | None = None) -> list[CaseReport]:
    """Run ``cases`` (:func:`fem.validate.check_case`), drawing their curves into ``directory``."""
    plots = Path(directory) / "plots"
    plots.mkdir(parents=True, exist_ok=True)
    out = []
    for case in cases:
        try:
            with open(case / "reference.toml", "rb") as fh:
                ref = tomllib.load(fh)
        except (OSError, tomllib.TOMLDecodeError):
            ref = {}
        report = CaseReport(case.name, [], str(ref.get("title", "")), str(ref.get("source", "")))

        def inspect(results, quantities, report=report):
            for k, (_, curve, qs) in enumerate(_curves(results, quantities)):
                name = f"{report.case}_{k + 1}.png"
                _draw(str(plots / name), curve, qs, f"{report.case}: step {curve['step']}")
                report.plots.append(f"plots/{name}")

        started = time.perf_counter()
        report.rows = validate.check_case(case, keep, inspect=inspect)
        report.seconds = time.perf_counter() - started
        out.append(report)
    return out


def _table(rows, cls: str) -> list[str]:
    lines = [f'<table class="{cls}">', "<thead><tr>" + "".join(
        f"<th>{html.escape(h or 'result')}</th>" for h in validate.HEAD) + "</tr></thead>",
        "<tbody>"]
    for r in rows:
        c = validate.cells(r)
        status = c[-1]
        lines.append(f'<tr class="{status.lower()}">' + "".join(
            f"<td>{html.escape(x)}</td>" for x in c) + "</tr>")
    return lines + ["</tbody>", "</table>"]


STYLE = """body { font-family: sans-serif; max-width: 70em; margin: 2em auto; }
table { border-collapse: collapse; margin: 1em 0; font-size: 0.9em; }
td, th { border: 1px solid #bbb; padding: 0.2em 0.6em; text-align: left; }
tr.pass td:last-child { color: #070; font-weight: bold; }
tr.fail td { background: #fdd; } tr.fail td:last-child { color: #a00; font-weight: bold; }
img { max-width: 48%; margin: 0.3em; border: 1px solid #ddd; }
.source { color: #444; font-size: 0.9em; white-space: pre-wrap; }"""


#: the longest reference (``reference.toml``'s source) a Markdown row shows, in characters
SOURCE_CHARS = 110

MD_HEAD = ("case", "what is checked", "reference", "quantities", "tolerance", "largest error",
           "result")


def md_cell(text: str) -> str:
    """``text`` as one Markdown table cell: one line, its markup characters escaped."""
    return re.sub(r"([\\`*_\[\]<>|#$])", r"\\\1", " ".join(text.split()))


def shorten(text: str, limit: int = SOURCE_CHARS) -> str:
    """``text`` on one line, cut at a word before ``limit`` characters (marked ``…``)."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[:limit - 1].rsplit(" ", 1)[0].rstrip(",;:(")
    return cut + "\u2026"


def case_cells(c: CaseReport) -> tuple[str, ...]:
    """One case's Markdown row (:data:`MD_HEAD`), unescaped, from the cells of its rows.

    The tolerances are the distinct tolerance cells of :func:`fem.validate.cells` in order
    (``abs`` marks absolute ones); the largest error is the error cell of the row with the largest
    relative error and that of the largest absolute error, ``-`` where no error was measured.
    """
    tolerances = dict.fromkeys(validate.cells(r)[5] + (" abs" if r.absolute else "")
                               for r in c.rows if np.isfinite(r.tolerance))
    largest = []
    for absolute in (False, True):
        measured = [r for r in c.rows if r.absolute == absolute and np.isfinite(r.error)]
        if measured:
            largest.append(validate.cells(max(measured, key=lambda r: r.error))[4])
    failed = sum(not r.passed for r in c.rows)
    result = f"FAIL ({failed} of {len(c.rows)})" if failed else "PASS"
    return (c.case, c.title, shorten(c.source), str(len(c.rows)),
            "; ".join(tolerances) or "-", "; ".join(largest) or "-", result)


def markdown(reports: list[CaseReport], env: dict[str, str]) -> str:
    """The docs' validation table (``DIR/validation.md``).

    A summary line, one row per case (:func:`case_cells`, escaped), why quantities could not be
    computed, and the environment ``env`` (:func:`environment`) in one line.
    """
    rows = [r for c in reports for r in c.rows]
    failed = sum(not r.passed for r in rows)
    lines = [f"fem {__version__}, {time.strftime('%Y-%m-%d')}: {len(reports)} cases, "
             f"{len(rows) - failed} of {len(rows)} quantities PASS"
             + (f", {failed} FAIL" if failed else "") + ".", "",
             "| " + " | ".join(MD_HEAD) + " |", "|" + "---|" * len(MD_HEAD)]
    for c in reports:
        cells = case_cells(c)
        lines.append(f"| `{cells[0]}` | " + " | ".join(md_cell(x) for x in cells[1:]) + " |")
    reasons = [(c.case, why) for c in reports
               for why in dict.fromkeys(r.reason for r in c.rows if r.reason)]
    if reasons:
        lines += ["", "Why quantities could not be computed:", ""]
        lines += [f"* `{case}`: {md_cell(why)}" for case, why in reasons]
    lines += ["", "Run on " + md_cell("; ".join(f"{k} {v}" for k, v in env.items())) + ".", ""]
    return "\n".join(lines)


def write(directory: str, reports: list[CaseReport]) -> str:
    """``directory/index.html`` and ``directory/validation.md`` from the cases' reports.

    Both from the same rows and environment (:func:`markdown` writes the second); returns the
    HTML page's path.
    """
    rows = [r for c in reports for r in c.rows]
    failed = sum(not r.passed for r in rows)
    env = environment()
    with open(os.path.join(directory, "validation.md"), "w", encoding="utf-8") as fh:
        fh.write(markdown(reports, env))
    e = html.escape
    lines = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             f"<title>fem {e(__version__)} validation</title>", f"<style>{STYLE}</style>",
             "</head><body>", f"<h1>fem {e(__version__)}: validation report</h1>",
             f"<p>{time.strftime('%Y-%m-%d %H:%M:%S %Z')}: {len(reports)} cases, "
             f'<span id="summary">{len(rows) - failed} of {len(rows)} quantities PASS'
             + (f", {failed} FAIL" if failed else "") + "</span>.</p>",
             "<h2>Environment</h2>", '<table class="environment"><tbody>']
    lines += [f"<tr><th>{e(k)}</th><td>{e(str(v))}</td></tr>" for k, v in env.items()]
    lines += ["</tbody></table>", "<h2>Summary</h2>"] + _table(rows, "validation")
    for c in reports:
        verdict = "PASS" if all(r.passed for r in c.rows) else "FAIL"
        lines += [f'<h2 id="{e(c.case)}">{e(c.case)}: {verdict}</h2>',
                  f"<p><b>{e(c.title)}</b> ({c.seconds:.2f} s)</p>"]
        if c.source:
            lines.append(f'<p class="source">{e(c.source)}</p>')
        lines += _table(c.rows, "case")
        reasons = dict.fromkeys(r.reason for r in c.rows if r.reason)
        lines += [f'<p class="reason">{e(why)}</p>' for why in reasons]
        lines += [f'<img src="{e(p)}" alt="{e(c.case)} curve">' for p in c.plots]
    lines += ["</body></html>", ""]
    path = os.path.join(directory, "index.html")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("\n".join(lines))
    return path
