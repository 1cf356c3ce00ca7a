"""A terminal browser for profiles (scope-profiler 0.7.5's ``tui``), over
spanscope's reader.

``spanscope tui FILE`` (or ``python -m spanscope.integrations.tui FILE``)
opens a Textual app: a navigation tree on the left (Overview, Plots,
Metadata, Regions, Raw HDF5) and the selected item's details on the right,
with a plot-settings panel when a plot is selected.  Keys: ``q`` quit,
``escape`` back to the tree, ``g`` show the plot in Matplotlib (a child
process), ``p`` open it with Plotly in the browser, ``t`` draw a text chart
in the pane (durations), ``s`` save it as a PNG, ``v`` open the flame plots'
profile in Snakeviz.

The profile is read once by ``spanscope.read_profile`` (the C reader: the
one fold's parents and self times); every number shown comes from its
result objects and the rows of
:func:`spanscope.integrations.mcp_server.tools.region_rows`, the same the MCP
tools return.  A region's details show its values per span (memory and
counters, own and self: the file's /values, ``spanscope.read(path).values``)
when the run recorded them, and its LIKWID counters and perf-event totals
per rank when the file holds them (the results' ``get_likwid_regions`` and
``get_perf_events``), and its line profiles (a "Line Profile" node per
region: per rank, each function's lines, hits and times, as scope-profiler's
browser shows ``results.line_profile``).  Plots are drawn by
:mod:`spanscope.plots`.  The "Raw HDF5"
section lists the file's groups and datasets (names, shapes, types, the
first elements) as h5py sees them, for looking, not for analysis.

Textual is the optional ``tui`` extra (``pip install "spanscope[tui]"``);
everything but the app itself (:func:`build_browser_model`,
:func:`node_detail_text`, :func:`render_plot`, :func:`render_text_chart`)
works without it.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import socket
import subprocess
import sys
import textwrap
import threading
import webbrowser
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import quote

import numpy as np

import spanscope
from spanscope.integrations.mcp_server.tools import (
    has_values,
    metadata_sections,
    region_row,
    region_rows,
    region_values,
    time_span,
    unread_groups,
)
from spanscope.results._lines import line_profile_rows
from spanscope.plots import (
    FLAME_CMAP,
    available_likwid_metrics,
    plot_callgraph,
    plot_duration_histogram,
    plot_duration_timeseries,
    plot_durations,
    plot_flame_chart,
    plot_flame_graph,
    plot_gantt,
    plot_imbalance,
    plot_likwid,
)

__all__ = [
    "BrowserModel", "BrowserNode", "PLOT_CATALOG", "build_browser_model",
    "build_parser", "create_app", "main", "node_detail_text", "parse_ranks",
    "render_plot", "render_plotext_text", "render_text_chart",
]

#: The plots the Plots section offers (name -> what it shows), drawn by
#: spanscope.plots.
PLOT_CATALOG = {
    "gantt": "Per-rank timeline of recorded calls",
    "durations": "Duration statistics by region",
    "flame_chart": "Time-based nested call-stack flame chart",
    "flame_graph": "Aggregated call-stack flame graph",
    "callgraph": "Call graph from explicit call and parent ids",
    "timeseries": "Duration of each call over time",
    "histogram": "Call-duration distribution by region",
    "imbalance": "Per-rank duration comparison",
}
#: The plots the pane can draw as text (key t).
TEXT_PLOTS = frozenset({"durations"})
_TEXT_LOCK = threading.RLock()
_MAX_CALL_ROWS = 200      # calls listed per region and rank
_MAX_H5_CHILDREN = 500    # children listed per HDF5 group
_MAX_H5_DEPTH = 32
_PLOT_LABELS = {"flame_chart": "Flame chart", "flame_graph": "Flame graph"}


@dataclass
class BrowserNode:
    """One item of the navigation tree: its label, its kind (what the
    detail pane shows for it), its data and its children."""

    label: str
    kind: str
    payload: dict[str, Any] = field(default_factory=dict)
    children: list[BrowserNode] = field(default_factory=list)


@dataclass
class BrowserModel:
    """A profile as the browser shows it: the file, its results
    (spanscope.ProfilingResults) and the navigation tree's root."""

    file_path: Path
    results: Any
    root: BrowserNode


# ---------------------------------------------------------------------------
# text helpers
# ---------------------------------------------------------------------------

def _format_scalar(value) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    if isinstance(value, np.ndarray):
        if value.ndim == 0:
            return _format_scalar(value.item())
        return ", ".join(_format_scalar(v) for v in value.tolist())
    if isinstance(value, (list, tuple)):
        return ", ".join(_format_scalar(v) for v in value)
    return str(value)


def _safe(value) -> str:
    try:
        return _format_scalar(value)
    except Exception:  # a value whose str() fails must not take the view down
        return f"<unprintable {type(value).__name__}>"


def _table(headers, rows, *, compact: bool = False, maxcolwidths=None) -> str:
    """rows under headers: a rounded box (compact: plain columns); a cell
    wider than its maxcolwidths entry wraps onto more lines."""
    rows = [[_safe(v) for v in row] for row in rows]
    headers = [str(h) for h in headers]
    n = len(headers)
    limits = list(maxcolwidths or []) + [None] * n

    def cell_lines(text, i):
        lines = text.splitlines() or [""]
        if limits[i]:
            lines = [w for line in lines
                     for w in (textwrap.wrap(line, limits[i], break_long_words=True,
                                             replace_whitespace=False) or [""])]
        return lines

    body = [[cell_lines(row[i] if i < len(row) else "", i) for i in range(n)]
            for row in rows]
    widths = [max([len(headers[i])] + [len(line) for r in body for line in r[i]])
              for i in range(n)]

    def render(cells, sep, left, right):
        height = max(len(c) for c in cells)
        out = []
        for k in range(height):
            parts = [(c[k] if k < len(c) else "").ljust(widths[i]) for i, c in enumerate(cells)]
            out.append((left + sep.join(parts) + right).rstrip() if compact
                       else left + sep.join(parts) + right)
        return out

    if compact:
        lines = render([[h] for h in headers], "  ", "", "")
        for r in body:
            lines += render(r, "  ", "", "")
        return "\n".join(lines)
    top = "╭─" + "─┬─".join("─" * w for w in widths) + "─╮"
    mid = "├─" + "─┼─".join("─" * w for w in widths) + "─┤"
    bottom = "╰─" + "─┴─".join("─" * w for w in widths) + "─╯"
    lines = [top, *render([[h] for h in headers], " │ ", "│ ", " │"), mid]
    for r in body:
        lines += render(r, " │ ", "│ ", " │")
    lines.append(bottom)
    return "\n".join(lines)


def _duration(value) -> str:
    return "-" if value is None else f"{value:.6g} s"


def _pct(value) -> str:
    return "-" if value is None else f"{value:.6g}%"


