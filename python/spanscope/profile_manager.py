"""scope-profiler's ``ProfileManager`` API on spanscope's C core.

Everything that runs per call lives in the C extension (``spanscope._ext``):
``Region.__enter__``/``__exit__``, the decorator's wrapper and the recursive
tracer.  This module gives the API its shape: options, sessions, the
registry of regions by name, numpy views of the recorded calls.
"""

from __future__ import annotations

import atexit
import difflib
import functools
import os
import sys
from typing import Any, Callable

import numpy as np

from spanscope import _ext, _mpi

__all__ = ["ProfileManager", "ProfilingRun", "Region", "RegionStats"]

#: Options ``setup()`` accepts, with their defaults.
_OPTIONS: dict[str, Any] = {
    "file_path": "profiling_data.h5",
    "label": None,
    "aggregation_mode": False,
    "recursive_profile": False,
    "deactivate_profiling": False,
    "deactivate_file_output": False,
    "memory_limit": 0,
    "chunk_size": 0,
    "overflow": "spill",
    "spill_dir": None,
    "hdf5_compression": "auto",
    # accepted for scope-profiler compatibility; see docs/python.md
    "buffer_limit": 1024,
    "metadata_detail": "minimal",
    "track_threads": False,
    "output_mode": "auto",
}

#: scope-profiler integrations spanscope does not provide (yet): False is
#: accepted, True raises NotImplementedError naming the option.
_UNSUPPORTED = (
    "use_likwid", "use_line_profiler", "use_memray", "memray_native_traces",
    "memray_trace_python_allocators", "memray_follow_fork", "use_nvtx",
    "use_gpu_timing", "gpu_sync_on_exit", "profile_mpi_calls", "track_async",
    "capture_region_source",
)
_UNSUPPORTED_VALUES = {"perf_events": None, "memory_profile_path": None,
                       "gpu_timing_backend": "auto", "hdf5_compression_level": None,
                       "hdf5_chunk_size": None}

_BOOL_OPTIONS = {"aggregation_mode", "recursive_profile", "deactivate_profiling",
                 "deactivate_file_output", "track_threads"}
_OVERFLOW = {"spill": _ext.OVERFLOW_SPILL, "drop": _ext.OVERFLOW_DROP,
             "grow": _ext.OVERFLOW_GROW}
_UNSET = object()


