"""Coordinate partitioning with Blajer's projective criterion, for small rigid mechanisms.

Blajer, Schiehlen & Schirm, *A projective criterion to the coordinate partitioning method for
multibody dynamics* (notes ``mufti_blajer.md`` part B; equation numbers B(..) are the paper's).

**Coordinates.** A mechanism's configuration is described by ``p`` generalized coordinates
``s = S q + offset``, linear in the free DOFs' values ``q`` (:class:`.coordinates.Coordinates`):
the model's own DOFs (``S = I``, :func:`.coordinates.model_coordinates`) or, for example, the
relative angles of 2D revolute joints (:func:`.coordinates.joint_angles`). Such a set absorbs some
constraint rows (those of the joints its parametrization closes, e.g. the open chain of a four-bar
cut at one joint) and keeps the others as its *closure* constraints ``C`` (B(1)-(4)). On the
absorbed rows' manifold ``q' = J s'`` with
``J = [S; G_abs]^-1 [I; 0]``, so the coordinates' mass matrix and constraint Jacobian are::

    M_s = J^T M J,     C = G_closure J

(the four-bar FB-S1 in its angles, cut at O4, gives the notes' D1 ``M(q0)``).

**The projective criterion** B(16)-(23): with ``D`` (k, p) any basis of the tangent space
(``D C^T = 0``), ``M_d = D M_s D^T`` and ``M_c = C M_s^-1 C^T``::

    cos^2 alpha_i = D[:, i]^T M_d^-1 D[:, i] / (M_s^-1)_ii                       (23a)
    cos^2 beta_i  = (C M_s^-1)[:, i]^T M_c^-1 (C M_s^-1)[:, i] / (M_s^-1)_ii      (23b)

``cos^2 alpha_i + cos^2 beta_i = 1``; the values do not depend on ``D``; with a diagonal ``M_s``
they sum to ``k``; ``cos^2 alpha_i = 0`` means ``s_i`` cannot be independent (B4).

**Choosing the independent coordinates** (B4, steps 1-3): greedy down the ranked
``cos^2 alpha``, accepting a coordinate only while the chosen columns of ``D`` keep full rank (so
that ``C_D`` stays invertible), and switching only when the new set beats the current one by the
hysteresis (5 %: its smallest ``cos^2 alpha`` is 1.05 times the current one's).

**Integration** (B2-B3; notes D1 "switching simulation"): :class:`CoordinatePartitioning`
integrates the independent coordinates and their rates ``(s_I, s_I')`` with fixed-step RK4. At
every evaluation the dependent coordinates follow by Newton on ``g(q) = 0, S_I q = s_I`` (the
matrix ``[G; S_I]`` is invertible exactly when ``C_D`` is), the velocities from
``[G; S_I] v = [-dg/dt; s_I']`` (``dg/dt``: drivers) and the accelerations from the minimal
equations B(12)-(14) with Blajer's ``D^T = [G; S_I]^-1 [0; I]`` (n, k) in the model's DOFs::

    a = D^T s_I'' + a_p,  G a_p = -gamma, S_I a_p = 0,   (D M D^T) s_I'' = D (f - M a_p)

so positions and velocities are on the constraints to Newton's tolerance and nothing drifts.
After each step the criterion is evaluated and, on a switch, ``(s_I, s_I')`` are re-read from the
full state (B4 step 4). A forced choice whose ``cos^2 alpha`` falls below ``singular`` raises
:class:`SingularChoice`, naming the coordinate. Reactions are Blajer's B(37) with ``B = C``
(:func:`fem.constraints.handlers.nullspace.reactions`): the joints' multipliers, the physical pin
forces.

Everything is dense (:class:`fem.constraints.handlers.nullspace.Mechanism`); integration is 2D
(additive rotation angles), the criterion works in 3D too (velocities as spins).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from fem import interrupt, lazy
from fem.constraints.handlers.coordinates import Coordinates, generalized, model_coordinates
from fem.constraints.handlers.nullspace import Mechanism, cho, lu_columns, reactions, split
from fem.errors import ConvergenceError, ModelError
from fem.state import State

sla = lazy.module("scipy.linalg")


class SingularChoice(ModelError):
    """An independent coordinate that cannot be one: ``cos^2 alpha ~ 0``, ``C_D`` singular.

    Attributes
    ----------
    coordinates : the names of the coordinates
    cos2 : their ``cos^2 alpha`` (None where not computed)
    time : the time, when integrating
    """

    def __init__(self, coordinates: tuple[str, ...], cos2: NDArray | None = None,
                 time: float | None = None, why: str = ""):
        self.coordinates, self.cos2, self.time = tuple(coordinates), cos2, time
        which = ", ".join(f"'{c}'" for c in self.coordinates)
        when = f" at t = {time:.6g}" if time is not None else ""
        value = (f" (cos^2 alpha = {', '.join(f'{c:.2e}' for c in np.atleast_1d(cos2))})"
                 if cos2 is not None else "")
        super().__init__(f"the independent coordinate {which} is singular{when}{value}: the "
                         "constraint block C_D of the dependent coordinates is singular, so it "
                         "cannot be an independent coordinate there"
                         + (f" ({why})" if why else "")
                         + "; let the projective criterion choose (switching), or choose "
                         "another one")


# --- the criterion -------------------------------------------------------------------------
def projective_criterion(M: NDArray, C: NDArray, D: NDArray | None = None
                         ) -> tuple[NDArray, NDArray, NDArray]:
    """``cos^2 alpha (n,)``, ``cos^2 beta (n,)`` (B(23a), (23b)) and the tangent basis used.

    ``M (n, n)`` SPD, ``C (m, n)`` of full row rank, ``D (k, n)`` a tangent basis
    (``D C^T = 0``); default: orthonormal, from the SVD of ``C``.

    >>> M, C = np.diag([2.0, 2.0]), np.array([[1.0, 1.0]])    # x + y = 0, equal masses
    >>> ca, cb, _ = projective_criterion(M, C)
    >>> ca.round(12), cb.round(12)
    (array([0.5, 0.5]), array([0.5, 0.5]))
    """
    n = len(M)
    Minv = cho(M, np.eye(n))
    if D is None:
        D = split(C).Z.T
    diag = np.diag(Minv)
    Md = D @ M @ D.T
    cos2a = np.einsum("ki,ki->i", D, cho(Md, D))
    if len(C):
        CMi = C @ Minv
        Mc = CMi @ C.T
        cos2b = np.einsum("ki,ki->i", CMi, cho(Mc, CMi))
    else:
        cos2b = np.zeros(n)
    return cos2a / diag, cos2b / diag, D


@dataclass(frozen=True)
class Criterion:
    """The projective criterion of a configuration in a set of coordinates.

    Attributes
    ----------
    cos2_alpha, cos2_beta : (p,) B(23a), B(23b)
    D : (k, p) the orthonormal tangent basis in the coordinates
    names : (p,) the coordinates' names
    """

    cos2_alpha: NDArray
    cos2_beta: NDArray
    D: NDArray
    names: tuple[str, ...]


def criterion(mech: Mechanism, state: State, coords: Coordinates | None = None) -> Criterion:
    """The projective criterion of ``state``'s configuration in ``coords`` (default: the DOFs)."""
    coords = coords or model_coordinates(mech)
    return criterion_of(coords, mech.mass(state), mech.jacobian(state))


