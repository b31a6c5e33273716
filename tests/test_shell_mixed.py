"""Shells mixed with joints, beams and rigid bodies in one model (issue 12, items 2 and 3).

Each check compares with a closed form derived in its docstring, or with the same model whose
joints are replaced by the supports they stand for:

* statics: a square plate (linear shells) hinged along an edge by revolute joints to the ground
  is the plate simply supported there, to 1e-10, reactions included, and its centre deflection
  is Navier's; welded by fixed joints along its boundary it is the clamped plate, whose centre
  deflection is the series of :mod:`test_shell` (Timoshenko & Woinowsky-Krieger 1959, Table 35,
  to more digits) within 1 %;
* modal: a stiff plate on four clamped beam columns sways at ``sqrt(k / m)``, ``k = 4 x 12 EI /
  L^3`` (less the rocking that the columns' axial stretch allows), and twists at the closed form
  of the rigid plate on those columns;
* dynamics (energy-conserving scheme): a flexible co-rotational plate hanging from revolute
  joints keeps kinetic + strain + gravity potential to 1e-8 over 500 steps; its hinge's reaction
  over the first step is the rigid plate's ``m g / 4`` (a uniform plate released from
  horizontal about an edge); a rigid body welded to a shell node flies free with energy and both
  momenta exact;
* a plate stiffened by an eccentric beam (end offsets) hinged on two edges is the same plate on
  supports, linear and co-rotational (nonlinear statics).
"""

import numpy as np
import pytest
from conftest import fd_step_tangent, moving_ec_start
from helpers import solve, square_plate_mesh
from test_shell import DB, clamped_centre, navier_centre, plate_deck

from fem.inertia.nodal import NodalInertia
from fem.integrators.cayley import chord_nodes
from fem.io import deck as deck_io
from fem.run import make_step
from fem.system import System

G = 9.81


def max_rel(a, b) -> float:
    """``max |a - b| / max |b|``."""
    return float(np.abs(np.asarray(a) - b).max() / np.abs(b).max())


def reactions(deck: dict, tmp_path, name: str):
    """Solve ``deck`` writing its results; (deck, system, state, the last frame's reactions)."""
    import h5py

    path = str(tmp_path / f"{name}.h5")
    dk, sysm, state, steps = solve(deck, h5=path)
    with h5py.File(path, "r") as f:
        r = f[f"steps/{steps[-1].name}/reaction"][-1]
    return dk, sysm, state, r


# --- 1. statics: joints to the ground as supports -----------------------------------------------

N_PLATE, Q = 16, 1e-4            # 16 x 16 mesh; pressure small enough for rotations below 1e-2


def edge_masks(coords):
    x, y = coords[:, 0], coords[:, 1]
    xe = np.isclose(x, 0) | np.isclose(x, 1)
    ye = np.isclose(y, 0) | np.isclose(y, 1)
    return xe, ye, np.isclose(y, 0)


