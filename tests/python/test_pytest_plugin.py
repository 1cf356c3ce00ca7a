"""The pytest plugin (spanscope.integrations.pytest_plugin), end to end.

Every test runs an inner pytest session in a subprocess (pytester), so the
plugin is loaded the way users get it: through the ``pytest11`` entry point
of the installed package.  Under ``-n 2`` the inner session uses
pytest-xdist (the ``pytest`` extra; scripts/install-deps.sh installs it).
"""

import os

import h5py
import numpy as np
import pytest

import spanscope
from spanscope.integrations import pytest_plugin

pytest_plugins = ("pytester",)

SAMPLE = """
import time

import pytest


@pytest.fixture
def value():
    time.sleep(0.002)
    yield 3
    time.sleep(0.001)


def test_fast(value):
    assert value == 3


def test_slow():
    time.sleep(0.05)


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_param(n):
    time.sleep(0.002 * n)
"""

NODEIDS = ["test_sample.py::test_fast", "test_sample.py::test_slow"] + [
    f"test_sample.py::test_param[{n}]" for n in (1, 2, 3, 4)]


def _names(ids, phases=("call",)):
    return [f"pytest::{i}::{p}" for i in ids for p in phases]


def _run(pytester, *args):
    # -p no:cacheprovider: the inner session leaves nothing but what the
    # plugin writes in its folder
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", *args)


def _files(folder):
    """What the plugin may have left in folder (pytester's own files, its
    runpytest-N folders, stdout and stderr, aside): profiles and parts."""
    return sorted(p.name for p in folder.iterdir()
                  if p.suffix == ".h5" or p.name.startswith(".spanscope"))


def test_scope_profilers_own_test_each_selected_call(pytester, tmp_path):
    """scope-profiler's test_plugin_profiles_each_selected_test_call."""
    pytester.makepyfile(test_sample="""
        def test_fast():
            assert 1 + 1 == 2

        def test_slow():
            sum(range(100))
        """)
    output = tmp_path / "pytest-profile.h5"
    result = _run(pytester, "--scope-profile", "--scope-profile-out", str(output))
    result.assert_outcomes(passed=2)
    assert spanscope.read_h5(output).region_names == [
        "pytest::test_sample.py::test_fast::call",
        "pytest::test_sample.py::test_slow::call",
    ]


def test_scope_profilers_own_test_setup_and_teardown(pytester, tmp_path):
    """scope-profiler's test_plugin_can_include_setup_and_teardown."""
    pytester.makepyfile(test_sample="""
        import pytest

        @pytest.fixture
        def value():
            yield 3

        def test_value(value):
            assert value == 3
        """)
    output = tmp_path / "phases.h5"
    result = _run(pytester, "--scope-profile", "--scope-profile-phases=all",
                  "--scope-profile-out", str(output))
    result.assert_outcomes(passed=1)
    assert spanscope.read_h5(output).region_names == [
        "pytest::test_sample.py::test_value::setup",
        "pytest::test_sample.py::test_value::call",
        "pytest::test_sample.py::test_value::teardown",
    ]


def test_inactive_without_its_options(pytester):
    pytester.makepyfile(test_sample="""
        def test_nothing_registered(request):
            pm = request.config.pluginmanager
            assert pm.get_plugin("spanscope-recorder") is None
            # the module is loaded (entry point), its hooks are the cheap ones
            assert pm.get_plugin("spanscope") is not None
        """)
    result = _run(pytester)
    result.assert_outcomes(passed=1)
    assert "spanscope:" not in result.stdout.str()
    assert _files(pytester.path) == []


