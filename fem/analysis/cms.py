"""The ``cms_reduce`` step: a component of the deck's model reduced to a superelement.

The component is the model's element groups named by ``groups`` (default: all) with the deck's
supports and point masses, about the reference configuration (a linear superelement: small
displacements about it); its interface is the nodes ``interface``, every free slot of which is a
boundary unknown. Its stiffness ``K`` (the tangent at the reference) and mass ``M`` (``mass``:
the lumped mass dynamic steps integrate, or the consistent one) are reduced by the project's
reductions (:mod:`fem.cms`):

* ``method = "craig_bampton"``: static constraint modes and fixed-interface normal modes
  (:func:`fem.cms.craig_bampton.craig_bampton`): ``q = [u_b; eta]``, ``T`` as given there;
* ``method = "free_interface"``: free-free modes and residual attachment modes
  (:func:`fem.cms.free_interface.free_interface`) in the boundary form of MacNeal (1971) and
  Rubin (1975) (Craig & Kurdila, "Fundamentals of structural dynamics", 2006, section 19.5):
  with ``u_B = Phi_B p + Psi_B f_B`` solved for the interface forces,
  ``f_B = Psi_B^{-1} (u_B - Phi_B p)``, so ``u = T [u_B; p]`` with
  ``T = [Psi Psi_B^{-1}, Phi - Psi Psi_B^{-1} Phi_B]`` (:func:`boundary_form`). Its boundary
  rows are ``[I, 0]`` as Craig-Bampton's are, so both make superelements of one layout and
  couple by sharing nodes; ``T`` has full rank (``Phi^T M Psi = 0``), contains the component's
  rigid-body motions when they are kept and every static response to interface forces (kept
  modes plus residual flexibility), so static condensation stays exact. ``Psi_B`` must be
  regular: residual flexibility at every interface unknown (keep fewer modes than unknowns
  behind the interface).

Either way ``K_r = T^T K T``, ``M_r = T^T M T`` by exact projection: a Rayleigh-Ritz model of the
component, its frequencies never below the full model's once assembled. ``modes`` keeps that
many component modes (free interface: rigid-body modes included), ``cutoff`` every one up to a
frequency (rad/s).

Written to ``/cms/<step>/``: ``K``, ``M`` (reduced, on ``q``), ``boundary_node_ids``,
``boundary_slots`` (the DOF name of each boundary unknown, the order of ``u_b``),
``interface_node_ids``, ``component_frequencies`` (fixed-interface or free-free, rad/s),
``frequencies`` (the reduced model's own, its interface free: rigid-body modes near 0 when the
component is unsupported), ``T`` (recovery on the component's unknowns), ``dof_node_ids``,
``dof_slots`` (the node and DOF of each of those unknowns), ``component_node_ids``,
``component_coordinates``, ``momentum``, ``gravity`` (``T^T M e_k``: the reduced loads of
unit accelerations along the axes, what ``[gravity]`` applies to a superelement); attributes
``method``, ``mass``, ``n_boundary``, ``n_modal``, ``cutoff``, ``file``; for a planar component
with two interface nodes, ``stiffening``, the geometric stiffness of a unit chord tension
(:func:`chord_stiffening`).
With ``modal_derivatives = true`` (3D, Craig-Bampton; issue 33 item 2) the basis gains the kept
modes' static modal derivatives and the file the component's own strain energy as a quartic
polynomial of ``q`` (``/reduced/cubic``, ``/reduced/quartic``;
:mod:`fem.cms.nonlinear`), which 3D co-rotational superelements stiffen by.
The reduced model's modes recovered on the component, ``T Q``, go to ``/modes/<step>/`` and
ParaView (``<out>_<step>_modes.xdmf``, ``<out>_<step>_vibration.xdmf``) as a modal step's do.
With ``file``, the superelement file (:mod:`fem.elements.superelement`, format
``fem-superelement``) that ``[[elements]] type = "superelement"`` reads; with ``mass =
"lumped"`` and a diagonal lumped mass (no consistent beam inertia in the component) the file
also keeps that diagonal (``/component/mass``), which ``formulation = "corotational"``
superelements integrate, and the chord stiffening ``/reduced/stiffening`` when there is one.
The step hands the file's data to the results writer
(:meth:`fem.io.hdf5.ResultsFile.write_superelement`), as it hands it the results.
"""

