"""Inputs of the compiled pairs' test: groups above the dispatch threshold, at large states.

What ``tests/test_kernel_pairs.py`` evaluates every element pair of :data:`fem.kernels.PAIRS`
on (``Pair.samples``, registered by ``beam3d_jit``, ``beam2d_jit`` and ``shell_jit``): networks
of beams on shared nodes numbered in no order, connectivity running either way, random sections
and orientations; a jittered, warped triangle mesh, of an isotropic or an unsymmetric laminate
section; states strained and carried through a rigid turn of 2.5 rad with nodal rotations of
order 1 rad on top; steps of order 1 rad from such a state, the rotation slots holding rotation
vectors or Cayley parameters. The mid-point configuration and the increments are the
energy-conserving integrator's (:func:`fem.integrators.inertia.step_kinematics` and
``midpoint_state``), written here with the rotations alone (the elements layer).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from fem import kernels
from fem import rotations as so3
from fem.model import Layer, OrthotropicMaterial, ShellSection
from fem.state import State

_AXIS = np.array([1.0, -2.0, 0.5]) / np.linalg.norm([1.0, -2.0, 0.5])


def _size() -> int:
    """Elements of a sample group: above the dispatch threshold, as a model's group would be."""
    return kernels.MIN_ELEMENTS + 36


def spatial_beams(rng, theory: str, shared: bool = True, offsets: float = 0.0):
    """``(Beam, X)``: 3D co-rotational beams of random sections and orientations.

    ``shared``: between 60 shared nodes, else each beam on its own two nodes; ``offsets``: rigid
    end offsets of that size, at random.
    """
    from fem.elements.beam import Beam

    E = _size()
    if shared:
        X = rng.normal(size=(60, 3)) * 2.0
        pairs = rng.integers(0, len(X), size=(4 * E, 2))
        conn = pairs[np.linalg.norm(X[pairs[:, 1]] - X[pairs[:, 0]], axis=1) > 1.0][:E]
    else:
        X = rng.normal(size=(2 * E, 3)) * 2.0
        conn = np.arange(2 * E).reshape(E, 2)
    off = offsets * rng.normal(size=(E, 2, 3)) if offsets else None
    g = Beam("b", conn, X, 3, formulation="corotational", theory=theory,
             E=rng.uniform(1, 3, E) * 210.0, G=80.0, A=rng.uniform(1, 2, E),
             Iy=rng.uniform(0.02, 0.08, E), Iz=rng.uniform(0.02, 0.08, E), J=0.06, Ay=1.5,
             Az=1.6, ref=rng.normal(size=(E, 3)), offsets=off)
    return g, X


def planar_beams(rng, theory: str):
    """``(Beam, X)``: 2D co-rotational beams of random sections between 60 shared nodes."""
    from fem.elements.beam import Beam

    E = _size()
    X = np.zeros((60, 3))
    X[:, :2] = rng.normal(size=(60, 2)) * 2.0
    pairs = rng.integers(0, len(X), size=(4 * E, 2))
    conn = pairs[np.linalg.norm(X[pairs[:, 1]] - X[pairs[:, 0]], axis=1) > 1.0][:E]
    g = Beam("b", conn, X, 2, formulation="corotational", theory=theory,
             E=rng.uniform(1, 3, E) * 210.0, G=80.0, A=rng.uniform(1, 2, E),
             Iz=rng.uniform(0.02, 0.08, E), Ay=1.5)
    return g, X


def shells(rng, laminate: bool = False):
    """``(CorotShell, X)``: 128 triangles of a jittered, warped unit square.

    Isotropic of random stiffness and thickness, or an unsymmetric [0/45/90] laminate (its
    membrane-bending coupling in the local stiffness).
    """
    from fem.elements.shell.corot import CorotShell

    X, conn = triangle_mesh(8, rng)                    # 128 triangles
    if laminate:
        cfrp = OrthotropicMaterial("cfrp", E1=25e4, E2=1e4, G12=0.5e4, nu12=0.25, rho=1.5)
        section = ShellSection("lam", tuple(Layer(cfrp, 0.01, a) for a in (0, 45, 90)))
        return CorotShell("s", conn, X, 3, section=section), X
    return CorotShell("s", conn, X, 3, E=rng.uniform(1e4, 3e4, len(conn)), nu=0.3,
                      h=rng.uniform(0.02, 0.05, len(conn))), X


def triangle_mesh(n: int, rng) -> tuple[NDArray, NDArray]:
    """``(X, conn)``: ``2 n^2`` triangles of a jittered, warped unit square (shared nodes)."""
    x = np.linspace(0.0, 1.0, n + 1)
    XX, YY = np.meshgrid(x, x)
    X = np.column_stack([XX.ravel(), YY.ravel(), 0.3 * np.sin(3 * XX.ravel()) * YY.ravel()])
    X[:, :2] += rng.uniform(-0.2, 0.2, size=(len(X), 2)) / n
    k = (np.arange(n)[None, :] + (n + 1) * np.arange(n)[:, None]).ravel()
    conn = np.concatenate([np.column_stack([k, k + 1, k + n + 2]),
                           np.column_stack([k, k + n + 2, k + n + 1])])
    return X, conn


