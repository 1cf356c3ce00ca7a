"""spanscope.profiler side by side with tensorplay.profiler 1.1.0 (issue 39).

The page (/work/shared/seeds/tensorplay-profiler-api.txt, a copy in
tests/python/data/tensorplay-profiler-api.txt is not needed: the page's
signatures are tensorplay 1.1.0's, which this module reads from the real
package) is the specification and tensorplay 1.1.0 the system it
describes.  Every script below runs once through ``tensorplay.profiler`` and
once through ``spanscope.profiler`` -- the same function, given the module
-- and what each observes is compared item by item:

* the API surface: every public name of tensorplay.profiler, the
  signature of each function, class and method, and every public member of
  each class and of the objects a recording hands out (events, averages);
* the results: what events() holds, the averages, the tables (layout, not
  timings), the trace files (names, keys, slices), on_trace_ready's calls,
  current_action, and the errors for bad arguments.

An item that differs must be listed, with its reason, in
tests/python/data/tensorplay_intended_differences.txt; a listed item that
no longer differs fails too, so the list stays true.  Timings differ from
run to run and are never compared as values: a time is compared by its
type and sign.

tensorplay ships cp310 wheels only: the module runs on CPython 3.10 with
tensorplay==1.1.0 installed (scripts/check-pythons.sh installs it into
.venv-3.10; ``make check-tensorplay`` runs only this module there) and
skips elsewhere, saying why.  The counts (compared / equal / intended
differences) are printed by the last test (pytest -s shows them) and
written to build/tensorplay-side-by-side.txt when SPS_BUILD is set.
"""
from __future__ import annotations

import inspect
import json
import os
import pathlib
import re
import sys
import tempfile
import warnings

import pytest

if sys.version_info[:2] != (3, 10):
    pytest.skip("tensorplay 1.1.0 ships CPython 3.10 wheels only (cp310): the side-by-side "
                "module runs on 3.10 (make check-tensorplay)", allow_module_level=True)
tp = pytest.importorskip("tensorplay.profiler", reason="tensorplay==1.1.0 is not installed "
                         "(scripts/check-pythons.sh installs it into .venv-3.10)")
import tensorplay  # noqa: E402

if tensorplay.__version__ != "1.1.0":
    pytest.skip(f"tensorplay {tensorplay.__version__} installed; the comparison is with 1.1.0",
                allow_module_level=True)

from spanscope import profiler as sp  # noqa: E402

DIFFS_FILE = pathlib.Path(__file__).parent / "data" / "tensorplay_intended_differences.txt"


