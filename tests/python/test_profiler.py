"""spanscope.profiler: the torch.profiler-style face (issue 4)."""
import gzip
import itertools
import json
import os
import pathlib
import subprocess
import threading
import time
import warnings

import numpy as np
import pytest
from conftest import build_c_lib

import spanscope
from spanscope import ProfileManager, profiler
from spanscope.profiler import ProfilerAction as A
from spanscope.profiler import record_function


# --------------------------------------------------------------------------
# schedule
# --------------------------------------------------------------------------


def torch_profile(*args, **kwargs):
    """profiler.profile with torch's results: ProfilerStep#N spans
    (record_steps=True) and the last window only (acc_events=False) --
    what this module checks; tensorplay's defaults (no step spans, every
    window) are checked by test_tensorplay_side_by_side.py."""
    kwargs.setdefault("record_steps", True)
    kwargs.setdefault("acc_events", False)
    return profiler.profile(*args, **kwargs)

def reference_schedule(step, wait, warmup, active, repeat, skip_first, skip_first_wait):
    """torch/profiler/profiler.py schedule_fn, transcribed from
    reference/tensorplay-profiler-facts.md section 7."""
    if step < skip_first:
        return A.NONE
    step -= skip_first
    if skip_first_wait != 0:
        step += wait
    num_steps = wait + warmup + active
    if repeat > 0 and step / num_steps >= repeat:
        return A.NONE
    mod = step % num_steps
    if mod < wait:
        return A.NONE
    if mod < wait + warmup:
        return A.WARMUP
    return A.RECORD if mod < num_steps - 1 else A.RECORD_AND_SAVE


@pytest.mark.filterwarnings("ignore:profiler schedule has warmup=0")
@pytest.mark.parametrize("wait,warmup,active,repeat,skip_first,skip_first_wait",
                         [p for p in itertools.product((0, 1, 3), (0, 2), (1, 2, 4), (0, 1, 3),
                                                       (0, 5), (0, 1))])
def test_schedule_matches_torch_formula(wait, warmup, active, repeat, skip_first,
                                        skip_first_wait):
    # profiler.schedule is the core's arithmetic (sps_schedule_action)
    fn = profiler.schedule(wait=wait, warmup=warmup, active=active, repeat=repeat,
                           skip_first=skip_first, skip_first_wait=skip_first_wait)
    for step in range(60):
        assert fn(step) == reference_schedule(step, wait, warmup, active, repeat, skip_first,
                                              skip_first_wait), step


def test_schedule_known_sequences():
    fn = profiler.schedule(wait=1, warmup=1, active=2)
    assert [fn(s).value for s in range(5)] == ["none", "warmup", "record", "record_and_save",
                                               "none"]
    # skip_first_wait: the first cycle's wait is skipped, later ones are not
    fn = profiler.schedule(skip_first=2, wait=2, warmup=1, active=1, skip_first_wait=1, repeat=2)
    assert [fn(s) for s in range(10)] == [A.NONE, A.NONE, A.WARMUP, A.RECORD_AND_SAVE,
                                          A.NONE, A.NONE, A.WARMUP, A.RECORD_AND_SAVE,
                                          A.NONE, A.NONE]


@pytest.mark.parametrize("kw,msg", [
    (dict(wait=-1, warmup=1, active=1), "wait=-1"),
    (dict(wait=0, warmup=-2, active=1), "warmup=-2"),
    (dict(wait=0, warmup=1, active=0), "active=0"),
    (dict(wait=0, warmup=1, active=1, repeat=-1), "repeat=-1"),
    (dict(wait=0, warmup=1, active=1, skip_first=-3), "skip_first=-3"),
    (dict(wait=0, warmup=1, active=1, skip_first_wait=2), "skip_first_wait"),
])
def test_schedule_rejects_bad_arguments(kw, msg):
    # torch asserts the values (AssertionError: "Invalid profiler schedule
    # arguments. Got wait=..."); tensorplay asserts skip_first_wait in {0, 1}
    with pytest.raises(AssertionError, match=msg):
        profiler.schedule(**kw)
    with pytest.raises(TypeError, match="wait"):  # the core's arithmetic is integer
        profiler.schedule(wait=1.5, warmup=1, active=1)


def test_enums_are_str_valued():
    assert isinstance(A.RECORD, str) and A.RECORD == "record"
    assert profiler.ProfilerActivity.CPU == "cpu"
    assert profiler.supported_activities() == {profiler.ProfilerActivity.CPU}


# --------------------------------------------------------------------------
# cycles
# --------------------------------------------------------------------------

def names_of(p):
    # trace_name: ProfilerStep#N for a step (its name is torch's ProfilerStep*)
    return [e.trace_name for e in p.events()]


def test_on_trace_ready_once_per_cycle_with_that_cycle_only():
    cycles = []

    def ready(p):
        cycles.append((p.step_num, sorted({n for n in names_of(p)
                                            if n.startswith("work")})))

    sched = profiler.schedule(wait=1, warmup=1, active=2, repeat=2)
    with torch_profile(schedule=sched, on_trace_ready=ready) as p:
        for step in range(12):
            with record_function(f"work{step}"):
                pass
            p.step()
    # cycle 1 records steps 2-3, cycle 2 steps 6-7; ready fires at the step
    # that leaves RECORD_AND_SAVE
    assert cycles == [(4, ["work2", "work3"]), (8, ["work6", "work7"])]


