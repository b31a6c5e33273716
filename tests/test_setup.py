"""The set-up script as on a fresh machine: no PETSc yet, stand-in package tools.

A machine where PETSc is installed hides set-up bugs (the script once stopped silently on a fresh
Debian, before reaching apt-get). Here the script runs with:

* PETSc's and SLEPc's install roots moved to empty folders (``FEM_PETSC_ROOT``, ``FEM_SLEPC_ROOT``);
* ``petsc4py`` and ``slepc4py`` packages that refuse to import, first on ``PYTHONPATH``, so that no
  Python on the machine "has" PETSc;
* stand-in ``apt-get`` (and ``sudo``, ``id``) first on ``PATH``, recording their arguments.

The script must reach the install with the right packages, or print the README's three routes and
exit non-zero; it must never stop silently.
"""

import os
import stat
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "setup_env.sh"
PACKAGES = {"python3-petsc4py", "python3-slepc4py", "python3-mpi4py", "python3-venv",
            "python3-dev"}
ROUTES = ("conda-forge", "FEM_PYTHON=", "FEM_PETSC_FROM_SOURCE=1")


def _tool(folder: Path, name: str, body: str) -> None:
    path = folder / name
    path.write_text("#!/usr/bin/env bash\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


@pytest.fixture
def fresh(tmp_path):
    """Environment of a fresh machine; returns (env, calls file, stand-in folder)."""
    tools = tmp_path / "bin"
    tools.mkdir()
    calls = tmp_path / "calls.txt"
    shadow = tmp_path / "shadow"
    for module in ("petsc4py", "slepc4py"):
        (shadow / module).mkdir(parents=True)
        (shadow / module / "__init__.py").write_text(
            "raise ImportError('not installed on this (simulated fresh) machine')\n")
    env = {k: v for k, v in os.environ.items()
           if k not in ("PETSC_DIR", "SLEPC_DIR", "FEM_PYTHON", "FEM_PETSC_FROM_SOURCE",
                        "VIRTUAL_ENV", "PYTHONHOME")}
    env.update(PATH=f"{tools}:{env['PATH']}", PYTHONPATH=str(shadow),
               FEM_PETSC_ROOT=str(tmp_path / "no-petscdir"),
               FEM_SLEPC_ROOT=str(tmp_path / "no-slepcdir"), FEM_SETUP_CALLS=str(calls))
    return env, calls, tools


def _run(env, tmp_path):
    return subprocess.run(["bash", str(SCRIPT), str(tmp_path / "venv")], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=120)


def _apt_calls(calls: Path) -> list[list[str]]:
    if not calls.exists():
        return []
    return [line.split()[1:] for line in calls.read_text().splitlines()
            if line.startswith("apt-get ")]


def _says_routes(stderr: str) -> None:
    for route in ROUTES:
        assert route in stderr, f"the README's route {route!r} is not printed:\n{stderr}"


def test_fresh_machine_reaches_apt_get_with_the_packages(fresh, tmp_path):
    env, calls, tools = fresh
    # apt-get "succeeds" but installs nothing: the script must notice and say what to do
    _tool(tools, "apt-get", 'echo "apt-get $*" >> "$FEM_SETUP_CALLS"\nexit 0\n')
    proc = _run(env, tmp_path)
    installs = [c for c in _apt_calls(calls) if "install" in c]
    assert installs, f"the script never reached apt-get:\n{proc.stdout}\n{proc.stderr}"
    assert PACKAGES <= set(installs[0]), installs[0]
    assert "-y" in installs[0]
    assert proc.returncode != 0
    assert "still no Python" in proc.stderr
    _says_routes(proc.stderr)
    assert not (tmp_path / "venv").exists(), "no virtual environment without PETSc"


def test_failing_apt_get_is_reported_with_its_reason_and_the_routes(fresh, tmp_path):
    env, calls, tools = fresh
    _tool(tools, "apt-get", 'echo "apt-get $*" >> "$FEM_SETUP_CALLS"\n'
          'echo "E: Unable to locate package python3-petsc4py" >&2\nexit 100\n')
    proc = _run(env, tmp_path)
    verbs = [c[0] for c in _apt_calls(calls)]
    assert verbs == ["install", "update"], verbs      # tries again after updating the lists
    assert proc.returncode != 0
    assert "apt-get could not install" in proc.stderr
    assert "Unable to locate package python3-petsc4py" in proc.stderr   # apt-get's own reason
    _says_routes(proc.stderr)


def test_user_without_root_or_working_sudo_gets_the_routes(fresh, tmp_path):
    env, calls, tools = fresh
    _tool(tools, "apt-get", 'echo "apt-get $*" >> "$FEM_SETUP_CALLS"\nexit 0\n')
    _tool(tools, "id", 'case "$1" in -u) echo 1000;; -un) echo dev;; *) echo "uid=1000(dev)";;'
          ' esac\n')
    _tool(tools, "sudo", 'echo "sudo $*" >> "$FEM_SETUP_CALLS"\n'
          'echo "sudo: a password is required" >&2\nexit 1\n')
    proc = _run(env, tmp_path)
    assert proc.returncode != 0
    assert _apt_calls(calls) == []                   # sudo refused: apt-get never ran
    assert "sudo: a password is required" in proc.stderr
    _says_routes(proc.stderr)


def test_fem_python_without_petsc_is_named(fresh, tmp_path):
    env, calls, tools = fresh
    env["FEM_PYTHON"] = "python3"
    proc = _run(env, tmp_path)
    assert proc.returncode != 0
    assert "FEM_PYTHON=python3 cannot import petsc4py" in proc.stderr
    assert "simulated fresh" in proc.stderr          # the import error itself is shown
    _says_routes(proc.stderr)


def test_every_failure_of_the_script_prints_a_reason(fresh, tmp_path):
    """A command failing under ``set -e`` is reported with its line, never silently."""
    env, calls, tools = fresh
    _tool(tools, "apt-get", 'echo "apt-get $*" >> "$FEM_SETUP_CALLS"\nexit 0\n')
    _tool(tools, "mktemp", "exit 1\n")               # fails before anything else runs
    proc = _run(env, tmp_path)
    assert proc.returncode != 0
    assert proc.stderr.strip(), "the script stopped without a word"
