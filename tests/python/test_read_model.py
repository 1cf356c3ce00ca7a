"""spanscope.read gives the C reader's model (sps_file_open through
_ext.read_file), the one every other view of a file sees: per call the
fold's self time and parent, the rows' statistics, counters, aggregate
rows, several ranks, and scope-profiler's own files; errors as OSError and
ValueError.  h5py is used here only to check what the file stores.
"""
import ctypes
import gc
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from conftest import BUILD, build_c_lib

import spanscope
from spanscope import ProfileManager, _ext

h5py = pytest.importorskip("h5py")

REPO = Path(__file__).resolve().parents[2]
# the shared reference's copy is on the project's machines only (a fresh
# clone, scripts/fresh-check.sh, has tests/data's)
_SHARED_FIXTURE = Path("/work/shared/reference/samples/scope-profiler-schema3-fixture.h5")
FIXTURES = [REPO / "tests" / "data" / "scope-profiler-schema3-fixture.h5",
            pytest.param(_SHARED_FIXTURE, marks=pytest.mark.skipif(
                not _SHARED_FIXTURE.exists(), reason="no /work/shared on this machine"))]

C_SOURCE = r"""
#include <spanscope.h>
#include <pthread.h>
#include <stdint.h>
#include <time.h>

static void spin(long ns) {
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    do clock_gettime(CLOCK_MONOTONIC, &b);
    while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < ns);
}

static sps_region_t R(const char *n) { return sps_region(n); }

int ms_setup(int rank, int size) {
    sps_config_t cfg = SPS_CONFIG_INIT;
    cfg.rank = rank;
    cfg.size = size;
    cfg.local = 1;
    return sps_setup(&cfg);
}
int ms_finalize(const char *path) { return sps_finalize_to(path); }
int ms_shutdown(void) { return sps_shutdown(); }

static void *worker(void *arg) {
    (void)arg;
    for (int i = 0; i < 5; i++) {
        sps_begin(R("ms.worker"));
        spin(3000);
        sps_begin(R("ms.leaf"));   /* the same name on another lane */
        spin(1000);
        sps_end(R("ms.leaf"));
        sps_end(R("ms.worker"));
    }
    return NULL;
}

/* C regions nested in whatever the caller has open: kernels holding two
 * leaves and a zero-length call, a repaired overlap (B closed with A, its
 * late end ignored), and a thread of its own meanwhile. */
void ms_record(int n) {
    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);
    for (int i = 0; i < n; i++) {
        sps_begin(R("ms.kernel"));
        spin(2000);
        for (int k = 0; k < 2; k++) {
            sps_begin(R("ms.leaf"));
            spin(1500);
            sps_end(R("ms.leaf"));
        }
        sps_begin(R("ms.zero"));
        sps_end(R("ms.zero"));
        sps_end(R("ms.kernel"));
    }
    sps_begin(R("ms.A"));
    spin(1000);
    sps_begin(R("ms.B"));
    spin(1000);
    sps_end(R("ms.A"));
    sps_end(R("ms.B"));
    pthread_join(t, NULL);
}

/* The live session's spans since the last finalize (sps_spans): region,
 * thread, start, duration, self and parent (an index into these arrays,
 * -1).  Returns how many there are (may exceed cap), -1 on error. */
long ms_spans(uint32_t *region, uint32_t *thread, int64_t *start, int64_t *dur,
              int64_t *self, int64_t *parent, long cap) {
    sps_span_t *s;
    size_t n;
    if (sps_spans(0, INT64_MAX, &s, &n)) return -1;
    for (size_t i = 0; i < n && (long)i < cap; i++) {
        region[i] = s[i].region;
        thread[i] = s[i].thread;
        start[i] = s[i].start_ns;
        dur[i] = s[i].end_ns - s[i].start_ns;
        self[i] = s[i].self_ns;
        parent[i] = s[i].parent;
    }
    sps_free(s);
    return (long)n;
}
"""


@pytest.fixture(scope="module")
def lib(tmp_path_factory):
    c = build_c_lib(tmp_path_factory, C_SOURCE)
    c.ms_setup.argtypes = [ctypes.c_int, ctypes.c_int]
    c.ms_finalize.argtypes = [ctypes.c_char_p]
    c.ms_record.argtypes = [ctypes.c_int]
    i64, u32 = ctypes.POINTER(ctypes.c_int64), ctypes.POINTER(ctypes.c_uint32)
    c.ms_spans.argtypes = [u32, u32, i64, i64, i64, i64, ctypes.c_long]
    c.ms_spans.restype = ctypes.c_long
    return c


def spin(ns):
    end = time.perf_counter_ns() + ns
    while time.perf_counter_ns() < end:
        pass


