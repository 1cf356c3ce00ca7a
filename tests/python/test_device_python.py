"""The torch-style face's device side (issue 38 parts 3 and 4): profile(
activities=[CUDA]) asks the C core for its CUPTI collector, says once and
clearly when the device is not there, and a recording with device activity
gives device_kernels(), FunctionEvent.device_time_total / self_device_time_
total (and torch's cuda_* names), the table's device columns,
device_time_by_span, kineto_results() and device_activity_ready.

No GPU is needed.  The accessors are driven by a fixture: the profile is
made to believe its collector ran (the C core's device_start / device_stop
replaced by no-ops) and the window's finalize file gets a /device group
written with h5py, per the contract (docs/device.md): an API row
(cudaLaunchKernel, cuMemcpy...) at a launch made inside a known span on a
known thread, and the device row (kernel, copy, set) of the same correlation
id later.  Every expected value is computed from the fixture's own rows.  The
real path -- sps_device_start through the stand-in libcupti
(tests/c/fake_cupti.c, SPANSCOPE_CUPTI_LIB), fake launches from Python via
ctypes, sps_device_stop, finalize, sps_device_read -- runs in a child
process.
"""

import json
import os
import re
import subprocess
import sys
import threading
import time
import warnings
from pathlib import Path

import h5py
import numpy as np
import pytest

from spanscope import _ext, profiler
from spanscope.profiler import ProfilerActivity, record_function

REPO = Path(__file__).resolve().parent.parent.parent
BUILD = Path(os.environ.get("SPS_BUILD", REPO / "build"))

COLUMNS = ("kinds", "names_idx", "devices", "contexts", "streams", "correlations",
           "starts_ns", "ends_ns", "bytes", "ranks", "threads", "tids", "regions", "call_ids",
           "grid_x", "grid_y", "grid_z", "block_x", "block_y", "block_z", "copy_kinds",
           "src_kinds", "dst_kinds")
KIND_TYPE = {1: "gpu_kernel", 2: "gpu_memcpy", 3: "gpu_memset", 4: "cuda_runtime",
             5: "cuda_driver"}
KIND_LETTER = {1: "k", 2: "m", 3: "s", 4: "r", 5: "d"}


# --------------------------------------------------------------------------
# the fixture: /device rows for launches made inside known spans
# --------------------------------------------------------------------------

class DeviceFixture:
    """Rows of /device, made at launches during a recording and written into
    the window's finalize file (pending rows go to the next finalize)."""

    def __init__(self, dropped=0):
        self.dropped = dropped  # /device's dropped attribute
        self.rows = []       # every row, in the order made
        self.pending = []    # rows not yet written into a file
        self.launches = []   # (device row, expected span name or None, tid, launch ns)
        self._corr = 100
        self.files = 0

    def _row(self, **kw):
        row = {c: 0 for c in COLUMNS}
        row.update(devices=-1, contexts=-1, streams=-1, threads=-1, tids=-1, call_ids=-1,
                   region=None)
        row.update(kw)
        self.rows.append(row)
        self.pending.append(row)
        return row

    def launch(self, expect, region, kind, name, dur_ns, *, api="cudaLaunchKernel",
               api_kind=4, nbytes=0, stream=7, device=0, delay_ns=5_000_000, api_row=True):
        """A launch now, on this thread, pushed as `region` (None: outside
        every span): its API row (unless api_row is False: then the device
        row carries the thread and region itself, at its own start) and its
        device row, `delay_ns` later (past the span's end: the join must not
        be by time).  expect: the name of the span it belongs to."""
        t = time.perf_counter_ns()
        tid = threading.get_native_id()
        self._corr += 1
        if api_row:
            self._row(kinds=api_kind, name=api, correlations=self._corr, starts_ns=t,
                      ends_ns=t + 700, tids=tid, region=region)
            dev = self._row(kinds=kind, name=name, correlations=self._corr,
                            starts_ns=t + delay_ns, ends_ns=t + delay_ns + dur_ns,
                            devices=device, contexts=1, streams=stream, bytes=nbytes,
                            grid_x=4 if kind == 1 else 0, grid_y=1 if kind == 1 else 0,
                            grid_z=1 if kind == 1 else 0, block_x=256 if kind == 1 else 0,
                            block_y=1 if kind == 1 else 0, block_z=1 if kind == 1 else 0,
                            copy_kinds=1 if kind == 2 else 0)
        else:
            dev = self._row(kinds=kind, name=name, correlations=self._corr, starts_ns=t,
                            ends_ns=t + dur_ns, devices=device, contexts=1, streams=stream,
                            bytes=nbytes, tids=tid, region=region)
        self.launches.append((dev, expect, tid, t))
        return dev

    def write(self, path):
        """Adds /device (the pending rows) to the spanscope file at path."""
        with h5py.File(path, "a") as f:
            regions = [n.decode() if isinstance(n, bytes) else n
                       for n in f["region_table/names"][()]]
            rows, self.pending = self.pending, []
            names = sorted({r["name"] for r in rows})
            g = f.create_group("device")
            g.attrs["description"] = "devpy's fixture"
            g.attrs["collector"] = "cupti"
            g.attrs["clock"] = "identity"
            g.attrs["dropped"] = np.int64(self.dropped)
            g.attrs["cupti_version"] = np.int64(130001)
            g.create_dataset("names", data=names, dtype=h5py.string_dtype())
            for c in COLUMNS:
                if c == "names_idx":
                    v = [names.index(r["name"]) for r in rows]
                elif c == "regions":
                    v = [regions.index(r["region"]) if r["region"] is not None else -1
                         for r in rows]
                else:
                    v = [r[c] for r in rows]
                g.create_dataset(c, data=np.array(v, dtype=np.int64))
        self.files += 1


