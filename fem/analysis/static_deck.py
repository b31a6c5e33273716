"""The deck of a static step: its keys (:class:`StaticSettings`) and their checks.

:class:`fem.analysis.static.StaticStep` declares them: :func:`check` runs once the deck builder
(:mod:`fem.io.build_steps`) has checked what every step shares, and checks the control's keys
against the model and the loads.
"""

from __future__ import annotations

from dataclasses import dataclass

from fem.analysis.settings import MAX_INCREMENTS, MAX_ITERATIONS, from_values, setting
from fem.dofs import DofMap
from fem.errors import DeckError
from fem.io.keys.entries import slot
from fem.solvers.newton import LINE_SEARCHES

PATHS = ("displacement", "arclength")

# LINE_SEARCH_DEFAULT: ``line_search = "none"``: full Newton corrections, applied along turned
# chords on co-rotational beams when the straight one raised the residual (fem.analysis.bent).
# The line searches of fem.solvers.newton.LineSearch are offered, not the default: on
# co-rotational beams both hurt, on trusses the energy search saves iterations but hides limit
# points from the load-control watch. Measured (load control, tolerance of the deck; Newton
# iterations over the step, increments in brackets when cut back):
#   two-bar string sagging by 1e-3, P = 1e-2, 1 increment:  none 9,  residual 6,  energy 4
#                                  P = 1e-4, 1 increment:  none 13, residual 4,  energy 5
#                                  P = 1e-2, 10 increments: none 41, residual 37, energy 33
#   shallow von Mises truss past its limit, 1 / 4 / 10 increments: none 5 / 17 / 37,
#       residual 7 / 16 / 35-40, energy 4 / 15 / 34
#   slender arch (tests/test_slender_arch.py, 1000 elements, 10 equal increments): none (bent)
#       41; energy and residual fail in the first increment (no cut-back allowed); with
#       cut-back energy needs 40 increments and 486 iterations
#   elastica cantilever (cases/), 20 / 5 / 1 increments: none (bent) 88 / 27 / 8; energy
#       201 / 251 [20] / 273 [16]; residual 33820 [2623] / 33870 / fails
#   rolled-up cantilevers 2D / 3D, 2 increments: none 16 / 17; energy 44 / 120 [4];
#       residual 2879 [128] / 16031 [759]
# Along the straight correction of a co-rotational beam the potential is least at a few percent
# of it (fem.analysis.bent), so both searches crawl; on trusses the energy search saves up to
# two thirds of the iterations and never cost any in these runs (the residual one sometimes
# does), but on the von Mises truss loaded to 2.6 times its limit load in 10 increments
# (tests/test_nonlinear_static.py) its damped step (s = 0.3) carries the apex across the
# unstable branch without one factored tangent of the other sign there, so the step's warning
# that it passed a limit point under load control is lost: a silent wrong path. Where the model
# has no co-rotational beam, the energy search is one key away (tests/test_line_search.py).


@dataclass
class StaticSettings:
    """Settings of a static step: the deck keys of ``[[steps]]`` with ``type = "static"``.

    The variant of a static step is ``"linear"``, or its control when ``nonlinear = true``.
    ``node`` and ``dof`` hold a node index and a DOF slot (the deck gives an id and a name).
    """

    nonlinear: bool = setting("bool", False, "geometrically nonlinear path following")
    control: str = setting("str", "load", "nonlinear: load, displacement or arclength",
                           used_by=("load", *PATHS),
                           choices=("load", "displacement", "arclength"))
    load_factor: float = setting("float", 1.0, "load control: final load factor (nonzero; "
                                 "negative reverses the loads)", used_by=("load",))
    increments: int = setting("int", 10, "load/displacement control: initial number of "
                              "increments", used_by=("load", "displacement"), positive=True,
                              maximum=MAX_INCREMENTS)
    min_increment: float | None = setting("float", None, "load control: smallest increment "
                                          "before giving up", used_by=("load",), positive=True)
    max_increment: float | None = setting("float", None, "load control: largest increment",
                                          used_by=("load",), positive=True)
    max_iterations: int = setting("int", 25, "Newton iterations per increment",
                                  used_by=("load", *PATHS), positive=True,
                                  maximum=MAX_ITERATIONS)
    tolerance: float = setting("float", 1e-9, "relative residual tolerance",
                               used_by=("load", *PATHS), positive=True)
    node: int | None = setting("int", None, "displacement control: the controlled node; "
                               "arclength: the node watched by target", used_by=PATHS)
    dof: int | None = setting("str", None, "displacement control / arclength: DOF name of node",
                              used_by=PATHS)
    target: float | None = setting("float", None, "displacement control: final value of the "
                                   "DOF; arclength: stop once the DOF passes it", used_by=PATHS)
    arc_length: float | None = setting("float", None, "arclength: initial arc length",
                                       used_by=("arclength",), positive=True)
    max_arc_length: float | None = setting("float", None, "arclength: largest arc length "
                                           "(default 10 x the initial)", used_by=("arclength",),
                                           positive=True)
    max_steps: int = setting("int", 100, "arclength: number of increments",
                             used_by=("arclength",), positive=True, maximum=MAX_INCREMENTS)
    psi: float = setting("float", 0.0, "arclength: load weight, 0 cylindrical, 1 spherical",
                         used_by=("arclength",), nonnegative=True)
    target_iterations: int = setting("int", 5, "arclength: iterations the arc length adapts "
                                     "to", used_by=("arclength",), positive=True,
                                     maximum=MAX_ITERATIONS)
    stop_load_factor: float | None = setting("float", None, "arclength: stop when |load "
                                             "factor| reaches it", used_by=("arclength",))
    line_search: str = setting("str", "none", "load control: how much of each Newton correction "
                               "to apply: none (all; co-rotational beams bend it), residual "
                               "(backtracking on the residual norms) or energy (on the "
                               "potential's slope); see Newton's convergence test and line "
                               "search", used_by=("load",),
                               choices=LINE_SEARCHES)
    newton: str = setting("str", "full", "load control: full (a new tangent every iteration) "
                          "or modified (the increment's first tangent reused while each "
                          "iteration reduces the residual at least 4-fold)", used_by=("load",),
                          choices=("full", "modified"))
    fast_iterations: int = setting("int", 4, deck=False)

    VARIANTS = ("linear", "load", "displacement", "arclength")
    REMOVES = ("linear", "load")           # the variants that may take loads off

    @staticmethod
    def variant(values: dict) -> str:
        """``"linear"`` or the control of a nonlinear step, from its deck values."""
        return values["control"] if values["nonlinear"] else "linear"


