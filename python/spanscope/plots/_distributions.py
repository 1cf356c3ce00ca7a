"""Distributions: durations (stacked by child), histograms, imbalance, the rank
heat map, duration time series and timeline density."""

from __future__ import annotations

import re

import numpy as np

from spanscope.plots._figure import DEFAULT_CMAP, _DURATION_METRICS, _NS, _check_output, _colors, _finish, _new_figure, _write_data
from spanscope.plots._runs import _Calls, _Run, _as_runs, _axes_grid, _check_metric, _durations_s, _metric_s, _need_events, _pick_ranks, _select
from spanscope.plots._timeline import _window


# --- durations, histogram, imbalance, heatmap, time series -----------------------

#: the metrics whose bar is a sum over calls, so it splits into self time
#: plus a segment per child (stack_children): scope-profiler's
_STACKABLE_METRICS = ("avg", "total")
#: the stacked segment of a bar's own (exclusive) time
_SELF_SEGMENT = "self"


def _group_regions(names: list[str], combine_regions) -> tuple[list[str], dict]:
    """scope-profiler's combine_regions: {bar name: regex pattern(s)}
    (matched at the start, as include is).  Every region of names matching
    one of a group's patterns is pooled into one bar of that name, placed
    where its first member was; a region matching several groups belongs to
    the first listed.  Returns the bars' names in order and {bar: [member
    regions]} (a plain region: itself).  ValueError for a group matching
    no region, or for bar names colliding with a region or another group;
    TypeError when combine_regions is not a mapping."""
    members = {n: [n] for n in names}
    if not combine_regions:
        return list(names), members
    if not hasattr(combine_regions, "items"):
        raise TypeError("combine_regions maps a bar's name to regex patterns, "
                        "e.g. {'setup': ['init.*', 'alloc']}, not "
                        f"{type(combine_regions).__name__}")
    claimed: dict[str, str] = {}
    for group, patterns in combine_regions.items():
        pats = [patterns] if isinstance(patterns, str) else list(patterns)
        matches = [n for n in names
                   if n not in claimed and any(re.match(p, n) for p in pats)]
        if not matches:
            raise ValueError(f"combine_regions group {group!r} matched no regions "
                             f"(patterns: {patterns}).")
        for n in matches:
            claimed[n] = group
        members[group] = matches
    bars: list[str] = []
    seen: set[str] = set()
    for n in names:
        g = claimed.get(n)
        if g is None:
            bars.append(n)
        elif g not in seen:
            bars.append(g)
            seen.add(g)
    dup = sorted({b for b in bars if bars.count(b) > 1})
    if dup:
        raise ValueError(f"combine_regions group name(s) {dup} collide with an existing "
                         "region name or another group; pick different names.")
    return bars, members


