"""asyncio task tracking for ``setup(track_async=True)`` (scope-profiler's
ConcurrencyTracker, its task half): every task created on an event loop
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
"""

from __future__ import annotations

import threading
from array import array
import weakref
from time import perf_counter_ns

from spanscope import _ext

#: done_ns of a task that had not finished.
UNKNOWN = -1


class TaskRecord:
    """One task and how its wall time split (ns, the events' clock)."""

    __slots__ = ("index", "kind", "name", "coro_name", "thread_index", "created_ns",
                 "done_ns", "steps", "running_ns", "suspended_ns", "_last_end", "_start",
                 "_log")

    def __init__(self, index: int, coro_name: str, log: array):
        self.index = index
        self.kind = "task"
        self.name = ""
        self.coro_name = coro_name
        self.thread_index = -1
        self.created_ns = perf_counter_ns()
        self.done_ns = UNKNOWN
        self.steps = self.running_ns = self.suspended_ns = 0
        self._last_end = 0  # 0 until it ran: the first gap is scheduling, not await
        self._start = 0
        self._log = log  # the tracker's steps: task, thread, start, end

    def enter_step(self) -> None:
        now = perf_counter_ns()
        if self._last_end:
            self.suspended_ns += now - self._last_end
        self.steps += 1
        self._start = now
        self.thread_index = threading.get_native_id()  # the core maps it to its index

    def leave_step(self) -> None:
        end = perf_counter_ns()
        self.running_ns += end - self._start
        self._last_end = end
        self._log.extend((self.index, self.thread_index, self._start, end))

    def finish(self) -> None:
        if self.done_ns == UNKNOWN:
            self.done_ns = perf_counter_ns()

    def row(self) -> tuple:
        return (self.index, self.thread_index, self.created_ns, self.done_ns, self.steps,
                self.running_ns, self.suspended_ns, self.kind, self.name, self.coro_name)


class _StepTimer:
    """What the wrapped coroutine's ``__await__`` gives the task: each
    send/throw of the loop is one step."""

    __slots__ = ("_coro", "_record")

    def __init__(self, coro, record):
        self._coro, self._record = coro, record

    def __iter__(self):
        return self

    def __next__(self):
        return self.send(None)

    def send(self, value):
        self._record.enter_step()
        try:
            return self._coro.send(value)
        finally:
            self._record.leave_step()

    def throw(self, *args):
        self._record.enter_step()
        try:
            return self._coro.throw(*args)
        finally:
            self._record.leave_step()

    def close(self):
        return self._coro.close()


class _TimedAwaitable:
    __slots__ = ("_coro", "_record")

    def __init__(self, coro, record):
        self._coro, self._record = coro, record

    def __await__(self):
        return _StepTimer(self._coro, self._record)


async def _timed(coro, record):
    """A real coroutine (asyncio.Task insists on one) whose steps are timed."""
    return await _TimedAwaitable(coro, record)


def _coroutine_name(coro) -> str:
    for attribute in ("__qualname__", "__name__"):
        name = getattr(coro, attribute, None)
        if name:
            return str(name)
    code = getattr(coro, "cr_code", None) or getattr(coro, "gi_code", None)
    if code is not None:
        return str(getattr(code, "co_qualname", None) or code.co_name)
    return type(coro).__name__


class TaskTracker:
    """The tasks of one run.  install() hooks every event loop run from now
    on (BaseEventLoop.run_forever and create_task, the funnels of
    asyncio.run and run_until_complete) and a loop already running;
    uninstall() puts everything back."""

    def __init__(self):
        self._lock = threading.Lock()
        self._tasks: list[TaskRecord] = []
        self._steps = array("q")  # every step of every task, 4 int64 each
        self._loops = weakref.WeakKeyDictionary()  # loop -> the factory it had
        self._prev_run_forever = self._prev_create_task = None

    def install(self) -> None:
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
        the factory it had (once per loop)."""
        if loop in self._loops:
            return
        self._loops[loop] = loop.get_task_factory()
        loop.set_task_factory(self._factory)

    def _factory(self, loop, coro, **kwargs):
        import asyncio
        with self._lock:
            record = TaskRecord(len(self._tasks), _coroutine_name(coro), self._steps)
            self._tasks.append(record)
        previous = self._loops.get(loop)
        wrapped = _timed(coro, record)
        task = (previous(loop, wrapped, **kwargs) if previous is not None
                else asyncio.Task(wrapped, loop=loop, **kwargs))
        record.name = task.get_name()
        task.add_done_callback(lambda _t, r=record: r.finish())
        return task

    def rows(self) -> list:
        with self._lock:
            return [t.row() for t in self._tasks]

    def publish(self) -> None:
        """Hands the table and the steps to the core for the next finalize
        to write (/task_table, and each call's task_ids and await_ns)."""
        _ext.tasks_set(self.rows())
        _ext.task_steps_set(array("q", self._steps))