def live_calls(lib):
    """The live session's calls: (name, start_ns, duration) -> (self_ns,
    the parent's (name, start_ns, duration) or None)."""
    n = lib.ms_spans(None, None, None, None, None, None, 0)
    assert n >= 0
    u32, i64 = ctypes.c_uint32 * n, ctypes.c_int64 * n
    region, thread, start, dur, self_, parent = u32(), u32(), i64(), i64(), i64(), i64()
    assert lib.ms_spans(region, thread, start, dur, self_, parent, n) == n
    keys = [(_ext.region_name(region[i]), start[i], dur[i]) for i in range(n)]
    assert len(set(keys)) == n  # the key names one call
    return {keys[i]: (self_[i], keys[parent[i]] if parent[i] >= 0 else None)
            for i in range(n)}


def file_calls(res, rank=None):
    """The same map from spanscope.read's model (rank: that rank only)."""
    out = {}
    for reg in res.rows:
        if rank is not None and reg.rank != rank:
            continue
        for i in range(reg.num_calls):
            key = (reg.name, int(reg.start_ns[i]), int(reg.durations_ns[i]))
            up = res.parent_of(reg, i)
            pkey = None
            if up is not None:
                p, j = up
                assert p.rank == reg.rank  # parents never cross ranks
                pkey = (p.name, int(p.start_ns[j]), int(p.durations_ns[j]))
            out[key] = (int(reg.self_ns[i]), pkey)
    return out


def index_exclusives(path):
    """{(name, rank): exclusive_totals} as the writer stored them."""
    with h5py.File(path, "r") as f:
        names = [n.decode() for n in f["region_table/names"][()]]
        ix = f["rank_region_index"]
        return {(names[int(r)], int(k)): int(e) for r, k, e in
                zip(ix["region_ids"][()], ix["ranks"][()], ix["exclusive_totals"][()])}


# --------------------------------------------------------------------------
# Self times and parents: the live session's, call by call
# --------------------------------------------------------------------------

def test_self_and_parents_are_the_live_sessions(lib, tmp_path):
    p = tmp_path / "mixed.h5"
    ProfileManager.setup(file_path=str(p))
    with ProfileManager.region("py.outer"):
        lib.ms_record(4)
        with ProfileManager.region("py.mid"):
            spin(20_000)
            lib.ms_record(2)
    live = live_calls(lib)
    names = {k[0] for k in live}
    stats = {n: ProfileManager.region(n).stats.self_ns for n in names}
    ProfileManager.finalize(verbose=False)
    res = spanscope.read(p)
    assert res.nested_by_ids and res.layout == "columnar"
    assert file_calls(res) == live
    # the recording is what the test is about: nesting across C and Python,
    # another thread, a repaired overlap
    assert live[next(k for k in live if k[0] == "ms.B")][1][0] == "ms.A"
    kernels = [v for k, v in live.items() if k[0] == "ms.kernel"]
    assert {par[0] for _, par in kernels} == {"py.outer", "py.mid"}
    assert any(par is None for k, (_, par) in live.items() if k[0] == "ms.worker")
    # per region: the sum of the fold's self times, the live statistic and,
    # for this file of spanscope's, the writer's index
    excl = index_exclusives(p)
    for name in names:
        reg = res[name]
        assert reg.exclusive_total_ns == int(reg.self_ns.sum()) == stats[name]
        assert excl[(name, 0)] == reg.exclusive_total_ns
    assert (res["py.mid"].self_ns < res["py.mid"].durations_ns).all()


def test_a_checkpoints_open_call_keeps_its_live_self_time(tmp_path):
    """A call open at a checkpoint is written whole by the next file; its
    child went into the earlier one.  The later file's /carried says how
    long that child took, so read, report and the writer's index all give
    the live session's self time (docs/design.md, "The one fold")."""
    ck, fin = tmp_path / "ck.h5", tmp_path / "fin.h5"
    ProfileManager.setup(file_path=str(ck))
    outer = ProfileManager.region("outer")
    outer.__enter__()
    with ProfileManager.region("inner"):
        spin(200_000)
    ProfileManager.finalize(verbose=False)
    spin(100_000)
    outer.__exit__(None, None, None)
    live_self = outer.stats.self_ns
    ProfileManager.finalize(verbose=False, file_path=str(fin))
    o, i = spanscope.read(fin)["outer"], spanscope.read(ck)["inner"]
    assert o.exclusive_total_ns == live_self
    assert o.exclusive_total_ns == int(o.durations_ns[0]) - int(i.durations_ns[0])
    assert index_exclusives(fin)[("outer", 0)] == live_self
    csv = subprocess.run([str(BUILD / "spanscope"), "report", str(fin), "--flat",
                          "--format", "csv"], capture_output=True, text=True)
    assert csv.returncode == 0, csv.stderr
    row = next(r for r in csv.stdout.splitlines() if r.startswith("outer,"))
    assert str(live_self) in row.split(",")


