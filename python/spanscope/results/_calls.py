"""Call stacks: the one fold's parents over a rank's calls, as arrays
(CallArrays) and as scope-profiler's call-stack dicts."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from spanscope import _ext
from spanscope.results._errors import NS_PER_SECOND, NestingError
from spanscope.results._regions import MPIRegion, Region, _lane_ids

__all__ = ["CallArrays", "build_call_arrays", "build_call_stack", "call_stack_children",
           "call_stack_roots", "exclusive_totals_ns", "regions_from_snapshot", "split_by_lane"]


# --------------------------------------------------------------------------

class CallArrays(NamedTuple):
    """One rank's nesting in start order (call_id order): parent indexes the
    same arrays (-1 for a root); region_index/call_index say where a call
    came from (names[region_index[i]], call call_index[i] of it)."""

    names: list
    source_files: list
    source_lines: list
    region_index: np.ndarray
    call_index: np.ndarray
    start_ns: np.ndarray
    end_ns: np.ndarray
    depth: np.ndarray
    parent: np.ndarray
    exclusive_ns: np.ndarray
    lane: np.ndarray = np.empty(0, dtype=np.int64)

    def __len__(self) -> int:
        return int(self.start_ns.size)


def _depths(parent: np.ndarray) -> np.ndarray:
    """Depth of each call from its parent (parents first, by start order)."""
    depth = np.zeros(parent.size, dtype=np.int64)
    for i in np.flatnonzero(parent >= 0):  # parents precede children
        depth[i] = depth[parent[i]] + 1
    return depth


def _call_label(names, region_index, call_index, start, end, i) -> str:
    return (f"{names[int(region_index[i])]!r} call {int(call_index[i])} "
            f"[{int(start[i])}, {int(end[i])}] ns")


def _crossing_pair(start, end, lane):
    """For NestingError's message only (the fold already counted the
    overlaps): (j, c), calls of one lane in start order where c starts
    inside j, the latest-ending call open before it, and ends after it;
    None when that simple witness is not found."""
    groups = [np.arange(start.size)] if lane.size == 0 else [
        np.flatnonzero(lane == v) for v in np.unique(lane)]
    for rows in groups:
        if rows.size < 2:
            continue
        e = end[rows]
        run = np.maximum.accumulate(e)
        top = run[:-1]                             # latest end before each call
        who = np.maximum.accumulate(np.where(e == run, np.arange(rows.size), 0))[:-1]
        s = start[rows][1:]
        hit = np.flatnonzero((s < top) & (e[1:] > top))
        if hit.size:
            c = int(hit[0]) + 1
            return int(rows[who[c - 1]]), int(rows[c])
    return None


def build_call_arrays(regions, rank: int) -> CallArrays:
    """One rank's calls of ``regions`` (MPIRegions) with the one fold's
    parents and exclusive times (``sps_fold_spans``, in C), per lane
    (thread/task) when the calls carry thread ids.  NestingError when a
    call ends before it starts or two calls of a lane overlap partially."""
    return _call_arrays(regions, rank, strict=True)


def _call_arrays(regions, rank: int, strict: bool) -> CallArrays:
    """build_call_arrays; without strict, overlapping calls are folded by
    the fold's clipped rule instead of raising (for exclusive times)."""
    names, files, lines, starts, ends, reg_of, call_of, lanes = [], [], [], [], [], [], [], []
    any_lane = False
    for region in regions:
        if rank not in region.regions:
            continue
        d = region.regions[rank]
        names.append(region.name)
        files.append(d.source_file)
        lines.append(d.source_lineno)
        s, e = np.asarray(d.start_times_ns, np.int64), np.asarray(d.end_times_ns, np.int64)
        starts.append(s)
        ends.append(e)
        reg_of.append(np.full(s.size, len(names) - 1, np.int64))
        call_of.append(np.arange(s.size, dtype=np.int64))
        any_lane = any_lane or d.thread_ids is not None
        lanes.append((s.size, d.thread_ids, d.task_ids))
    if not starts:
        z = np.empty(0, np.int64)
        return CallArrays(names, files, lines, z, z.copy(), z.copy(), z.copy(), z.copy(),
                          z.copy(), z.copy(), z.copy())
    start, end = np.concatenate(starts), np.concatenate(ends)
    if strict and np.any(end < start):
        raise NestingError("a recorded call ends before it starts")
    order = np.lexsort((-end, start))  # parents first
    start, end = start[order], end[order]
    region_index, call_index = np.concatenate(reg_of)[order], np.concatenate(call_of)[order]
    lane = (np.concatenate([np.full(n, -1, np.int64) if t is None else _lane_ids(t, k)
                            for n, t, k in lanes])[order] if any_lane
            else np.empty(0, np.int64))
    parent32 = np.empty(start.size, np.int32)
    self_ns = np.empty(start.size, np.int64)
    overlaps = _ext.fold_spans(start, end, None, lane if any_lane else None, parent32, self_ns)
    if overlaps and strict:
        pair = _crossing_pair(start, end, lane)
        named = "" if pair is None else (
            f": {_call_label(names, region_index, call_index, start, end, pair[1])} starts "
            f"inside {_call_label(names, region_index, call_index, start, end, pair[0])} "
            "but ends after it")
        raise NestingError(
            f"recorded calls are not properly nested{named} ({overlaps} call(s) of rank "
            f"{rank} overlap another without nesting: no call stack; a mismatched "
            "begin/end or __exit__, or threads profiled without track_threads)")
    parent = parent32.astype(np.int64)
    return CallArrays(names, files, lines, region_index, call_index, start, end,
                      _depths(parent), parent, self_ns, lane)


