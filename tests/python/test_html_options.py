"""create_html_report's options and `spanscope html`'s flags (issue 12): the
page is written in C (sps_html_write_files) and takes scope-profiler
0.7.5's options: include/exclude (re.match patterns), ranks, sort,
columns, include_charts, charts_cdn, scaling and speedup_x.

Modelled on scope-profiler's own tests/test_html_report.py: the same sample
files (schema 1 written with h5py as its _write_sample_h5 writes them:
sample_files.write_schema1, its
_scaling_profiles for run sizes), the same calls and the same expected
numbers (speedup 1, 2, 4 for a problem split over 1, 2, 4 ranks; weak
efficiency 1, 0.8, 0.5 for 40, 50, 80), and where the real scope-profiler
answers the same question (which regions a pattern selects, the order of a
sort key, a region's rank imbalance) spanscope's page must agree with it.
Every page is parsed with html.parser (tags balanced) and its JSON blob
with json.
"""
import json
import re
import subprocess
from html.parser import HTMLParser

import numpy as np
import pytest

import spanscope
from sample_files import scope_profiler_steps, write_schema1
from spanscope import ProfileManager

sp_ref = pytest.importorskip("scope_profiler")
h5py = pytest.importorskip("h5py")

NS = 1_000_000_000
VOID = {"meta", "br", "img", "input", "link", "hr", "circle", "line", "rect", "polyline",
        "path"}


# --------------------------------------------------------------------------
# files and page helpers
# --------------------------------------------------------------------------