def spatial_state(X: NDArray, rng, spread: float = 0.8, strain: float = 0.05) -> State:
    """Random strains and nodal rotations of size ``spread``, then a rigid turn of 2.5 rad."""
    Q = so3.expm(2.5 * _AXIS)
    st = State.reference(3, len(X))
    st.u[:] = (X + strain * rng.normal(size=X.shape)) @ Q.T + np.array([0.3, -1.2, 2.0]) - X
    st.rot[:] = so3.matrix_to_quat(Q @ so3.expm(spread * rng.normal(size=(len(X), 3))))
    return st


def planar_state(X: NDArray, rng, strain: float = 0.05) -> State:
    """Random strains and nodal rotations of about 0.8 rad, then a rigid turn of 2.5 rad."""
    c, s = np.cos(2.5), np.sin(2.5)
    Q = np.array([[c, -s], [s, c]])
    st = State.reference(2, len(X))
    st.u[:, :2] = (X[:, :2] + strain * rng.normal(size=(len(X), 2))) @ Q.T - X[:, :2]
    st.rot[:] = 2.5 + 0.8 * rng.normal(size=len(X))
    return st


def spatial_step(X: NDArray, rng, cayley: str, strain: float = 0.05):
    """``(s0, s1, sm, inc (n, 6), on (n,))``: a step of order 1 rad from a large state.

    ``s1`` is ``s0`` turned rigidly by 1 rad about its centre, strained, its nodes turned by a
    further 0.5 rad; ``sm`` the mid-point configuration, ``inc`` the increments, with the
    Cayley parameter of ``R1 R0^T`` in the rotation slots of the nodes ``on`` (``cayley``:
    ``"none"``, ``"all"`` or ``"mixed"``: at random).
    """
    s0 = spatial_state(X, rng, strain=strain)
    s1 = stepped(X, s0, rng, strain)
    turn = so3.quat_mul(s1.rot, so3.quat_conj(s0.rot))                # R1 R0^T
    theta = so3.rotvec_from_quat(turn)
    sm = s0.copy()
    sm.u[:] = 0.5 * (s0.u + s1.u)
    sm.rot[:] = so3.rotate_spatial(s0.rot, 0.5 * theta)
    n = len(X)
    on = {"none": np.zeros(n, dtype=bool), "all": np.ones(n, dtype=bool),
          "mixed": rng.random(n) < 0.5}[cayley]
    inc = np.column_stack([s1.u - s0.u, theta])
    inc[on, 3:] = so3.cay_from_quat(turn)[on]
    return s0, s1, sm, inc, on


def stepped(X: NDArray, s0: State, rng, strain: float = 0.02) -> State:
    """``s0`` a step later, turned rigidly by 1 rad about its centre.

    Strained by ``strain``, its nodes turned by a further 0.5 rad each (the compiled kernels'
    step tests, ``tests/test_shell_kernel.py``, ``tests/test_beam_ec_kernel.py``).
    """
    axis = np.array([0.3, 0.8, -0.5])
    Q = so3.expm(axis / np.linalg.norm(axis))
    x0 = X + s0.u
    c = x0.mean(axis=0)
    s1 = s0.copy()
    s1.u[:] = (x0 - c + strain * rng.normal(size=X.shape)) @ Q.T + c - X
    s1.rot[:] = so3.matrix_to_quat(Q @ s0.rotation_matrices()
                                   @ so3.expm(0.5 * rng.normal(size=(len(X), 3))))
    return s1


def planar_step(X: NDArray, rng, strain: float = 0.05):
    """``(s0, s1, sm, inc (n, 3))``: a planar step of order 1 rad from a large state."""
    s0 = planar_state(X, rng, strain=strain)
    c, s = np.cos(1.0), np.sin(1.0)
    Q = np.array([[c, -s], [s, c]])
    x0 = X[:, :2] + s0.u[:, :2]
    mid = x0.mean(axis=0)
    s1 = s0.copy()
    s1.u[:, :2] = (x0 - mid + strain * rng.normal(size=x0.shape)) @ Q.T + mid - X[:, :2]
    s1.rot[:] = s0.rot + 1.0 + 0.5 * rng.normal(size=len(X))
    sm = s0.copy()
    sm.u[:] = 0.5 * (s0.u + s1.u)
    sm.rot[:] = 0.5 * (s0.rot + s1.rot)
    inc = np.column_stack([s1.u[:, :2] - s0.u[:, :2], s1.rot - s0.rot])
    return s0, s1, sm, inc


def near_pi(g, X: NDArray) -> State:
    """The second node of every (unshared) beam turned by nearly pi about its local y axis.

    The local rotations' trace test sends them through Shepperd's quaternion in both codes.
    """
    st = State.reference(3, len(X))
    st.rot[g.conn[:, 1]] = so3.quat_from_rotvec(g.E0[:, :, 1] * (np.pi - 0.05))
    return st
