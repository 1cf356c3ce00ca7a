"""The text of ProfilingResults.print_summary and inspect_file: the same as
scope-profiler 0.7.5 prints for the same file (its summary.py: the rounded
box, tree rows, "(own)" rows, ↻ rows and note, Info box), compared line
for line on files the real scope-profiler wrote and files spanscope
wrote, each read by both libraries.  The one intended difference, the
Info box's command hints (spanscope names its own subcommands), is taken
out before comparing (``_normalize``), and so is the box's right padding,
which follows the longest note.

Modelled on scope-profiler's tests/test_results_api.py and
test_inspection.py: results read from files and built in memory, printed
to a stream.
"""

import io
import re
import textwrap

import numpy as np
import pytest

import spanscope
from sample_files import run_script, write_schema1
from spanscope import MPIRegion, ProfileManager, ProfilingResults, Region

h5py = pytest.importorskip("h5py")
try:
    import scope_profiler as sp_ref
except Exception as exc:  # pragma: no cover - depends on the environment
    sp_ref = None
    _NO_REF = f"scope_profiler 0.7.5 does not import here ({exc!r}): nothing to compare with"
else:
    _NO_REF = ""
needs_ref = pytest.mark.skipif(sp_ref is None, reason=_NO_REF or "scope_profiler present")

NS = 1_000_000_000

_GEN = textwrap.dedent('''
    import sys, threading
    from scope_profiler import ProfileManager as PM
    out, kind = sys.argv[1], sys.argv[2]

    def fib(n):
        with PM.profile_region("fib"):
            return n if n < 2 else fib(n - 1) + fib(n - 2)

    def body():
        with PM.profile_region("main"):
            for i in range(4):
                with PM.profile_region("step"):
                    with PM.profile_region("work"):
                        sum(range(4000 * (i + 1)))
                    with PM.profile_region("io"):
                        sum(range(500))
            fib(4)
        with PM.profile_region("work"):
            pass

    if kind == "session":
        with PM.session(file_path=out, verbose=False):
            body()
    elif kind == "threads":
        PM.setup(file_path=out, track_threads=True)
        def worker():
            with PM.profile_region("worker"):
                sum(range(20000))
        with PM.profile_region("main"):
            ts = [threading.Thread(target=worker) for _ in range(3)]
            [t.start() for t in ts]
            [t.join() for t in ts]
        PM.finalize(verbose=False)
    else:
        PM.setup(file_path=out)
        body()
        PM.finalize(verbose=False)
''')


def _record_ours(path, session_root=False):
    """The program of _GEN recorded by spanscope; session_root wraps it in
    a region named as scope-profiler's session root (so that both
    libraries print % session)."""
    def fib(n):
        with ProfileManager.profile_region("fib"):
            return n if n < 2 else fib(n - 1) + fib(n - 2)

    ProfileManager.setup(file_path=str(path))
    root = ProfileManager.profile_region("scope_profiler.session") if session_root else None
    if root is not None:
        root.__enter__()
    with ProfileManager.profile_region("main"):
        for i in range(4):
            with ProfileManager.profile_region("step"):
                with ProfileManager.profile_region("work"):
                    sum(range(4000 * (i + 1)))
                with ProfileManager.profile_region("io"):
                    sum(range(500))
        fib(4)
    with ProfileManager.profile_region("work"):
        pass
    if root is not None:
        root.__exit__(None, None, None)
    ProfileManager.finalize(verbose=False)
    return path


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """name -> path: three files the real scope-profiler wrote (plain,
    session, threads), two spanscope wrote, two schema-1 files of two
    ranks (one nested, one whose calls overlap without nesting)."""
    d = tmp_path_factory.mktemp("summary_text")
    out = {}
    if sp_ref is not None:
        kinds = ("plain", "session", "threads")
        run_script(_GEN, d, [(d / f"sp_{kind}.h5", kind) for kind in kinds])
        out.update({f"sp_{kind}": d / f"sp_{kind}.h5" for kind in kinds})
    ProfileManager._reset()
    out["ours"] = _record_ours(d / "ours.h5")
    ProfileManager._reset()
    out["ours_session"] = _record_ours(d / "ours_session.h5", session_root=True)
    ProfileManager._reset()
    out["two_ranks"] = write_schema1(d / "two_ranks.h5", {
        0: {"scope_profiler.session": ([0], [20 * NS]), "setup": ([0], [1 * NS]),
            "solve": ([2 * NS, 5 * NS], [4 * NS, 8 * NS]),
            "inner": ([2 * NS + 1, 6 * NS], [3 * NS, 7 * NS]), "never": ([], [])},
        1: {"scope_profiler.session": ([0], [18 * NS]), "setup": ([0], [1 * NS]),
            "solve": ([2 * NS, 5 * NS], [6 * NS, 9 * NS]),
            "inner": ([2 * NS + 1], [2 * NS + 5])}})
    out["overlapping"] = write_schema1(d / "overlapping.h5", {
        0: {"setup": ([0], [3 * NS]), "solve": ([2 * NS], [6 * NS])}})
    return out


