"""Forces in joints: the ``[[joints]]`` keys of springs, dampers, friction, stops, efforts, PD.

A revolute, prismatic or cylindrical joint that gives any of :data:`JOINT_FORCE_KEYS` gets an
element group of its own, :class:`fem.elements.force.coordinate.CoordinateForce`, named
``<joint>_force``, acting on the joint's coordinate (its angle, or its slide; a cylindrical joint
says which with ``coordinate``) between the same nodes, with the same frame and sign as the
joint's reported coordinate.
"""

from __future__ import annotations

import numpy as np

from fem.elements.force.coordinate import CoordinateForce, CoordinateGeometry
from fem.elements.force.deck import damper_law, spring_law
from fem.errors import DeckError
from fem.io.build import function
from fem.io.keys.entries import Entry, unique

_GIVEN = ("stiffness", "spring_table", "damping", "damper_table", "limits", "effort",
          "proportional_gain", "derivative_gain", "setpoint", "friction_coefficient",
          "static_friction")


def forces(entries: list[Entry], joints: tuple, X: np.ndarray, funcs: dict,
           taken: set) -> tuple:
    """The joint-force groups of the ``[[joints]]`` entries that give force keys."""
    by_name = {j.name: j for j in joints}
    out = []
    for name, e in unique(entries, "joint group").items():
        v, w = e.values, e.where
        if not (any(v[k] is not None for k in _GIVEN) or v["friction"] > 0):
            if v["friction_law"] != "coulomb":
                raise DeckError(f"{w}.friction_law", "given without friction on the joint "
                                "(friction, static_friction or friction_coefficient)")
            for key in ("coordinate", "velocity_scale", "limit_stiffness", "pin_radius",
                        "static_coefficient", "stick_stiffness"):
                if v[key] is not None:
                    raise DeckError(f"{w}.{key}", "given without a force on the joint "
                                    "(stiffness, damping, friction, limits, effort or a "
                                    "controller)")
            continue
        joint = by_name[name]
        out.append(_group(joint, v, w, X, funcs, taken))
        taken.add(out[-1].name)
    return tuple(out)


def _group(joint, v: dict, w: str, X, funcs, taken) -> CoordinateForce:
    kind, dim = joint.kind, joint.dim
    which = v["coordinate"]
    allowed = {"revolute": ("angle",), "prismatic": ("slide",),
               "cylindrical": ("angle", "slide")}.get(kind)
    given = [k for k in _GIVEN if v[k] is not None] + (["friction"] if v["friction"] else [])
    if allowed is None:
        raise DeckError(f"{w}.{given[0]}", f"forces act on a revolute, prismatic or cylindrical "
                        f"joint's coordinate, got a {kind} joint")
    if which is None:
        if len(allowed) > 1:
            raise DeckError(f"{w}.coordinate", "required with forces on a cylindrical joint: "
                            "angle or slide")
        which = allowed[0]
    if which not in allowed:
        raise DeckError(f"{w}.coordinate", f"a {kind} joint has no {which} (expected "
                        f"{' or '.join(allowed)})")
    if joint.drive is not None:
        raise DeckError(f"{w}.{given[0]}", "a driven joint's coordinate is prescribed: forces on "
                        "it would only add to the driver's effort (remove drive, or use a "
                        "controller)")
    rows = {(2, "angle"): (("angle",),), (2, "slide"): (("slide", 0),),
            (3, "angle"): (("turn",),), (3, "slide"): (("slide", 2),)}[dim, which]
    geo = CoordinateGeometry(f"{joint.name}_force", kind, joint.conn, joint.offsets,
                             joint.frames, dim, rows, sign=joint.sign)
    spring = spring_law(v, w)
    damper = damper_law(v, w)
    reaction = _reaction(joint, v, w)
    stick_slip = _stick_slip(v, w, reaction)
    if (v["friction"] > 0 or reaction is not None) and stick_slip is None \
            and v["velocity_scale"] is None:
        raise DeckError(f"{w}.velocity_scale", "required with friction > 0 or "
                        "friction_coefficient: the rate below which the friction is regularized "
                        "(linear in the rate)")
    limits = None
    if v["limits"] is not None:
        lim = v["limits"]
        if len(lim) != 2 or not lim[0] < lim[1]:
            raise DeckError(f"{w}.limits", f"expected [min, max] with min < max, got {lim!r}")
        if v["limit_stiffness"] is None:
            raise DeckError(f"{w}.limit_stiffness", "required with limits: the stops' penalty "
                            "stiffness")
        limits = (float(lim[0]), float(lim[1]))
    elif v["limit_stiffness"] is not None:
        raise DeckError(f"{w}.limit_stiffness", "given without limits")
    controller = None
    gains = (v["proportional_gain"], v["derivative_gain"])
    if v["setpoint"] is not None or any(g is not None for g in gains):
        if v["setpoint"] is None:
            raise DeckError(f"{w}.setpoint", "required with a controller's gains: the "
                            "coordinate's setpoint function")
        if all(g is None for g in gains):
            raise DeckError(f"{w}.proportional_gain", "a setpoint needs a controller's gains "
                            "(proportional_gain, derivative_gain)")
        controller = (gains[0] or 0.0, gains[1] or 0.0,
                      function(funcs, v["setpoint"], f"{w}.setpoint"))
    effort = function(funcs, v["effort"], f"{w}.effort")
    name = f"{joint.name}_force"
    if name in taken:
        raise DeckError(f"{w}.name", f"its force group '{name}' is already the name of a group")
    return CoordinateForce(name, geo, X, spring=spring, damper=damper,
                           free=v["free_coordinate"], friction=v["friction"],
                           velocity_scale=v["velocity_scale"] or 1.0, limits=limits,
                           limit_stiffness=v["limit_stiffness"] or 0.0, effort=effort,
                           controller=controller, reaction=reaction, stick_slip=stick_slip)


