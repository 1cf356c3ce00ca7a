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

import contextlib
import dataclasses
import enum
import functools
import importlib.util
import json
import math
import os
import re
import signal
import socket
import sys
import tempfile
import threading
import time
import warnings
from typing import Any, Callable, Iterable

import numpy as np

from spanscope import _ext
from spanscope import _itt as itt
from spanscope._base.atomic import write_replacing, write_text_replacing
from spanscope.results._samples import Samples, read_stack_samples
from spanscope.results._table import terminal_text

__all__ = [
    "profile", "schedule", "record_function", "ProfilerAction", "ProfilerActivity",
    "DeviceType", "EventList", "FunctionEvent", "FunctionEventAvg", "Interval",
    "tensorboard_trace_handler", "supported_activities", "merge_distributed_traces",
    "emit_nvtx", "emit_itt", "itt", "DeviceActivity", "device_activities",
    "device_activity_ready",
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


class DeviceType(enum.IntEnum):
    """torch.profiler.DeviceType: the members torch's binding registers
    (py::enum_<c10::DeviceType> in torch/csrc/autograd/init.cpp: all of
    c10's but COMPILE_TIME_MAX_DEVICE_TYPES), with c10::DeviceType's values
    (c10/core/DeviceType.h), so ``int(DeviceType.CUDA) == 1`` as in torch.
    Spans are ``CPU``; the device's own activities (kineto_results) ``CUDA``."""
    CPU = 0
    CUDA = 1
    MKLDNN = 2
    OPENGL = 3
    OPENCL = 4
    IDEEP = 5
    HIP = 6
    FPGA = 7
    MAIA = 8
    XLA = 9
    Vulkan = 10
    Metal = 11
    XPU = 12
    MPS = 13
    Meta = 14
    HPU = 15
    VE = 16
    Lazy = 17
    IPU = 18
    MTIA = 19
    PrivateUse1 = 20


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


def _count(name: str, value) -> int:
    """An int schedule argument (the core's arithmetic is integer): a
    non-int is a TypeError (torch compares it and fails, or computes in
    floats), a value the int64 arithmetic cannot hold a ValueError."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"schedule: {name} must be an int, not {value!r}")
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
    for name, value in (("wait", wait), ("warmup", warmup), ("active", active),
                        ("repeat", repeat), ("skip_first", skip_first)):
        _count(name, value)
    # torch asserts these (torch/profiler/profiler.py, schedule): AssertionError
    # with every value and its bound, as torch words it
    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise AssertionError(
            f"Invalid profiler schedule arguments. Got wait={wait} (need >= 0), "
            f"warmup={warmup} (need >= 0), active={active} (need > 0), repeat={repeat} "
            f"(need >= 0), skip_first={skip_first} (need >= 0).")
    # tensorplay asserts skip_first_wait is 0, 1 or a bool (torch takes any
    # int as a flag; a 2 is more likely a mistaken wait count than a flag)
    if not isinstance(skip_first_wait, (int, bool)) or skip_first_wait not in (0, 1):
        raise AssertionError(f"schedule: skip_first_wait must be 0 or 1 (a flag), "
                             f"not {skip_first_wait!r}")
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
    """The activities this build can record on this machine: CPU always,
    CUDA when the C core's CUPTI collector can start here
    (sps_device_available(SPS_DEVICE_CUPTI): a driver, a libcupti and a
    build with CUPTI's headers)."""
    acts = {ProfilerActivity.CPU}
    if _ext.device_available(_ext.DEVICE_CUPTI) is None:
        acts.add(ProfilerActivity.CUDA)
    return acts


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
    """torch's _format_time (torch/autograd/profiler_util.py)."""
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


#: table(time_unit=...): torch's override_time_unit units, µs per unit
_TIME_UNITS = {"s": 1e6, "ms": 1e3, "us": 1.0}


def _fmt_time_in(us: float, time_unit) -> str:
    """_fmt_time, or the value in time_unit ("s", "ms", "us") as torch's
    override_time_unit writes it."""
    if time_unit is None:
        return _fmt_time(us)
    return f"{us / _TIME_UNITS[time_unit]:.3f}{time_unit}"


def _fmt_share(us: float, total_us: float) -> str:
    """torch's _format_time_share: "NaN" of a zero total."""
    return f"{us * 100.0 / total_us:.2f}%" if total_us else "NaN"


_STEP_PREFIX = "ProfilerStep#"


def _group_name(name: str) -> str:
    """torch's _rewrite_name(with_wildcard=True): every ProfilerStep#N is
    one "ProfilerStep*" (the name of torch's FunctionEvent and its group)."""
    return "ProfilerStep*" if name.startswith(_STEP_PREFIX) else name


class _Recording:
    """One window's spans (numpy columns) plus what is needed to name them.

    spans: structured array (_SPAN_DTYPE), start order; names: region id ->
    name; threads: index -> (native id, name); payloads: span index -> dict;
    base_ns: the window's start; options: the profile's flags; anchor: the
    session's (wall ns, mono ns) clock anchor; python_ids: the region ids
    the recursive tracer made for Python functions (python_function
    events); values: None, or the spans' values per span (int64, shape
    (n, 2 * len(value_names)): the own values, then the self values, in
    value_names order -- sps_spans_values, profile_memory); samples: None
    (no sampler), or the window's stack samples (results' Samples, their
    regions indexing names: with_samples, EventList(samples=...));
    device: None, or the device activities recorded in the window
    (_DeviceData: activities=[CUDA]), each joined to its launching span."""

    def __init__(self, spans, names, threads, payloads, base_ns, end_ns, options,
                 counters=None, anchor=(0, 0), python_ids=frozenset(), values=None,
                 value_names=(), samples=None, device=None):
        self.spans = spans
        self.device = device
        #: gpu_timing: per span, the elapsed time (ns) of the CUDA event
        #: pair around it, -1 none; None when no pairs were recorded
        self.gpu_pairs = None
        self.samples = samples
        self.value_names = list(value_names) if values is not None else []
        self.values = values
        self.counters = counters if counters is not None else np.zeros(0, _COUNTER_DTYPE)
        self.names = names
        self.threads = threads
        self.payloads = payloads
        self.base_ns = base_ns
        self.end_ns = end_ns
        self.options = options
        #: the session's clock anchor (sps_clock_anchor), (0, 0): none
        self.anchor = anchor
        self.python_ids = python_ids

    @property
    def durations(self) -> np.ndarray:
        return self.spans["end"] - self.spans["start"]

    def value(self, name: str, self_value: bool = False):
        """The column of value `name` (own, or self with self_value) for
        every span, int64; None when the recording has no such value."""
        if self.values is None or name not in self.value_names:
            return None
        j = self.value_names.index(name)
        return self.values[:, j + (len(self.value_names) if self_value else 0)]

    @property
    def has_memory(self) -> bool:
        """Whether the spans carry memory values (profile_memory)."""
        return self.values is not None and "alloc_bytes" in self.value_names

    def net_memory(self, self_value: bool = False) -> np.ndarray:
        """Bytes allocated minus bytes freed per span (own, or self): torch's
        cpu_memory_usage / self_cpu_memory_usage; zeros without memory."""
        a = self.value("alloc_bytes", self_value)
        if a is None:
            return np.zeros(len(self.spans), np.int64)
        return a - self.value("free_bytes", self_value)

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

    def event_list(self) -> "EventList":
        """The spans as FunctionEvent objects, made once: profile.events()
        and the groups' cpu_parent are the same objects."""
        if "_event_list" not in self.__dict__:
            self._event_list = EventList._of_spans(self)
        return self._event_list

    def python_mask(self) -> np.ndarray:
        """True for the spans of python_function events (the tracer's)."""
        if not self.python_ids or not len(self.spans):
            return np.zeros(len(self.spans), dtype=bool)
        return np.isin(self.spans["region"], np.fromiter(self.python_ids, np.int64))

    def group_keys(self, by_shape=False, stack_n=0, by_module=False, include_python=True):
        """torch's key_averages grouping, on the columns: an int per span
        (its group; -1: left out, a python_function event when
        include_python is False) and per group (name, shapes, stack,
        module).  The name is torch's group name (ProfilerStep* for every
        step); by_shape adds the span's recorded input shapes (() when none
        were recorded: torch's "[]"), stack_n the first n frames of its
        stack (innermost first, torch's stack[:n]), by_module the Python
        module that opened it."""
        regions = self.spans["region"].astype(np.int64)
        gname: dict = {}
        name_of_region = np.fromiter((gname.setdefault(_group_name(n), len(gname))
                                      for n in self.names), np.int64, len(self.names))
        names = list(gname)
        nk = name_of_region[regions] if len(regions) else np.zeros(0, np.int64)
        keep = ~self.python_mask() if not include_python else np.ones(len(regions), bool)
        shapes0 = () if by_shape else None
        varies = (by_shape and any(p.get("shapes") is not None for p in self.payloads.values())
                  or (stack_n and (self.payloads or self.spans["stack"].any()))
                  or (by_module and self.payloads))
        keys = np.full(len(regions), -1, dtype=np.int64)
        if not varies:
            uniq, inv = np.unique(nk[keep], return_inverse=True)
            keys[keep] = inv
            return keys, [(names[n], shapes0, () if stack_n else None, None) for n in uniq]
        table: dict = {}
        out = []
        for i in np.nonzero(keep)[0].tolist():
            p = self.payloads.get(i)
            shapes = shapes0
            if by_shape and p and p.get("shapes") is not None:
                shapes = tuple(map(tuple, p["shapes"]))
            stack = None
            if stack_n:
                st = self.stack_of(i)
                stack = tuple(st[:stack_n]) if st else ()
            module = p.get("module") if p and by_module else None
            k = (int(nk[i]), shapes, stack, module)
            j = table.get(k)
            if j is None:
                j = table[k] = len(out)
                out.append((names[k[0]], shapes, stack, module))
            keys[i] = j
        return keys, out


def _concat_recordings(a: _Recording, b: _Recording) -> _Recording:
    """One recording of a's windows then b's (acc_events): b's region and
    thread indices mapped into one name and thread table (by name, by
    native thread id), its parents and payload keys shifted past a's.
    Each window's spans keep the nesting the core gave them; native stack
    ids are interned process-wide (sps_capture_stacks), so they stay."""
    names = list(a.names)
    index = {n: i for i, n in enumerate(names)}
    region_map = np.fromiter((index.setdefault(n, len(index)) for n in b.names), np.int64,
                             len(b.names))
    names += [n for n in index if index[n] >= len(names)]
    threads = list(a.threads)
    tindex = {t[0]: i for i, t in enumerate(threads)}
    thread_map = np.empty(len(b.threads), np.int64)
    for i, t in enumerate(b.threads):
        if t[0] not in tindex:
            tindex[t[0]] = len(threads)
            threads.append(t)
        thread_map[i] = tindex[t[0]]
    bs = b.spans.copy()
    if len(bs):
        bs["region"] = region_map[bs["region"]]
        bs["thread"] = thread_map[bs["thread"]]
        bs["parent"] = np.where(bs["parent"] >= 0, bs["parent"] + len(a.spans), -1)
    bc = b.counters.copy()
    if len(bc):
        bc["counter"] = region_map[bc["counter"]]
    payloads = dict(a.payloads)
    payloads.update({i + len(a.spans): p for i, p in b.payloads.items()})
    python_ids = a.python_ids | {int(region_map[r]) for r in b.python_ids
                                 if r < len(region_map)}
    values, vnames = _concat_values(a, b)
    options = dict(b.options)
    options["profile_memory"] = bool(a.options.get("profile_memory") or
                                     b.options.get("profile_memory"))
    samples = None
    if a.samples is not None or b.samples is not None:
        samples = Samples.concat([a.samples, b.samples]).with_regions(names)
        names += samples.region_names[len(names):]
    out = _Recording(np.concatenate([a.spans, bs]), names, threads, payloads, a.base_ns,
                     b.end_ns, options, np.concatenate([a.counters, bc]), a.anchor,
                     frozenset(python_ids), values, vnames, samples,
                     _DeviceData.concat(a.device, b.device, len(a.spans)))
    if a.gpu_pairs is not None or b.gpu_pairs is not None:
        out.gpu_pairs = np.concatenate([
            r.gpu_pairs if r.gpu_pairs is not None else np.full(len(r.spans), -1, np.int64)
            for r in (a, b)])
    return out


def _concat_values(a: _Recording, b: _Recording):
    """a's values then b's, by name (a window that lacks a value reads 0
    for it); (None, []) when neither has any."""
    if a.values is None and b.values is None:
        return None, []
    names = list(a.value_names)
    names += [n for n in b.value_names if n not in names]
    k = len(names)
    out = np.zeros((len(a.spans) + len(b.spans), 2 * k), np.int64)
    for rec, rows in ((a, slice(0, len(a.spans))), (b, slice(len(a.spans), None))):
        for j, n in enumerate(names):
            own, slf = rec.value(n), rec.value(n, True)
            if own is not None:
                out[rows, j] = own
                out[rows, k + j] = slf
    return out, names


def _raw_recording(raw, base_ns=0, with_stack=False, self_ns=None) -> "_Recording":
    """A recording made of tensorplay's raw event tuples (the page's
    ``EventList(raw=...)`` and ``FunctionEvent(event)``): ``(name, kind,
    start_ns, end_ns, tid, shapes, dtypes, site, gpu_ms, out_bytes, stack,
    kernel_count, flops[, slot_id])``, the first five required.  Nesting and
    self times are tensorplay's rule (per tid, by start: a span lies in the
    one before it that has not ended by its start; self time is the
    duration less the durations of the spans directly inside it), which on
    properly nested spans is the core's; self_ns, when given, overrides the
    self time of each span (FunctionEvent(event, self_ns=...)).  Spans with
    end < start are a ValueError."""
    items = []
    for j, ev in enumerate(raw):
        try:
            name, kind, start, end, tid = ev[0], ev[1], int(ev[2]), int(ev[3]), ev[4]
        except (TypeError, IndexError, ValueError) as e:
            raise ValueError(f"event {j}: a raw event is (name, kind, start_ns, end_ns, tid, "
                             f"...), not {ev!r}") from e
        if end < start:
            raise ValueError(f"event {j} ({name!r}) ends before it starts")
        items.append((start, -end, j, str(name), kind, end, tid, ev))
    items.sort(key=lambda t: (t[0], t[1], t[2]))
    n = len(items)
    spans = np.zeros(n, dtype=_SPAN_DTYPE)
    names: list = []
    nindex: dict = {}
    threads: list = []
    tindex: dict = {}
    payloads: dict = {}
    open_by_tid: dict = {}
    for i, (start, _e, j, name, kind, end, tid, ev) in enumerate(items):
        r = nindex.setdefault(name, len(nindex))
        if r == len(names):
            names.append(name)
        key = tid if isinstance(tid, int) else hash(tid)
        t = tindex.setdefault(key, len(tindex))
        if t == len(threads):
            threads.append((key, ""))
        stack = open_by_tid.setdefault(key, [])
        while stack and items[stack[-1]][5] <= start:
            stack.pop()
        parent = stack[-1] if stack and end <= items[stack[-1]][5] else -1
        spans[i] = (start, end, end - start, parent, r, t, len(stack) if parent >= 0 else 0,
                    0, j)
        if parent >= 0:
            spans["self"][parent] -= end - start
        stack.append(i)
        p = {"kind": kind, "raw_index": j}
        for k, field in ((5, "shapes"), (6, "dtypes"), (7, "site"), (8, "gpu_ms"),
                         (9, "out_bytes"), (10, "stack"), (11, "kernel_count"), (12, "flops"),
                         (13, "slot_id")):
            if len(ev) > k and ev[k] is not None:
                p[field] = ev[k]
        if p.get("stack") is not None:
            p["stack"] = list(p["stack"])
        payloads[i] = p
    if self_ns is not None and n:
        spans["self"][:] = self_ns
    opts = {"with_stack": bool(with_stack), "with_flops": True, "raw": True}
    rec = _Recording(spans, names or [""], threads, payloads, int(base_ns),
                     int(spans["end"].max()) if n else int(base_ns), opts)
    return rec


def _plain_float(x) -> float:
    return float(x)


class FunctionEvent:
    """One span (the page's "read-only object view over one collected event
    tuple"): tensorplay's fields -- ``name``, ``kind``, ``start_ns``,
    ``end_ns``, ``tid``, ``shapes``, ``dtypes``, ``site``, ``gpu_ms``,
    ``out_bytes``, ``stack``, ``kernel_count``, ``flops``, ``slot_id``,
    ``cpu_interval``, ``self_ns``, ``self_cuda_us``, ``device_us``,
    ``output_bytes``, ``nested_output_bytes``, ``cpu_children``,
    ``cpu_parent`` -- and torch's names for them (``key``, ``id``,
    ``thread``, ``input_shapes``, ``time_range``, the ``*_time_total``
    properties, in µs).  Device time (activities=[CUDA]: the kernels,
    copies and sets the span launched, joined by correlation id):
    ``self_device_time_total`` (its own launches), ``device_time_total``
    (with the spans inside it), torch's ``cuda_*`` names, ``gpu_ms``,
    ``kernel_count``, ``self_cuda_us``, ``device_us``; without device
    activity they read as none (``gpu_ms`` -1.0, the others 0).
    ``out_bytes`` is -1 (not recorded).  Memory, with
    ``profile(profile_memory=True)``: torch's ``cpu_memory_usage`` and
    ``self_cpu_memory_usage`` (bytes allocated minus freed by the span's
    own thread), and spanscope's ``peak_cpu_memory_usage``,
    ``cpu_memory_allocated``, ``cpu_memory_freed`` and ``values``.
    ``name`` is torch's: "ProfilerStep*" for a step (recorded only with
    ``record_steps=True``), whose own name ("ProfilerStep#N", the trace's)
    is ``trace_name``.

    ``FunctionEvent(event, self_ns=0, self_cuda_us=0.0, children=(),
    device_us=None)`` makes one from a raw event tuple as the page has it
    (``(name, kind, start_ns, end_ns, tid, shapes, dtypes, site, gpu_ms,
    out_bytes, stack, kernel_count, flops[, slot_id])``); a profile's events
    are views over its recording."""

    __slots__ = ("_rec", "_i", "_list", "_kids", "_self_cuda_us", "_device_us")

    def __init__(self, event, self_ns=0, self_cuda_us=0.0, children=(), device_us=None):
        self._rec = _raw_recording([event], self_ns=int(self_ns))
        self._i = 0
        self._list = None
        self._kids = list(children)
        self._self_cuda_us = float(self_cuda_us)
        self._device_us = device_us

    @classmethod
    def _view(cls, rec: "_Recording", i: int, owner: "EventList") -> "FunctionEvent":
        e = cls.__new__(cls)
        e._rec, e._i, e._list, e._kids = rec, i, owner, None
        e._self_cuda_us = e._device_us = None  # the recording's (_device_span_ns)
        return e

    def _dev(self, k: int) -> int:
        """The recording's device value k for this span (0 own ns, 1 total
        ns, 2 kernels launched)."""
        return int(_device_span_ns(self._rec)[k][self._i])

    def _field(self, f):
        return int(self._rec.spans[f][self._i])

    def _payload(self, key, default=None):
        p = self._rec.payloads.get(self._i)
        v = p.get(key) if p else None
        return default if v is None else v

    id = property(lambda self: self._i)
    trace_name = property(lambda self: self._rec.names[self._field("region")])
    name = property(lambda self: _group_name(self.trace_name))
    key = name
    kind = property(lambda self: self._payload("kind", "u"))
    count = 1
    is_async = False
    is_remote = False
    is_legacy = False
    node_id = -1
    overload_name = ""
    use_device = None
    device_type = DeviceType.CPU
    scope = property(lambda self: 1 if self.kind == "b" else 0)
    device_memory_usage = self_device_memory_usage = 0

    def _value(self, name: str, self_value: bool = False) -> int:
        col = self._rec.value(name, self_value)
        return int(col[self._i]) if col is not None else 0

    @property
    def cpu_memory_usage(self) -> int:
        """Bytes this span's thread allocated minus bytes it freed while the
        span was open, its children's included (torch's meaning: the net
        allocation, negative when the span freed more than it allocated);
        0 unless the profile had profile_memory=True.  Attributed by
        thread: another thread's allocations never count here."""
        return self._value("alloc_bytes") - self._value("free_bytes")

    @property
    def self_cpu_memory_usage(self) -> int:
        """cpu_memory_usage less its direct children's (torch's)."""
        return self._value("alloc_bytes", True) - self._value("free_bytes", True)

    @property
    def peak_cpu_memory_usage(self) -> int:
        """spanscope's: the highest the thread's live bytes rose above their
        level at this span's begin while it was open (children included),
        in bytes; 0 without profile_memory.  >= cpu_memory_usage."""
        return self._value("peak_bytes")

    @property
    def cpu_memory_allocated(self) -> int:
        """spanscope's: bytes allocated on this span's thread while it was
        open (children included), frees not subtracted."""
        return self._value("alloc_bytes")

    @property
    def cpu_memory_freed(self) -> int:
        """spanscope's: bytes freed on this span's thread while it was open
        (children included)."""
        return self._value("free_bytes")

    @property
    def values(self) -> dict:
        """spanscope's: every value the session read for this span, {name:
        (own, self)} (memory: alloc_bytes, free_bytes, allocs, frees,
        peak_bytes); {} when none."""
        return {n: (self._value(n), self._value(n, True)) for n in self._rec.value_names}
    thread_index = property(lambda self: self._field("thread"))
    thread = property(lambda self: self._rec.threads[self._field("thread")][0])
    tid = thread
    thread_name = property(lambda self: self._rec.threads[self._field("thread")][1])
    start_ns = property(lambda self: self._field("start"))
    end_ns = property(lambda self: self._field("end"))
    self_ns = property(lambda self: self._field("self"))
    depth = property(lambda self: self._field("depth"))
    input_shapes = property(lambda self: self._payload("shapes"))
    shapes = input_shapes
    dtypes = property(lambda self: self._payload("dtypes"))
    input_dtypes = dtypes
    stack = property(lambda self: self._rec.stack_of(self._i))
    module = property(lambda self: self._payload("module"))
    args = property(lambda self: self._payload("args"))
    @property
    def gpu_ms(self) -> float:
        """Device time of the work this span launched itself, ms; -1.0:
        none (tensorplay's gpu_ms)."""
        g = self._payload("gpu_ms")
        if g is not None or self._list is None or (self._rec.device is None and
                                                    self._rec.gpu_pairs is None):
            return float(g if g is not None else -1.0)
        own = self._dev(0)
        return own / 1e6 if own > 0 else -1.0

    #: bytes of this span's outputs, -1: not recorded (tensorplay's out_bytes)
    out_bytes = property(lambda self: int(self._payload("out_bytes", -1)))

    @property
    def kernel_count(self) -> int:
        """Kernels this span launched itself (tensorplay's kernel_count)."""
        k = self._payload("kernel_count")
        if k is not None or self._list is None:
            return int(k or 0)
        return self._dev(2)

    @property
    def self_cuda_us(self) -> float:
        """Device time of the work this span launched itself, µs."""
        return self._self_cuda_us if self._list is None else self._dev(0) / 1e3

    @property
    def device_us(self) -> float:
        """Device time of the work launched inside this span (by it and by
        every span inside it), µs; 0.0 without device activity; None only
        for a FunctionEvent made with device_us=None."""
        return self._device_us if self._list is None else self._dev(1) / 1e3

    @property
    def slot_id(self) -> int:
        """The event's index in its recording (tensorplay's slot, what
        device records name their operation by)."""
        return int(self._payload("slot_id", self._i))

    @property
    def site(self):
        """Call site "file:line": recorded (raw events), else the first
        frame of the stack (with_stack), else None."""
        s = self._payload("site")
        if s is not None:
            return s
        p = self._rec.payloads.get(self._i)
        st = p.get("stack") if p else None
        return st[0].rsplit(" (", 1)[0] if st else None

    @property
    def output_bytes(self) -> int:
        """Bytes this span's outputs allocated, 0 when none were recorded."""
        return max(self.out_bytes, 0)

    @property
    def nested_output_bytes(self) -> int:
        """output_bytes of this span and every span inside it."""
        return self.output_bytes + sum(c.nested_output_bytes for c in self.cpu_children)

    @property
    def flops(self) -> int:
        """Declared FLOPs; 0 unless the profile had with_flops (torch)."""
        if not self._rec.options.get("with_flops"):
            return 0
        return self._payload("flops", 0) or 0

    @property
    def is_python_function(self) -> bool:
        """A Python function the recursive tracer recorded (torch's
        python_function events); record_function and regions are not."""
        return self._field("region") in self._rec.python_ids

    @property
    def is_user_annotation(self) -> bool:
        return not self.is_python_function

    @property
    def cpu_interval(self) -> Interval:
        """start and end in µs of the clock (tensorplay's)."""
        return Interval(self.start_ns / 1e3, self.end_ns / 1e3)

    @property
    def time_range(self) -> Interval:
        """start and end in µs from the recording's start (torch's)."""
        b = self._rec.base_ns
        return Interval((self.start_ns - b) / 1e3, (self.end_ns - b) / 1e3)

    @property
    def cpu_time_total(self) -> float:
        return (self.end_ns - self.start_ns) / 1e3

    @property
    def cpu_time(self) -> float:
        """Average per call: one call, so its total (torch's cpu_time)."""
        return self.cpu_time_total

    @property
    def self_cpu_time_total(self) -> float:
        return self.self_ns / 1e3

    @property
    def cuda_time_total(self) -> float:
        """torch's (deprecated) name of device_time_total, µs.  A
        FunctionEvent made from a raw tuple: its own gpu_ms * 1000 (0.0
        for none)."""
        if self._list is not None:
            return self._dev(1) / 1e3
        return max(self.gpu_ms, 0.0) * 1000.0

    @property
    def self_cuda_time_total(self) -> float:
        """Device time (µs) of the kernels, copies and sets this span
        launched itself, not those of the spans inside it (torch's
        self_device_time_total: device_time_total less its children's)."""
        return self.self_cuda_us

    self_device_time_total = self_cuda_time_total

    @property
    def device_time_total(self) -> float:
        """Device time (µs) of the kernels, copies and sets launched by
        this span and by every span inside it (torch's device_time_total;
        cuda_time_total is its old name).  0.0 without device activity."""
        if self._list is not None:
            return self._dev(1) / 1e3
        return self._device_us if self._device_us is not None else self.cuda_time_total

    device_time = device_time_total

    @property
    def cpu_parent(self):
        if self._list is None:
            return None
        p = self._field("parent")
        return self._list._event(p) if p >= 0 else None

    @property
    def cpu_children(self) -> list:
        if self._kids is not None:
            return list(self._kids)
        return [self._list._event(int(j)) for j in self._list._children(self._i)]

    def __repr__(self):
        return (f"<FunctionEvent id={self._i} name={self.name!r} thread={self.thread} "
                f"cpu_time_total={self.cpu_time_total:.3f}us "
                f"self_cpu_time_total={self.self_cpu_time_total:.3f}us>")


class FunctionEventAvg:
    """Statistics of one group of spans (key_averages), as the page has it:
    ``FunctionEventAvg(name, kind, count, avg_ns, min_ns, max_ns, shapes,
    self_ns=0, self_pct=0.0, cuda_us=0.0, kernel_count=0, self_cuda_us=0.0,
    stack=None, flops=0)``, plus tensorplay's ``output_bytes``,
    ``nested_output_bytes``, ``use_device`` and spanscope's keyword-only
    ``total_ns`` (the exact total; default avg_ns * count), ``module``,
    ``cpu_parent``, ``overload_name``, ``is_python_function``.

    Fields in ns (``avg_ns``, ``min_ns``, ``max_ns``, ``self_ns``) and their
    µs properties (``avg_us``, ``min_us``, ``max_us``, ``self_us``,
    ``total_us``), ``self_pct`` (tensorplay's: self time over the total of
    every group's total time, in %), and torch's names (``key``,
    ``input_shapes``, ``cpu_time``, ``cpu_time_total``,
    ``self_cpu_time_total``, ``min_cpu_time``, ``max_cpu_time``,
    ``self_cpu_percent`` -- of the self time total, ``cpu_percent``).
    ``cpu_parent`` is the parent of the group's first span, as torch's."""

    def __init__(self, name, kind, count, avg_ns, min_ns, max_ns, shapes, self_ns=0,
                 self_pct=0.0, cuda_us=0.0, kernel_count=0, self_cuda_us=0.0, stack=None,
                 flops=0, output_bytes=0, nested_output_bytes=0, use_device=None, *,
                 total_ns=None, module=None, cpu_parent=None, overload_name="",
                 is_python_function=False, self_cpu_percent=0.0, cpu_percent=0.0):
        self.name = self.key = name
        self.kind = kind
        self.count = int(count)
        self.avg_ns = avg_ns
        self.min_ns = min_ns
        self.max_ns = max_ns
        self.input_shapes = shapes
        self.self_ns = self_ns
        self.self_pct = float(self_pct)
        self.cuda_us = float(cuda_us)
        self.kernel_count = int(kernel_count)
        self.self_cuda_us = float(self_cuda_us)
        self.stack = stack
        self.flops = flops
        self.output_bytes = output_bytes
        self.nested_output_bytes = nested_output_bytes
        self.use_device = use_device
        self.total_ns = avg_ns * self.count if total_ns is None else total_ns
        self.module = module
        self.cpu_parent = cpu_parent
        self.overload_name = overload_name
        self.is_python_function = bool(is_python_function)
        self.self_cpu_percent = float(self_cpu_percent)
        self.cpu_percent = float(cpu_percent)

    node_id = -1
    is_async = False
    is_remote = False
    is_legacy = False
    device_type = DeviceType.CPU
    #: torch's: the group's cpu_memory_usage (bytes allocated minus freed,
    #: children included) summed over its spans, and its self value; spanscope's
    #: peak_cpu_memory_usage is the highest of the spans' peaks.  0 without
    #: profile_memory (set by key_averages).
    cpu_memory_usage = self_cpu_memory_usage = peak_cpu_memory_usage = 0
    device_memory_usage = self_device_memory_usage = 0
    avg_us = property(lambda self: self.avg_ns / 1e3)
    min_us = property(lambda self: self.min_ns / 1e3)
    max_us = property(lambda self: self.max_ns / 1e3)
    self_us = property(lambda self: self.self_ns / 1e3)
    total_us = property(lambda self: self.total_ns / 1e3)
    cpu_time_total = total_us
    self_cpu_time_total = self_us
    min_cpu_time = min_us
    max_cpu_time = max_us
    cuda_time_total = device_time_total = property(lambda self: self.cuda_us)
    self_cuda_time_total = self_device_time_total = property(lambda self: self.self_cuda_us)

    @property
    def device_time(self) -> float:
        """Device time per call, µs."""
        return self.cuda_us / self.count if self.count else 0.0

    @property
    def cpu_time(self) -> float:
        """Average time per call, µs."""
        return self.total_us / self.count if self.count else 0.0

    @property
    def is_user_annotation(self) -> bool:
        return not self.is_python_function

    def __repr__(self):
        return (f"<FunctionEventAvg key={self.key!r} count={self.count} "
                f"cpu_time_total={self.cpu_time_total:.3f}us "
                f"self_cpu_time_total={self.self_cpu_time_total:.3f}us>")


#: sort keys: torch sorts by the attribute of that name (cuda/xpu/
#: privateuse1 read as device), descending; tensorplay's spellings too.
_SORT_ATTRS = ("self_cpu_time_total", "cpu_time_total", "cpu_time", "count", "flops",
               "self_device_time_total", "device_time_total", "device_time",
               "cpu_memory_usage", "self_cpu_memory_usage", "device_memory_usage",
               "self_device_memory_usage", "peak_cpu_memory_usage")
_SORT_ALIASES = {"calls": "count", "total_flops": "flops",
                 "self_cpu_time": "self_cpu_time_total",
                 "self_device_time": "self_device_time_total"}


def _sort_attr(sort_by: str) -> str:
    """The attribute sort_by sorts on; ValueError naming the keys."""
    key = str(sort_by)
    for dev in ("cuda", "xpu", "privateuse1"):
        key = key.replace(dev, "device")
    key = _SORT_ALIASES.get(key, key)
    if key not in _SORT_ATTRS:
        choices = sorted(set(_SORT_ATTRS) | set(_SORT_ALIASES) | {"name"})
        raise ValueError(f"unsupported sort_by {sort_by!r}; choose one of {', '.join(choices)} "
                         "(cuda, xpu and privateuse1 read as device)")
    return key


def _sorted(rows: list, sort_by: str | None) -> list:
    """rows sorted as the tables sort them: descending by the attribute
    (stable); "name" ascending (tensorplay)."""
    if sort_by is None:
        return list(rows)
    if sort_by == "name":
        return sorted(rows, key=lambda e: e.key)
    attr = _sort_attr(sort_by)
    return sorted(rows, key=lambda e: getattr(e, attr), reverse=True)


def _auto_scale_flops(flops: float) -> tuple[float, str]:
    """The scale and unit of the smallest count (torch's, tensorplay's)."""
    units = ("FLOPs", "KFLOPs", "MFLOPs", "GFLOPs", "TFLOPs", "PFLOPs")
    log = max(0.0, min(math.log10(flops) / 3, float(len(units) - 1)))
    return 10.0 ** (math.floor(log) * -3.0), units[int(log)]


def _trim_path(path: str, width: int) -> str:
    """Keep a source location's end, "..." in front."""
    if len(path) > width:
        path = path[len(path) - width:]
        if len(path) > 3:
            path = "..." + path[3:]
    return path


def _shapes_text(shapes) -> str:
    """Input shapes as the tables print them: a list of lists ("[[3, 4],
    []]", torch's, and tensorplay's for recorded lists)."""
    return str([list(s) for s in shapes]) if shapes else ""


def _fmt_memory(nbytes: int) -> str:
    """A byte count in the unit its size asks for: torch's _format_memory
    (torch/autograd/profiler_util.py, "B", "KB", "MB", "GB", two decimals,
    negative values as they are), which tensorplay's is too."""
    for unit, size in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if abs(nbytes) >= size:
            return f"{nbytes / size:.2f} {unit}"
    return f"{nbytes} B"


def _build_table(rows: list, sort_by=None, row_limit=100, header=None,
                 max_src_column_width=75, max_name_column_width=55,
                 max_shapes_column_width=80, top_level_events_only=False, with_flops=False,
                 time_unit=None, profile_memory=False) -> str:
    """tensorplay's table (profiler_util._build_table): Name (left-aligned),
    [Overload Name], Self CPU %, Self CPU, CPU total %, CPU total, CPU time
    avg, [Self CUDA, Self CUDA %, CUDA total, CUDA time avg: any device
    time], [CPU Mem, Self CPU Mem: profile_memory, torch's columns and
    _format_memory], [Output Mem, Self Output Mem: any output bytes], # of Calls,
    [Input Shapes], [Total xFLOPs with with_flops], [Source Location],
    [Module: spanscope's, group_by_module], each column at least its title
    wide plus two; then "Self CPU time total: ...".  "" for no rows.  The
    percentages are of the self time of the rows shown; top_level_events_only
    drops rows with a parent before row_limit cuts."""
    if time_unit is not None and time_unit not in _TIME_UNITS:
        raise ValueError(f"unsupported time_unit: {time_unit!r} (one of 's', 'ms', 'us' or None)")
    rows = _sorted(rows, sort_by)
    rows = [r for r in rows if not (top_level_events_only and r.cpu_parent is not None)]
    if row_limit is not None and row_limit >= 0:
        rows = rows[:row_limit]
    if not rows:
        return ""
    has_overload = any(getattr(r, "overload_name", "") for r in rows)
    has_device = any(r.self_device_time_total > 0 for r in rows)
    has_memory = any(getattr(r, "output_bytes", 0) > 0 for r in rows)
    has_shapes = any(getattr(r, "input_shapes", None) for r in rows)
    stacks = [r.stack for r in rows if getattr(r, "stack", None)]
    has_module = any(getattr(r, "module", None) for r in rows)
    flops = [r.flops for r in rows if (getattr(r, "flops", 0) or 0) > 0]

    name_w = max(len(terminal_text(r.key)) for r in rows) + 4
    if max_name_column_width is not None:
        name_w = min(name_w, max_name_column_width)
    cols = [("Name", name_w, "<")]
    if has_overload:
        cols.append(("Overload Name", name_w, "<"))
    cols += [(h, 12, ">") for h in ("Self CPU %", "Self CPU", "CPU total %", "CPU total",
                                    "CPU time avg")]
    if has_device:
        cols += [(h, 12, ">") for h in ("Self CUDA", "Self CUDA %", "CUDA total",
                                        "CUDA time avg")]
    if profile_memory:
        cols += [("CPU Mem", 12, ">"), ("Self CPU Mem", 12, ">")]
    if has_memory:
        cols += [("Output Mem", 12, ">"), ("Self Output Mem", 12, ">")]
    cols.append(("# of Calls", 12, ">"))
    shape_w = 0
    if has_shapes:
        shape_w = max(len(_shapes_text(getattr(r, "input_shapes", None))) for r in rows) + 4
        if max_shapes_column_width is not None:
            shape_w = min(shape_w, max_shapes_column_width)
        cols.append(("Input Shapes", shape_w, "<"))
    scale = None
    if with_flops and flops:
        scale, unit = _auto_scale_flops(min(flops))
        cols.append((f"Total {unit}", 12, ">"))
    src_w = 0
    if stacks:
        src_w = max(len(f) for st in stacks for f in st) + 4
        if max_src_column_width is not None:
            src_w = min(src_w, max_src_column_width)
        cols.append(("Source Location", src_w, "<"))
    if has_module:
        cols.append(("Module", min(max(len(r.module or "") for r in rows) + 4, 60), "<"))
    # a title wider than its column widens it (tensorplay's rule)
    cols = [(t, max(w, len(t) + 2), a) for t, w, a in cols]
    fmt = "".join("{:" + a + str(w) + "}  " for _, w, a in cols).format
    sep = "".join("-" * w + "  " for _, w, _ in cols)

    self_total = sum(r.self_cpu_time_total for r in rows)
    dev_total = sum(r.self_device_time_total for r in rows) if has_device else 0.0

    def share(us, total):
        if not total:
            return "NaN" if not us else "inf%"
        return f"{us * 100.0 / total:.2f}%"

    out = []
    if header is not None:
        out += ["=" * len(sep), str(header)]
    if top_level_events_only:
        out += ["=" * len(sep), "Nested spans are omitted; only outermost operations are shown."]
    out += [sep, fmt(*[c for c, _, _ in cols]), sep]
    for r in rows:
        # names come from files anyone wrote: cleaned of what a terminal
        # acts on (the C tables' rule), then cut as tensorplay cuts them
        name = terminal_text(r.key)
        if max_name_column_width is not None and len(name) >= max_name_column_width:
            name = name[:max_name_column_width - 3] + "..."
        cells = [name]
        if has_overload:
            cells.append(terminal_text(r.overload_name))
        cells += [share(r.self_cpu_time_total, self_total),
                  _fmt_time_in(r.self_cpu_time_total, time_unit),
                  "0.00%" if r.is_async else share(r.cpu_time_total, self_total),
                  _fmt_time_in(r.cpu_time_total, time_unit),
                  _fmt_time_in(r.cpu_time, time_unit)]
        if has_device:
            cells += [_fmt_time_in(r.self_device_time_total, time_unit),
                      share(r.self_device_time_total, dev_total),
                      _fmt_time_in(r.device_time_total, time_unit),
                      _fmt_time_in(r.device_time, time_unit)]
        if profile_memory:
            cells += [_fmt_memory(r.cpu_memory_usage), _fmt_memory(r.self_cpu_memory_usage)]
        if has_memory:
            cells += [_fmt_memory(r.nested_output_bytes), _fmt_memory(r.output_bytes)]
        cells.append(r.count)
        if has_shapes:
            cells.append(_shapes_text(r.input_shapes)[:shape_w])
        if scale is not None:
            cells.append(f"{r.flops * scale:8.3f}" if r.flops > 0 else "--")
        st = list(r.stack or ()) if stacks else []
        if stacks:
            cells.append(_trim_path(terminal_text(st[0]), src_w) if st else "")
        if has_module:
            cells.append(terminal_text(r.module or "", 60))
        out.append(fmt(*cells))
        if stacks:  # the other frames on rows of their own (tensorplay's)
            at = [c for c, _, _ in cols].index("Source Location")
            for frame in st[1:]:
                blank = [""] * len(cols)
                blank[at] = _trim_path(terminal_text(frame), src_w)
                out.append(fmt(*blank))
    out += [sep, f"Self CPU time total: {_fmt_time_in(self_total, time_unit)}"]
    if has_device:
        out.append(f"Self CUDA time total: {_fmt_time_in(dev_total, time_unit)}")
    return "\n".join(out) + "\n"


@dataclasses.dataclass(frozen=True)
class DeviceKernel:
    """One piece of work the device ran (device_kernels().activities): its
    name (a kernel's mangled name, kineto's "Memcpy HtoD (Pinned ->
    Device)", "Memset (Device)"), kind ("k" kernel, "m" copy, "s" set),
    device and stream, start and end (CLOCK_MONOTONIC ns, the spans'
    timeline), duration in µs, CUPTI's correlation id (shared with the
    cudaLaunchKernel/cudaMemcpy call that launched it), bytes (copies and
    sets), grid and block (kernels), and the span that launched it
    (a FunctionEvent, None when none: launched outside every span)."""
    name: str
    kind: str
    device: int
    stream: int
    start_ns: int
    end_ns: int
    duration_us: float
    correlation_id: int
    bytes: int
    grid: tuple
    block: tuple
    span: Any

    @property
    def span_name(self):
        """The launching span's name, None when none."""
        return self.span.name if self.span is not None else None


class _DeviceKernelTable:
    """EventList.device_kernels(): one row (a FunctionEventAvg: name, kind,
    count, total/avg/min/max time) per kernel, copy or set the device ran,
    by (name, kind), most time first; ``activities``: each of them on its
    own (DeviceKernel: device, stream, start, duration, the launching
    span), in start order.  table() is tensorplay's layout (no rows: the
    header and the total line)."""

    def __init__(self, device=None, events=None, sort_by=None):
        agg: dict = {}
        self.activities = []
        if device is not None and len(device):
            c = device.cols
            sel = np.nonzero(device.on_device & (c["ends_ns"] > c["starts_ns"]))[0]
            sel = sel[np.argsort(c["starts_ns"][sel], kind="stable")]
            for i in sel.tolist():
                name, kind = device.name(i), _DEV_LETTER[int(c["kinds"][i])]
                d = int(c["ends_ns"][i] - c["starts_ns"][i])
                row = agg.setdefault((name, kind), [0, 0, None, None])
                row[0] += 1
                row[1] += d
                row[2] = d if row[2] is None else min(row[2], d)
                row[3] = d if row[3] is None else max(row[3], d)
                sp = int(device.span[i])
                self.activities.append(DeviceKernel(
                    name, kind, int(c["devices"][i]), int(c["streams"][i]),
                    int(c["starts_ns"][i]), int(c["ends_ns"][i]), d / 1e3,
                    int(c["correlations"][i]), int(c["bytes"][i]),
                    (int(c["grid_x"][i]), int(c["grid_y"][i]), int(c["grid_z"][i])),
                    (int(c["block_x"][i]), int(c["block_y"][i]), int(c["block_z"][i])),
                    events[sp] if events is not None and 0 <= sp < len(events) else None))
        self.rows = [FunctionEventAvg(n, k, c, t // c, lo, hi, None, 0, 0.0, t / 1e3, c, t / 1e3,
                                      total_ns=t)
                     for (n, k), (c, t, lo, hi) in sorted(agg.items(), key=lambda x: -x[1][1])]
        self.total_cuda_us = sum(r.cuda_us for r in self.rows)
        if sort_by is not None:
            self.sort(sort_by)

    def __iter__(self):
        return iter(self.rows)

    def __len__(self):
        return len(self.rows)

    def sort(self, sort_by):
        self.rows.sort(key=lambda r: getattr(r, sort_by, 0), reverse=True)

    def table(self, sort_by=None, row_limit=-1, **_options) -> str:
        if sort_by is not None:
            self.sort(sort_by)
        rows = self.rows if row_limit is None or row_limit < 0 else self.rows[:row_limit]
        head = (f"{'Name':<40}{'Kind':>5}{'Calls':>7}{'Total us':>12}{'Total %':>8}"
                f"{'Avg us':>11}{'Min us':>11}{'Max us':>11}")
        lines = [head, "-" * len(head)]
        for r in rows:
            pct = r.total_us / self.total_cuda_us * 100.0 if self.total_cuda_us else 0.0
            lines.append(f"{terminal_text(r.name)[:40]:<40}{r.kind:>5}{r.count:>7}"
                         f"{r.total_us:>12.2f}{pct:>7.1f}%{r.avg_us:>11.2f}{r.min_us:>11.2f}"
                         f"{r.max_us:>11.2f}")
        lines += ["-" * len(head), f"{'Total':<40}{'':>5}{len(self.rows):>7}"
                                   f"{self.total_cuda_us:>12.2f}"]
        return "\n".join(lines)


class EventList(list):
    """A list of FunctionEvent (a recording's spans) or of FunctionEventAvg
    (key_averages), with the analysis and export helpers.

    ``EventList(raw=(), base_ns=0, gpu_activities=None, mem_events=None,
    samples=None, with_stack=False)`` (the page's; tensorplay's use_device=None
    after them) makes one from raw event
    tuples (see FunctionEvent): its items are then FunctionEvents, in start
    order -- torch's list, where tensorplay's holds the tuples themselves;
    ``function_events`` (and calling the list) gives the events in both.

    ``mem_events``: tensorplay's allocator records, ``(ts_ns, ptr, bytes,
    is_alloc, is_cuda, device, stream, tid)`` tuples (the first four
    required; the others default to False, 0, 0, 0), kept as
    ``mem_events`` and written by export_chrome_trace as tensorplay writes
    them: one ``"[memory]"`` slice each (cat ``user_annotation``, 1 ns
    long) with args ``Bytes``, ``Allocation Type`` ("alloc"/"free") and
    ``Device`` ("cpu" or "cuda:N"), on the lane of its tid.  A malformed
    record is a ValueError.

    ``samples``: tensorplay's stack samples, ``(ts_ns, tid, stack)`` tuples,
    stack a list of ``"file:line (function)"`` frames, innermost first
    (what tensorplay's sampler takes, and what ``samples`` holds for a
    profile made with ``with_samples=True``).  Each belongs to the
    innermost span open on its tid at its time; it stands for one sampling
    period (``TP_PROFILER_SAMPLE_MS``, tensorplay's default 5 ms).  They
    reach export_chrome_trace (instant events, cat ``python_function``,
    ``args.stack``), export_stacks (folded stacks from the samples) and
    key_averages(group_by_stack_n=N) (the samples per span name and
    innermost N frames).  A malformed sample is a ValueError."""

    def __init__(self, raw=(), base_ns=0, gpu_activities=None, mem_events=None, samples=None,
                 with_stack=False, use_device=None):
        super().__init__()
        self.use_device = use_device
        self.base_ns = int(base_ns)
        self.gpu_activities = list(gpu_activities) if gpu_activities is not None else []
        self.mem_events = _mem_events(mem_events)
        self.samples = _sample_tuples(samples)
        #: the samples given (None: none given), made into the recording's
        #: Samples when the list adopts one
        self._samples_in = self.samples if samples is not None else None
        self.with_stack = bool(with_stack)
        self._rec = None
        self._spans: list = []
        self._kids = None
        raw = list(raw)
        if raw:
            self._adopt(_raw_recording(raw, base_ns, with_stack))
            if self.gpu_activities:  # joined to the raw events by slot / correlation
                self._rec.device = _device_of_tuples(self.gpu_activities, self._rec)

    def _adopt(self, rec: "_Recording") -> None:
        if getattr(self, "_samples_in", None) is not None and rec.samples is None:
            rec.samples = _samples_of_records(self._samples_in, rec)
        self._rec = rec
        self._spans = [FunctionEvent._view(rec, i, self) for i in range(len(rec.spans))]
        self.extend(self._spans)

    @classmethod
    def _of_spans(cls, rec: "_Recording") -> "EventList":
        out = cls(base_ns=rec.base_ns, with_stack=bool(rec.options.get("with_stack")))
        out._adopt(rec)
        if rec.samples is not None:
            out.samples = _sample_records(rec.samples)
        return out

    @classmethod
    def _of_rows(cls, rows: list, rec) -> "EventList":
        out = cls()
        out.extend(rows)
        out._rec = rec
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
    def function_events(self) -> list:
        """The spans as FunctionEvent objects, in start order (tensorplay's
        EventList.function_events; calling the list gives the same)."""
        return list(self._spans)

    def __call__(self) -> list:
        return self.function_events

    def _device(self) -> "_DeviceData | None":
        """The device rows: the recording's (a profile with activities=[CUDA],
        or EventList(raw, gpu_activities=...)), else the gpu_activities
        tuples on their own (no spans to join); None when none."""
        if self._rec is not None and self._rec.device is not None:
            return self._rec.device
        if self.gpu_activities:
            return _device_of_tuples(self.gpu_activities, self._rec)
        return None

    @property
    def device_time_by_span(self) -> list:
        """For each span (in the list's order), the device time in µs of
        the kernels, copies and sets launched inside it, by it and by the
        spans inside it (its device_time_total); 0.0 for a span that
        launched none.  Joined by correlation id, never by time
        (tensorplay 1.1.0 answers 0 even with device work: its join on
        slot ids never matches; see docs/coming-from-tensorplay.md)."""
        if self._rec is None or not self._spans:
            return []
        return (_device_span_ns(self._rec)[1] / 1e3).tolist()

    def device_kernels(self, sort_by=None) -> _DeviceKernelTable:
        """What the device ran: one row per kernel, copy or set by (name,
        kind), with its calls and total/avg/min/max time, and each of them
        on its own in ``activities`` (device, stream, start, duration, the
        launching span); empty without device activity."""
        return _DeviceKernelTable(self._device(), self._spans or None, sort_by)

    def kineto_results(self) -> list:
        """The device rows as DeviceActivity objects (see
        profile.kineto_results), in start order."""
        return _kineto_results(self._device())

    @property
    def self_cpu_time_total(self) -> float:
        if self._rec is not None and self._spans:
            return float(self._rec.spans["self"].sum()) / 1e3
        return float(sum(e.self_cpu_time_total for e in self))

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0,
                     group_by_overload_name=False, include_python_functions=False,
                     with_flops=False, *, sort_by=None, group_by_input_shapes=None,
                     group_by_module=False) -> "EventList":
        """The spans grouped (see profile.key_averages); tensorplay's
        arguments, torch's group_by_input_shapes spelling taken too.
        with_flops counts FLOPs even when the profile did not ask for
        them."""
        if self._rec is None and not self and self._samples_in is not None and \
                group_by_stack_n:
            self._adopt(_raw_recording([], self.base_ns))
        if self._rec is None and not self:
            return EventList._of_rows([], None)
        samples_only = (self._rec is not None and self._rec.samples is not None
                        and group_by_stack_n)
        if self._rec is None or not (self._spans or samples_only):
            raise ValueError("key_averages needs a list of spans (profile.events())")
        if group_by_input_shapes is not None:
            group_by_input_shape = group_by_input_shapes
        return _key_averages(self._rec, group_by_input_shape, group_by_stack_n,
                             group_by_overload_name, include_python_functions, sort_by,
                             group_by_module, with_flops)

    def total_average(self) -> FunctionEventAvg:
        """One FunctionEventAvg "Total" (kind "o") over every group."""
        rows = self if self and isinstance(self[0], FunctionEventAvg) else \
            (self.key_averages(include_python_functions=True) if self._rec is not None else [])
        rows = list(rows)
        count = sum(r.count for r in rows)
        total = sum(r.total_ns for r in rows)
        out = FunctionEventAvg(
            "Total", "o", count, total // count if count else 0,
            min((r.min_ns for r in rows), default=0), max((r.max_ns for r in rows), default=0),
            None, sum(r.self_ns for r in rows), 100.0 if total else 0.0,
            sum(r.cuda_us for r in rows), sum(r.kernel_count for r in rows),
            sum(r.self_cuda_us for r in rows), flops=sum(r.flops for r in rows),
            total_ns=total)
        if any(r.cpu_memory_usage or r.self_cpu_memory_usage or r.peak_cpu_memory_usage
               for r in rows):  # torch's total_average adds the memory too
            out.cpu_memory_usage = sum(r.cpu_memory_usage for r in rows)
            out.self_cpu_memory_usage = sum(r.self_cpu_memory_usage for r in rows)
            out.peak_cpu_memory_usage = max(r.peak_cpu_memory_usage for r in rows)
        return out

    def table(self, sort_by=None, row_limit=100, header=None, max_src_column_width=75,
              max_name_column_width=55, max_shapes_column_width=80,
              top_level_events_only=False, time_unit=None) -> str:
        """The table (tensorplay's layout, _build_table), one row per item:
        a span each for profile.events(), a group each for key_averages().
        "" when empty."""
        rows = list(self)
        opts = self._rec.options if self._rec else {}
        return _build_table(rows, sort_by, row_limit, header, max_src_column_width,
                            max_name_column_width, max_shapes_column_width,
                            top_level_events_only, bool(opts.get("with_flops")), time_unit,
                            bool(opts.get("profile_memory")))

    def __str__(self):
        return self.table()

    def export_chrome_trace(self, path, torch_compat=False) -> None:
        """The spans as a Chrome trace (see profile.export_chrome_trace),
        with a "[memory]" slice per mem_events record (JSON traces only:
        a .pftrace with mem_events is a ValueError)."""
        if self._rec is None:
            if self:
                raise ValueError("export_chrome_trace needs a list of spans (profile.events())")
            self._adopt(_raw_recording([], self.base_ns))
        path = os.fspath(path)
        if self.mem_events and path.endswith((".pftrace", ".perfetto-trace", ".pb")):
            raise ValueError("mem_events are written to JSON traces (.json, .json.gz) only")
        _export_trace(self._rec, path, torch_compat)
        if self.mem_events:
            _add_memory_events(path, self.mem_events, self._rec.base_ns)

    def export_stacks(self, path, metric: str = "self_cpu_time_total") -> None:
        """Folded stacks for flame graphs (see profile.export_stacks): from
        the samples when the list has them, else from the spans' nesting."""
        if self._rec is None and self._samples_in is not None and not self:
            self._adopt(_raw_recording([], self.base_ns))
        if self._rec is None:
            raise ValueError("export_stacks needs a list of spans (profile.events())")
        _export_stacks(self._rec, os.fspath(path), metric)


def _mem_events(mem_events) -> list:
    """EventList(mem_events=...) checked: tensorplay's records (ts_ns, ptr,
    bytes, is_alloc, is_cuda, device, stream, tid) as 8-tuples, the missing
    trailing fields False, 0, 0, 0; ValueError naming a bad one."""
    out = []
    for j, m in enumerate(mem_events if mem_events is not None else ()):
        try:
            m = tuple(m)
            if not 4 <= len(m) <= 8:
                raise ValueError
            ts, ptr, nbytes = int(m[0]), int(m[1]), int(m[2])
            rest = m[4:] + (False, 0, 0, 0)[len(m) - 4:]
            out.append((ts, ptr, nbytes, bool(m[3]), bool(rest[0]), int(rest[1]),
                        int(rest[2]), rest[3]))
        except (TypeError, ValueError):
            raise ValueError(f"mem_events[{j}]: a memory record is (ts_ns, ptr, bytes, "
                             f"is_alloc[, is_cuda, device, stream, tid]), not {m!r}") from None
    return out


def _add_memory_events(path: str, mem_events: list, base_ns: int) -> None:
    """Adds tensorplay's "[memory]" slices for mem_events to the JSON trace
    at path (gzip when it ends in .gz), before its Record Window End."""
    import gzip
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        doc = json.load(f)
    pid = os.getpid()
    added = []
    for ts, _ptr, nbytes, is_alloc, is_cuda, device, _stream, tid in mem_events:
        added.append({"name": "[memory]", "cat": "user_annotation", "ph": "X",
                      "ts": (ts - base_ns) / 1e3, "dur": 0.001, "pid": pid,
                      "tid": tid if isinstance(tid, int) else hash(tid),
                      "args": {"Bytes": nbytes, "Allocation Type": "alloc" if is_alloc else "free",
                               "Device": f"cuda:{device}" if is_cuda else "cpu"}})
    evs = doc.get("traceEvents", [])
    at = len(evs)
    if evs and evs[-1].get("name") == "Record Window End":
        at -= 1
    doc["traceEvents"] = evs[:at] + added + evs[at:]

    def write(tmp) -> None:
        with opener(tmp, "wt", encoding="utf-8") as f:
            json.dump(doc, f, ensure_ascii=False, separators=(",", ":"))
    write_replacing(path, write)

# --------------------------------------------------------------------------
# Stack samples (with_samples=True, EventList(samples=...))
# --------------------------------------------------------------------------

#: tensorplay's sampling period (ms) in the environment
_SAMPLE_MS_ENV = "TP_PROFILER_SAMPLE_MS"
#: with_samples' rate without it: the sampler's default, per second of CPU
_SAMPLE_HZ_DEFAULT = 1000
#: the period of a tensorplay sample without it (tensorplay's default, ms)
_TP_SAMPLE_MS_DEFAULT = 5.0
#: a tensorplay frame, "file:line (function)"
_FRAME_TEXT = re.compile(r"^(.*):(\d+) \((.*)\)$", re.S)
#: a frame without a line, "where (function)"
_FRAME_NO_LINE = re.compile(r"^(.*) \((.*)\)$", re.S)


def _sample_ms():
    """TP_PROFILER_SAMPLE_MS as a number of ms, None when unset;
    ValueError for a value that is not a positive number."""
    raw = os.environ.get(_SAMPLE_MS_ENV, "").strip()
    if not raw:
        return None
    try:
        ms = float(raw)
    except ValueError:
        ms = math.nan
    if not (ms > 0 and math.isfinite(ms)):
        raise ValueError(f"{_SAMPLE_MS_ENV}={raw!r}: the sampling period must be a positive "
                         f"number of milliseconds")
    return ms


def _sample_hz() -> int:
    """The rate with_samples samples each thread's CPU time at: 1000 /
    TP_PROFILER_SAMPLE_MS when set (tensorplay's period in ms: 5 -> 200
    Hz), else 1000 Hz; within the sampler's 1..10000."""
    ms = _sample_ms()
    if ms is None:
        return _SAMPLE_HZ_DEFAULT
    return int(min(10000, max(1, round(1000.0 / ms))))


def _sample_tuples(samples) -> list:
    """EventList(samples=...) checked: (ts_ns, tid, stack) tuples, stack a
    list of str frames; ValueError naming a bad one."""
    out = []
    for j, x in enumerate(samples if samples is not None else ()):
        try:
            ts, tid, chain = x
            ts = int(ts)
            if isinstance(chain, (str, bytes)):
                raise TypeError
            chain = [str(f) if isinstance(f, str) else None for f in chain]
            if None in chain:
                raise TypeError
        except (TypeError, ValueError):
            raise ValueError(f"samples[{j}]: a sample is (ts_ns, tid, [\"file:line "
                             f"(function)\", ...]), not {x!r}") from None
        out.append((ts, tid, chain))
    return out


def _frame_of_text(text: str) -> tuple:
    """(function, file, line) of a tensorplay frame "file:line (function)";
    "where (function)" (a frame without a line: a file or a native
    module) has line 0; another text is a function of its own (file "")."""
    m = _FRAME_TEXT.match(text)
    if m:
        return m.group(3), m.group(1), int(m.group(2))
    m = _FRAME_NO_LINE.match(text)
    if m:
        return m.group(2), m.group(1), 0
    return text, "", 0


def _innermost(rec: "_Recording", thread: np.ndarray, ts: np.ndarray) -> np.ndarray:
    """Per (thread index, time): the index of the innermost span of rec open
    on that thread then (start <= t < end), -1 for none."""
    spans = rec.spans
    out = np.full(len(ts), -1, np.int64)
    parent = spans["parent"]
    for t in np.unique(thread[thread >= 0]).tolist():
        idx = np.nonzero(spans["thread"] == t)[0]
        if not len(idx):
            continue
        sel = np.nonzero(thread == t)[0]
        pos = np.searchsorted(spans["start"][idx], ts[sel], "right") - 1
        for k, p in zip(sel.tolist(), pos.tolist()):
            j = int(idx[p]) if p >= 0 else -1
            while j >= 0 and spans["end"][j] <= ts[k]:
                j = int(parent[j])
            out[k] = j
    return out


def _samples_of_records(records: list, rec: "_Recording") -> Samples:
    """tensorplay's sample tuples as the recording's Samples: frames and
    stacks interned, each sample given the region of the innermost span
    open on its tid at its time (rec.threads' keys are the tids), weight 1,
    the rate of one sample per TP_PROFILER_SAMPLE_MS (default 5 ms)."""
    n = len(records)
    frames: dict = {}
    stacks: dict = {}
    offsets = [0]
    stack_frames: list = []
    cols = {k: np.zeros(n, np.int64) for k in ("times_ns", "threads", "tids", "ranks",
                                              "regions", "call_ids", "stacks", "weights")}
    tindex = {t[0]: i for i, t in enumerate(rec.threads)}
    for i, (ts, tid, chain) in enumerate(records):
        key = tid if isinstance(tid, int) else hash(tid)
        fr = tuple(frames.setdefault(_frame_of_text(f), len(frames)) for f in chain)
        k = stacks.get(fr)
        if k is None:
            k = stacks[fr] = len(stacks)
            stack_frames.extend(fr)
            offsets.append(len(stack_frames))
        cols["times_ns"][i], cols["tids"][i], cols["stacks"][i] = ts, key, k
        cols["threads"][i] = tindex.get(key, -1)
    cols["weights"][:] = 1
    cols["call_ids"][:] = -1
    j = _innermost(rec, cols["threads"], cols["times_ns"])
    cols["regions"] = np.where(j >= 0, rec.spans["region"][np.maximum(j, 0)].astype(np.int64)
                               if len(rec.spans) else -1, -1)
    flist = list(frames)
    cols.update(stack_offsets=np.array(offsets, np.int64),
                stack_frames=np.array(stack_frames, np.int64),
                functions=[f[0] for f in flist], files=[f[1] for f in flist],
                modules=[""] * len(flist), lines=np.array([f[2] for f in flist], np.int64),
                kinds=np.ones(len(flist), np.int64), addresses=np.zeros(len(flist), np.int64))
    ms = _sample_ms() or _TP_SAMPLE_MS_DEFAULT
    return Samples(cols, rec.names, max(1, round(1000.0 / ms)))


def _frame_text(s: Samples, f: int) -> str:
    """Frame f of s as tensorplay writes a frame, "file:line (function)"; a
    frame without a line "file (function)", a native one "module
    (function)" -- the frames of the C library's Chrome traces."""
    fn, file, mod, line = s.functions[f] or "?", s.files[f], s.modules[f], int(s.lines[f])
    if file:
        return f"{file}:{line} ({fn})" if line > 0 else f"{file} ({fn})"
    return f"{mod} ({fn})" if mod else fn


def _sample_records(s: Samples) -> list:
    """s as tensorplay's sample tuples, (ts_ns, tid, stack), stack the
    frames innermost first as "file:line (function)"."""
    per_stack = [[_frame_text(s, f) for f in s.stack(k).tolist()]
                 for k in range(len(s.stack_offsets) - 1)]
    return [(t, tid, list(per_stack[k])) for t, tid, k in
            zip(s.times_ns.tolist(), s.tids.tolist(), s.stacks.tolist())]


#: the region of samples taken outside every span, in tables
_NO_SPAN = "[outside any span]"


def _sample_averages(rec: "_Recording", stack_n: int, sort_by) -> "EventList":
    """key_averages(group_by_stack_n=N) of a recording with samples: one row
    per span name and innermost N frames of the stacks sampled while that
    span was the innermost open one on its thread (its self samples):
    count = the samples (timer periods), self and total CPU time = what
    they stand for (periods / hz), stack = the N frames (innermost first,
    "file:line (function)"), self_cpu_percent = the share of all the
    samples' CPU time."""
    s = rec.samples
    groups = s.grouped(stack_n)
    period_ns = 1e9 / s.hz if s.hz else 0.0
    total = sum(groups.values())
    rows = []
    for (region, frames), periods in groups.items():
        ns = int(round(periods * period_ns))
        share = 100.0 * periods / total if total else 0.0
        row = FunctionEventAvg(
            region if region is not None else _NO_SPAN, "u", periods,
            int(round(period_ns)), int(round(period_ns)), int(round(period_ns)), None, ns,
            share, stack=tuple(_frame_text(s, f) for f in frames), total_ns=ns,
            self_cpu_percent=share, cpu_percent=share)
        row.samples = periods
        rows.append(row)
    rows.sort(key=lambda r: (-r.self_ns, r.name, r.stack))
    if sort_by is not None:
        rows = _sorted(rows, sort_by)
    return EventList._of_rows(rows, rec)


def _key_averages(rec: _Recording, by_shape=False, stack_n=0, by_overload=False,
                  include_python=False, sort_by=None, by_module=False,
                  with_flops=False) -> EventList:
    """key_averages on the columns (grouping: _Recording.group_keys):
    groups by name (and kind), rows by self time descending (tensorplay's
    order) unless sort_by.  by_overload: spanscope records no overload
    names, so it changes no group (torch without capture_overload_names)."""
    if not isinstance(stack_n, int) or isinstance(stack_n, bool) or stack_n < 0:
        raise ValueError(f"group_by_stack_n must be an int >= 0, not {stack_n!r}")
    if sort_by is not None and sort_by != "name":
        _sort_attr(sort_by)  # a bad key fails here, not at table()
    if stack_n and rec.samples is not None:
        return _sample_averages(rec, stack_n, sort_by)
    keys, descr = rec.group_keys(bool(by_shape), stack_n, bool(by_module), bool(include_python))
    n = len(descr)
    sel = keys >= 0
    k = keys[sel]
    dur = rec.durations[sel]
    count = np.bincount(k, minlength=n)
    total = np.bincount(k, weights=dur, minlength=n)
    selft = np.bincount(k, weights=rec.spans["self"][sel], minlength=n)
    mins = np.full(n, np.iinfo(np.int64).max, dtype=np.int64)
    maxs = np.zeros(n, dtype=np.int64)
    np.minimum.at(mins, k, dur)
    np.maximum.at(maxs, k, dur)
    flops = np.zeros(n, dtype=np.float64)
    if with_flops or rec.options.get("with_flops"):
        for i, p in rec.payloads.items():
            if p.get("flops") and keys[i] >= 0:
                flops[keys[i]] += p["flops"]
    out_bytes = np.zeros(n, dtype=np.int64)
    for i, p in rec.payloads.items():
        if (p.get("out_bytes") or 0) > 0 and keys[i] >= 0:
            out_bytes[keys[i]] += p["out_bytes"]
    mem = None
    if rec.has_memory:  # torch's sums per group (FunctionEventAvg.add), peaks: the highest
        mem = np.zeros((3, n), np.int64)
        np.add.at(mem[0], k, rec.net_memory()[sel])
        np.add.at(mem[1], k, rec.net_memory(True)[sel])
        np.maximum.at(mem[2], k, rec.value("peak_bytes")[sel])
    # device time per group: torch's sums of device_time_total and
    # self_device_time_total over the group's spans
    d_own, d_total, d_kern = _device_span_ns(rec)
    g_own = np.bincount(k, weights=d_own[sel], minlength=n)
    g_total = np.bincount(k, weights=d_total[sel], minlength=n)
    g_kern = np.bincount(k, weights=d_kern[sel], minlength=n)
    first = np.full(n, len(keys), dtype=np.int64)
    np.minimum.at(first, k, np.nonzero(sel)[0])
    parents = rec.spans["parent"]
    events = rec.event_list() if n and (parents[first] >= 0).any() else None
    py = rec.python_mask()
    self_sum = float(selft.sum()) or 1.0
    total_sum = float(total.sum())
    rows = []
    for g, (name, shapes, stack, module) in enumerate(descr):
        par = int(parents[first[g]])
        c, t, s = int(count[g]), int(total[g]), int(selft[g])
        p0 = rec.payloads.get(int(first[g])) or {}
        rows.append(FunctionEventAvg(
            name, p0.get("kind", "u"), c, t // c if c else 0, int(mins[g]), int(maxs[g]),
            shapes, s, 100.0 * s / total_sum if total_sum else 0.0,
            cuda_us=float(g_total[g]) / 1e3, kernel_count=int(g_kern[g]),
            self_cuda_us=float(g_own[g]) / 1e3, stack=stack, flops=int(flops[g]),
            output_bytes=int(out_bytes[g]),
            nested_output_bytes=int(out_bytes[g]), total_ns=t, module=module,
            cpu_parent=events[par] if par >= 0 else None,
            is_python_function=bool(py[first[g]]), self_cpu_percent=100.0 * s / self_sum,
            cpu_percent=100.0 * t / self_sum))
        if mem is not None:
            rows[-1].cpu_memory_usage = int(mem[0, g])
            rows[-1].self_cpu_memory_usage = int(mem[1, g])
            rows[-1].peak_cpu_memory_usage = int(mem[2, g])
    rows.sort(key=lambda r: r.self_ns, reverse=True)
    if sort_by is not None:
        rows = _sorted(rows, sort_by)
    return EventList._of_rows(rows, rec)


# --------------------------------------------------------------------------
# Device activity (tensorplay's DeviceActivity, device_activities)
# --------------------------------------------------------------------------

class DeviceActivity:
    """One piece of work the device did, as a collector recorded it: a
    tuple ``(name, kind k|m|s|r|d, start_ns, end_ns, device, stream,
    correlation, external_id, os_tid, cbid, bytes, copy_kind, value)``,
    read through tensorplay's methods.  spanscope collects none yet
    (``profile.kineto_results()`` is empty); the class reads such tuples
    (from a tensorplay session, say) all the same."""

    #: external_id of a record no operation was being dispatched for
    NO_EXTERNAL_ID = 0xFFFFFFFFFFFFFFFF

    def __init__(self, activity, launch_to_slot=None, device_name="cuda"):
        values = list(activity) + [None] * max(0, 13 - len(activity))
        (self._name, self._kind, self._start_ns, self._end_ns, self._device, self._stream,
         self._correlation, self._external_id, self._thread_id, self._cbid, self._bytes,
         self._copy_kind, self._value) = values[:13]
        self._launch_to_slot = launch_to_slot or {}
        self._device_name = device_name
        self._linked = None  # a recorded activity's: its span's External id
        self._span = None  # a recorded activity's: its span's index

    def name(self):
        return self._name

    def correlation_id(self):
        """CUPTI's correlation id: a kernel, copy or set shares it with the
        runtime/driver call that launched it (cudaLaunchKernel, ...)."""
        return self._correlation

    def linked_correlation_id(self):
        """The launching operation's id, 0 for none: for a recorded activity
        torch's -- the External id of the span that launched it (span index
        + 1 in profile.events(), as the Chrome trace's "External id"); for
        tensorplay's tuples the operation slot."""
        if self._linked is not None:
            return self._linked
        if self._external_id not in (None, self.NO_EXTERNAL_ID):
            return self._external_id
        return self._launch_to_slot.get(self._correlation, 0)

    def span(self):
        """The index in profile.events() of the span that launched this
        activity (the launching call's span for a runtime/driver call),
        None when none."""
        return self._span

    def device_index(self):
        """The CUDA device (torch's device_index), -1 for a host-side call."""
        return -1 if self._device is None else self._device

    def device_resource_id(self):
        """The stream (torch's device_resource_id), -1 for a host-side call."""
        return -1 if self._stream is None else self._stream

    stream = device_resource_id

    def start_thread_id(self):
        """The OS thread id of the launching thread (-1 unknown)."""
        return -1 if self._thread_id is None else self._thread_id

    def nbytes(self):
        """Bytes a copy or set moved, 0 otherwise."""
        return self._bytes or 0

    def duration_ns(self):
        return self._end_ns - self._start_ns

    def op_slot(self):
        """The operation that asked for this work, or None."""
        if self._external_id not in (None, self.NO_EXTERNAL_ID):
            return self._external_id
        return self._launch_to_slot.get(self._correlation)

    def activity_type(self) -> str:
        """gpu_kernel, gpu_memcpy, gpu_memset, cuda_runtime, cuda_driver or
        gpu_user_annotation, by the record's kind."""
        return {"k": "gpu_kernel", "m": "gpu_memcpy", "s": "gpu_memset", "r": "cuda_runtime",
                "d": "cuda_driver"}.get(self._kind, "gpu_user_annotation")

    def device_type(self):
        """CUDA for the device's own work (kernels, copies, fills), CPU for
        launches and driver calls."""
        return DeviceType.CUDA if self._kind in ("k", "m", "s") else DeviceType.CPU

    def start_ns(self):
        return self._start_ns

    def end_ns(self):
        return self._end_ns

    def duration_us(self):
        return (self._end_ns - self._start_ns) / 1000.0

    def __repr__(self):
        return f"<DeviceActivity {self._kind} {str(self._name)[:32]}>"


def device_activities(gpu_activities, device_name="cuda") -> list:
    """The device records (tuples) as DeviceActivity objects, sharing one
    correlation -> operation map."""
    launch_to_slot: dict = {}
    for a in gpu_activities:
        if len(a) > 7 and a[7] != DeviceActivity.NO_EXTERNAL_ID:
            launch_to_slot.setdefault(a[6], a[7])
    return [DeviceActivity(a, launch_to_slot, device_name) for a in gpu_activities]


def device_activity_ready() -> bool:
    """Whether a device-activity session started now would report records:
    whether the C core's CUPTI collector can start here (spanscope's
    collector flushes at every stop, so its first session reports them
    too; tensorplay: False until a first session in the process has
    collected some)."""
    return _ext.device_available(_ext.DEVICE_CUPTI) is None


# --------------------------------------------------------------------------
# Device activity recorded (the C core's /device rows, joined to the spans)
# --------------------------------------------------------------------------

#: /device's activity kinds (the file's numbers, docs/device.md) and
#: tensorplay's letters for them
_DEV_KERNEL, _DEV_MEMCPY, _DEV_MEMSET, _DEV_RUNTIME, _DEV_DRIVER = 1, 2, 3, 4, 5
_DEV_LETTER = {1: "k", 2: "m", 3: "s", 4: "r", 5: "d"}
_DEV_OF_LETTER = {v: k for k, v in _DEV_LETTER.items()}
#: the int64 columns of a recording's device rows (the contract's /device
#: columns; "span" is the face's own: the index of the launching span)
_DEV_COLUMNS = ("kinds", "names_idx", "devices", "contexts", "streams", "correlations",
                "starts_ns", "ends_ns", "bytes", "threads", "tids", "regions",
                "grid_x", "grid_y", "grid_z", "block_x", "block_y", "block_z",
                "copy_kinds", "src_kinds", "dst_kinds")


class _DeviceData:
    """A recording's device activities: one row per kernel, copy, set,
    runtime or driver API call the device collector recorded, as int64
    numpy columns (_DEV_COLUMNS, the file's /device names), the activity
    names (names_idx indexes them), ``span`` (per row, the index of its
    launching span in the recording, -1 none) and the collector's
    attributes (collector, clock, dropped, cupti_version)."""

    def __init__(self, cols: dict, names: list, span, attrs=None):
        n = len(span)
        self.cols = {k: np.ascontiguousarray(cols[k], np.int64) if k in cols
                     else np.full(n, -1 if k in ("threads", "tids", "regions", "devices",
                                                 "contexts", "streams") else 0, np.int64)
                     for k in _DEV_COLUMNS}
        self.names = list(names)
        self.span = np.ascontiguousarray(span, np.int64)
        self.attrs = dict(attrs or {})
        for k, v in self.cols.items():
            if len(v) != n:
                raise ValueError(f"device column {k} has {len(v)} rows, not {n}")
        if n and (self.cols["names_idx"].min() < 0 or
                  self.cols["names_idx"].max() >= len(self.names)):
            raise ValueError("a device row's name index is out of range")

    def __len__(self):
        return len(self.span)

    @property
    def on_device(self) -> np.ndarray:
        """True for the device's own work: kernels, copies, sets."""
        k = self.cols["kinds"]
        return (k >= _DEV_KERNEL) & (k <= _DEV_MEMSET)

    @property
    def durations(self) -> np.ndarray:
        return self.cols["ends_ns"] - self.cols["starts_ns"]

    def name(self, i: int) -> str:
        return self.names[int(self.cols["names_idx"][i])]

    @staticmethod
    def concat(a: "_DeviceData | None", b: "_DeviceData | None",
               shift: int) -> "_DeviceData | None":
        """a's rows then b's (b's spans shifted by `shift`, its names mapped
        into one list); None when both are None."""
        if a is None and b is None:
            return None
        if a is None:
            a = _DeviceData({}, [], np.zeros(0, np.int64), b.attrs)
        if b is None:
            return a
        names = list(a.names)
        index = {n: i for i, n in enumerate(names)}
        nmap = np.fromiter((index.setdefault(n, len(index)) for n in b.names), np.int64,
                           len(b.names))
        names += [n for n in index if index[n] >= len(names)]
        cols = {k: np.concatenate([a.cols[k], b.cols[k] if k != "names_idx" else
                                   nmap[b.cols[k]] if len(b.cols[k]) else b.cols[k]])
                for k in _DEV_COLUMNS}
        attrs = dict(b.attrs)
        attrs["dropped"] = int(a.attrs.get("dropped", 0)) + int(b.attrs.get("dropped", 0))
        return _DeviceData(cols, names, np.concatenate(
            [a.span, np.where(b.span >= 0, b.span + shift, -1)]), attrs)


def _device_launch_spans(rec: "_Recording", cols: dict, region_names: list) -> np.ndarray:
    """Per /device row, the index of its launching span in rec (-1 none):
    the innermost span OF THE ROW'S REGION open on the launching thread at
    the launch -- the rule the C core attributes by (the external
    correlation id pushed at a span's begin is its region), never "a span
    open at that time".  The launch is the runtime/driver API row of the
    same correlation id (its thread, region and start); a device row with
    no such row uses its own thread and region at its own start.  Threads
    are matched by OS tid (rec.threads' native ids), else by the session's
    thread index; regions by name."""
    n = len(cols["kinds"])
    out = np.full(n, -1, np.int64)
    spans = rec.spans
    if not n or not len(spans):
        return out
    kinds = np.asarray(cols["kinds"], np.int64)
    corr = np.asarray(cols["correlations"], np.int64)
    tids = np.array(cols["tids"], np.int64)  # copies: filled in from the API rows
    threads = np.array(cols["threads"], np.int64)
    regions = np.array(cols["regions"], np.int64)
    t_launch = np.asarray(cols["starts_ns"], np.int64).copy()
    # device rows take their launch from the API row of their correlation
    api = np.nonzero(kinds >= _DEV_RUNTIME)[0]
    if len(api):
        by_corr = dict(zip(corr[api].tolist(), api.tolist()))
        for i in np.nonzero(kinds < _DEV_RUNTIME)[0].tolist():
            j = by_corr.get(int(corr[i]))
            if j is not None:
                tids[i], threads[i], regions[i], t_launch[i] = \
                    tids[j], threads[j], regions[j], t_launch[j]
    # the row's thread as rec's thread index
    tindex = {int(t[0]): k for k, t in enumerate(rec.threads)}
    th = np.array([tindex.get(int(t), -1) if t >= 0 else
                   (int(x) if 0 <= x < len(rec.threads) else -1)
                   for t, x in zip(tids.tolist(), threads.tolist())], np.int64)
    # the row's region as rec's region ids (by name)
    by_name: dict = {}
    for r, nm in enumerate(rec.names):
        by_name.setdefault(nm, []).append(r)
    reg_ids = [by_name.get(region_names[r], []) if 0 <= r < len(region_names) else []
               for r in regions.tolist()]
    s_region = spans["region"].astype(np.int64)
    parent = spans["parent"]
    s_thread = spans["thread"].astype(np.int64)
    groups: dict = {}
    for i in range(n):
        if th[i] >= 0 and reg_ids[i]:
            groups.setdefault((int(th[i]), tuple(reg_ids[i])), []).append(i)
    for (t, rids), rows in groups.items():
        idx = np.nonzero((s_thread == t) & np.isin(s_region, rids))[0]  # start order
        if not len(idx):
            continue
        rows = np.array(rows, np.int64)
        ts = t_launch[rows]
        pos = np.searchsorted(spans["start"][idx], ts, "right") - 1
        for k, p in zip(rows.tolist(), pos.tolist()):
            # the region's span that began last before the launch; when it
            # had ended by then, the one open then encloses it: up its
            # parents to the first of the region still open (the innermost)
            j = int(idx[p]) if p >= 0 else -1
            while j >= 0 and (spans["end"][j] <= t_launch[k] or int(s_region[j]) not in rids):
                j = int(parent[j])
            out[k] = j
    return out


def _device_of_read(d: dict, rec: "_Recording") -> "_DeviceData | None":
    """The device rows of a file (the dict _ext.device_read gives) joined
    to rec's spans; None when the file has none."""
    n = int(d["n"]) if "n" in d else len(d["kinds"])
    if not n:
        return None
    cols = {k: np.asarray(d[k], np.int64) if isinstance(d[k], (list, tuple, np.ndarray))
            else np.frombuffer(d[k], np.int64) for k in _DEV_COLUMNS if k in d}
    span = _device_launch_spans(rec, cols, list(d.get("region_names") or ()))
    attrs = {k: d.get(k) for k in ("collector", "clock", "dropped", "cupti_version")}
    return _DeviceData(cols, list(d["names"]), span, attrs)


def _device_of_tuples(gpu_activities, rec: "_Recording | None") -> "_DeviceData | None":
    """tensorplay's device tuples (EventList(gpu_activities=...): name,
    kind k|m|s|r|d, start_ns, end_ns, device, stream, correlation,
    external_id (the launching op's slot, 2**64-1 none), os_tid, ...,
    bytes at 10, copy_kind at 11) as device rows.  A row's span is the
    event whose slot_id (its index in the raw list unless given) is its
    external id, or that of the API row of its correlation id: the join
    tensorplay means (its own never matches).  A tuple of an unknown kind
    or too short is a ValueError."""
    acts = list(gpu_activities or ())
    if not acts:
        return None
    n = len(acts)
    cols = {k: np.zeros(n, np.int64) for k in _DEV_COLUMNS}
    for k in ("threads", "tids", "regions", "contexts"):
        cols[k][:] = -1
    names: list = []
    nindex: dict = {}
    ext = np.full(n, -1, np.int64)
    for i, a in enumerate(acts):
        try:
            name, kind, start, end = a[0], a[1], int(a[2]), int(a[3])
            knum = _DEV_OF_LETTER[kind]
        except (TypeError, IndexError, ValueError, KeyError) as e:
            raise ValueError(f"device record {i}: (name, kind k|m|s|r|d, start_ns, end_ns, "
                             f"...) expected, not {a!r}") from e

        def at(j, default=0):
            return int(a[j]) if len(a) > j and a[j] is not None else default
        cols["kinds"][i], cols["starts_ns"][i], cols["ends_ns"][i] = knum, start, end
        cols["names_idx"][i] = nindex.setdefault(str(name), len(nindex))
        if cols["names_idx"][i] == len(names):
            names.append(str(name))
        cols["devices"][i] = at(4, 0) if knum < _DEV_RUNTIME else -1
        cols["streams"][i] = at(5, 0) if knum < _DEV_RUNTIME else -1
        cols["correlations"][i] = at(6, -1)
        x = at(7, DeviceActivity.NO_EXTERNAL_ID)
        ext[i] = x if x != DeviceActivity.NO_EXTERNAL_ID else -1
        cols["tids"][i] = at(8, -1)
        cols["bytes"][i], cols["copy_kinds"][i] = at(10), at(11)
    span = np.full(n, -1, np.int64)
    if rec is not None and len(rec.spans):
        slot = {}
        for i in range(len(rec.spans)):
            p = rec.payloads.get(i) or {}
            slot.setdefault(int(p.get("slot_id", p.get("raw_index", i))), i)
        by_corr = {}
        for i in range(n):
            if ext[i] >= 0:
                by_corr.setdefault(int(cols["correlations"][i]), int(ext[i]))
        for i in range(n):
            s = int(ext[i]) if ext[i] >= 0 else by_corr.get(int(cols["correlations"][i]), -1)
            span[i] = slot.get(s, -1)
    return _DeviceData(cols, names, span, {"collector": "tensorplay"})


def _gpu_pairs_of_file(f: dict, rec: "_Recording") -> np.ndarray:
    """Per span of rec, the device time (ns) the window's file gives its
    event (/events/gpu_durations: gpu_timing's CUDA event pair), -1 none.
    A file event is a span of rec when its thread index, its region's name
    and its start are the span's (the file was finalized from the
    window's own session, so they are the same records)."""
    out = np.full(len(rec.spans), -1, np.int64)
    ev = f["events"]
    if ev.get("gpu_durations") is None or not len(rec.spans):
        return out
    gd = np.frombuffer(ev["gpu_durations"], np.int64)
    has = np.nonzero(gd >= 0)[0]
    if not len(has):
        return out
    start = np.frombuffer(ev["start_ns"], np.int64)
    row = np.frombuffer(ev["row"], np.uint32)
    th = np.frombuffer(ev["thread_ids"], np.int64) if ev.get("thread_ids") is not None \
        else np.zeros(len(gd), np.int64)
    region_of_row = [r[0] for r in f["rows"]]
    fnames = f["names"]
    index = {(int(t), rec.names[int(r)], int(s0)): i for i, (t, r, s0) in
             enumerate(zip(rec.spans["thread"], rec.spans["region"], rec.spans["start"]))}
    for j in has.tolist():
        r = int(row[j])
        if r >= len(region_of_row):
            continue
        i = index.get((int(th[j]), fnames[region_of_row[r]], int(start[j])))
        if i is not None:
            out[i] = int(gd[j])
    return out


def _device_span_ns(rec: "_Recording") -> tuple:
    """(own, total, kernels) per span of rec, int64: the device time (ns)
    of the kernels, copies and sets the span itself launched, the same
    with every span inside it (the one fold's rule for per-span values:
    a span's total is its own plus its children's totals), and the number
    of kernels it launched itself.  With gpu_timing's event pairs
    (rec.gpu_pairs) a span's total is its pair's time and its own that
    less its children's totals.  Without device rows, a raw recording's
    gpu_ms (tensorplay's per-op device time) is the own time.  Zeros
    without either."""
    cache = rec.__dict__.get("_dev_ns")
    if cache is not None:
        return cache
    n = len(rec.spans)
    own = np.zeros(n, np.int64)
    kernels = np.zeros(n, np.int64)
    dev = rec.device
    if dev is not None and len(dev):
        sel = dev.on_device & (dev.span >= 0) & (dev.span < n)
        np.add.at(own, dev.span[sel], np.maximum(dev.durations[sel], 0))
        ks = sel & (dev.cols["kinds"] == _DEV_KERNEL)
        np.add.at(kernels, dev.span[ks], 1)
    else:
        for i, p in rec.payloads.items():
            g = p.get("gpu_ms")
            if g is not None and g > 0:
                own[i] = int(round(float(g) * 1e6))
            if p.get("kernel_count"):
                kernels[i] = int(p["kernel_count"])
    total = own.copy()
    pairs = rec.gpu_pairs
    if pairs is not None and n and (pairs >= 0).any():
        # gpu_timing: a span's event pair is the device time between its
        # begin and end (its children's included); without one, its own
        # launches plus its children's totals.  Its own (self) time is its
        # total less its direct children's (clamped at 0: torch's rule).
        parent = rec.spans["parent"]
        kids = np.zeros(n, np.int64)
        for i in range(n - 1, -1, -1):  # children come after their parent
            if pairs[i] >= 0:
                total[i] = pairs[i]
                own[i] = max(int(pairs[i] - kids[i]), 0)
            else:
                total[i] = own[i] + kids[i]
            if parent[i] >= 0:
                kids[parent[i]] += total[i]
        rec._dev_ns = (own, total, kernels)
        return rec._dev_ns
    if n and own.any():
        # each span's own time added to every span it lies in (up its parents)
        parent = rec.spans["parent"]
        node = np.nonzero(own)[0]
        vals = own[node]
        node = parent[node]
        while len(node):
            keep = node >= 0
            node, vals = node[keep], vals[keep]
            np.add.at(total, node, vals)
            node = parent[node]
    rec._dev_ns = (own, total, kernels)
    return rec._dev_ns


def _kineto_results(device: "_DeviceData | None") -> list:
    """device's rows as DeviceActivity objects, in start order: tensorplay's
    tuple fields (name, kind k|m|s|r|d, start_ns, end_ns, device, stream
    -- -1 for host-side calls --, correlation, external_id: the launching
    span's index, os_tid, cbid 0, bytes, copy_kind, 0), linked to the
    launching span's External id (its index + 1, 0 none)."""
    if device is None or not len(device):
        return []
    c = device.cols
    out = []
    for i in np.argsort(c["starts_ns"], kind="stable").tolist():
        k, sp = int(c["kinds"][i]), int(device.span[i])
        on = k < _DEV_RUNTIME
        t = (device.name(i), _DEV_LETTER[k], int(c["starts_ns"][i]), int(c["ends_ns"][i]),
             int(c["devices"][i]) if on else -1, int(c["streams"][i]) if on else -1,
             int(c["correlations"][i]), sp if sp >= 0 else DeviceActivity.NO_EXTERNAL_ID,
             int(c["tids"][i]), 0, int(c["bytes"][i]), int(c["copy_kinds"][i]), 0)
        a = DeviceActivity(t)
        a._linked, a._span = (sp + 1, sp) if sp >= 0 else (0, None)
        out.append(a)
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


#: names the C timeline writer (sps_timeline_write) picks a format by
_WRITER_SUFFIXES = (".json", ".json.gz", ".pftrace", ".perfetto-trace", ".pb")


def _export_trace(rec: _Recording, path: str, torch_compat=False, torch_tb=False) -> None:
    """rec as a trace at path: JSON whatever the name (torch), gzip when it
    ends in .gz, Perfetto protobuf for .pftrace (and the writer's other
    Perfetto names).  A name the writer does not know is written under a
    temporary name it knows (.json / .json.gz) beside path, then renamed.
    Each span is one slice (a record_function is one user_annotation event,
    as torch writes it); torch_tb adds what the deprecated TensorBoard
    profiler plugin needs (_torch_tb_layout).  The stack samples go along
    (with_samples, EventList(samples=...)): the C writer puts them on their
    thread's row (_write_trace)."""
    if not isinstance(torch_compat, bool):
        raise TypeError(f"torch_compat must be a bool, not {torch_compat!r}")
    if not isinstance(torch_tb, bool):
        raise TypeError(f"torch_tb must be a bool, not {torch_tb!r}")
    if torch_tb and path.endswith((".pftrace", ".perfetto-trace", ".pb")):
        raise ValueError("torch_tb is a layout of JSON traces (for TensorBoard's profiler "
                         "plugin), not of Perfetto files")
    if path.endswith(_WRITER_SUFFIXES) and not torch_tb:
        _write_trace(rec, path, os.path.basename(path))
        return
    # JSON through a temporary name, renamed into place once complete
    tmp = f"{path}.tmp{os.getpid()}" + (".json.gz" if path.endswith(".gz") else ".json")
    try:
        _write_trace(rec, tmp, os.path.basename(path))
        if torch_tb:
            _torch_tb_layout(tmp)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _torch_tb_layout(path: str) -> None:
    """Rewrites the JSON trace at path in the layout TensorBoard's profiler
    plugin (torch-tb-profiler, deprecated) reads: after each span's
    user_annotation event a "cpu_op" copy marked "spanscope_view":1 (the
    plugin drops every user_annotation but ProfilerStep#N, so its operator
    view needs them; spanscope's reader skips the copies), and kineto's
    "Trace" span "PyTorch Profiler (0)" over the spans' extent, which the
    plugin takes as the profiled window.  The same layout as `spanscope
    convert --torch-tb` (chrome_json.c)."""
    import gzip
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        doc = json.load(f)
    out = []
    first = last = None
    pid = None
    for e in doc.get("traceEvents", []):
        if e.get("ph") == "X" and e.get("cat") == "user_annotation":
            out.append(e)
            ts, dur = float(e.get("ts", 0)), float(e.get("dur", 0))
            first = ts if first is None else min(first, ts)
            last = ts + dur if last is None else max(last, ts + dur)
            pid = e.get("pid") if pid is None else pid
            if not str(e.get("name", "")).startswith("ProfilerStep#"):
                out.append(dict(e, cat="cpu_op", spanscope_view=1))
            continue
        if e.get("ph") == "i" and first is not None and e.get("name") == "Record Window End":
            out.append({"ph": "X", "cat": "Trace", "name": "PyTorch Profiler (0)", "pid": pid,
                        "tid": 0, "ts": round(first, 3), "dur": round(last - first, 3),
                        "args": {"Op count": 0}})
            out.append({"ph": "i", "s": "g", "name": "Iteration Start: PyTorch Profiler",
                        "pid": pid, "tid": 0, "ts": round(first, 3)})
        out.append(e)
    doc["traceEvents"] = out
    with opener(path, "wt", encoding="utf-8") as f:
        json.dump(doc, f, ensure_ascii=False, separators=(",", ":"))


def _samples_arg(s: "Samples | None"):
    """s as the C timeline writer takes a caller's samples
    (sps_timeline_write_samples: int64 columns as bytes, the frame and
    region names as lists), None when there are none."""
    if s is None or not len(s):
        return None

    def col(v) -> bytes:
        return np.ascontiguousarray(v, dtype=np.int64).tobytes()
    return {"times_ns": col(s.times_ns), "tids": col(s.tids), "stacks": col(s.stacks),
            "weights": col(s.weights), "regions": col(s.regions),
            "stack_offsets": col(s.stack_offsets), "stack_frames": col(s.stack_frames),
            "lines": col(s.lines), "kinds": col(s.kinds), "addresses": col(s.addresses),
            "functions": list(s.functions), "files": list(s.files),
            "modules": list(s.modules), "region_names": list(s.region_names),
            "hz": int(s.hz), "lost": int(s.lost)}


def _write_trace(rec: _Recording, path: str, trace_name: str) -> None:
    """The C timeline writer on rec's columns, payloads and stack samples:
    an instant event per sample in JSON (ph "i", cat "python_function",
    named after its innermost frame's function, args.stack its frames
    "file:line (function)" innermost first, args.region, args.weight: as
    tensorplay writes them), a PerfSample with its callstack in Perfetto,
    each on its tid's row (a tid without spans: a row of its own)."""
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
        "profile_memory": bool(o.get("profile_memory")), "host_name": socket.gethostname(),
        "pid": os.getpid(),
        "trace_id": f"{os.getpid():x}{rec.base_ns:x}",
    })[1:-1]
    rank, world = _dist_info()
    wall, mono = rec.anchor
    names, counters = list(rec.names), rec.counters
    if rec.has_memory:
        # profile_memory: each thread's memory_timeline() as a counter track
        # ("CPU Mem (thread N)", "ph":"C"), beside the spans
        extra_samples = []
        for tid, th in _memory_timeline(rec).items():
            c = np.zeros(len(th["times_ns"]), _COUNTER_DTYPE)
            c["t_ns"], c["value"], c["counter"] = th["times_ns"], th["bytes"], len(names)
            names.append(f"CPU Mem (thread {tid})")
            extra_samples.append(c)
        if extra_samples:
            counters = np.concatenate([counters] + extra_samples)
            counters = counters[np.argsort(counters["t_ns"], kind="stable")]
    _ext.timeline_write(path, names, [t[0] for t in rec.threads],
                        [t[1] for t in rec.threads], rec.spans.tobytes(), args, extra,
                        rec.base_ns, trace_name, rank, world, wall, mono,
                        socket.gethostname(), counters.tobytes(), os.getpid(),
                        _dist_backend(), _samples_arg(rec.samples), _device_arg(rec))


