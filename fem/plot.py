"""``fem plot``: curves from a results file, to PNG, SVG, PDF and CSV, without writing Python.

What it plots (several curves in one call, one column each in the CSV):

* sensors by name (``[[sensors]]``, :mod:`fem.io.sensors`), over the frames of every step that
  has frames (or the ``--step`` ones), against the step's ``time`` (its load factor in static
  steps), ``load_factor`` (``increments/load_factor``) or another sensor;
* a node's DOF (``--node 12 --dof uz``, ``--field velocity``), picked as a sensor would pick
  it, or any nodal field of the results (``--node 12 --field mises_top``, ``--component`` for
  vector fields);
* ``--energy``: the energy balance of the dynamic steps (every scalar of ``energy/``);
* ``--sweep STEP``: a stability sweep's frequencies (one line per tracked mode) against its
  parameter;
* ``--modes STEP``: a modal step's natural frequencies (rad/s and Hz) against the mode number;
* a study's ``summary.h5`` (:mod:`fem.study.summary`): named outputs of the variants that are
  ``done`` against one parameter (``--against``), a curve per output, or with ``--by`` one curve
  per value of a second parameter (:func:`study`).

The CSV holds exactly the numbers the plot draws (17 significant digits, ``nan`` where a frame
has no value), read from the file by :class:`fem.io.results.Results`, the one reader; a study's
CSV holds the rows of ``summary.h5`` it draws (:func:`write_study_csv`).
"""

from __future__ import annotations

import csv
import os
from dataclasses import dataclass, field

import numpy as np

from fem.errors import DeckError, FemError
from fem.io import sensors as sensors_io
from fem.io.results import Results

AGAINST = ("time", "load_factor")
FIELDS = sensors_io.NODE_QUANTITIES
FORMATS = (".png", ".svg", ".pdf")


class PlotError(FemError):
    """A curve or file ``fem plot`` was asked for that the results file does not have."""

    exit_code = 2


@dataclass
class Table:
    """Curves on one x axis: ``x (N,)``, ``columns {name: (N,)}``, the step of every row."""

    xname: str
    x: np.ndarray
    columns: dict[str, np.ndarray]
    steps: list[str] = field(default_factory=list)
    ylabel: str = ""
    title: str = ""


def _listing(names, what: str) -> str:
    return f"; the {what} are: {', '.join(names)}" if names else f"; there are no {what}"


def _steps(res: Results, wanted: list[str] | None) -> list[str]:
    have = res.frame_steps()
    if not wanted:
        if not have:
            raise PlotError("the results file has no steps with output frames")
        return have
    for s in wanted:
        if s not in have:
            raise PlotError(f"--step {s}: no such step with frames" + _listing(have, "steps "
                                                                               "with frames"))
    return wanted


def _nodal_sensor(res: Results, node: int, dof: str, quantity: str) -> sensors_io.Sensor:
    hit = np.flatnonzero(res.node_ids == node)
    if not len(hit):
        ids = res.node_ids
        raise PlotError(f"--node {node}: no such node in the results file (node ids "
                        f"{int(ids.min())} to {int(ids.max())})")
    X = res.h5["model/nodes"][()]
    entry = {"name": f"node {node} {dof}" + ("" if quantity == "displacement" else
                                            f" {quantity}"), "quantity": quantity, "dof": dof}
    try:
        return sensors_io.nodal("", entry, int(hit[0]), f"node {node}", tuple(res.slots), X)
    except DeckError as err:
        option = {"quantity": "field"}.get(err.key.lstrip("."), err.key.lstrip("."))
        raise PlotError(f"--{option}: {err.message}") from None


def _nodal_field(res: Results, steps: list[str], nodes: list[int], name: str,
                 component: int | None) -> dict[str, tuple]:
    """The picks of nodal field ``nodal/<name>`` (shell stresses, ...) at ``nodes``."""
    shapes = {}
    for st in steps:
        g = res.h5[f"steps/{st}"].get("nodal", {})
        shapes.update({k: g[k].ndim for k in g})
    if name not in shapes:
        raise PlotError(f"--field {name}: expected one of {', '.join(FIELDS)} or a nodal field "
                        "of the chosen steps" + _listing(sorted(shapes), "nodal fields"))
    if not nodes:
        raise PlotError(f"--field {name} needs --node")
    vector = shapes[name] == 3
    if vector and component not in (0, 1, 2):
        raise PlotError(f"--field {name} is a vector at each node: give --component 0, 1 or 2")
    out = {}
    for node in nodes:
        hit = np.flatnonzero(res.node_ids == node)
        if not len(hit):
            raise PlotError(f"--node {node}: no such node in the results file (node ids "
                            f"{int(res.node_ids.min())} to {int(res.node_ids.max())})")
        index = (int(hit[0]), component) if vector else (int(hit[0]),)
        label = f"node {node} {name}" + (f"[{component}]" if vector else "")
        out[label] = (f"nodal/{name}", index, 0.0)
    return out


