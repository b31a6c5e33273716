"""Interior modes of element groups appended to free-DOF matrices (linear buckling).

A group that offers interior modes (``n_interior`` per element, and ``interior_stiffness``, see
:mod:`fem.elements.beam_interior`) gets ``E * n_interior`` extra unknowns after the ``n_free``
nodal ones, numbered element by element. They belong to one element each, so they couple only with
that element's DOFs and with each other; no element shares them and nothing is prescribed on them.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray


def groups_with_modes(model) -> list[int]:
    """Indices of the model's groups that have interior modes."""
    return [i for i, g in enumerate(model.groups) if getattr(g, "n_interior", 0)]


def count(model) -> int:
    """Number of interior unknowns of the model."""
    return sum(len(model.groups[i]) * model.groups[i].n_interior for i in groups_with_modes(model))


def augment(system, state, data: NDArray, stresses: list[NDArray], material: bool):
    """The free-DOF matrix with CSR values ``data``, bordered by the interior modes' blocks.

    ``stresses`` are the per-group generalized stresses whose geometric stiffness ``data`` holds;
    ``material`` adds the interior modes' elastic stiffness (for ``K_0``, not for ``K_D``).
    Returns a ``scipy.sparse.csr_matrix`` of size ``n_free + count(model)``.
    """
    asm, n = system.assembler, system.n_free
    rows, cols, vals = [], [], []
    offset = n
    for i in groups_with_modes(system.model):
        g = system.model.groups[i]
        C, Kaa = g.interior_stiffness(state, stresses[i], material)
        E, nd, ni = C.shape
        idx = offset + np.arange(E * ni).reshape(E, ni)
        offset += E * ni
        r = np.broadcast_to(asm.groups[i].edofs[:, :, None], C.shape)
        c = np.broadcast_to(idx[:, None, :], C.shape)
        free = r < n                        # couplings with supported DOFs drop out
        rows += [r[free], c[free]]
        cols += [c[free], r[free]]
        vals += [C[free], C[free]]
        rows.append(np.broadcast_to(idx[:, :, None], Kaa.shape).reshape(-1))
        cols.append(np.broadcast_to(idx[:, None, :], Kaa.shape).reshape(-1))
        vals.append(Kaa.reshape(-1))
    size = offset
    nodal = sp.csr_matrix((data, asm.indices, np.concatenate(
        [asm.indptr, np.full(size - n, asm.indptr[-1])])), shape=(size, size))
    if not rows:
        return nodal
    border = sp.coo_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                           shape=(size, size))
    return (nodal + border).tocsr()
