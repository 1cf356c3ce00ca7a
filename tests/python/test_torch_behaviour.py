"""spanscope.profiler behaves as torch.profiler (and tensorplay.profiler,
where it follows torch): issue 13 part 2.

Each test names the torch (2.15, read from its wheel: torch/profiler/
profiler.py, torch/autograd/profiler_util.py, torch/profiler/itt.py) or
tensorplay (1.1.0, its cp310 wheel: tensorplay/profiler/*.py) source it
compares with."""
import gzip
import pathlib
import json
import re
import sys
import time
import types

import pytest

from spanscope import ProfileManager, profiler
from spanscope.profiler import ProfilerAction as A
from spanscope.profiler import record_function



def torch_profile(*args, **kwargs):
    """profiler.profile with torch's results: ProfilerStep#N spans
    (record_steps=True) and the last window only (acc_events=False) --
    what this module checks; tensorplay's defaults (no step spans, every
    window) are checked by test_tensorplay_side_by_side.py."""
    kwargs.setdefault("record_steps", True)
    kwargs.setdefault("acc_events", False)
    return profiler.profile(*args, **kwargs)

def spin(us):
    t = time.perf_counter_ns() + us * 1000
    while time.perf_counter_ns() < t:
        pass


# --------------------------------------------------------------------------
# argument names, exports
# --------------------------------------------------------------------------

def test_tensorboard_handler_takes_torchs_and_tensorplays_directory_name(tmp_path):
    # torch: tensorboard_trace_handler(dir_name, worker_name=None, use_gzip=False);
    # tensorplay: tensorboard_trace_handler(directory, worker_name=None, use_gzip=False)
    for i, h in enumerate([profiler.tensorboard_trace_handler(tmp_path / "a"),
                           profiler.tensorboard_trace_handler(dir_name=tmp_path / "b"),
                           profiler.tensorboard_trace_handler(directory=tmp_path / "c",
                                                              worker_name="w", use_gzip=True)]):
        with torch_profile(on_trace_ready=h):
            with record_function("x"):
                pass
    (a,), (b,), (c,) = [list((tmp_path / d).iterdir()) for d in "abc"]
    assert a.name.endswith(".pt.trace.json") and b.name.endswith(".pt.trace.json")
    assert c.name.startswith("w.") and c.name.endswith(".pt.trace.json.gz")
    with gzip.open(c, "rt") as f:
        assert any(e.get("name") == "x" for e in json.load(f)["traceEvents"])
    with pytest.raises(TypeError, match="once"):
        profiler.tensorboard_trace_handler(tmp_path, directory=tmp_path)
    with pytest.raises(TypeError, match="once"):
        profiler.tensorboard_trace_handler()


def test_handler_cannot_create_its_directory_raises_torchs_runtime_error(tmp_path):
    # torch: RuntimeError("Can't create directory: " + dir_name)
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(RuntimeError, match="Can't create directory"):
        with torch_profile(on_trace_ready=profiler.tensorboard_trace_handler(
                blocker / "sub")):
            pass


@pytest.mark.parametrize("name,gz", [("t.json", False), ("t.txt", False), ("t.h5", False),
                                     ("noext", False), ("T.JSON", False),
                                     ("t.trace.gz", True),
                                     ("t.json.gz", True)])
def test_export_chrome_trace_writes_json_whatever_the_name(tmp_path, name, gz):
    # torch and tensorplay write JSON whatever the suffix; torch gzips a
    # name ending in .gz; torch_compat is tensorplay's keyword
    with torch_profile() as p:
        with record_function("x"):
            pass
    path = tmp_path / name
    p.export_chrome_trace(path, torch_compat=False)
    opener = gzip.open if gz else open
    with opener(path, "rt") as f:
        trace = json.load(f)
    # the span itself (kineto's user_annotation; its cpu_op copy and the
    # "PyTorch Profiler (0)" window are there for TensorBoard)
    assert [e["name"] for e in trace["traceEvents"]
            if e.get("ph") == "X" and e.get("cat") == "user_annotation"] == ["x"]
    assert sorted(x.name for x in tmp_path.iterdir()) == [name]  # no temporary left
    p.export_chrome_trace(tmp_path / "u.json", torch_compat=True)
    assert json.loads((tmp_path / "u.json").read_text())["traceEvents"]
    with pytest.raises(TypeError, match="torch_compat"):
        p.export_chrome_trace(tmp_path / "v.json", torch_compat="yes")


