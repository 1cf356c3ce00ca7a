"""The region table of ProfilingResults.print_summary and inspect_file,
printed as scope-profiler 0.7.5 prints it (its summary.py): a rounded box
(╭─╮ │ ├─┤ ╰─╯, two-space indent), one row per call path indented as a
tree, each parent followed by an "(own)" row for its exclusive time, a
self-recursive region as one "name ↻" row, counts inline ("step (3x)")
unless a calls column is asked for, and the notes in an "Info" box below.

The paths come from the one fold's parents (``_results_api._call_arrays``,
which calls the C fold); the per-region statistics of rows without a call
tree come from the C reader's columns (``Region``).  This module only
groups calls by path, formats numbers and draws the box: no second parse.

Where the text differs from scope-profiler's on purpose: the "Explore"
hints of the Info box name spanscope's own subcommands (``spanscope
line-profile`` is scope-profiler's ``line-profile``; its ``tui`` line is
left out).  ProfileManager.session()'s root is scope-profiler's
"scope_profiler.session" (files of older spanscope versions named it
"spanscope.session": both count as the session region).
"""

from __future__ import annotations

import os
import shlex
import sys

import numpy as np

from spanscope import _ext
from spanscope.results._calls import _call_arrays
from spanscope.results._errors import NestingError
from spanscope.results._regions import MPIRegion

NS = 1e9

#: (key, header) of every column print_summary knows, scope-profiler's order
COLUMNS = (
    ("name", "region"), ("ranks", "ranks"), ("calls", "n"), ("total", "total [s]"),
    ("percent", "% session"), ("parent_percent", "% parent"), ("avg", "avg/call [s]"),
    ("gpu_total", "gpu total [s]"), ("gpu_avg", "gpu avg [s]"), ("min", "min [s]"),
    ("max", "max [s]"), ("first", "first [s]"), ("last", "last [s]"), ("std", "std [s]"),
    ("p50", "p50 [s]"), ("p95", "p95 [s]"), ("p99", "p99 [s]"),
    ("imbalance", "imbalance [%]"))
DEFAULT_COLUMNS = ("region", "percent", "total")
SORT_KEYS = ("start", "total", "calls", "avg", "min", "max", "first", "last", "std", "p50",
             "p95", "p99", "imbalance", "name")
#: the root regions a session opens (scope-profiler's, ours): % session is of them
SESSION_REGIONS = ("scope_profiler.session", "spanscope.session")
SESSION_REGION = SESSION_REGIONS[0]
_RECURSIVE_NOTE = ("↻ Recursive rows pool every level of the recursion: the call count "
                   "includes nested calls, the total only the outermost ones.")
_MODES = ("coverage", "exclusive")
# Columns a region name may take in the box (its tree prefix included):
# names come from files anyone wrote, and a 1 MiB name must leave the
# table readable.  Longer names end in "..." (the data formats keep them
# whole).
NAME_COLS = 100


def terminal_text(text, max_cols: int = 0) -> str:
    """text (a name or value read from a file) as the terminal tables show
    it, by the C tables' rule (sps_terminal_text): C0 controls (tab and
    newline too), DEL and C1 controls as '?', invalid UTF-8 (lone
    surrogates) as U+FFFD, cut to max_cols columns ending in "..." (0:
    never cut).  Every terminal output of the Python faces prints the
    file's strings through this one function."""
    return _ext.terminal_text(str(text), max_cols)


def _check_mode(percentage_mode: str) -> None:
    if percentage_mode not in _MODES:
        raise ValueError("percentage_mode must be 'coverage' or 'exclusive'")


def normalize_columns(columns) -> list[tuple[str, str]]:
    """(key, header) pairs of the named columns ("region" or "name" is the
    name column); ValueError for an unknown name or none at all (the
    message scope-profiler gives)."""
    if columns is None:
        columns = DEFAULT_COLUMNS
    if isinstance(columns, str):
        columns = [columns]
    by_key = dict(COLUMNS)
    out, bad = [], []
    for c in columns:
        key = "name" if c in ("region", "name") else c
        if key in by_key:
            out.append((key, by_key[key]))
        else:
            bad.append(c)
    if bad:
        choices = ", ".join(["region"] + [k for k, _ in COLUMNS[1:]])
        raise ValueError(f"Unknown region summary column(s): {bad}. Choices: {choices}")
    if not out:
        raise ValueError("At least one region summary column must be selected.")
    return out


