"""Compiled force and tangent of 2D co-rotational beams (numba): energy-conserving and static.

:meth:`fem.elements.beam.Beam.conserving` of planar co-rotational beams in numpy is about 60
small array operations a call (``frames2d`` geometry, ``bw_derivative`` and ``geometric``,
``beam_basic`` strains and their Jacobians): 40% of a time step of the flexible pendulum of
``benchmarks/small_models.py`` (100 beams), whose cost is per call, not per element. The kernel
(:mod:`fem.elements.beam.beam2d_ec_kernel`) does the same element by element; the numpy code stays
the reference the tests compare it with (to 1e-13 relative, ``tests/test_beam2d_ec_kernel.py``)
and the fallback where numba is missing or ``FEM_JIT`` is ``0``. The organisation is the 3D
beams' (:mod:`fem.elements.beam.beam3d_jit`): what does not change between calls (connectivity,
reference chords, ``l0``, the nonzeros of ``S`` and the second-order strains) is prepared once
per group (:func:`prepare`), and the call only checks the state's size and allocates the
outputs. The static force and tangent (:func:`evaluate`, :mod:`fem.elements.beam.beam2d_kernel`)
take the same prepared data; the static increment of small planar models
(:mod:`fem.analysis.planar_static`) calls them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from fem import kernels
from fem.elements.beam.basic import _QUADRATIC_2D, _hessians
from fem.kernels import Kernel, writable

#: Groups from this many elements take the compiled energy-conserving force: a dynamic run
#: evaluates it thousands of times and numpy's cost is per call (0.25-0.34 ms a call for one
#: element, 0.64-0.76 ms for 100, 1.4 ms for 300, against 7-9, 25 and 58 us compiled), so the
#: first call's numba import and cached kernel (0.4 s) pay back within 1500 calls (500 steps)
#: even for one element
MIN_CONSERVING = 1

# fem.kernels.MIN_ELEMENTS: groups from this many elements evaluate the static force and tangent
# compiled in the general path (Beam.evaluate), as the 3D beams do; the load-control increments
# of planar beam models call the kernel whatever their size (analysis.planar_static)

_ec_kernel = Kernel("fem.elements.beam.beam2d_ec_kernel")
_kernel = Kernel("fem.elements.beam.beam2d_kernel")


_family = kernels.Family(_kernel, _ec_kernel, MIN_CONSERVING)
enabled = _family.enabled      # (conserving=False): whether the kernel can be used
compiled = _family.compiled    # (n, conserving=False): whether a group of n takes it


@dataclass(frozen=True)
class Prepared:
    """What the kernel needs of a group besides the state: computed once (:func:`prepare`)."""

    conn: NDArray       # (E, 2) int64 node indices
    chord0: NDArray     # (E, 2) reference chords between the nodes, X_q - X_p (x, y)
    l0: NDArray         # (E,) reference lengths
    Sc: NDArray         # (E, 4) S_00, S_11, S_12, S_22 (the nonzeros of S)
    Hc: NDArray         # (E, 3) h11, h12, h22: the axial strain's Hessian in (tp, tq)
    n_nodes: int        # nodes a state must have at least (conn.max() + 1)


def prepare(conn: NDArray, X: NDArray, l0: NDArray, basic) -> Prepared:
    """The kernel's data of a group, computed once.

    ``conn (E, 2)``, nodal coordinates ``X (E, 2, 3)``, ``l0`` and the group's
    :class:`~fem.elements.beam.basic.BasicBeam` ``basic``. The kernel has the linear strain map
    ``A = diag(1, -l0, l0)``, the block structure of ``S`` and an axial strain with the only
    second-order terms written in; a basic beam of any other form is refused here, loudly,
    rather than evaluated wrongly.
    """
    E = len(l0)
    A = np.zeros((E, 3, 3))
    A[:, 0, 0], A[:, 1, 1], A[:, 2, 2] = 1.0, -l0, l0
    S = basic.S
    if not (basic.dim == 2 and basic.nonlinear and np.array_equal(basic.A, A)
            and not S[:, 0, 1:].any() and not S[:, 1:, 0].any()
            and np.array_equal(S[:, 1, 2], S[:, 2, 1])
            and np.array_equal(basic.H0, _hessians(_QUADRATIC_2D, 3, 3))
            and all((i, j) == (1, 2) for _, i, j in basic.shear_arch)):
        raise RuntimeError("fem.elements.beam.beam2d_ec_kernel assumes the co-rotational 2D "
                           "BasicBeam's A, block-diagonal S and second-order axial strain; this "
                           "group's differ: update the kernel, or run with FEM_JIT=0")
    # H = l0 H0[0] on (tp, tq), plus 2 l0 k on all four entries per shear-arch term (p + q)^2
    H = l0[:, None, None] * basic.H0[0, 1:, 1:]
    for k, _, _ in basic.shear_arch:
        H = H + (2 * l0 * k)[:, None, None]
    conn = np.ascontiguousarray(conn, dtype=np.int64)
    return Prepared(conn=conn,
                    chord0=np.ascontiguousarray((X[:, 1] - X[:, 0])[:, :2], dtype=float),
                    l0=np.ascontiguousarray(l0, dtype=float),
                    Sc=np.ascontiguousarray(np.stack([S[:, 0, 0], S[:, 1, 1], S[:, 1, 2],
                                                      S[:, 2, 2]], axis=1)),
                    Hc=np.ascontiguousarray(np.stack([H[:, 0, 0], H[:, 0, 1], H[:, 1, 1]],
                                                     axis=1)),
                    n_nodes=int(conn.max()) + 1 if E else 0)


def conserving(prep: Prepared, um: NDArray, u0: NDArray, u1: NDArray, v0: NDArray,
               inc: NDArray) -> tuple[NDArray, NDArray, NDArray, NDArray]:
    """Algorithmic force, tangent, energy and basic deformations of the energy-conserving step.

    :meth:`fem.elements.beam.Beam.conserving` of 2D co-rotational beams without offsets,
    element by element (:mod:`fem.elements.beam.beam2d_ec_kernel`): ``um (n, 3)`` the mid-point
    configuration's nodal displacements, ``u0``, ``u1`` those at the step's ends, ``v0 (E, 3)``
    the algorithmic basic deformations at its start and ``inc (E, 6)`` the increments (planar
    rotations are additive: the rotation slots may hold angles or Cayley parameters alike).
    Returns ``f (E, 6)``, ``K (E, 6, 6)``, ``energy (E,)``, ``v1 (E, 3)``.
    """
    um, u0, u1, v0, inc = (writable(a) for a in (um, u0, u1, v0, inc))
    if min(len(um), len(u0), len(u1)) < prep.n_nodes:          # the kernel does not check
        raise IndexError(f"the state has {min(len(um), len(u0), len(u1))} nodes, the beams "
                         f"use {prep.n_nodes}")
    E = len(prep.l0)
    f, K, energy, v1 = np.empty((E, 6)), np.empty((E, 6, 6)), np.empty(E), np.empty((E, 3))
    _ec_kernel.function(um, u0, u1, prep.conn, prep.chord0, prep.l0, prep.Sc, prep.Hc, v0, inc,
                        f, K, energy, v1)
    return f, K, energy, v1


def evaluate(prep: Prepared, rot: NDArray, u: NDArray) -> tuple[NDArray, NDArray]:
    """Internal force ``(E, 6)`` and tangent ``(E, 6, 6)`` of 2D co-rotational beams, compiled.

    :meth:`fem.elements.beam.Beam.evaluate` of a group without offsets at nodal rotations ``rot
    (n,)`` and displacements ``u (n, >=2)``, element by element
    (:mod:`fem.elements.beam.beam2d_kernel`:
    the static increment of planar models calls it, and ``Beam.evaluate`` from
    :data:`MIN_ELEMENTS` elements).
    """
    if not _kernel.enabled():
        raise RuntimeError("the compiled 2D beam kernel needs numba (and FEM_JIT not 0)")
    rot, u = writable(rot), writable(u)
    if min(len(rot), len(u)) < prep.n_nodes:                  # the kernel does not check
        raise IndexError(f"the state has {min(len(rot), len(u))} nodes, the beams use "
                         f"{prep.n_nodes}")
    E = len(prep.l0)
    f, K = np.empty((E, 6)), np.empty((E, 6, 6))
    _kernel.function(u, rot, prep.conn, prep.chord0, prep.l0, prep.Sc, prep.Hc, f, K)
    return f, K


# --- the compiled pairs (fem.kernels.PAIRS): group methods, numpy and compiled -----------------
def evaluate_group(g, state, tangent: bool = True) -> tuple[NDArray, NDArray | None]:
    """:meth:`fem.elements.beam.Beam.evaluate` of 2D co-rotational beams ``g``, compiled.

    No offsets; the kernel computes the tangent in any case.
    """
    f, K = evaluate(g._kernel_data(), state.rot, state.u)
    return f, (K if tangent else None)


def conserving_group(g, s0, s1, sm, inc, hist, spins=None, cayley=None):
    """:meth:`fem.elements.beam.Beam.conserving` of 2D co-rotational beams ``g``, compiled.

    Planar rotations are additive: ``spins`` and ``cayley`` change nothing.
    """
    f, K, energy, v1 = conserving(g._kernel_data(), sm.u, s0.u, s1.u, hist["v"], inc)
    return f, K, energy, {"v": v1}


def _evaluate_samples(rng) -> list[tuple]:
    """Networks of planar beams, turned by several radians, strained, their nodes turned."""
    from fem.elements import samples

    out = []
    for theory, tangent in (("euler-bernoulli", True), ("timoshenko", True),
                            ("euler-bernoulli", False)):
        g, X = samples.planar_beams(rng, theory)
        out.append((g, samples.planar_state(X, rng), tangent))
    return out


def _conserving_samples(rng) -> list[tuple]:
    """Steps of order 1 rad from a large planar state, drifted algorithmic deformations."""
    from fem.elements import samples

    out = []
    for theory in ("euler-bernoulli", "timoshenko"):
        g, X = samples.planar_beams(rng, theory)
        s0, s1, sm, inc = samples.planar_step(X, rng)
        v0 = g.conserving_start(s0)["v"]
        hist = {"v": v0 + 0.01 * rng.normal(size=v0.shape)}
        out.append((g, s0, s1, sm, g.element_vector(inc), hist))
    return out


kernels.register_family("beam2d", _kernel, _ec_kernel, evaluate_group, _evaluate_samples,
                        conserving_group, _conserving_samples)
