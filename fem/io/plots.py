"""Plots written beside the results: the Campbell diagram and the stability plot of a sweep.

matplotlib with its file-only backend (Agg: no screen needed), imported when a sweep writes.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def campbell(path: str, parameter: NDArray, frequencies: NDArray, *, label: str,
             orders: bool = False, boundary: float | None = None, title: str = "") -> None:
    """Frequencies ``(k, m)`` (tracked modes as columns, NaN where missing) against ``parameter``.

    ``orders`` adds the lines ``omega = j * parameter`` (j = 1, 2: the excitation orders of a
    spin); ``boundary`` marks where the sweep became unstable.
    """
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 5))
    try:
        for j in range(frequencies.shape[1]):
            ax.plot(parameter, frequencies[:, j], "o-", ms=3, lw=1.2, label=f"mode {j + 1}")
        if orders:
            top = np.nanmax(frequencies) if np.isfinite(frequencies).any() else 1.0
            for k in (1, 2):
                ax.plot(parameter, k * np.asarray(parameter), "k--", lw=0.8, alpha=0.6)
                ax.annotate(f"{k}x", (parameter[-1], min(k * parameter[-1], top)), fontsize=8)
        if boundary is not None:
            ax.axvline(boundary, color="r", lw=1.0, label=f"unstable from {boundary:.6g}")
        ax.set_xlabel(label)
        ax.set_ylabel("frequency |Im p| (rad/s)")
        ax.set_title(title or "Campbell diagram")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
        fig.savefig(path, dpi=120, bbox_inches="tight")
    finally:
        plt.close(fig)


def stability(path: str, parameter: NDArray, max_real: NDArray, *, label: str,
              boundary: float | None = None, title: str = "") -> None:
    """The largest real part of the eigenvalues against ``parameter`` (positive: unstable)."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 4))
    try:
        ax.plot(parameter, max_real, "o-", ms=3, lw=1.2)
        ax.axhline(0.0, color="k", lw=0.8)
        if boundary is not None:
            ax.axvline(boundary, color="r", lw=1.0, label=f"unstable from {boundary:.6g}")
            ax.legend(fontsize=8)
        ax.set_xlabel(label)
        ax.set_ylabel("max Re p (1/s)")
        ax.set_title(title or "stability")
        ax.grid(True, alpha=0.3)
        fig.savefig(path, dpi=120, bbox_inches="tight")
    finally:
        plt.close(fig)
