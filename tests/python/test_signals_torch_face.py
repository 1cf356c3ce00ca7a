"""Signals and the torch-style face (docs/signals.md, "The torch-style
face"): a profile's session writes no file of its own, so a SIGTERM,
SIGHUP or SIGUSR1 while it records stops it first -- the window in progress
goes to on_trace_ready, as at stop() -- and then ends the process as the
signal would have.  Real processes, real signals."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent("""
    import sys, time
    from spanscope import profiler as P
    out = sys.argv[1]
    def handler(prof):
        prof.export_chrome_trace(out)
    sched = P.schedule(wait=0, warmup=0, active=10**6) if len(sys.argv) > 2 else None
    with P.profile(on_trace_ready=handler, schedule=sched) as prof:
        for i in range(10**6):
            with P.record_function("step_work"):
                time.sleep(0.002)
            if i == 5:
                print("ready", flush=True)
            prof.step()
""")


def _start(tmp_path, *extra, env=None):
    script = tmp_path / "s.py"
    script.write_text(SCRIPT)
    e = {k: v for k, v in os.environ.items() if not k.startswith("SPANSCOPE_")}
    e.update(env or {})
    p = subprocess.Popen([sys.executable, str(script), str(tmp_path / "t.json"), *extra],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=e,
                         cwd=tmp_path)
    assert p.stdout.readline() == "ready\n"
    return p


def _spans(path):
    return [e for e in json.loads(path.read_text())["traceEvents"]
            if e.get("ph") == "X" and e["name"] == "step_work"]


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGUSR1])
@pytest.mark.parametrize("scheduled", [False, True])
def test_signal_hands_the_window_over_then_ends(tmp_path, sig, scheduled):
    p = _start(tmp_path, *(["sched"] if scheduled else []))
    p.send_signal(sig)
    _, err = p.communicate(timeout=60)
    assert p.returncode == -sig, err
    assert f"spanscope: {signal.Signals(sig).name}: the trace of the window in progress " \
           f"handed to on_trace_ready; ending as the signal does" in err
    assert len(_spans(tmp_path / "t.json")) >= 6


def test_signals_none_leaves_the_default(tmp_path):
    p = _start(tmp_path, env={"SPANSCOPE_SIGNALS": "none"})
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=60)
    assert p.returncode == -signal.SIGTERM
    assert not (tmp_path / "t.json").exists() and "spanscope:" not in err


def test_handlers_restored_after_the_profile():
    code = textwrap.dedent("""
        import signal
        from spanscope import profiler as P
        with P.profile() as prof:
            assert signal.getsignal(signal.SIGTERM) == prof._on_signal
            assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
        assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
        mine = lambda s, f: None
        signal.signal(signal.SIGHUP, mine)
        with P.profile():   # a program's own handler is left alone
            assert signal.getsignal(signal.SIGHUP) is mine
        print("ok")
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0 and r.stdout == "ok\n", r.stderr
