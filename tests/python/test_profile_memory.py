"""profile(profile_memory=True): memory per span on the torch-style face.

Each span gets the bytes its own thread allocated and freed while it was
open (the session reads the thread's allocation counters at every region
begin and end; Python's allocators and numpy's array data feed them while
the profile lives).  Checked here: known sizes from Python and numpy
regions (at least the known bytes: the interpreter allocates a little
around them), self against total (torch's self = own - children's own,
exactly), an allocation on another thread never in this thread's span
(torch's time-window bug, pytorch#166121), a region that allocates nothing
near 0, the peak of allocate-free-allocate, torch's "CPU Mem" / "Self CPU
Mem" columns with profile_memory only, the sorts, the averages' sums, the
memory timeline and its files, EventList(mem_events=...) in the trace,
the hooks' life, and a running session without memory tracking."""
import base64
import gzip
import json
import threading
import warnings

import numpy as np
import pytest

from spanscope import _ext
from spanscope import profiler as P
from spanscope.profiler import record_function

MB8 = 8_000_000        # np.empty(10**6) of float64: exactly these bytes
SLACK = 64 * 1024      # what the interpreter itself may allocate around them


def by_name(prof, name):
    evs = [e for e in prof.events() if e.name == name]
    assert evs, f"no span {name!r} in {[e.name for e in prof.events()]}"
    return evs


def one(prof, name):
    evs = by_name(prof, name)
    assert len(evs) == 1
    return evs[0]


def test_numpy_and_python_sizes_per_span():
    with P.profile(profile_memory=True) as p:
        with record_function("np_alloc"):
            a = np.empty(10**6)
        with record_function("np_free"):
            del a
        with record_function("py_alloc"):
            b = bytes(3 * 10**6)
        with record_function("py_free"):
            del b
    alloc, free = one(p, "np_alloc"), one(p, "np_free")
    assert alloc.cpu_memory_allocated >= MB8
    assert abs(alloc.cpu_memory_usage - MB8) < SLACK
    assert abs(free.cpu_memory_usage + MB8) < SLACK  # negative: torch's meaning
    assert free.cpu_memory_freed >= MB8
    py, pyf = one(p, "py_alloc"), one(p, "py_free")
    assert py.cpu_memory_allocated >= 3 * 10**6 and pyf.cpu_memory_freed >= 3 * 10**6
    assert abs(py.cpu_memory_usage - 3 * 10**6) < SLACK
    assert abs(pyf.cpu_memory_usage + 3 * 10**6) < SLACK
    # the raw values behind them, own and self, by the core's names
    v = alloc.values
    assert set(v) >= {"alloc_bytes", "free_bytes", "allocs", "frees", "peak_bytes"}
    assert v["alloc_bytes"][0] - v["free_bytes"][0] == alloc.cpu_memory_usage
    assert v["allocs"][0] >= 1


def test_self_is_own_minus_children_and_leaves_are_their_own():
    with P.profile(profile_memory=True) as p:
        with record_function("outer"):
            keep = [np.empty(125_000)]            # 1 MB, the outer's own
            with record_function("inner"):
                keep.append(np.empty(10**6))     # 8 MB
            with record_function("inner"):
                keep.append(np.empty(10**6))
    outer = one(p, "outer")
    inners = by_name(p, "inner")
    assert outer.cpu_memory_usage >= 17_000_000
    kids = outer.cpu_children
    assert sorted(c.name for c in kids) == ["inner", "inner"]
    assert outer.self_cpu_memory_usage == \
        outer.cpu_memory_usage - sum(c.cpu_memory_usage for c in kids)  # torch's, exactly
    assert 1_000_000 <= outer.self_cpu_memory_usage < 1_000_000 + SLACK
    for e in inners:
        assert e.self_cpu_memory_usage == e.cpu_memory_usage >= MB8
    # the averages: torch's sums over the group's spans; the peak the highest
    row = next(r for r in p.key_averages() if r.key == "inner")
    assert row.count == 2
    assert row.cpu_memory_usage == sum(e.cpu_memory_usage for e in inners)
    assert row.self_cpu_memory_usage == sum(e.self_cpu_memory_usage for e in inners)
    assert row.peak_cpu_memory_usage == max(e.peak_cpu_memory_usage for e in inners)
    tot = p.total_average()
    assert tot.cpu_memory_usage == sum(r.cpu_memory_usage for r in p.key_averages())
    assert tot.self_cpu_memory_usage == sum(r.self_cpu_memory_usage for r in p.key_averages())
    del keep


