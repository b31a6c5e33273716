"""Decks at and beyond fem's limits: non-finite and huge numbers, bad names, deep nesting, sizes.

Each mistake is one :class:`~fem.errors.DeckError` naming the deck key and its line (the CLI prints
it as one ``fem: error:`` line and exits with 2): never an internal error, a traceback, a hang or
a misleading message. The decks are small edits of ``BASE`` (the reliability repro decks' base).
"""

import re
import subprocess
import sys
import warnings

import numpy as np
import pytest
from repro_base import BASE

from fem.errors import DeckError
from fem.io import deck as deck_io

# the bounds the deck reference documents (fem.io.schema)
MAX_INCREMENTS, MAX_ITERATIONS, MAX_CUTS, MAX_MODES, MAX_FRAMES = 10**6, 1000, 50, 1000, 10**6




def edited(old, new, text=BASE):
    """``text`` with its first ``old`` replaced by ``new`` (``old`` must be there)."""
    assert old in text, old
    return text.replace(old, new, 1)


def line_of(text, snippet, nth=1):
    """1-based line of the ``nth`` line of ``text`` containing ``snippet``."""
    hits = [i + 1 for i, line in enumerate(text.splitlines()) if snippet in line]
    assert len(hits) >= nth, snippet
    return hits[nth - 1]


def deck_error(text, key, *fragments, line=None):
    """Load ``text``; it must fail with one DeckError at ``key`` (and ``line``) saying each
    fragment, in one line of text."""
    with pytest.raises(DeckError) as info:
        deck_io.loads(text, "deck.toml")
    err = info.value
    msg = str(err)
    assert err.key == key, msg
    if line is not None:
        assert err.line == line, msg
        assert f"(line {line})" in msg
    assert len(msg.splitlines()) == 1, msg
    for f in fragments:
        assert f in msg, f"{f!r} not in {msg!r}"
    return msg


def run_cli(tmp_path, text, *extra):
    path = tmp_path / "deck.toml"
    path.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
    return subprocess.run([sys.executable, "-m", "fem.cli", "run", str(path), "-o",
                           str(tmp_path / "out.h5"), *extra], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300)


def cli_error(tmp_path, text, *fragments):
    p = run_cli(tmp_path, text)
    assert p.returncode == 2, p.stdout + p.stderr
    assert "Traceback" not in p.stderr and "internal error" not in p.stderr
    lines = [x for x in p.stderr.splitlines() if x.strip()]
    assert len(lines) == 1, p.stderr
    assert lines[0].startswith("fem: error: ")
    for f in fragments:
        assert f in lines[0], f"{f!r} not in {lines[0]!r}"
    return lines[0]


# --- numbers (R07, R08, R09, R12, R13, R14, R17, R18) ---------------------------------------------

NUMBERS = [
    # (old, new, key, expected words, got)
    ("[[0, 0], [1000, 0]]", "[[0, 0], [nan, 0]]", "nodes.coordinates[1][0]", "a finite number",
     "got nan"),                                                                          # R07
    ("force = [0, -1.0]", "force = [nan, -1.0]", "loads[0].force[0]", "a finite number",
     "got nan"),                                                                          # R08
    ("force = [0, -1.0]", "force = [0, -1e305]", "loads[0].force[1]",
     "magnitude at most 1e100", "got -1e+305"),                                           # R09
    ("connectivity = [[1, 2]]", "connectivity = [[1, nan]]", "elements[0].connectivity[0][1]",
     "a finite number", "got nan"),                                                       # R12
    ("Iz = 1000.0", "Iz = 1e308", "sections[0].Iz", "magnitude at most 1e100",
     "got 1e+308"),                                                                       # R14
    ("[[0, 0], [1000, 0]]", "[[0, 0], [1e308, 0]]", "nodes.coordinates[1][0]",
     "magnitude at most 1e100", "got 1e+308"),                                            # R17
    ("force = [0, -1.0]", "force = [0, -1e308]", "loads[0].force[1]",
     "magnitude at most 1e100", "got -1e+308"),                                           # R18
    ("force = [0, -1.0]", "force = [0, -inf]", "loads[0].force[1]", "a finite number",
     "got -inf"),
    ("Iz = 1000.0", "Iz = 5e-324", "sections[0].Iz", "0 or a number of magnitude at least 1e-100",
     "got 5e-324"),
    ("A = 100.0", "A = 1e-101", "sections[0].A", "magnitude at least 1e-100", "got 1e-101"),
    ("nu = 0.3", "nu = nan", "materials[0].nu", "a finite number", "got nan"),
    ("[[supports]]\nnodes = 1", "[sets]\nroot = [1, nan]\n\n[[supports]]\nnodes = 1",
     "sets.root[1]", "a finite number", "got nan"),
    ("E = 210000.0", "E = " + "1" + "0" * 400, "materials[0].E", "magnitude below 2^63 (64 bits)",
     "integer of 401 digits"),                                                            # R13
    ("E = 210000.0", "E = " + "9" * 5000, "materials[0].E", "magnitude below 2^63 (64 bits)",
     "integer of 5000 digits"),
]


