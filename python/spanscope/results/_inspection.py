"""scope-profiler 0.7.5's file inspection and HTML-report functions over
spanscope's C readers: ``inspect_file``, ``collect_file_metadata``,
``write_metadata_json`` (scope_profiler.inspection) and
``create_html_report`` (scope_profiler.html_report).

Nothing here parses a file: the results come from the C reader
(``read_profile`` / ``read_profile_summary``: ``sps_file_open`` and
``sps_file_open_index``), the page from the C HTML writer
(``sps_html_write_files``, with the report's options).  What this module
adds is scope-profiler's layout of the printed overview and its return
shapes.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from spanscope import _ext
from spanscope._base.atomic import write_text_replacing
from spanscope.results._profiling import ProfilingResults
from spanscope.results._likwid import print_likwid_tables
from spanscope.results._table import (NAME_COLS, terminal_text, needs_distributions, print_region_table, region_rows)
from spanscope.results._jsonio import (FORMAT_HTML, FORMAT_JSON, profile_format,
                                       read_profile, read_profile_summary, write_h5_profile,
                                       write_json)

__all__ = ["collect_file_metadata", "create_html_report", "inspect_file",
           "write_metadata_json", "write_profile"]

# Metadata is printed in scope-profiler's groups, in its order: the fields
# that identify a run first, the environment variables last; a key no group
# names goes to "Other", so nothing recorded is left out.
_RUN_FIELDS = ("timestamp", "start_time_ns", "finalize_time_ns", "user", "hostname",
               "working_directory", "scope_profiler_version", "python_version")
_SYSTEM_FIELDS = ("platform", "uname", "chip_information")
_PARALLELISM_FIELDS = ("mpi_size", "num_nodes", "omp_num_threads", "total_cores")
_SLURM_PREFIXES = ("SLURM_", "SLURMD_")
_VALUE_WIDTH = 96  # characters of a value shown unless full=True
_ELLIPSIS = " […]"


def _clip(value: str, full: bool) -> str:
    if full or len(value) <= _VALUE_WIDTH:
        return value
    return value[: _VALUE_WIDTH - len(_ELLIPSIS)] + _ELLIPSIS


def _metadata_sections(metadata: dict):
    """(title, [(key, value)]) sections of metadata and its "modules"
    list (None when absent); every key lands in exactly one section."""
    rest = dict(metadata)

    def take(names):
        return [(n, rest.pop(n)) for n in names if n in rest]

    sections = [("Run", take(_RUN_FIELDS)), ("System", take(_SYSTEM_FIELDS)),
                ("Parallelism", take(_PARALLELISM_FIELDS))]
    modules = rest.pop("modules", None)
    sections.append(("Slurm", sorted((k, rest.pop(k)) for k in list(rest)
                                     if str(k).startswith(_SLURM_PREFIXES))))
    sections.append(("Environment", sorted((k, rest.pop(k)) for k in list(rest)
                                           if str(k).isupper())))
    sections.append(("Other", sorted(rest.items())))
    return sections, modules


def _text(value) -> str:
    """A metadata value as printed: numpy arrays as their list."""
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if isinstance(value, bytes):
        value = value.decode("utf-8", errors="replace")
    return str(value)


def _print_metadata(metadata: dict, full: bool, stream) -> None:
    if not metadata:
        print("Metadata\n  (none recorded)\n", file=stream)
        return
    sections, modules = _metadata_sections(metadata)
    width = min(max(len(str(k)) for k in metadata), NAME_COLS)
    print("Metadata", file=stream)
    for title, entries in sections:
        if not entries:
            continue
        print(f"  {title}", file=stream)
        for key, value in entries:
            print(f"    {terminal_text(key, NAME_COLS):<{width}} : "
                  f"{terminal_text(_clip(_text(value), full))}", file=stream)
    if modules is not None:
        mods = modules.tolist() if isinstance(modules, np.ndarray) else list(
            [modules] if isinstance(modules, str) else modules)
        print(f"  Modules ({len(mods)})", file=stream)
        for m in mods:
            print(f"    {terminal_text(_text(m), NAME_COLS)}", file=stream)
        if not mods:
            print("    (none loaded)", file=stream)
    print(file=stream)


def _print_sources(results: ProfilingResults, names, stream) -> None:
    """The captured call-site source of each region of names; an unknown
    name or one without source gets a line saying so (printed, so that one
    bad name does not stop the rest)."""
    print(f"Source ({len(names)})", file=stream)
    for name in names:
        if name not in results:
            print(terminal_text(f"  {name!r}: no such region. Available regions: "
                                f"{results.region_names}", 4 * NAME_COLS), file=stream)
            continue
        region = results.get_region(name)
        if not region.has_source or region.source_text is None:
            print(f"  {terminal_text(name, NAME_COLS)}: source not captured", file=stream)
            continue
        print(f"  {terminal_text(name, NAME_COLS)}  "
              f"({terminal_text(region.source_file, NAME_COLS)}:{region.source_lineno})",
              file=stream)
        for line in region.source_text.rstrip("\n").splitlines():
            # a tab of the source stays one column of space, not '?'
            print(f"    {terminal_text(line.replace(chr(9), '    '))}", file=stream)
    print(file=stream)


def _counter_groups(results: ProfilingResults) -> list[str]:
    """Which integration groups of the file (the C reader's rank_groups;
    empty for JSON or in-memory results) inspect names without printing
    their tables: all but likwid (printed) and line_profile (as in
    scope-profiler, `spanscope line-profile` prints those)."""
    model = getattr(results, "model", None)
    groups = set(getattr(results, "_rank_groups", ()) or ())
    if model is not None:
        groups |= set(model.rank_groups)
    groups.discard("likwid")  # read: its tables are printed (results/_likwid.py)
    # read (ProfilingResults.line_profile; `spanscope line-profile` prints
    # them), not part of inspect's output, as in scope-profiler
    groups.discard("line_profile")
    return sorted(groups)


def inspect_file(file_path, include=None, exclude=None, ranks=None, sort: str = "start",
                 show_metadata: bool = True, show_regions: bool = True, full: bool = False,
                 source: list | None = None, columns=None, percentage_mode: str = "coverage",
                 stream=None) -> None:
    """Prints a summary of one profile (.h5 or scope-profiler .json), as
    scope-profiler's inspect_file does: a headline (ranks, regions, size in
    MiB, wall clock, setup-to-finalize time), the metadata by section
    (values clipped to 96 characters unless full), the region table
    (print_summary's boxed table, _results_table, titled "Regions (N)" for
    its N call-path rows, with the file's hints: include/exclude regular
    expressions, ranks, sort, columns, percentage_mode) and the captured source of the
    regions named in source.  show_regions=False reads the file's index
    alone (no events).  LIKWID results get their counter tables (one per
    rank and event group); a line names the file's perf-event groups
    instead of their tables (Results.perf_events and `spanscope report`
    show them; `spanscope line-profile` prints line profiles).
    Errors as read_profile (FileNotFoundError, CorruptProfileError) and
    print_summary (ValueError for an unknown sort key, column or mode)."""
    stream = sys.stdout if stream is None else stream
    results = (read_profile(file_path) if show_regions else
               read_profile_summary(file_path, include_likwid=False,
                                    include_line_profile=False))
    path = Path(results.file_path)
    size_mib = path.stat().st_size / 1024 ** 2
    timed = any(r.has_timing for r in results.get_regions())
    headline = (f"{results.num_ranks} rank(s), {len(results.get_regions())} region(s), "
                f"{size_mib:.2f} MiB")
    if timed:
        headline += f", {results.time_span:.6g} s wall clock"
    if results.total_time is not None:
        headline += f", {results.total_time:.6g} s total (setup to finalize)"
    print("=" * 78, file=stream)
    print(terminal_text(f"{results.label} - {path}" if results.label is not None else path,
                        2 * NAME_COLS), file=stream)
    print(headline, file=stream)
    print("=" * 78 + "\n", file=stream)
    if show_metadata:
        _print_metadata(results.metadata, full=full, stream=stream)
    if show_regions:
        rows = region_rows(results, include=include, exclude=exclude, ranks=ranks, sort=sort,
                           percentage_mode=percentage_mode,
                           need_distributions=needs_distributions(columns, sort))
        print_region_table(rows, title=f"Regions ({len(rows)})", stream=stream,
                           columns=columns, percentage_mode=percentage_mode, file_path=path)
        print_likwid_tables(results, include=include, exclude=exclude, ranks=ranks,
                            stream=stream)  # one per rank and LIKWID event group
        groups = _counter_groups(results)
        if groups:
            print(f"\n(not shown here: the file's {', '.join(groups)} data; "
                  "Results.perf_events and `spanscope report` show it)", file=stream)
    if source:
        _print_sources(results, source, stream)


def _json_safe(value):
    """A metadata value json.dump accepts (numpy scalars and arrays,
    bytes, tuples made plain)."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return [_json_safe(v) for v in value.tolist()]
    if isinstance(value, (list, tuple)):
        return [_json_safe(v) for v in value]
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return value


