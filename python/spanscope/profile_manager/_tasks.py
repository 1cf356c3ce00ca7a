"""Threads and asyncio tasks as lanes: scope-profiler's ConcurrencyTracker,
used by ``setup(track_async=True)``.  Every task created on an event loop
while the run is set up gets a row -- when it was created and finished,
how many steps it ran, and how its life split between running (holding its
thread) and suspended (awaiting).  The rows go to the C core before each
finalize (``_ext.tasks_set``), which writes them to ``/task_table``, and
so do the steps themselves (``_ext.task_steps_set``: 32 bytes a step,
kept for the run), from which the writer stamps each call with its task
(``/events/task_ids``) and the time its task was suspended inside it
(``/events/await_ns``).

The timing is in the task, not the loop: the task factory wraps each
coroutine so that every ``send``/``throw`` the loop makes on it passes
through a step timer.  That works with the C ``asyncio.Task`` (which
never calls a Python override).  Regions themselves are untouched: their
hot path does not look at tasks.

Threads: the core keeps a buffer per thread for every region and writes
``/thread_table`` itself; the tracker's thread records (``threads``,
``current_thread()``) are its own registry of the threads that used it,
numbered densely per tracker as in scope-profiler, each knowing the task
it is running.  ``lane_ids`` is the file model's lane rule
(spanscope.results).
"""

from __future__ import annotations

import threading
from array import array
import weakref
from time import perf_counter_ns, thread_time_ns

from spanscope import _ext
from spanscope.profile_manager._regions import UNKNOWN, ThreadRecord

# numpy and spanscope.results are imported where they are used: `import
# spanscope` and `spanscope run` need neither at start-up

__all__ = ["ConcurrencyTracker", "TaskRecord", "TaskTracker", "ThreadRecord", "lane_ids",
           "NO_TASK", "UNKNOWN"]

#: Task index of a call that ran outside every task.
NO_TASK = -1


def lane_ids(thread_ids, task_ids) -> np.ndarray:
    """One lane id per call: its task (>= 0) when it ran in one, else
    ``-2 - thread`` (so -1 is a call of an unknown thread, thread id -1).
    The key calls are grouped by to nest (build_call_arrays): only calls
    of one lane can nest.  ``task_ids`` may be None (no tasks)."""
    import numpy as np

    from spanscope.results._regions import _lane_ids

    thread_ids = np.asarray(thread_ids, dtype=np.int64)
    if task_ids is not None:
        task_ids = np.asarray(task_ids, dtype=np.int64)
        if task_ids.shape != thread_ids.shape:
            raise ValueError("thread_ids and task_ids must have the same length")
    return _lane_ids(thread_ids, task_ids)


class _ThreadExit:
    """Kept in the tracker's thread-local storage: dropped on the thread
    itself when it exits, where its end time and exact CPU time are read."""

    __slots__ = ("_record", "_clock", "_cpu")

    def __init__(self, record: ThreadRecord) -> None:
        self._record, self._clock, self._cpu = record, perf_counter_ns, thread_time_ns

    def __del__(self) -> None:
        try:
            self._record.cpu_ns = self._cpu()
            self._record.end_ns = self._clock()
        except Exception:  # pragma: no cover - interpreter teardown
            pass


class TaskRecord:
    """One task and how its wall time split (ns, the events' clock)."""

    __slots__ = ("index", "kind", "name", "coro_name", "thread_index", "created_ns",
                 "done_ns", "steps", "running_ns", "suspended_ns", "_last_end", "_start",
                 "_log", "_native")

    def __init__(self, index: int, coro_name: str, log: array):
        self.index = index
        self.kind = "task"
        self.name = ""
        self.coro_name = coro_name
        self.thread_index = -1  # the tracker's index of the thread of its last step
        self._native = -1       # that thread's native id (the core maps it to its index)
        self.created_ns = perf_counter_ns()
        self.done_ns = UNKNOWN
        self.steps = self.running_ns = self.suspended_ns = 0
        self._last_end = 0  # 0 until it ran: the first gap is scheduling, not await
        self._start = 0
        self._log = log  # the tracker's steps: task, thread, start, end

    @property
    def done(self) -> bool:
        """Whether the task had finished when last seen."""
        return self.done_ns != UNKNOWN

    def enter_step(self) -> None:
        """Charges the gap since the last step as suspension."""
        now = perf_counter_ns()
        if self._last_end:
            self.suspended_ns += now - self._last_end
        self.steps += 1
        self._start = now
        self._native = threading.get_native_id()

    def leave_step(self) -> None:
        """Charges the step ending now as running time."""
        end = perf_counter_ns()
        self.running_ns += end - self._start
        self._last_end = end
        self._log.extend((self.index, self._native, self._start, end))

    def finish(self) -> None:
        """Records that the task completed (the first call wins)."""
        if self.done_ns == UNKNOWN:
            self.done_ns = perf_counter_ns()

    def row(self) -> tuple:
        """The core's task row (_ext.tasks_set): the thread as its native id."""
        return (self.index, self._native, self.created_ns, self.done_ns, self.steps,
                self.running_ns, self.suspended_ns, self.kind, self.name, self.coro_name)

    def __repr__(self) -> str:
        return (f"TaskRecord(index={self.index}, kind={self.kind!r}, name={self.name!r}, "
                f"steps={self.steps})")


