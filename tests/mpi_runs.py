"""Run decks under ``mpiexec``, one interpreter per rank (tests/test_mpi.py).

``python tests/mpi_runs.py [-petsc_option ...] DECK:OUT.h5 ...``: ``fem run DECK -o OUT.h5
[-petsc_option ...]`` for each pair in turn,
in one interpreter (one MPI start, one numba load), through :func:`fem.cli.main`, with a barrier
after each run (a later deck may read a file an earlier one wrote, e.g. a superelement). Exits
with the last failure's exit code (0 if none).

``FEM_TEST_FAIL_RANK=r``: on rank ``r`` only, writing a step's end state fails with an
:class:`~fem.errors.OutputError` (a failure of one rank, as when rank 0's disk is full).
"""

from __future__ import annotations

import os
import sys

from fem import cli, mpi


def main(pairs: list[str]) -> int:
    fail = os.environ.get("FEM_TEST_FAIL_RANK")
    if fail is not None and int(fail) == mpi.rank():
        from fem.errors import OutputError
        from fem.io.hdf5 import ResultsFile

        def write_state(self, *args, **kwargs):
            raise OutputError(f"cannot write {self.path}: injected failure on rank {fail}")

        ResultsFile.write_state = write_state
    options = [p for p in pairs if p.startswith("-")]
    code = 0
    for pair in pairs:
        if pair.startswith("-"):
            continue
        deck, out = pair.rsplit(":", 1)
        code = cli.main(["run", deck, "-o", out, *options]) or code
        if mpi.size() > 1:
            mpi.mpi4py_comm().Barrier()
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
