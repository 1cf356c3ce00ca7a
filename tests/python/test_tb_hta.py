"""Our traces in the tools torch users have, read by those tools' own parsers:
TensorBoard's profiler plugin (torch-tb-profiler, through its RunLoader: the
Overview's step times and the Operator view's counts, self and total times)
and Holistic Trace Analysis (TraceAnalysis on a two-rank directory: ranks,
per-rank DataFrames, profiler steps, call stacks), on the torch-style
handler's files, a `spanscope convert` of an .h5 and a `spanscope merge`.
The numbers are checked against ours (key_averages, the spans, the .h5).

Each group is skipped with the reason when its package is missing
(scripts/install-deps.sh installs them as optional test dependencies).
"""
import collections
import json
import math
import os
import re
import subprocess
import time
from pathlib import Path

import pytest

# the plugin's loader starts its workers with this method ("spawn" by
# default, which would re-import pytest's main module); read at its import
os.environ.setdefault("TORCH_PROFILER_START_METHOD", "fork")

from spanscope import ProfileManager, profiler  # noqa: E402

BUILD = Path(os.environ.get("SPS_BUILD", Path(__file__).parents[2] / "build"))
CLI = BUILD / "spanscope"


def _need(mod, pkg):
    try:
        __import__(mod)
    except ImportError as e:
        pytest.skip(f"{pkg} is not installed ({e}): scripts/install-deps.sh installs it")


