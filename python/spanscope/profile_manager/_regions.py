"""The regions of the scope-profiler face: the live Region (its calls are
the C core's), define_region / region_factory handles, tags, the decorator,
scoped per-call metadata, source capture, and the registry queries.
_RegionsMixin holds ProfileManager's class methods for them."""

from __future__ import annotations

import functools
import os
import sys
import threading
import time
from contextlib import contextmanager
from contextvars import ContextVar
from collections.abc import Callable

from spanscope import _ext

# numpy is imported where it is used (start-up: `spanscope run` and
# `import spanscope` need no numpy until something reads calls back)


#: Opt-in tags (register_opt_in_tag): their regions record only when a run
#: enables them.  Process-wide, as in scope-profiler.
_OPT_IN_TAGS: set[str] = set()


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
    block), else that one line; None when the file cannot be read.  The
    file is parsed once and its ``with`` statements indexed by line once:
    a new region costs a dict lookup, not a walk of the file's tree."""
    import linecache  # here, as inspect, json and fnmatch below: not at every start
    lines = linecache.getlines(filename)
    if not lines:
        return None
    spans = _with_source.cache.get(filename)
    if spans is None:
        import ast
        spans = {}
        try:
            tree = ast.parse("".join(lines), filename=filename)
        except (SyntaxError, ValueError):
            tree = None
        for node in (ast.walk(tree) if tree is not None else ()):
            if isinstance(node, (ast.With, ast.AsyncWith)):
                spans.setdefault(node.lineno, node.end_lineno or node.lineno)
        _with_source.cache[filename] = spans
    end = spans.get(lineno)
    if end is not None:
        return "".join(lines[lineno - 1:end])
    return linecache.getline(filename, lineno) or None


_with_source.cache = {}


def call_site_source(filename: str, lineno: int) -> str | None:
    """scope-profiler's name for what a region's source capture records:
    the text of the ``with`` block starting at ``lineno`` of ``filename``,
    else that one line, else None (the file cannot be read)."""
    return _with_source(filename, lineno)


def function_source(func) -> tuple[str, int, str] | None:
    """A decorated function's source file, first line and text (what
    ``@profile`` records with capture_region_source), or None when its
    source cannot be recovered (exec, the REPL, a builtin)."""
    import inspect
    try:
        lines, first = inspect.getsourcelines(func)
        filename = inspect.getsourcefile(func) or func.__code__.co_filename
    except (OSError, TypeError, AttributeError):
        return None
    return filename, first, "".join(lines)


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


#: end_ns of a thread still running (and done_ns of a task not finished).
UNKNOWN = -1