@pytest.mark.parametrize("old, new, key, expected, got", NUMBERS,
                         ids=[n[2] + ":" + n[1][-12:] for n in NUMBERS])
def test_non_finite_and_out_of_bound_numbers_name_their_key(old, new, key, expected, got):
    text = edited(old, new)
    changed = next(x for x in new.splitlines() if x not in old.splitlines() and x
                   and not re.fullmatch(r"\[\[?\w+\]\]?", x))
    deck_error(text, key, expected, got, line=line_of(text, changed[:30]))


@pytest.mark.parametrize("old, new, key, at", [
    ("[model]\ndim = 2", '[model]\ndim = 2\ntitle = "nul\\u0000"', "model.title", "\\u0000"),
    ("[model]\ndim = 2", '[model]\ndim = 2\nunits = "N\\u0000mm"', "model.units", "\\u0000"),
    ("[[supports]]\nnodes = 1", '[sets]\n"r\\u0000" = [1]\n\n[[supports]]\nnodes = 1',
     "sets.'r\\x00'", "[sets]"),                 # a key with a NUL: its table's line
], ids=["title", "units", "set key"])
def test_nul_characters_in_text_are_deck_errors(old, new, key, at):
    """HDF5 attributes cannot hold a NUL (found by the deck fuzzer: an internal error)."""
    text = edited(old, new)
    deck_error(text, key, "text without NUL characters", line=line_of(text, at))


def test_integers_beyond_64_bits():
    text = edited('type = "static"', 'type = "static"\nnonlinear = true\n'
                  'increments = 9223372036854775808')
    deck_error(text, "steps[0].increments", "64 bits", "integer of 19 digits",
               line=line_of(text, "increments ="))
    # the same key at the bound of int64 is a count too large, not an overflow
    text = edited('type = "static"', 'type = "static"\nnonlinear = true\n'
                  'increments = 9223372036854775807')
    deck_error(text, "steps[0].increments", f"expected an integer from 1 to {MAX_INCREMENTS}")


@pytest.mark.parametrize("new, key", [
    ("connectivity = [[1, 2.0]]", None),                      # an integer-valued float is an id
    ("connectivity = [[1, 2.5]]", "elements[0].connectivity[0]"),
    ("connectivity = [[1, 1e30]]", "elements[0].connectivity[0]"),
    ("connectivity = [[1, 9223372036854775807]]", "elements[0].connectivity[0]"),
])
def test_connectivity_ids_are_integers(new, key):
    text = edited("connectivity = [[1, 2]]", new)
    if key is None:
        deck_io.loads(text)
        return
    deck_error(text, key, line=line_of(text, "connectivity ="))


def test_node_ids_are_bounded():
    text = edited("coordinates = [[0, 0], [1000, 0]]",
                  "coordinates = [[0, 0], [1000, 0]]\nids = [1, 1e16]")
    deck_error(text, "nodes.ids[1]", "magnitude at most 1e15", line=line_of(text, "ids ="))


def test_the_cli_reports_a_nan_coordinate_and_a_huge_literal_in_one_line(tmp_path):
    text = edited("[[0, 0], [1000, 0]]", "[[0, 0], [nan, 0]]")
    cli_error(tmp_path, text, "nodes.coordinates[1][0]", f"(line {line_of(text, 'nan')})",
              "expected a finite number, got nan")
    text = edited("E = 210000.0", "E = 1" + "0" * 400)
    cli_error(tmp_path, text, "materials[0].E", f"(line {line_of(text, 'E = 1')})", "64 bits")


# --- nesting and byte-order marks (R16, R24) ------------------------------------------------------