def test_pftrace_stays_perfetto(tmp_path):
    # .pftrace is spanscope's documented Perfetto extension (docs/profiler.md)
    with torch_profile() as p:
        with record_function("x"):
            pass
    p.export_chrome_trace(tmp_path / "t.pftrace")
    assert not (tmp_path / "t.pftrace").read_bytes().lstrip().startswith(b"{")


def test_export_tensorboard_trace_as_tensorplay_names_it(tmp_path, monkeypatch):
    # tensorplay: export_tensorboard_trace(directory, run_name=None) writes
    # {run_name}[-rank{R}].{host}.{pid}.{ns}.pt.trace.json with torch_compat,
    # and returns the path
    with torch_profile() as p:
        with record_function("x"):
            pass
    path = p.export_tensorboard_trace(tmp_path / "tb", run_name="run")
    name = path.rsplit("/", 1)[-1]
    assert name.startswith("run.") and name.endswith(".pt.trace.json")
    assert json.loads(open(path).read())["traceEvents"]
    monkeypatch.setenv("RANK", "3")
    monkeypatch.setenv("WORLD_SIZE", "4")
    ranked = p.export_tensorboard_trace(tmp_path / "tb")
    assert ranked.rsplit("/", 1)[-1].startswith("spanscope-rank3.")


# --------------------------------------------------------------------------
# key_averages
# --------------------------------------------------------------------------

def test_one_profilerstep_star_group_for_every_step():
    # torch: _rewrite_name(with_wildcard=True) names every ProfilerStep#N
    # "ProfilerStep*" (FunctionEvent.name; trace_name keeps #N), so
    # key_averages has one row for them
    with torch_profile(schedule=profiler.schedule(wait=0, warmup=1, active=4)) as p:
        for _ in range(4):  # step 0 warms up; 1..4 record (4 until the exit)
            with record_function("work"):
                pass
            p.step()
    steps = [e for e in p.events() if e.name == "ProfilerStep*"]
    assert [e.trace_name for e in steps] == [f"ProfilerStep#{i}" for i in range(1, 5)]
    rows = {r.key: r for r in p.key_averages()}
    assert set(rows) == {"ProfilerStep*", "work"}
    assert rows["ProfilerStep*"].count == 4 and rows["work"].count == 3


def test_group_by_input_shape_with_and_without_recorded_shapes():
    class T:
        def __init__(self, *shape):
            self.shape = shape

    with torch_profile(record_shapes=True) as p:
        for shape in [(2, 3), (2, 3), (4,)]:
            with record_function("op", args={"a": T(*shape)}):
                pass
        with record_function("bare"):
            pass
    rows = {(r.key, r.input_shapes): r.count for r in p.key_averages(group_by_input_shape=True)}
    # torch's key: (name, str(input_shapes)); a span without shapes has []
    assert rows == {("op", ((2, 3),)): 2, ("op", ((4,),)): 1, ("bare", ()): 1}
    t = p.key_averages(group_by_input_shape=True).table()
    assert "Input Shapes" in t and "[[2, 3]]" in t and "[[4]]" in t
    # not grouped: torch blanks input_shapes, so no column
    assert "Input Shapes" not in p.key_averages().table()
    # no shapes recorded: a ValueError naming record_shapes (tensorplay's,
    # which the page's profile follows; torch made one group per name)
    with torch_profile() as q:
        for _ in range(2):
            with record_function("op", args={"a": T(1)}):
                pass
    with pytest.raises(ValueError, match="record_shapes"):
        q.key_averages(group_by_input_shape=True)


