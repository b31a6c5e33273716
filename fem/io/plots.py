"""Plots: the Campbell diagram and the stability plot of a sweep, and ``fem plot``'s curves.

matplotlib with its file-only backend (Agg: no screen needed), imported when a sweep writes.
Both take their data in the units to draw (the step converts); each says what it shows: the
frame of the frequencies, the whirl of each line (solid forward, dashed backward, dotted none),
the engine orders and their crossings, the stability boundary, and which real parts are zero
within round-off.
"""

from __future__ import annotations

import os
import warnings

import numpy as np
from numpy.typing import NDArray

from fem import __version__
from fem.io.files import PNG_SOFTWARE

#: without error bounds (the sweeps give them: fem.solvers.eigen.bounds), real parts within this
#: times the largest |p| of their value are drawn as zero: far above the eigen-solvers'
#: round-off (1e-14 relative here) and far below a growth worth drawing
ROUNDOFF = 1e-9
STYLES = {1: ("-", "forward whirl"), -1: ("--", "backward whirl"), 0: (":", "no whirl")}
WHIRL_NAMES = {1: "forward", -1: "backward", 0: "no whirl"}
#: PNG text: marks the plot as fem's, so a later run may replace it (fem.io.files.written_by_fem)
_METADATA = {"Software": f"{PNG_SOFTWARE} {__version__}"}
#: the same mark in the formats ``fem plot`` writes besides PNG
_CREATOR = {".png": _METADATA, ".svg": {"Creator": f"{PNG_SOFTWARE} {__version__}"},
            ".pdf": {"Creator": f"{PNG_SOFTWARE} {__version__}"}}


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    with warnings.catch_warnings():
        # a system matplotlib beside the venv's (Debian's ParaView brings one) makes pyplot warn
        # that it cannot import Axes3D; these plots are 2D
        warnings.filterwarnings("ignore", message="Unable to import Axes3D")
        import matplotlib.pyplot as plt

    return plt


def _runs(keep: NDArray, style: NDArray):
    """``(start, stop, style)`` of the runs of segments ``i -> i + 1`` with one style."""
    start = None
    for i in range(len(keep)):
        if not keep[i]:
            if start is not None:
                yield start, i, style[start]
                start = None
            continue
        if start is None:
            start = i
        elif style[i] != style[start]:
            yield start, i, style[start]
            start = i
    if start is not None:
        yield start, len(keep), style[start]


