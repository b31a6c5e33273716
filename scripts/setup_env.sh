#!/usr/bin/env bash
# Create the project's virtual environment with PETSc/SLEPc available, then install fem into it.
#
# Three routes to petsc4py/slepc4py, tried in this order:
#   1. already importable by a Python on PATH (conda-forge, a source build, FEM_PYTHON=...): used as is;
#   2. Debian's python3-petsc4py / python3-slepc4py (installed with apt-get when missing and we are root),
#      real-number build under /usr/lib/petscdir, seen from a venv made with --system-site-packages;
#   3. FEM_PETSC_FROM_SOURCE=1: `pip install petsc petsc4py slepc slepc4py` into the venv (about 20 min).
# Running it again with nothing changed is quick and changes nothing.
set -euo pipefail

venv=${1:-.venv}
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"

say() { printf '[setup] %s\n' "$*"; }

debian_petsc_dir() { ls -d /usr/lib/petscdir/petsc*/*-real 2>/dev/null | sort -V | tail -n 1; }
debian_slepc_dir() { ls -d /usr/lib/slepcdir/slepc*/*-real 2>/dev/null | sort -V | tail -n 1; }

export_debian_dirs() {
    local p s
    p=$(debian_petsc_dir); s=$(debian_slepc_dir)
    if [ -n "$p" ] && [ -z "${PETSC_DIR:-}" ]; then export PETSC_DIR=$p; fi
    if [ -n "$s" ] && [ -z "${SLEPC_DIR:-}" ]; then export SLEPC_DIR=$s; fi
}

has_petsc() { "$1" -c 'import petsc4py, slepc4py' >/dev/null 2>&1; }

pick_python() {
    local cand
    for cand in "${FEM_PYTHON:-}" python3 /usr/bin/python3; do
        [ -n "$cand" ] || continue
        command -v "$cand" >/dev/null 2>&1 || continue
        if has_petsc "$cand"; then command -v "$cand"; return 0; fi
    done
    return 1
}

export_debian_dirs
base=$(pick_python || true)

# On Debian, OpenBLAS replaces the reference BLAS that the PETSc packages pull in (through the
# libblas.so.3 alternative): MUMPS factorizes 3D models about three times faster with it.
if command -v dpkg >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && [ -n "$(debian_petsc_dir)" ] \
        && ! dpkg -s libopenblas0-pthread >/dev/null 2>&1; then
    say "installing OpenBLAS for PETSc/MUMPS and numpy"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q libopenblas0-pthread >/dev/null 2>&1 \
        || say "OpenBLAS not installed (the reference BLAS works, only slower)"
fi

if [ -z "$base" ] && [ "${FEM_PETSC_FROM_SOURCE:-0}" != 1 ] && command -v apt-get >/dev/null 2>&1; then
    pkgs="python3-petsc4py python3-slepc4py python3-venv python3-dev libopenblas0-pthread"
    if [ "$(id -u)" = 0 ]; then sudo=""; elif command -v sudo >/dev/null 2>&1; then sudo="sudo"; else sudo=none; fi
    if [ "$sudo" != none ]; then
        say "installing Debian's PETSc/SLEPc for the system Python: $pkgs"
        export DEBIAN_FRONTEND=noninteractive
        $sudo apt-get install -y -q $pkgs >/dev/null 2>&1 || {
            $sudo apt-get update -q >/dev/null && $sudo apt-get install -y -q $pkgs >/dev/null; }
        export_debian_dirs
        base=$(pick_python || true)
    fi
fi

if [ -z "$base" ]; then
    if [ "${FEM_PETSC_FROM_SOURCE:-0}" = 1 ]; then
        base=$(command -v python3)
        say "building PETSc and SLEPc from source with pip (about 20 minutes on two cores)"
    else
        cat >&2 <<'MSG'
[setup] no Python with petsc4py and slepc4py was found, and Debian's packages could not be installed.
        Choose one of the routes in the README ("Install"):
          - conda-forge: conda install -c conda-forge petsc4py slepc4py, then run make again;
          - FEM_PYTHON=/path/to/python make test   (a Python that already imports petsc4py);
          - FEM_PETSC_FROM_SOURCE=1 make test      (pip builds PETSc, needs BLAS/LAPACK and MPI headers).
MSG
        exit 1
    fi
fi

# (Re)create the venv when missing or made from another base interpreter.
marker="$venv/.fem-base-python"
if [ ! -x "$venv/bin/python" ] || [ "$(cat "$marker" 2>/dev/null)" != "$base" ]; then
    say "creating $venv from $base (--system-site-packages)"
    rm -rf "$venv"
    "$base" -m venv --system-site-packages "$venv"
    echo "$base" > "$marker"
fi

# Never let pip replace the numpy petsc4py was built against.
constraints="$venv/constraints.txt"
"$venv/bin/python" - > "$constraints" <<'PY'
try:
    import numpy
    print(f"numpy=={numpy.__version__}")
except ImportError:
    pass
PY

if [ "${FEM_PETSC_FROM_SOURCE:-0}" = 1 ] && ! has_petsc "$venv/bin/python"; then
    PETSC_CONFIGURE_OPTIONS=${PETSC_CONFIGURE_OPTIONS:---with-fc=0} \
        "$venv/bin/pip" install -q -c "$constraints" petsc petsc4py slepc slepc4py
fi

say "installing fem (editable) with its test extra"
"$venv/bin/pip" install -q --disable-pip-version-check -c "$constraints" -e ".[test]"
"$venv/bin/python" -c 'import fem, fem.linalg' || { say "fem does not import"; exit 1; }
say "ready: $venv ($("$venv/bin/python" -c 'import fem; print(fem.__version__)'))"