def test_group_by_stack_n_takes_the_innermost_frames():
    def a():
        with record_function("x"):
            pass

    def b():
        with record_function("x"):
            pass

    with torch_profile(with_stack=True) as p:
        a(), a(), b()
    by0 = p.key_averages()
    assert [(r.key, r.count) for r in by0] == [("x", 3)]
    rows = p.key_averages(group_by_stack_n=1)
    # torch: key += stack[:n], stack innermost first: a's and b's frames differ
    assert sorted(r.count for r in rows) == [1, 2]
    assert all(len(r.stack) == 1 for r in rows)
    assert {r.stack[0].rsplit("(", 1)[1] for r in rows} == {"a)", "b)"}
    # the frames of the callers (same test function) do not split groups further
    assert len(p.key_averages(group_by_stack_n=2)) == 2
    with pytest.raises(ValueError, match="group_by_stack_n"):
        p.key_averages(group_by_stack_n=-1)


def test_group_by_overload_name_changes_nothing_without_overload_names():
    # torch: overload_name is "" unless _ExperimentalConfig(capture_overload_names=True);
    # spanscope records none, so the groups and the table are the same
    with torch_profile() as p:
        for n in ("a", "b", "a"):
            with record_function(n):
                pass
    plain = sorted((r.key, r.count) for r in p.key_averages())
    over = p.key_averages(group_by_overload_name=True)
    assert sorted((r.key, r.count) for r in over) == plain == [("a", 2), ("b", 1)]
    assert all(r.overload_name == "" for r in over)
    assert "Overload Name" not in over.table()


def test_include_python_functions_filters_the_tracers_functions():
    # torch: key_averages leaves out is_python_function events unless
    # include_python_functions=True; spanscope's are the recursive tracer's
    def inner():
        return 1

    @ProfileManager.profile("top", recursive=True)
    def top():
        return inner() + inner()

    with torch_profile() as p:
        with record_function("rf"):
            top()
    events = {e.name: e for e in p.events()}
    inner_name = [n for n in events if n.endswith("inner")][0]
    assert events[inner_name].is_python_function
    assert not events["rf"].is_python_function and not events["top"].is_python_function
    default = {r.key: r.count for r in p.key_averages()}
    assert inner_name not in default and default["rf"] == 1 and default["top"] == 1
    everything = {r.key: r.count for r in p.key_averages(include_python_functions=True)}
    assert everything[inner_name] == 2


def test_key_averages_sort_by():
    # tensorplay's key_averages(sort_by=...): the rows in table()'s order
    with torch_profile() as p:
        for _ in range(3):
            with record_function("many"):
                pass
        with record_function("slow"):
            spin(2000)
    assert [r.key for r in p.key_averages(sort_by="count")] == ["many", "slow"]
    assert [r.key for r in p.key_averages(sort_by="cpu_time_total")] == ["slow", "many"]
    assert [r.key for r in p.key_averages(sort_by="name")] == ["many", "slow"]
    with pytest.raises(ValueError, match="sort_by"):
        p.key_averages(sort_by="bogus")


def test_events_key_averages_takes_torchs_keyword():
    # torch's EventList.key_averages spells it group_by_input_shapes
    with torch_profile(record_shapes=True) as p:
        with record_function("x"):
            pass
    ev = p.events()
    assert [r.input_shapes for r in ev.key_averages(group_by_input_shapes=True)] == [()]
    assert [r.input_shapes for r in ev.key_averages(group_by_input_shape=True)] == [()]


# --------------------------------------------------------------------------
# table
# --------------------------------------------------------------------------

def test_empty_profile_table_is_empty_as_torch_prints():
    # torch's _build_table: `if len(events) == 0: return ""`
    with torch_profile() as p:
        pass
    assert p.key_averages().table() == "" and p.table() == "" and str(p.events()) == ""


