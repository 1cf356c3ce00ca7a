"""scope-profiler's ``ProfileManager`` API on spanscope's C core.

Everything that runs per call lives in the C extension (``spanscope._ext``):
``Region.__enter__``/``__exit__``, the decorator's wrapper, the recursive
tracer, and the lookup ``ProfileManager.region(name)`` (a C object that
finds a known name in the registry without running Python).  This module
gives the API its shape: settings (options.py), sessions, the registry of
regions by name, tags, pause and sampling, per-call metadata, source
capture, numpy views of the recorded calls, and the output formats.
"""

from __future__ import annotations

import atexit
import fnmatch
import functools
import inspect
import json
import linecache
import os
import runpy
import subprocess
import sys
import tempfile
import threading
from contextlib import contextmanager
from contextvars import ContextVar
from collections.abc import Mapping
from typing import Callable

import numpy as np

from spanscope import _ext, _mpi
from spanscope.options import (FeatureNotAvailableError, ProfilingOptions,
                               load_profiling_config, resolve)

__all__ = ["ProfileManager", "ProfilingRun", "Region", "RegionStats", "RegionHandle",
           "RegionFactory", "RunConfig"]

_OVERFLOW = {"spill": _ext.OVERFLOW_SPILL, "drop": _ext.OVERFLOW_DROP,
             "grow": _ext.OVERFLOW_GROW}
_COMPRESS = {"auto": 0, "gzip": 1, None: -1}
_UNSET = object()

#: Opt-in tags (register_opt_in_tag): their regions record only when a run
#: enables them.  Process-wide, as in scope-profiler.
_OPT_IN_TAGS: set[str] = set()

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


_ZERO_TOUCH = ("profiling a program that is not Python is the zero-touch runner's "
               "(`spanscope run` of any program, the zero-touch issue), which is not "
               "available yet")


def _check_python_script(path: str) -> None:
    """Raises FeatureNotAvailableError when path names a program that is
    not a Python script -- an executable file (ELF), a script for another
    interpreter (a #! line without "python"), or a command found on PATH
    and not as a file -- which only the zero-touch runner (``spanscope run``
    of a native program, another issue) can profile.  A path that names
    nothing is left to the runner, which says it cannot open it."""
    if not os.path.isfile(path):
        import shutil
        if shutil.which(path):
            raise FeatureNotAvailableError(
                f"{path!r} is a command, not a Python script: {_ZERO_TOUCH}")
        return
    try:
        with open(path, "rb") as f:
            head = f.read(256)
    except OSError:
        return  # the runner reports it
    first = head.split(b"\n", 1)[0]
    if head.startswith(b"\x7fELF") or (first.startswith(b"#!") and b"python" not in first):
        raise FeatureNotAvailableError(f"{path!r} is not a Python script: {_ZERO_TOUCH}")


def _relative_source_path(filename: str) -> str:
    """filename relative to the working directory, else to the deepest
    sys.path entry holding it, else its bare name (metadata_detail
    "minimal": no user names or project directories in the file)."""
    path = os.path.abspath(filename)
    roots = [os.getcwd()] + sorted((os.path.abspath(e) for e in sys.path if e),
                                   key=len, reverse=True)
    for root in roots:
        try:
            inside = os.path.commonpath([path, root]) == root
        except ValueError:
            continue
        if inside and path != root:
            return os.path.relpath(path, root)
    return os.path.basename(filename)


def _with_source(filename: str, lineno: int) -> str | None:
    """The text of the ``with`` statement starting at lineno (the whole
    block), else that one line; None when the file cannot be read."""
    import ast
    text = "".join(linecache.getlines(filename))
    if not text:
        return None
    try:
        tree = _with_source.cache.get(filename)
        if tree is None:
            tree = _with_source.cache[filename] = ast.parse(text, filename=filename)
    except (SyntaxError, ValueError):
        return linecache.getline(filename, lineno) or None
    for node in ast.walk(tree):
        if isinstance(node, (ast.With, ast.AsyncWith)) and node.lineno == lineno:
            return "".join(linecache.getlines(filename)[node.lineno - 1:node.end_lineno])
    return linecache.getline(filename, lineno) or None


_with_source.cache = {}


def _system_prefixes() -> tuple:
    """Resolved directories of the standard library and installed packages
    (what profile_script's recursive tracing leaves out)."""
    import site
    import sysconfig
    out = set()
    paths = sysconfig.get_paths()
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        if paths.get(key):
            out.add(os.path.realpath(paths[key]))
    try:
        out.update(os.path.realpath(p) for p in site.getsitepackages())
        out.add(os.path.realpath(site.getusersitepackages()))
    except AttributeError:  # pragma: no cover - virtualenv's old site.py
        pass
    return tuple(sorted(out))


