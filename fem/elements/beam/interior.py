"""Interior (bubble) modes of a 2-node beam, for linear buckling.

The nodal interpolation of a beam (cubic transverse displacements, linear twist) is exact for the
pre-buckling state of a prismatic member under end loads, but a buckling mode is no cubic: with
the consistent geometric stiffness, flexural buckling loads converge as ``h^4`` and
lateral-torsional ones, whose twist is linear in each element, only as ``h^2`` (Meijaard 1993,
section 3). A buckling step may therefore enlarge the Ritz space of the eigenproblem by interior
modes that vanish at both nodes (the transverse ones with their slopes):

* a quartic bubble of each transverse displacement, ``u = 16 l0 xi^2 (1 - xi)^2 a`` (peak ``l0 a``),
  with the cross-section turning with it (no shear);
* a quadratic bubble of the twist, ``phi = 4 xi (1 - xi) a`` (peak ``a``);
* Timoshenko beams: a quadratic shear bubble of each transverse displacement,
  ``u = 4 l0 xi (1 - xi) a``, the cross-section not turning (pure shear). The nodal interpolation
  of a shear-deformable element tends to a quadratic displacement in fine meshes (``Phi ~ h^-2``),
  which alone converges at order 2; the shear bubble restores order 4.

They are orthogonal to the nodal modes in the elastic energy of a prismatic member (the nodal
curvatures are linear, the twist rate and shear strain constant, and ``int (c0 + c1 xi) w_b'' = 0``,
``int phi_b' = 0``, ``int w_s' = 0`` for these bubbles), so they leave linear statics and the
pre-buckling stresses unchanged; they couple only through the stresses. Their blocks are the
Hessians of the second-order energy of a straight beam under the stress resultants, Meijaard's
strains (10) contracted with the stresses as in his energy (14):

    W2 = int [ N (u_y'^2 + u_z'^2) / 2 - T phi_y phi_z' + M_y phi phi_z' - M_z phi phi_y' ] ds,

``N`` and the torque ``T`` constant, ``M_y``, ``M_z`` linear between the end values given by the
generalized stresses (``M_y = l0 sigma3 .. l0 sigma4``, ``M_z = l0 sigma5 .. l0 sigma6``,
``T = l0 sigma2``; notes/meijaard.md section 1.3). The rotations ``phi_y``, ``phi_z`` are
``-u_z'``, ``u_y'`` for the nodal and bending modes; a shear bubble moves ``u`` without turning the
section, so it enters the ``N`` term only. The nodal fields are the shear-free cubic ones
of :mod:`fem.elements.beam.basic` in the chord frame, written with the basic deformations; their
difference from other local frames is a rigid rotation, i.e. constant slopes and twist, and the
shear term of a Timoshenko element's slope is ``g = h1 + h2`` times a constant: both drop out of
every coupling with a bubble. Four Gauss points integrate every product exactly (degree 6 at most).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from fem.elements.beam.basic import PX, PY, PZ, QX, QY, QZ

_G, _W = np.polynomial.legendre.leggauss(4)
XI, WEIGHT = (_G + 1) / 2, _W / 2


def count(dim: int, shear: bool) -> int:
    """Interior modes per element: bending (one per plane), twist (3D), shear (Timoshenko)."""
    planes = 1 if dim == 2 else 2
    return planes + (dim == 3) + (planes if shear else 0)


def _shapes(xi: float):
    """Slopes and l0-scaled curvatures at ``xi`` of the nodal rotations and of the bubbles."""
    h1, h2 = 1 - 4 * xi + 3 * xi**2, -2 * xi + 3 * xi**2          # slope from p and q rotations
    c1, c2 = -4 + 6 * xi, -2 + 6 * xi                             # l0 * curvature from them
    b1 = 16 * (2 * xi - 6 * xi**2 + 4 * xi**3)                    # bending bubble slope
    b2 = 16 * (2 - 12 * xi + 12 * xi**2)                          # l0 * its curvature
    s1 = 4 * (1 - 2 * xi)                                         # shear bubble slope
    return h1, h2, c1, c2, b1, b2, s1


def geometric(dim: int, l0: NDArray, sigma: NDArray, shear: bool) -> tuple[NDArray, NDArray]:
    """Couplings ``(E, nb, ni)`` of basic deformations with interior modes, and ``(E, ni, ni)``.

    Hessians of ``W2`` for the generalized stresses ``sigma (E, ns)``. Interior modes in order:
    2D ``(bend, shear)``; 3D ``(bend y, bend z, twist, shear y, shear z)``; no shear modes for
    Euler-Bernoulli beams.
    """
    E = len(l0)
    nb = 3 if dim == 2 else 7
    n = nb + count(dim, shear)
    G = np.zeros((E, n, n))
    for xi, w in zip(XI, WEIGHT, strict=True):
        h1, h2, c1, c2, b1, b2, s1 = _shapes(xi)
        if dim == 2:
            uy = np.zeros(n)                   # d u_y' / d(v, a)
            uy[[1, 2, 3]] = h1, h2, b1
            if shear:
                uy[4] = s1
            G += (w * l0 * sigma[:, 0])[:, None, None] * np.outer(uy, uy)
            continue
        # displacement slopes u_y', u_z'; rotations phi_z, -phi_y; l0 * curvatures; twist
        uy, uz, rz, ry, ky, kz, phi = (np.zeros(n) for _ in range(7))
        rz[[PZ, QZ, 7]] = h1, h2, b1
        ry[[PY, QY, 8]] = -h1, -h2, b1           # -phi_y = u_z' without shear
        kz[[PZ, QZ, 7]] = c1, c2, b2             # l0 phi_z'
        ky[[PY, QY, 8]] = -c1, -c2, b2           # -l0 phi_y'
        uy[:], uz[:] = rz, ry
        if shear:
            uy[10], uz[11] = s1, s1
        phi[[PX, QX, 9]] = 1 - xi, xi, 4 * xi * (1 - xi)
        N, T = sigma[:, 0], l0 * sigma[:, 1]
        My = l0 * ((1 - xi) * sigma[:, 2] + xi * sigma[:, 3])
        Mz = l0 * ((1 - xi) * sigma[:, 4] + xi * sigma[:, 5])
        # ds = l0 dxi; every curvature carries 1 / l0
        G += (w * l0 * N)[:, None, None] * (np.outer(uy, uy) + np.outer(uz, uz))
        for f, a, b in ((T, ry, kz), (My, phi, kz), (Mz, phi, ky)):
            G += (w * f)[:, None, None] * (np.outer(a, b) + np.outer(b, a))
    return G[:, :nb, nb:], G[:, nb:, nb:]


def material(dim: int, l0: NDArray, EIy: NDArray, EIz: NDArray, GJ: NDArray, GAy: NDArray,
             GAz: NDArray, shear: bool) -> NDArray:
    """(E, ni, ni) elastic stiffness of the interior modes (diagonal)."""
    quad = zip(XI, WEIGHT, strict=True)
    bend = sum(w * _shapes(xi)[5] ** 2 for xi, w in quad) / l0          # int (l0 w_b'')^2 / l0^3
    slide = 16 / 3 * l0                                                  # int w_s'^2 ds
    twist = 16 / 3 / l0                                                  # int (l0 phi_b')^2 / l0
    diag = [EIz * bend] if dim == 2 else [EIz * bend, EIy * bend, GJ * twist]
    if shear:
        diag += [GAy * slide] if dim == 2 else [GAy * slide, GAz * slide]
    K = np.zeros((len(l0), len(diag), len(diag)))
    for k, d in enumerate(diag):
        K[:, k, k] = d
    return K
