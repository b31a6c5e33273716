"""Contact among a set of spheres (a heap): every pair a candidate, a broad phase per time step.

A :class:`SphereSetContact` holds ``n`` spheres on nodes, of radii ``R_i``; every pair of them may
touch. Evaluating all ``n (n - 1) / 2`` pairs (and coupling every sphere with every other in the
tangent's pattern) is out of the question for a heap of a thousand, so the group's elements
(``conn``) are the *candidate* pairs a broad phase finds: the pairs whose surfaces are closer
than a padding ``p`` (``|x_j - x_i| - R_i - R_j <= p``), from a k-d tree
(:class:`scipy.spatial.cKDTree`) on the committed positions. Newton evaluates these pairs alone,
with the narrow phase, the laws, the discrete gradient and the booking of
:class:`~fem.elements.contact.group.SphereContact` unchanged.

The list stays exact while it is used (Verlet's neighbour list with a skin; Allen & Tildesley,
*Computer Simulation of Liquids*, 2nd ed., section 5.3.1): a pair outside it had a gap above
``p`` when it was built, and a gap shrinks by at most the sum of both spheres' displacements, so
no pair outside it can close while every sphere has moved less than ``p / 2`` since the build.
Hence

* before every time step (``broad_phase``, called by :mod:`fem.analysis.events`) the list is
  built again when ``2 (d + tau) >= p``, ``d`` the largest displacement since the build and
  ``tau = 2 h max |v|`` an estimate of the largest distance a sphere travels in the step (twice
  the distance at the committed velocities); the new padding is the larger of the deck's
  ``padding`` and ``4 tau``;
* a converged step in which a sphere moved ``p / 2`` or more from the build is refused
  (``check_step``: halved, and the list rebuilt at its start), so a pair that closes is never
  missed, whatever the estimate.

The list and what it needs live in the State's history with the pairs' history
(``pairs``, ``built_at``, ``padding``, and ``dissipated_dropped``: the energy the pairs since
dropped from the list took), so a restart rebuilds nothing it cannot. A pair kept by a rebuild
keeps its history; a new pair starts open (it must: it was outside the list). A new list
changes the tangent's pattern: the dynamic step makes its assembler and linear solver again
(:meth:`fem.analysis.dynamic.DynamicStep.repattern`). Static steps use the list of the step's
start (the deck's: the reference positions).

The results show the spheres (vertex cells): per sphere the sum of its pairs' normal forces, the
number of its closed contacts and half of each of its pairs' dissipated energy.
"""

from __future__ import annotations

import copy

import numpy as np
from numpy.typing import NDArray

from fem.elements.contact.group import HISTORY, SphereContact
from fem.elements.contact.laws import NormalLaw

#: the list's own fields in the history (beside the pairs' ``HISTORY``)
LIST_FIELDS = ("pairs", "built_at", "padding", "dissipated_dropped")


def candidate_pairs(x: NDArray, R: NDArray, padding: float) -> NDArray:
    """(P, 2) local indices ``i < j`` of the spheres at ``x (n, dim)`` whose gap is ``<= padding``.

    Sorted by ``(i, j)``; from a k-d tree query at the largest reach ``2 max R + padding``, then
    each pair's own ``R_i + R_j + padding``.
    """
    from scipy.spatial import cKDTree  # here: a run without sphere sets never imports it

    if len(x) < 2:
        return np.zeros((0, 2), dtype=np.int64)
    reach = 2 * float(R.max()) + padding
    pairs = cKDTree(x).query_pairs(reach, output_type="ndarray").astype(np.int64)
    if not len(pairs):
        return np.zeros((0, 2), dtype=np.int64)
    pairs = np.sort(pairs, axis=1)
    d = np.linalg.norm(x[pairs[:, 1]] - x[pairs[:, 0]], axis=1)
    pairs = pairs[d - R[pairs].sum(axis=1) <= padding]
    key = pairs[:, 0] * len(x) + pairs[:, 1]
    return pairs[np.argsort(key, kind="stable")]


