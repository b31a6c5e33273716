"""Planar beam frames: nodal motion (ux, uy, rz at two nodes) -> basic deformations (u, tp, tq).

``CorotFrame2D`` follows Crisfield (vol. 1, section 7.3; Crisfield & Shi eqs. 31-37): the chord
rotates by ``psi`` (computed exactly from the chord directions, eq. 33), the elongation is
``u = l - l0`` and the nodal rotations relative to the chord are ``t_a = theta_a - psi`` (wrapped to
``(-pi, pi]`` so nodal rotations may wind up any number of turns). With ``e`` the chord direction
and
``z`` its normal,

    B = [[-e, 0, e, 0], [z/l, 1, -z/l, 0], [z/l, 0, -z/l, 1]]          (rows u, tp, tq)

and the frame's geometric stiffness for basic forces ``q = (N, Mp, Mq)`` acts on the chord vector:
``N z z^T / l + (Mp + Mq)(e z^T + z e^T) / l^2``.

``LinearFrame2D`` freezes ``B`` at the reference geometry (the small-displacement beam); its
geometric stiffness is the co-rotational one at the reference geometry, used by buckling analyses.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from fem.elements.base import outer, unit


@dataclass
class Kinematics2D:
    """Frame quantities of one evaluation, reused by force, tangent and stress."""

    v: NDArray      # (E, 3) basic deformations
    B: NDArray      # (E, 3, 6) d v / d d
    e: NDArray      # (E, 2) chord direction
    z: NDArray      # (E, 2) chord normal
    l: NDArray      # (E,) chord length


def _wrap(angle: NDArray) -> NDArray:
    return np.arctan2(np.sin(angle), np.cos(angle))


class CorotFrame2D:
    """Co-rotational planar frame (Crisfield)."""

    linear = False

    def __init__(self, X: NDArray):
        """``X (E, 2, 3)``: reference nodal coordinates."""
        self.e0, self.l0 = unit((X[:, 1] - X[:, 0])[:, :2])

    def _geometry(self, x: NDArray, theta: NDArray) -> Kinematics2D:
        e, l = unit(x[:, 1, :2] - x[:, 0, :2])
        E = len(l)
        # filled column by column (np.stack's generic path was a good part of a small model's
        # evaluation); the same numbers
        z = np.empty((E, 2))
        np.negative(e[:, 1], out=z[:, 0])
        z[:, 1] = e[:, 0]
        c0, s0 = self.e0[:, 0], self.e0[:, 1]
        psi = np.arctan2(c0 * e[:, 1] - s0 * e[:, 0], c0 * e[:, 0] + s0 * e[:, 1])
        v = np.empty((E, 3))
        np.subtract(l, self.l0, out=v[:, 0])
        v[:, 1] = _wrap(theta[:, 0] - psi)
        v[:, 2] = _wrap(theta[:, 1] - psi)
        B = np.zeros((E, 3, 6))
        B[:, 0, 0:2], B[:, 0, 3:5] = -e, e
        zl = z / l[:, None]
        for row, col in ((1, 2), (2, 5)):
            B[:, row, 0:2], B[:, row, 3:5], B[:, row, col] = zl, -zl, 1.0
        return Kinematics2D(v=v, B=B, e=e, z=z, l=l)

    def kinematics(self, x: NDArray, theta: NDArray, d: NDArray) -> Kinematics2D:
        """Frame of current positions ``x (E, 2, 3)`` and nodal rotations ``theta (E, 2)``.

        ``d (E, 6)``, the element displacement vector, is used by the linear frame only.
        """
        return self._geometry(x, theta)

    def geometric(self, kin: Kinematics2D, q: NDArray) -> NDArray:
        """(E, 6, 6) ``sum_k q_k d^2 v_k / d d^2`` for basic forces ``q (E, 3)``."""
        ez = outer(kin.e, kin.z)
        k = ((q[:, 0] / kin.l)[:, None, None] * outer(kin.z, kin.z)
             + ((q[:, 1] + q[:, 2]) / kin.l**2)[:, None, None] * (ez + np.swapaxes(ez, 1, 2)))
        out = np.zeros((len(q), 6, 6))
        for a, sa in ((0, -1.0), (3, 1.0)):
            for b, sb in ((0, -1.0), (3, 1.0)):
                out[:, a:a + 2, b:b + 2] = sa * sb * k
        return out

    def bw_derivative(self, kin: Kinematics2D, w: NDArray) -> NDArray:
        """(E, 3, 6) derivative of ``B w`` for fixed element vectors ``w (E, 6)``.

        The right-hand contraction of ``dB/dd`` (``geometric`` is the left-hand one). With
        ``dw = w_q - w_p`` (translations) and ``dx = dx_q - dx_p``: ``de = z z^T dx / l`` and
        ``d(z/l) = -(e z^T + z e^T) dx / l^2``, so row 0 changes by ``(z.dw) z^T dx / l`` and
        both rotation rows by ``((e.dw) z + (z.dw) e)^T dx / l^2``.
        """
        dw = w[:, 3:5] - w[:, 0:2]
        e, z, l = kin.e, kin.z, kin.l
        ez, zz = np.einsum("ei,ei->e", e, dw), np.einsum("ei,ei->e", z, dw)
        rows = np.stack([(zz / l)[:, None] * z,
                         (ez / l**2)[:, None] * z + (zz / l**2)[:, None] * e], axis=1)
        out = np.zeros((len(w), 3, 6))
        out[:, 0:2, 0:2], out[:, 0:2, 3:5] = -rows, rows
        out[:, 2] = out[:, 1]
        return out


class LinearFrame2D(CorotFrame2D):
    """Small-displacement planar frame: ``v = B0 d`` with ``B0`` at the reference geometry."""

    linear = True

    def __init__(self, X: NDArray):
        super().__init__(X)
        self.ref = self._geometry(X, np.zeros((len(X), 2)))

    def kinematics(self, x: NDArray, theta: NDArray, d: NDArray) -> Kinematics2D:
        """Basic deformations ``B0 d`` of element displacement vectors ``d (E, 6)``."""
        ref = self.ref
        return Kinematics2D(v=np.einsum("ebd,ed->eb", ref.B, d), B=ref.B, e=ref.e, z=ref.z,
                            l=ref.l)
