"""The MCP server (scope-profiler 0.7.5's ``scope_profiler.mcp_server.server``):
registers the plain functions of :mod:`spanscope.integrations.mcp_server.tools`
with the ``mcp`` SDK's FastMCP, under the same names and arguments.  No
profiling, reading or arithmetic lives here.

Run it on stdio with ``python -m spanscope.integrations.mcp_server``; an MCP
client (Claude Code, ...) is configured with that command.  Needs the
optional ``mcp`` extra: ``pip install "spanscope[mcp]"``.  Without it,
:func:`create_server` raises ImportError naming the extra and :func:`main`
prints that line and returns 2.
"""

from __future__ import annotations

import sys

from spanscope.integrations.mcp_server import tools

#: The server's name, as MCP clients show it.
SERVER_NAME = "spanscope"

_MISSING = ("the MCP server needs the 'mcp' package (the optional 'mcp' extra): "
            "pip install 'spanscope[mcp]'")

_INSTRUCTIONS = (
    "Tools for inspecting and comparing spanscope / scope-profiler profiling files "
    "(HDF5 .h5, or scope-profiler's .json), running a Python script profiled, and "
    "drawing plots. Typical workflow: run_profile (or inspect_profile on an existing "
    "file) -> edit code -> run_profile again -> compare_profiles; keep only changes "
    "that make the candidate faster. Every number comes from spanscope's reader.")


def _fastmcp():
    try:
        from mcp.server.fastmcp import FastMCP
    except ImportError as exc:
        raise ImportError(f"{_MISSING} ({exc})") from exc
    return FastMCP


