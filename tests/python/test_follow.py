"""`spanscope run --follow` (spanscope._follow, docs/process-trees.md): the
Python processes a script starts -- multiprocessing pools with the fork,
spawn and forkserver start methods, a plain subprocess, a shell pipeline of
Python children, os.fork -- each record their own part, and the run merges
them into the one output: one rank per process, the tree (pid, ppid) in
/metadata follow_processes, each process's calls exactly as it made them.

Every run goes through the pip-installed console script (`spanscope` beside
sys.executable), as a user runs it.  The scripts report what they did
(pids, parent pids, calls per pid) on stdout as JSON; the tests compare that
with the merged file."""

import glob
import json
import os
import subprocess
import sys
import textwrap

import h5py
import pytest

import spanscope

SPANSCOPE = os.path.join(os.path.dirname(sys.executable), "spanscope")

pytestmark = pytest.mark.skipif(not os.path.exists(SPANSCOPE),
                                reason="the spanscope console script is not installed "
                                       "beside this Python (pip install .)")


def _run(tmp_path, script: str, *args, out="merged.h5", options=()):
    path = tmp_path / "script.py"
    path.write_text(textwrap.dedent(script))
    p = subprocess.run([SPANSCOPE, "run", "--follow", "-q", *options, "-o",
                        str(tmp_path / out), str(path), *args],
                       capture_output=True, text=True, cwd=tmp_path, timeout=120)
    return p


def _report(p) -> dict:
    """The script's JSON line (its last line on stdout)."""
    lines = [line for line in p.stdout.splitlines() if line.startswith("{")]
    assert lines, f"no report from the script:\nstdout:\n{p.stdout}\nstderr:\n{p.stderr}"
    return json.loads(lines[-1])


def _processes(path) -> list:
    with h5py.File(path, "r") as f:
        return json.loads(f["metadata"].attrs["follow_processes"])


def _calls(path, region) -> dict:
    """{rank: calls} of region in the merged file ({} when absent)."""
    res = spanscope.read_h5(str(path))
    names = [r.name for r in res]
    if region not in names:
        return {}
    return {int(k): int(v) for k, v in res[region].num_calls_per_rank().items() if v}


def _no_parts_left(tmp_path, out="merged.h5"):
    assert not glob.glob(str(tmp_path / (out + ".parts-*"))), "the parts directory was kept"


POOL = """
    import json, multiprocessing as mp, os, sys
    from spanscope import ProfileManager

    @ProfileManager.profile("work")
    def work(i):
        return i * i

    def task(n):
        for i in range(n):
            work(i)
        return os.getpid(), os.getppid(), n

    if __name__ == "__main__":
        ctx = mp.get_context(sys.argv[1])
        pool = ctx.Pool(4)
        # the workers' pids: those that get no task record a part too
        workers = [p.pid for p in pool._pool]
        done = pool.map(task, [3, 5, 7, 11, 13, 17, 19, 23], chunksize=1)
        pool.close()
        pool.join()   # the workers finish their parts as they end
        calls, ppid = {}, {}
        for pid, parent, n in done:
            calls[pid] = calls.get(pid, 0) + n
            ppid[pid] = parent
        print(json.dumps({"root": os.getpid(), "workers": workers, "calls": calls,
                          "ppid": ppid}))
"""


@pytest.mark.parametrize("method", ["fork", "spawn", "forkserver"])
def test_pool_workers_each_a_process_with_their_calls(tmp_path, method):
    """Pool(4): the root and its 4 workers are 5 ranks; each worker's rank
    holds exactly the calls that worker made (recorded inside the worker,
    not counted by the parent), its ppid is the one the worker saw; with
    --recursive the workers' own functions (task) are traced too."""
    p = _run(tmp_path, POOL, method, options=["--recursive"])
    assert p.returncode == 0, p.stderr
    rep = _report(p)
    assert "merged 5 processes" in p.stderr, p.stderr
    procs = _processes(tmp_path / "merged.h5")
    by_pid = {rec["pid"]: rec for rec in procs}
    assert sorted(rec["rank"] for rec in procs) == [0, 1, 2, 3, 4]
    assert by_pid[rep["root"]]["rank"] == 0 and by_pid[rep["root"]]["start"] == "root"
    assert sorted(by_pid) == sorted([rep["root"], *rep["workers"]])
    work = _calls(tmp_path / "merged.h5", "work")
    expected = {by_pid[int(pid)]["rank"]: n for pid, n in rep["calls"].items()}
    assert work == expected
    assert sum(work.values()) == 3 + 5 + 7 + 11 + 13 + 17 + 19 + 23
    for pid, parent in rep["ppid"].items():
        assert by_pid[int(pid)]["ppid"] == parent
        if method != "forkserver":  # forkserver's workers are the fork server's children
            assert parent == rep["root"]
        assert by_pid[int(pid)]["start"] == ("spawn" if method == "spawn" else "fork")
    # --recursive: task traced in every worker that ran one (its module is
    # __mp_main__ where the worker imported the script afresh)
    name = "__main__.task" if method == "fork" else "__mp_main__.task"
    tasks = _calls(tmp_path / "merged.h5", name)
    assert sum(tasks.values()) == 8 and set(tasks) == set(expected)
    with h5py.File(tmp_path / "merged.h5", "r") as f:  # every call ended where it began
        assert f["metadata"].attrs["misuse_count"] == 0
        assert f["metadata"].attrs["open_calls"] == 0
    _no_parts_left(tmp_path)


