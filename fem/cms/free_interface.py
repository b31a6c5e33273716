"""Free-interface CMS with residual attachment modes, interface forces eliminated.

Hutton & Smith ("Modification of flexible body dynamics using substructures"), in the
reconstruction of ``notes/cms_constraints.md`` A.2 (the Craig & Chang 1977 / MacNeal-Rubin
free-interface method). Component ``s`` with interface forces ``f_B^s`` on its boundary
unknowns::

    u^s = Phi^s p^s + Psi^s f_B^s,    u_B^s = Phi_B^s p^s + Psi_B^s f_B^s

with ``Phi^s`` the kept free-free modes (rigid-body modes included, ``M``-normalized) and ``Psi^s =
G_r[:, B]`` the residual attachment modes, ``G_r`` the residual flexibility (the deleted elastic
modes' ``sum phi phi^T / lambda``), ``Psi_B = G_r[B, B]``. Compatibility ``A u_B = 0`` (for each
label shared by several components, the others' unknowns minus the first's) and equilibrium
``f_B = A^T mu`` give ``mu = -S^{-1} A Phi_B p``, ``S = A Psi_B A^T``, hence eq. (3)::

    u = T p,   T = Phi - Psi C,   C = A^T S^{-1} A Phi_B

and the reduced matrices of eq. (2) in closed form (``Phi^T M Psi = 0``, ``Phi^T K Psi = 0``,
``Psi^T K Psi = Psi_B``)::

    K_bar = Lambda + Phi_B^T A^T S^{-1} A Phi_B,   M_bar = I + C^T (Psi^T M Psi) C

(the residual-mass term ``C^T Psi^T M Psi C`` is what MacNeal's method drops). The reduced size
is the number of kept modes, whatever the interface's size; ``A T_B = 0`` holds identically, so the
interface is compatible exactly; exact projection makes it a Rayleigh-Ritz model of the assembled
FE model (frequencies never below it).

The residual flexibility, in the shifted form that needs no support (notes A.2.1): with ``Phi_R``
the rigid-body modes and ``K_s = K + s M Phi_R Phi_R^T M`` (regular; ``s`` scales the rigid
modes' eigenvalue to ``s``, chosen among the elastic ones for conditioning),
``G_e = K_s^{-1} - Phi_R Phi_R^T / s`` and ``G_r = G_e - Phi_k Lambda_k^{-1} Phi_k^T``. It is
computed as ``G_r = P K_s^{-1} P^T`` with ``P = I - Phi Phi^T M`` (the same for exact modes, since
``K_s^{-1} M phi = phi / d``), which keeps ``Phi^T M Psi = 0`` to round-off whatever the modes'
accuracy: one factorization of the bordered matrix ``[[K, U], [U^T, -I]]``, ``U = sqrt(s) M Phi_R``
(sparse, regular, Schur complement ``K_s``) and one block solve with ``nb`` right-hand sides.

The modes-only variant (notes A.2.1, "pitfall"; the comparison of A.2.2): no residual attachment
modes, ``A Phi_B p = 0`` enforced by ``p = N z`` with ``N`` an orthonormal basis of the null
space of ``A Phi_B``: ``K_bar = N^T Lambda N``, ``M_bar = I``.

The free-free modes come from the eigen front-end (:func:`fem.solvers.eigen.symmetric`, the
project's block Lanczos) at the modal step's shift (:func:`fem.solvers.eigen.shifted`): 0 for a
supported component, for a free one a shift below its rigid-body modes chosen from the
spectrum's scale.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from fem import lazy, linalg
from fem.cms.component import (
    Factorization,
    check_indices,
    check_matrices,
    check_selection,
    lowest_modes,
    massive,
    singular,
)
from fem.cms.coupling import check_labels, reduced_modes
from fem.errors import DeckError, ModelError
from fem.solvers import eigen

sla = lazy.module("scipy.linalg")
sp = lazy.module("scipy.sparse")

RIGID = 1e-9               # omega^2 below RIGID * max(K_ii / M_ii): a rigid-body mode
SINGULAR = 1e-10           # S's eigenvalues below SINGULAR * the interface's flexibility: singular
SHIFT = 1e-6               # the residual flexibility's shift when no elastic mode is kept


@dataclass
class FreeInterface:
    """A component reduced to free-interface modes and residual attachment modes.

    Attributes
    ----------
    name : the component's name (PETSc options prefix ``cms_<name>_``, messages)
    boundary : (nb,) boundary unknowns, in the order of ``f_B``
    omega2 : (m,) free-free eigenvalues of the kept modes, ascending (rigid first)
    n_rigid : how many of them are rigid-body modes
    Phi : (n, m) the kept modes, ``Phi^T M Phi = I``, ``Phi^T K Phi = diag(omega2)``
    Psi : (n, nb) the residual attachment modes ``G_r[:, B]``
    Psi_B : (nb, nb) ``G_r[B, B]``, symmetric positive semi-definite
    PsiMPsi : (nb, nb) ``Psi^T M Psi``
    flexibility : the largest entry of ``K_s^{-1}[B, B]``, the interface's whole flexibility
        (modes and residual): the scale at which ``S = A Psi_B A^T`` is judged singular
    """

    name: str
    boundary: NDArray
    omega2: NDArray
    n_rigid: int
    Phi: NDArray
    Psi: NDArray
    Psi_B: NDArray
    PsiMPsi: NDArray
    flexibility: float

    @property
    def Phi_B(self) -> NDArray:  # noqa: N802 - the paper's symbol
        """(nb, m) the kept modes' boundary rows."""
        return self.Phi[self.boundary]