def test_ready_fires_on_exit_from_recording_state_but_not_from_warmup():
    fired = []
    sched = profiler.schedule(wait=0, warmup=1, active=3)
    with torch_profile(schedule=sched, on_trace_ready=lambda p: fired.append(p.step_num)) as p:
        for _ in range(2):  # warmup, record: exit while RECORD
            p.step()
    assert fired == [2]
    fired.clear()
    with torch_profile(schedule=sched, on_trace_ready=lambda p: fired.append(1)) as p:
        pass  # exit from WARMUP: start and stop, no ready
    assert fired == []
    assert len(p.events()) == 0


def test_record_followed_by_none_warns():
    seq = [A.RECORD, A.NONE, A.NONE]
    with pytest.warns(UserWarning, match="RECORD followed by NONE"):
        with torch_profile(schedule=lambda s: seq[min(s, 2)]) as p:
            p.step()


def test_profiler_step_spans_and_current_action():
    with pytest.warns(UserWarning, match="warmup=0"):
        sched = profiler.schedule(wait=1, warmup=0, active=2)
    p = torch_profile(schedule=sched)
    assert p.current_action == A.NONE
    seen = []
    with p:
        for _ in range(3):
            p.step()
            seen.append((p.step_num, p.current_action))
    assert seen == [(1, A.RECORD), (2, A.RECORD_AND_SAVE), (3, A.NONE)]
    assert [n for n in names_of(p) if n.startswith("ProfilerStep")] == ["ProfilerStep#1",
                                                                         "ProfilerStep#2"]


def test_start_stop_without_context_manager():
    p = torch_profile()
    p.start()
    with record_function("a"):
        pass
    p.stop()
    assert names_of(p) == ["a"]
    assert not spanscope.is_active()  # the session the profile started is gone


def test_disabled_profile_records_nothing():
    with torch_profile(enabled=False) as p:
        with record_function("a"):
            pass
    assert len(p.events()) == 0


# --------------------------------------------------------------------------
# record_function
# --------------------------------------------------------------------------

def test_record_function_one_shared_object_per_name():
    """record_function(name) without args hands back one object per name,
    whichever str object spells it (the constant's address finds it in the
    name cache; another str of the same text by the dict), and the spans
    it records are that name's."""
    a = record_function("rf.shared")
    b = record_function("".join(["rf.", "shared"]))  # another str object
    assert a is b and a.name == "rf.shared"
    assert record_function(name="rf.shared") is a
    assert record_function("rf.shared", None) is a
    assert record_function("rf.shared", {"k": 1}) is not a
    names = [f"rf.many{i}" for i in range(600)]  # more names than cache slots
    objs = [record_function(n) for n in names]
    assert [record_function(n) for n in names] == objs
    assert len({id(o) for o in objs}) == 600 and [o.name for o in objs] == names
    with torch_profile() as prof:
        for n in names[:3]:
            with record_function(n):
                pass
    got = [e.key for e in prof.key_averages() if e.key.startswith("rf.many")]
    assert sorted(got) == sorted(names[:3])


def test_record_function_exception_safe():
    with torch_profile() as p:
        with pytest.raises(KeyError):
            with record_function("outer"):
                with record_function("inner"):
                    raise KeyError("x")
        with record_function("after"):
            pass
    ev = {e.name: e for e in p.events()}
    assert ev["inner"].cpu_parent.name == "outer"
    assert ev["after"].cpu_parent is None


def test_record_function_as_decorator():
    @record_function("decorated")
    def f(x):
        return x * 2

    @record_function("with_args", args={"flops": 10})
    def g(x):
        return x + 1

    class C:
        @record_function("method")
        def m(self, x):
            return x - 1

    assert f.__name__ == "f" and f.__wrapped__ is not None
    with torch_profile(with_flops=True) as p:
        assert f(21) == 42
        assert f(1) == 2
        assert g(1) == 2
        assert C().m(5) == 4
        with pytest.raises(TypeError):
            f()  # the call's own error passes through; the span is closed
    assert names_of(p) == ["decorated", "decorated", "with_args", "method", "decorated"]
    assert p.events()[2].flops == 10


def test_record_function_arguments():
    with pytest.raises(TypeError):
        record_function(3)
    with pytest.raises(TypeError):
        record_function()
    with pytest.raises(ValueError):
        record_function("a\0b")
    r = record_function(name="n", args={"k": 1})
    assert r.name == "n" and r.args == {"k": 1}


def test_span_open_across_step():
    sched = profiler.schedule(wait=0, warmup=1, active=3)
    with torch_profile(schedule=sched) as p:
        p.step()  # -> RECORD
        with record_function("across"):
            with record_function("before_step"):
                pass
            p.step()
            with record_function("after_step"):
                pass
        p.step()
    ev = {e.name: e for e in p.events()}
    assert ev["across"].cpu_parent is None
    assert ev["before_step"].cpu_parent.name == "across"
    assert ev["after_step"].cpu_parent.name == "across"
    # the step spans are siblings of it, not its parent, and each is whole
    steps = [e for e in p.events() if e.name == "ProfilerStep*"]
    assert [e.trace_name for e in steps] == ["ProfilerStep#1", "ProfilerStep#2",
                                             "ProfilerStep#3"]


def test_spans_crossing_a_cycle_boundary_are_left_out():
    cycles = []
    sched = profiler.schedule(wait=0, warmup=1, active=1)
    with torch_profile(schedule=sched,
                          on_trace_ready=lambda p: cycles.append(names_of(p))) as p:
        p.step()  # RECORD_AND_SAVE
        with record_function("long"):
            p.step()  # cycle ends while "long" is open
            p.step()
        p.step()
    assert cycles == [["ProfilerStep#1"], ["ProfilerStep#3"]]  # two cycles, "long" in none


