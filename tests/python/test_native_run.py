"""``spanscope run [options] -- CMD`` through the pip-installed console
script (docs/native-run.md): any executable, its output, signals and exit
status its own, the profile read back with spanscope.read.  The programs
are compiled here with the C compiler (the package's header and
libspanscope for the one that links it); tests/native_run/run.sh covers
the same ground against the build tree."""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

import spanscope
from spanscope import _cli

PKG = Path(spanscope.__file__).resolve().parent
SCRIPT = Path(sys.executable).parent / "spanscope"
CC = shutil.which("cc") or shutil.which("gcc")

pytestmark = [
    pytest.mark.skipif(not SCRIPT.exists(), reason="no console script beside this Python"),
    pytest.mark.skipif(CC is None, reason="no C compiler"),
    pytest.mark.skipif(not (PKG / "libspanscope_run.so.1").exists(),
                       reason="this installation has no libspanscope_run (an older wheel)"),
]

PLAIN = r"""
#include <stdio.h>
int main(int argc, char **argv) {
    printf("plain");
    for (int i = 1; i < argc; i++) printf(" [%s]", argv[i]);
    printf("\n");
    fprintf(stderr, "plain: on stderr\n");
    return 3;
}
"""

OWN = r"""
#include <spanscope.h>
#include <stdio.h>
int main(void) {
    sps_config_t cfg = SPS_CONFIG_INIT;
    cfg.file_path = "own-path.h5";
    int rc = sps_setup(&cfg);
    if (rc) { fprintf(stderr, "own: sps_setup: %s\n", sps_strerror(rc)); return 1; }
    sps_region_t outer = sps_region("outer"), inner = sps_region("inner");
    sps_begin(outer);
    for (int i = 0; i < 7; i++) { sps_begin(inner); sps_end(inner); }
    sps_end(outer);
    printf("own done\n");
    return 0;   /* no finalize: the run writes the profile at exit */
}
"""

FUNC = r"""
#include <stdio.h>
static int leaf(int x) { return x + 1; }
int mid(int n) { int s = 0; for (int i = 0; i < n; i++) s += leaf(i); return s; }
int main(void) { int s = 0; for (int i = 0; i < 2; i++) s += mid(5); printf("func %d\n", s); return 0; }
"""

SIG = r"""
#include <signal.h>
#include <stdio.h>
int main(void) { printf("sig\n"); fflush(stdout); raise(SIGTERM); return 0; }
"""


def _build(tmp_path: Path, name: str, source: str, *flags: str) -> Path:
    src = tmp_path / f"{name}.c"
    src.write_text(source)
    exe = tmp_path / name
    subprocess.run([CC, "-O0", str(src), "-o", str(exe), *flags], check=True)
    return exe


def _calls(path: Path) -> dict[str, int]:
    res = spanscope.read(str(path))
    return {name: sum(len(d.durations_ns) for d in ranks.values())
            for name, ranks in res.regions.items()}


def _run(args, cwd, **kw):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("SPANSCOPE_", "SCOPE_PROFILER_")) and k != "LD_PRELOAD"}
    return subprocess.run([str(SCRIPT), *args], cwd=cwd, capture_output=True, text=True,
                          env=env, timeout=120, **kw)


def test_unmodified_program_output_and_status_untouched(tmp_path):
    plain = _build(tmp_path, "plain", PLAIN)
    bare = subprocess.run([str(plain), "a", "b c"], capture_output=True, text=True)
    assert bare.returncode == 3
    out = tmp_path / "p.h5"
    run = _run(["run", "-o", str(out), "--label", "nightly", "--", str(plain), "a", "b c"],
               tmp_path)
    assert run.returncode == bare.returncode
    assert run.stdout == bare.stdout == "plain [a] [b c]\n"
    assert run.stderr == bare.stderr + f"spanscope: wrote {out} (0 regions)\n"
    meta = spanscope.read(str(out)).metadata
    assert meta["command"] == f"{plain} a b c"
    assert meta["label"] == "nightly"
    quiet = _run(["run", "-q", "-o", str(tmp_path / "q.h5"), "--", str(plain)], tmp_path)
    assert quiet.returncode == 3 and quiet.stderr == bare.stderr
    assert (tmp_path / "q.h5").exists()


