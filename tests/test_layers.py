"""The import layers of DESIGN.md hold: every import in ``fem/`` points down, and no two packages
import each other round a cycle.

The package's source is read as text (``ast``), not imported, so an import inside a function
counts as much as one at the top of a module: both run the importer's code on the imported one.
Every ``import``, ``from ... import`` and relative import is resolved to the module it loads
(``from fem.io import keys`` loads ``fem.io.keys``). The layers, bottom to top:

0 base         errors, rotations, time_functions, kernels, _petsc, mpi, interrupt
1 data         model, state, dofs, io/keys
2 physics      elements/, constraints/, inertia/, loads
3 system       assembly, assembly_kernel, system
4 numerics     linalg, solvers/
5 procedures   integrators/, cms/, analysis/
6 io           io/ (all but keys)
7 app          run, validate, report, plot, cli, console, progress, info, study/

``interrupt`` holds the signal flag that solvers and the results writer poll; it imports only
``errors`` and sits in the base layer (DESIGN.md lists it with the app, which would make every
poll an upward import). A package's ``__init__`` is in the lowest layer of its contents (``fem``
in 0, ``fem.io`` in 1), since importing any of its modules runs it first. A module missing from
the table is a failure: a new module must be placed.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "fem"

LAYER_NAMES = ["base", "data", "physics", "system", "numerics", "procedures", "io", "app"]

# module or package (every module under it) -> layer; the longest matching name wins
LAYERS = {
    "fem.errors": 0, "fem.rotations": 0, "fem.time_functions": 0, "fem.kernels": 0,
    "fem._petsc": 0, "fem.interrupt": 0, "fem.mpi": 0, "fem.lazy": 0,
    "fem.model": 1, "fem.state": 1, "fem.dofs": 1, "fem.io.keys": 1, "fem.partition": 1,
    "fem.elements": 2, "fem.constraints": 2, "fem.inertia": 2, "fem.loads": 2,
    "fem.assembly": 3, "fem.assembly_kernel": 3, "fem.system": 3, "fem.owner_computes": 3,
    "fem.linalg": 4, "fem.solvers": 4,
    "fem.integrators": 5, "fem.cms": 5, "fem.analysis": 5,
    "fem.io": 6,
    "fem.run": 7, "fem.validate": 7, "fem.cli": 7, "fem.console": 7, "fem.progress": 7,
    "fem.info": 7, "fem.report": 7, "fem.plot": 7, "fem.study": 7,
}


def modules(root: Path = ROOT) -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its ``__init__``)."""
    found = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def _placed(name: str) -> int | None:
    for n in range(name.count(".") + 1, 0, -1):
        key = ".".join(name.split(".")[:n])
        if key in LAYERS:
            return LAYERS[key]
    return None


def layer_of(name: str, mods: dict[str, Path]) -> int | None:
    """The layer of module ``name``; a package's ``__init__`` takes its lowest content's."""
    if mods[name].name == "__init__.py":
        inside = [_placed(m) for m in mods if m.startswith(name + ".")]
        inside = [layer for layer in inside if layer is not None]
        if inside:
            return min(inside)
    return _placed(name)


def _resolve(name: str, mods: dict[str, Path]) -> str | None:
    """The module of ``fem`` that ``name`` loads (a name inside a module loads the module)."""
    while name:
        if name in mods:
            return name
        name = name.rpartition(".")[0]
    return None


