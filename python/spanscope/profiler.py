"""spanscope.profiler: the torch.profiler / tensorplay.profiler API on
spanscope's C core.

    from spanscope import profiler

    with profiler.profile(schedule=profiler.schedule(wait=1, warmup=1, active=2),
                          on_trace_ready=profiler.tensorboard_trace_handler("./log")) as p:
        for batch in data:
            with profiler.record_function("forward"):
                ...
            p.step()
    print(p.key_averages().table(sort_by="self_cpu_time_total", row_limit=10))

Every span of the recording window is captured, whichever face opened it:
``record_function`` (a C type: one dict lookup and one sps_begin/sps_end),
ProfileManager regions and decorated functions, and C regions, each with
its thread.  The spans, their nesting and their exact self times come from
the C core (``sps_spans``); this module turns them into numpy columns, and
makes Python objects (``FunctionEvent``) only when asked for them.

Payloads (shapes, stack, FLOPs, module, args) are gathered only while a
profile asks for them: a hook runs right after a Python-opened span begins
and gets the begin record's key (thread, record sequence number:
sps_thread_seq), which the core reports with the span, so the payload is
joined to its span exactly.  The step schedule (``schedule``: the core's
sps_schedule_action), the steps (sps_step) and the ``ProfilerStep#N`` spans
with their nesting come from the core too: nothing here re-derives nesting.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import gzip
import json
import math
import os
import socket
import sys
import threading
import time
import warnings
from typing import Any, Callable, Iterable

import numpy as np

from spanscope import _ext

__all__ = [
    "profile", "schedule", "record_function", "ProfilerAction", "ProfilerActivity",
    "EventList", "FunctionEvent", "FunctionEventAvg", "Interval",
    "tensorboard_trace_handler", "supported_activities", "merge_distributed_traces",
    "emit_nvtx", "emit_itt",
]

#: record_function(name, args=None): a C type (see _profiler.c).
record_function = _ext.record_function

_SPAN_DTYPE = np.dtype([("start", "<i8"), ("end", "<i8"), ("self", "<i8"), ("parent", "<i8"),
                        ("region", "<u4"), ("thread", "<u4"), ("depth", "<u4"),
                        ("stack", "<u4"), ("seq", "<u8")])
assert _SPAN_DTYPE.itemsize == _ext.SPAN_SIZE
_COUNTER_DTYPE = np.dtype([("t_ns", "<i8"), ("value", "<f8"), ("counter", "<u4"),
                           ("reserved", "<u4")])
assert _COUNTER_DTYPE.itemsize == _ext.COUNTER_SAMPLE_SIZE


class ProfilerActivity(str, enum.Enum):
    """Activity groups: CPU spans are always recorded; CUDA needs a device."""
    CPU = "cpu"
    CUDA = "cuda"


class ProfilerAction(str, enum.Enum):
    """What the profiler does during one step (torch's values)."""
    NONE = "none"
    WARMUP = "warmup"
    RECORD = "record"
    RECORD_AND_SAVE = "record_and_save"
    DEVICE_STOPPED = "device_stopped"


_RECORDING = (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)

#: The profile that is recording now (one at a time), or None.
_recording_profile = None


def _count(name: str, value, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"schedule: {name} must be an int, not {value!r}")
    if value < minimum:
        raise ValueError(f"schedule: {name} must be >= {minimum}, not {value}")
    if value >= 2**63:
        raise ValueError(f"schedule: {name} must be < 2**63, not {value}")
    return value


#: What a core schedule returns for each sps_action_t (0..3).
_ACTIONS = (ProfilerAction.NONE, ProfilerAction.WARMUP, ProfilerAction.RECORD,
            ProfilerAction.RECORD_AND_SAVE)


def schedule(*, wait: int, warmup: int, active: int, repeat: int = 0, skip_first: int = 0,
             skip_first_wait: int = 0) -> Callable[[int], ProfilerAction]:
    """A callable mapping a step number to a ``ProfilerAction``, with
    torch.profiler.schedule's semantics: after ``skip_first`` steps, cycles
    of ``wait`` idle steps, ``warmup`` steps and ``active`` recorded steps,
    the last of which is ``RECORD_AND_SAVE``; ``repeat`` cycles (0: for
    ever).  ``skip_first_wait=1`` skips the first cycle's wait only."""
    _count("wait", wait, 0)
    _count("warmup", warmup, 0)
    _count("active", active, 1)
    _count("repeat", repeat, 0)
    _count("skip_first", skip_first, 0)
    if skip_first_wait not in (0, 1) or (not isinstance(skip_first_wait, (int, bool))):
        raise ValueError(f"schedule: skip_first_wait must be 0 or 1, not {skip_first_wait!r}")
    if wait + warmup + active >= 2**63:
        raise ValueError("schedule: wait + warmup + active must be < 2**63")
    if warmup == 0:
        warnings.warn("profiler schedule has warmup=0: the first recorded step may carry "
                      "start-up costs", UserWarning, stacklevel=2)
    # the arithmetic is the core's (sps_schedule_action), as the C API has it
    return _ext.Schedule(wait, warmup, active, repeat, skip_first, int(skip_first_wait),
                         _ACTIONS)


def _always_record(step: int) -> ProfilerAction:
    return ProfilerAction.RECORD


def supported_activities() -> set:
    """The activities this build can record: CPU (no device support here)."""
    return {ProfilerActivity.CPU}


# --------------------------------------------------------------------------
# Results
# --------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Interval:
    """An interval in microseconds (relative to the trace's start)."""
    start: float
    end: float

    def elapsed_us(self) -> float:
        return self.end - self.start


def _fmt_time(us: float) -> str:
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


def _fmt_flops(values: list[float]) -> tuple[str, float]:
    """Torch's scaling: the unit of the smallest non-zero value."""
    nz = [v for v in values if v > 0]
    lo = min(nz) if nz else 0
    for prefix, scale in (("P", 1e15), ("T", 1e12), ("G", 1e9), ("M", 1e6), ("K", 1e3)):
        if lo >= scale:
            return prefix, scale
    return "", 1.0


class _Recording:
    """One window's spans (numpy columns) plus what is needed to name them.

    spans: structured array (_SPAN_DTYPE), start order; names: region id ->
    name; threads: index -> (native id, name); payloads: span index -> dict;
    base_ns: the window's start; options: the profile's flags; anchor: the
    session's (wall ns, mono ns) clock anchor."""

    def __init__(self, spans, names, threads, payloads, base_ns, end_ns, options,
                 counters=None, anchor=(0, 0)):
        self.spans = spans
        self.counters = counters if counters is not None else np.zeros(0, _COUNTER_DTYPE)
        self.names = names
        self.threads = threads
        self.payloads = payloads
        self.base_ns = base_ns
        self.end_ns = end_ns
        self.options = options
        #: the session's clock anchor (sps_clock_anchor), (0, 0): none
        self.anchor = anchor

    @property
    def durations(self) -> np.ndarray:
        return self.spans["end"] - self.spans["start"]

    def stack_of(self, i: int):
        """Span i's stack, innermost first: the Python stack captured for it,
        else the native stack of its begin (C regions), else None."""
        p = self.payloads.get(i)
        if p and p.get("stack"):
            return p["stack"]
        sid = int(self.spans["stack"][i])
        if not sid:
            return None
        cache = self.__dict__.setdefault("_native", {})
        if sid not in cache:
            cache[sid] = _ext.stack_format(sid)
        return cache[sid]

    def group_keys(self, group_by_input_shape=False, group_by_stack_n=0, by_module=False):
        """An int key per span and the key tuples: (name, shapes, stack, module)."""
        regions = self.spans["region"].astype(np.int64)
        plain = not self.payloads and not (group_by_stack_n and self.spans["stack"].any())
        if not (group_by_input_shape or group_by_stack_n or by_module) or plain:
            uniq, inv = np.unique(regions, return_inverse=True)
            return inv, [(self.names[r], None, None, None) for r in uniq]
        table: dict = {}
        keys = np.empty(len(regions), dtype=np.int64)
        out = []
        for i, r in enumerate(regions.tolist()):
            p = self.payloads.get(i)
            shapes = tuple(map(tuple, p["shapes"])) if p and group_by_input_shape and \
                p.get("shapes") is not None else None
            st = self.stack_of(i) if group_by_stack_n else None
            stack = tuple(st[:group_by_stack_n]) if st else None
            module = p.get("module") if p and by_module else None
            k = (r, shapes, stack, module)
            j = table.get(k)
            if j is None:
                j = table[k] = len(out)
                out.append((self.names[r], shapes, stack, module))
            keys[i] = j
        return keys, out


class FunctionEvent:
    """One span: name, id, thread, start/end, parent and children, self and
    total time (µs, like torch), and its payload (shapes, stack, flops)."""

    __slots__ = ("_rec", "_i", "_list")

    def __init__(self, rec: _Recording, i: int, owner: "EventList"):
        self._rec = rec
        self._i = i
        self._list = owner

    def _field(self, f):
        return int(self._rec.spans[f][self._i])

    def _payload(self, key, default=None):
        p = self._rec.payloads.get(self._i)
        return p.get(key, default) if p else default

    id = property(lambda self: self._i)
    name = property(lambda self: self._rec.names[self._field("region")])
    key = name
    kind = "u"
    count = 1
    is_async = False
    device_type = "CPU"
    scope = 0
    thread_index = property(lambda self: self._field("thread"))
    thread = property(lambda self: self._rec.threads[self._field("thread")][0])
    thread_name = property(lambda self: self._rec.threads[self._field("thread")][1])
    start_ns = property(lambda self: self._field("start"))
    end_ns = property(lambda self: self._field("end"))
    self_ns = property(lambda self: self._field("self"))
    depth = property(lambda self: self._field("depth"))
    input_shapes = property(lambda self: self._payload("shapes"))
    dtypes = property(lambda self: self._payload("dtypes"))
    stack = property(lambda self: self._rec.stack_of(self._i))
    module = property(lambda self: self._payload("module"))
    args = property(lambda self: self._payload("args"))
    flops = property(lambda self: self._payload("flops", 0) or 0)

    @property
    def time_range(self) -> Interval:
        b = self._rec.base_ns
        return Interval((self.start_ns - b) / 1e3, (self.end_ns - b) / 1e3)

    @property
    def cpu_time_total(self) -> float:
        return (self.end_ns - self.start_ns) / 1e3

    cpu_time = cpu_time_total

    @property
    def self_cpu_time_total(self) -> float:
        return self.self_ns / 1e3

    device_time_total = self_device_time_total = cuda_time_total = 0.0

    @property
    def cpu_parent(self):
        p = self._field("parent")
        return self._list._event(p) if p >= 0 else None

    @property
    def cpu_children(self) -> list:
        return [self._list._event(int(j)) for j in self._list._children(self._i)]

    def __repr__(self):
        return (f"<FunctionEvent id={self._i} name={self.name!r} thread={self.thread} "
                f"cpu_time_total={self.cpu_time_total:.3f}us "
                f"self_cpu_time_total={self.self_cpu_time_total:.3f}us>")


@dataclasses.dataclass
class FunctionEventAvg:
    """Statistics of one group of spans (key_averages).  Times in µs."""
    key: str
    count: int
    cpu_time_total: float
    self_cpu_time_total: float
    min_cpu_time: float
    max_cpu_time: float
    input_shapes: tuple | None = None
    stack: tuple | None = None
    module: str | None = None
    flops: int = 0
    self_cpu_percent: float = 0.0   # of the Self CPU time total, in %
    cpu_percent: float = 0.0        # (total time / Self CPU time total), in %

    name = property(lambda self: self.key)
    kind = "u"
    device_time_total = self_device_time_total = cuda_time_total = 0.0
    self_cuda_time_total = 0.0
    device_type = "CPU"

    @property
    def cpu_time(self) -> float:
        return self.cpu_time_total / self.count if self.count else 0.0

    def __repr__(self):
        return (f"<FunctionEventAvg key={self.key!r} count={self.count} "
                f"cpu_time_total={self.cpu_time_total:.3f}us "
                f"self_cpu_time_total={self.self_cpu_time_total:.3f}us>")


_SORT_KEYS = {
    "self_cpu_time_total": lambda e: e.self_cpu_time_total,
    "self_cpu_time": lambda e: e.self_cpu_time_total,
    "cpu_time_total": lambda e: e.cpu_time_total,
    "cpu_time": lambda e: e.cpu_time_total,
    "count": lambda e: e.count,
    "calls": lambda e: e.count,
    "flops": lambda e: e.flops,
    "total_flops": lambda e: e.flops,
}
_DEVICE_SORT_KEYS = ("self_cuda_time_total", "self_cuda_time", "cuda_time_total",
                     "cuda_time", "self_device_time_total", "self_device_time",
                     "device_time_total", "device_time")


def _sorted(rows: list, sort_by: str | None) -> list:
    if sort_by is None:
        return list(rows)
    if sort_by == "name":
        return sorted(rows, key=lambda e: e.key)
    if sort_by in _DEVICE_SORT_KEYS:
        return sorted(rows, key=lambda e: getattr(e, "self_device_time_total", 0.0),
                      reverse=True)
    fn = _SORT_KEYS.get(sort_by)
    if fn is None:
        choices = sorted(set(_SORT_KEYS) | {"name"} | set(_DEVICE_SORT_KEYS))
        raise ValueError(f"unknown sort_by {sort_by!r}; choose one of {', '.join(choices)}")
    return sorted(rows, key=fn, reverse=True)


def _build_table(rows: list, sort_by=None, row_limit=100, max_name_column_width=55,
                 header=None, top_level_events_only=False, with_modules=False,
                 rate_ns=None) -> str:
    """torch's table: Name, Self CPU %, Self CPU, CPU total %, CPU total, CPU
    time avg, [# of Calls], [Input Shapes], [Source Location], [Module],
    [Total xFLOPs, FLOPS], then 'Self CPU time total'."""
    rows = _sorted(rows, sort_by)
    self_total = sum(r.self_cpu_time_total for r in rows)
    if row_limit is not None and row_limit > 0:
        rows = rows[:row_limit]
    has_shapes = any(getattr(r, "input_shapes", None) is not None for r in rows)
    has_stack = any(getattr(r, "stack", None) for r in rows)
    has_module = with_modules and any(getattr(r, "module", None) for r in rows)
    has_flops = any((getattr(r, "flops", 0) or 0) > 0 for r in rows)
    name_w = min(max([len(r.key) for r in rows] + [4]) + 4, max_name_column_width)
    cols = [("Name", name_w), ("Self CPU %", 12), ("Self CPU", 12), ("CPU total %", 12),
            ("CPU total", 12), ("CPU time avg", 12), ("# of Calls", 12)]
    if has_shapes:
        shape_w = min(max([len(str(list(map(list, r.input_shapes or ())))) for r in rows]
                          + [12]) + 4, 80)
        cols.append(("Input Shapes", shape_w))
    if has_stack:
        src_w = min(max([len(r.stack[0]) for r in rows if r.stack] + [15]) + 4, 80)
        cols.append(("Source Location", src_w))
    if has_module:
        mod_w = min(max([len(r.module or "") for r in rows] + [6]) + 4, 60)
        cols.append(("Module", mod_w))
    if has_flops:
        prefix, scale = _fmt_flops([r.flops for r in rows])
        cols.append((f"Total {prefix}FLOPs", 16))
        cols.append(("FLOPS", 14))
    line = "".join("-" * w + "  " for _, w in cols)

    def fmt(cells):
        out = []
        for (_, w), c in zip(cols, cells):
            c = str(c)
            if len(c) > w:
                c = c[:w - 3] + "..."
            out.append(f"{c:>{w}}  ")
        return "".join(out)

    def pct(x):
        return f"{100.0 * x / self_total:.2f}%" if self_total > 0 else "0.00%"

    out = []
    if header:
        out += ["=" * len(line), header]
    out += [line, fmt([c for c, _ in cols]), line]
    for r in rows:
        cells = [r.key, pct(r.self_cpu_time_total), _fmt_time(r.self_cpu_time_total),
                 pct(r.cpu_time_total), _fmt_time(r.cpu_time_total),
                 _fmt_time(r.cpu_time_total / r.count if r.count else 0.0), r.count]
        if has_shapes:
            cells.append(str([list(s) for s in (r.input_shapes or ())]))
        if has_stack:
            cells.append(r.stack[0] if r.stack else "")
        if has_module:
            cells.append(r.module or "")
        if has_flops:
            cells.append(f"{r.flops / scale:.3f}" if r.flops else "--")
            secs = r.cpu_time_total / 1e6
            cells.append(_fmt_rate(r.flops / secs) if r.flops and secs > 0 else "--")
        out.append(fmt(cells))
        if has_stack and r.stack:
            for extra in r.stack[1:]:
                blank = [""] * len(cols)
                blank[[c for c, _ in cols].index("Source Location")] = extra
                out.append(fmt(blank))
    out.append(line)
    out.append(f"Self CPU time total: {_fmt_time(self_total)}")
    return "\n".join(out) + "\n"


def _fmt_rate(flops_per_s: float) -> str:
    for prefix, scale in (("P", 1e15), ("T", 1e12), ("G", 1e9), ("M", 1e6), ("K", 1e3)):
        if flops_per_s >= scale:
            return f"{flops_per_s / scale:.2f} {prefix}FLOP/s"
    return f"{flops_per_s:.2f} FLOP/s"


class EventList(list):
    """A list of FunctionEvent (spans) or FunctionEventAvg (key_averages),
    with torch's analysis and export helpers."""

    def __init__(self, items=(), recording: _Recording | None = None):
        super().__init__(items)
        self._rec = recording
        self._spans: list = []
        self._kids = None

    @classmethod
    def _of_spans(cls, rec: _Recording) -> "EventList":
        out = cls(recording=rec)
        out._spans = [FunctionEvent(rec, i, out) for i in range(len(rec.spans))]
        out.extend(out._spans)
        return out

    # -- spans (for FunctionEvent lists) ------------------------------------
    def _event(self, i: int) -> FunctionEvent:
        return self._spans[i]

    def _children(self, i: int) -> np.ndarray:
        if self._kids is None:
            parent = self._rec.spans["parent"]
            order = np.argsort(parent, kind="stable")
            self._kids = (parent[order], order)
        p, order = self._kids
        lo, hi = np.searchsorted(p, i, "left"), np.searchsorted(p, i, "right")
        return order[lo:hi]

    @property
    def self_cpu_time_total(self) -> float:
        if self._rec is not None:
            return float(self._rec.spans["self"].sum()) / 1e3
        return sum(e.self_cpu_time_total for e in self)

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0,
                     group_by_module=False, **ignored) -> "EventList":
        if self._rec is None:
            raise ValueError("key_averages needs a list of spans (profile.events())")
        return _key_averages(self._rec, group_by_input_shape, group_by_stack_n,
                             group_by_module or self._rec.options.get("with_modules", False))

    def total_average(self) -> FunctionEventAvg:
        rows = self if self and isinstance(self[0], FunctionEventAvg) else self.key_averages()
        tot = FunctionEventAvg("Total", 0, 0.0, 0.0, math.inf, 0.0)
        for r in rows:
            tot.count += r.count
            tot.cpu_time_total += r.cpu_time_total
            tot.self_cpu_time_total += r.self_cpu_time_total
            tot.min_cpu_time = min(tot.min_cpu_time, r.min_cpu_time)
            tot.max_cpu_time = max(tot.max_cpu_time, r.max_cpu_time)
            tot.flops += r.flops
        if tot.count == 0:
            tot.min_cpu_time = 0.0
        return tot

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75,
              max_name_column_width=55, max_shapes_column_width=80, header=None,
              top_level_events_only=False, **ignored) -> str:
        """torch's table, one row per item (key_averages() first for a
        summary by name)."""
        rows = list(self)
        if rows and isinstance(rows[0], FunctionEvent):
            rows = [_event_row(e) for e in rows]
        opts = self._rec.options if self._rec else {}
        return _build_table(rows, sort_by, row_limit, max_name_column_width, header,
                            with_modules=opts.get("with_modules", False))

    def __str__(self):
        return self.table()

    def export_chrome_trace(self, path) -> None:
        if self._rec is None:
            raise ValueError("export_chrome_trace needs a list of spans (profile.events())")
        _export_trace(self._rec, os.fspath(path))

    def export_stacks(self, path, metric: str = "self_cpu_time_total") -> None:
        if self._rec is None:
            raise ValueError("export_stacks needs a list of spans (profile.events())")
        _export_stacks(self._rec, os.fspath(path), metric)


