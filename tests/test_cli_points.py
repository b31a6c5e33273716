"""The CLI points of issue 34: options after the subcommand, ``fem run --help``, one table of the
deck reference, the deck's JSON Schema, output names said once, channel names in the ``.mat``
file, progress of the steps without frames. One test per point, in-process (fem.cli.main).
"""

import glob
import json
import re
import tomllib
from pathlib import Path

import pytest
import scipy.io
from helpers import line_beam

from fem import cli, errors
from fem.io.deck import from_dict
from fem.progress import Progress
from fem.run import run

ROOT = Path(__file__).resolve().parents[1]


def _parse(argv):
    ours, petsc = cli._split_petsc(argv)
    return cli._parser().parse_args(ours), petsc


@pytest.mark.parametrize("argv", [
    ["run", "deck.toml", "-v", "--debug", "-tip_ksp_type", "gmres"],
    ["-v", "--debug", "run", "deck.toml", "-tip_ksp_type", "gmres"],
    ["run", "-tip_ksp_type", "gmres", "deck.toml", "--debug", "-v"],
])
def test_verbose_debug_and_petsc_options_after_the_subcommand(argv):
    args, petsc = _parse(argv)
    assert (args.command, args.deck, args.verbose, args.debug) == ("run", "deck.toml", True,
                                                                   True)
    assert petsc == ["-tip_ksp_type", "gmres"]
    for command in (["validate"], ["plot", "out.h5", "a"], ["deck-schema"], ["info"]):
        args, _ = _parse(command + ["-v", "--debug"])
        assert args.verbose and args.debug
    args, _ = _parse(["run", "deck.toml"])
    assert not args.verbose and not args.debug


def test_run_help_lists_exit_codes_files_and_options(capsys):
    with pytest.raises(SystemExit) as done:
        cli.main(["run", "--help"])
    assert done.value.code == 0
    text = capsys.readouterr().out
    codes = {c for c, _ in cli.EXIT_CODES}
    # every exit code an error class can give is listed (and 143, said beside 130)
    raised = {cls.exit_code for cls in vars(errors).values()
              if isinstance(cls, type) and issubclass(cls, errors.FemError)}
    assert raised <= codes | {1}
    section = text.split("exit codes:")[1]
    for code, what in cli.EXIT_CODES:
        assert re.search(rf"^\s+{code}\s+{re.escape(what)}$", section, re.M), code
    for name in ("out.h5", "out.xdmf", "out_<step>_modes.xdmf", "out_<step>_vibration.xdmf",
                 "out_<step>.mat", "out_<step>_campbell.png"):
        assert f"  {name}  " in text, name
    for option in ("-o OUTPUT", "--restart", "-v, --verbose", "--debug"):
        assert option in text


def test_deck_reference_of_one_table(capsys):
    assert cli.main(["deck-reference", "joints"]) == 0
    out = capsys.readouterr().out
    assert re.findall(r"^#### .*$", out, re.M) == [
        line for line in re.findall(r"^#### .*$", _full(capsys), re.M) if "[[joints]]" in line]
    assert "| `second_axis` |" in out and "| `mass` |" not in out
    assert cli.main(["deck-reference", "joint"]) == 2
    err = capsys.readouterr().err
    assert "joint: no such deck table (did you mean 'joints'?)" in err
    assert "the tables are: model, materials," in err


def _full(capsys) -> str:
    assert cli.main(["deck-reference"]) == 0
    return capsys.readouterr().out


def _decks() -> list[str]:
    return sorted(p for p in glob.glob(str(ROOT / "cases" / "*" / "*.toml"))
                  if not p.endswith("reference.toml"))


def _check(schema: dict, value, where: str = "") -> list[str]:
    """The JSON Schema keywords fem's schema uses, checked (when jsonschema is not installed)."""
    bad = []
    types = {"object": dict, "array": list, "string": str, "boolean": bool, "integer": int,
             "number": (int, float)}
    if "anyOf" in schema:
        if all(_check(s, value, where) for s in schema["anyOf"]):
            bad.append(f"{where}: none of anyOf")
        return bad
    t = schema.get("type")
    if t and (not isinstance(value, types[t]) or (t in ("integer", "number")
                                                   and isinstance(value, bool))):
        return [f"{where}: not {t}"]
    if "enum" in schema and value not in schema["enum"]:
        bad.append(f"{where}: not in enum")
    if "pattern" in schema and not re.search(schema["pattern"], value):
        bad.append(f"{where}: pattern")
    if "exclusiveMinimum" in schema and not value > schema["exclusiveMinimum"]:
        bad.append(f"{where}: <= min")
    if "minimum" in schema and not value >= schema["minimum"]:
        bad.append(f"{where}: < min")
    if "maximum" in schema and not value <= schema["maximum"]:
        bad.append(f"{where}: > max")
    if isinstance(value, dict):
        props = schema.get("properties", {})
        bad += [f"{where}: lacks {k}" for k in schema.get("required", ()) if k not in value]
        for k, v in value.items():
            if k in props:
                bad += _check(props[k], v, f"{where}.{k}")
            elif schema.get("additionalProperties") is False:
                bad.append(f"{where}.{k}: unknown")
            elif isinstance(schema.get("additionalProperties"), dict):
                bad += _check(schema["additionalProperties"], v, f"{where}.{k}")
    if isinstance(value, list) and "items" in schema:
        for i, v in enumerate(value):
            bad += _check(schema["items"], v, f"{where}[{i}]")
    return bad


