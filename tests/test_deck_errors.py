"""Every deck mistake ends the CLI with one clear message, exit code 2 and no traceback.

Each test runs ``python -m fem.cli run deck.toml -o out.h5`` as a subprocess on a small deck with
one mistake, and checks that stderr holds exactly one ``fem: error:`` line naming the deck key, the
line of the deck where the mistake is (where it can be found), what was expected and what was
received.
"""

import subprocess
import sys
from pathlib import Path

import pytest

CANTILEVER = """\
[model]
dim = 2
title = "cantilever"
units = "N, mm"

[[materials]]
name = "steel"
E = 200000.0
nu = 0.3

[[sections]]
name = "s"
A = 100.0
Iz = 1000.0

[nodes]
coordinates = [[0, 0], [1000, 0]]

[sets]
tip = [2]

[[elements]]
name = "beam"
type = "beam"
material = "steel"
section = "s"
connectivity = [[1, 2]]
divisions = 2

[[supports]]
nodes = 1
fixed = ["all"]

[[loads]]
name = "P"
nodes = "tip"
force = [0, -10.0]

[[steps]]
name = "load"
type = "static"
"""

# A portal frame (columns 1-2 and 4-3, girder 2-3) standing on two rollers that hold uy only:
# nothing stops it from sliding along x.
PORTAL_ON_ROLLERS = """\
[model]
dim = 2

[[materials]]
name = "steel"
E = 210000.0
nu = 0.3

[[sections]]
name = "ipe"
A = 2850.0
Iz = 1.94e7

[nodes]
coordinates = [[0, 0], [0, 3000], [4000, 3000], [4000, 0]]

[[elements]]
name = "frame"
type = "beam"
material = "steel"
section = "ipe"
connectivity = [[1, 2], [2, 3], [3, 4]]

[[supports]]
nodes = [1, 4]
fixed = ["uy"]

[[loads]]
name = "gravity"
nodes = [2, 3]
force = [0, -1000.0]

[[steps]]
name = "slide"
type = "static"
"""


def run_cli(tmp_path, text, *extra, deck="deck.toml"):
    """Run ``fem run`` on ``text`` written to ``tmp_path/deck``; returns the CompletedProcess."""
    path = tmp_path / deck
    path.write_text(text)
    return subprocess.run([sys.executable, "-m", "fem.cli", "run", str(path), "-o",
                           str(tmp_path / "out.h5"), *extra],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)


def edited(old, new, text=CANTILEVER):
    """``text`` with its first ``old`` replaced by ``new`` (``old`` must be there)."""
    assert old in text, old
    return text.replace(old, new, 1)


def line_of(text, snippet, nth=1):
    """1-based line number of the ``nth`` line of ``text`` that contains ``snippet``."""
    hits = [i + 1 for i, line in enumerate(text.splitlines()) if snippet in line]
    assert len(hits) >= nth, snippet
    return hits[nth - 1]


def error(tmp_path, text, *fragments, line=None, code=2, extra=()):
    """Run ``text``; check exit ``code``, one message, no traceback, and each fragment."""
    p = run_cli(tmp_path, text, *extra)
    assert p.returncode == code, p.stdout + p.stderr
    assert "Traceback" not in p.stderr
    messages = [x for x in p.stderr.splitlines() if x.strip()]
    assert len(messages) == 1, p.stderr
    msg = messages[0]
    assert msg.startswith("fem: error: "), msg
    for f in fragments:
        assert f in msg, f"{f!r} not in {msg!r}"
    if line is not None:
        assert f"(line {line})" in msg, msg
    return msg


def test_correct_deck_runs(tmp_path):
    p = run_cli(tmp_path, CANTILEVER)
    assert p.returncode == 0, p.stderr
    assert p.stderr == ""
    assert "step load (static)" in p.stdout
    assert (tmp_path / "out.h5").exists() and (tmp_path / "out.xdmf").exists()


# --- syntax and structure -------------------------------------------------------------------------

