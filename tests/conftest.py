"""Shared test helpers: element catalogue, random states, finite differences."""

import numpy as np
import pytest

from fem import _petsc
from fem import rotations as so3
from fem.elements import Beam, Truss
from fem.state import State

# MPI first: Open MPI's singleton start-up forks a helper that would inherit (and keep locked)
# any HDF5 file a test has open at that moment.
_petsc.init()

SLOTS = {2: ("ux", "uy", "rz"), 3: ("ux", "uy", "uz", "rx", "ry", "rz")}


def element_catalogue():
    """(id, factory) of one-element groups covering every family and option."""
    X2 = np.array([[0.3, -0.2, 0.0], [1.4, 0.5, 0.0]])
    X3 = np.array([[0.3, -0.2, 0.1], [1.4, 0.5, -0.6]])
    conn = np.array([[0, 1]])
    beam = dict(E=210.0, G=80.0, A=2.0, Iy=0.05, Iz=0.08, J=0.06, Ay=1.5, Az=1.6, rho=7.8)
    out = []
    for dim, X in ((2, X2), (3, X3)):
        for form in ("linear", "corotational"):
            strains = ("engineering", "green") if form == "corotational" else ("engineering",)
            for strain in strains:
                out.append((f"truss{dim}d-{form}-{strain}",
                            lambda X=X, dim=dim, form=form, strain=strain:
                            Truss("t", conn, X, dim, EA=300.0, rhoA=2.0, formulation=form,
                                  strain=strain)))
            for theory in ("euler-bernoulli", "timoshenko"):
                out.append((f"beam{dim}d-{form}-{theory}",
                            lambda X=X, dim=dim, form=form, theory=theory:
                            Beam("b", conn, X, dim, formulation=form, theory=theory,
                                 ref=[0.2, 0.3, 1.0] if dim == 3 else None, **beam)))
    return out


CATALOGUE = element_catalogue()


@pytest.fixture(params=[f for _, f in CATALOGUE], ids=[i for i, _ in CATALOGUE])
def group(request):
    return request.param()


def slot_columns(g):
    return [SLOTS[g.dim].index(d) for d in g.dof_names]


def random_state(g, rng, scale=0.3, rot_scale=0.6):
    """A random deformed state of a one-element group (nodes 0 and 1)."""
    st = State.reference(g.dim, 2)
    st.u[:, :g.dim] = rng.normal(size=(2, g.dim)) * scale
    if "rz" in g.dof_names or "rx" in g.dof_names:
        if g.dim == 2:
            st.rot[:] = rng.normal(size=2) * rot_scale
        else:
            st.rot[:] = so3.quat_from_rotvec(rng.normal(size=(2, 3)) * rot_scale)
    return st


def perturbed(g, st, j, h):
    """``st`` moved by ``h`` along element DOF ``j`` (spatial spin for rotations)."""
    s = st.copy()
    du = np.zeros((2, len(SLOTS[g.dim])))
    node, k = divmod(j, g.ndn)
    du[node, slot_columns(g)[k]] = h
    linear = getattr(g, "formulation", "") == "linear"
    s.increment(du, np.full(2, linear) if g.dim == 3 else None)   # as fem.system.System.update
    return s


def fd_tangent(g, st, h=1e-6):
    """Central finite difference of the internal force, column by column."""
    cols = [(g.internal_force(perturbed(g, st, j, h))[0]
             - g.internal_force(perturbed(g, st, j, -h))[0]) / (2 * h) for j in range(g.nd)]
    return np.column_stack(cols)


def rigid_state(g, R, t):
    """State of a one-element group moved rigidly by rotation ``R`` (3x3) and translation ``t``."""
    X = g.X[0]
    st = State.reference(g.dim, 2)
    st.u[:] = X @ R.T + t - X
    if g.dim == 2:
        st.rot[:] = np.arctan2(R[1, 0], R[0, 0])
    else:
        st.rot[:] = so3.matrix_to_quat(np.broadcast_to(R, (2, 3, 3)))
    return st


def moving_ec_start(sysm, step, rng, h: float, u=0.03, rot=0.3):
    """A random moving, turned start state ``s0`` (translations ``u``, rotation vectors ``rot``,
    unit velocities) of a 3D model, and the energy-conserving integrator of ``step`` begun at it
    (nodal inertia, time step ``h``): the set-up of the step-tangent tests. Returns ``(integ,
    s0)``; call ``integ.start_step(s0)`` after any change to ``s0``'s algorithmic history."""
    from fem.inertia.nodal import NodalInertia
    from fem.integrators import make_integrator

    s0 = sysm.reference_state()
    n = s0.n_nodes
    s0.u[:] = u * rng.normal(size=(n, 3))
    s0.rot[:] = so3.quat_from_rotvec(rot * rng.normal(size=(n, 3)))
    s0.v[:] = rng.normal(size=(n, 6))
    step.loads.begin(s0)
    integ = make_integrator("energy_conserving", sysm, NodalInertia(sysm, s0), step.loads, h)
    integ.begin(s0)
    return integ, s0


def fd_step_tangent(integ, sysm, s0, s1, h=1e-6):
    """The integrator's effective tangent at ``s1`` and the central differences of its residual.

    Both ``(n_free, n_free)`` dense: columns are Newton's corrections of ``s1``, every unknown
    (translations added, 3D rotations turned by spins, multipliers: ``System.update_unknowns``).
    """
    nf = sysm.n_free
    K = sysm.assembler.to_scipy(integ.evaluate(s0, s1, tangent=True)[2]).toarray()
    cols = []
    for j in range(nf):
        ends = []
        for s in (h, -h):
            trial = s1.copy()
            e = np.zeros(nf)
            e[j] = s
            sysm.update_unknowns(trial, e)
            ends.append(integ.evaluate(s0, trial, tangent=False)[0][:nf])
        cols.append((ends[0] - ends[1]) / (2 * h))
    return K, np.column_stack(cols)
