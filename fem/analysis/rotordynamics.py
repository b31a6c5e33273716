"""Rotordynamics of a spin sweep: whirl, the fixed frame, tracked lines and engine-order crossings.

A spin sweep (:mod:`fem.analysis.sweep`) linearizes in the frame turning with the spin ``Omega``
about the unit axis ``e`` (:mod:`fem.analysis.linear_model`), so its eigenpairs ``(p, x)``,
``p = Re p + i w_r`` with ``w_r >= 0`` (one of each conjugate pair), are *rotating-frame* ones: the
real motion ``Re(x e^{p t})`` is seen by an observer turning with the rotor.

**Whirl.** At a node, the complex translation ``u`` (and the rotation vector) of ``x``,
projected on the plane normal to ``e`` (``u_p = u - e (e . u)``), is the sum of two circular
motions::

    u_f = (u_p - i e x u_p) / 2,     u_b = (u_p + i e x u_p) / 2

(with axes ``a, b`` normal to ``e``, ``a x b = e``: ``u_f = (X_a + i X_b) (a - i b) / 2``, so
``|u_f| ~ |X_a + i X_b|`` and ``|u_b| ~ |X_a - i X_b|``). ``Re(u_f e^{i w t})`` turns about
``e`` in the positive sense, ``Re(u_b e^{i w t})`` in the negative one. Summed over the
model with the mass matrix, ``F = x_f^H M x_f`` and ``B = x_b^H M x_b`` (``x_f``, ``x_b``:
``x`` with every node's in-plane parts replaced by ``u_f``, ``u_b``, the rest zero) give the
sense of the mode about ``e``, ``s = +1`` if ``F >= B`` else ``-1``, and its *ratio*
``sqrt(min(F, B) / max(F, B))``: 0 for a circular whirl, 1 for a motion in a fixed plane. A
mode with ``F + B`` below :data:`NO_WHIRL` of ``x^H M x`` has no in-plane motion (an axial or a
torsional mode): it does not whirl (sense 0).

**The fixed frame.** For a rotor symmetric about its axis on isotropic supports, a circular
rotating-frame whirl ``u_f e^{i s w_r t}`` (the mode written with the sense in the frequency's
sign, the signed frequency ``sigma = s w_r`` about ``e``) is seen from the inertial frame as
``R(Omega t) u_f e^{i sigma t} = u_f e^{i (sigma + Omega) t}`` (turning a positive circular
vector by the angle ``theta`` multiplies it by ``e^{i theta}``), so its fixed-frame frequency is
``|sigma + Omega|`` and it whirls *forward* (with the spin) when ``sigma + Omega`` has the sign
of ``Omega``, *backward* otherwise; the real part (growth or decay) is the same in both frames.
A mode without whirl keeps ``w_r``. A rotating-frame forward whirl slower than the spin is seen
there as backward (``sigma < 0``): at the forward critical speed its rotating-frame frequency
passes through zero (the "fold" of a rotating-frame Campbell diagram), and ``sigma + Omega``
goes on smoothly. *What is wrong otherwise*: a rotor that is not symmetric about the axis (a
blade, a beam radial to it, unequal bending stiffnesses) or anisotropic supports turning with
it whirl elliptically (ratio > 0); the fixed-frame motion of such a mode then has the two
frequencies ``|sigma + Omega|`` (its dominant sense, the one converted) and ``|sigma -
Omega|``, and in the inertial frame the equations have periodic coefficients (Floquet): only
the rotating-frame eigenvalues are exact. The sweep warns when a converted mode is far from
circular. (Isotropic supports fixed in space, anisotropic rotor: the rotating frame is the one
this code models anyway.)

**Tracking.** A line of the Campbell diagram follows one mode by its vectors: consecutive
values' modes are matched by the mass-weighted Modal Assurance Criterion ``MAC = |x_a^H M
x_b|^2 / (x_a^H M x_a x_b^H M x_b)`` (Allemang & Brown 1982 with the mass as the metric), as an
assignment problem (largest total MAC). ``(p, x)`` and ``(conj p, conj x)`` are the same real
motion, so the MAC taken is the larger with ``x_b`` and ``conj x_b``; vectors are compared in
the form of positive sense about ``e`` (``conj x`` for ``s = -1``), so a rotating-frame line
folding through zero stays one line. Two circular whirls (ratio below :data:`CIRCULAR`) of
opposite fixed-frame sense are never matched (a forward and a backward whirl of one shape
family have equal MAC; only the sense tells them apart). A mode matching no line with a MAC of
at least :data:`MIN_MAC` (one entering the ``modes`` nearest the shift) starts a new line, so a
line never jumps to another mode. Each mode is compared with the last vector of each line, so a
line missing at some values (NaN there) picks up again.

**Divergence.** An undamped mode that diverges turns its pair ``+-i w`` into ``+-a``: two
real eigenvalues of one mode. The ``-a`` of each such pair is dropped before tracking, so the
line goes on with frequency 0 and real part ``+a`` (the growth the stability plot shows),
instead of the pair taking two lines (the second one "plunging to 0" from another mode).

**Engine orders.** The lines ``k |Omega|`` (``k`` the orders) cross a frequency line where
``f_j(Omega) = k |Omega|``: in the fixed frame the *critical speeds* (order 1: synchronous,
excited by unbalance; a backward crossing by a support asymmetry or a rub); in the rotating frame
the resonances of the turning structure with an excitation fixed in space with ``k`` lobes (the
Campbell diagram of a bladed disc). The crossings are located by linear interpolation between
sweep values and, with ``refine``, by the Illinois variant of regula falsi (Dowell & Jarratt
1971) on ``f_j - k Omega`` with extra equilibria and eigen-solves, the mode at each new value
being the one of best MAC with the line.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

NO_WHIRL = 1e-6     # in-plane (whirl) part of x^H M x below this: no whirl (axial, torsional)
CIRCULAR = 0.5      # ratio below this: a whirl with a clear sense (tracking never flips it)
MIN_MAC = 0.1       # a mode correlating less with every line starts a line of its own
PAIRED = 1e-3       # real eigenvalues a > 0, b < 0 with |a + b| below this of a: one mode's
ELLIPTIC = 0.05     # fixed frame: a ratio above this in a converted mode is warned about


@dataclass(frozen=True)
class Axis:
    """The spin axis and where the in-plane motion of each node sits among the unknowns.

    ``e (3,)`` the unit axis; ``index (n, 2, 3)`` the unknown of each node's translation (0) and
    rotation (1) along global x, y, z, -1 where it is no unknown (fixed, absent, 2D).
    """

    e: NDArray
    index: NDArray

    @classmethod
    def of(cls, dofmap, slots, axis, n_unknowns: int) -> Axis:
        """From a DofMap, its slot names and the spin axis (any length, nonzero)."""
        names = (("ux", "uy", "uz"), ("rx", "ry", "rz"))
        idx = np.full((dofmap.index.shape[0], 2, 3), -1, dtype=np.int64)
        for a, row in enumerate(names):
            for c, name in enumerate(row):
                if name in slots:
                    col = dofmap.index[:, list(slots).index(name)]
                    idx[:, a, c] = np.where((col >= 0) & (col < n_unknowns), col, -1)
        e = np.asarray(axis, dtype=float)
        return cls(e / np.linalg.norm(e), idx)


def whirl_parts(X: NDArray, M, axis: Axis) -> tuple[NDArray, NDArray, NDArray]:
    """``F, B, T`` (m,): mass-weighted forward, backward and total motion of the columns of ``X``.

    ``X (N, m)`` complex vectors on the unknowns, ``M`` their mass (sparse ``(N, N)``); module
    docstring. Vectorized over nodes and modes.
    """
    valid = axis.index >= 0
    U = np.where(valid[..., None], X[np.maximum(axis.index, 0)], 0.0)   # (n, 2, 3, m)
    e = axis.e
    up = U - e[:, None] * np.einsum("c,nacm->nam", e, U)[:, :, None, :]
    ex = np.cross(e[None, None, :, None], up, axisa=2, axisb=2, axisc=2)
    N = X.shape[0]
    F = np.zeros(X.shape[1])
    B = np.zeros(X.shape[1])
    for sign, out in ((-1, F), (+1, B)):
        part = 0.5 * (up + sign * 1j * ex)
        Y = np.zeros((N, X.shape[1]), dtype=complex)
        Y[axis.index[valid]] = part[valid]
        out[:] = np.einsum("ij,ij->j", Y.conj(), M @ Y).real
    T = np.einsum("ij,ij->j", X.conj(), M @ X).real
    return F, B, T


def distinct(values: NDArray) -> NDArray:
    """``(m,)`` bool: the eigenvalues to keep, one of each pair that stands for one mode.

    The two roots of a diverged undamped mode agree to the eigen-solver's accuracy only
    (2.5e-6 relative for a column at twice its Euler load, where ``|K|`` is 1e8 times
    ``|p^2 M|``): a positive and a negative real eigenvalue whose sum is within
    :data:`PAIRED` of them are one mode's, the nearest partners first. A double zero (a free
    rotation under spin) comes as such a real pair ``+-a`` or as a conjugate pair ``+-i a``
    with ``a`` at round-off, as the LAPACK build rounds it; a conjugate pair within the real
    band is one mode too, its ``Im p < 0`` member dropped.
    """
    scale = max(float(np.abs(values).max(initial=0.0)), 1e-300)
    real = np.abs(values.imag) <= 1e-8 * scale
    keep = np.ones(len(values), dtype=bool)
    for i in np.flatnonzero(real & (values.real > 0)):
        a = values[i].real
        partner = np.flatnonzero(real & keep & (values.real < 0)
                                 & (np.abs(values.real + a) <= PAIRED * a + 1e-9 * scale))
        if len(partner):
            keep[partner[np.argmin(np.abs(values.real[partner] + a))]] = False
    for i in np.flatnonzero(real & keep & (values.imag < 0)):
        conjugate = real & keep & (values.imag > 0) & (
            np.abs(values - values[i].conjugate()) <= 1e-9 * scale)
        if np.any(conjugate):
            keep[i] = False
    return keep


@dataclass
class Modes:
    """One sweep value's modes, each once, in the form tracking compares (module docstring).

    ``p (m,)`` the eigenvalues as solved (rotating frame); ``X (N, m)`` their vectors written
    with positive sense about the axis (``conj x`` where ``s = -1``); ``sigma (m,)`` the signed
    rotating-frame frequency ``s w_r`` (``w_r`` for a mode without whirl); ``turns (m,)`` bool,
    whether the mode whirls; ``ratio (m,)`` weaker over stronger sense (0: circular; NaN: no
    whirl).
    """

    value: float
    spin: float
    p: NDArray
    X: NDArray
    M: object
    sigma: NDArray
    turns: NDArray
    ratio: NDArray

    @classmethod
    def of(cls, value: float, values: NDArray, vectors: NDArray, M, axis: Axis | None,
           spin: float = 0.0) -> Modes:
        """From a point's eigenpairs (``axis`` None: no spin, nothing whirls)."""
        keep = distinct(values)
        p, X = values[keep], vectors[:, keep]
        w = np.abs(p.imag)
        if axis is None:
            z = np.zeros(len(p), dtype=bool)
            return cls(value, 0.0, p, X, M, w, z, np.full(len(p), np.nan))
        F, B, T = whirl_parts(X, M, axis)
        turns = F + B > NO_WHIRL * np.maximum(T, 1e-300)
        s = np.where(F >= B, 1.0, -1.0)
        ratio = np.sqrt(np.minimum(F, B) / np.maximum(np.maximum(F, B), 1e-300))
        flip = turns & (s < 0)
        X = X.copy()
        X[:, flip] = X[:, flip].conj()
        return cls(value, spin, p, X, M, np.where(turns, s * w, w), turns,
                   np.where(turns, ratio, np.nan))

    def signed(self, frame: str) -> NDArray:
        """``(m,)`` signed frequency about the axis in ``frame`` (fixed: ``sigma + Omega``)."""
        if frame == "fixed":
            return np.where(self.turns, self.sigma + self.spin, self.sigma)
        return self.sigma

    def frequencies(self, frame: str) -> NDArray:
        """``(m,)`` the frequencies in ``frame`` (rad/s, >= 0)."""
        return np.abs(self.signed(frame))

    def whirl(self, frame: str) -> NDArray:
        """``(m,)`` int8: +1 forward (with the spin), -1 backward, 0 no whirl (or no spin)."""
        w = np.sign(self.signed(frame)) * np.sign(self.spin)
        return np.where(self.turns, w, 0).astype(np.int8)

    def sense(self) -> NDArray:
        """``(m,)`` the fixed-frame sense about the axis of the circular whirls, else 0."""
        circular = self.turns & (self.ratio < CIRCULAR) & (self.spin != 0.0)
        return np.where(circular, np.sign(self.sigma + self.spin), 0.0)


