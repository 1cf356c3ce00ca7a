"""The recursive tracer's fast paths (issue 35, part 7b): the frame
evaluation hook that is the default on Python 3.10 and 3.11 records what
the setprofile hook records (generators, coroutines, exceptions, threads,
nested wrappers), the region cached in each code object follows new
filters and new sessions, everything stays balanced however the traced
code ends, and `import spanscope` / `spanscope run` start without numpy and
h5py while every results name still resolves."""
import asyncio
import collections
import os
import subprocess
import sys
import textwrap

import pytest

import spanscope
from spanscope import ProfileManager, _ext

DEFAULT = _ext.trace_hook()
#: the hook each version uses by default (measured the cheapest per traced
#: call: docs/benchmarks.md); setprofile is the reference the others match
HAS_EVALFRAME = sys.version_info < (3, 14)  # the frame layouts it knows: 3.10-3.13
#: (3.12 counts C recursion against a low limit of its own, which the hook
#: gives back for each frame it evaluates: test_deep_recursion_* below)
FAST = "evalframe" if HAS_EVALFRAME else "monitoring"
#: the hooks compared with setprofile
HOOKS = (["evalframe"] if HAS_EVALFRAME else []) + (
    ["monitoring"] if sys.version_info >= (3, 12) else [])


def traced(name):
    """The region name of a function of this module (3.10: co_name)."""
    return f"{__name__}.{name if sys.version_info >= (3, 11) else name.rsplit('.', 1)[-1]}"


def leaf(n):
    return n


def gen(n):
    for i in range(n):
        yield leaf(i)


def deep_raise(n):
    if n == 0:
        raise KeyError("deep")
    return deep_raise(n - 1)


async def acoro(n):
    await asyncio.sleep(0)
    return leaf(n)


async def amain():
    return sum(await asyncio.gather(acoro(1), acoro(2)))


def agen_user():
    async def agen():
        for i in range(3):
            yield leaf(i)
            await asyncio.sleep(0)

    async def consume():
        return [x async for x in agen()]
    return asyncio.run(consume())


def work():
    """Each kind of frame the hooks must agree on."""
    assert sum(gen(4)) == 6
    g = gen(5)
    next(g)
    g.close()                          # GeneratorExit thrown into a suspended frame
    g = gen(5)
    next(g)
    with pytest.raises(ValueError):
        g.throw(ValueError("in"))       # an exception thrown in and not caught
    with pytest.raises(KeyError):
        deep_raise(3)                  # an unwind through 4 frames
    assert asyncio.run(amain()) == 3   # coroutines, tasks, the event loop's own code
    assert agen_user() == [0, 1, 2]    # an async generator
    assert list(map(leaf, range(3))) == [0, 1, 2]  # Python called from C
    inner()                            # a recursive wrapper inside another


@ProfileManager.profile("fast.inner", recursive=True)
def inner():
    return leaf(9)


@ProfileManager.profile("fast.top", recursive=True)
def top():
    work()


def record(tmp_path, hook, fn, calls=2):
    """(counts per region, Counter of call paths) of `calls` calls of fn
    recorded with the hook."""
    _ext.set_trace_hook(hook)
    try:
        path = tmp_path / f"{hook}.h5"
        ProfileManager.setup(file_path=str(path))
        for _ in range(calls):
            fn()
        counts = {n: ProfileManager.get_region(n).num_calls
                  for n in ProfileManager.recorded_regions()}
        assert ProfileManager.counters()["misuse"] == 0
        ProfileManager.finalize(verbose=False)
        res = spanscope.read(str(path))
        ev = res.events
        names = [res.rows[int(r)].name if r != 0xFFFFFFFF else "?" for r in ev.row]
        paths = collections.Counter()
        for i in range(len(names)):
            p, j = [], i
            while j >= 0:
                p.append(names[j])
                j = int(ev.parent[j])
            paths["/".join(reversed(p))] += 1
        return counts, paths
    finally:
        _ext.set_trace_hook(DEFAULT)
        ProfileManager._reset()


