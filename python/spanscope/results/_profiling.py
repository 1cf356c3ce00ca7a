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

import numpy as np

from spanscope import _ext
from spanscope.results._model import _ints, _row_extra, _table, read
from spanscope.results._table import (needs_distributions, print_region_table,
                                              region_rows)
from spanscope.results._calls import _call_arrays, build_call_arrays, build_call_stack
from spanscope.results._errors import CorruptProfileError, EventDataUnavailableError, HDF5SchemaError, NS_PER_SECOND, SummaryDataUnavailable, _counters_unavailable
from spanscope.results._regions import MPIRegion, Region, TaskInfo, ThreadInfo, _TASK_COLS, _THREAD_COLS, _line, _lanes
from spanscope.results._likwid import LikwidDataError, LikwidRegionResult, print_likwid_tables, read_likwid_file
from spanscope.results._lines import LINE_PROFILE_GROUP, read_line_profile_file

__all__ = ["ProfilingResults", "merge_results", "read_h5", "read_h5_summary"]


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
        on first use.  likwid: rank -> {tag: LikwidRegionResult}.
        perf_events: rank -> {region: PerfEventTotals} (scope-profiler's;
        None: a file's rank<N>/perf_events groups, read on first use)."""
        #: rank -> {region: PerfEventTotals}; None until get_perf_events
        #: reads the file's rank<N>/perf_events groups (results/_counters.py)
        self._perf_events = (None if perf_events is None else
                             {int(k): dict(v) for k, v in dict(perf_events).items()})
        self._is_root = is_root
        self._region_dict = dict(regions)
        self._metadata = dict(metadata or {})
        self._line_profile = dict(line_profile or {})
        #: rank -> {tag: LikwidRegionResult} (the file's rank<N>/likwid groups)
        self._likwid = {int(k): dict(v) for k, v in (likwid or {}).items()}
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
        if "likwid" in out._rank_groups:  # scope-profiler's rank<N>/likwid groups
            out._likwid = _read_likwid(res.path)
            out._rank_groups = out._rank_groups - {"likwid"}
        if LINE_PROFILE_GROUP in out._rank_groups:  # rank<N>/line_profile (results/_lines.py)
            out._line_profile = read_line_profile_file(res.path)
            out._rank_groups = out._rank_groups - {LINE_PROFILE_GROUP}
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
        """Persisted line-profiler records keyed by rank (scope-profiler's
        ``line_profile``): each record a dict with ``region``,
        ``filename``, ``function``, ``first_lineno``, ``line_numbers``,
        ``hits``, ``times`` and ``unit`` (the seconds of a line are
        ``times * unit``), and ``source`` / ``source_first_lineno`` where
        the function's source was stored (docs/line-profiles.md).  {} for
        a run without line profiles."""
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

    # -- LIKWID (results/_likwid.py) ----------------------------------------
    @property
    def has_likwid(self) -> bool:
        """Whether the run holds LIKWID marker results."""
        return any(self._likwid.values())

    @property
    def likwid_ranks(self) -> list:
        """The ranks with LIKWID results, ascending."""
        return sorted(rank for rank, regions in self._likwid.items() if regions)

    def get_likwid_regions(self, rank=None) -> dict:
        """LIKWID results: rank -> {tag: LikwidRegionResult}, or with rank
        that rank's {tag: LikwidRegionResult} ({} when it has none)."""
        if rank is None:
            return dict(self._likwid)
        return self._likwid.get(int(rank), {})

    def get_likwid_region(self, tag: str, rank: int = 0) -> LikwidRegionResult:
        """One region's LIKWID results on one rank; KeyError naming the
        tags there when the rank has no such region."""
        regions = self._likwid.get(int(rank), {})
        if tag not in regions:
            raise KeyError(f"No LIKWID region {tag!r} for rank {rank} in {self.file_path}. "
                           f"Available: {sorted(regions)}")
        return regions[tag]

    def likwid_to_dataframe(self):
        """Every LIKWID event and metric as a pandas DataFrame: one row per
        (rank, region, hardware thread) with rank, region, thread, cpu, group,
        time, call_count and a column per event label and metric (empty
        without LIKWID data).  ImportError without pandas."""
        pd = _pandas("likwid_to_dataframe()")
        rows = []
        for rank in self.likwid_ranks:
            for tag, result in self._likwid[rank].items():
                for t in range(len(result.times)):
                    row = {"rank": rank, "region": tag, "thread": t,
                           "cpu": result.cpus[t] if t < len(result.cpus) else np.nan,
                           "group": result.group_name, "time": result.times[t],
                           "call_count": result.call_counts[t]}
                    for name, values in zip(result.event_labels, result.events):
                        row[name] = values[t]
                    for name, values in zip(result.metric_names, result.metrics):
                        row[name] = values[t]
                    rows.append(row)
        return pd.DataFrame(rows)

    def print_likwid_summary(self, stream=None) -> None:
        """Prints each LIKWID region's per-thread calls, runtime, events
        and metrics ("No LIKWID data in <file>" without any)."""
        out = stream if stream is not None else None

        def say(*a):
            print(*a, file=out)
        if not self.has_likwid:
            say(f"No LIKWID data in {self.file_path}")
            return
        for rank in self.likwid_ranks:
            for tag, result in self._likwid[rank].items():
                header = f"rank {rank}  region {tag!r}"
                if result.group_name:
                    header += f"  group {result.group_name}"
                say(header)
                width = max([len(n) for n in result.event_labels + result.metric_names] + [30])
                for t, cpu in enumerate(result.cpus or range(len(result.times))):
                    say(f"  cpu {cpu}: {result.call_counts[t]} call(s), "
                        f"{result.times[t]:.6f} s")
                    for name, values in zip(result.event_labels, result.events):
                        say(f"    {name:<{width}} {values[t]:>20.6g}")
                    for name, values in zip(result.metric_names, result.metrics):
                        say(f"    {name:<{width}} {values[t]:>20.6g}")

    def print_likwid_tables(self, include=None, exclude=None, ranks=None,
                            stream=None) -> None:
        """The LIKWID counter tables (one per rank and event group; see
        results._likwid.likwid_tables); nothing without LIKWID data."""
        print_likwid_tables(self, include=include, exclude=exclude, ranks=ranks,
                            stream=stream)

    @property
    def has_perf_events(self) -> bool:
        """Whether this run recorded perf_event counters (scope-profiler's
        perf_events=[...]): some rank has some region's totals."""
        return any(self.get_perf_events().values())

    def get_perf_events(self, rank=None) -> dict:
        """perf_event totals by region (scope-profiler's): rank ->
        {region: PerfEventTotals}, or with rank that rank's {region:
        PerfEventTotals} ({} when it has none).  Results read whole from
        an HDF5 file read its rank<N>/perf_events groups here, once
        (results/_counters.read_perf_events: CorruptProfileError for a
        malformed group); results built in memory hold what they were
        given; merged or summary-only results hold none, as in
        scope-profiler."""
        if self._perf_events is None:
            from spanscope.results._counters import read_perf_events
            model = self.model
            self._perf_events = (read_perf_events(model.path)
                                 if model is not None and "perf_events" in model.rank_groups
                                 else {})
        if rank is None:
            return dict(self._perf_events)
        return self._perf_events.get(int(rank), {})

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


def _read_likwid(path) -> dict:
    """The file's rank<N>/likwid groups (results/_likwid.py), a malformed
    one as CorruptProfileError naming it."""
    try:
        return read_likwid_file(path)
    except LikwidDataError as exc:
        raise CorruptProfileError(f"{path}: its LIKWID results cannot be read: {exc}") from exc


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
    with its events (read_h5).  regions / ranks keep only those (ranks:
    the LIKWID results and line profiles too); include_likwid /
    include_line_profile True (the defaults) read the file's LIKWID
    results / line profiles, False or None leave them out."""
    path = os.fspath(file_path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"No profile at {path!r}")
    try:
        f = _ext.read_index(path)
    except ValueError as exc:
        if "schema 1" not in str(exc):
            raise _c_errors(path, exc) from exc
        f = None  # schema 1 has no index to read alone
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
    names = None if regions is None else {regions} if isinstance(regions, str) else set(regions)
    rks = None if ranks is None else {ranks} if isinstance(ranks, int) else set(ranks)
    if "likwid" in out._rank_groups and include_likwid:  # the summary read skips them
        out._likwid = _read_likwid(path)
    out._rank_groups = out._rank_groups - {"likwid"}
    if LINE_PROFILE_GROUP in out._rank_groups and include_line_profile:  # skipped too
        out._line_profile = read_line_profile_file(path)
    out._rank_groups = out._rank_groups - {LINE_PROFILE_GROUP}
    if not include_line_profile:
        out._line_profile = {}
    elif rks is not None:
        out._line_profile = {r: v for r, v in out._line_profile.items() if r in rks}
    if not include_likwid:
        out._likwid = {}
    elif rks is not None:
        out._likwid = {r: v for r, v in out._likwid.items() if r in rks}
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
    likwid: dict = {}
    line_profile: dict = {}
    threads: dict = {}
    tasks: dict = {}
    nranks = 0
    for res in roots:
        metadata = {**res.metadata, **metadata}
        for rank, regions in res.get_likwid_regions().items():  # LIKWID's, rank by rank
            likwid.setdefault(rank, {}).update(regions)
        for rank, records in res.line_profile.items():  # line profiles, rank by rank
            line_profile.setdefault(rank, []).extend(records)
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
                           threads=threads, tasks=tasks, likwid=likwid,
                           line_profile=line_profile)
    # the integration groups the inputs hold (inspect names them)
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