def _stacked_segments(run: _Run, members: dict, ranks: list[int]) -> dict:
    """Each bar's inclusive time split into self time plus its direct
    children (ns, over ranks), as scope-profiler's stack_children: every
    call of the run (plotted or not: a region filtered out is still
    somebody's child) is credited to the bar its fold parent belongs to;
    a call whose parent is in its own bar (recursion, two members of one
    group) stays in that bar's self time, so the segments add up to the
    time inside the bar, counted once.  {bar: {"self": ns, child bar: ns}}."""
    res, ev = run.res, run.res.events
    bar_of = {m: bar for bar, ms in members.items() for m in ms}
    nrows = len(res.rows)
    bars = list(dict.fromkeys(bar_of.get(r.name, r.name) for r in res.rows))
    index = {b: i for i, b in enumerate(bars)}
    nb = max(len(bars), 1)
    row_bar = np.array([index[bar_of.get(r.name, r.name)] for r in res.rows] + [-1],
                       dtype=np.int64)
    wanted = set(ranks)
    row_ok = np.array([r.rank in wanted for r in res.rows] + [False])
    row = np.asarray(ev.row, dtype=np.int64)
    row = np.where(row >= nrows, nrows, row)  # NO_ROW: a call of no row
    ok = row_ok[row]
    bar = row_bar[row]
    on = ok & (bar >= 0)
    own = np.bincount(bar[on], weights=np.asarray(ev.self_ns)[on].astype(np.float64),
                      minlength=nb)
    out = {b: {_SELF_SEGMENT: float(own[i])} for i, b in enumerate(bars)
           if np.any(bar[on] == i)}
    parent = np.asarray(ev.parent, dtype=np.int64)
    nested = np.flatnonzero(on & (parent >= 0))
    pb, cb = bar[parent[nested]], bar[nested]
    outside = (pb != cb) & (pb >= 0)
    if outside.any():
        dur = np.asarray(ev.durations_ns)[nested][outside].astype(np.float64)
        keys, inv = np.unique(pb[outside] * nb + cb[outside], return_inverse=True)
        sums = np.bincount(inv, weights=dur, minlength=keys.size)
        for k, total in zip(keys.tolist(), sums.tolist()):
            seg = out.setdefault(bars[k // nb], {_SELF_SEGMENT: 0.0})
            seg[bars[k % nb]] = seg.get(bars[k % nb], 0.0) + total
    return out


def _stacked_values(runs, picked, names, members, metric):
    """The stacked bars' heights (s): the segment labels ("self" first,
    then the children by their total over every run, largest first) and per
    run {segment: heights, one per bar of names}; avg divides each bar by
    its calls (as the unstacked bar), NaN for a bar without calls."""
    per_run = [_stacked_segments(run, members, rk) for run, rk in zip(runs, picked)]
    pooled: dict[str, float] = {}
    for segs in per_run:
        for n in names:
            for lab, v in segs.get(n, {}).items():
                if lab != _SELF_SEGMENT:
                    pooled[lab] = pooled.get(lab, 0.0) + v
    labels = [_SELF_SEGMENT] + sorted(pooled, key=lambda lab: (-pooled[lab], lab))
    values = []
    for run, rk, segs in zip(runs, picked, per_run):
        vals = {lab: np.zeros(len(names)) for lab in labels}
        for i, n in enumerate(names):
            for lab, v in segs.get(n, {}).items():
                vals[lab][i] = v * _NS
        if metric == "avg":
            calls = np.array([sum(run.res.regions[m][r].num_calls for m in members[n]
                                  if m in run.res.regions for r in rk
                                  if r in run.res.regions[m]) for n in names], dtype=float)
            for h in vals.values():
                h /= np.where(calls == 0, 1.0, calls)
                h[calls == 0] = np.nan
        values.append(vals)
    return labels, values


def _draw_stack(ax, xs, segs, heights, colors, width, legend):
    """One run's stacked bars: each segment of segs (heights[seg], s) on
    top of those before it, self at the bottom; legend: label them."""
    bottom = np.zeros(len(xs))
    for seg in segs:
        h = np.nan_to_num(heights[seg])
        ax.bar(xs, h, width=width, bottom=bottom, color=colors[seg], edgecolor="black",
               linewidth=0.5, label=seg if legend else None)
        bottom = bottom + h


def _sort_and_limit(names, runs, picked, members, sort_by, top_n) -> list[str]:
    """scope-profiler's order of the bars: as found when neither sort_by
    nor top_n is given; alphabetical for sort_by "name" or top_n alone;
    else by the metric's worst case across runs (the maximum over every
    run plotted together, descending, ties by name); then the first
    top_n."""
    if sort_by is None and top_n is None:
        return names
    if sort_by is None or sort_by == "name":
        ordered = sorted(names)
    else:
        def score(n):
            vals = [_metric_s(run, members[n], rk, sort_by) for run, rk in zip(runs, picked)]
            finite = [v for v in vals if np.isfinite(v)]
            return max(finite) if finite else float("-inf")
        ordered = sorted(names, key=lambda n: (-score(n), n))
    return ordered if top_n is None else ordered[:int(top_n)]


def plot_durations(profiling_data, ranks=None, include=None, exclude=None, labels=None,
                   metric="total", metrics=None, sort_by=None, top_n=None,
                   combine_regions=None, stack_children=False, filepath=None, show=False,
                   verbose=True, cmap=DEFAULT_CMAP, log_scale=False, data_filepath=None,
                   data_format="csv", backend="matplotlib", return_fig=False):
    """Bars of a duration statistic per region (s), one bar per run in
    each region's group: metric is total, avg, min, max, first or last
    (metrics: several, one panel each); sort_by a metric to order the
    regions by (descending, its maximum over the runs) or "name", top_n
    the first N (alphabetically when alone), as scope-profiler orders them;
    labels name the runs.

    combine_regions ({"setup": ["init.*", "alloc"]}: see _group_regions)
    pools regions into one bar.  stack_children splits each bar (total or
    avg only) into the region's self time and a segment per region called
    directly from it, from the fold's parents; colours then name the
    segments (the legend), not the runs.  data_filepath: (metric, run,
    region, duration_s), stacked: (metric, run, region, segment,
    duration_s), a row per bar's self time and per non-empty child."""
    _check_output(backend, filepath, data_filepath, data_format)
    mets = list(metrics) if metrics else [metric]
    for m in mets:
        _check_metric(m)
    if sort_by is not None and sort_by != "name" and sort_by not in _DURATION_METRICS:
        raise ValueError(f"Unknown sort_by {sort_by!r}. Valid options are: "
                         f"{['name', *_DURATION_METRICS]}")
    if stack_children:
        bad = [m for m in mets if m not in _STACKABLE_METRICS]
        if bad:
            raise ValueError(f"stack_children does not apply to metric(s) {bad}: only "
                             f"{sorted(_STACKABLE_METRICS)} decompose into self time "
                             "plus children.")
    runs = _as_runs(profiling_data)
    if labels is not None:
        if len(labels) != len(runs):
            raise ValueError(f"{len(labels)} labels for {len(runs)} runs")
        for run, lab in zip(runs, labels):
            run.label = str(lab)
    if stack_children:
        for run in runs:
            _need_events(run, "stack_children")
    names: list[str] = []
    for run in runs:
        names += [n for n in _select(run, include, exclude) if n not in names]
    names, members = _group_regions(names, combine_regions)
    picked = [_pick_ranks(run, ranks) for run in runs]
    names = _sort_and_limit(names, runs, picked, members, sort_by, top_n)
    run_colors = _colors(cmap, [r.label for r in runs])
    fig = _new_figure((max(8, 0.5 * len(names) * max(1, len(runs)) + 3), 4.5 * len(mets)),
                      show, backend)
    axes = _axes_grid(fig, len(mets))
    rows = []
    width = 0.8 / len(runs)
    # stacked bars of several runs share the segments' colours: a gap tells them apart
    bar_width = width * 0.85 if stack_children and len(runs) > 1 else width
    for ax, m in zip(axes, mets):
        if stack_children:
            segs, stacked = _stacked_values(runs, picked, names, members, m)
            seg_colors = _colors(cmap, segs)
        for k, (run, rk) in enumerate(zip(runs, picked)):
            xs = np.arange(len(names)) + (k - (len(runs) - 1) / 2) * width
            if stack_children:
                _draw_stack(ax, xs, segs, stacked[k], seg_colors, bar_width, legend=k == 0)
                rows += [(m, run.label, n, seg, float(v)) for seg in segs
                         for n, v in zip(names, stacked[k][seg])
                         if seg == _SELF_SEGMENT or v]
            else:
                vals = [_metric_s(run, members[n], rk, m) for n in names]
                ax.bar(xs, np.nan_to_num(vals), width=width, color=run_colors[run.label],
                       label=run.label)
                rows += [(m, run.label, n, v) for n, v in zip(names, vals)]
        ax.set_xticks(range(len(names)), names, rotation=30, ha="right")
        ax.set_ylabel(f"{m} duration (s)")
        ax.set_title(f"{m} duration per region" + (", children stacked" if stack_children
                                                   else ""))
        if log_scale:
            ax.set_yscale("log")
        if stack_children:
            ax.legend(title="segment", fontsize="small", loc="upper left",
                      bbox_to_anchor=(1.01, 1))
        elif len(runs) > 1:
            ax.legend(title="run", fontsize="small")
        ax.grid(axis="y", alpha=0.3)
    _write_data(data_filepath, data_format, "durations",
                ("metric", "run", "region", "segment", "duration_s") if stack_children
                else ("metric", "run", "region", "duration_s"), rows)
    return _finish(fig, axes, filepath, show, verbose, return_fig)


def plot_duration_histogram(profiling_data, ranks=None, include=None, exclude=None,
                            bins=30, filepath=None, show=False, verbose=True,
                            cmap=DEFAULT_CMAP, log_scale=False, data_filepath=None,
                            data_format="csv", backend="matplotlib", return_fig=False):
    """Each region's call-duration distribution as a line of counts per
    bin (one panel per run, bins shared within a panel, durations in s;
    log_scale: logarithmic bins and axis)."""
    _check_output(backend, filepath, data_filepath, data_format)
    if int(bins) < 1:
        raise ValueError("bins must be at least 1")
    runs = _as_runs(profiling_data)
    panels, all_names = [], []
    for run in runs:
        _need_events(run, "a duration histogram")
        names = _select(run, include, exclude)
        all_names += [n for n in names if n not in all_names]
        rk = _pick_ranks(run, ranks)
        durs = {n: _durations_s(run, n, rk) for n in names}
        durs = {n: d for n, d in durs.items() if d.size}
        if durs:
            panels.append((run, durs))
    if not panels:
        raise ValueError("no calls recorded for the requested ranks")
    colors = _colors(cmap, all_names)
    fig = _new_figure((10, 4.0 * len(panels)), show, backend)
    axes = _axes_grid(fig, len(panels))
    rows = []
    for ax, (run, durs) in zip(axes, panels):
        allv = np.concatenate(list(durs.values()))
        lo, hi = float(allv.min()), float(allv.max())
        if log_scale:
            lo = max(lo, allv[allv > 0].min() if (allv > 0).any() else 1e-9)
            edges = np.geomspace(lo, max(hi, lo * 1.0001), int(bins) + 1)
        else:
            edges = np.linspace(lo, hi if hi > lo else lo + 1e-9, int(bins) + 1)
        mids = (edges[:-1] + edges[1:]) / 2
        for n, d in durs.items():
            counts, _ = np.histogram(d, bins=edges)
            ax.plot(mids, counts, marker=".", color=colors[n], label=n)
            rows += [(run.label, n, float(a), float(b), int(c))
                     for a, b, c in zip(edges[:-1], edges[1:], counts)]
        if log_scale:
            ax.set_xscale("log")
        ax.set_xlabel("call duration (s)")
        ax.set_ylabel("calls")
        ax.set_title(f"Duration distribution: {run.label}")
        ax.legend(title="region", fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1))
    _write_data(data_filepath, data_format, "duration_histogram",
                ("run", "region", "bin_lo_s", "bin_hi_s", "calls"), rows)
    return _finish(fig, axes, filepath, show, verbose, return_fig)


def plot_imbalance(profiling_data, metric="total", ranks=None, include=None, exclude=None,
                   filepath=None, show=False, verbose=True, cmap=DEFAULT_CMAP,
                   log_scale=False, data_filepath=None, data_format="csv",
                   backend="matplotlib", return_fig=False):
    """Each region's duration statistic (avg, min, max or total: s) per
    rank, a line over the ranks with a dashed line at its mean over
    ranks: a straggler rank sits off its region's line."""
    _check_output(backend, filepath, data_filepath, data_format)
    _check_metric(metric, ("avg", "min", "max", "total"))
    runs = _as_runs(profiling_data)
    all_names = []
    for run in runs:
        all_names += [n for n in _select(run, include, exclude) if n not in all_names]
    colors = _colors(cmap, all_names)
    fig = _new_figure((10, 4.5 * len(runs)), show, backend)
    axes = _axes_grid(fig, len(runs))
    rows = []
    for ax, run in zip(axes, runs):
        rk = _pick_ranks(run, ranks)
        for n in _select(run, include, exclude):
            vals = np.array([_metric_s(run, n, [r], metric) for r in rk])
            ax.plot(rk, vals, marker="o", color=colors[n], label=n)
            if np.isfinite(vals).any():
                ax.axhline(np.nanmean(vals), color=colors[n], linestyle="--", linewidth=0.8)
            rows += [(run.label, n, r, v) for r, v in zip(rk, vals.tolist())]
        ax.set_xticks(rk, [f"rank {r}" for r in rk])
        ax.set_ylabel(f"{metric} duration (s)")
        ax.set_title(f"Imbalance across ranks: {run.label}")
        if log_scale:
            ax.set_yscale("log")
        ax.legend(title="region", fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1))
        ax.grid(alpha=0.3)
    _write_data(data_filepath, data_format, "imbalance",
                ("run", "region", "rank", f"{metric}_s"), rows)
    return _finish(fig, axes, filepath, show, verbose, return_fig)


