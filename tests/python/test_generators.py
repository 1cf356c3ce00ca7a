"""Generators and coroutines suspended inside a region: the documented
behaviour (docs/python.md, "Exceptions, threads, generators")."""
import asyncio
import threading

from spanscope import ProfileManager


def test_generator_suspended_in_a_region_same_thread():
    ProfileManager.setup(output=None)

    def gen():
        with ProfileManager.region("gen.body"):
            yield 1
            yield 2

    with ProfileManager.region("outer"):
        g = gen()
        assert next(g) == 1
        with ProfileManager.region("between"):  # nests inside the open gen.body
            pass
        assert next(g) == 2
        assert list(g) == []
    assert ProfileManager.get_region("gen.body").num_calls == 1
    assert ProfileManager.get_region("between").num_calls == 1
    assert ProfileManager.counters()["misuse"] == 0
    body = ProfileManager.get_region("gen.body").stats
    between = ProfileManager.get_region("between").stats
    assert body.self_ns == body.total_ns - between.total_ns  # it was the parent


def test_generator_resumed_on_another_thread_is_counted_as_misuse():
    ProfileManager.setup(output=None)

    def gen():
        with ProfileManager.region("moved"):
            yield 1
            yield 2

    g = gen()
    next(g)  # enters the region on this thread

    def finish():
        list(g)  # leaves it on another thread

    t = threading.Thread(target=finish)
    t.start()
    t.join()
    assert ProfileManager.get_region("moved").num_calls == 0  # stays open here
    assert ProfileManager.counters()["misuse"] == 1


def test_coroutines_interleaved_on_one_thread():
    ProfileManager.setup(output=None)

    async def task(name, delay):
        with ProfileManager.region(name):
            await asyncio.sleep(delay)

    async def main():
        # b's timer must fire before a's even when the loop is preempted
        # between the two starts on a loaded machine: a waits far longer
        await asyncio.gather(task("a", 0.05), task("b", 0.001))

    asyncio.run(main())
    # b entered after a and left first: properly nested on the one thread
    assert ProfileManager.get_region("a").num_calls == 1
    assert ProfileManager.get_region("b").num_calls == 1
    assert ProfileManager.counters()["misuse"] == 0


def test_coroutines_leaving_out_of_order():
    """a enters, b enters, a leaves first: leaving a closes b at that moment
    (the one nesting rule, counted as misuse) and b's own exit later finds
    nothing open (ignored, counted)."""
    ProfileManager.setup(output=None)

    async def task(name, delay):
        with ProfileManager.region(name):
            await asyncio.sleep(delay)

    async def main():
        await asyncio.gather(task("a", 0.001), task("b", 0.003))

    asyncio.run(main())
    a, b = ProfileManager.get_region("a").stats, ProfileManager.get_region("b").stats
    assert a.num_calls == 1 and b.num_calls == 1
    assert b.total_ns <= a.total_ns  # b was cut at a's exit
    assert ProfileManager.counters()["misuse"] == 2
