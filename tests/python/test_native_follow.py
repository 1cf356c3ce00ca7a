"""``spanscope run --follow -- CMD``: a native process tree profiled into one
file (docs/process-trees.md, "Native trees"): the command, the children it
forks and the programs they exec each record a part under a rank of their
own, merged at the command's exit; the command's output and exit status are
its own.  Through the pip-installed console script, as test_native_run.py."""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

import spanscope

PKG = Path(spanscope.__file__).resolve().parent
SCRIPT = Path(sys.executable).parent / "spanscope"
CC = shutil.which("cc") or shutil.which("gcc")

pytestmark = [
    pytest.mark.skipif(not SCRIPT.exists(), reason="no console script beside this Python"),
    pytest.mark.skipif(CC is None, reason="no C compiler"),
    pytest.mark.skipif(not (PKG / "libspanscope_run.so.1").exists(),
                       reason="this installation has no libspanscope_run (an older wheel)"),
]

# A tree: the root records "outer" around a forked child (which ends
# "outer" itself: the call open at the fork goes on in it) and an exec'd
# copy of itself ("child"); "die" kills itself with SIGKILL after recording.
TREE = r"""
#include <spanscope.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
static void work(const char *name, int n) {
    sps_region_t r = sps_region(name);
    for (int i = 0; i < n; i++) { sps_begin(r); sps_end(r); }
}
static void run(char **argv, const char *what) {
    pid_t p = fork();
    if (p == 0) { execl(argv[0], argv[0], what, (char *)NULL); _exit(127); }
    int st; waitpid(p, &st, 0);
}
int main(int argc, char **argv) {
    if (argc > 1 && !strcmp(argv[1], "child")) { work("child_work", 5); return 0; }
    if (argc > 1 && !strcmp(argv[1], "die")) {
        work("dying", 7);
        usleep(100000); /* the records reach the shared mapping as they are made */
        kill(getpid(), SIGKILL);
    }
    sps_region_t outer = sps_region("outer");
    sps_begin(outer);
    work("parent_work", 3);
    fflush(stdout);
    pid_t f = fork();
    if (f == 0) { work("forked_work", 4); sps_end(outer); exit(0); }
    int st; waitpid(f, &st, 0);
    run(argv, "child");
    if (argc > 1 && !strcmp(argv[1], "with-death")) run(argv, "die");
    sps_end(outer);
    printf("tree done\n");
    return 5;
}
"""


def _build(tmp_path: Path) -> Path:
    src = tmp_path / "tree.c"
    src.write_text(TREE)
    exe = tmp_path / "tree"
    subprocess.run([CC, "-O0", str(src), "-o", str(exe), f"-I{PKG / 'include'}",
                    str(PKG / "libspanscope.so.1"), f"-Wl,-rpath,{PKG}"], check=True)
    return exe


def _run(args, cwd):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("SPANSCOPE_", "SCOPE_PROFILER_")) and k != "LD_PRELOAD"}
    return subprocess.run([str(SCRIPT), *args], cwd=cwd, capture_output=True, text=True,
                          env=env, timeout=120)


def _per_rank(path: Path) -> dict:
    """{region: {rank: calls}} of a merged file."""
    res = spanscope.read(str(path))
    return {name: {int(r): len(d.durations_ns) for r, d in ranks.items()}
            for name, ranks in res.regions.items()}


def test_fork_and_exec_children_merged_one_rank_each(tmp_path):
    tree = _build(tmp_path)
    out = tmp_path / "t.h5"
    run = _run(["run", "--follow", "-o", str(out), "--", str(tree)], tmp_path)
    assert run.returncode == 5, run.stderr
    assert run.stdout == "tree done\n"
    assert f"spanscope: run: --follow: merged 3 processes into {out}" in run.stderr
    calls = _per_rank(out)
    # the root is rank 0; the forked child and the exec'd one take 1 and 2
    # in the order they started (the fork first)
    assert calls["parent_work"] == {0: 3}
    assert calls["forked_work"] == {1: 4}
    assert calls["child_work"] == {2: 5}
    assert calls["outer"] == {0: 1, 1: 1}  # begun again in the forked child
    assert not list(tmp_path.glob("t.h5.parts-*"))  # the parts directory is gone


def test_root_part_names_every_process(tmp_path):
    """The parts' claims (rank, pid, ppid, start, argv) as the root's
    /metadata follow_processes, kept in the merged file."""
    tree = _build(tmp_path)
    out = tmp_path / "m.h5"
    run = _run(["run", "--follow", "-q", "-o", str(out), "--", str(tree)], tmp_path)
    assert run.returncode == 5, run.stderr
    assert run.stderr == ""
    meta = spanscope.read(str(out)).metadata
    procs = json.loads(meta["follow_processes"])
    assert [p["rank"] for p in procs] == [0, 1, 2]
    # the second child was forked, then exec'd: its claim says so, with
    # the new command line
    assert [p["start"] for p in procs] == ["root", "fork", "exec"]
    root = procs[0]["pid"]
    assert procs[1]["ppid"] == root and procs[2]["ppid"] == root
    assert procs[0]["argv"] == [str(tree)] and procs[2]["argv"] == [str(tree), "child"]


