"""Shared test helpers: element catalogue, random states, finite differences."""
# ruff: noqa: E402 - the thread variables are set before numpy loads

import os

# One BLAS/OpenMP thread, as `make test` sets and as fem study's workers run (before numpy
# loads, else too late): tests that compare this process's results with a worker's bit for bit
# hold whoever starts pytest (two BLAS threads change the last bits).
for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

import numpy as np
import pytest

from fem import _petsc
from fem import rotations as so3
from fem.elements import Beam, Truss
from fem.state import State

# MPI first: Open MPI's singleton start-up forks a helper that would inherit (and keep locked)
# any HDF5 file a test has open at that moment.
_petsc.init()

# a pvpython script (tests/test_paraview.py runs it), not a test module: without ParaView its
# imports fail, and --doctest-modules would collect it as an error of the whole suite
collect_ignore = ["paraview_probe.py"]

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

#: a tilted triangle: no edge or normal along an axis
X_TRIANGLE = np.array([[0.3, -0.2, 0.1], [1.4, 0.5, -0.6], [0.2, 0.9, 0.4]])
SHELL = dict(E=210.0, nu=0.3, h=0.08, rho=7.8)


def reduced_beam_chain(dim: int, modes: int = 2):
    """The superelement data of two linear beams (nodes 0-1-2, a kinked chain) reduced onto
    nodes 0 and 2 by Craig-Bampton with ``modes`` fixed-interface modes, lumped mass.

    ``T = [[I, 0], [Psi, Phi]]`` with the static modes ``Psi = -K_ii^-1 K_ib`` (which carry a
    rigid motion of the interface to the interior rigidly: ``K`` annihilates rigid motions)
    and the modes ``Phi`` of the interior node, scaled to a largest entry of 1; the momentum
    rows are ``R^T M T`` of the six rigid motions ``R`` about the origin.
    """
    from fem.elements.superelement.group import SuperelementData

    X = np.array([[0.3, -0.2, 0.1], [1.0, 0.3, -0.2], [1.6, 0.5, 0.2]])
    if dim == 2:
        X[:, 2] = 0.0
    p = dict(E=210.0, G=80.0, A=2.0, Iy=0.05, Iz=0.08, J=0.06, rho=7.8)
    chain = Beam("chain", [[0, 1], [1, 2]], X, dim, formulation="linear",
                 ref=[0.2, 0.3, 1.0] if dim == 3 else None, **p)
    st = State.reference(dim, 3)
    ndn = chain.ndn
    n = 3 * ndn
    K, M = np.zeros((n, n)), np.zeros((n, n))
    for e, (ke, me) in enumerate(zip(chain.tangent(st), chain.mass(st, lumped=True),
                                     strict=True)):
        d = np.r_[np.arange(ndn) + ndn * chain.conn[e, 0], np.arange(ndn) + ndn * chain.conn[e, 1]]
        K[np.ix_(d, d)] += ke
        M[np.ix_(d, d)] += me
    b = np.r_[np.arange(ndn), np.arange(ndn) + 2 * ndn]
    i = np.arange(ndn, 2 * ndn)
    w, Phi = _eigh(K[np.ix_(i, i)], M[np.ix_(i, i)])
    Phi = Phi[:, :modes] / np.abs(Phi[:, :modes]).max(axis=0)
    T = np.zeros((n, len(b) + modes))
    T[b, np.arange(len(b))] = 1.0
    T[np.ix_(i, np.arange(len(b)))] = -np.linalg.solve(K[np.ix_(i, i)], K[np.ix_(i, b)])
    T[np.ix_(i, len(b) + np.arange(modes))] = Phi
    slots = np.array([SLOTS[dim].index(d) for d in chain.dof_names])
    dofs = np.column_stack([np.repeat(np.arange(3), ndn), np.tile(slots, 3)])
    R = np.zeros((n, 6))                                   # rigid motions of the component
    for k, (node, slot) in enumerate(dofs):
        s3 = SLOTS[3].index(SLOTS[dim][slot])
        R[k, s3] = 1.0
        if s3 < 3:
            R[k, 3:] = np.cross(np.eye(3), X[node])[:, s3]    # (w x X)_slot for each w
    return SuperelementData(
        dim=dim, method="craig_bampton", mass="lumped", name="chain",
        node_ids=np.array([1, 3]), coordinates=X[[0, 2]], boundary_node=np.repeat([0, 1], ndn),
        boundary_slot=np.tile(slots, 2), K=T.T @ K @ T, M=T.T @ M @ T, momentum=R.T @ M @ T,
        frequencies=np.sqrt(w[:modes]), component_ids=np.array([1, 2, 3]),
        component_coordinates=X, component_dofs=dofs, T=T, component_mass=np.diag(M).copy())


def _eigh(K, M):
    import scipy.linalg

    return scipy.linalg.eigh(K, M)