@pytest.mark.parametrize("depth", [9, 30, 1000, 20000])
def test_deep_nesting(depth):
    text = BASE + "\n[output]\nevery = " + "[" * depth + "1" + "]" * depth + "\n"
    deck_error(text, "output.every", "nested at most 8 levels deep",
               line=line_of(text, "every ="))


def test_deep_nesting_inside_an_array_of_tables_names_the_entry():
    text = BASE + "\n[[steps]]\nname = \"b\"\ntype = \"static\"\nloads = " + "[" * 2000 + \
        "]" * 2000 + "\n"
    deck_error(text, "steps[1].loads", "nested", line=line_of(text, "loads ="))


def test_nesting_a_deck_needs_is_accepted():
    text = edited('type = "static"', 'type = "static"\n\n[[functions]]\nname = "f"\n'
                  'type = "table"\npoints = [[0, 0], [1, 1]]')
    deck_io.loads(text)


@pytest.mark.parametrize("where", ["start", "after a comment", "joined files"])
def test_utf8_byte_order_mark_is_accepted(where):
    bom = "\ufeff"
    text = {"start": bom + BASE, "after a comment": "# a comment\n" + bom + BASE,
            "joined files": BASE.replace("[[steps]]", bom + "[[steps]]")}[where]
    dk = deck_io.loads(text)
    assert dk.steps[0]["name"] == "load"


def test_utf8_byte_order_mark_runs_from_the_cli(tmp_path):
    import h5py

    p = run_cli(tmp_path, b"\xef\xbb\xbf" + BASE.encode())
    assert p.returncode == 0, p.stderr
    # the deck ran as written: the cantilever's tip deflection P L^3 / (3 E I)
    with h5py.File(tmp_path / "out.h5", "r") as h5:
        tip = h5["steps/load/displacement"][-1, 1, 1]
    assert tip == pytest.approx(-1.0 * 1000.0**3 / (3 * 210000.0 * 1000.0), rel=1e-12)
    # a later mistake still has its line
    text = "\ufeff" + edited("A = 100.0", "A = -1.0")
    deck_error(text, "sections[0].A", "positive", line=line_of(text, "A = -1.0"))


# --- names (R01, R02, R10, R11) -------------------------------------------------------------------

BAD_NAMES = ["load 50%", "mode 1/2", ".", "..", "", " lead", "trail ", "a\tb", "a\nb",
             "nul\x00", "x" * 65, "caf\u00e9", "a.b", "a:b", "a\"b", "-", "-x"]


@pytest.mark.parametrize("bad", BAD_NAMES, ids=range(len(BAD_NAMES)))
def test_step_names_follow_the_rule(bad):
    text = edited('name = "load"', f"name = {toml_string(bad)}")
    # a NUL is refused in every deck text first (test_nul_characters_in_text_are_deck_errors)
    expected = (("text without NUL characters",) if "\x00" in bad else
                ("letters (A-Z, a-z), digits, _ and -", "at most 64 characters"))
    msg = deck_error(text, "steps[0].name", *expected, line=line_of(text, "name = ", 5))
    assert "\n" not in msg


@pytest.mark.parametrize("table, old", [
    ("materials[0]", 'name = "steel"'), ("sections[0]", 'name = "s"'),
    ("elements[0]", 'name = "beam"'), ("loads[0]", 'name = "P"'), ("steps[0]", 'name = "load"'),
])
@pytest.mark.parametrize("bad", ["beam 100%", "a/b", "."])
def test_every_defined_name_follows_the_rule(table, old, bad):
    text = edited(old, f"name = {toml_string(bad)}")
    deck_error(text, f"{table}.name", "expected a name", line=line_of(text, toml_string(bad)))


@pytest.mark.parametrize("table, entry", [
    ("springs", 'name = "{}"\nnodes = 2\ndof = "ux"\nstiffness = 1.0'),
    ("prescribed", 'name = "{}"\nnodes = 2\ndof = "ux"\nvalue = 1.0'),
    ("functions", 'name = "{}"\ntype = "constant"'),
    ("velocities", 'name = "{}"\nvelocity = [1.0, 0]'),
])
def test_names_of_other_tables_follow_the_rule(table, entry):
    text = BASE + f"\n[[{table}]]\n" + entry.format("x/y") + "\n"
    deck_error(text, f"{table}[0].name", "expected a name", line=line_of(text, "x/y"))
    deck_io.loads(BASE + f"\n[[{table}]]\n" + entry.format("ok name-1") + "\n")