def describe(variant: str) -> str:
    """How deck messages name a static step of ``variant`` (``"linear"`` or its control)."""
    if variant == "linear":
        return "a linear static step (set nonlinear = true for path following)"
    return f"a static step with control = \"{variant}\""


def check(e, inputs, spec: dict) -> StaticSettings:
    """The settings of static step ``e``: its control's node, DOF and target checked."""
    v, loads = e.values, spec["loads"]
    variant = StaticSettings.variant(v)
    if variant == "load":
        _load_control_counts(e, v)
    s = from_values(StaticSettings, {**v, "control": v["control"] if v["nonlinear"] else "load"})
    if variant == "displacement":
        for key in ("node", "dof", "target"):
            if v[key] is None:
                raise DeckError(f"{e.where}.{key}", "missing; displacement control needs node, "
                                "dof and target")
        s.node, s.dof = _free_dof(e, inputs, "displacement control needs")
        s.target = v["target"]
        if s.target == 0:
            raise DeckError(f"{e.where}.target", "must be nonzero")
    elif variant == "arclength":
        _arclength(e, inputs, s)
    if variant in ("displacement", "arclength"):
        for ld in loads:
            if ld.function is not None:
                raise DeckError(f"{e.where}.loads", f"load '{ld.name}' has a function; "
                                f"{variant} control scales proportional loads")
        if not loads:
            raise DeckError(f"{e.where}.loads", f"{variant} control needs a reference load")
    return s


def _arclength(e, inputs, s) -> None:
    """The arc lengths of an arclength step, and the DOF it watches if it names one."""
    v = e.values
    if v["arc_length"] is None:
        raise DeckError(f"{e.where}.arc_length", "missing; arclength control needs it")
    s.arc_length, s.max_steps, s.psi = v["arc_length"], v["max_steps"], v["psi"]
    s.target_iterations, s.stop_load_factor = v["target_iterations"], v["stop_load_factor"]
    s.max_arc_length = v["max_arc_length"] or 10 * v["arc_length"]
    if v["max_arc_length"] is not None and v["max_arc_length"] < v["arc_length"]:
        raise DeckError(f"{e.where}.max_arc_length", "must be at least arc_length")
    watched = [k for k in ("node", "dof", "target") if v[k] is not None]
    if watched and len(watched) < 3:
        raise DeckError(f"{e.where}.{watched[0]}", "stopping on a displacement needs node, "
                        "dof and target together")
    if watched:
        s.node, s.dof = _free_dof(e, inputs, "arc-length control watches")
        s.target = v["target"]


def _free_dof(e, inputs, needs: str) -> tuple[int, int]:
    """Node index and DOF slot of a step's ``node`` and ``dof``, which must be a free DOF."""
    v, model = e.values, inputs.model
    node = int(inputs.nodes.indices(v["node"], f"{e.where}.node")[0])
    dof = slot(model.dim, v["dof"], f"{e.where}.dof")
    if not DofMap.build(model).active[node, dof]:
        raise DeckError(f"{e.where}.dof", f"node {v['node']} has no DOF {v['dof']}: no "
                        f"element using it connects to the node; {needs} a free DOF")
    if model.fixed[node, dof] or any(p.slot == dof and node in p.nodes
                                     for p in model.prescribed):
        raise DeckError(f"{e.where}.dof", f"node {v['node']} {v['dof']} is supported or "
                        f"prescribed; {needs} a free DOF")
    return node, dof


def _load_control_counts(e, v: dict) -> None:
    """``load_factor`` applies a load, in at most ``MAX_INCREMENTS`` increments."""
    if v["load_factor"] == 0:
        raise DeckError(f"{e.where}.load_factor", "expected a nonzero load factor, got 0: the "
                        "step applies no load (a negative one reverses the loads)")
    count = v["increments"]
    if v["max_increment"] is not None:
        count = max(count, abs(v["load_factor"]) / v["max_increment"])
    if count > MAX_INCREMENTS:
        raise DeckError(f"{e.where}.max_increment", f"expected at most {MAX_INCREMENTS} "
                        f"increments, got |load_factor| / max_increment = {count:.3g}; raise "
                        "max_increment")
