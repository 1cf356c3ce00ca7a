"""spanscope: a region profiler with a C core.

Python faces over one C core:

* scope-profiler's ``ProfileManager`` (regions, decorator, recursive
  profiling, HDF5 output)::

      from spanscope import ProfileManager
      ProfileManager.setup(file_path="run.h5")
      with ProfileManager.region("solve"):
          ...
      ProfileManager.finalize()

* the same calls as module-level shortcuts: ``spanscope.setup``,
  ``region``, ``profile``, ``finalize``, ``session``, ...
* ``spanscope.read(path)`` to analyse a file.
"""

from spanscope import _ext
from spanscope.profile_manager import ProfileManager, ProfilingRun, RegionStats
from spanscope.profile_manager import Region as LiveRegion

# -- the recording half of scope-profiler 0.7.5's API (issue 12: settings,
# -- sessions, regions, controls); the same objects as ProfileManager's
from spanscope.options import FeatureNotAvailableError
# ProfilingOptions and its groups resolve on first use (__getattr__ below;
# spanscope.options says why)
_OPTION_CLASSES = frozenset({"GPUOptions", "HDF5Options", "MemrayOptions", "ProfilingOptions"})
from spanscope.profile_manager import RegionFactory, RegionHandle

define_region = ProfileManager.define_region
instrument = ProfileManager.instrument
last_results = ProfileManager.last_results
metadata = ProfileManager.metadata
profile_command = ProfileManager.profile_command
profile_script = ProfileManager.profile_script
region_factory = ProfileManager.region_factory
register_opt_in_tag = ProfileManager.register_opt_in_tag
reset = ProfileManager.reset
setup_from_env = ProfileManager.setup_from_env
run = ProfileManager.run
pause = ProfileManager.pause
resume = ProfileManager.resume
sample_every = ProfileManager.sample_every

_RECORDING_NAMES = [
    "FeatureNotAvailableError", "GPUOptions", "HDF5Options", "MemrayOptions",
    "ProfilingOptions", "RegionFactory", "RegionHandle", "define_region", "instrument",
    "last_results", "metadata", "profile_command", "profile_script", "region_factory",
    "register_opt_in_tag", "reset", "setup_from_env", "run", "pause", "resume",
    "sample_every",
]
# -- end of the recording block

__version__ = _ext.version

#: Module-level spellings of the ProfileManager API (the same functions).
setup = ProfileManager.setup
finalize = ProfileManager.finalize
region = ProfileManager.region
profile_region = ProfileManager.profile_region
profile = ProfileManager.profile
session = ProfileManager.session
is_active = ProfileManager.is_active
is_configured = ProfileManager.is_configured
get_region = ProfileManager.get_region
get_all_regions = ProfileManager.get_all_regions
registered_regions = ProfileManager.registered_regions
recorded_regions = ProfileManager.recorded_regions
summary = ProfileManager.summary


def counter(name: str, value: float) -> None:
    """Records one sample of the counter `name` (a time series: memory in
    use, queue depth, loss) in the running session; nothing without one.
    Samples go to the file's /counters group and to timelines as counter
    tracks.  About a lock and a clock read: for samples, not inner loops."""
    _ext.counter(name, value)

# --- scope-profiler's results API (spanscope.results).  spanscope.Region is
# scope-profiler's meaning of the name: the results Region
# (results["step"][0]); the live region class that ProfileManager.region()
# returns is spanscope.LiveRegion (spanscope.profile_manager.Region).
# These names (and the other spanscope.results blocks below) resolve on
# first use (__getattr__): spanscope.results imports numpy and h5py, which a
# recording run never needs, so `import spanscope` and `spanscope run` start
# without them.  `from spanscope import read` works as before.
_RESULTS_LAZY = {
    "CallArrays", "CorruptProfileError", "EventDataUnavailableError", "HDF5SchemaError",
    "IntegrationNotAvailableError", "JSONProfileError", "MPIRegion", "NestingError",
    "ProfilingResults", "Region", "Results", "SummaryDataUnavailable", "TaskInfo", "ThreadInfo",
    "build_call_arrays", "build_call_stack", "build_json_document", "call_stack_children",
    "call_stack_roots", "export_json", "load", "merge_results", "read", "read_h5",
    "read_h5_summary", "read_json", "read_profile", "read_profile_summary",
    "sniff_profile_format", "write_json", "write_profile",
}

_RESULTS_NAMES = [
    "CallArrays", "CorruptProfileError", "EventDataUnavailableError", "HDF5SchemaError",
    "IntegrationNotAvailableError", "JSONProfileError", "LiveRegion", "MPIRegion",
    "NestingError", "ProfilingResults", "Region", "SummaryDataUnavailable", "TaskInfo",
    "ThreadInfo", "build_call_arrays", "build_call_stack", "build_json_document",
    "call_stack_children", "call_stack_roots", "export_json", "load", "merge_results",
    "read_h5", "read_h5_summary", "read_json", "read_profile", "read_profile_summary",
    "sniff_profile_format", "write_json", "write_profile",
]
# --- end of the results API block

__all__ = _RESULTS_NAMES + [
    "ProfileManager", "ProfilingRun", "RegionStats", "Results", "read",
    "setup", "finalize", "region", "profile_region", "profile", "session", "is_active",
    "is_configured", "get_region", "get_all_regions", "registered_regions",
    "recorded_regions", "summary", "counter", "__version__",
] + _RECORDING_NAMES