def test_killed_child_is_recovered(tmp_path):
    tree = _build(tmp_path)
    out = tmp_path / "k.h5"
    run = _run(["run", "--follow", "-o", str(out), "--", str(tree), "with-death"], tmp_path)
    assert run.returncode == 5, run.stderr
    assert "merged 4 processes" in run.stderr and "1 recovered" in run.stderr
    calls = _per_rank(out)
    assert calls["dying"] == {3: 7}


def test_shell_pipeline(tmp_path):
    tree = _build(tmp_path)
    out = tmp_path / "p.json"
    run = _run(["run", "--follow", "-q", "-o", str(out), "--", "sh", "-c",
                f"{tree} child | {tree} child > /dev/null"], tmp_path)
    assert run.returncode == 0, run.stderr
    trace = json.loads(out.read_text())
    spans = [e for e in trace["traceEvents"] if e.get("ph") == "X" and e["name"] == "child_work"]
    assert len(spans) == 10
    assert len({e["pid"] for e in spans}) == 2  # two processes, sh being the third


def test_usage_errors(tmp_path):
    for args, what in ((["--follow", "--aggregate"], "--aggregate"),
                       (["--follow", "--no-output"], "--no-output"),
                       (["--follow", "-o", "x.html"], "x.html")):
        run = _run(["run", *args, "--", "true"], tmp_path)
        assert run.returncode == 2 and what in run.stderr, run.stderr
    assert not list(tmp_path.glob("*.parts-*"))


def test_signal_to_the_root_keeps_its_status(tmp_path):
    """SIGTERM ends the root (its part written by the signal handling,
    docs/signals.md); the tool, which started it, still merges, then ends
    by the same signal."""
    sig = tmp_path / "sig.c"
    sig.write_text("#include <spanscope.h>\n#include <signal.h>\n"
                   "int main(void){sps_region_t r = sps_region(\"before\");"
                   "sps_begin(r); sps_end(r); raise(SIGTERM); return 0;}\n")
    exe = tmp_path / "sig"
    subprocess.run([CC, str(sig), "-o", str(exe), f"-I{PKG / 'include'}",
                    str(PKG / "libspanscope.so.1"), f"-Wl,-rpath,{PKG}"], check=True)
    out = tmp_path / "s.h5"
    run = _run(["run", "--follow", "-q", "-o", str(out), "--", str(exe)], tmp_path)
    assert run.returncode == -signal.SIGTERM, run.stderr
    assert _per_rank(out) == {"before": {0: 1}}
    assert not list(tmp_path.glob("s.h5.parts-*"))


def test_root_ended_by_exit_without_handlers(tmp_path):
    """A root that ends with _exit (as a shell does) writes no part itself:
    its crash-safe directory is recovered by the tool."""
    src = tmp_path / "ex.c"
    src.write_text("#include <spanscope.h>\n#include <unistd.h>\n"
                   "int main(void){sps_region_t r = sps_region(\"quick\");"
                   "for (int i = 0; i < 9; i++) { sps_begin(r); sps_end(r); } _exit(4);}\n")
    exe = tmp_path / "ex"
    subprocess.run([CC, str(src), "-o", str(exe), f"-I{PKG / 'include'}",
                    str(PKG / "libspanscope.so.1"), f"-Wl,-rpath,{PKG}"], check=True)
    out = tmp_path / "e.h5"
    run = _run(["run", "--follow", "-o", str(out), "--", str(exe)], tmp_path)
    assert run.returncode == 4, run.stderr
    assert "1 recovered" in run.stderr
    assert _per_rank(out) == {"quick": {0: 9}}