def test_revolute_joints_along_an_edge_are_a_simple_support(tmp_path):
    """The simply supported plate of :func:`test_shell.plate_deck` (w = 0 on the boundary, the
    rotation about the edge free, in-plane motion held) with its edge y = 0 held instead by a
    revolute joint to the ground at each node, axis x (the joint holds the translations and
    the rotations about y and z; the corners keep their support of rx from the edge x = 0 or
    1): the same displacements and rotations to 1e-10, the joints' reactions on the plate nodes
    the supports' (forces in global axes, moments in the joint frame), and the centre
    deflection Navier's series within 1 %."""
    ref, coords = plate_deck(N_PLATE, clamped=False, q=Q)
    _, _, s_ref, r_ref = reactions(ref, tmp_path, "supports")
    _, _, ids = square_plate_mesh(N_PLATE)
    xe, ye, hinge = edge_masks(coords)
    deck, _ = plate_deck(N_PLATE, clamped=False, q=Q)
    deck["supports"] = [{"nodes": ids[~hinge].tolist(), "fixed": ["ux", "uy", "rz"]},
                        {"nodes": ids[(xe | ye) & ~hinge].tolist(), "fixed": ["uz"]},
                        {"nodes": ids[xe].tolist(), "fixed": ["rx"]},
                        {"nodes": ids[ye & ~hinge].tolist(), "fixed": ["ry"]}]
    deck["joints"] = [{"name": "hinge", "type": "revolute", "ground": ids[hinge].tolist(),
                       "axis": [1.0, 0.0, 0.0]}]
    _, sysm, state, _ = solve(deck)
    n = len(coords)
    assert max_rel(state.u[:n], s_ref.u) <= 1e-10
    assert max_rel(state.rotation_vectors()[:n], s_ref.rotation_vectors()) <= 1e-10
    out = sysm.outputs(state)["hinge"]
    assert max_rel(out["force"], r_ref[hinge, :3]) <= 1e-10
    # the moments in the joint frame (e1, e2, e3) = (y, z, x) turned with the node: about y
    # the support's, about z none (no in-plane load), about the axis none (a hinge)
    assert max_rel(out["mx"], r_ref[hinge, 4]) <= 1e-10
    assert np.abs(np.column_stack([out["my"], out["mz"]])).max() <= \
        1e-10 * np.abs(r_ref[hinge, 4]).max()
    c = int(np.argmin(np.linalg.norm(coords - [0.5, 0.5, 0.0], axis=1)))
    w = state.u[c, 2] * DB / Q                                      # / (q a^4 / D)
    assert abs(w / navier_centre() - 1) < 0.01


def test_fixed_joints_along_the_boundary_are_a_clamp():
    """Every boundary node welded to the ground by a fixed joint (all six DOFs held) is the
    clamped plate of :func:`test_shell.plate_deck` to 1e-10, and its centre deflection the
    clamped series (``0.0012653 q a^4 / D``, T&WK's 0.00126) within 1 %."""
    ref, coords = plate_deck(N_PLATE, clamped=True, q=Q)
    s_ref = solve(ref)[2]
    _, _, ids = square_plate_mesh(N_PLATE)
    xe, ye, _ = edge_masks(coords)
    edge = xe | ye
    deck, _ = plate_deck(N_PLATE, clamped=True, q=Q)
    deck["supports"] = [{"nodes": ids[~edge].tolist(), "fixed": ["ux", "uy", "rz"]}]
    deck["joints"] = [{"name": "weld", "type": "fixed", "ground": ids[edge].tolist()}]
    state = solve(deck)[2]
    n = len(coords)
    assert max_rel(state.u[:n], s_ref.u) <= 1e-10
    assert max_rel(state.rotation_vectors()[:n], s_ref.rotation_vectors()) <= 1e-10
    c = int(np.argmin(np.linalg.norm(coords - [0.5, 0.5, 0.0], axis=1)))
    w = state.u[c, 2] * DB / Q
    assert abs(w / clamped_centre() - 1) < 0.01


def test_the_welded_plate_solves_with_the_default_solver_options():
    """The clamped plate of the previous test welded by fixed joints (a regular saddle-point
    system) with the default options: MUMPS's workspace estimate is too small for it (INFOG(1) =
    -9 at ICNTL(14) = 20), which was reported as a singular matrix and the static step as a
    mechanism; fem.linalg now factors again with more workspace. Equal to the clamped plate."""
    deck, coords = plate_deck(2, clamped=True, q=Q)
    _, _, ids = square_plate_mesh(2)
    xe, ye, _ = edge_masks(coords)
    deck["supports"] = [{"nodes": ids[~(xe | ye)].tolist(), "fixed": ["ux", "uy", "rz"]}]
    deck["joints"] = [{"name": "weld", "type": "fixed", "ground": ids[xe | ye].tolist()}]
    ref, _ = plate_deck(2, clamped=True, q=Q)
    assert max_rel(solve(deck)[2].u[:len(coords)], solve(ref)[2].u) <= 1e-10


# --- 2. a table: a plate on four beam columns ----------------------------------------------------

EC, NU, I_COL, A_COL, J_COL, L_COL, RHO, H_TOP = 2e11, 0.3, 2e-7, 1e-3, 4e-7, 1.5, 7800.0, 0.02