def _event_row(e: FunctionEvent) -> FunctionEventAvg:
    d = e.cpu_time_total
    return FunctionEventAvg(e.name, 1, d, e.self_cpu_time_total, d, d, e.input_shapes,
                            tuple(e.stack) if e.stack else None, e.module, e.flops)


def _key_averages(rec: _Recording, by_shape: bool, stack_n: int, by_module: bool) -> EventList:
    keys, descr = rec.group_keys(by_shape, stack_n, by_module)
    n = len(descr)
    dur = rec.durations
    count = np.bincount(keys, minlength=n)
    total = np.bincount(keys, weights=dur, minlength=n)
    selft = np.bincount(keys, weights=rec.spans["self"], minlength=n)
    mins = np.full(n, np.iinfo(np.int64).max, dtype=np.int64)
    maxs = np.zeros(n, dtype=np.int64)
    np.minimum.at(mins, keys, dur)
    np.maximum.at(maxs, keys, dur)
    flops = np.zeros(n, dtype=np.float64)
    for i, p in rec.payloads.items():
        if p.get("flops"):
            flops[keys[i]] += p["flops"]
    self_sum = float(selft.sum()) or 1.0
    rows = []
    for g, (name, shapes, stack, module) in enumerate(descr):
        rows.append(FunctionEventAvg(
            name, int(count[g]), total[g] / 1e3, selft[g] / 1e3, mins[g] / 1e3, maxs[g] / 1e3,
            shapes, stack, module, int(flops[g]), 100.0 * selft[g] / self_sum,
            100.0 * total[g] / self_sum))
    rows.sort(key=lambda r: r.self_cpu_time_total, reverse=True)
    out = EventList(rows)
    out._rec = rec
    return out


