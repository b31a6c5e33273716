"""Modules loaded at their first use: SciPy for the runs that need it only (issue 32).

``sp = lazy.module("scipy.sparse")`` at the top of a module gives a stand-in at once, which
imports the module at the first attribute access (``sp.csr_matrix``) and keeps each attribute
it has handed out. Importing SciPy's sparse package took 0.1 to 0.3 s of a one-element run that
never builds a sparse matrix (it loads ``scipy.sparse.csgraph`` and ``scipy.sparse.linalg``,
and with them ``scipy.linalg``). Nothing is registered in ``sys.modules``: an ordinary
``import`` elsewhere imports the module as always. A module already imported is returned as it
is.
"""

from __future__ import annotations

import importlib
import sys
import types


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
