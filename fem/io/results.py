"""Reading results files: the one reader of the layout that :mod:`fem.io.hdf5` writes.

* :func:`read_state` gives the :class:`~fem.state.State` at the end of a step, with its
  resumable progress; :func:`state_from_group` and :func:`progress_from_group` read them from
  any group that holds them (a checkpoint's, what a restart reads, :mod:`fem.io.restart`);
* :func:`dataset_scalar` reads one number from any dataset, by index and reduction (the named
  outputs of a study, :mod:`fem.study`);
* :class:`Results` reads the quantities a validation case's ``reference.toml`` names
  (:mod:`fem.validate`: displacements, rotations, reactions, section forces, load factors,
  buckling factors, frequencies, critical speeds, energies, periods, chord offsets, relative
  positions; a statistic over the frames or the value of one frame), each by its ``kind``
  (:data:`KINDS`).

Every other module that needs a result from a file reads it here.
"""

from __future__ import annotations

import h5py
import numpy as np

from fem.rotations import expm
from fem.solvers.controls import DynamicProgress, StaticProgress
from fem.state import State

KINDS = ("displacement", "rotation", "reaction", "section", "load_factor", "buckling_factor",
         "limit_load_factor", "energy", "period", "chord_offset", "relative_position",
         "frequency", "damping_ratio", "critical_speed")
FREQUENCY_UNITS = {"rad/s": "frequencies", "Hz": "hertz"}    # unit -> dataset of /modes/<s>/
SPEED_UNITS = {"rad/s": 1.0, "Hz": 1.0 / (2 * np.pi), "rpm": 60.0 / (2 * np.pi)}
WHIRL = {"forward": 1, "backward": -1, "none": 0}
#: the kinds whose value is read from a history over a step's frames (:meth:`Results.curve`)
HISTORY_KINDS = ("displacement", "rotation", "section", "energy", "chord_offset",
                 "relative_position")
STATISTICS = ("minimum", "maximum", "first_maximum", "amplitude", "mean")


def read_state(path: str, step: str, progress=None):
    """The :class:`~fem.state.State` at the end of step ``step`` of the results file ``path``.

    With ``progress``, the dataclass the step's progress was written from
    (:meth:`fem.io.hdf5.ResultsFile.write_state`), returns ``(state, progress)``, the progress None
    when the file has none (or one of another type).
    """
    with h5py.File(path, "r") as h5:
        g = h5[f"steps/{step}/state"]
        state = state_from_group(g)
        found = progress_from_group(g.get("progress"), progress) if progress is not None \
            else None
    return state if progress is None else (state, found)


def state_from_group(g: h5py.Group) -> State:
    """The State stored in group ``g`` (its arrays in their stored order, ``order``)."""
    order = [str(k) for k in g.attrs["order"]] if "order" in g.attrs else [
        k for k in g if isinstance(g[k], h5py.Dataset)]
    arrays = {k: g[k][()] for k in order}
    if "order" not in g.attrs:                  # nested names (load_scales/P)
        def nested(name, obj) -> None:          # None: visititems stops at anything else
            if isinstance(obj, h5py.Dataset) and not name.startswith("progress/"):
                arrays.setdefault(name, obj[()])
        g.visititems(nested)
    state = State.from_arrays(arrays)
    for name in g.attrs.get("empty", ()):      # tables without arrays (fem.io.hdf5.empty_tables)
        field, _, key = str(name).partition("/")
        getattr(state, field).setdefault(key, {})
    return state


def progress_from_group(g: h5py.Group | None, cls=None):
    """The progress dataclass stored in ``g`` (:meth:`fem.io.hdf5.ResultsFile.write_state`).

    ``cls``: the class it must be (None: the one its ``type`` names); None when there is none.
    """
    if g is None:
        return None
    cls = cls or {c.__name__: c for c in (StaticProgress, DynamicProgress)}.get(
        str(g.attrs.get("type")))
    if cls is None or g.attrs.get("type") != cls.__name__:
        return None
    values = {k: v.item() if isinstance(v, np.generic) else v
              for k, v in g.attrs.items() if k not in ("type", "none")}
    values.update({str(k): None for k in g.attrs["none"]})
    values.update({k: d[()] for k, d in g.items()})
    known = set(cls.__dataclass_fields__)
    return cls(**{k: v for k, v in values.items() if k in known})


