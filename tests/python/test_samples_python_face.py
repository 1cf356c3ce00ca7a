"""The Python faces of the stack sampler (issue 34, part 2): the torch-style
profile's with_samples=True (events().samples, key_averages(group_by_stack_n),
export_stacks, the Chrome trace's instant events), EventList(samples=...),
and the reader's Results.samples (_ext.read_samples over sps_samples_read).

The CPU-cost test follows tests/c/test_sampling.c: a sample stands for the
CPU time since the one before it (its weight), and the kernel checks CPU
timers at its tick, so a periodic load whose boundaries keep a few phases
against the tick aliases; each round here burns a CPU-time length varied to
the microsecond, and the lengths are long against a tick.
"""
import gzip
import json
import os
import sys
import sysconfig
import threading
import time
import warnings

import numpy as np
import pytest

from spanscope import _ext
from spanscope import profiler as P
from spanscope import results

pytestmark = pytest.mark.skipif(
    not hasattr(_ext, "sampling_start"), reason="this build has no stack sampler")

# the walker knows CPython 3.10-3.13 with a GIL (docs/sampling.md); elsewhere
# samples keep native frames only, so the Python-frame checks cannot hold
PY_FRAMES = not sysconfig.get_config_var("Py_GIL_DISABLED") and sys.version_info < (3, 14)
needs_py_frames = pytest.mark.skipif(not PY_FRAMES, reason="no Python frame walker for "
                                     "this interpreter (docs/sampling.md)")
QUALNAMES = sys.version_info >= (3, 11)


def fname(func):
    code = func.__code__
    return code.co_qualname if QUALNAMES else code.co_name


def lines_of(func):
    """The line numbers of func's body."""
    import inspect
    src, first = inspect.getsourcelines(func)
    return set(range(first, first + len(src)))


def heavy(ns):
    """Burns ns of this thread's CPU time in Python bytecode."""
    end = time.thread_time_ns() + ns
    x = 0
    while time.thread_time_ns() < end:
        for i in range(300):
            x += i
    return x


def light(ns):
    """The same as heavy, another function."""
    end = time.thread_time_ns() + ns
    x = 0
    while time.thread_time_ns() < end:
        for i in range(300):
            x += i
    return x


def late(ns):
    """What the thread started after the sampler does."""
    end = time.thread_time_ns() + ns
    x = 0
    while time.thread_time_ns() < end:
        for i in range(300):
            x ^= i
    return x


def run_3_to_1(rounds=8):
    """heavy 3d and light d per round, d 25-45 ms varied to the µs."""
    rng = np.random.default_rng(1234)
    for _ in range(rounds):
        d = int(rng.integers(25_000, 45_000)) * 1000
        with P.record_function("heavy_region"):
            heavy(3 * d)
        with P.record_function("light_region"):
            light(d)


def late_thread():
    """A thread started after the sampler began: its region and work."""
    def body():
        with P.record_function("late_region"):
            late(150_000_000)
    t = threading.Thread(target=body, name="late-thread")
    t.start()
    t.join()
    return t.native_id


# When the sampled fixture's profile had ended (its sampler stopped), on
# the spans' clock (time.perf_counter_ns is CLOCK_MONOTONIC, as the core's).
SAMPLED_WINDOW_END_NS = [0]


@pytest.fixture(scope="module")
def sampled(tmp_path_factory):
    """One profile(with_samples=True) over the 3:1 load and a late thread
    (module-scoped: about 1.5 s of CPU), with its exports written."""
    from spanscope import ProfileManager
    ProfileManager._reset()
    with P.profile(with_samples=True) as prof:
        time.sleep(0.05)  # the late thread starts well after the sampler
        run_3_to_1()
        tid = late_thread()
    SAMPLED_WINDOW_END_NS[0] = time.perf_counter_ns()  # the sampler has stopped
    d = tmp_path_factory.mktemp("sampled")
    prof.export_stacks(str(d / "stacks.txt"))
    prof.export_chrome_trace(str(d / "trace.json"))
    prof.export_chrome_trace(str(d / "trace.json.gz"))
    return prof, tid, d


def region_periods(samples):
    out = {}
    for name, lines in samples.by_region().items():
        out[name] = sum(s.samples for s in lines)
    return out


def test_no_warning_and_the_rate(recwarn):
    with P.profile(with_samples=True) as prof:
        heavy(20_000_000)
    assert not [w for w in recwarn if "sample" in str(w.message)]
    rec = prof._result
    assert rec.samples is not None and rec.samples.hz == 1000
    assert _ext.sampling_hz() == 0  # stopped with the window


def test_weights_follow_cpu_cost_3_to_1(sampled):
    prof, _tid, _d = sampled
    per = region_periods(prof._result.samples)
    h, l = per.get("heavy_region", 0), per.get("light_region", 0)
    assert l > 0, per
    assert abs(h / l - 3.0) <= 0.15 * 3.0, (h, l, per)
    # weights are timer periods: 1000 Hz, so the samples stand for about the
    # CPU time the regions burned (3 x 8 x 35 ms + 8 x 35 ms = 1.12 s on average)
    secs = (h + l) / 1000
    assert 0.7 < secs < 1.7, secs


