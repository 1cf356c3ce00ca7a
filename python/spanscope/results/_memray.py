"""memray allocation captures: scope-profiler 0.7.5's ``use_memray`` face
(the capture a run starts at ``setup()`` and finishes at ``finalize()``)
and a summary of a capture read back through memray's own reader.

Both drive the real memray (PyPI ``memray``, the ``memray`` extra:
``pip install "spanscope[memray]"``); nothing here re-implements it.  A
capture is memray's own ``.bin`` file: ``memray flamegraph FILE``,
``memray stats FILE``, ``memray tree FILE`` open it as they open any other.

* :class:`MemrayAllocationTracker` -- one process-wide capture, started and
  stopped (safe to stop twice), as scope-profiler's class of that name;
* :func:`memray_capture_path` -- the capture's name for a run: the
  ``memory_profile_path`` given, else ``<file-stem>.memray.bin`` beside the
  profile, and ``<stem>.rank<N><suffix>`` on each rank of an MPI job of more
  than one rank (scope-profiler's ``ProfilingConfig._memray_path``);
* :func:`memray_summary` -> :class:`MemraySummary` -- what a capture says:
  bytes and allocations in all, the peak of live bytes, the top allocation
  sites by bytes allocated and the sites holding memory at the peak.  A file
  memray cannot read (not a capture, truncated, damaged) is a
  :class:`MemrayCaptureError` naming the file.

docs/memray.md is the user's page.
"""

from __future__ import annotations

import atexit
import errno
import os
import sys
import tempfile
import threading
import weakref
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

__all__ = ["MemrayAllocationTracker", "MemrayCaptureError", "MemraySite", "MemraySummary",
           "memray_capture_path", "memray_summary", "MEMRAY_INSTALL_HINT"]

#: What the missing-dependency error says to do (scope-profiler names its
#: extra; spanscope's is ``memray``, and both install the same package).
MEMRAY_INSTALL_HINT = ('Install it with `pip install "spanscope[memray]"` or `pip install '
                       'memray` (the package scope-profiler[extras] installs).')


class MemrayCaptureError(OSError):
    """A file memray cannot read as a capture -- not a memray file, truncated
    or damaged -- or a capture that cannot be created.  An OSError (as
    spanscope's CorruptProfileError); the message names the file and says
    what memray reported, ``filename`` is the file."""

    def __init__(self, message: str, filename: str):
        super().__init__(message)
        self.filename = filename

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


def _import_memray(what: str):
    """The memray module, or ImportError saying how to install it (the
    ImportError of ``import memray`` as its cause)."""
    try:
        import memray
    except ImportError as exc:
        raise ImportError(f"{what} requested but memray is not installed. "
                          + MEMRAY_INSTALL_HINT) from exc
    return memray