def test_set_names_follow_the_rule():
    text = edited("[[supports]]", '[sets]\n"tip/end" = [2]\n\n[[supports]]')
    deck_error(text, "sets.tip/end", "expected a set name", line=line_of(text, "tip/end"))


def test_good_names_are_accepted():
    text = edited('name = "load"', 'name = "Load case-2 final_A"')
    assert deck_io.loads(text).steps[0]["name"] == "Load case-2 final_A"
    deck_io.loads(edited('name = "load"', 'name = "' + "x" * 64 + '"'))


@pytest.mark.parametrize("first, second", [("a b", "a_b"), ("a-b", "a b"), ("Load", "load")])
def test_step_names_with_the_same_petsc_prefix(first, second):
    text = (edited('name = "load"', f'name = "{first}"') +
            f'\n[[steps]]\nname = "{second}"\ntype = "static"\n')
    deck_error(text, "steps[1].name", "same PETSc options prefix", f"'{first}'", "steps[0]",
               line=line_of(text, f'name = "{second}"'))


def test_control_characters_of_a_reference_stay_on_one_line():
    text = edited('type = "static"', 'type = "static"\nloads = ["P\\nQ\\u2028R"]')
    msg = deck_error(text, "steps[0].loads", "unknown load", line=line_of(text, "loads ="))
    assert "P\\nQ\\u2028R" in msg


def test_the_cli_refuses_a_slash_in_a_buckling_step_name(tmp_path):
    text = edited('force = [0, -1.0]', 'force = [-1.0, 0]')
    text = edited('name = "load"\ntype = "static"',
                  'name = "mode 1/2"\ntype = "buckling"\nmodes = 1', text)
    cli_error(tmp_path, text, "steps[0].name", f"(line {line_of(text, 'mode 1/2')})",
              "expected a name of letters")


def toml_string(s):
    """``s`` as a TOML basic string."""
    out = []
    for c in s:
        if c in '"\\':
            out.append("\\" + c)
        elif ord(c) < 32 or ord(c) == 127:
            out.append(f"\\u{ord(c):04x}")
        else:
            out.append(c)
    return '"' + "".join(out) + '"'


# --- element rows and sizes (item 4, R15) ---------------------------------------------------------

@pytest.mark.parametrize("rows, first, again", [
    ("[[1, 2], [2, 3], [1, 2]]", 0, 2),
    ("[[1, 2], [2, 3], [3, 2]]", 1, 2),           # the same pair reversed
])
def test_duplicate_element_rows(rows, first, again):
    text = edited("coordinates = [[0, 0], [1000, 0]]",
                  "coordinates = [[0, 0], [1000, 0], [2000, 0]]")
    text = edited("connectivity = [[1, 2]]", f"connectivity = {rows}", text)
    deck_error(text, f"elements[0].connectivity[{again}]", "expected each element once",
               f"rows connectivity[{first}] and [{again}]", "doubles the stiffness",
               line=line_of(text, "connectivity ="))


def test_divisions_beyond_memory(tmp_path):
    text = edited("connectivity = [[1, 2]]", "connectivity = [[1, 2]]\ndivisions = 2147483648")
    msg = deck_error(text, "elements[0].divisions", "fits in this machine's memory",
                     "2147483648 elements", "2147483647 new nodes", "GiB)", "TiB",
                     line=line_of(text, "divisions ="))
    assert "use fewer divisions" in msg
    # and in total: two groups that fit alone but not together
    from fem.io.keys.groups import machine_memory
    from fem.io.schema import BYTES_PER_ELEMENT

    n = int(0.6 * machine_memory() / BYTES_PER_ELEMENT)
    text = edited("connectivity = [[1, 2]]", f"connectivity = [[1, 2]]\ndivisions = {n}")
    text = edited('[[supports]]', f'[[elements]]\nname = "b2"\ntype = "beam"\nmaterial = '
                  f'"steel"\nsection = "s"\nconnectivity = [[1, 2]]\ndivisions = {n}\n\n'
                  '[[supports]]', text)
    deck_error(text, "elements[1].divisions", f"{2 * n} elements",
               line=line_of(text, "divisions =", 2))


