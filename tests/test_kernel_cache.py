"""numba's cache of the compiled kernels is keyed by every kernel module's source.

numba checks a cached function against its own file only: the shell kernel, importing helpers of
the beam kernel, kept loading stale machine code after those helpers changed (fem.kernels).
"""

import glob
import os

import pytest

from fem import kernels


def write(folder, name: str, text: str) -> str:
    path = os.path.join(folder, name)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)
    return path


def test_the_folder_changes_with_any_kernel_source(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    a = write(tmp_path, "a_kernel.py", "def f(): return 1\n")
    b = write(tmp_path, "b_kernel.py", "def g(): return 2\n")
    first = kernels.cache_dir([a, b])
    assert first == kernels.cache_dir([b, a])                    # order does not matter
    assert first.startswith(str(tmp_path / "cache" / "fem" / "numba"))
    write(tmp_path, "b_kernel.py", "def g(): return 3\n")     # a helper of another module
    assert kernels.cache_dir([a, b]) != first
    write(tmp_path, "b_kernel.py", "def g(): return 2\n")
    assert kernels.cache_dir([a, b]) == first


def test_every_kernel_module_is_in_the_key():
    names = sorted(os.path.basename(p) for p in glob.glob(kernels.KERNELS, recursive=True))
    assert names == ["assembly_kernel.py", "banded_kernel.py", "beam2d_ec_kernel.py",
                     "beam2d_kernel.py", "beam3d_ec_kernel.py", "beam3d_kernel.py",
                     "bent_kernel.py", "newton_kernel.py", "planar_alpha_kernel.py",
                     "planar_inertia_kernel.py", "planar_joint_kernel.py", "planar_kernel.py",
                     "planar_newton_kernel.py", "planar_run_kernel.py", "planar_static_kernel.py",
                     "shell_ec_kernel.py", "shell_kernel.py", "spatial_static_kernel.py"]
    # the scalar rules the kernels compile as they stand: a change to them recompiles too
    assert sorted(os.path.basename(p) for p in kernels.sources()) == sorted(
        names + ["newton_scalar.py"])


@pytest.mark.skipif(bool(os.environ.get("NUMBA_CACHE_DIR")), reason="NUMBA_CACHE_DIR is set")
def test_the_kernels_cache_in_the_keyed_folder():
    pytest.importorskip("numba")
    from fem.analysis import planar_static_kernel, spatial_static_kernel
    from fem.elements.beam import (
        beam2d_ec_kernel,
        beam2d_kernel,
        beam3d_ec_kernel,
        beam3d_kernel,
    )
    from fem.elements.shell import shell_ec_kernel, shell_kernel
    from fem.integrators import (
        planar_alpha_kernel,
        planar_inertia_kernel,
        planar_joint_kernel,
        planar_kernel,
        planar_newton_kernel,
        planar_run_kernel,
    )
    from fem.solvers import banded_kernel, newton_kernel

    # the energy-conserving beam kernels inline helpers of beam3d_kernel and shell_ec_kernel, the
    # planar steps the 2D beams' chunks, the banded LU and Newton's test: a change to those must
    # recompile them
    for module in (beam3d_kernel, shell_kernel, shell_ec_kernel, beam2d_ec_kernel,
                   beam3d_ec_kernel):
        for function in (module.kernel, getattr(module, "chunk", module.kernel)):
            assert function._cache._cache_path.startswith(kernels.cache_dir())
    for function in (planar_kernel.nodes, planar_newton_kernel.step, banded_kernel.factor,
                     newton_kernel.test, beam2d_kernel.chunk, planar_static_kernel.increment,
                     planar_alpha_kernel.step, planar_joint_kernel.revolute,
                     spatial_static_kernel.increment, planar_inertia_kernel.consistent,
                     planar_run_kernel.run, planar_alpha_kernel.run):
        assert function._cache._cache_path.startswith(kernels.cache_dir())


def test_a_numba_cache_dir_of_the_user_wins(monkeypatch):
    config = pytest.importorskip("numba.core.config")
    before = config.CACHE_DIR
    monkeypatch.setenv("NUMBA_CACHE_DIR", "/somewhere/else")
    try:
        config.CACHE_DIR = "unchanged"
        kernels.configure_cache()
        assert config.CACHE_DIR == "unchanged"
    finally:
        config.CACHE_DIR = before
