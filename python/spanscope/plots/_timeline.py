"""Timelines: the Gantt chart, the flame chart and the flame graph."""

from __future__ import annotations


import numpy as np

from spanscope.plots._figure import DEFAULT_CMAP, FLAME_CMAP, _NS, _check_output, _colors, _finish, _legend, _new_figure, _write_data
from spanscope.plots._runs import _Calls, _Run, _as_runs, _axes_grid, _lane_label, _lanes, _need_events, _pick_ranks, _select


# --- gantt / flame chart ---------------------------------------------------------

def _draw_bars(ax, calls: _Calls, sel, y0: float, t0: int, colors, names,
               height=0.8, labels=False, x_span=None):
    """Draws the calls sel as bars at y = y0 + depth (s since t0), coloured
    by region; with labels, writes the region's name inside bars wide
    enough for it (x_span: the axis' width in s)."""
    for ni in np.unique(calls.name[sel]):
        s = sel[calls.name[sel] == ni]
        for d in np.unique(calls.depth[s]):
            sd = s[calls.depth[s] == d]
            xs = [((st - t0) * _NS, du * _NS) for st, du in zip(calls.start[sd], calls.dur[sd])]
            ax.broken_barh(xs, (y0 + d - height / 2, height),
                           facecolors=colors[names[ni]], edgecolor="none",
                           label=names[ni])
            if labels and x_span:
                for st, du in zip(calls.start[sd], calls.dur[sd]):
                    if du * _NS > x_span * 0.012 * max(4, len(names[ni])):
                        ax.text((st - t0 + du / 2) * _NS, y0 + d, names[ni], ha="center",
                                va="center", fontsize=7, clip_on=True)


def _window(calls: _Calls, t0: int, min_duration, start_time, end_time, max_depth=None):
    """Indices of the calls inside the window: duration >= min_duration,
    overlapping [start_time, end_time] (s since t0), depth <= max_depth."""
    keep = calls.dur * _NS >= min_duration
    if start_time is not None:
        keep &= (calls.start + calls.dur - t0) * _NS >= start_time
    if end_time is not None:
        keep &= (calls.start - t0) * _NS <= end_time
    if max_depth is not None:
        keep &= calls.depth <= max_depth
    return np.flatnonzero(keep)


def _aggregate_calls(calls: _Calls, sel: np.ndarray, n: int) -> _Calls:
    """Every n consecutive calls of a region on a lane at one depth as one
    bar from the first's start to the last's end (scope-profiler's
    aggregate_calls, for runs of millions of calls)."""
    out = _Calls.__new__(_Calls)
    out.names = calls.names
    keys = [calls.rank[sel], calls.thread[sel], calls.name[sel], calls.depth[sel]]
    o = sel[np.lexsort([calls.start[sel]] + keys[::-1])]
    k = np.stack([a[o] for a in (calls.rank, calls.thread, calls.name, calls.depth)])
    new_key = np.ones(o.size, dtype=bool)
    new_key[1:] = (k[:, 1:] != k[:, :-1]).any(axis=0)
    run_start = np.maximum.accumulate(np.where(new_key, np.arange(o.size), 0))
    first = (np.arange(o.size) - run_start) % n == 0  # a bar starts every n calls
    g = np.cumsum(first) - 1
    heads = o[first]
    last_end = np.zeros(heads.size, dtype=np.int64)
    np.maximum.at(last_end, g, calls.start[o] + calls.dur[o])
    for attr in ("name", "rank", "thread", "depth", "event", "start"):
        setattr(out, attr, getattr(calls, attr)[heads])
    out.dur = last_end - out.start
    return out