def history(path: str, sensors: list[str] = (), *, nodes: list[int] = (),
            dofs: list[str] = (), quantity: str = "displacement", energy: bool = False,
            against: str = "time", steps: list[str] | None = None,
            component: int | None = None) -> Table:
    """The table of curves over the frames of ``steps`` (default: all with frames).

    ``quantity`` is one of :data:`FIELDS` (with ``dofs``) or the name of a nodal field
    ``nodal/<name>`` (with ``component`` for the vector ones).

    PlotError (exit code 2) for a sensor, node, DOF or step the file does not have, listing
    those it has.
    """
    with Results(path) as res:
        chosen = _steps(res, steps)
        known = list(dict.fromkeys(n for s in res.frame_steps() for n in res.sensors(s)))
        for name in list(sensors) + ([] if against in AGAINST else [against]):
            if name not in known:
                raise PlotError(f"no sensor {name!r} in {path}"
                                + _listing(known, "sensors") + (
                                    "" if known else " (a deck names them in [[sensors]])"))
        picks: dict[str, tuple] = {n: (f"sensors/{n}", (), 0.0) for n in sensors}
        if quantity in FIELDS:
            if nodes and not dofs:
                raise PlotError("--node needs --dof (" + ", ".join(res.slots) + ")")
            for node in nodes:
                for dof in dofs:
                    s = _nodal_sensor(res, node, dof, quantity)
                    picks[s.name] = (s.source, s.index, s.offset)
        else:
            picks.update(_nodal_field(res, chosen, nodes, quantity, component))
        if energy:
            terms = []
            for st in chosen:
                g = res.h5[f"steps/{st}"].get("energy", {})
                terms += [k for k in g if g[k].ndim == 1]
            if not terms:
                raise PlotError("--energy: no energy in the chosen steps (dynamic steps write "
                                "it)")
            for k in dict.fromkeys(terms):
                picks[k] = (f"energy/{k}", (), 0.0)
        if not picks:
            raise PlotError("nothing to plot: name sensors, or give --node and --dof, "
                            "--energy or --sweep" + _listing(known, "sensors"))
        rows = [len(res.h5[f"steps/{s}/time"]) for s in chosen]
        xs = []
        cols = {name: [] for name in picks}
        for st in chosen:
            if against == "time":
                xs.append(res.series(st, "time"))
            elif against == "load_factor":
                lam = res.series(st, "increments/load_factor")
                xs.append(lam)
            else:
                xs.append(res.series(st, f"sensors/{against}"))
            for name, (source, index, offset) in picks.items():
                cols[name].append(res.series(st, source, index, offset))
        static = all(res.h5[f"steps/{s}"].attrs["type"] != "dynamic" for s in chosen)
    xname = "load_factor" if against == "time" and static else against
    return Table(xname, np.concatenate(xs), {k: np.concatenate(v) for k, v in cols.items()},
                 [s for s, n in zip(chosen, rows, strict=True) for _ in range(n)],
                 ylabel="energy" if energy and not sensors and not nodes else "",
                 title=os.path.basename(path))


def sweep(path: str, step: str) -> Table:
    """A stability sweep's frequencies (in its frame) against its parameter, one column a mode."""
    with Results(path) as res:
        sweeps = list(res.h5.get("sweep", ()))
        if step not in sweeps:
            raise PlotError(f"--sweep {step}: no such stability sweep in {path}"
                            + _listing(sweeps, "sweeps"))
        g = res.h5[f"sweep/{step}"]
        x = g["parameter"][()]
        F = g["frequencies"][()]
        label = str(g.attrs.get("parameter", "parameter"))
    cols = {f"mode {j + 1}": F[:, j] for j in range(F.shape[1])}
    return Table(label, x, cols, [step] * len(x), ylabel="frequency (rad/s)",
                 title=f"{os.path.basename(path)}: {step}")


