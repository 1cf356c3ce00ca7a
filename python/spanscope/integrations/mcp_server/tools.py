"""The MCP server's tools as plain functions (scope-profiler 0.7.5's
``scope_profiler.mcp_server.tools``), testable and usable without the
``mcp`` package.

Every tool returns plain JSON-ready ``dict``/``list`` data (never terminal
text) or raises :class:`ToolError` with a one-line reason (a missing file,
a file that is not a profile, a bad argument).  Profiles are read only
through spanscope's public reader (``spanscope.read_profile`` and
``spanscope.read_profile_summary``: one read by the C reader, the one
fold's parents and self times); the statistics below are those of its
``MPIRegion`` objects, taken over the selected ranks.  Nothing here
re-derives nesting.

The tools: :func:`inspect_profile`, :func:`compare_profiles`,
:func:`run_profile`, :func:`plot_profile`, :func:`run_benchmark`,
:func:`compare_benchmarks`.  The helpers :func:`region_row`,
:func:`region_rows`, :func:`metadata_sections` and :func:`profile_headline`
are shared with the terminal browser (``spanscope.integrations.tui``).
"""

from __future__ import annotations

import importlib
import json
import math
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

import spanscope
from spanscope import MPIRegion, ProfilingResults

__all__ = [
    "DIFF_METRICS", "PLOT_TYPES", "SORT_KEYS", "TOOL_NAMES", "ToolError",
    "compare_benchmarks", "compare_profiles", "has_values", "inspect_profile",
    "likwid_payload", "line_profile_payload", "metadata_payload", "metadata_sections",
    "perf_events_payload",
    "plot_profile", "profile_headline", "read_results", "region_row", "region_rows",
    "region_values", "run_benchmark", "run_profile", "time_span", "unread_groups",
]

#: The tools the server registers, by name (scope-profiler's six).
TOOL_NAMES = ("inspect_profile", "compare_profiles", "run_profile", "plot_profile",
              "run_benchmark", "compare_benchmarks")

#: How inspect_profile can order its regions: "start" (first call first),
#: "name" (alphabetical), the others descending (regions without a value last).
SORT_KEYS = ("start", "total", "calls", "avg", "min", "max", "first", "last", "std",
             "p50", "p95", "p99", "imbalance", "exclusive", "name")

#: The per-region statistics compare_profiles can compare (scope-profiler's
#: diff metrics).
DIFF_METRICS = ("gpu_total", "gpu_avg", "total", "avg", "min", "max", "p50", "p95", "p99",
                "imbalance", "calls")

#: plot_type -> the spanscope.plots function that draws it (scope-profiler's
#: five default plots, the legacy "flame" spelling, and speedup).
PLOT_TYPES = {
    "gantt": "plot_gantt",
    "flame_chart": "plot_flame_chart",
    "flame_graph": "plot_flame_graph",
    "flame": "plot_flame",
    "durations": "plot_durations",
    "timeseries": "plot_duration_timeseries",
    "speedup": "plot_speedup",
}

#: Default cap on the rows a tool returns (an LLM's context is small);
#: top_n raises it, 0 or None lifts it.
DEFAULT_TOP_N = 20

# metadata groups, in scope-profiler's order (its inspection._metadata_sections)
_RUN_FIELDS = ("timestamp", "start_time_ns", "finalize_time_ns", "user", "hostname",
               "working_directory", "scope_profiler_version", "spanscope_version",
               "python_version", "label")
_SYSTEM_FIELDS = ("platform", "uname", "chip_information")
_PARALLELISM_FIELDS = ("mpi_size", "num_nodes", "omp_num_threads", "total_cores")
_SLURM_PREFIXES = ("SLURM_", "SLURMD_")
_OUTPUT_TAIL = 2000  # characters of a run's stdout / stderr returned


class ToolError(Exception):
    """A user-facing error of a tool (bad input, missing file, failed run):
    the MCP server reports its message as the tool call's error."""


# ---------------------------------------------------------------------------
# argument checks
# ---------------------------------------------------------------------------

