"""The recursive tracer's two hooks (PyEval_SetProfile, and sys.monitoring on
Python 3.12+) record the same regions with the same counts and the same
call paths: generators once per resume, an exception's unwind ending the
frames it leaves, C functions not recorded, other threads not traced."""
import collections
import sys
import threading

import pytest

import spanscope
from spanscope import ProfileManager, _ext

HAS_MONITORING = sys.version_info >= (3, 12)
HAS_EVALFRAME = sys.version_info < (3, 14)  # the frame layouts it knows: 3.10-3.13
HOOKS = (["setprofile"] + (["evalframe"] if HAS_EVALFRAME else [])
         + (["monitoring"] if HAS_MONITORING else []))


def traced(name):
    """The region name the tracer gives a function of this module:
    module.qualname (3.10 code objects have no co_qualname: co_name there,
    as scope-profiler's tracer names them)."""
    return f"{__name__}.{name if sys.version_info >= (3, 11) else name.rsplit('.', 1)[-1]}"


def leaf(n):
    return n


def raiser():
    leaf(0)
    raise ValueError("out")


def gen(n):
    for i in range(n):
        yield leaf(i)


def rec(n):
    return 0 if n == 0 else rec(n - 1) + 1


class K:
    def method(self):
        return leaf(1)


@ProfileManager.profile("inner.decorated")
def decorated():
    return leaf(2)


def body():
    """What the recursive function runs: each kind of frame once."""
    assert sum(gen(3)) == 3            # a generator: started once, resumed 3 times
    assert list(map(leaf, range(2))) == [0, 1]  # Python called from C
    sorted([3, 1, 2], key=leaf)        # 3 more leaf calls from C
    try:
        raiser()                       # unwinds: its region ends all the same
    except ValueError:
        pass
    rec(3)                             # 4 nested frames
    K().method()
    decorated()                        # records itself, traced inside
    t = threading.Thread(target=leaf, args=(7,))  # not traced: another thread
    t.start()
    t.join()
    len([1])                           # a C function: not a region


@ProfileManager.profile("top", recursive=True)
def top():
    body()


@ProfileManager.profile("top.extra", recursive=True)
def top_extra():
    """Also the cases whose event counts differ between Python versions
    (closing a suspended generator): compared hook against hook only."""
    g = gen(5)
    next(g)
    g.close()
    g = gen(5)
    next(g)
    try:
        g.throw(KeyError("in"))
    except KeyError:
        pass

    async def coro():
        return leaf(3)
    c = coro()
    try:
        c.send(None)
    except StopIteration:
        pass
    top()  # a recursive wrapper inside another: one tracer


def paths(res):
    """Counter of call paths ("top/body/leaf") over every recorded event."""
    ev = res.events
    names = [res.rows[int(r)].name if r != 0xFFFFFFFF else "?" for r in ev.row]
    out = collections.Counter()
    for i in range(len(names)):
        p, j = [], i
        while j >= 0:
            p.append(names[j])
            j = int(ev.parent[j])
        out["/".join(reversed(p))] += 1
    return out


def record(tmp_path, hook, fn, calls=2):
    _ext.set_trace_hook(hook)
    try:
        path = tmp_path / f"{hook}.h5"
        ProfileManager.setup(file_path=str(path))
        for _ in range(calls):
            fn()
        counts = {n: ProfileManager.get_region(n).num_calls
                  for n in ProfileManager.recorded_regions()}
        ProfileManager.finalize(verbose=False)
        return counts, paths(spanscope.read(str(path)))
    finally:
        _ext.set_trace_hook(default_hook)
        ProfileManager._reset()


default_hook = _ext.trace_hook()


def test_the_default_hook_per_version():
    # the one measured cheapest per traced call on each version
    # (docs/benchmarks.md, "Python versions"): the frame evaluation hook
    # (tests/python/test_recursive_fast.py compares it with setprofile)
    # (on 3.12 with the C recursion count of each frame it evaluates given
    # back: tests/python/test_recursive_fast.py's deep recursion tests)
    assert default_hook == ("evalframe" if HAS_EVALFRAME else "monitoring")


