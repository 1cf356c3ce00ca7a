"""Line profiles (issue 34, part 3): scope-profiler 0.7.5's
``use_line_profiler=True`` on spanscope, driving the real line_profiler.

Exact per-line hit counts of known functions, per region; the profiles
through the file (scope-profiler's rank<N>/line_profile layout, read by
spanscope and by scope-profiler's own reader, and back); `spanscope
line-profile` (scope-profiler's `line-profile`: same options, same output)
and `spanscope run --line-profile`; the clear error without line_profiler;
checkpoints (each finalize's file holds its period); hostile files.

line_profiler is the `line-profiler` extra (scripts/install-deps.sh installs
it); scope-profiler (the `test` extra) is the reference reader.
"""

import io
import json
import os
import subprocess
import sys
import textwrap
import threading

import h5py
import numpy as np
import pytest

import spanscope
from spanscope import ProfileManager as PM
from spanscope.results import (CorruptProfileError, LineProfileDataError, format_line_profile,
                               read_h5, read_h5_summary, read_line_profile_file,
                               write_line_profile)

line_profiler = pytest.importorskip("line_profiler",
                                    reason="line_profiler (the line-profiler extra) is missing")


def _lines_of(func, text):
    """The line number of the first line of func's source containing text."""
    import inspect
    lines, first = inspect.getsourcelines(func)
    for i, line in enumerate(lines):
        if text in line:
            return first + i
    raise AssertionError(f"{text!r} not in {func.__name__}")


def loop100(n=100):
    total = 0
    for i in range(n):
        total += i  # the body: n hits per call
    return total


def squares(n):
    acc = 0
    for i in range(n):
        acc += i * i
    return acc


def shared(n):
    out = 0
    for i in range(n):
        out ^= i
    return out


def _fn(func) -> str:
    """line_profiler's name of func: its qualified name (its bare name on
    Python 3.10, whose code objects have no co_qualname); a @profile
    wrapper: the function inside."""
    code = getattr(func, "__wrapped__", func).__code__
    return getattr(code, "co_qualname", code.co_name)


def _record(records, region, function):
    found = [r for r in records if r["region"] == region and r["function"] == function]
    assert len(found) == 1, (region, function, [(r["region"], r["function"]) for r in records])
    return found[0]


def _hits(record):
    return dict(zip(record["line_numbers"].tolist(), record["hits"].tolist()))


# --------------------------------------------------------------------------
# recording
# --------------------------------------------------------------------------

def test_a_decorated_loop_gives_exact_hits(tmp_path):
    out = tmp_path / "run.h5"
    PM.setup(file_path=str(out), use_line_profiler=True)
    f = PM.profile("loop")(loop100)
    for _ in range(3):
        assert f() == sum(range(100))
    region = PM.get_region("loop")
    assert isinstance(region, spanscope.profile_manager.LineProfilerRegion)
    assert region.stats.num_calls == 3  # the timing is the C core's
    res = PM.finalize(verbose=False, return_results=True)
    rec = _record(res.line_profile[0], "loop", "loop100")
    hits = _hits(rec)
    body = _lines_of(loop100, "total += i")
    assert hits[body] == 300
    assert hits[body - 1] == 303  # the for line: 101 per call
    assert hits[body - 2] == 3 and hits[body + 1] == 3
    assert rec["first_lineno"] == loop100.__code__.co_firstlineno
    assert rec["filename"].endswith("test_line_profiles.py")
    assert rec["unit"] > 0 and rec["times"].dtype == np.float64
    assert (rec["times"] >= 0).all() and rec["times"].sum() > 0
    assert rec["line_numbers"].dtype == np.int64 and rec["hits"].dtype == np.int64
    assert "total += i  # the body" in rec["source"]
    assert rec["source_first_lineno"] == rec["first_lineno"]
    assert res["loop"][0].num_calls == 3


def test_each_region_has_its_own_profile():
    """A function handed to two regions: each region's profile counts the
    calls made while it was open, as scope-profiler's per-region profilers."""
    PM.setup(output=None, use_line_profiler=True)
    for _ in range(2):
        with PM.region("a", functions=[shared]):
            shared(10)
    for _ in range(5):
        with PM.region("b", functions=[shared]):
            shared(10)
    shared(10)  # no region open: nobody counts it
    res = PM.finalize(verbose=False, return_results=True)
    body = _lines_of(shared, "out ^= i")
    assert _hits(_record(res.line_profile[0], "a", "shared"))[body] == 20
    assert _hits(_record(res.line_profile[0], "b", "shared"))[body] == 50


