"""ProfileManager on the C core: API, semantics, bad input."""
import os
import sys
import threading
import time

import h5py
import numpy as np
import pytest

import spanscope
from spanscope import ProfileManager


def spin(ns):
    end = time.perf_counter_ns() + ns
    while time.perf_counter_ns() < end:
        pass


def test_module_shortcuts_are_the_classmethods():
    assert spanscope.setup.__func__ is ProfileManager.setup.__func__
    # region is the extension's lookup type (the lookup in C, issue 12 part
    # 7), not a classmethod; one object under every name, __func__ included
    assert spanscope.region is ProfileManager.region is ProfileManager.profile_region
    assert spanscope.region.__func__ is ProfileManager.region.__func__
    assert spanscope.profile.__func__ is ProfileManager.profile.__func__
    assert spanscope.finalize.__func__ is ProfileManager.finalize.__func__


def test_counts_durations_and_timeline(tmp_path):
    ProfileManager.setup(file_path=str(tmp_path / "a.h5"))
    t0 = time.perf_counter_ns()
    for _ in range(5):
        with ProfileManager.region("r"):
            spin(200_000)
    t1 = time.perf_counter_ns()
    r = ProfileManager.get_region("r")
    assert r.num_calls == 5
    d = r.get_durations_numpy()
    assert d.dtype == np.int64 and d.shape == (5,)
    assert (d >= 200_000).all() and (d < 50_000_000).all()
    starts = r.get_start_times_numpy() + spanscope._ext.session_start_ns()
    # the C clock and time.perf_counter_ns are one timeline
    assert t0 <= starts[0] and starts[-1] + d[-1] <= t1
    assert (np.diff(starts) > 0).all()
    ends = r.get_end_times_numpy()
    assert np.array_equal(ends - r.get_start_times_numpy(), d)
    st = r.stats
    assert st.num_calls == 5 and st.total_ns == d.sum()
    assert st.min_ns == d.min() and st.max_ns == d.max()
    assert st.var_ns2 == pytest.approx(np.var(d, ddof=1), rel=1e-6)
    ProfileManager.finalize(verbose=False)
    with h5py.File(tmp_path / "a.h5") as f:
        assert list(f["rank_region_index/event_counts"][()]) == [5]
        assert np.array_equal(f["events/durations"][()], d)


def test_nesting_and_self_time(tmp_path):
    ProfileManager.setup(file_path=str(tmp_path / "n.h5"))
    with ProfileManager.region("outer"):
        spin(1_000_000)
        for _ in range(2):
            with ProfileManager.region("inner"):
                spin(1_000_000)
    o, i = ProfileManager.get_region("outer").stats, ProfileManager.get_region("inner").stats
    assert o.self_ns == o.total_ns - i.total_ns
    assert i.self_ns == i.total_ns
    res = ProfileManager.finalize(verbose=False, return_results=True)
    # scope-profiler's results: results[name] is per rank, [0] rank 0's Region
    outer, inner = res["outer"][0], res["inner"][0]
    assert (inner.parent_ids == outer.call_ids[0]).all()
    assert int(outer.exclusive_durations_ns.sum()) == o.self_ns
    assert outer.exclusive_duration == pytest.approx(o.self_ns * 1e-9)


def test_exception_closes_and_counts_the_region():
    ProfileManager.setup(output=None)

    @ProfileManager.profile("boom")
    def boom():
        raise KeyError("x")

    with pytest.raises(KeyError):
        boom()
    with pytest.raises(ValueError):
        with ProfileManager.region("ctx"):
            raise ValueError
    assert ProfileManager.get_region("boom").num_calls == 1
    assert ProfileManager.get_region("ctx").num_calls == 1
    assert ProfileManager.counters()["misuse"] == 0


def test_decorator_keeps_the_function_identity_and_methods():
    ProfileManager.setup(output=None)

    class K:
        @ProfileManager.profile
        def method(self, x):
            "doc"
            return x * 2

    k = K()
    assert k.method(4) == 8 and K.method(k, 1) == 2
    assert K.method.__name__ == "method" and K.method.__doc__ == "doc"
    assert ProfileManager.get_region("method").num_calls == 2


