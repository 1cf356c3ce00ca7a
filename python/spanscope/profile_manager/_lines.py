"""The line_profiler side of a ``use_line_profiler=True`` run, as
scope-profiler 0.7.5's ``LineProfilerRegion`` drives it.

The timing of every region stays the C core's (``sps_begin`` / ``sps_end``);
line_profiler (PyPI's ``line_profiler``, the ``line-profiler`` extra) does the
per-line part.  :class:`LineProfileRun` is one run of it:

* one ``line_profiler.LineProfiler`` per region, created on the region's
  first call or first function: a region's profile holds the lines of *its*
  functions executed while *it* is open, as scope-profiler's per-region
  profilers do;
* the functions: ``@profile`` hands the decorated function
  (:meth:`add_function`, before any wrapper), ``region(name,
  functions=[...])`` / ``Region.add_function`` the listed ones, and a
  ``with region:`` block the function holding it (found from the calling
  frame, as scope-profiler's ``enter_frame``; line_profiler profiles a
  function's later calls, not the one already running, so a function
  holding a ``with`` block shows from its next call on -- scope-profiler's
  limitation too);
* :meth:`start` / :meth:`stop` are the C core's call hooks
  (``_ext.set_call_hooks``): right after each begin and right before each
  end, ``enable_by_count`` / ``disable_by_count`` of the region's profiler on
  the calling thread (nested and recursive calls count, as line_profiler
  counts them);
* :meth:`records` at finalize: each region's ``LineStats`` as
  scope-profiler's records (results/_lines.py), only what ran since the
  previous finalize -- a finalize is a checkpoint, and each file holds its
  period, its line profiles as its timings;
* :meth:`trace_recursive`: ``spanscope run --line-profile --recursive``,
  as scope-profiler's run traces lines there: every function the recursive
  tracer records (the same names, ``<module>.<qualname>``, and the same
  filters) gets its lines timed under its region, through ``sys.settrace``
  (line_profiler takes functions one by one; the traced ones are not known
  in advance).  Each line's time runs from its line event to the frame's
  next one (callees included, as line_profiler counts it).

ImportError naming the package and the extra when line_profiler is missing.
"""

from __future__ import annotations

import dis
import io
import os
import sys
import threading
import time
import types

from spanscope.results._lines import records_from_stats, stats_totals

__all__ = ["LineProfileRun", "import_line_profiler"]

#: spanscope's own source files (the session's root, handles, the tracer):
#: never handed to line_profiler, never in a record
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

#: the opcodes that enter a ``with`` block (3.10: SETUP_WITH; 3.11-3.13:
#: BEFORE_WITH; async forms for completeness)
_WITH_OPCODES = frozenset(dis.opmap[n] for n in ("SETUP_WITH", "BEFORE_WITH",
                                                 "SETUP_ASYNC_WITH", "BEFORE_ASYNC_WITH")
                          if n in dis.opmap)


def import_line_profiler():
    """line_profiler's ``LineProfiler`` class, imported on first use;
    ImportError saying what to install when line_profiler is missing."""
    try:
        from line_profiler import LineProfiler
    except ImportError as exc:
        raise ImportError(
            "use_line_profiler=True needs line_profiler, which is not installed: "
            "pip install 'spanscope[line-profiler]' (or pip install line_profiler)") from exc
    return LineProfiler


def is_package_file(filename) -> bool:
    """Whether filename is one of spanscope's own source files."""
    try:
        path = os.path.abspath(str(filename))
        return os.path.commonpath([path, _PACKAGE_DIR]) == _PACKAGE_DIR
    except ValueError:
        return False


def _entered_by_with(code, lasti: int) -> bool:
    """Whether the instruction at lasti of code is a ``with`` statement
    calling ``__enter__`` (3.14's LOAD_SPECIAL ... CALL too)."""
    raw = code.co_code
    if 0 <= lasti < len(raw) and raw[lasti] in _WITH_OPCODES:
        return True
    if "LOAD_SPECIAL" not in dis.opmap:  # before 3.14: nothing else enters
        return False
    previous = None
    for ins in dis.get_instructions(code):
        if ins.offset == lasti:
            return ins.opname == "CALL" and previous == "LOAD_SPECIAL"
        if ins.opname not in ("CACHE", "PUSH_NULL", "SWAP", "COPY"):
            previous = ins.opname
    return False