def test_nested_regions_and_their_functions():
    PM.setup(output=None, use_line_profiler=True)
    outer_fn = PM.profile("outer")(squares)

    @PM.profile("inner")
    def inner(n):
        s = 0
        for i in range(n):
            s += 1
        return s

    with PM.region("block", functions=[loop100]):
        outer_fn(7)
        inner(9)
        loop100(4)
    res = PM.finalize(verbose=False, return_results=True)
    records = res.line_profile[0]
    assert _hits(_record(records, "outer", "squares"))[_lines_of(squares, "acc += i")] == 7
    assert _hits(_record(records, "inner", _fn(inner)))[
        _lines_of(inner, "s += 1")] == 9
    assert _hits(_record(records, "block", "loop100"))[_lines_of(loop100, "total += i")] == 4
    # a region's profile holds its own functions only
    assert {r["function"] for r in records if r["region"] == "block"} == {"loop100"}


def test_context_manager_forms_of_scope_profiler():
    """scope-profiler's tests: region(name, functions=[...]) and a with
    block that profiles the function holding it (from its next call on)."""
    PM.setup(output=None, use_line_profiler=True)

    def work(n=500):
        s = 0
        for i in range(n):
            s += i
        return s

    with PM.profile_region("lp_ctx", functions=[work]):
        work()
    stats = PM.get_region("lp_ctx").get_stats()
    assert len(stats.timings) > 0

    def holder():
        total = 0
        with PM.region("lp_scope_only"):
            for i in range(10):
                total += i
        return total

    for _ in range(3):
        holder()
    res = PM.finalize(verbose=False, return_results=True)
    assert _hits(_record(res.line_profile[0], "lp_ctx", _fn(work)))[
        _lines_of(work, "s += i")] == 500
    rec = _record(res.line_profile[0], "lp_scope_only", _fn(holder))
    # line_profiler takes the function on its first call; the next two count
    assert _hits(rec)[_lines_of(holder, "total += i")] == 20
    assert all(r["region"] != "scope_profiler.session" for r in res.line_profile[0])


def test_decorators_made_before_setup_and_threads():
    f = PM.profile("early")(loop100)  # before any session
    PM.setup(output=None, use_line_profiler=True)
    threads = [threading.Thread(target=lambda: [f(10) for _ in range(25)]) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    f(10)
    res = PM.finalize(verbose=False, return_results=True)
    assert _hits(_record(res.line_profile[0], "early", "loop100"))[
        _lines_of(loop100, "total += i")] == 10 * 101
    assert res["early"][0].num_calls == 101


def test_paused_calls_are_not_profiled():
    PM.setup(output=None, use_line_profiler=True)
    f = PM.profile("p")(loop100)
    f(5)
    PM.pause()
    f(5)
    PM.resume()
    f(5)
    res = PM.finalize(verbose=False, return_results=True)
    assert _hits(_record(res.line_profile[0], "p", "loop100"))[
        _lines_of(loop100, "total += i")] == 10


def test_checkpoints_hold_their_own_period(tmp_path):
    first, second = tmp_path / "one.h5", tmp_path / "two.h5"
    PM.setup(file_path=str(first), use_line_profiler=True)
    f = PM.profile("loop")(loop100)
    g = PM.profile("sq")(squares)
    f(100)
    g(3)
    PM.finalize(verbose=False)
    f(100)
    f(100)
    PM.finalize(verbose=False, file_path=str(second))
    body = _lines_of(loop100, "total += i")
    one, two = read_h5(first).line_profile[0], read_h5(second).line_profile[0]
    assert _hits(_record(one, "loop", "loop100"))[body] == 100
    assert _hits(_record(two, "loop", "loop100"))[body] == 200
    assert not [r for r in two if r["region"] == "sq"]  # nothing ran in the period
    # line_profiler's own statistics stay cumulative (scope-profiler's get_stats)
    (rows,) = [v for k, v in PM.get_region("loop").get_stats().timings.items()
               if k[2] == "loop100"]
    assert dict((line, hits) for line, hits, _t in rows)[body] == 300
    third = tmp_path / "three.h5"
    PM.finalize(verbose=False, file_path=str(third))
    assert read_h5(third).line_profile == {}  # an empty period: no group


def test_get_stats_print_stats_and_verbose_line_profiler(capsys):
    PM.setup(output=None)
    f = PM.profile("plain")(loop100)
    f()
    with pytest.raises(RuntimeError, match="use_line_profiler=True"):
        PM.get_region("plain").get_stats()
    assert not isinstance(PM.get_region("plain"), spanscope.profile_manager.LineProfilerRegion)
    PM.finalize(verbose=False)
    PM.setup(output=None, use_line_profiler=True)
    f()
    buf = io.StringIO()
    PM.get_region("plain").print_stats(stream=buf)
    assert "Line #" in buf.getvalue() and "total += i" in buf.getvalue()
    capsys.readouterr()
    PM.finalize(verbose=False, verbose_line_profiler=True)
    out = capsys.readouterr().out
    assert "Timer unit" in out and "Function: loop100" in out


def test_without_line_profiler_a_clear_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "line_profiler", None)  # import fails
    with pytest.raises(ImportError, match=r"line_profiler.*spanscope\[line-profiler\]"):
        PM.setup(output=None, use_line_profiler=True)
    assert not PM.is_configured()
    PM.setup(output=None)  # without line profiling all is well
    assert PM.is_active()


