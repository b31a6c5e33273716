"""Penalty contact with impact and friction (issue 30, item 4).

:mod:`~fem.elements.contact.laws` the normal laws of the seeds (Hertz, Hunt-Crossley,
Lankarani-Nikravesh, Kelvin-Voigt, Hertz with permanent indentation) and their step forms;
:mod:`~fem.elements.contact.group` the groups (:class:`SphereContact`: spheres on nodes against
each other; :class:`PlaneContact`: spheres or bare nodes against a plane), regularized Coulomb
friction and the time-step control; :mod:`~fem.elements.contact.body_plane` a plane carried by a
rigid body (:class:`BodyPlaneContact`); :mod:`~fem.elements.contact.sphere_set` a
set of spheres whose every pair may touch (:class:`SphereSetContact`: a broad phase before each
time step); :mod:`~fem.elements.contact.deck` the ``[[contacts]]`` table.
"""

from fem.elements.contact.body_plane import BodyPlaneContact
from fem.elements.contact.group import Contact, PlaneContact, SphereContact
from fem.elements.contact.laws import LAWS, NormalLaw, contact_time_factor, hertz_stiffness
from fem.elements.contact.sphere_set import SphereSetContact

__all__ = ["LAWS", "BodyPlaneContact", "Contact", "NormalLaw", "PlaneContact", "SphereContact",
           "SphereSetContact", "contact_time_factor", "hertz_stiffness"]
