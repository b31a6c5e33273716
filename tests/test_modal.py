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
from results_checks import read_xdmf

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
    w2 = step.pairs.values
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
    assert np.abs(a.pairs.values / b.pairs.values - 1).max() < 1e-8
    assert np.all(np.diff(a.pairs.values) > 1e-6 * a.pairs.values[1:])   # no double modes
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
    assert step.pairs.residuals.max() < 1e-9
    R = K @ X - (M @ X) * step.pairs.values
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
    """``<out>_<step>_modes.xdmf``: each mode a frame named by its frequency at "time" its
    frequency in Hz; read with meshio, its displacement is the mode's shape and its ``mode``
    and ``frequency`` (point data at the first point) its number and frequency."""
    h5 = str(tmp_path / "cantilever.h5")
    solve(beam(2, 10, modes=3), h5)
    from fem.io import files

    path = files.modes_xdmf_path(h5, "modes")
    root = ET.parse(path).getroot()
    grids = root.findall(".//Grid[@GridType='Collection']/Grid")
    _, _, frames = read_xdmf(path)
    with h5py.File(h5, "r") as f:
        hz = f["modes/modes/hertz"][()]
        shapes = f["modes/modes/shapes"][()]
    assert len(grids) == len(frames) == len(hz) == 3
    for i, (grid, (t, point, _)) in enumerate(zip(grids, frames, strict=True)):
        assert grid.get("Name") == f"mode {i + 1}: {hz[i]:.6g} Hz"
        assert t == hz[i]
        np.testing.assert_array_equal(point["displacement"][:, :2], shapes[i][:, :2])
        assert point["mode"][0] == i + 1 and point["frequency"][0] == hz[i]
        assert np.all(np.isnan(point["frequency"][1:]))


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


def pencil(n, *, massless=0, seed=3):
    """A random sparse SPD stiffness (a chain with random springs and extra couplings) and a
    diagonal mass, zero on the last ``massless`` DOFs; its finite eigenvalues by LAPACK."""
    import scipy.linalg as sla
    import scipy.sparse as sp

    rng = np.random.default_rng(seed)
    k = rng.uniform(1.0, 3.0, n + 1)
    K = sp.diags([k[:-1] + k[1:], -k[1:-1], -k[1:-1]], [0, 1, -1]).tolil()
    for _ in range(n):                                       # couplings off the band
        i, j = rng.integers(0, n, 2)
        c = rng.uniform(0.0, 0.5)
        K[i, i] += c
        K[j, j] += c
        K[i, j] -= c
        K[j, i] -= c
    K = K.tocsr()
    m = rng.uniform(0.5, 2.0, n)
    m[n - massless:] = 0.0
    M = sp.diags(m).tocsr()
    Kd = K.toarray()
    if massless:                  # condense the massless DOFs: K_aa - K_ab K_bb^-1 K_ba
        a, b = slice(0, n - massless), slice(n - massless, n)
        Kd = Kd[a, a] - Kd[a, b] @ np.linalg.solve(Kd[b, b], Kd[b, a])
    w = sla.eigh(Kd, np.diag(m[:n - massless]), eigvals_only=True)
    return K, M, w


@pytest.mark.parametrize("block, max_dim", [(1, None), (3, None), (6, None), (2, 20), (1, 16)])
@pytest.mark.parametrize("massless", [0, 40])
def test_lanczos_finds_the_lowest_pairs_of_a_pencil_with_and_without_restarts(block, max_dim,
                                                                             massless):
    """The lowest 8 eigenvalues of a 300-DOF pencil against LAPACK, single vectors and blocks,
    with thick restarts (a basis of 16 or 20 vectors for 8 pairs) and with 40 massless DOFs
    (infinite eigenvalues that must not appear); M-orthonormal vectors solving the pencil."""
    import scipy.sparse.linalg as spla

    from fem.solvers.eigen.lanczos import lanczos

    K, M, w = pencil(300, massless=massless)
    lu = spla.splu(K.tocsc())
    pairs = lanczos(K, M, 8, 0.0, lambda B: lu.solve(np.asarray(B)), block=block,
                    max_dim=max_dim, tol=1e-10)
    # LAPACK's eigenvalues are good to a few eps times the largest (the lowest here is 1e-4 of
    # it): an absolute part of 1e-13 of the largest
    np.testing.assert_allclose(pairs.omega2, w[:8], rtol=1e-12, atol=1e-13 * w.max())
    X = pairs.vectors
    assert np.abs(X.T @ (M @ X) - np.eye(8)).max() < 1e-10
    assert pairs.backward_errors.max() < 1e-10


def test_lanczos_with_a_block_wider_than_what_is_left_finds_every_pair():
    """15 DOFs, blocks of 12, all 15 pairs: the second block has only 3 new directions (rank
    revealed by the Gram matrix of the block), and the whole space ends the iteration."""
    import scipy.sparse.linalg as spla

    from fem.solvers.eigen.lanczos import lanczos

    K, M, w = pencil(15)
    lu = spla.splu(K.tocsc())
    pairs = lanczos(K, M, 15, 0.0, lambda B: lu.solve(np.asarray(B)), block=12, tol=1e-10)
    np.testing.assert_allclose(pairs.omega2, w, rtol=1e-12, atol=1e-13 * w.max())
    assert np.abs(pairs.vectors.T @ (M @ pairs.vectors) - np.eye(15)).max() < 1e-10