@needs_py_frames
def test_python_function_names_and_lines(sampled):
    prof, _tid, _d = sampled
    s = prof._result.samples
    leaves = {}
    for i in range(len(s)):
        for func, file, line in s.frames(i):
            if file == __file__:
                leaves.setdefault(func, set()).add(line)
    assert fname(heavy) in leaves and fname(light) in leaves, leaves
    assert leaves[fname(heavy)] <= lines_of(heavy)
    assert leaves[fname(light)] <= lines_of(light)
    # the sampled stacks go up to the caller: run_3_to_1 on the line calling heavy
    i = next(i for i in range(len(s)) if s.region(i) == "heavy_region")
    funcs = [f for f, _file, _line in s.frames(i)]
    assert fname(run_3_to_1) in funcs and funcs.index(fname(run_3_to_1)) > 0


def test_thread_started_after_sampling_began(sampled):
    prof, tid, _d = sampled
    s = prof._result.samples
    mine = s.tids == tid
    assert mine.any(), "the late thread has no samples"
    regions = {s.region(i) for i in np.nonzero(mine)[0].tolist()}
    assert "late_region" in regions
    per = region_periods(s)
    assert 100 <= per["late_region"] <= 220, per  # 150 ms of CPU at 1 kHz
    if PY_FRAMES:
        i = int(np.nonzero(mine)[0][0])
        assert fname(late) in [f for f, _file, _line in s.frames(i)]


def test_events_samples_are_tensorplays_tuples(sampled):
    prof, tid, _d = sampled
    ev = prof.events()
    assert len(ev.samples) == len(prof._result.samples)
    ts, t, stack = ev.samples[0]
    assert isinstance(ts, int) and isinstance(t, int) and stack
    assert all(isinstance(f, str) and f.endswith(")") for f in stack)
    assert any(t == tid for _ts, t, _st in ev.samples)
    rec = prof._result
    assert all(rec.base_ns <= ts <= rec.end_ns for ts, _t, _st in ev.samples)


@needs_py_frames
def test_key_averages_group_by_stack_n(sampled):
    prof, _tid, _d = sampled
    rows = prof.key_averages(group_by_stack_n=2)
    assert rows, "no rows"
    assert all(len(r.stack) <= 2 for r in rows)
    heavy_rows = [r for r in rows if r.name == "heavy_region"]
    assert heavy_rows
    # the heavy region's self samples: innermost frame in heavy() (or a C
    # function it calls, shown with its caller heavy() next)
    top = max(heavy_rows, key=lambda r: r.count)
    assert any(f"({fname(heavy)})" in f for f in top.stack), top.stack
    # counts are the samples' periods; times what they stand for at 1 kHz
    assert sum(r.count for r in rows) == int(prof._result.samples.weights.sum())
    assert top.self_cpu_time_total == pytest.approx(top.count * 1000.0)
    assert abs(sum(r.self_cpu_percent for r in rows) - 100.0) < 1e-6
    table = rows.table(sort_by="self_cpu_time_total", row_limit=10)
    assert "Source Location" in table and "heavy_region" in table
    assert f"({fname(heavy)})" in table
    # group_by_stack_n=1 splits no more than 2 does
    assert len(prof.key_averages(group_by_stack_n=1)) <= len(rows)
    # without group_by_stack_n the rows are the spans, as always
    plain = prof.key_averages()
    assert {r.name for r in plain} >= {"heavy_region", "light_region", "late_region"}
    assert next(r for r in plain if r.name == "heavy_region").count == 8


@needs_py_frames
def test_export_stacks_folded_from_samples(sampled):
    prof, tid, d = sampled
    lines = (d / "stacks.txt").read_text().splitlines()
    assert lines
    total = 0
    for ln in lines:
        stack, _, value = ln.rpartition(" ")
        assert stack.startswith("thread_") and int(value) > 0
        total += int(value)
    # values: CPU µs, the samples' periods at 1000 Hz
    assert total == pytest.approx(int(prof._result.samples.weights.sum()) * 1000, abs=1)
    heavy_lines = [ln for ln in lines if f"{fname(heavy)} ({__file__}:" in ln]
    assert heavy_lines
    # outermost first: the caller before heavy
    ln = heavy_lines[0]
    assert ln.index(fname(run_3_to_1)) < ln.index(f"{fname(heavy)} (")
    assert any(ln.startswith(f"thread_{tid};") for ln in lines)