def _patterns(value, what: str) -> list[str] | None:
    """include / exclude as a list of regular expressions (a single string is
    one pattern); ToolError for anything else or a pattern that does not
    compile."""
    if value is None:
        return None
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, (list, tuple)) or not all(isinstance(p, str) for p in value):
        raise ToolError(f"{what} must be a list of regular expressions (strings)")
    for p in value:
        try:
            re.compile(p)
        except re.error as exc:
            raise ToolError(f"{what}: invalid regular expression {p!r}: {exc}") from None
    return list(value) or None


def _ranks(value) -> list[int] | None:
    """ranks as a sorted list of distinct non-negative ints, or None (all)."""
    if value is None:
        return None
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        value = [value]
    if not isinstance(value, (list, tuple)) or not all(
            isinstance(r, (int, np.integer)) and not isinstance(r, bool) for r in value):
        raise ToolError("ranks must be a list of integers")
    if any(r < 0 for r in value):
        raise ToolError("ranks must be non-negative")
    return sorted({int(r) for r in value})


def _top_n(value) -> int | None:
    """top_n as a limit, None for no limit (0 or None)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ToolError("top_n must be a positive integer, or None/0 for no limit")
    if value < 0:
        raise ToolError("top_n must be a positive integer, or None/0 for no limit")
    return int(value) or None


def _path(value, what: str) -> str:
    if not isinstance(value, (str, os.PathLike)) or not os.fspath(value):
        raise ToolError(f"{what} must be a path (a non-empty string)")
    return os.fspath(value)


# ---------------------------------------------------------------------------
# reading
# ---------------------------------------------------------------------------

def read_results(file_path, summary: bool = False) -> ProfilingResults:
    """A profile (.h5, or scope-profiler's .json / .json.gz) as
    ``spanscope.read_profile`` reads it (``summary``:
    ``read_profile_summary``, statistics without per-call events);
    ToolError naming the file when it is missing or not a profile."""
    path = _path(file_path, "file_path")
    if not os.path.exists(path):
        raise ToolError(f"Profile not found: {path}")
    if os.path.isdir(path):
        raise ToolError(f"{path} is a directory, not a profiling file")
    try:
        if summary:
            return spanscope.read_profile_summary(path, include_likwid=False,
                                                  include_line_profile=False)
        return spanscope.read_profile(path)
    except FileNotFoundError as exc:
        raise ToolError(f"Profile not found: {path} ({exc})") from exc
    except Exception as exc:  # the reader's errors: OSError, ValueError, ...
        raise ToolError(f"Could not read {path!r} as a profiling file: {exc}") from exc


def _select(region: MPIRegion, ranks) -> MPIRegion:
    """region restricted to ranks (the same Region objects, pooled by
    MPIRegion's own statistics)."""
    if ranks is None:
        return region
    return MPIRegion(region.name, {k: region.regions[k] for k in ranks if k in region.regions})


def _float(v):
    """A statistic as a JSON number (None stays None, NaN becomes None)."""
    if v is None:
        return None
    v = float(v)
    return None if math.isnan(v) else v


def region_row(region: MPIRegion, ranks=None) -> dict:
    """One region's statistics over the selected ranks (all when ranks is
    None), in seconds, as scope-profiler's ``summary.region_row`` names
    them: name, num_ranks, calls, total, exclusive (the fold's self time),
    avg, min, max, first, last, std, p50, p95, p99 (None without per-call
    events), imbalance (% of the largest rank total over the mean),
    gpu_total, gpu_avg (None without device timing).  Duration
    entries are None when the region has no calls on the selected ranks."""
    sub = _select(region, ranks)
    calls = int(sub.num_calls)
    gpu = sub.has_gpu_timing
    row = {"name": region.name, "num_ranks": len(sub.regions), "calls": calls,
           "gpu_total": _float(sub.gpu_total_duration) if gpu else None,
           "gpu_avg": _float(sub.gpu_average_duration) if gpu else None,
           "imbalance": _float(sub.rank_imbalance_pct)}
    if not calls:
        row.update(dict.fromkeys(("total", "exclusive", "avg", "min", "max", "first",
                                  "last", "std", "p50", "p95", "p99")))
        return row
    row.update(total=_float(sub.total_duration), exclusive=_float(sub.total_exclusive_duration),
               avg=_float(sub.average_duration), min=_float(sub.min_duration),
               max=_float(sub.max_duration), first=_float(sub.first_duration),
               last=_float(sub.last_duration), std=_float(sub.std_duration),
               p50=_float(sub.p50_duration), p95=_float(sub.p95_duration),
               p99=_float(sub.p99_duration))
    return row


def region_rows(results: ProfilingResults, include=None, exclude=None, ranks=None,
                sort: str = "start") -> list[dict]:
    """region_row of every region results.get_regions(include, exclude)
    selects, ordered by sort (SORT_KEYS: "start" keeps the reader's order
    by first call, "name" is alphabetical, the others descending with
    regions that have no value last).  ValueError for an unknown sort."""
    if sort not in SORT_KEYS:
        raise ValueError(f"sort must be one of {SORT_KEYS}, got {sort!r}")
    rows = [region_row(r, ranks) for r in results.get_regions(include=include, exclude=exclude)]
    if sort == "start":
        return rows
    rows.sort(key=lambda r: r["name"])
    if sort != "name":
        rows.sort(key=lambda r: (r[sort] is not None, r[sort] or 0), reverse=True)
    return rows


def metadata_sections(metadata: dict):
    """``([(title, [(key, value), ...]), ...], modules)``: the metadata in
    scope-profiler's groups (Run, System, Parallelism, Slurm, Environment
    for upper-case keys, Other), every key in exactly one, and the
    "modules" list (None when absent)."""
    rest = dict(metadata)

    def take(names):
        return [(n, rest.pop(n)) for n in names if n in rest]

    sections = [("Run", take(_RUN_FIELDS)), ("System", take(_SYSTEM_FIELDS)),
                ("Parallelism", take(_PARALLELISM_FIELDS))]
    modules = rest.pop("modules", None)
    sections.append(("Slurm", sorted((k, rest.pop(k)) for k in list(rest)
                                     if str(k).startswith(_SLURM_PREFIXES))))
    sections.append(("Environment", sorted((k, rest.pop(k)) for k in list(rest)
                                           if str(k).isupper())))
    sections.append(("Other", sorted(rest.items())))
    return sections, modules


def time_span(results: ProfilingResults):
    """Seconds from the first call's start to the last call's end, None
    when nothing was timed."""
    if not any(r.has_timing for r in results.get_regions()):
        return None
    return _float(results.time_span)


def profile_headline(results: ProfilingResults) -> dict:
    """The top-level numbers of a profile every tool returns: file_path,
    label, num_ranks, num_regions, total_time_seconds (setup to finalize,
    None when the file lacks the times), wall_clock_seconds (first call to
    last)."""
    return {"file_path": str(results.file_path), "label": results.display_label,
            "num_ranks": int(results.num_ranks), "num_regions": len(results.get_regions()),
            "total_time_seconds": _float(results.total_time),
            "wall_clock_seconds": time_span(results)}


def metadata_payload(results: ProfilingResults, full: bool = False) -> dict:
    """The run's metadata by section (lower-case titles), JSON-ready
    (``spanscope.collect_file_metadata``'s values).  Without full, the
    environment / other sections are left out and counted
    (``environment_field_count``, ``other_field_count``)."""
    metadata = spanscope.collect_file_metadata(results)["files"][0]["metadata"]
    sections, modules = metadata_sections(metadata)
    payload = {}
    for title, entries in sections:
        key = title.lower()
        if not full and key in ("environment", "other"):
            if entries:
                payload[f"{key}_field_count"] = len(entries)
            continue
        if entries:
            payload[key] = dict(entries)
    if modules is not None:
        payload["modules"] = list(modules) if isinstance(modules, (list, tuple)) else [modules]
    return payload


#: scope-profiler's rank<N> integration groups spanscope reads (LIKWID:
#: results/_likwid.py; perf events: results/_counters.py; line profiles:
#: results/_lines.py).
_READ_GROUPS = frozenset({"likwid", "perf_events", "line_profile"})


def unread_groups(results: ProfilingResults) -> list[str]:
    """The file's scope-profiler integration groups that spanscope's reader
    does not read: the ``rank<N>`` groups the C reader found, less those
    read (LIKWID, perf events and line profiles: every group it knows
    today, so this is empty unless a newer reader reports one more; JSON
    profiles carry none)."""
    model = getattr(results, "model", None)
    groups = getattr(model, "rank_groups", None) or []
    return sorted(set(groups) - _READ_GROUPS)


def _mean(values):
    """The mean of a per-thread row as scope-profiler's tool takes it, as a
    JSON number: None when the row is empty or the mean is not finite (a
    thread's NaN, as LIKWID gives for a ratio of zero counts)."""
    a = np.asarray(values, dtype=np.float64)
    if a.size == 0:
        return None
    mean = float(a.mean())
    return mean if math.isfinite(mean) else None


def likwid_payload(results: ProfilingResults, ranks=None, top_n: int | None = None):
    """scope-profiler's MCP summary of the run's LIKWID counters, None when
    it has none: ``ranks`` (those with LIKWID results, cut to ranks when
    given), ``region_count_total``, ``region_count_returned`` and
    ``regions``: per rank and marker region (by rank, then tag) its
    ``rank``, ``region`` (the tag), ``group`` (the event group),
    ``call_count`` (summed over the hardware threads) and ``metrics``
    (LIKWID's derived metrics, each the mean over the threads; None where
    that is not finite), cut to top_n.  Built from
    ``results.likwid_ranks`` / ``get_likwid_regions`` (the per-thread
    arrays stay there)."""
    if not results.has_likwid:
        return None
    likwid_ranks = [int(k) for k in results.likwid_ranks
                    if ranks is None or k in ranks]
    entries = []
    for rank in likwid_ranks:
        for tag, region in results.get_likwid_regions(rank=rank).items():
            entries.append({
                "rank": rank, "region": str(tag), "group": region.group_name,
                "call_count": int(np.sum(region.call_counts)),
                "metrics": {str(name): _mean(values)
                            for name, values in zip(region.metric_names, region.metrics)}})
    entries.sort(key=lambda e: (e["rank"], e["region"]))
    limited = entries[:top_n] if top_n else entries
    return {"ranks": likwid_ranks, "region_count_total": len(entries),
            "region_count_returned": len(limited), "regions": limited}


def perf_events_payload(results: ProfilingResults, include=None, exclude=None, ranks=None,
                        top_n: int | None = None):
    """The run's perf_event totals (scope-profiler's ``perf_events=[...]``
    groups), None when it has none, shaped as likwid_payload: ``ranks``
    (those with totals, cut to ranks when given), ``region_count_total``,
    ``region_count_returned`` and ``regions``: per rank and region (by
    rank, then name; include / exclude as for the regions, re.match) its
    ``rank``, ``region``, ``calls``, ``events`` (each event's count summed
    over the calls) and ``metrics`` (the ratios the events allow: ipc,
    cache-misses-per-ki, cache-miss-rate, branch-miss-rate; None where the
    denominator is 0), cut to top_n.  Built from
    results/_counters.perf_event_tables' rows (the summary's tables)."""
    if not results.has_perf_events:
        return None
    from spanscope.results._counters import perf_event_tables

    perf_ranks = sorted(int(k) for k, regions in results.get_perf_events().items()
                        if regions and (ranks is None or k in ranks))
    entries = []
    for table in perf_event_tables(results, include=include, exclude=exclude,
                                   ranks=perf_ranks):
        for (name, calls, *counts), (_, *ratios) in zip(table["rows"], table["metric_rows"]):
            entries.append({
                "rank": int(table["rank"]), "region": str(name), "calls": int(calls),
                "events": {e: int(c) for e, c in zip(table["events"], counts) if c is not None},
                "metrics": {m: _float(v) for m, v in zip(table["metrics"], ratios)}})
    entries.sort(key=lambda e: (e["rank"], e["region"]))
    limited = entries[:top_n] if top_n else entries
    return {"ranks": perf_ranks, "region_count_total": len(entries),
            "region_count_returned": len(limited), "regions": limited}


#: the hottest lines line_profile_payload lists per function
LINE_PROFILE_HOT_LINES = 5


def _line_text(text):
    """A line's source for line_profile_payload: None where there is none
    (a blank, or line_profile_rows' ``<source unavailable>``)."""
    return None if not text or text == "<source unavailable>" else text


def line_profile_payload(results: ProfilingResults, include=None, exclude=None, ranks=None,
                         top_n: int | None = None):
    """The run's line profiles (``use_line_profiler=True``:
    ``results.line_profile``), None when it has none, shaped as
    perf_events_payload: ``ranks`` (those with records, cut to ranks when
    given), ``record_count_total``, ``record_count_returned`` and
    ``records``: one per rank, region and profiled function (include /
    exclude match the region, re.match), the slowest first, cut to top_n,
    each with ``rank``, ``region``, ``function``, ``filename``,
    ``first_lineno``, ``lines`` (how many lines ran), ``total_seconds``
    (the function's lines summed) and ``hot_lines``: its
    LINE_PROFILE_HOT_LINES slowest lines (``line``, ``hits``, ``seconds``,
    ``percent`` of the function's time, ``source``: the line's text where
    the file stored or can show it, else None).  The full tables:
    ``spanscope line-profile FILE``."""
    from spanscope.results._lines import line_profile_rows

    line_profile = results.line_profile
    if not any(line_profile.values()):
        return None
    line_ranks = sorted(int(k) for k, records in line_profile.items()
                        if records and (ranks is None or k in ranks))
    entries = []
    for rank in line_ranks:
        for record in line_profile[rank]:
            region = str(record["region"])
            if include is not None and not any(re.match(p, region) for p in include):
                continue
            if exclude is not None and any(re.match(p, region) for p in exclude):
                continue
            unit = float(record["unit"])
            times = np.asarray(record["times"], dtype=np.float64)
            total = float(times.sum())
            try:
                rows = line_profile_rows(record)
            except ValueError:  # line numbers spanning more than a function can
                rows = []
            texts = {int(line): text.replace("\N{ZERO WIDTH SPACE}", "").strip()
                     for line, _, _, text in rows}
            order = sorted(range(len(times)), key=lambda i: (-times[i], i))
            hot = [{"line": int(record["line_numbers"][i]), "hits": int(record["hits"][i]),
                    "seconds": _float(times[i] * unit),
                    "percent": _float(times[i] / total * 100) if total else None,
                    "source": _line_text(texts.get(int(record["line_numbers"][i])))}
                   for i in order[:LINE_PROFILE_HOT_LINES]]
            entries.append({"rank": rank, "region": region,
                            "function": str(record["function"]),
                            "filename": str(record["filename"]),
                            "first_lineno": int(record["first_lineno"]),
                            "lines": int(len(times)), "total_seconds": _float(total * unit),
                            "hot_lines": hot})
    entries.sort(key=lambda e: (-(e["total_seconds"] or 0.0), e["rank"], e["region"],
                                e["function"]))
    limited = entries[:top_n] if top_n else entries
    return {"ranks": line_ranks, "record_count_total": len(entries),
            "record_count_returned": len(limited), "records": limited}


def has_values(results: ProfilingResults) -> bool:
    """Whether the file holds spanscope's values per span (its /values:
    memory and counters per region; docs/values.md)."""
    model = getattr(results, "model", None)
    return bool(getattr(model, "values", None))


def region_values(results: ProfilingResults, name: str, ranks=None) -> dict | None:
    """A region's values per span (the file's /values, ``spanscope.read(path)
    .values``) over the selected ranks (all when ranks is None): ``calls``,
    ``own`` and ``self`` ({value name: number}: sums are summed over the
    ranks, peaks such as ``peak_bytes`` are the largest), and ``ranks``
    (those with a row).  None when the region has no row there."""
    model = getattr(results, "model", None)
    per_rank = (getattr(model, "values", None) or {}).get(name)
    if not per_rank:
        return None
    rows = [(int(k), v) for k, v in sorted(per_rank.items())
            if ranks is None or int(k) in ranks]
    if not rows:
        return None
    own: dict = {}
    self_: dict = {}
    for _, v in rows:
        for into, values in ((own, v.own), (self_, v.self)):
            for key, value in values.items():
                value = int(value)
                if key in into:
                    into[key] = max(into[key], value) if key.startswith("peak") \
                        else into[key] + value
                else:
                    into[key] = value
    return {"calls": sum(int(v.calls) for _, v in rows), "own": own, "self": self_,
            "ranks": [k for k, _ in rows]}


# ---------------------------------------------------------------------------
# the tools
# ---------------------------------------------------------------------------

def inspect_profile(file_path: str, include: list[str] | None = None,
                    exclude: list[str] | None = None, ranks: list[int] | None = None,
                    sort: str = "total", top_n: int | None = DEFAULT_TOP_N,
                    full_metadata: bool = False) -> dict:
    """A structured summary of one profile: its headline
    (profile_headline), ``metadata`` (metadata_payload), ``regions`` (sort,
    returned, total_matching_filter, items: region_row per region, cut to
    top_n; when the file holds values per span, each item also has
    ``values``: region_values over the selected ranks, None for a region
    without a row), ``likwid`` (likwid_payload, None without LIKWID data),
    ``perf_events`` (perf_events_payload, None without perf-event totals),
    ``line_profile`` (line_profile_payload, None without line profiles)
    and, only when the file holds groups spanscope does not read,
    ``not_read`` (unread_groups)."""
    if sort not in SORT_KEYS:
        raise ToolError(f"sort must be one of {SORT_KEYS}, got {sort!r}")
    top = _top_n(top_n)
    include, exclude = _patterns(include, "include"), _patterns(exclude, "exclude")
    sel = _ranks(ranks)
    results = read_results(file_path)
    rows = region_rows(results, include, exclude, sel, sort)
    limited = rows[:top] if top else rows
    payload = profile_headline(results)
    payload["metadata"] = metadata_payload(results, full=bool(full_metadata))
    if has_values(results):
        for row in limited:
            row["values"] = region_values(results, row["name"], sel)
    payload["regions"] = {"sort": sort, "returned": len(limited),
                          "total_matching_filter": len(rows), "items": limited}
    payload["likwid"] = likwid_payload(results, ranks=sel, top_n=top)
    try:  # the perf_events groups are read here, on first use
        payload["perf_events"] = perf_events_payload(results, include, exclude, sel, top)
    except (OSError, ValueError, KeyError) as exc:  # CorruptProfileError is an OSError
        raise ToolError(f"Could not read the perf-event groups of {file_path!r}: {exc}") \
            from exc
    payload["line_profile"] = line_profile_payload(results, include, exclude, sel, top)
    missing = unread_groups(results)
    if missing:
        payload["not_read"] = missing
    return payload


def compare_profiles(baseline_path: str, candidate_path: str,
                     include: list[str] | None = None, exclude: list[str] | None = None,
                     ranks: list[int] | None = None, metric: str = "total",
                     threshold_pct: float = 5.0, top_n: int | None = DEFAULT_TOP_N) -> dict:
    """Whether the candidate run got faster than the baseline: each side's
    headline, ``overall`` (absolute_diff_seconds, relative_change_pct,
    speedup, faster: from the runs' setup-to-finalize times), ``regions``
    (per region present in either: baseline, candidate, delta, pct; by
    |pct|), and ``regressions`` / ``improvements`` (regions whose pct is
    above threshold_pct / below -threshold_pct, largest first)."""
    if metric not in DIFF_METRICS:
        raise ToolError(f"metric must be one of {DIFF_METRICS}, got {metric!r}")
    if isinstance(threshold_pct, bool) or not isinstance(threshold_pct, (int, float)) \
            or not math.isfinite(threshold_pct) or threshold_pct < 0:
        raise ToolError("threshold_pct must be a non-negative number")
    top = _top_n(top_n)
    include, exclude = _patterns(include, "include"), _patterns(exclude, "exclude")
    sel = _ranks(ranks)
    summary = metric not in ("p50", "p95", "p99")  # percentiles need the calls
    baseline = read_results(baseline_path, summary=summary)
    candidate = read_results(candidate_path, summary=summary)

    def values(results):
        return {r["name"]: r[metric] for r in region_rows(results, include, exclude, sel)}

    a, b = values(baseline), values(candidate)
    deltas = []
    for name in sorted(set(a) | set(b)):
        va, vb = a.get(name), b.get(name)
        if va is None and vb is None:
            continue
        delta = (vb or 0) - (va or 0)
        deltas.append({"name": name, "baseline": va, "candidate": vb, "delta": delta,
                       "pct": delta / va * 100 if va else None})
    deltas.sort(key=lambda r: abs(r["pct"]) if r["pct"] is not None else -1, reverse=True)
    regressions = sorted((r for r in deltas if r["pct"] is not None
                          and r["pct"] > threshold_pct), key=lambda r: -r["pct"])
    improvements = sorted((r for r in deltas if r["pct"] is not None
                           and r["pct"] < -threshold_pct), key=lambda r: r["pct"])
    overall = dict.fromkeys(("absolute_diff_seconds", "relative_change_pct", "speedup",
                             "faster"))
    t_a, t_b = baseline.total_time, candidate.total_time
    if t_a is not None and t_b is not None:
        diff = t_b - t_a
        overall.update(absolute_diff_seconds=diff,
                       relative_change_pct=diff / t_a * 100 if t_a else None,
                       speedup=t_a / t_b if t_b else None, faster=t_b < t_a)
    return {"baseline": profile_headline(baseline), "candidate": profile_headline(candidate),
            "overall": overall, "metric": metric, "threshold_pct": float(threshold_pct),
            "regions": {"returned": len(deltas[:top] if top else deltas),
                        "total": len(deltas), "items": deltas[:top] if top else deltas},
            "regressions": regressions[:top] if top else regressions,
            "improvements": improvements[:top] if top else improvements}


def run_profile(script_path: str, script_args: list[str] | None = None,
                only_user_code: bool = True, buffer_limit: int = 1024,
                output_path: str | None = None, timeout_seconds: float = 300.0,
                top_n: int | None = DEFAULT_TOP_N) -> dict:
    """Runs a Python script profiled (``python -m spanscope run``) in its own
    process, with a timeout and no shell (the arguments are an argv list),
    and returns inspect_profile of the file it wrote plus ``stdout_tail``.
    only_user_code=False traces every function, the library's too
    (``--all``).  ToolError for a missing script, a failed or timed-out
    run, or a run that wrote no profile."""
    script = Path(_path(script_path, "script_path"))
    if not script.is_file():
        raise ToolError(f"No such script: {script_path}")
    if script_args is None:
        script_args = []
    if not isinstance(script_args, (list, tuple)) or not all(
            isinstance(a, str) for a in script_args):
        raise ToolError("script_args must be a list of strings")
    if isinstance(timeout_seconds, bool) or not isinstance(timeout_seconds, (int, float)) \
            or not timeout_seconds > 0:
        raise ToolError("timeout_seconds must be positive")
    if isinstance(buffer_limit, bool) or not isinstance(buffer_limit, int) or buffer_limit < 1:
        raise ToolError("buffer_limit must be a positive integer")
    top = _top_n(top_n)
    if output_path is not None:
        out = Path(_path(output_path, "output_path"))
        try:
            out.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ToolError(f"Cannot create the folder of {out}: {exc}") from exc
    else:
        out = Path(tempfile.mkdtemp(prefix="spanscope-mcp-run-")) / "profiling_data.h5"
    command = [sys.executable, "-m", "spanscope", "run", "-o", str(out), "-q"]
    if not only_user_code:
        command.append("--all")
    command += ["--buffer-limit", str(buffer_limit), str(script), *script_args]
    try:
        done = subprocess.run(command, capture_output=True, text=True,
                              timeout=timeout_seconds, check=False,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as exc:
        raise ToolError(f"Profiling run exceeded {timeout_seconds}s and was terminated.") \
            from exc
    if done.returncode != 0:
        raise ToolError(f"Profiling run failed (exit code {done.returncode}).\n"
                        f"stderr:\n{done.stderr[-_OUTPUT_TAIL:]}")
    if not out.exists():
        raise ToolError("Profiling run exited successfully but produced no output file.")
    summary = inspect_profile(str(out), top_n=top)
    summary["stdout_tail"] = done.stdout[-_OUTPUT_TAIL:] if done.stdout else ""
    return summary


def plot_profile(file_paths: list[str] | str, plot_type: str = "gantt",
                 output_dir: str | None = None, include: list[str] | None = None,
                 exclude: list[str] | None = None, ranks: list[int] | None = None,
                 backend: str = "matplotlib", x_field: str | None = None) -> dict:
    """Draws one figure of one or more profiles with spanscope.plots (the
    ``plot`` extra: matplotlib; backend="plotly" writes .html) into
    output_dir (default: a new temporary folder) and returns plot_type,
    backend and ``paths`` (the files written).  speedup needs two files or
    more and takes x_field (num_ranks, num_nodes, omp_num_threads,
    total_cores or another metadata field)."""
    if isinstance(file_paths, (str, os.PathLike)):
        file_paths = [file_paths]
    if not isinstance(file_paths, (list, tuple)) or not file_paths:
        raise ToolError("file_paths must contain at least one path")
    if plot_type not in PLOT_TYPES:
        raise ToolError(f"plot_type must be one of {sorted(PLOT_TYPES)}, got {plot_type!r}")
    if plot_type == "speedup" and len(file_paths) < 2:
        raise ToolError("plot_type='speedup' requires at least 2 file_paths")
    if backend not in ("matplotlib", "plotly"):
        raise ToolError(f"backend must be 'matplotlib' or 'plotly', got {backend!r}")
    if x_field is not None and plot_type != "speedup":
        raise ToolError("x_field only applies to plot_type='speedup'")
    include, exclude = _patterns(include, "include"), _patterns(exclude, "exclude")
    sel = _ranks(ranks)
    profiles = [read_results(p) for p in file_paths]
    try:
        plots = importlib.import_module("spanscope.plots")
    except ImportError as exc:
        raise ToolError(f"Plotting needs the 'plot' extra: pip install 'spanscope[plot]' "
                        f"({exc})") from exc
    func = getattr(plots, PLOT_TYPES[plot_type])
    out_dir = (Path(output_dir) if output_dir
               else Path(tempfile.mkdtemp(prefix="spanscope-mcp-plot-")))
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ToolError(f"Cannot create {out_dir}: {exc}") from exc
    filepath = out_dir / f"{plot_type}_plot.{'html' if backend == 'plotly' else 'png'}"
    extra = {"x_field": x_field} if x_field is not None else {}
    try:
        # verbose=False: a plot's progress lines on stdout would corrupt the
        # stdio transport's JSON-RPC stream
        result = func(profiles, filepath=str(filepath), show=False, verbose=False,
                      include=include, exclude=exclude, ranks=sel, backend=backend, **extra)
    except ImportError as exc:
        raise ToolError(f"Plotting needs the 'plot' extra: pip install 'spanscope[plot]' "
                        f"({exc})") from exc
    except (ValueError, KeyError, OSError) as exc:
        raise ToolError(str(exc)) from exc
    paths = [str(p) for p in result] if isinstance(result, list) and result else [str(filepath)]
    paths = [p for p in paths if Path(p).exists()]
    if not paths:
        raise ToolError(f"Plot was not generated for plot_type={plot_type!r}.")
    return {"plot_type": plot_type, "backend": backend, "paths": paths}


def _benchmark_module():
    """spanscope's benchmark workflow (scope-profiler's ``benchmark``
    module), or ToolError when this spanscope has none."""
    try:
        return importlib.import_module("spanscope.benchmark")
    except ModuleNotFoundError as exc:
        if exc.name not in ("spanscope.benchmark",):
            raise
        raise ToolError("The benchmark workflow (spanscope.benchmark, scope-profiler's "
                        "`benchmark`) is not part of this spanscope version") from exc


def run_benchmark(config_path: str, label: str = "candidate") -> dict:
    """Runs a TOML benchmark config (repeated profiles and a correctness
    gate) with spanscope.benchmark and returns its JSON manifest."""
    path = _path(config_path, "config_path")
    if not os.path.isfile(path):
        raise ToolError(f"Benchmark config not found: {path}")
    bench = _benchmark_module()
    try:
        return bench.run_benchmark(bench.load_config(path), label=label)
    except getattr(bench, "BenchmarkError", ValueError) as exc:
        raise ToolError(str(exc)) from exc


def compare_benchmarks(baseline_path: str, candidate_path: str) -> dict:
    """Compares two benchmark manifests (spanscope.benchmark) and returns
    its keep/reject decision."""
    for p in (baseline_path, candidate_path):
        if not os.path.isfile(_path(p, "manifest path")):
            raise ToolError(f"Benchmark manifest not found: {p}")
    bench = _benchmark_module()
    try:
        return bench.compare_benchmarks(baseline_path, candidate_path)
    except (getattr(bench, "BenchmarkError", ValueError), OSError, ValueError, KeyError,
            json.JSONDecodeError) as exc:
        raise ToolError(f"Could not compare benchmark manifests: {exc}") from exc