def test_metadata_write(tmp_path):
    """sps_metadata_write, which the run uses for follow_processes: sets or
    replaces one /metadata string, refuses what is not a readable HDF5 file
    with a reason."""
    import ctypes

    lib = ctypes.CDLL(str(PKG / "libspanscope.so.1"))
    fn = lib.sps_metadata_write
    fn.argtypes = (ctypes.c_char_p,) * 3 + (ctypes.c_char_p, ctypes.c_size_t)
    err = ctypes.create_string_buffer(512)
    tree = _build(tmp_path)
    out = tmp_path / "w.h5"
    assert _run(["run", "-q", "-o", str(out), "--", str(tree), "child"], tmp_path).returncode == 0
    assert fn(str(out).encode(), b"note", b"first \xc3\xa9", err, 512) == 0, err.value
    assert fn(str(out).encode(), b"note", b"second", err, 512) == 0, err.value
    meta = spanscope.read(str(out)).metadata
    assert meta["note"] == "second" and meta["command"].endswith("tree child")
    assert fn(str(out).encode(), b"", b"x", err, 512) == -1  # SPS_EINVAL
    assert b"key" in err.value
    bad = tmp_path / "not.h5"
    bad.write_text("not hdf5")
    assert fn(str(bad).encode(), b"k", b"v", err, 512) < 0 and b"not.h5" in err.value
    assert fn(str(tmp_path / "missing.h5").encode(), b"k", b"v", err, 512) < 0
    assert b"missing.h5" in err.value