# --- plots (spanscope.plots; matplotlib, the optional `plot` extra) -----------
# Imported on first use, so that `import spanscope` never imports matplotlib:
# `spanscope.plots` and scope-profiler's plot_* names resolve through it.
_PLOT_NAMES = frozenset({
    "plot_gantt", "plot_flame", "plot_flame_chart", "plot_flame_graph", "plot_durations",
    "plot_duration_histogram", "plot_rank_heatmap", "plot_imbalance",
    "plot_duration_timeseries", "plot_timeline_density", "plot_speedup",
    "plot_scaling_efficiency", "plot_weak_scaling", "plot_weak_scaling_efficiency",
    "plot_callgraph",
})


def __getattr__(name):
    """The names imported on first use: spanscope.plots' (matplotlib),
    spanscope.results' (numpy, h5py), spanscope.results itself and
    spanscope.mpi_wrappers'."""
    # importlib, not "from spanscope import x": that asks this function first
    import importlib
    if name == "plots" or name in _PLOT_NAMES:
        mod = importlib.import_module("spanscope.plots")
        return mod if name == "plots" else getattr(mod, name)
    if name in _OPTION_CLASSES:
        value = getattr(importlib.import_module("spanscope.options"), name)
        globals()[name] = value
        return value
    if name == "mpi_wrappers" or name in _MPI_LAZY:
        mpi_wrappers = importlib.import_module("spanscope.mpi_wrappers")  # binds the attribute
        if name == "mpi_wrappers":
            return mpi_wrappers
        value = getattr(mpi_wrappers, name)
        globals()[name] = value
        return value
    if name == "results" or name in _RESULTS_LAZY:
        mod = importlib.import_module("spanscope.results")  # binds spanscope.results
        if name == "results":
            return mod
        value = getattr(mod, name)
        globals()[name] = value  # the next use is a plain lookup
        return value
    raise AttributeError(f"module 'spanscope' has no attribute {name!r}")


__all__ += ["plots", *sorted(_PLOT_NAMES)]

# --- exports for other tools (spanscope/results/_exports.py, written in C) ---
_RESULTS_LAZY |= {  # from spanscope.results, on first use (above)
    "export_chrome_trace",
    "export_flamegraph_svg",
    "export_prof",
    "export_speedscope",
    "load_prof",
    "to_pstats",
}

__all__ += [
    "export_speedscope", "export_prof", "load_prof", "to_pstats",
    "export_flamegraph_svg", "export_chrome_trace",
]
# --- end of exports ---

# --- scope-profiler's mpi4py wrappers (issue 12 part 1: spanscope/mpi_wrappers.py;
# importing them imports no mpi4py).  They resolve on first use (__getattr__),
# as does setup(profile_mpi_calls=True)'s hook: a run that never names them
# does not import the module (~2 ms of dataclass and class building at every
# start, issue 35 part 7b). ---
_MPI_LAZY = frozenset({
    "MPIRegionMetadata", "ProfiledMPIComm", "ProfiledMPIRequest", "format_mpi_region",
    "message_nbytes", "parse_mpi_region", "profile_mpi4py", "profile_mpi_comm",
})


def _profile_mpi_calls_hook():
    """setup(profile_mpi_calls=True): mpi_wrappers' own hook, which its
    import registers in place of this one."""
    from spanscope import mpi_wrappers
    return mpi_wrappers.profile_mpi4py(lazy=True)


from spanscope.profile_manager import register_run_hook as _register_run_hook  # noqa: E402
_register_run_hook("profile_mpi_calls", _profile_mpi_calls_hook)

__all__ += [
    "MPIRegionMetadata", "ProfiledMPIComm", "ProfiledMPIRequest", "format_mpi_region",
    "message_nbytes", "parse_mpi_region", "profile_mpi4py", "profile_mpi_comm",
]
# --- end of the mpi4py wrappers ---

# --- scope-profiler's analysis names (spanscope.results; plots' statistics helpers) ---
_RESULTS_LAZY |= {  # from spanscope.results, on first use (above)
    "LikwidRegionResult", "PerfEventError", "PerfEventTotals", "collect_file_metadata",
    "create_html_report", "inspect_file", "write_metadata_json",
}

# plots.py's statistics helpers need no matplotlib, but they resolve
# lazily like the plot_* names (plots.py is imported on first use)
_PLOT_NAMES = _PLOT_NAMES | {
    "collect_region_statistics", "write_region_statistics_json",
    "collect_roofline_points", "plot_perf_events", "plot_roofline",
}

__all__ += [
    "LikwidRegionResult", "PerfEventError", "PerfEventTotals", "collect_file_metadata",
    "create_html_report", "inspect_file", "write_metadata_json",
    "collect_region_statistics", "write_region_statistics_json",
    "collect_roofline_points", "plot_perf_events", "plot_roofline",
]
# --- end of the analysis names ---

# --- line profiles (use_line_profiler=True; spanscope.results._lines, docs/line-profiles.md) ---
_RESULTS_LAZY |= {  # from spanscope.results, on first use (above)
    "print_line_profile", "read_line_profile_file", "write_line_profile",
}

__all__ += ["print_line_profile", "read_line_profile_file", "write_line_profile"]
# --- end of line profiles ---


# --- %load_ext spanscope: the notebook magics (spanscope.integrations.ipython_magics),
# imported only when IPython loads them ---
def load_ipython_extension(ipython):
    """``%load_ext spanscope``: scope-profiler's magics (%%scope, %scope_timeit,
    ...), spanscope.integrations.ipython_magics."""
    from spanscope.integrations.ipython_magics import load_ipython_extension as load
    load(ipython)


def unload_ipython_extension(ipython):
    """``%unload_ext spanscope``."""
    from spanscope.integrations.ipython_magics import unload_ipython_extension as unload
    unload(ipython)
