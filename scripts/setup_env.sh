#!/usr/bin/env bash
# Create the project's virtual environment with PETSc/SLEPc available, then install fem into it.
#
# Three routes to petsc4py/slepc4py, tried in this order:
#   1. already importable by a Python on PATH (conda-forge, a source build, FEM_PYTHON=...): used as is;
#   2. Debian's python3-petsc4py / python3-slepc4py (installed with apt-get when missing and we are root
#      or have sudo), real-number build under /usr/lib/petscdir, seen from a venv made with
#      --system-site-packages;
#   3. FEM_PETSC_FROM_SOURCE=1: `pip install petsc petsc4py slepc slepc4py` into the venv (about 20 min).
# Running it again with nothing changed is quick and changes nothing.
#
# Every failure says what went wrong and what to do; the script never stops silently.
# For tests of a fresh machine, the places Debian installs PETSc and SLEPc can be moved:
#   FEM_PETSC_ROOT (default /usr/lib/petscdir), FEM_SLEPC_ROOT (default /usr/lib/slepcdir).
set -euo pipefail
shopt -s nullglob

venv=${1:-.venv}
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
petsc_root=${FEM_PETSC_ROOT:-/usr/lib/petscdir}
slepc_root=${FEM_SLEPC_ROOT:-/usr/lib/slepcdir}
log=""       # output of the command running now, shown when it fails

say() { printf '[setup] %s\n' "$*"; }
err() { printf '[setup] %s\n' "$*" >&2; }

routes() {
    cat >&2 <<'MSG'
[setup] Choose one of the routes in the README ("Install"):
          - Debian packages, as root: apt-get install python3-petsc4py python3-slepc4py python3-mpi4py
            python3-venv python3-dev libopenblas0-pthread, then run make again;
          - conda-forge: conda install -c conda-forge petsc4py slepc4py, then
            FEM_PYTHON=$(which python) make test   (any Python that already imports petsc4py);
          - FEM_PETSC_FROM_SOURCE=1 make test      (pip builds PETSc, needs BLAS/LAPACK and MPI headers).
MSG
}

# The last lines a failed command wrote, so that its reason is seen.
show_log() {
    if [ -n "$log" ] && [ -s "$log" ]; then
        err "its last output:"
        tail -n 15 "$log" | sed 's/^/[setup]   | /' >&2
    fi
}

on_error() {
    local code=$? line=$1 cmd=$2
    err "failed (exit code $code) at scripts/setup_env.sh line $line: $cmd"
    show_log
    case "$cmd" in
        *venv*) err "creating the virtual environment failed: on Debian install python3-venv" ;;
        *pip*) err "pip could not install a package: check the network (or a proxy: HTTPS_PROXY)"
               err "and that $venv/bin/pip runs; remove $venv and try again" ;;
    esac
    routes
    exit "$code"
}
trap 'on_error "$LINENO" "$BASH_COMMAND"' ERR
trap '[ -z "$log" ] || rm -f "$log"' EXIT
log=$(mktemp "${TMPDIR:-/tmp}/fem-setup.XXXXXX")