@pytest.fixture
def fake_device(monkeypatch):
    """A DeviceFixture whose rows the profile reads back: the C core's
    device collector reported available, started and stopped (no-ops), and
    each window's finalize file given the pending rows as /device."""
    fx = DeviceFixture()
    calls = []
    real_finalize = _ext.finalize

    def finalize(path, verbose):
        out = real_finalize(path, verbose)
        if path is not None and calls and calls[-1] == "stop":
            fx.write(path)
        return out

    monkeypatch.setattr(_ext, "device_available", lambda what: None)
    monkeypatch.setattr(_ext, "device_start", lambda what: calls.append("start"))
    monkeypatch.setattr(_ext, "device_stop", lambda what: calls.append("stop"))
    monkeypatch.setattr(_ext, "finalize", finalize)
    fx.calls = calls
    return fx


def one_step_windows():
    """A schedule of two windows of one step each (no warm-up: its warning
    is not what these tests are about)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return profiler.schedule(wait=0, warmup=0, active=1, repeat=2)


def record_with_launches(fx, p):
    """The recording the fixture tests share (inside profile p): nested
    spans, a recursive region, a launch pushed by an outer region while an
    inner span is open, a launch outside every span, copies and sets, a
    driver call, a device row without an API row, and a second thread."""
    def worker():
        with record_function("worker"):
            fx.launch("worker", "worker", 1, "_Z6workerv", 333_000)
    with record_function("step"):
        fx.launch("step", "step", 2, "Memcpy HtoD (Pinned -> Device)", 41_000,
                  api="cudaMemcpyAsync", nbytes=1 << 20)
        for i in range(2):
            with record_function("fwd"):
                fx.launch("fwd", "fwd", 1, "_Z4gemmv", 1_234_567 + 1000 * i)
                fx.launch("fwd", "fwd", 1, "_Z4reluv", 77_700)
                # pushed by "step" (a region this face does not see opened
                # inside fwd): the rule is the innermost span OF THAT REGION
                fx.launch("step", "step", 3, "Memset (Device)", 9_100, api="cudaMemsetAsync",
                          nbytes=4096)
        with record_function("rec"):
            with record_function("rec"):
                fx.launch("rec", "rec", 1, "_Z3recv", 500_000, api="cuLaunchKernel",
                          api_kind=5)
            fx.launch("rec", "rec", 1, "_Z3recv", 250_000, api_row=False)
        with record_function("cpu_only"):
            pass
        t = threading.Thread(target=worker)
        t.start()
        t.join()
    fx.launch(None, None, 1, "_Z7outsidev", 12_000)
    return p


def expected_span(p, name, tid, t):
    """The test's own oracle: the innermost event named `name` on thread
    tid whose interval holds t (None for name None)."""
    if name is None:
        return None
    best = None
    for e in p.events():
        if e.name == name and e.thread == tid and e.start_ns <= t < e.end_ns:
            if best is None or e.start_ns >= best.start_ns:
                best = e
    assert best is not None, (name, tid, t)
    return best


def fmt_time(us):
    """torch's _format_time."""
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


def table_rows(text):
    """The table's header cells and its rows {name: cells}."""
    lines = text.splitlines()
    header = re.split(r"\s{2,}", lines[1].strip())
    rows = {}
    for ln in lines[3:]:
        if ln.startswith("-"):
            break
        cells = re.split(r"\s{2,}", ln.strip())
        rows[cells[0]] = dict(zip(header, cells))
    return header, rows


@pytest.fixture
def recorded(fake_device):
    fx = fake_device
    fx.dropped = 3  # said once, at the window's end
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the device is "there": no warning
        p = profiler.profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])
    with pytest.warns(RuntimeWarning, match="CUPTI dropped 3 device activity records"):
        with p:
            record_with_launches(fx, p)
    assert fx.calls == ["start", "stop"] and fx.files == 1
    events = p.events()
    own = {id(e): 0 for e in events}
    kernels = {id(e): 0 for e in events}
    span_of = {}
    for dev, name, tid, t in fx.launches:
        e = expected_span(p, name, tid, t)
        span_of[dev["correlations"]] = e
        if e is not None:
            own[id(e)] += dev["ends_ns"] - dev["starts_ns"]
            kernels[id(e)] += dev["kinds"] == 1

    def total(e):
        return own[id(e)] + sum(total(c) for c in e.cpu_children)
    return p, fx, own, kernels, span_of, {id(e): total(e) for e in events}


# --------------------------------------------------------------------------
# per span: FunctionEvent and device_time_by_span
# --------------------------------------------------------------------------

