"""Design modification of a coupled CMS model: eigenvalue sensitivity, forward and inverse.

Hutton & Smith ("Modification of flexible body dynamics using substructures"), as digested in
``notes/cms_constraints.md`` A.3-A.6. The coupled model ``u = T p`` (:mod:`fem.cms.free_interface`,
``T = [T_1; ...; T_N]`` by component; or Craig-Bampton components assembled on their boundary
unknowns, :func:`fem.cms.coupling.couple`) is kept fixed; its baseline modes ``Z`` (columns ``p_i``,
``Z^T M_bar Z = I``, ``Z^T K_bar Z = Lambda``, ``M_bar = sum_c T_c^T M_c T_c``) are the basis of
every re-analysis, with ``Zhat(X_c) = Z^T T_c^T X_c T_c Z`` the projection of a component matrix.

Design parameters are **linear** (eq. (4)): ``alpha_j`` is the fractional change of a parameter
whose matrices are proportional to it, ``dK = sum alpha_j K_j``, ``dM = sum alpha_j M_j``. Two
kinds, taken from a component's own matrices: ``"density"`` (``M_j = M_c``, ``K_j = 0``: all of the
component's mass scales with it) and ``"modulus"`` (``K_j = K_c``, ``M_j = 0``: all of its
stiffness). A thickness of bending plates (``D ~ t^3``) is not such a parameter.

* Sensitivity, eqs. (7)/(8): ``d lambda_i / d alpha_j = p_i^T T^T (K_j - lambda_i M_j) T p_i``,
  ``T`` held fixed; normalized, ``(rho_c / lambda_i) d lambda_i / d rho_c = -u_c^T M_c u_c`` (the
  component's share of kinetic energy, summing to -1 over all components) and ``(E_c / lambda_i)
  d lambda_i / d E_c = u_c^T K_c u_c / lambda_i`` (of strain energy, summing to +1),
  ``u_c = T_c p_i``. Free interface: exact for density (a density change only rescales a
  component's free modes and leaves its residual attachment modes, so the span of ``T`` is
  unchanged: notes A.4); for the modulus the residual flexibility, hence the coupled ``T``,
  changes and eq. (8) is an approximation whose error is proportional to the Ritz residual
  (about 5e-4 relative with 2 elastic modes per component, notes A.4). Craig-Bampton [OURS]:
  exact for both, because neither the constraint modes ``-K_ii^-1 K_ib`` nor the span of the
  fixed-interface modes of ``(K_ii, M_ii)`` changes when a component's stiffness or mass is
  scaled as a whole: the re-reduced ``T`` spans the same space, so eq. (8) is the derivative of
  the re-analysis and the forward modification of one parameter is the re-analysis itself
  (with a mode count: a cut-off frequency would keep other modes of the scaled component).
* Forward modification, the "linear equivalent analysis", eq. (12): ``(Lambda + Zhat(dK)) c =
  lambda* (I + Zhat(dM)) c`` of the CMS model's order, ``T`` not recomputed; modified modes
  ``u* = T Z c`` (eq. (11)). Exact for density changes (the CMS re-analysis), close otherwise.
* Inverse modification, eqs. (13)/(14): parameters ``alpha`` that make mode ``i`` reach
  ``lambda*``. One parameter, one target: eq. (14) is the generalized eigenproblem ``B c = mu D
  c``, ``B = Zhat(K_1 - lambda* M_1)``, ``D = lambda* I - Lambda`` (diagonal, singular when
  ``lambda*`` is a baseline eigenvalue), ``alpha = 1 / mu`` (``B`` is rank deficient for a local
  component: solving for ``mu`` avoids infinite roots). Candidates are the real roots with
  ``alpha > -1`` (the property stays positive); each is re-solved forward and kept only if it
  puts ``lambda*`` at position ``i`` (other roots move a different mode onto ``lambda*``); the
  smallest ``|alpha|`` kept is polished by the Newton below. Several parameters [OURS, notes
  A.6]: minimum-norm Newton on ``lambda_i(alpha) = lambda*``, gradient ``g_j = c^T (Khat_j -
  lambda Mhat_j) c`` with ``c`` normalized in the modified reduced mass, step ``d alpha = G^+
  (lambda* - lambda(alpha))`` (``G^+`` the pseudo-inverse, one row per target), each target's
  mode tracked by its MAC (modified-mass inner product) with the previous iterate's, from the
  baseline mode at the requested position (it may end at another position: the result says).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from fem.cms import KINDS
from fem.cms.coupling import CoupledCraigBampton, reduced_modes
from fem.cms.free_interface import FreeInterfaceModel
from fem.errors import ConvergenceError, DeckError, ModelError
from fem.solvers import eigen

RIGID = 1e-9       # lambda below RIGID * max |lambda|: a rigid-body mode (no normalized share)
EQUAL = 1e-10      # |lambda* - lambda_k| below EQUAL * lambda*: D = lambda* I - Lambda singular
REAL = 1e-8        # |Im mu| below REAL * |mu|: a real root of B c = mu D c
ZERO = 1e-12       # |mu| below ZERO * max |mu|: a zero root (alpha infinite)
ACCEPT = 1e-8      # a root puts lambda* at a position when |lambda - lambda*| <= ACCEPT lambda*


@dataclass(frozen=True)
class Parameter:
    """A linear design parameter: ``kind`` (``"density"`` or ``"modulus"``) of a component."""

    component: int
    kind: str


@dataclass
class DesignModel:
    """A coupled CMS model with its component matrices projected on its baseline modes.

    Attributes
    ----------
    coupled : the coupled model (``T`` per component)
    names : the components' names, in order
    omega2 : (k,) baseline eigenvalues of ``(K_bar, M_bar)``, ascending (rigid-body modes first)
    Z : (r, k) baseline modes ``p_i`` (columns), ``Z^T M_bar Z = I`` (``k = r``: all of them)
    K_hat, M_hat : (N, k, k) per component ``Z^T T_c^T K_c T_c Z`` and ``... M_c ...``
    """

    coupled: FreeInterfaceModel | CoupledCraigBampton
    names: tuple[str, ...]
    omega2: NDArray
    Z: NDArray
    K_hat: NDArray
    M_hat: NDArray

    def recover(self, C: NDArray) -> list[NDArray]:
        """Each component's modified modes ``T_c Z c`` (eq. (11)) for ``C (r,)`` or ``(r, k)``."""
        return self.coupled.recover(self.Z @ C)