# --------------------------------------------------------------------------
# every face, every thread
# --------------------------------------------------------------------------

C_SOURCE = r"""
#include <spanscope.h>
void c_kernel(int n) {
    for (int i = 0; i < n; i++) { SPS_REGION("c.kernel"); volatile int x = i; (void)x; }
}
"""


@pytest.fixture(scope="module")
def c_lib(tmp_path_factory):
    return build_c_lib(tmp_path_factory, C_SOURCE)


def test_every_face_and_thread_is_captured(c_lib):
    region = ProfileManager.region("pm.region")

    @ProfileManager.profile("pm.decorated")
    def decorated():
        c_lib.c_kernel(3)

    done, go = threading.Event(), threading.Event()

    def worker():
        with record_function("worker.span"):
            pass
        done.set()
        go.wait()  # alive at the window's end: the profile reads its Python name

    t = threading.Thread(target=worker, name="worker-1")
    with torch_profile() as p:
        with record_function("rf"):
            with region:
                decorated()
        t.start()
        done.wait()
    go.set()
    t.join()
    ev = p.events()
    by = {}
    for e in ev:
        by.setdefault(e.name, []).append(e)
    assert set(by) == {"rf", "pm.region", "pm.decorated", "c.kernel", "worker.span"}
    assert len(by["c.kernel"]) == 3
    assert all(k.cpu_parent.name == "pm.decorated" for k in by["c.kernel"])
    assert by["pm.region"][0].cpu_parent.name == "rf"
    assert by["worker.span"][0].thread != by["rf"][0].thread
    assert by["worker.span"][0].thread_name == "worker-1"


def test_profile_inside_a_profile_manager_session_keeps_its_file(tmp_path):
    path = tmp_path / "pm.h5"
    ProfileManager.setup(file_path=str(path))
    with ProfileManager.region("before"):
        pass
    with torch_profile() as p:
        with ProfileManager.region("during"):
            pass
    assert names_of(p) == ["during"]
    ProfileManager.finalize(verbose=False)
    res = spanscope.read(path)
    assert res["before"].num_calls == 1 and res["during"].num_calls == 1


def test_profile_refuses_an_aggregate_session():
    ProfileManager.setup(output=None, aggregation_mode=True)
    p = torch_profile()
    with pytest.raises(RuntimeError, match="aggregation_mode"):
        with p:
            pass
    ProfileManager._reset()
    with p:  # the failed start left nothing behind: the same object works
        with record_function("retry"):
            pass
    assert names_of(p) == ["retry"]


def test_one_profile_records_at_a_time():
    with torch_profile(record_shapes=True) as outer:
        with pytest.raises(RuntimeError, match="already recording"):
            with torch_profile():
                pass
        with record_function("a", args={"x": np.zeros(3)}):
            pass
    assert outer.events()[0].input_shapes == [[3]]  # the outer's hook still worked
    with torch_profile() as again:  # and one can start after it
        pass
    assert names_of(again) == []


def test_profile_manager_setup_cannot_end_a_profile_session(tmp_path):
    with torch_profile() as p:
        with record_function("before"):
            pass
        with pytest.raises(RuntimeError, match="before starting it"):
            ProfileManager.setup(file_path=str(tmp_path / "x.h5"))
        with record_function("after"):
            pass
    assert names_of(p) == ["before", "after"]
    assert not spanscope.is_active()


def test_warning_raised_as_error_leaves_nothing_on(tmp_path):
    seq = [A.RECORD, A.NONE]
    ProfileManager.setup(output=None)  # a session that outlives the profile
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        p = torch_profile(schedule=lambda s: seq[min(s, 1)], with_stack=True,
                             record_shapes=True)
        with pytest.raises(UserWarning, match="RECORD followed by NONE"):
            with p:
                p.step()
    with record_function("later", args={"x": np.zeros(2)}):
        pass  # no payload hook, no native stack capture left behind
    with torch_profile() as q:
        with record_function("later2"):
            pass
    assert q.events()[0].stack is None
    assert q.events()[0].args is None


def test_nothing_is_recorded_between_windows():
    sched = profiler.schedule(wait=2, warmup=1, active=1, repeat=1)
    active = []
    with torch_profile(schedule=sched) as p:
        for _ in range(8):
            with record_function("s"):
                pass
            p.step()
            active.append(spanscope.is_active())
    # steps 0-1 wait, 2 warm-up, 3 records; afterwards the schedule is done
    assert active == [False, True, True, False, False, False, False, False]
    assert [n for n in names_of(p) if n == "s"] == ["s"]


def test_option_flags_and_bad_arguments(tmp_path):
    p = torch_profile(with_stack=True, with_flops=True)
    assert p.record_shapes is False  # not implied by the others
    with p:
        with record_function("x"):
            pass
    row = p.key_averages()[0]
    assert row.self_cpu_percent == pytest.approx(100.0)
    p.export_chrome_trace(tmp_path / "t.txt")  # any name: JSON, as torch writes
    assert json.loads((tmp_path / "t.txt").read_text())["traceEvents"]
    with pytest.raises(IsADirectoryError):
        p.export_stacks(tmp_path)
    assert [x.name for x in tmp_path.iterdir()] == ["t.txt"]  # no temporary left behind