def imports(name: str, path: Path, mods: dict[str, Path]) -> list[tuple[str, int, str]]:
    """``(imported module, line, names)`` for every import of a ``fem`` module in ``name``'s
    source, at module level or inside a function."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = {}
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [(alias.name, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                stem = ".".join(base + ([node.module] if node.module else []))
            else:
                stem = node.module
            # ``from pkg import mod`` loads pkg.mod; ``from mod import name`` loads mod
            targets = [(f"{stem}.{alias.name}", alias.name) for alias in node.names]
        else:
            continue
        for target, what in targets:
            if target.split(".")[0] != "fem":
                continue
            hit = _resolve(target, mods)
            if hit is not None and hit != name:
                found.setdefault((hit, node.lineno), []).append(what)
    return [(hit, line, ", ".join(what)) for (hit, line), what in sorted(found.items())]


def graph(mods: dict[str, Path]) -> dict[str, list[tuple[str, int, str]]]:
    return {name: imports(name, path, mods) for name, path in mods.items()}


def upward_edges(mods: dict[str, Path]) -> list[str]:
    """Every import from a layer to a higher one, as ``importer:line -> imported``."""
    edges = []
    for name, targets in graph(mods).items():
        low = layer_of(name, mods)
        for target, line, what in targets:
            high = layer_of(target, mods)
            if low is not None and high is not None and high > low:
                edges.append(f"{name}:{line} ({LAYER_NAMES[low]}) -> {target} "
                             f"({LAYER_NAMES[high]}: {what})")
    return sorted(edges)


def unit(name: str) -> str:
    """The package a module belongs to for the cycle test: ``fem.<package>`` (``io/keys`` is
    its own, the data layer's deck leaves), or the module itself at the top level."""
    parts = name.split(".")
    if parts[:3] == ["fem", "io", "keys"]:
        return "fem.io.keys"
    return name if len(parts) <= 2 else ".".join(parts[:2])


def package_cycles(mods: dict[str, Path]) -> list[list[str]]:
    """The strongly connected sets of more than one package (Tarjan), each sorted."""
    edges = defaultdict(set)
    for name, targets in graph(mods).items():
        for target, _, _ in targets:
            if unit(name) != unit(target):
                edges[unit(name)].add(unit(target))
    nodes = sorted({unit(m) for m in mods})
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                out.append(sorted(group))

    for v in nodes:
        if v not in index:
            visit(v)
    return out


def cycle_path(group: list[str], mods: dict[str, Path]) -> str:
    """One import cycle through ``group``'s first package, each step shown by a module edge."""
    via = {}
    for name, targets in graph(mods).items():
        for target, line, _ in targets:
            a, b = unit(name), unit(target)
            if a != b and a in group and b in group:
                via.setdefault((a, b), f"{name}:{line} -> {target}")
    start = group[0]
    came = {start: None}
    frontier = [start]
    while frontier:                      # breadth first, back to the start
        nxt = []
        for a in frontier:
            for (x, b) in via:
                if x != a:
                    continue
                if b == start:
                    steps = [(a, b)]
                    while came[a] is not None:
                        steps.insert(0, (came[a], a))
                        a = came[a]
                    return "\n    ".join(via[step] for step in steps)
                if b not in came:
                    came[b] = a
                    nxt.append(b)
        frontier = nxt
    return "(no cycle through it)"


# --- the tests ----------------------------------------------------------------------------------

def test_every_module_is_placed_in_a_layer():
    mods = modules()
    unplaced = sorted(m for m in mods if layer_of(m, mods) is None)
    assert not unplaced, ("modules in no layer (place them in tests/test_layers.py's LAYERS, "
                          f"as DESIGN.md's layers do): {unplaced}")


def test_imports_point_down_the_layers():
    edges = upward_edges(modules())
    assert not edges, (f"{len(edges)} imports run up the layers of DESIGN.md:\n  "
                       + "\n  ".join(edges))


def test_no_import_cycle_between_packages():
    mods = modules()
    cycles = package_cycles(mods)
    assert not cycles, "import cycles between packages:\n" + "\n".join(
        f"  {group}:\n    {cycle_path(group, mods)}" for group in cycles)


def test_the_walk_sees_every_kind_of_import(tmp_path):
    """The walker finds module-level, function-level and relative imports and places a
    package's ``__init__`` in its lowest layer: a test of the test, on a small made-up tree."""
    pkg = tmp_path / "fem"
    (pkg / "io").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "io" / "__init__.py").write_text("")
    (pkg / "io" / "keys.py").write_text("from fem import errors\n")
    (pkg / "io" / "deck.py").write_text("from . import keys\n")
    (pkg / "errors.py").write_text("def f():\n    from fem.io.deck import x\n")
    (pkg / "model.py").write_text("import fem.io.keys\nfrom .io import deck\n")
    (pkg / "stray.py").write_text("")
    mods = modules(pkg)
    assert layer_of("fem.io", mods) == 1 and layer_of("fem.io.deck", mods) == 6
    assert layer_of("fem.stray", mods) is None
    assert upward_edges(mods) == [
        "fem.errors:2 (base) -> fem.io.deck (io: x)",
        "fem.model:2 (data) -> fem.io.deck (io: deck)",
    ]
    assert imports("fem.io.deck", pkg / "io" / "deck.py", mods) == [("fem.io.keys", 1, "keys")]
    assert package_cycles(mods) == [["fem.errors", "fem.io", "fem.io.keys"]]
    assert cycle_path(["fem.errors", "fem.io", "fem.io.keys"], mods).split("\n    ") == [
        "fem.errors:2 -> fem.io.deck", "fem.io.deck:1 -> fem.io.keys",
        "fem.io.keys:1 -> fem.errors"]