def _device_arg(rec: "_Recording"):
    """rec's device rows as the C timeline writer takes a caller's
    (sps_timeline_write_device: int64 columns as bytes, the activity and
    region names as lists), None when there are none.  Each row names its
    launching span as the writer finds it again -- that span's region
    (an index into rec.names) and the OS tid of its thread -- so the trace
    joins what the face joined: the span's "External id" on the rows it
    launched, the ac2g flow from its runtime call to its kernel."""
    dev = rec.device
    if dev is None or not len(dev):
        return None
    c = dev.cols
    span = dev.span
    has = span >= 0
    sp = np.maximum(span, 0)
    regions = np.where(has, rec.spans["region"][sp].astype(np.int64) if len(rec.spans)
                       else -1, -1)
    native = np.array([t[0] for t in rec.threads] or [0], np.int64)
    tids = np.where(has, native[rec.spans["thread"][sp].astype(np.int64)]
                    if len(rec.spans) else c["tids"], c["tids"])
    out = {k: np.ascontiguousarray(v, np.int64).tobytes() for k, v in c.items()}
    out.update(regions=regions.astype(np.int64).tobytes(), tids=tids.astype(np.int64).tobytes(),
               names=list(dev.names), region_names=list(rec.names))
    return out


_FOLDED_UNSAFE = re.compile(r"[\s\x00-\x1f\x7f-\x9f\u2028\u2029]")