def test_function_event_device_times_follow_the_fixture(recorded):
    p, fx, own, kernels, span_of, total = recorded
    events = p.events()
    assert sorted({e.name for e in events}) == ["cpu_only", "fwd", "rec", "step", "worker"]
    assert any(own.values()) and sum(own.values()) < sum(
        r["ends_ns"] - r["starts_ns"] for r in fx.rows if r["kinds"] <= 3)  # one outside
    for e in events:
        assert e.self_device_time_total == pytest.approx(own[id(e)] / 1e3)
        assert e.self_cuda_time_total == e.self_device_time_total == e.self_cuda_us
        assert e.device_time_total == pytest.approx(total[id(e)] / 1e3)
        assert e.cuda_time_total == e.device_time_total == e.device_time == e.device_us
        assert e.kernel_count == kernels[id(e)]
        assert e.gpu_ms == (pytest.approx(own[id(e)] / 1e6) if own[id(e)] else -1.0)
    # the rule's cases, each seen in the numbers
    step = next(e for e in events if e.name == "step")
    memsets = sum(d["ends_ns"] - d["starts_ns"] for d, n, _, _ in fx.launches
                  if d["kinds"] == 3)
    assert memsets and step.self_device_time_total * 1e3 >= memsets  # not fwd's
    inner_rec = [e for e in events if e.name == "rec" and e.cpu_parent is not None
                 and e.cpu_parent.name == "rec"]
    assert len(inner_rec) == 1 and inner_rec[0].self_device_time_total == pytest.approx(500.0)
    assert next(e for e in events if e.name == "cpu_only").device_time_total == 0.0
    worker = next(e for e in events if e.name == "worker")
    assert worker.thread != step.thread and worker.self_device_time_total == pytest.approx(333.0)