# --------------------------------------------------------------------------
# Payloads
# --------------------------------------------------------------------------

def _shape_of(x):
    """(shape as ints, dtype name) of an array-like, ([], None) otherwise.
    Never raises: profiling must not make the user's code fail."""
    try:
        shape = getattr(x, "shape", None)
        if shape is None:
            return [], None
        return [int(d) for d in shape], str(getattr(x, "dtype", "")) or None
    except Exception:
        return [], None


def _caller_frame():
    f = sys._getframe(2)
    here = __file__
    while f is not None and f.f_code.co_filename == here:
        f = f.f_back
    return f


class _Collector:
    """Payload hook of one profile: records (thread, seq, payload), the key
    of the span's begin record (sps_thread_seq) and what to attach to it."""

    def __init__(self, record_shapes, with_stack, with_flops, with_modules):
        self.shapes = record_shapes or with_flops
        self.stack = with_stack
        self.modules = with_modules
        self.items: list = []

    def __call__(self, thread, seq, name, args):
        p = {}
        values = ()
        if isinstance(args, dict):
            p["args"] = args
            flops = args.get("flops")
            if isinstance(flops, (int, float)) and not isinstance(flops, bool) and flops > 0:
                p["flops"] = flops
            values = tuple(args.values())
        elif isinstance(args, (tuple, list)):
            values = tuple(args)
        elif args is not None:
            p["args"] = args
        if self.shapes:
            sd = [_shape_of(v) for v in values]
            p["shapes"] = [s for s, _ in sd]
            p["dtypes"] = [d for _, d in sd]
        if self.stack or self.modules:
            f = _caller_frame()
            if self.modules and f is not None:
                p["module"] = f.f_globals.get("__name__", "?")
            if self.stack:
                st = []
                while f is not None and len(st) < 64:
                    st.append(f"{f.f_code.co_filename}:{f.f_lineno} ({f.f_code.co_name})")
                    f = f.f_back
                p["stack"] = st
        if p:
            self.items.append((thread, seq, p))

    def join(self, spans: np.ndarray) -> dict:
        """span index -> payload: the span whose (thread, seq) is the
        payload's key.  Payloads of spans outside the window find none."""
        out: dict = {}
        if not self.items or len(spans) == 0:
            return out
        thr = np.fromiter((t for t, _, _ in self.items), np.uint32, len(self.items))
        seq = np.fromiter((q for _, q, _ in self.items), np.uint64, len(self.items))
        order = np.lexsort((spans["seq"], spans["thread"]))  # by thread, then seq
        sthr, sseq = spans["thread"][order], spans["seq"][order]
        for t in np.unique(thr):
            lo, hi = np.searchsorted(sthr, t, "left"), np.searchsorted(sthr, t, "right")
            mine = np.nonzero(thr == t)[0]
            pos = lo + np.searchsorted(sseq[lo:hi], seq[mine])
            hit = pos < hi
            hit[hit] = sseq[pos[hit]] == seq[mine[hit]]
            for k, j in zip(mine[hit].tolist(), order[pos[hit]].tolist()):
                out[j] = self.items[k][2]
        return out


