"""setup(aggregation_mode=True) from Python writes an index with a row per
region (issue 12: the file's /rank_region_index had 0 rows, so regions
read back with no ranks and scope-profiler's read_h5 failed with "min()
arg is an empty sequence").  The file is written in a fresh interpreter:
the bug showed in a process whose first session was an aggregate one
(an events session before it left room in the analyzer that hid it).

Modelled on scope-profiler's tests of aggregation_mode
(tests/test_profile_manager.py): regions as context managers and
decorators, nested, from threads, the file read back with read_h5.
"""

import io
import subprocess
import sys
import textwrap

import pytest

import spanscope

h5py = pytest.importorskip("h5py")

_WRITE = textwrap.dedent('''
    import sys, threading
    from spanscope import ProfileManager as PM
    PM.setup(file_path=sys.argv[1], aggregation_mode=True)

    @PM.profile("solve")
    def solve():
        with PM.region("inner"):
            pass

    with PM.region("outer"):
        for _ in range(7):
            solve()

    def worker():
        for _ in range(5):
            with PM.region("worker"):
                pass

    ts = [threading.Thread(target=worker) for _ in range(3)]
    [t.start() for t in ts]
    [t.join() for t in ts]
    PM.finalize(verbose=False)
''')

EXPECTED = {"outer": 1, "solve": 7, "inner": 7, "worker": 15}


@pytest.fixture(scope="module")
def agg_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("agg") / "agg.h5"
    subprocess.run([sys.executable, "-c", _WRITE, str(path)], check=True)
    return path


def test_index_has_a_row_per_region(agg_file):
    with h5py.File(agg_file, "r") as f:
        assert f.attrs["storage_layout"] == "aggregate"
        idx = f["rank_region_index"]
        names = [n.decode() if isinstance(n, bytes) else n for n in f["region_table/names"][()]]
        rows = {names[i]: int(c) for i, c in zip(idx["region_ids"][()],
                                                  idx["aggregate_counts"][()])}
        assert rows == EXPECTED
        assert set(idx["ranks"][()].tolist()) == {0}


def test_spanscope_reads_regions_ranks_and_counts(agg_file):
    res = spanscope.read_h5(agg_file)
    assert res.num_ranks == 1
    for name, n in EXPECTED.items():
        assert res[name].ranks == [0]
        assert res[name].num_calls == n
        assert res[name][0].num_calls == n
        assert res[name][0].total_duration > 0
    # the nesting's exclusive time: outer's own time is less than its total
    assert res["outer"][0].total_exclusive_duration < res["outer"][0].total_duration


def test_scope_profiler_reads_it(agg_file):
    ref = pytest.importorskip("scope_profiler.h5reader")
    res = ref.read_h5(str(agg_file))
    assert res.num_ranks == 1
    for name, n in EXPECTED.items():
        assert list(res.get_region(name).regions) == [0]
        assert res.get_region(name).num_calls == n
    out = io.StringIO()
    res.print_summary(stream=out)  # failed on the empty index
    assert "worker (15x)" in out.getvalue()