def test_chrome_trace_has_the_samples_as_instants(sampled):
    prof, tid, d = sampled
    for name, opener in (("trace.json", open), ("trace.json.gz", gzip.open)):
        with opener(d / name, "rt") as f:
            doc = json.load(f)
        evs = doc["traceEvents"]
        inst = [e for e in evs if e.get("cat") == "python_function"]
        assert len(inst) == len(prof._result.samples)
        e = inst[0]
        assert e["ph"] == "i" and e["s"] == "t" and e["args"]["stack"]
        assert e["args"]["stack"][0].endswith(f"({e['name']})")  # the leaf's function
        assert e["args"]["weight"] >= 1
        assert {e["args"].get("region") for e in inst} >= {"heavy_region", "light_region"}
        assert any(e["tid"] == tid for e in inst)
        # on the lanes of the spans: the late thread's span shares its tid
        span_tids = {e["tid"] for e in evs if e.get("ph") == "X"}
        assert tid in span_tids
        assert evs[-1]["name"] == "Record Window End"
        # on the spans' timeline: every sample inside the profile's window,
        # which outlasts the spans (the late thread's join, the window's
        # end), by as long as the machine takes there: a bound on the spans'
        # end failed under load; the window's end (taken here, after the
        # sampler stopped) cannot
        ends = max(e["ts"] + e["dur"] for e in evs if e.get("ph") == "X")
        window_end_us = (SAMPLED_WINDOW_END_NS[0] - prof._result.base_ns) / 1e3
        assert all(0 <= e["ts"] <= window_end_us for e in inst), window_end_us
        assert min(e["ts"] for e in inst) < ends  # among the spans, not after them


def expected_instants(rec):
    """The instants a profile's JSON trace holds for rec's samples, as the
    face wrote them in Python before the C writer did (tensorplay's): per
    sample (name, ts in us from base_ns, tid, stack, region, weight)."""
    s = rec.samples
    out = []
    for (ts, tid, chain), k, r, w in zip(P._sample_records(s), s.stacks.tolist(),
                                         s.regions.tolist(), s.weights.tolist()):
        st = s.stack(k)
        name = (s.functions[int(st[0])] or "?") if len(st) else "<unknown>"
        out.append((name, round((ts - rec.base_ns) / 1e3, 3), tid, tuple(chain),
                    s.region_names[r] if r >= 0 else None, w))
    return sorted(out, key=repr)


def instants_of(doc):
    return sorted(((e["name"], e["ts"], e["tid"], tuple(e["args"]["stack"]),
                    e["args"].get("region"), e["args"]["weight"])
                   for e in doc["traceEvents"] if e.get("cat") == "python_function"), key=repr)


def test_chrome_trace_instants_are_the_samples(sampled):
    """The C writer's instants (sps_timeline_write_samples) say what the
    Python face's did: every sample's leaf, time, tid, stack, region and
    weight, each once, on one pid with the spans."""
    prof, _tid, d = sampled
    doc = json.loads((d / "trace.json").read_text())
    assert instants_of(doc) == expected_instants(prof._result)
    pids = {e["pid"] for e in doc["traceEvents"] if e.get("ph") in ("X", "i") and "pid" in e}
    assert len(pids) == 1
    # a tid without spans has its row, named
    named = {e["tid"] for e in doc["traceEvents"] if e.get("name") == "thread_name"}
    assert {e["tid"] for e in doc["traceEvents"] if e.get("cat") == "python_function"} <= named


def perf_samples(path):
    """The PerfSample packets of the Perfetto trace at path, parsed with
    Perfetto's own schema (no unknown field in them): [(timestamp, pid,
    tid, leaf function, callstack depth)], and the trace's thread tracks
    {(pid, tid)}."""
    pb = pytest.importorskip("perfetto.protos.perfetto.trace.perfetto_trace_pb2",
                             reason="the perfetto package is not installed")
    from google.protobuf import unknown_fields
    trace = pb.Trace.FromString(open(path, "rb").read())
    fn, frames, cs, threads, out = {}, {}, {}, set(), []
    for p in trace.packet:
        if p.HasField("interned_data"):
            d = p.interned_data
            fn.update({(p.trusted_packet_sequence_id, x.iid): x.str.decode()
                       for x in d.function_names})
            frames.update({(p.trusted_packet_sequence_id, x.iid): x for x in d.frames})
            cs.update({(p.trusted_packet_sequence_id, x.iid): list(x.frame_ids)
                       for x in d.callstacks})
        if p.HasField("track_descriptor") and p.track_descriptor.HasField("thread"):
            threads.add((p.track_descriptor.thread.pid, p.track_descriptor.thread.tid))
    for p in trace.packet:
        if not p.HasField("perf_sample"):
            continue
        assert len(unknown_fields.UnknownFieldSet(p.perf_sample)) == 0
        assert p.timestamp_clock_id == 3  # BUILTIN_CLOCK_MONOTONIC, absolute
        seq, s = p.trusted_packet_sequence_id, p.perf_sample
        chain = [frames[(seq, f)] for f in cs[(seq, s.callstack_iid)]]  # root first
        leaf = fn[(seq, chain[-1].function_name_id)] if chain else "<unknown>"
        out.append((p.timestamp, s.pid, s.tid, leaf, len(chain)))
    return out, threads