def collect_file_metadata(profiling_data) -> dict:
    """The run metadata of one or more profiles (ProfilingResults, paths,
    or a sequence of either), as scope-profiler returns it:
    ``{"files": [{"file_path": absolute path, "num_ranks": n,
    "metadata": {...}}]}`` with JSON-ready values.  Paths are read by the
    C reader's index alone (read_profile_summary: no events)."""
    if isinstance(profiling_data, (ProfilingResults, str, os.PathLike)):
        profiling_data = [profiling_data]
    files = []
    for item in profiling_data:
        res = item if isinstance(item, ProfilingResults) else read_profile_summary(
            item, include_likwid=False, include_line_profile=False)
        files.append({"file_path": str(Path(res.file_path).resolve()),
                      "num_ranks": res.num_ranks,
                      "metadata": {k: _json_safe(v) for k, v in res.metadata.items()}})
    return {"files": files}


def write_metadata_json(profiling_data, filepath) -> dict:
    """Writes collect_file_metadata(profiling_data) to filepath as indented
    JSON (parent folders made) and returns it."""
    payload = collect_file_metadata(profiling_data)
    out = Path(filepath)
    out.parent.mkdir(parents=True, exist_ok=True)
    write_text_replacing(out, json.dumps(payload, indent=2) + "\n")
    return payload


