#!/usr/bin/env bash
# Make the docs' pictures (docs/results.md) again, docs/images/{mechanism,shell,mode}.png: the renders of
# tests/test_paraview.py (Bricard's mechanism with its joint forces, the Scordelis-Lo roof
# coloured by its top von Mises stress, a labelled vibrating mode of cases/cantilever_modes), written where
# $FEM_RENDER_DIR says. Needs ParaView (apt-get install paraview python3-paraview xvfb).
# PYTHON: the interpreter with fem and pytest (default .venv/bin/python, as `make env` makes).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v pvpython >/dev/null 2>&1; then
    echo "render_docs_images: needs ParaView's pvpython (apt-get install paraview" \
         "python3-paraview xvfb)" >&2
    exit 1
fi
mkdir -p docs/images
FEM_RENDER_DIR="$PWD/docs/images" OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 \
    "${PYTHON:-.venv/bin/python}" -m pytest -q -p no:cacheprovider -n 0 tests/test_paraview.py
ls -l docs/images
