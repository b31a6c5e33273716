"""The deck of a linearize step: its spin, center, and the inputs and outputs it names.

:meth:`fem.analysis.linearize.LinearizeStep.check` calls :func:`check` once the deck builder
(:mod:`fem.io.build_steps`) has checked what every step shares; the keys themselves are the fields
of :class:`fem.analysis.linearize.LinearizeSettings`.
"""

from __future__ import annotations

from fem.analysis.settings import from_values
from fem.dofs import DofMap
from fem.errors import DeckError
from fem.io.build import slot


def check(cls, e, inputs, spec: dict):
    """The settings (class ``cls``) of linearize step ``e``, with the DOFs it names resolved."""
    s = from_values(cls, e.values)
    dim = inputs.model.dim
    if s.spin is not None:
        if len(s.spin) != (1 if dim == 2 else 3):
            raise DeckError(f"{e.where}.spin", "expected " + ("[wz] (2D: a spin about z)"
                            if dim == 2 else "[wx, wy, wz]") + f", got {list(s.spin)}")
        s.spin = [float(w) for w in s.spin]
    if s.center is not None:
        if s.spin is None:
            raise DeckError(f"{e.where}.center", "a point of the spin axis: give spin too")
        if len(s.center) != dim:
            raise DeckError(f"{e.where}.center", f"expected {dim} coordinates, got "
                            f"{list(s.center)}")
    for key in ("inputs", "outputs"):
        if getattr(s, key) is not None:
            setattr(s, key, [_dof(text, f"{e.where}.{key}[{i}]", key, inputs)
                             for i, text in enumerate(getattr(s, key) or [])])
    return s


def _dof(text: str, where: str, key: str, inputs) -> tuple[int, int, str]:
    """``(node index, DOF slot, quantity)`` of an input or output ``"<node> <dof> [quantity]"``."""
    dim = inputs.model.dim
    words = text.split()
    quantity = "displacement"
    if key == "outputs" and len(words) == 3 and words[2] in ("displacement", "velocity"):
        quantity = words.pop()
    if len(words) != 2:
        raise DeckError(where, "expected \"<node> <dof>\"" + (
            " or \"<node> <dof> velocity\"" if key == "outputs" else "")
            + f", e.g. \"11 uy\", got {text!r}")
    try:
        node_id = int(words[0])
    except ValueError:
        raise DeckError(where, f"{words[0]!r} is not a node id") from None
    node = int(inputs.nodes.indices([node_id], where)[0])
    dof = slot(dim, words[1], where)
    model = inputs.model
    if not DofMap.build(model).active[node, dof] or model.fixed[node, dof]:
        raise DeckError(where, f"node {node_id} {words[1]} is not a free DOF (supported, "
                        "or no element uses it)")
    return node, dof, quantity
