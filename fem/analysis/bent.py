"""Bent corrections: a Newton correction of slender co-rotational beams applied along turned chords.

Newton moves every node along a straight line. A co-rotational member whose correction turns its
chord by ``phi`` is thereby lengthened by ``l (sqrt(1 + phi^2) - 1) ~ l phi^2 / 2``: in the first
increment of a slender arch (1000 elements, a tip load that bends it through 100 degrees) chords
turn by 0.4 rad, a 7.7 % stretch, axial forces 2e4 times the physical ones, and the next tangents
(the geometric stiffness of that spurious tension) send the iteration off. Along the straight
correction the energy is least at about 3 % of it, so every line search cuts the step to a few
percent and crawls (measured: 2 to 150 times the iterations on ordinary cases).

The correction keeps Newton's direction and solves and changes only how it is applied when the
straight step raised the residual (:meth:`fem.analysis.static.StaticStep.correct`): each
co-rotational beam's chord increment ``Delta = du_b - du_a`` is read as an elongation
``a = e . Delta`` plus a *finite* turn of the chord (2D: the angle ``(z . Delta)/l``; 3D: the spin
``e x Delta / l`` plus the twist ``(e . w_mean) e`` of the nodal spins), the new chord
``c = (l + a) R e``, and the nodal translations are the least-squares fit of the new chords,
``min sum (1/l0) |Y_b - Y_a - (c - d)|^2``: a scalar graph Laplacian per direction, factored once,
exact for a tree of members (a cantilever, an arch). Rotations keep Newton's increments. A bent
correction differs from the straight one by ``O(|Delta|^2 / l)``, so near a solution the iteration
is Newton's (the straight step passes there), and converges quadratically.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from fem import kernels, lazy
from fem import rotations as so3
from fem.kernels import Kernel

sp = lazy.module("scipy.sparse")
spla = lazy.module("scipy.sparse.linalg")
csgraph = lazy.module("scipy.sparse.csgraph")

_compiled = Kernel("fem.analysis.bent_kernel", "chord_rhs")

TRUST = 1.0          # rad: a bent correction turning nodes more than this is checked, then scaled


class ChordFit:
    """Translations of a nodal correction refitted to finitely turned beam chords.

    Built once per step: the co-rotational beams of the model, their graph Laplacian weighted by
    ``1 / l0`` and its factorization per direction over the free translations (one for the
    directions with the same free nodes, made when a correction is first bent) (a member with no
    support in a direction keeps Newton's translation at one of its nodes; supported and
    prescribed translations are held). ``active`` is false for models without co-rotational
    beams (nothing to bend: trusses keep the straight update).
    """

    def __init__(self, system):
        model = system.model
        self.dim = d = model.dim
        self.groups = [g for g in model.groups if g.type_name == "beam"
                       and not g.additive_rotations]
        self.active = bool(self.groups)
        if not self.active:
            return
        conn = np.concatenate([g.conn for g in self.groups])
        l0 = np.concatenate([g.l0 for g in self.groups])
        n, E = model.n_nodes, len(conn)
        self.conn, self.w = conn, 1.0 / l0
        #: (E, 3) the reference chords, for the compiled right-hand side (3D, large models)
        self.chord0 = (np.ascontiguousarray(np.concatenate([g.X[:, 1] - g.X[:, 0]
                                                            for g in self.groups]))
                       if d == 3 and E >= kernels.MIN_ELEMENTS else None)
        self.G = sp.csr_matrix((np.r_[-np.ones(E), np.ones(E)],
                                (np.r_[np.arange(E), np.arange(E)],
                                 np.r_[conn[:, 0], conn[:, 1]])), shape=(E, n))
        L = (self.G.T @ sp.diags(self.w) @ self.G).tocsr()
        self.held, self.solvers, self.coupling = [], [], []
        factored = {}                              # directions with the same free nodes share
        for k, held in enumerate(held_nodes(system, conn)):
            f = np.flatnonzero(~held)
            self.held.append(np.flatnonzero(held))
            key = f.tobytes()
            if key not in factored:                # (usually all three: one factorization)
                factored[key] = [f, L[f], None]    # factored when first bent (__call__)
            self.solvers.append(factored[key])
            self.coupling.append(L[f][:, self.held[-1]])    # of the held nodes, for the rhs

    def __call__(self, state, dn: NDArray) -> NDArray:
        """The nodal correction ``dn (n, nslots)`` of ``state`` with its translations bent."""
        d = self.dim
        rhs = self.rhs(state, dn)
        D = dn[:, :d]
        Y = D.copy()
        for k, solver in enumerate(self.solvers):
            f, Lf, lu = solver
            if not len(f):
                continue
            if lu is None:                         # most steps never bend: factor on demand
                lu = solver[2] = spla.splu(Lf[:, f].tocsc())
            Y[f, k] = lu.solve(rhs[f, k] - self.coupling[k] @ D[self.held[k], k])
        out = dn.copy()
        out[:, :d] = Y
        return out

    def rhs(self, state, dn: NDArray) -> NDArray:
        """``G^T (w (c - d))`` (n, dim): the compiled pair ``bent.chord_rhs`` (:mod:`fem.kernels`).

        Compiled for 3D models of :data:`fem.kernels.MIN_ELEMENTS` beams (``chord0``), else
        :meth:`rhs_numpy`.
        """
        if self.chord0 is not None and _compiled.enabled():
            return rhs_compiled(self, state, dn)
        return self.rhs_numpy(state, dn)

    def rhs_numpy(self, state, dn: NDArray) -> NDArray:
        """``G^T (w (c - d))`` (n, dim): the weighted chord changes summed onto the nodes."""
        d = self.dim
        dvec = np.concatenate([(lambda p: p[:, 1, :d] - p[:, 0, :d])(g.positions(state))
                               for g in self.groups])
        l = np.linalg.norm(dvec, axis=1)
        e = dvec / l[:, None]
        D = dn[:, :d]
        Delta = D[self.conn[:, 1]] - D[self.conn[:, 0]]
        a = np.einsum("ij,ij->i", e, Delta)
        if d == 2:
            z = np.c_[-e[:, 1], e[:, 0]]
            ang = np.einsum("ij,ij->i", z, Delta) / l
            c = (l + a)[:, None] * (np.cos(ang)[:, None] * e + np.sin(ang)[:, None] * z)
        else:
            w = dn[:, 3:6]
            wbar = 0.5 * (w[self.conn[:, 0]] + w[self.conn[:, 1]])
            om = np.cross(e, Delta) / l[:, None] + np.einsum("ij,ij->i", e, wbar)[:, None] * e
            c = (l + a)[:, None] * so3.rotate(om, e)
        return self.G.T @ (self.w[:, None] * (c - dvec))


def held_nodes(system, conn: NDArray, supported: bool = False) -> list[NDArray]:
    """Per direction, (n,) the nodes whose translation a bent correction keeps as Newton's.

    Fixed or prescribed in that direction (correction 0), on no beam of ``conn (E, 2)``, and in
    each connected set of beams without support in the direction, its first node. ``supported``:
    every connected set is held in every direction, so the search for them is skipped (a model
    of beams alone with a nonsingular tangent: a set free to translate would be a null vector;
    scipy's search costs 0.1-0.2 ms even on a few beams, a tenth of a small static step).
    """
    model, dm = system.model, system.dofmap
    n, E = model.n_nodes, len(conn)
    used = np.zeros(n, dtype=bool)
    used[conn.ravel()] = True
    ncomp, label = (0, None) if supported else csgraph.connected_components(
        sp.csr_matrix((np.ones(E), (conn[:, 0], conn[:, 1])), shape=(n, n)), directed=False)
    out = []
    for k in range(model.dim):
        free = (dm.index[:, k] >= 0) & (dm.index[:, k] < dm.n_nodal)
        held = ~free | ~used                   # fixed (correction 0) or not on a beam
        for c in range(ncomp):                 # a member without support in k: one node
            members = np.flatnonzero((label == c) & used)      # keeps Newton's translation
            if len(members) and not held[members].any():
                held[members[0]] = True
        out.append(held)
    return out


# --- the compiled pair (fem.kernels.PAIRS) -------------------------------------------------------
def rhs_compiled(fit: ChordFit, state, dn: NDArray) -> NDArray:
    """:meth:`ChordFit.rhs` of a 3D fit, compiled (:mod:`fem.analysis.bent_kernel`)."""
    rhs = np.empty((len(dn), 3))
    _compiled.function(np.ascontiguousarray(state.u, dtype=float),
                       np.ascontiguousarray(dn, dtype=float), fit.conn, fit.chord0, fit.w, rhs)
    return rhs


def _samples(rng) -> list[tuple]:
    """A deformed 3D lattice of beams clamped at a corner, a random correction of the rest.

    Not a tree: the chord fit is a least-squares one.
    """
    from fem.elements.beam import Beam
    from fem.model import Model
    from fem.system import System

    n = 5                                      # 3 n^2 (n + 1) > MIN_ELEMENTS beams
    g = np.arange(n + 1)
    X = np.stack(np.meshgrid(g, g, g, indexing="ij"), axis=-1).reshape(-1, 3) * 1.0
    index = np.arange(len(X)).reshape(n + 1, n + 1, n + 1)
    conn = np.concatenate([np.c_[np.delete(index, n, axis=k).ravel(),
                                 np.delete(index, 0, axis=k).ravel()] for k in range(3)])
    ref = np.where(np.abs(X[conn[:, 1], 2] - X[conn[:, 0], 2])[:, None] > 0.5,
                   [[0.0, 1.0, 0.0]], [[0.0, 0.0, 1.0]])
    beams = Beam("b", conn, X, 3, E=2.1e5, G=8.1e4, A=1e-2, Iy=1e-5, Iz=2e-5, J=1.5e-5,
                 formulation="corotational", ref=ref)
    fixed = np.zeros((len(X), 6), dtype=bool)
    fixed[0] = True
    system = System(Model(dim=3, X=X, node_ids=np.arange(1, len(X) + 1), groups=(beams,),
                          fixed=fixed))
    state = system.reference_state()
    state.u[1:, :3] = 0.05 * rng.normal(size=(len(X) - 1, 3))
    dn = 0.1 * rng.normal(size=(len(X), 6))
    dn[0] = 0.0
    return [(ChordFit(system), state, dn)]


kernels.register(kernels.Pair("bent.chord_rhs", _compiled, kernels.method("rhs_numpy"),
                              rhs_compiled, _samples, kernels.method("rhs")))
