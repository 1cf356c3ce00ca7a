"""scope-profiler 0.7.5's analysis names on spanscope (issue 12, late
additions to parts 1, 4 and 5): inspect_file, collect_file_metadata,
write_metadata_json, create_html_report, collect_region_statistics,
write_region_statistics_json, the counter types and functions (another
issue: a clear error), and the results' line-profile / LIKWID gaps.

Modelled on scope-profiler's own tests (tests/test_inspection.py,
test_post_processing.py, test_html_report.py): the same sample files
(schema 1 written with h5py as they write them), files written by the real
scope-profiler in a child process and by spanscope's recorder; where the
real scope-profiler can answer the same question, spanscope's answer must
equal it.
"""
import inspect
import io
import json
import subprocess
import sys

import numpy as np
import pytest

import spanscope
from sample_files import scope_profiler_steps, write_schema1
from spanscope import ProfileManager

sp_ref = pytest.importorskip("scope_profiler")
h5py = pytest.importorskip("h5py")

NS = 1_000_000_000


# --------------------------------------------------------------------------
# files
# --------------------------------------------------------------------------

@pytest.fixture
def sample_file(tmp_path):
    """scope-profiler's sample: two ranks, a cheap and an expensive region,
    rich metadata."""
    path = tmp_path / "profiling_data.h5"
    write_schema1(path, {
        0: {"setup": ([0], [1 * NS]), "solve": ([2 * NS, 5 * NS], [4 * NS, 8 * NS])},
        1: {"setup": ([0], [3 * NS]), "solve": ([2 * NS, 5 * NS], [6 * NS, 9 * NS])},
    }, metadata={
        "timestamp": "2026-07-26T10:00:00", "user": "max", "hostname": "lrdn1234",
        "platform": "Linux-5.14.0-x86_64", "uname": "Linux lrdn1234 5.14.0 #1 SMP x86_64",
        "chip_information": "AMD EPYC 9654 96-Core Processor", "mpi_size": 2,
        "omp_num_threads": 8, "total_cores": 16,
        "modules": ["profile/base", "gcc/12.3.0", "python/3.11.7"],
        "SLURM_JOB_ID": "1234567", "SLURMD_NODENAME": "lrdn1234",
        "PATH": "/very/long/path" * 40, "VIRTUAL_ENV": "/home/max/.venv",
    })
    return path


@pytest.fixture(scope="module")
def sp_runs(tmp_path_factory):
    """Two files the real scope-profiler 0.7.5 wrote (labels "base", "new"),
    the regions' source captured."""
    return scope_profiler_steps(tmp_path_factory.mktemp("sp_runs"), ("base", "new"),
                                source=True)


def _record_spanscope(path, label=None):
    ProfileManager.setup(file_path=str(path), label=label)
    for i in range(3):
        with ProfileManager.region("step"):
            with ProfileManager.region("inner"):
                sum(range(1000 * (i + 1)))
            with ProfileManager.region("io"):
                pass
    ProfileManager.finalize(verbose=False)
    return path


# --------------------------------------------------------------------------
# the names and their signatures
# --------------------------------------------------------------------------

ANALYSIS = ("inspect_file", "collect_file_metadata", "create_html_report",
            "collect_region_statistics", "write_region_statistics_json",
            "plot_perf_events", "plot_roofline", "collect_roofline_points")


def test_every_analysis_name_of_scope_profiler_exists():
    # the MPI wrappers are another engineer's part of this issue
    mpi = {"MPIRegionMetadata", "ProfiledMPIComm", "ProfiledMPIRequest",
           "format_mpi_region", "message_nbytes", "parse_mpi_region", "profile_mpi4py",
           "profile_mpi_comm"}
    missing = [n for n in sp_ref.__all__ if n not in mpi and not hasattr(spanscope, n)]
    assert missing == []
    for n in ANALYSIS + ("LikwidRegionResult", "PerfEventError", "PerfEventTotals"):
        assert n in spanscope.__all__


@pytest.mark.parametrize("name", ANALYSIS)
def test_signatures_are_scope_profilers(name):
    ours = inspect.signature(getattr(spanscope, name)).parameters
    theirs = inspect.signature(getattr(sp_ref, name)).parameters
    assert list(ours) == list(theirs)
    for p in theirs:
        assert ours[p].kind == theirs[p].kind, p
        assert ours[p].default == theirs[p].default, p


