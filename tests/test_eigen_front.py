"""The eigen front-end (``fem/solvers/eigen``): every eigen-solve through it, one answer (issue 27).

References: LAPACK on the same matrices (``method = "dense"``, itself checked against the
null-space reduction of a tied frame), the six rigid motions of a free body (translations and
rotations of its nodes), the exact multiplicity of a beam whose section has equal principal
moments (flap = lag: every bending eigenvalue double), and the reliability repro D01 (a free
structure with ``shift = 0``: an internal error, exit 70, before the fix).
"""

import ast
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from helpers import line_beam, solve, square_plate_mesh
from test_solver_options import run_cli

from fem.solvers import eigen
from fem.solvers.eigen import common

ROOT = Path(__file__).resolve().parents[1]
METHODS = ("dense", "lanczos", "slepc")

# --- every eigen-solve goes through the front-end -------------------------------------------

#: names of calls that solve an eigenproblem (numpy, SciPy dense and sparse, SLEPc's EPS)
EIGEN_CALLS = {"eig", "eigh", "eigvals", "eigvalsh", "eigsh", "eigs", "eig_banded", "EPS"}
#: the back-ends, which only the front-end may import
BACKENDS = {"lanczos", "lanczos2", "slepc", "dense"}
#: (file, call) outside the package allowed to call an eigen routine, and why
ALLOWED = {
    ("fem/io/keys/entries.py", "eigvalsh"): "the lowest eigenvalue of a small matrix given in "
    "the deck, a rotary inertia or a bushing's stiffness or damping (lowest_eigenvalue: a check "
    "that it is positive semi-definite), not a model's eigen-solve",
    ("fem/elements/superelement/group.py", "eigh"): "the modes of a superelement's own reduced "
    "fixed-interface block (r x r, at build time), which its modal damping ratios act on "
    "(D = M Phi diag(2 zeta omega) Phi^T M); the elements layer cannot call the solvers' front-end",
    ("fem/cms/nonlinear.py", "eigh"): "the M-orthonormal basis of the few columns a reduction "
    "appends (modal derivatives, inertial responses: their Gram matrix, tens at most, at "
    "reduction time), dropping dependent ones; not a model's eigen-solve",
    ("fem/io/drawing.py", "eigh"): "the principal axes of a rigid body's 3 x 3 inertia tensor, "
    "the box ParaView draws for it, not a model's eigen-solve",
}