def test_table_layout_follows_tensorplays():
    # tensorplay's _build_table (the page's system; torch's columns and
    # order): names left-aligned, a column at least its title + 2 wide
    with torch_profile() as p:
        with record_function("outer"):
            spin(300)
            with record_function("inner"):
                spin(300)
    lines = p.key_averages().table(sort_by="cpu_time_total").splitlines()
    sep = lines[0]
    # name column max(len(key)) + 4, the others 12 or their title + 2
    widths = [len("outer") + 4, 12, 12, 13, 12, 14, 12]
    assert [len(c) for c in sep.split()] == widths
    assert sep == lines[2] == lines[-2]
    assert lines[1] == "".join("{:" + a + str(w) + "}  " for a, w in
                               zip("<>>>>>>", widths)).format(
        "Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg",
        "# of Calls")
    assert lines[3].startswith("outer      ")  # names left-aligned (tensorplay's)
    assert lines[-1].startswith("Self CPU time total: ")
    outer = lines[3].split()
    assert outer[3] == "100.00%" or float(outer[3].rstrip("%")) == pytest.approx(100, abs=0.02)


def test_table_arguments():
    long = "n" * 70
    with torch_profile() as p:
        with record_function(long):
            with record_function("child"):
                pass
        for _ in range(3):
            with record_function("c"):
                pass
    avg = p.key_averages()
    # max_name_column_width: torch cuts a name of >= width - 3 to width - 3 + "..."
    t = avg.table(max_name_column_width=20)
    assert "n" * 17 + "..." in t and long not in t
    assert len(t.splitlines()[0].split()[0]) == 20
    # row_limit: torch stops after that many rows; -1 and None: all
    assert len(avg.table(row_limit=1).splitlines()) == 6
    assert len(avg.table(row_limit=-1).splitlines()) == 5 + 3
    assert len(avg.table(row_limit=None).splitlines()) == 5 + 3
    # header: a line of "=" as wide as the table, then the header
    h = avg.table(header="my run").splitlines()
    assert set(h[0]) == {"="} and len(h[0]) == len(h[2]) and h[1] == "my run"
    # a group's cpu_parent is its first span's parent, one of events()
    child = [r for r in avg if r.key == "child"][0]
    assert child.cpu_parent is p.events()[0]
    # top_level_events_only: rows whose (first) span has no parent
    top = avg.table(top_level_events_only=True)
    assert "Nested spans are omitted; only outermost operations are shown." in top
    assert "child" not in top and long[:10] in top and "c  " in top
    # time_unit: every time in that unit (torch's override_time_unit)
    ms = avg.table(time_unit="ms")
    assert "us " not in ms.split("\n", 3)[3] and "ms" in ms
    with pytest.raises(ValueError, match="time_unit"):
        avg.table(time_unit="ns")


def test_table_shapes_and_source_columns_respect_their_widths():
    class T:
        def __init__(self, *shape):
            self.shape = shape

    with torch_profile(record_shapes=True, with_stack=True) as p:
        with record_function("x", args={"a": T(1000, 2000, 3000), "b": T(4000, 5000)}):
            pass
    avg = p.key_averages(group_by_input_shape=True, group_by_stack_n=3)
    t = avg.table(max_shapes_column_width=10, max_src_column_width=30)
    lines = t.splitlines()
    heads = lines[0].split()
    # Input Shapes is at least its title + 2 wide (tensorplay's rule), then
    # Source Location
    assert len(heads[7]) == 14 and len(heads[8]) == 30
    assert "[[1000, 2" in t and "[[1000, 2000, 3000]" not in t
    # trim_path keeps a location's end behind "..."; the frames after the
    # first on rows of their own, no blank row (tensorplay's)
    src_rows = [ln for ln in lines[3:-2] if "..." in ln]
    assert len(src_rows) == 3
    assert lines[-3].strip() != ""