def test_the_whole_spectrum_of_a_free_beam_comes_back_at_round_off():
    """All 15 pairs of a free 2D beam of 4 elements, at the modal step's own shift (rigid modes:
    sigma < 0, OP's eigenvalues spread over 4e6): the Rayleigh-Ritz step on K and M leaves
    backward errors of round-off on every pair (1e-10 on the high ones from H's Ritz values)."""
    import scipy.linalg as sla
    import scipy.sparse.linalg as spla

    from fem.solvers.eigen.lanczos import lanczos

    d = beam(2, 4, supports=False, modes=15)
    _, sysm, state, steps = solve(d)
    K, M = steps[0].matrices(state)
    sigma = -1e-6 * float((K.diagonal() / M.diagonal()).max())
    lu = spla.splu((K - sigma * M).tocsc())
    pairs = lanczos(K, M, 15, sigma, lambda B: lu.solve(np.asarray(B)), tol=1e-10)
    assert pairs.backward_errors.max() < 1e-14
    w = sla.eigh(K.toarray(), M.toarray(), eigvals_only=True)
    np.testing.assert_allclose(pairs.omega2, w, rtol=1e-12, atol=1e-12 * w.max())
    X = pairs.vectors
    assert np.abs(X.T @ (M @ X) - np.eye(15)).max() < 1e-12


@pytest.mark.parametrize("max_dim", [None, 33])
def test_massless_dofs_do_not_pollute_pairs_that_span_most_of_the_range(max_dim):
    """24 pairs of a pencil with 44 finite eigenvalues (2 massless DOFs of 46), single vectors:
    the basis's massless components, which the M-inner product does not see, grow along the
    recurrence (1e-11 to 0.5 of the vectors from the 22nd to the 40th here); unpurified, the
    whole range spanned gave backward errors of 3e-4 (a convergence failure), and a restarted
    basis of 33 returned Rayleigh quotients of 1e25 with small backward errors. Against LAPACK
    on the condensed pencil."""
    import scipy.sparse.linalg as spla

    from fem.solvers.eigen.lanczos import lanczos

    K, M, w = pencil(46, massless=2, seed=2293)
    lu = spla.splu(K.tocsc())
    pairs = lanczos(K, M, 24, 0.0, lambda B: lu.solve(np.asarray(B)), block=1,
                    max_dim=max_dim, tol=1e-10)
    np.testing.assert_allclose(pairs.omega2, w[:24], rtol=1e-12, atol=1e-13 * w.max())
    X = pairs.vectors
    assert np.abs((K @ X)[-2:]).max() < 1e-12 * abs(K).max() * np.abs(X).max()   # statics
    assert pairs.backward_errors.max() < 1e-10


def test_a_tight_basis_restarts_with_room_for_two_blocks():
    """12 pairs, blocks of 2, a basis of 17 asked for: restarted with one new block a cycle the
    residuals stalled at 1e-6 for 60 restarts; the basis is at least count + 3 blocks (18), and
    a restart keeps the wanted pairs and a block more: converged within the 60 restarts."""
    import scipy.sparse.linalg as spla

    from fem.solvers.eigen.lanczos import lanczos

    K, M, w = pencil(304, massless=1, seed=145)
    lu = spla.splu(K.tocsc())
    pairs = lanczos(K, M, 12, 0.0, lambda B: lu.solve(np.asarray(B)), block=2, max_dim=17,
                    tol=1e-10, restarts=60)
    np.testing.assert_allclose(pairs.omega2, w[:12], rtol=1e-12, atol=1e-13 * w.max())


def test_lanczos_finds_a_double_eigenvalue_twice():
    """Two identical uncoupled chains: every eigenvalue double (notes T3's case 2, here
    symmetric); a block of 2 or more finds both copies of each."""
    import scipy.sparse as sp
    import scipy.sparse.linalg as spla

    from fem.solvers.eigen.lanczos import lanczos

    K1, M1, w1 = pencil(60, seed=5)
    K, M = sp.block_diag([K1, K1]).tocsr(), sp.block_diag([M1, M1]).tocsr()
    lu = spla.splu(K.tocsc())
    pairs = lanczos(K, M, 6, 0.0, lambda B: lu.solve(np.asarray(B)), block=3, tol=1e-10)
    np.testing.assert_allclose(pairs.omega2, np.repeat(w1[:3], 2), rtol=1e-12,
                               atol=1e-13 * w1.max())