def test_pftrace_has_the_samples_as_perf_samples(sampled, tmp_path):
    """profile(with_samples=True).export_chrome_trace("x.pftrace"): no
    warning; a PerfSample per timer period (up to 64 a sample) at the
    sample's time on its thread, the late thread's too, its leaf frame the
    sample's innermost function."""
    prof, tid, _d = sampled
    out = tmp_path / "t.pftrace"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        prof.export_chrome_trace(str(out))
    got, threads = perf_samples(out)
    s = prof._result.samples
    leaf = []
    for k in s.stacks.tolist():
        st = s.stack(k)
        leaf.append(s.functions[int(st[0])] if len(st) else "<unknown>")
    want = sorted((t, tid_, lf) for t, tid_, lf, w in
                  zip(s.times_ns.tolist(), s.tids.tolist(), leaf, s.weights.tolist())
                  for _ in range(min(w, 64)))
    assert sorted((t, tid_, lf) for t, _pid, tid_, lf, _n in got) == want
    assert {(pid, tid_) for _t, pid, tid_, _lf, _n in got} <= threads
    assert len({pid for _t, pid, *_ in got}) == 1
    leaves = [lf for _t, _pid, tid_, lf, _n in got if tid_ == tid]
    assert leaves  # the thread started after the sampler, on its row
    if PY_FRAMES:
        assert fname(late) in leaves
    # the spans are still there: the trace reader takes them back (a merge
    # of the one file, to JSON)
    back = tmp_path / "back.json"
    _ext.merge(str(back), [str(out)])
    names = {e["name"] for e in json.loads(back.read_text())["traceEvents"] if e.get("ph") == "X"}
    assert {"heavy_region", "light_region", "late_region"} <= names


def test_torch_tb_layout_keeps_the_instants(sampled, tmp_path):
    prof, _tid, _d = sampled
    out = tmp_path / "tb.json"
    prof.export_chrome_trace(str(out), torch_tb=True)
    doc = json.loads(out.read_text())
    assert instants_of(doc) == expected_instants(prof._result)


def test_bad_sample_period_env(monkeypatch):
    monkeypatch.setenv("TP_PROFILER_SAMPLE_MS", "zero")
    with pytest.raises(ValueError, match="TP_PROFILER_SAMPLE_MS"):
        P.profile(with_samples=True)
    monkeypatch.setenv("TP_PROFILER_SAMPLE_MS", "-1")
    with pytest.raises(ValueError, match="positive"):
        P.profile(with_samples=True)
    monkeypatch.setenv("TP_PROFILER_SAMPLE_MS", "4")
    with P.profile(with_samples=True) as prof:
        heavy(30_000_000)
    assert prof._result.samples.hz == 250
    # without with_samples the variable is not read
    monkeypatch.setenv("TP_PROFILER_SAMPLE_MS", "zero")
    P.profile()


def test_without_samples_export_stacks_is_the_spans(tmp_path):
    with P.profile() as prof:
        with P.record_function("outer"):
            with P.record_function("inner"):
                heavy(2_000_000)
    assert prof._result.samples is None
    prof.export_stacks(str(tmp_path / "s.txt"))
    text = (tmp_path / "s.txt").read_text()
    assert ";outer;inner " in text
    assert prof.events().samples == []


def test_windows_accumulate_samples():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # warmup=0: torch's warning
        sched = P.schedule(wait=0, warmup=0, active=1, repeat=2)
    prof = P.profile(with_samples=True, schedule=sched)
    with prof:
        for step in range(2):
            with P.record_function(f"step{step}"):
                heavy(60_000_000)
            prof.step()
    per = region_periods(prof._result.samples)
    assert per.get("step0", 0) > 20 and per.get("step1", 0) > 20, per


# ---------------------------------------------------------------------------
# EventList(samples=...): tensorplay's tuples
# ---------------------------------------------------------------------------

RAW = [("fwd", "u", 1_000, 9_000, 7), ("mm", "o", 2_000, 5_000, 7),
       ("other", "u", 1_000, 4_000, 8)]
SAMPLES = [
    (2_500, 7, ["/m.py:10 (matmul)", "/m.py:50 (fwd)", "/m.py:90 (<module>)"]),
    (3_000, 7, ["/m.py:10 (matmul)", "/m.py:50 (fwd)", "/m.py:90 (<module>)"]),
    (6_000, 7, ["/m.py:60 (fwd)", "/m.py:90 (<module>)"]),
    (3_500, 8, ["/o.py:5 (work)"]),
    (9_500, 7, ["/m.py:95 (<module>)"]),   # after fwd: outside every span
]


def test_eventlist_samples_attributed_and_grouped():
    ev = P.EventList(RAW, samples=SAMPLES)
    assert ev.samples == [(t, tid, list(st)) for t, tid, st in SAMPLES]
    rows = ev.key_averages(group_by_stack_n=1)
    got = {(r.name, r.stack): r.count for r in rows}
    assert got == {("mm", ("/m.py:10 (matmul)",)): 2, ("fwd", ("/m.py:60 (fwd)",)): 1,
                   ("other", ("/o.py:5 (work)",)): 1,
                   (P._NO_SPAN, ("/m.py:95 (<module>)",)): 1}
    # one sample per TP_PROFILER_SAMPLE_MS (tensorplay's default: 5 ms)
    mm = next(r for r in rows if r.name == "mm")
    assert mm.self_cpu_time_total == pytest.approx(2 * 5000.0)
    assert "Source Location" in rows.table()
    two = ev.key_averages(group_by_stack_n=2)
    assert {r.stack for r in two if r.name == "mm"} == {("/m.py:10 (matmul)", "/m.py:50 (fwd)")}


