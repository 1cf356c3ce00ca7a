"""IPython / Jupyter magics for spanscope: scope-profiler 0.7.5's eleven.

Load with::

    %load_ext spanscope.integrations.ipython_magics

A thin adapter over spanscope's public API: ``ProfileManager.session`` and
``ProfileManager.region`` measure, ``ProfilingResults.print_summary`` prints
the table, ``spanscope.read_h5`` loads, ``export_prof`` /
``export_speedscope`` export and ``spanscope.plots`` draws.  Importing it
needs IPython (the ``notebook`` extra: ``pip install 'spanscope[notebook]'``,
which also brings pandas for ``%scope_df``, line_profiler for
``%%scope_line`` and matplotlib for the plots).

The magics, with scope-profiler's arguments:

``%%scope [name] [-q] [-p] [-t] [--include PATTERN]``
    runs the cell inside the region ``name`` (default ``cell``) of a fresh
    session and prints its summary table; the run is kept under ``name``.
``%scope_timeit [-n N] [-q] statement``
    runs ``statement`` N times (default 7) as N calls of the region
    ``timeit`` and prints calls, total, avg, min and max.
``%%scope_line [name] [-q] [-Q]``
    runs the cell with line_profiler on the functions the cell profiles
    (decorated with ``@ProfileManager.profile`` / ``@spanscope.profile``, or
    holding a ``with ...region(...)`` block) and prints, after the region
    table (``-q``: not), line_profiler's per-line table of each (``-Q``:
    not).  A ``with`` block at the cell's top level is timed as a region,
    its lines are not broken down.
``%%scope_recursive [name] [-q] [-t] [--include PATTERN]``
    every Python function the cell calls becomes a region
    (``<module>.<qualname>``: ``__main__.f`` for the cell's own), with no
    decorators, through spanscope's C tracer (``LiveRegion.wrap(...,
    recursive=True)``); nothing stays registered after the cell.  The cell
    runs through ``exec``: a trailing expression is not echoed.
``%%scope_agg [name] [-q] [--include PATTERN]``
    the cell in ``aggregation_mode``: counts, totals, min and max per region,
    no per-call events.
``%scope_load filepath [-n name] [-q]``
    a profile written elsewhere (``spanscope.read_h5``) under ``name``
    (default: the file's stem).
``%scope_df [-n name] [--events] [--per-rank] [--include P] [--exclude P]``
    a run as a pandas DataFrame (the magic's value).
``%scope_last [name] [-p] [-t] [--include PATTERN]``
    the table of a run again (default: the latest).
``%scope_compare [name_a name_b] [--metric M] [--sort KEY]``
    two runs region by region (default: the latest two): the metric in each,
    the change and the change in percent (scope-profiler's ``diff`` table).
``%scope_export filepath [-n name] [--format prof|speedscope] [--include P]
[--exclude P] [--no-call-paths]``
    a run as a ``.prof`` (pstats, snakeviz) or speedscope JSON file.
``%scope_reset [name]``
    forgets one run, or all.

In a Jupyter kernel the tables are shown as HTML (with the text beside it
for plain-text front ends); ``-p`` adds scope-profiler's duration bars and
``-t`` (spanscope's) the run's timeline (``spanscope.plots.plot_gantt``),
drawn inline.  Every recording magic runs with ``deactivate_file_output``:
nothing is written to disk, the runs live in the kernel's memory.

The recording magics use the process's one spanscope session (set up
afresh for each cell, finalized at its end): a session the notebook set up
itself and did not finalize makes them raise ``RuntimeError``, as
``ProfileManager.setup`` does.
"""

from __future__ import annotations

import ast
import html
import io
import re
import sys
from pathlib import Path

from IPython.core.error import UsageError
from IPython.core.magic import Magics, cell_magic, line_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring

from spanscope import EventDataUnavailableError, ProfileManager, read_h5

#: scope-profiler's diff metrics and sort keys (``%scope_compare``)
METRICS = ("gpu_total", "gpu_avg", "total", "avg", "min", "max", "p50", "p95", "p99",
           "imbalance", "calls")