def test_a_failing_shape_property_does_not_break_user_code():
    class Odd:
        @property
        def shape(self):
            raise RuntimeError("no shape here")

    with torch_profile(record_shapes=True) as p:
        with record_function("odd", args={"o": Odd()}):
            pass
    assert p.events()[0].input_shapes == [[]]


def test_record_function_args_cycles_are_collected():
    import gc
    import weakref

    class Box:
        pass

    b = Box()
    r = record_function("cyc", args={"box": b})
    r.args["self"] = r
    ref = weakref.ref(b)
    del r, b
    gc.collect()
    assert ref() is None


# --------------------------------------------------------------------------
# self time, key_averages, table
# --------------------------------------------------------------------------

def test_self_time_is_total_minus_direct_children():
    with torch_profile() as p:
        for _ in range(3):
            with record_function("parent"):
                time.sleep(0.002)
                with record_function("child"):
                    time.sleep(0.001)
                    with record_function("grandchild"):
                        time.sleep(0.001)
    ev = p.events()
    for e in ev:
        kids = e.cpu_children
        assert e.self_ns == (e.end_ns - e.start_ns) - sum(k.end_ns - k.start_ns for k in kids)
        for k in kids:
            assert e.start_ns <= k.start_ns and k.end_ns <= e.end_ns
    avg = {r.key: r for r in p.key_averages()}
    assert avg["parent"].count == 3
    assert avg["parent"].self_cpu_time_total >= 3 * 2000  # slept 2 ms in its own body
    assert avg["child"].self_cpu_time_total >= 3 * 1000
    total = sum(e.cpu_time_total for e in ev if e.name == "parent")
    assert avg["parent"].cpu_time_total == pytest.approx(total)
    assert avg["parent"].cpu_time == pytest.approx(total / 3)
    assert avg["parent"].min_cpu_time <= avg["parent"].cpu_time <= avg["parent"].max_cpu_time
    # Self CPU time total = sum of self times = the roots' total
    roots = sum(e.cpu_time_total for e in ev if e.cpu_parent is None)
    assert p.self_cpu_time_total == pytest.approx(roots)


def test_table_layout_and_sort_keys():
    with torch_profile() as p:
        for i in range(4):
            with record_function("many"):
                pass
        with record_function("slow"):
            time.sleep(0.003)
    t = p.key_averages().table(sort_by="self_cpu_time_total", row_limit=10)
    lines = t.splitlines()
    assert lines[1].split() == ["Name", "Self", "CPU", "%", "Self", "CPU", "CPU", "total", "%",
                                "CPU", "total", "CPU", "time", "avg", "#", "of", "Calls"]
    assert lines[0] == lines[2] == lines[-2] and set(lines[0]) == {"-", " "}
    assert lines[3].split()[0] == "slow"
    assert lines[-1].startswith("Self CPU time total: ")
    row = {ln.split()[0]: ln.split() for ln in lines[3:-2]}
    assert row["many"][-1] == "4" and row["slow"][-1] == "1"
    by_calls = p.key_averages().table(sort_by="count").splitlines()
    assert by_calls[3].split()[0] == "many"
    assert p.key_averages().table(sort_by="name").splitlines()[3].split()[0] == "many"
    assert len(p.key_averages().table(row_limit=1).splitlines()) == 6
    for key in ("cpu_time_total", "self_cpu_time", "cpu_time", "calls", "flops",
                "self_cuda_time_total", "device_time_total"):
        p.key_averages().table(sort_by=key)
    with pytest.raises(ValueError, match="sort_by"):
        p.key_averages().table(sort_by="bogus")


# --------------------------------------------------------------------------
# options
# --------------------------------------------------------------------------

class FakeTensor:
    def __init__(self, *shape, dtype="float32"):
        self.shape = shape
        self.dtype = dtype


def test_record_shapes_for_record_function_and_decorated_functions():
    @ProfileManager.profile("dec")
    def dec(a, b, scale=1.0):
        return a

    with torch_profile(record_shapes=True) as p:
        with record_function("rf", args={"x": np.zeros((3, 4)), "n": 2}):
            dec(FakeTensor(2, 5), np.ones(7, dtype=np.int32), scale=2.0)
    ev = {e.name: e for e in p.events()}
    assert ev["rf"].input_shapes == [[3, 4], []]
    assert ev["rf"].dtypes == ["float64", None]
    assert ev["dec"].input_shapes == [[2, 5], [7], []]
    assert ev["dec"].dtypes == ["float32", "int32", None]
    avg = p.key_averages(group_by_input_shape=True)
    assert {(r.key, r.input_shapes) for r in avg} == {("rf", ((3, 4), ())),
                                                     ("dec", ((2, 5), (7,), ()))}
    assert "Input Shapes" in avg.table()


def test_shapes_not_captured_without_the_option():
    with torch_profile() as p:
        with record_function("rf", args={"x": np.zeros(3)}):
            pass
    e = p.events()[0]
    assert e.input_shapes is None and e.args["x"].shape == (3,)


def test_with_flops_sums_declared_flops_in_torchs_column():
    with torch_profile(with_flops=True) as p:
        for _ in range(3):
            with record_function("matmul", args={"flops": 2_000_000}):
                time.sleep(0.001)
        with record_function("no_flops"):
            pass
    avg = {r.key: r for r in p.key_averages()}
    assert avg["matmul"].flops == 6_000_000 and avg["no_flops"].flops == 0
    t = p.key_averages().table(sort_by="flops")
    # torch's column only (Total MFLOPs, the unit of the smallest count): the
    # FLOP/s rate column spanscope had is not torch's table and is gone
    assert "Total MFLOPs" in t and "FLOP/s" not in t
    row = [ln for ln in t.splitlines() if ln.split()[:1] == ["matmul"]][0]
    assert "6.000" in row