def test_allocation_on_another_thread_never_lands_in_this_threads_span():
    # thread B allocates 32 MB while thread A's span is open: torch counts it
    # for A's op (time window, pytorch#166121); spanscope credits B's span
    started, done = threading.Event(), threading.Event()
    held = []

    def b():
        started.wait()
        with record_function("b_alloc"):
            held.append(bytes(32 * 2**20))
        done.set()

    tb = threading.Thread(target=b)
    with P.profile(profile_memory=True) as p:
        tb.start()
        with record_function("a_waits"):
            started.set()
            assert done.wait(30)
        tb.join()
    a, bspan = one(p, "a_waits"), one(p, "b_alloc")
    assert a.thread != bspan.thread
    assert a.start_ns < bspan.start_ns and bspan.end_ns < a.end_ns  # overlapping in time
    assert a.cpu_memory_allocated < 2**20
    assert a.peak_cpu_memory_usage < 2**20
    assert bspan.cpu_memory_allocated >= 32 * 2**20
    assert abs(bspan.cpu_memory_usage - 32 * 2**20) < SLACK
    tl = p.memory_timeline()
    assert tl[bspan.thread]["bytes"][-1] == bspan.cpu_memory_usage
    assert tl[a.thread]["peak_bytes"] < 2**20
    del held


def test_numpy_arrays_of_another_thread_are_that_threads():
    held = []

    def worker():
        with record_function("worker_np"):
            held.append(np.empty(2 * 10**6))

    with P.profile(profile_memory=True) as p:
        with record_function("main_np"):
            t = threading.Thread(target=worker)
            t.start()
            t.join()
    scope = (p._hooks_info or {}).get("numpy_scope")
    main, work = one(p, "main_np"), one(p, "worker_np")
    assert main.cpu_memory_allocated < 2**20  # never the worker's 16 MB
    if scope != "all threads":
        pytest.skip(f"numpy's handler covers the installing context only here ({scope!r})")
    assert work.cpu_memory_allocated >= 2 * MB8
    del held


def test_a_region_that_allocates_nothing_shows_about_zero():
    x = 0
    with P.profile(profile_memory=True) as p:
        for _ in range(3):
            with record_function("idle"):
                x += 1
    for e in by_name(p, "idle"):
        assert abs(e.cpu_memory_usage) < 4096
        assert e.cpu_memory_allocated < 4096 and e.peak_cpu_memory_usage < 4096


def test_peak_of_allocate_free_allocate():
    with P.profile(profile_memory=True) as p:
        with record_function("afa"):
            a = np.ones(10**6)
            del a
            a = np.ones(10**6)
    e = one(p, "afa")
    assert abs(e.cpu_memory_usage - MB8) < SLACK
    assert e.cpu_memory_allocated >= 2 * MB8
    assert MB8 <= e.peak_cpu_memory_usage < MB8 + SLACK  # one array at a time
    assert e.peak_cpu_memory_usage >= e.cpu_memory_usage
    total, peak, timeline = p.memory_summary()
    assert total >= 2 * MB8 and MB8 <= peak < MB8 + SLACK
    assert ("alloc" in {k for _, _, k in timeline}
            and [t for t, _, _ in timeline] == sorted(t for t, _, _ in timeline))
    del a


def test_format_memory_is_torchs():
    f = P._fmt_memory
    assert [f(0), f(1023), f(1024), f(-1536), f(5 * 2**20), f(3 * 2**30), f(-2**31)] == \
        ["0 B", "1023 B", "1.00 KB", "-1.50 KB", "5.00 MB", "3.00 GB", "-2.00 GB"]


def _header(table: str) -> str:
    return table.splitlines()[1]