def test_aggregation_mode_refuses_line_profiles():
    with pytest.raises(ValueError, match="aggregation_mode cannot be combined"):
        PM.setup(output=None, use_line_profiler=True, aggregation_mode=True)


# --------------------------------------------------------------------------
# the file, both readers, JSON
# --------------------------------------------------------------------------

def _recorded(tmp_path, name="run.h5"):
    out = tmp_path / name
    PM.setup(file_path=str(out), use_line_profiler=True)
    f = PM.profile("loop")(loop100)
    g = PM.profile("solve")(squares)
    f()
    g(20)
    g(20)
    PM.finalize(verbose=False)
    return out


def test_the_file_has_scope_profilers_layout(tmp_path):
    path = _recorded(tmp_path)
    with h5py.File(path, "r") as f:
        group = f["rank0/line_profile"]
        assert sorted(group) == ["0", "1"]
        for key in group:
            g = group[key]
            assert {"region", "filename", "function", "first_lineno", "unit", "source",
                    "source_first_lineno"} <= set(g.attrs)
            assert g["line_numbers"].dtype == np.int64 and g["hits"].dtype == np.int64
            assert g["times"].dtype == np.float64
            assert g["line_numbers"].shape == g["hits"].shape == g["times"].shape
        assert f.attrs["scope_profiler_schema"] == 3


def test_scope_profilers_reader_reads_our_file(tmp_path):
    sp_reader = pytest.importorskip("scope_profiler.h5reader")
    path = _recorded(tmp_path)
    theirs = sp_reader.read_h5(str(path)).line_profile
    ours = read_h5(path).line_profile
    assert list(theirs) == list(ours) == [0]
    assert len(theirs[0]) == len(ours[0]) == 2
    for a, b in zip(theirs[0], ours[0]):
        assert set(a) == set(b)
        for key in a:
            if isinstance(a[key], np.ndarray):
                assert a[key].tolist() == b[key].tolist()
            else:
                assert a[key] == b[key], key
    rec = _record(theirs[0], "solve", "squares")
    assert _hits(rec)[_lines_of(squares, "acc += i")] == 40


def test_we_read_scope_profilers_file(tmp_path):
    """A file scope-profiler itself wrote with use_line_profiler=True (in a
    child process: scope-profiler's own session)."""
    pytest.importorskip("scope_profiler")
    path = tmp_path / "sp.h5"
    script = tmp_path / "sp_run.py"
    script.write_text(textwrap.dedent(f"""
        from scope_profiler import ProfileManager
        ProfileManager.setup(file_path={str(path)!r}, use_line_profiler=True)

        @ProfileManager.profile("kernel")
        def kernel(n):
            t = 0
            for i in range(n):
                t += i
            return t

        for _ in range(4):
            kernel(25)
        ProfileManager.finalize(verbose=False)
    """))
    p = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                       cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    res = read_h5(path)
    rec = _record(res.line_profile[0], "kernel", "kernel")
    assert _hits(rec)[9] == 100  # "t += i", line 9 of the script
    assert res["kernel"][0].num_calls == 4


