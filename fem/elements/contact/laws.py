"""Normal contact laws of the seeds and their step forms (energy-conserving scheme).

All laws act on the penetration ``delta = -gap`` (positive in contact) and give a compressive
normal force ``F >= 0`` (no tension: ``F = 0`` when the gap is open, and a damped force that
would pull is cut at zero). Ma, Menon & Lankarani (application_papers.md section 15):

``hertz``
    ``F = K delta^n`` (eq. 1; ``n = 3/2``), ``K = 4 / (3 pi (h_i + h_j)) sqrt(R_i R_j /
    (R_i + R_j))``, ``h_k = (1 - nu_k^2) / (pi E_k)`` (eqs. 2-3; :func:`hertz_stiffness`).
``hunt_crossley``
    ``F = K delta^n + mu delta^n delta_dot`` with a given ``mu`` (the vibro-impact table).
``lankarani_nikravesh``
    ``F = K delta^n [1 + 3 (1 - e^2)/4 delta_dot / delta_dot^-]`` (eqs. 4-10): ``delta_dot^-``
    is the approach speed at onset, kept in the pair's history.
``kelvin_voigt``
    ``F = K delta + c delta_dot`` (``n = 1``), cut at zero.
``hertz_plastic``
    Hertz with permanent indentation (eqs. 11-14): loading along ``K delta^n`` beyond the
    largest penetration ``delta_m`` so far, unloading and reloading along
    ``F = K delta_m^n ((delta - delta_p) / (delta_m - delta_p))^n`` with
    ``delta_m - delta_p = e^2 delta_m``, so that the energy given back is ``e^2`` times the
    energy taken: a free two-body impact leaves with exactly ``e`` times its approach speed.

**Step forms** (the energy-conserving scheme). Over a step the penetration goes linearly from
``delta_0`` to ``delta_1``; the elastic force is the secant of the potential
``Phi = K delta_+^(n+1) / (n+1)``, ``S = (Phi(delta_1) - Phi(delta_0)) / (delta_1 - delta_0)``
(the mean of ``K delta_+^n`` along the step: a discrete gradient, exact also in the step in
which the contact closes or opens); damping forces use the mean of ``delta_+^n`` (or, for
Kelvin-Voigt, of the indicator) along the step times the rate ``(delta_1 - delta_0) / h``, so
their work ``F_d (delta_1 - delta_0) >= 0`` is exactly the energy they take. The plastic law's
force is the work along its (history-dependent) curve over the step divided by
``delta_1 - delta_0``; the energy lost is that work minus the change of the recoverable energy
``U(delta; delta_m)`` (the area under the unloading curve).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

LAWS = ("hertz", "hunt_crossley", "lankarani_nikravesh", "kelvin_voigt", "hertz_plastic")
#: laws whose force needs the pair's history (approach speed, largest penetration)
HISTORY_LAWS = ("lankarani_nikravesh", "hertz_plastic")
#: relative size of a step's change of penetration below which secants are taken at the middle
_SMALL = 1e-7


def hertz_stiffness(Ri, Rj, Ei, nui, Ej=np.inf, nuj=0.0):
    """``K`` of eqs. 2-3: two spheres (``Rj = inf``: a sphere on a flat; ``Ej = inf``: rigid)."""
    hi = (1 - nui**2) / (np.pi * Ei)
    hj = 0.0 if np.isinf(Ej) else (1 - nuj**2) / (np.pi * Ej)
    R = Ri if np.isinf(Rj) else Ri * Rj / (Ri + Rj)
    return 4.0 / (3 * np.pi * (hi + hj)) * np.sqrt(R)


def contact_time_factor(n: float) -> float:
    """``C`` of the undamped contact time ``t_c = C delta_m / v`` of ``m x'' = -K x^n``.

    ``C = 2 sqrt(pi) Gamma(1 + 1/(n+1)) / Gamma(1/2 + 1/(n+1))``: 2.9432 for ``n = 3/2``
    (Hertz; eq. 15's 2.94), ``pi`` for ``n = 1``.
    """
    from scipy.special import gamma  # here: a run without contact never imports it

    a = 1.0 / (n + 1)
    return float(2 * np.sqrt(np.pi) * gamma(1 + a) / gamma(0.5 + a))


def mean_power(d0: NDArray, d1: NDArray, m: float) -> tuple[NDArray, NDArray]:
    """Mean of ``delta_+^m`` along the straight path ``d0 -> d1`` and its derivative by ``d1``.

    ``(d1_+^(m+1) - d0_+^(m+1)) / ((m + 1)(d1 - d0))``; at the middle where the step is tiny.
    """
    p0, p1 = np.maximum(d0, 0.0), np.maximum(d1, 0.0)
    dd = d1 - d0
    scale = np.maximum(np.abs(d0), np.abs(d1))
    small = np.abs(dd) <= _SMALL * scale
    safe = np.where(small, 1.0, dd)
    A = (p1 ** (m + 1) - p0 ** (m + 1)) / ((m + 1) * safe)
    dA = (np.where(p1 > 0, p1**m, 0.0) - A) / safe
    if small.any():
        pm = np.maximum(0.5 * (d0 + d1), 0.0)
        A = np.where(small, np.where(pm > 0, pm**m, 0.0), A)
        # the power of a positive base only (m = 0, the Kelvin-Voigt damper's: no 0^-1)
        pos = np.where(pm > 0, pm, 1.0)
        dA = np.where(small, 0.5 * m * np.where(pm > 0, pos ** (m - 1), 0.0), dA)
    return A, dA


@dataclass
class NormalLaw:
    """One group's normal law; ``K (E,)`` per pair, the other constants per group.

    Attributes
    ----------
    kind : one of :data:`LAWS`
    K : (E,) stiffness (N/m^n)
    n : exponent
    restitution : ``e`` (Lankarani-Nikravesh, plastic)
    damping : ``mu`` (Hunt-Crossley, N s/m^(n+1)) or ``c`` (Kelvin-Voigt, N s/m)
    """

    kind: str
    K: NDArray
    n: float = 1.5
    restitution: float = 1.0
    damping: float = 0.0

    @property
    def dissipative(self) -> bool:
        """Whether the law takes energy (damping or a restitution below one)."""
        if self.kind in ("lankarani_nikravesh", "hertz_plastic"):
            return self.restitution < 1.0
        return self.kind in ("hunt_crossley", "kelvin_voigt") and self.damping > 0

    # --- at a state -----------------------------------------------------------------------------
    def potential(self, delta: NDArray) -> NDArray:
        """(E,) ``Phi = K delta_+^(n+1) / (n+1)``."""
        return self.K * np.maximum(delta, 0.0) ** (self.n + 1) / (self.n + 1)

    def elastic(self, delta: NDArray) -> tuple[NDArray, NDArray]:
        """(E,) ``K delta_+^n`` and its derivative."""
        p = np.maximum(delta, 0.0)
        dF = self.n * self.K * np.where(p > 0, p ** (self.n - 1) if self.n != 1 else 1.0, 0.0)
        return self.K * p**self.n, dF

    def force(self, delta: NDArray, rate: NDArray, hist: dict | None = None
              ) -> tuple[NDArray, NDArray]:
        """(E,) normal force at a state (rate ``delta_dot``) and its derivative by ``delta``.

        The derivative is the elastic part's only (the damping tangent is not included: a step
        that knows its rate coefficients adds it). Lankarani-Nikravesh takes the approach speed
        of ``hist`` (none: no damping); the plastic law its unloading curve when ``hist`` holds
        a largest penetration, else the loading curve.
        """
        Fe, dF = self.elastic(delta)
        p = np.maximum(delta, 0.0)
        k = self.kind
        if k == "hunt_crossley":
            F = Fe + self.damping * p**self.n * rate
        elif k == "kelvin_voigt":
            F = Fe + self.damping * (delta > 0) * rate
        elif k == "lankarani_nikravesh" and hist is not None:
            vm = hist["approach_speed"]
            c = np.where(vm > 0, 0.75 * (1 - self.restitution**2) / np.where(vm > 0, vm, 1.0), 0)
            F = Fe * (1 + c * rate)
        elif k == "hertz_plastic" and hist is not None:
            F, dF = self._unloading(delta, hist["max_penetration"], Fe, dF)
        else:
            F = Fe
        keep = F > 0
        return np.where(keep, F, 0.0), np.where(keep, dF, 0.0)

    def _unloading(self, delta, dm, Fe, dF):
        """The plastic law's force at ``delta`` with largest penetration ``dm`` so far."""
        n, e2 = self.n, self.restitution**2
        on = (delta < dm) & (dm > 0)
        w = np.where(on, e2 * dm, 1.0)
        x = np.maximum(delta - (1 - e2) * dm, 0.0) / w
        Fu = self.K * dm**n * x**n
        dFu = self.K * dm**n * n * np.where(x > 0, x ** (n - 1) if n != 1 else 1.0, 0.0) / w
        return np.where(on, Fu, Fe), np.where(on, dFu, dF)

    def energy(self, delta: NDArray, hist: dict | None = None) -> NDArray:
        """(E,) the recoverable energy: ``Phi``, or the plastic law's ``U(delta; delta_m)``."""
        if self.kind == "hertz_plastic" and hist is not None:
            return self._recoverable(delta, np.maximum(hist["max_penetration"], delta))
        return self.potential(delta)

    def _recoverable(self, delta, dm):
        """``U(delta; dm)``: the area under the unloading curve of ``dm`` down to ``delta_p``."""
        n, e2 = self.n, self.restitution**2
        w = np.where(dm > 0, e2 * dm, 1.0)
        x = np.maximum(delta - (1 - e2) * dm, 0.0)
        return np.where(dm > 0, self.K * dm**n * x ** (n + 1) / ((n + 1) * w**n), 0.0)

    # --- over a step ----------------------------------------------------------------------------
    def step(self, d0: NDArray, d1: NDArray, h: float, hist: dict
             ) -> tuple[NDArray, NDArray, NDArray, NDArray]:
        """Step form: ``(F, dF/dd1, U1, D)`` over ``d0 -> d1`` in time ``h`` from history ``hist``.

        ``F`` (E,) the algorithmic normal force (``F (d1 - d0) = U1 - U0 + D`` exactly), its
        derivative by ``d1`` (damping included), ``U1`` the recoverable energy at the end and
        ``D >= 0`` the energy the step takes. ``hist`` is the history at the start (the
        approach speed of the current contact, the plastic law's largest penetration).
        """
        K, n, k = self.K, self.n, self.kind
        dd = d1 - d0
        if k == "hertz_plastic":
            return self._plastic_step(d0, d1, hist)
        A, dA = mean_power(d0, d1, n)
        S, dS = K * A, K * dA
        rate = dd / h
        if k == "hunt_crossley":
            F = S * (1 + self.damping / K * rate)
            dF = dS * (1 + self.damping / K * rate) + S * self.damping / (K * h)
        elif k == "kelvin_voigt":
            A0, dA0 = mean_power(d0, d1, 0.0)
            F = S + self.damping * A0 * rate
            dF = dS + self.damping * (dA0 * rate + A0 / h)
        elif k == "lankarani_nikravesh":
            vm = hist["approach_speed"]
            c = np.where(vm > 0, 0.75 * (1 - self.restitution**2) / np.where(vm > 0, vm, 1.0), 0)
            F = S * (1 + c * rate)
            # a contact closing from rest takes its approach speed from this step's rate
            # (``c rate`` constant); else the rate's derivative ``1/h``
            onset = hist.get("onset", False)
            dF = dS * (1 + c * rate) + np.where(onset, 0.0, S * c / h)
        else:
            F, dF = S, dS
        keep = F > 0
        F, dF = np.where(keep, F, 0.0), np.where(keep, dF, 0.0)
        U0, U1 = self.potential(d0), self.potential(d1)
        return F, dF, U1, F * dd - (U1 - U0)

    def _plastic_step(self, d0, d1, hist):
        """The plastic law's step: the work along its curve over the step, over ``d1 - d0``."""
        dm0 = hist["max_penetration"]
        dd = d1 - d0
        U = self._recoverable
        Phi = self.potential
        W = (U(np.minimum(d1, dm0), dm0) - U(np.minimum(d0, dm0), dm0)
             + Phi(np.maximum(d1, dm0)) - Phi(np.maximum(d0, dm0)))
        Fe1, dFe1 = self.elastic(d1)
        f1, df1 = self._unloading(d1, dm0, Fe1, dFe1)      # the curve's force at d1
        scale = np.maximum(np.abs(d0), np.abs(d1))
        small = np.abs(dd) <= _SMALL * scale
        safe = np.where(small, 1.0, dd)
        F = W / safe
        dF = (f1 - F) / safe
        if small.any():
            dmid = 0.5 * (d0 + d1)
            Fem, dFem = self.elastic(dmid)
            fm, dfm = self._unloading(dmid, dm0, Fem, dFem)
            F, dF = np.where(small, fm, F), np.where(small, 0.5 * dfm, dF)
        dm1 = np.maximum(dm0, d1)
        U1 = U(d1, dm1)
        D = W - (U1 - U(d0, dm0))
        return F, dF, U1, D