def _patterns(value, what: str) -> tuple:
    """run_script's include/exclude patterns as a tuple of str: one str is
    one pattern (not its characters); TypeError for anything else."""
    if isinstance(value, str):
        return (value,)
    try:
        out = tuple(value)
    except TypeError:
        raise TypeError(f"{what} must be an iterable of str, not "
                        f"{type(value).__name__}") from None
    bad = [p for p in out if not isinstance(p, str)]
    if bad:
        raise TypeError(f"{what} must hold str patterns, not {type(bad[0]).__name__}")
    return out


def _full_metadata() -> dict:
    """What metadata_detail="full" adds to /metadata (scope-profiler's
    list): user, working directory, loaded modules (a JSON list), and the
    PATH-like and SLURM_* variables.  Host name and uname spanscope writes
    at every detail level."""
    import getpass
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


class RegionStats(tuple):
    """Session statistics of a region (ns): num_calls, total, self, min, max,
    mean, variance."""

    __slots__ = ()
    _fields = ("num_calls", "total_ns", "self_ns", "min_ns", "max_ns", "mean_ns", "var_ns2")

    def __new__(cls, values):
        return tuple.__new__(cls, values)

    def __getattr__(self, name):
        try:
            return self[self._fields.index(name)]
        except ValueError:
            raise AttributeError(name) from None

    def __repr__(self):
        return "RegionStats(" + ", ".join(f"{f}={v}" for f, v in zip(self._fields, self)) + ")"


class Region(_ext.Region):
    """A named region.  ``with region:`` records one call; the calls live in
    the C core, and these methods read them.

    scope-profiler's live-region attributes are here as views over the
    calls since the last finalize (the current period): ``ptr`` (how many),
    ``start_times`` / ``end_times`` (int64 numpy arrays of raw
    ``perf_counter_ns`` values, ``[:ptr]`` is all of them), ``capacity``
    (== ptr: spanscope's buffers are the core's chunks, not per region).
    Each is a fresh copy, read when asked for."""

    __slots__ = ("source_file", "source_lineno", "source_text")

    def __init__(self, name):
        super().__init__(name)
        self.source_file = self.source_lineno = self.source_text = None

    @property
    def tags(self) -> tuple:
        return self._tags

    @property
    def stats(self) -> RegionStats:
        """count, total, self, min, max, mean and variance over the session."""
        return RegionStats(self._stats())

    def _fetch(self, starts: bool, durations: bool):
        """(starts, durations) of the calls since the last finalize, each an
        int64 array or None when not asked for.  Costs the calls recorded
        since the previous query plus the copy: the core keeps this region's
        calls once it was asked for (docs/python.md)."""
        while True:
            n = self._calls_into(None, None)
            s = np.empty(n, dtype=np.int64) if starts else None
            d = np.empty(n, dtype=np.int64) if durations else None
            m = self._calls_into(s, d)
            if m > n:  # more calls arrived in between: size again
                continue
            # fewer: a finalize came in between and started a new period
            return (s[:m] if starts else None), (d[:m] if durations else None)

    # -- scope-profiler's live views ----------------------------------------
    @property
    def ptr(self) -> int:
        """Completed calls since the last finalize (the period's)."""
        return self._calls_into(None, None)

    @property
    def capacity(self) -> int:
        return self.ptr

    @property
    def buffer_limit(self) -> int:
        return ProfileManager._settings.get("buffer_limit", 1024)

    @property
    def start_times(self) -> np.ndarray:
        """Raw start times (perf_counter_ns) of the period's calls."""
        return self._fetch(True, False)[0]

    @property
    def end_times(self) -> np.ndarray:
        """Raw end times (perf_counter_ns) of the period's calls."""
        s, d = self._fetch(True, True)
        return s + d

    @property
    def has_source(self) -> bool:
        return self.source_file is not None

    def set_source(self, filename, lineno, text) -> None:
        """Where the region is defined; the first call wins (a name used at
        several sites keeps its first), as in scope-profiler.  Written to
        /rank_region_index's source_files, source_lines, source_texts."""
        if self.source_file is None and filename is not None:
            self.source_file, self.source_lineno, self.source_text = filename, lineno, text
        self._push_attributes()

    def _push_attributes(self) -> None:
        """Hands source and tags to the core, which writes them (its copy
        belongs to the session: setup() starts without)."""
        if self.source_file is not None:
            line = -1 if self.source_lineno is None else int(self.source_lineno)
            _ext.region_set_source(self.id, self.source_file, line, self.source_text)
        if self._tags:
            _ext.region_set_tags(self.id, json.dumps(list(self._tags)))

    def add_function(self, func) -> None:
        """Functions for line-by-line profiling: scope-profiler ignores them
        unless use_line_profiler=True, which spanscope does not provide yet."""
        if not callable(func):
            raise TypeError(f"functions must be callables, not {type(func).__name__}")

    def get_durations_numpy(self) -> np.ndarray:
        """Durations (int64 ns) of the calls since the last finalize, in start order."""
        return self._fetch(False, True)[1]

    def get_start_times_numpy(self) -> np.ndarray:
        """Start times (int64 ns since the session started) of those calls."""
        return self._fetch(True, False)[0] - _ext.session_start_ns()

    def get_end_times_numpy(self) -> np.ndarray:
        """End times (int64 ns since the session started) of those calls."""
        s, d = self._fetch(True, True)
        return s + d - _ext.session_start_ns()

    def wrap(self, func: Callable, recursive: bool = False) -> Callable:
        """``func`` wrapped so that each call is one call of this region."""
        wrapper = _ext.ProfiledFunction(func, self, bool(recursive))
        try:
            functools.update_wrapper(wrapper, func)
        except AttributeError:
            pass
        return wrapper