def _normalize(text: str) -> str:
    """text without the Info box's command hints (the lines indented
    inside it) and without the box's right padding."""
    out, info = [], False
    for line in text.splitlines():
        if line.startswith("  ╭─ Info"):
            info = True
            out.append("  ╭─ Info")
        elif info and line.startswith("  ╰"):
            info = False
            out.append("  ╰")
        elif info:
            body = line[4:].rstrip().removesuffix("│").rstrip()
            if not body.startswith("  "):
                out.append(body)
        else:
            out.append(line)
    return "\n".join(out)


_NUMBER = re.compile(r"\d+(?:\.\d+)?(?:e[+-]\d+)?")


def assert_same_text(ours: str, theirs: str) -> None:
    """The same text once normalized, the numbers aside: those must have
    the same digits' layout and agree to the last digit printed (floating
    sums in seconds, scope-profiler's, and in integer ns, ours, can round
    a last digit apart)."""
    a, b = _normalize(ours), _normalize(theirs)
    assert _NUMBER.sub(lambda m: re.sub(r"\d", "9", m.group()), a) == \
        _NUMBER.sub(lambda m: re.sub(r"\d", "9", m.group()), b), (a, b)
    for x, y in zip(_NUMBER.findall(a), _NUMBER.findall(b)):
        last = 10.0 ** -len(x.split("e")[0].partition(".")[2])
        scale = 10.0 ** int(x.split("e")[1]) if "e" in x else 1.0
        assert abs(float(x) - float(y)) <= 1.01 * last * scale, (x, y, a, b)


def _summary(lib, path, **kw) -> str:
    buf = io.StringIO()
    lib.read_profile(path).print_summary(stream=buf, **kw)
    return buf.getvalue()


def _inspect(lib, path, **kw) -> str:
    buf = io.StringIO()
    lib.inspect_file(path, stream=buf, show_metadata=False, **kw)
    return buf.getvalue()


ALL_COLUMNS = ["region", "ranks", "calls", "total", "percent", "parent_percent", "avg",
               "min", "max", "first", "last", "std", "p50", "p95", "p99", "imbalance"]
VARIANTS = [{}, {"sort": "total"}, {"sort": "name"}, {"sort": "calls"}, {"sort": "p99"},
            {"columns": ALL_COLUMNS}, {"columns": "calls"}, {"include": "work|step"},
            {"exclude": "io"}, {"exclude": "step"}, {"ranks": [0]}, {"ranks": [1]},
            {"percentage_mode": "exclusive"}, {"include": "work", "percentage_mode":
                                               "exclusive", "columns": ALL_COLUMNS}]
FILES = ["sp_plain", "sp_session", "sp_threads", "ours", "ours_session", "two_ranks",
         "overlapping"]


@needs_ref
@pytest.mark.parametrize("name", FILES)
@pytest.mark.parametrize("kw", VARIANTS, ids=lambda kw: ",".join(f"{k}={v}" for k, v in
                                                                  kw.items()) or "default")
def test_print_summary_is_scope_profilers(files, name, kw):
    theirs = _summary(sp_ref, files[name], **kw)
    ours = _summary(spanscope, files[name], **kw)
    assert_same_text(ours, theirs)


@needs_ref
@pytest.mark.parametrize("name", FILES)
def test_print_summary_title_and_suppress_notes_are_scope_profilers(files, name):
    for kw in ({"title": "my run"}, {"suppress_notes": True}):
        assert_same_text(_summary(spanscope, files[name], **kw),
                         _summary(sp_ref, files[name], **kw))


