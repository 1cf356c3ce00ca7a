"""Runs: spanscope.read's Results and what the plots need of them (ranks,
region selection, durations, calls with the one fold's parents and depths)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np

from spanscope.plots._figure import _DURATION_METRICS, _NS


# --- runs: spanscope.read's Results and what the plots need of them --------

class _Run:
    """One recording as the plots use it: its Results and, computed once
    from the fold's parents, each event's depth and region name."""

    def __init__(self, res, label: str):
        self.res = res
        self.label = label
        self.ranks = sorted({r for per in res.regions.values() for r in per})
        self.num_ranks = len(self.ranks)
        self._depth = None

    @property
    def aggregate(self) -> bool:
        return self.res.layout == "aggregate"

    def depth(self) -> np.ndarray:
        """Per file-wide event, its depth in its thread's call tree (0: a
        root): the length of its chain of fold parents."""
        if self._depth is None:
            parent = np.asarray(self.res.events.parent, dtype=np.int64)
            depth = np.zeros(parent.size, dtype=np.int64)
            p = parent.copy()
            while True:
                up = p >= 0
                if not up.any():
                    break
                depth += up
                p = np.where(up, parent[np.where(up, p, 0)], -1)
            self._depth = depth
        return self._depth

    def t0_ns(self) -> int:
        """The run's first start (the time axes' zero)."""
        firsts = [int(r.start_ns.min()) for per in self.res.regions.values()
                  for r in per.values() if r.start_ns is not None and r.start_ns.size]
        return min(firsts) if firsts else 0

    def metadata(self, key):
        v = self.res.metadata.get(key)
        if isinstance(v, np.ndarray) and v.size == 1:
            v = v.reshape(()).item()
        return v


def _label_of(res, stem: str | None = None) -> str:
    """A run's label: its stored label, else stem (when given), else its
    file's stem."""
    lab = res.metadata.get("label")
    if isinstance(lab, (str, bytes)) and lab:
        return lab.decode() if isinstance(lab, bytes) else lab
    return stem or Path(res.path).stem


def _as_runs(profiling_data) -> list[_Run]:
    """profiling_data as runs: a path, a spanscope Results, a results
    object of a file (scope-profiler's ProfilingResults: the C reader's
    model it holds, so results of an in-memory finalize, whose file is
    gone, draw too; else anything with a ``file_path``: that file, read by
    spanscope.read), or a sequence of them.  TypeError for anything else;
    the reader's OSError/ValueError for a file it cannot read."""
    from spanscope.results import Results, read
    items = (list(profiling_data) if isinstance(profiling_data, (list, tuple))
             else [profiling_data])
    if not items:  # scope-profiler's message: nothing was passed, not a filter
        raise ValueError("No profiling data provided.")
    runs, stems = [], []
    for it in items:
        model = getattr(it, "model", None)
        fp = getattr(it, "file_path", None)
        stem = None
        if not isinstance(it, (Results, str, os.PathLike)) and isinstance(model, Results):
            # scope-profiler's results of a file: its C read, held in memory
            # (named by the results' file_path: an in-memory finalize's
            # results name the configured file, not the temporary one read)
            if isinstance(fp, (str, os.PathLike)) and os.fspath(fp):
                stem = Path(fp).stem
            it = model
        elif not isinstance(it, (Results, str, os.PathLike)) and isinstance(fp, (str, os.PathLike)):
            it = fp  # scope-profiler's results: the same file through the C reader
        if isinstance(it, (str, os.PathLike)):
            it = read(it)
        if not isinstance(it, Results):
            raise TypeError("spanscope.plots takes paths of recordings or the "
                            f"Results of spanscope.read, not {type(it).__name__}")
        runs.append(it)
        stems.append(stem)
    labels = [_label_of(r, stem) for r, stem in zip(runs, stems)]
    stems = list(labels)
    seen: dict[str, int] = {}
    for i, lab in enumerate(stems):  # the same stem twice: tell them apart
        if stems.count(lab) > 1:
            seen[lab] = seen.get(lab, 0) + 1
            labels[i] = f"{lab} ({seen[lab]})"
    return [_Run(r, lab) for r, lab in zip(runs, labels)]


def _normalize_ranks(ranks) -> list[int] | None:
    if ranks is None:
        return None
    if isinstance(ranks, (int, np.integer)):
        return [int(ranks)]
    return [int(r) for r in ranks]


def _pick_ranks(run: _Run, ranks) -> list[int]:
    """The run's ranks that ranks selects (None: all); ValueError naming
    those the run does not have."""
    want = _normalize_ranks(ranks)
    if want is None:
        return list(run.ranks)
    bad = [r for r in want if r not in run.ranks]
    if bad:
        raise ValueError(f"{run.label}: no rank {bad} (it has ranks {run.ranks})")
    return want