def plot_gantt(profiling_data, ranks=None, include=None, exclude=None, filepath=None,
               show=False, verbose=True, cmap=DEFAULT_CMAP, data_filepath=None,
               data_format="csv", backend="matplotlib", return_fig=False,
               min_duration=0.0, start_time=None, end_time=None, aggregate_calls=1,
               collapse_depth=None):
    """A Gantt chart: one lane per rank and thread (one panel per run),
    every call a bar over its time (s since the run's first start), nested
    calls one row below their parent, coloured by region with a legend.

    min_duration (s) drops shorter calls; start_time/end_time (s) keep the
    calls overlapping that window; collapse_depth keeps depths <= it;
    aggregate_calls=N draws every N consecutive calls of a region as one
    bar.  data_filepath: the bars drawn (run, rank, thread, region, depth,
    start_s, duration_s)."""
    _check_output(backend, filepath, data_filepath, data_format)
    if int(aggregate_calls) < 1:
        raise ValueError("aggregate_calls must be at least 1")
    runs = _as_runs(profiling_data)
    prepared, all_names = [], []
    for run in runs:
        _need_events(run, "a Gantt chart")
        names = _select(run, include, exclude)
        all_names += [n for n in names if n not in all_names]
        calls = _Calls(run, names, _pick_ranks(run, ranks))
        t0 = run.t0_ns()
        sel = _window(calls, t0, min_duration, start_time, end_time, collapse_depth)
        if aggregate_calls > 1:
            calls = _aggregate_calls(calls, sel, int(aggregate_calls))
            sel = np.arange(calls.start.size)
        prepared.append((run, calls, sel, t0))
    if not any(sel.size for *_, sel, _ in prepared):
        raise ValueError("no calls left to draw (filters, window or min_duration)")
    colors = _colors(cmap, all_names)
    heights = []
    for run, calls, sel, _ in prepared:
        lanes = _lanes(calls)
        heights.append(sum(int(calls.depth[i].max()) + 1 if i.size else 1 for *_, i in lanes) or 1)
    fig = _new_figure((12, max(3.0, 1.2 + 0.45 * sum(heights) + 0.6 * len(prepared))),
                      show, backend)
    axes = _axes_grid(fig, len(prepared))
    rows = []
    for ax, (run, calls, sel, t0) in zip(axes, prepared):
        lanes = _lanes(calls)
        nthreads = len({th for _, th, _ in lanes})
        y, ticks, labels = 0.0, [], []
        for rank, thread, idx in lanes:
            idx = np.intersect1d(idx, sel)
            maxd = int(calls.depth[idx].max()) if idx.size else 0
            _draw_bars(ax, calls, idx, y, t0, colors, calls.names)
            for d in range(maxd + 1):
                ticks.append(y + d)
                labels.append(_lane_label(run, rank, thread, nthreads)
                              + (f"  depth {d}" if maxd else ""))
            for i in idx:
                rows.append((run.label, int(rank), int(thread), calls.names[calls.name[i]],
                             int(calls.depth[i]), (calls.start[i] - t0) * _NS,
                             calls.dur[i] * _NS))
            y += maxd + 1.5
        ax.set_yticks(ticks, labels)
        ax.set_ylim(y - 0.5, -0.7)
        ax.set_xlabel("time since the first start (s)")
        ax.set_title(f"Gantt chart: {run.label}")
        ax.grid(axis="x", alpha=0.3)
        _legend(fig, ax, {n: colors[n] for n in calls.names})
    _write_data(data_filepath, data_format, "gantt",
                ("run", "rank", "thread", "region", "depth", "start_s", "duration_s"), rows)
    return _finish(fig, axes, filepath, show, verbose, return_fig)