class _StepTimer:
    """What the wrapped coroutine's ``__await__`` gives the task: each
    send/throw of the loop is one step."""

    __slots__ = ("_coro", "_record", "_tracker")

    def __init__(self, coro, record, tracker):
        self._coro, self._record, self._tracker = coro, record, tracker

    def __iter__(self):
        return self

    def __next__(self):
        return self.send(None)

    def _step(self, method, *args):
        record = self._record
        thread = self._tracker.current_thread()
        record.thread_index = thread.index
        previous, thread.task = thread.task, record
        record.enter_step()
        try:
            return method(*args)
        finally:
            record.leave_step()
            thread.task = previous

    def send(self, value):
        return self._step(self._coro.send, value)

    def throw(self, *args):
        return self._step(self._coro.throw, *args)

    def close(self):
        return self._coro.close()


class _TimedAwaitable:
    __slots__ = ("_coro", "_record", "_tracker")

    def __init__(self, coro, record, tracker):
        self._coro, self._record, self._tracker = coro, record, tracker

    def __await__(self):
        return _StepTimer(self._coro, self._record, self._tracker)


async def _timed(coro, record, tracker):
    """A real coroutine (asyncio.Task insists on one) whose steps are timed."""
    return await _TimedAwaitable(coro, record, tracker)


def _coroutine_name(coro) -> str:
    for attribute in ("__qualname__", "__name__"):
        name = getattr(coro, attribute, None)
        if name:
            return str(name)
    code = getattr(coro, "cr_code", None) or getattr(coro, "gi_code", None)
    if code is not None:
        return str(getattr(code, "co_qualname", None) or code.co_name)
    return type(coro).__name__


