"""Share of a Newton iteration spent outside the linear solve (3D co-rotational beams).

A cubic lattice of co-rotational beams (``common.space_frame``), clamped at the bottom, its top
face loaded sideways and twisted, one nonlinear load increment; every linear solve (MUMPS LU,
numerical factorization, refinement and its accuracy check included: ``linalg.solve_checked``,
what every Newton iteration calls) is timed; the rest of the step is element evaluation,
assembly and bookkeeping. The baseline is the linear solve itself. Each group is evaluated once
before the timed step (loading the compiled kernel and preparing its data, once per run).

``--tower``: the speed issue's 1e6-DOF point, a tower of 3 x 3 nodes a level and 18 519 levels
(999 972 unknowns, 3.9e5 elements), loaded and twisted at its top. Its factorization's fronts stay
at a level's 54 unknowns, so the solve is cheap and the element work shows (a tower of 6 x 6 nodes a
level factors for minutes).
"""

import sys
import time

import numpy as np

from benchmarks.common import space_frame, timed_solves
from fem.analysis.static import StaticSettings, StaticStep
from fem.loads import StepLoads
from fem.model import NodalLoad
from fem.system import System

SIZES = (7, 15, 32)                 # lattice edges: about 9e2, 9e3 and 9.5e4 elements
TOWER = (3, 18519)                  # 3 x 3 nodes a level, 18 519 levels: 999 972 unknowns


def main(argv=()):
    print("Newton iterations on 3D co-rotational beams: time per iteration and its split")
    print(f"{'elements':>9} {'iterations':>10} {'s/iteration':>12} {'solve':>8} {'outside':>8}")
    for size in ([TOWER] if "--tower" in argv else [(n, None) for n in SIZES]):
        model, top = space_frame(*size)
        E = len(model.groups[0])
        # the cubes' load on the tower would bend it by about 1e3 times its height; scaled so
        # that it bends by a fraction of it (6 Newton iterations, each with a bent correction):
        # much less and the load is below the residual's round-off floor (the tower's
        # coordinates reach 1.85e4), so Newton "converges" at once on noise
        scale = 1.0 if size[1] is None else 2e-6
        load = NodalLoad("top", top, scale * np.array([2.0, 1.0, 0.0]),
                         scale * np.array([0.0, 0.0, 0.5]))
        model = model.with_changes(loads=(load,))
        sysm = System(model)
        state = sysm.reference_state()
        sysm.evaluate(state, None, True)    # warm-up, as in any run after its first step: the
        #                                     kernels loaded (numba), the group data and the
        #                                     assembly's gather orders prepared
        with timed_solves() as spent:
            settings = StaticSettings(nonlinear=True, increments=1, tolerance=1e-9)
            step = StaticStep("bench", sysm, StepLoads(model, (load,), ramp=True), settings)
            t = time.perf_counter()
            step.run(state, None)
            total = time.perf_counter() - t
        its = spent[1]                      # one checked solve per Newton iteration
        print(f"{E:>9} {its:>10} {total / its:>12.3g} {spent[0] / total:>8.0%} "
              f"{1 - spent[0] / total:>8.0%}")


if __name__ == "__main__":
    main(sys.argv[1:])