def test_the_cli_refuses_divisions_beyond_memory_at_once(tmp_path):
    text = edited("connectivity = [[1, 2]]", "connectivity = [[1, 2]]\ndivisions = 2147483648")
    cli_error(tmp_path, text, "elements[0].divisions", "memory")


def _subdivide_by_loop(X, ids, conn, n):
    """The former Python loop of ``fem.io.keys.groups.subdivided``, as the reference."""
    X, ids = [row for row in X], list(ids)
    out, next_id = [], max(ids) + 1
    for a, c in conn:
        xa, xc = X[a], X[c]
        chain = [a]
        for k in range(1, n):
            X.append(xa + (xc - xa) * k / n)
            ids.append(next_id)
            chain.append(len(X) - 1)
            next_id += 1
        chain.append(c)
        out.extend([[chain[k], chain[k + 1]] for k in range(n)])
    return np.array(X), np.array(ids), np.array(out)


@pytest.mark.parametrize("n", [1, 2, 3, 7])
def test_subdivided_mesh_equals_the_loop(n):
    coords = [[0.0, 0.0], [1.0, 0.5], [3.0, -2.0], [0.3, 4.0]]
    ids = [10, 3, 7, 42]
    rows = [[10, 3], [3, 7], [42, 10]]
    text = edited("coordinates = [[0, 0], [1000, 0]]",
                  f"coordinates = {coords}\nids = {ids}")
    text = edited("connectivity = [[1, 2]]", f"connectivity = {rows}\ndivisions = {n}", text)
    text = edited("nodes = 1", "nodes = 10", text)
    text = edited("nodes = 2", "nodes = 7", text)
    model = deck_io.loads(text).model
    X0 = np.zeros((4, 3))
    X0[:, :2] = coords
    index = {nid: i for i, nid in enumerate(ids)}
    conn0 = np.array([[index[a], index[b]] for a, b in rows])
    X, node_ids, conn = _subdivide_by_loop(X0, ids, conn0, n)
    np.testing.assert_array_equal(model.X, X)
    np.testing.assert_array_equal(model.node_ids, node_ids)
    np.testing.assert_array_equal(model.groups[0].conn, conn)


# --- counts that drive loops (item 5) -------------------------------------------------------------

NONLINEAR = 'type = "static"\nnonlinear = true\n'
ARCLENGTH = NONLINEAR + 'control = "arclength"\narc_length = 0.1\n'


@pytest.mark.parametrize("extra, key, bound", [
    (NONLINEAR + f"increments = {MAX_INCREMENTS + 1}", "increments", MAX_INCREMENTS),
    (NONLINEAR + f"max_iterations = {MAX_ITERATIONS + 1}", "max_iterations", MAX_ITERATIONS),
    (ARCLENGTH + "max_steps = 4611686018427387904", "max_steps", MAX_INCREMENTS),
    (ARCLENGTH + "target_iterations = 100000", "target_iterations", MAX_ITERATIONS),
])
def test_static_counts_are_bounded(extra, key, bound):
    text = edited('type = "static"', extra)
    deck_error(text, f"steps[0].{key}", f"from 1 to {bound}", line=line_of(text, f"{key} ="))


def test_buckling_modes_are_bounded():
    text = edited('type = "static"', f'type = "buckling"\nmodes = {MAX_MODES + 1}')
    deck_error(text, "steps[0].modes", f"from 1 to {MAX_MODES}", line=line_of(text, "modes ="))


def dynamic(**keys):
    """``BASE`` with a dynamic step (time_step 0.01, duration 1 unless ``keys`` say otherwise)."""
    keys = {"time_step": 0.01, "duration": 1.0, **keys}
    step = '[[steps]]\nname = "shake"\ntype = "dynamic"\n' + "".join(
        f"{k} = {v}\n" for k, v in keys.items())
    text = edited("nu = 0.3", "nu = 0.3\ndensity = 7.8e-9")
    return edited('[[steps]]\nname = "load"\ntype = "static"\n', step, text)