def _scaling_profiles(tmp_path, rank_counts, threads=None, nodes=None, work=80):
    """scope-profiler's: one profile per rank count, solve's work split over
    the ranks (work // count), setup fixed."""
    paths = []
    for index, count in enumerate(rank_counts):
        path = tmp_path / f"r{index}.h5"
        metadata = {"omp_num_threads": threads[index]} if threads else {}
        if nodes:
            metadata["num_nodes"] = nodes[index]
        write_schema1(path, {
            rank: {"setup": ([0], [10]), "solve": ([20], [20 + work // count])}
            for rank in range(count)}, metadata=metadata or None)
        paths.append(path)
    return paths


@pytest.fixture
def sample_file(tmp_path):
    """scope-profiler's sample (tests/test_inspection.py): two ranks, a cheap
    and an expensive region; here rank 1's solve calls do not overlap (a
    timeline cannot hold two calls of one thread that overlap partially)."""
    path = tmp_path / "profiling_data.h5"
    write_schema1(path, {
        0: {"setup": ([0], [1 * NS]), "solve": ([2 * NS, 5 * NS], [4 * NS, 8 * NS]),
            "io": ([9 * NS], [9 * NS + 1000])},
        1: {"setup": ([0], [3 * NS // 2]), "solve": ([2 * NS, 6 * NS], [5 * NS, 9 * NS]),
            "rank-one-only": ([10], [20])},
    })
    return path


class _Checker(HTMLParser):
    """Collects what a page loads (src/href) and checks its tags balance."""

    def __init__(self):
        super().__init__()
        self.stack, self.loads, self.errors, self.blobs = [], [], [], []
        self._in_blob = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for k in ("src", "href"):
            if a.get(k) and not a[k].startswith("#"):
                self.loads.append(a[k])
        if tag == "script" and a.get("type") == "application/json":
            self._in_blob = True
            self.blobs.append("")
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag not in VOID:
            self.stack.pop()

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1:] or 'nothing'}")
            return
        self.stack.pop()
        if tag == "script":
            self._in_blob = False

    def handle_data(self, data):
        if self._in_blob:
            self.blobs[-1] += data


def check_page(path):
    """The page's text and its JSON blob, after checking that the tags
    balance, it loads nothing, and the blob parses."""
    text = path.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>")
    c = _Checker()
    c.feed(text)
    c.close()
    assert c.errors == [] and c.stack == [], (c.errors, c.stack)
    assert c.loads == []  # self-contained: no script, style sheet or image loaded
    assert len(c.blobs) == 1
    return text, json.loads(c.blobs[0])


def table_rows(text):
    """The summary table's region names, in page order, and its headers."""
    t = text[text.index('<table id="stats">'):]
    t = t[:t.index("</table>")]
    return re.findall(r'<tr><td data-v="([^"]*)">', t), re.findall(r"<th>([^<]*)</th>", t)


def cells(text, region):
    """The data-v values of a region's row of the summary table."""
    t = text[text.index('<table id="stats">'):]
    row = re.search(rf'<tr><td data-v="{re.escape(region)}">.*?</tr>', t).group(0)
    return re.findall(r'<td class="n"(?: data-v="([^"]*)")?>', row)


# --------------------------------------------------------------------------
# include / exclude / ranks
# --------------------------------------------------------------------------

@pytest.mark.parametrize("kw", [
    {"include": "sol"}, {"include": ["setup", "io"]}, {"include": "s.*p"},
    {"exclude": "set"}, {"include": "s", "exclude": ["solve"]}, {"include": "olve"},
    {"exclude": ".*"}, {"include": "rank-"}])
def test_include_exclude_select_what_scope_profiler_selects(sample_file, tmp_path, kw):
    expected = {r.name for r in sp_ref.read_h5(sample_file).get_regions(**kw)}
    out = spanscope.create_html_report(sample_file, tmp_path / "r.html", **kw)
    text, d = check_page(out)
    rows, _ = table_rows(text)
    assert set(rows) == expected
    assert {d["names"][i] for i in d["shown"]} == expected
    legend = re.findall(r'</span>([^<]+)</span>', text[text.index('<div id="legend">'):]
                        .split("</div>")[0])
    assert set(legend) == expected
    if not expected:  # scope-profiler writes the page too; this one says why
        assert "No regions matched the selected filters." in text


def test_hidden_children_keep_their_time_out_of_the_parent(tmp_path):
    # scope-profiler: "Hidden children still consume time: filtering the
    # display must not turn their duration into their parent's own time."
    path = tmp_path / "nested.h5"
    ProfileManager.setup(file_path=str(path))
    for _ in range(3):
        with ProfileManager.region("step"):
            with ProfileManager.region("inner"):
                sum(range(20000))
    ProfileManager.finalize(verbose=False)
    full, _ = check_page(spanscope.create_html_report(path, tmp_path / "a.html"))
    hid, _ = check_page(spanscope.create_html_report(path, tmp_path / "b.html",
                                                     exclude="inner", sort="total"))
    assert cells(full, "step") == cells(hid, "step")
    assert "inner" not in table_rows(hid)[0]


def test_ranks_select_the_ranks_and_a_missing_one_is_named(sample_file, tmp_path):
    text, _ = check_page(spanscope.create_html_report(sample_file, tmp_path / "r.html",
                                                      ranks=[0], columns=["region", "ranks",
                                                                          "calls", "total"]))
    rows, _ = table_rows(text)
    assert "rank-one-only" not in rows and "io" in rows
    # as scope-profiler's report (tests/test_html_report.py)
    assert "1 region(s) recorded no calls on the selected ranks" in text
    assert cells(text, "setup")[:3] == ["1", "1", str(1 * NS)]
    # scope-profiler's tests/test_html_report.py: an out-of-range rank
    # selection still writes the page
    text, _ = check_page(spanscope.create_html_report(sample_file, tmp_path / "n.html",
                                                      ranks=[9], include_charts=False))
    assert "Rank 9 is not in this run: it holds 2 ranks, 0 to 1." in text
    assert table_rows(text)[0] == []


# --------------------------------------------------------------------------
# sort and columns: print_summary's names
# --------------------------------------------------------------------------

@pytest.mark.parametrize("sort", ["total", "calls", "avg", "min", "max", "name", "start"])
def test_sort_orders_the_table_as_scope_profiler(sample_file, tmp_path, sort):
    from scope_profiler.summary import region_rows
    theirs = [r["name"] for r in region_rows(sp_ref.read_h5(sample_file), sort=sort)]
    text, _ = check_page(spanscope.create_html_report(sample_file, tmp_path / "r.html",
                                                      sort=sort))
    assert table_rows(text)[0] == theirs


def test_columns_are_print_summarys(sample_file, tmp_path):
    cols = ["region", "ranks", "calls", "total", "imbalance", "p50", "std"]
    text, _ = check_page(spanscope.create_html_report(sample_file, tmp_path / "r.html",
                                                      columns=cols, sort="imbalance"))
    rows, heads = table_rows(text)
    assert heads == ["region", "ranks", "calls", "total", "imbalance", "p50", "std"]
    ref = sp_ref.read_h5(sample_file)
    for name in ("setup", "solve"):
        v = cells(text, name)
        assert float(v[3]) == pytest.approx(ref.get_region(name).rank_imbalance_pct, abs=1e-3)
    # setup: 1 s and 1.5 s on the two ranks, mean 1.25 s: the slowest is 20 % over
    assert float(cells(text, "setup")[3]) == pytest.approx(20.0)
    d = np.array([2, 3, 3, 3]) * NS
    assert float(cells(text, "solve")[5]) == pytest.approx(float(d.std()), rel=1e-6)


def test_percentiles_are_within_the_histograms_bucket(tmp_path):
    # p50/p95/p99 come from the one histogram of durations (exact below 32
    # ns, within 2.2 % above): numpy's for many calls, never past min/max
    durs = (np.arange(1, 1002) * 1000).astype(np.int64)
    starts = np.cumsum(np.concatenate([[0], durs[:-1] + 10]))
    path = tmp_path / "many.h5"
    write_schema1(path, {0: {"k": (starts, starts + durs)},
                            1: {"k": ([0], [5000])}})
    text, _ = check_page(spanscope.create_html_report(
        path, tmp_path / "p.html", columns=["region", "p50", "p95", "p99", "min", "max"]))
    all_d = np.concatenate([durs, [5000]])
    p50, p95, p99, lo, hi = map(float, cells(text, "k"))
    for got, q in ((p50, 50), (p95, 95), (p99, 99)):
        assert got == pytest.approx(np.percentile(all_d, q), rel=0.022)
        assert lo <= got <= hi


@pytest.mark.parametrize(("kw", "message"), [
    ({"columns": ["region", "bogus"]}, r"Unknown region summary column\(s\): \['bogus'\]"),
    ({"columns": []}, "At least one region summary column"),
    ({"sort": "fastest"}, "unknown sort key 'fastest'"),
    ({"include": "("}, "bad region pattern"),
    ({"scaling": "linear"}, "scaling must be one of")])
def test_bad_options_are_value_errors_and_write_nothing(sample_file, tmp_path, kw, message):
    with pytest.raises(ValueError, match=message):
        spanscope.create_html_report(sample_file, tmp_path / "x.html", **kw)
    assert not (tmp_path / "x.html").exists()


# --------------------------------------------------------------------------
# include_charts, charts_cdn
# --------------------------------------------------------------------------

def test_include_charts_false_is_the_tables_alone(sample_file, tmp_path):
    text, _ = check_page(spanscope.create_html_report(sample_file, tmp_path / "r.html",
                                                      include_charts=False))
    assert "<canvas" not in text and 'id="legend"' not in text and 'id="bars"' not in text
    assert set(table_rows(text)[0]) == {"setup", "solve", "io", "rank-one-only"}
    paths = _scaling_profiles(tmp_path, [1, 2])
    text, d = check_page(spanscope.create_html_report(
        paths, tmp_path / "c.html", include_charts=False, individual_reports=False))
    assert "<svg" not in text and 'id="bars"' not in text and d["scaling"] is None
    assert '<table id="cmp"' in text


def test_charts_cdn_changes_nothing_the_page_loads_nothing(sample_file, tmp_path):
    a = spanscope.create_html_report(sample_file, tmp_path / "a.html")
    b = spanscope.create_html_report(sample_file, tmp_path / "b.html", charts_cdn=True)
    assert a.read_bytes() == b.read_bytes()
    text, _ = check_page(b)  # no src/href at all
    assert "cdn" not in text.lower() and "http://" not in text and "https://" not in text


# --------------------------------------------------------------------------
# the comparison's scaling section
# --------------------------------------------------------------------------

def test_comparison_of_run_sizes_shows_speedup_and_weak_efficiency(tmp_path):
    paths = _scaling_profiles(tmp_path, [1, 2, 4])
    text, d = check_page(spanscope.create_html_report(paths, tmp_path / "s.html",
                                                      individual_reports=False))
    s = d["scaling"]
    assert s["axis"] == "ranks" and s["x"] == [1, 2, 4]
    i = s["regions"].index("solve")
    assert s["speedup"][i] == [1, 2, 4]
    assert s["efficiency"][i] == [1, 1, 1]
    # scope-profiler's numbers: weak efficiency reads 1, 2, 4 on a split problem
    assert s["weak_efficiency"][i] == [1, 2, 4]
    j = s["regions"].index("setup")
    assert s["speedup"][j] == [1, 1, 1] and s["efficiency"][j] == [1, 0.5, 0.25]
    assert '<svg id="speedup"' in text and '<svg id="weak-efficiency"' in text
    assert '<table id="scaling-table"' in text


def test_weak_scaling_chart_reads_a_weak_scaling_study(tmp_path):
    paths = []
    for count, duration in ((1, 40), (2, 50), (4, 80)):
        path = tmp_path / f"weak{count}.h5"
        write_schema1(path, {rank: {"solve": ([0], [duration])} for rank in range(count)})
        paths.append(path)
    text, d = check_page(spanscope.create_html_report(
        paths, tmp_path / "weak.html", individual_reports=False, scaling="weak"))
    assert d["scaling"]["weak_efficiency"][0] == [1.0, 0.8, 0.5]
    assert '<svg id="weak-efficiency"' in text and '<svg id="speedup"' not in text
    text, _ = check_page(spanscope.create_html_report(
        paths, tmp_path / "strong.html", individual_reports=False, scaling="strong"))
    assert '<svg id="weak-efficiency"' not in text and '<svg id="speedup"' in text


def test_speedup_x_selects_the_axis(tmp_path):
    paths = _scaling_profiles(tmp_path, [1, 2, 4], threads=[2, 2, 2], nodes=[1, 1, 2])
    _, d = check_page(spanscope.create_html_report(paths, tmp_path / "n.html",
                                                   individual_reports=False,
                                                   speedup_x="nodes"))
    assert d["scaling"]["axis"] == "nodes" and d["scaling"]["x"] == [1, 2]
    _, d = check_page(spanscope.create_html_report(paths, tmp_path / "c.html",
                                                   individual_reports=False,
                                                   speedup_x="cores"))
    assert d["scaling"]["x"] == [2, 4, 8]
    assert [a["cores"] for a in d["axes"]] == [2, 4, 8]
    # "auto" keeps scope-profiler's choice: ranks
    _, d = check_page(spanscope.create_html_report(paths, tmp_path / "a.html",
                                                   individual_reports=False))
    assert d["scaling"]["axis"] == "ranks"


def test_auto_takes_threads_when_only_they_change(tmp_path):
    paths = _scaling_profiles(tmp_path, [2, 2], threads=[1, 4])
    _, d = check_page(spanscope.create_html_report(paths, tmp_path / "t.html",
                                                   individual_reports=False))
    assert d["scaling"]["axis"] == "threads" and d["scaling"]["x"] == [1, 4]
    # runs that differ in neither: no scaling section (two versions of a code)
    (tmp_path / "same").mkdir()
    same = _scaling_profiles(tmp_path / "same", [2, 2])
    text, d = check_page(spanscope.create_html_report(same, tmp_path / "same.html",
                                                      individual_reports=False))
    assert d["scaling"] is None and 'id="scaling"' not in text


@pytest.mark.parametrize(("speedup_x", "threads", "message"), [
    ("nodes", None, "older scope-profiler versions"),
    ("threads", None, "'omp_num_threads'"),
    ("cores", [1, None], "r1"),
    ("sideways", None, "must be one of")])
def test_speedup_x_that_a_run_did_not_record_is_an_error(tmp_path, speedup_x, threads,
                                                          message):
    paths = _scaling_profiles(tmp_path, [2, 4], threads=threads and [1, 1])
    if threads:
        with h5py.File(paths[1], "a") as f:
            del f["metadata"].attrs["omp_num_threads"]
    report = tmp_path / "missing.html"
    with pytest.raises(ValueError, match=message):
        spanscope.create_html_report(paths, report, speedup_x=speedup_x,
                                     include_charts=False)
    assert not report.exists()  # checked before anything is written


def test_speedup_x_is_ignored_for_a_single_run(tmp_path):
    paths = _scaling_profiles(tmp_path, [2])
    assert spanscope.create_html_report(paths, tmp_path / "one.html", speedup_x="nodes",
                                        include_charts=False).exists()


def test_speedup_x_the_runs_share_draws_no_chart_and_says_why(tmp_path):
    paths = _scaling_profiles(tmp_path, [1, 2], nodes=[1, 1])
    text, d = check_page(spanscope.create_html_report(
        paths, tmp_path / "same.html", individual_reports=False, speedup_x="nodes"))
    assert "Every run has the same nodes (1), so there is no scaling to show." in text
    assert "<svg" not in text and d["scaling"] is None


def test_threads_of_spanscope_recordings_come_from_their_metadata(tmp_path, monkeypatch):
    paths = []
    for n in (1, 4):
        monkeypatch.setenv("OMP_NUM_THREADS", str(n))  # the writer records it
        p = tmp_path / f"omp{n}.h5"
        ProfileManager.setup(file_path=str(p))
        with ProfileManager.region("work"):
            sum(range(1000))
        ProfileManager.finalize(verbose=False)
        paths.append(p)
    _, d = check_page(spanscope.create_html_report(paths, tmp_path / "t.html",
                                                   individual_reports=False))
    assert d["scaling"]["axis"] == "threads" and d["scaling"]["x"] == [1, 4]


def test_individual_reports_take_the_options(tmp_path):
    paths = _scaling_profiles(tmp_path, [1, 2])
    spanscope.create_html_report(paths, tmp_path / "cmp.html", include="sol",
                                 columns=["region", "calls"], include_charts=False)
    for i in (0, 1):
        text, _ = check_page(tmp_path / f"cmp-{i}-r{i}.html")
        assert table_rows(text) == (["solve"], ["region", "calls"])
        assert "<canvas" not in text
    text, d = check_page(tmp_path / "cmp.html")
    assert d["regions"] == ["solve"]


def test_files_of_the_real_scope_profiler(tmp_path):
    paths = scope_profiler_steps(tmp_path, ("base", "new"))
    text, d = check_page(spanscope.create_html_report(paths, tmp_path / "cmp.html",
                                                      exclude="step", sort="name"))
    assert set(d["regions"]) == {"assemble", "solve"}
    assert d["scaling"] is None  # one rank, no thread count differing
    text, _ = check_page(tmp_path / "cmp-0-base.html")
    assert table_rows(text)[0] == ["assemble", "solve"]


# --------------------------------------------------------------------------
# spanscope html: the same options as flags
# --------------------------------------------------------------------------

def _cli(build_dir, *args):
    exe = build_dir / "spanscope"
    if not exe.exists():
        pytest.skip(f"{exe} is missing: build first")
    return subprocess.run([str(exe), "html", *map(str, args)], capture_output=True,
                          text=True, timeout=120)


def test_cli_help_names_every_flag(build_dir):
    r = _cli(build_dir, "--help")
    assert r.returncode == 0
    for flag in ("--include", "--exclude", "--ranks", "--sort", "--columns", "--no-charts",
                 "--scaling", "--speedup-x", "--max-spans"):
        assert flag in r.stdout


def test_cli_flags_are_the_options(build_dir, sample_file, tmp_path):
    out = tmp_path / "cli.html"
    r = _cli(build_dir, sample_file, "-o", out, "--include", "s", "--exclude=setup",
             "--ranks", "0-1", "--sort", "name", "--columns", "region,calls,imbalance",
             "--no-charts")
    assert r.returncode == 0, r.stderr
    text, _ = check_page(out)
    assert table_rows(text) == (["solve"], ["region", "calls", "imbalance"])
    assert "<canvas" not in text
    api = spanscope.create_html_report(sample_file, tmp_path / "api.html", include="s",
                                       exclude="setup", ranks=[0, 1], sort="name",
                                       columns=["region", "calls", "imbalance"],
                                       include_charts=False)
    # one page writer: the same page but the title (the CLI names the file)
    strip = lambda t: re.sub(r"<title>.*?</h1>", "", t, flags=re.S)  # noqa: E731
    assert strip(text) == strip(api.read_text())
    r = _cli(build_dir, sample_file, "-o", out, "--ranks", "0,9")
    assert r.returncode == 0 and "Rank 9 is not in this run" in out.read_text()


def test_cli_scaling_flags(build_dir, tmp_path):
    paths = _scaling_profiles(tmp_path, [1, 2, 4], nodes=[1, 1, 2])
    out = tmp_path / "s.html"
    r = _cli(build_dir, *paths, "-o", out, "--scaling", "weak", "--speedup-x", "nodes")
    assert r.returncode == 0, r.stderr
    text, d = check_page(out)
    assert d["scaling"]["axis"] == "nodes"
    assert '<svg id="weak-efficiency"' in text and '<svg id="speedup"' not in text


@pytest.mark.parametrize(("args", "message"), [
    (["--sort", "fastest"], "unknown sort key 'fastest'"),
    (["--columns", "region,,calls"], "--columns needs names"),
    (["--columns", "region,bogus"], "Unknown region summary column(s): ['bogus']"),
    (["--ranks", "3-1"], "--ranks needs ranks like 0,2-3"),
    (["--ranks", "a"], "--ranks needs ranks like 0,2-3"),
    (["--scaling", "linear"], "scaling must be one of"),
    (["--speedup-x", "moons"], "speedup_x must be one of"),
    (["--include", "("], "bad region pattern '('"),
    (["--sort"], "--sort needs a value")])
def test_cli_bad_values_exit_2_with_one_line(build_dir, sample_file, tmp_path, args,
                                             message):
    out = tmp_path / "bad.html"
    r = _cli(build_dir, sample_file, sample_file, "-o", out, *args)
    assert r.returncode == 2
    assert message in r.stderr and r.stderr.count("\n") == 1, r.stderr
    assert not out.exists()


# --------------------------------------------------------------------------
# rendered (headless Chromium, where installed)
# --------------------------------------------------------------------------

def _dump_dom(page):
    import shutil
    exe = next((p for n in ("chromium", "chromium-browser", "google-chrome")
                if (p := shutil.which(n))), None)
    if not exe:
        pytest.skip("chromium is not installed")
    r = subprocess.run([exe, "--headless=new", "--no-sandbox", "--disable-gpu",
                        "--virtual-time-budget=5000", "--window-size=1200,800", "--dump-dom",
                        page.as_uri()], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    return r.stdout


def test_tables_alone_still_sort_when_rendered(sample_file, tmp_path):
    out = spanscope.create_html_report(sample_file, tmp_path / "t.html", include_charts=False,
                                       sort="total")
    page = out.read_text(encoding="utf-8").replace(
        "</body>", "<script>document.querySelector('#stats thead th').click();</script></body>")
    clicked = tmp_path / "clicked.html"
    clicked.write_text(page, encoding="utf-8")
    body = _dump_dom(clicked).split('id="stats"')[1].split("</table>")[0]
    # the click sorts by region name, descending first (asc toggles on)
    names = re.findall(r'<tr><td data-v="([^"]*)"', body)
    assert names == sorted(names) or names == sorted(names, reverse=True)
    assert names != table_rows(out.read_text())[0]  # the page's order was by total


def test_scaling_charts_render(tmp_path):
    paths = _scaling_profiles(tmp_path, [1, 2, 4])
    out = spanscope.create_html_report(paths, tmp_path / "s.html", individual_reports=False)
    dom = _dump_dom(out)
    for chart in ("speedup", "weak-efficiency"):
        svg = dom.split(f'<svg id="{chart}"')[1].split("</svg>")[0]
        assert svg.count("<polyline") == 2  # setup and solve
        assert svg.count("<circle") == 6   # at 1, 2 and 4 ranks each
        assert 'class="ideal"' in svg


def test_a_rank_one_run_of_a_comparison_lacks_is_named_once(tmp_path):
    paths = _scaling_profiles(tmp_path, [1, 2])
    text, _ = check_page(spanscope.create_html_report(paths, tmp_path / "c.html", ranks=[1],
                                                      individual_reports=False))
    assert text.count("is not in") == 1
    assert "Rank 1 is not in run #1 (r0): it holds 1 rank, 0 to 0." in text
    assert text.count('id="filters"') == 1


def test_the_timeline_stacks_the_shown_spans_only(tmp_path):
    # main > solve > kernel: hiding solve puts kernel one row under main,
    # not under an empty row (the fold still nests it inside solve)
    src = tmp_path / "deep.json"
    ev = [{"ph": "X", "name": n, "pid": 1, "tid": 1, "ts": k, "dur": 100 - 2 * k}
          for k, n in enumerate(("main", "solve", "kernel"))]
    src.write_text(json.dumps({"traceEvents": ev}))

    def depths(page):
        _, d = check_page(page)
        (lane,) = d["lanes"]
        q = lane[1]
        return {d["names"][q[i]]: q[i + 3] for i in range(0, len(q), 4)}

    assert depths(spanscope.create_html_report(src, tmp_path / "a.html")) == \
        {"main": 0, "solve": 1, "kernel": 2}
    assert depths(spanscope.create_html_report(src, tmp_path / "b.html", exclude="solve")) == \
        {"main": 0, "kernel": 1}
    assert depths(spanscope.create_html_report(src, tmp_path / "c.html", include="k")) == \
        {"kernel": 0}