def _decorate(rf, func):
    """record_function(name)(func).  Without args this is the C wrapper the
    ProfileManager decorator uses (begin, vectorcall, end); with args a
    Python wrapper that opens record_function(name, args) per call."""
    name, args = rf.name, rf.args
    if args is None:
        return functools.update_wrapper(_ext.ProfiledFunction(func, _ext.Region(name)), func)

    @functools.wraps(func)
    def wrapper(*a, **k):
        with record_function(name, args):
            return func(*a, **k)
    return wrapper


_ext.set_decorate(_decorate)


# --------------------------------------------------------------------------
# Export
# --------------------------------------------------------------------------

def _json_args(p: dict | None) -> str | None:
    if not p:
        return None
    a = {}
    if p.get("shapes") is not None:
        a["Input Dims"] = p["shapes"]
        a["Input type"] = p.get("dtypes")
    if p.get("stack"):
        a["Call stack"] = ";".join(p["stack"])
        a["Call site"] = p["stack"][0]
    if p.get("module"):
        a["Module"] = p["module"]
    if p.get("flops"):
        a["flops"] = p["flops"]
    if "args" in p:
        a["args"] = _jsonable(p["args"])
    # compact: HTA finds a file's rank with '"rank":\s+(\d+)' on the first
    # line that has it, so a user's {"rank": 3} here must not match
    return json.dumps(a, default=repr, ensure_ascii=False,
                      separators=(",", ":")) if a else None