def test_the_default_hook_is_the_fast_one():
    assert DEFAULT == FAST


def ours(counts, paths):
    """This module's regions (the standard library's, asyncio's, vary with
    what ran before in the process: its first event loop policy...)."""
    def mine(name):
        return name.startswith(("fast.", __name__ + "."))
    return ({k: v for k, v in counts.items() if mine(k)},
            collections.Counter({k: v for k, v in paths.items()
                                 if all(mine(p) for p in k.split("/"))}))


@pytest.mark.parametrize("hook", HOOKS)
def test_the_fast_hooks_record_what_setprofile_records(tmp_path, hook):
    a_counts, a_paths = ours(*record(tmp_path, "setprofile", top))
    b_counts, b_paths = ours(*record(tmp_path, hook, top))
    assert b_counts == a_counts
    assert b_paths == a_paths
    # and the figures themselves, for this module's functions
    assert b_counts["fast.top"] == 2 and b_counts["fast.inner"] == 2
    assert b_counts[traced("deep_raise")] == 2 * 4
    # gen: sum(gen(4)) starts it and resumes it 4 times; the two others are
    # started once and then closed / thrown into once (3.13 closes a
    # generator suspended outside any try block without resuming its frame)
    closed = 2 if sys.version_info < (3, 13) else 1
    assert b_counts[traced("gen")] == 2 * (5 + closed + 2)
    assert b_counts[traced("acoro")] >= 2 * 2 * 2  # a start and a resume each, at least
    deepest = "/".join(["fast.top", traced("work")] + [traced("deep_raise")] * 4)
    assert b_paths[deepest] == 2
    assert b_paths[f"fast.top/{traced('work')}/fast.inner/{traced('leaf')}"] == 2


@pytest.mark.parametrize("hook", HOOKS)
def test_other_threads_are_not_traced_by_the_fast_hooks(tmp_path, hook):
    import threading

    def other():
        for _ in range(1000):
            leaf(0)
    t = threading.Thread(target=other)
    _ext.set_trace_hook(hook)
    try:
        ProfileManager.setup(output=None)

        @ProfileManager.profile("fast.threads", recursive=True)
        def run():
            t.start()
            t.join()
            return leaf(1)
        run()
        assert ProfileManager.get_region(traced("leaf")).num_calls == 1
    finally:
        _ext.set_trace_hook(DEFAULT)
        ProfileManager._reset()


def test_an_exception_out_of_the_outermost_call_leaves_nothing_open(tmp_path):
    @ProfileManager.profile("fast.raises", recursive=True)
    def raises():
        g = gen(3)
        next(g)           # suspended when the tracer stops: resumed after, untraced
        deep_raise(2)
    ProfileManager.setup(output=None)
    try:
        with pytest.raises(KeyError):
            raises()
        assert _ext.open_calls_all() in (None, []) or not [
            c for c in _ext.open_calls_all() if c[2] != "?"]
        assert ProfileManager.get_region(traced("deep_raise")).num_calls == 3
        assert ProfileManager.get_region("fast.raises").num_calls == 1
        assert ProfileManager.counters()["misuse"] == 0
        assert ProfileManager.get_region(traced("leaf")).num_calls == 1  # gen's first
        leaf(0)           # untraced now
        assert ProfileManager.get_region(traced("leaf")).num_calls == 1
    finally:
        ProfileManager._reset()


def test_a_generator_started_under_the_tracer_and_resumed_after_it(tmp_path):
    g = None

    @ProfileManager.profile("fast.gen_owner", recursive=True)
    def owner():
        nonlocal g
        g = gen(4)
        return next(g)
    ProfileManager.setup(output=None)
    try:
        owner()
        assert list(g) == [1, 2, 3]   # resumed untraced: records nothing
        owner()                       # and traced again
        assert ProfileManager.get_region(traced("gen")).num_calls == 2
        assert ProfileManager.get_region(traced("leaf")).num_calls == 2
        assert ProfileManager.counters()["misuse"] == 0
    finally:
        ProfileManager._reset()


