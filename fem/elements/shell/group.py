"""Three-node flat facet shells: OPT membrane with drilling rotations plus the DKT plate (linear).

Each triangle is flat; its element frame ``(e1, e2, e3)`` has ``e1`` along side 1-2, ``e3`` the
normal ``(x2 - x1) x (x3 - x1)`` (counter-clockwise corners seen from ``+e3``) and ``e2 = e3 x
e1``. In that frame the stiffness is the sum of two uncoupled parts (a flat facet has no
membrane-bending coupling):

* membrane, DOFs ``(u, v, theta_z)`` per node: Felippa's optimal ANDES triangle (OPT) with
  corner drilling rotations (C. A. Felippa, CMAME 192 (2003) 2125-2168;
  :mod:`fem.elements.shell.membrane`);
* bending, DOFs ``(w, theta_x, theta_y)``: the discrete Kirchhoff triangle, DKT (Batoz, Bathe &
  Ho, IJNME 15 (1980) 1771-1812; :mod:`fem.elements.shell.plate`).

Both pass their patch tests exactly, and together they have exactly the six rigid-body zero
energy modes (the drilling rotation is stiff through the OPT higher-order stiffness, no
artificial drilling spring is added). ``K_global = Lambda^T K_local Lambda`` with ``Lambda`` the
element frame repeated on each node's translations and rotations. This is the small-displacement
(linear) element: rotations are rotation vectors added (``additive_rotations``), force ``K u``,
energy ``u.K u / 2``; ``formulation = "corotational"`` puts it in a co-rotational frame with
its geometric stiffness (:class:`fem.elements.shell.corot.CorotShell`).

**Layered (laminate) sections** (``section``, :mod:`fem.elements.shell.laminate`): classical
lamination theory gives per facet ``N = A eps + B kappa``, ``M = B eps + D kappa``. The OPT
takes ``A`` for ``h D`` (its basic part ``K_b = area B0^T A B0``, ``B0`` the mean-strain map; its
higher-order part ``A`` in ``E_nat``, with ``beta_0`` of the effective Poisson ratio ``A12 /
sqrt(A11 A22)``, which is ``nu`` for an isotropic section: Felippa tunes ``beta_0`` for isotropic
material only), the DKT ``D`` for ``h^3/12 D``, and the coupling is that of the *mean* strains and
curvatures::

    K = [[K_m(A), K_c], [K_c^T, K_b(D)]],   K_c = area B0^T B kbar,

``kbar`` the DKT's mean-curvature map (the mean of its three midpoint curvatures). The OPT's
higher-order strains are not strains (they are scaled by ``beta_0``, and have zero mean), so they
are left uncoupled: the element keeps the constant strain-and-curvature states exactly (the
coupled patch test), and stays positive definite (the DKT's energy is at least that of its mean
curvature, so the energy is at least ``area/2 [eps; kbar]^T [[A, B], [B, D]] [eps; kbar]``).
The mass takes the section's mass, first moment and rotary inertia per area (the first moment
couples in-plane translations and rotations in the consistent mass; the lumped mass, whose nodal
blocks are isotropic, leaves it out). Outputs: ``N``, ``M`` and the stresses at the bottom and
top of every layer (also in its material axes), instead of the homogeneous top, middle and bottom.

**Mass**: consistent: the in-plane translations interpolated linearly (``rho h A / 12 (1 +
delta_ab)``), the deflection by the BCIZ cubic (:func:`~fem.elements.shell.plate.deflection_mass`;
with the linear one the plate frequencies of a 16 x 16 mesh were 0.5-2.8 % high), the rotary
inertia ``rho h^3 / 12`` per area linearly on all three rotations (the drilling one as the
bending ones, so that a node's rotary inertia is isotropic). Lumped: a third of the mass and of
the rotary inertia to each node (isotropic nodal blocks, the same in every frame).

**Outputs** per element: the mean membrane forces ``N`` (``h D eps``, the OPT element's mean
strain is its constant basic strain), the mean moments ``M`` (``M = int z sigma dz``, ``z``
along ``e3``) and the stresses ``N/h + 6 M / h^2``, ``N/h`` and ``N/h - 6 M / h^2`` on the top
(``+e3``), middle and bottom faces (laminates: at the bottom and top of every layer), in global
axes, in the axes of the group's ``direction``, with von Mises and principal stresses, per cell
and averaged to the nodes (:mod:`fem.elements.shell.results`); the element-frame components
stay as ``Nxx_element, ..., sxx_top_element, ...``.
"""

