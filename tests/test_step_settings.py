"""Each step type's settings dataclass is its deck schema: defaults, keys and reference agree."""

import dataclasses

import pytest
from helpers import line_beam

from fem.analysis import STEP_TYPES
from fem.analysis.settings import deck_fields
from fem.io.deck import from_dict
from fem.io.schema import reference_markdown


def deck_with(step: dict) -> dict:
    d = line_beam(2, 2)
    d["materials"][0]["density"] = 1.0
    d["supports"] = [{"nodes": 1, "fixed": ["all"]}]
    d["loads"] = [{"name": "P", "nodes": 2, "force": [0, -1e-3]}]
    d["steps"] = [{"name": "s", **step}]
    if step["type"] == "modify":        # two components joined at node 2: what the step needs
        d["nodes"]["coordinates"].append([2.0, 0.0])
        d["elements"].append({**d["elements"][0], "name": "beam2", "connectivity": [[2, 3]]})
    return d


MINIMAL = {"static": {"type": "static"}, "buckling": {"type": "buckling"},
           "dynamic": {"type": "dynamic", "time_step": 0.1, "duration": 0.2},
           "modal": {"type": "modal"}, "linearize": {"type": "linearize"},
           "stability_sweep": {"type": "stability_sweep", "parameter": "load",
                               "values": [0.0, 1.0]},
           # modes or cutoff: one of the two, neither has a default
           "cms_reduce": {"type": "cms_reduce", "interface": [2], "modes": 2},
           "modify": {"type": "modify", "modes": 3,
                      "components": [{"name": "a", "groups": ["beam"]},
                                     {"name": "b", "groups": ["beam2"]}]}}


@pytest.mark.parametrize("kind", sorted(STEP_TYPES))
def test_a_step_with_only_required_keys_gets_its_settings_defaults(kind):
    settings = from_dict(deck_with(MINIMAL[kind])).steps[0]["settings"]
    cls = STEP_TYPES[kind].Settings
    assert isinstance(settings, cls)
    for f in deck_fields(cls):
        if f.metadata["setting"]["required"] or f.name in MINIMAL[kind]:
            continue
        given = getattr(settings, f.name)
        assert given == f.default or (f.name == "control" and given == "load"), f.name


def test_dynamic_defaults_are_the_deck_references():
    """A dynamic step from a deck once took the static step's Newton defaults, never its own."""
    s = from_dict(deck_with(MINIMAL["dynamic"])).steps[0]["settings"]
    defaults = {f.name: f.default for f in dataclasses.fields(type(s))}
    assert (s.max_iterations, s.tolerance) == (defaults["max_iterations"],
                                               defaults["tolerance"])


def test_the_reference_lists_every_key_of_every_type_with_its_default():
    text = reference_markdown()
    for kind, step in STEP_TYPES.items():
        section = text.split(f'With `type = "{kind}"`')[1].split("With `type")[0]
        for f in deck_fields(step.Settings):
            row = next(line for line in section.splitlines() if line.startswith(f"| `{f.name}`"))
            cells = [c.strip() for c in row.split("|")]
            meta = f.metadata["setting"]
            if meta["required"]:
                assert cells[3] == "required"
            elif f.default not in (None, ()):
                shown = str(f.default).lower() if isinstance(f.default, bool) else str(f.default)
                assert cells[3] == f"`{shown}`", (kind, f.name, cells[3])