def test_table_sort_keys_are_torchs_attributes():
    with torch_profile() as p:
        for _ in range(4):
            with record_function("many"):
                pass
        with record_function("slow"):
            spin(50000)  # 50 ms: far above 4 empty calls even if one is preempted on a loaded CI
    avg = p.key_averages()
    first = {k: avg.table(sort_by=k).splitlines()[3].split()[0]
             for k in ("count", "calls", "cpu_time", "cpu_time_total", "self_cpu_time_total",
                       "self_cpu_time", "name")}
    assert first == {"count": "many", "calls": "many", "cpu_time": "slow",
                     "cpu_time_total": "slow", "self_cpu_time_total": "slow",
                     "self_cpu_time": "slow", "name": "many"}
    for k in ("self_cuda_time_total", "cuda_time_total", "self_device_time_total",
              "device_time", "xpu_time_total", "cpu_memory_usage", "self_cpu_memory_usage"):
        avg.table(sort_by=k)  # torch's attributes: 0 here, but valid
    with pytest.raises(ValueError, match="sort_by"):
        avg.table(sort_by="bogus")


# --------------------------------------------------------------------------
# exceptions
# --------------------------------------------------------------------------

def test_schedule_asserts_as_torch():
    with pytest.raises(AssertionError, match="Invalid profiler schedule arguments"):
        profiler.schedule(wait=-1, warmup=0, active=1)
    with pytest.raises(AssertionError, match="active=0"):
        profiler.schedule(wait=0, warmup=1, active=0)
    with pytest.raises(AssertionError, match="Step must be non-negative"):
        profiler.schedule(wait=0, warmup=1, active=1)(-1)


def test_a_schedule_returning_device_stopped_is_refused_as_torch():
    # torch: ValueError("ProfilerAction.DEVICE_STOPPED is set internally ...")
    with pytest.raises(ValueError, match="DEVICE_STOPPED"):
        torch_profile(schedule=lambda s: A.DEVICE_STOPPED)
    with torch_profile(schedule=lambda s: A.RECORD if s < 1 else A.DEVICE_STOPPED) as p:
        with pytest.raises(ValueError, match="DEVICE_STOPPED"):
            p.step()


def test_results_before_any_window_assert_as_torch():
    # torch: "Profiler must be initialized before getting key averages" etc.
    p = torch_profile()
    for call in (p.key_averages, p.events, lambda: p.table(),
                 lambda: p.export_chrome_trace("never.json"),
                 lambda: p.export_stacks("never.txt")):
        with pytest.raises(AssertionError, match="Profiler must be initialized"):
            call()


def test_no_activities_asserts_as_torch():
    with pytest.raises(AssertionError, match="No valid profiler activities"):
        torch_profile(activities=[])


def test_step_outside_the_context_advances_the_counter_and_records_nothing():
    # torch's step() has no guard: it advances step_num and current_action
    sched = profiler.schedule(wait=1, warmup=1, active=1)
    p = torch_profile(schedule=sched)
    p.step()
    assert p.step_num == 1 and p.current_action == A.WARMUP
    with p:
        with record_function("in"):
            pass
        p.step()  # WARMUP -> RECORD_AND_SAVE
        with record_function("rec"):
            pass
    names = [e.name for e in p.events()]
    assert "rec" in names
    p.step()  # after the context: counts, records nothing
    assert p.step_num == 3
    assert [e.name for e in p.events()] == names


# --------------------------------------------------------------------------
# DeviceType, itt
# --------------------------------------------------------------------------

def test_device_type_has_torchs_members_and_values():
    # torch/csrc/autograd/init.cpp registers the members (py::enum_<c10::DeviceType>),
    # c10/core/DeviceType.h gives the values
    members = ["CPU", "CUDA", "MKLDNN", "OPENGL", "OPENCL", "IDEEP", "HIP", "FPGA", "MAIA",
               "XLA", "Vulkan", "Metal", "XPU", "MPS", "MTIA", "Meta", "HPU", "VE", "Lazy",
               "IPU", "PrivateUse1"]
    assert sorted(m.name for m in profiler.DeviceType) == sorted(members)
    D = profiler.DeviceType
    assert (D.CPU, D.CUDA, D.XPU, D.MPS, D.VE, D.IPU, D.MTIA, D.PrivateUse1) == \
        (0, 1, 12, 13, 16, 18, 19, 20)
    with torch_profile() as p:
        with record_function("x"):
            pass
    assert p.events()[0].device_type is D.CPU
    assert p.key_averages()[0].device_type is D.CPU


