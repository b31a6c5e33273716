"""The compiled energy-conserving step of planar multibody models is the general path's.

Rigid bars on 2D revolute joints (issue 32, the chain of ``benchmarks/multibody.py``), alone and
with a flexible co-rotational beam pinned at offsets (its nodes turn by Cayley parameters, so
the joints' rows there are carried over by the secant): the compiled residual, reference and
tangent at perturbed states (multipliers too) against :class:`fem.integrators.midpoint`'s; whole
runs, iteration by iteration, against the general path (MUMPS); the banded LU of
:func:`fem.integrators.planar_joints.joint_order` against dense LU; the energy of the falling
chain; a step the compiled loop gives up; and the models it does not take, with the reason
logged.
"""

import copy
import logging

import numpy as np
import pytest

from fem.integrators import planar
from fem.integrators.midpoint import MidpointRule
from fem.io.deck import from_dict
from fem.run import make_step
from fem.system import System

pytest.importorskip("numba")

L, M, G = 0.1, 1.0, 9.81


def chain(n: int = 10, steps: int = 60, beam: bool = False, weld: bool = False) -> dict:
    """``n`` bars (1 kg, 0.1 m) pinned end to end and to the ground, released horizontal.

    ``beam``: a flexible beam of 4 co-rotational elements pinned to the last bar's end, its
    first node 0.02 m beyond the pin (offsets on both sides). ``weld``: the beam welded there
    instead (a fixed joint: its angle row at a Cayley node) and the pivot driven, turning at
    2 rad/s (a driven revolute joint's angle row).
    """
    X = [[(i + 0.5) * L, 0.0] for i in range(n)]
    joints = [{"name": "pivot", "type": "revolute", "ground": [1], "points": [[0.0, 0.0]]},
              {"name": "pins", "type": "revolute", "pairs": [[i, i + 1] for i in range(1, n)],
               "points": [[i * L, 0.0] for i in range(1, n)]}]
    deck = {"model": {"dim": 2, "title": f"chain of {n} bars"},
            "nodes": {"coordinates": X},
            "bodies": [{"name": "bars", "nodes": list(range(1, n + 1)), "mass": M,
                        "inertia": M * L**2 / 12}],
            "joints": joints,
            "gravity": {"acceleration": [0.0, -G]},
            "steps": [{"name": "fall", "type": "dynamic", "integrator": "energy_conserving",
                       "time_step": 1e-3, "duration": 1e-3 * steps,
                       "output_interval": 1e-3 * steps}]}
    if beam:
        X += [[n * L + 0.02, 0.0], [n * L + 0.42, 0.0]]
        deck["materials"] = [{"name": "m", "E": 1.0e5, "nu": 0.3}]
        deck["sections"] = [{"name": "s", "A": 1e-2, "Iz": 1e-6, "mass_per_length": 1.0,
                             "rotary_inertia_per_length": 1e-4}]
        deck["elements"] = [{"name": "arm", "type": "beam", "formulation": "corotational",
                             "material": "m", "section": "s", "connectivity": [[n + 1, n + 2]],
                             "divisions": 4}]
        joints.append({"name": "elbow", "type": "fixed" if weld else "revolute",
                       "pairs": [[n, n + 1]], "points": [[n * L, 0.0]]})
    if weld:
        deck["functions"] = [{"name": "turn", "type": "steady", "rate": -2.0}]
        joints[0]["drive"] = "turn"
    return deck


def run(deck: dict, general: bool = False, monkeypatch=None):
    """Run the deck's step: final state, (iterations, norms) of every step, the step.

    ``general``: without the compiled step (the reference).
    """
    if general:
        monkeypatch.setattr(planar.PlanarStep, "make", classmethod(lambda cls, integ: None))
    dk = from_dict(copy.deepcopy(deck))
    sysm = System(dk.model)
    state = sysm.reference_state()
    step = make_step(dk.steps[0], sysm, dk)
    its = []
    step.on_step = lambda s: its.append((step._stats["iterations"], list(step.test.norms)))
    step.run(state, None)
    if general:
        monkeypatch.undo()
    return state, its, step