def table_frequencies(E_plate: float) -> np.ndarray:
    """The lowest three angular frequencies of a 1 x 1 plate (4 x 4 mesh, consistent mass) at
    height L on four massless Euler-Bernoulli columns clamped at the floor, sharing the plate's
    corner nodes."""
    coords, tri, ids = square_plate_mesh(4)
    coords[:, 2] = L_COL
    corner = (np.isclose(coords[:, 0], 0) | np.isclose(coords[:, 0], 1)) & \
        (np.isclose(coords[:, 1], 0) | np.isclose(coords[:, 1], 1))
    feet = coords[corner] * [1, 1, 0]
    fid = np.arange(len(coords) + 1, len(coords) + 5)
    deck = {"model": {"dim": 3},
            "materials": [{"name": "top", "E": E_plate, "nu": NU, "density": RHO},
                          {"name": "steel", "E": EC, "nu": NU, "density": 0.0}],
            "sections": [{"name": "col", "A": A_COL, "Iy": I_COL, "Iz": I_COL, "J": J_COL}],
            "nodes": {"coordinates": np.vstack([coords, feet]).tolist()},
            "elements": [{"name": "top", "type": "shell", "material": "top",
                          "thickness": H_TOP, "connectivity": tri.tolist()},
                         {"name": "legs", "type": "beam", "material": "steel", "section": "col",
                          "orientation": [1.0, 0.0, 0.0],
                          "connectivity": np.column_stack([fid, ids[corner]]).tolist()}],
            "supports": [{"nodes": fid.tolist(), "fixed": ["ux", "uy", "uz", "rx", "ry", "rz"]}],
            "steps": [{"name": "modes", "type": "modal", "modes": 3, "mass": "consistent"}]}
    return solve(deck)[3][0].frequencies()


def test_a_stiff_plate_on_four_beam_columns_sways_at_the_closed_form():
    """Columns' mass neglected (density 0), the plate rigid (E 100 and 1000 times the columns').

    Sway (x or y; the plate translates): a column clamped at the floor whose top translates by
    ``d`` and turns by ``phi`` (the plate's rocking) carries the shear ``12 EI/L^3 d - 6 EI/L^2
    phi`` and the top moment ``-6 EI/L^2 d + 4 EI/L phi``; the plate turns until these moments
    balance the columns' axial forces ``EA/L (a/2) phi`` at the arms ``a/2``, so ``phi = 24 EI/L^2
    d / (16 EI/L + EA a^2/L)`` and the sway stiffness is ``k = 48 EI/L^3 (1 - 12 EI / (16 EI + EA
    a^2))`` (the rocking takes 0.24 % here; inextensible columns: ``4 x 12 EI/L^3``), with
    ``omega^2 = k / m``, ``m = rho h a^2``.
    Twist (about the vertical): the corners move by ``r phi``, ``r^2 = a^2/2``, the columns
    twist by ``phi``: ``omega^2 = (4 (12 EI/L^3) r^2 + 4 GJ/L) / (m a^2/6 + m h^2/12)`` (the
    plate's polar moment and its rotary inertia about the normal).
    The plate's own bending lets the column tops turn: an error O(1/E_plate), 0.33 % low at
    100 times the columns' E and 0.034 % at 1000."""
    a, m = 1.0, RHO * H_TOP
    EI, EA, GJ = EC * I_COL, EC * A_COL, EC / (2 * (1 + NU)) * J_COL
    k = 48 * EI / L_COL**3 * (1 - 12 * EI / (16 * EI + EA * a**2))
    sway = np.sqrt(k / m)
    twist = np.sqrt((4 * 12 * EI / L_COL**3 * a**2 / 2 + 4 * GJ / L_COL)
                    / (m * a**2 / 6 + m * H_TOP**2 / 12))
    err = []
    for ratio in (100, 1000):
        w = table_frequencies(ratio * EC)
        e = np.abs(w / [sway, sway, twist] - 1)
        assert e.max() < 0.01, (ratio, w / [sway, sway, twist])
        err.append(e)
    assert np.all(err[1] < err[0] / 5), err


# --- 3. dynamics: a plate hanging from revolute joints, a welded body ----------------------------

