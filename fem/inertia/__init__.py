"""Inertia groups: the masses of a model as dynamics, modal analysis and energy balances see them.

Inertia is a capability of a group, separate from its stiffness: an element family declares
``"mass"`` and gives its lumped nodal inertia
(:meth:`fem.elements.base.ElementGroup.lumped_inertia`), point masses add theirs, and an
*inertia group* turns them into what the analyses need. Every inertia group gives
``kinetic_energy(state)``, ``linear_momentum(state)`` (3,) and ``angular_momentum(state, X)``
(3,, about the origin), the three at once (``balance(state, X)``, what a frame writes), and
the inertial forces of the two integrator families, in one of two shapes:

* **nodal** (:class:`fem.inertia.nodal.NodalInertia`, one per model): ``mass_blocks()``
  (n, nslots, nslots) of the mass matrix, ``diagonal()``, ``midpoint_force(s0, s1, kin, h, Pi0,
  R1)`` and ``newmark_force(state, kin, h, beta, gamma)`` as nodal arrays ``(n, nslots)`` with
  node-block tangents; it also keeps what the nodal velocity updates use (``lie``,
  ``body_velocity``, ``spatial_momentum``);
* **element-level** (:class:`fem.inertia.beam.ConsistentBeamInertia` for beams with
  ``inertia = "consistent"``, :class:`fem.inertia.superelement.SuperelementInertia` for
  superelements, :class:`fem.inertia.floating.FloatingInertia` for the recovered nodes of
  co-rotational ones; rigid bodies are nodal): ``index`` (its element group),
  ``element_mass(state)`` (E, nd, nd), ``nodal_mass(n)`` (diagonal estimates), and
  ``midpoint_force``/``newmark_force`` as element vectors and matrices of that group.

:func:`inertia_groups` gives a model's inertia: the nodal group alone, or an :class:`InertiaSum`
of it and the element-level groups (``nodal``, ``extras``; energies and momenta summed), which
the integrators and ``System.mass`` use.
"""

from __future__ import annotations

from numpy.typing import NDArray

from fem.inertia.beam import ConsistentBeamInertia, consistent_groups
from fem.inertia.floating import FloatingInertia
from fem.inertia.floating3d import FloatingInertia3D
from fem.inertia.nodal import NodalInertia
from fem.inertia.superelement import SuperelementInertia


class InertiaSum:
    """Several inertia groups summed: the nodal group plus element-level ones.

    The nodal group (:class:`NodalInertia`) keeps every nodal quantity the velocity updates use
    (``lie``, ``body_velocity``, ``spatial_momentum``); the others (e.g.
    :class:`fem.inertia.beam.ConsistentBeamInertia`) give element forces and tangents for one
    element group each (``index``). Energies and momenta are sums; ``m``, ``I``, ``J`` are the
    nodal group's plus the others' translational masses, for diagonal estimates only.
    """

    def __init__(self, nodal: NodalInertia, extras):
        self.nodal, self.extras = nodal, list(extras)
        self.dim, self.nslots, self.lie = nodal.dim, nodal.nslots, nodal.lie
        self.m = nodal.m + sum(x.nodal_mass(len(nodal.m)) for x in self.extras)
        self.I, self.J = nodal.I, nodal.J

    def diagonal(self) -> NDArray:
        """(n, nslots) the nodal group's diagonal plus the others' translational masses."""
        out = self.nodal.diagonal()
        out[:, :self.dim] += (self.m - self.nodal.m)[:, None]
        return out

    def body_velocity(self, state, R=None) -> NDArray:
        """The nodal group's (see :meth:`NodalInertia.body_velocity`)."""
        return self.nodal.body_velocity(state, R)

    def spatial_momentum(self, state, R=None) -> NDArray:
        """The nodal group's (see :meth:`NodalInertia.spatial_momentum`)."""
        return self.nodal.spatial_momentum(state, R)

    def kinetic_energy(self, state) -> float:
        """Sum over the groups."""
        return self.nodal.kinetic_energy(state) + sum(x.kinetic_energy(state)
                                                      for x in self.extras)

    def linear_momentum(self, state) -> NDArray:
        """(3,) sum over the groups."""
        return self.nodal.linear_momentum(state) + sum(x.linear_momentum(state)
                                                       for x in self.extras)

    def angular_momentum(self, state, X: NDArray) -> NDArray:
        """(3,) sum over the groups, about the origin."""
        return self.nodal.angular_momentum(state, X) + sum(x.angular_momentum(state, X)
                                                           for x in self.extras)


    def balance(self, state, X: NDArray) -> tuple[float, NDArray, NDArray]:
        """The kinetic energy, linear and angular momentum: each group's ``balance``, summed.

        One call per group, so a group evaluates what the three share once
        (:meth:`fem.inertia.beam.ConsistentBeamInertia.balance`); the sums are those of
        :meth:`kinetic_energy`, :meth:`linear_momentum` and :meth:`angular_momentum`, in the
        same order, bit for bit.
        """
        T, L, H = self.nodal.balance(state, X)
        parts = [x.balance(state, X) for x in self.extras]
        return (T + sum(p[0] for p in parts), L + sum(p[1] for p in parts),
                H + sum(p[2] for p in parts))

def inertia_groups(system, state=None):
    """The model's inertia: :class:`NodalInertia` alone or an :class:`InertiaSum`.

    NodalInertia alone (today's numbers) unless element groups ask for an inertia of their own
    (consistent beams, superelements; co-rotational ones: :mod:`fem.inertia.floating`).
    """
    nodal = NodalInertia(system, state)
    kinds = _kinds()
    extras = consistent_groups(system) + [
        kinds[g.inertia](system, i) for i, g in enumerate(system.model.groups)
        if getattr(g, "inertia", "lumped") in kinds]
    return InertiaSum(nodal, extras) if extras else nodal


def _kinds() -> dict:
    """The element-level inertia group of each ``inertia`` an element group may declare."""
    return {"superelement": SuperelementInertia, "floating": FloatingInertia,
            "floating3d": FloatingInertia3D}


def rate_fields(model) -> dict[str, dict[str, tuple]]:
    """The rates the model's inertia groups declare: ``{group: {name: (shape, fill)}}``.

    What :meth:`fem.system.System.reference_state` creates in ``State.rates`` (``fill``: the
    value at the reference, NaN for the stamps that say the rates were never written). The
    rates of the superelements' ``eta`` are the state's ``internal_v``, ``internal_a``.
    """
    out = {}
    for g in model.groups:
        kind = getattr(g, "inertia", "lumped")
        if kind == "consistent" and "mass" in g.capabilities:
            fields = ConsistentBeamInertia.rate_fields(g)
        elif kind in _kinds():
            fields = _kinds()[kind].rate_fields(g)
        else:
            fields = {}
        if fields:
            out[g.name] = fields
    return out