# --------------------------------------------------------------------------
# rows
# --------------------------------------------------------------------------

def _union_ns(starts: np.ndarray, ends: np.ndarray) -> int:
    """Nanoseconds covered by the intervals, overlaps counted once (the
    wall-clock coverage % session divides)."""
    if not starts.size:
        return 0
    order = np.argsort(starts, kind="stable")
    s, e = starts[order], ends[order]
    reach = np.maximum.accumulate(e)
    new = np.ones(s.size, bool)
    new[1:] = s[1:] > reach[:-1]  # touching intervals merge, as in scope-profiler
    idx = np.flatnonzero(new)
    block_end = np.append(reach[idx[1:] - 1], reach[-1])
    return int((block_end - s[idx]).sum())


class _Path:
    """The calls of one call path (adjacent repeats of a name collapsed),
    per rank: indices into that rank's call arrays."""

    def __init__(self, key, ident):
        self.key, self.id = key, ident
        self.recursive = False
        self.calls: dict[int, list[int]] = {}  # rank -> call indices


class _RankCalls:
    """One rank's calls as the fold gave them: a (CallArrays), their
    exclusive ns, the path id of every call and their GPU ns (-1: none)."""

    def __init__(self, a, exclusive_ns, path_ids, gpu_ns):
        self.a, self.exclusive_ns, self.path_ids, self.gpu_ns = (
            a, exclusive_ns, path_ids, gpu_ns)


def _event_regions(regions, rank):
    return [r for r in regions if rank in r.regions and r.regions[rank].has_event_data
            and r.regions[rank].stored_summary is None]


def _rank_paths(regions, rank, paths, everything) -> _RankCalls:
    """Adds rank's calls of regions (those with events) to paths (key ->
    _Path, in first-call order) by the fold's parents.  everything: when
    the table is filtered, every region, folded for the exclusive times
    (hidden children still take their parent's time, as in scope-profiler).
    NestingError when calls of a thread overlap without nesting."""
    mine = _event_regions(regions, rank)
    a = _call_arrays(mine, rank, strict=True)
    excl = a.exclusive_ns
    if everything is not None and len(a):
        excl = _exclusive_from(everything, rank, a)
    ids = np.empty(len(a), np.int64)
    node_of: list = [None] * len(a)
    parent = a.parent.tolist()
    for i, row in enumerate(a.region_index.tolist()):
        name, p = a.names[row], parent[i]
        pkey = None if p < 0 else node_of[p].key
        key = (name,) if pkey is None else pkey if pkey[-1] == name else pkey + (name,)
        node = paths.get(key)
        if node is None:
            node = paths[key] = _Path(key, len(paths))
        node_of[i] = node
        ids[i] = node.id
        if p >= 0 and node_of[p] is node:
            node.recursive = True
        node.calls.setdefault(rank, []).append(i)
    return _RankCalls(a, excl, ids, _gpu_of(mine, rank, a))


def _exclusive_from(everything, rank, a) -> np.ndarray:
    """Exclusive ns of a's calls taken from a fold of every region of rank."""
    full = _call_arrays(_event_regions(everything, rank), rank, strict=True)
    by_call = {(full.names[r], c): x for r, c, x in zip(
        full.region_index.tolist(), full.call_index.tolist(), full.exclusive_ns.tolist())}
    return np.asarray([by_call[(a.names[r], c)] for r, c in zip(
        a.region_index.tolist(), a.call_index.tolist())], np.int64)


def _gpu_of(mine, rank, a):
    """GPU ns of a's calls (-1 where a call has none), None when no region
    of the rank has GPU timing."""
    gpu = {r.name: r.regions[rank].gpu_durations_ns for r in mine
           if r.regions[rank].has_gpu_timing and r.regions[rank].gpu_durations_ns is not None}
    if not gpu:
        return None
    out = np.full(len(a), -1, np.int64)
    for row, name in enumerate(a.names):
        if name in gpu:
            sel = a.region_index == row
            out[sel] = np.asarray(gpu[name], np.int64)[a.call_index[sel]]
    return out