from __future__ import annotations

import re

import numpy as np
from numpy.typing import NDArray

from fem.elements.base import ElementGroup, NodalParts
from fem.elements.shell import results as shell_results
from fem.elements.shell.laminate import Stack, facet_angles
from fem.elements.shell.membrane import OPTMembrane, beta0, plane_stress
from fem.elements.shell.plate import DKTPlate, deflection_mass

#: local DOFs (of u, v, w, rx, ry, rz per node) of the membrane and of the plate
MEMBRANE = np.array([[6 * n, 6 * n + 1, 6 * n + 5] for n in range(3)]).ravel()
PLATE = np.array([[6 * n + 2, 6 * n + 3, 6 * n + 4] for n in range(3)]).ravel()
STRESS_NAMES = ("Nxx", "Nyy", "Nxy", "Mxx", "Myy", "Mxy")
SURFACE_NAMES = ("sxx_top", "syy_top", "sxy_top", "sxx_bottom", "syy_bottom", "sxy_bottom")
#: the element-frame outputs' names: a suffix says so (their components jump between facets)
ELEMENT_FRAME = "_element"
#: what a frame of results may hold of a shell group (deck key ``results``)
RESULTS = ("nodal", "cells", "element")
# what a frame holds unless the deck says: the smooth nodal fields ParaView shows and the
# element-frame values of earlier files; per-triangle global components (as large again) on request
DEFAULT_RESULTS = ("nodal", "element")
MATERIAL_AXES = re.compile(r"_mat(11|22|12)$")     # laminates' layer stresses in material axes


def _per_element(value, n: int) -> NDArray:
    return np.broadcast_to(np.asarray(value, dtype=float), (n,)).copy()


def element_frames(X: NDArray) -> NDArray:
    """(E, 3, 3) element frames, rows ``e1, e2, e3``, of triangles with corners ``X (E, 3, 3)``.

    A degenerate (zero-area) triangle gives a non-finite frame; the deck builder refuses it.
    """
    a, b = X[:, 1] - X[:, 0], X[:, 2] - X[:, 0]
    e1 = a / np.linalg.norm(a, axis=1)[:, None]
    n = np.cross(a, b)
    e3 = n / np.linalg.norm(n, axis=1)[:, None]
    return np.stack([e1, np.cross(e3, e1), e3], axis=1)