def test_itt_helpers_are_torchs():
    """torch.profiler.itt's helpers, emitting ITT tasks and markers (VTune
    sees them; tests/python/test_emit_itt.py checks what a collector
    receives): range_push returns the depth it started, range_pop the depth
    it ended or -1 with nothing open, range() closes on errors."""
    from spanscope.profiler import itt
    assert itt.is_available() is True  # built with ITT (CMake SPS_ITT, default ON)
    assert itt.range_push("r") == 0 and itt.range_pop() == 0 and itt.range_pop() == -1
    assert itt.mark("m") is None
    with pytest.raises(ValueError):
        with itt.range("step {}", 1):
            raise ValueError("closes anyway")
    assert itt.range_pop() == -1


# --------------------------------------------------------------------------
# with_modules
# --------------------------------------------------------------------------

@pytest.fixture
def fake_torch(monkeypatch):
    """A minimal torch.nn.Module (torch is not installed in the test
    environment; a real one imported is hidden meanwhile): __call__ runs
    forward, as torch's does."""

    class Module:
        def __call__(self, *args, **kwargs):
            return self.forward(*args, **kwargs)

    mods = {}
    for name in ("torch", "torch.nn", "torch.nn.modules", "torch.nn.modules.module"):
        mods[name] = types.ModuleType(name)
        monkeypatch.setitem(sys.modules, name, mods[name])
    mods["torch.nn.modules.module"].Module = Module
    mods["torch.nn"].Module = Module
    return Module


def test_with_modules_records_module_calls_and_restores_call(fake_torch):
    Module = fake_torch
    original = Module.__dict__["__call__"]

    class Linear(Module):
        def forward(self, x):
            return x + 1

    class Net(Module):
        def __init__(self):
            self.a, self.b = Linear(), Linear()

        def forward(self, x):
            return self.b(self.a(x))

    net = Net()
    with torch_profile(with_modules=True) as p:
        assert Module.__dict__["__call__"] is not original  # patched while recording
        assert net(1) == 3
    # tensorplay's span names: "nn.Module: <class name>", nested as called
    ev = p.events()
    assert [e.name for e in ev] == ["nn.Module: Net", "nn.Module: Linear", "nn.Module: Linear"]
    assert ev[1].cpu_parent is ev[0] and ev[2].cpu_parent is ev[0]
    assert Module.__dict__["__call__"] is original  # restored at the end
    # without with_modules nothing is patched, nothing recorded
    with torch_profile() as q:
        assert Module.__dict__["__call__"] is original
        net(1)
    assert list(q.events()) == []


def test_with_modules_patch_is_reference_counted(fake_torch):
    # tensorplay: only the outermost session installs, the last restores
    Module = fake_torch
    original = Module.__dict__["__call__"]
    profiler._patch_modules()
    try:
        with torch_profile(with_modules=True):
            pass
        assert Module.__dict__["__call__"] is not original  # the other holder remains
    finally:
        profiler._unpatch_modules()
    assert Module.__dict__["__call__"] is original


def test_with_modules_restores_call_when_a_step_fails(fake_torch):
    Module = fake_torch
    original = Module.__dict__["__call__"]

    def bad_schedule(step):
        if step == 0:
            return A.RECORD
        raise RuntimeError("boom")

    p = torch_profile(with_modules=True, schedule=bad_schedule)
    with pytest.raises(RuntimeError, match="boom"):
        with p:
            p.step()
    assert Module.__dict__["__call__"] is original


