"""Compiled element kernels (numba): loaded at first use, off with ``FEM_JIT=0`` or without numba.

A kernel module (``beam3d_kernel``, ``shell_kernel``) holds a module-level ``kernel`` function,
compiled once and cached by numba in a folder keyed by every kernel's source
(:func:`cache_dir`); its dispatch module (``beam3d_jit``, ``shell_jit``) prepares the arguments.
Importing the kernel module is what imports numba (about 0.2-0.6 s with the cached machine code,
17-45 s to compile), so it happens only when a group large enough to gain from it is evaluated
(``tests/test_startup.py``).
"""

from __future__ import annotations

import glob
import hashlib
import importlib
import os

import numpy as np

#: Groups with fewer elements take the numpy path (compiling or loading a kernel costs more).
MIN_ELEMENTS = 64

#: Every kernel module of the package (elements, assembly, bent corrections).
KERNELS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "**", "*_kernel.py")


def cache_dir(sources: list[str] | None = None) -> str:
    """The folder numba caches the kernels in: named by a hash of every kernel module's source.

    numba checks a cached function against its own file only, so a kernel that calls a helper of
    another kernel module kept loading stale machine code after the helper changed (the shell
    kernel after the beam kernel's ``eta_mu`` changed signature: a clean clone failed where the
    developer's cache passed). Keyed by all the kernels' sources, any change compiles them all
    afresh. Under ``$XDG_CACHE_HOME`` (default ``~/.cache``) ``/fem/numba/<hash>``.
    """
    digest = hashlib.sha256()
    for path in sorted(sources if sources is not None else glob.glob(KERNELS, recursive=True)):
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


def writable(a):
    """``a`` as a C-contiguous, writable float array (what the kernels are compiled for).

    numba compiles another specialization (a minute and more) for a read-only array, a
    broadcast view for instance.
    """
    a = np.ascontiguousarray(a, dtype=float)
    return a if a.flags.writeable else a.copy()
