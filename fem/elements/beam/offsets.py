"""Rigid end offsets of beams: an elastic axis off the nodes (eccentric beams, shell stiffeners).

A beam with offsets ``e_a`` (reference, global axes) has its elastic axis between the *ends*
``x_a + R_a e_a`` and ``x_b + R_b e_b``: each end is joined to its node by a rigid arm that turns
with the node. The beam itself (frame and basic beam) is the one of :mod:`fem.elements.beam`, set
up on the reference ends ``X_a + e_a`` (its length, chord and local axes are those between the
ends) and fed with the ends' motion; this module maps that motion and its forces to the nodes.

Kinematics. Nodes turn by spatial spins, ``d(R e) = dw x (R e)`` (2D: ``dtheta z x (R e)``), so
with the current arm ``c = R e`` an end moves by::

    dx_end = dx_node + dw x c = dx_node + W dw,     W = -hat(c)  (2D: W = [-c_y, c_x]^T)
    dw_end = dw_node

``T`` is that map on the element vector (identity plus the ``W`` blocks). The strain energy is
the beam's, a function of the end motion only, so the nodal force is ``f_node = T^T f_end``: the
end force unchanged and the nodal moment ``m_end + c x f_end`` (the moment of the end force
about the node). Differentiating it at fixed end force adds, to ``T^T K_end T``, the change of
that lever arm as the node turns: ``d(c x f) = (dw x c) x f = hat(f) hat(c) dw`` on the node's
rotation block (2D: ``-(c . f) dtheta``); it is not symmetric away from equilibrium, like the
spatial-spin tangent of the co-rotational frame itself.

Small-displacement (linear) beams freeze ``T`` at the reference (``c = e``): ``d_end = T0 d``,
force ``T0^T K_end T0 d``, mass ``T0^T M_end T0``; their geometric stiffness (linear buckling)
keeps the lever term at the reference, as it keeps the co-rotational frame's.

Mass in dynamics is not carried: a nodal lumped inertia
(:class:`fem.inertia.nodal.NodalInertia`) has no translation-rotation coupling for a mass off the
node, so offset beams with mass refuse the
lumped inertia (dynamic steps, gravity, modal steps with the lumped mass) and the
energy-conserving force; the consistent mass matrix ``T0^T M_end T0`` serves modal steps with
``mass = "consistent"``.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from fem import rotations as so3


class Offsets:
    """End offsets of a group of 2-node beams.

    Parameters
    ----------
    dim : 2 (node DOFs ux, uy, rz) or 3 (ux, uy, uz, rx, ry, rz)
    e : (E, 2, 3) reference offsets of the two ends, global axes (2D: z component 0)
    """

    def __init__(self, dim: int, e: NDArray):
        self.dim = dim
        self.e = np.array(e, dtype=float).reshape(-1, 2, 3)
        if dim == 2:
            self.e[..., 2] = 0.0
        self.ndn = 3 if dim == 2 else 6
        self.trans = np.arange(dim)                        # translation slots of a node
        self.rots = np.array([2]) if dim == 2 else np.arange(3, 6)

    @property
    def nonzero(self) -> NDArray:
        """(E,) whether each element has an offset at either end."""
        return np.any(self.e != 0.0, axis=(1, 2))

    def arms(self, R: NDArray | None) -> NDArray:
        """(E, 2, 3) current arms ``c = R e`` for nodal rotations ``R (E, 2, 3, 3)``, or ``e``."""
        return self.e if R is None else np.einsum("eaij,eaj->eai", R, self.e)

    def lever(self, c: NDArray) -> NDArray:
        """(E, 2, nt, nr) ``W = d x_end / d w`` of each end (``nt``, ``nr``: dim, 1 or 3)."""
        if self.dim == 3:
            return -so3.hat(c)
        W = np.empty(c.shape[:2] + (2, 1))
        W[..., 0, 0], W[..., 1, 0] = -c[..., 1], c[..., 0]
        return W

    def matrix(self, c: NDArray) -> NDArray:
        """(E, nd, nd) ``T``: element vector of the ends = ``T`` (element vector of the nodes)."""
        E, n = len(c), self.ndn
        T = np.zeros((E, 2 * n, 2 * n))
        T[:, range(2 * n), range(2 * n)] = 1.0
        W = self.lever(c)
        for a in range(2):
            T[np.ix_(range(E), a * n + self.trans, a * n + self.rots)] = W[:, a]
        return T

    def ends(self, d: NDArray, c: NDArray) -> NDArray:
        """(E, nd) ``T d``: the ends' motion of a nodal element vector ``d (E, nd)``."""
        out = d.copy()
        W = self.lever(c)
        n = self.ndn
        for a in range(2):
            out[:, a * n + self.trans] += np.einsum("eij,ej->ei", W[:, a], d[:, a * n + self.rots])
        return out

    def force(self, f: NDArray, c: NDArray) -> NDArray:
        """(E, nd) ``T^T f``: nodal forces of end forces ``f (E, nd)`` (moments ``m + c x f``)."""
        out = f.copy()
        W = self.lever(c)
        n = self.ndn
        for a in range(2):
            out[:, a * n + self.rots] += np.einsum("eji,ej->ei", W[:, a], f[:, a * n + self.trans])
        return out

    def lever_stiffness(self, f: NDArray, c: NDArray) -> NDArray:
        """(E, nd, nd) ``d(T^T f)/d(node)`` at fixed end forces ``f``: the turning arm's part.

        On each node's rotation block: ``hat(f_a) hat(c_a)`` (3D), ``-(c_a . f_a)`` (2D).
        """
        E, n = len(f), self.ndn
        out = np.zeros((E, 2 * n, 2 * n))
        for a in range(2):
            fa = np.zeros((E, 3))
            fa[:, :self.dim] = f[:, a * n + self.trans]
            r = a * n + self.rots
            if self.dim == 3:
                out[np.ix_(range(E), r, r)] = so3.hat(fa) @ so3.hat(c[:, a])
            else:
                out[:, r[0], r[0]] = -np.einsum("ei,ei->e", c[:, a], fa)
        return out

    def tangent(self, K: NDArray, c: NDArray, f: NDArray | None = None) -> NDArray:
        """(E, nd, nd) ``T^T K T``, plus :meth:`lever_stiffness` of end forces ``f`` if given."""
        T = self.matrix(c)
        out = np.swapaxes(T, 1, 2) @ K @ T
        if f is not None:
            out += self.lever_stiffness(f, c)
        return out

