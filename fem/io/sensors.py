"""Named sensors (``[[sensors]]``): one value per output frame, picked from what the frame writes.

A sensor names one number of a results frame, after Exudyn's ``SensorNode``, ``SensorBody`` and
``SensorObject`` (J. Gerstmayr, "Exudyn -- a C++-based Python package for flexible multibody
systems", Multibody System Dynamics, 2024):

* ``node`` and ``dof``: the node's ``displacement`` (rotation-vector component for rx, ry, rz),
  ``rotation`` (the same for rx, ry, rz), ``velocity``, ``acceleration`` (dynamic steps),
  ``reaction`` (supported DOFs) or ``position`` (reference coordinate plus displacement);
* ``body`` (a rigid-body group) and ``element`` (its k-th body, from 1): the same of its node;
* ``group`` (an element group, tie or joint), ``element`` and ``quantity``: one of its outputs
  (section forces, joint reactions ``fx`` ... and coordinates ``angle``, ``slide``, ``effort``),
  with ``component`` for outputs with several values per element (``force``, ``moment``);
* ``energy``: an energy term (``component`` for the momenta).

The :class:`~fem.io.step_writer.StepWriter` computes each sensor from the arrays of the frame it
writes (:meth:`Sensor.value`) and writes it as ``/steps/<s>/sensors/<name>`` ``(T,)`` in the same
transaction, so a sensor equals the dataset it names at every frame; ``NaN`` where the frame has
no such value (the velocity in a static step). Its attributes say what it is.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fem.errors import DeckError, did_you_mean
from fem.io.keys import REQUIRED, Key
from fem.io.quantities import NODE_QUANTITIES

ENERGY_TERMS = ("kinetic", "strain", "external_work", "constraint_work", "total", "dissipated",
                "damping", "actuator_work", "linear_momentum", "angular_momentum")
#: what each nodal quantity measures, for translations and for rotations
_DIMENSIONS = {"displacement": ("length", "angle (rad)"), "rotation": ("", "angle (rad)"),
               "velocity": ("length/time", "angle/time (rad/time)"),
               "acceleration": ("length/time^2", "angle/time^2 (rad/time^2)"),
               "reaction": ("force", "moment"), "position": ("length", "")}

KEYS = [
    Key("name", "name", REQUIRED, "sensor name: the dataset `/steps/<s>/sensors/<name>`, and "
        "what `fem plot` takes"),
    Key("node", "int", None, "node id: a nodal sensor (with `dof`)"),
    Key("body", "str", None, "rigid-body group name: a sensor of the node of its `element`-th "
        "body (with `dof`)"),
    Key("group", "str", None, "element group, tie or joint name: its `element`-th element's "
        "output `quantity`"),
    Key("energy", "str", None, "an energy term: " + ", ".join(ENERGY_TERMS),
        choices=ENERGY_TERMS),
    Key("dof", "str", None, "node, body: ux, uy, uz, rx, ry or rz"),
    Key("quantity", "str", None, "node, body: " + ", ".join(NODE_QUANTITIES) + " (default "
        "displacement; rotation: of rx, ry, rz, the rotation vector's component; position: "
        "reference coordinate plus displacement, ux, uy, uz); group: the output's name (N, "
        "M1, fx, mz, angle, slide, effort, ...)"),
    Key("element", "int", 1, "body, group: which element or body of the group, from 1",
        positive=True),
    Key("component", "int", None, "group outputs with several values per element (force, "
        "moment, modal_coordinates) and the momenta: which, from 0", nonnegative=True),
]


@dataclass(frozen=True)
class Sensor:
    """One sensor: ``source[index] + offset`` of each frame's arrays (see the module docstring).

    ``source`` is the dataset of ``/steps/<s>`` it reads (``displacement``,
    ``elements/<g>/<q>``, ``energy/<q>``), ``index`` its place in one frame's array.
    """

    name: str
    source: str
    index: tuple[int, ...]
    what: str
    dimension: str = ""
    offset: float = 0.0
    where: str = ""

    @property
    def dataset(self) -> str:
        """The sensor's dataset in a step's group."""
        return f"sensors/{self.name}"

    def value(self, values: dict) -> float:
        """The sensor's value in a frame's arrays ``{dataset: array}``; NaN when it has none."""
        v = values.get(self.source)
        if v is None:
            return float("nan")
        a = np.asarray(v, dtype=float)
        if a.ndim != len(self.index) or any(i >= n for i, n in zip(self.index, a.shape,
                                                                  strict=True)):
            return float("nan")
        return float(a[self.index]) + self.offset

    def attrs(self, units: str) -> dict:
        """The attributes of its dataset: what it is, the dataset and index it reads, units."""
        out = {"what": self.what, "source": self.source,
               "index": np.asarray(self.index, dtype=np.int64), "offset": self.offset}
        if self.dimension:
            out["dimension"] = self.dimension
        if units:
            out["units"] = units        # the deck's unit system ([model] units)
        return out


def nodal(where: str, e, node: int, label: str, slots: tuple[str, ...], X) -> Sensor:
    """A node's (or body's) sensor of ``e`` (the checked entry) at node index ``node``."""
    quantity = e["quantity"] or "displacement"
    if quantity not in NODE_QUANTITIES:
        raise DeckError(f"{where}.quantity", f"expected one of {', '.join(NODE_QUANTITIES)} "
                        f"for a {label.split()[0]} sensor, got {quantity!r}"
                        + did_you_mean(quantity, NODE_QUANTITIES))
    dof = e["dof"]
    if dof is None:
        raise DeckError(f"{where}.dof", f"missing required key 'dof': expected one of "
                        f"{', '.join(slots)}")
    if dof not in slots:
        raise DeckError(f"{where}.dof", f"expected one of {', '.join(slots)} (the model's DOFs), "
                        f"got {dof!r}" + did_you_mean(dof, slots))
    slot = slots.index(dof)
    d = 2 if len(slots) == 3 else 3               # translations per node
    rotational = slot >= d
    if quantity == "position" and rotational:
        raise DeckError(f"{where}.dof", f"position takes ux, uy(, uz), got {dof!r}")
    if quantity == "rotation" and not rotational:
        raise DeckError(f"{where}.dof", f"rotation takes {', '.join(slots[d:])}, got {dof!r}")
    what = f"{quantity} {dof} of {label}"
    dimension = _DIMENSIONS[quantity][int(rotational)]
    if quantity in ("velocity", "acceleration", "reaction"):
        return Sensor(e["name"], quantity, (node, slot), what, dimension, where=where)
    if rotational:                                 # the rotation vector's component
        return Sensor(e["name"], "rotation_vector", (node, slot - d + (2 if d == 2 else 0)),
                      what, dimension, where=where)
    offset = float(X[node, slot]) if quantity == "position" else 0.0
    return Sensor(e["name"], "displacement", (node, slot), what, dimension, offset, where)


def build(entries, model) -> tuple[Sensor, ...]:
    """The sensors of the deck's ``[[sensors]]`` entries (checked :class:`Entry`s) for ``model``.

    A DeckError names the entry's key for an unknown node, body, group, DOF or quantity; the
    outputs of a group are checked against what it writes by :func:`check_outputs`.
    """
    out, seen = [], {}
    groups = {g.name: g for g in model.groups}
    constraints = {c.name: c for c in model.constraints}
    for entry in entries:
        e, where = entry.values, entry.where
        if e["name"] in seen:
            raise DeckError(f"{where}.name", f"sensor '{e['name']}' is also {seen[e['name']]}; "
                            "sensor names must differ")
        seen[e["name"]] = where
        given = [k for k in ("node", "body", "group", "energy") if e[k] is not None]
        if len(given) != 1:
            raise DeckError(where, "expected exactly one of node, body, group or energy (what "
                            "the sensor reads), got " + (", ".join(given) or "none"))
        kind = given[0]
        if kind in ("node", "body") and e["component"] is not None:
            raise DeckError(f"{where}.component", f"a {kind} sensor takes dof, not component")
        if kind == "node":
            ids = model.node_ids
            hit = np.flatnonzero(ids == e["node"])
            if not len(hit):
                raise DeckError(f"{where}.node", f"no node {e['node']} in the model (ids "
                                f"{int(ids.min())} to {int(ids.max())})")
            out.append(nodal(where, e, int(hit[0]), f"node {e['node']}", model.slots, model.X))
        elif kind == "body":
            g = groups.get(e["body"])
            bodies = [n for n, g in groups.items() if type(g).__name__ == "RigidBody"]
            if g is None or type(g).__name__ != "RigidBody":
                raise DeckError(f"{where}.body", f"no rigid-body group '{e['body']}'"
                                + (did_you_mean(e["body"], bodies) or "; the rigid-body groups "
                                   f"are: {', '.join(bodies) or 'none'}"))
            k = _element(where, e, len(g.conn), f"rigid-body group '{e['body']}'")
            out.append(nodal(where, e, int(g.conn[k, 0]), f"body {k + 1} of '{e['body']}'",
                              model.slots, model.X))
        elif kind == "group":
            name = e["group"]
            g = groups.get(name) or constraints.get(name)
            if g is None:
                known = list(groups) + list(constraints)
                raise DeckError(f"{where}.group", f"no element group, tie or joint '{name}'"
                                + (did_you_mean(name, known) or f"; the model has: "
                                   f"{', '.join(known)}"))
            if e["dof"] is not None:
                raise DeckError(f"{where}.dof", "a group sensor takes quantity (an output "
                                "name), not dof")
            if e["quantity"] is None:
                raise DeckError(f"{where}.quantity", f"missing required key 'quantity': the "
                                f"output of '{name}' to read (N, M1, fx, angle, ...)")
            k = _element(where, e, _count(g), f"'{name}'")
            index = (k,) if e["component"] is None else (k, e["component"])
            out.append(Sensor(e["name"], f"elements/{name}/{e['quantity']}", index,
                              f"{e['quantity']} of element {k + 1} of '{name}'"
                              + (f", component {e['component']}" if e["component"] is not None
                                 else ""), "", where=where))
        else:
            for key in ("dof", "quantity"):
                if e[key] is not None:
                    raise DeckError(f"{where}.{key}", "an energy sensor takes energy (and "
                                    f"component for the momenta), not {key}")
            momentum = e["energy"].endswith("momentum")
            if momentum != (e["component"] is not None):
                raise DeckError(f"{where}.component", "the momenta take a component (0, 1, "
                                "2); the energies none")
            index = (e["component"],) if momentum else ()
            if momentum and e["component"] > 2:
                raise DeckError(f"{where}.component", f"expected 0, 1 or 2, got "
                                f"{e['component']}")
            out.append(Sensor(e["name"], f"energy/{e['energy']}", index,
                              f"energy term {e['energy']}" + (f", component {e['component']}"
                                                              if momentum else ""),
                              "momentum" if momentum else "energy", where=where))
    return tuple(out)


def _count(g) -> int:
    """How many elements (or joints) group or constraint ``g`` has."""
    conn = getattr(g, "conn", None)
    if conn is None:
        conn = getattr(g, "pairs", None)
    return len(conn) if conn is not None else 1


def _element(where: str, e: dict, count: int, what: str) -> int:
    """The 0-based index of ``e['element']`` in a group of ``count``; DeckError past its end."""
    k = e["element"]
    if k > count:
        raise DeckError(f"{where}.element", f"{what} has {count} element"
                        f"{'s' if count != 1 else ''}, got element = {k}")
    return k - 1


def check_outputs(sensors: tuple[Sensor, ...], outputs: dict) -> None:
    """A DeckError for a group sensor whose quantity (or component) the group does not write.

    ``outputs`` are :meth:`fem.system.System.outputs` of any state ``{group: {quantity: (E,)
    or (E, k)}}``.
    """
    for s in sensors:
        if not s.source.startswith("elements/"):
            continue
        _, group, quantity = s.source.split("/", 2)
        have = outputs.get(group, {})
        if quantity not in have:
            raise DeckError(f"{s.where}.quantity", f"'{group}' has no output {quantity!r}"
                            + (did_you_mean(quantity, have) or "") + "; its outputs are: "
                            + (", ".join(have) or "none"))
        shape = np.shape(have[quantity])
        if len(shape) != len(s.index):
            need = "a component (0 to %d)" % (shape[1] - 1) if len(shape) > 1 else "no component"
            raise DeckError(f"{s.where}.component", f"'{group}' output {quantity!r} has "
                            f"{'several values' if len(shape) > 1 else 'one value'} per element: "
                            f"give {need}")
        if len(shape) > 1 and s.index[1] >= shape[1]:
            raise DeckError(f"{s.where}.component", f"expected 0 to {shape[1] - 1} for "
                            f"{quantity!r} of '{group}', got {s.index[1]}")