from __future__ import annotations

import logging
import os

import numpy as np
from numpy.typing import NDArray

from fem import interrupt, lazy
from fem.analysis import cms_deck
from fem.analysis.base import StepBase, options_prefix
from fem.analysis.cms_deck import CmsReduceSettings
from fem.cms import nonlinear
from fem.cms.component import Factorization, node_dofs
from fem.cms.coupling import reduced_modes
from fem.cms.craig_bampton import craig_bampton
from fem.cms.free_interface import SINGULAR, FreeInterface, free_interface
from fem.elements.superelement import group as superelement
from fem.errors import DeckError, ModelError, OutputError
from fem.solvers import eigen
from fem.solvers.linear_system import note_serial

sla = lazy.module("scipy.linalg")
sp = lazy.module("scipy.sparse")

log = logging.getLogger(__name__)

def boundary_form(c: FreeInterface) -> NDArray:
    """``T = [Psi Psi_B^{-1}, Phi - Psi Psi_B^{-1} Phi_B]`` (module docstring); ``(n, nb + m)``.

    A :class:`ModelError` when ``Psi_B`` is singular (no residual flexibility left at some
    interface unknown).
    """
    nb = len(c.boundary)
    w = eigen.spectrum_of(c.Psi_B) if nb else np.ones(1)
    if w.min() <= SINGULAR * max(c.flexibility, 1e-300):
        raise ModelError(f"the residual flexibility at the interface (Psi_B) is singular "
                         f"(eigenvalues {w.min():.3g} to {w.max():.3g}): keep fewer modes, so "
                         "that residual flexibility remains at every interface unknown")
    S = sla.cho_solve(sla.cho_factor(c.Psi_B), np.eye(nb)) if nb else np.zeros((0, 0))
    PsiS = c.Psi @ S
    return np.hstack([PsiS, c.Phi - PsiS @ c.Phi_B])


def lumped_diagonal(M) -> NDArray | None:
    """``(n,)`` the diagonal of a diagonal (lumped) mass matrix ``M`` (CSR), else None.

    What the superelement file keeps as ``/component/mass`` (version 2): the inertia of a
    co-rotational superelement (:mod:`fem.inertia.floating`) needs a constant diagonal mass
    on the recovered nodes; a lumped mass with consistent beam inertia is not diagonal.
    """
    diag = M.diagonal()
    off = (M - sp.diags(diag)).tocsr()
    off.eliminate_zeros()
    return None if off.nnz else np.asarray(diag, dtype=float)


def chord_stiffening(system, state, T: NDArray, K: NDArray, boundary_node: NDArray,
                     boundary_slot: NDArray, X: NDArray) -> NDArray | None:
    """``G (r, r)``: the component's geometric stiffness under a unit chord tension, on ``q``.

    For a planar component with exactly two interface nodes ``a``, ``b`` (``X (2, 3)``): the
    static response ``q`` of the reduced model (exact: ``T`` holds every static response to
    interface forces) to a unit force pulling ``b`` along the chord ``n = (X_b - X_a)/|...|``,
    with ``a``'s translations and ``b``'s translation across the chord held (pinned ends,
    statically determinate); its element stresses (``stress_rate`` of ``u = T q``); the
    geometric stiffness a buckling step assembles at those stresses, ``K_G1``; and
    ``G = T^T K_G1 T``. For a straight rod ``q^T G q = int w'^2 dx``: the second-order
    elongation of the chord fibre, with which a co-rotational superelement turns its chord
    elongation ``e`` into the mean-strain elongation ``e + q^T G q / 2``
    (:mod:`fem.elements.superelement.corot`: geometric stiffening by the axial force).

    None when it does not apply: another interface, a group without a geometric stiffness, a
    supported interface slot the load case needs, or a component that the pinned ends do not
    hold (a mechanism: the cms_reduce before would have failed).
    """
    groups = system.model.groups
    if len(X) != 2 or not all("geometric_stiffness" in g.capabilities for g in groups):
        return None
    D = (X[1] - X[0])[:2]
    if not np.any(D):
        return None
    n = D / np.linalg.norm(D)
    r = K.shape[0]

    def slot(node: int, s: int) -> int:
        hit = np.flatnonzero((boundary_node == node) & (boundary_slot == s))
        return int(hit[0]) if len(hit) else -1

    (ax, ay), (bx, by) = (slot(0, 0), slot(0, 1)), (slot(1, 0), slot(1, 1))
    if min(ax, ay, bx, by) < 0:
        return None
    C = np.zeros((3, r))
    C[0, ax], C[1, ay] = 1.0, 1.0
    C[2, bx], C[2, by] = -n[1], n[0]                    # b across the chord
    f = np.zeros(r + 3)
    f[bx], f[by] = n
    C *= max(np.abs(K).max(), 1e-300)                   # the multipliers' scale: K's
    try:
        q = np.linalg.solve(np.block([[K, C.T], [C, np.zeros((3, 3))]]), f)[:r]
    except np.linalg.LinAlgError:
        return None                                     # a mechanism under pinned ends
    stresses = system.stress_rates(state, system.dofmap.to_nodal(T @ q))
    KG = system.assembler.to_scipy(system.geometric_stiffness(state, stresses))
    G = T.T @ (KG @ T)
    return 0.5 * (G + G.T)


