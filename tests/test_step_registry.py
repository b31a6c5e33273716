"""The step registry owns its decks (issue 28, item 4): the runner, the deck builder and the
step's loads ask the type registered in ``fem.analysis.STEP_TYPES``, never a type's name.

A branch on a type name (``if spec["type"] == "dynamic"``, ``kind[0] in ("modal", ...)``,
``isinstance(step, BucklingStep)``) in :mod:`fem.run`, :mod:`fem.io.build_steps` or
:mod:`fem.loads` (whose loads ramp: the type's ``LOADS_RAMP``) means a new step type needs edits
there; the AST walk below finds any string equal to a registered type name,
any registered step class named, and any import of a step module.
"""

import ast
from pathlib import Path

import pytest

from fem.analysis import STEP_SETTINGS, STEP_TYPES
from fem.analysis.base import StepBase
from fem.run import BESIDE

ROOT = Path(__file__).resolve().parents[1]
USERS = ("fem/run.py", "fem/io/build_steps.py", "fem/loads.py")


def _type_names_used(path: Path) -> list[str]:
    """``line: what`` for each mention of a step type in module ``path``."""
    tree = ast.parse(path.read_text())
    classes = {cls.__name__ for cls in STEP_TYPES.values()} | {"EliminatedStep"}
    modules = {cls.__module__ for cls in STEP_TYPES.values()}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and node.value in STEP_TYPES:
            found.append(f"{node.lineno}: the type name {node.value!r}")
        elif isinstance(node, ast.Name) and node.id in classes:
            found.append(f"{node.lineno}: the step class {node.id}")
        elif isinstance(node, ast.ImportFrom) and node.module in modules:
            found.append(f"{node.lineno}: an import from {node.module}")
    return found


@pytest.mark.parametrize("module", USERS)
def test_the_runner_and_the_deck_builder_never_name_a_step_type(module):
    found = _type_names_used(ROOT / module)
    assert not found, f"{module} branches on step types instead of asking the registry: {found}"


def test_the_walk_finds_a_branch_on_a_type_name(tmp_path):
    """The check can fail: a dispatch by name, a class test and a step import are each found."""
    probe = tmp_path / "probe.py"
    probe.write_text('from fem.analysis.modal import ModalStep\n'
                     'if spec["type"] == "dynamic":\n    pass\n'
                     'ok = isinstance(step, ModalStep)\n')
    assert sorted(int(f.split(":")[0]) for f in _type_names_used(probe)) == [1, 2, 4]


@pytest.mark.parametrize("kind", sorted(STEP_TYPES))
def test_every_type_declares_the_step_protocol(kind):
    """Its schema, its own name, and files the runner knows where to put."""
    step = STEP_TYPES[kind]
    assert issubclass(step, StepBase) and step.step_type == kind
    # the deck schema takes the settings from their own registry (fem.analysis): the same class
    assert list(STEP_SETTINGS) == list(STEP_TYPES) and STEP_SETTINGS[kind] is step.Settings
    assert step.Settings.VARIANTS and set(step.Settings.REMOVES) <= set(step.Settings.VARIANTS)
    assert set(step.WRITES) <= set(BESIDE), step.WRITES
    assert step.NO_LOADS is None or not step.LOADS_STAY
    assert isinstance(step.LOADS_RAMP, bool)
