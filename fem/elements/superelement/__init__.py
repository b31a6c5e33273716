"""The superelement family: reduced components in the model (:class:`Superelement`).

One folder, one registered family (``register("superelement", Superelement, deck)`` in
:mod:`fem.elements`): :mod:`~fem.elements.superelement.group` the linear group, its data and
its file's format, :mod:`~fem.elements.superelement.corot` the planar co-rotational one (a
floating frame), :mod:`~fem.elements.superelement.corot3d` the spatial one,
:mod:`~fem.elements.superelement.deck` the deck entry. Its inertia groups are
:mod:`fem.inertia.superelement`, :mod:`fem.inertia.floating` and :mod:`fem.inertia.floating3d`.
"""

from fem.elements.superelement.group import Superelement

__all__ = ["Superelement"]