class Shell(ElementGroup):
    """A batch of 3-node flat shell triangles (3D models; 6 DOFs per node).

    Parameters
    ----------
    name : group name
    conn : (E, 3) node indices
    X : (n, 3) reference coordinates of the model's nodes
    dim : 3
    E, nu, rho : material, per element or scalar (a homogeneous isotropic section)
    h : thickness, per element or scalar
    section : a layered :class:`~fem.model.ShellSection` instead of ``E, nu, h, rho``
    direction : (3,) the vector whose projection on each facet is the axis 1 of the outputs and
        the axis the layer angles start from; None: global x (homogeneous shells: global z on
        facets to which x is normal, :func:`fem.elements.shell.results.default_axis`)
    source : (E,) the deck row or mesh cell of each triangle (written with the properties)
    results : which of :data:`RESULTS` the outputs hold: the nodal fields, the cell fields in
        global and chosen axes, the element-frame components (with laminates, the layers'
        material-axis components too); default all, a deck's :data:`DEFAULT_RESULTS`
    """

    type_name = "shell"
    nen = 3
    cell_type = "triangle"
    capabilities = frozenset({"stiffness", "mass", "nodal_outputs"})
    additive_rotations = True
    dof_names = ("ux", "uy", "uz", "rx", "ry", "rz")
    stress_names = STRESS_NAMES

    def __init__(self, name, conn, X, dim, *, E=None, nu=None, h=None, rho=0.0, section=None,
                 direction=None, source=None, results=RESULTS):
        if dim != 3:
            raise ValueError("shells are 3D elements (6 DOFs per node)")
        super().__init__(name, conn, X, dim)
        n = len(self)
        self.formulation = "linear"
        self.kept = frozenset(results)
        self.T = element_frames(self.X)                               # (E, 3, 3)
        rel = self.X - self.X[:, :1]
        xy = np.einsum("eij,eaj->eai", self.T[:, :2], rel)             # (E, 3, 2) local
        self.source = None if source is None else np.asarray(source, dtype=np.int64)
        if section is not None:
            self.laminate = Stack.of(section, self.T, (1.0, 0.0, 0.0) if direction is None
                                     else direction)
            self.phi = self.laminate.phi                               # (E,) axis 1 from e1
        else:
            self.laminate = None
            axis = (shell_results.default_axis(self.T[:, 2]) if direction is None
                    else direction)
            self.phi = self._angles(axis)
        if self.laminate is not None:
            Kl = self._laminate(xy)
        else:
            self.props = {"E": _per_element(E, n), "nu": _per_element(nu, n),
                          "h": _per_element(h, n), "rho": _per_element(rho, n)}
            p = self.props
            D = plane_stress(p["E"], p["nu"])
            self.D = D
            self.membrane = OPTMembrane(xy, p["h"], D, beta0(p["nu"]))
            self.Db = (p["h"] ** 3 / 12.0)[:, None, None] * D
            self.plate = DKTPlate(xy, self.Db)
            self.area = self.membrane.area
            Kl = np.zeros((n, 18, 18))
            Kl[:, MEMBRANE[:, None], MEMBRANE[None, :]] = self.membrane.K
            Kl[:, PLATE[:, None], PLATE[None, :]] = self.plate.K
            self._deflection_mass = deflection_mass(xy, p["rho"] * p["h"])
        self.K_local = Kl
        self.Lam = np.zeros((n, 18, 18))                               # local = Lam global
        for k in range(6):
            self.Lam[:, 3 * k:3 * k + 3, 3 * k:3 * k + 3] = self.T
        self.K = np.swapaxes(self.Lam, 1, 2) @ Kl @ self.Lam

    def _angles(self, axis) -> NDArray:
        """(E,) the angle of ``axis`` ((3,) or (E, 3))'s projection from each facet's ``e1``."""
        axis = np.asarray(axis, dtype=float)
        if axis.ndim == 1:
            phi, normal = facet_angles(self.T, axis)
            if np.any(normal):
                raise ValueError(f"direction {axis.tolist()} is normal to facet "
                                 f"{int(np.flatnonzero(normal)[0])}: no in-plane axis")
            return phi
        return np.arctan2(np.sum(self.T[:, 1] * axis, axis=1), np.sum(self.T[:, 0] * axis, axis=1))

    def _laminate(self, xy: NDArray) -> NDArray:
        """(E, 18, 18) local stiffness of a layered section (see the module docstring)."""
        lam = self.laminate
        n = len(self)
        self.props = {"h": lam.h, "rho": lam.rho_h / lam.h}
        self.membrane = OPTMembrane(xy, np.ones(n), lam.A, beta0(lam.poisson()))
        self.Db = lam.D
        self.plate = DKTPlate(xy, lam.D)
        self.area = self.membrane.area
        kbar = self.plate.B.mean(axis=1)                               # (E, 3, 9) mean curvature
        Kc = self.area[:, None, None] * (np.swapaxes(self.membrane.B0, 1, 2) @ lam.B @ kbar)
        Kl = np.zeros((n, 18, 18))
        Kl[:, MEMBRANE[:, None], MEMBRANE[None, :]] = self.membrane.K
        Kl[:, PLATE[:, None], PLATE[None, :]] = self.plate.K
        Kl[:, MEMBRANE[:, None], PLATE[None, :]] = Kc
        Kl[:, PLATE[:, None], MEMBRANE[None, :]] = np.swapaxes(Kc, 1, 2)
        self._deflection_mass = deflection_mass(xy, lam.rho_h)
        return Kl

    # --- kinematics ---------------------------------------------------------------------------
    def _local(self, state) -> NDArray:
        """(E, 18) element DOFs in the element frames."""
        d = self.element_vector(state.dof_values())
        return np.einsum("eij,ej->ei", self.Lam, d)

    def _generalized(self, dl: NDArray) -> NDArray:
        """(E, 6) ``(N, M)`` of local DOFs ``dl (E, 18)``."""
        h = self.props["h"][:, None]
        eps = self.membrane.mean_strain(dl[:, MEMBRANE])
        kap = self.plate.mean_curvature(dl[:, PLATE])
        if self.laminate is not None:
            return np.hstack(self.laminate.generalized(eps, kap))
        N = h * np.einsum("eij,ej->ei", self.D, eps)
        M = np.einsum("eij,ej->ei", self.Db, kap)
        return np.hstack([N, M])

    # --- protocol -----------------------------------------------------------------------------
    def internal_force(self, state) -> NDArray:
        """(E, 18) ``K u`` in the global frame."""
        return np.einsum("eij,ej->ei", self.K, self.element_vector(state.dof_values()))

    def tangent(self, state) -> NDArray:
        """(E, 18, 18) the constant stiffness (global frame)."""
        return self.K.copy()

    def material_tangent(self, state) -> NDArray:
        """(E, 18, 18) the stiffness: all of the linear element's tangent."""
        return self.K.copy()

    def evaluate(self, state, tangent: bool = True) -> tuple[NDArray, NDArray | None]:
        """``K u`` and (if asked) ``K``."""
        return self.internal_force(state), self.K.copy() if tangent else None

    def stress(self, state) -> NDArray:
        """(E, 6) mean membrane forces and moments ``Nxx, Nyy, Nxy, Mxx, Myy, Mxy``."""
        return self._generalized(self._local(state))

    def stress_rate(self, state, due: NDArray) -> NDArray:
        """(E, 6) their change for element increments ``due (E, 18)`` (linear: the same map)."""
        return self._generalized(np.einsum("eij,ej->ei", self.Lam, due))

    def energy(self, state) -> NDArray:
        """(E,) strain energy ``u.K u / 2``."""
        d = self.element_vector(state.dof_values())
        return 0.5 * np.einsum("ei,eij,ej->e", d, self.K, d)

    def mass(self, state=None, lumped: bool = False) -> NDArray:
        """(E, 18, 18) consistent or lumped mass, global axes (see the module docstring)."""
        p, lam = self.props, self.laminate
        if lam is None:
            m = p["rho"] * p["h"] * self.area                          # (E,)
            j = p["rho"] * p["h"] ** 3 / 12.0 * self.area
        else:
            m, j = lam.rho_h * self.area, lam.rho_i * self.area
        per = np.diag([1.0, 1.0, 1.0, 0.0, 0.0, 0.0])[None] * m[:, None, None] + \
            np.diag([0.0, 0.0, 0.0, 1.0, 1.0, 1.0])[None] * j[:, None, None]    # (E, 6, 6)
        if lumped:                   # isotropic nodal blocks: the same in every frame
            return np.einsum("ab,eij->eaibj", np.eye(3) / 3.0, per).reshape(len(self), 18, 18)
        lin = (np.ones((3, 3)) + np.eye(3)) / 12.0
        Ml = np.einsum("ab,eij->eaibj", lin, per).reshape(len(self), 18, 18)
        Ml[:, PLATE[::3, None], PLATE[None, ::3]] = 0.0                # w: the cubic instead
        Ml[:, PLATE[:, None], PLATE[None, :]] += self._deflection_mass
        if lam is not None:          # first moment: u = u0 + z theta_y, v = v0 - z theta_x
            C = np.zeros((len(self), 6, 6))
            C[:, 0, 4] = C[:, 4, 0] = lam.rho_s * self.area
            C[:, 1, 3] = C[:, 3, 1] = -lam.rho_s * self.area
            Ml += np.einsum("ab,eij->eaibj", lin, C).reshape(len(self), 18, 18)
        return np.swapaxes(self.Lam, 1, 2) @ Ml @ self.Lam

    def _deformed(self, state) -> tuple[NDArray, NDArray]:
        """The local DOFs the outputs read ``(E, 18)`` and the facets' frames ``(E, 3, 3)``.

        The linear element's reference frames (rows ``e1, e2, e3``); the co-rotational
        element's deformational DOFs ``p`` and current frames.
        """
        return self._local(state), self.T

    def outputs(self, state) -> dict[str, NDArray]:
        """Cell outputs (see :meth:`results`)."""
        return self.results(state, nodal=False)[0]

    def results(self, state, nodal: bool = True
                ) -> tuple[dict[str, NDArray], NodalParts | None]:
        """Cell outputs and what the nodal fields average (:mod:`fem.elements.shell.results`).

        The element-frame ``N``, ``M`` (and homogeneous shells' surface stresses) as
        ``Nxx_element, ...``; ``N``, ``M``, the face stresses (``s_top``, ``s_mid``,
        ``s_bottom``; laminates: ``s_top``, ``s_bottom`` and ``s_layer<k>_<bottom|top>``) in
        global and chosen axes, their invariants, and ``thickness``; those :attr:`kept` (the
        parts are None without ``"nodal"``, or when not asked for: ``nodal=False``).
        """
        dl, T = self._deformed(state)
        eps = self.membrane.mean_strain(dl[:, MEMBRANE])
        kap = self.plate.mean_curvature(dl[:, PLATE])
        h = self.props["h"]
        cells, material = {}, {}
        if self.laminate is not None:
            N, M = self.laminate.generalized(eps, kap)
            faces = self.laminate.faces(eps, kap)
            fields = {"N": N, "M": M, "s_top": faces[-1][2], "s_bottom": faces[0][2]}
            for name, psi, s in faces:
                fields[f"s_{name}"] = s
                material[f"s_{name}"] = psi
        else:
            N = h[:, None] * np.einsum("eij,ej->ei", self.D, eps)
            M = np.einsum("eij,ej->ei", self.Db, kap)
            mem, bend = N / h[:, None], 6.0 * M / h[:, None] ** 2
            fields = {"N": N, "M": M, "s_top": mem + bend, "s_mid": mem,
                      "s_bottom": mem - bend}
            surf = np.hstack([mem + bend, mem - bend])
            cells.update({n + ELEMENT_FRAME: surf[:, i] for i, n in enumerate(SURFACE_NAMES)})
        NM = np.hstack([N, M])
        cells.update({n + ELEMENT_FRAME: NM[:, i] for i, n in enumerate(STRESS_NAMES)})
        if "element" not in self.kept:
            cells = {}
        more, glob = shell_results.cell_fields(T, self.phi, fields, material)
        if "cells" in self.kept:
            cells.update(more)
            cells["thickness"] = h.copy()
        elif "element" in self.kept:         # the layers' material axes are the element's too
            cells.update({k: v for k, v in more.items() if MATERIAL_AXES.search(k)})
        if not nodal or "nodal" not in self.kept:
            return cells, None
        return cells, shell_results.nodal_parts(self.conn, self.X, T, self.phi, h, glob)

    def properties(self) -> dict[str, NDArray]:
        """Material, thickness and area per element (laminates: layer axis angle, degrees).

        ``source_cell``: the connectivity row or mesh cell each triangle comes from (a
        quadrilateral gives two triangles, :mod:`fem.elements.shell.cells`).
        """
        out = {**self.props, "area": self.area}
        if self.laminate is not None:
            out["direction_angle"] = np.degrees(self.laminate.phi)
        if self.source is not None:
            out["source_cell"] = self.source
        return out

    def options(self) -> dict[str, str]:
        """The formulation."""
        return {"formulation": self.formulation}