def _export_stacks(rec: _Recording, path: str, metric: str) -> None:
    """Folded stacks of rec at path: from its samples when it has them
    (with_samples: one line per thread and sampled stack, frames outermost
    first, the CPU µs they stand for), else from its spans' nesting (one
    line per thread and span path, its self µs).  The device metrics
    (self_cuda_time_total, self_device_time_total: torch's) give one line
    per span path whose spans launched device work themselves, its self
    device µs (activities=[CUDA]); none without device activity."""
    if metric not in ("self_cpu_time_total", "self_cuda_time_total", "self_device_time_total"):
        raise ValueError(f"metric must be 'self_cpu_time_total', not {metric!r}")
    device = metric != "self_cpu_time_total"
    if rec.samples is not None and not device:
        s = rec.samples
        us = 1e6 / s.hz if s.hz else 1.0
        lines = s.folded().items() if metric == "self_cpu_time_total" else ()
        write_text_replacing(path, "".join(f"{k} {int(round(w * us))}\n" for k, w in lines))
        return
    spans = rec.spans
    parent = spans["parent"].tolist()
    region = spans["region"].tolist()
    thread = spans["thread"].tolist()
    selfns = (_device_span_ns(rec)[0] if device else spans["self"]).tolist()
    paths: list = [None] * len(spans)
    acc: dict = {}
    for i in range(len(spans)):  # parents come before their children
        # folded stacks are one stack a line, frames split at ';', the
        # count after the last space: a name from a file keeps none of
        # them (';' as ':', whitespace and controls as '_')
        name = _FOLDED_UNSAFE.sub("_", rec.names[region[i]].replace(";", ":"))
        p = parent[i]
        paths[i] = (paths[p] + ";" + name) if p >= 0 else \
            f"thread_{rec.threads[thread[i]][0]};{name}"
        if not device or selfns[i]:
            acc[paths[i]] = acc.get(paths[i], 0) + selfns[i]
    write_text_replacing(path, "".join(f"{k} {v // 1000}\n" for k, v in acc.items()))


