"""Felippa's optimal ANDES membrane triangle (OPT) with corner drilling rotations, vectorized.

C. A. Felippa, *A study of optimal membrane triangles with drilling freedoms*, CMAME 192 (2003)
2125-2168, section 4 (the ANDES template) with the OPT signature of its Table 2:
``alpha_b = 3/2``, ``beta_1..9 = (1, 2, 1, 0, 1, -1, -1, -1, -2)`` and, for an isotropic material,
``beta_0 = max((1 - 4 nu^2) / 2, 0.01)``. The stiffness is ``K = K_b + K_h``:

* basic, ``K_b = L E L^T / V`` (``V = A h``): the constant-strain part, ``L (9, 3)`` the force
  lumping matrix whose drilling rows carry ``alpha_b`` (Allman's quadratic edge lumping); it alone
  passes the individual element test, so the element passes the membrane patch test exactly;
* higher order, ``K_h = 9/4 beta_0 T_thu^T K_theta T_thu`` with
  ``K_theta = V/3 (Q4^T E_nat Q4 + Q5^T E_nat Q5 + Q6^T E_nat Q6)``: the energy of the natural
  deviatoric strains ``Q_i theta~`` at the side midpoints, ``theta~ = T_thu u`` the corner
  rotations minus the CST's mean rotation ``theta_0 = (v,x - u,y) / 2``. ``Q1 + Q2 + Q3 = 0``
  for the OPT betas, so the higher-order strains have zero mean and ``K_h`` is orthogonal to the
  constant strains (and to rigid motions, where every ``theta~`` is zero).

DOFs per node ``(u, v, theta_z)`` in the element's own plane coordinates; arrays are batched over
elements, the element axis first.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

#: beta_1 .. beta_9 of the OPT element (Felippa 2003, Table 2)
BETAS = (1.0, 2.0, 1.0, 0.0, 1.0, -1.0, -1.0, -1.0, -2.0)
ALPHA_B = 1.5


def beta0(nu: NDArray) -> NDArray:
    """``beta_0`` of the OPT element for an isotropic material (Felippa 2003, eq. 4.11)."""
    return np.maximum(0.5 * (1.0 - 4.0 * np.asarray(nu) ** 2), 0.01)


def plane_stress(E: NDArray, nu: NDArray) -> NDArray:
    """(E, 3, 3) isotropic plane-stress elasticity for (exx, eyy, gxy)."""
    E, nu = np.broadcast_arrays(np.asarray(E, float), np.asarray(nu, float))
    D = np.zeros(E.shape + (3, 3))
    c = E / (1.0 - nu**2)
    D[..., 0, 0] = D[..., 1, 1] = c
    D[..., 0, 1] = D[..., 1, 0] = c * nu
    D[..., 2, 2] = c * (1.0 - nu) / 2.0
    return D


def _sides(xy: NDArray):
    """Coordinate differences ``x_ij = x_i - x_j`` of ``xy (E, 3, 2)`` and the signed area."""
    x, y = xy[..., 0], xy[..., 1]
    d = {}
    for i in range(3):
        for j in range(3):
            if i != j:
                d[f"x{i + 1}{j + 1}"] = x[:, i] - x[:, j]
                d[f"y{i + 1}{j + 1}"] = y[:, i] - y[:, j]
    area = 0.5 * (d["x21"] * d["y31"] - d["x31"] * d["y21"])
    return d, area


class OPTMembrane:
    """Stiffness and strains of a batch of OPT triangles.

    Parameters
    ----------
    xy : (E, 3, 2) corner coordinates in each element's plane, counter-clockwise
    h : (E,) thickness
    D : (E, 3, 3) plane-stress elasticity
    b0 : (E,) ``beta_0``
    """

    def __init__(self, xy: NDArray, h: NDArray, D: NDArray, b0: NDArray):
        d, A = _sides(xy)
        self.area = A
        E = len(A)
        x12, x21, x13, x31, x23, x32 = (d[k] for k in ("x12", "x21", "x13", "x31", "x23", "x32"))
        y12, y21, y13, y31, y23, y32 = (d[k] for k in ("y12", "y21", "y13", "y31", "y23", "y32"))
        ab = ALPHA_B
        # force lumping matrix L (Felippa 2003, eq. 4.5), without the factor h/2
        L = np.zeros((E, 9, 3))
        for n, (yjk, xkj, (ya, yb), (xa, xb), (p, q, r, s)) in enumerate((
                (y23, x32, (y13, y21), (x31, x12), (x31, y13, x12, y21)),
                (y31, x13, (y21, y32), (x12, x23), (x12, y21, x23, y32)),
                (y12, x21, (y32, y13), (x23, x31), (x23, y32, x31, y13)))):
            L[:, 3 * n, 0] = yjk
            L[:, 3 * n, 2] = xkj
            L[:, 3 * n + 1, 1] = xkj
            L[:, 3 * n + 1, 2] = yjk
            L[:, 3 * n + 2, 0] = ab / 6 * yjk * (ya - yb)
            L[:, 3 * n + 2, 1] = ab / 6 * xkj * (xa - xb)
            L[:, 3 * n + 2, 2] = ab / 3 * (p * q - r * s)
        self.Lh = L                                   # L = (h / 2) Lh
        # theta~ = T_thu u: corner rotations minus the CST mean rotation
        A4 = 4.0 * A
        T = np.zeros((E, 3, 9))
        for n, (xc, yc) in enumerate(((x32, y32), (x13, y13), (x21, y21))):
            T[:, :, 3 * n] = (xc / A4)[:, None]
            T[:, :, 3 * n + 1] = (yc / A4)[:, None]
            T[:, n, 3 * n + 2] = 1.0
        self.T_thu = T
        ll21, ll32, ll13 = x21**2 + y21**2, x32**2 + y32**2, x13**2 + y13**2
        Te = np.empty((E, 3, 3))
        Te[:, 0] = np.stack([y23 * y13 * ll21, y31 * y21 * ll32, y12 * y32 * ll13], axis=-1)
        Te[:, 1] = np.stack([x23 * x13 * ll21, x31 * x21 * ll32, x12 * x32 * ll13], axis=-1)
        Te[:, 2] = np.stack([(y23 * x31 + x32 * y13) * ll21, (y31 * x12 + x13 * y21) * ll32,
                             (y12 * x23 + x21 * y32) * ll13], axis=-1)
        Te /= (4.0 * A**2)[:, None, None]
        b = BETAS
        inv = np.stack([1.0 / ll21, 1.0 / ll32, 1.0 / ll13], axis=-1)[:, :, None]   # (E, 3, 1)
        order = ((0, 1, 2, 3, 4, 5, 6, 7, 8), (8, 6, 7, 2, 0, 1, 5, 3, 4),
                 (4, 5, 3, 7, 8, 6, 1, 2, 0))
        Q = [(2.0 * A / 3.0)[:, None, None] * inv * np.array([b[k] for k in o]).reshape(3, 3)
             for o in order]
        self.Q = Q
        Enat = np.swapaxes(Te, 1, 2) @ D @ Te
        V = A * h
        Kth = np.zeros((E, 3, 3))
        for Qm in (0.5 * (Q[0] + Q[1]), 0.5 * (Q[1] + Q[2]), 0.5 * (Q[2] + Q[0])):
            Kth += np.swapaxes(Qm, 1, 2) @ Enat @ Qm
        Kth *= (V / 3.0)[:, None, None]
        Kh = (2.25 * b0)[:, None, None] * (np.swapaxes(T, 1, 2) @ Kth @ T)
        # K_b = L E L^T / V with L = (h/2) Lh
        Kb = (h / (4.0 * A))[:, None, None] * (L @ D @ np.swapaxes(L, 1, 2))
        self.K = Kb + Kh                              # (E, 9, 9)
        self.B0 = np.swapaxes(L, 1, 2) / (2.0 * A)[:, None, None]   # (E, 3, 9) mean strain

    def mean_strain(self, u: NDArray) -> NDArray:
        """(E, 3) element mean strains (exx, eyy, gxy) of local DOFs ``u (E, 9)``.

        The basic (constant) strain ``L^T u / V``; the higher-order strains average to zero.
        """
        return np.einsum("eij,ej->ei", self.B0, u)