def split_by_lane(calls: CallArrays) -> list[tuple[int, CallArrays]]:
    """One CallArrays per lane (thread or task), in lane order, with
    ``parent`` re-indexed within the lane: what a consumer that walks calls
    in time order (one tree per lane) needs.  A reconstruction without a
    lane column, or with a single lane, comes back whole as one entry
    (keyed -1 without a column); no calls give []."""
    if len(calls) == 0:
        return []
    if calls.lane.size == 0:
        return [(-1, calls)]
    lanes = np.unique(calls.lane)
    if lanes.size == 1:
        return [(int(lanes[0]), calls)]
    out = []
    for value in lanes.tolist():
        rows = np.flatnonzero(calls.lane == value)
        local = np.full(len(calls), -1, dtype=np.int64)
        local[rows] = np.arange(rows.size, dtype=np.int64)
        parent = calls.parent[rows]  # a call's parent is always on its lane
        out.append((int(value), CallArrays(
            calls.names, calls.source_files, calls.source_lines, calls.region_index[rows],
            calls.call_index[rows], calls.start_ns[rows], calls.end_ns[rows],
            calls.depth[rows], np.where(parent < 0, -1, local[np.maximum(parent, 0)]),
            calls.exclusive_ns[rows], calls.lane[rows])))
    return out


def regions_from_snapshot(regions: dict, rank: int) -> list:
    """``{name: (starts, ends[, gpu, call_ids, parent_ids, thread_ids,
    task_ids])}`` (int64 ns arrays, scope-profiler's finalize-time snapshot
    shape) as MPIRegions holding one rank each, for build_call_arrays and
    exclusive_totals_ns."""
    if not isinstance(regions, dict):
        raise TypeError(f"regions must be a dict of name -> (starts, ends, ...), "
                        f"not {type(regions).__name__}")

    def column(arrays, position):
        return arrays[position] if len(arrays) > position else None

    out = []
    for name, arrays in regions.items():
        if len(arrays) < 2:
            raise ValueError(f"region {name!r}: expected (start_times, end_times, ...)")
        out.append(MPIRegion(name, {rank: Region(arrays[0], arrays[1],
                                                 thread_ids=column(arrays, 5),
                                                 task_ids=column(arrays, 6))}))
    return out


def exclusive_totals_ns(regions: dict, rank: int = 0) -> dict:
    """Total exclusive nanoseconds per region of one rank's
    ``{name: (starts, ends, ...)}`` (regions_from_snapshot's shape): the
    per-call exclusive times of build_call_arrays (the one fold, in C)
    summed per region, so they equal the per-call values exactly.  Every
    name of ``regions`` is a key (0 without calls).  NestingError as
    build_call_arrays; ``rank`` only labels the temporary regions."""
    arrays = build_call_arrays(regions_from_snapshot(regions, rank), rank)
    totals = np.zeros(len(arrays.names), dtype=np.int64)
    np.add.at(totals, arrays.region_index, arrays.exclusive_ns)
    by_name = dict(zip(arrays.names, totals.tolist()))
    return {name: by_name.get(name, 0) for name in regions}


def build_call_stack(regions, rank: int, origin: float = 0.0) -> list[dict]:
    """One dict per call of ``rank`` in start order (parents first): call_id,
    name, call_index, start, end, duration, inclusive_duration,
    exclusive_duration (seconds, minus origin for times), depth, parent
    (call_id or None), call_path ("a > b"), source_file, source_lineno,
    lane, color."""
    regions = list(regions)
    a = build_call_arrays(regions, rank)
    colors = {r.name: getattr(r, "color", None) for r in regions}
    starts = a.start_ns / NS_PER_SECOND - origin
    ends = a.end_ns / NS_PER_SECOND - origin
    dur = (a.end_ns - a.start_ns) / NS_PER_SECOND
    excl = a.exclusive_ns / NS_PER_SECOND
    calls: list[dict] = []
    for cid, row in enumerate(a.region_index.tolist()):
        name, p = a.names[row], int(a.parent[cid])
        calls.append({
            "call_id": cid, "name": name, "call_index": int(a.call_index[cid]),
            "start": float(starts[cid]), "end": float(ends[cid]),
            "duration": float(dur[cid]), "inclusive_duration": float(dur[cid]),
            "exclusive_duration": float(excl[cid]), "depth": int(a.depth[cid]),
            "parent": None if p < 0 else p,
            "call_path": name if p < 0 else f"{calls[p]['call_path']} > {name}",
            "source_file": a.source_files[row], "source_lineno": a.source_lines[row],
            "lane": int(a.lane[cid]) if a.lane.size else -1, "color": colors[name]})
    return calls


def call_stack_roots(calls: list[dict]) -> list[int]:
    """Indices of the top-level calls of a build_call_stack result."""
    return [i for i, c in enumerate(calls) if c["parent"] is None]


def call_stack_children(calls: list[dict]) -> list[list[int]]:
    """Per call, the indices of its direct children (start order)."""
    kids: list[list[int]] = [[] for _ in calls]
    for i, c in enumerate(calls):
        if c["parent"] is not None:
            kids[c["parent"]].append(i)
    return kids


# --------------------------------------------------------------------------
# ProfilingResults
# --------------------------------------------------------------------------