def test_with_stack_records_the_python_call_site():
    def site():
        with record_function("here"):
            pass

    with torch_profile(with_stack=True) as p:
        site()
    st = p.events()[0].stack
    assert st[0].startswith(__file__) and st[0].endswith("(site)")
    assert any("test_with_stack_records_the_python_call_site" in s for s in st)
    avg = p.key_averages(group_by_stack_n=2)
    assert "Source Location" in avg.table()


def test_with_modules_records_the_python_module_and_groups_by_it_on_request():
    with torch_profile(with_modules=True) as p:
        with record_function("m"):
            pass
    assert p.events()[0].module == __name__
    # the Module column is spanscope's: torch's key_averages has no module
    # grouping, so it is asked for (group_by_module), not implied
    assert "Module" not in p.key_averages().table()
    t = p.key_averages(group_by_module=True).table()
    assert "Module" in t and __name__ in t


def test_memory_and_samples_are_taken_and_device_requests_warn():
    # tensorplay's page takes them: profile_memory=True records memory per
    # span (tests/python/test_profile_memory.py), with_samples=True samples
    # each thread's CPU time (docs/profiler.md "Stack samples";
    # tests/python/test_samples_python_face.py): neither warns; an empty
    # window has no memory
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        q = torch_profile(profile_memory=True)
        assert torch_profile(with_samples=True).with_samples is True
    with q:
        pass
    assert q.memory_summary() == (0, 0, [])
    with pytest.warns(RuntimeWarning, match="CPU only"):
        p = torch_profile(activities=[profiler.ProfilerActivity.CPU,
                                         profiler.ProfilerActivity.CUDA])
    with p:
        with record_function("cpu"):
            pass
    assert names_of(p) == ["cpu"]
    with pytest.warns(RuntimeWarning):
        torch_profile(gpu_timing=True)
    with pytest.raises(ValueError, match="activity"):
        torch_profile(activities=["tpu"])


# --------------------------------------------------------------------------
# export
# --------------------------------------------------------------------------

def load_trace(path):
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def test_chrome_trace_is_well_formed_nested_and_in_microseconds(tmp_path):
    go = threading.Event()

    def worker():
        go.wait()
        with record_function("w.outer"):
            with record_function("w.inner"):
                pass

    t = threading.Thread(target=worker, name="helper")
    t.start()  # alive at the window's start: the profile reads its Python name
    with torch_profile() as p:
        go.set()
        with record_function("outer"):
            with record_function("inner"):
                time.sleep(0.001)
        t.join()
    path = tmp_path / "t.json"
    p.export_chrome_trace(str(path))
    d = load_trace(path)
    for key in ("traceEvents", "schemaVersion", "displayTimeUnit", "baseTimeNanoseconds",
                "deviceProperties", "record_shapes", "with_stack"):
        assert key in d
    xs = [e for e in d["traceEvents"] if e["ph"] == "X" and e["cat"] == "user_annotation"]
    assert sorted(e["name"] for e in xs) == ["inner", "outer", "w.inner", "w.outer"]
    # kineto's conventions: the OS pid, "ms" as the viewer's unit; each span
    # one slice (issue 36: no cpu_op copy, no "Trace" span by default)
    assert {x["pid"] for x in xs} == {os.getpid()}
    assert d["displayTimeUnit"] == "ms"
    assert not [e for e in d["traceEvents"] if e.get("cat") in ("cpu_op", "Trace")]
    # torch_tb=True: TensorBoard's plugin's layout, a cpu_op copy of each
    # span and the window span (test_tb_hta.py runs the tools on it)
    p.export_chrome_trace(str(tmp_path / "tb.json"), torch_tb=True)
    dt = load_trace(tmp_path / "tb.json")
    ops = [e for e in dt["traceEvents"] if e.get("cat") == "cpu_op"]
    assert sorted(e["name"] for e in ops) == ["inner", "outer", "w.inner", "w.outer"]
    assert all(e["spanscope_view"] == 1 for e in ops)
    assert [e["name"] for e in dt["traceEvents"] if e.get("cat") == "Trace"] == \
        ["PyTorch Profiler (0)"]
    assert [e for e in dt["traceEvents"] if e.get("cat") == "user_annotation"] == xs
    ev = {e.name: e for e in p.events()}
    for x in xs:
        e = ev[x["name"]]
        assert x["ts"] == pytest.approx((e.start_ns - d["baseTimeNanoseconds"]) / 1e3, abs=1e-3)
        assert x["dur"] == pytest.approx((e.end_ns - e.start_ns) / 1e3, abs=1e-3)
        assert x["tid"] == e.thread
    # nested per thread
    by_tid = {}
    for x in xs:
        by_tid.setdefault(x["tid"], []).append(x)
    assert len(by_tid) == 2
    for spans in by_tid.values():
        outer, inner = sorted(spans, key=lambda x: x["ts"])
        assert outer["ts"] <= inner["ts"]
        assert inner["ts"] + inner["dur"] <= outer["ts"] + outer["dur"] + 1e-3
    meta = [e for e in d["traceEvents"] if e["ph"] == "M"]
    assert any(e["name"] == "process_name" for e in meta)
    tnames = {e["args"]["name"] for e in meta if e["name"] == "thread_name"}
    assert "helper" in tnames


