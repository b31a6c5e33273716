"""The frame-free part of a beam: basic deformations -> generalized strains, stresses, stiffness.

A frame (:mod:`fem.elements.beam.frames2d`, :mod:`fem.elements.beam.frames3d`) reduces the nodal
motion of a 2-node beam to *basic deformations* ``v`` that are invariant under rigid motion:

* 2D: ``v = (u, tp, tq)``: elongation of the chord and the rotations of the two nodes relative to
it;
* 3D: ``v = (u, px, py, pz, qx, qy, qz)``: elongation and the rotation vectors of the nodal triads
  relative to the co-rotated frame (components in that frame).

This module maps ``v`` to the six generalized strains of Meijaard (1993, eqs. 2, 11, 16;
notes/meijaard.md sections 1.2-1.11), written as quadratic polynomials
``eps_k = A_k . v + 1/2 v^T H_k v``:

* the linear part ``A`` is the linearized map (11) in the chord frame: ``eps1 = u``,
  ``eps2 = l0 (qx - px)``, ``eps3 = -l0 py``, ``eps4 = l0 qy``, ``eps5 = -l0 pz``, ``eps6 = l0 qz``;
* the quadratic part ``H`` holds Meijaard's second-order ("modified") strains (16): the elongation
of
  the axis by bending in ``eps1`` (the shallow-arch terms that give the consistent geometric
  stiffness), and the torsion-bending couplings in ``eps2..eps6`` (his exact strains (2) expanded to
  second order in exponential-map rotations, then modified by (16)).

One deliberate difference from Meijaard: the bending strains are *angles* times ``l0``, not chord
projections ``l . e_y``. They agree to second order except for products of the elongation with the
bending rotations, which do not enter any of the buckling problems, and they make pure bending
exact: an end moment ``M`` turns every element by exactly ``M l0 / EI``, so a cantilever under
``2 pi EI / L`` rolls up into a closed polygon whatever the mesh.

Stresses are linear in the strains, ``sigma = S eps`` with Meijaard's ``S`` (5)-(6), Timoshenko
shear through ``Phi = 12 EI / (G A_s l0^2)`` (``Phi = 0`` for Euler-Bernoulli). For Timoshenko
beams the elongation by bending uses the shear-deformable slope of Meijaard's interpolation (13),
which gives Przemieniecki's geometric stiffness with its ``Phi`` terms and Engesser's buckling load
in the limit (the other second-order terms stay shear-free). With ``q = D^T sigma`` and
``D = A + H v`` the basic forces, the basic stiffness is ``D^T S D + sum_k sigma_k H_k``; the second
term is the local part of the geometric stiffness.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

# 3D basic deformation indices
U, PX, PY, PZ, QX, QY, QZ = range(7)

# Quadratic terms (strain k, v_i, v_j, coefficient / l0): eps_k += c l0 v_i v_j.
_QUADRATIC_3D = (
    # eps1: elongation of the axis by bending (shallow-arch terms)
    (0, PY, PY, 2 / 30), (0, PY, QY, -1 / 30), (0, QY, QY, 2 / 30),
    (0, PZ, PZ, 2 / 30), (0, PZ, QZ, -1 / 30), (0, QZ, QZ, 2 / 30),
    # eps2: torsion from bending
    (1, PY, QZ, 1 / 2), (1, PZ, QY, -1 / 2),
    # eps3..eps6: unsymmetric bending from twist
    (2, PX, PZ, -1 / 3), (2, QX, QZ, 1 / 6), (2, QX, PZ, -1 / 6), (2, PX, QZ, -1 / 6),
    (3, QX, QZ, 1 / 3), (3, QX, PZ, 1 / 6), (3, PX, QZ, 1 / 6), (3, PX, PZ, -1 / 6),
    (4, PX, PY, 1 / 3), (4, QX, QY, -1 / 6), (4, QX, PY, 1 / 6), (4, PX, QY, 1 / 6),
    (5, QX, QY, -1 / 3), (5, QX, PY, -1 / 6), (5, PX, QY, -1 / 6), (5, PX, PY, 1 / 6),
)
_QUADRATIC_2D = ((0, 1, 1, 2 / 30), (0, 1, 2, -1 / 30), (0, 2, 2, 2 / 30))


def _hessians(terms, ns: int, nb: int) -> NDArray:
    h = np.zeros((ns, nb, nb))
    for k, i, j, c in terms:
        h[k, i, j] += c
        h[k, j, i] += c
    return h


def _bending_block(EI: NDArray, phi: NDArray, l0: NDArray) -> NDArray:
    """(E, 2, 2) Meijaard's S3/S4 on the pair of bending strains of one plane."""
    f = (EI / ((1 + phi) * l0**3))[:, None, None]
    a, b = 4 + phi, -2 + phi
    return f * np.stack([np.stack([a, b], -1), np.stack([b, a], -1)], -2)


