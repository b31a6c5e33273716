"""Run the benchmarks: ``python -m benchmarks [name ...]`` (``make bench``).

Each benchmark prints its own table; ratios are against a baseline measured in the same run, so
they compare on any machine.
"""

import sys

from benchmarks import (
    beam_assembly,
    cms,
    dynamics,
    forces,
    linearize_memory,
    modal,
    mpi_large,
    mpi_solve,
    multibody,
    newton_share,
    output,
    pattern_memory,
    restart,
    shells,
    slender_arch,
    small_models,
    startup,
    study,
)

BENCHMARKS = {"beam_assembly": beam_assembly.main, "newton_share": newton_share.main,
              "dynamics": dynamics.main, "slender_arch": slender_arch.main,
              "multibody": multibody.main, "modal": modal.main, "startup": startup.main,
              "small_models": small_models.main, "shells": shells.main, "cms": cms.main,
              "linearize_memory": linearize_memory.main, "output": output.main,
              "restart": restart.main, "forces": forces.main, "study": study.main,
              "mpi_solve": mpi_solve.main, "pattern_memory": lambda: pattern_memory.main([]),
              # the million-unknown run is python -m benchmarks.mpi_large (20 minutes)
              "mpi_large": lambda: mpi_large.main(["--size", "5e4"])}


def main(argv: list[str]) -> int:
    names = argv or list(BENCHMARKS)
    unknown = [n for n in names if n not in BENCHMARKS]
    if unknown:
        print(f"unknown benchmark(s) {', '.join(unknown)}; the benchmarks are: "
              + ", ".join(BENCHMARKS), file=sys.stderr)
        return 2
    for name in names:
        BENCHMARKS[name]()
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
