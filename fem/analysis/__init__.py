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

from fem import lazy

#: ``{type: step class}``, a step's module imported when its type is first looked up: a static
#: run imports neither the dynamic step nor the modal one
STEP_TYPES = lazy.Registry({
    "static": "fem.analysis.static:StaticStep",
    "buckling": "fem.analysis.buckling:BucklingStep",
    "dynamic": "fem.analysis.dynamic:DynamicStep",
    "modal": "fem.analysis.modal:ModalStep",
    "linearize": "fem.analysis.linearize:LinearizeStep",
    "stability_sweep": "fem.analysis.sweep:SweepStep",
    "cms_reduce": "fem.analysis.cms:CmsReduceStep",
    "modify": "fem.analysis.modify:ModifyStep",
})

#: ``{type: settings class}`` (the step's ``Settings``), from its deck module where it has one:
#: the deck schema needs every type's settings, not its step
STEP_SETTINGS = lazy.Registry({
    "static": "fem.analysis.static_deck:StaticSettings",
    "buckling": "fem.analysis.buckling:BucklingSettings",
    "dynamic": "fem.analysis.dynamic_deck:DynamicSettings",
    "modal": "fem.analysis.modal:ModalSettings",
    "linearize": "fem.analysis.linearize_deck:LinearizeSettings",
    "stability_sweep": "fem.analysis.sweep_deck:SweepSettings",
    "cms_reduce": "fem.analysis.cms_deck:CmsReduceSettings",
    "modify": "fem.analysis.modify_deck:ModifySettings",
})

_CLASSES = {path.partition(":")[2]: path for path in STEP_TYPES.paths.values()}


def __getattr__(name: str):
    """The step classes by name (``from fem.analysis import StaticStep``), imported then."""
    if name in _CLASSES:
        return lazy.attribute(_CLASSES[name])
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["STEP_SETTINGS", "STEP_TYPES", *_CLASSES]