def _path_row(node: _Path, ranks: dict) -> dict:
    """scope-profiler's row of a call path (seconds): every call pooled
    for the distribution, only the outermost calls of a recursion in the
    total, coverage the union of the calls' intervals per rank."""
    durs, gpu, totals = [], [], []
    coverage = exclusive = 0
    first = last = start = None
    for rank, idx in node.calls.items():
        rc = ranks[rank]
        ix = np.asarray(idx, np.int64)
        s, e = rc.a.start_ns[ix], rc.a.end_ns[ix]
        d = e - s
        durs.append(d)
        exclusive += int(rc.exclusive_ns[ix].sum())
        coverage += _union_ns(s, e)
        par = rc.a.parent[ix]
        nested = (par >= 0) & (rc.path_ids[np.maximum(par, 0)] == node.id)
        totals.append(int(d[~nested].sum()) if node.recursive else int(d.sum()))
        if rc.gpu_ns is not None:
            g = rc.gpu_ns[ix]
            gpu.extend(g[g >= 0].tolist())
        j, k = int(np.argmin(s)), int(np.argmax(e))
        if first is None or s[j] < first[0]:
            first = (int(s[j]), int(d[j]))
        if last is None or e[k] > last[0]:
            last = (int(e[k]), int(d[k]))
        start = int(s[j]) if start is None else min(start, int(s[j]))
    d = np.concatenate(durs) / NS
    mean_total = float(np.mean(totals))
    return {
        "name": node.key[-1], "call_path": " > ".join(node.key),
        "num_ranks": len(node.calls), "calls": int(d.size), "total": sum(totals) / NS,
        "gpu_total": sum(gpu) / NS if gpu else None,
        "gpu_avg": float(np.mean(gpu)) / NS if gpu else None,
        "coverage": coverage / NS, "exclusive": exclusive / NS,
        "avg": float(np.mean(d)), "min": float(np.min(d)), "max": float(np.max(d)),
        "first": first[1] / NS, "last": last[1] / NS, "std": float(np.std(d)),
        "p50": float(np.percentile(d, 50)), "p95": float(np.percentile(d, 95)),
        "p99": float(np.percentile(d, 99)),
        "imbalance": (0.0 if len(totals) < 2 or not mean_total
                      else (max(totals) / mean_total - 1.0) * 100.0),
        "depth": len(node.key) - 1, "recursive": node.recursive, "start": start / NS,
    }


def _stored_moments(per_rank):
    """first, last, std (s) of aggregate-only rows from their stored
    statistics (None where a rank lacks them)."""
    sums = [d.stored_summary for d in per_rank.values()
            if d.num_calls and d.stored_summary is not None]
    if not sums:
        return None, None, None
    firsts = [s for s in sums if "first" in s and "start_minimum" in s]
    lasts = [s for s in sums if "last" in s and "end_maximum" in s]
    first = min(firsts, key=lambda s: s["start_minimum"])["first"] / NS if firsts else None
    last = max(lasts, key=lambda s: s["end_maximum"])["last"] / NS if lasts else None
    if any("mean" not in s or "m2" not in s for s in sums):
        return first, last, None
    count = sum(int(s["count"]) for s in sums)
    if not count:
        return first, last, None
    mean = sum(int(s["count"]) * float(s["mean"]) for s in sums) / count
    m2 = sum(float(s["m2"]) + int(s["count"]) * (float(s["mean"]) - mean) ** 2
             for s in sums)
    return first, last, float(np.sqrt(max(m2, 0.0) / count)) / NS


def _covered(per_rank):
    """Wall-clock coverage (s) of a region's calls, overlaps once; None
    without calls."""
    total, found = 0.0, False
    for d in per_rank.values():
        if not d.num_calls:
            continue
        found = True
        if d.stored_summary is not None or not d.has_event_data:
            total += d.total_duration
        else:
            total += _union_ns(d.start_times_ns, d.end_times_ns) / NS
    return total if found else None


