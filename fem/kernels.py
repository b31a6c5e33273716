"""Compiled kernels (numba): the loader, the cache, and the registry of compiled pairs.

A kernel module (``fem/**/<name>_kernel.py``: ``beam3d_kernel``, ``shell_kernel``, ...) holds
``njit`` functions compiled once and cached by numba in a folder keyed by every kernel's source
and the scalar rules they compile (``fem/**/<name>_scalar.py``, plain Python the numpy path
calls too; :func:`cache_dir`); its dispatch module (``beam3d_jit``, ``shell_jit``, ...) prepares the
arguments and loads it through a :class:`Kernel` at first use. Importing the kernel module is what
imports numba (about 0.2-0.6 s with the cached machine code, 17-45 s to compile), so it happens
only when a group large enough to gain from it is evaluated (``tests/test_startup.py``): from
:data:`MIN_ELEMENTS` elements, where numba is there and ``FEM_JIT`` is not ``0``
(:func:`compiled`).

A *compiled pair* (:class:`Pair`) is one method in two implementations with one signature: the
vectorized numpy code, which is the reference and the fallback, and the compiled kernel, which
writes the same mathematics element by element. Each dispatch module registers its pairs in
:data:`PAIRS` (one :func:`register` line each), with the method that dispatches between them and
how to build inputs of groups above the dispatch threshold; ``tests/test_kernel_pairs.py`` holds
every registered pair to 1e-13 on those inputs, checks the dispatch, and runs the element
invariants of ``tests/test_elements.py`` both ways.

Base layer (DESIGN.md): numpy, numba (lazily) and the standard library only.
"""

from __future__ import annotations

import glob
import hashlib
import importlib
import os
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

#: Groups with fewer elements take the numpy path (compiling or loading a kernel costs more).
#: The dispatch reads it at each call (:func:`compiled`), so a test may lower it.
MIN_ELEMENTS = 64

#: Every kernel module of the package (elements, assembly, bent corrections, compiled steps).
KERNELS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "**", "*_kernel.py")
#: The scalar rules the Python path calls and the kernels compile as they stand
#: (``fem/**/<name>_scalar.py``: Newton's test, floors and references); part of the cache key.
SCALAR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "**", "*_scalar.py")


def sources() -> list[str]:
    """Every module numba compiles from: the kernel modules and the scalar rules they call."""
    return glob.glob(KERNELS, recursive=True) + glob.glob(SCALAR, recursive=True)


def cache_dir(files: list[str] | None = None) -> str:
    """The folder numba caches the kernels in: named by a hash of every kernel module's source.

    numba checks a cached function against its own file only, so a kernel that calls a helper of
    another kernel module kept loading stale machine code after the helper changed (the shell
    kernel after the beam kernel's ``eta_mu`` changed signature: a clean clone failed where the
    developer's cache passed). Keyed by all the kernels' sources (:func:`sources`: the scalar
    rules they compile too), any change compiles them all afresh. Under ``$XDG_CACHE_HOME``
    (default ``~/.cache``) ``/fem/numba/<hash>``.
    """
    digest = hashlib.sha256()
    for path in sorted(files if files is not None else sources()):
        with open(path, "rb") as fh:
            digest.update(os.path.basename(path).encode() + b"\0" + fh.read())
    root = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(root, "fem", "numba", digest.hexdigest()[:16])


def configure_cache() -> None:
    """Point numba's cache at :func:`cache_dir`; a kernel module calls it before its ``njit``s.

    A ``NUMBA_CACHE_DIR`` of the user's wins; a folder that cannot be made leaves numba's
    default (beside the modules).
    """
    if os.environ.get("NUMBA_CACHE_DIR"):
        return
    from numba.core import config

    folder = cache_dir()
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError:
        return
    if os.access(folder, os.W_OK):
        config.CACHE_DIR = folder


class Kernel:
    """Function ``name`` (default ``kernel``) of module ``module``, imported at first use."""

    def __init__(self, module: str, name: str = "kernel"):
        self.module, self.name = module, name
        self.function = None            # None: not tried yet; False: numba is unavailable

    def enabled(self) -> bool:
        """Whether the kernel can be used (numba importable, ``FEM_JIT`` not ``0``)."""
        if os.environ.get("FEM_JIT", "1") == "0":
            return False
        if self.function is None:
            try:
                self.function = getattr(importlib.import_module(self.module), self.name)
            except ImportError:
                self.function = False
        return self.function is not False


