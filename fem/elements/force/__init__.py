"""Force elements between two nodes, or a node and the ground (issue 30, items 2 and 3).

:mod:`~fem.elements.force.laws` the force laws (linear, or tables) and their step forms;
:mod:`~fem.elements.force.base` what the groups share (history, dissipation, the dynamic
step's protocol); :mod:`~fem.elements.force.axial` axial spring-dampers;
:mod:`~fem.elements.force.bushing` plane bushings;
:mod:`~fem.elements.force.bushing3d` 3D bushings;
:mod:`~fem.elements.force.coordinate` forces on a joint coordinate (rotational spring-dampers,
the forces in joints: springs, dampers, friction, stops, efforts, PD controllers);
:mod:`~fem.elements.force.deck` the ``[[connectors]]`` table.
"""

from fem.elements.force.axial import SpringDamper
from fem.elements.force.base import ForceElement
from fem.elements.force.bushing import Bushing
from fem.elements.force.bushing3d import Bushing3D
from fem.elements.force.coordinate import CoordinateForce
from fem.elements.force.laws import Curve

__all__ = ["Bushing", "Bushing3D", "CoordinateForce", "Curve", "ForceElement", "SpringDamper"]