def _imbalance(per_rank) -> float:
    totals = [d.total_duration for d in per_rank.values() if d.total_duration > 0]
    if len(totals) < 2:
        return 0.0
    return (max(totals) / float(np.mean(totals)) - 1.0) * 100.0


def _region_row(region, ranks, include_exclusive: bool) -> dict:
    """scope-profiler's flat row of a region the call tree does not show
    (no calls on the selected ranks, aggregate-only, or no event data)."""
    per_rank = (region.regions if ranks is None else
                {k: region.regions[k] for k in ranks if k in region.regions})
    gpu_regions = [d for d in per_rank.values() if d.has_gpu_timing]
    gpu_total = sum(d.gpu_total_duration or 0.0 for d in gpu_regions)
    gpu_count = sum(int(d.stored_summary.get("gpu_count", 0)) if d.stored_summary is not None
                    else len(d.gpu_durations_ns) for d in gpu_regions)
    calls = sum(d.num_calls for d in per_rank.values())
    row = {"name": region.name, "num_ranks": len(per_rank), "calls": calls,
           "gpu_total": gpu_total if gpu_count else None,
           "gpu_avg": gpu_total / gpu_count if gpu_count else None,
           "coverage": _covered(per_rank),
           "exclusive": (float(sum(d.exclusive_duration for d in per_rank.values()))
                         if include_exclusive else None),
           "imbalance": _imbalance(per_rank)}
    timed = [d for d in per_rank.values() if d.num_calls]
    pooled = [d.durations for d in timed if d.stored_summary is None and d.has_event_data]
    if calls and not pooled:  # aggregate only: the stored statistics
        total = float(sum(d.total_duration for d in per_rank.values()))
        first, last, std = _stored_moments(per_rank)
        row.update(total=total, avg=total / calls, min=min(d.min_duration for d in timed),
                   max=max(d.max_duration for d in timed), first=first, last=last,
                   std=std, p50=None, p95=None, p99=None)
        return row
    d = np.concatenate(pooled) if pooled else np.empty(0)
    first = min(timed, key=lambda x: x.first_start_time).first_duration if timed else None
    last = max(timed, key=lambda x: x.last_end_time).last_duration if timed else None
    some = bool(d.size)
    row.update(total=float(d.sum()) if some else None, avg=float(d.mean()) if some else None,
               min=float(d.min()) if some else None, max=float(d.max()) if some else None,
               first=first, last=last, std=float(d.std()) if some else None,
               **{f"p{q}": float(np.percentile(d, q)) if some else None
                  for q in (50, 95, 99)})
    return row


def _tree_order(rows: list[dict]) -> list[dict]:
    """sort="start": every subtree whole under its root, roots and siblings
    by their first call; rows without a path are roots of their own."""
    paths = {tuple(r["call_path"].split(" > ")): r for r in rows if "call_path" in r}
    children: dict = {p: [] for p in paths}
    roots = []
    for p, r in paths.items():
        (children[p[:-1]] if p[:-1] in paths else roots).append((p, r))

    def subtree(p, r):
        out = [r]
        for cp, c in sorted(children[p], key=lambda x: x[1]["start"]):
            out.extend(subtree(cp, c))
        return out

    blocks = [(r["start"], i, subtree(p, r)) for i, (p, r) in enumerate(roots)]
    n = len(blocks)
    blocks += [(r["start"], n + i, [r]) for i, r in
               enumerate(r for r in rows if "call_path" not in r)]
    return [r for _, _, b in sorted(blocks, key=lambda x: (x[0], x[1])) for r in b]


#: the columns (and sort keys) only every call's duration gives
DISTRIBUTION_KEYS = ("std", "p50", "p95", "p99")


def needs_distributions(columns, sort) -> bool:
    """Whether a table of these columns sorted by sort shows a column of
    DISTRIBUTION_KEYS (the rows then need every call's duration)."""
    keys = {k for k, _ in normalize_columns(columns)} if columns is not None else set()
    return sort in DISTRIBUTION_KEYS or bool(keys & set(DISTRIBUTION_KEYS))


