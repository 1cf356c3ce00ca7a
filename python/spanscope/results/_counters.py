"""scope-profiler 0.7.5's perf-event results over spanscope: the result
types (:class:`PerfEventTotals`: one region's calls and its counts by event
name; :class:`PerfEventError`), the reader of the ``perf_events`` groups a
file holds (:func:`read_perf_events`), the derived ratios (IPC, miss rates:
:data:`PERF_DERIVED`) and the perf-event summary tables
(:func:`perf_event_tables`, :func:`print_perf_event_tables`, as
scope-profiler's ``summary`` module has them).  LIKWID's result type is
re-exported from results/_likwid.py.

The layout, scope-profiler's (``h5writer``), read as its ``h5reader``
reads it: each rank that recorded counters has a group
``rank<N>/perf_events`` holding one group per region, with the
attributes ``calls`` (the region's calls) and ``event_names`` (strings)
and the dataset ``values`` (uint64, one per name: the counts summed over
the calls).  The counts are totals per region, not per call; ratios are
made from the totals (a weighted mean), never averaged over calls.
docs/perf-events.md.
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass

import numpy as np

from spanscope.results._errors import CorruptProfileError
from spanscope.results._table import box_lines

# LIKWID's result type lives with the rest of LIKWID (results/_likwid.py)
from spanscope.results._likwid import LikwidRegionResult  # noqa: F401 (re-export)

__all__ = ["LikwidRegionResult", "PERF_DERIVED", "PerfEventError", "PerfEventTotals",
           "available_perf_metrics", "perf_event_tables", "perf_metric_value",
           "print_perf_event_tables", "read_perf_events"]


class PerfEventError(RuntimeError):
    """A requested kernel performance event could not be opened or read
    (scope-profiler's name and base).  spanscope's reader reports an event
    the machine cannot count once on stderr and reads it as 0 instead
    (docs/perf-events.md); this is for code written against
    scope-profiler, which raises it."""


@dataclass
class PerfEventTotals:
    """Aggregated perf_event counts of one region: its calls and the
    counts by event name, summed over the calls (scope-profiler's fields)."""

    calls: int
    values: dict[str, int]


# --- reading rank<N>/perf_events ------------------------------------------------

_RANK_GROUP = re.compile(r"rank(\d+)\Z")


def _names(value, where: str) -> list[str]:
    """The event_names attribute as a list of distinct, non-empty str."""
    if isinstance(value, (str, bytes)):
        value = [value]
    arr = np.asarray(value, dtype=object)
    if arr.ndim != 1:
        raise CorruptProfileError(f"{where}: event_names is not a list of names")
    out = []
    for v in arr.tolist():
        if isinstance(v, bytes):
            try:
                v = v.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise CorruptProfileError(f"{where}: an event name is not UTF-8") from exc
        if not isinstance(v, str) or not v:
            raise CorruptProfileError(f"{where}: event_names holds {v!r}, not a name")
        out.append(v)
    if len(set(out)) != len(out):
        raise CorruptProfileError(f"{where}: event_names names an event twice")
    return out


def _region_totals(h5py, group, where: str) -> PerfEventTotals:
    """One region's group: attrs calls and event_names, dataset values."""
    if not isinstance(group, h5py.Group):
        raise CorruptProfileError(f"{where} is not a group")
    if "calls" not in group.attrs:
        raise CorruptProfileError(f"{where} has no 'calls' attribute")
    calls = np.asarray(group.attrs["calls"])
    if calls.shape not in ((), (1,)) or calls.dtype.kind not in "iu" or int(calls.ravel()[0]) < 0:
        raise CorruptProfileError(f"{where}: calls is {calls!r}, not a count")
    names = _names(group.attrs.get("event_names", []), where)
    ds = group.get("values")
    if not isinstance(ds, h5py.Dataset):
        raise CorruptProfileError(f"{where} has no 'values' dataset")
    if ds.ndim != 1 or ds.shape[0] != len(names):
        raise CorruptProfileError(f"{where}: values has shape {ds.shape} for "
                                  f"{len(names)} event name(s)")
    if ds.dtype.kind not in "iu":
        raise CorruptProfileError(f"{where}: values are {ds.dtype}, not integer counts")
    vals = ds[()]
    if ds.dtype.kind == "i" and (vals < 0).any():
        raise CorruptProfileError(f"{where}: a negative count")
    return PerfEventTotals(calls=int(calls.ravel()[0]),
                           values={n: int(v) for n, v in zip(names, vals.tolist())})


def read_perf_events(file_path) -> dict[int, dict[str, PerfEventTotals]]:
    """rank -> region name -> :class:`PerfEventTotals` of every
    ``rank<N>/perf_events`` group of an HDF5 profile, as scope-profiler's
    read_h5 reads them (ranks in numeric order, regions in the group's
    order; a rank whose group is empty maps to {}); {} for a file without
    such groups.  Everything read is checked: CorruptProfileError (naming
    the file and the group) for a group that is not one, a missing
    ``calls`` or ``values``, a count that is not a non-negative integer,
    names that are not distinct strings, or values of another length than
    the names; FileNotFoundError for a missing file."""
    import h5py

    path = os.fspath(file_path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"No profile at {path!r}")
    try:
        f = h5py.File(path, "r")
    except OSError as exc:
        raise CorruptProfileError(f"{path}: not readable as HDF5 ({exc})") from exc
    out: dict[int, dict[str, PerfEventTotals]] = {}
    with f:
        ranks = sorted((int(m.group(1)), k) for k in f.keys()
                       if (m := _RANK_GROUP.match(k)) is not None)
        for rank, key in ranks:
            grp = f[key]
            if not isinstance(grp, h5py.Group) or "perf_events" not in grp:
                continue
            where = f"{path}: {key}/perf_events"
            pe = grp["perf_events"]
            if not isinstance(pe, h5py.Group):
                raise CorruptProfileError(f"{where} is not a group")
            out[rank] = {name: _region_totals(h5py, region, f"{where}/{name}")
                         for name, region in pe.items()}
    return out


# --- derived ratios ---------------------------------------------------------------

#: The ratios made from a region's totals when both its events are there:
#: name -> (numerator event, denominator event, scale, label).  The first
#: two are scope-profiler's (its plot_perf_events metrics); the miss rates
#: are spanscope's, in percent.
PERF_DERIVED = {
    "ipc": ("instructions", "cycles", 1.0, "Instructions per cycle"),
    "cache-misses-per-ki": ("cache-misses", "instructions", 1_000.0,
                            "Cache misses / 1k instructions"),
    "cache-miss-rate": ("cache-misses", "cache-references", 100.0,
                        "Cache misses / cache references (%)"),
    "branch-miss-rate": ("branch-misses", "branches", 100.0, "Branch misses / branches (%)"),
}

#: the summary table's column header of each ratio
_COLUMN = {"ipc": "IPC", "cache-misses-per-ki": "cache-misses/ki",
           "cache-miss-rate": "cache miss %", "branch-miss-rate": "branch miss %"}


def perf_metric_value(totals: PerfEventTotals, metric: str) -> float:
    """One region's value of metric: a ratio of PERF_DERIVED from its
    totals (NaN when the denominator is 0 or missing), or a raw event's
    count (NaN when the region did not record it)."""
    if metric in PERF_DERIVED:
        num, den, scale, _ = PERF_DERIVED[metric]
        base = totals.values.get(den, 0)
        return float(totals.values.get(num, 0) * scale / base) if base else float("nan")
    return float(totals.values.get(metric, float("nan")))


def available_perf_metrics(events) -> list[str]:
    """The metrics events (names recorded) allow: the ratios of
    PERF_DERIVED whose two events are both there, in its order, then the
    raw events sorted (scope-profiler's order)."""
    raw = set(events)
    derived = [name for name, (num, den, _, _) in PERF_DERIVED.items()
               if num in raw and den in raw]
    return [*derived, *sorted(raw)]


# --- the summary's tables ---------------------------------------------------------

def _selected(name: str, include=None, exclude=None) -> bool:
    """scope-profiler's include/exclude rule: regular expressions matched
    at the start of the name (re.match)."""
    if isinstance(include, str):
        include = [include]
    if isinstance(exclude, str):
        exclude = [exclude]
    if include is not None and not any(re.match(p, name) for p in include):
        return False
    return not (exclude is not None and any(re.match(p, name) for p in exclude))


def perf_event_tables(results, include=None, exclude=None, ranks=None) -> list:
    """One perf-event table per rank of results (anything with
    get_perf_events(): ProfilingResults), as scope-profiler's
    summary.perf_event_tables: ``{"rank", "events", "rows"}`` with the
    regions include/exclude keep (re.match patterns), sorted by name, one
    row ``(name, calls, *counts)`` each over the table's events (sorted;
    None where a region did not record one).  spanscope adds
    ``"metrics"`` (the ratios of PERF_DERIVED whose events the table has)
    and ``"metric_rows"`` (``(name, *ratios)``, None where a denominator
    is 0 or missing).  ranks: an iterable of ranks to keep (None: all).
    Ranks without a matching region give no table."""
    tables = []
    for rank, regions in sorted(results.get_perf_events().items()):
        if ranks is not None and rank not in ranks:
            continue
        selected = sorted(((name, totals) for name, totals in regions.items()
                           if _selected(name, include, exclude)), key=lambda item: item[0])
        if not selected:
            continue
        events = sorted({event for _, totals in selected for event in totals.values})
        metrics = [m for m in available_perf_metrics(events) if m in PERF_DERIVED]
        metric_rows = []
        for name, totals in selected:
            vals = [perf_metric_value(totals, m) for m in metrics]
            metric_rows.append((name, *[None if v != v else v for v in vals]))
        tables.append({
            "rank": rank,
            "events": events,
            "rows": [(name, totals.calls, *[totals.values.get(e) for e in events])
                     for name, totals in selected],
            "metrics": metrics,
            "metric_rows": metric_rows,
        })
    return tables


def _format_counter(value) -> str:
    """A count or ratio as scope-profiler's summary writes it: "-" for
    none, integers whole (no exponent below 1e15), others to 6 digits."""
    if value is None:
        return "-"
    value = float(value)
    if value.is_integer() and abs(value) < 1e15:
        return f"{int(value):d}"
    return f"{value:.6g}"


def print_perf_event_tables(results, include=None, exclude=None, ranks=None,
                            stream=None) -> None:
    """Prints perf_event_tables(results, ...) as scope-profiler's summary
    does: per rank a heading "Perf events (rank N)" and a boxed table of
    region, calls and each event's count, followed here by the ratios the
    events allow (IPC, cache-misses/ki, cache miss %, branch miss %).
    Nothing for results without perf-event data."""
    stream = sys.stdout if stream is None else stream
    for table in perf_event_tables(results, include=include, exclude=exclude, ranks=ranks):
        heading = f"Perf events (rank {table['rank']})"
        if getattr(stream, "isatty", lambda: False)():
            heading = f"\033[1;36m{heading}\033[0m"
        print(heading, file=stream)
        headers = ("region", "calls", *table["events"], *[_COLUMN[m] for m in table["metrics"]])
        cells = [[str(name), *[_format_counter(v) for v in (calls, *counts, *ratios)]]
                 for (name, calls, *counts), (_, *ratios)
                 in zip(table["rows"], table["metric_rows"])]
        for line in box_lines(list(headers), cells):
            print(f"  {line}", file=stream)