CHILDREN = """
    import json, os, subprocess, sys
    from spanscope import ProfileManager

    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "child.py"), "w") as f:
        f.write("import os, sys\\n"
                "from spanscope import ProfileManager\\n"
                "for _ in range(int(sys.argv[1])):\\n"
                "    with ProfileManager.region('child_step'):\\n"
                "        pass\\n"
                "print(os.getpid(), os.getppid())\\n")
    child = subprocess.run([sys.executable, os.path.join(here, "child.py"), "6"],
                           capture_output=True, text=True, check=True)
    cpid, cppid = map(int, child.stdout.split())
    fpid = os.fork()
    if fpid == 0:  # the forked child goes on through the script and exits normally
        for _ in range(4):
            with ProfileManager.region("forked_step"):
                pass
        sys.exit(0)
    os.waitpid(fpid, 0)
    with ProfileManager.region("root_step"):
        pass
    print(json.dumps({"root": os.getpid(), "child": cpid, "child_ppid": cppid,
                      "forked": fpid}))
    sys.exit(7)
"""


@pytest.mark.parametrize("out", ["merged.h5", "merged.json"])
def test_subprocess_and_fork_children_and_the_exit_status(tmp_path, out):
    """A plain subprocess.run([sys.executable, child.py]) and an os.fork
    child are processes of the merged file with their own calls and the
    root as parent; the run's exit status is the script's (7).  Into a
    Chrome trace (.json) each process is one pid lane."""
    p = _run(tmp_path, CHILDREN, out=out, options=["--recursive"])
    assert p.returncode == 7, p.stderr
    rep = _report(p)
    assert "merged 3 processes" in p.stderr, p.stderr
    assert rep["child_ppid"] == rep["root"]
    _no_parts_left(tmp_path, out)
    if out.endswith(".json"):
        with open(tmp_path / out) as f:
            trace = json.load(f)
        lanes = {}
        for e in trace["traceEvents"]:
            if e.get("ph") == "X":
                lanes.setdefault(e["name"], set()).add(e["pid"])
        # three processes, three lanes, each step on its own
        assert {n: len(v) for n, v in lanes.items()
                if n.endswith("_step")} == {"child_step": 1, "forked_step": 1,
                                            "root_step": 1}
        assert len(lanes["child_step"] | lanes["forked_step"] | lanes["root_step"]) == 3
        sources = [r["source"] for r in trace["spanscope"]["merge"]["ranks"]]
        assert any(f".pid{rep['child']}." in s for s in sources), sources
        return
    procs = {rec["pid"]: rec for rec in _processes(tmp_path / out)}
    assert set(procs) == {rep["root"], rep["child"], rep["forked"]}
    assert procs[rep["child"]]["ppid"] == rep["root"]
    assert procs[rep["forked"]]["ppid"] == rep["root"]
    assert procs[rep["child"]]["start"] == "exec"
    assert _calls(tmp_path / out, "child_step") == {procs[rep["child"]]["rank"]: 6}
    assert _calls(tmp_path / out, "forked_step") == {procs[rep["forked"]]["rank"]: 4}
    assert _calls(tmp_path / out, "root_step") == {0: 1}
    # the calls open when the script forked (--recursive: the script's
    # root region, __main__.<module>) begin again in the child, which ends
    # them: nothing unmatched, nothing left open
    assert _calls(tmp_path / out, "__main__.<module>") == {0: 1, procs[rep["forked"]]["rank"]: 1}
    with h5py.File(tmp_path / out, "r") as f:
        assert f["metadata"].attrs["misuse_count"] == 0
        assert f["metadata"].attrs["open_calls"] == 0