def _make_trace_dir(directory: str) -> None:
    """Creates directory; RuntimeError as torch's handler words it."""
    if not os.path.isdir(directory):
        try:
            os.makedirs(directory, exist_ok=True)
        except Exception as e:
            raise RuntimeError("Can't create directory: " + directory) from e


def tensorboard_trace_handler(dir_name=None, worker_name=None, use_gzip=False, *,
                              directory=None, torch_tb=False) -> Callable:
    """on_trace_ready handler writing one
    ``{worker_name or host_pid}.{time_ns}.pt.trace.json[.gz]`` per cycle
    into the directory (created if missing), which Perfetto, HTA and
    chrome://tracing open.  The directory is torch's ``dir_name`` or
    tensorplay's ``directory`` (one of them).

    ``torch_tb=True`` writes for TensorBoard's profiler plugin
    (torch-tb-profiler, deprecated): each span also as a "cpu_op" copy, the
    "PyTorch Profiler (0)" window span, and the profile records torch's
    ``ProfilerStep#N`` spans (the plugin's steps) -- what the plugin needs
    and every other viewer draws twice."""
    if not isinstance(torch_tb, bool):
        raise TypeError(f"torch_tb must be a bool, not {torch_tb!r}")
    if (dir_name is None) == (directory is None):
        raise TypeError("tensorboard_trace_handler() takes the directory once: dir_name "
                        "(torch's name, or the first argument) or directory (tensorplay's)")
    where = os.fspath(dir_name if directory is None else directory)

    def handler(prof) -> None:
        _make_trace_dir(where)
        worker = worker_name or f"{socket.gethostname()}_{os.getpid()}"
        name = f"{worker}.{time.time_ns()}.pt.trace.json" + (".gz" if use_gzip else "")
        prof.export_chrome_trace(os.path.join(where, name), torch_compat=True,
                                 torch_tb=torch_tb)
    handler.torch_tb = torch_tb
    return handler


