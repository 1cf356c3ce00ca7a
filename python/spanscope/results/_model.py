"""Reading a spanscope (or scope-profiler schema 1/2/3) HDF5 file for analysis.

``read(path)`` returns :class:`Results`: the file as the C reader's model
(``sps_file_open``), the one every other view of it sees (``spanscope
report``, diff, html, merge): per region and rank the calls' numpy arrays
with the one fold's parents and self times, aggregate statistics, counters
and ``/metadata``; plus ``summary()``, the same table ``spanscope report``
prints.

The file is read once, in C.  The arrays are read-only views of the C
reader's own arrays (``np.array(a)`` makes a writable copy); they keep the
reader's memory alive while any of them lives.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np

from spanscope import _ext
from spanscope.results._samples import Samples, read_stack_samples

__all__ = ["EventArrays", "NO_ROW", "Results", "RegionData", "read"]

#: ``EventArrays.row`` of an event that no row of the index covers.
NO_ROW = 2**32 - 1

_AGG_KEYS = ("counts", "totals", "minimums", "maximums")


@dataclass
class RegionData:
    """One region's calls on one rank (ns, CLOCK_MONOTONIC timeline).

    ``call_ids``, ``parent_ids`` and ``thread_ids`` are the file's columns
    as stored (None when it lacks them); ``self_ns`` and ``parent_index``
    are the fold's, whatever the file holds.
    """

    name: str
    rank: int
    start_ns: np.ndarray
    durations_ns: np.ndarray
    call_ids: np.ndarray | None = None
    parent_ids: np.ndarray | None = None
    thread_ids: np.ndarray | None = None
    #: sum of the fold's self times (aggregate files: as stored, -1 if absent)
    exclusive_total_ns: int = -1
    #: per call: duration minus the part of its direct children inside it
    self_ns: np.ndarray | None = None
    #: per call: the parent's file-wide event index (Results.events), -1 for a root
    parent_index: np.ndarray | None = None
    #: file-wide event index of the first call: call i is event first_event + i
    first_event: int = 0
    #: aggregate files: the row's counts, totals, minimums, maximums
    #: (and exclusives when stored); None for columnar files
    aggregate: dict[str, int] | None = None
    #: scope-profiler's per-row columns (None where the file lacks them):
    #: the call site, the source text, the tags (JSON list text as stored)
    #: and the per-call metadata (JSON list text)
    source_file: str | None = None
    source_line: int | None = None
    source_text: str | None = None
    tags_json: str | None = None
    event_metadata_json: str | None = None
    #: scope-profiler's optional per-call columns, as stored (None: absent)
    gpu_durations: np.ndarray | None = None
    task_ids: np.ndarray | None = None
    await_ns: np.ndarray | None = None

    @property
    def end_ns(self) -> np.ndarray:
        return self.start_ns + self.durations_ns

    @property
    def num_calls(self) -> int:
        if self.aggregate is not None:
            return self.aggregate["counts"]
        return int(self.durations_ns.size)

    @property
    def total_ns(self) -> int:
        if self.aggregate is not None:
            return self.aggregate["totals"]
        return int(self.durations_ns.sum())

    @property
    def mean_ns(self) -> float:
        n = self.num_calls
        return self.total_ns / n if n else 0.0


@dataclass
class EventArrays:
    """Every event of the file, in file order (the rows' calls are slices)."""

    start_ns: np.ndarray
    durations_ns: np.ndarray
    self_ns: np.ndarray
    #: the fold's parent of each event, a file-wide index, -1 for a root
    parent: np.ndarray
    #: index into Results.rows of each event, NO_ROW where no row covers it
    row: np.ndarray
    call_ids: np.ndarray | None = None
    parent_ids: np.ndarray | None = None
    thread_ids: np.ndarray | None = None
    gpu_durations: np.ndarray | None = None
    task_ids: np.ndarray | None = None
    await_ns: np.ndarray | None = None


@dataclass
class Results:
    """The contents of one file."""

    path: str
    region_names: list[str]
    regions: dict[str, dict[int, RegionData]] = field(default_factory=dict)
    metadata: dict = field(default_factory=dict)
    #: aggregate files: name -> the statistics of res[name] (RegionData.aggregate)
    aggregate: dict[str, dict[str, int]] = field(default_factory=dict)
    #: counter name -> {"times_ns", "values", "ranks"} numpy arrays (time order)
    counters: dict[str, dict[str, np.ndarray]] = field(default_factory=dict)
    schema: int = 3
    #: "columnar" or "aggregate"
    layout: str = "columnar"
    #: parents from the file's call_ids/parent_ids (else by the interval rule)
    nested_by_ids: bool = False
    #: the index's rows in file order (each a RegionData of self.regions)
    rows: list[RegionData] = field(default_factory=list)
    events: EventArrays | None = None
    #: scope-profiler's /thread_table and /task_table: {column: numpy array
    #: or list of str}, empty when the file has none
    thread_table: dict = field(default_factory=dict)
    task_table: dict = field(default_factory=dict)
    #: the index has scope-profiler's summary_statistics column
    has_summary_statistics: bool = False
    #: scope-profiler's integration groups some rank<N> group holds
    #: ("likwid", "perf_events", "line_profile"): data not read yet
    rank_groups: list = field(default_factory=list)
    #: values per span (memory, perf_event counters; docs/values.md) summed
    #: per region and rank: {region: {rank: RegionValues}}, {} when the
    #: recording tracked none
    values: dict = field(default_factory=dict)

    @property
    def samples(self) -> Samples:
        """The file's stack samples (its /samples group: with_samples=True,
        sps_sampling_start; docs/sampling.md) as a :class:`Samples`, read
        on first use (an empty one when the file has none).  Per region its
        self samples by function and line: ``samples.by_region()``."""
        s = self.__dict__.get("_samples")
        if s is None:
            s = self.__dict__["_samples"] = read_stack_samples(self.path)
        return s

    def __getitem__(self, name: str) -> RegionData:
        """The region on rank 0 (or its only rank)."""
        per_rank = self.regions[name]
        return per_rank[0] if 0 in per_rank else next(iter(per_rank.values()))

    def __contains__(self, name: str) -> bool:
        return name in self.regions

    def call(self, event: int) -> tuple[RegionData, int] | None:
        """The row and row-local index of file-wide event ``event`` (a
        ``parent_index`` value), or None for -1 or an event of no row."""
        if event < 0 or self.events is None:
            return None
        row = int(self.events.row[event])
        if row == NO_ROW:
            return None
        reg = self.rows[row]
        return reg, int(event) - reg.first_event

    def parent_of(self, region: RegionData, i: int) -> tuple[RegionData, int] | None:
        """The row and row-local index of call ``i`` of ``region``'s parent
        (the fold's), or None for a root."""
        return self.call(int(region.parent_index[i]))

    def summary(self, sort: str = "self", top: int = 0) -> str:
        """The file's report: call tree, flat view sorted by ``sort`` (self,
        total, calls, mean, max, name) cut to ``top`` rows (0: all), per-rank
        view for several ranks, counters.  The very text ``spanscope report
        PATH --sort SORT --top TOP`` prints: one C function makes both.
        ValueError for an unknown sort key."""
        return _ext.report(self.path, sort, top)

    def print_summary(self, **kw) -> None:
        print(self.summary(**kw), end="")


def _ints(col, dtype=np.int64):
    """A C reader's column as a numpy array (a view, no copy); None stays."""
    return None if col is None else np.frombuffer(col, dtype=dtype)


def _events(cols: dict) -> EventArrays:
    return EventArrays(
        _ints(cols["start_ns"]), _ints(cols["durations_ns"]), _ints(cols["self_ns"]),
        _ints(cols["parent"], np.int32), _ints(cols["row"], np.uint32),
        *(_ints(cols[k]) for k in ("call_ids", "parent_ids", "thread_ids",
                                   "gpu_durations", "task_ids", "await_ns")))


def _table(t: dict) -> dict:
    """A lane table's columns: numpy arrays (ints) or lists of str."""
    return {k: v if isinstance(v, list) else _ints(v) for k, v in t.items()}


def _row_extra(extras: dict, i: int) -> dict:
    """RegionData's fields from scope-profiler's per-row columns of row i."""
    def at(key):
        col = extras[key]
        return None if col is None else col[i]
    line = at("source_lines")
    return {"source_file": at("source_files"), "source_text": at("source_texts"),
            "source_line": None if line is None else int(line),
            "tags_json": at("tags"), "event_metadata_json": at("event_metadata")}


@dataclass
class RegionValues:
    """A region's values on one rank (the file's /values row): its calls,
    and per value name its own sum (children included) and its self sum
    (outside its children); for ``peak_bytes`` the largest own and self
    peak of live bytes above a call's start."""

    calls: int
    own: dict
    self: dict


def _values(v: dict) -> dict:
    """/values as {region: {rank: RegionValues}}."""
    names = list(v["names"])
    k = len(names)
    own, self_ = _ints(v["own"]), _ints(v["self"])
    calls, ranks = _ints(v["calls"]), _ints(v["ranks"])
    out: dict = {}
    for i, region in enumerate(v["regions"]):
        row = slice(i * k, (i + 1) * k)
        out.setdefault(region, {})[int(ranks[i])] = RegionValues(
            int(calls[i]), dict(zip(names, map(int, own[row]))),
            dict(zip(names, map(int, self_[row]))))
    return out


def _counters(c: dict) -> dict:
    """The counter samples as {name: {"times_ns", "values", "ranks"}}."""
    series = _ints(c["series"])
    cols = {"times_ns": _ints(c["times_ns"]), "values": _ints(c["values"], np.float64),
            "ranks": _ints(c["ranks"])}
    out = {}
    for i, name in enumerate(c["names"]):
        sel = series == i
        out[name] = {k: v[sel] for k, v in cols.items()}
    return out


def _row(name: str, row: tuple, ev: EventArrays, aggregate: bool,
         extra: dict) -> RegionData:
    """The RegionData of one index row (see _ext.read_file's rows; extra:
    _row_extra's fields)."""
    _, rank, first, count, total, lo, hi, self_total, stored = row
    if aggregate:  # statistics only: the calls' arrays are empty
        agg = dict(zip(_AGG_KEYS, (count, total, lo, hi)))
        if stored >= 0:
            agg["exclusives"] = stored
        sl, first = slice(0, 0), 0
    else:
        agg, sl = None, slice(first, first + count)

    def cut(a):
        return None if a is None else a[sl]

    return RegionData(name, rank, cut(ev.start_ns), cut(ev.durations_ns),
                      cut(ev.call_ids), cut(ev.parent_ids), cut(ev.thread_ids),
                      exclusive_total_ns=self_total, self_ns=cut(ev.self_ns),
                      parent_index=cut(ev.parent), first_event=first,
                      aggregate=agg, gpu_durations=cut(ev.gpu_durations),
                      task_ids=cut(ev.task_ids), await_ns=cut(ev.await_ns), **extra)


def read(path) -> Results:
    """Reads a schema 1/2/3 HDF5 file written by spanscope or scope-profiler.

    Raises OSError if the file cannot be opened and ValueError if it is not
    a valid file (the C reader validates everything it reads).
    """
    path = os.fspath(path)
    f = _ext.read_file(path)
    ev = _events(f["events"])
    names = f["names"]
    res = Results(path, names,
                  metadata={k: np.asarray(v) if isinstance(v, list) else v
                            for k, v in f["metadata"].items()},
                  counters=_counters(f["counters"]), schema=f["schema"],
                  layout=f["layout"], nested_by_ids=f["nested_by_ids"], events=ev,
                  thread_table=_table(f["thread_table"]), task_table=_table(f["task_table"]),
                  has_summary_statistics=f["has_summary_statistics"],
                  rank_groups=list(f["rank_groups"]), values=_values(f["values"]))
    aggregate = res.layout == "aggregate"
    extras = f["row_extras"]
    extras = {k: v if isinstance(v, list) or v is None else _ints(v) for k, v in extras.items()}
    for i, row in enumerate(f["rows"]):
        reg = _row(names[row[0]], row, ev, aggregate, _row_extra(extras, i))
        res.rows.append(reg)
        res.regions.setdefault(reg.name, {})[reg.rank] = reg
    if aggregate:
        res.aggregate = {name: res[name].aggregate for name in res.regions}
    return res
