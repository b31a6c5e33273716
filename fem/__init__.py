"""fem: a finite-element flexible multibody solver on PETSc.

The package is organised as in ``DESIGN.md``: a deck builds an immutable :class:`~fem.model.Model`,
a :class:`~fem.dofs.DofMap` numbers its equations, analysis steps advance a
:class:`~fem.state.State` and results go to HDF5 with an XDMF file for ParaView.
"""

__version__ = "0.1.0"