# --- create_html_report: the C page writer ---------------------------------

_SCALING_MODES = ("strong", "weak", "both")
_SPEEDUP_AXES = ("auto", "ranks", "nodes", "threads", "cores")
_PAGE_INPUTS = (".h5", ".hdf5", ".json", ".json.gz", ".pftrace")


def _run_path(item, scratch: str, index: int) -> Path | None:
    """The recording file behind one run of create_html_report: a path as
    given, the file a ProfilingResults was read from, or -- for results with
    no file behind them (built in memory, merged, filtered) -- their JSON
    profile written into the scratch directory.  None for results of a rank
    other than 0 (rank 0 writes the report)."""
    if isinstance(item, (str, os.PathLike)):
        p = Path(item)
    elif isinstance(item, ProfilingResults):
        if not item.is_root:
            return None
        model = getattr(item, "model", None)
        if model is not None:
            p = Path(model.path)
        else:
            p = Path(item.file_path) if item.file_path else None
            if p is None or not p.is_file() or not str(p).endswith(_PAGE_INPUTS):
                p = write_h5_profile(item, Path(scratch) / f"run-{index}.h5")
    else:
        raise TypeError("create_html_report takes ProfilingResults or paths of recordings, "
                        f"not {type(item).__name__}")
    if not p.exists():
        raise FileNotFoundError(f"No profile at {str(p)!r}")
    return p


def _run_label(item, path: Path) -> str:
    """scope-profiler's display_label: the run's label, else the file's stem
    (a path is read for its label by the C reader's index alone)."""
    if not isinstance(item, ProfilingResults):
        if path.suffix == ".pftrace":  # a trace has no label attribute
            return path.stem
        item = read_profile_summary(path, include_likwid=False, include_line_profile=False)
    return item.label or path.stem


def _unique(labels: list[str]) -> list[str]:
    seen: dict[str, int] = {}
    out = []
    for lab in labels:
        seen[lab] = seen.get(lab, 0) + 1
        out.append(lab if seen[lab] == 1 else f"{lab} ({seen[lab]})")
    return out