def _cli(*args):
    if not CLI.exists():
        pytest.skip(f"{CLI} is missing: build first")
    p = subprocess.run([str(CLI), *map(str, args)], capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0, (p.stdout, p.stderr)


def _busy(us):
    """Spins for us microseconds (a sleep's length varies more)."""
    end = time.perf_counter_ns() + us * 1000
    while time.perf_counter_ns() < end:
        pass


class Ours:
    """What we recorded in one cycle: per name (count, total µs, self µs)
    from key_averages, and the spans (name, start ns, end ns)."""

    def __init__(self, prof):
        self.rows = {r.key: (r.count, r.cpu_time_total, r.self_cpu_time_total)
                     for r in prof.key_averages() if not r.key.startswith("ProfilerStep")}
        # torch names a step's event "ProfilerStep*"; its trace_name keeps the number
        self.spans = [(e.trace_name, e.start_ns, e.end_ns) for e in prof.events()]
        self.steps = sorted(int(n.split("#")[1]) for n, _, _ in self.spans
                            if n.startswith("ProfilerStep#"))
        self.step_us = {int(n.split("#")[1]): (b - a) / 1e3 for n, a, b in self.spans
                        if n.startswith("ProfilerStep#")}


def _workload(d, worker, steps=5, torch_tb=False):
    """A torch-style profile with a schedule (wait 1, warmup 1, active 3,
    one cycle) and torch's ProfilerStep#N spans (HTA's and the plugin's
    steps): record_function spans, a ProfileManager region, C-side
    nesting; the handler writes d/worker.*.pt.trace.json -- each span once,
    or with torch_tb the TensorBoard plugin's layout (a cpu_op copy of each
    span, the window span).  Returns Ours of the cycle."""
    got = []
    handler = profiler.tensorboard_trace_handler(str(d), worker_name=worker, torch_tb=torch_tb)

    def ready(prof):
        handler(prof)
        got.append(Ours(prof))

    with profiler.profile(schedule=profiler.schedule(wait=1, warmup=1, active=3, repeat=1),
                          on_trace_ready=ready, record_steps=True) as prof:
        for _ in range(steps):
            with profiler.record_function("forward"):
                with profiler.record_function("inner"):
                    _busy(300)
                _busy(100)
            with ProfileManager.region("optim"):
                _busy(150)
            prof.step()
    assert len(got) == 1
    return got[0]


def _tb_profiles(run_dir):
    """The plugin's RunProfiles of run_dir, loaded by its own RunLoader."""
    _need("torch_tb_profiler", "torch-tb-profiler")
    from torch_tb_profiler import io as tbio
    from torch_tb_profiler.profiler.loader import RunLoader
    run = RunLoader("run", str(run_dir), tbio.Cache()).load()
    profiles = [p for p in run.get_profiles() if getattr(p, "overview", None) is not None]
    assert profiles, f"the plugin loaded nothing from {run_dir}"
    return profiles


def _tb_steps(p):
    """(step name, total µs, CPU Exec µs) per Overview row."""
    cols = [c["name"] for c in p.overview["steps"]["columns"] if "name" in c]
    out = []
    for row in p.overview["steps"]["rows"]:
        vals = [v for v in row[1:] if not isinstance(v, str)]
        byname = dict(zip(cols[1:], vals))
        total = float(re.search(r"Total: ([0-9.]+)us", row[2]).group(1))
        out.append((row[0], total, byname["CPU Exec"]))
    return out


def _tb_ops(p):
    return {r["name"]: r for r in p.operation_table_by_name["data"]}


def _assert_ops_match(ops, rows):
    """The Operator view's rows are ours: same names, counts, and times
    (whole µs as the plugin rounds them)."""
    assert set(ops) == set(rows), (sorted(ops), sorted(rows))
    for name, (count, total_us, self_us) in rows.items():
        r = ops[name]
        assert r["calls"] == count, name
        assert abs(r["host_total_duration"] - total_us) <= 0.5 + 1e-6, (name, r, total_us)
        assert abs(r["host_self_duration"] - self_us) <= 0.5 + 1e-6, (name, r, self_us)


# --------------------------------------------------------------------------
# TensorBoard's profiler plugin
# --------------------------------------------------------------------------

def test_tensorboard_reads_the_handlers_trace(tmp_path):
    _need("torch_tb_profiler", "torch-tb-profiler")
    ours = _workload(tmp_path, "w0", torch_tb=True)
    assert ours.steps == [2, 3, 4]
    (p,) = _tb_profiles(tmp_path)
    assert [v.display_name for v in p.views][:2] == ["Overview", "Operator"]
    steps = _tb_steps(p)
    # one Overview row per ProfilerStep#N, its time our step's
    assert [s[0] for s in steps] == ["2", "3", "4"]
    for name, total, cpu in steps:
        assert total == pytest.approx(ours.step_us[int(name)], abs=1e-3)
        assert 0 < cpu <= total
    perf = p.overview["performance"][0]
    assert perf["value"] > 0
    cpu_exec = {c["name"]: c for c in perf["children"]}["CPU Exec"]
    assert cpu_exec["extra"] > 50  # percent of the step: the spans fill it
    _assert_ops_match(_tb_ops(p), ours.rows)


def test_tensorboard_plugin_serves_the_overview_and_operators(tmp_path):
    """The plugin as TensorBoard runs it (TorchProfilerPlugin on a logdir,
    its HTTP routes as the page fetches them)."""
    _need("torch_tb_profiler", "torch-tb-profiler")
    _need("tensorboard", "tensorboard")
    from tensorboard.plugins import base_plugin
    from torch_tb_profiler.plugin import TorchProfilerPlugin
    from werkzeug.test import Client
    ours = _workload(tmp_path / "run1", "w0", torch_tb=True)
    apps = TorchProfilerPlugin(base_plugin.TBContext(logdir=str(tmp_path))).get_plugin_apps()

    def get(route, **query):
        r = Client(apps[route]).get("/", query_string=query)
        assert r.status_code == 200, (route, r.get_data(as_text=True)[:300])
        return json.loads(r.get_data(as_text=True))

    for _ in range(600):  # it loads runs in the background
        runs = get("/runs")
        if runs["runs"] and not runs["loading"]:
            break
        time.sleep(0.1)
    assert runs["runs"] == ["run1"]
    q = dict(run="run1", worker="w0", span=get("/spans", run="run1", worker="w0")[0])
    ov = get("/overview", **q)
    assert [r[0] for r in ov["steps"]["rows"]] == ["2", "3", "4"]
    assert {"title": "Device Type", "value": "CPU"} in ov["environments"]
    cpu = {c["name"]: c for c in ov["performance"][0]["children"]}["CPU Exec"]
    assert cpu["value"] > 0
    table = get("/operation/table", group_by="Operation", **q)
    _assert_ops_match({r["name"]: r for r in table["data"]}, ours.rows)


def test_tensorboard_overview_without_profiler_steps(tmp_path):
    """A converted .h5 has no ProfilerStep spans: the plugin takes the CPU
    operators' extent as the one step (it gave a step of -2^64+1 µs when
    every event was a user_annotation it drops)."""
    _need("torch_tb_profiler", "torch-tb-profiler")
    h5 = tmp_path / "run.h5"
    ProfileManager.setup(file_path=str(h5))
    for _ in range(4):
        with ProfileManager.region("solve"):
            with ProfileManager.region("kernel"):
                _busy(200)
            _busy(50)
    ProfileManager.finalize(verbose=False)
    ProfileManager._reset()
    run_dir = tmp_path / "tb"
    run_dir.mkdir()
    out = run_dir / "conv.pt.trace.json"
    _cli("convert", "--torch-tb", h5, out)
    doc = json.loads(out.read_text())
    assert doc["displayTimeUnit"] == "ms"
    assert "backend" not in doc.get("distributedInfo", {})

    import spanscope
    res = spanscope.read(str(h5))
    starts = [s for n in ("solve", "kernel") for s in res[n].start_ns.tolist()]
    ends = [e for n in ("solve", "kernel") for e in res[n].end_ns.tolist()]
    (p,) = _tb_profiles(run_dir)
    steps = _tb_steps(p)
    assert len(steps) == 1 and steps[0][0] == "0"
    assert steps[0][1] == pytest.approx((max(ends) - min(starts)) / 1e3, abs=2e-3)
    assert steps[0][2] > 0
    rows = {n: (res[n].num_calls, res[n].total_ns / 1e3, res[n].exclusive_total_ns / 1e3)
            for n in ("solve", "kernel")}
    _assert_ops_match(_tb_ops(p), rows)


def test_tensorboard_reads_a_merge(tmp_path, monkeypatch):
    _need("torch_tb_profiler", "torch-tb-profiler")
    ours = []
    for rank in (0, 1):
        monkeypatch.setenv("RANK", str(rank))
        monkeypatch.setenv("WORLD_SIZE", "2")
        ours.append(_workload(tmp_path / "in", f"r{rank}"))
    run_dir = tmp_path / "tb"
    run_dir.mkdir()
    # merge writes each span once; convert --torch-tb gives the plugin its layout
    _cli("merge", "-o", tmp_path / "merged.json",
         *sorted((tmp_path / "in").glob("*.pt.trace.json")))
    _cli("convert", "--torch-tb", tmp_path / "merged.json", run_dir / "merged.pt.trace.json")
    (p,) = _tb_profiles(run_dir)
    # both ranks' steps, and the operators of both
    assert len(_tb_steps(p)) == 6
    rows = {}
    for o in ours:
        for k, (c, t, s) in o.rows.items():
            c0, t0, s0 = rows.get(k, (0, 0.0, 0.0))
            rows[k] = (c0 + c, t0 + t, s0 + s)
    _assert_ops_match(_tb_ops(p), rows)


# --------------------------------------------------------------------------
# Holistic Trace Analysis
# --------------------------------------------------------------------------

def _hta_two_ranks(tmp_path, monkeypatch):
    _need("hta", "holistictraceanalysis")
    ours = {}
    for rank in (0, 1):
        monkeypatch.setenv("RANK", str(rank))
        monkeypatch.setenv("WORLD_SIZE", "2")
        ours[rank] = _workload(tmp_path, f"rank{rank}")
    from hta.trace_analysis import TraceAnalysis
    # HTA drops the last ProfilerStep's events unless told (kineto's last
    # step is often cut short); ours is whole
    return TraceAnalysis(trace_dir=str(tmp_path), include_last_profiler_step=True), ours


def _decoded(t, rank):
    df = t.t.get_trace(rank).copy()
    sym = t.t.symbol_table.sym_table
    df["name_s"] = [sym[i] for i in df["name"]]
    df["cat_s"] = [sym[i] for i in df["cat"]]
    return df


def test_hta_loads_two_ranks_with_our_spans(tmp_path, monkeypatch):
    t, ours = _hta_two_ranks(tmp_path, monkeypatch)
    assert sorted(t.t.traces) == [0, 1]
    for rank in (0, 1):
        doc = json.loads(next(tmp_path.glob(f"rank{rank}.*.pt.trace.json")).read_text())
        assert doc["distributedInfo"] == {"rank": rank, "world_size": 2}
        base = doc["baseTimeNanoseconds"]
        df = _decoded(t, rank)
        # each span once, a user_annotation row (no cpu_op copy, no Trace span)
        assert not {"Trace", "cpu_op"} & set(df["cat_s"])
        ann = df[df["cat_s"] == "user_annotation"]
        ops = ann[~ann["name_s"].str.startswith("ProfilerStep#")]
        want = collections.Counter(n for n, _, _ in ours[rank].spans
                                   if not n.startswith("ProfilerStep#"))
        assert collections.Counter(ops["name_s"]) == want
        assert collections.Counter(ann["name_s"]) == \
            collections.Counter(n for n, _, _ in ours[rank].spans)
        # HTA rounds ns traces to whole µs in floating point (ts up, ts + dur
        # down) and shifts each rank's clock: exactly ours so, from the first
        # step on (ns / 1000 rounds as the parse of our 3-decimal text does)
        def hta_us(a, b):
            ts, dur = (a - base) / 1000, (b - a) / 1000
            return math.ceil(ts), math.floor(ts + dur) - math.ceil(ts)
        first = "ProfilerStep#%d" % ours[rank].steps[0]
        t0 = hta_us(*next((a, b) for n, a, b in ours[rank].spans if n == first))[0]
        hta_t0 = ann[ann["name_s"] == first]["ts"].iloc[0]
        for name in want:
            got = sorted(zip((ops[ops["name_s"] == name]["ts"] - hta_t0).tolist(),
                             ops[ops["name_s"] == name]["dur"].tolist()))
            exp = sorted((ts - t0, dur) for ts, dur in
                         (hta_us(a, b) for n, a, b in ours[rank].spans if n == name))
            assert got == exp, (name, got, exp)
        # the rank's own pid and OS tids
        assert set(df["pid"]) == {os.getpid()}


def test_hta_cpu_side_analyses(tmp_path, monkeypatch):
    t, ours = _hta_two_ranks(tmp_path, monkeypatch)
    assert t.get_profiler_steps() == ours[0].steps == ours[1].steps
    from hta.common.trace_call_graph import CallGraph
    CallGraph(t.t, ranks=[0, 1])  # builds the call stacks (adds depth/parent)
    for rank in (0, 1):
        df = _decoded(t, rank).set_index("index", drop=False)
        names = df["name_s"].to_dict()
        parent = df["parent"].to_dict()
        for i in df.index[df["name_s"] == "inner"]:
            up, chain = parent[i], []
            while up in names:
                chain.append(names[up])
                up = parent[up]
            # inner lies in forward, which lies in a ProfilerStep
            assert "forward" in chain
            assert any(c.startswith("ProfilerStep#") for c in chain)