SORT_KEYS = ("delta", "pct", "name")
_METRIC_ATTRIBUTES = {
    "gpu_total": "gpu_total_duration", "gpu_avg": "gpu_average_duration",
    "total": "total_duration", "avg": "average_duration", "min": "min_duration",
    "max": "max_duration", "p50": "p50_duration", "p95": "p95_duration",
    "p99": "p99_duration", "imbalance": "rank_imbalance_pct", "calls": "num_calls",
}
_METRIC_LABELS = {
    "gpu_total": "gpu total [s]", "gpu_avg": "gpu avg [s]", "total": "total [s]",
    "avg": "avg [s]", "min": "min [s]", "max": "max [s]", "p50": "p50 [s]",
    "p95": "p95 [s]", "p99": "p99 [s]", "imbalance": "imbalance [%]", "calls": "calls",
}
#: the settings of every recording magic's session
_SESSION = {"return_results": True, "verbose": False, "deactivate_file_output": True}
#: the name under which %%scope_line's decorator hook lives in the user
#: namespace while the cell runs
_LINE_HOOK = "__spanscope_line_profile__"
#: decorators that mark a function as profiled (``profile``,
#: ``ProfileManager.profile(...)``, ``spanscope.profile``, ...)
_PROFILE_DECORATOR = re.compile(r"(^|\.)profile(\(|$)")
_REGION_CALL = re.compile(r"(^|\.)(profile_region|region)$")


# -- comparing two runs (scope-profiler's diff.diff_rows / print_diff_table) --

def _metric_value(region, metric: str):
    """The metric of one region (an MPIRegion), None when it has no value
    (no calls, no GPU timing)."""
    if metric.startswith("gpu") and not region.has_gpu_timing:
        return None
    value = getattr(region, _METRIC_ATTRIBUTES[metric])
    if value is None:
        return None
    return int(value) if metric == "calls" else float(value)


def compare_rows(results_a, results_b, metric: str = "total", sort: str = "delta",
                 include=None, exclude=None) -> list[dict]:
    """One dict per region of either run: ``name``, ``a`` and ``b`` (the
    metric in each run, None when the region is not there), ``delta``
    (b - a, a missing side counting 0) and ``pct`` (percent change, None
    without a baseline).  ``sort``: ``delta``/``pct`` by descending size of
    the change, ``name`` alphabetically -- scope-profiler's ``diff_rows``.
    ValueError for an unknown metric or sort key."""
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {METRICS}, got {metric!r}")
    if sort not in SORT_KEYS:
        raise ValueError(f"sort must be one of {SORT_KEYS}, got {sort!r}")
    a_regions = {r.name: r for r in results_a.get_regions(include=include, exclude=exclude)}
    b_regions = {r.name: r for r in results_b.get_regions(include=include, exclude=exclude)}
    rows = []
    for name in sorted(set(a_regions) | set(b_regions)):
        a = _metric_value(a_regions[name], metric) if name in a_regions else None
        b = _metric_value(b_regions[name], metric) if name in b_regions else None
        if a is None and b is None:
            continue
        delta = (b or 0) - (a or 0)
        pct = delta / a * 100 if a else None
        rows.append({"name": name, "a": a, "b": b, "delta": delta, "pct": pct})
    if sort != "name":
        rows.sort(key=lambda row: abs(row[sort]) if row[sort] is not None else -1,
                  reverse=True)
    return rows


def _fmt(value, metric, signed=False) -> str:
    if value is None:
        return "-"
    sign = "+" if signed and value >= 0 else ""
    return f"{sign}{int(value)}" if metric == "calls" else f"{sign}{value:.6g}"


def format_compare_table(rows, metric: str = "total", title: str | None = None) -> str:
    """The text of compare_rows' table: region, the metric in a and b, the
    change and the change in percent, then the regions of one run only."""
    label = _METRIC_LABELS[metric]
    lines = [title] if title else []
    if not rows:
        lines.append("  (no regions to compare)")
        return "\n".join(lines) + "\n"
    head = ["region", f"{label} (a)", f"{label} (b)", "delta", "delta [%]"]
    body = [[r["name"], _fmt(r["a"], metric), _fmt(r["b"], metric),
             _fmt(r["delta"], metric, True),
             "-" if r["pct"] is None else f"{'+' if r['pct'] >= 0 else ''}{r['pct']:.4g}%"]
            for r in rows]
    widths = [max(len(x[i]) for x in [head, *body]) for i in range(len(head))]

    def line(cells):
        return "  " + "  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                                for i, (c, w) in enumerate(zip(cells, widths)))
    lines += [line(head), "  " + "  ".join("-" * w for w in widths), *map(line, body)]
    only_a = [r["name"] for r in rows if r["b"] is None]
    only_b = [r["name"] for r in rows if r["a"] is None]
    if only_a:
        lines.append(f"\n  Only in a: {', '.join(only_a)}")
    if only_b:
        lines.append(f"  Only in b: {', '.join(only_b)}")
    return "\n".join(lines) + "\n"


