"""Queries stay cheap (issue 11, part 3): ``get_durations_numpy()`` and
``num_calls`` cost the calls recorded since the previous query, not the
session so far -- checked with the core's count of records the per-call
queries decoded (``_ext.query_info()``, sps_query_info), never with a
clock -- and return what the file of the next finalize holds."""

import threading

import h5py
import numpy as np

from spanscope import ProfileManager, _ext


def _read():
    return _ext.query_info()["records_read"]


def _file_rows(path):
    """name -> (starts, durations) of each row of a spanscope file (starts:
    the row's cumulative start_deltas, CLOCK_MONOTONIC ns)."""
    out = {}
    with h5py.File(path) as f:
        names = [n.decode() if isinstance(n, bytes) else n for n in f["region_table/names"][()]]
        idx = f["rank_region_index"]
        deltas = f["events/start_deltas"][()]
        durs = f["events/durations"][()]
        for rid, off, cnt in zip(idx["region_ids"][()], idx["event_offsets"][()],
                                 idx["event_counts"][()]):
            out[names[rid]] = (deltas[off:off + cnt].cumsum(), durs[off:off + cnt])
    return out


def test_durations_cost_only_the_new_calls(tmp_path):
    ProfileManager.setup(file_path=tmp_path / "q.h5")
    r = ProfileManager.region("pq.loop")
    other = ProfileManager.region("pq.other")
    for _ in range(5000):
        with r:
            pass
    before = _read()
    assert len(r.get_durations_numpy()) == 5000
    assert _read() - before == 10000  # the period, read once
    for k in (1, 10, 100, 1000):
        for _ in range(k):
            with r:
                with other:
                    pass
        before = _read()
        d = ProfileManager.get_region("pq.loop").get_durations_numpy()
        # both regions' new records, each once (sizing and copying read it once)
        assert _read() - before == 4 * k
        assert ProfileManager.get_region("pq.loop").num_calls == len(d)
        before = _read()
        assert np.array_equal(r.get_durations_numpy(), d)
        assert _read() == before  # nothing new: nothing read
    info = _ext.query_info()
    assert info["regions"] == 1 and info["bytes"] >= 16 * 6111
    last = {n: (ProfileManager.get_region(n).get_start_times_numpy() + _ext.session_start_ns(),
                ProfileManager.get_region(n).get_durations_numpy())
            for n in ("pq.loop", "pq.other")}
    ProfileManager.finalize(verbose=False)
    rows = _file_rows(tmp_path / "q.h5")
    for name, (s, d) in last.items():
        assert np.array_equal(rows[name][0], s), name
        assert np.array_equal(rows[name][1], d), name
    # a new period: nothing kept from the old one
    assert len(r.get_durations_numpy()) == 0
    assert _ext.query_info()["regions"] == 1
    ProfileManager._reset()
    assert _ext.query_info()["bytes"] == 0


def test_threads_nesting_and_open_calls(tmp_path):
    ProfileManager.setup(file_path=tmp_path / "t.h5")
    outer = ProfileManager.region("pq.outer")
    inner = ProfileManager.region("pq.inner")

    def work(n):
        for _ in range(n):
            with outer:
                for _ in range(3):
                    with inner:
                        pass

    with outer:  # open: not in the answers, and the main thread's lane
        ths = [threading.Thread(target=work, args=(2000,)) for _ in range(3)]
        for t in ths:
            t.start()
        seen = 0
        while any(t.is_alive() for t in ths):
            n = len(inner.get_durations_numpy())
            assert n >= seen  # never loses a call
            seen = n
        for t in ths:
            t.join()
        assert len(inner.get_durations_numpy()) == 18000
        assert len(outer.get_durations_numpy()) == 6000
    assert len(outer.get_durations_numpy()) == 6001
    last = {r.name: (r.get_start_times_numpy() + _ext.session_start_ns(),
                     r.get_durations_numpy()) for r in (outer, inner)}
    ProfileManager.finalize(verbose=False)
    rows = _file_rows(tmp_path / "t.h5")
    for name, (s, d) in last.items():
        assert np.array_equal(rows[name][0], s), name
        assert np.array_equal(rows[name][1], d), name


def test_num_calls_counts_across_checkpoints():
    ProfileManager.setup(output=None)
    r = ProfileManager.region("pq.count")
    for i in range(1, 4):
        for _ in range(100):
            with r:
                pass
        assert r.num_calls == 100 * i
        assert len(r.get_durations_numpy()) == 100  # since the last finalize
        ProfileManager.finalize(verbose=False)
    assert len(r.get_durations_numpy()) == 0