class ThreadRecord:
    """One thread as a tracker (or the core) knows it: ``index`` (dense),
    ``ident``, ``native_id``, ``name``, ``daemon``, ``start_ns``,
    ``end_ns`` (UNKNOWN while it runs), ``cpu_ns`` (exact once it ended,
    sampled before), ``task`` (the TaskRecord running on it, or None)."""

    __slots__ = ("index", "ident", "native_id", "name", "daemon", "start_ns", "end_ns",
                 "cpu_ns", "task")

    def __init__(self, index: int, thread) -> None:
        self.index = int(index)
        self.ident = int(getattr(thread, "ident", 0) or 0)
        self.native_id = int(getattr(thread, "native_id", 0) or 0)
        self.name = str(getattr(thread, "name", ""))
        self.daemon = bool(getattr(thread, "daemon", False))
        self.start_ns = time.perf_counter_ns()
        self.end_ns = UNKNOWN
        self.cpu_ns = time.thread_time_ns()
        self.task = None

    @classmethod
    def _from_core(cls, index: int) -> "ThreadRecord":
        """Thread ``index`` of the running session's core thread table."""
        info = _ext.thread_info(index)
        rec = cls.__new__(cls)
        rec.index, rec.ident, rec.daemon, rec.task = int(index), 0, False, None
        rec.native_id, rec.start_ns, rec.name = ((0, UNKNOWN, "") if info is None
                                                 else (int(info[0]), int(info[1]), info[2]))
        for t in threading.enumerate():  # the Python thread, when it still runs
            if getattr(t, "native_id", None) == rec.native_id:
                rec.ident, rec.daemon, rec.name = int(t.ident or 0), bool(t.daemon), t.name
                break
        rec.end_ns, rec.cpu_ns = UNKNOWN, 0
        return rec

    @property
    def alive(self) -> bool:
        """Whether the thread had not ended when last seen."""
        return self.end_ns == UNKNOWN

    def sample_cpu(self) -> None:
        """Refreshes cpu_ns; only meaningful on the thread itself."""
        self.cpu_ns = time.thread_time_ns()

    def __repr__(self) -> str:
        state = "alive" if self.alive else "finished"
        return (f"ThreadRecord(index={self.index}, name={self.name!r}, "
                f"ident={self.ident}, {state})")


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

    #: ProfileManager (set by profile_manager/__init__.py: the class above)
    _manager = None

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
        import numpy as np

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
        return self._manager._settings.get("buffer_limit", 1024)

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
            import json
            _ext.region_set_tags(self.id, json.dumps(list(self._tags)))

    def add_function(self, func) -> None:
        """A function for line-by-line profiling: in a session with
        ``use_line_profiler=True``, handed to this region's
        line_profiler.LineProfiler (profile_manager/_lines.py); otherwise
        ignored, as scope-profiler ignores it."""
        if not callable(func):
            raise TypeError(f"functions must be callables, not {type(func).__name__}")
        run = self._line_profile_run()
        if run is not None:
            run.add_function(self.name, func)

    def _line_profile_run(self):
        """The session's LineProfileRun when this region is line-profiled
        (use_line_profiler=True, the region recording), else None."""
        manager = self._manager
        run = getattr(manager, "_line_run", None) if manager is not None else None
        if run is None or self._off or not manager._configured or manager._deactivated:
            return None
        return run

    def get_stats(self):
        """line_profiler's ``LineStats`` of this region since setup()
        (scope-profiler's LineProfilerRegion.get_stats): ``timings``
        ``{(filename, first line, function): [(line, hits, time), ...]}``
        and ``unit`` (seconds per time unit).  RuntimeError outside a
        ``use_line_profiler=True`` session."""
        run = self._line_profile_run()
        if run is None:
            raise RuntimeError(f"region {self.name!r} is not line-profiled: get_stats() needs "
                               "a session set up with use_line_profiler=True")
        stats = run.stats(self.name)
        if stats is None:  # no call and no function yet: an empty profile
            stats = run.profiler(self.name).get_stats()
        return stats

    def print_stats(self, stream=None) -> None:
        """line_profiler's per-line table of this region (its
        print_stats) on stream (default sys.stdout).  RuntimeError outside
        a ``use_line_profiler=True`` session."""
        run = self._line_profile_run()
        if run is None:
            raise RuntimeError(f"region {self.name!r} is not line-profiled: print_stats() "
                               "needs a session set up with use_line_profiler=True")
        run.print_stats(self.name, stream)

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
        """``func`` wrapped so that each call is one call of this region.
        In a session set up with ``deactivate_profiling=True`` (the region
        is a DisabledProfileRegion for good) ``func`` itself, as
        scope-profiler's disabled region returns it: nothing to pay per
        call.  Otherwise a wrapper that records whenever a session does
        (decorators made before setup() or behind an opt-in tag follow)."""
        if not callable(func):
            raise TypeError(f"wrap needs a callable, not {type(func).__name__}")
        manager = self._manager
        if manager is not None and manager._configured and manager._deactivated:
            return func
        self.add_function(func)  # use_line_profiler: its lines, as scope-profiler's wrap
        return self._wrap(func, recursive)

    def _wrap(self, func: Callable, recursive: bool = False) -> Callable:
        """The C wrapper (ProfiledFunction) of func for this region."""
        wrapper = _ext.ProfiledFunction(func, self, bool(recursive))
        try:
            functools.update_wrapper(wrapper, func)
        except AttributeError:
            pass
        return wrapper

    # -- scope-profiler's threaded-region views --------------------------------
    @property
    def threads(self) -> list:
        """The threads that completed a call of this region since the last
        finalize, in the core's thread order (index = the core's thread
        index, as in the file's thread_ids): ThreadRecord objects
        with index, name, native_id.
        One pass over the period's spans (sps_spans)."""
        if not _ext.is_active():
            return []
        try:
            raw = _ext.spans(0, 2**63 - 1)
        except Exception:  # aggregate sessions keep no spans
            return []
        import numpy as np

        spans = np.frombuffer(raw, dtype=_span_dtype())
        indices = np.unique(spans["thread"][spans["region"] == self.id])
        return [ThreadRecord._from_core(int(i)) for i in indices.tolist()]

    def open_slots(self) -> np.ndarray:
        """One entry per call of this region still open, on any thread: the
        thread index holding it (int64, ascending).  scope-profiler returns
        buffer slots; spanscope has none, the count is what it means."""
        calls = _ext.open_calls_all() if _ext.is_active() else None
        held = [t for t, _depth, name in (calls or ()) if name == self.name]
        import numpy as np

        return np.array(sorted(held), dtype=np.int64)


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