def criterion_of(coords: Coordinates, M: NDArray, G: NDArray) -> Criterion:
    """The projective criterion in ``coords`` of the model's mass ``M`` and Jacobian ``G``."""
    M_s, C, _ = generalized(coords, M, G)
    ca, cb, D = projective_criterion(M_s, C)
    return Criterion(ca, cb, D, coords.names)


def tangent_basis(C: NDArray, independent: list[int], names: tuple[str, ...] | None = None
                  ) -> NDArray:
    """Blajer's ``D = [I, A^T]`` (k, n) of the partition ``independent`` (B(5)-(10)).

    ``D[:, I] = I``, ``D[:, dep] = A^T``, ``A = -C_D^-1 C_I``. A singular ``C_D`` raises
    :class:`SingularChoice` naming the independent coordinates.
    """
    m, n = C.shape
    independent = list(independent)
    dep = np.setdiff1d(np.arange(n), independent)
    CD = C[:, dep]
    s = sla.svdvals(CD, check_finite=False) if m else np.ones(1)
    if len(dep) != m or s[-1] <= 1e-10 * max(np.abs(C).max(), 1e-300):
        labels = tuple(names[i] if names else f"coordinate {i}" for i in independent)
        raise SingularChoice(labels, why=f"smallest singular value of C_D {s[-1]:.1e}")
    D = np.zeros((len(independent), n))
    D[:, independent] = np.eye(len(independent))
    D[:, dep] = -lu_columns(sla.lu_factor(CD, check_finite=False), C[:, independent]).T
    return D