def test_table_columns_with_profile_memory_only_and_sorts():
    with P.profile(profile_memory=True) as p:
        with record_function("big"):
            a = np.empty(2 * 10**6)
        with record_function("small"):
            b = np.empty(10**5)
        with record_function("frees"):
            del a
    with P.profile() as q:
        with record_function("big"):
            pass
    for t in (p.key_averages().table(), p.table()):
        h = _header(t)
        assert "CPU Mem" in h and "Self CPU Mem" in h
        assert h.index("CPU time avg") < h.index("CPU Mem") < h.index("Self CPU Mem") \
            < h.index("# of Calls")
    for t in (q.key_averages().table(), q.table()):
        assert "CPU Mem" not in t
    rows = p.key_averages(sort_by="cpu_memory_usage")
    assert [r.key for r in rows] == ["big", "small", "frees"]
    assert [r.key for r in p.key_averages(sort_by="self_cpu_memory_usage")][0] == "big"
    assert [r.key for r in p.key_averages(sort_by="peak_cpu_memory_usage")][-1] == "frees"
    t = p.key_averages().table(sort_by="cpu_memory_usage")
    lines = t.splitlines()
    assert [ln.split()[0] for ln in lines[3:6]] == ["big", "small", "frees"]
    big = next(r for r in rows if r.key == "big")
    frees = next(r for r in rows if r.key == "frees")
    assert P._fmt_memory(big.cpu_memory_usage) in lines[3]
    assert P._fmt_memory(frees.cpu_memory_usage) in lines[5]
    assert P._fmt_memory(frees.cpu_memory_usage).startswith("-15.2")  # -15.26 MB freed
    del b


def test_memory_timeline_and_its_files(tmp_path):
    with P.profile(profile_memory=True) as p:
        with record_function("step"):
            with record_function("alloc"):
                a = np.empty(10**6)
            with record_function("tmp"):
                t = np.empty(10**6)
                del t
        with record_function("free"):
            del a
    tl = p.memory_timeline()
    ev = p.events()
    me = one(p, "step").thread
    th = tl[me]
    assert th["thread_name"] == threading.current_thread().name
    assert list(th["times_ns"]) == sorted(th["times_ns"]) and th["bytes"][0] == 0
    tops = [e for e in ev if e.cpu_parent is None and e.thread == me]
    assert th["bytes"][-1] == sum(e.cpu_memory_usage for e in tops)  # exact at the ends
    assert th["peak_bytes"] >= 2 * MB8   # "tmp" held a second array inside "step"

    rows = p.export_memory_timeline(tmp_path / "m.json")
    assert rows and all(d == "cpu" for _, d, _ in rows)
    assert rows[-1][2] == sum(int(b[-1]) for b in (v["bytes"] for v in tl.values()))
    times, sizes = json.loads((tmp_path / "m.json").read_text())
    assert len(times) == len(sizes) and times == sorted(times)
    assert all(len(s) == 9 and s[:8] == [0] * 8 for s in sizes)  # torch's row, all unknown
    assert sizes[-1][8] == rows[-1][2] and times[-1] == rows[-1][0] // 1000

    p.export_memory_timeline(str(tmp_path / "m.json.gz"))
    with gzip.open(tmp_path / "m.json.gz", "rt") as f:
        assert json.load(f) == [times, sizes]

    p.export_memory_timeline(tmp_path / "m.raw.json.gz")
    with gzip.open(tmp_path / "m.raw.json.gz", "rt") as f:
        raw = json.load(f)
    assert raw and all(len(r) == 4 and r[1] in (2, 4) and r[3] == 7 for r in raw)
    assert all((r[2] > 0) == (r[1] == 2) for r in raw)
    assert sum(r[2] for r in raw) == rows[-1][2]

    p.export_memory_timeline(tmp_path / "m.csv")
    lines = (tmp_path / "m.csv").read_text().splitlines()
    assert lines[0] == "timestamp_ns,device,allocated_bytes"
    assert lines[1:] == [f"{t},{d},{b}" for t, d, b in rows]

    pytest.importorskip("matplotlib")
    p.export_memory_timeline(tmp_path / "m.html", device="cpu")
    html = (tmp_path / "m.html").read_text()
    assert html.startswith("<html>") and "<title>CPU Memory Timeline HTML</title>" in html
    png = html.split("data:image/png;base64,", 1)[1].split("'", 1)[0]
    assert base64.b64decode(png).startswith(b"\x89PNG\r\n\x1a\n")

    with pytest.raises(ValueError, match="CPU"):
        p.export_memory_timeline(tmp_path / "g.json", device="cuda:0")


def test_without_profile_memory_there_is_no_memory(tmp_path):
    with P.profile() as p:
        with record_function("x"):
            a = np.empty(10**6)
    e = one(p, "x")
    assert (e.cpu_memory_usage, e.self_cpu_memory_usage, e.peak_cpu_memory_usage) == (0, 0, 0)
    assert e.values == {}
    assert p.memory_summary() == (0, 0, []) and p.memory_timeline() == {}
    assert p.export_memory_timeline(tmp_path / "m.json") == []
    assert json.loads((tmp_path / "m.json").read_text()) == [[], []]
    del a


