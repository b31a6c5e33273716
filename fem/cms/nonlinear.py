"""A component's own nonlinear strain energy on its reduced basis (issue 33 item 2).

Geometric stiffening of a reduced component from its own strain energy, for any interface:

* **static modal derivatives** (Idelsohn & Cardona 1985, "A reduction method for nonlinear
  structural dynamic analysis", CMAME 49, 253-279, eq. 14): with the interface held,
  ``K_ii theta_ij = -(dK/dq_j phi_j)_i phi_i``, the second derivative of the full model's
  internal force along two kept modes (:func:`modal_derivatives`, a central difference of
  that force, exact to ``O(h^2)``). For a beam they are the axial "foreshortening" fields of
  bending (``u' = -w'^2/2``), through which the floating frame's inertia (centrifugal force
  on the recovered positions) does work on the bending: Kane's stiffening. They are made
  mass-orthonormal to the kept modes and to each other, the dependent ones dropped
  (:func:`orthonormal`); with them the static responses to inertial loads (uniform and
  linear-in-position accelerations, :func:`inertial_loads`), which carry the tension of a
  spinning component (its centrifugal stretch ``u(x)``, the ``N`` of ``N w'^2/2``);
* **the strain energy as a polynomial** of the reduced coordinates (Muravyov & Rizzi 2003,
  "Determination of nonlinear stiffness with application to random vibration of geometrically
  nonlinear structures", Computers & Structures 81, 1513-1523: the "STEP" of enforced
  displacements)::

      U(q) = q^T K q / 2 + A_ijk q_i q_j q_k / 6 + B_ijkl q_i q_j q_k q_l / 24,

  ``A``, ``B`` symmetric in every index: the third and fourth derivatives of the full model's
  energy ``U_full(T q)`` at the reference, from its gradient at the reduced displacements
  ``+-h e_i``, ``+-h (e_i +- e_j)``, ``+-h (e_i + e_j + e_k)`` (:func:`step_coefficients`,
  ``2 n + 4 C(n, 2) + 2 C(n, 3)`` gradients). ``U_poly`` is the full energy's Taylor
  polynomial of degree 4 (up to ``O(h^2)`` in its coefficients): its error falls as
  ``|q|^5``.

The gradient of ``U_full(T q)`` (:func:`reduced_gradient`): ``T^T`` times the full model's
internal force with the rotation slots of ``T q`` read as rotation vectors; the force of a
co-rotational model is conjugate to spatial spins ``dR = hat(dw) R``, and ``dw = J_l(theta)
dtheta`` (:func:`fem.rotations.jl`), so its moments enter as ``J_l^T m``.
"""

from __future__ import annotations

import itertools

import numpy as np
from numpy.typing import NDArray

from fem import rotations as so3
from fem.elements.superelement.polynomial import Polynomial  # noqa: F401 (fem.cms.nonlinear's)

STEP = 1e-3             #: enforced displacements: this share of the component's size
RANK = 1e-10            #: derivatives whose mass norm is below this share after projection


def reduced_gradient(system, state, T: NDArray, rows: NDArray | None = None):
    """``g(q) = T^T grad U_full(T q)`` of component ``system`` (module docstring), a function.

    ``state`` the component's reference state; ``rows`` the columns of ``T`` the result is
    asked on (default all). Nodes whose rotations are additive take ``T q``'s rotation slots
    as they are (no ``J_l``).
    """
    dm = system.dofmap
    n = system.n_free
    cols = T if rows is None else T[:, rows]
    spins = np.ones(system.model.n_nodes, dtype=bool)
    if system.additive is not None:
        spins &= ~np.asarray(system.additive, dtype=bool)

    def gradient_full(u: NDArray) -> NDArray:
        """``(n,)`` the full model's energy gradient at the unknowns ``u (n,)`` (3D)."""
        s = state.copy()
        nodal = dm.to_nodal(u)
        theta = nodal[:, 3:6]
        s.u[:, :3] = nodal[:, :3]
        s.rot = so3.quat_from_rotvec(theta)
        f = dm.to_nodal(system.internal_force(s)[:n])
        f[spins, 3:6] = np.einsum("nji,nj->ni", so3.jl(theta[spins]), f[spins, 3:6])
        return dm.from_nodal(f)[:n]

    def gradient(q: NDArray) -> NDArray:
        return cols.T @ gradient_full(T @ q if rows is None else cols @ q)

    gradient.full = gradient_full
    return gradient