def _stick_slip(v: dict, w: str, reaction):
    """``(T_s0, mu_s r, k_b)`` of the stick-slip law, or None (the coulomb law; keys checked)."""
    keys = ("static_friction", "static_coefficient", "stick_stiffness")
    if v["friction_law"] != "stick_slip":
        for key in keys:
            if v[key] is not None:
                raise DeckError(f"{w}.{key}", "applies with friction_law = \"stick_slip\"")
        if v["stick_damping"]:
            raise DeckError(f"{w}.stick_damping", "applies with friction_law = \"stick_slip\"")
        return None
    if v["velocity_scale"] is not None:
        raise DeckError(f"{w}.velocity_scale", "not used by friction_law = \"stick_slip\" (it "
                        "sticks through stick_stiffness, without regularization)")
    if v["stick_stiffness"] is None:
        raise DeckError(f"{w}.stick_stiffness", "required with friction_law = \"stick_slip\": "
                        "the stiffness of the stuck joint")
    Tk = v["friction"]
    Ts = Tk if v["static_friction"] is None else v["static_friction"]
    if Ts < Tk:
        raise DeckError(f"{w}.static_friction", f"expected a static friction not below the "
                        f"kinetic friction {Tk!r}, got {Ts!r}")
    lever_s = 0.0
    if reaction is None:
        if v["static_coefficient"] is not None:
            raise DeckError(f"{w}.static_coefficient", "given without friction_coefficient (the "
                            "kinetic coefficient)")
    else:
        mu_k = v["friction_coefficient"]
        mu_s = mu_k if v["static_coefficient"] is None else v["static_coefficient"]
        if mu_s < mu_k:
            raise DeckError(f"{w}.static_coefficient", f"expected mu_s not below the kinetic "
                            f"friction_coefficient {mu_k!r}, got {mu_s!r}")
        lever_s = mu_s * (v["pin_radius"] or 1.0)
    if Ts == 0 and lever_s == 0:
        raise DeckError(f"{w}.friction_law", "stick_slip needs a friction (static_friction, "
                        "friction or friction_coefficient), got none")
    return float(Ts), float(lever_s), float(v["stick_stiffness"]), float(v["stick_damping"])


def _reaction(joint, v: dict, w: str):
    """``(joint, rows, mu r)`` of friction from the reaction, or None (``pin_radius`` checked).

    The reaction ``R`` is a revolute's joint force (its ``point`` rows' multipliers) or a
    prismatic's force normal to the slide (its ``slide`` rows').
    """
    mu, r = v["friction_coefficient"], v["pin_radius"]
    if mu is None:
        if r is not None:
            raise DeckError(f"{w}.pin_radius", "given without friction_coefficient")
        return None
    if joint.kind not in ("revolute", "prismatic"):
        raise DeckError(f"{w}.friction_coefficient", f"friction from the reaction is built for "
                        f"revolute and prismatic joints, got a {joint.kind} joint")
    if joint.kind == "revolute":
        if r is None:
            raise DeckError(f"{w}.pin_radius", "required with friction_coefficient on a revolute "
                            "joint: the friction moment is mu r |R|")
        lever, kind = mu * r, "point"
    else:
        if r is not None:
            raise DeckError(f"{w}.pin_radius", "a prismatic joint's friction is mu |N| (no pin "
                            "radius)")
        lever, kind = mu, "slide"
    rows, k = [], 0
    for row in joint.rows:
        n = joint.dim if row[0] == "point" else 1
        if row[0] == kind:
            rows += range(k, k + n)
        k += n
    return joint.name, np.array(rows), float(lever)
