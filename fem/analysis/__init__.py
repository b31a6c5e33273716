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

#: each type's step class and its settings class (its ``Settings``, the deck schema: in its deck
#: module where it has one), as ``"module:name"``: a module is imported when its type is first
#: looked up, so that a static run imports neither the dynamic step nor the modal one, and
#: reading a deck, which needs every type's settings, imports no step it does not run
_TYPES = {
    "static": ("static:StaticStep", "static_deck:StaticSettings"),
    "buckling": ("buckling:BucklingStep", "buckling:BucklingSettings"),
    "dynamic": ("dynamic:DynamicStep", "dynamic_deck:DynamicSettings"),
    "modal": ("modal:ModalStep", "modal:ModalSettings"),
    "linearize": ("linearize:LinearizeStep", "linearize_deck:LinearizeSettings"),
    "stability_sweep": ("sweep:SweepStep", "sweep_deck:SweepSettings"),
    "cms_reduce": ("cms:CmsReduceStep", "cms_deck:CmsReduceSettings"),
    "modify": ("modify:ModifyStep", "modify_deck:ModifySettings"),
}

#: ``{type: step class}``
STEP_TYPES = lazy.Registry({t: f"{__name__}.{step}" for t, (step, _) in _TYPES.items()})
#: ``{type: settings class}``, each ``STEP_TYPES[type].Settings``
STEP_SETTINGS = lazy.Registry({t: f"{__name__}.{settings}" for t, (_, settings) in _TYPES.items()})

_CLASSES = {path.partition(":")[2]: path for path in STEP_TYPES.paths.values()}


def __getattr__(name: str):
    """The step classes by name (``from fem.analysis import StaticStep``), imported then."""
    if name in _CLASSES:
        return lazy.attribute(_CLASSES[name])
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["STEP_SETTINGS", "STEP_TYPES", *_CLASSES]