def _pooled_rows(results, regions, sel, filtered):
    """The call-path rows of region_rows pooled in C from the file's model
    (``_ext.file_paths``: sps_file_paths, the same rule as _rank_paths and
    _path_row, O(call paths) here), std and percentiles left None; [] when
    a selected rank has no call tree; None when the results are not a
    file's columnar model as read (then the per-call path runs)."""
    model = getattr(results, "model", None)
    ev = getattr(model, "events", None)
    if (ev is None or model.layout != "columnar" or ev.gpu_durations is not None
            or not results.has_event_data):
        return None
    names = model.region_names
    mine = {r.name for r in results}
    if mine - set(names) or set(model.regions) - mine:
        return None  # not the model's region set any more
    keep = None
    if filtered:
        chosen = {r.name for r in regions}
        keep = bytes(1 if n in chosen else 0 for n in names)
    try:  # any column's base is the C reader's, which holds the file's handle
        pooled = _ext.file_paths(ev.start_ns.base, keep)
    except (TypeError, ValueError):
        return None
    ranks = set(sel)
    if ranks & set(pooled["bad_ranks"]):
        return []  # as scope-profiler: no call tree on a rank, a flat table
    keys = []
    for parent, name in zip(pooled["parent"], pooled["name"]):
        keys.append((names[name],) if parent < 0 else keys[parent] + (names[name],))
    per: dict = {}
    for e in pooled["entries"]:  # rank by rank, ascending
        if e[1] in ranks:
            per.setdefault(e[0], []).append(e)
    rows = []
    for path in sorted(per, key=lambda p: (per[p][0][1], per[p][0][2])):  # first call
        es, key = per[path], keys[path]
        calls = sum(e[3] for e in es)
        totals = [e[4] for e in es]
        first, last = es[0], es[0]
        for e in es[1:]:  # the earlier rank wins a tie, as in _path_row
            if e[9] < first[9]:
                first = e
            if e[11] > last[11]:
                last = e
        mean_total = float(np.mean(totals))
        rows.append({
            "name": key[-1], "call_path": " > ".join(key), "num_ranks": len(es),
            "calls": calls, "total": sum(totals) / NS, "gpu_total": None, "gpu_avg": None,
            "coverage": sum(e[13] for e in es) / NS, "exclusive": sum(e[6] for e in es) / NS,
            "avg": sum(e[5] for e in es) / calls / NS, "min": min(e[7] for e in es) / NS,
            "max": max(e[8] for e in es) / NS, "first": first[10] / NS, "last": last[12] / NS,
            "std": None, "p50": None, "p95": None, "p99": None,
            "imbalance": (0.0 if len(totals) < 2 or not mean_total
                          else (max(totals) / mean_total - 1.0) * 100.0),
            "depth": len(key) - 1, "recursive": any(e[14] for e in es),
            "start": min(e[9] for e in es) / NS})
    return rows


def region_rows(results, include=None, exclude=None, ranks=None, sort="start",
                percentage_mode="coverage", need_distributions: bool = True) -> list[dict]:
    """scope-profiler's summary rows (summary.region_rows), in print order:
    a dict per call path (name, call_path, num_ranks, calls, total,
    coverage, exclusive, avg, min, max, first, last, std, p50, p95, p99,
    imbalance, gpu_total, gpu_avg, depth, recursive, start,
    parent_coverage; seconds), then a flat row for every selected region
    the tree does not show (every region when a selected rank's calls
    overlap without nesting: no call tree).  sort="start" keeps subtrees whole; any other
    key sorts the rows flat, descending (None last, ties by name), "name"
    alphabetically.  need_distributions=False (print_summary's default
    columns): a file's rows are pooled by call path in C (_pooled_rows,
    O(call paths) in Python) and std/p50/p95/p99 are None; else, and for
    results not read from a file, every call is grouped here.  ValueError
    for an unknown sort key or mode."""
    if sort not in SORT_KEYS:
        raise ValueError(f"unknown sort key {sort!r}; choose one of {', '.join(SORT_KEYS)}")
    _check_mode(percentage_mode)
    regions = results.get_regions(include=include, exclude=exclude)
    filtered = include is not None or exclude is not None
    everything = results.get_regions() if filtered else None
    sel = sorted({k for r in regions for k in r.regions} if ranks is None
                 else {int(k) for k in ranks})
    if not need_distributions and sort not in DISTRIBUTION_KEYS and results.has_event_data:
        rows = _pooled_rows(results, regions, sel, filtered)
        if rows is not None:
            return _finish_rows(rows, regions, ranks, sort, percentage_mode)
    paths: dict = {}
    calls: dict = {}
    if results.has_event_data:
        try:
            for rank in sel:
                calls[rank] = _rank_paths(regions, rank, paths, everything)
        except NestingError:
            # as scope-profiler: a rank without a call tree (calls that
            # overlap without nesting) makes the whole table flat rather
            # than mix path rows with per-name rows
            paths.clear()
    rows = [_path_row(n, calls) for n in paths.values()]
    return _finish_rows(rows, regions, ranks, sort, percentage_mode)