def test_summary_read_json_and_merge_carry_line_profiles(tmp_path):
    path = _recorded(tmp_path)
    full = read_h5(path).line_profile
    summary = read_h5_summary(path)
    assert [r["function"] for r in summary.line_profile[0]] == [r["function"] for r in full[0]]
    assert read_h5_summary(path, include_line_profile=False).line_profile == {}
    assert read_h5_summary(path, ranks=[1]).line_profile == {}
    js = tmp_path / "run.json"
    spanscope.write_json(read_h5(path), js)
    back = spanscope.read_json(js).line_profile[0]
    assert [(r["region"], r["hits"].tolist()) for r in back] == \
        [(r["region"], r["hits"].tolist()) for r in full[0]]
    merged = spanscope.merge_results(read_h5(path))
    assert len(merged.line_profile[0]) == 2
    assert read_line_profile_file(path, ranks=[0])[0][0]["region"] == full[0][0]["region"]


def test_output_json_carries_line_profiles(tmp_path):
    out = tmp_path / "run.json"
    PM.setup(output=str(out), use_line_profiler=True)
    PM.profile("loop")(loop100)()
    PM.finalize(verbose=False)
    doc = json.loads(out.read_text())
    (rec,) = doc["line_profile"]["0"]
    assert rec["region"] == "loop" and max(rec["hits"]) == 101


def _write_group(path, **over):
    record = {"region": "r", "filename": "k.py", "function": "k", "first_lineno": 1,
              "line_numbers": np.array([2, 3]), "hits": np.array([1, 5]),
              "times": np.array([1.0, 2.0]), "unit": 1e-9}
    record.update(over)
    with h5py.File(path, "w") as f:
        write_line_profile(f.create_group("rank0"), [record])
    return path


def test_hostile_line_profile_groups_are_clear_errors(tmp_path):
    path = _write_group(tmp_path / "ok.h5")
    assert read_line_profile_file(path)[0][0]["hits"].tolist() == [1, 5]
    bad = _write_group(tmp_path / "len.h5")
    with h5py.File(bad, "a") as f:
        del f["rank0/line_profile/0/hits"]
        f["rank0/line_profile/0"].create_dataset("hits", data=np.arange(7))
    with pytest.raises(LineProfileDataError, match=r"rank0/line_profile/0.*2, 7 and 2"):
        read_line_profile_file(bad)
    missing = _write_group(tmp_path / "missing.h5")
    with h5py.File(missing, "a") as f:
        del f["rank0/line_profile/0/times"]
    with pytest.raises(LineProfileDataError, match="no dataset 'times'"):
        read_line_profile_file(missing)
    text = _write_group(tmp_path / "text.h5")
    with h5py.File(text, "a") as f:
        del f["rank0/line_profile/0/line_numbers"]
        f["rank0/line_profile/0"].create_dataset("line_numbers", data=np.array([b"a", b"b"]))
    with pytest.raises(LineProfileDataError, match="not numeric"):
        read_line_profile_file(text)
    unit = _write_group(tmp_path / "unit.h5")
    with h5py.File(unit, "a") as f:
        f["rank0/line_profile/0"].attrs["unit"] = "fast"
    with pytest.raises(LineProfileDataError, match="'unit' is not a number"):
        read_line_profile_file(unit)
    assert issubclass(LineProfileDataError, CorruptProfileError)
    with pytest.raises(CorruptProfileError):
        read_line_profile_file(tmp_path / "nope.h5")


# --------------------------------------------------------------------------
# the command line
# --------------------------------------------------------------------------

def _cli(*argv):
    from spanscope._cli import main
    return main(list(argv))


