"""Modal steps: natural frequencies of beams against closed forms, the two eigen-solvers against
each other, invariants of the modes, a preloaded column (issue 11, item 1).

References: (beta L)^2 of the clamped-free and free-free Euler-Bernoulli beam (Blevins, Formulas
for natural frequency and mode shape, table 8-1: 3.5160, 22.0345, 61.6972; free-free 22.3733);
the compressed pinned beam omega_1 = pi^2 sqrt(1 - P / P_cr) and its 20-element values
(notes/lanczos_linearization.md, T8).
"""

import xml.etree.ElementTree as ET

import h5py
import numpy as np
import pytest
from helpers import deck_error, line_beam, solve, with_changes

from fem.errors import DeckError

CLAMPED_FREE = np.array([3.5160, 22.0345, 61.6972])
FREE_FREE_1 = 22.3733


def beam(dim, n=20, *, supports=True, **step):
    """A unit beam (EI = rho A = L = 1, EA = 1e4) with a modal step."""
    d = line_beam(dim, n, Iy=1.0, Iz=1.0, orientation=[0, 0, 1] if dim == 3 else None)
    d["sections"][0]["mass_per_length"] = 1.0
    d["sections"][0]["rotary_inertia_per_length"] = 1e-9 if dim == 2 else [1e-9, 1e-9, 1e-6]
    if supports:
        d["supports"] = [{"nodes": [1], "fixed": ["all"]}]
    d["steps"] = [{"name": "modes", "type": "modal", "mass": "consistent", **step}]
    return d


def distinct(values, rtol=1e-6):
    """The values with repeats (double modes of a round beam in 3D) removed."""
    out = []
    for v in np.sort(values):
        if not out or abs(v - out[-1]) > rtol * abs(v):
            out.append(v)
    return np.array(out)


@pytest.mark.parametrize("method", ["lanczos", "slepc"])
@pytest.mark.parametrize("dim", [2, 3])
def test_cantilever_frequencies_within_0_1_percent_with_20_elements(dim, method):
    step = solve(beam(dim, modes=6 if dim == 3 else 4, method=method))[3][0]
    w = distinct(step.frequencies())
    assert np.all(np.abs(w[:3] / CLAMPED_FREE - 1) < 1e-3)
    assert np.abs(w[:3] / CLAMPED_FREE - 1).max() < 2e-5      # (in fact: consistent mass)


@pytest.mark.parametrize("dim, rigid", [(2, 3), (3, 6)])
def test_free_free_beam_has_its_rigid_modes_then_22_3733(dim, rigid):
    step = solve(beam(dim, supports=False, modes=rigid + 2))[3][0]
    assert step.sigma < 0                     # K is singular: the automatic negative shift
    w2 = step.pairs.omega2
    assert np.all(np.abs(w2[:rigid]) < 1e-6 * w2[rigid])
    assert abs(np.sqrt(w2[rigid]) / FREE_FREE_1 - 1) < 1e-3


def grillage(nx: int, ny: int, **step) -> dict:
    """A rectangular grillage of nx x ny unit beams in the x-y plane, its edges pinned, with a
    modal step: ``6 (nx + 1) (ny + 1)`` DOFs; unequal sides, so no double modes."""
    ids = np.arange((nx + 1) * (ny + 1)).reshape(nx + 1, ny + 1) + 1
    xy = np.array([[i, j, 0.0] for i in range(nx + 1) for j in range(ny + 1)], dtype=float)
    conn = [[int(ids[i, j]), int(ids[i + 1, j])] for i in range(nx) for j in range(ny + 1)]
    conn += [[int(ids[i, j]), int(ids[i, j + 1])] for i in range(nx + 1) for j in range(ny)]
    edge = sorted({int(k) for k in np.concatenate([ids[0], ids[-1], ids[:, 0], ids[:, -1]])})
    return {"model": {"dim": 3},
            "materials": [{"name": "m", "E": 1000.0, "G": 400.0}],
            "sections": [{"name": "s", "A": 1.0, "Iy": 0.08, "Iz": 0.05, "J": 0.1,
                          "mass_per_length": 1.0,
                          "rotary_inertia_per_length": [0.08, 0.05, 0.13]}],
            "nodes": {"coordinates": xy.tolist()},
            "elements": [{"name": "grid", "type": "beam", "material": "m", "section": "s",
                          "connectivity": conn, "orientation": [0.0, 0.0, 1.0]}],
            "supports": [{"nodes": edge, "fixed": ["ux", "uy", "uz"]}],
            "steps": [{"name": "modes", "type": "modal", "mass": "consistent", **step}]}


def test_own_lanczos_and_slepc_agree_on_a_model_of_1000_unknowns():
    """The same 20 frequencies to 1e-8 and the same modes up to their sign."""
    pairs = {}
    for method in ("lanczos", "slepc"):
        dk, sysm, state, steps = solve(grillage(14, 13, modes=20, method=method))
        pairs[method] = steps[0]
        assert sysm.n_free > 1000
    a, b = pairs["lanczos"], pairs["slepc"]
    assert np.abs(a.pairs.omega2 / b.pairs.omega2 - 1).max() < 1e-8
    assert np.all(np.diff(a.pairs.omega2) > 1e-6 * a.pairs.omega2[1:])   # no double modes
    K, M = a.matrices(state)
    overlap = np.abs(np.einsum("ij,ij->j", a.pairs.vectors, M @ b.pairs.vectors))
    assert np.abs(overlap - 1).max() < 1e-8