def hanging_plate(n: int, E: float, h: float, steps: int, output: bool = False) -> dict:
    """A unit square plate (n x n, co-rotational, thickness 0.02, density 1000) hinged to the
    ground along its edge y = 0 (a revolute joint at each edge node, axis x), horizontal and at
    rest under gravity -z (lumped nodal inertia)."""
    coords, tri, ids = square_plate_mesh(n)
    d = {"model": {"dim": 3},
         "materials": [{"name": "m", "E": E, "nu": 0.3, "density": 1000.0}],
         "nodes": {"coordinates": coords.tolist()},
         "elements": [{"name": "plate", "type": "shell", "formulation": "corotational",
                       "material": "m", "thickness": 0.02, "connectivity": tri.tolist()}],
         "joints": [{"name": "hinge", "type": "revolute",
                     "ground": ids[np.isclose(coords[:, 1], 0)].tolist(),
                     "axis": [1.0, 0.0, 0.0]}],
         "gravity": {"acceleration": [0.0, 0.0, -G]},
         "steps": [{"name": "swing", "type": "dynamic", "integrator": "energy_conserving",
                    "time_step": h, "duration": steps * h, "tolerance": 1e-10}]}
    if output:
        d["steps"][0]["output_interval"] = steps * h / 10
    return d


@pytest.mark.slow
def test_a_hanging_plate_conserves_kinetic_strain_and_gravity_energy(tmp_path):
    """500 steps of h = 0.005 (2.5 s: the plate swings down past the vertical; E = 1e7, so it
    flexes): kinetic + strain + gravity potential (``V = -sum m_i g . u_i`` with the lumped
    masses the step integrates, computed here from the positions) constant to 1e-8 of the
    largest kinetic energy; the step's work of gravity is ``-Delta V``; the hinges stay closed.
    At t = 0 the written joint reaction (the consistent one of the state at rest, undeformed) is
    the weight of the hinge nodes' own masses only: the rest of the elastic plate is not yet
    loaded (the rigid plate's ``m g/4`` is reached through the plate's vibration, see the next
    test)."""
    import h5py

    path = str(tmp_path / "swing.h5")
    dk, sysm, state, (step,) = solve(hanging_plate(4, 1e7, 0.005, 500, output=True), h5=path)
    assert step.steps == 500 and step.cuts == 0
    hist = step.history
    T, S, W = (np.array([r[k] for r in hist]) for k in ("kinetic", "strain", "external_work"))
    m = NodalInertia(sysm).m
    n_plate = len(square_plate_mesh(4)[0])
    # the potential along the run, from the positions of the output frames
    with h5py.File(path, "r") as f:
        u = f["steps/swing/displacement"][:, :, 2]
        t_out = f["steps/swing/time"][:]
        hinge0 = f["steps/swing/elements/hinge/force"][0]
    V = np.sum(m[None, :] * G * u, axis=1)
    times = np.array([r["time"] for r in hist])
    rows = np.searchsorted(times, t_out - 1e-12)
    assert np.allclose(times[rows], t_out)
    total = T[rows] + S[rows] + V
    assert np.abs(total - total[0]).max() <= 1e-8 * T.max()
    assert np.abs(W[rows] + V - V[0]).max() <= 1e-9 * T.max()         # work of gravity = -dV
    assert np.abs(T + S - W).max() <= 1e-8 * T.max()                   # every step
    assert S.max() > 1e-4 * T.max()                                    # it flexes
    assert u[:, :n_plate].min() < -0.9                                 # swung down
    assert np.abs(dk.model.constraints[0].gap(state)).max() <= 1e-10
    hinged = np.isclose(dk.model.X[:, 1], 0) & (np.arange(len(m)) < n_plate)
    assert np.sum(hinge0[:, 2]) == pytest.approx(G * m[hinged].sum(), rel=1e-10)


