"""Small rigid mechanisms as dense matrices, and their null-space (mass-orthogonal) formulation.

The consistent accelerations ``a`` and multipliers ``lambda`` of a state solve Gauss's
principle (:mod:`fem.constraints.handlers.consistent`)::

    M a + G^T lambda = f,    G a = -gamma

with ``f = f_ext - f_int - f_v`` and ``d2g/dt2 = G a + gamma``. The *null-space* form (Mufti's
M(40), Remark 2; Blajer, Schiehlen & Schirm's B(12)-(14) with an orthonormal tangent basis; notes
``mufti_blajer.md`` A4 item 5 and part C) splits ``a = a_p + Z z`` with ``G a_p = -gamma`` and
``G Z = 0`` (``Z``: orthonormal, from the SVD of ``G``), and solves the minimal equations::

    (Z^T M Z) z = Z^T (f - M a_p)

which hold no reaction. The reactions follow from Blajer's B(36)/(37) with the distribution
matrix ``B = C = G`` (the joint rows are unit-weighted point coincidences, so the multipliers are
the physical pin forces, B7)::

    [G^T, M Z] [lambda; y] = f - M a,       y = 0 for consistent a

Drift is removed by projecting back onto the constraints in the kinetic-energy metric: velocities
``v <- v - M^-1 G^T (G M^-1 G^T)^-1 (G v + dg/dt)`` (``dg/dt``: drivers) and positions by Newton
on ``g(q) = 0`` with the same mass-orthogonal correction (the nearest admissible configuration).
:func:`integrate` uses all of it: RK4 on ``(q, v)``, projected after every step.

:class:`Mechanism` gives the dense views all of this needs, on the free nodal DOFs: ``M`` (n, n),
the Jacobian ``G`` (m, n) of the constraint groups' rows with the rows released as redundant
(:mod:`fem.constraints.redundancy`) dropped, ``g``, ``gamma`` and ``f``. Dense is deliberate:
these are small rigid sub-mechanisms (rigid bodies and joints, notes F4), and a model with more
than :data:`MAX_DOFS` free nodal DOFs is refused.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from fem import interrupt, lazy
from fem.constraints.handlers import consistent
from fem.errors import ConvergenceError, ModelError
from fem.inertia import inertia_groups
from fem.state import State

sla = lazy.module("scipy.linalg")

#: the largest number of free nodal DOFs a dense mechanism accepts
MAX_DOFS = 300


class Mechanism:
    """Dense views of a small rigid mechanism on its ``n`` free nodal DOFs and ``m`` joint rows.

    Parameters
    ----------
    system : the :class:`fem.system.System` (no element-internal unknowns)
    external : ``external(state, t) -> (n_nodes, nslots)`` nodal external forces (e.g.
        :meth:`fem.loads.StepLoads.force`); None: no external forces
    rtol : positions are on the constraints when ``max |g| <= rtol * length`` (``length``: the
        model's extent, at least 1)

    Attributes
    ----------
    n, m, k : free nodal DOFs, independent constraint rows, degrees of freedom ``n - m``
    free : (n_nodes, nslots) bool, the free nodal DOFs (C order: their positions ``0 .. n-1``)
    """

    def __init__(self, system, external: Callable | None = None, rtol: float = 1e-12):
        dm, model = system.dofmap, system.model
        n = dm.n_nodal
        if dm.blocks["internal"].stop > dm.blocks["internal"].start:
            raise ModelError("a dense mechanism has no element-internal unknowns: build the "
                             "System without them (internal=False)")
        if n > MAX_DOFS:
            raise ModelError(f"the model has {n} free nodal DOFs: coordinate partitioning and the "
                             f"null-space formulation are dense, for small rigid mechanisms of at "
                             f"most {MAX_DOFS} DOFs")
        self.system, self.n, self.dim = system, n, model.dim
        self.external = external
        self.inertia = inertia_groups(system)
        self.free = (dm.index >= 0) & (dm.index < n)
        start = dm.blocks["multipliers"].start
        self._slots = []                   # per group: (rows (E, r), columns (E, nd)), n: fixed
        kept = np.zeros(dm.blocks["multipliers"].stop - start, dtype=bool)
        for c, pos in zip(model.constraints, dm.multipliers, strict=True):
            e = dm.element_dofs(c.conn, c.dof_names)
            self._slots.append((pos - start, np.where((e >= 0) & (e < n), e, n)))
            released = getattr(c, "released", np.zeros(pos.shape, dtype=bool))
            kept[pos - start] = ~released
        self.rows = np.flatnonzero(kept)   # the multipliers the dense rows are
        self.m, self.k = len(self.rows), n - len(self.rows)
        self.length = max(float(np.ptp(model.X, axis=0).max()), 1.0)
        self.tol = rtol * self.length
        self._M = None

    # --- the state as vectors -------------------------------------------------------------------
    def coordinates(self, state: State) -> NDArray:
        """(n,) the free DOFs' values: displacements and (2D) rotation angles."""
        if self.dim != 2:
            raise ModelError("coordinates of 3D rotations are not additive: only 2D mechanisms "
                             "have coordinate vectors")
        return state.dof_values()[self.free]

    def set_coordinates(self, state: State, q: NDArray) -> None:
        """Write the free DOFs' values ``q (n,)`` into ``state`` (2D)."""
        values = state.dof_values()
        values[self.free] = q
        state.u[:, :2] = values[:, :2]
        state.rot[:] = values[:, 2]

    def velocities(self, state: State) -> NDArray:
        """(n,) the free DOFs' velocities (3D rotations: spatial angular velocities)."""
        return state.v[self.free]

    def move(self, state: State, dq: NDArray) -> None:
        """Add the increment ``dq (n,)`` to ``state`` (3D rotations: spatial spins)."""
        self.system.update(state, self.system.dofmap.to_nodal(dq))

    # --- the dense matrices ---------------------------------------------------------------------
    def mass(self, state: State) -> NDArray:
        """(n, n) the mass of the free DOFs (rotations spatial); constant in 2D, kept."""
        if self._M is not None:
            return self._M
        A = self.system.assembler.to_scipy(
            consistent.kkt_matrix(self.system, self.inertia, state))
        M = A[:self.n, :self.n].toarray()
        if self.dim == 2 and not self.inertia.extras:
            self._M = M
        return M

    def _dense(self, blocks: list[NDArray], vector: bool) -> NDArray:
        n_mult = sum(r.size for r, _ in self._slots)
        out = np.zeros(n_mult if vector else (n_mult, self.n + 1))
        for (rows, cols), b in zip(self._slots, blocks, strict=True):
            if vector:
                out[rows] = b
            else:
                out[rows[:, :, None], cols[:, None, :]] = b
        return out[self.rows] if vector else out[self.rows, :self.n]

    def jacobian(self, state: State) -> NDArray:
        """(m, n) ``G``: the kept constraint rows on the free DOFs."""
        return self._dense([c.jacobian(state) for c in self.system.model.constraints], False)

    def gap(self, state: State) -> NDArray:
        """(m,) ``g(q)`` of the kept rows (through the groups' ``[G^T mu; g]`` at ``mu = 0``)."""
        model = self.system.model
        return self._dense([c.vector(state, np.zeros((len(c), c.n_multipliers)))[:, c.nd:]
                            for c in model.constraints], True)

    def time_rate(self, state: State) -> NDArray:
        """(m,) ``dg/dt`` at fixed positions (drivers); admissible velocities: ``G v = -dg/dt``."""
        model = self.system.model
        return self._dense([c.time_rate(state) for c in model.constraints], True)

    def forces(self, state: State, t: float | None = None) -> tuple[NDArray, NDArray]:
        """``f (n,) = f_ext - f_int - f_v`` and ``gamma (m,)`` of ``state`` at time ``t``."""
        t = state.t if t is None else t
        f_ext = (self.external(state, t) if self.external is not None
                 else np.zeros((state.n_nodes, self.system.model.nslots)))
        rhs = consistent.kkt_rhs(self.system, self.inertia, state, f_ext)
        start = self.system.dofmap.blocks["multipliers"].start
        return rhs[:self.n], -rhs[start:][self.rows]

    def external_force(self, state: State, t: float | None = None) -> NDArray:
        """(n,) the external forces on the free DOFs."""
        if self.external is None:
            return np.zeros(self.n)
        t = state.t if t is None else t
        return self.external(state, t)[self.free]

    def energy(self, state: State, t: float | None = None) -> float:
        """``T + U - f_ext . x``: the total energy under constant dead loads (2D).

        ``x`` are the free DOFs' positions (``X + u``; rotation angles), so gravity's potential
        has its datum at the origin.
        """
        x = state.dof_values()
        x[:, :2] += self.system.model.X[:, :2]
        return (self.inertia.kinetic_energy(state) + self.system.strain_energy(state)
                - float(self.external_force(state, t) @ x[self.free]))

    def per_group(self, lam: NDArray) -> list[NDArray]:
        """Each constraint group's ``(E, r)`` multipliers from the kept rows' ``lam (m,)``.

        Released rows get zero, as :mod:`fem.constraints.redundancy` reports them.
        """
        full = np.zeros(sum(r.size for r, _ in self._slots))
        full[self.rows] = lam
        return [full[rows] for rows, _ in self._slots]

    def describe(self, k: int) -> str:
        """``"node 2 rz"``: free DOF ``k``."""
        model = self.system.model
        return self.system.dofmap.describe(k, model.node_ids, model)

    def group_rows(self, name: str) -> NDArray:
        """Positions among the ``m`` kept rows of constraint group ``name``'s rows."""
        groups = self.system.model.constraints
        names = [c.name for c in groups]
        if name not in names:
            raise ModelError(f"no joint or constraint group '{name}' (there are: "
                             + ", ".join(f"'{x}'" for x in names) + ")")
        rows, _ = self._slots[names.index(name)]
        return np.flatnonzero(np.isin(self.rows, rows.ravel()))


# --- the null-space formulation ---------------------------------------------------------------
@dataclass(frozen=True)
class Split:
    """A tangent/normal split of the velocity space at a configuration.

    Attributes
    ----------
    Z : (n, k) orthonormal basis of the null space of ``G`` (the tangent space)
    pinv : (n, m) Moore-Penrose inverse of ``G`` (``G pinv = I``)
    """

    Z: NDArray
    pinv: NDArray


def split(G: NDArray, what: str = "the constraint rows") -> Split:
    """The null space and pseudo-inverse of ``G (m, n)`` from one SVD; raises if rank-deficient."""
    m, n = G.shape
    if m == 0:
        return Split(Z=np.eye(n), pinv=np.zeros((n, 0)))
    U, s, Vt = sla.svd(G, check_finite=False)
    if s[-1] <= 1e-10 * s[0]:
        raise ModelError(f"{what} are dependent (rank {int(np.sum(s > 1e-10 * s[0]))} of {m}): "
                         "redundant constraints must be released (fem.constraints.redundancy)")
    return Split(Z=Vt[m:].T, pinv=Vt[:m].T @ (U.T / s[:, None]))


def accelerations(mech: Mechanism, state: State, t: float | None = None
                  ) -> tuple[NDArray, NDArray]:
    """``a (n,)`` and ``lambda (m,)`` of ``state`` by the null-space minimal equations.

    ``a = a_p + Z (Z^T M Z)^-1 Z^T (f - M a_p)``, ``a_p = -G^+ gamma``; ``lambda`` by B(37)
    (:func:`reactions`).
    """
    M, G = mech.mass(state), mech.jacobian(state)
    f, gamma = mech.forces(state, t)
    sp = split(G)
    a_p = -sp.pinv @ gamma
    Z = sp.Z
    a = a_p + Z @ cho(Z.T @ M @ Z, Z.T @ (f - M @ a_p))
    lam, _ = reactions(M, G, a, f, Z)
    return a, lam


def reactions(M: NDArray, G: NDArray, a: NDArray, f: NDArray, D: NDArray
              ) -> tuple[NDArray, NDArray]:
    """Blajer's B(36)/(37): ``[G^T, M D] [lambda; y] = f - M a``, with ``B = C = G``.

    The sign is the KKT's of :mod:`fem.constraints.handlers.consistent` (``M a + G^T lambda = f``),
    so ``lambda`` is each joint's force on its first node. ``D (n, k)`` any basis of the tangent
    space. Returns ``lambda (m,)`` and ``y (k,)``, which is zero (to round-off) when ``a``
    satisfies the minimal equations: a check.
    """
    x = _solve(np.hstack([G.T, M @ D]), f - M @ a)
    return x[:G.shape[0]], x[G.shape[0]:]


def project_velocities(mech: Mechanism, state: State) -> None:
    """Make ``G v + dg/dt = 0`` by the mass-orthogonal correction of ``v``.

    ``dv = -M^-1 G^T (G M^-1 G^T)^-1 (G v + dg/dt)``: the admissible velocities nearest to ``v``
    in kinetic energy.
    """
    M, G = mech.mass(state), mech.jacobian(state)
    v = mech.velocities(state)
    state.v[mech.free] = v - _normal(M, G, G @ v + mech.time_rate(state))


def project_positions(mech: Mechanism, state: State, max_iterations: int = 20) -> int:
    """Newton onto ``g(q) = 0`` with mass-orthogonal corrections; returns the iterations.

    Each correction is the smallest in the kinetic-energy metric, ``-M^-1 G^T (G M^-1 G^T)^-1 g``.
    """
    M = mech.mass(state)
    for it in range(max_iterations + 1):
        g = mech.gap(state)
        if np.abs(g).max(initial=0.0) <= mech.tol:
            return it
        if it == max_iterations:
            break
        mech.move(state, -_normal(M, mech.jacobian(state), g))
    raise ConvergenceError(f"positions not brought onto the constraints in {max_iterations} "
                           f"iterations (max |g| = {np.abs(g).max():.3e}, tolerance "
                           f"{mech.tol:.1e})", time=state.t, iteration=max_iterations)


@dataclass
class Run:
    """What :func:`integrate` recorded, one row per time step (and the start).

    Attributes
    ----------
    t : (N,) times
    q : (N, n) the free DOFs' values
    energy : (N,) ``T + U - f_ext . x`` (constant dead loads: constant)
    gap : (N,) ``max |g|`` after the projection
    """

    t: NDArray
    q: NDArray
    energy: NDArray
    gap: NDArray


def integrate(mech: Mechanism, state: State, duration: float, time_step: float,
              on_step: Callable[[State], None] | None = None, max_iterations: int = 20) -> Run:
    """Fixed-step RK4 on all of ``(q, v)`` with null-space accelerations, projected each step.

    After every step the positions are brought back onto ``g(q) = 0`` and the velocities onto
    ``G v = 0`` (mass-orthogonal projections), so the drift of the index-1 equations stays at
    Newton's tolerance. 2D (additive angles). ``state`` ends at ``t + duration``.
    ``on_step(work)``, if given, sees the projected initial state and the state after every
    step (positions, velocities and time; not the accelerations, :func:`accelerations` gives
    them), e.g. to write results frames; it must not change it. ``max_iterations`` bounds
    each projection's Newton (:func:`project_positions`).
    """
    if mech.dim != 2:
        raise ModelError("the null-space integrator integrates 2D mechanisms (additive angles)")
    work = state.copy()
    project_positions(mech, work, max_iterations)
    project_velocities(mech, work)
    n_steps = int(np.ceil(duration / time_step - 1e-9))
    t0 = state.t
    rows = [(t0, mech.coordinates(work), mech.energy(work), np.abs(mech.gap(work)).max())]
    if on_step is not None:
        on_step(work)

    def rate(q, v, t):
        mech.set_coordinates(work, q)
        work.v[mech.free], work.t = v, t
        return v, accelerations(mech, work, t)[0]

    for step in range(1, n_steps + 1):
        interrupt.check()
        t = t0 + (step - 1) * time_step
        h = min(time_step, t0 + duration - t)
        q0, v0 = mech.coordinates(work), mech.velocities(work)
        k = [rate(q0, v0, t)]
        for c in (0.5, 0.5, 1.0):
            k.append(rate(q0 + c * h * k[-1][0], v0 + c * h * k[-1][1], t + c * h))
        q1 = q0 + h / 6 * (k[0][0] + 2 * k[1][0] + 2 * k[2][0] + k[3][0])
        v1 = v0 + h / 6 * (k[0][1] + 2 * k[1][1] + 2 * k[2][1] + k[3][1])
        mech.set_coordinates(work, q1)
        work.v[mech.free], work.t = v1, t + h
        project_positions(mech, work, max_iterations)
        project_velocities(mech, work)
        rows.append((work.t, mech.coordinates(work), mech.energy(work),
                     np.abs(mech.gap(work)).max()))
        if on_step is not None:
            on_step(work)
    state.assign(work)
    t, q, energy, gap = (np.array(c) for c in zip(*rows, strict=True))
    return Run(t=t, q=q, energy=energy, gap=gap)


def _normal(M: NDArray, G: NDArray, r: NDArray) -> NDArray:
    """``M^-1 G^T (G M^-1 G^T)^-1 r``: the mass-orthogonal vector with ``G x = r``."""
    MiGt = cho(M, G.T)
    return MiGt @ cho(G @ MiGt, r)


def _solve(A: NDArray, b: NDArray) -> NDArray:
    """``A^-1 b`` for a small dense ``A`` and one right-hand side ``b (n,)``."""
    if A.shape[0] == 0:
        return np.zeros(A.shape[1])
    return sla.lu_solve(sla.lu_factor(A, check_finite=False), b, check_finite=False)


def lu_columns(lu, B: NDArray) -> NDArray:
    """``A^-1 B`` column by column from ``lu = scipy.linalg.lu_factor(A)``.

    One right-hand side at a time: OpenBLAS threads ``getrs`` with several, which costs
    milliseconds on tiny matrices of a loaded machine instead of microseconds.
    """
    return np.column_stack([sla.lu_solve(lu, b, check_finite=False) for b in B.T])


def cho(A: NDArray, B: NDArray) -> NDArray:
    """``A^-1 B`` for a small SPD ``A`` (Cholesky).

    An empty ``A`` (a body welded to the ground: no free motion) gives an empty answer without
    LAPACK, whose wrappers' handling of zero-size arrays differs between builds (seen in CI:
    ``potrs`` refused ``(0, 0)`` and ``(0,)`` on one machine and took them on another).
    """
    if A.shape[0] == 0:
        return np.zeros(B.shape)
    return sla.cho_solve(sla.cho_factor(A, check_finite=False), B, check_finite=False)
