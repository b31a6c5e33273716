"""The first 20 modes of a 3D beam lattice: own block Lanczos, SLEPc, scipy's eigsh (ARPACK).

``common.space_frame`` lattices of about 1e4 and 1e5 DOFs clamped at the bottom, and with
``--large`` a slab of 1e6 DOFs (``common.slab``: 204 x 204 x 4 nodes clamped on one face; a cube
of 1e6 DOFs would need tens of GB for its factors, and a tower of 1e6 DOFs that fits is so
slender that the solvers resolve its lowest modes only to 1e-3), consistent mass. SLEPc runs
first and its factorization is freed before the shared one is made: both at once (about 15 GB
each at 1e6 DOFs) do not fit this 24 GB machine. Each solver
gets the same factorization of ``K - sigma M`` (MUMPS through the step's KSP, its symmetric
``L D L^T`` here: :class:`fem.solvers.eigen.Factorization`): the modal step's own Lanczos,
SLEPc's Krylov-Schur with shift-and-invert through the eigen front-end (on a factorization of
its own, the same package, timed with it, and with the front-end's check of multiplicities,
one more Krylov-Schur search of the deflated problem), and
``scipy.sparse.linalg.eigsh`` in shift-invert mode with ``OPinv`` the same KSP solve. So the
times compare the eigen-iterations (solves, orthogonalization, Ritz extraction, restarts) on top
of one factorization, which is timed apart: the own Lanczos solves a block of right-hand sides at
a time (``linalg.solve_block``, one MUMPS solve phase per block), ARPACK one vector at a time.
The Lanczos runs at the modal step's tolerance (``TOLERANCE``: relative residual 1e-10 of the
shift-inverted operator), eigsh at ``tol = 1e-10`` (the same criterion), SLEPc at its step's
1e-12. Ratios are against SLEPc and eigsh in the same run; all three must agree on the
frequencies (printed: the largest relative difference). Also printed: the Lanczos's block size,
its block solves and right-hand sides, and eigsh's solves (one right-hand side each): on a
shared machine the counts compare runs better than the seconds. The dense algebra of the
Lanczos (small eigen-problems, Gram matrices) suffers from BLAS threads on a busy machine:
compare runs with ``OPENBLAS_NUM_THREADS=1``.
"""

import gc
import sys
import time

import numpy as np
import scipy.sparse.linalg as sla

from benchmarks.common import slab, space_frame
from fem.analysis.modal import TOLERANCE, ModalSettings, ModalStep
from fem.loads import StepLoads
from fem.solvers import eigen
from fem.solvers.eigen.lanczos import default_block
from fem.system import System

SIZES = (12, 26)                   # cubic lattices: about 1e4 and 1e5 DOFs
LARGE = (204, 4)                   # a slab of about 1e6 DOFs
COUNT = 20


def step(model, method):
    sysm = System(model)
    loads = StepLoads(model, (), ramp=True, t_end=1.0)
    return sysm, ModalStep("bench", sysm, loads, ModalSettings(modes=COUNT, method=method,
                                                               mass="consistent", shift=0.0))


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t


def measure(model):
    """DOFs, times (factorization, own Lanczos, SLEPc, eigsh) and the largest disagreement."""
    # SLEPc first, its factorization freed before ours is made: the two never coexist (at 1e6
    # DOFs both together do not fit in 24 GB)
    sysm, own = step(model, "lanczos")
    state = sysm.reference_state()
    K, M = own.matrices(state)
    _, slepc = step(model, "slepc")
    # through the front-end: SLEPc's Krylov-Schur on a factorization of its own (made and freed
    # inside), with the front-end's check of multiplicities
    sp, t_slepc = timed(lambda: eigen.symmetric(K, M, COUNT, 0.0, method="slepc",
                                                prefix="bench_slepc_", tol=TOLERANCE))
    gc.collect()
    factored, t_factor = timed(lambda: eigen.Factorization(K, own.prefix))
    _, t_first = timed(lambda: factored(np.ones((K.shape[0], 1))))   # MUMPS factors at first use
    from fem.solvers.eigen.lanczos import lanczos

    solves = {"own": [0, 0], "eigsh": [0, 0]}      # block solves, right-hand sides

    def counted(key):
        def solve(B):
            solves[key][0] += 1
            solves[key][1] += B.shape[1]
            return factored(B)
        return solve

    pairs, t_own = timed(lambda: lanczos(K, M, COUNT, 0.0, counted("own"), tol=TOLERANCE))
    solve = counted("eigsh")

    def op(x):
        return solve(x.reshape(len(x), -1)).ravel()

    OPinv = sla.LinearOperator(K.shape, matvec=op, dtype=float)
    (w_arpack, _), t_arpack = timed(lambda: sla.eigsh(K, COUNT, M, sigma=0.0, OPinv=OPinv,
                                                      which="LM", tol=1e-10))
    factored.close()
    own.close()
    ref = np.sort(sp.values)
    diff = max(np.abs(pairs.omega2 / ref - 1).max(), np.abs(np.sort(w_arpack) / ref - 1).max())
    return K.shape[0], t_factor + t_first, t_own, t_slepc, t_arpack, diff, solves


def main(argv=()):
    models = [lambda n=n: space_frame(n)[0] for n in SIZES]
    if "--large" in argv:
        models.append(lambda: slab(*LARGE))
    print(f"first {COUNT} modes of a 3D beam lattice (s; the factorization is shared and timed "
          "apart; SLEPc's includes its own)")
    print(f"{'DOFs':>8} {'factor':>8} {'lanczos':>8} {'slepc':>8} {'eigsh':>8} "
          f"{'slepc/own':>9} {'eigsh/own':>9} {'max diff':>9} {'block':>5} {'solves':>6} "
          f"{'vectors':>7} {'eigsh solves':>12}")
    for make in models:
        dofs, tf, to, ts, ta, diff, solves = measure(make())
        # SLEPc factors for itself: compared with factor + own Lanczos; eigsh shares ours.
        # solves: block solves and right-hand sides of the own Lanczos, single solves of eigsh
        print(f"{dofs:>8} {tf:>8.2f} {to:>8.2f} {ts:>8.2f} {ta:>8.2f} {ts / (tf + to):>9.2f} "
              f"{ta / to:>9.2f} {diff:>9.1e} {default_block(COUNT):>5} {solves['own'][0]:>6} "
              f"{solves['own'][1]:>7} {solves['eigsh'][0]:>12}")


if __name__ == "__main__":
    main(sys.argv[1:])