def test_program_with_its_own_session(tmp_path):
    own = _build(tmp_path, "own", OWN, f"-I{PKG / 'include'}", str(PKG / "libspanscope.so.1"),
                 f"-Wl,-rpath,{PKG}")
    run = _run(["run", "-o", "r.h5", "--", str(own)], tmp_path)
    assert run.returncode == 0, run.stderr
    assert run.stdout == "own done\n"
    assert _calls(tmp_path / "r.h5") == {"outer": 1, "inner": 7}
    assert not (tmp_path / "own-path.h5").exists()  # the run's path wins
    assert run.stderr == f"spanscope: wrote {tmp_path / 'r.h5'} (2 regions)\n"


def test_functions_of_an_instrumented_program(tmp_path):
    func = _build(tmp_path, "func", FUNC, "-finstrument-functions")
    run = _run(["run", "-q", "--functions", "-o", "f.h5", "--", str(func)], tmp_path)
    assert run.returncode == 0, run.stderr
    assert run.stdout == "func 30\n" and run.stderr == ""
    assert _calls(tmp_path / "f.h5") == {"main": 1, "mid": 2, "leaf": 10}


def test_killed_by_a_signal_keeps_the_status(tmp_path):
    sig = _build(tmp_path, "sig", SIG)
    run = _run(["run", "-q", "-o", "s.h5", "--", str(sig)], tmp_path)
    assert run.returncode == -signal.SIGTERM
    assert run.stdout == "sig\n"


def test_missing_command_and_bad_option(tmp_path):
    run = _run(["run", "-o", "x.h5", "--", "./no-such-program"], tmp_path)
    assert run.returncode == 127
    assert "cannot run ./no-such-program" in run.stderr
    run = _run(["run", "--bogus", "--", "true"], tmp_path)
    assert run.returncode == 2 and "--bogus" in run.stderr


def test_python_script_after_double_dash_stays_pythons(tmp_path):
    script = tmp_path / "s.py"
    script.write_text("import sys\nprint('script', sys.argv[1:])\n")
    run = _run(["run", "-q", "-o", "py.h5", "--", str(script), "x"], tmp_path)
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("script ['x']")
    assert (tmp_path / "py.h5").exists()


def test_main_runs_the_tool_as_a_child(tmp_path, monkeypatch, capfd):
    """main(["run", "--", CMD]) from Python returns CMD's status (the
    caller's process is not replaced)."""
    plain = _build(tmp_path, "plain", PLAIN)
    monkeypatch.chdir(tmp_path)
    for k in list(os.environ):
        if k.startswith("SPANSCOPE_"):
            monkeypatch.delenv(k)
    assert _cli._native_run(["-o", "m.h5", "--", str(plain)])
    assert not _cli._native_run(["-o", "m.h5", "--", "s.py"])
    assert not _cli._native_run(["script.py", "--", "prog"])
    rc = _cli.main(["run", "-q", "-o", "m.h5", "--", str(plain), "z"])
    assert rc == 3
    assert "plain [z]" in capfd.readouterr().out
    assert (tmp_path / "m.h5").exists()


MPIPROG = r"""
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank; MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    double x = rank, y = 0;
    for (int i = 0; i < 4; i++) MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) printf("sum %g\n", y);
    MPI_Finalize();
    return 0;
}
"""


@pytest.mark.skipif(not shutil.which("mpirun") or not shutil.which("mpicc"),
                    reason="no MPI on this machine (scripts/install-deps.sh installs Open MPI)")
@pytest.mark.skipif(not (PKG / "libspanscope_pmpi.so.1").exists(),
                    reason="this installation was built without MPI")
def test_mpi_ranks_into_one_file(tmp_path):
    src = tmp_path / "mpiprog.c"
    src.write_text(MPIPROG)
    exe = tmp_path / "mpiprog"
    subprocess.run(["mpicc", str(src), "-o", str(exe)], check=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("SPANSCOPE_")}
    env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1", OMPI_MCA_btl="self,vader",
               OMPI_MCA_btl_vader_single_copy_mechanism="none")
    run = subprocess.run(["mpirun", "-n", "2", "--oversubscribe", str(SCRIPT), "run", "--mpi",
                          "-o", "m.h5", "--", str(exe)], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=180)
    assert run.returncode == 0, run.stderr
    assert run.stdout == "sum 1\n"
    res = spanscope.read(str(tmp_path / "m.h5"))
    assert sorted(res.regions["MPI_Allreduce"]) == [0, 1]
    assert _calls(tmp_path / "m.h5") == {"MPI_Allreduce": 8}
    assert res.metadata["mpi_size"] == 2
    assert run.stderr.count("spanscope: wrote") == 1
    import h5py  # the bytes each rank's MPI calls moved (libspanscope_pmpi)

    with h5py.File(tmp_path / "m.h5") as f:
        c = f["communication"]
        rows = sorted(zip(c["region"].asstr()[:], c["rank"][:].tolist(),
                          c["calls"][:].tolist(), c["bytes"][:].tolist()))
    assert rows == [("MPI_Allreduce", 0, 4, 32), ("MPI_Allreduce", 1, 4, 32)]