# --------------------------------------------------------------------------
# Several ranks: a merged file
# --------------------------------------------------------------------------

def test_two_rank_merged_file(lib, tmp_path):
    files, live = {}, {}
    for rank in (0, 1):
        assert lib.ms_setup(rank, 2) == 0
        lib.ms_record(3 + rank)
        live[rank] = live_calls(lib)
        files[rank] = tmp_path / f"r{rank}.h5"
        assert lib.ms_finalize(str(files[rank]).encode()) == 0
        assert lib.ms_shutdown() == 0
    merged = tmp_path / "merged.h5"
    p = subprocess.run([str(BUILD / "spanscope"), "merge", "-o", str(merged),
                        str(files[0]), str(files[1])], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    res = spanscope.read(merged)
    assert {r.rank for r in res.rows} == {0, 1}
    assert set(res.regions["ms.kernel"]) == {0, 1}
    for rank in (0, 1):
        # one process, one host: merge shifts no clock
        assert file_calls(res, rank) == live[rank] == file_calls(spanscope.read(files[rank]))
    assert res.regions["ms.kernel"][1].num_calls == 4
    assert res["ms.kernel"].num_calls == 3  # rank 0's


# --------------------------------------------------------------------------
# Counters and aggregate files
# --------------------------------------------------------------------------

def test_counters_are_the_files(tmp_path):
    p = tmp_path / "c.h5"
    ProfileManager.setup(file_path=str(p))
    for i in range(5):
        with ProfileManager.region("step"):
            spanscope.counter("mem", 1.5 * i)
            spanscope.counter("loss", 1.0 / (i + 1))
    ProfileManager.finalize(verbose=False)
    res = spanscope.read(p)
    with h5py.File(p, "r") as f:
        g = f["counters"]
        names = [n.decode() for n in g["names"][()]]
        series = g["series"][()]
        for i, name in enumerate(names):
            got = res.counters[name]
            for k in ("times_ns", "values", "ranks"):
                assert np.array_equal(got[k], g[k][()][series == i]), (name, k)
    assert set(res.counters) == {"mem", "loss"}
    assert res.counters["mem"]["values"].dtype == np.float64
    assert list(res.counters["mem"]["values"]) == [0.0, 1.5, 3.0, 4.5, 6.0]
    assert (np.diff(res.counters["loss"]["times_ns"]) >= 0).all()
    assert "mem" not in res.regions


def test_aggregate_file(tmp_path):
    p = tmp_path / "agg.h5"
    ProfileManager.setup(file_path=str(p), aggregation_mode=True)
    with ProfileManager.region("outer"):
        for _ in range(3):
            with ProfileManager.region("inner"):
                spin(20_000)
    want = {n: ProfileManager.region(n).stats for n in ("outer", "inner")}
    ProfileManager.finalize(verbose=False)
    res = spanscope.read(p)
    assert res.layout == "aggregate" and res.events.start_ns.size == 0
    with h5py.File(p, "r") as f:
        names = [n.decode() for n in f["region_table/names"][()]]
        ix = f["rank_region_index"]
        stored = {names[int(r)]: {k: int(ix[f"aggregate_{k}"][i]) for k in
                                  ("counts", "totals", "minimums", "maximums", "exclusives")}
                  for i, r in enumerate(ix["region_ids"][()])}
    assert res.aggregate == stored
    for name, st in want.items():
        reg = res[name]
        # ticks become ns through the clock's anchors, and finalize takes one
        # more than the query had: a conversion may move by a nanosecond
        assert reg.num_calls == st.num_calls and abs(reg.total_ns - st.total_ns) <= 2
        assert reg.exclusive_total_ns == stored[name]["exclusives"]
        assert abs(reg.exclusive_total_ns - st.self_ns) <= 2
        assert abs(reg.aggregate["minimums"] - st.min_ns) <= 2
        assert reg.durations_ns.size == 0 and reg.self_ns.size == 0
    assert res["inner"].num_calls == 3
    assert res["outer"].exclusive_total_ns < res["outer"].total_ns


# --------------------------------------------------------------------------
# scope-profiler's own files
# --------------------------------------------------------------------------

@pytest.mark.parametrize("path", FIXTURES, ids=["tests-data", "shared-reference"])
def test_scope_profilers_fixture(path):
    """No call or parent ids, exclusive_totals -1: the fold derives both."""
    if not path.exists():
        pytest.skip(f"{path} is missing")
    res = spanscope.read(path)
    assert not res.nested_by_ids and res.region_names == ["solve"]
    solve = res["solve"]
    assert list(solve.start_ns) == [10, 20, 40]
    assert list(solve.end_ns) == [15, 33, 55]
    assert list(solve.self_ns) == [5, 13, 15]  # disjoint: nothing nests
    assert list(solve.parent_index) == [-1, -1, -1]
    assert solve.parent_ids is None and solve.call_ids is None
    assert solve.exclusive_total_ns == 33
    assert index_exclusives(path)[("solve", 0)] == -1
    assert res.metadata["mpi_size"] == 1


SP_WRITER = """
import time
from scope_profiler import ProfileManager
ProfileManager.setup(file_path={path!r})
for _ in range(2):
    with ProfileManager.region("outer"):
        time.sleep(0.0005)
        for _ in range(3):
            with ProfileManager.region("inner"):
                time.sleep(0.001)
ProfileManager.finalize(verbose=False)
"""


def test_a_file_scope_profiler_wrote(tmp_path):
    """scope-profiler's own writer: its parent ids and exclusive totals are
    the fold's; without the ids the interval rule gives the same model."""
    pytest.importorskip("scope_profiler")
    p = tmp_path / "sp.h5"
    subprocess.run([sys.executable, "-c", SP_WRITER.format(path=str(p))],
                   check=True, cwd=tmp_path, timeout=120)
    res = spanscope.read(p)
    assert res.nested_by_ids
    outer, inner = res["outer"], res["inner"]
    assert outer.num_calls == 2 and inner.num_calls == 6
    kids = [inner.durations_ns[3 * k:3 * k + 3].sum() for k in range(2)]
    assert list(outer.self_ns) == [int(outer.durations_ns[k] - kids[k]) for k in range(2)]
    assert (inner.self_ns == inner.durations_ns).all()
    assert [res.parent_of(inner, i)[1] for i in range(6)] == [0, 0, 0, 1, 1, 1]
    excl = index_exclusives(p)
    assert outer.exclusive_total_ns == excl[("outer", 0)]
    assert inner.exclusive_total_ns == excl[("inner", 0)]
    bare = tmp_path / "bare.h5"
    shutil.copy(p, bare)
    with h5py.File(bare, "r+") as f:
        del f["events/call_ids"], f["events/parent_ids"]
        del f["rank_region_index/exclusive_totals"]
    again = spanscope.read(bare)
    assert not again.nested_by_ids and again["inner"].parent_ids is None
    for name in ("outer", "inner"):
        assert np.array_equal(again[name].self_ns, res[name].self_ns)
        assert np.array_equal(again[name].parent_index, res[name].parent_index)
        assert again[name].exclusive_total_ns == res[name].exclusive_total_ns


# --------------------------------------------------------------------------
# The arrays, errors, and no second reader
# --------------------------------------------------------------------------

def test_arrays_are_read_only_views_that_outlive_the_results(tmp_path):
    p = tmp_path / "v.h5"
    ProfileManager.setup(file_path=str(p))
    for _ in range(4):
        with ProfileManager.region("v"):
            pass
    ProfileManager.finalize(verbose=False)
    res = spanscope.read(p)
    d = res["v"].durations_ns
    want = d.copy()
    assert not d.flags.writeable
    with pytest.raises(ValueError):
        d[0] = 1
    assert np.shares_memory(d, res.events.durations_ns)  # a slice, no copy
    del res
    gc.collect()
    assert np.array_equal(d, want)  # the reader's memory lives with d


def test_truncated_and_damaged_files_are_value_errors(tmp_path):
    p = tmp_path / "t.h5"
    ProfileManager.setup(file_path=str(p))
    for _ in range(100):
        with ProfileManager.region("t"):
            pass
    ProfileManager.finalize(verbose=False)
    cut = tmp_path / "cut.h5"
    data = p.read_bytes()
    cut.write_bytes(data[:len(data) // 2])
    with pytest.raises(ValueError, match="truncated"):
        spanscope.read(cut)
    bad = tmp_path / "bad.h5"
    shutil.copy(p, bad)
    with h5py.File(bad, "r+") as f:
        f["rank_region_index/event_counts"][0] = 10**6
    with pytest.raises(ValueError, match="slices events"):
        spanscope.read(bad)
    with pytest.raises(OSError):
        spanscope.read(tmp_path / "missing.h5")
    with pytest.raises(OSError):
        spanscope.read(tmp_path)  # a directory


def test_read_needs_no_h5py(tmp_path):
    """results.py reads through the extension alone: with h5py unimportable
    a file still reads."""
    p = tmp_path / "n.h5"
    ProfileManager.setup(file_path=str(p))
    with ProfileManager.region("n"):
        pass
    ProfileManager.finalize(verbose=False)
    code = ("import sys; sys.modules['h5py'] = None\n"
            "import spanscope\n"
            f"r = spanscope.read({str(p)!r})\n"
            "assert r['n'].num_calls == 1 and r['n'].self_ns.size == 1\n"
            "assert 'h5py' not in sys.modules or sys.modules['h5py'] is None\n")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