def parse_ranks(spec: str) -> list[int] | None:
    """Ranks like "0,2-4" as a sorted list (None for an empty spec);
    ValueError for anything else."""
    spec = (spec or "").strip()
    if not spec:
        return None
    out: set[int] = set()
    for part in spec.split(","):
        part = part.strip()
        lo, sep, hi = part.partition("-")
        if not lo.strip().isdigit() or (sep and not hi.strip().isdigit()):
            raise ValueError(f"ranks: expected ranks like 0,2-4, got {spec!r}")
        a, b = int(lo), int(hi) if sep else int(lo)
        if b < a or b - a > 100_000:
            raise ValueError(f"ranks: bad range {part!r}")
        out.update(range(a, b + 1))
    return sorted(out)


def _split_patterns(value) -> list[str] | None:
    items = [p.strip() for p in str(value or "").split(",") if p.strip()]
    return items or None


def _select_regions(results, include, exclude) -> list:
    """results.get_regions(include, exclude); ValueError("Invalid region
    filter: ...") for a pattern that does not compile."""
    for p in (include or []) + (exclude or []):
        try:
            re.compile(p)
        except re.error as exc:
            raise ValueError(f"Invalid region filter: {p!r}: {exc}") from None
    return results.get_regions(include=include, exclude=exclude)


# ---------------------------------------------------------------------------
# the model
# ---------------------------------------------------------------------------

def _h5_node(name: str, obj, h5py, depth: int = 0) -> BrowserNode:
    attrs = {}
    for key in list(obj.attrs.keys())[:_MAX_H5_CHILDREN]:
        try:
            attrs[key] = _safe(obj.attrs[key])
        except Exception as exc:  # an attribute h5py cannot decode
            attrs[key] = f"<unreadable: {exc}>"
    if isinstance(obj, h5py.Dataset):
        try:
            preview = _dataset_preview(obj)
        except Exception as exc:
            preview = f"<unreadable: {exc}>"
        return BrowserNode(name, "h5_dataset", {
            "name": name, "path": obj.name, "shape": obj.shape, "dtype": str(obj.dtype),
            "size": int(obj.size), "chunks": obj.chunks, "compression": obj.compression,
            "attrs": attrs, "preview": preview})
    keys = sorted(obj.keys())
    children = []
    if depth < _MAX_H5_DEPTH:
        for key in keys[:_MAX_H5_CHILDREN]:
            try:
                children.append(_h5_node(key, obj[key], h5py, depth + 1))
            except Exception as exc:  # a dangling link, an unreadable object
                children.append(BrowserNode(key, "message", {"text": f"{key}: {exc}"}))
    if len(keys) > len(children) and depth < _MAX_H5_DEPTH:
        more = len(keys) - len(children)
        children.append(BrowserNode(f"… {more} more", "message",
                                    {"text": f"{more} more members not listed"}))
    return BrowserNode(name, "h5_group", {"name": name, "path": obj.name, "attrs": attrs,
                                          "members": len(keys)}, children)


def _dataset_preview(dataset) -> str:
    if dataset.shape == ():
        return _format_scalar(dataset[()])
    if dataset.size == 0:
        return "empty"
    sl = tuple(slice(0, min(size, 8)) for size in dataset.shape)
    preview = np.asarray(dataset[sl])
    more = "" if dataset.size <= preview.size else " ..."
    return np.array2string(preview, threshold=16, edgeitems=4) + more


def _raw_h5(path: Path):
    """The file's group tree, None when it is not HDF5 (a JSON profile)."""
    try:
        import h5py
    except ImportError:
        return None
    try:
        if not h5py.is_hdf5(str(path)):
            return None
        with h5py.File(path, "r") as f:
            return _h5_node("/", f, h5py)
    except (OSError, ValueError) as exc:
        return BrowserNode("Raw HDF5", "message", {"text": f"Cannot list the file: {exc}"})


def build_browser_model(file_path) -> BrowserModel:
    """Reads a profile (``spanscope.read_profile``: .h5 or scope-profiler's
    .json) and builds the navigation tree: each region has its Summary (with
    its values per span when the file holds them), its Calls per rank, its
    Source, and per rank its LIKWID counters ("LIKWID rank N") and
    perf-event totals ("Perf events rank N") when the file holds them;
    Plots has a "LIKWID: <metric>" plot per LIKWID metric and event.
    FileNotFoundError for a missing file, the reader's OSError / ValueError
    for one that is not a profile (CorruptProfileError, an OSError, for a
    malformed LIKWID or perf-event group)."""
    path = Path(os.fspath(file_path))
    if not path.exists():
        raise FileNotFoundError(f"No profile at {str(path)!r}")
    results = spanscope.read_profile(path)
    rows = {r["name"]: r for r in region_rows(results, sort="total")}

    sections, modules = metadata_sections(results.metadata)
    metadata_children = [BrowserNode(title, "metadata_section", {"entries": entries})
                         for title, entries in sections if entries]
    if modules is not None:
        mods = list(modules) if isinstance(modules, (list, tuple, np.ndarray)) else [modules]
        metadata_children.append(BrowserNode("Modules", "modules",
                                             {"modules": [_safe(m) for m in mods]}))

    likwid = results.get_likwid_regions()
    perf_events = results.get_perf_events()
    lines_by_region = _line_profile_by_region(results)
    region_children = []
    for region in results.get_regions():
        calls = [BrowserNode(f"Rank {rank}", "rank_calls",
                             {"region": region, "rank": rank, "results": results})
                 for rank in region.ranks]
        summary = {"region": region, "row": rows.get(region.name),
                   "values": region_values(results, region.name)}
        children = [BrowserNode("Summary", "region_summary", summary),
                    BrowserNode("Calls", "region_calls", {"region": region}, calls)]
        if region.has_source:
            children.append(BrowserNode("Source", "source", {"region": region}))
        for rank, by_tag in sorted(likwid.items()):
            if region.name in by_tag:
                children.append(BrowserNode(f"LIKWID rank {rank}", "likwid_rank",
                                            {"rank": rank, "region_name": region.name,
                                             "likwid": by_tag[region.name]}))
        for rank, by_region in sorted(perf_events.items()):
            if region.name in by_region:
                children.append(BrowserNode(f"Perf events rank {rank}", "perf_events_rank",
                                            {"rank": rank, "region_name": region.name,
                                             "totals": by_region[region.name]}))
        line_profile = lines_by_region.pop(region.name, None)
        if line_profile:
            children.append(_line_profile_node(region.name, line_profile))
        region_children.append(BrowserNode(region.name, "region", dict(summary), children))
    for name, by_rank in sorted(lines_by_region.items()):  # profiles of no timed region
        node = _line_profile_node(name, by_rank)
        region_children.append(BrowserNode(name, "line_profile_region", node.payload,
                                           node.children))

    plot_children = [BrowserNode(_PLOT_LABELS.get(name, name.title()), "plot",
                                 {"results": results, "plot_name": name,
                                  "description": description})
                     for name, description in PLOT_CATALOG.items()]
    plot_children += [BrowserNode(f"LIKWID: {metric}", "plot_likwid",
                                  {"results": results, "plot_name": "likwid", "metric": metric,
                                   "description": f"LIKWID metric/event {metric}"})
                      for metric in available_likwid_metrics(results)]
    sections_nodes = [
        BrowserNode("Overview", "overview", {"results": results}),
        BrowserNode("Plots", "plots", {"results": results}, plot_children),
        BrowserNode("Metadata", "metadata", {"metadata": results.metadata},
                    metadata_children),
        BrowserNode("Regions", "regions", {"results": results}, region_children),
    ]
    raw = _raw_h5(path)
    if raw is not None:
        sections_nodes.append(BrowserNode("Raw HDF5", raw.kind, raw.payload, raw.children))
    root = BrowserNode(path.name, "root", {"file_path": path, "results": results},
                       sections_nodes)
    return BrowserModel(file_path=path, results=results, root=root)


