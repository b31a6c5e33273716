"""A property-based deck fuzzer: mutations of the validation cases' decks through ``fem run``.

Every case's deck is mutated the ways users and tools break decks: keys deleted or misspelt,
values of the wrong type, extreme and non-finite numbers, broken references, bad names, tables
duplicated, the text truncated. Each mutated deck runs through the command-line entry point
(``fem.cli.main``, in this process) with a time bound. Whatever the deck, fem must answer with an
exit code it documents and a message, never an internal error or a traceback, never a hang (past
the bound the run is asked to stop and must stop cleanly), and never exit 0 with results that are
not finite.

The cases' dynamic and path-following steps are shortened first (a few time steps or increments):
the fuzzer is about input handling, not about long runs. ``make test`` runs a hundred examples
(deterministic, so that CI is repeatable), and checks that between them they apply every mutation
kind; ``FEM_SOAK=1`` runs 2000.
"""

import contextlib
import copy
import faulthandler
import io
import math
import os
import signal
import threading
import tomllib
from pathlib import Path

import h5py
import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from toml_writer import dumps

from fem import cli, interrupt

ROOT = Path(__file__).resolve().parents[1]
CASES = {p.parent.name: tomllib.loads(p.read_text())
         for p in sorted(ROOT.glob("cases/*/deck.toml"))}
BOUND = 8.0                       # seconds a mutated deck may run before it is asked to stop
EXAMPLES = int(os.environ.get("FEM_FUZZ_EXAMPLES", 2000 if os.environ.get("FEM_SOAK") else 100))
ALLOWED = {0, 2, 3, 4, 143}       # done, bad input, no convergence/accuracy, output, stopped

EXTREMES = [0, -1, 1, 2, 0.0, -0.0, -1.5, 0.5, 1e-300, 5e-324, 1e-100, 1e100, 1e305, 1.7e308,
            -1e308, math.nan, math.inf, -math.inf, 2**31, 2**53, 2**63, -(2**63), 2**64,
            10**400, 7, 1e6, 1e-12]
WRONG_TYPES = ["text", "", True, False, 3, 2.5, [], [1, "a"], [[1, 2], [3]], {"x": 1},
               ["all"], [[[1]]]]
MUTATIONS = ["delete", "typo", "type", "number", "scale", "reference", "name", "duplicate",
             "truncate"]
APPLIED: set[str] = set()         # the mutation kinds the examples drawn so far have applied
BAD_NAMES = ["", ".", "..", "a/b", "50%", "x" * 300, "tab\there", "nul\x00", "\u00e9t\u00e9",
             " lead", "-", "a.b", "new\nline"]


def shortened(deck: dict) -> dict:
    """The deck with its long steps cut short (a handful of time steps or increments)."""
    deck = copy.deepcopy(deck)
    for step in deck.get("steps", []):
        if step.get("type") == "dynamic" and {"time_step", "duration"} <= set(step):
            step["duration"] = min(step["duration"], 4 * step["time_step"])
            step.pop("output_interval", None)
        if step.get("control") == "arclength":
            step["max_steps"] = min(step.get("max_steps", 100), 6)
            for key in ("target", "node", "dof"):
                step.pop(key, None)
    return deck


