"""Validation cases: run ``cases/<name>/deck.toml``, compare with ``reference.toml``.

``reference.toml`` holds the case's title and source and one ``[[quantities]]`` table per checked
value::

    [[quantities]]
    name = "tip deflection"      # what it is
    step = "load"                # the deck step
    kind = "displacement"        # displacement | rotation | reaction | section | load_factor
                                 # | buckling_factor | limit_load_factor | frequency
                                 # | damping_ratio (a linearize step's -Re p / |p|, a modal
                                 #   step's phi^T C phi / (2 omega))
                                 # | critical_speed | energy | period | chord_offset
                                 # | relative_position
    node = 11                    # displacement, rotation, reaction: node id and DOF name
    dof = "uy"
    group = "beam"               # section: element group, element number (1-based), quantity
    element = 1
    quantity = "M1"
    mode = 1                     # buckling_factor, frequency: mode number (1 = the lowest; a
                                 # linearize step: the order of its eigenvalues)
    unit = "Hz"                  # frequency: "rad/s" (default) or "Hz"
    limit = 1                    # limit_load_factor: which extremum of the load factor along
                                 # the path (1 = the first), located on a polynomial through
                                 # the five frames around it against the DOF node/dof
    quantity = "total"           # energy: kinetic, strain, external_work, total, dissipated,
                                 # linear_momentum, angular_momentum (with component = 0, 1, 2)
                                 # period: mean time between upward zero crossings of node/dof
                                 # chord_offset: nodes = [a, m, b], the offset of m from
                                 # the chord a-b (left of a->b positive; in 3D its distance
                                 # from the chord) over the reference
                                 # length |X_b - X_a|; with group = "<superelement>" (a
                                 # co-rotational one) a node that is not the model's is a
                                 # node of that superelement's component, at its recovered
                                 # position (recovered_displacement)
                                 # relative_position: node, relative_to, component (0, 1, 2):
                                 # (x_node - x_rel) . R_rel e_component (in the frame turning
                                 # with node relative_to, e.g. a spinning hub's)
                                 # critical_speed: a stability sweep's crossing of an
                                 # engine order (/sweep/<step>/critical_speeds) with
    order = 1                    # its engine order (default 1),
    whirl = "forward"            # its whirl: forward, backward, none (default: any),
    number = 1                   # the n-th of those by increasing spin (default 1),
                                 # unit "rad/s" (default), "Hz" or "rpm"
    frame = -1                   # output frame (default: the last), or
    time = 2.0                   # the frame at this time / load factor (to 1e-9), or
    statistic = "minimum"        # over the frames (displacement, rotation, section, energy,
                                 # chord_offset, relative_position): minimum, maximum,
                                 # first_maximum (by a parabola through the three frames
                                 # around it), amplitude (half of max - min), mean
    after = 15.0                 # the statistic over the frames at or after this time
    report = "time"              # first_maximum, minimum, maximum: its time instead
    value = -0.4                 # the reference value
    tolerance = 1e-8             # relative tolerance (or abs_tolerance for references near zero)
    source = "PL^3/(3EI)"        # where the value comes from

A case may build input files first: ``prepare = ["rod.toml"]`` (top level of ``reference.toml``)
names decks of the case folder run, in order, before ``deck.toml`` (a ``cms_reduce`` step writing
the superelement file the case reads). Then the case folder is copied into the work directory and
every deck runs there, so the generated files never land in the source tree.

The quantities are read from the results file by :class:`fem.io.results.Results`, the one reader
of results files. ``fem validate`` and the test suite both use :func:`check_case`. A case that
cannot be run or compared (its deck fails, a step does not converge, its reference file is
malformed) is one FAIL row saying why, and the other cases still run.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import tomllib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from fem.errors import FemError, Interrupted
from fem.io import deck as deck_io
from fem.io import files
from fem.io.results import FREQUENCY_UNITS, KINDS, SPEED_UNITS, STATISTICS, WHIRL, Results
from fem.run import run


@dataclass
class Row:
    """One compared quantity."""

    case: str
    quantity: str
    reference: float
    computed: float
    error: float
    tolerance: float
    absolute: bool
    reason: str = ""

    @property
    def passed(self) -> bool:
        """Whether the error is within tolerance."""
        return bool(not self.reason and np.isfinite(self.computed)
                    and self.error <= self.tolerance)

    @classmethod
    def failed(cls, case: str, quantity: str, reason: str) -> Row:
        """A row for a case or quantity that could not be computed."""
        nan = float("nan")
        return cls(case, quantity, nan, nan, nan, nan, False, reason)


def default_cases_dir() -> Path:
    """``./cases`` if it exists, else the ``cases`` folder of the source tree."""
    here = Path.cwd() / "cases"
    return here if here.is_dir() else Path(__file__).resolve().parents[1] / "cases"


def case_dirs(root: Path, names: list[str] | None = None) -> list[Path]:
    """Case folders with a ``reference.toml``, all of them or those named."""
    found = sorted(p.parent for p in root.glob("*/reference.toml"))
    if not names:
        return found
    by_name = {p.name: p for p in found}
    missing = [n for n in names if n not in by_name]
    if missing:
        from fem.errors import DeckError, did_you_mean

        raise DeckError(missing[0], "no such validation case" + did_you_mean(missing[0], by_name))
    return [by_name[n] for n in names]


def _reference(case: Path) -> list[dict]:
    """The quantities of ``reference.toml``; ValueError says what is wrong with it."""
    with open(case / "reference.toml", "rb") as fh:
        ref = tomllib.load(fh)
    quantities = ref.get("quantities")
    if not isinstance(quantities, list) or not quantities:
        raise ValueError("no [[quantities]] tables")
    for i, q in enumerate(quantities):
        missing = [k for k in ("name", "step", "kind", "value") if k not in q]
        if not ("tolerance" in q or "abs_tolerance" in q):
            missing.append("tolerance")
        if missing:
            raise ValueError(f"quantities[{i}] lacks {', '.join(missing)}")
        if q["kind"] not in KINDS:
            raise ValueError(f"quantities[{i}].kind: expected one of {', '.join(KINDS)}, got "
                             f"{q['kind']!r}")
        needs = {"chord_offset": ("nodes",), "relative_position": ("node", "relative_to",
                                                                   "component"),
                 "frequency": ("mode",), "damping_ratio": ("mode",),
                 "buckling_factor": ("mode",)}
        lacking = [k for k in needs.get(q["kind"], ()) if k not in q]
        if lacking:
            raise ValueError(f"quantities[{i}] ({q['kind']}) lacks {', '.join(lacking)}")
        if q["kind"] == "chord_offset" and (not isinstance(q["nodes"], list)
                                            or len(q["nodes"]) != 3):
            raise ValueError(f"quantities[{i}].nodes: expected three node ids [a, m, b], got "
                             f"{q['nodes']!r}")
        if q["kind"] == "frequency" and q.get("unit", "rad/s") not in FREQUENCY_UNITS:
            raise ValueError(f"quantities[{i}].unit: expected one of "
                             f"{', '.join(FREQUENCY_UNITS)}, got {q['unit']!r}")
        if q["kind"] in ("frequency", "damping_ratio", "buckling_factor") and (
                not isinstance(q["mode"], int) or isinstance(q["mode"], bool) or q["mode"] < 1):
            raise ValueError(f"quantities[{i}].mode: expected a mode number 1, 2, ..., got "
                             f"{q['mode']!r}")
        if q["kind"] == "critical_speed":
            _check_critical(q, i)
        if "statistic" in q and q["statistic"] not in STATISTICS:
            raise ValueError(f"quantities[{i}].statistic: expected one of "
                             f"{', '.join(STATISTICS)}, got {q['statistic']!r}")
    return quantities


def _check_critical(q: dict, i: int) -> None:
    """A critical_speed quantity's order, whirl, number and unit; ValueError names the key."""
    order = q.get("order", 1)
    if isinstance(order, bool) or not isinstance(order, int | float) or not order > 0:
        raise ValueError(f"quantities[{i}].order: expected a positive engine order, got "
                         f"{order!r}")
    if "whirl" in q and q["whirl"] not in WHIRL:
        raise ValueError(f"quantities[{i}].whirl: expected one of {', '.join(WHIRL)}, got "
                         f"{q['whirl']!r}")
    n = q.get("number", 1)
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"quantities[{i}].number: expected 1, 2, ..., got {n!r}")
    if q.get("unit", "rad/s") not in SPEED_UNITS:
        raise ValueError(f"quantities[{i}].unit: expected one of {', '.join(SPEED_UNITS)}, got "
                         f"{q['unit']!r}")