@pytest.mark.parametrize("hook", HOOKS)
def test_counts_of_each_kind_of_frame(tmp_path, hook):
    counts, p = record(tmp_path, hook, top, calls=2)
    ours = {k: v for k, v in counts.items()  # threading's own frames vary by version
            if k.startswith(__name__ + ".") or "." not in k or k == "inner.decorated"}
    assert ours == {
        "top": 2,
        traced("body"): 2,
        traced("gen"): 2 * 4,       # one start, three resumes
        traced("leaf"): 2 * (3 + 2 + 3 + 1 + 1 + 1),
        traced("raiser"): 2,
        traced("rec"): 2 * 4,
        traced("K.method"): 2,
        "inner.decorated": 2,
    }
    assert ProfileManager.counters()["misuse"] == 0
    b = "top/" + traced("body")
    assert p[f"{b}/{traced('raiser')}/{traced('leaf')}"] == 2  # closed by the unwind
    assert p[f"{b}/inner.decorated/{traced('leaf')}"] == 2
    deepest = "/".join([b] + [traced("rec")] * 4)
    assert p[deepest] == 2


@pytest.mark.skipif(not HAS_MONITORING, reason="sys.monitoring is Python 3.12+")
@pytest.mark.parametrize("fn", [top, top_extra], ids=["top", "top_extra"])
def test_monitoring_records_what_setprofile_records(tmp_path, fn):
    a = record(tmp_path, "setprofile", fn)
    b = record(tmp_path, "monitoring", fn)
    assert a[0] == b[0]
    assert a[1] == b[1]


@pytest.mark.skipif(not HAS_MONITORING, reason="sys.monitoring is Python 3.12+")
def test_monitoring_leaves_the_tool_id_of_profilers_and_its_events_off(tmp_path):
    import cProfile
    record(tmp_path, "monitoring", top, calls=1)
    mon = sys.monitoring
    held = [i for i in range(6) if mon.get_tool(i) == "spanscope"]
    assert len(held) == 1 and held[0] not in (mon.DEBUGGER_ID, mon.COVERAGE_ID,
                                                mon.PROFILER_ID, mon.OPTIMIZER_ID)
    assert mon.get_events(held[0]) == 0  # off once the outermost call returned
    # cProfile (sys.monitoring.PROFILER_ID) runs alongside, and sees the calls
    pr = cProfile.Profile()
    _ext.set_trace_hook("monitoring")
    try:
        ProfileManager.setup(output=None)
        pr.enable()
        top()
        pr.disable()
        assert ProfileManager.get_region(traced("rec")).num_calls == 4
    finally:
        _ext.set_trace_hook(default_hook)
        ProfileManager._reset()
    pr.create_stats()
    assert any(k[2] == "rec" and v[1] == 4 for k, v in pr.stats.items())


def test_a_profile_function_set_before_is_still_called(tmp_path):
    """setprofile chains to the hook that was there; monitoring leaves it
    in place: either way it sees the calls made inside."""
    for hook in HOOKS:
        seen = []

        def prof(frame, event, arg):
            if event == "call" and frame.f_code.co_name == "rec":
                seen.append(1)
        _ext.set_trace_hook(hook)
        ProfileManager.setup(output=None)
        sys.setprofile(prof)
        try:
            top()
        finally:
            sys.setprofile(None)
            _ext.set_trace_hook(default_hook)
        assert ProfileManager.get_region(traced("rec")).num_calls == 4, hook
        ProfileManager._reset()
        assert len(seen) == 4, hook


def test_set_trace_hook_rejects_what_it_cannot_do():
    with pytest.raises(ValueError, match="'setprofile' or 'monitoring'"):
        _ext.set_trace_hook("settrace")
    with pytest.raises(TypeError):
        _ext.set_trace_hook(1)
    if not HAS_MONITORING:
        with pytest.raises(ValueError, match="3.12"):
            _ext.set_trace_hook("monitoring")
