"""The region table of ProfilingResults.print_summary, as scope-profiler
prints it: one row per call path (a region under the chain of regions that
called it), indented as a tree, every parent followed by an "(own)" row for
its exclusive time; a self-recursive region is one row ("fib ↻") whose call
count includes every level and whose total only the outermost calls.

The paths come from the one fold's parents (``_results_api._call_arrays``,
in C); this module only groups calls by path and formats numbers.
"""

from __future__ import annotations

import sys

import numpy as np

NS = 1e9

#: (key, header) of every column print_summary knows, in scope-profiler's names
COLUMNS = (
    ("name", "region"), ("ranks", "ranks"), ("calls", "n"), ("total", "total [s]"),
    ("percent", "% session"), ("avg", "avg/call [s]"), ("min", "min [s]"),
    ("max", "max [s]"), ("first", "first [s]"), ("last", "last [s]"), ("std", "std [s]"),
    ("p50", "p50 [s]"), ("p95", "p95 [s]"), ("p99", "p99 [s]"),
    ("imbalance", "imbalance [%]"))
DEFAULT_COLUMNS = ("region", "percent", "total")
SORT_KEYS = ("start", "total", "calls", "avg", "min", "max", "first", "last", "std", "p50",
             "p95", "p99", "imbalance", "name")
#: the root region scope-profiler's session() opens: % session is of it
SESSION_REGION = "scope_profiler.session"
_RECURSIVE_NOTE = ("↻ Recursive rows pool every level of the recursion: the call count "
                   "includes nested calls, the total only the outermost ones.")


def normalize_columns(columns) -> list[tuple[str, str]]:
    """(key, header) pairs of the named columns ("region" is the name
    column); ValueError for an unknown name or none at all."""
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


class _Path:
    """The calls of one call path, gathered over ranks."""

    def __init__(self, key, parent):
        self.key, self.parent = key, parent
        self.children: list[_Path] = []
        self.durations: list[np.ndarray] = []
        self.own_ns = 0
        self.covered: dict[int, int] = {}  # rank -> outermost calls' ns
        self.start = None
        self.recursive = False
        self.stored = None  # aggregate rows: (count, total, min, max, exclusive)


def _paths_of_rank(results, regions, rank, paths, roots):
    """Adds rank's calls of regions to paths (key -> _Path) by the fold's
    parents."""
    from spanscope._results_api import _call_arrays
    mine = [r for r in regions if rank in r.regions and r.regions[rank]._aggregate is None]
    a = _call_arrays(mine, rank, strict=False)
    n = len(a)
    pid: list = [None] * n
    parent = a.parent.tolist()
    reg = a.region_index.tolist()
    dur = a.end_ns - a.start_ns
    by_path: dict = {}
    for i in range(n):
        name, p = a.names[reg[i]], parent[i]
        if p < 0:
            key = (name,)
        else:
            pk = pid[p].key
            key = pk if pk[-1] == name else pk + (name,)
        node = paths.get(key)
        if node is None:
            node = paths[key] = _Path(key, None if p < 0 else pid[p])
            (node.parent.children if node.parent is not None else roots).append(node)
        pid[i] = node
        if p >= 0 and pid[p] is node:
            node.recursive = True
        by_path.setdefault(key, []).append(i)
    for key, idx in by_path.items():
        node = paths[key]
        idx = np.asarray(idx)
        node.durations.append(dur[idx])
        node.own_ns += int(a.exclusive_ns[idx].sum())
        outer = [i for i in idx.tolist() if parent[i] < 0 or pid[parent[i]] is not node]
        node.covered[rank] = node.covered.get(rank, 0) + int(dur[outer].sum())
        s = float(a.start_ns[idx[0]])
        node.start = s if node.start is None else min(node.start, s)


def _aggregate_paths(regions, ranks, paths, roots):
    """Aggregate-only regions: a root row each, from the stored statistics."""
    for r in regions:
        for rank, d in r.regions.items():
            if d._aggregate is None or (ranks is not None and rank not in ranks):
                continue
            key = (r.name,)
            node = paths.get(key)
            if node is None:
                node = paths[key] = _Path(key, None)
                roots.append(node)
            agg = d._aggregate
            c, t, lo, hi, ex = node.stored or (0, 0, None, None, 0)
            node.stored = (c + int(agg.get("count", 0)), t + int(agg.get("total", 0)),
                           int(agg["minimum"]) if lo is None else min(lo, int(agg["minimum"])),
                           int(agg["maximum"]) if hi is None else max(hi, int(agg["maximum"])),
                           ex + int(agg.get("exclusive", agg.get("total", 0))))
            node.covered[rank] = node.covered.get(rank, 0) + int(agg.get("total", 0))
            node.own_ns += int(agg.get("exclusive", agg.get("total", 0)))
            s = float(agg.get("start_minimum", 0))
            node.start = s if node.start is None else min(node.start, s)


