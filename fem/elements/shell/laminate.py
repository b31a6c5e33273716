"""Layered (laminate) shell sections: classical lamination theory (CLT), vectorized over facets.

R. M. Jones, *Mechanics of Composite Materials*, 2nd ed. (1999), sections 2.6 and 4.2-4.3;
J. N. Reddy, *Mechanics of Laminated Composite Plates and Shells*, 2nd ed. (2004), sections 2.3
and 3.3. Each layer ``k`` is a plane-stress layer between ``z_{k-1}`` and ``z_k`` (from the bottom,
``-h/2``, to the top, ``+h/2``, along the facet normal ``e3``), with reduced stiffness ``Q_k`` in
its material axes (Jones eq. 2.61: ``Q11 = E1 / (1 - nu12 nu21)``, ``Q12 = nu12 E2 / (1 - nu12
nu21)``, ``Q22 = E2 / (1 - nu12 nu21)``, ``Q66 = G12``, ``nu21 = nu12 E2 / E1``; an isotropic
layer's is the plane-stress matrix). With membrane strains ``eps`` and curvatures ``kappa`` of the
reference (mid-) surface, ``e(z) = eps + z kappa`` and (Jones eq. 4.22; Reddy eq. 3.3.14)::

    N = A eps + B kappa,   M = B eps + D kappa,
    (A, B, D) = sum_k Qbar_k (z_k - z_{k-1}, (z_k^2 - z_{k-1}^2) / 2, (z_k^3 - z_{k-1}^3) / 3)

``Qbar_k = T_k^T Q_k T_k`` is the layer's stiffness in the element axes, ``T_k`` the map of
engineering strains from the element axes to the layer's material axes turned by ``psi_k``
(Jones eq. 2.79-2.83; it equals Jones's ``T^-1 Q R T R^-1``)::

    e_11 = c^2 e_x + s^2 e_y + c s g_xy,   e_22 = s^2 e_x + c^2 e_y - c s g_xy,
    g_12 = -2 c s e_x + 2 c s e_y + (c^2 - s^2) g_xy          (c, s = cos, sin psi_k)

**Orientation.** A layer's angle ``theta_k`` (degrees) is measured about the facet normal ``e3``
(counter-clockwise seen from ``+e3``, ``e3 = (x2 - x1) x (x3 - x1)``) from the projection of a
``direction`` vector on the facet (default global x): ``psi_k = phi + theta_k`` with ``phi`` the
angle of the projection from the facet's ``e1``. A direction normal to a facet gives it no
in-plane axis and is refused. "Bottom" and "top" follow ``e3``, so a laminate needs consistently
oriented triangles.

**Inertia** per reference area: the mass ``sum rho_k (z_k - z_{k-1})``, the first moment
``sum rho_k (z_k^2 - z_{k-1}^2) / 2`` (zero for a stack symmetric in density) and the rotary
inertia ``sum rho_k (z_k^3 - z_{k-1}^3) / 3``, all about the mid-surface.

**Layer stresses** (outputs): at the bottom and top of each layer, ``Qbar_k (eps + z kappa)`` in
the element axes, from the element's mean strains and curvatures (as its mean ``N`` and ``M``);
:mod:`fem.elements.shell.results` turns them to the global, chosen and material axes (the latter
``Q_k T_k (eps + z kappa)``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from fem.elements.shell.membrane import plane_stress
from fem.model import OrthotropicMaterial, ShellSection

#: a direction within this fraction of its length of a facet's normal has no usable projection
NORMAL_TOLERANCE = 1e-6


def reduced_stiffness(mat) -> NDArray:
    """(3, 3) plane-stress stiffness of a layer material in its material axes (Jones eq. 2.61).

    >>> from fem.model import OrthotropicMaterial
    >>> Q = reduced_stiffness(OrthotropicMaterial("m", E1=25.0, E2=1.0, G12=0.5, nu12=0.25))
    >>> np.round(Q, 4).tolist()
    [[25.0628, 0.2506, 0.0], [0.2506, 1.0025, 0.0], [0.0, 0.0, 0.5]]
    """
    if not isinstance(mat, OrthotropicMaterial):
        return plane_stress(mat.E, mat.nu)
    nu21 = mat.nu12 * mat.E2 / mat.E1
    d = 1.0 - mat.nu12 * nu21
    return np.array([[mat.E1 / d, mat.nu12 * mat.E2 / d, 0.0],
                     [mat.nu12 * mat.E2 / d, mat.E2 / d, 0.0],
                     [0.0, 0.0, mat.G12]])


def strain_rotation(psi: NDArray) -> NDArray:
    """(..., 3, 3) ``T``: engineering strains, element axes -> axes turned by ``psi`` (rad)."""
    c, s = np.cos(psi), np.sin(psi)
    T = np.empty(np.shape(psi) + (3, 3))
    T[..., 0, 0], T[..., 0, 1], T[..., 0, 2] = c * c, s * s, c * s
    T[..., 1, 0], T[..., 1, 1], T[..., 1, 2] = s * s, c * c, -c * s
    T[..., 2, 0], T[..., 2, 1], T[..., 2, 2] = -2 * c * s, 2 * c * s, c * c - s * s
    return T


def interfaces(section: ShellSection) -> NDArray:
    """(n + 1,) ``z`` of the layer interfaces, bottom ``-h/2`` to top ``h/2``."""
    t = np.array([ly.thickness for ly in section.layers])
    z = np.concatenate([[0.0], np.cumsum(t)])
    return z - z[-1] / 2


def facet_angles(T: NDArray, direction: NDArray) -> tuple[NDArray, NDArray]:
    """``phi (E,)``: angle of ``direction``'s projection from each facet's ``e1``; ``normal (E,)``.

    ``T (E, 3, 3)``: facet frames, rows ``e1, e2, e3``. ``normal`` marks the facets to which the
    direction is normal (its projection shorter than :data:`NORMAL_TOLERANCE` of its length).
    """
    d = np.asarray(direction, dtype=float)
    c, s = T[:, 0] @ d, T[:, 1] @ d
    normal = ~(np.hypot(c, s) > NORMAL_TOLERANCE * np.linalg.norm(d))
    return np.arctan2(s, c), normal


@dataclass
class Stack:
    """The CLT data of a group of facets sharing one section (see the module docstring).

    Attributes
    ----------
    section : the layers
    phi : (E,) angle of the projected direction from each facet's ``e1`` (rad)
    A, B, D : (E, 3, 3) membrane, coupling and bending stiffness, element axes
    h : (E,) thickness
    rho_h, rho_s, rho_i : (E,) mass, first moment and rotary inertia per area (mid-surface)
    """

    section: ShellSection
    phi: NDArray
    A: NDArray
    B: NDArray
    D: NDArray
    h: NDArray
    rho_h: NDArray
    rho_s: NDArray
    rho_i: NDArray

    @classmethod
    def of(cls, section: ShellSection, T: NDArray, direction=(1.0, 0.0, 0.0)) -> Stack:
        """The stack of ``section`` on facets with frames ``T (E, 3, 3)`` (rows e1 e2 e3)."""
        phi, normal = facet_angles(T, direction)
        if np.any(normal):
            raise ValueError(f"direction {list(direction)} is normal to facet "
                             f"{int(np.flatnonzero(normal)[0])}: no in-plane layer axis")
        z = interfaces(section)
        E = len(T)
        A, B, D = (np.zeros((E, 3, 3)) for _ in range(3))
        mass = np.zeros(3)
        for k, ly in enumerate(section.layers):
            Qb = cls._qbar(ly, phi)
            z0, z1 = z[k], z[k + 1]
            A += (z1 - z0) * Qb
            B += 0.5 * (z1**2 - z0**2) * Qb
            D += (z1**3 - z0**3) / 3.0 * Qb
            mass += ly.material.rho * np.array([z1 - z0, 0.5 * (z1**2 - z0**2),
                                                (z1**3 - z0**3) / 3.0])
        one = np.ones(E)
        return cls(section, phi, A, B, D, (z[-1] - z[0]) * one, mass[0] * one, mass[1] * one,
                   mass[2] * one)

    @staticmethod
    def _qbar(layer, phi: NDArray) -> NDArray:
        """(E, 3, 3) a layer's stiffness in the element axes of facets at angles ``phi``."""
        Q = reduced_stiffness(layer.material)
        if not isinstance(layer.material, OrthotropicMaterial):
            return np.broadcast_to(Q, (len(phi), 3, 3))      # isotropic: no turn needed
        Tk = strain_rotation(phi + np.radians(layer.angle))
        return np.swapaxes(Tk, 1, 2) @ Q @ Tk

    def poisson(self) -> NDArray:
        """(E,) the membrane's effective Poisson ratio ``A12 / sqrt(A11 A22)`` (OPT's beta_0)."""
        return self.A[:, 0, 1] / np.sqrt(self.A[:, 0, 0] * self.A[:, 1, 1])

    def generalized(self, eps: NDArray, kap: NDArray) -> tuple[NDArray, NDArray]:
        """``N (E, 3)``, ``M (E, 3)`` of strains ``eps (E, 3)`` and curvatures ``kap (E, 3)``."""
        N = np.einsum("eij,ej->ei", self.A, eps) + np.einsum("eij,ej->ei", self.B, kap)
        M = np.einsum("eij,ej->ei", self.B, eps) + np.einsum("eij,ej->ei", self.D, kap)
        return N, M

    def faces(self, eps: NDArray, kap: NDArray) -> list[tuple[str, NDArray, NDArray]]:
        """The stresses at the bottom and top of each layer: ``[(name, psi, s), ...]``.

        ``name`` is ``layer<k>_<bottom|top>`` (``k`` from 1 at the bottom), ``psi (E,)`` the angle
        of the layer's material axis 1 from each facet's ``e1`` (rad) and ``s (E, 3)`` the
        stresses ``Qbar_k (eps + z kappa)`` in the element axes (``xx, yy, xy``); turned by
        ``psi`` they are ``Q_k T_k (eps + z kappa)``, the material-axis stresses.
        """
        z = interfaces(self.section)
        out = []
        for k, ly in enumerate(self.section.layers):
            Qb = self._qbar(ly, self.phi)
            psi = self.phi + np.radians(ly.angle)
            for where, zz in (("bottom", z[k]), ("top", z[k + 1])):
                out.append((f"layer{k + 1}_{where}", psi,
                            np.einsum("eij,ej->ei", Qb, eps + zz * kap)))
        return out
