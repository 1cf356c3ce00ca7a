"""perf_event counter plots (scope-profiler's plotting_scripts.perf_events):
one bar per region and (run, rank) of a raw event's total or a ratio made
from the region's totals (IPC, cache misses per 1k instructions, cache
and branch miss rates: results/_counters.PERF_DERIVED).  The data are the
results' get_perf_events() (scope-profiler's rank<N>/perf_events groups,
read by results/_counters.read_perf_events)."""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np

from spanscope.plots._figure import (DEFAULT_CMAP, _check_output, _colors, _finish,
                                     _new_figure)


def _results(profiling_data) -> list:
    """profiling_data as scope-profiler result sets (anything with
    get_perf_events: ProfilingResults), paths read with read_h5; non-root
    sets (MPI ranks other than 0) dropped, as scope-profiler's plots drop
    them; a spanscope.read Results (what the other spanscope.plots take)
    as the result set of its file.  ValueError for an empty input,
    TypeError for anything else."""
    from spanscope.results import ProfilingResults, Results, read_h5
    items = (list(profiling_data) if isinstance(profiling_data, (list, tuple))
             else [profiling_data])
    if not items:
        raise ValueError("No profiling data provided.")
    runs = []
    for it in items:
        if isinstance(it, (str, os.PathLike)):
            it = read_h5(it)
        elif isinstance(it, Results):
            it = ProfilingResults._from_model(it)
        if not isinstance(it, ProfilingResults):
            raise TypeError("perf-event plots take ProfilingResults or paths of .h5 "
                            f"recordings, not {type(it).__name__}")
        if it.is_root:
            runs.append(it)
    return runs


def _unique(labels: Sequence[str]) -> list[str]:
    seen: dict[str, int] = {}
    out = []
    for lab in labels:
        seen[lab] = seen.get(lab, 0) + 1
        out.append(lab if seen[lab] == 1 else f"{lab} ({seen[lab]})")
    return out


def available_perf_event_metrics(profiling_data) -> list[str]:
    """The metrics plot_perf_events can draw for profiling_data (a result
    set, a path, or a sequence of them), as scope-profiler lists them:
    the ratios whose two events were recorded ("ipc",
    "cache-misses-per-ki", and spanscope's "cache-miss-rate",
    "branch-miss-rate"), then every recorded event name, sorted."""
    from spanscope.results._counters import available_perf_metrics
    events = {event for run in _results(profiling_data)
              for regions in run.get_perf_events().values()
              for totals in regions.values() for event in totals.values}
    return available_perf_metrics(events)


def plot_perf_events(profiling_data, metric: str = "ipc", ranks=None, include=None,
                     exclude=None, labels=None, filepath=None, show: bool = False,
                     verbose: bool = True, cmap: str = DEFAULT_CMAP,
                     backend: str = "matplotlib"):
    """Bar chart of one perf-event metric for every region and rank, with
    scope-profiler's signature: metric is a recorded event's name or a
    ratio of available_perf_event_metrics ("ipc": instructions per cycle;
    "cache-misses-per-ki"; "cache-miss-rate" and "branch-miss-rate" in
    percent), made from each region's totals (weighted by its calls, not a
    mean of per-call ratios).  One series per (run, rank): labelled by the
    run's display label, with " (rank N)" when several runs of several
    ranks, or "rank N" for one run of several ranks; labels replaces them
    (one per series).  ranks / include / exclude select (include/exclude:
    regular expressions matched at the start of the name).  Saved to
    filepath (format by suffix), shown with show.  Returns the figure
    (matplotlib Figure, or plotly's with backend="plotly"); None when no
    result set is this rank's to draw (non-root).  ValueError when no run
    recorded perf events ("None of the selected files recorded perf-event
    data."), for a metric not available ("Metric ... is unavailable"),
    when no region matches ("No perf-event regions matched the requested
    filters."), or when labels do not match the series."""
    from spanscope.results._counters import PERF_DERIVED, _selected, perf_metric_value
    _check_output(backend, filepath)
    runs = _results(profiling_data)
    if not runs:
        return None
    if not any(run.has_perf_events for run in runs):
        raise ValueError("None of the selected files recorded perf-event data.")
    available = available_perf_event_metrics(runs)
    if metric not in available:
        raise ValueError(f"Metric {metric!r} is unavailable; choose from {available}")
    if ranks is None:
        selected_ranks = None
    elif isinstance(ranks, (int, np.integer)):
        selected_ranks = [int(ranks)]
    else:
        selected_ranks = [int(r) for r in ranks]
    series = []
    for run in runs:
        for rank, regions in sorted(run.get_perf_events().items()):
            if selected_ranks is not None and rank not in selected_ranks:
                continue
            values = {name: perf_metric_value(totals, metric)
                      for name, totals in regions.items() if _selected(name, include, exclude)}
            if not values:
                continue
            if len(runs) == 1:
                label = f"rank {rank}" if run.num_ranks > 1 else run.display_label
            else:
                label = run.display_label + ("" if run.num_ranks == 1 else f" (rank {rank})")
            series.append((label, values))
    if not series:
        raise ValueError("No perf-event regions matched the requested filters.")
    names = sorted({name for _, values in series for name in values})
    series_labels = _unique([lab for lab, _ in series]) if labels is None else list(labels)
    if len(series_labels) != len(series):
        raise ValueError("labels must match the number of (file, rank) series.")
    ylabel = PERF_DERIVED[metric][3] if metric in PERF_DERIVED else metric
    if verbose:
        print(f"Plotting perf-event metric {metric!r} for: " + ", ".join(series_labels))
    colors = _colors(cmap, series_labels)
    fig = _new_figure((max(8, len(names) * 0.85 + 2), 4.8), show, backend)
    ax = fig.subplots(1, 1, squeeze=False)[0][0]  # both backends' figures
    width = min(0.8 / len(series), 0.35)
    positions = np.arange(len(names))
    for k, (lab, (_, values)) in enumerate(zip(series_labels, series)):
        xs = positions + (k - (len(series) - 1) / 2) * width
        ax.bar(xs, [values.get(n, float("nan")) for n in names], width=width,
               label=lab if len(series) > 1 else None, color=colors[lab], edgecolor="black")
    ax.set_xticks(positions, names)
    ax.set_ylabel(ylabel)
    ax.set_title(f"Perf events: {ylabel}")
    ax.grid(True, alpha=0.3)
    if len(series) > 1:
        ax.legend()
    return _finish(fig, ax, filepath, show, verbose, False)