def modal_derivatives(gradient_full, Phi: NDArray, h: NDArray) -> NDArray:
    """``(n, m (m + 1) / 2)`` the second derivatives ``A(phi_i, phi_j)`` of the full gradient.

    ``Phi (n, m)`` the kept modes on the component's unknowns, ``h (m,)`` their step sizes:
    ``[g(a + b) + g(-a - b) - g(a - b) - g(b - a)] / 4`` with ``a = h_i phi_i``,
    ``b = h_j phi_j``, divided by ``h_i h_j``. The caller solves ``K_ii theta = -D_i``.
    """
    m = Phi.shape[1]
    out = []
    for i in range(m):
        for j in range(i, m):
            a, b = h[i] * Phi[:, i], h[j] * Phi[:, j]
            d = (gradient_full(a + b) + gradient_full(-a - b) - gradient_full(a - b)
                 - gradient_full(b - a)) / 4.0
            out.append(d / (h[i] * h[j]))
    return np.column_stack(out) if out else np.zeros((Phi.shape[0], 0))


def inertial_loads(M, slot: NDArray, X: NDArray) -> NDArray:
    """``(n, 12)`` ``M`` times unit rigid accelerations and the position fields ``X_j e_k``.

    ``slot (n,)`` each unknown's DOF slot, ``X (n, 3)`` its node's position: the loads of a
    uniform acceleration along each axis and, linear in the positions, of every centrifugal
    and angular acceleration field (``omega x (omega x x)``, ``alpha x x``): the static
    responses to them carry the tension of a spinning component.
    """
    F = np.zeros((len(slot), 12))
    for k in range(3):
        on = slot == k
        F[on, k] = 1.0
        F[on, 3 + 3 * k:6 + 3 * k] = X[on]
    return M @ F


def orthonormal(Theta: NDArray, Phi: NDArray, M) -> NDArray:
    """``Theta`` made ``M``-orthonormal to the ``M``-orthonormal ``Phi`` and among itself.

    Columns dependent on the others (mass norm below :data:`RANK` of the largest, after the
    projection) are dropped; the rest are the ``M``-orthonormal eigenbasis of their Gram matrix.
    """
    if Theta.shape[1] == 0:
        return Theta
    Theta = Theta / np.sqrt(np.maximum(np.einsum("ij,ij->j", Theta, M @ Theta), 1e-300))
    Theta = Theta - Phi @ (Phi.T @ (M @ Theta))
    Theta = Theta - Phi @ (Phi.T @ (M @ Theta))          # twice is enough (Kahan)
    G = Theta.T @ (M @ Theta)
    lam, V = np.linalg.eigh(0.5 * (G + G.T))
    keep = lam > RANK * max(lam.max(), 1e-300)
    return Theta @ (V[:, keep] / np.sqrt(lam[keep]))