def test_toml_syntax_error_gives_its_line(tmp_path):
    text = edited("E = 200000.0", "E = 200000.0.")
    error(tmp_path, text, "deck.toml", "TOML syntax error", "column",
          line=line_of(text, "E = 200000.0."))


def test_toml_duplicate_key_is_a_syntax_error(tmp_path):
    text = edited("nu = 0.3", "nu = 0.3\nnu = 0.25")
    error(tmp_path, text, "TOML syntax error", line=line_of(text, "nu = 0.25"))


def test_unknown_top_level_table_suggests_the_right_one(tmp_path):
    text = edited("[sets]", "[sest]")
    error(tmp_path, text, "sest", "unknown table", "did you mean 'sets'?",
          line=line_of(text, "[sest]"))


def test_unknown_array_table_suggests_the_right_one(tmp_path):
    text = edited("[[supports]]", "[[suports]]")
    error(tmp_path, text, "suports", "unknown table", "did you mean 'supports'?",
          line=line_of(text, "[[suports]]"))


def test_root_key_above_the_first_table(tmp_path):
    text = "dim = 2\n" + CANTILEVER
    error(tmp_path, text, "dim", "unknown table", "is a key of [model]", line=1)


def test_unknown_key_in_a_table_suggests_the_right_one(tmp_path):
    text = edited("nu = 0.3", "nu = 0.3\ndesnity = 7.85e-9")
    error(tmp_path, text, "materials[0].desnity", "unknown key", "did you mean 'density'?",
          line=line_of(text, "desnity"))


def test_unknown_key_without_a_close_match_lists_the_keys(tmp_path):
    text = edited("nu = 0.3", "nu = 0.3\nrho = 7.85e-9")
    error(tmp_path, text, "materials[0].rho", "unknown key", "name, E, nu, G, density",
          line=line_of(text, "rho ="))


def test_unknown_key_in_the_second_array_entry(tmp_path):
    text = edited("[[steps]]", "[[loads]]\nname = \"Q\"\nnodes = 2\nforse = [1.0, 0]\n\n[[steps]]")
    error(tmp_path, text, "loads[1].forse", "did you mean 'force'?", line=line_of(text, "forse"))


def test_line_is_found_after_multi_line_arrays(tmp_path):
    # rows of a multi-line array start with "[" like table headers do
    text = edited("coordinates = [[0, 0], [1000, 0]]", "coordinates = [\n    [0, 0],\n"
                  "    [1000, 0],\n]")
    text = edited("connectivity = [[1, 2]]\ndivisions = 2",
                  "connectivity = [\n  [1, 2],\n]\ndivisions = 0  # a mistake", text)
    error(tmp_path, text, "elements[0].divisions", "expected a positive integer", "got 0",
          line=line_of(text, "divisions = 0"))


def test_table_written_below_another_table(tmp_path):
    # `elements = {...}` after [sets] belongs to [sets] in TOML
    text = edited("[sets]\ntip = [2]", "[sets]\ntip = [2]\nelements = { name = \"b\" }")
    error(tmp_path, text, "sets.elements", "expected a non-empty list of node ids", "got a table",
          "[[elements]] is a table of its own", line=line_of(text, "elements = {"))


# --- types ----------------------------------------------------------------------------------------

def test_string_where_a_number_is_expected(tmp_path):
    text = edited("E = 200000.0", 'E = "200000"')
    error(tmp_path, text, "materials[0].E", "expected a number", "got a string '200000'",
          line=line_of(text, 'E = "200000"'))


def test_list_where_a_table_is_expected(tmp_path):
    text = edited("[[steps]]", "[solver]\npetsc_options = [\"ksp_type\", \"gmres\"]\n\n[[steps]]")
    error(tmp_path, text, "solver.petsc_options", "expected a table", "got a list",
          line=line_of(text, "petsc_options"))


def test_top_level_list_where_a_table_is_expected(tmp_path):
    text = "nodes = [[0, 0], [1000, 0]]\n" + edited("[nodes]\ncoordinates = [[0, 0], [1000, 0]]\n",
                                                   "")
    error(tmp_path, text, "nodes", "expected a table", "[nodes]", "got a list", line=1)