def plot_flame_chart(profiling_data, ranks=None, include=None, exclude=None,
                     filepath=None, show=False, verbose=True, cmap=FLAME_CMAP,
                     data_filepath=None, data_format="csv", backend="matplotlib",
                     return_fig=False):
    """A flame chart: per run and rank (default: rank 0) a panel with time
    (s) across and call depth down (a block of rows per thread), each call
    a bar labelled with its region where it is wide enough.  The depths
    are the fold's nesting."""
    _check_output(backend, filepath, data_filepath, data_format)
    runs = _as_runs(profiling_data)
    panels, all_names = [], []
    for run in runs:
        _need_events(run, "a flame chart")
        names = _select(run, include, exclude)
        all_names += [n for n in names if n not in all_names]
        for rank in _pick_ranks(run, ranks if ranks is not None else [run.ranks[0]]):
            calls = _Calls(run, names, [rank])
            if calls.start.size:
                panels.append((run, rank, calls))
    if not panels:
        raise ValueError("no calls recorded for the requested ranks")
    colors = _colors(cmap, all_names)
    depth_rows = [sum(int(calls.depth[i].max()) + 1 for *_, i in _lanes(calls))
                  for *_, calls in panels]
    fig = _new_figure((12, max(3.0, 1.0 + 0.4 * sum(depth_rows) + 0.9 * len(panels))),
                      show, backend)
    axes = _axes_grid(fig, len(panels))
    rows = []
    for ax, (run, rank, calls) in zip(axes, panels):
        t0 = int(calls.start.min())
        span = (int((calls.start + calls.dur).max()) - t0) * _NS
        lanes = _lanes(calls)
        y, ticks, labels = 0.0, [], []
        for _, thread, idx in lanes:
            maxd = int(calls.depth[idx].max())
            _draw_bars(ax, calls, idx, y, t0, colors, calls.names, height=0.92,
                       labels=True, x_span=span)
            for d in range(maxd + 1):
                ticks.append(y + d)
                labels.append((f"thread {thread}  " if len(lanes) > 1 else "") + f"depth {d}")
            for i in idx:
                rows.append((run.label, rank, int(thread), calls.names[calls.name[i]],
                             int(calls.depth[i]), (calls.start[i] - t0) * _NS,
                             calls.dur[i] * _NS))
            y += maxd + 1.5
        ax.set_yticks(ticks, labels)
        ax.set_ylim(y - 0.5, -0.6)
        ax.set_xlim(0, span * 1.01 if span > 0 else 1e-9)
        ax.set_xlabel("time since the first start (s)")
        ax.set_title(f"Flame chart: {run.label}" + (f" (rank {rank})" if run.num_ranks > 1 else ""))
        _legend(fig, ax, {n: colors[n] for n in calls.names})
    _write_data(data_filepath, data_format, "flame_chart",
                ("run", "rank", "thread", "region", "depth", "start_s", "duration_s"), rows)
    return _finish(fig, axes, filepath, show, verbose, return_fig)


#: scope-profiler's plot_flame is the flame chart
plot_flame = plot_flame_chart


def _stacks(run: _Run, rank: int, names: list[str]):
    """The call tree of one rank aggregated by stack (the names from the
    root down, by the fold's parents, over every thread): a list of
    (stack tuple, total inclusive ns, calls), parents before children.
    Calls of regions not in names are left out with their subtrees.  One
    vectorised pass per depth: a stack is (its parent stack, a name)."""
    res, ev = run.res, run.res.events
    nrows, wanted = len(res.rows), set(names)
    region_ids = {n: i for i, n in enumerate(res.region_names)}
    nn = max(len(res.region_names), 1)
    row_ok = np.array([r.name in wanted and r.rank == rank for r in res.rows] + [False])
    row_name = np.array([region_ids[r.name] for r in res.rows] + [0], dtype=np.int64)
    row = np.asarray(ev.row, dtype=np.int64)
    row = np.where(row >= nrows, nrows, row)  # NO_ROW: a call of no row
    ok, name = row_ok[row], row_name[row]
    parent = np.asarray(ev.parent, dtype=np.int64)
    dur = np.asarray(ev.durations_ns, dtype=np.int64)
    depth = run.depth()
    path_of = np.full(parent.size, -1, dtype=np.int64)
    paths: list[tuple] = []
    out = []
    for d in range(int(depth.max()) + 1 if depth.size else 0):
        at = np.flatnonzero((depth == d) & ok)
        if d:
            at = at[path_of[parent[at]] >= 0]  # under a kept parent
        if not at.size:
            break
        pp = path_of[parent[at]] if d else np.full(at.size, -1, dtype=np.int64)
        uniq, inv = np.unique(pp * nn + name[at], return_inverse=True)
        base = len(paths)
        path_of[at] = base + inv
        tot = np.zeros(uniq.size, dtype=np.int64)
        np.add.at(tot, inv, dur[at])
        cnt = np.bincount(inv, minlength=uniq.size)
        for u, t, c in zip(uniq.tolist(), tot.tolist(), cnt.tolist()):
            nm, par = res.region_names[u % nn], u // nn
            paths.append((paths[par] if par >= 0 else ()) + (nm,))
            out.append((paths[-1], t, c))
    return out