PIPELINE = """
    import json, os, subprocess, sys
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "a.py"), "w") as f:
        f.write("from spanscope import ProfileManager\\n"
                "for i in range(9):\\n"
                "    with ProfileManager.region('produce'):\\n"
                "        print(i)\\n")
    with open(os.path.join(here, "b.py"), "w") as f:
        f.write("import sys\\n"
                "from spanscope import ProfileManager\\n"
                "n = 0\\n"
                "for line in sys.stdin:\\n"
                "    with ProfileManager.region('consume'):\\n"
                "        n += int(line)\\n"
                "print('sum', n)\\n")
    py = sys.executable
    p = subprocess.run(f"{py} {here}/a.py | {py} {here}/b.py", shell=True,
                       capture_output=True, text=True, check=True)
    print(json.dumps({"root": os.getpid(), "out": p.stdout.strip()}))
"""


def test_shell_pipeline_of_python_children(tmp_path):
    """subprocess.run("python a.py | python b.py", shell=True): the shell is
    not Python (not a process of the file), both Python children are, each
    with its own calls."""
    p = _run(tmp_path, PIPELINE)
    assert p.returncode == 0, p.stderr
    rep = _report(p)
    assert rep["out"] == "sum 36"
    assert "merged 3 processes" in p.stderr, p.stderr
    procs = _processes(tmp_path / "merged.h5")
    scripts = {os.path.basename(rec["argv"][1]): rec for rec in procs if rec["rank"] > 0}
    assert set(scripts) == {"a.py", "b.py"}
    assert _calls(tmp_path / "merged.h5", "produce") == {scripts["a.py"]["rank"]: 9}
    assert _calls(tmp_path / "merged.h5", "consume") == {scripts["b.py"]["rank"]: 9}
    _no_parts_left(tmp_path)


def test_a_child_ended_by_os_exit_is_recovered(tmp_path, monkeypatch):
    """An os.fork child that ends with os._exit (no atexit, no
    multiprocessing finalizer) wrote no part; its crash-safe live directory
    (SPANSCOPE_CRASH_SAFE=1) is recovered by the root (spanscope recover)
    under its own rank, every call kept."""
    monkeypatch.setenv("SPANSCOPE_CRASH_SAFE", "1")
    script = """
        import json, os
        from spanscope import ProfileManager
        pid = os.fork()
        if pid == 0:
            for _ in range(5):
                with ProfileManager.region("doomed"):
                    pass
            os._exit(0)
        os.waitpid(pid, 0)
        print(json.dumps({"child": pid}))
    """
    p = _run(tmp_path, script)
    assert p.returncode == 0, p.stderr
    rep = _report(p)
    assert "merged 2 processes" in p.stderr and f"recover): pid {rep['child']}" in p.stderr, \
        p.stderr
    procs = {rec["pid"]: rec for rec in _processes(tmp_path / "merged.h5")}
    assert _calls(tmp_path / "merged.h5", "doomed") == {procs[rep["child"]]["rank"]: 5}
    _no_parts_left(tmp_path)


def test_a_failed_merge_keeps_the_parts_and_says_where(tmp_path):
    """A part the merge cannot read (here a file that is no HDF5, put there
    by the script): exit status 1, the message names the parts directory,
    which is kept with the processes' parts in it."""
    script = """
        import os
        with open(os.path.join(os.environ["SPANSCOPE_FOLLOW"], "part.pid999999999.h5"), "w") as f:
            f.write("not a profile")
    """
    p = _run(tmp_path, script)
    assert p.returncode == 1, p.stderr
    kept = glob.glob(str(tmp_path / "merged.h5.parts-*"))
    assert len(kept) == 1 and f"parts are kept in {kept[0]}" in p.stderr, p.stderr
    assert len(glob.glob(os.path.join(kept[0], "part.pid*.h5"))) == 2
    assert not os.path.exists(tmp_path / "merged.h5")


def test_follow_usage_errors(tmp_path):
    """--follow with --no-output, an output the merge cannot write (.html)
    or --aggregation-mode (no calls to merge) is bad usage (exit 2), before
    the script runs."""
    (tmp_path / "s.py").write_text("open('ran', 'w').close()\n")
    for options in (["--no-output"], ["-o", str(tmp_path / "x.html")],
                    ["--aggregation-mode"]):
        p = subprocess.run([SPANSCOPE, "run", "--follow", *options, str(tmp_path / "s.py")],
                           capture_output=True, text=True, cwd=tmp_path, timeout=60)
        assert p.returncode == 2 and "--follow" in p.stderr, p.stderr
    assert not os.path.exists(tmp_path / "ran")
    assert not glob.glob(str(tmp_path / "*.parts-*"))
