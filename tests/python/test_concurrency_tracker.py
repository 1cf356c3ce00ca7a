"""scope-profiler's concurrency API on spanscope: ConcurrencyTracker
(threads, tasks, current_thread, install/uninstall, instrument_loop,
snapshot) over the track_async task tracker, and lane_ids (the file
model's lane rule)."""
import asyncio
import gc
import threading

import numpy as np
import pytest

from spanscope import ProfileManager
from spanscope.profile_manager import ConcurrencyTracker, lane_ids
from spanscope.profile_manager._tasks import NO_TASK, UNKNOWN, TaskTracker


def test_threads_register_once_with_dense_indices_and_close_at_exit():
    tracker = ConcurrencyTracker()
    me = tracker.current_thread()
    assert tracker.current_thread() is me and me.index == 0 and me.alive
    assert "index=0" in repr(me) and me.name == threading.current_thread().name
    seen = []
    workers = [threading.Thread(target=lambda: seen.append(tracker.current_thread()),
                                name=f"t{i}") for i in range(3)]
    for w in workers:
        w.start()
        w.join()
    gc.collect()
    assert [t.index for t in tracker.threads] == [0, 1, 2, 3]
    assert [t.name for t in tracker.threads[1:]] == ["t0", "t1", "t2"]
    for record in seen:
        assert not record.alive and record.end_ns >= record.start_ns
    assert tracker.tasks == []


def test_install_is_idempotent_and_uninstall_restores_asyncio():
    run_forever = asyncio.BaseEventLoop.run_forever
    create_task = asyncio.BaseEventLoop.create_task
    tracker = ConcurrencyTracker(track_async=True)
    tracker.install()
    hooked = asyncio.BaseEventLoop.run_forever
    assert hooked is not run_forever
    tracker.install()
    assert asyncio.BaseEventLoop.run_forever is hooked
    tracker.uninstall()
    tracker.uninstall()
    assert asyncio.BaseEventLoop.run_forever is run_forever
    assert asyncio.BaseEventLoop.create_task is create_task
    asyncio.run(asyncio.sleep(0))
    assert tracker.tasks == []
    plain = ConcurrencyTracker()  # threads only: no asyncio hooks
    plain.install()
    assert asyncio.BaseEventLoop.run_forever is run_forever
    plain.uninstall()


def test_tasks_split_running_from_suspended_and_snapshot_as_columns():
    tracker = ConcurrencyTracker(track_async=True)
    tracker.install()
    try:
        async def job():  # 100 ms asleep: a preempted step (a loaded machine) runs
            await asyncio.sleep(0.1)  # tens of ms, never as long as that

        async def main():
            await asyncio.gather(job(), job())

        asyncio.run(main())
    finally:
        tracker.uninstall()
    jobs = [t for t in tracker.tasks if t.coro_name.endswith("job")]
    assert len(jobs) == 2
    for task in jobs:
        assert task.done and task.steps >= 2 and task.name.startswith("Task-")
        assert task.suspended_ns >= 90_000_000 and task.running_ns < task.suspended_ns
        assert task.thread_index == 0 and "TaskRecord" in repr(task)
    snap = tracker.snapshot(origin_ns=tracker.tasks[0].created_ns)
    assert snap["tasks"]["created_ns"][0] == 0
    assert snap["tasks"]["index"].tolist() == list(range(len(tracker.tasks)))
    assert snap["threads"]["name"] == [threading.current_thread().name]
    assert snap["threads"]["end_ns"].tolist() == [UNKNOWN]
    assert snap["threads"]["daemon"].dtype == np.int8


def test_instrument_loop_chains_the_factory_the_loop_had():
    tracker = ConcurrencyTracker(track_async=True)
    seen = []

    def factory(loop, coro, **kwargs):
        seen.append(coro)
        return asyncio.Task(coro, loop=loop, **kwargs)

    async def main():
        loop = asyncio.get_running_loop()
        loop.set_task_factory(factory)
        tracker.instrument_loop(loop)
        tracker.instrument_loop(loop)  # once per loop
        await asyncio.gather(asyncio.sleep(0))

    asyncio.run(main())
    # gather's sleep, then asyncio.run's own shutdown tasks: all through both
    assert seen and tracker.tasks and len(seen) == len(tracker.tasks)
    assert tracker.tasks[0].coro_name == "sleep"


def test_lane_ids_keep_thread_and_task_lanes_apart():
    threads = np.array([0, 1, 2, -1])
    assert lane_ids(threads, None).tolist() == [-2, -3, -4, -1]
    assert lane_ids(threads, np.array([NO_TASK, 7, NO_TASK, 0])).tolist() == [-2, 7, -4, 0]
    with pytest.raises(ValueError, match="same length"):
        lane_ids(threads, np.array([1]))


def test_the_sessions_tracker_is_a_concurrency_tracker(tmp_path):
    assert TaskTracker().track_async
    with ProfileManager.session(track_async=True, verbose=False, return_results=True,
                                file_path=str(tmp_path / "t.h5")) as run:
        tracker = ProfileManager._tracker
        assert isinstance(tracker, ConcurrencyTracker)

        async def job():
            with ProfileManager.region("job"):
                await asyncio.sleep(0.005)

        asyncio.run(job())
        assert [t.coro_name.rsplit(".", 1)[-1] for t in tracker.tasks][0] == "job"
    task_ids = run.results["job"][0].task_ids
    assert task_ids.tolist() == [0]