def test_export_stacks_device_metric(recorded, tmp_path):
    """torch's export_stacks(path, "self_cuda_time_total"): a line per span
    path with the self device µs its spans launched."""
    p, fx, own, kernels, span_of, total = recorded
    want = {}
    for e in p.events():
        if own[id(e)]:
            names, x = [], e
            while x is not None:
                names.insert(0, x.name)
                x = x.cpu_parent
            key = f"thread_{e.thread};" + ";".join(names)
            want[key] = want.get(key, 0) + own[id(e)]
    for metric in ("self_cuda_time_total", "self_device_time_total"):
        out = tmp_path / f"{metric}.txt"
        p.export_stacks(out, metric)
        got = dict(ln.rsplit(" ", 1) for ln in out.read_text().splitlines())
        assert got == {k: str(v // 1000) for k, v in want.items()}


def test_device_time_by_span(recorded):
    p, fx, own, kernels, span_of, total = recorded
    events = p.events()
    assert p.device_time_by_span == pytest.approx([total[id(e)] / 1e3 for e in events])
    assert events.device_time_by_span == p.device_time_by_span


# --------------------------------------------------------------------------
# the tables
# --------------------------------------------------------------------------

def test_key_averages_and_table_device_columns(recorded):
    p, fx, own, kernels, span_of, total = recorded
    events = p.events()
    groups = {}
    for e in events:
        g = groups.setdefault(e.name, [0, 0, 0, 0])
        g[0] += 1
        g[1] += own[id(e)]
        g[2] += total[id(e)]
        g[3] += kernels[id(e)]
    ka = p.key_averages()
    for r in ka:
        count, g_own, g_total, g_kern = groups[r.key]
        assert r.count == count
        assert r.self_device_time_total == r.self_cuda_time_total == pytest.approx(g_own / 1e3)
        assert r.device_time_total == r.cuda_time_total == pytest.approx(g_total / 1e3)
        assert r.device_time == pytest.approx(g_total / 1e3 / count)
        assert r.kernel_count == g_kern
    text = ka.table(sort_by="self_cuda_time_total")
    header, rows = table_rows(text)
    assert header[header.index("CPU time avg") + 1:header.index("CPU time avg") + 5] == \
        ["Self CUDA", "Self CUDA %", "CUDA total", "CUDA time avg"]
    self_sum = sum(g[1] for g in groups.values()) / 1e3
    for name, (count, g_own, g_total, _k) in groups.items():
        cells = rows[name]
        assert cells["Self CUDA"] == fmt_time(g_own / 1e3)
        assert cells["Self CUDA %"] == f"{g_own / 1e3 * 100.0 / self_sum:.2f}%"
        assert cells["CUDA total"] == fmt_time(g_total / 1e3)
        assert cells["CUDA time avg"] == fmt_time(g_total / 1e3 / count)
    assert f"Self CUDA time total: {fmt_time(self_sum)}" in text
    # most device time first
    order = [r.key for r in ka if r.key in rows]
    listed = list(rows)
    assert listed[0] == max(groups, key=lambda n: groups[n][1]) and set(order) == set(listed)
    # one row per span: the events' table has the columns too
    assert "Self CUDA" in p.table() and "CUDA total" in events.table()


def test_device_kernels_groups_and_lists_each_activity(recorded):
    p, fx, own, kernels, span_of, total = recorded
    dev = [r for r in fx.rows if r["kinds"] <= 3]
    want = {}
    for r in dev:
        w = want.setdefault((r["name"], KIND_LETTER[r["kinds"]]), [])
        w.append(r["ends_ns"] - r["starts_ns"])
    dk = p.device_kernels()
    got = {(r.name, r.kind): r for r in dk}
    assert set(got) == set(want) and len(dk) == len(want)
    for key, durs in want.items():
        r = got[key]
        assert r.count == len(durs)
        assert r.total_us == pytest.approx(sum(durs) / 1e3)
        assert (r.min_us, r.max_us) == (pytest.approx(min(durs) / 1e3),
                                        pytest.approx(max(durs) / 1e3))
    totals = [r.total_us for r in dk]
    assert totals == sorted(totals, reverse=True)
    text = dk.table()
    assert "_Z4gemmv" in text and text.splitlines()[-1].split()[-1] == \
        f"{sum(sum(d) for d in want.values()) / 1e3:.2f}"
    # each activity: its device, stream, start, duration and launching span
    acts = dk.activities
    assert [a.start_ns for a in acts] == sorted(r["starts_ns"] for r in dev)
    by_corr = {r["correlations"]: r for r in dev}
    for a in acts:
        r = by_corr[a.correlation_id]
        assert (a.name, a.kind, a.device, a.stream) == \
            (r["name"], KIND_LETTER[r["kinds"]], r["devices"], r["streams"])
        assert (a.start_ns, a.end_ns, a.bytes) == (r["starts_ns"], r["ends_ns"], r["bytes"])
        assert a.duration_us == pytest.approx((r["ends_ns"] - r["starts_ns"]) / 1e3)
        assert a.span is span_of[a.correlation_id]
        assert a.span_name == (a.span.name if a.span is not None else None)
        if r["kinds"] == 1:
            assert (a.grid, a.block) == ((r["grid_x"], r["grid_y"], r["grid_z"]),
                                         (r["block_x"], r["block_y"], r["block_z"]))


def test_kineto_results_every_activity(recorded):
    p, fx, own, kernels, span_of, total = recorded
    events = p.events()
    index = {id(e): i for i, e in enumerate(events)}
    res = p.kineto_results()
    assert len(res) == len(fx.rows)
    assert [a.start_ns() for a in res] == sorted(r["starts_ns"] for r in fx.rows)
    rows = {(r["correlations"], r["kinds"]): r for r in fx.rows}
    for a in res:
        kind = {v: k for k, v in KIND_TYPE.items()}[a.activity_type()]
        r = rows[(a.correlation_id(), kind)]
        e = span_of[a.correlation_id()]
        assert a.name() == r["name"]
        assert (a.start_ns(), a.end_ns()) == (r["starts_ns"], r["ends_ns"])
        assert a.duration_us() == pytest.approx((r["ends_ns"] - r["starts_ns"]) / 1e3)
        assert a.linked_correlation_id() == (index[id(e)] + 1 if e is not None else 0)
        assert a.span() == (index[id(e)] if e is not None else None)
        if kind <= 3:  # the device's own work
            assert a.device_type() == profiler.DeviceType.CUDA
            assert (a.device_index(), a.device_resource_id()) == (r["devices"], r["streams"])
            assert a.nbytes() == r["bytes"]
        else:  # the launching call on the host
            assert a.device_type() == profiler.DeviceType.CPU
            assert (a.device_index(), a.device_resource_id()) == (-1, -1)
            assert a.start_thread_id() == r["tids"]
    # a kernel and its cudaLaunchKernel share the correlation id
    corr = [a.correlation_id() for a in res if a.name() == "_Z4gemmv"]
    assert all(any(b.correlation_id() == c and b.activity_type() == "cuda_runtime"
                   for b in res) for c in corr)


CAT = {1: "kernel", 2: "gpu_memcpy", 3: "gpu_memset", 4: "cuda_runtime", 5: "cuda_driver"}


def test_export_chrome_trace_carries_the_device_rows(recorded, tmp_path):
    """export_chrome_trace writes the device rows in kineto's form
    (sps_timeline_write_device): span i of events() has External id i + 1
    -- kineto_results()' linked_correlation_id -- and so do the rows it
    launched; API rows on their thread's row, device rows on a GPU
    process's stream rows, an ac2g flow from each API call to its work."""
    p, fx, own, kernels, span_of, total = recorded
    path = tmp_path / "t.json"
    p.export_chrome_trace(path)
    ev = json.loads(path.read_text())["traceEvents"]
    events = p.events()
    index = {id(e): i for i, e in enumerate(events)}
    xs = {e["args"]["External id"]: e for e in ev
          if e.get("ph") == "X" and e.get("cat") == "user_annotation"}
    assert sorted(xs) == list(range(1, len(events) + 1))
    assert [xs[i + 1]["name"] for i in range(len(events))] == [e.trace_name for e in events]
    act = [e for e in ev if e.get("ph") == "X" and e.get("cat") in CAT.values()]
    assert len(act) == len(fx.rows)
    kin = {(a.correlation_id(), a.name()): a for a in p.kineto_results()}
    host = {e["pid"] for e in xs.values()}
    procs = {e["pid"]: e["args"]["name"] for e in ev
             if e.get("ph") == "M" and e["name"] == "process_name"}
    flows = {}
    for e in ev:
        if e.get("cat") == "ac2g":
            flows.setdefault(e["ph"], []).append(e["id"])
    for r in fx.rows:
        (e,) = [x for x in act if x["args"]["correlation"] == r["correlations"]
                and x["cat"] == CAT[r["kinds"]]]
        assert e["name"] == r["name"]
        sp = span_of[r["correlations"]]
        a = kin[(r["correlations"], r["name"])]
        if sp is None:
            assert "External id" not in e["args"] and a.linked_correlation_id() == 0
        else:
            assert e["args"]["External id"] == index[id(sp)] + 1 == a.linked_correlation_id()
            assert xs[e["args"]["External id"]]["name"] == sp.trace_name
        if r["kinds"] >= 4:  # the call, on its launching thread's row
            assert e["pid"] in host and e["tid"] == r["tids"]
        else:  # the work, on its GPU's stream
            assert e["pid"] not in host and procs[e["pid"]].startswith(f"GPU {r['devices']}")
            assert e["tid"] == r["streams"]
    with_api = {r["correlations"] for r in fx.rows if r["kinds"] >= 4}
    assert sorted(flows["s"]) == sorted(flows["f"]) and set(flows["s"]) == with_api
    # Perfetto: a GPU process with a track per stream, a slice per activity
    pb = pytest.importorskip("perfetto.protos.perfetto.trace.perfetto_trace_pb2",
                             reason="the perfetto package is not installed")
    pf = tmp_path / "t.pftrace"
    p.export_chrome_trace(pf)
    trace = pb.Trace.FromString(pf.read_bytes())
    gpus = {pk.track_descriptor.uuid for pk in trace.packet if pk.HasField("track_descriptor")
            and pk.track_descriptor.process.process_name.startswith("GPU ")}
    names = [pk.track_event.name for pk in trace.packet if pk.HasField("track_event")
             and pk.track_event.type == pk.track_event.TYPE_SLICE_BEGIN]
    assert len(gpus) == 1
    for r in fx.rows:
        assert r["name"] in names


def test_hta_reads_the_exported_kernels(recorded, tmp_path):
    """HTA (holistictraceanalysis) reads the face's trace as a kineto one:
    its kernel breakdown has the fixture's kernels with their time, and
    it joins each kernel to its runtime call by correlation."""
    try:
        from hta.trace_analysis import TraceAnalysis
    except ImportError as e:
        pytest.skip(f"holistictraceanalysis is not installed ({e}): "
                    "scripts/install-deps.sh installs it")
    p, fx, own, kernels, span_of, total = recorded
    d = tmp_path / "hta"
    d.mkdir()
    p.export_chrome_trace(d / "rank0.pt.trace.json")
    ta = TraceAnalysis(trace_dir=str(d))
    df = ta.t.get_trace(0)
    sym = ta.t.symbol_table.get_sym_table()
    cat = df["cat"].map(lambda c: sym[c])
    k = df[cat == "kernel"]
    want = [r for r in fx.rows if r["kinds"] == 1]
    assert len(k) == len(want)
    runtime = df[cat.isin(["cuda_runtime", "cuda_driver"])]
    assert set(k["correlation"]) <= set(runtime["correlation"]) | {
        r["correlations"] for r in want}
    _types, kernel_df = ta.get_gpu_kernel_breakdown(visualize=False)
    for name in {r["name"] for r in want}:
        mine = [r for r in want if r["name"] == name]
        us = sum(r["ends_ns"] - r["starts_ns"] for r in mine) / 1e3
        got = kernel_df[kernel_df["name"] == name]["sum (us)"].sum()
        # HTA rounds each event's start and duration down to whole µs
        assert abs(got - us) <= 2 * len(mine), (name, got, us)


def test_windows_accumulate_device_rows(fake_device):
    """acc_events: each window's rows joined to that window's spans, the
    spans of a later window shifted past the earlier ones'."""
    fx = fake_device
    sched = one_step_windows()
    with profiler.profile(activities=[ProfilerActivity.CUDA], schedule=sched) as p:
        for i in range(2):
            with record_function(f"w{i}"):
                fx.launch(f"w{i}", f"w{i}", 1, f"_Z1k{i}v", 10_000 * (i + 1))
            p.step()
    assert fx.calls == ["start", "stop", "start", "stop"] and fx.files == 2
    ev = {e.name: e for e in p.events()}
    assert ev["w0"].self_device_time_total == pytest.approx(10.0)
    assert ev["w1"].self_device_time_total == pytest.approx(20.0)
    assert sorted((a.name, a.span_name) for a in p.device_kernels().activities) == \
        [("_Z1k0v", "w0"), ("_Z1k1v", "w1")]


# --------------------------------------------------------------------------
# gpu_timing: CUDA event pairs per span (/events/gpu_durations)
# --------------------------------------------------------------------------

def test_gpu_timing_event_pairs_give_the_spans_device_time(monkeypatch):
    """profile(gpu_timing=True) runs the core's CUDA-event collector
    (SPS_DEVICE_EVENTS); the window's file gives each span its pair's time
    (/events/gpu_durations, here written by the test for some spans): that
    is the span's device_time_total, its self time that less its
    children's (torch's rule), a span without a pair its children's sum."""
    asked = []
    pairs = {}

    def finalize(path, verbose):
        out = real_finalize(path, verbose)
        if path is None or asked[-1] != ("stop", _ext.DEVICE_EVENTS):
            return out
        f = _ext.read_file(path)
        ev = f["events"]
        start = np.frombuffer(ev["start_ns"], np.int64)
        row = np.frombuffer(ev["row"], np.uint32)
        names = [f["names"][f["rows"][r][0]] for r in row]
        gd = np.full(len(start), -1, np.int64)
        for j, (name, t) in enumerate(zip(names, start.tolist())):
            if name != "no_pair":
                gd[j] = pairs[(name, t)] = 1_000 * (j + 3) + 17 * len(name)
        with h5py.File(path, "a") as h:
            h.create_dataset("events/gpu_durations", data=gd)
        return out
    real_finalize = _ext.finalize
    monkeypatch.setattr(_ext, "device_available", lambda what: None)
    monkeypatch.setattr(_ext, "device_start", lambda what: asked.append(("start", what)))
    monkeypatch.setattr(_ext, "device_stop", lambda what: asked.append(("stop", what)))
    monkeypatch.setattr(_ext, "finalize", finalize)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        p = profiler.profile(activities=[ProfilerActivity.CUDA], gpu_timing=True)
    with p:
        with record_function("outer"):
            with record_function("no_pair"):
                with record_function("leaf"):
                    pass
            with record_function("leaf"):
                pass
    # tensorplay's rule: gpu_timing instead of CUPTI's trace
    assert asked == [("start", _ext.DEVICE_EVENTS), ("stop", _ext.DEVICE_EVENTS)]
    events = p.events()
    assert len(pairs) == 3

    def total(e):
        got = pairs.get((e.name, e.start_ns))
        return got if got is not None else sum(total(c) for c in e.cpu_children)
    for e in events:
        kids = sum(total(c) for c in e.cpu_children)
        assert e.device_time_total == pytest.approx(total(e) / 1e3)
        assert e.self_device_time_total == pytest.approx(
            max(total(e) - kids, 0) / 1e3 if (e.name, e.start_ns) in pairs else 0.0)
    assert p.device_time_by_span == pytest.approx([total(e) / 1e3 for e in events])
    rows = {r.key: r for r in p.key_averages()}
    assert rows["leaf"].device_time_total == pytest.approx(
        sum(total(e) for e in events if e.name == "leaf") / 1e3)
    assert "Self CUDA" in p.key_averages().table()
    assert p.kineto_results() == []  # no CUPTI rows with event pairs


# --------------------------------------------------------------------------
# the binding: _ext.device_read (sps_device_read)
# --------------------------------------------------------------------------

def spanscope_file(path):
    """A spanscope .h5 with two spans, "a" and "b" (no /device)."""
    _ext.setup(None, local=True)
    try:
        with record_function("a"):
            with record_function("b"):
                pass
        _ext.finalize(str(path), False)
    finally:
        _ext.shutdown()
    return path


def test_device_read_gives_the_files_rows(tmp_path):
    path = spanscope_file(tmp_path / "d.h5")
    d = _ext.device_read(path)
    assert d["present"] is False and d["n"] == 0 and d["names"] == []
    assert all(len(d[c]) == 0 for c in COLUMNS)
    fx = DeviceFixture(dropped=3)
    with record_function("a"):  # no session: only the fixture's rows
        fx.launch("a", "a", 1, "_Z1kv", 1000)
        fx.launch("a", "b", 2, "Memcpy DtoH (Device -> Pageable)", 2000, nbytes=64)
    fx.write(path)
    d = _ext.device_read(path)
    assert d["present"] is True and d["n"] == len(fx.rows) == 4
    assert (d["collector"], d["clock"], d["dropped"], d["cupti_version"]) == \
        ("cupti", "identity", 3, 130001)
    assert d["region_names"][:2] == ["a", "b"]
    names = sorted({r["name"] for r in fx.rows})
    assert d["names"] == names
    for c in COLUMNS:
        col = np.frombuffer(d[c], np.int64)
        if c == "names_idx":
            assert [d["names"][i] for i in col] == [r["name"] for r in fx.rows]
        elif c == "regions":
            assert [d["region_names"][i] if i >= 0 else None for i in col] == \
                [r["region"] for r in fx.rows]
        else:
            assert col.tolist() == [r[c] for r in fx.rows], c


def test_device_read_refuses_a_bad_file(tmp_path):
    path = spanscope_file(tmp_path / "bad.h5")
    fx = DeviceFixture()
    fx.launch("a", "a", 1, "_Z1kv", 1000)
    fx.rows[-1]["kinds"] = 9  # no such activity kind
    fx.write(path)
    with pytest.raises(ValueError, match="kinds"):
        _ext.device_read(path)
    with pytest.raises(OSError):
        _ext.device_read(tmp_path / "missing.h5")
    for bad in (0, 64):
        with pytest.raises(ValueError, match="unknown device collector"):
            _ext.device_start(bad)


def test_a_session_already_running_keeps_the_device_rows(fake_device):
    """A ProfileManager-style session already running: the collector runs
    for it, its file gets the rows at its own finalize, and the profile
    says so once (as it does for samples)."""
    fx = fake_device
    _ext.setup(None, local=True)
    try:
        with pytest.warns(RuntimeWarning, match="already running.*that session's file"):
            with profiler.profile(activities=[ProfilerActivity.CUDA]) as p:
                with record_function("x"):
                    fx.launch("x", "x", 1, "_Z1kv", 1000)
    finally:
        _ext.shutdown()
    assert fx.calls == ["start", "stop"] and fx.files == 0
    assert [e.name for e in p.events()] == ["x"] and p.kineto_results() == []


# --------------------------------------------------------------------------
# tensorplay's tuples: EventList(raw, gpu_activities=...)
# --------------------------------------------------------------------------

def test_eventlist_raw_tuples_join_by_slot_and_correlation(tmp_path):
    none = profiler.DeviceActivity.NO_EXTERNAL_ID
    raw = [("outer", "u", 1_000, 90_000, 7), ("inner", "u", 10_000, 50_000, 7),
           ("other", "u", 60_000, 70_000, 7)]
    gpu = [("cudaLaunchKernel", "r", 11_000, 12_000, 0, 0, 5, 1, 7, 0, 0, 0, 0),
           ("_Z1kv", "k", 200_000, 260_000, 0, 3, 5, none, 0, 0, 0, 0, 0),
           ("memcpy", "m", 300_000, 304_000, 0, 3, 6, 2, 0, 0, 4096, 1, 0),
           ("_Z1lv", "k", 400_000, 401_000, 0, 3, 9, none, 0, 0, 0, 0, 0)]
    el = profiler.EventList(raw, gpu_activities=gpu)
    ev = {e.name: e for e in el}
    k, m = 260_000 - 200_000, 304_000 - 300_000
    assert ev["inner"].self_device_time_total == pytest.approx(k / 1e3)
    assert ev["other"].self_device_time_total == pytest.approx(m / 1e3)
    assert ev["outer"].self_device_time_total == 0.0
    assert ev["outer"].device_time_total == pytest.approx((k + m) / 1e3)
    assert el.device_time_by_span == pytest.approx([e.device_time_total for e in el])
    rows = {(r.name, r.kind): r for r in el.device_kernels()}
    assert rows[("_Z1kv", "k")].count == 1 and rows[("_Z1lv", "k")].count == 1
    spans = {a.name: a.span_name for a in el.device_kernels().activities}
    assert spans == {"_Z1kv": "inner", "memcpy": "other", "_Z1lv": None}
    assert len(el.kineto_results()) == 4
    # and a trace of them: the kernel on its GPU, inner's External id on it
    el.export_chrome_trace(tmp_path / "raw.json")
    ev = json.loads((tmp_path / "raw.json").read_text())["traceEvents"]
    ext = {e["name"]: e["args"]["External id"] for e in ev
           if e.get("ph") == "X" and e.get("cat") == "user_annotation"}
    (k,) = [e for e in ev if e.get("cat") == "kernel" and e["name"] == "_Z1kv"]
    assert k["args"]["External id"] == ext["inner"]
    with pytest.raises(ValueError, match="device record 0"):
        profiler.EventList(raw, gpu_activities=[("x", "q", 1, 2)])


# --------------------------------------------------------------------------
# this machine: no GPU
# --------------------------------------------------------------------------

def test_supported_activities_tell_the_truth_here():
    reason = _ext.device_available(_ext.DEVICE_CUPTI)
    acts = profiler.supported_activities()
    assert ProfilerActivity.CPU in acts
    assert (ProfilerActivity.CUDA in acts) == (reason is None)
    assert profiler.device_activity_ready() == (reason is None)
    if reason is not None:
        # one line from the C core saying what is missing
        assert reason.strip() and "\n" not in reason
        assert re.search(r"driver|libcupti|CUPTI|built without", reason)
    with pytest.raises(ValueError, match="unknown device collector"):
        _ext.device_available(64)


@pytest.mark.skipif(_ext.device_available(_ext.DEVICE_CUPTI) is None,
                    reason="this machine can record CUDA activity (a GPU is here)")
def test_no_device_says_why_once_and_records_the_cpu():
    reason = _ext.device_available(_ext.DEVICE_CUPTI)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        p = profiler.profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])
        with p:
            with record_function("cpu"):
                pass
    mine = [x for x in w if issubclass(x.category, RuntimeWarning)]
    msgs = [str(x.message) for x in mine]
    assert len(msgs) == 1, msgs
    assert reason in msgs[0] and "CPU only" in msgs[0] and "CUDA" in msgs[0]
    assert mine[0].filename == __file__  # points at the caller
    assert [e.name for e in p.events()] == ["cpu"]
    assert p.kineto_results() == [] and p.device_time_by_span == [0.0]
    assert len(p.device_kernels()) == 0 and p.device_kernels().activities == []
    assert "CUDA" not in p.key_averages().table()  # no device columns without device time
    # use_device="cuda" and gpu_trace=True ask for the same collector
    for kw in ({"use_device": "cuda"}, {"gpu_trace": True}):
        with pytest.warns(RuntimeWarning, match="CPU only") as rec:
            profiler.profile(**kw)
        assert reason in str(rec[0].message)