# ---------------------------------------------------------------------------
# the detail pane
# ---------------------------------------------------------------------------

def _overview(results) -> str:
    path = Path(results.file_path)
    rows = region_rows(results, sort="total")
    region_time = sum(r["total"] for r in rows if r["total"] is not None)
    calls = sum(r["calls"] for r in rows)
    imbalance = max((r["imbalance"] for r in rows if r["imbalance"]), default=None)
    span = time_span(results)
    try:
        size = f"{path.stat().st_size / 1024 ** 2:.2f} MiB"
    except OSError:
        size = "-"
    metrics = [("File", path), ("Label", results.display_label or "-"),
               ("Ranks", results.num_ranks), ("Regions", len(rows)), ("Calls", calls),
               ("Size", size)]
    if span is not None:
        metrics.append(("Profiled wall clock", f"{span:.6g} s"))
    if results.total_time is not None:
        metrics.append(("Setup to finalize", f"{results.total_time:.6g} s"))
    if imbalance is not None:
        metrics.append(("Max rank imbalance", f"{imbalance:.6g}%"))
    if has_values(results):
        names = sorted({n for per_rank in results.model.values.values()
                        for v in per_rank.values() for n in v.own})
        metrics.append(("Values per span", ", ".join(names) or "-"))
    if results.has_likwid:
        count = sum(len(results.get_likwid_regions(k)) for k in results.likwid_ranks)
        metrics.append(("LIKWID", f"{count} region(s) on rank(s) "
                                  f"{', '.join(map(str, results.likwid_ranks))}"))
    perf = {k: v for k, v in results.get_perf_events().items() if v}
    if perf:
        metrics.append(("Perf events", f"{sum(map(len, perf.values()))} region(s) on "
                                       f"rank(s) {', '.join(map(str, sorted(perf)))}"))
    lines = {k: v for k, v in results.line_profile.items() if v}
    if lines:  # use_line_profiler: a "Line Profile" node under each region
        metrics.append(("Line profiles", f"{sum(map(len, lines.values()))} function(s) on "
                                         f"rank(s) {', '.join(map(str, sorted(lines)))}"))
    text = _table(("Metric", "Value"), metrics)
    unread = unread_groups(results)
    if unread:
        text += (f"\n\nNot shown: the file's {', '.join(unread)} data (spanscope's reader "
                 "does not read it yet).")
    if not rows:
        return text + "\n\nNo regions recorded."
    top = []
    for r in rows[:5]:
        total = r["total"] or 0.0
        width = round(24 * total / region_time) if region_time else 0
        top.append((r["name"], _duration(r["total"]),
                    f"{total / region_time:.1%}" if region_time else "-", "█" * width))
    return (text + "\n\nTop regions by total time\n\n"
            + _table(("Region", "Total", "Share", ""), top, compact=True)
            + "\n\nSelect Regions for the complete breakdown.")


def _bytes(n: int) -> str:
    """n as a byte count, as ``spanscope report`` writes it: "123 B",
    "1.5 KiB", "2.0 MiB", ..."""
    value, unit = float(n), 0
    units = ("B", "KiB", "MiB", "GiB", "TiB")
    while abs(value) >= 1024.0 and unit < len(units) - 1:
        value /= 1024.0
        unit += 1
    return f"{int(n)} B" if unit == 0 else f"{value:.1f} {units[unit]}"


def _value_cell(name: str, value) -> str:
    """A value per span as the report shows it: bytes human-readable (a
    name with "bytes" in it), counts whole."""
    if value is None:
        return "-"
    return _bytes(value) if "bytes" in name else f"{int(value):,}"


def _values_table(values: dict) -> str:
    """region_values' own and self of each value name as a table (the
    calls the values were summed over first)."""
    rows = [("calls", f"{values['calls']:,}", "")]
    for name in values["own"]:
        rows.append((name, _value_cell(name, values["own"][name]),
                     _value_cell(name, values["self"].get(name))))
    return _table(("Value", "Own", "Self"), rows)


def _values_text(values: dict | None) -> str:
    """The values section of a region's detail ("" without values)."""
    if not values:
        return ""
    ranks = values["ranks"]
    where = f"rank {ranks[0]}" if len(ranks) == 1 else \
        f"{len(ranks)} ranks: sums added, peaks the largest"
    return (f"\n\nValues per span ({where})\n"
            "own: the region's spans, children included; self: outside its children\n"
            "peak_bytes: the highest the live bytes rose above a span's start\n\n"
            + _values_table(values))


def _region_summary(region, row, values=None) -> str:
    row = row or region_row(region)
    lines = [("Region", region.name), ("Ranks", row["num_ranks"]), ("Calls", row["calls"]),
             ("Total", _duration(row["total"])),
             ("Exclusive (self)", _duration(row["exclusive"])),
             ("Average", _duration(row["avg"])),
             ("Min / max", f"{_duration(row['min'])} / {_duration(row['max'])}"),
             ("P50 / P95 / P99", f"{_duration(row['p50'])} / {_duration(row['p95'])} / "
                                 f"{_duration(row['p99'])}"),
             ("Std", _duration(row["std"])),
             ("Rank imbalance", _pct(row["imbalance"]))]
    if row.get("gpu_total") is not None:
        lines.append(("GPU total / avg",
                      f"{_duration(row['gpu_total'])} / {_duration(row['gpu_avg'])}"))
    if region.tags:
        lines.append(("Tags", ", ".join(map(str, region.tags))))
    if region.has_source:
        lines.append(("Source", f"{region.source_file}:{region.source_lineno}"))
    return _table(("Metric", "Value"), lines) + _values_text(values)


def _rank_calls(region, rank, results) -> str:
    text = _rank_call_rows(region, rank, results)
    if results is not None:
        text += _values_text(region_values(results, region.name, [rank]))
    return text


