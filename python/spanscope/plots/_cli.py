"""The command line: ``python -m spanscope.plots KIND FILE... -o OUT``
(``spanscope plot``)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from spanscope.plots._callgraph import plot_callgraph
from spanscope.plots._distributions import plot_duration_histogram, plot_duration_timeseries, plot_durations, plot_imbalance, plot_rank_heatmap, plot_timeline_density
from spanscope.plots._figure import _BACKENDS, _DATA_FORMATS, _check_output
from spanscope.plots._scaling import plot_scaling_efficiency, plot_speedup, plot_weak_scaling, plot_weak_scaling_efficiency
from spanscope.plots._timeline import plot_flame_chart, plot_flame_graph, plot_gantt


# --- command line ------------------------------------------------------------------

#: KIND of `python -m spanscope.plots KIND` -> (function, takes several runs)
KINDS = {
    "gantt": plot_gantt,
    "timeline": plot_gantt,
    "flame": plot_flame_chart,
    "flame-chart": plot_flame_chart,
    "flame-graph": plot_flame_graph,
    "durations": plot_durations,
    "histogram": plot_duration_histogram,
    "imbalance": plot_imbalance,
    "heatmap": plot_rank_heatmap,
    "timeseries": plot_duration_timeseries,
    "density": plot_timeline_density,
    "speedup": plot_speedup,
    "efficiency": plot_scaling_efficiency,
    "weak-scaling": plot_weak_scaling,
    "weak-efficiency": plot_weak_scaling_efficiency,
    "callgraph": plot_callgraph,
}

_HELP = """\
kinds:
  gantt, timeline   a Gantt chart: a lane per rank and thread, nested calls below
  flame, flame-chart  call depth over time (rank 0 unless --ranks)
  flame-graph       stacks aggregated, width = total time
  durations         bars of --metric per region, a bar per FILE
  histogram         call-duration distribution per region (--bins, --log)
  imbalance         --metric per rank per region
  heatmap           total (--exclusive: self) time per rank and region
  timeseries        call duration over time, min-max band over ranks
  density           region occupancy per time bin (--bins)
  speedup           speedup across FILEs by --x-field (two FILEs at least)
  efficiency        parallel efficiency across FILEs by --x-field
  weak-scaling      runtime over the baseline's across FILEs (ideal: 1)
  weak-efficiency   baseline runtime over runtime across FILEs (ideal: 1)
  callgraph         callers above callees, a node per call (--compact: per
                    region; --fluid-callgraph: scope-profiler's force-directed
                    layout of it); one FILE, rank 0 unless --ranks R

