"""spanscope.profiler reads the core's one event model: payloads joined to
spans by the begin record's exact key, the session's clock anchor, the step
schedule and the ProfilerStep#N spans (with their nesting) from the core."""
import json
import threading
import time

import h5py
import numpy as np
import pytest

from spanscope import ProfileManager, _ext, profiler
from spanscope.profiler import ProfilerAction as A
from spanscope.profiler import record_function

SEQ_NONE = 2**64 - 1



def torch_profile(*args, **kwargs):
    """profiler.profile with torch's results: ProfilerStep#N spans
    (record_steps=True) and the last window only (acc_events=False) --
    what this module checks; tensorplay's defaults (no step spans, every
    window) are checked by test_tensorplay_side_by_side.py."""
    kwargs.setdefault("record_steps", True)
    kwargs.setdefault("acc_events", False)
    return profiler.profile(*args, **kwargs)

def by_name(p):
    # trace_name: a step's own name, ProfilerStep#N (its name is torch's
    # "ProfilerStep*")
    out = {}
    for e in p.events():
        out.setdefault(e.trace_name, []).append(e)
    return out


# --------------------------------------------------------------------------
# payloads: joined on (thread, seq)
# --------------------------------------------------------------------------

def test_join_tells_apart_spans_that_start_in_the_same_ns():
    """Two spans of one region on one thread beginning in the same ns (a
    recursion the clock cannot resolve), and one on another thread at that
    ns too: the begin record's number tells them apart, a time cannot."""
    spans = np.zeros(3, dtype=profiler._SPAN_DTYPE)
    spans["start"] = 1000
    spans["end"] = [2000, 1500, 1800]
    spans["region"] = 7
    spans["thread"] = [0, 0, 1]
    spans["parent"] = [-1, 0, -1]
    spans["seq"] = [11, 12, 11]
    c = profiler._Collector(False, False, False, False)
    c(0, 12, "r", {"who": "inner"})
    c(1, 11, "r", {"who": "other thread"})
    c(0, 11, "r", {"who": "outer"})
    c(0, 99, "r", {"who": "a span after the window"})
    c(0, 5, "r", {"who": "a span before the window"})
    got = {i: p["args"]["who"] for i, p in c.join(spans).items()}
    assert got == {0: "outer", 1: "inner", 2: "other thread"}


def test_the_hook_gets_the_begin_records_key(monkeypatch):
    keys = []
    call = profiler._Collector.__call__

    def probe(self, thread, seq, name, args):
        keys.append((name, thread, seq))
        return call(self, thread, seq, name, args)

    monkeypatch.setattr(profiler._Collector, "__call__", probe)
    with torch_profile(record_shapes=True) as p:
        with record_function("a", args={"x": np.zeros(2)}):
            with record_function("b", args={"x": np.zeros(3)}):
                pass
    ev = {e.name: e for e in p.events()}
    assert sorted(k[0] for k in keys) == ["a", "b"]
    for name, thread, seq in keys:
        assert int(p._result.spans["seq"][ev[name].id]) == seq
        assert ev[name].thread_index == thread
    assert ev["a"].input_shapes == [[2]] and ev["b"].input_shapes == [[3]]


def test_thread_seq_is_the_spans_seq():
    with torch_profile() as p:
        r = record_function("k")
        r.__enter__()
        thread, seq = _ext.thread_seq()
        r.__exit__(None, None, None)
    (e,) = p.events()
    assert (e.thread_index, int(p._result.spans["seq"][0])) == (thread, seq)


def test_nested_record_functions_of_one_name_keep_their_shapes():
    def rec(depth):
        with record_function("rec", args={"x": np.zeros((depth + 1, 2))}):
            if depth < 6:
                rec(depth + 1)

    with torch_profile(record_shapes=True) as p:
        for _ in range(3):
            rec(0)
    ev = p.events()
    assert len(ev) == 21
    for e in ev:
        depth = 0
        q = e.cpu_parent
        while q is not None:
            depth += 1
            q = q.cpu_parent
        assert e.input_shapes == [[depth + 1, 2]], (e.id, depth)