def merge_distributed_traces(paths: Iterable, out_path) -> None:
    """Merges per-process trace or HDF5 files into one (format by out_path's
    extension): each input becomes a process labelled with its rank (from
    its metadata, else its position), clocks aligned (docs/merge.md)."""
    paths = [os.fspath(p) for p in paths]
    if not paths:
        raise ValueError("merge_distributed_traces needs at least one input")
    _ext.merge(os.fspath(out_path), paths)


def _emit_shapes_label(args) -> str:
    """The emitters' label of a record_function's args
    (emit_nvtx(record_shapes=True)): the shapes of its values (a dict's
    values, a list's or tuple's items, else the value), torch's "[[2, 3],
    []]" ([] for a value without a shape)."""
    values = (list(args.values()) if isinstance(args, dict)
              else list(args) if isinstance(args, (list, tuple)) else [args])
    return str([_shape_of(v)[0] for v in values])


class _EmitContext(contextlib.ContextDecorator):
    """emit_nvtx / emit_itt (tensorplay's signature): while entered and
    enabled, every region -- record_function, the profile's own spans, C
    regions of this process, on every thread -- is also a range for an
    external tool: NVTX ranges in the domain "spanscope" for Nsight Systems
    (emit_nvtx), ITT tasks for VTune (emit_itt); docs/nvtx-itt.md.  No
    profile needs to run (the spans are recorded only inside one).  Exit
    restores the emitter as it was at entry, so contexts nest (the
    outermost one turns it off); one object is not re-entrant
    (RuntimeError, tensorplay's).  Where no tool is attached the emitter
    is a no-op (a few ns per region).  A spanscope built without the
    emitter raises RuntimeError on entry, saying so.  record_shapes=True:
    a record_function with args carries their shapes, as torch's
    operators carry their inputs': the NVTX range reads "NAME, sizes =
    [[2, 3], []]" (an ITT task gets them as its "sizes" metadata); ranges
    without args carry the name only."""

    _name = ""  # the emitter: "nvtx" or "itt" (spanscope._ext.emit_set)

    def __init__(self, enabled=True, record_shapes=False):
        self.enabled = bool(enabled)
        self.record_shapes = bool(record_shapes)
        self._entered = False
        self._was = True
        self._shapes_before = None

    def __enter__(self):
        if not self.enabled:
            return self
        if self._entered:
            raise RuntimeError("annotation context manager is not reentrant")
        self._was = _ext.emit_set(self._name, True)
        self._entered = True
        self._shapes_before = (_ext.set_emit_shapes(_emit_shapes_label) if self.record_shapes
                               else None)
        return self

    def __exit__(self, *exc):
        if self._entered:
            self._entered = False
            if self.record_shapes:
                _ext.set_emit_shapes(self._shapes_before)
            if not self._was:
                _ext.emit_set(self._name, False)
        return False


