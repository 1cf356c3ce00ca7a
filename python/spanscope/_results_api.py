"""scope-profiler's results API over spanscope's one model.

``read_h5(path)`` returns :class:`ProfilingResults`, the object scope-profiler
0.7.5's ``read_h5`` returns, built from ONE read of the file by the C reader
(``spanscope.read``: ``sps_file_open``): ``results[name]`` is an
:class:`MPIRegion` (per rank), ``results[name][rank]`` a :class:`Region` with
durations in seconds and ``*_ns`` arrays.  The arrays are the C reader's own
columns (read-only views); exclusive (self) times are the C fold's, whatever
the file holds, so this view, ``spanscope report``, diff and html agree.

Results that do not come from an HDF5 file (a JSON profile, regions built in
Python, ``merge_results``) get their nesting from the same fold, run in C over
their arrays (``_ext.fold_spans``), on the first question that needs it.

Durations and timestamps are seconds (float) on the recording clock
(CLOCK_MONOTONIC, the clock of ``time.perf_counter_ns``), ``*_ns`` properties
integer nanoseconds, as in scope-profiler.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from spanscope import _ext

__all__ = [
    "CallArrays", "CorruptProfileError", "EventDataUnavailableError",
    "HDF5SchemaError", "IntegrationNotAvailableError", "MPIRegion", "NestingError",
    "ProfilingResults", "Region", "SummaryDataUnavailable", "TaskInfo", "ThreadInfo",
    "build_call_arrays", "build_call_stack", "call_stack_roots", "call_stack_children",
    "merge_results", "read_h5", "read_h5_summary",
]

NS_PER_SECOND = 1e9
#: thread/task table value of a time that was never taken (still running)
UNKNOWN = -1


# --------------------------------------------------------------------------
# Exceptions (scope-profiler's names and bases)
# --------------------------------------------------------------------------

class EventDataUnavailableError(RuntimeError):
    """Per-call event data was asked of summary-only results."""


class CorruptProfileError(OSError):
    """The file cannot be read as a profile: not HDF5, truncated, corrupt, or
    not of a scope-profiler schema.  An OSError, as in scope-profiler; the
    message names the file and what is wrong with it (the C reader's)."""


class SummaryDataUnavailable(ValueError):
    """A summary-only read found no fixed-size statistics to read."""


class HDF5SchemaError(ValueError):
    """The file's scope_profiler_schema is not one this reader knows (a
    ValueError, as scope-profiler raises it for a newer schema)."""


class NestingError(ValueError):
    """Recorded intervals of one lane overlap without one holding the other,
    so there is no call stack to reconstruct."""


class IntegrationNotAvailableError(NotImplementedError):
    """A results accessor of an integration spanscope does not have yet."""


def _line_profile_unavailable(path) -> IntegrationNotAvailableError:
    return IntegrationNotAvailableError(
        f"{path} holds line-profiler data (rank<N>/line_profile), which spanscope does not "
        "read yet: line profiling is not available until the line-profiler integration "
        "lands")


def _counters_unavailable(what: str):
    return IntegrationNotAvailableError(
        f"{what} is not available yet: spanscope reads no {what.split()[0]} data "
        "until the hardware-counters integration (perf_event / LIKWID) lands")


# --------------------------------------------------------------------------
# Region: one region on one rank
# --------------------------------------------------------------------------

def _i64(a):
    return None if a is None else np.asarray(a, dtype=np.int64)


class Region:
    """Timing data of one region on one rank (scope-profiler's
    ``region.Region``): durations and times in seconds, ``*_ns`` arrays in
    integer nanoseconds as stored.

    ``start_times``/``end_times`` are int64 ns arrays of the calls, as in
    scope-profiler; the other columns are optional.  Exclusive durations
    are the one fold's: given by the C reader for a file, else folded in C
    over the owning result set's calls when first asked for.
    """

    def __init__(self, start_times, end_times, gpu_durations=None, call_ids=None,
                 parent_ids=None, thread_ids=None, task_ids=None, await_times=None,
                 event_metadata=None, source_file=None, source_lineno=None,
                 source_text=None, tags=(), aggregate=None,
                 event_data_available: bool = True) -> None:
        self._start_times = _i64(start_times)
        self._end_times = _i64(end_times)
        if self._start_times.shape != self._end_times.shape:
            raise ValueError("start_times and end_times must have the same length")
        self._durations = self._end_times - self._start_times
        self._gpu_durations = _i64(gpu_durations)
        self._call_ids = _i64(call_ids)
        self._parent_ids = _i64(parent_ids)
        self._thread_ids = _i64(thread_ids)
        self._task_ids = _i64(task_ids)
        self._await_times = _i64(await_times)
        n = len(self._end_times)
        self._event_metadata = (tuple({} for _ in range(n)) if event_metadata is None
                                else tuple(dict(v) for v in event_metadata))
        if len(self._event_metadata) != n:
            raise ValueError("event metadata must match the call count")
        self._exclusive_durations: np.ndarray | None = None
        self._exclusive_resolver = None
        self._exclusive_total_ns: int | None = None
        self._aggregate = None if aggregate is None else dict(aggregate)
        self._event_data_available = bool(event_data_available)
        self._num_calls = (int(self._aggregate.get("count", 0)) if self._aggregate is not None
                           else n)
        self._source_file = source_file
        self._source_lineno = None if source_lineno is None else int(source_lineno)
        self._source_text = source_text
        self._tags = tuple(tags)

    @classmethod
    def _from_model(cls, data, self_ns=None) -> "Region":
        """The Region of a C reader row (results.RegionData), its arrays the
        reader's own; self_ns: the fold's self times (None: resolve later)."""
        tags = tuple(json.loads(data.tags_json)) if data.tags_json else ()
        meta = json.loads(data.event_metadata_json) if data.event_metadata_json else None
        if meta is not None and len(meta) != data.num_calls:
            meta = None  # the writer's list is per region, not per call
        if data.aggregate is not None:
            agg = data.aggregate
            stored = {"count": agg["counts"], "total": agg["totals"],
                      "minimum": agg["minimums"], "maximum": agg["maximums"],
                      "exclusive": agg.get("exclusives", agg["totals"])}
            r = cls(np.empty(0, np.int64), np.empty(0, np.int64), aggregate=stored,
                    source_file=data.source_file or None,
                    source_lineno=_line(data.source_line), source_text=data.source_text or None,
                    tags=tags)
            return r
        r = cls.__new__(cls)
        r._start_times = data.start_ns
        r._durations = data.durations_ns
        r._end_times = data.start_ns + data.durations_ns
        r._gpu_durations = data.gpu_durations
        r._call_ids = data.call_ids
        r._parent_ids = data.parent_ids
        r._thread_ids = data.thread_ids
        r._task_ids = data.task_ids
        r._await_times = data.await_ns
        r._event_metadata = (tuple(dict(v) for v in meta) if meta is not None
                             else tuple({} for _ in range(data.num_calls)))
        r._exclusive_durations = self_ns
        r._exclusive_resolver = None
        r._exclusive_total_ns = None
        r._aggregate = None
        r._event_data_available = True
        r._num_calls = data.num_calls
        r._source_file = data.source_file or None
        r._source_lineno = _line(data.source_line)
        r._source_text = data.source_text or None
        r._tags = tags
        return r

    # -- exclusive time ---------------------------------------------------
    def _attach_exclusive_resolver(self, resolver) -> None:
        self._exclusive_durations = None
        self._exclusive_total_ns = None
        self._exclusive_resolver = resolver

    def _set_exclusive_durations(self, durations) -> None:
        if len(durations) != self.num_calls:
            raise ValueError("exclusive durations must match the call count")
        self._exclusive_resolver = None
        self._exclusive_durations = np.asarray(durations, dtype=np.int64)

    def _set_exclusive_total(self, total_ns) -> None:
        self._exclusive_total_ns = None if total_ns is None else int(total_ns)

    def _resolved_exclusive_durations(self) -> np.ndarray:
        if self._exclusive_durations is None and self._exclusive_resolver is not None:
            resolver, self._exclusive_resolver = self._exclusive_resolver, None
            resolver()
        if self._exclusive_durations is None:  # alone: nothing nests in it
            self._exclusive_durations = self._durations.copy()
        return self._exclusive_durations

    # -- per-call views ---------------------------------------------------
    def _require_events(self) -> None:
        if not self._event_data_available:
            raise EventDataUnavailableError(
                "per-call events are unavailable on summary-only results; "
                "load the profile with read_h5()")

    def events(self, origin: float = 0.0) -> list[dict[str, Any]]:
        """One dict per call (call_index, start, end, duration in seconds,
        minus origin), plus gpu_duration, call_id/parent_id, thread, task
        and await_duration where recorded."""
        self._require_events()
        starts = self.start_times - origin
        ends = self.end_times - origin
        out = []
        for i in range(len(starts)):
            e: dict[str, Any] = {"call_index": i, "start": float(starts[i]),
                                 "end": float(ends[i]), "duration": float(ends[i] - starts[i])}
            if self._gpu_durations is not None:
                e["gpu_duration"] = float(self._gpu_durations[i]) / NS_PER_SECOND
            if self._call_ids is not None and self._parent_ids is not None:
                e["call_id"] = int(self._call_ids[i])
                e["parent_id"] = int(self._parent_ids[i])
            if self._thread_ids is not None:
                e["thread"] = int(self._thread_ids[i])
            if self._task_ids is not None and self._await_times is not None:
                e["task"] = int(self._task_ids[i])
                e["await_duration"] = float(self._await_times[i]) / NS_PER_SECOND
            if self._event_metadata[i]:
                e["metadata"] = dict(self._event_metadata[i])
            out.append(e)
        return out

    def for_thread(self, thread_index: int) -> "Region":
        """The calls of one thread (thread-table index) as a Region.
        ValueError when the run recorded no thread ids."""
        if self._thread_ids is None:
            raise ValueError("this run did not record thread ids; profile with "
                             "track_threads=True")
        m = self._thread_ids == int(thread_index)

        def sel(v):
            return None if v is None else v[m]
        return Region(self._start_times[m], self._end_times[m],
                      gpu_durations=sel(self._gpu_durations), call_ids=sel(self._call_ids),
                      parent_ids=sel(self._parent_ids), thread_ids=sel(self._thread_ids),
                      task_ids=sel(self._task_ids), await_times=sel(self._await_times),
                      source_file=self._source_file, source_lineno=self._source_lineno,
                      source_text=self._source_text, tags=self._tags,
                      event_data_available=self._event_data_available)

    # -- plain properties -------------------------------------------------
    event_metadata = property(lambda self: self._event_metadata,
                              doc="Per-call scoped metadata, aligned with the events.")
    thread_ids = property(lambda self: self._thread_ids,
                          doc="Thread-table index of every call, or None.")
    task_ids = property(lambda self: self._task_ids,
                        doc="Task-table index of every call (-1 outside a task), or None.")
    await_times_ns = property(lambda self: self._await_times,
                              doc="ns each call's task spent suspended, or None.")
    call_ids = property(lambda self: self._call_ids, doc="Call ids as stored, or None.")
    parent_ids = property(lambda self: self._parent_ids, doc="Parent ids as stored, or None.")
    stored_summary = property(lambda self: self._aggregate,
                              doc="Fixed-size statistics of aggregate results, else None.")
    source_file = property(lambda self: self._source_file)
    source_lineno = property(lambda self: self._source_lineno)
    source_text = property(lambda self: self._source_text)
    tags = property(lambda self: self._tags)
    start_times_ns = property(lambda self: self._start_times,
                              doc="Start times of all calls in ns, as stored.")
    end_times_ns = property(lambda self: self._end_times, doc="End times in ns.")
    durations_ns = property(lambda self: self._durations, doc="Durations in ns.")
    inclusive_durations_ns = durations_ns
    gpu_durations_ns = property(lambda self: self._gpu_durations)
    num_calls = property(lambda self: self._num_calls, doc="Number of recorded calls.")

    @property
    def await_times(self):
        return None if self._await_times is None else self._await_times / NS_PER_SECOND

    @property
    def total_await_duration(self):
        return (None if self._await_times is None
                else float(np.sum(self._await_times)) / NS_PER_SECOND)

    @property
    def has_thread_data(self) -> bool:
        return self._thread_ids is not None

    @property
    def threads(self) -> list[int]:
        return [] if self._thread_ids is None else [int(v) for v in np.unique(self._thread_ids)]

    @property
    def has_timing(self) -> bool:
        return self.num_calls > 0

    @property
    def has_event_data(self) -> bool:
        return self._event_data_available

    @property
    def has_source(self) -> bool:
        return self._source_file is not None

    @property
    def has_gpu_timing(self) -> bool:
        if self._aggregate is not None:
            return int(self._aggregate.get("gpu_count", 0)) > 0
        return self._gpu_durations is not None and len(self._gpu_durations) > 0

    @property
    def exclusive_durations_ns(self) -> np.ndarray:
        return self._resolved_exclusive_durations()

    @property
    def start_times(self) -> np.ndarray:
        return self._start_times / NS_PER_SECOND

    @property
    def end_times(self) -> np.ndarray:
        return self._end_times / NS_PER_SECOND

    @property
    def durations(self) -> np.ndarray:
        return self._durations / NS_PER_SECOND

    inclusive_durations = durations

    @property
    def gpu_durations(self):
        return None if self._gpu_durations is None else self._gpu_durations / NS_PER_SECOND

    @property
    def exclusive_durations(self) -> np.ndarray:
        return self._resolved_exclusive_durations() / NS_PER_SECOND

    # -- statistics (seconds) ----------------------------------------------
    def _agg(self, key, default=0):
        return self._aggregate.get(key, default) / NS_PER_SECOND

    @property
    def first_start_time(self) -> float:
        if self._aggregate is not None:
            return self._agg("start_minimum")
        return float(np.min(self._start_times)) / NS_PER_SECOND if self.has_timing else 0.0

    @property
    def last_end_time(self) -> float:
        if self._aggregate is not None:
            return self._agg("end_maximum")
        return float(np.max(self._end_times)) / NS_PER_SECOND if self.has_timing else 0.0

    @property
    def total_duration(self) -> float:
        if self._aggregate is not None:
            return self._agg("total")
        return float(np.sum(self._durations)) / NS_PER_SECOND if self.has_timing else 0.0

    inclusive_duration = total_duration

    @property
    def gpu_total_duration(self):
        if self._aggregate is not None:
            return self._agg("gpu_total") if self._aggregate.get("gpu_count", 0) else None
        if self._gpu_durations is None:
            return None
        return float(np.sum(self._gpu_durations)) / NS_PER_SECOND

    @property
    def gpu_average_duration(self):
        if self._aggregate is not None:
            n = int(self._aggregate.get("gpu_count", 0))
            return self._agg("gpu_total") / n if n else None
        if self._gpu_durations is None or not len(self._gpu_durations):
            return None
        return float(np.mean(self._gpu_durations)) / NS_PER_SECOND

    @property
    def total_exclusive_duration(self) -> float:
        if self._aggregate is not None:
            return self._agg("exclusive")
        if not self.has_timing:
            return 0.0
        if self._exclusive_durations is None and self._exclusive_total_ns is not None:
            return self._exclusive_total_ns / NS_PER_SECOND
        return float(np.sum(self._resolved_exclusive_durations())) / NS_PER_SECOND

    exclusive_duration = total_exclusive_duration

    @property
    def average_duration(self) -> float:
        if self._aggregate is not None:
            return self.total_duration / self.num_calls if self.num_calls else 0.0
        return float(np.mean(self._durations)) / NS_PER_SECOND if self.has_timing else 0.0

    @property
    def min_duration(self) -> float:
        if self._aggregate is not None:
            return self._agg("minimum")
        return float(np.min(self._durations)) / NS_PER_SECOND if self.has_timing else 0.0

    @property
    def max_duration(self) -> float:
        if self._aggregate is not None:
            return self._agg("maximum")
        return float(np.max(self._durations)) / NS_PER_SECOND if self.has_timing else 0.0

    @property
    def first_duration(self) -> float:
        if self._aggregate is not None:
            return self._agg("first")
        return float(self._durations[0]) / NS_PER_SECOND if self.has_timing else 0.0

    @property
    def last_duration(self) -> float:
        if self._aggregate is not None:
            return self._agg("last")
        return float(self._durations[-1]) / NS_PER_SECOND if self.has_timing else 0.0

    @property
    def std_duration(self) -> float:
        if self._aggregate is not None:
            n, m2 = int(self._aggregate.get("count", 0)), self._aggregate.get("m2")
            return (float(np.sqrt(max(float(m2), 0.0) / n)) / NS_PER_SECOND
                    if n and m2 is not None else 0.0)
        return float(np.std(self._durations)) / NS_PER_SECOND if self.has_timing else 0.0

    def percentile_duration(self, percentile: float):
        """A duration percentile (numpy's rule) in seconds; None for
        aggregate results with calls (no per-call data), 0.0 without calls.
        ValueError outside 0..100."""
        if not 0 <= percentile <= 100:
            raise ValueError("percentile must be between 0 and 100")
        if self._aggregate is not None and self.num_calls:
            return None
        return (float(np.percentile(self._durations, percentile)) / NS_PER_SECOND
                if self.has_timing else 0.0)

    p50_duration = property(lambda self: self.percentile_duration(50))
    p95_duration = property(lambda self: self.percentile_duration(95))
    p99_duration = property(lambda self: self.percentile_duration(99))

    def get_summary(self) -> dict[str, Any]:
        """num_calls and the duration statistics, in seconds."""
        s = {"num_calls": self.num_calls, "total_duration": self.total_duration,
             "inclusive_duration": self.inclusive_duration,
             "exclusive_duration": self.exclusive_duration,
             "average_duration": self.average_duration, "min_duration": self.min_duration,
             "max_duration": self.max_duration, "first_duration": self.first_duration,
             "last_duration": self.last_duration, "std_duration": self.std_duration}
        if self.has_gpu_timing:
            s["gpu_total_duration"] = self.gpu_total_duration
            s["gpu_average_duration"] = self.gpu_average_duration
        return s

    def __len__(self) -> int:
        return self.num_calls

    def __repr__(self) -> str:
        out = "-" * 60 + "\n"
        for key, value in self.get_summary().items():
            out += f"  {key:>18}: {value}{'' if key == 'num_calls' else ' s'}\n"
        return out + "-" * 60 + "\n\n"


def _line(v):
    return None if v is None or int(v) < 0 else int(v)


# --------------------------------------------------------------------------
# MPIRegion: one region on every rank
# --------------------------------------------------------------------------

class MPIRegion:
    """One named region across the ranks that recorded it: ``[rank]`` is
    that rank's :class:`Region`; the properties pool every call of every
    rank (seconds)."""

    def __init__(self, name: str, regions: dict[int, Region]) -> None:
        self._name = name
        self._regions = dict(regions)
        self.color = None  # set by plotting code, as in scope-profiler

    name = property(lambda self: self._name)
    regions = property(lambda self: self._regions)

    @property
    def ranks(self) -> list[int]:
        return sorted(self._regions)

    @property
    def has_timing(self) -> bool:
        return any(r.has_timing for r in self._regions.values())

    @property
    def has_event_data(self) -> bool:
        return all(r.has_event_data for r in self._regions.values())

    def _first(self, attr):
        for rank in self.ranks:
            v = getattr(self._regions[rank], attr)
            if v is not None:
                return v
        return None

    source_file = property(lambda self: self._first("source_file"))
    source_lineno = property(lambda self: self._first("source_lineno"))
    source_text = property(lambda self: self._first("source_text"))
    tags = property(lambda self: self._first("tags") or ())

    @property
    def has_source(self) -> bool:
        return self.source_file is not None

    @property
    def has_gpu_timing(self) -> bool:
        return any(r.has_gpu_timing for r in self._regions.values())

    def get_summary(self) -> dict[str, Any]:
        s = {"name": self.name, "num_ranks": len(self._regions), "num_calls": self.num_calls,
             "total_duration": self.total_duration,
             "inclusive_duration": self.inclusive_duration,
             "exclusive_duration": self.exclusive_duration,
             "average_duration": self.average_duration, "min_duration": self.min_duration,
             "max_duration": self.max_duration, "first_duration": self.first_duration,
             "last_duration": self.last_duration, "std_duration": self.std_duration}
        if self.has_gpu_timing:
            s["gpu_total_duration"] = self.gpu_total_duration
            s["gpu_average_duration"] = self.gpu_average_duration
        return s

    def events(self, ranks=None, origin: float = 0.0) -> list[dict[str, Any]]:
        sel = self.ranks if ranks is None else [ranks] if isinstance(ranks, int) else list(ranks)
        out = []
        for rank in sel:
            r = self._regions.get(rank)
            if r is not None:
                out.extend({"name": self.name, "rank": rank, **e} for e in r.events(origin))
        return out

    def _pool(self, attr) -> np.ndarray:
        v = [getattr(r, attr) for r in self._regions.values() if r.has_timing]
        v = [x for x in v if x is not None]
        return np.concatenate(v) if v else np.array([], dtype=float)

    durations = property(lambda self: self._pool("durations"))
    inclusive_durations = durations
    exclusive_durations = property(lambda self: self._pool("exclusive_durations"))

    @property
    def gpu_durations(self):
        v = [r.gpu_durations for r in self._regions.values() if r.gpu_durations is not None]
        return np.concatenate(v) if v else None

    @property
    def num_calls(self) -> int:
        return sum(r.num_calls for r in self._regions.values())

    def num_calls_per_rank(self) -> dict[int, int]:
        return {k: r.num_calls for k, r in self._regions.items()}

    def average_durations(self) -> dict[int, float]:
        return {k: r.average_duration for k, r in self._regions.items()}

    def min_durations(self) -> dict[int, float]:
        return {k: r.min_duration for k, r in self._regions.items()}

    def max_durations(self) -> dict[int, float]:
        return {k: r.max_duration for k, r in self._regions.items()}

    def total_durations(self) -> dict[int, float]:
        return {k: r.total_duration for k, r in self._regions.items()}

    @property
    def total_duration(self) -> float:
        return sum(r.total_duration for r in self._regions.values())

    inclusive_duration = total_duration

    @property
    def gpu_total_duration(self):
        v = [r.gpu_total_duration for r in self._regions.values()
             if r.gpu_total_duration is not None]
        return float(sum(v)) if v else None

    @property
    def gpu_average_duration(self):
        v = self.gpu_durations
        if v is not None and v.size:
            return float(np.mean(v))
        n = sum(int(r.stored_summary.get("gpu_count", 0)) for r in self._regions.values()
                if r.stored_summary is not None)
        total = self.gpu_total_duration
        return total / n if total is not None and n else None

    @property
    def total_exclusive_duration(self) -> float:
        return sum(r.total_exclusive_duration for r in self._regions.values())

    exclusive_duration = total_exclusive_duration

    @property
    def average_duration(self) -> float:
        v = self.durations
        if v.size:
            return float(np.mean(v))
        return self.total_duration / self.num_calls if self.num_calls else 0.0

    @property
    def std_duration(self) -> float:
        v = self.durations
        if v.size:
            return float(np.std(v))
        sums = [r.stored_summary for r in self._regions.values()
                if r.num_calls and r.stored_summary is not None]
        if not sums or any("mean" not in s or "m2" not in s for s in sums):
            return 0.0
        n = sum(int(s["count"]) for s in sums)
        mean = sum(int(s["count"]) * float(s["mean"]) for s in sums) / n
        m2 = sum(float(s["m2"]) + int(s["count"]) * (float(s["mean"]) - mean) ** 2 for s in sums)
        return float(np.sqrt(max(m2, 0.0) / n)) / NS_PER_SECOND

    def percentile_duration(self, percentile: float):
        if not 0 <= percentile <= 100:
            raise ValueError("percentile must be between 0 and 100")
        v = self.durations
        if v.size:
            return float(np.percentile(v, percentile))
        return None if self.num_calls else 0.0

    p50_duration = property(lambda self: self.percentile_duration(50))
    p95_duration = property(lambda self: self.percentile_duration(95))
    p99_duration = property(lambda self: self.percentile_duration(99))

    @property
    def rank_imbalance(self) -> float:
        """Largest per-rank total over the mean per-rank total (1.0:
        balanced); 0.0 with fewer than two ranks that spent time in it."""
        totals = [t for t in (r.total_duration for r in self._regions.values()) if t > 0]
        if len(totals) < 2:
            return 0.0
        return float(max(totals) / np.mean(totals))

    @property
    def rank_imbalance_pct(self) -> float:
        ratio = self.rank_imbalance
        return (ratio - 1.0) * 100.0 if ratio else 0.0

    @property
    def min_duration(self) -> float:
        v = self.durations
        if v.size:
            return float(np.min(v))
        m = [r.min_duration for r in self._regions.values() if r.num_calls]
        return min(m) if m else 0.0

    @property
    def max_duration(self) -> float:
        v = self.durations
        if v.size:
            return float(np.max(v))
        m = [r.max_duration for r in self._regions.values() if r.num_calls]
        return max(m) if m else 0.0

    @property
    def first_duration(self) -> float:
        timed = [r for r in self._regions.values() if r.has_timing]
        return min(timed, key=lambda r: r.first_start_time).first_duration if timed else 0.0

    @property
    def last_duration(self) -> float:
        timed = [r for r in self._regions.values() if r.has_timing]
        return max(timed, key=lambda r: r.last_end_time).last_duration if timed else 0.0

    @property
    def first_start_time(self) -> float:
        v = [r.first_start_time for r in self._regions.values() if r.has_timing]
        return min(v) if v else 0.0

    @property
    def last_end_time(self) -> float:
        v = [r.last_end_time for r in self._regions.values() if r.has_timing]
        return max(v) if v else 0.0

    def __getitem__(self, rank: int) -> Region:
        try:
            return self._regions[rank]
        except KeyError:
            raise KeyError(f"Region {self._name!r} has no data for rank {rank}. "
                           f"Available ranks: {self.ranks}") from None

    def __iter__(self) -> Iterator[int]:
        return iter(self.ranks)

    def __contains__(self, rank) -> bool:
        return rank in self._regions

    def __len__(self) -> int:
        return len(self._regions)

    def __repr__(self) -> str:
        return (f"<MPIRegion {self._name!r}: {self.num_calls} calls on "
                f"{len(self._regions)} rank(s), total {self.total_duration:.6g} s, "
                f"avg {self.average_duration:.6g} s>")


# --------------------------------------------------------------------------
# Threads and tasks (scope-profiler's /thread_table and /task_table)
# --------------------------------------------------------------------------

class ThreadInfo:
    """One row of a run's thread table: times in seconds on the run's clock."""

    __slots__ = ("cpu_time", "daemon", "end_time", "ident", "index", "name", "native_id",
                 "rank", "start_time")

    def __init__(self, index, rank, name, ident, native_id, daemon, start_ns, end_ns,
                 cpu_ns) -> None:
        self.index, self.rank, self.name = int(index), int(rank), str(name)
        self.ident, self.native_id, self.daemon = int(ident), int(native_id), bool(daemon)
        self.start_time = float(start_ns) / NS_PER_SECOND
        self.end_time = None if int(end_ns) == UNKNOWN else float(end_ns) / NS_PER_SECOND
        self.cpu_time = float(cpu_ns) / NS_PER_SECOND

    @property
    def alive(self) -> bool:
        return self.end_time is None

    @property
    def wall_time(self):
        return None if self.end_time is None else self.end_time - self.start_time

    def __repr__(self) -> str:
        return (f"ThreadInfo(rank={self.rank}, index={self.index}, name={self.name!r}, "
                f"cpu_time={self.cpu_time:.6f}s, alive={self.alive})")


class TaskInfo:
    """One row of a run's task table (an asyncio task): seconds."""

    __slots__ = ("awaiting_time", "coro_name", "created_time", "done_time", "index", "kind",
                 "name", "rank", "running_time", "steps", "thread_index")

    def __init__(self, index, rank, kind, name, coro_name, thread_index, created_ns, done_ns,
                 steps, running_ns, suspended_ns) -> None:
        self.index, self.rank, self.kind = int(index), int(rank), str(kind)
        self.name, self.coro_name = str(name), str(coro_name)
        self.thread_index = int(thread_index)
        self.created_time = float(created_ns) / NS_PER_SECOND
        self.done_time = None if int(done_ns) == UNKNOWN else float(done_ns) / NS_PER_SECOND
        self.steps = int(steps)
        self.running_time = float(running_ns) / NS_PER_SECOND
        self.awaiting_time = float(suspended_ns) / NS_PER_SECOND

    @property
    def done(self) -> bool:
        return self.done_time is not None

    @property
    def wall_time(self):
        return None if self.done_time is None else self.done_time - self.created_time

    def __repr__(self) -> str:
        return (f"TaskInfo(rank={self.rank}, index={self.index}, kind={self.kind!r}, "
                f"name={self.name!r}, running_time={self.running_time:.6f}s, "
                f"awaiting_time={self.awaiting_time:.6f}s)")


_THREAD_COLS = ("index", "name", "ident", "native_id", "daemon", "start_ns", "end_ns", "cpu_ns")
_TASK_COLS = ("index", "kind", "name", "coro_name", "thread_index", "created_ns", "done_ns",
              "steps", "running_ns", "suspended_ns")


def _lanes(table: dict, cls, cols) -> dict[int, list]:
    """rank -> [cls rows] of a lane table's columns (empty when absent or
    when a column is missing)."""
    if not table or any(c not in table for c in cols):
        return {}
    n = len(table["index"])
    ranks = table.get("ranks")
    out: dict[int, list] = {}
    for i in range(n):
        rank = int(ranks[i]) if ranks is not None else 0
        vals = [table[c][i] for c in cols]
        if cls is ThreadInfo:
            out.setdefault(rank, []).append(ThreadInfo(vals[0], rank, *vals[1:]))
        else:
            out.setdefault(rank, []).append(TaskInfo(vals[0], rank, *vals[1:]))
    return out


def _lane_ids(thread_ids, task_ids) -> np.ndarray:
    """scope-profiler's lane of each call: its task (>= 0) when in one, else
    -2 - its thread."""
    lane = -2 - np.asarray(thread_ids, dtype=np.int64)
    if task_ids is not None:
        t = np.asarray(task_ids, dtype=np.int64)
        lane = np.where(t >= 0, t, lane)
    return lane


# --------------------------------------------------------------------------
# Call stacks: the one fold over a rank's calls
# --------------------------------------------------------------------------

class CallArrays(NamedTuple):
    """One rank's nesting in start order (call_id order): parent indexes the
    same arrays (-1 for a root); region_index/call_index say where a call
    came from (names[region_index[i]], call call_index[i] of it)."""

    names: list
    source_files: list
    source_lines: list
    region_index: np.ndarray
    call_index: np.ndarray
    start_ns: np.ndarray
    end_ns: np.ndarray
    depth: np.ndarray
    parent: np.ndarray
    exclusive_ns: np.ndarray
    lane: np.ndarray = np.empty(0, dtype=np.int64)

    def __len__(self) -> int:
        return int(self.start_ns.size)


def _depths(parent: np.ndarray) -> np.ndarray:
    """Depth of each call from its parent (parents first, by start order)."""
    depth = np.zeros(parent.size, dtype=np.int64)
    for i in np.flatnonzero(parent >= 0):  # parents precede children
        depth[i] = depth[parent[i]] + 1
    return depth


def build_call_arrays(regions, rank: int) -> CallArrays:
    """One rank's calls of ``regions`` (MPIRegions) with the one fold's
    parents and exclusive times (``sps_fold_spans``, in C), per lane
    (thread/task) when the calls carry thread ids.  NestingError when a
    call ends before it starts or two calls of a lane overlap partially."""
    return _call_arrays(regions, rank, strict=True)


def _call_arrays(regions, rank: int, strict: bool) -> CallArrays:
    """build_call_arrays; without strict, overlapping calls are folded by
    the fold's clipped rule instead of raising (for exclusive times)."""
    names, files, lines, starts, ends, reg_of, call_of, lanes = [], [], [], [], [], [], [], []
    any_lane = False
    for region in regions:
        if rank not in region.regions:
            continue
        d = region.regions[rank]
        names.append(region.name)
        files.append(d.source_file)
        lines.append(d.source_lineno)
        s, e = np.asarray(d.start_times_ns, np.int64), np.asarray(d.end_times_ns, np.int64)
        starts.append(s)
        ends.append(e)
        reg_of.append(np.full(s.size, len(names) - 1, np.int64))
        call_of.append(np.arange(s.size, dtype=np.int64))
        any_lane = any_lane or d.thread_ids is not None
        lanes.append((s.size, d.thread_ids, d.task_ids))
    if not starts:
        z = np.empty(0, np.int64)
        return CallArrays(names, files, lines, z, z.copy(), z.copy(), z.copy(), z.copy(),
                          z.copy(), z.copy(), z.copy())
    start, end = np.concatenate(starts), np.concatenate(ends)
    if strict and np.any(end < start):
        raise NestingError("a recorded call ends before it starts")
    order = np.lexsort((-end, start))  # parents first
    start, end = start[order], end[order]
    region_index, call_index = np.concatenate(reg_of)[order], np.concatenate(call_of)[order]
    lane = (np.concatenate([np.full(n, -1, np.int64) if t is None else _lane_ids(t, k)
                            for n, t, k in lanes])[order] if any_lane
            else np.empty(0, np.int64))
    parent32 = np.empty(start.size, np.int32)
    self_ns = np.empty(start.size, np.int64)
    overlaps = _ext.fold_spans(start, end, None, lane if any_lane else None, parent32, self_ns)
    if overlaps and strict:
        raise NestingError(
            f"{overlaps} call(s) of rank {rank} overlap another without nesting: no call "
            "stack (a mismatched begin/end, or threads profiled without track_threads)")
    parent = parent32.astype(np.int64)
    return CallArrays(names, files, lines, region_index, call_index, start, end,
                      _depths(parent), parent, self_ns, lane)


def build_call_stack(regions, rank: int, origin: float = 0.0) -> list[dict]:
    """One dict per call of ``rank`` in start order (parents first): call_id,
    name, call_index, start, end, duration, inclusive_duration,
    exclusive_duration (seconds, minus origin for times), depth, parent
    (call_id or None), call_path ("a > b"), source_file, source_lineno,
    lane, color."""
    regions = list(regions)
    a = build_call_arrays(regions, rank)
    colors = {r.name: getattr(r, "color", None) for r in regions}
    starts = a.start_ns / NS_PER_SECOND - origin
    ends = a.end_ns / NS_PER_SECOND - origin
    dur = (a.end_ns - a.start_ns) / NS_PER_SECOND
    excl = a.exclusive_ns / NS_PER_SECOND
    calls: list[dict] = []
    for cid, row in enumerate(a.region_index.tolist()):
        name, p = a.names[row], int(a.parent[cid])
        calls.append({
            "call_id": cid, "name": name, "call_index": int(a.call_index[cid]),
            "start": float(starts[cid]), "end": float(ends[cid]),
            "duration": float(dur[cid]), "inclusive_duration": float(dur[cid]),
            "exclusive_duration": float(excl[cid]), "depth": int(a.depth[cid]),
            "parent": None if p < 0 else p,
            "call_path": name if p < 0 else f"{calls[p]['call_path']} > {name}",
            "source_file": a.source_files[row], "source_lineno": a.source_lines[row],
            "lane": int(a.lane[cid]) if a.lane.size else -1, "color": colors[name]})
    return calls


def call_stack_roots(calls: list[dict]) -> list[int]:
    """Indices of the top-level calls of a build_call_stack result."""
    return [i for i, c in enumerate(calls) if c["parent"] is None]


def call_stack_children(calls: list[dict]) -> list[list[int]]:
    """Per call, the indices of its direct children (start order)."""
    kids: list[list[int]] = [[] for _ in calls]
    for i, c in enumerate(calls):
        if c["parent"] is not None:
            kids[c["parent"]].append(i)
    return kids


# --------------------------------------------------------------------------
# ProfilingResults
# --------------------------------------------------------------------------

def _patterns(p):
    return [p] if isinstance(p, str) else p


class ProfilingResults:
    """One run as an ordered mapping region name -> :class:`MPIRegion`
    (scope-profiler's ``ProfilingResults``): ``results["solve"][0]`` is rank
    0's :class:`Region`.  Durations in seconds."""

    def __init__(self, regions: dict, metadata: dict | None = None, num_ranks: int | None = None,
                 likwid=None, perf_events=None, line_profile=None, file_path="",
                 is_root: bool = True, exclusive_totals: dict | None = None,
                 event_data_available: bool = True, threads: dict | None = None,
                 tasks: dict | None = None) -> None:
        """A result set over regions (name -> MPIRegion), as scope-profiler
        builds one: metadata (start_time_ns/finalize_time_ns give the run's
        times), num_ranks (default: the ranks of the regions), threads/tasks
        (rank -> ThreadInfo/TaskInfo rows), exclusive_totals (name -> rank
        -> ns, stored totals to use until per-call times are asked for).
        Exclusive times of regions not read from a file are folded (in C)
        on first use.  LIKWID or perf-event data: IntegrationNotAvailableError."""
        if likwid or perf_events:
            raise _counters_unavailable("LIKWID / perf-event results")
        self._is_root = is_root
        self._region_dict = dict(regions)
        self._metadata = dict(metadata or {})
        self._line_profile = dict(line_profile or {})
        #: the file's integration groups spanscope does not read (the C
        #: reader's rank_groups: "likwid", "perf_events", "line_profile")
        self._rank_groups = frozenset()
        self._file_path = Path(file_path)
        self._event_data_available = bool(event_data_available)
        self._threads = {int(k): list(v) for k, v in (threads or {}).items()}
        self._tasks = {int(k): list(v) for k, v in (tasks or {}).items()}
        if num_ranks is None:
            num_ranks = len({k for r in self._region_dict.values() for k in r})
        self._num_ranks = num_ranks
        self._run_start_time = self._metadata_time("start_time_ns")
        self._finalize_time = self._metadata_time("finalize_time_ns")
        #: the C reader's model when read from an HDF5 file (spanscope.read)
        self.model = None
        self._exclusive_populated = False
        totals = exclusive_totals or {}
        # as in scope-profiler, the newest owner of a region folds its
        # exclusive times against its own neighbours (a subset or a merge
        # nests differently); _from_model then puts the file's fold back
        for name, region in self._region_dict.items():
            for rank, r in region.regions.items():
                r._attach_exclusive_resolver(self._populate_exclusive_durations)
                stored = totals.get(name, {}).get(rank)
                if stored is not None:
                    r._set_exclusive_total(stored)

    # -- construction -----------------------------------------------------
    @classmethod
    def _from_model(cls, res, event_data: bool = True) -> "ProfilingResults":
        """The scope-profiler view of a C reader read (results.Results):
        every array is the reader's, exclusive times the fold's."""
        per: dict[str, dict[int, Region]] = {}
        for data in res.rows:
            r = Region._from_model(data, data.self_ns)
            if not event_data:
                r = _summary_only(r)
            per.setdefault(data.name, {})[data.rank] = r
        # scope-profiler's counts: every name of the region table (one with no
        # row is an MPIRegion of no ranks); ranks up to the highest with a row,
        # or mpi_size when larger; schema 1: the ranks that have regions
        nranks = _num_ranks(res.schema, {d.rank for d in res.rows}, res.metadata)
        names = res.region_names if res.schema != 1 else [n for n in res.region_names if n in per]
        out = cls({n: MPIRegion(n, per.get(n, {})) for n in names}, metadata=dict(res.metadata),
                  num_ranks=nranks, file_path=res.path, event_data_available=event_data,
                  threads=_lanes(res.thread_table, ThreadInfo, _THREAD_COLS),
                  tasks=_lanes(res.task_table, TaskInfo, _TASK_COLS))
        out.model = res
        out._rank_groups = frozenset(res.rank_groups)
        if event_data:  # the fold's self times, which the C reader made
            for data in res.rows:
                r = out._region_dict[data.name].regions[data.rank]
                if r._aggregate is None:
                    r._set_exclusive_durations(data.self_ns)
        return out

    @classmethod
    def from_h5(cls, file_path, verbose: bool = False) -> "ProfilingResults":
        """read_h5(file_path) (the same function)."""
        return read_h5(file_path, verbose=verbose)

    def _populate_exclusive_durations(self) -> None:
        """Exclusive times of every region of every rank by the one fold (C),
        for results not read from a file.  Runs once."""
        if self._exclusive_populated:
            return
        self._exclusive_populated = True
        ranks = sorted({k for r in self._region_dict.values() for k in r.ranks})
        for rank in ranks:
            mine = [r for r in self._region_dict.values() if rank in r.regions
                    and r.regions[rank]._aggregate is None]
            a = _call_arrays(mine, rank, strict=False)
            for row, name in enumerate(a.names):
                sel = a.region_index == row
                buf = np.array(self._region_dict[name].regions[rank]._durations, np.int64)
                buf[a.call_index[sel]] = a.exclusive_ns[sel]
                self._region_dict[name].regions[rank]._exclusive_durations = buf

    def _metadata_time(self, key):
        v = self._metadata.get(key)
        try:
            return None if v is None else float(v) / NS_PER_SECOND
        except (TypeError, ValueError):
            return None

    # -- regions ----------------------------------------------------------
    def get_region(self, region_name: str) -> MPIRegion:
        try:
            return self._region_dict[region_name]
        except KeyError:
            raise KeyError(f"No region named {region_name!r} in {self.file_path}. "
                           f"Available regions: {self.region_names}") from None

    @property
    def region_names(self) -> list[str]:
        return list(self._region_dict)

    def get_regions(self, include=None, exclude=None) -> list[MPIRegion]:
        """The regions whose names match an include pattern (re.match) and
        no exclude pattern, by first start time."""
        inc, exc = _patterns(include), _patterns(exclude)
        out = [r for n, r in self._region_dict.items()
               if (inc is None or any(re.match(p, n) for p in inc))
               and not (exc is not None and any(re.match(p, n) for p in exc))]
        # a region no rank recorded (a name of the region table without a
        # row) goes last; scope-profiler 0.7.5's min() fails on it
        out.sort(key=lambda r: min((x.first_start_time for x in r.regions.values()),
                                   default=float("inf")))
        return out

    def __getitem__(self, region_name: str) -> MPIRegion:
        return self.get_region(region_name)

    def __iter__(self) -> Iterator[MPIRegion]:
        return iter(self._region_dict.values())

    def __contains__(self, region_name) -> bool:
        return region_name in self._region_dict

    def __len__(self) -> int:
        return len(self._region_dict)

    def __repr__(self) -> str:
        return (f"<{type(self).__name__} {self.file_path.name!r}: "
                f"{len(self._region_dict)} region(s), {self._num_ranks} rank(s)>")

    # -- summaries --------------------------------------------------------
    @staticmethod
    def _summary_row(region: MPIRegion) -> dict:
        return {**region.get_summary(), "tags": region.tags,
                "p50_duration": region.p50_duration, "p95_duration": region.p95_duration,
                "p99_duration": region.p99_duration, "rank_imbalance": region.rank_imbalance,
                "rank_imbalance_pct": region.rank_imbalance_pct, "p50": region.p50_duration,
                "p95": region.p95_duration, "p99": region.p99_duration,
                "imbalance": region.rank_imbalance_pct}

    def summary(self, include=None, exclude=None) -> list[dict]:
        """One dict per region (MPIRegion.get_summary plus tags, p50/p95/p99,
        rank_imbalance[_pct]), by first start time; seconds."""
        return [self._summary_row(r) for r in self.get_regions(include, exclude)]

    def to_dataframe(self, include=None, exclude=None, per_rank: bool = False):
        """summary() as a pandas DataFrame (per_rank: one row per region and
        rank).  ImportError naming pandas when it is not installed."""
        pd = _pandas("to_dataframe()")
        regions = self.get_regions(include, exclude)
        if not per_rank:
            return pd.DataFrame([self._summary_row(r) for r in regions])
        rows = [{"name": r.name, "rank": k, **r[k].get_summary(),
                 "p50_duration": r[k].p50_duration, "p95_duration": r[k].p95_duration,
                 "p99_duration": r[k].p99_duration} for r in regions for k in r.ranks]
        return pd.DataFrame(rows)

    def _require_event_data(self, operation: str) -> None:
        if not self._event_data_available:
            raise EventDataUnavailableError(
                f"{operation}() requires per-call events, but this profile was loaded "
                "with read_h5_summary(); load it with read_h5()")

    def events(self, include=None, exclude=None, ranks=None, relative: bool = True,
               origin: float | None = None) -> list[dict]:
        """One dict per call of every selected region and rank (name, rank,
        call_index, start, end, duration in seconds from time_origin when
        relative, else raw, or from origin)."""
        self._require_event_data("events")
        if origin is None:
            origin = self.time_origin if relative else 0.0
        out = []
        for r in self.get_regions(include, exclude):
            out.extend(r.events(ranks=ranks, origin=origin))
        return out

    def to_events_dataframe(self, include=None, exclude=None, ranks=None,
                            relative: bool = True, origin: float | None = None):
        """events() as a pandas DataFrame; ImportError naming pandas without it."""
        self._require_event_data("to_events_dataframe")
        pd = _pandas("to_events_dataframe()")
        ev = self.events(include, exclude, ranks, relative, origin)
        cols = ["name", "rank", "call_index", "start", "end", "duration"]
        if any("gpu_duration" in e for e in ev):
            cols.append("gpu_duration")
        return pd.DataFrame(ev, columns=cols)

    def call_stack(self, rank: int = 0, include=None, exclude=None, relative: bool = True,
                   origin: float | None = None) -> list[dict]:
        """build_call_stack over the selected regions of one rank."""
        self._require_event_data("call_stack")
        if origin is None:
            origin = self.time_origin if relative else 0.0
        return build_call_stack(self.get_regions(include, exclude), rank=rank, origin=origin)

    def call_graph(self, rank: int = 0, include=None, exclude=None) -> list[dict]:
        """Call relationships without times: call_id, parent_id, name,
        call_index, depth.  From the stored call/parent ids when every
        region of the rank has them (filtered calls re-hang under their
        nearest kept ancestor), else from call_stack()."""
        kept_names = {r.name for r in self.get_regions(include, exclude)}
        on_rank = [r for r in self.get_regions() if rank in r.regions]
        if not on_rank or any(r.regions[rank].call_ids is None
                              or r.regions[rank].parent_ids is None for r in on_rank):
            return [{"call_id": c["call_id"], "parent_id": c["parent"], "name": c["name"],
                     "call_index": c["call_index"], "depth": c["depth"]}
                    for c in self.call_stack(rank=rank, include=include, exclude=exclude)]
        parent_of: dict[int, int | None] = {}
        kept: dict[int, tuple[str, int]] = {}
        for r in on_rank:
            d = r.regions[rank]
            for i, (cid, pid) in enumerate(zip(d.call_ids.tolist(), d.parent_ids.tolist())):
                parent_of[cid] = None if pid < 0 else pid
                if r.name in kept_names:
                    kept[cid] = (r.name, i)
        nearest: dict[int, int | None] = {}
        depth: dict[int, int] = {}
        for cid in sorted(parent_of):
            p = parent_of[cid]
            anc = None if p is None else p if p in kept else nearest.get(p)
            nearest[cid] = anc
            if cid in kept:
                depth[cid] = 0 if anc is None else depth.get(anc, -1) + 1
        return [{"call_id": c, "parent_id": nearest[c], "name": kept[c][0],
                 "call_index": kept[c][1], "depth": depth[c]} for c in sorted(kept)]

    def print_summary(self, include=None, exclude=None, ranks=None, sort: str = "start",
                      title: str | None = None, stream=None, suppress_notes: bool = False,
                      columns=None, percentage_mode: str = "coverage") -> None:
        """Prints the region table as scope-profiler 0.7.5 does (its
        summary.print_region_table; the renderer is _results_table): a
        rounded box with one row per call path indented as a tree, each
        parent followed by an "(own)" row (its exclusive time), a
        self-recursive region as one "name ↻" row, call counts inline
        unless a calls column is chosen; then an Info box with the title
        ("Summary: ..."; default default_title()), the file's spanscope
        commands and the notes.  columns by scope-profiler's names (region,
        ranks, calls, total, percent, parent_percent, avg, gpu_total,
        gpu_avg, min, max, first, last, std, p50, p95, p99, imbalance;
        default region, percent, total, percent left out without a session
        region); sort "start" keeps the tree, other keys sort flat,
        descending.  "% session" is a path's wall-clock coverage (or, with
        percentage_mode="exclusive", its own time) over the session region's
        total.  Nothing on non-root results.  ValueError for an unknown
        column, sort key or percentage mode."""
        from spanscope._results_table import (needs_distributions, print_region_table,
                                              region_rows)
        if not self._is_root:
            return
        # columns without std/percentiles: a file's rows pooled in C by call
        # path, not every call grouped in numpy
        rows = region_rows(self, include=include, exclude=exclude, ranks=ranks, sort=sort,
                           percentage_mode=percentage_mode,
                           need_distributions=needs_distributions(columns, sort))
        print_region_table(rows, title=self.default_title() if title is None else title,
                           stream=stream, suppress_notes=suppress_notes, columns=columns,
                           percentage_mode=percentage_mode, file_path=self.file_path)

    def default_title(self) -> str:
        unit = "rank" if self.num_ranks == 1 else "ranks"
        title = f"{os.path.relpath(self.file_path)} ({self.num_ranks} {unit})"
        return f"{self.label} - {title}" if self.label is not None else title

    # -- run properties ---------------------------------------------------
    file_path = property(lambda self: self._file_path)
    is_root = property(lambda self: self._is_root)
    has_event_data = property(lambda self: self._event_data_available)
    metadata = property(lambda self: self._metadata)
    threads = property(lambda self: self._threads,
                       doc="rank -> ThreadInfo rows of /thread_table (empty without).")
    tasks = property(lambda self: self._tasks,
                     doc="rank -> TaskInfo rows of /task_table (empty without).")

    @property
    def line_profile(self) -> dict:
        """rank -> line-profiler records.  A file with scope-profiler's
        rank<N>/line_profile groups raises IntegrationNotAvailableError
        (spanscope does not read them yet) rather than answer {}."""
        if "line_profile" in self._rank_groups:
            raise _line_profile_unavailable(self._file_path)
        return self._line_profile
    num_ranks = property(lambda self: self._num_ranks)

    @property
    def label(self):
        v = self._metadata.get("label")
        return str(v) if v else None

    @label.setter
    def label(self, value) -> None:
        if value:
            self._metadata["label"] = str(value)
        else:
            self._metadata.pop("label", None)

    @property
    def display_label(self) -> str:
        return self.label or self._file_path.stem

    @property
    def num_nodes(self):
        v = self._metadata.get("num_nodes")
        if v is not None:
            try:
                return int(v)
            except (TypeError, ValueError):
                return None
        return 1 if self._num_ranks == 1 else None

    def lane_label(self, lane: int, rank: int = 0) -> str:
        lane = int(lane)
        if lane >= 0:
            for t in self._tasks.get(int(rank), []):
                if t.index == lane:
                    thread = self.lane_label(-2 - t.thread_index, rank)
                    return f"{t.name} ({t.coro_name.rsplit('.', 1)[-1]}) on {thread}"
            return f"task {lane}"
        if lane == -1:
            return "unknown lane"
        for t in self._threads.get(int(rank), []):
            if t.index == -2 - lane:
                return t.name
        return f"thread {-2 - lane}"

    def thread_summary(self, rank: int = 0) -> list[dict]:
        """Per thread of the rank's thread table: index, name, alive,
        wall_time, cpu_time, num_calls and region_time (its top-level calls'
        summed duration, seconds).  Empty without a thread table."""
        threads = self._threads.get(int(rank), [])
        if not threads:
            return []
        a = build_call_arrays(self._region_dict.values(), int(rank))
        roots = a.parent < 0
        dur = (a.end_ns - a.start_ns)[roots]
        lane = a.lane[roots] if a.lane.size else np.full(int(roots.sum()), -1, np.int64)
        counts: dict[int, int] = {}
        for r in self._region_dict.values():
            d = r.regions.get(int(rank))
            if d is None or d.thread_ids is None:
                continue
            for i, n in zip(*np.unique(d.thread_ids, return_counts=True)):
                counts[int(i)] = counts.get(int(i), 0) + int(n)
        out = []
        for t in threads:
            lanes = {-2 - t.index} | {k.index for k in self._tasks.get(int(rank), [])
                                      if k.thread_index == t.index}
            busy = int(dur[np.isin(lane, list(lanes))].sum())
            out.append({"index": t.index, "name": t.name, "alive": t.alive,
                        "wall_time": t.wall_time, "cpu_time": t.cpu_time,
                        "num_calls": counts.get(t.index, 0),
                        "region_time": busy / NS_PER_SECOND})
        return out

    # -- hardware counters: another issue ---------------------------------
    @property
    def has_likwid(self) -> bool:
        raise _counters_unavailable("LIKWID results")

    @property
    def likwid_ranks(self):
        raise _counters_unavailable("LIKWID results")

    def get_likwid_regions(self, rank=None):
        raise _counters_unavailable("LIKWID results")

    def get_likwid_region(self, tag, rank=0):
        raise _counters_unavailable("LIKWID results")

    def likwid_to_dataframe(self):
        raise _counters_unavailable("LIKWID results")

    def print_likwid_summary(self, stream=None):
        raise _counters_unavailable("LIKWID results")

    @property
    def has_perf_events(self) -> bool:
        raise _counters_unavailable("perf-event counts")

    def get_perf_events(self, rank=None):
        raise _counters_unavailable("perf-event counts")

    # -- times (seconds on the recording clock) ----------------------------
    @property
    def minimum_start_time(self) -> float:
        v = [r.first_start_time for r in self.get_regions() if r.has_timing]
        return min(v) if v else 0.0

    run_start_time = property(lambda self: self._run_start_time)
    finalize_time = property(lambda self: self._finalize_time)

    @property
    def time_origin(self) -> float:
        return self._run_start_time if self._run_start_time is not None \
            else self.minimum_start_time

    @property
    def startup_time(self) -> float:
        return self.minimum_start_time - self.time_origin

    @property
    def maximum_end_time(self) -> float:
        v = [r.last_end_time for r in self.get_regions() if r.has_timing]
        return max(v) if v else 0.0

    @property
    def time_span(self) -> float:
        if not any(r.has_timing for r in self.get_regions()):
            return 0.0
        return self.maximum_end_time - self.minimum_start_time

    @property
    def total_time(self):
        if self._run_start_time is None or self._finalize_time is None:
            return None
        return self._finalize_time - self._run_start_time


def _pandas(what: str):
    try:
        import pandas as pd
    except ImportError as exc:
        raise ImportError(f"{what} requires pandas, which is not installed: "
                          "pip install pandas") from exc
    return pd


def _summary_only(r: Region) -> Region:
    """r as summary-only results hold it: its statistics, no events."""
    if r._aggregate is not None:  # already statistics only
        return Region(np.empty(0, np.int64), np.empty(0, np.int64), aggregate=r._aggregate,
                      source_file=r.source_file, source_lineno=r.source_lineno,
                      source_text=r.source_text, tags=r.tags, event_data_available=False)
    n = r.num_calls
    stored = {"count": n, "total": int(r._durations.sum()) if n else 0,
              "minimum": int(r._durations.min()) if n else 0,
              "maximum": int(r._durations.max()) if n else 0,
              "first": int(r._durations[0]) if n else 0,
              "last": int(r._durations[-1]) if n else 0,
              "start_minimum": int(r._start_times.min()) if n else 0,
              "end_maximum": int(r._end_times.max()) if n else 0,
              "exclusive": int(r._resolved_exclusive_durations().sum()) if n else 0,
              "mean": float(r._durations.mean()) if n else 0.0,
              "m2": float(((r._durations - r._durations.mean()) ** 2).sum()) if n else 0.0}
    return Region(np.empty(0, np.int64), np.empty(0, np.int64), aggregate=stored,
                  source_file=r.source_file, source_lineno=r.source_lineno,
                  source_text=r.source_text, tags=r.tags, event_data_available=False)


# --------------------------------------------------------------------------
# Reading
# --------------------------------------------------------------------------

def _num_ranks(schema: int, ranks: set, metadata: dict) -> int:
    """scope-profiler's rank count: up to the highest rank with a row, or
    mpi_size when larger, 0 without rows; schema 1: the ranks with regions."""
    if schema == 1:
        return len(ranks)
    mpi_size = metadata.get("mpi_size", 1)
    mpi_size = int(mpi_size) if isinstance(mpi_size, (int, np.integer)) else 1
    return max(mpi_size, max(ranks) + 1) if ranks else 0


def _c_errors(path: str, exc: ValueError) -> Exception:
    """The C reader's ValueError as scope-profiler raises it."""
    if "unsupported schema version" in str(exc):
        return HDF5SchemaError(f"{exc}; upgrade spanscope to read this file")
    return CorruptProfileError(f"{path} is not a readable scope-profiler HDF5 profile: {exc}")


def _read_model(file_path):
    """One read of the file by the C reader (spanscope.read), its errors as
    scope-profiler raises them: FileNotFoundError, HDF5SchemaError for a
    schema it does not know (the C reader's "unsupported schema version"),
    CorruptProfileError for anything else that is not a valid profile."""
    from spanscope.results import read
    path = os.fspath(file_path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"No profile at {path!r}")
    try:
        return read(path)
    except ValueError as exc:
        raise _c_errors(path, exc) from exc


def read_h5(file_path, verbose: bool = False) -> ProfilingResults:
    """Reads an HDF5 profile (scope-profiler schema 1, 2 or 3, or spanscope's)
    into ProfilingResults, as scope-profiler's read_h5 does: one read by the
    C reader.  FileNotFoundError when the file does not exist,
    CorruptProfileError (an OSError) when it is not a valid profile."""
    res = _read_model(file_path)
    if verbose:
        for d in res.rows:
            print(f"name = {d.name!r}, rank = {d.rank}")
    return ProfilingResults._from_model(res)


_SUMMARY_KEYS = ("total", "minimum", "maximum", "first", "last", "start_minimum",
                 "end_maximum", "gpu_count", "gpu_total", "mean", "m2")


def _summary_results(path: str, f: dict) -> ProfilingResults:
    """Summary-only results from an index-only read (_ext.read_index): each
    row's stored summary_statistics, exclusive_totals and source columns."""
    from spanscope.results import _ints, _row_extra, _table
    extras = {k: v if isinstance(v, list) or v is None else _ints(v)
              for k, v in f["row_extras"].items()}
    names = f["names"]
    per: dict[str, dict[int, Region]] = {}
    totals: dict[str, dict[int, int]] = {}
    for i, row in enumerate(f["rows"]):
        name, rank, count, stored = names[row[0]], row[1], row[3], row[8]
        agg = dict(zip(_SUMMARY_KEYS, f["row_summary"][i]))
        agg["count"] = count
        agg["exclusive"] = stored if stored >= 0 else agg["total"]
        if stored >= 0:
            totals.setdefault(name, {})[rank] = stored
        x = _row_extra(extras, i)
        tags = tuple(json.loads(x["tags_json"])) if x["tags_json"] else ()
        per.setdefault(name, {})[rank] = Region(
            np.empty(0, np.int64), np.empty(0, np.int64), aggregate=agg,
            source_file=x["source_file"] or None, source_lineno=_line(x["source_line"]),
            source_text=x["source_text"] or None, tags=tags, event_data_available=False)
    meta = {k: np.asarray(v) if isinstance(v, list) else v for k, v in f["metadata"].items()}
    out = ProfilingResults(
        {n: MPIRegion(n, per.get(n, {})) for n in names}, metadata=meta,
        num_ranks=_num_ranks(f["schema"], {r[1] for r in f["rows"]}, meta), file_path=path,
        exclusive_totals=totals, event_data_available=False,
        threads=_lanes(_table(f["thread_table"]), ThreadInfo, _THREAD_COLS),
        tasks=_lanes(_table(f["task_table"]), TaskInfo, _TASK_COLS))
    out._rank_groups = frozenset(f["rank_groups"])
    return out


def _check_integrations(path: str, groups, include_likwid, include_line_profile) -> None:
    """read_h5_summary's include_*: True asks for data spanscope does not
    read yet, an IntegrationNotAvailableError when the file has it (False,
    None, or a file without it: nothing to refuse)."""
    if include_likwid and "likwid" in groups:
        raise _counters_unavailable(f"LIKWID results (include_likwid=True; {path} has "
                                    "rank<N>/likwid groups)")
    if include_line_profile and "line_profile" in groups:
        raise _line_profile_unavailable(path)


def read_h5_summary(file_path, verbose: bool = False, *, fallback: bool = True,
                    include_likwid: bool = True, include_line_profile: bool = True,
                    regions=None, ranks=None) -> ProfilingResults:
    """Summary-only results, as scope-profiler's read_h5_summary: each
    region's stored statistics (summary_statistics: count, total, min/max,
    first/last, mean/m2; exclusive_totals), read by the C reader without
    the events (sps_file_open_index: memory does not grow with the calls);
    events(), call_stack() raise EventDataUnavailableError, percentiles are
    None.  A file without summary_statistics (schemas 1/2, hand-built
    files) raises SummaryDataUnavailable, or with fallback is read whole
    with its events (read_h5).  regions / ranks keep only those; LIKWID and
    line-profile data are another issue's: include_likwid /
    include_line_profile True (the defaults) on a file that has such
    groups raise IntegrationNotAvailableError (pass False to read the
    timing alone); False / None, or a file without them, read as usual."""
    path = os.fspath(file_path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"No profile at {path!r}")
    try:
        f = _ext.read_index(path)
    except ValueError as exc:
        if "schema 1" not in str(exc):
            raise _c_errors(path, exc) from exc
        f = None  # schema 1 has no index to read alone
    if f is not None:
        _check_integrations(path, f["rank_groups"], include_likwid, include_line_profile)
    if f is not None and f["layout"] == "aggregate":
        out = ProfilingResults._from_model(_read_model(path), event_data=False)
    elif f is not None and f["has_summary_statistics"]:
        out = _summary_results(path, f)
    elif not fallback:
        raise SummaryDataUnavailable(
            f"{path} has no fixed-size summary statistics (written before they existed); "
            "read it with read_h5()")
    else:
        out = read_h5(path, verbose=verbose)
        if f is None:  # schema 1: its groups are known once it is read
            _check_integrations(path, out._rank_groups, include_likwid, include_line_profile)
    names = None if regions is None else {regions} if isinstance(regions, str) else set(regions)
    rks = None if ranks is None else {ranks} if isinstance(ranks, int) else set(ranks)
    if names is not None or rks is not None:
        kept = {}
        for n, r in out._region_dict.items():
            if names is not None and n not in names:
                continue
            sel = {k: v for k, v in r.regions.items() if rks is None or k in rks}
            if sel:
                kept[n] = MPIRegion(n, sel)
        out._region_dict = kept
        out.model = None  # no longer the whole file
    return out


def merge_results(*result_sets, label: str | None = None, file_path=None) -> ProfilingResults:
    """Several result sets as one (a Python driver's regions and a native
    library's, say): ranks line up by number; non-root sets are skipped.
    ValueError with no sets, or when a region name is in two of them
    (merging would count it twice)."""
    if not result_sets:
        raise ValueError("merge_results() needs at least one result set")
    roots = [r for r in result_sets if r.is_root]
    if not roots:
        return result_sets[0]
    seen: dict[str, int] = {}
    for i, res in enumerate(roots):
        for name in res.region_names:
            if name in seen and seen[name] != i:
                raise ValueError(
                    f"region {name!r} appears in more than one result set; merging them "
                    "would double-count it. Give the regions distinct names (a 'fortran:' "
                    "prefix, say) before merging.")
            seen[name] = i
    merged: dict[str, MPIRegion] = {}
    metadata: dict = {}
    threads: dict = {}
    tasks: dict = {}
    nranks = 0
    for res in roots:
        metadata = {**res.metadata, **metadata}
        nranks = max(nranks, res.num_ranks)
        for k, v in res.threads.items():
            threads.setdefault(k, v)
        for k, v in res.tasks.items():
            tasks.setdefault(k, v)
        for r in res.get_regions():
            merged[r.name] = MPIRegion(r.name, {k: _detached(x) for k, x in r.regions.items()})
    if label is not None:
        metadata["label"] = label
    out = ProfilingResults(merged, metadata=metadata, num_ranks=nranks,
                           file_path=file_path if file_path is not None else roots[0].file_path,
                           threads=threads, tasks=tasks)
    # integration data of any input still is not there to merge: say so
    out._rank_groups = frozenset().union(*(r._rank_groups for r in roots))
    return out


def _detached(r: Region) -> Region:
    """A copy of r sharing its arrays, without its owner's exclusive times
    (the merged set folds again: against other neighbours they differ),
    so the input result set keeps its own."""
    c = Region.__new__(Region)
    c.__dict__.update(r.__dict__)
    c._exclusive_durations = None
    c._exclusive_resolver = None
    return c