def test_single_table_instead_of_an_array_of_tables(tmp_path):
    text = edited("[[elements]]", "[elements]")
    error(tmp_path, text, "elements", "expected an array of tables", "[[elements]]",
          "got a single table [elements]", line=line_of(text, "[elements]"))


def test_string_where_a_list_of_names_is_expected(tmp_path):
    text = edited('fixed = ["all"]', 'fixed = "all"')
    error(tmp_path, text, "supports[0].fixed", "expected a list of names", "got a string 'all'",
          line=line_of(text, 'fixed = "all"'))


def test_integer_expected(tmp_path):
    text = edited("dim = 2", "dim = 2.0")
    error(tmp_path, text, "model.dim", "expected an integer", "got a number 2.0",
          line=line_of(text, "dim = 2.0"))


def test_choice_with_suggestion(tmp_path):
    text = edited('type = "static"', 'type = "statics"')
    error(tmp_path, text, "steps[0].type", "expected one of static, buckling",
          "got 'statics'", "did you mean 'static'?", line=line_of(text, '"statics"'))


def test_petsc_option_value_must_be_scalar(tmp_path):
    text = edited("[[steps]]", "[solver]\npetsc_options = { ksp = { type = \"gmres\" } }\n\n"
                  "[[steps]]")
    error(tmp_path, text, "solver.petsc_options.ksp", "expected a string, a number or true/false",
          "got a table", line=line_of(text, "petsc_options"))


# --- values ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("old, new, key, got", [
    ("E = 200000.0", "E = 0.0", "materials[0].E", "got 0.0"),
    ("E = 200000.0", "E = -1.0", "materials[0].E", "got -1.0"),
    ("A = 100.0", "A = -5.0", "sections[0].A", "got -5.0"),
    ("A = 100.0", "A = 0", "sections[0].A", "got 0"),
    ("divisions = 2", "divisions = 0", "elements[0].divisions", "got 0"),
])
def test_non_positive_values(tmp_path, old, new, key, got):
    text = edited(old, new)
    error(tmp_path, text, key, "expected a positive", got, line=line_of(text, new))


def test_non_positive_rectangle_width(tmp_path):
    text = edited("A = 100.0\nIz = 1000.0", 'shape = "rectangle"\nb = 0.0\nh = 20.0')
    error(tmp_path, text, "sections[0].b", "expected a positive number", "got 0.0",
          line=line_of(text, "b = 0.0"))


def test_tube_wall_too_thick(tmp_path):
    text = edited("A = 100.0\nIz = 1000.0", 'shape = "tube"\nd = 50.0\nt = 30.0')
    error(tmp_path, text, "sections[0].t", "expected a wall thickness less than half the "
          "diameter d = 50.0", "got 30.0", line=line_of(text, "t = 30.0"))


def test_beam_section_without_bending_stiffness(tmp_path):
    text = edited("Iz = 1000.0\n", "")
    error(tmp_path, text, "elements[0].section", "needs a section with a positive Iz",
          "got section 's' with Iz = 0", line=line_of(text, 'section = "s"'))


def test_poisson_ratio_out_of_range(tmp_path):
    text = edited("nu = 0.3", "nu = 0.5")
    error(tmp_path, text, "materials[0].nu", "expected a Poisson's ratio in (-1, 0.5)",
          "got 0.5", line=line_of(text, "nu = 0.5"))


def test_infinite_value(tmp_path):
    text = edited("E = 200000.0", "E = inf")
    error(tmp_path, text, "materials[0].E", "expected a finite number", "got inf",
          line=line_of(text, "E = inf"))


# --- missing keys and tables ----------------------------------------------------------------------

def test_missing_required_key(tmp_path):
    text = edited("E = 200000.0\n", "")
    error(tmp_path, text, "materials[0].E", "missing required key 'E'", "expected a number",
          "Young's modulus", line=line_of(text, "[[materials]]"))


def test_missing_step_name(tmp_path):
    text = edited('name = "load"\n', "")
    error(tmp_path, text, "steps[0].name", "missing required key 'name'",
          line=line_of(text, "[[steps]]"))