def mac(Xa: NDArray, Xb: NDArray, M) -> NDArray:
    """``(a, b)`` the mass-weighted MAC of the columns, the larger with ``Xb`` and ``conj Xb``."""
    MXb = M @ Xb
    na = np.einsum("ij,ij->j", Xa.conj(), M @ Xa).real
    nb = np.einsum("ij,ij->j", Xb.conj(), MXb).real
    direct = np.abs(Xa.conj().T @ MXb) ** 2
    conj = np.abs(Xa.T @ MXb) ** 2               # |x_a^H M conj(x_b)| (M real)
    C = np.maximum(direct, conj) / np.maximum(np.outer(na, nb), 1e-300)
    C[(na <= 0)[:, None] | (nb <= 0)[None, :]] = 0.0
    return C


def _score(Xa, sense_a, Xb, sense_b, M) -> NDArray:
    """MAC of lines ``a`` and modes ``b``, zero where circular whirls' senses are opposite."""
    C = mac(Xa, Xb, M)
    C[sense_a[:, None] * sense_b[None, :] < 0] = 0.0
    return C


@dataclass
class Lines:
    """Tracked lines: ``index (k, c)`` the mode of each value on each line (-1: missing)."""

    index: NDArray

    def take(self, modes: list[Modes], attr) -> NDArray:
        """``(k, c)`` a per-mode quantity ``attr(Modes) -> (m,)`` along the lines (NaN: none)."""
        k, c = self.index.shape
        first = attr(modes[0]) if modes else np.zeros(0)
        dtype = np.result_type(first, float)
        out = np.full((k, c), complex(np.nan, np.nan) if dtype.kind == "c" else np.nan, dtype)
        for i, m in enumerate(modes):
            j = np.flatnonzero(self.index[i] >= 0)
            out[i, j] = attr(m)[self.index[i, j]]
        return out