def modes(path: str, step: str) -> Table:
    """A modal step's natural frequencies, rad/s and Hz, against the mode number."""
    with Results(path) as res:
        steps = list(res.h5.get("modes", ()))
        if step not in steps:
            raise PlotError(f"--modes {step}: no such modal step in {path}"
                            + _listing(steps, "modal steps"))
        g = res.h5[f"modes/{step}"]
        omega = g["frequencies"][()]
        hertz = g["hertz"][()]
    n = np.arange(1, len(omega) + 1, dtype=float)
    return Table("mode", n, {"frequency (rad/s)": omega, "frequency (Hz)": hertz},
                 [step] * len(n), ylabel="frequency",
                 title=f"{os.path.basename(path)}: {step}")


def write_csv(table: Table, path: str) -> None:
    """The table as CSV: ``step``, the x column, one column per curve; 17 digits, ``nan``.

    ``path`` ``-``: standard output.
    """
    import contextlib
    import sys

    with (contextlib.nullcontext(sys.stdout) if path == "-" else
          open(path, "w", newline="", encoding="utf-8")) as fh:
        w = csv.writer(fh)
        w.writerow(["step", table.xname, *table.columns])
        cols = list(table.columns.values())
        for i, x in enumerate(table.x):
            w.writerow([table.steps[i], f"{x:.17g}", *(f"{c[i]:.17g}" for c in cols)])


def draw(table: Table, path: str) -> None:
    """The curves of ``table`` in one figure at ``path`` (PNG, SVG or PDF by its suffix)."""
    from fem.io import plots

    ext = os.path.splitext(path)[1].lower()
    if ext not in FORMATS:
        raise PlotError(f"-o {path}: expected a file ending in {', '.join(FORMATS)}")
    plots.curves(path, table.x, table.columns, xlabel=table.xname.replace("_", " "),
                 ylabel=table.ylabel, title=table.title, steps=table.steps)


# --- a study's summary table --------------------------------------------------------------------
@dataclass
class StudyTable:
    """Outputs of a study's done variants, a row each, sorted by ``by`` (if any), then ``x``.

    ``variant (n,)`` the variant numbers, ``x (n,)`` the ``against`` parameter, ``group (n,)``
    the ``by`` parameter's values (None without ``by``), ``outputs {name: (n,)}``.
    """

    against: str
    by: str | None
    variant: np.ndarray
    x: np.ndarray
    group: np.ndarray | None
    outputs: dict[str, np.ndarray]
    title: str = ""

    def figure(self) -> Table:
        """The curves to draw: one per output, or one per output and value of ``by``.

        With ``by``, a curve's column holds NaN outside its rows (NaN points are gaps), so the
        rows of one value of ``by`` make one line.
        """
        n = len(self.x)
        if self.by is None:
            return Table(self.against, self.x, dict(self.outputs), [""] * n,
                         ylabel=next(iter(self.outputs)) if len(self.outputs) == 1 else "",
                         title=self.title)
        cols = {}
        for name, y in self.outputs.items():
            for g in dict.fromkeys(self.group.tolist()):
                label = f"{self.by} = {_shown(g)}"
                if len(self.outputs) > 1:
                    label = f"{name}, {label}"
                cols[label] = np.where(self.group == g, y, np.nan)
        return Table(self.against, self.x, cols, [""] * n,
                     ylabel=next(iter(self.outputs)) if len(self.outputs) == 1 else "",
                     title=self.title)


def _shown(v) -> str:
    return f"{v:.6g}" if isinstance(v, float) else str(v)


def is_summary(h5) -> bool:
    """Whether the open HDF5 file ``h5`` is a study's ``summary.h5`` (:mod:`fem.study.summary`)."""
    return (all(k in h5 for k in ("variant", "values", "status", "outputs"))
            and "keys" in h5["values"].attrs)


def _parameter(name: str, keys: list[str], option: str, path: str) -> int:
    """The column of parameter ``name``: a key path, or a unique last part(s) of one."""
    if name in keys:
        return keys.index(name)
    hits = [i for i, k in enumerate(keys) if k.endswith("." + name)]
    if len(hits) == 1:
        return hits[0]
    if hits:
        raise PlotError(f"{option} {name}: names several parameters of {path}: "
                        + ", ".join(keys[i] for i in hits))
    raise PlotError(f"{option} {name}: no such parameter in {path}" + _listing(keys,
                                                                                "parameters"))