def eigen_uses(source: str) -> list[tuple[int, str]]:
    """``(line, name)`` of every eigen call, eigen-function import and back-end import."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", None)
            if name in EIGEN_CALLS:
                out.append((node.lineno, name))
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            for alias in node.names:
                if alias.name in EIGEN_CALLS:
                    out.append((node.lineno, alias.name))
                if module.startswith("fem.solvers.eigen.") or (
                        module == "fem.solvers.eigen" and alias.name in BACKENDS):
                    out.append((node.lineno, f"{module}.{alias.name}"))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("fem.solvers.eigen."):
                    out.append((node.lineno, alias.name))
    return out


def test_no_eigen_solve_outside_the_eigen_package():
    """No eig/eigh/eigvals/eigvalsh/eigsh/eigs/EPS call, and no import of a back-end, in the
    package outside ``fem/solvers/eigen``, but for the allow-list (each entry with its reason,
    each still needed)."""
    found = {}
    for path in sorted((ROOT / "fem").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith("fem/solvers/eigen/"):
            continue
        for line, name in eigen_uses(path.read_text()):
            found.setdefault((rel, name), []).append(line)
    offenders = {k: v for k, v in found.items() if k not in ALLOWED}
    assert not offenders, ("eigen-solves outside fem/solvers/eigen (use the front-end, "
                           f"fem.solvers.eigen.symmetric/general/quadratic): {offenders}")
    assert set(ALLOWED) <= set(found), f"stale allow-list entries: {set(ALLOWED) - set(found)}"


@pytest.mark.parametrize("snippet", [
    "import scipy.linalg\nw, v = scipy.linalg.eigh(K, M)",
    "import scipy.linalg as sla\nw = sla.eigvals(A, B)",
    "from scipy.linalg import eigh",
    "import numpy as np\nw = np.linalg.eigvalsh(S)",
    "import scipy.sparse.linalg as spla\nw, v = spla.eigsh(K, 6, M, sigma=0.0)",
    "eps = SLEPc.EPS().create()",
    "from fem.solvers.eigen.lanczos import lanczos",
    "from fem.solvers.eigen import lanczos2",
    "import fem.solvers.eigen.slepc",
])
def test_the_scan_sees_an_eigen_solve_added_to_a_step(snippet):
    assert eigen_uses("def run(self, K, M):\n    pass\n" + snippet)


# --- free structures: every method, the same rigid modes and pairs --------------------------

def free_plate(mass: str, **step) -> dict:
    """A free steel plate 10 x 10 x 0.05, 8 x 8 squares of two shell triangles (486 DOFs): the
    issue's 16 x 16 case (SLEPc returned 3 of its 6 rigid modes) made small; at this size SLEPc
    returned 2."""
    coords, tri, _ = square_plate_mesh(8, 10.0)
    return {"model": {"dim": 3},
            "materials": [{"name": "steel", "E": 2.1e11, "nu": 0.3, "density": 7850.0}],
            "nodes": {"coordinates": coords.tolist()},
            "elements": [{"name": "plate", "type": "shell", "material": "steel",
                          "thickness": 0.05, "connectivity": tri.tolist()}],
            "steps": [{"name": "modes", "type": "modal", "mass": mass, "modes": 12, **step}]}


def free_frame(mass: str, **step) -> dict:
    """A free space frame of slender steel rods, 2 x 2 x 1 bays of 1 x 1.3 x 1.7, five beams per
    member (900 DOFs; SLEPc returned 4 or 3 of its 6 rigid modes)."""
    nx, ny, nz = 2, 2, 1
    ids = np.arange((nx + 1) * (ny + 1) * (nz + 1)).reshape(nx + 1, ny + 1, nz + 1) + 1
    xyz = [[1.0 * i, 1.3 * j, 1.7 * k] for i in range(nx + 1) for j in range(ny + 1)
           for k in range(nz + 1)]
    conn = []
    for i in range(nx + 1):
        for j in range(ny + 1):
            for k in range(nz + 1):
                for di, dj, dk in ((1, 0, 0), (0, 1, 0), (0, 0, 1)):
                    if i + di <= nx and j + dj <= ny and k + dk <= nz:
                        conn.append([int(ids[i, j, k]), int(ids[i + di, j + dj, k + dk])])
    return {"model": {"dim": 3},
            "materials": [{"name": "steel", "E": 2.1e11, "G": 8.1e10}],
            "sections": [{"name": "rod", "A": 1e-4, "Iy": 2e-9, "Iz": 1e-9, "J": 2e-9,
                          "mass_per_length": 0.785,
                          "rotary_inertia_per_length": [2.3e-6, 1.6e-6, 0.8e-6]}],
            "nodes": {"coordinates": xyz},
            "elements": [{"name": "frame", "type": "beam", "material": "steel",
                          "section": "rod", "connectivity": conn, "divisions": 5,
                          "orientation": [0.31, 0.52, 0.8]}],
            "steps": [{"name": "modes", "type": "modal", "mass": mass, "modes": 12, **step}]}


def clusters(values, rtol=1e-6):
    """Index groups of equal values (copies of one eigenvalue), ascending values."""
    groups, start = [], 0
    for i in range(1, len(values) + 1):
        if i == len(values) or values[i] - values[i - 1] > rtol * abs(values[i]):
            groups.append(np.arange(start, i))
            start = i
    return groups


@pytest.mark.parametrize("mass", ["lumped", "consistent"])
@pytest.mark.parametrize("model", [free_plate, free_frame], ids=["plate", "frame"])
def test_a_free_structure_has_its_six_rigid_modes_and_the_same_pairs_from_every_method(model,
                                                                                       mass):
    """dense, lanczos and slepc: exactly six modes at the round-off of the spectrum (``1e3 eps
    max K_ii / M_ii``; the first elastic one a thousand times above it), spanning the six rigid
    motions of the nodes; the elastic values equal LAPACK's to 1e-8 and their (cluster)
    subspaces too (cosines of the principal angles above 1 - 1e-8)."""
    steps = {m: solve(model(mass, method=m)) for m in METHODS}
    _, sysm, state, (ref,) = steps["dense"]
    K, M = ref.matrices(state)
    level = common.ROUND_OFF * eigen.spectrum_scale(K, M)
    R = ref.rigid_motions()
    nodal = sysm.dofmap.blocks["nodal"]
    MR = (M @ np.vstack([R, np.zeros((K.shape[0] - R.shape[0], 6))]))
    dense = ref.pairs
    for method, (_, _, _, (step,)) in steps.items():
        w, X = step.pairs.values, step.pairs.vectors
        assert len(w) == 12, method
        rigid = np.abs(w) <= level
        assert rigid.sum() == 6 and rigid[:6].all(), (method, w[:8], level)
        assert w[6] > 1e3 * level, method
        # the rigid modes span the rigid motions, R = X_r (X_r^T M R), to the accuracy of an
        # invariant subspace: eps ||K|| / gap (Davis & Kahan 1970, the sin-theta theorem; LAPACK
        # reaches it, the shift-invert methods do better)
        Xr = X[:, :6]
        tol = 10 * np.finfo(float).eps * eigen.spectrum_scale(K, M) / w[6]
        assert np.abs(Xr @ (Xr.T @ MR) - np.vstack(
            [R, np.zeros((K.shape[0] - R.shape[0], 6))]))[nodal].max() < tol, method
        np.testing.assert_allclose(w[6:], dense.values[6:], rtol=1e-8)
        for group in clusters(dense.values[6:]):
            g = group + 6
            cos = np.linalg.svd(dense.vectors[:, g].T @ (M @ X[:, g]), compute_uv=False)
            assert cos.min() > 1 - 1e-8, (method, g, cos)
        assert step.pairs.residuals.max() < 1e-10, method       # the Lanczos acceptance
        if method != "dense":
            assert step.sigma < 0                 # the free structure's shift, below the rigid


def square_cantilever(n: int = 12, **step) -> dict:
    """A clamped 3D beam with a square section (Iy = Iz: flap = lag, every bending eigenvalue
    double), EI = rho A = L = 1."""
    d = line_beam(3, n, Iy=1.0, Iz=1.0, J=2.0, orientation=[0, 0, 1])
    d["sections"][0]["mass_per_length"] = 1.0
    d["sections"][0]["rotary_inertia_per_length"] = [1e-4, 1e-4, 2e-4]
    d["supports"] = [{"nodes": [1], "fixed": ["all"]}]
    d["steps"] = [{"name": "modes", "type": "modal", "mass": "consistent", **step}]
    return d


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("modes", [2, 7])
def test_a_square_cantilever_returns_each_double_eigenvalue_twice(method, modes):
    """Every method: the lowest ``modes`` values, doubles with both copies (LAPACK on the same
    matrices), the copies M-orthonormal."""
    _, _, state, (step,) = solve(square_cantilever(modes=modes, method=method))
    K, M = step.matrices(state)
    exact = np.sort(eigen.symmetric(K, M, 40, 0.0, method="dense").values)[:modes]
    assert np.abs(exact[1] / exact[0] - 1) < 1e-10          # the first is double
    np.testing.assert_allclose(step.pairs.values, exact, rtol=1e-9)
    X = step.pairs.vectors
    assert np.abs(X.T @ (M @ X) - np.eye(modes)).max() < 1e-10


@pytest.mark.parametrize("seed", [5, 6, 7])
@pytest.mark.parametrize("method", ["lanczos", "slepc"])
def test_single_vector_searches_find_both_copies_through_deflation(method, seed):
    """Single-vector Krylov methods (the Lanczos with blocks of 1, SLEPc's Krylov-Schur) find
    one copy of a double eigenvalue and the other only through round-off, if at all: on two
    identical uncoupled chains (every eigenvalue double; notes T3's case 2, symmetric) the
    Lanczos with blocks of 1 returned 4 values 30 % off LAPACK's (the next eigenvalue instead of
    a second copy). The front-end searches the deflated problem for the missing copies."""
    from test_modal import pencil

    K1, M1, w1 = pencil(60, seed=seed)
    K, M = sp.block_diag([K1, K1]).tocsr(), sp.block_diag([M1, M1]).tocsr()
    for count in (4, 6):
        pairs = eigen.symmetric(K, M, count, 0.0, method=method, block=1, prefix="deflation_")
        np.testing.assert_allclose(pairs.values, np.repeat(w1, 2)[:count], rtol=1e-10)
        X = pairs.vectors
        assert np.abs(X.T @ (M @ X) - np.eye(count)).max() < 1e-10


# --- shifts, counts, signs --------------------------------------------------------------------

D01 = """\
[model]
dim = 2

[[materials]]
name = "m"
E = 1.0
G = 0.5

[[sections]]
name = "s"
A = 1.0e4
Iz = 1.0
mass_per_length = 1.0

[nodes]
coordinates = [[0.0, 0.0], [1.0, 0.0]]

[[elements]]
name = "beam"
type = "beam"
material = "m"
section = "s"
connectivity = [[1, 2]]
divisions = 10

[[steps]]
name = "free"
type = "modal"
modes = 5
shift = 0.0
"""


def test_d01_a_zero_shift_on_a_free_structure_is_a_deck_error_naming_the_key(tmp_path):
    """Repro D01 (exit 70, SingularMatrixError, before): exit 2, the key and what to do; without
    the key the free beam's three rigid modes come first."""
    p = run_cli(tmp_path, D01)
    assert p.returncode == 2, p.stdout + p.stderr
    assert "steps[0].shift" in p.stderr and "leave shift out" in p.stderr, p.stderr
    assert "Traceback" not in p.stderr and "internal error" not in p.stderr
    p = run_cli(tmp_path, D01.replace("shift = 0.0\n", ""), name="auto")
    assert p.returncode == 0, p.stdout + p.stderr
    import h5py

    with h5py.File(tmp_path / "auto.h5") as f:
        w2 = f["modes/free/eigenvalues"][()]
        shift = f["modes/free"].attrs["shift"]
    assert np.abs(w2[:3]).max() < 1e-6 * w2[3] and shift < 0


def tied_frame(**step) -> tuple:
    """test_ties' portal frame with its beam pinned by ties (multipliers), with masses."""
    from test_ties import frame

    d = frame("tied")
    d["sections"][0]["mass_per_length"] = 7.8e-6 * 7808.0
    d["sections"][1]["mass_per_length"] = 7.8e-6 * 5381.0
    d["steps"] = [{"name": "modes", "type": "modal", "mass": "lumped", **step}]
    return d


def constrained_reference(step, state):
    """All finite eigenvalues of the tied frame by the null space of its tie rows (LAPACK)."""
    import scipy.linalg as sla

    K, M = step.matrices(state)
    lam = step.system.dofmap.blocks["multipliers"]
    free = np.setdiff1d(np.arange(K.shape[0]), np.arange(K.shape[0])[lam])
    Z = sla.null_space(K[lam][:, free].toarray())
    Kf, Mf = K[free][:, free].toarray(), M[free][:, free].toarray()
    Mz = Z.T @ Mf @ Z
    keep = np.abs(np.diag(Mz)) > 0
    return sla.eigh(Z.T @ Kf @ Z, Mz, eigvals_only=True) if keep.all() else None


@pytest.mark.parametrize("method", METHODS)
def test_more_modes_than_the_model_has_returns_all_it_has_with_a_warning(method):
    """100 modes asked of a tied frame with 35 finite eigenvalues (39 unknowns with mass, four
    tie rows): all 35, equal to the null-space reference, and a warning naming the step and
    the key."""
    _, _, state, (step,) = solve(tied_frame(modes=100, method=method))
    w = constrained_reference(step, state)
    assert len(w) == 35
    np.testing.assert_allclose(step.pairs.values, w, rtol=1e-9, atol=1e-12 * w.max())
    assert any(m.startswith("step 'modes': modes = 100: asked 100 pairs, the model has 35")
               for m in step.warnings), step.warnings


@pytest.mark.parametrize("method", METHODS)
def test_mode_signs_are_normalized(method):
    """The component of largest magnitude of every mode is positive, whatever the method (a
    mode shape does not flip with the BLAS thread count)."""
    _, _, _, (step,) = solve(square_cantilever(modes=7, method=method))
    X = step.pairs.vectors
    k = np.argmax(np.abs(X) >= (1 - 1e-8) * np.abs(X).max(axis=0), axis=0)
    assert np.all(X[k, np.arange(X.shape[1])] > 0)


def test_normalize_signs_takes_the_first_of_near_ties_and_the_phase_of_complex_vectors():
    X = np.array([[1.0, 2.0], [-1.0 - 1e-12, -3.0]])
    out = eigen.normalize_signs(X)
    assert out[0, 0] == 1.0 and out[1, 1] == 3.0          # -X gives the same
    np.testing.assert_array_equal(eigen.normalize_signs(-X), out)
    Z = np.array([[1j], [0.5]])
    assert eigen.normalize_signs(Z)[0, 0] == pytest.approx(1.0)


def test_slepc_options_of_the_deck_and_command_line_reach_the_modal_eigen_solver(tmp_path):
    pytest.importorskip("slepc4py")
    text = D01.replace("shift = 0.0\n", 'method = "slepc"\n')
    p = run_cli(tmp_path, text + "\n[solver]\npetsc_options = { eps_tol = 1e-11 }\n",
                "-free_eps_eps_view")
    assert p.returncode == 0, p.stderr
    assert "tolerance: 1e-11" in p.stdout and "krylovschur" in p.stdout.lower()


# --- quadratic: left vectors from LAPACK ---------------------------------------------------------

def test_dense_quadratic_gives_left_vectors_and_the_two_sided_lanczos_values():
    """A random damped gyroscopic problem: the dense method's right and left vectors satisfy
    ``(p^2 M + p D + K) x = 0`` and ``y^T (p^2 M + p D + K) = 0``; its 6 values nearest the
    shift are the two-sided Lanczos's."""
    rng = np.random.default_rng(5)
    n = 12
    A = rng.standard_normal((n, n))
    M = A @ A.T + n * np.eye(n)
    A = rng.standard_normal((n, n))
    K = A @ A.T + n * np.eye(n)
    G = rng.standard_normal((n, n))
    D = 0.05 * np.eye(n) + (G - G.T)
    Ms, Ds, Ks = (sp.csr_matrix(X) for X in (M, D, K))
    dense = eigen.quadratic(Ms, Ds, Ks, 6, 0.1j, method="dense")
    two = eigen.quadratic(Ms, Ds, Ks, 6, 0.1j, method="lanczos2")
    for p in two.values:
        assert np.min(np.abs(dense.values - p)) < 1e-9 * np.abs(p)
    for p, x, y in zip(dense.values, dense.vectors.T, dense.left.T, strict=True):
        Q = p * p * M + p * D + K
        assert np.abs(Q @ x).max() < 1e-12 * np.abs(Q).max() * np.abs(x).max()
        assert np.abs(y @ Q).max() < 1e-12 * np.abs(Q).max() * np.abs(y).max()



@pytest.mark.parametrize("method", ["dense", "lanczos"])
def test_a_linearize_step_keeps_the_left_vectors(method):
    """Kane's beam spun at 2 rad/s (test_linearize's, gyroscopic and Coriolis terms: D is not
    symmetric, left and right vectors differ): every eigenvalue's left vector satisfies
    ``y^T (p^2 M + p D + K) = 0`` and its right one the transposed equation; the two methods
    (LAPACK, two-sided Lanczos) give the same eigenvalues."""
    from test_linearize import spin_beam

    d = spin_beam(3, 2.0, n=8)
    d["steps"][0]["method"] = method
    _, _, _, (step,) = solve(d)
    lm, e = step.model, step.eigen
    for p, x, y in zip(e.values, e.vectors.T, e.left.T, strict=True):
        Q = (lm.M * p * p + lm.D * p + lm.K).tocsr()
        scale = abs(Q).max()
        assert np.abs(Q @ x).max() < 1e-8 * scale * np.abs(x).max()
        assert np.abs(Q.T @ y).max() < 1e-8 * scale * np.abs(y).max()
    other = solve({**d, "steps": [{**d["steps"][0], "method": "lanczos" if method == "dense"
                                   else "dense"}]})[3][0].eigen.values
    order, other_order = np.argsort(e.values.imag), np.argsort(other.imag)
    np.testing.assert_allclose(e.values[order], other[other_order], rtol=0,
                               atol=1e-7 * np.abs(other).max())


if __name__ == "__main__":
    sys.exit(pytest.main([__file__]))