class ConcurrencyTracker:
    """The threads and asyncio tasks of one run (scope-profiler's
    ConcurrencyTracker).  Creating it is free; install() puts the asyncio
    hooks in place when ``track_async`` (BaseEventLoop.run_forever and
    create_task, the funnels of asyncio.run and run_until_complete, and a
    loop already running), uninstall() puts everything back; both are
    idempotent.  ``threads`` are the threads that asked for their record
    (current_thread(), every task step), ``tasks`` the tasks created on an
    instrumented loop.  Greenlets are not followed."""

    def __init__(self, track_async: bool = False):
        self.track_async = bool(track_async)
        self._lock = threading.Lock()
        self._threads: list[ThreadRecord] = []
        self._local = threading.local()
        self._tasks: list[TaskRecord] = []
        self._steps = array("q")  # every step of every task, 4 int64 each
        self._loops = weakref.WeakKeyDictionary()  # loop -> the factory it had
        self._prev_run_forever = self._prev_create_task = None
        self._installed = False

    # -- registries ------------------------------------------------------------
    def current_thread(self) -> ThreadRecord:
        """The calling thread's record, registered (with the next index) on
        first use; its exit closes it (end_ns, cpu_ns)."""
        try:
            return self._local.record
        except AttributeError:
            pass
        with self._lock:
            record = ThreadRecord(len(self._threads), threading.current_thread())
            self._threads.append(record)
        self._local.record = record
        self._local.exit = _ThreadExit(record)
        return record

    @property
    def threads(self) -> list:
        """Every registered thread, in index order (a copy)."""
        with self._lock:
            return list(self._threads)

    @property
    def tasks(self) -> list:
        """Every instrumented task, in creation order (a copy)."""
        with self._lock:
            return list(self._tasks)

    # -- hooks -------------------------------------------------------------------
    def install(self) -> None:
        """Puts the asyncio hooks in place (track_async); idempotent."""
        if self._installed:
            return
        self._installed = True
        if not self.track_async:
            return
        import asyncio
        tracker = self
        prev_run, prev_create = asyncio.BaseEventLoop.run_forever, asyncio.BaseEventLoop.create_task
        self._prev_run_forever, self._prev_create_task = prev_run, prev_create

        def run_forever(loop):
            tracker.instrument_loop(loop)
            return prev_run(loop)

        def create_task(loop, coro, **kwargs):
            tracker.instrument_loop(loop)
            return prev_create(loop, coro, **kwargs)

        run_forever.__doc__, create_task.__doc__ = prev_run.__doc__, prev_create.__doc__
        asyncio.BaseEventLoop.run_forever = run_forever
        asyncio.BaseEventLoop.create_task = create_task
        try:
            self.instrument_loop(asyncio.get_running_loop())
        except RuntimeError:
            pass

    def uninstall(self) -> None:
        """Takes the hooks out and gives each instrumented loop its own task
        factory back; idempotent."""
        self._installed = False
        if self._prev_run_forever is None:
            return
        import asyncio
        asyncio.BaseEventLoop.run_forever = self._prev_run_forever
        asyncio.BaseEventLoop.create_task = self._prev_create_task
        self._prev_run_forever = self._prev_create_task = None
        for loop, factory in list(self._loops.items()):
            try:
                if loop.get_task_factory() == self._factory:
                    loop.set_task_factory(factory)
            except RuntimeError:  # pragma: no cover - loop closed
                pass
        self._loops = weakref.WeakKeyDictionary()

    def instrument_loop(self, loop) -> None:
        """Routes loop's task creation through the step timer, chained onto
        the factory it had (once per loop): for loops that never reach
        BaseEventLoop.run_forever (uvloop)."""
        if loop in self._loops:
            return
        self._loops[loop] = loop.get_task_factory()
        loop.set_task_factory(self._factory)

    def _factory(self, loop, coro, **kwargs):
        import asyncio
        with self._lock:
            record = TaskRecord(len(self._tasks), _coroutine_name(coro), self._steps)
            self._tasks.append(record)
        record.thread_index = self.current_thread().index  # until its first step
        record._native = threading.get_native_id()
        previous = self._loops.get(loop)
        wrapped = _timed(coro, record, self)
        task = (previous(loop, wrapped, **kwargs) if previous is not None
                else asyncio.Task(wrapped, loop=loop, **kwargs))
        record.name = task.get_name()
        task.add_done_callback(lambda _t, r=record: r.finish())
        return task

    # -- collection --------------------------------------------------------------
    def snapshot(self, origin_ns: int = 0) -> dict:
        """The lane tables as columns: ``{"threads": {index, ident,
        native_id, name, daemon, start_ns, end_ns, cpu_ns}, "tasks":
        {index, kind, name, coro_name, thread_index, created_ns, done_ns,
        steps, running_ns, suspended_ns}}`` (int64 arrays, lists of str),
        times minus ``origin_ns`` (UNKNOWN left as is)."""
        try:
            self._local.record.sample_cpu()
        except AttributeError:
            pass
        import numpy as np

        def shift(values):
            v = np.asarray(values, dtype=np.int64)
            return np.where(v == UNKNOWN, UNKNOWN, v - int(origin_ns))

        def col(rows, field, dtype=np.int64):
            return np.array([getattr(r, field) for r in rows], dtype=dtype)

        threads, tasks = self.threads, self.tasks
        return {
            "threads": {
                "index": col(threads, "index"), "ident": col(threads, "ident"),
                "native_id": col(threads, "native_id"), "name": [t.name for t in threads],
                "daemon": col(threads, "daemon", np.int8),
                "start_ns": shift([t.start_ns for t in threads]),
                "end_ns": shift([t.end_ns for t in threads]),
                "cpu_ns": col(threads, "cpu_ns"),
            },
            "tasks": {
                "index": col(tasks, "index"), "kind": [t.kind for t in tasks],
                "name": [t.name for t in tasks], "coro_name": [t.coro_name for t in tasks],
                "thread_index": col(tasks, "thread_index"),
                "created_ns": shift([t.created_ns for t in tasks]),
                "done_ns": shift([t.done_ns for t in tasks]),
                "steps": col(tasks, "steps"), "running_ns": col(tasks, "running_ns"),
                "suspended_ns": col(tasks, "suspended_ns"),
            },
        }

    def rows(self) -> list:
        """The core's task rows (_ext.tasks_set)."""
        with self._lock:
            return [t.row() for t in self._tasks]

    def publish(self) -> None:
        """Hands the table and the steps to the core for the next finalize
        to write (/task_table, and each call's task_ids and await_ns)."""
        _ext.tasks_set(self.rows())
        _ext.task_steps_set(array("q", self._steps))


class TaskTracker(ConcurrencyTracker):
    """The session's tracker of ``setup(track_async=True)``: a
    ConcurrencyTracker that follows asyncio tasks."""

    def __init__(self, track_async: bool = True):
        super().__init__(track_async=track_async)