def test_single_process_file_and_summary(pytester):
    pytester.makepyfile(test_sample=SAMPLE)
    result = _run(pytester, "--scope-profile")
    result.assert_outcomes(passed=6)
    out = result.stdout.str()
    # the default output, in the working folder
    assert _files(pytester.path) == ["pytest-profile.h5"]
    path = pytester.path / "pytest-profile.h5"
    assert f"spanscope: wrote {pytest_plugin.DEFAULT_OUTPUT} (6 regions)" in out
    # the slowest test heads both tables
    lines = result.stdout.lines
    head = lines.index(next(line for line in lines if "spanscope: slowest tests" in line))
    assert "test_sample.py::test_slow" in lines[head + 1]
    assert "slowest regions (6 of 6)" in out

    res = spanscope.read(path)
    assert [row.name for row in res.rows] == _names(NODEIDS)
    assert all(row.num_calls == 1 and row.rank == 0 for row in res.rows)
    assert res["pytest::test_sample.py::test_slow::call"].durations_ns[0] >= 50_000_000
    for n in (1, 2, 3, 4):
        d = res[f"pytest::test_sample.py::test_param[{n}]::call"].durations_ns[0]
        assert 2_000_000 * n <= d < 2_000_000 * n + 40_000_000
    with h5py.File(path, "r") as f:
        assert f["metadata"].attrs["label"] == "pytest"
        assert f.attrs["scope_profiler_schema"] == 3
        assert len(set(f["events/thread_ids"][:].tolist())) == 1


def test_all_phases_and_top(pytester, tmp_path):
    pytester.makepyfile(test_sample=SAMPLE)
    output = tmp_path / "out.h5"
    result = _run(pytester, f"--spanscope={output}", "--scope-profile-phases", "all",
                  "--spanscope-top", "2")
    result.assert_outcomes(passed=6)
    res = spanscope.read_h5(output)
    assert res.region_names == _names(NODEIDS, ("setup", "call", "teardown"))
    # the fixture's sleeps land in test_fast's setup and teardown
    assert res["pytest::test_sample.py::test_fast::setup"][0].durations_ns[0] >= 2_000_000
    assert res["pytest::test_sample.py::test_fast::teardown"][0].durations_ns[0] >= 1_000_000
    out = result.stdout.str()
    assert "slowest tests (2 of 6)" in out
    assert "slowest regions (2 of 18)" in out
    assert "(setup " in out and "teardown " in out


def test_no_summary_with_top_zero(pytester, tmp_path):
    pytester.makepyfile(test_sample=SAMPLE)
    result = _run(pytester, "--scope-profile", "--spanscope-top=0",
                  "--scope-profile-out", str(tmp_path / "p.h5"))
    result.assert_outcomes(passed=6)
    assert "slowest" not in result.stdout.str()
    assert (tmp_path / "p.h5").exists()


def test_xdist_writes_one_merged_file(pytester, tmp_path):
    pytest.importorskip("xdist", reason="pytest-xdist (the 'pytest' extra) is not installed")
    pytester.makepyfile(test_sample=SAMPLE)
    output = tmp_path / "merged.h5"
    result = _run(pytester, "--scope-profile", "-n", "2", "--scope-profile-out", str(output))
    result.assert_outcomes(passed=6)
    out = result.stdout.str()
    assert f"spanscope: wrote {output} (6 regions from 2 workers)" in out
    # the parts are gone: the output's folder holds the output only
    assert sorted(p.name for p in tmp_path.iterdir()) == ["merged.h5"]
    assert _files(pytester.path) == []

    res = spanscope.read_h5(output)
    assert sorted(res.region_names) == sorted(_names(NODEIDS))
    assert res.num_ranks == 2
    for name in res.region_names:
        (rank,) = res[name].ranks  # each test ran on one worker
        assert res[name].num_calls == 1
    # worker gwK is rank K; the slowest test names its worker in the summary
    slow_rank = res["pytest::test_sample.py::test_slow::call"].ranks[0]
    assert f"test_sample.py::test_slow [gw{slow_rank}]" in out

    with h5py.File(output, "r") as f:
        ranks = f["rank_region_index/ranks"][:]
        assert sorted(set(ranks.tolist())) == [0, 1]
        threads = f["events/thread_ids"][:]
        counts = f["rank_region_index/counts"][:] if "counts" in f["rank_region_index"] \
            else None
    # each worker is its own process: one thread id per rank, two different
    model = spanscope.read(output)
    lanes = {}
    for row in model.rows:
        lanes.setdefault(row.rank, set()).update(row.thread_ids.tolist())
    assert sorted(lanes) == [0, 1]
    assert all(len(t) == 1 for t in lanes.values())
    assert lanes[0] != lanes[1]
    assert len(threads) == 6
    if counts is not None:
        assert counts.tolist() == [1] * 6


