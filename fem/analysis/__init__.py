"""Analysis steps, one module per step type, registered by their deck type name.

=================  ===========================================  ==================================
``type``           step                                         module
=================  ===========================================  ==================================
``static``         linear; nonlinear under load, displacement   :mod:`fem.analysis.static`
                   or arc-length control
``buckling``       linear buckling about the current state      :mod:`fem.analysis.buckling`
``dynamic``        time integration                             :mod:`fem.analysis.dynamic`
``modal``          natural frequencies and modes about the      :mod:`fem.analysis.modal`
                   current state
``linearize``      M, D, K about the current state or a steady  :mod:`fem.analysis.linearize`
                   spin; eigenvalues, stability, state space
``stability_``     a spin or a load factor stepped through a    :mod:`fem.analysis.sweep`
``sweep``          range: eigenvalues tracked, boundary found
``cms_reduce``     a component reduced to a superelement        :mod:`fem.analysis.cms`
                   (Craig-Bampton or free interface)
``modify``         Hutton-Smith design modification: free-      :mod:`fem.analysis.modify`
                   interface components coupled, sensitivities,
                   forward and inverse modification
=================  ===========================================  ==================================

Every step shares :class:`fem.analysis.base.StepBase` (its PETSc objects, loads, warnings). Steps
see the model through :class:`fem.system.System` and solve with :mod:`fem.solvers`.

A registered type owns its deck: its ``Settings`` dataclass is the schema (:mod:`fem.io.schema`
renders it), its ``check`` the checks against the model (both in ``<type>_deck.py`` beside the
step, where they are long), its ``make`` the constructor, its ``summary`` and ``WRITES`` what the
run reports and writes beside the results (:class:`~fem.analysis.base.StepBase`).
:mod:`fem.io.build_steps` and :mod:`fem.run` use this registry only, never a type's name.
"""

from fem.analysis.buckling import BucklingStep
from fem.analysis.cms import CmsReduceStep
from fem.analysis.dynamic import DynamicStep
from fem.analysis.linearize import LinearizeStep
from fem.analysis.modal import ModalStep
from fem.analysis.modify import ModifyStep
from fem.analysis.static import StaticStep
from fem.analysis.sweep import SweepStep

STEP_TYPES = {"static": StaticStep, "buckling": BucklingStep, "dynamic": DynamicStep,
              "modal": ModalStep, "linearize": LinearizeStep, "stability_sweep": SweepStep,
              "cms_reduce": CmsReduceStep, "modify": ModifyStep}

__all__ = ["STEP_TYPES", "BucklingStep", "CmsReduceStep", "DynamicStep", "LinearizeStep",
           "ModalStep", "ModifyStep", "StaticStep", "SweepStep"]
