"""Time integrators; all share the protocol of :mod:`fem.integrators.base`.

========================  ==========================================================================
name                      scheme
========================  ==========================================================================
``energy_conserving``     Crisfield & Shi's energy-conserving mid-point scheme (:mod:`.midpoint`)
``midpoint``              the plain mid-point rule (:mod:`.midpoint`)
``trapezoidal``           Newmark's average acceleration, beta = 1/4, gamma = 1/2 (:mod:`.alpha`)
``generalized_alpha``     Chung & Hulbert's generalized-alpha, ``rho_inf`` given (:mod:`.alpha`)
========================  ==========================================================================
"""

from fem.integrators.alpha import GeneralizedAlpha, Trapezoidal
from fem.integrators.midpoint import EnergyConserving, MidpointRule

INTEGRATORS = {"energy_conserving": EnergyConserving, "midpoint": MidpointRule,
               "trapezoidal": Trapezoidal, "generalized_alpha": GeneralizedAlpha}


def make_integrator(name: str, system, inertia, loads, h: float, rho_inf: float = 0.8,
                    reference=None):
    """An integrator by name (``reference``: see :class:`fem.integrators.base.Integrator`)."""
    cls = INTEGRATORS[name]
    extra = {"rho_inf": rho_inf} if cls is GeneralizedAlpha else {}
    integ = cls(system, inertia, loads, h, **extra)
    if reference is not None:
        integ.reference = reference
    return integ
