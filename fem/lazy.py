"""Modules and registered classes loaded at their first use (issue 32).

``sp = lazy.module("scipy.sparse")`` at the top of a module gives a stand-in at once, which
imports the module at the first attribute access (``sp.csr_matrix``) and keeps each attribute
it has handed out. Importing SciPy's sparse package took 0.1 to 0.3 s of a one-element run that
never builds a sparse matrix (it loads ``scipy.sparse.csgraph`` and ``scipy.sparse.linalg``,
and with them ``scipy.linalg``). Nothing is registered in ``sys.modules``: an ordinary
``import`` elsewhere imports the module as always. A module already imported is returned as it
is.

:class:`Registry` does the same for a registry of classes (:data:`fem.analysis.STEP_TYPES`):
``{name: "module:attribute"}`` looked up by name imports that one module, so that a static run
imports neither the dynamic step nor the modal one.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
import types
from collections.abc import Iterator, Mapping


class _Deferred(types.ModuleType):
    """A stand-in for the module it is named after, imported at its first attribute access."""

    def __getattr__(self, attr: str):
        if attr.startswith("__"):            # copy, pickle, inspect ask for dunders: no import
            raise AttributeError(attr)
        value = getattr(importlib.import_module(self.__name__), attr)
        setattr(self, attr, value)           # found directly from now on
        return value


def module(name: str) -> types.ModuleType:
    """The module ``name``, or a stand-in that imports it when first used (module docstring)."""
    if name in sys.modules:
        return sys.modules[name]
    return _Deferred(name)


def attribute(path: str):
    """The object ``"package.module:name"`` names, its module imported if it was not."""
    return pkgutil.resolve_name(path)


class Registry(Mapping):
    """``{name: object}`` whose objects are ``"module:attribute"`` paths imported when looked up.

    Iterating gives the names in the order they were given and imports nothing; ``values()``
    and ``items()`` import every module (as a dict of the objects would have).
    """

    def __init__(self, paths: dict[str, str]):
        self.paths = dict(paths)

    def __getitem__(self, name: str):
        return attribute(self.paths[name])

    def __iter__(self) -> Iterator[str]:
        return iter(self.paths)

    def __len__(self) -> int:
        return len(self.paths)

    def __repr__(self) -> str:
        return f"Registry({self.paths!r})"
