"""finalize(verbose=True) prints print_summary's table (issue 12), as
scope-profiler 0.7.5's finalize does (its step 6 "Summarize"): with a file
exactly ``read_h5(file).print_summary()``, without one the in-memory
results' ``print_summary(title="LABEL (in memory, 1 rank)")``.  The table
comes from the C core's pooling of the period by call path
(sps_finalize_paths), not from reading the file back: the tests compare
its text with read_h5(file).print_summary() on the same file, line for
line, for nesting, recursion, threads, regions without calls, a session
root (% session), a label, checkpoints with a call open across them, C
regions, and check that no read happens.  Compared with scope-profiler's
own finalize text in test_summary_text.py's way (its hints aside).

Modelled on scope-profiler's tests/test_profile_manager.py (finalize with
verbose, session(), checkpoints) and test_results_api.py (print_summary).
"""

import contextlib
import io
import os
import threading

import pytest

import spanscope
from spanscope import ProfileManager as PM


def _printed(fn) -> str:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        fn()
    return buf.getvalue()


def _reference(path, **kw) -> str:
    out = io.StringIO()
    spanscope.read_h5(path).print_summary(stream=out, **kw)
    return out.getvalue()


def _fib(n):
    with PM.region("fib"):
        return n if n < 2 else _fib(n - 1) + _fib(n - 2)


def _body():
    with PM.region("main"):
        for i in range(3):
            with PM.region("step"):
                with PM.region("work"):
                    sum(range(500 * (i + 1)))
                with PM.region("io"):
                    pass
        _fib(5)
    with PM.region("work"):  # the same name on another path
        pass


def test_with_a_file_it_is_read_h5_print_summary(tmp_path, monkeypatch):
    # the title names the file relative to the working directory, and the
    # box cuts a long one: run from the file's folder, so that the test does
    # not depend on how deep pytest's temporary folder is (xdist's is deeper)
    monkeypatch.chdir(tmp_path)
    p = str(tmp_path / "run.h5")
    PM.setup(file_path=p)
    _body()
    PM.region("never called")
    text = _printed(lambda: PM.finalize())
    assert text == _reference(p)
    # a region without a completed call is not in the file (scope-profiler's)
    assert "fib ↻ (15x)" in text and "never called" not in text
    assert "Summary: " in text and "(1 rank)" in text


def test_session_root_gives_percent_session(tmp_path):
    p = str(tmp_path / "s.h5")

    def run():
        with PM.session(file_path=p, verbose=True):
            _body()
    text = _printed(run)
    assert text == _reference(p)
    assert "% session" in text and "scope_profiler.session" in text


def test_threads_and_label(tmp_path):
    p = str(tmp_path / "t.h5")
    PM.setup(file_path=p, label="baseline")

    def worker():
        for _ in range(4):
            with PM.region("worker"):
                with PM.region("inner"):
                    sum(range(2000))
    with PM.region("main"):
        ts = [threading.Thread(target=worker) for _ in range(3)]
        [t.start() for t in ts]
        [t.join() for t in ts]
    text = _printed(lambda: PM.finalize())
    assert text == _reference(p)
    assert "Summary: baseline - " in text and "worker (12x)" in text


def test_checkpoints_each_print_their_period(tmp_path):
    p = str(tmp_path / "c.h5")
    PM.setup(file_path=p)
    outer = PM.region("outer")
    outer.__enter__()  # open across the first checkpoint
    for _ in range(3):
        with PM.region("a"):
            pass
    first = _printed(lambda: PM.finalize())
    assert first == _reference(p)
    assert "outer" not in first  # still running: its call is the next period's
    with PM.region("b"):
        pass
    outer.__exit__(None, None, None)
    second = _printed(lambda: PM.finalize())
    assert second == _reference(p)  # outer's own time: its children in this file
    assert "outer" in second and "b" in second and "a (3x)" not in second


def test_other_sort_and_columns_match_too(tmp_path):
    """The rows period_rows builds are region_rows' for the same file in
    every column it fills, also under other sorts and columns."""
    from spanscope.results._table import period_rows, region_rows
    p = str(tmp_path / "r.h5")
    PM.setup(file_path=p)
    _body()
    from spanscope import _ext
    _, period = _ext.finalize_paths(p, False)
    ref = region_rows(spanscope.read_h5(p))
    mine = period_rows(period)
    assert [r.get("call_path", r["name"]) for r in mine] == \
        [r.get("call_path", r["name"]) for r in ref]
    for a, b in zip(mine, ref):
        for k in ("calls", "total", "coverage", "exclusive", "min", "max", "first", "last",
                  "depth", "recursive", "start", "parent_coverage", "num_ranks"):
            assert (a[k] is None and b[k] is None) or a[k] == pytest.approx(
                b[k], rel=1e-12, abs=0), (a["name"], k)
        assert a["avg"] == pytest.approx(b["avg"], rel=1e-9)
    for sort in ("total", "calls", "avg", "name"):
        assert [r["name"] for r in period_rows(period, sort=sort)] == \
            [r["name"] for r in region_rows(spanscope.read_h5(p), sort=sort)]