def test_write_metadata_json_signature():
    from scope_profiler.inspection import write_metadata_json
    assert (list(inspect.signature(spanscope.write_metadata_json).parameters)
            == list(inspect.signature(write_metadata_json).parameters))


# --------------------------------------------------------------------------
# inspect_file
# --------------------------------------------------------------------------

def _printed(fn, *args, **kw) -> str:
    buf = io.StringIO()
    fn(*args, stream=buf, **kw)
    return buf.getvalue()


def test_inspect_prints_metadata_and_regions(sample_file):
    out = _printed(spanscope.inspect_file, sample_file)
    assert "profiling_data.h5" in out
    assert "2 rank(s), 2 region(s)" in out and "wall clock" in out
    assert "Metadata" in out
    assert "chip_information" in out and "AMD EPYC 9654" in out
    assert "SLURM_JOB_ID" in out and "1234567" in out and "VIRTUAL_ENV" in out
    assert "Modules (3)" in out and "    gcc/12.3.0" in out
    assert "['profile/base'" not in out
    assert "Regions (2)" in out
    assert "setup" in out and "solve" in out


def test_inspect_headline_and_metadata_match_scope_profilers(sample_file):
    """Everything before the region table is scope-profiler's text, line
    for line (the table is print_summary's, tested with the results API)."""
    ours = _printed(spanscope.inspect_file, sample_file, show_regions=False)
    theirs = _printed(sp_ref.inspect_file, sample_file, show_regions=False)
    assert ours == theirs
    ours = _printed(spanscope.inspect_file, sample_file, full=True, show_regions=False)
    theirs = _printed(sp_ref.inspect_file, sample_file, full=True, show_regions=False)
    assert ours == theirs


def test_inspect_headline_of_real_files(sp_runs, tmp_path):
    ours_file = _record_spanscope(tmp_path / "ours.h5", label="mine")
    for path in (sp_runs[0], ours_file):
        ours = _printed(spanscope.inspect_file, path, show_metadata=False).splitlines()[:3]
        theirs = _printed(sp_ref.inspect_file, path, show_metadata=False).splitlines()[:3]
        assert ours[1].startswith(("base - ", "mine - "))
        # the same ranks, regions, size; times to 6 digits
        assert ours == theirs


def test_long_metadata_values_are_clipped_unless_full(sample_file):
    clipped = _printed(spanscope.inspect_file, sample_file)
    full = _printed(spanscope.inspect_file, sample_file, full=True)
    assert "[…]" in clipped and "[…]" not in full
    assert len(full) > len(clipped)


def test_sorting_filters_and_sections(sample_file):
    def order(**kw):
        out = _printed(spanscope.inspect_file, sample_file, show_metadata=False, **kw)
        cells = [ln.split()[1] for ln in out.splitlines()  # "  │ solve (2x) ..."
                 if ln.startswith("  │ ") and len(ln.split()) > 1]
        return [c for c in cells if c in ("setup", "solve")]
    assert order(sort="total") == ["solve", "setup"]  # 13 s against 4 s
    assert order(sort="name") == ["setup", "solve"]
    out = _printed(spanscope.inspect_file, sample_file, include="solve")
    assert "Regions (1)" in out
    out = _printed(spanscope.inspect_file, sample_file, exclude="solve")
    assert "Regions (1)" in out and "setup" in out
    out = _printed(spanscope.inspect_file, sample_file, show_regions=False)
    assert "Metadata" in out and "Regions" not in out
    out = _printed(spanscope.inspect_file, sample_file, show_metadata=False)
    assert "Metadata" not in out and "Regions" in out
    with pytest.raises(ValueError, match="sort"):
        spanscope.inspect_file(sample_file, sort="fastest", stream=io.StringIO())


def test_source_prints_captured_call_site(tmp_path):
    path = tmp_path / "src.h5"
    write_schema1(path, {0: {"solve": ([0], [NS])}}, sources={
        "solve": ("kernels.py", 12, 'with ProfileManager.profile_region("solve"):\n    x()\n')})
    out = _printed(spanscope.inspect_file, path, source=["solve", "nope"])
    assert "Source (2)" in out
    assert "solve  (kernels.py:12)" in out
    assert 'with ProfileManager.profile_region("solve")' in out
    assert "'nope': no such region" in out