@pytest.mark.parametrize("beam,weld", [(False, False), (True, False), (True, True)])
def test_the_compiled_evaluation_is_the_general_one(beam, weld):
    """Residual, reference, tangent and velocities at perturbed states, multipliers included."""
    state, _, step = run(chain(n=6, steps=20, beam=beam, weld=weld))
    integ = step.integrator
    assert isinstance(integ._planar, planar.PlanarStep)
    assert integ._planar.joints is not None and integ.chord_nodes().any() == beam
    rng = np.random.default_rng(3)
    dm = integ.system.dofmap
    free = (dm.index >= 0) & (dm.index < dm.n_free)
    for _ in range(3):
        s0 = state
        s1 = s0.copy()
        s1.t = s0.t + integ.h
        s1.u[:, :2] += rng.normal(scale=1e-3, size=s1.u[:, :2].shape) * free[:, :2]
        s1.rot += rng.normal(scale=5e-2, size=s1.rot.shape) * free[:, 2]
        s1.multipliers += rng.normal(scale=0.1 * np.abs(s1.multipliers).max(),
                                     size=s1.multipliers.shape)
        integ._planar._last = None
        integ._cache = None
        r, scale, K = integ._planar.evaluate(integ, s0, s1, True)
        v = s1.v.copy()
        s1.v[:] = 0.0
        r_ref, scale_ref, K_ref = MidpointRule.evaluate(integ, s0, s1, True)
        assert np.abs(r - r_ref).max() <= 1e-13 * np.abs(r_ref).max()
        assert np.allclose(scale, scale_ref, rtol=1e-14, atol=0)
        assert np.abs(K - K_ref).max() <= 1e-13 * np.abs(K_ref).max()
        assert np.abs(v - s1.v).max() <= 1e-13 * np.abs(s1.v).max()
        # the joints' part alone: the general path's constraint groups, paired with psi
        f_c, K_c = integ._cayley_rows(integ.kinematics(s0, s1),
                                      *integ.system.constraint_step(s0, s1))
        f, Kj, jt = np.zeros(dm.n_active), np.zeros(len(K)), integ._planar.joints
        jk, on = integ._planar.joint_kernel, integ.chord_nodes()
        jk.revolute(s0.u, s1.u, s0.rot, s1.rot, jt["conn"], jt["offsets"], jt["mpos"],
                    s1.multipliers, jt["scale"], on, jt["edofs"], jt["slot"], True, f, Kj)
        jk.angles(s0.rot, s1.rot, jt["aconn"], jt["ampos"], s1.multipliers, jt["ascale"],
                  jt["atarget"], on, jt["aedofs"], jt["aslot"], True, f, Kj)
        assert len(jt["aconn"]) == 2 * weld
        assert np.abs(f - f_c).max() <= 1e-14 * np.abs(f_c).max()
        # 1e-12: d(jl(t) a)/dt = ((t cos t - sin t) a + ...)/t^2 cancels, amplifying the ulps
        # by which numpy's and libm's sine and cosine differ
        assert np.abs(Kj - K_c).max() <= 1e-12 * np.abs(K_c).max()


@pytest.mark.parametrize("beam,weld", [(False, False), (True, False), (True, True)])
def test_the_compiled_time_step_iterates_as_the_general_path(beam, weld, monkeypatch):
    """The same iterations, the same residual norms and the same states (to 1e-12), against
    the general path with MUMPS; every step compiled.

    The norms agree to 1e-10 of each step's first: the residual resolves no better (its
    inertial part ``2 m (x_1 - x_0) / h^2`` carries ``4 eps |x| m / h^2``, 4e-10 N here, and the
    states differ at round-off).
    """
    calls = []
    iterate = planar.PlanarStep.iterate
    monkeypatch.setattr(planar.PlanarStep, "iterate",
                        lambda self, *a: calls.append(got := iterate(self, *a)) or got)
    deck = chain(steps=40, beam=beam, weld=weld)
    fast, its, step = run(deck)
    monkeypatch.undo()
    assert len(calls) == 40 and all(c is not None for c in calls)
    slow, its_ref, step_ref = run(deck, general=True, monkeypatch=monkeypatch)
    assert step_ref.integrator._planar is None
    assert [i for i, _ in its] == [i for i, _ in its_ref] and sum(i for i, _ in its) >= 75
    for (_, n), (_, n_ref) in zip(its, its_ref, strict=True):
        assert np.abs(np.subtract(n, n_ref)).max() <= 1e-10 * n_ref[0]
    for a, b in ((fast.u, slow.u), (fast.rot, slow.rot)):
        assert np.abs(a - b).max() <= 1e-12 * np.abs(b).max()
    # the multipliers to 1e-9: bodies bring no stiffness to scale the joints' rows with
    # (System._constraint_scales gives 1), and the effective tangent's condition number is
    # about 1e16, so the last correction of a multiplier is as accurate as either LU makes it
    lam, lam_ref = fast.multipliers, slow.multipliers
    assert np.abs(lam - lam_ref).max() <= 1e-9 * np.abs(lam_ref).max()
    # v_1 = 2 (x_1 - x_0) / h - v_0: the positions' round-off times 2 / h, alternating
    assert np.abs(fast.v - slow.v).max() <= 1e-12 * 2 / 1e-3 * np.abs(slow.rot).max()
    E = np.array([r["total"] for r in step.history])       # the energy balance, booked
    E_ref = np.array([r["total"] for r in step_ref.history])
    T = max(r["kinetic"] for r in step_ref.history)
    assert T > 0.1 and np.abs(E - E_ref).max() <= 1e-12 * T


