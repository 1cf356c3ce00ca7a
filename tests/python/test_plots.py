"""spanscope.plots: scope-profiler 0.7.5's plots (plot_gantt, plot_flame_chart,
plot_flame_graph, plot_durations, plot_duration_histogram, plot_imbalance,
plot_rank_heatmap, plot_duration_timeseries, plot_timeline_density,
plot_speedup, plot_scaling_efficiency) over recordings made here (threads,
nesting, several ranks through `spanscope merge`), each rendered to PNG
and SVG and checked: PNG magic and size, SVG parsing, the labels in the SVG
text, the numbers behind the plot (data_filepath) against the file; the
command line (`python -m spanscope.plots`) and its error paths; the
missing-matplotlib error.
"""
import csv
import json
import os
import pathlib
import subprocess
import sys
import threading
import time
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import spanscope
from spanscope import ProfileManager

pytest.importorskip("matplotlib")
h5py = pytest.importorskip("h5py")
from spanscope import plots  # noqa: E402

BUILD = pathlib.Path(os.environ.get("SPS_BUILD", pathlib.Path(__file__).parents[2] / "build"))
CLI = BUILD / "spanscope"
SVG_NS = "{http://www.w3.org/2000/svg}"
REGIONS = ["outer", "inner", "leaf", "worker"]


def spin(ns):
    t = time.perf_counter_ns()
    while time.perf_counter_ns() - t < ns:
        pass


def record(path, iters=4, threads=1, slow=1.0):
    """A recording: outer > inner > leaf nested on the main thread, and
    `threads` worker threads with their own `worker` > `leaf` calls; slow
    scales the spin times (a straggler rank, a slower run)."""
    ProfileManager.setup(file_path=str(path))
    leaf = ProfileManager.profile("leaf")(lambda: spin(int(20_000 * slow)))

    def work():
        for _ in range(iters):
            with ProfileManager.region("worker"):
                spin(int(30_000 * slow))
                leaf()

    ts = [threading.Thread(target=work) for _ in range(threads)]
    for t in ts:
        t.start()
    for _ in range(iters):
        with ProfileManager.region("outer"):
            spin(int(10_000 * slow))
            with ProfileManager.region("inner"):
                leaf()
                leaf()
    for t in ts:
        t.join()
    ProfileManager.finalize(verbose=False)
    ProfileManager._reset()
    return path


def set_rank(path, rank, size):
    with h5py.File(path, "r+") as f:
        f["metadata"].attrs["rank"] = np.int64(rank)
        f["metadata"].attrs["size"] = np.int64(size)


@pytest.fixture(scope="module")
def run1(tmp_path_factory):
    d = tmp_path_factory.mktemp("plots")
    return record(d / "run1.h5", threads=2)


