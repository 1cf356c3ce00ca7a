# Sourced by scripts/install-deps.sh (and tests/python/test_install_deps.py):
# whether a virtual environment is usable, so that a half-made one is rebuilt
# instead of tripped over.
#
# sps_venv_problem DIR PYTHON
#   Prints nothing and returns 0 when DIR is a virtual environment made by
#   PYTHON (the same major.minor version) whose interpreter runs and has pip.
#   Otherwise prints one line saying what is wrong and returns 1:
#     - DIR missing (nothing to repair: the caller just creates it),
#     - no DIR/bin/python (a venv whose creation stopped early),
#     - DIR/bin/python does not run (its base interpreter is gone: a .venv
#       copied from another machine, or a removed pyenv version),
#     - no pip in it (`python3 -m venv` on Debian without python3-venv
#       leaves exactly that: bin/python and no pip),
#     - made by another Python version than PYTHON.
#   PYTHON is a command (python3) or a path.  Touches nothing.
sps_venv_problem() {
  local dir=$1 python=$2 have want
  if [ ! -e "$dir" ]; then
    echo "$dir does not exist"
    return 1
  fi
  if [ ! -x "$dir/bin/python" ]; then
    echo "$dir has no bin/python (a half-made virtual environment)"
    return 1
  fi
  if ! have=$("$dir/bin/python" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null); then
    echo "$dir/bin/python does not run (its base interpreter is gone)"
    return 1
  fi
  if ! "$dir/bin/python" -m pip --version >/dev/null 2>&1; then
    echo "$dir has no pip (made without ensurepip: python3-venv missing?)"
    return 1
  fi
  if ! want=$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null); then
    echo "$python does not run"
    return 1
  fi
  if [ "$have" != "$want" ]; then
    echo "$dir was made by Python $have, not by $python (Python $want)"
    return 1
  fi
  return 0
}
