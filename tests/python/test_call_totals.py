"""results._calls' snapshot helpers (scope-profiler's call_stack API):
exclusive_totals_ns over the one fold, regions_from_snapshot, split_by_lane,
and NestingError naming the crossing calls."""
import numpy as np
import pytest

from spanscope.results import NestingError, build_call_arrays
from spanscope.results._calls import exclusive_totals_ns, regions_from_snapshot, split_by_lane


def _snap(**named):
    return {name: (np.array([s for s, _ in calls], np.int64),
                   np.array([e for _, e in calls], np.int64)) for name, calls in named.items()}


def test_exclusive_totals_subtract_the_direct_children_once():
    snap = _snap(outer=[(0, 100), (200, 300)], middle=[(10, 60)], inner=[(20, 30)],
                 idle=[])
    assert exclusive_totals_ns(snap) == {"outer": 150, "middle": 40, "inner": 10, "idle": 0}


def test_exclusive_totals_equal_the_per_call_values_summed():
    rng = np.random.default_rng(3)
    starts = np.sort(rng.integers(0, 10_000, 50)) * 10
    # disjoint roots, each with one child inside it
    snap = {"root": (starts * 4, starts * 4 + 30), "kid": (starts * 4 + 5, starts * 4 + 12)}
    arrays = build_call_arrays(regions_from_snapshot(snap, 0), rank=0)
    per_call = {n: 0 for n in arrays.names}
    for i, row in enumerate(arrays.region_index.tolist()):
        per_call[arrays.names[row]] += int(arrays.exclusive_ns[i])
    assert exclusive_totals_ns(snap, rank=0) == per_call


def test_partial_overlap_names_both_calls():
    with pytest.raises(NestingError, match="not properly nested") as info:
        exclusive_totals_ns(_snap(short=[(0, 50)], long=[(10, 200)]))
    assert "'long' call 0 [10, 200] ns starts inside 'short' call 0 [0, 50] ns" in str(info.value)


def test_snapshot_rejects_bad_shapes():
    with pytest.raises(TypeError, match="dict"):
        regions_from_snapshot([("a", ([0], [1]))], 0)
    with pytest.raises(ValueError, match="start_times, end_times"):
        regions_from_snapshot({"a": (np.array([0]),)}, 0)


def test_thread_columns_make_lanes_that_split():
    snap = {"outer": (np.array([0, 10]), np.array([100, 110]), None, None, None,
                      np.array([0, 1])),
            "inner": (np.array([20, 30]), np.array([40, 50]), None, None, None,
                      np.array([0, 1]))}
    arrays = build_call_arrays(regions_from_snapshot(snap, 0), rank=0)
    lanes = split_by_lane(arrays)
    assert [lane for lane, _ in lanes] == [-3, -2]
    for _, calls in lanes:
        assert sorted(calls.parent.tolist()) == [-1, 0]
    # crossing intervals of two threads are fine: they are two stacks
    assert exclusive_totals_ns(snap) == {"outer": 160, "inner": 40}
    one = build_call_arrays(regions_from_snapshot(_snap(a=[(0, 5)]), 0), rank=0)
    assert split_by_lane(one) == [(-1, one)]
    assert split_by_lane(build_call_arrays([], rank=0)) == []
