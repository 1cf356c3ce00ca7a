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
from spanscope.results import Results, read

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

# --- scope-profiler's results API (issue 12 part 4: _results_api.py and
# _results_json.py).  spanscope.Region is scope-profiler's meaning of the
# name: the results Region (results["step"][0]); the live region class that
# ProfileManager.region() returns is spanscope.LiveRegion
# (spanscope.profile_manager.Region).
from spanscope._results_api import (  # noqa: E402
    CallArrays, CorruptProfileError, EventDataUnavailableError, HDF5SchemaError,
    IntegrationNotAvailableError, MPIRegion, NestingError, ProfilingResults, Region,
    SummaryDataUnavailable, TaskInfo, ThreadInfo, build_call_arrays, build_call_stack,
    call_stack_children, call_stack_roots, merge_results, read_h5, read_h5_summary,
)
from spanscope._results_json import (  # noqa: E402
    JSONProfileError, build_json_document, export_json, load, read_json, read_profile,
    read_profile_summary, sniff_profile_format, write_json, write_profile,
)

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
]
