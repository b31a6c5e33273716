"""Compiled force and tangent of co-rotational shell triangles: one pass per element, numba.

The same mathematics as the vectorized reference (:class:`fem.elements.shell.corot.
CorotShellFrame` with the linear element's ``K_local``, of any section: a laminate's
membrane-bending coupling is in it), written element by element so that the
frame, the local deformations, ``B^T K_l p`` and ``B^T K_l B`` plus the geometric stiffness stay
in registers and cache instead of passing through a dozen ``(E, 18, 18)`` temporaries: the numpy
code is memory-bound at about 4e4 elements per second, a third of a Newton iteration at 1e5
elements (issue 12 asks for at most a fifth). The numpy code stays the reference the tests
compare this kernel with (to 1e-13 relative) and the fallback where numba is missing, ``FEM_JIT``
is ``0`` or a group is small (compiling or loading the kernel costs more than it saves there).
Why numba, and the layout (``prange`` over chunks, per-chunk scratch): as the 3D beams',
:mod:`fem.elements.beam.beam3d_jit`.

The energy-conserving step's force and tangent (:meth:`~fem.elements.shell.corot.CorotShell.
conserving`, about 60 einsum calls a call in numpy: 61% of a step of the 32-triangle free
plate of ``tests/test_shell_dynamics.py``) have their own kernel, :func:`conserving`
(:mod:`fem.elements.shell.shell_ec_kernel`), loaded separately under the same dispatch rule and
tested against the numpy code the same way (issue 14).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from fem import kernels
from fem.kernels import Kernel

#: Groups from this many triangles take the compiled energy-conserving force: a dynamic run
#: evaluates it thousands of times, and on a plate of 32 triangles a step took 5-9 ms with the
#: kernel against 13-21 ms with numpy, so loading numba (0.6-0.8 s) pays back within 100 steps
MIN_CONSERVING = 16

_kernel = Kernel("fem.elements.shell.shell_kernel")
_ec_kernel = Kernel("fem.elements.shell.shell_ec_kernel")


_family = kernels.Family(_kernel, _ec_kernel, MIN_CONSERVING)
enabled = _family.enabled      # (conserving=False): whether the kernel can be used
compiled = _family.compiled    # (n, conserving=False): whether a group of n takes it


def evaluate(x: NDArray, R: NDArray, R0: NDArray, xl0: NDArray, Kl: NDArray,
             tangent: bool = True) -> tuple[NDArray, NDArray | None]:
    """Internal forces ``(E, 18)`` and tangents ``(E, 18, 18)`` of co-rotational triangles.

    ``x (E, 3, 3)`` corners relative to corner 1, ``R (E, 3, 3, 3)`` their rotation matrices,
    ``R0 (E, 3, 3)`` reference element frames (columns ``e1 e2 e3``), ``xl0 (E, 3, 3)``
    reference corners in them, ``Kl (E, 18, 18)`` the constant local stiffness.
    """
    E = len(x)
    f = np.empty((E, 18))
    K = np.empty((E, 18, 18)) if tangent else np.empty((0, 18, 18))
    _kernel.function(np.ascontiguousarray(x, dtype=float), np.ascontiguousarray(R, dtype=float),
            np.ascontiguousarray(R0, dtype=float), np.ascontiguousarray(xl0, dtype=float),
            np.ascontiguousarray(Kl, dtype=float), tangent, f, K)
    return f, (K if tangent else None)


def conserving(x: NDArray, R: NDArray, R0: NDArray, xl0: NDArray, Kl: NDArray, p0: NDArray,
               inc: NDArray, cayley: NDArray | None
               ) -> tuple[NDArray, NDArray, NDArray, NDArray]:
    """Algorithmic force, tangent, energy and deformations of the energy-conserving step.

    :meth:`fem.elements.shell.corot.CorotShell.conserving` element by element
    (:mod:`fem.elements.shell.shell_ec_kernel`): ``x (E, 3, 3)`` the mid-point corners relative to
    corner 1, ``R (E, 3, 3, 3)`` their rotation matrices, ``R0``, ``xl0``, ``Kl`` as in
    :func:`evaluate`, ``p0 (E, 18)`` the algorithmic deformations at the step's start, ``inc
    (E, 18)`` the increments, ``cayley (E, 3)`` (or None: none) the corners whose rotation slots
    hold Cayley parameters. Returns ``f (E, 18)``, ``K (E, 18, 18)``, ``energy (E,)``, ``p1 (E,
    18)``.
    """
    E = len(x)
    f, K, energy, p1 = np.empty((E, 18)), np.empty((E, 18, 18)), np.empty(E), np.empty((E, 18))
    cay = np.zeros((E, 3), dtype=bool) if cayley is None else np.asarray(cayley, dtype=bool)
    _ec_kernel.function(*(np.ascontiguousarray(a, dtype=float)
                          for a in (x, R, R0, xl0, Kl, p0, inc)),
                        np.ascontiguousarray(cay), f, K, energy, p1)
    return f, K, energy, p1


# --- the compiled pairs (fem.kernels.PAIRS): group methods, numpy and compiled -----------------
def evaluate_group(g, state, tangent: bool = True) -> tuple[NDArray, NDArray | None]:
    """:meth:`fem.elements.shell.corot.CorotShell.evaluate` of group ``g``, compiled."""
    return evaluate(g.positions(state), state.rotation_matrices()[g.conn], g.frame.R0,
                    g.frame.xl0, g.K_local, tangent)


def conserving_group(g, s0, s1, sm, inc, hist, spins=None, cayley=None):
    """:meth:`fem.elements.shell.corot.CorotShell.conserving` of group ``g``, compiled.

    The caller checked ``spins`` (all).
    """
    f, K, energy, p1 = conserving(g.positions(sm), sm.rotation_matrices()[g.conn], g.frame.R0,
                                  g.frame.xl0, g.K_local, hist["p"], inc, cayley)
    return f, K, energy, {"p": p1}


def _evaluate_samples(rng) -> list[tuple]:
    """A warped mesh, strained, turned rigidly, its nodes turned by up to about 2 rad.

    And a laminate's (membrane-bending coupling).
    """
    from fem.elements import samples

    out = []
    for spread, tangent, laminate in ((1.0, True, False), (0.05, True, False),
                                      (1.0, False, False), (1.0, True, True)):
        g, X = samples.shells(rng, laminate=laminate)
        out.append((g, samples.spatial_state(X, rng, spread=spread, strain=0.02), tangent))
    return out


def _conserving_samples(rng) -> list[tuple]:
    """Steps of order 1 rad from a large state; rotation vectors, Cayley parameters or both."""
    from fem.elements import samples

    out = []
    for cayley in ("none", "all", "mixed"):
        g, X = samples.shells(rng)
        s0, s1, sm, inc, on = samples.spatial_step(X, rng, cayley, strain=0.02)
        p0 = g.conserving_start(s0)["p"]
        hist = {"p": p0 + 0.01 * rng.normal(size=p0.shape)}
        out.append((g, s0, s1, sm, g.element_vector(inc), hist, None, on[g.conn]))
    return out


kernels.register_family("shell", _kernel, _ec_kernel, evaluate_group, _evaluate_samples,
                        conserving_group, _conserving_samples)