def leaves(obj, path=()):
    """Every (path, value) in a parsed deck, containers included."""
    yield path, obj
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from leaves(v, path + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from leaves(v, path + (i,))


def parent_of(deck, path):
    node = deck
    for p in path[:-1]:
        node = node[p]
    return node


def typo(word: str, i: int) -> str:
    if len(word) < 2:
        return word + "x"
    i %= len(word) - 1
    return [word[:i] + word[i + 1] + word[i] + word[i + 2:], word[:i] + word[i + 1:],
            word[:i] + word[i] * 2 + word[i + 1:], word.upper()][i % 4]


def names_in(deck) -> list[str]:
    return sorted({v for _, v in leaves(deck) if isinstance(v, str)})


@st.composite
def mutated_decks(draw):
    """(case, deck text) after one to three mutations of a shortened case deck."""
    case = draw(st.sampled_from(sorted(CASES)))
    deck = shortened(CASES[case])
    truncate = None
    for _ in range(draw(st.integers(1, 3))):
        paths = [p for p, _ in leaves(deck) if p]
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        parent, last = parent_of(deck, path), path[-1]
        value = parent[last]
        kind = draw(st.sampled_from(MUTATIONS))
        if kind == "delete":
            del parent[last]
        elif kind == "typo" and isinstance(last, str):
            parent[typo(last, draw(st.integers(0, 40)))] = parent.pop(last)
        elif kind == "type":
            parent[last] = copy.deepcopy(draw(st.sampled_from(WRONG_TYPES)))  # never shared
        elif kind == "number":
            parent[last] = draw(st.sampled_from(EXTREMES))
        elif kind == "scale" and isinstance(value, (int, float)) and not isinstance(value, bool):
            parent[last] = value * 10.0 ** draw(st.integers(-40, 40))
        elif kind == "reference" and isinstance(value, str):
            parent[last] = draw(st.sampled_from(names_in(deck) + ["nosuch", "all"]))
        elif kind == "name":
            parent[last] = draw(st.sampled_from(BAD_NAMES))
        elif kind == "duplicate" and isinstance(parent, list):
            parent.append(copy.deepcopy(value))
        elif kind == "truncate":
            truncate = draw(st.floats(0.0, 1.0))
        else:
            continue                              # the kind does not apply to this entry
        APPLIED.add(kind)
    text = dumps(deck)
    if truncate is not None:
        text = text[:int(truncate * len(text))]
    return case, text


def finite_results(path: Path) -> list[str]:
    """Datasets of a results file with non-finite values (``NaN`` rows of a quantity that starts
    late in a step, such as a dynamic step's initial reactions, are by design and skipped)."""
    bad = []
    with h5py.File(path, "r") as h5:
        def visit(name, obj):
            if isinstance(obj, h5py.Dataset) and obj.dtype.kind == "f":
                a = obj[()]
                if a.ndim and np.isnan(a).all(axis=tuple(range(1, a.ndim))).any() \
                        and "reaction" in name:
                    a = a[~np.isnan(a).all(axis=tuple(range(1, a.ndim)))]
                if not np.all(np.isfinite(a)):
                    bad.append(name)
        for group in ("steps", "modes"):             # results; /model keeps inf shear areas
            if group in h5:
                h5[group].visititems(lambda name, obj, g=group: visit(f"{g}/{name}", obj))
    return bad


def run_bounded(deck: Path, out: Path) -> tuple[int, str, bool]:
    """``fem run`` in this process; past ``BOUND`` the run is asked to stop (as by SIGTERM)."""
    stopped = threading.Event()

    def stop():
        stopped.set()
        interrupt.request(signal.SIGTERM)

    timer = threading.Timer(BOUND, stop)
    faulthandler.dump_traceback_later(BOUND + 120, exit=True)    # a real hang fails the suite
    said = io.StringIO()
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(said):
            timer.start()
            code = cli.main(["run", str(deck), "-o", str(out)])
    finally:
        timer.cancel()
        faulthandler.cancel_dump_traceback_later()
    return code, said.getvalue(), stopped.is_set()


@settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                 HealthCheck.function_scoped_fixture])
@given(mutated_decks())
def answers_clearly(tmp_path, example):
    """One mutated deck through ``fem run``: the properties of the module docstring."""
    case, text = example
    deck = tmp_path / "deck.toml"
    deck.write_text(text, encoding="utf-8")
    out = tmp_path / "out.h5"
    for old in tmp_path.glob("out*"):
        old.unlink()
    code, said, stopped = run_bounded(deck, out)
    event(f"exit {code}")
    where = f"case {case}, exit {code}:\n{said}\n--- deck ---\n{text}"
    assert "Traceback" not in said and "internal error" not in said, where
    assert code in ALLOWED, where
    assert code != 143 or stopped, where
    if code != 0:
        assert said.strip(), where            # a failure always says why
    if code == 0 and out.exists():
        assert not finite_results(out), where + f"\nnon-finite: {finite_results(out)}"


@pytest.mark.slow
def test_a_mutated_deck_gets_a_clear_answer(tmp_path):
    """The examples (``EXAMPLES`` of them) answer clearly, and between them they apply every
    mutation kind (so that a smaller suite count still exercises each)."""
    APPLIED.clear()
    answers_clearly(tmp_path)
    assert APPLIED == set(MUTATIONS), f"never applied: {sorted(set(MUTATIONS) - APPLIED)}"
