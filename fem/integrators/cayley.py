"""Cayley rotations of the energy-conserving scheme (:mod:`fem.integrators.midpoint`).

Which nodes turn by a Cayley parameter ``psi`` instead of the rotation vector (:func:`chord_nodes`:
those of co-rotational beams and shells, and the nodes welded to them), the step kinematics that
carry ``psi`` in the rotation slot (:class:`CayleyKinematics` in 2D, :class:`CayleyKinematics3D`
in 3D), and the secant ``s = dtheta / psi`` that carries forces written for the angle increment
over to ``psi`` with the same work (:func:`cayley_secant`). Why, and what it conserves: the
module docstring of :mod:`fem.integrators.midpoint`, *Cayley rotations*.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from fem.integrators.inertia import StepKinematics


@dataclass
class CayleyKinematics(StepKinematics):
    """2D steps of the energy-conserving scheme: rotations as Cayley parameters.

    ``theta``, ``Theta`` and ``increment`` hold ``psi = 2 tan(dtheta/2)`` in the rotation slot
    (what the velocities, the inertia, the forces and the work are paired with).
    """

    dtheta: NDArray | None = None     # (n,) the nodes' angle increments
    on: NDArray | None = None         # (n,) bool, the nodes that turn by psi (chord_nodes)
    dpsi: NDArray | None = None       # (n,) d psi / d dtheta = 1 + psi^2 / 4
    _secants: tuple | None = field(default=None, repr=False)

    @property
    def secant(self) -> NDArray:
        """(n,) ``dtheta / psi`` at the nodes ``on`` (:func:`cayley_secant`), 1 elsewhere."""
        return self._secant_pair()[0]

    @property
    def dsecant(self) -> NDArray:
        """(n,) the derivative of :attr:`secant` by ``dtheta`` (0 off the nodes ``on``)."""
        return self._secant_pair()[1]

    def _secant_pair(self) -> tuple[NDArray, NDArray]:
        # made when first asked: only forces paired with the angles (joints, linear beams,
        # floating frames) need them, and small models evaluate kinematics thousands of times
        if self._secants is None:
            s, ds = cayley_secant(self.dtheta)
            if not self.on.all():
                s, ds = np.where(self.on, s, 1.0), np.where(self.on, ds, 0.0)
            self._secants = (s, ds)
        return self._secants



@dataclass
class CayleyKinematics3D(StepKinematics):
    """3D steps of the energy-conserving scheme: nodes ``on`` turn by ``cay(psi) R0``.

    ``theta``, ``Theta = R0^T psi`` and ``increment`` hold ``psi`` at those nodes (what the
    velocities, the inertia, the beams, the external moments and the work are paired with),
    the rotation vectors elsewhere.
    """

    rotvec: NDArray | None = None     # (n, 3) every node's log(R1 R0^T), spatial
    on: NDArray | None = None         # (n,) bool, the nodes that turn by cay(psi)
    dTheta: NDArray | None = None     # (n, 3, 3) d Theta / dw there: R0^T cay_inv_spin(psi)
    secant: NDArray | None = None     # (n,) |rotvec| / |psi| (1 elsewhere)
    dsecant: NDArray | None = None    # (n, 3) d secant / dw (0 elsewhere)



def chord_nodes(model) -> NDArray:
    """(n,) the nodes of co-rotational beams and shells, whose rotations follow mid-point chords.

    Every group with a co-rotational (non-``linear``) ``frame`` and an ``rz`` DOF: the 2D and 3D
    beams and the shell triangles (:class:`fem.elements.shell.corot.CorotShellFrame`).

    In 3D also the nodes welded to those by fixed joints (through chains of welds: a rigid
    body welded to a shell node), which turn by the same rotation as the node they are welded
    to: a joint between two nodes that both turn by ``cay(psi)`` conserves angular momentum
    exactly (:mod:`fem.constraints.joint`, *Cayley form*), between a Cayley node and an ``exp``
    node energy only (a welded body drifted by 7e-8 relative over 200 steps,
    tests/test_shell_mixed.py). Nodes joined by other joints keep their own update: a body on a
    hinge keeps ``exp``, and its hinge conserves energy but not angular momentum.

    Nodes of beams with consistent inertia are Cayley nodes like the others: their inertia
    keeps director velocities of its own (:mod:`fem.inertia.beam`), whose mid-point rule
    ``d1 - d0 = psi x (d0 + d1)/2`` pairs the moment ``dbar x f_d`` with ``psi`` and makes
    energy and angular momentum exact. (An earlier ``psi`` form with rigid director rates made
    Newton wander on a few steps of a free flight; so does the ``exp`` form with rigid rates
    once that soft flight's local rotations near pi, which 3% more or less initial velocity
    decides: the flight's difficulty, not the form's; tests/test_consistent_inertia.py.)
    """
    on = np.zeros(model.n_nodes, dtype=bool)
    for g in model.groups:
        frame = getattr(g, "frame", None)
        if frame is not None and not frame.linear and "rz" in g.dof_names:
            on[g.conn] = True
    if model.dim == 3:
        welds = [c.conn for c in model.constraints if getattr(c, "kind", "") == "fixed"]
        if welds and on.any():
            welds = np.concatenate(welds)
            while True:                   # one weld further a pass
                one = on[welds[:, 0]] != on[welds[:, 1]]
                if not one.any():
                    break
                on[welds[one].ravel()] = True
    return on



def cayley_secant(dtheta: NDArray) -> tuple[NDArray, NDArray]:
    """``s = dtheta / psi`` with ``psi = 2 tan(dtheta/2)``, and ``ds/ddtheta``; ``(n,)`` each.

    A force ``f`` paired with the angle increment does the work ``f dtheta = (s f) psi``.
    """
    u = 0.5 * np.asarray(dtheta, dtype=float)
    small = np.abs(u) < 0.1
    us = np.where(u == 0, 1.0, u)
    ul = np.where(small, 1.0, u)
    u2 = u * u
    s = np.where(u == 0, 1.0, us / np.tan(us))
    # u cot u = 1 - u^2/3 - u^4/45 - 2 u^6/945 - u^8/4725 - 2 u^10/93555 - ...
    ds_du = np.where(small, -u * (2 / 3 + u2 * (4 / 45 + u2 * (12 / 945 + u2 * (
        8 / 4725 + u2 * 20 / 93555)))), 1 / np.tan(ul) - ul / np.sin(ul) ** 2)
    return s, 0.5 * ds_du