@dataclass
class Sensitivity:
    """Eigenvalue sensitivities, eq. (8).

    Attributes
    ----------
    modes : (k,) the modes' positions (ascending, rigid-body modes included)
    omega2 : (k,) their eigenvalues
    derivative : (k, m) ``d lambda_i / d alpha_j``
    share : (k, m) ``(1 / lambda_i) d lambda_i / d alpha_j``: ``(rho_c / lambda_i) d lambda_i /
        d rho_c`` for a density, ``(E_c / lambda_i) d lambda_i / d E_c`` for a modulus
    """

    modes: NDArray
    omega2: NDArray
    derivative: NDArray
    share: NDArray


@dataclass
class Modified:
    """A modified model's eigenpairs from eq. (12)/(13), ``T`` fixed.

    Attributes
    ----------
    alpha : (m,) the fractional parameter changes
    omega2 : (r,) modified eigenvalues, ascending
    C : (r, r) coefficients ``c_i`` on the baseline modes, ``C^T (I + Zhat(dM)) C = I``; the
        modified modes are ``DesignModel.recover(C)``
    modes, targets : (k,) where the constrained (tracked) modes ended, ascending order, and their
        target eigenvalues (inverse only)
    candidates, positions : (one parameter, one target) the physical real roots ``alpha`` of eq.
        (14), by ``|alpha|``, and where each puts ``lambda*`` (-1: nowhere within ``ACCEPT``)
    iterations : Newton steps taken (inverse only)
    residual : ``max |lambda_i - lambda*| / lambda*`` at the end (inverse only)
    """

    alpha: NDArray
    omega2: NDArray
    C: NDArray
    modes: NDArray | None = None
    targets: NDArray | None = None
    candidates: NDArray | None = None
    positions: NDArray | None = None
    iterations: int = 0
    residual: float = 0.0