class SphereSetContact(SphereContact):
    """Every pair of a set of spheres on nodes, through a broad phase (module doc).

    Parameters
    ----------
    name : group name
    nodes : (n,) node indices of the spheres
    X : (N, 3) the model's reference coordinates
    dim : 2 or 3
    law : the normal law (its ``K`` is replaced per candidate pair by ``stiffness``)
    radii : (n,) or a scalar
    stiffness : callable ``(R_i, R_j) -> K`` per pair (arrays), e.g. a constant or Hertz's
    padding : the smallest padding of the broad phase (length)
    """

    cell_type = "vertex"
    stress_names = ("normal_force",)

    def __init__(self, name, nodes, X, dim, law: NormalLaw, radii, stiffness, padding,
                 **kw):
        self.nodes = np.asarray(nodes, dtype=np.int64)
        self.radii = np.broadcast_to(np.asarray(radii, dtype=float), self.nodes.shape).copy()
        self.stiffness = stiffness
        self.padding = float(padding)
        self.X_model = np.asarray(X, dtype=float)
        self._stale = False
        x = self.X_model[self.nodes, :dim]
        pairs = candidate_pairs(x, self.radii, self.padding)
        super().__init__(name, self.nodes[pairs].reshape(-1, 2), X, dim, law,
                         radii=self.radii[pairs].reshape(-1, 2), **kw)
        self._local = pairs
        self.law.K = self._stiffness(pairs)
        self.capabilities = self.capabilities | {"broad_phase"}

    # --- the candidate list ---------------------------------------------------------------------
    @property
    def cells(self) -> NDArray:
        """(n, 1) the spheres: what results show and the nodes the group acts on."""
        return self.nodes[:, None]

    def _stiffness(self, pairs: NDArray) -> NDArray:
        R = self.radii[pairs]
        return np.broadcast_to(np.asarray(self.stiffness(R[:, 0], R[:, 1]), dtype=float),
                               (len(pairs),)).copy()

    def _set_pairs(self, pairs: NDArray) -> None:
        """Make the local pairs ``(P, 2)`` the group's elements."""
        self._local = pairs
        self.conn = self.nodes[pairs].reshape(-1, 2)
        self.conn.setflags(write=False)
        self.X = self.X_model[self.conn]
        self.R = self.radii[pairs].reshape(-1, 2).sum(axis=1)
        self.law.K = self._stiffness(pairs)

    def _x(self, state) -> NDArray:
        return self.X_model[self.nodes, :self.dim] + state.u[self.nodes, :self.dim]

    def _build(self, state, padding: float, old: dict | None) -> dict:
        """The list at ``state`` with ``padding``, the history of the pairs kept carried over."""
        x = self._x(state)
        pairs = candidate_pairs(x, self.radii, padding)
        self._set_pairs(pairs)
        hist = super().conserving_start(state)
        dropped = 0.0
        if old is not None:
            n = len(self.nodes)
            prev = old["pairs"].astype(np.int64).reshape(-1, 2)
            _, inew, iold = np.intersect1d(pairs[:, 0] * n + pairs[:, 1],
                                           prev[:, 0] * n + prev[:, 1], return_indices=True)
            for key in hist:
                hist[key][inew] = old[key][iold]
            dropped = float(old["dissipated_dropped"][0] + old["dissipated"].sum()
                            - old["dissipated"][iold].sum())
        hist.update({"pairs": pairs.astype(float), "built_at": x.copy(),
                     "padding": np.array([padding]), "dissipated_dropped": np.array([dropped])})
        return hist

    def _follow(self, hist: dict) -> None:
        """Make the group's list the one ``hist`` holds (a restart, a state of another run)."""
        pairs = hist["pairs"].astype(np.int64).reshape(-1, 2)
        if pairs.shape != self._local.shape or not np.array_equal(pairs, self._local):
            self._set_pairs(pairs)

    def broad_phase(self, state, h: float) -> bool:
        """Build the list again at the committed ``state`` if a step of ``h`` may outrun it.

        Returns whether the group's pairs changed (the caller makes a new pattern). The history
        in ``state`` is replaced by the new list's.
        """
        hist = state.history.get(self.name)
        if not hist or "pairs" not in hist:
            state.history[self.name] = self._build(state, self.padding, None)
            return True
        before = self.conn
        self._follow(hist)
        x = self._x(state)
        moved = float(np.linalg.norm(x - hist["built_at"], axis=1).max(initial=0.0))
        v = state.v[self.nodes, :self.dim]
        tau = 2 * h * float(np.linalg.norm(v, axis=1).max(initial=0.0))
        if not self._stale and 2 * (moved + tau) < hist["padding"][0]:
            return self.conn is not before
        self._stale = False
        state.history[self.name] = self._build(state, max(self.padding, 4 * tau), hist)
        return True

    # --- the history ----------------------------------------------------------------------------
    def history_fields(self) -> dict[str, tuple[int, ...]]:
        """``{name: shape}`` at the reference positions (the deck's list)."""
        from fem.state import State

        start = self.conserving_start(State.reference(self.dim, len(self.X_model)))
        return {name: np.shape(value) for name, value in start.items()}

    def conserving_start(self, state) -> dict:
        """The list built at ``state`` (a dynamic step's start) and the history of its pairs."""
        return self._build(state, self.padding, None)

    def _advance(self, hist, d0, d1, h, D) -> dict:
        out = super()._advance(hist, d0, d1, h, D)
        out.update({k: hist[k] for k in LIST_FIELDS})
        return out

    def conserving(self, s0, s1, sm, inc, hist):
        """The step form on the pairs that touch at either end of the step; the others take none.

        A pair open at both ends has no force, tangent, energy or dissipation in any law (its
        mean penetration power is zero), and its history stays; most candidate pairs of a heap
        are such. Their gaps are those :meth:`_gap_step` computes (the same operations), so the
        split is exact.
        """
        E = len(self)
        c = self.conn
        open_ = np.ones(E, dtype=bool)
        for s in (s0, s1):
            d = ((self.X_model[c[:, 1], :self.dim] - self.X_model[c[:, 0], :self.dim])
                 + (s.u[c[:, 1], :self.dim] - s.u[c[:, 0], :self.dim]))
            open_ &= np.linalg.norm(d, axis=1) - self.R >= 0
        if not open_.any() or self.friction > 0:
            return super().conserving(s0, s1, sm, inc, hist)
        act = ~open_
        sub = {k: (v[act] if k in HISTORY else v) for k, v in hist.items()}
        fa, Ka, Ua, ha = super(SphereSetContact, self._touching(act)).conserving(
            s0, s1, sm, inc[act], sub)
        f = np.zeros((E, self.nd))
        K = np.zeros((E, self.nd, self.nd))
        U = np.zeros(E)
        f[act], K[act], U[act] = fa, Ka, Ua
        out = dict(ha)
        for k in HISTORY:
            out[k] = hist[k].copy()
            out[k][act] = ha[k]
        return f, K, U, out

    def _touching(self, act: NDArray) -> SphereSetContact:
        """A shallow copy of the group holding the pairs ``act`` alone (this one is unchanged)."""
        sub = copy.copy(self)
        sub.conn, sub.X, sub.R = self.conn[act], self.X[act], self.R[act]
        sub.law = copy.copy(self.law)
        sub.law.K = self.law.K[act]
        return sub

    # --- time steps -----------------------------------------------------------------------------
    def check_step(self, s0, s1, mass: NDArray) -> str | None:
        """A step that moved a sphere half the padding from the build is refused (module doc)."""
        hist = s0.history.get(self.name)
        if hist and "built_at" in hist:
            moved = np.linalg.norm(self._x(s1) - hist["built_at"], axis=1)
            k = int(np.argmax(moved)) if len(moved) else 0
            if len(moved) and 2 * moved[k] >= hist["padding"][0]:
                self._stale = True
                return (f"contact '{self.name}': a sphere moved {moved[k]:.3g}, half the broad "
                        f"phase's padding {hist['padding'][0]:.3g} or more, since its pairs were "
                        "listed")
        return super().check_step(s0, s1, mass)

    # --- results: per sphere --------------------------------------------------------------------
    def _per_sphere(self, values: NDArray) -> NDArray:
        out = np.zeros(len(self.nodes))
        for side in (0, 1):
            np.add.at(out, self._local[:, side], values)
        return out

    def outputs(self, state) -> dict[str, NDArray]:
        """Per sphere: the sum of its pairs' normal forces, its closed contacts, dissipated/2."""
        g, _, _, _, F, _, _ = self._at(state)
        out = {"normal_force": self._per_sphere(F),
               "contacts": self._per_sphere((g < 0).astype(float))}
        hist = state.history.get(self.name)
        if hist and "pairs" in hist and len(hist["dissipated"]) == len(self):
            out["dissipated"] = self._per_sphere(0.5 * hist["dissipated"])
        return out

    def properties(self) -> dict[str, NDArray]:
        """Radius per sphere."""
        return {"R": self.radii}
