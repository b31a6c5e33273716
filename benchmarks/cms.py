"""Component mode synthesis of a 1e5-DOF component: reduction time, reduced eigen time, accuracy.

The component is the cubic beam lattice of ``benchmarks/modal.py`` (``common.space_frame``,
about 1e4 and 1e5 unknowns, clamped at the bottom, consistent mass) with its interface at the
four top corners (24 boundary unknowns). Craig-Bampton (:func:`fem.cms.craig_bampton`: one
factorization of ``K_ii``, the constraint modes as one block solve, ``MODES`` fixed-interface modes
by the project's Lanczos) against the full model's first ``COUNT`` modes by the same Lanczos
(factorization included), in one run. The reduced model's eigen-solve is dense (``scipy.linalg.
eigh`` on ``24 + MODES`` unknowns). Printed: the times, their ratios, and the largest relative
error of the reduced model's frequencies below half the component's cut-off (Ritz: never below
the full model's).

Still to come (issue 13): the dynamics speed-up of a mechanism with a superelement, which needs
superelements in large motion.
"""

import time

import numpy as np
import scipy.linalg as sla

from benchmarks.common import space_frame
from benchmarks.modal import step
from fem.analysis.modal import TOLERANCE
from fem.cms.component import node_dofs
from fem.cms.craig_bampton import craig_bampton
from fem.solvers.lanczos import lanczos

SIZES = (12, 26)                   # about 1e4 and 1e5 unknowns
MODES = 40                         # fixed-interface modes kept
COUNT = 20                         # full-model modes for the comparison


def measure(n: int):
    model, _ = space_frame(n)
    sysm, modal = step(model, "lanczos")
    K, M = modal.matrices(sysm.reference_state())
    top = model.X[:, 2] == n - 1
    corners = top & np.isin(model.X[:, 0], (0, n - 1)) & np.isin(model.X[:, 1], (0, n - 1))
    boundary, _ = node_dofs(sysm, model.node_ids[corners])
    t = time.perf_counter()
    cb = craig_bampton(K, M, boundary, modes=MODES, name="bench")
    t_reduce = time.perf_counter() - t
    t = time.perf_counter()
    w2_r = sla.eigh(cb.K, cb.M, eigvals_only=True)
    t_reduced = time.perf_counter() - t
    t = time.perf_counter()
    solve = modal._factor(K, M, 0.0)
    full = lanczos(K, M, COUNT, 0.0, solve, tol=TOLERANCE)
    t_full = time.perf_counter() - t
    modal.close()
    keep = np.sqrt(full.omega2) < 0.5 * cb.cutoff
    err = w2_r[:COUNT][keep] / full.omega2[keep] - 1
    return K.shape[0], t_reduce, t_reduced, t_full, int(keep.sum()), float(np.sqrt(
        1 + err.max()) - 1), bool((err >= -1e-9).all())


def main():
    print(f"Craig-Bampton of a beam lattice: 24 interface unknowns, {MODES} fixed-interface modes; "
          f"the full model's first {COUNT} modes for comparison (s)")
    print(f"{'DOFs':>8} {'reduce':>8} {'reduced eig':>11} {'full eig':>9} {'full/reduce':>11} "
          f"{'full/reduced eig':>16} {'modes<cut/2':>11} {'max error':>9} {'Ritz':>5}")
    for n in SIZES:
        dofs, tr, te, tf, k, err, ritz = measure(n)
        print(f"{dofs:>8} {tr:>8.2f} {te:>11.4f} {tf:>9.2f} {tf / tr:>11.2f} {tf / te:>16.0f} "
              f"{k:>11} {err:>9.1e} {'yes' if ritz else 'NO':>5}")


if __name__ == "__main__":
    main()