def test_the_cached_region_follows_new_filters_and_new_sessions(tmp_path):
    """The decision is cached in the code object (co_extra) under a
    generation: new filters and a new session decide again."""
    @ProfileManager.profile("fast.cache", recursive=True)
    def run():
        return leaf(1) + leaf(2)
    ProfileManager.setup(output=None)
    try:
        run()
        assert ProfileManager.get_region(traced("leaf")).num_calls == 2
        _ext.set_trace_filters((), ("*.leaf",), None)   # leaf now left out
        run()
        assert ProfileManager.get_region(traced("leaf")).num_calls == 2
        _ext.set_trace_filters((), (), None)            # and back in
        run()
        assert ProfileManager.get_region(traced("leaf")).num_calls == 4
        old = ProfileManager.get_region(traced("leaf")).id
    finally:
        _ext.set_trace_filters((), (), None)
        ProfileManager._reset()
    ProfileManager.setup(output=None)                   # a new registry
    try:
        run()
        r = ProfileManager.get_region(traced("leaf"))
        assert r.num_calls == 2                         # recorded into the new session
        assert int(r.id) in _ext.traced_regions
        assert old is not None
    finally:
        ProfileManager._reset()


def run_py(code, *args):
    """Runs code in a fresh interpreter (this one) and returns its stdout."""
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code), *args],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_import_spanscope_imports_neither_numpy_nor_h5py():
    out = run_py("""
        import sys
        import spanscope
        from spanscope import ProfileManager
        print(sorted(m for m in ("numpy", "h5py", "matplotlib") if m in sys.modules))
    """)
    assert out.strip() == "[]"


def test_spanscope_run_recursive_starts_without_numpy(tmp_path):
    script = tmp_path / "s.py"
    script.write_text("import sys\n"
                      "def f(n):\n    return n\n"
                      "f(1)\n"
                      "print(sorted(m for m in ('numpy', 'h5py') if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-m", "spanscope", "run", "--recursive", "-q",
                          "-o", str(tmp_path / "s.h5"), str(script)],
                         capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
    res = spanscope.read(str(tmp_path / "s.h5"))
    assert res["__main__.f"].num_calls == 1


#: what `import spanscope` no longer imports at start (issue 35 part 7b:
#: a third of its time was dataclasses -> inspect -> ast, dis, tokenize, for
#: ProfilingOptions, and the mpi4py wrappers): each on first use instead
LAZY_AT_START = ("dataclasses", "inspect", "json", "spanscope._option_classes",
                 "spanscope.mpi_wrappers")


def test_import_spanscope_builds_no_options_class_and_no_mpi_wrapper():
    out = run_py(f"""
        import sys
        import spanscope
        from spanscope import ProfileManager
        print(sorted(m for m in {LAZY_AT_START!r} if m in sys.modules))
    """)
    assert out.strip() == "[]"


def test_the_lazy_names_resolve_as_before():
    """Each name resolves on first use, to the same object wherever it is
    named, and the classes keep spanscope.options as their module (their
    repr and pickles are as before)."""
    out = run_py("""
        import pickle, sys
        import spanscope
        from spanscope import options, mpi_wrappers
        from spanscope.options import ProfilingOptions, HDF5Options
        assert spanscope.ProfilingOptions is ProfilingOptions is options.ProfilingOptions
        assert spanscope.HDF5Options is HDF5Options
        assert ProfilingOptions.__module__ == "spanscope.options"
        o = ProfilingOptions(label="x", hdf5=HDF5Options(compression="gzip"))
        assert pickle.loads(pickle.dumps(o)) == o
        assert o.to_kwargs() == {"label": "x", "hdf5_compression": "gzip"}
        assert spanscope.format_mpi_region is mpi_wrappers.format_mpi_region
        assert spanscope.mpi_wrappers is mpi_wrappers
        assert set(options.CONFIG_FIELDS) == set(options.DEFAULTS)
        print("ok")
    """)
    assert out.strip() == "ok"


