"""Crash recovery of Python programs (docs/crash-recovery.md, core/crash.c,
api/recover.c).

A script recording through ProfileManager in 1 or 4 threads (spilling or
not) is killed with SIGKILL, SIGSEGV or SIGABRT at a random moment; the
`spanscope recover PATH` of the pip-installed console script writes the
profile, which holds every call the threads completed (counted in a shared
mmap) and at most one more per thread, with the calls open at the kill
closed there.  A script that finalizes leaves no live directory behind.
"""
import glob
import json
import mmap
import os
import random
import signal
import subprocess
import sys
import textwrap
import time

import pytest

import spanscope

SCRIPT = textwrap.dedent("""
    import mmap, sys, threading
    from spanscope import ProfileManager
    path, count_path, nthreads, memory = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    with open(count_path, "r+b") as f:
        shared = mmap.mmap(f.fileno(), 8 * 8)
    counter = memoryview(shared).cast("q")
    ProfileManager.setup(file_path=path, memory_limit=memory or None)

    def loop(i):
        with ProfileManager.region("outer"):
            n = 0
            while True:
                with ProfileManager.region("work"):
                    sum(range(50))
                n += 1
                counter[i] = n

    for i in range(1, nthreads):
        threading.Thread(target=loop, args=(i,), daemon=True).start()
    loop(0)
""")

FINISHING = textwrap.dedent("""
    import sys
    from spanscope import ProfileManager
    ProfileManager.setup(file_path=sys.argv[1])
    for _ in range(1000):
        with ProfileManager.region("work"):
            pass
    ProfileManager.finalize(verbose=False)
""")


def _spanscope():
    exe = os.path.join(os.path.dirname(sys.executable), "spanscope")
    return [exe] if os.path.exists(exe) else [sys.executable, "-m", "spanscope"]


def _calls(path, name):
    res = spanscope.read(str(path))
    if name not in res.regions:
        return 0
    return sum(int(r.num_calls) for r in res.regions[name].values())


def _kill_and_recover(tmp_path, nthreads, sig, memory):
    path = tmp_path / f"crash_{nthreads}_{int(sig)}_{memory}.h5"
    count_path = tmp_path / f"count_{nthreads}_{int(sig)}_{memory}"
    count_path.write_bytes(b"\0" * 64)
    script = tmp_path / "crash_script.py"
    script.write_text(SCRIPT)
    with open(count_path, "r+b") as f:
        shared = mmap.mmap(f.fileno(), 64)
    counter = memoryview(shared).cast("q")
    proc = subprocess.Popen([sys.executable, str(script), str(path), str(count_path),
                             str(nthreads), str(memory)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    target = random.randint(300, 3000)
    deadline = time.monotonic() + 60  # a bound on a stuck start, not a timing claim
    while (min(counter[i] for i in range(nthreads)) < target and proc.poll() is None
           and time.monotonic() < deadline):
        time.sleep(0.005)
    assert proc.poll() is None, proc.communicate()
    proc.send_signal(sig)
    proc.communicate(timeout=60)
    assert proc.returncode == -sig
    done = sum(counter[i] for i in range(nthreads))
    counter.release()
    shared.close()
    assert len(glob.glob(f"{path}.live-*")) == 1
    rec = subprocess.run([*_spanscope(), "recover", str(path)], capture_output=True, text=True)
    assert rec.returncode == 0, rec.stderr
    assert "recovered" in rec.stdout and str(path) in rec.stdout
    assert glob.glob(f"{path}.live-*") == []
    got = _calls(path, "work")
    assert done <= got <= done + nthreads, (done, got)
    assert _calls(path, "outer") == nthreads  # open at the kill: closed there
    meta = spanscope.read(str(path)).metadata
    assert str(meta.get("recovered")) == "1"
    assert int(meta.get("recovered_open_calls")) >= nthreads
    marked = json.loads(str(meta.get("recovered_open_spans")))
    assert sorted(m["region"] for m in marked if m["region"] == "outer") == ["outer"] * nthreads


@pytest.mark.parametrize("nthreads", [1, 4])
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGSEGV, signal.SIGABRT])
def test_killed_python_program_is_recovered(tmp_path, nthreads, sig):
    _kill_and_recover(tmp_path, nthreads, sig, 0)


def test_killed_while_spilling(tmp_path):
    # 256 KiB of chunks: the spill writer runs all the time
    _kill_and_recover(tmp_path, 4, signal.SIGKILL, 256 << 10)


def test_finished_run_leaves_nothing(tmp_path):
    path = tmp_path / "done.h5"
    script = tmp_path / "done.py"
    script.write_text(FINISHING)
    subprocess.run([sys.executable, str(script), str(path)], check=True)
    assert _calls(path, "work") == 1000
    assert glob.glob(f"{path}.live-*") == []
    rec = subprocess.run([*_spanscope(), "recover", str(path)], capture_output=True, text=True)
    assert rec.returncode == 1
    assert "nothing to recover" in rec.stderr


def test_recover_usage_errors(tmp_path):
    rec = subprocess.run([*_spanscope(), "recover"], capture_output=True, text=True)
    assert rec.returncode == 2 and "missing PATH" in rec.stderr
    bad = tmp_path / "bad.h5.live-123"
    bad.mkdir()
    (bad / "log").write_bytes(b"\x07" * 100)
    (bad / "chunks").write_bytes(b"")
    rec = subprocess.run([*_spanscope(), "recover", str(tmp_path / "bad.h5")],
                         capture_output=True, text=True)
    assert rec.returncode == 1
    assert rec.stderr.startswith("spanscope: recover:") and "live directory" in rec.stderr
    assert len(rec.stderr.strip().splitlines()) == 1


def test_sigterm_write_leaves_no_live_directory(tmp_path):
    # the signal's write (docs/signals.md) writes everything: the process
    # then dies without exit handlers, so the write itself removes it
    path = tmp_path / "term.h5"
    count_path = tmp_path / "term.count"
    count_path.write_bytes(b"\0" * 64)
    script = tmp_path / "crash_script.py"
    script.write_text(SCRIPT)
    with open(count_path, "r+b") as f:
        shared = mmap.mmap(f.fileno(), 64)
    counter = memoryview(shared).cast("q")
    proc = subprocess.Popen([sys.executable, str(script), str(path), str(count_path), "2", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while min(counter[0], counter[1]) < 500 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    done = counter[0] + counter[1]  # the threads record on during the write
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    counter.release()
    shared.close()
    assert proc.returncode == -signal.SIGTERM, err
    assert "profile written" in err
    assert _calls(path, "work") >= done
    assert glob.glob(f"{path}.live-*") == []
