"""Owner-computes assembly under ``mpiexec`` (tests/test_mpi_assembly.py; fem.owner_computes).

``python tests/mpi_assembly.py MODEL ... [DECK:OUT.h5 ...]``: for each MODEL (``lattice`` for
``benchmarks.common.space_frame(5)``, or a deck path), on every rank: the serial tangent and
internal force at a perturbed state (the same on every rank), then the rank's owner-computes
tangent set into a distributed :class:`~fem.solvers.linear_system.LinearSystem` numbered by the
partition. Rank 0 gathers the PETSc matrix's rows, permutes them back to the serial numbering
and prints one JSON line per model: whether the matrix and the force equal the serial ones bit
for bit, and the relative difference of a distributed solve from a serial one (PETSc's LU on
rank 0) with the serial solve's error bound (:func:`fem.linalg.accuracy`). Then each
``DECK:OUT.h5`` is run with ``-fem_distributed_assembly``.
"""

from __future__ import annotations

import json
import sys

import numpy as np


def check(name: str) -> dict:
    """One model's checks (module docstring); the result on rank 0, None elsewhere."""
    import scipy.sparse as sp

    from fem import linalg, mpi
    from fem.owner_computes import OwnerComputes
    from fem.solvers.linear_system import LinearSystem
    from fem.system import System

    if name == "lattice":
        from benchmarks.common import space_frame

        model = space_frame(5)[0]
    else:
        from fem.io import deck as deck_io

        model = deck_io.load(name).model
    sysm = System(model)
    state = sysm.reference_state()
    state.u[:] += 1e-3 * np.random.default_rng(3).standard_normal(state.u.shape)
    f_ref, K_ref = sysm.evaluate(state)
    oc = OwnerComputes.of(sysm)
    sysm.owner = oc
    f, K = sysm.evaluate(state)
    n = sysm.n_free
    linear = LinearSystem(sysm.assembler, n, False, "ownertest_")
    linear.open()
    p = oc.partition
    linear.rows = (p.serial, p.new, p.ranges, oc.rank)
    linear.fill(K)
    A = linear.A
    r0, r1 = A.getOwnershipRange()
    ia, ja, a = A.getValuesCSR()
    comm = mpi.mpi4py_comm()
    parts = comm.gather((r0, r1, ia, ja, a), root=0)
    rhs = np.random.default_rng(4).standard_normal(n)
    x, report = linear.solve(rhs)
    linear.close()
    sysm.owner = None
    if comm.Get_rank() != 0:
        return None
    indptr = [np.zeros(1, np.int64)]
    for r0, r1, ia, ja, a in parts:
        indptr.append(ia[1:] + indptr[-1][-1])
    B = sp.csr_matrix((np.concatenate([x[4] for x in parts]),
                       np.concatenate([x[3] for x in parts]), np.concatenate(indptr)),
                      shape=(n, n))
    B = B[p.new][:, p.new].tocsr()            # back to the serial numbering
    B.sort_indices()
    S = sysm.assembler.to_scipy(K_ref)
    same = (np.array_equal(B.indptr, S.indptr) and np.array_equal(B.indices, S.indices)
            and np.array_equal(B.data, S.data))
    # a serial solve (PETSc's LU) and its error bound
    A1 = linalg.matrix_from_scipy(S)
    ksp = linalg.direct_solver(A1, "ownerserial_", package="petsc")
    x1 = linalg.solve(ksp, rhs.copy())
    _, bound = linalg.accuracy(ksp, rhs, x1)
    ksp.destroy()
    A1.destroy()
    return {"model": name, "ranks": comm.Get_size(), "matrix_equal": bool(same),
            "force_equal": bool(np.array_equal(f, f_ref)),
            "x_rel": float(np.abs(x - x1).max() / np.abs(x1).max()), "bound": float(bound),
            "backward_error": report.backward_error,
            "elements": oc.elements, "total": sum(len(g) for g in model.groups),
            "owned": [int(c) for c in np.diff(p.ranges)]}


def main(args: list[str]) -> int:
    from fem import _petsc

    _petsc.init(["-fem_distributed_assembly"])
    from fem import cli, mpi

    for name in [a for a in args if ":" not in a]:
        got = check(name)
        if got is not None:
            print(json.dumps(got), flush=True)
    code = 0
    for pair in [a for a in args if ":" in a]:
        deck, out = pair.rsplit(":", 1)
        code = cli.main(["run", deck, "-o", out, "-fem_distributed_assembly", "-v"]) or code
        mpi.mpi4py_comm().Barrier()
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