def component_cells(model, comp: NDArray) -> dict[str, NDArray]:
    """The drawn cells of the component's groups by cell type, on positions in ``comp``.

    ``comp`` the component's model nodes (sorted); cells with a node outside it (every slot
    supported) are left out. What the superelement file keeps as ``/component/cells`` for the
    drawing of the component's full mesh (:mod:`fem.io.drawing`).
    """
    out: dict[str, list] = {}
    for g in model.groups:                  # the drawing keeps the types it draws
        cells = np.asarray(g.cells, dtype=np.int64)
        pos = np.minimum(np.searchsorted(comp, cells), max(len(comp) - 1, 0))
        keep = np.all(comp[pos] == cells, axis=1) if len(comp) else np.zeros(len(cells), bool)
        out.setdefault(g.cell_type, []).append(pos[keep])
    return {t: np.concatenate(c) for t, c in out.items()}


def rigid_motions(system) -> NDArray:
    """``(n_free, 6)`` unit rigid translations and rotations about the origin, on the unknowns.

    2D: ``x``, ``y`` and the rotation about ``z`` (columns 0, 1, 5); the other columns zero.
    """
    model, dm = system.model, system.dofmap
    X, d = model.X, model.dim
    cols = np.zeros((model.n_nodes, model.nslots, 6))
    cols[:, range(d), range(d)] = 1.0
    if d == 2:
        cols[:, 0, 5], cols[:, 1, 5], cols[:, 2, 5] = -X[:, 1], X[:, 0], 1.0
    else:
        eye = np.eye(3)
        cols[:, :3, 3:] = np.cross(eye[None, :, :], X[:, None, :]).transpose(0, 2, 1)
        cols[:, 3:, 3:] = eye
    free = (dm.index >= 0) & (dm.index < system.n_free)
    out = np.zeros((system.n_free, 6))
    out[dm.index[free]] = cols[free]
    return out


