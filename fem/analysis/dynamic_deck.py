"""The deck of a dynamic step: its keys (:class:`DynamicSettings`) and their checks.

:class:`fem.analysis.dynamic.DynamicStep` declares them: :func:`check` runs once the deck builder
(:mod:`fem.io.build_steps`) has checked what every step shares, and checks the time step, the
frames, the formulation, the integrator and the velocity fields. :func:`unsupported` is the scope
of the eliminating formulations (:mod:`fem.analysis.eliminated`).
"""

from __future__ import annotations

from dataclasses import dataclass

from fem.analysis.settings import (
    MAX_CUTS,
    MAX_FRAMES,
    MAX_ITERATIONS,
    MAX_TIME_STEPS,
    REQUIRED,
    OneVariant,
    from_values,
    setting,
)
from fem.constraints.joint import Joint
from fem.errors import DeckError
from fem.io.keys import sci
from fem.io.keys.entries import lookup

#: the keys only the multiplier formulation uses
MULTIPLIER_KEYS = ("integrator", "rho_inf", "tolerance", "max_cuts", "settle")
INTEGRATORS = ("energy_conserving", "midpoint", "trapezoidal", "generalized_alpha")
#: how the joints enter the equations of motion (:mod:`fem.analysis.eliminated`)
FORMULATIONS = ("multipliers", "partitioning", "nullspace")


@dataclass
class DynamicSettings(OneVariant):
    """Settings of a dynamic step: the deck keys of ``[[steps]]`` with ``type = "dynamic"``.

    ``velocities`` holds :class:`fem.model.VelocityField` objects (the deck names them).
    """

    formulation: str = setting("str", "multipliers", "how joints are handled: multipliers "
                               "(Lagrange multipliers, any model), or for small 2D mechanisms "
                               "of rigid bodies and joints partitioning (Blajer's coordinate "
                               "partitioning) or nullspace (null-space projection), both "
                               "integrated by fixed-step RK4; see Elimination formulations",
                               choices=FORMULATIONS)
    integrator: str = setting("str", "energy_conserving", "energy_conserving, midpoint, "
                              "trapezoidal or generalized_alpha (multipliers)",
                              choices=INTEGRATORS)
    rho_inf: float = setting("float", 0.8, "generalized_alpha: spectral radius at infinite "
                             "frequency, 0 to 1", nonnegative=True)
    time_step: float = setting("float", REQUIRED, "time step (duration / time_step at most "
                               f"{MAX_TIME_STEPS:.0e})".replace("e+0", "e"), positive=True)
    duration: float = setting("float", REQUIRED, "length of the step in time", positive=True)
    output_interval: float | None = setting("float", None, "time between output frames "
                                            "(default: every [output] every-th step; at most "
                                            f"{MAX_FRAMES:.0e} frames)".replace("e+0", "e"),
                                            positive=True)
    velocities: tuple = setting("names", (), "velocity fields set at the start")
    max_iterations: int = setting("int", 25, "Newton iterations per time step (partitioning, "
                                  "nullspace: per solve for the positions)", positive=True,
                                  maximum=MAX_ITERATIONS)
    tolerance: float = setting("float", 1e-9, "relative residual tolerance (multipliers)",
                               positive=True)
    max_cuts: int = setting("int", 8, "halvings of the time step allowed in a row when Newton "
                            "fails (multipliers)", nonnegative=True, maximum=MAX_CUTS)
    newton: str = setting("str", "full", "full (a new tangent every iteration) or modified "
                          "(the time step's first tangent reused while each iteration reduces "
                          "the residual at least 4-fold; multipliers)",
                          choices=("full", "modified"))
    settle: bool = setting("bool", False, "first move the free positions to the static "
                           "equilibrium under the loads at the step's start (bodies resting on "
                           "contacts start without a jump; fem.analysis.settle; multipliers)")

    REMOVES = ("",)


def check(e, inputs, spec: dict) -> DynamicSettings:
    """The settings of dynamic step ``e``, its velocity fields resolved."""
    v = e.values
    _counts(e, inputs, v)
    refused = unsupported(inputs.model, v, e.given, spec["loads"], spec["prescribed"])
    if refused is not None:
        raise DeckError(f"{e.where}.{refused[0]}", refused[1])
    if v["rho_inf"] > 1:
        raise DeckError(f"{e.where}.rho_inf", f"must lie in [0, 1], got {v['rho_inf']}")
    if "rho_inf" in e.given and v["integrator"] != "generalized_alpha":
        raise DeckError(f"{e.where}.rho_inf", "used by integrator = \"generalized_alpha\" only")
    fields = []
    for name in v["velocities"] or []:
        fields.append(lookup(inputs.velocity_fields, name, "velocity field",
                             f"{e.where}.velocities"))
    return from_values(DynamicSettings, {**v, "velocities": tuple(fields)})