def test_recursive_names_nesting_and_generators():
    ProfileManager.setup(output=None)

    def leaf(n):
        return n

    def mid(n):
        return sum(leaf(i) for i in range(n))

    @ProfileManager.profile("top", recursive=True)
    def top():
        return mid(3)

    assert top() == 3
    names = ProfileManager.recorded_regions()
    mod = __name__
    # module.qualname; 3.10 code objects have no co_qualname: module.name there
    # (as scope-profiler's tracer names them)
    scope = "test_recursive_names_nesting_and_generators.<locals>." if sys.version_info >= (3, 11) else ""
    assert f"{mod}.{scope}mid" in names
    leaf_r = ProfileManager.get_region(f"{mod}.{scope}leaf")
    assert leaf_r.num_calls == 3
    # the decorated function itself is not traced twice
    assert ProfileManager.get_region("top").num_calls == 1
    # after the call the tracer is gone: nothing more is recorded
    mid(2)
    assert leaf_r.num_calls == 3


def test_decorator_created_before_setup_records_after_setup():
    @ProfileManager.profile("early")
    def early():
        return 1

    early()  # no session: records nothing, costs a branch
    ProfileManager.setup(output=None)
    early()
    assert ProfileManager.get_region("early").num_calls == 1
    ProfileManager.finalize(verbose=False)
    ProfileManager.setup(output=None)  # a fresh registry, decorators rebound
    # as in scope-profiler (set_config rebinds every decorator): registered,
    # not recorded, and the session's counts start from zero
    assert ProfileManager.get_region("early").num_calls == 0
    assert ProfileManager.registered_regions() == ("early",)
    assert ProfileManager.recorded_regions() == ()
    early()
    assert ProfileManager.get_region("early").num_calls == 1
    assert ProfileManager.recorded_regions() == ("early",)