def _jsonable(v, depth=0):
    """A JSON-friendly summary of a record_function args value: array-likes
    become "<type shape dtype>", other objects a repr cut at 200 chars."""
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if hasattr(v, "shape"):
        shape, dtype = _shape_of(v)
        return f"<{type(v).__name__} shape={shape} dtype={dtype}>"
    if depth < 3 and isinstance(v, dict):
        return {str(k): _jsonable(x, depth + 1) for k, x in v.items()}
    if depth < 3 and isinstance(v, (list, tuple)) and len(v) <= 64:
        return [_jsonable(x, depth + 1) for x in v]
    r = repr(v)
    return r if len(r) <= 200 else r[:197] + "..."


def _dist_info():
    rank = os.environ.get("RANK", os.environ.get("OMPI_COMM_WORLD_RANK"))
    world = os.environ.get("WORLD_SIZE", os.environ.get("OMPI_COMM_WORLD_SIZE"))
    try:
        return (int(rank), int(world or 0)) if rank is not None else (-1, 0)
    except ValueError:
        return -1, 0


def _dist_backend():
    """The distributed backend in use, for distributedInfo.backend: that of
    torch.distributed (or tensorplay's) when the program initialised it,
    "mpi" when MPI is initialised (mpi4py), else None (no key: the tools
    read a present backend as one in use).  Imports nothing new."""
    for mod in ("torch.distributed", "tensorplay.distributed"):
        d = sys.modules.get(mod)
        try:
            if d is not None and d.is_available() and d.is_initialized():
                return str(d.get_backend())
        except Exception:  # a half-initialised or foreign module: no backend
            pass
    mpi = sys.modules.get("mpi4py.MPI")
    try:
        if mpi is not None and mpi.Is_initialized() and not mpi.Is_finalized():
            return "mpi"
    except Exception:
        pass
    return None