def choose(cos2: NDArray, D: NDArray, current: list[int] | None = None,
           hysteresis: float = 0.05) -> list[int]:
    """The independent coordinates: greedy by ranked ``cos2``, ``D[:, I]`` kept of full rank.

    ``D (k, p)`` an orthonormal tangent basis. With a ``current`` choice the new one is taken
    only if its smallest ``cos2`` exceeds the current one's by the factor ``1 + hysteresis``.
    """
    k = len(D)
    chosen: list[int] = []
    for i in np.argsort(-cos2, kind="stable"):
        trial = chosen + [int(i)]
        if sla.svdvals(D[:, trial], check_finite=False)[-1] > 1e-8:
            chosen = trial
        if len(chosen) == k:
            break
    if current is None:
        return chosen
    if set(chosen) != set(current) and \
            cos2[chosen].min() > (1 + hysteresis) * cos2[list(current)].min():
        return chosen
    return list(current)


# --- dependent coordinates ------------------------------------------------------------------
def _newton(mech: Mechanism, work: State, S_I: NDArray, target: NDArray, q: NDArray,
            max_iterations: int) -> bool:
    """Newton on ``[g(q); S_I q - target] = 0`` from ``q``, into ``work``; False if it fails.

    Joint rows are at most quadratic in the rotations, with arms within the model's extent
    ``L``, so after a correction ``dq`` they are off by at most ``L |dq|^2 / 2``: when that is
    below a tenth of the tolerance the correction is the last one (no further evaluation).
    """
    mech.set_coordinates(work, q)
    for _ in range(max_iterations):
        r = np.concatenate([mech.gap(work), S_I @ q - target])
        if np.abs(r).max() <= mech.tol:
            return True
        T = np.vstack([mech.jacobian(work), S_I])
        dq = sla.lu_solve(sla.lu_factor(T, check_finite=False), r, check_finite=False)
        q = q - dq
        mech.set_coordinates(work, q)
        if 0.5 * mech.length * np.abs(dq).max() ** 2 <= 0.1 * mech.tol:
            return True
    return False


def solve_dependent(mech: Mechanism, state: State, coords: Coordinates, independent: list[str],
                    values: list[float], max_iterations: int = 20) -> None:
    """Put ``state``'s positions on the constraints with ``independent`` at ``values``.

    Newton from the current positions, so the branch is the nearest one. A Newton that does not
    converge raises :class:`~fem.errors.ConvergenceError`; approach far configurations in
    steps.
    """
    I = [coords.index(name) for name in independent]
    target = np.asarray(values, dtype=float) - coords.offset[I]
    if not _newton(mech, state, coords.S[I], target, mech.coordinates(state), max_iterations):
        raise ConvergenceError(f"no configuration found with {', '.join(independent)} = "
                               f"{', '.join(f'{v:.6g}' for v in values)} in {max_iterations} "
                               "Newton iterations (beyond the mechanism's reach, or too far "
                               "from the current one: approach it in steps)", time=state.t)


# --- the integrator --------------------------------------------------------------------------
@dataclass(frozen=True)
class _Point:
    """An evaluated state at ``t``: positions, velocities, accelerations (n,), Jacobian (m, n)."""

    t: float
    q: NDArray
    v: NDArray
    a: NDArray
    G: NDArray | None


@dataclass
class Trajectory:
    """What a :class:`CoordinatePartitioning` run recorded, one row per time step (and t = 0).

    Attributes
    ----------
    t : (N,) times
    s : (N, p) the coordinates
    energy : (N,) ``T + U - f_ext . x`` (constant dead loads: constant)
    gap : (N,) ``max |g|`` of the positions
    independent : (N, k) the independent coordinates' positions in ``names``
    switches : ``(t, old names, new names)`` per switch
    names : the coordinates' names
    """

    t: NDArray
    s: NDArray
    energy: NDArray
    gap: NDArray
    independent: NDArray
    switches: list
    names: tuple[str, ...]