def test_a_refused_start_warns_once_and_records_the_cpu(monkeypatch):
    """Available when asked, refused at start (another CUPTI subscriber):
    one warning with the core's line, then the CPU is recorded, and later
    windows do not ask again."""
    tries = []

    def refuse(what):
        tries.append(what)
        raise RuntimeError("CUPTI: another CUPTI subscriber (CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_"
                           "NOT_SUPPORTED) (SPS_EACTIVE)")
    monkeypatch.setattr(_ext, "device_available", lambda what: None)
    monkeypatch.setattr(_ext, "device_start", refuse)
    sched = one_step_windows()
    with pytest.warns(RuntimeWarning, match="MULTIPLE_SUBSCRIBERS.*CPU only") as rec:
        with profiler.profile(activities=[ProfilerActivity.CUDA], schedule=sched) as p:
            for i in range(2):
                with record_function(f"w{i}"):
                    pass
                p.step()
    assert len([r for r in rec if "subscriber" in str(r.message)]) == 1 and len(tries) == 1
    assert sorted(e.name for e in p.events()) == ["w0", "w1"] and p.kineto_results() == []


# --------------------------------------------------------------------------
# end to end: the C core's collector against the stand-in libcupti
# --------------------------------------------------------------------------

FAKE = next((p for p in (BUILD / "libsps_fake_cupti.so",
                         BUILD / "tests" / "c" / "libsps_fake_cupti.so") if p.exists()), None)