# -- rich output ------------------------------------------------------------

def summary_html(results, title: str, include=None) -> str:
    """The run's regions as an HTML table (one row per region: calls,
    total, % of the session region's time, avg, min, max), for notebooks."""
    regions = results.get_regions(include=include)
    session = next((r for r in results.get_regions()
                    if r.name in ("spanscope.session", "scope_profiler.session")), None)
    whole = float(session.total_duration) if session is not None else 0.0
    head = ("<tr><th style='text-align:left'>region</th><th>calls</th><th>total [s]</th>"
            "<th>% session</th><th>avg [s]</th><th>min [s]</th><th>max [s]</th></tr>")
    rows = []
    for r in regions:
        total = float(r.total_duration)

        def cell(v):
            return "<td>-</td>" if v is None else f"<td>{float(v):.6g}</td>"
        pct = f"<td>{100 * total / whole:.1f}</td>" if whole > 0 else "<td>-</td>"
        rows.append(f"<tr><td style='text-align:left'><code>{html.escape(r.name)}</code></td>"
                    f"<td>{int(r.num_calls)}</td>{cell(total)}{pct}{cell(r.average_duration)}"
                    f"{cell(r.min_duration)}{cell(r.max_duration)}</tr>")
    if not rows:
        rows.append("<tr><td colspan='7'>no regions</td></tr>")
    return ("<table class='spanscope-summary' style='font-variant-numeric:tabular-nums'>"
            f"<caption style='text-align:left'><b>{html.escape(title)}</b></caption>"
            f"<thead>{head}</thead><tbody>{''.join(rows)}</tbody></table>")


def _plot_source(results):
    """What spanscope.plots reads for a run: the C reader's model of it
    (still there when its temporary file is gone), else the run written
    to a temporary .h5 and read back."""
    model = getattr(results, "model", None)
    if model is not None:
        return model
    import tempfile

    from spanscope import read, write_profile
    with tempfile.TemporaryDirectory(prefix="spanscope-magic-") as tmp:
        return read(write_profile(results, Path(tmp) / "run.h5"))


