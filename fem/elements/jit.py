"""Compiled element kernels (numba): loaded at first use, off with ``FEM_JIT=0`` or without numba.

A kernel module (``beam3d_kernel``, ``shell_kernel``) holds a module-level ``kernel`` function,
compiled once and cached beside the module by numba; its dispatch module (``beam3d_jit``,
``shell_jit``) prepares the arguments. Importing the kernel module is what imports numba (about
0.2-0.6 s with the cached machine code, 17-45 s to compile), so it happens only when a group
large enough to gain from it is evaluated (``tests/test_startup.py``).
"""

from __future__ import annotations

import importlib
import os

#: Groups with fewer elements take the numpy path (compiling or loading a kernel costs more).
MIN_ELEMENTS = 64


class Kernel:
    """The ``kernel`` function of module ``module``, imported when first asked for."""

    def __init__(self, module: str):
        self.module = module
        self.function = None            # None: not tried yet; False: numba is unavailable

    def enabled(self) -> bool:
        """Whether the kernel can be used (numba importable, ``FEM_JIT`` not ``0``)."""
        if os.environ.get("FEM_JIT", "1") == "0":
            return False
        if self.function is None:
            try:
                self.function = importlib.import_module(self.module).kernel
            except ImportError:
                self.function = False
        return self.function is not False