_ext.set_region_class(Region)

@functools.lru_cache(maxsize=None)
def _span_dtype():
    """sps_span_t (include/spanscope.h), as _ext.spans returns the spans: a
    numpy dtype, made on first use (numpy is not imported before)."""
    import numpy as np

    dt = np.dtype([("start_ns", "<i8"), ("end_ns", "<i8"), ("self_ns", "<i8"),
                   ("parent", "<i8"), ("region", "<u4"), ("thread", "<u4"),
                   ("depth", "<u4"), ("stack", "<u4"), ("seq", "<u8")])
    assert dt.itemsize == _ext.SPAN_SIZE
    return dt


# -- scope-profiler's region classes -----------------------------------------
def _region_mode(region) -> str:
    """What a live region is in its session, by scope-profiler's class rule
    (ProfileManager._select_region_class): "disabled" (no session set up,
    deactivate_profiling, or an opt-in tag / region_tags filter turning
    it off), "line" (use_line_profiler), "full" (use_likwid), "gpu" /
    "gpu_nvtx" (use_gpu_timing, without / with use_nvtx), "nvtx"
    (use_nvtx), "aggregate" (aggregation_mode), "threaded" (track_threads /
    track_async) or "time"."""
    manager = region._manager
    if manager is None or not manager._configured or manager._deactivated or region._off:
        return "disabled"
    settings = manager._settings
    if settings.get("use_line_profiler"):
        return "line"
    if settings.get("use_likwid"):
        return "full"
    if settings.get("use_gpu_timing"):
        return "gpu_nvtx" if settings.get("use_nvtx") else "gpu"
    if settings.get("use_nvtx"):
        return "nvtx"
    if settings.get("aggregation_mode"):
        return "aggregate"
    if settings.get("track_threads") or settings.get("track_async"):
        return "threaded"
    return "time"


class _RegionKind(type):
    """Metaclass of scope-profiler's region classes over spanscope's one
    Region: ``isinstance(region, K)`` holds when the live region is, in its
    session now, what K records (its ``_modes``).  The class of a region is
    a view of its session's settings, not a second region type: the calls
    of every kind are the C core's, through the one Region."""

    def __instancecheck__(cls, obj) -> bool:
        if not isinstance(obj, Region):
            return False
        modes = cls.__dict__.get("_modes")
        return modes is None or _region_mode(obj) in modes

    def __subclasscheck__(cls, sub) -> bool:
        return type.__subclasscheck__(cls, sub)


class _RegionKindBase(Region, metaclass=_RegionKind):
    __slots__ = ()

    def __new__(cls, *args, **kwargs):
        raise TypeError(f"{cls.__name__} is the kind of a live region, not a constructor: "
                        "ProfileManager.region(name) returns the region, and "
                        f"isinstance(region, {cls.__name__}) says whether it is one")


#: scope-profiler's base class of every region: spanscope's live Region.
BaseProfileRegion = Region


class DisabledProfileRegion(_RegionKindBase):
    """A region that records nothing: no session set up, a session with
    ``deactivate_profiling=True`` (where ``wrap(func)`` returns ``func``
    and ``ptr``/``capacity`` stay 0), or a region whose opt-in tag is not
    enabled or that a ``region_tags`` filter leaves out."""

    __slots__ = ()
    _modes = frozenset({"disabled"})


