"""Plots of a recording, as scope-profiler 0.7.5 offers them
(``scope_profiler.plotting_scripts``), drawn with matplotlib or plotly.

Every function takes what scope-profiler's takes first -- one run or a
sequence of runs -- where a run is a path (``.h5``: read by
:func:`spanscope.read`) or the :class:`spanscope.Results` it returns, and
keeps scope-profiler's keyword names (``ranks``, ``include``, ``exclude``,
``filepath``, ``show``, ``verbose``, ``cmap``, ``data_filepath``,
``data_format``, ``backend``, ``return_fig``, ...).  ``filepath`` picks the
format by its suffix (``.png``, ``.svg``, ``.pdf``, whatever matplotlib
writes).  Each returns the matplotlib ``Figure`` (scope-profiler returns
None unless ``return_fig``; with ``return_fig=True`` it is
``(figure, axes)`` as there).  Durations are in seconds, as in
scope-profiler; times on a time axis are seconds since the run's first
start.

``backend="plotly"`` draws the same plot as a ``plotly.graph_objects.Figure``
(returned, with or without ``return_fig``, as scope-profiler's): a
``filepath`` ending in ``.html`` is written by ``write_html``, any other
(``.png``, ``.svg``, ...) by ``write_image``, which needs kaleido -- a
RuntimeError naming it when the export fails.  Each plot computes its data
once and draws it through one set of drawing calls (matplotlib's Axes
methods), which :class:`_PlotlyAxes` turns into plotly traces.

``data_filepath`` writes the numbers behind the plot: ``data_format``
``"csv"``, ``"json"`` (scope-profiler's plot-data envelope) or
``"parquet"`` (the csv's columns, typed, written with pyarrow).

The data are the C reader's (``spanscope.read``: per call start, duration,
self time, thread, and the one fold's parent); nothing here parses a file
or re-derives nesting: a call's depth and stack are its chain of fold
parents.

matplotlib is the optional ``plot`` extra (``pip install 'spanscope[plot]'``),
plotly the ``plotly`` extra and pyarrow the ``parquet`` extra, each
imported when a plot needs it; without it the plot raises ImportError
naming the extra.

From the command line (``spanscope plot`` calls :func:`main`)::

    python -m spanscope.plots gantt run.h5 -o gantt.svg
    python -m spanscope.plots speedup r1.h5 r2.h5 r4.h5 -o speedup.png
"""

from __future__ import annotations

# one module per kind of plot, each importing only _figure and _runs (and
# _timeline's window); _cli above them all
from spanscope.plots._figure import DEFAULT_CMAP, FLAME_CMAP
from spanscope.plots._timeline import (plot_flame, plot_flame_chart, plot_flame_graph,
                                       plot_gantt)
from spanscope.plots._distributions import (plot_duration_histogram,
                                            plot_duration_timeseries, plot_durations,
                                            plot_imbalance, plot_rank_heatmap,
                                            plot_timeline_density)
from spanscope.plots._scaling import (plot_scaling_efficiency, plot_speedup,
                                      plot_weak_scaling, plot_weak_scaling_efficiency)
from spanscope.plots._callgraph import plot_callgraph
from spanscope.plots._statistics import (collect_region_statistics,
                                         write_region_statistics_json)
from spanscope.plots._counters import (available_likwid_metrics,
                                       collect_roofline_points, plot_likwid,
                                       plot_roofline)
from spanscope.plots._perf import available_perf_event_metrics, plot_perf_events
from spanscope.plots._cli import KINDS, main

__all__ = [
    "DEFAULT_CMAP", "FLAME_CMAP", "KINDS", "main",
    "plot_gantt", "plot_flame", "plot_flame_chart", "plot_flame_graph",
    "plot_durations", "plot_duration_histogram", "plot_rank_heatmap",
    "plot_imbalance", "plot_duration_timeseries", "plot_speedup",
    "plot_scaling_efficiency", "plot_timeline_density", "plot_weak_scaling",
    "plot_weak_scaling_efficiency", "plot_callgraph", "plot_likwid", "plot_perf_events",
    "plot_roofline", "available_likwid_metrics", "available_perf_event_metrics",
    "collect_region_statistics", "write_region_statistics_json", "collect_roofline_points",
]

