"""The base deck of the reliability repro decks (``shared/repro/reliability/_base.toml``).

Each repro deck is one change to it; the tests that check the repro classes edit the same text,
so that they do not depend on files outside the repository.
"""

BASE = """\
[model]
dim = 2

[[materials]]
name = "steel"
E = 210000.0
nu = 0.3

[[sections]]
name = "s"
A = 100.0
Iz = 1000.0

[nodes]
coordinates = [[0, 0], [1000, 0]]

[[elements]]
name = "beam"
type = "beam"
material = "steel"
section = "s"
connectivity = [[1, 2]]

[[supports]]
nodes = 1
fixed = ["all"]

[[loads]]
name = "P"
nodes = 2
force = [0, -1.0]

[[steps]]
name = "load"
type = "static"
"""