def test_c_regions_of_the_process_are_in_it(tmp_path):
    from spanscope import _ext
    p = str(tmp_path / "cr.h5")
    PM.setup(file_path=p)
    with PM.region("py"):
        c = _ext.region_new("c.kernel")
        for _ in range(5):
            _ext.begin(c.id)
            _ext.end(c.id)
    text = _printed(lambda: PM.finalize())
    assert text == _reference(p)
    assert "c.kernel (5x)" in text


def test_finalize_does_not_read_the_file_back(tmp_path, monkeypatch):
    """The table costs O(call paths): neither the C reader nor read_h5 runs
    (return_results=False)."""
    from spanscope import _ext, results
    from spanscope.profile_manager import _session
    from spanscope.results import _model, _profiling

    def no(*a, **k):
        raise AssertionError("finalize read the file back")
    monkeypatch.setattr(_ext, "read_file", no)
    monkeypatch.setattr(results, "read", no)
    monkeypatch.setattr(_model, "read", no)
    monkeypatch.setattr(_profiling, "read_h5", no)
    monkeypatch.setattr(_session, "read_h5", no)
    monkeypatch.setattr(spanscope, "read_h5", no)
    monkeypatch.setattr(_session, "_read_results", no)
    p = str(tmp_path / "n.h5")
    PM.setup(file_path=p)
    _body()
    text = _printed(lambda: PM.finalize(verbose=True))
    assert "step (3x)" in text and os.path.exists(p)


def test_without_a_file_the_in_memory_title(tmp_path):
    PM.setup(output=None, label="nofile")
    _body()
    text = _printed(lambda: PM.finalize())
    assert "Summary: nofile (in memory, 1 rank)" in text
    assert "step (3x)" in text and "fib ↻ (15x)" in text


def test_without_a_file_and_a_label_the_configured_name(tmp_path):
    PM.setup(file_path=str(tmp_path / "named.h5"), deactivate_file_output=True)
    with PM.region("x"):
        pass
    text = _printed(lambda: PM.finalize())
    assert "Summary: named (in memory, 1 rank)" in text
    assert not (tmp_path / "named.h5").exists()


def test_return_results_and_verbose_print_the_same(tmp_path):
    p = str(tmp_path / "rr.h5")
    PM.setup(file_path=p)
    _body()
    res = None

    def run():
        nonlocal res
        res = PM.finalize(verbose=True, return_results=True)
    text = _printed(run)
    out = io.StringIO()
    res.print_summary(stream=out)
    assert text == out.getvalue()


def test_json_output_names_the_requested_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a short relative path in the title (see above)
    if getattr(spanscope, "write_json", None) is None:
        pytest.skip("spanscope.write_json not available in this build")
    p = tmp_path / "run.json"
    PM.setup(output=str(p))
    _body()
    text = _printed(lambda: PM.finalize())
    assert p.exists()
    assert f"Summary: {os.path.relpath(p)} (1 rank)" in text


def test_verbose_false_prints_nothing(tmp_path):
    PM.setup(file_path=str(tmp_path / "q.h5"))
    _body()
    assert _printed(lambda: PM.finalize(verbose=False)) == ""


def test_aggregation_mode_prints_the_files_table(tmp_path):
    p = str(tmp_path / "agg.h5")
    PM.setup(file_path=p, aggregation_mode=True)
    _body()
    text = _printed(lambda: PM.finalize())
    assert text == _reference(p)
    assert "step (3x)" in text


def test_scope_profiler_prints_the_same_rows(tmp_path):
    """scope-profiler's read_h5(file).print_summary() on spanscope's file:
    the same table (the box; the Info box's hints differ on purpose)."""
    ref = pytest.importorskip("scope_profiler.h5reader")
    p = str(tmp_path / "sp.h5")
    PM.setup(file_path=p)
    _body()
    text = _printed(lambda: PM.finalize())
    out = io.StringIO()
    ref.read_h5(p).print_summary(stream=out)

    def box(t):
        return t.split("╭─ Info")[0]
    assert box(text) == box(out.getvalue())
