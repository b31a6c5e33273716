"""Linearize steps with 3D co-rotational superelements (issue 33 item 5).

The element blocks of a superelement's inertia about rest in a turning frame
(:meth:`fem.inertia.floating3d.FloatingInertia3D.linear_blocks`) against central differences of
d'Alembert's forces of the recovered nodes, computed from their motion seen from the inertial
frame (second differences in time); the linearize step of a non-spinning superelement against a
plain modal step of the same model and the full beams; and Kane's cantilever spinning as one
superelement (fixed-interface modes and their static modal derivatives) against the 20
co-rotational beams it was reduced from, linearized about the same spin (reduced on the root
alone, against the 40 beams at the nondimensional spins 0, 2, 5 and 10:
cases/spinning_blade_superelement).
"""

import copy

import numpy as np
import pytest
from helpers import solve
from test_superelement_corot3d import CENTRE, SPIN, central, deformed, files, model  # noqa: F401

from benchmarks.cms import kane_beam
from fem import rotations as so3
from fem.errors import ModelError
from fem.inertia import inertia_groups
from fem.io import superelement_file

#: Kane's beam: sqrt(EI / (rho A L^4)) (rad/s), the unit of the nondimensional spin
KANE_UNIT = np.sqrt(1.4e4 / (1.2 * 10.0**4))


def along(g, state, e):
    """``state`` moved by the element vector ``e``: translations, spatial spins, ``eta``."""
    out = state.copy()
    n = g.conn[0]
    E = e[:g.nd].reshape(g.nen, g.ndn)
    out.u[n, :3] += E[:, :3]
    out.rot[n] = so3.rotate_spatial(out.rot[n], E[:, 3:6])
    out.internal[g.internal_start:g.internal_start + g.n_internal] += e[g.nd:]
    return out


def dalembert(x, g, state, Omega, c, vel, acc, h=1e-4):
    """d'Alembert's force on the element's coordinates at ``t = 0`` of the motion ``q(t) = q +
    t vel + t^2 acc / 2`` (spins: ``exp(hat(t w + t^2 al / 2)) R``) relative to the frame
    turning at ``Omega`` about ``c``, from the absolute motion: the recovered positions ``Y =
    Q(t) (y - c) + c``, ``Q = exp(t hat(Omega))``, and body rates ``V = vee((Q R_a)^T (Q
    R_a)') + w'`` by differences in time; then the virtual work of ``m Y''`` through ``J_y`` and
    of the rotary inertia's Euler terms (``J V'`` through ``J_V``, ``R_a (W_a x sum J V)`` on
    node a's spin)."""
    W = so3.hat(Omega)

    def at(t):
        s = along(g, state, t * vel + 0.5 * t * t * acc)
        fr = g.local_frame(s)
        y, w = g.recovered(fr)
        Q = so3.expm(t * Omega)
        return (y - c) @ Q.T + c, Q @ fr.Ra, w

    (Ym, Am, wm), (Y0, A0, w0), (Yp, Ap, wp) = at(-h), at(0.0), at(h)
    assert np.allclose(A0, g.local_frame(state).Ra) and W.shape == (3, 3)
    Ydd = (Yp - 2 * Y0 + Ym) / h**2
    Wm, Wp = so3.logm(Am.T @ A0) / h, so3.logm(A0.T @ Ap) / h
    Vm, Vp = Wm + (w0 - wm) / h, Wp + (wp - w0) / h
    Jy, JV = x.velocity_jacobians(g.local_frame(state))
    f = np.einsum("nik,ni->k", Jy, x.m * Ydd) + np.einsum("nik,ni->k", JV, x.J * (Vp - Vm) / h)
    f[g.tr[0]] += A0 @ np.cross(0.5 * (Wm + Wp), (x.J * 0.5 * (Vm + Vp)).sum(axis=0))
    return f


def test_blocks_in_a_turning_frame_equal_central_differences(files):  # noqa: F811
    """About a deformed, turned state at rest in a frame spinning at (0.5, 1, 2) rad/s about an
    axis off the origin: ``f`` equals d'Alembert's force of the absolute motion, ``D`` and ``M``
    central differences of it in the velocities and accelerations (to 1e-6; measured 7e-9,
    1.4e-8, 8e-8: the time differences' truncation, falling as h^2), ``K`` central differences
    of ``f`` in the coordinates (1e-7; measured 5e-11); ``D`` is skew (gyroscopic and
    Coriolis). A state where the superelement moves is refused."""
    _, sysm, g = model(files)
    s0 = sysm.reference_state()
    x = inertia_groups(sysm, s0).extras[0]
    s = deformed(g, s0, np.random.default_rng(11))
    f, M, D, K = (b[0] for b in x.linear_blocks(s, SPIN, CENTRE))
    n = g.nde
    zero = np.zeros(n)
    ref = dalembert(x, g, s, SPIN, CENTRE, zero, zero)
    assert np.abs(f - ref).max() < 1e-6 * np.abs(ref).max()
    fd = central(g, lambda st: x.linear_blocks(st, SPIN, CENTRE)[0][0], s)
    assert np.abs(K - fd).max() < 1e-7 * np.abs(fd).max()
    eye, step = np.eye(n), 0.1
    Dfd = np.column_stack([(dalembert(x, g, s, SPIN, CENTRE, step * eye[j], zero)
                            - dalembert(x, g, s, SPIN, CENTRE, -step * eye[j], zero)) / (2 * step)
                           for j in range(n)])
    assert np.abs(D - Dfd).max() < 1e-6 * np.abs(Dfd).max()
    Mfd = np.column_stack([(dalembert(x, g, s, SPIN, CENTRE, zero, step * eye[j])
                            - dalembert(x, g, s, SPIN, CENTRE, zero, -step * eye[j])) / (2 * step)
                           for j in range(n)])
    assert np.abs(M - Mfd).max() < 1e-6 * np.abs(Mfd).max()
    assert np.abs(D + D.T).max() < 1e-12 * np.abs(D).max()
    s.internal_v[:] = 0.1                                # moving: refused, not linearized wrong
    with pytest.raises(ModelError, match="moves.*not built yet.*steps\\[i\\]\\.spin"):
        x.linear_blocks(s, SPIN, CENTRE)


