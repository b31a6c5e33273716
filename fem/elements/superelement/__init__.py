"""The superelement family: reduced components in the model (:class:`Superelement`).

One folder, one registered family (``register("superelement", Superelement, deck)`` in
:mod:`fem.elements`): :mod:`~fem.elements.superelement.group` the linear group, its data and
its file's format, :mod:`~fem.elements.superelement.corot` the planar co-rotational one (a
floating frame), :mod:`~fem.elements.superelement.deck` the deck entry. Its inertia groups are
:mod:`fem.inertia.superelement` and :mod:`fem.inertia.floating`.
"""

from fem.elements.superelement.group import Superelement

__all__ = ["Superelement"]