def test_missing_model_table(tmp_path):
    text = edited('[model]\ndim = 2\ntitle = "cantilever"\nunits = "N, mm"\n', "")
    error(tmp_path, text, "model", "missing required table [model]", "dim = 2 or 3")


def test_missing_shape_dimension(tmp_path):
    text = edited("A = 100.0\nIz = 1000.0", 'shape = "rectangle"\nb = 10.0')
    error(tmp_path, text, "sections[0].h", "missing required key 'h'", "b, h",
          line=line_of(text, "[[sections]]"))


def test_no_steps(tmp_path):
    text = edited('[[steps]]\nname = "load"\ntype = "static"\n', "")
    error(tmp_path, text, "steps", "no [[steps]]")


# --- references -----------------------------------------------------------------------------------

def test_reference_to_a_missing_node_id(tmp_path):
    text = edited("connectivity = [[1, 2]]", "connectivity = [[1, 3]]")
    error(tmp_path, text, "elements[0].connectivity[0]", "unknown node 3",
          "the node ids are 1 to 2", line=line_of(text, "connectivity"))


def test_support_on_a_missing_node_id(tmp_path):
    text = edited("nodes = 1", "nodes = 7")
    error(tmp_path, text, "supports[0].nodes", "unknown node 7", line=line_of(text, "nodes = 7"))


def test_reference_to_a_missing_node_set(tmp_path):
    text = edited('nodes = "tip"', 'nodes = "tipp"')
    error(tmp_path, text, "loads[0].nodes", "unknown node set 'tipp'", "did you mean 'tip'?",
          "known: beam, tip", line=line_of(text, '"tipp"'))


def test_reference_to_a_missing_material(tmp_path):
    text = edited('material = "steel"', 'material = "steal"')
    error(tmp_path, text, "elements[0].material", "unknown material 'steal'",
          "did you mean 'steel'?", line=line_of(text, '"steal"'))


def test_reference_to_a_missing_section(tmp_path):
    text = edited('section = "s"', 'section = "IPE200"')
    error(tmp_path, text, "elements[0].section", "unknown section 'IPE200'", "known: s",
          line=line_of(text, '"IPE200"'))


def test_reference_to_a_missing_load(tmp_path):
    text = edited('type = "static"', 'type = "static"\nloads = ["P", "Q"]')
    error(tmp_path, text, "steps[0].loads", "unknown load 'Q'", "known: P",
          line=line_of(text, "loads = ["))


def test_reference_to_a_missing_function(tmp_path):
    text = edited("force = [0, -10.0]", 'force = [0, -10.0]\nfunction = "ramp"')
    error(tmp_path, text, "loads[0].function", "unknown function 'ramp'", "none defined",
          line=line_of(text, 'function = "ramp"'))


# --- geometry and topology ------------------------------------------------------------------------

def test_element_with_the_same_node_twice(tmp_path):
    text = edited("connectivity = [[1, 2]]", "connectivity = [[1, 2], [2, 2]]")
    error(tmp_path, text, "elements[0].connectivity[1]", "expected two different nodes",
          "got node 2 twice", line=line_of(text, "connectivity"))


def test_element_between_coincident_nodes(tmp_path):
    text = edited("coordinates = [[0, 0], [1000, 0]]", "coordinates = [[0, 0], [1000, 0], [0, 0]]")
    text = edited("connectivity = [[1, 2]]", "connectivity = [[1, 2], [3, 1]]", text)
    error(tmp_path, text, "elements[0].connectivity[1]", "expected nodes at different positions",
          "got nodes 3 and 1", "zero length", line=line_of(text, "connectivity"))


def test_wrong_number_of_coordinates(tmp_path):
    text = edited("coordinates = [[0, 0], [1000, 0]]", "coordinates = [[0, 0], [1000, 0, 0]]")
    error(tmp_path, text, "nodes.coordinates[1]", "expected 2 coordinates (model.dim = 2)",
          "got 3", line=line_of(text, "coordinates"))


