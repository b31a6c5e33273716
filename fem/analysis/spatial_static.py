"""Load-control increments of small 3D beam models in one compiled call (issue 32).

The 3D twin of :mod:`fem.analysis.planar_static`. A small 3D static model's Newton iteration was
interpreter work: Sze et al.'s cantilever under end shear (K. Y. Sze, X. H. Liu, S. H. Lo,
"Popular benchmark problems for geometric nonlinear analysis of shells", Finite Elements in
Analysis and Design 40 (2004) 1551-1569, section 3.1) as 10 co-rotational 3D beams took several
milliseconds an iteration in the numpy beams (below :data:`fem.kernels.MIN_ELEMENTS` elements a
group takes the numpy path: ``rotations.logm``, ``einsum``, the frame's geometry), the
assembly, the test, the bent corrections. For the models where the static step reduces to nodes
and 3D beams, :class:`SpatialIncrement` iterates an increment's Newton loop in
:func:`fem.analysis.spatial_static_kernel.increment`:

* 3D, a nonlinear static step under load control with full Newton and without a line search
  (``newton = "full"``, ``line_search = "none"``, the defaults: the corrections are the bent
  ones of :mod:`fem.analysis.bent`);
* every element group 3D co-rotational beams without offsets or interior modes, in the form
  the compiled kernel knows (:func:`fem.elements.beam.beam3d_jit.prepare`), at any group size;
* no joints or ties, loads that do not turn with the structure (follower loads go the general
  way), supports and prescribed motions as the general path applies them;
* at most :data:`MAX_UNKNOWNS` unknowns, the tangent and the chords' Laplacian narrow enough
  for the banded LU (:mod:`fem.solvers.banded`), no PETSc options for the step's solver, and
  numba there with ``FEM_JIT`` not ``0``.

:meth:`SpatialIncrement.eligible` says which of these a step misses, from its settings and what
the model declares (the groups' compiled pairs and offsets); the step logs the reason. The
increment takes the iterations the general path takes, to the same states
(``tests/test_spatial_static.py``); anything but a plain convergence runs the increment again
through the general path from its predictor, so the messages and the step control have one
implementation.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from fem import linalg
from fem.analysis.planar_static import CompiledIncrement
from fem.kernels import Kernel
from fem.solvers.banded import BandedLU

_kernel = Kernel("fem.analysis.spatial_static_kernel", "increment")

#: Models of more unknowns keep the general path: its beams evaluate in parallel
#: (:func:`fem.elements.beam.beam3d_kernel.kernel`) from :data:`fem.kernels.MIN_ELEMENTS`
#: elements, its sparse LU takes any pattern, and its Python work per iteration is small beside
#: theirs (the 1000-element cantilever ran 0.27x OpenSees's time there, issue 32)
MAX_UNKNOWNS = 3000


class SpatialIncrement(CompiledIncrement):
    """The compiled load-control increment of one static step's 3D beam model."""

    def __init__(self, step, preps, lu: BandedLU, where: NDArray, fits: list):
        from fem.analysis import spatial_static_kernel

        system = step.system
        dm = system.dofmap
        self.kern, self.lu = spatial_static_kernel, lu
        self._common(step)
        # the shear-arch terms of every group on one list of basic-deformation pairs (zero
        # coefficients where a group has none: an exact no-op in the kernel)
        pairs = sorted({tuple(ij) for p, _ in preps for ij in p.ij.tolist()})
        E = sum(len(p.l0) for p, _ in preps)
        coef = np.zeros((len(pairs), E))
        start = 0
        for p, _ in preps:
            for k, ij in enumerate(p.ij.tolist()):
                coef[pairs.index(tuple(ij)), start:start + len(p.l0)] = p.coef[k]
            start += len(p.l0)
        l0 = np.concatenate([p.l0 for p, _ in preps])
        self.beams = (np.concatenate([p.conn for p, _ in preps]),
                      np.concatenate([p.chord0 for p, _ in preps]),
                      np.concatenate([p.E0 for p, _ in preps]), l0,
                      np.concatenate([p.Sc for p, _ in preps]), coef,
                      np.array(pairs, dtype=np.int64).reshape(-1, 2))
        self.edofs = np.concatenate([np.ascontiguousarray(sc.edofs, dtype=np.int64)
                                     for _, sc in preps])
        self.slot = np.concatenate([np.asarray(sc.slot, dtype=np.int64) for _, sc in preps])
        self.X = np.ascontiguousarray(system.model.X, dtype=float)
        self.kind = np.ascontiguousarray(dm.kind_index, dtype=np.int64)
        self.n_free, self.lever = dm.n_free, float(step._model_size())
        self.w, self.where, self.fits = 1.0 / l0, where, tuple(fits)

    @staticmethod
    def eligible(step) -> str | None:
        """Why the compiled increment cannot take ``step`` (its settings, its model), or None.

        From what the step and the groups declare (the module docstring's list): every
        element group's evaluation the compiled pair ``beam3d.evaluate``
        (:attr:`~fem.elements.base.ElementGroup.compiled_pairs`) without offsets, whose kernel
        the increment runs; numba is imported last, for a model it takes.
        """
        system = step.system
        model, dm = system.model, system.dofmap
        for why, when in (
                ("not a 3D model", model.dim != 3), *CompiledIncrement.step_reasons(step),
                (f"more than {MAX_UNKNOWNS} unknowns", dm.n_free > MAX_UNKNOWNS),
                ("nodes with additive rotations",
                 system.additive is not None and bool(system.additive.any()))):
            if when:
                return why
        for i, g in enumerate(model.groups):
            if "beam3d.evaluate" not in g.compiled_pairs:
                return f"element group '{g.name}' ({g.type_name}) has no compiled 3D beam kernel"
            if g.offsets is not None:
                return f"element group '{g.name}' has offset ends"
            if dm.internal and dm.internal[i].shape[1]:
                return f"element group '{g.name}' has element-internal unknowns"
        if not _kernel.enabled():
            return "numba is not installed, or FEM_JIT = 0"
        return None

    @classmethod
    def make(cls, step) -> SpatialIncrement | str:
        """The compiled increment of ``step``'s model, or why the general path is needed.

        The reason of :meth:`eligible`, or: the kernel does not know a group's basic beam, the
        tangent or a chords' Laplacian is too wide for the band (or singular).
        """
        why = cls.eligible(step)
        if why is not None:
            return why
        system = step.system
        model = system.model
        preps = []
        for i, g in enumerate(model.groups):
            try:
                prep = g._kernel_data()
            except RuntimeError:                # a basic beam the kernel does not know
                return f"element group '{g.name}': a basic beam the kernel does not know"
            preps.append((prep, system.assembler.groups[i]))
        lu = BandedLU.make(system.assembler.indptr, system.assembler.indices)
        if lu is None:
            return "the tangent is too wide for the banded LU"
        conn = np.concatenate([p.conn for p, _ in preps])
        w = 1.0 / np.concatenate([p.l0 for p, _ in preps])
        found = cls._chord_fits(system, conn, w, 3)
        if found is None:
            return "a chords' Laplacian is too wide for the banded LU, or singular"
        where, fits = found
        return cls(step, preps, lu, where, fits)

    def start(self, step, state) -> bool:
        """The start of the step (StaticStep._check_start) on the band LU: false if it failed.

        The tangent at ``state`` factored and its determinant's sign the limit-point watch's
        reference; false where it is not finite or singular (the general check then says why).
        """
        lu = self.lu
        sign = self.kern.start(state.u, state.rot, self.beams, self.edofs, self.slot,
                               self.n_active, lu.indptr, lu.pos, lu.order, lu.ab, lu.kl,
                               linalg.NULL_PIVOT)
        if sign == 0:
            return False
        step._sign0 = int(sign)
        return True

    def iterate(self, step, trial, lam: float) -> tuple[int, NDArray] | None:
        """Newton on the increment to load factor ``lam`` from ``trial`` (its predictor).

        Returns the iterations and the residual (the reactions), with ``trial`` moved to the
        converged state, the norms in ``step.test`` and the factorizations' signs in
        ``step._signs``; None where the general path is needed (``trial`` is left as it was).
        """
        lu = self.lu
        fe = step.external(trial, lam)
        u, rot = trial.u.copy(), trial.rot.copy()
        r = np.empty(self.n_active)                         # kept by the step: the reactions
        norms, signs, counts = self._norms, self._signs, self._counts
        status, it = self.kern.increment(
            self.X, u, rot, self.beams, self.edofs, self.slot, fe, self.kind, self.n_free,
            self.lever, self.free_node, self.free_slot, lu.indptr, lu.indices, lu.pos, lu.order,
            lu.ab, lu.kl, self.w, self.where, self.fits, self.settings, r, norms, signs, counts)
        if status != self.kern.CONVERGED:
            return None
        self._converged(step, trial, u, rot, it)
        return it, r
