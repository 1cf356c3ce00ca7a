"""ITT from Python (issue 38 part 2; docs/nvtx-itt.md): ``emit_itt()`` makes
every region a task in the ITT domain "spanscope", and torch's itt helpers
(``spanscope.profiler.itt``: range_push, range_pop, mark, range) emit tasks
and markers with any name -- checked without VTune, through the test
collector (tests/c/itt_collector.c) that ittnotify's static part loads from
INTEL_LIBITTNOTIFY64 and that logs every call to SPS_ITT_LOG.  ITT reads its
environment once per process, so each case runs in a fresh interpreter.
"""

from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import sys
import textwrap

import pytest

from conftest import BUILD

from spanscope.profiler import itt

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent


@pytest.fixture(scope="module")
def collector(tmp_path_factory) -> pathlib.Path:
    """The test collector: the C build's, else compiled here from its source."""
    if not itt.is_available():
        pytest.skip("this spanscope was built without ITT (SPS_ITT=OFF)")
    built = BUILD / "tests" / "c" / "libsps_itt_collector.so"
    if built.exists():
        return built
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        pytest.skip("no C build and no C compiler for tests/c/itt_collector.c")
    out = tmp_path_factory.mktemp("itt") / "libsps_itt_collector.so"
    inc = ROOT / "third_party" / "ittnotify"
    subprocess.run([cc, "-shared", "-fPIC", "-O1", "-o", str(out),
                    str(ROOT / "tests" / "c" / "itt_collector.c"),
                    f"-I{inc / 'include'}", f"-I{inc / 'src'}", "-lpthread"], check=True)
    return out


def run(code: str, tmp_path, collector=None) -> tuple[list[str], str]:
    """Runs code in a fresh interpreter (with the collector when given);
    returns the collector's log lines and the program's stdout."""
    log = tmp_path / "itt.log"
    if log.exists():
        log.unlink()
    env = {k: v for k, v in os.environ.items() if k != "INTEL_LIBITTNOTIFY64"}
    env["SPS_ITT_LOG"] = str(log)
    if collector is not None:
        env["INTEL_LIBITTNOTIFY64"] = str(collector)
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env,
                       capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    lines = log.read_text().splitlines() if log.exists() else []
    return lines, r.stdout


def tasks(lines, tid=None):
    """begin/end lines as '+name' / '-' (of thread tid, or all threads);
    every one in the domain "spanscope"."""
    out = []
    for ln in lines:
        parts = ln.split(" ", 3)
        if parts[0] not in ("begin", "end") or (tid is not None and parts[1] != str(tid)):
            continue
        assert parts[2] == "spanscope", ln
        out.append("+" + parts[3] if parts[0] == "begin" else "-")
    return out


def test_is_available_says_what_the_library_has():
    # the extension's ITT and the library's emitter come from one build option
    # (SPS_ITT, default ON); whether a collector is attached is another matter
    from spanscope import _ext
    assert itt.is_available() is ("itt" in _ext.emit_available())
    if not itt.is_available():
        from spanscope.options import FeatureNotAvailableError
        with pytest.raises(FeatureNotAvailableError, match="SPS_ITT"):
            itt.range_push("r")


def test_emit_itt_regions_are_tasks(tmp_path, collector):
    lines, out = run("""
        import threading
        from spanscope import profiler
        from spanscope.profiler import record_function
        print(threading.get_native_id())
        with record_function("py_before"):      # emit_itt off: not a task
            pass
        with profiler.emit_itt():               # no session: still emitted
            for _ in range(3):
                with record_function("py_outer"):
                    with record_function("py_inner"):
                        pass
        with record_function("py_after"):       # off again
            pass
        with profiler.profile() as p:           # a recording profile, emit_itt on
            with profiler.emit_itt():
                with record_function("py_in_profile"):
                    pass
        assert any(e.name == "py_in_profile" for e in p.events())
    """, tmp_path, collector)
    tid = out.split()[0]
    assert tasks(lines, tid) == ["+py_outer", "+py_inner", "-", "-"] * 3 + ["+py_in_profile", "-"]
    # one string handle per region, not per call; one domain
    assert lines.count("string py_outer") == 1
    assert lines.count("string py_inner") == 1
    assert "string py_before" not in lines and "string py_after" not in lines
    assert "domain spanscope" in lines


def test_emit_itt_disabled_and_not_reentrant(tmp_path, collector):
    lines, _ = run("""
        from spanscope import profiler
        from spanscope.profiler import record_function
        with profiler.emit_itt(enabled=False):
            with record_function("py_disabled"):
                pass
        e = profiler.emit_itt()
        with e:
            try:
                with e:
                    pass
            except RuntimeError as exc:
                assert "reentrant" in str(exc)
            else:
                raise AssertionError("re-entered")
            with record_function("py_once"):
                pass
    """, tmp_path, collector)
    assert tasks(lines) == ["+py_once", "-"]


def test_itt_helpers(tmp_path, collector):
    lines, out = run("""
        import threading
        from spanscope.profiler import itt
        print(threading.get_native_id())
        assert itt.is_available()
        assert itt.range_push("outer") == 0
        assert itt.range_push("inner") == 1
        itt.mark("instant")
        assert itt.range_pop() == 1
        assert itt.range_pop() == 0
        assert itt.range_pop() == -1          # nothing open: nothing ended
        for i in range(3):
            with itt.range("step {}", 7):
                pass
        try:
            with itt.range("boom"):
                raise KeyError("x")
        except KeyError:
            pass
        assert itt.range_pop() == -1          # the range closed on the error
        try:
            itt.range_push(3)
        except TypeError as exc:
            print("TypeError", exc)
        depths = {}
        def worker(k):
            itt.range_push(f"thr{k}")
            depths[k] = (threading.get_native_id(), itt.range_push("nested"), itt.range_pop())
            itt.range_pop()
        ts = [threading.Thread(target=worker, args=(k,)) for k in range(3)]
        for t in ts: t.start()
        for t in ts: t.join()
        for k, (tid, d1, d2) in sorted(depths.items()):
            print(k, tid, d1, d2)
    """, tmp_path, collector)
    out = out.splitlines()
    tid = out[0]
    assert out[1].startswith("TypeError") and "str" in out[1]
    assert tasks(lines, tid) == ["+outer", "+inner", "-", "-"] + ["+step 7", "-"] * 3 \
        + ["+boom", "-"]
    assert f"marker {tid} spanscope instant 3" in lines  # __itt_marker_scope_thread
    assert lines.count("string step 7") == 1             # made once, cached by name
    for row in out[2:]:
        k, ttid, d1, d2 = row.split()
        assert (d1, d2) == ("1", "1")                    # each thread its own depth
        assert tasks(lines, ttid) == [f"+thr{k}", "+nested", "-", "-"]
    assert lines.count("init") == 1  # the extension's static part loaded the collector


def test_without_collector_the_helpers_are_quiet_no_ops(tmp_path):
    if not itt.is_available():
        pytest.skip("this spanscope was built without ITT (SPS_ITT=OFF)")
    lines, out = run("""
        from spanscope import _ext, profiler
        from spanscope.profiler import itt, record_function
        assert itt.range_push("a") == 0 and itt.range_pop() == 0
        itt.mark("m")
        with itt.range("r"):
            pass
        with profiler.emit_itt():
            with record_function("nobody"):
                pass
        print(_ext.itt_attached())
    """, tmp_path)
    assert out.split() == ["False"]
    assert lines == []  # nothing loaded the collector, nothing logged
