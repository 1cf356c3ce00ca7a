"""The session of the scope-profiler face: setup (settings resolved by
options.py), finalize (the file, the table, return_results), the
session() context manager, pause / resume / sample_every, reset.
_SessionMixin holds ProfileManager's class methods for them."""

from __future__ import annotations

import atexit
import functools
import os
import sys
import weakref
from contextlib import contextmanager
from collections.abc import Mapping

from spanscope import _ext
from spanscope._base import mpi as _mpi
from spanscope.options import FeatureNotAvailableError, load_profiling_config, resolve
# spanscope.results (numpy, h5py) is imported where it is used: a run that
# writes its file and prints nothing (`spanscope run -q`) never needs it.
# Its names this module used to import stay reachable as this module's
# attributes (__getattr__ below), and a global of that name set on the
# module (a test's monkeypatch) is what the module uses.
_RESULTS_NAMES = {"read_h5": "spanscope.results", "write_json": "spanscope.results",
                  "MemrayAllocationTracker": "spanscope.results._memray",
                  "memray_capture_path": "spanscope.results._memray",
                  "period_rows": "spanscope.results._table",
                  "print_region_table": "spanscope.results._table",
                  "region_rows": "spanscope.results._table"}


def _results(name: str):
    """spanscope.results' `name`, imported on first use; a module global
    of that name wins."""
    value = globals().get(name)
    if value is None:
        import importlib
        value = getattr(importlib.import_module(_RESULTS_NAMES[name]), name)
    return value