def test_the_falling_chain_conserves_energy():
    """Ideal joints do no work: the bars' kinetic energy is their potential energy lost
    (benchmarks/multibody.py's ``energy`` column, through the compiled step)."""
    n = 10
    state, _, step = run(chain(n=n, steps=200))
    k = np.arange(n)
    T = 0.5 * M * np.sum(state.v[k, :2] ** 2) + 0.5 * M * L**2 / 12 * np.sum(state.v[k, 2] ** 2)
    V = M * G * np.sum(state.u[k, 1])
    assert T > 1.0                                   # the chain fell
    assert abs(T + V) <= 1e-9 * T
    x = step.system.model.X[k, :2] + state.u[k, :2]  # the pins hold: bar ends meet
    a, b = state.rot[k[:-1]], state.rot[k[1:]]
    ends = x[:-1] + 0.5 * L * np.column_stack([np.cos(a), np.sin(a)])
    starts = x[1:] - 0.5 * L * np.column_stack([np.cos(b), np.sin(b)])
    assert np.abs(ends - starts).max() <= 1e-12


def test_the_banded_lu_of_the_joint_numbering_is_dense_lu():
    """A chain's effective tangent (multipliers after their nodes, no pivoting) solved as
    LAPACK's LU with partial pivoting solves it, to 1e-12."""
    state, _, step = run(chain(n=8, steps=10, beam=True))
    integ = step.integrator
    lu = integ._planar.banded(step)
    n = integ.system.n_free
    assert lu is not None and lu.kl < 12 and n > 40
    s1 = state.copy()
    s1.t = state.t + integ.h
    integ.start_step(state)
    integ._planar._last = None
    _, _, K = integ._planar.evaluate(integ, state, s1, True)
    asm = integ.system.assembler
    A = asm.to_scipy(K).toarray()
    b = np.random.default_rng(5).normal(size=n)
    lu.fill(K)
    x, report = lu.solve(b)
    x_ref = np.linalg.solve(A, b)
    assert np.abs(x - x_ref).max() <= 1e-12 * np.abs(x_ref).max()
    assert report.backward_error <= 1e-14


@pytest.mark.parametrize(("change", "reason"), [
    ("prismatic", "constraint group 'slide': driven prismatic joints are not compiled"),
    ("spring", "element group 'pins_force' (joint_force): only co-rotational 2D beams and "
               "rigid bodies are compiled"),
    ("3d", "not a planar model"),
])
def test_a_model_it_does_not_take_falls_back_with_the_reason_logged(change, reason, caplog):
    deck = chain(n=4, steps=3)
    if change == "prismatic":
        deck["joints"].append({"name": "slide", "type": "prismatic", "ground": [4],
                               "points": [[0.35, 0.0]], "axis": [1.0, 0.0], "drive": "push"})
        deck["functions"] = [{"name": "push", "type": "steady", "rate": 0.1}]
    elif change == "spring":                        # a force element on the pins
        deck["joints"][1].update(stiffness=20.0, damping=0.05)
    else:                                           # the chain in 3D, hinges about z
        deck["model"]["dim"] = 3
        deck["nodes"]["coordinates"] = [x + [0.0] for x in deck["nodes"]["coordinates"]]
        deck["gravity"]["acceleration"] += [0.0]
        deck["bodies"][0]["inertia"] = [[1e-3, 0, 0], [0, 1e-3, 0], [0, 0, M * L**2 / 12]]
        for j in deck["joints"]:
            j["points"] = [p + [0.0] for p in j["points"]]
            j["axis"] = [0.0, 0.0, 1.0]
    with caplog.at_level(logging.INFO, logger="fem.integrators.planar"):
        _, _, step = run(deck)
    assert step.integrator._planar is None
    assert any(reason in m for m in caplog.messages)


def test_a_step_the_compiled_loop_cannot_finish_goes_the_general_way(monkeypatch):
    """Two iterations allowed at a tight tolerance: the compiled loop gives up where three are
    needed, the general path halves the step as it always does, and the run ends where the
    general path alone ends."""
    deck = chain(n=6, steps=5)
    deck["steps"][0].update(max_iterations=2, time_step=0.02, duration=0.1,
                            output_interval=0.1)
    calls = []
    iterate = planar.PlanarStep.iterate
    monkeypatch.setattr(planar.PlanarStep, "iterate",
                        lambda self, *a: calls.append(got := iterate(self, *a)) or got)
    fast, its, step = run(deck)
    monkeypatch.undo()
    slow, its_ref, step_ref = run(deck, general=True, monkeypatch=monkeypatch)
    assert None in calls and step.cuts == step_ref.cuts > 0
    assert [i for i, _ in its] == [i for i, _ in its_ref]
    assert np.abs(fast.u - slow.u).max() <= 1e-12 * np.abs(slow.u).max()