def test_trace_args_carry_shapes_and_stack(tmp_path):
    with torch_profile(record_shapes=True, with_stack=True) as p:
        with record_function("a", args={"x": np.zeros((2, 2)), "note": "hi"}):
            pass
    path = tmp_path / "a.json"
    p.export_chrome_trace(path)
    x = [e for e in load_trace(path)["traceEvents"]
         if e["ph"] == "X" and e["cat"] == "user_annotation"][0]
    assert x["args"]["Input Dims"] == [[2, 2], []]
    assert x["args"]["args"]["note"] == "hi"
    assert "shape=[2, 2]" in x["args"]["args"]["x"]
    assert "Call stack" in x["args"]


def test_tensorboard_handler_names_and_gzip(tmp_path):
    sched = profiler.schedule(wait=0, warmup=1, active=1, repeat=2)
    for gz in (False, True):
        d = tmp_path / f"gz{gz}"
        h = profiler.tensorboard_trace_handler(str(d), worker_name="w0", use_gzip=gz)
        with torch_profile(schedule=sched, on_trace_ready=h) as p:
            for i in range(5):
                with record_function("s"):
                    pass
                p.step()
        files = sorted(os.listdir(d))
        assert len(files) == 2
        suffix = ".pt.trace.json.gz" if gz else ".pt.trace.json"
        for f in files:
            assert f.startswith("w0.") and f.endswith(suffix)
            assert f[len("w0."):-len(suffix)].isdigit()
            data = load_trace(d / f)
            assert [e["name"] for e in data["traceEvents"]
                    if e["ph"] == "X" and e["cat"] == "user_annotation"].count("s") == 1
        if gz:
            with open(d / files[0], "rb") as f:
                assert f.read(2) == b"\x1f\x8b"
    h = profiler.tensorboard_trace_handler(str(tmp_path / "default"))
    with torch_profile(on_trace_ready=h):
        pass
    (name,) = os.listdir(tmp_path / "default")
    assert name.startswith(f"{__import__('socket').gethostname()}_{os.getpid()}.")


def test_export_stacks_folds_spans(tmp_path):
    # the spans' nesting: no with_stack needed (tensorplay asserts it)
    with torch_profile() as p:
        with record_function("a"):
            with record_function("b"):
                time.sleep(0.001)
    path = tmp_path / "stacks.txt"
    p.export_stacks(str(path))
    lines = dict(ln.rsplit(" ", 1) for ln in path.read_text().splitlines())
    key = [k for k in lines if k.endswith(";a;b")]
    assert key and int(lines[key[0]]) >= 1000  # µs of self time
    with pytest.raises(ValueError):
        p.export_stacks(str(path), metric="bogus")


def test_export_to_unwritable_path_raises(tmp_path):
    with torch_profile() as p:
        pass
    with pytest.raises(OSError):
        p.export_chrome_trace(str(tmp_path / "missing" / "t.json"))
    with pytest.raises(OSError):  # any suffix is JSON now; a missing folder still fails
        p.export_chrome_trace(str(tmp_path / "missing" / "t.unknown"))
    assert not list(tmp_path.iterdir())  # no temporary left behind


def test_pftrace_export_has_the_spans(tmp_path):
    with torch_profile() as p:
        for _ in range(5):
            with record_function("loop"):
                pass
    path = tmp_path / "t.pftrace"
    p.export_chrome_trace(str(path))
    back = tmp_path / "back.json"
    cli = pathlib.Path(os.environ.get("SPS_BUILD", "build")) / "spanscope"
    if not cli.exists():
        pytest.skip(f"{cli} is missing: build first")
    subprocess.run([str(cli), "convert", str(path), str(back)], check=True)
    names = [e["name"] for e in load_trace(back)["traceEvents"]
             if e["ph"] == "X" and e["cat"] == "user_annotation"]
    assert names.count("loop") == 5


def test_interval_and_function_event_fields():
    with torch_profile() as p:
        with record_function("x"):
            pass
    e = p.events()[0]
    iv = e.time_range
    assert isinstance(iv, profiler.Interval)
    assert iv.elapsed_us() == pytest.approx(e.cpu_time_total)
    assert e.count == 1 and e.device_type == profiler.DeviceType.CPU and e.cpu_children == []
    assert e.id == 0 and e.key == "x"


# --------------------------------------------------------------------------
# merge_distributed_traces
# --------------------------------------------------------------------------

def test_merge_distributed_traces(tmp_path, monkeypatch):
    paths = []
    for rank in (1, 0):  # ranks from distributedInfo, not from list position
        monkeypatch.setenv("RANK", str(rank))
        monkeypatch.setenv("WORLD_SIZE", "2")
        with torch_profile() as p:
            with record_function(f"work.r{rank}"):
                with record_function("inner"):
                    pass
        path = tmp_path / f"r{rank}.pt.trace.json"
        p.export_chrome_trace(path)
        assert load_trace(path)["distributedInfo"]["rank"] == rank
        paths.append(path)
    out = tmp_path / "merged.json"
    profiler.merge_distributed_traces(paths, out)
    d = load_trace(out)
    xs = [e for e in d["traceEvents"] if e["ph"] == "X" and e["cat"] == "user_annotation"]
    assert sorted((e["name"], e["pid"]) for e in xs) == [("inner", 0), ("inner", 1),
                                                         ("work.r0", 0), ("work.r1", 1)]
    labels = {e["pid"]: e["args"]["name"] for e in d["traceEvents"]
              if e["ph"] == "M" and e["name"] == "process_name"}
    assert labels == {0: "rank 0", 1: "rank 1"}
    # Perfetto output from the same inputs
    profiler.merge_distributed_traces(paths, tmp_path / "merged.pftrace")
    assert (tmp_path / "merged.pftrace").stat().st_size > 0