def test_eventlist_samples_exports(tmp_path):
    ev = P.EventList(RAW, samples=SAMPLES)
    ev.export_stacks(str(tmp_path / "s.txt"))
    lines = (tmp_path / "s.txt").read_text().splitlines()
    assert "thread_7;<module> (/m.py:90);fwd (/m.py:50);matmul (/m.py:10) 10000" in lines
    assert "thread_8;work (/o.py:5) 5000" in lines
    ev.export_chrome_trace(str(tmp_path / "t.json"))
    doc = json.loads((tmp_path / "t.json").read_text())
    inst = [e for e in doc["traceEvents"] if e.get("cat") == "python_function"]
    assert [(e["ts"], e["tid"], e["args"]["stack"]) for e in inst] == \
        [(t / 1e3, tid, st) for t, tid, st in SAMPLES]
    assert inst[0]["name"] == "matmul" and inst[0]["ph"] == "i"
    assert [e["args"].get("region") for e in inst] == ["mm", "mm", "fwd", "other", None]
    assert all(e["args"]["weight"] == 1 for e in inst)


def test_eventlist_samples_pftrace_and_odd_tids(tmp_path):
    """EventList(samples=...) to .pftrace: a PerfSample per sample on its
    tid's row; a tid that is no int (hashed) or outside Perfetto's int32
    still gets a row of its own, named after it (in a .pftrace with a tid
    in 0..2^31-1, Perfetto's range)."""
    ev = P.EventList(RAW, samples=SAMPLES)
    ev.export_chrome_trace(str(tmp_path / "t.pftrace"))
    got, _threads = perf_samples(tmp_path / "t.pftrace")
    assert sorted((t, tid, lf) for t, _p, tid, lf, _n in got) == sorted(
        (t, tid, st[0].rsplit(" (", 1)[1][:-1]) for t, tid, st in SAMPLES)
    odd = P.EventList(samples=[(5, "worker", ["/m.py:3 (f)"]), (6, -3, ["g"]),
                               (7, 1 << 40, ["/m.py:9 (h)"])])
    odd.export_chrome_trace(str(tmp_path / "o.json"))
    doc = json.loads((tmp_path / "o.json").read_text())
    inst = [e for e in doc["traceEvents"] if e.get("cat") == "python_function"]
    assert [(e["name"], e["tid"]) for e in inst][1:] == [("g", -3), ("h", 1 << 40)]
    names = {e["tid"]: e["args"]["name"] for e in doc["traceEvents"]
             if e.get("name") == "thread_name"}
    assert names[1 << 40] == f"thread {1 << 40} (samples)"
    odd.export_chrome_trace(str(tmp_path / "o.pftrace"))
    got, threads = perf_samples(tmp_path / "o.pftrace")
    assert sorted(lf for *_x, lf, _n in got) == ["f", "g", "h"]
    assert all(0 <= tid < 2 ** 31 for _t, _p, tid, _lf, _n in got)
    assert len({tid for _t, _p, tid, _lf, _n in got}) == 3


def test_eventlist_samples_only_and_bad_samples(tmp_path):
    ev = P.EventList(samples=SAMPLES[:1])
    ev.export_stacks(str(tmp_path / "s.txt"))
    assert (tmp_path / "s.txt").read_text().startswith("thread_7;<module> (/m.py:90);")
    rows = ev.key_averages(group_by_stack_n=3)
    assert [(r.name, r.count) for r in rows] == [(P._NO_SPAN, 1)]
    # a frame without a line ("where (function)": a native module's) keeps
    # its place; any other text is a function of its own
    ev = P.EventList(samples=[(5, 1, ["/lib/libm.so.6 (cos)", "odd frame", "/m.py:3 (f)"])])
    ev.export_stacks(str(tmp_path / "n.txt"))
    assert (tmp_path / "n.txt").read_text() == \
        "thread_1;f (/m.py:3);odd frame;cos (/lib/libm.so.6) 5000\n"
    for bad in ([(1, 2)], [(1, 2, "a.py:1 (f)")], [("x", 1, [])], [(1, 2, [3])]):
        with pytest.raises(ValueError, match="samples"):
            P.EventList(samples=bad)
    assert P.EventList().samples == []


# ---------------------------------------------------------------------------
# Results.samples: a file's /samples
# ---------------------------------------------------------------------------