def test_force_with_wrong_number_of_components(tmp_path):
    text = edited("force = [0, -10.0]", "force = [0, -10.0, 0]")
    error(tmp_path, text, "loads[0].force", "expected 2 components", "got 3",
          line=line_of(text, "force ="))


def test_dof_name_not_in_the_model(tmp_path):
    text = edited('fixed = ["all"]', 'fixed = ["ux", "uy", "rz", "uz"]')
    error(tmp_path, text, "supports[0].fixed", "expected one of ux, uy, rz", "got 'uz'",
          line=line_of(text, "fixed ="))


def test_moment_on_a_node_only_trusses_connect_to(tmp_path):
    text = edited('type = "beam"', 'type = "truss"')
    text = edited("[[supports]]\nnodes = 1\nfixed = [\"all\"]",
                  "[[supports]]\nnodes = 1\nfixed = [\"all\"]\n\n[[supports]]\nnodes = 2\n"
                  "fixed = [\"uy\"]", text)
    text = edited("force = [0, -10.0]", "moment = 5.0", text)
    error(tmp_path, text, "loads[0].moment", "needs rotational DOFs", "node 2",
          "only trusses connect to it", line=line_of(text, "moment = 5.0"))


def test_load_on_a_node_no_element_connects_to(tmp_path):
    text = edited("coordinates = [[0, 0], [1000, 0]]", "coordinates = [[0, 0], [1000, 0], [5, 5]]")
    text = edited('nodes = "tip"', "nodes = 3", text)
    error(tmp_path, text, "loads[0].nodes", "got node 3, which no element connects to",
          line=line_of(text, "nodes = 3"))


def test_prescribed_rotation_on_a_truss_node(tmp_path):
    text = edited('type = "beam"', 'type = "truss"')
    text = edited("[[steps]]", "[[prescribed]]\nname = \"twist\"\nnodes = 2\ndof = \"rz\"\n"
                  "value = 0.1\n\n[[steps]]", text)
    error(tmp_path, text, "prescribed[0].dof", "node 2 has no DOF rz",
          line=line_of(text, 'dof = "rz"'))


# --- steps ----------------------------------------------------------------------------------------

def test_step_key_not_used_by_a_linear_static_step(tmp_path):
    text = edited('type = "static"', 'type = "static"\narc_length = 0.1')
    error(tmp_path, text, "steps[0].arc_length", "not used by a linear static step",
          "nonlinear = true", line=line_of(text, "arc_length"))


def test_step_key_not_used_by_load_control(tmp_path):
    text = edited('type = "static"', 'type = "static"\nnonlinear = true\ntarget = 3.0')
    error(tmp_path, text, "steps[0].target", "not used by a static step with control = \"load\"",
          line=line_of(text, "target ="))


def test_interior_modes_belong_to_buckling_steps_and_are_booleans(tmp_path):
    text = edited('type = "static"', 'type = "static"\ninterior_modes = false')
    error(tmp_path, text, "steps[0].interior_modes", "not used by a linear static step",
          line=line_of(text, "interior_modes"))
    text = edited('type = "static"', 'type = "buckling"\ninterior_modes = "no"')
    error(tmp_path, text, "steps[0].interior_modes", "expected true or false, got a string",
          line=line_of(text, "interior_modes"))


def test_step_key_not_used_by_a_buckling_step(tmp_path):
    text = edited('type = "static"', 'type = "buckling"\nincrements = 5')
    error(tmp_path, text, "steps[0].increments", "not used by a buckling step",
          line=line_of(text, "increments"))


def test_displacement_control_on_a_missing_dof(tmp_path):
    text = edited('type = "beam"', 'type = "truss"')
    text = edited('type = "static"', 'type = "static"\nnonlinear = true\ncontrol = "displacement"'
                  '\nnode = 2\ndof = "rz"\ntarget = 1.0', text)
    error(tmp_path, text, "steps[0].dof", "node 2 has no DOF rz", line=line_of(text, 'dof = "rz"'))