def track(modes: list[Modes]) -> Lines:
    """Lines through the values' modes (module docstring: MAC, senses, new lines)."""
    from scipy.optimize import linear_sum_assignment  # only a sweep needs it (0.09 s)

    rows: list[list[int]] = []
    ref_X: list[NDArray] = []       # per line: its last vector and sense
    ref_s: list[float] = []
    for i, m in enumerate(modes):
        n = len(m.p)
        line = np.full(n, -1)
        sense = m.sense()
        if ref_X and n:
            C = _score(np.column_stack(ref_X), np.array(ref_s), m.X, sense, m.M)
            r, c = linear_sum_assignment(-C)
            ok = C[r, c] >= MIN_MAC
            line[c[ok]] = r[ok]
        for j in range(n):              # in the order of the point's modes (|p| increasing)
            if line[j] < 0:
                line[j] = len(ref_X)
                ref_X.append(None)
                ref_s.append(0.0)
            ref_X[line[j]] = m.X[:, j]
            if sense[j] != 0:
                ref_s[line[j]] = sense[j]
        rows.append(line)
    index = np.full((len(modes), len(ref_X)), -1, dtype=np.int64)
    for i, line in enumerate(rows):
        index[i, line] = np.arange(len(line))
    return Lines(index)


@dataclass
class Crossing:
    """Where line ``column`` crosses the engine order ``order``: at the spin ``speed`` (rad/s)."""

    speed: float
    order: float
    column: int
    whirl: int
    refined: bool

    @property
    def frequency(self) -> float:
        """The frequency there, ``order * |speed|`` (rad/s)."""
        return self.order * abs(self.speed)


