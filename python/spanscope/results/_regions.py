"""scope-profiler's results objects: a region on one rank (Region), on
every rank (MPIRegion), and the thread and task tables' rows."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import numpy as np

from spanscope.results._errors import EventDataUnavailableError, NS_PER_SECOND, UNKNOWN, _i64

__all__ = ["MPIRegion", "Region", "TaskInfo", "ThreadInfo"]


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