def test_payloads_of_many_threads_land_on_their_own_spans():
    nthreads, nspans = 8, 300
    barrier = threading.Barrier(nthreads)

    def work(k):
        barrier.wait()  # all at once: interleaved, often in the same µs
        for i in range(nspans):
            with record_function("w", args={"k": k, "i": i, "x": np.zeros(k + 1)}):
                with record_function("inner", args={"k": k, "i": -i}):
                    pass

    ts = [threading.Thread(target=work, args=(k,)) for k in range(nthreads)]
    with torch_profile(record_shapes=True) as p:
        for t in ts:
            t.start()
        for t in ts:
            t.join()
    seen = {}
    for e in p.events():
        a = e.args
        assert a is not None, e
        if e.name == "w":
            assert e.input_shapes == [[], [], [a["k"] + 1]]
            seen.setdefault(e.thread, []).append(a["i"])
        else:
            par = e.cpu_parent
            assert par.name == "w" and par.args["k"] == a["k"] and par.args["i"] == -a["i"]
    assert sorted(len(v) for v in seen.values()) == [nspans] * nthreads
    for v in seen.values():
        assert v == list(range(nspans))  # start order, each its own payload
    assert len({(e.args["k"], e.args["i"]) for e in p.events() if e.name == "w"}) == \
        nthreads * nspans


# --------------------------------------------------------------------------
# the clock anchor: the session's
# --------------------------------------------------------------------------

def test_trace_anchor_is_the_sessions_anchor(tmp_path):
    h5 = tmp_path / "s.h5"
    ProfileManager.setup(file_path=str(h5))
    anchor = _ext.clock_anchor()
    assert anchor[0] > 0 and anchor[1] > 0
    time.sleep(0.01)  # a second reading would differ from the session's
    with torch_profile() as p:
        with record_function("x"):
            pass
    trace = tmp_path / "t.json"
    p.export_chrome_trace(trace)
    clock = json.loads(trace.read_text())["spanscopeClock"]
    assert (clock["wall_anchor_ns"], clock["mono_anchor_ns"]) == anchor
    ProfileManager.finalize(verbose=False)
    with h5py.File(h5) as f:
        md = f["metadata"].attrs
        assert (int(md["wall_anchor_ns"]), int(md["mono_anchor_ns"])) == anchor
    assert not hasattr(profiler, "_clock_anchor")


def test_no_session_no_anchor():
    assert _ext.clock_anchor() == (0, 0)


# --------------------------------------------------------------------------
# the schedule: the core's arithmetic
# --------------------------------------------------------------------------

def test_schedule_is_the_cores():
    s = profiler.schedule(wait=1, warmup=1, active=2, repeat=1, skip_first=3)
    assert isinstance(s, _ext.Schedule)
    assert repr(s) == ("schedule(wait=1, warmup=1, active=2, repeat=1, skip_first=3, "
                       "skip_first_wait=0)")
    assert (s.wait, s.warmup, s.active, s.repeat, s.skip_first) == (1, 1, 2, 1, 3)
    assert [s(i) for i in range(9)] == [A.NONE] * 4 + [A.WARMUP, A.RECORD,
                                                       A.RECORD_AND_SAVE, A.NONE, A.NONE]
    assert all(type(s(i)) is A for i in range(9))
    with pytest.raises(AssertionError, match="Step must be non-negative"):  # torch asserts
        s(-1)
    with pytest.raises(TypeError):
        s()
    # steps far beyond any loop, no overflow
    assert s(2**63 - 1) == A.NONE
    assert profiler.schedule(wait=0, warmup=1, active=1)(2**63 - 1) == A.RECORD_AND_SAVE
    assert profiler.schedule(wait=0, warmup=1, active=1)(2**63 - 2) == A.WARMUP
    with pytest.raises(ValueError, match="2\\*\\*63"):
        profiler.schedule(wait=2**62, warmup=2**62, active=2**62)
    with pytest.raises(ValueError, match="wait"):
        profiler.schedule(wait=2**63, warmup=1, active=1)