class Results:
    """An open results file, read-only; :meth:`quantity` reads one reference quantity.

    Attributes
    ----------
    h5 : the open file
    node_ids : (n,) the model's node ids
    slots : the model's DOF names (``ux``, ``uy``, ``rz``, or the six of 3D)
    """

    def __init__(self, path: str):
        self.h5 = h5py.File(path, "r")
        try:
            self.node_ids = self.h5["model/node_ids"][()]
            self.slots = [str(s) for s in self.h5["model"].attrs["dof_names"]]
        except BaseException:
            self.h5.close()
            raise

    def quantity(self, q: dict) -> float:
        """The value of quantity ``q`` (a ``[[quantities]]`` table of ``reference.toml``).

        KeyError, IndexError, ValueError or TypeError when the file does not hold it (a step,
        a mode, a node, a dataset it lacks); NaN when the statistic or frame does not exist.
        """
        return _value(self.h5, q, self.node_ids, self.slots)

    def curve(self, q: dict) -> tuple[np.ndarray, np.ndarray, str] | None:
        """``(x, y, xlabel)``: the computed curve quantity ``q`` is read from, or None.

        A history over the frames of its step (``y`` against the step's time or load factor)
        for the kinds read from one (:data:`HISTORY_KINDS`), the load path (load factor
        against the watched DOF) for ``limit_load_factor``; None for a single number (a
        frequency, a critical speed) or a step with fewer than two frames.
        """
        s = self.h5.get(f"steps/{q['step']}")
        if s is None or len(s.get("time", ())) < 2:
            return None
        t = s["time"][()]
        if q["kind"] == "limit_load_factor":
            return _dof_history(s, q, self.node_ids, self.slots), t, \
                f"{q['dof']} of node {q['node']}"
        if q["kind"] not in HISTORY_KINDS:
            return None
        label = "time" if s.attrs.get("type") == "dynamic" else "load factor"
        return t, _history(self.h5, s, q, self.node_ids, self.slots), label

    def frame_steps(self) -> list[str]:
        """The steps with output frames, in the order they ran."""
        steps = self.h5.get("steps", {})
        found = [name for name in steps if len(steps[name].get("time", ())) > 0]
        return sorted(found, key=lambda name: int(steps[name].attrs["index"]))

    def sensors(self, step: str) -> list[str]:
        """The names of the sensors step ``step`` wrote (``/steps/<s>/sensors``)."""
        return list(self.h5[f"steps/{step}"].get("sensors", ()))

    def series(self, step: str, source: str, index: tuple = (), offset: float = 0.0
               ) -> np.ndarray:
        """``(T,)`` ``source[:, *index] + offset`` of step ``step``; NaN where it has none.

        ``source`` is a dataset of ``/steps/<s>`` (``displacement``, ``sensors/<name>``, ...),
        ``index`` its place in one frame (a :class:`fem.io.sensors.Sensor`'s).
        """
        s = self.h5[f"steps/{step}"]
        d = s.get(source)
        if d is None:
            return np.full(len(s["time"]), np.nan)
        return d[(slice(None),) + tuple(index)] + offset

    def close(self) -> None:
        """Close the file."""
        self.h5.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _node(node_ids: np.ndarray, node_id) -> int:
    found = np.flatnonzero(node_ids == node_id)
    if not len(found):
        raise ValueError(f"no node {node_id} in the results")
    return int(found[0])


def _positions(h5: h5py.File, s, node: int) -> np.ndarray:
    """(frames, 3) the current position of a node in every frame."""
    return h5["model/nodes"][node] + s["displacement"][:, node, :]


def _point(h5: h5py.File, s, q: dict, node_ids: np.ndarray, node_id) -> tuple:
    """``(X (3,), x (frames, 3))``: reference and current positions of a node.

    A node of the model or, with ``q["group"]``, of that superelement's component (its
    recovered position).
    """
    if np.any(node_ids == node_id) or "group" not in q:
        n = _node(node_ids, node_id)
        return h5["model/nodes"][n], _positions(h5, s, n)
    g = h5[f"model/groups/{q['group']}"]
    if "component_ids" not in g:
        raise ValueError(f"group {q['group']!r} recovers no component nodes (a co-rotational "
                         "superelement does)")
    found = np.flatnonzero(g["component_ids"][0] == node_id)
    if not len(found):
        raise ValueError(f"no node {node_id} in the results nor in the component of "
                         f"{q['group']!r}")
    k = int(found[0])
    X = g["component_coordinates"][0, k]
    return X, X + s[f"elements/{q['group']}/recovered_displacement"][:, 0, k, :]