def test_merge_distributed_traces_errors(tmp_path):
    with pytest.raises(ValueError):
        profiler.merge_distributed_traces([], tmp_path / "o.json")
    with pytest.raises(OSError, match="missing.json"):
        profiler.merge_distributed_traces([tmp_path / "missing.json"], tmp_path / "o.json")
    bad = tmp_path / "bad.json"
    bad.write_text('{"traceEvents": [')
    with pytest.raises(ValueError, match="bad.json"):
        profiler.merge_distributed_traces([bad], tmp_path / "o.json")
    assert not (tmp_path / "o.json").exists()


def test_with_stack_gives_c_regions_their_native_stack(c_lib, tmp_path):
    with torch_profile(with_stack=True) as p:
        with record_function("py"):
            c_lib.c_kernel(2)
    kernels = [e for e in p.events() if e.name == "c.kernel"]
    assert len(kernels) == 2
    for k in kernels:
        assert k.stack and k.stack[0].startswith("c_kernel+0x"), k.stack
        assert k.stack[0].endswith("(libk.so)")
    assert kernels[0].stack == kernels[1].stack  # interned once
    avg = {r.key: r for r in p.key_averages(group_by_stack_n=1)}
    assert avg["c.kernel"].stack[0].startswith("c_kernel+0x")
    path = tmp_path / "s.json"
    p.export_chrome_trace(path)
    x = [e for e in load_trace(path)["traceEvents"] if e.get("name") == "c.kernel"][0]
    assert x["args"]["Call site"].startswith("c_kernel+0x")
    # off again once the window ends: no stacks without with_stack
    with torch_profile() as q:
        c_lib.c_kernel(1)
    assert q.events()[0].stack is None


def test_acc_events_keeps_the_native_stacks_of_earlier_cycles(c_lib):
    # each cycle is its own session; the native stacks of the first cycle's
    # spans still resolve after it ended (ids are interned process-wide)
    sched = profiler.schedule(wait=0, warmup=1, active=1, repeat=2)
    with torch_profile(schedule=sched, with_stack=True, acc_events=True) as p:
        for _ in range(4):
            c_lib.c_kernel(1)
            p.step()
    kernels = [e for e in p.events() if e.name == "c.kernel"]
    assert len(kernels) == 2
    for k in kernels:
        assert k.stack and k.stack[0].startswith("c_kernel+0x"), k.stack


def test_traces_carry_a_clock_anchor_for_merges(tmp_path):
    import socket
    with torch_profile() as p:
        with record_function("x"):
            pass
    path = tmp_path / "a.json"
    p.export_chrome_trace(path)
    clock = load_trace(path)["spanscopeClock"]
    assert clock["hostname"] == socket.gethostname()
    # wall - mono is the offset between the clocks, read back to back
    assert abs((clock["wall_anchor_ns"] - clock["mono_anchor_ns"])
               - (time.time_ns() - time.monotonic_ns())) < 50_000_000


# --------------------------------------------------------------------------
# tensorplay's page (issue 39): what runs on every Python (the side-by-side
# module, test_tensorplay_side_by_side.py, needs 3.10 and tensorplay)
# --------------------------------------------------------------------------

def test_page_constructors_from_raw_events():
    raw = [("outer", "u", 1_000, 9_000, 7, None, None, None, -1.0, -1, None, 0, 0),
           ("inner", "u", 2_000, 5_000, 7, [[2, 3]], ["float32"], "f.py:3", -1.0, 64, None, 0, 0),
           ("other", "o", 3_000, 4_000, 8)]
    el = profiler.EventList(raw, base_ns=500)
    assert el.base_ns == 500 and len(el) == 3 and el() == el.function_events == list(el)
    ev = {e.name: e for e in el}
    assert ev["inner"].cpu_parent is ev["outer"] and ev["outer"].cpu_children == [ev["inner"]]
    assert ev["other"].cpu_parent is None  # another tid
    assert ev["outer"].self_ns == 8_000 - 3_000 and ev["inner"].self_ns == 3_000
    assert ev["inner"].shapes == [[2, 3]] and ev["inner"].input_dtypes == ["float32"]
    assert ev["inner"].site == "f.py:3" and ev["inner"].out_bytes == 64
    assert ev["outer"].nested_output_bytes == 64 and ev["outer"].output_bytes == 0
    assert ev["other"].kind == "o" and ev["outer"].cpu_interval == profiler.Interval(1.0, 9.0)
    rows = {r.key: r for r in el.key_averages()}
    assert rows["outer"].total_us == 8.0 and rows["outer"].self_us == 5.0
    assert rows["inner"].output_bytes == 64
    fe = profiler.FunctionEvent(raw[0], self_ns=1234, children=[ev["inner"]], device_us=None)
    assert fe.self_cpu_time_total == 1.234 and fe.cpu_children == [ev["inner"]]
    assert fe.device_us is None and fe.device_time_total == 0.0 and fe.gpu_ms == -1.0
    with pytest.raises(ValueError, match="ends before"):
        profiler.EventList([("x", "u", 10, 5, 1)])
    with pytest.raises(ValueError, match="raw event"):
        profiler.EventList([("x", "u")])


