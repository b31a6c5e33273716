"""PETSc layer: the objects a step solves with, and its checked solves (DESIGN.md, numerics).

* :mod:`fem.linalg.objects`: Mat from the assembler's CSR pattern, direct solvers (the LU
  package by size), the options database (deck options pushed under a step's prefix);
* :mod:`fem.linalg.checked`: solves checked by their backward error and refined, null pivots,
  the accuracy of a result and the determinant's sign.

Both are used through this package (``from fem import linalg; linalg.solve(ksp, b)``).
"""

from fem.linalg.checked import (
    MAX_REFINEMENTS,
    MUMPS_MAX_RELAXATION,
    MUMPS_WORKSPACE,
    POOR_BACKWARD_ERROR,
    REFINE_ABOVE,
    NonFiniteError,
    SolveReport,
    accuracy,
    determinant_sign,
    refine,
    solve,
    solve_block,
    solve_checked,
)
from fem.linalg.objects import (
    CHAIN_ENTRIES,
    EIGEN_FAMILIES,
    LU_PACKAGES,
    NULL_PIVOT,
    SMALL_CHAIN_LU,
    SMALL_LU,
    SMALL_LU_ORDERING,
    RowMap,
    SingularMatrixError,
    best_lu_package,
    create_matrix,
    direct_solver,
    external_packages,
    fill_matrix,
    from_options,
    lu_package,
    matrix_from_scipy,
    petsc_name,
    push_options,
    release_options,
)

__all__ = [
    "CHAIN_ENTRIES", "EIGEN_FAMILIES", "LU_PACKAGES", "MAX_REFINEMENTS",
    "MUMPS_MAX_RELAXATION", "MUMPS_WORKSPACE", "NULL_PIVOT", "POOR_BACKWARD_ERROR",
    "REFINE_ABOVE", "RowMap", "SMALL_CHAIN_LU", "SMALL_LU", "SMALL_LU_ORDERING", "NonFiniteError",
    "SingularMatrixError", "SolveReport", "accuracy", "best_lu_package", "create_matrix",
    "determinant_sign", "direct_solver", "external_packages", "fill_matrix", "from_options",
    "lu_package", "matrix_from_scipy", "petsc_name", "push_options", "refine", "release_options",
    "solve", "solve_block", "solve_checked",
]