def test_dynamic_counts_are_bounded():
    text = dynamic(max_cuts=2**62)
    deck_error(text, "steps[0].max_cuts", f"from 0 to {MAX_CUTS}", line=line_of(text, "max_cuts"))
    text = dynamic(time_step="5e-324")
    deck_error(text, "steps[0].time_step", "magnitude at least 1e-100",
               line=line_of(text, "time_step = 5e-324"))
    text = dynamic(time_step="1e-99")
    deck_error(text, "steps[0].time_step", "at most 1e7 time steps", "1e+99",
               line=line_of(text, "time_step = 1e-99"))
    text = dynamic(time_step="1e-5", duration="100.0", output_interval="1e-5")
    deck_error(text, "steps[0].output_interval", f"at most {MAX_FRAMES:.0e}".replace("+0", ""),
               line=line_of(text, "output_interval ="))


def test_a_tiny_output_interval_is_a_valid_value():
    # R26: frames are written at most once per time step, so this is 100 frames
    dk = deck_io.loads(dynamic(time_step="0.01", output_interval="1e-11"))
    assert dk.steps[0]["settings"].output_interval == 1e-11


def test_load_control_increments_from_max_increment():
    text = edited('type = "static"', NONLINEAR + "max_increment = 1e-9")
    deck_error(text, "steps[0].max_increment", f"at most {MAX_INCREMENTS} increments",
               line=line_of(text, "max_increment ="))


# --- step keys (item 8) ---------------------------------------------------------------------------

def test_load_factor_zero_applies_no_load():
    text = edited('type = "static"', NONLINEAR + "load_factor = 0.0")
    deck_error(text, "steps[0].load_factor", "applies no load", "got 0",
               line=line_of(text, "load_factor ="))
    deck_io.loads(edited('type = "static"', NONLINEAR + "load_factor = -2.0"))


@pytest.mark.parametrize("node, dof, words", [
    (1, "uy", "is supported"),
    (2, "uz", "expected one of ux, uy, rz"),
])
def test_arclength_watches_a_free_dof(node, dof, words):
    text = edited('type = "static"', ARCLENGTH + f'node = {node}\ndof = "{dof}"\ntarget = -1.0')
    deck_error(text, "steps[0].dof", words, line=line_of(text, "dof ="))


def test_arclength_watched_dof_that_no_element_gives():
    text = edited('type = "beam"', 'type = "truss"')
    text = edited("Iz = 1000.0\n", "", text)
    text = edited("fixed = [\"all\"]", "fixed = [\"all\"]\n\n[[supports]]\nnodes = 2\n"
                  "fixed = [\"ux\"]", text)
    text = edited('type = "static"', ARCLENGTH + 'node = 2\ndof = "rz"\ntarget = -1.0', text)
    deck_error(text, "steps[0].dof", "has no DOF rz", "arc-length control watches a free DOF",
               line=line_of(text, "dof ="))


# --- inertia (R23) --------------------------------------------------------------------------------

CANTILEVER_3D = """\
[model]
dim = 3

[[materials]]
name = "m"
E = 1.0e3
G = 400.0
density = 1.0e2

[[sections]]
name = "s"
A = 1.0e-2
Iy = 5.0e-4
Iz = 1.0e-3
J = 8.0e-4

[nodes]
coordinates = [[0, 0, 0], [1, 0, 0]]

[[elements]]
name = "beam"
type = "beam"
formulation = "corotational"
material = "m"
section = "s"
connectivity = [[1, 2]]
divisions = 4

[[masses]]
nodes = 2
mass = 1.0
inertia = [[2.0, 0.3, -0.1], [0.3, 1.5, 0.2], [-0.1, 0.2, 1.0]]

[[supports]]
nodes = 1
fixed = ["all"]

[[velocities]]
name = "kick"
nodes = 2
velocity = [0, 0.1, 0]

[[steps]]
name = "swing"
type = "dynamic"
time_step = 0.01
duration = 0.05
velocities = ["kick"]
"""

J_GIVEN = np.array([[2.0, 0.3, -0.1], [0.3, 1.5, 0.2], [-0.1, 0.2, 1.0]])


def test_inertia_matrix_is_accepted_and_used():
    from fem.inertia.nodal import NodalInertia
    from fem.system import System

    def nodal_J(text):
        dk = deck_io.loads(text)
        tip = int(np.flatnonzero(dk.model.node_ids == 2)[0])
        return NodalInertia(System(dk.model)).J[tip], dk

    with_mass, dk = nodal_J(CANTILEVER_3D)
    np.testing.assert_array_equal(dk.model.masses[0].inertia, J_GIVEN)
    without, _ = nodal_J(CANTILEVER_3D.replace(
        "inertia = [[2.0, 0.3, -0.1], [0.3, 1.5, 0.2], [-0.1, 0.2, 1.0]]\n", ""))
    np.testing.assert_allclose(with_mass - without, J_GIVEN, rtol=0, atol=1e-14)