def create_server():
    """A FastMCP server with every tool of ``tools.TOOL_NAMES`` registered;
    not started.  Each call gives a new, independent server.  A tool's
    ToolError reaches the client as the call's error message (isError)."""
    FastMCP = _fastmcp()
    server = FastMCP(SERVER_NAME, instructions=_INSTRUCTIONS)

    @server.tool()
    def inspect_profile(file_path: str, include: list[str] | None = None,
                        exclude: list[str] | None = None, ranks: list[int] | None = None,
                        sort: str = "total", top_n: int | None = 20,
                        full_metadata: bool = False) -> dict:
        """Summarize one profiling file (.h5 or scope-profiler .json): runtime, ranks,
        per-region statistics and run metadata, as structured JSON.

        Use this to answer "where did the time go?" for one run.

        Args:
            file_path: Path to the profile (e.g. profiling_data.h5).
            include: Only regions whose name matches one of these regular expressions.
            exclude: Skip regions whose name matches one of these regular expressions.
            ranks: Restrict the statistics to these MPI ranks (default: all).
            sort: Region order: "total" (default), "calls", "avg", "min", "max", "first",
                "last", "std", "p50", "p95", "p99", "imbalance", "exclusive" (all
                descending), "start" (first call first) or "name".
            top_n: Maximum regions returned (default 20; 0 or null: all). The reply
                also says how many matched.
            full_metadata: Also return environment variables and unrecognized
                metadata fields in full (default: only their counts).

        Returns:
            file_path, label, num_ranks, num_regions, total_time_seconds,
            wall_clock_seconds, metadata (grouped: run, system, parallelism, slurm,
            modules), regions (sort, returned, total_matching_filter, items: name,
            calls, total, exclusive, avg, min, max, first, last, std, p50, p95, p99,
            imbalance, ... in seconds; when the run recorded memory or counters per
            span, each item also has values: calls, own (the region's spans,
            children included) and self (outside its children), each a map of value
            name to number over the selected ranks: alloc_bytes, free_bytes, allocs,
            frees, peak_bytes (the largest rise of live bytes above a span's start)
            and each perf counter's count; null for a region without values),
            likwid (null without LIKWID data; else ranks, region_count_total,
            region_count_returned, regions: rank, region, group, call_count, metrics
            averaged over the hardware threads; ranks and top_n apply), perf_events (null without
            perf-event totals; else ranks, region_count_total, region_count_returned,
            regions: rank, region, calls, events {name: count summed over the calls},
            metrics {ipc, cache-misses-per-ki, cache-miss-rate, branch-miss-rate as
            the events allow}; include, exclude, ranks and top_n apply), line_profile
            (null without line profiles; else ranks, record_count_total,
            record_count_returned, records: rank, region, function, filename,
            first_lineno, lines, total_seconds, hot_lines [line, hits, seconds, percent,
            source]; include, exclude, ranks and top_n apply), and not_read (only when
            the file holds a group this reader does not know).
        """
        return tools.inspect_profile(file_path, include=include, exclude=exclude,
                                     ranks=ranks, sort=sort, top_n=top_n,
                                     full_metadata=full_metadata)

    @server.tool()
    def compare_profiles(baseline_path: str, candidate_path: str,
                         include: list[str] | None = None, exclude: list[str] | None = None,
                         ranks: list[int] | None = None, metric: str = "total",
                         threshold_pct: float = 5.0, top_n: int | None = 20) -> dict:
        """Compare two profiling files and report whether the candidate got faster.

        Point baseline_path at the run before a change and candidate_path at the run
        after it. All arithmetic (overall change, per-region deltas, regressions and
        improvements) is done here: do not infer it from two inspect_profile calls.

        Args:
            baseline_path: The "before" profile.
            candidate_path: The "after" profile.
            include: Only regions whose name matches one of these regular expressions.
            exclude: Skip regions whose name matches one of these regular expressions.
            ranks: Restrict the comparison to these MPI ranks (default: all).
            metric: Per-region statistic compared: "total" (default), "avg", "min",
                "max", "p50", "p95", "p99", "imbalance", "calls", "gpu_total",
                "gpu_avg".
            threshold_pct: Percent change above which a region is a regression (or
                below whose negative an improvement); default 5.
            top_n: Maximum entries in regions, regressions and improvements (default
                20; 0 or null: all).

        Returns:
            baseline and candidate headlines, overall (absolute_diff_seconds,
            relative_change_pct, speedup, faster), metric, threshold_pct, regions
            (name, baseline, candidate, delta, pct), regressions, improvements.
        """
        return tools.compare_profiles(baseline_path, candidate_path, include=include,
                                      exclude=exclude, ranks=ranks, metric=metric,
                                      threshold_pct=threshold_pct, top_n=top_n)

    @server.tool()
    def run_profile(script_path: str, script_args: list[str] | None = None,
                    only_user_code: bool = True, buffer_limit: int = 1024,
                    output_path: str | None = None, timeout_seconds: float = 300.0,
                    top_n: int | None = 20) -> dict:
        """Run a Python script under spanscope and summarize the profile it writes.

        The same as `spanscope run SCRIPT` then inspect_profile on its file. The
        script runs in its own process (never inside this server), with a timeout
        and without a shell; a non-zero exit, a timeout or a missing script is a
        tool error.

        Args:
            script_path: The Python script to run.
            script_args: Its arguments, one string each (sys.argv[1:]; no shell).
            only_user_code: True (default): the script's own regions; False: trace
                every function, libraries' too.
            buffer_limit: Accepted for compatibility (spanscope's buffers grow).
            output_path: Where to write the profile (default: a new temp folder);
                keep it to compare against later.
            timeout_seconds: Kill the script after this many seconds (default 300).
            top_n: Maximum regions in the summary (default 20; 0 or null: all).

        Returns:
            inspect_profile's summary of the new file, plus stdout_tail (the last
            2000 characters the script printed).
        """
        return tools.run_profile(script_path, script_args=script_args,
                                 only_user_code=only_user_code, buffer_limit=buffer_limit,
                                 output_path=output_path, timeout_seconds=timeout_seconds,
                                 top_n=top_n)

    @server.tool()
    def run_benchmark(config_path: str, label: str = "candidate") -> dict:
        """Run a declarative TOML benchmark (repeated profiled runs and a correctness
        command) and return its JSON manifest: medians, variance, profile paths and
        whether the correctness gate passed. Needs spanscope's benchmark workflow."""
        return tools.run_benchmark(config_path, label=label)

    @server.tool()
    def compare_benchmarks(baseline_path: str, candidate_path: str) -> dict:
        """Compare two benchmark manifests (from run_benchmark) and return an explicit
        keep/reject decision for the candidate. Needs spanscope's benchmark workflow."""
        return tools.compare_benchmarks(baseline_path, candidate_path)

    @server.tool()
    def plot_profile(file_paths: list[str] | str, plot_type: str = "gantt",
                     output_dir: str | None = None, include: list[str] | None = None,
                     exclude: list[str] | None = None, ranks: list[int] | None = None,
                     backend: str = "matplotlib", x_field: str | None = None) -> dict:
        """Draw one figure of one or more profiling files and return the file's path.

        Prefer inspect_profile / compare_profiles for reasoning; use this when a human
        will look at the picture. Needs the 'plot' extra (matplotlib).

        Args:
            file_paths: One path or a list of paths; "speedup" needs two or more.
            plot_type: "gantt", "flame_chart", "flame_graph", "durations",
                "timeseries" or "speedup" ("flame": the old name of flame_chart).
            output_dir: Folder for the figure (default: a new temp folder).
            include: Only regions whose name matches one of these regular expressions.
            exclude: Skip regions whose name matches one of these regular expressions.
            ranks: Only these MPI ranks (default: all).
            backend: "matplotlib" (default, .png) or "plotly" (.html).
            x_field: speedup only: "num_ranks" (default), "num_nodes",
                "omp_num_threads", "total_cores" or another metadata field.

        Returns:
            plot_type, backend and paths (the files written).
        """
        return tools.plot_profile(file_paths, plot_type=plot_type, output_dir=output_dir,
                                  include=include, exclude=exclude, ranks=ranks,
                                  backend=backend, x_field=x_field)

    return server


def main(argv: list[str] | None = None) -> int:
    """Serves MCP on stdio until the client closes it (the console entry of
    ``python -m spanscope.integrations.mcp_server``).  Returns 2 with one
    line on stderr when the ``mcp`` package is missing, 2 for arguments
    (the server takes none but --help)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv in (["-h"], ["--help"]):
        sys.stdout.write("usage: python -m spanscope.integrations.mcp_server\n\n"
                         "Serves spanscope's MCP tools on stdio: "
                         + ", ".join(tools.TOOL_NAMES) + ".\n")
        return 0
    if argv:
        sys.stderr.write(f"spanscope-mcp: unexpected arguments {argv!r} "
                         "(the server takes none; it talks MCP on stdio)\n")
        return 2
    try:
        server = create_server()
    except ImportError as exc:
        sys.stderr.write(f"spanscope-mcp: {exc}\n")
        return 2
    server.run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