def test_xdist_all_phases(pytester, tmp_path):
    pytest.importorskip("xdist", reason="pytest-xdist (the 'pytest' extra) is not installed")
    pytester.makepyfile(test_sample=SAMPLE)
    output = tmp_path / "merged.h5"
    result = _run(pytester, f"--spanscope={output}", "-n", "2", "--scope-profile-phases=all")
    result.assert_outcomes(passed=6)
    res = spanscope.read(output)
    assert sorted(r.name for r in res.rows) == sorted(
        _names(NODEIDS, ("setup", "call", "teardown")))
    # a test's three phases ran on one worker
    by_test = {}
    for row in res.rows:
        by_test.setdefault(row.name.rsplit("::", 1)[0], set()).add(row.rank)
    assert all(len(r) == 1 for r in by_test.values())


def test_xdist_crashed_worker_and_no_file(pytester, tmp_path):
    pytest.importorskip("xdist", reason="pytest-xdist (the 'pytest' extra) is not installed")
    pytester.makepyfile(test_sample="""
        import os

        import pytest

        @pytest.mark.parametrize("i", range(4))
        def test_fine(i):
            pass

        def test_crash():
            os._exit(3)
        """)
    output = tmp_path / "crash.h5"
    result = _run(pytester, "--scope-profile", "-n", "2", "--scope-profile-out", str(output))
    out = result.stdout.str()
    assert "crashed while running 'test_sample.py::test_crash'" in out
    # the crashed worker's part is missing, said so; the others are merged
    (line,) = [x for x in result.stdout.lines if "no profile part from worker(s)" in x]
    crashed = line.split("worker(s) ")[1].split()[0]
    res = spanscope.read_h5(output)
    assert "pytest::test_sample.py::test_crash::call" not in res.region_names
    assert res.region_names  # the surviving workers' tests
    assert all(f"gw{r}" != crashed for n in res.region_names for r in res[n].ranks)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["crash.h5"]

    # no file (deactivate_file_output): the parts still give the summary
    pytester.makepyfile(test_sample="def test_a():\n    pass\n\ndef test_b():\n    pass\n")
    cfg = tmp_path / "nofile.toml"
    cfg.write_text("[profiling]\ndeactivate_file_output = true\n")
    result = _run(pytester, "--scope-profile", "-n", "2", "--scope-profile-config", str(cfg))
    result.assert_outcomes(passed=2)
    assert "slowest tests (2 of 2)" in result.stdout.str()
    assert "spanscope: wrote" not in result.stdout.str()
    assert _files(pytester.path) == []


def test_failing_tests_are_recorded(pytester, tmp_path):
    pytester.makepyfile(test_sample="""
        def test_ok():
            pass

        def test_bad():
            raise ValueError("kaboom")
        """)
    output = tmp_path / "f.h5"
    result = _run(pytester, "--scope-profile", "--scope-profile-out", str(output))
    result.assert_outcomes(passed=1, failed=1)
    assert spanscope.read_h5(output).region_names == [
        "pytest::test_sample.py::test_ok::call", "pytest::test_sample.py::test_bad::call"]


def test_tests_may_use_profile_manager_themselves(pytester, tmp_path):
    """As in scope-profiler, the plugin's profile is its own: a test can set
    up, record and finalize the process's ProfileManager."""
    own = tmp_path / "own.h5"
    pytester.makepyfile(test_sample=f"""
        from spanscope import ProfileManager

        def test_records_its_own():
            ProfileManager.setup(file_path={str(own)!r})
            with ProfileManager.region("inner_work"):
                sum(range(1000))
            ProfileManager.finalize(verbose=False)
        """)
    output = tmp_path / "plugin.h5"
    result = _run(pytester, "--scope-profile", "--scope-profile-out", str(output))
    result.assert_outcomes(passed=1)
    assert spanscope.read_h5(output).region_names == [
        "pytest::test_sample.py::test_records_its_own::call"]
    assert "inner_work" in spanscope.read_h5(own).region_names


def test_config_file(pytester, tmp_path):
    pytester.makepyfile(test_sample="def test_a():\n    pass\n")
    cfg = tmp_path / "profiling.toml"
    cfg.write_text("[profiling]\ndeactivate_file_output = true\n")
    result = _run(pytester, "--scope-profile", "--scope-profile-config", str(cfg),
                  "--scope-profile-out", str(tmp_path / "none.h5"))
    result.assert_outcomes(passed=1)
    assert not (tmp_path / "none.h5").exists()
    assert "spanscope: wrote" not in result.stdout.str()
    # the summary is still printed: the tests were timed
    assert "slowest tests (1 of 1)" in result.stdout.str()

    cfg.write_text("[profiling]\ndeactivate_profiling = true\n")
    result = _run(pytester, "--scope-profile", "--scope-profile-config", str(cfg))
    result.assert_outcomes(passed=1)
    assert "spanscope:" not in result.stdout.str()
    assert _files(pytester.path) == []


