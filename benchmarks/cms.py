"""Component mode synthesis of a 1e5-DOF component: reduction time, reduced eigen time, accuracy.

The component is the cubic beam lattice of ``benchmarks/modal.py`` (``common.space_frame``,
about 1e4 and 1e5 unknowns, clamped at the bottom, consistent mass) with its interface at the
four top corners (24 boundary unknowns). Craig-Bampton (:func:`fem.cms.craig_bampton`: one
factorization of ``K_ii``, the constraint modes as one block solve, ``MODES`` fixed-interface modes
by the project's Lanczos) against the full model's first ``COUNT`` modes by the same Lanczos
(factorization included), in one run. The reduced model's eigen-solve is dense (``scipy.linalg.
eigh`` on ``24 + MODES`` unknowns). Printed: the times, their ratios, and the largest relative
error of the reduced model's frequencies below half the component's cut-off (Ritz: never below
the full model's).

``--mechanism``: the dynamics speed-up of a mechanism with a superelement (issue 13). Meijaard's
slider-crank (``cases/slider_crank_superelement``: the crank driven at 124.8 rad/s, the rod pinned
to it and to a massless slider) with the rod meshed by ``4 d`` Timoshenko beams of lumped inertia
(8 to 4096), once as those beams (co-rotational, the full model) and once reduced by that case's
``rod.toml`` (Craig-Bampton, its modes, lumped mass) to a planar co-rotational superelement; the
same time step, ``CRANK_STEPS`` steps of the energy-conserving scheme (past the first maximum of
the rod's deflection). Printed per mesh: each model's steps per second over its time loop (the
first step to the last, by the step's callback; the reduction is timed apart), the ratio, and the
slider's position at the end in both (a sameness check: the two models differ by the reduction's
error).

``--spin3d``: the same for a spatial spin-up (issue 33): Kane's beam in 3D (10 m, the data of
``cases/spin_up_kane``, EI about both axes) driven about z from rest by the spin-up law of
``cases/spin_up_kane`` (6 rad/s over 15 s), meshed by 16, 128 and 1024 co-rotational beams of
lumped inertia, once as those beams and once as one 3D co-rotational superelement (Craig-Bampton
with the root as the interface, 4 modes, ``modal_derivatives = true``: stiffened), the first
``SPIN_STEPS`` energy-conserving steps of 0.01 s. Printed as for the slider-crank (steps per
second over the time loop, the reduction timed apart); the accuracy of the superelement on this
spin-up is tests/test_superelement_stiffening.py's.
"""

import copy
import sys
import tempfile
import time
import tomllib
from pathlib import Path

import numpy as np
import scipy.linalg as sla

from benchmarks.common import space_frame
from benchmarks.modal import step
from fem.analysis.modal import TOLERANCE
from fem.cms.component import node_dofs
from fem.cms.craig_bampton import craig_bampton
from fem.solvers import eigen
from fem.solvers.eigen.lanczos import lanczos

SIZES = (12, 26)                   # about 1e4 and 1e5 unknowns
MODES = 40                         # fixed-interface modes kept
COUNT = 20                         # full-model modes for the comparison


def measure(n: int):
    model, _ = space_frame(n)
    sysm, modal = step(model, "lanczos")
    K, M = modal.matrices(sysm.reference_state())
    top = model.X[:, 2] == n - 1
    corners = top & np.isin(model.X[:, 0], (0, n - 1)) & np.isin(model.X[:, 1], (0, n - 1))
    boundary, _ = node_dofs(sysm, model.node_ids[corners])
    t = time.perf_counter()
    cb = craig_bampton(K, M, boundary, modes=MODES, name="bench")
    t_reduce = time.perf_counter() - t
    t = time.perf_counter()
    w2_r = sla.eigh(cb.K, cb.M, eigvals_only=True)
    t_reduced = time.perf_counter() - t
    t = time.perf_counter()
    solve = eigen.Factorization(K, modal.prefix)
    full = lanczos(K, M, COUNT, 0.0, solve, tol=TOLERANCE)
    t_full = time.perf_counter() - t
    solve.close()
    keep = np.sqrt(full.omega2) < 0.5 * cb.cutoff
    err = w2_r[:COUNT][keep] / full.omega2[keep] - 1
    return K.shape[0], t_reduce, t_reduced, t_full, int(keep.sum()), float(np.sqrt(
        1 + err.max()) - 1), bool((err >= -1e-9).all())


CASES = Path(__file__).resolve().parents[1] / "cases"
CRANK_STEPS = 640                  # 1e-5 s each: past the first maximum (crank angle 0.8 rad)
DIVISIONS = (2, 32, 256, 1024)      # beams per quarter of the rod: 8 to 4096 beams