def test_line_profile_command_prints_the_tables(tmp_path, capsys):
    path = _recorded(tmp_path)
    assert _cli("line-profile", str(path)) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"Line profile: {path}\n")
    body = _lines_of(loop100, "total += i")
    assert f"Rank 0 | loop | loop100 (" in out and f"Rank 0 | solve | squares (" in out
    row = next(line for line in out.splitlines() if line.startswith(f"│ {body} "))
    cells = [c.strip() for c in row.strip("│").split("│")]
    assert cells[0] == str(body) and cells[1] == "100"
    assert cells[5].endswith("total += i  # the body: n hits per call")
    for head in ("line", "hits", "time [s]", "per hit [s]", "% time", "source"):
        assert head in out
    assert _cli("line-profile", str(path), "--include", "solve") == 0
    out = capsys.readouterr().out
    assert "| solve |" in out and "| loop |" not in out
    assert _cli("line-profile", str(path), "--exclude", "solve") == 0
    out = capsys.readouterr().out
    assert "| solve |" not in out and "| loop |" in out
    assert _cli("line-profile", str(path), "--function", "^sq") == 0
    assert "| loop |" not in capsys.readouterr().out
    assert _cli("line-profile", str(path), "--region", "oo") == 0
    assert "| solve |" not in capsys.readouterr().out
    assert _cli("line-profile", str(path), "--ranks", "1-2") == 0
    assert "No line-profile records matched." in capsys.readouterr().out
    js = tmp_path / "run.json"  # scope-profiler's JSON profile: the same tables
    spanscope.write_json(read_h5(path), js)
    assert _cli("line-profile", str(path)) == 0
    from_h5 = capsys.readouterr().out
    assert _cli("line-profile", str(js)) == 0
    from_json = capsys.readouterr().out
    assert from_json.splitlines()[1:] == from_h5.splitlines()[1:]


def test_line_profile_output_is_scope_profilers(tmp_path, capsys):
    """The same file printed by scope-profiler's own `line-profile` and by
    ours: the same text."""
    sp_main = pytest.importorskip("scope_profiler.__main__").main
    path = _recorded(tmp_path)
    for extra in ([], ["--include", "solve"], ["--function", "loop"]):
        assert sp_main(["line-profile", str(path), *extra]) == 0
        theirs = capsys.readouterr().out
        assert _cli("line-profile", str(path), *extra) == 0
        assert capsys.readouterr().out == theirs


def test_line_profile_command_errors(tmp_path, capsys):
    assert _cli("line-profile", str(tmp_path / "nope.h5")) == 1
    err = capsys.readouterr().err
    assert err.startswith("spanscope: line-profile:") and err.count("\n") == 1
    path = _recorded(tmp_path)
    assert _cli("line-profile", str(path), "--ranks", "x") == 2
    assert "--ranks" in capsys.readouterr().err
    assert _cli("line-profile", str(path), "--function", "(") == 2
    assert "regular expression" in capsys.readouterr().err
    garbage = tmp_path / "garbage.h5"
    garbage.write_bytes(b"not hdf5 at all" * 10)
    assert _cli("line-profile", str(garbage)) == 1
    capsys.readouterr()
    assert _cli("line-profile", "--help") == 0
    out = capsys.readouterr().out
    for option in ("--ranks", "--include", "--exclude", "--function", "--region",
                   "default: 0"):
        assert option in out


def test_format_line_profile_shows_unexecuted_lines(tmp_path):
    src = tmp_path / "app.py"
    src.write_text("\n" * 10 + "    if enabled:\n        total = 0\n    done = True\n")
    record = {"region": "solve", "filename": str(src), "function": "solve",
              "first_lineno": 10, "line_numbers": np.asarray([11, 13]),
              "hits": np.asarray([1, 5]), "times": np.asarray([10.0, 25.0]), "unit": 1e-9}
    out = format_line_profile({0: [record]}, "x.h5")
    assert f"Rank 0 | solve | solve ({src}:10)" in out
    assert "│ 11" in out and "1e-08" in out and "28.57" in out
    assert "if enabled:" in out and "    total = 0" in out  # the branch never taken
    (row,) = [line for line in out.splitlines() if "total = 0" in line]
    assert [c.strip() for c in row.strip("│").split("│")][:5] == ["12", "", "", "", ""]


def _child_env():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    return env