def _likwid_rank(payload) -> str:
    """One region's LIKWID counters on one rank: per hardware thread its
    events and LIKWID's derived metrics."""
    counters = payload["likwid"]
    cpus = list(counters.cpus) or list(range(len(counters.times)))
    lines = [f"Region: {counters.tag}", f"Rank: {payload['rank']}",
             f"Group: {counters.group_name or counters.group_id}",
             f"Source: {counters.source}",
             f"CPUs: {', '.join(map(str, counters.cpus)) or '-'}", ""]
    header = [f"CPU {cpu}" for cpu in cpus]
    lines.append(_table(("", *header),
                        [("Calls", *[int(c) for c in counters.call_counts]),
                         ("Runtime [s]", *[f"{float(t):.6g}" for t in counters.times])]))
    for title, names, values in (("Event", counters.event_labels, counters.events),
                                 ("Metric", counters.metric_names, counters.metrics)):
        if names:
            lines += ["", _table((title, *header),
                                 [(name, *[f"{float(v):.6g}" for v in row])
                                  for name, row in zip(names, np.asarray(values).tolist())])]
    return "\n".join(lines)


def _perf_events_rank(payload) -> str:
    """One region's perf-event totals on one rank (scope-profiler's view),
    with the ratios its events allow."""
    from spanscope.results._counters import PERF_DERIVED, perf_metric_value

    totals = payload["totals"]
    lines = [f"Region: {payload['region_name']}", f"Rank: {payload['rank']}",
             f"Calls: {totals.calls}", "",
             _table(("Event", "Count"), [(event, f"{int(value):,}")
                                         for event, value in totals.values.items()])]
    ratios = [(name, perf_metric_value(totals, name)) for name in PERF_DERIVED
              if all(e in totals.values for e in PERF_DERIVED[name][:2])]
    ratios = [(name, "-" if v != v else f"{v:.6g}") for name, v in ratios]
    if ratios:
        lines += ["", _table(("Metric", "Value"), ratios)]
    return "\n".join(lines)


def _rank_call_rows(region, rank, results) -> str:
    data = region[rank]
    if not data.num_calls:
        return "No calls recorded."
    if not data.has_event_data:
        return (f"{region.name} on rank {rank}: {data.num_calls} calls, statistics only "
                "(the file stores no per-call events).")
    origin = results.time_origin if results is not None else 0.0
    events = data.events(origin=origin)
    self_s = data.exclusive_durations
    rows = [(e["call_index"], f"{e['start']:.9g}", f"{e['end']:.9g}",
             f"{e['duration']:.9g}", f"{float(self_s[i]):.9g}")
            for i, e in enumerate(events[:_MAX_CALL_ROWS])]
    text = (f"Calls | {region.name} | rank {rank} (seconds from the run's start)\n\n"
            + _table(("#", "Start", "End", "Duration", "Self"), rows))
    if len(events) > _MAX_CALL_ROWS:
        text += f"\n… {len(events) - _MAX_CALL_ROWS} more calls not listed"
    return text


# -- line profiles (use_line_profiler; scope-profiler's "Line Profile" nodes)
def _line_seconds(record) -> float:
    return float(np.sum(record["times"])) * float(record["unit"])


def _line_profile_by_region(results) -> dict:
    """region -> rank -> its line-profile records (results.line_profile)."""
    out: dict = {}
    for rank, records in sorted(results.line_profile.items()):
        for record in records:
            out.setdefault(str(record["region"]), {}).setdefault(rank, []).append(record)
    return out


def _line_profile_node(region_name: str, by_rank: dict) -> BrowserNode:
    """A region's "Line Profile" node: a child per rank (one record: the
    record itself; several: one child per function)."""
    children, every = [], []
    for rank, records in sorted(by_rank.items()):
        every.extend({**record, "rank": rank} for record in records)
        if len(records) == 1:
            children.append(BrowserNode(f"Rank {rank}", "line_profile_record",
                                        {"rank": rank, "record": records[0]}))
            continue
        children.append(BrowserNode(
            f"Rank {rank} ({len(records)} record(s))", "line_profile_rank",
            {"rank": rank, "records": records},
            [BrowserNode(str(r["function"]), "line_profile_record", {"rank": rank, "record": r})
             for r in records]))
    return BrowserNode("Line Profile", "line_profile_region",
                       {"region": region_name, "records": every}, children)


def _line_profile_text(kind: str, payload) -> str:
    """The detail pane of the line-profile nodes: a region's functions, a
    rank's, or one function's lines (line, hits, time, per hit, %, source:
    every line of the function, those that never ran without timings)."""
    if kind == "line_profile_region":
        rows = [(r.get("rank", "-"), r["function"], f"{r['filename']}:{r['first_lineno']}",
                 len(r["line_numbers"]), f"{_line_seconds(r):.6g} s")
                for r in payload["records"]]
        return (f"Line profile | {payload['region']}\n\n"
                + _table(("Rank", "Function", "Location", "Lines", "Total"), rows))
    if kind == "line_profile_rank":
        rows = [(r["function"], f"{r['filename']}:{r['first_lineno']}",
                 len(r["line_numbers"]), f"{_line_seconds(r):.6g} s")
                for r in payload["records"]]
        return (f"Line profile rank {payload['rank']}\n\n"
                + _table(("Function", "Location", "Lines", "Total"), rows))
    record = payload["record"]
    unit, total = float(record["unit"]), float(np.sum(record["times"]))
    rows = []
    for line, hits, elapsed, text in line_profile_rows(record):
        text = text.replace("\N{ZERO WIDTH SPACE}", "")  # this table keeps blanks
        if hits is None:
            rows.append((int(line), "", "", "", "", text))
            continue
        seconds = float(elapsed) * unit
        rows.append((int(line), int(hits), f"{seconds:.6g}",
                     f"{seconds / int(hits):.6g}" if hits else "",
                     f"{float(elapsed) / total * 100:.2f}" if total else "", text))
    header = (f"Rank {payload['rank']} | {record['region']} | {record['function']}\n"
              f"{record['filename']}:{record['first_lineno']}\n"
              f"Total: {_line_seconds(record):.6g} s")
    if not rows:
        return header + "\n\nNo per-line timings recorded for this function."
    return header + "\n\n" + _table(("Line", "Hits", "Time [s]", "Per hit [s]", "%",
                                       "Source"), rows)