def family_catalogue():
    """(id, factory, compiled) of one-element groups of every family: :data:`CATALOGUE`'s
    trusses and beams, shells, grounded springs, rigid bodies and superelements; ``compiled``
    where the group's evaluation has a compiled pair (:data:`fem.kernels.PAIRS`)."""
    from fem.elements import GroundSpring, RigidBody, Shell, Superelement
    from fem.elements.shell.corot import CorotShell
    from fem.elements.superelement.corot import CorotSuperelement

    out = [(i, f, "corotational" in i and i.startswith("beam")) for i, f in CATALOGUE]
    tri = np.array([[0, 1, 2]])
    out += [("shell-linear", lambda: Shell("s", tri, X_TRIANGLE, 3, **SHELL), False),
            ("shell-corotational", lambda: CorotShell("s", tri, X_TRIANGLE, 3, **SHELL), True)]
    for dim, dof in ((2, "uy"), (2, "rz"), (3, "uz"), (3, "rx")):
        out.append((f"spring{dim}d-{dof}", lambda dim=dim, dof=dof:
                    GroundSpring("k", [0], X_TRIANGLE[:1], dim, dof, 5.0), False))
    J = np.array([[2.0, 0.3, -0.1], [0.3, 1.5, 0.2], [-0.1, 0.2, 1.2]])
    for dim in (2, 3):
        out.append((f"rigid{dim}d", lambda dim=dim:
                    RigidBody("r", [0], X_TRIANGLE[:1], dim, 3.0, J), False))
    for dim in (2, 3):
        out.append((f"superelement{dim}d-linear", lambda dim=dim: Superelement(
            "c", [0, 1], (data := reduced_beam_chain(dim)).coordinates, dim, data), False))
    out.append(("superelement2d-corotational", lambda: CorotSuperelement(
        "c", [0, 1], (data := reduced_beam_chain(2)).coordinates, 2, data), False))
    return out


FAMILIES = family_catalogue()


@pytest.fixture(params=[f for _, f in CATALOGUE], ids=[i for i, _ in CATALOGUE])
def group(request):
    return request.param()


def slot_columns(g):
    return [SLOTS[g.dim].index(d) for d in g.dof_names]


def n_internal(g) -> int:
    """The element-internal unknowns a state of one-element group ``g`` holds (a
    superelement's modal coordinates; a beam's interior modes are buckling's only)."""
    return g.n_internal * len(g) if getattr(g, "internal_always", False) else 0


def small_displacement(g) -> bool:
    """Whether ``g`` is a small-displacement (linear) group, as its results file says."""
    return g.options().get("formulation") == "linear"


def random_state(g, rng, scale=0.3, rot_scale=0.6):
    """A random deformed state of a one-element group (nodes ``0 .. nen - 1``), with random
    element-internal unknowns of size ``scale``."""
    n = int(g.conn.max()) + 1
    st = State.reference(g.dim, n, n_internal(g))
    st.u[:, :g.dim] = rng.normal(size=(n, g.dim)) * scale
    if "rz" in g.dof_names or "rx" in g.dof_names:
        if g.dim == 2:
            st.rot[:] = rng.normal(size=n) * rot_scale
        else:
            st.rot[:] = so3.quat_from_rotvec(rng.normal(size=(n, 3)) * rot_scale)
    if len(st.internal):
        st.internal[:] = rng.normal(size=len(st.internal)) * scale
    return st


def perturbed(g, st, j, h):
    """``st`` moved by ``h`` along element DOF ``j`` (spatial spin for rotations); past the
    nodal DOFs, along internal unknown ``j - nd``."""
    s = st.copy()
    if j >= g.nd:
        s.internal[j - g.nd] += h
        return s
    n = s.n_nodes
    du = np.zeros((n, len(SLOTS[g.dim])))
    node, k = divmod(j, g.ndn)
    du[g.conn[0, node], slot_columns(g)[k]] = h
    linear = small_displacement(g)
    s.increment(du, np.full(n, linear) if g.dim == 3 else None)   # as fem.system.System.update
    return s


def fd_tangent(g, st, h=1e-6):
    """Central finite difference of the internal force, column by column."""
    cols = [(g.internal_force(perturbed(g, st, j, h))[0]
             - g.internal_force(perturbed(g, st, j, -h))[0]) / (2 * h)
            for j in range(g.nd + n_internal(g))]
    return np.column_stack(cols)


def rigid_state(g, R, t):
    """State of a one-element group moved rigidly by rotation ``R`` (3x3) and translation ``t``."""
    X = g.X[0]
    n = int(g.conn.max()) + 1
    st = State.reference(g.dim, n, n_internal(g))
    st.u[g.conn[0]] = X @ R.T + t - X
    if g.dim == 2:
        st.rot[:] = np.arctan2(R[1, 0], R[0, 0])
    else:
        st.rot[:] = so3.matrix_to_quat(np.broadcast_to(R, (n, 3, 3)))
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


def record_made(monkeypatch, cls) -> list:
    """Make classmethod ``cls.make`` (a compiled path's eligibility) append what it makes to the
    returned list, which tests read after the run (None: the general path was taken)."""
    made = []
    make = cls.make.__func__
    monkeypatch.setattr(cls, "make", classmethod(
        lambda c, step: made.append(make(c, step)) or made[-1]))
    return made