def plot_rank_heatmap(profiling_data, ranks=None, include=None, exclude=None,
                      filepath=None, show=False, verbose=True, cmap="viridis",
                      data_filepath=None, data_format="csv", backend="matplotlib",
                      return_fig=False, exclusive=False):
    """A rank-by-region heatmap of total time (s; exclusive: self time, by
    the fold), one panel per run, each cell annotated."""
    _check_output(backend, filepath, data_filepath, data_format)
    runs = _as_runs(profiling_data)
    prepared = []
    for run in runs:
        names = _select(run, include, exclude)
        rk = _pick_ranks(run, ranks)
        m = np.zeros((len(rk), len(names)))
        for j, n in enumerate(names):
            per = run.res.regions[n]
            for i, r in enumerate(rk):
                if r not in per:
                    continue
                reg = per[r]
                if exclusive:
                    if reg.self_ns is not None and reg.self_ns.size:
                        m[i, j] = float(reg.self_ns.sum()) * _NS
                    elif reg.exclusive_total_ns >= 0:
                        m[i, j] = reg.exclusive_total_ns * _NS
                else:
                    m[i, j] = reg.total_ns * _NS
        prepared.append((run, names, rk, m))
    fig = _new_figure((max(6, 0.9 * max(len(p[1]) for p in prepared) + 3),
                       sum(1.5 + 0.45 * len(p[2]) for p in prepared)), show, backend)
    axes = _axes_grid(fig, len(prepared))
    rows = []
    what = "self" if exclusive else "total"
    for ax, (run, names, rk, m) in zip(axes, prepared):
        im = ax.imshow(m, aspect="auto", cmap=cmap)
        ax.set_xticks(range(len(names)), names, rotation=30, ha="right")
        ax.set_yticks(range(len(rk)), [f"rank {r}" for r in rk])
        for i in range(len(rk)):
            for j in range(len(names)):
                ax.text(j, i, f"{m[i, j]:.3g}", ha="center", va="center", fontsize=7,
                        color="white" if m[i, j] < (m.max() + m.min()) / 2 else "black")
                rows.append((run.label, names[j], rk[i], m[i, j]))
        fig.colorbar(im, ax=ax, label=f"{what} time (s)")
        ax.set_title(f"{what.capitalize()} time per rank and region: {run.label}")
    _write_data(data_filepath, data_format, "rank_heatmap",
                ("run", "region", "rank", f"{what}_s"), rows)
    return _finish(fig, axes, filepath, show, verbose, return_fig)