class emit_nvtx(_EmitContext):
    """Emit named ranges for active operations (NVTX; see _EmitContext)."""
    _name = "nvtx"


class emit_itt(_EmitContext):
    """Emit instrumentation ranges for active operations: every region an
    ITT task in the domain "spanscope", for Intel VTune (see _EmitContext;
    torch's helpers for ranges of any name: :mod:`spanscope.profiler.itt`)."""
    _name = "itt"


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


def _scheduled(schedule, step: int) -> ProfilerAction:
    """schedule(step), refused as torch refuses it when it is
    DEVICE_STOPPED (the profiler's own state, never a schedule's)."""
    action = schedule(step)
    if action == ProfilerAction.DEVICE_STOPPED:
        raise ValueError("ProfilerAction.DEVICE_STOPPED is set internally by the profiler "
                         "and must not be returned by a user-provided schedule")
    return action


# with_modules: nn.Module calls as spans "nn.Module: <Class>", by patching
# Module.__call__ of torch and of tensorplay (those importable), with a
# reference count as tensorplay does: the first recording profile installs
# the patch, the last one to end restores the original.
_MISSING = object()
_modules_lock = threading.Lock()
_modules_depth = 0
_modules_saved: list = []   # (Module class, original __call__ or _MISSING, wrapper)


def _module_classes() -> list:
    """The nn.Module classes of torch and tensorplay that can be imported
    (one already imported, or one installed).  A framework that is
    installed but fails to import is named in a RuntimeWarning."""
    out = []
    for pkg in ("torch", "tensorplay"):
        if pkg not in sys.modules and importlib.util.find_spec(pkg) is None:
            continue
        try:
            mod = importlib.import_module(f"{pkg}.nn.modules.module")
        except Exception as e:  # a broken install must not break profiling
            warnings.warn(f"with_modules: cannot import {pkg}.nn ({type(e).__name__}: {e}); "
                          f"{pkg} module calls are not recorded", RuntimeWarning, stacklevel=4)
            continue
        cls = getattr(mod, "Module", None)
        if isinstance(cls, type):
            out.append(cls)
    return out


def _module_wrapper(original):
    """Module.__call__ recording the call as a span (record_function)."""
    def __call__(module, *args, **kwargs):
        with record_function("nn.Module: " + type(module).__name__):
            return original(module, *args, **kwargs)
    __call__.__wrapped__ = original
    return __call__


def _patch_modules() -> None:
    """Installs the patch (first holder) or counts one more holder."""
    global _modules_depth
    with _modules_lock:
        if _modules_depth == 0:
            for cls in _module_classes():
                saved = cls.__dict__.get("__call__", _MISSING)
                wrapper = _module_wrapper(cls.__call__)
                cls.__call__ = wrapper
                _modules_saved.append((cls, saved, wrapper))
        _modules_depth += 1


def _unpatch_modules() -> None:
    """One holder fewer; the last restores each original __call__ (unless
    someone replaced our wrapper since: theirs is left in place)."""
    global _modules_depth
    with _modules_lock:
        if _modules_depth == 0:
            return
        _modules_depth -= 1
        if _modules_depth:
            return
        while _modules_saved:
            cls, saved, wrapper = _modules_saved.pop()
            if cls.__dict__.get("__call__") is not wrapper:
                continue
            if saved is _MISSING:
                delattr(cls, "__call__")
            else:
                cls.__call__ = saved


def _profile_signals() -> list:
    """The signals a recording profile hands its window over on:
    SPANSCOPE_SIGNALS (else SCOPE_PROFILER_SIGNALS) as the C core reads it
    (names, comma-separated, "none"; unknown names are the core's to
    report), SIGINT left out (KeyboardInterrupt); default TERM, HUP, USR1."""
    raw = os.environ.get("SPANSCOPE_SIGNALS", os.environ.get("SCOPE_PROFILER_SIGNALS"))
    names = ["TERM", "HUP", "USR1"] if raw is None else [
        n.strip().upper() for n in raw.split(",") if n.strip()]
    out = []
    for n in names:
        n = n[3:] if n.startswith("SIG") else n
        sig = getattr(signal, "SIG" + n, None) if n not in ("INT", "NONE") else None
        if isinstance(sig, signal.Signals):
            out.append(sig)
    return out