class CmsReduceStep(StepBase):
    """A component reduced to a superelement; see the module docstring."""

    step_type = "cms_reduce"
    Settings = CmsReduceSettings
    NO_LOADS = "it reduces the component about its reference configuration"
    WRITES = ("modes", "vibration")

    check = staticmethod(cms_deck.check)

    @classmethod
    def make(cls, spec: dict, system, deck, output_every: int = 1) -> CmsReduceStep:
        """A reduction that records the deck's path in the superelement file."""
        return cls(spec["name"], system, cls.step_loads(spec, system), spec["settings"],
                   solver_options=deck.solver_options,
                   source=os.path.abspath(deck.path) if deck.path else "")

    def __init__(self, name, system, loads, settings: CmsReduceSettings,
                 solver_options=None, source: str = ""):
        super().__init__(name, system, loads, solver_options)
        self.settings = settings
        self.source = source                 # the deck's path, recorded in the file
        self.data: superelement.SuperelementData | None = None
        self.omega2 = np.zeros(0)            # the reduced model's own eigenvalues
        self.shapes = np.zeros((0,))
        self.xdmf = None
        self.written = None                  # the superelement file written

    # --- the component ------------------------------------------------------------------------
    def component(self):
        """The component's :class:`~fem.system.System` (its groups, no constraint groups)."""
        from fem.system import System

        model = self.system.model
        names = set(self.settings.groups or [g.name for g in model.groups])
        return System(model.with_changes(groups=tuple(g for g in model.groups
                                                      if g.name in names), constraints=()))

    def reduce(self) -> superelement.SuperelementData:
        """Reduce the component (module docstring); its superelement."""
        s, model = self.settings, self.system.model
        sub = self.component()
        ref = sub.reference_state()
        K = sub.assembler.to_scipy(sub.tangent(ref)).tocsr()
        M = sub.assembler.to_scipy(sub.mass(ref, lumped=s.mass == "lumped")).tocsr()
        ids = model.node_ids[np.asarray(s.nodes, dtype=np.int64)]
        b, labels = node_dofs(sub, ids)
        if len(b) == 0:
            raise ModelError(f"step '{self.name}': the interface nodes {ids.tolist()} have no "
                             "free DOF (all supported): the superelement would have no boundary")
        tag = options_prefix(self.name)[:-1]
        try:
            if s.method == "craig_bampton":
                cb = craig_bampton(K, M, b, modes=s.modes, cutoff=s.cutoff, name=tag,
                                   solver_options=self.solver_options)
                T, Kr, Mr, omega2 = cb.T, cb.K, cb.M, cb.omega2
            else:
                fi = free_interface(K, M, b, modes=s.modes, cutoff=s.cutoff, name=tag,
                                    solver_options=self.solver_options)
                T, omega2 = boundary_form(fi), fi.omega2
                Kr, Mr = T.T @ (K @ T), T.T @ (M @ T)
                Kr, Mr = 0.5 * (Kr + Kr.T), 0.5 * (Mr + Mr.T)
        except (ModelError, DeckError) as err:
            text = str(err).replace(f"component '{tag}': ", "")
            raise ModelError(f"step '{self.name}': {text}") from None
        interrupt.check()
        nslots = model.nslots
        dm = sub.dofmap
        free = (dm.index >= 0) & (dm.index < sub.n_free)
        node, slot = np.nonzero(free)                        # C order: the unknowns in order
        comp = self._nodes = np.unique(node)                 # the component's model nodes
        R = rigid_motions(sub)
        order = np.argsort(ids)                              # interface position of each label
        bnode, bslot = order[np.searchsorted(ids[order], labels // nslots)], labels % nslots
        Xi = model.X[np.asarray(s.nodes, dtype=np.int64)]
        poly: dict = {}
        if s.modal_derivatives:
            n_first = T.shape[1]
            T = self.nonlinear_basis(sub, ref, K, M, T, b, slot, model.X[comp], model.X[node])
            Kr, Mr = T.T @ (K @ T), T.T @ (M @ T)
            Kr, Mr = 0.5 * (Kr + Kr.T), 0.5 * (Mr + Mr.T)
            poly = self.polynomial(sub, ref, Kr, T, slot, bnode, model.X[comp], n_first)
        return superelement.SuperelementData(
            component_mass=lumped_diagonal(M) if s.mass == "lumped" else None,
            stiffening=chord_stiffening(sub, ref, T, Kr, bnode, bslot, Xi)
            if model.dim == 2 else None,
            dim=model.dim, method=s.method, mass=s.mass, name=self.name, units=model.units,
            node_ids=ids, coordinates=Xi, boundary_node=bnode, boundary_slot=bslot, K=Kr,
            M=Mr, momentum=R.T @ (M @ T), gravity=T.T @ (M @ R[:, :model.dim]),
            frequencies=np.sign(omega2) * np.sqrt(np.abs(omega2)),
            component_ids=model.node_ids[comp], component_coordinates=model.X[comp],
            component_dofs=np.column_stack([np.searchsorted(comp, node), slot]), T=T, **poly,
            cells=component_cells(sub.model, comp))

    # --- the component's own nonlinear energy (issue 33 item 2, fem.cms.nonlinear) -----------
    @staticmethod
    def _steps(T: NDArray, slot: NDArray, size: float) -> NDArray:
        """``(c,)`` the enforced displacements of the columns of ``T``.

        Each moves a node by ``nonlinear.STEP`` of the component's ``size`` at most
        (translations, or rotations times the size).
        """
        amp = np.maximum(np.abs(T[slot < 3]).max(axis=0, initial=0.0),
                         size * np.abs(T[slot >= 3]).max(axis=0, initial=0.0))
        return nonlinear.STEP * size / np.maximum(amp, 1e-300)

    def nonlinear_basis(self, sub, ref, K, M, T, b, slot, Xc, Xu):
        """``T`` with modal derivatives and inertial responses appended (fem.cms.nonlinear).

        The kept modes' static modal derivatives and the static responses to inertial loads;
        ``Xc`` the component's node positions, ``Xu (n, 3)`` each unknown's node's.
        """
        size = max(float(np.ptp(Xc, axis=0).max()), 1e-300)
        Phi = T[:, len(b):]
        grad = nonlinear.reduced_gradient(sub, ref, T)
        D = nonlinear.modal_derivatives(grad.full, Phi, self._steps(Phi, slot, size))
        inner = np.ones(T.shape[0], dtype=bool)
        inner[b] = False
        i = np.flatnonzero(inner)
        F = nonlinear.inertial_loads(M, slot, Xu)
        Theta = np.zeros((T.shape[0], D.shape[1] + F.shape[1]))
        tag = options_prefix(self.name)[:-1]
        with Factorization(K[i][:, i], f"cms_{tag}_", self.solver_options) as solve:
            Theta[i] = solve(np.hstack([-D[i], F[i]]))
        Theta = nonlinear.orthonormal(Theta, Phi, M)
        return np.hstack([T, Theta])

    def polynomial(self, sub, ref, Kr, T, slot, bnode, Xc, n_first: int) -> dict:
        """The cubic and quartic tensors of the reduced energy (fem.cms.nonlinear).

        On every coordinate but the first interface node's (its local coordinates are zero on
        the floating frame of :mod:`fem.elements.superelement.corot3d`); the first ``n_first``
        coordinates (the interface's and the kept modes') are first-order, the appended ones
        second-order (:func:`fem.cms.nonlinear.weighted`).
        """
        size = max(float(np.ptp(Xc, axis=0).max()), 1e-300)
        nb = len(bnode)
        index = np.concatenate([np.flatnonzero(bnode != 0), np.arange(nb, T.shape[1])])
        grad = nonlinear.reduced_gradient(sub, ref, T)
        r = T.shape[1]

        def part(z):
            q = np.zeros(r)
            q[index] = z
            return (grad(q) - Kr @ q)[index]

        first = np.flatnonzero(index < n_first)
        A, B = nonlinear.step_coefficients(part, self._steps(T[:, index], slot, size), first)
        return {"nonlinear_index": index, "cubic": A, "quartic": B,
                "quartic_index": index[first]}

    # --- the step -----------------------------------------------------------------------------
    def run(self, state, results):
        """Reduce, write ``/cms/<step>/``, the recovered modes and the file; ``state`` unchanged."""
        if np.any(state.u != 0) or np.any(state.dof_values()[:, state.dim:] != 0):
            self.warn("the component is reduced about its reference configuration; the "
                      "displacements of the steps before are not in the superelement")
        note_serial(f"step '{self.name}': the CMS reduction (dense matrices)")
        d = self.data = self.reduce()
        try:
            self.omega2, Q = reduced_modes(d.K, d.M)
        except ModelError as err:
            raise ModelError(f"step '{self.name}': {err}") from None
        model = self.system.model
        n, ns = model.n_nodes, model.nslots
        U = d.T @ Q                                            # (n_c, r)
        shapes = np.zeros((len(self.omega2), n, ns))
        shapes[:, self._nodes[d.component_dofs[:, 0]], d.component_dofs[:, 1]] = U.T
        self.shapes = shapes
        if results is not None:
            self._write_results(results, d)
        if results is not None and self.settings.path is not None:
            self._write_file(results, d)
        return state

    def frequencies(self) -> NDArray:
        """(r,) the reduced model's own circular frequencies (negative ``omega^2``: -sqrt)."""
        return np.sign(self.omega2) * np.sqrt(np.abs(self.omega2))

    def _write_results(self, results, d) -> None:
        s, slots = self.settings, self.system.model.slots
        w = self.frequencies()
        hz = w / (2 * np.pi)
        data = {"K": d.K, "M": d.M, "momentum": d.momentum, "gravity": d.gravity,
                "boundary_node_ids": d.node_ids[d.boundary_node],
                "boundary_slots": np.array([slots[k] for k in d.boundary_slot]),
                "interface_node_ids": d.node_ids, "component_frequencies": d.frequencies,
                "frequencies": w, "T": d.T,
                "dof_node_ids": d.component_ids[d.component_dofs[:, 0]],
                "dof_slots": np.array([slots[k] for k in d.component_dofs[:, 1]]),
                "component_node_ids": d.component_ids,
                "component_coordinates": d.component_coordinates}
        if d.stiffening is not None:
            data["stiffening"] = d.stiffening
        attrs = {"method": s.method, "mass": s.mass, "n_boundary": len(d.boundary_slot),
                 "n_modal": d.n_modal, "cutoff": float(s.cutoff or np.nan),
                 "file": s.path or ""}
        results.write_linear(self.name, data, {}, attrs, group="cms")
        self.xdmf = results.write_modes(
            self.name, "cms_reduce", self.omega2, self.shapes,
            attrs={"quantity": "omega^2", "method": s.method, "mass": s.mass},
            extra={"frequencies": w, "hertz": hz},
            labels=[f"mode {i + 1}: {f:.6g} Hz" for i, f in enumerate(hz)], vibration=True)

    def _write_file(self, results, d) -> None:
        """The superelement file, by the results writer; never over another file or the results."""
        path, where = self.settings.path, f"{self.settings.where}.file"
        if os.path.exists(path) and os.path.realpath(path) == os.path.realpath(results.path):
            raise DeckError(where, f"{path!r} is the results file of this run")
        try:
            ours = not os.path.lexists(path) or superelement.is_superelement_file(path)
        except BlockingIOError:
            raise OutputError(f"step '{self.name}': the superelement file {path} is open in "
                              "another program that writes it; it was not touched: close it "
                              "there and run again") from None
        if not ours:
            raise DeckError(where, f"{path!r} exists and is not a superelement file; fem does "
                            "not overwrite files it did not write: remove it or choose another")
        try:
            results.write_superelement(path, d, source=self.source)
        except OSError as err:
            raise OutputError(f"step '{self.name}': cannot write the superelement file {path}: "
                              f"{err.strerror or err}") from None
        self.written = path

    def summary(self) -> list[str]:
        """Lines for the run summary."""
        d, s = self.data, self.settings
        w = self.frequencies()
        lines = [f"{s.method}: {len(d.boundary_slot)} boundary unknowns and {d.n_modal} "
                 f"component modes (of {d.T.shape[0]} unknowns); component frequencies "
                 + (f"{d.frequencies[0]:.6g} to {d.frequencies[-1]:.6g} rad/s"
                    if len(d.frequencies) else "none kept")]
        if d.cubic is not None:
            lines.append(f"of the generalized coordinates, {d.n_modal - len(d.frequencies)} are "
                         "modal derivatives and static responses to inertial loads; polynomial "
                         f"strain energy on {len(d.nonlinear_index)} coordinates")
        lines += [f"reduced mode {i + 1}: {f:.6g} rad/s ({f / (2 * np.pi):.6g} Hz)"
                  for i, f in enumerate(w[:10])]
        if len(w) > 10:
            lines.append(f"... {len(w) - 10} more reduced modes (in the results file)")
        if self.written:
            lines.append(f"superelement file: {self.written}")
        return lines