def _history(h5: h5py.File, s, q: dict, node_ids: np.ndarray, slots: list[str]) -> np.ndarray:
    """(frames,) the quantity of ``q`` in every frame of step ``s``."""
    kind = q["kind"]
    if kind == "chord_offset":
        (Xa, xa), (_, xm), (Xb, xb) = (_point(h5, s, q, node_ids, n) for n in q["nodes"])
        e = xb - xa
        e /= np.linalg.norm(e, axis=1, keepdims=True)
        rel = xm - xa
        if h5["model"].attrs.get("dim", 2) == 3:    # 3D: the distance from the chord
            offset = np.linalg.norm(np.cross(e, rel), axis=1)
        else:
            offset = e[:, 0] * rel[:, 1] - e[:, 1] * rel[:, 0]      # left of a->b (in x-y)
        return offset / np.linalg.norm(Xb - Xa)
    if kind == "relative_position":
        n, r = _node(node_ids, q["node"]), _node(node_ids, q["relative_to"])
        R = expm(s["rotation_vector"][:, r, :])
        rel = _positions(h5, s, n) - _positions(h5, s, r)
        return np.einsum("fi,fi->f", rel, R[:, :, q["component"]])
    if kind == "energy":
        value = s[f"energy/{q['quantity']}"][()]
        return value[:, q["component"]] if "component" in q else value
    if kind == "section":
        return s[f"elements/{q['group']}/{q['quantity']}"][:, q["element"] - 1]
    return _dof_history(s, q, node_ids, slots)


def _statistic(t: np.ndarray, y: np.ndarray, q: dict) -> float:
    """A statistic of a history (see the module docstring); NaN when it does not exist."""
    keep = t >= q.get("after", -np.inf) - 1e-12 * max(1.0, abs(q.get("after", 0.0)))
    t, y = t[keep], y[keep]
    which, report = q["statistic"], q.get("report", "value")
    if len(y) == 0:
        return float("nan")
    if which == "amplitude":
        return float(0.5 * (y.max() - y.min()))
    if which == "mean":
        return float(y.mean())
    if which == "first_maximum":
        peaks = np.flatnonzero((y[1:-1] > y[:-2]) & (y[1:-1] >= y[2:])) + 1
        if not len(peaks):
            return float("nan")
        k = int(peaks[0])
        # the parabola through the three frames around the peak (equal or unequal spacing)
        p = np.polynomial.Polynomial.fit(t[k - 1:k + 2], y[k - 1:k + 2], 2).convert()
        tp = -p.coef[1] / (2 * p.coef[2])
        return float(tp if report == "time" else p(tp))
    k = int(np.argmin(y) if which == "minimum" else np.argmax(y))
    return float(t[k] if report == "time" else y[k])


def _mode(h5: h5py.File, path: str, q: dict):
    """Mode ``q["mode"]`` (1-based) of dataset ``path``; a mode the step did not find says so."""
    values = h5[path]
    if q["mode"] > len(values):
        raise IndexError(f"mode {q['mode']}: step '{q['step']}' found {len(values)} (ask its "
                         "deck for more modes)")
    return values[q["mode"] - 1]


def _value(h5: h5py.File, q: dict, node_ids: np.ndarray, slots: list[str]) -> float:
    kind = q["kind"]
    frame = q.get("frame", -1)
    if kind == "buckling_factor":
        return float(_mode(h5, f"modes/{q['step']}/eigenvalues", q))
    if kind == "critical_speed":
        return _critical_speed(h5, q)
    if kind == "damping_ratio":      # a linearize step: -Re p / |p|; a modal step: its ratios
        if f"linear/{q['step']}" in h5:
            return float(_mode(h5, f"linear/{q['step']}/damping_ratios", q))
        return float(_mode(h5, f"modes/{q['step']}/damping_ratios", q))
    if kind == "frequency":
        unit = q.get("unit", "rad/s")
        if f"linear/{q['step']}" in h5:            # a linearize step: |Im p|, nearest the shift
            w = float(_mode(h5, f"linear/{q['step']}/frequencies", q))
            return w if unit == "rad/s" else w / (2 * np.pi)
        return float(_mode(h5, f"modes/{q['step']}/{FREQUENCY_UNITS[unit]}", q))
    s = h5[f"steps/{q['step']}"]
    if "statistic" in q:
        return _statistic(s["time"][()], _history(h5, s, q, node_ids, slots), q)
    if "time" in q:
        times = s["time"][()]
        frame = int(np.argmin(np.abs(times - q["time"])))
        if abs(times[frame] - q["time"]) > 1e-9 * max(1.0, abs(q["time"])):
            return float("nan")                   # no such frame: the quantity fails
    if kind == "load_factor":
        return float(s["time"][frame])
    if kind == "limit_load_factor":
        return _limit_load(s, q, node_ids, slots)
    if kind == "energy":
        value = s[f"energy/{q['quantity']}"][frame]
        return float(value[q["component"]] if "component" in q else value)
    if kind == "period":
        return _period(s, q, node_ids, slots)
    if kind in ("chord_offset", "relative_position"):
        return float(_history(h5, s, q, node_ids, slots)[frame])
    if kind == "section":
        return float(s[f"elements/{q['group']}/{q['quantity']}"][frame, q["element"] - 1])
    node = _node(node_ids, q["node"])
    slot = slots.index(q["dof"])
    if kind == "reaction":
        return float(s["reaction"][frame, node, slot])
    d = len(slots) // 3 + 1                  # 2 in 2D, 3 in 3D
    if slot < d:
        return float(s["displacement"][frame, node, slot])
    return float(s["rotation_vector"][frame, node, slot - d + (2 if d == 2 else 0)])