PM_KEEPS_OPEN = """
from spanscope import ProfileManager
ProfileManager.setup(file_path="pm-own.h5")
with ProfileManager.region("py_work"):
    sum(range(1000))
print("pm done")
"""

PM_FINALIZES = PM_KEEPS_OPEN + "ProfileManager.finalize(verbose=False)\n"


def test_python_interpreter_as_the_command(tmp_path):
    """run -- python script.py: ProfileManager.setup takes the run's session
    over; without a finalize the run writes its file at exit, with the
    output path the run's; ProfileManager.finalize names its own path,
    which is kept, and the line says the run's file was not written."""
    (tmp_path / "open.py").write_text(PM_KEEPS_OPEN)
    run = _run(["run", "-o", "r.h5", "--", sys.executable, "open.py"], tmp_path)
    assert run.returncode == 0, run.stderr
    assert run.stdout == "pm done\n"
    assert _calls(tmp_path / "r.h5") == {"py_work": 1}
    assert not (tmp_path / "pm-own.h5").exists()
    assert run.stderr == f"spanscope: wrote {tmp_path / 'r.h5'} (1 region)\n"
    (tmp_path / "fin.py").write_text(PM_FINALIZES)
    run = _run(["run", "-o", "r2.h5", "--", sys.executable, "fin.py"], tmp_path)
    assert run.returncode == 0, run.stderr
    assert _calls(tmp_path / "pm-own.h5") == {"py_work": 1}
    assert not (tmp_path / "r2.h5").exists()
    assert run.stderr == (f"spanscope: the program wrote its profile to a path of its own; "
                          f"{tmp_path / 'r2.h5'} not written\n")


def test_run_help_shows_both_runs(tmp_path):
    """run --help: the native run's usage (the C tool's), then the Python
    run's options; a --help after the script is the script's."""
    run = _run(["run", "--help"], tmp_path)
    assert run.returncode == 0, run.stderr
    assert run.stdout.index("usage: spanscope run [OPTIONS] -- CMD") \
        < run.stdout.index("--functions") < run.stdout.index("--recursive")
    script = tmp_path / "h.py"
    script.write_text("import sys\nprint('args', sys.argv[1:])\n")
    run = _run(["run", "--no-output", "-q", str(script), "--help"], tmp_path)
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("args ['--help']")
    assert "-- CMD" not in run.stdout


def test_device_variable(tmp_path):
    """SPANSCOPE_DEVICE (docs/device.md): a bad word stops the set-up with
    its name; cupti where no driver is says so in one line and the run
    records without it."""
    plain = _build(tmp_path, "plain", PLAIN)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("SPANSCOPE_", "SCOPE_PROFILER_")) and k != "LD_PRELOAD"}
    bad = subprocess.run([str(SCRIPT), "run", "-o", "b.h5", "--", str(plain)], cwd=tmp_path,
                         capture_output=True, text=True, env={**env, "SPANSCOPE_DEVICE": "gpu"})
    assert bad.returncode == 3 and "unknown collector 'gpu'" in bad.stderr
    import ctypes
    lib = ctypes.CDLL(str(PKG / "libspanscope.so.1"))
    if lib.sps_device_available(1) == 0:
        pytest.skip("a GPU with its driver is here: CUPTI starts")
    run = subprocess.run([str(SCRIPT), "run", "-o", "d.h5", "--", str(plain)], cwd=tmp_path,
                         capture_output=True, text=True, env={**env, "SPANSCOPE_DEVICE": "cupti"})
    assert run.returncode == 3
    assert "SPANSCOPE_DEVICE=cupti: CUPTI:" in run.stderr and "recording without it" in run.stderr
    assert (tmp_path / "d.h5").exists()