def test_sigterm_to_the_tool_reaches_the_root(tmp_path):
    """SIGTERM sent to the tool's pid (a batch system's, a user's kill) goes
    on to the root: its signal handling writes its part, the tool merges
    and ends by the signal.  The library's own child processes (the HDF5
    checker the write starts, a file checked in a fork) are no processes
    of the tree."""
    import time

    src = tmp_path / "slow.c"
    src.write_text("#include <spanscope.h>\n#include <stdio.h>\n#include <unistd.h>\n"
                   "int main(void){sps_region_t r = sps_region(\"tick\");"
                   "for (int i = 0; i < 1000; i++) { sps_begin(r); usleep(10000); sps_end(r);"
                   " if (i == 2) { printf(\"ready\\n\"); fflush(stdout); } } return 0;}\n")
    exe = tmp_path / "slow"
    subprocess.run([CC, str(src), "-o", str(exe), f"-I{PKG / 'include'}",
                    str(PKG / "libspanscope.so.1"), f"-Wl,-rpath,{PKG}"], check=True)
    out = tmp_path / "t.h5"
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("SPANSCOPE_", "SCOPE_PROFILER_")) and k != "LD_PRELOAD"}
    tool = PKG / "bin" / "spanscope"
    proc = subprocess.Popen([str(tool), "run", "--follow", "-o", str(out), "--", str(exe)],
                            cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stdout.readline() == "ready\n"
    time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGTERM, err
    assert "merged 1 process into" in err and "left no part" not in err, err
    calls = _per_rank(out)["tick"]
    assert list(calls) == [0] and calls[0] >= 3


# A Python program burning CPU in burn_py: under a sampling native run its
# samples carry that Python frame (spanscope._run_attach, installed by the
# _follow_boot sitecustomize the tool puts on PYTHONPATH), not only the
# interpreter's native frames.
BURN = """
import time
def burn_py():
    t = time.process_time()
    while time.process_time() - t < 0.3:
        pass
burn_py()
"""


def _python_leafmost(path: Path) -> list:
    """Per sample of the file: (rank, the innermost Python frame's function
    or None, its weight: the periods of CPU time it stands for)."""
    h5py = pytest.importorskip("h5py")
    with h5py.File(path, "r") as f:
        g = f["samples"]
        kinds, funcs = g["frame_kinds"][:], g["frame_functions"][:]
        off, sf = g["stack_offsets"][:], g["stack_frames"][:]
        out = []
        for rank, st, w in zip(g["ranks"][:], g["stacks"][:], g["weights"][:]):
            py = [funcs[i] for i in sf[off[st]:off[st + 1]] if kinds[i] == 1]
            name = py[0].decode() if py and isinstance(py[0], bytes) else (py[0] if py else None)
            out.append((int(rank), name, int(w)))
    return out


@pytest.mark.parametrize("follow", [False, True], ids=["plain", "follow"])
def test_python_programs_samples_carry_python_frames(tmp_path, follow):
    (tmp_path / "burn.py").write_text(BURN)
    out = tmp_path / "p.h5"
    py = sys.executable
    cmd = ["bash", "-c", f"'{py}' burn.py; '{py}' burn.py"] if follow else [py, "burn.py"]
    run = _run(["run", *(["--follow"] if follow else []), "--sample-hz", "1000",
                "-o", str(out), "--", *cmd], tmp_path)
    assert run.returncode == 0, run.stderr
    assert "native frames only" not in run.stderr
    samples = _python_leafmost(out)
    ranks = {r for r, _, _ in samples}
    # --follow: bash is rank 0, and it runs the first python as rank 1 and
    # execs the last in its own process (rank 0)
    assert ranks == ({0, 1} if follow else {0}), ranks
    for r in ranks:
        # by weight (ms of CPU at 1000 Hz): 0.3 s, nearly all in burn_py's loop
        mine = [(name, w) for rank, name, w in samples if rank == r]
        total = sum(w for _, w in mine)
        named = sum(w for name, w in mine if name == "burn_py")
        assert total > 200 and named * 10 >= total * 7, (r, named, total, len(mine))


# Python's view of the run's signal handlers: set up before the interpreter
# by the preloaded library, they were foreign to Python (getsignal None:
# restoring what signal.signal returned raised TypeError, as in
# multiprocessing's fork server; SIGINT raised no KeyboardInterrupt).
SIGNALS = """
import os, signal, sys, time
from spanscope import ProfileManager
assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL
old = signal.signal(signal.SIGINT, signal.SIG_IGN)
signal.signal(signal.SIGINT, old)
try:
    signal.raise_signal(signal.SIGINT)
    sys.exit("no KeyboardInterrupt")
except KeyboardInterrupt:
    pass
with ProfileManager.profile_region("before_term"):
    pass
print("ok", flush=True)
os.kill(os.getpid(), signal.SIGTERM)  # the run's handler still writes the profile
time.sleep(30)
"""


def test_python_program_keeps_its_signals_and_the_run_its_write(tmp_path):
    (tmp_path / "sig.py").write_text(SIGNALS)
    out = tmp_path / "s.h5"
    run = _run(["run", "-o", str(out), "--", sys.executable, "sig.py"], tmp_path)
    assert run.stdout == "ok\n", run.stderr
    assert run.returncode == -signal.SIGTERM, run.stderr  # the tool became the command
    assert "SIGTERM: profile written to" in run.stderr
    assert _per_rank(out) == {"before_term": {0: 1}}


POOL = """
import multiprocessing as mp, sys
def square(x):
    return x * x
if __name__ == "__main__":
    with mp.get_context(sys.argv[1]).Pool(2) as pool:
        print(sum(pool.map(square, range(8))))
"""


@pytest.mark.parametrize("method", ["fork", "spawn", "forkserver"])
def test_multiprocessing_pool_in_a_native_tree(tmp_path, method):
    """A pool under `run --follow -- python`: its fork server restores the
    signal handlers it replaced (it died on a None, and the pool kept
    starting workers that died the same way)."""
    (tmp_path / "pool.py").write_text(POOL)
    out = tmp_path / "p.h5"
    run = _run(["run", "--follow", "-q", "-o", str(out), "--", sys.executable, "pool.py",
                method], tmp_path)
    assert run.returncode == 0, run.stderr
    assert run.stdout == "140\n"
    assert "TypeError" not in run.stderr
    assert out.exists()


def test_python_boot_chains_the_sitecustomize_it_hides(tmp_path):
    """The run's sitecustomize goes first on PYTHONPATH (the program's own
    PYTHONPATH after it), and the one it hides still runs."""
    site = tmp_path / "mysite"
    site.mkdir()
    (site / "sitecustomize.py").write_text("import os\nos.environ['MY_SITE_RAN'] = '1'\n")
    probe = "import os; print(os.environ.get('MY_SITE_RAN'), os.environ['PYTHONPATH'])"
    out = tmp_path / "n.h5"
    env_pp = {"PYTHONPATH": str(site)}
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("SPANSCOPE_", "SCOPE_PROFILER_")) and k != "LD_PRELOAD"}
    run = subprocess.run([str(SCRIPT), "run", "-q", "-o", str(out), "--", sys.executable, "-c",
                          probe], cwd=tmp_path, capture_output=True, text=True,
                         env={**env, **env_pp}, timeout=120)
    assert run.returncode == 0, run.stderr
    ran, path = run.stdout.split()
    assert ran == "1"
    assert path.split(":")[0].endswith("_follow_boot") and path.split(":")[1] == str(site)


LATE_TERM = """
import os, signal
from spanscope import ProfileManager
with ProfileManager.profile_region("before_term"):
    pass
os.kill(os.getpid(), signal.SIGTERM)  # and the program ends at once
"""


def test_sigterm_as_the_program_ends_still_writes(tmp_path):
    """The signal's write (the watcher's) and the program's exit ran at once:
    HDF5's exit handler shut the library down under the write, or Python's
    exit finalize used HDF5 beside it, and no file was left (3 of 3 runs).
    Exit now waits for the write (api/signals.c exit_wait) and finalizes
    take turns (api/finalize.c)."""
    (tmp_path / "late.py").write_text(LATE_TERM)
    for i in range(3):
        out = tmp_path / f"l{i}.h5"
        run = _run(["run", "-o", str(out), "--", sys.executable, "late.py"], tmp_path)
        assert run.returncode == -signal.SIGTERM, run.stderr
        assert "SIGTERM: profile written to" in run.stderr, run.stderr
        assert _per_rank(out) == {"before_term": {0: 1}}
        assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(f"l{i}.")) \
            == [f"l{i}.h5"]