_ext.set_region_class(Region)


class RunConfig:
    """The settings a run resolved (defaults < TOML < options < keywords),
    read-only: ``config.label``, ``config.aggregation_mode``, ...,
    ``config.paused``, ``config.start_time_ns``; ``as_dict()`` for all."""

    __slots__ = ("_values",)

    def __init__(self, settings: dict, paused: bool):
        v = dict(settings)
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


class RegionHandle:
    """``define_region(name)``: a region definition that survives
    ``setup()``: each ``with`` enters the current session's region."""

    def __init__(self, manager, name, functions=None, tags=None):
        self._manager = manager
        self.name = name
        self._functions = None if functions is None else tuple(functions)
        self._tags = None if tags is None else tuple(tags)
        self._stack = ContextVar(f"spanscope_region_{id(self)}", default=())

    def __enter__(self):
        region = self._manager.region(self.name, functions=self._functions, tags=self._tags)
        entered = region.__enter__()
        self._stack.set((*self._stack.get(), region))
        return entered

    def __exit__(self, *exc):
        stack = self._stack.get()
        self._stack.set(stack[:-1])
        return stack[-1].__exit__(*exc)

    def __repr__(self):
        return f"RegionHandle({self.name!r})"


class RegionFactory:
    """``region_factory(name)``: ``with factory(**metadata):`` is one call of
    the region carrying that metadata."""

    def __init__(self, manager, name, tags=None):
        self._manager = manager
        self.name = name
        self._tags = tags

    def __call__(self, **metadata):
        @contextmanager
        def scope():
            with self._manager.metadata(**metadata), \
                    self._manager.region(self.name, tags=self._tags):
                yield
        return scope()


class _Session:
    """``ProfileManager.session(...)``: setup on entry, finalize on exit (even
    when the body raises).  Also a decorator (each call its own session)."""

    ROOT = "spanscope.session"

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
    """The results of the file at path: scope-profiler's ProfilingResults
    (spanscope.read_h5) where the package has it, else spanscope.read's
    Results."""
    import spanscope
    reader = getattr(spanscope, "read_h5", None)
    if reader is None:
        from spanscope.results import read as reader
    return reader(path)


def _write_json(results, path: str) -> None:
    """Writes results to path as scope-profiler's JSON (spanscope.write_json,
    delivered with the results API)."""
    import spanscope
    writer = getattr(spanscope, "write_json", None)
    if writer is None:
        raise FeatureNotAvailableError(
            "output='*.json' needs spanscope.write_json (scope-profiler's JSON), "
            "which is not available yet in this build")
    writer(results, path)


