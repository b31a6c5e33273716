"""The numba kernels of :mod:`fem.integrators.planar` (imported only when they are used).

One evaluation of the energy-conserving step of a planar model of co-rotational beams and
nodal inertia, as :class:`fem.integrators.midpoint.EnergyConserving` computes it through
``kinematics``, ``midpoint_velocities``, ``NodalInertia.midpoint_force``, ``Beam.conserving``
and the assembler, in two calls: :func:`nodes` (the step's kinematics, velocities and inertial
forces, node by node) and :func:`beams` (one group's element forces and tangents, by
:func:`fem.elements.beam.beam2d_ec_kernel.chunk`, their Cayley columns, and their scatter into the
full vector and the CSR values). Nothing here is new arithmetic: the tests compare every output
with the general path.
"""

import math

import numpy as np

from fem.kernels import configure_cache

configure_cache()                  # before the njit decorators: the source-keyed cache folder

from numba import njit  # noqa: E402

from fem.elements.beam.beam2d_ec_kernel import chunk  # noqa: E402
from fem.elements.beam.beam2d_kernel import chunk as static_chunk  # noqa: E402


@njit(cache=True, nogil=True)
def nodes(u0, u1, rot0, rot1, v0, on, mass_h, two_over_h, index, inc, dpsi, um, v1, f_in):
    """The step's nodal kinematics and inertia (``n`` nodes, 3 slots ``ux, uy, rz``).

    ``inc (n, 3)``: ``dx, dy`` and ``psi = 2 tan(dtheta/2)`` at the nodes ``on`` (the angle
    increment elsewhere); ``dpsi``: ``d psi / d dtheta``; ``um``: mid-point displacements;
    ``v1 = 2 inc / h - v0``; ``f_in (n_active,)``: ``M (v1 - v0) / h`` at the active slots
    (``index (n, 3)``, -1 where inactive), every other entry zero.
    """
    n = u0.shape[0]
    f_in[:] = 0.0
    for i in range(n):
        dth = rot1[i] - rot0[i]
        if on[i]:
            psi = 2.0 * math.tan(0.5 * dth)
            dpsi[i] = 1.0 + 0.25 * psi * psi
        else:
            psi = dth
            dpsi[i] = 1.0
        inc[i, 0] = u1[i, 0] - u0[i, 0]
        inc[i, 1] = u1[i, 1] - u0[i, 1]
        inc[i, 2] = psi
        for j in range(3):
            um[i, j] = 0.5 * (u0[i, j] + u1[i, j])
            v1[i, j] = inc[i, j] * two_over_h - v0[i, j]
            k = index[i, j]
            if k >= 0:
                f_in[k] = (v1[i, j] - v0[i, j]) * mass_h[i, j]


@njit(cache=True, nogil=True)
def mass_diagonal(mass_k, dpsi, rows, K):
    """Add the nodal inertia's tangent ``2 M / h^2`` (rotations times ``dpsi``) to ``K``.

    ``rows (n, 3)``: the CSR position of each slot's diagonal entry, -1 where not free.
    """
    for i in range(rows.shape[0]):
        for j in range(3):
            p = rows[i, j]
            if p >= 0:
                K[p] += mass_k[i, j] * (dpsi[i] if j == 2 else 1.0)


@njit(cache=True, nogil=True)
def beams(um, u0, u1, conn, chord0, l0, Sc, Hc, vh0, inc, dpsi, edofs, slot, tangent,
          f_e, K_e, energy, vh1, einc, f_el, K):
    """One group of 2D co-rotational beams: forces into ``f_el``, tangents into ``K``.

    ``einc (E, 6)`` receives the elements' increments, ``f_e``, ``K_e``, ``energy``, ``vh1``
    what :func:`fem.elements.beam.beam2d_ec_kernel.chunk` computes; the tangent's rotation columns
    are multiplied by ``dpsi`` in ``K_e`` (the force is a function of ``psi``), then everything
    is added at ``edofs (E, 6)`` (full vector) and ``slot (E * 36,)`` (CSR values) by
    :func:`scatter`. ``tangent`` false: ``K`` is not touched.
    """
    E = l0.shape[0]
    for e in range(E):
        for a in range(2):
            for j in range(3):
                einc[e, 3 * a + j] = inc[conn[e, a], j]
    chunk(np.int64(0), E, um, u0, u1, conn, chord0, l0, Sc, Hc, vh0, einc, f_e, K_e, energy,
          vh1, tangent)
    if tangent:                          # the force is a function of psi: its columns
        for e in range(E):
            d0, d1 = dpsi[conn[e, 0]], dpsi[conn[e, 1]]
            for i in range(6):
                K_e[e, i, 2] *= d0
                K_e[e, i, 5] *= d1
    scatter(f_e, K_e, edofs, slot, tangent, f_el, K)


@njit(cache=True, nogil=True)
def scatter(f_e, K_e, edofs, slot, tangent, f, K):
    """Add element forces and (if ``tangent``) tangents into the full vector and CSR values.

    ``f_e (E, 6)`` goes to ``f`` at ``edofs``, ``K_e (E, 6, 6)`` to ``K`` at ``slot``
    (``len(K)`` where the entry couples no unknowns). The static increment's too.
    """
    for e in range(f_e.shape[0]):
        for i in range(6):
            f[edofs[e, i]] += f_e[e, i]
    if tangent:
        scatter_tangent(K_e, slot, K)


@njit(cache=True, nogil=True)
def scatter_tangent(K_e, slot, K):
    """:func:`scatter`'s tangent half: ``K_e (E, 6, 6)`` added to ``K`` at ``slot``."""
    nnz = K.shape[0]
    for e in range(K_e.shape[0]):
        base = e * 36
        for i in range(6):
            for j in range(6):
                s = slot[base + 6 * i + j]
                if s < nnz:
                    K[s] += K_e[e, i, j]


@njit(cache=True, nogil=True)
def evaluate(u, rot, conn, chord0, l0, Sc, Hc, edofs, slot, tangent, f_e, K_e, fint, K):
    """The beams' internal forces into ``fint (n_active,)`` and, if ``tangent``, ``K``'s values.

    The evaluation of the compiled static increments and generalized-alpha steps.

    ``edofs (E, 6)``: each element DOF's row; ``slot (E * 36,)``: each element entry's CSR
    position (``len(K)`` where it couples no unknowns).
    """
    E = l0.shape[0]
    static_chunk(np.int64(0), E, u, rot, conn, chord0, l0, Sc, Hc, tangent, f_e, K_e)
    fint[:] = 0.0
    if tangent:
        K[:] = 0.0
    scatter(f_e, K_e, edofs, slot, tangent, fint, K)
