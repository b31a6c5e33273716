"""Compiled force and tangent of 3D co-rotational beams: one pass per element, numba.

The same mathematics as the vectorized reference (:class:`fem.elements.beam.frames3d.CorotFrame3D`
with :class:`fem.elements.beam.basic.BasicBeam`; Battini & Pacoste 2002 around Meijaard's 1993
second-order strains), written element by element so that the frame, the basic response, ``B^T q``
and ``B^T kb B + K_geo`` stay in registers and cache instead of passing through a dozen ``(E, 12,
12)`` temporaries: the numpy code is memory-bound at about 1e5 elements per second. The numpy
code stays the reference the tests compare this kernel with (to 1e-13 relative) and the fallback
where numba is missing or a group is small (compilation and numba's import cost more than they
save there).

Why numba: it installs from PyPI as a wheel on every platform CPython does, compiles at first use
and caches the machine code beside the module, needs no C toolchain at install time, and reads
like the numpy it replaces; Cython or a C extension would need a build step in the set-up, and
JAX/PyTorch are far heavier for 12 x 12 matrices.

Layout: elements are split into chunks, ``prange`` runs over chunks (threads, when numba has
more than one), and each chunk allocates its scratch once. The kernel reads the nodal quaternions,
displacements and the connectivity itself (no ``(E, 2, 3, 3)`` rotation matrices or positions
gathered in numpy), and what does not change between calls (the nonzeros of ``S``, the shear-arch
terms, the reference chords) is prepared once per group (:func:`prepare`). Symbols follow
:mod:`fem.elements.beam.frames3d` (``G``, ``Bhat``, ``Lambda``, the four parts of the geometric
stiffness); past the basic response the kernel works in the co-rotated frame's components, where
``G`` and ``Bhat`` are sparse, so the 9 x 9 core of the tangent costs a few hundred flops instead
of the thousand of the dense ``Bh^T kbh Bh`` (issue 14: ``Beam.evaluate`` on one core, 1e5
elements, 5.7e5 elements per second before, 1.2e6 after, timed alternately in one run by
``benchmarks/beam_assembly.py``).

The tangent is not symmetric away from equilibrium (spatial spins,
:mod:`fem.elements.beam.frames3d`),
so the kernel computes all of it; only ``kb`` and ``L^T kb L`` are symmetric and are computed as
triangles.

The energy-conserving step's force and tangent (:meth:`fem.elements.beam.Beam.conserving`,
about 60 small numpy calls a call: half the time of a free-flying beam of two elements over
1e4 steps, ``tests/test_dynamics.py``) have their own kernel, :func:`conserving`
(:mod:`fem.elements.beam.beam3d_ec_kernel`), loaded separately, from ``MIN_CONSERVING`` elements,
and tested against the numpy code the same way (issue 14).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from fem import kernels
from fem.elements.beam.basic import _hessians
from fem.kernels import Kernel, writable

#: Groups from this many elements take the compiled energy-conserving force
#: (:func:`conserving`): a dynamic run evaluates it thousands of times, and numpy's cost there is
#: per call, not per element (1.3 ms a call for 1 or 2 elements, 3.3 ms for 10, against 15, 35
#: and 90 us compiled), so loading numba and the cached kernel (0.7 s) pays back within a few
#: hundred calls (a hundred steps) even for one element
MIN_CONSERVING = 1

_kernel = Kernel("fem.elements.beam.beam3d_kernel")
_ec_kernel = Kernel("fem.elements.beam.beam3d_ec_kernel")

# the nonzeros of S the kernel reads, (row, column): axial, torsion, the two bending blocks
_S_ENTRIES = ((0, 0), (1, 1), (2, 2), (2, 3), (3, 3), (4, 4), (4, 5), (5, 5))


_family = kernels.Family(_kernel, _ec_kernel, MIN_CONSERVING)
enabled = _family.enabled      # (conserving=False): whether the kernel can be used
compiled = _family.compiled    # (n, conserving=False): whether a group of n takes it


@dataclass(frozen=True)
class Prepared:
    """What the kernel needs of a group besides the state: computed once (:func:`prepare`)."""

    conn: NDArray       # (E, 2) int64 node indices
    chord0: NDArray     # (E, 3) reference chords between the nodes, X_q - X_p
    E0: NDArray         # (E, 3, 3) reference triads
    l0: NDArray         # (E,) reference lengths
    Sc: NDArray         # (E, 8) the nonzeros of S, in the order of _S_ENTRIES
    coef: NDArray       # (na, E) shear-arch coefficients
    ij: NDArray         # (na, 2) their basic deformation pairs
    n_nodes: int        # nodes a state must have at least (conn.max() + 1)


def prepare(conn: NDArray, X: NDArray, E0: NDArray, l0: NDArray, basic) -> Prepared:
    """The kernel's data of a group, computed once.

    ``conn (E, 2)``, nodal coordinates ``X (E, 2, 3)``, ``E0``, ``l0`` and the group's
    :class:`~fem.elements.beam.basic.BasicBeam` ``basic``. The kernel has the linear strain map
    ``A``, the block structure of ``S`` and Meijaard's second-order strains (``H_TERMS``)
    written in; a basic beam of any other form is refused here, loudly, rather than evaluated
    wrongly.
    """
    E = len(l0)
    H_TERMS = importlib.import_module(_kernel.module).H_TERMS
    A = np.zeros((E, 6, 7))
    A[:, 0, 0] = 1.0
    A[:, 1, 4], A[:, 1, 1], A[:, 2, 2], A[:, 3, 5], A[:, 4, 3], A[:, 5, 6] = (
        l0, -l0, -l0, l0, -l0, l0)
    S = basic.S
    rows, cols = zip(*_S_ENTRIES, strict=True)
    off = S.copy()
    off[:, rows, cols] = 0.0
    off[:, cols, rows] = 0.0
    if not (basic.dim == 3 and basic.nonlinear and np.array_equal(basic.A, A)
            and not off.any() and np.array_equal(S[:, 3, 2], S[:, 2, 3])
            and np.array_equal(S[:, 5, 4], S[:, 4, 5])
            and np.array_equal(basic.H0, _hessians(H_TERMS, 6, 7))):
        raise RuntimeError("fem.elements.beam.beam3d_kernel assumes the co-rotational 3D "
                           "BasicBeam's A, block-diagonal S and second-order strains (H_TERMS); "
                           "this group's differ: update the kernel, or run with FEM_JIT=0")
    na = len(basic.shear_arch)
    coef = np.zeros((na, E))
    ij = np.zeros((na, 2), dtype=np.int64)
    for k, (c, i, j) in enumerate(basic.shear_arch):
        coef[k], ij[k] = c, (i, j)
    conn = np.ascontiguousarray(conn, dtype=np.int64)
    return Prepared(conn=conn, chord0=np.ascontiguousarray(X[:, 1] - X[:, 0], dtype=float),
                    E0=np.ascontiguousarray(E0, dtype=float),
                    l0=np.ascontiguousarray(l0, dtype=float),
                    Sc=np.ascontiguousarray(S[:, rows, cols]), coef=coef, ij=ij,
                    n_nodes=int(conn.max()) + 1 if E else 0)


def evaluate(prep: Prepared, quat: NDArray, u: NDArray, tangent: bool = True,
             chord: NDArray | None = None) -> tuple[NDArray, NDArray | None]:
    """Internal forces ``(E, 12)`` and tangents ``(E, 12, 12)`` of a batch of 3D beams.

    ``quat (n, 4)`` nodal unit quaternions, ``u (n, 3)`` nodal displacements (a state's ``rot``
    and ``u``); ``chord (E, 3)``: the current chords, if not ``X_q - X_p + u_q - u_p`` (offset
    ends).
    """
    quat = np.ascontiguousarray(quat, dtype=float)
    u = np.ascontiguousarray(u, dtype=float)
    if len(quat) < prep.n_nodes or len(u) < prep.n_nodes:       # the kernel does not check
        raise IndexError(f"the state has {min(len(quat), len(u))} nodes, the beams use "
                         f"{prep.n_nodes}")
    E = len(prep.l0)
    f = np.empty((E, 12))
    K = np.empty((E, 12, 12)) if tangent else np.empty((0, 12, 12))
    moving = chord is None
    chord = prep.chord0 if moving else np.ascontiguousarray(chord, dtype=float)
    _kernel.function(quat, u, prep.conn, chord, moving, prep.E0, prep.l0, prep.Sc, prep.coef,
                     prep.ij, tangent, f, K)
    return f, (K if tangent else None)


def conserving(prep: Prepared, quat: NDArray, um: NDArray, u0: NDArray, u1: NDArray,
               v0: NDArray, inc: NDArray, spins: NDArray | None, cayley: NDArray | None
               ) -> tuple[NDArray, NDArray, NDArray, NDArray]:
    """Algorithmic force, tangent, energy and basic deformations of the energy-conserving step.

    :meth:`fem.elements.beam.Beam.conserving` of 3D co-rotational beams without offsets,
    element by element (:mod:`fem.elements.beam.beam3d_ec_kernel`): ``quat (n, 4)`` and ``um (n,
    3)`` the mid-point configuration's nodal quaternions and displacements, ``u0``, ``u1`` the
    displacements at the step's ends, ``v0 (E, 7)`` the algorithmic basic deformations at its
    start, ``inc (E, 12)`` the increments, ``spins (E, 2)`` (None: all) the nodes corrected by
    spatial spins and ``cayley (E, 2)`` (None: none) those whose rotation slots hold Cayley
    parameters. Returns ``f (E, 12)``, ``K (E, 12, 12)``, ``energy (E,)``, ``v1 (E, 7)``.
    """
    arrays = [writable(a) for a in (quat, um, u0, u1, v0, inc)]
    if min(len(a) for a in arrays[:4]) < prep.n_nodes:         # the kernel does not check
        raise IndexError(f"the state has {min(len(a) for a in arrays[:4])} nodes, the beams "
                         f"use {prep.n_nodes}")
    E = len(prep.l0)
    flags = np.empty((2, E, 2), dtype=bool)
    flags[0] = True if spins is None else spins
    flags[1] = False if cayley is None else cayley
    f, K, energy, v1 = np.empty((E, 12)), np.empty((E, 12, 12)), np.empty(E), np.empty((E, 7))
    _ec_kernel.function(*arrays[:4], prep.conn, prep.chord0, prep.E0, prep.l0, prep.Sc,
                        prep.coef, prep.ij, *arrays[4:], flags[0], flags[1], f, K, energy, v1)
    return f, K, energy, v1


# --- the compiled pairs (fem.kernels.PAIRS): group methods, numpy and compiled -----------------
def evaluate_group(g, state, tangent: bool = True) -> tuple[NDArray, NDArray | None]:
    """:meth:`fem.elements.beam.Beam.evaluate` of 3D co-rotational beam group ``g``, compiled.

    Nodal quaternions and displacements go in as they are; with offsets the kernel sees the
    ends (the chords between them) and the result is mapped to the nodes.
    """
    c = chord = None
    if g.offsets is not None:
        c = g.offsets.arms(state.rotation_matrices()[g.conn])
        x = g.positions(state) + c
        chord = x[:, 1] - x[:, 0]
    f, K = evaluate(g._kernel_data(), state.rot, state.u, tangent, chord)
    return g._to_nodes(c, f, K, f)


def conserving_group(g, s0, s1, sm, inc, hist, spins=None, cayley=None):
    """:meth:`fem.elements.beam.Beam.conserving` of 3D co-rotational beam group ``g``, compiled."""
    f, K, energy, v1 = conserving(g._kernel_data(), sm.rot, sm.u, s0.u, s1.u, hist["v"], inc,
                                  spins, cayley)
    return f, K, energy, {"v": v1}


def _evaluate_samples(rng) -> list[tuple]:
    """Networks of 3D beams at large rotations; offset ends; local rotations near pi."""
    from fem.elements import samples

    out = []
    for theory, tangent in (("euler-bernoulli", True), ("timoshenko", True),
                            ("timoshenko", False)):
        g, X = samples.spatial_beams(rng, theory)
        out.append((g, samples.spatial_state(X, rng, spread=0.8), tangent))
    g, X = samples.spatial_beams(rng, "timoshenko", offsets=0.1)
    out.append((g, samples.spatial_state(X, rng, spread=0.8), True))
    g, X = samples.spatial_beams(rng, "euler-bernoulli", shared=False)
    out.append((g, samples.near_pi(g, X), True))
    return out


def _conserving_samples(rng) -> list[tuple]:
    """Steps of order 1 rad from a large state; rotation vectors, Cayley parameters, no spins."""
    from fem.elements import samples

    out = []
    for theory, cayley in (("euler-bernoulli", "mixed"), ("timoshenko", "all"),
                           ("timoshenko", "none")):
        g, X = samples.spatial_beams(rng, theory)
        s0, s1, sm, inc, on = samples.spatial_step(X, rng, cayley)
        v0 = g.conserving_start(s0)["v"]
        hist = {"v": v0 + 0.01 * rng.normal(size=v0.shape)}        # drifted from the geometry
        spins = (rng.random(len(X)) < 0.8)[g.conn]
        out.append((g, s0, s1, sm, g.element_vector(inc), hist, spins,
                    None if cayley == "none" else on[g.conn]))
    return out


kernels.register_family("beam3d", _kernel, _ec_kernel, evaluate_group, _evaluate_samples,
                        conserving_group, _conserving_samples)
