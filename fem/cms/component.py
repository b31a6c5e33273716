"""What every reduction of a component needs: its input checked, a factorization, its modes.

A component is given by its stiffness ``K`` and mass ``M`` (scipy sparse, on its unknowns: a
:class:`~fem.system.System`'s ``assembler.to_scipy(...)``) and the indices of its boundary
(interface) unknowns. Factorizations go through fem's PETSc layer (:mod:`fem.linalg`: the direct
LU, MUMPS by default, with null-pivot detection; :class:`fem.solvers.eigen.Factorization`) under
the options prefix ``cms_<name>_``, so that ``-cms_<name>_ksp_view`` and the other PETSc options
reach them; modes come from the eigen front-end (:func:`fem.solvers.eigen.symmetric`, the
project's shift-invert block Lanczos) on that factorization.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from fem import lazy
from fem.errors import DeckError, ModelError
from fem.solvers import eigen

sp = lazy.module("scipy.sparse")

TOLERANCE = 1e-10          # Lanczos acceptance (as the modal step): Rayleigh quotients to ~1e-20

#: ``A`` factored once by fem's direct solver; calling it solves a block (a context manager)
Factorization = eigen.Factorization


def check_matrices(K, M, name: str):
    """``K``, ``M`` as CSR, square and of one size (else a :class:`DeckError`)."""
    K, M = sp.csr_matrix(K), sp.csr_matrix(M)
    if K.shape[0] != K.shape[1] or K.shape != M.shape:
        raise DeckError("K, M", f"component '{name}': K and M must be square and of one size, "
                        f"got {K.shape} and {M.shape}")
    return K, M


def check_indices(values, n: int, key: str, name: str) -> NDArray:
    """``values`` as distinct integer indices into ``n`` unknowns (else a :class:`DeckError`)."""
    idx = np.asarray(values)
    if idx.ndim != 1 or (idx.size and not np.issubdtype(idx.dtype, np.integer)):
        raise DeckError(key, f"component '{name}': expected a 1D list of integer DOF indices, "
                        f"got an array of shape {idx.shape} and type {idx.dtype}")
    idx = idx.astype(np.int64)
    bad = (idx < 0) | (idx >= n)
    if bad.any():
        raise DeckError(key, f"component '{name}': DOF indices must lie in [0, {n}), got "
                        f"{idx[bad][:5].tolist()}")
    uniq, counts = np.unique(idx, return_counts=True)
    if (counts > 1).any():
        raise DeckError(key, f"component '{name}': DOF indices repeat: "
                        f"{uniq[counts > 1][:5].tolist()}")
    return idx


def check_selection(modes: int | None, cutoff: float | None, name: str) -> None:
    """Exactly one of ``modes`` (a count > 0) and ``cutoff`` (rad/s > 0) (else a DeckError)."""
    if (modes is None) == (cutoff is None):
        raise DeckError("modes, cutoff", f"component '{name}': give either a number of modes "
                        f"or a cut-off frequency (rad/s), got modes = {modes}, cutoff = {cutoff}")
    if modes is not None and (isinstance(modes, bool) or not isinstance(modes, (int, np.integer))
                              or modes < 0):
        raise DeckError("modes", f"component '{name}': expected a non-negative integer, got "
                        f"{modes!r}")
    if cutoff is not None and not (np.isfinite(cutoff) and cutoff > 0):
        raise DeckError("cutoff", f"component '{name}': expected a positive cut-off frequency "
                        f"(rad/s), got {cutoff!r}")


def lowest_modes(K, M, solve, sigma: float, modes: int | None, cutoff: float | None,
                 n_max: int) -> eigen.Eigenpairs:
    """The ``modes`` lowest pairs of ``K x = omega^2 M x``, or all with ``omega <= cutoff``.

    ``solve`` is the block solve of ``K - sigma M`` (:func:`fem.solvers.eigen.shifted`). For a
    cut-off the count doubles until a pair above it is found (or all ``n_max`` pairs the pencil
    has are found).
    """
    if modes == 0 or n_max == 0:
        n = K.shape[0]
        return eigen.Eigenpairs(np.zeros(0), np.zeros((n, 0)), np.zeros(0), "none", 0)
    count = min(modes if modes is not None else 8, n_max)
    while True:
        pairs = eigen.symmetric(K, M, count, sigma, solve=solve, tol=TOLERANCE)
        if cutoff is None:
            return pairs
        if pairs.values[-1] > cutoff**2 or count == n_max or pairs.note:
            keep = pairs.values <= cutoff**2
            return eigen.Eigenpairs(pairs.values[keep], pairs.vectors[:, keep],
                                    pairs.residuals[keep], pairs.method, pairs.asked,
                                    shift=pairs.shift)
        count = min(2 * count, n_max)


massive = eigen.massive       # unknowns with mass: the finite eigenvalues, at most


def singular(name: str, what: str) -> ModelError:
    """The error of a component whose ``what`` cannot be factored."""
    return ModelError(f"component '{name}': {what} is singular: part of the component can move "
                      "without deforming (a mechanism); support it or add boundary DOFs")


def node_dofs(system, node_ids) -> tuple[NDArray, NDArray]:
    """The free unknowns of nodes of a :class:`~fem.system.System`, and their global labels.

    Returns ``dofs (k,)``, positions among the system's unknowns (node by node, slot by slot,
    supported slots left out), and ``labels (k,)`` = ``node_id * nslots + slot``: the same
    label for the same node and slot in every model built on one node numbering, which is how
    components are coupled (:func:`fem.cms.coupling.couple`).
    """
    model, dofmap = system.model, system.dofmap
    ids = np.asarray(node_ids, dtype=np.int64).ravel()
    order = np.argsort(model.node_ids, kind="stable")
    pos = np.minimum(np.searchsorted(model.node_ids[order], ids), len(order) - 1)
    where = order[pos]
    missing = model.node_ids[where] != ids
    if missing.any():
        raise DeckError("nodes", f"unknown node ids {ids[missing][:5].tolist()}")
    index = dofmap.index[where]                              # (k, nslots)
    free = (index >= 0) & (index < dofmap.n_free)
    nslots = index.shape[1]
    labels = ids[:, None] * nslots + np.arange(nslots)[None, :]
    return index[free], labels[free]