def test_deck_schema_accepts_every_case_deck_and_refuses_mistakes(capsys):
    assert cli.main(["deck-schema"]) == 0
    schema = json.loads(capsys.readouterr().out)
    try:
        import jsonschema
    except ImportError:
        jsonschema = validator = None
    else:
        jsonschema.Draft202012Validator.check_schema(schema)        # a valid schema, once
        validator = jsonschema.Draft202012Validator(schema)
    decks = _decks()
    assert len(decks) > 40
    for path in decks:
        with open(path, "rb") as fh:
            deck = tomllib.load(fh)
        assert _check(schema, deck) == [], path
        if validator is not None:
            validator.validate(deck)
    with open(decks[0], "rb") as fh:
        deck = tomllib.load(fh)
    for wrong in ({"model": {"dim": 2, "titel": "x"}}, {"model": {"dim": "2"}},
                  {"steps": [{"name": "a b%", "type": "static"}]},
                  {"steps": [{"name": "s", "type": "statc"}]},
                  {"output": {"every": 0}}, {"sensor": []}):
        bad = {**deck, **wrong}
        assert _check(schema, bad), wrong
        if validator is not None:
            with pytest.raises(jsonschema.ValidationError):
                validator.validate(bad)


def _modal_deck(*names) -> dict:
    d = line_beam(2, 4, E=1.0, A=1e4, Iz=1.0)
    d["sections"][0]["mass_per_length"] = 1.0
    d["supports"] = [{"nodes": [1], "fixed": ["all"]}]
    d["steps"] = [{"name": n, "type": "modal", "modes": 2} for n in names]
    return d


def test_output_names_say_the_suffix_once(tmp_path):
    result = run(from_dict(_modal_deck("modes", "first")), str(tmp_path / "out.h5"))
    assert sorted(Path(x).name for x in result.xdmf) == [
        "out_first_modes.xdmf", "out_first_vibration.xdmf", "out_modes.xdmf",
        "out_modes_vibration.xdmf"]
    assert all(Path(x).is_file() for x in result.xdmf)
    assert not (tmp_path / "out_modes_modes.xdmf").exists()
    # two steps whose files would be the same: refused before the run, naming the step
    from fem.errors import DeckError

    with pytest.raises(DeckError) as err:
        run(from_dict(_modal_deck("x", "x_modes")), str(tmp_path / "clash.h5"))
    assert err.value.key == "steps[1].name"
    assert "clash_x_modes.xdmf, which step 'x' writes too" in str(err.value)
    assert not (tmp_path / "clash.h5").exists()


def test_state_space_file_names_its_channels(tmp_path):
    from test_linearize import cantilever_deck

    result = run(from_dict(cantilever_deck()), str(tmp_path / "out.h5"))
    mat = scipy.io.loadmat(result.matlab[0])
    # cell arrays (column) of char, as MATLAB's ss(..., 'InputName', InputName) takes them
    assert mat["InputName"].dtype == object and mat["InputName"].shape == (1, 1)
    assert mat["OutputName"].shape == (2, 1)
    names = [str(c[0]) for c in mat["OutputName"][:, 0]]
    assert names == ["2 uy displacement", "2 uy velocity"]
    assert str(mat["InputName"][0, 0][0]) == "2 uy force"
    assert mat["B"].shape[1] == 1 and mat["C"].shape[0] == len(names)


class Recorder(Progress):
    def __init__(self):
        self.calls = []

    def begin(self, step, kind, span, clock):
        self.calls.append(("begin", step, kind, span))

    def update(self, value, iterations=None):
        self.calls.append(("update", value))

    def end(self):
        self.calls.append(("end",))


def test_modal_and_linearize_steps_show_progress(tmp_path):
    """Steps without frames begin and end on the progress display (a sweep's values:
    tests/test_plot.py::test_sweep_frequencies_against_the_parameter, which runs one)."""
    d = _modal_deck("modes")
    d["steps"] += [{"name": "lin", "type": "linearize", "modes": 2}]
    seen = Recorder()
    run(from_dict(d), str(tmp_path / "out.h5"), progress=seen)
    assert seen.calls == [("begin", "modes", "modal", None), ("end",),
                          ("begin", "lin", "linearize", None), ("end",)]