def compiled(kernel: Kernel, n: int, least: int | None = None) -> bool:
    """The dispatch rule: whether a batch of ``n`` elements takes ``kernel``.

    From ``least`` elements (default :data:`MIN_ELEMENTS`, read now), where the kernel can be
    used (:meth:`Kernel.enabled`: never with ``FEM_JIT=0``). The size is tested first, so a
    small group never imports numba.
    """
    return n >= (MIN_ELEMENTS if least is None else least) and kernel.enabled()


class Family:
    """The two kernels of an element family: its evaluation and its energy-conserving force.

    Parameters
    ----------
    kernel, ec_kernel : the :class:`Kernel` of each
    min_conserving : the dispatch threshold of ``ec_kernel`` (``kernel``'s is
        :data:`MIN_ELEMENTS`)
    """

    def __init__(self, kernel: Kernel, ec_kernel: Kernel, min_conserving: int):
        self.kernel, self.ec_kernel, self.min_conserving = kernel, ec_kernel, min_conserving

    def enabled(self, conserving: bool = False) -> bool:
        """Whether the compiled kernel can be used (numba importable, ``FEM_JIT`` not ``0``).

        ``conserving``: the energy-conserving step's kernel instead.
        """
        return (self.ec_kernel if conserving else self.kernel).enabled()

    def compiled(self, n: int, conserving: bool = False) -> bool:
        """Whether a group of ``n`` elements takes the kernel (:func:`compiled`).

        From :data:`MIN_ELEMENTS` (``conserving``: ``min_conserving``) elements.
        """
        return compiled(self.ec_kernel if conserving else self.kernel, n,
                        self.min_conserving if conserving else None)


def writable(a):
    """``a`` as a C-contiguous, writable float array (what the kernels are compiled for).

    numba compiles another specialization (a minute and more) for a read-only array, a
    broadcast view for instance.
    """
    a = np.ascontiguousarray(a, dtype=float)
    return a if a.flags.writeable else a.copy()


@dataclass(frozen=True)
class Pair:
    """One method in two implementations with one signature: numpy and compiled.

    Attributes
    ----------
    name : ``"<family>.<method>"``, e.g. ``"beam3d.evaluate"``
    kernel : the :class:`Kernel` the compiled side calls (its ``module`` is the kernel module);
        ``kernel.enabled()`` says whether that side can run
    reference : ``reference(*args)``, the vectorized numpy code: the reference and the fallback
    compiled : ``compiled(*args)``, the same results from the kernel (array by array, equal to
        round-off; ``None`` where the reference gives ``None``)
    samples : ``samples(rng) -> [args, ...]``: inputs of groups above the dispatch threshold
        (:data:`MIN_ELEMENTS`) that reach the kernel's branches (large rotations, Cayley
        parameters, ...), for ``tests/test_kernel_pairs.py``
    dispatch : ``dispatch(*args)``, the method the rest of fem calls, which takes ``compiled``
        for inputs above the threshold and ``reference`` with ``FEM_JIT=0``; ``None`` for a pair
        whose dispatch has another threshold (the assembly's entries, ``MIN_COMPILED``)
    """

    name: str
    kernel: Kernel
    reference: Callable
    compiled: Callable
    samples: Callable[[np.random.Generator], list[tuple]]
    dispatch: Callable | None = None


def method(name: str) -> Callable:
    """``call(group, *args) = group.<name>(*args)``: a pair's side that is a method of the group.

    A dispatch module registers the pairs of a group class it cannot import (the class imports
    the dispatch module): the numpy reference and the dispatching method are named.
    """
    def call(group, *args):
        return getattr(group, name)(*args)

    call.__name__ = call.__qualname__ = name
    return call


#: The registered compiled pairs, ``{name: Pair}`` (filled by the dispatch modules on import).
PAIRS: dict[str, Pair] = {}


def register(pair: Pair) -> Pair:
    """Register ``pair`` under its name; a name is registered once."""
    if pair.name in PAIRS:
        raise ValueError(f"compiled pair '{pair.name}' is already registered")
    PAIRS[pair.name] = pair
    return pair


def register_family(family: str, kernel: Kernel, ec_kernel: Kernel, evaluate: Callable,
                    evaluate_samples: Callable, conserving: Callable,
                    conserving_samples: Callable) -> None:
    """Register an element family's pairs ``<family>.evaluate`` and ``<family>.conserving``.

    ``evaluate`` and ``conserving`` are the compiled sides; the numpy references and the
    dispatching methods are the group's ``evaluate_numpy``/``evaluate`` and
    ``conserving_numpy``/``conserving`` (:func:`method`).
    """
    register(Pair(f"{family}.evaluate", kernel, method("evaluate_numpy"), evaluate,
                  evaluate_samples, method("evaluate")))
    register(Pair(f"{family}.conserving", ec_kernel, method("conserving_numpy"), conserving,
                  conserving_samples, method("conserving")))