class CoordinatePartitioning:
    """Fixed-step RK4 on the independent coordinates, switched by the projective criterion.

    Parameters
    ----------
    mech : the mechanism (2D)
    coords : the candidate coordinates (default: the model's DOFs)
    time_step : the RK4 step
    hysteresis : relative margin a new choice must win by (B4 step 3)
    independent : names of forced independent coordinates (no switching); None: chosen by the
        criterion
    singular : a forced coordinate whose ``cos^2 alpha`` falls below this raises
        :class:`SingularChoice`
    max_iterations : Newton iterations for the dependent coordinates
    """

    def __init__(self, mech: Mechanism, coords: Coordinates | None = None, *, time_step: float,
                 hysteresis: float = 0.05, independent: list[str] | None = None,
                 singular: float = 1e-3, max_iterations: int = 20):
        if mech.dim != 2:
            raise ModelError("coordinate partitioning integrates 2D mechanisms (additive angles)")
        self.mech, self.coords = mech, coords or model_coordinates(mech)
        self.h, self.hysteresis, self.singular = float(time_step), hysteresis, singular
        self.forced = (None if independent is None
                       else [self.coords.index(name) for name in independent])
        if self.forced is not None and len(self.forced) != mech.k:
            raise ModelError(f"{len(self.forced)} independent coordinates forced; the mechanism "
                             f"has {mech.k} degrees of freedom")
        self.max_iterations = max_iterations
        self.I: list[int] | None = None               # the independent coordinates
        self.S_I: NDArray | None = None
        self.cos2: NDArray | None = None              # their cos^2 alpha at the last step

    def _evaluate(self, work: State, t: float, sI: NDArray, vI: NDArray, e0: _Point,
                  dt: float) -> _Point:
        """Positions, velocities and accelerations of ``(s_I, s_I')`` at ``t``, into ``work``.

        The positions by Newton (:func:`_newton`) from the Taylor prediction of ``e0`` over
        ``dt``.
        """
        mech, S_I = self.mech, self.S_I
        q = e0.q + dt * e0.v + 0.5 * dt * dt * e0.a
        work.t = t                                   # drivers' rows depend on it
        if not _newton(mech, work, S_I, sI - self.coords.offset[self.I], q,
                       self.max_iterations):
            names = tuple(self.coords.names[i] for i in self.I)
            # no configuration has these forced coordinates (past a turning point of theirs)
            if self.forced is not None or self.cos2.min() < 10 * self.singular:
                raise SingularChoice(names, self.cos2, t, "Newton on the dependent coordinates "
                                     "did not converge")
            raise ConvergenceError(f"dependent coordinates not found in {self.max_iterations} "
                                   f"iterations (independent: {', '.join(names)})", time=t)
        q = mech.coordinates(work)
        G = mech.jacobian(work)
        lu = sla.lu_factor(np.vstack([G, S_I]), check_finite=False)
        m, k = mech.m, len(self.I)
        v = sla.lu_solve(lu, np.concatenate([-mech.time_rate(work), vI]), check_finite=False)
        work.v[mech.free] = v
        f, gamma = mech.forces(work, t)
        rhs = np.zeros((mech.n, 1 + k))
        rhs[:m, 0] = -gamma
        rhs[m:, 1:] = np.eye(k)
        B = lu_columns(lu, rhs)
        a_p, Dt = B[:, 0], B[:, 1:]                    # Blajer's D^T in the model's DOFs
        M = mech.mass(work)
        aI = cho(Dt.T @ M @ Dt, Dt.T @ (f - M @ a_p))   # B(12)-(14)
        return _Point(t, q, v, a_p + Dt @ aI, G)

    def _select(self, I: list[int]) -> None:
        self.I = list(I)
        self.S_I = self.coords.S[self.I]

    def _criterion(self, work: State, G: NDArray) -> NDArray:
        """(p,) cos^2 alpha of ``work`` (Jacobian ``G``); may switch the independent ones."""
        crit = criterion_of(self.coords, self.mech.mass(work), G)
        if self.forced is None:
            self._select(choose(crit.cos2_alpha, crit.D, self.I, self.hysteresis))
        elif crit.cos2_alpha[self.I].min() < self.singular:
            raise SingularChoice(tuple(self.coords.names[i] for i in self.I),
                                 crit.cos2_alpha[self.I], work.t)
        self.cos2 = crit.cos2_alpha[self.I]
        return crit.cos2_alpha

    def run(self, state: State, duration: float,
            on_step: Callable[[State], None] | None = None) -> Trajectory:
        """Integrate ``state`` over ``duration``; ``state`` ends there.

        The initial state is made consistent: its independent coordinates and rates are kept,
        the others follow. A forced coordinate turning singular raises :class:`SingularChoice`
        with ``state`` at the step where it was detected. ``on_step(work)``, if given, sees the
        consistent initial state and the state after every step (positions, velocities, the
        free DOFs' accelerations and the time), e.g. to write results frames; it must not
        change it.
        """
        mech, coords, h = self.mech, self.coords, self.h
        n_steps = int(np.ceil(duration / h - 1e-9))
        work = state.copy()
        self.cos2, self.I = None, None
        if self.forced is not None:
            self._select(self.forced)
        self._criterion(work, mech.jacobian(work))
        # the initial state, made consistent: its coordinates and rates define the motion
        s = coords.values(mech, work)
        e = self._evaluate(work, state.t, s[self.I], coords.S[self.I] @ mech.velocities(work),
                           _Point(state.t, mech.coordinates(work), mech.velocities(work),
                                  np.zeros(mech.n), None), 0.0)
        rows = [self._record(work)]
        if on_step is not None:
            work.a[mech.free] = e.a
            on_step(work)
        switches = []
        t0 = state.t
        for step in range(1, n_steps + 1):
            interrupt.check()
            t = t0 + (step - 1) * h
            before = [coords.names[i] for i in self.I]
            try:
                e = self._step(work, t, min(h, t0 + duration - t), e)
                self._criterion(work, e.G)
            except SingularChoice:            # the state where it was found singular
                mech.set_coordinates(state, e.q)
                state.v[mech.free], state.a[mech.free], state.t = e.v, e.a, e.t
                raise
            after = [coords.names[i] for i in self.I]
            if before != after:
                switches.append((work.t, tuple(before), tuple(after)))
            rows.append(self._record(work))
            if on_step is not None:
                work.a[mech.free] = e.a
                on_step(work)
        state.assign(work)
        state.a[mech.free] = e.a
        cols = list(zip(*rows, strict=True))
        return Trajectory(t=np.array(cols[0]), s=np.array(cols[1]), energy=np.array(cols[2]),
                          gap=np.array(cols[3]), independent=np.array(cols[4]),
                          switches=switches, names=coords.names)

    def _step(self, work: State, t: float, h: float, e0: _Point) -> _Point:
        """One RK4 step of ``(s_I, s_I')`` from ``e0`` at ``t``; ``work`` ends at ``t + h``."""
        S_I, off = self.S_I, self.coords.offset[self.I]
        sI0, vI0 = S_I @ e0.q + off, S_I @ e0.v
        ks, kv = [vI0], [S_I @ e0.a]
        for c in (0.5, 0.5, 1.0):
            sI, vI = sI0 + c * h * ks[-1], vI0 + c * h * kv[-1]
            e = self._evaluate(work, t + c * h, sI, vI, e0, c * h)
            ks.append(vI)
            kv.append(S_I @ e.a)
        sI = sI0 + h / 6 * (ks[0] + 2 * ks[1] + 2 * ks[2] + ks[3])
        vI = vI0 + h / 6 * (kv[0] + 2 * kv[1] + 2 * kv[2] + kv[3])
        return self._evaluate(work, t + h, sI, vI, e0, h)

    def _record(self, work: State) -> tuple:
        mech = self.mech
        return (work.t, self.coords.values(mech, work), mech.energy(work),
                float(np.abs(mech.gap(work)).max(initial=0.0)), np.array(self.I))


def partition_reactions(mech: Mechanism, state: State, a: NDArray, t: float | None = None
                        ) -> tuple[list[NDArray], NDArray]:
    """Each constraint group's ``lambda (E, r)`` by B(37) from accelerations ``a (n,)``.

    Also returns ``y``, the lower part of the B(37) solution, zero for consistent ``a``.
    """
    M, G = mech.mass(state), mech.jacobian(state)
    f, _ = mech.forces(state, t)
    lam, y = reactions(M, G, a, f, split(G).Z)
    return mech.per_group(lam), y