def test_results_samples_by_region(tmp_path):
    path = str(tmp_path / "s.h5")
    _ext.setup(None, local=True, track=0)
    try:
        _ext.sampling_start(1000)
        with P.record_function("hot"):
            heavy(240_000_000)
        with P.record_function("cold"):
            light(80_000_000)
        _ext.finalize(path, False)
    finally:
        _ext.sampling_stop()
        _ext.shutdown()
    res = results.read(path)
    s = res.samples
    assert isinstance(s, results.Samples) and len(s) > 0 and s.hz == 1000
    assert s is res.samples  # read once
    by = s.by_region()
    hot = sum(x.samples for x in by["hot"])
    cold = sum(x.samples for x in by["cold"])
    assert abs(hot / cold - 3.0) <= 0.15 * 3.0, (hot, cold)
    top = by["hot"][0]
    assert top.seconds == pytest.approx(top.samples / 1000)
    assert by["hot"] == sorted(by["hot"], key=lambda x: -x.samples)
    if PY_FRAMES:
        assert any(x.function == fname(heavy) and x.file == __file__ and
                   x.line in lines_of(heavy) for x in by["hot"])
    # the arrays agree with each other
    assert len(s.times_ns) == len(s.weights) == len(s.regions) == len(s)
    assert (s.weights >= 1).all() and s.cpu_seconds == pytest.approx(s.weights.sum() / 1000)
    assert s.frames(0) and all(len(f) == 3 for f in s.frames(0))
    with pytest.raises(IndexError):
        s.frames(len(s))
    pd = pytest.importorskip("pandas")
    df = s.to_dataframe()
    assert isinstance(df, pd.DataFrame) and len(df) == len(s)
    assert set(df["region"].dropna()) <= {"hot", "cold"}
    assert df["weight"].sum() == s.weights.sum()


def test_results_samples_of_a_file_without_them(tmp_path):
    path = str(tmp_path / "n.h5")
    _ext.setup(None, local=True, track=0)
    try:
        with P.record_function("r"):
            pass
        _ext.finalize(path, False)
    finally:
        _ext.shutdown()
    s = results.read(path).samples
    assert len(s) == 0 and s.by_region() == {} and s.folded() == {}


def test_read_samples_errors(tmp_path):
    with pytest.raises(OSError):
        results.read_stack_samples(str(tmp_path / "missing.h5"))
    bad = tmp_path / "bad.h5"
    bad.write_bytes(b"not an hdf5 file at all")
    with pytest.raises((ValueError, OSError)):
        results.read_stack_samples(str(bad))


def test_samples_concat_keeps_regions_by_name(tmp_path):
    path = str(tmp_path / "c.h5")
    _ext.setup(None, local=True, track=0)
    try:
        _ext.sampling_start(1000)
        with P.record_function("only"):
            heavy(60_000_000)
        _ext.finalize(path, False)
    finally:
        _ext.sampling_stop()
        _ext.shutdown()
    s = results.read_stack_samples(path)
    both = results.Samples.concat([s, s.with_regions(["zzz"])])
    assert len(both) == 2 * len(s)
    assert region_periods(both)["only"] == 2 * region_periods(s)["only"]
    assert both.frames(len(s)) == s.frames(0)


# ---------------------------------------------------------------------------
# scope-profiler's native_samples: .sps files, `spanscope native-lines`
# ---------------------------------------------------------------------------

import shutil  # noqa: E402
import struct  # noqa: E402
import subprocess  # noqa: E402

import spanscope  # noqa: E402
from spanscope._cli import main as cli_main  # noqa: E402
from spanscope.results import _native_samples as ns  # noqa: E402

CC = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
SYMBOLIZER = shutil.which("llvm-symbolizer") or shutil.which("addr2line")
needs_cc = pytest.mark.skipif(CC is None, reason="no C compiler on PATH")
needs_symbolizer = pytest.mark.skipif(SYMBOLIZER is None,
                                      reason="no llvm-symbolizer or addr2line")

#: scope-profiler's C API (its test_native_samples program): each region runs
#: its own function for a while of CPU time
SP_PROGRAM = r"""
#define _POSIX_C_SOURCE 199309L
#include "scope_profiler.h"
#include <time.h>

static volatile double sink;

static long long cpu_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void hot_loop(long long ns)
{
    long long until = cpu_ns() + ns;
    volatile double a = 0.0, b = 0.0;
    while (cpu_ns() < until) {
        int i;
        for (i = 0; i < 2000; ++i) {
            a += i * 0.5;
            b += a * 1.0001 + b * 0.5 - a * b;
        }
        sink = a + b;
    }
}

static void cold_loop(long long ns)
{
    long long until = cpu_ns() + ns;
    volatile double a = 0.0;
    while (cpu_ns() < until) {
        int i;
        for (i = 0; i < 2000; ++i) {
            a += i * 0.5;
        }
        sink = a;
    }
}

int main(void)
{
    int hot, cold;
    sp_init("prof", 0);
    hot = sp_region("hot");
    cold = sp_region("cold");
    if (sp_start_sampling(1000) != SP_OK) return 3;
    sp_begin(hot);
    hot_loop(300000000LL);
    sp_end(hot);
    sp_begin(cold);
    cold_loop(100000000LL);
    sp_end(cold);
    sp_finalize();
    return 0;
}
"""

#: spanscope's own C API, sampling from its config: a -g build's native
#: frames in the file's /samples
SPS_PROGRAM = SP_PROGRAM.split("int main(void)")[0].replace(
    '#include "scope_profiler.h"', "#include <spanscope.h>") + r"""
int main(int argc, char **argv)
{
    sps_config_t cfg = SPS_CONFIG_INIT;
    (void)argc;
    cfg.file_path = argv[1];
    cfg.sample_hz = 1000;
    if (sps_setup(&cfg)) return 3;
    sps_region_t h = sps_region("hot"), c = sps_region("cold");
    sps_begin(h);
    hot_loop(300000000LL);
    sps_end(h);
    sps_begin(c);
    cold_loop(100000000LL);
    sps_end(c);
    return sps_finalize() < 0;
}
"""