def test_inspect_missing_and_corrupt_files(tmp_path):
    with pytest.raises(FileNotFoundError):
        spanscope.inspect_file(tmp_path / "none.h5")
    bad = tmp_path / "bad.h5"
    bad.write_bytes(b"not hdf5 at all")
    with pytest.raises(spanscope.CorruptProfileError):
        spanscope.inspect_file(bad, stream=io.StringIO())


# --------------------------------------------------------------------------
# collect_file_metadata / write_metadata_json
# --------------------------------------------------------------------------

def test_collect_file_metadata_is_scope_profilers(sample_file, sp_runs, tmp_path):
    ours_file = _record_spanscope(tmp_path / "ours.h5")
    for path in (sample_file, sp_runs[0], ours_file):
        assert spanscope.collect_file_metadata(path) == sp_ref.collect_file_metadata(path)
    several = spanscope.collect_file_metadata([sample_file, spanscope.read_h5(sp_runs[1])])
    assert [f["num_ranks"] for f in several["files"]] == [2, 1]
    assert several["files"][1]["metadata"]["label"] == "new"
    json.dumps(several)  # JSON-ready values


def test_write_metadata_json(sample_file, tmp_path):
    out = tmp_path / "deep" / "meta.json"
    payload = spanscope.write_metadata_json(sample_file, out)
    assert json.loads(out.read_text()) == payload
    assert payload["files"][0]["metadata"]["modules"][1] == "gcc/12.3.0"


# --------------------------------------------------------------------------
# collect_region_statistics / write_region_statistics_json
# --------------------------------------------------------------------------

def _approx_payload(a, b):
    """a == b with floats compared to 1e-12 relative."""
    if isinstance(a, dict):
        assert isinstance(b, dict) and list(a) == list(b)
        for k in a:
            _approx_payload(a[k], b[k])
    elif isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b)
        for x, y in zip(a, b):
            _approx_payload(x, y)
    elif isinstance(a, float):
        assert a == pytest.approx(b, rel=1e-12, abs=1e-18)
    else:
        assert a == b


def test_region_statistics_are_scope_profilers(sample_file, sp_runs, tmp_path):
    ours_file = _record_spanscope(tmp_path / "ours.h5")
    for path in (sample_file, sp_runs[0], ours_file):
        ours = spanscope.collect_region_statistics(spanscope.read_h5(path))
        theirs = sp_ref.collect_region_statistics(sp_ref.read_h5(path))
        _approx_payload(ours, theirs)
    both = [spanscope.read_h5(p) for p in sp_runs]
    _approx_payload(spanscope.collect_region_statistics(both, ranks=0, include="s"),
                    sp_ref.collect_region_statistics([sp_ref.read_h5(p) for p in sp_runs],
                                                     ranks=0, include="s"))


def test_region_statistics_numbers(sample_file):
    p = spanscope.collect_region_statistics(sample_file)
    solve = p["files"][0]["region_statistics"]["solve"]
    assert solve["count"] == 4
    assert solve["total_duration_seconds"] == pytest.approx(13.0)
    assert solve["min_duration_seconds"] == pytest.approx(2.0)
    assert solve["max_duration_seconds"] == pytest.approx(4.0)
    assert solve["first_duration_seconds"] == pytest.approx(2.0)
    assert solve["per_rank"]["1"]["total_duration_seconds"] == pytest.approx(8.0)
    assert p["common_regions"] == ["setup", "solve"]
    one = spanscope.collect_region_statistics(sample_file, ranks=[1])
    assert list(one["files"][0]["region_statistics"]["solve"]["per_rank"]) == ["1"]
    assert one["filters"]["ranks"] == [1]


def test_region_statistics_inputs_and_errors(sample_file, tmp_path):
    by_path = spanscope.collect_region_statistics(sample_file)
    by_model = spanscope.collect_region_statistics(spanscope.read(sample_file))
    assert by_path == by_model
    with pytest.raises(ValueError, match="labels"):
        spanscope.collect_region_statistics([sample_file], labels=["a", "b"])
    with pytest.raises(ValueError, match="No profiling data"):
        spanscope.collect_region_statistics([])
    with pytest.raises(TypeError):
        spanscope.collect_region_statistics(42)