@magics_class
class ScopeMagics(Magics):
    """The magics over :class:`spanscope.ProfileManager`: each recorded run
    is kept in the kernel under a name (``_runs``, in ``_order`` of
    recording)."""

    def __init__(self, shell) -> None:
        super().__init__(shell)
        self._runs: dict = {}
        self._order: list[str] = []

    # -- the registry of runs
    def _store(self, name: str, results) -> None:
        self._runs[name] = results
        if name in self._order:
            self._order.remove(name)
        self._order.append(name)

    def _lookup(self, name):
        """(name, results) of the run named so, or of the latest one."""
        if name is None:
            if not self._order:
                raise UsageError("no spanscope runs recorded yet; run %%scope or "
                                 "%scope_timeit first")
            name = self._order[-1]
        if name not in self._runs:
            available = ", ".join(self._order) or "(none)"
            raise UsageError(f"no recorded run named {name!r}; available: {available}")
        return name, self._runs[name]

    # -- output
    def _in_kernel(self) -> bool:
        return getattr(self.shell, "kernel", None) is not None

    def _show_table(self, header: str, results, include=None, **summary) -> None:
        """print_summary's table after a header line: printed in a
        terminal, shown as HTML (text beside it) in a Jupyter kernel."""
        text = io.StringIO()
        results.print_summary(include=include, suppress_notes=True, stream=text, **summary)
        out = f"{header}\n{text.getvalue()}"
        if not self._in_kernel():
            sys.stdout.write(out)
            sys.stdout.flush()
            return
        from IPython.display import display
        display({"text/plain": out.rstrip("\n"),
                 "text/html": summary_html(results, header, include)}, raw=True)

    def _plots(self, results, include, bars: bool, timeline: bool) -> None:
        """-p: scope-profiler's duration bars; -t: the timeline (bare
        matplotlib Figures, no pyplot state: as PNG images in a kernel,
        through IPython's display elsewhere)."""
        if not (bars or timeline):
            return
        try:
            from spanscope import plots
        except ImportError as error:
            raise UsageError(f"plots need matplotlib (pip install 'spanscope[plot]'): "
                             f"{error}") from None
        source = _plot_source(results)
        figures = []
        if bars:
            figures.append(plots.plot_durations(source, include=include, show=False,
                                                verbose=False))
        if timeline:
            figures.append(plots.plot_gantt(source, include=include, show=False,
                                            verbose=False))
        from IPython.display import Image, display
        for fig in figures:
            if self._in_kernel():  # inline, whatever the matplotlib backend
                png = io.BytesIO()
                fig.savefig(png, format="png", bbox_inches="tight")
                display(Image(data=png.getvalue(), format="png"))
            else:
                display(fig)

    # -- the recording magics
    @magic_arguments()
    @argument("name", nargs="?", default=None,
              help="name to store the run under (default: 'cell')")
    @argument("-q", "--quiet", action="store_true", help="don't print the summary table")
    @argument("-p", "--plot", action="store_true",
              help="show a duration bar chart after the summary")
    @argument("-t", "--timeline", action="store_true", help="show the run's timeline")
    @argument("--include", default=None, help="regex selecting which regions to show/plot")
    @cell_magic("scope")
    def scope_cell(self, line, cell):
        """Profile a cell as one region and print its summary table."""
        args = parse_argstring(self.scope_cell, line)
        name = args.name or "cell"
        with ProfileManager.session(**_SESSION) as run, ProfileManager.region(name):
            self.shell.run_cell(cell)
        self._store(name, run.results)
        if not args.quiet:
            self._show_table(f"%%scope {name!r}", run.results, args.include)
        self._plots(run.results, args.include, args.plot, args.timeline)

    @line_magic("scope_timeit")
    def scope_timeit(self, line):
        """Run a statement N times inside a region and print timing stats."""
        opts, stmt = self.parse_options(line, "n:q", posix=False, strict=False)
        stmt = stmt.strip()
        if not stmt:
            raise UsageError("usage: %scope_timeit [-n N] statement")
        try:
            number = int(opts.get("n", 7))
        except ValueError:
            raise UsageError(f"-n takes a whole number, got {opts['n']!r}") from None
        if number < 1:
            raise UsageError(f"-n must be at least 1, got {number}")
        name = "timeit"
        with ProfileManager.session(**_SESSION) as run:
            region = ProfileManager.region(name)
            for _ in range(number):
                with region:
                    self.shell.ex(stmt)
        self._store(name, run.results)
        if "q" not in opts:
            self._show_table(f"%scope_timeit {stmt!r} ({number} runs)", run.results,
                             columns=["region", "calls", "total", "avg", "min", "max"])

    @magic_arguments()
    @argument("name", nargs="?", default=None,
              help="name for the run (default: 'cell')")
    @argument("-q", "--quiet", action="store_true",
              help="don't print the region summary table")
    @argument("-Q", "--quiet-lines", action="store_true",
              help="don't print the line-by-line tables")
    @cell_magic("scope_line")
    def scope_line_cell(self, line, cell):
        """Profile a cell with line_profiler on the functions it profiles.

        The functions the cell defines with a ``profile`` decorator
        (``@ProfileManager.profile``, ``@spanscope.profile``, with or
        without arguments) or with a ``with ...region(...)`` block in their
        body are handed to line_profiler as they are defined (a decorator
        added below the cell's own, through an AST transformer that lives
        for this cell only), and their per-line table is printed after the
        region table.  Functions defined in earlier cells are not.  The
        session runs with ``use_line_profiler=True``, so the stored run's
        ``line_profile`` holds each region's line profile, as
        scope-profiler's magic keeps it."""
        try:
            from line_profiler import LineProfiler
        except ImportError:
            raise UsageError("%%scope_line needs line_profiler: pip install line_profiler "
                             "(or 'spanscope[notebook]')") from None
        args = parse_argstring(self.scope_line_cell, line)
        name = args.name or "cell"
        profiler = LineProfiler()
        added = []

        def hook(func):
            profiler.add_function(func)
            added.append(func)
            return func

        transformer = _LineProfileTransformer()
        self.shell.ast_transformers.append(transformer)
        self.shell.user_ns[_LINE_HOOK] = hook
        try:
            # use_line_profiler=True as scope-profiler's magic: the run's
            # regions keep their own line profiles too (run.results'
            # line_profile, %scope_export); the table printed is this
            # profiler's, which saw the cell's functions from their definition
            with ProfileManager.session(use_line_profiler=True, **_SESSION) as run:
                profiler.enable_by_count()
                try:
                    self.shell.run_cell(cell)
                finally:
                    profiler.disable_by_count()
        finally:
            self.shell.ast_transformers.remove(transformer)
            self.shell.user_ns.pop(_LINE_HOOK, None)
        self._store(name, run.results)
        if not args.quiet:
            self._show_table(f"%%scope_line {name!r}", run.results)
        if not args.quiet_lines and added:
            text = io.StringIO()
            profiler.print_stats(stream=text)
            sys.stdout.write(text.getvalue())
            sys.stdout.flush()

    @magic_arguments()
    @argument("name", nargs="?", default=None,
              help="name to store the run under (default: 'cell')")
    @argument("-q", "--quiet", action="store_true", help="don't print the summary table")
    @argument("-t", "--timeline", action="store_true", help="show the run's timeline")
    @argument("--include", default=None, help="regex selecting which regions to show")
    @cell_magic("scope_recursive")
    def scope_recursive_cell(self, line, cell):
        """Profile every Python call the cell makes, with no instrumentation.

        Each function the cell calls becomes its own region, named
        ``<module>.<qualname>`` (spanscope's C tracer, as ``spanscope run
        --all`` traces a script; spanscope's own code is never traced).  The
        cell runs through ``exec``, so a trailing expression is not echoed;
        assignments land in the notebook's namespace.  An exception is
        reported after tracing stopped, its traceback starting in the cell,
        and the partial run is kept."""
        args = parse_argstring(self.scope_recursive_cell, line)
        name = args.name or "cell"
        source = self.shell.transform_cell(cell)
        filename = self.shell.compile.cache(source, self.shell.execution_count, raw_code=cell)
        code = compile(source, filename, "exec")
        namespace = self.shell.user_ns  # a property: read before tracing starts
        exc_info = None
        with ProfileManager.session(**_SESSION) as run:
            # LiveRegion.wrap: a traced callable that registers nothing (a
            # @profile decorator would stay for the kernel's lifetime)
            traced = ProfileManager.region(name).wrap(exec, recursive=True)
            try:
                traced(code, namespace)
            except Exception:
                etype, evalue, tb = sys.exc_info()
                # this method's frame off: the traceback starts in the cell
                exc_info = (etype, evalue, tb.tb_next if tb is not None else tb)
        if exc_info is not None:
            self.shell.showtraceback(exc_info, tb_offset=0)
        self._store(name, run.results)
        if not args.quiet:
            self._show_table(f"%%scope_recursive {name!r}", run.results, args.include,
                             sort="total")
        self._plots(run.results, args.include, False, args.timeline)

    @magic_arguments()
    @argument("name", nargs="?", default=None,
              help="name to store the run under (default: 'cell')")
    @argument("-q", "--quiet", action="store_true", help="don't print the summary table")
    @argument("--include", default=None, help="regex selecting which regions to show")
    @cell_magic("scope_agg")
    def scope_agg_cell(self, line, cell):
        """Profile a cell in aggregation mode: counts and totals, no timeline.

        Each region keeps its count, total, min, max and exclusive total,
        not every call, so a cell entering a region millions of times stays
        cheap; ``%scope_df --events`` and the timeline have nothing to show
        for such a run, the table and ``%scope_compare`` work as usual."""
        args = parse_argstring(self.scope_agg_cell, line)
        name = args.name or "cell"
        with ProfileManager.session(aggregation_mode=True, **_SESSION) as run, \
                ProfileManager.region(name):
            self.shell.run_cell(cell)
        self._store(name, run.results)
        if not args.quiet:
            self._show_table(f"%%scope_agg {name!r}", run.results, args.include)

    # -- the registry's magics
    @magic_arguments()
    @argument("name", nargs="?", default=None,
              help="run to reprint (default: the most recent one)")
    @argument("-p", "--plot", action="store_true",
              help="show a duration bar chart after the summary")
    @argument("-t", "--timeline", action="store_true", help="show the run's timeline")
    @argument("--include", default=None, help="regex selecting which regions to show/plot")
    @line_magic("scope_last")
    def scope_last(self, line):
        """Reprint the summary table of a previous run."""
        args = parse_argstring(self.scope_last, line)
        name, results = self._lookup(args.name)
        self._show_table(f"{name!r} (last)", results, args.include)
        self._plots(results, args.include, args.plot, args.timeline)

    @magic_arguments()
    @argument("name_a", nargs="?", default=None,
              help="baseline run (default: second-most-recent)")
    @argument("name_b", nargs="?", default=None,
              help="candidate run (default: most recent)")
    @argument("--metric", default="total", choices=METRICS, help="statistic to compare")
    @argument("--sort", default="delta", choices=SORT_KEYS, help="row ordering")
    @line_magic("scope_compare")
    def scope_compare(self, line):
        """Compare two previous runs region by region."""
        args = parse_argstring(self.scope_compare, line)
        if args.name_a is None and args.name_b is None:
            if len(self._order) < 2:
                raise UsageError("need two recorded runs to compare; run %%scope/"
                                 "%scope_timeit twice first, or pass two names")
            name_a, name_b = self._order[-2], self._order[-1]
        elif args.name_a is not None and args.name_b is not None:
            name_a, name_b = args.name_a, args.name_b
        else:
            raise UsageError("pass either two run names or none (compares the two most "
                             "recent)")
        name_a, results_a = self._lookup(name_a)
        name_b, results_b = self._lookup(name_b)
        rows = compare_rows(results_a, results_b, metric=args.metric, sort=args.sort)
        sys.stdout.write(format_compare_table(rows, args.metric,
                                              title=f"{name_a!r} -> {name_b!r}"))
        sys.stdout.flush()

    @magic_arguments()
    @argument("filepath", help="output path, e.g. 'run.prof' or 'run.speedscope.json'")
    @argument("-n", "--name", default=None, help="run to export (default: the most recent one)")
    @argument("--format", dest="fmt", choices=("prof", "speedscope"), default=None,
              help="output format (default: inferred from filepath)")
    @argument("--include", default=None, help="regex selecting which regions to export")
    @argument("--exclude", default=None, help="regex selecting which regions to drop")
    @argument("--no-call-paths", action="store_true",
              help="prof only: one entry per region instead of per 'parent > child' path")
    @line_magic("scope_export")
    def scope_export(self, line):
        """Export a previous run to a .prof or speedscope JSON file."""
        args = parse_argstring(self.scope_export, line)
        _, results = self._lookup(args.name)
        fmt = args.fmt
        if fmt is None:
            fmt = ("speedscope" if "speedscope" in args.filepath
                   or args.filepath.endswith(".json") else "prof")
        if fmt == "prof":
            from spanscope import export_prof
            paths = export_prof(results, args.filepath, include=args.include,
                                exclude=args.exclude, call_paths=not args.no_call_paths,
                                verbose=False)
        else:
            from spanscope import export_speedscope
            paths = export_speedscope(results, args.filepath, include=args.include,
                                      exclude=args.exclude, verbose=False)
        for path in paths:
            print(f"wrote {path}")

    @magic_arguments()
    @argument("name", nargs="?", default=None,
              help="run to drop (default: clear every recorded run)")
    @line_magic("scope_reset")
    def scope_reset(self, line):
        """Drop one recorded run, or every recorded run with no argument."""
        args = parse_argstring(self.scope_reset, line)
        if args.name is None:
            self._runs.clear()
            self._order.clear()
            print("cleared all recorded spanscope runs")
            return
        name, _ = self._lookup(args.name)
        del self._runs[name]
        self._order.remove(name)
        print(f"cleared recorded run {name!r}")

    @magic_arguments()
    @argument("filepath", help="profile to load, e.g. 'run_128ranks.h5'")
    @argument("-n", "--name", default=None,
              help="name to store it under (default: the file's stem)")
    @argument("-q", "--quiet", action="store_true", help="don't print the summary table")
    @line_magic("scope_load")
    def scope_load(self, line):
        """Load a profile written elsewhere (an MPI job, ``spanscope run``)
        among the recorded runs, for %scope_last, %scope_compare, %scope_df
        and %scope_export.  FileNotFoundError for a missing file."""
        args = parse_argstring(self.scope_load, line)
        results = read_h5(args.filepath)
        name = args.name or Path(args.filepath).stem
        self._store(name, results)
        if not args.quiet:
            self._show_table(f"%scope_load {args.filepath} as {name!r}", results)

    @magic_arguments()
    @argument("-n", "--name", default=None, help="run to convert (default: the most recent one)")
    @argument("--events", action="store_true",
              help="one row per recorded call instead of one per region")
    @argument("--per-rank", action="store_true",
              help="one row per (region, rank) instead of one aggregated row")
    @argument("--include", default=None, help="regex selecting which regions to keep")
    @argument("--exclude", default=None, help="regex selecting which regions to drop")
    @line_magic("scope_df")
    def scope_df(self, line):
        """Return a recorded run as a pandas DataFrame (the magic's value:
        ``df = %scope_df``).  ``--events`` of an aggregation-mode run
        (``%%scope_agg``) is an empty frame, with a note saying why."""
        args = parse_argstring(self.scope_df, line)
        _, results = self._lookup(args.name)
        if args.events:
            if args.per_rank:
                raise UsageError("--per-rank does not apply to --events")
            try:
                frame = results.to_events_dataframe(include=args.include,
                                                    exclude=args.exclude)
            except EventDataUnavailableError:
                import pandas as pd
                frame = pd.DataFrame(columns=["name", "rank", "call_index", "start", "end",
                                              "duration"])
            if frame.empty:
                print("no events recorded: the run was either filtered down to nothing or "
                      "recorded with %%scope_agg (aggregation mode keeps no per-call "
                      "timeline)")
            return frame
        return results.to_dataframe(include=args.include, exclude=args.exclude,
                                    per_rank=args.per_rank)


