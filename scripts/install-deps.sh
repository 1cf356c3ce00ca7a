#!/usr/bin/env bash
# Installs what spanscope needs to build and test, only where it is missing.
#
#   install-deps.sh --c   what the C build needs (the library, the tool, the
#                         examples and the C tests: `make build`, `make demo`):
#                         compilers, CMake, HDF5, cmocka, zlib, the deflate
#                         encoders, OpenMPI.  No Python.
#   install-deps.sh       all of that, then Python: python3 with venv and
#                         its headers (python3-venv, python3-dev: pip builds
#                         the extension), Chromium (the HTML report's tests)
#                         and a virtual environment in .venv with numpy,
#                         h5py, pytest, scope-profiler (whose reader checks our
#                         files), matplotlib and plotly (the plots' tests, both
#                         backends) and pyarrow (the plots' parquet data, when
#                         it installs).
#
# Debian packages come from apt-get (as root, or through sudo).  Safe to run
# again: it does nothing when all is there.  A .venv that is there but not
# usable (half made, without pip, its interpreter gone, another Python
# version: scripts/venv-check.sh) is removed and made again.
# SPS_PYTHON3: the interpreter to make .venv with (default python3).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/venv-check.sh

mode=all
case "${1:-}" in
  --c) mode=c ;;
  "") ;;
  *) echo "install-deps: unknown option '$1' (use --c, or nothing)" >&2; exit 2 ;;
esac
PYTHON3=${SPS_PYTHON3:-python3}