def test_the_hinge_reaction_at_release_is_that_of_the_rigid_plate():
    """A uniform plate (mass ``M``, width ``b`` from its hinge) released from horizontal turns
    at ``alpha = M g (b/2) / I``, ``I = M b^2 / 3``, so its centre falls at ``alpha b/2 = 3g/4``
    and the hinge carries ``R = M g - M 3g/4 = M g / 4``. On the mesh the masses are lumped at
    the nodes: ``R_h = M g (1 - S^2 / (M I_h))`` with ``S = sum m_i y_i`` and ``I_h = sum m_i
    y_i^2 + J_xx`` (the nodes' rotary inertia), 0.6 % above ``M g / 4`` on a 16 x 16 mesh.

    The elastic plate at rest carries only its hinge nodes' weight at t = 0 (previous test);
    over a step that spans many periods of its flexible modes the mid-point rule follows the
    rigid motion, and the multipliers of the first step are the mean reaction over it
    (``Delta P = h (W - R)``, exactly). With h = 0.02 (the plate turns by 0.003 rad) the
    vertical reaction converges to ``R_h`` as ``1 / (omega h)^2 ~ 1 / E``: 6 %, 0.7 %, 0.07 %
    below it at E = 1e10, 1e11, 1e12 (the horizontal part, along the plate, is 0.4 %: the
    plate's turn over the step); within 1 % of ``M g / 4``."""
    errs = []
    for E in (1e10, 1e11, 1e12):
        dk, sysm, state, _ = solve(hanging_plate(16, E, 0.02, 1))
        inertia = NodalInertia(sysm)
        m, y = inertia.m, dk.model.X[:, 1]
        M, S = m.sum(), m @ y
        R_h = M * G * (1 - S**2 / (M * (m @ y**2 + inertia.J[:, 0, 0].sum())))
        R = sysm.outputs(state)["hinge"]["force"].sum(axis=0)
        errs.append(R[2] / R_h - 1)
        assert abs(R[1]) <= 1e-2 * R_h and abs(R[0]) <= 1e-5 * R_h
    assert abs(R_h / (M * G / 4) - 1) < 0.01
    assert abs(R[2] / (M * G / 4) - 1) < 0.01
    assert abs(errs[2]) < 1e-3 and abs(errs[1]) < 1e-2
    assert abs(errs[0]) > 5 * abs(errs[1]) > 25 * abs(errs[2])           # ~ 1/E


def welded_body_deck(h: float, steps: int) -> dict:
    """A free 2 x 2 co-rotational plate (E = 1e6, thickness 0.02, density 100) with a rigid
    body (mass 0.5, a full inertia tensor) welded by a fixed joint to its centre node, the
    body's centre of mass off the plate (0.05, -0.03, 0.1) from that node, the joint point at
    the node (the arm is the body's)."""
    coords, tri, ids = square_plate_mesh(2)
    c = int(np.argmin(np.linalg.norm(coords - [0.5, 0.5, 0.0], axis=1)))
    xb = coords[c] + [0.05, -0.03, 0.1]
    body = len(coords) + 1
    return {"model": {"dim": 3},
            "materials": [{"name": "m", "E": 1.0e6, "nu": 0.3, "density": 100.0}],
            "nodes": {"coordinates": np.vstack([coords, xb]).tolist()},
            "elements": [{"name": "plate", "type": "shell", "formulation": "corotational",
                          "material": "m", "thickness": 0.02, "connectivity": tri.tolist()}],
            "bodies": [{"name": "box", "nodes": body, "mass": 0.5,
                        "inertia": [[3e-3, 2e-4, -1e-4], [2e-4, 2e-3, 3e-4],
                                    [-1e-4, 3e-4, 1.5e-3]]}],
            "joints": [{"name": "weld", "type": "fixed", "pairs": [[int(ids[c]), body]]}],
            "steps": [{"name": "fly", "type": "dynamic", "integrator": "energy_conserving",
                       "time_step": h, "duration": steps * h, "tolerance": 1e-10}]}