The image format is the suffix of -o (.png, .svg, .pdf).  Needs matplotlib:
pip install 'spanscope[plot]'.  --backend plotly writes .html (and, with
kaleido, .png/.svg/.pdf): pip install 'spanscope[plotly]'.  --data-format
parquet needs pyarrow: pip install 'spanscope[parquet]'.
"""


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="spanscope plot", description="Draws a plot of one or more recordings (.h5).",
        epilog=_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("kind", metavar="KIND", choices=sorted(KINDS), help="the plot (see below)")
    p.add_argument("files", metavar="FILE", nargs="+", help="recordings (.h5)")
    p.add_argument("-o", "--output", required=True, metavar="OUT",
                   help="the image to write (.png, .svg, .pdf; plotly: .html)")
    p.add_argument("--backend", choices=_BACKENDS, default="matplotlib",
                   help="the renderer (default matplotlib; plotly: interactive .html)")
    p.add_argument("--ranks", metavar="R[,R...]", help="ranks to plot (default: all; "
                   "flame plots: rank 0)")
    p.add_argument("--include", action="append", metavar="REGEX",
                   help="only regions matching (repeatable)")
    p.add_argument("--exclude", action="append", metavar="REGEX",
                   help="leave out regions matching (repeatable)")
    p.add_argument("--metric", help="durations: total, avg, min, max, first, last; "
                   "imbalance: total, avg, min, max (default total)")
    p.add_argument("--bins", type=int, help="histogram (30), density (200)")
    p.add_argument("--log", action="store_true", help="logarithmic duration axis")
    p.add_argument("--exclusive", action="store_true", help="heatmap: self time")
    p.add_argument("--x-field", default="num_ranks",
                   help="speedup/efficiency: num_ranks (default), num_nodes, "
                   "omp_num_threads, total_cores or a metadata attribute")
    p.add_argument("--min-duration", type=float, default=0.0, metavar="S",
                   help="gantt, density: leave out calls shorter than S seconds")
    p.add_argument("--compact", "--compact-callgraph", dest="compact", action="store_true",
                   help="callgraph: a node per region")
    p.add_argument("--fluid-callgraph", "--fluid", dest="fluid", action="store_true",
                   help="callgraph: the compact graph in a force-directed layout")
    p.add_argument("--combine-regions", "--combine", dest="combine", action="extend",
                   nargs="+", metavar="NAME=PATTERN[,PATTERN...]",
                   help="durations: pool the regions matching the patterns (regular "
                   "expressions) into one bar NAME (repeatable)")
    p.add_argument("--stack-children", action="store_true",
                   help="durations: split each bar into self time and a segment per "
                   "region called from it (--metric total or avg)")
    p.add_argument("--cmap", help="matplotlib colour map")
    p.add_argument("--data", metavar="FILE",
                   help="also write the plotted numbers (.csv, .json or .parquet)")
    p.add_argument("--data-format", "--format", dest="data_format", choices=_DATA_FORMATS,
                   help="the format of --data (default: its suffix)")
    return p


def _kwargs(kind: str, a) -> dict:
    """The plot function's keywords from the parsed arguments; ValueError
    for an option the kind does not take."""
    kw: dict = {"include": a.include, "exclude": a.exclude, "verbose": False}
    fn = KINDS[kind]
    co = fn.__code__.co_varnames[:fn.__code__.co_argcount]
    if a.ranks:
        try:
            ranks = [int(x) for x in a.ranks.split(",")]
        except ValueError:
            raise ValueError(f"--ranks takes numbers separated by commas, got {a.ranks!r}")
        if "ranks" in co:
            kw["ranks"] = ranks
        elif len(ranks) == 1:  # plot_callgraph: one rank
            kw["rank"] = ranks[0]
        else:
            raise ValueError(f"the {kind} plot draws one rank, got --ranks {a.ranks}")
    combine = _parse_combine(a.combine) if a.combine else None
    for opt, key, val, given in (("--metric", "metric", a.metric, a.metric is not None),
                                 ("--bins", "bins", a.bins, a.bins is not None),
                                 ("--log", "log_scale", a.log, a.log),
                                 ("--exclusive", "exclusive", a.exclusive, a.exclusive),
                                 ("--x-field", "x_field", a.x_field, a.x_field != "num_ranks"),
                                 ("--min-duration", "min_duration", a.min_duration,
                                  a.min_duration != 0.0),
                                 ("--compact", "compact", a.compact, a.compact),
                                 ("--fluid-callgraph", "fluid", a.fluid, a.fluid),
                                 ("--combine-regions", "combine_regions", combine,
                                  combine is not None),
                                 ("--stack-children", "stack_children", a.stack_children,
                                  a.stack_children),
                                 ("--backend", "backend", a.backend,
                                  a.backend != "matplotlib"),
                                 ("--cmap", "cmap", a.cmap, a.cmap is not None)):
        if not given:
            continue
        if key not in co:
            raise ValueError(f"{opt} does not apply to the {kind} plot")
        kw[key] = val
    if a.data_format and not a.data:
        raise ValueError("--data-format needs --data FILE")
    if a.data:
        fmt = a.data_format or Path(a.data).suffix.lower().lstrip(".")
        if fmt not in _DATA_FORMATS:
            raise ValueError(f"--data {a.data}: the suffix must be .csv, .json or .parquet "
                             "(or give --data-format)")
        kw["data_filepath"], kw["data_format"] = a.data, fmt
    return kw


def _parse_combine(specs: list[str]) -> dict[str, list[str]]:
    """--combine-regions NAME=PATTERN[,PATTERN...] specs as plot_durations'
    combine_regions (scope-profiler's parse_region_groups); ValueError for
    a spec without NAME= or patterns, or a NAME given twice."""
    groups: dict[str, list[str]] = {}
    for spec in specs:
        name, sep, patterns = spec.partition("=")
        pats = [x for x in patterns.split(",") if x]
        if not sep or not name or not pats:
            raise ValueError("--combine-regions expects 'NAME=PATTERN1,PATTERN2' "
                             f"(got {spec!r})")
        if name in groups:
            raise ValueError(f"--combine-regions group {name!r} given more than once")
        groups[name] = pats
    return groups


def main(argv: Sequence[str] | None = None) -> int:
    """`spanscope plot KIND FILE... -o OUT [options]` (argv without the
    program's name).  Returns the exit status: 0, 1 for a file that cannot
    be read or plotted, 2 for bad usage; errors are one line on stderr."""
    try:
        a = _parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    except SystemExit as e:  # --help (0) or a usage error (2, already printed)
        return int(e.code or 0)
    try:
        kw = _kwargs(a.kind, a)
        _check_output(kw.get("backend", "matplotlib"), a.output,
                      kw.get("data_filepath"), kw.get("data_format", "csv"))
    except ImportError as e:
        print(f"spanscope plot: {e}", file=sys.stderr)
        return 1
    except ValueError as e:
        print(f"spanscope plot: {e}", file=sys.stderr)
        return 2
    files = list(a.files)
    try:
        KINDS[a.kind](files if len(files) > 1 else files[0], filepath=a.output, **kw)
    except (OSError, ValueError, ImportError) as e:
        print(f"spanscope plot: {e}", file=sys.stderr)
        return 1
    return 0
