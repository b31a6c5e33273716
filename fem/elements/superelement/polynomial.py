"""A superelement's strain energy as a quartic polynomial of its reduced coordinates (issue 33).

``U(q) = q^T K q / 2 + A_ijk q_i q_j q_k / 6 + B_ijkl q_i q_j q_k q_l / 24``, with the
coefficients a reduction fits to the component's own strain energy
(:mod:`fem.cms.nonlinear`, Muravyov & Rizzi 2003); what
:mod:`fem.elements.superelement.corot3d` evaluates at every step (here, in the elements
layer, so that the element does not reach up into the reduction procedures).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray


class Polynomial:
    """``U(q) = q^T K q/2 + A qqq/6 + B qqqq/24`` (the module docstring).

    ``K (r, r)`` the reduced stiffness on every coordinate, ``index (n,)`` the coordinates the
    cubic ``A (n, n, n)`` acts on, ``quartic_index (m,)`` those the quartic ``B (m, m, m, m)``
    acts on (default ``index``).
    """

    def __init__(self, K: NDArray, index: NDArray, A: NDArray, B: NDArray,
                 quartic_index: NDArray | None = None):
        self.K, self.index, self.A, self.B = K, np.asarray(index, dtype=np.int64), A, B
        self.qindex = self.index if quartic_index is None else np.asarray(quartic_index,
                                                                          dtype=np.int64)

    def energy(self, q: NDArray) -> float:
        """``U(q)``."""
        z, y = q[self.index], q[self.qindex]
        Az = self.A @ z
        By = self.B @ y
        return float(0.5 * q @ self.K @ q + z @ (Az @ z) / 6.0 + y @ ((By @ y) @ y) / 24.0)

    def gradient(self, q: NDArray) -> NDArray:
        """``(r,)`` ``dU/dq``."""
        z, y = q[self.index], q[self.qindex]
        g = self.K @ q
        g[self.index] += 0.5 * (self.A @ z) @ z
        g[self.qindex] += ((self.B @ y) @ y) @ y / 6.0
        return g

    def hessian(self, q: NDArray) -> NDArray:
        """``(r, r)`` ``d^2U/dq^2``."""
        z, y = q[self.index], q[self.qindex]
        H = self.K.copy()
        H[np.ix_(self.index, self.index)] += self.A @ z
        H[np.ix_(self.qindex, self.qindex)] += 0.5 * (self.B @ y) @ y
        return H