def function_for_frame(frame):
    """A function object of the code frame runs, for line_profiler to
    register (scope-profiler's ``_function_for_frame``): the locals', the
    caller's or the module's function of that code when there is one, else
    the function the garbage collector knows to hold that code (a nested
    function: line_profiler must pad *its* code for later calls to count),
    else a new function over the same code and closure (never called:
    line_profiler reads its code).  None when none can be built."""
    code = frame.f_code
    spaces = [frame.f_locals, frame.f_globals]
    if frame.f_back is not None:
        spaces.insert(1, frame.f_back.f_locals)
    for namespace in spaces:
        for value in list(namespace.values()):
            if isinstance(value, types.FunctionType) and value.__code__ is code:
                return value
    import gc
    for owner in gc.get_referrers(code):
        if isinstance(owner, types.FunctionType) and owner.__code__ is code:
            return owner
    closure = None
    if code.co_freevars:
        def cell(value):
            return (lambda: value).__closure__[0]
        closure = tuple(cell(frame.f_locals.get(n)) for n in code.co_freevars)
    try:
        return types.FunctionType(code, frame.f_globals, code.co_name, closure=closure)
    except (TypeError, ValueError):
        return None


class LineProfileRun:
    """line_profiler for the regions of one ``use_line_profiler=True`` run
    (see the module).  ``line_profiler_class`` may be given (a stand-in
    with LineProfiler's methods, for tests); by default line_profiler's is
    imported, ImportError telling what to install."""

    def __init__(self, line_profiler_class=None):
        self._cls = import_line_profiler() if line_profiler_class is None \
            else line_profiler_class
        self._profilers: dict = {}   # region name -> LineProfiler
        self._previous: dict = {}    # region name -> stats_totals at the last records()
        self._with_sites: dict = {}  # (region, code, lasti) -> the region's profiler
        self._added: set = set()     # (region, function) handed already
        self._lock = threading.Lock()
        #: trace_recursive's timings: (region, filename, first line,
        #: function) -> {line: [hits, ns]}, since the last records()
        self._traced: dict = {}

    def profiler(self, region: str):
        """The LineProfiler of region (created on first use)."""
        prof = self._profilers.get(region)
        if prof is None:
            with self._lock:
                prof = self._profilers.get(region)
                if prof is None:
                    prof = self._profilers[region] = self._cls()
        return prof

    def has_profiler(self, region: str) -> bool:
        """Whether region has had a call or a function in this run."""
        return region in self._profilers

    def add_function(self, region: str, func) -> None:
        """Hands func to region's profiler (a method: its function; a
        wrapper with ``__wrapped__``: the function inside).  Functions of
        spanscope itself and objects with no code are left out."""
        func = getattr(func, "__func__", func)
        while hasattr(func, "__wrapped__") and not hasattr(func, "__code__"):
            func = func.__wrapped__
        code = getattr(func, "__code__", None)
        if code is None or is_package_file(code.co_filename):
            return
        try:
            key = (region, func)
            if key in self._added:  # region(name, functions=[f]) in a loop
                return
            self._added.add(key)
        except TypeError:  # an unhashable callable: handed every time
            pass
        self.profiler(region).add_function(func)

    def start(self, region: str, _depth: int = 1) -> None:
        """The call hook after each begin of region: its profiler on, on
        this thread.  Entered by a ``with`` statement (the frame _depth up,
        the caller of the region's ``__enter__``), the function holding the
        block is handed to the profiler first (once per site)."""
        frame = sys._getframe(_depth)
        site = (region, frame.f_code, frame.f_lasti)
        prof = self._with_sites.get(site)  # one lookup per call: site -> profiler
        if prof is None:
            prof = self._new_site(site, frame)
        # a region with no function to profile leaves line_profiler off: its
        # trace callback would only slow every line down for nothing
        # (enable_count stays 0, and stop() leaves it so)
        if prof.functions:
            prof.enable_by_count()

    def _new_site(self, site, frame):
        """start() at a call site seen first: the region's profiler, given
        the function holding the site when it is a ``with`` statement."""
        prof = self.profiler(site[0])
        if (_entered_by_with(frame.f_code, frame.f_lasti)
                and not is_package_file(frame.f_code.co_filename)):
            func = function_for_frame(frame)
            if func is not None:
                prof.add_function(func)
        self._with_sites[site] = prof
        return prof

    def stop(self, region: str) -> None:
        """The call hook before each end of region: its profiler off, on
        this thread, once its calls there are all closed."""
        # the lines run here are traced by the profiler still on: one line
        try:
            self._profilers[region].disable_by_count()
        except KeyError:  # a region that never started here
            pass

    def stats(self, region: str):
        """line_profiler's LineStats of region since the run began (None
        when the region has no profiler)."""
        prof = self._profilers.get(region)
        return None if prof is None else prof.get_stats()

    def print_stats(self, region: str, stream=None) -> None:
        """line_profiler's own per-line table of region (its print_stats)."""
        prof = self._profilers.get(region)
        if prof is not None:
            prof.print_stats(stream=sys.stdout if stream is None else stream)

    def stats_text(self, region: str) -> str:
        """print_stats' text of region ("" without a profiler)."""
        out = io.StringIO()
        self.print_stats(region, out)
        return out.getvalue()

    def records(self, recorded_path=None) -> list[dict]:
        """scope-profiler's records of every region, in region creation
        order: what line_profiler measured since the previous call (the
        previous finalize), spanscope's own frames left out.
        recorded_path(filename) gives the stored file name."""
        out = []
        for region, prof in list(self._profilers.items()):
            stats = prof.get_stats()
            out.extend(records_from_stats(stats, region, self._previous.get(region),
                                          skip=is_package_file, recorded_path=recorded_path))
            self._previous[region] = stats_totals(stats)
        with self._lock:
            traced, self._traced = self._traced, {}
        for (region, filename, first, function), by_line in traced.items():
            stats = types.SimpleNamespace(unit=1e-9, timings={
                (filename, first, function): [(n, h, t) for n, (h, t) in by_line.items()]})
            out.extend(records_from_stats(stats, region, skip=is_package_file,
                                          recorded_path=recorded_path))
        return out

    def trace_recursive(self, skip_prefixes=None, include=(), exclude=(), entrypoint=None):
        """A context manager: while it is open, the lines of every function
        the recursive tracer records are timed under its region (see the
        module), on this thread and on threads started meanwhile.
        skip_prefixes: directories whose files are left out (the standard
        library and installed packages; None: none); include / exclude:
        glob patterns on ``<module>.<qualname>``; entrypoint: the function
        recorded under that name -- the recursive tracer's own filters."""
        return _LineTracer(self, skip_prefixes, include, exclude, entrypoint)

    def _add_traced(self, key, line: int, ns: int) -> None:
        """One execution of line (ns long) of the traced function key."""
        with self._lock:  # threads traced at once: no count lost
            cell = self._traced.setdefault(key, {}).get(line)
            if cell is None:
                self._traced[key][line] = [1, ns]
            else:
                cell[0] += 1
                cell[1] += ns

    def close(self) -> None:
        """Every profiler off on this thread (a run that ends with a region
        still open); the profiles stay readable."""
        for prof in list(self._profilers.values()):
            while getattr(prof, "enable_count", 0) > 0:
                prof.disable_by_count()