def crossings(modes: list[Modes], lines: Lines, frame: str, orders,
              evaluate: Callable[[float, int], Modes] | None = None,
              tolerance: float = 1e-6, max_iterations: int = 60) -> list[Crossing]:
    """The crossings of every line with every engine order, sorted by speed.

    ``evaluate(value, i)``: the :class:`Modes` at a spin between values ``i`` and ``i + 1``
    (an equilibrium from value ``i`` and an eigen-solve); None: linear interpolation only.
    Refinement stops when the bracket or the step is below ``tolerance`` (relative).
    """
    if not modes or lines.index.shape[1] == 0:
        return []
    spin = np.array([m.spin for m in modes])
    F = lines.take(modes, lambda m: m.frequencies(frame))
    W = lines.take(modes, lambda m: m.whirl(frame).astype(float))
    out = []
    for k in orders:
        g = F - k * np.abs(spin)[:, None]
        a, b = g[:-1], g[1:]
        both = np.isfinite(a) & np.isfinite(b)
        for i, j in np.argwhere((g == 0.0) & (spin != 0.0)[:, None]):   # at a value
            out.append(Crossing(float(spin[i]), float(k), int(j), int(W[i, j]), False))
        for i, j in np.argwhere(both & (a * b < 0.0)):
            whirl = int(W[i + 1, j] if W[i + 1, j] != 0 else W[i, j])
            x = spin[i] - a[i, j] * (spin[i + 1] - spin[i]) / (b[i, j] - a[i, j])
            refined = False
            if evaluate is not None:
                x, w, refined = _refine(modes, lines, frame, float(k), j, i, a[i, j], b[i, j],
                                        evaluate, tolerance, max_iterations)
                whirl = w if w != 0 else whirl
            out.append(Crossing(float(x), float(k), int(j), whirl, refined))
    return sorted(out, key=lambda c: (c.speed, c.order, c.column))