# Newest real-number build under a root, or nothing (a glob, never `ls` in a pipeline: on a fresh
# machine the directory does not exist yet, and that is not an error).
newest_build() {
    local builds=("$1"/"$2"*/*-real)
    if [ ${#builds[@]} -gt 0 ]; then printf '%s\n' "${builds[@]}" | sort -V | tail -n 1; fi
}

export_debian_dirs() {
    local p s
    p=$(newest_build "$petsc_root" petsc); s=$(newest_build "$slepc_root" slepc)
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

if [ -n "${FEM_PYTHON:-}" ] && ! has_petsc "$FEM_PYTHON"; then
    err "FEM_PYTHON=$FEM_PYTHON cannot import petsc4py and slepc4py"
    "$FEM_PYTHON" -c 'import petsc4py, slepc4py' 2>&1 | tail -n 3 | sed 's/^/[setup]   | /' >&2 || true
    routes
    exit 1
fi

export_debian_dirs
base=$(pick_python || true)

if [ "$(id -u)" = 0 ]; then sudo=""; elif command -v sudo >/dev/null 2>&1; then sudo="sudo -n"; else sudo=none; fi

# On Debian, OpenBLAS replaces the reference BLAS that the PETSc packages pull in (through the
# libblas.so.3 alternative): MUMPS factorizes 3D models about three times faster with it.
if command -v dpkg >/dev/null 2>&1 && [ "$sudo" != none ] && [ -n "$(newest_build "$petsc_root" petsc)" ] \
        && ! dpkg -s libopenblas0-pthread >/dev/null 2>&1; then
    say "installing OpenBLAS for PETSc/MUMPS and numpy"
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q libopenblas0-pthread >"$log" 2>&1 \
        || say "OpenBLAS not installed (the reference BLAS works, only slower)"
fi

# mpiexec runs (fem.mpi, the distributed solve, interrupts on every rank) talk through mpi4py,
# which Debian's petsc4py does not pull in (ParaView's packages do, which hid its absence).
if command -v dpkg >/dev/null 2>&1 && [ "$sudo" != none ] && [ -n "$(newest_build "$petsc_root" petsc)" ] \
        && ! dpkg -s python3-mpi4py >/dev/null 2>&1; then
    say "installing mpi4py for runs under mpiexec (python3-mpi4py)"
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q python3-mpi4py >"$log" 2>&1 \
        || say "mpi4py not installed: serial runs work, runs under mpiexec do not"
fi

if [ -z "$base" ] && [ "${FEM_PETSC_FROM_SOURCE:-0}" != 1 ]; then
    pkgs="python3-petsc4py python3-slepc4py python3-mpi4py python3-venv python3-dev libopenblas0-pthread"
    if ! command -v apt-get >/dev/null 2>&1; then
        err "no Python on PATH imports petsc4py and slepc4py, and this is not a Debian system"
        err "(no apt-get), so Debian's packages cannot be installed."
        routes
        exit 1
    fi
    if [ "$sudo" = none ]; then
        err "no Python on PATH imports petsc4py and slepc4py; installing Debian's packages needs"
        err "root (or sudo), and this user ($(id -un 2>/dev/null || id -u)) has neither."
        routes
        exit 1
    fi
    say "installing Debian's PETSc/SLEPc for the system Python: $pkgs"
    export DEBIAN_FRONTEND=noninteractive
    # shellcheck disable=SC2086  # $sudo and $pkgs are word lists on purpose
    if ! $sudo apt-get install -y -q $pkgs >"$log" 2>&1; then
        say "apt-get install failed; updating the package lists and trying again"
        if ! { $sudo apt-get update -q && $sudo apt-get install -y -q $pkgs; } >"$log" 2>&1; then
            err "apt-get could not install $pkgs"
            show_log
            routes
            exit 1
        fi
    fi
    export_debian_dirs
    base=$(pick_python || true)
    if [ -z "$base" ]; then
        err "apt-get installed $pkgs, but still no Python on PATH imports petsc4py and slepc4py"
        err "(looked for PETSc under $petsc_root and SLEPc under $slepc_root)."
        routes
        exit 1
    fi
fi

if [ -z "$base" ]; then
    # only FEM_PETSC_FROM_SOURCE=1 reaches here
    base=$(command -v python3 || true)
    if [ -z "$base" ]; then err "no python3 on PATH"; routes; exit 1; fi
    say "building PETSc and SLEPc from source with pip (about 20 minutes on two cores)"
fi

# (Re)create the venv when missing or made from another base interpreter.
marker="$venv/.fem-base-python"
if [ ! -x "$venv/bin/python" ] || [ "$(cat "$marker" 2>/dev/null)" != "$base" ]; then
    say "creating $venv from $base (--system-site-packages)"
    rm -rf "$venv"
    "$base" -m venv --system-site-packages "$venv" >"$log" 2>&1
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
        "$venv/bin/pip" install -q -c "$constraints" petsc petsc4py slepc slepc4py >"$log" 2>&1
fi

say "installing fem (editable) with its test and docs extras"
"$venv/bin/pip" install -q --disable-pip-version-check -c "$constraints" -e ".[test,docs]" >"$log" 2>&1
if ! "$venv/bin/python" -c 'import fem, fem.linalg' >"$log" 2>&1; then
    err "fem was installed into $venv but does not import"
    show_log
    routes
    exit 1
fi
say "ready: $venv ($("$venv/bin/python" -c 'import fem; print(fem.__version__)'))"