def campbell(path: str, parameter: NDArray, frequencies: NDArray, *, label: str,
             ylabel: str = "frequency", whirl: NDArray | None = None, orders=(),
             critical=(), unit: str = "", frame: str = "", boundary: float | None = None,
             title: str = "") -> None:
    """Frequencies ``(k, m)`` (tracked lines as columns, NaN where missing) against ``parameter``.

    ``whirl (k, m)``: +1 forward (solid), -1 backward (dashed), 0 none (dotted); the segment
    from value ``i`` to ``i + 1`` takes the whirl at ``i + 1`` (at ``i`` where that is 0: the
    whirl at zero spin is undefined). ``orders``: the lines ``k * parameter``; ``critical``:
    ``(parameter, frequency, order, whirl)`` of each crossing, marked, numbered and listed
    (the spin in ``unit``); ``frame`` names the frame the whirl is seen in (the legend says
    it; in the rotating frame the crossings are resonances with excitations fixed in space,
    in the fixed frame the critical speeds);
    ``boundary`` marks where the sweep became unstable.
    """
    plt = _pyplot()
    from matplotlib.lines import Line2D

    x = np.asarray(parameter, dtype=float)
    F = np.asarray(frequencies, dtype=float)
    k, m = F.shape
    W = np.zeros((k, m), dtype=int) if whirl is None else np.asarray(whirl).astype(int)
    fig, ax = plt.subplots(figsize=(8, 5.5))
    try:
        colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
        for j in range(m):
            color = colors[j % len(colors)]
            ok = np.isfinite(F[:, j])
            seg = ok[:-1] & ok[1:]
            style = np.where(W[1:, j] != 0, W[1:, j], W[:-1, j])
            for a, b, st in _runs(seg, style):
                ax.plot(x[a:b + 1], F[a:b + 1, j], STYLES[int(st)][0] if whirl is not None
                        else "-", color=color, lw=1.4)
            if k <= 25:                 # few values: show where they are
                ax.plot(x[ok], F[ok, j], "o", color=color, ms=2.5)
            if m <= 12:
                ax.plot([], [], "-", color=color, lw=3, label=f"line {j + 1}")
        top = np.nanmax(F) if np.isfinite(F).any() else 1.0
        xmax = np.nanmax(np.abs(x)) if len(x) else 1.0
        for order in orders:
            xs = np.array([min(x.min(initial=0.0), 0.0), xmax])
            ax.plot(xs, order * np.abs(xs), color="0.45", lw=0.9, ls="-.")
            reach = min(xmax, top / order) if order > 0 else xmax
            ax.annotate(f"{order:g}x", (reach, order * reach), fontsize=8, color="0.3",
                        xytext=(2, 2), textcoords="offset points")
        table = []
        name = "order crossing" if frame == "rotating" else "critical speed"
        for i, (xc, fc, order, w) in enumerate(critical):
            ax.plot([xc], [fc], "D", mfc="none", mec="k", ms=7, mew=1.2,
                    label=name if i == 0 else None)
            if len(critical) <= 20:     # numbered, listed beside the legend
                ax.annotate(f"{i + 1}", (xc, fc), fontsize=7, textcoords="offset points",
                            xytext=(5, -11))
                table.append(f"{i + 1}: {xc:.5g} at {order:g}x, {WHIRL_NAMES[int(w)]}")
        if table:
            fig.text(0.92, 0.08, f"{name}s ({unit}):\n" + "\n".join(table),
                     fontsize=7, va="bottom", ha="left", family="monospace")
        if boundary is not None:
            ax.axvline(boundary, color="r", lw=1.0, label=f"unstable from {boundary:.6g}")
        ax.set_ylim(bottom=0.0, top=1.08 * top if top > 0 else 1.0)
        ax.set_xlabel(label)
        ax.set_ylabel(ylabel)
        ax.set_title(title or "Campbell diagram")
        ax.grid(True, alpha=0.3)
        handles, labels = ax.get_legend_handles_labels()
        if whirl is not None:
            for v in (1, -1, 0):
                if not (W == v).any():
                    continue
                handles.append(Line2D([], [], color="k", ls=STYLES[v][0], lw=1.4))
                labels.append(STYLES[v][1] + (f" ({frame} frame)" if frame and v else ""))
        if orders:
            handles.append(Line2D([], [], color="0.45", ls="-.", lw=0.9))
            labels.append("engine orders k x spin")
        ax.legend(handles, labels, fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
        fig.savefig(path, dpi=120, bbox_inches="tight", metadata=_METADATA)
    finally:
        plt.close(fig)


def round_off(real: NDArray, bound: NDArray | None = None, scale: NDArray | None = None
              ) -> tuple[NDArray, NDArray, NDArray]:
    """``(shown, zero, band)``: real parts as drawn, which are zero within round-off, the band.

    ``band`` is ``bound`` when given, else :data:`ROUNDOFF` times ``scale`` (the largest ``|p|``
    of each value; 1 if None); a real part within it is drawn as zero.
    """
    r = np.asarray(real, dtype=float)
    if bound is not None:
        band = np.asarray(bound, dtype=float)
    else:
        band = ROUNDOFF * (np.ones_like(r) if scale is None else np.asarray(scale, dtype=float))
    zero = np.abs(r) <= band
    return np.where(zero, 0.0, r), zero, band


def stability(path: str, parameter: NDArray, max_real: NDArray, *, label: str,
              bound: NDArray | None = None, scale: NDArray | None = None,
              boundary: float | None = None, title: str = "") -> None:
    """The largest real part of the eigenvalues (over the modes) against ``parameter``.

    A real part within its error bound ``bound (k,)`` of zero (without bounds: within
    :data:`ROUNDOFF` times ``scale (k,)``, the largest ``|p|`` of its value) is drawn as zero,
    a hollow marker on the axis ("zero within round-off"), never as growth; the band is shaded.
    With bounds, each point has its error bar. ``boundary`` marks where the sweep turned
    unstable: a vertical line with its value.
    """
    plt = _pyplot()
    x = np.asarray(parameter, dtype=float)
    r = np.asarray(max_real, dtype=float)
    shown, zero, band = round_off(r, bound, scale)
    what = ("|Re p| within its error bound" if bound is not None else
            f"|Re p| <= {ROUNDOFF:g} max |p| (round-off; no error bounds)")
    fig, ax = plt.subplots(figsize=(8, 4.5))
    try:
        ax.fill_between(x, -band, band, color="0.8", alpha=0.7, lw=0, label=what)
        ax.plot(x, shown, "-", color="C0", lw=1.2)
        ax.plot(x[zero], shown[zero], "o", mfc="white", mec="C0", ms=5,
                label="zero within round-off")
        grow = ~zero & (r > 0)
        decay = ~zero & (r < 0)
        if grow.any():
            ax.plot(x[grow], r[grow], "o", color="r", ms=5, label="growth: Re p > 0")
        if decay.any():
            ax.plot(x[decay], r[decay], "o", color="C0", ms=4, label="decay: Re p < 0")
        if bound is not None:
            ax.errorbar(x[~zero], r[~zero], yerr=band[~zero], fmt="none", ecolor="k",
                        elinewidth=0.8, capsize=2)
        ax.axhline(0.0, color="k", lw=0.8)
        if boundary is not None:
            ax.axvline(boundary, color="r", lw=1.0, ls="--")
            ax.annotate(f"stability boundary {boundary:.6g}", (boundary, 1.0),
                        xycoords=("data", "axes fraction"), xytext=(3, -12),
                        textcoords="offset points", color="r", fontsize=8)
        top = np.abs(shown).max(initial=0.0)
        if top == 0.0:                  # all zero within round-off: a readable axis
            ax.set_ylim(-1.0, 1.0)
        ax.set_xlabel(label)
        ax.set_ylabel("max Re p over the modes (1/s)")
        ax.set_title(title or "stability")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
        fig.savefig(path, dpi=120, bbox_inches="tight", metadata=_METADATA)
    finally:
        plt.close(fig)


def curves(path: str, x: NDArray, columns: dict[str, NDArray], *, xlabel: str, ylabel: str = "",
           title: str = "", steps: list[str] | None = None) -> None:
    """Curves ``columns {label: (N,)}`` against ``x (N,)``, one figure (PNG, SVG or PDF).

    ``steps`` (N,) names each point's step: a curve is not drawn across a change of step, and
    with several steps the step boundaries are marked. NaN points are gaps.
    """
    plt = _pyplot()
    x = np.asarray(x, dtype=float)
    steps = list(steps) if steps is not None else [""] * len(x)
    cuts = [i for i in range(1, len(steps)) if steps[i] != steps[i - 1]]
    parts = list(zip([0] + cuts, cuts + [len(x)], strict=True))
    fig, ax = plt.subplots(figsize=(8, 5))
    try:
        colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
        for j, (label, y) in enumerate(columns.items()):
            y = np.asarray(y, dtype=float)
            color = colors[j % len(colors)]
            for k, (a, b) in enumerate(parts):
                ax.plot(x[a:b], y[a:b], "-", color=color, lw=1.4,
                        marker="o" if b - a <= 30 else None, ms=3,
                        label=label if k == 0 else None)
        if len(parts) > 1 and len(set(steps)) == len(parts):
            for a, _ in parts[1:]:
                ax.axvline(x[a], color="0.6", lw=0.8, ls=":")
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel or (next(iter(columns)) if len(columns) == 1 else "value"))
        ax.set_title(title)
        ax.grid(True, alpha=0.3)
        if len(columns) > 1:
            ax.legend(fontsize=8, loc="best")
        fig.savefig(path, dpi=120, bbox_inches="tight",
                    metadata=_CREATOR.get(os.path.splitext(path)[1].lower(), {}))
    finally:
        plt.close(fig)
