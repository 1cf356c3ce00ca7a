"""scope-profiler's ``ProfileManager`` API on spanscope's C core.

Everything that runs per call lives in the C extension (``spanscope._ext``):
``Region.__enter__``/``__exit__``, the decorator's wrapper, the recursive
tracer, and the lookup ``ProfileManager.region(name)`` (a C object that
finds a known name in the registry without running Python).  This package
gives the API its shape, one module per job, each importing only those
before it:

* ``_likwid``: the LIKWID side of a ``use_likwid=True`` run (pylikwid's
  markers around each region call; the results stored at finalize);
* ``_lines``: the line_profiler side of a ``use_line_profiler=True`` run
  (one ``LineProfiler`` per region, switched on and off by the C core's call
  hooks; its records stored at finalize; ``run --line-profile --recursive``);
* ``_regions``: the live Region, handles, tags, @profile, scoped metadata,
  source capture, registry queries;
* ``_tasks``: asyncio tasks and threads as lanes (ConcurrencyTracker,
  lane_ids; track_async);
* ``_session``: setup, finalize, session(), pause and sampling, reset;
* ``_scripts``: run, profile_script, run_script, profile_command,
  setup_from_env.

``ProfileManager`` is their three mixins over one set of class attributes
(the process's session state).  Settings come from ``spanscope.options``.
"""

from __future__ import annotations

import threading
from contextvars import ContextVar

from spanscope import _ext
from spanscope.profile_manager._regions import (AggregateProfileRegion, BaseProfileRegion,
                                                CUDATimingNVTXProfileRegion,
                                                CUDATimingProfileRegion,
                                                DisabledProfileRegion, FullProfileRegion,
                                                LineProfilerRegion, NVTXProfileRegion,
                                                Region, RegionFactory,
                                                RegionHandle, RegionStats,
                                                ThreadedProfileRegion, TimeOnlyProfileRegion,
                                                _RegionsMixin)
from spanscope.profile_manager._session import (ProfilingRun, RunConfig, _SessionMixin,
                                                register_run_hook)
from spanscope.profile_manager._scripts import _ScriptsMixin
from spanscope.profile_manager._tasks import ConcurrencyTracker, lane_ids

__all__ = ["ProfileManager", "ProfilingRun", "Region", "RegionStats", "RegionHandle",
           "RegionFactory", "RunConfig", "register_run_hook",
           # scope-profiler's region classes: kinds of the live Region per session mode
           "BaseProfileRegion", "DisabledProfileRegion", "TimeOnlyProfileRegion",
           "ThreadedProfileRegion", "AggregateProfileRegion", "FullProfileRegion",
           "LineProfilerRegion", "NVTXProfileRegion", "CUDATimingProfileRegion",
           "CUDATimingNVTXProfileRegion",
           # threads and asyncio tasks as lanes
           "ConcurrencyTracker", "lane_ids"]


class ProfileManager(_SessionMixin, _RegionsMixin, _ScriptsMixin):
    """The profiling session of this process (class-level, like scope-profiler's)."""

    _file_path = None          # the HDF5 file finalize writes (None: none)
    _requested_output = None   # output= when it names .json/.html
    _output_kind = "h5"
    _configured = False
    _deactivated = False
    _finalized_since_setup = False
    _auto_finalize_cb = None
    _last_results = None
    _settings: dict = {}
    _generation = 0
    _enabled_tags: frozenset = frozenset()
    _region_tag_filter = None
    _paused = False
    _metadata_context = ContextVar("spanscope_metadata", default=None)
    _metadata_scopes: list = []
    _metadata_lock = threading.Lock()
    _decorated: dict = {}      # name -> Region objects of @profile wrappers
    _definitions: dict = {}    # define_region: name -> (functions, tags)
    _recursive_default = False
    _tracker = None            # track_async: the run's TaskTracker
    _likwid_run = None         # use_likwid: the run's LikwidRun (_likwid.py)
    _run_hooks_active: list = []  # register_run_hook: the run's entered contexts

    #: region(name, functions=None, tags=None) -> the Region of that name,
    #: created on first use.  Not a classmethod but the extension's
    #: RegionLookupType, a type whose call is the lookup: a known name is
    #: found in C without a bound method (_regions.c explains; docs/python.md,
    #: "Cost"), the rest goes to _region_slow.  profile_region is the very
    #: same object, and so is region.__func__.  In the class itself (not a
    #: mixin) so that the lookup is found at once.
    region = _ext.region_lookup
    profile_region = region


Region._manager = ProfileManager
_ext.set_region_slow(ProfileManager._region_slow)