class profile:
    """tensorplay.profiler.profile (the page's signature) on spanscope's
    core: a context manager (or start()/stop()) that records every span of
    its recording windows, with an optional schedule over step() calls.

    events() and key_averages() hold the spans of every window so far
    (tensorplay's: a cycle does not wipe the one before; acc_events=False
    gives torch's, the last window only).  Steps are not spans: no
    ``ProfilerStep#N`` events, rows or slices (tensorplay's), unless
    ``record_steps=True`` or the on_trace_ready handler was made with
    ``torch_tb=True`` (TensorBoard's plugin reads them).  The schedule and
    the on_trace_ready calls are torch's (docs/coming-from-tensorplay.md).

    with_samples=True: the stack sampler runs while each window records
    (sps_sampling_start: every thread's CPU time, threads started later
    too, Python and native frames; 1000 samples per second of CPU, or one
    per ``TP_PROFILER_SAMPLE_MS`` ms when that is set).  Each sample
    belongs to the innermost span open on its thread: events().samples
    (tensorplay's tuples), key_averages(group_by_stack_n=N) (per span
    name, its samples by their innermost N frames), export_stacks (folded
    stacks of the samples) and export_chrome_trace (an instant event per
    sample in JSON, a PerfSample callstack per timer period in .pftrace, on
    the sample's thread).  When a session was already running (ProfileManager.setup),
    its samples go to that session's file (Results.samples) instead
    (docs/profiler.md, "Stack samples").

    profile_memory=True: each span gets the bytes its own thread allocated
    and freed while it was open (the session reads the thread's allocation
    counters at every region begin and end; Python's allocators and numpy's
    array data feed them while the profile lives): torch's
    cpu_memory_usage / self_cpu_memory_usage on events and averages, the
    tables' "CPU Mem" / "Self CPU Mem" columns, memory_summary(),
    memory_timeline() and export_memory_timeline().  Attribution is by
    thread and innermost open span, never by time window: an allocation on
    another thread never lands in this thread's span (docs/python.md,
    "Memory per span")."""

    def __init__(self, enabled=True, *, activities=None, schedule=None, on_trace_ready=None,
                 record_shapes=False, profile_memory=False, with_stack=False, with_flops=False,
                 with_modules=False, use_device=None, gpu_timing=None, gpu_trace=None,
                 with_samples=False, acc_events=True, record_steps=False):
        #: samples per second of CPU time of each thread (with_samples)
        self._sample_hz = _sample_hz() if with_samples else 0
        acts = set()
        for a in (activities if activities is not None else [ProfilerActivity.CPU]):
            try:
                acts.add(ProfilerActivity(a.value if isinstance(a, enum.Enum) else str(a).lower()))
            except ValueError:
                raise ValueError(f"unknown activity {a!r}; use ProfilerActivity.CPU or "
                                 "ProfilerActivity.CUDA") from None
        if not acts:  # torch.profiler.profile asserts it
            raise AssertionError("No valid profiler activities found")
        #: the C core's device collectors this profile runs while it records
        #: (SPS_DEVICE_* bits): CUPTI for activities=[CUDA] / use_device
        #: "cuda" / gpu_trace (tensorplay's rule: not when gpu_timing asks
        #: for event pairs instead), CUDA event pairs for gpu_timing
        self._device_what = self._device_collectors(acts, use_device, gpu_timing, gpu_trace)
        self._device_on = 0  # the collectors started for the window recording now
        if schedule is not None and not callable(schedule):
            raise TypeError("schedule must be callable (see profiler.schedule)")
        if on_trace_ready is not None and not callable(on_trace_ready):
            raise TypeError("on_trace_ready must be callable")
        self.enabled = bool(enabled)
        self.activities = acts
        self._user_schedule = schedule
        self.schedule = schedule if schedule is not None else _always_record
        # ProfilerStep#N spans: asked for, or for TensorBoard's plugin; they
        # are steps of a schedule, so a profile without one records none
        self.record_steps = schedule is not None and bool(
            record_steps or getattr(on_trace_ready, "torch_tb", False))
        self.on_trace_ready = on_trace_ready
        self.profile_memory = bool(profile_memory)
        self.with_samples = bool(with_samples)
        self.use_device = use_device
        self.record_shapes = bool(record_shapes)
        self.with_stack = bool(with_stack)
        self.with_flops = bool(with_flops)
        self.with_modules = bool(with_modules)
        self.acc_events = bool(acc_events)
        self.step_num = 0
        self._action = _scheduled(self.schedule, 0)
        self._started = False
        self._prepared = False  # a window was ever prepared (torch: self.profiler set)
        self._modules_patched = False
        self._owns_session = False
        self._session_start = 0
        self._stacks_on = False
        self._t0 = None
        self._collector = None
        self._step_open = False  # a step of ours is open in the core (sps_step_begin)
        self._result: _Recording | None = None
        self._hooks_ours = False  # this profile installed the allocation hooks
        self._armed = {}  # signal -> the handler before (_arm_signals)
        self._hooks_info = None  # what mem_hooks_install said (numpy_scope)
        self._memory_session = False  # the window's session reads memory values
        self._sampling_ours = False  # this profile started the sampler

    @staticmethod
    def _device_collectors(acts, use_device, gpu_timing, gpu_trace) -> int:
        """The device collectors to run (SPS_DEVICE_* bits) for these
        arguments, each checked with the C core now: what cannot run here
        is left out with one RuntimeWarning saying why (the core's own
        line: no NVIDIA driver, no libcupti, ...), and the profile records
        the CPU only (torch warns and goes on the same way)."""
        dev = None if use_device is None else str(use_device).lower()
        cuda = ProfilerActivity.CUDA in acts or (dev or "").startswith("cuda")
        trace = bool(gpu_trace) if gpu_trace is not None else (cuda and gpu_timing is None)
        why = []
        if dev not in (None, "cpu") and not dev.startswith("cuda"):
            why.append(f"spanscope records no {use_device!r} device (CUDA only)")
        what = 0
        if trace:
            reason = _ext.device_available(_ext.DEVICE_CUPTI)
            if reason is None:
                what |= _ext.DEVICE_CUPTI
            else:
                why.append(f"CUDA activity (CUPTI) cannot be recorded here: {reason}")
        if gpu_timing:
            reason = _ext.device_available(_ext.DEVICE_EVENTS)
            if reason is None:
                what |= _ext.DEVICE_EVENTS
            else:
                why.append(f"gpu_timing (CUDA event pairs) cannot be recorded here: {reason}")
        if why:
            warnings.warn("spanscope: " + "; ".join(why) +
                          ("; profiling the CPU only" if not what else ""),
                          RuntimeWarning, stacklevel=3)
        return what

    @property
    def current_action(self):
        """The schedule's action for the current step (step_num); None for
        a profile without a schedule (tensorplay's)."""
        return self._action if self._user_schedule is not None else None

    # -- context manager / start / stop ------------------------------------
    def __enter__(self):
        if self._started:
            raise RuntimeError("profiler context manager is not reentrant")
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
        self._arm_signals()
        try:
            if self.profile_memory:
                self._install_hooks()
            if self.with_modules:
                _patch_modules()
                self._modules_patched = True
            self._transit(ProfilerAction.NONE, self._action)
        except BaseException:
            self._end()
            raise
        self._open_step_span()

    def stop(self) -> None:
        if not self.enabled or not self._started:
            return
        self._close_step_span()
        try:
            self._transit(self._action, None)
        finally:
            self._end()

    def _end(self) -> None:
        """Leaves the recording state whatever happened: hooks off, the
        session this profile started ended."""
        global _recording_profile
        self._close_step_span()
        self._started = False
        self._disarm_signals()
        if self._modules_patched:
            self._modules_patched = False
            _unpatch_modules()
        self._release_session()
        self._uninstall_hooks()
        if _recording_profile is self:
            _recording_profile = None

    # -- signals: the window in progress handed over before the end ---------
    def _arm_signals(self) -> None:
        """While the profile runs, SIGTERM, SIGHUP and SIGUSR1 (those of
        SPANSCOPE_SIGNALS, docs/signals.md) that would end the process stop
        the profile first -- the window in progress goes to on_trace_ready,
        as at stop() -- then end it as they would have.  Only from the main
        thread (Python runs handlers there), only for a signal whose Python
        handler is the default, and only when no session of another face
        records (its own file is written by the C core's signal handling).
        SIGINT needs nothing: KeyboardInterrupt leaves the with block."""
        self._armed = {}
        if threading.current_thread() is not threading.main_thread() or _ext.is_active():
            return
        for sig in _profile_signals():
            try:
                if signal.getsignal(sig) is signal.SIG_DFL:
                    signal.signal(sig, self._on_signal)
                    self._armed[sig] = signal.SIG_DFL
            except (OSError, ValueError):  # not settable here
                pass

    def _disarm_signals(self) -> None:
        armed, self._armed = self._armed, {}
        for sig, prev in armed.items():
            try:
                if signal.getsignal(sig) == self._on_signal:  # not replaced since
                    signal.signal(sig, prev)
            except (OSError, ValueError):
                pass

    def _on_signal(self, signum, frame) -> None:
        """A signal of the list: the profile stopped (on_trace_ready gets
        the window in progress), one line on stderr, then the signal's own
        end (the same exit status).  A second signal meanwhile ends the
        process at once: the default action is back before the stop."""
        for sig in list(self._armed):
            signal.signal(sig, signal.SIG_DFL)
        self._armed = {}
        name = signal.Signals(signum).name
        try:
            self.stop()
            said = ("the trace of the window in progress handed to on_trace_ready"
                    if self.on_trace_ready is not None else
                    "the profile stopped (no on_trace_ready: nothing written)")
        except BaseException as e:  # the end comes anyway
            said = f"stopping the profile failed ({type(e).__name__}: {e})"
        try:
            sys.stderr.write(f"spanscope: {name}: {said}; ending as the signal does\n")
            sys.stderr.flush()
        except (OSError, ValueError):
            pass
        os.kill(os.getpid(), signum)

    # -- profile_memory: the allocation hooks for the profile's life --------
    def _install_hooks(self) -> None:
        """Installs spanscope's allocation hooks (Python's allocators and
        numpy's data handler, _ext.mem_hooks_install) unless they are on
        already (then whoever installed them keeps them)."""
        if _ext.mem_hooks_active():
            return
        try:
            #: what mem_hooks_install did ("numpy_scope": "all threads" or
            #: "this context", docs/memory.md)
            self._hooks_info = _ext.mem_hooks_install(python=True, numpy=True)
        except RuntimeError as e:
            raise RuntimeError(f"profile_memory=True: the allocation hooks cannot be "
                               f"installed here: {e}") from e
        self._hooks_ours = True

    def _uninstall_hooks(self) -> None:
        """Restores the allocators that were there before the profile
        (only when this profile installed the hooks).  A hook installed
        over ours since (tracemalloc.start(), memray) keeps ours in place:
        a RuntimeWarning says so, as stop() must not fail."""
        if not self._hooks_ours:
            return
        self._hooks_ours = False
        try:
            _ext.mem_hooks_uninstall()
        except RuntimeError as e:
            warnings.warn(f"profile_memory: spanscope's allocation hooks stay installed: {e}",
                          RuntimeWarning, stacklevel=3)

    def step(self) -> None:
        """Marks a step boundary: the schedule decides what the next step does.
        Outside the context (before start, after stop) it only advances
        step_num and current_action, as torch's step() does there with its
        default schedule; it records nothing then (torch may begin a trace
        outside its context; spanscope never records outside it)."""
        if not self.enabled:
            return
        prev = self._action
        action = _scheduled(self.schedule, self.step_num + 1)
        self.step_num += 1
        self._action = action
        if not self._started:
            return
        if self._step_open and not _actions(prev, self._action):
            # the window goes on: one mark ends step N-1 and begins step N
            _ext.step()
            return
        self._close_step_span()
        self._transit(prev, self._action)
        self._open_step_span()

    # ProfilerStep#N spans are the core's: a step is a pair of marks on the
    # thread that called start()/step() (sps_step_begin, sps_step,
    # sps_step_end), and sps_spans nests the steps among the regions by the
    # model's rule -- a region open across step() stays whole (marks are not
    # region records, which the core's nesting would close at the step's
    # end).  The profile's step number outlives its sessions (one per
    # window), so each window's first step is begun with its number.
    def _open_step_span(self):
        if self.record_steps and self._action in _RECORDING:
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
        self._prepared = True
        if self._owned():
            return
        self._owns_session = False
        if not _ext.is_active():
            # local: each rank profiles on its own, never collectively;
            # track=1 (SPS_TRACK_MEMORY): every begin and end reads the
            # thread's allocation counters
            _ext.setup(None, local=True, track=1 if self.profile_memory else 0)
            self._owns_session = True
            self._session_start = _ext.session_start_ns()
            self._memory_session = self.profile_memory
            return
        try:
            _ext.spans(1, 0)  # an empty window: only checks the session keeps spans
        except RuntimeError as e:
            raise RuntimeError("spanscope.profiler needs per-call spans, but the running "
                               "ProfileManager session was set up with aggregation_mode=True"
                               ) from e
        self._memory_session = self.profile_memory and "alloc_bytes" in _ext.value_names()
        if self.profile_memory and not self._memory_session:
            warnings.warn("profile_memory=True: a spanscope session was already running "
                          "(ProfileManager.setup or another caller) without memory "
                          "tracking, and what a session reads at each region begin and end "
                          "is fixed when it is set up, so this profile records no memory; "
                          "end that session first (or start it with memory tracking)",
                          RuntimeWarning, stacklevel=4)

    def _release_session(self) -> None:
        self._stop_sampling()
        self._stop_device()
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
        if self.with_samples:
            self._start_sampling()
        self._start_device()
        self._tnames = _python_thread_names()
        self._t0 = _ext.now_ns()

    # -- activities=[CUDA]: the C core's device collectors per window -------
    def _start_device(self) -> None:
        """Starts the device collectors this profile asked for
        (sps_device_start), for the window's session.  When they cannot
        start now (another CUPTI subscriber -- Nsight Systems, another
        profiler -- holds CUPTI, say) one RuntimeWarning says why and the
        profile goes on recording the CPU only."""
        if not self._device_what or self._device_on:
            return
        if not self._owned():
            warnings.warn("activities=[CUDA]: a spanscope session was already running "
                          "(ProfileManager.setup or another caller): the device's activity "
                          "goes to that session's file when it finalizes, not to this "
                          "profile's events and traces", RuntimeWarning, stacklevel=5)
        try:
            _ext.device_start(self._device_what)
        except RuntimeError as e:
            self._device_what = 0  # said once; the next windows record the CPU only
            warnings.warn(f"spanscope: CUDA activity cannot be recorded: {e}; profiling the "
                          "CPU only", RuntimeWarning, stacklevel=5)
            return
        self._device_on = self._device_what

    def _stop_device(self) -> int:
        """Stops (flushing everything in flight) the collectors this
        profile started; returns which were on."""
        on, self._device_on = self._device_on, 0
        if on:
            try:
                _ext.device_stop(on)
            except (RuntimeError, ValueError) as e:
                warnings.warn(f"spanscope: stopping the device collectors failed: {e}",
                              RuntimeWarning, stacklevel=3)
        return on

    # -- with_samples: the sampler for each recording window ----------------
    def _start_sampling(self) -> None:
        """Starts the stack sampler at the profile's rate, unless it runs
        already (then it is whoever started it's, and its samples are the
        window's too).  RuntimeError when it cannot start (no per-thread CPU
        timers here)."""
        if not hasattr(_ext, "sampling_start"):
            raise RuntimeError("with_samples=True: this build of spanscope has no stack "
                               "sampler (docs/sampling.md)")
        if not self._owned():
            warnings.warn("with_samples=True: a spanscope session was already running "
                          "(ProfileManager.setup or another caller): its samples go to that "
                          "session's file when it finalizes (Results.samples), not to this "
                          "profile's events, stacks and traces", RuntimeWarning, stacklevel=5)
        if _ext.sampling_hz():
            return
        try:
            _ext.sampling_start(self._sample_hz)
        except (RuntimeError, ValueError) as e:
            raise RuntimeError(f"with_samples=True: the stack sampler cannot start: {e}"
                               ) from e
        self._sampling_ours = True

    def _stop_sampling(self) -> None:
        if self._sampling_ours:
            self._sampling_ours = False
            _ext.sampling_stop()

    def _read_window_file(self, samples: bool, device: int) -> tuple:
        """(the samples, the device rows, the events) the window's session
        holds, as read_stack_samples, _ext.device_read (device has
        DEVICE_CUPTI) and _ext.read_file (device has DEVICE_EVENTS: the
        events' gpu_durations) give them, each None when not asked for or
        when this profile does not own the session (they stay in it).  The
        core hands them out only with a finalize, so the profile's own
        session is finalized into a temporary file (spans already read),
        read and removed; the sampler is stopped after that finalize, so
        that the file has its rate."""
        if not (samples or device):
            return None, None, None
        try:
            if not (self._owned() and _ext.is_active()):
                return None, None, None
            fd, tmp = tempfile.mkstemp(prefix="spanscope-window-", suffix=".h5")
            os.close(fd)
            s = d = f = None
            try:
                _ext.finalize(tmp, False)
                if samples:
                    s = read_stack_samples(tmp)
                if device & _ext.DEVICE_CUPTI:
                    d = _ext.device_read(tmp)
                if device & _ext.DEVICE_EVENTS:
                    f = _ext.read_file(tmp)
            except (OSError, RuntimeError, ValueError) as e:
                what = " and ".join(w for w, on in (("samples", samples),
                                                    ("device activity", device)) if on)
                warnings.warn(f"spanscope: the window's {what} could not be read back: {e}",
                              RuntimeWarning, stacklevel=4)
                return (Samples.empty(self._sample_hz) if samples and s is None else s), \
                    None, None
            finally:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass
        finally:
            self._stop_sampling()
        return s, d, f

    def _take_samples(self, s, t0: int, t1: int, names: list):
        """The window's samples s ([t0, t1] kept) as Samples named by names;
        None for None (the session was not this profile's)."""
        if s is None:
            return None
        s = s.select((s.times_ns >= t0) & (s.times_ns <= t1))
        if not s.hz:
            s.hz = self._sample_hz
        return s.with_regions(names)

    def _stop_trace(self) -> None:
        t1 = _ext.now_ns()
        device_on = self._stop_device()  # flushed: the finalize below writes it
        if self._stacks_on and _ext.is_active():
            _ext.capture_stacks(False)
        self._stacks_on = False
        tnames = getattr(self, "_tnames", {})
        tnames.update(_python_thread_names())
        _ext.set_capture(None)
        t0 = self._t0 if self._t0 is not None else t1
        values, vnames = None, []
        if self._memory_session and _ext.is_active():
            raw, vraw, nv = _ext.spans_values(t0, t1)
            raw, vraw = raw or b"", vraw or b""  # None for an empty window (y# of NULL)
            vnames = _ext.value_names()[:nv]
            # uint64 own and self values per span, read as int64 (bytes and
            # counts stay far below 2**63)
            values = np.frombuffer(vraw, dtype="<u8").view("<i8").reshape(-1, 2 * nv) \
                if nv else None
        else:
            raw = _ext.spans(t0, t1) if _ext.is_active() else b""
        spans = np.frombuffer(raw, dtype=_SPAN_DTYPE)
        if values is not None and len(values) != len(spans):
            values = None  # never: sps_spans_values gives a row per span
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
                "with_flops": self.with_flops, "with_modules": self.with_modules,
                "profile_memory": values is not None and "alloc_bytes" in vnames,
                "with_samples": self.with_samples}
        anchor, traced = _ext.clock_anchor(), frozenset(_ext.traced_regions)
        raw_samples, raw_device, raw_file = self._read_window_file(self.with_samples, device_on)
        samples = self._take_samples(raw_samples, t0, t1, names) if self.with_samples else None
        if samples is not None:
            names = samples.region_names  # names, then any region only samples name
        window = _Recording(spans, names, threads, payloads, t0, t1, opts, counters,
                            anchor, traced, values, vnames, samples)
        if raw_device is not None:
            # each activity joined to its launching span of this window
            window.device = _device_of_read(raw_device, window)
            lost = int(raw_device.get("dropped") or 0)
            if lost:
                warnings.warn(f"spanscope: CUPTI dropped {lost} device activity records in "
                              "this window (its buffers were full): the device times miss "
                              "them", RuntimeWarning, stacklevel=4)
        if raw_file is not None:
            # gpu_timing: each span's CUDA event pair, by its file event
            window.gpu_pairs = _gpu_pairs_of_file(raw_file, window)
        if self.acc_events and self._result is not None:
            # torch's acc_events: the cycles so far, one after another
            window = _concat_recordings(self._result, window)
        self._result = window
        if self._owned():
            # between windows nothing is recorded (the next "prepare" starts
            # a new session), so a long run does not pay for idle steps
            _ext.shutdown()
        self._owns_session = False
        self._t0 = None

    # -- results ---------------------------------------------------------
    def _recording(self, what: str) -> _Recording:
        """The last window's recording; AssertionError (torch's) when this
        profile never prepared a window (torch: "Profiler must be
        initialized before ..."); an empty one while the first records, and
        for a disabled profile (enabled=False: tensorplay's, records nothing)."""
        if not self._prepared and self.enabled:
            raise AssertionError(f"Profiler must be initialized before {what} "
                                 "(start the profile, or let its schedule reach a window)")
        if self._result is None:
            empty = np.zeros(0, dtype=_SPAN_DTYPE)
            return _Recording(empty, [""], [], {}, 0, 0, {})
        return self._result

    def events(self) -> EventList:
        """The spans of the last completed recording window, in start order."""
        rec = self._recording("accessing events")
        return rec.event_list()

    @property
    def device_time_by_span(self) -> list:
        """For each span of events(), the device time in µs of the kernels,
        copies and sets launched inside it (by it and the spans inside
        it: its device_time_total), joined by correlation id; 0.0 for a
        span that launched none, and for every span without
        activities=[CUDA] (or where the device could not be recorded)."""
        return self.events().device_time_by_span

    def device_kernels(self, sort_by=None):
        """What the device ran (activities=[CUDA]): one row per kernel,
        copy or set by (name, kind) with calls and total/avg/min/max time;
        ``activities`` lists each one with its device, stream, start,
        duration and launching span (events())."""
        return self.events().device_kernels(sort_by)

    def kineto_results(self) -> list:
        """Every activity the device collector recorded (activities=[CUDA])
        as a DeviceActivity, in start order: the kernels, copies and sets,
        and the runtime/driver calls that launched them -- name(),
        correlation_id() (CUPTI's: a kernel shares it with its
        cudaLaunchKernel), linked_correlation_id() (the launching span's
        External id: its index in events() + 1, 0 none), span() (that
        index), activity_type() (gpu_kernel, gpu_memcpy, gpu_memset,
        cuda_runtime, cuda_driver), device_type(), device_index(),
        device_resource_id() (the stream), start_ns(), end_ns(),
        duration_us()."""
        return self.events().kineto_results()

    def memory_summary(self) -> tuple:
        """(total bytes allocated, peak live bytes, timeline): tensorplay's
        allocator summary, from the spans' memory values (profile_memory):
        the bytes allocated inside the spans of every thread; the highest
        live level one thread reached inside its spans, above its level at
        its first span of the recording (the peak of the memory_timeline()
        level plus each outermost span's own peak); and (end_ns, bytes,
        "alloc" | "free") for each span with self allocations or frees, at
        its end, in time order.  (0, 0, []) without profile_memory
        (tensorplay's fallback counts factory ops' outputs, which spanscope
        has none of)."""
        rec = self._recording("reading the memory summary")
        if not rec.has_memory or not len(rec.spans):
            return 0, 0, []
        alloc, free = rec.value("alloc_bytes", True), rec.value("free_bytes", True)
        order = np.argsort(rec.spans["end"], kind="stable")
        timeline = []
        for i in order.tolist():
            t = int(rec.spans["end"][i])
            if alloc[i]:
                timeline.append((t, int(alloc[i]), "alloc"))
            if free[i]:
                timeline.append((t, int(free[i]), "free"))
        peak = max((th["peak_bytes"] for th in _memory_timeline(rec).values()), default=0)
        return int(alloc.sum()), int(peak), timeline

    def memory_timeline(self) -> dict:
        """spanscope's: the live bytes over time of each thread, from its
        spans' memory values (profile_memory): {native thread id:
        {"thread_name", "times_ns", "bytes", "peak_bytes"}}.  The points
        are the thread's span ends, in time order, after a first point (0
        bytes) at its first span's begin; the level at a span's end counts
        the self bytes (allocated minus freed) of every span of the thread
        that has ended by then.  The core reads a thread's counters at
        region begins and ends only, so a span's own allocations appear at
        its end: at the end of an outermost span the level is exactly the
        thread's net allocation inside its spans so far; between two
        points nothing is claimed (use peak_cpu_memory_usage for the rise
        inside a span).  Allocations outside every span are not seen.
        peak_bytes: the highest level the thread reached inside its spans
        (each outermost span's level at its begin plus its own peak).
        {} without profile_memory."""
        rec = self._recording("reading the memory timeline")
        return {k: dict(v) for k, v in _memory_timeline(rec).items()}

    def export_memory_timeline(self, path, device=None) -> list:
        """Writes the memory timeline (memory_timeline(), every thread's
        level added up) in the format the name asks for, torch's formats
        (torch.profiler.profile.export_memory_timeline) and tensorplay's:

        - ``.html``: torch's page, one PNG plot embedded (matplotlib), the
          threads' levels stacked, one colour per thread (torch stacks
          tensor categories, which spanscope does not know);
        - ``.raw.json.gz``: torch's raw events, a JSON list of [time_ns,
          action, bytes, category]: per span end its self allocations
          (action 2, CREATE, bytes > 0) and frees (action 4, DESTROY, bytes
          < 0), category 7 (torch's index of "unknown": no tensor
          categories here);
        - ``.json`` / ``.json.gz`` (and any other name but ``.csv``):
          torch's [times, sizes]: times in µs, one sizes row per time, 9
          numbers: torch's leading 0, its 7 categories (0 here) and the
          bytes of unknown category (all of them);
        - ``.csv``: tensorplay's "timestamp_ns,device,allocated_bytes" rows.

        device: None or "cpu" (spanscope records host memory only; another
        device is a ValueError).  Returns the rows (timestamp_ns, "cpu",
        bytes), tensorplay's return value; without profile_memory there
        are none (files with no points)."""
        rec = self._recording("exporting the memory timeline")
        dev = "cpu" if device is None else str(device)
        if dev not in ("cpu", "cpu:0"):
            raise ValueError(f"export_memory_timeline: spanscope records host (CPU) memory "
                             f"only; device must be None or 'cpu', not {device!r}")
        path = os.fspath(path)
        times, levels, alloc, free = _memory_total(rec)
        rows = [(int(t), "cpu", int(b)) for t, b in zip(times.tolist(), levels.tolist())]
        if path.endswith(".html"):
            _write_memory_html(path, _memory_timeline(rec))
        elif path.endswith("raw.json.gz"):
            raw = []
            for t, a, f in zip(times.tolist(), alloc.tolist(), free.tolist()):
                if a:
                    raw.append([t, 2, a, 7])
                if f:
                    raw.append([t, 4, -f, 7])
            _write_json_replacing(path, raw)
        elif path.endswith(".csv"):
            write_text_replacing(path, "timestamp_ns,device,allocated_bytes\n" +
                                 "".join(f"{t},{d},{b}\n" for t, d, b in rows))
        else:
            ts, sizes = [], []
            for t, b in zip(times.tolist(), levels.tolist()):
                us = int(t / 1000)  # torch's conversion
                if ts and ts[-1] == us:
                    sizes[-1][8] = int(b)
                else:
                    ts.append(us)
                    sizes.append([0] * 8 + [int(b)])
            _write_json_replacing(path, [ts, sizes])
        return rows

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0,
                     group_by_overload_name=False, include_python_functions=False,
                     sort_by=None, *, group_by_module=False) -> EventList:
        """torch's key_averages: the spans grouped by name ("ProfilerStep*"
        for every step), and by the recorded input shapes
        (group_by_input_shape; "[]" for a span without any), the first
        group_by_stack_n frames of the stack (with_stack), the overload name
        (none recorded: no change, as torch without captured overloads);
        python_function events (the recursive tracer's Python functions)
        only with include_python_functions.  sort_by (tensorplay's) sorts
        the rows as table() does; else by self CPU time, descending.
        group_by_module (spanscope's) groups by the Python module that
        opened each span (with_modules) and adds a Module column.
        group_by_input_shape with no shapes recorded is a ValueError
        (tensorplay's)."""
        rec = self._recording("getting key averages")
        if group_by_input_shape and not any(p.get("shapes") is not None
                                            for p in rec.payloads.values()):
            raise ValueError("No shapes recorded: pass record_shapes=True to profile()")
        return _key_averages(rec, group_by_input_shape,
                             group_by_stack_n, group_by_overload_name,
                             include_python_functions, sort_by, group_by_module)

    def total_average(self) -> FunctionEventAvg:
        return self.key_averages(include_python_functions=True).total_average()

    @property
    def self_cpu_time_total(self) -> float:
        return float(self._recording("reading self_cpu_time_total").spans["self"].sum()) / 1e3

    def table(self, sort_by=None, row_limit=100, header=None, max_src_column_width=75,
              max_name_column_width=55, max_shapes_column_width=80,
              top_level_events_only=False, time_unit=None) -> str:
        """events().table(...): one row per span (tensorplay's; the rows per
        name are key_averages().table()).  "" when empty."""
        return self.events().table(sort_by, row_limit, header, max_src_column_width,
                                   max_name_column_width, max_shapes_column_width,
                                   top_level_events_only, time_unit)

    def __str__(self):
        return self.table()

    def counters(self) -> dict:
        """Counter samples of the last window (spanscope.counter / sps_counter):
        {name: {"times_ns": array, "values": array}}, in time order."""
        rec = self._recording("reading counters")
        out = {}
        for cid in np.unique(rec.counters["counter"]):
            sel = rec.counters["counter"] == cid
            out[rec.names[int(cid)]] = {"times_ns": rec.counters["t_ns"][sel].copy(),
                                        "values": rec.counters["value"][sel].copy()}
        return out

    def export_chrome_trace(self, path, torch_compat=False, *, torch_tb=False) -> None:
        """Writes events() as a Chrome trace, one slice per span, in JSON
        whatever the name (torch, tensorplay); a name ending in .gz is
        gzip-compressed; .pftrace (spanscope's documented extension) writes
        Perfetto protobuf.  torch_compat is tensorplay's switch for torch's
        top-level keys, which spanscope's traces always carry (its merge
        and readers align clocks with them): True and False write the same
        file.  torch_tb=True: the layout of the deprecated TensorBoard
        profiler plugin (tensorboard_trace_handler).  With with_samples=True
        the stack samples go along on their thread's row: JSON instants as
        tensorplay writes them (cat "python_function", args.stack, region,
        weight), Perfetto PerfSample packets with their callstacks."""
        _export_trace(self._recording("exporting chrome trace"), os.fspath(path),
                      torch_compat, torch_tb)

    def export_tensorboard_trace(self, directory, run_name=None) -> str:
        """tensorplay's export_tensorboard_trace: what the handler writes,
        as ``{run_name or "spanscope"}[-rank{R}].{host}.{pid}.{time_ns}
        .pt.trace.json`` in directory (created if missing); returns the
        path."""
        self._recording("exporting a trace")
        directory = os.fspath(directory)
        _make_trace_dir(directory)
        name = run_name or "spanscope"
        rank, _world = _dist_info()
        if rank >= 0:
            name = f"{name}-rank{rank}"
        path = os.path.join(directory, f"{name}.{socket.gethostname()}.{os.getpid()}."
                                       f"{time.time_ns()}.pt.trace.json")
        self.export_chrome_trace(path, torch_compat=True)
        return path

    def export_stacks(self, path, metric: str = "self_cpu_time_total") -> None:
        """Folded stacks (``thread_<tid>;outer;...;inner value`` per line,
        flamegraph.pl's and speedscope's input) for flame graphs.  With
        with_samples=True: the sampled stacks, frames outermost first
        (``function (file:line)``; a native frame ``function (module)``),
        value the CPU µs they stand for.  Without: the spans' nesting,
        which every recording has, so with_stack=True is not needed
        (tensorplay asserts it: its folded stacks are the Python frames),
        value the span path's self µs.  metric: self_cpu_time_total, or
        torch's device metrics (self_cuda_time_total, self_device_time_total):
        the span paths' self device µs, from the spans (activities=[CUDA];
        no lines without device activity)."""
        _export_stacks(self._recording("exporting stacks"), os.fspath(path), metric)

    def __repr__(self):
        return (f"<spanscope.profiler.profile step={self.step_num} "
                f"action={self._action.value}>")