def node_detail_text(node: BrowserNode) -> str:
    """The text the detail pane shows for a node of the tree."""
    kind, payload = node.kind, node.payload
    if kind in ("overview", "root"):
        return _overview(payload["results"])
    if kind == "plots":
        lines = ["Plots", "", "Select a plot below, then press:",
                 "  g  Show it in Matplotlib", "  p  Open it with Plotly in the browser",
                 "  t  Draw a text chart here (durations)", "  s  Save it as a PNG",
                 "Edit the region filters to change the selected regions.", "",
                 "Available plots:"]
        lines += [f"  {name:<12} {desc}" for name, desc in PLOT_CATALOG.items()]
        if any(child.kind == "plot_likwid" for child in node.children):
            lines.append("  LIKWID       One chart per LIKWID metric or event")
        return "\n".join(lines)
    if kind in ("plot", "plot_likwid"):
        lines = [f"Plot: {payload['plot_name']}", payload["description"], "",
                 "Press g for Matplotlib, t for a text chart (durations), p for Plotly in a "
                 "browser, or s to save a PNG."]
        if payload["plot_name"] in ("flame_chart", "flame_graph"):
            lines.append("Press v to open the profile in Snakeviz.")
        if payload.get("metric"):
            lines.append(f"Metric: {payload['metric']}")
        return "\n".join(lines)
    if kind == "metadata":
        metadata = payload["metadata"]
        if not metadata:
            return "No metadata recorded."
        sections, modules = metadata_sections(metadata)
        lines = ["Metadata", "", f"{len(metadata)} metadata entries recorded.",
                 "Select a section below to inspect its values:", ""]
        lines += [f"• {title} ({len(entries)} entries)" for title, entries in sections
                  if entries]
        if modules is not None:
            lines.append("• Modules")
        return "\n".join(lines)
    if kind == "metadata_section":
        return _table(("Key", "Value"), payload["entries"], maxcolwidths=(28, 72))
    if kind == "modules":
        return "\n".join(payload["modules"]) or "No modules recorded."
    if kind == "regions":
        rows = region_rows(payload["results"], sort="total")
        if not rows:
            return "No regions recorded."
        return _table(("Region", "Ranks", "Calls", "Total", "Self", "Avg", "Imbalance"),
                      [(r["name"], r["num_ranks"], r["calls"], _duration(r["total"]),
                        _duration(r["exclusive"]), _duration(r["avg"]), _pct(r["imbalance"]))
                       for r in rows])
    if kind in ("region", "region_summary"):
        return _region_summary(payload["region"], payload.get("row"), payload.get("values"))
    if kind == "region_calls":
        region = payload["region"]
        return (f"Calls | {region.name}\n\n"
                + _table(("Rank", "Calls"), [(k, region[k].num_calls) for k in region.ranks]))
    if kind == "rank_calls":
        return _rank_calls(payload["region"], payload["rank"], payload.get("results"))
    if kind == "likwid_rank":
        return _likwid_rank(payload)
    if kind == "perf_events_rank":
        return _perf_events_rank(payload)
    if kind in ("line_profile_region", "line_profile_rank", "line_profile_record"):
        return _line_profile_text(kind, payload)
    if kind == "source":
        region = payload["region"]
        if not region.has_source:
            return "Source not captured."
        text = region.source_text or "(the file stores no source text for this region)"
        return f"{region.source_file}:{region.source_lineno}\n\n{text}"
    if kind == "h5_group":
        lines = [f"HDF5 group: {payload['path']}", f"Members: {payload['members']}"]
        if payload["attrs"]:
            lines += ["", "Attributes", _table(("Key", "Value"), sorted(payload["attrs"].items()),
                                               maxcolwidths=(28, 72))]
        return "\n".join(lines)
    if kind == "h5_dataset":
        lines = [f"HDF5 dataset: {payload['path']}", f"Shape: {payload['shape']}",
                 f"Dtype: {payload['dtype']}", f"Size: {payload['size']}",
                 f"Chunks: {payload['chunks'] or '-'}",
                 f"Compression: {payload['compression'] or '-'}", "", "Preview",
                 payload["preview"]]
        if payload["attrs"]:
            lines += ["", "Attributes", _table(("Key", "Value"), sorted(payload["attrs"].items()),
                                               maxcolwidths=(28, 72))]
        return "\n".join(lines)
    if kind == "message":
        return payload["text"]
    return node.label


# ---------------------------------------------------------------------------
# plots
# ---------------------------------------------------------------------------

_PLOT_KINDS = ("plot", "plot_likwid")


def _plot_options(node: BrowserNode, settings: dict | None):
    if node.kind not in _PLOT_KINDS:
        raise ValueError("Select an individual plot before rendering.")
    settings = settings or {}
    include, exclude = _split_patterns(settings.get("include")), \
        _split_patterns(settings.get("exclude"))
    _select_regions(node.payload["results"], include, exclude)  # checks the patterns
    return settings, include, exclude, parse_ranks(str(settings.get("ranks", "")))


def render_plot(node: BrowserNode, *, filepath=None, show: bool = False,
                settings: dict | None = None):
    """Draws a Plots node's plot with spanscope.plots (a "LIKWID: <metric>"
    node: plot_likwid of its metric): to filepath (returned as a string),
    or in a window with show.  settings: include / exclude
    (comma-separated patterns), ranks ("0,2-4"), cmap, backend, log_scale,
    and for durations metric, sort_by, top_n; bins (histogram);
    imbalance_metric.  backend "plotext" (durations only): the text chart
    of render_text_chart (width, height) printed with show, or written to
    filepath.  ValueError for a node that is not a plot or a bad setting."""
    settings, include, exclude, ranks = _plot_options(node, settings)
    results = node.payload["results"]
    name = node.payload["plot_name"]
    if settings.get("backend") == "plotext":  # the text chart (no plotext needed)
        text = render_text_chart(node, settings=settings,
                                 width=int(settings.get("width") or 100),
                                 height=int(settings.get("height") or 35))
        if filepath:
            Path(filepath).write_text(text + "\n", encoding="utf-8")
            return str(filepath)
        if show:
            print(text)
        return None
    cmap = settings.get("cmap") or "tab20"
    if name in ("flame_chart", "flame_graph") and cmap == "tab20":
        cmap = FLAME_CMAP
    common = {"filepath": str(filepath) if filepath else None, "show": show,
              "verbose": False, "backend": settings.get("backend") or "matplotlib",
              "include": include, "exclude": exclude, "ranks": ranks, "cmap": cmap}
    log_scale = bool(settings.get("log_scale", False))
    this = sys.modules[__name__]  # the plot functions by name (tests replace them)
    if name == "durations":
        top_n = str(settings.get("top_n", "") or "").strip()
        if top_n and not top_n.isdigit():
            raise ValueError(f"Top N must be a whole number, got {top_n!r}")
        this.plot_durations(results, metric=str(settings.get("metric") or "total"),
                            sort_by=settings.get("sort_by") or None,
                            top_n=int(top_n) if top_n else None, log_scale=log_scale,
                            **common)
    elif name == "histogram":
        bins = str(settings.get("bins", "30") or "30").strip()
        if not bins.isdigit() or int(bins) < 1:
            raise ValueError(f"Histogram bins must be a positive whole number, got {bins!r}")
        this.plot_duration_histogram(results, bins=int(bins), log_scale=log_scale, **common)
    elif name == "imbalance":
        this.plot_imbalance(results, metric=settings.get("imbalance_metric") or "total",
                            log_scale=log_scale, **common)
    elif name == "timeseries":
        this.plot_duration_timeseries(results, log_scale=log_scale, **common)
    elif name == "likwid":
        this.plot_likwid(results, metric=node.payload["metric"], log_scale=log_scale,
                         **common)
    elif name == "callgraph":
        this.plot_callgraph(results, rank=ranks[0] if ranks else 0, include=include,
                            exclude=exclude, filepath=common["filepath"], show=show,
                            verbose=False, backend=common["backend"])
    else:
        getattr(this, {"gantt": "plot_gantt", "flame_chart": "plot_flame_chart",
                       "flame_graph": "plot_flame_graph"}[name])(results, **common)
    return str(filepath) if filepath else None