def kicked(sysm, n_plate: int, centre: int):
    """The reference state with a rigid velocity field (translation and a spin of 2.3 rad/s
    about an oblique axis) and a twisting velocity of the plate ``vz = 2 x y`` (its rotation
    rates too), the body moving rigidly with the node it is welded to."""
    state = sysm.reference_state()
    X = sysm.model.X
    omega = np.array([0.5, -1.0, 2.0])
    state.v[:, :3] = np.array([0.3, -0.2, 0.1]) + np.cross(omega, X - [0.5, 0.5, 0.0])
    state.v[:, 3:] = omega
    x, y = X[:n_plate, 0] - 0.5, X[:n_plate, 1] - 0.5
    state.v[:n_plate, 2] += 2.0 * x * y
    state.v[:n_plate, 3] += 2.0 * x
    state.v[:n_plate, 4] -= 2.0 * y
    w = np.array([2.0 * x[centre], -2.0 * y[centre], 0.0])        # the node's extra spin
    state.v[-1, :3] += np.array([0, 0, 2.0 * x[centre] * y[centre]]) + \
        np.cross(w, X[-1] - X[centre])
    state.v[-1, 3:] += w
    return state


def test_a_body_welded_to_a_shell_node_flies_with_exact_energy_and_momenta():
    """200 steps of h = 0.005 of the plate and its welded body in free flight: the body turns
    by ``cay(psi)`` like the shell nodes (:func:`fem.integrators.cayley.chord_nodes`), so the
    weld's moments are those of the mid-point arm and energy, linear and angular momentum stay
    constant to 1e-8 relative (observed about 1e-13; with the body turned by ``exp`` angular
    momentum drifted by 7e-8, with the joint's former ``jl(theta) v_0`` form by 4e-7); the
    weld stays closed and the plate flexes."""
    dk = deck_io.from_dict(welded_body_deck(0.005, 200))
    sysm = System(dk.model)
    n_plate = len(square_plate_mesh(2)[0])
    centre = int(dk.model.constraints[0].conn[0, 0])
    assert chord_nodes(dk.model).all()                     # the body's node included
    state = kicked(sysm, n_plate, centre)
    assert np.abs(dk.model.constraints[0].jacobian(state)[0] @
                  state.v[dk.model.constraints[0].conn[0]].ravel()).max() < 1e-14
    step = make_step(dk.steps[0], sysm, dk)
    step.run(state, None)
    assert step.steps == 200 and step.cuts == 0
    hist = step.history
    E = np.array([r["total"] for r in hist])
    P = np.array([r["linear_momentum"] for r in hist])
    L = np.array([r["angular_momentum"] for r in hist])
    assert np.abs(E - E[0]).max() <= 1e-8 * abs(E[0])
    assert np.linalg.norm(P - P[0], axis=1).max() <= 1e-8 * np.linalg.norm(P[0])
    assert np.linalg.norm(L - L[0], axis=1).max() <= 1e-8 * np.linalg.norm(L[0])
    assert np.abs(dk.model.constraints[0].gap(state)).max() <= 1e-10
    assert max(r["strain"] for r in hist) > 1e-2 * hist[0]["kinetic"]


def test_the_step_tangent_of_shells_a_welded_body_and_a_hinge_matches_finite_differences():
    """The energy-conserving step's effective tangent (shell nodes and the welded body turned
    by Cayley parameters, the weld and a revolute joint to the ground at an oblique axis in the
    Cayley form of :mod:`fem.constraints.joint`, the body's full inertia) equals a central
    difference of its residual along Newton's corrections (every unknown, multipliers too) to
    1e-6 relative, at a moving, deformed state and a large step (0.4 rad rotations)."""

    rng = np.random.default_rng(12)
    d = welded_body_deck(0.01, 1)
    d["joints"].append({"name": "hinge", "type": "revolute", "ground": [1],
                        "points": [[-0.1, 0.05, 0.02]], "axis": [0.3, 1.0, 0.2]})
    dk = deck_io.from_dict(d)
    sysm = System(dk.model)
    step = make_step(dk.steps[0], sysm, dk)
    integ, s0 = moving_ec_start(sysm, step, rng, 0.01)
    n = s0.n_nodes
    integ.start_step(s0)
    s1 = s0.copy()
    s1.t = 0.01
    du = np.zeros((n, 6))
    du[:, :3], du[:, 3:] = 0.02 * rng.normal(size=(n, 3)), 0.4 * rng.normal(size=(n, 3))
    sysm.update(s1, du)
    s1.multipliers[:] = rng.normal(size=s1.multipliers.shape)       # joint forces at work
    kin = integ.kinematics(s0, s1)
    assert kin.on[:n - 1].all()                                    # plate and body (not ground)
    K, fd = fd_step_tangent(integ, sysm, s0, s1)
    assert np.abs(K - fd).max() <= 1e-6 * np.abs(fd).max()