def create_html_report(profiling_data, filepath, *, include=None, exclude=None,
                       ranks: list[int] | None = None, sort: str = "start", columns=None,
                       charts_cdn: bool = False, include_charts: bool = True,
                       individual_reports: bool = True, scaling: str = "both",
                       speedup_x: str = "auto") -> Path:
    """Writes a self-contained HTML report (no network) and returns its
    Path, with scope-profiler's signature; the page is the C writer's
    (``sps_html_write_files``, the page of ``spanscope html``).  One run (a
    path or ProfilingResults of a .h5/.json/.pftrace file): timeline,
    legend, per-region bars, the summary table.  Several: the comparison
    page (the first run the baseline) with, when the runs differ in size,
    the scaling section (strong/weak speedup and efficiency over
    ``speedup_x``) and, with individual_reports, each run's own page as
    ``<stem>-<index>-<label>.html`` beside it (the comparison page does not
    link them).  Non-root results (MPI ranks other than 0) are skipped; none
    left: nothing is written and the Path is returned.

    include/exclude: regular expressions matched at the region name's
    start (scope-profiler's re.match; POSIX extended syntax in C), a str
    or a list; ranks: the ranks shown; sort and columns: the summary
    table's (print_summary's names, plus "self"); include_charts=False:
    the tables alone.  A pattern that matches nothing or a rank a run
    lacks gives a page that says so, as scope-profiler writes one.
    charts_cdn is accepted and changes nothing: the page loads nothing
    either way (scope-profiler's CDN is for its charting library; this
    page has none to leave out).  ValueError for an unknown scaling mode,
    sort key, column or (comparing runs) speedup_x, or a named axis a run
    did not record."""
    if scaling not in _SCALING_MODES:
        raise ValueError(f"scaling must be one of {', '.join(map(repr, _SCALING_MODES))}, "
                         f"not {scaling!r}.")
    items = ([profiling_data] if isinstance(profiling_data, (ProfilingResults, str, os.PathLike))
             else list(profiling_data))
    if not items:
        raise ValueError("At least one profiling result is required.")
    comparison = len(items) > 1
    if comparison and speedup_x not in _SPEEDUP_AXES:  # checked for a comparison only, as there
        raise ValueError(f"speedup_x must be one of {', '.join(_SPEEDUP_AXES)}, "
                         f"got {speedup_x!r}")
    import tempfile
    with tempfile.TemporaryDirectory(prefix="spanscope-report-") as scratch:
        runs = [(it, p) for i, it in enumerate(items)
                if (p := _run_path(it, scratch, i)) is not None]
        return _write_report(runs, Path(filepath), include, exclude, ranks, sort, columns,
                             include_charts, charts_cdn, scaling, speedup_x,
                             individual_reports)


def _write_report(runs, out: Path, include, exclude, ranks, sort, columns, include_charts,
                  charts_cdn, scaling, speedup_x, individual_reports) -> Path:
    """create_html_report's pages for runs, a list of (item, recording path)."""
    if not runs:
        return out  # not this rank's report: rank 0 writes it
    out.parent.mkdir(parents=True, exist_ok=True)
    page = dict(include=_str_list(include), exclude=_str_list(exclude),
                ranks=None if ranks is None else [int(r) for r in
                                                  ([ranks] if isinstance(ranks, int) else ranks)],
                sort=sort, columns=_str_list(columns), charts=bool(include_charts),
                charts_cdn=bool(charts_cdn))
    if len(runs) == 1:
        _ext.html_write([os.fspath(runs[0][1])], os.fspath(out), **page)
        return out
    labels = [_run_label(it, p) for it, p in runs]
    _ext.html_write([os.fspath(p) for _, p in runs], os.fspath(out), labels=_unique(labels),
                    scaling=scaling, speedup_x=speedup_x, **page)
    if individual_reports:
        for i, ((_, p), lab) in enumerate(zip(runs, labels)):
            _ext.html_write([os.fspath(p)], os.fspath(_report_file_name(out, i, lab)), **page)
    return out


def _str_list(v) -> list[str] | None:
    """A pattern or column option as the extension takes it: None, or a
    list of str (one str: a list of it)."""
    if v is None:
        return None
    return [v] if isinstance(v, str) else [str(x) for x in v]


def _report_file_name(out: Path, index: int, label: str) -> Path:
    """scope-profiler's name of run index's own page beside out."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", str(label)).strip("-.") or "run"
    return out.with_name(f"{out.stem}-{index}-{slug}.html")


def write_profile(results: ProfilingResults, file_path, **kwargs) -> Path:
    """Writes results in the format the name asks for, as scope-profiler's
    write_profile: JSON (.json, .json.gz; write_json's keywords), the HTML
    report (.html, .htm; create_html_report's keywords), HDF5 otherwise (a
    copy of the .h5 the results were read from, else their calls written
    in C, schema 3; no keywords).  Returns the Path written."""
    kind = profile_format(file_path)
    if kind == FORMAT_JSON:
        return write_json(results, file_path, **kwargs)
    if kind == FORMAT_HTML:
        return create_html_report(results, file_path, **kwargs)
    if kwargs:
        raise TypeError(f"write_profile(..., {str(file_path)!r}): HDF5 takes no options, "
                        f"got {sorted(kwargs)}")
    return write_h5_profile(results, file_path)