# --- Kane's cantilever as one superelement ------------------------------------------------------
def kane_file(base, beams: int, modes: int, interface=(1,)) -> str:
    """Kane's beam of ``beams`` elements reduced on ``interface`` (the root, node 1, by default;
    the first is the frame's node) to ``modes`` fixed-interface modes and their static modal
    derivatives, lumped mass: the file's name in ``base``."""
    name = f"kane{beams}_{modes}_{'_'.join(map(str, interface))}.h5"
    if not (base / name).exists():
        rod = kane_beam(beams)
        rod["steps"] = [{"name": "reduce", "type": "cms_reduce", "interface": list(interface),
                         "mass": "lumped", "modes": modes, "modal_derivatives": True,
                         "file": name}]
        steps = solve(rod, base_dir=str(base))[3]
        superelement_file.write(str(base / name), steps[0].data)
    return name


def kane(base, beams: int, file: str | None, steps: list, interface=(1,)) -> list:
    """Kane's cantilever clamped at node 1, as beams or (``file``) as one 3D co-rotational
    superelement on the nodes ``interface``, run through ``steps``: the steps."""
    d = kane_beam(beams)
    if file is not None:
        if len(interface) == 1:
            d["nodes"] = {"ids": [1], "coordinates": [[0.0, 0.0, 0.0]]}
        d["elements"] = [{"name": "se", "type": "superelement", "file": file,
                          "formulation": "corotational", "nodes": list(interface)}]
    d["supports"] = [{"nodes": [1], "fixed": ["all"]}]
    d["steps"] = copy.deepcopy(steps)
    return solve(d, base_dir=str(base))[3]


def spun(base, beams: int, file: str | None, spin: float, interface=(1,)) -> np.ndarray:
    """The 4 lowest frequencies (rad/s; lag 1, flap 1, lag 2, flap 2 for a spin) of a linearize
    step at the nondimensional ``spin`` about z."""
    step = {"name": "lin", "type": "linearize", "spin": [0.0, 0.0, spin * KANE_UNIT],
            "modes": 4, "method": "dense"}
    return np.sort(kane(base, beams, file, [step], interface)[0].eigen.frequencies)


@pytest.fixture(scope="module")
def kane_files(tmp_path_factory):
    """The folder holding the reductions."""
    return tmp_path_factory.mktemp("kane")


def test_non_spinning_superelement_equals_its_modal_step_and_the_beams(kane_files):
    """Without spin, the superelement's linearize step gives the frequencies of a plain modal
    step of the same model (to 1e-8), and the full beams' (to 1e-7: the 4 kept fixed-interface
    modes are the clamped beam's own, so the reduction's error on them is round-off)."""
    file = kane_file(kane_files, 20, 4)
    lin = [{"name": "lin", "type": "linearize", "modes": 4, "method": "dense"}]
    modal = [{"name": "modal", "type": "modal", "modes": 4}]
    p = np.sort(kane(kane_files, 20, file, lin)[0].eigen.frequencies)
    w = np.sort(kane(kane_files, 20, file, modal)[0].frequencies())
    np.testing.assert_allclose(p, w, rtol=1e-8)
    full = np.sort(kane(kane_files, 20, None, modal)[0].frequencies())
    np.testing.assert_allclose(p, full, rtol=1e-7)


def test_spinning_cantilever_on_a_frame_at_its_tip_matches_the_beams(kane_files):
    """Kane's cantilever (20 beams) spinning at the nondimensional spin Omega / sqrt(EI / (rho A
    L^4)) = 10 as one superelement with root and tip as the interface and the tip first, so the
    frame is the free tip's triad (it moves and turns with the blade's deflection: every term of the
    inertia's blocks is at work, the frame's turn, the levers, the rotary inertia on it): with
    4 modes and their 10 derivatives, lag and flap frequencies within 0.5% of the beams'
    linearize step (measured 0.39%, 0.08%, 0.10%, 0.10%; with the frame at the root 0.37%, 8
    modes 0.07%). The tip's constraint modes carry the stretch: reduced on the root alone, 4
    modes give the first lag frequency 3.0% high, 6 modes 0.87%, 8 modes 0.34%, the basis
    cases/spinning_blade_superelement checks at the spins 0, 2, 5 and 10 (tests/test_cases.py)."""
    file = kane_file(kane_files, 20, 4, (2, 1))
    np.testing.assert_allclose(spun(kane_files, 20, file, 10.0, (2, 1)),
                               spun(kane_files, 20, None, 10.0), rtol=5e-3)