def plot_duration_timeseries(profiling_data, ranks=None, include=None, exclude=None,
                             filepath=None, show=False, verbose=True, cmap=DEFAULT_CMAP,
                             log_scale=False, data_filepath=None, data_format="csv",
                             backend="matplotlib", return_fig=False):
    """Each region's call duration (s) over time (s since the run's first
    start): call k's mean over the ranks that made a k-th call, shaded
    between their minimum and maximum (rank imbalance widens the band).
    One panel per run."""
    _check_output(backend, filepath, data_filepath, data_format)
    runs = _as_runs(profiling_data)
    all_names = []
    for run in runs:
        _need_events(run, "a duration time series")
        all_names += [n for n in _select(run, include, exclude) if n not in all_names]
    colors = _colors(cmap, all_names)
    fig = _new_figure((11, 4.5 * len(runs)), show, backend)
    axes = _axes_grid(fig, len(runs))
    rows = []
    for ax, run in zip(axes, runs):
        rk, t0 = _pick_ranks(run, ranks), run.t0_ns()
        for n in _select(run, include, exclude):
            per = [run.res.regions[n][r] for r in rk if r in run.res.regions[n]]
            per = [p for p in per if p.durations_ns.size]
            if not per:
                continue
            k = max(p.durations_ns.size for p in per)
            st = np.full((len(per), k), np.nan)
            du = np.full((len(per), k), np.nan)
            for i, p in enumerate(per):
                o = np.argsort(p.start_ns, kind="stable")
                st[i, :o.size] = (p.start_ns[o] - t0) * _NS
                du[i, :o.size] = p.durations_ns[o] * _NS
            x, y = np.nanmean(st, axis=0), np.nanmean(du, axis=0)
            lo, hi = np.nanmin(du, axis=0), np.nanmax(du, axis=0)
            ax.plot(x, y, color=colors[n], label=n, linewidth=1)
            if len(per) > 1:
                ax.fill_between(x, lo, hi, color=colors[n], alpha=0.25, linewidth=0)
            rows += [(run.label, n, i, a, b, c, d)
                     for i, (a, b, c, d) in enumerate(zip(x, y, lo, hi))]
        ax.set_xlabel("time since the first start (s)")
        ax.set_ylabel("call duration (s)")
        if log_scale:
            ax.set_yscale("log")
        ax.set_title(f"Call durations over time: {run.label}")
        ax.legend(title="region", fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1))
        ax.grid(alpha=0.3)
    _write_data(data_filepath, data_format, "duration_timeseries",
                ("run", "region", "call", "time_s", "mean_s", "min_s", "max_s"), rows)
    return _finish(fig, axes, filepath, show, verbose, return_fig)