_TRACE_SUFFIXES = (".json", ".json.gz", ".pftrace")


def _export_trace(rec: _Recording, path: str) -> None:
    if not path.lower().endswith(_TRACE_SUFFIXES):
        raise ValueError(f"cannot tell the trace format of {path!r}: name it .json, "
                         ".json.gz (compressed) or .pftrace (Perfetto)")
    args = None
    native = rec.spans["stack"]
    if rec.payloads or native.any():
        args = []
        for i in range(len(rec.spans)):
            p = rec.payloads.get(i)
            if native[i] and not (p and p.get("stack")):
                p = dict(p or {}, stack=rec.stack_of(i))
            args.append(_json_args(p))
    o = rec.options
    extra = json.dumps({
        "record_shapes": bool(o.get("record_shapes")), "with_stack": bool(o.get("with_stack")),
        "with_flops": bool(o.get("with_flops")), "with_modules": bool(o.get("with_modules")),
        "profile_memory": False, "host_name": socket.gethostname(), "pid": os.getpid(),
        "trace_id": f"{os.getpid():x}{rec.base_ns:x}",
    })[1:-1]
    rank, world = _dist_info()
    wall, mono = rec.anchor
    _ext.timeline_write(path, list(rec.names), [t[0] for t in rec.threads],
                        [t[1] for t in rec.threads], rec.spans.tobytes(), args, extra,
                        rec.base_ns, os.path.basename(path), rank, world, wall, mono,
                        socket.gethostname(), rec.counters.tobytes(), os.getpid(),
                        _dist_backend())


def _export_stacks(rec: _Recording, path: str, metric: str) -> None:
    if metric not in ("self_cpu_time_total", "self_cuda_time_total", "self_device_time_total"):
        raise ValueError(f"metric must be 'self_cpu_time_total', not {metric!r}")
    spans = rec.spans
    parent = spans["parent"].tolist()
    region = spans["region"].tolist()
    thread = spans["thread"].tolist()
    selfns = spans["self"].tolist()
    paths: list = [None] * len(spans)
    acc: dict = {}
    for i in range(len(spans)):  # parents come before their children
        name = rec.names[region[i]].replace(";", ":").replace(" ", "_")
        p = parent[i]
        paths[i] = (paths[p] + ";" + name) if p >= 0 else \
            f"thread_{rec.threads[thread[i]][0]};{name}"
        if metric == "self_cpu_time_total":
            acc[paths[i]] = acc.get(paths[i], 0) + selfns[i]
    tmp = f"{path}.tmp{os.getpid()}"
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            for k, v in acc.items():
                f.write(f"{k} {v // 1000}\n")
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def tensorboard_trace_handler(dir_name, worker_name=None, use_gzip=False) -> Callable:
    """on_trace_ready handler writing one
    ``{worker_name or host_pid}.{time_ns}.pt.trace.json[.gz]`` per cycle
    into dir_name (created if missing), which TensorBoard's profiler plugin
    and Perfetto open."""
    dir_name = os.fspath(dir_name)

    def handler(prof) -> None:
        os.makedirs(dir_name, exist_ok=True)
        worker = worker_name or f"{socket.gethostname()}_{os.getpid()}"
        name = f"{worker}.{time.time_ns()}.pt.trace.json" + (".gz" if use_gzip else "")
        prof.export_chrome_trace(os.path.join(dir_name, name))
    return handler


def merge_distributed_traces(paths: Iterable, out_path) -> None:
    """Merges per-process trace or HDF5 files into one (format by out_path's
    extension): each input becomes a process labelled with its rank (from
    its metadata, else its position), clocks aligned (docs/merge.md)."""
    paths = [os.fspath(p) for p in paths]
    if not paths:
        raise ValueError("merge_distributed_traces needs at least one input")
    _ext.merge(os.fspath(out_path), paths)


class _Unsupported:
    """emit_nvtx / emit_itt: range emission for external tools belongs to
    the device integration, not built here."""

    _what = ""

    def __init__(self, enabled=True, record_shapes=False):
        self.enabled = enabled

    def __enter__(self):
        if self.enabled:
            raise NotImplementedError(f"{self._what} emission is not built into this "
                                      "spanscope (it belongs to the device integration)")
        return self

    def __exit__(self, *exc):
        return False


class emit_nvtx(_Unsupported):
    _what = "NVTX"


class emit_itt(_Unsupported):
    _what = "ITT"


# --------------------------------------------------------------------------
# profile
# --------------------------------------------------------------------------

def _actions(prev, cur) -> tuple:
    """torch's transition table (facts §7): what to do when the action goes
    from prev to cur (None: the profile starts or stops)."""
    A = ProfilerAction
    if prev == cur and cur != A.RECORD_AND_SAVE:
        return ()
    if prev == A.RECORD_AND_SAVE and cur == A.RECORD_AND_SAVE:
        return ("stop", "ready", "prepare", "start")
    if prev in (None, A.NONE):
        return {A.WARMUP: ("prepare",), A.RECORD: ("prepare", "start"),
                A.RECORD_AND_SAVE: ("prepare", "start")}.get(cur, ())
    if prev == A.WARMUP:
        return {A.RECORD: ("start",), A.RECORD_AND_SAVE: ("start",),
                A.NONE: ("warn", "start", "stop"), None: ("start", "stop")}.get(cur, ())
    if prev == A.RECORD:
        return {A.NONE: ("warn", "stop"), A.WARMUP: ("warn", "stop"),
                None: ("stop", "ready")}.get(cur, ())
    if prev == A.RECORD_AND_SAVE:
        return {A.NONE: ("stop", "ready"), A.WARMUP: ("stop", "ready", "prepare"),
                A.RECORD: ("stop", "ready", "prepare", "start"),
                None: ("stop", "ready")}.get(cur, ())
    return ()