def _stats(node: _Path, session_ns) -> dict:
    """The row values of a path (seconds)."""
    total_ns = sum(node.covered.values())
    nranks = len(node.covered)
    if node.stored is not None and not node.durations:
        c, t, lo, hi, _ = node.stored
        d = None
        row = {"calls": c, "avg": t / c / NS if c else 0.0, "min": lo / NS, "max": hi / NS,
               "first": None, "last": None, "std": None, "p50": None, "p95": None, "p99": None}
    else:
        d = np.concatenate(node.durations) if node.durations else np.empty(0, np.int64)
        row = {"calls": int(d.size), "avg": float(d.mean()) / NS if d.size else 0.0,
               "min": float(d.min()) / NS if d.size else 0.0,
               "max": float(d.max()) / NS if d.size else 0.0,
               "first": float(d[0]) / NS if d.size else 0.0,
               "last": float(d[-1]) / NS if d.size else 0.0,
               "std": float(d.std()) / NS if d.size else 0.0,
               **{f"p{q}": float(np.percentile(d, q)) / NS if d.size else 0.0
                  for q in (50, 95, 99)}}
    totals = [v for v in node.covered.values() if v > 0]
    imb = (max(totals) / np.mean(totals) - 1.0) * 100.0 if len(totals) >= 2 else 0.0
    pct = 100.0 * total_ns / (session_ns * nranks) if session_ns and nranks else None
    row.update(name=node.key[-1], ranks=nranks, total=total_ns / NS, percent=pct,
               imbalance=float(imb), start=node.start)
    return row


def _own_row(node: _Path, row: dict, session_ns) -> dict:
    own = node.own_ns
    nr = row["ranks"]
    return {"name": "(own)", "ranks": None, "calls": None, "total": own / NS,
            "percent": 100.0 * own / (session_ns * nr) if session_ns and nr else None,
            "avg": own / row["calls"] / NS if row["calls"] else None, "min": None,
            "max": None, "first": None, "last": None, "std": None, "p50": None,
            "p95": None, "p99": None, "imbalance": None, "own": True}


def _session_ns(results, paths, ranks) -> float | None:
    """What % session divides by, per rank: the session region's time when
    the run has one, else setup() to finalize(); None when neither is known
    (the column is then left out)."""
    node = paths.get((SESSION_REGION,))
    if node is not None and node.covered:
        return sum(node.covered.values()) / len(node.covered)
    t = results.total_time
    return t * NS if t else None


def region_rows(results, include=None, exclude=None, ranks=None, sort="start") -> list[dict]:
    """The table's rows in print order: dicts with the column keys plus
    depth, recursive and own (an "(own)" row).  ValueError for a sort key
    it does not know."""
    if sort not in SORT_KEYS:
        raise ValueError(f"unknown sort key {sort!r}; choose one of {', '.join(SORT_KEYS)}")
    regions = results.get_regions(include, exclude)
    all_ranks = sorted({k for r in regions for k in r.regions})
    sel = [k for k in all_ranks if ranks is None or k in ranks]
    paths: dict = {}
    roots: list = []
    if results.has_event_data:
        for rank in sel:
            _paths_of_rank(results, regions, rank, paths, roots)
    _aggregate_paths(regions, None if ranks is None else set(ranks), paths, roots)
    session = _session_ns(results, paths, sel)
    out: list[dict] = []

    def order(nodes):
        rows = [(n, _stats(n, session)) for n in nodes]
        if sort == "start":
            rows.sort(key=lambda x: x[1]["start"] if x[1]["start"] is not None else 0.0)
        elif sort == "name":
            rows.sort(key=lambda x: x[1]["name"])
        else:
            rows.sort(key=lambda x: (x[1][sort] is None, -(x[1][sort] or 0.0)))
        return rows

    def walk(nodes, depth):
        for node, row in order(nodes):
            row.update(depth=depth, recursive=node.recursive, own=False,
                       call_path=" > ".join(node.key))
            out.append(row)
            if node.children:
                own = _own_row(node, row, session)
                own.update(depth=depth + 1, recursive=False, call_path=row["call_path"])
                out.append(own)
                walk(node.children, depth + 1)
    walk(roots, 0)
    return out


def _cell(key: str, row: dict, inline_counts: bool) -> str:
    v = row.get(key)
    if key == "name":
        name = row["name"] + (" ↻" if row.get("recursive") else "")
        if inline_counts and not row.get("own") and row.get("calls") not in (None, 1):
            name += f" ({row['calls']}x)"
        return "│ " * max(row["depth"] - 1, 0) + ("└─ " if row["depth"] else "") + name
    if v is None:
        return ""
    if key in ("calls", "ranks"):
        return str(int(v))
    if key == "percent":
        return f"{v:.2f}%"
    if key == "imbalance":
        return f"{v:.2f}"
    if key == "avg":
        return f"{v:.3e}"
    return f"{v:.6f}"


def print_region_table(rows: list[dict], columns, title: str, stream=None,
                       suppress_notes: bool = False) -> None:
    """Prints rows (region_rows) under title with the (key, header)
    columns, then the notes (units; what ↻ means when a row is recursive)."""
    out = sys.stdout if stream is None else stream
    inline = not any(k == "calls" for k, _ in columns)
    table = [[h for _, h in columns]] + [[_cell(k, r, inline) for k, _ in columns]
                                         for r in rows]
    widths = [max(len(line[i]) for line in table) for i in range(len(columns))]
    print(title, file=out)
    for j, line in enumerate(table):
        print("  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                        for i, (c, w) in enumerate(zip(line, widths))).rstrip(), file=out)
        if j == 0:
            print("  ".join("─" * w for w in widths), file=out)
    if suppress_notes:
        return
    print("Durations are in seconds.", file=out)
    print("Regions may nest, so the summed total can exceed the wall-clock time.", file=out)
    if any(r.get("recursive") for r in rows):
        print(_RECURSIVE_NOTE, file=out)