def test_vibration_xdmf_animates_every_mode_through_one_period(tmp_path):
    """``<out>_<step>_vibration.xdmf``: mode i (from 1) at times i + j/20, named by its
    frequency, each frame's displacement (single precision) sin(2 pi j / 20) times the shape
    scaled to a unit peak translation; read with meshio."""
    from fem.io import files
    from fem.io.paraview_modes import VIBRATION_FRAMES as F

    h5 = str(tmp_path / "cantilever.h5")
    solve(beam(2, 10, modes=3), h5)
    path = files.vibration_xdmf_path(h5, "modes")
    root = ET.parse(path).getroot()
    grids = root.findall(".//Grid[@Name='vibration']/Grid")
    assert len(grids) == 3 * F
    _, _, frames = read_xdmf(path)
    with h5py.File(h5, "r") as f:
        hz = f["modes/modes/hertz"][()]
        shapes = f["modes/modes/shapes"][()]
    for k, (grid, (t, point, _)) in enumerate(zip(grids, frames, strict=True)):
        i, j = divmod(k, F)
        assert grid.get("Name") == f"mode {i + 1}: {hz[i]:.6g} Hz, phase {j}/{F}"
        assert t == pytest.approx(i + 1 + j / F, abs=1e-12)
        item = grid.find("Attribute[@Name='displacement']/DataItem")
        assert item.get("Precision") == "4" and point["displacement"].dtype == np.float32
        shape = shapes[i][:, :2] / np.abs(shapes[i][:, :2]).max()
        np.testing.assert_allclose(point["displacement"][:, :2], np.sin(2 * np.pi * j / F)
                                   * shape, atol=1e-6)
        assert np.all(point["displacement"][:, 2] == 0)
        assert (point["mode"][0], point["frequency"][0], point["phase"][0]) == (
            i + 1, hz[i], j / F)


def test_tied_frame_modes_are_those_of_the_constrained_pencil():
    """A portal frame whose beam is pinned to the columns by ties (Lagrange multipliers): the
    step's shift-invert of the saddle point [[K, G^T], [G, 0]] with no mass on the multiplier
    rows gives the eigenvalues of the pencil reduced to the null space of G (dense LAPACK);
    the modes satisfy the ties (G phi = 0)."""
    import scipy.linalg as sla
    from test_ties import frame

    d = frame("tied")
    d["sections"][0]["mass_per_length"] = 7.8e-6 * 7808.0
    d["sections"][1]["mass_per_length"] = 7.8e-6 * 5381.0
    d["steps"] = [{"name": "modes", "type": "modal", "modes": 6, "mass": "consistent"}]
    dk, sysm, state, steps = solve(d)
    step = steps[0]
    K, M = step.matrices(state)
    lam = sysm.dofmap.blocks["multipliers"]
    free = np.setdiff1d(np.arange(K.shape[0]), np.arange(K.shape[0])[lam])
    assert lam.stop > lam.start                               # the ties' multipliers are there
    G = K[lam][:, free].toarray()
    Z = sla.null_space(G)
    Kf, Mf = K[free][:, free].toarray(), M[free][:, free].toarray()
    w = sla.eigh(Z.T @ Kf @ Z, Z.T @ Mf @ Z, eigvals_only=True)
    # LAPACK's values are good to a few eps times the largest: that as an absolute part
    np.testing.assert_allclose(step.pairs.values, w[:6], rtol=1e-10, atol=1e-13 * w.max())
    X = step.pairs.vectors
    assert np.abs(G @ X[free]).max() < 1e-12 * np.abs(G).max() * np.abs(X[free]).max()


def test_block_solve_matches_single_solves_and_names_a_singular_matrix():
    """``linalg.solve_block`` (one MUMPS solve phase for a block of right-hand sides) gives the
    column-by-column solutions to round-off, with backward errors of a few eps; a singular
    matrix (a free chain: a zero pivot) raises SingularMatrixError as the single solve does."""
    from fem import _petsc, linalg

    _petsc.init()
    K, M, _ = pencil(200)
    A = linalg.matrix_from_scipy(K)
    ksp = linalg.direct_solver(A, "blocktest_")
    B = np.random.default_rng(0).standard_normal((200, 7))
    try:
        X = linalg.solve_block(ksp, B)
        cols = np.column_stack([linalg.solve(ksp, B[:, j].copy()) for j in range(7)])
        assert np.abs(X - cols).max() <= 1e-12 * np.abs(cols).max()
        berr = np.abs(K @ X - B).max(axis=0) / (abs(K).sum(axis=1).max() * np.abs(X).max(axis=0)
                                               + np.abs(B).max(axis=0))
        assert berr.max() < 64 * np.finfo(float).eps
    finally:
        ksp.destroy()
        A.destroy()
        linalg.release_options("blocktest_")
    import scipy.sparse as sp

    free = sp.diags([2.0 * np.ones(5), -np.ones(4), -np.ones(4)], [0, 1, -1]).tolil()
    free[0, 0] = free[4, 4] = 1.0                        # no support: singular
    A = linalg.matrix_from_scipy(free.tocsr())
    ksp = linalg.direct_solver(A, "blocktest_")
    try:
        with pytest.raises(linalg.SingularMatrixError):
            linalg.solve_block(ksp, np.ones((5, 2)))
    finally:
        ksp.destroy()
        A.destroy()
        linalg.release_options("blocktest_")
