"""Signals on a recording Python process (docs/signals.md, api/signals.c).

SIGTERM (Python leaves it at its default) on a script recording through
ProfileManager writes the profile recorded so far, says so in one line on
stderr, and the process dies of SIGTERM (-15); SIGINT (Python's own
handler: KeyboardInterrupt) is handed to Python, and nothing recorded is
lost: the script's finalize (a ``finally``, ``ProfileManager.session``'s
exit) writes the calls before and after the signal.  The scripts count
their completed calls in a shared mmap so the test can compare.
"""
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

PRELUDE = textwrap.dedent("""
    import mmap, os, sys
    from spanscope import ProfileManager
    path, count_path = sys.argv[1], sys.argv[2]
    with open(count_path, "r+b") as f:
        shared = mmap.mmap(f.fileno(), 8)
    counter = memoryview(shared).cast("q")
    def work_loop(limit=None):
        n = 0
        while limit is None or n < limit:
            with ProfileManager.region("work"):
                sum(range(200))
            n += 1
            counter[0] = n
        return n
""")

SCRIPTS = {
    # SIGTERM: nothing of the script's own runs; spanscope writes
    "plain": PRELUDE + textwrap.dedent("""
        ProfileManager.setup(file_path=path)
        work_loop()
    """),
    # SIGINT caught: more calls after it, then the script's finalize
    "caught": PRELUDE + textwrap.dedent("""
        ProfileManager.setup(file_path=path)
        try:
            work_loop()
        except KeyboardInterrupt:
            for _ in range(100):
                with ProfileManager.region("after"):
                    pass
            ProfileManager.finalize(verbose=False)
            print("finalized", counter[0], flush=True)
    """),
    # SIGINT not caught: ProfileManager.session's exit finalizes, then
    # Python dies of SIGINT
    "session": PRELUDE + textwrap.dedent("""
        with ProfileManager.session(file_path=path, verbose=False):
            work_loop()
    """),
}


def _lines(stderr):
    return [ln for ln in stderr.splitlines() if ln.startswith("spanscope:")]


def _work_calls(path, name="work"):
    """Calls of region name in the file (every rank), read by the C reader."""
    res = spanscope.read(str(path))
    if name not in res.regions:
        return 0
    return sum(int(r.num_calls) for r in res.regions[name].values())


def _run(tmp_path, kind, sig, env_extra=None):
    """Starts the script kind, sends sig once it has made a random number of
    calls; returns (returncode, stdout, stderr, calls before the signal,
    calls at the end, path)."""
    path = tmp_path / f"{kind}.h5"
    count_path = tmp_path / f"{kind}.count"
    count_path.write_bytes(b"\0" * 8)
    script = tmp_path / f"{kind}.py"
    script.write_text(SCRIPTS[kind])
    env = dict(os.environ)
    env.pop("SPANSCOPE_SIGNALS", None)
    env.update(env_extra or {})
    with open(count_path, "r+b") as f:
        shared = mmap.mmap(f.fileno(), 8)
    counter = memoryview(shared).cast("q")
    proc = subprocess.Popen([sys.executable, str(script), str(path), str(count_path)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    target = random.randint(200, 2000)
    deadline = time.monotonic() + 60  # a bound on a stuck start, not a timing claim
    while counter[0] < target and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    assert proc.poll() is None, proc.communicate()
    assert counter[0] >= target
    before = counter[0]
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=120)
    after = counter[0]
    counter.release()
    shared.close()
    return proc.returncode, out, err, before, after, path


def test_sigterm_writes_the_profile(tmp_path):
    rc, out, err, before, after, path = _run(tmp_path, "plain", signal.SIGTERM)
    assert rc == -signal.SIGTERM, err
    lines = _lines(err)
    assert len(lines) == 1, err
    assert "SIGTERM: profile written to" in lines[0] and str(path) in lines[0]
    n = _work_calls(path)
    # every call completed before the signal; none that was never made
    # (the one in flight at the end may be in the file, uncounted)
    assert before <= n <= after + 1, (before, n, after)
    assert f"({n} calls)" in lines[0]


def test_sigterm_opt_out_writes_nothing(tmp_path):
    rc, out, err, before, after, path = _run(tmp_path, "plain", signal.SIGTERM,
                                             {"SPANSCOPE_SIGNALS": "none"})
    assert rc == -signal.SIGTERM, err
    assert _lines(err) == []
    assert not path.exists()


def test_sigint_caught_keeps_everything(tmp_path):
    rc, out, err, before, after, path = _run(tmp_path, "caught", signal.SIGINT)
    assert rc == 0, err
    assert _lines(err) == []  # handed to Python: spanscope wrote nothing itself
    made = int(out.split()[-1])
    assert made == after and made >= before
    # the part before the signal and the part after it, nothing lost
    assert _work_calls(path) in (made, made + 1)  # + the call KeyboardInterrupt cut
    assert _work_calls(path, "after") == 100


def test_sigint_uncaught_session_keeps_everything(tmp_path):
    rc, out, err, before, after, path = _run(tmp_path, "session", signal.SIGINT)
    assert rc == -signal.SIGINT, err  # Python ends of SIGINT after KeyboardInterrupt
    assert "KeyboardInterrupt" in err
    assert _lines(err) == []
    n = _work_calls(path)
    assert after >= before
    assert n in (after, after + 1), (n, after)


def test_torch_style_profile_sigterm_ends_as_the_signal_does(tmp_path):
    """The torch-style face keeps its spans for its own exports (its C
    session has no file): SIGTERM stops the profile first (no
    on_trace_ready here: nothing written, and the line says so), then ends
    the process as the signal does (test_signals_torch_face.py has the
    handed-over traces)."""
    script = tmp_path / "torch_face.py"
    ready = tmp_path / "ready"
    script.write_text(textwrap.dedent(f"""
        import pathlib
        from spanscope import profiler
        with profiler.profile() as prof:
            i = 0
            while True:
                with profiler.record_function("step"):
                    sum(range(100))
                i += 1
                if i == 100:
                    pathlib.Path({str(ready)!r}).write_text("1")
    """))
    env = dict(os.environ)
    env.pop("SPANSCOPE_SIGNALS", None)
    proc = subprocess.Popen([sys.executable, str(script)], stderr=subprocess.PIPE, text=True,
                            env=env)
    deadline = time.monotonic() + 60
    while not ready.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert proc.poll() is None
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == -signal.SIGTERM
    lines = _lines(err)
    assert len(lines) == 1 and "SIGTERM: the profile stopped (no on_trace_ready: nothing " \
        "written); ending as the signal does" in lines[0], err


def test_bad_signals_variable_fails_setup(tmp_path):
    """A bad SPANSCOPE_SIGNALS makes setup fail (sps_setup's SPS_EINVAL),
    never silently ignored; a good one is taken."""
    script = tmp_path / "bad_env.py"
    script.write_text("from spanscope import ProfileManager\n"
                      "ProfileManager.setup(file_path=None)\n"
                      "print('set up', flush=True)\n")
    env = dict(os.environ, SPANSCOPE_SIGNALS="TERM,NOPE")
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          env=env, timeout=120)
    assert proc.returncode != 0
    assert "ValueError" in proc.stderr and "set up" not in proc.stdout
    env["SPANSCOPE_SIGNALS"] = "sigterm, usr2"
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "set up" in proc.stdout


@pytest.fixture(autouse=True)
def _seed():
    random.seed(os.getpid() ^ int(time.time()))
