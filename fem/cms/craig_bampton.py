"""Craig-Bampton reduction of a component: static constraint modes + fixed-interface normal modes.

Craig & Bampton (1968, AIAA J. 6(7), "Coupling of substructures for dynamic analyses"), with the
unknowns of a component split into boundary ``b`` (interface, kept as physical coordinates) and
interior ``i``::

    u = T q,   q = [u_b; eta],   T = [[I,            0    ],
                                      [-K_ii^-1 K_ib, Phi_i]]

* the static constraint modes ``Psi = -K_ii^{-1} K_ib`` (one column per boundary unknown: the
  interior's static response to a unit displacement of that unknown, the others held): one
  factorization of ``K_ii`` and one multi-right-hand-side solve;
* the fixed-interface normal modes ``K_ii phi = omega^2 M_ii phi`` (``M_ii``-normalized), the lowest
  ``modes`` of them or all below a cut-off frequency, by the project's shift-invert Lanczos on the
  same factorization (shift 0: with the boundary held, ``K_ii`` is regular);
* ``K_r = T^T K T``, ``M_r = T^T M T`` by exact projection: the reduced model is a Rayleigh-Ritz
  model of the full one, its frequencies never below the full model's;
  ``K_r = diag(K_bb - K_bi K_ii^-1 K_ib, Lambda)`` (the Guyan condensed boundary stiffness and the
  fixed-interface eigenvalues), while ``M_r`` couples the two;
* recovery ``u = T q``: ``u_b = q_b`` exactly, so components sharing boundary unknowns are
  compatible exactly once those coordinates are shared (:func:`fem.cms.coupling.couple`).

Rule of thumb (Craig & Kurdila, "Fundamentals of structural dynamics", 2006, section 19.3): modes
of the assembled model well below the components' cut-off are accurate. How accurate depends on
the model and the cut-off: on the test frame (tests/test_cms.py) the worst mode below half the
cut-off is 0.33 % off at 20 rad/s, 0.18 % at 40 and 0.078 % at 60 (the test holds the last to
0.1 %); a 4 x 4 x 4 cube frame split in half gives 0.16 % at 60 rad/s.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from fem import linalg
from fem.cms.component import (
    Factorization,
    check_indices,
    check_matrices,
    check_selection,
    lowest_modes,
    massive,
    singular,
)


@dataclass
class CraigBampton:
    """A component reduced by Craig-Bampton (module docstring).

    Attributes
    ----------
    name : the component's name (PETSc options prefix ``cms_<name>_``, messages)
    boundary : (nb,) boundary unknowns of the component, in the order of ``q_b``
    interior : (ni,) the other unknowns, ascending
    omega2 : (m,) fixed-interface eigenvalues ``omega^2``, ascending
    cutoff : the cut-off frequency (rad/s) asked for, or the highest kept frequency for a count
    T : (n, nb + m) the transformation ``u = T q``, ``q = [u_b; eta]``
    K, M : (nb + m, nb + m) the reduced stiffness and mass ``T^T K T``, ``T^T M T``
    """

    name: str
    boundary: NDArray
    interior: NDArray
    omega2: NDArray
    cutoff: float
    T: NDArray
    K: NDArray
    M: NDArray

    @property
    def n_boundary(self) -> int:
        """Number of boundary coordinates (the first of ``q``)."""
        return len(self.boundary)

    @property
    def constraint_modes(self) -> NDArray:
        """(n, nb) the static constraint modes (identity on the boundary rows)."""
        return self.T[:, :self.n_boundary]

    @property
    def normal_modes(self) -> NDArray:
        """(n, m) the fixed-interface normal modes (zero on the boundary rows)."""
        return self.T[:, self.n_boundary:]

    def recover(self, q: NDArray) -> NDArray:
        """The component's unknowns ``u = T q`` for ``q (nb + m,)`` or ``(nb + m, k)``."""
        return self.T @ q


def craig_bampton(K, M, boundary, *, modes: int | None = None, cutoff: float | None = None,
                  name: str = "component", solver_options: dict | None = None) -> CraigBampton:
    """Reduce a component by Craig-Bampton (module docstring).

    Parameters
    ----------
    K, M : scipy sparse ``(n, n)``, the component's symmetric stiffness and mass on its unknowns
    boundary : (nb,) indices of the boundary (interface) unknowns
    modes : number of fixed-interface normal modes to keep, or
    cutoff : keep every fixed-interface mode with ``omega <= cutoff`` (rad/s)
    name : names the component in messages and the PETSc options prefix ``cms_<name>_``
    solver_options : PETSc options of the factorization of ``K_ii`` (as a deck's ``[solver]``)
    """
    K, M = check_matrices(K, M, name)
    n = K.shape[0]
    b = check_indices(boundary, n, "boundary", name)
    check_selection(modes, cutoff, name)
    inner = np.ones(n, dtype=bool)
    inner[b] = False
    i = np.flatnonzero(inner)
    K_ii, M_ii = K[i][:, i], M[i][:, i]
    K_ib = K[i][:, b]
    with Factorization(K_ii, f"cms_{name}_", solver_options) as solve:
        try:
            Psi = -solve(K_ib.toarray()) if len(b) else np.zeros((len(i), 0))
            pairs = lowest_modes(K_ii, M_ii, solve, 0.0, modes, cutoff, massive(M_ii))
        except linalg.SingularMatrixError:
            raise singular(name, "the stiffness with the boundary held (K_ii)") from None
    m = len(pairs.values)
    T = np.zeros((n, len(b) + m))
    T[b, np.arange(len(b))] = 1.0
    T[i, :len(b)] = Psi
    T[i, len(b):] = pairs.vectors
    K_r, M_r = T.T @ (K @ T), T.T @ (M @ T)
    top = float(np.sqrt(max(pairs.values[-1], 0.0))) if m else 0.0
    return CraigBampton(name=name, boundary=b, interior=i, omega2=pairs.values,
                        cutoff=float(cutoff) if cutoff is not None else top, T=T,
                        K=0.5 * (K_r + K_r.T), M=0.5 * (M_r + M_r.T))