# --- dynamic steps -------------------------------------------------------------------------------

def test_dynamic_step_needs_a_time_step(tmp_path):
    text = edited('type = "static"', 'type = "dynamic"\nduration = 1.0')
    error(tmp_path, text, "steps[0].time_step", "missing", "time_step and duration")


def test_time_step_longer_than_the_step(tmp_path):
    text = edited('type = "static"', 'type = "dynamic"\ntime_step = 2.0\nduration = 1.0')
    error(tmp_path, text, "steps[0].time_step", "exceeds the duration",
          line=line_of(text, "time_step"))


def test_rho_inf_with_another_integrator(tmp_path):
    text = edited('type = "static"', 'type = "dynamic"\ntime_step = 0.1\nduration = 1.0\n'
                  'rho_inf = 0.5')
    error(tmp_path, text, "steps[0].rho_inf", "generalized_alpha", line=line_of(text, "rho_inf"))


def test_unknown_integrator_suggests_one(tmp_path):
    text = edited('type = "static"', 'type = "dynamic"\ntime_step = 0.1\nduration = 1.0\n'
                  'integrator = "trapezoid"')
    error(tmp_path, text, "steps[0].integrator", "did you mean 'trapezoidal'",
          line=line_of(text, "integrator"))


def test_unknown_velocity_field(tmp_path):
    text = edited('type = "static"', 'type = "dynamic"\ntime_step = 0.1\nduration = 1.0\n'
                  'velocities = ["spin"]')
    error(tmp_path, text, "steps[0].velocities", "unknown velocity field 'spin'")


def test_spring_on_a_rotation_in_3d_is_refused(tmp_path):
    deck3d = (CANTILEVER.replace("dim = 2", "dim = 3")
              .replace("coordinates = [[0, 0], [1000, 0]]",
                       "coordinates = [[0, 0, 0], [1000, 0, 0]]")
              .replace("Iz = 1000.0", "Iz = 1000.0\nIy = 1000.0\nJ = 500.0")
              .replace("force = [0, -10.0]", "force = [0, -10.0, 0]"))
    text = edited("[[supports]]", '[[springs]]\nname = "k"\nnodes = 2\ndof = "rz"\n'
                  'stiffness = 10.0\n\n[[supports]]', deck3d)
    error(tmp_path, text, "springs[0].dof", "acts on a displacement",
          line=line_of(text, 'dof = "rz"'))


def test_removing_a_load_no_step_applied(tmp_path):
    text = edited('type = "static"', 'type = "static"\nloads = []\nremove = ["P"]')
    error(tmp_path, text, "steps[0].remove", "not applied by an earlier step")


# --- names ----------------------------------------------------------------------------------------

def test_duplicate_material_name(tmp_path):
    text = edited("[[sections]]", '[[materials]]\nname = "steel"\nE = 70000.0\nnu = 0.33\n\n'
                  "[[sections]]")
    error(tmp_path, text, "materials[1].name", "duplicate material name 'steel'",
          "first defined at materials[0]", line=line_of(text, 'name = "steel"', nth=2))


def test_duplicate_step_name(tmp_path):
    text = CANTILEVER + '\n[[steps]]\nname = "load"\ntype = "static"\n'
    error(tmp_path, text, "steps[1].name", "duplicate step name 'load'",
          line=line_of(text, 'name = "load"', nth=2))


def test_duplicate_node_id(tmp_path):
    text = edited("coordinates = [[0, 0], [1000, 0]]",
                  "coordinates = [[0, 0], [1000, 0]]\nids = [1, 1]")
    error(tmp_path, text, "nodes.ids", "duplicate node id 1", line=line_of(text, "ids ="))


# --- the model as a whole -------------------------------------------------------------------------

def test_mechanism_names_the_unrestrained_node_and_dof(tmp_path):
    msg = error(tmp_path, PORTAL_ON_ROLLERS, "the model is a mechanism", "ux", "unrestrained")
    assert any(f"node {n} ux" in msg for n in (1, 2, 3, 4)), msg