@pytest.mark.parametrize("method", ["lanczos", "slepc"])
def test_modes_are_mass_orthonormal_and_solve_the_pencil(method):
    dk, sysm, state, steps = solve(beam(3, 30, modes=12, method=method))
    step = steps[0]
    K, M = step.matrices(state)
    X = step.pairs.vectors
    assert np.abs(X.T @ M @ X - np.eye(12)).max() < 1e-10
    # the Lanczos accepts a pair at a relative residual of 1e-8 of the shift-inverted operator:
    # the vectors are good to about that, their backward errors a few 1e-11
    assert step.pairs.backward_errors.max() < 1e-9
    R = K @ X - (M @ X) * step.pairs.omega2
    assert np.abs(R).max() < 1e-8 * abs(K).max()


def test_effective_masses_over_all_modes_add_up_to_the_rigid_motions_mass(tmp_path):
    """Parseval: with M-orthonormal modes, sum_i (phi_i^T M r)^2 = r^T M r for every rigid
    motion r; for the translations of a free body, its total mass. All 15 modes of a free 2D
    beam of 4 elements; read back from the results file."""
    d = beam(2, 4, supports=False, modes=15)
    d["sections"][0]["mass_per_length"] = 2.5
    h5 = str(tmp_path / "modes.h5")
    dk, sysm, state, steps = solve(d, h5)
    step = steps[0]
    K, M = step.matrices(state)
    R = step.rigid_motions()
    with h5py.File(h5, "r") as f:
        g = f["modes/modes"]
        eff = g["effective_mass"][()]
        assert g["shapes"].shape == (15, dk.model.n_nodes, 3)
        np.testing.assert_allclose(g["frequencies"][()] / (2 * np.pi), g["hertz"][()])
    total = eff.sum(axis=0)
    assert total[0] == pytest.approx(2.5, rel=1e-10) and total[1] == pytest.approx(2.5, rel=1e-10)
    rz = R[:, 5] @ (M[:R.shape[0], :R.shape[0]] @ R[:, 5])
    assert total[5] == pytest.approx(rz, rel=1e-10)
    assert np.all(total[2:5] == 0)


@pytest.mark.parametrize("ratio, reference", [(0.0, 9.869609), (0.25, 8.547333),
                                              (0.5, 6.978870), (0.9, 3.121056)])
def test_a_compressed_pinned_beam_vibrates_at_pi2_sqrt_1_minus_p_over_pcr(ratio, reference):
    """Notes T8 (EI = rho A = L = 1, 20 elements, consistent masses): a static step puts the
    axial force on, the modal step linearizes about it (geometric stiffness included)."""
    d = line_beam(2, 20, A=1e8)
    d["sections"][0]["mass_per_length"] = 1.0
    d["elements"][0]["rotary_inertia"] = False
    d["supports"] = [{"nodes": [1], "fixed": ["ux", "uy"]}, {"nodes": [2], "fixed": ["uy"]}]
    d["loads"] = [{"name": "P", "nodes": [2], "force": [-ratio * np.pi**2, 0.0]}]
    d["steps"] = [{"name": "load", "type": "static", "nonlinear": True},
                  {"name": "modes", "type": "modal", "modes": 2, "mass": "consistent"}]
    w1 = solve(d)[3][1].frequencies()[0]
    assert w1 == pytest.approx(reference, rel=1e-5)
    assert w1 == pytest.approx(np.pi**2 * np.sqrt(1 - ratio), rel=2e-5 if ratio < 0.9 else 1e-4)


def test_modes_xdmf_names_every_mode_by_its_frequency(tmp_path):
    h5 = str(tmp_path / "cantilever.h5")
    solve(beam(2, 10, modes=3), h5)
    from fem.io import files

    path = files.modes_xdmf_path(h5, "modes")
    root = ET.parse(path).getroot()
    grids = root.findall(".//Grid[@GridType='Collection']/Grid")
    with h5py.File(h5, "r") as f:
        hz = f["modes/modes/hertz"][()]
        for grid, value in zip(grids, hz, strict=True):
            assert grid.get("Name") == f"mode {grids.index(grid) + 1}: {value:.6g} Hz"
            assert float(grid.find("Time").get("Value")) == pytest.approx(value)
        for item in root.iter("DataItem"):
            name, ref = item.text.strip().split(":", 1)
            dims = tuple(int(x) for x in item.get("Dimensions").split())
            path, _, slab = ref.partition("|")
            data = f[path]
            if not slab:
                assert data.shape == dims
                continue
            start, _, count, full = (tuple(int(x) for x in p.split()) for p in slab.split(":"))
            assert data.shape == full and count[1:] == dims
            if path.endswith("displacement"):         # the slab is mode start[0]'s shape
                shape = f["modes/modes/shapes"][start[0]]
                np.testing.assert_array_equal(data[start[0]][:, :2], shape[:, :2])


@pytest.mark.parametrize("change, key", [
    ({"method": "arpack"}, "steps[0].method"),
    ({"mass": "diagonal"}, "steps[0].mass"),
    ({"modes": 0}, "steps[0].modes"),
    ({"loads": ["p"]}, "steps[0].loads"),
])
def test_bad_modal_keys_are_deck_errors(change, key):
    d = beam(2, 4, modes=2)
    d["loads"] = [{"name": "p", "nodes": [2], "force": [1.0, 0.0]}]
    d["steps"][0] = with_changes(d["steps"][0], change)
    err = deck_error(d)
    assert isinstance(err, DeckError) and key in str(err)


def test_a_model_without_mass_is_a_model_error_naming_the_step():
    from fem.errors import ModelError

    d = beam(2, 4, modes=2)
    del d["sections"][0]["mass_per_length"]
    del d["sections"][0]["rotary_inertia_per_length"]
    with pytest.raises(ModelError, match="step 'modes': the model has no mass"):
        solve(d)