def test_bad_usage_is_refused(pytester, tmp_path):
    pytester.makepyfile(test_sample="def test_a():\n    pass\n")
    cfg = tmp_path / "bad.toml"
    cfg.write_text("[profiling]\nfile_pth = 'x.h5'\n")
    result = _run(pytester, "--scope-profile", "--scope-profile-config", str(cfg))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--scope-profile-config" in result.stderr.str()
    assert "file_path" in result.stderr.str()  # the closest valid name

    # a bare --spanscope followed by a test path: not taken for the output
    result = _run(pytester, "--spanscope", "test_sample.py")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--spanscope=FILE" in result.stderr.str()
    assert (pytester.path / "test_sample.py").read_text().startswith("def test_a")

    result = _run(pytester, "--spanscope=a.h5", "--scope-profile-out", "b.h5")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "two different output files" in result.stderr.str()

    result = _run(pytester, "--scope-profile", "--scope-profile-out",
                  str(tmp_path / "missing" / "p.h5"))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "does not exist" in result.stderr.str()

    result = _run(pytester, "--spanscope=report.html")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "spanscope html" in result.stderr.str()

    result = _run(pytester, "--scope-profile", "--scope-profile-phases", "some")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert _files(pytester.path) == []


def test_takes_over_scope_profilers_plugin(pytester, tmp_path):
    """scope-profiler installs a plugin with the same options: with both
    installed, spanscope's records (and xdist works); ``-p no:spanscope``
    hands the options back to scope-profiler's."""
    sp = pytest.importorskip("scope_profiler", reason="scope-profiler is not installed")
    import importlib.metadata as md
    if not any(ep.group == "pytest11" for ep in md.distribution("scope-profiler").entry_points):
        pytest.skip("this scope-profiler has no pytest plugin")
    pytester.makepyfile(test_sample="def test_a():\n    pass\n")
    output = tmp_path / "ours.h5"
    result = _run(pytester, "--scope-profile", "--scope-profile-out", str(output))
    result.assert_outcomes(passed=1)
    assert "spanscope: wrote" in result.stdout.str()
    assert "scope-profiler: wrote" not in result.stdout.str()
    # scope-profiler's reader reads our file
    assert sp.read_h5(output).region_names == ["pytest::test_sample.py::test_a::call"]

    theirs = tmp_path / "theirs.h5"
    result = _run(pytester, "-p", "no:spanscope", "--scope-profile",
                  "--scope-profile-out", str(theirs))
    result.assert_outcomes(passed=1)
    assert "scope-profiler: wrote" in result.stdout.str()
    assert spanscope.read_h5(theirs).region_names == ["pytest::test_sample.py::test_a::call"]


def test_summary_orders_tests_by_time():
    """_summary over a result set built by hand (no pytest session)."""
    from spanscope import MPIRegion, ProfilingResults, Region

    def reg(name, durations, rank=0):
        starts = np.arange(len(durations), dtype=np.int64) * 10**9
        return name, MPIRegion(name, {rank: Region(starts, starts + np.array(durations))})

    res = ProfilingResults(dict([
        reg("pytest::t.py::a::setup", [5]), reg("pytest::t.py::a::call", [10]),
        reg("pytest::t.py::b::call", [30, 40], rank=1),
    ]))
    (tests_title, tests), (regions_title, regions) = pytest_plugin._summary(res, 10, True)
    assert tests_title == "slowest tests (2 of 2)"
    assert tests[0].split()[1:] == ["t.py::b", "[gw1]"]
    assert "t.py::a [gw0]  (setup" in tests[1]
    assert regions_title == "slowest regions (3 of 3)"
    assert regions[1].split()[1:] == ["2", "0.0000", "0.0000", "pytest::t.py::b::call"]
    assert pytest_plugin._summary(res, 1, False)[0][0] == "slowest tests (1 of 2)"
