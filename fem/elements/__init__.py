"""Element families; every group follows the protocol of :mod:`fem.elements.base`."""

from fem.elements.beam import Beam
from fem.elements.truss import Truss

ELEMENT_TYPES = {"truss": Truss, "beam": Beam}

__all__ = ["Beam", "Truss", "ELEMENT_TYPES"]