def _load(path: Path) -> dict:
    with open(path, "rb") as fh:
        return tomllib.load(fh)


def rod_nodes(divisions: int):
    """Ids and coordinates of the rod's ``4 divisions + 1`` nodes (ids 2, 3, ...; 2 at the pin)."""
    pin, slider = 0.1524, 0.4572
    n = 4 * divisions
    ids = list(range(2, n + 3))
    x = pin + (slider - pin) * np.arange(n + 1) / n
    return ids, [[float(v), 0.0] for v in x]


def mechanism_decks(divisions: int, folder: str) -> tuple[dict, dict, dict]:
    """The full-beam deck, the rod's reduction deck and the superelement deck, as dicts."""
    case = CASES / "slider_crank_superelement"
    ids, xy = rod_nodes(divisions)
    last = ids[-1]
    conn = [[a, b] for a, b in zip(ids[:-1], ids[1:])]
    rod = _load(case / "rod.toml")
    rod["nodes"] = {"ids": ids, "coordinates": xy}
    rod["elements"][0].update(connectivity=conn)
    rod["elements"][0].pop("divisions", None)
    rod["steps"][0].update(interface=[2, last], file=str(Path(folder) / "rod.h5"))
    sup = _load(case / "deck.toml")
    sup["nodes"] = {"ids": [1, 2, last], "coordinates": [[0.0762, 0.0], xy[0], xy[-1]]}
    sup["elements"][0]["file"] = str(Path(folder) / "rod.h5")
    full = copy.deepcopy(sup)
    full["nodes"] = {"ids": [1] + ids, "coordinates": [[0.0762, 0.0]] + xy}
    beams = {k: v for k, v in rod["elements"][0].items() if k != "divisions"}
    full["materials"], full["sections"] = rod["materials"], rod["sections"]
    full["elements"] = [{**beams, "formulation": "corotational", "inertia": "lumped"}]
    for d in (sup, full):
        for j in d["joints"]:
            if j["name"] == "slider":
                j["ground"] = [last]
        for v in d["velocities"]:
            if v["name"] == "rod":
                v["nodes"] = ids if d is full else [2, last]
        d["steps"] = [{**d["steps"][0], "duration": CRANK_STEPS * d["steps"][0]["time_step"],
                       "output_interval": CRANK_STEPS * d["steps"][0]["time_step"]}]
    return full, rod, sup


def timed_run(deck: dict, folder: str, slider: int) -> tuple[float, float]:
    """Steps per second of the deck's dynamic step's time loop, and node ``slider``'s final x."""
    from fem.io.deck import from_dict
    from fem.run import make_step
    from fem.system import System

    dk = from_dict(deck, base_dir=folder)
    sysm = System(dk.model)
    state = sysm.reference_state()
    step = make_step(dk.steps[0], sysm, dk, dk.output["every"])
    stamps = []
    step.on_step = lambda s: stamps.append(time.perf_counter())
    state = step.run(state, None)
    k = int(np.flatnonzero(dk.model.node_ids == slider)[0])
    return (len(stamps) - 1) / (stamps[-1] - stamps[0]), float(dk.model.X[k, 0] + state.u[k, 0])


def mechanism():
    """The slider-crank with its rod as beams and as a superelement (module docstring)."""
    from fem.io.deck import from_dict
    from fem.run import run

    print(f"slider-crank, {CRANK_STEPS} energy-conserving steps of 1e-5 s: the rod as beams or as "
          "a co-rotational Craig-Bampton superelement")
    print(f"{'beams':>6} {'reduce (s)':>10} {'beams steps/s':>13} {'superelement steps/s':>20} "
          f"{'speed-up':>8} {'slider x, beams / superelement':>31}")
    for d in DIVISIONS:
        with tempfile.TemporaryDirectory() as folder:
            full, rod, sup = mechanism_decks(d, folder)
            t = time.perf_counter()
            run(from_dict(rod, base_dir=folder), str(Path(folder) / "rod_reduce.h5"))
            reduce = time.perf_counter() - t
            last = rod_nodes(d)[0][-1]
            rate_full, x_full = timed_run(full, folder, last)
            rate_sup, x_sup = timed_run(sup, folder, last)
        print(f"{4 * d:>6} {reduce:>10.2f} {rate_full:>13.4g} {rate_sup:>20.4g} "
              f"{rate_sup / rate_full:>8.3g} {x_full:>15.7f} / {x_sup:.7f}")


SPIN_STEPS = 40
SPIN_BEAMS = (16, 128, 1024)