def memray_capture_path(file_path=None, memory_profile_path=None, rank: int = 0,
                        size: int = 1) -> Path:
    """The capture file of one rank of a run, as scope-profiler names it.

    ``memory_profile_path`` when given (str or os.PathLike; None or "" for
    the default), else ``file_path`` (the run's profile, default
    ``profiling_data.h5``) with its suffix replaced: ``run.h5`` ->
    ``run.memray.bin``.  In an MPI job of ``size`` > 1 ranks every rank
    writes its own capture (memray traces one process): ``.rank<rank>`` goes
    before the last suffix, ``run.memray.bin`` -> ``run.memray.rank3.bin``.
    TypeError for a path of another type, ValueError for a rank outside
    0..size-1."""
    for name, value in (("memory_profile_path", memory_profile_path),
                        ("file_path", file_path)):
        if value is not None and not isinstance(value, (str, os.PathLike)):
            raise TypeError(f"{name} must be a str, os.PathLike or None, not "
                            f"{type(value).__name__}")
    for name, value in (("rank", rank), ("size", size)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{name} must be an int, not {type(value).__name__}")
    if size < 1 or not 0 <= rank < size:
        raise ValueError(f"rank {rank} is not one of the {size} rank(s) of the job")
    configured = os.fspath(memory_profile_path) if memory_profile_path is not None else ""
    if configured:
        path = Path(configured)
    else:
        base = os.fspath(file_path) if file_path is not None else ""
        path = Path(base or "profiling_data.h5").with_suffix(".memray.bin")
    if size > 1:
        path = path.with_name(f"{path.stem}.rank{rank}{path.suffix}")
    return path


#: The captures started and not stopped yet: stopped at interpreter exit,
#: so that a run never finalized still leaves a finished capture.
_ACTIVE: "weakref.WeakSet[MemrayAllocationTracker]" = weakref.WeakSet()


@atexit.register
def _stop_active_captures() -> None:
    for capture in list(_ACTIVE):
        try:
            capture.stop()
        except Exception:  # at exit: nothing left to tell
            pass


def _enter_beside(tracker) -> None:
    """Enters memray's tracker from a short-lived helper thread while the
    caller waits.  memray knows the Python stack of the thread that starts
    it only from that thread's innermost frame on, while it walks the whole
    stack of every other thread: started from inside setup(), every frame
    above setup() would be lost once setup() returned -- and the allocations
    of the program would carry empty stacks.  Started beside it, the
    caller's stack is walked whole (tests/python/test_memray.py checks the
    sites).  Where no thread can be started, enters here."""
    failure = []

    def enter():
        try:
            tracker.__enter__()
        except BaseException as exc:  # noqa: BLE001 -- handed to the caller
            failure.append(exc)

    helper = threading.Thread(target=enter, name="spanscope-memray-start", daemon=True)
    try:
        helper.start()
    except RuntimeError:  # interpreter shutting down: no new threads
        tracker.__enter__()
        return
    helper.join()
    if failure:
        raise failure[0]


class MemrayAllocationTracker:
    """One process-wide memray capture into ``path`` (scope-profiler's class
    of this name): ``start()`` enters ``memray.Tracker(str(path),
    native_traces=..., trace_python_allocators=..., follow_fork=...)``,
    ``stop()`` exits it, which flushes and closes the file; stopping again
    does nothing.  A capture still running at interpreter exit is stopped
    then.

    Constructing one imports memray (ImportError with the install command
    when it is missing) and checks that ``path`` is free: memray never
    overwrites a file, so an existing one is a FileExistsError naming it
    (remove it, or give ``memory_profile_path`` another name).  memray
    allows one capture per process: starting a second while one is active
    (``memray run``, another Tracker) is a RuntimeError saying so."""

    def __init__(self, path, *, native_traces: bool = False,
                 trace_python_allocators: bool = False, follow_fork: bool = False) -> None:
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"path must be a str or os.PathLike, not {type(path).__name__}")
        for name, value in (("native_traces", native_traces),
                            ("trace_python_allocators", trace_python_allocators),
                            ("follow_fork", follow_fork)):
            if not isinstance(value, bool):
                raise TypeError(f"{name} must be a bool, not {type(value).__name__}")
        self._memray = _import_memray("Memory allocation profiling (use_memray=True)")
        self.path = Path(os.fspath(path))
        self.native_traces = native_traces
        self.trace_python_allocators = trace_python_allocators
        self.follow_fork = follow_fork
        self._tracker = None
        self._check_free()

    def _check_free(self) -> None:
        if os.path.lexists(self.path):
            raise FileExistsError(
                errno.EEXIST, f"the memray capture {str(self.path)!r} already exists and memray "
                "never overwrites one: remove it, or give memory_profile_path another name")

    @property
    def active(self) -> bool:
        """Whether the capture is running (started and not stopped)."""
        return self._tracker is not None

    def start(self) -> None:
        """Starts tracking every allocation of this process into ``path``.
        Starting an active capture does nothing.  OSError naming the path
        when memray cannot create it; RuntimeError when another memray
        capture is active in the process."""
        if self._tracker is not None:
            return
        self._check_free()
        try:
            tracker = self._memray.Tracker(
                str(self.path), native_traces=self.native_traces,
                trace_python_allocators=self.trace_python_allocators,
                follow_fork=self.follow_fork)
        except OSError as exc:
            raise MemrayCaptureError(
                f"memray cannot create the capture {str(self.path)!r}: "
                f"{exc.strerror or exc}", str(self.path)) from None
        try:
            _enter_beside(tracker)
        except BaseException as exc:
            del tracker  # memray created the file: take its empty header away
            try:
                os.unlink(self.path)
            except OSError:
                pass
            if isinstance(exc, RuntimeError):
                raise RuntimeError(
                    f"cannot start the memray capture {str(self.path)!r}: {exc} (memray "
                    "traces a process with one capture at a time: under `memray run`, "
                    "leave use_memray off)") from None
            raise
        self._tracker = tracker
        _ACTIVE.add(self)

    def stop(self) -> None:
        """Finishes the capture: memray flushes and closes the file.  Safe to
        call more than once, and before ``start()``."""
        tracker, self._tracker = self._tracker, None
        _ACTIVE.discard(self)
        if tracker is not None:
            tracker.__exit__(None, None, None)

    def __repr__(self) -> str:
        return (f"MemrayAllocationTracker({str(self.path)!r}, active={self.active}, "
                f"native_traces={self.native_traces}, trace_python_allocators="
                f"{self.trace_python_allocators}, follow_fork={self.follow_fork})")