class BasicBeam:
    """Generalized strains, stresses and basic stiffness of a batch of beams.

    Parameters
    ----------
    dim : 2 or 3
    l0 : (E,) reference lengths
    EA, GJ, EIy, EIz : (E,) section stiffnesses (GJ, EIy unused in 2D)
    GAy, GAz : (E,) shear stiffnesses, ``inf`` for Euler-Bernoulli
    nonlinear : include the second-order strains in the response (co-rotational beams); a linear
        beam still uses them for its geometric stiffness in buckling analyses
    """

    def __init__(self, dim, l0, EA, GJ, EIy, EIz, GAy, GAz, nonlinear=True):
        self.dim = dim
        self.nonlinear = nonlinear
        E = len(l0)
        self.l0 = l0
        self.EIy, self.EIz, self.GJ, self.GAy, self.GAz = EIy, EIz, GJ, GAy, GAz
        phi_y = np.where(np.isinf(GAy), 0.0, 12 * EIz / (GAy * l0**2))   # shear in y: x-y plane
        phi_z = np.where(np.isinf(GAz), 0.0, 12 * EIy / (GAz * l0**2))   # shear in z: x-z plane
        if dim == 2:
            self.nb, self.ns = 3, 3
            A = np.zeros((E, 3, 3))
            A[:, 0, 0], A[:, 1, 1], A[:, 2, 2] = 1.0, -l0, l0
            S = np.zeros((E, 3, 3))
            S[:, 0, 0] = EA / l0
            S[:, 1:, 1:] = _bending_block(EIz, phi_y, l0)
            H = _hessians(_QUADRATIC_2D, 3, 3)
        else:
            self.nb, self.ns = 7, 6
            A = np.zeros((E, 6, 7))
            A[:, 0, U] = 1.0
            A[:, 1, QX], A[:, 1, PX] = l0, -l0
            A[:, 2, PY], A[:, 3, QY] = -l0, l0
            A[:, 4, PZ], A[:, 5, QZ] = -l0, l0
            S = np.zeros((E, 6, 6))
            S[:, 0, 0] = EA / l0
            S[:, 1, 1] = GJ / l0**3
            S[:, 2:4, 2:4] = _bending_block(EIy, phi_z, l0)
            S[:, 4:6, 4:6] = _bending_block(EIz, phi_y, l0)
            H = _hessians(_QUADRATIC_3D, 6, 7)
        self.A, self.S = A, S
        self.H0 = H                                # (ns, nb, nb); element k's H is l0[k] * H0
        # Timoshenko: the shear-deformable interpolation (Meijaard eq. 13) makes the slope of the
        # axis h1 p + h2 q - c g (p + q) with c = Phi / (2 + 2 Phi), g = h1 + h2, so the
        # elongation 1/2 int slope^2 gains k (p + q)^2, k = (c^2 - c) / 10, over the shear-free
        # terms of H0 (zero in pure bending, p = -q). Without it a shear-flexible column would
        # buckle below Engesser's load, as if its shear stiffness were G A_s - P / 5.
        planes = [(phi_y, 1, 2)] if dim == 2 else [(phi_z, PY, QY), (phi_y, PZ, QZ)]
        self.shear_arch = [((c * c - c) / 10, i, j) for c, i, j in
                           ((phi / (2 + 2 * phi), i, j) for phi, i, j in planes) if np.any(c)]

    # --- strains ------------------------------------------------------------------------------
    def strain(self, v: NDArray) -> NDArray:
        """(E, ns) generalized strains of basic deformations ``v (E, nb)``."""
        eps = np.einsum("ekb,eb->ek", self.A, v)
        if self.nonlinear:
            Hv = np.einsum("kij,ej->eki", self.H0, v)
            eps += 0.5 * self.l0[:, None] * np.einsum("eki,ei->ek", Hv, v)
            for k, i, j in self.shear_arch:
                eps[:, 0] += self.l0 * k * (v[:, i] + v[:, j]) ** 2
        return eps

    def strain_jacobian(self, v: NDArray) -> NDArray:
        """(E, ns, nb) ``D = d eps / d v``."""
        if not self.nonlinear:
            return self.A
        D = self.A + self.l0[:, None, None] * np.einsum("kij,ej->eki", self.H0, v)
        for k, i, j in self.shear_arch:
            d = 2 * self.l0 * k * (v[:, i] + v[:, j])
            D[:, 0, i] += d
            D[:, 0, j] += d
        return D

    def stress_hessian(self, sigma: NDArray) -> NDArray:
        """(E, nb, nb) ``sum_k sigma_k H_k``: the local geometric stiffness."""
        G = self.l0[:, None, None] * np.einsum("ek,kij->eij", sigma, self.H0)
        for k, i, j in self.shear_arch:
            g = 2 * self.l0 * k * sigma[:, 0]
            for a in (i, j):
                G[:, a, i] += g
                G[:, a, j] += g
        return G

    # --- response -----------------------------------------------------------------------------
    def response(self, v: NDArray) -> tuple[NDArray, NDArray, NDArray]:
        """Stresses ``sigma (E, ns)``, strain Jacobian ``D (E, ns, nb)``, basic forces ``q``."""
        D = self.strain_jacobian(v)
        sigma = (self.S @ self.strain(v)[:, :, None])[:, :, 0]
        q = np.einsum("ekb,ek->eb", D, sigma)
        return sigma, D, q

    def material_stiffness(self, D: NDArray) -> NDArray:
        """(E, nb, nb) ``D^T S D``."""
        return np.swapaxes(D, 1, 2) @ (self.S @ D)

    def energy(self, v: NDArray) -> NDArray:
        """(E,) ``1/2 eps^T S eps``."""
        eps = self.strain(v)
        return 0.5 * np.einsum("ek,ekl,el->e", eps, self.S, eps)

    def section_forces(self, q: NDArray, length: NDArray) -> dict[str, NDArray]:
        """Section forces at the element ends from the basic forces ``q`` (E, nb).

        ``q`` holds the axial force and the end moments the nodes apply to the element, in the
        co-rotated frame, so these are in equilibrium with the nodal forces (with the second-order
        strains the generalized stresses alone are not). Internal moments: ``M(0) = -m_p``,
        ``M(l) = m_q``. 2D: ``N, V, M1, M2``. 3D: ``N, T, Vy, Vz, My1, My2, Mz1, Mz2``; moments are
        about the local axes, ``Vy = -dMz/dx``, ``Vz = dMy/dx`` over the current chord ``length``.
        """
        if self.dim == 2:
            m1, m2 = -q[:, 1], q[:, 2]
            return {"N": q[:, 0], "V": (m1 - m2) / length, "M1": m1, "M2": m2}
        my1, my2, mz1, mz2 = -q[:, PY], q[:, QY], -q[:, PZ], q[:, QZ]
        return {"N": q[:, 0], "T": q[:, QX], "Vy": (mz1 - mz2) / length,
                "Vz": (my2 - my1) / length, "My1": my1, "My2": my2, "Mz1": mz1, "Mz2": mz2}