def kane_beam(elements: int) -> dict:
    """Kane, Ryan & Banerjee's beam in 3D (notes/meijaard.md 2.4 case 2; cases/spin_up_kane's
    data): 10 m along x, EA 2.8e7, EI 14000 about both axes, GJ 1e4, rho A 1.2, rotary inertia
    rho I; co-rotational beams with the lumped inertia a co-rotational superelement needs
    (tests/test_superelement_stiffening.py uses it too)."""
    return {"model": {"dim": 3, "units": "m, kg, s, N"},
            "materials": [{"name": "kane", "E": 2.8e7, "G": 1.0e7}],
            "sections": [{"name": "s", "A": 1.0, "Iy": 5e-4, "Iz": 5e-4, "J": 1e-3,
                          "mass_per_length": 1.2,
                          "rotary_inertia_per_length": [1.2e-3, 6e-4, 6e-4]}],
            "nodes": {"ids": [1, 2], "coordinates": [[0.0, 0.0, 0.0], [10.0, 0.0, 0.0]]},
            "elements": [{"name": "beam", "type": "beam", "material": "kane", "section": "s",
                          "formulation": "corotational", "inertia": "lumped",
                          "connectivity": [[1, 2]], "divisions": elements,
                          "orientation": [0.0, 1.0, 0.0]}]}


def kane_decks(beams: int) -> tuple[dict, dict, dict]:
    """The full-beam deck, the beam's reduction deck and the superelement deck (``--spin3d``)."""
    model = kane_beam(beams)
    rod = copy.deepcopy(model)
    rod["steps"] = [{"name": "reduce", "type": "cms_reduce", "interface": [1], "mass": "lumped",
                     "modes": 4, "modal_derivatives": True, "file": "beam.h5"}]
    full = copy.deepcopy(model)
    full["functions"] = [{"name": "psi", "type": "spin_up", "rate": 6.0, "t0": 0.0,
                          "t1": 15.0}]
    full["joints"] = [{"name": "hub", "type": "revolute", "ground": [1], "drive": "psi",
                       "points": [[0.0, 0.0, 0.0]], "axis": [0.0, 0.0, 1.0]}]
    full["steps"] = [{"name": "spin", "type": "dynamic", "integrator": "energy_conserving",
                      "time_step": 0.01, "duration": 0.01 * SPIN_STEPS}]
    sup = copy.deepcopy(full)
    sup["nodes"] = {"ids": [1], "coordinates": [[0.0, 0.0, 0.0]]}
    sup["elements"] = [{"name": "se", "type": "superelement", "file": "beam.h5",
                        "formulation": "corotational"}]
    return full, rod, sup


def spin3d():
    """Kane's beam in 3D as beams and as a stiffened superelement (module docstring)."""
    from fem.io.deck import from_dict
    from fem.run import run

    print(f"Kane's beam in 3D, spin-up from rest ({SPIN_STEPS} energy-conserving steps of 0.01 "
          "s): as beams or as a stiffened 3D co-rotational superelement (4 modes)")
    print(f"{'beams':>6} {'reduce (s)':>10} {'beams steps/s':>13} {'superelement steps/s':>20} "
          f"{'speed-up':>8}")
    for beams in SPIN_BEAMS:
        with tempfile.TemporaryDirectory() as folder:
            full, rod, sup = kane_decks(beams)
            t = time.perf_counter()
            run(from_dict(rod, base_dir=folder), str(Path(folder) / "reduce.h5"))
            reduce = time.perf_counter() - t
            rate_full = timed_run(full, folder, 1)[0]
            rate_sup = timed_run(sup, folder, 1)[0]
        print(f"{beams:>6} {reduce:>10.2f} {rate_full:>13.4g} {rate_sup:>20.4g} "
              f"{rate_sup / rate_full:>8.3g}")


def main(argv=()):
    if "--mechanism" in argv:
        mechanism()
        return
    if "--spin3d" in argv:
        spin3d()
        return
    print(f"Craig-Bampton of a beam lattice: 24 interface unknowns, {MODES} fixed-interface modes; "
          f"the full model's first {COUNT} modes for comparison (s)")
    print(f"{'DOFs':>8} {'reduce':>8} {'reduced eig':>11} {'full eig':>9} {'full/reduce':>11} "
          f"{'full/reduced eig':>16} {'modes<cut/2':>11} {'max error':>9} {'Ritz':>5}")
    for n in SIZES:
        dofs, tr, te, tf, k, err, ritz = measure(n)
        print(f"{dofs:>8} {tr:>8.2f} {te:>11.4f} {tf:>9.2f} {tf / tr:>11.2f} {tf / te:>16.0f} "
              f"{k:>11} {err:>9.1e} {'yes' if ritz else 'NO':>5}")


if __name__ == "__main__":
    main(sys.argv[1:])