def design_model(coupled: FreeInterfaceModel | CoupledCraigBampton, matrices: Sequence, *,
                 modes: int | None = None) -> DesignModel:
    """Project each component's ``(K_c, M_c)`` on the baseline modes (module docstring).

    Parameters
    ----------
    coupled : the coupled model (:func:`fem.cms.free_interface.couple_free_interface`, or
        Craig-Bampton components assembled by :func:`fem.cms.coupling.couple`)
    matrices : per component, its ``(K_c, M_c)`` (the matrices it was reduced from)
    modes : keep the lowest ``modes`` baseline modes in ``Z`` (default: all of them)
    """
    names = tuple(c.name for c in coupled.components)
    if len(matrices) != len(coupled.T):
        raise DeckError("matrices", f"expected one (K, M) pair per component ({len(coupled.T)}: "
                        f"{', '.join(names)}), got {len(matrices)}")
    for T, pair, name in zip(coupled.T, matrices, names, strict=True):
        if len(pair) != 2 or any(getattr(X, "shape", None) != (len(T),) * 2 for X in pair):
            raise DeckError("matrices", f"component '{name}': expected (K, M), each of shape "
                            f"{(len(T),) * 2}, got {[getattr(X, 'shape', X) for X in pair]}")
    if modes is not None and (isinstance(modes, bool) or not isinstance(modes, (int, np.integer))
                              or modes <= 0):
        raise DeckError("modes", f"expected a positive number of baseline modes, got {modes!r}")
    Kp = np.array([T.T @ (K @ T) for T, (K, _) in zip(coupled.T, matrices, strict=True)])
    Mp = np.array([T.T @ (M @ T) for T, (_, M) in zip(coupled.T, matrices, strict=True)])
    Kbar, Mbar = Kp.sum(axis=0), Mp.sum(axis=0)
    omega2, Z = reduced_modes(0.5 * (Kbar + Kbar.T), 0.5 * (Mbar + Mbar.T), modes)
    K_hat = np.einsum("ai,cab,bj->cij", Z, Kp, Z)
    M_hat = np.einsum("ai,cab,bj->cij", Z, Mp, Z)
    return DesignModel(coupled, names, omega2, Z, 0.5 * (K_hat + K_hat.transpose(0, 2, 1)),
                       0.5 * (M_hat + M_hat.transpose(0, 2, 1)))


def parameters(dm: DesignModel, spec: Sequence) -> tuple[Parameter, ...]:
    """``spec``, pairs ``(component, kind)`` (index or name; ``"density"`` | ``"modulus"``)."""
    out = []
    for j, item in enumerate(spec):
        try:
            comp, kind = item
        except (TypeError, ValueError):
            raise DeckError(f"parameters[{j}]", "expected a pair (component, kind), got "
                            f"{item!r}") from None
        if isinstance(comp, str) and comp in dm.names:
            comp = dm.names.index(comp)
        if isinstance(comp, bool) or not isinstance(comp, (int, np.integer)) or \
                not 0 <= comp < len(dm.names):
            raise DeckError(f"parameters[{j}]", f"expected a component index in [0, "
                            f"{len(dm.names)}) or one of {list(dm.names)}, got {comp!r}")
        if kind not in KINDS:
            raise DeckError(f"parameters[{j}]", f"expected a kind in {list(KINDS)}, got "
                            f"{kind!r}")
        out.append(Parameter(int(comp), kind))
    if not out:
        raise DeckError("parameters", "expected at least one design parameter")
    return tuple(out)


def parameter_matrices(dm: DesignModel, params: Sequence[Parameter]) -> tuple[NDArray, NDArray]:
    """(m, r, r) ``Zhat(K_j)`` and ``Zhat(M_j)`` of the parameters."""
    r = len(dm.omega2)
    Kj, Mj = np.zeros((len(params), r, r)), np.zeros((len(params), r, r))
    for j, p in enumerate(params):
        if p.kind == "modulus":
            Kj[j] = dm.K_hat[p.component]
        else:
            Mj[j] = dm.M_hat[p.component]
    return Kj, Mj


def check_modes(dm: DesignModel, modes, key: str = "modes") -> NDArray:
    """``modes`` as distinct positions among the ``r`` baseline modes (else a DeckError)."""
    idx = np.atleast_1d(np.asarray(modes))
    r = len(dm.omega2)
    if idx.ndim != 1 or not idx.size or not np.issubdtype(idx.dtype, np.integer) or \
            (idx < 0).any() or (idx >= r).any() or len(np.unique(idx)) != len(idx):
        raise DeckError(key, f"expected distinct mode positions in [0, {r}), got "
                        f"{np.asarray(modes).tolist()}")
    return idx.astype(np.int64)


def sensitivities(dm: DesignModel, spec: Sequence, modes) -> Sensitivity:
    """Eq. (8) for the parameters ``spec`` (:func:`parameters`) and the elastic ``modes``."""
    params = parameters(dm, spec)
    idx = check_modes(dm, modes)
    lam = dm.omega2[idx]
    rigid = lam <= RIGID * np.abs(dm.omega2).max()
    if rigid.any():
        raise DeckError("modes", f"modes {idx[rigid].tolist()} are rigid-body modes (omega^2 = "
                        f"{lam[rigid].tolist()}): they have no normalized share")
    Kj, Mj = parameter_matrices(dm, params)
    d = Kj[:, idx, idx].T - lam[:, None] * Mj[:, idx, idx].T          # (k, m)
    return Sensitivity(idx, lam, d, d / lam[:, None])


