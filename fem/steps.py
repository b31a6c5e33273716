"""What every analysis step shares: its PETSc objects, loads, prescribed values and diagnostics.

A step owns one matrix and one KSP, created once with the options prefix ``<step name>_`` and
destroyed by :meth:`StepBase.close` (steps are also context managers). Newton iterations only refill
the matrix values.
"""

from __future__ import annotations

import logging
import re

import numpy as np
from numpy.typing import NDArray

from fem import linalg
from fem.errors import ModelError

log = logging.getLogger(__name__)


def options_prefix(step_name: str) -> str:
    """PETSc options prefix of a step: its name with anything but ``[A-Za-z0-9_]`` replaced."""
    return re.sub(r"\W", "_", step_name) + "_"


class StepBase:
    """Base class of analysis steps.

    Parameters
    ----------
    name : step name (also the PETSc options prefix)
    system : :class:`~fem.system.System`
    loads : :class:`~fem.loads.StepLoads` of the step (loads and prescribed values)
    solver_options : PETSc options from the deck, pushed under the prefix
    """

    step_type = ""

    def __init__(self, name: str, system, loads, solver_options: dict | None = None):
        self.name = name
        self.system = system
        self.loads = loads
        self.solver_options = dict(solver_options or {})
        self.prefix = options_prefix(name)
        self.A = None
        self.ksp = None
        self._tangent_data = None
        self.warnings: list[str] = []

    def warn(self, message: str) -> None:
        """Record a warning of this step (shown in the run summary) and log it."""
        text = f"step '{self.name}': {message}"
        if text not in self.warnings:
            self.warnings.append(text)
            log.warning("%s", text)

    # --- PETSc objects ------------------------------------------------------------------------
    def open_solver(self) -> None:
        """Create the step's matrix and direct solver."""
        asm = self.system.assembler
        self.A = linalg.create_matrix(asm.indptr, asm.indices, prefix=self.prefix + "A_")
        self.ksp = linalg.direct_solver(self.A, self.prefix, self.solver_options)

    def close(self) -> None:
        """Destroy the PETSc objects."""
        for obj in (self.ksp, self.A):
            if obj is not None:
                obj.destroy()
        self.ksp = self.A = None
        linalg.release_options(self.prefix)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # --- vectors ------------------------------------------------------------------------------
    def external(self, state, t: float, which: str = "all") -> NDArray:
        """(n_active,) external forces at ``t`` (see :meth:`fem.loads.StepLoads.force`)."""
        return self.system.dofmap.from_nodal(self.loads.force(state, t, which))

    def free_to_nodal(self, du_free: NDArray) -> NDArray:
        """(n, nslots) nodal increment of a free-DOF vector (zero at fixed DOFs)."""
        dm = self.system.dofmap
        return dm.to_nodal(du_free)

    # --- prescribed values --------------------------------------------------------------------
    def apply_prescribed(self, trial, t: float) -> NDArray:
        """Move the prescribed DOFs of ``trial`` to their values at ``t``; returns the increment."""
        du = self.loads.prescribed_increment(trial, t)
        if du is not None:
            self.system.update(trial, du)
            return du
        return np.zeros((trial.n_nodes, self.system.model.nslots))

    # --- diagnostics --------------------------------------------------------------------------
    def mechanism_error(self) -> ModelError:
        """A :class:`ModelError` naming the node and DOF a singular tangent leaves unrestrained."""
        csr = self.system.assembler.to_scipy(self._tangent_data)
        dm, model = self.system.dofmap, self.system.model
        ids = model.node_ids
        diag = np.abs(csr.diagonal())
        scale = diag.max() if len(diag) else 1.0
        zero = np.flatnonzero(diag <= 1e-14 * scale)
        if len(zero):
            k = int(zero[0])
            more = f" (and {len(zero) - 1} more)" if len(zero) > 1 else ""
            dof = dm.describe(k, ids, model)
            return ModelError(f"the model is a mechanism: {dof} has no stiffness{more}; add a "
                              "support or an element that restrains it")
        phi = linalg.null_vector(csr)
        k = int(np.argmax(np.abs(phi)))
        moving = int(np.sum(np.abs(phi) > 0.5 * np.abs(phi[k])))
        return ModelError(f"the model is a mechanism: {dm.describe(k, ids, model)} is "
                          "unrestrained "
                          f"(a rigid-body or mechanism mode moves it"
                          + (f" and {moving - 1} other DOFs" if moving > 1 else "")
                          + "); check the supports and the connections")