def _load_intended() -> dict:
    """key -> reason, from the committed list (``key<TAB>reason`` lines)."""
    out = {}
    for n, line in enumerate(DIFFS_FILE.read_text().splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        key, sep, reason = line.partition("\t")
        assert sep and reason.strip(), f"{DIFFS_FILE.name}:{n}: 'key<TAB>reason' needed"
        assert key not in out, f"{DIFFS_FILE.name}:{n}: {key} listed twice"
        out[key] = reason.strip()
    return out


INTENDED = _load_intended()


class Ledger:
    """Every compared item: key -> (tensorplay's, spanscope's)."""

    def __init__(self):
        self.items: dict = {}

    def compare(self, key: str, want, got) -> None:
        assert key not in self.items, f"item {key} compared twice"
        self.items[key] = (want, got)

    def unexpected(self) -> list:
        return [f"{k}: tensorplay {w!r} / spanscope {g!r}" for k, (w, g) in self.items.items()
                if w != g and k not in INTENDED]

    def stale(self) -> list:
        return [k for k, (w, g) in self.items.items() if w == g and k in INTENDED]


LEDGER = Ledger()


def _check(prefix: str) -> None:
    """Fails on the items under prefix that differ without being listed,
    or are listed and no longer differ."""
    bad = [u for u in LEDGER.unexpected() if u.startswith(prefix)]
    stale = [k for k in LEDGER.stale() if k.startswith(prefix)]
    assert not bad and not stale, (
        "differences not in tensorplay_intended_differences.txt:\n  " + "\n  ".join(bad) +
        "\nlisted but now equal (remove them):\n  " + "\n  ".join(stale))


# --------------------------------------------------------------------------
# The API surface
# --------------------------------------------------------------------------

def _params(obj):
    """A callable's parameters as (name, kind, default) -- annotations and
    the return annotation left out -- or "<none>" without a signature."""
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return "<no signature>"
    return tuple((p.name, p.kind.name,
                  "<required>" if p.default is p.empty else repr(p.default))
                 for p in sig.parameters.values())


def _members(cls) -> dict:
    """Public members of a class: name -> "method" / "property" / "attribute"."""
    out = {}
    for name in dir(cls):
        if name.startswith("_"):
            continue
        v = inspect.getattr_static(cls, name)
        out[name] = ("property" if isinstance(v, property) else
                     "method" if callable(v) or isinstance(v, (staticmethod, classmethod))
                     else "attribute")
    return out


#: Names tensorplay.profiler has and the page's sections name (module-level
#: DeviceActivity, device_activities, device_activity_ready are tensorplay's,
#: not in its __all__).
TP_NAMES = sorted(set(tp.__all__) | {"DeviceActivity", "device_activities",
                                     "device_activity_ready"})

#: Classes whose members and methods are compared one by one.
TP_CLASSES = ("EventList", "FunctionEvent", "FunctionEventAvg", "Interval", "profile",
              "record_function", "emit_nvtx", "emit_itt", "ProfilerAction",
              "ProfilerActivity", "DeviceActivity")

#: str's own methods, which the two str enums share and the page leaves out.
_STR_METHODS = set(dir(str))


def test_api_surface():
    for name in TP_NAMES:
        LEDGER.compare(f"api:{name}:present", True, hasattr(sp, name))
        if not hasattr(sp, name):
            continue
        a, b = getattr(tp, name), getattr(sp, name)
        if callable(a) and name not in ("itt", "DeviceType"):
            LEDGER.compare(f"api:{name}:signature", _params(a), _params(b))
    for name in TP_CLASSES:
        a, b = getattr(tp, name), getattr(sp, name, None)
        if b is None:
            continue
        ma, mb = _members(a), _members(b)
        for m, kind in sorted(ma.items()):
            if name.startswith("Profiler") and m in _STR_METHODS:
                continue
            LEDGER.compare(f"api:{name}.{m}:member", kind, mb.get(m, "<missing>"))
            if kind == "method" and mb.get(m) == "method":
                LEDGER.compare(f"api:{name}.{m}:signature", _params(getattr(a, m)),
                               _params(getattr(b, m)))
    for enum_name in ("ProfilerAction", "ProfilerActivity"):
        a, b = getattr(tp, enum_name), getattr(sp, enum_name)
        LEDGER.compare(f"api:{enum_name}:values", {k: v.value for k, v in a.__members__.items()},
                       {k: v.value for k, v in b.__members__.items()})
        LEDGER.compare(f"api:{enum_name}:is_str", issubclass(a, str), issubclass(b, str))
    LEDGER.compare("api:DeviceType:members", sorted(tp.DeviceType.__members__),
                   sorted(sp.DeviceType.__members__))
    LEDGER.compare("api:itt:names", sorted(tp.itt.__all__), sorted(sp.itt.__all__))
    LEDGER.compare("api:supported_activities", sorted(a.value for a in tp.supported_activities()),
                   sorted(a.value for a in sp.supported_activities()))
    _check("api:")


# --------------------------------------------------------------------------
# The scripts: one function, run through each module
# --------------------------------------------------------------------------

_TIMING = re.compile(r"(^|_)(ns|us|time|pct|percent|interval|start|end|thread|tid|id|"
                     r"cpu_time|total)($|_)")


def _shape(value):
    """A value as compared across the two: its type name for times and
    identities (they differ from run to run), else the value, with events
    and groups reduced to their names."""
    if isinstance(value, (list, tuple)) and value and hasattr(value[0], "cpu_time_total"):
        return [getattr(v, "name", None) for v in value]
    if hasattr(value, "cpu_time_total"):
        return f"<event {getattr(value, 'name', None)}>"
    if isinstance(value, (tp.Interval, sp.Interval)):
        return "Interval"
    if hasattr(value, "name") and hasattr(value, "value") and not isinstance(value, str):
        return f"{type(value).__name__}.{value.name}"  # enums (DeviceType.CPU)
    return value


def _fields(obj) -> dict:
    """Public non-callable attributes of an object (instance and class)."""
    out = {}
    for name in dir(obj):
        if name.startswith("_"):
            continue
        try:
            v = getattr(obj, name)
        except Exception as e:  # noqa: BLE001 -- the error is the observation
            v = f"<raises {type(e).__name__}>"
        if callable(v) and not isinstance(v, (list, tuple)):
            continue
        out[name] = v
    return out


def _compare_fields(prefix: str, a, b) -> None:
    fa, fb = _fields(a), _fields(b)
    for name, va in sorted(fa.items()):
        vb = fb.get(name, "<missing>")
        if vb != "<missing>" and _TIMING.search(name) and isinstance(va, (int, float)) \
                and not isinstance(va, bool):
            va = (type(va).__name__, va > 0)
            vb = (type(vb).__name__, vb > 0) if isinstance(vb, (int, float)) else vb
        else:
            va, vb = _shape(va), (_shape(vb) if vb != "<missing>" else vb)
        LEDGER.compare(f"{prefix}.{name}", va, vb)


def _work(n=2000):
    return sum(range(n))


def _table_layout(text: str) -> list:
    """A table with its numbers blanked (they are timings): the title and
    separator lines and each row's words, which compare exactly."""
    out = []
    for line in text.splitlines():
        if set(line.strip()) <= {"-", " ", "="}:
            out.append(line.rstrip())  # rules: the column widths
        else:  # a row: its words, numbers (timings) as "#"
            out.append(" ".join(re.sub(r"^-?\d+(\.\d+)?(us|ms|s|%)?$", "#", w)
                                for w in line.split()))
    return out


def _trace(path) -> dict:
    """What a trace file says that can be compared: its top-level keys, its
    events' (ph, cat, name) in order, metadata names and the last event."""
    import gzip
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt") as f:
        doc = json.load(f)
    evs = doc["traceEvents"]
    return {
        "keys": sorted(doc),
        "slices": [(e.get("cat"), e.get("name")) for e in evs if e.get("ph") == "X"],
        "metadata": sorted({e["name"] for e in evs if e.get("ph") == "M"}),
        "instants": [e.get("name") for e in evs if e.get("ph") == "i"],
        "displayTimeUnit": doc.get("displayTimeUnit"),
        "dur_positive": all(e.get("dur", 1) > 0 for e in evs if e.get("ph") == "X"),
        "ts_non_negative": all(e.get("ts", 0) >= 0 for e in evs if e.get("ph") == "X"),
    }


def _file_pattern(name: str) -> str:
    return re.sub(r"\d+", "N", name.replace(os.uname().nodename, "HOST"))


def script_schedule(P, tmp):
    """The issue's script: 6 steps, schedule(wait=1, warmup=1, active=2),
    two nested record_functions, the TensorBoard handler."""
    calls = []
    handler = P.tensorboard_trace_handler(os.path.join(tmp, "tb"))

    def ready(prof):
        calls.append(prof.step_num)
        handler(prof)

    actions = []
    with P.profile(schedule=P.schedule(wait=1, warmup=1, active=2),
                   on_trace_ready=ready) as prof:
        actions.append(prof.current_action)
        for _ in range(6):
            with P.record_function("outer"):
                with P.record_function("inner"):
                    _work()
            prof.step()
            actions.append(prof.current_action)
    events = prof.events()
    avgs = prof.key_averages()
    files = sorted(os.listdir(os.path.join(tmp, "tb")))
    return {
        "events": [e.name for e in events],
        "events.type_is_list": isinstance(events, list),
        "events.parents": [getattr(e.cpu_parent, "name", None) for e in events],
        "events.children": [[c.name for c in e.cpu_children] for e in events],
        "averages": sorted((r.key, r.count) for r in avgs),
        "current_action": [str(getattr(a, "value", a)) for a in actions],
        "on_trace_ready.calls": len(calls),
        "on_trace_ready.step_num": calls,
        "trace.files": [_file_pattern(f) for f in files],
        "trace": _trace(os.path.join(tmp, "tb", files[-1])) if files else None,
        "key_averages.table": _table_layout(avgs.table()),
        "profile.table": _table_layout(prof.table()),
        "_event": events[0] if len(events) else None,
        "_avg": avgs[0] if len(avgs) else None,
    }


def script_plain(P, tmp):
    """No schedule: nested spans, a decorated function, the exports."""
    @P.record_function("decorated")
    def f():
        return _work()

    with P.profile() as prof:
        with P.record_function("a"):
            with P.record_function("b"):
                _work()
            f()
        with P.record_function("a"):
            pass
    ev = prof.events()
    out = {
        "events": [e.name for e in ev],
        "events.count": [e.count for e in ev],
        "averages": sorted((r.key, r.count) for r in prof.key_averages()),
        "averages.order_by_self": [r.key for r in prof.key_averages()] ==
        [r.key for r in sorted(prof.key_averages(), key=lambda r: -r.self_cpu_time_total)],
        "sorted_by_name": [r.key for r in prof.key_averages(sort_by="name")],
        "total_average": (prof.total_average().key, prof.total_average().count),
        "self_cpu_time_total>0": prof.self_cpu_time_total > 0,
        "table.top_level": _table_layout(prof.key_averages().table(sort_by="name", top_level_events_only=True)),
        "table.header": _table_layout(prof.key_averages().table(sort_by="name", header="H", row_limit=1)),
        "table.time_unit": _table_layout(prof.key_averages().table(sort_by="name", time_unit="ms")),
        "events.table": _table_layout(ev.table() if hasattr(ev, "table") else prof.table()),
        "memory_summary": prof.memory_summary() if hasattr(prof, "memory_summary") else None,
        "kineto_results": list(prof.kineto_results()) if hasattr(prof, "kineto_results") else None,
        "device_time_by_span": (list(prof.device_time_by_span)
                                if hasattr(prof, "device_time_by_span") else None),
        "current_action": prof.current_action,
    }
    for compat in (False, True):
        path = os.path.join(tmp, f"t{int(compat)}.json")
        prof.export_chrome_trace(path, torch_compat=compat)
        out[f"export_chrome_trace(torch_compat={compat})"] = _trace(path)
    gz = os.path.join(tmp, "t.json.gz")
    prof.export_chrome_trace(gz)
    out["export_chrome_trace(.gz).slices"] = _trace(gz)["slices"]
    tb = prof.export_tensorboard_trace(os.path.join(tmp, "etb"))
    out["export_tensorboard_trace.name"] = _file_pattern(os.path.basename(tb))
    return out


def script_repeat(P, tmp):
    """Two cycles (repeat=2) with active=1: what each on_trace_ready call
    sees and what events() holds at the end."""
    seen = []
    with P.profile(schedule=P.schedule(wait=0, warmup=1, active=1, repeat=2),
                   on_trace_ready=lambda p: seen.append([e.name for e in p.events()])) as prof:
        for i in range(6):
            with P.record_function(f"s{i}"):
                pass
            prof.step()
    return {"on_trace_ready.events": seen, "events": [e.name for e in prof.events()]}


def _error(fn):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn()
    except Exception as e:  # noqa: BLE001 -- the error is the observation
        return type(e).__name__
    return None


def script_errors(P, tmp):
    """Bad arguments and misuse: which exception each raises (None: none)."""
    out = {}
    out["schedule(wait=-1)"] = _error(lambda: P.schedule(wait=-1, warmup=1, active=1))
    out["schedule(active=0)"] = _error(lambda: P.schedule(wait=0, warmup=1, active=0))
    out["schedule(repeat=-1)"] = _error(lambda: P.schedule(wait=0, warmup=1, active=1, repeat=-1))
    out["schedule(skip_first_wait=2)"] = _error(
        lambda: P.schedule(wait=0, warmup=1, active=1, skip_first_wait=2))
    out["schedule(step=-1)"] = _error(lambda: P.schedule(wait=0, warmup=1, active=1)(-1))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        P.schedule(wait=0, warmup=0, active=1)
    out["schedule(warmup=0).warns"] = [c.category.__name__ for c in w]

    with P.profile() as prof:
        with P.record_function("x"):
            pass
    out["key_averages(sort_by=bad)"] = _error(lambda: prof.key_averages(sort_by="bogus"))
    out["table(time_unit=bad)"] = _error(lambda: prof.key_averages().table(time_unit="h"))
    out["key_averages(group_by_input_shape) without shapes"] = _error(
        lambda: prof.key_averages(group_by_input_shape=True))
    out["export_stacks without with_stack"] = _error(
        lambda: prof.export_stacks(os.path.join(tmp, "s.txt")))

    def reenter():
        p = P.profile()
        with p:
            with p:
                pass
    out["profile re-entered"] = _error(reenter)

    def rf_reenter():
        r = P.record_function("r")
        with P.profile():
            with r:
                with r:
                    pass
    out["record_function re-entered"] = _error(rf_reenter)
    out["step outside the context"] = _error(
        lambda: P.profile(schedule=P.schedule(wait=0, warmup=1, active=1)).step())
    out["profile(enabled=False) events"] = _error(lambda: P.profile(enabled=False).events())
    return out


SCRIPTS = {"schedule": script_schedule, "plain": script_plain, "repeat": script_repeat,
           "errors": script_errors}


def _run(name, module):
    with tempfile.TemporaryDirectory() as tmp:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return SCRIPTS[name](module, tmp)


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_script(name):
    a, b = _run(name, tp), _run(name, sp)
    for key in sorted(a):
        if key in ("_event", "_avg"):
            continue
        va, vb = a[key], b.get(key, "<missing>")
        if isinstance(va, dict) and isinstance(vb, dict):  # a trace: each part
            for k in sorted(va):
                LEDGER.compare(f"{name}:{key}.{k}", _shape(va[k]), _shape(vb.get(k, "<missing>")))
        else:
            LEDGER.compare(f"{name}:{key}", _shape(va), _shape(vb))
    if "_event" in a:
        _compare_fields(f"{name}:FunctionEvent", a["_event"], b["_event"])
        _compare_fields(f"{name}:FunctionEventAvg", a["_avg"], b["_avg"])
    _check(f"{name}:")


def test_constructors():
    """The page's constructors, called as the page documents them."""
    raw = [("outer", "u", 1_000, 9_000, 7, None, None, None, -1.0, -1, None, 0, 0, 0),
           ("inner", "u", 2_000, 5_000, 7, None, None, None, -1.0, -1, None, 0, 0, 1)]
    got = {}
    for mod in (tp, sp):
        el = mod.EventList(raw, base_ns=500)
        fe = mod.FunctionEvent(raw[0], self_ns=5_000)
        avg = mod.FunctionEventAvg("n", "u", 2, 1500, 1000, 2000, None, self_ns=2500,
                                   self_pct=50.0)
        fev = el.function_events
        got[mod] = {
            "EventList.len": len(el),
            "EventList.function_events": [e.name for e in fev],
            "EventList.function_events.self_us": [e.self_cpu_time_total for e in fev],
            "EventList.function_events.parent": [getattr(e.cpu_parent, "name", None)
                                                 for e in fev],
            "EventList.key_averages": sorted((r.key, r.count, r.self_us, r.total_us)
                                             for r in el.key_averages()),
            "EventList.base_ns": el.base_ns,
            "FunctionEvent": (fe.name, fe.kind, fe.start_ns, fe.end_ns, fe.tid, fe.cpu_time_total,
                              fe.self_cpu_time_total, fe.cpu_interval.start, fe.cpu_interval.end,
                              fe.gpu_ms, fe.out_bytes, fe.output_bytes, fe.kernel_count,
                              fe.slot_id, fe.device_us, fe.count),
            "FunctionEventAvg": (avg.name, avg.key, avg.kind, avg.count, avg.avg_us, avg.min_us,
                                 avg.max_us, avg.self_us, avg.total_us, avg.cpu_time,
                                 avg.cpu_time_total, avg.self_cpu_time_total, avg.self_pct,
                                 avg.cuda_us, avg.kernel_count, avg.self_cuda_us, avg.flops,
                                 avg.output_bytes, avg.nested_output_bytes),
            "Interval": (mod.Interval(1.0, 2.0).start, mod.Interval(1.0, 2.0).end),
        }
    for key in sorted(got[tp]):
        LEDGER.compare(f"constructors:{key}", got[tp][key], got[sp][key])
    _check("constructors:")


def _torch_schedule(wait, warmup, active, repeat, skip_first, step):
    """torch.profiler.schedule's formula (torch/profiler/profiler.py), the
    reference both are held to (skip_first_wait 0)."""
    if step < skip_first:
        return "none"
    step -= skip_first
    n = wait + warmup + active
    if repeat > 0 and step / n >= repeat:
        return "none"
    mod = step % n
    if mod < wait:
        return "none"
    if mod < wait + warmup:
        return "warmup"
    return "record" if mod < n - 1 else "record_and_save"


def test_schedule_against_torchs_formula():
    """The issue's grid: 2,160 (wait, warmup, active, repeat, skip_first,
    step) cases.  spanscope's schedule is torch's in every one; tensorplay
    1.1.0's differs in 336, each a RECORD where torch saves, and with
    active=1 it never returns RECORD_AND_SAVE."""
    import itertools
    cases = tp_diff = sp_diff = 0
    tp_saves_active1 = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # warmup=0 warns
        for w, wu, a, r, sf in itertools.product((0, 1, 2), (0, 1), (1, 2, 3), (0, 1, 2), (0, 1)):
            ft = tp.schedule(wait=w, warmup=wu, active=a, repeat=r, skip_first=sf)
            fs = sp.schedule(wait=w, warmup=wu, active=a, repeat=r, skip_first=sf)
            for step in range(20):
                cases += 1
                want = _torch_schedule(w, wu, a, r, sf, step)
                got_tp, got_sp = ft(step).value, fs(step).value
                sp_diff += got_sp != want
                if got_tp != want:
                    tp_diff += 1
                    assert (got_tp, want) == ("record", "record_and_save")
                tp_saves_active1 += a == 1 and got_tp == "record_and_save"
    assert cases == 2160 and sp_diff == 0
    LEDGER.compare("schedule:grid.cases_differing_from_torch", tp_diff, sp_diff)
    LEDGER.compare("schedule:grid.saves_with_active_1", tp_saves_active1 > 0, True)
    assert tp_diff == 336  # the count the issue reports for tensorplay 1.1.0
    _check("schedule:grid")


def test_zz_counts(capsys):
    """The counts, and no listed difference that was not compared in a full run."""
    items = LEDGER.items
    equal = sum(1 for w, g in items.values() if w == g)
    intended = sum(1 for k, (w, g) in items.items() if w != g and k in INTENDED)
    line = (f"tensorplay side by side: {len(items)} compared, {equal} equal, "
            f"{intended} intended differences ({len(INTENDED)} listed)")
    with capsys.disabled():
        print("\n" + line)
    build = os.environ.get("SPS_BUILD")
    if build and os.path.isdir(build):
        pathlib.Path(build, "tensorplay-side-by-side.txt").write_text(line + "\n")
    if len(items) >= 200:  # a full run (not -k): every listed item was compared
        unused = sorted(set(INTENDED) - set(items))
        assert not unused, "listed differences no item has: " + ", ".join(unused)
    assert not LEDGER.unexpected()
