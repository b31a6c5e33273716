"""The linearized equations of motion about a state: ``M dq'' + D dq' + K dq = 0``.

About a state ``(q, v, a)`` with multipliers ``lambda`` (a static equilibrium, any instant of a
dynamic run) or about a *steady rotation* at the constant angular velocity ``Omega`` about an axis
through ``c`` (the equations written in the frame turning with it, where the steady motion is a
relative equilibrium). Perturbations: translations ``dx``; rotations as spatial spins ``dphi``
(``R = exp(hat(dphi)) R_bar``); multipliers ``dlambda`` (rows with neither mass nor damping).

The residual is ``f_in(q, v, a) + f_int(q) + G^T lambda - f_ext(q) = 0``, ``g(q) = 0``:

* ``K`` = the step's full tangent (material + geometric stiffness of the current stresses,
  ``d(G^T lambda)/dq`` and ``G`` of the joints, the load stiffness of follower loads) plus the
  inertial forces' ``d f_in / dq``;
* ``D`` = ``d f_in / dv``: gyroscopic (and, in a turning frame, Coriolis) terms, plus the
  ``damping(state)`` of element groups with the capability ``"damping"`` (force elements);
* ``M`` = the lumped mass the dynamic steps integrate.

Nodal inertial forces (:class:`fem.inertia.nodal.NodalInertia`; ``J_s = R J R^T`` the spatial
rotary inertia of a node, ``omega_r = Omega + omega`` its angular velocity seen from the inertial
frame, ``omega`` and ``alpha`` relative to the turning frame, all in its axes)::

    translations:  m (a + 2 Omega x v + Omega x (Omega x (x - c)))
    rotations:     J_s alpha + omega_r x J_s omega_r + J_s (Omega x omega)

(``Omega = 0``: the Euler equations ``J_s alpha + omega x J_s omega``.) With spin perturbations,
``omega = omega_bar + dphi' + dphi x omega_bar`` and ``alpha = alpha_bar + dphi'' + dphi x
alpha_bar - omega_bar x dphi'`` to first order (``R = exp(hat(dphi)) R_bar``, ``hat(omega) = R'
R^T``), so with ``F_R``, ``F_w`` the derivatives of the rotational force by a spin of ``R`` (at
fixed spatial ``omega``, ``alpha``) and by ``omega``::

    M_r = J_s,   D_r = F_w - J_s hat(omega),   K_r = F_R - F_w hat(omega) - J_s hat(alpha)

which for ``Omega = 0`` is ``K_r = -hat(f_r)`` (a spin of ``R`` at fixed body rates turns the
force). Translations: ``M = m``, ``D = 2 m hat(Omega)``, ``K = m hat(Omega)^2`` (centrifugal
softening). 2D: the spin is about ``z``, and the rotations carry ``I_z`` alone.

Element-level inertia groups of superelements add their element blocks
(:meth:`fem.inertia.superelement.SuperelementInertia.linear_blocks`: the constant reduced mass
on ``q = [u_b; eta]``, with ``eta``'s accelerations ``internal_a``;
:meth:`fem.inertia.floating.FloatingInertia.linear_blocks`: ``J_y^T M_d J_y`` and the
derivatives of its velocity terms; :meth:`fem.inertia.floating3d.FloatingInertia3D.linear_blocks`
for 3D co-rotational ones, about rest, analytic), and in a turning frame their components'
centrifugal force, gyroscopic and centrifugal-softening blocks from the components' lumped
masses mapped by the reduction's basis (linear) or the recovery (co-rotational); geometric
stiffening by the centrifugal tension only where the superelement carries it (a planar
co-rotational one with the chord stiffening of its file, a 3D one with its file's polynomial
energy, :mod:`fem.elements.superelement.corot3d`), none for a linear one. Beams with
``inertia = "consistent"`` are not linearized yet: a step refuses them by name.

What the linearize and sweep steps take from such a model is here too: its eigenvalues
(:class:`Eigenvalues`, the pairs nearest a shift, :func:`nearest`; all of them by LAPACK,
:func:`dense_eigenvalues`) and the first-order state-space model on the independent coordinates
(:func:`state_space`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from fem import lazy
from fem import rotations as so3
from fem.errors import ModelError
from fem.solvers import eigen
from fem.solvers.eigen import Verdict, verdict

sp = lazy.module("scipy.sparse")


@dataclass
class LinearModel:
    """``M``, ``D``, ``K`` (scipy CSR on the unknowns: free DOFs, internal, multipliers)."""

    M: sp.csr_matrix
    D: sp.csr_matrix
    K: sp.csr_matrix


def _frame(dim: int, spin, center) -> tuple[NDArray, NDArray]:
    Omega = np.zeros(3) if spin is None else np.asarray(spin, dtype=float).reshape(-1)
    if dim == 2 and len(Omega) == 1:
        Omega = np.array([0.0, 0.0, Omega[0]])
    c = np.zeros(3)
    if center is not None:
        c[:len(center)] = center
    return Omega, c


def inertial_forces(inertia, state, X: NDArray, spin=None, center=None, *,
                    matrices: bool = True):
    """Nodal inertial forces ``(n, nslots)`` of a state in a frame turning at ``spin``.

    ``state.v``, ``state.a`` are the nodes' velocities and accelerations relative to that frame
    (spatial: angular velocities ``omega``, not body rates). With ``matrices``, also the nodal
    blocks ``(n, nslots, nslots)`` of ``M``, ``D`` and ``K`` (module docstring).
    """
    d = inertia.dim
    n = len(inertia.m)
    ns = 3 if d == 2 else 6
    Omega, c = _frame(d, spin, center)
    m = inertia.m
    x = np.zeros((n, 3))
    x[:, :d] = X[:, :d] + state.u[:, :d]
    v = np.zeros((n, 3))
    a = np.zeros((n, 3))
    v[:, :d], a[:, :d] = state.v[:, :d], state.a[:, :d]
    W = so3.hat(Omega)
    f_t = m[:, None] * (a + 2 * v @ W.T + (x - c) @ (W @ W).T)
    f = np.zeros((n, ns))
    f[:, :d] = f_t[:, :d]
    Mb = np.zeros((n, ns, ns))
    Db = np.zeros((n, ns, ns))
    Kb = np.zeros((n, ns, ns))
    Mb[:, range(d), range(d)] = m[:, None]
    Db[:, :d, :d] = 2 * m[:, None, None] * W[:d, :d]
    Kb[:, :d, :d] = m[:, None, None] * (W @ W)[:d, :d]
    if d == 2:
        f[:, 2] = inertia.I * state.a[:, 2]
        Mb[:, 2, 2] = inertia.I
        return (f, Mb, Db, Kb) if matrices else f
    R = state.rotation_matrices()
    lie = inertia.lie
    R[~lie] = np.eye(3)                       # additive rotation vectors: J in global axes
    Js = R @ inertia.J @ np.swapaxes(R, 1, 2)
    w, al = state.v[:, 3:6], state.a[:, 3:6]
    wr = Omega + w
    Jw = np.einsum("nij,nj->ni", Js, wr)
    f[:, 3:6] = (np.einsum("nij,nj->ni", Js, al) + np.cross(wr, Jw)
                 + np.einsum("nij,nj->ni", Js, np.cross(Omega, w)))
    if not matrices:
        return f
    hw, hwr, hal = so3.hat(w), so3.hat(wr), so3.hat(al)
    # derivatives by omega and by a spin of R (at fixed spatial omega, alpha)
    F_w = hwr @ Js - so3.hat(Jw) + Js @ W
    Ja = np.einsum("nij,nj->ni", Js, al)
    JOw = np.einsum("nij,nj->ni", Js, np.cross(Omega, w))
    F_R = (-so3.hat(Ja) + Js @ hal + hwr @ (Js @ hwr - so3.hat(Jw))
           - so3.hat(JOw) + Js @ so3.hat(np.cross(Omega, w)))
    Mb[:, 3:6, 3:6] = Js
    Db[lie, 3:6, 3:6] = (F_w - Js @ hw)[lie]
    Kb[lie, 3:6, 3:6] = (F_R - F_w @ hw - Js @ hal)[lie]
    Db[~lie, 3:6, 3:6] = F_w[~lie]            # small rotations: rates are the omega themselves
    return f, Mb, Db, Kb


def linear_model(system, state, loads, *, spin=None, center=None, geometric: bool = True
                 ) -> tuple[LinearModel, NDArray]:
    """The linearized ``M``, ``D``, ``K`` about ``state`` and its residual ``(n_active,)``.

    ``loads`` (a begun :class:`fem.loads.StepLoads`) gives the external forces (those held from
    earlier steps and the step's own at ``t = 0``) and their load stiffness. ``geometric =
    False`` drops the elements' stress-dependent part of ``K`` (the material tangent alone: the
    "premature linearization" that misses stress stiffening); the joints' terms stay.
    """
    asm = system.assembler
    none = [None] * len(system.model.groups)
    inertia = system_inertia(system, state)
    # the nodal group's own masses (an InertiaSum's ``m`` adds the element groups' estimates)
    f_in, Mb, Db, Kb = inertial_forces(getattr(inertia, "nodal", inertia), state,
                                       system.model.X, spin, center)
    Omega, c = _frame(system.model.dim, spin, center)
    fx, Mx, Dx, Kx = _element_blocks(system, inertia, state, Omega, c)
    KL = loads.stiffness(state, 0.0)
    nodal_K = Kb if KL is None else Kb + KL
    f_int = system.internal_force(state)
    if geometric:
        K = system.tangent(state, nodal_K)
    else:
        K = (system.material_tangent(state) + system.constraint_matrix(state)
             + asm.matrix(none, nodal_K))
    dm = system.dofmap
    r = f_int + dm.from_nodal(f_in - loads.force(state, 0.0))
    if fx is not None:
        r = r + asm.vector(fx)
        K = K + asm.matrix(Kx)
    # element damping (force elements, joint dampers and controllers): capability "damping",
    # beside the inertia groups' own blocks
    Dg = [g.damping(state) if "damping" in g.capabilities else None
          for g in system.model.groups]
    D = [a if b is None else b if a is None else a + b
         for a, b in zip(Dx or none, Dg, strict=True)]
    model = LinearModel(asm.to_scipy(asm.matrix(Mx or none, Mb)).tocsr(),
                        asm.to_scipy(asm.matrix(D, Db)).tocsr(),
                        asm.to_scipy(K).tocsr())
    return model, r


def _element_blocks(system, inertia, state, Omega=None, c=None):
    """Per element group: the element-level inertia groups' ``f``, ``M``, ``D``, ``K`` blocks.

    In the frame turning at ``Omega (3,)`` about ``c (3,)`` (each group's spin terms);
    ``(None, None, None, None)`` without such groups (the nodal inertia alone).
    """
    if not inertia.extras:
        return None, None, None, None
    n = len(system.model.groups)
    out = [[None] * n for _ in range(4)]
    for x in inertia.extras:
        for part, block in zip(out, x.linear_blocks(state, Omega, c), strict=True):
            part[x.index] = block if part[x.index] is None else part[x.index] + block
    return tuple(out)


def system_inertia(system, state):
    """The model's inertia: nodal, and superelements' element-level groups (module doc).

    Refused by name: beams with ``inertia = "consistent"`` (the superelements' terms of a
    turning frame are their groups' ``linear_blocks``).
    """
    from fem.errors import ModelError
    from fem.inertia import inertia_groups

    inertia = inertia_groups(system, state)
    beams = [system.model.groups[x.index].name for x in inertia.extras
             if not hasattr(x, "linear_blocks")]
    if beams:
        raise ModelError(f"element group(s) {', '.join(beams)}: inertia = \"consistent\" is not "
                         "linearized yet; use the lumped inertia (the default) for a linearize "
                         "step")
    return inertia


# --- eigenvalues and the state-space model of a linear model -----------------------------------

@dataclass
class Eigenvalues:
    """Eigenvalues ``p`` of the linearized model, with their right vectors (columns).

    ``bounds (m,)``: absolute error bound of each eigenvalue (so of its real part) and
    ``condition (m,)`` its condition number (:func:`fem.solvers.eigen.bounds.error_bounds`;
    None until :meth:`fem.analysis.linearize.LinearizeStep.checked` sets them); ``left (n,
    m)``: the left vectors, ``y^T (p^2 M + p D + K) = 0``; ``conservative``: the model is
    conservative gyroscopic.
    """

    values: NDArray
    vectors: NDArray
    backward_errors: NDArray
    bounds: NDArray | None = None
    condition: NDArray | None = None
    left: NDArray | None = None
    conservative: bool = False

    @property
    def frequencies(self) -> NDArray:
        """``|Im p|`` (rad/s)."""
        return np.abs(self.values.imag)

    @property
    def damping_ratios(self) -> NDArray:
        """``-Re p / |p|``."""
        return -self.values.real / np.maximum(np.abs(self.values), 1e-300)

    def verdict(self) -> Verdict:
        """Stable, unstable or unknown against the error bounds (zero bounds if none are set)."""
        bounds = self.bounds if self.bounds is not None else np.zeros(len(self.values))
        return verdict(self.values, bounds, self.conservative)

    def stable(self) -> bool:
        """No eigenvalue whose real part exceeds its error bound, and at least one eigenvalue."""
        return self.verdict().state == "stable"


def nearest(values, vectors, errors, count: int, shift: float, left=None) -> Eigenvalues:
    """One of each conjugate pair (``Im p >= 0``), the ``count`` pairs nearest ``shift``.

    A complex ``p`` stands for its conjugate pair; real eigenvalues count half a pair each (an
    undamped model has them as ``+-a``: a rigid-body mode's double zero, a divergence), so that
    ``count`` pairs never end at the rigid-body modes when an unstable pair is next.
    """
    scale = max(float(np.abs(values).max(initial=0.0)), 1e-300)
    keep = values.imag >= -1e-9 * scale
    values, vectors, errors = values[keep], vectors[:, keep], errors[keep]
    left = left[:, keep] if left is not None else None
    order = np.argsort(np.abs(values - shift), kind="stable")
    units = np.where(np.abs(values.imag[order]) <= 1e-9 * scale, 0.5, 1.0)
    order = order[:int(np.searchsorted(np.cumsum(units), count - 0.25)) + 1]
    order = order[np.argsort(np.abs(values[order]), kind="stable")]
    return Eigenvalues(values[order], vectors[:, order], errors[order],
                       left=left[:, order] if left is not None else None)


def nearest_pairs(pairs, count: int, shift: float) -> Eigenvalues:
    """:func:`nearest` of the front-end's pairs (:class:`fem.solvers.eigen.Eigenpairs`)."""
    return nearest(pairs.values, pairs.vectors, pairs.residuals, count, shift, pairs.left)


def dense_eigenvalues(lm: LinearModel, count: int, shift: float) -> Eigenvalues:
    """The ``count`` finite eigenvalues nearest ``shift`` (one of each conjugate pair), by LAPACK.

    All of ``[[0, I], [-K, -D]] - p [[I, 0], [0, M]]`` (:func:`fem.solvers.eigen.quadratic`).
    """
    pairs = eigen.quadratic(lm.M, lm.D, lm.K, 2 * count + 2, shift, method="dense")
    return nearest_pairs(pairs, count, shift)


def state_space(lm: LinearModel, dofs: int, n: int, ins: list, outs: list, what: str) -> dict:
    """``A, B, C, D`` on ``x = [z; z']``, ``q = N z``, ``N`` the null space of the joints.

    ``dofs``: the unknowns before the multipliers, ``n`` the free unknowns; ``ins``, ``outs``:
    ``[(unknown index, quantity)]`` of the forces in and of the displacements or velocities
    out; ``what`` names the step in the message of a model without mass on an independent
    coordinate.
    """
    import scipy.linalg as la

    K, D, M = (X.toarray() for X in (lm.K, lm.D, lm.M))
    G = K[dofs:n, :dofs]
    N = la.null_space(G) if G.shape[0] else np.eye(dofs)
    Mz, Dz, Kz = (N.T @ X[:dofs, :dofs] @ N for X in (M, D, K))
    if np.linalg.matrix_rank(Mz) < len(Mz):
        raise ModelError(f"{what}: the state-space model needs mass on every "
                         "independent coordinate (a massless rotation: give the sections "
                         "rotary inertia)")
    P = np.zeros((dofs, len(ins)))
    for j, (k, _) in enumerate(ins):
        P[k, j] = 1.0
    Minv = np.linalg.inv(Mz)
    m = len(Mz)
    A = np.block([[np.zeros((m, m)), np.eye(m)], [-Minv @ Kz, -Minv @ Dz]])
    B = np.vstack([np.zeros((m, len(ins))), Minv @ N.T @ P])
    C = np.zeros((len(outs), 2 * m))
    for i, (k, quantity) in enumerate(outs):
        C[i, (m if quantity == "velocity" else 0) + np.arange(m)] = N[k]
    return {"A": A, "B": B, "C": C, "D": np.zeros((len(outs), len(ins))), "N": N}