def c_lines(program: str, function: str) -> range:
    """The source lines of function in program, signature to closing brace."""
    lines = program.splitlines()
    start = next(n for n, t in enumerate(lines, 1) if t.startswith(f"static void {function}("))
    end = next(n for n, t in enumerate(lines, 1) if n > start and t == "}")
    return range(start, end + 1)


def build_sp(tmp_path, program):
    src = tmp_path / "prog.c"
    src.write_text(program)
    exe = tmp_path / "prog"
    subprocess.run([CC, "-std=c99", "-g", "-O0", f"-I{results.c_include_dir()}", str(src),
                    str(results.c_source_path()), "-lm", "-ldl", "-o", str(exe)],
                   check=True, capture_output=True, text=True)
    return exe


@pytest.fixture(scope="module")
def sps_run(tmp_path_factory):
    """scope-profiler's C program, sampled: its folder and .sps file."""
    if CC is None:
        pytest.skip("no C compiler on PATH")
    d = tmp_path_factory.mktemp("sps")
    exe = build_sp(d, SP_PROGRAM)
    subprocess.run([str(exe)], cwd=d, check=True, capture_output=True, timeout=120)
    (path,) = d.glob("*.sps")
    return d, path


@needs_cc
def test_sps_file_read(sps_run):
    _d, path = sps_run
    s = ns.read_samples(path)
    assert (s.rank, s.hz, s.regions) == (0, 1000, ["hot", "cold"])
    assert s.modules and len(s.samples) == s.ticks > 200
    regions = s.samples["region"]
    assert set(regions.tolist()) - {-1} == {0, 1}
    # outside both regions: only the little CPU sp_finalize spends while the
    # sampler still runs (writing the file)
    assert (regions < 0).sum() <= 0.05 * len(regions)
    assert ns.find_sample_files(_d) == [path]


@needs_cc
@needs_symbolizer
def test_sps_line_profile_lands_in_the_function_that_ran(sps_run):
    _d, path = sps_run
    prof = ns.line_profile(ns.read_samples(path))
    hot = sum(s.samples for s in prof["hot"])
    cold = sum(s.samples for s in prof["cold"])
    assert abs(hot / cold - 3.0) <= 0.15 * 3.0, (hot, cold)
    for region, function in (("hot", "hot_loop"), ("cold", "cold_loop")):
        top = prof[region][0]
        assert top.function == function and top.file.endswith("prog.c")
        assert top.line in c_lines(SP_PROGRAM, function)
        # the region's own lines: its loop, the clock it reads (cpu_ns), or
        # main's few instructions between sp_begin and the call (a sample may
        # land there too)
        assert all(st.function in (function, "cpu_ns", "main") for st in prof[region]
                   if st.file.endswith("prog.c")), prof[region][:5]
    text = ns.format_line_profile(prof, top=2)
    assert text.startswith("hot  (") and "hot_loop" in text and "cold_loop" in text
    assert "b += a * 1.0001" in text  # the source column
    assert "source" not in ns.format_line_profile(prof, top=2, source=False)


@needs_cc
@needs_symbolizer
def test_native_lines_command(sps_run, capsys):
    d, path = sps_run
    assert cli_main(["native-lines", str(d), "--top", "2", "--no-source"]) == 0
    out = capsys.readouterr().out
    assert f"{path}  (rank 0, 1000 Hz)" in out
    assert "hot_loop" in out and "cold_loop" in out
    assert cli_main(["native-lines", str(d / "missing.sps")]) == 1
    assert "no such file" in capsys.readouterr().err
    assert cli_main(["native-lines", str(d), "--top", "0"]) == 2


@needs_cc
@needs_symbolizer
def test_native_lines_of_a_spanscope_file(tmp_path, capsys):
    src = tmp_path / "p.c"
    src.write_text(SPS_PROGRAM)
    pkg = os.path.dirname(spanscope.__file__)
    exe = tmp_path / "p"
    subprocess.run([CC, "-std=c99", "-g", "-O0", f"-I{results.c_include_dir()}", str(src),
                    "-o", str(exe), f"-L{pkg}", "-l:libspanscope.so.1", f"-Wl,-rpath,{pkg}"],
                   check=True, capture_output=True, text=True)
    h5 = tmp_path / "p.h5"
    subprocess.run([str(exe), str(h5)], check=True, capture_output=True, timeout=120)
    prof = ns.file_line_profile(h5)
    for region, function in (("hot", "hot_loop"), ("cold", "cold_loop")):
        top = prof[region][0]
        assert top.function == function and top.file.endswith("p.c"), prof[region][:3]
        assert top.line in c_lines(SPS_PROGRAM, function)
    hot = sum(s.samples for s in prof["hot"])
    cold = sum(s.samples for s in prof["cold"])
    assert abs(hot / cold - 3.0) <= 0.15 * 3.0, (hot, cold)
    # the same file's samples through the results API: native frames with
    # their source lines (a -g build: the file has them, through libdw)
    by = results.read(h5).samples.by_region()
    assert by["hot"][0].function == "hot_loop"
    assert by["hot"][0].file.endswith("p.c") and by["hot"][0].line in c_lines(SPS_PROGRAM, "hot_loop")
    assert cli_main(["native-lines", str(h5), "--top", "1"]) == 0
    out = capsys.readouterr().out
    assert "(spanscope stack samples)" in out and "hot_loop" in out