def check_alpha(alpha, m: int) -> NDArray:
    """``alpha (m,)``, every change above -1 (the property stays positive)."""
    a = np.atleast_1d(np.asarray(alpha, dtype=float))
    if a.shape != (m,) or not np.isfinite(a).all() or (a <= -1).any():
        raise DeckError("alpha", f"expected {m} fractional changes, each > -1 (a property "
                        f"times 1 + alpha stays positive), got {np.asarray(alpha).tolist()}")
    return a


def linear_equivalent(dm: DesignModel, Kj: NDArray, Mj: NDArray, alpha: NDArray
                      ) -> tuple[NDArray, NDArray]:
    """``(omega2, C)`` of ``(Lambda + sum alpha_j Kj) c = lambda (I + sum alpha_j Mj) c``."""
    A = np.diag(dm.omega2) + np.einsum("j,jab->ab", alpha, Kj)
    B = np.eye(len(dm.omega2)) + np.einsum("j,jab->ab", alpha, Mj)
    r = len(dm.omega2)
    try:
        pairs = eigen.symmetric(0.5 * (A + A.T), 0.5 * (B + B.T), r, method="dense",
                                what="the modified model")
    except ModelError:
        pairs = None
    if pairs is None or pairs.found < r:
        raise ModelError(f"modification alpha = {alpha.tolist()}: the modified reduced mass "
                         "I + Zhat(dM) is not positive definite")
    return pairs.values, pairs.vectors


def forward(dm: DesignModel, spec: Sequence, alpha) -> Modified:
    """The linear equivalent analysis, eq. (12), for changes ``alpha`` of ``spec``.

    Exact (the CMS re-analysis) when only densities change; an approximation when a modulus does
    (``T`` would change; notes A.5: 0.8 % on the test beam for E and rho / 2.9).
    """
    params = parameters(dm, spec)
    a = check_alpha(alpha, len(params))
    omega2, C = linear_equivalent(dm, *parameter_matrices(dm, params), a)
    return Modified(a, omega2, C)


def inverse(dm: DesignModel, spec: Sequence, modes, targets, *, tol: float = 1e-12,
            max_iterations: int = 20, first: int = 0) -> Modified:
    """Changes ``alpha`` of ``spec`` that give ``omega2[modes] = targets`` (module docstring).

    Parameters
    ----------
    dm : the design model (:func:`design_model`)
    spec : the design parameters (:func:`parameters`)
    modes : positions of the constrained modes (ascending, rigid-body modes included)
    targets : their target eigenvalues ``lambda* = omega*^2`` (> 0)
    tol : Newton stops at ``|lambda_i - lambda*| <= tol lambda*``
    max_iterations : Newton steps before a :class:`~fem.errors.ConvergenceError`
    first : the number messages give the mode at position 0 (1: a deck's 1-based numbers)
    """
    params = parameters(dm, spec)
    idx = check_modes(dm, modes)
    if isinstance(max_iterations, bool) or not isinstance(max_iterations, (int, np.integer)) \
            or max_iterations < 1 or not tol > 0:
        raise DeckError("max_iterations, tol", "expected a positive number of iterations and a "
                        f"positive tolerance, got {max_iterations!r} and {tol!r}")
    lam_t = np.atleast_1d(np.asarray(targets, dtype=float))
    if lam_t.shape != idx.shape or not np.isfinite(lam_t).all() or (lam_t <= 0).any():
        raise DeckError("targets", f"expected {len(idx)} positive target eigenvalues "
                        f"(omega^2), one per mode, got {np.asarray(targets).tolist()}")
    Kj, Mj = parameter_matrices(dm, params)
    if len(params) == 1 and len(idx) == 1:
        alpha, candidates, positions, C = single(dm, Kj[0], Mj[0], int(idx[0]), lam_t[0],
                                                 first)
        return newton(dm, Kj, Mj, idx, lam_t, alpha, C[:, idx], tol, max_iterations, first,
                      candidates=candidates, positions=positions)
    return newton(dm, Kj, Mj, idx, lam_t, np.zeros(len(params)),
                  np.eye(len(dm.omega2))[:, idx], tol, max_iterations, first)


