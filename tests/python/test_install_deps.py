"""scripts/venv-check.sh's sps_venv_problem, which scripts/install-deps.sh
asks before it trusts .venv: a half-made or stale virtual environment is
named (then rebuilt), a good one passed.  Environments are made here with
`python -m venv --without-pip` (quick, no network) and then broken as a
fresh machine breaks them."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CHECK = REPO / "scripts" / "venv-check.sh"
# the interpreter this venv was made from (pytest runs in .venv)
BASE = getattr(sys, "_base_executable", sys.executable)


def problem(venv: Path, python: str = BASE) -> tuple[int, str]:
    p = subprocess.run(["bash", "-c", '. "$0"; sps_venv_problem "$1" "$2"', str(CHECK),
                        str(venv), python], capture_output=True, text=True)
    return p.returncode, p.stdout.strip()


def test_the_running_venv_is_fine():
    rc, out = problem(Path(sys.prefix))
    assert (rc, out) == (0, "")


def test_missing(tmp_path):
    rc, out = problem(tmp_path / "nope")
    assert rc == 1 and "does not exist" in out


def test_no_bin_python(tmp_path):
    (tmp_path / "v" / "bin").mkdir(parents=True)  # what an interrupted venv leaves
    rc, out = problem(tmp_path / "v")
    assert rc == 1 and "no bin/python" in out


def test_no_pip(tmp_path):
    # what Debian's python3 -m venv leaves without python3-venv: no pip
    subprocess.run([BASE, "-m", "venv", "--without-pip", str(tmp_path / "v")], check=True)
    rc, out = problem(tmp_path / "v")
    assert rc == 1 and "no pip" in out


def test_interpreter_gone(tmp_path):
    # a .venv copied from another machine: bin/python points nowhere
    v = tmp_path / "v"
    (v / "bin").mkdir(parents=True)
    (v / "bin" / "python").symlink_to(tmp_path / "gone" / "python3")
    rc, out = problem(v)
    assert rc == 1 and "no bin/python" in out
    # and one whose interpreter is there but cannot start
    (v / "bin" / "python").unlink()
    (v / "bin" / "python").write_text("#!/bin/sh\nexit 1\n")
    (v / "bin" / "python").chmod(0o755)
    rc, out = problem(v)
    assert rc == 1 and "does not run" in out


def test_other_python_version(tmp_path):
    # a venv whose interpreter reports another version than the wanted python
    v = tmp_path / "v"
    (v / "bin").mkdir(parents=True)
    fake = v / "bin" / "python"
    # pip answers, the version is 2.7: only the version check can catch it
    fake.write_text('#!/bin/sh\ncase "$*" in *version_info*) echo 2.7;; *) exit 0;; esac\n')
    fake.chmod(0o755)
    rc, out = problem(v)
    assert rc == 1 and "made by Python 2.7" in out


def test_install_deps_rebuilds_a_broken_venv(tmp_path):
    """install-deps.sh itself, on a copy of the scripts with a venv
    without pip: it says why and makes the venv again (with stubs for dpkg
    and python3, so nothing is installed)."""
    root = tmp_path / "repo"
    (root / "scripts").mkdir(parents=True)
    for name in ("install-deps.sh", "venv-check.sh"):
        shutil.copy(REPO / "scripts" / name, root / "scripts" / name)
    subprocess.run([BASE, "-m", "venv", "--without-pip", str(root / ".venv")], check=True)
    # stubs: dpkg says every package is there; python3 logs its arguments
    # and, asked for `-m venv DIR`, makes a venv that sees this one's
    # packages (a .pth file), so that no pip install reaches the network
    site = next(p for p in sys.path if p.endswith("site-packages"))
    stubs = tmp_path / "stubs"
    stubs.mkdir()
    (stubs / "dpkg").write_text("#!/bin/sh\nexit 0\n")
    (stubs / "python3").write_text(
        f'#!/bin/sh\necho "$@" >> "{tmp_path}/python3.log"\n'
        f'if [ "$1 $2" = "-m venv" ]; then\n'
        f'  "{sys.executable}" -m venv "$3" || exit 1\n'
        f'  sp=$("$3/bin/python" -c "import site; print(site.getsitepackages()[0])")\n'
        f'  echo "{site}" > "$sp/parent.pth"; exit 0\n'
        f'fi\n'
        f'exec "{sys.executable}" "$@"\n')
    for stub in stubs.iterdir():
        stub.chmod(0o755)
    env = {"PATH": f"{stubs}:/usr/bin:/bin", "HOME": str(tmp_path)}
    p = subprocess.run(["bash", "scripts/install-deps.sh"], cwd=root, env=env,
                       capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=600)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "has no pip" in p.stdout and "making it again" in p.stdout, p.stdout + p.stderr
    assert (root / ".venv" / "bin" / "python").exists()
    rc, out = problem(root / ".venv", str(stubs / "python3"))
    assert (rc, out) == (0, ""), out
    # the packages came through the .pth: only one the running Python lacks
    # (mpi4py in a venv of make check-pythons) is installed
    import importlib.util
    for line in p.stdout.splitlines():
        if "pip install" in line:
            pkgs = line.split("pip install", 1)[1].split()
            assert all(importlib.util.find_spec(m) is None for m in pkgs), p.stdout
    # run again: the venv is good now and is kept
    p = subprocess.run(["bash", "scripts/install-deps.sh"], cwd=root, env=env,
                       capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=600)
    assert p.returncode == 0 and "creating .venv" not in p.stdout, p.stdout + p.stderr