class ProfileManager:
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
    _mpi_calls = None          # profile_mpi_calls: the run's profile_mpi4py context

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
        if kind == "json":
            import spanscope
            if getattr(spanscope, "write_json", None) is None:
                raise FeatureNotAvailableError(
                    f"output {requested!r}: writing scope-profiler's JSON needs "
                    "spanscope.write_json, which is not available yet in this build")
        if region_tags is not None:
            region_tags = frozenset(region_tags)
        if cls._configured and _ext.is_active() and not cls._finalized_since_setup and not replace:
            raise RuntimeError("profiling is already set up and was not finalized; "
                               "call finalize() first or pass replace=True")
        prof = sys.modules.get("spanscope.profiler")
        rec = getattr(prof, "_recording_profile", None) if prof else None
        if rec is not None and rec._owned():
            # its session would end under it, and this run's file with it
            raise RuntimeError("a spanscope.profiler.profile is recording in its own "
                               "session; call ProfileManager.setup() before starting it "
                               "(the profile then records inside this session)")
        cls._cancel_auto_finalize()
        cls._stop_tracking()
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
            _ext.setup(path, aggregate=o["aggregation_mode"], memory_limit=o["memory_limit"],
                       chunk_size=o["chunk_size"], overflow=_OVERFLOW[o["overflow"]],
                       spill_dir=o["spill_dir"], label=o["label"],
                       compress_threshold=_COMPRESS[o["hdf5_compression"]])
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
        if o["track_async"] and not o["deactivate_profiling"]:
            from spanscope._tasks import TaskTracker
            cls._tracker = TaskTracker()
            cls._tracker.install()
        if o["profile_mpi_calls"] and not o["deactivate_profiling"]:
            # mpi4py's COMM_WORLD/COMM_SELF become profiled proxies once the
            # program imports it (spanscope.mpi_wrappers), until _stop_tracking
            from spanscope import mpi_wrappers
            cls._mpi_calls = mpi_wrappers.profile_mpi4py(lazy=True)
            cls._mpi_calls.__enter__()
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
        mpi_calls, cls._mpi_calls = cls._mpi_calls, None
        if mpi_calls is not None:  # profile_mpi_calls: mpi4py's globals back
            mpi_calls.__exit__(None, None, None)

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
        writes none), and keeps them for ``last_results()``.  Before
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
        if cls._deactivated or not _ext.is_active():
            cls._finalized_since_setup = True
            return None
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
        # file holds every rank, aggregate files have no calls to pool.
        readback = verbose and (cls._tracker is not None or _mpi.launched()
                                or bool(cls._settings.get("aggregation_mode")))
        tmp = None
        if path is None and (return_results or readback):
            fd, tmp = tempfile.mkstemp(prefix="spanscope-results-", suffix=".h5")
            os.close(fd)
        try:
            period = None
            if verbose and not readback:
                _, period = _ext.finalize_paths(path or tmp, True)
            else:
                _ext.finalize(path or tmp, verbose)
            cls._finalized_since_setup = True
            if file_path is not _UNSET:
                cls._file_path = path
            results = None
            if return_results:
                results = _read_results(path or tmp)
            table = (cls._table_source(path or tmp, requested, period, results)
                     if verbose else None)
            if requested is not None:
                cls._render(path, requested, kind, results)
        finally:
            if tmp is not None:
                os.unlink(tmp)
        if table is not None:
            cls._print_table(path is not None, *table)
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
        from spanscope._results_table import period_rows, print_region_table, region_rows
        rank, size = _mpi.world() if _mpi.launched() else (0, 1)
        if rank != 0:
            return
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
        "spanscope.session", and finalizes on exit."""
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
        return RunConfig(cls._settings, cls._paused)

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
        cls._paused = True

    @classmethod
    def resume(cls) -> None:
        """Recording again after pause(); harmless when not paused."""
        if not cls._configured:
            raise RuntimeError("ProfileManager.setup() must be called before resume()")
        if _ext.is_active():
            _ext.pause(False)
        cls._paused = False

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

    # -- regions ------------------------------------------------------------
    #: region(name, functions=None, tags=None) -> the Region of that name,
    #: created on first use.  Not a classmethod but the extension's
    #: RegionLookupType, a type whose call is the lookup: a known name is
    #: found in C without a bound method (_ext.c explains; docs/python.md,
    #: "Cost"), the rest goes to _region_slow.  profile_region is the very
    #: same object, and so is region.__func__.
    region = _ext.region_lookup
    profile_region = region

    @classmethod
    def _tags_off(cls, tags) -> bool:
        """Whether a region with these tags records nothing in this run: a
        region_tags filter it does not match, or an opt-in tag not enabled."""
        if cls._region_tag_filter is not None and not cls._region_tag_filter.intersection(tags):
            return True
        opt_in = _OPT_IN_TAGS.intersection(tags)
        if not opt_in or "*" in cls._enabled_tags:
            return False
        return opt_in.isdisjoint(cls._enabled_tags)

    @classmethod
    def _region_slow(cls, region_name, functions=None, tags=None):
        """region() for a name not in the registry, or with keywords."""
        if not isinstance(region_name, str):
            raise TypeError(f"region name must be str, not {type(region_name).__name__}")
        reg = _ext.registry
        r = reg.get(region_name)
        norm = None if tags is None else cls._check_tags(tags)
        if r is None:
            new = _ext.region_new(region_name)
            if norm:
                new._tags = norm
            new._off = cls._tags_off(new.tags)
            # two threads may create one name at once: the first one in wins,
            # so that region(name) is region(name) holds
            r = reg.setdefault(region_name, new)
            if r is new:
                r._push_attributes()
                if cls._configured and not cls._deactivated:
                    cls._capture_call_site(r, sys._getframe(1))
            elif norm is not None and r.tags != norm:
                raise ValueError(f"region {region_name!r} already has tags {r.tags!r}; "
                                 f"cannot reuse it with {norm!r}")
        elif norm is not None and r.tags != norm:
            raise ValueError(f"region {region_name!r} already has tags {r.tags!r}; "
                             f"cannot reuse it with {norm!r}")
        for func in functions or ():
            r.add_function(func)
        return r

    @staticmethod
    def _check_tags(tags) -> tuple:
        if isinstance(tags, str):
            raise TypeError("tags must be an iterable of str, not a str")
        norm = tuple(tags)
        for t in norm:
            if not isinstance(t, str):
                raise TypeError(f"tags must be str, not {type(t).__name__}")
        return norm

    @classmethod
    def _recorded_path(cls, filename: str) -> str:
        if cls._settings.get("metadata_detail") == "full":
            return os.path.abspath(filename)
        return _relative_source_path(filename)

    @classmethod
    def _capture_call_site(cls, region, frame) -> None:
        """The ``with`` that created region: file and line always, the
        block's text with capture_region_source (scope-profiler's rule).
        Skipped for spanscope's own frames (decorators, the tracer)."""
        mod = frame.f_globals.get("__name__", "")
        if mod == "spanscope" or mod.startswith("spanscope."):
            return
        fn, line = frame.f_code.co_filename, frame.f_lineno
        text = _with_source(fn, line) if cls._settings.get("capture_region_source") else None
        region.set_source(cls._recorded_path(fn), line, text)

    @classmethod
    def _capture_function(cls, region, func) -> None:
        """A decorated function's source: file and first line, its text
        with capture_region_source."""
        code = getattr(func, "__code__", None)
        if code is None:
            return
        text = None
        if cls._settings.get("capture_region_source"):
            try:
                text = "".join(inspect.getsourcelines(func)[0])
            except (OSError, TypeError):
                text = None
        region.set_source(cls._recorded_path(code.co_filename), code.co_firstlineno, text)

    @classmethod
    def profile(cls, region_name=None, recursive=None, metadata=None, record_outcome=False,
                tags=None):
        """Decorator: ``@profile``, ``@profile("name")``, ``@profile("name",
        recursive=True, metadata=..., record_outcome=True, tags=(...))``.
        With recursive=True every Python function called from inside becomes
        a region named "module.qualname".  ``metadata`` (a dict, or a
        callable of the call's arguments returning one) is attached to each
        call; ``record_outcome`` adds status "ok"/"error" and the
        exception's type name."""
        norm_tags = None if tags is None else cls._check_tags(tags)
        if metadata is not None and not (callable(metadata) or isinstance(metadata, dict)):
            raise TypeError("metadata must be a dict or a callable returning one")

        def decorate(func, name):
            if not callable(func):
                raise TypeError(f"@profile needs a callable, not {type(func).__name__}")
            rec = cls._recursive_default if recursive is None else bool(recursive)
            region = cls.region(name or func.__name__, tags=norm_tags)
            if cls._configured and not cls._deactivated:
                cls._capture_function(region, func)
            cls._decorated.setdefault(region.name, []).append((region, func))
            wrapper = region.wrap(func, recursive=rec)
            if metadata is not None or record_outcome:
                # the scope encloses the region's call, so the call lies in it
                wrapper = cls._with_call_metadata(wrapper, metadata, record_outcome)
                wrapper.region = region
            return wrapper

        if callable(region_name):
            return decorate(region_name, None)
        if region_name is not None and not isinstance(region_name, str):
            raise TypeError(f"region name must be str, not {type(region_name).__name__}")
        return lambda func: decorate(func, region_name)

    @classmethod
    def _with_call_metadata(cls, func, metadata, record_outcome):
        """func (the region's wrapper) inside a metadata scope per call
        (profile(metadata=..., record_outcome=...))."""
        @functools.wraps(func)
        def invoke(*args, **kwargs):
            values = {} if metadata is None else (
                metadata(*args, **kwargs) if callable(metadata) else metadata)
            if not record_outcome:
                with cls.metadata(**values):
                    return func(*args, **kwargs)
            with cls.metadata(**values) as event_metadata:
                try:
                    result = func(*args, **kwargs)
                except BaseException as error:
                    event_metadata.update(status="error", exception=type(error).__name__)
                    raise
                event_metadata["status"] = "ok"
                return result
        return invoke

    @classmethod
    @contextmanager
    def metadata(cls, **values):
        """Attaches key/value metadata to the calls that complete inside
        this scope (written to /rank_region_index/event_metadata, one dict
        per call, as scope-profiler does).  Values must be JSON-serialisable.
        RuntimeError in aggregation mode (no per-call data)."""
        if _ext.is_active() and cls._settings.get("aggregation_mode"):
            raise RuntimeError("scoped metadata requires per-call data and cannot be used in "
                               "aggregation mode")
        merged = {**(cls._metadata_context.get() or {}), **values}
        token = cls._metadata_context.set(merged)
        start = _ext.now_ns()
        try:
            yield merged
        finally:
            end = _ext.now_ns()
            cls._metadata_context.reset(token)
            if _ext.is_active():
                with cls._metadata_lock:
                    cls._metadata_scopes.append((start, end, merged))

    @classmethod
    def _write_event_metadata(cls) -> None:
        """Before a finalize: each region's calls of the period matched to
        the metadata scopes they lie wholly inside (outer scopes first,
        inner ones override), handed to the writer as one JSON list per
        region.  A region that gets calls between this and the write keeps
        none for this period (the writer checks the count)."""
        with cls._metadata_lock:
            scopes, cls._metadata_scopes = cls._metadata_scopes, []
        if not scopes:
            return
        scopes.sort(key=lambda s: s[1] - s[0], reverse=True)
        for name, r in list(cls._sync_registry().items()):
            starts, durs = r._fetch(True, True)
            if not len(starts):
                continue
            rows, any_md = [], False
            for s, e in zip(starts.tolist(), (starts + durs).tolist()):
                v = {}
                for s0, e0, md in scopes:
                    if s >= s0 and e <= e0:
                        v.update(md)
                rows.append(v)
                any_md |= bool(v)
            if any_md:
                try:
                    blob = json.dumps(rows)
                except TypeError as e:
                    raise TypeError(f"metadata of region {name!r} is not JSON-serialisable: "
                                    f"{e}") from None
                _ext.region_set_event_metadata(r.id, blob, len(rows))

    @classmethod
    def define_region(cls, region_name, functions=None, tags=None) -> RegionHandle:
        """A RegionHandle: a region definition that survives setup()."""
        definition = (None if functions is None else tuple(functions),
                      None if tags is None else tuple(tags))
        previous = cls._definitions.get(region_name)
        if previous is not None and previous != definition:
            raise ValueError(f"region {region_name!r} was already defined differently")
        cls.region(region_name, functions=functions, tags=tags)
        cls._definitions[region_name] = definition
        return RegionHandle(cls, region_name, functions=functions, tags=tags)

    @classmethod
    def region_factory(cls, region_name, *, tags=None) -> RegionFactory:
        """A RegionFactory: ``with factory(**metadata):`` is one call of the
        region with that metadata."""
        cls.define_region(region_name, tags=tags)
        return RegionFactory(cls, region_name, tags=tags)

    @classmethod
    def register_opt_in_tag(cls, *tags: str) -> None:
        """Marks tags as opt-in: regions carrying one record only in runs
        that enable it (setup(enable_tags=[...]), SPANSCOPE_ENABLE_TAGS,
        region_tags; "*" enables all).  Existing regions and decorators
        follow at once."""
        for tag in tags:
            if not isinstance(tag, str) or not tag:
                raise TypeError(f"opt-in tags must be non-empty strings, got {tag!r}")
        _OPT_IN_TAGS.update(tags)
        for r in _ext.registry.values():
            r._off = cls._tags_off(r.tags)
        for entries in cls._decorated.values():
            for r, _func in entries:
                r._off = cls._tags_off(r.tags)

    @classmethod
    def instrument(cls, module, *, include=("*",), exclude=(), prefix=None, tags=None):
        """Decorates the module-level functions of module whose names match
        include and not exclude (glob patterns), as regions named
        "<prefix or module>.<name>"; returns {name: wrapper}."""
        changed = {}
        module_name = getattr(module, "__name__", "module")
        for name, function in list(vars(module).items()):
            if not inspect.isfunction(function):
                continue
            if not any(fnmatch.fnmatch(name, p) for p in include):
                continue
            if any(fnmatch.fnmatch(name, p) for p in exclude):
                continue
            wrapped = cls.profile(f"{prefix or module_name}.{name}", tags=tags)(function)
            setattr(module, name, wrapped)
            changed[name] = wrapped
        return changed

    # -- running code under a session ---------------------------------------
    @classmethod
    def run(cls, func, *args, output=None, **kwargs):
        """Runs func(*args) in a session (no file unless output= names one)
        and returns its value; the results are in last_results()."""
        kwargs.setdefault("verbose", False)
        kwargs.setdefault("return_results", True)
        with cls.session(output=output, **kwargs) as s:
            value = func(*args)
        cls._last_results = s.results
        return value

    @classmethod
    def profile_script(cls, script_path, *, script_args=None, output=None, **kwargs):
        """Runs the Python script at script_path as __main__ in a session
        (with recursive_profile=True every function of the script becomes a
        region) and returns the results."""
        if output is not None:
            kwargs["output"] = output
        cls.setup(**kwargs)
        try:
            # as scope-profiler's profile_script (run_script): a root region
            # around the script only when tracing recursively
            cls._exec_script(script_path, script_args, cls._recursive_default,
                             only_user_code=True, root_region=False)
        finally:
            results = cls.finalize(verbose=False, return_results=True)
        return results

    @classmethod
    def run_script(cls, script_path, script_args=None, region_name=None,
                   only_user_code: bool = True, recursive: bool = True,
                   include_patterns=(), exclude_patterns=(), entrypoint=None) -> None:
        """Runs the Python script at script_path as __main__ in the session
        set up (scope-profiler 0.7.5's run_script; call setup() before and
        finalize() after).  With recursive=True (the default) every Python
        function it calls becomes a region named "<module>.<qualname>",
        inside a root region named region_name (default: the script's file
        name); only the script's own code with only_user_code (the standard
        library and installed packages left out), everything without.
        include_patterns / exclude_patterns are glob patterns (Python's
        fnmatch rules) on those names: a function is recorded when it
        matches an include pattern (none given: every function does) and no
        exclude pattern.  entrypoint: the function whose name (co_name)
        equals it is recorded under that name.  The filters are decided in
        the C tracer once per function, not per call.  recursive=False runs
        the script plainly: only its explicit regions record, no root region,
        and the filters do nothing (as in scope-profiler).  sys.argv is
        [script_path, *script_args] while it runs."""
        include_patterns = _patterns(include_patterns, "include_patterns")
        exclude_patterns = _patterns(exclude_patterns, "exclude_patterns")
        if entrypoint is not None and not isinstance(entrypoint, str):
            raise TypeError(f"entrypoint must be a str or None, not {type(entrypoint).__name__}")
        if region_name is not None and not isinstance(region_name, str):
            raise TypeError(f"region_name must be a str or None, not {type(region_name).__name__}")
        cls._exec_script(script_path, script_args, bool(recursive), bool(only_user_code),
                         region_name=region_name, root_region=bool(recursive),
                         include_patterns=include_patterns, exclude_patterns=exclude_patterns,
                         entrypoint=entrypoint)

    @classmethod
    def _exec_script(cls, script_path, script_args, recursive: bool,
                     only_user_code: bool, *, region_name=None, root_region: bool = True,
                     include_patterns=(), exclude_patterns=(), entrypoint=None) -> None:
        """Runs the script as __main__ in the session set up, inside a
        region named region_name (default: its file name) -- without one
        when neither root_region nor recursive (run_script's plain run) --
        the one body of run_script, profile_script
        and ``spanscope run``.  recursive: every function it calls becomes a
        region ("<module>.<qualname>"), only its own code with only_user_code
        (the standard library and installed packages left out,
        scope-profiler's default), everything without (scope-profiler's
        ``run --all``); include_patterns / exclude_patterns / entrypoint are
        the tracer's name filters (tuples of str, str or None: see
        run_script).  sys.argv and sys.path are the script's while it runs;
        the tracer's filters are cleared after, however it ends."""
        script_path = os.path.abspath(os.fspath(script_path))
        old_argv, old_path = sys.argv, list(sys.path)
        sys.argv = [script_path, *(script_args or [])]
        sys.path.insert(0, os.path.dirname(script_path))
        try:
            name = region_name or os.path.basename(script_path)
            root = cls.region(name) if root_region or recursive else None
            if recursive:
                _ext.set_trace_skip(_system_prefixes() if only_user_code else None)
                _ext.set_trace_filters(tuple(include_patterns), tuple(exclude_patterns),
                                       entrypoint)
                runner = root.wrap(runpy.run_path, recursive=True)
                runner(script_path, run_name="__main__")
            elif root is not None:
                with root:
                    runpy.run_path(script_path, run_name="__main__")
            else:
                runpy.run_path(script_path, run_name="__main__")
        finally:
            _ext.set_trace_skip(None)
            _ext.set_trace_filters((), (), None)
            sys.argv, sys.path[:] = old_argv, old_path

    @classmethod
    def profile_command(cls, command, *, output=None, recursive=False, all=False,
                        mpi_calls=False):
        """Runs a Python script under ``spanscope run`` in a child process,
        as scope-profiler runs ``scope-profiler run``: ``command`` is the
        script and its arguments (a leading ``sys.executable``, ``python``
        or ``python3`` is dropped); ``recursive`` makes every function of the
        script a region, ``all`` those of the standard library and installed
        packages too, ``mpi_calls`` records mpi4py's calls
        (profile_mpi_calls).  The profile goes to ``output`` (default
        profiling_data.h5; .json / .html render that format).  Returns the
        subprocess.CompletedProcess with ``profile_results``: the profile
        read back (spanscope.load) when the script exited with 0 and wrote a
        file that is not HTML, else None.  ValueError without a script;
        FeatureNotAvailableError for a program that is not a Python script
        (the zero-touch runner of another issue)."""
        command = [os.fspath(value) for value in command]
        if command and (command[0] == sys.executable
                        or os.path.basename(command[0]) in {"python", "python3"}):
            command = command[1:]
        if not command:
            raise ValueError("profile_command() requires a Python script path")
        _check_python_script(command[0])
        output_path = os.fspath(output) if output is not None else "profiling_data.h5"
        options = []
        if recursive or all:
            options.append("--recursive")
        if all:
            options.append("--all")
        if mpi_calls:
            options.append("--mpi-calls")
        completed = subprocess.run([sys.executable, "-m", "spanscope", "run", "-q",
                                    "-o", output_path, *options, *command], check=False)
        completed.profile_results = None
        if (completed.returncode == 0 and os.path.exists(output_path)
                and _output_kind(output_path) != "html"):
            import spanscope
            completed.profile_results = spanscope.load(output_path)
        return completed

    @classmethod
    def setup_from_env(cls, **overrides):
        """setup() configured from the environment: SPANSCOPE_CONFIG (a TOML
        file), SPANSCOPE_OUTPUT, SPANSCOPE_RECURSIVE, SPANSCOPE_AUTO_FINALIZE,
        SPANSCOPE_LABEL, SPANSCOPE_AGGREGATION_MODE,
        SPANSCOPE_DEACTIVATE_PROFILING, SPANSCOPE_MEMORY_LIMIT,
        SPANSCOPE_ENABLE_TAGS, each with scope-profiler's SCOPE_PROFILER_*
        name as an alias.  Read by the C core (sps_env_read), the same
        reader as C's sps_setup_from_env.  Precedence: the TOML file < the
        other variables < keywords."""
        env = _ext.env_read()
        for key, value in env.items():
            if key == "enable_tags":
                value = tuple(t.strip() for t in value.split(",") if t.strip())
            if key == "output" and ("file_path" in overrides
                                    or "deactivate_file_output" in overrides):
                continue  # an explicit destination wins over the variable
            overrides.setdefault(key, value)
        return cls.setup(**overrides)

    # -- queries --------------------------------------------------------------
    @classmethod
    def _sync_registry(cls) -> dict:
        """The registry, plus regions recorded in this session by wrappers
        created before the last setup()."""
        reg = _ext.registry
        for rid in _ext.recorded_ids():
            name = _ext.region_name(rid)
            if name is not None and name not in reg:
                cls.region(name)
        return reg

    @classmethod
    def get_region(cls, name: str):
        """The region named name in this session, or None."""
        reg = _ext.registry
        return reg.get(name) if name in reg else cls._sync_registry().get(name)

    @classmethod
    def get_all_regions(cls) -> dict:
        """name -> Region for every region of this session, in creation order."""
        return cls._sync_registry()

    @classmethod
    def registered_regions(cls) -> tuple:
        return tuple(cls._sync_registry())

    @classmethod
    def recorded_regions(cls) -> tuple:
        ids = set(_ext.recorded_ids())
        return tuple(n for n, r in cls._sync_registry().items() if r.id in ids)

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


_ext.set_region_slow(ProfileManager._region_slow)