def _prepare(case: Path, work: str) -> Path:
    """The folder to run ``deck.toml`` from (module docstring).

    ``case`` itself, or a copy in ``work`` in which the ``prepare`` decks of
    ``reference.toml`` have run.
    """
    with open(case / "reference.toml", "rb") as fh:
        prepare = tomllib.load(fh).get("prepare", [])
    if not prepare:
        return case
    if not isinstance(prepare, list) or not all(isinstance(p, str) for p in prepare):
        raise FemError(f"reference.toml: prepare must be a list of deck file names, got "
                       f"{prepare!r}")
    folder = Path(work) / f"{case.name}_case"
    shutil.copytree(case, folder, dirs_exist_ok=True)
    for name in prepare:
        run(deck_io.load(str(folder / name)), str(folder / f"{Path(name).stem}_prepare.h5"))
    return folder


def check_case(case: Path, workdir: str | None = None, inspect=None) -> list[Row]:
    """Run one case and compare every reference quantity; failures become FAIL rows.

    ``inspect(results, quantities)``, when given, is called with the open
    :class:`~fem.io.results.Results` of the run and the quantities (the report's curves).
    """
    try:
        quantities = _reference(case)
    except (OSError, ValueError, tomllib.TOMLDecodeError) as err:
        return [Row.failed(case.name, "reference.toml", f"malformed reference file: {err}")]
    if not files.writes():          # a replicated run's other ranks keep nothing
        workdir = None
    # the results are this process's own: under mpiexec every rank writes and reads its own
    with tempfile.TemporaryDirectory() as tmp, files.scratch():
        out = os.path.join(workdir or tmp, f"{case.name}.h5")
        try:
            folder = _prepare(case, workdir or tmp)
            run(deck_io.load(str(folder / "deck.toml")), out)
        except Interrupted:
            raise
        except Exception as err:  # noqa: BLE001 - a case's failure must not stop the others
            what = str(err) if isinstance(err, FemError) else \
                f"internal error: {type(err).__name__}: {err}"
            if not os.path.exists(out):
                return [Row.failed(case.name, q["name"], what) for q in quantities]
            failure = what              # compare what was written; the rest fails with it
        else:
            failure = ""
        rows = []
        with Results(out) as results:
            for q in quantities:
                try:
                    computed = results.quantity(q)
                except (KeyError, IndexError, ValueError, TypeError) as err:
                    why = err.args[0] if isinstance(err, IndexError) and err.args else repr(err)
                    rows.append(Row.failed(case.name, q["name"], failure or
                                           f"cannot read the quantity: {why}"))
                    continue
                absolute = "abs_tolerance" in q
                tol = q["abs_tolerance"] if absolute else q["tolerance"]
                err = abs(computed - q["value"])
                if not absolute:
                    err /= abs(q["value"])
                rows.append(Row(case.name, q["name"], q["value"], computed, err, tol, absolute,
                                "" if np.isfinite(computed) else failure))
            if inspect is not None:
                inspect(results, quantities)
    return rows


HEAD = ("case", "quantity", "reference", "computed", "error", "tolerance", "")


def cells(r: Row) -> tuple[str, ...]:
    """A row's cells as the table prints them (and the HTML report, :mod:`fem.report`)."""
    return (r.case, r.quantity, f"{r.reference:.10g}", f"{r.computed:.10g}",
            f"{r.error:.2e}" + (" abs" if r.absolute else " rel"), f"{r.tolerance:.1e}",
            "PASS" if r.passed else "FAIL")


def table(rows: list[Row]) -> str:
    """The validation table printed by ``fem validate``."""
    head = HEAD
    body = [cells(r) for r in rows]
    widths = [max(len(str(x[i])) for x in [head] + body) for i in range(len(head))]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    lines = [fmt.format(*head), fmt.format(*["-" * w for w in widths])]
    lines += [fmt.format(*b) for b in body]
    reasons = {(r.case, r.reason) for r in rows if r.reason}
    if reasons:
        lines.append("")
        lines += [f"{case}: {reason}" for case, reason in sorted(reasons)]
    return "\n".join(lines)
