"""The linearized model about the current state: eigenvalues, stability and a state-space model.

A ``linearize`` step takes the state the steps before it left (a static equilibrium, the end of a
dynamic step) or, with ``spin``, the steady rotation of the model at that angular velocity about an
axis through ``center``: the equations are then written in the turning frame, where the steady
motion is an equilibrium under centrifugal forces, found first by Newton from the current state (so
a spinning blade is stiffened by its own centrifugal tension). It builds ``M``, ``D``, ``K``
(:func:`fem.analysis.linear_model.linear_model`: geometric, load, constraint, gyroscopic, Coriolis
and centrifugal terms) and computes the eigenvalues ``p`` of ``(p^2 M + p D + K) x = 0`` nearest
``shift``:

* ``method = "lanczos"`` (the default): the two-sided Krylov solver on the first-order form of
  Doan, Geradin & Kill (:func:`fem.solvers.eigen.lanczos2.quadratic_eigen`: no inverse of ``M``,
  restarted in memory linear in the model, joints as multipliers with their infinite eigenvalues
  filtered, every pair checked by its backward error);
* ``method = "dense"``: all eigenvalues of the first-order pencil by LAPACK (small models, at most
  :data:`DENSE_LIMIT` unknowns), the cross-check.

Both through the eigen front-end (:func:`fem.solvers.eigen.quadratic`), which returns the right
and left vectors of each pair, phase-normalized.

Every eigenvalue gets an absolute error bound (:mod:`fem.solvers.eigen.bounds`: its backward
error times its condition number, capped by the ``sqrt`` bound of a double eigenvalue), and the
verdict is stated against it: an eigenvalue *grows* only if ``Re p`` exceeds its bound; one with
``|p|`` within its bound of 0 is *neutral* (rigid-body motions, the free rotation of a
mechanism) and never counts as growth. The state is *stable* when no eigenvalue grows, and the
summary and the warning of an unstable state print the largest real part with its bound and the
neutral pairs (the run goes on); an eigenvalue known to fewer than three digits (a bound above
:data:`INACCURATE` ``|p|``) is a warning. ``geometric = false`` drops the elements' stress
stiffening (the "premature linearization" that misses it).

Under ``spin`` the step first finds the relative equilibrium by Newton. Where that tangent is
singular (a free motion: a rotation about the axis of a spherical joint, a mechanism) the step
goes on in the complement of the free motion if the loads do not drive it (the equilibrium is
then the one nearest the start, the free motion a neutral pair), and otherwise stops with a
:class:`~fem.errors.ModelError` naming the node and DOF it moves. Where Newton finds no
equilibrium and the elements and joints alone leave a free motion (a four-bar under a crank
torque: the loads' own stiffness makes the tangent regular), the
:class:`~fem.errors.ConvergenceError` names that motion too. ``equilibrium = false`` linearizes
about the state as given instead (no Newton; the joints' reactions are those that balance the
forces best, and a state out of balance is a warning).

Written to ``/linear/<step>/``: ``eigenvalues`` (complex ``p``), ``frequencies`` (``|Im p|``,
rad/s), ``damping_ratios`` (``-Re p / |p|``), ``error_bounds`` (absolute, on ``p``),
``condition_numbers``, attributes ``stable`` and ``verdict`` (``"stable"``, ``"unstable"``,
``"unknown"``), ``max_real`` and ``max_real_bound``, ``neutral_pairs``; ``mass``, ``damping``,
``stiffness`` (CSR groups: ``data``, ``indices``, ``indptr``, ``shape``) on the unknowns named by
``unknowns`` (``(n, 2)``: node id and DOF name, ``"lambda <joint>"`` for multipliers),
``steady_displacement`` (nodal, the relative equilibrium under ``spin``), and with
``inputs``/``outputs`` the first-order state-space model ``x' = A x + B u``, ``y = C x + D u`` on
the state ``x = [q; q']`` of the independent coordinates (the null space of the joints' rows):
``A``, ``B``, ``C``, ``D`` and the channels' names ``input_names`` (``"<node> <dof> force"``),
``output_names`` (``"<node> <dof> displacement"`` or ``velocity``), also written to
``<out>_<step>.mat`` for MATLAB (``scipy.io.savemat``) with ``Mass``, ``Damping``, ``Stiffness``
and the names as ``InputName`` and ``OutputName``, cell arrays (column) of char as MATLAB's
``ss(A, B, C, D, 'InputName', InputName, 'OutputName', OutputName)`` takes them.
"""