def sps_bytes(regions=("r",), modules=(("/bin/true", 0),), samples=((0, 0, 16),), hz=100,
              version=1):
    def text(s):
        b = s.encode()
        return struct.pack("=i", len(b)) + b
    out = b"SCOPESMP" + struct.pack("=iiiq", version, 0, hz, len(samples))
    out += struct.pack("=i", len(regions)) + b"".join(text(r) for r in regions)
    out += struct.pack("=i", len(modules)) + b"".join(text(m) + struct.pack("=Q", a)
                                                      for m, a in modules)
    out += struct.pack("=q", len(samples)) + b"".join(struct.pack("=iiQ", *s) for s in samples)
    return out


def test_sps_reader_checks_every_field(tmp_path):
    p = tmp_path / "a.sps"
    p.write_bytes(sps_bytes())
    s = ns.read_samples(p)
    assert (s.hz, s.ticks, s.regions, s.modules) == (100, 1, ["r"], [("/bin/true", 0)])
    assert s.samples.tolist() == [(0, 0, 16)]
    good = sps_bytes()
    cases = {
        "not": b"not a samples file",
        "truncated": good[:-5],
        "oversized": good + b"\0",
        "version": sps_bytes(version=2),
        # magic, version, rank, hz, ticks: 28 bytes; then the region count
        "huge region count": good[:28] + struct.pack("=i", 2**30) + good[32:],
        "negative region count": good[:28] + struct.pack("=i", -1) + good[32:],
        "huge name": good[:32] + struct.pack("=i", 2**30) + good[36:],
        "negative name": good[:32] + struct.pack("=i", -4) + good[36:],
    }
    for what, data in cases.items():
        p.write_bytes(data)
        with pytest.raises(ns.SampleFormatError):
            ns.read_samples(p)
    assert issubclass(ns.SampleFormatError, ValueError)


def test_sps_samples_outside_regions_and_unknown_modules(tmp_path):
    p = tmp_path / "b.sps"
    p.write_bytes(sps_bytes(regions=("a", "b"), modules=(("/no/such/module", 0),),
                            samples=((0, 0, 1), (-1, 0, 2), (1, -1, 0), (1, -1, 0))))
    prof = ns.line_profile(ns.read_samples(p))
    assert prof == {"a": [ns.LineStat("??", 0, "??", 1)], "b": [ns.LineStat("??", 0, "??", 2)]}


def test_find_sample_files_errors(tmp_path):
    with pytest.raises(FileNotFoundError):
        ns.find_sample_files(tmp_path)
    with pytest.raises(FileNotFoundError):
        ns.find_sample_files([tmp_path / "x.sps"])
    (tmp_path / "b.sps").write_bytes(b"")
    (tmp_path / "a.sps").write_bytes(b"")
    assert ns.find_sample_files([tmp_path, tmp_path / "a.sps"]) == \
        [tmp_path / "a.sps", tmp_path / "b.sps"]


def test_samples_of_a_running_session_go_to_its_file(tmp_path):
    """A ProfileManager session was running: the profile samples its window,
    warns, and the samples reach the session's file, not the profile."""
    from spanscope import ProfileManager
    path = tmp_path / "pm.h5"
    ProfileManager.setup(file_path=str(path))
    try:
        with pytest.warns(RuntimeWarning, match="already running"):
            with P.profile(with_samples=True) as prof:
                with P.record_function("inside"):
                    heavy(80_000_000)
        assert prof._result.samples is None and prof.events().samples == []
        assert _ext.sampling_hz() == 0  # the profile's sampler stopped with the window
    finally:
        ProfileManager.finalize(verbose=False)
    per = region_periods(results.read(path).samples)
    assert 40 <= per.get("inside", 0) <= 130, per


def test_folded_stacks_match_the_c_library(tmp_path):
    """Samples.folded() (the torch face's export_stacks) writes the frames
    the C library's folded stacks do (sps_export_stacks, `spanscope export
    folded`): the same lines, the same weights."""
    path = str(tmp_path / "f.h5")
    _ext.setup(None, local=True, track=0)
    try:
        _ext.sampling_start(1000)
        with P.record_function("r"):
            heavy(60_000_000)
            light(30_000_000)
        _ext.finalize(path, False)
    finally:
        _ext.sampling_stop()
        _ext.shutdown()
    out = tmp_path / "f.folded"
    if cli_main(["export", "folded", path, "-o", str(out)]) != 0:
        pytest.fail("spanscope export folded failed")
    c_lines = {}
    for ln in out.read_text().splitlines():
        stack, _, w = ln.rpartition(" ")
        c_lines[stack] = c_lines.get(stack, 0) + int(w)
    assert c_lines and results.read_stack_samples(path).folded(thread_prefix=False) == c_lines