def test_mechanism_with_mumps_null_pivot_detection_from_the_command_line(tmp_path):
    from fem import linalg

    if "mumps" not in linalg.external_packages():
        pytest.skip("the null-pivot option is MUMPS's")
    msg = error(tmp_path, PORTAL_ON_ROLLERS, "the model is a mechanism", "ux", "unrestrained",
                extra=("-slide_mat_mumps_icntl_24", "1"))
    assert any(f"node {n} ux" in msg for n in (1, 2, 3, 4)), msg


def test_mechanism_in_a_nonlinear_step(tmp_path):
    text = edited('type = "static"', 'type = "static"\nnonlinear = true\nincrements = 2',
                  PORTAL_ON_ROLLERS)
    msg = error(tmp_path, text, "the model is a mechanism", "ux", "unrestrained")
    assert any(f"node {n} ux" in msg for n in (1, 2, 3, 4)), msg


def test_portal_with_a_horizontal_support_runs(tmp_path):
    text = edited('nodes = [1, 4]\nfixed = ["uy"]', 'nodes = [1, 4]\nfixed = ["uy"]\n\n'
                  '[[supports]]\nnodes = 1\nfixed = ["ux"]', PORTAL_ON_ROLLERS)
    p = run_cli(tmp_path, text)
    assert p.returncode == 0, p.stderr


# --- files ----------------------------------------------------------------------------------------

def test_unreadable_deck_path(tmp_path):
    p = subprocess.run([sys.executable, "-m", "fem.cli", "run", "missing.toml", "-o", "out.h5"],
                       cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert p.returncode == 2
    assert "Traceback" not in p.stderr
    assert p.stderr.strip() == ("fem: error: missing.toml: cannot read the deck 'missing.toml': "
                                "No such file or directory")


def test_deck_path_is_a_directory(tmp_path):
    (tmp_path / "cases").mkdir()
    p = subprocess.run([sys.executable, "-m", "fem.cli", "run", "cases"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert "cannot read the deck 'cases'" in p.stderr


def test_deck_that_is_not_utf8(tmp_path):
    path = tmp_path / "deck.toml"
    path.write_bytes(CANTILEVER.replace("cantilever", "cantil\xe9ver").encode("latin-1"))
    p = subprocess.run([sys.executable, "-m", "fem.cli", "run", "deck.toml"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert "expected UTF-8 text, got the byte 0xe9" in p.stderr
    assert f"(line {line_of(CANTILEVER, 'cantilever')})" in p.stderr


def test_results_file_that_cannot_be_created(tmp_path):
    (tmp_path / "deck.toml").write_text(CANTILEVER)
    (tmp_path / "blocker").write_text("a file, not a folder")
    p = subprocess.run([sys.executable, "-m", "fem.cli", "run", "deck.toml", "-o",
                        "blocker/out.h5"], cwd=tmp_path, capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert "cannot create the results file" in p.stderr and "blocker" in p.stderr


def test_a_joint_naming_the_ground_point_of_another_joint(tmp_path):
    """Found by the fuzzer: the ids after the deck's largest are the ground points that joints to
    the ground make; naming one in a later joint was an internal error (an IndexError)."""
    text = (Path(__file__).parents[1] / "cases" / "two_link_hanging" / "deck.toml").read_text()
    assert "pairs = [[1, 2]]" in text
    text = text.replace("pairs = [[1, 2]]", "pairs = [[3, 2]]", 1)
    error(tmp_path, text, "joints[1].pairs", "no such node in [nodes]: 3",
          line=line_of(text, "pairs = [[3, 2]]"))


def test_a_required_step_key_left_out(tmp_path):
    """Found by the fuzzer: a stability sweep without `parameter` ran and failed writing its
    results (an internal error); every required key of a step is now checked."""
    text = (Path(__file__).parents[1] / "cases" / "jeffcott_rotor" / "deck.toml").read_text()
    assert 'parameter = "spin"\n' in text
    text = text.replace('parameter = "spin"\n', "", 1)
    error(tmp_path, text, "steps[0].parameter", "required by a stability_sweep step")