class _LineTracer:
    """LineProfileRun.trace_recursive's context manager: a sys.settrace
    tracer that times the lines of the recursively traced functions."""

    def __init__(self, run, skip_prefixes, include, exclude, entrypoint):
        import fnmatch
        import re
        self._run = run
        self._skip = tuple(skip_prefixes or ())
        self._include = re.compile("|".join(fnmatch.translate(p) for p in include)) \
            if include else None
        self._exclude = re.compile("|".join(fnmatch.translate(p) for p in exclude)) \
            if exclude else None
        self._entry = entrypoint
        self._decided: dict = {}  # code -> key or None
        self._previous = None

    def _key(self, frame):
        """(region, filename, first line, function) of frame's code, or
        None when the recursive tracer leaves the function out; cached per
        code object."""
        code = frame.f_code
        try:
            return self._decided[code]
        except KeyError:
            pass
        key = None
        module = frame.f_globals.get("__name__", "?")
        module = module if isinstance(module, str) else "?"
        qualname = getattr(code, "co_qualname", code.co_name)
        filename = code.co_filename
        if not (module == "spanscope" or module.startswith("spanscope.")
                or self._skipped(filename)):
            name = f"{module}.{qualname}"
            if ((self._include is None or self._include.match(name))
                    and not (self._exclude is not None and self._exclude.match(name))):
                region = self._entry if self._entry and code.co_name == self._entry else name
                key = (region, filename, code.co_firstlineno, qualname)
        self._decided[code] = key
        return key

    def _skipped(self, filename: str) -> bool:
        if not self._skip:
            return False
        if not filename or filename.startswith("<"):
            return True
        path = os.path.realpath(filename)
        return any(path == p or path.startswith(p.rstrip(os.sep) + os.sep) for p in self._skip)

    def _trace(self, frame, event, arg):
        """The global tracer: a traced function's frames get the line
        tracer, the others none."""
        if event != "call":
            return None
        key = self._key(frame)
        if key is None:
            return None
        clock = time.perf_counter_ns
        add = self._run._add_traced
        state = [0, 0]  # the line running, and since when

        def lines(frame, event, arg):
            now = clock()
            if state[0]:
                add(key, state[0], now - state[1])
                state[0] = 0
            if event == "line":
                state[0], state[1] = frame.f_lineno, clock()
            return lines
        return lines

    def __enter__(self):
        self._previous = sys.gettrace()
        # line_profiler, enabled by a region with functions, replaces the
        # thread's trace callback: it calls this one too (process-wide)
        try:
            self._run._cls().wrap_trace = True
        except AttributeError:  # a line_profiler without the option
            pass
        threading.settrace(self._trace)
        sys.settrace(self._trace)
        return self

    def __exit__(self, *exc):
        sys.settrace(self._previous)
        threading.settrace(self._previous)
        return False