def _finish_rows(rows, regions, ranks, sort, percentage_mode) -> list[dict]:
    """region_rows' rows of call paths completed: a flat row for each of
    regions (MPIRegions) no path shows, each row's parent coverage, then
    the order of sort."""
    shown = {r["name"] for r in rows if "call_path" in r}
    for region in regions:
        if region.name not in shown:
            row = _region_row(region, ranks, percentage_mode == "exclusive")
            row.update(depth=0, recursive=False,
                       start=region.first_start_time if region.has_timing else float("inf"))
            rows.append(row)
    by_path = {tuple(r["call_path"].split(" > ")): r for r in rows if "call_path" in r}
    for p, r in by_path.items():
        parent = by_path.get(p[:-1])
        r["parent_coverage"] = parent["coverage"] if parent else None
    for r in rows:
        r.setdefault("parent_coverage", None)
    if sort == "start":
        return _tree_order(rows)
    rows.sort(key=lambda r: r["name"])
    if sort != "name":
        rows.sort(key=lambda r: (r[sort] is not None, r[sort] or 0), reverse=True)
    return rows


def period_rows(period: dict, sort: str = "start",
                percentage_mode: str = "coverage") -> list[dict]:
    """region_rows of one process's finalized period from the C core's
    pooling by call path (``_ext.finalize_paths``: sps_finalize_paths,
    model/paths.c), without reading the file back: the same rows
    region_rows gives for that file read with read_h5 (one rank), the
    columns that need every call's duration (std, p50, p95, p99) left None.
    O(call paths).  ValueError for an unknown sort key or mode."""
    if sort not in SORT_KEYS:
        raise ValueError(f"unknown sort key {sort!r}; choose one of {', '.join(SORT_KEYS)}")
    _check_mode(percentage_mode)
    names, keys, rows = period["names"], [], []
    for (parent, name, calls, total, dsum, excl, lo, hi, first_start, first, _last_end,
         last, coverage, recursive) in period["paths"]:
        key = (names[name],) if parent < 0 else keys[parent] + (names[name],)
        keys.append(key)
        if not calls:
            continue
        rows.append({
            "name": key[-1], "call_path": " > ".join(key), "num_ranks": 1, "calls": calls,
            "total": total / NS, "gpu_total": None, "gpu_avg": None,
            "coverage": coverage / NS, "exclusive": excl / NS, "avg": dsum / calls / NS,
            "min": lo / NS, "max": hi / NS, "first": first / NS, "last": last / NS,
            "std": None, "p50": None, "p95": None, "p99": None, "imbalance": 0.0,
            "depth": len(key) - 1, "recursive": bool(recursive), "start": first_start / NS})
    return _finish_rows(rows, [MPIRegion(n, {}) for n in names], None, sort,
                        percentage_mode)


# --------------------------------------------------------------------------
# cells
# --------------------------------------------------------------------------

def _duration(value, decimals=3) -> str:
    return "-" if value is None else f"{value:.{decimals}f}"


def _count(value) -> str:
    """A call count, compact past a thousand (1.5k, 2M, 3B)."""
    if value is None:
        return "-"
    value = int(value)
    for threshold, suffix in ((1_000_000_000, "B"), (1_000_000, "M"), (1_000, "k")):
        if value >= threshold:
            return f"{value / threshold:.3g}{suffix}"
    return str(value)