def test_hooks_live_as_long_as_the_profile():
    assert not _ext.mem_hooks_active()
    with P.profile(profile_memory=True):
        assert _ext.mem_hooks_active()
    assert not _ext.mem_hooks_active()
    # installed by someone else before: left as they were
    _ext.mem_hooks_install(python=True, numpy=True)
    try:
        with P.profile(profile_memory=True) as p:
            with record_function("x"):
                a = np.empty(10**6)
        assert _ext.mem_hooks_active()
        assert one(p, "x").cpu_memory_usage >= MB8
    finally:
        _ext.mem_hooks_uninstall()
    del a


def test_a_session_without_memory_tracking_warns_and_records_none():
    _ext.setup(None, local=True)  # a session someone else started, no track
    try:
        with pytest.warns(RuntimeWarning, match="without memory tracking"):
            with P.profile(profile_memory=True) as p:
                with record_function("x"):
                    a = np.empty(10**6)
        assert one(p, "x").cpu_memory_usage == 0
        assert "CPU Mem" not in p.key_averages().table()
    finally:
        _ext.shutdown()
    del a


def test_each_window_of_a_schedule_keeps_its_memory():
    held = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # warmup=0
        sched = P.schedule(wait=0, warmup=0, active=1, repeat=2)
    with P.profile(profile_memory=True, schedule=sched) as p:
        for i in range(2):
            with record_function(f"w{i}"):
                held.append(np.empty(10**6))
            p.step()
    names = [e.name for e in p.events()]
    assert names == ["w0", "w1"]
    assert all(abs(e.cpu_memory_usage - MB8) < SLACK for e in p.events())
    assert "CPU Mem" in p.key_averages().table()


def test_trace_says_profile_memory_and_has_a_memory_track(tmp_path):
    with P.profile(profile_memory=True) as p:
        with record_function("x"):
            a = np.empty(10**6)
    p.export_chrome_trace(tmp_path / "t.json")
    doc = json.loads((tmp_path / "t.json").read_text())
    assert doc["profile_memory"] is True
    me = one(p, "x").thread
    track = [e for e in doc["traceEvents"] if e.get("ph") == "C"]
    name = f"CPU Mem (thread {me})"
    assert [e["name"] for e in track] == [name, name]
    assert [e["args"][name] for e in track] == list(p.memory_timeline()[me]["bytes"])
    assert [e["name"] for e in doc["traceEvents"] if e.get("ph") == "X"] == ["x"]
    del a
    with P.profile() as q:
        with record_function("x"):
            pass
    q.export_chrome_trace(tmp_path / "u.json")
    assert json.loads((tmp_path / "u.json").read_text())["profile_memory"] is False


def test_event_list_mem_events_in_the_trace(tmp_path):
    raw = [("op", "u", 1000, 5000, 7)]
    mem = [(2000, 0xdead, 4096, True, False, 0, 0, 7),
           (3000, 0xdead, 4096, False),                       # the rest defaulted
           (4000, 0xbeef, 512, True, True, 1, 0, 7)]
    el = P.EventList(raw, base_ns=1000, mem_events=mem)
    assert el.mem_events[1] == (3000, 0xdead, 4096, False, False, 0, 0, 0)
    for name in ("t.json", "t.json.gz"):
        el.export_chrome_trace(tmp_path / name)
        opener = gzip.open if name.endswith(".gz") else open
        with opener(tmp_path / name, "rt") as f:
            evs = json.load(f)["traceEvents"]
        m = [e for e in evs if e.get("name") == "[memory]"]
        assert [(e["ts"], e["args"]["Bytes"], e["args"]["Allocation Type"],
                 e["args"]["Device"], e["tid"]) for e in m] == \
            [(1.0, 4096, "alloc", "cpu", 7), (2.0, 4096, "free", "cpu", 0),
             (3.0, 512, "alloc", "cuda:1", 7)]
        assert all(e["ph"] == "X" and e["cat"] == "user_annotation" for e in m)
        assert evs[-1]["name"] == "Record Window End"
        assert [e["name"] for e in evs if e.get("ph") == "X" and e["name"] != "[memory]"] \
            == ["op"]
    with pytest.raises(ValueError, match="JSON"):
        el.export_chrome_trace(tmp_path / "t.pftrace")
    for bad in ([(1, 2, 3)], [("x", 0, 1, True)], [None]):
        with pytest.raises(ValueError, match="mem_events"):
            P.EventList(mem_events=bad)