def test_profile_mpi_calls_hook_imports_the_wrappers_on_first_use():
    """setup(profile_mpi_calls=True) before anything named the wrappers: the
    hook registered by spanscope's __init__ imports them and starts theirs."""
    out = run_py("""
        import sys
        import spanscope
        from spanscope.profile_manager import _session
        assert "spanscope.mpi_wrappers" not in sys.modules
        hook = _session._RUN_HOOKS["profile_mpi_calls"]
        cm = hook()
        assert "spanscope.mpi_wrappers" in sys.modules
        assert hasattr(cm, "__enter__") and hasattr(cm, "__exit__")
        print("ok")
    """)
    assert out.strip() == "ok"


@pytest.mark.parametrize("limit, drops", [(None, False), (32 << 20, True)])
def test_a_recursive_run_holds_its_calls_in_a_larger_pool(tmp_path, limit, drops):
    """A recursive session's pool is 128 MiB when memory_limit is left at 0
    (docs/python.md): 2.5 million traced calls (16 bytes each, 40 MB) fit
    in it and none is dropped under overflow = "drop", where the core's
    32 MiB default, set explicitly, drops the calls past it."""
    config = tmp_path / "c.toml"
    config.write_text('[profiling]\noverflow = "drop"\n' +
                      (f"memory_limit = {limit}\n" if limit else ""))
    script = tmp_path / "s.py"
    script.write_text("import spanscope\n"
                      "def f():\n    pass\n"
                      "for _ in range(2_500_000):\n    f()\n"
                      "print(spanscope.ProfileManager.counters()['dropped'])\n")
    out = subprocess.run([sys.executable, "-m", "spanscope", "run", "--recursive", "-q",
                          "--config", str(config), "--no-output", str(script)],
                         capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    dropped = int(out.stdout.strip().splitlines()[-1])
    assert (dropped > 0) == drops, dropped


def test_the_larger_pool_is_neither_for_mpi_ranks_nor_over_a_setting(monkeypatch):
    from spanscope.profile_manager import _session
    from spanscope._base import mpi
    for var in mpi._LAUNCHER_VARS:
        monkeypatch.delenv(var, raising=False)
    rec = {"memory_limit": 0, "recursive_profile": True}
    assert _session._pool_bytes(rec) == 128 << 20
    assert _session._pool_bytes({**rec, "recursive_profile": False}) == 0  # the core's
    assert _session._pool_bytes({**rec, "memory_limit": 1 << 20}) == 1 << 20
    monkeypatch.setenv("PMI_SIZE", "64")  # many ranks to a node: each its own pool
    assert _session._pool_bytes(rec) == 0


def test_every_results_name_still_resolves_lazily():
    out = run_py("""
        import sys
        import spanscope
        assert "spanscope.results" not in sys.modules
        from spanscope import read_h5, ProfilingResults, export_speedscope, inspect_file
        assert spanscope.read is spanscope.results.read
        assert spanscope.Region is spanscope.results.Region
        missing = [n for n in spanscope.__all__ if not hasattr(spanscope, n)]
        print(missing)
        try:
            spanscope.no_such_name
        except AttributeError as e:
            print("AttributeError", e)
    """)
    lines = out.strip().splitlines()
    assert lines[0] == "[]"
    assert lines[1].startswith("AttributeError") and "no_such_name" in lines[1]


@pytest.mark.skipif(not HAS_EVALFRAME, reason="no frame evaluation hook on this Python")
def test_the_frame_evaluation_hook_is_there_only_while_tracing():
    """Installed by the first outermost recursive call, removed when the
    last one returns or raises; nested wrappers and another tracing thread
    keep it installed until they end."""
    import threading

    seen = []
    go, done = threading.Event(), threading.Event()

    @ProfileManager.profile("fast.hook_outer", recursive=True)
    def outer():
        seen.append(_ext._evalframe_installed())
        nested()
        seen.append(_ext._evalframe_installed())

    @ProfileManager.profile("fast.hook_nested", recursive=True)
    def nested():
        seen.append(_ext._evalframe_installed())

    @ProfileManager.profile("fast.hook_thread", recursive=True)
    def in_thread():
        go.set()
        done.wait(10)

    @ProfileManager.profile("fast.hook_raise", recursive=True)
    def raises():
        seen.append(_ext._evalframe_installed())
        raise KeyError("x")

    ProfileManager.setup(output=None)
    _ext.set_trace_hook("evalframe")
    try:
        assert not _ext._evalframe_installed()
        outer()
        assert seen == [True, True, True]
        assert not _ext._evalframe_installed()
        with pytest.raises(KeyError):
            raises()
        assert seen[-1] is True and not _ext._evalframe_installed()
        t = threading.Thread(target=in_thread)
        t.start()
        assert go.wait(10)
        outer()                                   # the other thread still traces
        assert _ext._evalframe_installed()
        done.set()
        t.join()
        assert not _ext._evalframe_installed()
        assert ProfileManager.counters()["misuse"] == 0
    finally:
        done.set()
        _ext.set_trace_hook(DEFAULT)
        ProfileManager._reset()


def test_skipped_files_follow_a_change_of_prefixes(tmp_path):
    """set_trace_skip's decision per file is cached (one realpath per
    file, not per code object); a new set of prefixes decides again."""
    here = os.path.dirname(os.path.realpath(__file__))

    def calls(name):
        r = ProfileManager.get_region(traced(name))  # None: never recorded
        return 0 if r is None else r.num_calls

    @ProfileManager.profile("fast.skip", recursive=True)
    def run():
        return leaf(1) + len(list(gen(2)))
    ProfileManager.setup(output=None)
    try:
        _ext.set_trace_skip((here,))
        run()
        assert calls("leaf") == 0
        assert calls("gen") == 0
        _ext.set_trace_skip((here + "-not",))     # a prefix of the name, not of the path
        run()
        assert calls("leaf") == 3
        _ext.set_trace_skip((here,))
        run()
        assert calls("leaf") == 3
        _ext.set_trace_skip(None)
        run()
        assert calls("leaf") == 6
        assert calls("gen") == 2 * 3
    finally:
        _ext.set_trace_skip(None)
        ProfileManager._reset()


def catcher():
    """A generator that reports what is thrown into it."""
    try:
        yield 1
    except ValueError as e:
        yield f"caught {e}"


@pytest.mark.parametrize("hook", ["setprofile"] + HOOKS)
def test_an_exception_thrown_into_a_frame_the_tracer_first_sees_then(hook):
    """The tracer's first look at a code object (its slow path: the name,
    the filters, the region) may come with an exception pending, thrown
    into a generator: it must reach the generator."""
    _ext.set_trace_hook(hook)
    ProfileManager.setup(output=None)
    try:
        g = catcher()
        assert next(g) == 1        # started untraced: the code is new to the tracer

        @ProfileManager.profile("fast.throw", recursive=True)
        def throw_in():
            return g.throw(ValueError("in"))
        assert throw_in() == "caught in"

        h = catcher()
        next(h)

        @ProfileManager.profile("fast.throw_out", recursive=True)
        def throw_through():
            return h.throw(KeyError("out"))
        _ext.set_trace_filters((), (), None)   # a new generation: decided again
        with pytest.raises(KeyError, match="out"):
            throw_through()
        assert ProfileManager.counters()["misuse"] == 0
    finally:
        _ext.set_trace_hook(DEFAULT)
        ProfileManager._reset()


def test_deep_recursion_is_not_broken_by_the_default_hook():
    """The frame evaluation hook makes each Python call a C call: 3.12's C
    recursion limit would refuse 900 frames (1500 counts in 3.12.1) unless
    the hook gives each frame's count back, and under a raised recursion
    limit 3.11, 3.12 and 3.13 trace with the other hook (3.11 crashed at
    30 000 frames, 3.13 refused 8 000)."""
    out = run_py("""
        import sys
        from spanscope import ProfileManager, _ext
        ProfileManager.setup(output=None)
        def rec(n):
            return 0 if n == 0 else rec(n - 1) + 1
        @ProfileManager.profile("deep", recursive=True)
        def top(n):
            return rec(n), _ext._evalframe_installed()
        shallow = top(900)
        sys.setrecursionlimit(40000)
        # 3.10 recurses in C untraced too (it crashes there at about 30 000
        # frames by itself): the deep case is 3.11's to 3.13's
        deep = top(20000 if sys.version_info[:2] in ((3, 11), (3, 12), (3, 13)) else 900)
        print(shallow[0], deep[0], shallow[1], deep[1],
              ProfileManager.get_region(__name__ + ".rec").num_calls)
    """)
    shallow, deep, ef_shallow, ef_deep, calls = out.split()
    assert shallow == "900" and deep in ("20000", "900")
    assert ef_shallow == str(FAST == "evalframe")
    # the other hook under the raised limit, except on 3.10 (no C stack change)
    assert ef_deep == str(FAST == "evalframe" and sys.version_info < (3, 11))
    assert int(calls) == 901 + int(deep) + 1


@pytest.mark.skipif(not HAS_EVALFRAME, reason="no frame evaluation hook on this Python")
def test_deep_recursion_under_the_hook_up_to_its_safe_limit():
    """Under the largest recursion limit that keeps the frame evaluation
    hook (EF_SAFE_LIMIT: 4000 on 3.12 and 3.13, 10 000 on 3.11), a recursion
    close to it runs traced on the main thread and on another thread, and
    past it the interpreter's RecursionError comes, not a crash (3.12: with
    the C recursion count each frame's evaluation takes given back)."""
    out = run_py("""
        import sys, threading
        from spanscope import ProfileManager, _ext
        ProfileManager.setup(output=None)
        limit = 10000 if sys.version_info[:2] == (3, 11) else 4000
        sys.setrecursionlimit(limit)
        def rec(n):
            return 0 if n == 0 else rec(n - 1) + 1
        @ProfileManager.profile("deep", recursive=True)
        def top(n):
            try:
                return rec(n), _ext._evalframe_installed()
            except RecursionError:
                return "RecursionError", _ext._evalframe_installed()
        got = {}
        def worker():
            got["thread"] = top(limit - 100)
        main = top(limit - 100)
        th = threading.Thread(target=worker)
        th.start()
        th.join()
        over = top(limit + 10)
        print(main[0], main[1], got["thread"][0], got["thread"][1], over[0], over[1])
    """)
    main, ef_main, thread, ef_thread, over, ef_over = out.split()
    limit = 10000 if sys.version_info[:2] == (3, 11) else 4000
    want = 3900 if limit == 4000 else 9900
    assert (main, thread, over) == (str(want), str(want), "RecursionError")
    assert ef_main == ef_thread == ef_over == "True"


@pytest.mark.skipif(not HAS_EVALFRAME, reason="no frame evaluation hook on this Python")
def test_an_explicit_evalframe_stays_under_a_high_recursion_limit():
    old = sys.getrecursionlimit()
    _ext.set_trace_hook("evalframe")
    ProfileManager.setup(output=None)
    try:
        sys.setrecursionlimit(50000)

        @ProfileManager.profile("fast.explicit", recursive=True)
        def run():
            return _ext._evalframe_installed()
        assert run() is True
    finally:
        sys.setrecursionlimit(old)
        _ext.set_trace_hook(DEFAULT)
        ProfileManager._reset()