# --------------------------------------------------------------------------
# steps: sps_step, and ProfilerStep#N spans nested by the core
# --------------------------------------------------------------------------

def test_steps_are_one_instant_apart_and_have_no_record():
    sched = profiler.schedule(wait=0, warmup=1, active=4)
    with torch_profile(schedule=sched) as p:
        p.step()
        for _ in range(3):
            with record_function("work"):
                pass
            p.step()
    steps = [e for e in p.events() if e.trace_name.startswith("ProfilerStep#")]
    assert {e.name for e in steps} == {"ProfilerStep*"}  # torch's _rewrite_name
    assert [e.trace_name for e in steps] == ["ProfilerStep#1", "ProfilerStep#2", "ProfilerStep#3",
                                       "ProfilerStep#4"]
    for a, b in zip(steps, steps[1:]):
        assert a.end_ns == b.start_ns  # one sps_step mark ends one and begins the next
    spans = p._result.spans
    for e in steps:
        assert int(spans["seq"][e.id]) == SEQ_NONE
    for e in p.events():
        if e.name == "work":
            assert e.cpu_parent.trace_name.startswith("ProfilerStep#")
            assert e.cpu_parent.self_ns == (e.cpu_parent.end_ns - e.cpu_parent.start_ns
                                            - (e.end_ns - e.start_ns))


def test_a_span_around_the_steps_is_their_parent():
    sched = profiler.schedule(wait=0, warmup=1, active=4)
    with torch_profile(schedule=sched) as p:
        p.step()  # -> RECORD, step 1 begins
        with record_function("epoch"):
            for _ in range(2):
                p.step()  # steps 2 and 3 lie inside epoch
                with record_function("batch"):
                    time.sleep(0.001)
            p.step()  # ends step 3 (still inside epoch), begins step 4
    ev = by_name(p)
    epoch = ev["epoch"][0]
    for name in ("ProfilerStep#2", "ProfilerStep#3"):
        assert ev[name][0].cpu_parent is epoch
    for b in ev["batch"]:
        assert b.cpu_parent.trace_name in ("ProfilerStep#2", "ProfilerStep#3")
        assert b.depth == 2
    # epoch crosses step 1's end and step 4's start: it is neither's child
    assert epoch.cpu_parent is None
    assert ev["ProfilerStep#1"][0].cpu_parent is None
    assert ev["ProfilerStep#4"][0].cpu_parent is None
    kids = epoch.cpu_children
    assert sorted(k.trace_name for k in kids) == ["ProfilerStep#2", "ProfilerStep#3"]
    assert epoch.self_ns == (epoch.end_ns - epoch.start_ns) - sum(
        k.end_ns - k.start_ns for k in kids)
    avg = {r.key: r for r in p.key_averages()}
    # one ProfilerStep* group for the four steps, as torch groups them
    assert avg["ProfilerStep*"].count == 4 and not any("#" in k for k in avg)
    assert avg["ProfilerStep*"].self_cpu_time_total < avg["ProfilerStep*"].cpu_time_total


def test_steps_of_a_profile_inside_a_profile_manager_session(tmp_path):
    """The profile shares the session: its steps are marks in it, its file
    is untouched by them, and each window names its steps with the
    profile's step numbers."""
    path = tmp_path / "pm.h5"
    ProfileManager.setup(file_path=str(path))
    cycles = []
    sched = profiler.schedule(wait=1, warmup=1, active=1, repeat=2)
    with torch_profile(schedule=sched, on_trace_ready=lambda q: cycles.append(
            sorted(e.trace_name for e in q.events()))) as p:
        for _ in range(7):
            with ProfileManager.region("pm.work"):
                pass
            p.step()
    assert cycles == [["ProfilerStep#2", "pm.work"], ["ProfilerStep#5", "pm.work"]]
    ProfileManager.finalize(verbose=False)
    with h5py.File(path) as f:
        names = [n.decode() if isinstance(n, bytes) else n for n in f["region_table/names"][()]]
    assert names == ["pm.work"]