def test_write_region_statistics_json(sample_file, tmp_path):
    out = tmp_path / "stats" / "s.json"
    payload = spanscope.write_region_statistics_json(sample_file, out, labels=["run"])
    doc = json.loads(out.read_text())
    assert doc["format"] == "scope-profiler-plot-data"
    assert doc["plot"] == "region_statistics"
    assert doc["files"][0]["label"] == "run"
    assert doc["files"] == payload["files"]


def test_statistics_helpers_need_no_matplotlib(sample_file):
    code = ("import sys; sys.modules['matplotlib'] = None\n"
            "import spanscope\n"
            f"p = spanscope.collect_region_statistics({str(sample_file)!r})\n"
            "print(p['files'][0]['region_statistics']['solve']['count'])\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "4"


# --------------------------------------------------------------------------
# create_html_report
# --------------------------------------------------------------------------

def test_html_report_of_one_run(tmp_path):
    run = _record_spanscope(tmp_path / "ours.h5")
    out = spanscope.create_html_report(spanscope.read_h5(run), tmp_path / "r" / "report.html")
    assert out == tmp_path / "r" / "report.html"
    page = out.read_text()
    assert page.lstrip().lower().startswith("<!doctype html")
    for name in ("step", "inner", "io"):
        assert name in page
    assert "<script src=" not in page  # self-contained


def test_html_comparison_and_individual_reports(sp_runs, tmp_path):
    out = spanscope.create_html_report(sp_runs, tmp_path / "cmp.html")
    page = out.read_text()
    assert "base" in page and "new" in page
    for name in ("step", "assemble", "solve"):
        assert name in page
    assert (tmp_path / "cmp-0-base.html").is_file()
    assert (tmp_path / "cmp-1-new.html").is_file()
    assert page != (tmp_path / "cmp-0-base.html").read_text()
    out2 = spanscope.create_html_report(sp_runs, tmp_path / "only.html",
                                        individual_reports=False)
    assert out2.is_file() and not (tmp_path / "only-0-base.html").exists()


def test_html_report_takes_scope_profilers_options(sp_runs, tmp_path):
    # once NotImplementedError; now the C page takes them (test_html_options.py
    # checks what each does)
    for kw in ({"include": "solve"}, {"ranks": [0]}, {"columns": ["total"]},
               {"charts_cdn": True}, {"include_charts": False}, {"scaling": "weak"},
               {"speedup_x": "ranks"}, {"sort": "total"}):
        out = spanscope.create_html_report(sp_runs[0], tmp_path / "x.html", **kw)
        assert out.is_file()
    with pytest.raises(ValueError, match="scaling"):
        spanscope.create_html_report(sp_runs[0], tmp_path / "y.html", scaling="sideways")
    # as scope-profiler: speedup_x is checked for a comparison only
    spanscope.create_html_report(sp_runs[0], tmp_path / "y.html", speedup_x="moons")
    with pytest.raises(ValueError, match="speedup_x"):
        spanscope.create_html_report(sp_runs, tmp_path / "z.html", speedup_x="moons")
    assert not (tmp_path / "z.html").exists()


def test_html_report_bad_inputs(sp_runs, tmp_path):
    with pytest.raises(FileNotFoundError):
        spanscope.create_html_report(tmp_path / "none.h5", tmp_path / "x.html")
    with pytest.raises(TypeError):
        spanscope.create_html_report(42, tmp_path / "x.html")
    with pytest.raises(ValueError):
        spanscope.create_html_report([], tmp_path / "x.html")
    bad = tmp_path / "bad.h5"
    bad.write_bytes(b"\x89HDF\r\n\x1a\n truncated")
    with pytest.raises(spanscope.CorruptProfileError):
        spanscope.create_html_report([sp_runs[0], bad], tmp_path / "x.html")
    assert not (tmp_path / "x.html").exists()


# --------------------------------------------------------------------------
# counters (another issue): the types exist, the functions say why not
# --------------------------------------------------------------------------

def test_counter_types_work_in_users_code():
    r = spanscope.LikwidRegionResult(tag="solve", event_names=["A", "A", "B"],
                                     counter_names=["PMC0", "PMC1", "PMC2"])
    assert isinstance(r, spanscope.LikwidRegionResult)
    assert r.event_labels == ["A:PMC0", "A:PMC1", "B"]
    assert r.as_dict()["tag"] == "solve"
    t = spanscope.PerfEventTotals(calls=3, values={"cycles": 10})
    assert t.calls == 3 and t.values["cycles"] == 10
    with pytest.raises(spanscope.PerfEventError):
        raise spanscope.PerfEventError("denied")
    assert issubclass(spanscope.PerfEventError, RuntimeError)


# (the LIKWID roofline: tests/python/test_likwid.py)
def test_perf_event_plot_of_a_file_without_counters_says_so(sample_file):
    # perf events are read (tests/python/test_perf_events.py): none here
    assert spanscope.plots.available_perf_event_metrics(spanscope.read_h5(sample_file)) == []
    with pytest.raises(ValueError, match="recorded perf-event data"):
        spanscope.plot_perf_events(spanscope.read_h5(sample_file))


# --------------------------------------------------------------------------
# results gaps: line_profile and read_h5_summary's include_*
# --------------------------------------------------------------------------

#: one line-profiler record of region "solve", as a use_line_profiler run
#: stores it (results/_lines.py: scope-profiler's layout)
_LINE_RECORD = {"region": "solve", "filename": "k.py", "function": "kernel",
                "first_lineno": 10, "line_numbers": np.array([11, 12, 14], dtype=np.int64),
                "hits": np.array([1, 40, 40], dtype=np.int64),
                "times": np.array([5.0, 700.0, 300.0]), "unit": 1e-6,
                "source": "def kernel():\n    x = 0\n    for i in range(40):\n"
                          "        pass\n        x += i",
                "source_first_lineno": 10}


def _with_groups(src, dst, *groups):
    """A copy of scope-profiler's file src with rank0/<group> groups added
    as its writer lays them out: "line_profile" one full record
    (_LINE_RECORD), "line_profile_partial" a record group holding only
    line_numbers (not scope-profiler's layout), "likwid" one region."""
    import shutil
    from spanscope.results import write_line_profile
    shutil.copyfile(src, dst)
    with h5py.File(dst, "a") as f:
        r0 = f.require_group("rank0")
        for g in groups:
            if g == "line_profile":
                write_line_profile(r0, [_LINE_RECORD])
            elif g == "line_profile_partial":
                x = r0.create_group("line_profile").create_group("0")
                x.attrs["region"], x.attrs["filename"] = "solve", "k.py"
                x.create_dataset("line_numbers", data=np.arange(3, dtype=np.int64))
            elif g == "likwid":  # scope-profiler's layout, one region
                from spanscope.results import LikwidRegionResult, write_likwid_results
                write_likwid_results(r0, [LikwidRegionResult(
                    tag="solve", group_name="CLOCK", cpus=[0], times=np.array([0.5]),
                    call_counts=np.array([4]), event_names=["INSTR_RETIRED_ANY"],
                    events=np.array([[10.0]]))])
    return dst


def _check_line_record(records):
    """records (one rank's) are _LINE_RECORD, read back whole."""
    assert len(records) == 1
    got = records[0]
    assert got["region"] == "solve" and got["function"] == "kernel"
    assert got["filename"] == "k.py" and got["first_lineno"] == 10
    assert got["line_numbers"].tolist() == [11, 12, 14]
    assert got["hits"].tolist() == [1, 40, 40]
    assert got["times"].tolist() == [5.0, 700.0, 300.0] and got["unit"] == 1e-6
    assert got["source"] == _LINE_RECORD["source"] and got["source_first_lineno"] == 10


def test_line_profiles_are_read_by_every_reader(sp_runs, tmp_path):
    plain = spanscope.read_h5(sp_runs[0])
    assert plain.line_profile == {}
    path = _with_groups(sp_runs[0], tmp_path / "lp.h5", "line_profile")
    res = spanscope.read_h5(path)
    assert res["solve"][0].num_calls == 4  # the timing is read as before
    assert list(res.line_profile) == [0]
    assert res.line_profile[0][0]["region"] == "solve"
    _check_line_record(res.line_profile[0])
    # the groups alone (spanscope's top-level names: results/_lines.py's)
    _check_line_record(spanscope.read_line_profile_file(path)[0])
    assert spanscope.read_line_profile_file(sp_runs[0]) == {}
    assert {"print_line_profile", "read_line_profile_file",
            "write_line_profile"} <= set(spanscope.__all__)
    s = spanscope.read_h5_summary(path)  # include_line_profile=True by default
    assert s["solve"][0].num_calls == 4
    _check_line_record(s.line_profile[0])
    assert spanscope.read_h5_summary(path, ranks=[0]).line_profile[0][0]["region"] == "solve"
    assert spanscope.read_h5_summary(path, ranks=[1]).line_profile == {}
    for off in (False, None):
        s = spanscope.read_h5_summary(path, include_line_profile=off)
        assert s["solve"][0].num_calls == 4 and s.line_profile == {}
    # a merge carries them, rank by rank, with the other set's (none) added
    merged = spanscope.merge_results(res)
    _check_line_record(merged.line_profile[0])
    both = spanscope.merge_results(res, spanscope.ProfilingResults(
        {}, line_profile={0: [dict(_LINE_RECORD, region="other")]}))
    assert [r["region"] for r in both.line_profile[0]] == ["solve", "other"]


def test_a_partial_line_profile_group_is_corrupt(sp_runs, tmp_path):
    """A record group holding only line_numbers is not scope-profiler's
    layout: every reader says so, naming the group, rather than showing
    line profiles of no hits or times."""
    path = _with_groups(sp_runs[0], tmp_path / "partial.h5", "line_profile_partial")
    with pytest.raises(spanscope.CorruptProfileError, match="rank0/line_profile/0.*hits"):
        spanscope.read_h5(path)
    with pytest.raises(spanscope.CorruptProfileError, match="rank0/line_profile/0"):
        spanscope.read_h5_summary(path)
    # without its line profiles, the summary still reads
    s = spanscope.read_h5_summary(path, include_line_profile=False)
    assert s["solve"][0].num_calls == 4 and s.line_profile == {}


def test_read_h5_summary_include_likwid(sp_runs, tmp_path):
    assert spanscope.read_h5_summary(sp_runs[0], include_likwid=True,
                                     include_line_profile=True)["step"][0].num_calls == 4
    path = _with_groups(sp_runs[0], tmp_path / "lk.h5", "likwid")
    s = spanscope.read_h5_summary(path)  # include_likwid=True: read
    assert s.get_likwid_region("solve").call_counts.tolist() == [4]
    for off in (False, None):
        s = spanscope.read_h5_summary(path, include_likwid=off)
        assert s["step"][0].num_calls == 4 and not s.has_likwid
    # inspect prints the LIKWID table; collect_file_metadata reads without it
    out = _printed(spanscope.inspect_file, path)
    assert "LIKWID counters (rank 0, group CLOCK)" in out and "not shown" not in out
    assert spanscope.collect_file_metadata(path)["files"][0]["num_ranks"] == 1


def test_schema1_file_with_line_profile(tmp_path):
    path = tmp_path / "old.h5"
    write_schema1(path, {0: {"solve": ([0], [NS])}})
    from spanscope.results import write_line_profile
    with h5py.File(path, "a") as f:
        write_line_profile(f["rank0"], [_LINE_RECORD])
    res = spanscope.read_h5(path)
    assert res["solve"][0].num_calls == 1
    assert res.line_profile[0][0]["region"] == "solve"
    _check_line_record(res.line_profile[0])
    _check_line_record(spanscope.read_h5_summary(path).line_profile[0])  # read whole
    assert spanscope.read_h5_summary(path, include_line_profile=False).line_profile == {}
    # an empty record group in a schema-1 file: corrupt, as in any schema
    with h5py.File(path, "a") as f:
        f["rank0/line_profile"].create_group("1")
    with pytest.raises(spanscope.CorruptProfileError, match="line_profile/1"):
        spanscope.read_h5(path)


def test_html_report_of_results_in_memory(sp_runs, tmp_path):
    """Results with no file behind them -- merged, built in memory -- get a
    report too (scope-profiler renders any results), with their regions."""
    import re
    merged = spanscope.merge_results(spanscope.read_h5(sp_runs[0]), file_path="")
    out = spanscope.create_html_report(merged, tmp_path / "merged.html")
    page = out.read_text()
    names = list(spanscope.read_h5(sp_runs[0]).region_names)
    assert names and all(n in page for n in names)
    part = spanscope.ProfilingResults({n: merged[n] for n in names[:1]})
    out2 = spanscope.create_html_report([part, merged], tmp_path / "both.html",
                                        individual_reports=False)
    assert out2.is_file() and re.search(re.escape(names[0]), out2.read_text())
    assert not list(tmp_path.glob("run-*.json")), "the scratch files stay private"
