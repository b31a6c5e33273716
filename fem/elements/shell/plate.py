"""The discrete Kirchhoff triangle (DKT) plate of Batoz, Bathe & Ho, vectorized.

J.-L. Batoz, K.-J. Bathe, L.-W. Ho, *A study of three-node triangular plate bending elements*,
IJNME 15 (1980) 1771-1812, section 3 (DKT), eqs. (31)-(42): the normal's rotations
``beta_x, beta_y`` are quadratic, made to satisfy the Kirchhoff hypothesis at the corners and
side midpoints and to vary linearly along the sides' normals; eliminating the midside values leaves
``beta_x = H_x(xi, eta)^T U``, ``beta_y = H_y^T U`` with ``U = (w, theta_x, theta_y)`` per node
and ``theta_x = w,y``, ``theta_y = -w,x`` (the nodal rotation vector's in-plane components,
right-handed about the element axes). The curvatures ``kappa = (beta_x,x, beta_y,y, beta_x,y +
beta_y,x)`` are linear, ``M = D_b kappa`` with ``D_b = h^3/12 D`` (``M = int z sigma dz``, ``z``
along the element normal), and the stiffness ``int B^T D_b B dA`` is exact with the 3-point
midpoint rule. DKT passes the constant-curvature patch test (Batoz et al., section 5.1).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

#: the midpoint rule: (xi, eta) of the side midpoints, each of weight A/3
GAUSS = ((0.5, 0.0), (0.5, 0.5), (0.0, 0.5))


def _shape_derivatives(xi: float, eta: float) -> NDArray:
    """(2, 6) d/d(xi, eta) of the quadratic N1..N6 (N4 on side 23, N5 on 31, N6 on 12)."""
    lam = 1.0 - xi - eta
    return np.array([[1.0 - 4.0 * lam, 4.0 * xi - 1.0, 0.0, 4.0 * eta, -4.0 * eta,
                      4.0 * (lam - xi)],
                     [1.0 - 4.0 * lam, 0.0, 4.0 * eta - 1.0, 4.0 * xi, 4.0 * (lam - eta),
                      -4.0 * xi]])


class DKTPlate:
    """Stiffness and curvatures of a batch of DKT triangles.

    Parameters
    ----------
    xy : (E, 3, 2) corner coordinates in each element's plane, counter-clockwise
    Db : (E, 3, 3) bending rigidity ``h^3/12 D``
    """

    def __init__(self, xy: NDArray, Db: NDArray):
        x, y = xy[..., 0], xy[..., 1]
        E = len(xy)
        # sides k = 4, 5, 6 join nodes (2, 3), (3, 1), (1, 2): x_ij = x_i - x_j
        i, j = np.array([1, 2, 0]), np.array([2, 0, 1])
        xij, yij = x[:, i] - x[:, j], y[:, i] - y[:, j]               # (E, 3) sides 4, 5, 6
        l2 = xij**2 + yij**2
        a, b = -xij / l2, 0.75 * xij * yij / l2
        c, d = (0.25 * xij**2 - 0.5 * yij**2) / l2, -yij / l2
        e = (0.25 * yij**2 - 0.5 * xij**2) / l2
        # H_x = Cx N, H_y = Cy N with N = (N1..N6); node n's two adjacent sides are (s, t):
        # node 1: sides 6 and 5, node 2: sides 4 and 6, node 3: sides 5 and 4 (Batoz eq. 42)
        Cx = np.zeros((E, 9, 6))
        Cy = np.zeros((E, 9, 6))
        for n, (s, t) in enumerate(((2, 1), (0, 2), (1, 0))):      # indices into sides 4, 5, 6
            ks, kt = 3 + s, 3 + t                                  # columns of N4..N6
            r = 3 * n
            Cx[:, r, ks], Cx[:, r, kt] = 1.5 * a[:, s], -1.5 * a[:, t]
            Cx[:, r + 1, ks], Cx[:, r + 1, kt] = b[:, s], b[:, t]
            Cx[:, r + 2, n] = 1.0
            Cx[:, r + 2, ks], Cx[:, r + 2, kt] = -c[:, s], -c[:, t]
            Cy[:, r, ks], Cy[:, r, kt] = 1.5 * d[:, s], -1.5 * d[:, t]
            Cy[:, r + 1, n] = -1.0
            Cy[:, r + 1, ks], Cy[:, r + 1, kt] = e[:, s], e[:, t]
            Cy[:, r + 2] = -Cx[:, r + 1]
        x21, y21 = x[:, 1] - x[:, 0], y[:, 1] - y[:, 0]
        x31, y31 = x[:, 2] - x[:, 0], y[:, 2] - y[:, 0]
        A2 = x21 * y31 - x31 * y21
        self.area = 0.5 * A2
        # d/dx = (y31 d/dxi - y21 d/deta) / 2A, d/dy = (-x31 d/dxi + x21 d/deta) / 2A
        self.B = np.stack([self._curvature(Cx, Cy, x21, y21, x31, y31, A2, p) for p in GAUSS],
                          axis=1)                                  # (E, 3, 3, 9)
        self.K = (self.area / 3.0)[:, None, None] * np.einsum(
            "eqki,ekl,eqlj->eij", self.B, Db, self.B)

    @staticmethod
    def _curvature(Cx, Cy, x21, y21, x31, y31, A2, point) -> NDArray:
        """(E, 3, 9) ``kappa = B U`` at ``point = (xi, eta)``."""
        dN = _shape_derivatives(*point)                           # (2, 6)
        hx_xi, hx_eta = Cx @ dN[0], Cx @ dN[1]                    # (E, 9)
        hy_xi, hy_eta = Cy @ dN[0], Cy @ dN[1]
        inv = (1.0 / A2)[:, None]
        hx_x = inv * (y31[:, None] * hx_xi - y21[:, None] * hx_eta)
        hx_y = inv * (-x31[:, None] * hx_xi + x21[:, None] * hx_eta)
        hy_x = inv * (y31[:, None] * hy_xi - y21[:, None] * hy_eta)
        hy_y = inv * (-x31[:, None] * hy_xi + x21[:, None] * hy_eta)
        return np.stack([hx_x, hy_y, hx_y + hy_x], axis=1)

    def mean_curvature(self, U: NDArray) -> NDArray:
        """(E, 3) element mean curvatures of local DOFs ``U (E, 9)`` (the Gauss points' mean)."""
        return np.einsum("eqij,ej->ei", self.B, U) / 3.0


def _collapsed_gauss(n: int = 4) -> tuple[NDArray, NDArray]:
    """Area coordinates ``(nq, 3)`` and weights ``(nq,)`` (summing to 1) on the triangle.

    The tensor Gauss-Legendre rule of ``n x n`` points on the square mapped to the triangle
    (``xi = s``, ``eta = t (1 - s)``, Jacobian ``1 - s``): exact for polynomials of degree
    ``2 n - 2``, so ``n = 4`` integrates the products of two cubics.
    """
    g, w = np.polynomial.legendre.leggauss(n)
    g, w = (g + 1) / 2, w / 2
    s, t = np.meshgrid(g, g, indexing="ij")
    ws = np.outer(w, w) * (1 - s)
    xi, eta = s.ravel(), (t * (1 - s)).ravel()
    return np.column_stack([1 - xi - eta, xi, eta]), 2.0 * ws.ravel()


#: the cubic terms ``L_a^2 L_b + L1 L2 L3 / 2`` of the BCIZ triangle, (a, b) pairs
_CUBIC = ((0, 1), (0, 2), (1, 0), (1, 2), (2, 0), (2, 1))


def deflection_mass(xy: NDArray, rho_h: NDArray) -> NDArray:
    """(E, 9, 9) consistent mass ``rho h int N^T N dA`` of the deflection, DOFs ``(w, th_x, th_y)``.

    The DKT has no deflection field inside the element; its mass takes the cubic of the BCIZ
    triangle (Bazeley, Cheung, Irons & Zienkiewicz 1965; Zienkiewicz & Taylor, *The Finite
    Element Method*, vol. 2, section 4.8): the span of ``L_i`` and ``L_a^2 L_b + L1 L2 L3 / 2``
    fitted to ``w``, ``theta_x = w,y`` and ``theta_y = -w,x`` at the corners (a batched 9 x 9
    solve), integrated exactly (:func:`_collapsed_gauss`).
    """
    x, y = xy[..., 0], xy[..., 1]
    E = len(xy)
    j, k = np.array([1, 2, 0]), np.array([2, 0, 1])
    b, c = y[:, j] - y[:, k], x[:, k] - x[:, j]                      # (E, 3)
    A2 = np.sum(x * b, axis=1)                                         # 2 A
    # conditions at the corners: rows (w, w,y, -w,x) per node, columns the 9 terms
    C = np.zeros((E, 9, 9))
    for n in range(3):
        C[:, 3 * n, n] = 1.0
        terms = [(i, i) for i in range(3)]                  # P = L_i: dP/dL_i = 1 everywhere
        terms += [(3 + m, ab[1]) for m, ab in enumerate(_CUBIC) if ab[0] == n]
        for col, i in terms:                                # P = L_n^2 L_b: dP/dL_b = 1 at n
            C[:, 3 * n + 1, col] = c[:, i] / A2
            C[:, 3 * n + 2, col] = -b[:, i] / A2
    L, w = _collapsed_gauss()
    P = np.empty((len(w), 9))
    P[:, :3] = L
    bubble = L[:, 0] * L[:, 1] * L[:, 2] / 2
    for m, (a, bb) in enumerate(_CUBIC):
        P[:, 3 + m] = L[:, a] ** 2 * L[:, bb] + bubble
    N = np.einsum("qk,ekj->eqj", P, np.linalg.inv(C))                 # (E, nq, 9)
    return (rho_h * A2 / 2)[:, None, None] * np.einsum("q,eqi,eqj->eij", w, N, N)