def _check_options(opts: dict[str, Any]) -> dict[str, Any]:
    """Validates setup options; returns the full option dict with defaults."""
    known = set(_OPTIONS) | set(_UNSUPPORTED) | set(_UNSUPPORTED_VALUES)
    for key in opts:
        if key not in known:
            close = difflib.get_close_matches(key, sorted(known), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise TypeError(f"setup() got an unknown option {key!r}{hint}")
    for key in _UNSUPPORTED:
        if opts.get(key):
            raise NotImplementedError(f"spanscope does not implement {key}=True yet")
    for key, default in _UNSUPPORTED_VALUES.items():
        if key in opts and opts[key] != default:
            raise NotImplementedError(f"spanscope does not implement {key}={opts[key]!r} yet")
    out = dict(_OPTIONS)
    out.update({k: v for k, v in opts.items() if k in _OPTIONS})
    for key in _BOOL_OPTIONS:
        if not isinstance(out[key], bool):
            raise TypeError(f"{key} must be a bool, not {type(out[key]).__name__}")
    fp = out["file_path"]
    if fp is not None and not isinstance(fp, (str, os.PathLike)):
        raise TypeError(f"file_path must be a str or os.PathLike, not {type(fp).__name__}")
    if out["label"] is not None and not isinstance(out["label"], str):
        raise TypeError(f"label must be a str, not {type(out['label']).__name__}")
    for key in ("memory_limit", "chunk_size", "buffer_limit"):
        if not isinstance(out[key], int) or isinstance(out[key], bool) or out[key] < 0:
            raise TypeError(f"{key} must be a non-negative int, not {out[key]!r}")
    if out["overflow"] not in _OVERFLOW:
        raise ValueError(f"overflow must be one of {sorted(_OVERFLOW)}, not {out['overflow']!r}")
    if out["hdf5_compression"] not in ("auto", None, "gzip", "none"):
        raise ValueError("hdf5_compression must be 'auto', 'gzip' or None")
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
    the C core, and these methods read them."""

    __slots__ = ()

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


class ProfilingRun:
    """What ``setup()`` returns: the run's file path and state."""

    def __init__(self, file_path):
        self.file_path = file_path

    @property
    def is_active(self) -> bool:
        return ProfileManager.is_active()

    def finalize(self, **kwargs):
        return ProfileManager.finalize(**kwargs)

    def __repr__(self):
        return f"ProfilingRun(file_path={self.file_path!r}, is_active={self.is_active})"


class _Session:
    """``ProfileManager.session(...)``: setup on entry, finalize on exit (even
    when the body raises).  Also a decorator."""

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
        self._root.__exit__(*exc)
        self.results = self._m.finalize(verbose=self._verbose, return_results=self._return_results)
        return False

    @property
    def file_path(self):
        return self.run.file_path if self.run else None

    def __call__(self, func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self:
                return func(*args, **kwargs)
        return wrapper


class ProfileManager:
    """The profiling session of this process (class-level, like scope-profiler's)."""

    _file_path = None
    _recursive_default = False
    _configured = False
    _deactivated = False
    _finalized_since_setup = False
    _atexit_registered = False

    # -- session ------------------------------------------------------------
    @classmethod
    def setup(cls, options=None, *, auto_finalize: bool = False, output=_UNSET,
              replace: bool = False, **overrides) -> ProfilingRun:
        """Starts a session that records at once; clears all regions.

        Keywords are validated: an unknown one raises TypeError naming the
        closest valid option.  ``output=None`` writes no file.  Calling setup
        while a run that was never finalized is active raises RuntimeError
        unless ``replace=True``.
        """
        opts = dict(options or {})
        opts.update(overrides)
        if output is not _UNSET:
            if output is None:
                opts["deactivate_file_output"] = True
            else:
                opts["file_path"] = output
        o = _check_options(opts)
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
        _ext.shutdown()
        _ext.clear_registry()
        path = None if o["deactivate_file_output"] or o["file_path"] is None else os.fspath(o["file_path"])
        compress = {"auto": 0, "gzip": 1, None: -1, "none": -1}[o["hdf5_compression"]]
        if not o["deactivate_profiling"]:
            _mpi.ensure_initialized()  # under mpirun: a collective session (docs/mpi.md)
            _ext.setup(path, aggregate=o["aggregation_mode"], memory_limit=o["memory_limit"],
                       chunk_size=o["chunk_size"], overflow=_OVERFLOW[o["overflow"]],
                       spill_dir=o["spill_dir"], label=o["label"], compress_threshold=compress)
        cls._file_path = path
        cls._recursive_default = o["recursive_profile"]
        cls._configured = True
        cls._deactivated = o["deactivate_profiling"]
        cls._finalized_since_setup = False
        if auto_finalize and not cls._atexit_registered:
            atexit.register(cls._finalize_at_exit)
            cls._atexit_registered = True
        return ProfilingRun(path)

    @classmethod
    def _finalize_at_exit(cls):
        if _ext.is_active() and not cls._finalized_since_setup:
            cls.finalize(verbose=False)

    @classmethod
    def finalize(cls, verbose: bool = True, return_results: bool = False, *, file_path=_UNSET):
        """Writes what was recorded since the previous finalize (a checkpoint:
        recording goes on) and prints the summary table when verbose.

        If the file cannot be written, OSError names the path and nothing is
        lost: call finalize(file_path=...) with another path to write it all.
        """
        if not cls._configured:
            raise RuntimeError("finalize() called before setup(): there is no profiling session")
        if not isinstance(verbose, bool):
            raise TypeError(f"verbose must be a bool, not {type(verbose).__name__}")
        path = cls._file_path if file_path is _UNSET else (
            None if file_path is None else os.fspath(file_path))
        if cls._deactivated or not _ext.is_active():
            cls._finalized_since_setup = True
            return None
        text = _ext.finalize(path, verbose)
        cls._finalized_since_setup = True
        if file_path is not _UNSET:
            cls._file_path = path
        if verbose and text:
            print(text, end="")
        if return_results and path:
            from spanscope.results import read
            return read(path)
        return None

    @classmethod
    def session(cls, options=None, *, verbose: bool = True, return_results: bool = False,
                **setup_kwargs):
        """A context manager (and decorator) that sets up, opens a root region
        "spanscope.session", and finalizes on exit."""
        if options is not None:
            setup_kwargs["options"] = options
        return _Session(cls, setup_kwargs, verbose, return_results)

    @classmethod
    def is_active(cls) -> bool:
        return bool(_ext.is_active())

    @classmethod
    def is_configured(cls) -> bool:
        return cls._configured

    # -- regions ------------------------------------------------------------
    #: region(name) -> the Region of that name, created on first use (C).
    region = classmethod(_ext.region)
    profile_region = region  # the original name: the very same object

    @classmethod
    def profile(cls, region_name=None, recursive=None, metadata=None, record_outcome=False):
        """Decorator: ``@profile``, ``@profile("name")``, ``@profile("name",
        recursive=True)``.  With recursive=True every Python function called
        from inside becomes a region named "module.qualname"."""
        if metadata is not None or record_outcome:
            raise NotImplementedError("spanscope does not record per-call metadata or outcomes yet")

        def decorate(func, name):
            if not callable(func):
                raise TypeError(f"@profile needs a callable, not {type(func).__name__}")
            rec = cls._recursive_default if recursive is None else bool(recursive)
            return cls.region(name or func.__name__).wrap(func, recursive=rec)

        if callable(region_name):
            return decorate(region_name, None)
        if region_name is not None and not isinstance(region_name, str):
            raise TypeError(f"region name must be a str, not {type(region_name).__name__}")
        return lambda func: decorate(func, region_name)

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
        """{'dropped': events dropped by the overflow policy, 'misuse': nesting repairs}"""
        return _ext.counters()

    @classmethod
    def _reset(cls):
        """Ends any session and forgets everything (for tests)."""
        _ext.shutdown()
        _ext.clear_registry()
        cls._configured = False
        cls._file_path = None
        cls._finalized_since_setup = False