def _critical_speed(h5: h5py.File, q: dict) -> float:
    """The ``number``-th crossing of engine order ``order`` (of whirl ``whirl``) of a sweep."""
    g = h5[f"sweep/{q['step']}"]
    speeds = g["critical_speeds"][()]
    pick = g["critical_orders"][()] == float(q.get("order", 1))
    if "whirl" in q:
        pick &= g["critical_whirl"][()] == WHIRL[q["whirl"]]
    found = np.sort(speeds[pick])
    n = q.get("number", 1)
    if n > len(found):
        what = f"order {q.get('order', 1)}" + (f", {q['whirl']} whirl" if "whirl" in q else "")
        raise IndexError(f"critical speed {n} ({what}): step '{q['step']}' found {len(found)}")
    return float(found[n - 1] * SPEED_UNITS[q.get("unit", "rad/s")])


def _limit_load(s, q: dict, node_ids: np.ndarray, slots: list[str]) -> float:
    """The ``limit``-th local extremum of the load factor, by a parabola in the watched DOF."""
    lam = s["time"][()]
    node = _node(node_ids, q["node"])
    slot = slots.index(q["dof"])
    u = s["displacement"][:, node, slot] if slot < 3 else s["rotation_vector"][:, node, slot - 3]
    turns = [k for k in range(1, len(lam) - 1) if (lam[k] - lam[k - 1]) * (lam[k + 1] - lam[k]) < 0]
    if len(turns) < q.get("limit", 1):
        return float("nan")
    k = turns[q.get("limit", 1) - 1]
    lo, hi = max(k - 2, 0), min(k + 3, len(lam))       # up to five frames around the turn
    p = np.polynomial.Polynomial.fit(u[lo:hi], lam[lo:hi], min(hi - lo - 1, 4))
    roots = [r.real for r in p.deriv().roots() if abs(r.imag) < 1e-12
             and min(u[k - 1], u[k + 1]) <= r.real <= max(u[k - 1], u[k + 1])]
    return float(p(roots[0])) if roots else float(lam[k])


def _dof_history(s, q: dict, node_ids: np.ndarray, slots: list[str]) -> np.ndarray:
    node = _node(node_ids, q["node"])
    slot = slots.index(q["dof"])
    d = 2 if len(slots) == 3 else 3
    if slot < d:
        return s["displacement"][:, node, slot]
    return s["rotation_vector"][:, node, slot - d + (2 if d == 2 else 0)]


def _period(s, q: dict, node_ids: np.ndarray, slots: list[str]) -> float:
    """Mean time between upward zero crossings of a DOF (linear interpolation between frames)."""
    t = s["time"][()]
    u = _dof_history(s, q, node_ids, slots)
    up = np.flatnonzero((u[:-1] < 0) & (u[1:] >= 0))
    if len(up) < 2:
        return float("nan")
    times = t[up] - u[up] * (t[up + 1] - t[up]) / (u[up + 1] - u[up])
    return float((times[-1] - times[0]) / (len(times) - 1))


#: reductions of :func:`dataset_scalar`, over every value left after the index
REDUCTIONS = {"max": np.max, "min": np.min, "max_abs": lambda a: np.max(np.abs(a)),
              "spread": np.ptp}


def dataset_scalar(h5: h5py.File, path: str, index: tuple = (), reduce: str | None = None
                   ) -> float:
    """One number from dataset ``path`` of open results file ``h5`` (a study's outputs).

    ``index``: integers or ``":"`` (a whole axis), applied first; ``reduce``: ``final`` (the
    last entry of the first axis left, e.g. the last frame) or one of :data:`REDUCTIONS`.
    KeyError or ValueError say why there is no one number.
    """
    if path not in h5 or not isinstance(h5[path], h5py.Dataset):
        raise KeyError(f"no dataset {path!r} in the results file")
    y = np.asarray(h5[path][()], dtype=float)
    if index:
        if len(index) > y.ndim:
            raise ValueError(f"index {list(index)}: {path} has {y.ndim} axes")
        y = y[tuple(slice(None) if i == ":" else i for i in index)]
    if reduce == "final":
        y = y[-1] if y.ndim else y
    elif reduce is not None:
        y = REDUCTIONS[reduce](y)
    if np.ndim(y) != 0:
        raise ValueError(f"{path} gives shape {np.shape(y)}: expected one number; give an "
                         "index or a reduction")
    return float(y)