def free_interface(K, M, boundary, *, modes: int | None = None, cutoff: float | None = None,
                   rigid: int | None = None, name: str = "component",
                   solver_options: dict | None = None) -> FreeInterface:
    """Free-free modes and residual attachment modes of a component (module docstring).

    Parameters
    ----------
    K, M : scipy sparse ``(n, n)``, the component's symmetric stiffness and mass (``M`` positive
        definite on the unknowns that move; ``K`` singular for a free component)
    boundary : (nb,) indices of the boundary (interface) unknowns
    modes : number of free-free modes to keep, rigid-body modes included, or
    cutoff : keep every mode with ``omega <= cutoff`` (rad/s), rigid-body modes included
    rigid : how many of the kept modes are rigid-body modes (default: those with ``omega^2``
        below ``1e-9`` of the largest ``K_ii / M_ii``)
    name : names the component in messages and the PETSc options prefix ``cms_<name>_``
    solver_options : PETSc options of the factorizations (as a deck's ``[solver]``)
    """
    K, M = check_matrices(K, M, name)
    n = K.shape[0]
    b = check_indices(boundary, n, "boundary", name)
    check_selection(modes, cutoff, name)
    dk, dm = K.diagonal(), M.diagonal()
    ratio = float(np.max(np.abs(dk[dm > 0] / dm[dm > 0]), initial=0.0)) or 1.0
    prefix = f"cms_{name}_"
    try:
        # the modal step's shift: 0, or for a free component one below its rigid-body modes
        sigma, solve = eigen.shifted(K, M, factor=lambda A: Factorization(A, prefix,
                                                                          solver_options),
                                     what=f"component '{name}'")
    except ModelError:
        raise singular(name, "K - sigma M (sigma < 0)") from None
    try:
        pairs = lowest_modes(K, M, solve, sigma, modes, cutoff, massive(M))
    except linalg.SingularMatrixError:
        raise singular(name, "K - sigma M (sigma < 0)") from None
    finally:
        solve.close()
    omega2, Phi = pairs.values, pairs.vectors
    if rigid is None:
        rigid = int(np.count_nonzero(omega2 <= RIGID * ratio))
    elif isinstance(rigid, bool) or not isinstance(rigid, (int, np.integer)) or \
            not 0 <= rigid <= len(omega2):
        raise DeckError("rigid", f"component '{name}': expected a number of rigid-body modes "
                        f"between 0 and the {len(omega2)} kept, got {rigid!r}")
    Psi, flexibility = residual_attachment(K, M, b, Phi, omega2, rigid, SHIFT * ratio, prefix,
                              solver_options, name)
    Psi_B = Psi[b]
    return FreeInterface(name=name, boundary=b, omega2=omega2, n_rigid=int(rigid), Phi=Phi,
                         Psi=Psi, Psi_B=0.5 * (Psi_B + Psi_B.T), PsiMPsi=Psi.T @ (M @ Psi),
                         flexibility=flexibility)