def study(path: str, outputs: list[str] = (), against: str | None = None,
          by: str | None = None) -> StudyTable:
    """Named outputs of study summary ``path`` against parameter ``against`` (by ``by``).

    Only the variants with status ``done``. ``outputs`` are names of ``[study.outputs]`` or
    ``wall_time`` (default: every named output); a parameter is its key path or a unique end of
    one (``E`` for ``materials.steel.E``); ``against`` may be left out when the study has one
    parameter. PlotError (exit code 2) naming what the summary has for an unknown output or
    parameter, for a parameter whose values are not numbers, and when two done variants share
    the values of ``against`` and ``by`` (another parameter varies: a line would zigzag).
    """
    import h5py

    with h5py.File(path, "r", locking=False) as h5:
        keys = [str(k) for k in h5["values"].attrs["keys"]]
        values = h5["values"][()]
        if values.dtype.kind in "OS":
            values = h5["values"].asstr()[()]
        status = h5["status"].asstr()[()]
        variant = h5["variant"][()]
        have = list(h5["outputs"])
        known = have + ["wall_time"]
        names = list(outputs) or have
        if not names:
            raise PlotError(f"{path}: the study names no outputs ([study.outputs]); plot "
                            "wall_time, or name outputs and run it again")
        for n in names:
            if n not in known:
                raise PlotError(f"no output {n!r} in {path}" + _listing(known, "outputs"))
        cols = {n: (h5["wall_time"][()] if n == "wall_time" else h5[f"outputs/{n}"][()])
                for n in names}
    if against is None:
        if len(keys) != 1:
            raise PlotError("--against: name the parameter to plot against"
                            + _listing(keys, "parameters"))
        against = keys[0]
    ja = _parameter(against, keys, "--against", path)
    jb = None if by is None else _parameter(by, keys, "--by", path)
    if jb == ja:
        raise PlotError(f"--by {by}: the parameter of --against; give another one")
    done = np.flatnonzero(status == "done")
    try:
        x = values[done, ja].astype(float)
    except ValueError:
        raise PlotError(f"--against {against}: its values are not numbers "
                        f"({', '.join(dict.fromkeys(map(str, values[:, ja])))}); "
                        "give it as --by") from None
    group = None
    if jb is not None:
        group = values[done, jb]
        try:
            group = group.astype(float)
        except ValueError:
            group = group.astype(str)
    _distinct(x, group, done, values, keys, (ja, jb), against, by)
    rank = np.zeros(len(done)) if group is None else np.unique(group, return_inverse=True)[1]
    order = np.lexsort((x, rank))
    return StudyTable(keys[ja], None if jb is None else keys[jb], variant[done][order], x[order],
                      None if group is None else group[order],
                      {n: np.asarray(c, dtype=float)[done][order] for n, c in cols.items()},
                      title=os.path.relpath(path, os.path.dirname(os.path.dirname(
                          os.path.abspath(path)))))


def _distinct(x, group, done, values, keys, cols, against, by) -> None:
    """PlotError when two done variants share ``x`` (and ``group``): name what differs."""
    seen: dict = {}
    for r, xi in enumerate(x.tolist()):
        k = (xi, None if group is None else group[r].item())
        if k not in seen:
            seen[k] = r
            continue
        a, b = done[seen[k]], done[r]
        differ = [keys[j] for j in range(len(keys)) if j not in cols
                  and values[a, j] != values[b, j]]
        if not differ:                  # the same variant twice (a list repeats a value)
            continue
        given = f"--against {against}" + ("" if by is None else f" --by {by}")
        raise PlotError(f"{given}: variants {a} and {b} have the same values of "
                        f"{'it' if by is None else 'them'} and differ in {', '.join(differ)}: "
                        + ("give it as --by" if by is None and len(differ) == 1 else
                           "a plot tells variants apart by two parameters at most "
                           "(--against and --by)"))


def write_study_csv(table: StudyTable, path: str) -> None:
    """The rows drawn: ``variant``, the ``against`` (and ``by``) values, the outputs; 17 digits.

    ``path`` ``-``: standard output.
    """
    import contextlib
    import sys

    def cell(v) -> str:
        return f"{v:.17g}" if isinstance(v, float) else str(v)

    with (contextlib.nullcontext(sys.stdout) if path == "-" else
          open(path, "w", newline="", encoding="utf-8")) as fh:
        w = csv.writer(fh)
        w.writerow(["variant", table.against, *([table.by] if table.by else []),
                    *table.outputs])
        cols = list(table.outputs.values())
        for i, x in enumerate(table.x.tolist()):
            w.writerow([int(table.variant[i]), cell(x),
                        *([cell(table.group[i].item())] if table.by else []),
                        *(cell(float(c[i])) for c in cols)])
