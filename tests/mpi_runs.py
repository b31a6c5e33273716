"""Run decks under ``mpiexec``, one interpreter per rank (tests/test_mpi.py).

``python tests/mpi_runs.py [-petsc_option ...] DECK:OUT.h5 ...``: ``fem run DECK -o OUT.h5
[-petsc_option ...]`` for each pair in turn,
in one interpreter (one MPI start, one numba load), through :func:`fem.cli.main`, with a barrier
after each run (a later deck may read a file an earlier one wrote, e.g. a superelement;
``FEM_TEST_CODES=1``: rank 0 then prints every rank's exit code of the run). Exits with the last
failure's exit code (0 if none).

``FEM_TEST_FAIL_RANK=r``: on rank ``r`` only, writing a step's end state fails with an
:class:`~fem.errors.OutputError` (a failure of one rank, as when rank 0's disk is full).

``FEM_TEST_NAN_ELEMENT=group:a,b``: the tangent of the element of group ``group`` joining the
nodes ``a`` and ``b`` (model indices, from 0) is NaN (:func:`poison`): under owner-computes
assembly only the ranks that evaluate that element see it (collective control, issue 31,
stage 6).
"""

from __future__ import annotations

import os
import sys

import numpy as np

from fem import cli, mpi


def poison(spec: str):
    """Make the tangent of one element NaN (module docstring); returns a function undoing it."""
    from fem.elements.base import ElementGroup

    name, nodes = spec.split(":")
    target = sorted(int(a) for a in nodes.split(","))
    undo = []

    def wrap(cls, original):
        def evaluate(self, state, tangent=True, *args, **kwargs):
            fe, ke = original(self, state, tangent, *args, **kwargs)
            if ke is not None and self.name == name:
                hit = np.all(np.sort(self.conn, axis=1) == target, axis=1)
                if hit.any():
                    ke = ke.copy()
                    ke[hit] = np.nan
            return fe, ke
        return evaluate

    classes, todo = [], [ElementGroup]
    while todo:
        cls = todo.pop()
        classes.append(cls)
        todo += cls.__subclasses__()
    for cls in classes:
        if "evaluate" in cls.__dict__:
            original = cls.__dict__["evaluate"]
            cls.evaluate = wrap(cls, original)
            undo.append((cls, original))

    def restore():
        for cls, original in undo:
            cls.evaluate = original
    return restore


def main(pairs: list[str]) -> int:
    spec = os.environ.get("FEM_TEST_NAN_ELEMENT")
    if spec:
        poison(spec)
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
        got = cli.main(["run", deck, "-o", out, *options])
        code = got or code
        codes = (mpi.mpi4py_comm().allgather(int(got or 0)) if mpi.size() > 1
                 else [int(got or 0)])
        if mpi.rank() == 0 and os.environ.get("FEM_TEST_CODES"):
            print(f"mpi_runs: {deck} exit codes {codes}", flush=True)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