def single(dm: DesignModel, K1: NDArray, M1: NDArray, i: int, lam_t: float, first: int = 0):
    """Eq. (14) for one parameter: ``(alpha (1,), candidates, positions, C)`` of the root kept.

    Messages number the modes from ``first``.
    """
    D = lam_t - dm.omega2
    k = int(np.argmin(np.abs(D)))
    if abs(D[k]) <= EQUAL * lam_t:
        raise ModelError(f"inverse modification: the target omega^2 = {lam_t:.10g} equals the "
                         f"baseline eigenvalue of mode {k + first} ({dm.omega2[k]:.10g}), so D = "
                         "lambda* I - Lambda is singular: move the target or use two parameters")
    # D = lambda* I - Lambda is indefinite in general: the QZ algorithm for every target
    mu = eigen.general(K1 - lam_t * M1, np.diag(D), len(D), method="dense",
                       symmetric=False).values
    mu = mu[np.isfinite(mu)]
    big = np.abs(mu).max(initial=0.0)
    real = (np.abs(mu.imag) <= REAL * np.abs(mu)) & (np.abs(mu) > ZERO * big)
    alphas = 1.0 / mu.real[real]
    alphas = alphas[alphas > -1]
    alphas = alphas[np.argsort(np.abs(alphas))]
    if not len(alphas):
        raise ModelError(f"inverse modification: no physical change reaches omega^2 = "
                         f"{lam_t:.10g} at mode {i + first} (eq. (14) has no real root with "
                         f"alpha > -1; real roots: {np.sort(1.0 / mu.real[real]).tolist()})")
    positions, chosen = np.full(len(alphas), -1), None
    for n, a in enumerate(alphas):                        # a few roots, one small eigh each
        w, C = linear_equivalent(dm, K1[None], M1[None], np.array([a]))
        near = int(np.argmin(np.abs(w - lam_t)))
        positions[n] = near if abs(w[near] - lam_t) <= ACCEPT * lam_t else -1
        if positions[n] == i and chosen is None:
            chosen = (np.array([a]), C)
    if chosen is None:
        raise ModelError(f"inverse modification: the physical roots alpha = "
                         f"{alphas.tolist()} put omega^2 = {lam_t:.10g} at modes "
                         f"{np.where(positions >= 0, positions + first, -1).tolist()}, none "
                         f"at mode {i + first}")
    return chosen[0], alphas, positions, chosen[1]


def newton(dm: DesignModel, Kj: NDArray, Mj: NDArray, idx: NDArray, lam_t: NDArray,
           alpha: NDArray, previous: NDArray, tol: float, max_iterations: int,
           first: int = 0, **found) -> Modified:
    """Minimum-norm Newton on ``lambda_idx(alpha) = lam_t``, modes tracked by MAC.

    Messages number the modes from ``first``.
    """
    alpha = alpha.astype(float)
    for it in range(max_iterations + 1):
        omega2, C = linear_equivalent(dm, Kj, Mj, alpha)
        B = np.eye(len(omega2)) + np.einsum("j,jab->ab", alpha, Mj)
        overlap = (previous.T @ B @ C) ** 2 / np.einsum("ak,ab,bk->k", previous, B,
                                                        previous)[:, None]
        pos = np.argmax(overlap, axis=1)
        if len(np.unique(pos)) != len(pos):
            raise ModelError(f"inverse modification: modes {(idx + first).tolist()} lost track "
                             f"of each other at iteration {it} (they all resemble modes "
                             f"{(pos + first).tolist()})")
        c = C[:, pos]                                             # (r, k), c^T B c = 1
        res = omega2[pos] - lam_t
        residual = float(np.max(np.abs(res) / lam_t))
        if residual <= tol:
            return Modified(alpha, omega2, C, modes=pos, targets=lam_t, iterations=it,
                            residual=residual, **found)
        if it == max_iterations:
            break
        G = (np.einsum("ak,jab,bk->kj", c, Kj, c)
             - omega2[pos][:, None] * np.einsum("ak,jab,bk->kj", c, Mj, c))
        step = np.linalg.lstsq(G, -res, rcond=None)[0]            # minimum norm
        for _ in range(60):                                       # stay physical: alpha > -1
            if (alpha + step > -1).all():
                break
            step = 0.5 * step
        alpha, previous = alpha + step, c
    raise ConvergenceError(f"inverse modification: Newton did not converge in {max_iterations} "
                     f"iterations: max |lambda - lambda*| / lambda* = {residual:.3g} "
                     f"(tolerance {tol:.3g}) at alpha = {alpha.tolist()}")
