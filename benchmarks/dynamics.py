"""Energy-conserving time steps on 3D co-rotational beam models: steps per second.

Cubic lattices of beams (``common.space_frame``: 144, 882 and 9450 elements), clamped at the bottom,
the top face moving sideways at the start; a few steps of the energy-conserving scheme. Baseline in
the same run: one LU factorization (MUMPS) of the step's effective tangent; the ratio says how many
factorizations a step costs (Newton iterations, element evaluations and bookkeeping together).
"""

import time

import numpy as np

from benchmarks.common import space_frame
from fem import linalg
from fem.analysis.dynamic import DynamicSettings, DynamicStep
from fem.loads import StepLoads
from fem.model import VelocityField
from fem.system import System


def main():
    print("Energy-conserving dynamics of 3D co-rotational beams")
    print(f"{'elements':>9} {'steps/s':>9} {'iterations/step':>16} {'step / factorization':>21}")
    for n in (4, 7, 15):
        model, top = space_frame(n)
        E = len(model.groups[0])
        sysm = System(model)
        state = sysm.reference_state()
        X = model.X
        fld = VelocityField("sway", top, np.array([0.05, 0.02, 0.0]), np.zeros(3), np.zeros(3))
        steps = 5 if n < 15 else 3
        settings = DynamicSettings(time_step=0.01, duration=steps * 0.01, velocities=(fld,),
                                   tolerance=1e-9, output_interval=1.0)
        step = DynamicStep("dyn", sysm, StepLoads(model, (), ramp=False), settings)
        t = time.perf_counter()
        step.run(state, None)
        per_step = (time.perf_counter() - t) / steps
        # one factorization of the effective tangent, as the step's KSP does it
        integ = step.integrator
        integ.start_step(state)
        trial = state.copy()
        trial.t += 0.01
        _, _, data = integ.evaluate(state, trial, tangent=True)
        asm = sysm.assembler
        A = linalg.create_matrix(asm.indptr, asm.indices)
        linalg.fill_matrix(A, asm.indptr, asm.indices, data)
        ksp = linalg.direct_solver(A, "bench_")
        rhs = np.ones(sysm.n_free)
        t = time.perf_counter()
        linalg.solve(ksp, rhs)
        t_fact = time.perf_counter() - t
        ksp.destroy()
        A.destroy()
        linalg.release_options("bench_")
        its = step.history and step._stats["iterations"]
        del X
        print(f"{E:>9} {1 / per_step:>9.3g} {its:>16} {per_step / t_fact:>21.3g}")