apt_updated=0
# apt_install PKG...: installs the Debian packages not installed yet.
apt_install() {
  local need=() pkg sudo=""
  for pkg in "$@"; do
    dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
  done
  [ ${#need[@]} -gt 0 ] || return 0
  echo "install-deps: installing ${need[*]}"
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || {
      echo "install-deps: needs root or sudo to install ${need[*]} (run as root, or install sudo)" >&2
      exit 1
    }
    sudo="sudo"
  fi
  if [ $apt_updated -eq 0 ]; then
    $sudo apt-get update -qq
    apt_updated=1
  fi
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null
}

# libdeflate-dev, libisal-dev: the fast deflate encoders of the HDF5 event chunks (optional: zlib does it slower)
# libopenmpi-dev, openmpi-bin: the optional MPI integration and its tests (docs/mpi.md)
# libc6-dev: the C library's headers (only a Recommends of gcc);
# pkg-config and cmake are also what the install test (tests/install) runs
# gfortran: the Fortran modules (fortran/, libspanscope_fortran) and their tests (tests/scope_c)
# libdw1: elfutils' DWARF reader, which the sampler loads at finalize for native
# frames' source lines (docs/sampling.md; without it: function names only)
apt_install gcc g++ libc6-dev clang cmake make pkg-config libhdf5-dev libcmocka-dev zlib1g-dev \
            libdeflate-dev libisal-dev libopenmpi-dev openmpi-bin gfortran libdw1
# likwid: LIKWID 5.2 (Debian), for tests/likwid (its examples/C-markerAPI.c built
# against spanscope's LIKWID marker API) and pylikwid below (docs/likwid.md)
apt_install likwid
[ "$mode" = c ] && exit 0

# Python: python3 first, then -- with it there -- what it lacks: its venv
# module and its headers come in their own Debian packages, and a python3
# that is not Debian's (pyenv, a build of one's own) may have both already.
# chromium: the HTML report's test opens the page headless; uftrace: make bench's
# comparison of libspanscope_instrument with uftrace's cost per call (bench_instrument)
apt_install chromium uftrace
if ! command -v "$PYTHON3" >/dev/null 2>&1; then
  [ "$PYTHON3" = python3 ] || { echo "install-deps: $PYTHON3 not found" >&2; exit 1; }
  apt_install python3
fi
if ! "$PYTHON3" -c 'import venv, ensurepip' >/dev/null 2>&1; then
  apt_install python3-venv
fi
if ! "$PYTHON3" -c 'import os, sys, sysconfig; sys.exit(not os.path.isfile(os.path.join(sysconfig.get_path("include"), "Python.h")))' >/dev/null 2>&1; then
  apt_install python3-dev
fi

# perfetto + protobuf: Perfetto's own trace schema, to check our .pftrace files
# matplotlib: the optional `plot` extra (spanscope.plots), rendered by its tests
# plotly: the optional `plotly` extra (spanscope.plots' backend="plotly"), tested too
# websocket-client: the viewer's browser test drives Chromium over the DevTools protocol
PY_PKGS="numpy h5py pytest scope-profiler scikit-build-core perfetto protobuf matplotlib plotly websocket-client"
if ! problem=$(sps_venv_problem .venv "$PYTHON3"); then
  if [ -e .venv ]; then
    echo "install-deps: $problem: making it again"
    rm -rf .venv
  fi
  echo "install-deps: creating .venv"
  "$PYTHON3" -m venv .venv
fi
if ! .venv/bin/python -c 'import numpy, h5py, pytest, scope_profiler, scikit_build_core, perfetto, google.protobuf, matplotlib, plotly, websocket' >/dev/null 2>&1; then
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
# pytest-xdist: the `pytest` extra (the pytest plugin's merged file under -n,
# tests/python/test_pytest_plugin.py); ipython, ipykernel, nbclient,
# nbformat, pandas, line_profiler: the `notebook` extra (the magics, run by
# tests/python/test_ipython_magics.py in a real kernel through nbclient);
# line_profiler is also the `line-profiler` extra (use_line_profiler=True,
# tests/python/test_line_profiles.py, bench/bench_line_profile.py)
if ! .venv/bin/python -c 'import xdist, IPython, ipykernel, nbclient, nbformat, pandas, line_profiler' >/dev/null 2>&1; then
  echo "install-deps: pip install pytest-xdist ipython ipykernel nbclient nbformat pandas line_profiler"
  .venv/bin/python -m pip install -q pytest-xdist ipython ipykernel nbclient nbformat pandas line_profiler
fi
# textual and mcp: the `tui` and `mcp` extras (the terminal browser and the
# MCP server; tests/python/test_tui.py drives the app with Textual's pilot,
# tests/python/test_mcp_server.py talks to the server through mcp's client)
if ! .venv/bin/python -c 'import textual, mcp.server.fastmcp' >/dev/null 2>&1; then  # mcp 2 has no fastmcp
  echo "install-deps: pip install textual mcp"
  .venv/bin/python -m pip install -q 'textual>=0.86' 'mcp>=1.6,<2'
fi
# memray: the `memray` extra (use_memray=True, `spanscope run --memory-profile`,
# memray_summary; tests/python/test_memray.py runs the real one)
if ! .venv/bin/python -c 'import memray' >/dev/null 2>&1; then
  echo "install-deps: pip install memray"
  .venv/bin/python -m pip install -q 'memray>=1.11'
fi
# pylikwid: the `likwid` extra (use_likwid=True's marker API and perfmon read-back;
# tests/python/test_likwid.py).  Its setup.py looks for <prefix>/lib*/liblikwid.so*,
# which Debian's multiarch /usr/lib/x86_64-linux-gnu is not: a prefix of two links
# (lib, include) shows it the Debian install.
if command -v likwid-perfctr >/dev/null 2>&1 && ! .venv/bin/python -c 'import pylikwid' >/dev/null 2>&1; then
  lk_lib=$(dirname "$(ldconfig -p | awk '/liblikwid\.so / {print $NF; exit}')")
  mkdir -p .venv/likwid-prefix
  ln -sfn "$lk_lib" .venv/likwid-prefix/lib
  ln -sfn /usr/include .venv/likwid-prefix/include
  echo "install-deps: with LIKWID_PREFIX=.venv/likwid-prefix: pip install pylikwid"
  LIKWID_PREFIX="$PWD/.venv/likwid-prefix" .venv/bin/python -m pip install -q --no-binary pylikwid \
    'pylikwid>=0.4.2' || echo "install-deps: pylikwid not installed"
fi
# mpi4py: the Python face under mpirun (tests/mpi/mpi_python.py), only where
# MPI is installed
if command -v mpicc >/dev/null 2>&1 && ! .venv/bin/python -c 'import mpi4py' >/dev/null 2>&1; then
  echo "install-deps: pip install mpi4py"
  .venv/bin/python -m pip install -q mpi4py
fi