def _percent(value, denominator) -> str:
    if value is None or denominator is None or denominator <= 0:
        return "-"
    return f"{100.0 * value / denominator:.2f}%"


def _prefix(depth: int) -> str:
    return f"{'│ ' * (depth - 1)}└─ " if depth else ""


def _session_total(rows):
    return next((r["total"] for r in rows if r["name"] in SESSION_REGIONS), None)


def _is_session(row) -> bool:
    return row["name"] in SESSION_REGIONS


def format_region_table(rows, columns=None, percentage_mode: str = "coverage"):
    """The displayed table of rows (region_rows): the (key, header)
    columns, and (row, cells, is_own) for every printed line, an "(own)"
    line after each row that has children.  Without a session row the
    default columns leave out % session; GPU columns join the default
    when a row has GPU time.  ValueError as normalize_columns."""
    _check_mode(percentage_mode)
    automatic = columns is None
    session = _session_total(rows)
    if columns is None and session is None:
        columns = ("region", "total")
    if automatic and any(r.get("gpu_total") is not None for r in rows):
        columns = (*(columns or DEFAULT_COLUMNS), "gpu_total", "gpu_avg")
    cols = normalize_columns(columns)
    inline = not any(k == "calls" for k, _ in cols)
    parents = {" > ".join(parts[:i]) for r in rows
               if (parts := r.get("call_path", "").split(" > ")) for i in range(1, len(parts))}
    out = []
    for r in rows:
        pad = " " * len(_prefix(r.get("depth", 0)))
        share = (r["total"] if percentage_mode == "exclusive" and _is_session(r)
                 else r.get(percentage_mode))
        name = terminal_text(_prefix(r.get("depth", 0)) + r["name"], NAME_COLS) + (
            " ↻" if r.get("recursive") else "")
        if inline and r["calls"] != 1:
            name += f" ({_count(r['calls'])}x)"
        cells = {
            "name": name, "ranks": str(r["num_ranks"]), "calls": _count(r["calls"]),
            "total": pad + _duration(r["total"], 6), "percent": pad + _percent(share, session),
            "parent_percent": pad + _percent(r.get("coverage"), r.get("parent_coverage")),
            "avg": pad + ("-" if r["avg"] is None else f"{r['avg']:.3e}"),
            "gpu_total": _duration(r.get("gpu_total"), 6), "gpu_avg": _duration(r.get("gpu_avg")),
            **{k: _duration(r[k]) for k in ("min", "max", "first", "last", "std", "p50",
                                            "p95", "p99")},
            "imbalance": "-" if r["imbalance"] is None else f"{r['imbalance']:.2f}",
        }
        out.append((r, cells, False))
        if r.get("call_path") not in parents:
            continue
        depth = r.get("depth", 0) + 1
        pad = " " * len(_prefix(depth))
        ex = r.get("exclusive")
        own = {k: "" for k in cells}
        own.update(name=_prefix(depth) + "(own)", total=pad + _duration(ex, 6),
                   avg=pad + (f"{ex / r['calls']:.3e}" if ex is not None and r["calls"]
                              else "-"),
                   percent=pad + _percent(ex, session),
                   parent_percent=pad + _percent(ex, r.get("coverage")))
        out.append((r, own, True))
    return cols, out


# --------------------------------------------------------------------------
# the box
# --------------------------------------------------------------------------

def box_lines(headers, table) -> list[str]:
    """The lines of scope-profiler's rounded table (tabulate with its
    TableFormat, every cell text, left-aligned, whitespace kept): a column
    is as wide as its widest cell and at least its header plus two, each
    cell padded by one space, columns two characters apart.  Widths are
    len(), as tabulate measures them without the wcwidth package (which
    scope-profiler does not require)."""
    widths = [max([len(h) + 2] + [len(row[i]) for row in table])
              for i, h in enumerate(headers)]

    def rule(left, right):
        return left + "──".join("─" * (w + 2) for w in widths) + right

    def line(cells):
        return "│" + "  ".join(f" {c.ljust(w)} " for c, w in zip(cells, widths)) + "│"

    return [rule("╭", "╮"), line(headers), rule("├", "┤"),
            *(line(row) for row in table), rule("╰", "╯")]