def test_with_modules_on_a_real_torch_module():
    """Where a torch imports (checked with Debian's torch 1.13.1), its
    nn.Module calls become spans nested as called, and __call__ is restored."""
    torch = pytest.importorskip("torch")
    net = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU())
    original = torch.nn.Module.__call__
    with torch_profile(with_modules=True) as p:
        net(torch.ones(1, 4))
    assert [(e.name, e.cpu_parent.name if e.cpu_parent else None) for e in p.events()] == [
        ("nn.Module: Sequential", None), ("nn.Module: Linear", "nn.Module: Sequential"),
        ("nn.Module: ReLU", "nn.Module: Sequential")]
    assert torch.nn.Module.__call__ is original


def _outcome(fn):
    """What fn() gives: ("ok", value) or ("raises", exception type)."""
    try:
        return "ok", fn()
    except Exception as e:  # noqa: BLE001 -- the type is what is compared
        return "raises", type(e)


def test_same_outcomes_as_a_real_torch_where_one_imports(tmp_path):
    """The behaviours above, side by side with torch.profiler itself
    (skipped without torch; run with Debian's torch 1.13.1)."""
    torch = pytest.importorskip("torch")
    tp = torch.profiler

    def cases(mod):
        def empty_table():
            with mod.profile() as p:
                pass
            return p.key_averages().table()

        def step_outside():
            p = mod.profile(schedule=mod.schedule(wait=1, warmup=1, active=1))
            p.step()
            return p.step_num, p.current_action.name

        def any_suffix():
            with mod.profile() as p:
                with mod.record_function("x"):
                    pass
            path = tmp_path / f"{mod.__name__}.txt"
            p.export_chrome_trace(str(path))
            trace = json.loads(path.read_text())
            # a torch without kineto (Debian's) writes the legacy bare list
            events = trace if isinstance(trace, list) else trace["traceEvents"]
            return "x" in {e.get("name") for e in events}

        def steps_grouped():
            with mod.profile(schedule=mod.schedule(wait=0, warmup=1, active=3)) as p:
                for _ in range(3):
                    with mod.record_function("work"):
                        pass
                    p.step()
            return sorted({e.name for e in p.events() if "Step" in e.name})

        return [
            lambda: mod.schedule(wait=-1, warmup=1, active=1),
            lambda: mod.schedule(wait=0, warmup=1, active=0),
            lambda: mod.schedule(wait=0, warmup=1, active=1)(-1),
            lambda: mod.profile().key_averages(),
            lambda: mod.profile().events(),
            empty_table, step_outside, any_suffix, steps_grouped,
            # not mod.itt: tensorplay's is torch's stub (unavailable, raises);
            # ours emits ITT for real (issue 38)
        ]

    ours = [_outcome(c) for c in cases(profiler)]
    theirs = [_outcome(c) for c in cases(tp)]
    for i, (o, t) in enumerate(zip(ours, theirs)):
        assert o[0] == t[0], (i, o, t)
        if o[0] == "raises":
            assert issubclass(o[1], t[1]), (i, o, t)  # ours may be more specific
        elif not callable(o[1]):
            assert o[1] == t[1], (i, o, t)


# --------------------------------------------------------------------------
# the table against one torch printed
# --------------------------------------------------------------------------

TORCH_TABLES = pathlib.Path(__file__).resolve().parents[1] / "data" / \
    "torch-key_averages-table.txt"


def torch_tables():
    """The two tables torch 1.13.1 printed (tests/data), as lists of lines."""
    tables, cur = [], None
    for line in TORCH_TABLES.read_text().splitlines():
        if line.startswith("#") or not line.strip():
            if cur:
                tables.append(cur)
            cur = None
            continue
        cur = (cur or []) + [line]
    if cur:
        tables.append(cur)
    return tables