def render_text_chart(node: BrowserNode, *, settings: dict | None = None, width: int = 100,
                      height: int = 35) -> str:
    """The durations plot as a text bar chart of at most width columns and
    height lines (for the detail pane): one bar per selected region, its
    metric (total, avg, min or max of region_rows) over the selected ranks,
    sorted by sort_by (default: the metric), cut to top_n and to the lines
    there are; log_scale draws log10 lengths.  ValueError("Invalid region
    filter: ...") for a pattern that does not compile; one chart at a time
    (a lock)."""
    with _TEXT_LOCK:
        if node.kind != "plot":
            raise ValueError("Select an individual plot before rendering.")
        if node.payload.get("plot_name") not in TEXT_PLOTS:
            raise ValueError("The text chart is available for the durations plot only.")
        settings, include, exclude, ranks = _plot_options(node, settings)
        width, height = max(20, int(width)), max(5, int(height))
        results = node.payload["results"]
        metric = str(settings.get("metric") or "total")
        if metric not in ("total", "avg", "min", "max"):
            raise ValueError(f"metric must be total, avg, min or max, got {metric!r}")
        rows = [r for r in region_rows(results, include, exclude, ranks)
                if r[metric] is not None]
        sort_by = settings.get("sort_by") or metric
        key = {"name": "name", "avg": "avg", "min": "min", "max": "max",
               "total": "total"}.get(sort_by, metric)
        if key == "name":
            rows.sort(key=lambda r: r["name"])
        else:
            rows.sort(key=lambda r: r[key] or 0.0, reverse=True)
        top_n = str(settings.get("top_n", "") or "").strip()
        if top_n:
            if not top_n.isdigit():
                raise ValueError(f"Top N must be a whole number, got {top_n!r}")
            rows = rows[:int(top_n)]
        title = f"{metric} duration [s]" + (" (log scale)" if settings.get("log_scale") else "")
        if not rows:
            return title[:width] + "\n" + "No matching regions with calls."[:width]
        rows = rows[:height - 1]
        values = [float(r[metric]) for r in rows]
        labels = [f"{v:.4g}" for v in values]
        name_w = min(max(len(r["name"]) for r in rows), max(6, width // 3))
        value_w = max(len(s) for s in labels)
        bar_w = max(1, width - name_w - value_w - 4)
        if settings.get("log_scale"):
            positive = [v for v in values if v > 0]
            low = min(positive) / 10 if positive else 1.0
            scaled = [np.log10(v / low) if v > 0 else 0.0 for v in values]
        else:
            scaled = values
        top = max(scaled) or 1.0
        lines = [title[:width]]
        for r, s, label in zip(rows, scaled, labels):
            name = r["name"] if len(r["name"]) <= name_w else r["name"][:name_w - 1] + "…"
            bar = "█" * max(0, round(bar_w * s / top))
            lines.append(f"{name:<{name_w}} │{bar:<{bar_w}} {label:>{value_w}}"[:width])
        return "\n".join(lines)


def render_plotext_text(node: BrowserNode, *, settings: dict | None = None,
                        width: int = 100, height: int = 35) -> str:
    """The pane's chart as scope-profiler's TUI makes it: what
    ``render_plot(node, show=True, settings={..., "backend": "plotext"})``
    prints (render_text_chart's chart, width x height), captured; one at
    a time; ValueError("Invalid region filter: ...") for a bad pattern."""
    import contextlib
    import io

    with _TEXT_LOCK:
        out = io.StringIO()
        this = sys.modules[__name__]  # render_plot by its module name (tests replace it)
        try:
            with contextlib.redirect_stdout(out):
                this.render_plot(node, show=True, settings={**(settings or {}),
                                                            "backend": "plotext",
                                                            "width": width, "height": height})
        except re.error as exc:
            raise ValueError(f"Invalid region filter: {exc}") from exc
        return out.getvalue().rstrip()


def _plot_file_stem(node: BrowserNode) -> str:
    """The file name (no suffix) a plot is saved under: its name, and for a
    LIKWID plot its metric's alphanumeric words ("likwid_CPI")."""
    stem = node.payload["plot_name"]
    if node.payload.get("metric"):
        words = re.findall(r"[A-Za-z0-9]+", node.payload["metric"])
        stem += "_" + "_".join(words) if words else ""
    return stem


def _matplotlib_child_script() -> str:
    """The child process that shows a real Matplotlib window (outside
    Textual's event loop): argv is file, plot name, settings JSON and, for
    a LIKWID plot, its metric."""
    return (
        "import json, sys\n"
        "from spanscope.integrations.tui import build_browser_model, render_plot\n"
        "file_path, plot_name, settings = sys.argv[1:4]\n"
        "metric = sys.argv[4] if len(sys.argv) > 4 else None\n"
        "plots = next(n for n in build_browser_model(file_path).root.children"
        " if n.kind == 'plots')\n"
        "node = next(n for n in plots.children if n.payload['plot_name'] == plot_name"
        " and n.payload.get('metric') == metric)\n"
        "render_plot(node, show=True, settings=json.loads(settings))\n"
    )


# ---------------------------------------------------------------------------
# the app
# ---------------------------------------------------------------------------

_APP_CLASS = None


def _app_class():
    """The Textual App class (built once; Textual imported here only).
    RuntimeError naming the extra without Textual."""
    global _APP_CLASS
    if _APP_CLASS is not None:
        return _APP_CLASS
    try:
        from rich.text import Text
        from textual.app import App, ComposeResult
        from textual.containers import Horizontal, Vertical, VerticalScroll
        from textual.widgets import (Button, Checkbox, Footer, Header, Input, Select, Static,
                                     Tree)
    except ImportError as exc:
        raise RuntimeError("The terminal browser needs Textual (the 'tui' extra): "
                           "pip install 'spanscope[tui]'") from exc
    no_selection = getattr(Select, "NULL", getattr(Select, "BLANK", None))

    class BrowserApp(App):
        """The profile browser: tree on the left, details on the right."""

        class Detail(Static):
            """The detail text; focusable so it can be scrolled by keys."""
            can_focus = True

        class DetailScroll(VerticalScroll):
            can_focus = True

        CSS = """
        Screen { layout: vertical; }
        #body { height: 1fr; }
        #nav { width: 28%; min-width: 24; border: solid $accent; padding: 0 1;
               overflow-x: hidden; overflow-y: auto; }
        #right { width: 1fr; }
        #detail-scroll { height: 1fr; min-height: 8; border: solid $accent; padding: 1 2;
                         overflow-x: auto; overflow-y: auto; }
        #detail { height: auto; text-wrap: nowrap; }
        #settings { height: auto; max-height: 45%; border: solid $accent; padding: 0 1;
                    display: none; overflow-y: auto; }
        #selected-regions { height: 3; border: solid $secondary; padding: 0 1;
                            overflow-y: auto; }
        .setting { width: 1fr; }
        """
        BINDINGS: ClassVar[list] = [
            ("q", "quit", "Quit"),
            ("escape", "focus_navigation", "Focus navigation"),
            ("g", "show_matplotlib", "Show Matplotlib"),
            ("p", "show_plotly", "Open Plotly"),
            ("t", "show_text_chart", "Text chart"),
            ("s", "save_plot", "Save plot"),
            ("v", "show_snakeviz", "Open in Snakeviz"),
        ]

        def __init__(self, model: BrowserModel, output_dir=None):
            super().__init__()
            self.model = model
            self.output_dir = Path(output_dir) if output_dir else None
            self.selected_browser_node: BrowserNode | None = None
            #: the text the detail pane shows now
            self.detail_text = ""
            self.plot_settings = {"include": "", "exclude": "", "ranks": "", "cmap": "tab20",
                                  "log_scale": False, "metric": "total", "sort_by": "",
                                  "top_n": "", "bins": "30", "imbalance_metric": "total"}
            self._plotext_refresh_timer = None

        # -- layout ---------------------------------------------------------
        def compose(self) -> ComposeResult:
            yield Header()
            with Horizontal(id="body"):
                tree = Tree(self.model.root.label, id="nav")
                tree.show_root = False
                yield tree
                with Vertical(id="right"):
                    with self.DetailScroll(id="detail-scroll"):
                        yield self.Detail("", id="detail")
                    with Vertical(id="settings"):
                        yield Static("Plot settings", id="settings-title")
                        yield Input(placeholder="Include regions (comma-separated)",
                                    id="include", classes="setting")
                        yield Input(placeholder="Exclude regions (comma-separated)",
                                    id="exclude", classes="setting")
                        yield Static("All regions", id="selected-regions", classes="setting")
                        yield Input(placeholder="Ranks (e.g. 0,2-4)", id="ranks",
                                    classes="setting")
                        yield Input(value="tab20", placeholder="Colormap", id="cmap",
                                    classes="setting")
                        yield Select([(m.title(), m) for m in ("total", "avg", "min", "max")],
                                     prompt="Duration metric", value="total", id="metric",
                                     classes="setting", allow_blank=False)
                        yield Select([("Default", "")] + [(m.title(), m) for m in
                                                          ("name", "avg", "min", "max",
                                                           "total")],
                                     prompt="Sort by", value="", id="sort_by",
                                     classes="setting", allow_blank=False)
                        yield Input(placeholder="Top N regions", id="top_n", classes="setting")
                        yield Input(value="30", placeholder="Histogram bins", id="bins",
                                    classes="setting")
                        yield Select([(m.title(), m) for m in ("total", "avg", "min", "max")],
                                     prompt="Imbalance metric", value="total",
                                     id="imbalance_metric", classes="setting",
                                     allow_blank=False)
                        yield Checkbox("Log scale", id="log_scale")
                        yield Button("Apply settings", id="apply-settings", variant="primary")
            yield Footer()

        def on_mount(self) -> None:
            self.title = f"spanscope — {self.model.file_path.name}"
            tree = self.query_one("#nav", Tree)
            tree.root.data = self.model.root
            self._populate(tree.root, self.model.root.children)
            tree.root.expand()
            tree.focus()
            if tree.root.children:
                # the root (the file, named in the title) is not shown, so
                # the cursor's first line is the Overview
                tree.cursor_line = 0
                self._show(tree.root.children[0].data)
            self._update_selected_regions()

        def _populate(self, tree_node, nodes) -> None:
            for node in nodes:
                child = tree_node.add(node.label, data=node) if node.children \
                    else tree_node.add_leaf(node.label, data=node)
                if node.children:
                    self._populate(child, node.children)

        # -- the detail pane ------------------------------------------------
        def _detail(self, node: BrowserNode):
            """node's detail as rich Text; a view that fails says so in the
            pane instead of taking the app down."""
            try:
                text = node_detail_text(node)
            except Exception as exc:
                text = f"Unable to render {node.label}\n\n{type(exc).__name__}: {exc}"
            return Text(text, no_wrap=node.kind not in ("metadata", "modules"))

        def _set_detail(self, text) -> None:
            self.detail_text = text.plain if isinstance(text, Text) else str(text)
            self.query_one("#detail", self.Detail).update(text)

        def _show(self, node: BrowserNode) -> None:
            self.selected_browser_node = node
            self.query_one("#settings").styles.display = \
                "block" if node.kind in _PLOT_KINDS else "none"
            if node.kind == "plot" and node.payload["plot_name"] in TEXT_PLOTS:
                # let the layout settle before measuring the pane for the chart
                self.call_after_refresh(self._show_plotext_in_detail, node)
            else:
                self._set_detail(self._detail(node))

        def _follow(self, event) -> None:
            node = event.node.data
            # the hidden root is never a view of its own
            if isinstance(node, BrowserNode) and node is not self.model.root \
                    and node is not self.selected_browser_node:
                self._show(node)

        def on_tree_node_selected(self, event) -> None:
            self._follow(event)

        def on_tree_node_highlighted(self, event) -> None:
            self._follow(event)

        # -- settings -------------------------------------------------------
        def _read_settings(self) -> None:
            for key in ("include", "exclude", "ranks", "cmap", "top_n", "bins"):
                self.plot_settings[key] = self.query_one(f"#{key}", Input).value
            for key in ("metric", "sort_by", "imbalance_metric"):
                value = self.query_one(f"#{key}", Select).value
                self.plot_settings[key] = "" if value is no_selection else str(value)
            self.plot_settings["log_scale"] = self.query_one("#log_scale", Checkbox).value

        def _update_selected_regions(self) -> None:
            include = _split_patterns(self.query_one("#include", Input).value)
            exclude = _split_patterns(self.query_one("#exclude", Input).value)
            try:
                names = [r.name for r in _select_regions(self.model.results, include,
                                                         exclude)]
                text = ", ".join(names) if names else "No matching regions"
            except ValueError as exc:
                text = str(exc)
            self.query_one("#selected-regions", Static).update(Text(text))

        def on_input_changed(self, event) -> None:
            if event.input.id in ("include", "exclude"):
                self._update_selected_regions()
            self._schedule_plotext_refresh()

        def on_checkbox_changed(self, event) -> None:
            self._schedule_plotext_refresh()

        def on_select_changed(self, event) -> None:
            self._schedule_plotext_refresh()

        def _schedule_plotext_refresh(self) -> None:
            node = self.selected_browser_node
            if node is None or node.kind != "plot" or \
                    node.payload["plot_name"] not in TEXT_PLOTS:
                return
            if self._plotext_refresh_timer is not None:
                self._plotext_refresh_timer.stop()
            # set_timer passes no arguments: the node is bound here
            self._plotext_refresh_timer = self.set_timer(
                0.2, partial(self._show_plotext_in_detail, node))

        def on_button_pressed(self, event) -> None:
            if event.button.id == "apply-settings":
                self._read_settings()
                self.notify("Plot settings applied.", timeout=3)
                self._schedule_plotext_refresh()

        # -- actions --------------------------------------------------------
        def action_focus_navigation(self) -> None:
            self.query_one("#nav", Tree).focus()

        def _selected_plot(self) -> BrowserNode | None:
            node = self.selected_browser_node
            if node is None or node.kind not in _PLOT_KINDS:
                self.notify("Select an individual plot first.", severity="warning")
                return None
            return node

        def _plot_dir(self) -> Path:
            directory = self.output_dir or (self.model.file_path.parent
                                            / f"{self.model.file_path.stem}_plots")
            directory.mkdir(parents=True, exist_ok=True)
            return directory

        def _show_plotext_in_detail(self, node: BrowserNode | None = None) -> None:
            node = node or self.selected_browser_node
            if node is None:
                return
            self._read_settings()
            pane = self.query_one("#detail-scroll", self.DetailScroll)
            this = sys.modules[__name__]  # the chart by its module name (tests replace it)
            try:
                text = this.render_plotext_text(node, settings=self.plot_settings,
                                                width=pane.content_size.width or 80,
                                                height=pane.content_size.height or 20)
            except ValueError as exc:
                if str(exc).startswith("Invalid region filter"):
                    return  # a pattern half typed: keep the last chart
                text = f"{node_detail_text(node)}\n\n{exc}"
            if node is self.selected_browser_node:  # not a stale refresh
                self._set_detail(Text(text, no_wrap=True))

        def action_show_text_chart(self) -> None:
            node = self._selected_plot()
            if node is None:
                return
            if node.payload["plot_name"] not in TEXT_PLOTS:
                self.notify("The text chart is available for the durations plot only.",
                            severity="warning", timeout=5)
                return
            self._show_plotext_in_detail(node)

        def action_save_plot(self) -> None:
            node = self._selected_plot()
            if node is None:
                return
            self._read_settings()
            try:
                path = self._plot_dir() / f"{_plot_file_stem(node)}.png"
                saved = render_plot(node, filepath=path, show=False,
                                    settings={**self.plot_settings, "backend": "matplotlib"})
            except Exception as exc:  # ImportError (no matplotlib), ValueError, OSError
                self.notify(str(exc), severity="error", timeout=8)
                return
            self.notify(f"Saved {saved}", timeout=8)

        def action_show_matplotlib(self) -> None:
            node = self._selected_plot()
            if node is None:
                return
            self._read_settings()
            try:
                _plot_options(node, self.plot_settings)  # bad settings: say so here
                subprocess.Popen([sys.executable, "-c", _matplotlib_child_script(),
                                  str(self.model.file_path), node.payload["plot_name"],
                                  json.dumps({**self.plot_settings, "backend": "matplotlib"}),
                                  *([node.payload["metric"]] if node.payload.get("metric")
                                    else [])],
                                 start_new_session=True, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL)
            except (ValueError, OSError) as exc:
                self.notify(str(exc), severity="error", timeout=8)
                return
            self.notify("Plot opened in Matplotlib.", timeout=5)

        def action_show_plotly(self) -> None:
            node = self._selected_plot()
            if node is None:
                return
            self._read_settings()
            try:
                path = self._plot_dir() / f"{_plot_file_stem(node)}.html"
                render_plot(node, filepath=path, show=False,
                            settings={**self.plot_settings, "backend": "plotly"})
                webbrowser.open(path.resolve().as_uri())
            except Exception as exc:  # ImportError (no plotly), ValueError, OSError
                self.notify(str(exc), severity="error", timeout=8)
                return
            self.notify(f"Opened {path} in the browser.", timeout=8)

        def action_show_snakeviz(self) -> None:
            node = self.selected_browser_node
            if node is None or node.kind != "plot" or \
                    node.payload["plot_name"] not in ("flame_chart", "flame_graph"):
                self.notify("Select a flame plot first.", severity="warning")
                return
            self._read_settings()
            try:
                ranks = parse_ranks(self.plot_settings["ranks"])
                paths = spanscope.export_prof(
                    self.model.results, self._plot_dir() / "profile.prof", ranks=ranks,
                    include=_split_patterns(self.plot_settings["include"]),
                    exclude=_split_patterns(self.plot_settings["exclude"]), verbose=False)
                if not paths:
                    raise ValueError("No profile data was exported.")
                with socket.socket() as probe:
                    probe.bind(("127.0.0.1", 0))
                    port = probe.getsockname()[1]
                subprocess.Popen(["snakeviz", "--server", "--hostname", "127.0.0.1",
                                  "--port", str(port), str(paths[0])],
                                 start_new_session=True, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL)
                url = f"http://127.0.0.1:{port}/snakeviz/{quote(str(paths[0]), safe='')}"
                self.set_timer(1.0, lambda: webbrowser.open(url))
            except FileNotFoundError:
                self.notify("Snakeviz is not installed: pip install snakeviz",
                            severity="error", timeout=8)
                return
            except (RuntimeError, ValueError, OSError) as exc:
                self.notify(str(exc), severity="error", timeout=8)
                return
            self.notify(f"Opened {url} in Snakeviz.", timeout=8)

    _APP_CLASS = BrowserApp
    return BrowserApp


#: scope-profiler's name of the class factory.
_build_textual_app_class = _app_class


def create_app(model: BrowserModel, output_dir=None):
    """The Textual app for model (``app.run()`` shows it; tests drive it
    with ``app.run_test()``).  output_dir: where plots are saved (default:
    ``<file stem>_plots`` beside the file).  RuntimeError without Textual."""
    return _app_class()(model, output_dir=output_dir)


def build_parser() -> argparse.ArgumentParser:
    """``spanscope tui``'s options (scope-profiler's ``tui``)."""
    parser = argparse.ArgumentParser(
        prog="spanscope tui",
        description="Browse a profile interactively (.h5, or scope-profiler's .json) in "
                    "the terminal. Needs Textual: pip install 'spanscope[tui]'.")
    parser.add_argument("file", help="the profile, e.g. profiling_data.h5")
    parser.add_argument("--plot-output", metavar="DIR",
                        help="folder for plots saved from the browser (default: "
                             "<file stem>_plots next to the file)")
    return parser


def main(argv: list[str] | None = None) -> int:
    """``spanscope tui FILE [--plot-output DIR]``: opens the browser.
    Exit status 0; 1 with one line on stderr for a file that cannot be
    read; 2 for bad usage or without Textual (``--help`` needs no
    Textual)."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as stop:
        return stop.code if isinstance(stop.code, int) else 2
    try:
        app_class = _app_class()
    except RuntimeError as exc:
        sys.stderr.write(f"spanscope tui: {exc}\n")
        return 2
    try:
        model = build_browser_model(args.file)
    except (OSError, ValueError, KeyError) as exc:
        sys.stderr.write(f"spanscope tui: {args.file}: {exc}\n")
        return 1
    app_class(model, output_dir=args.plot_output).run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
