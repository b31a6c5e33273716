"""Linear superelements: a component reduced by a ``cms_reduce`` step, as one element of a model.

A superelement is the reduced model of a component (Craig-Bampton or free-interface,
:mod:`fem.analysis.cms`): coordinates ``q = [u_b; eta]``, the component's boundary unknowns ``u_b``
(every free slot of its interface nodes, in the file's order) followed by ``m`` generalized
coordinates ``eta`` (fixed-interface normal modes, or free-interface modes in the boundary
form), with a constant stiffness ``K`` and mass ``M`` (``T^T K T``, ``T^T M T``). As an element
its nodes are the interface nodes (mapped onto the model's nodes by the deck's ``nodes``) and its
``eta`` are element-internal unknowns, numbered in every step (the DOF map's ``internal`` block,
:mod:`fem.dofs`: ``internal_always``).

Linear: small displacements about the reduced configuration. ``u_b`` are the nodes'
translations and rotation vectors (:meth:`fem.state.State.dof_values`), the internal force is
``K q``, the tangent ``K`` (no geometric stiffness: buckling steps refuse it), the strain energy
``q^T K q / 2`` and the energy-conserving force ``K (q_0 + q_1) / 2`` (exact for a quadratic
energy). The interface may sit anywhere the reducing deck had it, shifted by a translation (the
reduced matrices do not change under one); a rotated placement is refused. Large motion (a
floating frame) is a later item of issue 13.

Its inertia is an element-level inertia group of its own
(:class:`fem.inertia.superelement.SuperelementInertia`): the constant ``M`` on ``q`` in static,
modal and dynamic steps (every integrator; the rates of ``eta`` are the state's ``internal_v``,
``internal_a``). The
energy-conserving scheme's force and the inertia are exact at interface nodes with additive
rotations (nodes of small-displacement elements); at a node that turns by spatial spins (shared
with a co-rotational beam, a joint or a rigid body) to second order in its rotation.

Gravity (issue 33, item 3): the reduction stores ``T^T M e_k`` (``reduced/gravity``, the
reduced loads of unit accelerations along the axes, with the mass it reduced), and ``[gravity]``
with acceleration ``a`` loads ``q`` with ``f_r = T^T M a`` (:meth:`Superelement.gravity_parts`):
the part on ``u_b`` as nodal forces of the interface nodes (:func:`fem.loads.gravity_force`), the
part on ``eta`` as forces on the modal coordinates (:func:`fem.loads.modal_gravity`), which the
static step's residual and the dynamic integrators take, booking their work on ``eta``'s
increments in ``external_work`` as any gravity's (so ``total`` stays constant under it).
Dead and exact for a linear superelement: ``T`` is constant. Files without ``reduced/gravity``,
planar co-rotational superelements and the other step types refuse gravity (a deck error at the
step); 3D co-rotational ones take it on their recovered masses in energy-conserving steps
(:mod:`fem.elements.superelement.corot3d`, *Gravity*).

Rigid-body properties (:func:`rigid_properties`): the component's mass, centre of mass and
inertia tensor from ``Q^T M_r Q``, ``Q`` the reduced coordinates of its rigid motions
(``T Q = R``, least squares); exact (the full component's ``R^T M R``) when the basis holds the
rigid motions, as Craig-Bampton and free-interface bases of an unsupported component do; written
as ``mass``, ``center_of_mass`` (model coordinates) and ``inertia`` (about the centre, global
axes) under ``/model/groups/<name>/`` of the results.

The superelement file (HDF5), format :data:`FORMAT`, version :data:`VERSION`, read here
(:func:`read`) and written by the ``cms_reduce`` step's results writer
(:mod:`fem.io.superelement_file`)::

    /                        attrs: format, version, dim, method ("craig_bampton",
                             "free_interface"), mass ("lumped", "consistent"), name (the
                             reducing step), units, title, created, fem_version, source (deck)
    /interface/node_ids      (k,) the interface nodes, in order (a deck's ``nodes`` maps them)
    /interface/coordinates   (k, 3) their reference coordinates
    /boundary/node           (nb,) position of each boundary unknown's node in the interface
    /boundary/slot           (nb,) its DOF slot (0.. in ux, uy(, uz), r..), the order of u_b
    /reduced/K, /reduced/M   (r, r) on q = [u_b; eta], r = nb + m
    /reduced/momentum        (6, r) R^T M T: the linear (rows 0-2) and angular (rows 3-5,
                             about the origin) momentum of the component per unit q rate
    /component/frequencies   (mc,) the component's normal-mode frequencies (rad/s): fixed-
                             interface (Craig-Bampton) or free-free (free interface)
    /component/node_ids      (Nc,) the component's nodes ; /component/coordinates (Nc, 3)
    /component/dofs          (n, 2) node position and slot of each of its unknowns
    /component/T             (n, r) recovery u = T q on those unknowns
    /reduced/stiffening      (r, r) version 2, 2D components with two interface nodes: ``G``,
                             the geometric stiffness of a unit tension along the chord from
                             the first interface node to the second, on q
                             (:func:`fem.analysis.cms.chord_stiffening`): the mean-strain
                             elongation ``e + q^T G q / 2`` of co-rotational superelements
    /reduced/gravity         (r, dim) optional (issue 33): ``T^T M e_k``, the reduced load of a
                             unit acceleration along axis ``k`` (``M`` the reduction's mass);
                             gravity ``a`` loads ``q`` with ``T^T M a`` (:meth:`Superelement.
                             gravity_parts`); files without it take no gravity
    /component/cells/<type>  optional (issue 33, recovery): the component's element cells by
                             cell type (``line``, ``triangle``, ``quad``), ``(E, nen)``
                             positions in ``/component/node_ids``: what the results draw of a
                             3D co-rotational superelement (:mod:`fem.io.drawing`)
    /component/mass          (n,) version 2, reduced with the lumped (diagonal) mass only: that
                             diagonal on those unknowns (translations m, rotations J), what a
                             co-rotational superelement's inertia integrates
                             (:mod:`fem.inertia.floating`)
    /reduced/nonlinear_index (n,) optional (issue 33 item 2, ``modal_derivatives``): the
                             coordinates of q the polynomial strain energy's higher terms
                             act on (all but the first interface node's)
    /reduced/cubic           (n, n, n) ``A`` on those, ``/reduced/quartic`` (m, m, m, m) ``B``
                             on ``/reduced/quartic_index`` (m,) (the first-order coordinates;
                             without it, on the n): ``U(q) = q^T K q/2 + A qqq/6 + B qqqq/24``
                             (:mod:`fem.cms.nonlinear`), what 3D co-rotational superelements
                             stiffen by

Version 1 files (no ``/component/mass``) are still read: linear superelements need nothing more.

Modal damping (issue 30, item 1; the deck's ``damping_ratios``): ratios ``zeta_i`` of the
component modes give the reduced damping matrix on the generalized coordinates alone::

    D_eta = M_ee Phi diag(2 zeta_i omega_i) Phi^T M_ee,   K_ee Phi = M_ee Phi diag(omega_i^2)

(``Phi^T M_ee Phi = I``), the modes of the reduced model with its interface held (``u_b = 0``),
in the order of their frequencies: for Craig-Bampton the file's fixed-interface modes (``M_ee =
I``, ``K_ee = diag(omega^2)``, so ``D_eta = diag(2 zeta_i omega_i)``), for the free interface the
modes of its ``eta`` block. The boundary unknowns (the constraint or attachment modes) are not
damped: ``D`` is zero on ``u_b`` and between ``u_b`` and ``eta``; so when the interface is
clamped, the system's modes are those modes and their damping ratios are the ``zeta_i`` exactly
(Craig & Kurdila, Fundamentals of Structural Dynamics, 2006, section 10.4, modal damping
``2 zeta omega``; Clough & Penzien eq. 12-41 for a modal damping matrix ``M Phi diag(2 zeta
omega) Phi^T M``). The damping force ``D q'`` is linear in the rates ``q' = [v_b; eta']``:

* the Newmark family (``evaluate``) takes ``D q'`` at the step's ends and ``D`` (capability
  ``"damping"``) times ``gamma / (beta h)`` in its Newton matrix, booking the dissipation by the
  trapezoidal rule of the power ``q'^T D q'`` (capability ``"step_control"``,
  :mod:`fem.analysis.events`); the plain mid-point rule takes it at the mid-point rates;
* the energy-conserving scheme (``conserving``) takes ``D dq / h`` (the step's mean rate), tangent
  ``D / h``, and books ``dq^T D dq / h >= 0`` in the history's ``dissipated`` (exactly the work
  the force did), so that ``total + damping`` (``energy/damping``) stays constant to the Newton
  tolerance;
* the linearize step's ``D`` and the modal step's damping ratios take :meth:`damping`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from fem.elements.base import ElementGroup
from fem.errors import DeckError

FORMAT = "fem-superelement"
VERSION = 2
READS = (1, 2)          # the versions this fem reads
SLOTS = {2: ("ux", "uy", "rz"), 3: ("ux", "uy", "uz", "rx", "ry", "rz")}


@dataclass(frozen=True)
class SuperelementData:
    """What a superelement file holds (module docstring); arrays as the file names them."""

    dim: int
    method: str
    mass: str
    name: str
    node_ids: NDArray
    coordinates: NDArray
    boundary_node: NDArray
    boundary_slot: NDArray
    K: NDArray
    M: NDArray
    momentum: NDArray
    frequencies: NDArray
    component_ids: NDArray
    component_coordinates: NDArray
    component_dofs: NDArray
    T: NDArray
    units: str = ""
    #: (n,) the diagonal lumped mass on the component's unknowns, or None (version 1 files,
    #: reductions with the consistent or a non-diagonal mass)
    component_mass: NDArray | None = None
    #: (r, r) the geometric stiffness of a unit chord tension (file doc), or None
    stiffening: NDArray | None = None
    #: (r, dim) ``T^T M e_k``, the reduced loads of unit accelerations along the axes (file
    #: doc), or None (files written before issue 33)
    gravity: NDArray | None = None
    #: (n,) the coordinates the polynomial energy's cubic and quartic terms act on, and
    #: those terms (n, n, n), (n, n, n, n) (file doc), or None
    nonlinear_index: NDArray | None = None
    cubic: NDArray | None = None
    quartic: NDArray | None = None
    #: (m,) the coordinates the quartic term acts on (None: ``nonlinear_index``)
    quartic_index: NDArray | None = None
    #: ``{cell type: (E, nen) positions in component_ids}``, the component's cells (file doc),
    #: or None (files written before issue 33's recovery)
    cells: dict | None = None

    @property
    def n_modal(self) -> int:
        """Generalized coordinates ``eta`` (after the boundary unknowns)."""
        return self.K.shape[0] - len(self.boundary_slot)


def is_superelement_file(path: str) -> bool:
    """Whether ``path`` is an HDF5 file of :data:`FORMAT` (any version)."""
    import h5py

    try:
        with h5py.File(path, "r") as h5:
            return h5.attrs.get("format") == FORMAT
    except BlockingIOError:
        raise                       # open for writing elsewhere: the caller says so
    except (OSError, RuntimeError):
        return False


def read(path: str, where: str) -> SuperelementData:
    """The superelement of file ``path``; a :class:`DeckError` at ``where`` if it is none.

    Refused: a missing or unreadable file, a file of another format or version, a file whose
    arrays do not fit together.
    """
    import h5py

    if not os.path.isfile(path):
        raise DeckError(where, f"cannot read the superelement file {path!r}: "
                        + ("it is not a file" if os.path.exists(path) else "no such file"))
    try:
        h5 = h5py.File(path, "r")
    except BlockingIOError:         # HDF5's file lock: another program writes it
        raise DeckError(where, f"cannot read the superelement file {path!r}: another program "
                        "has it open for writing (HDF5's file lock); close it there (or wait "
                        "for the run that writes it) and run again") from None
    except (OSError, RuntimeError) as err:
        raise DeckError(where, f"cannot read the superelement file {path!r}: it is not an HDF5 "
                        f"file ({str(err).split('(')[0].strip()}); expected a file written by a "
                        "cms_reduce step (its key file)") from None
    with h5:
        fmt, version = h5.attrs.get("format"), h5.attrs.get("version")
        if fmt != FORMAT:
            raise DeckError(where, f"{path!r} is not a superelement file: expected an HDF5 file "
                            f"of format {FORMAT!r} (written by a cms_reduce step), got format "
                            f"{fmt!r}")
        if version not in READS:
            raise DeckError(where, f"{path!r} is a superelement file of version {version}; this "
                            f"fem reads version {' or '.join(str(v) for v in READS)}: reduce the "
                            "component again")
        try:
            a = h5.attrs
            data = SuperelementData(
                dim=int(a["dim"]), method=str(a["method"]), mass=str(a["mass"]),
                name=str(a["name"]), units=str(a.get("units", "")),
                **{k: h5[p][()] for k, p in (
                    ("node_ids", "interface/node_ids"), ("coordinates", "interface/coordinates"),
                    ("boundary_node", "boundary/node"), ("boundary_slot", "boundary/slot"),
                    ("K", "reduced/K"), ("M", "reduced/M"), ("momentum", "reduced/momentum"),
                    ("frequencies", "component/frequencies"),
                    ("component_ids", "component/node_ids"),
                    ("component_coordinates", "component/coordinates"),
                    ("component_dofs", "component/dofs"), ("T", "component/T"))},
                component_mass=h5["component/mass"][()] if "component/mass" in h5 else None,
                stiffening=h5["reduced/stiffening"][()] if "reduced/stiffening" in h5
                else None,
                gravity=h5["reduced/gravity"][()] if "reduced/gravity" in h5 else None,
                **{k: h5[p][()] if p in h5 else None for k, p in (
                    ("nonlinear_index", "reduced/nonlinear_index"), ("cubic", "reduced/cubic"),
                    ("quartic", "reduced/quartic"), ("quartic_index", "reduced/quartic_index"))},
                cells=_read_cells(h5))
        except KeyError as err:
            raise DeckError(where, f"the superelement file {path!r} is incomplete: {err}"
                            ) from None
    _check(data, path, where)
    return data


def _read_cells(h5) -> dict | None:
    """``/component/cells/<type>`` as ``{type: (E, nen) int64}``, or None (file doc)."""
    if "component/cells" not in h5:
        return None
    return {t: np.asarray(ds[()], dtype=np.int64) for t, ds in h5["component/cells"].items()}


def _check(d: SuperelementData, path: str, where: str) -> None:
    """The arrays of a file fit together (else a DeckError: a damaged or edited file)."""
    k, nb, r = len(d.node_ids), len(d.boundary_slot), d.K.shape[0]
    shapes = {"interface/coordinates": (d.coordinates.shape, (k, 3)),
              "boundary/node": (d.boundary_node.shape, (nb,)),
              "reduced/K": (d.K.shape, (r, r)), "reduced/M": (d.M.shape, (r, r)),
              "reduced/momentum": (d.momentum.shape, (6, r)),
              "component/T": (d.T.shape, (len(d.component_dofs), r))}
    if d.stiffening is not None:
        shapes["reduced/stiffening"] = (d.stiffening.shape, (r, r))
    if d.gravity is not None:
        shapes["reduced/gravity"] = (d.gravity.shape, (r, d.dim))
    if d.cubic is not None:
        n = len(d.nonlinear_index) if d.nonlinear_index is not None else -1
        shapes["reduced/cubic"] = (d.cubic.shape, (n,) * 3)
        qi = d.quartic_index
        shapes["reduced/quartic"] = (getattr(d.quartic, "shape", None),
                                     (n if qi is None else len(qi),) * 4)
        for key, ix in (("reduced/nonlinear_index", d.nonlinear_index),
                        ("reduced/quartic_index", qi)):
            if ix is not None and (ix.min(initial=0) < 0 or ix.max(initial=0) >= r):
                shapes[key] = ("values outside the coordinates", (len(ix),))
    if d.component_mass is not None:
        shapes["component/mass"] = (d.component_mass.shape, (len(d.component_dofs),))
    for key, (got, want) in shapes.items():
        if got != want:
            raise DeckError(where, f"the superelement file {path!r} is damaged: {key} has shape "
                            f"{got}, expected {want}")
    if d.dim not in SLOTS or nb > r or (nb and (d.boundary_node.min() < 0
                                                or d.boundary_node.max() >= k
                                                or d.boundary_slot.min() < 0
                                                or d.boundary_slot.max() >= len(SLOTS[d.dim]))):
        raise DeckError(where, f"the superelement file {path!r} is damaged: its boundary "
                        "unknowns do not fit its interface nodes")
    if not (np.all(np.isfinite(d.K)) and np.all(np.isfinite(d.M))):
        raise DeckError(where, f"the superelement file {path!r} is damaged: K or M is not finite")
    for t, c in (d.cells or {}).items():
        if c.ndim != 2 or (c.size and (c.min() < 0 or c.max() >= len(d.component_ids))):
            raise DeckError(where, f"the superelement file {path!r} is damaged: component/cells/"
                            f"{t} does not index its component's nodes")
    for key, value in (("reduced/stiffening", d.stiffening), ("reduced/gravity", d.gravity),
                       ("reduced/cubic", d.cubic), ("reduced/quartic", d.quartic)):
        if value is not None and not np.all(np.isfinite(value)):
            raise DeckError(where, f"the superelement file {path!r} is damaged: {key} is not "
                            "finite")


class Superelement(ElementGroup):
    """One superelement (``E = 1``): the reduced ``K``, ``M`` of a file on its interface nodes.

    Parameters
    ----------
    name : group name
    nodes : (k,) model node indices of the file's interface nodes, in the file's order
    X : (n, 3) the model's reference coordinates
    dim : 2 or 3 (the file's)
    data : the file's content (:func:`read`)
    internal_start : position of its ``eta`` in the internal block of the DOF map: the number
        of element-internal unknowns of the superelements before it in the model
    path : the file it came from (results, messages)
    """

    type_name = "superelement"
    cell_type = "superelement"          # not drawn: its interior is not a cell of the mesh
    capabilities = frozenset({"stiffness", "mass", "energy_conserving", "internal_unknowns"})
    additive_rotations = True           # u_b holds rotation vectors (small displacements)
    inertia = "superelement"            # its own inertia group (fem.inertia.superelement)
    internal_always = True              # its eta are unknowns of every step (fem.dofs)
    stress_names = ()

    def __init__(self, name: str, nodes, X, dim: int, data: SuperelementData,
                 internal_start: int = 0, path: str = "", damping_ratios=None):
        nodes = np.asarray(nodes, dtype=np.int64)
        self.nen = len(nodes)
        super().__init__(name, nodes[None, :], X, dim)
        self.data, self.path, self.internal_start = data, path, int(internal_start)
        self.input_files = (path,) if path else ()      # a run never overwrites it
        slots = SLOTS[dim]
        used = sorted(set(int(s) for s in data.boundary_slot))
        self.dof_names = tuple(slots[s] for s in used)
        ndn, nd, m = len(used), self.nen * len(used), data.n_modal
        col = np.full(len(slots), -1)
        col[used] = np.arange(ndn)
        #: (r,) position of each reduced coordinate in the element vector [nodal | eta]
        self.pos = np.concatenate([data.boundary_node * ndn + col[data.boundary_slot],
                                   nd + np.arange(m)]).astype(np.int64)
        self.Ke = self._embed(data.K)
        self.Me = self._embed(data.M)
        G = np.zeros((1, 6, nd + m))
        G[0][:, self.pos] = data.momentum
        #: (1, 6, nd + m) linear and angular momentum per unit rate (the latter about the
        #: reducing deck's origin, :attr:`offset` away)
        self.momentum = G
        #: (3,) the translation from the file's interface to the model's
        self.offset = (np.asarray(X, dtype=float)[nodes] - data.coordinates).mean(axis=0)
        #: (m,) the modal damping ratios, or None (undamped)
        self.damping_ratios = None
        self.De = None
        if damping_ratios is not None:
            zeta = np.broadcast_to(np.asarray(damping_ratios, dtype=float), (m,)).copy()
            self.damping_ratios = zeta
            self.De = self._embed(modal_damping(data, zeta))
            self.capabilities = self.capabilities | {"damping", "dissipation", "step_control"}

    def _embed(self, A: NDArray) -> NDArray:
        """(1, nd + m, nd + m) the reduced matrix ``A`` on the element vector."""
        n = self.nd + self.data.n_modal
        out = np.zeros((1, n, n))
        out[0][np.ix_(self.pos, self.pos)] = A
        return out

    @property
    def n_internal(self) -> int:
        """The generalized coordinates ``eta`` (element-internal unknowns)."""
        return self.data.n_modal

    # --- gravity and rigid-body properties (module doc) ---------------------------------------
    def gravity_parts(self, acceleration) -> tuple[NDArray, NDArray]:
        """``T^T M a`` split: ``(nen, nslots)`` on its nodes (model slots) and ``(m,)`` on eta.

        Raises a :class:`DeckError` at ``gravity.acceleration`` when the file holds no
        ``reduced/gravity`` (written by fem before issue 33).
        """
        d = self.data
        if d.gravity is None:
            raise DeckError("gravity.acceleration", f"superelement '{self.name}': its file "
                            f"{self.path or d.name!r} holds no gravity load vectors "
                            "(reduced/gravity, which fem writes since issue 33): reduce the "
                            "component again to apply gravity to it")
        f = d.gravity @ np.asarray(acceleration, dtype=float)[:d.dim]
        nb = len(d.boundary_slot)
        nodal = np.zeros((self.nen, len(SLOTS[d.dim])))
        np.add.at(nodal, (d.boundary_node, d.boundary_slot), f[:nb])
        return nodal, f[nb:].copy()

    def rigid_properties(self) -> dict[str, NDArray] | None:
        """Mass, centre of mass (model coordinates) and inertia about it, or None.

        From the reduced mass and the reduced rigid-body motions (:func:`rigid_properties`);
        None when the reduction basis does not hold the rigid motions (a supported component).
        """
        props = rigid_properties(self.data)
        if props is not None:
            props["center_of_mass"] = props["center_of_mass"] + self.offset
        return props

    # --- coordinates ------------------------------------------------------------------------
    def modal(self, state) -> NDArray:
        """(E, m) the generalized coordinates ``eta`` of ``state``."""
        m = self.n_internal
        return state.internal[self.internal_start:self.internal_start + m][None, :]

    def coordinates(self, state) -> NDArray:
        """(E, nd + m) the element vector ``[u_b (nodal slots); eta]``."""
        return np.hstack([self.element_vector(state.dof_values()), self.modal(state)])

    def recover(self, state) -> tuple[NDArray, NDArray]:
        """The component's node ids and their ``(Nc, nslots)`` values ``T q`` (displacements).

        ``T q`` in the reducing deck's frame; slots the component does not have are zero.
        """
        d = self.data
        q = self.coordinates(state)[0, self.pos]
        out = np.zeros((len(d.component_ids), len(SLOTS[self.dim])))
        out[d.component_dofs[:, 0], d.component_dofs[:, 1]] = d.T @ q
        return d.component_ids, out

    def rates(self, state) -> NDArray:
        """(E, nd + m) the element vector's rates ``[v_b (nodal slots); eta']``."""
        m = self.n_internal
        inner = state.internal_v[self.internal_start:self.internal_start + m][None, :]
        return np.hstack([self.element_vector(state.v), inner])

    # --- the element protocol (linear) ---------------------------------------------------------
    def internal_force(self, state) -> NDArray:
        """(E, nd + m) ``K q`` (and ``D q'`` with modal damping)."""
        f = np.einsum("eij,ej->ei", self.Ke, self.coordinates(state))
        if self.De is not None:
            f = f + np.einsum("eij,ej->ei", self.De, self.rates(state))
        return f

    def tangent(self, state) -> NDArray:
        """(E, nd + m, nd + m) ``K`` (constant)."""
        return self.Ke.copy()

    material_tangent = tangent

    def energy(self, state) -> NDArray:
        """(E,) ``q^T K q / 2``."""
        q = self.coordinates(state)
        return 0.5 * np.einsum("ei,eij,ej->e", q, self.Ke, q)

    def stress(self, state) -> NDArray:
        """(E, 0): a superelement has no generalized stresses."""
        return np.zeros((1, 0))

    def mass(self, state=None, lumped: bool = False) -> NDArray:
        """(E, nd + m, nd + m) ``M`` (the file's, lumped or consistent as it was reduced)."""
        return self.Me.copy()

    def lumped_inertia(self, state) -> tuple[NDArray, NDArray]:
        """Zeros: its mass is its own inertia group's (:mod:`fem.inertia.superelement`)."""
        return np.zeros((1, self.nen)), np.zeros((1, self.nen, 3, 3))

    def properties(self) -> dict[str, NDArray]:
        """Component frequencies (rad/s), interface node ids, damping ratios, rigid properties.

        ``mass (1,)``, ``center_of_mass (1, 3)`` and ``inertia (1, 3, 3)`` (about the centre of
        mass, global axes) where the basis holds the rigid motions (:meth:`rigid_properties`).
        """
        out = {"component_frequencies": self.data.frequencies[None, :],
               "interface_ids": self.data.node_ids[None, :]}
        rigid = self.rigid_properties()
        if rigid is not None:
            out.update({k: np.asarray(v)[None] for k, v in rigid.items()})
        if self.damping_ratios is not None:
            out["damping_ratios"] = self.damping_ratios[None, :]
        return out

    def options(self) -> dict[str, str]:
        """The file, its reduction method and mass."""
        return {"file": self.path, "method": self.data.method, "mass": self.data.mass,
                "formulation": "linear"}

    def describe_unknown(self, e: int, j: int) -> str:
        """``"modal coordinate 3 of superelement 'outer'"``."""
        return f"modal coordinate {j + 1} of superelement '{self.name}'"

    # --- modal damping (module doc) ---------------------------------------------------------------
    def damping(self, state) -> NDArray:
        """(E, nd + m, nd + m) ``D`` (constant; zeros when undamped)."""
        return self.De.copy() if self.De is not None else np.zeros_like(self.Ke)

    def power(self, state) -> NDArray:
        """(E,) ``q'^T D q'``, the power the modal damping takes."""
        if self.De is None:
            return np.zeros(1)
        r = self.rates(state)
        return np.einsum("ei,eij,ej->e", r, self.De, r)

    def commit(self, s0, s1, hist) -> dict:
        """The history at ``s1`` for the Newmark family: trapezoidal rule of the power."""
        return {"dissipated": hist["dissipated"]
                + 0.5 * (s1.t - s0.t) * (self.power(s0) + self.power(s1))}

    def check_step(self, s0, s1, mass) -> str | None:
        """Never refused."""
        return None

    def max_step(self, state, mass) -> float:
        """Any step."""
        return np.inf

    # --- the energy-conserving scheme ------------------------------------------------------------
    def conserving_start(self, state) -> dict:
        """``dissipated`` from zero with modal damping; else no history."""
        return {} if self.De is None else {"dissipated": np.zeros(1)}

    def conserving(self, s0, s1, sm, inc, hist, **kinematics):
        """``K (q_0 + q_1) / 2``, tangent ``K / 2``: exact work for the quadratic energy.

        With modal damping, plus ``D dq / h`` (tangent ``D / h``), whose work ``dq^T D dq / h``
        is booked in ``dissipated``.
        """
        q0, q1 = self.coordinates(s0), self.coordinates(s1)
        f = np.einsum("eij,ej->ei", self.Ke, 0.5 * (q0 + q1))
        if self.De is None:
            return f, 0.5 * self.Ke, self.energy(s1), {}
        h = s1.t - s0.t
        dq = q1 - q0
        fd = np.einsum("eij,ej->ei", self.De, dq) / h
        booked = {"dissipated": hist["dissipated"] + np.einsum("ei,ei->e", fd, dq)}
        return f + fd, 0.5 * self.Ke + self.De / h, self.energy(s1), booked

    def outputs(self, state) -> dict[str, NDArray]:
        """``modal_coordinates (E, m)``: ``eta`` per frame (and ``dissipated`` when damped)."""
        out = {"modal_coordinates": self.modal(state).copy()}
        hist = state.history.get(self.name)
        if hist:
            out["dissipated"] = hist["dissipated"]
        return out


RIGID_FIT = 1e-8        # |T Q - R| / |R|: the basis holds the rigid motions


def rigid_motions(data: SuperelementData) -> NDArray:
    """(n, 6) unit rigid translations and rotations about the origin on the component's unknowns.

    A rotation ``theta`` moves a node at ``X`` by ``theta x X`` and turns its rotations by
    ``theta``; 2D: columns ``x``, ``y`` and the rotation about ``z`` (0, 1, 5), the rest zero.
    """
    X = data.component_coordinates[data.component_dofs[:, 0]]
    slot = data.component_dofs[:, 1]
    R = np.zeros((len(slot), 6))
    if data.dim == 2:
        for k in range(2):
            R[slot == k, k] = 1.0
        R[slot == 0, 5], R[slot == 1, 5], R[slot == 2, 5] = (-X[slot == 0, 1], X[slot == 1, 0],
                                                             1.0)
        return R
    eye = np.eye(3)
    for k in range(3):
        t = slot == k
        R[t, k] = 1.0
        R[t, 3:] = np.cross(eye[:, None, :], X[t][None, :, :]).transpose(1, 0, 2)[:, :, k]
        R[slot == 3 + k, 3 + k] = 1.0
    return R


def rigid_properties(data: SuperelementData) -> dict[str, NDArray] | None:
    """Mass, centre of mass and inertia tensor of a component from its reduced model.

    The rigid motions ``R`` (:func:`rigid_motions`) in the reduced coordinates, ``Q`` the
    least-squares solution of ``T Q = R``, give the rigid-body mass matrix ``Q^T M_r Q``::

        [[m I,      m hat(c)^T],
         [m hat(c), J_O       ]]

    (``u = t + theta x X``: kinetic energy ``sum m_i |t + theta x X_i|^2 / 2``) from which
    ``m``, the centre of mass ``c`` and the inertia ``J_c = J_O - m hat(c)^T hat(c)`` about it
    (the parallel-axis theorem; global axes, the reducing deck's coordinates; 2D: ``J_zz`` in
    ``[2, 2]``, the rest zero). Equal to the full component's ``R^T M R`` when ``T`` holds the
    rigid motions (Craig-Bampton or free interface of an unsupported component); None when it
    does not (``|T Q - R| > RIGID_FIT |R|``: a component with supports).
    """
    R = rigid_motions(data)
    Q = np.linalg.lstsq(data.T, R, rcond=None)[0]
    if np.linalg.norm(data.T @ Q - R) > RIGID_FIT * np.linalg.norm(R):
        return None
    A = Q.T @ data.M @ Q
    A = 0.5 * (A + A.T)
    d = data.dim
    m = float(np.trace(A[:d, :d]) / d)
    c = np.zeros(3)
    J = np.zeros((3, 3))
    if d == 2:
        c[:2] = np.array([A[1, 5], -A[0, 5]]) / m
        J[2, 2] = A[5, 5] - m * (c[0] ** 2 + c[1] ** 2)
    else:
        H = A[3:, :3] / m                           # hat(c)
        c[:] = 0.5 * np.array([H[2, 1] - H[1, 2], H[0, 2] - H[2, 0], H[1, 0] - H[0, 1]])
        Hc = np.array([[0.0, -c[2], c[1]], [c[2], 0.0, -c[0]], [-c[1], c[0], 0.0]])
        J = A[3:, 3:] - m * Hc.T @ Hc
    return {"mass": np.array(m), "center_of_mass": c, "inertia": J}


def modal_damping(data: SuperelementData, zeta: NDArray) -> NDArray:
    """(r, r) the reduced damping matrix of modal damping ratios ``zeta (m,)`` (module doc)."""
    import scipy.linalg as sla

    nb, r = len(data.boundary_slot), data.K.shape[0]
    Kee, Mee = data.K[nb:, nb:], data.M[nb:, nb:]
    lam, Phi = sla.eigh(0.5 * (Kee + Kee.T), 0.5 * (Mee + Mee.T))
    omega = np.sqrt(np.maximum(lam, 0.0))
    MP = Mee @ Phi
    D = np.zeros((r, r))
    D[nb:, nb:] = (MP * (2.0 * zeta * omega)) @ MP.T
    D[nb:, nb:] = 0.5 * (D[nb:, nb:] + D[nb:, nb:].T)
    return D