class profile:
    """torch.profiler.profile on spanscope's core: a context manager (or
    start()/stop()) that records every span of its recording windows, with
    an optional schedule over step() calls."""

    def __init__(self, enabled=True, *, activities=None, schedule=None, on_trace_ready=None,
                 record_shapes=False, profile_memory=False, with_stack=False, with_flops=False,
                 with_modules=False, use_device=None, gpu_timing=None, gpu_trace=None,
                 with_samples=False):
        if profile_memory:
            raise NotImplementedError("profile_memory=True is delivered by the memory/counters/"
                                      "samples work; this spanscope does not record memory yet")
        if with_samples:
            raise NotImplementedError("with_samples=True is delivered by the memory/counters/"
                                      "samples work; this spanscope does not sample stacks yet")
        acts = set()
        for a in (activities if activities is not None else [ProfilerActivity.CPU]):
            try:
                acts.add(ProfilerActivity(a.value if isinstance(a, enum.Enum) else str(a).lower()))
            except ValueError:
                raise ValueError(f"unknown activity {a!r}; use ProfilerActivity.CPU or "
                                 "ProfilerActivity.CUDA") from None
        wants_device = (ProfilerActivity.CUDA in acts or use_device not in (None, "cpu")
                        or bool(gpu_timing) or bool(gpu_trace))
        if wants_device:
            warnings.warn("spanscope: no device support in this build (no CUDA device/CUPTI); "
                          "profiling the CPU only", RuntimeWarning, stacklevel=2)
        if schedule is not None and not callable(schedule):
            raise TypeError("schedule must be callable (see profiler.schedule)")
        if on_trace_ready is not None and not callable(on_trace_ready):
            raise TypeError("on_trace_ready must be callable")
        self.enabled = bool(enabled)
        self.activities = acts
        self.schedule = schedule if schedule is not None else _always_record
        self.record_steps = schedule is not None
        self.on_trace_ready = on_trace_ready
        self.record_shapes = bool(record_shapes)
        self.with_stack = bool(with_stack)
        self.with_flops = bool(with_flops)
        self.with_modules = bool(with_modules)
        self.step_num = 0
        self.current_action = self.schedule(0)
        self._started = False
        self._owns_session = False
        self._session_start = 0
        self._stacks_on = False
        self._t0 = None
        self._collector = None
        self._step_open = False  # a step of ours is open in the core (sps_step_begin)
        self._result: _Recording | None = None
        self._events: EventList | None = None

    # -- context manager / start / stop ------------------------------------
    def __enter__(self):
        self.start()
        return self

    def __exit__(self, exc_type, exc, tb):
        self.stop()
        return False

    def start(self) -> None:
        """Starts profiling (the schedule's first action).  One profile
        records at a time in a process: RuntimeError while another one does
        (nest record_function spans inside it instead)."""
        global _recording_profile
        if not self.enabled or self._started:
            return
        if _recording_profile is not None:
            raise RuntimeError("another spanscope.profiler.profile is already recording; "
                               "stop it first (one profile records at a time)")
        _recording_profile = self
        self._started = True
        try:
            self._transit(ProfilerAction.NONE, self.current_action)
        except BaseException:
            self._end()
            raise
        self._open_step_span()

    def stop(self) -> None:
        if not self.enabled or not self._started:
            return
        self._close_step_span()
        try:
            self._transit(self.current_action, None)
        finally:
            self._end()

    def _end(self) -> None:
        """Leaves the recording state whatever happened: hooks off, the
        session this profile started ended."""
        global _recording_profile
        self._close_step_span()
        self._started = False
        self._release_session()
        if _recording_profile is self:
            _recording_profile = None

    def step(self) -> None:
        """Marks a step boundary: the schedule decides what the next step does."""
        if not self.enabled or not self._started:
            return
        prev = self.current_action
        self.step_num += 1
        self.current_action = self.schedule(self.step_num)
        if self._step_open and not _actions(prev, self.current_action):
            # the window goes on: one mark ends step N-1 and begins step N
            _ext.step()
            return
        self._close_step_span()
        self._transit(prev, self.current_action)
        self._open_step_span()

    # ProfilerStep#N spans are the core's: a step is a pair of marks on the
    # thread that called start()/step() (sps_step_begin, sps_step,
    # sps_step_end), and sps_spans nests the steps among the regions by the
    # model's rule -- a region open across step() stays whole (marks are not
    # region records, which the core's nesting would close at the step's
    # end).  The profile's step number outlives its sessions (one per
    # window), so each window's first step is begun with its number.
    def _open_step_span(self):
        if self.record_steps and self.current_action in _RECORDING:
            _ext.step_begin(self.step_num)
            self._step_open = True

    def _close_step_span(self):
        if self._step_open:
            self._step_open = False
            if _ext.is_active():
                _ext.step_end()

    # -- the torch transition table -------------------------------------
    def _transit(self, prev, cur) -> None:
        actions = _actions(prev, cur)
        for a in actions:
            if a == "prepare":
                self._prepare()
            elif a == "start":
                self._start_trace()
            elif a == "stop":
                self._stop_trace()
            elif a == "ready" and self.on_trace_ready is not None:
                self.on_trace_ready(self)
        if "warn" in actions:  # last: raised as an error it must not skip "stop"
            warnings.warn(f"Incorrect schedule: {prev.name} followed by {cur.name}",
                          UserWarning, stacklevel=3)

    def _owned(self) -> bool:
        """Whether the running session is still the one this profile started
        (ProfileManager.setup refuses to replace it, but check anyway)."""
        return (self._owns_session and _ext.is_active()
                and _ext.session_start_ns() == self._session_start)

    def _prepare(self) -> None:
        if self._owned():
            return
        self._owns_session = False
        if not _ext.is_active():
            # local: each rank profiles on its own, never collectively
            _ext.setup(None, local=True)
            self._owns_session = True
            self._session_start = _ext.session_start_ns()
            return
        try:
            _ext.spans(1, 0)  # an empty window: only checks the session keeps spans
        except RuntimeError as e:
            raise RuntimeError("spanscope.profiler needs per-call spans, but the running "
                               "ProfileManager session was set up with aggregation_mode=True"
                               ) from e

    def _release_session(self) -> None:
        _ext.set_capture(None)
        if self._stacks_on:
            self._stacks_on = False
            if _ext.is_active():
                _ext.capture_stacks(False)
        if self._owned():
            _ext.shutdown()
        self._owns_session = False

    def _start_trace(self) -> None:
        self._prepare()  # WARMUP -> RECORD: the session warm-up began is still there
        if self._owned():
            _ext.finalize(None, False)  # drop what warm-up recorded
        self._collector = _Collector(self.record_shapes, self.with_stack, self.with_flops,
                                     self.with_modules)
        if self.with_stack:
            _ext.capture_stacks(True)
            self._stacks_on = True
        _ext.set_capture(self._collector, self.record_shapes or self.with_flops or
                         self.with_stack or self.with_modules)
        self._tnames = _python_thread_names()
        self._t0 = _ext.now_ns()

    def _stop_trace(self) -> None:
        t1 = _ext.now_ns()
        if self._stacks_on and _ext.is_active():
            _ext.capture_stacks(False)
        self._stacks_on = False
        tnames = getattr(self, "_tnames", {})
        tnames.update(_python_thread_names())
        _ext.set_capture(None)
        t0 = self._t0 if self._t0 is not None else t1
        raw = _ext.spans(t0, t1) if _ext.is_active() else b""
        spans = np.frombuffer(raw, dtype=_SPAN_DTYPE)
        counters = np.frombuffer(_ext.counter_samples(t0, t1) if _ext.is_active() else b"",
                                 dtype=_COUNTER_DTYPE)
        top = max(_max_region(spans), int(counters["counter"].max()) if len(counters) else 0)
        names = [_ext.region_name(i) or "" for i in range(top + 1)]
        threads = []
        for i in range(int(spans["thread"].max()) + 1 if len(spans) else 0):
            info = _ext.thread_info(i)
            threads.append((info[0], tnames.get(info[0], info[2])) if info else (i, ""))
        payloads = self._collector.join(spans) if self._collector else {}
        self._collector = None
        opts = {"record_shapes": self.record_shapes, "with_stack": self.with_stack,
                "with_flops": self.with_flops, "with_modules": self.with_modules}
        self._result = _Recording(spans, names, threads, payloads, t0, t1, opts, counters,
                                  _ext.clock_anchor())
        self._events = None
        if self._owned():
            # between windows nothing is recorded (the next "prepare" starts
            # a new session), so a long run does not pay for idle steps
            _ext.shutdown()
        self._owns_session = False
        self._t0 = None

    # -- results ---------------------------------------------------------
    def _recording(self) -> _Recording:
        if self._result is None:
            empty = np.zeros(0, dtype=_SPAN_DTYPE)
            return _Recording(empty, [""], [], {}, 0, 0, {})
        return self._result

    def events(self) -> EventList:
        """The spans of the last completed recording window, in start order."""
        if self._events is None:
            self._events = EventList._of_spans(self._recording())
        return self._events

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0,
                     group_by_module=False, **ignored) -> EventList:
        return _key_averages(self._recording(), group_by_input_shape, group_by_stack_n,
                             group_by_module or self.with_modules)

    def total_average(self) -> FunctionEventAvg:
        return self.key_averages().total_average()

    @property
    def self_cpu_time_total(self) -> float:
        return float(self._recording().spans["self"].sum()) / 1e3

    def table(self, sort_by=None, row_limit=100, **kw) -> str:
        return self.key_averages().table(sort_by=sort_by, row_limit=row_limit, **kw)

    def counters(self) -> dict:
        """Counter samples of the last window (spanscope.counter / sps_counter):
        {name: {"times_ns": array, "values": array}}, in time order."""
        rec = self._recording()
        out = {}
        for cid in np.unique(rec.counters["counter"]):
            sel = rec.counters["counter"] == cid
            out[rec.names[int(cid)]] = {"times_ns": rec.counters["t_ns"][sel].copy(),
                                        "values": rec.counters["value"][sel].copy()}
        return out

    def export_chrome_trace(self, path) -> None:
        """Writes the last window as a Chrome trace (.json; .gz compresses;
        .pftrace writes Perfetto protobuf)."""
        _export_trace(self._recording(), os.fspath(path))

    def export_stacks(self, path, metric: str = "self_cpu_time_total") -> None:
        """Folded stacks (thread;outer;inner self_us per line) for flame graphs."""
        _export_stacks(self._recording(), os.fspath(path), metric)

    def __repr__(self):
        return (f"<spanscope.profiler.profile step={self.step_num} "
                f"action={self.current_action.value}>")


def _python_thread_names() -> dict:
    """native thread id -> Python thread name, for the threads alive now
    (threads that start and end inside a window keep their OS name)."""
    return {t.native_id: t.name for t in threading.enumerate() if t.native_id is not None}


def _max_region(spans) -> int:
    m = int(spans["region"].max()) if len(spans) else 0
    return max(m, 0)