def test_threads_record_into_one_session(tmp_path):
    ProfileManager.setup(file_path=str(tmp_path / "t.h5"))
    r = ProfileManager.region("work")

    def worker():
        for _ in range(1000):
            with r:
                pass

    ts = [threading.Thread(target=worker) for _ in range(8)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert r.num_calls == 8000
    ProfileManager.finalize(verbose=False)
    with h5py.File(tmp_path / "t.h5") as f:
        assert len(set(f["events/thread_ids"][()])) == 8
        assert f["rank_region_index/event_counts"][0] == 8000


def test_checkpoints_and_verbose_table(tmp_path, capsys):
    p = tmp_path / "c.h5"
    ProfileManager.setup(file_path=str(p))
    with ProfileManager.region("a"):
        pass
    ProfileManager.finalize(verbose=True)
    out = capsys.readouterr().out
    # print_summary's boxed table (issue 12; it was the C core's, "calls" column)
    assert "│ region " in out and "│ a " in out and "Summary: " in out
    with ProfileManager.region("a"):
        pass
    with ProfileManager.region("a"):
        pass
    ProfileManager.finalize(verbose=False)
    assert ProfileManager.get_region("a").num_calls == 3  # counts across checkpoints
    with h5py.File(p) as f:
        assert f["rank_region_index/event_counts"][0] == 2  # this period only


def test_session_context_manager_and_decorator(tmp_path):
    p = tmp_path / "s.h5"
    with pytest.raises(RuntimeError):
        with ProfileManager.session(file_path=str(p), verbose=False):
            with ProfileManager.region("x"):
                pass
            raise RuntimeError("body failed")
    names = spanscope.read(p).region_names
    assert "scope_profiler.session" in names and "x" in names

    @ProfileManager.session(file_path=str(tmp_path / "d.h5"), verbose=False)
    def main():
        with ProfileManager.region("y"):
            return 5

    assert main() == 5
    assert "y" in spanscope.read(tmp_path / "d.h5")


def test_read_returns_arrays_and_summary(tmp_path):
    p = tmp_path / "r.h5"
    ProfileManager.setup(file_path=str(p))
    for _ in range(3):
        with ProfileManager.region("solve"):
            spin(10_000)
    ProfileManager.finalize(verbose=False)
    res = spanscope.read(p)
    assert res.region_names == ["solve"]
    assert res["solve"].num_calls == 3 and (res["solve"].durations_ns >= 10_000).all()
    assert "solve" in res.summary()
    assert res.metadata["spanscope_version"] == spanscope.__version__


def test_summary_is_the_cli_report(tmp_path):
    """Results.summary() and `spanscope report` are one C function: the same
    text for the same sort and top; a bad sort key is a ValueError that
    names it and the keys."""
    import subprocess
    from conftest import BUILD
    cli = BUILD / "spanscope"
    if not cli.exists():
        pytest.skip(f"{cli} is missing: build first")
    p = tmp_path / "s.h5"
    ProfileManager.setup(file_path=str(p))
    with ProfileManager.region("outer"):
        for _ in range(3):
            with ProfileManager.region("inner"):
                spin(5_000)
    spanscope.counter("depth", 2.0)
    ProfileManager.finalize(verbose=False)
    res = spanscope.read(p)
    for args, kw in (([], {}), (["--sort", "calls", "--top", "1"],
                                {"sort": "calls", "top": 1})):
        r = subprocess.run([str(cli), "report", str(p), *args],
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        assert res.summary(**kw) == r.stdout
    assert "Counters (1;" in res.summary()
    with pytest.raises(ValueError, match=r"unknown sort key 'speed' \(self, "
                       r"total, calls, mean, max, name\)"):
        res.summary(sort="speed")


# -- bad input ---------------------------------------------------------------

def test_unknown_option_names_the_closest():
    with pytest.raises(TypeError, match="file_pth.*did you mean 'file_path'"):
        ProfileManager.setup(file_pth="x.h5")


@pytest.mark.parametrize("kw", [
    {"file_path": 3}, {"aggregation_mode": "yes"}, {"memory_limit": -1}, {"label": 5},
])
def test_wrong_types(kw):
    with pytest.raises(TypeError):
        ProfileManager.setup(**kw)


def test_bad_values_and_unsupported_integrations():
    with pytest.raises(ValueError):
        ProfileManager.setup(overflow="explode")
    # use_likwid=True: LIKWID's markers (tests/python/test_likwid.py)
    ProfileManager.setup(use_likwid=False, output=None)  # False is fine


def test_region_name_must_be_str():
    ProfileManager.setup(output=None)
    with pytest.raises(TypeError):
        ProfileManager.region(3)
    with pytest.raises(TypeError):
        ProfileManager.profile(3)


def test_finalize_without_setup_is_harmless():
    # scope-profiler: finalize() before setup() does nothing (issue 12)
    assert ProfileManager.finalize() is None
    assert ProfileManager.finalize(return_results=True) is None
    assert not ProfileManager.is_configured()


def test_setup_twice_needs_replace():
    ProfileManager.setup(output=None)
    with pytest.raises(RuntimeError, match="replace=True"):
        ProfileManager.setup(output=None)
    ProfileManager.setup(output=None, replace=True)


def test_unwritable_path_keeps_the_data(tmp_path):
    bad = "/nonexistent-dir/sub/out.h5"
    ProfileManager.setup(file_path=bad)
    for _ in range(4):
        with ProfileManager.region("kept"):
            pass
    with pytest.raises(OSError) as ei:
        ProfileManager.finalize(verbose=False)
    assert ei.value.filename == bad
    with ProfileManager.region("kept"):
        pass
    good = tmp_path / "good.h5"
    ProfileManager.finalize(verbose=False, file_path=str(good))
    with h5py.File(good) as f:
        assert f["rank_region_index/event_counts"][0] == 5


def test_read_rejects_bad_files(tmp_path):
    txt = tmp_path / "x.h5"
    txt.write_text("not hdf5")
    with pytest.raises(ValueError):
        spanscope.read(txt)
    with pytest.raises(OSError):
        spanscope.read(tmp_path / "missing.h5")


def test_auto_finalize_writes_at_exit(tmp_path):
    import subprocess
    import sys
    p = tmp_path / "auto.h5"
    code = (
        "from spanscope import ProfileManager\n"
        f"ProfileManager.setup(file_path={str(p)!r}, auto_finalize=True)\n"
        "with ProfileManager.region('z'):\n    pass\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
    assert spanscope.read(p)["z"].num_calls == 1


def test_reads_with_scope_profilers_reader(tmp_path):
    sp = pytest.importorskip("scope_profiler")
    p = tmp_path / "sp.h5"
    ProfileManager.setup(file_path=str(p))
    with ProfileManager.region("outer"):
        with ProfileManager.region("inner"):
            pass
    ProfileManager.finalize(verbose=False)
    res = sp.read_h5(str(p))
    assert set(res.region_names) == {"outer", "inner"}