def test_run_line_profile(tmp_path):
    script = tmp_path / "app.py"
    script.write_text(textwrap.dedent("""
        from spanscope import ProfileManager

        @ProfileManager.profile("kernel")
        def kernel(n):
            t = 0
            for i in range(n):
                t += i
            return t

        for _ in range(3):
            kernel(40)
    """))
    out = tmp_path / "app.h5"
    p = subprocess.run([sys.executable, "-m", "spanscope", "run", "-q", "--line-profile",
                        "-o", str(out), str(script)], capture_output=True, text=True,
                       env=_child_env(), cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    rec = _record(read_h5(out).line_profile[0], "kernel", "kernel")
    assert _hits(rec)[8] == 120
    p = subprocess.run([sys.executable, "-m", "spanscope", "line-profile", str(out)],
                       capture_output=True, text=True, env=_child_env(), cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert "Rank 0 | kernel | kernel (app.py:4)" in p.stdout and "│ 8 " in p.stdout
    p = subprocess.run([sys.executable, "-m", "spanscope", "run", "--help"],
                       capture_output=True, text=True, env=_child_env())
    assert "--line-profile" in p.stdout and "not available" not in p.stdout


def test_run_line_profile_without_line_profiler(tmp_path, monkeypatch, capsys):
    script = tmp_path / "app.py"
    script.write_text("print('never')\n")
    monkeypatch.setitem(sys.modules, "line_profiler", None)
    assert _cli("run", "-q", "--line-profile", "-o", str(tmp_path / "x.h5"), str(script)) == 2
    captured = capsys.readouterr()
    assert "spanscope[line-profiler]" in captured.err and "never" not in captured.out


def test_scope_line_magic_keeps_the_regions_line_profiles(capsys):
    """%%scope_line runs its session with use_line_profiler=True, as
    scope-profiler's magic: the stored run carries each region's profile."""
    pytest.importorskip("IPython", reason="IPython (the notebook extra) is missing")
    from IPython.testing import globalipapp

    from spanscope.integrations.ipython_magics import ScopeMagics
    ip = globalipapp.get_ipython()
    ip.register_magics(ScopeMagics)
    magics = ip.magics_manager.registry["ScopeMagics"]
    cell = ("from spanscope import ProfileManager\n"
            "@ProfileManager.profile('compute')\n"
            "def compute(n):\n"
            "    total = 0\n"
            "    for i in range(n):\n"
            "        total += i * i\n"
            "    return total\n"
            "compute(100); compute(100)\n")
    try:
        ip.run_cell_magic("scope_line", "-q lines", cell)
        out = capsys.readouterr().out
        assert "Function: compute" in out
        rec = _record(magics._runs["lines"].line_profile[0], "compute", "compute")
        assert _hits(rec)[6] == 200  # "total += i * i", line 6 of the cell
    finally:
        magics._runs.pop("lines", None)
        if "lines" in magics._order:
            magics._order.remove("lines")


def test_the_terminal_browser_shows_line_profiles(tmp_path):
    """scope-profiler's test_line_profile_records_are_clickable, on a file
    with the record it writes: a region's "Line Profile" node, a rank's
    record with every line of the function."""
    from spanscope.integrations.tui import build_browser_model, node_detail_text
    src = tmp_path / "app.py"
    src.write_text("\n" * 10 + "    if enabled:\n        total = 0\n    done = True\n")
    path = _recorded(tmp_path)
    record = {"region": "solve", "filename": str(src), "function": "solve",
              "first_lineno": 10, "line_numbers": np.asarray([11, 13]),
              "hits": np.asarray([1, 5]), "times": np.asarray([10.0, 25.0]), "unit": 1e-9}
    with h5py.File(path, "a") as f:
        del f["rank0/line_profile"]
        write_line_profile(f["rank0"], [record])
    model = build_browser_model(path)

    def find(node, label):
        return next(c for c in node.children if c.label == label)

    solve = find(find(model.root, "Regions"), "solve")
    lines = find(solve, "Line Profile")
    assert "Function" in node_detail_text(lines)
    details = node_detail_text(find(lines, "Rank 0"))
    assert "Rank 0 | solve | solve" in details
    assert "Line" in details and "Hits" in details and "Time [s]" in details
    assert "----" not in details
    assert "11" in details and "1e-08" in details
    assert "if enabled:" in details and "    total = 0" in details
    assert "    if enabled:" not in details
    (row,) = [line for line in details.splitlines() if "total = 0" in line]
    assert [c.strip() for c in row.strip("│ ").split("│")][:5] == ["12", "", "", "", ""]


def test_run_line_profile_recursive_times_every_traced_function(tmp_path):
    """scope-profiler's run --line-profile with recursive tracing: every
    traced function's lines under its region (<module>.<qualname>), the
    explicit regions' through line_profiler, threads included."""
    script = tmp_path / "app.py"
    script.write_text(textwrap.dedent("""
        import threading
        from spanscope import ProfileManager

        def inner(n):
            t = 0
            for i in range(n):
                t += i
            return t

        @ProfileManager.profile("explicit")
        def outer():
            return inner(10) + inner(20)

        for _ in range(3):
            outer()
        th = threading.Thread(target=outer)
        th.start()
        th.join()
    """))
    out = tmp_path / "app.h5"
    p = subprocess.run([sys.executable, "-m", "spanscope", "run", "-q", "--line-profile",
                        "--recursive", "--exclude", "*.<module>", "-o", str(out), str(script)],
                       capture_output=True, text=True, env=_child_env(), cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    res = read_h5(out)
    records = res.line_profile[0]
    assert _hits(_record(records, "__main__.inner", "inner"))[8] == 4 * 10 + 4 * 20
    assert _hits(_record(records, "__main__.outer", "outer"))[13] == 4
    assert _hits(_record(records, "explicit", "outer"))[13] == 4
    assert not [r for r in records if r["function"] == "<module>"]  # excluded
    assert res["__main__.inner"][0].num_calls == 8


def test_results_held_in_python_keep_line_profiles_as_hdf5(tmp_path):
    """A JSON profile (or a merge) written as .h5 (write_h5_profile: what the
    C tool's subcommands read) keeps its line profiles."""
    from spanscope.results._jsonio import write_h5_profile
    path = _recorded(tmp_path)
    js = tmp_path / "run.json"
    spanscope.write_json(read_h5(path), js)
    back = write_h5_profile(spanscope.read_json(js), tmp_path / "again.h5")
    ours, again = read_h5(path).line_profile[0], read_h5(back).line_profile[0]
    assert [(r["region"], r["function"], r["hits"].tolist()) for r in again] == \
        [(r["region"], r["function"], r["hits"].tolist()) for r in ours]


def test_line_profiles_of_every_rank_under_mpirun(tmp_path):
    """Two ranks under mpirun, each its own calls: rank 0 writes every
    rank's records under rank<N>/line_profile of the one file."""
    import shutil
    pytest.importorskip("mpi4py", reason="mpi4py is not installed")
    from spanscope._base import mpi as _mpi
    mpirun = shutil.which("mpirun") or shutil.which("mpiexec")
    if mpirun is None or not _mpi.built_with_mpi():
        pytest.skip("no mpirun, or spanscope built without MPI")
    script = tmp_path / "ranks.py"
    script.write_text(textwrap.dedent("""
        import sys
        from spanscope import ProfileManager as PM
        PM.setup(file_path=sys.argv[1], use_line_profiler=True)
        rank = PM.get_config().rank

        @PM.profile("work")
        def work(n):
            t = 0
            for i in range(n):
                t += i
            return t

        for _ in range(rank + 1):
            work(10 * (rank + 1))
        PM.finalize(verbose=False)
    """))
    out = tmp_path / "ranks.h5"
    env = dict(_child_env(), OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_btl="self,vader", OMPI_MCA_btl_vader_single_copy_mechanism="none",
               OMPI_MCA_rmaps_base_oversubscribe="1", OMPI_MCA_mpi_yield_when_idle="1")
    p = subprocess.run([mpirun, "-n", "2", "--oversubscribe", sys.executable, str(script),
                        str(out)], capture_output=True, text=True, env=env, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    res = read_h5(out)
    assert sorted(res.line_profile) == [0, 1]
    assert _hits(_record(res.line_profile[0], "work", "work"))[11] == 10  # "t += i"
    assert _hits(_record(res.line_profile[1], "work", "work"))[11] == 2 * 20


def test_region_wrap_profiles_the_wrapped_function():
    """scope-profiler's LineProfilerRegion.wrap hands the function to
    line_profiler, as @profile does."""
    PM.setup(output=None, use_line_profiler=True)
    wrapped = PM.region("wrapped").wrap(squares)
    wrapped(6)
    wrapped(6)
    res = PM.finalize(verbose=False, return_results=True)
    assert _hits(_record(res.line_profile[0], "wrapped", "squares"))[
        _lines_of(squares, "acc += i")] == 12