# --- 4. an eccentric stiffener, hinged ----------------------------------------------------------

def stiffened_deck(formulation: str, joints: bool) -> dict:
    """A 1 x 1 aluminium plate (8 x 8, thickness 0.01) with a rib along y = 0.5 (a beam whose
    elastic axis is 0.025 below the plate's nodes: end offsets), hinged along x = 0 and x = 1
    (revolute joints to the ground, axis y) or simply supported there (ux, uy, uz, rx, rz);
    pressure 1e3 (co-rotational: 1e5, a nonlinear static step in 4 increments)."""
    coords, tri, ids = square_plate_mesh(8)
    rib = ids[np.isclose(coords[:, 1], 0.5)]
    edge = ids[np.isclose(coords[:, 0], 0) | np.isclose(coords[:, 0], 1)]
    nonlinear = formulation == "corotational"
    d = {"model": {"dim": 3},
         "materials": [{"name": "al", "E": 7e10, "nu": 0.3}],
         "sections": [{"name": "rib", "A": 4e-4, "Iy": 1.33e-8, "Iz": 3.33e-9, "J": 1e-9}],
         "nodes": {"coordinates": coords.tolist()},
         "elements": [{"name": "plate", "type": "shell", "formulation": formulation,
                       "material": "al", "thickness": 0.01, "connectivity": tri.tolist()},
                      {"name": "rib", "type": "beam", "formulation": formulation,
                       "material": "al", "section": "rib", "orientation": [0.0, 1.0, 0.0],
                       "offsets": [0.0, 0.0, -0.025],
                       "connectivity": np.column_stack([rib[:-1], rib[1:]]).tolist()}],
         "loads": [{"name": "p", "elements": "plate", "pressure": 1e5 if nonlinear else 1e3}],
         "steps": [{"name": "s", "type": "static", "nonlinear": nonlinear, "increments": 4}]}
    if not nonlinear:
        del d["steps"][0]["increments"]
    if joints:
        d["joints"] = [{"name": "hinges", "type": "revolute", "ground": edge.tolist(),
                        "axis": [0.0, 1.0, 0.0]}]
    else:
        d["supports"] = [{"nodes": edge.tolist(), "fixed": ["ux", "uy", "uz", "rx", "rz"]}]
    return d


@pytest.mark.parametrize("formulation", ["linear", "corotational"])
def test_an_eccentrically_stiffened_plate_on_hinges_is_the_plate_on_supports(formulation):
    """The hinged plate and the supported one agree to 1e-10 (displacements, rotations), the
    hinges carry the whole pressure load ``p a^2`` (co-rotational: the vertical part, the
    membrane pulls are equal and opposite), and the rib works (the midspan deflection on the
    rib line is 0.53 of the free edge's, co-rotational 0.84: the membrane carries more)."""
    dk, sysm, state, _ = solve(stiffened_deck(formulation, joints=True))
    s_ref = solve(stiffened_deck(formulation, joints=False))[2]
    n = len(s_ref.u)
    assert max_rel(state.u[:n], s_ref.u) <= 1e-10
    assert max_rel(state.rotation_vectors()[:n], s_ref.rotation_vectors()) <= 1e-10
    p = dk.model.loads[0].pressure
    force = sysm.outputs(state)["hinges"]["force"].sum(axis=0)
    assert force[2] == pytest.approx(-p, rel=1e-10)
    assert abs(force[0]) <= 1e-10 * abs(p) and abs(force[1]) <= 1e-10 * abs(p)
    X = dk.model.X[:n]
    mid_rib = np.flatnonzero(np.isclose(X[:, 0], 0.5) & np.isclose(X[:, 1], 0.5))[0]
    mid_edge = np.flatnonzero(np.isclose(X[:, 0], 0.5) & np.isclose(X[:, 1], 0.0))[0]
    assert abs(state.u[mid_rib, 2]) < 0.9 * abs(state.u[mid_edge, 2])
