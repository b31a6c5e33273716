"""The deck of a linearize step: its keys (:class:`LinearizeSettings`) and their checks.

:class:`fem.analysis.linearize.LinearizeStep` declares them: :func:`check` runs once the deck
builder (:mod:`fem.io.build_steps`) has checked what every step shares, and checks the spin, its
center and the DOFs the inputs and outputs name.
"""

from __future__ import annotations

from dataclasses import dataclass

from fem.analysis.settings import MAX_ITERATIONS, MAX_MODES, OneVariant, from_values, setting
from fem.dofs import DofMap
from fem.errors import DeckError
from fem.io.keys.entries import slot


@dataclass
class LinearizeSettings(OneVariant):
    """Settings of a linearize step: the deck keys of ``[[steps]]`` with ``type = "linearize"``."""

    modes: int = setting("int", 6, "eigenvalue pairs wanted (the nearest the shift; a complex "
                         "pair counts once)", positive=True, maximum=MAX_MODES)
    method: str = setting("str", "lanczos", "eigen-solver: the two-sided Krylov solver on "
                          "Doan, Geradin & Kill's first-order form, or all eigenvalues by "
                          "LAPACK (small models)",
                          choices=("lanczos", "dense"))
    shift: float = setting("float", 0.0, "shift p_s (rad/s, real): the eigenvalues nearest it; "
                           "give a small positive one when the model has free rigid motions")
    spin: list = setting("vector", None, "steady angular velocity [wx, wy, wz] (3D; 2D: [wz]) "
                         "in rad/s: linearize in the frame turning with it, about the relative "
                         "equilibrium it makes")
    center: list = setting("vector", None, "a point of the spin axis (default: origin)")
    geometric: bool = setting("bool", True, "include the stress (geometric) stiffness; false "
                              "shows what a linearization without it predicts")
    inputs: list = setting("names", None, "force inputs of the state-space model: \"<node> "
                           "<dof>\", e.g. \"11 uy\"")
    outputs: list = setting("names", None, "outputs of the state-space model: \"<node> <dof>\" "
                            "(displacement) or \"<node> <dof> velocity\"")
    max_iterations: int = setting("int", 50, "Newton iterations for the relative equilibrium "
                                  "under spin", positive=True, maximum=MAX_ITERATIONS)
    equilibrium: bool = setting("bool", True, "under spin: find the relative equilibrium by "
                                "Newton first; false linearizes about the state as given (the "
                                "joints' reactions balanced as well as they can be)")


def check(e, inputs, spec: dict) -> LinearizeSettings:
    """The settings of linearize step ``e``, with the DOFs it names resolved."""
    s = from_values(LinearizeSettings, e.values)
    dim = inputs.model.dim
    if s.spin is not None:
        if len(s.spin) != (1 if dim == 2 else 3):
            raise DeckError(f"{e.where}.spin", "expected " + ("[wz] (2D: a spin about z)"
                            if dim == 2 else "[wx, wy, wz]") + f", got {list(s.spin)}")
        s.spin = [float(w) for w in s.spin]
        spinning_superelements(inputs.model, f"{e.where}.spin")
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


def refuse_floating_3d(model, where: str, what: str) -> None:
    """A DeckError for 3D co-rotational superelements, which ``what`` does not take yet."""
    from fem.analysis.dynamic_deck import floating_3d

    spatial = floating_3d(model)
    if spatial:
        raise DeckError(where, f"{what} does not take the 3D co-rotational superelement "
                        f"'{spatial[0]}' yet")


def spinning_superelements(model, where: str) -> None:
    """A turning frame needs each superelement's component mass: a DeckError for a file without.

    The components' inertial forces of the turning frame come from their lumped diagonal mass
    (the file's ``/component/mass``, :mod:`fem.inertia.superelement`), which version 1 files and
    reductions with the consistent mass do not keep.
    """
    for g in model.groups:
        data = getattr(g, "data", None)
        if getattr(g, "internal_always", False) and getattr(data, "component_mass", 1) is None:
            raise DeckError(where, f"superelement '{g.name}': a turning frame needs its "
                            "component's lumped mass, which its file "
                            f"{getattr(g, 'path', '')!r} does not keep (reduced with mass = "
                            f"\"{data.mass}\" or by an older fem): reduce the component again "
                            "with mass = \"lumped\"")


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