class TimeOnlyProfileRegion(_RegionKindBase):
    """A region of a session that records each call's start and end (the
    default): every active region that is not threaded, aggregated,
    line-profiled or LIKWID-counted (the NVTX and CUDA-event kinds below
    are time-only regions too, as in scope-profiler)."""

    __slots__ = ()
    _modes = frozenset({"time", "nvtx", "gpu", "gpu_nvtx"})


class NVTXProfileRegion(TimeOnlyProfileRegion):
    """A region of a session with ``use_nvtx=True`` (and no GPU timing):
    its calls are timed and each is an NVTX range (docs/nvtx-itt.md)."""

    __slots__ = ()
    _modes = frozenset({"nvtx"})


class CUDATimingProfileRegion(TimeOnlyProfileRegion):
    """A region of a session with ``use_gpu_timing=True``: each call is
    timed on the host and by a CUDA event pair on the device (the device
    time is the file's ``gpu_durations``; docs/device.md "gpu_timing")."""

    __slots__ = ()
    _modes = frozenset({"gpu", "gpu_nvtx"})


class CUDATimingNVTXProfileRegion(CUDATimingProfileRegion):
    """A region of a session with ``use_gpu_timing=True`` and
    ``use_nvtx=True``: CUDA-event timing and an NVTX range per call."""

    __slots__ = ()
    _modes = frozenset({"gpu_nvtx"})


class ThreadedProfileRegion(_RegionKindBase):
    """A region of a session with ``track_threads=True`` or
    ``track_async=True``: each call carries its thread (and task).
    spanscope's core keeps a buffer per thread for every region, so this
    differs from TimeOnlyProfileRegion only in what the file describes
    (``threads``, ``open_slots()`` are there for every region)."""

    __slots__ = ()
    _modes = frozenset({"threaded"})


class AggregateProfileRegion(_RegionKindBase):
    """A region of a session with ``aggregation_mode=True``: statistics per
    region, no per-call data."""

    __slots__ = ()
    _modes = frozenset({"aggregate"})


class FullProfileRegion(_RegionKindBase):
    """A region of a session with ``use_likwid=True`` (timing and LIKWID
    markers).  LIKWID is issue 33: setup() refuses it for now, so no live
    region is one yet."""

    __slots__ = ()
    _modes = frozenset({"full"})


class LineProfilerRegion(_RegionKindBase):
    """A region of a session with ``use_line_profiler=True``: the C core
    times its calls, line_profiler profiles its functions line by line
    (``get_stats()``, ``print_stats()``; docs/line-profiles.md)."""

    __slots__ = ()
    _modes = frozenset({"line"})


class _RegionsMixin:
    """ProfileManager's regions: lookup, tags, @profile, metadata, definitions, queries.
    Mixed into ProfileManager (profile_manager/__init__.py), whose class
    attributes hold the state; every method is a classmethod of it."""

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
                import inspect
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
            # use_line_profiler: the function itself to line_profiler, before
            # any wrapper (a later setup() hands it again: _rebind)
            region.add_function(func)
            # the C wrapper even when the region is disabled now: it follows
            # the settings of later sessions (opt-in tags, a new setup)
            wrapper = region._wrap(func, recursive=rec)
            if metadata is not None or record_outcome:
                # the scope encloses the region's call, so the call lies in it
                wrapper = cls._with_call_metadata(wrapper, metadata, record_outcome, region)
                wrapper.region = region
            return wrapper

        if callable(region_name):
            return decorate(region_name, None)
        if region_name is not None and not isinstance(region_name, str):
            raise TypeError(f"region name must be str, not {type(region_name).__name__}")
        return lambda func: decorate(func, region_name)

    @classmethod
    def _with_call_metadata(cls, func, metadata, record_outcome, region):
        """func (the region's wrapper) inside a metadata scope per call
        (profile(metadata=..., record_outcome=...)).  While the region
        records nothing (no session, or an opt-in tag that is off) the
        metadata callable is not called: func straight through."""
        @functools.wraps(func)
        def invoke(*args, **kwargs):
            if region._off or not _ext.is_active():
                return func(*args, **kwargs)
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
                    import json
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
        import fnmatch
        import inspect
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