from __future__ import annotations

import logging

import numpy as np
from numpy.typing import NDArray

from fem import interrupt, linalg
from fem.analysis import linearize_deck
from fem.analysis.base import StepBase
from fem.analysis.linear_model import (
    Eigenvalues,
    LinearModel,
    dense_eigenvalues,
    linear_model,
    nearest_pairs,
    state_space,
)
from fem.analysis.linearize_deck import LinearizeSettings
from fem.errors import ConvergenceError, ModelError
from fem.solvers import eigen
from fem.solvers.eigen import error_bounds
from fem.solvers.linear_system import note_serial

log = logging.getLogger(__name__)

DENSE_LIMIT = 3000        # unknowns of method = "dense" and of the state-space model (dense)
INACCURATE = 1e-3         # an error bound above this times |p|: the step warns


class LinearizeStep(StepBase):
    """The linearized model about the current state; see the module docstring."""

    step_type = "linearize"
    LOADS_RAMP = False           # its loads at g(0), 1 without a function, as a dynamic step
    Settings = LinearizeSettings
    WRITES = ("matlab",)
    #: an eigenvalue exactly at the shift: step off it (sweeps) or say so (a linearize step)
    nudge_singular_shift = False

    @classmethod
    def requires(cls, values: dict) -> list[tuple[str, str, str]]:
        """A stiffness and a mass from every group."""
        return [*super().requires(values), ("mass", "type", 'type = "linearize"')]

    check = staticmethod(linearize_deck.check)

    def __init__(self, name, system, loads, settings: LinearizeSettings | None = None,
                 solver_options=None):
        super().__init__(name, system, loads, solver_options)
        self.settings = settings or LinearizeSettings()
        self.model: LinearModel | None = None
        self.eigen: Eigenvalues | None = None
        self.steady = None
        self.state_space: dict | None = None
        self._unbalanced_warned = False
        self._inaccurate_warned = False

    # --- the state ----------------------------------------------------------------------------
    def consistent_state(self, state, loads=None):
        """A copy of ``state`` with its consistent accelerations and joint reactions.

        Gauss's principle (:mod:`fem.constraints.handlers.consistent`): the multipliers a
        linearization needs are the reactions of the state itself (a mechanism hanging under gravity
        carries its weight in its joints although no step solved for them). Where that system is
        singular (a DOF with neither mass nor stiffness at a joint) the state's own multipliers
        and accelerations stay, those the step before left. ``loads``: the step's by default.
        """
        from fem.analysis.linear_model import system_inertia
        from fem.constraints.handlers import consistent

        sysm = self.system
        if not sysm.model.constraints:
            return state
        inertia = system_inertia(sysm, state)
        A = linalg.matrix_from_scipy(sysm.assembler.to_scipy(
            consistent.kkt_matrix(sysm, inertia, state)).tocsr())
        ksp = linalg.direct_solver(A, self.prefix, self.solver_options)
        try:
            x = linalg.solve(ksp, consistent.kkt_rhs(sysm, inertia, state,
                                                     (loads or self.loads).force(state, 0.0)))
        except (linalg.SingularMatrixError, linalg.NonFiniteError) as err:
            log.info("step %s: no consistent reactions (%s); the state's multipliers stay",
                     self.name, err)
            return state
        finally:
            ksp.destroy()
            A.destroy()
        a, lams = consistent.split(sysm, x)
        out = state.copy()
        out.a[:] = a
        out.internal_a[:] = x[sysm.dofmap.blocks["internal"]]
        for lam, pos, scale in zip(lams, sysm._lam, sysm.constraint_scales, strict=True):
            out.multipliers[pos] = lam / scale
        return out

    def relative_equilibrium(self, state):
        """A copy of ``state`` at rest in the turning frame, in equilibrium there (Newton)."""
        return self.equilibrium(state, self.loads, self.settings.spin, self.settings.center)

    def equilibrium(self, state, loads, spin=None, center=None):
        """A copy of ``state`` at rest (in the frame turning at ``spin``), in equilibrium there.

        Under ``loads``, by Newton from ``state``; the joints' multipliers start from Gauss's
        principle (a mechanism's tangent at zero multipliers is singular). A singular tangent
        (a free motion) is stepped over in the complement of the free motion when the loads do
        not drive it (:meth:`_free_motion_step`). With ``equilibrium = false``: the state as
        given, its multipliers balancing the forces as well as they can (:meth:`as_given`).
        """
        s = state.copy()
        s.v[:] = 0.0
        s.a[:] = 0.0
        s.internal_v[:] = 0.0
        s.internal_a[:] = 0.0
        s = self.consistent_state(s, loads)
        s.a[:] = 0.0
        s.internal_a[:] = 0.0
        if not self.settings.equilibrium:
            return self.as_given(s, loads, spin, center)
        sysm = self.system
        n = sysm.n_free
        settings = self.settings
        for it in range(settings.max_iterations + 1):
            interrupt.check()
            lm, r = linear_model(sysm, s, loads, spin=spin, center=center)
            res = r[:n]
            scale = max(float(np.abs(sysm.internal_force(s)[:n]).max(initial=0.0)),
                        float(np.abs(r[n:]).max(initial=0.0)), 1e-300)
            # no iteration gets a row below the round-off of its forces, eps (|K| |q|)_i
            # (coordinates are known to eps q: fem.system.System.positions)
            floor = 10 * np.finfo(float).eps * (abs(lm.K) @ sysm.positions(s))
            if np.all(np.abs(res) <= np.maximum(1e-10 * scale, floor)):
                log.info("step %s: relative equilibrium after %d iterations", self.name, it)
                return s
            if it == settings.max_iterations:
                break
            A = linalg.matrix_from_scipy(lm.K)
            ksp = linalg.direct_solver(A, self.prefix, self.solver_options)
            try:
                du = linalg.solve(ksp, -res)
            except linalg.SingularMatrixError as err:
                du = self._free_motion_step(lm.K, res, scale, err, spin)
            finally:
                ksp.destroy()
                A.destroy()
            sysm.update_unknowns(s, du)
        under = f" under spin {list(spin)}" if spin is not None else ""
        free = self.free_motion(state)
        why = (f"; {free} (loads that drive a free motion have no equilibrium; or set "
               "equilibrium = false on the step to linearize about the state as given)"
               if free else "")
        raise ConvergenceError(f"step '{self.name}': no equilibrium{under} in "
                               f"{settings.max_iterations} Newton iterations (beyond a limit "
                               f"load or a critical spin there may be none){why}")

    def free_motion(self, state) -> str:
        """What the elements and joints alone leave free (a mechanism), or ``""``.

        The tangent of ``state`` without stresses, reactions, spin and loads: singular for a
        mechanism, whose free motion
        :meth:`~fem.analysis.base.StepBase.mechanism_error` names (a pendulum's swing, a
        four-bar's crank angle: only the loads' and reactions' stiffness can hold them).
        """
        sysm = self.system
        z = state.copy()
        z.multipliers[:] = 0.0
        K0 = sysm.assembler.to_scipy(sysm.material_tangent(z) + sysm.constraint_matrix(z))
        A = linalg.matrix_from_scipy(K0.tocsr())
        ksp = linalg.direct_solver(A, self.prefix, self.solver_options)
        try:
            linalg.solve(ksp, np.ones(K0.shape[0]))
        except (linalg.SingularMatrixError, linalg.NonFiniteError):
            return str(self.mechanism_error(K0, diagonal=False))
        finally:
            ksp.destroy()
            A.destroy()
        return ""

    def _free_motion_step(self, K, res: NDArray, scale: float, err, spin) -> NDArray:
        """A Newton step ``K du = -res`` with ``K`` singular: a free motion of the model.

        With ``U S V^T = K`` (dense SVD; the null space's dimension is the factorization's count
        of null pivots): if the residual has no component along the left null vectors (the
        loads do not drive the free motion: gravity about the axis of a spherical joint, a
        beam's rigid translation across its load), the minimum-norm step, which leaves the free
        motion where the start put it (it is then a neutral pair of the linearization);
        otherwise there is no equilibrium and a :class:`~fem.errors.ModelError` names the
        motion (:meth:`~fem.analysis.base.StepBase.mechanism_error`).
        """
        import scipy.linalg as la

        n = K.shape[0]
        under = f" under spin {list(spin)}" if spin is not None else ""
        fix = ("support it, or set equilibrium = false on the step to linearize about the "
               "state as given")
        if n > DENSE_LIMIT:
            raise ModelError(f"step '{self.name}': the equilibrium{under} has a singular "
                             f"tangent: {self.mechanism_error(K)}; {fix} (free motions are "
                             f"separated for models of at most {DENSE_LIMIT} unknowns, {n} "
                             "here)") from None
        U, S, Vh = la.svd(K.toarray())
        r = err.null_pivots if err.null_pivots > 0 else \
            int(np.count_nonzero(S <= 1e-13 * S[0]))
        r = min(max(r, 1), n)
        drive = float(np.linalg.norm(U[:, n - r:].T @ res))
        if drive > 1e-8 * max(scale, float(np.linalg.norm(res))):
            raise ModelError(f"step '{self.name}': no equilibrium{under}: "
                             f"{self.mechanism_error(K)}, and the loads drive that motion "
                             f"(a residual of {drive:.3g} along it); {fix}") from None
        log.info("step %s: a free motion of the model (%d null pivots) left where the start "
                 "put it", self.name, r)
        k = n - r
        return -(Vh[:k].T @ ((U[:, :k].T @ res) / S[:k]))

    def as_given(self, s, loads, spin=None, center=None):
        """``s`` (at rest, joints' multipliers of Gauss's principle) as the linearization point.

        ``equilibrium = false``: no Newton on the positions. The multipliers are set to those
        that balance the nodal forces (in the frame turning at ``spin``) in the least-squares
        sense, ``min ||r_q + G^T dlambda||``, exact where the state is an equilibrium; what is
        left unbalanced is logged.
        """
        sysm = self.system
        n = sysm.n_free
        dofs = sysm.dofmap.blocks["multipliers"].start
        lm, r = linear_model(sysm, s, loads, spin=spin, center=center)
        if n > dofs:
            import scipy.sparse.linalg as spla

            GT = lm.K[:dofs, dofs:n].tocsr()
            dlam = spla.lsqr(GT, -r[:dofs], atol=1e-14, btol=1e-14)[0]
            du = np.zeros(n)
            du[dofs:] = dlam
            sysm.update_unknowns(s, du)
            lm, r = linear_model(sysm, s, loads, spin=spin, center=center)
        out = np.abs(r[:dofs])
        forces = max(float(np.abs(sysm.internal_force(s)[:dofs]).max(initial=0.0)),
                     float(np.abs(sysm.dofmap.from_nodal(loads.force(s, 0.0))[:dofs])
                           .max(initial=0.0)))
        if len(out) and out.max() > 1e-8 * forces and not self._unbalanced_warned:
            k = int(np.argmax(out))
            where = sysm.dofmap.describe(k, sysm.model.node_ids, sysm.model)
            self.warn(f"equilibrium = false: linearized about a state that is not in "
                      f"equilibrium (unbalanced force {out[k]:.3g} at {where}): the "
                      "eigenvalues describe motions about a state that accelerates")
            self._unbalanced_warned = True
        return s

    # --- eigenvalues --------------------------------------------------------------------------
    def eigenvalues(self, lm: LinearModel) -> Eigenvalues:
        """The eigenvalues nearest the shift, one of each conjugate pair (``Im p >= 0``).

        Fewer than ``modes`` only when the model has no more (a warning says so).
        """
        found = self._eigenvalues(lm)
        if len(found.values) < self.settings.modes:
            self.warn(f"modes = {self.settings.modes}: the model has {len(found.values)} finite "
                      "eigenvalues (one of each conjugate pair): all are written")
        return found

    def _eigenvalues(self, lm: LinearModel) -> Eigenvalues:
        n = lm.K.shape[0]
        massive = int(np.count_nonzero(lm.M.diagonal()))
        if massive == 0:
            raise ModelError(f"step '{self.name}': the model has no mass: give the materials a "
                             "density, the sections mass_per_length, or add [[masses]]")
        count = min(self.settings.modes, massive)
        what = f"step '{self.name}'"
        if self.settings.method == "dense":
            if n > DENSE_LIMIT:
                raise ModelError(f"step '{self.name}': method = \"dense\" is for models of at "
                                 f"most {DENSE_LIMIT} unknowns ({n} here); use \"lanczos\"")
            return dense_eigenvalues(lm, count, self.settings.shift)
        shift = self.settings.shift
        try:
            pairs = eigen.quadratic(lm.M, lm.D, lm.K, 2 * count + 2, shift, method="lanczos2",
                                    what=what)
        except ConvergenceError as err:
            dense = f", or method = \"dense\" (exact, {n} unknowns)" if n <= DENSE_LIMIT else ""
            raise ConvergenceError(f"{err}{dense}") from None
        except eigen.SingularShift:
            if self.nudge_singular_shift:
                # an eigenvalue at the shift (a sweep at its boundary): step off it by 1e-6 of
                # the problem's frequency scale
                scale = np.sqrt(np.abs(lm.K.diagonal()).max() / np.abs(lm.M.diagonal()).max())
                shift = shift + 1e-6 * scale
                pairs = eigen.quadratic(lm.M, lm.D, lm.K, 2 * count + 2, shift,
                                        method="lanczos2", what=what)
                return nearest_pairs(pairs, count, shift)
            raise ModelError(f"step '{self.name}': K + p_s D + p_s^2 M is singular at shift = "
                             f"{self.settings.shift:g}: the model has a free rigid motion or "
                             "an eigenvalue at the shift; give a small positive shift") from None
        return nearest_pairs(pairs, count, self.settings.shift)

    def checked(self, lm: LinearModel) -> Eigenvalues:
        """:meth:`eigenvalues` with their error bounds (:mod:`fem.solvers.eigen.bounds`)."""
        e = self.eigenvalues(lm)
        b = error_bounds(lm.M, lm.D, lm.K, e.values, e.vectors, e.left)
        e.bounds, e.condition, e.conservative = b.bounds, b.condition, b.conservative
        return e

    def warn_inaccurate(self, e: Eigenvalues, where: str = "") -> bool:
        """Warn (once per step) if an eigenvalue is known to fewer than three digits.

        That is an error bound above :data:`INACCURATE` of ``|p|`` on an eigenvalue that is not
        neutral: the solver accepted it on a backward error that the problem's condition turns
        into a large error (a stiff model's low eigenvalues measured against ``||K||``).
        """
        if self._inaccurate_warned or e.bounds is None:
            return False
        bad = (e.bounds > INACCURATE * np.abs(e.values)) & (np.abs(e.values) > e.bounds)
        if not np.any(bad):
            return False
        k = int(np.argmax(np.where(bad, e.bounds / np.abs(e.values), 0.0)))
        n = self.system.n_free
        dense = (', or method = "dense"' if self.settings.method != "dense"
                 and n <= DENSE_LIMIT else "")
        self.warn(f"{int(np.count_nonzero(bad))} eigenvalue(s){where} are known to fewer than "
                  f"three digits: p = {e.values[k]:.6g} has an error bound of "
                  f"{e.bounds[k]:.2g}; the verdict stands against the bounds, the values are "
                  f"not accurate (try another shift{dense})")
        self._inaccurate_warned = True
        return True

    # --- state space --------------------------------------------------------------------------
    def _selection(self, entries) -> list[tuple[int, str]]:
        """``[(unknown index, quantity)]`` of ``(node index, slot, quantity)`` entries.

        The deck gives them as ``"<node> <dof> [velocity]"`` (:func:`linearize_deck.check`
        checks each names a free DOF).
        """
        dm = self.system.dofmap
        return [(int(dm.index[node, slot]), quantity) for node, slot, quantity in entries]

    def channel_names(self) -> dict[str, list[str]]:
        """``input_names``, ``output_names``: ``"<node> <dof> force"``, ``"... displacement"``.

        The state-space model's channels as the deck named them (the MATLAB file's
        ``InputName`` and ``OutputName``).
        """
        model = self.system.model

        def name(node, slot, quantity):
            return f"{int(model.node_ids[node])} {model.slots[slot]} {quantity}"

        return {"input_names": [name(n, k, "force") for n, k, _ in self.settings.inputs or []],
                "output_names": [name(n, k, q) for n, k, q in self.settings.outputs or []]}

    def state_space_model(self, lm: LinearModel) -> dict:
        """``A, B, C, D`` on ``x = [z; z']``, ``q = N z``, ``N`` the null space of the joints."""
        ins = self._selection(self.settings.inputs or [])
        outs = self._selection(self.settings.outputs or [])
        sysm = self.system
        n = sysm.n_free
        dofs = sysm.dofmap.blocks["multipliers"].start
        if n > DENSE_LIMIT:
            raise ModelError(f"step '{self.name}': the state-space model is dense: at most "
                             f"{DENSE_LIMIT} unknowns ({n} here)")
        return state_space(lm, dofs, n, ins, outs, f"step '{self.name}'")

    # --- the step -----------------------------------------------------------------------------
    def run(self, state, results):
        """Linearize about ``state`` (not changed) and write the model and its eigenvalues."""
        s = self.settings
        note_serial(f"step '{self.name}': the linearized model and its eigen-solve")
        self.loads.begin(state)
        try:
            base = (self.relative_equilibrium(state) if s.spin is not None
                    else self.consistent_state(state))
            self.steady = base
            lm, _ = linear_model(self.system, base, self.loads, spin=s.spin, center=s.center,
                                 geometric=s.geometric)
            self.model = lm
            interrupt.check()
            self.eigen = self.checked(lm)
            if s.inputs or s.outputs:
                self.state_space = self.state_space_model(lm)
        finally:
            self.close()
        v = self.eigen.verdict()
        self.warn_inaccurate(self.eigen)
        if v.state == "unstable":
            k = int(np.flatnonzero(v.growing)[np.argmax(v.values.real[v.growing])])
            self.warn(f"the linearized model is unstable: eigenvalue p = {v.values[k]:.6g} "
                      f"has a positive real part beyond its error bound: {v.describe()}")
        if results is not None:
            self.write(results, base)
        return state

    def write(self, results, base) -> None:
        """``/linear/<step>/`` and the MATLAB file (module docstring)."""
        e, lm = self.eigen, self.model
        v = e.verdict()
        data = {"eigenvalues": e.values, "frequencies": e.frequencies,
                "damping_ratios": e.damping_ratios, "backward_errors": e.backward_errors,
                "error_bounds": e.bounds, "condition_numbers": e.condition,
                "unknowns": self.unknown_names(),
                "steady_displacement": base.u.copy()}
        matrices = {"mass": lm.M, "damping": lm.D, "stiffness": lm.K}
        if self.state_space is not None:
            data.update({k: v for k, v in self.state_space.items() if k != "N"})
            data.update(self.channel_names())
        attrs = {"stable": v.state == "stable", "verdict": v.state, "max_real": v.max_real,
                 "max_real_bound": v.max_real_bound, "neutral_pairs": v.neutral_pairs,
                 "method": self.settings.method,
                 "shift": self.settings.shift, "geometric": self.settings.geometric,
                 "spin": list(self.settings.spin or [])}
        results.write_linear(self.name, data, matrices, attrs,
                             matlab=self.state_space is not None)

    def written_beside(self) -> tuple[str, ...]:
        """The MATLAB file, when the step named inputs or outputs (a state-space model)."""
        return self.WRITES if self.state_space is not None else ()

    def summary(self) -> list[str]:
        """Each eigenvalue (its frequency, damping ratio and error bound), then the verdict."""
        e = self.eigen
        scale = float(np.abs(e.values).max(initial=0.0))
        lines = []
        for i, p in enumerate(e.values):
            # round-off below 1e-12 of the largest |p| shows as 0
            re = p.real if abs(p.real) > 1e-12 * scale else 0.0
            zeta = e.damping_ratios[i] if re else 0.0
            lines.append(f"p {i + 1}: {re:.6g} {p.imag:+.6g}i ({e.frequencies[i]:.6g} "
                         f"rad/s, damping ratio {zeta:.3g}, error bound {e.bounds[i]:.2g})")
        return [*lines, e.verdict().describe()]

    def unknown_names(self) -> NDArray:
        """``(n, 2)`` strings: node id and DOF name of each unknown (multipliers by joint)."""
        sysm, model = self.system, self.system.model
        dm = sysm.dofmap
        names = np.full((sysm.n_free, 2), "", dtype=object)
        node, slot = np.nonzero((dm.index >= 0) & (dm.index < sysm.n_free))
        names[dm.index[node, slot], 0] = model.node_ids[node].astype(str)
        names[dm.index[node, slot], 1] = np.array(model.slots)[slot]
        for c, pos in zip(model.constraints, dm.multipliers, strict=True):
            names[np.asarray(pos).ravel(), 0] = f"lambda {c.name}"
        return names.astype(str)
