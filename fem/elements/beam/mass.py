"""Beam mass matrices in the local frame, and the local-to-global rotation.

Consistent mass: linear axial and torsional interpolation, cubic Hermite bending, plus the rotary
inertia of the cross-section (Przemieniecki, *Theory of Matrix Structural Analysis*, 1968, eqs.
11.33-11.40). Lumped mass: the HRZ diagonal (Hinton, Rock & Zienkiewicz 1976): ``m l / 2`` per
translation, ``m l^3 / 78`` per bending rotation, plus half the element's rotary inertia.

Local DOF order per node: 2D ``(u, v, theta_z)``; 3D ``(u, v, w, theta_x, theta_y, theta_z)``.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray


def _hermite(L: NDArray, sign: float) -> NDArray:
    """(E, 4, 4) Hermite mass / (m L) on (v1, r1, v2, r2); ``sign = -1`` in the x-z plane."""
    s = sign
    k = np.array([[156, 22 * s, 54, -13 * s], [22 * s, 4, 13 * s, -3],
                  [54, 13 * s, 156, -22 * s], [-13 * s, -3, -22 * s, 4]], dtype=float) / 420
    pw = np.array([0, 1, 0, 1])                  # powers of L on rotation rows/columns
    return np.broadcast_to(k, (len(L), 4, 4)) * L[:, None, None] ** (pw[:, None] + pw[None, :])


def _rotary(L: NDArray, sign: float) -> NDArray:
    """(E, 4, 4) rotary-inertia mass / (rho I / L) on (v1, r1, v2, r2)."""
    s = sign
    k = np.array([[36, 3 * s, -36, 3 * s], [3 * s, 4, -3 * s, -1],
                  [-36, -3 * s, 36, -3 * s], [3 * s, -1, -3 * s, 4]], dtype=float) / 30
    pw = np.array([0, 1, 0, 1])
    return np.broadcast_to(k, (len(L), 4, 4)) * L[:, None, None] ** (pw[:, None] + pw[None, :])


def local_mass(dim: int, L: NDArray, m: NDArray, rIy: NDArray, rIz: NDArray, rIp: NDArray,
               lumped: bool = False) -> NDArray:
    """(E, nd, nd) local mass of beams of length ``L``, mass per length ``m`` (= rho A).

    ``rIy, rIz`` are rotary inertias per length (rho Iy, rho Iz), ``rIp`` the polar one.
    """
    E = len(L)
    nd = 6 if dim == 2 else 12
    ndn = nd // 2
    M = np.zeros((E, nd, nd))
    ax = [0, ndn]
    if lumped:
        trans = [0, 1] if dim == 2 else [0, 1, 2]
        bend = [2] if dim == 2 else [4, 5]
        rot_inertia = {2: rIz} if dim == 2 else {4: rIy, 5: rIz}
        for node in range(2):
            o = node * ndn
            for i in trans:
                M[:, o + i, o + i] = m * L / 2
            for i in bend:
                M[:, o + i, o + i] = m * L**3 / 78 + rot_inertia[i] * L / 2
            if dim == 3:
                M[:, o + 3, o + 3] = rIp * L / 2
        return M
    M[np.ix_(range(E), ax, ax)] = (m * L / 6)[:, None, None] * np.array([[2, 1], [1, 2]])
    planes = [([1, 2], rIz, 1.0)] if dim == 2 else [([1, 5], rIz, 1.0), ([2, 4], rIy, -1.0)]
    for (t, r), rI, sign in planes:
        idx = [t, r, ndn + t, ndn + r]
        M[np.ix_(range(E), idx, idx)] += ((m * L)[:, None, None] * _hermite(L, sign)
                                          + (rI / L)[:, None, None] * _rotary(L, sign))
    if dim == 3:
        tx = [3, ndn + 3]
        M[np.ix_(range(E), tx, tx)] += (rIp * L / 6)[:, None, None] * np.array([[2, 1], [1, 2]])
    return M


def rotation_blocks(dim: int, E0: NDArray) -> NDArray:
    """(E, nd, nd) block-diagonal ``T``, ``d_local = T d_global``; ``E0 (E, 3, 3)`` local axes."""
    E = len(E0)
    RT = np.swapaxes(E0, 1, 2)
    if dim == 2:
        T = np.zeros((E, 6, 6))
        for o in (0, 3):
            T[:, o:o + 2, o:o + 2] = RT[:, :2, :2]
            T[:, o + 2, o + 2] = 1.0
        return T
    T = np.zeros((E, 12, 12))
    for o in (0, 3, 6, 9):
        T[:, o:o + 3, o:o + 3] = RT
    return T
