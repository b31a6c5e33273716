"""Several reduced components assembled into one reduced model through shared boundary unknowns.

Boundary unknowns are identified across components by global labels (integers; one label per
physical unknown: :func:`fem.cms.component.node_dofs` gives ``node_id * nslots + slot``). For
Craig-Bampton components (:mod:`fem.cms.craig_bampton`) the boundary displacements are
coordinates of the reduced model, so coupling is the direct stiffness method on them: the
assembled coordinates are ``[u_B; eta_1; eta_2; ...]`` (every distinct boundary label once, then
each component's modal coordinates) and, with ``L_c`` the Boolean map from them to component
``c``'s ``q_c``, ``K = sum_c L_c^T K_c L_c``, ``M = sum_c L_c^T M_c L_c`` (Craig & Bampton 1968,
section "Coupling"). A shared label is one coordinate, so recovered displacements of a shared
node agree exactly from every side. A label that only one component has stays a coordinate of
the assembled model (a free attachment point).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from fem import lazy
from fem.cms.craig_bampton import CraigBampton
from fem.errors import DeckError, ModelError
from fem.solvers import eigen

sp = lazy.module("scipy.sparse")


def check_labels(boundaries: Sequence[NDArray], labels: Sequence, names: Sequence[str]
                 ) -> list[NDArray]:
    """Each component's labels as integers, one per boundary unknown, distinct within it."""
    if len(labels) != len(boundaries):
        raise DeckError("labels", f"expected one label array per component ({len(boundaries)}), "
                        f"got {len(labels)}")
    out = []
    for b, lab, name in zip(boundaries, labels, names, strict=True):
        lab = np.asarray(lab)
        if lab.shape != (len(b),) or (lab.size and not np.issubdtype(lab.dtype, np.integer)):
            raise DeckError("labels", f"component '{name}': expected {len(b)} integer labels "
                            f"(one per boundary unknown), got shape {lab.shape}, type {lab.dtype}")
        uniq, counts = np.unique(lab, return_counts=True)
        if (counts > 1).any():
            raise DeckError("labels", f"component '{name}': labels repeat: "
                            f"{uniq[counts > 1][:5].tolist()}")
        out.append(lab.astype(np.int64))
    return out


def reduced_modes(K: NDArray, M: NDArray, count: int | None = None) -> tuple[NDArray, NDArray]:
    """``(omega2 (k,), Q (r, k))``: the lowest ``count`` (default all) pairs of a reduced model.

    Dense (the reduced model is small), ``Q^T M Q = I``. ``M`` must be positive definite.
    """
    r = K.shape[0]
    if r == 0:
        return np.zeros(0), np.zeros((0, 0))
    dense = sp.csr_matrix(M).toarray()
    try:
        import scipy.linalg as sla

        sla.cholesky(0.5 * (dense + dense.T))
    except np.linalg.LinAlgError:
        raise ModelError("the reduced mass matrix is not positive definite: a reduced coordinate "
                         "carries no mass") from None
    # the front-end's values are the Rayleigh quotients of their vectors: the dense solve's
    # eigenvalues are accurate to eps times the largest (a reduced model keeping every interior
    # mode of a folded plate spans 3e9: 2e-7 relative on its lowest), the quotients to eps times
    # their own (3e-9 there)
    pairs = eigen.symmetric(K, M, r if count is None else min(count, r), method="dense",
                            what="the reduced model")
    return pairs.values, pairs.vectors


@dataclass
class CoupledCraigBampton:
    """Craig-Bampton components assembled on shared boundary coordinates (module docstring).

    Attributes
    ----------
    components : the reduced components
    labels : (nB,) the distinct boundary labels, ascending: the first ``nB`` coordinates
    index : per component, (nb_c + m_c,) positions of its ``q_c`` among the coordinates
    K, M : (nB + sum m_c,) square, the assembled reduced stiffness and mass
    """

    components: tuple[CraigBampton, ...]
    labels: NDArray
    index: tuple[NDArray, ...]
    K: NDArray
    M: NDArray

    def recover(self, q: NDArray) -> list[NDArray]:
        """Each component's unknowns ``T_c q[index_c]`` for coordinates ``q (r,)`` or ``(r, k)``."""
        return [c.T @ q[g] for c, g in zip(self.components, self.index, strict=True)]

    @property
    def T(self) -> tuple[NDArray, ...]:
        """Per component, ``(n_c, r)`` its rows of the assembled transformation: ``u_c = T[c] q``.

        (The form of :attr:`fem.cms.free_interface.FreeInterfaceModel.T`, so that design
        modification, :func:`fem.cms.modification.design_model`, takes either model.)
        """
        r = self.K.shape[0]
        out = []
        for c, g in zip(self.components, self.index, strict=True):
            T = np.zeros((c.T.shape[0], r))
            T[:, g] = c.T
            out.append(T)
        return tuple(out)

    def modes(self, count: int | None = None) -> tuple[NDArray, NDArray]:
        """The lowest ``count`` eigenpairs ``(omega2, Q)`` of the assembled reduced model."""
        return reduced_modes(self.K, self.M, count)


def couple(components: Sequence[CraigBampton], labels: Sequence) -> CoupledCraigBampton:
    """Assemble Craig-Bampton components sharing boundary unknowns (module docstring).

    Parameters
    ----------
    components : reduced components (:func:`fem.cms.craig_bampton.craig_bampton`)
    labels : per component, ``(nb_c,)`` global labels of its boundary unknowns, in the order of
        its ``boundary``; equal labels are one unknown
    """
    components = tuple(components)
    labels = check_labels([c.boundary for c in components], labels,
                          [c.name for c in components])
    shared = np.unique(np.concatenate(labels)) if labels else np.zeros(0, dtype=np.int64)
    index, start = [], len(shared)
    for c, lab in zip(components, labels, strict=True):
        m = c.T.shape[1] - c.n_boundary
        index.append(np.concatenate([np.searchsorted(shared, lab), start + np.arange(m)]))
        start += m
    K, M = np.zeros((start, start)), np.zeros((start, start))
    for c, g in zip(components, index, strict=True):       # a few components: no loop over DOFs
        K[np.ix_(g, g)] += c.K
        M[np.ix_(g, g)] += c.M
    return CoupledCraigBampton(components, shared, tuple(index), K, M)