@needs_ref
@pytest.mark.parametrize("name", FILES)
@pytest.mark.parametrize("kw", [{}, {"sort": "total"}, {"include": "step|work"},
                                {"columns": ALL_COLUMNS}])
def test_inspect_file_is_scope_profilers(files, name, kw):
    theirs = _inspect(sp_ref, files[name], **kw).splitlines()
    ours = _inspect(spanscope, files[name], **kw).splitlines()
    # the headline (file, sizes, times) is compared in test_analysis_names
    assert_same_text("\n".join(ours[4:]), "\n".join(theirs[4:]))
    assert ours[0] == theirs[0] and ours[3] == theirs[3]


@needs_ref
def test_box_is_tabulates_with_scope_profilers_format():
    """The box is drawn here, not by tabulate (not a spanscope dependency):
    the same lines as tabulate with scope-profiler's TableFormat."""
    tabulate = pytest.importorskip("tabulate")
    from scope_profiler.summary import _REGION_TABLE_FORMAT

    from spanscope.results._table import box_lines
    headers = ["region", "% session", "total [s]", "n"]
    table = [["main", "100.00%", "1.000000", "1"],
             ["└─ (own)", "   0.01%", "   0.000100", ""],
             ["│ └─ fib ↻ (1.5kx)", "     -", "     0.000000", "1.5k"],
             ["a rather long region name", "-", "-", "12"]]
    want = tabulate.tabulate(table, headers=headers, tablefmt=_REGION_TABLE_FORMAT,
                             disable_numparse=True, preserve_whitespace=True).splitlines()
    assert box_lines(headers, table) == want


# --------------------------------------------------------------------------
# the layout, asserted without scope-profiler
# --------------------------------------------------------------------------

def _in_memory():
    return ProfilingResults({
        "scope_profiler.session": MPIRegion(
            "scope_profiler.session", {0: Region(np.array([0]), np.array([100 * NS]))}),
        "outer": MPIRegion("outer", {0: Region(np.array([10, 50]) * NS,
                                               np.array([40, 90]) * NS)}),
        "fib": MPIRegion("fib", {0: Region(np.array([12, 14, 60]) * NS,
                                           np.array([30, 20, 70]) * NS)}),
        "late": MPIRegion("late", {0: Region(np.array([95]) * NS, np.array([99]) * NS)}),
    })


def _text(results, **kw) -> str:
    buf = io.StringIO()
    results.print_summary(stream=buf, **kw)
    return buf.getvalue()


def _cells(text: str) -> list[list[str]]:
    """The table's rows (below the header rule) as stripped cells."""
    lines = text.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith("  ├")) + 1
    end = next(i for i, ln in enumerate(lines) if ln.startswith("  ╰"))
    return [[c.strip() for c in ln[3:-1].split("  ") if c.strip()]
            for ln in lines[start:end]]


def test_tree_rows_own_rows_and_recursion():
    out = _text(_in_memory())
    lines = out.splitlines()
    assert lines[0].startswith("  ╭") and lines[0].endswith("╮")
    assert lines[1].startswith("  │ region") and "% session" in lines[1]
    assert lines[1].index("% session") < lines[1].index("total [s]")
    assert _cells(out) == [
        ["scope_profiler.session", "100.00%", "100.000000"],
        ["└─ (own)", "26.00%", "26.000000"],
        ["└─ outer (2x)", "70.00%", "70.000000"],
        ["│ └─ (own)", "42.00%", "42.000000"],
        ["│ └─ fib ↻ (3x)", "28.00%", "28.000000"],
        ["└─ late", "4.00%", "4.000000"]]
    assert "│ ↻ Recursive rows pool every level of the recursion" in out
    assert "% session uses wall-clock coverage" in out
    assert out.endswith("╯\n\n")


def test_sort_keys_other_than_start_sort_flat():
    out = _text(_in_memory(), sort="total", suppress_notes=True)
    names = [row[0] for row in _cells(out)]
    assert names == ["scope_profiler.session", "└─ (own)", "└─ outer (2x)", "│ └─ (own)",
                     "│ └─ fib ↻ (3x)", "└─ late"]
    out = _text(_in_memory(), sort="name", suppress_notes=True)
    assert [row[0] for row in _cells(out)] == [
        "│ └─ fib ↻ (3x)", "└─ late", "└─ outer (2x)", "│ └─ (own)",
        "scope_profiler.session", "└─ (own)"]
    with pytest.raises(ValueError, match="unknown sort key"):
        _text(_in_memory(), sort="fastest")