def __getattr__(name: str):
    if name in _RESULTS_NAMES:
        return _results(name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_OVERFLOW = {"spill": _ext.OVERFLOW_SPILL, "drop": _ext.OVERFLOW_DROP,
             "grow": _ext.OVERFLOW_GROW}
_COMPRESS = {"auto": 0, "gzip": 1, None: -1}
_UNSET = object()

_HTML_SUFFIXES = (".html", ".htm")
_JSON_SUFFIXES = (".json", ".json.gz")


def _output_kind(path: str) -> str:
    """"json", "html" or "h5" by the name (anything else is HDF5, as in
    scope-profiler's profile_format)."""
    name = os.path.basename(path).lower()
    if name.endswith(_JSON_SUFFIXES):
        return "json"
    if name.endswith(_HTML_SUFFIXES):
        return "html"
    return "h5"


def _full_metadata() -> dict:
    """What metadata_detail="full" adds to /metadata (scope-profiler's
    list): user, working directory, loaded modules (a JSON list), and the
    PATH-like and SLURM_* variables.  Host name and uname spanscope writes
    at every detail level."""
    import getpass
    import json  # here: not at every start
    try:
        user = getpass.getuser()
    except (KeyError, OSError):  # no passwd entry (containers)
        user = ""
    out = {"user": user, "working_directory": os.getcwd(), "metadata_detail": "full",
           "modules": json.dumps(sorted(m for m in sys.modules if "." not in m))}
    for key, value in os.environ.items():
        if key in ("PATH", "LD_LIBRARY_PATH", "PYTHONPATH") or key.startswith("SLURM_"):
            out[key] = value
    return out


class RunConfig:
    """The settings a run resolved (defaults < TOML < options < keywords),
    read-only: ``config.label``, ``config.aggregation_mode``, ...,
    ``config.paused``, ``config.start_time_ns``; ``as_dict()`` for all.
    Before ``setup()`` the defaults.  As scope-profiler's config it also
    says the run's ``tracker`` (the ConcurrencyTracker of track_async, kept
    after the run ends; None without) and the MPI job: ``comm`` (mpi4py's
    COMM_WORLD when MPI is initialised,
    else None), ``rank`` and ``size`` (also as scope-profiler's ``_rank`` /
    ``_size``); under an MPI launcher, asking for the config initialises
    MPI (scope-profiler resolves its communicator on first use too)."""

    __slots__ = ("_values",)

    def __init__(self, settings: dict, paused: bool, tracker=None):
        from spanscope.options import DEFAULTS
        v = {**DEFAULTS, **settings}  # before setup(): the defaults, as scope-profiler
        v["tracker"] = tracker  # the run's ConcurrencyTracker (track_async), else None
        comm = None
        if _mpi.ensure_initialized():  # only under a launcher
            from mpi4py import MPI
            comm = MPI.COMM_WORLD
        rank, size = (comm.Get_rank(), comm.Get_size()) if comm is not None else (0, 1)
        v.update(comm=comm, rank=rank, size=size, _rank=rank, _size=size)
        v["paused"] = paused
        v["start_time_ns"] = _ext.session_start_ns()
        v["file_path"] = os.fspath(v["file_path"]) if v.get("file_path") is not None else None
        object.__setattr__(self, "_values", v)

    def __getattr__(self, name):
        try:
            return self._values[name]
        except KeyError:
            raise AttributeError(f"no profiling setting {name!r}") from None

    def __setattr__(self, name, value):
        raise AttributeError("the run's settings are read-only; call setup() to change them")

    def as_dict(self) -> dict:
        return dict(self._values)

    def __repr__(self):
        return f"RunConfig({self._values!r})"


class ProfilingRun:
    """What ``setup()`` returns: the run's output path and state;
    ``finalize()`` keeps the results in ``.results``."""

    def __init__(self, manager, file_path, generation):
        self._manager = manager
        self._generation = generation
        self.file_path = file_path
        self.results = None

    @property
    def is_active(self) -> bool:
        return self._manager._generation == self._generation and self._manager.is_active()

    def finalize(self, **kwargs):
        if self._manager._generation != self._generation:
            raise RuntimeError("this profiling run has been replaced")
        kwargs.setdefault("return_results", True)
        self.results = self._manager.finalize(**kwargs)
        return self.results

    def __repr__(self):
        return f"ProfilingRun(file_path={self.file_path!r}, is_active={self.is_active})"


class _Session:
    """``ProfileManager.session(...)``: setup on entry, finalize on exit (even
    when the body raises).  Also a decorator (each call its own session)."""

    ROOT = "scope_profiler.session"  # scope-profiler's name: files and filters name it

    def __init__(self, manager, setup_kwargs, verbose, return_results):
        self._m = manager
        self._kw = setup_kwargs
        self._verbose = verbose
        self._return_results = return_results
        self.run = None
        self.results = None

    def __enter__(self):
        self.run = self._m.setup(**self._kw)
        self._root = self._m.region(self.ROOT)
        self._root.__enter__()
        return self

    def __exit__(self, *exc):
        try:
            self._root.__exit__(*exc)
        finally:
            try:
                self.results = self._m.finalize(verbose=self._verbose,
                                                return_results=self._return_results)
            finally:
                # the session is the window: its end takes the task hooks out
                # (setup()/finalize() used directly keep them: a checkpoint)
                self._m._stop_tracking()
        return False

    @property
    def file_path(self):
        return self.run.file_path if self.run else None

    def __call__(self, func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with _Session(self._m, self._kw, self._verbose, self._return_results):
                return func(*args, **kwargs)
        return wrapper


def _read_results(path):
    """The results of the file at path: scope-profiler's ProfilingResults."""
    return _results("read_h5")(path)


def _write_json(results, path: str) -> None:
    """Writes results to path as scope-profiler's JSON."""
    _results("write_json")(results, path)


#: The manager classes whose run installed a task tracker (track_async).
_TRACKING: weakref.WeakSet = weakref.WeakSet()


def _stand_down_after_fork() -> None:
    """In a forked child (os.register_at_fork), as scope-profiler's trackers
    do: the child inherited the parent's run; its C session is its own
    (docs/process-trees.md: the core opens one named after its pid unless
    SPANSCOPE_FORK=off), and the task tracker's
    asyncio hooks come out and the run's tracker, as get_config() shows it,
    is a fresh, empty, uninstalled one: a long-lived forked worker running
    an event loop accumulates nothing.  The child profiles once it calls
    setup() itself."""
    for cls in list(_TRACKING):
        tracker = getattr(cls, "_tracker", None)
        if tracker is None:
            continue
        tracker.uninstall()  # takes no lock (a parent's thread may hold one)
        cls._tracker = None  # the child tracks nothing
        cls._run_tracker = type(tracker)(track_async=tracker.track_async)
    _TRACKING.clear()


#: True in a forked child until it calls setup(): the session it runs is the
#: one the core opened at the fork, which setup() may replace.
_INHERITED_AT_FORK = False


def _mark_inherited_after_fork() -> None:
    global _INHERITED_AT_FORK
    _INHERITED_AT_FORK = True


if hasattr(os, "register_at_fork"):  # POSIX; no fork elsewhere
    os.register_at_fork(after_in_child=_stand_down_after_fork)
    os.register_at_fork(after_in_child=_mark_inherited_after_fork)


#: setting name -> a callable returning a context manager entered at setup()
#: when that setting is true and exited when the run's tracking stops (a new
#: setup, reset, a session's end).  Filled by the modules above this one
#: (register_run_hook), so that the session never imports them.
_RUN_HOOKS: dict = {}


class _Emitting:
    """use_nvtx=True: every region is also an NVTX range (domain "spanscope",
    for Nsight Systems; docs/nvtx-itt.md) while the run lasts.  Restores
    the emitter as it was before (on stays on)."""

    def __init__(self, name: str):
        self._name = name
        self._was = True

    def __enter__(self):
        self._was = _ext.emit_set(self._name, True)
        return self

    def __exit__(self, *exc):
        if not self._was:
            _ext.emit_set(self._name, False)
        return False

    def pause(self, paused: bool) -> None:
        """pause()/resume(): a paused run emits no range, as scope-profiler's
        NVTX regions (an emitter that was on before the run is left alone)."""
        if not self._was:
            _ext.emit_set(self._name, not paused)


def register_run_hook(setting: str, start) -> None:
    """Makes setup() call ``start()`` -- a context manager, entered at once --
    in every run whose resolved settings have ``setting`` true, and exit it
    when the run's tracking stops.  One hook per setting: a second
    registration replaces the first.  spanscope.mpi_wrappers registers
    ``profile_mpi_calls`` this way."""
    if not callable(start):
        raise TypeError(f"start must be callable, not {type(start).__name__}")
    _RUN_HOOKS[setting] = start


register_run_hook("use_nvtx", lambda: _Emitting("nvtx"))


class _GpuTiming:
    """use_gpu_timing=True: a CUDA event pair around every region call while
    the run lasts (the C core's SPS_DEVICE_EVENTS collector,
    src/ext/gpu_timing.c; docs/device.md "gpu_timing"), each pair's device
    time written by finalize as the call's /events/gpu_durations and in its
    region's gpu_count / gpu_total.  sync_on_exit: scope-profiler's
    gpu_sync_on_exit, each call's end waits for its end event (the
    collector reads it from SPANSCOPE_GPU_SYNC_ON_EXIT when it starts)."""

    _ENV = "SPANSCOPE_GPU_SYNC_ON_EXIT"

    def __init__(self, sync_on_exit: bool):
        self._sync = bool(sync_on_exit)
        self._on = False

    def __enter__(self):
        before = os.environ.get(self._ENV)
        os.environ[self._ENV] = "1" if self._sync else "0"
        try:
            _ext.device_start(_ext.DEVICE_EVENTS)
        finally:
            if before is None:
                del os.environ[self._ENV]
            else:
                os.environ[self._ENV] = before
        self._on = True
        return self

    def __exit__(self, *exc):
        if self._on:
            self._on = False
            _ext.device_stop(_ext.DEVICE_EVENTS)
        return False


class _SessionMixin:
    """ProfileManager's session: setup, finalize, pause and sampling, reset.
    Mixed into ProfileManager (profile_manager/__init__.py), whose class
    attributes hold the state; every method is a classmethod of it."""

    # -- session ------------------------------------------------------------
    @classmethod
    def setup(cls, options: ProfilingOptions | None = None, *, auto_finalize: bool = False,
              output=_UNSET, replace: bool = False, region_tags=None, config_path=None,
              **overrides) -> ProfilingRun:
        """Starts a session that records at once; clears all regions.

        Settings, lowest precedence first: the defaults, the ``[profiling]``
        table of the TOML file ``config_path``, ``options`` (a
        ProfilingOptions), keywords.  An unknown keyword raises TypeError
        naming the closest valid setting.  ``output`` is another spelling of
        the destination: None writes no file, a name ending in .json /
        .json.gz writes scope-profiler's JSON, .html / .htm the HTML report,
        anything else HDF5.  Calling setup while a run that was never
        finalized is active raises RuntimeError unless ``replace=True``.
        """
        settings = {}
        if config_path is not None:
            settings.update(load_profiling_config(config_path))
        if options is not None:
            from spanscope.options import ProfilingOptions  # first use: options.py says why
            if not isinstance(options, ProfilingOptions):
                raise TypeError(f"options must be a ProfilingOptions, not "
                                f"{type(options).__name__}")
            settings.update(options.to_kwargs())
        requested, kind = None, "h5"
        if output is not _UNSET:
            both = sorted(k for k in ("file_path", "deactivate_file_output")
                          if overrides.get(k) is not None)
            if both:
                raise TypeError(f"output cannot be combined with {', '.join(both)}")
            if output is None:
                overrides["deactivate_file_output"] = True
            else:
                if not isinstance(output, (str, os.PathLike)):
                    raise TypeError(f"output must be a str, os.PathLike or None, not "
                                    f"{type(output).__name__}")
                requested = os.fspath(output)
                kind = _output_kind(requested)
                overrides["file_path"] = requested
                overrides["deactivate_file_output"] = False
        settings.update({k: v for k, v in overrides.items() if v is not None})
        o = resolve(settings)
        if output is _UNSET and not o["deactivate_file_output"]:
            kind = _output_kind(os.fspath(o["file_path"]))
            requested = os.fspath(o["file_path"]) if kind != "h5" else None
        if region_tags is not None:
            region_tags = frozenset(region_tags)
        global _INHERITED_AT_FORK
        # a forked child's session is the core's (docs/process-trees.md), not
        # one this process set up: the child's own setup() takes it over, as
        # scope-profiler's "worker opens a session, into its own file"
        if (cls._configured and _ext.is_active() and not cls._finalized_since_setup
                and not replace and not _INHERITED_AT_FORK):
            raise RuntimeError("profiling is already set up and was not finalized; "
                               "call finalize() first or pass replace=True")
        _INHERITED_AT_FORK = False
        prof = sys.modules.get("spanscope.profiler")
        rec = getattr(prof, "_recording_profile", None) if prof else None
        if rec is not None and rec._owned():
            # its session would end under it, and this run's file with it
            raise RuntimeError("a spanscope.profiler.profile is recording in its own "
                               "session; call ProfileManager.setup() before starting it "
                               "(the profile then records inside this session)")
        # use_memray: memray's capture, one per rank (docs/memray.md); memray
        # is imported and the path checked before the previous run is touched
        memray_capture = None
        if o["use_memray"] and not o["deactivate_profiling"]:
            rank, size = _mpi.world()
            memray_capture = _results("MemrayAllocationTracker")(
                _results("memray_capture_path")(o["file_path"], o["memory_profile_path"], rank, size),
                native_traces=o["memray_native_traces"],
                trace_python_allocators=o["memray_trace_python_allocators"],
                follow_fork=o["memray_follow_fork"])
            if o["recursive_profile"] and _ext.trace_hook() == "setprofile":
                import warnings
                warnings.warn(
                    "use_memray with recursive_profile: spanscope's recursive tracer and "
                    "memray share the interpreter's profile hook, so memray records no "
                    "Python stack for the code traced recursively (its sizes and totals "
                    "stay right); the default hook (the frame evaluation hook) leaves "
                    "the profile hook to memray (docs/memray.md)", RuntimeWarning,
                    stacklevel=2)
        # as scope-profiler's config: the capture's path, None without one
        o["memory_profile_path"] = None if memray_capture is None else memray_capture.path
        if o["use_gpu_timing"] and not o["deactivate_profiling"]:
            # scope-profiler raises RuntimeError where its backend finds no
            # CUDA device; spanscope says so before anything starts
            why = _ext.device_available(_ext.DEVICE_EVENTS)
            if why is not None:
                raise RuntimeError("CUDA-event timing requested (use_gpu_timing=True, "
                                   f"gpu_timing_backend={o['gpu_timing_backend']!r}) but no "
                                   f"CUDA device can be timed here: {why}")
        if o["use_nvtx"] and "nvtx" not in _ext.emit_available():
            raise FeatureNotAvailableError(
                "use_nvtx=True: this spanscope was built without NVTX (the CUDA toolkit's "
                "nvtx3 headers were not found at build time; docs/nvtx-itt.md)")
        cls._cancel_auto_finalize()
        cls._stop_tracking()  # finishes the previous run's capture: one per process
        cls._likwid_run = None
        if o["use_likwid"] and not o["deactivate_profiling"]:
            # scope-profiler's FullProfileRegion: LIKWID markers around each
            # call (ImportError saying what to install, before anything starts)
            from spanscope.profile_manager._likwid import LikwidRun
            cls._likwid_run = LikwidRun()
        cls._line_run = None
        if o["use_line_profiler"] and not o["deactivate_profiling"]:
            # scope-profiler's LineProfilerRegion: line_profiler on each
            # region's functions (ImportError naming the extra, before
            # anything starts; profile_manager/_lines.py)
            from spanscope.profile_manager._lines import LineProfileRun
            cls._line_run = LineProfileRun()
            _import_h5py_first()
        cls._run_tracker = None
        if memray_capture is not None:
            memray_capture.start()
            cls._memray_capture = memray_capture
        _ext.shutdown()
        _ext.clear_registry()
        if o["deactivate_file_output"] or o["file_path"] is None:
            path = None
        elif kind == "h5":
            path = os.fspath(o["file_path"])
        else:  # rendered from an HDF5 file beside it, removed after
            path = requested + ".spanscope.h5"
        if not o["deactivate_profiling"]:
            _mpi.ensure_initialized()  # under mpirun: a collective session (docs/mpi.md)
            # perf_events: the C core reads them at every begin and end
            # (SPS_TRACK_COUNTERS, docs/perf-events.md), per region in /values
            perf = o["perf_events"]
            _ext.setup(path, aggregate=o["aggregation_mode"], memory_limit=_pool_bytes(o),
                       chunk_size=o["chunk_size"], overflow=_OVERFLOW[o["overflow"]],
                       spill_dir=o["spill_dir"], label=o["label"],
                       compress_threshold=_COMPRESS[o["hdf5_compression"]],
                       track=2 if perf else 0, counters=",".join(perf) if perf else None)
        cls._settings = o
        cls._file_path = path
        cls._requested_output = requested if kind != "h5" else None
        cls._output_kind = kind
        cls._recursive_default = o["recursive_profile"]
        cls._configured = True
        cls._deactivated = o["deactivate_profiling"]
        cls._finalized_since_setup = False
        cls._last_results = None
        cls._paused = False
        cls._metadata_scopes = []
        cls._generation += 1
        cls._region_tag_filter = region_tags
        cls._enabled_tags = frozenset(o["enable_tags"]) | (region_tags or frozenset())
        cls._rebind()
        if o["metadata_detail"] == "full" and not o["deactivate_profiling"]:
            for key, value in _full_metadata().items():
                _ext.metadata_set(key, value)
            if memray_capture is not None:  # as scope-profiler, at "full" only
                _ext.metadata_set("memory_profile_path", str(memray_capture.path))
        if o["track_async"] and not o["deactivate_profiling"]:
            from spanscope.profile_manager._tasks import TaskTracker
            cls._tracker = cls._run_tracker = TaskTracker()
            cls._tracker.install()
            _TRACKING.add(cls)  # a forked child stands down (_stand_down_after_fork)
        if getattr(cls, "_likwid_run", None) is not None and o["use_likwid"]:
            _ext.set_call_hooks(cls._likwid_run.start, cls._likwid_run.stop)
        if cls._line_run is not None:
            _ext.set_call_hooks(*_line_hooks(cls._line_run, cls._likwid_run))
        if not o["deactivate_profiling"]:
            # the run hooks of the settings asked for (profile_mpi_calls:
            # mpi_wrappers' profiled mpi4py), each until _stop_tracking
            for setting, start in _RUN_HOOKS.items():
                if o.get(setting):
                    context = start()
                    context.__enter__()
                    cls._run_hooks_active.append(context)
            if o["use_gpu_timing"]:
                context = _GpuTiming(o["gpu_sync_on_exit"])
                context.__enter__()
                cls._run_hooks_active.append(context)
        if auto_finalize:
            cls._register_auto_finalize()
        return ProfilingRun(cls, requested or path, cls._generation)

    @classmethod
    def _rebind(cls):
        """After setup: the @profile wrappers' regions and define_region's
        definitions join the new registry, their tags re-evaluated."""
        reg = _ext.registry
        for name, entries in cls._decorated.items():
            for r, func in entries:
                r._off = cls._tags_off(r.tags)
                if not cls._deactivated:
                    cls._capture_function(r, func)
                r._push_attributes()
                r.add_function(func)  # use_line_profiler: to the new run's profiler
            if name not in reg:
                reg[name] = entries[0][0]
        for name, (functions, tags) in cls._definitions.items():
            cls.region(name, functions=functions, tags=tags)

    @classmethod
    def _stop_tracking(cls):
        """Takes the task tracker's hooks and the profile_mpi_calls proxies out
        (a new setup, reset, a session's end)."""
        tracker, cls._tracker = cls._tracker, None
        if tracker is not None:
            tracker.uninstall()
        active, cls._run_hooks_active = cls._run_hooks_active, []
        for context in reversed(active):  # profile_mpi_calls: mpi4py's globals back
            context.__exit__(None, None, None)
        _ext.set_call_hooks(None, None)  # use_likwid's markers
        cls._stop_memray()

    @classmethod
    def _stop_memray(cls):
        """Finishes the run's memray capture (use_memray), if one is running:
        at finalize, a new setup, reset, a session's end; again does nothing."""
        capture = getattr(cls, "_memray_capture", None)
        cls._memray_capture = None
        if capture is not None:
            capture.stop()

    @classmethod
    def _register_auto_finalize(cls):
        def at_exit():
            cls._auto_finalize_cb = None
            if cls._configured and _ext.is_active() and not cls._finalized_since_setup:
                cls.finalize(verbose=False)
        cls._auto_finalize_cb = at_exit
        atexit.register(at_exit)

    @classmethod
    def _cancel_auto_finalize(cls):
        cb, cls._auto_finalize_cb = cls._auto_finalize_cb, None
        if cb is not None:
            atexit.unregister(cb)

    @classmethod
    def finalize(cls, verbose: bool = True, return_results: bool = False,
                 native_traces=None, verbose_line_profiler: bool = False, *,
                 file_path=_UNSET):
        """Writes what was recorded since the previous finalize (a checkpoint:
        recording goes on) and prints the summary table when verbose.

        ``return_results=True`` returns the period's results (read back from
        the file written, or from a private temporary file when the run
        writes none: then held in memory, their ``file_path`` the configured
        one, as in scope-profiler), and keeps them for ``last_results()``; with
        profiling deactivated they are an empty result set.  Before
        ``setup()`` this does nothing and returns None.

        If the file cannot be written, OSError names the path and nothing is
        lost: call finalize(file_path=...) with another path to write it all.
        """
        if not isinstance(verbose, bool):
            raise TypeError(f"verbose must be a bool, not {type(verbose).__name__}")
        if native_traces is not None:
            raise FeatureNotAvailableError(
                "finalize(native_traces=...): C regions of this process already land in "
                "this run; folding scope-profiler's native trace files in is not "
                "available yet in spanscope")
        if not cls._configured:
            return None
        cls._cancel_auto_finalize()
        # the memray capture ends first, before finalizing allocates (as
        # scope-profiler); the run's recording goes on (a checkpoint)
        cls._stop_memray()
        if cls._deactivated or not _ext.is_active():
            cls._finalized_since_setup = True
            if not return_results:
                return None
            # nothing recorded, but a usable (empty) result set, as scope-profiler
            from spanscope.results import ProfilingResults
            cls._last_results = ProfilingResults(
                {}, file_path=cls._settings.get("file_path") or "profiling_data.h5")
            return cls._last_results
        path = cls._file_path if file_path is _UNSET else (
            None if file_path is None else os.fspath(file_path))
        kind = cls._output_kind if file_path is _UNSET else _output_kind(path or "x.h5")
        if kind != "h5" and path is not None and file_path is not _UNSET:
            requested, path = path, path + ".spanscope.h5"
        else:
            requested = cls._requested_output if file_path is _UNSET else None
        cls._write_event_metadata()
        if cls._tracker is not None:
            cls._tracker.publish()  # /task_table
        # the table is print_summary's (scope-profiler's finalize prints
        # read_h5(file).print_summary()); the C core pools the period by
        # call path as it writes it, so printing costs O(call paths), not a
        # read of every call.  Read back instead where that pooling is not
        # the file's: tasks nest by task (track_async), a collective MPI
        # file holds every rank, aggregate files have no calls to pool, and
        # the GPU columns (use_gpu_timing) come from the file's gpu_durations.
        readback = verbose and (cls._tracker is not None or _mpi.launched()
                                or bool(cls._settings.get("aggregation_mode"))
                                or bool(cls._settings.get("use_gpu_timing")))
        tmp = None
        if path is None and (return_results or readback):
            import tempfile

            fd, tmp = tempfile.mkstemp(prefix="spanscope-results-", suffix=".h5")
            os.close(fd)
        try:
            period = None
            if verbose and not readback:
                _, period = _ext.finalize_paths(path or tmp, True)
            else:
                _ext.finalize(path or tmp, verbose)
            if cls._settings.get("perf_events") and (
                    not _mpi.launched() or _mpi.world()[0] == 0):  # the one writer
                _write_perf_events(path or tmp, cls._settings["perf_events"])
            if getattr(cls, "_line_run", None) is not None:  # the period's line profiles
                _write_line_profiles(path or tmp, cls._line_run, cls._recorded_path)
            likwid_run = getattr(cls, "_likwid_run", None)
            if likwid_run is not None:  # LIKWID's results into the file just written
                _ext.set_call_hooks(None, None)
                likwid_run.finish(path or tmp, list(_ext.registry), rank=_mpi.world()[0])
                cls._likwid_run = None
                if getattr(cls, "_line_run", None) is not None:  # line profiles go on
                    _ext.set_call_hooks(*_line_hooks(cls._line_run))
            cls._finalized_since_setup = True
            if file_path is not _UNSET:
                cls._file_path = path
            results = None
            if return_results:
                results = _read_results(path or tmp)
                if path is None:  # as scope-profiler: the configured file, not the gone one
                    from pathlib import Path

                    results._file_path = Path(cls._settings.get("file_path")
                                              or "profiling_data.h5")
            table = (cls._table_source(path or tmp, requested, period, results)
                     if verbose else None)
            if requested is not None:
                cls._render(path, requested, kind, results)
        finally:
            if tmp is not None:
                os.unlink(tmp)
        if table is not None:
            cls._print_table(path is not None, *table)
        if verbose_line_profiler and getattr(cls, "_line_run", None) is not None:
            for name in list(_ext.registry):  # line_profiler's own tables
                if name != _Session.ROOT:
                    cls._line_run.print_stats(name)
        capture = cls._settings.get("memory_profile_path")
        if verbose and capture is not None:  # scope-profiler's line, on rank 0
            rank, size = _mpi.world() if _mpi.launched() else (0, 1)
            if rank == 0:
                note = " (one capture per rank)" if size > 1 else ""
                print(f"\nwrote Memray allocation profile to {capture}{note}")
        if return_results:
            cls._last_results = results
        return results

    @classmethod
    def _table_source(cls, h5_path, requested, period, results):
        """What finalize's table is printed from, taken while the period's
        file exists: (period, results, file_path, metadata), where period
        is the C core's pooling (or None: read the file), results the
        read-back ones (None when period is given), file_path the file the
        table names (requested for .json/.html output) and metadata the
        file's /metadata (the label, mpi_size)."""
        meta = _ext.read_metadata(h5_path) if h5_path is not None else {}
        if period is None and h5_path is not None and results is None:
            results = _read_results(h5_path)
        return period, results, requested or h5_path, meta

    @classmethod
    def _print_table(cls, to_file, period, results, file_path, meta):
        """Prints finalize's table as scope-profiler 0.7.5 does: with a
        file, that file's print_summary() (title "FILE (N rank)", its
        hints); without one, the in-memory results' print_summary(title=
        "LABEL (in memory, N rank)").  Only rank 0 of an MPI job prints."""
        rank, size = _mpi.world() if _mpi.launched() else (0, 1)
        if rank != 0:
            return
        period_rows, print_region_table, region_rows = (
            _results("period_rows"), _results("print_region_table"), _results("region_rows"))
        label = str(meta.get("label") or cls._settings.get("label") or "") or None
        if not to_file:
            configured = cls._settings.get("file_path") or "profiling_data.h5"
            shown = label or os.path.splitext(os.path.basename(os.fspath(configured)))[0]
            title = f"{shown} (in memory, {size} {'rank' if size == 1 else 'ranks'})"
            file_path = configured
        if period is None:
            if results is None:
                return
            if to_file:
                results.print_summary()
            else:  # read from a temporary file: the hints name the configured one
                print_region_table(region_rows(results), title=title, file_path=file_path)
            return
        rows = period_rows(period)
        if to_file:  # read_h5(file).default_title(): ranks up to mpi_size
            mpi_size = meta.get("mpi_size", 1)
            n = max(int(mpi_size) if isinstance(mpi_size, int) else 1, 1) if any(
                "call_path" in r for r in rows) else 0
            title = f"{os.path.relpath(file_path)} ({n} {'rank' if n == 1 else 'ranks'})"
            title = f"{label} - {title}" if label else title
        print_region_table(rows, title=title, file_path=file_path)

    @classmethod
    def _render(cls, h5_path, requested, kind, results):
        """The period's HDF5 file at h5_path rendered as requested, then
        removed; when rendering fails it stays, so nothing recorded is lost
        (the error names the output)."""
        if kind == "json":
            _write_json(results if results is not None else _read_results(h5_path), requested)
        else:
            _ext.html_file(h5_path, requested)
        os.unlink(h5_path)

    @classmethod
    def session(cls, options=None, *, verbose: bool = True, return_results: bool = False,
                verbose_line_profiler: bool = False, native_traces=None, **setup_kwargs):
        """A context manager (and decorator) that sets up, opens a root region
        "scope_profiler.session" (scope-profiler's name), and finalizes on exit."""
        if native_traces is not None:
            raise FeatureNotAvailableError("session(native_traces=...) is not available "
                                           "yet in spanscope")
        if options is not None:
            setup_kwargs["options"] = options
        return _Session(cls, setup_kwargs, verbose, return_results)

    @classmethod
    def is_active(cls) -> bool:
        """Whether instrumentation records calls now (a session exists and
        profiling was not deactivated; a paused session counts as active,
        as in scope-profiler)."""
        return bool(_ext.is_active())

    @classmethod
    def is_configured(cls) -> bool:
        return cls._configured

    @classmethod
    def last_results(cls):
        """The results the last finalize(return_results=True) (or run())
        returned in this run, or None."""
        return cls._last_results

    @classmethod
    def read_results(cls):
        """The file this run wrote, read back (FileNotFoundError before it exists)."""
        path = cls._file_path
        if path is None or not os.path.exists(path):
            raise FileNotFoundError(f"no profiling file yet: {path!r}")
        return _read_results(path)

    @classmethod
    def get_config(cls) -> "RunConfig":
        """The run's resolved settings, read-only, as attributes
        (``get_config().label``), like scope-profiler's ProfilingConfig."""
        return RunConfig(cls._settings, cls._paused, getattr(cls, "_run_tracker", None))

    @classmethod
    def set_config(cls, config) -> None:
        """Starts a run with a new configuration, as scope-profiler 0.7.5's
        set_config(ProfilingConfig) does: config is a ProfilingOptions or a
        mapping of setup()'s settings ({"file_path": ..., "label": ...};
        ``output``, ``region_tags`` and ``config_path`` too).  Like there,
        whatever the current run holds is dropped without being written (no
        RuntimeError for an unfinalized run: finalize() first to keep it),
        the regions are fresh, the @profile decorators and define_region
        definitions are bound again, a pending auto-finalize is cancelled and
        none is registered, and the run records at once (nothing when
        deactivate_profiling).  TypeError for another type, for the keys
        ``replace`` / ``auto_finalize`` / ``options`` (setup() takes those)
        and for an unknown setting (with the closest valid name)."""
        from spanscope.options import ProfilingOptions
        if isinstance(config, ProfilingOptions):
            kwargs = {"options": config}
        elif isinstance(config, Mapping):
            kwargs = dict(config)
            for key in ("replace", "auto_finalize", "options"):
                if key in kwargs:
                    raise TypeError(f"set_config() takes the settings of a run, not "
                                    f"{key!r}; call setup({key}=...) for that")
        else:
            raise TypeError(f"set_config() needs a ProfilingOptions or a mapping of setup() "
                            f"settings, not {type(config).__name__}")
        cls.setup(replace=True, **kwargs)

    # -- pause, resume, sampling --------------------------------------------
    @classmethod
    def pause(cls) -> None:
        """Stops recording until resume(): every region, C regions of this
        process included, records nothing (sps_pause: the hot path costs its
        one branch).  RuntimeError before setup(), and while a region other
        than the session's root is open on any thread, as scope-profiler
        checks every region (an open call cannot be split): the C core's
        sps_open_calls_all, which reads every thread's stack without
        touching the hot path.  In aggregation mode the recorders keep
        their stacks to themselves, so there only this thread's open
        regions are checked."""
        if not cls._configured:
            raise RuntimeError("ProfileManager.setup() must be called before pause()")
        if cls._paused:
            return
        if _ext.is_active():
            every = _ext.open_calls_all()
            names = _ext.open_calls() if every is None else [n for _t, _d, n in every]
            active = list(dict.fromkeys(n for n in names if n != _Session.ROOT))
            if active:
                names = ", ".join(repr(n) for n in active[:3])
                raise RuntimeError("cannot pause while profiling scopes are active: "
                                   + names + ("..." if len(active) > 3 else ""))
            _ext.pause(True)
        cls._emit_pause(True)
        cls._paused = True

    @classmethod
    def resume(cls) -> None:
        """Recording again after pause(); harmless when not paused."""
        if not cls._configured:
            raise RuntimeError("ProfileManager.setup() must be called before resume()")
        if _ext.is_active():
            _ext.pause(False)
        cls._emit_pause(False)
        cls._paused = False

    @classmethod
    def _emit_pause(cls, paused: bool) -> None:
        """use_nvtx's emitter follows pause() and resume() (_Emitting.pause)."""
        for context in cls._run_hooks_active:
            if isinstance(context, _Emitting):
                context.pause(paused)

    @classmethod
    def is_paused(cls) -> bool:
        return cls._paused

    @classmethod
    @contextmanager
    def sample_every(cls, every: int, start: int = 0):
        """Profiles timestep ``start`` and every ``every``-th one after it::

            with ProfileManager.sample_every(10) as profile_step:
                for t in range(steps):
                    with profile_step(t):
                        advance()

        The other steps run paused.  On exit the previous pause state comes
        back."""
        if isinstance(every, bool) or not isinstance(every, int) or every < 1:
            raise ValueError("every must be a positive integer")
        if isinstance(start, bool) or not isinstance(start, int):
            raise ValueError("start must be an integer")
        was_paused = cls._paused

        @contextmanager
        def profile_step(timestep: int):
            if isinstance(timestep, bool) or not isinstance(timestep, int):
                raise TypeError("timestep must be an integer")
            selected = timestep >= start and (timestep - start) % every == 0
            if selected:
                cls.resume()
            else:
                cls.pause()
            yield selected

        try:
            yield profile_step
        finally:
            if was_paused:
                cls.pause()
            else:
                cls.resume()

    @classmethod
    def summary(cls) -> str:
        """The session's summary table so far, as text."""
        return _ext.summary()

    @classmethod
    def counters(cls) -> dict:
        """{'dropped': events dropped by the overflow policy, 'misuse': nesting
        repairs, 'spill_errno' / 'spill_error': why the spill file could not
        grow (errno, e.g. errno.ENOSPC, and its words; 0 / None when it never
        failed)}"""
        return _ext.counters()

    # -- reset ----------------------------------------------------------------
    @classmethod
    def reset(cls) -> None:
        """Forgets the configuration and everything recorded, keeping the
        instrumentation (decorators and define_region definitions): as
        after import, nothing records until the next setup()."""
        cls._cancel_auto_finalize()
        cls._stop_tracking()
        cls._run_tracker = None
        _ext.shutdown()
        _ext.clear_registry()
        cls._configured = False
        cls._deactivated = False
        cls._file_path = None
        cls._requested_output = None
        cls._output_kind = "h5"
        cls._finalized_since_setup = False
        cls._last_results = None
        cls._settings = {}
        cls._line_run = None
        cls._paused = False
        cls._metadata_scopes = []
        cls._region_tag_filter = None
        cls._enabled_tags = frozenset()
        cls._recursive_default = False
        cls._generation += 1

    @classmethod
    def _reset(cls):
        """reset(), and forget every decorator and definition too (for tests)."""
        cls.reset()
        cls._decorated = {}
        cls._definitions = {}


def _line_hooks(line_run, likwid_run=None):
    """The call hooks of a use_line_profiler=True run: its profiler on
    after each begin and off before each end; with use_likwid too, LIKWID's
    markers outside them (started first, stopped last)."""
    if likwid_run is None:
        return line_run.start, line_run.stop

    def start(name):
        likwid_run.start(name)
        line_run.start(name, 2)  # the frame that entered the region

    def stop(name):
        line_run.stop(name)
        likwid_run.stop(name)
    return start, stop


# The event pool of a session that traces every Python call
# (recursive_profile) when memory_limit is left at 0: the core's default,
# 32 MiB, holds 2.1 million calls (16 bytes a call); past it the spill
# writer packs every chunk on a second thread, which cost fib(30)'s 2.7
# million calls ~25 ns a call of CPU time, and finalize then unpacks them.
# The pool grows only as it is used: a short run takes what it records.
# Not under an MPI launcher: there many ranks share a node, each with a
# pool of its own, and the core's default stays.
# docs/python.md ("Configuration"), docs/benchmarks.md (issue 35, 7b).
RECURSIVE_POOL_BYTES = 128 << 20


def _pool_bytes(o):
    """memory_limit for _ext.setup: the setting, else (0) the core's default,
    or RECURSIVE_POOL_BYTES for a recursive session outside MPI."""
    if o["memory_limit"]:
        return o["memory_limit"]
    return RECURSIVE_POOL_BYTES if o["recursive_profile"] and not _mpi.launched() else 0


def _import_h5py_first() -> None:
    """h5py, imported before spanscope's MPI library: under a launcher that
    library (loaded RTLD_GLOBAL, with MPI) makes its HDF5 the process's, and
    h5py loaded after it would bind to that HDF5 instead of its own and fail
    ("Not a datatype").  Line profiles are written with h5py at finalize."""
    try:
        import h5py  # noqa: F401
    except ValueError as exc:
        raise RuntimeError(
            "use_line_profiler=True under MPI: h5py cannot load beside spanscope's MPI "
            f"library, loaded before this setup() ({exc}); import h5py before the first "
            "setup() or get_config() of the run (at the top of the script)") from exc


def _write_line_profiles(h5_path, line_run, recorded_path) -> None:
    """The period's line profiles (line_run.records: what ran since the
    previous finalize) into the file finalize just wrote, as
    scope-profiler's rank<N>/line_profile groups.  Under MPI every rank's
    records go to rank 0, the file's one writer."""
    from spanscope.results._lines import append_line_profile
    records = line_run.records(recorded_path)
    if _mpi.launched():
        from mpi4py import MPI
        comm = MPI.COMM_WORLD
        gathered = comm.gather(records, root=0)
        if comm.Get_rank() != 0:
            return
        per_rank = enumerate(gathered)
    else:
        per_rank = [(0, records)]
    for rank, recs in per_rank:
        if recs and h5_path is not None:
            append_line_profile(h5_path, rank, recs)


def _write_perf_events(h5_path, events) -> None:
    """scope-profiler's perf-event groups, from the file's /values (the C
    core's per-region sums of each counter over the region's calls,
    children included: the own values, as scope-profiler's totals are):
    ``rank<N>/perf_events/<region>`` with attributes ``calls`` and
    ``event_names``, dataset ``values`` (uint64), for every region with
    calls in the period."""
    import h5py
    import numpy as np
    with h5py.File(h5_path, "r+") as f:
        if "values" not in f:
            return
        v = f["values"]
        regions = [r.decode() if isinstance(r, bytes) else str(r) for r in v["region"][()]]
        ranks = v["rank"][()]
        calls = v["calls"][()]
        cols = [v[name][()] if name in v else np.zeros(len(regions), dtype=np.int64)
                for name in events]
        for i, region in enumerate(regions):
            group = f.require_group(f"rank{int(ranks[i])}").require_group("perf_events")
            if region in group:
                continue
            g = group.create_group(region)
            g.attrs["calls"] = int(calls[i])
            g.attrs["event_names"] = list(events)
            g.create_dataset("values", data=np.asarray([int(c[i]) for c in cols],
                                                         dtype=np.uint64))