def residual_attachment(K, M, boundary: NDArray, Phi: NDArray, omega2: NDArray, rigid: int,
                        scale: float, prefix: str, solver_options: dict | None, name: str
                        ) -> tuple[NDArray, float]:
    """(n, nb) ``G_r[:, B] = P K_s^{-1} P^T E_B`` (module docstring: the shifted form).

    ``s`` is the largest kept elastic eigenvalue, or ``scale`` when none is kept. Also returns
    the largest entry of ``K_s^{-1}[B, B]`` (one more block solve, of ``E_B``).
    """
    n, nb = K.shape[0], len(boundary)
    elastic = omega2[rigid:]
    s = float(elastic.max()) if len(elastic) and elastic.max() > 0 else scale
    U = np.sqrt(s) * (M @ Phi[:, :rigid])
    bordered = sp.bmat([[K, sp.csr_matrix(U)], [sp.csr_matrix(U.T), -sp.identity(rigid)]],
                       format="csr") if rigid else K
    if nb == 0:
        return np.zeros((n, 0)), 0.0
    E = np.zeros((n + rigid, nb))
    E[boundary, np.arange(nb)] = 1.0
    rhs = E.copy()
    rhs[:n] -= M @ (Phi @ Phi[boundary].T)               # P^T E_B = E_B - M Phi Phi_B^T
    with Factorization(bordered, prefix + "residual_", solver_options) as solve:
        try:
            X = solve(np.hstack([rhs, E]))[:n]
        except linalg.SingularMatrixError:
            raise singular(name, "K + s M Phi_R Phi_R^T M (too few rigid-body modes kept?)"
                           ) from None
    X, whole = X[:, :nb], X[boundary, nb:]
    return X - Phi @ (Phi.T @ (M @ X)), float(np.abs(whole).max())   # P X


@dataclass
class FreeInterfaceModel:
    """Free-interface components coupled with the interface forces eliminated (eq. (3)).

    Attributes
    ----------
    components : the reduced components
    A : (nc, sum nb) compatibility ``A u_B = 0`` on the concatenated boundary unknowns
    T : per component, ``(n_s, r)`` its rows of ``T``: ``u^s = T[s] p``
    K, M : (r, r) the reduced stiffness and mass (closed forms, or ``N^T Lambda N``, ``I``)
    C : (sum nb, sum m) ``A^T S^{-1} A Phi_B`` (``None`` for modes-only)
    N : (sum m, r) the null-space basis of the modes-only variant (``None`` otherwise)
    """

    components: tuple[FreeInterface, ...]
    A: NDArray
    T: tuple[NDArray, ...]
    K: NDArray
    M: NDArray
    C: NDArray | None = None
    N: NDArray | None = None

    def recover(self, p: NDArray) -> list[NDArray]:
        """Each component's unknowns ``T[s] p`` for coordinates ``p (r,)`` or ``(r, k)``."""
        return [T @ p for T in self.T]

    def modes(self, count: int | None = None) -> tuple[NDArray, NDArray]:
        """The lowest ``count`` eigenpairs ``(omega2, P)`` of the reduced model."""
        return reduced_modes(self.K, self.M, count)