def step_coefficients(nonlinear, h: NDArray, first: NDArray | None = None
                      ) -> tuple[NDArray, NDArray]:
    """``A (n, n, n)``, ``B (m, m, m, m)``: the cubic and quartic tensors of the energy.

    ``nonlinear(q)`` is the gradient's nonlinear part ``g(q) - K q = A(q, q)/2 + B(q, q, q)/6
    + ...``; ``h (n,)`` the enforced displacement of each coordinate (module docstring). The
    even and odd parts of ``nonlinear`` at ``+-d`` give ``A(d, d)`` and ``B(d, d, d)``; the
    directions ``e_i``, ``e_i +- e_j``, ``e_i + e_j + e_k`` over the coordinates ``first``
    (default all) separate every coefficient of the kept terms (:func:`weighted`). Both
    tensors symmetric in all their indices (they are derivatives of one energy); ``B`` on the
    ``m`` coordinates ``first`` (zero elsewhere).
    """
    n = len(h)
    F = np.arange(n) if first is None else np.asarray(first, dtype=np.int64)
    m = len(F)
    A = np.zeros((n, m, m))
    B = np.zeros((n, m, m, m))

    def parts(d: NDArray) -> tuple[NDArray, NDArray]:
        q = np.zeros(n)
        q[F] = h[F] * d
        p, mm = h * nonlinear(q), h * nonlinear(-q)      # in the scaled coordinates q = h z
        return p + mm, 3.0 * (p - mm)

    eye = np.eye(m)
    for i in range(m):
        A[:, i, i], B[:, i, i, i] = parts(eye[i])
    for i, j in itertools.combinations(range(m), 2):
        e1, o1 = parts(eye[i] + eye[j])
        e2, o2 = parts(eye[i] - eye[j])
        A[:, i, j] = A[:, j, i] = 0.25 * (e1 - e2)
        iij = (o1 - o2 - 2.0 * B[:, j, j, j]) / 6.0
        ijj = (o1 + o2 - 2.0 * B[:, i, i, i]) / 6.0
        for a, b, c in set(itertools.permutations((i, i, j))):
            B[:, a, b, c] = iij
        for a, b, c in set(itertools.permutations((i, j, j))):
            B[:, a, b, c] = ijj
    for i, j, k in itertools.combinations(range(m), 3):
        _, o = parts(eye[i] + eye[j] + eye[k])
        rest = sum(B[:, a, b, c] for a in (i, j, k) for b in (i, j, k) for c in (i, j, k)
                   if len({a, b, c}) < 3)
        ijk = (o - rest) / 6.0
        for a, b, c in itertools.permutations((i, j, k)):
            B[:, a, b, c] = ijk
    A /= np.einsum("i,j,k->ijk", h, h[F], h[F])
    B /= np.einsum("i,j,k,l->ijkl", h, h[F], h[F], h[F])
    return weighted(A, B, F)


def weighted(A: NDArray, B: NDArray, F: NDArray) -> tuple[NDArray, NDArray]:
    """The energy's terms of weighted degree 4 at most, symmetric, from their derivatives.

    Returns the cubic tensor ``(n, n, n)`` and the quartic one on ``F`` alone ``(m, m, m, m)``
    (the rest of it is zero).

    ``A (n, m, m)``, ``B (n, m, m, m)`` the derivatives along the first-order coordinates
    ``F (m,)`` (weight 1: the interface's and the kept modes'); the others (the modal
    derivatives and inertial responses, second order: ``eta ~ w^2``) weigh 2. Kept: the cubic
    terms with at most one second-order index (``w w w``, ``w w eta``) and the quartic terms of
    first-order ones (``w w w w``): von Karman's energy ``EA/2 (u' + w'^2/2)^2 + EI/2 w''^2``
    exactly, a sum of squares whose inextensional valley ``u' = -w'^2/2`` the truncation keeps.
    The full quartic Taylor polynomial is not uniform in that ordering: its ``w w eta eta``,
    ``eta^3``, ... terms are of weighted degree 6 to 8 while others of degree 6 (``w^6``) are
    missing, and their axial-stiffness-sized remainder softens a slender beam's bending (on
    Kane's beam, ``EA L^2/EI = 2e5``, the condensed bending energy of a 0.57 m tip deflection
    came out at 45 % of the full model's).
    """
    n = A.shape[0]
    second = np.setdiff1d(np.arange(n), F)
    Af = np.zeros((n, n, n))
    Af[np.ix_(F, F, F)] = sum(np.transpose(A[F], p)
                              for p in itertools.permutations(range(3))) / 6.0
    a = A[second]                                            # (s, m, m) eta w w
    S, Fi = second[:, None, None], F[None, :, None]
    Fj = F[None, None, :]
    Af[S, Fi, Fj] = a
    Af[Fi, S, Fj] = a
    Af[Fi, Fj, S] = a
    Bf = sum(np.transpose(B[F], p) for p in itertools.permutations(range(4))) / 24.0
    return Af, Bf