def plot_timeline_density(profiling_data, ranks=None, include=None, exclude=None,
                          filepath=None, show=False, verbose=True, cmap="magma", bins=200,
                          start_time=None, end_time=None, min_duration=0.0,
                          data_filepath=None, data_format="csv", backend="matplotlib",
                          return_fig=False):
    """Binned region occupancy: per region (a row) and time bin (a column)
    the seconds of its calls that overlap the bin, summed over ranks and
    threads -- readable for runs of millions of calls.  One panel per run."""
    _check_output(backend, filepath, data_filepath, data_format)
    if int(bins) < 1:
        raise ValueError("bins must be at least 1")
    runs = _as_runs(profiling_data)
    fig = _new_figure((12, sum(1.5 + 0.35 * len(_select(r, include, exclude)) for r in runs)),
                      show, backend)
    axes = _axes_grid(fig, len(runs))
    rows = []
    for ax, run in zip(axes, runs):
        _need_events(run, "a timeline density")
        names, t0 = _select(run, include, exclude), run.t0_ns()
        calls = _Calls(run, names, _pick_ranks(run, ranks))
        sel = _window(calls, t0, min_duration, start_time, end_time)
        if not sel.size:
            raise ValueError(f"{run.label}: no calls left to draw")
        s = (calls.start[sel] - t0) * _NS
        e = s + calls.dur[sel] * _NS
        lo = start_time if start_time is not None else 0.0
        hi = end_time if end_time is not None else float(e.max())
        edges = np.linspace(lo, hi if hi > lo else lo + 1e-9, int(bins) + 1)
        m = np.zeros((len(names), int(bins)))
        for j in range(int(bins)):  # overlap of every call with bin j
            ov = np.clip(np.minimum(e, edges[j + 1]) - np.maximum(s, edges[j]), 0, None)
            m[:, j] = np.bincount(calls.name[sel], weights=ov, minlength=len(names))
        im = ax.imshow(m, aspect="auto", cmap=cmap, interpolation="nearest",
                       extent=(edges[0], edges[-1], len(names) - 0.5, -0.5))
        ax.set_yticks(range(len(names)), names)
        ax.set_xlabel("time since the first start (s)")
        ax.set_title(f"Region occupancy over time: {run.label}")
        fig.colorbar(im, ax=ax, label="seconds in bin")
        rows += [(run.label, names[i], float(edges[j]), float(edges[j + 1]), m[i, j])
                 for i in range(len(names)) for j in range(int(bins)) if m[i, j]]
    _write_data(data_filepath, data_format, "timeline_density",
                ("run", "region", "bin_lo_s", "bin_hi_s", "seconds"), rows)
    return _finish(fig, axes, filepath, show, verbose, return_fig)
