#!/usr/bin/env bash
# Installs what spanscope needs to build and test, only where it is missing:
# Debian packages (compilers, CMake, HDF5, cmocka, zlib, Chromium for the
# HTML report's test) and a Python virtual
# environment in .venv with numpy, h5py, pytest, scope-profiler (whose
# reader checks our files), matplotlib and plotly (the plots' tests, both
# backends) and pyarrow (the plots' parquet data, when it installs).  Safe to run again: it does nothing when all is
# there.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
# chromium: the HTML report's test opens the page headless
# libdeflate-dev, libisal-dev: the fast deflate encoders of the HDF5 event chunks (optional: zlib does it slower)
# libopenmpi-dev, openmpi-bin: the optional MPI integration and its tests (docs/mpi.md)
for pkg in gcc g++ clang cmake make pkg-config libhdf5-dev libcmocka-dev zlib1g-dev libdeflate-dev libisal-dev chromium \
           libopenmpi-dev openmpi-bin; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
command -v python3 >/dev/null 2>&1 || need+=(python3)
if command -v python3 >/dev/null 2>&1 && ! python3 -c 'import venv, ensurepip' >/dev/null 2>&1; then
  need+=(python3-venv)
fi
if [ ${#need[@]} -gt 0 ]; then
  echo "install-deps: installing ${need[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
fi

# perfetto + protobuf: Perfetto's own trace schema, to check our .pftrace files
# matplotlib: the optional `plot` extra (spanscope.plots), rendered by its tests
# plotly: the optional `plotly` extra (spanscope.plots' backend="plotly"), tested too
PY_PKGS="numpy h5py pytest scope-profiler scikit-build-core perfetto protobuf matplotlib plotly"
if [ ! -x .venv/bin/python ]; then
  echo "install-deps: creating .venv"
  python3 -m venv .venv
fi
if ! .venv/bin/python -c 'import numpy, h5py, pytest, scope_profiler, scikit_build_core, perfetto, google.protobuf, matplotlib, plotly' >/dev/null 2>&1; then
  echo "install-deps: pip install $PY_PKGS"
  .venv/bin/python -m pip install -q --upgrade pip >/dev/null
  .venv/bin/python -m pip install -q $PY_PKGS
fi
# snakeviz: the exports' tests open the .prof as snakeviz does
# (tests/python/test_exports.py; skipped without it)
if ! .venv/bin/python -c 'import snakeviz' >/dev/null 2>&1; then
  .venv/bin/python -m pip install -q snakeviz || echo "install-deps: snakeviz not installed"
fi
# torch-tb-profiler (TensorBoard's profiler plugin, with tensorboard) and
# holistictraceanalysis (HTA, on pandas < 3: HTA 0.5.0's call stacks and
# critical path fail on pandas 3): tests/python/test_tb_hta.py runs their own
# parsers on our traces, and skips without them
if ! .venv/bin/python -c 'import torch_tb_profiler, tensorboard, hta, pandas' >/dev/null 2>&1; then
  .venv/bin/python -m pip install -q torch-tb-profiler==0.4.3 tensorboard holistictraceanalysis==0.5.0 'pandas<3' \
    || echo "install-deps: torch-tb-profiler/holistictraceanalysis not installed (test_tb_hta.py skips)"
fi
# pyarrow: the optional `parquet` extra (the plots' data_format="parquet"),
# a 55 MB wheel, so not a hard need: tests/python/test_plots.py skips its
# parquet tests without it
if ! .venv/bin/python -c 'import pyarrow' >/dev/null 2>&1; then
  .venv/bin/python -m pip install -q pyarrow || echo "install-deps: pyarrow not installed"
fi
# mpi4py: the Python face under mpirun (tests/mpi/mpi_python.py), only where
# MPI is installed
if command -v mpicc >/dev/null 2>&1 && ! .venv/bin/python -c 'import mpi4py' >/dev/null 2>&1; then
  echo "install-deps: pip install mpi4py"
  .venv/bin/python -m pip install -q mpi4py
fi