def plot_flame_graph(profiling_data, ranks=None, include=None, exclude=None,
                     filepath=None, show=False, verbose=True, cmap=FLAME_CMAP,
                     data_filepath=None, data_format="csv", backend="matplotlib",
                     return_fig=False):
    """An aggregated flame graph per run and rank (default: rank 0): each
    distinct call stack one box whose width is its total inclusive time
    (s), children on top of their parent, widest first."""
    _check_output(backend, filepath, data_filepath, data_format)
    runs = _as_runs(profiling_data)
    panels, all_names = [], []
    for run in runs:
        _need_events(run, "a flame graph")
        names = _select(run, include, exclude)
        all_names += [n for n in names if n not in all_names]
        for rank in _pick_ranks(run, ranks if ranks is not None else [run.ranks[0]]):
            st = _stacks(run, rank, names)
            if st:
                panels.append((run, rank, st))
    if not panels:
        raise ValueError("no calls recorded for the requested ranks")
    colors = _colors(cmap, all_names)
    maxdepth = max(len(p) for *_, st in panels for p, _, _ in st)
    fig = _new_figure((12, max(3.0, 1.0 + (0.45 * maxdepth + 0.9) * len(panels))),
                      show, backend)
    axes = _axes_grid(fig, len(panels))
    rows = []
    for ax, (run, rank, st) in zip(axes, panels):
        children: dict[tuple, list] = {}
        for p, tot, n in st:
            children.setdefault(p[:-1], []).append((p, tot, n))
        x_of: dict[tuple, float] = {}
        width = sum(t for p, t, _ in children.get((), [])) * _NS
        order = [()]
        while order:
            parent = order.pop(0)
            x = x_of.get(parent, 0.0)
            for p, tot, n in sorted(children.get(parent, []), key=lambda c: -c[1]):
                w = tot * _NS
                x_of[p] = x
                ax.broken_barh([(x, w)], (len(p) - 1 - 0.46, 0.92),
                               facecolors=colors[p[-1]], edgecolor="white", linewidth=0.5,
                               label=p[-1])
                if width and w > width * 0.011 * max(4, len(p[-1])):
                    ax.text(x + w / 2, len(p) - 1, p[-1], ha="center", va="center",
                            fontsize=7, clip_on=True)
                rows.append((run.label, rank, ";".join(p), len(p) - 1, n, w))
                x += w
                order.append(p)
        depth = max(len(p) for p, _, _ in st)
        ax.set_yticks(range(depth), [f"depth {d}" for d in range(depth)])
        ax.set_ylim(-0.6, depth - 0.4)
        ax.set_xlim(0, width * 1.005 if width > 0 else 1e-9)
        ax.set_xlabel("total time (s)")
        ax.set_title(f"Flame graph: {run.label}" + (f" (rank {rank})" if run.num_ranks > 1 else ""))
        _legend(fig, ax, {n: colors[n] for n in all_names if any(p[-1] == n for p, _, _ in st)})
    _write_data(data_filepath, data_format, "flame_graph",
                ("run", "rank", "stack", "depth", "calls", "total_s"), rows)
    return _finish(fig, axes, filepath, show, verbose, return_fig)