def _hints(file_path) -> list[str]:
    """The Info box's "Explore" lines for the file, naming spanscope's own
    subcommands in scope-profiler's layout."""
    p = shlex.quote(os.path.relpath(str(file_path)))
    return ["", "Explore:",
            f"  Inspect: spanscope inspect {p}",
            f"  Table:   spanscope report {p}",
            "", "Visualize and export:",
            f"  Plot:    spanscope plot gantt {p} -o gantt.png",
            f"  Report:  spanscope html {p} -o report.html",
            f"  Export:  spanscope export speedscope {p} -o profile.speedscope.json",
            f"  Lines:   spanscope line-profile {p}",
            "", "Compare runs:",
            "  Diff:    spanscope diff BASE.h5 CANDIDATE.h5",
            "  Check:   spanscope check BASE.h5 CANDIDATE.h5", ""]


def _gpu_warnings(rows) -> list[str]:
    names = sorted({r["name"] for r in rows if r.get("gpu_total") is not None
                    and r.get("total") is not None and r["gpu_total"] > 2 * r["total"]})
    if not names:
        return []
    return ["Warning: GPU time exceeds CPU time by more than 2x for " + ", ".join(names)
            + ". This may indicate asynchronous GPU work; CPU time can measure enqueue "
            "time rather than device execution. Use GPU metrics or opt in to "
            "gpu_sync_on_exit=True (disables CPU/GPU overlap)."]


def _notes(rows, title, file_path, percentage_mode) -> list[str]:
    notes = _gpu_warnings(rows)
    if title:
        notes.append(terminal_text(f"Summary: {title}", NAME_COLS))
    if file_path is not None:
        notes.extend(_hints(file_path))
    notes.append("Durations are in seconds.")
    if len(rows) > 1:
        notes.append("Regions may nest, so the summed total can exceed the wall-clock time.")
    if any(r.get("recursive") for r in rows):
        notes.append(_RECURSIVE_NOTE)
    if _session_total(rows) is not None:
        notes.append("% session uses wall-clock coverage; overlapping recursive calls count "
                     "once." if percentage_mode == "coverage"
                     else "% session uses exclusive time for each region.")
    if any(r["total"] is None for r in rows):
        notes.append("Regions shown without timing recorded no calls on the selected ranks.")
    return notes


def print_region_table(rows, title=None, stream=None, suppress_notes: bool = False,
                       total_time: float | None = None, columns=None,
                       percentage_mode: str = "coverage", file_path=None) -> None:
    """Prints rows (region_rows) as scope-profiler's print_region_table:
    the boxed table (two-space indent), then unless suppress_notes the
    Info box (title as "Summary: ...", the file's hints when file_path is
    given, the notes on units, nesting, ↻ and % session), then a blank
    line.  No rows: the title and "(no regions recorded)".  Only box
    characters are written, no escape codes, on a terminal or not.
    total_time is accepted, and unused, as in scope-profiler 0.7.5 (its
    parameters in its order): the session's elapsed time is the
    session row's, and percentages come from the rows."""
    del total_time  # scope-profiler's signature: accepted for compatibility
    out = sys.stdout if stream is None else stream
    _check_mode(percentage_mode)
    if not rows:
        if title:
            print(terminal_text(title, NAME_COLS), file=out)
        print("  (no regions recorded)", file=out)
        return
    cols, lines = format_region_table(rows, columns, percentage_mode)
    for line in box_lines([h for _, h in cols], [[c[k] for k, _ in cols]
                                                 for _, c, _ in lines]):
        print(f"  {line}", file=out)
    notes = _notes(rows, title, file_path, percentage_mode)
    if not suppress_notes and notes:
        width = max(len(n) for n in notes)
        print(file=out)
        print(f"  ╭─ Info {'─' * max(1, width - 5)}╮", file=out)
        for n in notes:
            print(f"  │ {n:<{width}} │", file=out)
        print(f"  ╰{'─' * (width + 2)}╯", file=out)
    print(file=out)