# --------------------------------------------------------------------------
# Reading a capture back
# --------------------------------------------------------------------------

@dataclass(frozen=True)
class MemraySite:
    """One allocation site: the innermost Python frame of the allocating
    stack (``function`` in ``file`` at ``line``; ``function`` is
    ``"<no Python frame>"`` for an allocation with no Python stack, made by
    native code), with the bytes and the number of allocations it made (or,
    in ``MemraySummary.peak_sites``, held at the peak)."""

    function: str
    file: str
    line: int
    bytes: int
    allocations: int

    @property
    def location(self) -> str:
        """``function (file:line)``."""
        if not self.file:
            return self.function
        return f"{self.function} ({self.file}:{self.line})"


@dataclass(frozen=True)
class MemraySummary:
    """What a memray capture says about where memory went (memray_summary).

    ``total_bytes`` / ``total_allocations``: every allocation of the
    capture (malloc family, mmap, and Python's allocators when it traced
    them), None for an aggregated capture (``memray run --aggregate``), which
    keeps no single allocations; ``peak_bytes``: the highest sum of live
    bytes (memray's high-water mark); ``top_sites``: the sites that
    allocated the most bytes, largest first; ``peak_sites``: the sites
    holding the most live bytes at the peak.  ``problems``: what memray
    reported about the file when read with ``strict=False`` (empty for a
    sound capture).  ``str(summary)`` is a short report."""

    path: str
    pid: int
    command_line: str
    start_time: datetime
    end_time: datetime
    native_traces: bool
    trace_python_allocators: bool
    python_allocator: str
    total_bytes: int | None
    total_allocations: int | None
    peak_bytes: int
    top_sites: tuple
    peak_sites: tuple
    problems: tuple = ()

    @property
    def duration_s(self) -> float:
        """Seconds from the capture's start to its end."""
        return max((self.end_time - self.start_time).total_seconds(), 0.0)

    def format(self, top: int | None = None) -> str:
        """The summary as text: the totals, then the top sites (all of them,
        or the first ``top``) by bytes allocated and at the peak."""
        lines = [f"memray capture {self.path} (pid {self.pid}, {self.duration_s:.3f} s: "
                 f"{self.command_line})"]
        if self.total_bytes is None:
            lines.append(f"  peak {_bytes(self.peak_bytes)} (aggregated capture: no "
                         "allocation totals)")
        else:
            lines.append(f"  allocated {_bytes(self.total_bytes)} in "
                         f"{self.total_allocations:,} allocations; peak "
                         f"{_bytes(self.peak_bytes)}")
        for title, sites in (("top allocation sites, by bytes allocated", self.top_sites),
                             ("held at the peak", self.peak_sites)):
            sites = sites if top is None else sites[:top]
            if not sites:
                continue
            lines.append(f"  {title}:")
            lines.append(f"    {'bytes':>10}  {'allocations':>11}  site")
            for s in sites:
                lines.append(f"    {_bytes(s.bytes):>10}  {s.allocations:>11,}  {s.location}")
        for problem in self.problems:
            lines.append(f"  memray: {problem}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.format()


def _bytes(n: int) -> str:
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{int(value)} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{n} B"  # pragma: no cover


#: memray's deallocating allocator kinds (memray.AllocatorType names): every
#: other record is an allocation.
_DEALLOCATORS = frozenset({"FREE", "MUNMAP", "PYMALLOC_FREE"})

_NO_FRAME = ("<no Python frame>", "", 0)

_LOG_LOCK = threading.Lock()


class _MemrayLog:
    """Catches what memray's reader writes to file descriptor 2 while a
    capture is read ("Memray ERROR: Failed to process allocation record"
    when a record is cut or damaged: it then stops reading without an
    exception), so that the summary can say the file is damaged.  Other
    output written meanwhile (memray's warnings too) goes back to stderr
    afterwards.  Without a usable descriptor 2, catches nothing."""

    def __enter__(self):
        self.messages = []
        self._saved = self._tmp = None
        _LOG_LOCK.acquire()
        try:
            for stream in (sys.stderr, sys.__stderr__):
                try:
                    stream.flush()
                except Exception:  # noqa: BLE001 -- a closed or odd stream
                    pass
            self._saved = os.dup(2)
            self._tmp = tempfile.TemporaryFile()
            os.dup2(self._tmp.fileno(), 2)
        except OSError:
            if self._saved is not None:
                os.close(self._saved)
            self._saved = None
            if self._tmp is not None:
                self._tmp.close()
                self._tmp = None
        except BaseException:
            _LOG_LOCK.release()
            raise
        return self

    def __exit__(self, *exc):
        try:
            if self._saved is None:
                return False
            os.dup2(self._saved, 2)
            os.close(self._saved)
            self._tmp.seek(0)
            text = self._tmp.read().decode("utf-8", "replace")
            self._tmp.close()
            other = []
            for line in text.splitlines(keepends=True):
                if line.startswith("Memray ERROR"):  # its warnings pass through
                    self.messages.append(line.strip().split(": ", 1)[-1])
                else:
                    other.append(line)
            if other:
                try:
                    os.write(2, "".join(other).encode("utf-8", "replace"))
                except OSError:
                    pass
        finally:
            _LOG_LOCK.release()
        return False


def _frame(record) -> tuple:
    try:
        stack = record.stack_trace(max_stacks=1)
    except Exception:  # noqa: BLE001 -- memray: no stack for this record
        return _NO_FRAME
    if not stack:
        return _NO_FRAME
    function, file, line = stack[0]
    return (str(function), str(file), int(line))


def _sites(by_frame: dict, top: int) -> tuple:
    ordered = sorted(by_frame.items(), key=lambda kv: (-kv[1][0], -kv[1][1], kv[0]))
    return tuple(MemraySite(f, file, line, b, n) for (f, file, line), (b, n) in ordered[:top])


def memray_summary(path, *, top: int = 10, strict: bool = True) -> MemraySummary:
    """Reads the memray capture at ``path`` with memray's own reader
    (``memray.FileReader``) and says where the memory went: a
    :class:`MemraySummary` with the totals, the peak and the ``top``
    allocation sites (by bytes allocated, and by bytes held at the peak).

    The capture of a run with ``use_memray=True`` is
    ``ProfileManager.get_config().memory_profile_path`` (and, with
    ``metadata_detail="full"``, ``memory_profile_path`` in the profile's
    metadata)::

        from spanscope.results import memray_summary
        print(memray_summary("run.memray.bin", top=5))

    FileNotFoundError when there is no such file; MemrayCaptureError (an
    OSError naming the file) when memray cannot read it: not a memray
    capture, truncated, or damaged -- memray stops at the first record it
    cannot read, and with ``strict=False`` the summary of what it read comes
    back instead, memray's complaints in ``problems``.  ImportError, saying
    how to install it, without memray.  TypeError / ValueError for a bad
    ``top``."""
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a str or os.PathLike, not {type(path).__name__}")
    if isinstance(top, bool) or not isinstance(top, int):
        raise TypeError(f"top must be an int, not {type(top).__name__}")
    if top < 0:
        raise ValueError(f"top must be >= 0, not {top}")
    name = os.fspath(path)
    if not os.path.exists(name):
        raise FileNotFoundError(errno.ENOENT, f"no memray capture at {name!r}")
    if os.path.isdir(name):
        raise MemrayCaptureError(f"{name!r} is a directory, not a memray capture", name)
    memray = _import_memray("Reading a memray capture")
    try:
        with _MemrayLog() as log:
            reader = memray.FileReader(name)
            try:
                summary = _summarize(memray, reader, name, top)
            finally:
                reader.close()
    except (KeyboardInterrupt, MemoryError):
        raise
    except Exception as exc:  # noqa: BLE001 -- whatever memray's reader raises
        what = str(exc).strip() or type(exc).__name__
        raise MemrayCaptureError(f"{name!r} is not a readable memray capture (not one, or "
                                 f"truncated or damaged): memray says: {what}",
                                 name) from None
    problems = tuple(dict.fromkeys(log.messages))
    if problems and strict:
        raise MemrayCaptureError(
            f"{name!r} is a truncated or damaged memray capture: memray stopped "
            f"at a record it could not read ({problems[0]}); memray_summary(..., "
            "strict=False) gives the summary of what it read", name)
    if problems:
        summary = _replace_problems(summary, problems)
    return summary


def _replace_problems(summary: MemraySummary, problems: tuple) -> MemraySummary:
    from dataclasses import replace
    return replace(summary, problems=problems)


def _summarize(memray, reader, name: str, top: int) -> MemraySummary:
    meta = reader.metadata
    aggregated = meta.file_format != memray.FileFormat.ALL_ALLOCATIONS
    dealloc = {int(a) for a in memray.AllocatorType if a.name in _DEALLOCATORS}
    total_bytes = total_allocations = None
    top_sites: tuple = ()
    if not aggregated:
        total_bytes = total_allocations = 0
        # a site per stack: the frame of one record of each stack is read
        # once (memray resolves a stack per call), the sums per stack
        per_stack: dict = {}
        for record in reader.get_allocation_records():
            if record.allocator in dealloc:
                continue
            size, n = record.size, record.n_allocations
            total_bytes += size
            total_allocations += n
            entry = per_stack.get(record.stack_id)
            if entry is None:
                per_stack[record.stack_id] = [record, size, n]
            else:
                entry[1] += size
                entry[2] += n
        by_frame: dict = {}
        for record, size, n in per_stack.values():
            acc = by_frame.setdefault(_frame(record), [0, 0])
            acc[0] += size
            acc[1] += n
        top_sites = _sites(by_frame, top)
    at_peak: dict = {}
    for record in reader.get_high_watermark_allocation_records(merge_threads=True):
        acc = at_peak.setdefault(_frame(record), [0, 0])
        acc[0] += record.size
        acc[1] += record.n_allocations
    return MemraySummary(
        path=name, pid=int(meta.pid), command_line=str(meta.command_line),
        start_time=meta.start_time, end_time=meta.end_time,
        native_traces=bool(meta.has_native_traces),
        trace_python_allocators=bool(meta.trace_python_allocators),
        python_allocator=str(meta.python_allocator), total_bytes=total_bytes,
        total_allocations=total_allocations, peak_bytes=int(meta.peak_memory),
        top_sites=top_sites, peak_sites=_sites(at_peak, top))