def _select(run: _Run, include=None, exclude=None) -> list[str]:
    """The run's region names that include/exclude keep (regular
    expressions, matched at the start as scope-profiler's get_regions
    does), in order of first start.  ValueError when none is left."""
    inc = [include] if isinstance(include, str) else include
    exc = [exclude] if isinstance(exclude, str) else exclude
    names = []
    for name, per in run.res.regions.items():
        if inc is not None and not any(re.match(p, name) for p in inc):
            continue
        if exc is not None and any(re.match(p, name) for p in exc):
            continue
        names.append(name)
    if not names:
        raise ValueError(f"{run.label}: no regions matched the selected filters")

    def first(name):
        st = [int(r.start_ns.min()) for r in run.res.regions[name].values()
              if r.start_ns is not None and r.start_ns.size]
        return min(st) if st else np.iinfo(np.int64).max
    return sorted(names, key=first)


def _need_events(run: _Run, what: str) -> None:
    if run.aggregate:
        raise ValueError(f"{run.label}: an aggregate file keeps no per-call events, "
                         f"and {what} needs them")


def _durations_s(run: _Run, name: str, ranks: list[int]) -> np.ndarray:
    """The calls' durations (s) of region name over ranks, pooled."""
    per = run.res.regions.get(name, {})
    parts = [per[r].durations_ns for r in ranks if r in per]
    if not parts:
        return np.zeros(0)
    return np.concatenate(parts).astype(np.float64) * _NS


def _metric_s(run: _Run, name, ranks: list[int], metric: str) -> float:
    """One duration statistic (s) of a region over ranks: total, avg, min,
    max (pooled calls; aggregate files: the stored statistics), first or
    last (the chronologically first/last call).  name may be a list of
    regions (a combine_regions bar): their calls pooled as if they were one
    region's.  NaN without calls."""
    members = [name] if isinstance(name, str) else list(name)
    regs = [run.res.regions[n][r] for n in members if n in run.res.regions
            for r in ranks if r in run.res.regions[n]]
    if run.aggregate:
        a = [r.aggregate for r in regs if r.aggregate and r.aggregate["counts"]]
        if not a:
            return float("nan")
        if metric == "total":
            return sum(x["totals"] for x in a) * _NS
        if metric == "avg":
            return sum(x["totals"] for x in a) / sum(x["counts"] for x in a) * _NS
        if metric == "min":
            return min(x["minimums"] for x in a) * _NS
        if metric == "max":
            return max(x["maximums"] for x in a) * _NS
        raise ValueError(f"metric {metric!r} needs per-call events; "
                         f"{run.label} is an aggregate file")
    regs = [r for r in regs if r.durations_ns.size]
    if not regs:
        return float("nan")
    if metric in ("first", "last"):
        pick = min if metric == "first" else max
        starts = [(int(r.start_ns.min() if metric == "first" else r.start_ns.max()), r)
                  for r in regs]
        t, r = pick(starts, key=lambda x: x[0])
        i = int(np.argmin(r.start_ns) if metric == "first" else np.argmax(r.start_ns))
        return float(r.durations_ns[i]) * _NS
    d = np.concatenate([r.durations_ns for r in regs]).astype(np.float64) * _NS
    return float({"total": d.sum, "avg": d.mean, "min": d.min, "max": d.max}[metric]())


def _check_metric(metric: str, allowed=_DURATION_METRICS) -> None:
    if metric not in allowed:
        raise ValueError(f"metric {metric!r}: one of {', '.join(allowed)}")


class _Calls:
    """The selected calls of one run as flat arrays (ns), with each call's
    region name index (into names), rank, thread and depth."""

    def __init__(self, run: _Run, names: list[str], ranks: list[int]):
        idx = {n: i for i, n in enumerate(names)}
        depth = run.depth()
        cols = {k: [] for k in ("start", "dur", "name", "rank", "thread", "depth", "event")}
        for name in names:
            for rank, r in run.res.regions[name].items():
                if rank not in ranks or not r.durations_ns.size:
                    continue
                n = r.durations_ns.size
                ev = np.arange(r.first_event, r.first_event + n)
                cols["start"].append(np.asarray(r.start_ns))
                cols["dur"].append(np.asarray(r.durations_ns))
                cols["name"].append(np.full(n, idx[name]))
                cols["rank"].append(np.full(n, rank))
                cols["thread"].append(np.zeros(n, np.int64) if r.thread_ids is None
                                      else np.asarray(r.thread_ids))
                cols["depth"].append(depth[ev])
                cols["event"].append(ev)
        for k, v in cols.items():
            setattr(self, k, np.concatenate(v).astype(np.int64) if v else np.zeros(0, np.int64))
        self.names = names


def _lanes(calls: _Calls):
    """(rank, thread) pairs in order, each with its calls' indices."""
    keys = sorted(set(zip(calls.rank.tolist(), calls.thread.tolist())))
    return [(rk, th, np.flatnonzero((calls.rank == rk) & (calls.thread == th)))
            for rk, th in keys]


def _lane_label(run: _Run, rank: int, thread: int, nthreads: int) -> str:
    parts = []
    if run.num_ranks > 1:
        parts.append(f"rank {rank}")
    if nthreads > 1 or not parts:
        parts.append(f"thread {thread}")
    return " / ".join(parts)


def _axes_grid(fig, n: int):
    """n axes stacked vertically (a list, even for one)."""
    axs = fig.subplots(n, 1, squeeze=False)
    return [a[0] for a in axs]
