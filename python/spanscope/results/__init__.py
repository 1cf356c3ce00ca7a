"""Reading and analysing recordings: every view of a file here reads the C
reader's one model (``sps_file_open``) and the one fold's parents and self
times; none re-derives nesting.

Two faces of the same model:

* spanscope's own: ``read(path)`` -> :class:`Results` (numpy arrays per
  region and rank, the report table);
* scope-profiler 0.7.5's results API: ``read_h5(path)`` ->
  :class:`ProfilingResults` of :class:`MPIRegion` / :class:`Region`, its
  JSON profile format, exports for other tools, and ``inspect`` / the HTML
  report.

Modules, each importing only those above it in this list: ``_samples``
(stack samples: Results.samples), ``_model``
(Results), ``_errors``, ``_regions``, ``_calls`` (call stacks), ``_table``
(scope-profiler's summary tables), ``_lines`` (line profiles: records,
their HDF5 groups and tables), ``_profiling`` (ProfilingResults,
read_h5, merge_results), ``_jsonio`` (the JSON profile), ``_line_cli``
(``spanscope line-profile``), ``_counters``,
``_exports`` (speedscope, pstats, flame SVG, Chrome trace), ``_inspection``
(inspect and the HTML report), ``_native`` (scope-profiler's native_trace:
the ``.spt`` / per-rank ``.h5`` files of its C and Fortran APIs, and the
sources that build a C or Fortran program against spanscope).
"""

from spanscope.results._samples import SampleLine, Samples, read_stack_samples
from spanscope.results._model import NO_ROW, EventArrays, RegionData, Results, read
from spanscope.results._errors import (CorruptProfileError, EventDataUnavailableError,
                                       HDF5SchemaError, IntegrationNotAvailableError,
                                       NestingError, SummaryDataUnavailable)
from spanscope.results._regions import MPIRegion, Region, TaskInfo, ThreadInfo
from spanscope.results._calls import (CallArrays, build_call_arrays, build_call_stack,
                                      call_stack_children, call_stack_roots)
from spanscope.results._profiling import (ProfilingResults, merge_results, read_h5,
                                          read_h5_summary)
from spanscope.results._jsonio import (JSONProfileError, build_json_document, export_json,
                                       load, read_json, read_profile, read_profile_summary,
                                       sniff_profile_format, write_json)
from spanscope.results._counters import LikwidRegionResult, PerfEventError, PerfEventTotals
from spanscope.results._likwid import (LikwidDataError, likwid_tables, parse_marker_file,
                                      print_likwid_table, print_likwid_tables, read_likwid_file,
                                      read_marker_file, write_likwid_results)
from spanscope.results._lines import (LineProfileDataError, format_line_profile,
                                      read_line_profile_file, write_line_profile)
from spanscope.results._line_cli import print_line_profile
from spanscope.results._exports import (export_chrome_trace, export_flamegraph_svg,
                                        export_prof, export_speedscope, load_prof, to_pstats)
from spanscope.results._inspection import (collect_file_metadata, create_html_report,
                                           inspect_file, write_metadata_json,
                                           write_profile)
from spanscope.results._native import (TraceFormatError, c_include_dir, c_source_path,
                                       convert_traces, find_traces, fortran_source_path,
                                       load_traces, read_trace)
from spanscope.results._memray import (MemrayAllocationTracker, MemrayCaptureError,
                                       MemraySite, MemraySummary, memray_capture_path,
                                       memray_summary)

__all__ = [
    # spanscope's model
    "EventArrays", "NO_ROW", "RegionData", "Results", "read",
    # stack samples (with_samples; results/_samples.py, docs/sampling.md)
    "SampleLine", "Samples", "read_stack_samples",
    # scope-profiler's results API
    "CallArrays", "CorruptProfileError", "EventDataUnavailableError", "HDF5SchemaError",
    "IntegrationNotAvailableError", "MPIRegion", "NestingError", "ProfilingResults",
    "Region", "SummaryDataUnavailable", "TaskInfo", "ThreadInfo", "build_call_arrays",
    "build_call_stack", "call_stack_children", "call_stack_roots", "merge_results",
    "read_h5", "read_h5_summary",
    "JSONProfileError", "build_json_document", "export_json", "load", "read_json",
    "read_profile", "read_profile_summary", "sniff_profile_format", "write_json",
    "write_profile",
    "LikwidRegionResult", "PerfEventError", "PerfEventTotals",
    # LIKWID (scope-profiler's likwid_data and summary tables; results/_likwid.py)
    "LikwidDataError", "likwid_tables", "parse_marker_file", "print_likwid_table",
    "print_likwid_tables", "read_likwid_file", "read_marker_file", "write_likwid_results",
    # line profiles (use_line_profiler; results/_lines.py, docs/line-profiles.md)
    "LineProfileDataError", "format_line_profile", "print_line_profile",
    "read_line_profile_file", "write_line_profile",
    "export_chrome_trace", "export_flamegraph_svg", "export_prof", "export_speedscope",
    "load_prof", "to_pstats",
    "collect_file_metadata", "create_html_report", "inspect_file", "write_metadata_json",
    # scope-profiler's native_trace (its other names: spanscope.results._native)
    "TraceFormatError", "c_include_dir", "c_source_path", "convert_traces", "find_traces",
    "fortran_source_path", "load_traces", "read_trace",
    # memray captures (use_memray; docs/memray.md)
    "MemrayAllocationTracker", "MemrayCaptureError", "MemraySite", "MemraySummary",
    "memray_capture_path", "memray_summary",
]