def compatibility(labels: Sequence[NDArray]) -> NDArray:
    """(nc, sum nb) ``A``: for each label shared by ``k`` components, ``k - 1`` rows ``u_j - u_0``.

    Columns are the concatenated boundary unknowns of the components; ``u_0`` is the label's
    first occurrence in that order.
    """
    lab = np.concatenate(labels) if len(labels) else np.zeros(0, dtype=np.int64)
    _, first, inverse = np.unique(lab, return_index=True, return_inverse=True)
    others = np.flatnonzero(first[inverse] != np.arange(len(lab)))
    A = np.zeros((len(others), len(lab)))
    A[np.arange(len(others)), others] = 1.0
    A[np.arange(len(others)), first[inverse[others]]] = -1.0
    return A


def couple_free_interface(components: Sequence[FreeInterface], labels: Sequence, *,
                          modes_only: bool = False) -> FreeInterfaceModel:
    """Couple free-interface components sharing boundary unknowns (module docstring).

    Parameters
    ----------
    components : reduced components (:func:`free_interface`)
    labels : per component, ``(nb_c,)`` global labels of its boundary unknowns; equal labels are
        one unknown (:func:`fem.cms.component.node_dofs`)
    modes_only : drop the residual attachment modes, enforce ``A Phi_B p = 0`` by a null space
    """
    components = tuple(components)
    labels = check_labels([c.boundary for c in components], labels,
                          [c.name for c in components])
    A = compatibility(labels)
    Phi_B = sla.block_diag(*[c.Phi_B for c in components])
    Lam = np.concatenate([c.omega2 for c in components])
    sizes = [c.Phi.shape[1] for c in components]
    cols = np.split(np.arange(sum(sizes)), np.cumsum(sizes)[:-1])
    if modes_only:
        N = sla.null_space(A @ Phi_B)
        if N.shape[1] == 0:
            raise ModelError(f"free-interface coupling, modes only: the {len(Lam)} kept modes "
                             f"cannot satisfy the {A.shape[0]} interface compatibility "
                             "conditions A Phi_B p = 0 together (no combination is left); keep "
                             "more modes, or keep the residual flexibility")
        T = tuple(c.Phi @ N[j] for c, j in zip(components, cols, strict=True))
        K = N.T @ (Lam[:, None] * N)
        return FreeInterfaceModel(components, A, T, 0.5 * (K + K.T), N.T @ N, N=N)
    Psi_B = sla.block_diag(*[c.Psi_B for c in components])
    S = A @ Psi_B @ A.T
    w = eigen.spectrum_of(S) if len(S) else np.ones(1)
    if w.min() <= SINGULAR * max(c.flexibility for c in components):
        raise ModelError("free-interface coupling: the interface flexibility S = A Psi_B A^T is "
                         f"singular (eigenvalues {w.min():.3g} to {w.max():.3g}): keep fewer "
                         "modes, so that residual flexibility remains at every interface "
                         "unknown, or couple modes only")
    AP = A @ Phi_B
    SAP = sla.cho_solve(sla.cho_factor(S), AP)          # S^{-1} A Phi_B
    C = A.T @ SAP
    nbs = [len(c.boundary) for c in components]
    rows = np.split(np.arange(sum(nbs)), np.cumsum(nbs)[:-1])
    T = []
    for c, i, j in zip(components, rows, cols, strict=True):     # per component, not per DOF
        Ts = -c.Psi @ C[i]
        Ts[:, j] += c.Phi
        T.append(Ts)
    K = np.diag(Lam) + AP.T @ SAP
    PMP = sla.block_diag(*[c.PsiMPsi for c in components])
    M = np.eye(len(Lam)) + C.T @ PMP @ C
    return FreeInterfaceModel(components, A, tuple(T), 0.5 * (K + K.T), 0.5 * (M + M.T), C=C)