@pytest.fixture(scope="module")
def ranks3(tmp_path_factory):
    """A merged file of three ranks, rank 2 the straggler (3 x slower)."""
    if not CLI.exists():
        pytest.skip(f"{CLI} is missing: build first")
    d = tmp_path_factory.mktemp("ranks")
    parts = []
    for rank in range(3):
        p = record(d / f"r{rank}.h5", iters=3, threads=0, slow=3.0 if rank == 2 else 1.0)
        set_rank(p, rank, 3)
        parts.append(p)
    out = d / "merged.h5"
    r = subprocess.run([str(CLI), "merge", "-o", str(out), *map(str, parts)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert {x.rank for x in spanscope.read(out).rows} == {0, 1, 2}
    return out


def check_png(path):
    data = pathlib.Path(path).read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    w, h = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert w > 100 and h > 100
    return w, h


def svg_texts(path):
    """The SVG parsed, and every text it draws (matplotlib writes each
    text as a <!-- comment --> before its glyph paths; svg.fonttype none
    would write <text>: both are looked at)."""
    root = ET.parse(path).getroot()
    assert root.tag == SVG_NS + "svg"
    raw = pathlib.Path(path).read_text(encoding="utf-8")
    return raw


def render(fn, data, tmp_path, stem, **kw):
    """fn drawn to PNG and SVG; returns (figure, svg text)."""
    png, svg = tmp_path / f"{stem}.png", tmp_path / f"{stem}.svg"
    fig = fn(data, filepath=png, verbose=False, **kw)
    check_png(png)
    fig2 = fn(data, filepath=svg, verbose=False, **kw)
    assert type(fig).__name__ == "Figure" and type(fig2).__name__ == "Figure"
    return fig, svg_texts(svg)


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


@pytest.fixture(autouse=True)
def _svg_text_as_text():
    """Text in SVG as <text> elements (searchable), as a user's rcParams may."""
    import matplotlib
    with matplotlib.rc_context({"svg.fonttype": "none"}):
        yield


# --- each plot ---------------------------------------------------------------

def test_gantt(run1, tmp_path):
    data = tmp_path / "gantt.csv"
    fig, svg = render(plots.plot_gantt, run1, tmp_path, "gantt", data_filepath=data)
    for name in REGIONS:
        assert f">{name}<" in svg  # the legend
    assert "thread" in svg and "depth 2" in svg  # lanes per thread, per depth
    rows = read_csv(data)
    res = spanscope.read(run1)
    for name in REGIONS:  # every call drawn once
        assert sum(r["region"] == name for r in rows) == res[name].num_calls
    # nesting: leaf under inner under outer is depth 2 on the main thread
    assert {int(r["depth"]) for r in rows if r["region"] == "outer"} == {0}
    assert {int(r["depth"]) for r in rows if r["region"] == "inner"} == {1}
    assert {int(r["depth"]) for r in rows if r["region"] == "leaf"} == {1, 2}
    assert len({r["thread"] for r in rows}) == 3  # main + 2 workers
    # filters and windows
    plots.plot_gantt(run1, include="outer", data_filepath=data, verbose=False)
    assert {r["region"] for r in read_csv(data)} == {"outer"}
    plots.plot_gantt(run1, collapse_depth=0, data_filepath=data, verbose=False)
    assert {int(r["depth"]) for r in read_csv(data)} == {0}
    plots.plot_gantt(run1, aggregate_calls=100, include="outer", data_filepath=data,
                     verbose=False)
    (bar,) = read_csv(data)  # 4 outer calls as one bar from first start to last end
    outer = res["outer"]
    assert float(bar["duration_s"]) == pytest.approx(
        (outer.end_ns.max() - outer.start_ns.min()) * 1e-9)


def test_gantt_ranks(ranks3, tmp_path):
    data = tmp_path / "g.csv"
    fig, svg = render(plots.plot_gantt, ranks3, tmp_path, "gantt3", data_filepath=data)
    for rank in range(3):
        assert f"rank {rank}" in svg
    assert {r["rank"] for r in read_csv(data)} == {"0", "1", "2"}
    plots.plot_gantt(ranks3, ranks=[1], data_filepath=data, verbose=False)
    assert {r["rank"] for r in read_csv(data)} == {"1"}


def test_flame_chart(run1, tmp_path):
    data = tmp_path / "fc.csv"
    fig, svg = render(plots.plot_flame_chart, run1, tmp_path, "flamechart",
                      data_filepath=data)
    assert plots.plot_flame is plots.plot_flame_chart  # scope-profiler's alias
    for name in REGIONS:
        assert f">{name}<" in svg
    for d in range(3):
        assert f"depth {d}" in svg
    rows = read_csv(data)
    assert len(rows) == sum(spanscope.read(run1)[n].num_calls for n in REGIONS)


def test_flame_graph(run1, tmp_path):
    data = tmp_path / "fg.csv"
    fig, svg = render(plots.plot_flame_graph, run1, tmp_path, "flamegraph",
                      data_filepath=data)
    rows = {r["stack"]: r for r in read_csv(data)}
    res = spanscope.read(run1)
    # the stacks of the recording, aggregated: leaf appears under two callers
    assert set(rows) == {"outer", "outer;inner", "outer;inner;leaf", "worker", "worker;leaf"}
    assert int(rows["outer;inner;leaf"]["calls"]) == 8
    assert int(rows["worker;leaf"]["calls"]) == 8  # 2 threads x 4
    assert float(rows["outer"]["total_s"]) == pytest.approx(res["outer"].total_ns * 1e-9)
    leaf_total = res["leaf"].total_ns * 1e-9
    assert (float(rows["outer;inner;leaf"]["total_s"]) + float(rows["worker;leaf"]["total_s"])
            == pytest.approx(leaf_total))
    for name in ("outer", "inner", "leaf", "worker"):
        assert f">{name}<" in svg


def test_durations(run1, ranks3, tmp_path):
    data = tmp_path / "d.csv"
    fig, svg = render(plots.plot_durations, [run1, ranks3], tmp_path, "durations",
                      data_filepath=data, labels=["one", "merged"])
    for name in REGIONS:
        assert f">{name}<" in svg
    assert ">one<" in svg and ">merged<" in svg  # the runs' legend
    rows = read_csv(data)
    res = spanscope.read(run1)
    got = {r["region"]: float(r["duration_s"]) for r in rows if r["run"] == "one"}
    for name in REGIONS:
        assert got[name] == pytest.approx(res[name].total_ns * 1e-9)
    # several metrics: one panel each; sort and cut
    fig = plots.plot_durations(run1, metrics=["avg", "max", "first"], sort_by="total",
                               top_n=2, data_filepath=data, verbose=False)
    assert len(fig.axes) == 3
    rows = read_csv(data)
    totals = sorted(REGIONS, key=lambda n: -res[n].total_ns)[:2]
    assert [r["region"] for r in rows if r["metric"] == "avg"] == totals
    first = {r["region"]: float(r["duration_s"]) for r in rows if r["metric"] == "first"}
    for n in totals:
        o = np.argmin(res[n].start_ns)
        assert first[n] == pytest.approx(res[n].durations_ns[o] * 1e-9)


def test_histogram(run1, tmp_path):
    data = tmp_path / "h.csv"
    fig, svg = render(plots.plot_duration_histogram, run1, tmp_path, "hist", bins=12,
                      data_filepath=data)
    rows = read_csv(data)
    res = spanscope.read(run1)
    for name in REGIONS:
        assert f">{name}<" in svg
        mine = [r for r in rows if r["region"] == name]
        assert len(mine) == 12 and sum(int(r["calls"]) for r in mine) == res[name].num_calls
    render(plots.plot_duration_histogram, run1, tmp_path, "hist_log", log_scale=True)


def test_imbalance_and_heatmap(ranks3, tmp_path):
    data = tmp_path / "i.csv"
    fig, svg = render(plots.plot_imbalance, ranks3, tmp_path, "imb", data_filepath=data)
    for rank in range(3):
        assert f"rank {rank}" in svg
    rows = read_csv(data)
    res = spanscope.read(ranks3)
    for name in ("outer", "inner", "leaf"):
        per = {int(r["rank"]): float(r["total_s"]) for r in rows if r["region"] == name}
        assert per == {k: pytest.approx(v.total_ns * 1e-9) for k, v in res.regions[name].items()}
    fig, svg = render(plots.plot_rank_heatmap, ranks3, tmp_path, "heat", data_filepath=data)
    rows = read_csv(data)
    assert len(rows) == 3 * 3  # ranks x regions (outer, inner, leaf)
    for name in ("outer", "inner", "leaf"):
        assert f">{name}<" in svg
    # exclusive: the fold's self times
    plots.plot_rank_heatmap(ranks3, exclusive=True, data_filepath=data, verbose=False)
    got = {(r["region"], int(r["rank"])): float(r["self_s"]) for r in read_csv(data)}
    for name, per in res.regions.items():
        for rank, reg in per.items():
            assert got[name, rank] == pytest.approx(reg.self_ns.sum() * 1e-9)
    assert got["outer", 0] < res.regions["outer"][0].total_ns * 1e-9


def test_timeseries(ranks3, tmp_path):
    data = tmp_path / "t.csv"
    fig, svg = render(plots.plot_duration_timeseries, ranks3, tmp_path, "ts",
                      data_filepath=data)
    res = spanscope.read(ranks3)
    rows = read_csv(data)
    outer = [r for r in rows if r["region"] == "outer"]
    assert len(outer) == 3  # three calls per rank
    first = [res.regions["outer"][k].durations_ns[0] * 1e-9 for k in range(3)]
    assert float(outer[0]["min_s"]) == pytest.approx(min(first))
    assert float(outer[0]["max_s"]) == pytest.approx(max(first))
    assert f">outer<" in svg


def test_timeline_density(run1, tmp_path):
    data = tmp_path / "td.csv"
    fig, svg = render(plots.plot_timeline_density, run1, tmp_path, "dens", bins=10,
                      data_filepath=data)
    res = spanscope.read(run1)
    rows = read_csv(data)
    for name in REGIONS:  # the bins' seconds add up to the region's total
        got = sum(float(r["seconds"]) for r in rows if r["region"] == name)
        assert got == pytest.approx(res[name].total_ns * 1e-9, rel=1e-6)
        assert f">{name}<" in svg


@pytest.fixture(scope="module")
def scaling_runs(tmp_path_factory):
    """Runs of 1, 2 and 4 ranks (merged files), each rank doing 1/n of the
    work: a strong-scaling series."""
    if not CLI.exists():
        pytest.skip(f"{CLI} is missing: build first")
    d = tmp_path_factory.mktemp("scaling")
    out = []
    for n in (1, 2, 4):
        parts = []
        for rank in range(n):
            p = record(d / f"s{n}_{rank}.h5", iters=2, threads=0, slow=4.0 / n)
            set_rank(p, rank, n)
            parts.append(p)
        m = d / f"n{n}.h5"
        subprocess.run([str(CLI), "merge", "-o", str(m), *map(str, parts)], check=True,
                       capture_output=True, timeout=120)
        out.append(m)
    return out


def test_speedup_and_efficiency(scaling_runs, tmp_path):
    data = tmp_path / "s.csv"
    fig, svg = render(plots.plot_speedup, scaling_runs, tmp_path, "speedup",
                      data_filepath=data)
    assert ">ideal<" in svg and ">outer<" in svg
    rows = read_csv(data)
    outer = {int(r["num_ranks"]): float(r["speedup"]) for r in rows if r["region"] == "outer"}
    assert set(outer) == {1, 2, 4} and outer[1] == 1.0
    means = {n: spanscope.read(p) for n, p in zip((1, 2, 4), scaling_runs)}

    def mean(res):
        d = np.concatenate([r.durations_ns for r in res.regions["outer"].values()])
        return d.mean()
    assert outer[4] == pytest.approx(mean(means[1]) / mean(means[4]))
    fig, svg = render(plots.plot_scaling_efficiency, scaling_runs, tmp_path, "eff",
                      data_filepath=data)
    eff = {int(r["num_ranks"]): float(r["efficiency"]) for r in read_csv(data)
           if r["region"] == "outer"}
    assert eff[4] == pytest.approx(outer[4] / 4)


def test_weak_scaling(scaling_runs, tmp_path):
    data = tmp_path / "w.csv"
    fig, svg = render(plots.plot_weak_scaling, scaling_runs, tmp_path, "weak",
                      data_filepath=data)
    assert ">ideal<" in svg and ">outer<" in svg
    rows = [r for r in read_csv(data) if r["region"] == "inner"]
    m = {int(r["num_ranks"]): float(r["mean_duration_s"]) for r in rows}
    rel = {int(r["num_ranks"]): float(r["relative_runtime"]) for r in rows}
    assert rel == {k: pytest.approx(m[k] / m[1]) for k in (1, 2, 4)}
    plots.plot_weak_scaling_efficiency(scaling_runs, work_per_rank=[5, 5, 5],
                                       data_filepath=data, verbose=False)
    eff = {int(r["num_ranks"]): float(r["efficiency"]) for r in read_csv(data)
           if r["region"] == "inner"}
    assert eff == {k: pytest.approx(m[1] / m[k]) for k in (1, 2, 4)}
    with pytest.raises(ValueError, match="work_per_rank differs"):
        plots.plot_weak_scaling_efficiency(scaling_runs, work_per_rank=[5, 10, 20])
    with pytest.raises(ValueError, match="3 values for 2 runs"):
        plots.plot_weak_scaling_efficiency(scaling_runs[:2], work_per_rank=[1, 1, 1])


def test_callgraph(run1, tmp_path):
    data = tmp_path / "cg.csv"
    fig, svg = render(plots.plot_callgraph, run1, tmp_path, "cg", compact=True,
                      data_filepath=data)
    edges = {(r["caller"], r["callee"]): int(r["calls"]) for r in read_csv(data)}
    # the fold's parents: 4 outer > inner, 8 inner > leaf, 8 worker > leaf
    assert edges == {("outer", "inner"): 4, ("inner", "leaf"): 8, ("worker", "leaf"): 8}
    for name in REGIONS:
        assert f">{name}<" in svg
    assert ">8x<" in svg
    plots.plot_callgraph(run1, data_filepath=data, verbose=False)  # a node per call
    rows = read_csv(data)
    assert len(rows) == 4 + 8 + 8 and {r["calls"] for r in rows} == {"1"}
    with pytest.raises(ValueError, match="one run"):
        plots.plot_callgraph([run1, run1])


@pytest.mark.parametrize("fn", ["plot_likwid", "plot_perf_events", "plot_roofline",
                                "available_likwid_metrics", "available_perf_event_metrics"])
def test_counter_plots_say_they_are_not_available(run1, fn):
    # the results accessors' error (IntegrationNotAvailableError, a
    # NotImplementedError), naming the function and the missing integration
    with pytest.raises(spanscope.IntegrationNotAvailableError,
                       match=f"for {fn} is not available yet.*hardware-counters integration"):
        getattr(plots, fn)(run1)


def test_return_fig_and_json_data(run1, tmp_path):
    fig, axes = plots.plot_gantt(run1, return_fig=True, verbose=False)
    assert len(axes) == 1 and axes[0].figure is fig
    out = tmp_path / "g.json"
    plots.plot_durations(run1, data_filepath=out, data_format="json", verbose=False)
    doc = json.loads(out.read_text())
    assert doc["format"] == "scope-profiler-plot-data" and doc["plot"] == "durations"
    assert {row[2] for row in doc["rows"]} == set(REGIONS)


def test_results_object_and_package_names(run1, tmp_path):
    """A Results from spanscope.read works like its path; the plot_*
    names are on the package too (imported lazily)."""
    res = spanscope.read(run1)
    out = tmp_path / "a.svg"
    spanscope.plot_flame_graph(res, filepath=out, verbose=False)
    ET.parse(out)
    assert spanscope.plots is plots
    assert spanscope.plot_gantt is plots.plot_gantt


# --- errors ------------------------------------------------------------------------

def test_errors(run1, tmp_path):
    with pytest.raises(ValueError, match="no regions matched"):
        plots.plot_gantt(run1, include="nothing-like-this", verbose=False)
    with pytest.raises(ValueError, match=r"no rank \[7\]"):
        plots.plot_imbalance(run1, ranks=7, verbose=False)
    with pytest.raises(ValueError, match="metric 'median'"):
        plots.plot_durations(run1, metric="median", verbose=False)
    with pytest.raises(ValueError, match="backend='bokeh'.*'matplotlib' or 'plotly'"):
        plots.plot_gantt(run1, backend="bokeh")
    with pytest.raises(ValueError, match="image format"):
        plots.plot_gantt(run1, filepath=tmp_path / "x.bogus")
    with pytest.raises(ValueError, match="at least two runs"):
        plots.plot_speedup(run1, verbose=False)
    with pytest.raises(ValueError, match="not in its metadata"):
        plots.plot_speedup([run1, run1], x_field="num_nodes", verbose=False)
    with pytest.raises(ValueError, match="combine_regions group 'x' matched no regions"):
        plots.plot_durations(run1, combine_regions={"x": ["nothing-like-this"]})
    with pytest.raises(TypeError, match="not int"):
        plots.plot_gantt(42)
    with pytest.raises(OSError):
        plots.plot_gantt(tmp_path / "missing.h5")
    bad = tmp_path / "bad.h5"
    bad.write_bytes(b"not an hdf5 file at all")
    with pytest.raises((OSError, ValueError)):
        plots.plot_gantt(bad)
    assert not (tmp_path / "x.bogus").exists()


def test_aggregate_file(tmp_path):
    """An aggregate file has statistics only: the bars work, the plots
    that need calls say so."""
    p = tmp_path / "agg.h5"
    ProfileManager.setup(file_path=str(p), aggregation_mode=True)
    for _ in range(5):
        with ProfileManager.region("step"):
            spin(10_000)
    ProfileManager.finalize(verbose=False)
    data = tmp_path / "a.csv"
    plots.plot_durations(p, metric="avg", data_filepath=data, verbose=False)
    (row,) = read_csv(data)
    assert float(row["duration_s"]) > 0
    with pytest.raises(ValueError, match="aggregate file"):
        plots.plot_gantt(p, verbose=False)


def test_missing_matplotlib_names_the_extra(run1, tmp_path):
    code = ("import sys; sys.modules['matplotlib'] = None; "
            "from spanscope import plots; "
            f"plots.plot_gantt({str(run1)!r}, filepath={str(tmp_path / 'x.png')!r})")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode != 0
    assert "ImportError: spanscope.plots needs matplotlib" in r.stderr
    assert "spanscope[plot]" in r.stderr
    # importing spanscope (and spanscope.plots) needs no matplotlib
    r = subprocess.run([sys.executable, "-c", "import sys; sys.modules['matplotlib'] = None; "
                        "import spanscope, spanscope.plots"], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr


# --- the command line ----------------------------------------------------------------

def cli(*args):
    return subprocess.run([sys.executable, "-m", "spanscope.plots", *map(str, args)],
                          capture_output=True, text=True, timeout=300)


def test_cli_every_kind(run1, ranks3, tmp_path):
    for kind in plots.KINDS:
        files = ([run1, ranks3] if kind in ("speedup", "efficiency", "weak-scaling",
                                            "weak-efficiency") else [ranks3])
        for ext in ("png", "svg"):
            out = tmp_path / f"{kind}.{ext}"
            code = plots.main([kind, *map(str, files), "-o", str(out)])
            assert code == 0, kind
            if ext == "png":
                check_png(out)
            else:
                ET.parse(out)


def test_cli_options_and_data(ranks3, tmp_path):
    out, data = tmp_path / "h.svg", tmp_path / "h.csv"
    r = cli("heatmap", ranks3, "-o", out, "--exclusive", "--ranks", "0,2", "--data", data,
            "--include", "outer", "--include", "inner")
    assert r.returncode == 0, r.stderr
    assert r.stdout == "" and r.stderr == ""
    rows = read_csv(data)
    assert {r["rank"] for r in rows} == {"0", "2"}
    assert {r["region"] for r in rows} == {"outer", "inner"}


def test_cli_help_and_errors(run1, tmp_path):
    r = cli("--help")
    assert r.returncode == 0 and "usage: spanscope plot" in r.stdout
    assert "flame-graph" in r.stdout and "spanscope[plot]" in r.stdout
    out = tmp_path / "o.png"
    cases = [
        (("bogus", run1, "-o", out), 2, "invalid choice"),
        (("gantt", run1), 2, "-o/--output"),
        (("gantt", tmp_path / "missing.h5", "-o", out), 1, "missing.h5"),
        (("gantt", run1, "-o", tmp_path / "o.xyz"), 2, "image format"),
        (("gantt", run1, "-o", out, "--bins", "3"), 2, "--bins does not apply"),
        (("gantt", run1, "-o", out, "--ranks", "a,b"), 2, "--ranks takes numbers"),
        (("gantt", run1, "-o", out, "--include", "zzz"), 1, "no regions matched"),
        (("speedup", run1, "-o", out), 1, "at least two runs"),
        (("durations", run1, "-o", out, "--data", tmp_path / "d.txt"), 2,
         ".csv, .json or .parquet"),
    ]
    for args, code, msg in cases:
        r = cli(*args)
        assert r.returncode == code, (args, r.stderr)
        assert msg in r.stderr, (args, r.stderr)
        assert r.stderr.strip().count("\n") == 0 or code == 2  # one line (argparse: usage+line)
    assert not out.exists()


# --- files written by the real scope-profiler 0.7.5 -----------------------------------

SP_RECORD = r"""
import sys, threading, time
from scope_profiler import ProfileManager

def spin(ns):
    t = time.perf_counter_ns()
    while time.perf_counter_ns() - t < ns:
        pass

ProfileManager.setup(file_path=sys.argv[1], track_threads=True)

def work():
    for _ in range(3):
        with ProfileManager.region("sp_worker"):
            spin(20_000)

t = threading.Thread(target=work)
t.start()
for _ in range(4):
    with ProfileManager.region("sp_outer"):
        with ProfileManager.region("sp_inner"):
            spin(10_000)
t.join()
ProfileManager.finalize()
"""


@pytest.fixture(scope="module")
def sp_file(tmp_path_factory):
    """A recording by scope-profiler 0.7.5 itself (its own ProfileManager,
    its own HDF5 writer), in a process of its own."""
    pytest.importorskip("scope_profiler")
    out = tmp_path_factory.mktemp("sp") / "sp.h5"
    r = subprocess.run([sys.executable, "-c", SP_RECORD, str(out)], capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    return out


def test_scope_profilers_own_file(sp_file, tmp_path):
    """Every plot of a file written by scope-profiler 0.7.5, with the
    nesting the fold finds in it; scope-profiler's own results object
    works as the input too (its file goes through spanscope.read)."""
    res = spanscope.read(sp_file)
    assert {"sp_outer", "sp_inner", "sp_worker"} <= set(res.regions)
    data = tmp_path / "g.csv"
    fig, svg = render(plots.plot_gantt, sp_file, tmp_path, "spg", data_filepath=data)
    rows = read_csv(data)
    assert {int(r["depth"]) for r in rows if r["region"] == "sp_inner"} == {1}
    assert sum(r["region"] == "sp_outer" for r in rows) == 4
    for name in ("sp_outer", "sp_inner", "sp_worker"):
        assert f">{name}<" in svg
    plots.plot_flame_graph(sp_file, data_filepath=data, verbose=False)
    stacks = {r["stack"]: int(r["calls"]) for r in read_csv(data)}
    assert stacks["sp_outer;sp_inner"] == 4 and stacks["sp_worker"] == 3
    for kind in plots.KINDS:
        if kind in ("speedup", "efficiency", "weak-scaling", "weak-efficiency"):
            continue
        out = tmp_path / f"sp_{kind}.png"
        assert plots.main([kind, str(sp_file), "-o", str(out)]) == 0, kind
        check_png(out)
    from scope_profiler import read_h5
    out = tmp_path / "sp_obj.svg"
    plots.plot_durations(read_h5(str(sp_file)), filepath=out, data_filepath=data,
                         verbose=False)
    got = {r["region"]: float(r["duration_s"]) for r in read_csv(data)}
    assert got["sp_outer"] == pytest.approx(res["sp_outer"].total_ns * 1e-9)


def test_scope_profiler_fixture(tmp_path):
    """scope-profiler's schema-3 fixture (tests/data) plots too."""
    fx = pathlib.Path(__file__).parents[2] / "tests" / "data" / "scope-profiler-schema3-fixture.h5"
    if not fx.exists():
        pytest.skip("the fixture is missing")
    for fn in (plots.plot_gantt, plots.plot_durations, plots.plot_flame_graph,
               plots.plot_rank_heatmap):
        render(fn, fx, tmp_path, fn.__name__)