class _LineProfileTransformer(ast.NodeTransformer):
    """%%scope_line's AST transformer: adds ``@__spanscope_line_profile__``
    below the other decorators of each function the cell profiles (a
    ``profile`` decorator, or a ``with ...region(...)`` in its body), so
    line_profiler gets the function itself, before any wrapper."""

    def _profiled(self, node) -> bool:
        for deco in node.decorator_list:
            if _PROFILE_DECORATOR.search(ast.unparse(deco)):
                return True
        for sub in ast.walk(node):
            if isinstance(sub, (ast.With, ast.AsyncWith)):
                for item in sub.items:
                    expr = item.context_expr
                    if isinstance(expr, ast.Call) and _REGION_CALL.search(
                            ast.unparse(expr.func)):
                        return True
        return False

    def _visit_function(self, node):
        self.generic_visit(node)
        if self._profiled(node):
            hook = ast.Name(id=_LINE_HOOK, ctx=ast.Load())
            ast.copy_location(hook, node)
            node.decorator_list.append(hook)
        return node

    visit_FunctionDef = _visit_function
    visit_AsyncFunctionDef = _visit_function


def load_ipython_extension(ipython) -> None:
    """Registers the magics: ``%load_ext spanscope.integrations.ipython_magics``."""
    ipython.register_magics(ScopeMagics)


def unload_ipython_extension(ipython) -> None:
    """Removes the magics again (``%unload_ext``); the recorded runs go with them."""
    manager = ipython.magics_manager
    instance = manager.registry.pop("ScopeMagics", None)
    if instance is None:
        return
    for kind in ("line", "cell"):
        table = manager.magics[kind]
        for magic_name in [n for n, f in table.items()
                           if getattr(f, "__self__", None) is instance]:
            del table[magic_name]
