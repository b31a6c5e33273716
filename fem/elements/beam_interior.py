"""Interior (bubble) modes of a 2-node beam, for linear buckling.

The nodal interpolation of a beam (cubic transverse displacements, linear twist) is exact for the
pre-buckling state of a prismatic member under end loads, but a buckling mode is no cubic: with
the consistent geometric stiffness, flexural buckling loads converge as ``h^4`` and
lateral-torsional ones, whose twist is linear in each element, only as ``h^2`` (Meijaard 1993,
section 3). A buckling step may therefore enlarge the Ritz space of the eigenproblem by interior
modes that vanish at both nodes (the transverse ones with their slopes):

* a quartic bubble of each transverse displacement, ``u = 16 l0 xi^2 (1 - xi)^2 a`` (peak ``l0 a``);
* a quadratic bubble of the twist, ``phi = 4 xi (1 - xi) a`` (peak ``a``).

They are orthogonal to the nodal modes in the elastic energy of a prismatic member (the nodal
curvatures are linear and the twist rate constant, and ``int (c0 + c1 xi) w_b'' = 0``,
``int phi_b' = 0`` for these bubbles), so
they leave linear statics and the pre-buckling stresses unchanged; they couple only through the
stresses. Their blocks are the Hessians of the second-order energy of a straight beam under the
stress resultants, Meijaard's strains (10) with ``phi_y = -u_z'``, ``phi_z = u_y'`` (no shear in
the bubbles) contracted with the stresses as in his energy (14):

    W2 = int [ N (u_y'^2 + u_z'^2) / 2 + T u_z' u_y'' + M_y phi u_y'' + M_z phi u_z'' ] ds,

``N`` and the torque ``T`` constant, ``M_y``, ``M_z`` linear between the end values given by the
generalized stresses (``M_y = l0 sigma3 .. l0 sigma4``, ``M_z = l0 sigma5 .. l0 sigma6``,
``T = l0 sigma2``; notes/meijaard.md section 1.3). The nodal fields are written in the chord frame
from the basic deformations of :mod:`fem.elements.beam_basic`; their difference from other local
frames is a rigid rotation, i.e. constant slopes and twist, which drop out of every coupling with a
bubble. Four Gauss points integrate every product exactly (degree 6 at most).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from fem.elements.beam_basic import PX, PY, PZ, QX, QY, QZ

_G, _W = np.polynomial.legendre.leggauss(4)
XI, WEIGHT = (_G + 1) / 2, _W / 2

N_INTERIOR = {2: 1, 3: 3}      # 2D: transverse bubble; 3D: y and z bubbles, twist bubble


def _shapes(xi: float):
    """Slopes and l0-scaled curvatures at ``xi`` of the nodal rotations and of the bubble."""
    h1, h2 = 1 - 4 * xi + 3 * xi**2, -2 * xi + 3 * xi**2          # slope from p and q rotations
    c1, c2 = -4 + 6 * xi, -2 + 6 * xi                             # l0 * curvature from them
    b1 = 16 * (2 * xi - 6 * xi**2 + 4 * xi**3)                    # bubble slope
    b2 = 16 * (2 - 12 * xi + 12 * xi**2)                          # l0 * bubble curvature
    return h1, h2, c1, c2, b1, b2


def geometric(dim: int, l0: NDArray, sigma: NDArray) -> tuple[NDArray, NDArray]:
    """Couplings ``(E, nb, ni)`` of basic deformations with interior modes, and ``(E, ni, ni)``.

    Hessians of ``W2`` for the generalized stresses ``sigma (E, ns)``.
    """
    E = len(l0)
    nb = 3 if dim == 2 else 7
    n = nb + N_INTERIOR[dim]
    G = np.zeros((E, n, n))
    for xi, w in zip(XI, WEIGHT, strict=True):
        h1, h2, c1, c2, b1, b2 = _shapes(xi)
        uy1 = np.zeros(n)           # d u_y' / d(v, a); the curvatures are these over l0
        uy2 = np.zeros(n)
        if dim == 2:
            uy1[[1, 2, 3]] = h1, h2, b1
            G += (w * l0 * sigma[:, 0])[:, None, None] * np.outer(uy1, uy1)
            continue
        uz1, uz2, phi = np.zeros(n), np.zeros(n), np.zeros(n)
        uy1[[PZ, QZ, 7]] = h1, h2, b1
        uy2[[PZ, QZ, 7]] = c1, c2, b2
        uz1[[PY, QY, 8]] = -h1, -h2, b1
        uz2[[PY, QY, 8]] = -c1, -c2, b2
        phi[[PX, QX, 9]] = 1 - xi, xi, 4 * xi * (1 - xi)
        N, T = sigma[:, 0], l0 * sigma[:, 1]
        My = l0 * ((1 - xi) * sigma[:, 2] + xi * sigma[:, 3])
        Mz = l0 * ((1 - xi) * sigma[:, 4] + xi * sigma[:, 5])
        # ds = l0 dxi; every second-derivative factor carries 1 / l0
        G += (w * l0 * N)[:, None, None] * (np.outer(uy1, uy1) + np.outer(uz1, uz1))
        for f, a, b in ((T, uz1, uy2), (My, phi, uy2), (Mz, phi, uz2)):
            G += (w * f)[:, None, None] * (np.outer(a, b) + np.outer(b, a))
    return G[:, :nb, nb:], G[:, nb:, nb:]


def material(dim: int, l0: NDArray, EIy: NDArray, EIz: NDArray, GJ: NDArray) -> NDArray:
    """(E, ni, ni) elastic stiffness of the interior modes (diagonal)."""
    bend = sum(w * _shapes(xi)[5] ** 2 for xi, w in zip(XI, WEIGHT, strict=True)) / l0
    if dim == 2:
        return (EIz * bend)[:, None, None]
    twist = sum(w * (4 * (1 - 2 * xi)) ** 2 for xi, w in zip(XI, WEIGHT, strict=True)) / l0
    K = np.zeros((len(l0), 3, 3))
    K[:, 0, 0], K[:, 1, 1], K[:, 2, 2] = EIz * bend, EIy * bend, GJ * twist
    return K