def test_table_columns_are_the_ones_torch_printed():
    """The same names (and, grouped, the same shapes) as torch's run give
    the same columns in the same order and the same cells (names, calls,
    shapes); the widths are tensorplay's (a column at least its title + 2
    wide, names left-aligned), which test_tensorplay_side_by_side.py checks
    against tensorplay itself."""
    flat, grouped = torch_tables()
    rows = [ln for ln in flat[3:-2]]
    names = [ln.split()[0] for ln in rows]
    calls = {ln.split()[0]: int(ln.split()[-1]) for ln in rows}
    shapes = {}
    for ln in grouped[3:-2]:
        cells = ln.split(None, 7)
        shapes[cells[0]] = json.loads(cells[7].strip())

    class T:
        def __init__(self, shape):
            self.shape = tuple(shape)

    with torch_profile(record_shapes=True) as p:
        for name in names:
            for _ in range(calls[name]):
                args = {f"a{i}": T(s) if s else 0 for i, s in enumerate(shapes[name])}
                with record_function(name, args=args):
                    pass
    ours = p.key_averages().table(sort_by="self_cpu_time_total", row_limit=12).splitlines()
    titles = lambda line: [c for c in re.split(r"\s{2,}", line.strip())]  # noqa: E731
    assert titles(ours[1]) == titles(flat[1])
    assert len(ours) == len(flat) and ours[-1].startswith("Self CPU time total: ")
    for ln in ours[3:-2]:
        assert ln.split()[0] in calls and int(ln.split()[-1]) == calls[ln.split()[0]]
    ours = p.key_averages(group_by_input_shape=True).table(sort_by="cpu_time_total",
                                                         row_limit=12).splitlines()
    assert titles(ours[1]) == titles(grouped[1])
    for ln in ours[3:-2]:
        cells = ln.split(None, 7)
        # no shapes: torch prints "[]", tensorplay (and spanscope) a blank cell
        assert (json.loads(cells[7].strip()) if len(cells) > 7 else []) == shapes[cells[0]]


# --------------------------------------------------------------------------
# acc_events
# --------------------------------------------------------------------------

def test_acc_events_keeps_every_cycle(tmp_path):
    # torch: profile(acc_events=True) keeps the events of all cycles (without
    # it each cycle's result holds that cycle only); tensorplay always keeps them
    seen = []
    sched = profiler.schedule(wait=1, warmup=1, active=2, repeat=2)
    with torch_profile(schedule=sched, acc_events=True,
                          on_trace_ready=lambda q: seen.append(len(q.events()))) as p:
        for i in range(8):
            with record_function(f"cycle{i // 4}"):
                pass
            p.step()
    names = [e.trace_name for e in p.events()]
    assert names.count("cycle0") == 2 and names.count("cycle1") == 2
    assert [n for n in names if n.startswith("ProfilerStep#")] == [
        "ProfilerStep#2", "ProfilerStep#3", "ProfilerStep#6", "ProfilerStep#7"]
    assert seen[1] == 2 * seen[0]  # the second handler call sees both cycles
    rows = {r.key: r.count for r in p.key_averages()}
    assert rows == {"ProfilerStep*": 4, "cycle0": 2, "cycle1": 2}
    # the nesting of each cycle is kept: every record_function under its step
    for e in p.events():
        if e.name.startswith("cycle"):
            assert e.cpu_parent is not None and e.cpu_parent.name == "ProfilerStep*"
            assert e in e.cpu_parent.cpu_children
    p.export_chrome_trace(tmp_path / "acc.json")
    xs = [e for e in json.loads((tmp_path / "acc.json").read_text())["traceEvents"]
          if e.get("ph") == "X" and e.get("cat") == "user_annotation"]
    assert sorted(e["name"] for e in xs if e["name"].startswith("cycle")) == \
        ["cycle0", "cycle0", "cycle1", "cycle1"]
    # without acc_events: the last cycle only
    with torch_profile(schedule=profiler.schedule(wait=1, warmup=1, active=2, repeat=2)) as q:
        for i in range(8):
            with record_function(f"cycle{i // 4}"):
                pass
            q.step()
    assert {e.name for e in q.events()} == {"ProfilerStep*", "cycle1"}
