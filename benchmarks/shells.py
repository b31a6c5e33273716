"""Co-rotational shell triangles: evaluation and assembly rates, and a Newton iteration's split.

A square plate of ``2 n^2`` co-rotational OPT + DKT triangles (about 1e4 and 1e5), clamped along
one edge, under a uniform pressure: (a) the group's force + tangent per second at a deformed
state (``Shell.evaluate``), and with the assembly into the CSR values (``System.evaluate``);
(b) one nonlinear load increment, every linear solve timed (``linalg.solve_checked``: MUMPS LU,
refinement and its check), the rest being element evaluation, assembly and bookkeeping. The
shell issue asks for at most 20% outside the linear solve at 1e5 elements. (c) One results
frame's shell outputs (issue 26): the cell fields alone and with the nodal fields
(``System.frame_outputs``), against one force + tangent evaluation in the same run, and the
bytes they add to a frame.
"""

import time

import numpy as np

from benchmarks.common import best_of, timed_solves
from fem import _petsc
from fem.io.deck import from_dict
from fem.run import make_step
from fem.system import System

SIZES = (71, 224)          # 2 n^2 triangles: 10 082 and 100 352


def plate(n: int) -> dict:
    """The deck: unit square, E = 1e4, nu = 0.3, h = 0.01, clamped at x = 0, pressure 1e-4."""
    x = np.linspace(0, 1, n + 1)
    XX, YY = np.meshgrid(x, x)
    coords = np.column_stack([XX.ravel(), YY.ravel(), np.zeros(XX.size)])
    k = (np.arange(n)[None, :] + (n + 1) * np.arange(n)[:, None]).ravel()
    tri = np.concatenate([np.column_stack([k, k + 1, k + n + 2]),
                          np.column_stack([k, k + n + 2, k + n + 1])]) + 1
    clamped = np.flatnonzero(np.isclose(coords[:, 0], 0)) + 1
    return {"model": {"dim": 3},
            "materials": [{"name": "m", "E": 1e4, "nu": 0.3}],
            "nodes": {"coordinates": coords.tolist()},
            "elements": [{"name": "plate", "type": "shell", "formulation": "corotational",
                          "material": "m", "thickness": 0.01, "connectivity": tri.tolist()}],
            "supports": [{"nodes": clamped.tolist(), "fixed": ["all"]}],
            "loads": [{"name": "p", "elements": "plate", "pressure": 1e-4}],
            "steps": [{"name": "s", "type": "static", "nonlinear": True, "increments": 1,
                       "tolerance": 1e-9}]}


def rates(dk) -> tuple[float, float]:
    """Elements per second: group force + tangent, and with the assembly."""
    sysm = System(dk.model)
    state = sysm.reference_state()
    rng = np.random.default_rng(0)
    state.u[:, 2] = 1e-3 * rng.standard_normal(len(state.u))
    group = dk.model.groups[0]
    E = len(group)
    return E / best_of(lambda: group.evaluate(state)), E / best_of(lambda: sysm.evaluate(state))


def newton_split(dk) -> tuple[int, float, float]:
    """Newton iterations, seconds per iteration and the share inside the linear solves."""
    sysm = System(dk.model)
    state = sysm.reference_state()
    with timed_solves() as spent:
        step = make_step(dk.steps[0], sysm, dk)
        t = time.perf_counter()
        step.run(state, None)
        total = time.perf_counter() - t
    return spent[1], total / spent[1], spent[0] / total


def frame_cost(dk) -> tuple[float, float, float, int, int]:
    """Seconds per frame: cell outputs, cells + nodal fields, a force + tangent; bytes written."""
    sysm = System(dk.model)
    state = sysm.reference_state()
    rng = np.random.default_rng(0)
    state.u[:, 2] = 1e-3 * rng.standard_normal(len(state.u))
    cells = best_of(lambda: sysm.frame_outputs(state, nodal=False))
    both = best_of(lambda: sysm.frame_outputs(state))
    evaluate = best_of(lambda: sysm.evaluate(state))
    outs, nodal = sysm.frame_outputs(state)
    return (cells, both, evaluate, sum(v.nbytes for g in outs.values() for v in g.values()),
            sum(v.nbytes for v in nodal.values()))


def main():
    _petsc.init()
    print("Co-rotational shell triangles (OPT + DKT): elements per second, Newton split")
    print(f"{'elements':>9} {'evaluate/s':>11} {'+assembly/s':>12} {'iterations':>10} "
          f"{'s/iteration':>12} {'solve':>7} {'outside':>8}")
    for n in SIZES:
        dk = from_dict(plate(n))
        ev, asm = rates(dk)
        its, per, share = newton_split(dk)
        print(f"{2 * n * n:>9} {ev:>11.3g} {asm:>12.3g} {its:>10} {per:>12.3g} {share:>7.0%} "
              f"{1 - share:>8.0%}")
    print("One results frame's shell outputs (seconds; evaluate = force + tangent, assembled)")
    print(f"{'elements':>9} {'cells':>8} {'+nodal':>8} {'evaluate':>9} {'ratio':>6} "
          f"{'cell MB':>8} {'nodal MB':>9}")
    for n in SIZES:
        cells, both, ev, cb, nb = frame_cost(from_dict(plate(n)))
        print(f"{2 * n * n:>9} {cells:>8.3g} {both:>8.3g} {ev:>9.3g} {both / ev:>6.2f} "
              f"{cb / 1e6:>8.2f} {nb / 1e6:>9.2f}")


if __name__ == "__main__":
    main()