def test_columns_include_exclude_ranks():
    res = _in_memory()
    out = _text(res, columns=["region", "calls", "avg", "min", "max", "imbalance"])
    header = out.splitlines()[1]
    for h in ("n", "avg/call [s]", "min [s]", "max [s]", "imbalance [%]"):
        assert h in header
    assert "(3x)" not in out  # a calls column: no inline counts
    assert ["│ └─ fib ↻", "3", "1.133e+01", "6.000", "18.000", "0.00"] in _cells(out)
    out = _text(res, include="fib|outer")  # no session row: no % session column
    assert "% session" not in out and _cells(out) == [
        ["outer (2x)", "70.000000"], ["└─ (own)", "42.000000"], ["└─ fib ↻ (3x)", "28.000000"]]
    # a hidden child ("late") keeps its time out of its parent's (own)
    out = _text(res, include="scope_profiler.session|outer", suppress_notes=True)
    assert _cells(out) == [["scope_profiler.session", "100.00%", "100.000000"],
                           ["└─ (own)", "26.00%", "26.000000"],
                           ["└─ outer (2x)", "70.00%", "70.000000"]]
    out = _text(res, exclude="fib", suppress_notes=True)  # no child shown: no (own) row
    assert ["└─ outer (2x)", "70.00%", "70.000000"] in _cells(out)
    assert not any(row[0] == "│ └─ (own)" for row in _cells(out))
    assert _text(res, ranks=[5]).count("(0x)") == 4
    assert "Regions shown without timing recorded no calls" in _text(res, ranks=[5])
    with pytest.raises(ValueError, match="Unknown region summary column"):
        _text(res, columns=["bogus"])
    with pytest.raises(ValueError, match="percentage_mode"):
        _text(res, percentage_mode="share")


def test_exclusive_percentage_mode():
    out = _text(_in_memory(), percentage_mode="exclusive")
    rows = _cells(out)
    assert rows[0] == ["scope_profiler.session", "100.00%", "100.000000"]
    assert ["└─ outer (2x)", "42.00%", "70.000000"] in rows
    assert "% session uses exclusive time for each region." in out


def test_two_ranks_per_rank_filters_and_imbalance(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the title's relative path stays short (xdist's folders are deeper)
    path = write_schema1(tmp_path / "r.h5", {
        0: {"solve": ([0], [2 * NS]), "setup": ([3 * NS], [4 * NS])},
        1: {"solve": ([0], [6 * NS])}})
    res = spanscope.read_h5(path)
    out = _text(res, columns=["region", "ranks", "calls", "total", "imbalance"])
    assert _cells(out) == [["solve", "2", "2", "8.000000", "50.00"],
                           ["setup", "1", "1", "1.000000", "0.00"]]
    out = _text(res, columns=["region", "ranks", "calls", "total"], ranks=[1])
    assert _cells(out) == [["solve", "1", "1", "6.000000"], ["setup", "0", "0", "-"]]
    assert re.search(r"│ Summary: \S*r\.h5 \(2 ranks\) ", _text(res))
    assert re.search(r"│   Inspect: spanscope inspect \S*r\.h5 ", _text(res))


def test_no_escape_codes_on_a_terminal_or_not():
    class Tty(io.StringIO):
        def isatty(self):
            return True

    for stream in (io.StringIO(), Tty()):
        _in_memory().print_summary(stream=stream)
        assert "\x1b" not in stream.getvalue() and "╭" in stream.getvalue()


def test_empty_and_non_root_results(capsys):
    empty = ProfilingResults({})
    empty.print_summary(title="nothing")
    assert capsys.readouterr().out == "nothing\n  (no regions recorded)\n"
    res = _in_memory()
    res._is_root = False
    res.print_summary()
    assert capsys.readouterr().out == ""


def test_inspect_counts_the_table_rows(files):
    out = _inspect(spanscope, files["ours"])
    assert "Summary: Regions (6)" in out  # main, step, work, io, fib, work at the root
    assert "Inspect: spanscope inspect" in out