def _memory_timeline(rec: _Recording) -> dict:
    """profile.memory_timeline() on a recording (cached on it): per thread
    the level at its span ends (the running sum of the self net bytes of
    its spans in end order, after a 0 at its first begin) and its peak."""
    cache = rec.__dict__.get("_mem_timeline")
    if cache is not None:
        return cache
    out: dict = {}
    if rec.has_memory and len(rec.spans):
        sp = rec.spans
        own, net = rec.net_memory(), rec.net_memory(True)
        peak = rec.value("peak_bytes")
        for t in np.unique(sp["thread"]).tolist():
            idx = np.nonzero(sp["thread"] == t)[0]
            order = idx[np.argsort(sp["end"][idx], kind="stable")]
            times = np.concatenate([[sp["start"][idx].min()], sp["end"][order]])
            level = np.concatenate([[0], np.cumsum(net[order])])
            # outermost spans: their level at begin (the sum of the earlier
            # outermost spans' own net) plus their own peak
            top = idx[sp["parent"][idx] < 0]
            top = top[np.argsort(sp["start"][top], kind="stable")]
            before = np.concatenate([[0], np.cumsum(own[top])[:-1]]) if len(top) else top
            pk = int(max((before + peak[top]).max(initial=0), level.max(initial=0)))
            native, name = rec.threads[t] if t < len(rec.threads) else (t, "")
            out[native] = {"thread_name": name, "times_ns": times.astype(np.int64),
                           "bytes": level.astype(np.int64), "peak_bytes": pk}
    rec._mem_timeline = out
    return out


def _memory_total(rec: _Recording):
    """Every thread's level added up, at each span end in time order:
    (end_ns, total level after it, the span's self bytes allocated, its
    self bytes freed) as int64 arrays; empty without memory values."""
    if not rec.has_memory or not len(rec.spans):
        e = np.zeros(0, np.int64)
        return e, e, e, e
    order = np.argsort(rec.spans["end"], kind="stable")
    alloc, free = rec.value("alloc_bytes", True)[order], rec.value("free_bytes", True)[order]
    return (rec.spans["end"][order].astype(np.int64), np.cumsum(alloc - free), alloc, free)


def _write_json_replacing(path: str, doc) -> None:
    """doc as JSON at path (gzip when it ends in .gz), written under a
    temporary name and renamed into place."""
    import gzip

    def write(tmp) -> None:
        opener = gzip.open if path.endswith(".gz") else open
        with opener(tmp, "wt", encoding="utf-8") as f:
            json.dump(doc, f)
    write_replacing(path, write)


def _write_memory_html(path: str, threads: dict) -> None:
    """torch's memory timeline page (an HTML file with the plot embedded as
    a PNG): the threads' levels stacked, time in ms from the first point.
    Needs matplotlib (the `plot` extra)."""
    import base64
    import io
    try:
        from matplotlib.figure import Figure
    except ImportError as e:
        raise ModuleNotFoundError("export_memory_timeline(*.html) draws with matplotlib: "
                                  "pip install 'spanscope[plot]'") from e
    fig = Figure(figsize=(20, 12), dpi=80)
    ax = fig.subplots()
    series = [(k, v) for k, v in threads.items() if len(v["times_ns"])]
    if series:
        times = np.unique(np.concatenate([v["times_ns"] for _, v in series]))
        t0 = times[0]
        top = max(max(int(np.abs(v["bytes"]).max()) for _, v in series), 1)
        unit, scale = next((u, f) for u, f in (("GB", 1 << 30), ("MB", 1 << 20),
                                               ("KB", 1 << 10), ("B", 1))
                           if top >= f or u == "B")
        base = np.zeros(len(times))
        for k, v in series:
            # each thread's level at every time: its last point at or before it
            at = np.searchsorted(v["times_ns"], times, side="right") - 1
            lvl = np.where(at >= 0, v["bytes"][np.maximum(at, 0)], 0) / scale
            ax.fill_between((times - t0) / 1e6, base, base + lvl, step="post", alpha=0.7,
                            label=f"thread {k}" + (f" ({v['thread_name']})"
                                                   if v["thread_name"] else ""))
            base = base + lvl
        ax.legend()
        peak = max(v["peak_bytes"] for _, v in series)
        title = (f"Live bytes inside spans, per thread (at span ends)\n"
                 f"Peak of one thread: {_fmt_memory(peak)}")
    else:
        unit = "B"
        title = "No memory recorded (profile(profile_memory=True) records it)"
    ax.set_xlabel("Time (ms)")
    ax.set_ylabel(f"Memory ({unit})")
    ax.set_title(title)
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    encoded = base64.b64encode(buf.getvalue()).decode("ascii")
    write_text_replacing(path, f"""<html>
<head><meta charset="utf-8" /><title>CPU Memory Timeline HTML</title></head>
<body>
  <img src='data:image/png;base64,{encoded}'>
</body>
</html>""")


def _python_thread_names() -> dict:
    """native thread id -> Python thread name, for the threads alive now
    (threads that start and end inside a window keep their OS name)."""
    return {t.native_id: t.name for t in threading.enumerate() if t.native_id is not None}


def _max_region(spans) -> int:
    m = int(spans["region"].max()) if len(spans) else 0
    return max(m, 0)