def test_page_function_event_avg():
    a = profiler.FunctionEventAvg("n", "u", 3, 1500, 1000, 2000, None, self_ns=2500,
                                  self_pct=40.0, cuda_us=6.0, kernel_count=2)
    assert (a.name, a.key, a.kind, a.count) == ("n", "n", "u", 3)
    assert (a.avg_us, a.min_us, a.max_us, a.self_us, a.total_us) == (1.5, 1.0, 2.0, 2.5, 4.5)
    assert a.cpu_time_total == 4.5 and a.cpu_time == 1.5 and a.self_cpu_time_total == 2.5
    assert a.min_cpu_time == 1.0 and a.max_cpu_time == 2.0 and a.self_pct == 40.0
    assert a.cuda_time_total == a.device_time_total == 6.0 and a.device_time == 2.0
    exact = profiler.FunctionEventAvg("n", "u", 3, 1500, 1000, 2000, None, total_ns=4501)
    assert exact.total_us == 4.501


def test_page_profile_members():
    with profiler.profile() as p:
        with record_function("a"):
            with record_function("b"):
                pass
    assert p.current_action is None  # no schedule (tensorplay's)
    assert p.memory_summary() == (0, 0, [])
    assert p.kineto_results() == [] and p.device_time_by_span == [0.0, 0.0]
    assert len(p.device_kernels()) == 0 and "Total" in p.device_kernels().table()
    # table(): one row per span; key_averages().table(): one per name
    assert [ln.split()[0] for ln in p.table(sort_by="name").splitlines()[3:5]] == ["a", "b"]
    with pytest.raises(RuntimeError, match="reentrant"):
        with p:
            with p:
                pass


def test_page_memory_timeline(tmp_path):
    with profiler.profile() as p:
        pass
    assert p.export_memory_timeline(tmp_path / "m.csv") == []
    assert (tmp_path / "m.csv").read_text() == "timestamp_ns,device,allocated_bytes\n"


def test_page_emit_contexts_are_not_reentrant():
    """emit_nvtx / emit_itt (what they emit: test_emit_nvtx.py,
    test_emit_itt.py): one object is not re-entrant, enabled=False does
    nothing and warns nothing."""
    from spanscope import _ext
    for cls, name in ((profiler.emit_nvtx, "nvtx"), (profiler.emit_itt, "itt")):
        e = cls(record_shapes=True)
        assert e.enabled and e.record_shapes
        if name not in _ext.emit_available():
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with e:
                with pytest.raises(RuntimeError, match="reentrant"):
                    with e:
                        pass
            with cls(enabled=False):
                pass


def test_page_device_activity():
    NONE = profiler.DeviceActivity.NO_EXTERNAL_ID
    recs = [("cudaLaunchKernel", "r", 100, 120, 0, 0, 5, 3, 11, 0, 0, 0, 0),
            ("_Z6kernelv", "k", 200, 260, 0, 7, 5, NONE, 0, 0, 0, 0, 0),
            ("memcpy", "m", 300, 310, 0, 7, 6, NONE, 0, 0, 4096, 1, 0)]
    launch, kernel, copy = profiler.device_activities(recs)
    assert kernel.op_slot() == 3 and kernel.linked_correlation_id() == 3
    assert copy.op_slot() is None and copy.linked_correlation_id() == 0
    assert [a.activity_type() for a in (launch, kernel, copy)] == \
        ["cuda_runtime", "gpu_kernel", "gpu_memcpy"]
    assert kernel.device_type() == profiler.DeviceType.CUDA
    assert launch.device_type() == profiler.DeviceType.CPU
    assert kernel.duration_us() == 0.06 and kernel.name() == "_Z6kernelv"
    assert profiler.device_activity_ready() is False
    el = profiler.EventList(gpu_activities=recs)
    rows = list(el.device_kernels())
    assert [(r.name, r.kind, r.count, r.total_us) for r in rows] == \
        [("_Z6kernelv", "k", 1, 0.06), ("memcpy", "m", 1, 0.01)]


def test_torch_tb_handler_records_steps_and_writes_copies(tmp_path):
    h = profiler.tensorboard_trace_handler(tmp_path, torch_tb=True)
    with profiler.profile(schedule=profiler.schedule(wait=0, warmup=1, active=2, repeat=1),
                          on_trace_ready=h) as p:
        for _ in range(4):
            with record_function("work"):
                pass
            p.step()
    (f,) = list(tmp_path.iterdir())
    ev = json.loads(f.read_text())["traceEvents"]
    cats = [(e["cat"], e["name"].split("#")[0]) for e in ev if e["ph"] == "X"]
    assert cats.count(("user_annotation", "ProfilerStep")) == 2
    assert cats.count(("user_annotation", "work")) == cats.count(("cpu_op", "work")) == 2
    assert ("Trace", "PyTorch Profiler (0)") in cats
    with pytest.raises(TypeError, match="torch_tb"):
        profiler.tensorboard_trace_handler(tmp_path, torch_tb="yes")
    # without torch_tb: steps are no spans, each span one slice
    with profiler.profile(schedule=profiler.schedule(wait=0, warmup=1, active=2, repeat=1)) as q:
        for _ in range(4):
            with record_function("work"):
                pass
            q.step()
    assert [e.name for e in q.events()] == ["work", "work"]
    q.export_chrome_trace(str(tmp_path / "plain.json"))
    ev = json.loads((tmp_path / "plain.json").read_text())["traceEvents"]
    assert [(e["cat"], e["name"]) for e in ev if e["ph"] == "X"] == \
        [("user_annotation", "work")] * 2