CHILD = r"""
import ctypes, json, os, sys
from spanscope import profiler
from spanscope.profiler import record_function
lib = ctypes.CDLL(os.environ["SPANSCOPE_CUPTI_LIB"])
lib.fake_cupti_launch.argtypes = [ctypes.c_char_p, ctypes.c_uint64]
out = {"supported": sorted(a.value for a in profiler.supported_activities()),
       "ready": profiler.device_activity_ready()}
with profiler.profile(activities=[profiler.ProfilerActivity.CUDA]) as p:
    with record_function("outer"):
        lib.fake_cupti_launch(b"_Z4axpyv", 50000)
        with record_function("inner"):
            lib.fake_cupti_launch(b"_Z4gemmv", 200000)
            lib.fake_cupti_launch(b"_Z4gemmv", 100000)
lib.fake_cupti_launch(b"_Z7outsidev", 1000)
ev = p.events()
out["events"] = [(e.name, e.self_device_time_total, e.device_time_total) for e in ev]
out["kernels"] = [(a.name, a.duration_us, a.span_name, a.stream)
                  for a in p.device_kernels().activities]
out["kineto"] = [(a.name(), a.activity_type(), a.correlation_id(), a.span())
                 for a in p.kineto_results()]
out["table"] = p.key_averages().table()
p.export_chrome_trace("t.json")
ev = json.load(open("t.json"))["traceEvents"]
out["trace_spans"] = {e["name"]: e["args"]["External id"] for e in ev
                      if e.get("cat") == "user_annotation"}
out["trace_kernels"] = [(e["name"], e["args"].get("External id")) for e in ev
                        if e.get("cat") == "kernel"]
json.dump(out, sys.stdout)
"""