def test_inertia_matrix_deck_runs(tmp_path):
    """From the CLI, with the full inertia matrix: the energy-conserving run conserves energy."""
    import h5py

    p = run_cli(tmp_path, CANTILEVER_3D)
    assert p.returncode == 0, p.stderr
    with h5py.File(tmp_path / "out.h5", "r") as h5:
        total = h5["steps/swing/energy/total"][:]
        kinetic = h5["steps/swing/energy/kinetic"][:]
    assert len(total) == 6 and kinetic[0] > 0
    assert np.abs(total - total[0]).max() <= 1e-8 * kinetic[0]


@pytest.mark.parametrize("value, words", [
    ("[[1.0, 0.5, 0], [0, 1.0, 0], [0, 0, 1.0]]", "expected a symmetric matrix"),
    ("[[1.0, 2.0, 0], [2.0, 1.0, 0], [0, 0, 1.0]]", "positive semi-definite"),
    ("[[1.0, 0], [0, 1.0]]", "3 x 3 matrix"),
    ("[[1.0, 0, 0], [0, 1.0, 0]]", "3 x 3 matrix"),
    ("[1.0, -1.0, 1.0]", "expected rotary inertias >= 0"),
    ("[1.0, 1.0]", "[Ixx, Iyy, Izz] or a 3 x 3 matrix"),
    ("[[1.0, 0, 0], 1.0, 2.0]", "a number, a list of numbers or a list of lists"),
])
def test_bad_inertia(value, words):
    text = CANTILEVER_3D.replace("[[2.0, 0.3, -0.1], [0.3, 1.5, 0.2], [-0.1, 0.2, 1.0]]", value)
    deck_error(text, "masses[0].inertia", words, line=line_of(text, "inertia ="))


def test_inertia_of_a_2d_model_is_one_number():
    text = edited("[[supports]]", "[[masses]]\nnodes = 2\ninertia = [[1.0]]\n\n[[supports]]")
    deck_error(text, "masses[0].inertia", "expected one number, Izz",
               line=line_of(text, "inertia ="))


# --- mechanisms name nodes the user knows (item 7) ------------------------------------------------

TRUSS_LINE = """\
[model]
dim = 2

[[materials]]
name = "m"
E = 1.0
nu = 0.3

[[sections]]
name = "s"
A = 1.0

[nodes]
coordinates = [[0, 0], [1, 0]]

[[elements]]
name = "bar"
type = "truss"
material = "m"
section = "s"
connectivity = [[1, 2]]
divisions = {n}

[[supports]]
nodes = [1, 2]
fixed = ["all"]

[[loads]]
name = "P"
nodes = 3
force = [1.0, 0]

[[steps]]
name = "pull"
type = "static"
"""


@pytest.mark.parametrize("n, where", [
    (2, "node 3 uy (the middle node between nodes 1 and 2, divisions = 2)"),
    (4, "node 3 uy (the 1st of 3 interior nodes between nodes 1 and 2, divisions = 4)"),
])
def test_mechanism_at_a_generated_node_names_where_it_lies(tmp_path, n, where):
    msg = cli_error(tmp_path, TRUSS_LINE.format(n=n), "the model is a mechanism")
    assert where in msg, msg


def test_describe_places_generated_nodes():
    from fem.dofs import DofMap

    model = deck_io.loads(TRUSS_LINE.format(n=10)).model
    dm = DofMap.build(model)
    k = int(dm.index[9, 1])          # node id 10: the 8th interior node
    assert dm.describe(k, model.node_ids) == "node 10 uy"
    assert dm.describe(k, model.node_ids, model) == (
        "node 10 uy (the 8th of 9 interior nodes between nodes 1 and 2, divisions = 10)")


# --- derived quantities and warnings (item 9) -----------------------------------------------------