def _refine(modes, lines, frame, k, j, i, ga, gb, evaluate, tolerance, max_iterations):
    """Illinois regula falsi on ``f_j(Omega) - k |Omega|`` in ``[spin_i, spin_{i+1}]``."""
    ma, mb = modes[i], modes[i + 1]
    lo, hi = ma.spin, mb.spin
    ref = {lo: (ma.X[:, lines.index[i, j]], ma.sense()[lines.index[i, j]]),
           hi: (mb.X[:, lines.index[i + 1, j]], mb.sense()[lines.index[i + 1, j]])}
    whirl = 0
    side = 0
    x = lo - ga * (hi - lo) / (gb - ga)
    for _ in range(max_iterations):
        m = evaluate(x, i)
        near = lo if abs(x - lo) <= abs(hi - x) else hi
        X0, s0 = ref[near]
        C = _score(X0[:, None], np.array([s0]), m.X, m.sense(), m.M)[0]
        if not len(C) or C.max() < MIN_MAC:
            break                        # the mode is not found there: keep the estimate
        q = int(np.argmax(C))
        g = m.frequencies(frame)[q] - k * abs(x)
        whirl = int(m.whirl(frame)[q]) or whirl
        if g == 0.0:
            return x, whirl, True
        if g * ga < 0:                   # the root is in [lo, x]
            hi, gb = x, g
            ref[hi] = (m.X[:, q], m.sense()[q])
            if side == -1:
                ga *= 0.5
            side = -1
        else:
            lo, ga = x, g
            ref[lo] = (m.X[:, q], m.sense()[q])
            if side == 1:
                gb *= 0.5
            side = 1
        new = lo - ga * (hi - lo) / (gb - ga)
        if hi - lo <= tolerance * max(abs(lo), abs(hi)) or \
                abs(new - x) <= 0.5 * tolerance * max(abs(x), 1e-300):
            return new, whirl, True
        x = new
    return x, whirl, False
