"""fem: a finite-element flexible multibody solver on PETSc.

A deck builds an immutable :class:`~fem.model.Model`, a :class:`~fem.dofs.DofMap` numbers its
equations, analysis steps advance a :class:`~fem.state.State` and results go to HDF5 with an XDMF
file for ParaView. The modules form eight import layers, from the base (errors, rotations, time
functions) through data, physics, system, numerics, procedures and io to the application (run,
validate, cli): docs/development.md lists them, and ``tests/test_layers.py``
fails on an import that runs up the layers.
"""

__version__ = "0.1.0"

# Under mpiexec/srun, one BLAS/OpenMP/numba thread per rank unless the user chose (fem.mpi);
# this must run before numpy is first imported.
from fem import mpi as _mpi  # noqa: E402

_mpi.pin_threads()