def _counts(e, inputs, v: dict) -> None:
    """Time step and duration given, at most ``MAX_TIME_STEPS`` steps and ``MAX_FRAMES`` frames."""
    for key in ("time_step", "duration"):
        if v[key] is None:
            raise DeckError(f"{e.where}.{key}", "missing; a dynamic step needs time_step and "
                            "duration")
    if v["time_step"] > v["duration"]:
        raise DeckError(f"{e.where}.time_step", f"{v['time_step']} exceeds the duration "
                        f"{v['duration']}")
    steps = v["duration"] / v["time_step"]
    if steps > MAX_TIME_STEPS:
        raise DeckError(f"{e.where}.time_step", f"expected at most {sci(MAX_TIME_STEPS)} time "
                        f"steps, got duration / time_step = {steps:.3g} (time_step = "
                        f"{v['time_step']!r}, duration = {v['duration']!r})")
    if v["output_interval"] is not None:
        frames = v["duration"] / max(v["output_interval"], v["time_step"])
        key, what = "output_interval", "duration / output_interval"
    else:
        frames = steps / inputs.every
        key, what = "time_step", "duration / time_step / [output] every"
    if frames > MAX_FRAMES:
        raise DeckError(f"{e.where}.{key}", f"expected at most {sci(MAX_FRAMES)} output frames, "
                        f"got {what} = {frames:.3g}; write fewer frames (a longer "
                        "output_interval, or [output] every)")


def unsupported(model, values: dict, given: set, loads: tuple, prescribed: tuple
                ) -> tuple[str, str] | None:
    """``(key, message)`` of the first thing a step of ``values`` cannot do, or None.

    ``values`` are the dynamic step's deck values with defaults, ``given`` the keys the deck
    gave, ``loads`` and ``prescribed`` the step's resolved loads and prescribed values.
    """
    spatial = floating_3d(model)
    if spatial and values["integrator"] != "energy_conserving":
        return "integrator", (f"the 3D co-rotational superelement '{spatial[0]}' is integrated "
                              "by integrator = \"energy_conserving\" only so far, not "
                              f"{values['integrator']!r} (its inertia on the floating frame is "
                              "written for that scheme)")
    form = values["formulation"]
    if form == "multipliers":
        return None
    asked = f'formulation = "{form}"'
    for key in MULTIPLIER_KEYS:
        if key in given:
            return key, (f'used by formulation = "multipliers" only; {asked} integrates with '
                         "fixed-step RK4 (time_step) and solves the joints exactly")
    if model.dim != 2:
        return "formulation", (f"{asked} integrates 2D mechanisms (it adds rotation angles), "
                               'got a 3D model; use formulation = "multipliers"')
    for g in model.groups:
        if g.type_name != "rigid":
            return "formulation", (f"{asked} handles small mechanisms of rigid bodies and "
                                   f"joints, got the {g.type_name} group '{g.name}'; use "
                                   'formulation = "multipliers" for flexible members')
    for c in model.constraints:
        if not isinstance(c, Joint):
            return "formulation", (f"{asked} handles joints, got the {c.type_name} group "
                                   f"'{c.name}'; use formulation = \"multipliers\"")
        if c.drive is not None:
            return "formulation", (f"{asked} does not take drivers (their work is not in its "
                                   f"energy balance), got the driven joints '{c.name}'; use "
                                   'formulation = "multipliers"')
    if prescribed:
        names = ", ".join(f"'{p.name}'" for p in prescribed)
        return "prescribed", (f"expected no prescribed values with {asked} (it holds supported "
                              f"DOFs fixed), got {names}; set prescribed = [] or use a "
                              "multiplier step")
    for ld in loads:
        if ld.function is not None or ld.kind == "follower":
            what = "a time function" if ld.function is not None else "a follower load"
            return "loads", (f"{asked} takes constant dead loads (its external work is "
                             f"f . (q - q0)), got {what}: load '{ld.name}'")
    return None


def floating_3d(model) -> list[str]:
    """The groups whose inertia rides a 3D floating frame (3D co-rotational superelements)."""
    return [g.name for g in model.groups if g.inertia == "floating3d"]