@pytest.mark.parametrize("edits, key, words", [
    ([("A = 100.0\nIz = 1000.0", 'shape = "rectangle"\nb = 1e100\nh = 1e100')], "sections[0]",
     "properties are positive and at most 1e150"),
    ([("A = 100.0\nIz = 1000.0", 'shape = "tube"\nd = 1.0\nt = 1e-20')], "sections[0]",
     "got A = 0"),
    ([("E = 210000.0", "E = 1e100"), ("A = 100.0", "A = 1e60")], "elements[0]", "E A / L"),
    ([("E = 210000.0", "E = 1e100"), ("Iz = 1000.0", "Iz = 1e60")],
     "elements[0]", "12 E Iz / L^3"),
])
def test_derived_quantities_beyond_double_precision(edits, key, words):
    text = BASE
    for old, new in edits:
        text = edited(old, new, text)
    deck_error(text, key, words, "at most 1e150", line=line_of(text, "[[" + key[:-3] + "]]"))


def test_extreme_but_valid_values_raise_no_runtime_warnings():
    edits = [("E = 210000.0", "E = 1e100"), ("E = 210000.0", "E = 1e-100"),
             ("[[0, 0], [1000, 0]]", "[[0, 0], [1e100, 0]]"),
             ("[[0, 0], [1000, 0]]", "[[-1e100, 1e100], [1e100, -1e100]]"),
             ("[[0, 0], [1000, 0]]", "[[0, 0], [1e-100, 0]]"),
             ("A = 100.0", "A = 1e-100"), ("Iz = 1000.0", "Iz = 1e100"),
             ("force = [0, -1.0]", "force = [1e100, -1e100]"),
             ("A = 100.0\nIz = 1000.0", 'shape = "circle"\nd = 1e100'),
             ("A = 100.0\nIz = 1000.0", 'shape = "rectangle"\nb = 1e-100\nh = 1e100')]
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        for old, new in edits:
            try:
                deck_io.loads(edited(old, new))
            except DeckError as err:
                assert len(str(err).splitlines()) == 1


# --- lines of rows in multi-line arrays, and mutated decks -------------------------------------

def test_the_line_of_a_row_in_a_multi_line_array():
    text = edited("coordinates = [[0, 0], [1000, 0]]",
                  'coordinates = [\n  [0, 0],\n  [1000, 0],  # "tip", [x]\n  [2000, nan],\n]')
    deck_error(text, "nodes.coordinates[2][1]", "got nan", line=line_of(text, "[2000, nan]"))


MUTATIONS = ["nan", "inf", "-inf", "1e308", "5e-324", "0", "-1", "2.5", '"x"', "[]", "[[]]", "{}",
             "true", str(10**30), str(10**400), "[1, 2, 3]", "[[1, 2], [3]]", '"a/b"', '"."',
             '""', '"a\\nb"', "[nan, 1]", "[[1, nan]]", "[[1, 2.5]]", "1e101", "1e-101",
             "[" * 50 + "]" * 50, "2147483648", "[[1e99, 0, 0], [0, 1e99, 0], [0, 0, 1e99]]"]


@pytest.mark.parametrize("seed", range(4))
def test_mutated_decks_fail_only_with_deck_errors(seed):
    """Deleted lines, typos, wrong and extreme values, truncations: a DeckError or a deck."""
    import random

    rng = random.Random(seed)
    sources = [BASE, CANTILEVER_3D, TRUSS_LINE.format(n=3), dynamic(output_interval=0.1)]
    assign = re.compile(r"^(\s*[\w\"'.-]+\s*=\s*)(.*)$")
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        for _ in range(150):
            lines = rng.choice(sources).splitlines()
            for _ in range(rng.choice([1, 2, 3])):
                keyed = [i for i, x in enumerate(lines) if assign.match(x)]
                if not keyed:
                    break
                what = rng.randrange(4)
                i = rng.choice(keyed)
                if what == 0:
                    del lines[i]
                elif what == 1:
                    lines[i] = assign.match(lines[i]).group(1) + rng.choice(MUTATIONS)
                elif what == 2:
                    key = lines[i].split("=")[0].strip()
                    j = rng.randrange(max(len(key) - 1, 1))
                    lines[i] = key[:j] + key[j + 1:j + 2] + key[j:j + 1] + key[j + 2:] + \
                        " =" + lines[i].split("=", 1)[1]
                else:
                    lines = "\n".join(lines)[:rng.randrange(len("\n".join(lines)))].split("\n")
            text = "\n".join(lines) + "\n"
            try:
                deck_io.loads(text)
            except DeckError as err:
                assert len(str(err).splitlines()) == 1, str(err)