@pytest.mark.skipif(FAKE is None, reason="the build has no stand-in libcupti "
                    "(libsps_fake_cupti.so: built only where CUPTI's headers are)")
def test_end_to_end_through_the_stand_in_libcupti(tmp_path):
    env = dict(os.environ, SPANSCOPE_CUPTI_LIB=str(FAKE), SPANSCOPE_CUDA_LIB=str(FAKE))
    r = subprocess.run([sys.executable, "-c", CHILD], env=env, cwd=tmp_path,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["supported"] == ["cpu", "cuda"] and out["ready"] is True
    # the launches made inside spans (the one at the end is outside: not in
    # the window at all, its session stopped)
    assert [k[:3] for k in out["kernels"]] == [["_Z4axpyv", 50.0, "outer"],
                                               ["_Z4gemmv", 200.0, "inner"],
                                               ["_Z4gemmv", 100.0, "inner"]]
    ev = {name: [own, tot] for name, own, tot in out["events"]}
    assert ev["inner"] == [300.0, 300.0] and ev["outer"] == [50.0, 350.0]
    kinds = [(k[0], k[1]) for k in out["kineto"]]
    assert kinds.count(("cudaLaunchKernel", "cuda_runtime")) == 3
    corr = {}
    for name, typ, c, span in out["kineto"]:
        corr.setdefault(c, []).append((typ, span))
    assert all(len(v) == 2 and v[0][1] == v[1][1] for v in corr.values())  # same span
    assert "Self CUDA" in out["table"] and "CUDA total" in out["table"]
    ext = out["trace_spans"]
    assert sorted(out["trace_kernels"]) == sorted([["_Z4axpyv", ext["outer"]],
                                                  ["_Z4gemmv", ext["inner"]],
                                                  ["_Z4gemmv", ext["inner"]]])
